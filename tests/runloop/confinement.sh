#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# confinement - what CMD cannot do under `txfs run` (the real loop, not the
# confined_exec driver), as root and as the unprivileged test user:
#   1. the syscall table helper, run as CMD with the daemon's pid read from
#      the mount's .txfs/status.json (the state folder is hidden from CMD): every entry denied with the documented errno (EPERM;
#      ENOSYS for clone3/io_uring), i386 and x32 entry points included, with
#      and without --no-network (as root every probe is conclusive);
#   2. writes outside the workspace and the temp folders fail (corpus-style
#      attempts on a decoy $HOME under /var/tmp and on the decoy project
#      behind the workspace symlink `link`); both stay byte-identical, while
#      the workspace, /tmp and /dev/shm stay writable;
#   3. the state folder and its control socket: `txfs commit/rollback/status`
#      from CMD are refused (the state folder is hidden from CMD: covered
#      by an empty tmpfs; else the daemon refuses a seccomp-confined peer), a raw
#      request on ctl.sock too, files cannot be written, removed or renamed
#      in the state folder; the refused commit had no effect (rollback);
#      with `control deny commit`, `echo commit > .txfs/ctl` fails (EPERM);
#   4. the daemon cannot be killed (kill -9 of the pid in .txfs/status.json,
#      its process group), signalled by python, or traced (strace -p), and
#      is alive afterwards (the run still rolls back normally). Reading
#      /proc/PID/environ is reported, not judged (CMD inherits that
#      environment anyway).
# CMD's stdout is sent to stderr (the JSON report owns stdout).
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"

# check_json_exit WHAT N: the JSON report says CMD exited N.
check_json_exit() {
	check_eq "$1: CMD's exit status (JSON)" "$2" "$(jget exit)"
}

table() {
	local u=$WHO what=$1 net=$2 rc
	ws_fixture
	run_txfs -- --json $net --check false -- bash -c \
		'exec 1>&2; "$SYSCALLS" --expect-denied '"$net"' --daemon-pid "$(sed -n "s/.*\"pid\":\([0-9]*\).*/\1/p" .txfs/status.json)"'
	echo "## [$u] syscall table under txfs run $net"
	grep -vE 'has its current directory|^txfs: run:' "$RUN_ERR" | sed 's/^/    /'
	check_json_exit "[$u] $what: syscalls --expect-denied (every entry denied as documented)" 0
	check_action "[$u] $what" rolled-back
	if grep -qE '^(i386|x32) ' "$RUN_ERR" && ! grep -E '^(i386|x32) ' "$RUN_ERR" | qgrep -v ': denied (EPERM)$'; then
		ok "[$u] $what: every i386 and x32 entry point denied (EPERM) ($(grep -cE '^(i386|x32) ' "$RUN_ERR") probes)"
	else
		fail "[$u] $what: i386/x32 probes: $(grep -E '^(i386|x32) ' "$RUN_ERR" | grep -v ': denied (EPERM)$' | head -5 | tr '\n' ';')"
	fi
	if grep -qE '^daemon: ' "$RUN_ERR" && ! grep -E '^daemon: ' "$RUN_ERR" | qgrep -v ': denied (EPERM)$'; then
		ok "[$u] $what: every probe aimed at the daemon's pid denied"
	else
		fail "[$u] $what: daemon probes: $(grep -E '^daemon: ' "$RUN_ERR" | grep -v ': denied' | head -5 | tr '\n' ';')"
	fi
	if [ "$(id -u)" = 0 ] && [ "$WHO" = root ]; then
		if grep -qE '^# [0-9]+ probes: .* 0 unexpected, 0 inconclusive' "$RUN_ERR"; then
			ok "[$u] $what: $(grep -E '^# [0-9]+ probes' "$RUN_ERR" | sed 's/^# //')"
		else
			fail "[$u] $what: expected 0 unexpected, 0 inconclusive got: $(grep -E '^# [0-9]+ probes' "$RUN_ERR")"
		fi
	fi
}

