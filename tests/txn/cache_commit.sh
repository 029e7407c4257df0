#!/bin/bash
# After a commit the mount shows the committed state at once (no sleeps),
# and it is the real directory's: written data reads back (and is in the
# real file), a created file and folder exist and are listed, a deleted
# file is ENOENT, a renamed file is under its new name only, the mode is
# the new one; then the mount goes on working on those same files (write,
# rollback restores the committed content). In a subfolder and at the root.
. "$(dirname "$0")/txnlib.sh"
fixture
for p in dir/ ""; do
	echo original >"$WS/${p}w.txt"
	echo victim >"$WS/${p}victim.txt"
	echo moved >"$WS/${p}mv.txt"
done
txfs_mount || exit 1
for d in dir ""; do
	p=${d:+$d/}
	where=${d:-root}
	f=$MNT/${p}w.txt
	cat "$f" "$MNT/${p}victim.txt" "$MNT/${p}mv.txt" >/dev/null
	ls "$MNT/$d" >/dev/null
	for n in new.txt newdir mv2.txt; do errno_of stat "$MNT/${p}$n" >/dev/null; done

	echo committed >"$f"
	echo new >"$MNT/${p}new.txt"
	mkdir "$MNT/${p}newdir"
	rm "$MNT/${p}victim.txt"
	mv "$MNT/${p}mv.txt" "$MNT/${p}mv2.txt"
	chmod 600 "$f"
	check_ctl "[$where] commit" OK commit
	check_content "[$where] write, commit, read: the new content at once" "$f" committed
	check_content "[$where] ... and it is in the real file" "$WS/${p}w.txt" committed
	check_eq "[$where] chmod, commit, stat: the new mode at once" 600 "$(sf %a "$f")"
	check_content "[$where] create, commit, read: there at once" "$MNT/${p}new.txt" new
	check_errno_of "[$where] mkdir, commit, stat: there at once" OK stat "$MNT/${p}newdir"
	check_errno_of "[$where] delete, commit, stat: ENOENT at once" ENOENT stat "$MNT/${p}victim.txt"
	check_errno_of "[$where] delete, commit: gone from the real directory" ENOENT stat "$WS/${p}victim.txt"
	check_content "[$where] rename, commit: the new name at once" "$MNT/${p}mv2.txt" moved
	check_errno_of "[$where] rename, commit: the old name is gone at once" ENOENT stat "$MNT/${p}mv.txt"
	check_eq "[$where] the listing is the real one at once" "$(ls "$WS/$d" | tr '\n' ' ')" "$(ls "$MNT/$d" | tr '\n' ' ')"
	# The next transaction works on the committed files.
	echo next >"$f"
	check_content "[$where] a committed file can be written again" "$f" next
	check_ctl "[$where] rollback of the next transaction" OK rollback
	check_content "[$where] ... and the rollback restores the committed content" "$f" committed
	check_content "[$where] a file created by the commit reads after the rollback" "$MNT/${p}new.txt" new
done
lst "$WS" >"$T/real.lst"
check_view "the whole tree is the real one" "$MNT" "$T/real.lst"
txn_finish
