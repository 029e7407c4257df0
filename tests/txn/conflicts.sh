#!/bin/bash
# Conflicts: the workspace is mounted at a separate MNT and the real
# directory is changed directly underneath a staged change: a file edited,
# deleted, replaced by a folder, replaced by a symlink, and a file the
# transaction deleted edited, a file made in a folder the transaction
# removes. Each time: echo commit > .txfs/ctl fails with
# EBUSY and ctl lists the path; `txfs commit MNT` exits 1 and lists it on
# stderr; the real directory is byte-identical to before the attempt and
# the layer intact; then `txfs commit --force MNT` exits 0 and the path in
# the real directory is what the mount showed when the commit began: the
# staged change where the real object is still the one it was staged over
# (edited underneath), the real directory's state where that object is
# gone or replaced (names resolve through the real directory; the forced
# commit reports those changes as left as the real directory has them).
. "$(dirname "$0")/txnlib.sh"

n=0
conflict_case() {
	local name=$1 path=$2 mine=$3 theirs=$4 expect=$5
	n=$((n + 1))
	W=$T/c$n/ws S=$T/c$n/state M=$T/c$n/mnt
	mkdir -p "$W" "$M"
	fixture "$W"
	txfs_mount --ws "$W" --state "$S" --mnt "$M" || return 1
	(cd "$M" && t 30 bash -c "set -e; $mine") || { fail "$name: the change in the mount failed"; return 1; }
	lst "$M" >"$T/c$n.view"
	(cd "$W" && bash -c "set -e; $theirs") || { fail "$name: the change underneath failed"; return 1; }
	lst "$W" -mox >"$T/c$n.real"
	local changes
	changes=$(t 30 cat "$M/$CTL/changes")

	check_ctl --mnt "$M" "$name: commit refused" EBUSY commit
	case $(ctl_text "$M") in
	*"  $path: "*) ok "$name: ctl lists the conflict '$path'" ;;
	*) fail "$name: ctl after the refused commit should list '  $path: ...', got: $(ctl_text "$M")" ;;
	esac
	check_cli "$name: txfs commit refuses" 1 commit "$M"
	local refused=$CERR
	case $CERR in
	"txfs: commit: "*"  $path: "*) ok "$name: txfs commit lists '$path' on stderr" ;;
	*) fail "$name: txfs commit stderr should be 'txfs: commit: ...' listing '$path', got: $CERR" ;;
	esac
	check_lst "$name: the real directory is byte-identical after the refused commits" "$W" "$T/c$n.real" -mox
	[ -e "$W/.txfs.staging" ] && fail "$name: staging folder left after a refused commit"
	check_eq "$name: the layer is intact (same changes)" "$changes" "$(t 30 cat "$M/$CTL/changes")"
	# Every other path shows the staged tree (at $path the kernel may still
	# show the staged object it cached, or the real directory's new one).
	local rx
	rx="^$(sed 's/[][\.*^$/]/\\&/g' <<<"$path")( |/)"
	check_eq "$name: the mount shows the same staged tree elsewhere" \
		"$(grep -Ev "$rx" "$T/c$n.view")" "$(lst "$M" | grep -Ev "$rx")"
	grep -q '"conflict"' "$M/$CTL/log" && ok "$name: the log records the conflict" ||
		fail "$name: no conflict event in $CTL/log"

	check_cli "$name: txfs commit --force" 0 commit --force "$M"
	# --force: where the object the change was staged over is still there
	# (edited underneath), the staged change wins; where it is gone or
	# replaced, the name is left as the real directory has it, and the
	# report says so.
	local want got
	if [ "$expect" = real ]; then
		want=$(grep -E "$rx" "$T/c$n.real")
		grep -q "left as it is there" "$M/$CTL/ctl" &&
			ok "$name: the forced commit reports '$path' as left as it is" ||
			fail "$name: the forced commit should report '$path' as left as the real directory has it, got: $(cat "$M/$CTL/ctl")"
	else
		want=$(grep -E "$rx" "$T/c$n.view")
		# a file edited underneath: listed, its real version kept
		if [[ $refused == *"$path: changed in the real directory"* ]]; then
			grep -q "replaced by the staged version (the real one is kept in the history)" "$M/$CTL/ctl" &&
				ok "$name: the forced commit lists '$path' as replaced, its real version kept" ||
				fail "$name: the forced commit should list '$path' as replaced by the staged version, got: $(cat "$M/$CTL/ctl")"
		fi
	fi
	if [ "$expect" = real ]; then
		got=$(lst "$W" -mox | grep -E "$rx")
	else
		got=$(lst "$W" | grep -E "$rx")
	fi
	check_eq "$name: after --force the real '$path' is as expected ($expect)" "$want" "$got"
	[ "$expect" = absent ] && check_eq "$name: after --force '$path' is gone" "" "$got"
	txfs_umount "$M" "$S"
}

conflict_case "edited underneath" file.txt \
	'echo mine > file.txt' 'echo theirs > file.txt' present
conflict_case "deleted underneath" dir/a.txt \
	'echo mine >> dir/a.txt' 'rm dir/a.txt' real
conflict_case "replaced by a folder underneath" exec.sh \
	'echo mine > exec.sh' 'rm exec.sh && mkdir exec.sh && echo x > exec.sh/inside' real
conflict_case "replaced by a symlink underneath" big.bin \
	'"$FSOP" pwrite big.bin 100 mine' 'rm big.bin && ln -s file.txt big.bin' real
conflict_case "deleted in the mount, edited underneath" dir/sub/deep.txt \
	'rm dir/sub/deep.txt' 'echo theirs >> dir/sub/deep.txt' absent
# a file made underneath in a folder the transaction removes: never lost
# with it (issue 23's review); --force leaves the folder, with it
conflict_case "made underneath in a folder the mount removes" dir/sub \
	'rm -rf dir/sub' 'echo precious > dir/sub/precious' real
# a staged folder (times changed) replaced underneath, its staged file
# (edited) moved into the new folder: the forced commit leaves both as the
# real directory has them
conflict_case "folder replaced underneath, staged file moved into it" dir/sub \
	'echo mine >> dir/sub/deep.txt && touch -d @1000000000 dir/sub' \
	'mv dir/sub dir/old && mkdir dir/sub && mv dir/old/deep.txt dir/sub/ && rm -rf dir/old' real
txn_finish
