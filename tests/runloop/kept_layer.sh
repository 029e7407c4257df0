#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# kept_layer - `txfs run` starts from a clean transaction (issue 23, 3): a
# change staged by an earlier `txfs mount` / `txfs umount` is kept in the
# state folder; `txfs run -- false` and `txfs run -- true` both refuse
# (exit 125, CMD not run, the message names the commands to commit or roll
# the kept layer back), the real directory stays byte-identical, the kept
# layer intact (mounted again it shows the same change); once it is rolled
# back, `txfs run -- true` runs. As root and as the unprivileged user.
. "$(dirname "$0")/lib.sh"

require_landlock

body() {
	local u=$WHO before changes
	ws_fixture
	before=$(snap "$WS")
	txfs_as mount --state "$STATE" "$WS" >"$T/cmd.out" 2>&1 ||
		{ fail "[$u] txfs mount: $(cat "$T/cmd.out")"; return; }
	as_run bash -c "echo staged > '$WS/staged.txt'" || fail "[$u] a change in the mount"
	changes=$(as_run cat "$WS/.txfs/changes")
	check_eq "[$u] the change is staged" "A staged.txt" "$changes"
	txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/cmd.out")"
	check_snap "[$u] the real directory is unchanged by mount/umount" "$before" "$(snap "$WS")"

	for cmd in false true; do
		run_txfs -- -- bash -c "touch ran-$cmd; $cmd"
		check_rc "[$u] run -- $cmd with a kept layer: refused" 125
		case $ERR in
		*"kept staged by an earlier mount"*"txfs commit"*"txfs rollback"*) ok "[$u] run -- $cmd: the message says why and how to commit or roll back" ;;
		*) fail "[$u] run -- $cmd: the message: $ERR" ;;
		esac
		case $ERR in *": No such file"* | *": Input/output"* | *": Success"*) fail "[$u] run -- $cmd: an errno suffix: $ERR" ;; esac
		check_unmounted "[$u] run -- $cmd refused"
		check_snap "[$u] run -- $cmd refused: the real directory is byte-identical (CMD did not run)" "$before" "$(snap "$WS")"
	done

	txfs_as mount --state "$STATE" "$WS" >"$T/cmd.out" 2>&1 ||
		{ fail "[$u] txfs mount again: $(cat "$T/cmd.out")"; return; }
	check_eq "[$u] the kept layer is intact" "A staged.txt" "$(as_run cat "$WS/.txfs/changes")"
	check_eq "[$u] and shows its content" staged "$(as_run cat "$WS/staged.txt")"
	txfs_as rollback "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs rollback: $(cat "$T/cmd.out")"
	txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/cmd.out")"
	run_txfs -- -- bash -c "echo ok > after.txt"
	check_rc "[$u] rolled back: run -- ... runs and commits" 0
	check_eq "[$u] its change is committed" ok "$(cat "$WS/after.txt" 2>&1)"
	check_unmounted "[$u] the last run"
}

for_each_user body
finish
