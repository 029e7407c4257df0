#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# session - a scripted stand-in agent plays a 20-step session through
# `txfs exec` in a mounted git workspace (as root and as the unprivileged
# test user): edits, a build with cc, a failing test whose changes roll
# back, `rm -rf .git` vetoed by the default policy (rolled back), a retry,
# a check that fails, a background process that must not survive its
# command, `git commit`. Checks each step's JSON (exit, outcome, changes,
# vetoes), `txfs log --json --commands` (the 20 commands with their outcomes),
# `txfs diff --command N`, `txfs status --json` (last_command), then
# commits the session and compares the real directory with a model tree
# built by replaying only the kept steps in a copy, and `git fsck`.
. "$(dirname "$0")/lib.sh"

require_landlock
command -v cc >/dev/null || skip "cc is needed"

# step N EXPECTED_OUTCOME EXEC-ARGS...
step() {
	local n=$1 want=$2 got
	shift 2
	ag_exec "$@"
	got=$(jget outcome)
	if [ "$got" = "$want" ] && [ "$(jget cmd)" != "" ]; then
		ok "[$WHO] step $n: $want (exit $RC)"
	else
		fail "[$WHO] step $n: expected $want got '$got' (exit $RC); out: $(head -c 300 <<<"$OUT"); err: $(head -c 300 <<<"$ERR")"
	fi
	OUTS[$n]=$OUT
	CMDOUTS[$n]=$CMDOUT
}

MAIN1='#include <stdio.h>
int main(void) { puts("hello"); return 0; }'
TEST='echo running > test.log; ./hello | grep -x "hello, world" >/dev/null'

