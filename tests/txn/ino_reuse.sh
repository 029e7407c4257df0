#!/bin/bash
# Inode numbers freed by a commit are not taken for another object. A
# commit replaces a changed real file by a new inode and frees the old one
# (and a deleted file's); the kernel may still hold the old node id (an
# open file, a cached entry), which txfs maps onto the new object (an
# alias). A file created later that the real file system gives the freed
# number to would then be read through that alias: another file's data
# (seen as cache_commit's "create, commit, read" reading "comm"). txfs keeps
# each replaced object alive (an O_PATH descriptor) while the kernel holds
# its node id. Rounds of: change N real files (some kept open), delete some,
# commit, create N files, commit; every file reads its own content, in the
# mount and in the real directory.
. "$(dirname "$0")/txnlib.sh"
fixture
N=40
for i in $(seq 1 $N); do echo "orig $i" >"$WS/f$i"; done
txfs_mount || exit 1
bad=0
for round in 1 2 3 4; do
	for i in $(seq 1 $N); do cat "$MNT/f$i" >/dev/null; done
	exec 7<"$MNT/f1" 8<"$MNT/f2"
	for i in $(seq 1 $N); do echo "changed $round $i" >"$MNT/f$i"; done
	for i in $(seq 1 5); do rm -f "$MNT/n$round-$i"; done
	check_ctl "round $round: commit of the changes" OK commit || bad=$((bad + 1))
	for i in $(seq 1 $N); do echo "new $round $i" >"$MNT/n$round-$i"; done
	check_ctl "round $round: commit of the new files" OK commit || bad=$((bad + 1))
	for i in $(seq 1 $N); do
		[ "$(cat "$MNT/n$round-$i")" = "new $round $i" ] ||
			{ bad=$((bad + 1)); echo "# round $round: n$round-$i reads '$(head -c 40 "$MNT/n$round-$i")'"; }
		[ "$(cat "$MNT/f$i")" = "changed $round $i" ] ||
			{ bad=$((bad + 1)); echo "# round $round: f$i reads '$(head -c 40 "$MNT/f$i")'"; }
		[ "$(cat "$WS/n$round-$i")" = "new $round $i" ] ||
			{ bad=$((bad + 1)); echo "# round $round: the real n$round-$i differs"; }
	done
	exec 7<&- 8<&-
done
check_eq "every file reads its own content after 4 rounds of commits" 0 "$bad"
check_eq "the mount and the real directory list the same" "$(lst "$WS")" "$(lst "$MNT")"
txn_finish
