#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""mcp_client.py - a scripted MCP client for `txfs mcp` (tests/agent/mcp.sh).

    mcp_client.py session WS TXFS [RUNNER...]
    mcp_client.py denied  WS TXFS [RUNNER...]

Starts RUNNER... TXFS mcp WS (RUNNER drops privileges), speaks JSON-RPC 2.0
over newline-delimited stdio with a timeout on every answer, and prints
"ok - what" or "FAIL: what: why" per check. session: initialize,
notifications/initialized, ping, tools/list (7 tools with JSON Schemas),
the 20-step session of session.sh through the exec tool, log, diff,
errors for bad params and unknown tools, malformed frames, commit, and a
call after the mount is gone. denied: under `control deny commit` the
commit tool is refused (isError) and the rollback tool still works.
"""
import json
import os
import select
import subprocess
import sys

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
        self.p = subprocess.Popen(argv, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.buf = b""
        self.next_id = 0

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

    def request(self, method, params=None):
        self.next_id += 1
        msg = {"jsonrpc": "2.0", "id": self.next_id, "method": method}
        if params is not None:
            msg["params"] = params
        self.send_raw(json.dumps(msg))
        r = self.recv()
        assert r.get("id") == self.next_id, "answer id %r" % r.get("id")
        assert r.get("jsonrpc") == "2.0"
        return r

    def call(self, name, args=None):
        p = {"name": name}
        if args is not None:
            p["arguments"] = args
        return self.request("tools/call", p)

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
                         "log", "exec"}, "tools/list: the 7 tools", sorted(tools))
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


def main():
    mode, ws, txfs = sys.argv[1:4]
    runner = sys.argv[4:]
    c = Client(runner + [txfs, "mcp", ws])
    try:
        (session if mode == "session" else denied)(c, ws, txfs, runner)
    except Exception as e:     # a hang or a crash is a failure, not a hang
        fail("%s: %s: %s" % (mode, type(e).__name__, e))
    rc = c.close()
    check(rc == 0, "the server exits 0 at the end of its input", rc)
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
