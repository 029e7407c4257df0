#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# allow_write - wrapping a whole agent: a stand-in "agent binary" that
# keeps its state under $HOME (~/.claude/projects/..., ~/.cache/agent/...)
# with HOME = a decoy home, as root and as the unprivileged test user.
#   - plain `txfs run -- agent` fails (its state folders are read-only) and
#     rolls back; the decoy home is byte-identical;
#   - `--allow-write ~/.claude --allow-write ~/.cache` works: committed, the
#     state is written, the workspace edit is in the real directory;
#   - the policy rule `allow-write ~/.claude ~/.cache` does the same;
#   - with --allow-write the agent still cannot write anywhere else outside
#     (notes.txt, .bashrc, .ssh/id_rsa, the decoy project, a new file in
#     $HOME, a delete), nor control the transaction through the socket:
#     those decoys stay byte-identical;
#   - the environment: API keys pass through; --clean-env drops the rest
#     except what --env names; --env NAME=VALUE sets one;
#   - txfs exec --allow-write does the same inside a mounted session, and
#     the policy's allow-write reaches txfs exec through the daemon.
. "$(dirname "$0")/lib.sh"

require_landlock

cat >"$T/bin/fake-agent" <<'AGENT'
#!/bin/sh
# The stand-in agent binary: its own state first (as real agents do at
# start), then its work in the workspace.
set -e
mkdir -p "$HOME/.claude/projects" "$HOME/.cache/agent"
echo '{"session":1}' >"$HOME/.claude/projects/state.json"
echo cache >"$HOME/.cache/agent/blob"
echo "edited by the agent" >>agent.txt
echo "key=${ANTHROPIC_API_KEY:-none} foo=${FOO:-none} bar=${BAR:-none}" >env.txt
set +e
if [ "${1:-}" = --evil ]; then
	for f in "$HOME/notes.txt" "$HOME/.bashrc" "$HOME/.ssh/id_rsa" \
		"$HOME/.claude/../evil.txt" "$DECOY/src/file.txt"; do
		(echo pwned >>"$f") 2>/dev/null && echo "WROTE $f"
	done
	ln -s /x "$HOME/evil-link" 2>/dev/null && echo "WROTE link"
	rm -f "$HOME/notes.txt" 2>/dev/null
	[ -e "$HOME/notes.txt" ] || echo "DELETED notes"
	"$TXFS" commit "$WS" >/dev/null 2>&1 && echo "CONTROLLED commit"
	"$TXFS" rollback "$WS" >/dev/null 2>&1 && echo "CONTROLLED rollback"
fi
exit 0
AGENT
chmod 755 "$T/bin/fake-agent"
AGENT=$T/bin/fake-agent

home_fixture() {
	ws_fixture
	mkdir -p "$HOME_DECOY/.claude" "$HOME_DECOY/.cache"
	as_owner "$HOME_DECOY"
	HOME_BEFORE=$(snap "$HOME_DECOY")
	PROJ_BEFORE=$(snap "$DECOY_PROJECT")
}

# outside_intact WHAT: the decoy home (but for .claude/.cache) and the
# decoy project are byte-identical.
outside_intact() {
	check_snap "$1: decoy home intact (outside .claude and .cache)" \
		"$(grep -v '\./\.claude\|\./\.cache' <<<"$HOME_BEFORE")" \
		"$(snap "$HOME_DECOY" | grep -v '\./\.claude\|\./\.cache')"
	check_snap "$1: decoy project intact" "$PROJ_BEFORE" "$(snap "$DECOY_PROJECT")"
}

