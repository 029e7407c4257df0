#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mmap_rollback - a shared mapping of a file the rollback discarded (README
# "What it guarantees", txfs-design(7) ROLLBACK): "a store into a shared
# mapping of such a file kills the writer with SIGBUS (the kernel cannot
# write the page back to a file that is gone)". A file made in the
# transaction is mapped MAP_SHARED by a python process, the transaction is
# rolled back, then the process stores into the mapping: it dies of SIGBUS
# (exit 135), having printed what it did up to the store and nothing
# after. Forms:
#   - the mapping never touched, rolled back by another process (echo
#     rollback > .txfs/ctl from the shell), the fd then answers ESTALE to
#     pread and pwrite (txfs-design(7): "a descriptor on a file that no
#     longer exists answers ESTALE");
#   - the page read before, rolled back with `txfs rollback MNT`;
#   - a store before the rollback (dirty, no msync), the process rolls back
#     itself (its own write to .txfs/ctl), then stores again;
#   - a store msync'ed before the rollback;
#   - rolled back to a savepoint that predates the file (rollback s1);
#   - a read-only shared mapping, a load after the rollback; a private
#     mapping, a store after the rollback: not named by the documentation
#     (which names stores into shared mappings); both die of SIGBUS as a
#     read through the fd answers ESTALE (a mapping has no errno to give).
#   - a real file (committed by the control below) stored into through a
#     shared mapping and left dirty (no msync) at the rollback, then
#     unmapped and closed (the close writes dirty pages back): the store
#     must not come back after the rollback (txfs-design(7), DURABILITY);
#     also written through the fd first (the layer holds it) and rolled
#     back by the writer itself. Nothing is staged, the mount and the real
#     directory show the committed bytes. (Before the fix the store came
#     back staged, and the last commit wrote it into the real file.)
#   - files made in the transaction that outlive the rollback: made before
#     a savepoint and rolled back to it; committed while mapped and rolled
#     back fully: the store after the savepoint or commit is discarded;
#     and a store made before a savepoint, still dirty, survives a
#     rollback to it;
#   - stores racing the rollback (two threads storing into a shared mapping
#     of a real file the writer had pwrite()n 'X' into): no X survives.
# After each: the file is gone from the view, nothing is staged, the real
# directory is byte-identical (mtimes too), the daemon is alive and the
# mount works (write, read, remove a file). The control: a mapping of a new
# file kept across a commit goes on working (store, msync: staged, then
# committed). At the end one more file is committed: the commit holds only
# it, nothing of the killed writers comes back in it, and after unmount
# the real directory is the one before plus the committed files.
# As root and, when run as root, again as txfstest (TXFS_TEST_USER), like
# tests/policy/unpriv.sh; -o noopen too in the noopen pass
# (TXFS_TEST_MOUNT_OPTS is passed on). About 1.5 s a user (3 s in all).
. "$(dirname "$0")/txnlib.sh"

# ---- the unprivileged half (only when run as root): tests/policy/unpriv.sh
. "$(dirname "$0")/../policy/unpriv.sh"

# The writer: maps PATH, does what FLAGS say, has the rollback done, then
# the access after it. Prints one line a step (flushed), so the output
# says how far it got before the signal.
#   new       create PATH (8 KiB), else open the existing file
#   wfirst    pwrite one byte at offset 100 before mapping
#   ro, priv  PROT_READ / MAP_PRIVATE (default: read-write, MAP_SHARED)
#   touch     read the first page before the rollback
#   dirty     store before the rollback (no msync); msync: and msync it
#   sp        take savepoint s1 first (the process itself)
#   self      roll back itself (rollback, or rollback s1 with sp); else
#             touch READY and wait for GO (the shell rolls back)
#   fdio      after the rollback, pread and pwrite through the fd
#   load      after the rollback, load; else store (and msync)
#   closeonly after the rollback, only unmap and close
cat >"$T/mm.py" <<'EOF'
import errno, mmap, os, sys, time
path, ctl, flags, ready, go = sys.argv[1:6]
flags = flags.split(",")
def say(s):
    sys.stdout.write(s + "\n"); sys.stdout.flush()
