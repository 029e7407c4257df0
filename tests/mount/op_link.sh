#!/bin/bash
# link(2): hard links to real and new files share one identity (inode
# number, link count, content) in the mount and after a remount.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both 'ln file.txt fl && stat -c %h file.txt fl && cat fl'
check_eq "a hard link to a real file has its inode number" "$(sf %i "$MNT/file.txt")" "$(sf %i "$MNT/fl")"
check_eq "...which is the real file's" "$(stat -c %i "$WS/file.txt")" "$(sf %i "$MNT/fl")"
both 'echo via-link >> fl && cat file.txt'
both 'ln hard1 hard3 && stat -c %h hard1 hard2 hard3 && echo three >> hard3 && cat hard1'
check_eq "three names, one inode" "$(sf %i "$MNT/hard1") $(sf %i "$MNT/hard1")" "$(sf %i "$MNT/hard2") $(sf %i "$MNT/hard3")"
both 'echo n > n && ln n dir/sub/n2 && stat -c %h n && echo more >> dir/sub/n2 && cat n'
check_eq "hard link to a new file shares its inode" "$(sf %i "$MNT/n")" "$(sf %i "$MNT/dir/sub/n2")"
both 'ln dir dlink; echo rc=$?'
both 'ln file.txt ro.txt; echo rc=$?'
both 'ln missing x; echo rc=$?'
both 'ln link_rel link_hard && readlink link_hard && stat -c %h link_rel'
both 'rm file.txt && cat fl && stat -c %h fl'
both 'mv fl dir/fl-moved && stat -c %h dir/fl-moved'
both 'ln big.bin big.link && printf Q | dd of=big.link bs=1 seek=65536 conv=notrunc status=none && cmp big.bin big.link && echo same'
ino_n=$(sf %i "$MNT/n")
ino_h=$(sf %i "$MNT/hard3")
remount || exit 1
check_eq "after remount, the new file's links share one inode" "$(sf %i "$MNT/n")" "$(sf %i "$MNT/dir/sub/n2")"
check_eq "after remount, the real file's links share one inode" "$(sf %i "$MNT/hard3")" "$(sf %i "$MNT/hard1")"
check_eq "after remount, hard3 has the inode number it had" "$ino_h" "$(sf %i "$MNT/hard3")"
check_eq "after remount, n has the inode number it had" "$ino_n" "$(sf %i "$MNT/n")"
finish
