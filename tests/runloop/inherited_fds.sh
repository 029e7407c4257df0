#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# inherited_fds - issue 23.1: descriptors the caller had open do not reach
# the command of `txfs run` / `txfs exec` (Landlock checks only new opens).
# As root and as the unprivileged test user, with a victim file outside
# (its bytes compared afterwards) and a workspace whose .env the policy
# hides:
#   - fd 7 appended to the victim (exec 7>>victim): `echo PWN >&7` and
#     ftruncate(7) fail under txfs run, the victim is byte-identical;
#   - fd 1007 on the victim: the same (close_range, not a loop to 1024);
#   - fd 9 a folder descriptor on the real directory, opened before the
#     mount: /proc/self/fd/9/.env and openat(9, ".env") fail, the secret
#     is not in the output, the command sees only descriptors 0, 1, 2;
#   - the same fd 7 and fd 9 through txfs exec on a mounted session;
#   - --pass-fd 7 passes fd 7 (the victim's copy gets the line), --pass-fd
#     on a folder and a folder as standard input are refused, nothing run.
# Unconfined, the same user's shell can use the descriptors (the test
# means something: runuser keeps them).
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"

SECRET='canary-dotenv-secret-23-1'
printf 'hide .env\n' >"$T/hide.policy" && chmod 644 "$T/hide.policy"

# The command's own view: its descriptors (those listdir itself opens aside).
LSFD='import os; print("FDS", sorted(int(f) for f in os.listdir("/proc/self/fd") if os.path.exists("/proc/self/fd/" + f) and int(f) > 2 and not os.readlink("/proc/self/fd/" + f).startswith("/proc")))'
ATTACK='echo PWN >&7 2>/dev/null && echo ESCAPED-write-7
echo PWN >&1007 2>/dev/null && echo ESCAPED-write-1007
"$PY" -c "import os; os.ftruncate(7, 0)" 2>/dev/null && echo ESCAPED-ftruncate-7
cat /proc/self/fd/9/.env 2>/dev/null
"$PY" -c "import os; print(os.read(os.open(\".env\", os.O_RDONLY, dir_fd=9), 100).decode())" 2>/dev/null
cat .env 2>/dev/null
"$PY" -c '"'$LSFD'"'
echo ATTACK-DONE'

# check_attack WHAT FILE: the attack's output in FILE shows nothing got
# through and only 0, 1, 2 were open; the victim is byte-identical.
check_attack() {
	local what="[$WHO] $1" out
	out=$(cat "$2")
	if ! grep -q ATTACK-DONE <<<"$out"; then
		fail "$what: the command did not run: $(head -c 300 "$2") $(head -c 300 "$RUN_ERR" 2>/dev/null)"
	elif grep -q -e ESCAPED -e "$SECRET" <<<"$out"; then
		fail "$what: $(grep -e ESCAPED -e "$SECRET" <<<"$out" | tr '\n' ' ')"
	else
		ok "$what: no write, no ftruncate, no .env through an inherited descriptor"
	fi
	check_eq "$what: the command had only 0, 1, 2" "FDS []" "$(grep '^FDS' <<<"$out")"
	check_eq "$what: the victim outside is byte-identical" "$VICTIM_SUM" "$(sha256sum <"$VICTIM")"
}

body() {
	local out
	ws_fixture
	printf 'SECRET=%s\n' "$SECRET" >"$WS/.env"
	as_owner "$WS/.env"
	VICTIM=$HOME_DECOY/victim.txt
	printf 'victim: do not change\n' >"$VICTIM"
	as_owner "$VICTIM"
	VICTIM_SUM=$(sha256sum <"$VICTIM")

	# Unconfined, the descriptors work for the same user (on a copy).
	cp -p "$VICTIM" "$HOME_DECOY/copy.txt"
	exec 7>>"$HOME_DECOY/copy.txt" 9<"$WS"
	as_run sh -c 'echo unconfined >&7; cat /proc/self/fd/9/.env' >"$T/base.out" 2>&1
	exec 7>&- 9<&-
	if grep -q "$SECRET" "$T/base.out" && grep -q unconfined "$HOME_DECOY/copy.txt"; then
		ok "[$WHO] unconfined, the inherited descriptors write outside and read .env"
	else
		fail "[$WHO] unconfined baseline: $(head -c 200 "$T/base.out")"
	fi

	exec 7>>"$VICTIM" 1007>>"$VICTIM" 9<"$WS"
	run_txfs -- --json --policy "$T/hide.policy" -- bash -c "$ATTACK" >/dev/null
	exec 7>&- 1007>&- 9<&-
	grep -v '^{' "$RUN_OUT" >"$T/attack.out"
	OUT=$(tail -n 1 "$RUN_OUT")
	check_attack "txfs run, fd 7 >> victim, fd 1007 >> victim, fd 9 on the real directory" "$T/attack.out"
	check_eq "[$WHO] ... and txfs run committed" committed "$(jget action)"

	# --pass-fd: passed on request, folders refused.
	cp -p "$VICTIM" "$HOME_DECOY/passed.txt"
	exec 7>>"$HOME_DECOY/passed.txt"
	new_state
	run_txfs -- --json --pass-fd 7 -- bash -c 'echo passed-on-request >&7'
	exec 7>&-
	check_eq "[$WHO] --pass-fd 7: the command wrote through it" "passed-on-request" \
		"$(tail -n 1 "$HOME_DECOY/passed.txt")"
	exec 9<"$WS"
	new_state
	run_txfs -- --json --pass-fd 9 -- bash -c "echo RAN >&2"
	exec 9<&-
	if [ "$RC" = 2 ] && grep -q 'pass-fd 9: refused: it is a folder' "$RUN_ERR" && ! grep -q RAN "$RUN_ERR"; then
		ok "[$WHO] --pass-fd on a folder: refused (exit 2), nothing ran"
	else
		fail "[$WHO] --pass-fd on a folder: exit $RC: $(head -c 300 "$RUN_ERR")"
	fi
	new_state
	(cd "$WS" && timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/bin:/bin HOME="$HOME_DECOY" \
		"$TXFS_BIN" run --state "$STATE" --json -- bash -c 'echo RAN >&2') <"$WS" >"$T/stdin.out" 2>&1
	RC=$?
	if [ "$RC" != 0 ] && grep -q 'standard input is a folder' "$T/stdin.out" && ! grep -q RAN "$T/stdin.out"; then
		ok "[$WHO] a folder as standard input: refused (exit $RC), nothing ran"
	else
		fail "[$WHO] a folder as standard input: exit $RC: $(head -c 300 "$T/stdin.out")"
	fi

	# txfs exec on a mounted session: the same descriptors, fd 9 opened on
	# the real directory before the mount.
	new_state
	exec 7>>"$VICTIM" 1007>>"$VICTIM" 9<"$WS"
	txfs_as mount --state "$STATE" --policy "$T/hide.policy" "$WS" >"$T/mount.out" 2>&1 ||
		{ exec 7>&- 1007>&- 9<&-; fail "[$WHO] txfs mount: $(cat "$T/mount.out")"; return; }
	timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/bin:/bin HOME="$HOME_DECOY" PY="$PY" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
		"$TXFS_BIN" exec --json -- bash -c "$ATTACK" </dev/null >"$T/exec.out" 2>"$T/exec.err"
	exec 7>&- 1007>&- 9<&-
	RUN_ERR=$T/exec.err
	check_attack "txfs exec, the same descriptors" "$T/exec.out"
	txfs_as umount "$WS" >/dev/null 2>&1 || fail "[$WHO] txfs umount $WS"
}

for_each_user body
finish
