#!/bin/bash
# Real folders warmed ahead (fs/lower/prefetch.c): a lookup in a real
# folder that waited for the disk queues the folder once, and threads of
# the daemon list it and lstat its entries. Checked from outside with
# TXFS_STATS: after the caches are dropped, stat'ing a real tree warms its
# folders; with the caches warm, it warms (next to) none; a folder that is
# a symlink to a tree outside is never listed (only entries under the
# real root are); what the mount shows is the real tree, name by name,
# with sizes and modes; the daemon exits at unmount (its threads joined)
# and the real tree is untouched. Needs root (drop_caches).
. "$(dirname "$0")/lib.sh"
is_root || { skip "needs root: drop_caches"; exit 0; }
ND=20 NF=150
for d in $(seq -w 1 $ND); do
	mkdir -p "$WS/pf/d$d"
	for f in $(seq -w 1 $NF); do printf '%s\n' "$d$f" >"$WS/pf/d$d/f$f"; done
done
chmod 640 "$WS/pf/d01/f001"
# a decoy outside the real root, reached through a symlinked folder
mkdir -p "$T/outside/secret" && for f in $(seq 1 50); do : >"$T/outside/secret/s$f"; done
ln -s "$T/outside/secret" "$WS/pf/escape"
stat_tree() { t 120 find "$1/pf" -path "$1/pf/escape" -prune -o -printf '%P %s %m %y\n' | LC_ALL=C sort; }
stat_tree "$WS" >"$T/real.list"

count() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print "none" }' "$T/stats"; }

# cold: every folder's first lookup waits for the disk
export TXFS_STATS=$T/stats
txfs_mount || exit 1
unset TXFS_STATS
sync && echo 3 >/proc/sys/vm/drop_caches
stat_tree "$MNT" >"$T/cold.list"
check_eq "the tree through the mount, cold: names, sizes, modes" "$(cat "$T/real.list")" "$(cat "$T/cold.list")"
# through the symlinked folder: its entries, which the daemon never lists
check_eq "the symlinked folder leads where it points" "50" "$(t 30 ls "$MNT/pf/escape/" | wc -l)"
txfs_umount || exit 1
show "$T/stats" "daemon stats, cold" 60
cold_dirs=$(count prefetch_dirs) cold_entries=$(count prefetch_entries)
[ "$cold_dirs" != none ] && [ "$cold_dirs" -ge $((ND / 2)) ] && [ "$cold_dirs" -le $((ND + 3)) ] &&
	ok "folders warmed after drop_caches: $cold_dirs (of $ND + pf and the root)" ||
	fail "folders warmed after drop_caches: expected $((ND / 2))..$((ND + 3)) got $cold_dirs"
[ "$cold_entries" != none ] && [ "$cold_entries" -ge $((ND / 2 * NF)) ] &&
	[ "$cold_entries" -le $((ND * NF + ND + 30)) ] &&
	ok "entries lstat'ed ahead: $cold_entries (at most the tree's)" ||
	fail "entries lstat'ed ahead: expected $((ND / 2 * NF))..$((ND * NF + ND + 30)) got $cold_entries"

# warm: nothing waits for the disk, so (next to) nothing is warmed
export TXFS_STATS=$T/stats
txfs_mount || exit 1
unset TXFS_STATS
stat_tree "$MNT" >"$T/warm.list"
check_eq "the tree through the mount, warm" "$(cat "$T/real.list")" "$(cat "$T/warm.list")"
txfs_umount || exit 1
warm_dirs=$(count prefetch_dirs)
[ "$warm_dirs" != none ] && [ "$warm_dirs" -lt $((ND / 2)) ] &&
	ok "folders warmed with the caches warm: $warm_dirs (< $((ND / 2)))" ||
	fail "folders warmed with the caches warm: expected < $((ND / 2)) got $warm_dirs"
check_eq "the real tree after both mounts" "$(cat "$T/real.list")" "$(stat_tree "$WS")"
check_eq "the decoy outside is untouched" "50" "$(ls "$T/outside/secret" | wc -l)"
finish
