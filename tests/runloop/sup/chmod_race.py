# SPDX-License-Identifier: Apache-2.0
# chmod_race.py OUTSIDE N: N chmod(2) calls through one path buffer that
# another thread keeps switching between OUTSIDE and a file in the current
# folder (inside.txt); prints "RACE inside=I refused=R other=O".
import ctypes, os, sys, threading

libc = ctypes.CDLL(None, use_errno=True)
outside, n = sys.argv[1].encode(), int(sys.argv[2])
open("inside.txt", "w").close()
buf = ctypes.create_string_buffer(4096)
stop = []


def fill(p):
    ctypes.memmove(buf, p + b"\0", len(p) + 1)


def flip():
    while not stop:
        fill(b"inside.txt")
        fill(outside)


fill(b"inside.txt")
threading.Thread(target=flip, daemon=True).start()
counts = {"inside": 0, "refused": 0, "other": 0}
for i in range(n):
    r = libc.chmod(buf, 0o777 if i & 1 else 0o666)
    e = ctypes.get_errno()
    counts["inside" if r == 0 else "refused" if e == 13 else "other"] += 1
stop.append(1)
print("RACE inside=%(inside)d refused=%(refused)d other=%(other)d" % counts)
