#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# bench/exec_cpu.sh - the daemon's CPU time per `txfs exec` of a one-file
# change in a session with 2,000 staged files (not a test).
#
#   bench/exec_cpu.sh TXFS_A TXFS_B [RUNS]
#
# Mounts a workspace under /var/tmp with each build (a daemon each),
# stages 2,000 files with one command, then runs RUNS rounds (default
# 200) of `txfs exec -- sh -c 'echo x >> f'`, A then B, and adds up the
# daemon's utime+stime (/proc/PID/stat: every thread, ended ones too)
# around each command. CPU time is what cmd-end's planning costs, and it
# hardly moves with the load of a shared machine, unlike wall time.
set -u -o pipefail
A=$(readlink -f "$1") B=$(readlink -f "$2") N=${3:-200}
D=$(mktemp -d /var/tmp/txfs-bench-cpu.XXXXXX) || exit 1
for s in a b; do
	mkdir -p "$D/$s/ws" "$D/$s/st"
	echo a >"$D/$s/ws/f"
done
cleanup() {
	cd /
	"$A" umount -z "$D/a/ws" >/dev/null 2>&1
	"$B" umount -z "$D/b/ws" >/dev/null 2>&1
	rm -rf "$D"
}
trap cleanup EXIT
timeout 30 "$A" mount --state "$D/a/st" "$D/a/ws" || exit 1
timeout 30 "$B" mount --state "$D/b/st" "$D/b/ws" || exit 1
pa=$(cat "$D/a/st/daemon.pid") pb=$(cat "$D/b/st/daemon.pid")
for s in a b; do
	t=$A
	[ $s = b ] && t=$B
	(cd "$D/$s/ws" && "$t" exec -- sh -c 'for i in $(seq 2000); do echo $i > g$i; done') >/dev/null 2>&1
done
cpu() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
one() {	# one: TXFS WS PID -> ticks
	local c
	c=$(cpu "$3")
	(cd "$2" && "$1" exec -- sh -c 'echo x >> f') >/dev/null 2>&1
	echo $(($(cpu "$3") - c))
}
ta=0 tb=0
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
for _ in $(seq "$N"); do
	ta=$((ta + $(one "$A" "$D/a/ws" "$pa")))
	tb=$((tb + $(one "$B" "$D/b/ws" "$pb")))
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
hz=$(getconf CLK_TCK)
echo "| build | daemon CPU ticks ($N commands) | ms per command |"
echo "|---|---:|---:|"
echo "| A $A | $ta | $(echo "scale=2; $ta * 1000 / $hz / $N" | bc) |"
echo "| B $B | $tb | $(echo "scale=2; $tb * 1000 / $hz / $N" | bc) |"
