# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by every mount scenario (tests/mount/*.sh).
#
# A scenario is a small bash script that tests one behaviour of a real txfs
# mount from outside, with ordinary programs:
#
#     . "$(dirname "$0")/lib.sh"
#     fixture            # $WS: the standard real directory; $MODEL: a copy
#     txfs_mount         # mounts $WS at $MNT with --state $STATE
#     both 'mv dir dir2' # the same shell step in the mount and in the model
#     check_same         # the mount's tree equals the model's
#     finish             # unmount, remount and compare again, real tree hash
#
# Environment: TXFS (the txfs binary), TXFS_TOOLS (directory of fsop and
# difftest), TXFS_SRC (source root), TXFS_KEEP=1 keeps the temp dir,
# TXFS_TEST_TMP (the base of temp dirs; default: one per txfs binary in /var/tmp),
# TXFS_TEST_MOUNT_OPTS (extra -o options for every txfs_mount: A/B runs).
#
# Safety: everything happens in a fresh temp dir $T. An EXIT/INT/TERM trap
# kills every daemon this scenario started (SIGKILL, by the PID in its
# STATE/daemon.pid, after checking that PID is a txfs process) and lazily
# unmounts every mount it made (fusermount3 -uz). Every step that touches a
# mount runs under a timeout (t SECONDS CMD..., tsh SECONDS 'script').
# The real directory is hashed (names, types, modes, sizes, contents, link
# targets, owners, mtimes, xattrs) before the first mount and must be
# identical at the end.
#
# Output: "ok - what" per passed check, "FAIL: what: expected X got Y" per
# failed one, then "PASS: name" (exit 0), "FAIL: name" (exit 1) or
# "SKIP: name: reason" (exit 77, only for a kernel feature that is really
# missing or a test that needs root).

set -u -o pipefail
umask 022

: "${TXFS:?TXFS must name the txfs binary}"
: "${TXFS_TOOLS:?TXFS_TOOLS must name the directory of fsop and difftest}"
TXFS=$(readlink -f "$TXFS")
FSOP=$TXFS_TOOLS/fsop
DIFFTEST=$TXFS_TOOLS/difftest
NAME=$(basename "$0" .sh)
# Only for developing this harness against another FUSE file system.
FSTYPE=${TXFS_TEST_FSTYPE:-fuse.txfs}
export LC_ALL=C

# The base of all temp dirs: TXFS_TEST_TMP (tests/run sets one per run),
# else one per txfs binary (so per build dir) and user under /var/tmp: not
# /tmp or $TMPDIR, which txfs exec and txfs run leave writable to the
# command (a real directory there, mounted elsewhere, is refused by exec).
# The suite's last test looks for leftover mounts under it and nowhere else.
if [ -z "${TXFS_TEST_TMP:-}" ]; then
	TXFS_TEST_TMP=/var/tmp/txfs-tests-$(id -u)-$(printf '%s' "$TXFS" | sha256sum | cut -c1-8)
	mkdir -p "$TXFS_TEST_TMP"
fi
T=$(mktemp -d "$TXFS_TEST_TMP/txfs-mt.$NAME.XXXXXX") || {
	echo "FAIL: $NAME: mktemp failed" >&2
	exit 1
}
T=$(readlink -f "$T")
WS=$T/ws
MNT=$T/mnt
STATE=$T/state
MODEL=
OUTSIDE=$T/outside
DLOG=$T/daemon.log
FAILS=0
CHECKS=0
MOUNTS=()
REAL_BEFORE=
FINISHED=0
mkdir -p "$WS" "$MNT" "$OUTSIDE"

# The mount tests test the file system, not the policy: they mount with a
# policy that has no rules (the default policy's mass-deletion guard would
# veto rm -rf of big trees). TXFS_POLICY= (empty) in a scenario mounts with
# the shipped default policy instead.
printf '# mount tests: no rules, every operation allowed\n' >"$T/open.policy"
TXFS_POLICY=$T/open.policy

