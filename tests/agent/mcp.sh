#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mcp - `txfs mcp` driven by a scripted MCP client (mcp_client.py), as root
# and as the unprivileged test user: initialize, notifications/initialized,
# ping, tools/list, the 20-step session of session.sh through the exec
# tool, log/diff/status/savepoint/rollback/commit tools, errors for bad
# params, malformed frames, a call after the mount is gone; then the real
# directory equals the model of session.sh and git fsck passes. A second
# mount under `control deny commit`: the commit tool is refused, the
# real directory untouched. A third: the features of mcp_client.py
# features (exec output and report, caps, cwd, timeout, progress,
# cancellation, `--`-looking names, invalid arguments of every tool, the
# frame limit), the real directory untouched. A fourth under --no-ctl-verbs
# (and txfs mcp --tools): the control verbs are not offered.
. "$(dirname "$0")/lib.sh"

require_landlock
command -v cc >/dev/null || skip "cc is needed"
cp "$(dirname "$0")/mcp_client.py" "$T/bin/" && chmod 755 "$T/bin/mcp_client.py"

# relay the client's verdicts
relay() {
	local l
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "[$WHO] mcp: ${l#ok - }" ;;
		"FAIL: "*) fail "[$WHO] mcp: ${l#FAIL: }" ;;
		*) echo "# $l" ;;
		esac
	done
}

MAIN1='#include <stdio.h>
int main(void) { puts("hello"); return 0; }'
TEST='echo running > test.log; ./hello | grep -x "hello, world" >/dev/null'

body() {
	local m before
	git_ws
	m=$T/model$SEQ
	cp -a "$WS" "$m"
	mount_ws
	relay < <(timeout -k 5 400 "$PY" "$T/bin/mcp_client.py" session "$WS" "$TXFS_BIN" \
		"${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C SLEEPER="$SLEEPER" \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" 2>&1 || echo "FAIL: mcp_client.py session exited $?")
	(cd "$m" && "${AS[@]}" sh -c "printf '%s\n' '$MAIN1' > main.c && cc -o hello main.c &&
		sed -i 's/\"hello\"/\"hello, world\"/' main.c && cc -o hello main.c && $TEST;
		mkdir src && mv main.c src/ && echo '/* greets */' >> src/main.c && cc -o hello src/main.c &&
		echo '// ok' >> src/main.c && rm hello && printf 'hello\ntest.log\n' > .gitignore &&
		git add -A && git -c user.name=agent -c user.email=agent@example.invalid commit -qm x") >/dev/null 2>&1
	check_snap "[$WHO] mcp: after the commit tool the real directory equals the model (without .git)" \
		"$(snap_nt "$m" | grep -v '^./.git\| ./.git/')" "$(snap_nt "$WS" | grep -v '^./.git\| ./.git/')"
	check_eq "[$WHO] mcp: HEAD's tree equals the model's" \
		"$(git -C "$m" -c safe.directory='*' rev-parse 'HEAD^{tree}')" "$(git -C "$WS" -c safe.directory='*' rev-parse 'HEAD^{tree}')"
	git -C "$WS" -c safe.directory='*' fsck --strict >/dev/null 2>&1 && ok "[$WHO] mcp: git fsck" || fail "[$WHO] mcp: git fsck"
	check_unmounted "[$WHO] mcp session"

	# control deny commit
	git_ws
	before=$(snap "$WS")
	printf 'deny delete,rename **/.git\ncontrol deny commit\n' >"$T/deny$SEQ.policy"
	chmod 644 "$T/deny$SEQ.policy"
	mount_ws --policy "$T/deny$SEQ.policy"
	relay < <(timeout -k 5 120 "$PY" "$T/bin/mcp_client.py" denied "$WS" "$TXFS_BIN" \
		"${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" 2>&1 || echo "FAIL: mcp_client.py denied exited $?")
	umount_ws
	check_snap "[$WHO] mcp: control deny commit: real directory unchanged" "$before" "$(snap "$WS")"
	check_unmounted "[$WHO] mcp denied"

	# exec's output, report, caps, cwd, timeout, progress, cancellation...
	git_ws
	before=$(snap "$WS")
	mount_ws
	relay < <(SLEEPER="$SLEEPER" timeout -k 5 300 "$PY" "$T/bin/mcp_client.py" features "$WS" "$TXFS_BIN" \
		"${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" 2>&1 || echo "FAIL: mcp_client.py features exited $?")
	umount_ws
	check_snap "[$WHO] mcp features: real directory unchanged" "$before" "$(snap "$WS")"
	check_unmounted "[$WHO] mcp features"

	# --no-ctl-verbs: no control verb offered; --tools
	git_ws
	before=$(snap "$WS")
	mount_ws --no-ctl-verbs
	relay < <(SLEEPER="$SLEEPER" timeout -k 5 120 "$PY" "$T/bin/mcp_client.py" noctl "$WS" "$TXFS_BIN" \
		"${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" 2>&1 || echo "FAIL: mcp_client.py noctl exited $?")
	umount_ws
	check_snap "[$WHO] mcp --no-ctl-verbs: real directory unchanged" "$before" "$(snap "$WS")"
	check_unmounted "[$WHO] mcp noctl"

	# the history tools: history, undo (staged), restore
	git_ws
	echo keep >"$WS/keep.txt" && as_owner "$WS/keep.txt" 2>/dev/null || chown "$(stat -c %u:%g "$WS")" "$WS/keep.txt"
	before=$(snap "$WS")
	mount_ws
	relay < <(timeout -k 5 200 "$PY" "$T/bin/mcp_client.py" history "$WS" "$TXFS_BIN" \
		"${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" 2>&1 || echo "FAIL: mcp_client.py history exited $?")
	umount_ws
	[ "$(cat "$WS/keep.txt" 2>/dev/null)" = keep ] && [ ! -e "$WS/new.txt" ] &&
		ok "[$WHO] mcp history: the real directory has keep.txt back, new.txt gone" ||
		fail "[$WHO] mcp history: $(ls "$WS")"
	check_unmounted "[$WHO] mcp history"
}

for_each_user body
finish
