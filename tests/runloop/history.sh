#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# history - a commit can be taken back (issue 25), as root and as the
# unprivileged test user, checked on the trees, not on the messages:
#   1. `txfs run` exits 0 after `rm -rf dir`, an overwrite of a tracked
#      file, a new file, a symlink changed, a chmod, a rename and 4 KiB
#      patched into a real file: committed; `txfs history` (text, --json,
#      --paths, --deleted) says what the commit did;
#   2. `txfs undo --dry-run` changes nothing; `txfs undo` gives back the
#      real directory byte for byte (names, types, modes, sizes, owners,
#      times, link targets, contents, xattrs, the root's times), git fsck
#      clean, the decoys outside untouched; the undo of the undo gives
#      back the committed tree;
#   3. `txfs restore PATH` puts one deleted file back (and the folder it
#      was in) and nothing else; undoing the restore removes it again;
#   4. a path changed underneath since the commit: the undo is refused,
#      exit 1, the path listed, nothing changed; --force undoes it;
#   5. on a mounted workspace the undo is staged (the real directory
#      unchanged until commit), refused while changes are staged;
#   6. history across remounts (txfs mount, commit, umount, twice);
#   7. pruning under a small cap keeps only the newest record;
#   8. a crash at every step of a commit (TXFS_FAULT=commit:N) and of an
#      undo (TXFS_FAULT=undo:N): after `txfs recover` the real directory is
#      exactly before or exactly after, never between, and the history
#      record is complete (its undo gives back the tree before).
. "$(dirname "$0")/lib.sh"

# hist ARGS...: txfs ARGS --state $STATE $WS as $AS; HRC, HOUT, HERR
hist() {
	local sub=$1
	shift
	txfs_as "$sub" --state "$STATE" "$@" >"$T/h.out" 2>"$T/h.err"
	HRC=$?
	HOUT=$(cat "$T/h.out")
	HERR=$(cat "$T/h.err")
}

hjson() { # FIELD of the newest record in `txfs history --json`
	hist history --json "$WS"
	printf '%s' "$HOUT" | "$PY" -c 'import json,sys
d=json.load(sys.stdin); print(d[0].get(sys.argv[1], "") if d else "")' "$1"
}

hcount() {
	hist history --json "$WS"
	printf '%s' "$HOUT" | "$PY" -c 'import json,sys; print(len(json.load(sys.stdin)))'
}

check_hrc() { # WHAT EXPECTED
	if [ "$HRC" = "$2" ]; then
		ok "$1: exit $HRC"
	else
		fail "$1: expected exit $2 got $HRC; out: $(head -c 300 <<<"$HOUT"); err: $(head -c 400 <<<"$HERR")"
	fi
}

repo_fixture() {
	ws_fixture
	as_run sh -c "cd '$WS' && git init -q && git add -A && git -c user.name=t \
		-c user.email=t@t commit -qm init" >/dev/null 2>&1 || fail "git init in the workspace"
	as_run setfattr -n user.tag -v keep "$WS/dir/b.txt" 2>/dev/null ||
		echo "# no user xattrs on this file system"
	as_run sh -c "head -c 300000 /dev/urandom >'$WS/big.bin'"
	as_run touch -d @1600000000 "$WS/big.bin" "$WS"
}

# snap without the root's own line: a commit's staging folder comes and
# goes in the root (its times), also when a crash stops it early
snap_nr() { snap "$1" | grep -v '^\. d '; }

CHANGE='rm -rf dir && echo overwritten >a.txt && echo new >n.txt && ln -sfn n.txt link_a &&
chmod 600 tools/good.sh && mv tools/evil.sh tools/renamed.sh &&
dd if=/dev/zero of=big.bin bs=4096 count=1 seek=20 conv=notrunc 2>/dev/null'

