#!/bin/bash
# Commits while the real directory changes underneath, in ways a step
# relies on (issue 23, 1): folders the staged changes go into swapped for
# symlinks to a folder outside the workspace, replaced by files, or
# removed; and the same changes made after the commit point, between a
# crash (TXFS_FAULT) and the recovery. Staged: a new file in a real
# folder (src/newfile.c), a new folder tree (nd/sub/x), a rewritten file
# elsewhere (keep/k.txt). Each time:
#  - nothing outside the workspace changes (a decoy folder, hashed: the
#    symlinks point at it);
#  - `txfs commit` (no --force) refuses and changes nothing;
#  - `txfs commit --force` exits 0, commits what it can (keep/k.txt) and
#    reports each staged change it left, as the real directory has it;
#  - after a crash past the commit point, and a crash of the first
#    recovery (TXFS_FAULT=recover:6), `txfs recover` terminates with exit
#    0 and a true report (completed, naming what it could not apply);
#  - no .txfs.staging is left, the workspace mounts again, nothing staged.
. "$(dirname "$0")/txnlib.sh"

DECOY=$T/decoy
mkdir -p "$DECOY/sub"
echo decoy >"$DECOY/d.txt"
echo decoy2 >"$DECOY/sub/x"
decoy_hash() { (cd "$DECOY" && find . -printf '%p %y %m %s %T@\n' | sort && find . -type f -exec cat {} +) | sha256sum; }
DECOY0=$(decoy_hash)

CRASH_TPL=$T/tpl
mkdir -p "$CRASH_TPL/src" "$CRASH_TPL/keep"
echo 'int a;' >"$CRASH_TPL/src/a.c"
echo old >"$CRASH_TPL/keep/k.txt"
STEP='echo "int n;" > src/newfile.c; mkdir -p nd/sub; echo x > nd/sub/x; echo new > keep/k.txt'

n=0
# setup: a fresh copy, mounted, the change staged. Sets W S M.
setup() {
	n=$((n + 1))
	W=$T/u$n/ws S=$T/u$n/state M=$T/u$n/mnt
	mkdir -p "$M"
	cp -a "$CRASH_TPL" "$W"
	crash_mount "${1:-}" || return 1
	(cd "$M" && t 30 bash -c "set -e; $STEP") || { fail "$n: the change in the mount failed"; return 1; }
}

# underneath HOW: change the real directory W.
underneath() {
	case $1 in
	symlink) mv "$W/src" "$T/u$n/src.moved" && ln -s "$DECOY" "$W/src" && ln -s "$DECOY" "$W/nd" ;;
	file) rm -r "$W/src" && echo file >"$W/src" && echo file >"$W/nd" ;;
	removed) rm -r "$W/src" ;;
	esac
}

# after NAME: the common checks once the commit or recovery is over.
after() {
	local name=$1
	check_eq "$name: the decoy outside the workspace is unchanged" "$DECOY0" "$(decoy_hash)"
	[ -e "$W/.txfs.staging" ] && fail "$name: .txfs.staging left in the real directory: $(ls -la "$W/.txfs.staging" | head -5)" ||
		ok "$name: no .txfs.staging left"
	check_eq "$name: keep/k.txt committed" new "$(cat "$W/keep/k.txt" 2>&1)"
	cli_run recover "$S"
	check_eq "$name: txfs recover exits 0" 0 "$CRC"
	case $COUT in
	"nothing to recover"*) ok "$name: txfs recover: nothing left to recover" ;;
	*) fail "$name: txfs recover after the end: '$COUT' '$CERR'" ;;
	esac
	crash_mount "" --expect-fail
	if [ "$RC" = 0 ] && is_mounted "$M"; then
		ok "$name: the workspace mounts again"
		check_eq "$name: nothing staged" "" "$(t 30 cat "$M/$CTL/changes")"
		txfs_umount "$M" "$S"
	else
		fail "$name: the workspace does not mount again: $RC: $ERR"
	fi
	force_detach "$M" "$S"
}

