#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/exec_overhead.sh - what `txfs exec` costs around a command (not a
# test).
#
#   bench/exec_overhead.sh [TXFS] [RUNS]
#
# TXFS: the txfs binary (default build/cli/txfs, or $TXFS); RUNS: runs per
# row (default 200). Mounts a small workspace under /var/tmp once, then
# times (python3, wall clock, one process spawn each):
#   - `true` directly;
#   - `txfs exec -- true` (cmd-begin: savepoint; confine, run, reap the
#     tree; cmd-end: changes since the savepoint, keep);
#   - `txfs exec -- sh -c 'echo x >> f'` (a one-file change, kept);
#   - `txfs exec -- sh -c 'echo x >> f; exit 1'` (rolled back);
# and prints a markdown table of median and p90 in ms, beside the 1.8 s per
# transaction a ZFS-snapshot transactional sandbox reports. The savepoints
# of kept commands stay open (txfs rollback --command needs them), so later
# runs see more of them: the table shows whether that costs. A last row
# stages 2,000 files first: cmd-end plans the staged layer twice, so the
# cost grows with the session's size.

set -u -o pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TXFS=$(readlink -f "${1:-${TXFS:-$ROOT/build/cli/txfs}}") || exit 1
RUNS=${2:-200}
D=$(mktemp -d /var/tmp/txfs-bench-exec.XXXXXX) || exit 1
trap 'cd /; "$TXFS" umount -z "$D/ws" >/dev/null 2>&1; rm -rf "$D"' EXIT
mkdir -p "$D/ws" "$D/state"
echo a >"$D/ws/f"
"$TXFS" mount --state "$D/state" "$D/ws" || exit 1
cd "$D/ws" || exit 1
python3 - "$TXFS" "$RUNS" <<'PY'
import statistics, subprocess, sys, time
txfs, runs = sys.argv[1], int(sys.argv[2])
rows = [
    ("`true`", ["true"]),
    ("`txfs exec -- true`", [txfs, "exec", "--", "true"]),
    ("`txfs exec -- sh -c 'echo x >> f'` (kept)", [txfs, "exec", "--", "sh", "-c", "echo x >> f"]),
    ("`txfs exec -- sh -c 'echo x >> f; exit 1'` (rolled back)", [txfs, "exec", "--", "sh", "-c", "echo x >> f; exit 1"]),
    ("`sh -c 'echo x >> f'` directly", ["sh", "-c", "echo x >> f"]),
]
res = {}
for name, cmd in rows:
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        ts.append((time.perf_counter() - t) * 1e3)
    ts.sort()
    res[name] = (statistics.median(ts), ts[int(len(ts) * 0.9) - 1])
print("| command (%d runs each) | median ms | p90 ms |" % runs)
print("|---|---:|---:|")
for name, _ in rows:
    print("| %s | %.2f | %.2f |" % (name, *res[name]))
# a big session: 2,000 staged files (cmd-end plans the staged layer)
subprocess.run([txfs, "exec", "--", "sh", "-c",
                "for i in $(seq 2000); do echo $i > g$i; done"],
               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
ts = []
for _ in range(max(runs // 4, 10)):
    t = time.perf_counter()
    subprocess.run([txfs, "exec", "--", "true"], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    ts.append((time.perf_counter() - t) * 1e3)
ts.sort()
print("| `txfs exec -- true` with 2,000 staged files (%d runs) | %.2f | %.2f |"
      % (len(ts), statistics.median(ts), ts[int(len(ts) * 0.9) - 1]))
base = res["`true`"][0]
print("| overhead of `txfs exec` (median, true) | %.2f | |" % (res["`txfs exec -- true`"][0] - base))
print("| ZFS-snapshot transactional sandbox, per transaction | 1800 | |")
PY
