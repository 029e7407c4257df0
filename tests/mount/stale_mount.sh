#!/bin/bash
# A mount left by a daemon killed with SIGKILL ("Transport endpoint is not
# connected") is detected and cleaned by `txfs umount` and by `txfs mount`,
# at a separate mount point and in place; nothing staged is lost.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
t 10 "$FSOP" pwrite "$MNT/staged" 0 staged-1 fsync || fail "write failed"
kill_daemon || exit 1
check_eq "after SIGKILL the mount point is still a mount" 1 "$(is_mounted "$MNT" && echo 1 || echo 0)"
err=$(t 10 stat "$MNT/file.txt" 2>&1)
case $err in *"not connected"*) ok "the dead mount answers ENOTCONN" ;; *) echo "# stat on the dead mount said: $err" ;; esac
t 30 "$TXFS" umount "$MNT" >"$T/u.out" 2>&1
check_eq "txfs umount of a dead mount exits 0" 0 $?
check_eq "txfs umount removed the dead mount" "" "$(fstype_of "$MNT")"

txfs_mount || exit 1
check_content "staged data after the kill" "$MNT/staged" staged-1
kill_daemon || exit 1
txfs_mount || exit 1
check_eq "txfs mount over a dead mount: exactly one mount at the mount point" 1 "$(awk -v m="$MNT" '$2 == m' /proc/self/mounts | wc -l)"
check_content "staged data after mounting over the dead mount" "$MNT/staged" staged-1
txfs_umount || exit 1

txfs_mount --inplace || exit 1
t 10 "$FSOP" pwrite "$WS/staged2" 0 staged-2 fsync || fail "write in place failed"
kill_daemon || exit 1
txfs_mount --inplace || exit 1
check_eq "in place: txfs mount over a dead mount leaves one mount" 1 "$(awk -v m="$WS" '$2 == m' /proc/self/mounts | wc -l)"
check_content "in place: staged data after the kill" "$WS/staged2" staged-2
kill_daemon || exit 1
t 30 "$TXFS" umount "$WS" >"$T/u.out" 2>&1
check_eq "in place: txfs umount of a dead mount exits 0" 0 $?
check_eq "in place: the dead mount is gone" "" "$(fstype_of "$WS")"
finish
