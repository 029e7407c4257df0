#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sup_threads - issue 22.1: every call the supervisor of `txfs run` handles,
# made from a thread that is not the thread-group leader, gets the answer
# the leader would get (on 6.18 a pidfd of a non-leader thread opened
# without PIDFD_THREAD fails: they all failed with ENOENT, so Bun's worker
# could not connect and libuv's threadpool could not resolve). As root and
# as the unprivileged test user:
#   - tests/tools/threadcalls from a pthread: the 18 metadata calls on a
#     workspace file succeed (committed), on a decoy outside get EACCES and
#     the decoy's mode, owner, times and xattrs are unchanged; the inode
#     flags ioctl in /tmp works, on the decoy gets EACCES; connect (TCP to a
#     listener of ours, unix inside the workspace), sendto, sendmsg and
#     sendmmsg by address work; a unix listener under the decoy home is
#     refused (EACCES) and accepted nothing; exec of an `exec deny` file
#     from a thread is refused, another program runs;
#   - node (libuv's threadpool, worker_threads): dns.lookup with
#     ADDRCONFIG (netlink from a threadpool thread), fetch() from a Worker
#     to an HTTP server of ours on 127.0.0.1, fs.promises.chmod/utimes of a
#     workspace file (threadpool) work, and of the decoy get EACCES;
#   - curl http://localhost:PORT/ (its threaded resolver).
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
command -v setfattr >/dev/null || skip "setfattr (attr) is needed"
mkdir -p "$T/sup" && cp "$(dirname "$0")"/sup/*.py "$T/sup/" && chmod -R a+rX "$T/sup"
NODE=$(command -v node || true)

meta() {
	stat -c '%a %u %g %Y %Z' "$1"
	getfattr -d --absolute-names "$1" 2>/dev/null | grep -v '^#'
	lsattr -d "$1" 2>/dev/null | cut -d' ' -f1
}

# An HTTP server on 127.0.0.1 (random port in $T/http.port) that answers
# "txfs-threads-ok" and counts requests in $T/http.count.
cat >"$T/httpd_threads.py" <<'EOF'
import http.server, sys
port_file, count_file = sys.argv[1], sys.argv[2]
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        with open(count_file, "a") as f:
            f.write("x\n")
        body = b"txfs-threads-ok"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
s = http.server.HTTPServer(("127.0.0.1", 0), H)
with open(port_file + ".tmp", "w") as f:
    f.write(str(s.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
s.timeout = 1
for _ in range(600):
    s.handle_request()
EOF
: >"$T/http.count"
start_bg "$PY" "$T/httpd_threads.py" "$T/http.port" "$T/http.count"
for _ in $(seq 100); do [ -s "$T/http.port" ] && break; sleep 0.1; done
HTTP_PORT=$(cat "$T/http.port" 2>/dev/null)
[ -n "$HTTP_PORT" ] || { fail "the HTTP server on 127.0.0.1 did not start"; finish; }
chmod 666 "$T/http.count"

# calls WHAT EXPECTED-ERRNO NAMES...: each "CALL NAME ERRNO" line of
# $RUN_ERR has the expected errno.
calls() {
	local what=$1 want=$2 n bad=()
	shift 2
	for n in "$@"; do
		grep -qx "CALL $n $want" "$RUN_ERR" && ! grep "^CALL $n " "$RUN_ERR" | qgrep -vx "CALL $n $want" ||
			bad+=("$n:$(grep "^CALL $n " "$RUN_ERR" | cut -d' ' -f3 | tr '\n' ,)")
	done
	if [ ${#bad[@]} = 0 ] && ! grep -q '^CALL .* leader$' "$RUN_ERR"; then
		ok "[$WHO] $what: $# calls from a non-leader thread, errno $want"
	else
		fail "[$WHO] $what: expected errno $want, got ${bad[*]}: $(grep -v 'current directory' "$RUN_ERR" | grep -v '^CALL' | head -c 300)"
	fi
}

META_CALLS=(chmod fchmod fchmodat chown lchown fchown fchownat utime utimes futimesat
	utimensat futimens setxattr lsetxattr fsetxattr removexattr lremovexattr fremovexattr)

body() {
	local before srv_before i out
	ws_fixture
	D=$HOME_DECOY/notes.txt
	setfattr -n user.keep -v 1 "$D" 2>/dev/null || skip "no user xattrs in $T"
	before=$(meta "$D")

	# Unconfined first: the same calls on the decoy work (they mean something).
	cp -p "$D" "$HOME_DECOY/copy.txt"
	out=$(as_run "$THREADCALLS" meta "$HOME_DECOY/copy.txt" | grep -c ' 0$')
	check_eq "[$WHO] unconfined, the 18 calls work from a thread" 18 "$out"

	run_txfs -- --json -- bash -c "\"\$T/bin/threadcalls\" meta a.txt 1>&2
		t=\$(mktemp); \"\$T/bin/threadcalls\" meta \$t 1>&2; rm -f \$t"
	calls "metadata of a workspace file and a /tmp file" 0 "${META_CALLS[@]}"
	check_eq "[$WHO] ... committed (txfs run exit)" 0 "$(jget exit)"

	new_state
	run_txfs -- --json --check false -- bash -c "\"\$T/bin/threadcalls\" meta $D 1>&2"
	calls "metadata of a decoy outside" 13 "${META_CALLS[@]}"
	check_eq "[$WHO] the decoy's mode, owner, times and xattrs are unchanged" "$before" "$(meta "$D")"

	new_state
	run_txfs -- --json --check false -- bash -c "t=\$(mktemp); \"\$T/bin/threadcalls\" ioctl \$t 1>&2; rm -f \$t"
	calls "FS_IOC_SETFLAGS on a /tmp file" 0 FS_IOC_GETFLAGS FS_IOC_SETFLAGS
	new_state
	run_txfs -- --json --check false -- bash -c "\"\$T/bin/threadcalls\" ioctl $D 1>&2"
	calls "FS_IOC_SETFLAGS on the decoy" 13 FS_IOC_SETFLAGS

	new_state
	srv_before=$(wc -l <"$T/http.count")
	run_txfs -- --json --check false -- bash -c "\"\$T/bin/threadcalls\" net $HTTP_PORT in.sock listen 1>&2"
	calls "connect (TCP, unix in the workspace), sendto, sendmsg, sendmmsg" 0 \
		connect-tcp connect-unix sendto sendmsg sendmmsg

	# A unix listener under the decoy home: refused from the thread.
	DEC=$HOME_DECOY/run
	mkdir -p "$DEC" && as_owner "$DEC"
	"${AS[@]}" "$PY" "$T/sup/unix_server.py" "$DEC/srv.sock" "$DEC/count" "$DEC/pid" &
	BG_PIDS+=("$!")
	for i in $(seq 100); do [ -S "$DEC/srv.sock" ] && [ -s "$DEC/pid" ] && break; sleep 0.1; done
	new_state
	run_txfs -- --json --check false -- bash -c "\"\$T/bin/threadcalls\" net $HTTP_PORT $DEC/srv.sock 1>&2"
	calls "connect to a unix listener under the decoy home" 13 connect-unix
	check_eq "[$WHO] ... which accepted nothing" 0 "$(wc -l <"$DEC/count" 2>/dev/null | tr -d ' ')"
	kill -9 "$(cat "$DEC/pid")" 2>/dev/null

	# exec deny by content, the exec made by a thread.
	printf 'exec deny tools/evil.sh\n' >"$T/deny.policy" && chmod 644 "$T/deny.policy"
	new_state
	run_txfs -- --json --check false --policy "$T/deny.policy" -- bash -c \
		"cp tools/evil.sh /tmp/evil-copy-\$\$; \"\$T/bin/threadcalls\" exec /tmp/evil-copy-\$\$ 1>&2;
		 rm -f /tmp/evil-copy-\$\$; \"\$T/bin/threadcalls\" exec tools/good.sh 1>&2"
	calls "exec of a copy of an exec deny file" 13 execve
	if grep -q '^good-ran$' "$RUN_ERR" && ! grep -q '^evil-ran$' "$RUN_ERR"; then
		ok "[$WHO] exec from a thread: the allowed program ran, the denied one did not"
	else
		fail "[$WHO] exec from a thread: $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi

	# curl resolves in a thread of its own (threaded resolver)
	if command -v curl >/dev/null; then
		new_state
		run_txfs -- --json -- bash -c "curl -s --max-time 20 http://localhost:$HTTP_PORT/ 1>&2"
		check_eq "[$WHO] curl http://localhost:PORT/ (resolved in curl's thread)" \
			txfs-threads-ok "$(grep -o 'txfs-threads-ok' "$RUN_ERR")"
	fi

	[ -n "$NODE" ] || return 0
	cat >"$T/threads.js" <<'EOF'
const dns = require("dns"), fs = require("fs"), { Worker } = require("worker_threads");
const [port, decoy] = process.argv.slice(2);
const out = [];
const step = (name, p) => p.then(() => out.push(name + " ok"),
	(e) => out.push(name + " " + (e.code || e.message)));
(async () => {
	await step("lookup", new Promise((res, rej) => dns.lookup("localhost",
		{ hints: dns.ADDRCONFIG }, (e, a) => e ? rej(e) : res(a))));
	await step("chmod", fs.promises.chmod("a.txt", 0o640));
	await step("utimes", fs.promises.utimes("a.txt", 5, 5));
	await step("chmod-decoy", fs.promises.chmod(decoy, 0o777));
	await step("utimes-decoy", fs.promises.utimes(decoy, 1, 1));
	await step("worker-fetch", new Promise((res, rej) => {
		const w = new Worker(`
			const { parentPort, workerData } = require("worker_threads");
			fetch("http://127.0.0.1:" + workerData + "/").then((r) => r.text())
				.then((t) => parentPort.postMessage(t), (e) => parentPort.postMessage("ERR " + (e.cause ? e.cause.code : e.message)));`,
			{ eval: true, workerData: port });
		w.on("message", (m) => m === "txfs-threads-ok" ? res() : rej(new Error(m)));
		w.on("error", rej);
	}));
	await step("fetch", fetch("http://127.0.0.1:" + port + "/").then((r) => r.text())
		.then((t) => { if (t !== "txfs-threads-ok") throw new Error(t); }));
	console.error(out.join("\n"));
})();
EOF
	chmod 644 "$T/threads.js"
	new_state
	srv_before=$(wc -l <"$T/http.count")
	RUN_SECS=90 run_txfs -- --json -- timeout 60 "$NODE" "$T/threads.js" "$HTTP_PORT" "$D"
	local want="lookup ok
chmod ok
utimes ok
chmod-decoy EACCES
utimes-decoy EACCES
worker-fetch ok
fetch ok"
	check_eq "[$WHO] node: dns.lookup, fs in the threadpool, fetch from a Worker" "$want" \
		"$(grep -E '^(lookup|chmod|utimes|worker-fetch|fetch)' "$RUN_ERR")"
	check_eq "[$WHO] node: the HTTP server got both requests" $((srv_before + 2)) "$(wc -l <"$T/http.count")"
	check_eq "[$WHO] node: a.txt's mode and mtime committed" "640 5" "$(stat -c '%a %Y' "$WS/a.txt")"
	check_eq "[$WHO] node: the decoy is unchanged" "$before" "$(meta "$D")"
}

for_each_user body
finish
