#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sup_connect - issue 9 point 4: under `txfs run`, connect(2) (and sendto/
# sendmsg by address) to a pathname unix socket outside the workspace is
# refused with EACCES by the supervisor (cli/sandbox/supervise*.c), which never lets
# the kernel re-read the address. A listener this scenario starts (as the
# running user, on a pathname under the decoy home, counting the
# connections it accepts) is reachable unconfined, and from txfs run:
#   refused: by its path, with --no-network, through a symlink in /tmp,
#     by a relative path, by sendto, sendmsg, sendmmsg, socat, and while another thread
#     keeps switching the address buffer between it and a listener inside
#     the workspace (the listener's count proves nothing got through);
#   refused: tmux -S DECOY/tmux.sock new-window 'touch victim' (the issue's
#     escape through a tmux server of the user), nothing created;
#   reached: with a policy rule `allow connect DECOY/*.sock`;
#   a listener inside the workspace stays reachable.
# As root and as the unprivileged test user.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
mkdir -p "$T/sup" && cp "$(dirname "$0")"/sup/*.py "$T/sup/" && chmod -R a+rX "$T/sup"
CLIENT=$T/sup/connect_client.py
SERVER_PID=

stop_server() {
	[ -n "$SERVER_PID" ] && kill -9 "$SERVER_PID" 2>/dev/null
	SERVER_PID=
}
trap 'r=$?; stop_server; (exit $r); runloop_cleanup' EXIT

# start_server: the listener at $DEC/srv.sock, as $AS, counting in $DEC/count.
start_server() {
	local i
	DEC=$HOME_DECOY/run
	mkdir -p "$DEC" && as_owner "$DEC"
	"${AS[@]}" "$PY" "$T/sup/unix_server.py" "$DEC/srv.sock" "$DEC/count" "$DEC/pid" &
	BG_PIDS+=("$!")
	for i in $(seq 100); do [ -S "$DEC/srv.sock" ] && [ -s "$DEC/pid" ] && break; sleep 0.1; done
	SERVER_PID=$(cat "$DEC/pid" 2>/dev/null)
	[ -S "$DEC/srv.sock" ] || fail "the decoy listener did not start"
}
count() { wc -l <"$DEC/count" 2>/dev/null | tr -d ' '; }

# refused TAG CMD [TXFS-RUN-OPTIONS...]: CMD (bash) prints ERRNO $ERRNO
# (13: EACCES), the listener accepted nothing.
ERRNO=13
refused() {
	local tag="[$WHO] $1" cmd=$2 before
	shift 2
	before=$(count)
	run_txfs -- --json --check false "$@" -- bash -c "exec 1>&2; $cmd"
	if grep -q "^ERRNO $ERRNO\$" "$RUN_ERR" && [ "$(count)" = "$before" ]; then
		ok "$tag: errno $ERRNO, nothing accepted"
	else
		fail "$tag: expected ERRNO $ERRNO and no connection (accepted $before -> $(count)): $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi
}

body() {
	ws_fixture
	start_server
	local out before
	out=$(as_run "$PY" "$CLIENT" connect "$DEC/srv.sock")
	check_eq "[$WHO] unconfined, the decoy listener answers" "CONNECTED SERVER" "$out"

	refused "connect by path" "\"\$PY\" $CLIENT connect $DEC/srv.sock"
	if audit_has '"event":"veto","op":"run-connect","path":"[^"]*/srv\.sock"'; then
		ok "[$WHO] the refused connect is in STATE/audit.log"
	else
		fail "[$WHO] no run-connect veto in STATE/audit.log: $(tail -c 300 "$STATE/audit.log")"
	fi
	refused "connect by path, --no-network" "\"\$PY\" $CLIENT connect $DEC/srv.sock" --no-network
	refused "connect through a symlink in /tmp" \
		"l=\$(mktemp -u /tmp/txfs-sup-XXXXXX); ln -s $DEC/srv.sock \$l; \"\$PY\" $CLIENT connect \$l; rm -f \$l"
	refused "connect by a relative path (../home/run/srv.sock)" \
		"\"\$PY\" $CLIENT connect ../home/run/srv.sock"
	refused "sendto by address" "\"\$PY\" $CLIENT sendto $DEC/srv.sock"
	refused "sendmsg by address" "\"\$PY\" $CLIENT sendmsg $DEC/srv.sock"
	refused "sendmmsg by address" "\"\$PY\" $T/sup/mmsg_client.py $DEC/srv.sock"
	refused "socat UNIX-CONNECT" "socat -u UNIX-CONNECT:$DEC/srv.sock - 2>&1 | grep 'Permission denied' >/dev/null && echo ERRNO 13"

	before=$(count)
	run_txfs -- --json --check false -- bash -c "exec 1>&2; \"\$PY\" $CLIENT race $DEC/srv.sock 3000"
	if [ "$(count)" = "$before" ] && grep -q '^RACE inside=[1-9]' "$RUN_ERR"; then
		ok "[$WHO] 3000 connects while another thread swaps the address: none reached the decoy ($(grep '^RACE' "$RUN_ERR"))"
	else
		fail "[$WHO] address-swap race: accepted $before -> $(count): $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi

	# sendmsg is performed by the supervisor: 4 MiB through a blocking
	# socketpair whose reader is slower (partial sends, then blocking)
	# arrive intact and in order, and SCM_RIGHTS descriptors are passed.
	run_txfs -- --json --check false -- "$PY" -c '
