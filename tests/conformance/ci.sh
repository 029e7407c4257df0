#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/conformance/ci.sh - the public conformance suites against a txfs
# mount, for tests/run (CI): pjdfstest and unionmount-testsuite from the
# unmodified copies in shared/conformance (README there), built and run in
# a temporary folder; nothing of theirs enters this repository.
#
#   sudo tests/conformance/ci.sh [--suite pjdfstest|unionmount]...
#        [--mode plain|open|noopen]... [--update-results]
#
# Runs, each bounded by a timeout:
#   pjdfstest    built with autoreconf/configure/make, `prove -r -j2` as
#                root from inside a mount (-o allow_other, a policy without
#                rules), each test file in a folder of its own; once per
#                mode (plain: no option, which is no-open here, as the
#                policy has no rules; open: -o open; noopen: -o noopen,
#                on request). Every file
#                must pass but the ones in PJD_DEVICE_FILES, which must
#                fail, and only through txfs's refusal of block and
#                character devices (pjd_classify.py says how that is
#                checked).
#   unionmount   ./run --ov --fuse=txfs and --ov=0 per mode, mount(8) ->
#                mount.fuse3 -> a shim "txfs" that mounts the suite's lower
#                layer with txfs (as tests/conformance/run.sh); 58 of 58.
#
# Environment: TXFS (the txfs binary; default build/cli/txfs),
# TXFS_CONFORMANCE (default: ../shared/conformance beside the checkout),
# TXFS_CONF_TMP (where the temporary folder goes; default /var/tmp),
# TXFS_CONF_JOBS (prove -j; default 2), TXFS_CONF_KEEP=1 (keep the folder),
# TXFS_CONF_PJD_FILES (only these pjdfstest files, e.g. "chown/00.t").
#
# Output: one line per suite run,
#   conformance: pjdfstest plain: PASS files 238 passed 205 expected 33 unexpected 0 subtests 8798; 318 s
#   conformance: unionmount --ov plain: PASS tests 58 of 58 passed (0 failed, 59 mounts); 94 s
# (FAIL in place of PASS, with the reasons on indented lines before it)
# then a RESULTS block (date, commit, the same lines, total time), then
#   conformance: PASS (4 of 4 suite runs)      exit 0
#   conformance: FAIL (1 of 4 suite runs failed) exit 1
# Exit 2: cannot run (not root, no FUSE, no suites, the build failed).
# --update-results writes the block into tests/conformance/RESULTS.md.

set -u -o pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
HERE=$ROOT/tests/conformance
export LC_ALL=C
TXFS=$(readlink -f "${TXFS:-$ROOT/build/cli/txfs}")
CONF=${TXFS_CONFORMANCE:-$ROOT/../shared/conformance}
JOBS=${TXFS_CONF_JOBS:-2}
SUITES=() MODES=() UPDATE=0 LANE=

# The files that create block or character devices (a type loop over
# "block char" or an explicit `mknod NAME b|c`): txfs refuses both (EPERM,
# README "POSIX behaviour", txfs(1) LIMITATIONS), so each must fail, and
# only on those names.
PJD_DEVICE_FILES="
chmod/00.t chmod/01.t chmod/11.t
chown/00.t chown/01.t chown/07.t
link/00.t link/01.t link/10.t
mkdir/01.t mkdir/10.t
mkfifo/01.t mkfifo/09.t
mknod/01.t mknod/02.t mknod/03.t mknod/08.t mknod/11.t
open/01.t open/22.t
rename/00.t rename/09.t rename/10.t rename/12.t rename/13.t rename/14.t
rename/20.t rename/23.t
rmdir/06.t
symlink/08.t
unlink/00.t unlink/11.t
utimensat/00.t"
UM_TESTS=58

while [ $# -gt 0 ]; do
	case $1 in
	--suite) SUITES+=("$2"); shift 2 ;;
	--mode) MODES+=("$2"); shift 2 ;;
	--update-results) UPDATE=1; shift ;;
	--um-lane) LANE=$2; shift 2 ;;	# internal: one mode's unionmount runs
	-h | --help) sed -n '3,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	*) echo "conformance: unknown option $1" >&2; exit 2 ;;
	esac
