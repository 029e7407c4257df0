#!/bin/bash
# mv of real directories inside the mount: a rename (same inode, no copy),
# deep trees, into other real directories, over an empty directory, back;
# and mv out of the mount (a copy across file systems: the real tree stays).
. "$(dirname "$0")/lib.sh"
fixture
mkdir -p "$WS/tree"
for d in $(seq 10); do mkdir -p "$WS/tree/d$d/e"; for f in $(seq 30); do echo "$d/$f" >"$WS/tree/d$d/e/f$f"; done; done
model
txfs_mount || exit 1
ino=$(sf %i "$MNT/tree")
both 'mv tree moved && find moved | wc -l && cat moved/d5/e/f5'
check_eq "mv renamed the directory (same inode number)" "$ino" "$(sf %i "$MNT/moved")"
both 'mv moved dir/sub/ && ls dir/sub/moved | wc -l'
both 'mv dir/sub/moved/d1 empty_dir/ && mv empty_dir/d1 empty_dir/d1x && cat empty_dir/d1x/e/f1'
both 'mkdir target && mv "dir with space" target/ && ls target'
both 'mkdir -p emptyt && mv deep emptyt && ls emptyt'
both 'mv dir/sub/moved tree && find tree | wc -l'
mkdir "$T/away" "$T/away-model"
t 60 mv "$MNT/tree/d2" "$T/away/" || fail "mv out of the mount failed"
mv "$MODEL/tree/d2" "$T/away-model/"
check_tree "mv out of the mount moved the whole tree" "$T/away" "$T/away-model"
finish
