# SPDX-License-Identifier: Apache-2.0
"""The safety table: every entry of shared/corpus/destructive.tsv in a fresh
fixture under txfs with the default policy.

stage/guard entries: `txfs mount` in place over the fixture's workspace,
the command runs as root (HOME = the decoy home) with its current directory
in the mount, then `rollback` on .txfs/ctl, and the merged view is compared
with the fixture as it was (types, modes, sizes, contents, link targets).

outside/network entries: only under `txfs run`, only as an unprivileged
user made for the test (never as root), as the corpus header demands; while
`txfs run` does not exist they are reported as not run. The decoy home and
the decoy project outside the workspace are compared too.

The fixture lives under /srv (outside /tmp and /var/tmp, which `txfs run`
may leave writable) and is removed afterwards.
"""
import hashlib
import os
import pwd
import re
import socket
import sqlite3
import statistics
import subprocess
import threading
import time

import env
from util import (BenchError, MOUNTS, first_line, force_unmount, kill_daemon,
                  log, mounted_fstype, rmtree, run, wait_pid_exit)

CORPUS = os.path.join(env.REPO, "..", "shared", "corpus", "destructive.tsv")
TEST_USER = "txfsbench"
REFUSAL_WORDS = ("Permission denied", "Operation not permitted",
                 "Disk quota exceeded", "Read-only file system",
                 "Network is unreachable", "Connection refused")


def load_corpus(path):
    entries = []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            eid, cls, expect, cmd = line.rstrip("\n").split("\t", 3)
            entries.append({"id": eid, "class": cls, "expect": expect,
                            "cmd": cmd})
    return entries


# ------------------------------------------------------------ manifests
def manifest(root):
    """{relpath: (type, mode, size, sha256 or link target)} of a tree."""
    res = {}
    for dirpath, dirs, files in os.walk(root):
        for name in dirs + files:
            p = os.path.join(dirpath, name)
            rel = os.path.relpath(p, root)
            st = os.lstat(p)
            mode = st.st_mode & 0o7777
            if os.path.islink(p):
                res[rel] = ("l", mode, 0, os.readlink(p))
            elif os.path.isdir(p):
                res[rel] = ("d", mode, 0, "")
            else:
                h = hashlib.sha256()
                with open(p, "rb") as fh:
                    for chunk in iter(lambda: fh.read(1 << 20), b""):
                        h.update(chunk)
                res[rel] = ("f", mode, st.st_size, h.hexdigest())
        dirs[:] = [d for d in dirs if not os.path.islink(
            os.path.join(dirpath, d))]
    return res


def diff_manifest(a, b):
    """Short description of the first differences, '' when identical."""
    out = []
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            what = ("missing" if k not in b else "new" if k not in a
                    else "changed")
            out.append(f"{k} {what}")
    return ", ".join(out[:3]) + (f" (+{len(out) - 3})" if len(out) > 3
                                  else "")


# ------------------------------------------------------------ fixture
GENV = dict(env.GIT_ENV)


def git(ws, *args):
    run(["git", "-C", ws] + list(args), env=GENV)


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


