#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# claude_real - the real Claude Code (npm @anthropic-ai/claude-code, pinned
# below, installed once into the build folder and reused) run headless
# (`claude -p`) against a scripted Anthropic Messages API on 127.0.0.1
# (fake_anthropic.py: SSE streaming as the real API; its replies come from
# a script, so the tool calls are fixed), as root and as the test user:
#   1. `txfs run -- claude -p`: Claude Code writes a file (Write), reads
#      and edits README.md (Read, Edit), runs Bash; it exits 0 and txfs
#      commits: the real directory has exactly those changes;
#   2. CLAUDE_CODE_SHELL_PREFIX=txfs-claude-shell on a `txfs mount`ed
#      workspace: a Bash call that exits 0 is kept; one that writes a file
#      and exits 1 is rolled back (the file is gone from the mount), and the
#      model's next request carries txfs's rollback note in its tool_result;
#      the real directory is untouched;
#   3. the hooks (claude-settings.json through --settings) on a mounted
#      workspace: Write kept; a failing Bash call rolled back, the hook's
#      note in the model's next request; a call Claude Code's permission
#      rules deny after PreToolUse leaves no savepoint, and the next call
#      runs and is kept; three read-only calls Claude Code runs in parallel
#      are serialized by the hook (each savepoint taken alone), none blocked.
# Each scenario prints the server's transcript (tool calls, tool results)
# as "# " lines. Skips (77) when npm cannot fetch the package. The only
# network use besides npm's registry: 127.0.0.1.
. "$(dirname "$0")/lib.sh"

RUN_SECS=240
CC_VERSION=2.1.332	# `npm view @anthropic-ai/claude-code version`; a
			# native binary (node only runs its postinstall)
require_landlock
DECOY_PROJECT=$T/no-decoy-project	# run_txfs passes it on; unused here
command -v npm >/dev/null || skip "npm is not installed"
CACHE=${TXFS_BUILD:?TXFS_BUILD must name the build folder}/claude-code-$CC_VERSION
CLAUDE=$CACHE/node_modules/.bin/claude
if ! t 60 "$CLAUDE" --version 2>/dev/null | qgrep "^$CC_VERSION "; then
	echo "# installing @anthropic-ai/claude-code@$CC_VERSION into $CACHE"
	rm -rf "$CACHE" && mkdir -p "$CACHE" || fail "mkdir $CACHE"
	t 900 npm install --prefix "$CACHE" --no-audit --no-fund --no-save \
		--loglevel=error "@anthropic-ai/claude-code@$CC_VERSION" \
		>"$T/npm.out" 2>&1 ||
		skip "npm could not install @anthropic-ai/claude-code@$CC_VERSION (registry unreachable?): $(grep -m 3 'npm error' "$T/npm.out" | tr '\n' ' ')"
	t 60 "$CLAUDE" --version 2>/dev/null | qgrep "^$CC_VERSION " ||
		skip "the installed claude does not run: $(t 60 "$CLAUDE" --version 2>&1 | head -c 300)"
fi
chmod -R a+rX "$CACHE" 2>/dev/null
echo "# claude $("$CLAUDE" --version)"

