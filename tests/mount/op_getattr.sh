#!/bin/bash
# lookup/getattr: unmodified real entries show the real attributes (type,
# mode, size, nlink, owner, mtime, inode number); missing names give ENOENT
# (also after a negative lookup was cached and the name then created).
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

fmt='%n %F %a %s %h %u %g %Y %y %i'
for p in file.txt big.bin exec.sh ro.txt dir dir/sub dir/sub/deep.txt empty_dir \
	'dir with space/x y.txt' link_rel link_dir dangling hard1 hard2 sparse.bin deep/a/b/c/leaf.txt; do
	want=$(cd "$WS" && stat -c "$fmt" -- "$p")
	got=$(t 10 env -C "$MNT" stat -c "$fmt" -- "$p")
	if [ "${want% *}" != "${got% *}" ] || [ "${want##* }" != "${got##* }" ]; then
		fail "stat $p: expected '$want' got '$got'"
	else
		ok "stat $p matches the real file"
	fi
done
# directory link counts: not compared (a FUSE fs may report 1), files are.
both 'stat -L -c "%F %s" link_rel link_dir/a.txt'
both 'stat -c %s nothing; echo rc=$?'
both 'stat -c %s file.txt/x; echo rc=$?'
both 'stat -c %s later; echo >later; stat -c %s later'
both 'ls later2 2>&1; mkdir later2; stat -c %F later2'
both 'test -x exec.sh && test ! -x file.txt && test -d dir && test -L link_rel && test -e link_dir && test ! -e dangling && echo tests-ok'
both 'cd dir/sub && pwd -P | sed "s#.*/##" && cd ../.. && ls -d dir/sub/../sub'
finish
