#!/bin/bash
# -o noopen: the daemon answers the kernel's first OPEN with ENOSYS, so the
# kernel opens and closes files without asking it (no OPEN, no RELEASE) and
# READ and WRITE come without a file handle. What must still hold, checked
# by the bytes it leaves (cmp, od, the real directory after unmount):
#  1. O_TRUNC truncates: `echo x > f` over "hello world\n" leaves "x\n"
#     (not "x\nllo world\n"), `: > f` empties a new file; rollback restores;
#  2. deny write: appending, truncating and writing are refused, the bytes
#     stay as they were, in the mount and in the real directory;
#  3. deny read: cat, head -c1 and python's read() get EACCES (under -o
#     open; -o noopen refuses a policy with read rules, at mount and at
#     reload: a page written into the file would be read back from the
#     kernel's cache with no request to check);
#  4. a policy with `exec deny` is refused at mount (exec is judged at
#     OPEN), with a `txfs:` message naming noopen and exec, nothing mounted;
#  5. an unlinked file (new, or real) keeps its bytes for an open fd, takes
#     writes, and is not counted as added once closed;
#  6. .txfs/status, status.json and ctl work (counts change, commit lands);
#  7. after a rollback an fd on a rolled-back file answers ESTALE (not the
#     cached bytes), the daemon lives on, the path is ENOENT;
#  8. across a commit an fd keeps its file and its writes reach the path;
#  9. cc, git (fsck --full), sqlite3 and tar c | tar x + diff -r work;
# 10. a policy reload that denies reading a file the kernel has cached
#     (real or new) refuses the next cat and head, and (noopen) the next
#     read through an fd that was open across it.
# Points 1, 5, 7, 8 and 10 run under -o open too, so both modes are
# pinned. The daemon's request counts (TXFS_STATS) show that under noopen
# the kernel stopped sending OPEN and RELEASE, and that under -o open it did
# not. (open_mode.sh checks which mode a mount without either option takes.)
. "$(dirname "$0")/lib.sh"
# this scenario picks each mount's mode itself (the open pass of tests/run
# sets TXFS_TEST_MOUNT_OPTS=open for every other one)
TXFS_TEST_MOUNT_OPTS=
command -v python3 >/dev/null || { fail "python3 is not installed"; exit 1; }
for p in cc git sqlite3 tar diff cmp od; do
	command -v "$p" >/dev/null || { fail "$p is not installed"; exit 1; }
done
fixture
printf 'hello world\n' >"$WS/hello.txt"
printf 'keep these bytes\n' >"$WS/denied.txt"
printf 'top secret\n' >"$WS/secret.txt"
printf 'real, read, then denied\n' >"$WS/rl-real.txt"
"$FSOP" fill "$WS/held.bin" 300001 9
cp "$WS/hello.txt" "$T/hello.orig"
cp "$WS/denied.txt" "$T/denied.orig"
cp "$WS/held.bin" "$T/held.orig"
printf 'x\n' >"$T/x.expect"
cat >"$T/rw.policy" <<'EOF'
# noopen.sh: refusals must hold without OPEN
deny write denied.txt
deny read secret.txt
EOF
{ cat "$T/rw.policy"; echo 'exec deny **/forbidden-tool'; } >"$T/exec.policy"
# what -o noopen can enforce: rw.policy without its read rule
grep -v '^deny read' "$T/rw.policy" >"$T/w.policy"
# a read rule that depends on the caller: the pages an exempt program read
# would be served to everyone from the kernel's cache (no request to check)
{ cat "$T/rw.policy"; echo 'deny read **/byprog.txt except-by /usr/bin/python3*'; } >"$T/readby.policy"
TXFS_POLICY=$T/rw.policy
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid \
	GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
mkdir -p "$HOME"

# Python steps through one fd; each prints key=OK or key=ERR:ENAME or
# key=BAD:what, one line.
cat >"$T/fd.py" <<'EOF'
import errno, os, subprocess, sys, time

def res(key, fn):
    try:
        v = fn()
        return "%s=%s" % (key, "OK" if v is None else v)
    except OSError as e:
        return "%s=ERR:%s" % (key, errno.errorcode.get(e.errno, e.errno))

