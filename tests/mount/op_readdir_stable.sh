#!/bin/bash
# readdir offsets stay valid while the directory changes: entries present
# throughout are returned exactly once, seekdir(telldir()) returns to the
# same entry, and a rewound listing is exact (half the entries real, half
# made in the mount; thousands, so the listing spans many readdir calls).
. "$(dirname "$0")/lib.sh"
mkdir "$WS/d"
for i in $(seq 0 1499); do : >"$WS/d/$(printf 'e%04d' "$i")"; done
txfs_mount || exit 1
t 60 bash -c 'for i in $(seq 1500 2999); do : > "$MNT/d/$(printf "e%04d" $i)"; done' ||
	fail "creating 1500 entries in the mount failed"
check_run "readdir-stable over 3000 entries (half real)" "$FSOP" readdir-stable "$MNT/d" 3000
mkdir "$T/plain"
for i in $(seq 0 2999); do : >"$T/plain/$(printf 'e%04d' "$i")"; done
"$FSOP" readdir-stable "$T/plain" 3000 || fail "the same check on a plain directory failed (test bug)"
finish