ATTEMPTS=$(cat <<'EOF'
n=0 bad=0
try() { n=$((n + 1)); if eval "$1" >/dev/null 2>&1; then bad=$((bad + 1)); echo "SUCCEEDED: $1"; else echo "refused: $1"; fi; }
try 'rm -rf tests/ patches/ plan/ ~/'
try 'rm -rf "$HOME/projects/tool/web-crawler"'
try 'rm -rf "$HOME"'
try '/bin/rm -r "$HOME/Documents" "$HOME/.ssh"'
try 'rm -rf link/'
try 'find "$HOME" -mindepth 1 -delete'
try 'printf x > "$HOME/notes.txt"'
try 'printf x >> "$HOME/notes.txt"'
try ': > "$HOME/.bashrc"'
try 'truncate -s 0 "$HOME/notes.txt"'
try 'sed -i s/a/b/ "$HOME/notes.txt"'
try 'dd if=/dev/zero of="$HOME/.ssh/id_rsa" bs=1 count=1 conv=notrunc status=none'
try 'touch "$HOME/new-file"'
try 'mkdir "$HOME/newdir"'
try 'ln -s / "$HOME/rootlink"'
try 'mv "$HOME/notes.txt" "$HOME/notes.old"'
try 'mv "$HOME/notes.txt" ./stolen.txt'
try 'mv a.txt "$HOME/moved-in.txt"'
try 'mv a.txt ../moved-out.txt'
try 'echo x > ../sibling.txt'
try 'echo x > link/src/file.txt'
try 'rm -rf link/src'
try 'echo x > "$T/outside.txt"'
try 'mkdir /var/tmp/txfs-runloop-escape-$$'
try '"$PY" -c "import os; open(os.environ[\"HOME\"] + \"/notes.txt\", \"w\")"'
try '"$PY" -c "import os; os.truncate(os.environ[\"HOME\"] + \"/notes.txt\", 0)"'
try '"$PY" -c "import os; os.open(os.environ[\"HOME\"] + \"/notes.txt\", os.O_RDONLY | os.O_TRUNC)"'
try '"$PY" -c "import os; h = os.environ[\"HOME\"]; os.rename(h + \"/.bashrc\", h + \"/bashrc\")"'
echo "# $n attempts, $bad succeeded"
exit $bad
EOF
)

INSIDE=$(cat <<'EOF'
set -e
echo data > new.txt && mkdir -p d/e && mv new.txt d/e/ && : > d/e/new.txt && rm -rf d
f=$(mktemp /tmp/txfs-runloop-tmp.XXXXXX) && echo hi > "$f" && rm "$f"
if [ -d /dev/shm ]; then f=$(mktemp /dev/shm/txfs-runloop-shm.XXXXXX) && echo hi > "$f" && rm "$f"; fi
echo x > /dev/null
"$PY" -c 'import os; open("t.txt", "w").write("x"); os.truncate("t.txt", 0); os.rename("t.txt", "dir/t.txt"); os.unlink("dir/t.txt")'
EOF
)

outside() {
	local u=$WHO home_before project_before parent_before
	ws_fixture
	home_before=$(snap "$HOME_DECOY")
	project_before=$(snap "$DECOY_PROJECT")
	# beside the workspace (this scenario's own folder), and in /var/tmp
	# what CMD tries to make there: /var/tmp is shared with whatever else
	# runs on the machine (tests/run runs two passes at once), whose
	# folders come and go
	parent_before=$(ls -A "$(dirname "$WS")"; ls -A /var/tmp | grep '^txfs-runloop-escape-')
	run_txfs -- --json --check false -- bash -c "exec 1>&2; $ATTEMPTS"
	grep -E '^(SUCCEEDED|refused|#)' "$RUN_ERR" | sed 's/^/    /'
	check_json_exit "[$u] writes outside the workspace: every attempt refused" 0
	check_snap "[$u] decoy home (under /var/tmp) byte-identical" "$home_before" "$(snap "$HOME_DECOY")"
	check_snap "[$u] decoy project (behind link) byte-identical" "$project_before" "$(snap "$DECOY_PROJECT")"
	check_snap "[$u] nothing created beside the workspace or in /var/tmp" "$parent_before" \
		"$(ls -A "$(dirname "$WS")"; ls -A /var/tmp | grep '^txfs-runloop-escape-')"
	[ -e "$T/outside.txt" ] && fail "[$u] $T/outside.txt was created"
	run_txfs -- --json --check false -- bash -c "$INSIDE"
	check_json_exit "[$u] the workspace, /tmp, /dev/shm and /dev/null stay writable (truncate, rename too)" 0
}

