#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""mcp_client.py - a scripted MCP client for `txfs mcp` (tests/agent/mcp.sh).

    mcp_client.py session  WS TXFS [RUNNER...]
    mcp_client.py denied   WS TXFS [RUNNER...]
    mcp_client.py features WS TXFS [RUNNER...]
    mcp_client.py noctl    WS TXFS [RUNNER...]

Starts RUNNER... TXFS mcp WS (RUNNER drops privileges), speaks JSON-RPC 2.0
over newline-delimited stdio with a timeout on every answer, and prints
"ok - what" or "FAIL: what: why" per check. session: initialize,
notifications/initialized, ping, tools/list (10 tools with JSON Schemas),
the 20-step session of session.sh through the exec tool, log, diff,
errors for bad params and unknown tools, malformed frames, commit, and a
call after the mount is gone. denied: under `control deny commit` the
commit tool is refused (isError) and the rollback tool still works.
features: exec's stdout, stderr and report as separate content items, the
structured report valid against its outputSchema, output without a final
newline, the 64 KiB caps, cwd, timeout, progress, cancellation (the
command's process gone, its change rolled back, no answer), read-only
calls answered while a command runs, `--`-looking names and paths (the
transaction intact), invalid arguments of every tool (-32602, nothing
run), reserved cmd-* names, the 4 MiB frame limit. noctl (a mount with
--no-ctl-verbs): savepoint, rollback, commit neither listed nor callable;
`txfs mcp --tools` offers only what it names. history: a commit listed by
the history tool, undone (staged) and committed, a path restored, bad
arguments refused. $SLEEPER: the test's sleep.
"""
import json
import os
import select
import subprocess
import sys
import tempfile
import time

try:
    import jsonschema
except ImportError:     # cli/deps/deps.txt [test]: python3-jsonschema
    jsonschema = None

MAIN1 = '#include <stdio.h>\nint main(void) { puts("hello"); return 0; }'
TEST = 'echo running > test.log; ./hello | grep -qx "hello, world"'
GIT = ["git", "-c", "user.name=agent", "-c", "user.email=agent@example.invalid",
       "-c", "commit.gpgsign=false"]
STEPS = [  # (argv, check, outcome)
    (["cat", "README.md"], None, "kept"),
    (["sh", "-c", "printf '%s\\n' '" + MAIN1 + "' > main.c"], None, "kept"),
    (["cc", "-o", "hello", "main.c"], None, "kept"),
    (["./hello"], None, "kept"),
    (["sh", "-c", TEST], None, "rolled-back"),
    (["sed", "-i", 's/"hello"/"hello, world"/', "main.c"], None, "kept"),
    (["cc", "-o", "hello", "main.c"], None, "kept"),
    (["sh", "-c", TEST], None, "kept"),
    (["rm", "-rf", ".git"], None, "rolled-back"),
    (["sh", "-c", "mkdir src && mv main.c src/"], None, "kept"),
    (["sh", "-c", 'echo "/* greets */" >> src/main.c'], None, "kept"),
    (["cc", "-o", "hello", "src/main.c"], None, "kept"),
    (["sh", "-c", 'echo "// ok" >> src/main.c'], "./hello | grep -q world", "kept"),
    (["sh", "-c", "echo junk > junk.txt"], "false", "rolled-back"),
    (["rm", "hello"], None, "kept"),
    (["sh", "-c", 'printf "hello\\ntest.log\\n" > .gitignore'], None, "kept"),
    (["sh", "-c", "$SLEEPER 300 & setsid $SLEEPER 301 & echo started"], None, "kept"),
    (GIT + ["add", "-A"], None, "kept"),
    (GIT + ["commit", "-qm", "hello, world"], None, "kept"),
    (["sh", "-c", "git log --oneline | wc -l"], None, "kept"),
]

FAILS = 0


def ok(what):
    print("ok - " + what, flush=True)


def fail(what):
    global FAILS
    FAILS += 1
    print("FAIL: " + what, flush=True)


def check(cond, what, why=""):
    (ok if cond else fail)(what if cond else "%s: %s" % (what, why))
    return cond


class Client:
    def __init__(self, argv):
        # the server's log (stderr), shown when a check fails
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err)
        self.buf = b""
        self.next_id = 0
        self.notes = []     # notifications received while waiting

    def send(self, msg):
        self.send_raw(json.dumps(msg))

    def send_raw(self, line):
        self.p.stdin.write(line.encode() + b"\n")
        self.p.stdin.flush()

    def recv(self, timeout=60):
        while b"\n" not in self.buf:
            r, _, _ = select.select([self.p.stdout], [], [], timeout)
            if not r:
                raise TimeoutError("no answer within %ds" % timeout)
            chunk = os.read(self.p.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("the server closed stdout")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def recv_answer(self, timeout=60):
        """The next answer; notifications go to self.notes."""
        end = time.monotonic() + timeout
        while True:
            r = self.recv(max(0.1, end - time.monotonic()))
            if "method" in r and "id" not in r:
                self.notes.append(r)
                continue
            return r

    def start(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send(msg)
        return self.next_id

    def request(self, method, params=None, timeout=60):
        rid = self.start(method, params)
        r = self.recv_answer(timeout)
        assert r.get("id") == rid, "answer id %r, not %r: %r" % (r.get("id"), rid, r)
        assert r.get("jsonrpc") == "2.0"
        return r

    def call(self, name, args=None, timeout=60):
        p = {"name": name}
        if args is not None:
            p["arguments"] = args
        return self.request("tools/call", p, timeout)

    def log_tail(self, n=1500):
        """The last n bytes the server wrote to stderr."""
        self.err.seek(0)
        return self.err.read().decode(errors="replace")[-n:]

    def close(self):
        self.p.stdin.close()
        try:
            return self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            return -1


def text(r):
    return "".join(c.get("text", "") for c in r["result"]["content"])


def handshake(c):
    r = c.request("initialize", {"protocolVersion": "2025-06-18",
                                 "capabilities": {},
                                 "clientInfo": {"name": "test", "version": "1"}})
    res = r.get("result", {})
    check(res.get("protocolVersion") == "2025-06-18" and
          res.get("serverInfo", {}).get("name") == "txfs" and
          "tools" in res.get("capabilities", {}),
          "initialize: revision 2025-06-18, serverInfo, tools capability", r)
    c.send_raw(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}))
    r = c.request("ping")    # also proves the notification got no answer
    check(r.get("result") == {}, "notifications/initialized unanswered; ping", r)


def session(c, ws, txfs, runner):
    handshake(c)
    r = c.request("tools/list")
    tools = {t["name"]: t for t in r["result"]["tools"]}
    check(set(tools) == {"status", "diff", "savepoint", "rollback", "commit",
                         "log", "exec", "history", "undo", "restore"},
          "tools/list: the 10 tools", sorted(tools))
    check(all(t["inputSchema"].get("type") == "object" and t.get("description")
              for t in tools.values()),
          "tools/list: each has a description and an object inputSchema")
    check(tools["exec"]["inputSchema"]["required"] == ["argv"],
          "tools/list: exec requires argv")

    outcomes = []
    for n, (argv, chk, want) in enumerate(STEPS, 1):
        args = {"argv": argv}
        if chk:
            args["check"] = chk
        r = c.call("exec", args)
        sc = r["result"].get("structuredContent", {})
        outcomes.append(sc.get("outcome"))
        check(sc.get("outcome") == want and sc.get("cmd") == n,
              "exec step %d: %s" % (n, want), "%r / %s" % (sc, text(r)[:300]))
    # (the pattern does not match this sh's own command line)
    r = c.call("exec", {"argv": ["sh", "-c", "pgrep -f \"$SLEEPER 30[01]\\$\" || echo none"]})
    check(text(r).startswith("none"), "exec: step 17's background processes were stopped", text(r)[:200])

    # errors for bad params
    for what, name, args, code in [
            ("unknown tool", "nope", {}, -32602),
            ("exec argv not an array", "exec", {"argv": "ls"}, -32602),
            ("exec argv missing", "exec", {}, -32602),
            ("exec argv empty", "exec", {"argv": []}, -32602),
            ("savepoint without name", "savepoint", {}, -32602),
            ("unknown argument", "status", {"bogus": 1}, -32602),
            ("command 0", "diff", {"command": 0}, -32602),
            ("arguments not an object", "status", [1], -32602)]:
        r = c.call(name, args)
        check(r.get("error", {}).get("code") == code,
              "tools/call error %d: %s" % (code, what), r)
    r = c.request("tools/call")
    check(r.get("error", {}).get("code") == -32602, "tools/call without params: -32602", r)
    r = c.request("no/such/method")
    check(r.get("error", {}).get("code") == -32601, "unknown method: -32601", r)
    # malformed frames
    c.send_raw("{this is not json")
    r = c.recv()
    check(r.get("error", {}).get("code") == -32700 and r.get("id") is None,
          "malformed frame: -32700 with id null", r)
    c.send_raw("[1, 2]")
    r = c.recv()
    check(r.get("error", {}).get("code") == -32600, "a non-object frame: -32600", r)
    c.send_raw('{"jsonrpc": "1.0", "id": 99, "method": "ping"}')
    r = c.recv()
    check(r.get("error", {}).get("code") == -32600 and r.get("id") == 99,
          "jsonrpc 1.0: -32600 with its id", r)
    check(c.request("ping").get("result") == {}, "the server goes on after bad frames")

    # history through the tools
    r = c.call("log")
    lg = text(r)
    check("command 20:" in lg and "command 9: rm -rf .git" in lg and
          "veto op=delete path=.git" in lg, "log tool: 20 commands, the veto under 9", lg[:400])
    r = c.call("diff", {"command": 16, "name_status": True})
    check(text(r).strip() == "A\t.gitignore", "diff tool --command 16", text(r))
    r = c.call("status")
    sc = r["result"].get("structuredContent", {})
    check(sc.get("last_command", {}).get("cmd") == 21, "status tool: last_command", sc)
    # savepoint + rollback through the tools
    check(not c.call("savepoint", {"name": "before-x"})["result"]["isError"], "savepoint tool")
    c.call("exec", {"argv": ["sh", "-c", "echo x > x.txt"]})
    check(not c.call("rollback", {"savepoint": "before-x"})["result"]["isError"], "rollback tool (savepoint)")
    r = c.call("exec", {"argv": ["sh", "-c", "test -e x.txt && echo present || echo absent"]})
    check(text(r).startswith("absent"), "rollback tool undid x.txt", text(r)[:100])
    r = c.call("commit")
    check(not r["result"]["isError"] and "committed" in text(r), "commit tool", text(r))

    # the mount goes away; the server answers with isError
    subprocess.run(runner + [txfs, "umount", ws], capture_output=True, timeout=60)
    r = c.call("status")
    check(r.get("result", {}).get("isError") is True, "a call after the mount is gone: isError", r)
    r = c.call("exec", {"argv": ["true"]})
    check(r.get("result", {}).get("isError") is True, "exec after the mount is gone: isError", r)
    check(c.request("ping").get("result") == {}, "the server is still alive")


def denied(c, ws, txfs, runner):
    handshake(c)
    c.call("exec", {"argv": ["sh", "-c", "echo staged > staged.txt"]})
    r = c.call("commit")
    check(r["result"]["isError"] is True and "control deny commit" in text(r),
          "commit tool under `control deny commit`: refused", r)
    r = c.call("status")
    sc = r["result"].get("structuredContent", {})
    check(sc.get("added") == 1 and sc.get("vetoes", 0) >= 1,
          "the refusal is a veto; the change stays staged", sc)
    r = c.call("rollback")
    check(not r["result"]["isError"], "rollback tool is not denied", r)


def items(r):
    return [c.get("text", "") for c in r.get("result", {}).get("content", [])]


def valid(instance, schema):
    if jsonschema is None:
        return False
    try:
        jsonschema.validate(instance, schema)
        return True
    except jsonschema.ValidationError:
        return False


def pgrep(cmdline):
    """The processes whose command line begins with cmdline (the command
    itself: txfs exec's own arguments hold the same words, and a check
    that took it for the command signalled txfs exec before it ran)."""
    pattern = "^" + "".join("\\" + ch if ch in ".[]()*+?{}|^$\\" else ch
                            for ch in cmdline)
    return subprocess.run(["pgrep", "-f", pattern], capture_output=True,
                          text=True, timeout=10).stdout.split()


def shows(c, path):
    """Whether the workspace view (through the exec tool) holds path."""
    r = c.call("exec", {"argv": ["sh", "-c", 'test -e "$1" && echo yes || echo no',
                                 "sh", path]})
    return items(r)[0].strip() == "yes" if items(r) else None


def last_cmd(c):
    sc = c.call("status")["result"].get("structuredContent", {})
    return (sc.get("last_command") or {}).get("cmd"), sc


def features(c, ws, txfs, runner):
    sleeper = os.environ["SLEEPER"]
    handshake(c)
    check(jsonschema is not None, "python3-jsonschema is installed")
    tools = {t["name"]: t for t in c.request("tools/list")["result"]["tools"]}
    for t in tools.values():
        for k in ("inputSchema", "outputSchema"):
            if k in t:
                jsonschema.Draft202012Validator.check_schema(t[k])
    check("outputSchema" in tools["exec"] and "outputSchema" in tools["status"],
          "tools/list: exec and status have an outputSchema (all schemas are valid)")
    out_schema = tools["exec"]["outputSchema"]

    # stdout, stderr, report: three items; no final newline stays apart
    r = c.call("exec", {"argv": ["sh", "-c", "printf 'no newline'; printf 'warn' >&2; echo x > x.txt"]})
    res, it = r["result"], items(r)
    sc = res.get("structuredContent", {})
    check(len(it) == 3 and it[0] == "no newline" and it[1] == "stderr:\nwarn",
          "exec: stdout (no final newline) and stderr of a success are separate items", it)
    rep = {k: v for k, v in sc.items() if k not in ("stdout", "stderr")}
    check(json.loads(it[-1]) == rep and sc.get("outcome") == "kept" and not res["isError"],
          "exec: the last item is the report as text", it[-1:])
    check(list(sc)[:2] == ["stdout", "stderr"] and sc["stdout"] == "no newline" and
          sc["stderr"] == "warn",
          "exec: structuredContent holds stdout and stderr first (for clients that "
          "show the model only that)", sc)
    check(valid(sc, out_schema), "exec: structuredContent is valid against the outputSchema", sc)
    check(sc.get("output") == {"cap": 65536, "stdout_bytes": 10, "stderr_bytes": 4,
                               "stdout_truncated": False, "stderr_truncated": False},
          "exec: output sizes in the report", sc.get("output"))
    r = c.call("exec", {"argv": ["sh", "-c", "echo failing; exit 3"]})
    sc = r["result"].get("structuredContent", {})
    check(r["result"]["isError"] and items(r)[0] == "failing\n" and sc.get("exit") == 3 and
          sc.get("outcome") == "rolled-back" and valid(sc, out_schema),
          "exec: a failure: isError, its stdout, exit 3, rolled back, valid report", r["result"])

    # caps: 300,000 bytes of stdout and of stderr
    gen = ("python3 -c \"import sys; b=b'BEGIN' + b'x' * 299991 + b'END\\n'; "
           "sys.stdout.buffer.write(b); sys.stderr.buffer.write(b)\"")
    r = c.call("exec", {"argv": ["sh", "-c", gen]})
    it, sc = items(r), r["result"].get("structuredContent", {})
    o = sc.get("output", {})
    check(o.get("stdout_bytes") == 300000 and o.get("stderr_bytes") == 300000 and
          o.get("stdout_truncated") and o.get("stderr_truncated"),
          "exec caps: sizes and truncation in the report", o)
    check(len(it) == 3 and it[0].startswith("BEGIN") and it[0].endswith("END\n") and
          "[txfs: 234464 bytes cut here: stdout was 300000 bytes" in it[0] and
          len(it[0]) < 65536 + 200 and it[1].startswith("stderr:\nBEGIN") and
          it[1].endswith("END\n") and len(it[1]) < 65536 + 210,
          "exec caps: first and last 32 KiB of each stream, the cut said",
          [len(x) for x in it])
    check(sc.get("stdout") == it[0] and "stderr:\n" + sc.get("stderr", "") == it[1],
          "exec caps: structuredContent's stdout and stderr capped the same way")

    # cwd
    c.call("exec", {"argv": ["mkdir", "-p", "sub/deeper"]})
    r = c.call("exec", {"argv": ["pwd"], "cwd": "sub/deeper"})
    check(items(r)[0].strip() == os.path.join(ws, "sub/deeper"), "exec cwd: sub/deeper", items(r))
    c.call("exec", {"argv": ["ln", "-s", "/etc", "escape"]})
    n0, _ = last_cmd(c)
    for cwd in ("../", "sub/../..", "escape", "missing"):
        r = c.call("exec", {"argv": ["sh", "-c", "echo ran > ran.txt"], "cwd": cwd})
        check(r["result"]["isError"] and "not a folder inside the workspace" in items(r)[0],
              "exec cwd %r: refused" % cwd, r)
    check(last_cmd(c)[0] == n0 and shows(c, "ran.txt") is False,
          "exec cwd outside: nothing ran", last_cmd(c)[0])

    # progress, and read-only calls answered while a command runs
    c.notes.clear()
    # (no clock: the two answers come before the exec's, whatever the
    # machine's load; the exec sleeps 8 s)
    rid = c.start("tools/call", {"name": "exec", "arguments": {"argv": [sleeper, "8"]},
                                 "_meta": {"progressToken": "p1"}})
    p_id = c.start("ping")
    s_id = c.start("tools/call", {"name": "status", "arguments": {}})
    first = [c.recv_answer(60), c.recv_answer(60)]
    by_id = {a.get("id"): a for a in first}
    check(set(by_id) == {p_id, s_id} and by_id[p_id].get("result") == {} and
          "structuredContent" in by_id[s_id].get("result", {}),
          "ping and status answered while exec runs (before its answer)", first)
    r = by_id.get(rid) or c.recv_answer(60)
    prog = [n["params"] for n in c.notes if n.get("method") == "notifications/progress"]
    check(r.get("id") == rid and r["result"]["structuredContent"]["outcome"] == "kept",
          "exec of 8 s: kept", r)
    check(len(prog) >= 2 and all(p["progressToken"] == "p1" for p in prog) and
          all(b["progress"] > a["progress"] for a, b in zip(prog, prog[1:])) and
          "running" in prog[0].get("message", ""),
          "exec of 8 s: notifications/progress with its token, increasing", prog)

    # a savepoint waits for the running exec, told by progress
    c.notes.clear()
    e_id = c.start("tools/call", {"name": "exec", "arguments": {"argv": [sleeper, "4"]}})
    s_id = c.start("tools/call", {"name": "savepoint", "arguments": {"name": "queued"},
                                  "_meta": {"progressToken": "q"}})
    a, b = c.recv_answer(30), c.recv_answer(30)
    waiting = [n["params"] for n in c.notes if n.get("method") == "notifications/progress"
               and n["params"].get("progressToken") == "q"]
    check(a.get("id") == e_id and b.get("id") == s_id and not b["result"]["isError"],
          "a savepoint called during an exec is done after it, in order", (a, b))
    check(len(waiting) >= 1 and "waiting" in waiting[0].get("message", ""),
          "the waiting call gets notifications/progress", waiting)

    # timeout
    t0 = time.monotonic()
    r = c.call("exec", {"argv": ["sh", "-c", "echo t > timed.txt; exec %s 60" % sleeper],
                        "timeout": 2}, timeout=60)
    sc = r["result"].get("structuredContent", {})
    check(sc.get("timed_out") is True and sc.get("outcome") == "rolled-back" and
          (sc.get("limit") or {}).get("name") == "timeout" and sc.get("exit") == 124 and
          r["result"]["isError"] and time.monotonic() - t0 < 20 and
          any("timed out after 2 s" in x for x in items(r)) and valid(sc, out_schema),
          "exec timeout 2: txfs exec --timeout stopped it (limit timeout, exit 124), rolled back, said",
          r["result"])
    check(shows(c, "timed.txt") is False and not pgrep(sleeper + " 60"),
          "exec timeout: its change and its process are gone")

    # cancellation
    c.notes.clear()
    rid = c.start("tools/call", {"name": "exec", "arguments": {
        "argv": ["sh", "-c", "echo c > cancelled.txt; exec %s 120" % sleeper]},
        "_meta": {"progressToken": 9}})
    end = time.monotonic() + 15
    while not pgrep(sleeper + " 120") and time.monotonic() < end:
        time.sleep(0.2)
    check(bool(pgrep(sleeper + " 120")), "cancellation: the command runs")
    c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": rid, "reason": "test"}})
    end = time.monotonic() + 20
    while pgrep(sleeper + " 120") and time.monotonic() < end:
        time.sleep(0.2)
    check(not pgrep(sleeper + " 120"), "cancellation: the command's process is gone")
    # a call that changes the transaction waits for the cancelled command
    # to end (rolled back): the fence before looking
    r = c.call("savepoint", {"name": "fence1"})
    check(r.get("id") == c.next_id and not r["result"]["isError"],
          "cancellation: no answer to the cancelled request", r)
    n, sc = last_cmd(c)
    check(sc.get("last_command", {}).get("outcome") == "rolled-back" and
          shows(c, "cancelled.txt") is False,
          "cancellation: the command is rolled back, its file gone",
          (sc.get("last_command"), c.log_tail()))

    # cancellations at once (while txfs exec begins): nothing left begun
    _, st0 = last_cmd(c)
    for delay in (0, 0.05, 0.2, 0.5):
        rid = c.start("tools/call", {"name": "exec", "arguments": {
            "argv": ["sh", "-c", "echo e > early.txt; exec %s 124" % sleeper]}})
        time.sleep(delay)
        c.send({"jsonrpc": "2.0", "method": "notifications/cancelled",
                "params": {"requestId": rid}})
    end = time.monotonic() + 20
    while pgrep(sleeper + " 124") and time.monotonic() < end:
        time.sleep(0.2)
    r = c.call("savepoint", {"name": "fence2"})    # after they all ended
    answered = r.get("id") == c.next_id     # not one of the cancelled
    _, st1 = last_cmd(c)
    check(answered and not pgrep(sleeper + " 124") and
          st1.get("savepoints") == st0.get("savepoints") + 1 and
          st1.get("added") == st0.get("added") and shows(c, "early.txt") is False,
          "cancellations at once: unanswered, no process, no savepoint left, nothing staged",
          (st0, st1))

    # names and paths that look like options
    _, st0 = last_cmd(c)
    r = c.call("savepoint", {"name": "--help"})
    _, st1 = last_cmd(c)
    check(not r["result"]["isError"] and "usage" not in items(r)[0] and
          st1.get("savepoints") == st0.get("savepoints", 0) + 1,
          "savepoint --help: a savepoint named --help", (items(r), st1.get("savepoints")))
    r = c.call("rollback", {"savepoint": "--force"})
    _, st2 = last_cmd(c)
    check(r["result"]["isError"] and "savepoint" in items(r)[0] and
          st2.get("added") == st1.get("added") and st2.get("added", 0) >= 2 and
          shows(c, "x.txt"),
          "rollback --force: refused as no such savepoint; the transaction intact",
          (items(r), st2.get("added")))
    # an empty savepoint name (an agent's unset variable) is refused by
    # the schema (-32602), never a rollback of everything
    r = c.call("rollback", {"savepoint": ""})
    _, st3 = last_cmd(c)
    check(r.get("error", {}).get("code") == -32602 and
          st3.get("added") == st2.get("added") and shows(c, "x.txt"),
          "rollback savepoint '': refused (-32602); the transaction intact",
          (r, st3.get("added")))
    r = c.call("diff", {"paths": ["--stat"]})
    check(not r["result"]["isError"] and items(r) == [""], "diff paths [--stat]: a path, no diff", r)
    r = c.call("diff", {"paths": ["x.txt"], "name_status": True})
    check(items(r)[0].strip() == "A\tx.txt", "diff paths [x.txt]", r)
    r = c.call("diff", {"since": "--nope"})
    check(r["result"]["isError"] and "no savepoint --nope" in items(r)[0] and
          "No such file" not in items(r)[0], "diff since --nope: the daemon's words, no errno", r)
    c.call("exec", {"argv": ["sh", "-c", "echo y > after-help.txt"]})
    r = c.call("rollback", {"savepoint": "--help"})
    check(not r["result"]["isError"] and shows(c, "after-help.txt") is False and
          shows(c, "x.txt"), "rollback to savepoint --help: only what came after it", r)

    # a diff past 64 KiB keeps its ends
    c.call("exec", {"argv": ["sh", "-c", "seq 1 40000 > big.txt"]})
    r = c.call("diff", {})
    t = items(r)[0] if items(r) else ""
    check(not r["result"]["isError"] and "bytes cut here: diff was" in t and
          len(t) < 65536 + 200 and t.rstrip().endswith("+40000"),
          "diff over 64 KiB: capped, its first and last 32 KiB", len(t))

    # invalid arguments of every tool: -32602 before anything runs
    n0, st0 = last_cmd(c)
    bad = [("status", {"x": 1}), ("log", {"n": 1}), ("commit", {"force": True}),
           ("diff", {"command": "1"}), ("diff", {"since": "a b"}), ("diff", {"paths": []}),
           ("diff", {"paths": [""]}), ("diff", {"since": "x", "command": 1}),
           ("diff", {"name_status": 1}),
           ("savepoint", {"name": "cmd-1"}), ("savepoint", {"name": "cmd-x"}),
           ("savepoint", {"name": "a b"}), ("savepoint", {"name": ""}),
           ("savepoint", {"name": "n" * 201}), ("savepoint", {"name": 5}),
           ("rollback", {"savepoint": "cmd-2"}), ("rollback", {"command": 0}),
           ("rollback", {"savepoint": "a", "command": 1}),
           ("exec", {"argv": [1]}), ("exec", {"argv": ["true"], "timeout": 0}),
           ("exec", {"argv": ["true"], "timeout": "5"}),
           ("exec", {"argv": ["true"], "timeout": 86401}),
           ("exec", {"argv": ["true"], "cwd": "/etc"}),
           ("exec", {"argv": ["true"], "check": ""}),
           ("exec", {"argv": ["true"], "env": {}})]
    for name, args in bad:
        r = c.call(name, args)
        e = r.get("error", {})
        check(e.get("code") == -32602 and len(e.get("message", "")) > 8 and
              not valid(args, tools[name]["inputSchema"]),
              "%s %s: -32602 (%s), and invalid by its JSON Schema" %
              (name, json.dumps(args)[:60], e.get("message")), r)
    n1, st1 = last_cmd(c)
    check(n1 == n0 and st1.get("savepoints") == st0.get("savepoints") and
          st1.get("added") == st0.get("added"), "invalid calls ran nothing", (st0, st1))
    for name, args in [("savepoint", {"name": "cmdx-1"}), ("diff", {"since": "--help"}),
                       ("exec", {"argv": ["true"], "timeout": 60, "cwd": "sub", "check": "true"})]:
        check(valid(args, tools[name]["inputSchema"]) and
              not c.call(name, args)["result"]["isError"],
              "%s %s: valid and done" % (name, json.dumps(args)))

    # rollback and diff of one command by number
    r = c.call("exec", {"argv": ["sh", "-c", "echo r > by-number.txt"]})
    k = r["result"]["structuredContent"]["cmd"]
    r = c.call("diff", {"command": k, "name_status": True})
    check(items(r)[0].strip() == "A\tby-number.txt", "diff command %d" % k, r)
    r = c.call("rollback", {"command": k})
    check(not r["result"]["isError"] and shows(c, "by-number.txt") is False and
          shows(c, "x.txt"), "rollback command %d: only that command undone" % k, r)

    # frame limit: a 5 MiB line gets -32600 and is skipped
    t0 = time.monotonic()
    chunk = "x" * (1 << 20)
    for _ in range(5):
        c.p.stdin.write(chunk.encode())
    c.p.stdin.write(b"\n")
    c.p.stdin.flush()
    r = c.recv_answer(30)
    check(r.get("error", {}).get("code") == -32600 and r.get("id") is None and
          "4 MiB" in r["error"].get("message", ""), "a 5 MiB frame: -32600", r)
    check(c.request("ping").get("result") == {} and time.monotonic() - t0 < 10,
          "after the long frame the server goes on")
    big = json.dumps({"jsonrpc": "2.0", "id": 777, "method": "ping",
                      "params": {"pad": "y" * (3 << 20)}})
    c.send_raw(big)
    check(c.recv_answer().get("id") == 777, "a 3 MiB frame is read")


def noctl(c, ws, txfs, runner):
    handshake(c)
    names = {t["name"] for t in c.request("tools/list")["result"]["tools"]}
    check(names == {"status", "diff", "log", "exec", "history"},
          "--no-ctl-verbs: savepoint, rollback, commit, undo, restore not offered",
          sorted(names))
    c.call("exec", {"argv": ["sh", "-c", "echo staged > staged.txt"]})
    for name, args in [("commit", {}), ("rollback", {}), ("savepoint", {"name": "s"}),
                       ("undo", {}), ("restore", {"paths": ["x"]})]:
        r = c.call(name, args)
        check(r.get("error", {}).get("code") == -32602 and
              "--no-ctl-verbs" in r["error"].get("message", ""),
              "--no-ctl-verbs: %s refused" % name, r)
    sc = c.call("status")["result"].get("structuredContent", {})
    check(sc.get("added") == 1 and sc.get("ctl_verbs") is False,
          "--no-ctl-verbs: the change stays staged; status says ctl_verbs false", sc)
    # --tools
    c2 = Client(runner + [txfs, "mcp", "--tools", "status,exec", ws])
    handshake(c2)
    names = {t["name"] for t in c2.request("tools/list")["result"]["tools"]}
    check(names == {"status", "exec"}, "--tools status,exec: only those", sorted(names))
    r = c2.call("log")
    check(r.get("error", {}).get("code") == -32602 and "--tools" in r["error"]["message"],
          "--tools: log not offered", r)
    check(c2.close() == 0, "--tools: the server exits 0")
    # the client closes stdin while a command runs: stopped, rolled back
    sleeper = os.environ["SLEEPER"]
    c3 = Client(runner + [txfs, "mcp", ws])
    handshake(c3)
    c3.start("tools/call", {"name": "exec", "arguments": {
        "argv": ["sh", "-c", "echo e > eof.txt; exec %s 123" % sleeper]}})
    end = time.monotonic() + 15
    while not pgrep(sleeper + " 123") and time.monotonic() < end:
        time.sleep(0.2)
    check(bool(pgrep(sleeper + " 123")), "stdin closed: the command ran")
    check(c3.close() == 0 and not pgrep(sleeper + " 123"),
          "stdin closed while a command runs: the server stops it and exits 0")
    # (the stopped command's rollback is the daemon's: it may land a
    # moment after the server exited, under ASan on a loaded machine)
    end = time.monotonic() + 15
    while True:
        sc = c.call("status")["result"].get("structuredContent", {})
        if (sc.get("last_command", {}).get("outcome") == "rolled-back" or
                time.monotonic() > end):
            break
        time.sleep(0.2)
    check(sc.get("last_command", {}).get("outcome") == "rolled-back" and
          shows(c, "eof.txt") is False, "stdin closed: the command rolled back",
          (sc.get("last_command"), c3.log_tail()))
    check("txfs: mcp: the stopped exec ended: exit " in c3.log_tail() and
          "rolled-back" in c3.log_tail(),
          "stdin closed: the server's log (stderr) says how the stopped command ended",
          c3.log_tail())
    p = subprocess.run(runner + [txfs, "mcp", "--tools", "status,bogus", ws],
                       capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    check(p.returncode == 2 and "txfs: mcp: --tools: no tool 'bogus'" in p.stderr,
          "--tools bogus: exit 2, said", (p.returncode, p.stderr))


def history(c, ws, txfs, runner):
    """the history tools: a commit through MCP, listed; undo staged on the
    mount and committed; restore of one path; bad arguments refused"""
    handshake(c)
    c.call("exec", {"argv": ["sh", "-c", "rm -f keep.txt; echo new > new.txt"]})
    r = c.call("commit")
    check(not r["result"].get("isError"), "history: the commit tool commits", r)
    r = c.call("history")
    recs = json.loads(text(r) or "[]")
    check(len(recs) >= 1 and recs[0].get("deleted") == 1 and recs[0].get("added") == 1,
          "history: the newest record counts 1 added, 1 deleted", recs[:1])
    rid = recs[0]["id"] if recs else 1
    r = c.call("history", {"paths_of": rid})
    paths = {p["path"]: p["status"] for p in json.loads(text(r) or "[{}]")[0].get("paths", [])}
    check(paths.get("keep.txt") == "D" and paths.get("new.txt") == "A",
          "history paths_of: D keep.txt, A new.txt", paths)
    r = c.call("history", {"deleted": True})
    check("keep.txt" in text(r), "history deleted: keep.txt can come back", text(r))
    r = c.call("undo", {"dry_run": True})
    check(not r["result"].get("isError") and "would restore keep.txt" in text(r) and
          not shows(c, "keep.txt"), "undo dry_run: says, changes nothing", text(r))
    r = c.call("undo")
    check(not r["result"].get("isError") and shows(c, "keep.txt") and not shows(c, "new.txt"),
          "undo: staged on the mount (keep.txt back, new.txt gone)", text(r))
    r = c.call("undo")
    check(r["result"].get("isError") and "staged changes" in text(r),
          "undo while changes are staged: refused", text(r))
    r = c.call("commit")
    check(not r["result"].get("isError"), "the staged undo commits", text(r))
    c.call("exec", {"argv": ["sh", "-c", "rm -f keep.txt"]})
    c.call("commit")
    r = c.call("restore", {"paths": ["keep.txt"]})
    check(not r["result"].get("isError") and shows(c, "keep.txt"),
          "restore keep.txt: staged on the mount", text(r))
    r = c.call("commit")
    check(not r["result"].get("isError"), "the staged restore commits", text(r))
    for name, args in [("history", {"paths_of": 0}), ("history", {"x": 1}),
                       ("undo", {"id": "1"}), ("restore", {}),
                       ("restore", {"paths": ["/etc/passwd"]})]:
        r = c.call(name, args)
        check(r.get("error", {}).get("code") == -32602,
              "%s %s: -32602" % (name, json.dumps(args)), r)


def main():
    mode, ws, txfs = sys.argv[1:4]
    runner = sys.argv[4:]
    c = Client(runner + [txfs, "mcp", ws])
    try:
        {"session": session, "denied": denied, "features": features,
         "noctl": noctl, "history": history}[mode](c, ws, txfs, runner)
    except Exception as e:     # a hang or a crash is a failure, not a hang
        fail("%s: %s: %s" % (mode, type(e).__name__, e))
    rc = c.close()
    check(rc == 0, "the server exits 0 at the end of its input", rc)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
