#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""pyop - one file-system trick per invocation, for the policy scenarios.

Usage: pyop.py OP ARGS...
Prints "ok" (exit 0) when every call of the trick succeeded, else the
errno name of the call that failed and what it was, as "ENAME: call"
(exit 1). Usage errors exit 2.

  open PATH FLAGS             FLAGS: comma list of r w rw creat excl trunc
                              append dir nofollow (open(2) only)
  write PATH DATA             open O_WRONLY, write DATA
  openat DIR NAME FLAGS [DATA] open DIR (O_PATH|O_DIRECTORY), openat NAME;
                              with DATA, write it
  truncate PATH LEN           truncate(2) by path
  ftruncate PATH LEN          open O_WRONLY, ftruncate
  procfd PATH [DATA]          open O_RDONLY, then reopen /proc/self/fd/N
                              O_WRONLY and write DATA
  fallocate PATH MODE LEN     open O_RDWR (MODE rw) or O_RDONLY (MODE ro),
                              fallocate(0, 0, LEN)
  punch PATH                  open O_RDWR, FALLOC_FL_PUNCH_HOLE|KEEP_SIZE 0..4096
  cfr SRC DST MODE            copy_file_range SRC -> DST; DST opened O_WRONLY
                              (MODE rw) or O_RDONLY (MODE ro)
  mmap PATH MODE DATA         open O_RDONLY (MODE ro) or O_RDWR (MODE rw),
                              mmap PROT_READ|PROT_WRITE MAP_SHARED, write DATA
                              at 0, msync
  rename2 A B FLAG            renameat2 with FLAG exchange|noreplace|none
  tmpfile DIR [NAME]          open(DIR, O_TMPFILE|O_RDWR), write, and with
                              NAME linkat(/proc/self/fd/N, NAME)
  link A B | symlink T B | mkdir P | rmdir P | unlink P | rename A B
  chmod P MODE(octal) | chown P UID GID | setxattr P NAME VALUE |
  removexattr P NAME | utime P | stat P | lstat P | listdir P | read P