def verb(v):
    c = os.open(ctl, os.O_WRONLY | os.O_TRUNC)
    os.write(c, (v + "\n").encode())
    os.close(c)
    say(v + ": done")
if "sp" in flags:
    verb("savepoint s1")
if "new" in flags:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"new file\n" + b"n" * (8192 - 9))
else:
    fd = os.open(path, os.O_RDWR)
if "wfirst" in flags:
    os.pwrite(fd, b"w", 100)
    say("written before")
prot = mmap.PROT_READ if "ro" in flags else mmap.PROT_READ | mmap.PROT_WRITE
share = mmap.MAP_PRIVATE if "priv" in flags else mmap.MAP_SHARED
m = mmap.mmap(fd, 8192 if "new" in flags else 4096, flags=share, prot=prot)
say("mapped")
if "touch" in flags:
    say("read before: %r" % m[0:8])
if "dirty" in flags or "msync" in flags:
    m[0:4] = b"PRE-"
    say("stored before")
    if "msync" in flags:
        m.flush()
        say("msync before")
if "self" in flags:
    verb("rollback s1" if "sp" in flags else "rollback")
else:
    open(ready, "w").close()
    for _ in range(600):
        if os.path.exists(go):
            break
        time.sleep(0.05)
    say("go")
if "fdio" in flags:
    for name, op in (("pread", lambda: os.pread(fd, 4, 0)),
                     ("pwrite", lambda: os.pwrite(fd, b"W", 0))):
        try:
            op()
            say(name + " OK")
        except OSError as e:
            say(name + " " + errno.errorcode.get(e.errno, str(e.errno)))
if "closeonly" in flags:
    pass
elif "load" in flags:
    say("loaded %r" % m[0:4])
else:
    m[0:5] = b"STORE"
    say("stored after")
    m.flush()
    say("msync after")
m.close()
os.close(fd)
say("end")
EOF

fixture
txfs_mount || exit 1
lst "$WS" -mox >"$T/real0"
N=0

# writer NAME PATH FLAGS [HOW]: start the writer on PATH (relative to the
# mount); unless FLAGS has self, roll back when it is ready, by HOW: ctl
# (echo rollback > .txfs/ctl, the default) or cli (txfs rollback MNT).
# Sets WRC (its exit status: 135 = SIGBUS) and WOUT (its lines, '|'-joined).
writer() {
	local name=$1 path=$2 flags=$3 how=${4:-ctl} pid i
	rm -f "$T/ready" "$T/go" "$T/w.rc"
	# no core file (SIGBUS dumps core by default), no "Bus error" line
	(cd "$T" && ulimit -c 0 && timeout -k 5 60 "$PY" "$T/mm.py" "$MNT/$path" "$MNT/$CTL/ctl" \
		"$flags" "$T/ready" "$T/go" >"$T/w.out" 2>&1; echo $? >"$T/w.rc") 2>/dev/null &
	pid=$!
	if [[ ,$flags, != *,self,* ]]; then
		for i in $(seq 300); do
			[ -e "$T/ready" ] || [ -e "$T/w.rc" ] && break
			sleep 0.05
		done
		if [ -e "$T/ready" ]; then
			if [ "$how" = cli ]; then
				cli_run rollback "$MNT" || fail "$name: txfs rollback $MNT: exit $CRC: $CERR"
			else
				check_ctl "$name: rolled back by another process" OK rollback
			fi
		else
			fail "$name: the writer did not get ready: $(tr '\n' '|' <"$T/w.out")"
		fi
		touch "$T/go"
	fi
	wait "$pid"
	WRC=$(cat "$T/w.rc" 2>/dev/null)
	WOUT=$(tr '\n' '|' <"$T/w.out")
}

