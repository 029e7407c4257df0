#!/bin/bash
# Commit keeps holes (issue 13, point 4): every staged file is committed
# as sparse as the mount showed it (st_blocks within a few file-system
# blocks of the staged count, measured before the commit), SEEK_HOLE on
# the real file finds the holes, and the contents equal a plain copy that
# took the same steps: new files written past their end, truncated up,
# punched; a real sparse file written to; a real dense file punched; a
# real sparse file renamed after a write. The mount half is
# tests/mount/op_sparse.sh.
. "$(dirname "$0")/txnlib.sh"
fixture
"$FSOP" pwrite "$WS/rsparse" 0 start
"$FSOP" pwrite "$WS/rsparse" 5000000 end
"$FSOP" pwrite "$WS/rsparse2" 0 begin
"$FSOP" pwrite "$WS/rsparse2" 3000000 fin
"$FSOP" fill "$WS/dense" 1M 7
model
txfs_mount || exit 1
files="new big_hole rsparse dense np moved"

both '"$FSOP" pwrite new 0 start && "$FSOP" pwrite new 10485760 end && sha256sum new'
both 'truncate -s 64M big_hole && stat -c %s big_hole'
both '"$FSOP" pwrite rsparse 2 XY && sha256sum rsparse'
both '"$FSOP" fallocate dense punch 65536 131072 && sha256sum dense'
both '"$FSOP" fill np 2M 3 && "$FSOP" fallocate np punch 524288 1048576 && sha256sum np'
both '"$FSOP" pwrite rsparse2 1 E && mv rsparse2 moved && sha256sum moved'
declare -A staged
for f in $files; do staged[$f]=$(sf %b "$MNT/$f"); done
t 120 bash -c 'echo commit > "$1"' _ "$MNT/$CTL/ctl" 2>"$T/commit.err"
check_eq "echo commit > $CTL/ctl exits 0" "0:" "$?:$(cat "$T/commit.err")"
txfs_umount || exit 1
check_tree "after commit the real directory equals the plain copy" "$WS" "$MODEL" -ox
for f in $files; do
	real=$(stat -c %b "$WS/$f")
	# the file system allocates in 4 KiB blocks where the layer counts
	# 512-byte sectors: 8 sectors of slack per run of data
	if [ "$real" -le $(( ${staged[$f]} + 32 )) ]; then
		ok "$f committed as sparse as staged (st_blocks $real, staged ${staged[$f]})"
	else
		fail "$f: committed st_blocks: expected at most ${staged[$f]} + 32 got $real"
	fi
done
check_eq "new: SEEK_HOLE 0 on the real file" 4096 "$(t 10 "$FSOP" seek "$WS/new" hole 0 2>&1)"
check_eq "big_hole: no data in the real file" 0 "$(stat -c %b "$WS/big_hole")"
check_eq "dense: the punched hole is a hole in the real file" 65536 "$(t 10 "$FSOP" seek "$WS/dense" hole 0 2>&1)"
h=$(t 10 "$FSOP" seek "$WS/rsparse" hole 0 2>&1)
if [ "$h" -le 65536 ] 2>/dev/null; then ok "rsparse: a hole after the written chunk ($h)"; else fail "rsparse: SEEK_HOLE 0: expected <= 65536 got $h"; fi
txfs_mount || exit 1
check_same "a new mount shows the committed files"
txn_finish
