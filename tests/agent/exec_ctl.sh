#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_ctl - issue 23.2: a command under `txfs exec` never commits, rolls
# back, releases or takes a savepoint, on a default `txfs mount` (no
# --no-ctl-verbs). As root and as the unprivileged test user, a command
# that writes b.txt then tries, and must fail, each of:
#   - commit, rollback, rollback cmd-N, savepoint evil, release cmd-N
#     written to .txfs/ctl by its shell;
#   - commit from a setsid child, from an orphan (double fork: reparented
#     to txfs exec, the subreaper) and from a thread of python;
#   - txfs commit, txfs rollback, txfs savepoint (the control socket);
#   - the control socket by hand (python, STATE/ctl.sock);
#   - a nested txfs exec;
# then exits 1: txfs exec's own rollback to cmd-N still works (b.txt
# gone, no savepoint left), the real directory is byte-identical. The same
# attempts in a command that exits 0: kept, still not committed (real
# directory unchanged); the agent's own `rollback` through .txfs/ctl,
# outside any command, still works afterwards.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"

# The attempts; each prints ESCAPED-WHAT when it got through.
ATTEMPTS='echo b > b.txt
n=$(sed -n "s/.*\"savepoints\":\([0-9]*\).*/\1/p" .txfs/status.json)
cmd=cmd-$CMDN
for v in commit rollback "rollback $cmd" "savepoint evil" "release $cmd"; do
	(echo "$v" > .txfs/ctl) 2>/dev/null && echo "ESCAPED-ctl-$v"
