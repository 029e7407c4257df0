#!/bin/bash
# Sparse files (issue 13, point 4): holes are never stored (writes past
# the end, truncate up, fallocate PUNCH_HOLE and ZERO_RANGE), st_blocks
# counts what the layer stores plus what the real file has allocated under
# the blocks the layer does not cover, SEEK_DATA/SEEK_HOLE report the
# merged map (before: st_blocks = size/512 and no hole anywhere), and
# `bytes staged` stays small. Contents equal a plain directory's; the
# same answers after a remount. The commit half is tests/txn/rt_sparse.sh.
. "$(dirname "$0")/lib.sh"
fixture
"$FSOP" pwrite "$WS/rsparse" 0 start
"$FSOP" pwrite "$WS/rsparse" 5000000 end
"$FSOP" fill "$WS/dense" 1M 7
model
txfs_mount || exit 1
K=1024

blocks() { sf %b "$1"; }
seek() { t 10 "$FSOP" seek "$1" "$2" "$3" 2>&1; }
staged() { t 30 sed -n 's/^bytes staged: //p' "$MNT/.txfs/status"; }
# check_le WHAT MAX GOT
check_le() {
	if [ "$3" -le "$2" ] 2>/dev/null; then ok "$1 ($3 <= $2)"; else fail "$1: expected at most $2 got '$3'"; fi
}

check_all() {
	# a new file written at 0 and at 10 MiB: two small chunks, a hole
	check_le "new file with a 10 MiB hole: st_blocks" 16 "$(blocks "$MNT/new")"
	check_eq "new file: SEEK_HOLE 0 is right after the first write" 5 "$(seek "$MNT/new" hole 0)"
	check_eq "new file: SEEK_DATA 100 finds the second write" 10485760 "$(seek "$MNT/new" data 100)"
	check_eq "new file: SEEK_HOLE past the last data is the end" 10485763 "$(seek "$MNT/new" hole 10485760)"
	# truncated up: all hole
	check_eq "truncated up to 64 MiB: st_blocks" 0 "$(blocks "$MNT/big_hole")"
	check_eq "truncated up: du" 0 "$(t 10 du -k "$MNT/big_hole" | cut -f1)"
	check_errno "truncated up: SEEK_DATA 0" ENXIO seek "$MNT/big_hole" data 0
	check_eq "truncated up: SEEK_HOLE 0" 0 "$(seek "$MNT/big_hole" hole 0)"
	# a real sparse file written at its start: one 64 KiB chunk over it
	check_le "real sparse file written to: st_blocks" $(( $(stat -c %b "$WS/rsparse") + 128 )) "$(blocks "$MNT/rsparse")"
	check_eq "real sparse file written to: SEEK_HOLE 0 after the chunk" 65536 "$(seek "$MNT/rsparse" hole 0)"
	d=$(seek "$MNT/rsparse" data 65536)
	if [ "$d" -gt 4900000 ] 2>/dev/null && [ "$d" -le 5000000 ]; then ok "real sparse file: SEEK_DATA skips the real hole ($d)"; else fail "real sparse file: SEEK_DATA 65536: expected 4900000..5000000 got $d"; fi
	# a real dense file with two blocks punched: what is left of it
	check_le "real dense file, 128 KiB punched: st_blocks" $(( (1024 - 128) * 2 + 16 )) "$(blocks "$MNT/dense")"
	check_eq "real dense file punched: SEEK_HOLE 0" 65536 "$(seek "$MNT/dense" hole 0)"
	check_eq "real dense file punched: SEEK_DATA 65536" 196608 "$(seek "$MNT/dense" data 65536)"
	# a new dense file, 1 MiB punched in the middle and 64 KiB zeroed
	check_le "new file, 1 MiB punched: st_blocks" $(( 1024 * 2 - 128 + 16 )) "$(blocks "$MNT/np")"
	check_eq "new file punched: SEEK_HOLE 0" 524288 "$(seek "$MNT/np" hole 0)"
	check_eq "new file punched: SEEK_DATA at the hole" 1572864 "$(seek "$MNT/np" data 524288)"
	# cp keeps holes when the source reports them
	check_le "cp of the real sparse file: st_blocks" 200 "$(blocks "$MNT/rsparse_cp")"
}

both '"$FSOP" pwrite new 0 start && "$FSOP" pwrite new 10485760 end && stat -c %s new && sha256sum new'
both 'truncate -s 64M big_hole && stat -c %s big_hole && head -c 100 big_hole | od -An -c | head -2'
both '"$FSOP" pwrite rsparse 2 XY && sha256sum rsparse'
both '"$FSOP" fallocate dense punch 65536 131072 && stat -c %s dense && sha256sum dense'
both '"$FSOP" fill np 2M 3 && "$FSOP" fallocate np punch 524288 1048576 && "$FSOP" fallocate np zero 2031616 65536 && stat -c %s np && sha256sum np'
both 'cp rsparse rsparse_cp && cmp rsparse rsparse_cp && echo same'
check_le "bytes staged: the chunks only" $(( 64 * K * 2 + 2 * 1048576 )) "$(staged)"
check_all
st_len=$(t 10 cat "$MNT/.txfs/status" | wc -c)
check_eq ".txfs/status: SEEK_DATA 0 (all data)" 0 "$(seek "$MNT/.txfs/status" data 0)"
check_eq ".txfs/status: SEEK_HOLE 0 is its end" "$st_len" "$(seek "$MNT/.txfs/status" hole 0)"
check_same
remount || exit 1
check_all
finish
