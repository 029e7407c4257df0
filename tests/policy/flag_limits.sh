#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# flag and limit rules. flag: changes are allowed and listed as "needs
# review" in .txfs/changes, .txfs/status(.json), `txfs status` and the
# commit report; reads are never flagged. Limits, each in a fresh transaction: file-size and
# bytes and files give EDQUOT, deletes gives EACCES past N deletions (a
# rename that replaces a file is a deletion too); each refusal leaves a
# "guard" event with the rule and a hint in .txfs/log; the counts start
# again after a rollback and after a commit.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

fixture
mkdir -p "$WS/review/hooks" "$WS/del"
echo a >"$WS/review/a"; echo b >"$WS/review/b"; echo h >"$WS/review/hooks/pre"
echo plain >"$WS/plain.txt"
for i in $(seq 9); do echo "$i" >"$WS/del/d$i"; done
echo m >"$WS/mover"

use_policy flag_limits <<'EOF'
# flag_limits.sh
flag review/ **/hooks/*
limit bytes 1M
limit files 40
limit file-size 256K
limit deletes 5
EOF
txfs_mount || exit 1
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }

# ---- flag
allowed "flag: a flagged file can be changed" 'echo x >> review/a'
allowed "flag: a flagged file can be created" 'echo n > review/new'
allowed "flag: a flagged hook can be changed" 'echo y >> review/hooks/pre'
allowed "flag: an unflagged change" 'echo x >> plain.txt'
allowed "flag: reading a flagged file" 'cat review/b >/dev/null'
changes=$(cat "$MNT/.txfs/changes")
echo "$changes" | sed 's/^/    changes: /'
for p in "M review/a" "A review/new" "M review/hooks/pre"; do
	grep -q "^$p[[:space:]].*needs review" <<<"$changes" && ok "changes: '$p' needs review" ||
		fail "changes: expected '$p ... (needs review)' got: $(grep -F "${p#? }" <<<"$changes")"
done
grep -q "^M plain.txt$" <<<"$changes" && ok "changes: 'M plain.txt' without a flag" ||
	fail "changes: expected the line 'M plain.txt' got: $(echo "$changes" | grep plain)"
grep -q "review/b" <<<"$changes" && fail "changes: a read file is listed: $(echo "$changes" | grep review/b)" ||
	ok "changes: the read file is not listed"
check_eq "status.json needs_review" 3 "$(status_field needs_review)"
grep -q "; 3 need review" "$MNT/.txfs/status" && ok ".txfs/status: 3 need review" ||
	fail ".txfs/status: expected '3 need review' got: $(head -1 "$MNT/.txfs/status")"
out=$(t 30 "$TXFS" status "$MNT" 2>&1)
grep -q "3 need review" <<<"$out" && ok "txfs status: 3 need review" ||
	fail "txfs status MNT: expected '3 need review' got: $out"
ctl rollback
check_eq "after rollback nothing needs review" 0 "$(status_field needs_review)"

# ---- file-size
refused "limit file-size: writing 300K" 'head -c 300K /dev/zero > big' 'Disk quota exceeded'
refused "limit file-size: truncate -s 1M" 'truncate -s 1M big2' 'Disk quota exceeded'
refused "limit file-size: growing a real file past it" 'head -c 300K /dev/zero >> plain.txt' 'Disk quota exceeded'
allowed "limit file-size: 200K is fine" 'head -c 200K /dev/zero > ok.bin'
size=$(sf %s "$MNT/big")
[ "$size" -le 262144 ] 2>/dev/null && ok "limit file-size: the refused file stayed within it ($size)" ||
	fail "limit file-size: expected big <= 262144 bytes got $size"
log_guard "limit file-size" file-size
ctl rollback

# ---- bytes
in_mnt 'for i in 1 2 3 4 5 6 7 8; do head -c 200K /dev/zero > b$i || { echo "refused at $i"; exit 1; }; done' >"$T/bytes.out" 2>&1
rc=$?
grep -q "Disk quota exceeded" "$T/bytes.out" && [ $rc != 0 ] &&
	ok "limit bytes: EDQUOT ($(grep refused "$T/bytes.out"))" ||
	fail "limit bytes: expected EDQUOT before 8 x 200K got exit $rc: $(head -c 300 "$T/bytes.out")"
staged=$(status_field bytes_staged)
[ "$staged" -le 1048576 ] 2>/dev/null && ok "limit bytes: bytes staged $staged <= 1M" ||
	fail "limit bytes: expected bytes_staged <= 1048576 got $staged"
log_guard "limit bytes" bytes
ctl rollback

# ---- files
in_mnt 'for i in $(seq 60); do : > n$i || { echo "refused at $i"; exit 1; }; done' >"$T/files.out" 2>&1
rc=$?
grep -q "Disk quota exceeded" "$T/files.out" && [ $rc != 0 ] &&
	ok "limit files: EDQUOT ($(grep refused "$T/files.out"))" ||
	fail "limit files: expected EDQUOT before 60 new files got exit $rc: $(head -c 300 "$T/files.out")"
n=$(in_mnt 'ls | grep -c "^n[0-9]"')
[ "$n" -le 40 ] && [ "$n" -ge 30 ] && ok "limit files: $n files made (<= 40)" ||
	fail "limit files: expected 30..40 new files got $n"
log_guard "limit files" files
ctl rollback

# ---- deletes
refused "limit deletes: rm of 9 files" 'rm del/d*' 'Permission denied'
check_eq "limit deletes: exactly 5 deleted" "d6 d7 d8 d9" "$(in_mnt 'ls del' | tr '\n' ' ' | sed 's/ $//')"
refused "limit deletes: a sixth rm" 'rm del/d9'
refused "limit deletes: a rename that replaces a file" 'mv mover del/d8'
allowed "limit deletes: creating is still fine" 'touch del/new'
log_guard "limit deletes" deletes
ctl rollback
allowed "limit deletes: after rollback, deleting again" 'rm del/d1 del/d2 del/d3 del/d4 del/d5'
refused "limit deletes: ... up to the limit" 'rm del/d6'
ctl commit
allowed "limit deletes: after commit, deleting again" 'rm del/d6 del/d7 del/d8 del/d9 mover'
ctl commit
check_eq "the committed deletions reached the real directory" "" "$(ls "$WS/del")"

# ---- flag: the commit report names what needs review
allowed "flag: a flagged and an unflagged change to commit" 'echo c >> review/b && echo p >> plain.txt'
out=$(t 60 "$TXFS" commit "$MNT" 2>&1)
check_eq "txfs commit MNT: exit 0 ($out)" 0 "$?"
report="$out
$(cat "$MNT/.txfs/ctl")
$(t 30 "$PYTHON" -c 'import json,sys; [print(json.dumps(r)) for r in map(json.loads, open(sys.argv[1])) if r.get("event") == "commit"]' "$MNT/.txfs/log" | tail -1)"
grep -q "review/b" <<<"$report" && ok "the commit report lists review/b as needing review" ||
	fail "the commit report (txfs commit, .txfs/ctl, the commit event it points to) does not name the flagged path review/b: $(echo "$report" | tr '\n' ' ')"
check_eq "the flagged change was committed" "b
c" "$(cat "$WS/review/b")"

log_wellformed
txfs_umount
snapshot_real
finish
