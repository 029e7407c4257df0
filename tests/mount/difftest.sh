#!/bin/bash
# Differential test: the same seeded random sequence of 10,000 operations
# (create, write at random offsets, truncate, rename of files and
# directories with overwrites, RENAME_NOREPLACE/EXCHANGE, link, unlink,
# mkdir, rmdir, symlink, chmod, stat, read, readdir, readlink) applied to a
# plain directory and to a mount whose real directory holds the same seeded
# starting tree: the transcripts (errno for errno) and the final trees must
# be identical. A second seed runs half, remounts, and runs the other half.
. "$(dirname "$0")/lib.sh"
n=${TXFS_DIFFTEST_OPS:-10000}
seed1=${TXFS_DIFFTEST_SEED:-20240601}
seed2=$((seed1 + 1))

compare() { # what plain-out mount-out
	if cmp -s "$2" "$3"; then
		ok "$1: $(grep -c ' = ' "$2") operations, identical transcripts and trees"
	else
		fail "$1: the mount differs from a plain directory (< plain, > mount), first differences:"
		diff "$2" "$3" | head -30 | sed 's/^/    /'
	fi
}

mkdir "$T/plain1" "$T/plain2"
"$DIFFTEST" --init "$seed1" "$T/plain1"
"$DIFFTEST" --init "$seed1" "$WS"
txfs_mount || exit 1
"$DIFFTEST" "$seed1" "$n" "$T/plain1" >"$T/plain1.out"
t 600 "$DIFFTEST" "$seed1" "$n" "$MNT" >"$T/mnt1.out" || fail "difftest in the mount exited $?"
echo "# seed $seed1: $(grep -c ' = 0' "$T/plain1.out") of $n operations succeeded in the plain directory"
compare "seed $seed1" "$T/plain1.out" "$T/mnt1.out"
check_tree "seed $seed1: owners and xattrs too" "$T/plain1" "$MNT" -ox
txfs_umount || exit 1
check_real_unchanged

# Second run: another workspace and state, split across a remount.
WS=$T/ws2 STATE=$T/state2
mkdir "$WS"
"$DIFFTEST" --init "$seed2" "$T/plain2"
"$DIFFTEST" --init "$seed2" "$WS"
snapshot_real
txfs_mount || exit 1
half=$((n / 2))
"$DIFFTEST" "$seed2" "$n" "$T/plain2" >"$T/plain2.out"
t 300 "$DIFFTEST" -T "$seed2" "$half" "$MNT" >"$T/mnt2.out" || fail "difftest (first half) exited $?"
remount || exit 1
t 300 "$DIFFTEST" -s "$half" "$seed2" "$n" "$MNT" >>"$T/mnt2.out" || fail "difftest (second half) exited $?"
compare "seed $seed2, remounted halfway" "$T/plain2.out" "$T/mnt2.out"
finish