body() {
	local before after decoy home now id
	repo_fixture
	before=$(snap "$WS")
	decoy=$(snap "$DECOY_PROJECT")
	home=$(snap "$HOME_DECOY")

	# 1. the commit, and what the history says of it
	run_txfs -- sh -c "$CHANGE"
	check_rc "txfs run after rm -rf, overwrite, rename, patch" 0
	after=$(snap "$WS")
	[ "$before" != "$after" ] || fail "the run changed nothing in the real directory"
	[ "$(cat "$WS/a.txt")" = overwritten ] && [ ! -e "$WS/dir" ] ||
		fail "the commit did not reach the real directory"
	hist history "$WS"
	check_hrc "txfs history" 0
	grep -q 'txfs run: sh -c' <<<"$HOUT" && ok "history names the command that made the commit" ||
		fail "history does not name txfs run's command: $HOUT"
	id=$(hjson id)
	check_eq "history --json: added (n.txt)" 1 "$(hjson added)"
	check_eq "history --json: renamed (tools/evil.sh)" 1 "$(hjson renamed)"
	check_eq "history --json: deleted (dir, dir/b.txt, dir/sub, dir/sub/c.txt)" 4 "$(hjson deleted)"
	check_eq "history --json: modified (a.txt, big.bin, tools/good.sh, tools/, link_a made again)" 5 "$(hjson modified)"
	hist history --paths "$id" "$WS"
	grep -qx 'R tools/evil.sh -> tools/renamed.sh' <<<"$HOUT" && grep -qx 'D dir/b.txt' <<<"$HOUT" &&
		grep -qx 'M a.txt' <<<"$HOUT" && grep -qx 'A n.txt' <<<"$HOUT" &&
		ok "history --paths lists A, M, D and R" || fail "history --paths: $HOUT"
	hist history --deleted "$WS"
	grep -q "^dir/sub/c.txt  (deleted by $id)" <<<"$HOUT" && ok "history --deleted lists what can come back" ||
		fail "history --deleted: $HOUT"

	# 2. undo, byte for byte; and the undo of the undo
	hist undo --dry-run "$WS"
	check_hrc "undo --dry-run" 0
	check_snap "undo --dry-run changes nothing" "$after" "$(snap "$WS")"
	grep -q 'would restore dir/sub/c.txt' <<<"$HOUT" && ok "undo --dry-run says what it would do" ||
		fail "undo --dry-run: $HOUT"
	hist undo "$WS"
	check_hrc "txfs undo" 0
	check_snap "undo: the real directory is byte-identical to before the commit" "$before" "$(snap "$WS")"
	[ "$(getfattr --only-values -n user.tag "$WS/dir/b.txt" 2>/dev/null)" = keep ] ||
		getfattr -n user.tag "$WS/dir/b.txt" >/dev/null 2>&1 || true
	as_run git -C "$WS" fsck --full >/dev/null 2>&1 && ok "git fsck after the undo" || fail "git fsck after the undo"
	check_snap "the decoy project outside is untouched" "$decoy" "$(snap "$DECOY_PROJECT")"
	check_snap "the decoy home is untouched" "$home" "$(snap "$HOME_DECOY")"
	hist undo "$WS"
	check_hrc "undo of the undo" 0
	check_snap "undo of the undo: the committed tree again" "$after" "$(snap "$WS")"

	# 3. restore one path (and its folder), then take the restore back
	hist restore "$WS" dir/b.txt
	check_hrc "txfs restore dir/b.txt" 0
	[ "$(cat "$WS/dir/b.txt" 2>/dev/null)" = bravo ] && [ ! -e "$WS/dir/sub" ] &&
		[ "$(cat "$WS/a.txt")" = overwritten ] && [ -e "$WS/n.txt" ] &&
		ok "restore: dir/b.txt is back, nothing else changed" ||
		fail "restore: $(ls -la "$WS" "$WS/dir" 2>&1 | head -20)"
	now=$(cd "$WS" && find . -path ./dir -prune -o -printf '%p %y %m %s %T@ %l\n' | sort)
	check_snap "restore touched nothing outside dir/" \
		"$(cd "$WS" && find . -path ./dir -prune -o -printf '%p %y %m %s %T@ %l\n' | sort)" "$now"
	hist undo "$WS"
	check_hrc "undo of the restore" 0
	[ ! -e "$WS/dir" ] && ok "undo of the restore: dir/ is gone again" || fail "undo of the restore left $(ls -R "$WS/dir")"

	# 4. a conflict: a committed path changed underneath
	run_txfs -- sh -c 'echo v2 >a.txt'
	check_rc "a second run" 0
	as_run sh -c "echo underneath >'$WS/a.txt'"
	now=$(snap "$WS")
	hist undo "$WS"
	check_hrc "undo with a path changed since" 1
	grep -q 'conflict: a.txt: changed since' <<<"$HERR" && ok "the conflict is listed" ||
		fail "no conflict listed: $HERR"
	check_snap "a refused undo changes nothing" "$now" "$(snap "$WS")"
	hist undo --force "$WS"
	check_hrc "undo --force" 0
	[ "$(cat "$WS/a.txt")" = overwritten ] && ok "undo --force takes the commit back" ||
		fail "undo --force: a.txt is '$(cat "$WS/a.txt")'"

	# 5. on a mount: staged, refused while changes are staged
	now=$(snap "$WS")
	as_run "$TXFS_BIN" mount --state "$STATE" "$WS" || fail "txfs mount"
	as_run sh -c "echo staged >'$WS/s.txt'"
	hist undo "$WS"
	check_hrc "undo on a mount with staged changes" 1
	grep -q 'has staged changes' <<<"$HERR" && ok "refused: the staged changes are named" || fail "$HERR"
	as_run "$TXFS_BIN" rollback "$WS" >/dev/null
	hist undo "$WS"
	check_hrc "undo on a mount: staged" 0
	# the newest record is the forced undo: undoing it puts back what it
	# moved aside, the file changed underneath
	[ "$(as_run cat "$WS/a.txt")" = underneath ] && ok "the mount shows the undo" ||
		fail "the mount shows a.txt '$(as_run cat "$WS/a.txt")'"
	as_run "$TXFS_BIN" umount "$WS" || fail "txfs umount"
	check_snap "the real directory is unchanged until the staged undo is committed" "$now" "$(snap "$WS")"
	as_run "$TXFS_BIN" mount --state "$STATE" "$WS" && as_run "$TXFS_BIN" commit "$WS" >/dev/null &&
		as_run "$TXFS_BIN" umount "$WS" || fail "commit of the staged undo"
	[ "$(cat "$WS/a.txt")" = underneath ] && ok "committed: the undo is real" ||
		fail "after commit a.txt is '$(cat "$WS/a.txt")'"

	# 6. across remounts: two commits through txfs mount, both listed
	local n0
	n0=$(hcount)
	for v in m1 m2; do
		as_run "$TXFS_BIN" mount --state "$STATE" "$WS" && as_run sh -c "echo $v >'$WS/$v.txt'" &&
			as_run "$TXFS_BIN" commit "$WS" >/dev/null && as_run "$TXFS_BIN" umount "$WS" ||
			fail "commit $v through a mount"
	done
	check_eq "history across remounts: two more records" "$((n0 + 2))" "$(hcount)"

	# 6b. on a mount, read right after `txfs commit` answered: the record
	# of a patch has no folder before the answer (the daemon writes it
	# just after; history and undo on a mount wait for it), and it keeps
	# the changed 4 KiB page, not the 64 KiB block around it
	local sum0 bytes
	sum0=$(md5sum <"$WS/big.bin")
	as_run "$TXFS_BIN" mount --state "$STATE" "$WS" || fail "txfs mount"
	n0=$(hcount)
	as_run dd if=/dev/urandom of="$WS/big.bin" bs=4096 count=1 seek=30 conv=notrunc status=none
	as_run "$TXFS_BIN" commit "$WS" >/dev/null || fail "commit of a 4 KiB patch"
	check_eq "on the mount, right after the commit: its record is listed" "$((n0 + 1))" "$(hcount)"
	bytes=$(hjson bytes)
	[ "$bytes" -ge 4096 ] && [ "$bytes" -lt 65536 ] &&
		ok "the record of a 4 KiB patch keeps $bytes bytes (the page and the manifest)" ||
		fail "the record of a 4 KiB patch keeps '$bytes' bytes"
	hist undo "$WS"
	check_hrc "undo of the patch on the mount, right after it" 0
	as_run "$TXFS_BIN" commit "$WS" >/dev/null && as_run "$TXFS_BIN" umount "$WS" ||
		fail "commit of the staged undo of the patch"
	check_eq "after the undo: big.bin as before the patch" "$sum0" "$(md5sum <"$WS/big.bin")"

	# 6c. `txfs undo ID` of an older commit after a newer one was undone:
	# the newer commit and its undo cancel out, neither comes back
	local base2 id1
	base2=$(snap_nr "$WS")
	for v in c1 c2; do
		as_run "$TXFS_BIN" mount --state "$STATE" "$WS" && as_run sh -c "echo $v >'$WS/$v.txt'" &&
			as_run "$TXFS_BIN" commit "$WS" >/dev/null && as_run "$TXFS_BIN" umount "$WS" ||
			fail "commit $v through a mount"
	done
	id1=$(( $(hjson id) - 1 ))
	hist undo "$WS"
	check_hrc "undo of the newest (c2)" 0
	hist undo "$WS" "$id1"
	check_hrc "undo of the one before it (c1), by its id" 0
	[ ! -e "$WS/c1.txt" ] && [ ! -e "$WS/c2.txt" ] &&
		ok "neither c1 nor c2 is back: the undone c2 stays undone" ||
		fail "after undo $id1: c1 '$(cat "$WS/c1.txt" 2>&1)', c2 '$(cat "$WS/c2.txt" 2>&1)'"
	check_snap "the tree before c1 and c2" "$base2" "$(snap_nr "$WS")"
	# ... and after an undo and its undo (a redo): the redo's record holds
	# the old version now, and `undo ID` takes the redo back
	as_run sh -c "echo v0 >'$WS/c3.txt'"
	base2=$(snap_nr "$WS")
	run_txfs -- sh -c 'echo v1 >c3.txt'
	check_rc "a run that rewrites c3.txt" 0
	id1=$(hjson id)
	after=$(snap_nr "$WS")
	hist undo "$WS"
	hist undo "$WS"
	check_snap "undo, then its undo: the commit again" "$after" "$(snap_nr "$WS")"
	hist undo "$WS" "$id1"
	check_hrc "undo $id1 after an undo and a redo" 0
	check_snap "the tree before commit $id1 (c3.txt as it was)" "$base2" "$(snap_nr "$WS")"
	hist undo "$WS"
	check_snap "and its undo: the commit again" "$after" "$(snap_nr "$WS")"
	as_run rm -f "$WS/c3.txt"

	# 6d. a patch that also truncates, one that also extends: undo, redo,
	# undo, redo, byte for byte each time (the redo's record keeps what
	# its truncate drops)
	local m0 m1 k how
	for how in "truncate -s 200000" "head -c 150000 /dev/urandom >>"; do
		as_run sh -c "head -c 300000 /dev/urandom >'$WS/tp.bin'"
		m0=$(md5sum <"$WS/tp.bin")
		as_run "$TXFS_BIN" mount --state "$STATE" "$WS" || fail "txfs mount"
		as_run sh -c "printf T | dd of='$WS/tp.bin' bs=1 seek=100 conv=notrunc 2>/dev/null && $how '$WS/tp.bin'"
		m1=$(as_run sh -c "md5sum <'$WS/tp.bin'")
		as_run "$TXFS_BIN" commit "$WS" >/dev/null && as_run "$TXFS_BIN" umount "$WS" ||
			fail "commit of a patch and '$how'"
		for k in 1 2 3 4; do
			hist undo "$WS"
			if [ $((k % 2)) = 1 ]; then
				check_eq "patch and '$how': undo $k gives the file before" "$m0" "$(md5sum <"$WS/tp.bin")"
			else
				check_eq "patch and '$how': undo $k (a redo) gives the committed file" "$m1" "$(md5sum <"$WS/tp.bin")"
			fi
		done
		as_run rm -f "$WS/tp.bin"
	done

	# 6e. names that are not UTF-8 (latin-1, a stray byte, and the
	# private-use character txfs itself writes such bytes as): kept,
	# listed quoted (text) and with _hex (JSON), undone byte for byte
	local n0b
	as_run sh -c "cd '$WS' && printf old >\"\$(printf 'caf\351')\" && echo keep >precious2"
	base2=$(snap_nr "$WS")
	n0b=$(hcount)
	run_txfs -- sh -c 'rm precious2 && printf x >"$(printf "bad\377")" && printf new >"$(printf "caf\351")" && printf y >"$(printf "esc\364\217\274\200")"'
	check_rc "a run that makes and changes files whose names are not UTF-8" 0
	check_eq "its commit is kept in the history" "$((n0b + 1))" "$(hcount)"
	hist history --paths "$(hjson id)" "$WS"
	grep -qx 'A "bad\\377"' <<<"$HOUT" && grep -qx 'M "caf\\351"' <<<"$HOUT" &&
		ok "history --paths quotes the names as git does" || fail "history --paths: $HOUT"
	hist history --json --paths "$(hjson id)" "$WS"
	grep -q '"path_hex":"626164ff"' <<<"$HOUT" && ok "history --json gives path_hex" ||
		fail "history --json: $HOUT"
	hist undo "$WS"
	check_hrc "undo of that commit" 0
	check_snap "undo: the tree before, names and bytes" "$base2" "$(snap_nr "$WS")"
	as_run sh -c "cd '$WS' && rm -f \"\$(printf 'caf\351')\" precious2"
	# a command line that is not UTF-8 (what made the commit): kept,
	# printed on one line, with via_hex in JSON
	n0b=$(hcount)
	run_txfs -- sh -c 'echo z >z.txt' "$(printf 'x\377')" "$(printf 'a\nb')"
	check_rc "a run whose command line is not UTF-8" 0
	check_eq "its commit is kept in the history" "$((n0b + 1))" "$(hcount)"
	hist history "$WS"
	head -1 <<<"$HOUT" | qgrep 'x\\xff a\\nb' && ok "history prints its command line on one line" ||
		fail "history: $(head -2 <<<"$HOUT")"
	hist history --json "$WS"
	grep -q '"via_hex":"' <<<"$HOUT" && ok "history --json gives via_hex" || fail "history --json: $HOUT"
	as_run rm -f "$WS/z.txt"

	# 6f. restore of a file a commit patched in place, replaced since:
	# refused (its old pages make the old file only out of the one the
	# commit left), nothing changed
	as_run sh -c "head -c 200000 /dev/urandom >'$WS/rp.bin'"
	run_txfs -- sh -c 'printf C1 | dd of=rp.bin bs=1 seek=5000 conv=notrunc 2>/dev/null'
	check_rc "a run that patches rp.bin" 0
	id1=$(hjson id)
	as_run sh -c "head -c 200000 /dev/urandom >'$WS/rp.new' && mv '$WS/rp.new' '$WS/rp.bin'"
	now=$(snap_nr "$WS")
	hist restore --before "$id1" "$WS" rp.bin
	check_hrc "restore of a patched file replaced since" 1
	grep -q 'rp.bin: changed since the commit, which patched it in place' <<<"$HERR" &&
		ok "the conflict says why" || fail "restore: $HERR"
	check_snap "the refused restore changed nothing" "$now" "$(snap_nr "$WS")"
	as_run rm -f "$WS/rp.bin"

	# 6g. folders whose own metadata the commit left alone keep their
	# times through the undo and its undo (their names change: a file
	# rewritten in them is put back)
	as_run sh -c "mkdir -p '$WS/td/te' && echo old >'$WS/td/f' && echo o2 >'$WS/td/te/g' &&
		touch -d 2003-03-03 '$WS/td/te' '$WS/td'"
	base2=$(snap_nr "$WS")
	run_txfs -- sh -c 'echo new >td/f && echo n2 >td/te/g'
	check_rc "a run that rewrites files in old folders" 0
	after=$(snap_nr "$WS")
	hist undo "$WS"
	check_hrc "its undo" 0
	check_snap "undo: the folders' times as before" "$base2" "$(snap_nr "$WS")"
	hist undo "$WS"
	check_snap "the undo of the undo: as committed, folder times too" "$after" "$(snap_nr "$WS")"
	as_run rm -rf "$WS/td"

	# 7. pruning under a small cap keeps only the newest
	hist history --prune --keep 1 --days 1 --max-size 1 "$WS"
	check_hrc "history --prune" 0
	check_eq "after pruning under a 1-byte cap: one record left" 1 "$(hcount)"
	check_unmounted "history scenario"
}

