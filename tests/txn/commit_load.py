#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""commit_load.py MNT MODELDIR COMMITS - files kept open through a loop of
commits (tests/txn/open_files_commit_load.sh).

While COMMITS commits are written to MNT/.txfs/ctl (one every 0.2 s), these
run in threads, each on its own file and each keeping an exact model of
what its file must hold:
  writer wN     64 KiB blocks by write(2) over a 1 MiB ring, through one fd
                kept open; every 7th round it closes and reopens by path
  grower gN     a file created after the start, appended to through its fd
  mapper mN     a 256 KiB MAP_SHARED mapping, one page changed and msync'ed
                a round; remapped (new fd) every 11th round
  reader        reads every file by path and through kept fds, fstat too
Every error is fatal to its thread and reported (op, file, errno name).
At the end each thread writes its model to MODELDIR/NAME; the caller
commits once more and compares the real files with the models byte for
byte. Prints "commits OK/N", one "ERR ..." line per error, "ops N".
"""
import errno
import mmap
import os
import sys
import threading
import time

MNT, MODELS, COMMITS = sys.argv[1], sys.argv[2], int(sys.argv[3])
BLK = 65536
RING = 16
MAPSZ = 256 * 1024
PAGE = mmap.PAGESIZE
stop = threading.Event()
errors = []
ops = [0]
lock = threading.Lock()


def err(who, op, e):
    name = errno.errorcode.get(getattr(e, "errno", 0) or 0, repr(e))
    with lock:
        errors.append("ERR %s %s: %s" % (who, op, name))
    stop.set()


def save(name, data):
    with open(os.path.join(MODELS, name), "wb") as f:
        f.write(data)


def block(tag, n):
    unit = ("%s:%08d:" % (tag, n)).encode()
    return (unit * (BLK // len(unit) + 1))[:BLK]


def writer(name):
    path = os.path.join(MNT, name)
    model = bytearray(RING * BLK)
    op = "open"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.write(fd, bytes(model))
        n = 0
        while not stop.is_set():
            b = n % RING
            data = block(name, n)
            op = "pwrite"
            os.pwrite(fd, data, b * BLK)
            model[b * BLK:(b + 1) * BLK] = data
            op = "pread"
            if os.pread(fd, BLK, b * BLK) != data:
                raise OSError(0, "read back differs")
            n += 1
            ops[0] += 1
            if n % 7 == 0:
                op = "close"
                os.close(fd)
                op = "reopen"
                fd = os.open(path, os.O_RDWR)
        op = "close"
        os.close(fd)
    except OSError as e:
        err(name, op, e)
    save(name, bytes(model))


def grower(name):
    op = "create"
    model = bytearray()
    try:
        stop.wait(1.0)	# born after some commits, in a later transaction
        fd = os.open(os.path.join(MNT, name), os.O_WRONLY | os.O_CREAT, 0o644)
        n = 0
        while not stop.is_set() and len(model) < 64 * BLK:
            data = block(name, n)[:4096 + n % 3000]
            op = "append"
            if os.write(fd, data) != len(data):
                raise OSError(0, "short write")
            model += data
            n += 1
            ops[0] += 1
            time.sleep(0.01)
        os.close(fd)
    except OSError as e:
        err(name, op, e)
    save(name, bytes(model))


def mapper(name):
    path = os.path.join(MNT, name)
    model = bytearray(MAPSZ)
    op = "open"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o644)
        os.ftruncate(fd, MAPSZ)
        m = mmap.mmap(fd, MAPSZ, mmap.MAP_SHARED)
        n = 0
        while not stop.is_set():
            p = (n * 5) % (MAPSZ // PAGE)
            data = block(name, n)[:PAGE]
            op = "store"
            m[p * PAGE:(p + 1) * PAGE] = data
            model[p * PAGE:(p + 1) * PAGE] = data
            op = "msync"
            m.flush(p * PAGE, PAGE)
            if m[p * PAGE:(p + 1) * PAGE] != data:
                raise OSError(0, "mapping reads back other bytes")
            n += 1
            ops[0] += 1
            if n % 11 == 0:
                op = "remap"
                m.close()
                os.close(fd)
                fd = os.open(path, os.O_RDWR)
                m = mmap.mmap(fd, MAPSZ, mmap.MAP_SHARED)
                if m[:] != bytes(model):
                    raise OSError(0, "a new mapping shows other bytes")
            time.sleep(0.005)
        m.flush()
        m.close()
        os.close(fd)
    except (OSError, ValueError) as e:
        err(name, op, e)
    save(name, bytes(model))


def reader(names):
    fds = {}
    op = "open"
    try:
        while not stop.is_set():
            for name in names:
                path = os.path.join(MNT, name)
                if name not in fds:
                    try:
                        op = "open " + name
                        fds[name] = os.open(path, os.O_RDONLY)
                    except FileNotFoundError:
                        continue
                op = "fstat " + name
                size = os.fstat(fds[name]).st_size
                op = "pread " + name
                os.pread(fds[name], BLK, (ops[0] * BLK) % max(size, 1))
                op = "read by path " + name
                with open(path, "rb") as f:
                    f.read(BLK)
                ops[0] += 1
            time.sleep(0.01)
        for fd in fds.values():
            os.close(fd)
    except OSError as e:
        err("reader", op, e)


def main():
    names = ["w0", "w1", "m0", "m1", "g0", "g1"]
    ths = [threading.Thread(target=writer, args=(n,)) for n in ("w0", "w1")]
    ths += [threading.Thread(target=mapper, args=(n,)) for n in ("m0", "m1")]
    ths += [threading.Thread(target=grower, args=(n,)) for n in ("g0", "g1")]
    ths += [threading.Thread(target=reader, args=(names,))]
    for t in ths:
        t.start()
    ok = 0
    for i in range(COMMITS):
        if stop.is_set():
            break
        time.sleep(0.2)
        try:
            fd = os.open(os.path.join(MNT, ".txfs/ctl"), os.O_WRONLY | os.O_TRUNC)
            try:
                os.write(fd, b"commit\n")
                ok += 1
            finally:
                os.close(fd)
        except OSError as e:
            err("committer", "commit %d" % (i + 1), e)
    stop.set()
    for t in ths:
        t.join()
    print("commits %d/%d" % (ok, COMMITS))
    for e in errors:
        print(e)
    print("ops %d" % ops[0])


main()
