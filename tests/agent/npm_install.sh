#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# npm_install - `npm ci` of a small lockfile (left-pad 1.3.0, is-number
# 7.0.0: tiny, no dependencies, no install scripts) under `txfs exec` and
# `txfs run`, against the npm registry (npm's configured one, or
# TXFS_NPM_REGISTRY, e.g. a local stand-in), as root and as the test user:
#   1. the lockfile is made outside txfs (npm install --package-lock-only
#      in a scratch folder) and committed in a git workspace;
#   2. txfs exec on a txfs mount: `npm ci` exits 0, the report says kept
#      and lists node_modules, the view has both packages at their pinned
#      versions and `require('left-pad')` works in the mount; `txfs
#      rollback --command N` removes them and the real directory is
#      unchanged; `npm ci` again and `txfs commit`: the real directory has
#      them, `git fsck` is clean, the lockfile is unchanged;
#   3. `txfs run -- npm ci` in a fresh workspace: exit 0, committed, the
#      packages in the real directory; `txfs run -- sh -c 'npm ci && exit
#      3'` (npm ci removes node_modules and installs it again) is rolled
#      back: the real directory is unchanged;
#   4. the decoy home is unchanged (no ~/.npm written).
# npm's cache is a fresh folder under /tmp for each half: the confinement
# leaves $HOME read-only and /tmp writable, and npm writes its cache and its
# logs (CACHE/_logs) there; in the workspace they would be committed.
# When the registry cannot be reached (making the lockfile, or `npm ping`
# after npm failed under txfs) the test is skipped (77) with npm's error
# lines, never passed. Network: the registry and nothing else.
. "$(dirname "$0")/lib.sh"

require_landlock
command -v node >/dev/null || skip "node is needed (cli/deps/deps.txt [test]: nodejs)"
command -v npm >/dev/null || skip "npm is needed (Debian: apt-get install npm; NodeSource's nodejs has it)"
RUN_SECS=180
DECOY_PROJECT=$T/no-decoy-project	# run_txfs passes it on; unused here
PKGS='left-pad@1.3.0 is-number@7.0.0'

