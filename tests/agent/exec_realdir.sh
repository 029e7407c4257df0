#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_realdir - a real directory that the confined command could write by
# its own path (under /tmp, writable to every command, and mounted at
# another MNT) would let `txfs exec` change real files past the mount: the
# attack of issue 23's review (`txfs exec -- rm -rf REAL/.git`). txfs exec
# refuses to run there, as root and as the test user, and the real .git is
# whole afterwards; mounted in place, the same workspace works (the
# command's writes are staged, the real directory unchanged).
. "$(dirname "$0")/lib.sh"

body() {
	local real mnt before rc
	ws_fixture
	real=$(mktemp -d /tmp/txfs-realdir.XXXXXX) && mnt=$T/mnt$SEQ && mkdir -p "$mnt"
	chmod 755 "$real" && as_owner "$real" "$mnt"
	as_run sh -c "cd '$real' && git init -q && echo a >a.txt && git add -A &&
		git -c user.name=t -c user.email=t@t commit -qm a" >/dev/null 2>&1
	before=$(snap "$real")
	new_state
	txfs_as mount --state "$STATE" "$real" "$mnt" >/dev/null 2>&1 || fail "mount $real at $mnt"
	timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" \
		sh -c "cd '$mnt' && '$TXFS_BIN' exec -- sh -c 'rm -rf $real/.git; echo x > $real/a.txt'" \
		>"$T/o" 2>"$T/e"
	rc=$?
	[ "$rc" = 2 ] && grep -q 'could change it past the mount' "$T/e" &&
		ok "[$WHO] exec on a mount of a real directory under /tmp: refused (exit 2, says why)" ||
		fail "[$WHO] exec ran (exit $rc): $(cat "$T/e")"
	txfs_as umount "$mnt" >/dev/null 2>&1 || fail "umount $mnt"
	check_snap "[$WHO] the real directory, .git included, is unchanged" "$before" "$(snap "$real")"
	as_run git -C "$real" fsck >/dev/null 2>&1 && ok "[$WHO] git fsck" || fail "[$WHO] git fsck"
	# in place: fine, and staged
	txfs_as mount --state "$STATE" "$real" >/dev/null 2>&1 || fail "mount $real in place"
	timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" \
		sh -c "cd '$real' && '$TXFS_BIN' exec -- sh -c 'echo staged > s.txt'" >/dev/null 2>"$T/e"
	[ $? = 0 ] && ok "[$WHO] mounted in place, exec runs" || fail "[$WHO] in place: $(cat "$T/e")"
	txfs_as rollback "$real" >/dev/null 2>&1
	txfs_as umount "$real" >/dev/null 2>&1 || fail "umount $real"
	check_snap "[$WHO] rolled back: the real directory is unchanged" "$before" "$(snap "$real")"
	rm -rf "$real"
}

for_each_user body
finish
