#!/bin/bash
# Hard links across commits (issue 13, point 1): links made in new and real
# folders are committed; then, in the same mount (the kernel keeps its
# cached names), the links and their folders are removed or renamed and
# the files must stay readable and linkable under their other names; a
# second commit; after unmount the real directory equals a plain copy that
# took the same steps, and a new mount reads every file. The mount-only
# orders are tests/mount/op_link_dirs.sh.
. "$(dirname "$0")/txnlib.sh"
fixture
for f in real1 real2 real3; do echo "content of $f" >"$WS/$f"; done
mkdir -p "$WS/rdir"
model
txfs_mount || exit 1

commit() {
	t 120 bash -c 'echo commit > "$1"' _ "$MNT/$CTL/ctl" 2>"$T/commit.err"
	check_eq "$1: echo commit > $CTL/ctl exits 0" "0:" "$?:$(cat "$T/commit.err")"
}

both 'echo n1 > n1 && echo n2 > n2 && mkdir b c && ln n1 b/g && ln real1 b/r && ln n2 c/g && ln real2 rdir/r2 && ln hard1 c/h && cat b/g b/r c/g rdir/r2 c/h'
commit "links in new and real folders"
both 'cat n1 real1 b/g b/r && rm b/g && rm b/r && rmdir b && cat n1 real1 && ln n1 n1b && ln real1 real1b'
both 'mv c c2 && cat c2/g && rm -r c2 && cat n2 hard1 hard2 && stat -c %h n2 hard1'
both 'mv rdir rdir2 && rm rdir2/r2 && cat real2 && ln real2 rdir2/again'
both 'mkdir d && ln real3 d/x && ln n1 d/y'
commit "links removed after the first commit"
both 'rm -r d && cat real3 n1 n1b && stat -c %h real3 n1'
both 'cat n1b real1b rdir2/again && stat -c %h n1b real1b real2'
commit "the last removals"
check_same "right after the commits the mount equals the plain copy"
txfs_umount || exit 1
check_tree "after the commits the real directory equals the plain copy" "$WS" "$MODEL" -ox
txfs_mount || exit 1
both 'cat n1 n1b n2 real1 real1b real2 real3 rdir2/again hard1 hard2 && stat -c %h n1 real1 real2 real3 hard1'
check_same "a new mount shows the committed tree"
txn_finish
