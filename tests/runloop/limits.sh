#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# limits - resource limits of `txfs run` and `txfs exec` (issue 23):
# --timeout, --memory, --cpu, --pids and the policy's `limit` lines, as
# root and as the unprivileged test user, with the command's cgroup where
# txfs can make one (root here) and in the fallback without it
# (TXFS_NO_CGROUP=1, which only tests use; the test user has no cgroup of
# its own here, so its runs are the fallback anyway). Each limit is hit in
# three forms:
#   timeout: sleep; a busy loop; a tree that ignores SIGTERM, one of it
#            escaped with setsid;
#   memory:  one allocator; an allocator that grows forever; five
#            processes of 40M each under a limit of 100M (only their sum
#            exceeds it);
#   pids:    a loop starting 2,000 sleepers; a bounded exponential fork
#            bomb (up to 1,023 shells); 300 threads in one process;
#   cpu:     one busy loop; four busy children; short-lived burners each
#            reaped before the next (their CPU counts once reaped).
# After each: exit 124, the JSON report's "limit" names the limit, the
# action is rolled-back, the real directory is byte-identical to before,
# no process of the tree is alive (every process of it wrote its pid to a
# file), the workspace is unmounted and its daemon gone. A command under
# its limits commits, a policy's limit applies and an option lifts it,
# bad values are refused with exit 2, and txfs exec rolls back only the
# command that hit a limit while the session goes on.
. "$(dirname "$0")/lib.sh"

require_landlock
PIDS_DIR=/tmp/txfs-limits-$$
# the pid of every txfs run / txfs exec of this test (not killed by the
# trap: they are ours, and their cgroups are named after them)
RUNS_DIR=/tmp/txfs-limits-runs-$$
# (a run killed before its trap left its folders: never read another's lists)
rm -rf "$PIDS_DIR" "$RUNS_DIR"
mkdir -p "$PIDS_DIR" "$RUNS_DIR" && chmod 1777 "$PIDS_DIR" "$RUNS_DIR"
trap 'rc=$?; kill_listed; rm -rf "$PIDS_DIR" "$RUNS_DIR"; (exit $rc); runloop_cleanup' EXIT

# Helpers the commands run: each lists its own pid in $PIDS first.
cat >"$T/bin/alloc.py" <<'PYEOF'
import os, sys, time
open(os.environ["PIDS"], "a").write("%d\n" % os.getpid())
b = b"x" * (int(sys.argv[1]) << 20)   # touched: resident
time.sleep(60)
PYEOF
cat >"$T/bin/shmem.py" <<'PYEOF'
import mmap, os, sys, time
open(os.environ["PIDS"], "a").write("%d\n" % os.getpid())
n = int(sys.argv[2]) << 20
if sys.argv[1] == "shared":		# MAP_SHARED|MAP_ANONYMOUS
    m = mmap.mmap(-1, n, flags=mmap.MAP_SHARED)
else:					# a memfd, mapped
    fd = os.memfd_create("w")
    os.ftruncate(fd, n)
    m = mmap.mmap(fd, n, flags=mmap.MAP_SHARED)
for i in range(0, n, 4096):
    m[i] = 1
time.sleep(60)
PYEOF
cat >"$T/bin/grow.py" <<'PYEOF'
import os, time
open(os.environ["PIDS"], "a").write("%d\n" % os.getpid())
l = []
while True:
    l.append(b"y" * (4 << 20))
    time.sleep(0.01)
PYEOF
cat >"$T/bin/threads.py" <<'PYEOF'
import os, sys, threading, time
open(os.environ["PIDS"], "a").write("%d\n" % os.getpid())
for i in range(int(sys.argv[1])):   # a pool that goes on with fewer
    try:
        threading.Thread(target=time.sleep, args=(60,), daemon=True).start()
    except RuntimeError:
        time.sleep(0.01)
