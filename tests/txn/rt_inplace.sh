#!/bin/bash
# The round trip through an in-place mount (txfs mount WORKSPACE): changes
# of every kind, commit with echo commit > .txfs/ctl in the mounted
# workspace; after txfs umount the real directory equals the model, and a
# rollback in place restores the view at once.
. "$(dirname "$0")/txnlib.sh"
fixture
model
step='echo new > new.txt; echo changed > file.txt; rm ro.txt; mv dir dir2; echo x >> dir2/a.txt; ln -s new.txt nl; ln hard1 hard3; mkfifo ff; chmod 600 exec.sh'
txfs_mount --inplace || exit 1
(cd "$WS" && t 60 bash -c "$step") || fail "step in the in-place mount"
lst "$MODEL" >"$T/view0"
check_ctl --mnt "$WS" "rollback in place" OK rollback
check_lst "after rollback the in-place mount shows the old tree" "$WS" "$T/view0"
(cd "$WS" && t 60 bash -c "$step") || fail "step again"
(cd "$MODEL" && bash -c "$step")
t 120 bash -c 'echo commit > "$1/.txfs/ctl"' _ "$WS"
check_eq "echo commit > .txfs/ctl in the in-place mount exits 0" 0 $?
check_tree "right after commit the in-place mount shows the committed tree" "$WS" "$MODEL" -ox
txfs_umount "$WS" || exit 1
check_tree "after umount the real directory equals the model" "$WS" "$MODEL" -ox
[ -e "$WS/.txfs.staging" ] && fail "staging folder left behind"
txn_finish
