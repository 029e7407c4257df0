# SPDX-License-Identifier: Apache-2.0
# lib.sh - sourced by the agent scenarios (tests/agent/*.sh): txfs exec,
# the session history, txfs mcp, --allow-write and the shipped hooks.
#
# Builds on tests/runloop/lib.sh (and so tests/confine/lib.sh): $T under
# /var/tmp, ok/fail/finish, for_each_user, $AS, snap/snap_nt, txfs_as,
# the EXIT trap that kills this scenario's daemons and detaches its mounts.
# Adds:
#     git_ws                  # $WS: a git repository with one commit
#     mount_ws                # txfs mount --state $STATE $WS as $AS
#     umount_ws               # txfs umount $WS
#     ag_exec ARGS...         # txfs exec --json ARGS in $WS as $AS, clean
#                             # environment, timeout; RC, OUT, ERR
. "$(dirname "$0")/../runloop/lib.sh"

# A sleep of our own, so that looking for leftovers never sees another
# test's sleep (other suites may run at the same time).
SLEEPER=$T/bin/txfs-agent-sleep-$$
cp "$(command -v sleep)" "$SLEEPER" && chmod 755 "$SLEEPER"

GITC=(git -c user.name=agent -c user.email=agent@example.invalid
	-c init.defaultBranch=main -c commit.gpgsign=false)

git_ws() {
	SEQ=$((SEQ + 1))
	WS=$T/w$SEQ/ws
	HOME_DECOY=$T/w$SEQ/home
	mkdir -p "$WS" "$HOME_DECOY/.ssh"
	echo 'canary: ssh key' >"$HOME_DECOY/.ssh/id_rsa"
	echo 'canary: notes' >"$HOME_DECOY/notes.txt"
	printf '# demo\n' >"$WS/README.md"
	chmod 755 "$T/w$SEQ"
	as_owner "$T/w$SEQ"
	(cd "$WS" && "${AS[@]}" "${GITC[@]}" init -q &&
		"${AS[@]}" "${GITC[@]}" add -A &&
		"${AS[@]}" "${GITC[@]}" commit -qm initial) >/dev/null 2>&1 ||
		fail "git init of the fixture"
	new_state
}

mount_ws() {
	txfs_as mount --state "$STATE" "$@" "$WS" >"$T/mount.out" 2>&1 ||
		fail "txfs mount $WS: $(cat "$T/mount.out")"
}

umount_ws() {
	txfs_as umount "$WS" >/dev/null 2>&1 || fail "txfs umount $WS"
}

# ag_exec ARGS...: txfs exec --json ARGS, as $AS in $WS (a FUSE mount is
# reachable only by its owner: cd as $AS). OUT: the report (the last line
# of stdout), CMDOUT: what CMD printed before it.
ag_exec() {
	SEQ=$((SEQ + 1))
	timeout -k 5 60 "${AS[@]}" env -i \
		PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" LC_ALL=C \
		ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
		sh -c 'cd "$1" && shift && exec "$@"' sh "$WS" \
		"$TXFS_BIN" exec --json "$@" </dev/null >"$T/ex$SEQ.out" 2>"$T/ex$SEQ.err"
	RC=$?
	OUT=$(tail -n 1 "$T/ex$SEQ.out")
	CMDOUT=$(head -n -1 "$T/ex$SEQ.out")
	ERR=$(cat "$T/ex$SEQ.err")
	[ $RC = 124 ] || [ $RC = 137 ] && fail "timeout: txfs exec $*"
	return 0
}