time.sleep(60)
PYEOF
chmod 755 "$T/bin"/*.py
HZ=$(getconf CLK_TCK)

# Every process a case listed in $PIDS_DIR that is still that process (for
# the trap: SIGKILL by pid). The cases' processes died long ago and their
# numbers are reused at once here (fork bombs wrap pid_max): a number now
# naming a thread (kill would take its whole process: another pass's meson
# once) or a process started after the list was last written is not ours.
kill_listed() {
	local f p up now lim st
	read -r up _ </proc/uptime
	now=$(date +%s.%N)
	for f in "$PIDS_DIR"/*; do
		[ -e "$f" ] || continue
		# the uptime at the list's last write (+ a tick): each listed
		# process started before it wrote its line
		lim=$(awk -v u="$up" -v n="$now" -v m="$(date -r "$f" +%s.%N)" \
			'BEGIN { printf "%.3f", u - (n - m) + 0.02 }')
		while read -r p; do
			[[ "$p" =~ ^[0-9]+$ ]] && [ "$p" -gt 1 ] || continue
			grep -q "^Tgid:[[:space:]]*$p\$" "/proc/$p/status" 2>/dev/null || continue
			st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
			# shellcheck disable=SC2086
			set -- $st	# $20: start time, in ticks since boot
			awk -v s="${20}" -v hz="$HZ" -v e="$lim" 'BEGIN { exit !(s / hz <= e) }' &&
				kill -9 "$p" 2>/dev/null
		done <"$f"
	done
}

# lrun [VAR=VALUE...] -- ARGS: `txfs run --state $STATE --json ARGS` as
# $AS in $WS; RC, OUT, ERR. (run_txfs takes 124 for its own timeout; here
# 124 is the answer, so the harness kills with SIGKILL: 137.)
lrun() {
	local envs=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	SEQ=$((SEQ + 1))
	(cd "$WS" && exec timeout -s KILL 90 "${AS[@]}" env -i \
		PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		PIDS="$PIDS_DIR/p$SEQ" PY="$PY" ASAN_OPTIONS="$ASAN_OPTIONS" \
		UBSAN_OPTIONS="$UBSAN_OPTIONS" "${envs[@]}" \
		sh -c 'echo $$ >"$0"; exec "$@"' "$RUNS_DIR/r$SEQ" \
		"$TXFS_BIN" run --state "$STATE" --json "$@") \
		</dev/null >"$T/l$SEQ.out" 2>"$T/l$SEQ.err"
	RC=$?
	END_UP=$(cut -d' ' -f1 /proc/uptime)
	LPIDS=$PIDS_DIR/p$SEQ
	OUT=$(cat "$T/l$SEQ.out")
	ERR=$(grep -v 'has its current directory in' "$T/l$SEQ.err")
	[ "$RC" = 137 ] && fail "txfs run $* did not finish within 90 s"
	return 0
}

# limit_field KEY: the report's limit.KEY ('' when null).
limit_field() {
	printf '%s' "$OUT" | "$PY" -c 'import json, sys
try:
    d = json.loads(sys.stdin.read())
except ValueError:
    print("INVALID-JSON"); sys.exit(0)
l = d.get("limit")
print(l.get(sys.argv[1], "") if isinstance(l, dict) else "")' "$1"
}

# no_survivor WHAT: every pid the case listed is gone: no process of
# that pid, or a zombie, or one started after the case ended (a reused
# pid: its start time, field 22 of /proc/PID/stat, is after END_UP).
no_survivor() {
	local p n=0 alive=() st
	[ -e "$LPIDS" ] || { fail "$1: the command listed no pid (it did not run?)"; return; }
	while read -r p; do
		[[ "$p" =~ ^[0-9]+$ ]] || continue
		n=$((n + 1))
		st=$(sed 's/.*) //' "/proc/$p/stat" 2>/dev/null) || continue
		set -- "$1" $st
		[ "$2" = Z ] && continue
		awk -v s="${21}" -v hz="$HZ" -v e="$END_UP" 'BEGIN { exit !(s / hz <= e) }' &&
			alive+=("$p")
	done <"$LPIDS"
	if [ ${#alive[@]} = 0 ]; then
		ok "$1: none of the $n listed processes is alive"
	else
		fail "$1: ${#alive[@]} of $n processes still alive: ${alive[*]:0:5}"
	fi
}

# The cgroup v2 mount (where txfs run makes txfs-run-PID for its command).
CG2=$(awk '$0 ~ / - cgroup2 / { print $5; exit }' /proc/self/mountinfo)

# no_cgroup_left WHAT: no txfs-run-PID cgroup of a txfs run or txfs exec
# of this test that is gone (they remove theirs when they end). Only
# ours: the other passes of tests/run run beside this one, and a txfs
# exec they SIGKILL on purpose leaves its cgroup to the next run's sweep.
no_cgroup_left() {
	local d n left=()
	[ -n "$CG2" ] || return 0
	for d in "$CG2"/txfs-run-* "$CG2"/*/txfs-run-*; do
		[ -d "$d" ] || continue
		n=${d##*txfs-run-}
		grep -qsx "$n" "$RUNS_DIR"/* || continue
		[ -e "/proc/$n" ] || left+=("$d")
	done
	if [ ${#left[@]} = 0 ]; then
		ok "$1: no cgroup of a finished txfs run left"
	else
		fail "$1: cgroups left behind: ${left[*]:0:3}"
	fi
}

# over WHAT NAME [VAR=VALUE...] -- ARGS: a run that must hit limit NAME.
over() {
	local what=$1 name=$2 before after
	shift 2
	before=$(snap "$WS")
	lrun "$@"
	if [ "$RC" = 124 ] && [ "$(limit_field name)" = "$name" ] &&
		[ "$(jget action)" = rolled-back ]; then
		ok "[$WHO$MODE] $what: exit 124, limit $name ($(limit_field text), used $(limit_field used), by $(limit_field by)), rolled back"
	else
		fail "[$WHO$MODE] $what: expected exit 124, limit $name, rolled-back; got exit $RC, limit '$(limit_field name)', action '$(jget action)'; stderr: $(printf '%s' "$ERR" | head -c 400)"
	fi
	check_unmounted "[$WHO$MODE] $what"
	after=$(snap "$WS")
	check_snap "[$WHO$MODE] $what: the real directory is byte-identical" "$before" "$after"
	no_survivor "[$WHO$MODE] $what"
	no_cgroup_left "[$WHO$MODE] $what"
}

# The command's part: list its pid, then change the workspace.
MARK='echo $$ >>"$PIDS"; echo junk >junk.txt; echo x >>a.txt'

cases() {
	local E=("$@")	# VAR=VALUE for every run of this mode
	local sleeper="echo \$\$ >>\"\$PIDS\"; exec sleep 300"
	local burn="echo \$\$ >>\"\$PIDS\"; while :; do :; done"

	# ---- timeout
	over "timeout: sleep" timeout "${E[@]}" -- --timeout 2s -- \
		sh -c "$MARK; exec sleep 300"
	over "timeout: busy loop" timeout "${E[@]}" -- --timeout 2 -- \
		sh -c "$MARK; $burn"
	over "timeout: a tree ignoring SIGTERM, one escaped with setsid" timeout "${E[@]}" -- \
		--timeout 3s -- sh -c "$MARK; trap '' TERM; for i in 1 2 3; do sh -c 'trap \"\" TERM; $sleeper' & done; setsid sh -c 'trap \"\" TERM; $sleeper' & wait"

	# ---- memory
	over "memory: one allocator" memory "${E[@]}" -- --memory 100M -- \
		sh -c "$MARK; exec \"\$PY\" $T/bin/alloc.py 400"
	over "memory: an allocator growing for ever" memory "${E[@]}" -- --memory 64M -- \
		sh -c "$MARK; exec \"\$PY\" $T/bin/grow.py"
	over "memory: five processes of 40M under 100M" memory "${E[@]}" -- --memory 100M -- \
		sh -c "$MARK; for i in 1 2 3 4 5; do \"\$PY\" $T/bin/alloc.py 40 & done; wait"
	over "memory: 300M of MAP_SHARED|MAP_ANONYMOUS under 100M" memory "${E[@]}" -- --memory 100M -- \
		sh -c "$MARK; exec \"\$PY\" $T/bin/shmem.py shared 300"
	over "memory: a 300M memfd, mapped, under 100M" memory "${E[@]}" -- --memory 100M -- \
		sh -c "$MARK; exec \"\$PY\" $T/bin/shmem.py memfd 300"

	# ---- pids
	over "pids: 2,000 sleepers" pids "${E[@]}" -- --pids 100 -- \
		sh -c "$MARK; for i in \$(seq 2000); do sh -c '$sleeper' & done; wait"
	# (depth 9: up to 1,023 shells and as many sleeps; the machine is shared)
	over "pids: a bounded exponential fork bomb" pids "${E[@]}" -- --pids 200 -- \
		bash -c "$MARK; f() { echo \$BASHPID >>\"\$PIDS\"; if [ \$1 -gt 0 ]; then f \$((\$1 - 1)) & f \$((\$1 - 1)) & fi; sleep 60; }; f 9"
	over "pids: 300 threads" pids "${E[@]}" -- --pids 100 -- \
		sh -c "$MARK; exec \"\$PY\" $T/bin/threads.py 300"

	# ---- cpu
	over "cpu: a busy loop" cpu "${E[@]}" -- --cpu 1 -- \
		sh -c "$MARK; $burn"
	over "cpu: four busy children" cpu "${E[@]}" -- --cpu 2s -- \
		sh -c "$MARK; for i in 1 2 3 4; do sh -c '$burn' & done; wait"
	over "cpu: short-lived burners, each reaped" cpu "${E[@]}" -- --cpu 2 -- \
		sh -c "$MARK; while :; do sh -c 'echo \$\$ >>\"\$PIDS\"; i=0; while [ \$i -lt 20000 ]; do i=\$((i + 1)); done'; done"
}

# Under its limits a command runs and commits; the workspace mounts again.
under() {
	lrun "$@" -- --timeout 60s --memory 1G --cpu 60 --pids 500 -- \
		sh -c 'echo $$ >>"$PIDS"; echo fine >fine.txt; sh -c "echo child" >/dev/null'
	if [ "$RC" = 0 ] && [ "$(jget action)" = committed ] && [ -z "$(limit_field name)" ] &&
		[ "$(cat "$WS/fine.txt" 2>/dev/null)" = fine ]; then
		ok "[$WHO$MODE] under the limits: exit 0, committed, \"limit\": null, the workspace mounted again"
	else
		fail "[$WHO$MODE] under the limits: exit $RC, action '$(jget action)', limit '$(limit_field name)'; stderr: $(printf '%s' "$ERR" | head -c 400)"
	fi
	check_unmounted "[$WHO$MODE] under the limits"
	rm -f "$WS/fine.txt"
}

policy_cases() {
	local before
	printf 'limit timeout 2s\nlimit pids 4096\n' >"$T/lim.policy"
	chmod 644 "$T/lim.policy"
	over "the policy's limit timeout 2s" timeout -- --policy "$T/lim.policy" -- \
		sh -c "$MARK; exec sleep 300"
	before=$(snap "$WS")
	lrun -- --policy "$T/lim.policy" --timeout none -- sh -c 'echo $$ >>"$PIDS"; sleep 3; echo late >late.txt'
	if [ "$RC" = 0 ] && [ "$(jget action)" = committed ] && [ -f "$WS/late.txt" ]; then
		ok "[$WHO] --timeout none lifts the policy's timeout: committed after 3 s"
	else
		fail "[$WHO] --timeout none over the policy: exit $RC, action '$(jget action)'; stderr: $(printf '%s' "$ERR" | head -c 300)"
	fi
	rm -f "$WS/late.txt"
	lrun -- --memory 2GB -- true
	if [ "$RC" = 2 ] && [[ "$ERR" == *"txfs: run: --memory: bad size '2GB': decimal units"* ]]; then
		ok "[$WHO] --memory 2GB: exit 2, $ERR"
	else
		fail "[$WHO] --memory 2GB: exit $RC: $ERR"
	fi
	lrun -- --timeout 5x -- true
	if [ "$RC" = 2 ] && [[ "$ERR" == *"--timeout: bad duration '5x'"* ]]; then
		ok "[$WHO] --timeout 5x: exit 2"
	else
		fail "[$WHO] --timeout 5x: exit $RC: $ERR"
	fi
	printf 'limit memory 10MB\n' >"$T/bad.policy"
	chmod 644 "$T/bad.policy"
	if txfs_as policy check "$T/bad.policy" 2>"$T/pc.err"; then
		fail "[$WHO] limit memory 10MB accepted"
	elif grep -q "bad.policy:1:16: decimal units" "$T/pc.err"; then
		ok "[$WHO] limit memory 10MB: FILE:LINE:COL: $(head -1 "$T/pc.err")"
	else
		fail "[$WHO] limit memory 10MB: $(cat "$T/pc.err")"
	fi
}

# txfs exec: the command past a limit is rolled back to its savepoint,
# the session and the commands before and after it stay.
exec_cases() {
	local before out rc name
	before=$(snap "$WS")
	txfs_as mount --state "$STATE" "$WS" >"$T/m.out" 2>&1 || { fail "[$WHO$MODE] txfs mount: $(cat "$T/m.out")"; return; }
	xrun() {
		SEQ=$((SEQ + 1))
		LPIDS=$PIDS_DIR/x$SEQ
		# (the mount is its owner's only: cd as that user)
		timeout -s KILL 90 "${AS[@]}" env -i PATH=/usr/bin:/bin HOME="$HOME_DECOY" \
			PIDS="$LPIDS" PY="$PY" "$@" \
			sh -c 'echo $$ >"$0"; cd "$1" && shift && exec "$@"' "$RUNS_DIR/x$SEQ" "$WS" \
			"$TXFS_BIN" exec --json "${XARGS[@]}" </dev/null >"$T/x.out" 2>"$T/x.err"
		rc=$?
		END_UP=$(cut -d' ' -f1 /proc/uptime)
		OUT=$(cat "$T/x.out")
	}
	XARGS=(-- sh -c 'echo kept1 >kept1.txt')
	xrun "${E[@]}"
	[ "$rc" = 0 ] && ok "[$WHO$MODE] exec: a command under the limits is kept" ||
		fail "[$WHO$MODE] exec: first command: exit $rc: $(head -c 300 "$T/x.err")"
	for c in "timeout:--timeout 2s:exec sleep 300" \
		"memory:--memory 64M:exec \"\$PY\" $T/bin/alloc.py 300" \
		"pids:--pids 50:for i in \$(seq 300); do sleep 60 & done; wait" \
		"cpu:--cpu 1:while :; do :; done"; do
		name=${c%%:*}
		local opt=${c#*:}
		local body=${opt#*:}
		opt=${opt%%:*}
		# shellcheck disable=SC2086
		XARGS=($opt -- sh -c "echo \$\$ >>\"\$PIDS\"; echo bad >bad-$name.txt; $body")
		xrun "${E[@]}"
		if [ "$rc" = 124 ] && [ "$(limit_field name)" = "$name" ] &&
			[ "$(jget outcome)" = rolled-back ] && ! as_run test -e "$WS/bad-$name.txt"; then
			ok "[$WHO$MODE] exec: $name: exit 124, limit $name (by $(limit_field by)), its change rolled back"
		else
			fail "[$WHO$MODE] exec: $name: exit $rc, limit '$(limit_field name)', outcome '$(jget outcome)'; $(head -c 300 "$T/x.err")"
		fi
		no_survivor "[$WHO$MODE] exec: $name"
	done
	XARGS=(-- sh -c 'echo kept2 >kept2.txt')
	xrun "${E[@]}"
	if [ "$rc" = 0 ] && as_run test -f "$WS/kept1.txt" && as_run test -f "$WS/kept2.txt"; then
		ok "[$WHO$MODE] exec: the session goes on: the commands before and after are kept"
	else
		fail "[$WHO$MODE] exec: after the limits: exit $rc: $(head -c 300 "$T/x.err")"
	fi
	txfs_as rollback "$WS" >/dev/null 2>&1 || fail "[$WHO$MODE] txfs rollback"
	txfs_as umount "$WS" >"$T/u.out" 2>&1 || fail "[$WHO$MODE] txfs umount: $(cat "$T/u.out")"
	check_unmounted "[$WHO$MODE] exec"
	no_cgroup_left "[$WHO$MODE] exec"
	check_snap "[$WHO$MODE] exec: the real directory is byte-identical" "$before" "$(snap "$WS")"
}

# As root where txfs makes cgroups: the empty cgroup of a run that died
# with SIGKILL (a txfs-run-PID of a pid that is gone) is swept by the
# next run.
sweep_case() {
	local dead=4000000 stale
	[ -n "$CG2" ] && [ "$(id -u)" = 0 ] && [ "$AS_TEST_USER" = 0 ] || return 0
	[ -w "$CG2" ] || return 0
	while [ -e "/proc/$dead" ]; do dead=$((dead + 1)); done
	stale=$CG2/txfs-run-$dead
	mkdir "$stale" 2>/dev/null || { echo "# no stale cgroup could be made in $CG2"; return 0; }
	# a run that uses its cgroup (a memory limit: without one no cgroup
	# is made, and none swept)
	lrun -- --memory 1G -- sh -c 'echo $$ >>"$PIDS"; true'
	if [ -d "$stale" ]; then
		rmdir "$stale"
		fail "[$WHO] the empty cgroup of a dead run ($stale) was not swept"
	else
		ok "[$WHO] the empty cgroup of a dead run was swept by the next run"
	fi
}

body() {
	local E
	ws_fixture
	sweep_case
	for MODE in "" " no-cgroup"; do
		if [ -n "$MODE" ]; then E=(TXFS_NO_CGROUP=1); else E=(); fi
		# the test user has no cgroup of its own here: one pass is the fallback
		[ "$AS_TEST_USER" = 1 ] && [ -n "$MODE" ] && continue
		cases "${E[@]}"
		under "${E[@]}"
		new_state
		exec_cases
		new_state
	done
	MODE=""
	policy_cases
}

for_each_user body
finish
