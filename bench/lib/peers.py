# SPDX-License-Identifier: Apache-2.0
"""Peer adapters: mount a view of a real directory, unmount, discard.

A workload hands a peer the real directory (`lower`, prepared by the
workload) and gets back the path to work in. Each adapter knows:

  mount(lower, tag) -> path      fresh view of lower; state under peer dir
  umount()                       leaves the staged changes (upper/layer)
  discard()                      deletes upper/work/state (after umount)
  pid                            FUSE daemon pid or None
  upper                          overlay upper dir (for W8), else None

Mount and unmount have timeouts; every mount point and daemon pid goes
into util.MOUNTS / util.DAEMONS so that cleanup_all() can undo them.
"""
import os
import subprocess
import time

from util import (BenchError, DAEMONS, MOUNTS, force_unmount, kill_daemon,
                  log, mounted_fstype, pid_alive, rmtree, run, wait_mounted,
                  wait_pid_exit, first_line)

MOUNT_TIMEOUT = 30
UMOUNT_TIMEOUT = 60


class Peer:
    name = "?"
    label = "?"
    is_fuse = False
    has_layer = False     # changes are staged away from the real directory

    def __init__(self, ctx):
        self.ctx = ctx
        self.base = os.path.join(ctx.fs, "peers", self.name)
        self.mnt = None
        self.pid = None
        self.upper = None
        self.lower = None
        self._proc = None
        self._log = None

    def available(self):
        """None when usable, else the reason for "n/a (...)"."""
        return None

    def dirs(self, tag):
        d = os.path.join(self.base, tag)
        os.makedirs(d, exist_ok=True)
        return d

    def mount(self, lower, tag):
        raise NotImplementedError

    def umount(self):
        pass

    def discard(self):
        pass

    # -- FUSE daemons run in the foreground (-f) so that we own their pid
    def _start_fuse(self, argv, mnt):
        os.makedirs(mnt, exist_ok=True)
        self._log = open(os.path.join(self.base, "daemon.log"), "ab")
        self._proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                      stdout=self._log, stderr=self._log,
                                      start_new_session=True)
        DAEMONS.append(self._proc.pid)
        MOUNTS.append(mnt)
        self.pid = self._proc.pid
        try:
            wait_mounted(mnt, "fuse", MOUNT_TIMEOUT, self._proc)
        except BenchError as e:
            self._stop_fuse(mnt)
            raise BenchError(f"{self.name} mount: {e}: {self._log_tail()}")
        self.mnt = mnt

    def _log_tail(self):
        try:
            with open(os.path.join(self.base, "daemon.log"), "rb") as f:
                lines = f.read()[-2000:].decode(errors="replace")
            return first_line("\n".join(lines.splitlines()[-3:]))
        except OSError:
            return ""

    def _stop_fuse(self, mnt):
        if mounted_fstype(mnt):
            try:
                run(["fusermount3", "-u", mnt], timeout=UMOUNT_TIMEOUT,
                    check=False)
            except BenchError:
                pass
            if mounted_fstype(mnt):
                force_unmount(mnt)
        if self.pid and not wait_pid_exit(self.pid, UMOUNT_TIMEOUT):
            log(f"{self.name}: daemon {self.pid} still alive; killing")
            kill_daemon(self.pid)
        if self._proc:
            try:
                self._proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        if self._log:
            self._log.close()
            self._log = None
        self._proc = None
        self.pid = None
        self.mnt = None


class Native(Peer):
    name = "native"
    label = "native dir"

    def mount(self, lower, tag):
        self.lower = self.mnt = lower
        return lower


class KernelOverlay(Peer):
    name = "overlay"
    label = "kernel overlayfs"
    has_layer = True

    def available(self):
        if os.geteuid() != 0:
            return "needs root"
        with open("/proc/filesystems") as f:
            if "overlay" not in f.read():
                return "no overlay in /proc/filesystems"
        return None

    def mount(self, lower, tag):
        d = self.dirs(tag)
        self.lower = lower
        self.upper = os.path.join(d, "upper")
        work = os.path.join(d, "work")
        mnt = os.path.join(d, "mnt")
        for p in (self.upper, work, mnt):
            os.makedirs(p, exist_ok=True)
        MOUNTS.append(mnt)
        run(["mount", "-t", "overlay", "overlay", "-o",
             f"lowerdir={lower},upperdir={self.upper},workdir={work}", mnt],
            timeout=MOUNT_TIMEOUT)
        self.mnt = mnt
        return mnt

    def umount(self):
        if self.mnt and mounted_fstype(self.mnt):
            try:
                run(["umount", self.mnt], timeout=UMOUNT_TIMEOUT)
            except BenchError:
                force_unmount(self.mnt)
        self.mnt = None

    def discard(self):
        if self.upper:
            d = os.path.dirname(self.upper)
            for sub in ("upper", "work"):
                rmtree(os.path.join(d, sub))
        self.upper = None


