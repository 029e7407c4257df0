#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# log_bytes - names that are not plain text in the audit log, as root and as
# the unprivileged test user. Real files named with a byte that is not
# UTF-8, a newline, quotes and backslashes, control bytes (ESC), a real
# U+FFFD, are vetoed (`deny delete keep/**`); a txfs exec command gets
# such names as arguments (after an empty one, which must not cut the
# logged argv short) and creates files with them, and one of its
# deletions is vetoed. Then: every line of STATE/audit.log is strict JSON;
# every veto path, the command's argv, its changes and its vetoed lines
# read back (K_hex when present, K otherwise) to the exact bytes; two
# different names never log the same; `txfs log` (text) shows them quoted
# (\xff, \n, \x1b) with no control byte; `txfs log --json --commands`
# keeps argv_hex and changes_hex; `txfs diff --command N` lists the new
# name C-quoted ("new\376", its exact bytes); a commit lists the flagged names, exact, in
# needs_review (a name holding ", " stays one); the txfs mcp diff and log
# tools answer with such a name in their text. Before the audit log
# moved to jansson, the txfs exec command failed (a change line that is
# not UTF-8 made cmd-end fail with ENOMEM), ", " split a name in two, and
# the mcp diff tool answered "internal error".
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed to read the log"

CHECK=$T/logbytes.py
cat >"$CHECK" <<'PYEOF'
import json, sys

log, ws = sys.argv[1], sys.argv[2].encode()
def exact(r, k, i=None):
    v, h = r.get(k), r.get(k + "_hex")
    if i is not None:
        v, h = v[i], (h[i] if h else None)
    return bytes.fromhex(h) if h is not None else v.encode("utf-8")

recs = []
with open(log, "rb") as f:
    for n, line in enumerate(f, 1):
        assert line.endswith(b"\n"), f"line {n}: no newline"
        r = json.loads(line.decode("utf-8", errors="strict"))
        assert isinstance(r, dict), f"line {n}: not an object"
        recs.append(r)
names = [b"bad\xff", b"nl\nname", b'q"b\\s', b"ctl\x01\x1b[31m", b"real\xef\xbf\xbd"]
vetoed = {exact(r, "path") for r in recs if r["event"] == "veto" and r["op"] == "delete"}
for nm in names:
    assert b"keep/" + nm in vetoed, f"no veto of keep/{nm!r}: {sorted(vetoed)}"
# unambiguous: (path, path_hex) differs for different paths
seen = {}
for r in recs:
    if r["event"] == "veto":
        key = (r["path"], r.get("path_hex"))
        assert seen.setdefault(key, exact(r, "path")) == exact(r, "path"), key
assert ("keep/bad\ufffd", "6b6565702f626164ff") in seen, sorted(seen)
begin = [r for r in recs if r["event"] == "cmd-begin"][-1]
argv = [exact(begin, "argv", i) for i in range(len(begin["argv"]))]
assert argv[-3:] == [b"", b"new\xfe", b"new\nline"], argv
assert argv[0] == b"sh" and argv[1] == b"-c" and argv[3] == b"sh", argv
assert begin["argv_hex"][-2] == "6e6577fe" and begin["argv_hex"][-1] is None
end = [r for r in recs if r["event"] == "cmd-end"][-1]
assert end["outcome"] == "kept", end
changes = {exact(end, "changes", i) for i in range(len(end["changes"]))}
assert {b"A new\xfe", b"A new\nline"} <= changes, changes
print(f"{len(recs)} records, {len(vetoed)} delete vetoes, changes {sorted(changes)}")
PYEOF

# A minimal MCP client: initialize, then the diff and log tools; prints
# isError and whether the new name shows, for each.
MCP='import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
def ask(i, method, params):
    p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": i, "method": method,
                              "params": params}).encode() + b"\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())
