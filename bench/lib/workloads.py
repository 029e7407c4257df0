# SPDX-License-Identifier: Apache-2.0
"""W1-W8 and the daemon memory rows.

Each workload declares its table, then runs rounds; in every round it visits
the peers in the same order (A B C D E, A B C D E, ...), each freshly
mounted over its own real directory, so that ratios to native can be taken
within a round. A peer that fails in a round gets "fails: why" in the rows
it had not filled yet; a peer that is not available gets "n/a (why)".
"""
import errno
import json
import os
import resource
import subprocess
import time

import env
from results import DASH, Mark, fail, na
from util import (BenchError, drop_caches, du_bytes, errname, log, rmtree,
                  run, syncfs, timed, vm_hwm_kib, vm_status_kib, watchdog)

NOT_IMPLEMENTED = {errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP,
                   errno.ENOTTY, errno.ENOENT}
RATIO_CAPTION = ("{rounds} rounds, peers interleaved round by round. "
                 "Native: median (min-max) of the absolute value; other "
                 "peers: ratio to native in the same round, median "
                 "(min-max). Lower is better.")
ABS_CAPTION = ("{rounds} rounds, peers interleaved round by round; "
               "absolute values, median (min-max). Lower is better.")


W6_NOTE = ("txfs runs with its default policy: the files are made in "
           "the transaction, so unlinking them is no loss for the "
           "mass-deletion guard (`limit deletes 1000` counts losses of "
           "real data only).")
W7_NOTE = ("txfs runs with its default policy except for one line: "
           "`rm -rf` of the tree removes 5,4xx files of the real directory, "
           "5,4xx losses that the default `limit deletes 1000` refuses past "
           "1,000 by design; so this workload alone raises it to "
           "`limit deletes 1000000` (bench/lib/env.py, derive_policy).")


def _size(n):
    return f"{n >> 30} GiB" if n >= 1 << 30 else f"{n >> 20} MiB"


RSS_NOTE = ("VmHWM also counts the file pages of a memory-mapped database "
            "that the daemon touched (txfs's LMDB layer): those are page "
            "cache the kernel can reclaim; RssAnon is the daemon's own "
            "anonymous memory at the same moment.")


def wdir(ctx, wl, peer):
    """A fresh, empty real directory for one peer in one workload."""
    d = os.path.join(ctx.fs, "real", f"{wl}-{peer.name}")
    if os.path.lexists(d):
        rmtree(d)
    os.makedirs(d)
    return d


STEP_LIMIT = {"W3": 4 * 3600}   # seconds for one peer's round; else 1800


def each_round(ctx, R, peers, keys, rounds, wl, body):
    for rnd in range(rounds):
        log(f"{wl} round {rnd + 1}/{rounds}")
        for p in peers:
            if wl not in getattr(p, "workloads", {wl}):
                continue
            why = p.available()
            if why:
                R.fill(keys, p, rnd, na(why))
                continue
            try:
                watchdog().arm(STEP_LIMIT.get(wl, 1800), f"{wl} {p.name}")
                body(p, rnd)
            except BenchError as e:
                log(f"{wl} {p.name}: {e}")
                R.fill(keys, p, rnd, fail(e.short[:110]))
            except OSError as e:
                log(f"{wl} {p.name}: {e}")
                R.fill(keys, p, rnd, fail(errname(e)))
            finally:
                watchdog().disarm()
                try:
                    p.umount()
                    p.discard()
                except Exception as e:   # noqa: BLE001 - report, go on
                    log(f"{wl} {p.name}: cleanup: {e}")


