// SPDX-License-Identifier: Apache-2.0
// mcp_sdk_client.mjs - `txfs mcp` driven by the official MCP TypeScript SDK
// client (@modelcontextprotocol/sdk, installed by tests/agent/mcp_sdk.sh).
//
//     node mcp_sdk_client.mjs WS TXFS SLEEPER [RUNNER...]
//
// Connects with StdioClientTransport to RUNNER... TXFS mcp WS, lists the
// tools, calls them through Client.callTool (which validates each
// structured result against the tool's outputSchema and throws when it
// does not fit), runs a 5 s exec under a 3 s client timeout kept alive by
// progress (onprogress, resetTimeoutOnProgress), cancels an exec with an
// AbortController and lets another one hit the client's timeout (the SDK
// sends notifications/cancelled for both): the command's process must be
// gone and its change rolled back. Prints "ok - what" / "FAIL: what: why";
// exits 1 when a check failed.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { execFileSync } from "node:child_process";

const [ws, txfs, sleeper, ...runner] = process.argv.slice(2);
let fails = 0;
const ok = (what) => console.log("ok - " + what);
const check = (cond, what, why) => {
  if (cond) return ok(what);
  fails++;
  console.log(`FAIL: ${what}: ${String(JSON.stringify(why)).slice(0, 600)}`);
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
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

async function shows(client, path) {
  const r = await client.callTool({ name: "exec", arguments: {
    argv: ["sh", "-c", 'test -e "$1" && echo yes || echo no', "sh", path] } });
  return texts(r)[0].trim() === "yes";
}

async function lastCommand(client) {
  const r = await client.callTool({ name: "status", arguments: {} });
  return r.structuredContent.last_command;
}

async function main() {
  const command = runner.length ? runner[0] : txfs;
  const args = [...runner.slice(1), ...(runner.length ? [txfs] : []), "mcp", ws];
  const transport = new StdioClientTransport({ command, args, stderr: "ignore" });
  const client = new Client({ name: "txfs-sdk-test", version: "1" });
  await client.connect(transport);
  check(client.getServerVersion()?.name === "txfs", "SDK connect: serverInfo txfs",
    client.getServerVersion());

  const { tools } = await client.listTools();
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  check(tools.length === 10 && byName.exec?.outputSchema && byName.status?.outputSchema,
    "SDK listTools: 10 tools, exec and status with an outputSchema", tools.map((t) => t.name));

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

  await client.close();
  ok("SDK close");
}

try {
  await main();
} catch (e) {
  fails++;
  console.log(`FAIL: SDK client: ${e?.stack || e}`);
}
process.exit(fails ? 1 : 0);