# Sanitizer reports of every txfs process (CLI and daemon) land in $T.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}log_path=$T/asan"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:+$UBSAN_OPTIONS:}log_path=$T/ubsan"
export WS MNT STATE OUTSIDE FSOP DIFFTEST T

# qgrep ARGS...: `grep -q` for the end of a pipeline.  Under pipefail,
# `X | grep -q P` fails whenever grep finds P and exits before X has written
# its last line (bash's echo writes line by line): X dies of SIGPIPE and the
# pipeline says "no match".  qgrep reads all of its input.
qgrep() { grep "$@" >/dev/null; }

is_root() { [ "$(id -u)" = 0 ]; }

# ---- reporting ------------------------------------------------------------

ok() {
	CHECKS=$((CHECKS + 1))
	echo "ok - $*"
}

fail() {
	CHECKS=$((CHECKS + 1))
	FAILS=$((FAILS + 1))
	echo "FAIL: $*"
}

skip() {
	echo "SKIP: $NAME: $*"
	FINISHED=77
	exit 77
}

# Print the end of a file, indented, if it has anything.
show() {
	if [ -s "$1" ]; then
		echo "--- $2 ($1), last lines:"
		tail -n "${3:-30}" "$1" | sed 's/^/    /'
	fi
}

# ---- timeouts ----------------------------------------------------------------

# After a step timed out: if the mount no longer answers a statfs within
# 5 s, the daemon is hung; the scenario gives up (every later step would
# only wait for its own timeout), from the main shell at once.
check_hung() {
	local m rc
	for m in "$MNT" "$WS"; do
		is_mounted "$m" || continue
		timeout -k 2 5 stat -f -- "$m" >/dev/null 2>&1
		rc=$?
		[ $rc = 124 ] || [ $rc = 137 ] || continue
		touch "$T/hung"
		echo "FAIL: the mount at $m stopped answering (statfs timed out): giving up"
		[ -n "$(daemon_pid)" ] && daemon_threads "$(daemon_pid)"
		[ "$BASH_SUBSHELL" = 0 ] && exit 1
		return 0
	done
}

# t SECONDS CMD...: run CMD under a timeout; a timeout is a failure.
t() {
	local s=$1 rc
	shift
	if [ -e "$T/hung" ]; then
		fail "not run, the mount stopped answering: $*"
		[ "$BASH_SUBSHELL" = 0 ] && exit 1
		return 124
	fi
	timeout -k 5 "$s" "$@"
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		fail "timeout: no answer within ${s}s: $*"
		check_hung
	fi
	return $rc
}

# tsh SECONDS 'shell script': the same for a snippet (run by bash -c).
tsh() {
	local s=$1
	shift
	t "$s" bash -c "set -o pipefail; $1"
}

# ---- mounts -------------------------------------------------------------------

fstype_of() {
	awk -v m="$1" '$2 == m { t = $3 } END { print t }' /proc/self/mounts
}

