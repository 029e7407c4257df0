#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The bypass matrix: every indirect way to change or remove protected data
# is refused, and the protected data is intact afterwards. prot/ is
# readonly; vault/ and outer/vault/ cannot be deleted or renamed (as .git
# in the default policy); keeplen cannot change size.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

fixture
mkdir -p "$WS/prot/sub" "$WS/vault/objects" "$WS/outer/vault" "$WS/free/emptydir"
printf 'PROTECTED DATA\n' >"$WS/prot/file"
printf 'sub\n' >"$WS/prot/sub/x"
printf 'obj\n' >"$WS/vault/objects/o1"
printf 'deep\n' >"$WS/outer/vault/v"
printf 'free\n' >"$WS/free/f"
printf 'keep my length\n' >"$WS/keeplen"
use_policy bypass <<'EOF'
# bypass.sh
readonly prot/
deny delete,rename vault/ outer/vault/
deny truncate keeplen
EOF
txfs_mount || exit 1
hashes() { for d in prot vault outer; do printf '%s %s\n' "$d" "$(view_hash "$MNT/$d")"; done; }
hashes >"$T/h.before"

# rename-then-delete of a protected folder (and of a file in it)
refused "mv vault away, then rm -rf it" 'mv vault v2 && rm -rf v2'
refused "mv a file out of vault, then rm it" 'mv vault/objects/o1 o1 && rm o1'
refused "mv prot away, then rm -rf it" 'mv prot p2 && rm -rf p2'
refused "mv -T onto it from an empty folder" 'mv -T free/emptydir vault' 'Permission denied|not empty'
# renaming its parent
refused "mv the parent of a protected folder" 'mv outer outer2'
refused "mv the parent into another folder" 'mv outer free/'
# RENAME_EXCHANGE
py "RENAME_EXCHANGE of the protected folder with an empty one" EACCES rename2 vault free/emptydir exchange
py "RENAME_EXCHANGE of a protected file with a free one" EACCES rename2 prot/file free/f exchange
py "RENAME_EXCHANGE of a free file with a protected one" EACCES rename2 free/f prot/file exchange
py "RENAME_EXCHANGE of the parent" EACCES rename2 outer free/emptydir exchange
# replacing it with a symlink
refused "rm -rf vault && ln -sT free vault" 'rm -rf vault && ln -sT free vault'
refused "ln -sf over a protected file" 'ln -sf ../free/f prot/file'
refused "symlink beside, then mv -T over a protected file" 'ln -s ../free/f tmplink && mv -T tmplink prot/file'
# hard link, then write through it
refused "ln prot/file x, then write x" 'ln prot/file x && echo pwned > x'
py "link(2) of a protected file" EACCES link prot/file y
# a folder fd, then openat
py "openat(dfd, file, O_WRONLY|O_TRUNC)" EACCES openat prot file w,trunc
py "openat(dfd, file, O_WRONLY)" EACCES openat prot file w pwned
py "openat(dfd, new, O_CREAT)" EACCES openat prot new w,creat
# O_TMPFILE + linkat
out=$(cd "$MNT" && "$PYTHON" "$PYOP" tmpfile prot 2>&1)
if [ "${out%%:*}" = EOPNOTSUPP ]; then
	ok "O_TMPFILE in prot/: EOPNOTSUPP from the kernel (nothing to link)"
	echo "note: O_TMPFILE is not supported on this FUSE mount (EOPNOTSUPP): linkat bypass not reachable"
	py "O_TMPFILE in a free folder: EOPNOTSUPP too" EOPNOTSUPP tmpfile free
else
	check_eq "O_TMPFILE in prot/ is refused" EACCES "${out%%:*}"
	py "O_TMPFILE elsewhere, linkat into prot/" EACCES tmpfile free prot/linked
fi
# /proc/self/fd/N reopen
py "/proc/self/fd/N reopened for write" EACCES procfd prot/file pwned
# truncate(2), fallocate, copy_file_range
py "truncate(2) by path" EACCES truncate prot/file 0
py "truncate(2) through a canonicalized path" EACCES truncate prot/sub/../file 3
py "fallocate: opening for write" EACCES fallocate prot/file rw 1000000
py "fallocate on a read-only fd" EBADF fallocate prot/file ro 1000000
py "punch hole: opening for write" EACCES punch prot/file
py "copy_file_range: opening the target for write" EACCES cfr free/f prot/file rw
py "copy_file_range into a read-only fd" EBADF cfr free/f prot/file ro
# shared mmap
py "mmap MAP_SHARED PROT_WRITE of a read-only fd" EACCES mmap prot/file ro pwned
py "mmap: opening for write" EACCES mmap prot/file rw pwned
# size changes of a truncate-protected file
py "deny truncate: O_TRUNC" EACCES open keeplen w,trunc
py "deny truncate: ftruncate of a writable fd" EACCES ftruncate keeplen 0
py "deny truncate: truncate(2)" EACCES truncate keeplen 100
allowed "deny truncate: writing in place is allowed" 'printf K | dd of=keeplen conv=notrunc status=none'
# canonicalization: the same verdicts
for p in 'prot//file' './prot/file' 'prot/./file' 'prot/sub/../file' 'prot/sub/./../file' "$MNT/prot/file" "$MNT//prot///file"; do
	py "write through '$p'" EACCES write "$p" pwned
done
refused "rm -r with a trailing slash" 'rm -r prot/'
refused "rm -r ./vault/" 'rm -r ./vault/'
refused "mv with a trailing slash" 'mv prot/ p3'
refused "mv outer// o2" 'mv outer// o2'
refused "write from a cwd inside prot" 'cd prot && echo pwned >> file'
refused "write via ../ from a cwd inside prot/sub" 'cd prot/sub && echo pwned >> ../file'
refused "write through a symlink to the folder" 'ln -s prot alias && echo pwned >> alias/file'
refused "rm through a symlink to the folder" 'ln -sf prot alias2 && rm alias2/file'
refused "write through a symlink to the file" 'ln -s prot/file flink && echo pwned > flink'
allowed "the same tricks on a free file are allowed" 'echo ok >> free//f && echo ok >> ./free/../free/f'

hashes >"$T/h.after"
if cmp -s "$T/h.before" "$T/h.after"; then
	ok "protected data intact (prot, vault, outer)"
else
	fail "protected data changed:"
	diff "$T/h.before" "$T/h.after" | sed 's/^/    /'
fi
check_content "prot/file content" "$MNT/prot/file" "PROTECTED DATA"
check_eq "keeplen keeps its length" 15 "$(sf %s "$MNT/keeplen")"
log_wellformed
echo rollback >"$MNT/.txfs/ctl" || fail "rollback"
finish
