#!/bin/bash
# The command line contract: --help on every command (exit 0, "usage: txfs
# CMD" on stdout); wrong usage exits 2; a refused or failed operation exits
# 1; success exits 0; every error is "txfs: what: why" on stderr; `txfs
# recover STATE` of a state folder with nothing to recover exits 0 and says
# so, and refuses (exit 1) a state folder whose daemon is running.
. "$(dirname "$0")/txnlib.sh"
fixture
txfs_mount || exit 1

for c in mount umount status diff commit rollback savepoint release log recover policy; do
	check_cli "$c --help" 0 "$c" --help
	case $COUT in *"usage: txfs $c"*) ok "txfs $c --help prints its usage" ;;
	*) fail "txfs $c --help: expected 'usage: txfs $c' on stdout got: $(head -c 200 <<<"$COUT")" ;; esac
done

# check_err: the stderr of the last failing command is "txfs: what: why".
check_err() {
	if [ -n "$CERR" ] && ! grep -q -E '^txfs: .+: .+' <<<"$CERR"; then
		fail "$1: stderr is not 'txfs: what: why': $(head -c 200 <<<"$CERR")"
	else
		ok "$1: stderr 'txfs: ...: ...'"
	fi
}

for args in "status" "status $MNT $MNT" "status --bogus $MNT" "diff" "diff --bogus $MNT" "commit" \
	"commit --bogus $MNT" "rollback" "rollback $MNT a b" "savepoint $MNT" "savepoint" \
	"release $MNT" "log" "log $MNT extra" "recover" "recover a b" "frobnicate"; do
	read -r -a argv <<<"$args"	# the words of the command line
	check_cli "wrong usage" 2 "${argv[@]}"
	check_err "txfs $args"
done

check_cli "status of a folder that is not a mount" 1 status "$WS"
check_err "txfs status WS"
check_cli "rollback to a savepoint that does not exist" 1 rollback "$MNT" nosuch
check_err "txfs rollback MNT nosuch"
check_cli "release of a savepoint that does not exist" 1 release "$MNT" nosuch
check_cli "recover of a missing folder" 1 recover "$T/nowhere"
check_err "txfs recover nowhere"
check_cli "recover of the state of a running daemon" 1 recover "$STATE"
check_err "txfs recover STATE (mounted)"
check_cli "status" 0 status "$MNT"
check_cli "savepoint" 0 savepoint "$MNT" s
check_cli "release" 0 release "$MNT" s
check_cli "diff of nothing" 0 diff "$MNT"
check_eq "diff of nothing prints nothing" "" "$COUT"
check_cli "commit of nothing" 0 commit "$MNT"
check_cli "rollback of nothing" 0 rollback "$MNT"
check_cli "log" 0 log "$MNT"

txfs_umount || exit 1
lst "$WS" -mox >"$T/real.before"
check_cli "recover of a state folder with nothing to recover" 0 recover "$STATE"
case $COUT in *"nothing to recover"*) ok "txfs recover says there is nothing to recover" ;;
*) fail "txfs recover: expected 'nothing to recover' got: $COUT" ;; esac
check_lst "txfs recover with nothing to recover changes nothing" "$WS" "$T/real.before" -mox
txn_finish
