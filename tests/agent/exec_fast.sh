#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_fast - what the faster `txfs exec` path must keep, as root and as
# the unprivileged test user:
#   - .txfs/state names the state folder (one line, mode 0400), so the
#     client finds the socket without the status summary;
#   - the command runs under the same filters as under `txfs run`:
#     Seccomp 2 and three more filters than the caller has (the
#     allow-list of cli/sandbox/confine_known.c, the deny-list and the
#     supervisor's), in both;
#   - the policy's `exec deny` and `allow connect` globs, now sent with
#     cmd-begin's answer, are in force: the denied script does not run
#     (126), a copy with other content does; a socket the glob allows is
#     reached, one beside it is refused (EACCES) and accepts nothing;
#   - the in-domain helper (Landlock ABI >= 6) is a child of txfs exec,
#     not of the command (its wait() sees no child), it serves the
#     command's own abstract socket, and it is gone when txfs exec
#     returns; `txfs run --json -- true` reports "stopped": 0 (the
#     supervisor reaps its helper; the tree walk finds nothing).
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
mkdir -p "$T/sup" && cp "$(dirname "$0")"/../runloop/sup/*.py "$T/sup/" &&
	chmod -R a+rX "$T/sup"
CLIENT=$T/sup/connect_client.py
SERVERS=()
trap 'r=$?; for p in "${SERVERS[@]}"; do kill -9 "$p" 2>/dev/null; done; (exit $r); runloop_cleanup' EXIT

# filters PID: "MODE COUNT" from /proc/PID/status.
filters() {
	awk '/^Seccomp:/ { m = $2 } /^Seccomp_filters:/ { n = $2 }
	     END { print m, n }' "/proc/$1/status"
}

# server PATH: a unix listener as $AS (counts in PATH.count).
server() {
	local i
	"${AS[@]}" "$PY" "$T/sup/unix_server.py" "$1" "$1.count" "$1.pid" &
	BG_PIDS+=("$!")
	for i in $(seq 100); do [ -S "$1" ] && [ -s "$1.pid" ] && break; sleep 0.1; done
	[ -S "$1" ] || fail "the listener $1 did not start"
	SERVERS+=("$(cat "$1.pid")")
}
accepted() { wc -l <"$1.count" 2>/dev/null | tr -d ' '; }

body() {
	local u=$WHO base st dec n0 n1 hpid run_filters pol=$T/fast-$WHO.policy
	git_ws
	mkdir -p "$WS/tools"
	printf '#!/bin/sh\necho evil-ran\n' >"$WS/tools/evil.sh"
	printf '#!/bin/sh\necho good-ran\n' >"$WS/tools/good.sh"
	chmod 755 "$WS/tools/evil.sh" "$WS/tools/good.sh"
	dec=$HOME_DECOY/run
	mkdir -p "$dec" "$HOME_DECOY/other"
	as_owner "$WS/tools" "$dec" "$HOME_DECOY/other"
	printf 'deny delete,rename **/.git\nexec deny tools/evil.sh\nallow connect %s/*.sock\n' \
		"$dec" >"$pol"
	chmod 644 "$pol"
	# txfs run first (it mounts the workspace itself), on a state of its own
	DECOY_PROJECT=$T/w$SEQ/decoy-project
	run_txfs -- --json --policy "$pol" -- sh -c 'awk "/^Seccomp:/ { m = \$2 } /^Seccomp_filters:/ { n = \$2 } END { print m, n }" /proc/self/status >&2'
	run_filters=$(grep -E '^[0-9]+ [0-9]+$' "$RUN_ERR")
	check_eq "[$u] txfs run: exit 0, stopped 0 (the helper is reaped, not stopped)" "0 0" \
		"$RC $(jget stopped)"
	new_state
	mount_ws --policy "$pol"

	st=$(as_run cat "$WS/.txfs/state")
	check_eq "[$u] .txfs/state names the state folder" "$(readlink -f "$STATE")" "$st"
	check_eq "[$u] .txfs/state is the owner's only (0400)" 400 \
		"$(as_run stat -c %a "$WS/.txfs/state")"

	# the same filters as txfs run: three more than ours (allow-list,
	# deny-list, supervisor), mode 2
	base=$(filters $$)
	ag_exec -- sh -c 'awk "/^Seccomp:/ { m = \$2 } /^Seccomp_filters:/ { n = \$2 } END { print m, n }" /proc/self/status'
	check_eq "[$u] txfs exec: Seccomp 2 with three filters more than the caller" \
		"2 $((${base#* } + 3))" "$CMDOUT"
	check_eq "[$u] txfs run: the same" "$CMDOUT" "$run_filters"

	# exec deny from cmd-begin's globs
	ag_exec -- sh -c './tools/evil.sh; echo "evil rc=$?"; ./tools/good.sh'
	if grep -q '^evil rc=126$' <<<"$CMDOUT" && grep -q '^good-ran$' <<<"$CMDOUT" &&
		! grep -q evil-ran <<<"$CMDOUT"; then
		ok "[$u] exec deny tools/evil.sh: 126, not run; good.sh runs"
	else
		fail "[$u] exec deny through txfs exec: $CMDOUT / $ERR"
	fi

	# allow connect from cmd-begin's globs
	server "$dec/srv.sock"
	server "$HOME_DECOY/other/srv.sock"
	n0=$(accepted "$dec/srv.sock")
	n1=$(accepted "$HOME_DECOY/other/srv.sock")
	ag_exec -- "$PY" "$CLIENT" connect "$dec/srv.sock"
	check_eq "[$u] allow connect $dec/*.sock: reached" "CONNECTED SERVER $((n0 + 1))" \
		"$CMDOUT $(accepted "$dec/srv.sock")"
	ag_exec -- "$PY" "$CLIENT" connect "$HOME_DECOY/other/srv.sock"
	check_eq "[$u] a socket the glob does not match: EACCES, nothing accepted" \
		"ERRNO 13 $n1" "$CMDOUT $(accepted "$HOME_DECOY/other/srv.sock")"

	# the helper: txfs exec's child, not the command's; serves the
	# command's own abstract socket; gone afterwards
	if [ "$(landlock_abi)" -ge 6 ]; then
		ag_exec -- "$PY" -c '
import os, socket, sys
try:
    os.waitpid(-1, os.WNOHANG)
    print("HAS-CHILD")
except ChildProcessError:
    print("NO-CHILD")
pp = os.getppid()
for p in os.listdir("/proc"):
    try:
        if p.isdigit() and open("/proc/%s/comm" % p).read().strip() == "txfs-sup-helper" \
           and open("/proc/%s/stat" % p).read().rsplit(")", 1)[1].split()[1] == str(pp):
            print("HELPER", p)
    except OSError:
        pass
n = "\0txfs-fast-%d" % os.getpid()
srv = socket.socket(socket.AF_UNIX); srv.bind(n); srv.listen(1)
c = socket.socket(socket.AF_UNIX); c.connect(n); a, _ = srv.accept()
c.sendall(b"ping"); a.sendall(a.recv(4).upper())
print("ABSTRACT", c.recv(4).decode())'
		hpid=$(sed -n 's/^HELPER //p' <<<"$CMDOUT")
		check_eq "[$u] the command has no child (the helper is not its)" NO-CHILD \
			"$(head -n 1 <<<"$CMDOUT")"
		[ -n "$hpid" ] && ok "[$u] the helper ($hpid) is a child of txfs exec" ||
			fail "[$u] no txfs-sup-helper child of txfs exec seen: $CMDOUT"
		check_eq "[$u] the command's own abstract listener: reached" "ABSTRACT PING" \
			"$(grep '^ABSTRACT' <<<"$CMDOUT")"
		if [ -n "$hpid" ] && [ "$(cat "/proc/$hpid/comm" 2>/dev/null)" = txfs-sup-helper ]; then
			fail "[$u] the helper $hpid outlived txfs exec"
		else
			ok "[$u] the helper is gone when txfs exec returns"
		fi
	fi
	for p in "${SERVERS[@]}"; do kill -9 "$p" 2>/dev/null; done
	SERVERS=()
	umount_ws
	check_unmounted "[$u] exec_fast"
}

for_each_user body
finish
