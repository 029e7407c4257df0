#!/bin/bash
# A damaged layer (bytes flipped in data.mdb's pages; LMDB has no checksums
# and trusts its file) is refused at mount by the consistency check (every
# database walked with cursors in a child process), with a message that
# says how to save what can still be read (--salvage, txfs diff) or
# discard it (remove the state folder); never a crash, the real directory
# untouched. The old code mounted such layers and then failed writes with
# EIO (MDB_PAGE_NOTFOUND) or crashed on them. A flip in a free page or in
# file data is invisible to LMDB: such a mount must then just work.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
for i in $(seq 1 300); do echo "staged $i"; done >"$T/list"
t 60 bash -c 'i=0; while read -r l; do i=$((i+1)); echo "$l" > "$MNT/f$i"; done' <"$T/list" ||
	fail "staging 300 files"
t 10 mkdir "$MNT/newdir"
t 20 "$FSOP" fill "$MNT/newdir/big" 300k 3 || fail "staging a big file"
t 10 setfattr -n user.x -v y "$MNT/f1" || fail "setfattr"
echo changed >"$MNT/file.txt"
txfs_umount || exit 1
GOOD=$T/good
cp -a "$STATE" "$GOOD"
snapshot_real_now=$(real_listing)
pages=$(( $(stat -c %s "$GOOD/layer/data.mdb") / 4096 ))
echo "# data.mdb: $pages pages"
refused=0 mounted=0 bad=0
PY3=$(command -v python3) || skip "python3 is needed"
flip() { # file offset
	"$PY3" -c 'import sys
f = open(sys.argv[1], "r+b"); f.seek(int(sys.argv[2])); b = f.read(1)
f.seek(int(sys.argv[2])); f.write(bytes([b[0] ^ 0xff]))' "$1" "$2"
}
# every page of a small layer, at most 48 spread over a bigger one
step=$(( (pages + 47) / 48 ))
for pg in $(seq 2 "$step" $((pages - 1))); do
	for fo in 10 12; do
		rm -rf "$STATE"
		cp -a "$GOOD" "$STATE"
		flip "$STATE/layer/data.mdb" $((pg * 4096 + fo))
		txfs_mount --expect-fail
		if [ "$RC" = 0 ]; then
			mounted=$((mounted + 1))
			# a flip LMDB cannot see: the mount must work
			t 60 find "$MNT" -path "$MNT/.txfs" -prune -o -type f -exec cat {} + >/dev/null 2>"$T/cat.err" ||
				{ bad=$((bad + 1)); echo "# page $pg+$fo mounted, reading fails: $(head -c 200 "$T/cat.err")"; }
			t 10 bash -c 'echo x > "$MNT/after"' 2>/dev/null ||
				{ bad=$((bad + 1)); echo "# page $pg+$fo mounted, a write fails"; }
			txfs_umount >/dev/null || bad=$((bad + 1))
		elif [ "$RC" -gt 128 ] || [ "$RC" = 124 ]; then
			bad=$((bad + 1))
			echo "# page $pg+$fo: txfs mount died or hung (exit $RC): $ERR"
		else
			refused=$((refused + 1))
			case $ERR in
			*"refused: the layer is damaged"*"txfs mount --salvage --state $STATE"*"txfs diff"*"rm -r $STATE"*) ;;
			*) bad=$((bad + 1)); echo "# page $pg+$fo refused without the recovery advice: $ERR" ;;
			esac
			is_mounted "$MNT" && { bad=$((bad + 1)); echo "# page $pg+$fo: refused but mounted"; }
			[ "$refused" = 1 ] && echo "# e.g. page $pg+$fo: $ERR"
			# keep up to 6 damaged layers, spread, for --salvage
			[ "$refused" -le 6 ] && cp -a "$STATE" "$T/damaged$refused" &&
				echo "page $pg+$fo" >"$T/damaged$refused.where"
		fi
		[ "$(real_listing)" = "$snapshot_real_now" ] ||
			{ bad=$((bad + 1)); echo "# page $pg+$fo: the real directory changed"; }
	done