def pread_all(fd, n):
    out = b""
    while len(out) < n:
        b = os.pread(fd, n - len(out), len(out))
        if not b:
            break
        out += b
    return out

def same(got, want):
    return None if got == want else "BAD:%d bytes, %s" % (
        len(got), "differ" if len(got) == len(want) else "want %d" % len(want))

def ctl(path, verb):
    r = subprocess.run(["sh", "-c", 'echo "$1" > "$2"', "sh", verb, path],
                       stderr=subprocess.PIPE, timeout=60)
    return None if r.returncode == 0 else "BAD:exit %d %s" % (
        r.returncode, r.stderr.decode(errors="replace").strip())

cmd, path = sys.argv[1], sys.argv[2]
out = []
if cmd == "unlinked":  # a new file, written, unlinked, used, closed
    data = bytes((i * 7 + 3) & 255 for i in range(100000))
    more = bytes((i * 13 + 1) & 255 for i in range(20000))
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    out.append(res("write", lambda: None if os.write(fd, data) == len(data) else "BAD:short"))
    out.append(res("unlink", lambda: os.unlink(path)))
    out.append(res("gone", lambda: None if not os.path.lexists(path) else "BAD:still there"))
    out.append(res("read", lambda: same(pread_all(fd, 200000), data)))
    out.append(res("write2", lambda: None if os.pwrite(fd, more, len(data)) == len(more) else "BAD:short"))
    out.append(res("read2", lambda: same(pread_all(fd, 200000), data + more)))
    out.append(res("size", lambda: None if os.fstat(fd).st_size == len(data) + len(more) else "BAD:%d" % os.fstat(fd).st_size))
    out.append(res("close", lambda: os.close(fd)))
elif cmd == "unlinked-real":  # a real file, opened, unlinked, read
    want = open(sys.argv[3], "rb").read()
    fd = os.open(path, os.O_RDONLY)
    out.append(res("unlink", lambda: os.unlink(path)))
    out.append(res("gone", lambda: None if not os.path.lexists(path) else "BAD:still there"))
    def read_fd():
        b = b""
        while True:
            c = os.read(fd, 65536)
            if not c:
                return same(b, want)
            b += c
    out.append(res("read", read_fd))
    out.append(res("close", lambda: os.close(fd)))
elif cmd == "rollback-open":  # read (cached), rollback by another process
    want = open(sys.argv[4], "rb").read()
    fd = os.open(path, os.O_RDONLY)
    out.append(res("read", lambda: same(os.read(fd, 4096), want)))
    out.append(res("rollback", lambda: ctl(sys.argv[3], "rollback")))
    out.append(res("pread", lambda: "BAD:read %r" % os.pread(fd, 4096, 0)))
    out.append(res("open", lambda: "BAD:opened, read %r" % open(path, "rb").read()))
    os.close(fd)
