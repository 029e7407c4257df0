# SPDX-License-Identifier: Apache-2.0
"""Process, timing and mount helpers shared by the bench modules.

Every child runs in its own session so that a timeout can kill the whole
process group (a shell pipeline, make and its compilers). Every mount that a
peer makes is registered in MOUNTS and every daemon in DAEMONS; cleanup_all()
undoes them in reverse order and is called from the runner's finally block
and its signal handlers, so a bench never leaves a mount or a daemon behind.
"""
import ctypes
import errno
import os
import threading
import re
import signal
import subprocess
import sys
import tempfile
import time

VERBOSE = False
MOUNTS = []    # mount points we created, in order
DAEMONS = []   # pids of daemons we started (or read from a pid file)


class BenchError(Exception):
    """A step failed; .short is the reason for a table cell ("fails: ...")."""

    def __init__(self, msg, short=None):
        super().__init__(msg)
        self.short = short or msg


def _prog(cmd):
    first = cmd.split()[0] if isinstance(cmd, str) else str(cmd[0])
    return os.path.basename(first)


def _failed(cmd, rc, text):
    line = error_line(text)
    m = re.match(r"([A-Z0-9]+): (.*)", line)
    short = (f"{m.group(1)} ({_prog(cmd)}: {m.group(2)[:70]})" if m
             else f"{_prog(cmd)} exit {rc}: {line[:80]}")
    return BenchError(f"{_short(cmd)}: exit {rc}: {line}", short)


class NotImplementedInTxfs(Exception):
    """The feature does not exist (yet) in the binary under test."""


def log(msg):
    print(f"[bench {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr,
          flush=True)


def vlog(msg):
    if VERBOSE:
        log(msg)


def _kill_group(proc):
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run(cmd, *, cwd=None, env=None, timeout=600, check=True, shell=False,
        stdin=subprocess.DEVNULL, preexec=None):
    """Run cmd; return CompletedProcess with text stdout/stderr.

    Raises BenchError on timeout (after killing the process group) or, with
    check, on a non-zero exit status.
    """
    vlog(f"run: {cmd if shell else ' '.join(map(str, cmd))}")
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, shell=shell, stdin=stdin,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, errors="replace",
                            start_new_session=True, preexec_fn=preexec)
    try:
        out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        proc.communicate()
        raise BenchError(f"timeout after {timeout}s: {_short(cmd)}",
                             f"timeout after {timeout} s ({_prog(cmd)})")
    cp = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if check and proc.returncode != 0:
        raise _failed(cmd, proc.returncode, err + "\n" + out)
    return cp


def timed(cmd, *, cwd=None, env=None, timeout=600, shell=False,
          stdout=subprocess.DEVNULL):
    """Run cmd and return (wall seconds, cpu seconds of it and its children).

    Raises BenchError when it fails or times out.
    """
    vlog(f"timed: {cmd if shell else ' '.join(map(str, cmd))}")
    errf = tempfile.TemporaryFile()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, shell=shell,
                            stdin=subprocess.DEVNULL, stdout=stdout,
                            stderr=errf, start_new_session=True)
    deadline = t0 + timeout
    status = ru = None
    while True:
        pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            break
        if time.perf_counter() > deadline:
            _kill_group(proc)
            os.wait4(proc.pid, 0)
            proc.returncode = -9
            raise BenchError(f"timeout after {timeout}s: {_short(cmd)}",
                             f"timeout after {timeout} s ({_prog(cmd)})")
        time.sleep(0.0005 if time.perf_counter() - t0 < 0.05 else 0.005)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    errf.seek(0)
    err = errf.read()[-4096:].decode(errors="replace")
    errf.close()
    if proc.returncode != 0:
        raise _failed(cmd, proc.returncode, err)
    return wall, ru.ru_utime + ru.ru_stime


def first_line(s):
    for line in (s or "").splitlines():
        if line.strip():
            return line.strip()[:160]
    return ""


_STRERR = {os.strerror(n): name for n, name in errno.errorcode.items()
           if n not in (errno.EPERM,)}
_STRERR["Operation not permitted"] = "EPERM"


def error_line(s):
    """The most telling line of a failed command's output: an errno name
    with the line that carries it ("EMFILE: make[1]: *** INTERNAL: readdir:
    Too many open files"), else the first line that says error (make's
    "Error 2" lines skipped), else the last non-empty line."""
    lines = [x.strip() for x in (s or "").splitlines() if x.strip()]
    for line in lines:
        for text, name in _STRERR.items():
            if len(text) > 8 and text in line:
                return f"{name}: {line[:150]}"
    for line in lines:
        if "error" in line.lower() and not re.search(r"Error \d+$", line):
            return line[:200]
    return lines[-1][:200] if lines else ""


def last_line(s):
    lines = [x.strip() for x in (s or "").splitlines() if x.strip()]
    return lines[-1][:160] if lines else ""


def _short(cmd):
    s = cmd if isinstance(cmd, str) else " ".join(map(str, cmd))
    return s if len(s) < 80 else s[:77] + "..."


def errname(e):
    """'EMFILE' for an OSError, else a short string."""
    if isinstance(e, OSError) and e.errno:
        return errno.errorcode.get(e.errno, str(e.errno))
    return str(e)


_libc = ctypes.CDLL(None, use_errno=True)
SYNC_PATH = "/"     # the bench's own file system; set by the runner


