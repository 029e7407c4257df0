#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""userns.py CMD ARGS... - run CMD as root of a new user namespace that
maps uids and gids 0-65535 onto themselves (run as real root).

ci.sh's reference run of pjdfstest: in such a namespace root keeps its
powers over files of every mapped owner, but mknod of a block or
character device is refused with EPERM (it needs CAP_MKNOD in the initial
namespace), which is what txfs does. Exit status: CMD's.
"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
r, w = os.pipe(); r2, w2 = os.pipe()
pid = os.fork()
if pid == 0:
    if libc.unshare(0x10000000) != 0:      # CLONE_NEWUSER
        os._exit(99)
    os.write(w, b'x'); os.read(r2, 1)
    os.setresgid(0, 0, 0); os.setresuid(0, 0, 0)
    os.execvp(sys.argv[1], sys.argv[1:])
os.read(r, 1)
for f, m in (('uid_map', '0 0 65536'), ('gid_map', '0 0 65536')):
    with open('/proc/%d/%s' % (pid, f), 'w') as fh:
        fh.write(m + '\n')
os.write(w2, b'x')
_, st = os.waitpid(pid, 0)
sys.exit(os.waitstatus_to_exitcode(st))
