#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Reloading the policy: SIGHUP to the daemon and `txfs policy reload MNT`
# put the edited file in force at once, also for names the kernel has
# already cached (a newly hidden name disappears, a no longer hidden one
# appears). A broken edit keeps the old policy: `txfs policy reload` exits 1
# with FILE:LINE:COL, SIGHUP changes nothing, and a mount with a broken
# file is refused.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

fixture
for f in a b c h1 h2; do echo "$f" >"$WS/$f.txt"; done
use_policy reload <<'EOF'
# v1
deny write a.txt
hide h1.txt
EOF
P=$TXFS_POLICY
txfs_mount || exit 1
# the kernel caches what the agent has seen
in_mnt 'ls -A >/dev/null; cat h2.txt >/dev/null; stat h1.txt' >/dev/null 2>&1
py "v1: a.txt is not writable" EACCES write a.txt x
py "v1: h1.txt is hidden" ENOENT stat h1.txt
py "v1: h2.txt is visible" ok stat h2.txt

cat >"$P" <<'EOF'
# v2
deny write b.txt
hide h2.txt
EOF
kill -HUP "$(daemon_pid)" || fail "kill -HUP the daemon"
wait_log policy-reload 1 && ok "SIGHUP: a policy-reload event in the log" ||
	fail "SIGHUP: expected a policy-reload event in .txfs/log within 10 s"
check_eq "SIGHUP: .txfs/policy is the edited file" "$(cat "$P")" "$(cat "$MNT/.txfs/policy")"
py "SIGHUP: a.txt is writable now" ok write a.txt x
py "SIGHUP: b.txt is not writable now" EACCES write b.txt x
log_veto "SIGHUP: the veto names the new rule" write b.txt 2
py "SIGHUP: h2.txt (cached) is hidden now: lookup" ENOENT stat h2.txt
py "SIGHUP: h2.txt (cached) is hidden now: read" ENOENT read h2.txt
check_eq "SIGHUP: h2.txt (cached) is hidden now: ls omits it" "" "$(in_mnt 'ls -A' | grep -x h2.txt)"
py "SIGHUP: h1.txt (cached as missing) is visible now" ok stat h1.txt
check_eq "SIGHUP: h1.txt is readable now" "h1" "$(cd "$MNT" && cat h1.txt 2>&1)"
check_eq "SIGHUP: ls shows h1.txt" "h1.txt" "$(in_mnt 'ls -A' | grep -x h1.txt)"

cat >"$P" <<'EOF'
# v3
deny write c.txt
EOF
out=$(t 30 "$TXFS" policy reload "$MNT" 2>&1)
rc=$?
check_eq "txfs policy reload MNT: exit 0 ($out)" 0 "$rc"
check_eq "reload: .txfs/policy is v3" "$(cat "$P")" "$(cat "$MNT/.txfs/policy")"
py "reload: b.txt is writable now" ok write b.txt x
py "reload: c.txt is not writable now" EACCES write c.txt x
py "reload: h2.txt is visible again" ok stat h2.txt

cp "$P" "$T/v3.policy"
printf '# v4, broken\ndeny write\nhide c.txt\nlimit bytes 5MB\n' >"$P"
out=$(t 30 "$TXFS" policy reload "$MNT" 2>"$T/reload.err")
rc=$?
err=$(cat "$T/reload.err")
check_eq "broken file: txfs policy reload exits 1" 1 "$rc"
grep -q "^$P:2:[0-9][0-9]*: " <<<"$err" && ok "broken file: FILE:LINE:COL on stderr ($(grep -m1 "^$P:" "$T/reload.err"))" ||
	fail "broken file: expected '$P:2:COL: ...' on stderr got: $err"
grep -q "^$P:4:[0-9][0-9]*: " <<<"$err" && ok "broken file: every mistake reported (line 4 too)" ||
	fail "broken file: expected '$P:4:COL: ...' (5MB) on stderr got: $err"
check_eq "broken file: .txfs/policy is still v3" "$(cat "$T/v3.policy")" "$(cat "$MNT/.txfs/policy")"
py "broken file: c.txt still not writable" EACCES write c.txt x
py "broken file: c.txt not hidden (no part applied)" ok stat c.txt
n=$(log_count policy-reload)
kill -HUP "$(daemon_pid)" || fail "kill -HUP the daemon"
sleep 1
check_eq "broken file + SIGHUP: .txfs/policy is still v3" "$(cat "$T/v3.policy")" "$(cat "$MNT/.txfs/policy")"
py "broken file + SIGHUP: c.txt still not writable" EACCES write c.txt x
py "broken file + SIGHUP: c.txt not hidden" ok stat c.txt
check_eq "broken file + SIGHUP: no policy-reload event" "$n" "$(log_count policy-reload)"
check_eq "the daemon is still there" yes "$([ -n "$(daemon_pid)" ] && echo yes || echo no)"

# a mount with a broken policy is refused as a whole
mkdir -p "$T/mnt2"
txfs_mount --expect-fail --state "$T/state2" --mnt "$T/mnt2"
check_eq "mount with a broken policy: exit 1" 1 "$RC"
grep -q "$P:2:[0-9][0-9]*: " <<<"$ERR" && ok "mount with a broken policy: FILE:LINE:COL" ||
	fail "mount with a broken policy: expected '$P:2:COL: ...' got: $ERR"
check_eq "mount with a broken policy: not mounted" "" "$(fstype_of "$T/mnt2")"

echo rollback >"$MNT/.txfs/ctl" || fail "rollback"
finish