is_mounted() {
	[ -n "$(fstype_of "$1")" ]
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

# txfs_mount [--state DIR] [--ws DIR] [--mnt DIR|--inplace] [--expect-fail] [txfs options...]
# Mounts and checks: exit 0, mounted, type fuse.txfs, daemon.pid names a live
# daemon. Sets RC and ERR (stderr of txfs mount).
txfs_mount() {
	local st=$STATE ws=$WS mnt=$MNT inplace=0 expect_fail=0 args=() target pid
	while [ $# -gt 0 ]; do
		case $1 in
		--state) st=$2; shift 2 ;;
		--ws) ws=$2; shift 2 ;;
		--mnt) mnt=$2; shift 2 ;;
		--inplace) inplace=1; shift ;;
		--expect-fail) expect_fail=1; shift ;;
		*) args+=("$1"); shift ;;
		esac
	done
	[ -n "$REAL_BEFORE" ] || snapshot_real
	target=$mnt
	[ $inplace = 1 ] && target=$ws
	MOUNTS+=("$target|$st")
	local cmd=("$TXFS" mount --state "$st" ${TXFS_POLICY:+--policy "$TXFS_POLICY"} ${TXFS_TEST_MOUNT_OPTS:+-o "$TXFS_TEST_MOUNT_OPTS"} "${args[@]}" "$ws")
	[ $inplace = 1 ] || cmd+=("$mnt")
	t 30 "${cmd[@]}" </dev/null >>"$T/mount.out" 2>"$T/mount.err"
	RC=$?
	ERR=$(cat "$T/mount.err")
	cat "$T/mount.err" >>"$DLOG"
	[ $expect_fail = 1 ] && return 0
	if [ $RC != 0 ]; then
		fail "txfs mount ${args[*]} $ws ${mnt:-}: expected exit 0 got $RC: $ERR"
		return 1
	fi
	if [ "$(fstype_of "$target")" != "$FSTYPE" ]; then
		fail "after txfs mount: expected a $FSTYPE mount at $target got '$(fstype_of "$target")'"
		return 1
	fi
	pid=$(daemon_pid "$st")
	if [ -z "$pid" ]; then
		fail "after txfs mount: expected $st/daemon.pid to name a live txfs daemon got '$(cat "$st/daemon.pid" 2>&1)'"
		return 1
	fi
	DAEMON_PID=$pid
	return 0
}

# txfs_umount [MNT [STATE]]: unmount; checks exit 0, gone, daemon exited.
txfs_umount() {
	local mnt=${1:-$MNT} st=${2:-$STATE} pid rc
	pid=$(daemon_pid "$st")
	t 30 "$TXFS" umount "$mnt" </dev/null >>"$T/mount.out" 2>"$T/umount.err"
	rc=$?
	cat "$T/umount.err" >>"$DLOG"
	if [ $rc != 0 ]; then
		fail "txfs umount $mnt: expected exit 0 got $rc: $(cat "$T/umount.err")"
		[ -n "$pid" ] && daemon_threads "$pid"
		return 1
	fi
	if is_mounted "$mnt"; then
		fail "after txfs umount: expected $mnt unmounted got still mounted ($(fstype_of "$mnt"))"
		return 1
	fi
	if [ -n "$pid" ] && [ -n "$(daemon_pid "$st")" ]; then
		fail "after txfs umount returned: expected daemon $pid exited got still running"
		return 1
	fi
	return 0
}

# For a hang: what the daemon's threads are waiting on.
daemon_threads() {
	echo "    daemon $1 threads (state, kernel wait channel):"
	ps -L -o tid=,stat=,wchan:32=,comm= -p "$1" 2>/dev/null | sed 's/^/      /'
	grep -E '^(State|Threads):' "/proc/$1/status" 2>/dev/null | sed 's/^/      /'
}

# SIGKILL the daemon of STATE (default $STATE) and wait until it is gone.
kill_daemon() {
	local st=${1:-$STATE} pid i
	pid=$(daemon_pid "$st")
	if [ -z "$pid" ]; then
		fail "kill_daemon: expected a live daemon in $st/daemon.pid got none"
		return 1
	fi
	kill -9 "$pid"
	for i in $(seq 100); do
		[ -z "$(daemon_pid "$st")" ] && return 0
		sleep 0.1
	done
	fail "daemon $pid still alive 10s after SIGKILL"
	return 1
}

# kill_and_detach [STATE [MNT]]: SIGKILL the daemon, then detach its dead
# mount by hand (for tests of durability, not of stale-mount handling).
kill_and_detach() {
	kill_daemon "${1:-$STATE}" || return 1
	timeout 10 fusermount3 -uz "${2:-$MNT}" 2>/dev/null
	is_mounted "${2:-$MNT}" && { fail "could not detach ${2:-$MNT} after SIGKILL"; return 1; }
	return 0
}