# after NAME PATH: the file is gone, nothing is staged, the real directory
# is byte-identical, the daemon is alive and the mount works.
after() {
	local name=$1 path=$2
	check_errno_of "$name: $path is gone from the view" ENOENT stat "$MNT/$path"
	check_eq "$name: nothing is staged" "" "$(t 30 cat "$MNT/$CTL/changes")"
	check_lst "$name: the real directory is byte-identical (mtimes too)" "$WS" "$T/real0" -mox
	[ -n "$(daemon_pid)" ] && ok "$name: the daemon is alive" || fail "$name: the daemon is gone"
	N=$((N + 1))
	if in_mnt "echo probe$N > probe && [ \"\$(cat probe)\" = probe$N ] && cat dir/a.txt >/dev/null && rm probe"; then
		ok "$name: the mount works (write, read, remove)"
	fi
	check_eq "$name: and nothing is staged after that" "" "$(t 30 cat "$MNT/$CTL/changes")"
}

# sigbus NAME WANT: the writer died of SIGBUS right at the access after
# the rollback: its output is WANT (the lines up to it), nothing after.
sigbus() {
	if [ "$WRC" = 135 ] && [ "$WOUT" = "$2" ]; then
		ok "$1: the writer died of SIGBUS (exit 135) at the access after the rollback ($WOUT)"
	else
		fail "$1: expected SIGBUS (exit 135) after '$2' got exit $WRC after '$WOUT'"
	fi
}

# ---- what the documentation names: a store into a shared mapping
writer "untouched mapping, rolled back from outside" n1.bin new,fdio
sigbus "untouched mapping, rolled back from outside" "mapped|go|pread ESTALE|pwrite ESTALE|"
after "untouched mapping" n1.bin

writer "page read before, txfs rollback" dir/n2.bin new,touch cli
sigbus "page read before, txfs rollback" "mapped|read before: b'new file'|go|"
after "page read before, txfs rollback" dir/n2.bin

writer "dirty before, the writer rolls back itself" n3.bin new,dirty,self
sigbus "dirty before, the writer rolls back itself" "mapped|stored before|rollback: done|"
after "dirty before, rolled back by the writer" n3.bin

writer "msync'ed before" n4.bin new,msync
sigbus "msync'ed before" "mapped|stored before|msync before|go|"
after "msync'ed before" n4.bin

writer "rolled back to a savepoint older than the file" n5.bin new,sp,touch,self
sigbus "rolled back to a savepoint older than the file" \
	"savepoint s1: done|mapped|read before: b'new file'|rollback s1: done|"
after "rolled back to savepoint s1" n5.bin
check_ctl "savepoint s1 released" OK release s1

# ---- not named: a load from a read-only shared mapping, a store into a
# private one (a read through the fd answers ESTALE: no page to map)
writer "read-only shared mapping, a load after" n6.bin new,ro,touch,load
sigbus "read-only shared mapping, a load after" "mapped|read before: b'new file'|go|"
after "read-only shared mapping" n6.bin

writer "private mapping, a store after" n7.bin new,priv
sigbus "private mapping, a store after" "mapped|go|"
after "private mapping" n7.bin

# ---- a store before the rollback, none after: the writer ends normally
# and its dirty page is written back nowhere
writer "dirty before, unmapped and closed after" n8.bin new,dirty,closeonly
check_eq "dirty before, unmapped and closed after: the writer ends normally" "0 mapped|stored before|go|end|" "$WRC $WOUT"
after "dirty before, closed after" n8.bin

