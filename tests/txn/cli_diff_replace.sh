#!/bin/bash
# Diffs and reports a reviewer can use, with real programs from outside
# the mount: a real file replaced by rename (sed -i, python os.replace of a
# temporary file, git add rewriting .git/index through index.lock) is one
# modification "M" (a content diff, mode lines when the execute bit
# changes), not "D" + "A"; a hard-linked file keeps "D" + "A" (its other
# name keeps the old content); a rename is "R old -> new" and in the diff
# git's "rename from/rename to" (with a hunk when it also changed), also
# a renamed file then replaced by rename (found by content, as git does),
# a renamed folder as the renames of its files.
# --since SAVEPOINT and --command N say what changed against the tree at
# the savepoint (a new file deleted again is "D", appended to "M", renamed
# "R"), and their diff turns a copy of that tree into the tree now. The
# exec report says "M" for an append to a file an earlier command made.
# Every case checks the letters, the counts of txfs status, status.json,
# the MCP status tool and the exec report against the list, and applies the diff with git
# apply and patch -p1 to a pristine copy, which must then equal the mount.
. "$(dirname "$0")/txnlib.sh"
command -v patch >/dev/null || skip "patch(1) is needed"
command -v git >/dev/null || skip "git is needed"
fixture
printf 'one\ntwo\nthree\n' >"$WS/lines.txt"
printf 'n1\nn2\nn3\nn4\nn5\n' >"$WS/notes.txt"
echo plain >"$WS/deep/a/plain.txt"
echo keep >"$WS/dir/sub/keep.txt"	# patch(1) removes folders it empties
GITC=(git -c user.name=t -c user.email=t@example.invalid -c init.defaultBranch=main -c commit.gpgsign=false)
(cd "$WS" && "${GITC[@]}" init -q && "${GITC[@]}" add lines.txt file.txt &&
	"${GITC[@]}" commit -qm initial) || fail "git init of the fixture"
# txfs exec refuses a state folder below /tmp (writable to the command)
STATE=$(mktemp -d /var/tmp/txfs-cdr.XXXXXX) || exit 1
trap '( cleanup ); rc=$?; rm -rf --one-file-system "$STATE"; exit $rc' EXIT
txfs_mount || exit 1

