#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_passfd - a connection to the mount's daemon made before txfs exec
# started (its peer, for the daemon, is txfs exec itself) must not reach
# the command through --pass-fd: the command would commit the session
# through it (attacker round 2 of issue 23). txfs exec refuses it (exit 2,
# says why) whatever the descriptor's number, on a --no-ctl-verbs mount
# and a plain one; nothing is committed; an ordinary descriptor still
# passes. As root and as the test user.
. "$(dirname "$0")/lib.sh"

body() {
	local real mnt before rc opt fd
	ws_fixture
	real=$T/real$SEQ mnt=$T/mnt$SEQ
	SEQ=$((SEQ + 1))
	mkdir -p "$real" "$mnt" && echo a >"$real/a.txt" && as_owner "$real" "$mnt"
	before=$(snap "$real")
	for opt in --no-ctl-verbs ""; do
		new_state
		txfs_as mount $opt --state "$STATE" "$real" "$mnt" >/dev/null 2>&1 || { fail "mount $real"; return; }
		as_run sh -c 'echo STAGED > "$1/agent.txt"' sh "$mnt"
		for fd in 5 9 42; do
			timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" \
				"$PY" - "$STATE/ctl.sock" "$TXFS_BIN" "$mnt" "$fd" >"$T/o" 2>"$T/e" <<'P'
import os, socket, sys
sock, txfs, mnt, fd = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
s = socket.socket(socket.AF_UNIX); s.connect(sock)
os.dup2(s.fileno(), fd); os.set_inheritable(fd, True); os.chdir(mnt)
os.execv(txfs, ["txfs", "exec", "--pass-fd", str(fd), "--", sys.executable, "-c",
    "import os; os.write(%d, b'commit\\0\\0'); print(os.read(%d, 4000))" % (fd, fd)])
P
			rc=$?
			[ "$rc" = 2 ] && grep -q "a connection to the mount's daemon cannot be passed" "$T/e" &&
				ok "[$WHO] ${opt:-plain}: --pass-fd $fd of a daemon connection refused (exit 2)" ||
				fail "[$WHO] ${opt:-plain}: --pass-fd $fd: exit $rc: $(cat "$T/o" "$T/e" | head -c 300)"
		done
		echo ordinary >"$T/fd.txt" && chmod 644 "$T/fd.txt"
		out=$(timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" \
			sh -c 'cd "$1" && exec 7<"$2" && "$3" exec --pass-fd 7 -- sh -c "cat <&7"' sh "$mnt" "$T/fd.txt" "$TXFS_BIN" 2>/dev/null)
		check_eq "[$WHO] ${opt:-plain}: an ordinary --pass-fd still passes" ordinary "$out"
		txfs_as rollback "$mnt" >/dev/null 2>&1
		txfs_as umount "$mnt" >/dev/null 2>&1 || fail "umount $mnt"
		check_snap "[$WHO] ${opt:-plain}: nothing was committed" "$before" "$(snap "$real")"
	done
}

for_each_user body
finish
