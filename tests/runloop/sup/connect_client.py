# SPDX-License-Identifier: Apache-2.0
# connect_client.py MODE PATH: connect to the unix socket PATH (@NAME: an
# abstract one) from inside
# `txfs run` and print "CONNECTED <reply>" or "ERRNO <n>". MODE:
#   connect   socket.connect
#   sendto    an AF_UNIX datagram sent by address (sendto)
#   sendmsg   the same through sendmsg
#   race N    N connects through one sockaddr buffer that another thread
#             keeps switching between PATH and a listener inside the
#             workspace (in.sock); prints "RACE inside=I refused=R other=O"
import ctypes, os, socket, struct, sys, threading

mode, path = sys.argv[1], sys.argv[2]
if path.startswith("@"):   # "@name": the abstract socket "\0name"
    path = "\0" + path[1:]


def plain():
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(path)
        s.settimeout(5)
        print("CONNECTED", s.recv(20).decode().strip())
    except OSError as e:
        print("ERRNO", e.errno)


def datagram(use_sendmsg):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        if use_sendmsg:
            s.sendmsg([b"dgram"], [], 0, path)
        else:
            s.sendto(b"dgram", path)
        print("SENT")
    except OSError as e:
        print("ERRNO", e.errno)


def race(n):
    libc = ctypes.CDLL(None, use_errno=True)
    srv = socket.socket(socket.AF_UNIX)
    srv.bind("in.sock")
    srv.listen(128)

    def serve():
        while True:
            try:
                c, _ = srv.accept()
                c.close()
            except OSError:
                return
    threading.Thread(target=serve, daemon=True).start()
    buf = ctypes.create_string_buffer(110)

    def fill(p):
        b = struct.pack("H", socket.AF_UNIX) + p.encode()
        ctypes.memmove(buf, b + b"\0" * (110 - len(b)), 110)
    stop = []

    def flip():
        while not stop:
            fill("in.sock")
            fill(path)
    fill("in.sock")
    threading.Thread(target=flip, daemon=True).start()
    counts = {"inside": 0, "refused": 0, "other": 0}
    for _ in range(n):
        s = socket.socket(socket.AF_UNIX)
        r = libc.connect(s.fileno(), buf, 110)
        e = ctypes.get_errno()
        if r == 0:
            counts["inside"] += 1
        elif e == 13:
            counts["refused"] += 1
        else:
            counts["other"] += 1
        s.close()
    stop.append(1)
    print("RACE inside=%(inside)d refused=%(refused)d other=%(other)d" % counts)


if mode == "connect":
    plain()
elif mode == "sendto":
    datagram(False)
elif mode == "sendmsg":
    datagram(True)
elif mode == "race":
    race(int(sys.argv[3]))
