#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# mcp_sdk - `txfs mcp` driven by the official MCP TypeScript SDK client
# (mcp_sdk_client.mjs), as root and as the unprivileged test user: a
# conformance pass. initialize, ping, listTools; every tool listed called
# with valid arguments (the SDK's callTool validates each structured result
# against the tool's outputSchema; the client checks it again, and the
# effect: status, the files the mount shows, the real directory) and with
# a wrong-typed or unknown argument (-32602, nothing changed); progress
# keeps a 5 s command alive under a 3 s client timeout and a 90 s command
# under a 60 s one; an AbortController and the client's own timeout
# cancel a command (its process gone, its change rolled back), and a call
# queued behind a running command. The client sees the real directory
# through /proc/PID/cwd of a process that entered the workspace before it
# was mounted. Then the real directory is the fixture plus what the
# commits left (sdk.txt, committed, undone, restored). The SDK (pinned:
# SDK_VERSION) is installed with npm into the build folder once
# (mcp-sdk-VERSION/). Without node or npm, or when the npm registry cannot
# be reached, the test is skipped (77), saying why; any other failure to
# install fails it.
. "$(dirname "$0")/lib.sh"

SDK_VERSION=1.32.2
require_landlock
command -v node >/dev/null || skip "node is needed (cli/deps/deps.txt [test]: nodejs)"
command -v npm >/dev/null || skip "npm is needed (Debian: apt-get install npm; NodeSource's nodejs has it)"
CACHE=${TXFS_BUILD:-$T}/mcp-sdk-$SDK_VERSION
if [ ! -f "$CACHE/node_modules/@modelcontextprotocol/sdk/package.json" ]; then
	rm -rf "$CACHE.part" && mkdir -p "$CACHE.part" &&
		echo '{"private": true}' >"$CACHE.part/package.json" || fail "mkdir $CACHE.part"
	if ! (cd "$CACHE.part" && timeout -k 5 300 npm install --no-audit --no-fund \
		--ignore-scripts --save-exact --fetch-retries=2 \
		--fetch-retry-maxtimeout=20000 "@modelcontextprotocol/sdk@$SDK_VERSION") >"$T/npm.log" 2>&1; then
		if grep -qE 'ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|network' "$T/npm.log"; then
			skip "npm cannot reach the registry to install @modelcontextprotocol/sdk@$SDK_VERSION: $(grep -m1 -E 'ENOTFOUND|ECONN|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|network' "$T/npm.log")"
		fi
		fail "npm install @modelcontextprotocol/sdk@$SDK_VERSION: $(tail -n 5 "$T/npm.log" | tr '\n' ' ')"
		finish
	fi
	rm -rf "$CACHE" && mv "$CACHE.part" "$CACHE"
fi
got=$(node -p "require('$CACHE/node_modules/@modelcontextprotocol/sdk/package.json').version" 2>&1)
check_eq "the SDK installed is @modelcontextprotocol/sdk@$SDK_VERSION" "$SDK_VERSION" "$got"
# node resolves the SDK from the script's folder
cp "$(dirname "$0")/mcp_sdk_client.mjs" "$T/mcp_sdk_client.mjs"
ln -sfn "$CACHE/node_modules" "$T/node_modules"

relay() {
	local l
	while IFS= read -r l; do
		case $l in
		"ok - "*) ok "[$WHO] mcp sdk: ${l#ok - }" ;;
		"FAIL: "*) fail "[$WHO] mcp sdk: ${l#FAIL: }" ;;
		*) echo "# $l" ;;
		esac
	done
}

body() {
	local m holder
	git_ws
	# the model: the fixture and the one file the commits leave
	m=$T/model$SEQ
	cp -a "$WS" "$m"
	"${AS[@]}" sh -c 'echo x > "$1"' sh "$m/sdk.txt" || fail "model sdk.txt"
	# a process in the real directory, to see it under the mount
	(cd "$WS" && exec sleep 900) &
	holder=$!
	BG_PIDS+=("$holder")
	mount_ws
	relay < <(timeout -k 5 420 node "$T/mcp_sdk_client.mjs" "$WS" "/proc/$holder/cwd" \
		"$TXFS_BIN" "$SLEEPER" \
		"${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" 2>&1 ||
		echo "FAIL: mcp_sdk_client.mjs exited $?")
	umount_ws
	kill "$holder" 2>/dev/null
	wait "$holder" 2>/dev/null
	check_snap "[$WHO] mcp sdk: the real directory is the fixture plus the committed sdk.txt" \
		"$(snap_nt "$m")" "$(snap_nt "$WS")"
	check_eq "[$WHO] mcp sdk: the real directory's sdk.txt" "x" "$(cat "$WS/sdk.txt" 2>&1)"
	check_unmounted "[$WHO] mcp sdk"
}

for_each_user body
finish
