#!/bin/bash
# When commit does not patch a real file in place (fs/commit/commit.h): each case
# checks the committed bytes and which path was taken (a patch keeps the
# real file's inode number, a new copy does not).
#  - a file hard-linked from outside the workspace keeps CS_COPY: the
#    shared inode gets the new content, as before CS_PATCH existed (both
#    names are one file), and its link count stays;
#  - a file changed underneath: commit refused (EBUSY), the real file as
#    the other writer left it; --force then writes a new copy holding both
#    changes (what the mount showed);
#  - a setuid file: a new copy, with the mode a plain directory gives;
#  - a program running from the real directory (open for writing would
#    fail with ETXTBSY): the commit still succeeds;
#  - a partial commit (txfs commit MNT PATH) patches the named file in
#    place and leaves the other staged; the next commit patches that one.
. "$(dirname "$0")/txnlib.sh"
fixture
ino() { stat -c %i "$1"; }
sha() { sha256sum <"$1" | cut -d' ' -f1; }
mkdir -p "$T/outside"
"$FSOP" fill "$T/outside/shared.bin" 1M 1
ln "$T/outside/shared.bin" "$WS/linked.bin"
truncate -s 64M "$WS/conflict.bin"
"$FSOP" fill "$T/r1m" 1M 2
dd if="$T/r1m" of="$WS/conflict.bin" bs=1M seek=10 conv=notrunc status=none
"$FSOP" fill "$WS/suid.bin" 1M 3
chmod 4755 "$WS/suid.bin"
cp /bin/sleep "$WS/prog"
"$FSOP" fill "$WS/part_a.bin" 1M 4
"$FSOP" fill "$WS/part_b.bin" 1M 5
model
ln "$MODEL/linked.bin" "$T/outside/model_shared.bin"	# the same link count
declare -A ino0
for f in linked.bin conflict.bin suid.bin prog part_a.bin part_b.bin; do ino0[$f]=$(ino "$WS/$f"); done
txfs_mount || exit 1

# --- hard-linked from outside ---
both '"$FSOP" pwrite linked.bin 500000 through-the-mount && sha256sum linked.bin'
check_ctl "commit of the hard-linked file" OK commit
check_eq "linked.bin: same inode (written into the shared inode, CS_COPY)" "${ino0[linked.bin]}" "$(ino "$WS/linked.bin")"
check_eq "linked.bin: the real file has the new content" "$(sha "$MODEL/linked.bin")" "$(sha "$WS/linked.bin")"
check_eq "the outside name is the same file: same content" "$(sha "$WS/linked.bin")" "$(sha "$T/outside/shared.bin")"
check_eq "link count of the shared inode stays 2" 2 "$(stat -c %h "$WS/linked.bin")"

# --- changed underneath ---
in_mnt '"$FSOP" pwrite conflict.bin 33554432 mine' || exit 1
"$FSOP" pwrite "$WS/conflict.bin" 10485800 theirs
real_after_theirs=$(sha "$WS/conflict.bin")
check_ctl "commit over a change underneath" EBUSY commit
check_eq "conflict.bin: the real file is as the other writer left it" "$real_after_theirs" "$(sha "$WS/conflict.bin")"
check_eq "conflict.bin: still the same inode" "${ino0[conflict.bin]}" "$(ino "$WS/conflict.bin")"
case $(ctl_text) in
*"conflict.bin: "*) ok "ctl lists conflict.bin" ;;
*) fail "ctl should list conflict.bin, got: $(ctl_text)" ;;
esac
check_cli "txfs commit --force" 0 commit --force "$MNT"
cp "$WS/conflict.bin" "$T/expect.bin" 2>/dev/null
"$FSOP" pwrite "$MODEL/conflict.bin" 10485800 theirs
"$FSOP" pwrite "$MODEL/conflict.bin" 33554432 mine
check_eq "conflict.bin after --force holds both changes" "$(sha "$MODEL/conflict.bin")" "$(sha "$WS/conflict.bin")"
[ "$(ino "$WS/conflict.bin")" != "${ino0[conflict.bin]}" ] &&
	ok "conflict.bin after --force is a new copy (changed underneath: no patch)" ||
	fail "conflict.bin after --force kept its inode: patched in place over a file changed underneath"

# --- setuid ---
both '"$FSOP" pwrite suid.bin 1000 s && sha256sum suid.bin'
check_ctl "commit of the setuid file" OK commit
check_eq "suid.bin: new content" "$(sha "$MODEL/suid.bin")" "$(sha "$WS/suid.bin")"
[ "$(ino "$WS/suid.bin")" != "${ino0[suid.bin]}" ] &&
	ok "suid.bin: a new copy (a setuid file is never patched in place)" ||
	fail "suid.bin: patched in place"
# a write clears setuid unless the writer has CAP_FSETID (root): the
# plain copy took the same write
check_eq "suid.bin: the mode the same write gives in a plain directory" \
	"$(stat -c %a "$MODEL/suid.bin")" "$(stat -c %a "$WS/suid.bin")"

# --- a running program ---
"$WS/prog" 60 &
prog_pid=$!
sleep 0.3
both '"$FSOP" pwrite prog 100 X && sha256sum prog'
busy=$("$PY" -c '
import os, sys
try:
    os.close(os.open(sys.argv[1], os.O_WRONLY)); print("writable")
except OSError as e:
    print("busy" if e.errno == 26 else "other")' "$WS/prog")
check_ctl "commit of a program that runs from the real directory" OK commit
check_eq "prog: new content" "$(sha "$MODEL/prog")" "$(sha "$WS/prog")"
if [ "$busy" = busy ]; then	# ETXTBSY: the kernel refuses writers
	[ "$(ino "$WS/prog")" != "${ino0[prog]}" ] &&
		ok "prog: a new copy (running, so not writable in place)" ||
		fail "prog: kept its inode while running: patched in place?"
fi
kill "$prog_pid" 2>/dev/null
wait "$prog_pid" 2>/dev/null

# --- partial commit ---
both '"$FSOP" pwrite part_a.bin 70000 A && "$FSOP" pwrite part_b.bin 70000 B'
b_before=$(sha "$WS/part_b.bin")
check_cli "txfs commit MNT part_a.bin" 0 commit "$MNT" part_a.bin
check_eq "part_a.bin: committed" "$(sha "$MODEL/part_a.bin")" "$(sha "$WS/part_a.bin")"
check_eq "part_a.bin: patched in place (same inode)" "${ino0[part_a.bin]}" "$(ino "$WS/part_a.bin")"
check_eq "part_b.bin: untouched in the real directory" "$b_before" "$(sha "$WS/part_b.bin")"
check_eq "part_b.bin: still staged" "M part_b.bin" "$(t 30 cat "$MNT/$CTL/changes")"
check_ctl "commit of the rest" OK commit
check_eq "part_b.bin: committed" "$(sha "$MODEL/part_b.bin")" "$(sha "$WS/part_b.bin")"
check_eq "part_b.bin: patched in place (same inode)" "${ino0[part_b.bin]}" "$(ino "$WS/part_b.bin")"
txfs_umount || exit 1
check_tree "after umount the real directory equals the model" "$WS" "$MODEL" -ox
txn_finish
