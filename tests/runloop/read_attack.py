# SPDX-License-Identifier: Apache-2.0
# read_attack.py TARGET TOKEN [REL] - run confined (txfs run / txfs exec):
# try to read the folder TARGET (the state folder, or a real directory
# mounted elsewhere) in every way we know, and print one line per form:
# "FORM: blocked (ERRNO)" or "FORM: LEAK ..." when the read succeeded and
# gave TOKEN (or listed TARGET's entries). REL: TARGET relative to the
# current folder ("../../s3"), for the ".." form. Exit 0 always.
import errno
import json
import os
import sys

target, token = sys.argv[1], sys.argv[2]
rel = sys.argv[3] if len(sys.argv) > 3 else None
parent, base = os.path.split(target)


def report(form, fn):
    try:
        got = fn()
    except OSError as e:
        print(f"{form}: blocked ({errno.errorcode.get(e.errno, e.errno)})")
        return
    if isinstance(got, bytes) and token.encode() in got:
        print(f"{form}: LEAK {got[:200]!r}")
    elif isinstance(got, list) and got:
        print(f"{form}: LEAK listed {sorted(got)[:10]}")
    else:
        print(f"{form}: blocked (empty)")


def grep(top):
    """Every file below top, read: the token in any of them is a leak."""
    out = b""
    here = os.getcwd()  # the mount: what it shows is the policy's to judge
    for d, _, files in os.walk(top, onerror=lambda e: None):
        if top != "." and os.path.realpath(d).startswith(here):
            continue
        for f in files:
            try:
                with open(os.path.join(d, f), "rb") as h:
                    out += h.read()
            except OSError:
                pass
    if token.encode() in out:
        return out[out.index(token.encode()) - 40:][:200]
    raise OSError(errno.EACCES, "nothing readable")


def read(p):
    with open(p, "rb") as h:
        return h.read()


def dirfd_then(path, then):
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        return then(fd)
    finally:
        os.close(fd)


report("listing by absolute path", lambda: os.listdir(target))
report("grep -r by absolute path", lambda: grep(target))
report("the token file by absolute path", lambda: read(os.path.join(target, "secret-token")))
for link in ("link-in-cwd", "/tmp/" + os.environ.get("LINKNAME", "txfs-read-link")):
    if os.path.islink(link):
        report(f"symlink {link} planted before", lambda: grep(link + "/"))
if rel:
    report(f"'..' from the current folder ({rel})", lambda: grep(rel))
report("openat(parent dirfd, name)",
       lambda: dirfd_then(parent, lambda fd: os.read(
           os.open(base + "/secret-token", os.O_RDONLY, dir_fd=fd), 4096)))
report("openat(\"/\" dirfd, relative path)",
       lambda: dirfd_then("/", lambda fd: os.read(
           os.open(target.lstrip("/") + "/secret-token", os.O_RDONLY, dir_fd=fd), 4096)))
report("/proc/self/fd/N of an opened parent dirfd",
       lambda: dirfd_then(parent, lambda fd: grep(f"/proc/self/fd/{fd}/{base}")))


def opath(then):
    fd = os.open(target, os.O_PATH | os.O_DIRECTORY)
    try:
        return then(fd)
    finally:
        os.close(fd)


report("/proc/self/fd/N of an O_PATH fd on the folder",
       lambda: opath(lambda fd: grep(f"/proc/self/fd/{fd}")))
report("openat(O_PATH fd on the folder, name)",
       lambda: opath(lambda fd: os.read(os.open("secret-token", os.O_RDONLY, dir_fd=fd), 4096)))
outside = {os.getppid(), 1}
try:  # the daemon, from the mount's control folder (when in a mount)
    with open(".txfs/status.json") as h:
        outside.add(int(json.load(h)["pid"]))
except (OSError, ValueError, KeyError):
    pass
for pid in sorted(outside):
    report(f"/proc/{pid}/root{target}", lambda: grep(f"/proc/{pid}/root{target}"))
    report(f"/proc/{pid}/cwd", lambda: grep(f"/proc/{pid}/cwd"))
    report(f"/proc/{pid}/fd/*", lambda: b"".join(
        read(f"/proc/{pid}/fd/{n}") if os.path.isfile(f"/proc/{pid}/fd/{n}") else b""
        for n in os.listdir(f"/proc/{pid}/fd")))
report("a walk of the parent folder", lambda: grep(parent))
report("chdir into the folder", lambda: (os.chdir(target), grep("."))[1])
