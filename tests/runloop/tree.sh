#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tree - no process started by CMD outlives `txfs run` (issue 9, points 1
# and 2), as root and as the unprivileged test user:
#   - a setsid child that writes after CMD exited: stopped before the
#     commit ("stopped" >= 1 in the report), its file is neither in this
#     commit nor in the next `txfs run -- true`, and it is gone;
#   - the --check bypass: a setsid child connects to STATE/ctl.sock, stays
#     silent, then writes `bad` once --check has passed: `bad` is never
#     committed and the run does not wait for the silent client;
#   - a double fork (reparented orphan) that loops: stopped, gone;
#   - a fleeing chain (each process forks and exits at once, for at most
#     10 s): stopped, gone;
#   - six fleeing chains at once, without the cgroup (TXFS_NO_CGROUP=1, as
#     for a user with no delegated cgroup) and with the other core busy:
#     the command's process group is killed at once (a walk of /proc alone
#     lost this race on a loaded machine), so the run commits at once;
#   - SIGTERM to txfs run while CMD runs: CMD's setsid child is gone too.
# Only processes this scenario started are signalled, by pid.
. "$(dirname "$0")/lib.sh"

require_landlock

# proc_alive TAG: a process whose command line has TAG exists.
# (read with builtins, see run_pid)
proc_alive() {
	local p a
	for p in /proc/[0-9]*; do
		mapfile -d '' -t a 2>/dev/null <"$p/cmdline" || continue
		[[ "${a[*]}" == *"$1"* ]] && return 0
	done
	return 1
}

# run_pid (lib.sh): the pid of the topmost `txfs run` of $STATE.

# kill_tagged: with a txfs run that does not stop them (an old one), the
# processes of this scenario (tag ...-$$-) would run on: SIGKILL them.
kill_tagged() {
	local p a
	for p in /proc/[0-9]*; do
		mapfile -d '' -t a 2>/dev/null <"$p/cmdline" || continue
		[[ "${a[*]}" == *"-$$-"* && "${a[*]}" == *txfs-tree-* ]] && kill -9 "${p#/proc/}" 2>/dev/null
	done
}
trap 'rc=$?; kill_tagged; (exit $rc); runloop_cleanup' EXIT

check_stopped() { # WHAT MIN
	local n
	n=$(jget stopped)
	if [[ "$n" =~ ^[0-9]+$ ]] && [ "$n" -ge "$2" ]; then
		ok "$1: the report says $n process(es) stopped"
	else
		fail "$1: expected \"stopped\" >= $2 in the JSON report got '$n': $(printf '%s' "$OUT" | head -c 300)"
	fi
}

check_gone() { # WHAT TAG
	local i
	for i in $(seq 20); do proc_alive "$2" || break; sleep 0.1; done
	if proc_alive "$2"; then fail "$1: a process of CMD is still running"; else ok "$1: CMD's processes are gone"; fi
}

cat >"$T/stall.py" <<'PYEOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
try:
    s.connect(sys.argv[1])
except OSError:
    pass  # the state folder is hidden from the command: it stalls alone
time.sleep(3)
open("bad", "w").write("bad\n")
time.sleep(0.5)
s.close()
PYEOF
chmod 644 "$T/stall.py"

late_writer() {
	local u=$WHO before tag="txfs-tree-late-$$-$SEQ"
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json -- sh -c "setsid sh -c 'sleep 2; echo late > late # $tag' >/dev/null 2>&1 </dev/null &"
	check_rc "[$u] setsid late writer: run" 0
	check_action "[$u] setsid late writer" committed
	check_stopped "[$u] setsid late writer" 1
	check_gone "[$u] setsid late writer" "$tag"
	sleep 2.5
	[ -e "$WS/late" ] && fail "[$u] setsid late writer: late reached the real directory" ||
		ok "[$u] setsid late writer: late not in the real directory"
	run_txfs -- --json -- true
	check_action "[$u] the next run -- true" committed
	[ -e "$WS/late" ] && fail "[$u] the next run committed late" || ok "[$u] the next run did not commit late"
	check_snap "[$u] real directory byte-identical after both runs" "$before" "$(snap "$WS")"
	check_unmounted "[$u] setsid late writer"
}

