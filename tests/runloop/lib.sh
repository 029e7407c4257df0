# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by every `txfs run` scenario (tests/runloop/*.sh).
#
# Builds on tests/confine/lib.sh (sourced first): $T is a fresh folder under
# /var/tmp (NOT under /tmp, which `txfs run` leaves writable), ok/fail/skip/
# finish, t, start_bg, $PY, $SYSCALLS (the syscall table helper, copied to
# $T/bin), the confine fixture's decoy $HOME_DECOY and $DECOY_PROJECT. Adds:
#
#     for_each_user body_fn     # body_fn once as root (when root) and once
#                               # as the unprivileged $TEST_USER (runuser)
#     ws_fixture                # $WS: a small workspace owned by $AS's user
#     new_state                 # $STATE: a fresh state folder (not in /tmp)
#     run_txfs [ENV=VAL...] -- txfs-run-args...
#                               # txfs run --state $STATE ARGS as $AS, clean
#                               # environment, cwd $WS, under a timeout;
#                               # sets RC, OUT (stdout), ERR (stderr)
#     jget FIELD                # a field of the JSON report in $OUT
#     snap DIR                  # names, types, modes, sizes, owners, mtimes,
#                               # link targets, contents (and .git)
#     check_unmounted           # $WS not mounted, its daemon gone
#
# Safety: every command runs with HOME=$HOME_DECOY (under /var/tmp) and
# without TMPDIR, so the only folders `txfs run` leaves writable are $WS,
# /tmp and /dev/shm. The EXIT trap kills (SIGKILL, by the pid in each
# $T/**/daemon.pid, after checking it is a txfs process) the daemons this
# scenario started and lazily detaches its mounts before $T is removed.
# Network: only 127.0.0.1, listeners the scenario starts.
#
# Environment: TXFS (the txfs binary), CONFINE_TOOLS (folder of syscalls and
# confined_exec), TXFS_TEST_USER (txfstest), TXFS_KEEP=1 keeps $T.

: "${TXFS:?TXFS must name the txfs binary}"
. "$(dirname "$0")/../confine/lib.sh"

# The binary where the test user can run it (the build may be under /root).
cp "$TXFS" "$T/bin/txfs" || { echo "FAIL: $NAME: cannot copy $TXFS"; exit 1; }
chmod 755 "$T/bin/txfs"
TXFS_BIN=$T/bin/txfs
# Sanitizer reports of txfs processes (ASan build) land in $T/san.
mkdir -p "$T/san" && chmod 1777 "$T/san"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/san/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/san/ubsan"

# The brief's way to drop root: runuser (confine/lib.sh uses setpriv).
if [ "$AS_TEST_USER" = 1 ]; then
	command -v runuser >/dev/null || skip "runuser (util-linux) is needed to drop root"
	AS=(runuser -u "$TEST_USER" --)
	[ -e /dev/fuse ] && [ "$(stat -c %a /dev/fuse)" != 666 ] && chmod 666 /dev/fuse
fi
ROOT_AS=("${AS[@]}")
ROOT_AS_TEST_USER=$AS_TEST_USER
WHO=$(id -un)

is_mounted() {
	awk -v m="$1" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts
}

# PID from STATE/daemon.pid if it is a live txfs process, else empty.
daemon_pid() {
	local f=${1:-$STATE}/daemon.pid pid
	[ -r "$f" ] || return 0
	pid=$(tr -dc 0-9 <"$f")
	[ -n "$pid" ] || return 0
	if [ -r "/proc/$pid/cmdline" ] && grep -qa txfs "/proc/$pid/cmdline" &&
		! grep -q '^State:.*Z' "/proc/$pid/status" 2>/dev/null; then
		echo "$pid"
	fi
}

