#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/exec_overhead.sh - what `txfs exec` costs around a command (not a
# test).
#
#   bench/exec_overhead.sh [TXFS] [RUNS] [TXFS_B]
#
# TXFS: the txfs binary (default build/cli/txfs, or $TXFS); RUNS: runs per
# row (default 200). Mounts a small workspace under /var/tmp once, then
# times (python3, wall clock, one process spawn each):
#   - `true` directly;
#   - `txfs exec -- true` (cmd-begin: savepoint; confine, run, reap the
#     tree; cmd-end: changes since the savepoint, keep);
#   - `txfs exec -- sh -c 'echo x >> f'` (a one-file change, kept);
#   - `txfs exec -- sh -c 'echo x >> f; exit 1'` (rolled back);
#   - `sh -c 'echo x >> f'` directly;
# and prints a markdown table of median and p90 in ms, the overhead of
# `txfs exec -- true` over `true` and their ratio, beside the 1.8 s per
# transaction a ZFS-snapshot transactional sandbox reports.
#
# The machine may be shared: the rows are interleaved (one run of each row
# per round, RUNS rounds), so a burst of load hits every row alike, and
# the load average before and after is printed. With TXFS_B (another
# build, e.g. the one before a change) every `txfs exec` row is also run
# with it, on a mount of its own (its own daemon), interleaved the same
# way: an A/B comparison in one run.
#
# The savepoints of kept commands stay open (txfs rollback --command
# needs them), so later runs see more of them. A last part stages 2,000
# files first and times `txfs exec -- true` and a one-file change again
# (RUNS/4 rounds): what a command costs in a big session (a change is
# compared with the command's savepoint: cmd-end plans the layer).

set -u -o pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TXFS=$(readlink -f "${1:-${TXFS:-$ROOT/build/cli/txfs}}") || exit 1
RUNS=${2:-200}
TXFS_B=${3:+$(readlink -f "$3")}
D=$(mktemp -d /var/tmp/txfs-bench-exec.XXXXXX) || exit 1
cleanup() {
	cd /
	"$TXFS" umount -z "$D/a/ws" >/dev/null 2>&1
	[ -n "$TXFS_B" ] && "$TXFS_B" umount -z "$D/b/ws" >/dev/null 2>&1
	rm -rf "$D"
}
trap cleanup EXIT
for s in a ${TXFS_B:+b}; do
	mkdir -p "$D/$s/ws" "$D/$s/state"
	echo a >"$D/$s/ws/f"
done
timeout 30 "$TXFS" mount --state "$D/a/state" "$D/a/ws" || exit 1
if [ -n "$TXFS_B" ]; then
	timeout 30 "$TXFS_B" mount --state "$D/b/state" "$D/b/ws" || exit 1
fi
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$TXFS" "$RUNS" "$D" "$TXFS_B" <<'PY'
import os, statistics, subprocess, sys, time
txfs, runs, d, txfs_b = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
builds = [("", txfs, d + "/a/ws")] + ([(" [B]", txfs_b, d + "/b/ws")] if txfs_b else [])
rows = [("`true`", None, ["true"])]
for tag, t, ws in builds:
    rows += [
        ("`txfs exec -- true`" + tag, ws, [t, "exec", "--", "true"]),
        ("`txfs exec -- sh -c 'echo x >> f'` (kept)" + tag, ws,
         [t, "exec", "--", "sh", "-c", "echo x >> f"]),
        ("`txfs exec -- sh -c 'echo x >> f; exit 1'` (rolled back)" + tag, ws,
         [t, "exec", "--", "sh", "-c", "echo x >> f; exit 1"]),
    ]
rows.append(("`sh -c 'echo x >> f'` directly", builds[0][2], ["sh", "-c", "echo x >> f"]))

def once(cwd, cmd):
    t = time.perf_counter()
    subprocess.run(cmd, cwd=cwd or builds[0][2], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) * 1e3

def stats(ts):
    ts = sorted(ts)
    return statistics.median(ts), ts[max(int(len(ts) * 0.9) - 1, 0)]

def interleaved(rows, rounds):
    res = {name: [] for name, _, _ in rows}
    for _ in range(rounds):
        for name, cwd, cmd in rows:
            res[name].append(once(cwd, cmd))
    return {k: stats(v) for k, v in res.items()}

res = interleaved(rows, runs)
print("| command (%d runs each, interleaved) | median ms | p90 ms |" % runs)
print("|---|---:|---:|")
for name, _, _ in rows:
    print("| %s | %.2f | %.2f |" % (name, *res[name]))
base = res["`true`"][0]
for tag, _, _ in builds:
    e = res["`txfs exec -- true`" + tag][0]
    print("| overhead of `txfs exec`%s (median, true) | %.2f | |" % (tag, e - base))
    print("| ratio `txfs exec -- true`%s / `true` | %.1fx | |" % (tag, e / base))
# a big session: 2,000 staged files
big = [("`true`", None, ["true"])]
for tag, t, ws in builds:
    subprocess.run([t, "exec", "--", "sh", "-c",
                    "for i in $(seq 2000); do echo $i > g$i; done"], cwd=ws,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    big.append(("`txfs exec -- true` with 2,000 staged files" + tag, ws,
                [t, "exec", "--", "true"]))
    big.append(("`txfs exec -- sh -c 'echo x >> f'` with 2,000 staged files" + tag,
                ws, [t, "exec", "--", "sh", "-c", "echo x >> f"]))
n = max(runs // 4, 10)
res = interleaved(big, n)
for name, _, _ in big[1:]:
    print("| %s (%d runs) | %.2f | %.2f |" % (name, n, *res[name]))
print("| ZFS-snapshot transactional sandbox, per transaction | 1800 | |")
PY
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
