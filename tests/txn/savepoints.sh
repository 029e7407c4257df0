#!/bin/bash
# Savepoints: three nested levels (a, b, c) with changes of every kind
# between them (the same file changed at each level, created, deleted,
# renamed files and folders, modes, xattrs, a symlink); rollback to c, b,
# a in turn restores each level's exact tree at once; a savepoint stays
# open after a rollback to it; rollback to a released savepoint (and to
# savepoints newer than it) fails with ENOENT; release keeps the changes;
# commit ends every savepoint. The real directory is untouched until the
# commit. Verbs through .txfs/ctl and through the txfs command.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1
lst "$WS" -mox >"$T/real0"
lst "$MNT" >"$T/L0"
sp_count() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["savepoints"])' "$MNT/$CTL/status.json"; }

check_ctl "savepoint a" OK savepoint a
case $(ctl_text) in "savepoint a taken (level 1)"*) ok "ctl reads 'savepoint a taken (level 1)'" ;;
*) fail "ctl after savepoint a: got '$(ctl_text)'" ;; esac
in_mnt 'echo one > file.txt; echo new1 > n1; rm ro.txt; mkdir d1; chmod 600 exec.sh; setfattr -n user.l1 -v 1 dir/a.txt'
lst "$MNT" >"$T/L1"
check_cli "txfs savepoint MNT b" 0 savepoint "$MNT" b
in_mnt 'echo two > file.txt; rm n1; mv dir dir2; echo x > d1/x; ln -s n1 nl; setfattr -n user.l1 -v 2 dir2/a.txt'
lst "$MNT" >"$T/L2"
check_ctl "savepoint c" OK savepoint c
in_mnt 'echo three >> file.txt; rm -r dir2; echo n3 > d1/n3; mv exec.sh e2; truncate -s 10 big.bin; mv d1 "deep/a/d1moved"'
lst "$MNT" >"$T/L3"
check_eq "status.json counts 3 savepoints" 3 "$(sp_count)"

check_ctl "rollback c" OK rollback c
check_view "after rollback c the tree is level 2's, at once" "$MNT" "$T/L2"
in_mnt 'echo again > again.txt; rm file.txt'
check_ctl "savepoint c stays open: rollback c again" OK rollback c
check_view "and the tree is level 2's again" "$MNT" "$T/L2"
check_cli "txfs rollback MNT b" 0 rollback "$MNT" b
check_view "after rollback b the tree is level 1's, at once" "$MNT" "$T/L1"
check_ctl "rollback to c (newer than b) is gone" ENOENT rollback c
check_ctl "rollback a" OK rollback a
check_view "after rollback a the tree is level 0's, at once" "$MNT" "$T/L0"
check_eq "nothing is staged after rollback to the first savepoint" "" "$(t 30 cat "$MNT/$CTL/changes")"
check_lst "the real directory was never touched" "$WS" "$T/real0" -mox

# Release keeps the changes; a released savepoint is gone.
in_mnt 'echo r > r.txt'
check_ctl "savepoint d" OK savepoint d
in_mnt 'echo m > m.txt'
lst "$MNT" >"$T/Ld"
check_ctl "release d" OK release d
check_view "release keeps the changes" "$MNT" "$T/Ld"
check_ctl "rollback to a released savepoint" ENOENT rollback d
case $(ctl_text) in *"no such savepoint"*) ok "ctl says 'no such savepoint'" ;;
*) fail "ctl after rollback d: expected 'no such savepoint' got '$(ctl_text)'" ;; esac
check_cli "txfs rollback MNT d (released) exits 1" 1 rollback "$MNT" d
check_ctl "release of an unknown savepoint" ENOENT release nosuch
check_cli "txfs release MNT nosuch exits 1" 1 release "$MNT" nosuch
check_ctl "savepoint e" OK savepoint e
check_ctl "savepoint f" OK savepoint f
in_mnt 'echo f > f.txt'
check_cli "txfs release MNT e (and f with it)" 0 release "$MNT" e
check_ctl "rollback f after releasing e (older)" ENOENT rollback f
check_content "releasing e kept the changes made after f" "$MNT/f.txt" f
check_ctl "rollback a still works below" OK rollback a
check_view "back to level 0" "$MNT" "$T/L0"

# Commit ends every savepoint.
check_ctl "savepoint g" OK savepoint g
in_mnt 'echo g > g.txt'
check_ctl "commit" OK commit
check_eq "no savepoint after commit (status.json)" 0 "$(sp_count)"
check_ctl "rollback to a savepoint of the committed transaction" ENOENT rollback g
check_content "the commit has g.txt" "$WS/g.txt" g
check_ctl "a savepoint name is one word" EINVAL savepoint two words
check_ctl "unknown verb" EINVAL frobnicate
txn_finish
