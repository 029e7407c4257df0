#!/bin/bash
# The state folder is locked: a second daemon on it is refused with a clear
# message (exit 1, "txfs: what failed: why"), the first mount goes on
# working, and after unmounting the state folder can be used again.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
first=$DAEMON_PID
mkdir "$T/mnt2"
txfs_mount --mnt "$T/mnt2" --expect-fail
check_eq "second txfs mount on a locked state folder exits 1" 1 "$RC"
if grep -Eq '^txfs: [^:]+: .+' <<<"$ERR" && grep -Eiq 'lock|in use|busy|already|running' <<<"$ERR"; then
	ok "refusal says why: $ERR"
else
	fail "refusal message: expected 'txfs: what failed: why' mentioning the lock got '$ERR'"
fi
check_eq "nothing mounted at the second mount point" "" "$(fstype_of "$T/mnt2")"
check_eq "the first daemon still runs" "$first" "$(daemon_pid)"
check_content "the first mount still works" "$MNT/file.txt" hello
mkdir "$T/ws2"
txfs_mount --ws "$T/ws2" --mnt "$T/mnt2" --expect-fail
check_eq "another workspace on the locked state folder: exit 1" 1 "$RC"
check_eq "...and nothing mounted" "" "$(fstype_of "$T/mnt2")"
check_eq "the first daemon still runs after the second refusal" "$first" "$(daemon_pid)"
txfs_umount || exit 1
txfs_mount --mnt "$T/mnt2" || exit 1
check_content "after unmounting, the state folder mounts again" "$T/mnt2/file.txt" hello
txfs_umount "$T/mnt2"
finish
