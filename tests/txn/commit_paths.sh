#!/bin/bash
# Partial commit: `txfs commit MNT PATH...` commits only the named paths
# (and the folders they need) and keeps the rest staged: a modified file;
# a new file deep in new folders; a folder (everything below it); a
# deletion; a renamed file (both of its ends). After each, the real
# directory has exactly those changes and the mount still shows the rest.
# While the feature is not there ("not available yet"), the checks are
# reported as expected failures (XFAIL lines), not skipped silently.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1
in_mnt 'echo A > file.txt; echo B >> dir/a.txt; echo new > dir/new.txt; mkdir -p nd/sub && echo x > nd/sub/x; rm ro.txt; mv exec.sh exec2.sh'
lst "$MNT" >"$T/view"
cli_run commit "$MNT" file.txt
if [ "$CRC" != 0 ] && grep -q "not available yet" <<<"$CERR"; then
	echo "XFAIL: commit_paths: txfs commit MNT PATH... answers '$CERR' (expected failure until partial commit lands)"
	check_eq "the refused partial commit exits 1" 1 "$CRC"
	check_eq "and changed nothing in the real directory" "hello" "$(cat "$WS/file.txt")"
	txn_finish
fi
check_eq "txfs commit MNT file.txt exits 0" "0:" "$CRC:$CERR"
check_content "the named file is committed" "$WS/file.txt" A
check_content "another changed file is not" "$WS/dir/a.txt" a
check_errno_of "a new file is not" ENOENT stat "$WS/dir/new.txt"
check_errno_of "a deleted file is still in the real directory" OK stat "$WS/ro.txt"
check_lst "the mount shows the same merged tree" "$MNT" "$T/view"
check_eq "the committed path is no longer staged" "" "$(grep -x 'M file.txt' "$MNT/$CTL/changes")"
check_eq "the others are" "A dir/new.txt" "$(grep -x 'A dir/new.txt' "$MNT/$CTL/changes")"

check_cli "commit of a new file in new folders" 0 commit "$MNT" nd/sub/x
check_content "it is committed with the folders it needs" "$WS/nd/sub/x" x
check_content "dir/a.txt still not" "$WS/dir/a.txt" a
check_cli "commit of a folder" 0 commit "$MNT" dir
check_content "every change below it is committed (changed)" "$WS/dir/a.txt" "$(printf 'a\nB')"
check_content "every change below it is committed (new)" "$WS/dir/new.txt" new
check_errno_of "ro.txt is still not deleted" OK stat "$WS/ro.txt"
check_cli "commit of a deletion" 0 commit "$MNT" ro.txt
check_errno_of "the deletion is committed" ENOENT stat "$WS/ro.txt"
check_errno_of "the rename is not" OK stat "$WS/exec.sh"
check_cli "commit of a rename by its new name" 0 commit "$MNT" exec2.sh
check_errno_of "the new name is in the real directory" OK stat "$WS/exec2.sh"
check_errno_of "the old name is gone" ENOENT stat "$WS/exec.sh"
check_eq "nothing is staged any more" "" "$(t 30 cat "$MNT/$CTL/changes")"
check_lst "the mount shows the same merged tree" "$MNT" "$T/view"
txfs_umount || exit 1
check_lst "the real directory is the merged tree" "$WS" "$T/view"
txn_finish
