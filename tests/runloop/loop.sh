#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# loop - the semantics of `txfs run`, as root and as the unprivileged test
# user: CMD exiting 0 commits (the real directory then equals a model tree
# the same script was applied to), a failing CMD or --check rolls back (the
# real directory byte-identical to before, times included), --check runs
# inside the mount after CMD and confined, exit codes propagate (7, the
# check's 5), --keep leaves the transaction staged and mounted (then
# `txfs rollback` / `txfs commit` and `txfs umount`), a commit refused by a
# conflict exits 1 with action "commit-refused", and the --json report
# parses with the documented fields; `-o noopen` runs the same loop without
# OPEN/RELEASE requests (commit and rollback alike), is refused with an
# `exec deny` policy, and -o takes only the speed options (state=, policy=
# and FUSE options exit 2). Nothing is left mounted after any run.
. "$(dirname "$0")/lib.sh"

require_landlock

# The change every committing run makes (same script on the model).
CHANGE='echo new > new.txt && echo more >> dir/b.txt && rm a.txt && mkdir -p made/deeper && echo x > made/deeper/f && mv dir/sub dir/moved && chmod 600 dir/b.txt && ln -sf new.txt link_a'

# model_of SCRIPT: a copy of $WS with SCRIPT applied, as $AS; its snap_nt.
model_of() {
	local m=$T/model$SEQ
	SEQ=$((SEQ + 1))
	cp -a "$WS" "$m"
	(cd "$m" && "${AS[@]}" bash -c "$1") >/dev/null 2>&1
	snap_nt "$m"
	rm -rf "$m"
}

json_fields() {
	local what=$1
	printf '%s' "$OUT" | "$PY" -c 'import json, sys
d = json.loads(sys.stdin.read())
missing = [k for k in ("action", "exit", "check_exit", "seconds", "transaction", "changes", "message") if k not in d]
assert not missing, "missing fields %s" % missing
assert isinstance(d["exit"], int) and isinstance(d["check_exit"], int), "exit/check_exit not integers"
assert isinstance(d["seconds"], (int, float)) and d["seconds"] >= 0, "seconds"
t = d["transaction"]
assert isinstance(t, dict), "transaction is %r, not the status.json object" % (t,)
for k in ("transaction", "added", "modified", "deleted", "renamed", "vetoes", "workspace", "state"):
    assert k in t, "transaction.%s missing" % k
assert isinstance(d["changes"], str) and isinstance(d["message"], str)
print("ok")' >"$T/json.check" 2>&1
	if [ "$(cat "$T/json.check")" = ok ]; then
		ok "$what: JSON report parses with action, exit, check_exit, seconds, transaction{...}, changes, message"
	else
		fail "$what: JSON report: $(tail -n 1 "$T/json.check"); report: $(printf '%s' "$OUT" | head -c 500)"
	fi
}

