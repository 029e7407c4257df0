#!/bin/bash
# Block-granular copy-on-write: writing 4 KiB into a 1 GiB real file grows
# the layer by about one 64 KiB block plus metadata, not by a copy of the
# file. Growth is measured in LMDB pages in use (mdb_stat: pages used minus
# free pages, times the page size), which counts what the layer holds
# whatever LMDB pre-allocates; the file's allocated size is reported too.
. "$(dirname "$0")/lib.sh"
size=${TXFS_PARTIAL_SIZE:-1G}
off=$((500 * 1024 * 1024 + 12345))
"$FSOP" fill "$WS/huge.bin" "$size" 3 || { fail "cannot make the $size real file (disk space?)"; exit 1; }
echo small >"$WS/small.txt"

layer_bytes() {
	mdb_stat -ef "$STATE/layer" | awk '
		/Page size:/ { ps = $3 } /Number of pages used:/ { used = $5 } /Free pages:/ { free = $3 }
		END { if (ps == "" || used == "") exit 1; print (used - free) * ps }'
}
alloc_bytes() { du -B1 "$STATE/layer/data.mdb" | cut -f1; }

txfs_mount || exit 1
check_eq "the real file's size through the mount" "$(stat -c %s "$WS/huge.bin")" "$(sf %s "$MNT/huge.bin")"
t 10 cat "$MNT/small.txt" >/dev/null
txfs_umount || exit 1
before=$(layer_bytes) || { fail "mdb_stat -ef $STATE/layer failed: $(mdb_stat -ef "$STATE/layer" 2>&1 | head -3)"; exit 1; }
abefore=$(alloc_bytes)

head -c 4096 /dev/urandom >"$T/patch"
txfs_mount || exit 1
check_run "write 4 KiB at offset $off and fsync" dd if="$T/patch" of="$MNT/huge.bin" bs=4096 count=1 \
	oflag=seek_bytes seek=$off conv=notrunc,fsync status=none
txfs_umount || exit 1
after=$(layer_bytes)
aafter=$(alloc_bytes)
growth=$((after - before))
echo "# layer pages in use: $before -> $after bytes (+$growth); data.mdb allocated: $abefore -> $aafter bytes"
if [ "$growth" -le $((512 * 1024)) ]; then
	ok "the layer grew by $growth bytes (at most 64 KiB block + metadata, limit 512 KiB)"
else
	fail "layer growth for a 4 KiB write into a $size file: expected <= 524288 bytes got $growth"
fi
if [ $((aafter - abefore)) -le $((8 * 1024 * 1024)) ]; then
	ok "data.mdb's allocation grew by $((aafter - abefore)) bytes (limit 8 MiB)"
else
	fail "data.mdb allocation growth: expected <= 8 MiB got $((aafter - abefore)) bytes"
fi

txfs_mount || exit 1
check_eq "the 4 KiB written are read back" "$(sha256sum <"$T/patch")" "$(t 30 "$FSOP" pread "$MNT/huge.bin" $off 4096 | sha256sum)"
check_eq "the bytes around the write are the real file's" \
	"$("$FSOP" pread "$WS/huge.bin" $((off - 70000)) 70000 | sha256sum) $("$FSOP" pread "$WS/huge.bin" $((off + 4096)) 70000 | sha256sum)" \
	"$(t 30 "$FSOP" pread "$MNT/huge.bin" $((off - 70000)) 70000 | sha256sum) $(t 30 "$FSOP" pread "$MNT/huge.bin" $((off + 4096)) 70000 | sha256sum)"
# (cmp, not two sha256sum of 1 GiB: the same answer at memory speed)
t 120 cmp -s "$MNT/huge.bin" <({ head -c $off "$WS/huge.bin"; cat "$T/patch"; tail -c +$((off + 4096 + 1)) "$WS/huge.bin"; })
check_eq "the whole file through the mount = real file with the 4 KiB patched in" 0 "$?"
finish
