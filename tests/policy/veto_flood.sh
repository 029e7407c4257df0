#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A flood of vetoes does not rotate earlier records out of the audit log:
# between two transaction verbs (or txfs exec commands) the vetoes are
# logged one by one up to 10,000 records or 4 MiB of them, then one
# "veto-flood" record per 10,000 more (counted in .txfs/status all the
# same). A veto made before the flood, in an earlier transaction, is still
# in the log after 25,000 more, and after 3,000 with 3.8 KB paths; after
# a rollback the window starts again.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"
fixture
mkdir -p "$WS/locked"
echo secret >"$WS/locked/f"
python3 - "$WS/locked" <<'EOF2'
import os, sys
d = sys.argv[1]
for i in range(15):
    d = os.path.join(d, "d%d" % i + "x" * 245)
os.makedirs(d)
EOF2
use_policy flood <<<'deny read,create locked/**'
txfs_mount || exit 1
refused "a veto before the flood" 'cat locked/f'
check_run "commit (a new window)" bash -c 'echo commit > "$1/.txfs/ctl"' sh "$MNT"
flood() {
	t 300 python3 - "$MNT/locked/f" "$1" <<'EOF2'
import sys
n = 0
for _ in range(int(sys.argv[2])):
    try:
        open(sys.argv[1]).close()
    except PermissionError:
        n += 1
print(n)
EOF2
}
check_eq "25,000 refused reads" 25000 "$(flood 25000)"
log=$T/log.txt
cat "$MNT/.txfs/log" >"$log" 2>/dev/null || cp "$STATE/audit.log" "$log"
cat "$STATE"/audit.log* >"$log.all" 2>/dev/null
vetoes=$(grep -c '"event":"veto"' "$log.all")
floods=$(grep -c '"event":"veto-flood"' "$log.all")
first=$(grep -m1 '"event":"veto-flood"' "$log.all" | sed -n 's/.*"not_logged_from":\([0-9]*\).*/\1/p')
[ "$vetoes" -gt 1000 ] && [ "$vetoes" -le 10001 ] &&
	ok "veto records: $vetoes (1 before the flood, then up to 10,000 or 4 MiB)" ||
	fail "veto records: expected 1,001 to 10,001 got $vetoes"
check_eq "the first veto-flood record starts where one-by-one logging stopped" "$vetoes" "${first:-none}"
check_eq "veto-flood records: one per 10,000 not logged" $(( (25001 - vetoes + 9999) / 10000 )) "$floods"
bytes=$(wc -c <"$log.all")
[ "$bytes" -lt $((8 << 20)) ] && ok "the whole log is $bytes bytes: no rotation" || fail "the log grew to $bytes bytes"
[ "$(grep -m1 -n '"event":"veto"' "$log.all" | cut -d: -f1)" -lt "$(grep -m1 -n '"event":"commit"' "$log.all" | cut -d: -f1)" ] &&
	ok "the veto from before the flood (before the commit) is still logged" ||
	fail "the veto before the commit is gone from the log"
st=$(cat "$MNT/.txfs/status.json")
v=$(sed -n 's/.*"vetoes":\([0-9]*\).*/\1/p' <<<"$st")
check_eq "status counts every veto" 25001 "$v"
check_run "rollback (a new window)" bash -c 'echo rollback > "$1/.txfs/ctl"' sh "$MNT"
check_eq "100 refused reads after the rollback" 100 "$(flood 100)"
cat "$STATE"/audit.log* >"$log.all" 2>/dev/null
check_eq "after the rollback, each is logged again" $((vetoes + 100)) "$(grep -c '"event":"veto"' "$log.all")"
# long paths: the window is also bounded in bytes (3 MiB of records), so
# 3,000 vetoes of 3.8 KB paths (11 MB of records) do not rotate it either
check_run "commit (a new window)" bash -c 'echo commit > "$1/.txfs/ctl"' sh "$MNT"
long=$(t 60 python3 - "$MNT/locked" <<'EOF2'
import os, sys
d = sys.argv[1]
for i in range(15):
    d = os.path.join(d, "d%d" % i + "x" * 245)
print(d)
EOF2
)
refused "a veto before the long flood" 'cat locked/f'
n=$(t 300 python3 - "$long" <<'EOF2'
import os, sys
n = 0
for i in range(3000):
    try:
        open(os.path.join(sys.argv[1], "f%d" % i), "w").close()
    except OSError:
        n += 1
print(n)
EOF2
)
check_eq "3,000 refused creates under a 3.8 KB path" 3000 "$n"
cat "$STATE"/audit.log* >"$log.all" 2>/dev/null
sz=$(cat "$STATE"/audit.log | wc -c)
[ -e "$STATE/audit.log.1" ] && r=$(wc -c <"$STATE/audit.log.1") || r=0
grep -q '"event":"veto-flood"' "$log.all" && ok "the long flood was capped (a veto-flood record)" ||
	fail "no veto-flood record for 3,000 long vetoes"
last_commit=$(grep -n '"event":"commit"' "$log.all" | tail -1 | cut -d: -f1)
echo "# the last commit is line ${last_commit:-none} of $(wc -l <"$log.all")"
before=$(grep -n '"event":"veto"' "$log.all" | cut -d: -f1 | awk -v c="$last_commit" '$1 < c' | wc -l)
[ "$before" -gt 0 ] &&
	ok "$before vetoes from before the long flood are still logged (log $sz bytes, rotated part $r)" ||
	fail "the vetoes before the long flood are gone (log $sz bytes, rotated part $r)"
check_run "rollback" bash -c 'echo rollback > "$1/.txfs/ctl"' sh "$MNT"
txfs_umount || exit 1
check_real_unchanged
finish
