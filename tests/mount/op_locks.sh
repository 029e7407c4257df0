#!/bin/bash
# flock and fcntl locks (POSIX record locks with F_GETLK, OFD locks) between
# processes, on real and new files.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
check_run "POSIX, OFD and flock locks on a real file" "$FSOP" locks "$MNT/file.txt"
check_run "POSIX, OFD and flock locks on a new file" "$FSOP" locks "$MNT/dir/new.lock"
# flock(1): a second holder waits, then gets it.
t 30 flock "$MNT/big.bin" -c "touch '$T/held'; sleep 3" &
holder=$!
for i in $(seq 100); do [ -e "$T/held" ] && break; sleep 0.1; done
[ -e "$T/held" ] || fail "flock: the first holder did not get the lock within 10s"
t 10 flock -n "$MNT/big.bin" -c true
check_eq "flock -n while another process holds it fails" 1 $?
wait $holder
t 10 flock -n "$MNT/big.bin" -c true
check_eq "flock -n after the holder exited succeeds" 0 $?
finish