jget() { "$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

# mcp_counts: "A M D R" from the status tool of `txfs mcp MNT`.
mcp_counts() {
	timeout -k 5 60 "$PY" - "$TXFS" "$MNT" <<'PY' 2>&1
import json, subprocess, sys
p = subprocess.Popen([sys.argv[1], "mcp", sys.argv[2]], stdin=subprocess.PIPE,
                     stdout=subprocess.PIPE, text=True)
def send(msg):
    p.stdin.write(json.dumps(dict(jsonrpc="2.0", **msg)) + "\n")
    p.stdin.flush()
send(dict(id=1, method="initialize", params={"protocolVersion": "2025-03-26",
     "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}))
p.stdout.readline()
send(dict(method="notifications/initialized"))
send(dict(id=2, method="tools/call", params={"name": "status", "arguments": {}}))
s = json.loads(p.stdout.readline())["result"]["structuredContent"]
print(s["added"], s["modified"], s["deleted"], s["renamed"])
p.stdin.close()
p.wait(timeout=10)
PY
}

# counts_are WHAT "A M D R": txfs status, .txfs/status.json and the lines
# of .txfs/changes all give these counts.
counts_are() {
	local what=$1 want=$2 a m d r
	cli_run status "$MNT"
	check_eq "$what: txfs status counts" \
		"$(set -- $want; echo "$1 added, $2 modified, $3 deleted, $4 renamed")" \
		"$(head -1 <<<"$COUT" | sed 's/^transaction [0-9]*: //; s/;.*//')"
	t 30 cat "$MNT/$CTL/status.json" >"$T/st.json"
	check_eq "$what: status.json counts" "$want" \
		"$(jget "$T/st.json" added) $(jget "$T/st.json" modified) $(jget "$T/st.json" deleted) $(jget "$T/st.json" renamed)"
	check_eq "$what: the MCP status tool's counts" "$want" "$(mcp_counts)"
	a=$(grep -c '^A ' "$MNT/$CTL/changes") m=$(grep -c '^M ' "$MNT/$CTL/changes")
	d=$(grep -c '^D ' "$MNT/$CTL/changes") r=$(grep -c '^R ' "$MNT/$CTL/changes")
	check_eq "$what: the lines of .txfs/changes agree" "$want" "$a $m $d $r"
}

# changes_are WHAT LINES: .txfs/changes, sorted, is exactly LINES.
changes_are() {
	check_eq "$1: .txfs/changes" "$2" "$(LC_ALL=C sort "$MNT/$CTL/changes")"
}

# applies WHAT BASE [--git-only] [DIFF ARGS...]: txfs diff [ARGS] MNT
# applies with git apply (and patch -p1 unless --git-only) to copies of
# BASE, and each copy then equals the mount.
applies() {
	local what=$1 base=$2 gitonly=0 c1 c2
	shift 2
	# new names every time ($RANDOM repeated once: cp -a then copied
	# BASE into the old copy, and the trees differed)
	c1=$(mktemp -u "$T/c1.XXXXXX") && c2=$(mktemp -u "$T/c2.XXXXXX") || return
	if [ "${1:-}" = --git-only ]; then gitonly=1; shift; fi
	check_cli "$what: txfs diff $*" 0 diff "$@" "$MNT" || return
	cp "$T/cli.out" "$T/p.diff"	# as printed: a binary patch ends with an empty line
	cp -a "$base" "$c1"
	# git apply refuses paths in .git/: the copy's .git is dotgit there
	[ -d "$c1/.git" ] && mv "$c1/.git" "$c1/dotgit"
	sed -e 's#\([ab]/\)\.git/#\1dotgit/#g' -e 's#^\(rename [a-z]* \)\.git/#\1dotgit/#' "$T/p.diff" >"$T/g.diff"
	if (cd "$c1" && t 30 git apply --check "$T/g.diff" && t 30 git apply "$T/g.diff") >"$T/ga.out" 2>&1; then
		ok "$what: git apply --check and git apply take it"
	else
		fail "$what: git apply: $(head -c 400 "$T/ga.out"); the diff: $(head -c 800 "$T/p.diff")"
	fi
	[ -d "$c1/dotgit" ] && mv "$c1/dotgit" "$c1/.git"
	# git writes its objects read-only, a mode a patch cannot say
	[ -d "$c1/.git/objects" ] && find "$c1/.git/objects" -type f -exec chmod 444 {} +
	check_tree "$what: the copy patched by git apply equals the mount" "$c1" "$MNT"
	[ $gitonly = 1 ] && return
	cp -a "$base" "$c2"
	if (cd "$c2" && t 30 patch -p1 -s -f --no-backup-if-mismatch <"$T/p.diff") >"$T/pa.out" 2>&1; then
		ok "$what: patch -p1 takes it"
	else
		fail "$what: patch -p1: $(head -c 400 "$T/pa.out"); the diff: $(head -c 800 "$T/p.diff")"
	fi
	check_tree "$what: the copy patched by patch -p1 equals the mount" "$c2" "$MNT"
}

# snap DIR: a copy of the mount's tree now.
snap() {
	rm -rf "$1"
	cp -a "$MNT/." "$1" 2>"$T/snap.err" || fail "copy of the mount: $(head -c 200 "$T/snap.err")"
	rm -rf "$1/$CTL"
}

# --- sed -i: two files replaced by rename --------------------------------------
in_mnt 'sed -i s/two/TWO/ lines.txt; sed -i s/a/A/ dir/a.txt'
changes_are "sed -i" "$(printf 'M dir/a.txt\nM lines.txt')"
counts_are "sed -i" "0 2 0 0"
check_cli "sed -i: name-status" 0 diff --name-status "$MNT"
check_eq "sed -i: --name-status" "$(printf 'M\tdir/a.txt\nM\tlines.txt')" "$(sort <<<"$COUT")"
applies "sed -i" "$WS"
check_eq "sed -i: a content diff, no whole-file delete" "0 0 1" \
	"$(grep -c '^deleted file' "$T/p.diff") $(grep -c '^new file' "$T/p.diff") $(grep -c '^-two$' "$T/p.diff")"
check_ctl "sed -i: rollback" OK rollback

# --- a hard-linked file: identity matters ---------------------------------------
in_mnt 'sed -i s/hard/HARD/ hard1'
changes_are "sed -i of a hard link" "$(printf 'A hard1\nD hard1')"
counts_are "sed -i of a hard link" "1 0 1 0"
applies "sed -i of a hard link" "$WS"
check_ctl "hard link: rollback" OK rollback

# --- python os.replace of a temporary file (and an execute bit dropped) -------
in_mnt "$PY"' -c "
import os, tempfile
for name, data in ((\"file.txt\", b\"hello\nworld\n\"), (\"exec.sh\", b\"#!/bin/sh\necho replaced\n\")):
    fd, tmp = tempfile.mkstemp(dir=\".\")
    os.write(fd, data); os.close(fd); os.chmod(tmp, 0o644)
    os.replace(tmp, name)
"'
changes_are "os.replace" "$(printf 'M exec.sh\nM file.txt')"
counts_are "os.replace" "0 2 0 0"
applies "os.replace" "$WS"
check_eq "os.replace: the execute bit's change is said" "$(printf 'old mode 100755\nnew mode 100644')" "$(grep '^old mode\|^new mode' "$T/p.diff")"
check_ctl "os.replace: rollback" OK rollback

# --- git add: .git/index rewritten through index.lock --------------------------
in_mnt "echo three-and-more >> lines.txt; git add lines.txt"
grep -q '^M \.git/index$' "$MNT/$CTL/changes" && ok "git add: M .git/index" ||
	fail "git add: expected 'M .git/index' in: $(cat "$MNT/$CTL/changes")"
check_eq "git add: no D or A of .git/index" "" "$(grep '^[AD] \.git/index$' "$MNT/$CTL/changes")"
check_eq "git add: nothing deleted" 0 "$(grep -c '^D ' "$MNT/$CTL/changes")"
counts_are "git add" "$(grep -c '^A ' "$MNT/$CTL/changes") 2 0 0"
applies "git add" "$WS" --git-only
check_ctl "git add: rollback" OK rollback

# --- renames --------------------------------------------------------------------
in_mnt 'mv dir/a.txt dir/b.txt'
changes_are "rename" "R dir/a.txt -> dir/b.txt"
counts_are "rename" "0 0 0 1"
applies "rename" "$WS"
check_eq "rename: git's rename headers, no content" "$(printf 'diff --git a/dir/a.txt b/dir/b.txt\nrename from dir/a.txt\nrename to dir/b.txt')" "$(cat "$T/p.diff")"
check_ctl "rename: rollback" OK rollback

in_mnt 'mv lines.txt renamed.txt; echo four >> renamed.txt'
changes_are "rename + edit" "R lines.txt -> renamed.txt"
counts_are "rename + edit" "0 0 0 1"
applies "rename + edit" "$WS"
check_eq "rename + edit: headers and a hunk" "rename from lines.txt|rename to renamed.txt|+four" \
	"$(grep '^rename\|^[-+][a-zA-Z]' "$T/p.diff" | paste -sd'|')"
check_ctl "rename + edit: rollback" OK rollback

# a renamed folder: the renames of the files below it
# (folders of mode 0755: a patch has no mode for a folder)
# (and a file in one replaced by rename: M, at its new path)
in_mnt 'mv deep deep2; echo x >> deep2/a/b/c/leaf.txt; mv deep2/a/b deep2/a/b2; echo y > deep2/a/b2/new; sed -i s/plain/PLAIN/ deep2/a/plain.txt'
changes_are "renamed folders" "$(printf 'A deep2/a/b2/new\nM deep2/a/b2/c/leaf.txt\nM deep2/a/plain.txt\nR deep -> deep2\nR deep/a/b -> deep2/a/b2')"
counts_are "renamed folders" "1 2 0 2"
applies "renamed folders" "$WS"
check_eq "renamed folders: a rename for each file" "rename from deep/a/b/c/leaf.txt|rename from deep/a/plain.txt" \
	"$(grep '^rename from' "$T/p.diff" | sort | paste -sd'|')"
check_ctl "renamed folders: rollback" OK rollback

# a rename, then the renamed file replaced by rename: found by content
in_mnt 'mv lines.txt moved.txt; sed -i s/three/THREE/ moved.txt'
changes_are "rename + sed -i" "R lines.txt -> moved.txt"
counts_are "rename + sed -i" "0 0 0 1"
applies "rename + sed -i" "$WS"
check_eq "rename + sed -i: headers and a hunk" "rename from lines.txt|rename to moved.txt|-three|+THREE" \
	"$(grep '^rename\|^[-+][a-zA-Z]' "$T/p.diff" | paste -sd'|')"
check_ctl "rename + sed -i: rollback" OK rollback
# ... but not a new file that shares little with the one deleted
in_mnt 'rm lines.txt; printf "other\ncontent\nthree\n" > moved.txt'
changes_are "delete + unrelated new file" "$(printf 'A moved.txt\nD lines.txt')"
check_ctl "delete + new: rollback" OK rollback

# --- since a savepoint -------------------------------------------------------------
in_mnt 'echo new > n.txt; echo other > o.txt; echo gone > g.txt; sed -i s/hello/HELLO/ file.txt'
snap "$T/at_sp"
check_cli "savepoint sp" 0 savepoint "$MNT" sp
in_mnt 'rm g.txt dir/sub/deep.txt; echo more >> n.txt; mv o.txt o2.txt; sed -i s/HELLO/hi/ file.txt; echo fresh > fresh.txt'
check_cli "--since sp: name-status" 0 diff --name-status --since sp "$MNT"
check_eq "--since sp: what changed against the savepoint" \
	"$(printf 'A\tfresh.txt\nD\tdir/sub/deep.txt\nD\tg.txt\nM\tfile.txt\nM\tn.txt\nR\to.txt\to2.txt')" "$(sort <<<"$COUT")"
applies "--since sp" "$T/at_sp" --since sp
check_cli "txfs diff MNT still applies to the real directory" 0 diff "$MNT"
applies "after the savepoint, the whole diff" "$WS"
check_ctl "since: rollback" OK rollback

# --- txfs exec: per-command reports -------------------------------------------------
# exec_json WHAT CMD...: txfs exec --json MNT -- CMD; the report in EJ.
exec_json() {
	local what=$1
	shift
	t 120 "$TXFS" exec --json "$MNT" -- "$@" </dev/null >"$T/ex.out" 2>"$T/ex.err"
	local rc=$?
	[ $rc = 0 ] || fail "$what: txfs exec: exit $rc: $(head -c 300 "$T/ex.err")"
	EJ=$(tail -1 "$T/ex.out")
}
report_changes() {
	"$PY" -c 'import json,sys; print("\n".join(sorted(json.loads(sys.argv[1])["changes"])))' "$EJ"
}
exec_json "command 1" sh -c 'echo first > made.txt; sed -i s/two/2/ lines.txt'
n1=$("$PY" -c 'import json,sys; print(json.loads(sys.argv[1])["cmd"])' "$EJ")
check_eq "command 1: report" "$(printf 'A made.txt\nM lines.txt')" "$(report_changes)"
snap "$T/after1"
exec_json "command 2" sh -c 'echo second >> made.txt; sed -i s/2/two/ lines.txt; mv dir/a.txt dir/c.txt'
n2=$((n1 + 1))
check_eq "command 2: an append to a file command 1 made is M" "$(printf 'M lines.txt\nM made.txt\nR dir/a.txt -> dir/c.txt')" "$(report_changes)"
snap "$T/after2"
exec_json "command 3" sh -c 'rm made.txt; echo third > t3.txt; mv notes.txt n.txt; sed -i s/n3/N3/ n.txt'
check_eq "command 3: a file an earlier command made, deleted, is D; renamed and replaced, R" "$(printf 'A t3.txt\nD made.txt\nR notes.txt -> n.txt')" "$(report_changes)"
check_cli "--command $n2: name-status" 0 diff --name-status --command "$n2" "$MNT"
check_eq "--command $n2: the same as its report" "$(printf 'M\tlines.txt\nM\tmade.txt\nR\tdir/a.txt\tdir/c.txt')" "$(sort <<<"$COUT")"
# --command N is command N alone: it turns the tree after N-1 into the
# tree after N, whatever came later
check_cli "--command $n2: diff" 0 diff --command "$n2" "$MNT"
printf '%s\n' "$COUT" >"$T/c2.diff"
cp -a "$T/after1" "$T/c2apply"
(cd "$T/c2apply" && t 30 git apply "$T/c2.diff") >"$T/ga.out" 2>&1 && ok "--command $n2: git apply takes it" ||
	fail "--command $n2: git apply: $(head -c 300 "$T/ga.out"); $(head -c 600 "$T/c2.diff")"
check_tree "--command $n2: the tree after command $((n2 - 1)) patched is the tree after it" "$T/c2apply" "$T/after2"
applies "--command $((n2 + 1))" "$T/after2" --command $((n2 + 1))
counts_are "after three commands" "1 1 0 2"
applies "after three commands, the whole diff" "$WS"
check_ctl "exec: rollback" OK rollback

# --- the commit still does what it did: a replaced file is committed ------------
in_mnt 'sed -i s/one/uno/ lines.txt'
check_cli "commit a sed -i" 0 commit "$MNT"
grep -q "0 added, 1 modified, 0 deleted, 0 renamed" <<<"$COUT" && ok "commit report: 1 modified" ||
	fail "commit report: expected '0 added, 1 modified, 0 deleted, 0 renamed' got: $COUT"
txfs_umount "$MNT" "$STATE"
check_eq "committed: the real file has the edit" "$(printf 'uno\ntwo\nthree')" "$(cat "$WS/lines.txt")"
txn_finish
