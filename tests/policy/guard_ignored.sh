#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The guard knows what is regenerable (issue 22.4). Under the default
# policy (`limit deletes 1000 ... except-ignored`), what git ignores in
# the REAL directory (untracked and matched by its ignore rules) is no
# loss: rm -rf node_modules (1,974 files) works. And nothing else is
# exempt:
#  - files git tracks count even when an ignore rule matches them;
#  - a .gitignore written in the transaction exempts nothing;
#  - tracked files moved under an ignored folder still count (the real
#    path of what is lost decides, not the name it has now);
#  - a policy without except-ignored counts node_modules too.
# A tree made ignored and committed is exempt after the commit. And the
# refusal reaches the caller: txfs exec and txfs run print the vetoes
# (count, the first few) and the guard's note with "roll back" on stderr,
# and txfs exec --json has it in "guard", which the MCP exec tool returns.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

command -v git >/dev/null || skip "git is not installed"
G=(git -c user.name=t -c user.email=t@example.com -c init.defaultBranch=main)
mkrepo() {	# mkrepo DIR: the decoy repository
	rm -rf "$1" && mkdir -p "$1/src" "$1/lib"
	(cd "$1" && "${G[@]}" init -q . &&
		printf 'node_modules/\n*.log\nbuild/\n' >.gitignore &&
		echo 'int main(void) { return 0; }' >src/main.c &&
		for i in $(seq 1200); do echo "lib $i" >"lib/f$i.log"; done &&
		"${G[@]}" add .gitignore src && "${G[@]}" add -f lib &&
		"${G[@]}" commit -qm decoy &&
		for d in $(seq 0 13); do mkdir -p "node_modules/p$d/dist"; done &&
		for i in $(seq 1974); do echo "m $i" >"node_modules/p$((i % 14))/dist/m$i.js"; done) ||
		return 1
}
mkrepo "$WS" || { fail "making the decoy repository"; exit 1; }
check_eq "the decoy: node_modules holds 1,974 files" 1974 "$(find "$WS/node_modules" -type f | wc -l)"
default_policy
txfs_mount || exit 1
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }
count() { in_mnt "find $1 -type f 2>/dev/null | wc -l"; }

# ---- what git ignores is regenerable
allowed "rm -rf node_modules (1,974 ignored files)" 'rm -rf node_modules'
grep -q "limit deletes" "$MNT/.txfs/ctl" && fail ".txfs/ctl speaks of the guard: $(cat "$MNT/.txfs/ctl")" ||
	ok "no loss counted"
check_eq "node_modules is gone" 0 "$(count node_modules)"
ctl rollback
check_eq "rollback: node_modules is back" 1974 "$(count node_modules)"

# ---- tracked files count, even those an ignore rule matches
refused "rm -rf lib (1,200 tracked files matched by *.log)" 'rm -rf lib'
check_eq "exactly 1,000 of them were removed" 200 "$(count lib)"
log_guard "tracked *.log" deletes
ctl rollback

# ---- a .gitignore written in the transaction exempts nothing
refused "ignoring lib/ in the transaction's .gitignore, then rm -rf lib" \
	'echo lib/ >> .gitignore && printf "*\n" > lib/.gitignore && rm -rf lib'
check_eq "exactly 1,000 were removed" 200 "$(count lib)"
ctl rollback

# ---- moved under an ignored folder, a tracked file is still counted
refused "mv lib node_modules/, then rm -rf node_modules" 'mv lib node_modules/lib && rm -rf node_modules'
check_eq "1,000 of lib's files were removed, 200 stay" 200 "$(count node_modules/lib)"
ctl rollback
check_eq "rollback: lib is whole" 1200 "$(count lib)"

# ---- a tree made ignored and committed is exempt afterwards
allowed "1,200 files made under build/ (ignored)" 'mkdir build && for i in $(seq 1200); do echo $i > build/o$i || exit 1; done'
ctl commit
ls "$WS/build" | wc -l | qgrep -x 1200 && ok "build/ is real now" || fail "build/: $(ls "$WS/build" | wc -l)"
allowed "rm -rf build after the commit (re-read what git ignores)" 'rm -rf build'
ctl commit
[ -e "$WS/build" ] && fail "build/ is still real" || ok "build/ is gone from the real directory"
txfs_umount
snapshot_real	# what the two commits made real is the new reference