body() {
	local u=$WHO pol
	# -- plain txfs run: the agent cannot start
	home_fixture
	run_txfs -- --json -- "$AGENT"
	check_rc "[$u] plain run: the agent fails at start" 1
	check_action "[$u] plain run" rolled-back
	check_snap "[$u] plain run: decoy home byte-identical" "$HOME_BEFORE" "$(snap "$HOME_DECOY")"
	[ -e "$WS/agent.txt" ] && fail "[$u] plain run: agent.txt committed" || ok "[$u] plain run: workspace unchanged"

	# -- --allow-write: works, and nothing else outside is writable
	home_fixture
	run_txfs ANTHROPIC_API_KEY=sk-test FOO=foo -- --json \
		--allow-write "$HOME_DECOY/.claude" --allow-write "$HOME_DECOY/.cache" -- "$AGENT" --evil
	check_rc "[$u] --allow-write: the agent runs" 0
	check_action "[$u] --allow-write" committed
	check_eq "[$u] --allow-write: its state is written" '{"session":1}' "$(cat "$HOME_DECOY/.claude/projects/state.json" 2>&1)"
	check_eq "[$u] --allow-write: its cache is written" cache "$(cat "$HOME_DECOY/.cache/agent/blob" 2>&1)"
	check_eq "[$u] --allow-write: the workspace edit is committed" "edited by the agent" "$(cat "$WS/agent.txt" 2>&1)"
	check_eq "[$u] --allow-write: nothing else outside was written, the socket refused it" "" "$(grep -v '^{' "$RUN_OUT")"
	outside_intact "[$u] --allow-write"
	check_eq "[$u] environment passes through (API key)" "key=sk-test foo=foo bar=none" "$(cat "$WS/env.txt" 2>&1)"

	# -- an allow-write folder holding the state folder is refused (the
	# command could rewrite the layer, its undo log, the audit log)
	home_fixture
	run_txfs -- --json --allow-write "$T" -- "$AGENT"
	check_rc "[$u] --allow-write of a folder holding the state folder: refused" 2
	grep -q 'state folder' <<<"$ERR" && ok "[$u] ... and says why" || fail "[$u] refusal message: $ERR"
	run_txfs -- --json --allow-write "$STATE" -- "$AGENT"
	check_rc "[$u] --allow-write of the state folder itself: refused" 2

	# -- --clean-env --env
	home_fixture
	run_txfs ANTHROPIC_API_KEY=sk-test FOO=foo -- --clean-env --env ANTHROPIC_API_KEY --env BAR=bar \
		--allow-write "$HOME_DECOY/.claude" --allow-write "$HOME_DECOY/.cache" -- "$AGENT"
	check_rc "[$u] --clean-env" 0
	check_eq "[$u] --clean-env keeps --env NAME, sets --env NAME=VALUE, drops the rest" \
		"key=sk-test foo=none bar=bar" "$(cat "$WS/env.txt" 2>&1)"

	# -- the policy rule: its form is checked (FILE:LINE:COL)
	printf 'allow-write ~/.claude /opt\nallow-write relative/path\nallow-write\n' >"$T/bad$SEQ.policy"
	chmod 644 "$T/bad$SEQ.policy"
	local got rc
	got=$(txfs_as policy check "$T/bad$SEQ.policy" 2>&1)
	rc=$?
	check_eq "[$u] policy check of bad allow-write rules" \
		"$T/bad$SEQ.policy:2:13: allow-write takes absolute paths or ~/PATH|$T/bad$SEQ.policy:3:12: 'allow-write' needs at least one path|1" \
		"$(paste -sd'|' <<<"$got")|$rc"
	home_fixture
	pol=$T/allow$SEQ.policy
	printf 'deny delete,rename **/.git\nallow-write ~/.claude ~/.cache   # the agent state\n' >"$pol"
	chmod 644 "$pol"
	run_txfs -- --json --policy "$pol" -- "$AGENT" --evil
	check_rc "[$u] policy allow-write: the agent runs" 0
	check_action "[$u] policy allow-write" committed
	check_eq "[$u] policy allow-write: state written" '{"session":1}' "$(cat "$HOME_DECOY/.claude/projects/state.json" 2>&1)"
	outside_intact "[$u] policy allow-write"
	check_eq "[$u] policy allow-write: nothing else written" "" "$(grep -v '^{' "$RUN_OUT")"

	# -- txfs exec: --allow-write, and the daemon's policy allow-write
	home_fixture
	txfs_as mount --state "$STATE" "$WS" >/dev/null 2>&1 || fail "[$u] mount"
	ag_exec -- "$AGENT"
	check_eq "[$u] exec without allow-write: rolled back" rolled-back "$(jget outcome)"
	ag_exec --allow-write "$T" -- "$AGENT"
	check_eq "[$u] exec --allow-write of a folder holding the state: refused (2)" 2 "$RC"
	ag_exec --allow-write "$HOME_DECOY/.claude" --allow-write "$HOME_DECOY/.cache" -- "$AGENT" --evil
	check_eq "[$u] exec --allow-write: kept" kept "$(jget outcome)"
	check_eq "[$u] exec --allow-write: nothing else written" "" "$CMDOUT"
	outside_intact "[$u] exec --allow-write"
	txfs_as umount "$WS" >/dev/null 2>&1
	home_fixture
	txfs_as mount --state "$STATE" --policy "$pol" "$WS" >/dev/null 2>&1 || fail "[$u] mount --policy"
	ag_exec -- "$AGENT" --evil
	check_eq "[$u] exec under policy allow-write: kept" kept "$(jget outcome)"
	check_eq "[$u] exec under policy allow-write: nothing else written" "" "$CMDOUT"
	outside_intact "[$u] exec under policy allow-write"
	txfs_as umount "$WS" >/dev/null 2>&1
	# a policy allow-write over the state folder: txfs exec refuses to run
	# the command, and ends it (no savepoint left open)
	home_fixture
	printf 'allow-write %s\n' "$T" >"$T/over$SEQ.policy"
	chmod 644 "$T/over$SEQ.policy"
	txfs_as mount --state "$STATE" --policy "$T/over$SEQ.policy" "$WS" >/dev/null 2>&1 || fail "[$u] mount --policy over"
	ag_exec -- sh -c 'echo x > over.txt'
	check_eq "[$u] exec under a policy allow-write over the state folder: 125" 125 "$RC"
	check_eq "[$u] ... no savepoint left open" 0 "$(OUT=$(txfs_as status --json "$WS") jget savepoints)"
	as_run test -e "$WS/over.txt" && fail "[$u] over.txt written" || ok "[$u] ... the command did not run"
	txfs_as umount "$WS" >/dev/null 2>&1
	check_unmounted "[$u] allow_write"
}

for_each_user body
finish
