#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# policy/examples/ci.policy: a checker builds and tests; only the build and
# test output folders (build/, test-results/, .pytest_cache/, __pycache__,
# node_modules/.cache/ ...) can change, the sources cannot; the checker can
# neither commit nor take savepoints through .txfs/ctl, only roll back.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

SRC=${TXFS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
CI=$SRC/policy/examples/ci.policy
[ -r "$CI" ] || { fail "no $CI"; finish; }

fixture
mkdir -p "$WS/src" "$WS/pkg" "$WS/node_modules/left-pad" "$WS/tests"
printf 'int main(void) { return 0; }\n' >"$WS/src/main.c"
printf 'def f():\n    return 1\n' >"$WS/pkg/mod.py"
: >"$WS/pkg/__init__.py"
printf 'module.exports = 1;\n' >"$WS/node_modules/left-pad/index.js"
printf 'from pkg.mod import f\nassert f() == 1\nprint("tests ok")\n' >"$WS/tests/test_mod.py"
printf 'build/app: src/main.c\n\tmkdir -p build\n\tcc -o build/app src/main.c\n' >"$WS/Makefile"
printf '# project\n' >"$WS/README.md"
TXFS_POLICY=$CI
txfs_mount || exit 1
H_src=$(view_hash "$MNT/src")

# what a checker does
allowed "make builds into build/" 'make -s && ./build/app'
allowed "tests run, python writes __pycache__" 'PYTHONDONTWRITEBYTECODE= PYTHONPATH=. python3 tests/test_mod.py && ls pkg/__pycache__/ | grep "mod.*\.pyc" >/dev/null'
allowed "test results" 'mkdir -p test-results && echo "<testsuite/>" > test-results/junit.xml'
allowed "a tool cache in node_modules/.cache" 'mkdir -p node_modules/.cache/tool && echo c > node_modules/.cache/tool/x'
allowed "dist/ and .cache/" 'mkdir -p dist .cache && echo d > dist/app.tar && echo c > .cache/c'
allowed "make clean of build/" 'rm -rf build && test ! -e build'

# what it may not do
refused "editing a source" 'echo "// x" >> src/main.c'
refused "sed -i on a source" 'sed -i s/0/1/ src/main.c'
refused "deleting a source" 'rm README.md'
refused "renaming the sources" 'mv src src2'
refused "a new file at the top" 'touch notes.txt'
refused "a new folder at the top" 'mkdir reports'
refused "chmod" 'chmod +x Makefile'
refused "truncating" ': > README.md'
refused "changing node_modules outside .cache" 'echo 2 > node_modules/left-pad/index.js'
refused "escaping build/ with .." 'mkdir -p build && echo x > build/../README.md'
refused "a symlink in build/ to a source, then writing through it" 'mkdir -p build && ln -sf ../src/main.c build/m.c && echo x >> build/m.c'
check_eq "the sources are as before" "$H_src" "$(view_hash "$MNT/src")"

# the control verbs
refused "echo commit > .txfs/ctl" 'echo commit > .txfs/ctl' 'Operation not permitted'
refused "echo savepoint s > .txfs/ctl" 'echo "savepoint s" > .txfs/ctl' 'Operation not permitted'
check_eq "nothing committed" no "$(test -e "$WS/build" -o -e "$WS/test-results" && echo yes || echo no)"
allowed "echo rollback > .txfs/ctl" 'echo rollback > .txfs/ctl && test ! -e test-results'
log_wellformed
finish
