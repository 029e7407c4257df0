#!/bin/bash
# A mount left by a daemon killed with SIGKILL ("Transport endpoint is not
# connected") is detected and cleaned by `txfs umount` and by `txfs mount`,
# at a separate mount point and in place; nothing staged is lost. Dead
# mounts stacked on one mount point are all cleaned, by `txfs mount` (which
# used to fail with "Transport endpoint is not connected") and by one
# `txfs umount`; a live txfs mount whose control folder has another name is
# still recognised (from /proc/self/mountinfo) by `txfs umount`. Each case
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

# two dead mounts stacked at $MNT: B mounted over a live A, both killed
# (root only: fusermount3 may not mount over a user's FUSE mount, since
# root itself is refused access to it without allow_other)
stack_two_dead() {
	if ! is_root; then
		echo "# not root: stacking two txfs mounts needs root; not run"
		return 1
	fi
	mkdir -p "$T/ws2" "$T/state2"
	echo two >"$T/ws2/two.txt"
	txfs_mount || return 1
	t 10 "$FSOP" pwrite "$MNT/staged3" 0 staged-3 fsync || fail "write failed"
	txfs_mount --ws "$T/ws2" --state "$T/state2" || return 1
	check_eq "two mounts stacked at the mount point" 2 "$(one_mount "$MNT")"
	kill_daemon "$T/state2" && kill_daemon "$STATE"
}

# case 5: txfs mount over two stacked dead mounts
if stack_two_dead; then
	if txfs_mount; then
		check_eq "over two stacked dead mounts: txfs mount leaves exactly one mount" 1 "$(one_mount "$MNT")"
		check_content "over two stacked dead mounts: staged data" "$MNT/staged3" staged-3
		txfs_umount
	fi
fi
force_detach; force_detach "$MNT" "$T/state2"

# case 6: one txfs umount cleans two stacked dead mounts
if stack_two_dead; then
	t 30 "$TXFS" umount "$MNT" >"$T/u.out" 2>&1
	rc=$?
	check_eq "txfs umount of two stacked dead mounts: exit status ($(cat "$T/u.out"))" 0 "$rc"
	check_eq "txfs umount of two stacked dead mounts: none left" 0 "$(one_mount "$MNT")"
fi
force_detach; force_detach "$MNT" "$T/state2"

# case 7: a live mount with another control folder name is still a txfs mount
txfs_mount --ctl-name .ctl2 || exit 1
t 30 "$TXFS" umount "$MNT" >"$T/u.out" 2>&1
rc=$?
check_eq "txfs umount of a mount with --ctl-name .ctl2 (not given): exit status ($(cat "$T/u.out"))" 0 "$rc"
check_eq "the mount with another control folder name is gone" 0 "$(one_mount "$MNT")"
for _ in $(seq 50); do [ -z "$(daemon_pid)" ] && break; sleep 0.1; done
check_eq "its daemon exited" "" "$(daemon_pid)"
force_detach
finish
