#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The mass-deletion guard counts real data destroyed in place, not only
# removals (issue 23.4): punching (fallocate -p), zeroing (dd
# conv=notrunc), overwriting (os.pwrite), a store through mmap and
# copy_file_range onto real files are losses, once a file. Over 1,200
# real decoy files, each form stops at the default policy's `limit
# deletes 1000` with EACCES, exactly 1,000 files are changed in the view,
# the veto is logged as an "overwrite" with the guard's hint, and after
# a rollback every file has its bytes again; the real directory is
# byte-identical at the end. What destroys nothing costs nothing:
# appending, writing the same bytes back, writing into new files, and
# truncating a file already counted.
# The attacker's own forms too, confined, under the same default policy:
#  - txfs exec on this mount (fallocate -p and dd conv=notrunc loops that
#    stop at the refusal, a python pwrite loop that ignores it and exits
#    0): the failing commands are rolled back to their savepoint (then
#    the session commits nothing), the one that exits 0 keeps exactly
#    1,000 overwrites staged and the session rolls them back; the real
#    files' bytes are intact after each;
#  - txfs run -- sh -c '<overwrite 1,200 real files>' in place on a copy
#    (fallocate -p, dd conv=notrunc, os.pwrite): refused past 1,000, the
#    command fails, the run rolls back (exit 1, report "rolled-back" with
#    the vetoes and the guard's note), the real tree is byte-identical;
#    a command that ignores the refusals and exits 0 is committed with at
#    most 1,000 files overwritten (the documented limit: "refused past
#    1,000 real files"), and txfs undo puts every byte (and mtime) back.
# As root and as txfstest (unpriv.sh, the unprivileged half first):
# about 40 s a user, 80-105 s in all (plain build, 2 CPUs; txfs exec
# and txfs run 15 s of each half).
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"
. "$(dirname "$0")/unpriv.sh"

N=1200
rm -rf "$WS" && mkdir -p "$WS/d" "$WS/e"
"$PYTHON" - "$WS" "$N" <<'EOF' || exit 1
import sys
ws, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    data = (("decoy %d " % i) * 40).encode()
    open("%s/d/f%d" % (ws, i), "wb").write(data)
    open("%s/e/g%d" % (ws, i), "wb").write(data)
# a real file of several 64 KiB blocks: the last block is overwritten
open("%s/big" % ws, "wb").write(bytes(range(256)) * 1024)
EOF
default_policy
txfs_mount || exit 1
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }
# changed DIR PREFIX: how many of the N files of DIR differ, in the view,
# from the real directory's
changed() {
	t 120 "$PYTHON" -c 'import sys
m, w, d, p, n = sys.argv[1:6]
print(sum(open("%s/%s/%s%d" % (m, d, p, i), "rb").read() !=
          open("%s/%s/%s%d" % (w, d, p, i), "rb").read() for i in range(1, int(n) + 1)))' \
		"$MNT" "$WS" "$1" "$2" "$N"
}
# the last veto in .txfs/log is an overwrite, followed by its guard event
last_veto_is() {
	if t 30 "$PYTHON" -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
v = [r for r in recs if r.get("event") == "veto"][-1]
g = [r for r in recs if r.get("event") == "guard"][-1]
assert v["op"] == sys.argv[2], v
assert v["path"].startswith(sys.argv[3]), v
assert g["limit"] == "deletes" and g["max"] == 1000 and "overwriting" in g["hint"] and "roll back" in g["hint"], g
print(v["op"], v["path"], v["rule"])' "$MNT/.txfs/log" "$2" "$3" >"$T/lv.out" 2>&1; then
		ok "$1: logged ($(cat "$T/lv.out"))"
	else
		fail "$1: $(tail -3 "$T/lv.out")"
	fi
}
form() {	# form WHAT 'script over d/f$i' [REGEX]
	refused "$1 over $N real files" "$2" "${3:-Permission denied|PermissionError}"
	check_eq "$1: exactly 1,000 real files were changed" 1000 "$(changed d f)"
	last_veto_is "$1" overwrite d/f
	ctl rollback
	check_eq "$1: after rollback no file differs" 0 "$(changed d f)"
}

# ---- what destroys no real data costs nothing
allowed "appending to $N real files" 'for i in $(seq '$N'); do echo more >> e/g$i || exit 1; done'
allowed "writing the same bytes back into $N real files" "$PYTHON -c 'import os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_RDWR); b = os.pread(fd, 4096, 0)
    assert os.pwrite(fd, b, 0) == len(b); os.close(fd)'"