# Kill the daemons of this scenario and detach its mounts (EXIT trap).
runloop_cleanup() {
	local rc=$? f pid m
	trap - EXIT
	for f in "$T"/*/daemon.pid "$T"/*/*/daemon.pid; do
		[ -e "$f" ] || continue
		pid=$(daemon_pid "$(dirname "$f")")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	done
	while read -r m; do
		timeout 10 fusermount3 -uz "$m" 2>/dev/null ||
			{ [ "$(id -u)" = 0 ] && timeout 10 umount -l "$m" 2>/dev/null; }
		echo "FAIL: a mount under $T was left behind (now detached): $m"
		rc=1
	done < <(awk -v t="$T/" 'index($2, t) == 1 { print $2 }' /proc/self/mounts)
	for f in "$T"/san/*; do
		[ -e "$f" ] || continue
		echo "FAIL: sanitizer report from a txfs process ($f):"
		head -40 "$f" | sed 's/^/    /'
		rc=1
	done
	cleanup	# confine/lib.sh: background processes, then rm -rf $T
	exit $rc
}
trap runloop_cleanup EXIT

# ---- users -----------------------------------------------------------------

# as_user root|test: who runs txfs run (and owns the fixtures) from now on.
as_user() {
	if [ "$1" = root ]; then
		AS=() AS_TEST_USER=0 WHO=root
	else
		AS=("${ROOT_AS[@]}") AS_TEST_USER=$ROOT_AS_TEST_USER
		WHO=$([ "$AS_TEST_USER" = 1 ] && echo "$TEST_USER" || id -un)
	fi
}

# for_each_user FN: FN as root and as the test user (when root), else once.
for_each_user() {
	if [ "$(id -u)" = 0 ]; then
		as_user root
		echo "# ---- as root"
		"$1"
		as_user test
		echo "# ---- as $WHO (unprivileged)"
		"$1"
	else
		as_user test
		echo "# ---- as $WHO (not root: the root half is not run)"
		"$1"
	fi
}

# ---- fixtures ----------------------------------------------------------------

SEQ=0
# ws_fixture: a fresh small workspace $WS (and decoys), owned by $AS's user.
ws_fixture() {
	SEQ=$((SEQ + 1))
	WS=$T/w$SEQ/ws
	HOME_DECOY=$T/w$SEQ/home
	DECOY_PROJECT=$T/w$SEQ/decoy-project
	mkdir -p "$WS/dir/sub" "$WS/tools" "$HOME_DECOY/.ssh" "$HOME_DECOY/Documents" \
		"$HOME_DECOY/projects/tool/web-crawler" "$DECOY_PROJECT/src"
	chmod 755 "$T/w$SEQ"
	printf 'alpha\n' >"$WS/a.txt"
	printf 'bravo\n' >"$WS/dir/b.txt"
	printf 'deep\n' >"$WS/dir/sub/c.txt"
	printf '#!/bin/sh\necho good-ran\n' >"$WS/tools/good.sh"
	printf '#!/bin/sh\necho evil-ran\n' >"$WS/tools/evil.sh"
	chmod 755 "$WS/tools/good.sh" "$WS/tools/evil.sh"
	ln -s a.txt "$WS/link_a"
	ln -s "$DECOY_PROJECT" "$WS/link"
	touch -d @1600000000 "$WS/a.txt" "$WS/dir/b.txt"
	echo 'canary: ssh key' >"$HOME_DECOY/.ssh/id_rsa"
	chmod 700 "$HOME_DECOY/.ssh" && chmod 600 "$HOME_DECOY/.ssh/id_rsa"
	echo 'canary: report' >"$HOME_DECOY/Documents/report.txt"
	echo 'canary: crawler' >"$HOME_DECOY/projects/tool/web-crawler/main.py"
	echo 'canary: notes' >"$HOME_DECOY/notes.txt"
	echo 'alias canary=true' >"$HOME_DECOY/.bashrc"
	echo 'canary: decoy project' >"$DECOY_PROJECT/src/file.txt"
	# Old, fixed times: a change of any time is then always visible.
	find "$T/w$SEQ" -exec touch -h -d @1600000000 {} +
	as_owner "$T/w$SEQ"
	new_state
}

# new_state: a fresh state folder $STATE, owned by $AS's user, not in /tmp.
new_state() {
	SEQ=$((SEQ + 1))
	STATE=$T/s$SEQ
	mkdir -p "$STATE"
	as_owner "$STATE"
}

# snap DIR: everything that must not change, one line per entry, and the
# contents' hashes. Run while DIR is not mounted over.
snap() {
	(cd "$1" && find . -printf '%p %y %m %s %U %G %T@ %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# snap_nt DIR: the same without times (to compare with a model tree).
snap_nt() {
	(cd "$1" && find . -printf '%p %y %m %s %U %G %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# check_snap WHAT BEFORE NOW: the two snapshots are equal.
check_snap() {
	if [ "$2" = "$3" ]; then
		ok "$1"
	else
		fail "$1: differs (< expected, > got):"
		diff <(echo "$2") <(echo "$3") | head -20 | sed 's/^/    /'
	fi
}

# ---- running txfs run ----------------------------------------------------------

# run_txfs [--bg] [VAR=VALUE...] -- ARGS...: `txfs run --state $STATE ARGS`
# as $AS in $WS with a clean environment; RC, OUT, ERR. --bg: in the
# background (BG = the pid of the wrapper; RUN_OUT/RUN_ERR the files).
RUN_SECS=${RUN_SECS:-60}
run_txfs() {
	local bg=0 envs=()
	[ "${1:-}" = --bg ] && { bg=1; shift; }
	while [ $# -gt 0 ] && [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	SEQ=$((SEQ + 1))
	RUN_OUT=$T/run$SEQ.out RUN_ERR=$T/run$SEQ.err
	local cmd=(timeout -k 5 "$RUN_SECS" "${AS[@]}" env -i
		PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C
		WS="$WS" STATE="$STATE" T="$T" SYSCALLS="$SYSCALLS" TXFS="$TXFS_BIN"
		DECOY="$DECOY_PROJECT" PY="$PY"
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS"
		"${envs[@]}" "$TXFS_BIN" run --state "$STATE" "$@")
	if [ $bg = 1 ]; then
		(cd "$WS" && exec "${cmd[@]}") </dev/null >"$RUN_OUT" 2>"$RUN_ERR" &
		BG=$!
		BG_PIDS+=("$BG")
		return 0
	fi
	(cd "$WS" && exec "${cmd[@]}") </dev/null >"$RUN_OUT" 2>"$RUN_ERR"
	RC=$?
	OUT=$(cat "$RUN_OUT")
	ERR=$(grep -v 'has its current directory in' "$RUN_ERR")
	if [ $RC = 124 ] || [ $RC = 137 ]; then
		fail "timeout: txfs run $* did not finish within ${RUN_SECS}s"
	fi
	return 0
}

# jget FIELD: a top-level field of the JSON report in $OUT ('' if absent,
# 'INVALID-JSON' if the report does not parse; objects as JSON).
jget() {
	printf '%s' "$OUT" | "$PY" -c 'import json, sys
try:
    d = json.loads(sys.stdin.read())
except ValueError as e:
    print("INVALID-JSON"); sys.exit(0)
v = d.get(sys.argv[1], "")
print(json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v)' "$1"
}

check_eq() {
	if [ "$2" == "$3" ]; then
		ok "$1"
	else
		fail "$1: expected '$2' got '$3'"
	fi
}

# check_rc WHAT EXPECTED: the last run_txfs exited with EXPECTED.
check_rc() {
	if [ "$RC" = "$2" ]; then
		ok "$1: exit $RC"
	else
		fail "$1: expected exit $2 got $RC; stderr: $(printf '%s' "$ERR" | head -c 600)"
	fi
}

# check_action WHAT ACTION: the JSON report's action (run with --json).
check_action() {
	local a
	a=$(jget action)
	if [ "$a" = "$2" ]; then
		ok "$1: action $a"
	else
		fail "$1: expected action '$2' got '$a'; stdout: $(printf '%s' "$OUT" | head -c 400); stderr: $(printf '%s' "$ERR" | head -c 400)"
	fi
}

# check_unmounted WHAT: $WS is not mounted, no daemon of $STATE is alive
# (within 20 s: under ASan on a busy machine an idle daemon took 2.3 s to
# exit after its unmount, one that served a session more than 5).
check_unmounted() {
	local i
	for i in $(seq 200); do
		is_mounted "$WS" || [ -n "$(daemon_pid)" ] || break
		sleep 0.1
	done
	if is_mounted "$WS"; then
		fail "$1: $WS is still mounted"
	elif [ -n "$(daemon_pid)" ]; then
		fail "$1: daemon $(daemon_pid) of $STATE is still alive"
	else
		ok "$1: nothing left mounted, daemon gone"
	fi
}

# txfs_as ARGS...: the txfs command itself (not run), as $AS.
txfs_as() {
	timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" LC_ALL=C ASAN_OPTIONS="$ASAN_OPTIONS" \
		UBSAN_OPTIONS="$UBSAN_OPTIONS" "$TXFS_BIN" "$@"
}

# as_run CMD...: CMD as $AS (a FUSE mount is readable only by its owner).
as_run() {
	timeout -k 5 60 "${AS[@]}" "$@"
}

# audit_has REGEX: STATE/audit.log has a line matching REGEX.
audit_has() {
	grep -qE "$1" "$STATE/audit.log" 2>/dev/null
}

# run_pid: the pid of the `txfs run` of $STATE: the topmost one, since
# txfs run's own forks keep its command line until they exec, and /proc
# lists in name order (a child's 10002 before its parent's 9998), so the
# first match could be a fork that a signal does not reach the loop
# through (found in a run: SIGINT to such a child, txfs run waited on).
# Builtins only: a process read per fork made scans seconds long.
run_pid() {
	local p a x rest found=() parents=()
	for p in /proc/[0-9]*; do
		mapfile -d '' -t a 2>/dev/null <"$p/cmdline" || continue
		[ "${a[0]:-}" = "$TXFS_BIN" ] && [ "${a[1]:-}" = run ] || continue
		for x in "${a[@]}"; do
			[ "$x" = "$STATE" ] || continue
			read -r rest 2>/dev/null <"$p/stat" || break
			rest=${rest##*) }	# after "pid (comm) ": state ppid ...
			rest=${rest#* }
			found+=("${p#/proc/}")
			parents+=("${rest%% *}")
			break
		done
	done
	for p in "${!found[@]}"; do
		[[ " ${found[*]} " == *" ${parents[$p]} "* ]] || { echo "${found[$p]}"; return; }
	done
}
