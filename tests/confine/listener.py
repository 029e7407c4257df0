# SPDX-License-Identifier: Apache-2.0
# listener.py PORTFILE COUNTFILE SECONDS - the test listener on 127.0.0.1
# (tests/confine/lib.sh start_listener): a random port, written to PORTFILE
# once bound; the number of accepted connections kept in COUNTFILE; each
# client gets a tiny HTTP answer "hello". Exits after SECONDS.
import os, socket, sys, time
portfile, countfile, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("127.0.0.1", 0))
s.listen(16)
s.settimeout(0.5)
count = 0
open(countfile, "w").write("0")
open(portfile + ".tmp", "w").write(str(s.getsockname()[1]))
os.rename(portfile + ".tmp", portfile)
end = time.time() + seconds
while time.time() < end:
    try:
        c, _ = s.accept()
    except socket.timeout:
        continue
    count += 1
    open(countfile, "w").write(str(count))
    c.settimeout(2)
    # the whole request (a client may write it in pieces): closing with
    # unread bytes would send a reset that can discard the answer
    req = b""
    try:
        while b"\r\n\r\n" not in req:
            b = c.recv(1024)
            if not b:
                break
            req += b
    except OSError:
        pass
    try:
        c.sendall(b"HTTP/1.0 200 OK\r\nContent-Length: 6\r\n\r\nhello\n")
        c.shutdown(socket.SHUT_WR)
        while c.recv(1024):     # until the client closes (or 2 s)
            pass
    except OSError:
        pass
    c.close()
