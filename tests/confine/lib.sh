# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by every confinement scenario (tests/confine/*.sh).
#
# A scenario runs commands under cli/sandbox/confine.c through the test driver
# confined_exec and checks what they could and could not do:
#
#     . "$(dirname "$0")/lib.sh"
#     require_landlock          # SKIP (77) with a reason if the kernel lacks it
#     fixture                   # $WS, decoy $HOME_DECOY, $DECOY_PROJECT, $TMPD
#     must_fail 'what' -- bash -c 'rm -rf "$HOME"'     # confined, must fail
#     must_pass 'what' -- bash -c 'echo x > f'          # confined, must work
#     finish
#
# confined commands run as "$AS" (as root: the unprivileged user txfstest,
# created with useradd if missing, or $TXFS_TEST_USER; otherwise the current
# user), with a clean environment (PATH, HOME=$HOME_DECOY, TMPDIR=$TMPD,
# LC_ALL; no proxy variables), the current directory $WS, under a timeout.
# The driver's options are in $CONFINE_OPTS (array; default: --writable $WS
# /tmp $TMPD); extra options go before "--" in must_fail/must_pass/confined.
#
# Safety: every file lives in $T=BASE/txfs-confine-NAME.XXXXXX (BASE:
# $TXFS_TEST_TMP, which tests/run sets under /var/tmp, else /var/tmp): the
# decoy home is NOT under /tmp, which is writable by design. Commands that
# target files outside only ever name the decoy home and the decoy project.
# An EXIT trap kills the processes this scenario started (by PID, recorded
# in BG_PIDS) and removes $T. Network tests use 127.0.0.1 only.
#
# Environment: CONFINE_TOOLS (folder of confined_exec and syscalls, copied
# to $T/bin so that the test user can run them), TXFS_KEEP=1 keeps $T.
# Output: "ok - what", "FAIL: what: why", then "PASS: name" (exit 0),
# "FAIL: name" (exit 1) or "SKIP: name: reason" (exit 77).

set -u -o pipefail
umask 022
export LC_ALL=C
unset http_proxy https_proxy HTTP_PROXY HTTPS_PROXY all_proxy ALL_PROXY no_proxy NO_PROXY

: "${CONFINE_TOOLS:?CONFINE_TOOLS must name the folder of confined_exec and syscalls}"
NAME=$(basename "$0" .sh)
TEST_USER=${TXFS_TEST_USER:-txfstest}
FAILS=0
CHECKS=0
BG_PIDS=()

T=$(mktemp -d "${TXFS_TEST_TMP:-/var/tmp}/txfs-confine-$NAME.XXXXXX") || {
	echo "FAIL: $NAME: mktemp in ${TXFS_TEST_TMP:-/var/tmp} failed"
	exit 1
}
chmod 755 "$T"

cleanup() {
	local pid pp
	for pid in "${BG_PIDS[@]}"; do
		# only a child of ours: one that ended was reaped, and its number
		# may be another process's (or a thread's) by now
		pp=$(sed 's/.*) [A-Za-z] \([0-9]*\).*/\1/' "/proc/$pid/stat" 2>/dev/null)
		[ "$pp" = $$ ] || continue
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done
	case $T in
	/var/tmp/*/txfs-confine-*|/var/tmp/txfs-confine-*)
		if [ "${TXFS_KEEP:-0}" = 1 ]; then
			echo "# kept $T"
		else
			rm -rf -- "$T"
		fi ;;
	esac
}
trap cleanup EXIT
trap 'exit 1' INT TERM

qgrep() { grep "$@" >/dev/null; }	# grep -q that reads all its input: see tests/mount/lib.sh
ok() { CHECKS=$((CHECKS + 1)); echo "ok - $1"; }
fail() { CHECKS=$((CHECKS + 1)); FAILS=$((FAILS + 1)); echo "FAIL: $1"; }
skip() { echo "SKIP: $NAME: $1"; exit 77; }
finish() {
	if [ "$FAILS" -eq 0 ]; then
		echo "PASS: $NAME ($CHECKS checks)"
		exit 0
	fi
	echo "FAIL: $NAME ($FAILS of $CHECKS checks failed)"
	exit 1
}

# t SECONDS CMD...: run with a timeout (KILL 5 s after TERM).
t() { local s=$1; shift; timeout -k 5 "$s" "$@"; }

# The test tools, where the test user can run them.
mkdir -p "$T/bin"
cp "$CONFINE_TOOLS/confined_exec" "$CONFINE_TOOLS/syscalls" "$CONFINE_TOOLS/threadcalls" \
	"$CONFINE_TOOLS/sysnr" "$T/bin/" || {
	echo "FAIL: $NAME: cannot copy the tools from $CONFINE_TOOLS"
	exit 1
}
chmod 755 "$T/bin" "$T/bin/"*
CONFINED_EXEC=$T/bin/confined_exec
SYSCALLS=$T/bin/syscalls
THREADCALLS=$T/bin/threadcalls
SYSNR=$T/bin/sysnr

# A python3 every user can run (not a shim under /root).
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3 || true)

# Who runs the confined commands.
AS=()
AS_TEST_USER=0
if [ "$(id -u)" = 0 ]; then
	if ! id "$TEST_USER" >/dev/null 2>&1; then
		useradd -m -s /bin/bash "$TEST_USER" || {
			echo "FAIL: $NAME: useradd $TEST_USER failed"
			exit 1
		}
	fi
	command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed to drop root"
	AS=(setpriv "--reuid=$TEST_USER" "--regid=$TEST_USER" --init-groups --)
	AS_TEST_USER=1
fi
# as_owner PATH...: give files to whoever runs the confined commands.
as_owner() { [ "$AS_TEST_USER" = 0 ] || chown -R "$TEST_USER:" "$@"; }

landlock_abi() {
	"$CONFINED_EXEC" --probe | sed -n 's/^landlock_abi=\([0-9]*\).*/\1/p'
}
require_landlock() {
	ABI=$(landlock_abi)
	[ -n "$ABI" ] && [ "$ABI" -ge 1 ] ||
		skip "Landlock is not available in this kernel (or disabled at boot)"
	"$CONFINED_EXEC" --probe | qgrep 'seccomp=yes' ||
		skip "seccomp filters are not available in this kernel"
}

