# SPDX-License-Identifier: Apache-2.0
# txnlib.sh - sourced by every transaction scenario (tests/txn/*.sh), on top
# of the mount harness tests/mount/lib.sh (fixture, txfs_mount, t, check_*,
# the temp dir $T and its trap cleanup).
#
# What it adds:
#   ctl_errno VERB...      one write(2) of "VERB...\n" to $MNT/.txfs/ctl;
#                          prints OK or the errno name (EBUSY, ENOENT...)
#   check_ctl WHAT WANT VERB...   the same, checked (WANT: OK or an errno)
#   lst DIR [flags]        the canonical tree listing (fsop tree -ox default)
#   check_lst WHAT DIR FILE [flags]   DIR's listing equals the saved FILE
#   cli_run ARGS...        txfs ARGS under a timeout; sets CRC, COUT, CERR
#   roundtrip 'STEP'       the commit/rollback round trip of one change
#   txn_finish             unmount what is mounted; report (the real tree
#                          is expected to change, unlike lib.sh's finish)
#   crash_* helpers        for the crash scenarios (see below)

. "$(dirname "$0")/../mount/lib.sh"

PY=/usr/bin/python3
[ -x "$PY" ] || PY=$(command -v python3) || skip "python3 is needed"
CTL=.txfs

# ---- the control file --------------------------------------------------------

# ctl_errno [--mnt DIR] VERB...: one write of the verb line; OK or errno name.
ctl_errno() {
	local mnt=$MNT
	if [ "$1" = --mnt ]; then mnt=$2; shift 2; fi
	t 120 "$PY" -c '
import errno, os, sys
try:
    fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
except OSError as e:
    print("open:" + errno.errorcode.get(e.errno, str(e.errno))); sys.exit(0)
try:
    n = os.write(fd, (sys.argv[2] + "\n").encode())
    print("OK" if n == len(sys.argv[2]) + 1 else "SHORT:%d" % n)
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
try:
    os.close(fd)
except OSError:
    pass
' "$mnt/$CTL/ctl" "$*"
}

# check_ctl [--mnt DIR] WHAT WANT VERB...
check_ctl() {
	local mntopt=() got what want
	if [ "$1" = --mnt ]; then mntopt=(--mnt "$2"); shift 2; fi
	what=$1 want=$2
	shift 2
	got=$(ctl_errno "${mntopt[@]}" "$@")
	check_eq "$what: echo '$*' > $CTL/ctl gives $want" "$want" "$got"
	[ "$got" = "$want" ]
}

# ctl_text [MNT]: what reading ctl says.
ctl_text() {
	t 30 cat "${1:-$MNT}/$CTL/ctl" 2>&1
}

# ---- trees -------------------------------------------------------------------------

