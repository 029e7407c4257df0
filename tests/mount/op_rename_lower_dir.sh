#!/bin/bash
# rename(2) of directories that exist only in the real directory: never
# EXDEV, the whole subtree follows (also a big one), the directory keeps its
# inode number, changes inside survive further renames, and a new directory
# under the old name is empty.
. "$(dirname "$0")/lib.sh"
fixture
mkdir -p "$WS/bigdir/inner"
for i in $(seq 500); do echo "$i" >"$WS/bigdir/f$i"; done
for i in $(seq 50); do echo "$i" >"$WS/bigdir/inner/g$i"; done
model
txfs_mount || exit 1

ino_before=$(sf %i "$MNT/dir")
both '"$FSOP" rename dir dir2 && cat dir2/sub/deep.txt dir2/a.txt && ls dir; echo rc=$?'
check_eq "a renamed real directory keeps its inode number" "$ino_before" "$(sf %i "$MNT/dir2")"
both '"$FSOP" rename dir2 empty_dir && ls empty_dir empty_dir/sub'
both 'mkdir dir && ls -A dir | wc -l'
both 'echo changed > empty_dir/a.txt && "$FSOP" rename empty_dir dir3 && cat dir3/a.txt'
both '"$FSOP" rename deep/a top_a && cat top_a/b/c/leaf.txt && ls -A deep'
both '"$FSOP" rename top_a deep/a && cat deep/a/b/c/leaf.txt'
both '"$FSOP" rename bigdir big2 && ls big2 | wc -l && cat big2/f250 big2/inner/g50'
both 'mv big2 "dir with space/big3" && ls "dir with space/big3" | wc -l'
both '"$FSOP" rename dir3 "dir with space"; echo rc=$?'
both '"$FSOP" rename dir3 dir3/sub/x; echo rc=$?'
both '"$FSOP" rename dir3 dir && ls dir'
both 'mkdir dir3 && "$FSOP" rename dir dir3 && ls dir3 && ls -d dir; echo rc=$?'
both 'mkdir -p x/y && echo z > x/y/z && "$FSOP" rename x deep/x && cat deep/x/y/z'
both '"$FSOP" rename deep/a/b deep/b && "$FSOP" rename deep/a deep/b/a && find deep | sort'
finish
