#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""exec_probe.py - where the time of one `txfs exec -- CMD` goes (not a test).

    exec_probe.py TXFS_A MNT_A TXFS_B MNT_B RUNS [CMD...]

TXFS_A and TXFS_B are two builds with the clock_gettime probes of
bench/tools/exec_probe.patch applied (git apply it in a copy of the tree,
build there; the patch applies to the tree it was made with, 2026-11-24),
each with a mount of its own (MNT_A, MNT_B: mounted by that build, so each
has its own daemon). The driver runs `txfs exec -- CMD` (default: true)
with each build in turn, RUNS rounds, and `true` alone once a round;
TXFS_PROBE_T0 carries the moment of the spawn (CLOCK_MONOTONIC, ns), and
every probe prints its phase and the microseconds since then on stderr.
It prints one markdown table: per phase, the median moment it ended and
the median length of the phase (the difference of those medians), for A
("before") and B ("after"), and the overhead over `true`.
"""
import os, subprocess, sys, time, statistics, collections
(ta, wa), (tb, wb) = (sys.argv[1], sys.argv[2]), (sys.argv[3], sys.argv[4])
n = int(sys.argv[5]); cmdargs = sys.argv[6:] or ["true"]
res = {"A": collections.defaultdict(list), "B": collections.defaultdict(list)}
tot = {"A": [], "B": [], "true": []}
def one(tag, t, ws):
    t0 = time.monotonic_ns()
    p = subprocess.run([t, "exec", "--"] + cmdargs, cwd=ws, env=dict(os.environ, TXFS_PROBE_T0=str(t0)),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    tot[tag].append((time.monotonic_ns() - t0) / 1000)
    for l in p.stderr.splitlines():
        if l.startswith("PROBE "):
            _, pid, what, us = l.split(); res[tag][what].append(int(us))
for i in range(n):
    one("A", ta, wa); one("B", tb, wb)
    t0 = time.monotonic_ns(); subprocess.run(["true"]); tot["true"].append((time.monotonic_ns() - t0) / 1000)
phases = ["main", "setup", "lock", "cmd-begin", "sup-lists", "proctree-start", "sup_new", "child-start",
          "child-confined", "child-helper", "child-notify-loaded", "child-sup", "attached", "waited",
          "sup_free", "spawn_wait", "stop_all", "proctree-end", "cmd-end", "report"]
print("| phase (µs, median of %d interleaved runs) | before: at | before: phase | after: at | after: phase |" % n)
print("|---|---:|---:|---:|---:|")
prev = {"A": 0, "B": 0}
for ph in phases:
    row = []
    for tag in "AB":
        if res[tag][ph]:
            m = statistics.median(res[tag][ph]); row += ["%d" % m, "%d" % (m - prev[tag])]; prev[tag] = m
        else:
            row += ["", ""]
    print("| %s | %s |" % (ph, " | ".join(row)))
mA, mB, mT = statistics.median(tot["A"]), statistics.median(tot["B"]), statistics.median(tot["true"])
print("| exit seen by the caller | %d | %d | %d | %d |" % (mA, mA - prev["A"], mB, mB - prev["B"]))
print("| `true` alone, same way | %d | | %d | |" % (mT, mT))
print("| **overhead over `true`** | **%d** | | **%d** | |" % (mA - mT, mB - mT))
