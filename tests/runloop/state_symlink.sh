#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# state_symlink - the state folder is compared where it is, not as it is
# named (issue B10): with SX a folder the command may write (--allow-write
# SX, or TMPDIR=SX) and the state folder given through a symlink to SX
# that does not exist yet, `txfs run` used to run and the command planted
# files in the layer. Every form is refused (exit 2, nothing mounted, SX
# byte-identical, no PLANTED anywhere):
#   --state LINK/st (LINK -> SX) with --allow-write SX, and with TMPDIR=SX;
#   a relative chain (CHAIN -> LINK) with ".." inside, --state CHAIN/a/../st;
#   a dangling symlink into SX (DANG -> SX/notyet), --state DANG/st;
#   --allow-write through a symlink to the folder holding the state;
#   a symlink loop in --state (refused: ELOOP);
#   txfs exec with --allow-write, and TMPDIR, through a symlink to the
#   state folder's parent.
# As root and as the unprivileged user.
. "$(dirname "$0")/lib.sh"

require_landlock

# attempt WHAT STATE ENV... -- ARGS: txfs run with --state STATE must be
# refused (exit 2) without running the command.
attempt() {
	local what=$1 st=$2 keep=$STATE
	shift 2
	STATE=$st
	run_txfs "$@" sh -c "mkdir -p '$SX/st/layer'; touch '$SX'/*/layer/PLANTED '$SX/PLANTED'; echo RAN"
	STATE=$keep
	if [ "$RC" = 2 ] && ! grep -q RAN <<<"$OUT"; then
		ok "[$WHO] $what: refused (exit 2): $(head -c 160 <<<"$ERR")"
	else
		fail "[$WHO] $what: expected exit 2 and CMD not run, got $RC: $OUT $ERR"
	fi
	check_unmounted "[$WHO] $what"
	check_snap "[$WHO] $what: SX byte-identical" "$SX_BEFORE" "$(snap "$SX")"
	[ -z "$(find "$T" -name PLANTED 2>/dev/null)" ] || fail "[$WHO] $what: PLANTED: $(find "$T" -name PLANTED)"
}

# exec_try WHAT [ENV=VAL...] -- [EXEC ARGS...]: txfs exec in $WS (mounted)
# must be refused with exit 2, the command not run.
exec_try() {
	local what=$1 envs=() out rc
	shift
	while [ "$1" != -- ]; do envs+=("$1"); shift; done
	shift
	out=$(timeout -k 5 60 "${AS[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin \
		HOME="$HOME_DECOY" "${envs[@]}" sh -c 'cd "$1" && shift && exec "$@"' sh \
		"$WS" "$TXFS_BIN" exec "$@" -- sh -c "touch '$STATE/PLANTED'; echo RAN" 2>&1)
	rc=$?
	if [ "$rc" = 2 ] && ! grep -q RAN <<<"$out"; then
		ok "[$WHO] $what: refused (exit 2): $(head -c 160 <<<"$out")"
	else
		fail "[$WHO] $what: expected exit 2, got $rc: $out"
	fi
}

body() {
	local u=$WHO link chain dang loopa loopb stparent
	ws_fixture
	SEQ=$((SEQ + 1))
	SX=$T/sx$SEQ
	mkdir -p "$SX" && echo keep >"$SX/keep" && as_owner "$SX"
	# names fixed now: run_txfs counts SEQ on
	link=$T/sxlink$SEQ chain=$T/chain$SEQ dang=$T/dang$SEQ
	loopa=$T/loopa$SEQ loopb=$T/loopb$SEQ stparent=$T/stparent$SEQ
	ln -s "$SX" "$link"
	ln -s "$(basename "$link")" "$chain"
	ln -s "$SX/notyet" "$dang"
	ln -s "$loopb" "$loopa" && ln -s "$loopa" "$loopb"
	ln -s "$(dirname "$STATE")" "$stparent"
	SX_BEFORE=$(snap "$SX")

	attempt "--state LINK/st3, --allow-write SX" "$link/st3" -- --allow-write "$SX" --
	attempt "--state LINK/st4, TMPDIR=SX" "$link/st4" TMPDIR="$SX" --
	attempt "--state CHAIN/a/../st5 (relative link chain, ..), --allow-write SX" \
		"$chain/a/../st5" -- --allow-write "$SX" --
	attempt "--state DANG/st6 (dangling link into SX), --allow-write SX" \
		"$dang/st6" -- --allow-write "$SX" --
	attempt "--state through a symlink loop" "$loopa/st7" --
	attempt "--allow-write through a symlink to the state's parent" "$STATE" \
		-- --allow-write "$stparent" --

	# txfs exec: the session's state folder exists; allow-write and TMPDIR
	# through a symlink to its parent are refused (exit 2), CMD not run
	txfs_as mount --state "$STATE" "$WS" >"$T/m.out" 2>&1 ||
		{ fail "[$u] mount: $(cat "$T/m.out")"; return; }
	exec_try "exec --allow-write LINK-to-the-state's-parent" -- --allow-write "$stparent"
	exec_try "exec with TMPDIR=LINK-to-the-state's-parent" TMPDIR="$stparent" --
	txfs_as umount "$WS" >"$T/m.out" 2>&1 || fail "[$u] umount: $(cat "$T/m.out")"
	check_unmounted "[$u] exec"
	[ -e "$STATE/PLANTED" ] && fail "[$u] exec: PLANTED in the state folder"

	# the workspace runs normally afterwards
	run_txfs -- -- sh -c 'echo fine > fine.txt'
	check_eq "[$u] the workspace runs and commits afterwards" "0 fine" "$RC $(cat "$WS/fine.txt" 2>&1)"
}

for_each_user body
finish
