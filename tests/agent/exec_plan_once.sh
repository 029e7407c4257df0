#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_plan_once - cmd-end plans the staged layer once where it can: the
# view a kept command ends with is kept and taken as the view at the next
# command's savepoint (fs/session/session.c). What must hold, as root and as the
# unprivileged test user: a command's "changes" (txfs exec --json) are
# exactly what it changed, never what was changed between two commands
# (files written in the mount outside txfs exec, a savepoint taken and
# released, a rename, a commit, `txfs rollback --command`, a rolled-back
# command, a command that changed nothing), and equal what `txfs diff
# --command N --name-status` (which always plans twice) lists for it. A
# stale kept view would list the changes made between the commands, or
# miss one.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"

# changes_of: the "changes" of $OUT, sorted, one a line.
changes_of() {
	printf '%s' "$OUT" | "$PY" -c 'import json, sys
d = json.loads(sys.stdin.read())
print("\n".join(sorted(d.get("changes", []))))'
}

# oracle N: txfs diff --command N --name-status as change lines, sorted.
oracle() {
	txfs_as diff --command "$1" --name-status "$WS" 2>&1 |
		sed -E 's/^R\t([^\t]*)\t(.*)$/R \1 -> \2/; s/^([AMD])\t/\1 /' | sort
}

# step WHAT WANT -- CMD...: one txfs exec; its changes are WANT (lines,
# sorted) and what diff --command lists for it.
step() {
	local what=$1 want=$2 got n
	shift 3
	ag_exec -- "$@"
	n=$(jget cmd)
	got=$(changes_of)
	check_eq "[$WHO] $what: command $n lists exactly its changes" "$want" "$got"
	if [ "$(jget outcome)" = kept ] && [ -n "$got" ]; then
		check_eq "[$WHO] $what: the same as txfs diff --command $n" "$got" "$(oracle "$n")"
	fi
}

body() {
	local i want
	git_ws
	mount_ws
	ag_exec -- sh -c 'for i in $(seq 200); do echo $i > s$i; done; mkdir d; echo x > d/x'
	check_eq "[$WHO] 200 files staged" kept "$(jget outcome)"
	step "a new file" "A f1" -- sh -c 'echo a > f1'
	as_run sh -c "echo out > '$WS/outside1'"
	step "after a write outside a command" "A f2" -- sh -c 'echo b > f2'
	step "a command that changes nothing" "" -- true
	step "after it, a change" "A f3" -- sh -c 'echo c > f3'
	as_run sh -c "mv '$WS/s1' '$WS/s1moved'; rm '$WS/s2'"
	step "after a rename and a delete outside" "A f4" -- sh -c 'echo d > f4'
	txfs_as savepoint "$WS" hand >/dev/null
	as_run sh -c "echo h > '$WS/outside2'"
	txfs_as release "$WS" hand >/dev/null
	step "after a savepoint taken and released" "A f5" -- sh -c 'echo e > f5'
	step "a rolled-back command" "A f6" -- sh -c 'echo f > f6; exit 3'
	check_eq "[$WHO] it was rolled back" "rolled-back" "$(jget outcome)"
	step "after a rolled-back command" "A f7" -- sh -c 'echo g > f7'
	step "a rename in a folder an earlier command made (the folder only gains and loses an entry)" "R d/x -> d/y" -- sh -c 'mv d/x d/y'
	step "a change to drop" "A f8" -- sh -c 'echo h > f8'
	txfs_as rollback "$WS" --command "$(jget cmd)" >/dev/null
	step "after txfs rollback --command" "A f9" -- sh -c 'echo i > f9'
	txfs_as commit "$WS" >/dev/null || fail "[$WHO] txfs commit"
	step "after a commit" "M f9" -- sh -c 'echo j >> f9'
	step "a second change to the same file" "M f9" -- sh -c 'echo k >> f9'
	as_run sh -c "echo l >> '$WS/f9'"
	step "the same file after a write outside" "M f3" -- sh -c 'echo m >> f3'
	# many rounds: commands and writes outside, interleaved
	for i in $(seq 12); do
		if [ $((i % 3)) = 0 ]; then
			as_run sh -c "echo $i > '$WS/out$i'; rm -f '$WS/s$((i + 10))'"
		fi
		want="A r$i"
		[ $((i % 4)) = 1 ] && want=$(printf 'A r%s\nD s%s' "$i" "$((i + 100))")
		if [ $((i % 4)) = 1 ]; then
			step "round $i" "$want" -- sh -c "echo $i > r$i; rm s$((i + 100))"
		else
			step "round $i" "$want" -- sh -c "echo $i > r$i"
		fi
	done
	umount_ws
}

for_each_user body
finish