# fixture: a workspace, a decoy home with canaries and a decoy project
# outside it, a private TMPDIR. All owned by the confined user.
fixture() {
	WS=$T/ws
	HOME_DECOY=$T/home
	DECOY_PROJECT=$T/decoy-project
	TMPD=$T/tmpdir
	mkdir -p "$WS/src" "$WS/tests" "$WS/plan" "$TMPD" \
		"$HOME_DECOY/.ssh" "$HOME_DECOY/Documents" \
		"$HOME_DECOY/projects/tool/web-crawler" "$DECOY_PROJECT/src"
	echo 'int main(void) { return 0; }' >"$WS/src/main.c"
	echo 'canary: ssh key' >"$HOME_DECOY/.ssh/id_rsa"
	chmod 700 "$HOME_DECOY/.ssh"
	chmod 600 "$HOME_DECOY/.ssh/id_rsa"
	echo 'canary: report' >"$HOME_DECOY/Documents/report.txt"
	echo 'canary: crawler' >"$HOME_DECOY/projects/tool/web-crawler/main.py"
	echo 'canary: notes with a and b' >"$HOME_DECOY/notes.txt"
	echo 'alias canary=true' >"$HOME_DECOY/.bashrc"
	printf '[user]\n\tname = canary\n' >"$HOME_DECOY/.gitconfig"
	echo 'canary: decoy project' >"$DECOY_PROJECT/src/file.txt"
	ln -s "$DECOY_PROJECT" "$WS/link"
	as_owner "$WS" "$HOME_DECOY" "$DECOY_PROJECT" "$TMPD"
	CONFINE_OPTS=(--writable "$WS" /tmp "$TMPD")
}

# tree_state DIR: names, types, modes, sizes, owners, link targets and file
# contents (not times: see confine.h, metadata is not covered).
tree_state() {
	(cd "$1" && find . -printf '%p %y %m %s %U %l\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0 -r sha256sum)
}

# confined [DRIVER-OPTS...] -- CMD...: run CMD confined, as $AS, in $WS.
confined() {
	local opts=()
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	(cd "${WS:-$T}" && t "${CONFINE_SECS:-60}" "${AS[@]}" env -i \
		PATH=/usr/local/bin:/usr/bin:/bin HOME="${HOME_DECOY:-$T}" \
		TMPDIR="${TMPD:-/tmp}" LC_ALL=C DECOY="${DECOY_PROJECT:-}" \
		"$CONFINED_EXEC" "${CONFINE_OPTS[@]}" "${opts[@]}" -- "$@")
}

# unconfined CMD...: the same user and environment, without confinement.
unconfined() {
	(cd "${WS:-$T}" && t "${CONFINE_SECS:-60}" "${AS[@]}" env -i \
		PATH=/usr/local/bin:/usr/bin:/bin HOME="${HOME_DECOY:-$T}" \
		TMPDIR="${TMPD:-/tmp}" LC_ALL=C "$@")
}

# must_fail WHAT [DRIVER-OPTS...] -- CMD...: the confined CMD exits non-zero
# (and not because the driver refused to confine, 125).
must_fail() {
	local what=$1 rc
	shift
	confined "$@" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ]; then
		fail "$what: confinement refused: $(head -c 300 "$T/out")"
	elif [ "$rc" -ne 0 ]; then
		ok "$what: refused (exit $rc)"
	else
		fail "$what: succeeded under confinement"
	fi
}

# must_pass WHAT [DRIVER-OPTS...] -- CMD...: the confined CMD exits 0.
must_pass() {
	local what=$1 rc
	shift
	confined "$@" >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 0 ]; then
		ok "$what"
	else
		fail "$what: exit $rc: $(head -c 300 "$T/out")"
	fi
}

# start_bg CMD...: start CMD in the background and remember its PID in BG.
start_bg() {
	"$@" &
	BG=$!
	BG_PIDS+=("$BG")
}

# A listener on 127.0.0.1 (random port, tests/confine/listener.py) that
# counts accepted connections: start_listener [SECONDS] sets PORT and
# LISTENER; count prints the count so far; stop_listener kills it.
start_listener() {
	cp "$(dirname "$0")/../confine/listener.py" "$T/listener.py" || { fail "cannot copy listener.py"; finish; }
	rm -f "$T/port" "$T/count"
	start_bg "$PY" "$T/listener.py" "$T/port" "$T/count" "${1:-600}"
	LISTENER=$BG
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.1; done
	[ -s "$T/port" ] || { fail "the listener on 127.0.0.1 did not start"; finish; }
	PORT=$(cat "$T/port")
	echo "# listener on 127.0.0.1:$PORT (pid $LISTENER)"
}
count() { cat "$T/count"; }
stop_listener() {
	kill -KILL "$LISTENER" 2>/dev/null
	wait "$LISTENER" 2>/dev/null
}