body() {
	local model m pid
	git_ws
	m=$T/model$SEQ
	cp -a "$WS" "$m"
	mount_ws
	OUTS=() CMDOUTS=()
	step 1 kept -- cat README.md
	step 2 kept -- sh -c "printf '%s\n' '$MAIN1' > main.c"
	step 3 kept -- cc -o hello main.c
	step 4 kept -- ./hello
	step 5 rolled-back -- sh -c "$TEST"
	step 6 kept -- sed -i 's/"hello"/"hello, world"/' main.c
	step 7 kept -- cc -o hello main.c
	step 8 kept -- sh -c "$TEST"
	step 9 rolled-back -- rm -rf .git
	step 10 kept -- sh -c 'mkdir src && mv main.c src/'
	step 11 kept -- sh -c 'echo "/* greets */" >> src/main.c'
	step 12 kept -- cc -o hello src/main.c
	step 13 kept --check './hello | grep world >/dev/null' -- sh -c 'echo "// ok" >> src/main.c'
	step 14 rolled-back --check false -- sh -c 'echo junk > junk.txt'
	step 15 kept -- rm hello
	step 16 kept -- sh -c 'printf "hello\ntest.log\n" > .gitignore'
	step 17 kept -- sh -c "$SLEEPER 300 & setsid $SLEEPER 301 & echo started"
	step 18 kept -- "${GITC[@]}" add -A
	step 19 kept -- "${GITC[@]}" commit -qm 'hello, world'
	step 20 kept -- sh -c 'git log --oneline | wc -l'

	# a 21st command, undone with rollback --command
	step 21 kept -- sh -c 'echo extra > extra.txt'
	as_run test -e "$WS/extra.txt" || fail "[$WHO] step 21: extra.txt missing"
	txfs_as rollback "$WS" --command 21 >/dev/null 2>&1 || fail "[$WHO] rollback --command 21"
	as_run test -e "$WS/extra.txt" && fail "[$WHO] rollback --command 21: extra.txt survived" ||
		ok "[$WHO] rollback --command 21 undid it"
	as_run test -e "$WS/.gitignore" && ok "[$WHO] ... and only it (step 16 kept)" || fail "[$WHO] rollback --command 21 undid more"
	txfs_as rollback "$WS" --command 21 >/dev/null 2>&1
	check_eq "[$WHO] rollback --command 21 again: nothing to undo (exit 1)" 1 "$?"

	# per-step details
	check_eq "[$WHO] step 5: exit of the failing test" 1 "$(OUT=${OUTS[5]} jget exit)"
	check_eq "[$WHO] step 5: its change listed" '["A test.log"]' "$(OUT=${OUTS[5]} jget changes)"
	# the default policy refuses every file of .git, one veto each
	nv=$(OUT=${OUTS[9]} jget vetoes)
	[ "${nv:-0}" -ge 1 ] && ok "[$WHO] step 9: vetoes ($nv)" || fail "[$WHO] step 9: vetoes: $nv"
	if grep -q 'delete .git/HEAD (default.policy' <<<"$(OUT=${OUTS[9]} jget vetoed)"; then
		ok "[$WHO] step 9: the veto names op, path and rule"
	else
		fail "[$WHO] step 9: vetoed: $(OUT=${OUTS[9]} jget vetoed)"
	fi
	check_eq "[$WHO] step 14: check_exit" 1 "$(OUT=${OUTS[14]} jget check_exit)"
	check_eq "[$WHO] step 10: changes (main.c, made by step 2, moved: R)" '["R main.c -> src/main.c", "A src"]' "$(OUT=${OUTS[10]} jget changes)"
	check_eq "[$WHO] step 20: CMD's output before the report" 2 "$(tr -d ' ' <<<"${CMDOUTS[20]}")"
	if pgrep -f "$SLEEPER" >/dev/null; then
		fail "[$WHO] step 17: a background process outlived its command: $(ps -o pid,ppid,pgid,sid,user,args -p "$(pgrep -d, -f "$SLEEPER")")"
		pkill -f "$SLEEPER"
	else
		ok "[$WHO] step 17: the background processes were stopped"
	fi
	as_run sh -c '[ -e "$1/test.log" ] && [ ! -e "$1/junk.txt" ] && [ -d "$1/.git" ]' sh "$WS" &&
		ok "[$WHO] test.log (step 8) present, junk.txt (step 14) gone, .git kept" ||
		fail "[$WHO] workspace view after the session"

	# txfs log: 20 commands with their outcomes
	local lg
	lg=$(txfs_as log --json --commands "$WS" | "$PY" -c 'import json, sys
cmds = [json.loads(l) for l in sys.stdin if "\"cmd\"" in l and "argv" in l]
print(len(cmds), " ".join("%d:%s:%s" % (c["cmd"], c["outcome"][0], c["exit"]) for c in cmds))')
	check_eq "[$WHO] txfs log --json --commands: the 20 commands (and the undone 21st), outcomes, exits" \
		"21 1:k:0 2:k:0 3:k:0 4:k:0 5:r:1 6:k:0 7:k:0 8:k:0 9:r:1 10:k:0 11:k:0 12:k:0 13:k:0 14:r:0 15:k:0 16:k:0 17:k:0 18:k:0 19:k:0 20:k:0 21:u:0" "$lg"
	txfs_as log "$WS" >"$T/log.txt"
	grep -q '^command 9: rm -rf .git' "$T/log.txt" && grep -q 'veto op=delete path=.git' "$T/log.txt" &&
		ok "[$WHO] txfs log groups the veto under command 9" ||
		fail "[$WHO] txfs log text: $(head -c 600 "$T/log.txt")"
	check_eq "[$WHO] txfs diff --command 16 --name-status" "A	.gitignore" \
		"$(txfs_as diff --command 16 --name-status "$WS")"
	check_eq "[$WHO] status --json: last_command" 21 "$(OUT=$(txfs_as status --json "$WS") jget last_command | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["cmd"])')"

	# commit the session; the real directory equals the model
	txfs_as commit "$WS" >/dev/null 2>&1 || fail "[$WHO] txfs commit"
	umount_ws
	(cd "$m" && "${AS[@]}" sh -c "printf '%s\n' '$MAIN1' > main.c && cc -o hello main.c &&
		sed -i 's/\"hello\"/\"hello, world\"/' main.c && cc -o hello main.c && $TEST;
		mkdir src && mv main.c src/ && echo '/* greets */' >> src/main.c && cc -o hello src/main.c &&
		echo '// ok' >> src/main.c && rm hello && printf 'hello\ntest.log\n' > .gitignore &&
		git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm x") >/dev/null 2>&1
	check_snap "[$WHO] after the commit the real directory equals the model (without .git)" \
		"$(snap_nt "$m" | grep -v '^./.git\| ./.git/')" "$(snap_nt "$WS" | grep -v '^./.git\| ./.git/')"
	check_eq "[$WHO] HEAD's tree equals the model's" \
		"$(git -C "$m" -c safe.directory='*' rev-parse 'HEAD^{tree}')" "$(git -C "$WS" -c safe.directory='*' rev-parse 'HEAD^{tree}')"
	git -C "$WS" -c safe.directory='*' fsck --strict >/dev/null 2>&1 && ok "[$WHO] git fsck" || fail "[$WHO] git fsck"
	check_eq "[$WHO] git log: 2 commits" 2 "$(git -C "$WS" -c safe.directory='*' rev-list --count HEAD)"
	check_unmounted "[$WHO] session"
}

for_each_user body
finish
