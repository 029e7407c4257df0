#!/bin/bash
# Files kept open through 50 commits under load (DESIGN 1.4: an open file
# survives commit and keeps referring to the same file). Writers (64 KiB
# blocks through kept fds, reopened by path now and then), growers (files
# born mid-run, appended to), mmap users (MAP_SHARED, msync) and a reader
# run while commit is written to .txfs/ctl every 0.2 s (commit_load.py).
# No operation may fail (the old code answered ESTALE after a few commits:
# a node id aliased to a real inode that a later commit re-created again);
# after a last commit the real files equal the models byte for byte.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1
mkdir -p "$T/models"
t 240 "$PY" "$(dirname "$0")/commit_load.py" "$MNT" "$T/models" 50 >"$T/load.out" 2>&1
rc=$?
check_eq "the load driver exits 0" 0 "$rc"
check_eq "all 50 commits succeed with files open" "commits 50/50" "$(grep '^commits' "$T/load.out")"
check_eq "no operation fails (no ESTALE)" "" "$(grep '^ERR\|Traceback' "$T/load.out" | head -5)"
check_eq "the daemon is alive" 1 "$([ -n "$(daemon_pid)" ] && echo 1)"
check_ctl "a last commit" OK commit
for f in w0 w1 m0 m1 g0 g1; do
	if [ -f "$T/models/$f" ] && cmp -s "$T/models/$f" "$WS/$f"; then
		ok "real file $f equals its model byte for byte ($(stat -c %s "$WS/$f") bytes)"
	else
		fail "real file $f differs from its model: $(cmp "$T/models/$f" "$WS/$f" 2>&1 | head -1)"
	fi
	if cmp -s "$T/models/$f" "$MNT/$f"; then
		ok "the mount shows $f as committed"
	else
		fail "the mount shows $f otherwise: $(cmp "$T/models/$f" "$MNT/$f" 2>&1 | head -1)"
	fi
done
check_eq "nothing left staged" "" "$(t 30 cat "$MNT/$CTL/changes")"
sed 's/^/    /' "$T/load.out" | tail -3

# A folder born in a committed transaction is known to the kernel by its
# old node id: caches keyed by the new real inode must reach that node.
t 10 mkdir "$MNT/born" && echo one >"$MNT/born/a"
check_ctl "commit a new folder" OK commit
t 10 ls "$MNT/born" >/dev/null
echo two >"$MNT/born/b"
echo more >>"$MNT/born/a"
check_eq "a new name in it shows" "a b" "$(ls "$MNT/born" | tr '\n' ' ' | sed 's/ $//')"
check_ctl "roll that back" OK rollback
check_eq "after the rollback the folder lists the committed name only" a "$(ls "$MNT/born")"
check_errno_of "the rolled-back name is gone" ENOENT stat "$MNT/born/b"
check_content "the committed file has its committed content" "$MNT/born/a" one
txn_finish
