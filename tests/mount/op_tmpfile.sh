#!/bin/bash
# O_TMPFILE (libfuse 3.14 has no tmpfile operation: killpriv.c hands the
# kernel's FUSE_TMPFILE to op_create): an anonymous file in the mount,
# readable and writable, that linkat can name once; one never named leaves
# nothing behind (not in the layer, not in a commit, not after a remount);
# O_EXCL makes it unlinkable; the policy judges the file as "#tmpfile" in
# its folder and the name linkat gives it as a create and a write there.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
check_run "O_TMPFILE file in the mount root" "$FSOP" tmpfile "$MNT"
check_run "O_TMPFILE in a real subdirectory, linked in as a name" "$FSOP" tmpfile "$MNT/dir" "$MNT/dir/linked"
check_content "linked O_TMPFILE content" "$MNT/dir/linked" "tmpfile-data"
# python: several at once, one named twice, O_EXCL, a folder made here
tmpop() {
	t 20 python3 - "$@" <<'EOF'
import ctypes, errno, os, sys
op, d = sys.argv[1], sys.argv[2]
def tmp(flags=0, i=0):
    fd = os.open(d, os.O_TMPFILE | os.O_RDWR | flags, 0o640)
    os.write(fd, b"%d\n" % i)
    return fd
libc = ctypes.CDLL(None, use_errno=True)
def name(fd, n):
    # linkat(AT_FDCWD, "/proc/self/fd/N", ..., AT_SYMLINK_FOLLOW): python's
    # os.link calls link(2), which does not follow the magic link
    if libc.linkat(-100, b"/proc/self/fd/%d" % fd, -100,
                   os.path.join(d, n).encode(), 0x400) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
if op == "many":
    fds = [tmp(0, i) for i in range(50)]
    for i in (3, 17, 42):
        name(fds[i], "t%d" % i)
    print(sorted(n for n in os.listdir(d) if n.startswith("t")))
elif op == "twice":
    fd = tmp(); name(fd, "once"); name(fd, "twice")
    print(os.stat(os.path.join(d, "once")).st_nlink)
elif op == "excl":
    fd = tmp(os.O_EXCL)
    try:
        name(fd, "excl"); print("linked")
    except OSError as e:
        print(errno.errorcode[e.errno])
elif op == "after-unlink":
    fd = tmp(); name(fd, "gone"); os.unlink(os.path.join(d, "gone"))
    try:
        name(fd, "back"); print("linked")
    except OSError as e:
        print(errno.errorcode[e.errno])
EOF
}
mkdir "$MNT/new" || fail "mkdir new"
check_eq "50 O_TMPFILEs, 3 named" "['t17', 't3', 't42']" "$(tmpop many "$MNT/new")"
check_eq "an O_TMPFILE named twice: nlink" 2 "$(tmpop twice "$MNT/new")"
check_eq "O_TMPFILE|O_EXCL is never named" ENOENT "$(tmpop excl "$MNT/new")"
check_eq "named, unlinked, named again: refused as for any unlinked file" ENOENT "$(tmpop after-unlink "$MNT/new")"
check_eq "what the folder holds" "once t17 t3 t42 twice" "$(ls "$MNT/new" | tr '\n' ' ' | sed 's/ $//')"
# the 47 never named are gone with their descriptors: a commit carries the
# named ones only, and a remount shows the same
check_run "commit" bash -c 'echo commit > "$1/.txfs/ctl"' sh "$MNT"
check_eq "committed: the named O_TMPFILEs in the real folder" "once t17 t3 t42 twice" "$(ls "$WS/new" | tr '\n' ' ' | sed 's/ $//')"
check_eq "committed content" "3 42" "$(cat "$WS/new/t3" "$WS/new/t42" | tr '\n' ' ' | sed 's/ $//')"
check_eq "committed: dir/linked" "tmpfile-data" "$(cat "$WS/dir/linked")"
check_eq "committed: once and twice are one file" "$(stat -c %i "$WS/new/once")" "$(stat -c %i "$WS/new/twice")"
txfs_umount || exit 1
REAL_BEFORE=
txfs_mount || exit 1
check_eq "after a remount" "once t17 t3 t42 twice" "$(ls "$MNT/new" | tr '\n' ' ' | sed 's/ $//')"
# rolled back: a named O_TMPFILE goes like any created file
check_run "O_TMPFILE named, then rollback" "$FSOP" tmpfile "$MNT/new" "$MNT/new/rolled"
check_run "rollback" bash -c 'echo rollback > "$1/.txfs/ctl"' sh "$MNT"
[ -e "$MNT/new/rolled" ] && fail "after rollback: expected new/rolled gone got it" || ok "after rollback: new/rolled gone"
txfs_umount || exit 1
check_real_unchanged
# a daemon killed while files were held open with no name (an O_TMPFILE
# never named, a file unlinked while open): the next mount frees what they
# held (nothing can hold them now), the named files stay
REAL_BEFORE=
txfs_mount || exit 1
staged() { sed -n 's/.*"bytes_staged":\([0-9]*\).*/\1/p' "$MNT/.txfs/status.json"; }
b0=$(staged)
printf 'x%.0s' $(seq 100) >"$MNT/new/keep.txt"
t 20 python3 - "$MNT/new" "$T/held" <<'EOF2' &
import os, sys, time
d, flag = sys.argv[1], sys.argv[2]
a = os.open(d, os.O_TMPFILE | os.O_RDWR, 0o600)
os.write(a, b"t" * 300000)
p = os.path.join(d, "unlinked.bin")
b = os.open(p, os.O_CREAT | os.O_RDWR, 0o600)
os.write(b, b"u" * 200000)
os.unlink(p)
open(flag, "w").close()
for _ in range(150):		# until the test says so (15 s at most)
    if os.path.exists(flag + ".done"):
        break
    time.sleep(0.1)
