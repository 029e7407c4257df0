#!/bin/bash
# txfs log [--json] MNT and .txfs/log: every line of log --json parses as a
# JSON object (python json) with an "event"; the events of a veto, a
# savepoint, a rollback, a commit and a refused commit (conflict) are
# there; the text form has one line per JSON line; .txfs/log is the same.
. "$(dirname "$0")/txnlib.sh"
fixture
printf '# cli_log\ndeny delete protected.txt\n' >"$T/log.policy"
TXFS_POLICY=$T/log.policy
echo keep >"$WS/protected.txt"
txfs_mount || exit 1
rm -f "$MNT/protected.txt" 2>/dev/null && fail "the policy did not refuse the delete"
check_ctl "savepoint" OK savepoint s
echo x >"$MNT/x"
check_ctl "rollback" OK rollback s
check_ctl "rollback" OK rollback
echo y >"$MNT/y"
check_ctl "commit" OK commit
echo z >>"$MNT/file.txt"
echo theirs >>"$WS/file.txt"
check_ctl "conflicting commit" EBUSY commit
check_cli "txfs log --json" 0 log --json "$MNT"
printf '%s\n' "$COUT" >"$T/log.json"
"$PY" - "$T/log.json" >"$T/events" 2>"$T/py.err" <<'PY'
import json, sys
n = 0
for i, line in enumerate(open(sys.argv[1]), 1):
    if not line.strip():
        continue
    try:
        o = json.loads(line)
    except ValueError as e:
        sys.stderr.write("line %d: %s: %s" % (i, e, line)); sys.exit(1)
    if not isinstance(o, dict) or "event" not in o:
        sys.stderr.write("line %d: not an object with an event: %s" % (i, line)); sys.exit(1)
    print(o["event"])
PY
[ $? = 0 ] && ok "every line of txfs log --json is a JSON object with an event ($(wc -l <"$T/events") lines)" ||
	fail "txfs log --json: $(cat "$T/py.err")"
for e in veto savepoint rollback commit conflict; do
	grep -qx "$e" "$T/events" && ok "the log has a '$e' event" || fail "no '$e' event in the log: $(sort -u "$T/events" | tr '\n' ' ')"
done
check_eq ".txfs/log has the same lines" "$COUT" "$(cat "$MNT/$CTL/log")"
check_cli "txfs log (text)" 0 log "$MNT"
check_eq "the text form has one line per event" "$(wc -l <"$T/events")" "$(grep -c . <<<"$COUT")"
grep -q 'protected.txt' <<<"$COUT" && ok "the text form names the vetoed path" || fail "the text log does not name protected.txt: $COUT"
txn_finish
