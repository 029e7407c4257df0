#!/bin/bash
# Commit and rollback round trip of renamed real folders with their
# children: a folder renamed with a file changed, one added and one deleted
# inside it; a subfolder moved out of its parent; a folder moved into a
# moved folder; a new folder under a vacated name.
. "$(dirname "$0")/txnlib.sh"
fixture
mkdir -p "$WS/tree/x/y"
for i in 1 2 3 4 5; do echo "t$i" >"$WS/tree/f$i"; echo "y$i" >"$WS/tree/x/y/g$i"; done
roundtrip '
mv dir dir_renamed
echo changed > dir_renamed/a.txt
echo new > dir_renamed/sub/new.txt
rm dir_renamed/sub/deep.txt
mv deep/a/b deep/b2
mv "dir with space" deep/b2/spaced
mkdir dir && echo x > dir/x
mv tree tree2 && echo changed-deep >> tree2/x/y/g3 && mv tree2/x tree2/x2
ls -R dir_renamed deep dir tree2'
