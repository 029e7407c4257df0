#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/run_overhead.sh - what `txfs run` costs around a command (not a test).
#
#   bench/run_overhead.sh [TXFS] [RUNS]
#
# TXFS: the txfs binary (default build/cli/txfs, or $TXFS); RUNS: runs per
# row (default 20; the make rows use RUNS/4, at least 5). Prints a markdown
# table:
#   - `true` directly vs `txfs run -- true` (mount, confine, run, commit of
#     an empty transaction, unmount): median and min-max wall time;
#   - `make -j2` of a generated C project (50 files) from clean, directly
#     vs `txfs run -- make -j2` (the objects and the binary are committed;
#     the real directory is cleaned between runs, outside the timing);
#   - begin+commit and begin+rollback per transaction, from the --json
#     report's "seconds" (txfs run's own clock: mount to unmount), with a
#     one-file change (`echo x > f`, and `...; exit 1` for the rollback);
# beside the figures a ZFS-snapshot transactional sandbox reports (1.8 s per
# transaction, 14.5% overhead).
#
# Everything happens in a temp folder under /var/tmp (a disk, not tmpfs),
# removed at the end; the state folders are there too. Needs python3 (timing
# and JSON), make and cc.

set -u -o pipefail
export LC_ALL=C
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TXFS=${1:-${TXFS:-$ROOT/build/cli/txfs}}
RUNS=${2:-20}
MRUNS=$((RUNS / 4 < 5 ? 5 : RUNS / 4))
PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3)
[ -x "$TXFS" ] || { echo "run_overhead: no txfs binary at $TXFS (build it, or pass its path)" >&2; exit 2; }
command -v make >/dev/null && command -v cc >/dev/null || { echo "run_overhead: make and cc are needed" >&2; exit 2; }
TXFS=$(readlink -f "$TXFS")

