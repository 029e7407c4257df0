#!/bin/bash
# rename(2) of files: real and new, to new names, over real and new files,
# across directories, onto a hard link of itself, symlinks, open files, and
# the errors for file-over-directory and directory-over-file.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both '"$FSOP" rename file.txt renamed.txt && cat renamed.txt && ls file.txt; echo rc=$?'
both '"$FSOP" rename renamed.txt dir/sub/into-sub.txt && cat dir/sub/into-sub.txt'
both '"$FSOP" rename ro.txt exec.sh && cat exec.sh && stat -c %a exec.sh'
both 'echo n > new1 && "$FSOP" rename new1 big.bin && cat big.bin'
both 'echo a > na && echo b > nb && "$FSOP" rename na nb && cat nb && ls na; echo rc=$?'
both '"$FSOP" rename hard1 hard2 && ls hard1 hard2; echo rc=$?'
both '"$FSOP" rename link_rel link_renamed && readlink link_renamed'
both '"$FSOP" rename dir/a.txt dir; echo rc=$?'
both '"$FSOP" rename dir sparse.bin; echo rc=$?'
both '"$FSOP" rename missing x; echo rc=$?'
both '"$FSOP" rename sparse.bin nodir/x; echo rc=$?'
both 'exec 3<"dir with space/x y.txt"; "$FSOP" rename "dir with space/x y.txt" moved && cat <&3 && cat moved; exec 3<&-'
both 'echo 1 > c1 && "$FSOP" rename c1 c2 && "$FSOP" rename c2 c3 && "$FSOP" rename c3 c1 && cat c1 && ls c2 c3; echo rc=$?'
both 'echo v1 > old && "$FSOP" rename old new && echo v2 > old && cat old new'
both '"$FSOP" rename deep/a/b/c/leaf.txt leaf && cat leaf && ls deep/a/b/c | wc -l'
finish
