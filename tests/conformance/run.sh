#!/bin/bash
# Conformance runs of public file system test suites against a txfs mount
# and a plain directory (developer-run, not CI; see RESULTS.md). The suites
# are fetched by hand and never copied into this repository.
#
#   tests/conformance/run.sh --txfs BUILD/cli/txfs --scratch DIR \
#       [--pjdfstest PJD_SRC] [--unionmount UM_SRC] [--git GIT_SRC] \
#       [--fsx FSX_BIN] [--fsstress FSSTRESS_BIN]
#
# PJD_SRC: a checkout of github.com/pjd/pjdfstest (built here with cc, no
# autotools: an empty config.h and the HAVE_* of a Linux libc).
# UM_SRC: a checkout of github.com/amir73il/unionmount-testsuite, run with
# --ov and --ov=0 --fuse=txfs: mount(8) -> mount.fuse3 -> "txfs SRC MNT -o
# lowerdir=L,upperdir=U,workdir=W"; a shim answers as "txfs" (bind-mounted
# over /usr/local/sbin in a private mount namespace, as
# tests/mount/mount_helper.sh does) and mounts L with txfs, its state in
# W/state, copying what the suite put in U into the fresh mount.
# GIT_SRC: git's source at tag v2.55.0, built with `make NO_CURL=1
# NO_EXPAT=1 NO_GETTEXT=1 NO_TCLTK=1 NO_PERL=1 NO_PYTHON=1`; its t2* and
# t7[0-5]* scripts run with their trash directories inside the mount.
# FSX_BIN, FSSTRESS_BIN: the classic standalone fsx (options -N -S -c -L -R
# -W -P) and fsstress (-n -p -s -c -d -f) programs, built by hand (see
# RESULTS.md); run on new files, on reopened files and on real files copied
# up, then fsstress, reading every file, rm -rf, a rollback and a commit
# round trip checked against a plain directory.
# Must run as root (pjdfstest changes owners); mounts with -o allow_other
# and a policy without rules; everything happens under --scratch, which is
# emptied first. Prints one summary line per suite and target.
set -u
TXFS= SCRATCH= PJD= GITSRC= UM= FSX= FSS=
while [ $# -gt 0 ]; do
	case $1 in
	--txfs) TXFS=$(readlink -f "$2"); shift 2 ;;
	--scratch) SCRATCH=$2; shift 2 ;;
	--pjdfstest) PJD=$(readlink -f "$2"); shift 2 ;;
	--git) GITSRC=$(readlink -f "$2"); shift 2 ;;
	--unionmount) UM=$(readlink -f "$2"); shift 2 ;;
	--fsx) FSX=$(readlink -f "$2"); shift 2 ;;
	--fsstress) FSS=$(readlink -f "$2"); shift 2 ;;
	*) echo "usage: $0 --txfs BIN --scratch DIR [--pjdfstest DIR] [--unionmount DIR] [--git DIR] [--fsx BIN] [--fsstress BIN]" >&2; exit 2 ;;
	esac
done
[ -x "$TXFS" ] && [ -n "$SCRATCH" ] || { echo "$0: --txfs and --scratch are needed" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "$0: run as root" >&2; exit 2; }
mkdir -p "$SCRATCH" && SCRATCH=$(readlink -f "$SCRATCH")
# every txfs mount under the scratch folder goes away on exit (txfs_at
# runs in a command substitution, so nothing is recorded there)
cleanup() {
	local m
	awk -v s="$SCRATCH/" 'index($2, s) == 1 && $3 == "fuse.txfs" { print $2 }' /proc/self/mounts |
	while read -r m; do
		timeout 60 "$TXFS" umount "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null
	done
}
trap cleanup EXIT

# txfs_at NAME [FILE...]: a fresh workspace and mount; each FILE is first
# created in the workspace (256 KiB of random bytes: real files that the
# mount copies up); prints the mount point.
txfs_at() {
	local d=$SCRATCH/$1 f
	rm -rf "$d" && mkdir -p "$d/ws" "$d/mnt" "$d/state"
	shift
	for f in "$@"; do head -c 262144 /dev/urandom >"$d/ws/$f" || return 1; done
	printf '# conformance runs: no rules\n' >"$d/open.policy"
	timeout 60 "$TXFS" mount --state "$d/state" --policy "$d/open.policy" \
		-o allow_other "$d/ws" "$d/mnt" >&2 || return 1
	echo "$d/mnt"
}

