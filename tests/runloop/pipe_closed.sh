#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# pipe_closed - `txfs run` whose output pipe's reader goes away (`txfs run
# ... | head -1`, a harness that stops reading) must still end its loop:
# stop every process CMD started, end the transaction, unmount. An attack
# found it killed by SIGPIPE at its first veto note instead, leaving the
# command's processes running past --timeout, the workspace mounted with
# its transaction open, and a late write of a leftover process in it.
# Here: CMD prints a line, leaves a background writer that sleeps 40 s and
# then writes late.txt, and runs a copy (in /tmp) of a program the policy's
# exec deny refuses (txfs run's supervisor writes a note at once); its stdout and stderr go to a pipe whose reader
# exits after one line. Then, within 15 s: nothing is mounted at the
# workspace, no process of the run is alive (the writer included), the real
# directory is byte-identical (CMD failed: rolled back), and a next `txfs
# run` works. CMD itself still gets the default SIGPIPE (a `yes | head` in
# it ends). As root and as the unprivileged user.
. "$(dirname "$0")/lib.sh"

require_landlock

body() {
	local u=$WHO before i left marker
	ws_fixture
	mkdir -p "$WS/prot" && cp /bin/true "$WS/prot/tr" && as_owner "$WS/prot"
	printf 'exec deny prot/*\n' >"$T/ex$SEQ.policy"
	chmod 644 "$T/ex$SEQ.policy"
	before=$(snap "$WS")
	marker=txfs-pipe-$SEQ-$$
	# the reader takes one line and goes; the writer outlives it
	(cd / && timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" LC_ALL=C "$TXFS_BIN" run -C "$WS" --state "$STATE" \
		--policy "$T/ex$SEQ.policy" --timeout 5 -- sh -c '
			echo first
			(exec -a '"$marker"' sleep 40; echo late > late.txt) &
			cp prot/tr /tmp/'"$marker"'-tr && /tmp/'"$marker"'-tr
			./prot/tr
			yes | head -c 10 >/dev/null
			sleep 1; exit 3' 2>&1 </dev/null | head -1 >"$T/pipe$SEQ.out")
	check_eq "[$u] the reader got the first line" first "$(cat "$T/pipe$SEQ.out")"
	for i in $(seq 150); do
		! is_mounted "$WS" && ! pgrep -f "$marker" >/dev/null && break
		sleep 0.1
	done
	check_unmounted "[$u] after the reader left"
	left=$(pgrep -f "$marker" | tr '\n' ' ')
	check_eq "[$u] no process of the run is left (the 40 s writer)" "" "$left"
	[ -n "$left" ] && kill -9 $left 2>/dev/null
	rm -f "/tmp/$marker-tr"
	if is_mounted "$WS"; then
		txfs_as rollback "$WS" >/dev/null 2>&1
		txfs_as umount "$WS" >/dev/null 2>&1 || umount -l "$WS"
	fi
	check_snap "[$u] the real directory is byte-identical (CMD failed: rolled back)" \
		"$before" "$(snap "$WS")"
	run_txfs -- -- bash -c "echo ok > after.txt"
	check_rc "[$u] a next txfs run runs and commits" 0
	check_eq "[$u] its change is committed" ok "$(cat "$WS/after.txt" 2>&1)"
	check_unmounted "[$u] the next run"
	[ -e "$WS/late.txt" ] && fail "[$u] the leftover writer's late.txt reached the real directory" ||
		ok "[$u] no late.txt in the real directory"
}

for_each_user body
finish
