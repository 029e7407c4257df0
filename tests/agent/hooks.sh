#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hooks - the shipped agent integration (cli/agents/), as root and as the
# unprivileged test user, in a mounted git workspace:
#   - claude-settings.json parses, wires PreToolUse (Bash, Edit, Write),
#     PostToolUse, PostToolUseFailure, PermissionDenied and Stop to
#     txfs-claude-hook (the built program); each command below is taken
#     from it;
#   - the hook events' JSON as Claude Code sends it: PreToolUse takes
#     savepoint tool-ID; a successful PostToolUse releases it (the change
#     stays staged); PostToolUseFailure, and a PostToolUse during which the
#     policy vetoed something (rm -rf .git), roll the call back (exit 2,
#     reason on stderr) and only that call; Stop prints the status;
#     PermissionDenied (Claude Code refused the call after PreToolUse)
#     leaves no savepoint behind;
#   - the mount comes from the kernel, never from files the agent wrote:
#     a fake sub/.txfs/ (status.json, state naming another folder), a fake
#     .txfs/ctl that is a regular file or a FIFO, a .txfs symlinked to the
#     real control folder from outside the mount: inside the mount the
#     savepoint is still taken on the real mount and a failed call rolled
#     back; outside any mount the call is blocked (exit 2) and nothing is
#     staged, unless TXFS_HOOK_OUTSIDE=allow;
#   - overlapping calls are serialized: a PreToolUse waits while another
#     call holds its savepoint, so a failed call's rollback never discards
#     a later call's changes; past TXFS_HOOK_WAIT it blocks the call; a
#     call left open by a Claude Code process that is gone is rolled back;
#   - the cost: one pre + one post, mean wall time over 20 calls < 50 ms;
#   - txfs-sh -c LINE (and -lc): each line is one txfs exec command, kept
#     or rolled back, its exit status passed on; outside a mount it
#     refuses (125).
. "$(dirname "$0")/lib.sh"

