#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# network - --no-network: a listener this scenario starts on 127.0.0.1 (a
# random port) cannot be reached from a confined command by python3, curl
# or bash's /dev/tcp, and can be without --no-network. The listener counts
# the connections it accepts, so "refused" means no connection arrived.
# The denial must come from seccomp (socket() with a domain other than
# AF_UNIX), so the --no-network round runs again with the Landlock ABI
# capped at 3 (no Landlock network rules). AF_UNIX keeps working.
# Only 127.0.0.1 is ever contacted; proxies are cleared and curl is told
# --noproxy '*'.
. "$(dirname "$0")/lib.sh"

require_landlock
fixture
[ -n "$PY" ] || skip "python3 is needed for the listener"
command -v curl >/dev/null || skip "curl is needed"

start_listener 100

clients() {
	local tag=$1 expect=$2; shift 2
	local -a py=(-- "$PY" -c 'import socket, sys
c = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
c.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(c.recv(100).decode())' "$PORT")
	local -a curl_cmd=(-- curl -sS --noproxy '*' --max-time 5 "http://127.0.0.1:$PORT/")
	local -a bash_tcp=(-- bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$0" && printf "GET / HTTP/1.0\r\n\r\n" >&3 && timeout 5 cat <&3' "$PORT")
	local name cmd before
	for name in python3 curl bash-dev-tcp; do
		case $name in
		python3) cmd=("${py[@]}") ;;
		curl) cmd=("${curl_cmd[@]}") ;;
		bash-dev-tcp) cmd=("${bash_tcp[@]}") ;;
		esac
		before=$(count)
		confined "$@" "${cmd[@]}" >"$T/out" 2>&1
		if [ "$expect" = reach ]; then
			if grep -q hello "$T/out" && [ "$(count)" -gt "$before" ]; then
				ok "$tag $name reaches 127.0.0.1:$PORT"
			else
				fail "$tag $name cannot reach the listener: $(head -c 300 "$T/out")"
			fi
		elif ! grep -q hello "$T/out" && [ "$(count)" = "$before" ]; then
			ok "$tag $name refused: $(tail -n 1 "$T/out" | head -c 120)"
		else
			fail "$tag $name reached the listener under --no-network"
		fi
	done
}

clients "[network]" reach
clients "[--no-network]" refuse --no-network
[ "$ABI" -gt 3 ] && clients "[--no-network, Landlock ABI 3: seccomp alone]" refuse --no-network --landlock-abi 3
must_pass "[--no-network] AF_UNIX socketpair still works" --no-network -- "$PY" -c \
	'import socket; a, b = socket.socketpair(); a.send(b"x"); assert b.recv(1) == b"x"'
must_fail "[--no-network] binding a TCP port on 127.0.0.1" --no-network -- "$PY" -c \
	'import socket; socket.socket().bind(("127.0.0.1", 0))'
echo "# listener accepted $(count) connections in all"
finish
