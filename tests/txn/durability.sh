#!/bin/bash
# The durability contract as the README states it (txfs writes through: no
# kernel writeback cache, bench/results/2026-11-24-writeback.md says why),
# one sentence a check, each trying to break it:
#  - data that write(2) accepted survives the death of the writer (SIGKILL,
#    its fd never closed) and a clean unmount;
#  - it survives the death of the daemon (SIGKILL) without fsync, also while
#    the writer still holds the file open;
#  - data written before a commit is in the commit without close or fsync,
#    so is a store through a shared mapping that was msync'ed (the mapping
#    and the fd still live);
#  - a rollback is final: data written before it through an fd still open
#    is not written back later (not at close, not at unmount), and the
#    file's size is the real one at once;
#  - a store through a shared mapping, not msync'ed, does not come back
#    after a rollback either, not even when syncfs forces the write-back;
#  - write, fsync, SIGKILL of the daemon: the data is there after remount.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1

# The writer dies (SIGKILL) right after its write(2) returned (t would
# take the writer's 137 for its own timeout: a shell in between reports it).
died=$(t 30 bash -c '"$@"; echo $?' _ "$PY" -c '
import os, signal, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT, 0o644)
os.pwrite(fd, b"WRITER-DIED", 0)
fd2 = os.open(sys.argv[2], os.O_RDWR)
os.pwrite(fd2, b"REAL-WRITER-DIED", 4096)
os.kill(os.getpid(), signal.SIGKILL)
' "$MNT/died.txt" "$MNT/big.bin")
check_eq "the writer was killed by SIGKILL (exit 137)" 137 "$died"
check_content "write(2) then SIGKILL of the writer: the data is in the mount" "$MNT/died.txt" WRITER-DIED
remount || exit 1
check_content "and after a clean unmount and mount" "$MNT/died.txt" WRITER-DIED
check_eq "the write into a real file too" REAL-WRITER-DIED "$(t 10 "$FSOP" pread "$MNT/big.bin" 4096 16)"

# The daemon dies while the writer is alive and holds the file open (no
# fsync, no close: a close could flush what a kernel cache still held).
timeout 120 "$PY" -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
os.pwrite(fd, b"HELD-OPEN", 0)
os.pwrite(fd, b"-MORE", 9)
fd2 = os.open(sys.argv[2], os.O_RDWR)
os.pwrite(fd2, b"Z", 0)
print("written", flush=True)
time.sleep(100)
' "$MNT/dir/held.txt" "$MNT/dir/a.txt" >"$T/held.out" 2>&1 &
holder=$!
for i in $(seq 100); do [ -s "$T/held.out" ] && break; sleep 0.1; done
check_eq "a writer wrote and holds its fds" written "$(cat "$T/held.out")"
kill_and_detach || exit 1
kill -9 $holder 2>/dev/null
wait $holder 2>/dev/null
txfs_mount || exit 1
check_content "SIGKILL of the daemon, fd still open, no fsync: the new file's data survived" "$MNT/dir/held.txt" HELD-OPEN-MORE
check_content "and the real file's change" "$MNT/dir/a.txt" Z
check_content "the real file is untouched" "$WS/dir/a.txt" a

# Commit without close or fsync: the write and the msync'ed store are in it.
exec 7<>"$MNT/file.txt"
check_eq "write without close" OK "$(fdop 7 write 0 COMMITTED)"
t 30 "$PY" -c '
import mmap, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
m[100:109] = b"MAPPED-IN"
m.flush()                       # msync(MS_SYNC)
rc = subprocess.run(sys.argv[2:]).returncode
sys.exit(rc)                    # the mapping and the fd die only now
' "$MNT/big.bin" bash -c "echo commit > '$MNT/$CTL/ctl'"
check_eq "commit while the fd and the mapping are open" 0 "$?"
check_content "the write is in the real file" "$WS/file.txt" "$(printf 'COMMITTED')"
check_eq "the msync'ed store is in the real file" MAPPED-IN "$(t 10 "$FSOP" pread "$WS/big.bin" 100 9)"
exec 7>&-
check_eq "closing the fd afterwards stages nothing" "" "$(t 10 cat "$MNT/$CTL/changes")"

# Rollback with the fd still open: nothing comes back later.
size=$(stat -c %s "$WS/dir/sub/deep.txt")
exec 7<>"$MNT/dir/sub/deep.txt"
check_eq "write past the end through a held fd" OK "$(fdop 7 write 5000 ROLLED-BACK)"
check_eq "the file grew" 5011 "$(sf %s "$MNT/dir/sub/deep.txt")"
check_ctl "rollback with the fd open" OK rollback
check_eq "after the rollback the size is the real one at once" "$size" "$(sf %s "$MNT/dir/sub/deep.txt")"
exec 7>&-
check_eq "after closing the old fd: still the real size" "$size" "$(sf %s "$MNT/dir/sub/deep.txt")"
check_content "and the real content" "$MNT/dir/sub/deep.txt" deep
check_eq "and nothing is staged" "" "$(t 10 cat "$MNT/$CTL/changes")"
remount || exit 1
check_content "after unmount and mount: the real content" "$MNT/dir/sub/deep.txt" deep
check_eq "nothing is staged" "" "$(t 10 cat "$MNT/$CTL/changes")"

# The check below relies on syncfs writing back a dirty shared page: a
# store, no msync, syncfs, and the store is staged.
out=$(t 30 "$PY" -c '
import mmap, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
m[300:312] = b"SYNCFS-FLUSH"
subprocess.run(["sync", "-f", sys.argv[1]])
print(open(sys.argv[2]).read().strip())
m.close()
os.close(fd)
' "$MNT/big.bin" "$MNT/$CTL/changes")
check_eq "mmap store, no msync, syncfs: the store is staged" "M big.bin" "$out"

# A store through a shared mapping, not msync'ed, then rollback: the page
# must not be written back into the next transaction (syncfs forces the
# write-back of whatever the kernel still holds dirty).
out=$(t 30 "$PY" -c '
import mmap, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDWR)
m = mmap.mmap(fd, 0)
m[200:212] = b"MAPPED-NOSYN"
rc = subprocess.run(["bash", "-c", "echo rollback > \"$0\"", sys.argv[2]]).returncode
subprocess.run(["sync", "-f", sys.argv[1]])
print(rc)
m.close()
os.close(fd)
' "$MNT/big.bin" "$MNT/$CTL/ctl")
check_eq "mmap store, rollback (mapping still live), forced write-back: rollback OK" 0 "$out"
check_eq "the real content of that range after all" "$(t 10 "$FSOP" pread "$WS/big.bin" 200 12 | od -An -tx1)" "$(t 10 "$FSOP" pread "$MNT/big.bin" 200 12 | od -An -tx1)"
check_eq "and nothing is staged" "" "$(t 10 cat "$MNT/$CTL/changes")"

# fsync, then SIGKILL of the daemon.
check_run "write and fsync" "$FSOP" pwrite "$MNT/synced.txt" 0 FSYNCED fsync
kill_and_detach || exit 1
txfs_mount || exit 1
check_content "write, fsync, SIGKILL of the daemon: the data is there" "$MNT/synced.txt" FSYNCED
txn_finish
