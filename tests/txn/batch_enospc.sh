#!/bin/bash
# Group commit (-o batch=MS) and a state disk that another process fills
# while a batch is open (fs/layer/batch.c, batch_room): the batch's pages
# land in blocks the data file was given before the batch opened, so the
# batch is committed whole at the next sync point and nothing that was
# acknowledged is lost. Then, with the disk still full, no new batch is
# opened once the reserve is used up: a write that does not fit gets
# ENOSPC alone,
# the daemon lives, and once room is made everything acknowledged is
# there, also after a remount. The state folder is on a 160 MiB tmpfs
# (root only: it mounts it).
. "$(dirname "$0")/txnlib.sh"
is_root || skip "mounting a small tmpfs for the state folder needs root"
SMALL=$T/small
mkdir -p "$SMALL"
mount -t tmpfs -o size=160m,mode=700 txfs-test-batch "$SMALL" || skip "cannot mount a tmpfs"
trap 'r=$?; umount -l "$SMALL" 2>/dev/null; (exit $r); cleanup' EXIT
STATE=$SMALL/state
fixture

export TXFS_STATS=$T/stats	# the daemon's counts, written at unmount
txfs_mount -o batch=1000 || exit 1
pid=$DAEMON_PID
t 10 mkdir "$MNT/b" || fail "mkdir b"
t 10 sync
# 20 files of 32 KiB acknowledged inside one 1 s batch ...
t 20 "$PY" -c '
import os, sys
for i in range(20):
    with open("%s/b/f%d" % (sys.argv[1], i), "wb") as f:
        f.write(b"%08d" % i * 4096)
' "$MNT" || fail "20 writes into the open batch"
# ... and the disk filled up by someone else before it is committed
t 30 dd if=/dev/zero of="$SMALL/hog" bs=1M status=none 2>/dev/null
echo "# the tmpfs is full: $(df -k "$SMALL" | tail -1)"
check_run "fsync after the disk filled up (the batch is committed)" \
	"$PY" -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.fsync(fd)' "$MNT/b/f19"
check_eq "the daemon lives" "$pid" "$(daemon_pid)"
check_run "all 20 acknowledged files hold their bytes" "$PY" -c '
import sys
for i in range(20):
    if open("%s/b/f%d" % (sys.argv[1], i), "rb").read() != b"%08d" % i * 4096:
        sys.exit("f%d differs" % i)
' "$MNT"
# still full: the data file's reserve takes what it can (every operation
# its own transaction once no batch has room), then what does not fit
# fails alone
t 60 "$FSOP" fill "$MNT/more" 200M 7 >"$T/fill.out" 2>&1
errno=$(sed -n 's/^fsop: [^:]*: [^:]*: \(E[A-Z0-9]*\):.*/\1/p' "$T/fill.out")
check_eq "a write that does not fit while the disk is full fails with" ENOSPC "$errno"
check_eq "the daemon still lives" "$pid" "$(daemon_pid)"
rm -f "$SMALL/hog"
check_run "with room again, a new file" bash -c 'echo after >"$MNT/after"'
remount || exit 1
batched=$(awk '$1 == "batched" { print $2 }' "$T/stats" 2>/dev/null)
[ "${batched:-0}" -ge 20 ] && ok "the writes went through batches ($batched operations batched)" ||
	fail "no batch was used (batched: '${batched}'): the scenario did not run"
check_run "after a remount: the 20 files of the batch" "$PY" -c '
import sys
for i in range(20):
    if open("%s/b/f%d" % (sys.argv[1], i), "rb").read() != b"%08d" % i * 4096:
        sys.exit("f%d differs" % i)
' "$MNT"
check_content "after a remount: the file made after the disk had room" "$MNT/after" after
check_eq "the state log has no LMDB corruption and no lost batch" "" \
	"$(grep -h 'MDB_\|corrupt\|batch' "$STATE"/*.log 2>/dev/null | head -3)"
txn_finish