def make_fixture(base):
    """base/{ws,home,decoy}: the corpus header's fixture; returns paths."""
    ws, home, decoy = (os.path.join(base, x) for x in ("ws", "home", "decoy"))
    for d in (ws, home, decoy):
        os.makedirs(d)
    # decoy home with canaries, decoy project outside $WS
    write(f"{home}/.ssh/id_ed25519", "CANARY private key\n", 0o600)
    write(f"{home}/.bashrc", "# CANARY bashrc\n")
    write(f"{home}/Documents/thesis.txt", "CANARY document\n")
    write(f"{home}/projects/tool/web-crawler/crawl.py", "# CANARY\n")
    write(f"{decoy}/project/main.py", "print('CANARY decoy project')\n")
    write(f"{decoy}/project/data/db.txt", "CANARY data\n")
    # the workspace: a repository with history
    git_init(ws)
    write(f"{ws}/.gitignore", "node_modules/\n.env\ndir with space/.cache/\n"
          "sub/\n")
    write(f"{ws}/README.md", "# fixture\n\nA project.\n")
    write(f"{ws}/package.json", '{\n  "name": "fixture",\n  "version": '
          '"1.0.0"\n}\n')
    write(f"{ws}/src/main.c", "int main(void) { return 0; }\n")
    write(f"{ws}/src/util.c", "int util(void) { return 1; }\n")
    write(f"{ws}/src/util.h", "int util(void);\n")
    write(f"{ws}/tests/test_main.c", "/* test */\n")
    write(f"{ws}/patches/0001-fix.patch", "--- a\n+++ b\n")
    write(f"{ws}/plan/plan.md", "# plan\n- step\n")
    write(f"{ws}/docs/guide.md", "# guide\n")
    write(f"{ws}/archive/2025.md", "# old notes\n")
    write(f"{ws}/notes/inbox.jsonl", '{"note": 1}\n{"note": 2}\n')
    write(f"{ws}/dir with space/readme.txt", "spaces\n")
    # A real project has more tracked files than the mass-deletion guard's
    # default limit (1,000): 1,200 small vendored sources.
    for i in range(1200):
        write(f"{ws}/vendor/lib{i // 100:02d}/mod{i:04d}.c",
              f"int mod{i}(void) {{ return {i}; }}\n")
    os.makedirs(f"{ws}/data")
    db = sqlite3.connect(f"{ws}/data/app.sqlite")
    db.execute("create table t (k integer primary key, v text)")
    db.executemany("insert into t (v) values (?)",
                   [(f"row {i}",) for i in range(200)])
    db.commit()
    db.close()
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "first")
    write(f"{ws}/src/main.c", "int main(void) { return util(); }\n")
    git(ws, "commit", "-q", "-am", "second")
    write(f"{ws}/docs/guide.md", "# guide\n\nMore.\n")
    git(ws, "commit", "-q", "-am", "third")
    # staged, unstaged and untracked changes, ignored files
    write(f"{ws}/src/util.c", "int util(void) { return 2; }\n")
    git(ws, "add", "src/util.c")
    write(f"{ws}/README.md", "# fixture\n\nA project, edited.\n")
    write(f"{ws}/notes/todo.txt", "untracked\n")
    write(f"{ws}/.env", "API_KEY=canary-secret\n", 0o600)
    write(f"{ws}/node_modules/left-pad/index.js", "module.exports = 1;\n")
    write(f"{ws}/dir with space/.cache/blob", "cache\n")
    # nested repository
    git_init(f"{ws}/sub")
    write(f"{ws}/sub/lib.c", "/* sub */\n")
    git(f"{ws}/sub", "add", "-A")
    git(f"{ws}/sub", "commit", "-q", "-m", "sub")
    return ws, home, decoy


def git_init(d):
    os.makedirs(d, exist_ok=True)
    run(["git", "-C", d, "init", "-q", "-b", "main"], env=GENV)


# ------------------------------------------------------------ listener
class Listener:
    """TCP listener on 127.0.0.1 that counts connections (network class)."""

    def __init__(self):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.count = 0
        self.stop = False
        self.t = threading.Thread(target=self._loop, daemon=True)
        self.t.start()

    def _loop(self):
        while not self.stop:
            try:
                c, _ = self.sock.accept()
                self.count += 1
                c.close()
            except OSError:
                continue

    def close(self):
        self.stop = True
        self.t.join()
        self.sock.close()


