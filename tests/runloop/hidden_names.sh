#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hidden_names - paths a mount's policy hides are left out of every
# listing the agent gets, as `ls` leaves them out, with a count instead.
# As root and as the unprivileged test user:
#   1. a human's session (policy `flag .env* secret/`) changes .env,
#      creates secret/new.txt, removes secret/s.txt, runs a txfs exec
#      command that writes .env.local, and commits: the history record,
#      the commit event (needs_review) and the cmd-end event (changes) of
#      the shared audit log all name them;
#      then a txfs run whose command line writes .env (its record's via);
#   2. the agent's session (policy `hide .env* secret/`): none of these
#      names is in the MCP tools' output (history paths_of, deleted, undo
#      dry_run, undo force, log, status: last_command),
#      nor in .txfs/log read from inside txfs exec, nor in txfs log/history
#      --paths/--deleted/undo --dry-run given the mount; each says how
#      many it left out; the forced undo is rolled back;
#   3. unmounted, txfs history --paths WORKSPACE (the human's) lists them.
# Afterwards the real directory is as the human's commit left it.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
printf 'flag .env* secret/\n' >"$T/flag.policy"
printf 'hide .env* secret/\n' >"$T/hide.policy"
chmod 644 "$T/flag.policy" "$T/hide.policy"
cat >"$T/mcp.py" <<'PYEOF'
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def call(o):
    p.stdin.write(json.dumps(o) + "\n"); p.stdin.flush()
    while True:
        l = p.stdout.readline()
        if not l:
            return None
        r = json.loads(l)
        if "id" in r:
            return r
call({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
    "protocolVersion": "2025-06-18", "capabilities": {},
    "clientInfo": {"name": "t", "version": "1"}}})
p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
for i, (name, args) in enumerate(json.loads(sys.argv[3]), 1):
    r = call({"jsonrpc": "2.0", "id": i, "method": "tools/call",
              "params": {"name": name, "arguments": args}})
    print("== %s %s" % (name, json.dumps(args)))
    print(json.dumps(r))
p.stdin.close(); p.wait(timeout=30)
PYEOF
chmod 644 "$T/mcp.py"

HIDDEN_RE='\.env|secret'
# no_names WHAT TEXT [COUNT_RE]: TEXT names nothing hidden (and matches
# COUNT_RE: the count of what was left out).
no_names() {
	if grep -qE "$HIDDEN_RE" <<<"$2"; then
		fail "[$WHO] $1: a hidden name is listed: $(echo "$2" | grep -oE "[^\"\\ ]*($HIDDEN_RE)[^\"\\ ]*" | sort -u | head -5 | tr '\n' ' ')"
	else
		ok "[$WHO] $1: no hidden name"
	fi
	if [ -n "${3:-}" ]; then
		grep -qE "$3" <<<"$2" && ok "[$WHO] $1: says how many were left out" ||
			fail "[$WHO] $1: no count of what was left out (/$3/): $(echo "$2" | head -c 300)"
	fi
}

tx() { timeout -k 5 120 "${AS[@]}" env HOME="$HOME_DECOY" "$TXFS_BIN" "$@"; }
# inm DIR CMD...: CMD as $AS in DIR (root cannot enter the user's mount)
inm() { timeout -k 5 120 "${AS[@]}" env HOME="$HOME_DECOY" sh -c 'cd "$1" && shift && exec "$@"' sh "$@"; }

