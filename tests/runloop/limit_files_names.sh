#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# limit_files_names - `limit files N` counts every new name, not only new
# objects (txfs.policy(5): "paths changed in one transaction"). With
# `limit files 4`, under txfs run as root and as the unprivileged test
# user, each form starts with one new file (f1 and the root folder it
# changes: two paths) and then tries to make 40 new names; each must stop
# at the limit (EDQUOT) with two more names, and txfs run commits what
# was made (exit 0):
#   - hard links of f1 (ln f1 lN; issue: 302 links used to be committed);
#   - symlinks, fifos (mkfifo), folders (mkdir);
#   - O_TMPFILE files given a name with linkat (one path each: the file
#     is counted when it is made; where the kernel refuses linkat of a
#     FUSE O_TMPFILE with EXDEV, no name at all);
#   - a file of the real directory renamed to a new name (its copy and
#     the new name: two paths; the second rename is refused).
# Afterwards the real directory holds exactly what the limit let through.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
printf 'limit files 4\n' >"$T/files.policy" && chmod 644 "$T/files.policy"

# FORM: shell code making new name number $i; prints made=N.
try_form() {
	local what=$1 form=$2 want=$3 prefix=$4 u=$WHO n
	ws_fixture
	new_state
	local before
	before=$(ls -A "$WS" | sort | tr '\n' ' ')
	run_txfs -- --json --policy "$T/files.policy" -- bash -c "echo 1 > f1 || exit 3
i=0; while [ \$i -lt 40 ]; do $form || break; i=\$((i+1)); done
echo made=\$i >&2; exit 0"
	check_eq "[$u] $what: names made before the limit" "made=$want" \
		"$(grep -oE '^made=[0-9]+' "$RUN_ERR")"
	grep -q "Disk quota exceeded" "$RUN_ERR" && ok "[$u] $what: refused with EDQUOT" ||
		fail "[$u] $what: no EDQUOT: $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	check_eq "[$u] $what: committed" 0 "$(jget exit)"
	n=$(cd "$WS" && ls -A | grep -c "^$prefix[0-9]")
	check_eq "[$u] $what: new names in the real directory" "$want" "$n"
	[ -e "$WS/f1" ] && ok "[$u] $what: f1 committed" || fail "[$u] $what: f1 missing"
	check_unmounted "[$u] $what: after txfs run"
}

body() {
	try_form "hard links" 'ln f1 l$i' 2 l
	try_form "symlinks" 'ln -s f1 s$i' 2 s
	try_form "fifos" 'mkfifo p$i' 2 p
	try_form "folders" 'mkdir d$i' 2 d
	try_form "O_TMPFILE + linkat" '"$PY" -c "import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = os.open(\".\", os.O_TMPFILE | os.O_WRONLY, 0o644)
os.write(fd, b\"t\")
# linkat(AT_FDCWD, /proc/self/fd/N, AT_FDCWD, NAME, AT_SYMLINK_FOLLOW)
if libc.linkat(-100, b\"/proc/self/fd/%d\" % fd, -100, sys.argv[1].encode(), 0x400) < 0:
    e = ctypes.get_errno()
    print(\"linkat: %s\" % os.strerror(e), file=sys.stderr)
    sys.exit(1)" o$i' 2 o
	# a.txt (real) renamed to r0: its copy and the name r0 (4 with f1);
	# dir/b.txt to r1 is past the limit
	try_form "renames of real files to new names" 'case $i in 0) mv a.txt r0;; *) mv dir/b.txt r$i;; esac' 1 r
}

for_each_user body
finish
