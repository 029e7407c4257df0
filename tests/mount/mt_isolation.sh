#!/bin/bash
# Several serving threads (-o threads=4) under load from many processes
# while commits, savepoints and rollbacks run through .txfs/ctl.
#
# Phase 1: 4 workers create, append, rename across folders and unlink
# their own files (and a folder), 2 readers check every byte of real
# files no one touches and list/stat folders, while a controller loops
# savepoint/release/commit. Every operation must succeed, nothing may
# hang, and after a last commit the merged view and the real directory
# must equal the same work done one step at a time in a plain directory.
# Phase 2: the controller takes a savepoint, creates a batch of 30 files
# in a real folder, says so, rolls back and says so; 3 observers list
# that folder meanwhile: once a batch is complete they must see all of it
# or none of it (a rollback is never seen half done), and after the
# rollback answered, none of it. Readers keep checking the real files.
. "$(dirname "$0")/lib.sh"
fixture
for r in 0 1 2 3 4 5 6 7; do
	mkdir -p "$WS/r$r"
	for i in $(seq 40); do "$FSOP" fill "$WS/r$r/f$i" $(((i * 769 + r * 97) % 20000 + 1)) $((i + 100 * r)); done
done
mkdir -p "$WS/x0" "$WS/x1" "$WS/x2" "$WS/x3" "$WS/logs" "$WS/batch"
(cd "$WS" && sha256sum r4/* r5/* r6/* r7/*) >"$T/real.sums"
model
MOUNTS+=("$MNT|$STATE")	# the trap detaches it if a bad value mounted
for bad in 0 65 x 4x ""; do
	t 30 "$TXFS" mount --state "$STATE" -o "threads=$bad" "$WS" "$MNT" </dev/null >"$T/bad.out" 2>&1
	rc=$?
	check_eq "-o threads=$bad is refused (exit 2, says why, nothing mounted)" "2 yes no" \
		"$rc $(grep -q "threads=$bad: not a number from 1 to 64" "$T/bad.out" && echo yes || echo "no: $(head -c 200 "$T/bad.out")") $(is_mounted "$MNT" && echo yes || echo no)"
done
txfs_mount -o threads=4 || exit 1
pid=$DAEMON_PID
check_eq "the daemon serves with 4 threads (+ its helper threads)" yes \
	"$([ "$(ls "/proc/$pid/task" | wc -l)" -ge 5 ] && echo yes || echo "no: $(ls "/proc/$pid/task" | wc -l) threads")"

# where worker W's file I ends up (renamed every third one)
wfile() { # ROOT W I
	if (($3 % 3 == 0)); then echo "$1/x$((($3 + $2 + 1) % 4))/w$2_$3_m"; else echo "$1/x$((($3 + $2) % 4))/w$2_$3"; fi
}
worker() { # ROOT W
	local r=$1 w=$2 i d
	for i in $(seq 60); do
		d=$r/x$(((i + w) % 4))
		printf 'worker %d file %d\n' "$w" "$i" >"$d/w${w}_$i" || return 1
		printf 'appended %d\n' "$i" >>"$d/w${w}_$i" || return 1
		if ((i % 3 == 0)); then mv "$d/w${w}_$i" "$(wfile "$r" "$w" "$i")" || return 1; fi
		if ((i % 5 == 0)); then rm "$(wfile "$r" "$w" $((i - 1)))" || return 1; fi
		printf '%d\n' "$i" >>"$r/logs/w$w.log" || return 1
	done
	mkdir "$r/x0/wd$w" && echo in >"$r/x0/wd$w/f" && mv "$r/x0/wd$w" "$r/x$((w % 4))/wd${w}_moved" || return 1
	mv "$r/r$w/f1" "$r/x$(((w + 1) % 4))/real_from_r$w" || return 1
	rm "$r/r$w/f2" || return 1
	printf 'tail %d\n' "$w" >>"$r/r$w/f3" || return 1
}
reader() { # until the stop file exists: check real bytes, list, stat
	local n=0
	while [ ! -e "$T/stop.$1" ]; do
		(cd "$MNT" && sha256sum --quiet -c "$T/real.sums") >"$T/reader.$BASHPID" 2>&1 || { echo "reader: sums: $(head -c 300 "$T/reader.$BASHPID")"; return 1; }
		ls -la "$MNT/x0" "$MNT/x1" "$MNT/x2" "$MNT/x3" "$MNT/r0" >/dev/null 2>&1
		stat "$MNT"/r5/* >/dev/null || { echo "reader: stat failed"; return 1; }
		n=$((n + 1))
	done
	echo "reader passes: $n" >>"$T/reader.count"
}
ctl() { # VERB...: one write; fails with the errno name on stderr
	printf '%s\n' "$*" >"$MNT/.txfs/ctl"
}
export -f wfile worker reader ctl
export T MNT

# ---- phase 1 ----------------------------------------------------------------
pids=()
for w in 0 1 2 3; do timeout -k 5 240 bash -c "worker '$MNT' $w" & pids+=($!); done
rpids=()
for k in 1 2; do timeout -k 5 240 bash -c "reader 1" >>"$T/reader.err" & rpids+=($!); done
verbs=0 vfail=0
while :; do
	alive=0
	for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
	[ $alive = 1 ] || break
	for v in "savepoint a" "release a" commit; do
		if t 60 bash -c "ctl $v" 2>>"$T/ctl.err"; then verbs=$((verbs + 1)); else vfail=$((vfail + 1)); fi
	done
done
bad=0
for p in "${pids[@]}"; do wait "$p" || bad=$((bad + 1)); done
check_eq "phase 1: the 4 workers finished without an error or timeout" 0 "$bad"
touch "$T/stop.1"
rbad=0
for p in "${rpids[@]}"; do wait "$p" || rbad=$((rbad + 1)); done
check_eq "phase 1: readers saw every real byte, every stat worked" "0 " "$rbad $(cat "$T/reader.err")"
check_eq "phase 1: every control verb succeeded ($verbs of them)" "0 " "$vfail $(head -c 300 "$T/ctl.err")"
if [ "$verbs" -ge 3 ]; then ok "phase 1: verbs ran while the workers did ($verbs)"; else fail "phase 1: expected verbs during the work got $verbs"; fi
check_eq "the daemon is still the same process" "$pid" "$(daemon_pid)"

for w in 0 1 2 3; do worker "$MODEL" "$w"; done
check_same "phase 1: merged view equals the model"
check_run "phase 1: last commit" bash -c "ctl commit"
check_tree "phase 1: the real directory equals the model after the commit" "$WS" "$MODEL" -ox
if (cd "$WS" && sha256sum --quiet -c "$T/real.sums") >/dev/null 2>&1; then
	ok "the real files no worker touched are unchanged"
else
	fail "untouched real files changed"
fi
snapshot_real	# finish checks that phase 2 leaves the real directory alone

# ---- phase 2 ----------------------------------------------------------------
# marker: "c K" batch K complete, "r K" rollback of batch K answered
echo "r 0" >"$T/marker"
observer() {
	local m1 m2 k n seen=0
	while [ ! -e "$T/stop.2" ]; do
		m1=$(cat "$T/marker")
		k=${m1#* }
		# one listing (one getdents snapshot), not a glob of stats:
		# ls | grep on purpose
		n=$(ls "$MNT/batch" | grep -c "^k${k}_")
		m2=$(cat "$T/marker")
		case "$m1|$m2" in
		"c $k|c $k" | "c $k|r $k")
			[ "$n" = 0 ] || [ "$n" = 30 ] || { echo "observer: batch $k half seen: $n of 30 ($m1 -> $m2)"; return 1; }
			seen=$((seen + 1)) ;;
		"r $k|"*)
			[ "$n" = 0 ] || { echo "observer: batch $k seen ($n files) after its rollback answered"; return 1; }
			[ -e "$MNT/batch/k${k}_$((RANDOM % 30 + 1))" ] && { echo "observer: a name of batch $k resolves after its rollback answered"; return 1; } ;;
		esac
	done
	echo "observer: $seen checks inside a batch window" >>"$T/observer.count"
}
export -f observer
opids=()
for k in 1 2 3; do timeout -k 5 240 bash -c observer >>"$T/observer.err" & opids+=($!); done
rpids=()
for k in 1 2; do timeout -k 5 240 bash -c "reader 2" >>"$T/reader2.err" & rpids+=($!); done
p2fail=0
for k in $(seq 1 15); do
	t 60 bash -c "ctl savepoint p$k" 2>>"$T/ctl.err" || { p2fail=$((p2fail + 1)); continue; }
	t 60 bash -c "for i in \$(seq 30); do echo $k.\$i >'$MNT/batch/k${k}_'\$i; done" || p2fail=$((p2fail + 1))
	echo "c $k" >"$T/marker"
	sleep 0.2
	t 60 bash -c "ctl rollback p$k" 2>>"$T/ctl.err" || p2fail=$((p2fail + 1))
	echo "r $k" >"$T/marker"
	# one listing again (ls | grep on purpose)
	left=$(ls "$MNT/batch" | grep -c "^k${k}_")
	[ "$left" = 0 ] || { p2fail=$((p2fail + 1)); echo "batch $k: $left files left after rollback" >>"$T/ctl.err"; }
	# by name too: the kernel cached each name when it was created; the
	# rollback answers only once those entries are invalidated
	left=$(for i in $(seq 30); do [ -e "$MNT/batch/k${k}_$i" ] && echo x; done | wc -l)
	[ "$left" = 0 ] || { p2fail=$((p2fail + 1)); echo "batch $k: $left names still resolve after rollback" >>"$T/ctl.err"; }
	t 60 bash -c "ctl release p$k" 2>>"$T/ctl.err" || p2fail=$((p2fail + 1))
done
touch "$T/stop.2"
obad=0
for p in "${opids[@]}"; do wait "$p" || obad=$((obad + 1)); done
rbad=0
for p in "${rpids[@]}"; do wait "$p" || rbad=$((rbad + 1)); done
check_eq "phase 2: 15 savepoint/batch/rollback rounds without an error" "0 " "$p2fail $(head -c 300 "$T/ctl.err")"
check_eq "phase 2: no observer saw half a rollback, or a batch after it" "0 " "$obad $(cat "$T/observer.err")"
check_eq "phase 2: readers saw every real byte" "0 " "$rbad $(cat "$T/reader2.err")"
cat "$T/observer.count" "$T/reader.count" 2>/dev/null | sed 's/^/    /'
check_eq "the mount still answers (statfs)" 0 "$(t 10 stat -f "$MNT" >/dev/null; echo $?)"
check_eq "the daemon is still the same process" "$pid" "$(daemon_pid)"
check_same "phase 2: merged view equals the model (every batch rolled back)"
finish
