#!/bin/bash
# Error messages say what failed and why, with an errno only where errno
# is the cause (issue 23, 4): `txfs rollback MNT --command N` with nothing
# to undo, `txfs diff --command N` of a command that does not exist, the
# commands given a folder that is not a txfs mount (no control folder, or
# one whose status.json is not txfs's), `txfs exec` outside any mount:
# each exits non-zero and its stderr ends without ': No such file or
# directory', ': Input/output error' or ': Success'. An empty savepoint
# name or path is refused, never taken as "everything".
. "$(dirname "$0")/txnlib.sh"

# no_suffix WHAT: CERR (the last cli_run) has no lying errno suffix.
no_suffix() {
	if grep -qE ': (No such file or directory|Input/output error|Success)$' <<<"$CERR"; then
		fail "$1: an errno suffix that is not the cause: $CERR"
	else
		ok "$1: no errno suffix that is not the cause ($(head -c 160 <<<"$CERR"))"
	fi
}

fixture
txfs_mount || exit 1
in_mnt 'echo x > new.txt'
check_cli "rollback --command 99 with nothing to undo fails" 1 rollback "$MNT" --command 99
case $CERR in *"nothing to undo"*) ok "it says nothing to undo" ;; *) fail "rollback --command 99: $CERR" ;; esac
no_suffix "rollback --command 99"
cli_run diff --command 99 "$MNT"
[ "$CRC" != 0 ] && ok "diff --command 99 fails" || fail "diff --command 99 exits 0"
no_suffix "diff --command 99"
txfs_umount || exit 1

# an empty savepoint name or path (an unset variable: "$SP") never widens
# a verb: `txfs rollback MNT ""` is no full rollback, `txfs commit MNT ""`
# no commit of everything, "rollback " written to ctl no full rollback
# (found by an attack, 2026-11-27). Staged: work.txt before savepoint
# sp1, late.txt after it; every attempt must leave both staged.
txfs_mount || exit 1
in_mnt 'echo work > work.txt'
check_ctl "savepoint sp1" OK savepoint sp1
in_mnt 'echo late > late.txt'
staged_both() {
	[ "$(cat "$MNT/work.txt" 2>/dev/null)" = work ] &&
		[ "$(cat "$MNT/late.txt" 2>/dev/null)" = late ] &&
		[ ! -e "$WS/work.txt" ] && [ ! -e "$WS/late.txt" ] &&
		ok "$1: nothing rolled back or committed (both files staged)" ||
		fail "$1: mount: $(ls "$MNT"), real: $(ls "$WS")"
}
for verb in rollback savepoint release commit; do
	cli_run $verb "$MNT" ""
	check_eq "txfs $verb MNT '': refused as wrong usage" 2 "$CRC"
	case $CERR in
	*"$verb: argument 2 is empty (an unset variable?): refused, nothing was done") ok "txfs $verb MNT '': says so" ;;
	*) fail "txfs $verb MNT '': $CERR" ;;
	esac
	staged_both "txfs $verb MNT ''"
done
cli_run commit "$MNT" late.txt ""
check_eq "txfs commit MNT late.txt '': refused" 2 "$CRC"
staged_both "txfs commit MNT late.txt ''"
# an option the command does not take is refused, not ignored (`txfs
# rollback MNT --force` was a full rollback)
for args in "rollback $MNT --force" "rollback $MNT --forc" "rollback $MNT sp1 --json" \
	"savepoint $MNT --stat s2" "release $MNT --since x sp1" "commit --json $MNT" \
	"commit --command 1 $MNT"; do
	# shellcheck disable=SC2086
	cli_run $args
	check_eq "txfs $args: exit 2" 2 "$CRC"
	case $CERR in
	*"is not an option of this command (see --help); nothing was done") ok "txfs $args: says so" ;;
	*) fail "txfs $args: $CERR" ;;
	esac
	staged_both "txfs $args"
done
# a path naming the root ("$DIR/" with DIR unset) or an absolute one
# never widens a partial commit to everything
for p in / // . ./. /late.txt; do
	cli_run commit "$MNT" "$p"
	check_eq "txfs commit MNT '$p': exit 1" 1 "$CRC"
	case $CERR in
	*"commit refused: '$p' "*"; nothing was committed") ok "txfs commit MNT '$p': says why" ;;
	*) fail "txfs commit MNT '$p': $CERR" ;;
	esac
	staged_both "txfs commit MNT '$p'"