EOF2
holder=$!
for i in $(seq 100); do [ -e "$T/held" ] && break; sleep 0.1; done
b1=$(staged)
[ "${b1:-0}" -ge $((b0 + 500000)) ] && ok "held unnamed files count in bytes staged: $b0 -> $b1" ||
	fail "bytes staged while held: expected >= $((b0 + 500000)) got '$b1'"
kill_and_detach || exit 1
: >"$T/held.done"
wait "$holder" 2>/dev/null
txfs_mount || exit 1
grep -q "freed 2 files the previous daemon held open with no name" "$T/mount.err" &&
	ok "the mount says it freed the 2 unnamed files" || fail "mount: expected 'freed 2 files ...' got: $(cat "$T/mount.err")"
check_eq "bytes staged after the remount: as before the unnamed files, plus keep.txt" "$((b0 + 100))" "$(staged)"
check_content "keep.txt stays" "$MNT/new/keep.txt" "$(printf 'x%.0s' $(seq 100))"
check_run "rollback" bash -c 'echo rollback > "$1/.txfs/ctl"' sh "$MNT"
txfs_umount || exit 1
check_real_unchanged
# the policy: a folder where nothing may be created gets no O_TMPFILE; a
# name where writes are refused cannot be given to one
cat >"$T/tmp.policy" <<'EOF'
deny create locked/**
deny write guarded/**
EOF
mkdir -p "$WS/locked" "$WS/guarded"
REAL_BEFORE=
TXFS_POLICY=$T/tmp.policy txfs_mount || exit 1
check_errno "O_TMPFILE in a folder where create is denied" EACCES tmpfile "$MNT/locked"
check_errno "linkat of an O_TMPFILE to a write-denied name" EACCES tmpfile "$MNT/dir" "$MNT/guarded/x"
[ -e "$MNT/guarded/x" ] && fail "guarded/x: expected absent got it" || ok "guarded/x absent"
check_run "O_TMPFILE elsewhere still works" "$FSOP" tmpfile "$MNT/dir" "$MNT/dir/ok"
grep -q 'locked/#tmpfile' "$STATE/audit.log" 2>/dev/null &&
	ok "the audit log names the veto of locked/#tmpfile" ||
	fail "audit log: expected a veto of locked/#tmpfile got $(tail -c 300 "$STATE/audit.log" 2>&1)"
txfs_umount || exit 1
check_real_unchanged
finish
