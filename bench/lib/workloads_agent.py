# SPDX-License-Identifier: Apache-2.0
"""W10 and W11: what an agent's installs and checkouts do to a workspace.

W10  npm: `npm ci` of a fixed lockfile (express, typescript, eslint and
     their dependencies) from a warm offline npm cache, `rm -rf
     node_modules`, and `npm ci` again.
W11  git: `git clone --local --no-hardlinks` of a repository (the W2
     tree with a second, distant commit), then `git checkout` from that
     commit to the first and back.

Preparation, once per work dir (prepare_agent): W10 needs the npm
registry once: the lockfile is resolved from the pinned top-level
versions below (`npm install --package-lock-only`) and every tarball is
fetched into a cache of its own (`npm ci --cache DIR` in a scratch
folder); every timed install after that is `npm ci --offline` against
that cache, so no round touches the network. Where the registry cannot
be reached the rows say so (n/a), never a number. W11's second commit is
made locally: 1 in 4 files edited, one folder of the tree deleted and a
copy of another added under a new name, so the two commits differ in
thousands of files.
"""
import json
import os
import shutil

import env
from results import na
from util import BenchError, log, rmtree, run, syncfs
from workloads import (CPU_NOTE, RATIO_CAPTION, add_wall_cpu, each_round,
                       timed_cpu, wdir, with_cpu)

W10_PACKAGES = {"express": "4.21.2", "typescript": "5.6.3",
                "eslint": "8.57.1"}
NPM_FLAGS = ["--no-audit", "--no-fund", "--ignore-scripts",
             "--loglevel=error"]


def _npm_env(ctx):
    home = os.path.join(ctx.src, "w10-home")
    os.makedirs(home, exist_ok=True)
    return dict(os.environ, HOME=home, npm_config_update_notifier="false")


def prepare_w10(ctx):
    """The lockfile and the warm cache; ctx.w10_err says why not."""
    base = os.path.join(ctx.src, "w10")
    cache = os.path.join(ctx.src, "w10-cache")
    ctx.w10_dir, ctx.w10_cache, ctx.w10_err = base, cache, None
    if os.path.exists(os.path.join(base, "ready")):
        return
    if not shutil.which("npm"):
        ctx.w10_err = "npm not installed"
        return
    if os.path.exists(base):
        rmtree(base)
    os.makedirs(base)
    with open(os.path.join(base, "package.json"), "w") as f:
        json.dump({"name": "w10", "version": "1.0.0", "private": True,
                   "dependencies": W10_PACKAGES}, f, indent=1)
    e = _npm_env(ctx)
    try:
        log("W10: resolving the lockfile (npm registry)")
        run(["npm", "install", "--package-lock-only", "--cache", cache] +
            NPM_FLAGS, cwd=base, env=e, timeout=600)
        scratch = os.path.join(ctx.src, "w10-scratch")
        if os.path.exists(scratch):
            rmtree(scratch)
        os.makedirs(scratch)
        for n in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(base, n), scratch)
        log("W10: filling the npm cache")
        run(["npm", "ci", "--cache", cache] + NPM_FLAGS, cwd=scratch,
            env=e, timeout=900)
        ctx.w10_files = sum(len(fs) for _, _, fs in
                            os.walk(os.path.join(scratch, "node_modules")))
        with open(os.path.join(base, "files"), "w") as f:
            f.write(str(ctx.w10_files))
        rmtree(scratch)
    except BenchError as ex:
        ctx.w10_err = f"npm registry: {ex.short[:80]}"
        return
    open(os.path.join(base, "ready"), "w").close()


def prepare_w11(ctx):
    """A bare-free copy of W2's repository with a second, distant commit."""
    src = os.path.join(ctx.src, "repo")
    repo = os.path.join(ctx.src, "w11-repo")
    ctx.w11_repo = repo
    if os.path.exists(os.path.join(ctx.src, "w11-ready")):
        return
    if os.path.exists(repo):
        rmtree(repo)
    run(["git", "clone", "-q", "--no-hardlinks", src, repo],
        env=env.GIT_ENV, timeout=900)
    g = ["git", "-C", repo]
    files = sorted(run(g + ["ls-files"], env=env.GIT_ENV).stdout.split())
    for f in files[::4]:
        with open(os.path.join(repo, f), "a") as fh:
            fh.write("\n/* W11: the second commit */\n")
    tops = sorted({f.split("/", 1)[0] for f in files if "/" in f})
    if len(tops) >= 2:
        run(["cp", "-a", os.path.join(repo, tops[0]),
             os.path.join(repo, tops[0] + "-copy")], timeout=600)
        run(g + ["rm", "-r", "-q", "-f", tops[-1]], env=env.GIT_ENV,
            timeout=600)
    run(g + ["add", "-A"], env=env.GIT_ENV, timeout=600)
    run(g + ["commit", "-q", "-m", "W11: the second commit"],
        env=env.GIT_ENV, timeout=600)
    run(g + ["gc", "-q"], env=env.GIT_ENV, timeout=900)
    ctx.w11_changed = len(run(g + ["diff", "--name-only", "HEAD~1", "HEAD"],
                              env=env.GIT_ENV).stdout.split())
    with open(os.path.join(ctx.src, "w11-ready"), "w") as f:
        f.write(str(ctx.w11_changed))


