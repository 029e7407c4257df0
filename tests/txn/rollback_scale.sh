#!/bin/bash
# Rollback at scale (issue 11, point 7): after `rm -rf` of a real tree of
# 20,000 files (every one stat'ed and read first, so the kernel caches its
# names, attributes and pages), after a renamed real folder with a file
# made inside it, and after 3,000 staged files in new nested folders
# (looked up first), one rollback shows the real state at once: every
# deleted name is visible again with its real content, the renamed folder
# is back under its old name without the new file, the new folders are
# gone. rollback sends only the topmost changed names to the kernel (a
# folder's invalidation drops its cached subtree): this checks that no
# name below them stays stale.
. "$(dirname "$0")/txnlib.sh"
printf 'limit deletes 1000000\n' >"$T/scale.policy"
TXFS_POLICY=$T/scale.policy
fixture
for d in $(seq 1 20); do
	mkdir -p "$WS/big/d$d"
	(cd "$WS/big/d$d" && for f in $(seq 1 1000); do echo "d$d/f$f" >"f$f"; done)
done
mkdir "$WS/keep"
for f in $(seq 1 50); do echo "keep $f" >"$WS/keep/k$f"; done
lst "$WS" >"$T/real.lst"
txfs_mount || exit 1

# warm every cache: names, attributes, pages
t 300 find "$MNT/big" "$MNT/keep" -type f -exec cat {} + >"$T/warm.out"
check_eq "20,050 files read through the mount" 20050 "$(wc -l <"$T/warm.out")"

t 300 rm -rf "$MNT/big"
check_errno_of "rm -rf of the real tree: gone" ENOENT stat "$MNT/big/d7/f77"
t 30 mv "$MNT/keep" "$MNT/keep2"
echo inside >"$MNT/keep2/newfile"
echo changed >"$MNT/keep2/k3"
t 30 mkdir -p "$MNT/new/a/b"
(cd "$MNT/new/a/b" && for f in $(seq 1 3000); do : >"n$f"; done)
t 60 find "$MNT/new" -type f -exec stat -c %s {} + >/dev/null
check_content "the renamed folder's new file is visible" "$MNT/keep2/newfile" inside
# a process whose cwd is inside a new folder: its walks do not pass the
# folder's expired entry; the invalidation just after the answer prunes
# the names cached below it (bounded wait: it is sent after the answer)
(cd "$MNT/new/a/b" && exec sleep 60) &
HOLDER=$!

start=$(date +%s%N)
check_ctl "rollback" OK rollback
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "    rollback took $ms ms"

check_content "a deleted file is back at once, with its data" "$MNT/big/d7/f77" "d7/f77"
check_eq "every deleted file is back at once" 20000 \
	"$(t 120 find "$MNT/big" -type f | wc -l)"
check_content "the renamed folder is back under its old name" "$MNT/keep/k3" "keep 3"
check_errno_of "the file made in the renamed folder is gone" ENOENT stat "$MNT/keep/newfile"
check_errno_of "the renamed folder's new name is gone" ENOENT stat "$MNT/keep2"
check_errno_of "a staged file in a new folder is gone" ENOENT stat "$MNT/new/a/b/n5"
check_errno_of "the new folder is gone" ENOENT stat "$MNT/new"
got=
for _ in $(seq 1 50); do
	got=$(errno_of stat "/proc/$HOLDER/cwd/n5")
	[ "$got" = ENOENT ] || [ "$got" = ESTALE ] && break
	sleep 0.1
done
[ "$got" = ESTALE ] && got=ENOENT	# the folder is gone: either answer
check_eq "from a cwd inside the rolled-back folder, its files are gone within 5 s (ENOENT or ESTALE)" ENOENT "$got"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
check_view "the whole tree and every file's data are the real ones" "$MNT" "$T/real.lst"
txn_finish
