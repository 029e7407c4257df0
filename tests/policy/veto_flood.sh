#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A flood of vetoes does not rotate earlier records out of the audit log:
# between two transaction verbs (or txfs exec commands) 10,000 vetoes are
# logged one by one, then one "veto-flood" record per 10,000 more (counted
# in .txfs/status all the same). A veto made before the flood, in an
# earlier transaction, is still in the log after 25,000 more; after a
# rollback the window starts again.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"
fixture
mkdir -p "$WS/locked"
echo secret >"$WS/locked/f"
use_policy flood <<<'deny read locked/**'
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
check_eq "veto records: the first before the flood + 10,000 of it" 10001 "$vetoes"
check_eq "veto-flood records: at the 10,001st and the 20,001st" 2 "$floods"
grep -q '"event":"veto-flood".*"not_logged_from":20001' "$log.all" &&
	ok "the second flood record says where it starts" || fail "no veto-flood record from 20001: $(grep veto-flood "$log.all" | head -c 300)"
[ "$(grep -m1 -n '"event":"veto"' "$log.all" | cut -d: -f1)" -lt "$(grep -m1 -n '"event":"commit"' "$log.all" | cut -d: -f1)" ] &&
	ok "the veto from before the flood (before the commit) is still logged" ||
	fail "the veto before the commit is gone from the log"
st=$(cat "$MNT/.txfs/status.json")
v=$(sed -n 's/.*"vetoes":\([0-9]*\).*/\1/p' <<<"$st")
check_eq "status counts every veto" 25001 "$v"
check_run "rollback (a new window)" bash -c 'echo rollback > "$1/.txfs/ctl"' sh "$MNT"
check_eq "100 refused reads after the rollback" 100 "$(flood 100)"
cat "$STATE"/audit.log* >"$log.all" 2>/dev/null
check_eq "after the rollback, each is logged again" 10101 "$(grep -c '"event":"veto"' "$log.all")"
txfs_umount || exit 1
check_real_unchanged
finish
