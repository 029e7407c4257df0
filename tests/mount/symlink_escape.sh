#!/bin/bash
# Symlinks pointing outside the workspace are never followed by the daemon:
# reading, moving, copying, removing and retiming the links leaves the
# outside tree untouched; and when someone swaps a real directory for a
# symlink to the outside while the mount is in use, operations through the
# old directory never land outside.
. "$(dirname "$0")/lib.sh"
fixture
mkdir -p "$OUTSIDE/dir"
echo outside-canary >"$OUTSIDE/secret.txt"
echo outside-canary-f >"$OUTSIDE/f"
echo outside-canary-x >"$OUTSIDE/dir/x"
ln -s "$OUTSIDE/secret.txt" "$WS/esc_abs"
ln -s "$OUTSIDE" "$WS/esc_dir"
ln -s ../outside/secret.txt "$WS/esc_rel"
mkdir -p "$WS/sub" "$WS/race"
ln -s ../../outside "$WS/sub/esc_up"
echo inner >"$WS/race/f"
"$FSOP" tree -mox "$OUTSIDE" >"$T/outside.before"
txfs_mount || exit 1

check_outside() {
	"$FSOP" tree -mox "$OUTSIDE" >"$T/outside.now"
	if cmp -s "$T/outside.before" "$T/outside.now"; then ok "outside tree unchanged: $1"; else
		fail "outside tree changed ($1):"; diff "$T/outside.before" "$T/outside.now" | head | sed 's/^/    /'; fi
}
check_eq "readlink of an absolute escaping link" "$OUTSIDE/secret.txt" "$(t 10 readlink "$MNT/esc_abs")"
check_eq "readlink of a relative escaping link" "../outside/secret.txt" "$(t 10 readlink "$MNT/esc_rel")"
check_eq "lstat says symlink" "symbolic link" "$(sf %F "$MNT/esc_dir")"
t 10 touch -h -d @1000000000 "$MNT/esc_abs" || fail "touch -h on an escaping link failed"
check_eq "touch -h changed the link's time in the mount" 1000000000 "$(sf %Y "$MNT/esc_abs")"
t 10 setfattr -h -n user.x -v 1 "$MNT/esc_abs" 2>/dev/null && fail "setfattr -h user.x on a symlink: expected EPERM got success"
if is_root; then t 10 chown -h 1234:1234 "$MNT/esc_abs" || fail "chown -h on an escaping link failed"; fi
t 10 mv "$MNT/esc_abs" "$MNT/moved_abs" || fail "mv of an escaping link failed"
t 10 ln "$MNT/moved_abs" "$MNT/hardlink_to_link" || fail "hard link of an escaping link failed"
t 10 cp -a "$MNT/esc_rel" "$MNT/copied_rel" || fail "cp -a of an escaping link failed"
check_eq "cp -a copies the link, not the target" "../outside/secret.txt" "$(t 10 readlink "$MNT/copied_rel")"
t 10 rm "$MNT/esc_dir" || fail "rm of a link to an outside directory failed"
t 30 rm -rf "$MNT/sub" || fail "rm -rf of a directory holding an escaping link failed"
t 30 tar -C "$MNT" -cf "$T/ws.tar" . || fail "tar of the mount failed"
tar -tvf "$T/ws.tar" >"$T/ws.tar.list"; grep -q 'esc_rel -> ../outside/secret.txt' "$T/ws.tar.list" || fail "tar did not store esc_rel as a symlink"
t 30 cp -a "$MNT/dir" "$MNT/dir-copy" || fail "cp -a of a directory failed"
t 30 grep -r outside-canary "$MNT" >/dev/null && fail "grep -r (which does not follow symlinks) found outside content in the mount"
check_outside "after operations on escaping links"

# The swap: keep a directory fd on race/, then replace the real race/ by a
# symlink to the outside, then act through the fd.
swap="mv '$WS/race' '$WS/race.orig' && ln -s '$OUTSIDE' '$WS/race' && '$FSOP' tree -mox '$WS' > '$T/real.before'"
t 30 "$FSOP" dirfd-ops "$MNT/race" "$swap" >"$T/race.out" 2>&1 || fail "dirfd-ops: $(cat "$T/race.out")"
REAL_BEFORE=$(sha256sum <"$T/real.before" | cut -c1-64)
sed 's/^/    # /' "$T/race.out"
if grep -q canary "$T/race.out"; then fail "a read through the old directory returned outside content: $(grep canary "$T/race.out")"; else ok "no outside content read through the swapped directory"; fi
check_outside "after operations through a directory swapped for an escaping symlink"
for p in newfile newdir newlink g; do
	[ -e "$OUTSIDE/$p" ] || [ -L "$OUTSIDE/$p" ] && fail "$p was created outside the workspace"
done
check_eq "outside f intact" outside-canary-f "$(cat "$OUTSIDE/f")"
finish
