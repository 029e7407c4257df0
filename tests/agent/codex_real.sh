#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# codex_real - the real Codex CLI (npm @openai/codex, pinned below,
# installed once into the build folder and reused) run headless (`codex
# exec`) against a scripted OpenAI Responses API on 127.0.0.1
# (fake_openai.py: SSE as the real API streams it; the replies come from a
# script, so the tool calls are fixed), as root and as the test user:
#   1. `txfs run --allow-write ~/.codex -- codex exec`: Codex runs a shell
#      command (exec_command) that writes a file and reads README.md; it
#      exits 0 and txfs commits: the real directory has exactly that file;
#   2. through `txfs mcp` on a `txfs mount`ed workspace (config.toml's
#      [mcp_servers.txfs], its tools approved): the model calls the exec
#      tool twice; the failing call is rolled back (its file gone from the
#      mount) and the model's next request carries the rolled-back report;
#      the other is kept; the real directory is untouched.
# Each scenario prints the server's transcript as "# " lines. Skips (77)
# when npm cannot fetch the package. Network besides npm: 127.0.0.1 only.
. "$(dirname "$0")/lib.sh"

RUN_SECS=240
CODEX_VERSION=0.171.0	# `npm view @openai/codex version`; a native binary
require_landlock
DECOY_PROJECT=$T/no-decoy-project	# run_txfs passes it on; unused here
command -v npm >/dev/null || skip "npm is not installed"
CACHE=${TXFS_BUILD:?TXFS_BUILD must name the build folder}/codex-$CODEX_VERSION
CODEX=$CACHE/node_modules/.bin/codex
if ! t 60 "$CODEX" --version 2>/dev/null | qgrep "^codex-cli $CODEX_VERSION$"; then
	echo "# installing @openai/codex@$CODEX_VERSION into $CACHE"
	rm -rf "$CACHE" && mkdir -p "$CACHE" || fail "mkdir $CACHE"
	t 900 npm install --prefix "$CACHE" --no-audit --no-fund --no-save \
		--loglevel=error "@openai/codex@$CODEX_VERSION" >"$T/npm.out" 2>&1 ||
		skip "npm could not install @openai/codex@$CODEX_VERSION (registry unreachable?): $(grep -m 3 'npm error' "$T/npm.out" | tr '\n' ' ')"
	t 60 "$CODEX" --version 2>/dev/null | qgrep "^codex-cli $CODEX_VERSION$" ||
		skip "the installed codex does not run: $(t 60 "$CODEX" --version 2>&1 | head -c 300)"
fi
chmod -R a+rX "$CACHE" 2>/dev/null
echo "# $("$CODEX" --version)"
cp "$(dirname "$0")/fake_openai.py" "$T/bin/" && chmod 755 "$T/bin/fake_openai.py" || fail "copy fake_openai.py"

