#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# cli_names - what txfs prints for programs holds for every file name.
# The workspace, mount point and state folder paths themselves hold a
# newline, a quote, a backslash, control bytes and bytes that are not
# UTF-8; the workspace holds names with every C0 byte, newline, quotes,
# backslash, invalid UTF-8 (lone, truncated, overlong, surrogate), C1,
# DEL, " -> ", ", ", TAB "(needs review)", a real U+FFFD, 255-byte names
# (one with a newline), and files and folders named like the control
# files (status.json, changes, sub/.txfs/status.json). They are modified,
# renamed, deleted and created in the mount (tests/txn/names.py). Then:
#   - .txfs/status.json and txfs status --json: strict JSON (python's
#     json, no duplicate key), one line, workspace/mountpoint/state read
#     back to the exact bytes (K_hex, else K); txfs status and .txfs/state
#     keep each path on one line (C-quoted) and the CLI still finds the
#     daemon through them;
#   - .txfs/changes, txfs diff --name-status and txfs diff --since: valid
#     UTF-8, one line a change, every name read back (git's C quoting) to
#     the exact bytes, exactly the changes made; plain names print as they
#     always did ("M plain.txt");
#   - txfs diff: `git apply` and `patch -p1` of it onto a copy of the real
#     directory give the mount's tree, byte for byte;
#   - the commit report lists flagged names quoted (a name with ", " stays
#     one), a conflict list keeps a name with a newline on one line;
#   - txfs run --json: strict JSON; its "changes" read back exactly.
# Before: status.json held raw bytes that are not UTF-8 (invalid JSON),
# txfs status / .txfs/state broke on a state folder with a newline (the
# CLI could not find the daemon), one name with a newline read as two
# changes in .txfs/changes and txfs diff (the patch did not apply).
. "$(dirname "$0")/txnlib.sh"

NPY=$TXFS_SRC/tests/txn/names.py
npy() { t 120 "$PY" "$NPY" "$@"; }
# check_py WHAT ARGS...: names.py ARGS must pass; its last line is shown.
check_py() {
	local what=$1 out
	shift
	if out=$(npy "$@" 2>&1); then
		ok "$what ($(tail -1 <<<"$out"))"
	else
		fail "$what: $(tail -c 1500 <<<"$out")"
	fi
}

W=$T/$'ws\n"q\\\xff' M=$T/$'mnt\x01\xfe' S=$T/$'st\nx\xc3('
mkdir -p "$W" "$M" "$T/parent"
npy real "$W" || fail "names.py real"
cp -a "$W" "$T/copy1" && cp -a "$W" "$T/copy2"
printf 'flag review/\n' >"$T/flag.policy"
TXFS_POLICY=$T/flag.policy
txfs_mount --ws "$W" --mnt "$M" --state "$S" || exit 1

# --- status.json, status, state -------------------------------------------
t 30 cat "$M/$CTL/status.json" >"$T/st1.json"
check_py ".txfs/status.json with hostile paths" status "$T/st1.json" "$W" "$M" "$S"
check_cli "txfs status --json finds the daemon (.txfs/state quoted)" 0 status --json "$M"
printf '%s\n' "$COUT" >"$T/st2.json"
check_py "txfs status --json with hostile paths" status "$T/st2.json" "$W" "$M" "$S"
check_cli "txfs status" 0 status "$M"
printf '%s\n' "$COUT" >"$T/st.txt"
check_py "txfs status (text)" statustext "$T/st.txt" "$W" "$M" "$S"
check_eq ".txfs/state is one line" 1 "$(t 30 cat "$M/$CTL/state" | wc -l)"

# --- the changes ---------------------------------------------------------
npy change "$M" "$T/exp1.json" || fail "names.py change"
t 30 cat "$M/$CTL/changes" >"$T/changes.txt"
check_py ".txfs/changes: one line a change, names exact" changes "$T/changes.txt" "$T/exp1.json"
check_cli "txfs diff --name-status" 0 diff --name-status "$M"
printf '%s\n' "$COUT" >"$T/ns.txt"
check_py "txfs diff --name-status: names exact" namestatus "$T/ns.txt" "$T/exp1.json"
t 120 "$TXFS" diff "$M" >"$T/p.diff" 2>"$T/diff.err"
check_eq "txfs diff: exit 0" "0" "$?"
if (cd "$T/copy1" && t 60 git apply --unsafe-paths -p1 "$T/p.diff") >"$T/apply.err" 2>&1; then
	check_py "git apply of txfs diff gives the mount's tree" same "$T/copy1" "$M"