# lst DIR [flags]: listing with owners and xattrs (default), on stdout.
lst() {
	local d=$1
	shift
	[ $# -gt 0 ] || set -- -ox
	t 120 "$FSOP" tree "$@" "$d"
}

# check_lst WHAT DIR FILE [flags]: DIR's listing equals FILE.
check_lst() {
	local what=$1 d=$2 f=$3
	shift 3
	lst "$d" "$@" >"$T/lst.now" 2>&1
	if cmp -s "$f" "$T/lst.now"; then
		ok "$what"
		return 0
	fi
	fail "$what: listings differ (< expected $f, > $d):"
	diff "$f" "$T/lst.now" | head -40 | sed 's/^/    /'
	return 1
}

# check_lst_part WHAT nondir|dir EXPECTED GOT: two -m listings compared, for
# nondir with folder mtimes left out, for dir on folder lines only.
lst_part() {
	if [ "$1" = dir ]; then
		awk '$2 == "d"' "$2"
	else
		awk '$2 == "d" { sub(/ t:[0-9.]+/, "") } { print }' "$2"
	fi
}
check_lst_part() {
	if cmp -s <(lst_part "$2" "$3") <(lst_part "$2" "$4"); then
		ok "$1"
		return 0
	fi
	fail "$1: listings differ (< expected, > got):"
	diff <(lst_part "$2" "$3") <(lst_part "$2" "$4") | head -40 | sed 's/^/    /'
	return 1
}

# ---- the command line ----------------------------------------------------------------

# cli_run ARGS...: txfs ARGS; CRC exit code, COUT stdout, CERR stderr.
cli_run() {
	t 120 "$TXFS" "$@" </dev/null >"$T/cli.out" 2>"$T/cli.err"
	CRC=$?
	COUT=$(cat "$T/cli.out")
	CERR=$(cat "$T/cli.err")
	return $CRC
}

# check_cli WHAT WANT_RC ARGS...: txfs ARGS exits WANT_RC.
check_cli() {
	local what=$1 want=$2
	shift 2
	cli_run "$@"
	if [ "$CRC" = "$want" ]; then
		ok "$what (txfs $*: exit $want)"
		return 0
	fi
	fail "$what: txfs $*: expected exit $want got $CRC; stdout: $(head -c 300 <<<"$COUT"); stderr: $(head -c 300 <<<"$CERR")"
	return 1
}

# in_mnt 'script': run script with cwd in the mount; must exit 0.
in_mnt() {
	(cd "$MNT" && timeout -k 5 60 bash -c "set -e; $1") >"$T/in.out" 2>&1
	local rc=$?
	if [ $rc != 0 ]; then
		fail "'$1' in the mount: expected exit 0 got $rc: $(head -c 400 "$T/in.out")"
		return 1
	fi
	return 0
}

# ---- end -------------------------------------------------------------------------------

txn_finish() {
	local entry m
	for entry in "${MOUNTS[@]}"; do
		m=${entry%%|*}
		if is_mounted "$m" && [ "$(fstype_of "$m")" = "$FSTYPE" ]; then
			txfs_umount "$m" "${entry#*|}"
		fi
	done
	FINISHED=1
	exit 0
}

# ---- the commit/rollback round trip of one kind of change ------------------------------

# roundtrip 'STEP': the real directory is $WS (fixture plus what the
# scenario added); STEP is a shell snippet run with cwd in the mount.
#  1. STEP in the mount, rollback: the mount shows the old tree at once,
#     the real directory is byte-identical (mtimes too), nothing staged;
#     then a new mount (so kernel caches from before cannot leak on)
#  2. STEP in the mount and in a model (plain copy): same outputs, same tree;
#  3. commit (echo commit > .txfs/ctl): the mount shows the same tree at once,
#     nothing staged; after txfs umount the real directory (from outside)
#     equals the model and the merged view as it was when the commit began,
#     with no leftover staging folder; a new mount shows it again.
roundtrip() {
	local step=$1 flags=${RT_FLAGS:--ox}
	model
	txfs_mount || exit 1
	lst "$WS" -mox >"$T/rt.real0"
	lst "$MNT" $flags >"$T/rt.view0"
	in_mnt "$step" || exit 1
	if cmp -s "$T/rt.view0" <(lst "$MNT" $flags); then
		fail "the step changed nothing in the merged view (test bug?)"
	fi
	check_ctl "rollback" OK rollback
	check_lst "after rollback the mount shows the old tree at once" "$MNT" "$T/rt.view0" $flags
	check_lst "after rollback the real directory is byte-identical (mtimes too)" "$WS" "$T/rt.real0" -mox
	check_eq "after rollback nothing is staged ($CTL/changes empty)" "" "$(t 30 cat "$MNT/$CTL/changes")"
	case $(ctl_text) in
	"rolled back transaction "*) ok "ctl reads 'rolled back transaction ...'" ;;
	*) fail "ctl after rollback: expected 'rolled back transaction ...' got '$(ctl_text)'" ;;
	esac

	# A fresh mount, so that what the kernel may still cache from before
	# the rollback cannot leak into the commit half of the test.
	remount || exit 1
	check_lst "after rollback and a new mount, the old tree" "$MNT" "$T/rt.view0" $flags

	both "$step"
	check_same "merged view equals the model before the commit"
	lst "$MNT" -mox >"$T/rt.view1m"
	lst "$MNT" $flags >"$T/rt.view1"
	t 120 bash -c 'echo commit > "$1"' _ "$MNT/$CTL/ctl" 2>"$T/commit.err"
	check_eq "echo commit > $CTL/ctl exits 0" "0:" "$?:$(cat "$T/commit.err")"
	case $(ctl_text) in
	"committed transaction "*) ok "ctl reads 'committed transaction ...'" ;;
	*) fail "ctl after commit: expected 'committed transaction ...' got '$(ctl_text)'" ;;
	esac
	check_lst "right after commit the mount shows the committed tree" "$MNT" "$T/rt.view1" $flags
	check_eq "after commit nothing is staged ($CTL/changes empty)" "" "$(t 30 cat "$MNT/$CTL/changes")"
	txfs_umount || exit 1
	check_tree "after commit and umount the real directory equals the model" "$WS" "$MODEL" $flags
	lst "$WS" -mox >"$T/rt.real1m"
	check_lst_part "the real directory equals the merged view as it was at commit, file and symlink mtimes included" \
		nondir "$T/rt.view1m" "$T/rt.real1m"
	check_lst_part "the real directory equals the merged view as it was at commit, folder mtimes included" \
		dir "$T/rt.view1m" "$T/rt.real1m"
	[ -e "$WS/.txfs.staging" ] && fail "staging folder $WS/.txfs.staging left behind after commit"
	txfs_mount || exit 1
	check_same "a new mount shows the committed tree"
	check_eq "and nothing staged" "" "$(t 30 cat "$MNT/$CTL/changes")"
	txn_finish
}

