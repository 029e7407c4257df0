# SPDX-License-Identifier: Apache-2.0
# mmsg_client.py [PATH]: sendmmsg(2) through ctypes (python has no wrapper).
# Without PATH: two datagrams on a connected AF_UNIX datagram socketpair;
# prints "MMSG n=<sent> len=<msg_len 0>,<msg_len 1> got=<received>".
# With PATH: one datagram sent by address to PATH; prints "MMSG n=.." or
# "ERRNO <n>".
import ctypes, socket, sys

libc = ctypes.CDLL(None, use_errno=True)


class iovec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32),
                ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t),
                ("flags", ctypes.c_int)]


class mmsghdr(ctypes.Structure):
    _fields_ = [("hdr", msghdr), ("len", ctypes.c_uint)]


bufs = [ctypes.create_string_buffer(b"first"), ctypes.create_string_buffer(b"second!")]
iovs = [iovec(ctypes.cast(b, ctypes.c_void_p), len(b.value)) for b in bufs]
vec = (mmsghdr * 2)()
for i in range(2):
    vec[i].hdr.iov = ctypes.pointer(iovs[i])
    vec[i].hdr.iovlen = 1
if len(sys.argv) > 1:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    p = sys.argv[1].encode()
    addr = ctypes.create_string_buffer(b"\1\0" + p + b"\0", 110)
    vec[0].hdr.name = ctypes.cast(addr, ctypes.c_void_p)
    vec[0].hdr.namelen = 2 + len(p) + 1
    n = libc.sendmmsg(s.fileno(), vec, 1, 0)
    print("MMSG n=%d" % n if n >= 0 else "ERRNO %d" % ctypes.get_errno())
    sys.exit(0)
a, b = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
n = libc.sendmmsg(a.fileno(), vec, 2, 0)
got = [b.recv(20).decode() for _ in range(max(n, 0))]
print("MMSG n=%d len=%d,%d got=%s errno=%d" % (n, vec[0].len, vec[1].len, ",".join(got),
                                              ctypes.get_errno()))