import array, os, socket, sys, threading
a, b = socket.socketpair()
data = os.urandom(4 << 20)
got = bytearray()
def rd():
    while len(got) < len(data):
        got.extend(b.recv(65536))
t = threading.Thread(target=rd); t.start()
sent = 0
while sent < len(data):
    sent += a.sendmsg([data[sent:]])
t.join()
r, w = os.pipe()
a.sendmsg([b"F"], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [w]))])
msg, anc, _, _ = b.recvmsg(1, socket.CMSG_SPACE(4))
fd = array.array("i", anc[0][2])[0]
os.write(fd, b"via-passed-fd")
sys.exit(0 if bytes(got) == data and os.read(r, 20) == b"via-passed-fd" else 1)'
	check_eq "[$WHO] sendmsg: 4 MiB intact through a blocking socket, SCM_RIGHTS passed" 0 "$(jget exit)"

	# sendmmsg (glibc's resolver sends A and AAAA queries with it) is
	# performed too, msg_len stored in the caller's array.
	run_txfs -- --json --check false -- bash -c "exec 1>&2; \"\$PY\" $T/sup/mmsg_client.py"
	if grep -q '^MMSG n=2 len=5,7 got=first,second! ' "$RUN_ERR"; then
		ok "[$WHO] sendmmsg of two datagrams on a socketpair works"
	else
		fail "[$WHO] sendmmsg: $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi

	# Hostile cmsg_len values: the same answers as without the supervisor.
	out=$(as_run "$PY" "$T/sup/cmsg_evil.py")
	run_txfs -- --json --check false -- bash -c "exec 1>&2; \"\$PY\" $T/sup/cmsg_evil.py"
	check_eq "[$WHO] sendmsg with hostile cmsg_len: same results as unconfined" "$out" \
		"$(grep '^CMSG' "$RUN_ERR")"

	# The supervisor's listener cannot be stolen (pidfd_getfd on txfs run:
	# Landlock refuses ptrace-mode access to processes outside the domain).
	run_txfs -- --json --check false -- "$PY" -c '
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pfd = libc.syscall(434, os.getppid(), 0)
got = [n for n in range(64) if pfd >= 0 and libc.syscall(438, pfd, n, 0) >= 0]
print("GOT", got, file=sys.stderr)
sys.exit(1 if got else 0)'
	check_eq "[$WHO] pidfd_getfd of txfs run's descriptors (the listener) refused" 0 "$(jget exit)"

	printf '# txfs run may reach the decoy listener\nallow connect %s/*.sock\n' "$DEC" >"$T/connect.policy"
	chmod 644 "$T/connect.policy"
	before=$(count)
	new_state
	run_txfs -- --json --check false --policy "$T/connect.policy" -- bash -c \
		"exec 1>&2; \"\$PY\" $CLIENT connect $DEC/srv.sock"
	if grep -q '^CONNECTED SERVER$' "$RUN_ERR" && [ "$(count)" = $((before + 1)) ]; then
		ok "[$WHO] allowed by 'allow connect $DEC/*.sock'"
	else
		fail "[$WHO] allow connect: $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi

	new_state
	run_txfs -- --json --check false -- "$PY" -c '