done
[ ${#SUITES[@]} -gt 0 ] || SUITES=(pjdfstest unionmount)
[ ${#MODES[@]} -gt 0 ] || MODES=(plain open)

cant() { echo "conformance: cannot run: $*"; exit 2; }
[ "$(id -u)" = 0 ] || cant "run as root (pjdfstest changes owners)"
[ -x "$TXFS" ] || cant "no txfs binary at $TXFS (build first, or set TXFS)"
[ -d "$CONF/pjdfstest/tests" ] && [ -x "$CONF/unionmount-testsuite/run" ] ||
	cant "no suites at $CONF (set TXFS_CONFORMANCE)"
CONF=$(readlink -f "$CONF")
[ -c /dev/fuse ] || cant "no /dev/fuse"
for tool in autoreconf make cc prove python3 unshare fusermount3 mount.fuse3; do
	command -v "$tool" >/dev/null || cant "$tool is missing (cli/deps/deps.txt [test])"
done

if [ -n "$LANE" ]; then
	WORK=$CONF_WORK
else
	WORK=$(mktemp -d "${TXFS_CONF_TMP:-/var/tmp}/txfs-conformance.XXXXXX") ||
		cant "mktemp failed"
	chmod 755 "$WORK"
fi
FAILED=0 RUNS=0 LINES=() REF_PID= LANE_PIDS=
T_START=$(date +%s)

# ---- mounts: every one is recorded and always goes away ---------------------

# mounts under WORK (this namespace; the unionmount runs have their own)
work_mounts() {
	awk -v w="$WORK/" 'index($2, w) == 1 { print $2 }' /proc/self/mounts
}

# the live txfs daemon whose pid STATE/daemon.pid names, else nothing
daemon_of() {
	local pid
	[ -r "$1/daemon.pid" ] || return 0
	pid=$(tr -dc 0-9 <"$1/daemon.pid")
	[ -n "$pid" ] && grep -qa txfs "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

# unmount MNT STATE: txfs umount, else a lazy unmount; then the daemon
# is killed by its pid if it is still there
unmount() {
	local pid
	pid=$(daemon_of "$2")
	if grep -q " $1 fuse" /proc/self/mounts; then
		timeout -k 5 60 "$TXFS" umount "$1" >/dev/null 2>&1 ||
			fusermount3 -uz "$1" 2>/dev/null || umount -l "$1" 2>/dev/null
	fi
	if [ -n "$pid" ]; then
		for _ in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.5
		done
		kill -9 "$pid" 2>/dev/null
	fi
	return 0
}

cleanup() {
	local m st pid
	trap - EXIT INT TERM
	# the reference run and the unionmount lanes: each a session of its
	# own (setsid), ended as a group
	for pid in $REF_PID $LANE_PIDS; do
		kill -TERM -- -"$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	done
	for st in $(find "$WORK" -maxdepth 8 -name daemon.pid -path '*/state/*' 2>/dev/null); do
		pid=$(daemon_of "${st%/daemon.pid}")
		[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
	done
	work_mounts | sort -r | while read -r m; do
		fusermount3 -uz "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
	if [ -n "$(work_mounts)" ]; then
		echo "conformance: FAIL: mounts left under $WORK: $(work_mounts | tr '\n' ' ')"
		exit 1
	fi
	if [ "${TXFS_CONF_KEEP:-0}" = 1 ] || [ $FAILED != 0 ]; then
		echo "conformance: logs kept in $WORK"
	else
		rm -rf --one-file-system "$WORK"
	fi
}
if [ -z "$LANE" ]; then
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
fi

# mount_txfs DIR OPTS: a fresh workspace DIR/ws mounted at DIR/mnt
mount_txfs() {
	rm -rf "$1" && mkdir -p "$1/ws" "$1/mnt" "$1/state" || return 1
	printf '# conformance: no rules\n' >"$1/open.policy"
	timeout -k 5 60 "$TXFS" mount --state "$1/state" --policy "$1/open.policy" \
		-o "allow_other${2:+,$2}" "$1/ws" "$1/mnt" </dev/null >"$1/mount.log" 2>&1
}

mode_opts() { case $1 in open | noopen) echo "$1" ;; esac; }

report() {	# report RC LINE
	RUNS=$((RUNS + 1))
	[ "$1" = 0 ] || FAILED=$((FAILED + 1))
	LINES+=("conformance: $2")
	echo "conformance: $2"
}

# ---- pjdfstest -------------------------------------------------------------------

PJD=$WORK/pjdfstest
build_pjdfstest() {
	[ -x "$PJD/pjdfstest" ] && return 0
	cp -r "$CONF/pjdfstest" "$PJD" && chmod -R u+w "$PJD" || return 1
	(cd "$PJD" && timeout 600 autoreconf -ifs && timeout 600 ./configure &&
		timeout 600 make pjdfstest) >"$WORK/pjdfstest.build.log" 2>&1 || {
		echo "conformance: pjdfstest build failed; last lines:"
		tail -n 15 "$WORK/pjdfstest.build.log" | sed 's/^/    /'
		return 1
	}
	chmod -R a+rX "$PJD"
	# the wrapper prove runs for each test file: a folder of its own in
	# the mount, the TAP output and exit status kept for pjd_classify.py
	cat >"$WORK/pjdrun" <<'RUN'
#!/bin/bash
set -o pipefail
rel=${1#"$PJD_TESTS"/}
log=$PJD_LOGS/${rel//\//_}
log=${log%.t}
printf '%s\n' "$rel" >"$log.t"
d=$(mktemp -d "$PJD_RUNDIR/t.XXXXXX") && chmod 755 "$d" && cd "$d" || exit 1
timeout -k 10 "$PJD_FILE_TIMEOUT" sh "$1" 2>"$log.err" | tee "$log.tap"
rc=$?
echo "$rc" >"$log.rc"
cd / && rmdir "$d" 2>/dev/null
exit "$rc"
RUN
	chmod 755 "$WORK/pjdrun"
}

# The reference for the files in PJD_DEVICE_FILES, once per invocation,
# beside the first txfs run: a plain folder on the same file system, as
# root of a user namespace mapping 0-65535 onto itself (userns.py), where
# mknod b|c is refused with EPERM as on txfs. Its logs: WORK/pjd-ref/logs.
REF_STARTED=0
start_reference() {
	local d=$WORK/pjd-ref f files=()
	[ $REF_STARTED = 1 ] && return 0
	REF_STARTED=1
	rm -rf "$d" && mkdir -p "$d/run" "$d/logs" && chmod 755 "$d/run" || return 1
	for f in $(pjd_expected); do files+=("$PJD/tests/$f"); done
	[ ${#files[@]} -gt 0 ] || return 0
	(cd "$d/run" && PJD_TESTS=$PJD/tests PJD_LOGS=$d/logs PJD_RUNDIR=$d/run \
		PJD_FILE_TIMEOUT=600 exec setsid timeout -k 10 1500 python3 "$HERE/userns.py" \
		prove -j"$JOBS" --exec "$WORK/pjdrun" "${files[@]}") >"$d/prove.out" 2>&1 &
	REF_PID=$!
}

# TXFS_CONF_PJD_FILES="chown/00.t ...": run only these files (a quick
# check while developing; CI runs them all)
pjd_files() {
	local f
	if [ -z "${TXFS_CONF_PJD_FILES:-}" ]; then
		echo "$PJD/tests"
		return
	fi
	for f in $TXFS_CONF_PJD_FILES; do echo "$PJD/tests/$f"; done
}
pjd_expected() {
	local f
	for f in $PJD_DEVICE_FILES; do
		[ -z "${TXFS_CONF_PJD_FILES:-}" ] ||
			[[ " $TXFS_CONF_PJD_FILES " == *" $f "* ]] && echo "$f"
	done
}

run_pjdfstest() {	# run_pjdfstest MODE
	local mode=$1 d=$WORK/pjd-$1 t0 rc line
	t0=$(date +%s)
	if ! build_pjdfstest; then
		report 1 "pjdfstest $mode: FAIL (build)"
		return
	fi
	start_reference
	if ! mount_txfs "$d" "$(mode_opts "$mode")"; then
		report 1 "pjdfstest $mode: FAIL (mount: $(tail -n 1 "$d/mount.log"))"
		return
	fi
	mkdir -p "$d/logs"
	(cd "$d/mnt" && PJD_TESTS=$PJD/tests PJD_LOGS=$d/logs PJD_RUNDIR=$d/mnt \
		PJD_FILE_TIMEOUT=600 timeout -k 30 1800 \
		prove -j"$JOBS" --exec "$WORK/pjdrun" -r $(pjd_files)) >"$d/prove.out" 2>&1
	rc=$?
	unmount "$d/mnt" "$d/state"
	[ -n "$REF_PID" ] && { wait "$REF_PID"; REF_PID=; }
	mkdir -p "$WORK/pjd-ref/logs"
	# shellcheck disable=SC2086
	python3 "$HERE/pjd_classify.py" "$d/logs" "$WORK/pjd-ref/logs" \
		$(pjd_expected) >"$d/verdict" 2>&1
	line=$(tail -n 1 "$d/verdict")
	[ $rc = 124 ] || [ $rc = 137 ] && line="$line (prove stopped after 1800 s)"
	grep -E '^(FAIL|PASSED-EXPECTED)' "$d/verdict" | sed 's/^/    /'
	if [ $rc != 124 ] && [ $rc != 137 ] && [[ $line == *" unexpected 0 "* ]]; then
		report 0 "pjdfstest $mode: PASS $line; $(($(date +%s) - t0)) s"
	else
		report 1 "pjdfstest $mode: FAIL $line; $(($(date +%s) - t0)) s"
	fi
}

# ---- unionmount-testsuite ----------------------------------------------------------

# the "txfs" that mount.fuse3 runs: mount the suite's lower layer with
# txfs (its state in the work dir), then copy in what the suite put in
# the upper layer before the first mount
um_shim() {
	cat <<SHIM
#!/bin/bash
src=\$1 mnt=\$2 opts=
shift 2
while [ \$# -gt 0 ]; do case \$1 in -o) opts=\$2; shift 2 ;; *) shift ;; esac; done
lower= upper= work=
IFS=, read -ra parts <<<"\$opts"
for p in "\${parts[@]}"; do
	case \$p in
	lowerdir=*) lower=\${p#lowerdir=} ;;
	upperdir=*) upper=\${p#upperdir=} ;;
	workdir=*) work=\${p#workdir=} ;;
	esac
done
case \$lower in *:*) echo "txfs shim: several lower layers: not supported" >&2; exit 1 ;; esac
fresh=0
[ -e "\$work/state" ] || fresh=1
printf '# no rules\\n' >"\$work/open.policy"
o=allow_other\${TXFS_UM_OPTS:+,\$TXFS_UM_OPTS}
echo "txfs mount -o \$o" >>"\$TXFS_UM_LOG"
timeout -k 5 60 "$TXFS" mount --state "\$work/state" --policy "\$work/open.policy" \\
	-o "\$o" "\$lower" "\$mnt" || exit 1
if [ \$fresh = 1 ] && [ -n "\$upper" ]; then (cd "\$upper" && cp -a . "\$mnt/") || exit 1; fi
SHIM
}

run_um() {	# run_um MODE --ov|--ov=0
	local mode=$1 ov=$2 d=$WORK/um-$1-${2#--} t0 rc run failed mounts othermounts
	local opts
	opts=$(mode_opts "$mode")
	t0=$(date +%s)
	rm -rf "$d" && mkdir -p "$d/base" "$d/sbin" && cp -r "$CONF/unionmount-testsuite" "$d/suite" &&
		chmod -R u+w "$d/suite" && um_shim >"$d/sbin/txfs" && chmod 755 "$d/sbin/txfs" || {
		report 1 "unionmount $ov $mode: FAIL (setup)"
		return
	}
	# a private mount namespace: the shim is bind-mounted over
	# /usr/local/sbin there only; whatever the suite leaves mounted, and
	# every daemon it started, goes when the run ends
	TXFS_UM_LOG=$d/mounts TXFS_UM_OPTS=$(mode_opts "$mode") timeout -k 30 1200 unshare -m --propagation private \
		bash -c '
		# the copies of every other FUSE mount this namespace got at its
		# birth go at once: a copy held here would keep another test'"'"'s
		# daemon from exiting at its unmount for as long as this runs
		awk "\$3 ~ /^fuse/ { print \$2 }" /proc/self/mounts | sort -r |
			while read -r m; do umount -l "$m" 2>/dev/null; done
		mount --bind "$1/sbin" /usr/local/sbin || exit 1
		end() {
			for f in $(find "$1/base" -name daemon.pid 2>/dev/null); do
				p=$(tr -dc 0-9 <"$f")
				[ -n "$p" ] && grep -qa txfs "/proc/$p/cmdline" 2>/dev/null &&
					{ fusermount3 -uz "$1/base/m" 2>/dev/null; kill -9 "$p"; }
			done
			awk -v b="$1/" "index(\$2, b) == 1 { print \$2 }" /proc/self/mounts |
				sort -r | while read -r m; do umount -l "$m"; done
		}
		trap end EXIT
		cd "$1/suite" && UNIONMOUNT_BASEDIR=$1/base timeout -k 10 1100 ./run "$2" --fuse=txfs' \
		_ "$d" "$ov" </dev/null >"$d/out" 2>&1
	rc=$?
	run=$(grep -a '^\*\*\* \./run' "$d/out" | awk '{ print $NF }' | sort -u | wc -l)
	failed=$(grep -a -c -E 'Traceback|TestError' "$d/out")
	# every mount the suite made went through the shim, with the mode's
	# options
	mounts=$(wc -l <"$d/mounts" 2>/dev/null || echo 0)
	othermounts=$(grep -c -v -x "txfs mount -o allow_other${opts:+,$opts}" "$d/mounts" 2>/dev/null)
	if [ $rc = 0 ] && [ "$run" = $UM_TESTS ] && [ "$failed" = 0 ] &&
		[ "$mounts" -gt 0 ] && [ "$othermounts" = 0 ]; then
		report 0 "unionmount $ov $mode: PASS tests $run of $UM_TESTS passed (0 failed, $mounts mounts); $(($(date +%s) - t0)) s"
	else
		grep -a -m 5 -E 'Traceback|TestError|Error' "$d/out" | sed 's/^/    /'
		report 1 "unionmount $ov $mode: FAIL tests $run of $UM_TESTS run ($failed failed, exit $rc, $mounts mounts, $othermounts without -o allow_other${opts:+,$opts}); $(($(date +%s) - t0)) s"
	fi
}

# ---- the runs --------------------------------------------------------------------

# A unionmount lane: the two runs of one mode, each result line printed.
if [ -n "$LANE" ]; then
	run_um "$LANE" --ov
	run_um "$LANE" --ov=0
	exit 0
fi

has() { [[ " ${SUITES[*]} " == *" $1 "* ]]; }
for suite in "${SUITES[@]}"; do
	case $suite in
	pjdfstest | unionmount) ;;
	*) report 1 "$suite: FAIL (unknown suite)" ;;
	esac
done
# The suites wait on timers and round trips far more than they use the
# two cores: the unionmount runs of each mode go on in a lane of their own
# (this script again, a session of its own) beside the pjdfstest runs.
if has unionmount; then
	for mode in "${MODES[@]}"; do
		CONF_WORK=$WORK setsid bash "$HERE/ci.sh" --um-lane "$mode" </dev/null >"$WORK/lane-$mode.out" 2>&1 &
		LANE_PIDS="$LANE_PIDS $!"
	done
fi
if has pjdfstest; then
	for mode in "${MODES[@]}"; do run_pjdfstest "$mode"; done
fi
if has unionmount; then
	for pid in $LANE_PIDS; do wait "$pid"; done
	LANE_PIDS=
	for mode in "${MODES[@]}"; do
		n=0
		while IFS= read -r line; do
			case $line in
			"conformance: unionmount "*": PASS "*) report 0 "${line#conformance: }"; n=$((n + 1)) ;;
			"conformance: unionmount "*) report 1 "${line#conformance: }"; n=$((n + 1)) ;;
			*) printf '%s\n' "$line" ;;
			esac
		done <"$WORK/lane-$mode.out"
		[ $n = 2 ] || report 1 "unionmount $mode: FAIL (the lane ended after $n of 2 runs)"
	done
fi

commit=$(git -c safe.directory="$ROOT" -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
branch=$(git -c safe.directory="$ROOT" -C "$ROOT" rev-parse --abbrev-ref HEAD 2>/dev/null || echo unknown)
dirty=$(git -c safe.directory="$ROOT" -C "$ROOT" status --porcelain --untracked-files=no 2>/dev/null | grep . >/dev/null && echo ", with uncommitted changes")
block() {
	echo "<!-- conformance block: written by tests/conformance/ci.sh -->"
	echo "- Date: $(date -u '+%Y-%m-%d %H:%M UTC'); commit \`$commit\` (branch \`$branch\`$dirty)"
	echo "- Machine: Linux $(uname -r), $(nproc) cores; suites from shared/conformance" \
		"(pjdfstest 85a8aea9, unionmount-testsuite f48a57d2); prove -j$JOBS"
	echo "- Total time: $(($(date +%s) - T_START)) s; $((RUNS - FAILED)) of $RUNS suite runs as expected"
	echo
	echo '```'
	printf '%s\n' "${LINES[@]}"
	echo '```'
	echo "<!-- end of conformance block -->"
}
echo "---- RESULTS block ----"
block | tee "$WORK/results.block"
echo "---- end of RESULTS block ----"
if [ $UPDATE = 1 ]; then
	python3 - "$HERE/RESULTS.md" "$WORK/results.block" <<'PY'
import re, sys
path, new = sys.argv[1], open(sys.argv[2]).read()
text = open(path).read()
pat = re.compile(r"<!-- conformance block:.*?<!-- end of conformance block -->\n",
                 re.S)
if pat.search(text):
    text = pat.sub(lambda m: new, text, count=1)
else:
    text += "\n" + new
open(path, "w").write(text)
PY
	echo "conformance: RESULTS.md updated"
fi
if [ $FAILED = 0 ] && [ $RUNS -gt 0 ]; then
	echo "conformance: PASS ($RUNS of $RUNS suite runs)"
	exit 0
fi
echo "conformance: FAIL ($FAILED of $RUNS suite runs failed)"
exit 1