# ---- the control: the same mapping across a commit goes on working
out=$(cd "$T" && t 60 "$PY" -c '
import mmap, os, sys
path, ctl = sys.argv[1:3]
fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"new file\n" + b"n" * (8192 - 9))
m = mmap.mmap(fd, 8192)
c = os.open(ctl, os.O_WRONLY | os.O_TRUNC); os.write(c, b"commit\n"); os.close(c)
m[0:5] = b"STORE"; m.flush()
print(open(sys.argv[3]).read().strip())
m.close(); os.close(fd)
print("end")' "$MNT/kept.bin" "$MNT/$CTL/ctl" "$MNT/$CTL/changes" 2>&1 | tr '\n' '|')
check_eq "a mapping of a new file across a commit: the store after it works and is staged" "M kept.bin|end|" "$out"
check_eq "the commit holds the file as it was" "8192 new file" "$(stat -c %s "$WS/kept.bin") $(head -1 "$WS/kept.bin")"
check_ctl "commit the store" OK commit
check_eq "the store is in the real file" "STORE" "$(head -c 5 "$WS/kept.bin")"
lst "$WS" -mox >"$T/real0"	# kept.bin is real now: the new reference

# ---- a real file the layer does not hold (kept.bin, committed above):
# opened read-write, mapped, stored into (no msync), rolled back by
# another process while the page is still dirty; the writer then unmaps
# and closes (the close writes dirty pages back). The store was made
# before the rollback: it must not come back after it (txfs-design(7)).
writer "real file, dirty before, closed after" kept.bin dirty,closeonly
check_eq "real file, dirty before, closed after: the writer ends normally" "0 mapped|stored before|go|end|" "$WRC $WOUT"
check_eq "real file, dirty before: nothing is staged after the close" "" "$(t 30 cat "$MNT/$CTL/changes")"
check_eq "real file, dirty before: the mount shows the committed bytes" "STORE" "$(t 30 head -c 5 "$MNT/kept.bin")"
check_lst "real file, dirty before: the real directory is byte-identical (mtimes too)" "$WS" "$T/real0" -mox
# the same file written through the fd first (the layer holds it), and
# the writer rolling back itself
writer "real file, written, dirty before, closed after" kept.bin wfirst,dirty,closeonly
check_eq "real file, written, dirty before, closed after: the writer ends normally" "0 written before|mapped|stored before|go|end|" "$WRC $WOUT"
writer "real file, dirty before, the writer rolls back itself, closes after" kept.bin dirty,self,closeonly
check_eq "real file, dirty before, rolled back by the writer: it ends normally" "0 mapped|stored before|rollback: done|end|" "$WRC $WOUT"
check_eq "real file, both: nothing is staged after the closes" "" "$(t 30 cat "$MNT/$CTL/changes")"
check_eq "real file, both: the mount shows the committed bytes" "STORE" "$(t 30 head -c 5 "$MNT/kept.bin")"
check_lst "real file, both: the real directory is byte-identical (mtimes too)" "$WS" "$T/real0" -mox

# ---- files made in the transaction that outlive the rollback (found by
# the attack of 2026-11-27): one made before a savepoint, the mapping's
# store made after it, rolled back to the savepoint; one committed while
# mapped, stored into after the commit, fully rolled back. The writer
# itself rolls back; the mapping must read the old bytes at once, and
# nothing may be staged after its close.
cat >"$T/mm2.py" <<'EOF'
import mmap, os, sys
path, ctl, before, mode = sys.argv[1:5]
def verb(v):
    c = os.open(ctl, os.O_WRONLY | os.O_TRUNC)
    os.write(c, (v + "\n").encode())
    os.close(c)
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
if mode == "refused":
    # a rollback to a savepoint that does not exist is refused: the
    # store made before it, still dirty, is kept
    m[0:8] = b"NEWSTORE"
    try:
        verb("rollback nosuch")
    except OSError:
        print("refused")
else:
    if mode == "before":
        m[0:8] = b"NEWSTORE"
    verb("commit" if mode == "commit" else "savepoint s2")
    if mode != "before":
        m[0:8] = b"NEWSTORE"
    verb("rollback" if mode == "commit" else "rollback s2")