state_folder() {
	local u=$WHO before state_before
	ws_fixture
	before=$(snap "$WS")
	# The state folder after a mount (ctl.sock, lock, layer...), as listed
	# by name: run once so that it is populated.
	run_txfs -- --check false -- true
	state_before=$(cd "$STATE" && find . -printf '%p %y %m %U\n' | grep -v '^\./layer/' | sort)
	run_txfs -- --json -- bash -c 'exec 1>&2
		# An ASan build of txfs: LeakSanitizer needs ptrace, which the
		# confinement denies (it would abort at exit).
		export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
		bad=0
		no() { if eval "$1" >/dev/null 2>&1; then echo "SUCCEEDED: $1"; bad=$((bad + 1)); else echo "refused: $1"; fi; }
		echo changed > a.txt
		# 10 times: the refusal must always be exit 1 with a message
		for i in 1 2 3 4 5 6 7 8 9 10; do
			out=$("$TXFS" commit "$WS" 2>&1); rc=$?
			case $rc:$out in
			# not found (the state folder is hidden: as root an empty
			# folder), refused by the daemon (a confined peer) or, before
			# it, by the supervisor (ctl.sock is outside the workspace)
			1:*confined*|1:*Permission\ denied*|1:*cannot\ reach\ the\ daemon*) [ $i = 1 ] && echo "txfs commit: exit $rc: $out" ;;
			0:*) echo "SUCCEEDED: txfs commit: $out"; bad=$((bad + 1)) ;;
			*) echo "UNEXPECTED: txfs commit (try $i): expected exit 1 and a refusal message got exit $rc: $out"; bad=$((bad + 1)) ;;
			esac
		done
		no "\"\$TXFS\" rollback \"\$WS\""
		no "\"\$TXFS\" status \"\$WS\""
		no "\"\$TXFS\" savepoint \"\$WS\" sp1"
		no "\"\$TXFS\" policy reload \"\$WS\""
		no "\"\$PY\" -c \"import socket, sys; s = socket.socket(socket.AF_UNIX); s.connect(\\\"\$STATE/ctl.sock\\\"); s.sendall(b\\\"commit\\0\\0\\\"); r = s.recv(100); print(r); sys.exit(0 if r.startswith(b\\\"0\\n\\\") else 1)\""
		no "echo x > \"\$STATE/evil\""
		no "rm \"\$STATE/daemon.pid\""
		no "mv \"\$STATE/audit.log\" \"\$STATE/audit.old\""
		no ": > \"\$STATE/audit.log\""
		no "ln -s / \"\$STATE/link\""
		no "rm -r \"\$STATE/layer\""
		no "mkdir \"\$STATE/dir\""
		no "echo x > \"\$STATE/ctl.sock\""
		echo "# $bad not refused as expected"
		[ $bad = 0 ] && exit 42 || exit 1'
	grep -E '^(SUCCEEDED|refused|txfs commit|UNEXPECTED|#)' "$RUN_ERR" | sed 's/^/    /'
	check_json_exit "[$u] state folder: txfs commit/rollback/status, raw ctl.sock request and writes all refused" 42
	check_rc "[$u] state folder attempts" 42
	check_action "[$u] state folder attempts (the refused commit changed nothing)" rolled-back
	check_snap "[$u] after the refused commit attempts: real directory byte-identical" "$before" "$(snap "$WS")"
	check_snap "[$u] state folder: no entry added, removed or changed in kind/mode" "$state_before" \
		"$(cd "$STATE" && find . -printf '%p %y %m %U\n' | grep -v '^\./layer/' | sort)"

	# control deny commit: .txfs/ctl refuses the verb to the agent
	printf 'control deny commit\n' >"$T/control.policy"
	chmod 644 "$T/control.policy"
	run_txfs -- --json --policy "$T/control.policy" -- bash -c \
		'exec 1>&2; echo changed > a.txt; if echo commit > .txfs/ctl; then exit 1; else exit 42; fi'
	check_json_exit "[$u] control deny commit: echo commit > .txfs/ctl fails" 42
	if grep -q 'Operation not permitted' "$RUN_ERR"; then
		ok "[$u] control deny commit: EPERM"
	else
		fail "[$u] control deny commit: expected EPERM got: $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi
	check_snap "[$u] control deny commit: real directory byte-identical" "$before" "$(snap "$WS")"
}