elif cmd == "rollback-fd":  # KIND: what the fd did before another process rolls back
    kind, ctlp = sys.argv[4], sys.argv[3]
    def estale_soon(fn):  # attributes of a gone file: ESTALE within 5 s
        for _ in range(100):
            try:
                fn()
            except OSError as e:
                return None if e.errno == errno.ESTALE else "BAD:%s" % errno.errorcode.get(e.errno, e.errno)
            time.sleep(0.05)
        return "BAD:still answered after 5 s"
    if kind == "symlink":  # the kernel caches a symlink's target in a page
        os.symlink("target-before-rollback", path)
        out.append(res("readlink", lambda: same(os.readlink(path).encode(), b"target-before-rollback")))
        fd = os.open(path, os.O_PATH | os.O_NOFOLLOW)
        out.append(res("rollback", lambda: ctl(ctlp, "rollback")))
        try:
            out.append("readlinkat=BAD:read %r" % os.readlink("", dir_fd=fd))
        except OSError:
            out.append("readlinkat=refused")
    else:
        small = bytes((i * 5 + 1) & 255 for i in range(1000))
        pages = bytes((i * 3 + 7) & 255 for i in range(3 * 4096 + 100))
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
        data = small if kind in ("small", "savepoint") else pages
        def write_all():  # "read": in 100-byte pieces, no page whole
            step = 100 if kind == "read" else len(data)
            for o in range(0, len(data), step):
                if os.pwrite(fd, data[o:o + step], o) != len(data[o:o + step]):
                    return "BAD:short"
        out.append(res("write", write_all))
        if kind == "read":  # now its first page is up to date in the kernel
            out.append(res("read", lambda: same(os.pread(fd, 4096, 0), data[:4096])))
        if kind == "savepoint":  # grown after a savepoint, rolled back to it
            out.append(res("savepoint", lambda: ctl(ctlp, "savepoint s1")))
            out.append(res("grow", lambda: None if os.pwrite(fd, b"G" * 3000, 1000) == 3000 else "BAD:short"))
            out.append(res("rollback", lambda: ctl(ctlp, "rollback s1")))
            out.append(res("size", lambda: None if os.fstat(fd).st_size == 1000 else "BAD:size %d" % os.fstat(fd).st_size))
            out.append(res("pread", lambda: same(os.pread(fd, 8192, 0), small)))
            out.append(res("rollback2", lambda: ctl(ctlp, "rollback")))
        else:
            out.append(res("rollback", lambda: ctl(ctlp, "rollback")))
            # within the size: past it, the kernel would ask for the size
            out.append(res("pread", lambda: "BAD:read %d bytes" % len(os.pread(fd, 4096, 0))))
            out.append(res("pread2", lambda: "BAD:read %d bytes" % len(os.pread(fd, 4096, 8192))))
        out.append(res("fstat", lambda: estale_soon(lambda: os.fstat(fd))))
    os.close(fd)