plain_at() {
	rm -rf "${SCRATCH:?}/$1" && mkdir -p "$SCRATCH/$1" && echo "$SCRATCH/$1"
}

run_pjdfstest() {
	local where=$1 name=$2 out=$SCRATCH/pjdfstest.$2.out
	(cd "$where" && timeout 3600 prove -r "$PJD/tests") >"$out" 2>&1
	echo "pjdfstest $name: $(grep -E '^(Files=|Result:)' "$out" | tr '\n' ' ')" \
		"failed files: $(grep -E '^/.*\.t +\(Wstat' "$out" | sed 's#.*/tests/##; s# .*##' | tr '\n' ' ')"
}

run_git() {
	local where=$1 name=$2 out=$SCRATCH/git.$2.out
	(cd "$GITSRC/t" && timeout 7200 make DEFAULT_TEST_TARGET=prove \
		GIT_TEST_OPTS="--root=$where" GIT_PROVE_OPTS="-j2" \
		T="$(cd "$GITSRC/t" && ls t2[0-9]*.sh t7[0-5]*.sh | tr '\n' ' ')") >"$out" 2>&1
	echo "git $name: $(grep -E '^(Files=|Result:)' "$out" | tr '\n' ' ')"
}

if [ -n "$PJD" ]; then
	if [ ! -x "$PJD/pjdfstest" ]; then
		: >"$PJD/config.h"
		cc -O2 -D_GNU_SOURCE -DHAVE_SYS_SYSMACROS_H -DHAVE_OPENAT \
			-DHAVE_UNLINKAT -DHAVE_MKDIRAT -DHAVE_LINKAT -DHAVE_SYMLINKAT \
			-DHAVE_RENAMEAT -DHAVE_MKFIFOAT -DHAVE_MKNODAT -DHAVE_FCHMODAT \
			-DHAVE_FCHOWNAT -DHAVE_FSTATAT -DHAVE_FACCESSAT \
			-DHAVE_READLINKAT -DHAVE_POSIX_FALLOCATE -DHAVE_UTIMENSAT \
			-o "$PJD/pjdfstest" "$PJD/pjdfstest.c" || exit 1
	fi
	run_pjdfstest "$(plain_at pjd-native)" native
	m=$(txfs_at pjd-txfs) && run_pjdfstest "$m" txfs && {
		# the files that failed, again, from a scratch copy of the tests
		# without block and char devices in their type lists: what is
		# left fails for another reason than the refused device nodes
		rm -rf "$SCRATCH/pjd-nodev" && cp -r "$PJD" "$SCRATCH/pjd-nodev"
		find "$SCRATCH/pjd-nodev/tests" -name '*.t' -exec sed -i -E \
			'/for type[0-9]* in/{s/ block//; s/ char//}' {} +
		failed=$(grep -E '^/.*\.t +\(Wstat' "$SCRATCH/pjdfstest.txfs.out" |
			sed "s#^.*/tests/#$SCRATCH/pjd-nodev/tests/#; s# .*##")
		(cd "$m" && timeout 3600 prove $failed) >"$SCRATCH/pjdfstest.nodev.out" 2>&1
		echo "pjdfstest txfs, failed files without device types:" \
			"$(grep -E '^/.*\.t +\(Wstat.*Failed: [1-9]' "$SCRATCH/pjdfstest.nodev.out" |
			sed 's#.*/tests/##; s# .*##' | tr '\n' ' ')"
	}
fi
# the shim mount.fuse3 runs as "txfs" for unionmount-testsuite
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
"$TXFS" mount --state "\$work/state" --policy "\$work/open.policy" -o allow_other "\$lower" "\$mnt" || exit 1
if [ \$fresh = 1 ] && [ -n "\$upper" ]; then (cd "\$upper" && cp -a . "\$mnt/") || exit 1; fi
SHIM
}