class FuseOverlayfs(KernelOverlay):
    name = "fuse-overlayfs"
    label = "fuse-overlayfs"
    is_fuse = True

    def available(self):
        if not os.path.exists("/usr/bin/fuse-overlayfs"):
            return "fuse-overlayfs not installed"
        return None

    def mount(self, lower, tag):
        d = self.dirs(tag)
        self.lower = lower
        self.upper = os.path.join(d, "upper")
        work = os.path.join(d, "work")
        mnt = os.path.join(d, "mnt")
        for p in (self.upper, work, mnt):
            os.makedirs(p, exist_ok=True)
        self._start_fuse(["fuse-overlayfs", "-f", "-o",
                          f"lowerdir={lower},upperdir={self.upper},"
                          f"workdir={work}", mnt], mnt)
        return mnt

    def umount(self):
        if self.mnt:
            self._stop_fuse(self.mnt)


class PassthroughLL(Peer):
    """libfuse's example/passthrough_ll, built from libfuse3-dev's copy."""
    name = "ptll"
    label = "passthrough_ll"
    is_fuse = True
    opts = []

    def available(self):
        return None if self.ctx.ptll_bin else self.ctx.ptll_err

    def mount(self, lower, tag):
        d = self.dirs(tag)
        self.lower = lower
        mnt = os.path.join(d, "mnt")
        argv = [self.ctx.ptll_bin, "-f", "-o", f"source={lower}"]
        for o in self.opts:
            argv += ["-o", o]
        self._start_fuse(argv + [mnt], mnt)
        return mnt

    def umount(self):
        if self.mnt:
            self._stop_fuse(self.mnt)


class PassthroughLLCached(PassthroughLL):
    name = "ptll-cache"
    label = "passthrough_ll cache=always,writeback"
    opts = ["cache=always", "writeback"]


class Txfs(Peer):
    """txfs mounted in place over the workspace, default options."""
    name = "txfs"
    label = "txfs"
    is_fuse = True
    has_layer = True

    is_txfs = True

    def available(self):
        return None if self.ctx.txfs_bin else self.ctx.txfs_err

    extra = []
    env = {}		# added to the daemon's environment

    def binary(self):
        return self.ctx.txfs_bin

    def workload_policy(self, tag):
        """The default policy everywhere, except W7's rm -rf of a 5,4xx-file
        real tree: 5,4xx real losses are what `limit deletes 1000` exists to
        refuse, so W7 alone mounts the default policy with that limit raised
        (the table says so). W9's rm -rf of 100,000 real files likewise."""
        if tag in ("w7", "w9") and self.ctx.txfs_policy_w7:
            return ["--policy", self.ctx.txfs_policy_w7]
        return []

    def mount(self, lower, tag):
        d = self.dirs(tag)
        self.lower = lower
        self.state = os.path.join(d, "state")
        MOUNTS.append(lower)
        t0 = time.monotonic()
        cp = run([self.binary(), "mount", "--state", self.state] +
                 self.extra + self.workload_policy(tag) + [lower],
                 env=dict(os.environ, **self.env) if self.env else None,
                 timeout=MOUNT_TIMEOUT, check=False)
        self._read_pid()
        if cp.returncode != 0:
            self._after_failed_mount(lower)
            raise BenchError("txfs mount: exit %d: %s" % (
                cp.returncode, first_line(cp.stderr) or first_line(cp.stdout)))
        try:
            wait_mounted(lower, "fuse",
                         max(1, MOUNT_TIMEOUT - (time.monotonic() - t0)))
        except BenchError as e:
            self._after_failed_mount(lower)
            raise BenchError(f"txfs mount: {e}")
        self.mnt = lower
        return lower

    def _read_pid(self):
        try:
            with open(os.path.join(self.state, "daemon.pid")) as f:
                self.pid = int(f.read().split()[0])
            DAEMONS.append(self.pid)
        except (OSError, ValueError, IndexError):
            self.pid = None

    def _after_failed_mount(self, mnt):
        force_unmount(mnt)
        if self.pid:
            kill_daemon(self.pid)
        self.pid = None

    def ctl(self, cmd):
        """Write one command to .txfs/ctl; returns seconds; OSError on error."""
        path = os.path.join(self.mnt, ".txfs", "ctl")
        t0 = time.perf_counter()
        fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
        try:
            os.write(fd, (cmd + "\n").encode())
        finally:
            os.close(fd)
        return time.perf_counter() - t0

    def umount(self):
        if not self.mnt:
            return
        mnt = self.mnt
        if mounted_fstype(mnt):
            cp = None
            try:
                cp = run([self.binary(), "umount", mnt],
                         timeout=UMOUNT_TIMEOUT, check=False)
            except BenchError as e:
                log(f"txfs umount: {e}")
            if cp is not None and cp.returncode != 0:
                log(f"txfs umount: exit {cp.returncode}: "
                    f"{first_line(cp.stderr)}")
            if mounted_fstype(mnt):
                log("txfs umount left the mount; fusermount3 -u")
                run(["fusermount3", "-u", mnt], timeout=UMOUNT_TIMEOUT,
                    check=False)
                if mounted_fstype(mnt):
                    force_unmount(mnt)
        if self.pid and not wait_pid_exit(self.pid, UMOUNT_TIMEOUT):
            log(f"txfs daemon {self.pid} alive after umount; killing")
            kill_daemon(self.pid)
        self.pid = None
        self.mnt = None

    def discard(self):
        if getattr(self, "state", None):
            rmtree(self.state)


