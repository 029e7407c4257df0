#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# deny per operation, through real programs: one folder per operation
# (op_read/ ... op_all/), each refused there and only there, while the
# other operations on the same files stay allowed; allow before deny is an
# exception; the first matching rule decides; readonly. Every veto is a
# JSON line in .txfs/log with op, path, rule FILE:LINE, errno, pid, uid,
# exe; .txfs/status counts them. Nothing is committed: the real directory
# is unchanged at the end.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

OPS="read write create delete rename chmod chown truncate link symlink mkdir xattr modify all"
fixture
mkdir -p "$WS/free/dir" "$WS/exc" "$WS/fm" "$WS/ro/sub"
for op in $OPS; do
	mkdir -p "$WS/op_$op/d" "$WS/op_$op/emptyd"
	printf '%s data\n' "$op" >"$WS/op_$op/f"
	printf 'g\n' >"$WS/op_$op/g"
	setfattr -n user.pre -v 1 "$WS/op_$op/f"
done
for f in x y r1 l1 s1 m1 own a1 a2 c1; do printf '%s\n' "$f" >"$WS/free/$f"; done
echo inner >"$WS/free/dir/inner"
echo exc >"$WS/exc/allowed.txt"; echo exc >"$WS/exc/other.txt"
echo fm >"$WS/fm/a.txt"; echo fm >"$WS/fm/b.txt"
echo ro >"$WS/ro/f"; echo ro >"$WS/ro/sub/g"; setfattr -n user.pre -v 1 "$WS/ro/f"

use_policy deny_ops < <(
	echo "# deny_ops: one folder per operation"
	for op in $OPS; do echo "deny $op op_$op/"; done
	echo "# an allow before a deny is an exception to it"
	echo "allow write exc/allowed.txt"
	echo "deny write exc/"
	echo "# the first rule that matches decides"
	echo "deny write fm/a.txt"
	echo "allow write fm/"
	echo "deny write fm/"
	echo "readonly ro/"
)
txfs_mount || exit 1
L() { rule_line "$1"; }
H_ro=$(view_hash "$MNT/ro")
H_modify=$(view_hash "$MNT/op_modify")
H_all=$(view_hash "$MNT/op_all")

# read: reading a file or listing a folder
refused "deny read: cat" 'cat op_read/f'
refused "deny read: cp from it" 'cp op_read/f free/copy'
refused "deny read: grep -r" 'grep -r data op_read'
py "deny read: open O_RDONLY" EACCES open op_read/f r
refused "deny read: ls of the folder (listing a folder is read)" 'ls op_read'
allowed "deny read: stat still works" 'stat op_read/f'
allowed "deny read: appending (write) still works" 'echo more >> op_read/f'
log_veto "deny read" read op_read/f "$(L 'deny read op_read/')"

# write: writing data, setting times
refused "deny write: append" 'echo x >> op_write/f'
refused "deny write: touch (times are a write)" 'touch op_write/f'
refused "deny write: truncate(1) (truncate is a write)" 'truncate -s 0 op_write/f'
py "deny write: open O_RDWR" EACCES open op_write/f rw
refused "deny write: a new file cannot be written either" 'echo x > op_write/new'
allowed "deny write: cat still works" 'cat op_write/f'
# a file renamed onto the denied name sets what it holds: refused, also
# for a file kept open for writing (its descriptor would write there)
refused "deny write: mv a file onto it" 'echo evil > free/w1 && mv free/w1 op_write/f'
refused "deny write: rename onto it, held open" 'exec 9>free/w2 && mv free/w2 op_write/f && echo evil >&9'
refused "deny write: python os.replace onto it" 'python3 -c "import os; open(\"free/w3\",\"w\").write(\"evil\"); os.replace(\"free/w3\", \"op_write/f\")"'
allowed "deny write: rm still works" 'rm op_write/g'
check_content "deny write: content intact" "$MNT/op_write/f" "write data"
log_veto "deny write" write op_write/f "$(L 'deny write op_write/')"

# create: a new file, the target of a rename or of a hard link
refused "deny create: touch" 'touch op_create/new'
refused "deny create: cp into" 'cp free/x op_create/'
refused "deny create: mv into" 'mv free/y op_create/y'
refused "deny create: ln into" 'ln free/c1 op_create/hl'
py "deny create: O_CREAT|O_EXCL" EACCES open op_create/new2 w,creat,excl
allowed "deny create: append to an existing file" 'echo more >> op_create/f'
allowed "deny create: mkdir is its own operation" 'mkdir op_create/dd'
allowed "deny create: rm" 'rm op_create/g'
log_veto "deny create" create op_create/new "$(L 'deny create op_create/')"

