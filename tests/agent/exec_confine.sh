#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_confine - txfs exec confines as txfs run does, as root and as the
# unprivileged test user, in a mounted session: a write to the decoy home
# or the decoy project fails (both byte-identical), the daemon cannot be
# killed from the command, the command cannot commit through the socket;
# the network: a 127.0.0.1 listener is reachable by default, not with
# --no-network, and not when the session's policy says `network deny`
# (the daemon passes it on in cmd-begin; the listener counts no
# connection); a connect from a thread other than the main one works too
# (it failed with ENOENT on Linux 6.18: Claude Code's fetch connects from a
# thread). A command with 1,006 changes: its report lists 1,000 and
# says changes_total; diff --command N lists them all.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed for the listener"
start_listener 600

CLIENT='import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
s.sendall(b"GET / HTTP/1.0\r\n\r\n")
print(s.recv(100).decode(errors="replace").strip().splitlines()[-1])'
# the same from a second thread
THREAD_CLIENT='import socket, sys, threading
out = []
def go():
    try:
        s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
        s.sendall(b"GET / HTTP/1.0\r\n\r\n")
        out.append(s.recv(100).decode(errors="replace").strip().splitlines()[-1])
    except OSError as e:
        out.append("thread: %s" % e)
t = threading.Thread(target=go); t.start(); t.join()
print(out[0])'

body() {
	local u=$WHO home_before proj_before dpid n
	ws_fixture
	home_before=$(snap "$HOME_DECOY")
	proj_before=$(snap "$DECOY_PROJECT")
	mount_ws
	dpid=$(daemon_pid)
	ag_exec -- sh -c 'echo pwned >> "$HOME/notes.txt"'
	[ "$(jget outcome)" = rolled-back ] && [ "$(jget exit)" != 0 ] &&
		ok "[$u] write to the decoy home: failed, rolled back" ||
		fail "[$u] write to the decoy home: $OUT"
	ag_exec -- sh -c "echo pwned >> '$DECOY_PROJECT/src/file.txt'; echo pwned >> link/src/file.txt; ln -s x '$DECOY_PROJECT/l'; rm -f '$DECOY_PROJECT/src/file.txt' link/src/file.txt; exit 0"
	check_snap "[$u] decoy home intact" "$home_before" "$(snap "$HOME_DECOY")"
	check_snap "[$u] decoy project intact" "$proj_before" "$(snap "$DECOY_PROJECT")"
	ag_exec -- kill -9 "$dpid"
	check_eq "[$u] kill -9 of the daemon from the command: refused" "1 $dpid" "$RC $(daemon_pid)"
	# (ASan build: LeakSanitizer needs ptrace, denied when confined)
	ag_exec -- env ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$TXFS_BIN" commit "$WS"
	check_eq "[$u] txfs commit from the command: refused (socket)" 1 "$RC"

	# a command with many changes: the report keeps 1,000 lines and says
	# how many there were; diff --command lists them all
	ag_exec -- sh -c 'mkdir many && cd many && i=0; while [ $i -lt 1005 ]; do : > f$i; i=$((i + 1)); done'
	check_eq "[$u] 1,006 changes: 1000 listed, changes_total" "1000 1006" \
		"$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; d=json.load(sys.stdin); print(len(d["changes"]), d.get("changes_total"))')"
	check_eq "[$u] diff --command lists all 1,005 files" 1005 \
		"$(txfs_as diff --command "$(jget cmd)" --name-status "$WS" | grep -c '^A	many/f')"

	ag_exec -- "$PY" -c "$THREAD_CLIENT" "$PORT"
	check_eq "[$u] network from a thread: reached" "hello 0" "$CMDOUT $RC"
	n=$(count)
	ag_exec -- "$PY" -c "$CLIENT" "$PORT"
	check_eq "[$u] network by default: reached" "hello 0" "$CMDOUT $RC"
	ag_exec --no-network -- "$PY" -c "$CLIENT" "$PORT"
	[ "$RC" != 0 ] && ok "[$u] --no-network: refused (exit $RC)" || fail "[$u] --no-network: connected"
	check_eq "[$u] --no-network: the listener saw one connection only" $((n + 1)) "$(count)"
	umount_ws

	# the session's policy: network deny
	printf 'deny delete,rename **/.git\nnetwork deny\n' >"$T/nonet$SEQ.policy"
	chmod 644 "$T/nonet$SEQ.policy"
	mount_ws --policy "$T/nonet$SEQ.policy"
	n=$(count)
	ag_exec -- "$PY" -c "$CLIENT" "$PORT"
	[ "$RC" != 0 ] && ok "[$u] policy network deny: refused (exit $RC)" || fail "[$u] policy network deny: connected"
	check_eq "[$u] policy network deny: no connection" "$n" "$(count)"
	umount_ws
	check_unmounted "[$u] exec_confine"
}

for_each_user body
finish