ask(1, "initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                      "clientInfo": {"name": "t", "version": "1"}})
out = []
for i, (tool, args, want) in enumerate([("diff", {"name_status": True}, "\"new\\376\""),
                                        ("log", {}, "new\\xfe")], 2):
    r = ask(i, "tools/call", {"name": tool, "arguments": args}).get("result")
    t = "".join(c.get("text", "") for c in r["content"]) if r else ""
    out += [r["isError"] if r else "no-result", want in t]
p.stdin.close()
p.wait(timeout=30)
print(*out)'

body() {
	local u=$WHO n out pol
	ws_fixture
	pol=bytes$SEQ.policy
	mkdir -p "$WS/keep"
	for n in $'bad\xff' $'nl\nname' 'q"b\s' $'ctl\x01\x1b[31m' $'real\xef\xbf\xbd'; do
		echo x >"$WS/keep/$n"
	done
	as_owner "$WS/keep"
	printf 'deny delete keep/**\nflag review/**\n' >"$T/$pol"
	chmod 644 "$T/$pol"
	mount_ws --policy "$T/$pol"
	out=$(as_run "$PY" -c 'import os, sys
d = os.fsencode(sys.argv[1]) + b"/keep"
bad = 0
for n in os.listdir(d):
    try:
        os.unlink(d + b"/" + n)
    except PermissionError:
        bad += 1
print(bad)' "$WS" 2>&1)
	check_eq "[$u] the 5 hostile names in keep/: deletes refused" 5 "$out"

	# an empty argument before them: the logged argv is not cut there
	ag_exec -- sh -c 'for f in "$@"; do [ -z "$f" ] || echo y > "$f"; done; rm -f keep/bad* 2>/dev/null; exit 0' sh \
		"" $'new\xfe' $'new\nline'
	check_eq "[$u] txfs exec with names that are not UTF-8: kept, exit 0" "kept 0" \
		"$(jget outcome) $(jget exit)"
	check_eq "[$u] its report: the veto of keep/bad\\xff, exact in vetoed_hex" \
		"delete keep/bad\\xff ($pol:1)" \
		"$(printf '%s' "$OUT" | "$PY" -c 'import json, sys
d = json.load(sys.stdin)
h = d.get("vetoed_hex") or [None]
v = bytes.fromhex(h[0]) if h[0] else d["vetoed"][0].encode()
print(v.decode("ascii", "backslashreplace").replace(sys.argv[1], ""))' "$T/")"

	if out=$(t 30 "$PY" "$CHECK" "$STATE/audit.log" "$WS" 2>&1); then
		ok "[$u] audit.log: strict JSON, every name back to its bytes ($out)"
	else
		fail "[$u] audit.log: $out"
	fi

	txfs_as log "$WS" >"$T/log$SEQ.txt" 2>&1
	if grep -qF 'keep/bad\xff' "$T/log$SEQ.txt" &&
		grep -qF 'keep/nl\nname' "$T/log$SEQ.txt" &&
		grep -qF 'keep/ctl\x01\x1b[31m' "$T/log$SEQ.txt" &&
		grep -qF 'keep/q"b\\s' "$T/log$SEQ.txt" &&
		grep -qF 'sh "" "new\376" "new\nline"' "$T/log$SEQ.txt"; then
		ok "[$u] txfs log: names quoted for a terminal"
	else
		fail "[$u] txfs log text: $(head -c 1500 "$T/log$SEQ.txt")"
	fi
	check_eq "[$u] txfs log: no control byte but newline, no byte that is not UTF-8" 0 \
		"$(t 30 "$PY" -c 'import sys, re
b = open(sys.argv[1], "rb").read()
try:
    b.decode("utf-8")
except UnicodeDecodeError:
    print("not UTF-8"); sys.exit()
print(len(re.findall(rb"[\x00-\x09\x0b-\x1f\x7f]", b)))' "$T/log$SEQ.txt")"

	txfs_as log --json --commands "$WS" >"$T/logc$SEQ.json" 2>&1
	check_eq "[$u] txfs log --json --commands: argv_hex and changes_hex kept" \
		"6e6577fe 1" "$(t 30 "$PY" -c 'import json, sys
c = [json.loads(l) for l in open(sys.argv[1], "rb")]
c = [x for x in c if "argv" in x][-1]
print(c["argv_hex"][-2], sum(1 for h in c["changes_hex"] if h))' "$T/logc$SEQ.json")"

	check_eq "[$u] txfs diff --command N: the new name, C-quoted (its exact bytes)" 1 \
		"$(txfs_as diff --command "$(jget cmd)" --name-status "$WS" |
			grep -cxF $'A\t"new\\376"')"

	# txfs mcp: tool results are JSON text even when a name is not UTF-8
	check_eq "[$u] txfs mcp: diff and log tools answer (names C-quoted, log quoted)" \
		"False True False True" "$(timeout -k 5 60 "${AS[@]}" env -i \
		PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
		"$PY" -c "$MCP" "$TXFS_BIN" "$WS" 2>&1)"

	# a commit that needs review: needs_review holds the exact names
	as_run mkdir "$WS/review"
	as_run sh -c 'echo z > "$1/review/$2"; echo z > "$1/review/$3"' sh "$WS" \
		$'x\xfd' 'a, b'
	txfs_as commit "$WS" >"$T/commit$SEQ.out" 2>&1 ||
		fail "[$u] txfs commit: $(cat "$T/commit$SEQ.out")"
	check_eq "[$u] commit record: needs_review exact (a name with ', ' stays one)" \
		"[b'review', b'review/a, b', b'review/x\\xfd']" "$(t 30 "$PY" -c 'import json, sys
r = [json.loads(l) for l in open(sys.argv[1], "rb")]
r = [x for x in r if x["event"] == "commit"][-1]
h = r.get("needs_review_hex") or [None] * len(r["needs_review"])
print(sorted(bytes.fromhex(x) if x else v.encode() for v, x in zip(r["needs_review"], h)))' "$STATE/audit.log")"
	txfs_as log "$WS" >"$T/log$SEQ.txt" 2>&1
	check_eq "[$u] txfs log: the commit's needs_review, quoted" 1 \
		"$(grep -cF 'needs_review=[review,review/x\xfd,review/a, b]' "$T/log$SEQ.txt")"
	# a command line the control socket cannot carry whole is refused
	# (exit 125, the command does not run), never logged in part
	ag_exec -- sh -c 'echo ran > toolong.txt' $(seq 1 5000)
	check_eq "[$u] txfs exec with 5,000 arguments: refused (125)" 125 "$RC"
	grep 'too many arguments (4096 at most, the request.s own included: txfs exec takes 4094)' <<<"$ERR" >/dev/null &&
		! as_run test -e "$WS/toolong.txt" &&
		ok "[$u] ... it says why, and the command did not run" ||
		fail "[$u] 5,000 arguments: $(head -c 300 <<<"$ERR")"
	umount_ws
	check_unmounted "[$u] log_bytes"
}

for_each_user body
finish
