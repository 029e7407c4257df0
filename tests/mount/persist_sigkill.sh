#!/bin/bash
# A daemon killed with SIGKILL at a random moment loses nothing a program
# had written before the kill (write(2) returned; no fsync), nor any
# namespace change that had returned; the next `txfs mount` cleans the dead
# mount by itself and works without repair. Several rounds, each killed
# while a data writer and a metadata writer are busy.
. "$(dirname "$0")/lib.sh"
fixture
rounds=4
RANDOM=$$
# txfs mount over the dead mount of the previous round: it must clean it by
# itself; if it does not, that is one failure, and the test detaches by hand
# to go on checking durability.
mount_over_dead() {
	if ! txfs_mount; then
		force_detach
		txfs_mount || exit 1
	fi
	check_eq "exactly one mount at the mount point" 1 "$(awk -v m="$MNT" '$2 == m' /proc/self/mounts | wc -l)"
}
for r in $(seq $rounds); do
	mount_over_dead
	t 10 mkdir "$MNT/meta$r" || fail "round $r: mkdir failed"
	t 10 "$FSOP" mmap-write "$MNT/big.bin" $((r * 1000)) "MMAP-ROUND-$r" || fail "round $r: mmap-write failed"
	timeout 120 "$FSOP" writer "$MNT/log$r" "$T/wlog$r" 25000 &
	w1=$!
	timeout 120 "$FSOP" metawriter "$MNT/meta$r" "$T/mlog$r" 100000 &
	w2=$!
	# wait until both writers are under way, then kill at a random moment
	for i in $(seq 100); do [ -s "$T/wlog$r" ] && [ -s "$T/mlog$r" ] && break; sleep 0.1; done
	sleep "$((1 + RANDOM % 12))e-1"
	kill_daemon || exit 1
	wait $w1 $w2
	echo "# round $r: $(wc -l <"$T/wlog$r") records and $(wc -l <"$T/mlog$r") namespace operations returned before the kill"
	[ -s "$T/wlog$r" ] || fail "round $r: the writer wrote nothing before the kill (test too short?)"
	[ -s "$T/mlog$r" ] || fail "round $r: the metadata writer did nothing before the kill"
	if [ "$(fstype_of "$MNT")" = "" ]; then
		echo "# round $r: the dead mount is already gone"
	fi
done
mount_over_dead
for r in $(seq $rounds); do
	out=$(t 60 "$FSOP" verify "$MNT/log$r" "$T/wlog$r" 2>&1) && ok "round $r: all $out records written before the kill are intact" ||
		fail "round $r: $out"
	out=$(t 60 "$FSOP" verify-meta "$MNT/meta$r" "$T/mlog$r" 2>&1) && ok "round $r: all $out namespace operations done before the kill are in effect" ||
		fail "round $r: $out"
	check_eq "round $r: msync'ed mmap store survived" "MMAP-ROUND-$r" \
		"$(t 10 "$FSOP" pread "$MNT/big.bin" $((r * 1000)) $((11 + ${#r})))"
done
check_run "the mount works for new writes after the kills" bash -c 'echo fine > "$MNT/after" && cat "$MNT/after"'
remount || exit 1
check_content "and keeps them across a clean remount" "$MNT/after" fine
finish
