# SPDX-License-Identifier: Apache-2.0
"""The bench environment: packages, the private ext4 image, helper binaries,
the source trees every workload uses, and the txfs binary under test.

Layout under the work dir (default /var/tmp/txfs-bench):
  ext4.img, fs/           private ext4 image (loop) mounted at fs/; every
                          peer's real directory, upper layer and state live
                          in fs/, so all peers share one file system
  fs/bin/                 meta, partial, passthrough_ll (built here)
  fs/src/tree.tar         W1 input: a subset of linux-source-6.1
  fs/src/tree/            the same tree extracted (W7 copies it)
  fs/src/repo/            git repository of the tree (W2 copies it)
  fs/src/linux/           the whole linux-source-6.1 tree (W3)
  fs/peers/NAME/...       per-peer upper/work/state/mount points
"""
import os
import shutil
import subprocess

from util import BenchError, MOUNTS, log, mounted_fstype, rmtree, run

LINUX_TARBALL = "/usr/src/linux-source-6.1.tar.xz"
LINUX_TOP = "linux-source-6.1"
# W1/W2/W7 tree: these top-level folders of linux-source-6.1 (5,4xx files).
TREE_DIRS = ["fs", "kernel", "mm", "net", "lib", "block", "ipc", "init",
             "io_uring"]
QUICK_TREE_DIRS = ["kernel", "mm"]
PACKAGES = {"fuse-overlayfs": "/usr/bin/fuse-overlayfs",
            "fio": "/usr/bin/fio",
            "linux-source-6.1": LINUX_TARBALL,
            "libfuse3-dev": "/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c",
            "fuse3": "/usr/bin/fusermount3",
            "flex": "/usr/bin/flex", "bison": "/usr/bin/bison",
            "bc": "/usr/bin/bc", "libelf-dev": "/usr/include/libelf.h",
            "libssl-dev": "/usr/include/openssl/ssl.h",
            "git": "/usr/bin/git", "gcc": "/usr/bin/gcc",
            "make": "/usr/bin/make", "pkg-config": "/usr/bin/pkg-config",
            "meson": "/usr/bin/meson", "ninja-build": "/usr/bin/ninja",
            "liblmdb-dev": "/usr/include/lmdb.h",
            "libseccomp-dev": "/usr/include/seccomp.h",
            "xz-utils": "/usr/bin/xz", "e2fsprogs": "/usr/sbin/mkfs.ext4"}
PTLL_SRC = "/usr/share/doc/libfuse3-dev/examples/passthrough_ll.c"
HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO = os.path.dirname(HERE)


class Ctx:
    """Everything the workloads need to know about the environment."""

    def __init__(self, args):
        self.args = args
        self.quick = args.quick
        self.work = os.path.abspath(args.workdir)
        self.fs = os.path.join(self.work, "fs")
        self.fs_note = ""
        self.bin = os.path.join(self.fs, "bin")
        self.src = os.path.join(self.fs, "src")
        self.loopdev = None
        self.ptll_bin = self.ptll_err = None
        self.txfs_bin = self.txfs_err = None
        self.txfs_rev = ""
        self.txfs_policy_w7 = None
        self.tree_files = 0
        self.tree_bytes = 0
        self.notes = []


def install_packages(ctx):
    missing = [p for p, f in PACKAGES.items() if not os.path.exists(f)]
    if not missing:
        return
    log(f"apt-get install {' '.join(missing)}")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    cp = run(["apt-get", "install", "-y", "-q"] + missing, env=env,
             timeout=1800, check=False)
    if cp.returncode != 0:
        run(["apt-get", "update", "-q"], env=env, timeout=600, check=False)
        run(["apt-get", "install", "-y", "-q"] + missing, env=env,
            timeout=1800)


def setup_fs(ctx, size_gib):
    """Private ext4 image on a loop device at ctx.fs, or the local disk."""
    os.makedirs(ctx.fs, exist_ok=True)
    if mounted_fstype(ctx.fs):
        raise BenchError(f"{ctx.fs} is already a mount: another bench "
                         "running? (remove it with umount)")
    img = os.path.join(ctx.work, "ext4.img")
    try:
        if os.geteuid() != 0:
            raise BenchError("not root")
        with open(img, "wb") as f:
            f.truncate(size_gib << 30)
        run(["mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,"
             "lazy_journal_init=0", img], timeout=300)
        # direct I/O: the image's writes and fsyncs reach the disk instead
        # of the host's page cache, and drop_caches leaves no dirty
        # backing-file pages to flush behind the next measurement's back
        dio = "direct I/O"
        cp = run(["losetup", "-f", "--show", "--direct-io=on", img],
                 check=False)
        if cp.returncode != 0:
            dio = "buffered (direct I/O refused)"
            cp = run(["losetup", "-f", "--show", img])
        ctx.loopdev = cp.stdout.strip()
        run(["mount", "-t", "ext4", ctx.loopdev, ctx.fs])
        ctx.fs_note = (f"private ext4 image ({size_gib} GiB, sparse file on "
                       f"the local disk {fs_of(ctx.work)}, loop device with "
                       f"{dio}, default mount options)")
    except BenchError as e:
        if ctx.loopdev:
            run(["losetup", "-d", ctx.loopdev], check=False)
            ctx.loopdev = None
        if os.path.exists(img):
            os.unlink(img)
        ctx.fs_note = (f"local disk {fs_of(ctx.work)} (no private ext4 "
                       f"image: {e})")
    log(f"file system: {ctx.fs_note}")


