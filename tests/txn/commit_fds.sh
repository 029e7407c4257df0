#!/bin/bash
# A commit never needs file descriptors in proportion to the change (issue
# 23, 2): the daemon's open-files limit is set to 256 (prlimit) and a
# change of 2,200 objects is made, rolled back (so the kernel knows every
# node), made again and committed: 1,200 hole punches, 600 renames over
# existing files, 400 removals. The commit succeeds, the real directory
# equals a model made by the same program in a plain directory, the
# daemon never holds more than the limit, and a second round (all the
# nodes known again) commits too.
. "$(dirname "$0")/txnlib.sh"

mkdir -p "$WS/p" "$WS/r" "$WS/d"
"$PY" - "$WS" <<'EOF'
import os, sys
ws = sys.argv[1]
blk = b"x" * 8192
for i in range(1200):
    with open(f"{ws}/p/{i:04d}", "wb") as f: f.write(blk)
for i in range(600):
    for n in ("a", "b"):
        with open(f"{ws}/r/{n}{i:04d}", "wb") as f: f.write(n.encode() * 100)
for i in range(400):
    with open(f"{ws}/d/{i:04d}", "wb") as f: f.write(b"d")
EOF
CHANGE='
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.fallocate.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, ctypes.c_long]
d = sys.argv[1]
for i in range(1200):
    fd = os.open(f"{d}/p/{i:04d}", os.O_RDWR)
    if libc.fallocate(fd, 3, 0, 4096):   # PUNCH_HOLE | KEEP_SIZE
        sys.exit("fallocate: " + os.strerror(ctypes.get_errno()))
    os.close(fd)
for i in range(600):
    os.rename(f"{d}/r/a{i:04d}", f"{d}/r/b{i:04d}")
for i in range(400):
    os.unlink(f"{d}/d/{i:04d}")
'
MODEL=$T/model
cp -a "$WS" "$MODEL"
"$PY" -c "$CHANGE" "$MODEL" || { fail "the change fails in a plain directory (test bug)"; exit 1; }
MODEL=

txfs_mount || exit 1
pid=$(daemon_pid)
t 30 prlimit --pid "$pid" --nofile=256:256 || { fail "prlimit on the daemon"; exit 1; }
check_eq "the daemon's limit is 256" "256 256" "$(prlimit --pid "$pid" --nofile -o SOFT,HARD --noheadings | tr -s ' ' | sed 's/^ //')"
fds() { ls "/proc/$pid/fd" 2>/dev/null | wc -l; }	# 0: not readable

t 120 "$PY" -c "$CHANGE" "$MNT" || fail "the change in the mount (first time)"
check_ctl "roll the first run back" OK rollback
t 120 "$PY" -c "$CHANGE" "$MNT" || fail "the change in the mount (again)"
stat "$MNT"/p/* "$MNT"/r/* >/dev/null 2>&1	# every node known
echo "# the daemon holds $(fds) descriptors before the commit"
check_ctl "commit 2,200 objects with a limit of 256 descriptors" OK commit
if [ "$(fds)" = 0 ]; then
	echo "# /proc/$pid/fd is not readable here: descriptors not counted"
elif [ "$(fds)" -le 128 ]; then
	ok "the daemon holds $(fds) descriptors after the commit (at most half the limit)"
else
	fail "the daemon holds $(fds) descriptors after the commit (more than half the limit)"
fi
txfs_umount || exit 1
check_tree "the real directory equals the model" "$WS" "$T/model"
[ -e "$WS/.txfs.staging" ] && fail "staging folder left"

# A second round on the same mount (nodes known and pinned again).
txfs_mount || exit 1
pid=$(daemon_pid)
t 30 prlimit --pid "$pid" --nofile=256:256
t 60 "$PY" -c '
import os, sys
d = sys.argv[1]
for i in range(600):
    with open(f"{d}/r/a{i:04d}", "w") as f: f.write("again")
' "$MNT" || fail "new files in the mount"
ls -l "$MNT/r" >/dev/null
check_ctl "commit 600 new files" OK commit
t 60 "$PY" -c '
import os, sys
d = sys.argv[1]
for i in range(600):
    os.rename(f"{d}/r/a{i:04d}", f"{d}/r/b{i:04d}")
' "$MNT" || fail "renames over in the mount"
check_ctl "commit 600 renames over files the last commit made" OK commit
check_eq "r/ holds the 600 renamed files" 600 "$(ls "$MNT/r" | grep -c '^b')"
txn_finish
