#!/bin/bash
# flock and fcntl locks (POSIX record locks with F_GETLK, OFD locks) between
# processes, on real and new files.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
check_run "POSIX, OFD and flock locks on a real file" "$FSOP" locks "$MNT/file.txt"
check_run "POSIX, OFD and flock locks on a new file" "$FSOP" locks "$MNT/dir/new.lock"
# flock(1): a second holder waits, then gets it.
t 20 flock "$MNT/big.bin" -c 'sleep 2' &
holder=$!
sleep 0.5
t 10 flock -n "$MNT/big.bin" -c true
check_eq "flock -n while another process holds it fails" 1 $?
wait $holder
t 10 flock -n "$MNT/big.bin" -c true
check_eq "flock -n after the holder exited succeeds" 0 $?
finish