# A change underneath before the commit: refused, then forced.
forced() {
	local how=$1 name="underneath ($1) before the commit"
	setup || return 1
	underneath "$how" || { fail "$name: the change underneath failed"; return 1; }
	lst "$W" -mox >"$T/u$n.real"
	check_cli "$name: txfs commit refuses" 1 commit "$M"
	[ -n "${TXFS_SHOW:-}" ] && printf '%s\n' "$CERR"
	check_lst "$name: the real directory is unchanged by the refused commit" "$W" "$T/u$n.real" -mox
	[ -e "$W/.txfs.staging" ] && fail "$name: .txfs.staging left after the refused commit"
	check_cli "$name: txfs commit --force" 0 commit --force "$M"
	[ -n "${TXFS_SHOW:-}" ] && printf "%s\n%s\n" "$COUT" "$CERR"
	case $COUT in
	*"forced past conflicts"*src*"left as it is there"*) ok "$name: the report names src as left" ;;
	*) fail "$name: the report should name src as left as the real directory has it: $COUT" ;;
	esac
	case $COUT in *kept*) fail "$name: the report says kept: $COUT" ;; esac
	[ "$how" = removed ] || case $COUT in
	*nd*) ok "$name: the report names nd" ;;
	*) fail "$name: the report should name nd: $COUT" ;;
	esac
	[ "$how" = symlink ] && { [ "$(readlink "$W/src")" = "$DECOY" ] && [ "$(readlink "$W/nd")" = "$DECOY" ]; } &&
		ok "$name: src and nd are still the symlinks" ||
		{ [ "$how" = symlink ] && fail "$name: src or nd are not the symlinks any more"; }
	[ "$how" = file ] && check_eq "$name: src and nd are still the files" "file file" "$(cat "$W/src") $(cat "$W/nd")"
	[ "$how" = removed ] && { [ -e "$W/src" ] && fail "$name: src came back" || ok "$name: src stays removed"; }
	txfs_umount "$M" "$S"
	after "$name"
}

# A change underneath after the commit point (the daemon killed right
# after it by TXFS_FAULT): the recovery applies what it can.
crashed() {
	local how=$1 name="underneath ($1) after the commit point" r
	# fault points: one per staged file (3), one before the journal, one
	# right after the commit point
	setup commit:5 || return 1
	r=$(ctl_errno --mnt "$M" commit)
	crash_wait_dead || { fail "$name: the daemon did not die at commit:5 ($r)"; return 1; }
	force_detach "$M" "$S"
	underneath "$how" || { fail "$name: the change underneath failed"; return 1; }
	# a crash of the recovery itself, a few steps on (past the steps
	# that cannot apply): the next recovery still ends
	TXFS_FAULT=recover:6 cli_run recover "$S"
	check_eq "$name: a recovery stopped by TXFS_FAULT=recover:6 dies ($CERR)" 99 "$CRC"
	cli_run recover "$S"
	check_eq "$name: txfs recover exits 0 ($CERR)" 0 "$CRC"
	[ -n "${TXFS_SHOW:-}" ] && printf '%s\n' "$COUT"
	case $COUT in
	*"passed its commit point"*"not applied"*src*) ok "$name: the report says completed and names src as not applied" ;;
	*) fail "$name: txfs recover should report completion and src not applied: $COUT" ;;
	esac
	[ "$how" = symlink ] && { [ "$(readlink "$W/src")" = "$DECOY" ] && [ "$(readlink "$W/nd")" = "$DECOY" ]; } &&
		ok "$name: src and nd are still the symlinks" ||
		{ [ "$how" = symlink ] && fail "$name: src or nd are not the symlinks any more"; }
	[ "$how" = removed ] && check_eq "$name: nd/sub/x committed" x "$(cat "$W/nd/sub/x" 2>&1)"
	after "$name"
}

for how in symlink file removed; do
	forced $how
	crashed $how
done
txn_finish