body() {
	local mnt id out real
	ws_fixture
	new_state
	mnt=$T/w$SEQ/mnt
	mkdir -p "$mnt" "$WS/secret"
	echo K1 >"$WS/.env"; echo s >"$WS/secret/s.txt"
	as_owner "$mnt"; as_owner "$WS/.env"; as_owner "$WS/secret"; as_owner "$WS/secret/s.txt"
	# 1. the human's session
	tx mount --state "$STATE" --policy "$T/flag.policy" "$WS" "$mnt" || { fail "[$WHO] mount"; return; }
	inm "$mnt" sh -c 'echo K2 > .env && echo x > secret/new.txt && rm secret/s.txt' ||
		fail "[$WHO] the human's changes"
	inm "$mnt" "$TXFS_BIN" exec "$mnt" -- sh -c 'echo K3 > .env.local' >/dev/null 2>&1 ||
		fail "[$WHO] txfs exec writing .env.local"
	tx commit "$mnt" >/dev/null 2>&1 || fail "[$WHO] commit"
	grep -q '"needs_review":\[.*\.env' "$STATE/audit.log" && grep -q '"changes":\[.*\.env\.local' "$STATE/audit.log" &&
		ok "[$WHO] the audit log names them (commit, cmd-end)" ||
		fail "[$WHO] the fixture's audit log does not name the paths"
	tx umount "$mnt" || fail "[$WHO] umount"
	# a txfs run whose command line names .env (the record's "via")
	(cd "$WS" && tx run --state "$STATE" --policy "$T/flag.policy" -- sh -c 'echo K4 > .env') >/dev/null 2>&1 ||
		fail "[$WHO] txfs run writing .env"
	real=$(snap "$WS")
	# 2. the agent's session
	tx mount --state "$STATE" --policy "$T/hide.policy" "$WS" "$mnt" || { fail "[$WHO] mount (hide)"; return; }
	# the human's commit (the oldest; the newest is txfs run's)
	id=$(tx history --json "$mnt" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)[-1]["id"])')
	out=$(inm "$mnt" "$PY" "$T/mcp.py" "$TXFS_BIN" "$mnt" \
		"[[\"status\",{}],[\"history\",{}],[\"history\",{\"paths_of\":$id}],[\"history\",{\"deleted\":true}],[\"undo\",{\"dry_run\":true}],[\"log\",{}]]" 2>&1)
	no_names "MCP status, history, history paths_of, deleted, undo dry_run, log" "$out" 'hidden\\\\?":4|left_out\\\\?":1'
	grep -q 'conflict: [0-9]* paths the mount' <<<"$out" && ok "[$WHO] MCP undo dry_run: the hidden conflicts counted" ||
		fail "[$WHO] MCP undo dry_run: no count of hidden conflicts: $(echo "$out" | grep -A1 '== undo' | head -c 300)"
	out=$(inm "$mnt" "$PY" "$T/mcp.py" "$TXFS_BIN" "$mnt" \
		'[["undo",{"force":true}],["log",{}]]' 2>&1)
	no_names "MCP undo force, then log" "$out" 'paths the mount'"'"'s policy hides'
	tx rollback "$mnt" >/dev/null 2>&1 || fail "[$WHO] rollback of the forced undo"
	out=$(inm "$mnt" "$TXFS_BIN" exec "$mnt" -- cat .txfs/log 2>/dev/null)
	no_names ".txfs/log read inside txfs exec" "$out" '"event":"hidden","left_out":[0-9]+'
	out=$(tx log "$mnt" 2>&1; tx log --json "$mnt" 2>&1)
	no_names "txfs log MNT" "$out" 'left_out'
	out=$(tx history --paths "$id" "$mnt" 2>&1; tx history --deleted "$mnt" 2>&1; tx history --json --deleted "$mnt" 2>&1)
	no_names "txfs history --paths/--deleted MNT" "$out" "paths the mount's policy hides left out"
	out=$(tx undo --dry-run "$mnt" 2>&1)
	no_names "txfs undo --dry-run MNT" "$out" "conflict: [0-9]+ paths the mount's policy hides"
	[ -n "$(inm "$mnt" ls -a | grep -E "$HIDDEN_RE")" ] && fail "[$WHO] ls lists a hidden name" ||
		ok "[$WHO] ls of the mount lists no hidden name (the reference)"
	tx umount "$mnt" || fail "[$WHO] umount (hide)"
	# 3. the human, unmounted
	out=$(tx history --state "$STATE" --paths "$id" "$WS" 2>&1)
	grep -q '^M \.env$' <<<"$out" && grep -q '^D secret/s.txt$' <<<"$out" &&
		ok "[$WHO] txfs history --paths WORKSPACE (unmounted) lists everything" ||
		fail "[$WHO] txfs history WORKSPACE: $(echo "$out" | head -c 300)"
	check_snap "[$WHO] the real directory is as the human's commit left it" "$real" "$(snap "$WS")"
	check_eq "[$WHO] .env" K4 "$(cat "$WS/.env")"
	[ -e "$WS/secret/new.txt" ] && [ ! -e "$WS/secret/s.txt" ] && ok "[$WHO] secret/ as committed" ||
		fail "[$WHO] secret/: $(ls "$WS/secret")"
	is_mounted "$mnt" && fail "[$WHO] $mnt left mounted" || ok "[$WHO] nothing left mounted"
}

for_each_user body
finish
