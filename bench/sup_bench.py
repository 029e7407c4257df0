# SPDX-License-Identifier: Apache-2.0
# sup_bench.py - cost of the txfs run supervisor (cli/sandbox/supervise*.c): run it
# as `txfs run -- python3 bench/sup_bench.py` with this build and with one
# without the supervisor; prints microseconds per call of chmod and utime
# (in /tmp), a blocking unix connect and sendmsg (notified), stat (not
# notified: the baseline), and fork+exec of /bin/true (notified only with
# `exec deny` rules). Run it from a writable folder (it binds b.sock).
import os, socket, sys, time, tempfile, subprocess
N = 10000
def t(label, f, n=N):
    t0 = time.perf_counter()
    for i in range(n): f(i)
    print("%s %.1f us" % (label, (time.perf_counter() - t0) / n * 1e6), end="; ")
fd, p = tempfile.mkstemp(dir="/tmp")
t("chmod", lambda i: os.chmod(p, 0o600 | (i & 1) << 6))
t("utime", lambda i: os.utime(p, (i, i)))
os.unlink(p)
try: os.unlink("b.sock")
except OSError: pass
srv = socket.socket(socket.AF_UNIX); srv.bind("b.sock"); srv.listen(4096)
def conn(i):
    c = socket.socket(socket.AF_UNIX); c.connect("b.sock"); c.close(); srv.accept()[0].close()
t("connect(blocking)", conn)
a, b = socket.socketpair()
def sm(i):
    a.sendmsg([b"x"]); b.recv(1)
t("sendmsg", sm)
t("stat", lambda i: os.stat("."))
t("fork+exec /bin/true", lambda i: subprocess.run(["/bin/true"]), 300)
print()