print(m[0:len(before)].decode())
m.close(); os.close(fd)
print("end")
EOF
# mm2 WHAT FILE MODE EXPECT STAGED READS: FILE (made by the caller) goes
# through mm2.py in MODE; its output (EXPECT: lines joined by |, the last
# one what the mapping reads at the end), the changes staged after its
# close and the file's bytes through the mount are checked.
mm2() {
	local what=$1 f=$2 mode=$3 out
	out=$(cd "$T" && t 60 "$PY" "$T/mm2.py" "$MNT/$f" "$MNT/$CTL/ctl" "${4##*|}" "$mode" 2>&1 | tr '\n' '|')
	check_eq "$what" "$4|end|" "$out"
	check_eq "$what: staged after the close" "$5" "$(t 30 cat "$MNT/$CTL/changes")"
	check_eq "$what: the bytes through the mount" "$6" "$(t 30 cat "$MNT/$f")"
}
echo "made before the savepoint" >"$MNT/sp.txt"
mm2 "a file made before a savepoint, stored into after it: the mapping reads the old bytes after 'rollback s2'" \
	sp.txt sp "made before" "A sp.txt" "made before the savepoint"
check_ctl "savepoint s2 released" OK release s2
check_ctl "sp.txt rolled back" OK rollback
# a store made before a savepoint, not yet written back, survives a
# rollback to it (the savepoint writes mapped pages back first)
echo "stored before the savepoint" >"$MNT/sb.txt"
mm2 "a store made before a savepoint: the mapping still reads it after 'rollback s2'" \
	sb.txt before NEWSTORE "A sb.txt" "NEWSTOREefore the savepoint"
check_ctl "savepoint s2 released again" OK release s2
check_ctl "sb.txt rolled back" OK rollback
# the same, 50 times in a row: a savepoint that only asks the kernel to
# write back (syncfs(2) of the mount, tried 2026-11-27) returns before the
# write-back reaches the daemon and lost 3-11 stores in 50
cat >"$T/mm50.py" <<'EOF'
import mmap, os, sys
d, ctl = sys.argv[1:3]
def verb(v):
    c = os.open(ctl, os.O_WRONLY | os.O_TRUNC)
    os.write(c, (v + "\n").encode())
    os.close(c)
lost = 0
for i in range(50):
    p = "%s/sb50-%d.txt" % (d, i)
    with open(p, "w") as f:
        f.write("stored before the savepoint\n")
    fd = os.open(p, os.O_RDWR)
    m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
    m[0:8] = b"NEWSTORE"
    verb("savepoint s3")
    verb("rollback s3")
    if m[0:8] != b"NEWSTORE":
        lost += 1
    m.close()
    os.close(fd)
    verb("release s3")
    with open(p, "rb") as f:
        if f.read(8) != b"NEWSTORE":
            lost += 1
print("lost", lost)
EOF
check_eq "50 stores made before a savepoint survive a rollback to it (the mapping and the file)" \
	"lost 0" "$(cd "$T" && t 120 "$PY" "$T/mm50.py" "$MNT" "$MNT/$CTL/ctl" 2>&1)"
check_ctl "the 50 files rolled back" OK rollback
# a refused rollback drops nothing: the store made before it, still
# dirty in the mapping, is written back and staged
echo "stored before a refused rollback" >"$MNT/rf.txt"
check_ctl "rf.txt committed" OK commit
mm2 "a rollback to an unknown savepoint is refused; the mapping keeps its store" \
	rf.txt refused "refused|NEWSTORE" "M rf.txt" "NEWSTOREefore a refused rollback"
check_ctl "rf.txt committed again" OK commit
check_eq "and the real file has the store" "NEWSTOREefore a refused rollback" "$(cat "$WS/rf.txt")"