# ---- crashes ----------------------------------------------------------------------------
#
# Every crash iteration I works on its own copy of a template real
# directory: $T/itI/{ws,state,mnt}, named W, S, M. The template and the
# change set are the scenario's: it sets CRASH_TPL (a directory), CRASH_STEP
# (a shell snippet run with cwd in the mount) and calls crash_prepare, which
# computes the before and after listings:
#   $T/before.lst (-ox), $T/before.mlst (-mox, mtimes too), $T/after.lst (-ox)

# Which fault points a loop crashes: the plain pass crashes every one. A
# pass that runs the loops again for something else (ASan: the daemon's
# memory; -o noopen: staging through the mount) needs every kind of step,
# not every point: with TXFS_CRASH_STRIDE=S (tests/run sets 4 there) a loop
# runs every point up to one past the commit point (each a different
# staging state, and the whole redo), then every Sth, from an offset taken
# from a seed printed by crash_stride_note (TXFS_SEED=seed replays it),
# until the commit completes. S = 1 (the default): every point.
CRASH_STRIDE=${TXFS_CRASH_STRIDE:-1}
CRASH_SEED=${TXFS_SEED:-$(( $(date +%s%N) / 1000 % 1000000000 ))}
CRASH_OFFSET=$((CRASH_SEED % CRASH_STRIDE))

# crash_stride_note: say which points the loop runs (once, first).
crash_stride_note() {
	[ "$CRASH_STRIDE" -gt 1 ] || return 0
	echo "# fault points: all up to one past the commit point, then every ${CRASH_STRIDE}th from offset $CRASH_OFFSET (seed $CRASH_SEED; replay: TXFS_CRASH_STRIDE=$CRASH_STRIDE TXFS_SEED=$CRASH_SEED; TXFS_CRASH_STRIDE=1 runs all)"
}

# crash_point_runs N FIRST: is point N crashed? FIRST: the commit point
# (or the first point of a loop's stride), 0 while not known.
crash_point_runs() {
	[ "$CRASH_STRIDE" -le 1 ] || [ "$2" = 0 ] || [ "$1" -le $(($2 + 1)) ] ||
		[ $((($1 - $2 - 2 - CRASH_OFFSET) % CRASH_STRIDE)) = 0 ]
}