def fs_of(path):
    cp = run(["findmnt", "-n", "-o", "SOURCE,FSTYPE", "-T", path],
             check=False)
    return cp.stdout.strip()


def teardown_fs(ctx):
    if mounted_fstype(ctx.fs):
        cp = run(["umount", ctx.fs], check=False, timeout=120)
        if cp.returncode != 0:
            run(["umount", "-l", ctx.fs], check=False)
    if ctx.loopdev:
        run(["losetup", "-d", ctx.loopdev], check=False)
    if not ctx.args.keep:
        rmtree(ctx.work)


def trim(ctx):
    """Give freed blocks of the image back to the host disk."""
    if ctx.loopdev:
        run(["fstrim", ctx.fs], check=False, timeout=300)


def build_tools(ctx):
    os.makedirs(ctx.bin, exist_ok=True)
    for name in ("meta", "partial"):
        run(["gcc", "-O2", "-Wall", "-o", os.path.join(ctx.bin, name),
             os.path.join(HERE, "tools", name + ".c")])
    # The FUSE floor: compiled from the installed libfuse3-dev example.
    try:
        flags = run(["pkg-config", "fuse3", "--cflags", "--libs"]).stdout
        out = os.path.join(ctx.bin, "passthrough_ll")
        run(["gcc", "-O2", "-Wall", PTLL_SRC, "-o", out] + flags.split())
        ctx.ptll_bin = out
    except BenchError as e:
        ctx.ptll_err = f"build failed: {e}"


def build_txfs(ctx):
    """Use --txfs BIN, or build the repository into the work dir.

    --txfs-src head (default) builds the committed HEAD (git archive), so a
    result names the exact commit; if HEAD does not build, the working tree
    is tried and the header says so. worktree builds only the working tree.
    """
    if ctx.args.txfs:
        if os.access(ctx.args.txfs, os.X_OK):
            ctx.txfs_bin = os.path.abspath(ctx.args.txfs)
            derive_policy(ctx, os.path.join(REPO, "policy", "default.policy"))
            ctx.txfs_rev = "given with --txfs"
        else:
            ctx.txfs_err = f"{ctx.args.txfs} is not executable"
        return
    head = run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"],
               check=False).stdout.strip()
    dirty = run(["git", "-C", REPO, "status", "--porcelain", "-uno"],
                check=False).stdout.strip()
    tries = ["head", "worktree"] if ctx.args.txfs_src == "head" \
        else ["worktree"]
    errors = []
    for how in tries:
        src = os.path.join(ctx.work, f"txfs-src-{how}")
        bdir = os.path.join(ctx.work, f"txfs-build-{how}")
        try:
            rmtree(src)
            os.makedirs(src)
            if how == "head":
                run(f"git -C '{REPO}' archive HEAD | tar x -C '{src}'",
                    shell=True)
            else:
                run(f"tar cf - -C '{REPO}' --exclude=./build --exclude=./.git"
                    f" --exclude='./build-*' . | tar x -C '{src}'",
                    shell=True)
            rmtree(bdir)
            run(["meson", "setup", bdir, src], timeout=600)
            run(["nice", "-n", "10", "ninja", "-C", bdir, "cli/txfs"],
                timeout=1800)
        except BenchError as e:
            errors.append(f"{how}: {e.short}")
            log(f"txfs {how} does not build: {e}")
            continue
        binp = os.path.join(bdir, "cli", "txfs")
        if os.access(binp, os.X_OK):
            ctx.txfs_bin = binp
            derive_policy(ctx, os.path.join(src, "policy", "default.policy"))
            ctx.txfs_rev = (f"HEAD {head}" if how == "head" else
                            f"working tree on {head}" +
                            (" (uncommitted changes)" if dirty else ""))
            return
        errors.append(f"{how}: no cli/txfs after the build")
    ctx.txfs_rev = f"HEAD {head}"
    ctx.txfs_err = "txfs does not build"
    ctx.notes.append("txfs does not build: " + "; ".join(errors))


