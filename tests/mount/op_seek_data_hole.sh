#!/bin/bash
# lseek SEEK_DATA/SEEK_HOLE: answers consistent with the contents (a file
# system may report no holes, but never a hole over data, and ENXIO past
# the end), on a real sparse file, a new one and a real one written to.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1

# check_seek FILE: data at 0..5 and at 1048576..end, holes between
check_seek() {
	local f=$1 size d h
	size=$(sf %s "$f")
	d=$(t 10 "$FSOP" seek "$f" data 0 2>&1)
	check_eq "$f: SEEK_DATA 0" 0 "$d"
	h=$(t 10 "$FSOP" seek "$f" hole 0 2>&1)
	if [ "$h" -ge 5 ] 2>/dev/null && [ "$h" -le "$size" ]; then ok "$f: SEEK_HOLE 0 = $h"; else fail "$f: SEEK_HOLE 0: expected 5..$size got $h"; fi
	d=$(t 10 "$FSOP" seek "$f" data 600000 2>&1)
	if [ "$d" -ge 600000 ] 2>/dev/null && [ "$d" -le 1048576 ]; then ok "$f: SEEK_DATA 600000 = $d"; else fail "$f: SEEK_DATA 600000: expected 600000..1048576 got $d"; fi
	if [ "$d" -gt 600000 ] 2>/dev/null; then
		if [ "$(t 10 "$FSOP" pread "$f" 600000 $((d - 600000)) | tr -d '\0' | wc -c)" = 0 ]; then
			ok "$f: the range SEEK_DATA skipped is zeros"
		else
			fail "$f: SEEK_DATA skipped over data between 600000 and $d"
		fi
	fi
	h=$(t 10 "$FSOP" seek "$f" hole $((size - 1)) 2>&1)
	check_eq "$f: SEEK_HOLE at the last byte" "$size" "$h"
	check_errno "$f: SEEK_DATA at EOF" ENXIO seek "$f" data "$size"
	check_errno "$f: SEEK_HOLE past EOF" ENXIO seek "$f" hole $((size + 10))
}
check_seek "$MNT/sparse.bin"
t 10 "$FSOP" pwrite "$MNT/new.bin" 0 start
t 10 "$FSOP" pwrite "$MNT/new.bin" 1048576 end
check_seek "$MNT/new.bin"
t 10 "$FSOP" pwrite "$MNT/sparse.bin" 2 XY
check_seek "$MNT/sparse.bin"
check_eq "content of the written sparse file" "stXYt" "$(t 10 head -c 5 "$MNT/sparse.bin")"
finish
