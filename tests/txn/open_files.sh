#!/bin/bash
# Files kept open across rollback and commit (the fds are held by this
# shell). Across a rollback: a file created in the transaction answers
# ESTALE to reads and writes through the old fd; a changed real file reads
# its real content again (or ESTALE), nothing crashes and the mount goes on
# working. Across a commit: the fd keeps reading the same content, writes
# through it keep working and land in the next transaction.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1
echo born >"$MNT/dir/born.txt"
echo changed >"$MNT/dir/a.txt"
exec 7<>"$MNT/dir/born.txt" 8<"$MNT/dir/a.txt"
check_eq "fd on a new file reads it" born "$(fdop 7 read)"
check_ctl "rollback with files open" OK rollback
check_eq "read through an fd on a file created in the rolled-back transaction: ESTALE" ERR:ESTALE "$(fdop 7 read)"
check_eq "write through it: ESTALE" ERR:ESTALE "$(fdop 7 write 0 x)"
got=$(fdop 8 read)
case $got in
a) ok "an fd on a changed real file reads the real content after the rollback" ;;
ERR:ESTALE) ok "an fd on a changed real file answers ESTALE after the rollback" ;;
*) fail "fd on a changed real file after rollback: expected 'a' (real content) or ESTALE got '$got'" ;;
esac
exec 7>&- 8<&-
check_eq "the daemon is alive" 1 "$([ -n "$(daemon_pid)" ] && echo 1)"
check_content "the mount works after that" "$MNT/dir/a.txt" a
check_errno_of "the rolled-back file is gone" ENOENT stat "$MNT/dir/born.txt"

# Across a commit.
echo staged >"$MNT/dir/kept.txt"
echo changed >"$MNT/file.txt"
exec 7<>"$MNT/dir/kept.txt" 8<>"$MNT/file.txt" 9<"$MNT/dir/sub/deep.txt"
check_ctl "commit with files open" OK commit
check_eq "an fd on a new file reads the same content after the commit" staged "$(fdop 7 read)"
check_eq "an fd on a changed real file reads the same content after the commit" changed "$(fdop 8 read)"
check_eq "an fd on an untouched file reads the same after the commit" deep "$(fdop 9 read)"
check_eq "a write through the fd on the new file works after the commit" OK "$(fdop 7 write 7 more)"
check_eq "a write through the fd on the changed file works after the commit" OK "$(fdop 8 write 8 more)"
check_eq "the fd reads its write back" "$(printf 'staged\nmore')" "$(fdop 7 read)"
check_content "the path shows the write" "$MNT/dir/kept.txt" "$(printf 'staged\nmore')"
check_content "the path of the other file shows its write" "$MNT/file.txt" "$(printf 'changed\nmore')"
check_content "the real file still has the committed content" "$WS/dir/kept.txt" staged
check_eq "the write is staged in the next transaction" "M dir/kept.txt" "$(grep -x 'M dir/kept.txt' "$MNT/$CTL/changes")"
exec 7>&- 8>&- 9<&-
check_ctl "commit again" OK commit
check_content "the write through the old fd reached the real file" "$WS/dir/kept.txt" "$(printf 'staged\nmore')"
check_content "both" "$WS/file.txt" "$(printf 'changed\nmore')"
txn_finish