run_um() {
	local mode=$1 d=$SCRATCH/um out=$SCRATCH/unionmount.$1.out
	rm -rf "$d" && mkdir -p "$d/base" "$d/sbin"
	um_shim >"$d/sbin/txfs" && chmod +x "$d/sbin/txfs"
	unshare -m --propagation private bash -c '
		mount --bind "$1/sbin" /usr/local/sbin || exit 1
		cd "$2" && UNIONMOUNT_BASEDIR=$1/base timeout 1800 ./run "$3" --fuse=txfs
		rc=$?
		umount "$1/base/m" 2>/dev/null
		exit $rc' _ "$d" "$UM" "$mode" >"$out" 2>&1
	echo "unionmount-testsuite $mode --fuse=txfs: exit $?," \
		"$(grep -a '^\*\*\* \./run' "$out" | awk '{ print $NF }' | sort -u | wc -l) tests run;" \
		"failures: $(grep -a -c -E 'Traceback|TestError' "$out")"
}
if [ -n "$UM" ]; then
	run_um --ov
	run_um --ov=0
fi
if [ -n "$GITSRC" ]; then
	run_git "$(plain_at git-native)" native
	m=$(txfs_at git-txfs) && run_git "$m" txfs
fi

# manifest DIR: what a commit round trip must keep, one line per entry
# (path, type, mode, link target; link count of non-folders), then the
# content hash of every regular file; times and folder sizes are left out.
manifest() {
	(cd "$1" && find . ! -name . -printf '%p %y %m %l\n' | sort &&
		find . ! -name . ! -type d -printf '%p links=%n\n' | sort &&
		find . -type f -print0 | sort -z | xargs -0r md5sum)
}

# fsx_one NAME LABEL FILE OPTS...: one fsx run, its log files in the scratch
# folder (outside the tree under test); prints a result line.
fsx_one() {
	local name=$1 label=$2 file=$3 t0 rc logd=$SCRATCH/fsxlog.$1.$2
	shift 3
	rm -rf "$logd" && mkdir -p "$logd"
	t0=$(date +%s)
	timeout 900 "$FSX" -q -P "$logd" "$@" "$file" >"$logd/out" 2>&1
	rc=$?
	echo "fsx $name $label ($*): exit $rc, $(($(date +%s) - t0)) s," \
		"$(grep -c 'All operations completed A-OK' "$logd/out") A-OK"
}

# run_fsx WHERE NAME: new file (mapped I/O and plain I/O), reopened at random
# (-c), and real files that exist before the mount (-L keeps the size and
# rewrites the file in place; without -L fsx opens with O_TRUNC).
run_fsx() {
	local w=$1 n=$2
	fsx_one "$n" new "$w/new" -N 20000 -S 1
	fsx_one "$n" new-nommap "$w/new-nommap" -N 20000 -S 2 -R -W
	fsx_one "$n" reopen "$w/reopen" -N 20000 -S 3 -c 20
	fsx_one "$n" reopen-nommap "$w/reopen-nommap" -N 20000 -S 4 -c 20 -R -W
	fsx_one "$n" real-lite "$w/real-lite" -N 20000 -S 5 -L
	fsx_one "$n" real-lite-reopen "$w/real-lite-reopen" -N 20000 -S 6 -L -c 20
	fsx_one "$n" real-trunc "$w/real-trunc" -N 20000 -S 7
	fsx_one "$n" new-long "$w/new-long" -N 200000 -S 8 -c 100
}

# fss_run WHERE NAME SEED OPTS...: fsstress into WHERE/stress, keeping its
# files (-c); prints a result line.
fss_run() {
	local w=$1 n=$2 seed=$3 t0 rc out=$SCRATCH/fsstress.$2.$3.out
	shift 3
	t0=$(date +%s)
	timeout 900 "$FSS" -n 2000 -p 2 -s "$seed" -c -d "$w/stress" "$@" >"$out" 2>&1
	rc=$?
	echo "fsstress $n seed $seed ($*): exit $rc, $(($(date +%s) - t0)) s," \
		"$(find "$w/stress" | wc -l) entries"
}

# read_all_rm WHERE NAME: read every file, then rm -rf the tree; prints
# the errors of both and whether WHERE is empty afterwards.
read_all_rm() {
	local w=$1 n=$2 rerr rmerr
	rerr=$(cd "$w" && timeout 600 find stress -type f -print0 | timeout 600 xargs -0r cat 2>&1 >/dev/null | wc -l)
	rmerr=$(timeout 600 rm -rf "$w/stress" 2>&1 | wc -l)
	echo "fsstress $n: read errors $rerr, rm -rf errors $rmerr," \
		"left in the tree: $(find "$w" -mindepth 1 | wc -l)"
}