# 8. crashes: at every step of a commit with history, and of an undo
detach() { is_mounted "$WS" && { timeout 10 fusermount3 -uz "$WS" 2>/dev/null || umount -l "$WS"; }; return 0; }

crash_body() {
	local before after n rc steps=0
	for n in $(seq 1 60); do
		repo_fixture
		before=$(snap_nr "$WS")
		run_txfs TXFS_FAULT="commit:$n" -- sh -c "$CHANGE"
		rc=$RC
		detach
		txfs_as recover "$STATE" >/dev/null 2>&1
		if ls "$STATE/history" 2>/dev/null | qgrep pending; then
			fail "commit:$n: a pending record is left after recover"
		fi
		if [ "$(snap_nr "$WS")" = "$before" ]; then
			[ "$(hcount)" = 0 ] || fail "commit:$n: not done, yet a record is kept"
		else
			hist undo "$WS"
			if [ "$HRC" != 0 ] || [ "$(snap_nr "$WS")" != "$before" ]; then
				fail "commit:$n: the commit is done, but its undo does not give the tree back (undo exit $HRC: $HERR)"
			fi
		fi
		steps=$n
		[ "$rc" = 0 ] && break	# the fault did not fire: past the last step
	done
	[ "$steps" -gt 3 ] || fail "the commit crash loop stopped after $steps steps"
	ok "a crash at each of the $((steps - 1)) fault points of a commit: before or after, the record complete"
	# the same for a commit that only patches a file in place, the first
	# of its state folder: its record is lazy (no folder before the
	# answer, not even history/), so a crash leaves it in the layer only
	for n in $(seq 1 40); do
		repo_fixture
		before=$(snap_nr "$WS")
		run_txfs TXFS_FAULT="commit:$n" -- sh -c \
			'printf P | dd of=big.bin bs=1 seek=5000 conv=notrunc 2>/dev/null'
		rc=$RC
		detach
		txfs_as recover "$STATE" >/dev/null 2>&1
		if [ "$(snap_nr "$WS")" = "$before" ]; then
			[ "$(hcount)" = 0 ] || fail "patch commit:$n: not done, yet a record is kept"
		else
			[ "$(hcount)" = 1 ] || fail "patch commit:$n: done, but $(hcount) records kept"
			hist undo "$WS"
			if [ "$HRC" != 0 ] || [ "$(snap_nr "$WS")" != "$before" ]; then
				fail "patch commit:$n: done, but its undo does not give the file back (undo exit $HRC: $HERR)"
			fi
		fi
		steps=$n
		[ "$rc" = 0 ] && break
	done
	[ "$steps" -gt 3 ] || fail "the patch crash loop stopped after $steps steps"
	ok "a crash at each of the $((steps - 1)) fault points of a first, patch-only commit: before or after, the record complete"
	repo_fixture
	before=$(snap_nr "$WS")
	run_txfs -- sh -c "$CHANGE"
	after=$(snap_nr "$WS")
	for n in $(seq 1 80); do
		timeout -k 5 60 "${AS[@]}" env TXFS_FAULT="undo:$n" "$TXFS_BIN" undo \
			--state "$STATE" "$WS" >/dev/null 2>"$T/u.err" </dev/null
		rc=$?
		txfs_as recover "$STATE" >/dev/null 2>&1
		if [ "$(snap_nr "$WS")" != "$before" ]; then
			fail "undo:$n (exit $rc): after the crash and recover the tree is not the one before the commit"
			break
		fi
		hist undo "$WS"	# back to the committed tree for the next round
		if [ "$(snap_nr "$WS")" != "$after" ]; then
			fail "undo:$n: the undo of the recovered undo: $HERR"
			break
		fi
		[ $rc = 99 ] || break
	done
	[ "$n" -gt 3 ] || fail "the undo crash loop stopped after $n steps"
	ok "a crash at each of the $((n - 1)) steps of an undo: recover finishes it"
}

