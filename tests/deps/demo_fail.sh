#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/deps/demo_fail.sh - failures speak: in a copy of the tree, break
# each step of cli/demo (the package install, meson setup, the compile) and
# check that the demo exits non-zero, prints the failing step's own output
# and one line "txfs demo: STEP failed: why"; and that a package left out of
# cli/deps/deps.txt fails tests/deps/check.sh. Nothing outside the copy
# changes: apt-get, dpkg-query and sudo are stand-ins on PATH.
set -u -o pipefail
SRC=${TXFS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
T=$(mktemp -d "${TXFS_TEST_TMP:-/tmp}/demo-fail.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

copy() {	# copy NAME: the tracked files of the tree, without build dirs
	rm -rf "$T/$1"; mkdir -p "$T/$1"
	tar -C "$SRC" --exclude='./build*' --exclude=./.git -cf - . | tar -C "$T/$1" -xf -
}

# expect NAME RC_FILE OUT_FILE PATTERN...: non-zero exit, every pattern found
expect() {
	local name=$1 rc=$2 out=$3 pat
	shift 3
	if [ "$rc" = 0 ]; then bad "$name: the demo exited 0"; return; fi
	for pat in "$@"; do
		grep -qE -- "$pat" "$out" || { bad "$name: no line matching '$pat' in:"; sed 's/^/    | /' "$out" | tail -n 15; }
	done
	[ $fail = 0 ] && echo "ok   $name: exit $rc, $(grep -m1 '^txfs demo:' "$out")"
}

# 1. the install fails: one package "missing", apt-get fails as apt does
copy inst
mkdir -p "$T/bin"
cat >"$T/bin/dpkg-query" <<'SH'
#!/bin/sh
case "$*" in *libjansson-dev*) exit 1 ;; esac
echo "install ok installed"
SH
cat >"$T/bin/apt-get" <<'SH'
#!/bin/sh
echo "Reading package lists..."
echo "E: Unable to locate package libjansson-dev" >&2
exit 100
SH
printf '#!/bin/sh\nexec "$@"\n' >"$T/bin/sudo"
chmod +x "$T/bin/"*
PATH="$T/bin:$PATH" timeout 120 bash "$T/inst/cli/demo" >"$T/inst.out" 2>&1
expect install $? "$T/inst.out" \
	'^txfs demo: installing packages \(libjansson-dev *\) failed: E: Unable to locate package libjansson-dev' \
	'^Reading package lists'

# 2. meson setup fails: a library nobody has
copy setup
sed -i "s/^lmdb_dep = dependency('lmdb')/lmdb_dep = dependency('txfs-no-such-lib')/" "$T/setup/meson.build"
grep -q txfs-no-such-lib "$T/setup/meson.build" || bad "setup: could not break meson.build"
TXFS_DEMO_NO_INSTALL=1 timeout 300 bash "$T/setup/cli/demo" >"$T/setup.out" 2>&1
expect "meson setup" $? "$T/setup.out" \
	'^txfs demo: meson setup \(configuring the build in .*\) failed: .*txfs-no-such-lib' \
	"Dependency \"txfs-no-such-lib\" not found"

# 3. the compile fails: a syntax error in the header every fs/ file includes
copy compile
printf '\nint txfs_demo_broken(void) { return }\n' >>"$T/compile/fs/txfs.h"
TXFS_DEMO_NO_INSTALL=1 timeout 600 bash "$T/compile/cli/demo" >"$T/compile.out" 2>&1
expect compile $? "$T/compile.out" \
	'^txfs demo: ninja \(compiling txfs in .*\) failed: .*txfs\.h:[0-9]+:[0-9]+: error:' \
	'txfs\.h:[0-9]+:[0-9]+: error: expected expression'

# 4. a package forgotten in cli/deps/deps.txt fails the check
copy forgot
sed -i '/^libjansson-dev/d' "$T/forgot/cli/deps/deps.txt"
TXFS_SRC="$T/forgot" timeout 60 bash "$T/forgot/tests/deps/check.sh" >"$T/forgot.out" 2>&1
rc=$?
if [ $rc = 0 ]; then
	bad "check.sh passed with libjansson-dev left out"
elif grep -q "requires 'jansson'.*not in the \[build\] section" "$T/forgot.out"; then
	echo "ok   forgotten package: $(grep -m1 FAIL "$T/forgot.out")"
else
	bad "check.sh failed without naming jansson:"; cat "$T/forgot.out"
fi
exit $fail
