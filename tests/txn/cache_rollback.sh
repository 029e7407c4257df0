#!/bin/bash
# After a rollback the mount shows the old state at once (no sleeps): data
# written then rolled back reads as before; a created file, folder or
# symlink is gone (ENOENT) and not listed; a deleted file is back; a
# renamed file is back under its old name; mode and size are the old ones.
# Each in a subfolder and at the mount's root, each name looked up (and so
# cached by the kernel) before the change.
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
	# warm the kernel's caches: read, stat, list, negative lookups
	cat "$f" "$MNT/${p}victim.txt" "$MNT/${p}mv.txt" >/dev/null
	ls "$MNT/$d" >/dev/null
	for n in new.txt newdir newlink mv2.txt; do errno_of stat "$MNT/${p}$n" >/dev/null; done

	echo changed >"$f"
	echo new >"$MNT/${p}new.txt"
	mkdir "$MNT/${p}newdir"
	ln -s w.txt "$MNT/${p}newlink"
	rm "$MNT/${p}victim.txt"
	mv "$MNT/${p}mv.txt" "$MNT/${p}mv2.txt"
	chmod 600 "$f"
	check_content "[$where] the change is visible" "$f" changed
	check_ctl "[$where] rollback" OK rollback
	check_content "[$where] write, rollback, read: the old content at once" "$f" original
	check_eq "[$where] write, rollback, stat: the old size at once" 9 "$(sf %s "$f")"
	check_eq "[$where] chmod, rollback, stat: the old mode at once" 644 "$(sf %a "$f")"
	check_errno_of "[$where] create, rollback, stat: ENOENT at once" ENOENT stat "$MNT/${p}new.txt"
	check_errno_of "[$where] mkdir, rollback, stat: ENOENT at once" ENOENT stat "$MNT/${p}newdir"
	check_errno_of "[$where] symlink, rollback, stat: ENOENT at once" ENOENT stat "$MNT/${p}newlink"
	check_content "[$where] delete, rollback, read: back at once" "$MNT/${p}victim.txt" victim
	check_content "[$where] rename, rollback: the old name is back at once" "$MNT/${p}mv.txt" moved
	check_errno_of "[$where] rename, rollback: the new name is gone at once" ENOENT stat "$MNT/${p}mv2.txt"
	check_eq "[$where] the listing is the old one at once" "$(ls "$WS/$d" | tr '\n' ' ')" "$(ls "$MNT/$d" | tr '\n' ' ')"
done
lst "$WS" >"$T/real.lst"
check_view "the whole tree is the real one after the rollbacks" "$MNT" "$T/real.lst"
txn_finish
