#!/bin/bash
# -o spin=US (fs/view/spin.c): the serving thread polls /dev/fuse for up to US
# µs before it sleeps in read(2). It must serve like the plain loop, spin
# only while requests come close together, and never busy-loop when no
# request comes: after a burst the daemon's CPU time (utime + stime of all
# its threads, /proc/PID/stat) over 2 s of idleness stays near 0, with the
# largest window (1000 µs) and with requests trickling in every few ms.
# Bad values are refused at mount with a clear error.
. "$(dirname "$0")/lib.sh"
fixture

# utime + stime of the daemon, in clock ticks
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
HZ=$(getconf CLK_TCK)

for bad in abc 1001 -5 ""; do
	txfs_mount --expect-fail -o "spin=$bad"
	[ "$RC" != 0 ] && [[ $ERR == *"spin=$bad: not a number of microseconds"* ]] &&
		ok "-o spin=$bad refused: $ERR" ||
		fail "-o spin=$bad: expected a refusal naming spin=$bad got exit $RC: $ERR"
	is_mounted "$MNT" && { fail "-o spin=$bad: mounted anyway"; txfs_umount; }
done

# TXFS_SPIN_ALWAYS=1: spin even while the machine is busy (the test
# machine often is; without it the spin would rightly stay off)
export TXFS_STATS=$T/stats TXFS_SPIN_ALWAYS=1
txfs_mount -o spin=1000 || exit 1
unset TXFS_STATS TXFS_SPIN_ALWAYS
pid=$DAEMON_PID
# After a pause, the daemon (pid) must spend no CPU for 2 s: a daemon
# spinning without requests would use ~2 s (200 ticks at 100 Hz).
idle_check() {
	local c0 c1
	sleep 0.3
	c0=$(cpu_ticks "$pid")
	sleep 2
	c1=$(cpu_ticks "$pid")
	[ $((c1 - c0)) -le $((HZ / 20)) ] &&
		ok "idle after $1: daemon CPU $((c1 - c0)) ticks in 2 s (<= $((HZ / 20)))" ||
		fail "idle after $1: expected daemon CPU <= $((HZ / 20)) ticks in 2 s got $((c1 - c0))"
}

# a burst: 1,000 creates, stats and reads, requests back to back
tsh 120 'mkdir "$MNT/burst" && for i in $(seq 1000); do echo $i > "$MNT/burst/f$i"; done &&
	cat "$MNT"/burst/f* | wc -l' >"$T/nread" 2>&1
check_eq "the burst's 1,000 files read back" 1000 "$(cat "$T/nread")"
idle_check "the burst"
txfs_umount || exit 1
# the spin ran (TXFS_STATS counts it) and found requests awake
show "$T/stats" "daemon stats" 12
val() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print -1 }' "$2"; }
spins=$(val spin_spins "$T/stats") hits=$(val spin_hits "$T/stats") ready=$(val spin_ready "$T/stats")
[ "$spins" -gt 1000 ] && ok "spins counted: $spins" || fail "spin_spins: expected > 1000 got $spins"
[ $((hits + ready)) -gt $((spins / 4)) ] &&
	ok "spins found requests (> a quarter): $hits caught + $ready ready of $spins" ||
	fail "spin hits: expected > a quarter of $spins got $hits caught + $ready ready"

# a trickle: one create every ~5 ms (a sleep's fork and exec apart) for
# about 2 s. Every create's last request is followed by a gap longer than
# the window: the spin must stay short (3x the average short gap) and not
# cost the whole window (1 ms) per create (8-19% of the time measured so;
# the adaptive spin: ~1%) (counted by
# the daemon itself, spin_us, so a slow daemon under ASan does not skew it)
export TXFS_STATS=$T/stats2 TXFS_SPIN_ALWAYS=1
txfs_mount -o spin=1000 || exit 1
unset TXFS_STATS TXFS_SPIN_ALWAYS
pid=$DAEMON_PID
t0=$(date +%s%N)
tsh 60 'mkdir "$MNT/trickle" && end=$((SECONDS + 2)); i=0
	while [ $SECONDS -lt $end ]; do : > "$MNT/trickle/f$i"; i=$((i + 1)); sleep 0.005; done; echo $i' >"$T/ntrickle" 2>&1
ms=$((($(date +%s%N) - t0) / 1000000))
n=$(cat "$T/ntrickle")
[ "$n" -gt 10 ] && ok "trickle: $n creates in $ms ms" || fail "trickle: expected > 10 creates got '$n'"
idle_check "the trickle"
txfs_umount || exit 1
show "$T/stats2" "daemon stats, trickle" 12
us=$(val spin_us "$T/stats2")
[ "$us" -ge 0 ] && [ $((us / 1000)) -le $((ms * 4 / 100)) ] &&
	ok "trickle: spun $us µs in $ms ms (<= 4%)" ||
	fail "trickle: expected spin_us <= 4% of $ms ms got $us µs"

# spin=0 is off: no spin counters; the staged files are still there
export TXFS_STATS=$T/stats0
txfs_mount -o spin=0 || exit 1
unset TXFS_STATS
check_eq "spin=0: the burst's files after remount" 1000 "$(ls "$MNT/burst" | wc -l)"
txfs_umount || exit 1
grep -q '^spin_' "$T/stats0" && fail "spin=0: expected no spin_ lines in the stats got some" ||
	ok "spin=0: nothing spun"

# without -o spin the default window (50 µs) is on: the spin counters are
# written
export TXFS_STATS=$T/statsd
txfs_mount || exit 1
unset TXFS_STATS
check_eq "default: the burst's files after remount" 1000 "$(ls "$MNT/burst" | wc -l)"
txfs_umount || exit 1
grep -q '^spin_' "$T/statsd" && ok "default: the spin is on" ||
	fail "default: expected spin_ lines in the stats (spin on by default) got none"
finish
