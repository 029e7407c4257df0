#!/bin/bash
# txfs mount / txfs umount as commands: usage errors (exit 2), refused
# operations (exit 1) with "txfs: what failed: why", readiness when mount
# returns, no inherited output pipe, -f in the foreground, -o options.
. "$(dirname "$0")/lib.sh"
fixture

# expect_exit CODE WHAT CMD...: exit code, and the txfs error format on failure
expect_exit() {
	local code=$1 what=$2 rc
	shift 2
	t 30 "$@" </dev/null >"$T/cli.out" 2>"$T/cli.err"
	rc=$?
	check_eq "$what: exit status" "$code" "$rc"
	if [ "$code" != 0 ] && ! grep -Eq '^txfs: [^:]+: .+' "$T/cli.err"; then
		fail "$what: expected a 'txfs: what failed: why' line on stderr got '$(head -c 300 "$T/cli.err")'"
	fi
}
expect_exit 2 "txfs mount without arguments" "$TXFS" mount
expect_exit 2 "txfs mount with an unknown option" "$TXFS" mount --no-such-option "$WS" "$MNT"
expect_exit 2 "txfs umount without arguments" "$TXFS" umount
expect_exit 0 "txfs mount --help" "$TXFS" mount --help
expect_exit 1 "txfs mount of a missing workspace" "$TXFS" mount --state "$STATE" "$T/missing" "$MNT"
check_eq "...nothing mounted" "" "$(fstype_of "$MNT")"
expect_exit 1 "txfs mount at a missing mount point" "$TXFS" mount --state "$STATE" "$WS" "$T/missing-mnt"
# TXFS_MAP_SIZE: a size with a unit works; anything else is refused with its
# name and value (it was read as 8 bytes, then a bare "No space left")
for v in 8x 1K 0 99999999999999999999; do
	expect_exit 1 "TXFS_MAP_SIZE=$v" env TXFS_MAP_SIZE=$v "$TXFS" mount --state "$T/map-$v" "$WS" "$MNT"
	grep -q "TXFS_MAP_SIZE=$v: not a size" "$T/cli.err" && ok "TXFS_MAP_SIZE=$v: the error names it" ||
		fail "TXFS_MAP_SIZE=$v: expected 'TXFS_MAP_SIZE=$v: not a size' got '$(head -c 300 "$T/cli.err")'"
	check_eq "TXFS_MAP_SIZE=$v: nothing mounted" "" "$(fstype_of "$MNT")"
done
expect_exit 0 "TXFS_MAP_SIZE=8G mounts" env TXFS_MAP_SIZE=8G "$TXFS" mount --state "$T/map-8G" "$WS" "$MNT"
check_eq "TXFS_MAP_SIZE=8G: mounted" fuse.txfs "$(fstype_of "$MNT")"
t 30 "$TXFS" umount "$MNT" || fail "umount after TXFS_MAP_SIZE=8G: exit $?"
touch "$T/plainfile"
expect_exit 1 "txfs mount of a workspace that is a file" "$TXFS" mount --state "$STATE.f" "$T/plainfile" "$MNT"
expect_exit 1 "txfs mount with a state folder that is a file" "$TXFS" mount --state "$T/plainfile" "$WS" "$MNT"
check_eq "...nothing mounted" "" "$(fstype_of "$MNT")"
expect_exit 1 "txfs umount of a directory that is not a mount" "$TXFS" umount "$OUTSIDE"

# Ready on return; output pipes not kept open by the daemon.
MOUNTS+=("$MNT|$STATE")
out=$(timeout -k 5 30 "$TXFS" mount --state "$STATE" "$WS" "$MNT" 2>&1)
rc=$?
[ $rc = 124 ] && fail "txfs mount in \$(...) did not return within 30s: the daemon keeps stdout/stderr open"
check_eq "txfs mount exit status" 0 "$rc"
check_eq "mounted with type fuse.txfs" fuse.txfs "$(fstype_of "$MNT")"
check_content "the mount answers at once" "$MNT/file.txt" hello
pid=$(daemon_pid)
[ -n "$pid" ] && ok "STATE/daemon.pid names the live daemon ($pid)" || fail "STATE/daemon.pid: expected a live txfs daemon got '$(cat "$STATE/daemon.pid" 2>&1)'"
[ "$(awk '{print $4}' "/proc/$pid/stat" 2>/dev/null)" != "$$" ] && ok "the daemon is not a child of the caller" || fail "the daemon is still a child of the shell that ran txfs mount"
expect_exit 1 "txfs mount onto a mount point that is already a txfs mount, same state" "$TXFS" mount --state "$STATE" "$WS" "$MNT"
check_eq "still one mount there" 1 "$(awk -v m="$MNT" '$2 == m' /proc/self/mounts | wc -l)"
txfs_umount || exit 1

# -o ro: a FUSE option passed through
txfs_mount -o ro || exit 1
check_errno "-o ro: writes fail" EROFS open "$MNT/new" wc
txfs_umount || exit 1

# -f: foreground; txfs umount ends it
(timeout -k 5 60 "$TXFS" mount -f --state "$STATE" "$WS" "$MNT" </dev/null >"$T/fg.out" 2>&1; echo $? >"$T/fg.rc") &
for i in $(seq 100); do is_mounted "$MNT" && break; sleep 0.1; done
check_eq "-f: mounted within 10s" fuse.txfs "$(fstype_of "$MNT")"
check_content "-f: the mount answers" "$MNT/file.txt" hello
txfs_umount || exit 1
wait
check_eq "-f: the foreground txfs exits 0 after txfs umount" 0 "$(cat "$T/fg.rc" 2>/dev/null)"
finish
