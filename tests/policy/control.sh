#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# control deny commit: `echo commit > .txfs/ctl` fails with EPERM, commits
# nothing, says why in .txfs/ctl and logs the veto (with errno, rule, pid,
# uid, exe); the other verbs still work through .txfs/ctl; `txfs commit
# MNT` (the daemon's socket) still commits.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

fixture
use_policy control <<'EOF'
# control.sh
control deny commit
EOF
txfs_mount || exit 1

allowed "a change" 'echo changed > new.txt && echo more >> file.txt'
refused "echo commit > .txfs/ctl" 'echo commit > .txfs/ctl' 'Operation not permitted'
py "write(commit) to .txfs/ctl" EPERM write .txfs/ctl commit
grep -q "refused by the policy" "$MNT/.txfs/ctl" && ok ".txfs/ctl says why: $(head -1 "$MNT/.txfs/ctl")" ||
	fail ".txfs/ctl: expected 'refused by the policy' got '$(cat "$MNT/.txfs/ctl")'"
check_eq "nothing was committed" "absent" "$(test -e "$WS/new.txt" && echo present || echo absent)"
t 30 "$PYTHON" - "$MNT/.txfs/log" "$TXFS_POLICY" "$(id -u)" >"$T/ctl.out" 2>&1 <<'EOF'
import json, re, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
v = [r for r in recs if r.get("event") == "veto" and r.get("op") == "control"]
if not v:
    sys.exit("no veto with op control in the log")
r = v[-1]
bad = []
if (r.get("verb") or r.get("path")) != "commit": bad.append("verb commit (as verb or path)")
if r.get("errno") != "EPERM": bad.append("errno EPERM")
if not re.fullmatch(re.escape(sys.argv[2]) + r":2", str(r.get("rule"))): bad.append(f"rule {sys.argv[2]}:2")
if not (isinstance(r.get("pid"), int) and r["pid"] > 0): bad.append("pid")
if r.get("uid") != int(sys.argv[3]): bad.append("uid")
if not r.get("exe"): bad.append("exe")
if bad:
    sys.exit("control veto without " + ", ".join(bad) + ": " + json.dumps(r))
print(json.dumps(r))
EOF
[ $? = 0 ] && ok "the control veto is logged completely" || fail "$(cat "$T/ctl.out")"
check_eq "both refused commits are in the log" 2 "$(log_count veto)"
check_eq "status.json vetoes counts the control vetoes" 2 "$(status_field vetoes)"

allowed "savepoint through .txfs/ctl" 'echo "savepoint s1" > .txfs/ctl'
allowed "a change after the savepoint" 'echo later > later.txt'
allowed "rollback s1 through .txfs/ctl" 'echo "rollback s1" > .txfs/ctl && ! test -e later.txt'
check_run "txfs commit MNT works" "$TXFS" commit "$MNT"
check_eq "txfs commit reached the real directory" "changed" "$(cat "$WS/new.txt" 2>&1)"
check_eq "... and the appended line" "hello
more" "$(cat "$WS/file.txt" 2>&1)"
txfs_umount
snapshot_real
finish