# ---- a store racing the rollback must not carry the discarded
# transaction back (found by the second attack, 2026-11-27): bytes written
# with pwrite(2) before the rollback ('X' at the start of every page of a
# real 2 MiB file), then a second process keeps storing at byte 100 of
# each page through a shared mapping (two threads) while the writer itself
# rolls back. Those stores may land on either side of the rollback; no X
# may survive it, through the mount or in the real file after a commit.
t 60 "$PY" -c 'import sys; open(sys.argv[1], "wb").write(b"A" * (2 << 20))' "$MNT/race.bin"
check_ctl "race.bin committed" OK commit
cat >"$T/race.py" <<'EOF'
import mmap, os, sys, threading
path, ctl = sys.argv[1:3]
size = 2 << 20
fd = os.open(path, os.O_RDWR)
for off in range(0, size, 4096):
    os.pwrite(fd, b"X", off)
os.close(fd)
fd = os.open(path, os.O_RDWR)
m = mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
stop = False
def store(k):
    i = 0
    while not stop:
        for off in range(k * 4096 + 100, size, 8192):
            m[off] = 97 + i % 20
        i += 1
ts = [threading.Thread(target=store, args=(k,)) for k in (0, 1)]
for t in ts:
    t.start()
c = os.open(ctl, os.O_WRONLY | os.O_TRUNC)
os.write(c, b"rollback\n")
os.close(c)
stop = True
for t in ts:
    t.join()
m.close()
os.close(fd)
print("end")
EOF
out=$(cd "$T" && t 120 "$PY" "$T/race.py" "$MNT/race.bin" "$MNT/$CTL/ctl" 2>&1 | tr '\n' '|')
check_eq "stores racing the rollback: the writer ends" "end|" "$out"
xs=$(t 30 "$PY" -c 'import sys; d = open(sys.argv[1], "rb").read(); print(sum(d[o] == 88 for o in range(0, len(d), 4096)))' "$MNT/race.bin")
check_eq "stores racing the rollback: no page shows the X written before it" 0 "$xs"
check_ctl "whatever the racing stores staged: rolled back" OK rollback
check_eq "stores racing the rollback: race.bin reads as committed" "$(( 2 << 20 )) 0" \
	"$(t 30 "$PY" -c 'import sys; d = open(sys.argv[1], "rb").read(); print(len(d), len(d) - d.count(b"A"))' "$MNT/race.bin")"
lst "$WS" -mox >"$T/real0"	# race.bin is real now: the new reference
echo "committed while mapped" >"$MNT/cm.txt"
out=$(cd "$T" && t 60 "$PY" "$T/mm2.py" "$MNT/cm.txt" "$MNT/$CTL/ctl" "committed" commit 2>&1 | tr '\n' '|')
check_eq "a file committed while mapped, stored into after the commit: the mapping reads the committed bytes after the rollback" "committed|end|" "$out"
check_eq "and nothing is staged after the close" "" "$(t 30 cat "$MNT/$CTL/changes")"
check_eq "and the real file holds the committed bytes" "committed while mapped" "$(cat "$WS/cm.txt")"
lst "$WS" -mox >"$T/real0"	# cm.txt is real now: the new reference

# ---- the end: one more commit holds only what was written for it
echo last >"$MNT/last.txt"
check_eq "before the last commit only last.txt is staged" "A last.txt" "$(t 30 cat "$MNT/$CTL/changes")"
check_ctl "the last commit" OK commit
txfs_umount || exit 1
for f in n1.bin dir/n2.bin n3.bin n4.bin n5.bin n6.bin n7.bin n8.bin; do
	[ -e "$WS/$f" ] && fail "$f reached the real directory"
done
ok "no file of a killed writer reached the real directory"
grep -v -e '^\. ' -e '^last\.txt ' "$T/real0" >"$T/real0.nolast"
lst "$WS" -mox | grep -v -e '^\. ' -e '^last\.txt ' >"$T/real1.nolast"
if cmp -s "$T/real0.nolast" "$T/real1.nolast"; then
	ok "after unmount the real directory is the one before plus last.txt (every other entry byte-identical)"
else
	fail "the real directory differs beyond last.txt:"
	diff "$T/real0.nolast" "$T/real1.nolast" | head -20 | sed 's/^/    /'
fi
check_eq "last.txt is real" last "$(cat "$WS/last.txt")"
txn_finish