elif cmd == "reload-open":  # read (cached), `txfs policy reload` denies them, read
    txfs, mnt = sys.argv[3], sys.argv[4]
    fds = [os.open(p, os.O_RDONLY) for p in [path] + sys.argv[5:]]
    for fd in fds:
        out.append(res("read", lambda: None if os.read(fd, 4096) else "BAD:empty"))
    def reload():
        r = subprocess.run([txfs, "policy", "reload", mnt], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
        return None if r.returncode == 0 else "BAD:exit %d" % r.returncode
    out.append(res("reload", reload))
    for fd in fds:
        out.append(res("pread", lambda: "BAD:read %d bytes" % len(os.pread(fd, 4096, 0))))
        os.close(fd)
elif cmd == "commit-open":  # read, commit by another process, read, write
    want = open(sys.argv[4], "rb").read()
    new = b"NEW" + want[3:]
    fd = os.open(path, os.O_RDWR)
    out.append(res("read", lambda: same(os.read(fd, 4096), want)))
    out.append(res("commit", lambda: ctl(sys.argv[3], "commit")))
    out.append(res("pread", lambda: same(os.pread(fd, 4096, 0), want)))
    out.append(res("write", lambda: None if os.pwrite(fd, b"NEW", 0) == 3 else "BAD:short"))
    out.append(res("pread2", lambda: same(os.pread(fd, 4096, 0), new)))
    out.append(res("newopen", lambda: same(open(path, "rb").read(), new)))
    out.append(res("close", lambda: os.close(fd)))
elif cmd == "read":  # open + read(): what python says
    try:
        open(path).read()
        out.append("read=OK")
    except PermissionError as e:
        out.append("read=PermissionError")
    except OSError as e:
        out.append("read=%s" % type(e).__name__)
print(" ".join(out))
EOF
py() { t 120 python3 "$T/fd.py" "$@" 2>&1; }

# one field of the first line of .txfs/status ("N added" etc.)
count_of() { # WORD STATUS-TEXT
	sed -n "1s/.* \([0-9][0-9]*\) $1[,;].*/\1/p" <<<"$2"
}
status() { t 30 cat "$MNT/.txfs/status" 2>&1; }
ctl() { check_run "[$M] echo $1 > .txfs/ctl" bash -c 'echo "$1" > "$MNT/.txfs/ctl"' sh "$1"; }

# check_bytes WHAT FILE EXPECTED-FILE: cmp, with od of both if they differ
check_bytes() {
	if t 30 cmp "$2" "$3" >"$T/cmp.out" 2>&1; then
		ok "$1"
	else
		fail "$1: expected $(od -An -c "$3" | head -3 | tr -s ' ') got $(t 30 od -An -c "$2" 2>&1 | head -3 | tr -s ' ') ($(cat "$T/cmp.out"))"
	fi
}

# check_refused WHAT SCRIPT: the shell step fails with "Permission denied"
check_refused() {
	tsh 30 "$2" >"$T/ref.out" 2>&1
	local rc=$?
	if [ $rc != 0 ] && grep -q 'Permission denied' "$T/ref.out"; then
		ok "[$M] $1 refused (exit $rc: $(head -c 120 "$T/ref.out"))"
	else
		fail "[$M] $1: expected a failure with Permission denied got exit $rc: $(head -c 300 "$T/ref.out")"
	fi
}

# ---- 1. O_TRUNC truncates ------------------------------------------------------
p1() {
	tsh 30 'echo x > "$MNT/hello.txt"' || fail "[$M] echo x > hello.txt: expected exit 0 got $?"
	check_bytes "[$M] echo x > hello.txt leaves exactly x\\n" "$MNT/hello.txt" "$T/x.expect"
	check_eq "[$M] its size" 2 "$(sf %s "$MNT/hello.txt")"
	tsh 30 'printf "layer bytes\n" > "$MNT/p1-new.txt"' || fail "[$M] create p1-new.txt: exit $?"
	check_content "[$M] a file created in the layer" "$MNT/p1-new.txt" "layer bytes"
	tsh 30 ': > "$MNT/p1-new.txt"' || fail "[$M] : > p1-new.txt: expected exit 0 got $?"
	check_eq "[$M] : > p1-new.txt empties it (size, bytes read)" "0 0" \
		"$(sf %s "$MNT/p1-new.txt") $(t 30 cat "$MNT/p1-new.txt" | wc -c)"
	ctl rollback
	check_bytes "[$M] after rollback hello.txt reads hello world\\n again" "$MNT/hello.txt" "$T/hello.orig"
	check_errno "[$M] after rollback p1-new.txt is gone" ENOENT stat "$MNT/p1-new.txt"
	check_bytes "[$M] the real hello.txt was never touched" "$WS/hello.txt" "$T/hello.orig"
}

# ---- 2. deny write -----------------------------------------------------------------
p2() {
	check_refused "echo y >> denied.txt (deny write)" 'echo y >> "$MNT/denied.txt"'
	check_refused "echo y > denied.txt (deny write)" 'echo y > "$MNT/denied.txt"'
	check_refused "truncate -s 0 denied.txt (deny write)" 'truncate -s 0 "$MNT/denied.txt"'
	check_refused "dd conv=notrunc into denied.txt (deny write)" \
		'printf Z | dd of="$MNT/denied.txt" bs=1 seek=3 conv=notrunc status=none'
	check_bytes "[$M] denied.txt keeps its bytes in the mount" "$MNT/denied.txt" "$T/denied.orig"
	check_eq "[$M] denied.txt keeps its size" "$(stat -c %s "$T/denied.orig")" "$(sf %s "$MNT/denied.txt")"
	# a shared mmap: the open succeeds under noopen, the page write-back
	# is refused (msync EACCES), and the kernel's cached page that holds
	# the refused bytes is dropped right after (polled: it is queued)
	check_eq "[$M] a shared mmap write to denied.txt: msync refused" msync=EACCES \
		"$(t 30 python3 -c 'import mmap,os,sys
fd=os.open(sys.argv[1],os.O_RDWR); m=mmap.mmap(fd,0); m[0:4]=b"XXXX"
try: m.flush(); print("msync=ok")
except OSError as e: print("msync="+__import__("errno").errorcode[e.errno])' "$MNT/denied.txt" 2>&1)"
	for _ in $(seq 20); do cmp -s "$MNT/denied.txt" "$T/denied.orig" && break; sleep 0.1; done
	check_bytes "[$M] after the refused mmap write denied.txt shows its own bytes" "$MNT/denied.txt" "$T/denied.orig"
}

# ---- 3. deny read -----------------------------------------------------------------
p3() {
	check_refused "cat secret.txt (deny read)" 'cat "$MNT/secret.txt"'
	check_refused "head -c1 secret.txt (deny read)" 'head -c1 "$MNT/secret.txt"'
	grep -q 'top secret' "$T/ref.out" && fail "[$M] the refused read printed the secret: $(cat "$T/ref.out")"
	check_eq "[$M] python open(secret.txt).read() raises PermissionError" read=PermissionError \
		"$(py read "$MNT/secret.txt")"
}

# ---- 4. exec deny + noopen: refused -----------------------------------------------
# refused_noopen WHAT POLICY WORD: mounting with POLICY and -o noopen exits
# non-zero with a "txfs: ..." message naming noopen and WORD, and leaves
# nothing mounted.
refused_noopen() {
	local keep=$TXFS_POLICY
	TXFS_POLICY=$2
	txfs_mount --expect-fail -o noopen
	TXFS_POLICY=$keep
	if [ "$RC" != 0 ] && [[ $ERR == txfs:* ]] && [[ $ERR == *noopen* ]] && [[ $ERR == *"$3"* ]]; then
		ok "[$M] a policy with $1 and -o noopen is refused (exit $RC): $ERR"
	else
		fail "[$M] $1 + -o noopen: expected a non-zero exit and 'txfs: ...noopen...$3...' on stderr got exit $RC: $ERR"
	fi
	if is_mounted "$MNT"; then
		fail "[$M] $1 + -o noopen: expected nothing mounted at $MNT got $(fstype_of "$MNT")"
		txfs_umount || force_detach
	else
		ok "[$M] $1 + -o noopen: no mount at $MNT (/proc/self/mounts)"
	fi
}

p4() {
	refused_noopen "exec deny" "$T/exec.policy" exec
	refused_noopen "a deny read rule" "$T/rw.policy" read
	refused_noopen "a read rule with except-by" "$T/readby.policy" except-by
}

# ---- 5. unlinked but open ------------------------------------------------------------
p5() {
	local s0 s1 a0 d0 i
	s0=$(status)
	a0=$(count_of added "$s0") d0=$(count_of deleted "$s0")
	[ -n "$a0" ] && [ -n "$d0" ] || fail "[$M] .txfs/status: expected 'N added, ... N deleted' got: $(head -1 <<<"$s0")"
	check_eq "[$M] a new file: write 100000 bytes, unlink, read them, write 20000 more, read all" \
		"write=OK unlink=OK gone=OK read=OK write2=OK read2=OK size=OK close=OK" \
		"$(py unlinked "$MNT/p5-$M.bin")"
	t 30 sync -f "$MNT"
	for i in $(seq 50); do
		s1=$(status)
		[ "$(count_of added "$s1")" = "$a0" ] && break
		sleep 0.1
	done
	check_eq "[$M] after close, the unlinked file is not counted as added" "$a0" "$(count_of added "$s1")"
	check_errno "[$M] after close, the unlinked file is gone" ENOENT stat "$MNT/p5-$M.bin"
	check_eq "[$M] a real file: open O_RDONLY, unlink in the mount, read all its bytes" \
		"unlink=OK gone=OK read=OK close=OK" "$(py unlinked-real "$MNT/held.bin" "$T/held.orig")"
	s1=$(status)
	check_eq "[$M] status: the real file counts as deleted, nothing as added" "$((d0 + 1)) $a0" \
		"$(count_of deleted "$s1") $(count_of added "$s1")"
	check_bytes "[$M] the real held.bin is still there" "$WS/held.bin" "$T/held.orig"
	ctl rollback
	check_bytes "[$M] after rollback held.bin is back in the mount" "$MNT/held.bin" "$T/held.orig"
}

# ---- 6. control files ------------------------------------------------------------------
p6() {
	local s1 s2 a1 i
	s1=$(status)
	[ -n "$s1" ] && [[ $s1 == transaction* ]] && ok "[$M] cat .txfs/status: $(head -1 <<<"$s1")" ||
		fail "[$M] cat .txfs/status: expected 'transaction N: ...' got '$s1'"
	a1=$(count_of added "$s1")
	for i in 1 2 3; do
		tsh 30 "printf 'file %d\n' $i > \"\$MNT/c6-$i.txt\"" || fail "[$M] create c6-$i.txt: exit $?"
	done
	s2=$(status)
	[ "$s1" != "$s2" ] && ok "[$M] status changed after 3 creates: $(head -1 <<<"$s2")" ||
		fail "[$M] status after 3 creates: expected a change got the same text"
	check_eq "[$M] status counts the 3 new files as added" "$((${a1:-0} + 3))" "$(count_of added "$s2")"
	check_run "[$M] cat .txfs/status.json | python3 -m json.tool" \
		bash -c 'set -o pipefail; cat "$MNT/.txfs/status.json" | python3 -m json.tool'
	check_eq "[$M] status.json's added" "$((${a1:-0} + 3))" \
		"$(t 30 python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["added"])' "$MNT/.txfs/status.json" 2>&1)"
	t 30 "$TXFS" status "$MNT" >"$T/st.out" 2>&1
	check_eq "[$M] txfs status MNT counts them too" "$((${a1:-0} + 3))" "$(count_of added "$(cat "$T/st.out")")"
	ctl commit
	for i in 1 2 3; do
		check_content "[$M] after commit the real directory has c6-$i.txt" "$WS/c6-$i.txt" "file $i"
	done
	check_eq "[$M] after commit status counts nothing added" 0 "$(count_of added "$(status)")"
}

# ---- 7. rollback while open -----------------------------------------------------------
p7() {
	printf 'rolled back soon\n' >"$T/r7.expect"
	tsh 30 "cat \"\$T/r7.expect\" > \"\$MNT/r7-$M.txt\"" || fail "[$M] create r7-$M.txt: exit $?"
	check_eq "[$M] an fd on a new file across a rollback: pread ESTALE, new open ENOENT" \
		"read=OK rollback=OK pread=ERR:ESTALE open=ERR:ENOENT" \
		"$(py rollback-open "$MNT/r7-$M.txt" "$MNT/.txfs/ctl" "$T/r7.expect")"
	check_eq "[$M] the daemon is still the same process" "$DAEMON_PID" "$(daemon_pid)"
	check_run "[$M] ls of the mount works after that" ls "$MNT"
	check_errno "[$M] the rolled-back file is gone" ENOENT stat "$MNT/r7-$M.txt"
	# under noopen a rollback waits only for the files whose pages the
	# kernel may hold (itab_kpages): whichever way the fd last touched its
	# file, no read through it sees the rolled-back bytes
	local k
	for k in small pages read; do
		check_eq "[$M] an fd that wrote ($k) across a rollback: pread ESTALE, fstat ESTALE" \
			"write=OK$([ $k = read ] && echo ' read=OK') rollback=OK pread=ERR:ESTALE pread2=ERR:ESTALE fstat=OK" \
			"$(py rollback-fd "$MNT/r7$k-$M.bin" "$MNT/.txfs/ctl" $k)"
	done
	check_eq "[$M] an fd across a rollback to a savepoint: the size and bytes from before it" \
		"write=OK savepoint=OK grow=OK rollback=OK size=OK pread=OK rollback2=OK fstat=OK" \
		"$(py rollback-fd "$MNT/r7sp-$M.bin" "$MNT/.txfs/ctl" savepoint)"
	check_eq "[$M] an O_PATH fd on a symlink across a rollback: its target is not read" \
		"readlink=OK rollback=OK readlinkat=refused" \
		"$(py rollback-fd "$MNT/r7link-$M" "$MNT/.txfs/ctl" symlink)"
}

# ---- 10. a reload denies reading files whose pages the kernel holds ----------------
# under noopen a read of cached pages never reaches the daemon: the reload
# must drop the pages of every file the kernel may hold pages of
# (itab_kpages); a closed file's are dropped with its entry, so the check
# keeps an fd open across the reload. Under -o open an open fd keeps
# the access its open was granted, so the fd part is noopen's alone.
p10() {
	local f
	tsh 30 'printf "layer, read, then denied\n" > "$MNT/rl-new.txt"' || fail "[$M] create rl-new.txt: exit $?"
	for f in rl-real.txt rl-new.txt; do
		check_run "[$M] cat $f before the reload" cat "$MNT/$f"
	done
	cp "$TXFS_POLICY" "$T/pol.saved"
	printf 'deny read rl-real.txt rl-new.txt\n' >>"$TXFS_POLICY"
	if [ $M = noopen ]; then
		# no-open cannot enforce read rules: the reload is refused,
		# the old policy stays and the files read as before
		local out rc
		out=$(t 30 "$TXFS" policy reload "$MNT" 2>&1)
		rc=$?
		if [ $rc != 0 ] && [[ $out == *read* ]] && [[ $out == *"old policy stays"* ]]; then
			ok "[$M] a reload that denies reading is refused (exit $rc)"
		else
			fail "[$M] reload with deny read under -o noopen: expected a refusal got exit $rc: $out"
		fi
		for f in rl-real.txt rl-new.txt; do
			check_run "[$M] cat $f after the refused reload" cat "$MNT/$f"
		done
	else
		check_run "[$M] txfs policy reload (deny read rl-*.txt)" "$TXFS" policy reload "$MNT"
		for f in rl-real.txt rl-new.txt; do
			check_refused "cat $f after the reload" "cat \"\$MNT/$f\""
			check_refused "head -c 5 $f after the reload" "head -c 5 \"\$MNT/$f\""
		done
	fi
	cp "$T/pol.saved" "$TXFS_POLICY"
	check_run "[$M] txfs policy reload (back)" "$TXFS" policy reload "$MNT"
	check_run "[$M] cat rl-real.txt after the second reload" cat "$MNT/rl-real.txt"
}

# ---- 8. commit while open ---------------------------------------------------------------
p8() {
	printf 'committed bytes\n' >"$T/c8.expect"
	printf 'NEWmitted bytes\n' >"$T/c8.new"
	tsh 30 "cat \"\$T/c8.expect\" > \"\$MNT/c8-$M.txt\"" || fail "[$M] create c8-$M.txt: exit $?"
	check_eq "[$M] an fd on a new file across a commit: same bytes, then a write through it" \
		"read=OK commit=OK pread=OK write=OK pread2=OK newopen=OK close=OK" \
		"$(py commit-open "$MNT/c8-$M.txt" "$MNT/.txfs/ctl" "$T/c8.expect")"
	check_bytes "[$M] the path shows the write made after the commit" "$MNT/c8-$M.txt" "$T/c8.new"
	check_bytes "[$M] the real file has the committed bytes (the write is staged)" "$WS/c8-$M.txt" "$T/c8.expect"
}

# ---- 9. ordinary programs ---------------------------------------------------------------
p9() {
	local d=$MNT/p9 rc
	printf '#include <stdio.h>\nint main(void) { printf("built %%d\\n", 6 * 7); return 0; }\n' >"$T/hello.c"
	tsh 30 'mkdir "$MNT/p9" && cp "$T/hello.c" "$MNT/p9/"' || fail "[$M] mkdir p9, cp hello.c: exit $?"
	check_eq "[$M] cc builds and runs a program" "built 42" \
		"$(tsh 120 'cd "$MNT/p9" && cc -O1 -o hello hello.c && ./hello' 2>&1)"
	check_run "[$M] git init, add, commit" bash -c 'cd "$MNT/p9" && mkdir repo && cd repo &&
		git init -q && seq 1000 > a.txt && mkdir src && cp ../hello.c src/ &&
		git add -A && git commit -qm first'
	tsh 120 'cd "$MNT/p9/repo" && git fsck --full' >"$T/fsck.out" 2>&1
	rc=$?
	check_eq "[$M] git fsck --full: exit 0, nothing but Checking lines" "0 " \
		"$rc $(grep -v '^Checking' "$T/fsck.out" | head -c 300)"
	check_eq "[$M] git: one commit, a clean work tree" "1 " \
		"$(tsh 60 'cd "$MNT/p9/repo" && git log --oneline | wc -l') $(tsh 60 'cd "$MNT/p9/repo" && git status --porcelain')"
	check_eq "[$M] sqlite3 create, insert, select, integrity_check" "ok|3|60" \
		"$(t 120 sqlite3 "$d/t.db" "CREATE TABLE t(id INTEGER PRIMARY KEY, n INTEGER);
			INSERT INTO t(n) VALUES (10), (20), (30);
			SELECT (SELECT integrity_check FROM pragma_integrity_check) || '|' || count(*) || '|' || sum(n) FROM t;" 2>&1)"
	check_run "[$M] tar c of a subtree, tar x elsewhere in the mount, diff -r identical" bash -c '
		set -e; cd "$MNT/p9"; mkdir tree; cp -a ../dir ../deep ../big.bin ../sparse.bin tree/
		echo layer > tree/dir/new.txt; tar -cf tree.tar tree; mkdir out; tar -C out -xf tree.tar
		diff -r tree out/tree'
}

# ---- the two modes ------------------------------------------------------------------------
# count of request OP in the daemon's TXFS_STATS file of mode $M
cnt() { awk -v op="$1" '$1 == "op" && $2 == op { print $3; f = 1 } END { if (!f) print 0 }' "$T/stats-$M"; }
for M in open noopen; do
	STATE=$T/state-$M
	opts=(-o open)
	TXFS_POLICY=$T/rw.policy
	[ $M = noopen ] && opts=(-o noopen) && TXFS_POLICY=$T/w.policy && p4
	export TXFS_STATS=$T/stats-$M
	txfs_mount "${opts[@]}" || { unset TXFS_STATS; continue; }
	unset TXFS_STATS
	p1
	[ $M = noopen ] && p2
	[ $M = open ] && p3
	p5
	[ $M = noopen ] && p6
	p8
	p10
	snapshot_real	# commits are done: the rest leaves the real directory alone
	p7
	[ $M = noopen ] && p9
	txfs_umount || { force_detach; continue; }
	check_bytes "[$M] after unmount the real hello.txt is hello world\\n" "$WS/hello.txt" "$T/hello.orig"
	check_bytes "[$M] after unmount the real denied.txt has its bytes" "$WS/denied.txt" "$T/denied.orig"
	check_bytes "[$M] after unmount the real c8-$M.txt has the committed bytes" "$WS/c8-$M.txt" "$T/c8.expect"
	if [ $M = noopen ]; then
		for i in 1 2 3; do check_content "[$M] after unmount the real c6-$i.txt" "$WS/c6-$i.txt" "file $i"; done
	fi
	# the request counts: under noopen one OPEN (answered ENOSYS), no RELEASE
	if [ ! -s "$T/stats-$M" ]; then
		fail "[$M] TXFS_STATS: expected request counts in $T/stats-$M got none"
	elif [ $M = noopen ]; then
		[ "$(cnt OPEN)" -le 1 ] && [ "$(cnt RELEASE)" = 0 ] &&
			ok "[$M] the kernel stopped sending OPEN/RELEASE: OPEN $(cnt OPEN), RELEASE $(cnt RELEASE), READ $(cnt READ)" ||
			fail "[$M] requests: expected OPEN <= 1 and RELEASE 0 got OPEN $(cnt OPEN), RELEASE $(cnt RELEASE)"
	else
		[ "$(cnt OPEN)" -ge 10 ] && ok "[$M] OPEN requests sent: $(cnt OPEN)" ||
			fail "[$M] requests: expected OPEN >= 10 got $(cnt OPEN)"
	fi
done
left=$(awk -v t="$T/" 'index($2, t) == 1 { print $2 " " $3 }' /proc/self/mounts)
check_eq "no mount left under $T (/proc/self/mounts)" "" "$left"
finish