else
	fail "git apply of txfs diff: $(head -c 800 "$T/apply.err")"
fi
# patch(1) makes temp files beside NAME.XXXXXX: no 255-byte names for it
P=($'new\nline' 'back\slash' '"lead' $'moved\xfe\n' $'bad\xff' '"' 'x'$'\xfe\xfd''y' \
	$'dir\nnl/in\nside' $'c0\x01x' $'c0\x1fx' 'c -> d' 'a -> b' 'a, b')
t 120 "$TXFS" diff "$M" "${P[@]}" >"$T/p2.diff" 2>"$T/diff2.err"
if (cd "$T/copy2" && t 60 patch -s -p1 <"$T/p2.diff") >"$T/patch.err" 2>&1; then
	bad=
	for n in "${P[@]}"; do
		if [ -e "$M/$n" ] || [ -e "$T/copy2/$n" ]; then
			cmp -s -- "$M/$n" "$T/copy2/$n" || bad+=" $(printf %q "$n")"
		fi
	done
	check_eq "patch -p1 of txfs diff PATH...: the files equal the mount's" "" "$bad"
else
	fail "patch -p1 of txfs diff PATH...: $(head -c 800 "$T/patch.err")"
fi
t 30 cat "$M/$CTL/status.json" >"$T/st3.json"
check_py "status.json after the changes" status "$T/st3.json" "$W" "$M" "$S"

# --- since a savepoint ---------------------------------------------------
check_cli "txfs savepoint" 0 savepoint "$M" sp1
npy more "$M" "$T/exp2.json" || fail "names.py more"
check_cli "txfs diff --since sp1 --name-status" 0 diff --since sp1 --name-status "$M"
printf '%s\n' "$COUT" >"$T/ns2.txt"
check_py "txfs diff --since: names exact" namestatus "$T/ns2.txt" "$T/exp2.json"
"$PY" - "$T/exp1.json" "$T/exp2.json" "$T/exp3.json" <<'EOF'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
# the savepoint's changes on top of the first ones, as one set
gone = {x[1] for x in b if x[0] in "DR"}
a = [x for x in a if x[1] not in gone]
json.dump(a + b, open(sys.argv[3], "w"))
EOF
t 30 cat "$M/$CTL/changes" >"$T/changes2.txt"
check_py ".txfs/changes after the savepoint" changes "$T/changes2.txt" "$T/exp3.json"

# --- flagged names in the commit report, a conflict list ------------------
mkdir -p "$M/review"
printf x >"$M/review/a, b"
printf x >"$M/review/n"$'\n'"l"
printf 'real change\n' >>"$W/plain.txt"	# underneath: a conflict
check_cli "txfs commit refused: a conflict" 1 commit "$M"
check_py "txfs status still strict JSON" status "$M/$CTL/status.json" "$W" "$M" "$S"
printf 'changed\n' >"$W/"$'c0\nx'
check_cli "txfs commit refused: two conflicts" 1 commit "$M"
if grep -qF '  "c0\nx": ' <<<"$CERR" && grep -qF '  plain.txt: ' <<<"$CERR" &&
	! grep -q '^x": ' <<<"$CERR"; then
	ok "the conflict list: one line a name, quoted when needed"
else
	fail "the conflict list: $CERR"
fi
check_cli "txfs commit --force" 0 commit --force "$M"
if grep -qF '"review/a, b", "review/n\nl"' <<<"$COUT" ||
	grep -qF '"review/n\nl", "review/a, b"' <<<"$COUT"; then
	ok "the commit report names the flagged files, quoted"
else
	fail "the commit report: $COUT"
fi
txfs_umount "$M" "$S"

# --- txfs run --json ------------------------------------------------------
R=$T/$'run\nws'
mkdir -p "$R"
printf a >"$R/"$'old\xff'
printf '[["R","6f6c64ff","6e0a6cfe"],["A","7122",null]]' >"$T/run.json.exp"
(cd "$R" && t 120 "$TXFS" run --state "$T/runstate" --policy "$T/flag.policy" --json -- \
	sh -c 'mv "$(printf "old\377")" "$(printf "n\nl\376")"; echo hi > "$(printf "q\"")"') \
	>"$T/run.json" 2>"$T/run.err"
rc=$?
if [ $rc != 0 ] && grep -qi landlock "$T/run.err"; then
	ok "txfs run --json not tried: $(head -1 "$T/run.err")"
else
	check_eq "txfs run: exit 0" 0 "$rc"
	check_py "txfs run --json: strict JSON, changes exact" run "$T/run.json"
fi
txn_finish
