#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# read_realdir - `txfs exec` on a mount whose real directory is elsewhere
# (txfs mount REAL MNT; cd MNT; txfs exec -- CMD) must not let CMD read
# REAL by its own path, which passes by the policy's hide and deny read
# rules (issue B6). read_attack.py tries REAL in every form: absolute
# path, grep -r, symlinks planted before (in the mount and in /tmp), ".."
# from MNT, openat() from a parent dirfd and from "/", /proc/self/fd of an
# opened dirfd and of an O_PATH fd, /proc/PID/root, cwd and fd of the
# caller, of init and of the daemon (whose cwd and descriptors are on
# REAL), chdir. Nothing leaks; through the mount the policy still hides
# .env and refuses secret.txt; REAL is byte-identical afterwards. (txfs run
# always mounts in place: its real directory is under the mount, and only
# the daemon's descriptors reach it, which read_state tries.) As root and
# as the unprivileged user.
. "$(dirname "$0")/lib.sh"

require_landlock
cp "$(dirname "$0")/read_attack.py" "$T/bin/" && chmod 644 "$T/bin/read_attack.py"

body() {
	local u=$WHO tok=TXFS-REAL-TOKEN-$RANDOM$RANDOM real mnt pol before out rc link=txfs-real-link-$$-$SEQ
	ws_fixture
	SEQ=$((SEQ + 1))
	real=$T/real$SEQ mnt=$T/mnt$SEQ pol=$T/pol-$u
	mkdir -p "$real/src" "$mnt"
	echo "$tok env" >"$real/.env" && echo "$tok deny" >"$real/secret.txt"
	echo "$tok plain" >"$real/secret-token" && echo 'int main(void){return 0;}' >"$real/src/m.c"
	chmod 755 "$real" && as_owner "$real" "$mnt"
	printf 'hide .env*\ndeny read secret.txt\n' >"$pol" && chmod 644 "$pol"
	before=$(snap "$real")
	txfs_as mount --policy "$pol" --state "$STATE" "$real" "$mnt" >"$T/m.out" 2>&1 ||
		{ fail "[$u] mount $real at $mnt: $(cat "$T/m.out")"; return; }
	as_run ln -s "$real" "$mnt/link-in-cwd" && ln -s "$real" "/tmp/${link:?}"
	out=$(timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" LINKNAME="$link" sh -c 'cd "$1" && shift && exec "$@"' sh \
		"$mnt" "$TXFS_BIN" exec -- "$PY" "$T/bin/read_attack.py" "$real" "$tok" \
		"../$(basename "$real")" 2>&1)
	rc=$?
	rm -f "/tmp/${link:?}"
	echo "$out" | sed 's/^/#   /'
	check_eq "[$u] exec on $mnt: the attack script ran" 0 "$rc"
	if [ "$(grep -c ': blocked' <<<"$out")" -lt 15 ]; then
		fail "[$u] the attack did not run"
	elif grep -q LEAK <<<"$out"; then
		fail "[$u] the real directory was read: $(grep LEAK <<<"$out" | head -3)"
	else
		ok "[$u] $(grep -c ': blocked' <<<"$out") forms tried, none read the real directory"
	fi
	grep -q "$tok" <<<"$out" && fail "[$u] the token is in the output"
	grep -q "^symlink link-in-cwd planted before: blocked" <<<"$out" &&
		grep -q "^'..' from the current folder" <<<"$out" &&
		grep -q "^/proc/.*/cwd: blocked" <<<"$out" &&
		ok "[$u] symlink, '..' and /proc forms ran" || fail "[$u] a form is missing"

	# the mount still works, with its policy
	out=$(timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" sh -c 'cd "$1" && "$2" exec -- sh -c "cat secret-token; cat .env secret.txt 2>/dev/null; cc -o /tmp/m-$$ src/m.c && /tmp/m-$$ && rm -f /tmp/m-$$ && echo cc-ok"' sh \
		"$mnt" "$TXFS_BIN" 2>/dev/null)
	check_eq "[$u] through the mount: the plain file reads, .env hidden, secret.txt refused, cc works" \
		"$tok plain cc-ok" "$(echo $out)"

	# another session of the same user: its real directory (mounted
	# elsewhere) is hidden from this session's commands too (its state
	# folder is hidden where it is a default one: read_state)
	local real2=$T/other$SEQ mnt2=$T/omnt$SEQ st2=$T/ostate$SEQ
	mkdir -p "$real2" "$mnt2" "$st2" && echo "$tok other-env" >"$real2/.env" &&
		echo "$tok other-old" >"$real2/old.txt" && as_owner "$real2" "$mnt2" "$st2"
	txfs_as mount --policy "$pol" --state "$st2" "$real2" "$mnt2" >"$T/m2.out" 2>&1 ||
		fail "[$u] mount the other session: $(cat "$T/m2.out")"
	as_run sh -c 'echo new > "$1/old.txt"' sh "$mnt2"
	txfs_as commit "$mnt2" >/dev/null 2>&1 || fail "[$u] commit in the other session"
	out=$(timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" sh -c 'cd "$1" && "$2" exec -- sh -c "cat $3/.env $3/old.txt; grep -ra TXFS $3" 2>&1' sh \
		"$mnt" "$TXFS_BIN" "$real2")
	grep -q "$tok" <<<"$out" && fail "[$u] exec read the other session: $(grep "$tok" <<<"$out" | head -2)" ||
		ok "[$u] exec cannot read another session's real directory"
	txfs_as umount "$mnt2" >/dev/null 2>&1 || fail "[$u] umount the other session"
	txfs_as rollback "$mnt" >/dev/null 2>&1
	txfs_as umount "$mnt" >"$T/m.out" 2>&1 || fail "[$u] umount $mnt: $(cat "$T/m.out")"
	is_mounted "$mnt" && fail "[$u] $mnt still mounted" || ok "[$u] $mnt unmounted"
	check_snap "[$u] the real directory is byte-identical" "$before" "$(snap "$real")"
}

for_each_user body
finish