stalled_socket() {
	local u=$WHO before secs
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json --check 'test ! -e bad' -- sh -c "setsid $PY $T/stall.py $STATE/ctl.sock >/dev/null 2>&1 </dev/null &"
	check_rc "[$u] stalled ctl.sock client: run" 0
	check_action "[$u] stalled ctl.sock client" committed
	check_stopped "[$u] stalled ctl.sock client" 1
	secs=$(jget seconds)
	echo "# [$u] stalled ctl.sock client: txfs run took ${secs}s (the client sleeps 3 s)"
	if [ -n "$secs" ] && [ "$(echo "$secs < 2.5" | bc)" = 1 ]; then
		ok "[$u] the silent client did not slow the run (${secs}s)"
	else
		fail "[$u] the silent client slowed the run: expected < 2.5 s got '${secs}'"
	fi
	sleep 3.5
	[ -e "$WS/bad" ] && fail "[$u] stalled ctl.sock client: bad was committed" || ok "[$u] bad was not committed"
	check_snap "[$u] stalled ctl.sock client: real directory byte-identical" "$before" "$(snap "$WS")"
	check_unmounted "[$u] stalled ctl.sock client"
}

double_fork() {
	local u=$WHO tag="txfs-tree-orphan-$$-$SEQ"
	ws_fixture
	run_txfs -- --json -- sh -c "(sh -c 'while :; do sleep 0.1; done # $tag' </dev/null >/dev/null 2>&1 &) ; exit 0"
	check_action "[$u] double fork" committed
	check_stopped "[$u] double fork" 1
	check_gone "[$u] double fork" "$tag"
	# the plain-text report says it too
	run_txfs -- -- sh -c "(setsid sleep 30 </dev/null >/dev/null 2>&1 &) ; exit 0"
	if grep -q 'txfs: run: stopped [0-9]* process' <<<"$ERR"; then ok "[$u] text report: stopped"; else
		fail "[$u] text report: expected 'txfs: run: stopped N process...' got: $(head -c 300 <<<"$ERR")"; fi
	check_unmounted "[$u] double fork"
}

fleeing_chain() {
	local u=$WHO tag="txfs-tree-flee-$$-$SEQ"
	ws_fixture
	run_txfs -- --json -- "$PY" -c 'import os, sys, time
end = time.time() + 10     # bounded: an old txfs run leaves it running
while time.time() < end:
    if os.fork():
        os._exit(0)' "$tag"
	check_action "[$u] fleeing chain" committed
	check_stopped "[$u] fleeing chain" 1
	check_gone "[$u] fleeing chain" "$tag"
	check_unmounted "[$u] fleeing chain"
}

fleeing_chains() {
	local u=$WHO tag="txfs-tree-flee6-$$-$SEQ" burn secs
	ws_fixture
	"$PY" -c 'import time
end = time.time() + 8
while time.time() < end: pass' & burn=$!
	run_txfs TXFS_NO_CGROUP=1 -- --json -- "$PY" -c 'import os, sys, time
end = time.time() + 10     # bounded: an old txfs run leaves it running
for _ in range(5):
    if os.fork() == 0:
        break
while time.time() < end:
    if os.fork():
        os._exit(0)' "$tag"
	kill "$burn" 2>/dev/null; wait "$burn" 2>/dev/null
	check_action "[$u] six fleeing chains, no cgroup" committed
	check_stopped "[$u] six fleeing chains, no cgroup" 1
	secs=$(jget seconds)
	if "$PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) < 8 else 1)' "${secs:-99}"; then
		ok "[$u] six fleeing chains: stopped before they ran out (${secs} s)"
	else
		fail "[$u] six fleeing chains: the run took ${secs} s (the chains end on their own at 10 s)"
	fi
	check_gone "[$u] six fleeing chains" "$tag"
	check_unmounted "[$u] six fleeing chains"
}

sigterm_tree() {
	local u=$WHO tag="txfs-tree-term-$$-$SEQ" ready pid i
	ws_fixture
	ready=/tmp/$tag.ready
	rm -f "$ready"
	run_txfs --bg -- --json -- sh -c "setsid sh -c 'sleep 100 # $tag' </dev/null >/dev/null 2>&1 & touch $ready; exec sleep 120"
	for i in $(seq 300); do [ -e "$ready" ] && break; sleep 0.1; done
	pid=$(run_pid)
	if [ -z "$pid" ] || [ ! -e "$ready" ]; then
		fail "[$u] SIGTERM: CMD never got ready: $(head -c 300 "$RUN_ERR")"
		wait "$BG"
		return
	fi
	sleep 0.3
	kill -TERM "$pid"
	wait "$BG"
	OUT=$(cat "$RUN_OUT")
	check_action "[$u] SIGTERM" rolled-back
	check_stopped "[$u] SIGTERM" 1
	check_gone "[$u] SIGTERM" "$tag"
	check_unmounted "[$u] SIGTERM"
	rm -f "$ready"
}

body() {
	late_writer
	stalled_socket
	double_fork
	fleeing_chain
	fleeing_chains
	sigterm_tree
}

for_each_user body
finish
