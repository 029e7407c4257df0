#!/bin/bash
# SIGKILL sweep: ROUNDS (default 40) commits of a small change set (16
# files: new, modified, deleted, renamed, a renamed folder, and a sparse
# 4 MiB real file written in two places, which commit patches in place)
# each killed with
# SIGKILL after a random delay of 0-30 ms (TXFS_SWEEP_MAX_MS) after the
# commit was started, then recovered (odd rounds: txfs recover STATE, then
# mount; even rounds: mount directly) and checked: the real directory is
# exactly the before or the after tree; before -> the mount shows the
# staged changes and a plain commit succeeds; after -> nothing is staged.
#
# This is the random sample beyond the fault points: every fault point of
# a commit is crashed at once, deterministically, by crash_commit,
# crash_patch and crash_patch_only (TXFS_FAULT=commit:N), so the sweep
# needs no more rounds than it takes to land kills in each phase (before,
# inside before and after the commit point, after: about 60% of the kills
# land inside, see the counts it prints). The delays come from a new seed
# each run, printed first, so that runs differ and a failing run can be
# replayed: TXFS_SEED=S (and TXFS_SWEEP_ROUNDS=N for more rounds).
. "$(dirname "$0")/txnlib.sh"
ROUNDS=${TXFS_SWEEP_ROUNDS:-40}
SEED=${TXFS_SEED:-$(( $(date +%s%N) / 1000 % 1000000000 ))}
MAXMS=${TXFS_SWEEP_MAX_MS:-30}
RANDOM=$SEED
echo "# seed $SEED (replay: TXFS_SEED=$SEED TXFS_SWEEP_ROUNDS=$ROUNDS)"
CRASH_TPL=$T/tpl
mkdir -p "$CRASH_TPL/src/lib" "$CRASH_TPL/docs" "$CRASH_TPL/old"
for i in 1 2 3 4 5 6; do echo "module $i" >"$CRASH_TPL/src/m$i.c"; done
for i in 1 2 3; do echo "lib $i" >"$CRASH_TPL/src/lib/l$i.c"; echo "doc $i" >"$CRASH_TPL/docs/d$i.md"; done
for i in 1 2; do echo "old $i" >"$CRASH_TPL/old/o$i"; done
# a real file changed in part: committed in place (CS_PATCH); sparse, and
# small so that hashing it every round stays cheap (crash_patch.sh has the
# 64 MiB one)
truncate -s 4M "$CRASH_TPL/docs/data.bin"
"$FSOP" fill "$CRASH_TPL/docs/head.bin" 1M 21
dd if="$CRASH_TPL/docs/head.bin" of="$CRASH_TPL/docs/data.bin" conv=notrunc status=none
rm "$CRASH_TPL/docs/head.bin"
CRASH_STEP='
"$FSOP" pwrite docs/data.bin 2000000 patched-in-place
"$FSOP" pwrite docs/data.bin 500000 over-real-bytes
for i in 1 2 3 4; do echo "changed $i" >> src/m$i.c; done
for i in 1 2 3 4 5; do echo "new $i" > src/new$i.c; done
rm src/m6.c docs/d3.md
mv src/m5.c src/m5_renamed.c
mv src/lib src/lib2 && echo "changed in a moved folder" >> src/lib2/l2.c
rm -r old
ln -s m1.c src/link.c'
crash_prepare
CRASH_NOTHING_OK=1	# a kill before or after the commit has nothing to recover
CRASH_FAST=1
declare -A seen=()
start=$(date +%s)
for r in $(seq 1 "$ROUNDS"); do
	crash_setup
	crash_stage "" || exit 1
	delay=$((RANDOM % (MAXMS + 1)))
	pid=$(daemon_pid "$S")
	( echo commit >"$M/$CTL/ctl" ) 2>/dev/null &
	cpid=$!
	sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
	kill -9 "$pid" 2>/dev/null
	wait $cpid
	crash_wait_dead || { fail "round $r: daemon $pid survived SIGKILL"; exit 1; }
	how=mount
	[ $((r % 2)) = 1 ] && how=tool
	crash_recover_check "$how" "round $r (delay ${delay}ms, $how)"
	case $RECOVERED in
	*"before its commit point"*) kind=mid-before ;;
	*"passed its commit point"*) kind=mid-after ;;
	*) kind=$CLASS-idle ;;
	esac
	seen[$kind]=$((${seen[$kind]:-0} + 1))
	[ "$CLASS" = before ] || [ "$CLASS" = after ] || echo "# round $r: delay ${delay}ms -> $CLASS (seed $SEED)"
	crash_done
	if [ $((r % 10)) = 0 ]; then
		echo "# $r rounds in $(( $(date +%s) - start ))s: $(for k in "${!seen[@]}"; do printf '%s=%s ' "$k" "${seen[$k]}"; done)"
	fi
done
stale_report
echo "# SIGKILL sweep, seed $SEED, delays 0-${MAXMS} ms: $ROUNDS rounds; killed before the commit began: ${seen[before-idle]:-0}, during it before the commit point: ${seen[mid-before]:-0}, after the commit point: ${seen[mid-after]:-0}, after it had finished: ${seen[after-idle]:-0}"
[ "$FAILS" = 0 ] && ok "$ROUNDS SIGKILLed commits, each recovered to exactly the before or the after tree"
[ $(( ${seen[mid-before]:-0} + ${seen[mid-after]:-0} )) -gt 0 ] ||
	echo "# note: no kill landed inside a commit (commits too fast for 0-30 ms?)"
txn_finish