daemon() {
	local u=$WHO before
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json -- bash -c 'exec 1>&2
		P=$(sed -n "s/.*\"pid\":\([0-9]*\).*/\1/p" .txfs/status.json); G=$(ps -o pgid= -p "$P" | tr -d " ")
		echo "# daemon pid $P, process group $G"
		bad=0
		no() { if eval "$1" >/dev/null 2>&1; then echo "SUCCEEDED: $1"; bad=$((bad + 1)); else echo "refused: $1"; fi; }
		echo changed > a.txt
		no "kill -9 $P"
		no "kill -TERM $P"
		no "kill -STOP $P"
		no "kill -0 $P"
		no "kill -9 -- -$G"
		no "/bin/kill -s KILL $P"
		no "\"\$PY\" -c \"import os; os.kill($P, 9)\""
		no "\"\$PY\" -c \"import os; os.pidfd_open($P)\""
		no "\"\$PY\" -c \"import os, signal; signal.pidfd_send_signal(os.open(\\\"/proc/$P\\\", os.O_RDONLY | os.O_DIRECTORY), 9)\""
		if command -v strace >/dev/null; then no "timeout 10 strace -p $P -e trace=none"; fi
		if command -v gdb >/dev/null; then no "timeout 20 gdb -p $P -batch -ex \"call (int)kill($P, 9)\" 2>&1 | grep \"= 0\" >/dev/null"; fi
		# not judged: CMD inherits the environment the daemon has anyway
		if cat /proc/$P/environ >/dev/null 2>&1; then echo "# note: /proc/$P/environ is readable"; else echo "# note: /proc/$P/environ is not readable"; fi
		no "cat /proc/$P/mem"
		sleep 0.2
		# the daemon still serves the mount
		[ "$(cat a.txt)" = changed ] && grep -q "^transaction" .txfs/status || { echo "MOUNT DEAD"; bad=$((bad + 1)); }
		echo "# $bad not refused as expected"
		[ $bad = 0 ] && exit 42 || exit 1'
	grep -E '^(SUCCEEDED|refused|MOUNT|#)' "$RUN_ERR" | sed 's/^/    /'
	check_json_exit "[$u] daemon: kill -9 (pid from .txfs/status.json), its group, python, pidfd, strace, gdb, /proc/pid/mem all refused" 42
	check_action "[$u] daemon alive afterwards: the run rolls back normally" rolled-back
	check_unmounted "[$u] daemon attempts"
	check_snap "[$u] daemon attempts: real directory byte-identical" "$before" "$(snap "$WS")"
}

body() {
	table "syscall table, --no-network" --no-network
	table "syscall table, network allowed" ""
	outside
	state_folder
	daemon
}

for_each_user body
finish
