#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
#
# tests/deps/check.sh - the packages cli/demo installs are the ones the
# build needs: every library a meson.build requires (dependency('x')
# without `required : false`) and every build tool must come from a
# package of the [build] section of cli/deps/deps.txt, and every
# [build] package must be needed (a library's, a tool's, or one of the run
# time programs named below). A forgotten package fails here, not on a
# new user's machine. Cheap: pkg-config and dpkg lookups, no network.
set -u -o pipefail
SRC=${TXFS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
. "$SRC/cli/deps/deps.sh"
DEPS_WHO="deps check"
fail=0
bad() { echo "FAIL: $*"; fail=1; }

build=" $(deps_list build | tr '\n' ' ') "
needed=" "

# The package that owns FILE (dpkg -S; follows /usr/bin -> /bin merges)
owner() {
	local f=$1 p
	p=$(dpkg -S "$f" 2>/dev/null | head -n1 | cut -d: -f1)
	[ -n "$p" ] || p=$(dpkg -S "$(readlink -f "$f")" 2>/dev/null | head -n1 | cut -d: -f1)
	case $f in	# merged /usr: dpkg may know /bin/X for /usr/bin/X
	/usr/bin/* | /usr/sbin/*) [ -n "$p" ] || p=$(dpkg -S "${f#/usr}" 2>/dev/null | head -n1 | cut -d: -f1) ;;
	esac
	echo "${p:-?}"
}

# 1. libraries: dependency('NAME' ...) not optional, in every meson.build
libs=$(cd "$SRC" && git ls-files -- '*meson.build' 2>/dev/null || find . -name meson.build)
libs=$(cd "$SRC" && python3 - $libs <<'PY'
import re, sys
for f in sys.argv[1:]:
    s = open(f).read()
    for m in re.finditer(r"dependency\(\s*'([^']+)'([^)]*)\)", s):
        args = m.group(2).replace(" ", "")
        if "required:false" in args or m.group(1) == "threads":
            continue
        print(m.group(1))
PY
)
libs=$(echo "$libs" | sort -u)
[ -n "$libs" ] || bad "no dependency() found in meson.build: the check reads the wrong files"
for lib in $libs; do
	dir=$(pkg-config --variable=pcfiledir "$lib" 2>/dev/null)
	if [ -z "$dir" ]; then
		bad "meson.build requires '$lib', and no installed package provides $lib.pc (install its -dev package and add it to [build])"
		continue
	fi
	pkg=$(owner "$dir/$lib.pc")
	case $build in
	*" $pkg "*) echo "ok   library $lib: $pkg is in [build]"; needed+="$pkg " ;;
	*) bad "meson.build requires '$lib' ($dir/$lib.pc, package ${pkg:-unknown}), which is not in the [build] section of cli/deps/deps.txt" ;;
	esac
done

# 2. the tools the build runs, and the programs the demo and txfs run
#    (fusermount3: mounting as an ordinary user; git: the demo's workspace)
for tool in meson ninja pkg-config fusermount3 git; do
	path=$(command -v "$tool") || { bad "$tool is not installed"; continue; }
	pkg=$(owner "$path")
	case $build in
	*" $pkg "*) echo "ok   tool $tool: $pkg is in [build]"; needed+="$pkg " ;;
	*) bad "$tool ($path, package ${pkg:-unknown}) is not in the [build] section" ;;
	esac
done
# the C compiler: build-essential (a meta package: gcc, make, libc6-dev)
case $build in
*" build-essential "*) needed+="build-essential " ;;
*) bad "build-essential (the C compiler) is not in the [build] section" ;;
esac

# 3. nothing more than it must
for p in $build; do
	case $needed in
	*" $p "*) ;;
	*) bad "[build] lists $p, which no required library, build tool or run-time program needs (move it to [test] or drop it)" ;;
	esac
done

[ $fail = 0 ] && echo "deps check: the [build] section is exactly what meson.build and the demo need"
exit $fail
