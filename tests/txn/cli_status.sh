#!/bin/bash
# txfs status [--json] MNT and .txfs/status, status.json, changes: the
# fields of status --json (transaction, added, modified, deleted, renamed,
# needs_review, bytes_staged, savepoints, vetoes, pid, workspace,
# mountpoint, state) with the right values for a known change set, the
# same as .txfs/status.json; the text form; the changes lines; the
# transaction id grows by one on commit and on rollback.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1
# jget FILE KEY: one field of a JSON object (python json).
jget() { "$PY" -c 'import json,sys; v=json.load(open(sys.argv[1]))[sys.argv[2]]; print(json.dumps(v) if isinstance(v,(bool,type(None))) else v)' "$1" "$2"; }
status_json() {
	cli_run status --json "$MNT"
	printf '%s\n' "$COUT" >"$T/st.json"
	[ "$CRC" = 0 ] || fail "txfs status --json: exit $CRC: $CERR"
	"$PY" -c 'import json,sys; json.load(open(sys.argv[1]))' "$T/st.json" 2>"$T/json.err" ||
		fail "txfs status --json is not JSON: $(head -c 300 "$T/st.json") ($(tail -1 "$T/json.err"))"
}
status_json
keys=$("$PY" -c 'import json,sys; print(" ".join(sorted(json.load(open(sys.argv[1])))))' "$T/st.json")
check_eq "status --json has the documented fields" \
	"added bytes_staged ctl_verbs deleted history_bytes history_commits last_command modified mountpoint needs_review noopen pid renamed savepoints state transaction vetoes workspace" "$keys"
tx0=$(jget "$T/st.json" transaction)
case $tx0 in '' | *[!0-9]*) fail "transaction id is a number: got '$tx0'" ;; *) ok "transaction id $tx0" ;; esac
for k in added modified deleted renamed needs_review savepoints vetoes; do
	check_eq "nothing staged yet: $k" 0 "$(jget "$T/st.json" $k)"
done
check_eq "pid is the daemon's" "$(daemon_pid)" "$(jget "$T/st.json" pid)"
check_eq "workspace" "$(readlink -f "$WS")" "$(jget "$T/st.json" workspace)"
check_eq "mountpoint" "$(readlink -f "$MNT")" "$(jget "$T/st.json" mountpoint)"
check_eq "state" "$(readlink -f "$STATE")" "$(jget "$T/st.json" state)"

in_mnt 'echo n1 > new1; echo n2 > new2; echo changed > file.txt; rm ro.txt; mv exec.sh exec2.sh'
check_ctl "savepoint" OK savepoint s1
status_json
check_eq "added" 2 "$(jget "$T/st.json" added)"
check_eq "modified" 1 "$(jget "$T/st.json" modified)"
check_eq "deleted" 1 "$(jget "$T/st.json" deleted)"
check_eq "renamed" 1 "$(jget "$T/st.json" renamed)"
check_eq "savepoints" 1 "$(jget "$T/st.json" savepoints)"
b=$(jget "$T/st.json" bytes_staged)
[ "${b:-0}" -gt 0 ] 2>/dev/null && ok "bytes_staged > 0 ($b)" || fail "bytes_staged: expected > 0 got '$b'"
"$PY" - "$T/st.json" "$MNT/$CTL/status.json" <<'PY' && ok "txfs status --json equals .txfs/status.json" || fail "txfs status --json differs from .txfs/status.json"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
sys.exit(0 if a == b else 1)
PY
check_cli "txfs status (text)" 0 status "$MNT"
check_eq "status text, first line" "transaction $tx0: 2 added, 1 modified, 1 deleted, 1 renamed; 0 need review" "$(head -1 <<<"$COUT")"
check_eq "txfs status equals .txfs/status" "$(cat "$MNT/$CTL/status")" "$COUT"
check_eq ".txfs/changes lines" "$(printf 'A new1\nA new2\nD ro.txt\nM file.txt\nR exec.sh -> exec2.sh')" "$(sort "$MNT/$CTL/changes")"

check_ctl "commit" OK commit
status_json
check_eq "commit starts transaction $((tx0 + 1))" $((tx0 + 1)) "$(jget "$T/st.json" transaction)"
for k in added modified deleted renamed savepoints; do
	check_eq "after commit: $k" 0 "$(jget "$T/st.json" $k)"
done
in_mnt 'echo x > x'
check_cli "txfs rollback" 0 rollback "$MNT"
status_json
check_eq "rollback starts transaction $((tx0 + 2))" $((tx0 + 2)) "$(jget "$T/st.json" transaction)"
check_eq "after rollback: added" 0 "$(jget "$T/st.json" added)"
txn_finish