# force_detach [MNT [STATE]]: after a failed check, get back to a clean
# state by hand: SIGKILL the daemon, lazily detach every mount stacked on MNT.
force_detach() {
	local m=${1:-$MNT} st=${2:-$STATE} pid i
	pid=$(daemon_pid "$st")
	[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	for i in 1 2 3 4 5; do
		is_mounted "$m" || break
		timeout 10 fusermount3 -uz "$m" 2>/dev/null || { is_root && timeout 10 umount -l "$m"; }
	done
	for i in $(seq 50); do [ -z "$(daemon_pid "$st")" ] && break; sleep 0.1; done
}

# remount: unmount and mount again with the same state (args passed on).
remount() {
	txfs_umount && txfs_mount "$@"
}

# ---- trees ---------------------------------------------------------------------

# tree_of DIR [fsop tree flags]: canonical listing (.txfs at the top excluded)
tree_of() {
	local d=$1
	shift
	t 120 "$FSOP" tree "$@" "$d"
}

# Hash of the real directory with everything that must never change.
real_listing() {
	"$FSOP" tree -mox "$WS"
}

snapshot_real() {
	real_listing >"$T/real.before" || fail "hashing the real directory $WS failed"
	REAL_BEFORE=$(sha256sum <"$T/real.before" | cut -c1-64)
}

check_real_unchanged() {
	local now
	if is_mounted "$WS"; then
		fail "real-tree check: $WS is still mounted over"
		return 1
	fi
	real_listing >"$T/real.after"
	now=$(sha256sum <"$T/real.after" | cut -c1-64)
	if [ "$now" != "$REAL_BEFORE" ]; then
		fail "real directory modified: expected hash ${REAL_BEFORE:0:16} got ${now:0:16}; diff before after:"
		diff "$T/real.before" "$T/real.after" | head -40 | sed 's/^/    /'
		return 1
	fi
	ok "real directory unchanged (hash ${now:0:16})"
}

# check_tree WHAT DIR1 DIR2 [flags]: the two listings are equal.
check_tree() {
	local what=$1 a=$2 b=$3
	shift 3
	tree_of "$a" "$@" >"$T/tree.a" 2>&1
	tree_of "$b" "$@" >"$T/tree.b" 2>&1
	if cmp -s "$T/tree.a" "$T/tree.b"; then
		ok "$what"
	else
		fail "$what: trees differ (< $a, > $b):"
		diff "$T/tree.a" "$T/tree.b" | head -40 | sed 's/^/    /'
	fi
}

# ---- the standard real directory, and the model ---------------------------------

# fixture [DIR]: the standard real directory (default $WS).
fixture() {
	local d=${1:-$WS}
	mkdir -p "$d/dir/sub" "$d/empty_dir" "$d/dir with space" "$d/deep/a/b/c"
	printf 'hello\n' >"$d/file.txt"
	"$FSOP" fill "$d/big.bin" 300k 1
	printf '#!/bin/sh\necho exec-ok\n' >"$d/exec.sh"
	chmod 755 "$d/exec.sh"
	printf 'read only\n' >"$d/ro.txt"
	chmod 444 "$d/ro.txt"
	printf 'deep\n' >"$d/dir/sub/deep.txt"
	printf 'a\n' >"$d/dir/a.txt"
	printf 'spaced\n' >"$d/dir with space/x y.txt"
	printf 'c\n' >"$d/deep/a/b/c/leaf.txt"
	ln -s file.txt "$d/link_rel"
	ln -s dir "$d/link_dir"
	ln -s nowhere "$d/dangling"
	printf 'hard\n' >"$d/hard1"
	ln "$d/hard1" "$d/hard2"
	"$FSOP" pwrite "$d/sparse.bin" 0 start
	"$FSOP" pwrite "$d/sparse.bin" 1048576 end
	setfattr -n user.fixture -v yes "$d/file.txt" 2>/dev/null || true
	touch -d @1500000000 "$d/file.txt" "$d/dir/a.txt"
	chmod 750 "$d/dir/sub"
}

# model: a plain copy of the real directory, to apply the same steps to.
model() {
	MODEL=$T/model
	cp -a "$WS" "$MODEL"
	export MODEL
}

# both 'script': run the same shell step with cwd in the mount and in the
# model; exit status and output (stdout+stderr, with the directory names
# replaced) must be equal.
both() {
	local script=$1 rm rc
	[ -e "$T/hung" ] && { fail "not run, the mount stopped answering: $script"; exit 1; }
	timeout -k 5 60 env -C "$MNT" bash -c "$script" >"$T/both.m" 2>&1
	rm=$?
	timeout -k 5 60 env -C "$MODEL" bash -c "$script" >"$T/both.r" 2>&1
	rc=$?
	sed -i "s#$MNT#DIR#g" "$T/both.m"
	sed -i "s#$MODEL#DIR#g" "$T/both.r"
	if [ $rm = 124 ] || [ $rm = 137 ]; then
		fail "timeout: '$script' in the mount did not finish within 60s"
		check_hung
	elif [ $rm != $rc ]; then
		fail "'$script': expected exit $rc (as in a plain dir) got $rm; output: $(head -c 400 "$T/both.m")"
	elif ! cmp -s "$T/both.m" "$T/both.r"; then
		fail "'$script': output differs from a plain dir (< mount, > plain):"
		diff "$T/both.m" "$T/both.r" | head -20 | sed 's/^/    /'
	else
		ok "$script"
	fi
}

# check_same: the mount's tree equals the model's (owners and xattrs too).
check_same() {
	check_tree "${1:-merged view equals the model}" "$MNT" "$MODEL" -ox
}

# ---- small checks ------------------------------------------------------------------

check_eq() {
	if [ "$2" == "$3" ]; then
		ok "$1"
	else
		fail "$1: expected '$2' got '$3'"
	fi
}

# check_run WHAT CMD...: CMD exits 0 within 60s.
check_run() {
	local what=$1 rc
	shift
	t 60 "$@" >"$T/run.out" 2>&1
	rc=$?
	if [ $rc = 0 ]; then
		ok "$what"
	else
		fail "$what: expected exit 0 got $rc: $(head -c 600 "$T/run.out")"
	fi
	return $rc
}

# check_errno WHAT ENAME FSOP-ARGS...: fsop fails with exactly errno ENAME.
check_errno() {
	local what=$1 want=$2 rc got
	shift 2
	t 30 "$FSOP" "$@" >"$T/run.out" 2>&1
	rc=$?
	got=$(sed -n 's/^fsop: [^:]*: [^:]*: \(E[A-Z0-9]*\):.*/\1/p' "$T/run.out" | head -1)
	if [ $rc = 0 ]; then
		fail "$what: expected $want got success"
	elif [ "$got" = "$want" ]; then
		ok "$what ($want)"
	else
		fail "$what: expected $want got ${got:-exit $rc: $(head -c 300 "$T/run.out")}"
	fi
}

# check_content WHAT FILE EXPECTED
check_content() {
	local got
	got=$(t 30 cat "$2" 2>&1)
	check_eq "$1" "$3" "$got"
}

# stat_field FMT PATH (stat -c, no following)
sf() {
	t 30 stat -c "$1" -- "$2" 2>&1
}

# ---- the end --------------------------------------------------------------------

# finish: if a model is in use, compare once more, then unmount, remount
# and compare again (the layer persists); unmount everything; the real
# directory must be unchanged; report.
finish() {
	if [ -n "$MODEL" ] && is_mounted "$MNT"; then
		check_same "merged view equals the model at the end"
		if remount; then
			check_same "after unmount and mount again, the same merged view"
		fi
	fi
	if is_mounted "$MNT"; then
		txfs_umount
	fi
	if is_mounted "$WS"; then
		txfs_umount "$WS"
	fi
	check_real_unchanged
	FINISHED=1
	exit 0
}

SAN_RE='runtime error:|ERROR: [A-Za-z]*Sanitizer|SUMMARY: [A-Za-z]*Sanitizer'

# The daemon logs (STATE/daemon.log) of every state folder used here.
state_logs() {
	local entry
	for entry in "${MOUNTS[@]}"; do
		echo "${entry#*|}"
	done | sort -u | while read -r st; do
		[ -f "$st/daemon.log" ] && echo "$st/daemon.log"
	done
}

# Daemons and mounts made here go away on any exit.
cleanup() {
	local rc=$? entry m st pid f
	trap - EXIT INT TERM
	for entry in "${MOUNTS[@]}"; do
		st=${entry#*|}
		pid=$(daemon_pid "$st")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	done
	for entry in "${MOUNTS[@]}"; do
		m=${entry%%|*}
		if is_mounted "$m"; then
			[ "$FINISHED" = 1 ] && fail "mount left behind at $m"
			timeout 10 fusermount3 -uz "$m" 2>/dev/null ||
				{ is_root && timeout 10 umount -l "$m" 2>/dev/null; }
		fi
	done
	# Daemons whose state folder the scenario did not name (mount -t).
	for f in "$T"/*/daemon.pid "$T"/*/*/daemon.pid "$T"/*/*/*/daemon.pid; do
		[ -e "$f" ] || continue
		pid=$(daemon_pid "$(dirname "$f")")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	done
	while read -r m; do
		timeout 10 fusermount3 -uz "$m" 2>/dev/null ||
			{ is_root && timeout 10 umount -l "$m" 2>/dev/null; }
		fail "a mount under $T was left behind (now detached): $m"
		FINISHED=0
	done < <(awk -v t="$T/" 'index($2, t) == 1 && $3 ~ /^fuse/ { print $2 }' /proc/self/mounts)
	if awk -v t="$T/" 'index($2, t) == 1 { f = 1 } END { exit !f }' /proc/self/mounts; then
		fail "mounts under $T remain after cleanup"
		awk -v t="$T/" 'index($2, t) == 1 { print "    " $2 " " $3 }' /proc/self/mounts
		FINISHED=0
	fi
	for f in "$T"/asan.* "$T"/ubsan.*; do
		[ -e "$f" ] || continue
		fail "sanitizer report from a txfs process ($f):"
		head -60 "$f" | sed 's/^/    /'
	done
	# The daemon's own stderr goes to STATE/daemon.log: sanitizer reports
	# there fail the test too.
	for f in $(state_logs); do
		if grep -Eq "$SAN_RE" "$f"; then
			fail "sanitizer report in the daemon's log $f:"
			grep -E -m1 -A40 "$SAN_RE" "$f" | sed 's/^/    /'
		fi
	done
	if [ "$FINISHED" = 77 ]; then
		rc=77
	elif [ "$FINISHED" = 1 ] && [ $FAILS = 0 ]; then
		echo "PASS: $NAME ($CHECKS checks)"
		rc=0
	else
		[ "$FINISHED" = 1 ] || echo "FAIL: $NAME stopped early (exit $rc)"
		show "$DLOG" "txfs mount/umount stderr" 40
		for f in $(state_logs); do show "$f" "daemon log" 40; done
		echo "FAIL: $NAME ($FAILS of $CHECKS checks failed)"
		rc=1
	fi
	if [ "${TXFS_KEEP:-0}" = 1 ]; then
		echo "kept $T"
	else
		chmod -R u+rwx "$T" 2>/dev/null
		rm -rf --one-file-system "$T" 2>/dev/null
	fi
	exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