if [ -n "$FSX" ]; then
	plain_at fsx-native >/dev/null
	for f in real-lite real-lite-reopen real-trunc; do
		head -c 262144 /dev/urandom >"$SCRATCH/fsx-native/$f"
	done
	run_fsx "$SCRATCH/fsx-native" native
	m=$(txfs_at fsx-txfs real-lite real-lite-reopen real-trunc) && {
		run_fsx "$m" txfs
		# what fsx left must reach the workspace as it is in the mount
		manifest "$m" >"$SCRATCH/fsx.mnt.manifest"
		timeout 120 "$TXFS" commit "$m" >/dev/null
		echo "fsx txfs commit: exit $?, workspace equals mount:" \
			"$(manifest "$SCRATCH/fsx-txfs/ws" | cmp -s - "$SCRATCH/fsx.mnt.manifest" && echo yes || echo NO)"
	}
	# the same on real files, then a rollback: the workspace files must
	# be byte for byte what they were before the mount, and so must the
	# mount show them
	m=$(txfs_at fsx-rollback real-lite real-trunc) && {
		(cd "$SCRATCH/fsx-rollback/ws" && md5sum real-lite real-trunc) >"$SCRATCH/fsx.rb.before"
		fsx_one txfs-rollback real-lite "$m/real-lite" -N 20000 -S 9 -L -c 20
		fsx_one txfs-rollback real-trunc "$m/real-trunc" -N 20000 -S 10 -c 20
		timeout 120 "$TXFS" rollback "$m" >/dev/null
		echo "fsx txfs rollback: exit $?, workspace unchanged:" \
			"$(cd "$SCRATCH/fsx-rollback/ws" && md5sum real-lite real-trunc | cmp -s - "$SCRATCH/fsx.rb.before" && echo yes || echo NO)," \
			"mount shows the originals:" \
			"$(cd "$m" && md5sum real-lite real-trunc | cmp -s - "$SCRATCH/fsx.rb.before" && echo yes || echo NO)," \
			"entries: $(ls -A "$m" | tr '\n' ' ')"
	}
fi
if [ -n "$FSS" ]; then
	p=$(plain_at fss-native)
	fss_run "$p" native 1
	read_all_rm "$p" native
	fss_run "$p" native 2 -f mknod=0 -f dwrite=0
	manifest "$p" >"$SCRATCH/fss.native.manifest"
	m=$(txfs_at fss-txfs) && {
		fss_run "$m" txfs 1
		read_all_rm "$m" txfs
		timeout 60 "$TXFS" status "$m" >"$SCRATCH/fss.status.after-rm" 2>&1
		echo "fsstress txfs: status after rm -rf: $(tr '\n' ' ' <"$SCRATCH/fss.status.after-rm")"
		timeout 120 "$TXFS" rollback "$m" >/dev/null
		echo "fsstress txfs: rollback exit $?, mount entries" \
			"$(find "$m" -mindepth 1 | wc -l), workspace entries" \
			"$(find "$SCRATCH/fss-txfs/ws" -mindepth 1 | wc -l)"
		# the commit round trip, with mknod off (txfs refuses the
		# character devices fsstress makes, which shifts its names) and
		# dwrite off (its offsets and lengths follow st_blksize: 64 KiB
		# on txfs, 4 KiB on ext4, so the bytes differ by design)
		fss_run "$m" txfs 2 -f mknod=0 -f dwrite=0
		manifest "$m" >"$SCRATCH/fss.mnt.manifest"
		timeout 600 "$TXFS" commit "$m" >/dev/null
		echo "fsstress txfs: commit exit $?;" \
			"workspace equals mount: $(manifest "$SCRATCH/fss-txfs/ws" | cmp -s - "$SCRATCH/fss.mnt.manifest" && echo yes || echo NO);" \
			"mount equals plain directory: $(cmp -s "$SCRATCH/fss.mnt.manifest" "$SCRATCH/fss.native.manifest" && echo yes || echo NO)"
	}
fi
