#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The mass-deletion guard counts real data destroyed in place, not only
# removals (issue 23.4): punching (fallocate -p), zeroing (dd
# conv=notrunc), overwriting (os.pwrite), a store through mmap and
# copy_file_range onto real files are losses, once a file. Over 1,200
# real decoy files, each form stops at the default policy's `limit
# deletes 1000` with EACCES, exactly 1,000 files are changed in the view,
# the veto is logged as an "overwrite" with the guard's hint, and after
# a rollback every file has its bytes again; the real directory is
# byte-identical at the end. What destroys nothing costs nothing:
# appending, writing the same bytes back, writing into new files, and
# truncating a file already counted.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

N=1200
rm -rf "$WS" && mkdir -p "$WS/d" "$WS/e"
"$PYTHON" - "$WS" "$N" <<'EOF' || exit 1
import sys
ws, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    data = (("decoy %d " % i) * 40).encode()
    open("%s/d/f%d" % (ws, i), "wb").write(data)
    open("%s/e/g%d" % (ws, i), "wb").write(data)
# a real file of several 64 KiB blocks: the last block is overwritten
open("%s/big" % ws, "wb").write(bytes(range(256)) * 1024)
EOF
default_policy
txfs_mount || exit 1
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }
# changed DIR PREFIX: how many of the N files of DIR differ, in the view,
# from the real directory's
changed() {
	t 120 "$PYTHON" -c 'import sys
m, w, d, p, n = sys.argv[1:6]
print(sum(open("%s/%s/%s%d" % (m, d, p, i), "rb").read() !=
          open("%s/%s/%s%d" % (w, d, p, i), "rb").read() for i in range(1, int(n) + 1)))' \
		"$MNT" "$WS" "$1" "$2" "$N"
}
# the last veto in .txfs/log is an overwrite, followed by its guard event
last_veto_is() {
	if t 30 "$PYTHON" -c 'import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
v = [r for r in recs if r.get("event") == "veto"][-1]
g = [r for r in recs if r.get("event") == "guard"][-1]
assert v["op"] == sys.argv[2], v
assert v["path"].startswith(sys.argv[3]), v
assert g["limit"] == "deletes" and g["max"] == 1000 and "overwriting" in g["hint"] and "roll back" in g["hint"], g
print(v["op"], v["path"], v["rule"])' "$MNT/.txfs/log" "$2" "$3" >"$T/lv.out" 2>&1; then
		ok "$1: logged ($(cat "$T/lv.out"))"
	else
		fail "$1: $(tail -3 "$T/lv.out")"
	fi
}
form() {	# form WHAT 'script over d/f$i' [REGEX]
	refused "$1 over $N real files" "$2" "${3:-Permission denied|PermissionError}"
	check_eq "$1: exactly 1,000 real files were changed" 1000 "$(changed d f)"
	last_veto_is "$1" overwrite d/f
	ctl rollback
	check_eq "$1: after rollback no file differs" 0 "$(changed d f)"
}

# ---- what destroys no real data costs nothing
allowed "appending to $N real files" 'for i in $(seq '$N'); do echo more >> e/g$i || exit 1; done'
allowed "writing the same bytes back into $N real files" "$PYTHON -c 'import os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_RDWR); b = os.pread(fd, 4096, 0)
    assert os.pwrite(fd, b, 0) == len(b); os.close(fd)'"
allowed "$N new files written, overwritten and punched" "mkdir new && $PYTHON -c 'import os
for i in range(1, $N + 1):
    p = \"new/n%d\" % i; open(p, \"w\").write(\"x\" * 100)
    fd = os.open(p, os.O_RDWR); os.pwrite(fd, b\"y\" * 50, 0); os.close(fd)' &&
	for i in \$(seq $N); do fallocate -p -o 0 -l 10 new/n\$i || exit 1; done"
check_eq "nothing of d/ differs" 0 "$(changed d f)"
grep -q "limit deletes" "$MNT/.txfs/ctl" && fail ".txfs/ctl speaks of the guard: $(cat "$MNT/.txfs/ctl")" ||
	ok "no loss counted: no guard note"
ctl rollback

# ---- the five forms
form "fallocate -p (punch)" 'for i in $(seq '$N'); do fallocate -p -o 8 -l 100 d/f$i || exit 1; done'
form "dd conv=notrunc of zeros" \
	'for i in $(seq '$N'); do dd if=/dev/zero of=d/f$i bs=64 count=1 conv=notrunc status=none || exit 1; done'
form "os.pwrite over existing bytes" "$PYTHON -c 'import os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_WRONLY); os.pwrite(fd, b\"OVERWRITTEN\", 20); os.close(fd)'"
log_wellformed
# a store through mmap reaches the daemon from the kernel's writeback,
# which names no process: its veto has pid 0 and no exe
form "a store through mmap" "$PYTHON -c 'import mmap, os
for i in range(1, $N + 1):
    fd = os.open(\"d/f%d\" % i, os.O_RDWR); m = mmap.mmap(fd, 0)
    m[0:4] = b\"ZZZZ\"; m.flush(); m.close(); os.close(fd)'" 'Error|error'
form "copy_file_range onto real files" "echo COPIED > src && $PYTHON -c 'import os
s = os.open(\"src\", os.O_RDONLY)
for i in range(1, $N + 1):
    d = os.open(\"d/f%d\" % i, os.O_WRONLY)
    os.copy_file_range(s, d, 6, 0, 0); os.close(d)'"

# ---- once a file; the limit holds for every later loss
allowed "1,000 overwrites: exactly the limit" "$PYTHON -c 'import os
for i in range(1, 1001):
    fd = os.open(\"d/f%d\" % i, os.O_WRONLY); os.pwrite(fd, b\"A\", 0); os.pwrite(fd, b\"B\", 300); os.close(fd)'"
allowed "the same files truncated, punched and overwritten again: counted already" \
	'for i in $(seq 1000); do truncate -s 100 d/f$i && fallocate -p -o 0 -l 10 d/f$i && echo x | dd of=d/f$i conv=notrunc status=none || exit 1; done'
refused "one more real file overwritten" 'echo x | dd of=d/f1001 conv=notrunc status=none'
refused "the last block of a big real file overwritten" 'printf Q | dd of=big bs=1 seek=262000 conv=notrunc status=none'
log_guard "overwrites" deletes
grep -q "overwriting" "$MNT/.txfs/ctl" && grep -q "roll back" "$MNT/.txfs/ctl" &&
	ok ".txfs/ctl says the limit is reached and what to do" ||
	fail ".txfs/ctl: expected the guard note got: $(cat "$MNT/.txfs/ctl")"
allowed "tripped: appending and writing new files still work" 'echo more >> d/f1001 && echo n > fresh && echo m >> fresh'
ctl rollback
check_eq "rollback: nothing differs" 0 "$(changed d f)"
cmp -s "$MNT/big" "$WS/big" && ok "rollback: big is whole" || fail "rollback: big differs"
finish
