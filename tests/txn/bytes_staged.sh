#!/bin/bash
# "bytes staged" (and `limit bytes`, which follows it) is what the layer
# holds now (issue 13, point 3; it only grew): overwrites count once,
# truncates, deletes, replaced files, rolled-back savepoints and released
# unlinked-open files count down; under `limit bytes 6M`, write 5 MiB,
# delete it, write 5 MiB again succeeds, and going past the limit still
# fails with EDQUOT and leaves the file as it was.
. "$(dirname "$0")/txnlib.sh"
printf 'limit bytes 6M\n' >"$T/limit.policy"
TXFS_POLICY=$T/limit.policy
fixture
txfs_mount || exit 1
M=1048576

staged() { t 30 sed -n 's/^bytes staged: //p' "$MNT/$CTL/status"; }
check_staged() { check_eq "$1: bytes staged" "$2" "$(staged)"; }
# wait_staged WHAT N: the release of a closed file reaches the daemon
# shortly after close(2) returns.
wait_staged() {
	local i
	for i in $(seq 50); do [ "$(staged)" = "$2" ] && break; sleep 0.1; done
	check_staged "$1" "$2"
}
# dd_to NAME MIB [conv=...]: write MIB MiB of random bytes to NAME.
dd_to() { check_run "write $2 MiB to $1 ${3:-}" dd if=/dev/urandom of="$MNT/$1" bs=$M count="$2" ${3:-} status=none; }

check_staged "nothing staged at first" 0
dd_to a 5
check_staged "after writing 5 MiB" $((5 * M))
dd_to a 5 conv=notrunc
check_staged "an overwrite counts once" $((5 * M))
check_run "rm" rm "$MNT/a"
check_staged "after rm" 0
dd_to a 5
check_staged "after writing again" $((5 * M))
check_run "truncate to 1 MiB" truncate -s 1M "$MNT/a"
check_staged "after truncate" $M
check_run "truncate up to 100 MiB (a hole, nothing stored)" truncate -s 100M "$MNT/a"
check_staged "after truncate up" $M
dd_to b 4
check_run "mv b over a (a's bytes go)" mv "$MNT/b" "$MNT/a"
check_staged "after the rename over a" $((4 * M))

check_ctl "savepoint s" OK savepoint s
dd_to c 2
check_staged "inside the savepoint" $((6 * M))
check_ctl "rollback s" OK rollback s
check_staged "after rollback to the savepoint" $((4 * M))
check_eq "c is gone" "" "$(ls "$MNT/c" 2>/dev/null)"

# an unlinked file still open holds its bytes until it is released
exec 3<>"$MNT/open"
check_run "write 1 MiB to an open file" dd if=/dev/urandom of=/dev/fd/3 bs=$M count=1 conv=notrunc status=none
check_run "rm the open file" rm "$MNT/open"
check_staged "unlinked but open: still held" $((5 * M))
exec 3>&-
wait_staged "after the last close" $((4 * M))

check_run "rm a" rm "$MNT/a"
check_staged "all deleted" 0
dd_to d 6
out=$(t 60 dd if=/dev/urandom of="$MNT/e" bs=$M count=1 status=none 2>&1)
case $out in
*"Disk quota exceeded"*) ok "past the limit: EDQUOT" ;;
*) fail "past the limit: expected EDQUOT got '$out'" ;;
esac
check_ctl "rollback" OK rollback
check_staged "after rollback" 0
txn_finish