# npm's settings, taken from the caller's configuration (as the other
# tests' `npm install` gets them) and passed on explicitly, since every
# command under test runs with HOME=$HOME_DECOY and a clean environment.
REGISTRY=${TXFS_NPM_REGISTRY:-$(t 30 npm config get registry 2>/dev/null)}
REGISTRY=${REGISTRY:-https://registry.npmjs.org/}
NPM_ENV=(npm_config_registry="$REGISTRY" npm_config_update_notifier=false
	npm_config_audit=false npm_config_fund=false npm_config_fetch_retries=1
	npm_config_fetch_timeout=20000 npm_config_fetch_retry_maxtimeout=10000)
CAFILE=$(t 30 npm config get cafile 2>/dev/null)
[ -n "$CAFILE" ] && [ "$CAFILE" != null ] && [ "$CAFILE" != undefined ] &&
	NPM_ENV+=(npm_config_cafile="$CAFILE")
[ -n "${NODE_EXTRA_CA_CERTS:-}" ] && NPM_ENV+=(NODE_EXTRA_CA_CERTS="$NODE_EXTRA_CA_CERTS")
echo "# registry $REGISTRY, npm $(npm --version), node $(node --version)"
NET_ERR='ENOTFOUND|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EAI_AGAIN|ENETUNREACH|EHOSTUNREACH|network|socket hang up|E50[0-9]'

# The caches under /tmp, removed on exit too (the lib's trap only knows $T).
NPM_TMPS=()
npm_cleanup() {
	local rc=$?
	[ ${#NPM_TMPS[@]} -gt 0 ] && rm -rf -- "${NPM_TMPS[@]}"
	return $rc
}
trap 'npm_cleanup; runloop_cleanup' EXIT

# 1. The lockfile, made outside txfs; no registry: skip.
mkdir -p "$T/lock/home" && cd "$T/lock" || fail "mkdir $T/lock"
"$PY" -c 'import json, sys
deps = dict(p.rsplit("@", 1) for p in sys.argv[1].split())
print(json.dumps({"name": "npm-fixture", "version": "1.0.0", "private": True,
                  "description": "txfs npm_install", "license": "MIT",
                  "dependencies": deps}, indent=2))' "$PKGS" >package.json
t 120 env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/lock/home" LC_ALL=C \
	npm_config_cache="$T/lock/cache" "${NPM_ENV[@]}" \
	npm install --package-lock-only --ignore-scripts >"$T/lock.log" 2>&1
rc=$?
cd / || fail "cd /"
if [ $rc != 0 ] || [ ! -s "$T/lock/package-lock.json" ]; then
	grep -qE "$NET_ERR" "$T/lock.log" || [ $rc = 124 ] &&
		skip "npm cannot reach the registry $REGISTRY to make the lockfile (exit $rc): $(grep -m 3 -E 'npm (error|ERR)' "$T/lock.log" | tr '\n' ' ')"
	fail "npm install --package-lock-only (exit $rc): $(tail -n 5 "$T/lock.log" | tr '\n' ' ')"
	finish
fi
chmod -R a+rX "$T/lock"
LOCK_SUM=$(sha256sum <"$T/lock/package-lock.json")
got=$(cd "$T/lock" && node -p 'const l = require("./package-lock.json").packages;
["left-pad", "is-number"].map(p => p + "@" + l["node_modules/" + p].version).join(" ")' 2>&1)
check_eq "the lockfile made outside txfs pins $PKGS" "$PKGS" "$got"

# npm_ws: git_ws with the package.json and the lockfile committed; a fresh
# npm cache $CACHE under /tmp owned by $AS's user.
npm_ws() {
	git_ws
	cp "$T/lock/package.json" "$T/lock/package-lock.json" "$WS/" && as_owner "$WS" ||
		fail "copy the lockfile"
	(cd "$WS" && "${AS[@]}" "${GITC[@]}" add -A &&
		"${AS[@]}" "${GITC[@]}" commit -qm 'package.json, lockfile') >/dev/null 2>&1 ||
		fail "[$WHO] git commit of the lockfile"
	CACHE=$(mktemp -d /tmp/txfs-npm-cache.XXXXXX) || fail "mktemp in /tmp"
	NPM_TMPS+=("$CACHE")
	as_owner "$CACHE"
}

# versions DIR: "left-pad@V is-number@V" from DIR/node_modules (V:
# "missing" when a package.json cannot be read).
versions() {
	as_run node -p 'const d = process.argv[1], v = (p) => {
	try { return require(d + "/node_modules/" + p + "/package.json").version; }
	catch (e) { return "missing"; } };
["left-pad", "is-number"].map(p => p + "@" + v(p)).join(" ")' "$1" 2>&1 | head -c 300
}

# unreachable LOG: npm failed with a network error and the registry does
# not answer `npm ping` outside txfs now either: skip, with npm's errors
# (after unmounting $WS: a skip leaves nothing mounted).
unreachable() {
	grep -qE "$NET_ERR" "$1" || return 0
	t 60 env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$T/lock/home" LC_ALL=C \
		npm_config_cache="$T/lock/cache" "${NPM_ENV[@]}" npm ping >"$T/ping.log" 2>&1 &&
		return 0
	is_mounted "$WS" && { txfs_as rollback "$WS" >/dev/null 2>&1; umount_ws; }
	skip "the registry $REGISTRY became unreachable: $(grep -m 3 -E 'npm (error|ERR)' "$1" | tr '\n' ' ') / npm ping: $(grep -m 2 -E 'npm (error|ERR)' "$T/ping.log" | tr '\n' ' ')"
}

# exec_npm_ci WHAT: `npm ci` under txfs exec in the mounted $WS, kept.
exec_npm_ci() {
	local envs=() e
	for e in npm_config_cache="$CACHE" "${NPM_ENV[@]}"; do envs+=(--env "$e"); done
	ag_exec "${envs[@]}" -- npm ci --ignore-scripts
	if [ "$RC" = 0 ] && [ "$(jget outcome)" = kept ]; then
		ok "[$WHO] $1: txfs exec -- npm ci: exit 0, kept ($(grep -m 1 '^added' <<<"$CMDOUT"))"
	else
		unreachable "$T/ex$SEQ.err"
		fail "[$WHO] $1: txfs exec -- npm ci: exit $RC, outcome '$(jget outcome)'; npm: $(grep -m 5 -E 'npm (error|ERR)|EACCES|EPERM' "$T/ex$SEQ.err" | tr '\n' ' ') $(tail -c 400 "$T/ex$SEQ.err" | tr '\n' ' ')"
	fi
	NCHANGES=$("$PY" -c 'import json, sys
c = json.loads(sys.argv[1]).get("changes", [])
print(sum(1 for x in c if x == "A node_modules" or x.startswith("A node_modules/")))' "$OUT" 2>/dev/null)
	[ "${NCHANGES:-0}" -ge 1 ] && ok "[$WHO] $1: the report lists node_modules ($NCHANGES entries)" ||
		fail "[$WHO] $1: the report's changes: $(jget changes | head -c 300)"
	CMD_N=$(jget cmd)
}

via_exec() {
	local before home n
	npm_ws
	before=$(snap "$WS")
	home=$(snap "$HOME_DECOY")
	mount_ws
	exec_npm_ci "exec"
	n=$CMD_N
	check_eq "[$WHO] exec: the view has the pinned versions" "$PKGS" "$(versions "$WS")"
	ag_exec -- node -e 'console.log(require("left-pad")("7", 3, "0"), require("is-number")(7))'
	check_eq "[$WHO] exec: require('left-pad') and require('is-number') work in the mount" \
		"0 kept 007 true" "$RC $(jget outcome) $CMDOUT"
	[ -d "$CACHE/_cacache" ] && ok "[$WHO] exec: npm's cache went to $CACHE" ||
		fail "[$WHO] exec: nothing in $CACHE: $(ls -A "$CACHE" | head -5 | tr '\n' ' ')"
	txfs_as rollback --command "$n" "$WS" >"$T/rb.out" 2>&1 ||
		fail "[$WHO] exec: txfs rollback --command $n: $(cat "$T/rb.out")"
	as_run test -e "$WS/node_modules" && fail "[$WHO] exec: node_modules survived rollback --command $n" ||
		ok "[$WHO] exec: rollback --command $n removed node_modules from the view"
	umount_ws
	check_snap "[$WHO] exec: rolled back: the real directory is unchanged" "$before" "$(snap "$WS")"
	check_unmounted "[$WHO] exec, rolled back"

	# again, and commit
	new_state
	mount_ws
	exec_npm_ci "exec again"
	txfs_as commit "$WS" >"$T/commit.out" 2>&1 || fail "[$WHO] exec: txfs commit: $(cat "$T/commit.out")"
	umount_ws
	check_unmounted "[$WHO] exec, committed"
	check_eq "[$WHO] exec: committed: the real directory has the pinned versions" "$PKGS" "$(versions "$WS")"
	check_eq "[$WHO] exec: committed: the packages are $WHO's" "$WHO $WHO" \
		"$(stat -c %U "$WS/node_modules/left-pad/package.json" "$WS/node_modules/is-number/index.js" | paste -sd' ')"
	check_eq "[$WHO] exec: committed: require('left-pad') in the real directory" "007" \
		"$(cd "$WS" && as_run node -e 'console.log(require("left-pad")("7", 3, "0"))' 2>&1)"
	check_eq "[$WHO] exec: committed: the lockfile is unchanged" "$LOCK_SUM" "$(sha256sum <"$WS/package-lock.json")"
	git -C "$WS" -c safe.directory='*' fsck --strict >/dev/null 2>&1 && ok "[$WHO] exec: git fsck" ||
		fail "[$WHO] exec: git fsck"
	check_eq "[$WHO] exec: git: only node_modules is new" "?? node_modules/" \
		"$(git -C "$WS" -c safe.directory='*' status --porcelain)"
	check_snap "[$WHO] exec: the decoy home is unchanged" "$home" "$(snap "$HOME_DECOY")"
	rm -rf -- "$CACHE"
}

# run_npm WHAT [SH-SCRIPT]: txfs run --json -- npm ci (or sh -c SCRIPT).
run_npm() {
	local what=$1
	shift
	run_txfs npm_config_cache="$CACHE" "${NPM_ENV[@]}" -- --json -- "$@"
	OUT=$(tail -n 1 "$RUN_OUT")
	if grep -q '^added 2 packages' "$RUN_OUT"; then
		ok "[$WHO] $what: npm ci installed 2 packages"
	else
		unreachable "$RUN_ERR"
		fail "[$WHO] $what: npm ci did not install (exit $RC): $(grep -m 5 -E 'npm (error|ERR)|EACCES|EPERM' "$RUN_ERR" | tr '\n' ' ') $(tail -c 400 "$RUN_ERR" | tr '\n' ' ')"
	fi
}

via_run() {
	local before home
	npm_ws
	home=$(snap "$HOME_DECOY")
	run_npm "run" npm ci --ignore-scripts
	check_eq "[$WHO] run: txfs run -- npm ci: exit, action" "0 committed" "$RC $(jget action)"
	check_unmounted "[$WHO] run, committed"
	check_eq "[$WHO] run: committed: the real directory has the pinned versions" "$PKGS" "$(versions "$WS")"
	check_eq "[$WHO] run: committed: the lockfile is unchanged" "$LOCK_SUM" "$(sha256sum <"$WS/package-lock.json")"
	git -C "$WS" -c safe.directory='*' fsck --strict >/dev/null 2>&1 && ok "[$WHO] run: git fsck" ||
		fail "[$WHO] run: git fsck"

	# npm ci replaces node_modules, then exit 3: all of it rolled back
	before=$(snap "$WS")
	new_state
	run_npm "run, exit 3" sh -c 'npm ci --ignore-scripts && exit 3'
	check_eq "[$WHO] run: npm ci && exit 3: exit, action" "3 rolled-back" "$RC $(jget action)"
	check_unmounted "[$WHO] run, rolled back"
	check_snap "[$WHO] run: rolled back: the real directory is unchanged" "$before" "$(snap "$WS")"
	check_snap "[$WHO] run: the decoy home is unchanged" "$home" "$(snap "$HOME_DECOY")"
	rm -rf -- "$CACHE"
}

body() {
	via_exec
	via_run
}

for_each_user body
finish
