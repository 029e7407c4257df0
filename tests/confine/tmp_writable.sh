#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# tmp_writable - the temp folders stay writable under confinement: /tmp,
# $TMPDIR, /dev/shm (built in) and the usual device files; a folder not in
# the list (here one under /var/tmp) is not, and neither is a sibling of a
# writable folder. Every file this scenario creates in /tmp or /dev/shm has
# a unique name and is removed by the confined command itself.
. "$(dirname "$0")/lib.sh"

require_landlock
fixture
mkdir -p "$T/sibling" && as_owner "$T/sibling"

must_pass "/tmp: mktemp, write, read back, remove" -- bash -c \
	'f=$(mktemp /tmp/txfs-confine-tmp.XXXXXX) && echo hi > "$f" && [ "$(cat "$f")" = hi ] && rm "$f"'
must_pass "/tmp: mkdir, rename inside, rmdir" -- bash -c \
	'd=$(mktemp -d /tmp/txfs-confine-tmp.XXXXXX) && mkdir "$d/a" && mv "$d/a" "$d/b" && rm -r "$d"'
must_pass "\$TMPDIR: mktemp without a path, write, remove" -- bash -c \
	'f=$(mktemp) && case $f in "$TMPDIR"/*) ;; *) exit 3;; esac && echo hi > "$f" && rm "$f"'
if [ -d /dev/shm ]; then
	must_pass "/dev/shm: write and remove" -- bash -c \
		'f=$(mktemp /dev/shm/txfs-confine-shm.XXXXXX) && echo hi > "$f" && rm "$f"'
fi
must_pass "/dev/null, /dev/zero, /dev/full open for writing" -- bash -c \
	'echo x > /dev/null && echo x > /dev/zero && { echo x > /dev/full; true; } 2>/dev/null'
if [ -n "$PY" ]; then
	must_pass "python tempfile in \$TMPDIR" -- "$PY" -c \
		'import tempfile; f = tempfile.NamedTemporaryFile(); f.write(b"x"); f.flush()'
fi
must_fail "a folder not in the list (/var/tmp/...)" -- bash -c "echo x > '$T/sibling/new'"
must_fail "the parent of a writable folder" -- bash -c "echo x > '$T/new'"
if [ -z "$(ls -A "$T/sibling")" ] && [ ! -e "$T/new" ]; then
	ok "nothing was created outside"
else
	fail "files were created outside: $(ls -A "$T/sibling" "$T/new" 2>&1)"
fi
finish
