#!/bin/bash
# statfs: sane numbers at the root, in subdirectories and on files.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
for p in "$MNT" "$MNT/dir/sub" "$MNT/file.txt"; do
	out=$(t 10 "$FSOP" statfs "$p" 2>&1)
	read -r bsize blocks bfree bavail files namemax <<<"$out"
	if [ "${bsize:-0}" -gt 0 ] 2>/dev/null && [ "${blocks:-0}" -gt 0 ] && [ "$bfree" -le "$blocks" ] &&
		[ "$bavail" -le "$blocks" ] && [ "$namemax" -ge 255 ]; then
		ok "statfs $p: $out"
	else
		fail "statfs $p: expected bsize>0 blocks>0 free<=blocks namemax>=255 got '$out'"
	fi
done
check_run "df on the mount" df "$MNT"
check_run "stat -f on the mount" stat -f "$MNT"
finish