crash_prepare() {
	lst "$CRASH_TPL" >"$T/before.lst" || exit 1
	lst "$CRASH_TPL" -mox >"$T/before.mlst" || exit 1
	rm -rf "$T/crash.model"
	cp -a "$CRASH_TPL" "$T/crash.model"
	(cd "$T/crash.model" && bash -c "set -e; $CRASH_STEP") >/dev/null 2>&1 ||
		{ fail "the change set fails in a plain directory (test bug)"; exit 1; }
	lst "$T/crash.model" >"$T/after.lst" || exit 1
	cmp -s "$T/before.lst" "$T/after.lst" && { fail "the change set changes nothing (test bug)"; exit 1; }
	CRASH_ITER=0
}

# crash_setup: a fresh iteration; sets W S M.
crash_setup() {
	CRASH_ITER=$((CRASH_ITER + 1))
	local d=$T/it$CRASH_ITER
	mkdir -p "$d/mnt"
	cp -a "$CRASH_TPL" "$d/ws"
	W=$d/ws S=$d/state M=$d/mnt
}

# crash_mount [FAULT]: mount W at M with state S, TXFS_FAULT=FAULT in the
# daemon's environment. Sets RC, ERR (lib.sh).
crash_mount() {
	local r
	if [ -n "${1:-}" ]; then export TXFS_FAULT=$1; fi
	txfs_mount --state "$S" --ws "$W" --mnt "$M" "${@:2}"
	r=$?
	unset TXFS_FAULT
	return $r
}

# crash_wait_dead: the daemon of S is gone within 10 s.
crash_wait_dead() {
	local i
	for i in $(seq 500); do
		[ -z "$(daemon_pid "$S")" ] && return 0
		sleep 0.02
	done
	return 1
}

# crash_stage: mount with FAULT, apply the change set, check the merged view.
crash_stage() {
	crash_mount "$1" || return 1
	(cd "$M" && timeout -k 5 60 bash -c "set -e; $CRASH_STEP") >"$T/step.out" 2>&1 ||
		{ fail "iteration $CRASH_ITER: the change set failed in the mount: $(head -c 300 "$T/step.out")"; return 1; }
	return 0
}

# crash_classify WHAT: is W exactly the before or the after tree? Sets CLASS
# to before, after or neither (a failure, with both diffs shown). "before"
# must be byte-identical (mtimes too).
crash_classify() {
	local what=$1
	lst "$W" >"$T/now.lst" 2>&1
	if cmp -s "$T/now.lst" "$T/before.lst"; then
		CLASS=before
		lst "$W" -mox >"$T/now.mlst" 2>&1
		if ! cmp -s "$T/now.mlst" "$T/before.mlst"; then
			fail "$what: the real directory has the before tree but not byte-identical (mtimes):"
			diff "$T/before.mlst" "$T/now.mlst" | head -20 | sed 's/^/    /'
		fi
	elif cmp -s "$T/now.lst" "$T/after.lst"; then
		CLASS=after
	else
		CLASS=neither
		fail "$what: the real directory is neither the before nor the after tree; diff to before:"
		diff "$T/before.lst" "$T/now.lst" | head -30 | sed 's/^/    /'
		echo "    diff to after:"
		diff "$T/after.lst" "$T/now.lst" | head -30 | sed 's/^/    /'
	fi
}

# crash_mount_recovering WHAT: mount W at M (no fault); a failed recovery
# is a failure, then one retry (the journal is kept); false if that fails.
crash_mount_recovering() {
	crash_mount "" --expect-fail
	[ "$RC" = 0 ] && is_mounted "$M" && return 0
	fail "$1: mounting after the crash: expected exit 0 got $RC: $ERR"
	crash_mount "" --expect-fail
	if [ "$RC" = 0 ] && is_mounted "$M"; then
		echo "# $1: a second mount worked"
		return 0
	fi
	fail "$1: a second mount failed too: $RC: $ERR"
	force_detach "$M" "$S"
	return 1
}

