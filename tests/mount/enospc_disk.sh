#!/bin/bash
# A full state disk (the state folder on an 8 MiB tmpfs; the LMDB map is
# far larger): the write the disk cannot take gets ENOSPC, as the README
# promises (LMDB reports a short page write as EIO; the old code passed
# that on), the daemon lives on, everything staged earlier is intact (also
# after a remount), and removing files makes room again. Needs root (it
# mounts the tmpfs).
. "$(dirname "$0")/lib.sh"
is_root || skip "mounting a small tmpfs for the state folder needs root"
SMALL=$T/small
mkdir -p "$SMALL"
mount -t tmpfs -o size=8m,mode=700 txfs-test-small "$SMALL" || skip "cannot mount a tmpfs"
# the tmpfs goes (lazily) before the harness looks for leftover mounts
trap 'r=$?; umount -l "$SMALL" 2>/dev/null; (exit $r); cleanup' EXIT
STATE=$SMALL/state
fixture
txfs_mount || exit 1
pid=$DAEMON_PID
for i in 1 2 3; do
	t 20 "$FSOP" fill "$MNT/keep$i" 200k "$i" || fail "writing keep$i failed"
done
t 10 "$FSOP" pwrite "$MNT/big.bin" 70000 EARLIER fsync || fail "writing into big.bin failed"
t 60 env -C "$MNT" sha256sum keep1 keep2 keep3 big.bin >"$T/sums"
errno=
for i in $(seq 1 32); do
	t 30 "$FSOP" fill "$MNT/fill$i" 1M "$i" >"$T/fill.out" 2>&1 &&
		t 30 "$FSOP" fsync "$MNT/fill$i" >"$T/fill.out" 2>&1 && continue
	errno=$(sed -n 's/^fsop: [^:]*: [^:]*: \(E[A-Z0-9]*\):.*/\1/p' "$T/fill.out")
	echo "# the disk filled up at fill$i: $(cat "$T/fill.out"); $(df -k "$SMALL" | tail -1)"
	break
done
check_eq "the write the full state disk cannot take fails with" ENOSPC "$errno"
# a second attempt, smaller than the first, while still full
t 30 "$FSOP" fill "$MNT/more" 2M 9 >"$T/fill.out" 2>&1
errno=$(sed -n 's/^fsop: [^:]*: [^:]*: \(E[A-Z0-9]*\):.*/\1/p' "$T/fill.out")
check_eq "another write while full fails with" ENOSPC "$errno"
check_eq "the daemon lives on" "$pid" "$(daemon_pid)"
check_run "the mount still answers" ls "$MNT"
check_run "earlier data intact while full" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
check_run "removing files while the disk is full" bash -c 'rm -f "$MNT"/fill* "$MNT"/more'
check_run "after removing, a new 100 KiB file fits" "$FSOP" fill "$MNT/after-rm" 100k 5
check_eq "the daemon still lives" "$pid" "$(daemon_pid)"
remount || exit 1
check_run "earlier data intact after remount" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
check_eq "the state log has no LMDB corruption" "" "$(grep -h 'MDB_\|corrupt' "$STATE"/*.log 2>/dev/null | head -3)"
finish
