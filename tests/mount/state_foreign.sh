#!/bin/bash
# A state folder that belongs to another workspace, or whose LMDB files are
# corrupt or truncated, is refused with a clear message and left exactly as
# it was (never reset); with the good files back, everything staged is there.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
t 10 bash -c 'echo staged > "$MNT/staged"' || fail "write failed"
txfs_umount || exit 1
data=$STATE/layer/data.mdb
[ -f "$data" ] || { fail "expected the layer at $data got: $(ls -R "$STATE" | head)"; exit 1; }
cp -a "$data" "$T/data.good"
sum() { sha256sum <"$data" | cut -c1-16; }
good=$(sum)

refused() { # what
	check_eq "$1: txfs mount exits 1" 1 "$RC"
	if grep -Eq '^txfs: [^:]+: .+' <<<"$ERR"; then ok "$1: message '$ERR'"; else
		fail "$1: expected a 'txfs: what failed: why' message got '$ERR'"; fi
	check_eq "$1: nothing mounted" "" "$(fstype_of "$MNT")"
	check_eq "$1: the layer file is left as it was" "$2" "$(sum)"
}

mkdir "$T/other"
echo other >"$T/other/x"
txfs_mount --ws "$T/other" --expect-fail
refused "state folder of another workspace" "$good"
grep -Eiq 'workspace|belongs|another|other' <<<"$ERR" || fail "foreign state: the message does not say the folder belongs to another workspace: '$ERR'"

printf 'this is not an lmdb file' | dd of="$data" bs=1 seek=0 conv=notrunc status=none
bad=$(sum)
txfs_mount --expect-fail
refused "corrupt layer (first page overwritten)" "$bad"

"$FSOP" fill "$data" 4M 9
bad=$(sum)
txfs_mount --expect-fail
refused "layer replaced by random bytes" "$bad"

head -c 100 "$T/data.good" >"$data"
bad=$(sum)
txfs_mount --expect-fail
refused "truncated layer" "$bad"

cp -a "$T/data.good" "$data"
txfs_mount || exit 1
check_content "with the good layer back, the staged file is there" "$MNT/staged" staged
txfs_umount || exit 1
finish
