#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kept_layer - `txfs run` starts from a clean transaction (issue 23, 3): a
# change staged by an earlier session and kept in the state folder is never
# adopted. Five ways a layer is left kept:
#   mount:      txfs mount, a change, txfs umount;
#   keep:       txfs run --keep -- (a change), then txfs umount;
#   killed:     txfs mount, a change, the daemon SIGKILLed, its dead mount
#               detached with txfs umount;
#   stale:      the same, the dead mount left in place (txfs run cleans it);
#   run-killed: the daemon of a running `txfs run` SIGKILLed after its
#               command staged a change (that run fails and commits
#               nothing; it cleans its dead mount).
# In each case `txfs run -- false` and `txfs run -- true` both refuse (exit
# 125, CMD not run, the message names the commands to commit or roll the
# kept layer back), the real directory stays byte-identical (snap: names,
# modes, owners, sizes, mtimes, bytes), nothing is left mounted, the kept
# layer is intact (mounted again it shows the same change and content);
# once it is rolled back, `txfs run` runs and commits. As root and as the
# unprivileged user. About 2.5 s a user (5 s in all, plain build).
. "$(dirname "$0")/lib.sh"

require_landlock

# kill_daemon_wait WHAT: SIGKILL the daemon of $STATE, wait until it is gone.
kill_daemon_wait() {
	local pid i
	pid=$(daemon_pid)
	if [ -z "$pid" ]; then
		fail "$1: no live daemon in $STATE/daemon.pid"
		return 1
	fi
	kill -9 "$pid"
	for i in $(seq 100); do
		[ -z "$(daemon_pid)" ] && return 0
		sleep 0.1
	done
	fail "$1: daemon $pid still alive 10 s after SIGKILL"
	return 1
}

# stage_in_mount U: txfs mount $WS in place, stage one new file.
stage_in_mount() {
	txfs_as mount --state "$STATE" "$WS" >"$T/cmd.out" 2>&1 ||
		{ fail "[$1] txfs mount: $(cat "$T/cmd.out")"; return 1; }
	as_run bash -c "echo staged > '$WS/staged.txt'" || fail "[$1] a change in the mount"
	check_eq "[$1] the change is staged" "A staged.txt" "$(as_run cat "$WS/.txfs/changes")"
}

# keep_by HOW U: leave a layer kept in $STATE (one change: A staged.txt),
# nothing mounted at $WS afterwards except for HOW = stale.
keep_by() {
	local how=$1 u=$2 i
	case $how in
	mount)
		stage_in_mount "$u" || return 1
		txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/cmd.out")"
		;;
	keep)
		run_txfs -- --keep -- bash -c "echo staged > staged.txt"
		check_rc "[$u] txfs run --keep: the command ran" 0
		case $ERR in *"kept"*) ok "[$u] txfs run --keep: says kept" ;;
		*) fail "[$u] txfs run --keep: expected 'kept' on stderr got: $(head -c 300 <<<"$ERR")" ;; esac
		is_mounted "$WS" && ok "[$u] txfs run --keep: the workspace stays mounted" ||
			fail "[$u] txfs run --keep: the workspace is not mounted"
		check_eq "[$u] txfs run --keep: the change is staged" "A staged.txt" "$(as_run cat "$WS/.txfs/changes")"
		txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount after --keep: $(cat "$T/cmd.out")"
		;;
	killed | stale)
		stage_in_mount "$u" || return 1
		kill_daemon_wait "[$u] $how" || return 1
		is_mounted "$WS" && ok "[$u] $how: a dead mount is left at the workspace" ||
			fail "[$u] $how: expected a dead mount after SIGKILL of the daemon"
		if [ "$how" = killed ]; then
			txfs_as umount "$WS" >"$T/cmd.out" 2>&1 ||
				fail "[$u] txfs umount of the dead mount: $(cat "$T/cmd.out")"
			if is_mounted "$WS"; then
				fail "[$u] txfs umount left the dead mount: detached by hand"
				as_run fusermount3 -uz "$WS" 2>/dev/null || umount -l "$WS" 2>/dev/null
			else
				ok "[$u] killed: txfs umount detached the dead mount"
			fi
		fi
		;;
	run-killed)
		# the command stages its change, then reads it until the mount
		# dies (an open is always a request; a stat may be answered
		# from the kernel's cache), 30 s at most; exit 0: commit
		run_txfs --bg -- -- sh -c 'echo staged > staged.txt; i=0
			while cat staged.txt >/dev/null 2>&1 && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done; exit 0'
		for i in $(seq 300); do
			[ "$(as_run cat "$WS/staged.txt" 2>/dev/null)" = staged ] && break
			sleep 0.1
		done
		[ "$(as_run cat "$WS/staged.txt" 2>/dev/null)" = staged ] ||
			{ fail "[$u] run-killed: the command's change never showed"; wait "$BG"; return 1; }
		kill_daemon_wait "[$u] run-killed" || { wait "$BG"; return 1; }
		wait "$BG"
		RC=$?
		ERR=$(grep -v 'has its current directory in' "$RUN_ERR")
		[ "$RC" != 0 ] && [ "$RC" != 124 ] && [ "$RC" != 137 ] &&
			ok "[$u] run-killed: that txfs run failed (exit $RC: $(tr '\n' ' ' <<<"$ERR" | head -c 200))" ||
			fail "[$u] run-killed: expected that txfs run to fail got exit $RC: $(head -c 300 <<<"$ERR")"
		grep "run: commit-failed: the daemon of .* does not answer" <<<"$ERR" >/dev/null &&
			grep "txfs recover $STATE" <<<"$ERR" >/dev/null &&
			ok "[$u] run-killed: it says the daemon does not answer and how to recover" ||
			fail "[$u] run-killed: expected 'commit-failed: the daemon ... does not answer' and 'txfs recover $STATE', got: $(head -c 300 <<<"$ERR")"
		check_unmounted "[$u] run-killed: the run's dead mount"
		;;
	esac
}

