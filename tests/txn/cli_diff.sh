#!/bin/bash
# txfs diff: the unified diff of the staged text changes applies with
# `patch -p1` to a copy of the real directory and gives the merged tree:
# modified, new (also in a new folder) and deleted files; a renamed and
# changed file; a file whose name has spaces. --name-status lists every
# change of .txfs/changes (K<TAB>path, R<TAB>old<TAB>new); --stat gives
# " path | N +a -b"; a PATH argument restricts the output.
. "$(dirname "$0")/txnlib.sh"
command -v patch >/dev/null || skip "patch(1) is needed"
fixture
printf 'one\ntwo\nthree\nfour\nfive\n' >"$WS/lines.txt"
echo keep >"$WS/dir/sub/keep.txt"	# patch(1) removes folders it empties
txfs_mount || exit 1

# patch_check WHAT: diff -> patch -p1 on a copy of the real dir == the mount
patch_check() {
	local what=$1 copy
	copy=$(mktemp -u "$T/copy.XXXXXX") || return	# a new name ($RANDOM repeats)
	check_cli "$what: txfs diff" 0 diff "$MNT" || return
	printf '%s\n' "$COUT" >"$T/p.diff"
	cp -a "$WS" "$copy"
	if (cd "$copy" && t 30 patch -p1 -s --no-backup-if-mismatch <"$T/p.diff") >"$T/patch.out" 2>&1; then
		ok "$what: the diff applies with patch -p1"
	else
		fail "$what: patch -p1 failed: $(head -c 400 "$T/patch.out"); the diff: $(head -c 600 "$T/p.diff")"
	fi
	check_tree "$what: the patched copy equals the merged view" "$copy" "$MNT"
}

in_mnt 'printf "one\nTWO\nthree\nfour\nfive\nsix\n" > lines.txt; echo more >> dir/a.txt; echo new > new.txt; mkdir newdir; printf "a\nb\n" > newdir/n.txt; rm dir/sub/deep.txt'
patch_check "modified, new, deleted"
check_cli "txfs diff --name-status" 0 diff --name-status "$MNT"
want=$(sed -e 's/^R \(.*\) -> \(.*\)$/R\t\1\t\2/' -e 's/^\([AMD]\) /\1\t/' "$MNT/$CTL/changes" | sort)
check_eq "--name-status lists every change" "$want" "$(sort <<<"$COUT")"
check_eq "--name-status, exact lines" "$(printf 'A\tnew.txt\nA\tnewdir\nA\tnewdir/n.txt\nD\tdir/sub/deep.txt\nM\tdir/a.txt\nM\tlines.txt')" "$(sort <<<"$COUT")"
check_cli "txfs diff --stat" 0 diff --stat "$MNT"
check_eq "--stat line for lines.txt" " lines.txt | 3 +2 -1" "$(grep ' lines.txt ' <<<"$COUT")"
check_eq "--stat line for dir/a.txt" " dir/a.txt | 1 +1 -0" "$(grep ' dir/a.txt ' <<<"$COUT")"
check_eq "--stat line for newdir/n.txt" " newdir/n.txt | 2 +2 -0" "$(grep ' newdir/n.txt ' <<<"$COUT")"
check_eq "--stat line for dir/sub/deep.txt" " dir/sub/deep.txt | 1 +0 -1" "$(grep ' dir/sub/deep.txt ' <<<"$COUT")"
check_cli "txfs diff --name-status MNT dir" 0 diff --name-status "$MNT" dir
check_eq "a PATH restricts the output" "$(printf 'D\tdir/sub/deep.txt\nM\tdir/a.txt')" "$(sort <<<"$COUT")"
check_cli "txfs diff MNT newdir" 0 diff "$MNT" newdir
check_eq "a PATH restricts the diff" "diff --git a/newdir/n.txt b/newdir/n.txt" "$(grep '^diff ' <<<"$COUT")"

check_ctl "rollback" OK rollback
in_mnt 'mv lines.txt renamed.txt; echo six >> renamed.txt'
patch_check "a renamed and changed file"
check_ctl "rollback" OK rollback
in_mnt 'echo changed >> "dir with space/x y.txt"'
patch_check "a file whose name has spaces"
check_ctl "rollback" OK rollback
txfs_umount || exit 1

# The daemon serves no content the policy keeps from reads: a read-denied
# file the agent deleted (delete is allowed) or changed shows in the list,
# never its bytes, in the diff, --stat or through sp-read/real for any
# caller (the MCP diff tool is one).
mkdir -p "$WS/protected"
echo "keep me secret" >"$WS/protected/keep.txt"
echo "also secret" >"$WS/protected/two.txt"
printf 'deny read,write,truncate protected/**\nhide .env\n' >"$T/read.policy"
echo "SECRET=hunter2" >"$WS/.env"
REAL_BEFORE=
TXFS_POLICY=$T/read.policy txfs_mount || exit 1
in_mnt 'rm protected/keep.txt; echo visible > ok.txt'
check_cli "diff with a read-denied deletion" 0 diff "$MNT"
grep -q "keep me secret" <<<"$COUT$CERR" && fail "diff printed the read-denied content" ||
	ok "diff does not print the read-denied file's bytes"
grep -q "protected/keep.txt: content withheld" <<<"$CERR" && ok "diff says the content is withheld" ||
	fail "diff stderr: expected 'protected/keep.txt: content withheld' got '$CERR'"
grep -q "^+visible" <<<"$COUT" && ok "the rest of the diff is there" || fail "diff: expected +visible got '$COUT'"
check_cli "--name-status still lists it" 0 diff --name-status "$MNT"
grep -q "^D	protected/keep.txt" <<<"$COUT" && ok "D protected/keep.txt listed" || fail "name-status: '$COUT'"
# the socket verbs themselves, as any client would ask them
for req in "real protected/two.txt" "sp-read real - protected/two.txt" "real .env" "sp-read real - .env"; do
	out=$(t 10 python3 - "$STATE/ctl.sock" $req <<'EOF2'
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
s.sendall(b"".join(a.encode() + b"\0" for a in sys.argv[2:]) + b"\0")
out = b""
while True:
    d = s.recv(65536)
    if not d:
        break
    out += d
print(out.decode(errors="replace"))
EOF2
)
	case $out in
	*secret*|*hunter2*) fail "socket '$req' served the content: $(head -c 100 <<<"$out")" ;;
	13*|2*) ok "socket '$req' refused ($(head -1 <<<"$out"))" ;;
	*) fail "socket '$req': expected errno 13 or 2 got '$(head -c 100 <<<"$out")'" ;;
	esac
done
check_ctl "rollback" OK rollback
txfs_umount || exit 1
check_real_unchanged
txn_finish
