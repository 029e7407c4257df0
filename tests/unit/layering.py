#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The request path stays one-way: fs/ is one folder a module, and a
folder calls only the folders below it (each folder's header says the
same): daemon -> ops -> session -> commit -> history, and
commit | view -> layer | lower.

Reads which object file of fs/ calls which (`nm` of the built static
library: a symbol one object leaves undefined and another defines; meson
names the object of fs/view/namei.c "view_namei.c.o") and checks:
  1. every object sits in a folder of FOLDERS (a new folder must say here
     what it may call), and calls only its own folder and those FOLDERS
     allows it;
  2. inside view/, the core (namei, readdir, inode, inode_relink, inval,
     ctlns) calls only itself, layer/ and lower/ (no do_*() of
     dir/file/attr, not the guard);
  3. the only call cycles between files are the ones listed in
     ALLOWED_CYCLES, each with its reason: a new cycle fails, and so does
     a listed one that is gone (then the list must shrink).

usage: layering.py LIBTXFS_FS.a [NM]
"""
import subprocess
import sys

# Each folder of fs/ and the folders it may call besides itself.
FOLDERS = {
    "daemon": {"ops", "session", "commit", "history", "view", "layer",
               "lower"},
    "ops": {"session", "commit", "view", "layer", "lower"},
    "session": {"commit", "history", "view", "layer", "lower"},
    "commit": {"history", "layer", "lower"},
    "history": {"layer", "lower"},
    "view": {"layer", "lower"},
    "layer": set(),
    "lower": set(),
}

# The view's core, and what it may call besides itself: the layer and the
# real directory. The rest of view/ (dir, file, attr, datamap, guard,
# ilist, killpriv, spin) is above it.
VIEW = {"namei", "readdir", "inode", "inode_relink", "inval", "ctlns"}
BELOW_VIEW = {"layer", "layer_chunk", "layer_names", "reserve", "undo",
              "lower"}

# Cycles that are one module's two halves, each kept on purpose.
ALLOWED_CYCLES = {
    # the layer's write primitives record their undo steps (lput, ldel,
    # lcdel); undo replays them with the layer's own primitives
    frozenset({"layer", "undo"}),
    # the plan and its steps are one file split in two (plan.c was 852
    # lines): the plan builds its steps (plan_steps), the steps look
    # objects up in the plan (plan_obj)
    frozenset({"plan", "steps"}),
}


def graph(lib, nm):
    """(symbol -> defining module, module -> {module: symbols it calls})
    from `nm -A -P -g`: "LIB[MEMBER.o]: SYMBOL TYPE [VALUE SIZE]"."""
    out = subprocess.run([nm, "-A", "-P", "-g", lib], check=True,
                         capture_output=True, text=True).stdout
    owner, uses = {}, []
    for line in out.splitlines():
        head, sep, rest = line.rpartition("]: ")
        parts = rest.split()
        if not sep or len(parts) < 2:
            continue
        mod = module(head.rsplit("[", 1)[-1])
        if parts[1] == "U":
            uses.append((mod, parts[0]))
        elif parts[1] in "TDBRCV":
            owner[parts[0]] = mod
    edges = {}
    for src, sym in uses:
        dst = owner.get(sym)
        if dst and dst != src:
            edges.setdefault(src, {}).setdefault(dst, set()).add(sym)
    return owner, edges


def module(obj):
    """view_attr.c.o (or .../libtxfs_fs.a.p/view_attr.c.o) -> attr"""
    return split(obj)[1]


def split(obj):
    """view_attr.c.o -> ("view", "attr"); no known folder: ("", name)"""
    name = obj.rsplit("/", 1)[-1]
    for suffix in (".o", ".c"):
        if name.endswith(suffix):
            name = name[: -len(suffix)]
    folder, sep, rest = name.partition("_")
    if sep and folder in FOLDERS:
        return folder, rest
    return "", name


def folders(lib, nm):
    """module -> folder, for every object of the library"""
    out = subprocess.run([nm, "-A", "-P", "-g", lib], check=True,
                         capture_output=True, text=True).stdout
    where = {}
    for line in out.splitlines():
        head, sep, _ = line.rpartition("]: ")
        if sep:
            folder, mod = split(head.rsplit("[", 1)[-1])
            where[mod] = folder
    return where


def cycles(edges):
    """Strongly connected components of more than one module."""
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]
    nodes = set(edges) | {d for v in edges.values() for d in v}

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                comps.append(frozenset(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return comps


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    lib = sys.argv[1]
    nm = sys.argv[2] if len(sys.argv) > 2 else "nm"
    owner, edges = graph(lib, nm)
    mods = set(owner.values())
    bad = 0
    where = folders(lib, nm)
    for mod, folder in sorted(where.items()):
        if not folder:
            print(f"layering: {mod} is in no folder of FOLDERS: every file "
                  "of fs/ sits in a module folder")
            bad += 1
    for src, dsts in sorted(edges.items()):
        for dst, syms in sorted(dsts.items()):
            a, b = where.get(src, ""), where.get(dst, "")
            if a and b and a != b and b not in FOLDERS[a]:
                print(f"layering: {a}/ calls {b}/: {src} -> {dst} "
                      f"({', '.join(sorted(syms))})")
                bad += 1
    for must in VIEW | BELOW_VIEW | {"ops", "guard", "ctl", "txn"}:
        if must not in mods:
            print(f"layering: no module {must} in {lib}: the check is "
                  "reading the wrong library", file=sys.stderr)
            return 1
    for src in sorted(VIEW):
        for dst, syms in sorted(edges.get(src, {}).items()):
            if dst not in VIEW | BELOW_VIEW:
                print(f"layering: the view calls up: {src} -> {dst} "
                      f"({', '.join(sorted(syms))})")
                bad += 1
    found = set(cycles(edges))
    for comp in sorted(found - ALLOWED_CYCLES, key=sorted):
        print(f"layering: a new call cycle: {' <-> '.join(sorted(comp))}")
        for src in sorted(comp):
            for dst, syms in sorted(edges.get(src, {}).items()):
                if dst in comp:
                    print(f"  {src} -> {dst}: {', '.join(sorted(syms))}")
        bad += 1
    for comp in sorted(ALLOWED_CYCLES - found, key=sorted):
        print(f"layering: the cycle {' <-> '.join(sorted(comp))} is gone: "
              "take it out of ALLOWED_CYCLES")
        bad += 1
    calls = sum(len(v) for v in edges.values())
    print(f"layering: {len(set(where.values()))} folders, {len(mods)} modules, {calls} module-to-module "
          f"edges, cycles: {len(found)} (all listed)" if not bad else
          f"layering: {bad} problem(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