body() {
	local u=$WHO before expect

	# -- true commits; nothing to change
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json -- true
	check_rc "[$u] run -- true" 0
	check_action "[$u] run -- true" committed
	json_fields "[$u] run -- true"
	check_eq "[$u] run -- true: JSON exit" 0 "$(jget exit)"
	check_eq "[$u] run -- true: JSON check_exit (no check)" -1 "$(jget check_exit)"
	check_unmounted "[$u] run -- true"
	check_snap "[$u] run -- true: real directory unchanged (nothing to commit)" "$before" "$(snap "$WS")"

	# -- CMD changes things and exits 0: committed, real dir = model
	expect=$(model_of "$CHANGE")
	run_txfs -- --json -- bash -c "$CHANGE"
	check_rc "[$u] run -- CHANGE" 0
	check_action "[$u] run -- CHANGE" committed
	json_fields "[$u] run -- CHANGE"
	check_unmounted "[$u] run -- CHANGE"
	check_snap "[$u] after commit the real directory equals the model tree" "$expect" "$(snap_nt "$WS")"
	local ch
	ch=$(jget changes)
	if grep -q '^A new.txt$' <<<"$ch" && grep -q '^D a.txt$' <<<"$ch"; then
		ok "[$u] JSON changes lists 'A new.txt' and 'D a.txt'"
	else
		fail "[$u] JSON changes: expected 'A new.txt' and 'D a.txt' got: $(jget changes | head -c 300)"
	fi
	check_eq "[$u] JSON transaction.added = the A lines of changes" \
		"$(jget changes | grep -c '^A ')" \
		"$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print(json.load(sys.stdin)["transaction"]["added"])' 2>&1)"

	# -- false rolls back
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json -- bash -c "$CHANGE && false"
	check_rc "[$u] run -- CHANGE && false" 1
	check_action "[$u] run -- CHANGE && false" rolled-back
	json_fields "[$u] run -- false"
	check_eq "[$u] run -- false: JSON exit" 1 "$(jget exit)"
	check_unmounted "[$u] run -- false"
	check_snap "[$u] after rollback the real directory is byte-identical (times too)" "$before" "$(snap "$WS")"

	run_txfs -- -- false
	check_rc "[$u] run -- false (no --json)" 1
	if grep -q 'rolled-back' "$RUN_ERR"; then ok "[$u] run -- false: stderr says rolled-back"; else fail "[$u] run -- false: stderr does not say rolled-back: $(head -c 300 "$RUN_ERR")"; fi

	# -- exit codes propagate
	run_txfs -- --json -- bash -c "$CHANGE; exit 7"
	check_rc "[$u] run -- exit 7" 7
	check_action "[$u] run -- exit 7" rolled-back
	check_eq "[$u] run -- exit 7: JSON exit" 7 "$(jget exit)"
	check_unmounted "[$u] run -- exit 7"
	check_snap "[$u] run -- exit 7: real directory byte-identical" "$before" "$(snap "$WS")"

	# -- --check false rolls back; exit status is the check's
	run_txfs -- --json --check false -- bash -c "$CHANGE"
	check_rc "[$u] run --check false" 1
	check_action "[$u] run --check false" rolled-back
	check_eq "[$u] run --check false: JSON exit (CMD)" 0 "$(jget exit)"
	check_eq "[$u] run --check false: JSON check_exit" 1 "$(jget check_exit)"
	check_unmounted "[$u] run --check false"
	check_snap "[$u] run --check false: real directory byte-identical" "$before" "$(snap "$WS")"

	run_txfs -- --json --check 'exit 5' -- bash -c "$CHANGE"
	check_rc "[$u] run --check 'exit 5'" 5
	check_eq "[$u] run --check 'exit 5': JSON check_exit" 5 "$(jget check_exit)"
	check_action "[$u] run --check 'exit 5'" rolled-back

	# the check is not run when CMD failed
	run_txfs -- --json --check "touch $T/check-ran-$SEQ" -- false
	check_eq "[$u] --check is not run when CMD fails: check_exit" -1 "$(jget check_exit)"

	# the check runs confined: a write outside fails, so it rolls back
	run_txfs -- --json --check 'echo x > "$HOME/notes.txt"' -- bash -c "$CHANGE"
	check_action "[$u] --check writing outside the workspace fails (confined)" rolled-back
	check_snap "[$u] confined check: real directory byte-identical" "$before" "$(snap "$WS")"
	check_eq "[$u] confined check: decoy home canary intact" "canary: notes" "$(cat "$HOME_DECOY/notes.txt")"

	# -- --check true commits; the check sees CMD's changes, cwd in the mount
	expect=$(model_of "$CHANGE")
	run_txfs -- --json --check 'test -f new.txt && test ! -e a.txt && grep -q more dir/b.txt && test "$(pwd)" = "$WS"' -- bash -c "$CHANGE"
	check_rc "[$u] run --check (sees CMD's changes)" 0
	check_action "[$u] run --check true" committed
	check_eq "[$u] run --check true: JSON check_exit" 0 "$(jget check_exit)"
	check_unmounted "[$u] run --check true"
	check_snap "[$u] --check true: real directory equals the model tree" "$expect" "$(snap_nt "$WS")"

	# -- cwd of CMD is the workspace, inside the mount
	ws_fixture
	run_txfs -- --json -- bash -c 'test "$(pwd)" = "$WS" && test -r .txfs/status && awk -v m="$WS" '"'"'$2 == m && $3 == "fuse.txfs" { f = 1 } END { exit !f }'"'"' /proc/self/mounts'
	check_rc "[$u] CMD runs with cwd \$WS inside the fuse.txfs mount" 0

	# -- --keep: staged and mounted; then txfs rollback + umount
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json --keep -- bash -c "$CHANGE"
	check_rc "[$u] run --keep" 0
	check_action "[$u] run --keep" kept
	if is_mounted "$WS" && [ -n "$(daemon_pid)" ]; then
		ok "[$u] --keep: still mounted, daemon alive"
		check_eq "[$u] --keep: the staged change is visible in the mount" new "$(as_run cat "$WS/new.txt" 2>&1)"
		if grep -q '^A new.txt' <<<"$(as_run cat "$WS/.txfs/changes" 2>/dev/null)"; then ok "[$u] --keep: .txfs/changes lists the change"; else fail "[$u] --keep: .txfs/changes: $(as_run cat "$WS/.txfs/changes" 2>&1 | head -c 200)"; fi
		if txfs_as rollback "$WS" >"$T/cmd.out" 2>&1; then ok "[$u] --keep then txfs rollback"; else fail "[$u] txfs rollback after --keep: $(cat "$T/cmd.out")"; fi
		# (CHANGE deleted a.txt, then `ln -sf` looked it up: a negative
		# entry the kernel caches; the rollback must invalidate it.)
		check_eq "[$u] right after txfs rollback the mount shows the restored a.txt" alpha "$(as_run cat "$WS/a.txt" 2>&1)"
		if txfs_as umount "$WS" >"$T/cmd.out" 2>&1; then ok "[$u] txfs umount after --keep"; else fail "[$u] txfs umount: $(cat "$T/cmd.out")"; fi
		check_unmounted "[$u] --keep + rollback + umount"
		check_snap "[$u] --keep + rollback: real directory byte-identical" "$before" "$(snap "$WS")"
	else
		fail "[$u] --keep: expected $WS mounted with a live daemon"
	fi

	# -- --keep, a name deleted and then looked up (a negative entry the
	# kernel caches), txfs rollback: the restored file is visible at once
	# (DESIGN 1.4: after commit or rollback, no stale entries). 3 rounds.
	local round got
	for round in 1 2 3; do
		ws_fixture
		run_txfs -- --json --keep -- bash -c 'rm a.txt && ! stat a.txt 2>/dev/null'
		if [ "$(jget action)" != kept ] || ! is_mounted "$WS"; then
			fail "[$u] negative entry round $round: --keep did not leave it mounted ($(jget action))"
			continue
		fi
		txfs_as rollback "$WS" >/dev/null 2>&1 || fail "[$u] negative entry round $round: txfs rollback failed"
		got=$(as_run cat "$WS/a.txt" 2>&1)
		check_eq "[$u] rm a.txt; stat a.txt; txfs rollback: a.txt readable at once (round $round)" alpha "$got"
		txfs_as umount "$WS" >/dev/null 2>&1
		check_unmounted "[$u] negative entry round $round"
	done

	# -- --keep then txfs commit + umount
	expect=$(model_of "$CHANGE")
	run_txfs -- --json --keep -- bash -c "$CHANGE"
	check_action "[$u] run --keep (2)" kept
	if is_mounted "$WS"; then
		if txfs_as commit "$WS" >"$T/cmd.out" 2>&1; then ok "[$u] --keep then txfs commit"; else fail "[$u] txfs commit after --keep: $(cat "$T/cmd.out")"; fi
		txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/cmd.out")"
		check_unmounted "[$u] --keep + commit + umount"
		check_snap "[$u] --keep + commit: real directory equals the model tree" "$expect" "$(snap_nt "$WS")"
	else
		fail "[$u] --keep (2): not mounted"
	fi

	# -- --keep with a failing CMD: still kept, exit status CMD's
	ws_fixture
	run_txfs -- --json --keep -- bash -c "$CHANGE; exit 3"
	check_rc "[$u] run --keep -- exit 3" 3
	check_action "[$u] run --keep -- exit 3" kept
	if is_mounted "$WS"; then
		txfs_as rollback "$WS" >/dev/null 2>&1
		txfs_as umount "$WS" >"$T/cmd.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/cmd.out")"
	fi
	check_unmounted "[$u] --keep -- exit 3, rollback, umount"

	# -- a commit refused by a conflict: exit 1, action commit-refused.
	# The real a.txt is changed underneath through a directory fd opened
	# before the mount, while CMD (which changed a.txt) waits.
	ws_fixture
	local go=$T/go$SEQ ready=/tmp/txfs-runloop-ready.$$.$SEQ
	rm -f "$ready"
	exec 9<"$WS"
	run_txfs --bg -- --json -- bash -c "echo mine > a.txt && touch $ready && for i in \$(seq 300); do [ -e $go ] && exit 0; sleep 0.1; done; exit 9"
	for _ in $(seq 300); do [ -e "$ready" ] && break; sleep 0.1; done
	if [ -e "$ready" ]; then
		echo theirs >"/proc/$$/fd/9/a.txt"
		touch "$go"
		wait "$BG"
		RC=$?
		OUT=$(cat "$RUN_OUT") ERR=$(cat "$RUN_ERR")
		check_rc "[$u] conflicting commit" 1
		check_action "[$u] conflicting commit" commit-refused
		check_unmounted "[$u] commit refused"
		check_eq "[$u] commit refused: the real a.txt keeps the other writer's data" theirs "$(cat "$WS/a.txt")"
	else
		fail "[$u] conflict: CMD never signalled that it had written a.txt: $(cat "$RUN_ERR")"
		wait "$BG"
	fi
	exec 9<&-
	rm -f "$ready"

	# -- -o noopen: the same loop with no OPEN/RELEASE (the daemon's request
	# counts say so); exec deny rules are refused with it; -o cannot reach
	# what txfs run sets (state, policy, FUSE options)
	ws_fixture
	expect=$(model_of "$CHANGE")
	local stats
	stats=$(dirname "$WS")/noopen.stats
	run_txfs TXFS_STATS="$stats" -- --json -o noopen -- bash -c "cat a.txt dir/b.txt >/dev/null && $CHANGE"
	check_rc "[$u] run -o noopen -- CHANGE" 0
	check_action "[$u] run -o noopen -- CHANGE" committed
	check_unmounted "[$u] run -o noopen -- CHANGE"
	check_snap "[$u] run -o noopen: the real directory equals the model tree" "$expect" "$(snap_nt "$WS")"
	local opens releases
	opens=$(awk '$1 == "op" && $2 == "OPEN" { print $3 }' "$stats" 2>/dev/null)
	releases=$(awk '$1 == "op" && $2 == "RELEASE" { print $3 }' "$stats" 2>/dev/null)
	if [ -s "$stats" ] && [ "${opens:-0}" -le 1 ] && [ "${releases:-0}" = 0 ]; then
		ok "[$u] run -o noopen: the daemon saw OPEN ${opens:-0} (answered ENOSYS), RELEASE 0"
	else
		fail "[$u] run -o noopen: expected OPEN <= 1 and RELEASE 0 in $stats got OPEN '${opens}' RELEASE '${releases}'"
	fi
	ws_fixture
	before=$(snap "$WS")
	run_txfs -- --json -o noopen -- bash -c "echo new > new.txt; exit 4"
	check_rc "[$u] run -o noopen -- exit 4" 4
	check_action "[$u] run -o noopen -- exit 4" rolled-back
	check_snap "[$u] run -o noopen -- exit 4: the real directory unchanged" "$before" "$(snap "$WS")"
	printf 'exec deny tools/evil.sh\n' >"$T/exec$SEQ.policy"
	chmod 644 "$T/exec$SEQ.policy"
	run_txfs -- --policy "$T/exec$SEQ.policy" -o noopen -- bash -c "echo new > new.txt"
	if [ "$RC" != 0 ] && grep -q 'exec deny' <<<"$ERR"; then
		ok "[$u] run -o noopen with an exec deny policy: refused (exit $RC): $(grep -m1 'exec deny' <<<"$ERR" | head -c 200)"
	else
		fail "[$u] run -o noopen with an exec deny policy: expected a refusal naming exec deny got exit $RC: $(head -c 400 <<<"$ERR")"
	fi
	check_unmounted "[$u] run -o noopen with an exec deny policy"
	check_snap "[$u] run -o noopen with an exec deny policy: the real directory unchanged" "$before" "$(snap "$WS")"
	# a relative --policy with -C DIR: the caller's file, for the mount too
	# (it was passed on relative to the mount, which runs from /: refused)
	ws_fixture
	mkdir -p "$T/pol$SEQ" && printf 'deny delete **/a.txt\n' >"$T/pol$SEQ/rel.policy"
	chmod -R a+rX "$T/pol$SEQ"
	(cd "$T/pol$SEQ" && as_run env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME_DECOY" \
		LC_ALL=C ASAN_OPTIONS="$ASAN_OPTIONS" UBSAN_OPTIONS="$UBSAN_OPTIONS" \
		"$TXFS_BIN" run --state "$STATE" -C "$WS" --policy rel.policy -- \
		sh -c 'rm a.txt; echo new > new.txt') >"$T/rel$SEQ.out" 2>&1
	RC=$? ERR=$(cat "$T/rel$SEQ.out")
	check_rc "[$u] run -C WS --policy rel.policy (from the policy's folder)" 0
	if [ -e "$WS/a.txt" ] && [ "$(cat "$WS/new.txt" 2>/dev/null)" = new ] &&
		grep -q 'vetoed: delete a.txt (.*/rel.policy:1)' "$T/rel$SEQ.out"; then
		ok "[$u] run -C WS --policy rel.policy: its rule held (a.txt kept, vetoed), new.txt committed"
	else
		fail "[$u] run -C WS --policy rel.policy: $(ls "$WS" | tr '\n' ' '): $(head -c 400 "$T/rel$SEQ.out")"
	fi
	check_unmounted "[$u] run --policy rel.policy"
	for bad in state=/tmp policy=/dev/null allow_other noopen,default_permissions; do
		run_txfs -- -o "$bad" -- true
		check_rc "[$u] run -o $bad: refused as wrong usage" 2
	done
	check_unmounted "[$u] run -o (refused)"
}

for_each_user body
finish