require_landlock
cp "$TXFS_BUILD/cli/txfs-claude-hook" "$TXFS_SRC/cli/agents/txfs-sh" \
	"$TXFS_SRC/cli/agents/claude-settings.json" "$T/bin/" && chmod 755 "$T/bin"/* ||
	fail "copy cli/agents"
mkdir -p "$T/hooktmp" && chmod 1777 "$T/hooktmp"

# The commands of the settings file, per event (the hook script's path
# substituted for its name).
SETTINGS=$("$PY" - "$T/bin/claude-settings.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))["hooks"]
for ev in ("PreToolUse", "PostToolUse", "PostToolUseFailure",
           "PermissionDenied", "Stop"):
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
	local cmd ef=$T/hook.$BASHPID.err
	cmd=$(hook_cmd "$1")
	[ -n "$cmd" ] || { fail "no command for $1 in the settings"; return; }
	HRC=0
	HOUT=$(printf '%s' "$2" | timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/bin:/bin \
		HOME="$HOME_DECOY" TMPDIR="$T/hooktmp" TXFS_HOOK_WAIT="${WAIT:-20}" \
		${HOOK_ENV:-} $cmd 2>"$ef") || HRC=$?
	HERR=$(cat "$ef")
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
	grep -q 'txfs undo ' <<<"$HOUT" && ok "[$u] Stop says how to undo a commit" || fail "[$u] Stop output: $HOUT"
	# a Write whose file is outside the mount (cwd inside), and input that
	# is not JSON: blocked (exit 2), no savepoint taken
	local sp0 outp
	sp0=$(savepoints)
	outp=$("$PY" -c 'import json,sys; print(json.dumps({"session_id": "sess-1",
  "transcript_path": "/nonexistent/t.jsonl", "cwd": sys.argv[1],
  "hook_event_name": "PreToolUse", "tool_name": "Write", "tool_use_id": "toolu_out",
  "tool_input": {"file_path": sys.argv[2] + "/victim.txt", "content": "x"}}))' "$WS" "$HOME_DECOY")
	hook PreToolUse "$outp"
	check_eq "[$u] a Write outside the mount: blocked" 2 "$HRC"
	hook PreToolUse "not json {"
	check_eq "[$u] input that is not JSON: blocked (fails closed)" 2 "$HRC"
	check_eq "[$u] no savepoint left by the blocked calls" "$sp0" "$(savepoints)"

	# 6. PermissionDenied after PreToolUse: no orphan savepoint
	hook PreToolUse "$(payload PreToolUse Bash toolu_06)"
	check_eq "[$u] PreToolUse before a denial: one savepoint" 1 "$(savepoints)"
	hook PermissionDenied "$(payload PermissionDenied Bash toolu_06)"
	check_eq "[$u] PermissionDenied: exit 0, no savepoint left" "0 0" "$HRC $(savepoints)"
	hook PreToolUse "$(payload PreToolUse Bash toolu_06b)"
	check_eq "[$u] the next call is not held up by the denied one" "0 1" "$HRC $(savepoints)"
	hook PostToolUse "$(payload PostToolUse Bash toolu_06b "$BASH_OK")"

	fakes
	overlap
	cost

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
	txfs_as log --json --commands "$WS" | qgrep '"argv":\["/bin/sh","-c","echo y > y.txt; exit 3"\].*"outcome":"rolled-back"' &&
		ok "[$u] txfs-sh: the line is a command in txfs log" || fail "[$u] txfs-sh: not in the log"
	timeout -k 5 60 "${AS[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$HOME_DECOY" "${sh[@]:${#AS[@]}}" -c 'echo z > z.txt' 2>/dev/null
	check_eq "[$u] txfs-sh outside a mount: refuses (125)" "125 absent" "$? $([ -e "$HOME_DECOY/z.txt" ] && echo present || echo absent)"
	umount_ws
	check_unmounted "[$u] hooks"
}

# A failed call made in FOLDER (the payload's cwd): PreToolUse, a write
# of FILE there, PostToolUseFailure. Sets PRE_RC, POST_RC.
failed_call() {	# FOLDER FILE ID
	CWD=$1 hook PreToolUse "$(CWD=$1 payload PreToolUse Bash "$3")"
	PRE_RC=$HRC PRE_ERR=$HERR
	as_run sh -c 'echo bad > "$1"' sh "$1/$2" 2>/dev/null
	CWD=$1 hook PostToolUseFailure "$(CWD=$1 payload PostToolUseFailure Bash "$3" '{"error": "exit 1"}')"
	POST_RC=$HRC
}

# 23.8: fake control folders, made as the agent would (as $AS).
fakes() {
	local u=$WHO out=$T/outside-$WHO
	mkdir -p "$out" && as_owner "$out"
	# a) a fake sub/.txfs/ inside the mount (status.json, state naming a
	#    folder of the agent's, with its own ctl.sock that is a file)
	as_run sh -c 'mkdir -p "$1/sub/.txfs" "$2/st" && echo "{}" > "$1/sub/.txfs/status.json" &&
		echo "$2/st" > "$1/sub/.txfs/state" && : > "$2/st/ctl.sock"' sh "$WS" "$out"
	failed_call "$WS/sub" f1.txt toolu_f1
	check_eq "[$u] fake sub/.txfs: PreToolUse takes the real savepoint (exit 0), the failed call is rolled back (2)" \
		"0 2" "$PRE_RC $POST_RC"
	exists sub/f1.txt && fail "[$u] fake sub/.txfs: f1.txt stayed staged" || ok "[$u] fake sub/.txfs: f1.txt gone from the mount"
	exists sub/.txfs/status.json && ok "[$u] fake sub/.txfs: the earlier (kept) fake stays" || fail "[$u] sub/.txfs gone"
	check_eq "[$u] fake sub/.txfs: no savepoint left" 0 "$(savepoints)"
	# b) a fake .txfs/ctl that is a regular file, and one that is a FIFO
	as_run sh -c 'mkdir -p "$1/reg/.txfs" "$1/fifo/.txfs" && echo rollback > "$1/reg/.txfs/ctl" &&
		cp "$1/sub/.txfs/status.json" "$1/sub/.txfs/state" "$1/reg/.txfs/" &&
		cp "$1/sub/.txfs/status.json" "$1/sub/.txfs/state" "$1/fifo/.txfs/" &&
		mkfifo "$1/fifo/.txfs/ctl"' sh "$WS" || fail "[$u] mkfifo in the mount"
	failed_call "$WS/reg" f2.txt toolu_f2
	check_eq "[$u] fake .txfs/ctl (regular file): pre 0, post 2" "0 2" "$PRE_RC $POST_RC"
	exists reg/f2.txt && fail "[$u] fake ctl file: f2.txt stayed staged" || ok "[$u] fake ctl file: f2.txt rolled back"
	failed_call "$WS/fifo" f3.txt toolu_f3
	check_eq "[$u] fake .txfs/ctl (FIFO): pre 0, post 2, no hang" "0 2" "$PRE_RC $POST_RC"
	exists fifo/f3.txt && fail "[$u] fake ctl FIFO: f3.txt stayed staged" || ok "[$u] fake ctl FIFO: f3.txt rolled back"
	exists sub/.txfs/status.json && exists one.txt && ok "[$u] fakes: the calls kept earlier are still staged" ||
		fail "[$u] fakes: an earlier change was lost"
	# c) outside any mount: a fake .txfs/, and a .txfs symlinked to the
	#    real control folder: blocked, nothing staged or written
	as_run sh -c 'mkdir -p "$1/fake/.txfs" "$1/link" && echo "{}" > "$1/fake/.txfs/status.json" &&
		echo "$2" > "$1/fake/.txfs/state" && ln -s "$3/.txfs" "$1/link/.txfs"' sh "$out" "$STATE" "$WS"
	local before
	before=$(txfs_as status --json "$WS")
	CWD=$out/fake hook PreToolUse "$(CWD=$out/fake payload PreToolUse Bash toolu_f4)"
	check_eq "[$u] fake .txfs outside any mount: blocked (exit 2)" 2 "$HRC"
	grep -q 'not inside a txfs mount' <<<"$HERR" && ok "[$u] blocked with the reason on stderr" || fail "[$u] stderr: $HERR"
	CWD=$out/link hook PreToolUse "$(CWD=$out/link payload PreToolUse Bash toolu_f5)"
	check_eq "[$u] symlinked .txfs outside any mount: blocked (exit 2)" 2 "$HRC"
	CWD=$out/link hook PostToolUseFailure "$(CWD=$out/link payload PostToolUseFailure Bash toolu_f5 '{"error": "x"}')"
	check_eq "[$u] symlinked .txfs: the session is untouched (status, no savepoint)" "$before" "$(txfs_as status --json "$WS")"
	CWD=$out/fake HOOK_ENV=TXFS_HOOK_OUTSIDE=allow hook PreToolUse "$(CWD=$out/fake payload PreToolUse Bash toolu_f6)"
	check_eq "[$u] TXFS_HOOK_OUTSIDE=allow: outside a mount the call runs (exit 0), no savepoint" "0 0" "$HRC $(savepoints)"
	# d) a .txfs symlinked inside the mount to the fake: still the real one
	as_run sh -c 'mkdir -p "$1/sym" && ln -s "$2/fake/.txfs" "$1/sym/.txfs"' sh "$WS" "$out"
	failed_call "$WS/sym" f7.txt toolu_f7
	check_eq "[$u] symlinked .txfs inside the mount: pre 0, post 2" "0 2" "$PRE_RC $POST_RC"
	exists sym/f7.txt && fail "[$u] symlinked .txfs: f7.txt stayed" || ok "[$u] symlinked .txfs: f7.txt rolled back"
}

# Overlapping calls: A open, B's PreToolUse waits; A fails and is rolled
# back; then B runs and is kept.
overlap() {
	local u=$WHO bpid n
	hook PreToolUse "$(payload PreToolUse Bash toolu_A)"
	as_run sh -c 'echo a > "$1/a.txt"' sh "$WS"
	( hook PreToolUse "$(payload PreToolUse Bash toolu_B)"; echo "$HRC" >"$T/b.rc" ) &
	bpid=$!
	sleep 1
	n=$(savepoints)
	kill -0 "$bpid" 2>/dev/null && [ "$n" = 1 ] && ok "[$u] overlap: B's PreToolUse waits while A holds the session" ||
		fail "[$u] overlap: B did not wait (savepoints $n)"
	hook PostToolUseFailure "$(payload PostToolUseFailure Bash toolu_A '{"error": "exit 1"}')"
	check_eq "[$u] overlap: A rolled back (exit 2)" 2 "$HRC"
	wait "$bpid"
	check_eq "[$u] overlap: B's PreToolUse then takes its savepoint" "0 1" "$(cat "$T/b.rc") $(savepoints)"
	as_run sh -c 'echo b > "$1/b.txt"' sh "$WS"
	hook PostToolUse "$(payload PostToolUse Bash toolu_B "$BASH_OK")"
	! exists a.txt && exists b.txt && ok "[$u] overlap: A's change gone, B's kept" || fail "[$u] overlap: a.txt/b.txt wrong"
	# past TXFS_HOOK_WAIT: blocked, the holder untouched
	hook PreToolUse "$(payload PreToolUse Bash toolu_C)"
	WAIT=1 hook PreToolUse "$(payload PreToolUse Bash toolu_D)"
	check_eq "[$u] overlap past TXFS_HOOK_WAIT: blocked (exit 2), C still open" "2 1" "$HRC $(savepoints)"
	grep -q 'one tool call at a time' <<<"$HERR" && ok "[$u] the block names the holder" || fail "[$u] block stderr: $HERR"
	hook PostToolUse "$(payload PostToolUse Bash toolu_C "$BASH_OK")"
	# a call left open by a Claude Code that is gone (its process named
	# claude*) is rolled back by the next PreToolUse
	printf '#!/bin/sh\n"$@"\n' >"$T/bin/claude-gone" && chmod 755 "$T/bin/claude-gone"
	local cmd
	cmd=$(hook_cmd PreToolUse)
	payload PreToolUse Bash toolu_E | timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/bin:/bin \
		TMPDIR="$T/hooktmp" "$T/bin/claude-gone" sh -c "$cmd; exit \$?" 2>/dev/null
	check_eq "[$u] a call under claude-gone: savepoint taken" "0 1" "$? $(savepoints)"
	as_run sh -c 'echo e > "$1/orphan.txt"' sh "$WS"
	hook PreToolUse "$(payload PreToolUse Bash toolu_F)"
	check_eq "[$u] next PreToolUse: exit 0, one savepoint (its own)" "0 1" "$HRC $(savepoints)"
	grep -q 'rolling back tool-toolu_E' <<<"$HERR" && ! exists orphan.txt &&
		ok "[$u] the abandoned call was rolled back" || fail "[$u] orphan: $HERR"
	hook PostToolUse "$(payload PostToolUse Bash toolu_F "$BASH_OK")"
}

# The cost of one tool call's hooks (pre + post): 20 calls in a loop of
# their own (no fixture around each), wall clock and CPU time (user +
# system, which a loaded machine does not inflate); the CPU time must stay
# under 50 ms a call.
cost() {
	local u=$WHO pre post i
	pre=$(hook_cmd PreToolUse) post=$(hook_cmd PostToolUse)
	for i in $(seq 20); do
		payload PreToolUse Bash "toolu_c$i" >"$T/cost.pre.$i"
		payload PostToolUse Bash "toolu_c$i" "$BASH_OK" >"$T/cost.post.$i"
	done
	chmod 644 "$T"/cost.*
	timeout -k 5 120 "${AS[@]}" env -i PATH=/usr/bin:/bin TMPDIR="$T/hooktmp" \
		bash -c 'TIMEFORMAT="%R %U %S"; time (for i in $(seq 20); do
			$1 <"$3/cost.pre.$i" || exit 1; $2 <"$3/cost.post.$i" || exit 1; done)' \
		sh "$pre" "$post" "$T" 2>"$T/cost.out" >/dev/null
	check_eq "[$u] cost: 20 calls hooked, exit 0" 0 "$?"
	read -r wall usr sys < <(tail -n 1 "$T/cost.out")
	local wms cms
	wms=$(awk -v w="$wall" 'BEGIN { printf "%.1f", w * 1000 / 20 }')
	cms=$(awk -v a="$usr" -v b="$sys" 'BEGIN { printf "%.1f", (a + b) * 1000 / 20 }')
	echo "# [$u] hook cost a tool call (pre + post): $wms ms wall, $cms ms CPU; load $(cut -d' ' -f1 /proc/loadavg)"
	awk -v c="$cms" 'BEGIN { exit !(c < 50) }' && ok "[$u] hook cost $cms ms CPU a call (< 50 ms)" ||
		fail "[$u] hook cost $cms ms CPU a call (>= 50 ms)"
	check_eq "[$u] cost: no savepoint left" 0 "$(savepoints)"
}

for_each_user body
finish
