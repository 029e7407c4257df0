#!/bin/bash
# A mount left by a daemon killed with SIGKILL ("Transport endpoint is not
# connected") is detected and cleaned by `txfs umount` and by `txfs mount`,
# at a separate mount point and in place; nothing staged is lost. Each case
# starts clean even if the one before failed.
. "$(dirname "$0")/lib.sh"
fixture

one_mount() { awk -v m="$1" '$2 == m' /proc/self/mounts | wc -l; }

# case 1: txfs umount of a dead mount
txfs_mount || exit 1
t 10 "$FSOP" pwrite "$MNT/staged" 0 staged-1 fsync || fail "write failed"
kill_daemon || exit 1
check_eq "after SIGKILL the mount point is still a mount" 1 "$(one_mount "$MNT")"
err=$(t 10 stat "$MNT/file.txt" 2>&1)
case $err in *"not connected"*) ok "the dead mount answers ENOTCONN" ;; *) echo "# stat on the dead mount said: $err" ;; esac
t 30 "$TXFS" umount "$MNT" >"$T/u.out" 2>&1
rc=$?
check_eq "txfs umount of a dead mount: exit status ($(cat "$T/u.out"))" 0 "$rc"
check_eq "txfs umount removed the dead mount" 0 "$(one_mount "$MNT")"
force_detach

# case 2: txfs mount over a dead mount
txfs_mount || exit 1
check_content "staged data after the kill" "$MNT/staged" staged-1
kill_daemon || exit 1
if txfs_mount; then
	check_eq "txfs mount over a dead mount: exactly one mount at the mount point" 1 "$(one_mount "$MNT")"
	check_content "staged data after mounting over the dead mount" "$MNT/staged" staged-1
	txfs_umount
	check_eq "after txfs umount nothing is left at the mount point" 0 "$(one_mount "$MNT")"
fi
force_detach

# case 3: in place, txfs mount over a dead mount
txfs_mount --inplace || exit 1
t 10 "$FSOP" pwrite "$WS/staged2" 0 staged-2 fsync || fail "write in place failed"
kill_daemon || exit 1
if txfs_mount --inplace; then
	check_eq "in place: txfs mount over a dead mount leaves one mount" 1 "$(one_mount "$WS")"
	check_content "in place: staged data after the kill" "$WS/staged2" staged-2
fi
force_detach "$WS"

# case 4: in place, txfs umount of a dead mount
txfs_mount --inplace || exit 1
kill_daemon || exit 1
t 30 "$TXFS" umount "$WS" >"$T/u.out" 2>&1
rc=$?
check_eq "in place: txfs umount of a dead mount: exit status ($(cat "$T/u.out"))" 0 "$rc"
check_eq "in place: the dead mount is gone" 0 "$(one_mount "$WS")"
force_detach "$WS"
finish
