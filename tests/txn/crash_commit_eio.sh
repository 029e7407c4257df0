#!/bin/bash
# An I/O error at every step of a commit: TXFS_FAULT=commit-eio:N makes the
# Nth fault point of the commit fail with EIO (the daemon lives on), for N =
# 1 .. the number of fault points + 1 (counted first with commit:N). Before
# the commit point the ctl write fails with EIO, the real directory is
# byte-identical, the layer is intact (the mount shows the staged tree) and
# a plain commit then succeeds; at or after it the daemon completes the
# commit itself (the write succeeds, the real directory is the committed
# tree, nothing is staged). Never anything in between.
. "$(dirname "$0")/txnlib.sh"
crash_default
crash_count_points || exit 1
echo "# a commit of the change set has $NPOINTS fault points"
crash_stride_note
nb=0 na=0 first_ok=0
for N in $(seq 1 $((NPOINTS + 1))); do
	# (the last, past every fault point, always)
	crash_point_runs $N $first_ok || [ $N = $((NPOINTS + 1)) ] || continue
	crash_setup
	crash_stage "commit-eio:$N" || exit 1
	r=$(ctl_errno --mnt "$M" commit)
	if [ -z "$(daemon_pid "$S")" ]; then
		fail "commit-eio:$N: the daemon died (an I/O error must not kill it): $(tail -3 "$S/daemon.log" | tr '\n' ' ')"
		force_detach "$M" "$S"
		continue
	fi
	crash_classify "commit-eio:$N, right after the failed step"
	echo "# commit-eio:$N: ctl write -> $r; real tree -> $CLASS"
	case $r:$CLASS in
	EIO:before)
		nb=$((nb + 1))
		[ $first_ok != 0 ] && fail "commit-eio:$N: EIO after the commit point was already passed at N=$first_ok"
		case $(ctl_text "$M") in
		*"Input/output error"*) ;;
		*) fail "commit-eio:$N: ctl should say the commit failed with an I/O error, got: $(ctl_text "$M")" ;;
		esac
		check_lst_quiet "commit-eio:$N: after the failed commit the mount still shows the staged tree" "$M" "$T/after.lst"
		[ -n "$(t 30 cat "$M/$CTL/changes")" ] || fail "commit-eio:$N: nothing staged any more after the failed commit (layer lost)"
		r2=$(ctl_errno --mnt "$M" commit)
		[ "$r2" = OK ] || fail "commit-eio:$N: a plain commit after the failed one: expected OK got $r2 ($(ctl_text "$M"))"
		;;
	OK:after)
		na=$((na + 1)); [ $first_ok = 0 ] && first_ok=$N
		check_lst_quiet "commit-eio:$N: the mount shows the committed tree" "$M" "$T/after.lst"
		c=$(t 30 cat "$M/$CTL/changes")
		[ -z "$c" ] || fail "commit-eio:$N: committed, but still staged: $(head -c 200 <<<"$c")"
		;;
	*)
		fail "commit-eio:$N: expected (EIO and the real tree before) or (OK and after), got $r and $CLASS ($(ctl_text "$M" | head -3 | tr '\n' ' '))"
		;;
	esac
	txfs_umount "$M" "$S" || force_detach "$M" "$S"
	crash_classify "commit-eio:$N, at the end"
	[ "$CLASS" = after ] || fail "commit-eio:$N: at the end the real tree is '$CLASS', expected after"
	[ "$N" = $((NPOINTS + 1)) ] && check_eq "commit-eio:$N (past the last fault point): the commit just works" OK "$r"
	crash_done
done
echo "# I/O error points exercised: $NPOINTS ($nb failed cleanly before the commit point, $na were completed after it)"
[ $nb -gt 0 ] && ok "$nb I/O errors before the commit point: EIO, nothing changed, layer intact" ||
	fail "no I/O error point before the commit point ended in EIO with the before tree"
[ $na -gt 1 ] && ok "$((na - 1)) I/O errors at or after the commit point: completed by the daemon" ||
	fail "no I/O error point after the commit point was completed"
txn_finish
