// SPDX-License-Identifier: Apache-2.0
// mcp_sdk_client.mjs - `txfs mcp` driven by the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk, installed by tests/agent/mcp_sdk.sh):
// a conformance pass.
//
//     node mcp_sdk_client.mjs WS REAL TXFS SLEEPER [RUNNER...]
//
// Connects with StdioClientTransport to RUNNER... TXFS mcp WS. REAL is the
// real directory under the mount (/proc/PID/cwd of a process that went
// into WS before it was mounted): what a commit must change and nothing
// else may.
//
// initialize (the negotiated revision, serverInfo, capabilities,
// instructions), ping, listTools (the 10 tools, each inputSchema and
// outputSchema compiled with the SDK's Ajv validator), an unknown tool.
// Every tool listed is called through Client.callTool (which validates
// each structured result against the tool's outputSchema and throws when
// it does not fit; the test validates it again itself) once or more with
// valid arguments, each result and its effect checked: on the session
// (status), the files the mount shows and the real directory (commit,
// undo, restore). Every tool is called once with a wrong-typed or unknown
// argument (arguments the listed inputSchema refuses too): McpError
// -32602, and status, the files and the real directory unchanged; the
// refusals the server documents as isError results too (exec's cwd
// outside, rollback to no savepoint, undo while changes are staged).
// Progress keeps a 5 s command alive under a 3 s client timeout and a
// 90 s command under a 60 s one (notifications throughout, increasing);
// while that runs, status and ping are answered at once and a savepoint
// queued behind it is cancelled (never taken). An AbortController and the
// client's own timeout cancel a command: its process gone, its change
// rolled back. Prints "ok - what" / "FAIL: what: why"; exits 1 when a
// check failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { McpError, ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv";
import { execFileSync } from "node:child_process";
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";

const [ws, real, txfs, sleeper, ...runner] = process.argv.slice(2);
const TOOLS = ["commit", "diff", "exec", "history", "log", "restore", "rollback",
  "savepoint", "status", "undo"];
