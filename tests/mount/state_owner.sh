#!/bin/bash
# A state folder another user could tamper with is refused at mount, with a
# clear message, nothing mounted and nothing written into it (issue 9,
# point 8): a symlink as the state folder; group- or world-writable; (as
# root) owned by another user, under a folder owned by another user, or
# reached through a symlink owned by another user. And the client checks
# who serves ctl.sock: (as root) a fake ctl.sock served by another uid and
# swapped in for the daemon's is refused by `txfs commit` and `txfs status`
# (nonzero exit, a message naming the uid) and nothing is committed.
. "$(dirname "$0")/lib.sh"
fixture
OTHER=${TXFS_TEST_USER:-txfstest}

refused() { # WHAT DIR
	local what=$1 dir=$2
	txfs_mount --state "$dir" --expect-fail
	check_eq "$what: txfs mount exits 1" 1 "$RC"
	if grep -Eq '^txfs: state folder .*: refused: .+' <<<"$ERR"; then ok "$what: message '$ERR'"; else
		fail "$what: expected 'txfs: state folder DIR: refused: why' got '$ERR'"; fi
	check_eq "$what: nothing mounted" "" "$(fstype_of "$MNT")"
	check_eq "$what: nothing written into the folder" "" "$(ls -A "$(readlink -f "$dir")" 2>/dev/null)"
}

mkdir -m 700 "$T/real-state"
ln -s "$T/real-state" "$T/link-state"
refused "a symlink as the state folder" "$T/link-state"
mkdir -m 770 "$T/group-state"; chmod 770 "$T/group-state"
refused "a group-writable state folder" "$T/group-state"
mkdir -m 777 "$T/world-state"; chmod 777 "$T/world-state"
refused "a world-writable state folder" "$T/world-state"
mkdir -m 777 "$T/open-parent"; chmod 777 "$T/open-parent"
refused "a state folder under a world-writable folder (no sticky bit)" "$T/open-parent/state"

if is_root && id "$OTHER" >/dev/null 2>&1; then
	mkdir -m 700 "$T/theirs"; chown "$OTHER" "$T/theirs"
	refused "a state folder owned by $OTHER" "$T/theirs"
	mkdir -m 755 "$T/their-parent"; chown "$OTHER" "$T/their-parent"
	refused "a state folder under a folder owned by $OTHER" "$T/their-parent/state"
	mkdir -m 700 "$T/mine"
	ln -s "$T/mine" "$T/their-link"; chown -h "$OTHER" "$T/their-link"
	refused "a state folder reached through a symlink owned by $OTHER" "$T/their-link/."
else
	echo "# not root: the cases that need another user's files are not run"
fi

# the good folder still works
txfs_mount || exit 1
t 10 bash -c 'echo staged > "$MNT/staged.txt"' || fail "write failed"

if is_root && id "$OTHER" >/dev/null 2>&1; then
	F=$(mktemp -d /tmp/txfs-fake-ctl.XXXXXX) && chmod 777 "$F"
	timeout -k 2 30 runuser -u "$OTHER" -- python3 -c 'import os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind(sys.argv[1]); os.chmod(sys.argv[1], 0o777); s.listen(8)
open(sys.argv[2], "w").close()
while True:
    c, _ = s.accept()
    try:
        c.recv(4096)
        c.sendall(b"0\ncommitted transaction 1: everything is fine\n")
    except OSError:
        pass
    c.close()' "$F/ctl.sock" "$F/ready" &
	FAKE=$!
	for _ in $(seq 100); do [ -e "$F/ready" ] && break; sleep 0.05; done
	mv -f "$F/ctl.sock" "$STATE/ctl.sock" || fail "could not swap in the fake ctl.sock"
	for verb in commit status; do
		t 20 "$TXFS" "$verb" "$MNT" >"$T/c.out" 2>&1
		rc=$?
		[ $rc != 0 ] && ok "txfs $verb with a fake ctl.sock of $OTHER: exit $rc" ||
			fail "txfs $verb with a fake ctl.sock of $OTHER: expected nonzero exit got 0: $(cat "$T/c.out")"
		grep -q "served by uid $(id -u "$OTHER")" "$T/c.out" && ok "txfs $verb: says who serves it: $(head -n 1 "$T/c.out")" ||
			fail "txfs $verb: expected a message naming uid $(id -u "$OTHER") got: $(cat "$T/c.out")"
		grep -q committed "$T/c.out" && fail "txfs $verb printed the fake answer"
	done
	[ -e "$WS/staged.txt" ] && fail "staged.txt reached the real directory" || ok "nothing was committed"
	kill "$FAKE" 2>/dev/null
	wait "$FAKE" 2>/dev/null
	rm -rf "$F"
fi
check_content "the staged file is still staged" "$MNT/staged.txt" staged
finish
