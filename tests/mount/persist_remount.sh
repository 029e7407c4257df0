#!/bin/bash
# Unmounting keeps the layer: after every kind of change, mounting the same
# workspace again (also at another mount point, and in place) shows exactly
# the same merged view, times and inode numbers included.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1
both 'echo new > new.txt && mkdir -p nd/a && echo deep > nd/a/f'
both 'printf X | dd of=big.bin bs=1 seek=100000 conv=notrunc status=none'
both 'rm file.txt ro.txt && rm -r deep && mkdir deep && echo opaque > deep/only'
both 'mv dir moved-dir && mv "dir with space" moved-dir/inner'
both 'ln -s moved-dir/a.txt sl && ln hard1 hard3 && ln new.txt new.link'
both 'chmod 700 exec.sh && truncate -s 10 sparse.bin && mkfifo ff'
both 'setfattr -n user.p -v persisted big.bin && setfattr -x user.fixture file.txt 2>/dev/null; true'
both 'touch -d @1111111111.25 new.txt moved-dir/a.txt && touch -h -d @1222222222 sl'
check_same
stamp='stat -c "%n %Y %y %a %s %h" new.txt moved-dir/a.txt big.bin exec.sh && stat -c "%n %Y" sl'
t 30 env -C "$MNT" bash -c "$stamp" >"$T/stamp.before" 2>&1
t 30 env -C "$MNT" find . -path ./.txfs -prune -o -printf '%i %p\n' | sort -k2 >"$T/ino.before"
for round in 1 2 3; do
	remount || exit 1
	check_same "round $round: merged view after remount equals the model"
	t 30 env -C "$MNT" bash -c "$stamp" >"$T/stamp.after" 2>&1
	if cmp -s "$T/stamp.before" "$T/stamp.after"; then ok "round $round: times, modes, sizes, link counts kept"; else
		fail "round $round: stat after remount differs:"; diff "$T/stamp.before" "$T/stamp.after" | sed 's/^/    /'; fi
	t 30 env -C "$MNT" find . -path ./.txfs -prune -o -printf '%i %p\n' | sort -k2 >"$T/ino.after"
	cmp -s "$T/ino.before" "$T/ino.after" && ok "round $round: inode numbers kept" || fail "round $round: inode numbers changed after remount"
done
txfs_umount || exit 1
mkdir "$T/mnt2"
txfs_mount --mnt "$T/mnt2" || exit 1
check_tree "mounted at another mount point: the same view" "$T/mnt2" "$MODEL" -ox
txfs_umount "$T/mnt2" || exit 1
txfs_mount --inplace || exit 1
check_tree "mounted in place: the same view" "$WS" "$MODEL" -ox
txfs_umount "$WS" || exit 1
txfs_mount || exit 1
both 'echo after-all >> new.txt'
finish
