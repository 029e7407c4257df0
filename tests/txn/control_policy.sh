#!/bin/bash
# Control policy: with `control deny commit` in the policy, echo commit >
# .txfs/ctl fails with EPERM (ctl says why, the log has the veto, nothing
# is committed), other verbs still work through ctl, and `txfs commit MNT`
# (the socket, not the mount) commits. With `control deny commit rollback
# savepoint`, each is EPERM through ctl and works through txfs.
. "$(dirname "$0")/txnlib.sh"
fixture
printf '# control_policy\ncontrol deny commit\n' >"$T/ctl.policy"
TXFS_POLICY=$T/ctl.policy
txfs_mount || exit 1
echo staged >"$MNT/new.txt"
check_ctl "commit through the mount under 'control deny commit'" EPERM commit
t 30 bash -c 'echo commit > "$1"' _ "$MNT/$CTL/ctl" 2>/dev/null && fail "echo commit > ctl exited 0 under control deny commit" ||
	ok "echo commit > .txfs/ctl exits non-zero"
case $(ctl_text) in *"refused by the policy"*) ok "ctl says it was refused by the policy" ;;
*) fail "ctl after the refused commit: got '$(ctl_text)'" ;; esac
check_errno_of "nothing was committed" ENOENT stat "$WS/new.txt"
grep -q '"control"' "$MNT/$CTL/log" && ok "the log has the control veto" || fail "no control veto in the log"
check_ctl "savepoint through the mount is still allowed" OK savepoint s
check_ctl "rollback to it too" OK rollback s
check_cli "txfs commit MNT works" 0 commit "$MNT"
check_content "and committed" "$WS/new.txt" staged
txfs_umount || exit 1

printf 'control deny commit rollback savepoint\n' >"$T/ctl2.policy"
TXFS_POLICY=$T/ctl2.policy
txfs_mount || exit 1
echo two >"$MNT/two.txt"
check_ctl "savepoint through the mount" EPERM savepoint s
check_ctl "rollback through the mount" EPERM rollback
check_ctl "commit through the mount" EPERM commit
check_errno_of "the staged file is still there" OK stat "$MNT/two.txt"
check_cli "txfs savepoint MNT" 0 savepoint "$MNT" s
echo three >"$MNT/three.txt"
check_cli "txfs rollback MNT s" 0 rollback "$MNT" s
check_errno_of "the rollback through txfs worked" ENOENT stat "$MNT/three.txt"
check_cli "txfs commit MNT" 0 commit "$MNT"
check_content "committed through txfs" "$WS/two.txt" two
txn_finish