done
setsid -w sh -c "echo commit > .txfs/ctl" 2>/dev/null && echo ESCAPED-setsid
sh -c "(sh -c \"sleep 0.5; echo commit > .txfs/ctl 2>/dev/null && echo ESCAPED-orphan >&2\" &)"
sleep 1.5
"$PY" -c "
import threading
def w():
    try:
        with open(\".txfs/ctl\", \"w\") as f:
            f.write(\"commit\")
        print(\"ESCAPED-thread\")
    except OSError:
        pass
t = threading.Thread(target=w); t.start(); t.join()"
for v in commit rollback "savepoint evil2"; do
	ASAN_OPTIONS=detect_leaks=0 "$TXFS" $v "$PWD" >/dev/null 2>&1 && echo "ESCAPED-txfs-$v"
done
"$PY" -c "
import socket, sys
try:
    s = socket.socket(socket.AF_UNIX); s.settimeout(5)
    s.connect(sys.argv[1] + \"/ctl.sock\")
    s.sendall(b\"commit\0\0\")
    if s.recv(16).startswith(b\"0\n\"):
        print(\"ESCAPED-socket\")
except OSError:
    pass" "$STATE"
ASAN_OPTIONS=detect_leaks=0 "$TXFS" exec -- sh -c "echo nested > nested.txt" >/dev/null 2>&1 && echo ESCAPED-nested
[ "$(sed -n "s/.*\"savepoints\":\([0-9]*\).*/\1/p" .txfs/status.json)" = "$n" ] || echo ESCAPED-savepoints-changed
echo ATTEMPTS-DONE'

# xexec CMDN EXIT: the attempts under txfs exec (command number CMDN),
# ending with exit EXIT. RC, OUT (report), CMDOUT, ERR.
xexec() {
	SEQ=$((SEQ + 1))
	timeout -k 5 90 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" LC_ALL=C PY="$PY" TXFS="$TXFS_BIN" STATE="$STATE" CMDN="$1" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
		"$TXFS_BIN" exec --json -- bash -c "$ATTEMPTS; exit $2" </dev/null \
		>"$T/ex$SEQ.out" 2>"$T/ex$SEQ.err"
	RC=$?
	OUT=$(tail -n 1 "$T/ex$SEQ.out")
	CMDOUT=$(head -n -1 "$T/ex$SEQ.out")
	ERR=$(cat "$T/ex$SEQ.err")
}

# check_attempts WHAT: every attempt ran and none got through.
check_attempts() {
	if ! grep -q ATTEMPTS-DONE <<<"$CMDOUT"; then
		fail "[$WHO] $1: the attempts did not run: $(head -c 300 <<<"$CMDOUT$ERR")"
	elif grep -q ESCAPED <<<"$CMDOUT$ERR"; then
		fail "[$WHO] $1: $(grep -ho 'ESCAPED-[a-z0-9 -]*' <<<"$CMDOUT$ERR" | tr '\n' ' ')"
	else
		ok "[$WHO] $1: 5 ctl verbs, setsid, orphan, thread, txfs commit/rollback/savepoint, the socket, nested exec: all refused"
	fi
}

body() {
	local real ctl
	ws_fixture
	real=$(snap "$WS")
	mount_ws
	xexec 1 1
	check_attempts "command 1 (exit 1)"
	check_eq "[$WHO] command 1: txfs exec rolled it back itself" "rolled-back" "$(jget outcome)"
	[ ! -e "$WS/b.txt" ] && [ ! -e "$WS/nested.txt" ] && ok "[$WHO] b.txt is gone from the view" ||
		fail "[$WHO] b.txt or nested.txt still in the view after the rollback"
	check_eq "[$WHO] no savepoint left (cmd-1 released, none taken from inside)" 0 \
		"$(as_run cat "$WS/.txfs/status.json" | sed -n 's/.*"savepoints":\([0-9]*\).*/\1/p')"
	# .txfs/ctl speaks for the command, not for the savepoint verbs
	# txfs exec ran underneath ("cmd-1 released; its changes are kept")
	ctl=$(as_run cat "$WS/.txfs/ctl")
	grep -E '^txfs exec: command 1 rolled back \(exit 1\): [0-9]+ changes? discarded$' <<<"$ctl" >/dev/null &&
		ok "[$WHO] .txfs/ctl reads: command 1 rolled back, its changes discarded" ||
		fail "[$WHO] .txfs/ctl after the rolled-back command: $ctl"
	if grep -q '"event":"veto","op":"control","path":"savepoint evil".*"errno":"EPERM"' "$STATE/audit.log"; then
		ok "[$WHO] the refusals are vetoes in STATE/audit.log"
	else
		fail "[$WHO] no refusal in STATE/audit.log: $(tail -c 300 "$STATE/audit.log")"
	fi

	xexec 2 0
	check_attempts "command 2 (exit 0)"
	check_eq "[$WHO] command 2: kept (staged)" "kept" "$(jget outcome)"
	ctl=$(as_run cat "$WS/.txfs/ctl")
	grep -E '^txfs exec: command 2 kept \(exit 0\): [0-9]+ changes? staged in the session' <<<"$ctl" >/dev/null &&
		ok "[$WHO] .txfs/ctl reads: command 2 kept, staged in the session" ||
		fail "[$WHO] .txfs/ctl after the kept command: $ctl"
	check_eq "[$WHO] ... b.txt staged in the view" b "$(as_run cat "$WS/b.txt")"
	# txfs rollback --command 2: .txfs/ctl and status.json's
	# last_command say it was undone (not "kept", not "nothing had
	# changed")
	as_run "$TXFS_BIN" rollback "$WS" --command 2 >/dev/null 2>&1 ||
		fail "[$WHO] txfs rollback --command 2 failed"
	ctl=$(as_run cat "$WS/.txfs/ctl")
	grep -E '^txfs exec: commands 2 and later rolled back \(to savepoint cmd-2\): their changes discarded$' <<<"$ctl" >/dev/null &&
		ok "[$WHO] .txfs/ctl after rollback --command 2: rolled back, discarded" ||
		fail "[$WHO] .txfs/ctl after rollback --command 2: $ctl"
	grep '"last_command":{"cmd":2,[^}]*"outcome":"undone"' <<<"$(as_run cat "$WS/.txfs/status.json")" >/dev/null &&
		ok "[$WHO] status.json: last_command 2 undone" ||
		fail "[$WHO] status.json after rollback --command 2: $(as_run cat "$WS/.txfs/status.json" | head -c 400)"
	xexec 3 0
	check_eq "[$WHO] command 3: kept (staged)" "kept" "$(jget outcome)"
	# the agent itself, outside any command, may still roll back
	as_run sh -c "echo rollback > '$WS/.txfs/ctl'" ||
		fail "[$WHO] rollback through .txfs/ctl outside a command was refused"
	[ ! -e "$WS/b.txt" ] && ok "[$WHO] the agent's own rollback through .txfs/ctl works after the command" ||
		fail "[$WHO] b.txt still there after the agent's rollback"
	umount_ws
	check_snap "[$WHO] the real directory is byte-identical" "$real" "$(snap "$WS")"
}

for_each_user body
finish