def syncfs(path=None):
    """syncfs(2) on the bench's file system only: a global sync(2) would
    also wait for other people's (possibly hung) FUSE mounts."""
    fd = os.open(path or SYNC_PATH, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _libc.syncfs(fd)
    finally:
        os.close(fd)


def drop_caches():
    syncfs()
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


# ---------------------------------------------------------------- mounts

def _unescape(s):
    return (s.replace("\\040", " ").replace("\\011", "\t")
            .replace("\\012", "\n").replace("\\134", "\\"))


def mountinfo():
    """List of (mount point, fstype, 'major:minor') from /proc/self/mountinfo."""
    res = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            parts = line.split()
            sep = parts.index("-")
            res.append((_unescape(parts[4]), parts[sep + 1], parts[2]))
    return res


def mounted_fstype(path):
    """fstype of the top mount at exactly path, or None."""
    path = os.path.realpath(path)
    found = None
    for mp, fstype, _ in mountinfo():
        if mp == path:
            found = fstype
    return found


def wait_mounted(path, fstype_prefix, timeout=30, proc=None):
    """Wait until path is a mount of fstype_prefix*; BenchError otherwise."""
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        fs = mounted_fstype(path)
        if fs and fs.startswith(fstype_prefix):
            return
        if proc is not None and proc.poll() is not None:
            raise BenchError(f"daemon exited with {proc.returncode} "
                             "before mounting")
        time.sleep(0.01)
    raise BenchError(f"{path} not mounted after {timeout}s")


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:    # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def wait_pid_exit(pid, timeout):
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout:
        if not pid_alive(pid):
            return True
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.01)
    return not pid_alive(pid)


def vm_status_kib(pid, field):
    """A /proc/PID/status field in KiB (VmHWM, RssAnon, ...), or None."""
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


def vm_hwm_kib(pid):
    """Peak resident set size (VmHWM) of pid in KiB, or None."""
    return vm_status_kib(pid, "VmHWM")


def fuse_abort(path):
    """Abort the FUSE connection mounted at path (last resort for a hang)."""
    for mp, fstype, majmin in mountinfo():
        if mp == os.path.realpath(path) and fstype.startswith("fuse"):
            minor = majmin.split(":")[1]
            conn = "/sys/fs/fuse/connections"
            if not os.path.exists(os.path.join(conn, minor)):
                subprocess.run(["mount", "-t", "fusectl", "fusectl", conn],
                               stderr=subprocess.DEVNULL)
            try:
                with open(os.path.join(conn, minor, "abort"), "w") as f:
                    f.write("1")
            except OSError:
                pass


def force_unmount(path):
    """Detach path lazily whatever it is; never blocks for long."""
    if mounted_fstype(path) is None:
        return
    fs = mounted_fstype(path)
    if fs and fs.startswith("fuse"):
        subprocess.run(["fusermount3", "-uz", path], timeout=20,
                       stderr=subprocess.DEVNULL)
    if mounted_fstype(path) is not None:
        subprocess.run(["umount", "-l", path], timeout=20,
                       stderr=subprocess.DEVNULL)


def kill_daemon(pid, grace=5):
    if not pid_alive(pid):
        return
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if not wait_pid_exit(pid, grace):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        wait_pid_exit(pid, grace)


class Watchdog:
    """Last line of defence against a hung FUSE daemon: the bench's own
    process can block in a file system call that no subprocess timeout
    covers. When a step overruns, abort every FUSE connection we mounted
    (fusectl) and kill our daemons, so that the blocked call fails."""

    def __init__(self):
        self.deadline = None
        self.what = ""
        self.fired = False
        t = threading.Thread(target=self._loop, daemon=True)
        t.start()

    def arm(self, seconds, what):
        self.what = what
        self.fired = False
        self.deadline = time.monotonic() + seconds

    def disarm(self):
        self.deadline = None

    def _loop(self):
        while True:
            time.sleep(1)
            d = self.deadline
            if d is None or time.monotonic() < d:
                continue
            self.deadline = None
            self.fired = True
            log(f"WATCHDOG: {self.what} overran; aborting FUSE mounts")
            for mp in list(MOUNTS):
                try:
                    fs = mounted_fstype(mp)
                    if fs and fs.startswith("fuse"):
                        fuse_abort(mp)
                except Exception:   # noqa: BLE001 - keep aborting
                    pass
            for pid in list(DAEMONS):
                if pid_alive(pid):
                    kill_daemon(pid, grace=2)


WATCHDOG = None


def watchdog():
    global WATCHDOG
    if WATCHDOG is None:
        WATCHDOG = Watchdog()
    return WATCHDOG


def cleanup_all():
    """Unmount everything we mounted and kill every daemon we started."""
    for mp in reversed(MOUNTS):
        try:
            if mounted_fstype(mp):
                log(f"cleanup: unmounting {mp}")
                force_unmount(mp)
        except Exception as e:   # keep going: the rest must be cleaned too
            log(f"cleanup: {mp}: {e}")
    for pid in reversed(DAEMONS):
        if pid_alive(pid):
            log(f"cleanup: killing daemon {pid}")
            kill_daemon(pid)
    MOUNTS.clear()
    DAEMONS.clear()


def leftover_mounts(prefix):
    """Mounts under prefix still listed in /proc/self/mounts."""
    prefix = os.path.realpath(prefix)
    res = []
    with open("/proc/self/mounts") as f:
        for line in f:
            mp = _unescape(line.split()[1])
            if mp == prefix or mp.startswith(prefix + "/"):
                res.append(mp)
    return res


def du_bytes(path):
    """Allocated bytes under path (st_blocks), 0 if it does not exist."""
    total = 0
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            try:
                total += os.lstat(os.path.join(root, n)).st_blocks * 512
            except OSError:
                pass
    return total


def rmtree(path):
    """rm -rf that copes with chmod 000 folders left by a workload."""
    if os.path.lexists(path):
        subprocess.run(["chmod", "-R", "u+rwx", path],
                       stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", "--one-file-system", path], check=True)
