#!/bin/bash
# With TXFS_LAYER_WRITEMAP=1 the layer's LMDB map is written in place
# (MDB_WRITEMAP, fs/layer/reserve.c):
# storing into a page the disk has no block for would kill the daemon with
# SIGBUS, so the map never reaches past the data file's allocated blocks.
# On an 8 MiB tmpfs state disk: WRITEMAP is in use (the daemon maps the
# data file writable), large writes and then thousands of small creates and 4 KiB
# writes into pieces of a staged file run into the full disk; every one
# that fails says ENOSPC (never EIO), the daemon never dies, what was
# staged before is intact; a clean unmount cuts the data file back to the
# pages in use; remount, and the pwrite path (TXFS_LAYER_WRITEMAP=0),
# read the same data; removing files makes room for new data on both.
# Needs root (it mounts the tmpfs).
. "$(dirname "$0")/lib.sh"
is_root || skip "mounting a small tmpfs for the state folder needs root"
SMALL=$T/small
mkdir -p "$SMALL"
mount -t tmpfs -o size=8m,mode=700 txfs-test-wmap "$SMALL" || skip "cannot mount a tmpfs"
trap 'r=$?; umount -l "$SMALL" 2>/dev/null; (exit $r); cleanup' EXIT
STATE=$SMALL/state
fixture
head -c 1M /dev/zero >"$SMALL/ballast"	# the disk's room for later
export TXFS_LAYER_WRITEMAP=1
txfs_mount || exit 1
pid=$DAEMON_PID
check_eq "TXFS_LAYER_WRITEMAP=1: the data file is mapped writable and shared" 1 \
	"$(grep -c 'rw-s .*/data\.mdb$' "/proc/$pid/maps")"
t 20 "$FSOP" fill "$MNT/keep" 300k 1 || fail "writing keep failed"
t 20 "$FSOP" fill "$MNT/pieces" 256k 2 || fail "writing pieces failed"
t 60 env -C "$MNT" sha256sum keep >"$T/sums"
errno_of() { sed -n 's/^fsop: [^:]*: [^:]*: \(E[A-Z0-9]*\):.*/\1/p' "$1"; }
# big writes first, until the disk is nearly full
for i in $(seq 1 16); do
	t 30 "$FSOP" fill "$MNT/big$i" 512k "$i" >"$T/out" 2>&1 || break
done
echo "# after the big writes: $(df -k "$SMALL" | tail -1)"
# then many small transactions: creates with a little data each
bad=0 enospc=0
for i in $(seq 1 3000); do
	if ! t 10 "$FSOP" pwrite "$MNT/s$i" 0 "small file $i $(printf '%02000d' "$i")" >"$T/out" 2>&1; then
		e=$(errno_of "$T/out")
		[ "$e" = ENOSPC ] || { bad=$((bad + 1)); echo "# s$i: $(cat "$T/out")"; }
		enospc=$((enospc + 1))
		[ $enospc -ge 20 ] && break
	fi
done
check_eq "small creates on the full disk that failed otherwise than ENOSPC" 0 "$bad"
[ $enospc -gt 0 ] || fail "expected the disk to fill up with small creates"
check_eq "the daemon lives on after the small creates" "$pid" "$(daemon_pid)"
# 4 KiB writes into the middle of a staged file (pieces) while full
bad=0
for i in $(seq 0 40); do
	if ! t 10 "$FSOP" pwrite "$MNT/pieces" $(( (i * 37 % 60) * 4096 )) "$(printf 'P%04095d' "$i")" >"$T/out" 2>&1; then
		e=$(errno_of "$T/out")
		[ "$e" = ENOSPC ] || { bad=$((bad + 1)); echo "# piece $i: $(cat "$T/out")"; }
	fi
done
check_eq "piece writes on the full disk that failed otherwise than ENOSPC" 0 "$bad"
check_eq "the daemon lives on after the piece writes" "$pid" "$(daemon_pid)"
check_run "earlier data intact while full" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
t 30 cat "$MNT/pieces" >"$T/pieces.full" || fail "reading pieces while full"
# filled to the last page, even an unlink may not fit (as on the pwrite
# path): ENOSPC, never anything else
if ! rm -f "$MNT/big1" 2>"$T/rm.err"; then
	grep -q 'No space left on device' "$T/rm.err" ||
		fail "an unlink on the full disk failed otherwise than ENOSPC: $(cat "$T/rm.err")"
fi
check_eq "the daemon lives on after an unlink on the full disk" "$pid" "$(daemon_pid)"
# the disk gets room again (another file on it goes): the map grows
rm -f "$SMALL/ballast"
check_run "removing files once the disk has room" bash -c 'rm -f "$MNT"/big* "$MNT"/s*'
check_run "after removing, a new 100 KiB file fits" "$FSOP" fill "$MNT/after-rm" 100k 5
check_eq "the daemon lives on after removing" "$pid" "$(daemon_pid)"
txfs_umount || exit 1
size=$(stat -c %s "$STATE/layer/data.mdb")
[ "$size" -le $((8 << 20)) ] || fail "expected a clean unmount to cut the data file back got $size bytes"
txfs_mount || exit 1
check_run "earlier data intact after remount" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
check_run "the pieces read the same after remount" cmp "$MNT/pieces" "$T/pieces.full"
txfs_umount || exit 1
export TXFS_LAYER_WRITEMAP=0
txfs_mount || exit 1
check_eq "TXFS_LAYER_WRITEMAP=0: the data file is not mapped writable" 0 \
	"$(grep -c 'rw-s .*/data\.mdb$' "/proc/$DAEMON_PID/maps")"
check_run "the pwrite path reads the same data" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums' && cmp pieces '$T/pieces.full'"
check_run "the pwrite path: a new 100 KiB file fits" "$FSOP" fill "$MNT/after-rm2" 100k 6
txfs_umount || exit 1
unset TXFS_LAYER_WRITEMAP
txfs_mount || exit 1
check_eq "by default the data file is not mapped writable (the pwrite path)" 0 \
	"$(grep -c 'rw-s .*/data\.mdb$' "/proc/$DAEMON_PID/maps")"
check_run "the default path reads the same data" bash -c "cd '$MNT' && sha256sum -c --quiet '$T/sums'"
txfs_umount || exit 1
check_eq "the state log has no LMDB corruption" "" "$(grep -h 'MDB_\|corrupt' "$STATE"/*.log 2>/dev/null | head -3)"
finish
