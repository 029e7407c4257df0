#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# read_state - the confined command of `txfs run` and of `txfs exec`
# cannot read the state folder (issue B5: its history holds pre-images of
# hidden and read-denied files, its layer the staged contents, audit.log
# every path). A token planted in the state folder, and the workspace's
# hidden .env and read-denied secret.txt, are tried by read_attack.py in
# every form: absolute path, grep -r, a symlink planted before the run (in
# the workspace and in /tmp), ".." from the workspace, openat() from a
# parent dirfd and from "/", /proc/self/fd/N of an opened dirfd and of an
# O_PATH fd, /proc/PID/root, cwd and fd of the caller, of init and of the
# daemon, chdir. Nothing leaks (EACCES as the test user, an empty folder
# as root); the token file is intact, the workspace mounts again. As root
# and as the unprivileged user.
. "$(dirname "$0")/lib.sh"

require_landlock
cp "$(dirname "$0")/read_attack.py" "$T/bin/" && chmod 644 "$T/bin/read_attack.py"

# check_attack WHAT OUTPUT TOKEN...: no form leaked, no token in OUTPUT,
# and the forms that must be there were tried.
check_attack() {
	local what=$1 out=$2 tok
	shift 2
	echo "$out" | sed 's/^/#   /'
	if [ "$(grep -c ': blocked' <<<"$out")" -lt 15 ]; then
		fail "$what: the attack did not run: $out"
	elif grep -q LEAK <<<"$out"; then
		fail "$what: $(grep LEAK <<<"$out" | head -3)"
	else
		ok "$what: $(grep -c blocked <<<"$out") forms tried, none read the folder"
	fi
	for tok in "$@"; do
		grep -q "$tok" <<<"$out" && fail "$what: the token $tok is in the output"
	done
	grep -q '^listing by absolute path: blocked' <<<"$out" &&
		grep -q "^symlink /tmp/.* planted before: blocked" <<<"$out" &&
		grep -q "^symlink link-in-cwd planted before: blocked" <<<"$out" &&
		grep -q "^'..' from the current folder" <<<"$out" &&
		grep -q "^/proc/.*/root.*: blocked" <<<"$out" &&
		ok "$what: absolute, symlink, '..', /proc forms all ran" ||
		fail "$what: a form is missing: $out"
}

body() {
	local u=$WHO tok=TXFS-STATE-TOKEN-$RANDOM$RANDOM env=TXFS-ENV-$RANDOM$RANDOM
	local deny=TXFS-DENY-$RANDOM$RANDOM link=txfs-read-link-$$-$SEQ rel sum out rc pol
	ws_fixture
	echo "$env" >"$WS/.env" && echo "$deny" >"$WS/secret.txt" && as_owner "$WS"
	pol=$T/pol-$u
	printf 'hide .env*\ndeny read secret.txt\n' >"$pol" && chmod 644 "$pol"
	run_txfs -- --policy "$pol" -- sh -c 'echo changed > a.txt; cat .env secret.txt 2>/dev/null; true'
	check_rc "[$u] a first run (the state folder gets a history)" 0
	grep -q -e "$env" -e "$deny" <<<"$OUT" && fail "[$u] the policy let the secrets through"
	echo "$tok $env $deny" >"$STATE/secret-token" && as_owner "$STATE"
	sum=$(sha256sum "$STATE/secret-token")
	ln -s "$STATE" "$WS/link-in-cwd" && ln -s "$STATE" "/tmp/${link:?}"
	rel=../../$(basename "$STATE")
	[ "$(cd "$WS" && cd "$rel" && pwd)" = "$STATE" ] || fail "[$u] the test's '..' path"

	run_txfs LINKNAME="$link" -- --policy "$pol" -- \
		"$PY" "$T/bin/read_attack.py" "$STATE" "$tok" "$rel"
	check_rc "[$u] run: the attack script ran" 0
	check_attack "[$u] run" "$OUT$ERR" "$tok" "$env" "$deny"
	check_unmounted "[$u] run"
	check_eq "[$u] run: the token file is intact" "$sum" "$(sha256sum "$STATE/secret-token")"

	# txfs exec, on the workspace mounted in place
	txfs_as mount --policy "$pol" --state "$STATE" "$WS" >"$T/m.out" 2>&1 ||
		{ fail "[$u] mount for exec: $(cat "$T/m.out")"; rm -f "/tmp/${link:?}"; return; }
	out=$(timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" LINKNAME="$link" sh -c 'cd "$1" && shift && exec "$@"' sh \
		"$WS" "$TXFS_BIN" exec -- "$PY" "$T/bin/read_attack.py" "$STATE" "$tok" "$rel" 2>&1)
	rc=$?
	check_eq "[$u] exec: the attack script ran" 0 "$rc"
	check_attack "[$u] exec" "$out" "$tok" "$env" "$deny"
	check_eq "[$u] exec: hidden .env stays hidden in the mount" "" \
		"$(as_run cat "$WS/.env" 2>/dev/null)"
	txfs_as rollback "$WS" >/dev/null 2>&1
	txfs_as umount "$WS" >"$T/m.out" 2>&1 || fail "[$u] umount after exec: $(cat "$T/m.out")"
	check_unmounted "[$u] exec"
	check_eq "[$u] exec: the token file is intact" "$sum" "$(sha256sum "$STATE/secret-token")"
	rm -f "/tmp/${link:?}"

	# the workspace still mounts, with what the first run committed
	run_txfs -- --policy "$pol" -- cat a.txt
	check_eq "[$u] the workspace runs again afterwards" "0 changed" "$RC $OUT"
	check_eq "[$u] the real .env is untouched" "$env" "$(cat "$WS/.env")"
}

for_each_user body
finish