# crash_recover_check HOW WHAT: after a crash of the daemon of S (mount
# point M dead), recover by HOW (tool: txfs recover S, then mount; mount:
# mount directly), classify, and check the rest:
#  - the recovery message says which (before/after its commit point);
#  - before: the mount shows the staged changes, a plain commit works and
#    gives the after tree;
#  - after: the mount shows the after tree and nothing is staged.
# Leaves nothing mounted. Sets CLASS and RECOVERED (the message or "").
crash_recover_check() {
	local how=$1 what=$2 msg
	STALE_ALL=$((STALE_ALL + 1))
	CLASS=failed
	RECOVERED=
	if [ "$how" = tool ] && is_mounted "$M"; then
		# txfs umount cleans the dead mount left by the crash.
		cli_run umount "$M"
		if [ "$CRC" != 0 ] || is_mounted "$M"; then
			STALE_BAD=$((STALE_BAD + 1))
			echo "# $what: txfs umount of the dead mount: exit $CRC, $(mounts_at "$M") mount(s) left: $CERR"
			while is_mounted "$M"; do timeout 10 fusermount3 -uz "$M" || break; done
		fi
	fi
	if [ "$how" = tool ]; then
		cli_run recover "$S"
		if [ "$CRC" != 0 ]; then
			fail "$what: txfs recover $S: expected exit 0 got $CRC: $CERR (going on by mounting)"
			how=mount
		fi
	fi
	if [ "$how" = tool ]; then
		msg=$COUT
		crash_classify "$what, after txfs recover"
		crash_mount_recovering "$what" || return 1
		case $ERR in *"recovered:"*)
			fail "$what: the mount after txfs recover recovered again: $ERR" ;;
		esac
	else
		# txfs mount cleans the dead mount left by the crash.
		crash_mount_recovering "$what" || return 1
		msg=$(grep -o 'txfs: recovered: .*' <<<"$ERR")
		if [ "$(mounts_at "$M")" != 1 ]; then
			STALE_BAD=$((STALE_BAD + 1))
			echo "# $what: txfs mount over the dead mount: $(mounts_at "$M") mounts stacked at $M"
			cli_run umount "$M"
			while is_mounted "$M"; do timeout 10 fusermount3 -uz "$M" || break; done
			crash_mount "" || { force_detach "$M" "$S"; return 1; }
		fi
		crash_classify "$what, after mounting"
	fi
	RECOVERED=$msg
	case $CLASS:$msg in
	before:*"before its commit point"*) ;;
	after:*"passed its commit point"*) ;;
	before:"nothing to recover"* | before:) [ "${CRASH_NOTHING_OK:-0}" = 1 ] ||
		fail "$what: real tree 'before' but no recovery was reported ('$msg')" ;;
	after:"nothing to recover"* | after:) [ "${CRASH_NOTHING_OK:-0}" = 1 ] ||
		fail "$what: real tree 'after' but no recovery was reported ('$msg')" ;;
	*) fail "$what: recovery message does not match the real tree ($CLASS): '$msg'" ;;
	esac
	check_lst_quiet "$what: the mount shows the staged/committed tree after recovery" "$M" "$T/after.lst"
	if [ "$CLASS" = before ]; then
		[ -n "$(t 30 cat "$M/$CTL/changes")" ] ||
			fail "$what: real tree is 'before' but nothing is staged any more (layer lost)"
		local r
		r=$(ctl_errno --mnt "$M" commit)
		[ "$r" = OK ] || fail "$what: plain commit after recovery: expected OK got $r ($(ctl_text "$M"))"
	elif [ "$CLASS" = after ]; then
		local c
		c=$(t 30 cat "$M/$CTL/changes")
		[ -z "$c" ] || fail "$what: committed, but still staged: $(head -c 200 <<<"$c")"
	fi
	# The daemon takes up to a second to exit after an unmount, which
	# adds up over a loop of crashes; it has nothing left to do, so a
	# clean unmount is checked once per way of recovering and outcome
	# (CRASH_FAST unset or auto), or never (1, the sweeps), or after
	# every crash (0); else the daemon is killed and the mount detached.
	local key="$how:$CLASS"
	case ${CRASH_FAST:-auto} in
	0) CRASH_UMOUNTED=() ;;
	1) CRASH_UMOUNTED[$key]=1 ;;
	esac
	if [ -n "${CRASH_UMOUNTED[$key]:-}" ]; then
		force_detach "$M" "$S"
	else
		CRASH_UMOUNTED[$key]=1
		txfs_umount "$M" "$S" || force_detach "$M" "$S"
	fi
	if [ "$CLASS" = before ]; then
		lst "$W" >"$T/now.lst" 2>&1
		cmp -s "$T/now.lst" "$T/after.lst" ||
			{ fail "$what: after the commit that followed recovery, the real tree is not the after tree:"
			  diff "$T/after.lst" "$T/now.lst" | head -20 | sed 's/^/    /'; }
	fi
	return 0
}

