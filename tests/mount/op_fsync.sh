#!/bin/bash
# fsync/fdatasync/O_SYNC/sync return success, and what they covered is in
# the layer: the daemon is killed right after they return, and a new mount
# shows the data.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
check_run "write+fsync a new file" "$FSOP" pwrite "$MNT/synced" 0 synced-data fsync
check_run "write+fdatasync a real file" "$FSOP" pwrite "$MNT/big.bin" 70000 DATASYNCED fdatasync
check_run "dd conv=fsync into a real subdirectory" dd if=/dev/urandom of="$MNT/dir/dd.bin" bs=64k count=20 conv=fsync status=none
sum=$(sha256sum <"$MNT/dir/dd.bin")
check_run "O_SYNC write" bash -c 'exec 3>"$MNT/osync"; echo osync >&3' 
check_run "open O_SYNC" "$FSOP" open "$MNT/osync2" wcs
check_run "fsync of a directory" "$FSOP" fsync "$MNT/dir"
check_run "fsync of the mount root" "$FSOP" fsync "$MNT"
check_run "mkdir then fsync the parent" bash -c 'mkdir "$MNT/newdir" && "$FSOP" fsync "$MNT"'
check_run "sync -f on the mount" sync -f "$MNT/synced"
kill_and_detach
txfs_mount || exit 1
check_content "fsynced new file after SIGKILL and remount" "$MNT/synced" "synced-data"
check_eq "fdatasynced real-file write after SIGKILL" DATASYNCED "$(t 10 "$FSOP" pread "$MNT/big.bin" 70000 10)"
check_eq "dd conv=fsync data after SIGKILL" "$sum" "$(t 10 sha256sum <"$MNT/dir/dd.bin")"
t 10 test -d "$MNT/newdir" && ok "directory made before an fsync of its parent exists" || fail "newdir: expected present after SIGKILL got missing"
finish