serve() {	# serve SCRIPT_JSON: PORT, SLOG
	SEQ=$((SEQ + 1))
	SLOG=$T/api$SEQ.jsonl
	printf '%s' "$1" >"$T/script$SEQ.json"
	start_bg "$PY" "$T/bin/fake_openai.py" "$T/script$SEQ.json" "$SLOG" "$T/port$SEQ"
	SERVER=$BG
	for _ in $(seq 100); do [ -s "$T/port$SEQ" ] && break; sleep 0.1; done
	[ -s "$T/port$SEQ" ] || { fail "the fake API did not start"; finish; }
	PORT=$(cat "$T/port$SEQ")
}
unserve() { kill -KILL "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; }

# codex_home [EXTRA_TOML]: $HOME_DECOY/.codex/config.toml naming the fake
# API as the model provider; CENV: Codex's environment.
codex_home() {
	mkdir -p "$HOME_DECOY/.codex"
	cat >"$HOME_DECOY/.codex/config.toml" <<TOML
model = "gpt-5-codex"
model_provider = "fake"
[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:$PORT/v1"
wire_api = "responses"
env_key = "FAKE_API_KEY"
${1:-}
TOML
	as_owner "$HOME_DECOY"
	CENV=(PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C.UTF-8
		CODEX_HOME="$HOME_DECOY/.codex" FAKE_API_KEY=dummy)
}

transcript() {
	"$PY" - "$SLOG" "$1" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if not e.get("main"):
        continue
    for o in e["outputs"]:
        print("# %s   <- output %s: %s" % (sys.argv[2], o["call_id"], json.dumps(o["output"][:300])))
    for c in e["calls"]:
        print("# %s turn %s -> %s %s %s" % (sys.argv[2], e["turn"], c["call_id"], c["name"], c["arguments"]))
    if not e["calls"]:
        print("# %s turn %s -> text %s" % (sys.argv[2], e["turn"], json.dumps(e["text"])))
PY
}

api_turn() {
	"$PY" -c 'import json, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("main") and e.get("turn") == int(sys.argv[2]):
        print(json.dumps(e)); break' "$SLOG" "$1"
}

exists() { as_run test -e "$WS/$1"; }

# 1. Codex wrapped whole.
whole() {
	local u=$WHO
	git_ws
	serve '[[{"type": "call", "name": "exec_command", "arguments": {"cmd": "echo hi > hi.txt && cat README.md"}}],
		[{"type": "text", "text": "All done."}]]'
	codex_home
	run_txfs "${CENV[@]}" -- --allow-write "$HOME_DECOY/.codex" -- \
		"$CODEX" exec --skip-git-repo-check -s danger-full-access "write hi.txt"
	unserve
	transcript "[$u] run"
	check_rc "[$u] txfs run -- codex exec" 0
	[ "$RC" = 0 ] || echo "# codex's stdout: $(head -c 600 "$RUN_OUT")"
	check_eq "[$u] run: hi.txt committed" "hi" "$(cat "$WS/hi.txt" 2>&1)"
	check_eq "[$u] run: nothing else in the real directory" ".git README.md hi.txt" \
		"$(cd "$WS" && ls -A | tr '\n' ' ' | sed 's/ $//')"
	api_turn 1 | qgrep 'Process exited with code 0.*# demo' && ok "[$u] run: the model saw the command's output" ||
		fail "[$u] run: output not in the model's request: $(api_turn 1 | head -c 400)"
	grep -q 'committed' <<<"$ERR" && ok "[$u] run: txfs reports the commit" || fail "[$u] run: no commit report: $ERR"
	check_unmounted "[$u] run"
}

# 2. Codex through txfs mcp on a mounted workspace.
mcp() {
	local u=$WHO t1
	git_ws
	mount_ws
	serve '[[{"type": "call", "name": "exec", "namespace": "mcp__txfs", "arguments": {"argv": ["sh", "-c", "echo bad > bad.txt; exit 1"]}}],
		[{"type": "call", "name": "exec", "namespace": "mcp__txfs", "arguments": {"argv": ["sh", "-c", "echo good > good.txt"]}}],
		[{"type": "text", "text": "All done."}]]'
	codex_home "[mcp_servers.txfs]
command = \"$TXFS_BIN\"
args = [\"mcp\", \"$WS\"]
default_tools_approval_mode = \"approve\""
	timeout -k 5 240 "${AS[@]}" env -i "${CENV[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
		"$CODEX" exec --skip-git-repo-check -s read-only "use txfs" </dev/null \
		>"$T/codex$SEQ.out" 2>"$T/codex$SEQ.err"
	CRC=$?
	unserve
	transcript "[$u] mcp"
	check_eq "[$u] mcp: codex exec exit 0 ($(tail -c 300 "$T/codex$SEQ.err"))" 0 "$CRC"
	exists bad.txt && fail "[$u] mcp: bad.txt survived its failed call" || ok "[$u] mcp: the failed exec call was rolled back"
	exists good.txt && ok "[$u] mcp: the exec call that exited 0 is kept" || fail "[$u] mcp: good.txt missing"
	t1=$(api_turn 1)
	grep -q 'rolled-back' <<<"$t1" && grep -q 'bad.txt' <<<"$t1" &&
		ok "[$u] mcp: the model's next request carries the rolled-back report" || fail "[$u] mcp: no report in: $t1"
	umount_ws
	[ ! -e "$WS/good.txt" ] && [ ! -e "$WS/bad.txt" ] && ok "[$u] mcp: the real directory is untouched" ||
		fail "[$u] mcp: the real directory changed"
	check_unmounted "[$u] mcp"
}

body() {
	whole
	mcp
}

for_each_user body
finish
