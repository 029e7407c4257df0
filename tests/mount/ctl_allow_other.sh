#!/bin/bash
# Under -o allow_other, the control files that name changed paths
# (status, status.json, changes, log, and ctl, whose outcome can list
# conflicts; state, the state folder) are readable by the mount's owner
# and root only; README and
# policy stay readable by all, and so does the tree by its own modes. Runs
# as root (allow_other without user_allow_other in /etc/fuse.conf) and
# reads as the unprivileged user txfstest.
. "$(dirname "$0")/lib.sh"
is_root || skip "mounting with allow_other for another user's reads needs root here"
TEST_USER=${TXFS_TEST_USER:-txfstest}
id "$TEST_USER" >/dev/null 2>&1 || skip "user $TEST_USER is missing (tests/run creates it)"
command -v setpriv >/dev/null || skip "setpriv (util-linux) is needed"
as_user() { t 30 setpriv --reuid="$TEST_USER" --regid="$TEST_USER" --init-groups -- "$@"; }
fixture
chmod o+x "$T"		# let the test user reach the mount point
txfs_mount -o allow_other || exit 1
echo "secret-change" >"$MNT/changed-secret-name.txt"
t 10 cat "$MNT/.txfs/log" >/dev/null
for f in status status.json changes log ctl state; do
	out=$(as_user cat "$MNT/.txfs/$f" 2>&1)
	case $out in
	*"Permission denied"*) ok "$TEST_USER cannot read .txfs/$f" ;;
	*) fail "$TEST_USER reading .txfs/$f: expected Permission denied got: $(echo "$out" | head -3)" ;;
	esac
	case $out in
	*changed-secret-name*) fail "$TEST_USER saw the changed path in .txfs/$f" ;;
	esac
	check_eq "the owner (root) reads .txfs/$f" 0 "$(t 10 cat "$MNT/.txfs/$f" >/dev/null 2>&1; echo $?)"
done
grep -q "changed-secret-name.txt" "$MNT/.txfs/changes" && ok "the owner sees the change in .txfs/changes" ||
	fail "the owner does not see the change in .txfs/changes"
for f in README policy; do
	check_eq "$TEST_USER reads .txfs/$f" 0 "$(as_user cat "$MNT/.txfs/$f" >/dev/null 2>&1; echo $?)"
done
check_eq "$TEST_USER reads a world-readable file of the tree (allow_other works)" hello "$(as_user cat "$MNT/file.txt" 2>&1)"
check_eq "$TEST_USER cannot write .txfs/ctl" 1 "$(as_user bash -c "echo commit > '$MNT/.txfs/ctl'" >/dev/null 2>&1; echo $?)"
check_eq "nothing was committed" "" "$(ls "$WS/changed-secret-name.txt" 2>/dev/null)"
check_eq "$TEST_USER's ls of .txfs/ shows the names only" 0 "$(as_user ls "$MNT/.txfs" >/dev/null 2>&1; echo $?)"
finish
