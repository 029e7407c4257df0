#!/bin/bash
# A second crash during recovery: the commit of the mixed change set is
# killed at or after its commit point (TXFS_FAULT=commit:N), then the
# recovery itself is killed at its Mth step (TXFS_FAULT=recover:M, in the
# environment of `txfs recover` or of `txfs mount`, alternately), then a
# clean recovery (the other way) must still complete the commit exactly:
# the real directory is the committed tree, the mount shows it, nothing is
# staged. N: the commit point, the middle and the last apply step; M: every
# step for the first (with TXFS_CRASH_STRIDE, 1, 2 and a stride: txnlib.sh),
# a few for the others.
. "$(dirname "$0")/txnlib.sh"
crash_default
# The commit point: the first N whose crash recovers to "after".
cp=0
for N in $(seq 1 60); do
	crash_commit_dies "commit:$N"
	r=$?
	[ $r = 2 ] && exit 1
	[ $r != 0 ] && { fail "commit:$N did not crash before the commit point was found"; exit 1; }
	crash_wait_dead
	crash_recover_check mount "commit:$N (finding the commit point)"
	[ "$CLASS" = after ] && { cp=$N; break; }
	[ "$CLASS" = before ] || { fail "commit:$N: recovery ended '$CLASS'"; exit 1; }
done
[ $cp != 0 ] || { fail "no commit point found within 60 fault points"; exit 1; }
echo "# the commit point is fault point $cp"

# recover_faulted HOW M: a recovery by HOW with TXFS_FAULT=recover:M; sets
# FIRED=1 if it was stopped by the fault, 0 if it completed.
recover_faulted() {
	local how=$1 m=$2
	FIRED=0
	if [ "$how" = tool ]; then
		export TXFS_FAULT=recover:$m
		cli_run recover "$S"
		unset TXFS_FAULT
		if [ "$CRC" = 99 ]; then
			FIRED=1
			return 0
		fi
		if [ "$CRC" = 0 ]; then
			return 0
		fi
		fail "txfs recover with recover:$m: expected exit 99 (stopped) or 0 (done) got $CRC: $CERR (trying by mount)"
	fi
	crash_mount "recover:$m" --expect-fail
	if [ "$RC" = 0 ] && is_mounted "$M" && [ -n "$(daemon_pid "$S")" ]; then
		txfs_umount "$M" "$S" || force_detach "$M" "$S"
		return 0
	fi
	FIRED=1
	grep -q "fault injection: stopping at recover step $m\$" <<<"$ERR$(cat "$S/daemon.log" 2>/dev/null)" ||
		fail "mount with recover:$m failed, but not at the injected fault: $ERR"
	crash_wait_dead
	while is_mounted "$M" && [ "$(errno_of listdir "$M")" = ENOTCONN ]; do
		timeout 10 fusermount3 -uz "$M" || break
	done
}

total=0
run_case() {
	local n=$1 m=$2 how=$3 other=tool
	[ "$how" = tool ] && other=mount
	crash_commit_dies "commit:$n"
	local r=$?
	[ $r = 2 ] && return 1
	[ $r != 0 ] && { fail "commit:$n: no crash"; force_detach "$M" "$S"; return 1; }
	crash_wait_dead
	# The dead mount goes first, so that txfs recover can work.
	while is_mounted "$M"; do timeout 10 fusermount3 -uz "$M" || break; done
	recover_faulted "$how" "$m"
	# M past the last step: the first recovery completed, so the second
	# has nothing left to recover (and says so)
	CRASH_NOTHING_OK=$((1 - FIRED)) \
		crash_recover_check "$other" "commit:$n, recover:$m by $how, then by $other"
	echo "# commit:$n then recover:$m by $how (stopped: $FIRED), then recovered by $other -> $CLASS"
	[ "$CLASS" = after ] || fail "commit:$n, recover:$m: expected the committed tree at the end, got '$CLASS'"
	total=$((total + FIRED))
	LAST_FIRED=$FIRED
	crash_done
}

# Every recovery step, after a crash right at the commit point.
crash_stride_note
nsteps=0
for m in $(seq 1 200); do
	crash_point_runs $m 1 || continue
	how=mount; [ $((m % 2)) = 1 ] && how=tool
	run_case "$cp" "$m" "$how" || exit 1
	[ "$LAST_FIRED" = 0 ] && break
	nsteps=$m
done
echo "# recovery has $nsteps steps"
[ $nsteps -gt 0 ] || fail "TXFS_FAULT=recover:1 never stopped a recovery"
for n in $((cp + nsteps / 2)) $((cp + nsteps)); do
	for m in 1 2 $((nsteps / 2)) $nsteps; do
		how=mount; [ $((m % 2)) = 1 ] && how=tool
		run_case "$n" "$m" "$how" || exit 1
	done
done
stale_report
echo "# recoveries stopped by a second fault: $total"
[ $total -gt 0 ] && ok "$total recoveries stopped by a fault, each completed by the next recovery"
txn_finish