def prepare_agent(ctx, need):
    if "W10" in need:
        prepare_w10(ctx)
        try:
            with open(os.path.join(ctx.w10_dir, "files")) as f:
                ctx.w10_files = int(f.read())
        except (OSError, ValueError):
            ctx.w10_files = 0
    if "W11" in need:
        prepare_w11(ctx)
        with open(os.path.join(ctx.src, "w11-ready")) as f:
            ctx.w11_changed = int(f.read() or 0)


# ------------------------------------------------------------------ W10
def w10(ctx, R, peers, rounds):
    keys = ["W10.ci", "W10.rm", "W10.ci2"]
    keys += [k + ".cpu" for k in keys]
    n = getattr(ctx, "w10_files", 0)
    R.table("W10: npm ci from a warm offline cache", RATIO_CAPTION,
            with_cpu([("W10.ci", f"npm ci --offline ({n:,} files in "
                       "node_modules)", "time", True),
                      ("W10.rm", "rm -rf node_modules", "time", True),
                      ("W10.ci2", "npm ci --offline again", "time", True)]),
            rounds,
            ["Top level: " + ", ".join(f"{k} {v}" for k, v in
                                       W10_PACKAGES.items()) +
             "; the lockfile and the cache were made once from the npm "
             "registry (bench/lib/workloads_agent.py); every timed run is "
             "offline. txfs runs with its default policy (node_modules "
             "made in the transaction: removing it is no loss).", CPU_NOTE])
    if ctx.w10_err:
        for p in peers:
            for r in range(rounds):
                R.fill(keys, p, r, na(ctx.w10_err))
        return
    e = _npm_env(ctx)
    cmd = ["npm", "ci", "--offline", "--cache", ctx.w10_cache] + NPM_FLAGS

    def body(p, rnd):
        mnt = p.mount(wdir(ctx, "w10", p), "w10")
        for n in ("package.json", "package-lock.json"):
            shutil.copy(os.path.join(ctx.w10_dir, n), mnt)
        syncfs()
        add_wall_cpu(R, "W10.ci", p, rnd,
                     timed_cpu(p, cmd, cwd=mnt, env=e, timeout=1200))
        add_wall_cpu(R, "W10.rm", p, rnd,
                     timed_cpu(p, ["rm", "-rf", "node_modules"], cwd=mnt,
                               timeout=600))
        add_wall_cpu(R, "W10.ci2", p, rnd,
                     timed_cpu(p, cmd, cwd=mnt, env=e, timeout=1200))
    each_round(ctx, R, peers, keys, rounds, "W10", body)


# ------------------------------------------------------------------ W11
def w11(ctx, R, peers, rounds):
    keys = ["W11.clone", "W11.back", "W11.fwd"]
    keys += [k + ".cpu" for k in keys]
    R.table("W11: git clone --local and checkout", RATIO_CAPTION,
            with_cpu([("W11.clone", f"git clone --local --no-hardlinks "
                       f"({ctx.tree_files:,} files)", "time", True),
                      ("W11.back", f"git checkout HEAD~1 "
                       f"({ctx.w11_changed:,} paths differ)", "time", True),
                      ("W11.fwd", "git checkout back to the newest commit",
                       "time", True)]), rounds,
            ["The repository is W2's tree with a second commit (1 in 4 "
             "files edited, one folder deleted, one copied under a new "
             "name). `git clone --local --no-hardlinks`: the objects are "
             "copied for every peer (with hard links the real directory "
             "would win by sharing the source's inodes, and git refuses "
             "--local across file systems: EXDEV from any overlay).",
             CPU_NOTE])
    g_env = env.GIT_ENV

    def body(p, rnd):
        mnt = p.mount(wdir(ctx, "w11", p), "w11")
        syncfs()
        dst = os.path.join(mnt, "clone")
        add_wall_cpu(R, "W11.clone", p, rnd, timed_cpu(
            p, ["git", "clone", "-q", "--local", "--no-hardlinks",
                ctx.w11_repo, dst],
            env=g_env, timeout=1200))
        branch = run(["git", "-C", dst, "rev-parse", "--abbrev-ref", "HEAD"],
                     env=g_env).stdout.strip()
        add_wall_cpu(R, "W11.back", p, rnd, timed_cpu(
            p, ["git", "-C", dst, "checkout", "-q", "HEAD~1"], env=g_env,
            timeout=1200))
        add_wall_cpu(R, "W11.fwd", p, rnd, timed_cpu(
            p, ["git", "-C", dst, "checkout", "-q", branch], env=g_env,
            timeout=1200))
    each_round(ctx, R, peers, keys, rounds, "W11", body)


WORKLOADS = {"W10": w10, "W11": w11}
