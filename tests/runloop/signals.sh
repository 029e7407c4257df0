#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# signals - SIGTERM or SIGINT to `txfs run` while CMD sleeps stops CMD (its
# whole process group), rolls back and unmounts: exit = CMD's status (143:
# txfs run stops CMD with SIGTERM; 130 is accepted for SIGINT too), the JSON action "rolled-back", nothing left mounted, the daemon gone, CMD's
# processes gone, the real directory byte-identical. A CMD that ignores
# SIGTERM is killed (txfs run escalates to SIGKILL after 5 s). As root and
# as the unprivileged test user. Only processes this scenario started are
# signalled, by pid.
. "$(dirname "$0")/lib.sh"

require_landlock

# run_pid (lib.sh): the pid of the topmost `txfs run` of $STATE.

# cmd_alive TAG: a process of CMD (its command line has TAG) still exists.
cmd_alive() {
	local p a
	for p in /proc/[0-9]*; do
		mapfile -d '' -t a 2>/dev/null <"$p/cmdline" || continue
		[[ "${a[*]}" == *"$1"* ]] && return 0
	done
	return 1
}

# stop_with SIG [IGNORE]: CMD changes the workspace, says it is ready, sleeps.
stop_with() {
	local sig=$1 ignore=${2:-} u=$WHO before tag pid ready i rc t0 secs
	ws_fixture
	before=$(snap "$WS")
	tag="txfs-runloop-sleeper-$$-$SEQ"
	ready=/tmp/$tag.ready
	rm -f "$ready"
	run_txfs --bg -- --json -- bash -c "${ignore:+trap '' TERM INT; }echo junk > junk.txt && rm a.txt && touch $ready && exec -a $tag sleep 120"
	for i in $(seq 300); do [ -e "$ready" ] && break; sleep 0.1; done
	pid=$(run_pid)
	if [ ! -e "$ready" ] || [ -z "$pid" ]; then
		fail "[$u] $sig: CMD never got ready (txfs run pid '${pid}'): $(head -c 300 "$RUN_ERR")"
		wait "$BG"
		return
	fi
	sleep 0.3
	is_mounted "$WS" && ok "[$u] $sig: mounted while CMD runs" || fail "[$u] $sig: not mounted while CMD runs"
	t0=$(date +%s.%N)
	kill -s "$sig" "$pid"
	wait "$BG"
	rc=$?
	secs=$(echo "$(date +%s.%N) - $t0" | bc)
	OUT=$(cat "$RUN_OUT") ERR=$(cat "$RUN_ERR") RC=$rc
	echo "# $sig${ignore:+ (ignored by CMD)}: txfs run ended ${secs}s after the signal"
	if [ -n "$ignore" ]; then
		check_rc "[$u] $sig ignored by CMD: killed (128+9)" 137
	elif [ "$sig" = INT ] && [ "$rc" = 143 ]; then
		# txfs run stops CMD's group with SIGTERM whatever it received
		ok "[$u] INT: exit 143, CMD's status (txfs run stops CMD with SIGTERM)"
	else
		check_rc "[$u] $sig: CMD's status 128+$(kill -l "$sig")" $((128 + $(kill -l "$sig")))
	fi
	check_action "[$u] $sig${ignore:+ ignored}" rolled-back
	check_unmounted "[$u] $sig${ignore:+ ignored}"
	if cmd_alive "$tag"; then fail "[$u] $sig: CMD's sleep is still running"; else ok "[$u] $sig: CMD's processes are gone"; fi
	check_snap "[$u] $sig: real directory byte-identical" "$before" "$(snap "$WS")"
	rm -f "$ready"
}

body() {
	stop_with TERM
	stop_with INT
	stop_with TERM ignore
}

for_each_user body
finish
