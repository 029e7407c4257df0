# SPDX-License-Identifier: Apache-2.0
# cmsg_evil.py: sendmsg with hostile cmsg_len values (0, 8, 1 MiB, 4 GiB) in a
# 32-byte control buffer; prints the result and errno of each ("CMSG [...]").
# The supervisor, which copies and rewrites SCM_RIGHTS, must answer as the
# kernel does (EINVAL) and not overrun its buffers.
import ctypes, socket, sys, struct
libc = ctypes.CDLL(None, use_errno=True)
a, b = socket.socketpair()
data = ctypes.create_string_buffer(b"x")
class iovec(ctypes.Structure): _fields_ = [("b", ctypes.c_void_p), ("l", ctypes.c_size_t)]
class msghdr(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("namelen", ctypes.c_uint32), ("iov", ctypes.POINTER(iovec)), ("iovlen", ctypes.c_size_t),
                ("control", ctypes.c_void_p), ("controllen", ctypes.c_size_t), ("flags", ctypes.c_int)]
iov = iovec(ctypes.cast(data, ctypes.c_void_p), 1)
res = []
for clen in (0, 8, 1 << 20, 0xffffffff):
    ctl = ctypes.create_string_buffer(struct.pack("QiI", clen, socket.SOL_SOCKET, socket.SCM_RIGHTS) + b"\0" * 16, 32)
    m = msghdr(None, 0, ctypes.pointer(iov), 1, ctypes.cast(ctl, ctypes.c_void_p), 32, 0)
    r = libc.sendmsg(a.fileno(), ctypes.byref(m), 0)
    res.append((clen, r, ctypes.get_errno()))
print("CMSG", res)