cp "$(dirname "$0")/fake_anthropic.py" "$TXFS_SRC/cli/agents/txfs-claude-shell" \
	"$TXFS_SRC/cli/agents/claude-settings.json" "$TXFS_BUILD/cli/txfs-claude-hook" \
	"$T/bin/" && chmod 755 "$T/bin"/* || fail "copy the agent files"
mkdir -p "$T/tmp" && chmod 1777 "$T/tmp"

# serve SCRIPT_JSON: the fake API for one scenario; PORT, SLOG.
serve() {
	SEQ=$((SEQ + 1))
	SLOG=$T/api$SEQ.jsonl
	printf '%s' "$1" >"$T/script$SEQ.json"
	rm -f "$T/port$SEQ"
	start_bg "$PY" "$T/bin/fake_anthropic.py" "$T/script$SEQ.json" "$SLOG" "$T/port$SEQ"
	SERVER=$BG
	for _ in $(seq 100); do [ -s "$T/port$SEQ" ] && break; sleep 0.1; done
	[ -s "$T/port$SEQ" ] || { fail "the fake API did not start"; finish; }
	PORT=$(cat "$T/port$SEQ")
}
unserve() { kill -KILL "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; }

# The environment Claude Code runs with: the fake API, no telemetry,
# update checks or other traffic, its state under the decoy home.
claude_env() {
	CENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C.UTF-8
		TMPDIR="$T/tmp" ANTHROPIC_BASE_URL="http://127.0.0.1:$PORT"
		ANTHROPIC_API_KEY=dummy CLAUDE_CONFIG_DIR="$HOME_DECOY/.claude"
		CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 DISABLE_AUTOUPDATER=1
		DISABLE_TELEMETRY=1 DISABLE_ERROR_REPORTING=1
		DISABLE_NON_ESSENTIAL_MODEL_CALLS=1 CLAUDE_CODE_DISABLE_TERMINAL_TITLE=1)
	mkdir -p "$HOME_DECOY/.claude" && as_owner "$HOME_DECOY"
}

# claude_in DIR ARGS...: claude -p ARGS as $AS in DIR (env: CENV, XENV).
claude_in() {
	local dir=$1
	shift
	timeout -k 5 240 "${AS[@]}" env -i "${CENV[@]}" "${XENV[@]}" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$dir" \
		"$CLAUDE" -p "$@" </dev/null >"$T/claude$SEQ.out" 2>"$T/claude$SEQ.err"
	CRC=$?
	[ $CRC = 124 ] || [ $CRC = 137 ] && fail "timeout: claude -p in $dir"
	return 0
}

# transcript: the server's log, one "# " line a tool call or result.
transcript() {
	"$PY" - "$SLOG" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if not e.get("main"):
        continue
    for r in e["tool_results"]:
        print("# %s   <- tool_result %s%s: %s" % (sys.argv[2], r["tool_use_id"],
              " (is_error)" if r["is_error"] else "",
              json.dumps(r["text"][:300])))
    for n in e.get("notes", []):
        print("# %s   <- note: %s" % (sys.argv[2], json.dumps(n[:300])))
    for c in e["tool_calls"]:
        print("# %s turn %s -> %s %s %s" % (sys.argv[2], e["turn"], c["id"], c["name"],
              json.dumps(c["input"])))
    if not e["tool_calls"]:
        print("# %s turn %s -> text %s" % (sys.argv[2], e["turn"], json.dumps(e["text"])))
PY
}

# api_turn N: the JSON log line of the model's request N (main requests).
api_turn() {
	"$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("main") and e.get("turn") == int(sys.argv[2]):
        print(json.dumps(e)); break' "$SLOG" "$1"
}

script_json() {	# script_json 'PYTHON LIST EXPRESSION' with WS bound
	"$PY" -c 'import json, sys; WS = sys.argv[2]; print(json.dumps(eval(sys.argv[1])))' "$1" "$WS"
}

# 1. Claude Code wrapped whole: edits, Bash, exit 0, committed.
whole() {
	local u=$WHO
	git_ws
	serve "$(script_json '[
	  [{"type": "text", "text": "I will write the file."},
	   {"type": "tool_use", "name": "Write", "input": {"file_path": WS + "/hello.txt", "content": "hello from claude\n"}}],
	  [{"type": "tool_use", "name": "Read", "input": {"file_path": WS + "/README.md"}}],
	  [{"type": "tool_use", "name": "Edit", "input": {"file_path": WS + "/README.md", "old_string": "# demo", "new_string": "# demo, edited by claude"}}],
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "echo ran > bash.txt && cat hello.txt", "description": "run"}}],
	  [{"type": "text", "text": "All done."}]]')"
	claude_env
	run_txfs "${CENV[@]}" -- --allow-write "$HOME_DECOY/.claude" -- \
		"$CLAUDE" -p "write hello.txt, edit README.md, run a command" \
		--allowedTools "Write,Edit,Read,Bash"
	unserve
	transcript "[$u] run"
	check_rc "[$u] txfs run -- claude -p" 0
	[ "$RC" = 0 ] || echo "# claude's stdout: $(head -c 600 "$RUN_OUT")"
	check_eq "[$u] run: hello.txt committed" "hello from claude" "$(cat "$WS/hello.txt" 2>&1)"
	check_eq "[$u] run: README.md edited and committed" "# demo, edited by claude" "$(cat "$WS/README.md" 2>&1)"
	check_eq "[$u] run: the Bash call's file committed" "ran" "$(cat "$WS/bash.txt" 2>&1)"
	check_eq "[$u] run: nothing else in the real directory" ".git README.md bash.txt hello.txt" \
		"$(cd "$WS" && ls -A | tr '\n' ' ' | sed 's/ $//')"
	api_turn 4 | qgrep 'hello from claude' && ok "[$u] run: the model saw the Bash output" ||
		fail "[$u] run: Bash output not in the model's request"
	grep -q 'committed' <<<"$ERR$OUT" && ok "[$u] run: txfs reports the commit" || fail "[$u] run: no commit report: $ERR"
	check_unmounted "[$u] run"
}

# 2. The shell prefix on a mounted workspace.
prefix() {
	local u=$WHO t2
	git_ws
	mount_ws
	serve "$(script_json '[
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "echo good > good.txt", "description": "good"}}],
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "echo bad > bad.txt; exit 1", "description": "fails"}}],
	  [{"type": "text", "text": "All done."}]]')"
	claude_env
	XENV=(CLAUDE_CODE_SHELL_PREFIX="$T/bin/txfs-claude-shell" TXFS="$TXFS_BIN")
	claude_in "$WS" "run two commands" --allowedTools "Bash"
	XENV=()
	unserve
	transcript "[$u] prefix"
	check_eq "[$u] prefix: claude -p exit 0 ($(head -c 300 "$T/claude$SEQ.err"))" 0 "$CRC"
	exists good.txt && ok "[$u] prefix: the call that exited 0 is kept" || fail "[$u] prefix: good.txt missing"
	exists bad.txt && fail "[$u] prefix: bad.txt survived its failed call" || ok "[$u] prefix: the failed call was rolled back"
	t2=$(api_turn 2)
	grep -q 'rolled-back (exit 1)' <<<"$t2" && grep -q 'bad.txt' <<<"$t2" &&
		ok "[$u] prefix: the next request's tool_result carries the rollback note" ||
		fail "[$u] prefix: no rollback note in: $t2"
	txfs_as log --json --commands "$WS" >"$T/log$SEQ"
	grep -q '"outcome":"kept"' "$T/log$SEQ" && grep -q '"outcome":"rolled-back"' "$T/log$SEQ" &&
		ok "[$u] prefix: txfs log has both commands (kept, rolled-back)" || fail "[$u] prefix: txfs log: $(head -c 300 "$T/log$SEQ")"
	umount_ws
	[ ! -e "$WS/good.txt" ] && [ ! -e "$WS/bad.txt" ] && ok "[$u] prefix: the real directory is untouched" ||
		fail "[$u] prefix: the real directory changed"
	check_unmounted "[$u] prefix"
}

# 3. The hooks on a mounted workspace.
hooks() {
	local u=$WHO t2
	git_ws
	mount_ws
	sed "s|\"txfs-claude-hook |\"$T/bin/txfs-claude-hook |" "$T/bin/claude-settings.json" >"$T/settings-$WHO.json"
	chmod 644 "$T/settings-$WHO.json"
	serve "$(script_json '[
	  [{"type": "tool_use", "name": "Write", "input": {"file_path": WS + "/good.txt", "content": "good\n"}}],
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "sh -c \"echo bad > bad.txt; exit 1\"", "description": "fails"}}],
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "touch denied.txt", "description": "not allowed"}}],
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "sh -c \"echo after > after.txt\"", "description": "after"}}],
	  [{"type": "tool_use", "name": "Bash", "input": {"command": "cat README.md", "description": "p1"}},
	   {"type": "tool_use", "name": "Bash", "input": {"command": "cat missing.txt", "description": "p2"}},
	   {"type": "tool_use", "name": "Bash", "input": {"command": "ls", "description": "p3"}}],
	  [{"type": "text", "text": "All done."}]]')"
	claude_env
	XENV=(TXFS_HOOK_WAIT=60)
	claude_in "$WS" "three calls" --settings "$T/settings-$WHO.json" \
		--allowedTools "Write,Edit,Read,Bash(sh:*),Bash(cat:*),Bash(ls:*)"
	XENV=()
	unserve
	transcript "[$u] hooks"
	check_eq "[$u] hooks: claude -p exit 0 ($(head -c 300 "$T/claude$SEQ.err"))" 0 "$CRC"
	exists good.txt && ok "[$u] hooks: Write kept" || fail "[$u] hooks: good.txt missing"
	exists bad.txt && fail "[$u] hooks: bad.txt survived" || ok "[$u] hooks: the failing Bash call was rolled back"
	t2=$(api_turn 2)
	grep -q 'rolled back this Bash call' <<<"$t2" && ok "[$u] hooks: the model's next request has the hook's rollback note" ||
		fail "[$u] hooks: no rollback note in: $t2"
	api_turn 3 | qgrep '"is_error": true' && ok "[$u] hooks: Claude Code denied touch (its permission rules)" ||
		fail "[$u] hooks: touch was not denied"
	exists denied.txt && fail "[$u] hooks: denied.txt exists" || ok "[$u] hooks: the denied call changed nothing"
	exists after.txt && ok "[$u] hooks: the call after the denied one ran and was kept" || fail "[$u] hooks: after.txt missing"
	# turn 4: three read-only calls, which Claude Code runs in parallel
	check_eq "[$u] hooks: parallel calls: three results, the failing one an error, none blocked" "3 1 0" \
		"$(api_turn 5 | "$PY" -c 'import json, sys; r = json.load(sys.stdin)["tool_results"]
print(len(r), sum(x["is_error"] for x in r), sum("blocked" in x["text"] for x in r))')"
	txfs_as log --json "$WS" | grep '"event":"savepoint","name":"tool-' >"$T/sp$SEQ"
	check_eq "[$u] hooks: every tool call's savepoint taken alone (level 1: calls serialized)" \
		"7 7" "$(wc -l <"$T/sp$SEQ") $(grep -c '"level":1}' "$T/sp$SEQ")"
	check_eq "[$u] hooks: no savepoint left (the denied call's dropped)" 0 \
		"$(OUT=$(txfs_as status --json "$WS") jget savepoints)"
	umount_ws
	check_unmounted "[$u] hooks"
}

exists() { as_run test -e "$WS/$1"; }

body() {
	whole
	prefix
	hooks
}

for_each_user body
finish