"""
import ctypes
import errno
import mmap
import os
import sys

libc = ctypes.CDLL(None, use_errno=True)


def linkat_follow(src, dst):
    """linkat(AT_FDCWD, src, AT_FDCWD, dst, AT_SYMLINK_FOLLOW): python's
    os.link calls link(2), which does not follow /proc/self/fd/N (EXDEV)."""
    if libc.linkat(-100, os.fsencode(src), -100, os.fsencode(dst), 0x400) < 0:
        e = ctypes.get_errno()
        raise OSError(e, os.strerror(e))
AT_FDCWD = -100
RENAME_NOREPLACE = 1
RENAME_EXCHANGE = 2
FALLOC_FL_KEEP_SIZE = 1
FALLOC_FL_PUNCH_HOLE = 2


class Fail(Exception):
    def __init__(self, err, what):
        super().__init__(what)
        self.err = err
        self.what = what


def call(what, fn, *a, **kw):
    try:
        return fn(*a, **kw)
    except OSError as e:
        raise Fail(e.errno, what)


def cerr(what, rc):
    if rc < 0:
        raise Fail(ctypes.get_errno(), what)
    return rc


FLAGS = {"r": os.O_RDONLY, "w": os.O_WRONLY, "rw": os.O_RDWR,
         "creat": os.O_CREAT, "excl": os.O_EXCL, "trunc": os.O_TRUNC,
         "append": os.O_APPEND, "dir": os.O_DIRECTORY,
         "nofollow": os.O_NOFOLLOW}


def flags_of(s):
    f = 0
    for w in s.split(","):
        f |= FLAGS[w]
    return f


def op(argv):
    o, a = argv[0], argv[1:]
    if o == "open":
        fd = call("open", os.open, a[0], flags_of(a[1]), 0o644)
        os.close(fd)
    elif o == "write":
        fd = call("open", os.open, a[0], os.O_WRONLY)
        call("write", os.write, fd, a[1].encode())
        os.close(fd)
    elif o == "read":
        fd = call("open", os.open, a[0], os.O_RDONLY)
        data = call("read", os.read, fd, 1 << 20)
        os.close(fd)
        sys.stdout.write(data.decode(errors="replace"))
    elif o == "openat":
        dfd = call("open dir", os.open, a[0], os.O_PATH | os.O_DIRECTORY)
        fd = call("openat", os.open, a[1], flags_of(a[2]), 0o644, dir_fd=dfd)
        if len(a) > 3:
            call("write", os.write, fd, a[3].encode())
        os.close(fd)
        os.close(dfd)
    elif o == "truncate":
        call("truncate", os.truncate, a[0], int(a[1]))
    elif o == "ftruncate":
        fd = call("open", os.open, a[0], os.O_WRONLY)
        call("ftruncate", os.ftruncate, fd, int(a[1]))
        os.close(fd)
    elif o == "procfd":
        fd = call("open", os.open, a[0], os.O_RDONLY)
        fd2 = call("reopen", os.open, f"/proc/self/fd/{fd}", os.O_WRONLY)
        call("write", os.write, fd2, (a[1] if len(a) > 1 else "X").encode())
        os.close(fd2)
        os.close(fd)
    elif o == "fallocate":
        fd = call("open", os.open, a[0], os.O_RDWR if a[1] == "rw" else os.O_RDONLY)
        cerr("fallocate", libc.fallocate(fd, 0, ctypes.c_long(0), ctypes.c_long(int(a[2]))))
        os.close(fd)
    elif o == "punch":
        fd = call("open", os.open, a[0], os.O_RDWR)
        cerr("fallocate", libc.fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                         ctypes.c_long(0), ctypes.c_long(4096)))
        os.close(fd)
    elif o == "cfr":
        s = call("open src", os.open, a[0], os.O_RDONLY)
        d = call("open dst", os.open, a[1], os.O_WRONLY if a[2] == "rw" else os.O_RDONLY)
        n = os.fstat(s).st_size
        call("copy_file_range", os.copy_file_range, s, d, max(n, 1), 0, 0)
        os.close(s)
        os.close(d)
    elif o == "mmap":
        fd = call("open", os.open, a[0], os.O_RDWR if a[1] == "rw" else os.O_RDONLY)
        size = os.fstat(fd).st_size
        m = call("mmap", mmap.mmap, fd, size, mmap.MAP_SHARED,
                 mmap.PROT_READ | mmap.PROT_WRITE)
        data = a[2].encode()[:size]
        m[0:len(data)] = data
        call("msync", m.flush)
        m.close()
        os.close(fd)
    elif o == "rename2":
        fl = {"exchange": RENAME_EXCHANGE, "noreplace": RENAME_NOREPLACE, "none": 0}[a[2]]
        cerr("renameat2", libc.renameat2(AT_FDCWD, a[0].encode(), AT_FDCWD,
                                         a[1].encode(), ctypes.c_uint(fl)))
    elif o == "tmpfile":
        fd = call("open O_TMPFILE", os.open, a[0], os.O_TMPFILE | os.O_RDWR, 0o644)
        call("write", os.write, fd, b"tmpfile-data\n")
        if len(a) > 1:
            call("linkat", linkat_follow, f"/proc/self/fd/{fd}", a[1])
        os.close(fd)
    elif o == "link":
        call("link", os.link, a[0], a[1], follow_symlinks=False)
    elif o == "symlink":
        call("symlink", os.symlink, a[0], a[1])
    elif o == "mkdir":
        call("mkdir", os.mkdir, a[0])
    elif o == "rmdir":
        call("rmdir", os.rmdir, a[0])
    elif o == "unlink":
        call("unlink", os.unlink, a[0])
    elif o == "rename":
        call("rename", os.rename, a[0], a[1])
    elif o == "chmod":
        call("chmod", os.chmod, a[0], int(a[1], 8))
    elif o == "chown":
        call("chown", os.chown, a[0], int(a[1]), int(a[2]))
    elif o == "setxattr":
        call("setxattr", os.setxattr, a[0], a[1], a[2].encode())
    elif o == "removexattr":
        call("removexattr", os.removexattr, a[0], a[1])
    elif o == "utime":
        call("utime", os.utime, a[0], None)
    elif o == "stat":
        call("stat", os.stat, a[0])
    elif o == "lstat":
        call("lstat", os.lstat, a[0])
    elif o == "listdir":
        names = call("listdir", os.listdir, a[0])
        sys.stdout.write("".join(n + "\n" for n in sorted(names)))
        return
    else:
        print(f"pyop: unknown op {o}", file=sys.stderr)
        sys.exit(2)
    print("ok")


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    try:
        op(sys.argv[1:])
    except Fail as e:
        name = "EOPNOTSUPP" if e.err == errno.EOPNOTSUPP else \
            errno.errorcode.get(e.err, "E%d" % e.err)
        print(f"{name}: {e.what}")
        sys.exit(1)
    except (IndexError, KeyError, ValueError):
        print(__doc__, file=sys.stderr)
        sys.exit(2)


main()
