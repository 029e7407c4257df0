#!/bin/bash
# The control socket (STATE/ctl.sock) never waits for one client (issue 9,
# point 3): while clients connect and stay silent (or send half a request),
# `txfs status` and `txfs commit` answer within 2 s each, the commit is
# real (the staged file reaches the real directory), and 40 silent clients
# at once do not stop them either. Beyond the daemon's limit (64 clients
# at once) a client is told "busy" at once, never left waiting, and a
# silent client is dropped after 3 s, so the daemon answers again.
. "$(dirname "$0")/lib.sh"
fixture
PY=$(command -v python3) || skip "python3 is needed"
txfs_mount || exit 1
t 10 bash -c 'echo staged > "$MNT/staged.txt"' || fail "write failed"

# silent N SECONDS [PARTIAL]: N clients connect, (send half a request,)
# then stay silent for SECONDS. Started in the background.
silent() {
	timeout -k 2 $(($2 + 5)) "$PY" -c 'import socket, sys, time
n, secs, partial = int(sys.argv[2]), float(sys.argv[3]), sys.argv[4] == "1"
socks = []
for _ in range(n):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[1])
    if partial:
        s.send(b"commit")       # no terminating NULs: never complete
    socks.append(s)
open(sys.argv[5], "w").close()
time.sleep(secs)' "$STATE/ctl.sock" "$1" "$2" "${3:-0}" "$T/ready" &
	SILENT=$!
	for _ in $(seq 100); do [ -e "$T/ready" ] && break; sleep 0.05; done
	rm -f "$T/ready"
}

# quick WHAT CMD...: CMD exits 0 within 2 s.
quick() {
	local what=$1 t0 t1 rc ms
	shift
	t0=$(date +%s%N)
	t 20 "$@" >"$T/q.out" 2>&1
	rc=$?
	t1=$(date +%s%N)
	ms=$(((t1 - t0) / 1000000))
	echo "# $what: ${ms} ms"
	if [ $rc = 0 ] && [ $ms -lt 2000 ]; then ok "$what: answered in ${ms} ms"; else
		fail "$what: expected exit 0 within 2000 ms got exit $rc after ${ms} ms: $(head -c 300 "$T/q.out")"; fi
}

silent 1 15
quick "status with one silent client" "$TXFS" status "$MNT"
silent 1 15 1
quick "status with a client that sent half a request" "$TXFS" status "$MNT"
quick "commit with two silent clients" "$TXFS" commit "$MNT"
check_content "the commit reached the real directory" "$WS/staged.txt" staged
silent 40 15
quick "status with 40 more silent clients" "$TXFS" status "$MNT"
t 10 bash -c 'echo again > "$MNT/again.txt"' || fail "write failed"
quick "rollback with 40 silent clients" "$TXFS" rollback "$MNT"
[ -e "$WS/again.txt" ] && fail "the rollback did not discard again.txt" || ok "the rollback discarded again.txt"
kill "$SILENT" 2>/dev/null
silent 80 15
t 20 "$TXFS" status "$MNT" >"$T/q.out" 2>&1
rc=$?
if [ $rc = 0 ] || grep -q busy "$T/q.out"; then ok "status beyond the limit: answered at once (exit $rc)"; else
	fail "status beyond the limit: expected success or 'busy' got exit $rc: $(head -c 300 "$T/q.out")"; fi
sleep 4
quick "status once the silent clients were dropped (3 s deadline)" "$TXFS" status "$MNT"
txfs_umount || exit 1
rm -f "$WS/staged.txt"	# committed on purpose: back to the fixture
REAL_BEFORE=
snapshot_real
finish
