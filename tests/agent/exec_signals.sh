#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_signals - txfs exec stopped from outside, as root and as the test
# user: SIGTERM (and SIGINT) to txfs exec kill its command's whole tree and
# roll the command back (the JSON report says rolled-back, the file it
# wrote is gone, no process of it is left); SIGKILL to txfs exec takes its
# command's top process down too (PR_SET_PDEATHSIG; the descendants of a
# SIGKILLed txfs exec are not covered: documented, cli/sandbox/proctree.c's job). A process inside the command cannot
# start a nested txfs exec (the daemon refuses confined peers: 125). Two
# txfs exec at once run one after the other.
. "$(dirname "$0")/lib.sh"

require_landlock

# the pid of the txfs exec whose command line holds TAG
exec_pid() {
	local p
	for p in $(pgrep -f "exec --json -- sh -c .*$1"); do
		[ "$(cat "/proc/$p/comm" 2>/dev/null)" = txfs ] && { echo "$p"; return; }
	done
}

body() {
	local u=$WHO sig pid i tag log
	git_ws
	mount_ws
	local pre
	for sig in TERM INT KILL; do
		tag="mark-$sig-$$-$SEQ"	# $$: not another pass's test at the same time
		pre=
		[ "$sig" = KILL ] && pre=exec
		ag_exec_bg() {
			timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
				HOME="$HOME_DECOY" LC_ALL=C ASAN_OPTIONS="$ASAN_OPTIONS" \
				UBSAN_OPTIONS="$UBSAN_OPTIONS" sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
				"$TXFS_BIN" exec --json -- sh -c "echo x > $tag.txt; $pre $SLEEPER 300; $SLEEPER 301 # $tag" \
				</dev/null >"$T/sig.out" 2>"$T/sig.err" &
			BG_PIDS+=("$!")
		}
		ag_exec_bg
		for i in $(seq 100); do as_run test -e "$WS/$tag.txt" && break; sleep 0.1; done
		pid=$(exec_pid "$tag")
		[ -n "$pid" ] || { fail "[$u] SIG$sig: txfs exec not found"; continue; }
		kill -"$sig" "$pid"
		for i in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		for i in $(seq 50); do pgrep -f "$SLEEPER" >/dev/null || break; sleep 0.1; done
		if pgrep -f "$SLEEPER" >/dev/null; then
			fail "[$u] SIG$sig: the command outlived txfs exec"
			pkill -KILL -f "$SLEEPER"
		else
			ok "[$u] SIG$sig: the command's processes are gone"
		fi
		if [ "$sig" = KILL ]; then
			# .txfs/ctl no longer says "running" once it is gone
			grep -E '^txfs exec: command [0-9]+: txfs exec ended without finishing it \(killed\?\); its changes stay staged since savepoint cmd-[0-9]+' \
				<<<"$(as_run cat "$WS/.txfs/ctl")" >/dev/null &&
				ok "[$u] SIGKILL: .txfs/ctl says txfs exec ended without finishing the command" ||
				fail "[$u] SIGKILL: .txfs/ctl reads: $(as_run cat "$WS/.txfs/ctl")"
		fi
		if [ "$sig" != KILL ]; then
			OUT=$(tail -n 1 "$T/sig.out")
			check_eq "[$u] SIG$sig: rolled back" rolled-back "$(jget outcome)"
			as_run test -e "$WS/$tag.txt" && fail "[$u] SIG$sig: $tag.txt survived" ||
				ok "[$u] SIG$sig: its change was rolled back"
		fi
	done
	# (an ASan build: LeakSanitizer needs ptrace, which the confinement
	# denies; it would abort at exit)
	# two commands at once: the second waits for the first (whose rollback
	# would otherwise discard the second's change too)
	timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
		"$TXFS_BIN" exec -- sh -c "echo a > first.txt; $SLEEPER 2; exit 1" </dev/null >/dev/null 2>&1 &
	BG_PIDS+=("$!")
	for i in $(seq 100); do as_run test -e "$WS/first.txt" && break; sleep 0.1; done
	ag_exec -- sh -c 'echo b > second.txt'
	check_eq "[$u] concurrent: the second command kept" kept "$(jget outcome)"
	wait "${BG_PIDS[-1]}"
	as_run test -e "$WS/second.txt" && ! as_run test -e "$WS/first.txt" &&
		ok "[$u] concurrent: the first rolled back, the second's change survived" ||
		fail "[$u] concurrent: first.txt/second.txt wrong"

	ag_exec -- sh -c 'export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		"$0" exec -- sh -c "echo n > nested.txt"; echo "nested=$?"' "$TXFS_BIN"
	check_eq "[$u] nested txfs exec from a confined command: refused (125)" "nested=125" "$CMDOUT"
	as_run test -e "$WS/nested.txt" && fail "[$u] nested.txt written" || ok "[$u] nothing written by the nested exec"
	# the log: the SIGKILLed command (never ended) is "unfinished" once
	# others began; after a full rollback the kept ones are "discarded",
	# and so is status.json's last_command
	log=$(as_run "$TXFS_BIN" log "$WS" 2>&1)
	grep -A1 "mark-KILL-$$" <<<"$log" | grep '^  unfinished, exit -' >/dev/null &&
		ok "[$u] txfs log: the SIGKILLed command is unfinished, not running" ||
		fail "[$u] txfs log after the SIGKILL: $(head -c 1500 <<<"$log")"
	as_run "$TXFS_BIN" rollback "$WS" >/dev/null 2>&1 || fail "[$u] txfs rollback failed"
	log=$(as_run "$TXFS_BIN" log "$WS" 2>&1)
	grep -E '^  (kept|running|unfinished),' <<<"$log" >/dev/null &&
		fail "[$u] txfs log after a full rollback still shows a staged command: $(head -c 1500 <<<"$log")" ||
		ok "[$u] txfs log after a full rollback: no command kept, running or unfinished"
	grep -A1 'second.txt' <<<"$log" | grep '^  discarded, exit 0' >/dev/null &&
		ok "[$u] txfs log: the kept command is discarded by the full rollback" ||
		fail "[$u] txfs log: the kept command after a full rollback: $(head -c 1500 <<<"$log")"
	grep '"last_command":{[^}]*"outcome":"discarded"' <<<"$(as_run cat "$WS/.txfs/status.json")" >/dev/null &&
		ok "[$u] status.json: last_command discarded" ||
		fail "[$u] status.json after a full rollback: $(as_run cat "$WS/.txfs/status.json" | head -c 400)"
	# a command committed, then a full rollback: it stays kept (it is in
	# the real directory), in the log and in status.json
	ag_exec -- sh -c 'echo c > committed.txt'
	as_run "$TXFS_BIN" commit "$WS" >/dev/null 2>&1 || fail "[$u] txfs commit failed"
	as_run "$TXFS_BIN" rollback "$WS" >/dev/null 2>&1 || fail "[$u] txfs rollback failed"
	log=$(as_run "$TXFS_BIN" log "$WS" 2>&1)
	grep -A1 'committed.txt' <<<"$log" | grep '^  kept, exit 0' >/dev/null &&
		grep '"last_command":{[^}]*"outcome":"kept"' <<<"$(as_run cat "$WS/.txfs/status.json")" >/dev/null &&
		ok "[$u] a committed command stays kept after a later full rollback (log, status.json)" ||
		fail "[$u] committed, then rolled back: $(grep -A1 'committed.txt' <<<"$log" | tail -1); $(as_run cat "$WS/.txfs/status.json" | head -c 400)"
	# a rollback to a savepoint taken before a command undoes it
	as_run "$TXFS_BIN" savepoint "$WS" before-sp >/dev/null 2>&1 || fail "[$u] savepoint failed"
	ag_exec -- sh -c 'echo s > after-sp.txt'
	as_run "$TXFS_BIN" rollback "$WS" before-sp >/dev/null 2>&1 || fail "[$u] rollback before-sp failed"
	log=$(as_run "$TXFS_BIN" log "$WS" 2>&1)
	grep -A1 'after-sp.txt' <<<"$log" | grep '^  undone, exit 0' >/dev/null &&
		grep '"last_command":{[^}]*"outcome":"undone"' <<<"$(as_run cat "$WS/.txfs/status.json")" >/dev/null &&
		! as_run test -e "$WS/after-sp.txt" &&
		ok "[$u] a rollback to a savepoint taken before a command: undone (log, status.json)" ||
		fail "[$u] rollback to before-sp: $(grep -A1 'after-sp.txt' <<<"$log" | tail -1); $(as_run cat "$WS/.txfs/status.json" | head -c 400)"
	umount_ws
	check_unmounted "[$u] exec_signals"
}

for_each_user body
finish
