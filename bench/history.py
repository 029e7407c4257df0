#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""bench/history.py - what keeping history costs a commit, and what an undo
costs (issue 25), in the same rounds, interleaved:

  W5  4 KiB written into a 1 GiB real file, commit (an in-place patch)
  W8  5,000 new files in 250 folders (4 KiB each), commit
  W9  rm -rf of N real files (default 100,000, 1,000 folders), commit
  and `txfs undo` of the W8 and W9 commits (the workspace unmounted).

Each commit is timed twice a round: with history (the default) and with
-o nohistory, in alternating order (round 1 with history first). Wall time of `txfs commit` and the CPU of the daemon (utime +
stime of its /proc/PID/stat, before and after) plus the client's. Prints a
markdown table, with the load average before and after.

With --compare OTHER/cli/txfs, every round runs the same pairs with a
second binary too (which binary goes first alternates with the rounds),
and the table has a row per binary: two builds measured in the same
minutes, under the same load.

usage: sudo bench/history.py --txfs BUILD/cli/txfs [--rounds 3]
                             [--compare OTHER/cli/txfs] [--loop]
                             [--files 100000] [--workdir /var/tmp/txfs-hbench]
"""
import argparse
import ctypes
import os
import shutil
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def sh(*cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True,
                       timeout=kw.pop("timeout", 600), **kw)
    if r.returncode:
        sys.exit(f"bench/history.py: {cmd[0]} {cmd[1]} failed ({r.returncode}): "
                 f"{r.stderr.strip()[:500]}")
    return r


def daemon_cpu(state):
    try:
        pid = int(open(os.path.join(state, "daemon.pid")).read().strip())
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / TICK
    except (OSError, ValueError, IndexError):
        return 0.0


LIBC = ctypes.CDLL(None, use_errno=True)


def syncfs(path):
    """syncfs(2) of path's file system only (never a global sync)"""
    fd = os.open(path, os.O_RDONLY)
    try:
        LIBC.syncfs(fd)
    finally:
        os.close(fd)