import socket, sys
srv = socket.socket(socket.AF_UNIX); srv.bind("in.sock"); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect("in.sock"); a, _ = srv.accept()
c.sendall(b"ping"); a.sendall(a.recv(4).upper())
sys.exit(0 if c.recv(4) == b"PING" else 1)'
	check_eq "[$WHO] a listener inside the workspace is reachable" 0 "$(jget exit)"
	stop_server

	# The issue's case: a tmux server of the user (on a socket under the
	# decoy home) would run a command unconfined for the confined one.
	if command -v tmux >/dev/null; then
		TMUX_SOCK=$DEC/tmux.sock
		as_run env -i PATH=/usr/bin:/bin HOME="$HOME_DECOY" TERM=dumb \
			tmux -S "$TMUX_SOCK" new-session -d -s decoy 'sleep 100' ||
			fail "[$WHO] the decoy tmux server did not start"
		run_txfs -- --json --check false -- bash -c \
			"exec 1>&2; tmux -S $TMUX_SOCK new-window -d 'touch $DEC/victim'; echo tmux-rc=\$?"
		sleep 0.5
		if [ ! -e "$DEC/victim" ] && grep -q '^tmux-rc=[1-9]' "$RUN_ERR"; then
			ok "[$WHO] tmux -S DECOY/tmux.sock new-window 'touch victim': refused, nothing ran"
		else
			fail "[$WHO] tmux new-window through the user's server: victim $( [ -e "$DEC/victim" ] && echo created || echo absent): $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
		fi
		as_run tmux -S "$TMUX_SOCK" kill-server 2>/dev/null
	fi

	# Abstract sockets (Landlock ABI >= 6 scopes them): the connect is made
	# by the helper inside the sandbox's domain, so outside ones fail with
	# Landlock's EPERM and the command's own ones work.
	[ "$(landlock_abi)" -ge 6 ] || return 0
	local name=txfs-sup-$$-$WHO
	"${AS[@]}" "$PY" "$T/sup/unix_server.py" "@$name" "$DEC/count" "$DEC/pid" &
	BG_PIDS+=("$!")
	for i in $(seq 100); do [ -s "$DEC/pid" ] && grep -q "@$name" /proc/net/unix && break; sleep 0.1; done
	SERVER_PID=$(cat "$DEC/pid")
	out=$(as_run "$PY" "$CLIENT" connect "@$name")
	check_eq "[$WHO] unconfined, the abstract decoy listener answers" "CONNECTED SERVER" "$out"
	ERRNO=1 refused "connect to an abstract socket outside the sandbox" "\"\$PY\" $CLIENT connect @$name"
	new_state
	run_txfs -- --json --check false -- "$PY" -c '
import socket, sys
n = "\0txfs-sup-inside-%d" % id(sys)
srv = socket.socket(socket.AF_UNIX); srv.bind(n); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(n); a, _ = srv.accept()
c.sendall(b"ping"); a.sendall(a.recv(4).upper())
sys.exit(0 if c.recv(4) == b"PING" else 1)'
	check_eq "[$WHO] an abstract listener of the command itself is reachable" 0 "$(jget exit)"
	stop_server
}

# The rule's syntax: absolute paths only, errors as FILE:LINE:COL.
printf '# bad\nallow connect run/x.sock\n' >"$T/bad.policy"
out=$("$TXFS_BIN" policy check "$T/bad.policy" 2>&1)
if [ $? != 0 ] && grep -q "bad.policy:2:15: .*absolute" <<<"$out"; then
	ok "'allow connect run/x.sock' refused at bad.policy:2:15"
else
	fail "'allow connect' with a relative path: $out"
fi

for_each_user body
finish