# delete: rm, rmdir, the source of a rename, a file a rename replaces
refused "deny delete: rm" 'rm op_delete/f'
refused "deny delete: rmdir" 'rmdir op_delete/emptyd'
refused "deny delete: rm -rf" 'rm -rf op_delete'
refused "deny delete: mv out" 'mv op_delete/g free/g'
refused "deny delete: mv over it" 'mv free/m1 op_delete/f'
refused "deny delete: sed -i (replaces by rename)" 'sed -i s/data/DATA/ op_delete/f'
allowed "deny delete: append" 'echo more >> op_delete/f'
allowed "deny delete: touch a new file" 'touch op_delete/new'
check_content "deny delete: content as appended" "$MNT/op_delete/f" "delete data
more"
log_veto "deny delete" delete op_delete/f "$(L 'deny delete op_delete/')"

# rename: both ends
refused "deny rename: mv inside" 'mv op_rename/f op_rename/f2'
refused "deny rename: mv in from outside" 'mv free/r1 op_rename/r1'
refused "deny rename: mv the folder" 'mv op_rename op_renamed'
allowed "deny rename: rm" 'rm op_rename/g'
log_veto "deny rename" rename op_rename/f "$(L 'deny rename op_rename/')"

# chmod
refused "deny chmod: chmod" 'chmod 600 op_chmod/f'
refused "deny chmod: chmod -R" 'chmod -R go-rwx op_chmod'
allowed "deny chmod: append" 'echo more >> op_chmod/f'
check_eq "deny chmod: mode intact" 644 "$(sf %a "$MNT/op_chmod/f")"
log_veto "deny chmod" chmod op_chmod/f "$(L 'deny chmod op_chmod/')"

# chown (as root only: an ordinary user cannot chown at all)
if is_root; then
	refused "deny chown: chown" 'chown 1234:1234 op_chown/f'
	refused "deny chown: chgrp" 'chgrp 1234 op_chown/g'
	allowed "deny chown: chown elsewhere" 'chown 1234 free/own'
	allowed "deny chown: chmod" 'chmod 600 op_chown/g'
	check_eq "deny chown: owner intact" "0:0" "$(sf %u:%g "$MNT/op_chown/f")"
	log_veto "deny chown" chown op_chown/f "$(L 'deny chown op_chown/')"
else
	echo "note: deny chown not tested: not root (only root may chown)"
fi

# truncate: any change of size
refused "deny truncate: truncate -s 0" 'truncate -s 0 op_truncate/f'
refused "deny truncate: truncate -s +1K (growing)" 'truncate -s +1K op_truncate/f'
refused "deny truncate: > (O_TRUNC)" ': > op_truncate/f'
py "deny truncate: ftruncate on a writable fd" EACCES ftruncate op_truncate/f 0
py "deny truncate: truncate(2)" EACCES truncate op_truncate/f 1
allowed "deny truncate: append" 'echo more >> op_truncate/f'
check_content "deny truncate: content as appended" "$MNT/op_truncate/f" "truncate data
more"
log_veto "deny truncate" truncate op_truncate/f "$(L 'deny truncate op_truncate/')"

# link
refused "deny link: ln into" 'ln free/l1 op_link/l1'
refused "deny link: ln inside" 'ln op_link/f op_link/f2'
allowed "deny link: ln -s" 'ln -s f op_link/sym'
allowed "deny link: cp" 'cp free/l1 op_link/copy'
log_veto "deny link" link op_link/l1 "$(L 'deny link op_link/')"

# symlink
refused "deny symlink: ln -s" 'ln -s ../free/x op_symlink/s'
allowed "deny symlink: hard link" 'ln free/s1 op_symlink/hard'
allowed "deny symlink: touch" 'touch op_symlink/new'
log_veto "deny symlink" symlink op_symlink/s "$(L 'deny symlink op_symlink/')"

# mkdir
refused "deny mkdir: mkdir" 'mkdir op_mkdir/dd'
refused "deny mkdir: mkdir -p" 'mkdir -p op_mkdir/a/b'
refused "deny mkdir: cp -r a folder in" 'cp -r free/dir op_mkdir/'
allowed "deny mkdir: touch" 'touch op_mkdir/new'
log_veto "deny mkdir" mkdir op_mkdir/dd "$(L 'deny mkdir op_mkdir/')"