# ------------------------------------------------------------ runner
class Safety:
    def __init__(self, ctx):
        self.ctx = ctx
        self.base = f"/srv/txfs-bench-safety.{os.getpid()}"
        self.rows = []          # per entry dicts
        self.overhead = {}      # name -> list of seconds
        self.has_run = False
        self.run_help = ""

    def txfs(self, *args, **kw):
        return run([self.ctx.txfs_bin] + list(args), **kw)

    def detect_run(self):
        try:
            cp = self.txfs("run", "--help", check=False, timeout=20)
        except BenchError:
            return False
        self.run_help = cp.stdout + cp.stderr
        return cp.returncode == 0 and "run" in self.run_help

    def run_all(self):
        entries = load_corpus(os.path.abspath(CORPUS))
        why = None if self.ctx.txfs_bin else self.ctx.txfs_err
        self.has_run = bool(self.ctx.txfs_bin) and self.detect_run()
        os.makedirs(self.base, mode=0o755)
        try:
            pristine = os.path.join(self.base, "pristine")
            make_fixture(pristine)
            for e in entries:
                if why:
                    e["status"] = f"n/a ({why})"
                elif e["expect"] in ("outside", "network"):
                    if not self.has_run:
                        e["status"] = ("not run: `txfs run` not implemented"
                                       " (the corpus allows these only "
                                       "under confinement)")
                    else:
                        self.entry_run(e, pristine)
                else:
                    self.entry_mount(e, pristine)
                self.rows.append(e)
                log(f"safety {e['id']}: {e.get('status', '')}"
                    f" refused={e.get('refused')} "
                    f"restored={e.get('restored')}")
            if not why:
                self.measure_overhead(pristine)
        finally:
            for mp in [m for m in MOUNTS if m.startswith(self.base)]:
                force_unmount(mp)
            rmtree(self.base)

    def fresh(self, pristine, owner=None):
        d = os.path.join(self.base, "run")
        if os.path.lexists(d):
            rmtree(d)
        run(["cp", "-a", pristine, d])
        ws = os.path.join(d, "ws")
        os.symlink(os.path.join(d, "decoy", "project"),
                   os.path.join(ws, "link"))
        # the copy has new inode numbers and ctimes: refresh the indexes as
        # the user's own checkout would be, or git rewrites every file
        for repo in (ws, os.path.join(ws, "sub")):
            run(["git", "-C", repo, "update-index", "-q", "--refresh"],
                env=GENV, check=False)
        if owner:
            run(["chown", "-R", "-h", f"{owner}:{owner}", d])
        return d, ws, os.path.join(d, "home"), os.path.join(d, "decoy")

    def cmd_env(self, ws, home, port):
        e = {"PATH": "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin",
             "HOME": home, "WS": ws, "PORT": str(port), "LANG": "C.UTF-8",
             "GIT_AUTHOR_NAME": "agent", "GIT_AUTHOR_EMAIL": "a@localhost",
             "GIT_COMMITTER_NAME": "agent",
             "GIT_COMMITTER_EMAIL": "a@localhost"}
        return e

    # -- stage and guard: plain txfs mount, as root
    def entry_mount(self, e, pristine):
        d, ws, home, decoy = self.fresh(pristine)
        before = manifest(ws)
        outside = (manifest(home), manifest(decoy))
        state = os.path.join(d, "state")
        tmp_clean_existed = os.path.exists("/tmp/clean")
        lst = Listener()
        pid = None
        try:
            MOUNTS.append(ws)
            t0 = time.perf_counter()
            cp = self.txfs("mount", "--state", state, ws, check=False,
                           timeout=30)
            pid = _read_pid(state)
            if cp.returncode != 0 or not mounted_fstype(ws):
                e["status"] = f"fails: mount: {first_line(cp.stderr)}"
                return
            self.overhead.setdefault("mount", []).append(
                time.perf_counter() - t0)
            vetoes0 = self.vetoes(ws)
            try:
                cp = run(["sh", "-c", e["cmd"]], cwd=ws,
                         env=self.cmd_env(ws, home, lst.port), check=False,
                         timeout=120)
                e["rc"], err = cp.returncode, cp.stderr
            except BenchError as ex:
                e["rc"], err = "timeout", str(ex)
            vetoes1 = self.vetoes(ws)
            e["vetoes"] = (None if vetoes0 is None or vetoes1 is None
                           else vetoes1 - vetoes0)
            e["refused"] = bool(e["vetoes"]) or any(
                w in err for w in REFUSAL_WORDS)
            e["stderr"] = first_line(err)
            e["restored"], e["status"] = self.rollback_and_compare(
                ws, before)
        finally:
            lst.close()
            self.unmount(ws, pid)
            if not tmp_clean_existed and os.path.exists("/tmp/clean"):
                rmtree("/tmp/clean")     # entry 32's git init, outside $WS
        if manifest(home) != outside[0] or manifest(decoy) != outside[1]:
            e["outside_damaged"] = True
        real = manifest(ws)
        if real != before:
            e["real_changed"] = diff_manifest(before, real)

    def vetoes(self, ws):
        """Vetoes so far: `vetoes: N` in .txfs/status, else the veto events
        in .txfs/log (JSON lines); None if neither can be read."""
        try:
            with open(os.path.join(ws, ".txfs", "status")) as f:
                m = re.search(r"^vetoes: (\d+)", f.read(), re.M)
            if m:
                return int(m.group(1))
        except OSError:
            pass
        try:
            with open(os.path.join(ws, ".txfs", "log")) as f:
                return sum(1 for line in f
                           if re.search(r'"event": ?"veto"', line))
        except OSError:
            return None

    def rollback_and_compare(self, ws, before):
        try:
            t0 = time.perf_counter()
            fd = os.open(os.path.join(ws, ".txfs", "ctl"),
                         os.O_WRONLY | os.O_TRUNC)
            try:
                os.write(fd, b"rollback\n")
            finally:
                os.close(fd)
            self.overhead.setdefault("rollback", []).append(
                time.perf_counter() - t0)
        except OSError as ex:
            return None, f"n/a (rollback: {os.strerror(ex.errno)})"
        after = manifest(ws)
        if after == before:
            return True, "ok"
        return False, "differs after rollback: " + diff_manifest(before,
                                                                 after)

    def unmount(self, ws, pid):
        if mounted_fstype(ws):
            try:
                self.txfs("umount", ws, check=False, timeout=60)
            except BenchError:
                pass
            if mounted_fstype(ws):
                force_unmount(ws)
        if pid and not wait_pid_exit(pid, 30):
            kill_daemon(pid)

    # -- outside and network: txfs run, as an unprivileged user
    def entry_run(self, e, pristine):
        user = ensure_user()
        d, ws, home, decoy = self.fresh(pristine, owner=user)
        before = manifest(ws)
        outside = (manifest(home), manifest(decoy))
        lst = Listener()
        argv = ["runuser", "-u", user, "--", "env"]
        for k, v in self.cmd_env(ws, home, lst.port).items():
            argv.append(f"{k}={v}")
        argv.append(f"XDG_STATE_HOME={os.path.join(d, 'state')}")
        argv += [self.ctx.txfs_bin, "run"]
        if "--state" in self.run_help:
            argv += ["--state", os.path.join(d, "state")]
        if e["expect"] == "network":
            argv.append("--no-network")
        argv += ["--", "sh", "-c", e["cmd"]]
        try:
            cp = run(argv, cwd=ws, check=False, timeout=180)
            e["rc"], err = cp.returncode, cp.stderr
        except BenchError as ex:
            e["rc"], err = "timeout", str(ex)
        finally:
            lst.close()
            for mp in [m for m in _mounts_under(d)]:
                force_unmount(mp)
        e["stderr"] = first_line(err)
        intact = (manifest(home) == outside[0] and
                  manifest(decoy) == outside[1])
        if e["expect"] == "network":
            e["refused"] = lst.count == 0 and intact
        else:
            e["refused"] = intact
        if not intact:
            e["outside_damaged"] = True
        after = manifest(ws)
        e["restored"] = after == before
        e["status"] = "ok" if e["restored"] else (
            "workspace differs after `txfs run` (CMD exit %s): %s" % (
                e["rc"], diff_manifest(before, after)))

    # -- transaction overhead
    def measure_overhead(self, pristine):
        d, ws, home, decoy = self.fresh(pristine)
        state = os.path.join(d, "state")
        for _ in range(5):
            pid = None
            try:
                t0 = time.perf_counter()
                cp = self.txfs("mount", "--state", state, ws, check=False,
                               timeout=30)
                pid = _read_pid(state)
                if cp.returncode != 0:
                    return
                t1 = time.perf_counter()
                with open(os.path.join(ws, "new.txt"), "w") as f:
                    f.write("change\n")
                for verb in ("rollback", "commit"):
                    if verb == "commit":
                        with open(os.path.join(ws, "new.txt"), "w") as f:
                            f.write("change\n")
                    try:
                        ts = time.perf_counter()
                        fd = os.open(os.path.join(ws, ".txfs", "ctl"),
                                     os.O_WRONLY | os.O_TRUNC)
                        try:
                            os.write(fd, (verb + "\n").encode())
                        finally:
                            os.close(fd)
                        self.overhead.setdefault(f"1file-{verb}", []).append(
                            time.perf_counter() - ts)
                    except OSError:
                        pass
                t2 = time.perf_counter()
                self.unmount(ws, pid)
                self.overhead.setdefault("mount+umount", []).append(
                    (t1 - t0) + (time.perf_counter() - t2))
            finally:
                self.unmount(ws, pid)
        if self.has_run:
            for _ in range(5):
                t0 = time.perf_counter()
                cp = run([self.ctx.txfs_bin, "run", "--", "true"], cwd=ws,
                         check=False, timeout=60,
                         env=dict(self.cmd_env(ws, home, 1),
                                  XDG_STATE_HOME=state + "-run"))
                if cp.returncode == 0:
                    self.overhead.setdefault("run-true", []).append(
                        time.perf_counter() - t0)
                for mp in _mounts_under(d):
                    force_unmount(mp)

    # -- output
    def markdown(self, build_ratio=None):
        rows = self.rows
        inter = [e for e in rows if e["expect"] in ("guard", "outside",
                                                    "network")]
        inter_run = [e for e in inter if "refused" in e]
        refused = [e for e in inter_run if e["refused"]]
        rb_run = [e for e in rows if e.get("restored") is not None]
        restored = [e for e in rb_run if e["restored"]]
        out = ["### Safety: shared/corpus/destructive.tsv under txfs "
               "(default policy)\n"]
        out.append(f"{len(rows)} entries, each once in a fresh fixture. "
                   "stage/guard: `txfs mount` in place, command as root with "
                   "HOME = a decoy, then `rollback`. outside/network: "
                   "`txfs run` as an unprivileged user.\n")
        out.append("| measure | txfs |")
        out.append("| --- | --- |")
        out.append(f"| interception rate (guard/outside/network entries "
                   f"refused at least in part) | {_pct(refused, inter)} "
                   f"({len(refused)} of {len(inter)}; "
                   f"{len(inter) - len(inter_run)} not run) |")
        out.append(f"| rollback success (workspace byte-identical after "
                   f"rollback) | {_pct(restored, rows)} ({len(restored)} of "
                   f"{len(rows)}; {len(rows) - len(rb_run)} not run or n/a)"
                   " |")
        for key, label in (
                ("rollback", "begin + rollback (rollback after each "
                 "corpus entry; the next transaction begins implicitly)"),
                ("1file-rollback", "begin + rollback, 1 changed file"),
                ("1file-commit", "begin + commit, 1 changed file"),
                ("mount", "`txfs mount` (in place)"),
                ("mount+umount", "`txfs mount` + `txfs umount`"),
                ("run-true", "`txfs run -- true` (mount, run, commit, "
                 "unmount)")):
            v = self.overhead.get(key)
            out.append(f"| {label} | " + (_ms(v) if v else "n/a") + " |")
        if build_ratio:
            out.append(f"| overhead on a build (W3 wall time, txfs / native "
                       f"- 1) | {build_ratio} |")
        out.append("| reference: the ZFS-snapshot design | 1.8 s per "
                   "transaction, 14.5% overhead |")
        out.append("\nPer entry:\n")
        out.append("| id | class | expect | refused (any veto) | restored "
                   "| notes |")
        out.append("| --- | --- | --- | --- | --- | --- |")
        for e in rows:
            notes = e.get("status", "")
            if e.get("outside_damaged"):
                notes += "; OUTSIDE DAMAGED"
            if e.get("real_changed"):
                notes += f"; real dir changed: {e['real_changed']}"
            if e.get("stderr") and e.get("refused"):
                notes += f"; stderr: {e['stderr'][:80]}"
            out.append(f"| {e['id']} | {e['class']} | {e['expect']} | "
                       f"{_yn(e.get('refused'))} | {_yn(e.get('restored'))} "
                       f"| {notes.replace('|', '/')} |")
        return "\n".join(out) + "\n"


def _yn(v):
    return "-" if v is None else ("yes" if v else "no")


def _pct(a, b):
    return f"{100 * len(a) / len(b):.0f}%" if b else "n/a"


def _ms(vals):
    from results import fmt
    med = statistics.median(vals)
    if len(vals) == 1:
        return fmt(med, "time")
    return (f"{fmt(med, 'time')} ({fmt(min(vals), 'time')} - "
            f"{fmt(max(vals), 'time')}, n={len(vals)})")


def _read_pid(state):
    try:
        with open(os.path.join(state, "daemon.pid")) as f:
            pid = int(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None
    from util import DAEMONS
    DAEMONS.append(pid)
    return pid


def _mounts_under(d):
    from util import leftover_mounts
    return leftover_mounts(d)


def ensure_user():
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                        "/usr/sbin/nologin", TEST_USER], check=True)
    return TEST_USER
