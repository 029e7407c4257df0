#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# network - `txfs run --no-network`, and a policy with `network deny`: a
# listener this scenario starts on 127.0.0.1 (random port, counting the
# connections it accepts) cannot be reached from CMD with python3, curl or
# bash's /dev/tcp, and a TCP port cannot be bound; without either, all
# three reach it. AF_UNIX socketpairs keep working. As root and as the
# unprivileged test user. Only 127.0.0.1 is ever contacted (proxies
# cleared, curl --noproxy '*').
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed for the listener"
command -v curl >/dev/null || skip "curl is needed"

start_listener 600
printf '# network rules for txfs run\nnetwork deny\n' >"$T/netdeny.policy"
printf '# no rules\n' >"$T/open.policy"
chmod 644 "$T/netdeny.policy" "$T/open.policy"

# client NAME: the command that talks to the listener (port in $PORT).
client() {
	case $1 in
	python3) echo '"$PY" -c "import socket, sys
c = socket.create_connection((\"127.0.0.1\", int(sys.argv[1])), timeout=5)
c.sendall(b\"GET / HTTP/1.0\r\n\r\n\")
print(c.recv(100).decode())" "$PORT"' ;;
	curl) echo 'curl -sS --noproxy "*" --max-time 5 "http://127.0.0.1:$PORT/"' ;;
	bash-dev-tcp) echo 'exec 3<>"/dev/tcp/127.0.0.1/$PORT" && printf "GET / HTTP/1.0\r\n\r\n" >&3 && timeout 5 cat <&3' ;;
	esac
}

# clients TAG reach|refuse TXFS-RUN-OPTIONS...
clients() {
	local tag="[$WHO] $1" expect=$2 name before
	shift 2
	for name in python3 curl bash-dev-tcp; do
		before=$(count)
		run_txfs PORT="$PORT" -- --json --check false "$@" -- bash -c "exec 1>&2; $(client "$name")"
		if [ "$expect" = reach ]; then
			if grep -q hello "$RUN_ERR" && [ "$(count)" -gt "$before" ] && [ "$(jget exit)" = 0 ]; then
				ok "$tag $name reaches 127.0.0.1:$PORT"
			else
				fail "$tag $name cannot reach the listener (exit $(jget exit)): $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
			fi
		elif ! grep -q hello "$RUN_ERR" && [ "$(count)" = "$before" ] && [ "$(jget exit)" != 0 ]; then
			ok "$tag $name refused (exit $(jget exit)): $(grep -vE 'current directory|^txfs: run' "$RUN_ERR" | tail -n 1 | head -c 100)"
		else
			fail "$tag $name reached the listener or did not fail (exit $(jget exit), connections $before -> $(count))"
		fi
	done
}

body() {
	ws_fixture
	clients "no network option:" reach
	clients "policy without network rule:" reach --policy "$T/open.policy"
	clients "--no-network:" refuse --no-network
	clients "policy 'network deny':" refuse --policy "$T/netdeny.policy"
	run_txfs -- --json --check false --no-network -- "$PY" -c \
		'import socket; a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"'
	check_eq "[$WHO] --no-network: an AF_UNIX socketpair still works" 0 "$(jget exit)"
	run_txfs -- --json --check false --no-network -- "$PY" -c \
		'import socket; socket.socket().bind(("127.0.0.1", 0))'
	if [ "$(jget exit)" != 0 ] && [ -n "$(jget exit)" ]; then ok "[$WHO] --no-network: binding a TCP port fails"; else fail "[$WHO] --no-network: binding a TCP port succeeded"; fi
	run_txfs -- --json --check false --no-network -- "$PY" -c \
		'import socket; socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)'
	if [ "$(jget exit)" != 0 ] && [ -n "$(jget exit)" ]; then ok "[$WHO] --no-network: an AF_INET6 UDP socket cannot be created"; else fail "[$WHO] --no-network: AF_INET6 UDP socket created"; fi
}

for_each_user body
echo "# the listener accepted $(count) connections in all"
stop_listener
finish