# xattr
refused "deny xattr: setfattr" 'setfattr -n user.k -v v op_xattr/f'
refused "deny xattr: setfattr -x" 'setfattr -x user.pre op_xattr/f'
allowed "deny xattr: getfattr" 'getfattr -n user.pre op_xattr/f'
allowed "deny xattr: append" 'echo more >> op_xattr/f'
log_veto "deny xattr" xattr op_xattr/f "$(L 'deny xattr op_xattr/')"

# modify: everything but read
refused "deny modify: append" 'echo x >> op_modify/f'
refused "deny modify: touch new" 'touch op_modify/new'
refused "deny modify: rm" 'rm op_modify/g'
refused "deny modify: mv" 'mv op_modify/f op_modify/f2'
refused "deny modify: chmod" 'chmod 600 op_modify/f'
refused "deny modify: mkdir" 'mkdir op_modify/dd'
refused "deny modify: ln -s" 'ln -s f op_modify/s'
refused "deny modify: truncate" 'truncate -s 0 op_modify/f'
refused "deny modify: setfattr" 'setfattr -n user.k -v v op_modify/f'
refused "deny modify: sed -i" 'sed -i s/a/b/ op_modify/f'
allowed "deny modify: cat" 'cat op_modify/f'
allowed "deny modify: ls" 'ls op_modify'
check_eq "deny modify: the folder is as before" "$H_modify" "$(view_hash "$MNT/op_modify")"

# all: read too, but not hidden
refused "deny all: cat" 'cat op_all/f'
refused "deny all: append" 'echo x >> op_all/f'
refused "deny all: rm" 'rm op_all/g'
refused "deny all: ls" 'ls op_all'
allowed "deny all: it is not hidden (stat)" 'stat op_all/f'
log_veto "deny all (read)" read op_all/f "$(L 'deny all op_all/')"
log_veto "deny all (write)" write op_all/f "$(L 'deny all op_all/')"
check_eq "deny all: the folder is as before" "$H_all" "$(view_hash "$MNT/op_all")"

# allow before deny; first match wins
allowed "allow write before deny write: the exception" 'echo ok >> exc/allowed.txt'
refused "allow write before deny write: the rest" 'echo no >> exc/other.txt'
check_content "the exception was written" "$MNT/exc/allowed.txt" "exc
ok"
refused "first match: deny before allow" 'echo no >> fm/a.txt'
allowed "first match: allow before deny" 'echo ok >> fm/b.txt'
log_veto "first match" write fm/a.txt "$(L 'deny write fm/a.txt')"

# readonly
refused "readonly: rm" 'rm ro/f'
refused "readonly: rm -rf" 'rm -rf ro'
refused "readonly: mv" 'mv ro/f ro/f2'
refused "readonly: mv the folder" 'mv ro ro2'
refused "readonly: sed -i" 'sed -i s/ro/RO/ ro/f'
refused "readonly: cp over" 'cp free/x ro/f'
refused "readonly: chmod" 'chmod 600 ro/f'
refused "readonly: touch" 'touch ro/f'
refused "readonly: touch new" 'touch ro/new'
refused "readonly: mkdir" 'mkdir ro/dd'
refused "readonly: >>" 'echo x >> ro/sub/g'
refused "readonly: truncate" 'truncate -s 0 ro/f'
refused "readonly: ln -s" 'ln -s f ro/s'
refused "readonly: setfattr" 'setfattr -n user.k -v v ro/f'
allowed "readonly: cat, ls, grep -r" 'cat ro/f && ls ro && grep -rq ro ro'
allowed "readonly: cp out" 'cp ro/f free/rocopy'
log_veto "readonly" delete ro/f "$(L 'readonly ro/')"
check_eq "readonly: the folder is as before" "$H_ro" "$(view_hash "$MNT/ro")"

# the audit log and the counter
log_wellformed
n=$(($(log_count veto) + $(log_count guard)))
check_eq ".txfs/status.json vetoes equals the vetoes in the log" "$n" "$(status_field vetoes)"
grep -q "^vetoes: $n\$" "$MNT/.txfs/status" && ok ".txfs/status says vetoes: $n" ||
	fail ".txfs/status: expected 'vetoes: $n' got '$(grep vetoes "$MNT/.txfs/status")'"

echo rollback >"$MNT/.txfs/ctl" || fail "rollback failed"
finish
