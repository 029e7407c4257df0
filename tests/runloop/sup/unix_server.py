# SPDX-License-Identifier: Apache-2.0
# unix_server.py PATH COUNTFILE PIDFILE: a unix socket listener (PATH, or
# @NAME for an abstract one) for
# the supervisor scenarios. Answers "SERVER\n" to every connection and
# appends one line to COUNTFILE per accepted connection; exits by itself
# after 150 s (the scenario also kills it by the pid in PIDFILE).
import os, socket, sys, time

path, count, pidfile = sys.argv[1:4]
with open(pidfile, "w") as f:
    f.write(str(os.getpid()))
abstract = path.startswith("@")   # "@name": the abstract socket "\0name"
if abstract:
    path = "\0" + path[1:]
else:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
s = socket.socket(socket.AF_UNIX)
s.bind(path)
if not abstract:
    os.chmod(path, 0o777)
s.listen(128)
s.settimeout(1)
end = time.time() + 150
open(count, "a").close()
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    with open(count, "a") as f:
        f.write("x\n")
    try:
        c.sendall(b"SERVER\n")
    except OSError:
        pass
    c.close()