done
# after --, a path named --force is a path: no forced commit of everything
cli_run commit "$MNT" -- --force
check_eq "txfs commit MNT -- --force: exit 1 (no staged change there)" 1 "$CRC"
staged_both "txfs commit MNT -- --force"
check_ctl "'rollback ' (a blank after the verb) is refused" EINVAL "rollback "
case $(ctl_text) in
*"savepoint name is empty: nothing was rolled back"*) ok "ctl says the name is empty" ;;
*) fail "ctl after 'rollback ': $(ctl_text)" ;;
esac
staged_both "'rollback ' to ctl"
check_ctl "'rollback' alone still rolls back to nothing staged" OK rollback
[ ! -e "$MNT/work.txt" ] && [ ! -e "$MNT/late.txt" ] && ok "'rollback' alone discarded both" ||
	fail "'rollback' alone: $(ls "$MNT")"
txfs_umount || exit 1

mkdir -p "$T/plain" "$T/fake/.txfs"
echo '{"not": "txfs"}' >"$T/fake/.txfs/status.json"
for cmd in status diff commit rollback; do
	cli_run $cmd "$T/plain"
	check_eq "$cmd of a plain folder: exit 1" 1 "$CRC"
	case $CERR in *"not a txfs mount (no .txfs/status.json)") ok "$cmd of a plain folder: says so" ;; *) fail "$cmd of a plain folder: $CERR" ;; esac
	no_suffix "$cmd of a plain folder"
	cli_run $cmd "$T/fake"
	check_eq "$cmd of a folder with a foreign status.json: exit 1" 1 "$CRC"
	case $CERR in *"not a txfs mount ("*"not txfs's"*) ok "$cmd of a foreign status.json: says so" ;; *) fail "$cmd of a foreign status.json: $CERR" ;; esac
	no_suffix "$cmd of a foreign status.json"
done
# a folder whose .txfs/ names a live session's state folder (a clone's, or
# written to) is no mount: commit, rollback, status, diff, log and history
# never act on that session through it
txfs_mount || exit 1
t 10 bash -c 'echo staged > "$MNT/fk.txt"' || fail "write fk.txt"
mkdir -p "$T/fake2/.txfs"
printf '%s\n' "$STATE" >"$T/fake2/.txfs/state"
printf '{"state":"%s"}\n' "$STATE" >"$T/fake2/.txfs/status.json"
printf '# no rules\n' >"$T/fake2/.txfs/policy"
for cmd in commit rollback status diff log; do
	cli_run $cmd "$T/fake2"
	check_eq "$cmd of a folder naming a live session's state folder: exit 1" 1 "$CRC"
	case $CERR in *"not a txfs mount ("*"not txfs's"*) ok "$cmd of it: not a txfs mount" ;; *) fail "$cmd of it: $CERR" ;; esac
done
[ "$(cat "$MNT/fk.txt" 2>/dev/null)" = staged ] && [ ! -e "$WS/fk.txt" ] &&
	ok "the session's staged change is untouched (neither committed nor rolled back)" ||
	fail "the session's staged change: mount $(cat "$MNT/fk.txt" 2>&1), real $(ls "$WS")"
txfs_umount || exit 1
CERR=$(cd "$T/plain" && t 30 "$TXFS" exec -- true 2>&1 >/dev/null)
case $CERR in *"no txfs mount"*) ok "exec outside a mount says so" ;; *) fail "exec outside a mount: $CERR" ;; esac
no_suffix "exec outside a mount"
# txfs umount says why an unmount failed: fusermount3's own reason (here
# a stand-in on PATH that fails as fusermount3 does without /etc/mtab,
# which a machine booted without systemd may lack), never "busy" when
# nothing is busy. As root, txfs umount needs no fusermount3 at all.
txfs_mount || exit 1
mkdir -p "$T/fakebin"
printf '#!/bin/sh\necho "fusermount3: failed to open /etc/mtab: No such file or directory" >&2\nexit 1\n' >"$T/fakebin/fusermount3"
chmod 755 "$T/fakebin/fusermount3"
PATH="$T/fakebin:$PATH" cli_run umount "$MNT"
if [ "$(id -u)" = 0 ]; then
	check_eq "as root, txfs umount works without fusermount3" 0 "$CRC"
	mountpoint -q "$MNT" && fail "as root: still mounted after txfs umount" ||
		ok "as root: unmounted (umount2, not fusermount3)"
else
	check_eq "fusermount3 failing: txfs umount exits 1" 1 "$CRC"
	case $CERR in
	*"umount $MNT: fusermount3 failed: fusermount3: failed to open /etc/mtab"*) ok "it gives fusermount3's reason ($CERR)" ;;
	*) fail "txfs umount with fusermount3 failing: $CERR" ;;
	esac
	case $CERR in *busy*) fail "it says busy: $CERR" ;; *) ok "it does not say busy" ;; esac
	mountpoint -q "$MNT" && ok "still mounted, the layer kept" || fail "the mount is gone"
	txfs_umount || exit 1
fi
txn_finish