W7_DELETES = 1000000   # also W9's rm -rf of 100,100 names


def derive_policy(ctx, default):
    """W7's policy: the default one with `limit deletes` raised to
    W7_DELETES (its rm -rf removes 5,4xx real files, which the default
    guard refuses past 1,000 by design); every other line as shipped."""
    if not os.path.exists(default):
        return
    out = os.path.join(ctx.work, "w7.policy")
    with open(default) as f, open(out, "w") as g:
        for line in f:
            words = line.split("#")[0].split()
            if words[:2] == ["limit", "deletes"] and len(words) > 2:
                line = line.replace(words[2], str(W7_DELETES), 1)
            g.write(line)
    ctx.txfs_policy_w7 = out


def prepare_trees(ctx, need):
    """Extract the source trees the selected workloads need."""
    os.makedirs(ctx.src, exist_ok=True)
    dirs = QUICK_TREE_DIRS if ctx.quick else TREE_DIRS
    if need & {"W1", "W2", "W7", "W11"} and not os.path.exists(
            os.path.join(ctx.src, "tree.tar")):
        log(f"extracting linux-source-6.1 {' '.join(dirs)}")
        stage = os.path.join(ctx.src, "stage")
        os.makedirs(stage, exist_ok=True)
        run(["tar", "xJf", LINUX_TARBALL, "-C", stage] +
            [f"{LINUX_TOP}/{d}" for d in dirs], timeout=900)
        tree = os.path.join(ctx.src, "tree")
        os.rename(os.path.join(stage, LINUX_TOP), tree)
        os.rmdir(stage)
        run(["tar", "cf", os.path.join(ctx.src, "tree.tar"), "-C", tree,
             "."], timeout=600)
        make_repo(ctx, tree)
    tree = os.path.join(ctx.src, "tree")
    if os.path.exists(tree):
        ctx.tree_files, ctx.tree_bytes = count_tree(tree)
        ctx.tree_desc = (f"linux-source-6.1 (Debian package) folders "
                         f"{', '.join(d + '/' for d in dirs)}: "
                         f"{ctx.tree_files:,} files, "
                         f"{ctx.tree_bytes / 2**20:.0f} MiB")
    if "W3" in need and not os.path.exists(os.path.join(ctx.src, "linux")):
        log("extracting the whole linux-source-6.1 tree for W3")
        run(["tar", "xJf", LINUX_TARBALL, "-C", ctx.src], timeout=1800)
        os.rename(os.path.join(ctx.src, LINUX_TOP),
                  os.path.join(ctx.src, "linux"))


def count_tree(path):
    n = size = 0
    for root, _, files in os.walk(path):
        for f in files:
            n += 1
            size += os.lstat(os.path.join(root, f)).st_size
    return n, size


GIT_ENV = dict(os.environ, GIT_AUTHOR_NAME="bench",
               GIT_AUTHOR_EMAIL="bench@localhost", GIT_COMMITTER_NAME="bench",
               GIT_COMMITTER_EMAIL="bench@localhost",
               GIT_CONFIG_NOSYSTEM="1", HOME="/nonexistent")


def make_repo(ctx, tree):
    """W2's repository: the tree committed, then 1 in 100 .c files edited."""
    repo = os.path.join(ctx.src, "repo")
    run(["cp", "-a", tree, repo], timeout=600)
    g = ["git", "-C", repo]
    run(g + ["init", "-q"], env=GIT_ENV)
    run(g + ["add", "-A"], env=GIT_ENV, timeout=600)
    run(g + ["commit", "-q", "-m", "linux-source-6.1 subset"], env=GIT_ENV,
        timeout=600)
    run(g + ["gc", "-q"], env=GIT_ENV, timeout=600)
    cfiles = sorted(run(g + ["ls-files", "*.c"], env=GIT_ENV)
                    .stdout.split())
    for f in cfiles[::100]:
        with open(os.path.join(repo, f), "a") as fh:
            fh.write("/* edited by the bench */\n")
    ctx.repo_edits = len(cfiles[::100])


def refresh_index(repo):
    """A fresh copy has new inode numbers: let git rewrite its index once,
    as it would on the user's own checkout, before anything is timed."""
    run(["git", "-C", repo, "update-index", "-q", "--refresh"],
        env=GIT_ENV, check=False, timeout=600)
    run(["git", "-C", repo, "status", "--porcelain"], env=GIT_ENV,
        timeout=600)


def copy_tree(src, dst):
    if os.path.lexists(dst):
        rmtree(dst)
    run(["cp", "-a", src, dst], timeout=900)


def free_gib(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize / 2**30


def have(cmd):
    return shutil.which(cmd) is not None


def subprocess_ok(argv):
    return subprocess.run(argv, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL).returncode == 0