class TxfsNoOpen(Txfs):
    """txfs -o noopen: the kernel opens and closes files without asking
    the daemon (no OPEN, no RELEASE)."""
    name = "txfs-noopen"
    label = "txfs -o noopen"
    extra = ["-o", "noopen"]


class TxfsOpen(Txfs):
    """txfs -o open: every open asks the daemon (the default before the
    mount chose its open mode from the policy)."""
    name = "txfs-open"
    label = "txfs -o open"
    extra = ["-o", "open"]


class TxfsSpinOff(Txfs):
    """txfs with the spin off (-o spin=0): measures the default's spin
    against no spin in the same rounds."""
    name = "txfs-spin0"
    label = "txfs -o spin=0"
    extra = ["-o", "spin=0"]


class TxfsBatch(Txfs):
    """txfs with group commit (-o batch=5): many requests' changes in one
    LMDB write transaction, closed within 5 ms or at a sync point."""
    name = "txfs-batch5"
    label = "txfs -o batch=5"
    extra = ["-o", "batch=5"]


class TxfsBatchNoOpen(Txfs):
    """-o batch=5,noopen: both speed options."""
    name = "txfs-batch5-noopen"
    label = "txfs -o batch=5,noopen"
    extra = ["-o", "batch=5,noopen"]


class TxfsWritemap(Txfs):
    """TXFS_LAYER_WRITEMAP=1: the layer written in place through LMDB's
    shared mapping instead of a pwrite per dirty page (fs/layer/reserve.c)."""
    name = "txfs-wmap"
    label = "txfs writemap"
    env = {"TXFS_LAYER_WRITEMAP": "1"}


class TxfsNoHistory(Txfs):
    """txfs -o nohistory: a commit keeps no record for undo (what history,
    issue 25, costs a commit)."""
    name = "txfs-nohist"
    label = "txfs -o nohistory"
    extra = ["-o", "nohistory"]


class TxfsBase(Txfs):
    """Another txfs binary (--txfs-base BIN), default options: an older
    build measured in the same rounds as the one under test."""
    name = "txfs-base"
    label = "txfs (base)"

    def available(self):
        b = self.ctx.args.txfs_base
        if not b:
            return "no --txfs-base given"
        return None if os.access(b, os.X_OK) else f"{b} is not executable"

    def binary(self):
        return os.path.abspath(self.ctx.args.txfs_base)


PEER_CLASSES = [Native, KernelOverlay, FuseOverlayfs, PassthroughLL,
                PassthroughLLCached, Txfs, TxfsOpen, TxfsSpinOff, TxfsNoOpen,
                TxfsBatch, TxfsBatchNoOpen, TxfsWritemap, TxfsNoHistory,
                TxfsBase]
PEER_NAMES = [c.name for c in PEER_CLASSES]


def make_peers(ctx, names):
    return [c(ctx) for c in PEER_CLASSES if c.name in names]


def alive(peer):
    return peer.pid is None or pid_alive(peer.pid)