B=$(mktemp -d /var/tmp/txfs-run-overhead.XXXXXX) || exit 1
cleanup() {
	local pid m
	for m in "$B/ws" "$B/proj"; do
		pid=$({ tr -dc 0-9 <"$m.state/daemon.pid"; } 2>/dev/null)
		if [ -n "$pid" ] && grep -qa txfs "/proc/$pid/cmdline" 2>/dev/null; then kill -9 "$pid"; fi
	done
	for m in "$B/ws" "$B/proj"; do
		awk -v m="$m" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts &&
			{ fusermount3 -uz "$m" 2>/dev/null || umount -l "$m"; }
	done
	rm -rf "$B"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$B/ws" "$B/proj"
echo seed >"$B/ws/seed.txt"

# timeit N OUT [--pre 'shell'] -- CMD...: run CMD N times (after the --pre
# snippet each time, not timed), one wall time in seconds a line to OUT;
# fails if CMD fails. Timed in one python process (no fork of a clock).
timeit() {
	"$PY" - "$@" <<'PY'
import subprocess, sys, time
n, out, args = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
pre = None
if args[0] == "--pre":
    pre, args = args[1], args[2:]
assert args[0] == "--"
cmd = args[1:]
with open(out, "a") as f:
    for _ in range(n):
        if pre:
            subprocess.run(pre, shell=True, check=True)
        a = time.monotonic()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        b = time.monotonic()
        if r.returncode != 0:
            sys.stderr.write("run_overhead: %s: exit %d: %s\n" % (" ".join(cmd), r.returncode, r.stderr.decode(errors="replace")[-2000:]))
            sys.exit(1)
        f.write("%.6f\n" % (b - a))
PY
}
# stats FILE: "median min max" of the numbers in FILE
stats() { "$PY" - "$1" <<'PY'
import statistics, sys
v = [float(x) for x in open(sys.argv[1]) if x.strip()]
print("%.6f %.6f %.6f" % (statistics.median(v), min(v), max(v)))
PY
}
# fmt SECONDS: a readable duration
fmt() { awk -v s="$1" 'BEGIN { if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'; }

# ---- true ----------------------------------------------------------------------------
timeit "$RUNS" "$B/true.direct" -- true || exit 1
timeit "$RUNS" "$B/true.txfs" -- "$TXFS" run -C "$B/ws" --state "$B/ws.state" -- true || exit 1

# ---- make -j2 of a generated project -------------------------------------------------------
gen_project() {
	local d=$1 i
	mkdir -p "$d/src" "$d/include"
	printf '#ifndef MODS_H\n#define MODS_H\n' >"$d/include/mods.h"
	for i in $(seq 1 49); do
		printf 'int mod%d(int x);\n' "$i" >>"$d/include/mods.h"
		cat >"$d/src/mod$i.c" <<EOF
#include <stdio.h>
#include <string.h>
#include "mods.h"
static int table${i}[64];
static int helper$i(int x) { int s = 0; for (int k = 0; k < 64; k++) s += table${i}[k] * (x + k); return s; }
int mod$i(int x)
{
	char buf[64];
	snprintf(buf, sizeof(buf), "mod$i:%d", x);
	for (int k = 0; k < 64; k++) table${i}[k] = k * $i;
	return helper$i(x) + (int)strlen(buf);
}
EOF
	done
	printf '#endif\n' >>"$d/include/mods.h"
	{
		printf '#include <stdio.h>\n#include "mods.h"\nint main(void)\n{\n\tlong s = 0;\n'
		for i in $(seq 1 49); do printf '\ts += mod%d(%d);\n' "$i" "$i"; done
		printf '\tprintf("%%ld\\n", s);\n\treturn 0;\n}\n'
	} >"$d/src/main.c"
	cat >"$d/Makefile" <<'EOF'
CFLAGS = -O1 -Iinclude
SRCS = $(wildcard src/*.c)
OBJS = $(SRCS:src/%.c=obj/%.o)
app: $(OBJS)
	$(CC) -o $@ $(OBJS)
obj/%.o: src/%.c include/mods.h | obj
	$(CC) $(CFLAGS) -c -o $@ $<
obj:
	mkdir -p obj
clean:
	rm -rf obj app
EOF
}
gen_project "$B/proj"
make -C "$B/proj" -s -j2 >/dev/null && "$B/proj/app" >/dev/null || { echo "run_overhead: the generated project does not build" >&2; exit 1; }
NFILES=$(find "$B/proj/src" -name '*.c' | wc -l)
for _ in $(seq "$MRUNS"); do	# interleaved: the machine's load drifts
	timeit 1 "$B/make.direct" --pre "make -C '$B/proj' -s clean" -- make -C "$B/proj" -s -j2 || exit 1
	timeit 1 "$B/make.txfs" --pre "make -C '$B/proj' -s clean" -- \
		"$TXFS" run -C "$B/proj" --state "$B/proj.state" -- make -s -j2 || exit 1
	[ -x "$B/proj/app" ] || { echo "run_overhead: txfs run -- make did not commit app" >&2; exit 1; }
done
make -C "$B/proj" -s clean

# ---- begin+commit, begin+rollback (the report's "seconds") -----------------------------
secs() { "$PY" -c 'import json, sys; s = sys.stdin.read(); print(json.JSONDecoder().raw_decode(s[s.rfind("{\"action\":"):])[0]["seconds"])'; }
: >"$B/commit.s"
: >"$B/rollback.s"
for i in $(seq "$RUNS"); do
	"$TXFS" run -C "$B/ws" --state "$B/ws.state" --json -- sh -c "echo $i > f" 2>/dev/null | secs >>"$B/commit.s"
	"$TXFS" run -C "$B/ws" --state "$B/ws.state" --json -- sh -c "echo $i > g; exit 1" 2>/dev/null | secs >>"$B/rollback.s"
done
[ -s "$B/commit.s" ] && [ -s "$B/rollback.s" ] || { echo "run_overhead: no JSON seconds" >&2; exit 1; }

# ---- the table ---------------------------------------------------------------------------------
read -r td tdmin tdmax < <(stats "$B/true.direct")
read -r tt ttmin ttmax < <(stats "$B/true.txfs")
read -r md mdmin mdmax < <(stats "$B/make.direct")
read -r mt mtmin mtmax < <(stats "$B/make.txfs")
read -r cs csmin csmax < <(stats "$B/commit.s")
read -r rs rsmin rsmax < <(stats "$B/rollback.s")
pct=$(awk -v a="$md" -v b="$mt" 'BEGIN { printf "%+.1f%%", (b - a) / a * 100 }')
pctmin=$(awk -v a="$mdmin" -v b="$mtmin" 'BEGIN { printf "%+.1f%%", (b - a) / a * 100 }')

cat <<EOF

## txfs run overhead

$(uname -sr), Landlock ABI $("$PY" -c 'import ctypes; print(ctypes.CDLL(None, use_errno=True).syscall(444, None, 0, 1))' 2>/dev/null || echo '?'), $(nproc) CPUs; work folder on $(df -T "$B" | awk 'NR == 2 { print $2 }'); $(id -un); runs: $RUNS ($MRUNS for make).

| what | direct | under \`txfs run\` | overhead | ZFS-snapshot sandbox (reported) |
| --- | --- | --- | --- | --- |
| \`true\` (median, min-max) | $(fmt "$td") ($(fmt "$tdmin")-$(fmt "$tdmax")) | $(fmt "$tt") ($(fmt "$ttmin")-$(fmt "$ttmax")) | +$(fmt "$(awk -v a="$td" -v b="$tt" 'BEGIN { print b - a }')") per command | 1.8 s per transaction |
| \`make -j2\`, $NFILES C files, from clean (median, min-max) | $(fmt "$md") ($(fmt "$mdmin")-$(fmt "$mdmax")) | $(fmt "$mt") ($(fmt "$mtmin")-$(fmt "$mtmax")) | $pct (medians), $pctmin (minima) | 14.5% |
| begin+commit, one new file (JSON "seconds", median, min-max) | - | $(fmt "$cs") ($(fmt "$csmin")-$(fmt "$csmax")) | - | 1.8 s |
| begin+rollback, one new file (JSON "seconds", median, min-max) | - | $(fmt "$rs") ($(fmt "$rsmin")-$(fmt "$rsmax")) | - | - |

\`txfs run\` = mount in place + Landlock/seccomp + CMD + commit or rollback + unmount; the wall times include starting the txfs process.
EOF