# run_txfs_c ARGS...: run_txfs, but from $WS's parent with -C $WS (a dead
# mount at $WS: the cd of run_txfs fails there for another user than its
# owner, root included)
run_txfs_c() {
	SEQ=$((SEQ + 1))
	RUN_OUT=$T/run$SEQ.out RUN_ERR=$T/run$SEQ.err
	(cd "$(dirname "$WS")" && exec timeout -k 5 "$RUN_SECS" "${AS[@]}" env -i \
		PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
		"$TXFS_BIN" run -C "$WS" --state "$STATE" "$@") </dev/null >"$RUN_OUT" 2>"$RUN_ERR"
	RC=$?
	OUT=$(cat "$RUN_OUT")
	ERR=$(grep -v 'has its current directory in' "$RUN_ERR")
	[ $RC = 124 ] || [ $RC = 137 ] && fail "timeout: txfs run -C $WS $* did not finish within ${RUN_SECS}s"
	return 0
}

body_how() {
	local how=$1 u="$WHO $1" before
	ws_fixture
	before=$(snap "$WS")
	keep_by "$how" "$u" || return
	if [ "$how" != stale ]; then
		check_snap "[$u] the real directory is unchanged by the session that kept the layer" "$before" "$(snap "$WS")"
	fi

	for cmd in false true; do
		if [ "$how" = stale ]; then
			# the dead mount answers no one (and refuses a cd by
			# another user): txfs run -C from the parent folder
			run_txfs_c -- bash -c "touch ran-$cmd; $cmd"
		else
			run_txfs -- -- bash -c "touch ran-$cmd; $cmd"
		fi
		check_rc "[$u] run -- $cmd with a kept layer: refused" 125
		case $ERR in
		*"kept staged by an earlier mount (1 staged change)"*"txfs mount --state $STATE $WS"*"txfs commit $WS"*"txfs rollback $WS"*)
			ok "[$u] run -- $cmd: the message says why and how to commit or roll back" ;;
		*) fail "[$u] run -- $cmd: the message: $ERR" ;;
		esac
		case $ERR in *": No such file"* | *": Input/output"* | *": Success"*) fail "[$u] run -- $cmd: an errno suffix: $ERR" ;; esac
		check_unmounted "[$u] run -- $cmd refused"
		check_snap "[$u] run -- $cmd refused: the real directory is byte-identical (CMD did not run)" "$before" "$(snap "$WS")"
	done

	txfs_as mount --state "$STATE" "$WS" >"$T/cmd.out" 2>&1 ||
		{ fail "[$u] txfs mount again: $(cat "$T/cmd.out")"; return; }
	check_eq "[$u] the kept layer is intact" "A staged.txt" "$(as_run cat "$WS/.txfs/changes")"
	check_eq "[$u] and shows its content" staged "$(as_run cat "$WS/staged.txt")"
	txfs_as rollback "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs rollback: $(cat "$T/cmd.out")"
	txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/cmd.out")"
	check_snap "[$u] rolled back: the real directory is byte-identical" "$before" "$(snap "$WS")"
	run_txfs -- -- bash -c "echo ok > after.txt"
	check_rc "[$u] rolled back: run -- ... runs and commits" 0
	check_eq "[$u] its change is committed" ok "$(cat "$WS/after.txt" 2>&1)"
	[ -e "$WS/staged.txt" ] && fail "[$u] the rolled-back change reached the real directory" ||
		ok "[$u] the rolled-back change is not in the real directory"
	check_unmounted "[$u] the last run"
}

body() {
	local how
	for how in mount keep killed stale run-killed; do
		body_how "$how"
	done
}

for_each_user body
finish