done
echo "# $refused damaged layers refused, $mounted mounted (flip in a free page or data)"
check_eq "every damaged layer refused with the recovery advice, every other one works, no crash" 0 "$bad"
[ "$refused" -ge 3 ] && ok "the check found damage ($refused layers refused)" ||
	fail "the check found damage: expected at least 3 refused layers got $refused"
[ "$mounted" -ge 1 ] && ok "flips LMDB cannot see do not refuse a mount ($mounted)" ||
	fail "expected some flips in free or data pages to mount got $mounted"

# Whatever the sampling above hit: a leaf of layer-born inodes damaged so
# that LMDB reads it as a branch (flags byte flipped). The salvage copy
# then lacks those records while their names are still listed: txfs diff
# must leave them out and say so, not fail as a whole (it did: EIO).
leaf=$("$PY3" - "$GOOD/layer/data.mdb" <<'PY'
import struct, sys
d = open(sys.argv[1], "rb").read()
pg = lambda n: d[n * 4096:(n + 1) * 4096]
def nodes(p):
    lower = struct.unpack("<H", p[12:14])[0]
    for i in range((lower - 16) // 2):
        off = struct.unpack("<H", p[16 + 2 * i:18 + 2 * i])[0]
        lo, hi, fl, ks = struct.unpack("<HHHH", p[off:off + 8])
        yield lo | hi << 16 | fl << 32, p[off + 8:off + 8 + ks], off
def leaves(root):
    p = pg(root)
    if struct.unpack("<H", p[10:12])[0] & 1:	# a branch
        for child, _, _ in nodes(p):
            yield from leaves(child)
    else:
        yield root, p
# the newer meta page (txnid at the end of MDB_meta), main DB root
meta = max((pg(0), pg(1)), key=lambda p: struct.unpack("<Q", p[16 + 128:16 + 136])[0])
main_root = struct.unpack("<Q", meta[16 + 24 + 48 + 40:16 + 24 + 48 + 48])[0]
for n, p in leaves(main_root):
    for _, key, off in nodes(p):
        if key == b"inodes":
            root = struct.unpack("<Q", p[off + 8 + 6 + 40:off + 8 + 6 + 48])[0]
            for m, q in leaves(root):
                keys = [k for _, k, _ in nodes(q)]
                if keys and all(len(k) == 16 and k[8:10] == b"\x3f\xff" for k in keys):
                    print(m)
                    sys.exit(0)
PY
)
if [ -n "$leaf" ]; then
	cp -a "$GOOD" "$T/damaged0"
	flip "$T/damaged0/layer/data.mdb" $((leaf * 4096 + 10))
	echo "inodes leaf page $leaf+10" >"$T/damaged0.where"
else
	fail "no leaf of layer-born inodes found in data.mdb"
fi
# --salvage: read-only, never committed, the real directory untouched;
# the daemon serves a copy of what child processes could read, so
# `txfs diff` never kills it (the old code died on an LMDB assertion in
# mdb_cursor_sibling), prints what could be read and says what could not.
salvaged=0 partial=0
for d in "$T"/damaged[0-9]*; do
	[ -d "$d" ] || continue
	where=$(cat "$d.where")
	rm -rf "$STATE"
	cp -a "$d" "$STATE"
	if [ "$d" = "$T/damaged1" ]; then
		out=$(t 60 "$TXFS" recover "$STATE" 2>&1)
		check_eq "txfs recover refuses the damaged layer too" 1 "$?"
		case $out in
		*"refused: the layer is damaged"*"rm -r $STATE"*) ok "txfs recover says how to recover" ;;
		*) fail "txfs recover: expected the recovery advice got: $out" ;;
		esac
	fi
	sum_before=$(md5sum <"$STATE/layer/data.mdb")
	txfs_mount --salvage || continue
	[ "$d" = "$T/damaged1" ] && {
		check_errno "a write under --salvage fails" EROFS pwrite "$MNT/file.txt" 0 x
		got=$(t 30 "$TXFS" commit "$MNT" 2>&1)
		check_eq "txfs commit under --salvage is refused" 1 "$?"
	}
	merr=$ERR
	t 120 "$TXFS" diff "$MNT" >"$T/salvaged.patch" 2>"$T/diff.err"
	drc=$?
	if [ "$drc" = 1 ]; then
		case $merr in
		*"txfs: salvage $STATE: parts of the layer could not be read"*) ;;
		*) fail "$where: txfs mount --salvage did not say what could not be read: $merr" ;;
		esac
	fi
	n=$(grep -c '^+staged [0-9]*$' "$T/salvaged.patch")
	echo "# $where: txfs diff exit $drc, $n of 300 staged files in the patch, $(grep -c . "$T/diff.err") lines on stderr"
	if [ -z "$(daemon_pid)" ]; then
		fail "$where: the daemon died in txfs diff under --salvage: $(head -c 300 "$T/diff.err")"
	elif [ "$drc" -gt 1 ] ||
		{ [ "$n" -lt 1 ] && ! grep -q "could not be read" "$T/diff.err"; }; then
		# (none at all is right when the damage took every file's data,
		# e.g. the root of the chunks tree, and txfs diff says so)
		fail "$where: txfs diff under --salvage: exit $drc, $n staged files: $(head -c 300 "$T/diff.err")"
	elif [ "$n" -lt 300 ] && ! grep -q "could not be read" "$T/diff.err"; then
		fail "$where: the patch lacks $((300 - n)) staged files and txfs diff did not say what could not be read"
	else
		salvaged=$((salvaged + 1))
		[ "$drc" = 1 ] && partial=$((partial + 1))
		# what it does hold applies to the real tree as it was staged
		bad_lines=$(grep '^+staged ' "$T/salvaged.patch" | grep -vc '^+staged [0-9]*$')
		check_eq "$where: every staged line in the patch is intact" 0 "$bad_lines"
	fi
	# a staged file in the patch with other content than it was given
	# (its data lost) must be named as possibly incomplete on stderr
	# (one awk over both files: fi with no "+staged i" line anywhere
	# that has a "diff --git a/fi b/fi" and no "diff: fi: its staged
	# content may be incomplete" on stderr; 900 greps a layer before)
	unflagged=$(awk -v patch="$T/salvaged.patch" '
		FILENAME == patch {
			if ($0 ~ /^\+staged [0-9]+$/)
				staged[substr($0, 9)] = 1
			else if ($0 ~ /^diff --git a\/f[0-9]+ b\/f[0-9]+$/ && "b/" substr($3, 3) == $4)
				diffed[substr($3, 4)] = 1
			next
		}
		{
			l = $0
			while (match(l, /diff: f[0-9]+: its staged content may be incomplete/)) {
				s = substr(l, RSTART + 7)
				flagged[substr(s, 1, index(s, ":") - 1)] = 1
				l = substr(l, RSTART + RLENGTH)
			}
		}
		END {
			for (i = 1; i <= 300; i++)
				if (!(i in staged) && (i in diffed) && !(i in flagged))
					c++
			print c + 0
		}' "$T/salvaged.patch" "$T/diff.err")
	check_eq "$where: every staged file in the patch with lost data is named on stderr" 0 "$unflagged"
	t 30 ls "$MNT" >/dev/null || fail "$where: listing the salvage mount after txfs diff"
	txfs_umount
	check_eq "$where: --salvage leaves the damaged layer as it was" "$sum_before" "$(md5sum <"$STATE/layer/data.mdb")"
done
[ "$salvaged" -ge 1 ] && ok "txfs diff under --salvage saved staged files of $salvaged damaged layers ($partial partial, saying so), the daemon alive" ||
	fail "expected txfs diff under --salvage to save staged files, got none"
check_eq "the real directory is untouched" "$snapshot_real_now" "$(real_listing)"
rm -rf "$STATE"
cp -a "$GOOD" "$STATE"
finish
