#!/bin/bash
# mount -t fuse.txfs WORKSPACE MNT (mount(8) -> mount.fuse3 -> txfs) and
# umount(8). mount(8) needs root for a FUSE type without an fstab entry:
# skipped for an ordinary user. mount(8) drops PATH before mount.fuse3 runs
# "txfs" through /bin/sh, so a txfs must be on the default PATH: the test
# runs in a private mount namespace (unshare -m) in which a temp dir holding
# a txfs symlink is bind-mounted over /usr/local/sbin; nothing outside the
# namespace changes. The state folder is passed as -o state=DIR.
if [ "$(id -u)" = 0 ] && [ -z "${TXFS_IN_PRIVATE_NS:-}" ] && command -v unshare >/dev/null; then
	exec unshare -m --propagation private env TXFS_IN_PRIVATE_NS=1 bash "$0" "$@"
fi
. "$(dirname "$0")/lib.sh"
is_root || skip "mount -t fuse.txfs needs root (mount(8) refuses ordinary users without an fstab entry)"
[ -n "${TXFS_IN_PRIVATE_NS:-}" ] || skip "unshare (util-linux) is missing: cannot put txfs on mount.fuse3's PATH without touching the system"
[ -x /sbin/mount.fuse3 ] || [ -x /usr/sbin/mount.fuse3 ] || skip "mount.fuse3 (package fuse3) is not installed"
fixture
snapshot_real
export XDG_STATE_HOME=$T/xdg
mkdir -p "$T/sbin" "$XDG_STATE_HOME"
ln -s "$TXFS" "$T/sbin/txfs"
bindir=
for d in /usr/local/sbin /usr/local/bin /usr/sbin; do [ -d "$d" ] && { bindir=$d; break; }; done
mount --bind "$T/sbin" "$bindir" || { fail "bind-mounting $T/sbin over $bindir in the private namespace failed"; exit 1; }

MOUNTS+=("$MNT|$STATE")
t 30 mount -t fuse.txfs -o "state=$STATE" "$WS" "$MNT" >"$T/m.out" 2>&1
rc=$?
check_eq "mount -t fuse.txfs -o state=DIR WS MNT: exit status ($(head -c 300 "$T/m.out"))" 0 "$rc"
check_eq "mounted with type fuse.txfs" fuse.txfs "$(fstype_of "$MNT")"
pid=$(daemon_pid)
[ -n "$pid" ] && ok "the daemon's pid is in the state folder given with -o state=" || fail "no live daemon in $STATE/daemon.pid"
check_content "the merged view" "$MNT/file.txt" hello
t 10 bash -c 'echo via-helper > "$MNT/helper.txt"' || fail "write failed"
t 30 umount "$MNT" >"$T/u.out" 2>&1
rc=$?
check_eq "umount(8) exit status ($(head -c 300 "$T/u.out"))" 0 "$rc"
check_eq "unmounted" "" "$(fstype_of "$MNT")"
for i in $(seq 50); do [ -z "$(daemon_pid)" ] && break; sleep 0.1; done
check_eq "the daemon ($pid) exits after umount(8)" "" "$(daemon_pid)"
t 30 mount -t fuse.txfs -o "state=$STATE" "$WS" "$MNT" >"$T/m.out" 2>&1
rc=$?
check_eq "mount -t fuse.txfs again ($(head -c 300 "$T/m.out"))" 0 "$rc"
check_content "the staged file after mounting again" "$MNT/helper.txt" via-helper
txfs_umount

# The plain form, no options: the state goes to $XDG_STATE_HOME/txfs/...
MOUNTS+=("$MNT|$XDG_STATE_HOME")
t 30 mount -t fuse.txfs "$WS" "$MNT" >"$T/m.out" 2>&1
rc=$?
check_eq "mount -t fuse.txfs WS MNT: exit status ($(head -c 300 "$T/m.out"))" 0 "$rc"
check_eq "mounted with type fuse.txfs" fuse.txfs "$(fstype_of "$MNT")"
xst=$(dirname "$(find "$XDG_STATE_HOME" -name daemon.pid 2>/dev/null | head -1)")
MOUNTS+=("$MNT|$xst")
[ -n "$(daemon_pid "$xst")" ] && ok "the default state folder is under XDG_STATE_HOME ($xst)" ||
	fail "no live daemon.pid under XDG_STATE_HOME=$XDG_STATE_HOME"
check_content "the merged view (default state)" "$MNT/file.txt" hello
t 30 umount "$MNT" >"$T/u.out" 2>&1
rc=$?
check_eq "umount(8) of the plain form ($(head -c 300 "$T/u.out"))" 0 "$rc"
for i in $(seq 50); do [ -z "$(daemon_pid "$xst")" ] && break; sleep 0.1; done
check_eq "its daemon exits" "" "$(daemon_pid "$xst")"
umount "$bindir"
finish
