#!/bin/bash
# A full LMDB map (TXFS_MAP_SIZE small): the write that does not fit gets
# ENOSPC, the daemon lives on, everything staged earlier is intact (also
# after a remount), and removing files makes room again.
. "$(dirname "$0")/lib.sh"
fixture
export TXFS_MAP_SIZE=$((16 * 1024 * 1024))
txfs_mount || exit 1
pid=$DAEMON_PID
for i in 1 2 3 4; do
	t 20 "$FSOP" fill "$MNT/keep$i" 200k "$i" || fail "writing keep$i failed"
done
t 10 "$FSOP" pwrite "$MNT/big.bin" 70000 EARLIER fsync || fail "writing into big.bin failed"
t 60 env -C "$MNT" sha256sum keep1 keep2 keep3 keep4 big.bin >"$T/sums"
errno=
for i in $(seq 1 128); do
	t 30 "$FSOP" fill "$MNT/fill$i" 1M "$i" >"$T/fill.out" 2>&1 &&
		t 30 "$FSOP" fsync "$MNT/fill$i" >"$T/fill.out" 2>&1 && continue
	errno=$(sed -n 's/^fsop: [^:]*: [^:]*: \(E[A-Z0-9]*\):.*/\1/p' "$T/fill.out")
	echo "# the map filled up at fill$i: $(cat "$T/fill.out")"
	break
done
check_eq "the write that does not fit in the map fails with" ENOSPC "$errno"
check_eq "the daemon lives on" "$pid" "$(daemon_pid)"
check_run "the mount still answers" ls "$MNT"
check_run "earlier data intact while full" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
t 10 mkdir "$MNT/while-full" 2>/dev/null
t 10 bash -c 'echo x > "$MNT/small-while-full"' 2>/dev/null
check_run "earlier data intact after more attempts" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
check_run "removing files while the map is full" bash -c 'rm -f "$MNT"/fill*'
check_run "after removing, a new 100 KiB file fits" "$FSOP" fill "$MNT/after-rm" 100k 5
check_eq "the daemon still lives" "$pid" "$(daemon_pid)"
remount || exit 1
check_run "earlier data intact after remount" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
finish
