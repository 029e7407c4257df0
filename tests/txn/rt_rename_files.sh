#!/bin/bash
# Commit and rollback round trip of renamed files: in the same folder,
# across folders, a modified file renamed, a file renamed over an existing
# real file (replacing it), a new file renamed, a file renamed twice.
. "$(dirname "$0")/txnlib.sh"
fixture
roundtrip '
mv file.txt renamed.txt
mv dir/a.txt deep/a/moved.txt
echo changed >> exec.sh && mv exec.sh "dir with space/exec2.sh"
mv ro.txt dir/sub/deep.txt
echo born > born.txt && mv born.txt dir/born2.txt
mv "deep/a/b/c/leaf.txt" leaf1 && mv leaf1 "deep/leaf2"
cat renamed.txt dir/sub/deep.txt deep/leaf2'
