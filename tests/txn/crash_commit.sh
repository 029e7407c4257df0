#!/bin/bash
# Crash at every step of a commit: for a mixed change set (new, modified,
# deleted files, a deleted folder, a renamed and two swapped folders, a hard
# link, a symlink), TXFS_FAULT=commit:N kills the daemon (_exit 99) at its
# Nth fault point, for N = 1, 2, ... until a commit completes. After each
# crash the mount point is dead (ENOTCONN); recovery (odd N: `txfs recover
# STATE` then mount; even N: mounting directly) must leave the real
# directory exactly as before or exactly as committed, say which, and:
# before -> the layer is intact and a plain commit then succeeds; after ->
# the mount shows the committed tree, nothing staged. Once past the commit
# point, every later crash must also end "after". (TXFS_CRASH_STRIDE, set
# by tests/run for its ASan and noopen passes, samples the points past the
# commit point: txnlib.sh.)
. "$(dirname "$0")/txnlib.sh"
crash_default
crash_stride_note
N=1 nb=0 na=0 first_after=0 last_before=0
while :; do
	crash_point_runs $N $first_after || { N=$((N + 1)); continue; }
	crash_setup
	crash_stage "commit:$N" || exit 1
	r=$(ctl_errno --mnt "$M" commit)
	# a fault ends the daemon and fails the write (ECONNABORTED):
	# crash_wait_dead below waits for it; after an OK, 50 ms for a
	# fault after the answer
	[ "$r" = OK ] && sleep 0.05
	if [ "$r" = OK ] && [ -n "$(daemon_pid "$S")" ]; then
		check_eq "commit:$N fires no fault: the commit completes" OK "$r"
		txfs_umount "$M" "$S" || force_detach "$M" "$S"
		crash_classify "commit:$N (no fault left)"
		check_eq "the completed commit gives the after tree" after "$CLASS"
		break
	fi
	crash_wait_dead || { fail "commit:$N: daemon still alive"; exit 1; }
	grep -q "fault injection: stopping at commit step $N\$" "$S/daemon.log" ||
		fail "commit:$N: the daemon died, but not at the injected fault: $(tail -3 "$S/daemon.log" | tr '\n' ' ')"
	e=$(errno_of listdir "$M")
	[ "$e" = ENOTCONN ] || fail "commit:$N: after the crash, listing the mount point: expected ENOTCONN got '$e'"
	how=mount
	[ $((N % 2)) = 1 ] && how=tool
	crash_recover_check "$how" "commit:$N ($how)"
	echo "# commit:$N: ctl write -> $r; recovered by $how -> $CLASS"
	case $CLASS in
	before)
		nb=$((nb + 1)); last_before=$N
		[ $first_after != 0 ] && fail "commit:$N: 'before' after the commit point was already passed at N=$first_after"
		;;
	after)
		na=$((na + 1)); [ $first_after = 0 ] && first_after=$N ;;
	esac
	N=$((N + 1))
	[ $N -gt 400 ] && { fail "more than 400 fault points: the commit never completes"; break; }
	crash_done
done
stale_report
echo "# crash points: $((N - 1))$([ "$CRASH_STRIDE" -gt 1 ] && echo " at most, $((nb + na)) of them crashed") ($nb ended before the commit, $na after it; commit point at N=$first_after)"
[ $nb -gt 0 ] && ok "$nb crash points before the commit point, each ended exactly 'before'" ||
	fail "no crash point ended 'before' (expected the staged files and the journal to come first)"
[ $na -gt 0 ] && ok "$na crash points at or after the commit point, each ended exactly 'after'" ||
	fail "no crash point ended 'after'"
txn_finish
