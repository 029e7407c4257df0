#!/bin/bash
# mount -t fuse.txfs WORKSPACE MNT (through mount.fuse3, with txfs on PATH)
# and umount(8); the state goes under $XDG_STATE_HOME (a temp dir here).
# mount(8) of a FUSE type needs root: skipped for an ordinary user.
. "$(dirname "$0")/lib.sh"
is_root || skip "mount -t fuse.txfs needs root (mount(8) refuses ordinary users without an fstab entry)"
command -v mount.fuse3 >/dev/null || [ -x /sbin/mount.fuse3 ] || skip "mount.fuse3 (package fuse3) is not installed"
fixture
snapshot_real
bindir=$(dirname "$TXFS")
export XDG_STATE_HOME=$T/xdg HOME=$T/home
mkdir -p "$XDG_STATE_HOME" "$HOME"
helper_state() { dirname "$(find "$XDG_STATE_HOME" -name daemon.pid 2>/dev/null | head -1)"; }

MOUNTS+=("$MNT|$T/xdg")
t 30 env PATH="$bindir:$PATH" mount -t fuse.txfs "$WS" "$MNT" >"$T/m.out" 2>&1
check_eq "mount -t fuse.txfs exit status ($(head -c 300 "$T/m.out"))" 0 $?
check_eq "mounted with type fuse.txfs" fuse.txfs "$(fstype_of "$MNT")"
st=$(helper_state)
[ -n "$st" ] && MOUNTS+=("$MNT|$st")
[ -n "$st" ] && ok "the state folder is under XDG_STATE_HOME ($st)" || fail "no daemon.pid under XDG_STATE_HOME=$XDG_STATE_HOME"
check_content "the merged view" "$MNT/file.txt" hello
t 10 bash -c 'echo via-helper > "$MNT/helper.txt"' || fail "write failed"
pid=$(daemon_pid "$st")
t 30 umount "$MNT"
check_eq "umount(8) exit status" 0 $?
check_eq "unmounted" "" "$(fstype_of "$MNT")"
for i in $(seq 50); do [ -z "$(daemon_pid "$st")" ] && break; sleep 0.1; done
check_eq "the daemon ($pid) exits after umount(8)" "" "$(daemon_pid "$st")"
t 30 env PATH="$bindir:$PATH" mount -t fuse.txfs "$WS" "$MNT" >"$T/m.out" 2>&1
check_eq "mount -t fuse.txfs again" 0 $?
check_content "the staged file after mounting again" "$MNT/helper.txt" via-helper
txfs_umount "$MNT" "$st"
finish