# crash_recover_check's clean unmounts so far, by "how:class"
declare -A CRASH_UMOUNTED=()

# mounts_at DIR: how many mounts are stacked at DIR.
mounts_at() {
	awk -v m="$1" '$2 == m' /proc/self/mounts | wc -l
}

# stale_report: one check for all the dead mounts txfs did not clean
# (counted in STALE_BAD by crash_recover_check, out of STALE_ALL).
STALE_BAD=0
STALE_ALL=0
stale_report() {
	if [ "$STALE_BAD" = 0 ]; then
		ok "every dead mount left by a crash ($STALE_ALL) was cleaned by txfs umount / txfs mount"
	else
		fail "dead mount left by a crash not cleaned by txfs umount / the next txfs mount in $STALE_BAD of $STALE_ALL crashes (detached by hand to go on)"
	fi
}

# errno_of OP PATH: OK or the errno name of one call (listdir, stat, read).
errno_of() {
	t 30 "$PY" -c '
import errno, os, sys
op, p = sys.argv[1], sys.argv[2]
try:
    if op == "listdir": os.listdir(p)
    elif op == "stat": os.stat(p)
    elif op == "read": open(p, "rb").read()
    print("OK")
except OSError as e:
    print(errno.errorcode.get(e.errno, str(e.errno)))
' "$1" "$2"
}

# check_lst_quiet: check_lst that prints only failures (loops run it often).
check_lst_quiet() {
	lst "$2" "${@:4}" >"$T/lst.now" 2>&1
	CHECKS=$((CHECKS + 1))
	cmp -s "$3" "$T/lst.now" && return 0
	FAILS=$((FAILS + 1))
	echo "FAIL: $1: listings differ (< expected $3, > $2):"
	diff "$3" "$T/lst.now" | head -30 | sed 's/^/    /'
	return 1
}

# The standard template and change set of the crash scenarios: new,
# modified (small and partial overwrite of a larger file), deleted files
# and a deleted folder, a renamed folder with a change inside, two
# swapped folders, a hard link, a symlink.
crash_default() {
	CRASH_TPL=$T/tpl
	fixture "$CRASH_TPL"
	mkdir -p "$CRASH_TPL/sa/sub" "$CRASH_TPL/sb" "$CRASH_TPL/ren/inner"
	echo a1 >"$CRASH_TPL/sa/f"; echo a2 >"$CRASH_TPL/sa/sub/g"
	echo b1 >"$CRASH_TPL/sb/f"; echo b2 >"$CRASH_TPL/sb/h"
	for i in 1 2 3; do echo "r$i" >"$CRASH_TPL/ren/inner/r$i"; done
	CRASH_STEP='
echo new > new.txt
mkdir newdir && echo n > newdir/n.txt
echo rewritten > dir/a.txt
"$FSOP" pwrite big.bin 70000 partial-overwrite
rm exec.sh
rm -r "dir with space"
mv ren ren2 && echo changed >> ren2/inner/r2
mv sa swaptmp && mv sb sa && mv swaptmp sb
ln dir/sub/deep.txt deep_link
ln -s dir/a.txt sym_new'
	crash_prepare
}

