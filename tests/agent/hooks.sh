#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hooks - the shipped agent integration (cli/agents/), as root and as the
# unprivileged test user, in a mounted git workspace:
#   - claude-settings.json parses, wires PreToolUse (Bash, Edit, Write),
#     PostToolUse, PostToolUseFailure and Stop to txfs-claude-hook; each
#     command below is taken from it;
#   - the hook events' JSON as Claude Code sends it: PreToolUse takes
#     savepoint tool-ID; a successful PostToolUse releases it (the change
#     stays staged); PostToolUseFailure, and a PostToolUse during which the
#     policy vetoed something (rm -rf .git), roll the call back (exit 2,
#     reason on stderr) and only that call; Stop prints the status; a
#     payload whose cwd is not in a mount does nothing;
#   - txfs-sh -c LINE (and -lc): each line is one txfs exec command, kept
#     or rolled back, its exit status passed on; outside a mount it
#     refuses (125).
. "$(dirname "$0")/lib.sh"

require_landlock
cp "$TXFS_SRC/cli/agents/txfs-claude-hook" "$TXFS_SRC/cli/agents/txfs-sh" \
	"$TXFS_SRC/cli/agents/claude-settings.json" "$T/bin/" && chmod 755 "$T/bin"/* ||
	fail "copy cli/agents"
mkdir -p "$T/hooktmp" && chmod 1777 "$T/hooktmp"

# The commands of the settings file, per event (the hook script's path
# substituted for its name).
SETTINGS=$("$PY" - "$T/bin/claude-settings.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["hooks"]
for ev in ("PreToolUse", "PostToolUse", "PostToolUseFailure", "Stop"):
    for m in s[ev]:
        if ev != "Stop":
            assert set(("Bash", "Edit", "Write")) <= set(m["matcher"].split("|")), m
        for h in m["hooks"]:
            assert h["type"] == "command"
            print(ev, h["command"])
PY
) && ok "claude-settings.json parses; PreToolUse/PostToolUse match Bash, Edit, Write" ||
	fail "claude-settings.json: $SETTINGS"
hook_cmd() { sed -n "s/^$1 txfs-claude-hook /$(printf '%s' "$T/bin/" | sed 's/[\/&]/\\&/g')txfs-claude-hook /p" <<<"$SETTINGS"; }

# hook EVENT JSON: run the configured command for EVENT with JSON on stdin.
hook() {
	local cmd
	cmd=$(hook_cmd "$1")
	[ -n "$cmd" ] || { fail "no command for $1 in the settings"; return; }
	HRC=0
	HOUT=$(printf '%s' "$2" | timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/bin:/bin \
		HOME="$HOME_DECOY" TMPDIR="$T/hooktmp" TXFS="$TXFS_BIN" $cmd 2>"$T/hook.err") || HRC=$?
	HERR=$(cat "$T/hook.err")
}

payload() {	# payload EVENT TOOL ID [RESPONSE]
	"$PY" -c 'import json, sys
ev, tool, tid, cwd = sys.argv[1:5]
d = {"session_id": "sess-1", "transcript_path": "/nonexistent/t.jsonl",
     "cwd": cwd, "hook_event_name": ev, "tool_name": tool,
     "tool_input": {"command": "x"} if tool == "Bash" else {"file_path": cwd + "/f"},
     "tool_use_id": tid}
if len(sys.argv) > 5 and sys.argv[5]:
    d["tool_response"] = json.loads(sys.argv[5])
if ev == "Stop":
    d = {"session_id": "sess-1", "transcript_path": "/nonexistent/t.jsonl",
         "cwd": cwd, "hook_event_name": "Stop", "stop_hook_active": False}
print(json.dumps(d))' "$1" "$2" "$3" "${CWD:-$WS}" "${4:-}"
}

savepoints() { OUT=$(txfs_as status --json "$WS") jget savepoints; }
exists() { as_run test -e "$WS/$1"; }

BASH_OK='{"stdout": "", "stderr": "", "interrupted": false, "isImage": false}'

body() {
	local u=$WHO
	git_ws
	mount_ws

	# 1. a successful Bash call: savepoint, then released, change kept
	hook PreToolUse "$(payload PreToolUse Bash toolu_01)"
	check_eq "[$u] PreToolUse: exit 0 ($HERR)" 0 "$HRC"
	check_eq "[$u] PreToolUse: one savepoint" 1 "$(savepoints)"
	grep -q '"event":"savepoint","name":"tool-toolu_01"' <(txfs_as log --json "$WS") &&
		ok "[$u] PreToolUse: savepoint tool-toolu_01 in the log" || fail "[$u] savepoint tool-toolu_01 not logged"
	as_run sh -c 'echo one > "$1/one.txt"' sh "$WS"
	hook PostToolUse "$(payload PostToolUse Bash toolu_01 "$BASH_OK")"
	check_eq "[$u] PostToolUse (success): exit 0" 0 "$HRC"
	check_eq "[$u] PostToolUse (success): savepoint released" 0 "$(savepoints)"
	exists one.txt && ok "[$u] PostToolUse (success): change kept" || fail "[$u] one.txt gone"

	# 2. a failed Write call: rolled back, only it
	hook PreToolUse "$(payload PreToolUse Write toolu_02)"
	as_run sh -c 'echo bad > "$1/bad.txt"' sh "$WS"
	hook PostToolUseFailure "$(payload PostToolUseFailure Write toolu_02 '{"error": "boom"}')"
	check_eq "[$u] PostToolUseFailure: exit 2 (reason shown to the model)" 2 "$HRC"
	grep -q 'rolled back this Write call' <<<"$HERR" && ok "[$u] PostToolUseFailure: reason on stderr" ||
		fail "[$u] PostToolUseFailure stderr: $HERR"
	exists bad.txt && fail "[$u] bad.txt survived the rollback" || ok "[$u] failed call rolled back"
	exists one.txt && ok "[$u] the earlier call is untouched" || fail "[$u] one.txt gone after rollback"
	check_eq "[$u] no savepoint left" 0 "$(savepoints)"

	# 3. a Bash call the policy vetoed part of: rolled back
	hook PreToolUse "$(payload PreToolUse Bash toolu_03)"
	as_run sh -c 'cd "$1" && echo v > v.txt; rm -rf .git' sh "$WS" 2>/dev/null
	hook PostToolUse "$(payload PostToolUse Bash toolu_03 "$BASH_OK")"
	check_eq "[$u] PostToolUse after a veto: exit 2" 2 "$HRC"
	grep -Eq 'vetoed [0-9]+ operation' <<<"$HERR" && ok "[$u] veto named on stderr" || fail "[$u] veto stderr: $HERR"
	exists v.txt && fail "[$u] v.txt survived" || ok "[$u] vetoed call rolled back"
	exists .git/HEAD && ok "[$u] .git intact" || fail "[$u] .git damaged"

	# 4. Bash with a non-zero exit code in its response
	hook PreToolUse "$(payload PreToolUse Bash toolu_04)"
	as_run sh -c 'echo e > "$1/e.txt"' sh "$WS"
	hook PostToolUse "$(payload PostToolUse Bash toolu_04 '{"stdout": "", "stderr": "x", "exit_code": 1}')"
	check_eq "[$u] PostToolUse exit_code 1: exit 2" 2 "$HRC"
	exists e.txt && fail "[$u] e.txt survived" || ok "[$u] exit_code 1 rolled back"

	# 5. Edit succeeds: kept; Stop prints the status
	hook PreToolUse "$(payload PreToolUse Edit toolu_05)"
	as_run sh -c 'echo more >> "$1/README.md"' sh "$WS"
	hook PostToolUse "$(payload PostToolUse Edit toolu_05 '{"filePath": "README.md", "oldString": "a", "newString": "b"}')"
	check_eq "[$u] Edit kept: exit 0" 0 "$HRC"
	hook Stop "$(payload Stop - -)"
	check_eq "[$u] Stop: exit 0" 0 "$HRC"
	grep -q '1 added, 1 modified' <<<"$HOUT" && ok "[$u] Stop prints the status" || fail "[$u] Stop output: $HOUT"

	# 6. outside a mount: nothing
	CWD=$HOME_DECOY hook PreToolUse "$(CWD=$HOME_DECOY payload PreToolUse Bash toolu_06)"
	check_eq "[$u] cwd outside a mount: exit 0, no savepoint" "0 0" "$HRC $(savepoints)"

	# 7. txfs-sh
	local sh=("${AS[@]}" env -i PATH=/usr/bin:/bin HOME="$HOME_DECOY" TXFS="$TXFS_BIN" "$T/bin/txfs-sh")
	(cd / && timeout -k 5 60 "${sh[@]}" -c "cd '$WS' && echo hi > sh.txt") >/dev/null 2>&1
	timeout -k 5 60 "${AS[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" "${sh[@]:${#AS[@]}}" -c 'echo hi > sh.txt' 2>/dev/null
	check_eq "[$u] txfs-sh -c: exit 0" 0 "$?"
	timeout -k 5 60 "${AS[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" "${sh[@]:${#AS[@]}}" -lc 'echo y > y.txt; exit 3' 2>/dev/null
	check_eq "[$u] txfs-sh -lc: the line's exit status" 3 "$?"
	timeout -k 5 60 "${AS[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" "${sh[@]:${#AS[@]}}" -o pipefail -c 'echo o > o.txt; exit 4' 2>/dev/null
	check_eq "[$u] txfs-sh -o pipefail -c: wrapped too (exit 4, rolled back)" "4 absent" "$? $(exists o.txt && echo present || echo absent)"
	exists sh.txt && ! exists y.txt && ok "[$u] txfs-sh: kept the good line, rolled back the failing one" ||
		fail "[$u] txfs-sh: sh.txt/y.txt"
	txfs_as log --json --commands "$WS" | grep -q '"argv":\["/bin/sh","-c","echo y > y.txt; exit 3"\].*"outcome":"rolled-back"' &&
		ok "[$u] txfs-sh: the line is a command in txfs log" || fail "[$u] txfs-sh: not in the log"
	timeout -k 5 60 "${AS[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$HOME_DECOY" "${sh[@]:${#AS[@]}}" -c 'echo z > z.txt' 2>/dev/null
	check_eq "[$u] txfs-sh outside a mount: refuses (125)" "125 absent" "$? $([ -e "$HOME_DECOY/z.txt" ] && echo present || echo absent)"
	umount_ws
	check_unmounted "[$u] hooks"
}

for_each_user body
finish