allowed "$N new files written, overwritten and punched" "mkdir new && $PYTHON -c 'import os
for i in range(1, $N + 1):
    p = \"new/n%d\" % i; open(p, \"w\").write(\"x\" * 100)
    fd = os.open(p, os.O_RDWR); os.pwrite(fd, b\"y\" * 50, 0); os.close(fd)' &&
	for i in \$(seq $N); do fallocate -p -o 0 -l 10 new/n\$i || exit 1; done"
check_eq "nothing of d/ differs" 0 "$(changed d f)"
grep -q "limit deletes" "$MNT/.txfs/ctl" && fail ".txfs/ctl speaks of the guard: $(cat "$MNT/.txfs/ctl")" ||
	ok "no loss counted: no guard note"
ctl rollback

# ---- the five forms
form "fallocate -p (punch)" 'for i in $(seq '$N'); do fallocate -p -o 8 -l 100 d/f$i || exit 1; done'
form "dd conv=notrunc of zeros" \
	'for i in $(seq '$N'); do dd if=/dev/zero of=d/f$i bs=64 count=1 conv=notrunc status=none || exit 1; done'
form "os.pwrite over existing bytes" "$PYTHON -c 'import os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_WRONLY); os.pwrite(fd, b\"OVERWRITTEN\", 20); os.close(fd)'"
log_wellformed
# a store through mmap reaches the daemon from the kernel's writeback,
# which names no process: its veto has pid 0 and no exe
form "a store through mmap" "$PYTHON -c 'import mmap, os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_RDWR); m = mmap.mmap(fd, 0)
    m[0:4] = b\"ZZZZ\"; m.flush(); m.close(); os.close(fd)'" 'Error|error'
form "copy_file_range onto real files" "echo COPIED > src && $PYTHON -c 'import os
s = os.open(\"src\", os.O_RDONLY)
for i in range(1, $N + 1):
    d = os.open(\"d/f%d\" % i, os.O_WRONLY)
    os.copy_file_range(s, d, 6, 0, 0); os.close(d)'"

# ---- once a file; the limit holds for every later loss
allowed "1,000 overwrites: exactly the limit" "$PYTHON -c 'import os
for i in range(1, 1001):
    fd = os.open(\"d/f%d\" % i, os.O_WRONLY); os.pwrite(fd, b\"A\", 0); os.pwrite(fd, b\"B\", 300); os.close(fd)'"
allowed "the same files truncated, punched and overwritten again: counted already" \
	'for i in $(seq 1000); do truncate -s 100 d/f$i && fallocate -p -o 0 -l 10 d/f$i && echo x | dd of=d/f$i conv=notrunc status=none || exit 1; done'
refused "one more real file overwritten" 'echo x | dd of=d/f1001 conv=notrunc status=none'
refused "the last block of a big real file overwritten" 'printf Q | dd of=big bs=1 seek=262000 conv=notrunc status=none'
log_guard "overwrites" deletes
grep -q "overwriting" "$MNT/.txfs/ctl" && grep -q "roll back" "$MNT/.txfs/ctl" &&
	ok ".txfs/ctl says the limit is reached and what to do" ||
	fail ".txfs/ctl: expected the guard note got: $(cat "$MNT/.txfs/ctl")"
allowed "tripped: appending and writing new files still work" 'echo more >> d/f1001 && echo n > fresh && echo m >> fresh'
ctl rollback
check_eq "rollback: nothing differs" 0 "$(changed d f)"
cmp -s "$MNT/big" "$WS/big" && ok "rollback: big is whole" || fail "rollback: big differs"

# ---- txfs exec on this mount: one command, one nested transaction
# real_d: the real d/ (names, modes, owners, sizes, mtimes, bytes)
real_d() { "$FSOP" tree -mox "$WS/d" | sha256sum | cut -c1-64; }
D0=$(real_d)
staged() { t 30 cat "$MNT/.txfs/changes" | wc -l; }
# exec_form WHAT OUTCOME VETOES [--json] 'script over d/f$i': txfs exec in
# the mount; its report on stderr, or (--json) through --json-fd
exec_form() {
	local what="txfs exec: $1" want=$2 vetoes=$3 json=0 rc
	shift 3
	[ "$1" = --json ] && { json=1; shift; }
	if [ $json = 1 ]; then
		(cd "$MNT" && t 120 "$TXFS" exec --allow-weaker --json-fd 3 -- sh -c "$1" 3>"$T/exec.json") \
			>"$T/exec.out" 2>"$T/exec.err"
	else
		(cd "$MNT" && t 120 "$TXFS" exec --allow-weaker -- sh -c "$1") >"$T/exec.out" 2>"$T/exec.err"
	fi
	rc=$?
	if [ "$want" = kept ]; then
		[ $rc = 0 ] && ok "$what: exit 0" || fail "$what: expected exit 0 got $rc: $(grep -v '^  [AMD] ' "$T/exec.err" | head -5)"
	else
		[ $rc != 0 ] && [ $rc != 125 ] && ok "$what: the command failed (exit $rc)" ||
			fail "$what: expected the command to fail got exit $rc: $(grep -v '^  [AMD] ' "$T/exec.err" | head -5)"
	fi
	if [ $json = 0 ]; then
		grep -q "^txfs: exec: command [0-9]* $want (exit $rc): 1000 changes, $vetoes veto" "$T/exec.err" &&
			grep -q "^  vetoed: overwrite d/f1001 " "$T/exec.err" &&
			grep -q "^  guard: \`limit deletes 1000\` (default.policy:[0-9]*) reached: overwrite d/f[0-9]* refused; .*roll back" "$T/exec.err" &&
			ok "$what: stderr says $want, 1000 changes, $vetoes veto(es), the guard's note" ||
			fail "$what: stderr: $(grep -v '^  [AMD] ' "$T/exec.err" | head -5)"
	elif t 30 "$PYTHON" -c 'import json, sys
o = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert o["outcome"] == sys.argv[2], o["outcome"]
assert o["vetoes"] == int(sys.argv[3]), o["vetoes"]
g = o["guard"] or ""
assert "limit deletes 1000" in g and "refused" in g and "roll back" in g, g
print(o["outcome"], "exit", o["exit"], o["vetoes"], "vetoes")' "$T/exec.json" "$want" "$vetoes" >"$T/j.out" 2>&1; then
		ok "$what: --json-fd report: $(cat "$T/j.out"), the guard's note"
	else
		fail "$what: --json-fd report: $(tail -2 "$T/j.out")"
	fi
	if [ "$want" = kept ]; then
		check_eq "$what: exactly 1,000 overwrites are staged in the view" 1000 "$(changed d f)"
		ctl rollback
		check_eq "$what: the session rolled back: nothing differs in the view" 0 "$(changed d f)"
	else
		check_eq "$what: rolled back to its savepoint: nothing differs in the view" 0 "$(changed d f)"
		check_eq "$what: nothing is staged" 0 "$(staged)"
		ctl commit
	fi
	check_eq "$what: the real d/ is byte-identical (sizes, mtimes, bytes)" "$D0" "$(real_d)"
}
check_eq "before txfs exec: nothing is staged" 0 "$(staged)"
exec_form "fallocate -p loop, stops at the refusal" rolled-back 1 \
	'for i in $(seq '$N'); do fallocate -p -o 8 -l 100 d/f$i || exit 1; done'
exec_form "dd conv=notrunc of zeros, its last status" rolled-back 200 --json \
	'for i in $(seq '$N'); do dd if=/dev/zero of=d/f$i bs=64 count=1 conv=notrunc status=none; done 2>/dev/null'
exec_form "os.pwrite, refusals ignored, exit 0" kept 200 --json "$PYTHON -c 'import os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_WRONLY)
    try:
        os.pwrite(fd, b\"OVERWRITTEN\", 20)
    except PermissionError:
        pass
    os.close(fd)'"

# ---- txfs run -- sh -c '...' in place, on a copy of d/
RW=$T/rws
mkdir -p "$RW" && cp -a "$WS/d" "$RW/d" || fail "copying d/ for txfs run"
rw_tree() { "$FSOP" tree -mox "$RW" | sha256sum | cut -c1-64; }
RW0=$(rw_tree)
# rw_changed: how many of the N files of $RW/d differ from $WS/d
rw_changed() {
	t 120 "$PYTHON" -c 'import sys
r, w, n = sys.argv[1:4]
print(sum(open("%s/d/f%d" % (r, i), "rb").read() != open("%s/d/f%d" % (w, i), "rb").read()
          for i in range(1, int(n) + 1)))' "$RW" "$WS" "$N"
}
RUNS=0
# run_form WHAT WANT_RC ACTION [--json] 'script over d/f$i'
run_form() {
	local what="txfs run: $1" want=$2 action=$3 json=() rc
	shift 3
	[ "$1" = --json ] && { json=(--json); shift; }
	RUNS=$((RUNS + 1))
	RSTATE=$T/rstate$RUNS
	t 300 "$TXFS" run -C "$RW" --state "$RSTATE" --allow-weaker "${json[@]}" -- sh -c "$1" \
		</dev/null >"$T/run.out" 2>"$T/run.err"
	rc=$?
	check_eq "$what: exit status" "$want" "$rc"
	is_mounted "$RW" && { fail "$what: $RW is still mounted"; force_detach "$RW" "$RSTATE"; }
	if [ ${#json[@]} = 0 ]; then
		grep -q "^txfs: run: $action" "$T/run.err" &&
			grep -q "^txfs: run: [0-9]* vetoe\?s\? by the policy" "$T/run.err" &&
			grep -q "^  vetoed: overwrite d/f1001 " "$T/run.err" &&
			grep -q "^  guard: \`limit deletes 1000\` (default.policy:[0-9]*) reached: overwrite d/f[0-9]* refused; .*txfs run commits when it exits 0 and rolls back otherwise" "$T/run.err" &&
			ok "$what: stderr says $action, names the veto and the guard's note" ||
			fail "$what: stderr: $(grep -v '^[AMD] ' "$T/run.err" | head -8)"
	elif t 30 "$PYTHON" -c 'import json, sys
o = json.loads(open(sys.argv[1]).read().strip().splitlines()[-1])
assert o["action"] == sys.argv[2], o["action"]
assert o["transaction"]["vetoes"] >= 1, o["transaction"]
g = o.get("guard") or ""
assert "limit deletes 1000" in g and "refused" in g, g
print(o["action"], o["exit"], o["transaction"]["vetoes"], "vetoes")' "$T/run.out" "$action" >"$T/j.out" 2>&1; then
		ok "$what: --json report: $(cat "$T/j.out"), the guard's note"
	else
		fail "$what: --json report: $(tail -2 "$T/j.out"); stdout: $(tail -c 300 "$T/run.out")"
	fi
}
run_form "fallocate -p loop, stops at the refusal" 1 rolled-back \
	'for i in $(seq '$N'); do fallocate -p -o 8 -l 100 d/f$i || exit 1; done'
check_eq "txfs run (fallocate -p): the real tree is byte-identical" "$RW0" "$(rw_tree)"
run_form "dd conv=notrunc of zeros, its last status" 1 rolled-back --json \
	'for i in $(seq '$N'); do dd if=/dev/zero of=d/f$i bs=64 count=1 conv=notrunc status=none; done 2>/dev/null'
check_eq "txfs run (dd conv=notrunc): the real tree is byte-identical" "$RW0" "$(rw_tree)"
run_form "os.pwrite, the refusal raised" 1 rolled-back --json "$PYTHON -c 'import os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_WRONLY); os.pwrite(fd, b\"OVERWRITTEN\", 20); os.close(fd)' 2>/dev/null"
check_eq "txfs run (os.pwrite): the real tree is byte-identical" "$RW0" "$(rw_tree)"
# The command ignores every refusal and exits 0: txfs run commits what
# the guard let through (at most the limit), and says so.
run_form "fallocate -p loop, refusals ignored, exit 0" 0 committed \
	'for i in $(seq '$N'); do fallocate -p -o 8 -l 100 d/f$i 2>/dev/null; done; exit 0'
n=$(rw_changed)
[ "$n" -le 1000 ] 2>/dev/null && ok "txfs run, exit 0: the guard held, $n (at most 1,000) real files were overwritten, $((N - n)) intact" ||
	fail "txfs run, exit 0: expected at most 1,000 real files overwritten got $n"
t 120 "$TXFS" undo --state "$RSTATE" "$RW" >"$T/undo.out" 2>&1 ||
	fail "txfs undo of the run's commit: $(tail -3 "$T/undo.out")"
check_eq "txfs undo: the real tree is byte-identical again (bytes, mtimes)" "$RW0" "$(rw_tree)"
finish