# crash_commit_dies FAULT: one iteration up to the commit with FAULT; true
# if the daemon died (the fault fired). Leaves the mount as it is.
crash_commit_dies() {
	crash_setup
	crash_stage "$1" || return 2
	CTLR=$(ctl_errno --mnt "$M" commit)
	if [ "$CTLR" = OK ]; then
		sleep 0.05	# a fault after the answer
		[ -z "$(daemon_pid "$S")" ]
		return
	fi
	crash_wait_dead	# the fault ended it (ECONNABORTED): gone soon
}

# crash_count_points: the number of fault points of a commit of the change
# set (the largest N for which TXFS_FAULT=commit:N kills the daemon), by
# doubling and bisection. Iteration folders it uses are cleaned up.
crash_count_points() {
	local lo=0 hi=8 mid r
	while :; do
		crash_commit_dies "commit:$hi"; r=$?
		[ $r = 2 ] && return 1
		force_detach "$M" "$S"
		[ $r != 0 ] && break
		lo=$hi; hi=$((hi * 2))
		[ $hi -gt 100000 ] && { fail "commit:N still kills the daemon at N=$hi"; return 1; }
	done
	while [ $((hi - lo)) -gt 1 ]; do
		mid=$(((lo + hi) / 2))
		crash_commit_dies "commit:$mid"; r=$?
		[ $r = 2 ] && return 1
		force_detach "$M" "$S"
		if [ $r = 0 ]; then lo=$mid; else hi=$mid; fi
	done
	NPOINTS=$lo
	return 0
}

# ---- kernel caches and open files --------------------------------------------------------

# check_view WHAT DIR FILE [flags]: check_lst, checked at once; when it
# fails (and we are root) it also says whether the daemon's answer is right
# once the kernel's dentry and inode caches are dropped (stale cache vs
# wrong layer), without changing the verdict.
check_view() {
	check_lst "$@" && return 0
	if is_root; then
		sync
		echo 2 >/proc/sys/vm/drop_caches
		if cmp -s "$3" <(lst "$2" "${@:4}"); then
			echo "    (after dropping the kernel's caches the view is right: a stale kernel cache)"
		else
			echo "    (after dropping the kernel's caches the view is still wrong: the layer or the daemon)"
		fi
	fi
	return 1
}

# fdop FD read | write OFF DATA | fstat: one call on an inherited fd;
# prints the data read, OK, the size, or ERR:ENAME.
fdop() {
	t 30 "$PY" -c '
import errno, os, sys
fd, op = int(sys.argv[1]), sys.argv[2]
try:
    if op == "read":
        sys.stdout.write(os.pread(fd, 65536, 0).decode(errors="replace"))
    elif op == "write":
        os.pwrite(fd, sys.argv[4].encode(), int(sys.argv[3])); print("OK")
    elif op == "fstat":
        print(os.fstat(fd).st_size)
except OSError as e:
    print("ERR:" + errno.errorcode.get(e.errno, str(e.errno)))
' "$@"
}

# check_errno_of WHAT WANT OP PATH: errno_of OP PATH gives WANT (OK or ENAME).
check_errno_of() {
	check_eq "$1" "$2" "$(errno_of "$3" "$4")"
}

# crash_done: remove the iteration's folders (only once nothing is mounted
# there: rm must never walk into a mount).
crash_done() {
	if is_mounted "$M"; then
		force_detach "$M" "$S"
	fi
	is_mounted "$M" || rm -rf --one-file-system "$T/it$CRASH_ITER"
}
