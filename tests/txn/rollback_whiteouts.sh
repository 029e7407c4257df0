#!/bin/bash
# Deleted real names and the kernel's caches, timing-free (issue 11,
# point 7): rollback and commit send no invalidation per deleted name, so
# the kernel must never hold a valid entry for a name the layer whites
# out. This tries to make it hold one: every file is looked up, read and
# listed first (positive entries, pages, listings cached); then real files
# are deleted from folders that stay (`find -delete`, `rm`, `mv` away, one
# name of a hard link, `rm -rf` of a subfolder, at the root too), and every
# deleted name is stat'ed twice and its folder listed after the deletion
# (negative lookups the kernel would cache), with a process whose cwd is a
# kept folder and one that keeps a deleted file open. Right after the
# rollback (no sleep, no retry): every deleted name resolves again (stat,
# read, listing, through the cwd), nothing made in the layer resolves, and
# the tree equals the real one. Then the same deletions with a savepoint
# rolled back to, and with a commit: the names are gone from the mount and
# the real directory at once, and can be made again through the mount.
. "$(dirname "$0")/txnlib.sh"
printf 'limit deletes 1000000\n' >"$T/wh.policy"
TXFS_POLICY=$T/wh.policy
fixture
for d in 1 2 3; do
	mkdir -p "$WS/k$d/sub"
	for f in $(seq 1 300); do echo "k$d/f$f" >"$WS/k$d/f$f"; done
	for f in 1 2 3; do echo "k$d/sub/s$f" >"$WS/k$d/sub/s$f"; done
done
echo top >"$WS/top.txt"
echo moved >"$WS/k1/mv.txt"
echo linked >"$WS/k2/a.lnk"
ln "$WS/k2/a.lnk" "$WS/k2/b.lnk"
lst "$WS" >"$T/real.lst"
txfs_mount || exit 1

# the names of every real file, relative to the mount
(cd "$WS" && find . -type f | sort) >"$T/files"
nfiles=$(wc -l <"$T/files")

warm() {
	t 120 find "$MNT" -path "$MNT/$CTL" -prune -o -type f -exec cat {} + \
		>/dev/null
	t 60 ls -laR "$MNT/k1" "$MNT/k2" "$MNT/k3" >/dev/null
}

# delete: from kept folders; every deleted name is then looked up twice
delete_all() {
	t 120 find "$MNT/k1" "$MNT/k3" -maxdepth 1 -type f -name 'f*' -delete
	t 30 rm "$MNT/top.txt" "$MNT/k2/f7" "$MNT/k2/a.lnk"
	t 30 mv "$MNT/k1/mv.txt" "$MNT/k2/mv-away.txt"
	t 30 rm -rf "$MNT/k2/sub"
	for _ in 1 2; do
		(cd "$MNT" && t 120 xargs stat -c %n <"$T/files" >/dev/null 2>&1)
		t 60 ls -la "$MNT" "$MNT/k1" "$MNT/k2" "$MNT/k3" >/dev/null
	done
}

# every real name resolves with its content, from the mount (each file
# opened and read through the mount and compared byte for byte with the
# real one, in one process: two cats a file were 3/4 of the test's time)
all_back() {
	local what=$1 bad
	bad=$(cd "$WS" && t 120 "$PY" -c '
import sys
mnt, bad = sys.argv[1], 0
for f in open(sys.argv[2]).read().splitlines():
    try:
        with open(mnt + "/" + f, "rb") as m:
            back = m.read() == open(f, "rb").read()
    except OSError as e:
        back = False
    if not back:
        bad += 1
        if bad <= 3:
            print("    not back: " + f, file=sys.stderr)
print(bad)' "$MNT" "$T/files")
	check_eq "$what: every one of the $nfiles real files resolves with its content" 0 "$bad"
}

warm
(cd "$MNT/k1" && exec sleep 120) &
HOLDER=$!
exec 7<"$MNT/k3/f9"
delete_all
check_errno_of "deleted from a kept folder: gone" ENOENT stat "$MNT/k1/f5"
check_errno_of "a deleted subfolder: gone" ENOENT stat "$MNT/k2/sub/s1"
check_errno_of "from the kept folder's cwd: gone" ENOENT stat "/proc/$HOLDER/cwd/f5"
echo born >"$MNT/k1/f5"	# a deleted name made again in the layer
check_content "a deleted name made again" "$MNT/k1/f5" born
check_ctl "rollback" OK rollback
all_back "rollback"
check_content "the name made again is the real file again" "$MNT/k1/f5" "k1/f5"
check_content "from the kept folder's cwd, a deleted file is back" "/proc/$HOLDER/cwd/f200" "k1/f200"
check_content "the renamed file is back under its old name" "$MNT/k1/mv.txt" moved
check_errno_of "the rename's target is gone" ENOENT stat "$MNT/k2/mv-away.txt"
check_eq "both names of the hard link, link count 2" "2 2" \
	"$(sf %h "$MNT/k2/a.lnk") $(sf %h "$MNT/k2/b.lnk")"
check_eq "a kept folder lists every file again" 301 \
	"$(ls "$MNT/k1" | grep -c '^f\|^mv')"
check_eq "the listing of a kept folder is the real one" \
	"$(ls -a "$WS/k2" | tr '\n' ' ')" "$(ls -a "$MNT/k2" | tr '\n' ' ')"
exec 7<&-	# (held across the deletion: its tombstone is not dropped)
check_view "the tree is the real one after the rollback" "$MNT" "$T/real.lst"

# the same, rolled back to a savepoint taken before them
warm
check_ctl "savepoint" OK savepoint before
delete_all
check_ctl "rollback to the savepoint" OK rollback before
all_back "rollback to a savepoint"
check_view "the tree is the real one after rollback to the savepoint" "$MNT" "$T/real.lst"

# the same, committed: gone at once, and the names can be made again
warm
delete_all
check_ctl "commit" OK commit
check_errno_of "committed deletion: gone from the mount at once" ENOENT stat "$MNT/k1/f5"
check_errno_of "committed deletion: gone from the real directory" ENOENT stat "$WS/k1/f5"
check_errno_of "committed rm -rf of a subfolder: gone" ENOENT stat "$MNT/k2/sub"
check_eq "a kept folder lists nothing deleted" 0 "$(ls "$MNT/k1" | grep -c '^f')"
check_content "a kept file stays" "$MNT/k2/f8" "k2/f8"
check_eq "from the kept folder's cwd, no deleted file is listed" 0 \
	"$(ls "/proc/$HOLDER/cwd" | grep -c '^f')"
echo again >"$MNT/k1/f5"
check_content "a committed deleted name made again" "$MNT/k1/f5" again
check_ctl "rollback of the new name" OK rollback
check_errno_of "and rolled back: gone again" ENOENT stat "$MNT/k1/f5"
kill "$HOLDER" 2>/dev/null
wait "$HOLDER" 2>/dev/null
txn_finish
