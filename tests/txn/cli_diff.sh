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
	local what=$1 copy=$T/copy.$RANDOM
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
txn_finish