let fails = 0;
const ok = (what) => console.log("ok - " + what);
const check = (cond, what, why) => {
  if (cond) return ok(what);
  fails++;
  console.log(`FAIL: ${what}: ${String(JSON.stringify(why)).slice(0, 600)}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
// arguments in a check's name (cut: a name the same from run to run)
const shown = (a) => {
  const s = JSON.stringify(a);
  return s.length > 90 ? s.slice(0, 87) + "..." : s;
};
const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
// the processes whose command line begins with cmdline: the command
// itself, not txfs exec, whose arguments hold the same words
const pgrep = (cmdline) => {
  const pattern = "^" + cmdline.replace(/[.[\]()*+?{}|^$\\]/g, (c) => `\\${c}`);
  try {
    return execFileSync("pgrep", ["-f", pattern], { timeout: 10000 }).toString().trim();
  } catch {
    return "";
  }
};
const until = async (cond, ms) => {
  const end = Date.now() + ms;
  while (!cond() && Date.now() < end) await sleep(200);
  return cond();
};
const texts = (r) => (r.content || []).map((c) => c.text);
const text = (r) => texts(r).join("");
const ajv = new AjvJsonSchemaValidator();
const inputOk = {}, outputOk = {};

// the real directory: each entry's path, type, size, mtime and, for a
// file, its contents
function realFiles(dir = real, rel = ".") {
  const out = [];
  for (const n of readdirSync(dir).sort()) {
    const p = `${dir}/${n}`, st = lstatSync(p);
    out.push(`${rel}/${n} ${st.isDirectory() ? "d" : st.isFile() ? "f" : "o"} ${st.size} ` +
      `${st.mtimeMs}${st.isFile() ? " " + readFileSync(p).toString("base64") : ""}`);
    if (st.isDirectory()) out.push(...realFiles(p, `${rel}/${n}`));
  }
  return out;
}
const realHas = (path) => existsSync(`${real}/${path}`) ?
  readFileSync(`${real}/${path}`, "utf8") : null;

async function shows(client, path) {
  const r = await client.callTool({ name: "exec", arguments: {
    argv: ["sh", "-c", 'test -e "$1" && echo yes || echo no', "sh", path] } });
  if (r.structuredContent?.outcome !== "kept")
    check(false, `SDK exec test -e ${path}: kept`, r);
  return texts(r)[0].trim() === "yes";
}

// what the mount shows (but .git): the paths, then each file's checksum
async function mountFiles(client) {
  const r = await client.callTool({ name: "exec", arguments: { argv: ["sh", "-c",
    "find . \\( -path ./.git -o -path ./.txfs \\) -prune -o -print | sort; " +
    "find . \\( -path ./.git -o -path ./.txfs \\) -prune -o -type f -print | sort | " +
    "while IFS= read -r f; do cksum \"$f\"; done"] } });
  if (r.structuredContent?.outcome !== "kept")
    check(false, "SDK exec find: kept", r);
  return r.structuredContent?.stdout;
}

async function status(client) {
  const r = await client.callTool({ name: "status", arguments: {} });
  return r.structuredContent;
}

// the counts of a status (for a failure's message)
const brief = (st) => st && Object.fromEntries(["transaction", "added", "modified", "deleted",
  "renamed", "savepoints", "vetoes", "history_commits"].map((k) => [k, st[k]]));

async function lastCommand(client) {
  return (await status(client)).last_command;
}

// a call the listed inputSchema refuses: McpError -32602 naming why, and
// nothing changed (status, the mount's files, the real directory)
async function refused(client, name, args, why, what) {
  const fits = inputOk[name]?.(args).valid;
  const filesBefore = await mountFiles(client);
  const before = await status(client);
  const realBefore = realFiles();
  const e = await client.callTool({ name, arguments: args }).then((r) => ({ answered: r }),
    (err) => err);
  const after = await status(client);
  const realAfter = realFiles();
  const filesAfter = await mountFiles(client);
  check(fits === false && e instanceof McpError && e.code === ErrorCode.InvalidParams &&
    why.test(e.message),
  `SDK ${name} ${shown(args)} (${what}): refused by the inputSchema (Ajv) and ` +
  "by the server: McpError -32602 naming it", { fits, e: String(e), answered: e.answered });
  check(same(before, after) && filesBefore === filesAfter && same(realBefore, realAfter),
    `SDK ${name} ${shown(args)}: nothing changed (status, the mount's files, ` +
    "the real directory)", { before, after, filesBefore, filesAfter });
}

// a call that fits the schema but the server refuses: a result with
// isError, its text saying why, nothing changed
async function refusedResult(client, name, args, why, what) {
  const filesBefore = await mountFiles(client);
  const before = await status(client);
  const realBefore = realFiles();
  const r = await client.callTool({ name, arguments: args });
  const after = await status(client);
  const realAfter = realFiles();
  const filesAfter = await mountFiles(client);
  check(inputOk[name](args).valid && r.isError === true && why.test(text(r)) &&
    same(before, after) && filesBefore === filesAfter && same(realBefore, realAfter),
  `SDK ${name} ${shown(args)} (${what}): an isError result saying why; ` +
  "nothing changed", { r, before, after });
}

// a valid call: the arguments fit the listed inputSchema; a structured
// result fits the outputSchema (Ajv, besides the SDK's own check)
async function call(client, name, args, options) {
  const fits = inputOk[name](args);
  check(fits.valid, `SDK ${name} ${shown(args)}: fits the listed inputSchema`,
    fits.errorMessage);
  const r = await client.callTool({ name, arguments: args }, undefined, options);
  if (outputOk[name]) {
    const v = r.structuredContent ? outputOk[name](r.structuredContent) : { valid: false };
    check(v.valid, `SDK ${name}: structuredContent fits the outputSchema (Ajv)`,
      v.errorMessage ?? r);
  } else {
    check(r.structuredContent === undefined, `SDK ${name}: no structuredContent ` +
      "(no outputSchema)", r);
  }
  return r;
}

// a read-only tool: status is the same after it
async function readOnly(client, name, args) {
  const before = await status(client);
  const r = await call(client, name, args);
  check(same(before, await status(client)), `SDK ${name} ${shown(args)}: ` +
    "changes nothing", before);
  return r;
}

async function initAndList(client, negotiated) {
  const sv = client.getServerVersion();
  check(sv?.name === "txfs" && typeof sv?.version === "string" && sv.version.length > 0,
    "SDK connect: serverInfo txfs with a version", sv);
  check(negotiated() === "2025-06-18", "SDK initialize: revision 2025-06-18 negotiated " +
    "(the SDK asked for its latest)", negotiated());
  const caps = client.getServerCapabilities();
  check(caps?.tools && caps.tools.listChanged === false && !caps.resources && !caps.prompts,
    "SDK initialize: capabilities: tools (listChanged false), nothing else", caps);
  check(/exec/.test(client.getInstructions() ?? ""), "SDK initialize: instructions",
    client.getInstructions());
  check(same(await client.ping(), {}), "SDK ping: {}");

  const { tools, nextCursor } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  check(same(tools.map((t) => t.name).sort(), TOOLS) && nextCursor === undefined,
    "SDK listTools: the 10 tools (status, diff, log, exec, savepoint, rollback, commit, " +
    "history, undo, restore), one page", tools.map((t) => t.name));
  let bad = [];
  for (const t of tools) {
    try {
      if (t.inputSchema?.type !== "object" || !t.title || !t.description) throw "fields";
      inputOk[t.name] = ajv.getValidator(t.inputSchema);
      if (t.outputSchema) {
        if (t.outputSchema.type !== "object") throw "outputSchema type";
        outputOk[t.name] = ajv.getValidator(t.outputSchema);
      }
    } catch (e) {
      bad.push(`${t.name}: ${e}`);
    }
  }
  check(!bad.length, "SDK listTools: each tool has a title, a description and an object " +
    "inputSchema that compiles (Ajv)", bad);
  check(same(Object.keys(outputOk).sort(), ["exec", "status"]) &&
    same(byName.exec.inputSchema.required, ["argv"]),
  "SDK listTools: exec and status (only) with an outputSchema that compiles; exec " +
  "requires argv", Object.keys(outputOk));
  const e = await client.callTool({ name: "nope", arguments: {} }).then(() => "answered",
    (err) => err);
  check(e instanceof McpError && e.code === ErrorCode.InvalidParams &&
    /unknown tool/.test(e.message),
    "SDK callTool of a tool not listed: McpError -32602 unknown tool", String(e));
}

// exec, status, progress, cancellation (the first pass, kept as it was)
async function basics(client) {
  // callTool validates structuredContent against outputSchema (throws)
  let r = await client.callTool({ name: "exec", arguments: {
    argv: ["sh", "-c", "printf hi; echo x > sdk.txt"] } });
  const { stdout, stderr, ...report } = r.structuredContent ?? {};
  check(!r.isError && texts(r)[0] === "hi" && stdout === "hi" && stderr === "" &&
    report.outcome === "kept" &&
    JSON.stringify(JSON.parse(texts(r).at(-1))) === JSON.stringify(report),
  "SDK callTool exec: stdout as text and in the structured result, valid against " +
  "outputSchema; the report as text", r);
  r = await client.callTool({ name: "status", arguments: {} });
  check(r.structuredContent?.added === 1, "SDK callTool status: structured, valid", r);
  r = await client.callTool({ name: "exec", arguments: { argv: ["sh", "-c", "exit 4"] } });
  check(r.isError && r.structuredContent?.exit === 4, "SDK callTool exec failing: isError, valid", r);

  // progress keeps a 5 s command alive under a 3 s client timeout
  const progress = [];
  r = await client.callTool({ name: "exec", arguments: { argv: [sleeper, "5"] } }, undefined,
    { onprogress: (p) => progress.push(p), timeout: 3000, resetTimeoutOnProgress: true });
  check(r.structuredContent?.outcome === "kept" && progress.length >= 2 &&
    progress.every((p, i) => i === 0 || p.progress > progress[i - 1].progress),
  "SDK exec of 5 s: onprogress called, increasing; the 3 s timeout reset", progress);

  // cancellation through an AbortController
  const ac = new AbortController();
  const pending = client.callTool({ name: "exec", arguments: {
    argv: ["sh", "-c", `echo c > sdk-cancel.txt; exec ${sleeper} 121`] } },
  undefined, { signal: ac.signal, timeout: 60000 });
  const outcome = pending.then(() => "answered", (e) => e);
  check(await until(() => pgrep(`${sleeper} 121`), 15000), "SDK cancel: the command runs");
  ac.abort("test");
  const e = await outcome;
  check(e !== "answered", "SDK cancel: callTool rejected", String(e));
  check(await until(() => !pgrep(`${sleeper} 121`), 20000),
    "SDK cancel: the command's process is gone");
  // a savepoint waits for the cancelled command to end: the fence
  await client.callTool({ name: "savepoint", arguments: { name: "fence1" } });
  let lc = await lastCommand(client);
  check(lc?.outcome === "rolled-back" && !(await shows(client, "sdk-cancel.txt")),
    "SDK cancel: the command rolled back, its file gone", lc);

  // the client's own timeout cancels too
  const t = await client.callTool({ name: "exec", arguments: {
    argv: ["sh", "-c", `echo t > sdk-timeout.txt; exec ${sleeper} 122`] } },
  undefined, { timeout: 3000 }).then(() => "answered", (err) => err);
  check(t !== "answered" && /timed out/i.test(String(t?.message)),
    "SDK timeout 3 s: callTool rejected (request timed out)", String(t));
  check(await until(() => !pgrep(`${sleeper} 122`), 20000),
    "SDK timeout: the command's process is gone");
  await client.callTool({ name: "savepoint", arguments: { name: "fence2" } });
  lc = await lastCommand(client);
  check(lc?.outcome === "rolled-back" && !(await shows(client, "sdk-timeout.txt")) &&
    (await shows(client, "sdk.txt")),
  "SDK timeout: the command rolled back, the earlier change kept", lc);

  // invalid params: a JSON-RPC error -32602
  const bad = await client.callTool({ name: "savepoint", arguments: { name: "cmd-1" } })
    .then(() => "answered", (err) => err);
  check(bad?.code === -32602 && /reserved/.test(bad?.message),
    "SDK savepoint cmd-1: McpError -32602 (reserved)", String(bad));
  r = await client.callTool({ name: "savepoint", arguments: { name: "--help" } });
  check(!r.isError, "SDK savepoint --help: a name, not an option", r);
  r = await client.callTool({ name: "rollback", arguments: { savepoint: "--help" } });
  check(!r.isError && (await shows(client, "sdk.txt")), "SDK rollback --help: transaction intact", r);
}

// every tool, valid and invalid; sdk.txt is staged (exec's command 1)
async function everyTool(client) {
  // status
  let r = await call(client, "status", {});
  let st = r.structuredContent;
  check(!r.isError && Number.isInteger(st?.transaction) && st.added === 1 &&
    st.modified === 0 && st.deleted === 0 && Number.isInteger(st.last_command?.cmd) &&
    same(JSON.parse(text(r)), st),
  "SDK status: the transaction, 1 added (sdk.txt), last_command; its text is the " +
  "structured result", r);
  await refused(client, "status", { bogus: 1 }, /unknown argument bogus/, "unknown argument");

  // diff
  r = await readOnly(client, "diff", {});
  check(!r.isError && /^\+\+\+ b\/sdk\.txt$/m.test(text(r)) && /^\+x$/m.test(text(r)) &&
    !/README/.test(text(r)), "SDK diff: sdk.txt added, +x", text(r));
  r = await readOnly(client, "diff", { name_status: true });
  check(!r.isError && text(r) === "A\tsdk.txt\n", "SDK diff name_status: A sdk.txt", text(r));
  r = await readOnly(client, "diff", { paths: ["README.md"] });
  check(!r.isError && text(r) === "", "SDK diff paths README.md: nothing", text(r));
  await refused(client, "diff", { name_status: "yes" }, /name_status: must be true or false/,
    "wrong type");
  await refusedResult(client, "diff", { since: "no-such-sp" }, /no savepoint no-such-sp/,
    "no such savepoint");

  // log
  st = await status(client);
  r = await readOnly(client, "log", {});
  const cmds = [...text(r).matchAll(/^command (\d+): /gm)].map((m) => +m[1]);
  check(!r.isError && cmds.length === st.last_command.cmd && cmds.at(-1) === st.last_command.cmd &&
    /^command 1: sh -c "printf hi; echo x > sdk\.txt"\n  kept, exit 0.*\n    A sdk\.txt$/m
      .test(text(r)) &&
    new RegExp(`^command \\d+: sh -c "echo c > sdk-cancel\\.txt; exec ${esc(sleeper)} 121"\\n  ` +
      "rolled-back", "m").test(text(r)),
  "SDK log: every command, 1 kept with A sdk.txt, the cancelled one rolled back", text(r));
  await refused(client, "log", { verbose: true }, /unknown argument verbose/, "unknown argument");

  // savepoint, exec (check, cwd, timeout), rollback to it
  st = await status(client);
  r = await call(client, "savepoint", { name: "conf-sp" });
  let st2 = await status(client);
  check(!r.isError && /savepoint conf-sp taken/.test(text(r)) &&
    st2.savepoints === st.savepoints + 1, "SDK savepoint conf-sp: taken (savepoints + 1)",
  { r, st, st2 });
  await refused(client, "savepoint", { name: 7 }, /name: must be a string/, "wrong type");
  r = await call(client, "exec", { argv: ["mkdir", "sub"] });
  check(!r.isError && r.structuredContent.outcome === "kept", "SDK exec mkdir sub: kept", r);
  r = await call(client, "exec", { argv: ["sh", "-c", "echo y > y.txt; pwd"], cwd: "sub",
    check: "test -s y.txt", timeout: 60 });
  let sc = r.structuredContent;
  check(!r.isError && sc.outcome === "kept" && sc.exit === 0 && sc.check_exit === 0 &&
    sc.timed_out === false && sc.limit === null && sc.stdout.endsWith("/sub\n") &&
    same(sc.changes, ["A sub/y.txt"]) && (await shows(client, "sub/y.txt")),
  "SDK exec in cwd sub with a check and a timeout: kept, ran in sub, A sub/y.txt", r);
  r = await call(client, "exec", { argv: ["sh", "-c", "echo z > z.txt"], check: "false" });
  sc = r.structuredContent;
  check(r.isError && sc.outcome === "rolled-back" && sc.exit === 0 && sc.check_exit === 1 &&
    !(await shows(client, "z.txt")),
  "SDK exec whose check fails: isError, rolled back, z.txt gone", r);
  await refused(client, "exec", { argv: "echo b > bad.txt" }, /argv: must be an array/,
    "wrong type");
  await refused(client, "exec", { argv: ["sh", "-c", "echo b > bad.txt"], timeout: "5" },
    /timeout: must be an integer/, "wrong type: nothing runs");
  await refused(client, "exec", { argv: ["sh", "-c", "echo b > bad.txt"], shell: true },
    /unknown argument shell/, "unknown argument: nothing runs");
  await refusedResult(client, "exec", { argv: ["sh", "-c", "echo e > esc.txt"], cwd: ".." },
    /cwd: not a folder inside the workspace/, "cwd outside the workspace");
  check(!existsSync(`${dirname(ws)}/esc.txt`) && !existsSync(`${real}/esc.txt`),
    "SDK exec cwd ..: nothing ran (no esc.txt outside or inside)");
  st = await status(client);
  r = await call(client, "rollback", { savepoint: "conf-sp" });
  st2 = await status(client);
  check(!r.isError && /rolled back to savepoint conf-sp/.test(text(r)) &&
    !(await shows(client, "sub")) && (await shows(client, "sdk.txt")) &&
    st2.added === 1 && st2.savepoints < st.savepoints,
  "SDK rollback to conf-sp: sub/ gone, sdk.txt kept", { r, st2 });
  await refusedResult(client, "rollback", { savepoint: "no-such-sp" }, /no such savepoint/,
    "no such savepoint");

  // rollback of one command
  r = await call(client, "exec", { argv: ["sh", "-c", "echo r > r.txt"] });
  const n = r.structuredContent.cmd;
  r = await call(client, "rollback", { command: n });
  check(!r.isError && !(await shows(client, "r.txt")) && (await shows(client, "sdk.txt")) &&
    (await status(client)).added === 1,
  `SDK rollback command ${n}: r.txt gone, sdk.txt (command 1) kept`, r);
  // command 1 made sdk.txt: were "1" taken, it would be gone
  await refused(client, "rollback", { command: "1" }, /command: must be an integer/,
    "wrong type");
  check(await shows(client, "sdk.txt"), "SDK rollback command \"1\": sdk.txt still there");

  // commit: into the real directory
  check(realHas("sdk.txt") === null, "SDK before commit: the real directory has no sdk.txt");
  await refused(client, "commit", { force: true }, /unknown argument force/,
    "unknown argument");
  st = await status(client);
  r = await call(client, "commit", {});
  st2 = await status(client);
  check(!r.isError && /committed transaction \d+: 1 added, 0 modified, 0 deleted/.test(text(r)) &&
    realHas("sdk.txt") === "x\n" && st2.added === 0 &&
    st2.transaction === st.transaction + 1 && st2.history_commits === st.history_commits + 1 &&
    (await shows(client, "sdk.txt")),
  "SDK commit: sdk.txt in the real directory, nothing staged, a new transaction, " +
  "one more history record", { text: text(r), real: realHas("sdk.txt"), st: brief(st),
    st2: brief(st2) });
  check(!existsSync(`${real}/sdk-cancel.txt`) && !existsSync(`${real}/sdk-timeout.txt`) &&
    !existsSync(`${real}/sub`) && !existsSync(`${real}/r.txt`),
  "SDK commit: nothing rolled back reached the real directory", realFiles());

  // history
  st = await status(client);
  r = await readOnly(client, "history", {});
  const recs = JSON.parse(text(r) || "[]");
  const id = recs[0]?.id;
  check(!r.isError && recs.length === st.history_commits && recs[0].added === 1 &&
    recs[0].deleted === 0 && recs[0].via === "txfs commit" && Number.isInteger(id),
  "SDK history: one record per commit, the newest: txfs commit, 1 added", recs);
  r = await readOnly(client, "history", { paths_of: id });
  check(!r.isError && same(JSON.parse(text(r) || "[{}]")[0].paths,
    [{ status: "A", path: "sdk.txt" }]), `SDK history paths_of ${id}: A sdk.txt`, text(r));
  await refused(client, "history", { paths_of: String(id) }, /paths_of: must be an integer/,
    "wrong type");

  // undo: nothing is staged, so a valid undo would act
  await refused(client, "undo", { id: String(id) }, /id: must be an integer/, "wrong type");
  await refused(client, "undo", { id, dryrun: true }, /unknown argument dryrun/,
    "unknown argument");
  r = await readOnly(client, "undo", { id, dry_run: true });
  check(!r.isError && /would remove +sdk\.txt/.test(text(r)) && (await shows(client, "sdk.txt")),
    "SDK undo dry_run: says it would remove sdk.txt, does nothing", text(r));
  r = await call(client, "undo", { id });
  st2 = await status(client);
  check(!r.isError && /removed +sdk\.txt/.test(text(r)) && /staged on the mount/.test(text(r)) &&
    !(await shows(client, "sdk.txt")) && st2.deleted === 1 && realHas("sdk.txt") === "x\n",
  `SDK undo ${id}: staged (sdk.txt gone from the mount, still in the real directory)`,
  { r, st2 });
  await refusedResult(client, "undo", {}, /staged changes/, "changes are staged");
  r = await call(client, "commit", {});
  check(!r.isError && realHas("sdk.txt") === null && (await status(client)).deleted === 0,
    "SDK commit of the undo: sdk.txt gone from the real directory", text(r));

  // restore
  r = await readOnly(client, "history", { deleted: true });
  check(!r.isError && JSON.parse(text(r) || "[]").some((d) => d.path === "sdk.txt"),
    "SDK history deleted: sdk.txt can come back", text(r));
  await refused(client, "restore", { paths: "sdk.txt" }, /paths: must be an array/,
    "wrong type");
  await refused(client, "restore", { paths: ["sdk.txt"], force: true },
    /unknown argument force/, "unknown argument");
  r = await call(client, "restore", { paths: ["sdk.txt"] });
  st2 = await status(client);
  const back = await client.callTool({ name: "exec", arguments: { argv: ["cat", "sdk.txt"] } });
  check(!r.isError && /restored sdk\.txt/.test(text(r)) && st2.added === 1 &&
    back.structuredContent?.stdout === "x\n" && realHas("sdk.txt") === null,
  "SDK restore sdk.txt: staged (back on the mount with its contents, not yet real)",
  { r, st2, back });
  r = await call(client, "commit", {});
  check(!r.isError && realHas("sdk.txt") === "x\n", "SDK commit of the restore: sdk.txt " +
    "back in the real directory", text(r));
}

// a 90 s command under a 60 s client timeout kept alive by progress
async function longCommand(client) {
  const realBefore = realFiles();
  const st = await status(client);
  const script = 'i=0; while [ $i -lt 90 ]; do "$1" 1; i=$((i + 1)); echo $i >> long.txt; ' +
    'if [ $((i % 10)) = 0 ]; then echo "step $i"; fi; done; echo done >> long.txt';
  const progress = [];
  const t0 = Date.now();
  const pending = call(client, "exec", { argv: ["sh", "-c", script, "sh", sleeper] }, {
    onprogress: (p) => progress.push({ ...p, at: Date.now() - t0 }),
    timeout: 60000, resetTimeoutOnProgress: true, maxTotalTimeout: 200000,
  }).then((r) => r, (e) => e);

  // while it runs, the read-only tools and ping are answered at once
  await sleep(3000);
  let t = Date.now();
  const during = await status(client);
  const ping = await client.ping();
  check(Date.now() - t < 5000 && during.last_command?.cmd === st.last_command.cmd &&
    same(ping, {}), "SDK during the 90 s command: status and ping answered at once",
  { ms: Date.now() - t, during });
  // a savepoint waits its turn behind it (told by progress); cancelled
  // while it waits, it is never taken
  const ac = new AbortController();
  const waiting = [];
  const queued = client.callTool({ name: "savepoint", arguments: { name: "queued-sp" } },
    undefined, { signal: ac.signal, timeout: 150000, onprogress: (p) => waiting.push(p) })
    .then(() => "answered", (e) => e);
  await until(() => waiting.length >= 2, 15000);
  ac.abort("test");
  const qe = await queued;
  check(qe instanceof McpError && waiting.length >= 2 &&
    waiting.every((p) => /waiting for the command before it/.test(p.message)),
  "SDK savepoint queued behind the command: progress says it waits; cancelled",
  { qe: String(qe), waiting });

  const r = await pending;
  const ms = Date.now() - t0;
  const sc = r?.structuredContent ?? {};
  const gaps = progress.map((p, i) => (i ? p.at - progress[i - 1].at : p.at));
  check(!(r instanceof Error) && !r.isError && sc.outcome === "kept" && sc.exit === 0 &&
    sc.timed_out === false && sc.ms >= 90000 && ms >= 90000 &&
    sc.stdout === Array.from({ length: 9 }, (_, i) => `step ${10 * (i + 1)}\n`).join("") &&
    same(sc.changes, ["A long.txt"]),
  `SDK exec of 90 s under a 60 s timeout: kept after ${(ms / 1000).toFixed(1)} s, its ` +
  "stdout whole", r instanceof Error ? String(r) : sc);
  check(progress.length >= 40 && progress.every((p, i) => i === 0 ||
    p.progress > progress[i - 1].progress) && Math.max(...gaps) < 8000 &&
    progress.at(-1).at > ms - 8000 && progress.at(-1).progress >= 85 &&
    progress.every((p) => /^running for \d+ s/.test(p.message)),
  `SDK exec of 90 s: ${progress.length} progress notifications, increasing, throughout ` +
  `(the longest gap ${Math.max(...gaps)} ms)`, progress.slice(-5));
  check(same((await client.callTool({ name: "exec", arguments: { argv: ["cat", "long.txt"] } }))
    .structuredContent?.stdout, Array.from({ length: 90 }, (_, i) => `${i + 1}\n`).join("") +
    "done\n") && same(realFiles(), realBefore),
  "SDK exec of 90 s: long.txt written whole on the mount; the real directory untouched");
  const r2 = await client.callTool({ name: "rollback", arguments: { savepoint: "queued-sp" } });
  check(r2.isError && /no such savepoint/.test(text(r2)),
    "SDK the cancelled queued savepoint was never taken", r2);

  // rollback of everything
  const r3 = await call(client, "rollback", {});
  const st3 = await status(client);
  check(!r3.isError && /every staged change was discarded/.test(text(r3)) &&
    st3.added === 0 && st3.modified === 0 && st3.deleted === 0 &&
    !(await shows(client, "long.txt")) && (await shows(client, "sdk.txt")) &&
    same(realFiles(), realBefore),
  "SDK rollback (all): long.txt gone, the committed sdk.txt stays, nothing staged", st3);
}

async function main() {
  const command = runner.length ? runner[0] : txfs;
  const args = [...runner.slice(1), ...(runner.length ? [txfs] : []), "mcp", ws];
  const transport = new StdioClientTransport({ command, args, stderr: "pipe" });
  transport.stderr.on("data", (d) => { serverLog = (serverLog + d).slice(-16384); });
  let negotiated;
  // the SDK tells a transport that has it the revision the server chose
  transport.setProtocolVersion = (v) => { negotiated = v; };
  const client = new Client({ name: "txfs-sdk-test", version: "1" });
  await client.connect(transport);
  await initAndList(client, () => negotiated);
  await basics(client);
  await everyTool(client);
  await longCommand(client);
  await client.close();
  ok("SDK close");
}

let serverLog = "";
try {
  await main();
} catch (e) {
  fails++;
  console.log(`FAIL: SDK client: ${e?.stack || e}`);
}
if (fails)	// the server's log (its stderr), for the failures above
  for (const l of serverLog.split("\n").filter(Boolean)) console.log(`server stderr: ${l}`);
process.exit(fails ? 1 : 0);
