#!/bin/bash
# Round trips (issue 11): with TXFS_STATS=FILE the daemon writes its request
# counts at unmount (fs/daemon/stats.c, bench/tools/reqstats); a close costs no
# FLUSH (the kernel stops sending them after the first ENOSYS), a create
# no LOOKUP or GETATTR of the new file, and the counted loop serves the
# mount like the plain one (the files are all there, the real tree is
# untouched).
. "$(dirname "$0")/lib.sh"
fixture
N=200
export TXFS_STATS=$T/stats
txfs_mount || exit 1
unset TXFS_STATS
tsh 60 'mkdir "$MNT/new" && for i in $(seq '$N'); do echo x > "$MNT/new/f$i"; done' ||
	fail "create $N files: expected exit 0 got $?"
tsh 60 'for i in $(seq '$N'); do cat "$MNT/new/f$i"; done | wc -l' >"$T/nread" 2>&1
check_eq "the $N new files read back" "$N" "$(cat "$T/nread")"
# max_write 1 MiB: four 1 MiB write(2)s are four WRITE requests
tsh 60 'dd if=/dev/zero of="$MNT/new/big" bs=1M count=4 status=none' ||
	fail "dd 4 MiB: expected exit 0 got $?"
check_eq "size of the 4 MiB file" 4194304 "$(stat -c %s "$MNT/new/big")"
txfs_umount || exit 1
[ -s "$T/stats" ] || { fail "stats file: expected $T/stats written at unmount got none"; exit 1; }
count() { awk -v op="$1" '$1 == "op" && $2 == op { print $3; f = 1 } END { if (!f) print 0 }' "$T/stats"; }
show "$T/stats" "daemon request stats" 40
check_eq "CREATE requests" "$((N + 1))" "$(count CREATE)"
[ "$(count FLUSH)" -le 1 ] && ok "FLUSH requests: $(count FLUSH) (<= 1)" ||
	fail "FLUSH requests: expected <= 1 (one ENOSYS, then none) got $(count FLUSH)"
# a create's reply carries the entry: no LOOKUP of the new name after it
# (one negative LOOKUP before each create is the kernel's own), and at most
# one GETATTR per file (the parent's, whose attributes a create invalidates).
# An inode the kernel dropped from its cache meanwhile (memory pressure,
# or another program's drop_caches: the conformance suites beside this
# pass do that) is looked up again when next used: one more LOOKUP for
# each inode the daemon was told to forget.
lk=$(count LOOKUP) ga=$(count GETATTR)
fg=$(awk '$1 == "forgotten" { print $2 }' "$T/stats")
[ -n "$fg" ] && ok "stats has forgotten: $fg" || fail "stats: expected a line 'forgotten N' got none"
fg=${fg:-0}
[ "$lk" -le $((N + 20 + fg)) ] && ok "LOOKUP requests: $lk (<= $N + 20 + $fg forgotten)" ||
	fail "LOOKUP requests: expected <= $((N + 20)) + $fg forgotten got $lk"
[ "$ga" -le $((2 * N + 20)) ] && ok "GETATTR requests: $ga (<= 2 x $N + 20)" ||
	fail "GETATTR requests: expected <= $((2 * N + 20)) got $ga"
wr=$(count WRITE)
[ "$wr" -le $((N + 4)) ] && ok "WRITE requests: $wr (<= $N + 4: 1 MiB each)" ||
	fail "WRITE requests: expected <= $((N + 4)) got $wr"
c=$(awk '$1 == "commits" { print $2 }' "$T/stats")
[ "${c:-0}" -ge "$N" ] && ok "LMDB commits counted: $c" ||
	fail "LMDB commits: expected >= $N got '${c:-}'"
for k in nvcsw nivcsw syscw wchar write_bytes; do
	grep -q "^$k [0-9][0-9]*$" "$T/stats" && ok "stats has $k" || fail "stats: expected a line '$k N' got none"
done
# the files are staged, not lost: a plain remount (no stats) shows them
sum=$(cksum <"$T/stats")
txfs_mount || exit 1
check_eq "after remount, the new files" "$((N + 1))" "$(ls "$MNT/new" | wc -l)"
txfs_umount || exit 1
check_eq "without TXFS_STATS, no stats written" "$sum" "$(cksum <"$T/stats")"
finish
