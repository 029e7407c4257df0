#!/bin/bash
# The commit/rollback round trip of real files changed in part, which
# commit patches in place (CS_PATCH, see fs/commit/commit.h): a sparse 64 MiB
# file written in its middle and across a block boundary, a file grown
# past its end, one truncated shorter and written, one truncated and grown
# again, one with punched holes, one written and chmod'ed, one written and
# given new times, one written in a folder that is renamed (not in place:
# its path changes) and one written and renamed. The round trip checks
# the real directory equals a plain copy (sha256, modes, owners, xattrs,
# mtimes) and the view at commit; then: the files patched in place keep
# their inode numbers, the 64 MiB file stays sparse.
. "$(dirname "$0")/txnlib.sh"
fixture
truncate -s 64M "$WS/huge.bin"
"$FSOP" fill "$T/r1m" 1M 7
dd if="$T/r1m" of="$WS/huge.bin" bs=1M seek=20 conv=notrunc status=none
"$FSOP" fill "$WS/grow.bin" 2M 2
"$FSOP" fill "$WS/shrink.bin" 3M 3
"$FSOP" fill "$WS/regrow.bin" 2M 4
"$FSOP" fill "$WS/holes.bin" 2M 5
"$FSOP" fill "$WS/mode.bin" 1M 6
"$FSOP" fill "$WS/times.bin" 1M 8
mkdir "$WS/fold"
"$FSOP" fill "$WS/fold/inside.bin" 1M 9
"$FSOP" fill "$WS/renamed.bin" 1M 10
setfattr -n user.keep -v me "$WS/mode.bin" 2>/dev/null || true
inplace="huge.bin grow.bin shrink.bin regrow.bin holes.bin mode.bin times.bin"
declare -A ino0
for f in $inplace; do ino0[$f]=$(stat -c %i "$WS/$f"); done
# roundtrip ends the test; check the inode numbers from its exit trap
check_patched() {
	local f
	for f in $inplace; do
		check_eq "$f was patched in place (same inode number)" "${ino0[$f]}" "$(stat -c %i "$WS/$f")"
	done
	local kib
	kib=$(du -k "$WS/huge.bin" | cut -f1)
	[ "$kib" -lt 4096 ] && ok "huge.bin is still sparse ($kib KiB on disk)" ||
		fail "huge.bin takes $kib KiB on disk: no longer sparse"
}
txn_finish() {
	check_patched
	local entry m
	for entry in "${MOUNTS[@]}"; do
		m=${entry%%|*}
		if is_mounted "$m" && [ "$(fstype_of "$m")" = "$FSTYPE" ]; then
			txfs_umount "$m" "${entry#*|}"
		fi
	done
	FINISHED=1
	exit 0
}
roundtrip '
"$FSOP" pwrite huge.bin 33554432 in-the-middle-of-64-MiB
"$FSOP" pwrite huge.bin 21037050 across-a-block-boundary
"$FSOP" pwrite grow.bin 100 head
"$FSOP" pwrite grow.bin 5000000 far-past-the-end
truncate -s 1000001 shrink.bin
"$FSOP" pwrite shrink.bin 70000 cut
truncate -s 1000000 regrow.bin
truncate -s 3000000 regrow.bin
"$FSOP" pwrite regrow.bin 1500000 again
"$FSOP" fallocate holes.bin punch 65536 65536
"$FSOP" fallocate holes.bin punch 1000000 5000
"$FSOP" fallocate holes.bin zero 1500000 70000
"$FSOP" pwrite mode.bin 10 m
chmod 600 mode.bin
"$FSOP" pwrite times.bin 10 t
touch -d "2011-11-11 11:11:11.25" times.bin
"$FSOP" pwrite fold/inside.bin 10 i
mv fold fold2
"$FSOP" pwrite renamed.bin 10 r
mv renamed.bin renamed2.bin
sha256sum huge.bin grow.bin shrink.bin regrow.bin holes.bin'