def proc_cpu(pid):
    """utime + stime of process pid (every thread), seconds; or None."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def timed_cpu(p, cmd, **kw):
    """timed(), with the CPU of the peer's daemon during the command added
    to the command's own (a FUSE daemon's work is the mount's cost; the
    kernel's overlayfs work is already in the command's system time)."""
    d0 = proc_cpu(p.pid) if p.pid else None
    wall, cpu = timed(cmd, **kw)
    d1 = proc_cpu(p.pid) if p.pid else None
    if d0 is not None and d1 is not None:
        cpu += d1 - d0
    return wall, cpu


class CpuMeter:
    """CPU of what runs inside the with-block: the commands it waited for
    (RUSAGE_CHILDREN) plus the peer's FUSE daemon's; .cpu after exit."""

    def __init__(self, p):
        self.p = p
        self.cpu = 0.0

    @staticmethod
    def _children():
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        return ru.ru_utime + ru.ru_stime

    def __enter__(self):
        self.c0 = self._children()
        self.d0 = proc_cpu(self.p.pid) if self.p.pid else None
        return self

    def __exit__(self, *exc):
        self.cpu = self._children() - self.c0
        d1 = proc_cpu(self.p.pid) if self.p.pid else None
        if self.d0 is not None and d1 is not None:
            self.cpu += d1 - self.d0
        return False


CPU_NOTE = ("CPU rows: user + system time of the command and its children "
            "(wait4) plus the FUSE daemon's during the command "
            "(/proc/PID/stat); the kernel's own work for a FUSE request "
            "is in the command's system time.")


def with_cpu(rows):
    """Each time row followed by its CPU row (key + '.cpu')."""
    out = []
    for key, label, kind, ratio in rows:
        out.append((key, label, kind, ratio))
        out.append((key + ".cpu", f"{label}: CPU", kind, ratio))
    return out


def add_wall_cpu(R, key, p, rnd, wall_cpu):
    R.add(key, p, rnd, wall_cpu[0])
    R.add(key + ".cpu", p, rnd, wall_cpu[1])


def record_rss(R, key, p, rnd):
    """VmHWM into key, RssAnon (heap, not the LMDB map's file pages that
    VmHWM also counts) into key + '.anon'."""
    for k, field in ((key, "VmHWM"), (key + ".anon", "RssAnon")):
        if p.pid:
            kib = vm_status_kib(p.pid, field)
            if kib is not None:
                R.add(k, p, rnd, float(kib * 1024))
        elif not p.is_fuse:
            R.add(k, p, rnd, Mark("- (no daemon)"))


# ------------------------------------------------------------------- W1
def w1(ctx, R, peers, rounds):
    tar = os.path.join(ctx.src, "tree.tar")
    keys = ["W1.tar", "W1.tar.cpu", "W1.rm", "W1.rm.cpu"]
    R.table("W1: tar x of the tree", RATIO_CAPTION,
            with_cpu([("W1.tar", f"tar x, {ctx.tree_files:,} files", "time",
                       True),
                      ("W1.rm", "rm -rf of the new tree", "time", True)]),
            rounds, ["rm -rf runs right after tar x, on the same mount: "
                     "for txfs the files were made in the transaction.",
                     CPU_NOTE])
    R.table("Daemon peak RSS (VmHWM of the FUSE daemon)", ABS_CAPTION,
            [("RSS.W1", "after W1 (tar x of the tree)", "bytes", False),
             ("RSS.W1.anon", "after W1: RssAnon (anonymous memory now)",
              "bytes", False)],
            rounds, [RSS_NOTE])

    def body(p, rnd):
        mnt = p.mount(wdir(ctx, "w1", p), "w1")
        syncfs()
        add_wall_cpu(R, "W1.tar", p, rnd,
                     timed_cpu(p, ["tar", "xf", tar, "-C", mnt]))
        record_rss(R, "RSS.W1", p, rnd)
        made = [os.path.join(mnt, e) for e in sorted(os.listdir(mnt))
                if e != ".txfs"]
        add_wall_cpu(R, "W1.rm", p, rnd, timed_cpu(p, ["rm", "-rf"] + made))
    each_round(ctx, R, peers, keys + ["RSS.W1", "RSS.W1.anon"], rounds, "W1",
               body)


# ------------------------------------------------------------------- W2
def w2(ctx, R, peers, rounds):
    keys = ["W2.st.cold", "W2.diff.cold", "W2.st.warm", "W2.diff.warm"]
    keys += [k + ".cpu" for k in keys]
    R.table("W2: git in the tree (committed repository as the real "
            "directory)", RATIO_CAPTION,
            with_cpu([("W2.st.cold", "git status, cold (caches dropped)",
                       "time", True),
                      ("W2.diff.cold", "git diff --stat, cold", "time", True),
                      ("W2.st.warm", "git status, warm", "time", True),
                      ("W2.diff.warm", "git diff --stat, warm", "time",
                       True)]),
            rounds,
            [f"The repository has {getattr(ctx, 'repo_edits', '?')} files "
             "edited and not staged. Warm values are the median of 3 runs "
             "after one warm-up run (CPU: of the same run).", CPU_NOTE])
    genv = env.GIT_ENV
    st = ["git", "status"]
    diff = ["git", "diff", "--stat"]

    def body(p, rnd):
        lower = os.path.join(wdir(ctx, "w2", p), "repo")
        env.copy_tree(os.path.join(ctx.src, "repo"), lower)
        env.refresh_index(lower)
        for key, cmd in (("W2.st.cold", st), ("W2.diff.cold", diff)):
            mnt = p.mount(lower, "w2")
            drop_caches()
            add_wall_cpu(R, key, p, rnd, timed_cpu(p, cmd, cwd=mnt,
                                                   env=genv))
            p.umount()
        mnt = p.mount(lower, "w2")
        for key, cmd in (("W2.st.warm", st), ("W2.diff.warm", diff)):
            timed(cmd, cwd=mnt, env=genv)
            ts = sorted(timed_cpu(p, cmd, cwd=mnt, env=genv)
                        for _ in range(3))
            add_wall_cpu(R, key, p, rnd, ts[1])
    each_round(ctx, R, peers, keys, rounds, "W2", body)


# ------------------------------------------------------------------- W3
def w3(ctx, R, peers, rounds):
    keys = ["W3.wall", "W3.cpu"]
    target = "init/" if ctx.quick else "vmlinux"
    R.table("W3: C build inside the mount", RATIO_CAPTION,
            [("W3.wall", f"make -j2 {target}, wall", "time", True),
             ("W3.cpu", f"make -j2 {target}, CPU (user+sys, with the "
              "FUSE daemon's)", "time", True)],
            rounds,
            ["Linux 6.1 (linux-source-6.1) `make tinyconfig` then "
             f"`make -j2 {target}` for x86_64 (about 460 objects for "
             "vmlinux), source in the real directory, objects in "
             "O=.bench-out inside the mount; the configure step is not "
             "timed; caches warm.", CPU_NOTE])
    src = os.path.join(ctx.src, "linux")
    out_real = os.path.join(src, ".bench-out")

    def body(p, rnd):
        if os.path.lexists(out_real):
            rmtree(out_real)
        mnt = p.mount(src, "w3")
        out = os.path.join(mnt, ".bench-out")
        run(["make", "-C", mnt, f"O={out}", "tinyconfig"], timeout=600)
        syncfs()
        wall, cpu = timed_cpu(p, ["make", "-C", mnt, f"O={out}", "-j2",
                                  target], timeout=3600)
        R.add("W3.wall", p, rnd, wall)
        R.add("W3.cpu", p, rnd, cpu)
        p.umount()
        if os.path.lexists(out_real):
            rmtree(out_real)
    each_round(ctx, R, peers, keys, rounds, "W3", body)


# ------------------------------------------------------------------- W4
def _fio(args, timeout=900):
    cp = run(["fio", "--output-format=json", "--ioengine=psync",
              "--invalidate=0"] + args, timeout=timeout)
    txt = cp.stdout[cp.stdout.index("{"):]
    return json.loads(txt)["jobs"][0]


def w4(ctx, R, peers, rounds):
    size = "64M" if ctx.quick else "1G"
    secs = 3 if ctx.quick else 20
    keys = ["W4.seqw", "W4.seqr.cold", "W4.seqr.warm", "W4.randw"]
    keys += [k + ".cpu" for k in keys]
    R.table("W4: fio", RATIO_CAPTION,
            with_cpu([("W4.seqw", f"sequential write {size}B bs=1M + fsync",
                       "time", True),
                      ("W4.seqr.cold", f"sequential read {size}B bs=1M, "
                       "cold", "time", True),
                      ("W4.seqr.warm", f"sequential read {size}B bs=1M, "
                       "warm", "time", True)]) +
            [("W4.randw", f"4k random writes, {secs} s (IOPS)", "iops",
              True),
             ("W4.randw.cpu", "4k random writes: CPU per 10,000 writes",
              "time", True)], rounds,
            ["fio 3.33, psync engine, one job; times are the wall time of "
             "the fio run; the IOPS ratio is native IOPS / peer IOPS.",
             CPU_NOTE])

    def body(p, rnd):
        mnt = p.mount(wdir(ctx, "w4", p), "w4")
        f = os.path.join(mnt, "fio.dat")
        common = [f"--filename={f}", f"--size={size}"]
        syncfs()
        t0 = time.perf_counter()
        with CpuMeter(p) as m:
            _fio(["--name=w", "--rw=write", "--bs=1M", "--end_fsync=1"] +
                 common)
        add_wall_cpu(R, "W4.seqw", p, rnd, (time.perf_counter() - t0,
                                            m.cpu))
        for key in ("W4.seqr.cold", "W4.seqr.warm"):
            if key.endswith("cold"):
                drop_caches()
            t0 = time.perf_counter()
            with CpuMeter(p) as m:
                _fio(["--name=r", "--rw=read", "--bs=1M"] + common)
            add_wall_cpu(R, key, p, rnd, (time.perf_counter() - t0, m.cpu))
        with CpuMeter(p) as m:
            job = _fio(["--name=rw", "--rw=randwrite", "--bs=4k",
                        "--time_based", f"--runtime={secs}"] + common)
        ios = float(job["write"]["total_ios"]) or 1.0
        R.add("W4.randw", p, rnd, float(job["write"]["iops"]))
        R.add("W4.randw.cpu", p, rnd, m.cpu * 10000.0 / ios)
    each_round(ctx, R, peers, keys, rounds, "W4", body)


# ------------------------------------------------------------------- W5
def w5(ctx, R, peers, rounds):
    size = (64 << 20) if ctx.quick else (1 << 30)
    keys = ["W5.time", "W5.stored", "W5.commit"]
    R.table("W5: partial update", ABS_CAPTION,
            [("W5.time", f"overwrite 4 KiB in the middle of a "
              f"{_size(size)} file + fsync", "ms", False),
             ("W5.stored", "upper layer / state folder size afterwards",
              "bytes", False),
             ("W5.commit", "commit of that change into the real file",
              "ms", False)], rounds,
            ["The file exists in the real directory (random bytes) before "
             "the mount; the time runs from open(2) to close(2). Stored "
             "size: `du` of the overlay upper or the txfs state folder "
             "(LMDB files included) after unmounting; '-' where writes go "
             "to the real file. Commit: txfs is mounted again over its "
             "staged transaction and `echo commit > .txfs/ctl` is timed "
             "from open to close (then the state folder is discarded, so "
             "every round starts empty); kernel overlayfs and "
             "fuse-overlayfs: what a user does instead after unmounting, "
             "`cp -a upper/. lower/ && sync -f lower`; '-' where writes "
             "go to the real file."])
    lower = os.path.join(ctx.src, "big")
    big = os.path.join(lower, "big.bin")
    if not os.path.exists(big) or os.path.getsize(big) != size:
        os.makedirs(lower, exist_ok=True)
        run(["dd", "if=/dev/urandom", f"of={big}", "bs=1M",
             f"count={size >> 20}", "status=none"], timeout=600)
    syncfs()

    def body(p, rnd):
        mnt = p.mount(lower, "w5")
        syncfs()
        cp = run([os.path.join(ctx.bin, "partial"),
                  os.path.join(mnt, "big.bin"), str(size // 2), "4096"],
                 check=False, timeout=600)
        out = cp.stdout.strip()
        if cp.returncode != 0:
            raise BenchError(out.replace("fails: ", "") or cp.stderr.strip())
        R.add("W5.time", p, rnd, float(out))
        p.umount()
        if getattr(p, "is_txfs", False):
            R.add("W5.stored", p, rnd, float(du_bytes(p.state)))
            _w5_commit_txfs(p, rnd, R, lower)
        elif p.upper:
            R.add("W5.stored", p, rnd, float(du_bytes(p.upper)))
            cmd = f"cp -a '{p.upper}/.' '{lower}/' && sync -f '{lower}'"
            R.add("W5.commit", p, rnd,
                  timed(cmd, shell=True, timeout=1800)[0])
        else:
            R.add("W5.stored", p, rnd, DASH)
            R.add("W5.commit", p, rnd, DASH)
    each_round(ctx, R, peers, keys, rounds, "W5", body)


def _w5_commit_txfs(p, rnd, R, lower):
    """Mount again over the staged 4 KiB change and time its commit."""
    p.mount(lower, "w5")
    v = _ctl(p, "commit")
    p.umount()
    if isinstance(v, float) and os.path.exists(
            os.path.join(lower, ".txfs.staging")):
        v = fail("commit left its staging folder behind")
    R.add("W5.commit", p, rnd, v)
    p.discard()


# ------------------------------------------------------------------- W6
def _meta(ctx, op, d, ndirs, nfiles, timeout=1800):
    cp = run([os.path.join(ctx.bin, "meta"), op, d, str(ndirs),
              str(nfiles)], check=False, timeout=timeout)
    out = cp.stdout.strip()
    if cp.returncode != 0:
        raise BenchError(out.replace("fails: ", "") or cp.stderr.strip())
    return float(out)


def w6(ctx, R, peers, rounds):
    ndirs, nfiles = (10, 200) if ctx.quick else (100, 200)
    n = ndirs * nfiles
    keys = ["W6.create", "W6.stat", "W6.unlink"]
    keys += [k + ".cpu" for k in keys]
    R.table("W6: metadata", RATIO_CAPTION,
            with_cpu([("W6.create", f"create {n:,} empty files in {ndirs} "
                       "folders", "time", True),
                      ("W6.stat", "stat them (warm)", "time", True),
                      ("W6.unlink", "unlink them", "time", True)]), rounds,
            ["A C helper (bench/tools/meta.c) makes the calls, timed "
             "in-process (CPU: the helper's whole run).", W6_NOTE, CPU_NOTE])

    def body(p, rnd):
        mnt = p.mount(wdir(ctx, "w6", p), "w6")
        d = os.path.join(mnt, "m")
        os.mkdir(d)
        syncfs()
        for op in ("create", "stat", "unlink"):
            with CpuMeter(p) as m:
                v = _meta(ctx, op, d, ndirs, nfiles)
            add_wall_cpu(R, f"W6.{op}", p, rnd, (v, m.cpu))
    each_round(ctx, R, peers, keys, rounds, "W6", body)


# ------------------------------------------------------------------- W7
GREP = ("find linux -type f -print0 | xargs -0 grep -l -e spin_lock_irqsave"
        " > /dev/null 2> grep.err; rc=$?; test ! -s grep.err && "
        "{ test $rc = 0 || test $rc = 123; }")


def w7(ctx, R, peers, rounds):
    keys = ["W7.grep.cold", "W7.grep.warm", "W7.rm"]
    keys += [k + ".cpu" for k in keys]
    R.table("W7: find | xargs grep, rm -rf", RATIO_CAPTION,
            with_cpu([("W7.grep.cold", "find | xargs grep over the tree, "
                       "cold", "time", True),
                      ("W7.grep.warm", "find | xargs grep over the tree, "
                       "warm", "time", True),
                      ("W7.rm", "rm -rf the tree (it is in the real "
                       "directory)", "time", True)]), rounds,
            ["`find linux -type f -print0 | xargs -0 grep -l -e "
             "spin_lock_irqsave`; rm -rf runs after the two greps.",
             W7_NOTE, CPU_NOTE])

    def body(p, rnd):
        lower = wdir(ctx, "w7", p)
        env.copy_tree(os.path.join(ctx.src, "tree"),
                      os.path.join(lower, "linux"))
        mnt = p.mount(lower, "w7")
        drop_caches()
        for key in ("W7.grep.cold", "W7.grep.warm"):
            add_wall_cpu(R, key, p, rnd,
                         timed_cpu(p, GREP, cwd=mnt, shell=True))
        os.unlink(os.path.join(mnt, "grep.err"))
        syncfs()
        add_wall_cpu(R, "W7.rm", p, rnd,
                     timed_cpu(p, ["rm", "-rf", os.path.join(mnt, "linux")]))
    each_round(ctx, R, peers, keys, rounds, "W7", body)


# ------------------------------------------------------------------- W8
def _write_changes(mnt, n, size):
    d = os.path.join(mnt, "chg")
    os.makedirs(d, exist_ok=True)
    if n == 1:
        buf = os.urandom(1 << 20)
        with open(os.path.join(d, "big.bin"), "wb") as f:
            for _ in range(size >> 20):
                f.write(buf)
        return
    for i in range(n):
        with open(os.path.join(d, f"f{i:05d}"), "wb") as f:
            f.write(os.urandom(size))


def _changes_present(root, n):
    d = os.path.join(root, "chg")
    return os.path.isdir(d) and len(
        [x for x in os.listdir(d) if not x.startswith(".wh.")]) == n


def _ctl(p, cmd):
    """Seconds, or a Mark when the verb is missing or fails."""
    try:
        return p.ctl(cmd)
    except OSError as e:
        if e.errno in NOT_IMPLEMENTED:
            return na(f"not implemented: {errname(e)}")
        return fail(f"{cmd.split()[0]}: {errname(e)}")


def w8(ctx, R, peers, rounds):
    sizes = [(10, 1024), (1000, 1024), (10000, 1024),
             (1, (64 << 20) if ctx.quick else (1 << 30))]
    if ctx.quick:
        sizes[2] = (2000, 1024)
    rows, all_keys = [], []
    for n, sz in sizes:
        what = f"{n:,} files of 1 KiB" if n > 1 else \
            f"one {_size(sz)} file"
        for op, lab in (("sp", "savepoint"), ("rb", "rollback"),
                        ("commit", "commit")):
            key = f"W8.{op}.{n}"
            rows.append((key, f"{lab}, {what}", "ms", False))
            all_keys.append(key)
    R.table("W8: transaction costs", ABS_CAPTION, rows, rounds,
            ["txfs: `echo VERB > .txfs/ctl` timed from open to close, "
             "changes are new files in a fresh workspace, written before "
             "the timer starts. Kernel overlayfs and fuse-overlayfs: what a "
             "user does instead after unmounting: rollback = `rm -rf "
             "upper`, commit = `cp -a upper/. lower/ && sync -f lower && rm -rf "
             "upper` (the unmount is not counted; fuse-overlayfs's upper also "
             "holds `.wh.` marker files that cp -a copies along). native "
             "dir and "
             "passthrough_ll write straight to the real directory: "
             "nothing to commit or roll back ('-')."])

    for rnd in range(rounds):
        log(f"W8 round {rnd + 1}/{rounds}")
        for p in peers:
            if "W8" not in getattr(p, "workloads", {"W8"}):
                continue
            why = p.available()
            for n, sz in sizes:
                keys = [f"W8.{op}.{n}" for op in ("sp", "rb", "commit")]
                if why:
                    R.fill(keys, p, rnd, na(why))
                    continue
                if not p.has_layer:
                    R.fill(keys, p, rnd, DASH)
                    continue
                try:
                    watchdog().arm(1800, f"W8 {p.name} {n}")
                    if getattr(p, "is_txfs", False):
                        _w8_txfs(ctx, R, p, rnd, n, sz)
                    else:
                        _w8_overlay(ctx, R, p, rnd, n, sz)
                except (BenchError, OSError) as e:
                    log(f"W8 {p.name} {n}: {e}")
                    R.fill(keys, p, rnd, fail(
                        getattr(e, "short", errname(e))[:110]))
                finally:
                    watchdog().disarm()
                    p.umount()
                    p.discard()


def _w8_txfs(ctx, R, p, rnd, n, sz):
    lower = wdir(ctx, "w8", p)
    mnt = p.mount(lower, "w8")
    _write_changes(mnt, n, sz)
    R.add(f"W8.sp.{n}", p, rnd, _ctl(p, "savepoint s1"))
    v = _ctl(p, "rollback")
    if isinstance(v, float) and os.path.exists(os.path.join(mnt, "chg")):
        v = fail("rollback left the changes visible")
    R.add(f"W8.rb.{n}", p, rnd, v)
    if isinstance(v, Mark) and os.path.exists(os.path.join(mnt, "chg")):
        p.umount()
        p.discard()
        rmtree(lower)
        os.makedirs(lower)
        mnt = p.mount(lower, "w8")
    _write_changes(mnt, n, sz)
    v = _ctl(p, "commit")
    p.umount()
    if isinstance(v, float) and not _changes_present(lower, n):
        v = fail("commit did not reach the real directory")
    R.add(f"W8.commit.{n}", p, rnd, v)


def _w8_overlay(ctx, R, p, rnd, n, sz):
    lower = wdir(ctx, "w8", p)
    R.add(f"W8.sp.{n}", p, rnd, Mark("- (no equivalent)"))
    mnt = p.mount(lower, "w8")
    _write_changes(mnt, n, sz)
    p.umount()
    syncfs()
    R.add(f"W8.rb.{n}", p, rnd, timed(["rm", "-rf", p.upper])[0])
    os.makedirs(p.upper)
    mnt = p.mount(lower, "w8")
    _write_changes(mnt, n, sz)
    p.umount()
    cmd = (f"cp -a '{p.upper}/.' '{lower}/' && sync -f '{lower}' && rm -rf '{p.upper}'")
    t = timed(cmd, shell=True, timeout=1800)[0]
    if not _changes_present(lower, n):
        raise BenchError("cp -a did not copy the changes")
    R.add(f"W8.commit.{n}", p, rnd, t)


# ------------------------------------------------------------------- W9
W9_STEPS = [("mount", "mount"),
            ("find1", "first `find -newer` (stat of every file), cold"),
            ("find2", "second `find -newer`, warm"),
            ("rm", "`rm -rf` of half the folders"),
            ("rb", "rollback"),
            ("rm2", "the same `rm -rf` again"),
            ("commit", "commit")]


def _w9_rows():
    rows = []
    for k, lab in W9_STEPS:
        rows.append((f"W9.{k}", lab, "time", False))
    for k, lab in W9_STEPS:
        rows.append((f"W9.{k}.rss", f"daemon VmRSS after: {lab}", "bytes",
                     False))
    return rows


def w9(ctx, R, peers, rounds):
    ndirs, nfiles = (20, 1000) if ctx.quick else (200, 1000)
    half = ndirs // 2
    keys = [r[0] for r in _w9_rows()]
    R.table("W9: scale, a real directory of "
            f"{ndirs * nfiles:,} files in {ndirs} folders", ABS_CAPTION,
            _w9_rows(), rounds,
            [f"The tree is made on the real directory before mounting "
             f"(bench/tools/meta.c: {ndirs} folders of {nfiles:,} empty "
             f"files), then caches are dropped; each step is timed alone "
             f"and in this order; `rm -rf` removes {half} folders "
             f"({half * nfiles:,} files). txfs: rollback and commit are "
             f"`echo VERB > .txfs/ctl` (policy: W7's, for the deletions). "
             f"Kernel overlayfs: rollback = unmount, `rm -rf upper`, mount "
             f"(all counted); its commit has no equivalent (whiteouts "
             f"cannot be copied onto the real directory). native dir: "
             f"nothing to roll back or commit ('-'), and no daemon. "
             f"VmRSS: the daemon's resident memory after the step (it "
             f"counts the LMDB map's file pages that the daemon touched).",
             "txfs runs with W7's policy (the default one with `limit "
             "deletes 1000000`): the rm -rf removes real files, which the "
             "default `limit deletes 1000` refuses by design."])

    def rss_now(p, step, rnd):
        key = f"W9.{step}.rss"
        if p.pid:
            kib = vm_status_kib(p.pid, "VmRSS")
            if kib is not None:
                R.add(key, p, rnd, float(kib * 1024))
        else:
            R.add(key, p, rnd, Mark("-"))

    def rm_half(mnt):
        return timed(["rm", "-rf"] + [os.path.join(mnt, "t", "d%03d" % d)
                                      for d in range(half)],
                     timeout=3600)[0]

    def body(p, rnd):
        lower = wdir(ctx, "w9", p)
        os.mkdir(os.path.join(lower, "t"))
        _meta(ctx, "create", os.path.join(lower, "t"), ndirs, nfiles,
              timeout=3600)
        ref = os.path.join(ctx.work, "w9.ref")
        with open(ref, "w"):
            pass
        drop_caches()
        t0 = time.perf_counter()
        mnt = p.mount(lower, "w9")
        R.add("W9.mount", p, rnd, time.perf_counter() - t0)
        rss_now(p, "mount", rnd)
        for step in ("find1", "find2"):
            R.add(f"W9.{step}", p, rnd, timed(
                ["find", "t", "-newer", ref], cwd=mnt, timeout=3600)[0])
            rss_now(p, step, rnd)
        R.add("W9.rm", p, rnd, rm_half(mnt))
        rss_now(p, "rm", rnd)
        if not p.has_layer:
            R.fill(["W9.rb", "W9.rb.rss", "W9.rm2", "W9.rm2.rss",
                    "W9.commit", "W9.commit.rss"], p, rnd, DASH)
            return
        if getattr(p, "is_txfs", False):
            v = _ctl(p, "rollback")
        else:
            t0 = time.perf_counter()
            p.umount()
            rmtree(p.upper)
            p.discard()
            mnt = p.mount(lower, "w9")
            v = time.perf_counter() - t0
        back = os.path.join(mnt, "t", "d000", "f00000")
        if isinstance(v, float) and not os.path.exists(back):
            v = fail("rollback left the deletions visible")
        R.add("W9.rb", p, rnd, v)
        rss_now(p, "rb", rnd)
        R.add("W9.rm2", p, rnd, rm_half(mnt))
        rss_now(p, "rm2", rnd)
        if not getattr(p, "is_txfs", False):
            R.fill(["W9.commit", "W9.commit.rss"], p, rnd,
                   Mark("- (no equivalent)"))
            return
        v = _ctl(p, "commit")
        rss_now(p, "commit", rnd)
        p.umount()
        if isinstance(v, float) and os.path.exists(
                os.path.join(lower, "t", "d000")):
            v = fail("commit did not reach the real directory")
        R.add("W9.commit", p, rnd, v)
    each_round(ctx, R, peers, keys, rounds, "W9", body)


# ------------------------------------------------------------------- RSS
def rss(ctx, R, peers, rounds):
    ndirs, nfiles = (100, 100) if ctx.quick else (1000, 100)
    n = ndirs * nfiles
    key = "RSS.100k"
    R.table("Daemon peak RSS (VmHWM of the FUSE daemon)", ABS_CAPTION,
            [(key, f"{n:,} files created in the layer and stat'ed",
              "bytes", False),
             (key + ".anon", f"{n:,} files: RssAnon (anonymous memory now)",
              "bytes", False)], 1,
            ["Files created by bench/tools/meta.c in a fresh mount, then "
             "stat'ed once each; VmHWM read before unmounting."])

    def body(p, rnd):
        if not p.is_fuse:
            record_rss(R, key, p, rnd)
            return
        mnt = p.mount(wdir(ctx, "rss", p), "rss")
        d = os.path.join(mnt, "r")
        os.mkdir(d)
        try:
            _meta(ctx, "create", d, ndirs, nfiles, timeout=3600)
            _meta(ctx, "stat", d, ndirs, nfiles, timeout=3600)
        except BenchError as e:
            kib = vm_hwm_kib(p.pid) if p.pid else None
            raise BenchError(f"{e}" + (f"; VmHWM {kib // 1024} MiB"
                                       if kib else ""))
        record_rss(R, key, p, rnd)
    each_round(ctx, R, peers, [key, key + ".anon"], 1, "RSS", body)


WORKLOADS = {"W1": w1, "W2": w2, "W3": w3, "W4": w4, "W5": w5, "W6": w6,
             "W7": w7, "W8": w8, "W9": w9, "RSS": rss}
# rounds: None = --rounds; else at most this many (slow rows)
MAX_ROUNDS = {"W3": 3, "W6": 3, "W9": 3}