# what an attacker tried (issue 23's review): a hard-linked file's undo,
# a restore through a folder swapped for a symlink, the state in /tmp
attack_body() {
	local out
	# the default policy refuses writes to a real file with more links than
	# the mount knows (guard.c, unknown_links): a policy with no deny
	printf '# no rule denies a write: hard-linked files may be written\n' >"$T/links.policy"
	chmod 644 "$T/links.policy"
	ws_fixture
	as_run sh -c "echo original >'$WS/hl1' && ln '$WS/hl1' '$WS/hl2'"
	run_txfs -- --policy "$T/links.policy" -- sh -c 'echo CHANGED >hl1'
	check_rc "a run that changes a hard-linked file" 0
	hist undo "$WS"
	[ "$(cat "$WS/hl1")" = original ] && [ "$(cat "$WS/hl2")" = original ] &&
		[ "$(stat -c %h "$WS/hl1")" = 2 ] && ok "undo of a hard-linked file: both names, one inode" ||
		fail "undo of a hard-linked file: hl1 '$(cat "$WS/hl1")' hl2 '$(cat "$WS/hl2")'"
	# a read-only hard-linked file made writable and written (CS_COPY
	# before its mode is set): committed whole, as an ordinary user too
	ws_fixture
	as_run sh -c "echo o >'$WS/ro' && chmod 444 '$WS/ro' && ln '$WS/ro' '$WS/ro2'"
	run_txfs -- --policy "$T/links.policy" -- sh -c 'chmod 644 ro && echo new >ro'
	check_rc "a run that writes a 0444 hard-linked file" 0
	grep -q 'not applied' <<<"$ERR" && fail "the commit left a step out: $ERR"
	[ "$(cat "$WS/ro")" = new ] && [ "$(cat "$WS/ro2")" = new ] &&
		ok "both names hold the committed bytes" || fail "ro '$(cat "$WS/ro")' ro2 '$(cat "$WS/ro2")'"
	hist undo "$WS"
	[ "$(cat "$WS/ro2")" = o ] && [ "$(stat -c %a "$WS/ro")" = 444 ] &&
		ok "its undo: the old bytes and mode" || fail "undo: ro2 '$(cat "$WS/ro2")' mode $(stat -c %a "$WS/ro")"
	ws_fixture
	out=$T/out$SEQ && mkdir -p "$out" && as_owner "$out"
	run_txfs -- rm dir/b.txt
	run_txfs -- sh -c "rm -rf dir && ln -s '$out' dir"
	hist restore --before 1 "$WS" dir/b.txt
	check_hrc "restore through a folder now a symlink outside: refused" 1
	grep -q 'a folder on its way is now a symlink' <<<"$HERR" && ok "the conflict says why" || fail "$HERR"
	[ -z "$(ls -A "$out")" ] && ok "nothing written outside" || fail "outside: $(ls -A "$out")"
	as_run "$TXFS_BIN" mount --state "$STATE" "$WS" && as_run "$TXFS_BIN" umount "$WS" &&
		ok "the workspace mounts after the refused restore" || fail "not mountable"
	# the workspace path itself replaced by a symlink to a folder outside
	ws_fixture
	run_txfs -- rm a.txt
	check_rc "a run that deletes a.txt" 0
	out=$T/ws-swap$SEQ && mkdir -p "$out" && as_owner "$out"
	mv "$WS" "$WS.real" && ln -s "$out" "$WS"
	hist undo "$WS"
	check_hrc "undo with the workspace path now a symlink to another folder" 1
	grep -q 'is not the folder the commit changed' <<<"$HERR" && ok "the conflict says why" || fail "$HERR"
	[ -z "$(ls -A "$out")" ] && ok "nothing written into the other folder" || fail "written: $(ls -A "$out")"
	rm "$WS" && mv "$WS.real" "$WS"
	hist undo "$WS"
	check_hrc "the same undo on the workspace itself" 0
	[ -f "$WS/a.txt" ] && ok "a.txt is back" || fail "a.txt not back"
	# a process that had the old file open writes it after the commit
	# replaced it: the undo refuses (what it would put back is not what
	# was there), --force puts back what the old file holds now
	ws_fixture
	exec 7>>"$WS/a.txt"
	run_txfs -- sh -c 'echo new >a.new && mv a.new a.txt'
	check_rc "a run that replaces a.txt by rename" 0
	echo AFTER >&7
	exec 7>&-
	hist undo "$WS"
	check_hrc "undo after the kept old a.txt was written through an open fd" 1
	grep -q 'a.txt: its kept old version was written since the commit' <<<"$HERR" &&
		ok "the conflict says why" || fail "$HERR"
	[ "$(cat "$WS/a.txt")" = new ] && ok "the refused undo changed nothing" || fail "a.txt: $(cat "$WS/a.txt")"
	hist undo --force "$WS"
	check_hrc "undo --force" 0
	[ "$(tail -1 "$WS/a.txt")" = AFTER ] && ok "--force puts back what the old file holds now" ||
		fail "after --force a.txt: $(cat "$WS/a.txt")"
	ws_fixture
	STATE=/tmp/txfs-hist-state.$$
	run_txfs -- true
	check_rc "txfs run with its state folder in /tmp (writable to the command): refused" 2
	[ ! -e /tmp/txfs-hist-state.$$/history ] && ok "nothing was run" || fail "a state was made in /tmp"
	rm -rf /tmp/txfs-hist-state.$$
}

for_each_user body
for_each_user attack_body
as_user root
[ "$(id -u)" = 0 ] && as_user test
echo "# ---- crashes, as $WHO"
crash_body
finish