class Bench:
    def __init__(self, args):
        self.txfs = args.txfs
        self.work = args.workdir
        self.files = args.files
        self.loop = args.loop

    def fresh(self, name):
        """base/ws and base/state, empty. With --loop, base is a new ext4
        of its own (a sparse image, loop-mounted): ext4 does not hand out
        an inode freed in the last 60 s while its inode table block is
        cached, and looks for another one (recently_deleted(), kernel
        find_inode_bit): creating 5,000 files right after a round deleted
        as many took 3.5 s of CPU in that scan instead of 1 s in all
        (perf, 2026-11-27). A new file system has no such inodes."""
        base = os.path.join(self.work, name)
        if os.path.exists(base):
            subprocess.run(["fusermount3", "-uz", base + "/ws"],
                           capture_output=True)
            if self.loop:
                sh("umount", base)
                os.unlink(base + ".img")
            else:
                shutil.rmtree(base)
        os.makedirs(base, exist_ok=True)
        if self.loop:
            with open(base + ".img", "wb") as f:
                f.truncate(4 << 30)
            sh("mkfs.ext4", "-q", "-F", "-N", str(max(65536, 3 * self.files)),
               base + ".img")
            sh("mount", "-o", "loop", base + ".img", base)
        os.makedirs(base + "/ws")
        return base + "/ws", base + "/state"

    def cleanup(self):
        for name in ("w5", "w8", "w9"):
            base = os.path.join(self.work, name)
            subprocess.run(["fusermount3", "-uz", base + "/ws"],
                           capture_output=True)
            if self.loop and os.path.exists(base + ".img"):
                subprocess.run(["umount", base], capture_output=True)

    def mount(self, ws, state, history):
        """a rules-free policy: W9 deletes past the default guard's limit"""
        opts = [] if history else ["-o", "nohistory"]
        pol = os.path.join(self.work, "empty.policy")
        open(pol, "w").close()
        sh(self.txfs, "mount", "--state", state, "--policy", pol, *opts, ws)

    def commit(self, ws, state):
        """(wall s, CPU s of the daemon + the txfs commit client) of
        `txfs commit`, then unmount"""
        syncfs(os.path.dirname(ws))
        c0 = daemon_cpu(state)
        r0 = os.times()
        t0 = time.perf_counter()
        sh(self.txfs, "commit", ws)
        wall = time.perf_counter() - t0
        r1 = os.times()
        cpu = daemon_cpu(state) - c0 + (r1.children_user - r0.children_user +
                                        r1.children_system - r0.children_system)
        sh(self.txfs, "umount", ws)
        return wall, cpu

    def undo(self, ws, state):
        syncfs(os.path.dirname(ws))
        r0 = os.times()
        t0 = time.perf_counter()
        sh(self.txfs, "undo", "--state", state, ws)
        wall = time.perf_counter() - t0
        r1 = os.times()
        return wall, (r1.children_user - r0.children_user +
                      r1.children_system - r0.children_system)

    def w5(self, history):
        ws, state = self.fresh("w5")
        with open(ws + "/big", "wb") as f:
            f.truncate(1 << 30)
            for off in range(0, 1 << 30, 1 << 20):	# real data, not a hole
                f.seek(off)
                f.write(b"x" * 4096)
        self.mount(ws, state, history)
        with open(ws + "/big", "r+b") as f:
            f.seek(512 << 20)
            f.write(os.urandom(4096))
        return self.commit(ws, state), None

    def w8(self, history):
        ws, state = self.fresh("w8")
        self.mount(ws, state, history)
        data = os.urandom(4096)
        for d in range(250):
            os.mkdir(f"{ws}/d{d}")
            for i in range(20):
                with open(f"{ws}/d{d}/f{i}", "wb") as f:
                    f.write(data)
        c = self.commit(ws, state)
        return c, self.undo(ws, state) if history else None

    def w9(self, history):
        ws, state = self.fresh("w9")
        per = max(1, self.files // 1000)
        for d in range(1000):
            os.mkdir(f"{ws}/d{d}")
            for i in range(per):
                open(f"{ws}/d{d}/f{i}", "wb").close()
        self.mount(ws, state, history)
        sh("rm", "-rf", *[f"{ws}/d{d}" for d in range(1000)], timeout=1800)
        c = self.commit(ws, state)
        return c, self.undo(ws, state) if history else None


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--txfs", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--files", type=int, default=100000)
    ap.add_argument("--workdir", default="/var/tmp/txfs-hbench")
    ap.add_argument("--only", default="W5,W8,W9")
    ap.add_argument("--compare", default=None,
                    help="a second txfs binary, measured in the same rounds")
    ap.add_argument("--loop", action="store_true",
                    help="each measurement on a new loop-mounted ext4 "
                         "(see Bench.fresh)")
    args = ap.parse_args()
    b = Bench(args)
    bins = [args.txfs] + ([args.compare] if args.compare else [])
    os.makedirs(args.workdir, exist_ok=True)
    rows = {}
    load0 = os.getloadavg()
    try:
        for r in range(args.rounds):
          for binary in (bins if r % 2 == 0 else bins[::-1]):
            b.txfs = binary
            for w in args.only.split(","):
                # alternate which goes first: the second of a pair pays
                # for the first one's writeback (W8 without history looked
                # slower than with it when it always ran second)
                for hist in ((True, False) if r % 2 == 0 else (False, True)):
                    (cw, cc), u = getattr(b, w.lower())(hist)
                    key = (binary, w, hist)
                    rows.setdefault(key, {"cw": [], "cc": [], "uw": [], "uc": []})
                    rows[key]["cw"].append(cw)
                    rows[key]["cc"].append(cc)
                    if u:
                        rows[key]["uw"].append(u[0])
                        rows[key]["uc"].append(u[1])
                    print(f"round {r + 1} {binary} {w} history={hist} (load "
                          f"{os.getloadavg()[0]:.1f}): commit {cw:.3f} s "
                          f"(CPU {cc:.2f} s)" +
                          (f", undo {u[0]:.3f} s (CPU {u[1]:.2f} s)" if u else ""),
                          file=sys.stderr)
    finally:
        b.cleanup()
        shutil.rmtree(args.workdir, ignore_errors=True)
    print(f"| binary | workload | commit, no history | commit, history | "
          f"ratio | + ms | ratio, median of rounds | undo | undo / commit |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for binary, w in ((x, y) for x in bins for y in args.only.split(",")):
        off, on = rows[(binary, w, False)], rows[(binary, w, True)]
        c0, c1 = median(off["cw"]), median(on["cw"])
        uw = median(on["uw"]) if on["uw"] else None
        print(f"| {binary} | {w} | {c0:.4f} s (CPU {median(off['cc']):.3f}) | "
              f"{c1:.4f} s (CPU {median(on['cc']):.3f}) | {c1 / c0:.2f}x | "
              f"{(c1 - c0) * 1000:+.1f} | "
              f"{median([y / x for x, y in zip(off['cw'], on['cw'])]):.2f}x | " +
              (f"{uw:.3f} s (CPU {median(on['uc']):.2f}) | {uw / c1:.2f}x |"
               if uw is not None else "- | - |"))
    load1 = os.getloadavg()
    print(f"\nmedians of {args.rounds} rounds; W9 with {args.files} files; "
          f"{'a new loop ext4 for each measurement; ' if args.loop else ''}"
          f"load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}, "
          f"after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")


if __name__ == "__main__":
    main()