# ---- without except-ignored, node_modules counts like anything else
use_policy plain <<'EOF'
limit deletes 1000 except scratch/**
EOF
# (txfs exec below refuses a state folder under /tmp, which it leaves
# writable to the command)
VSTATE=$(mktemp -d /var/tmp/txfs-guard-ignored.XXXXXX) || exit 1
txfs_mount --state "$VSTATE" || exit 1
refused "no except-ignored: rm -rf node_modules" 'rm -rf node_modules'
check_eq "exactly 1,000 of its 2,003 files and folders were removed" 1003 \
	"$(in_mnt 'find node_modules | wc -l')"
ctl rollback
refused "except GLOB: tracked files moved under scratch/ still count" 'mv lib scratch && rm -rf scratch'
check_eq "exactly 1,000 were removed" 200 "$(count scratch)"
ctl rollback

# ---- txfs exec: the vetoes and the guard's note on stderr, and in --json
t 120 "$TXFS" exec --allow-weaker "$MNT" -- rm -rf lib >"$T/exec.out" 2>"$T/exec.err"
rc=$?
[ $rc != 0 ] && ok "txfs exec rm -rf lib: exit $rc" || fail "txfs exec rm -rf lib: exit 0"
grep -q "^  vetoed: delete lib/" "$T/exec.err" && grep -q "and 190 more" "$T/exec.err" &&
	grep -q "guard: \`limit deletes 1000\` (.*plain.policy:1) reached: delete lib/.* refused; .*roll back" "$T/exec.err" &&
	ok "txfs exec: stderr names the vetoes and the guard's note" ||
	fail "txfs exec stderr: $(grep -v 'rm: cannot' "$T/exec.err" | head -20)"
[ "$(grep -c '^  vetoed:' "$T/exec.err")" = 11 ] && ok "txfs exec: 10 vetoes shown, then the count" ||
	fail "txfs exec: vetoed lines: $(grep -c '^  vetoed:' "$T/exec.err")"
t 120 "$TXFS" exec --json --allow-weaker "$MNT" -- rm -rf lib >"$T/exec.json" 2>/dev/null
if t 30 "$PYTHON" -c 'import json, sys
o = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert o["outcome"] == "rolled-back", o["outcome"]
assert "limit deletes 1000" in o["guard"] and "roll back" in o["guard"], o["guard"]
assert o["vetoes"] >= 1, o["vetoes"]' "$T/exec.json" >"$T/j.out" 2>&1; then
	ok "txfs exec --json: \"guard\" holds the note"
else
	fail "txfs exec --json: $(tail -3 "$T/j.out")"
fi
# the MCP exec tool returns txfs exec --json's object: the note is there
if (cd "$MNT" && t 120 "$PYTHON" -c 'import json, subprocess, sys
msgs = [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
         "protocolVersion": "2025-06-18", "capabilities": {},
         "clientInfo": {"name": "guard_ignored", "version": "1"}}},
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
         "name": "exec", "arguments": {"argv": ["sh", "-c", "rm -rf lib 2>/dev/null"]}}}]
p = subprocess.Popen([sys.argv[1], "mcp", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
p.stdin.write("".join(json.dumps(m) + "\n" for m in msgs)); p.stdin.flush()
for line in p.stdout:
    o = json.loads(line)
    if o.get("id") == 2:
        break
p.stdin.close(); p.wait(30)
r = o["result"]
assert r["isError"], r
g = r["structuredContent"]["guard"]
assert "limit deletes 1000" in g and "roll back" in g, g
assert g in r["content"][0]["text"] or "limit deletes 1000" in r["content"][0]["text"]
print(g[:60])' "$TXFS" "$MNT") >"$T/mcp.out" 2>&1; then
	ok "MCP exec tool: the result carries the guard's note ($(cat "$T/mcp.out"))"
else
	fail "MCP exec tool: $(tail -5 "$T/mcp.out")"
fi
check_eq "after the three commands: lib is whole" 1200 "$(count lib)"
txfs_umount "$MNT" "$VSTATE" && rm -rf "$VSTATE"

# ---- txfs run (mounted in place, the default policy)
R=$T/runws
mkrepo "$R" || fail "making the second decoy"
RBEFORE=$({ "$FSOP" tree -mox "$R/lib"; "$FSOP" tree -mox "$R/src"; } | sha256sum)
t 300 "$TXFS" run -C "$R" --state "$T/rstate" --allow-weaker -- rm -rf node_modules >"$T/run1.out" 2>&1
rc=$?
[ $rc = 0 ] && ok "txfs run rm -rf node_modules: committed" || fail "txfs run rm -rf node_modules: exit $rc: $(tail -5 "$T/run1.out")"
[ -e "$R/node_modules" ] && fail "node_modules is still real" || ok "node_modules is gone from the real directory"
check_eq "lib/ and src/ are as they were" "$RBEFORE" "$({ "$FSOP" tree -mox "$R/lib"; "$FSOP" tree -mox "$R/src"; } | sha256sum)"
RBEFORE=$("$FSOP" tree -mox "$R" | sha256sum)
t 300 "$TXFS" run -C "$R" --state "$T/rstate2" --allow-weaker -- rm -rf lib src >"$T/run2.out" 2>&1
rc=$?
[ $rc != 0 ] && ok "txfs run rm -rf lib src: exit $rc" || fail "txfs run rm -rf lib src: exit 0"
grep -q "^txfs: run: rolled-back" "$T/run2.out" && grep -q "^txfs: run: [0-9]* vetoes by the policy" "$T/run2.out" &&
	grep -q "^  vetoed: delete lib/" "$T/run2.out" &&
	grep -q "guard: \`limit deletes 1000\` (default.policy:[0-9]*) reached: .*cannot commit: txfs run commits when it exits 0 and rolls back otherwise" "$T/run2.out" &&
	! grep -q "echo rollback\|txfs rollback" "$T/run2.out" &&
	ok "txfs run: stderr names the vetoes and the guard's note" ||
	fail "txfs run: $(grep -v 'rm: cannot' "$T/run2.out" | head -20)"
check_eq "txfs run rolled back: the real directory is byte-identical" "$RBEFORE" "$("$FSOP" tree -mox "$R" | sha256sum)"
finish
