#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The corpus of destructive commands (shared/corpus/destructive.tsv) under
# plain `txfs mount` with the DEFAULT policy: every entry of class R, G, O
# or P whose expect is `stage` or `guard` runs in a fresh fixture, with
# `bash -c` under `timeout 60`, cwd $WS (the mount), HOME a decoy home.
# Then: a `guard` entry must have been vetoed at least in part (a veto or
# guard event in .txfs/log), and after `echo rollback > .txfs/ctl` the
# workspace must be byte-identical to before (tree hash including .git)
# for every entry; the decoy home and the decoy project that `link` points
# to must be unchanged. Entries of class N and entries that expect
# `outside` or `network` never run here (they belong to `txfs run`): they
# are listed as skipped.
#
# As root, the scenario runs itself again as an unprivileged user
# ($TXFS_TEST_USER, default txfstest, created if missing), from a copy of
# the binaries and scripts that user can read, as the corpus's safety
# header asks, and (where unshare works) in a private mount namespace with
# a private /tmp, because entry 32 runs `git init /tmp/clean` literally.
# Without one, /tmp/clean is removed before and after entry 32 (and the
# entry fails if /tmp/clean exists and belongs to someone else).
#
# Environment: TXFS_CORPUS (default $TXFS_SRC/../shared/corpus/destructive.tsv),
# TXFS_CORPUS_IDS (run only these ids, space separated).
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
SRC=${TXFS_SRC:-$(cd "$HERE/../.." && pwd)}
CORPUS=${TXFS_CORPUS:-$SRC/../shared/corpus/destructive.tsv}

if [ ! -r "$CORPUS" ]; then
	echo "SKIP: corpus: no corpus at $CORPUS (set TXFS_CORPUS)"
	exit 77
fi

# As root: a private mount namespace with its own /tmp (a tmpfs), so that
# entry 32's literal `git init /tmp/clean` meets nobody else's /tmp/clean
# and leaves nothing behind; then the scenario again as the test user.
if [ "$(id -u)" = 0 ] && [ -z "${TXFS_CORPUS_UNPRIV:-}" ]; then
	: "${TXFS:?TXFS must name the txfs binary}" "${TXFS_TOOLS:?TXFS_TOOLS must name the tools directory}"
	if [ -z "${TXFS_CORPUS_NS:-}" ] && [ -d /mnt ] && unshare --mount --propagation private true 2>/dev/null; then
		TXFS_CORPUS_NS=1 exec unshare --mount --propagation private -- bash "$0" "$@"
	fi
	U=${TXFS_TEST_USER:-txfstest}
	if ! id "$U" >/dev/null 2>&1; then
		useradd -m -s /bin/bash "$U" || { echo "FAIL: corpus: cannot create the test user $U"; exit 1; }
	fi
	if [ -n "${TXFS_CORPUS_NS:-}" ]; then
		# The namespace copied every FUSE mount of the tests running beside
		# this one: detach the copies, or those tests' daemons cannot exit
		# when they unmount (their umount waits 30 s and fails).
		sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - fuse\(\.[^ ]*\)\{0,1\} .*/\1/p' /proc/self/mountinfo |
			sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
		# private: /mnt holds the copy, /tmp is empty and ours alone
		mount -t tmpfs -o mode=755 txfs-corpus-stage /mnt || { echo "FAIL: corpus: tmpfs on /mnt"; exit 1; }
		stage=/mnt/stage
		mkdir -p "$stage"
	else
		base=${TXFS_TEST_TMP:-${TMPDIR:-/tmp}}
		stage=$(mktemp -d "$base/txfs-corpus-stage.XXXXXX") || exit 1
	fi
	chmod 755 "$stage"
	mkdir -p "$stage/tests/mount" "$stage/tests/policy" "$stage/tools"
	cp "$TXFS" "$stage/txfs" && cp "$TXFS_TOOLS/fsop" "$stage/tools/" &&
		cp "$HERE/../mount/lib.sh" "$stage/tests/mount/" &&
		cp "$HERE/corpus.sh" "$HERE/plib.sh" "$HERE/pyop.py" "$HERE/logcheck.py" "$stage/tests/policy/" &&
		cp "$CORPUS" "$stage/destructive.tsv" || { echo "FAIL: corpus: staging a copy failed"; rm -rf "$stage"; exit 1; }
	chmod -R a+rX "$stage"
	if [ -n "${TXFS_CORPUS_NS:-}" ]; then
		mount -t tmpfs -o mode=1777 txfs-corpus-tmp /tmp || { echo "FAIL: corpus: tmpfs on /tmp"; exit 1; }
		base=/tmp
		echo "corpus: in a private mount namespace with its own /tmp"
	else
		runuser -u "$U" -- test -w "$base" -a -x "$base" || base=/tmp
	fi
	echo "corpus: running as $U ($(id "$U")) from a copy in $stage"
	runuser -u "$U" -- env -i PATH=/usr/local/bin:/usr/bin:/bin LC_ALL=C TMPDIR=/tmp \
		TXFS="$stage/txfs" TXFS_TOOLS="$stage/tools" TXFS_SRC="$SRC" \
		TXFS_CORPUS="$stage/destructive.tsv" TXFS_CORPUS_UNPRIV=1 TXFS_TEST_TMP="$base" \
		${TXFS_CORPUS_NS:+TXFS_CORPUS_NS=1} \
		${TXFS_CORPUS_IDS:+TXFS_CORPUS_IDS="$TXFS_CORPUS_IDS"} ${TXFS_KEEP:+TXFS_KEEP="$TXFS_KEEP"} \
		${ASAN_OPTIONS:+ASAN_OPTIONS="$ASAN_OPTIONS"} ${UBSAN_OPTIONS:+UBSAN_OPTIONS="$UBSAN_OPTIONS"} \
		bash "$stage/tests/policy/corpus.sh"
	rc=$?
	rm -rf "$stage"
	exit $rc
fi

. "$HERE/../mount/lib.sh"
. "$HERE/plib.sh"
default_policy

export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com
export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
export GIT_CONFIG_NOSYSTEM=1 GIT_TERMINAL_PROMPT=0

# ---- the fixture of the corpus header, built once, copied per entry -------

TPL=$T/template
DHOME=$T/home		# the decoy home
DECOY=$T/decoy		# the decoy project outside the workspace
w() { mkdir -p "$(dirname "$1")"; printf '%s' "$2" >"$1"; }
gq() { git -C "$1" "${@:2}" >/dev/null || fail "fixture: git ${*:2} in $1"; }

make_fixture() {
	local ws=$TPL i
	w "$DHOME/.ssh/id_ed25519" $'CANARY private key\n'; chmod 600 "$DHOME/.ssh/id_ed25519"
	w "$DHOME/.bashrc" $'# CANARY bashrc\n'
	w "$DHOME/Documents/thesis.txt" $'CANARY document\n'
	w "$DHOME/projects/tool/web-crawler/crawl.py" $'# CANARY\n'
	w "$DECOY/project/main.py" $'print("CANARY decoy project")\n'
	w "$DECOY/project/data/db.txt" $'CANARY data\n'
	mkdir -p "$ws"
	gq "$ws" init -q -b main
	w "$ws/.gitignore" $'node_modules/\n.env\ndir with space/.cache/\nsub/\nlink\n'
	w "$ws/README.md" $'# fixture\n\nA project.\n'
	w "$ws/package.json" $'{\n  "name": "fixture",\n  "version": "1.0.0"\n}\n'
	w "$ws/src/main.c" $'int main(void) { return 0; }\n'
	w "$ws/src/util.c" $'int util(void) { return 1; }\n'
	w "$ws/src/util.h" $'int util(void);\n'
	w "$ws/tests/test_main.c" $'/* test */\n'
	w "$ws/patches/0001-fix.patch" $'--- a\n+++ b\n'
	w "$ws/plan/plan.md" $'# plan\n- step\n'
	w "$ws/docs/guide.md" $'# guide\n'
	w "$ws/archive/2025.md" $'# old notes\n'
	w "$ws/notes/inbox.jsonl" $'{"note": 1}\n{"note": 2}\n'
	w "$ws/dir with space/readme.txt" $'spaces\n'
	# more tracked files than the default mass-deletion limit (1000)
	"$PYTHON" - "$ws/vendor" <<'EOF' || fail "fixture: vendor/"
import os, sys
for i in range(1200):
    d = os.path.join(sys.argv[1], f"lib{i // 100}")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, f"mod{i}.c"), "w") as f:
        f.write(f"int mod{i}(void) {{ return {i}; }}\n")
EOF
	"$PYTHON" - "$ws/data/app.sqlite" <<'EOF' || fail "fixture: sqlite"
import os, sqlite3, sys
os.makedirs(os.path.dirname(sys.argv[1]), exist_ok=True)
db = sqlite3.connect(sys.argv[1])
db.execute("create table t (k integer primary key, v text)")
db.executemany("insert into t (v) values (?)", [(f"row {i}",) for i in range(200)])
db.commit()
db.close()
EOF
	gq "$ws" add -A
	gq "$ws" commit -q -m first
	w "$ws/src/main.c" $'int main(void) { return util(); }\n'
	gq "$ws" commit -q -am second
	w "$ws/docs/guide.md" $'# guide\n\nMore.\n'
	gq "$ws" commit -q -am third
	# staged, unstaged, untracked, ignored
	w "$ws/src/util.c" $'int util(void) { return 2; }\n'
	gq "$ws" add src/util.c
	w "$ws/README.md" $'# fixture\n\nA project, edited.\n'
	w "$ws/notes/todo.txt" $'untracked\n'
	w "$ws/.env" $'API_KEY=canary-secret\n'; chmod 600 "$ws/.env"
	w "$ws/node_modules/left-pad/index.js" $'module.exports = 1;\n'
	w "$ws/dir with space/.cache/blob" $'cache\n'
	# a nested repository
	mkdir -p "$ws/sub"
	gq "$ws/sub" init -q -b main
	w "$ws/sub/lib.c" $'/* sub */\n'
	gq "$ws/sub" add -A
	gq "$ws/sub" commit -q -m sub
	ln -s "$DECOY/project" "$ws/link"
}

outside_hash() {
	{ "$FSOP" tree -mox "$DHOME"; "$FSOP" tree -mox "$DECOY"; } | sha256sum | cut -c1-64
}

make_fixture
REAL_BEFORE=
OUTSIDE_BEFORE=$(outside_hash)
echo "fixture: $(find "$TPL" -type f | wc -l) files, $(git -C "$TPL" ls-files | wc -l) tracked; decoy home $DHOME, decoy project $DECOY"

# ---- the entries ------------------------------------------------------------

G_RUN=0 G_VETOED=0 N_RUN=0 N_RESTORED=0
NOT_VETOED=() NOT_RESTORED=() SKIPPED=() STAGE_VETOED=()

# The real workspace: a copy of the template (a fresh checkout: fresh
# inode numbers, so git's stat cache is refreshed). Every entry gets a fresh
# mount with a fresh state folder over it; the real workspace is proven
# byte-identical after each entry (check_real_unchanged), else it is copied
# again from the template before the next one.
new_workspace() {
	chmod -R u+rwx "$T/ws" 2>/dev/null
	rm -rf "$T/ws"
	cp -a "$TPL" "$T/ws" || { fail "copying the fixture"; return 1; }
	git -C "$T/ws" update-index -q --refresh >/dev/null 2>&1
	git -C "$T/ws/sub" update-index -q --refresh >/dev/null 2>&1
	REAL_BEFORE=
	return 0
}

run_entry() {
	local id=$1 class=$2 expect=$3 cmd=$4 ws=$T/ws mnt=$T/mnt_$1 st=$T/state_$1
	local before after nveto rc restored=1
	echo "--- entry $id ($class, $expect): $cmd"
	[ -n "$REAL_BEFORE" ] || new_workspace || return
	mkdir -p "$mnt"
	WS=$ws MNT=$mnt STATE=$st
	# never run a destructive command unless the mount is really there
	if ! txfs_mount --ws "$ws" --mnt "$mnt" --state "$st" || [ "$(fstype_of "$mnt")" != fuse.txfs ]; then
		fail "entry $id: no txfs mount at $mnt: not run"
		force_detach "$mnt" "$st"
		return
	fi
	before=$(view_hash "$mnt")
	if [ "$id" = 32 ] && [ -e /tmp/clean ] && ! rm -rf /tmp/clean 2>/dev/null; then
		fail "entry 32: /tmp/clean exists and is not ours ($(stat -c %U /tmp/clean)): not run (as root, the scenario runs in a private mount namespace instead)"
		txfs_umount "$mnt" "$st"
		return
	fi
	(cd "$mnt" && HOME=$DHOME WS=$mnt timeout -k 5 60 bash -c "$cmd") >"$T/entry_$id.out" 2>&1
	rc=$?
	[ "$id" = 32 ] && rm -rf /tmp/clean
	rm -rf "$T/new project"	# entry 37 moves files to ../new project
	nveto=$(($(log_count veto) + $(log_count guard)))
	echo "    exit $rc, $nveto vetoes; output ($(wc -l <"$T/entry_$id.out") lines): $(head -c 160 "$T/entry_$id.out" | tr '\n' ' ')"
	[ "$(wc -c <"$T/entry_$id.out")" -gt 320 ] && echo "    ... $(tail -c 160 "$T/entry_$id.out" | tr '\n' ' ')"
	[ $rc = 124 ] || [ $rc = 137 ] && fail "entry $id: timed out after 60 s"
	if [ "$expect" = guard ]; then
		G_RUN=$((G_RUN + 1))
		if [ "$nveto" -gt 0 ]; then
			G_VETOED=$((G_VETOED + 1))
			ok "entry $id: vetoed at least in part ($nveto vetoes in .txfs/log)"
		else
			NOT_VETOED+=("$id")
			fail "entry $id ($cmd): expected a veto or guard event in .txfs/log got none (exit $rc)"
		fi
	elif [ "$nveto" -gt 0 ]; then
		STAGE_VETOED+=("$id")
		echo "    note: entry $id expects stage but met $nveto vetoes"
	fi
	if t 60 bash -c "echo rollback > '$mnt/.txfs/ctl'"; then
		after=$(view_hash "$mnt")
	else
		after="rollback failed: $(cat "$mnt/.txfs/ctl" 2>&1)"
	fi
	N_RUN=$((N_RUN + 1))
	if [ "$after" = "$before" ]; then
		ok "entry $id: after rollback the workspace is byte-identical (tree hash ${after:0:16})"
	else
		restored=0
		fail "entry $id ($cmd): after rollback expected tree hash ${before:0:16} got ${after:0:16}"
		"$FSOP" tree -mox "$TPL" >"$T/tree.tpl" 2>&1
		"$FSOP" tree -mox "$mnt" 2>&1 | diff "$T/tree.tpl" - | head -10 | sed 's/^/    /'
	fi
	txfs_umount "$mnt" "$st" || restored=0
	check_real_unchanged || { restored=0; REAL_BEFORE=; }
	if [ "$(outside_hash)" = "$OUTSIDE_BEFORE" ]; then
		ok "entry $id: decoy home and decoy project unchanged"
	else
		restored=0
		fail "entry $id: the decoy home or the decoy project changed"
	fi
	if [ $restored = 1 ]; then N_RESTORED=$((N_RESTORED + 1)); else NOT_RESTORED+=("$id"); fi
	rm -rf "$st"
}

while IFS=$'\t' read -r id class expect cmd; do
	case $id in '' | '#'*) continue ;; esac
	if [ -n "${TXFS_CORPUS_IDS:-}" ] && ! [[ " $TXFS_CORPUS_IDS " == *" $id "* ]]; then
		continue
	fi
	case "$class:$expect" in
	[RGOP]:stage | [RGOP]:guard) run_entry "$id" "$class" "$expect" "$cmd" </dev/null ;;
	*)
		SKIPPED+=("$id")
		echo "--- entry $id ($class, $expect): not run here: $expect entries belong to txfs run (safety header of the corpus): $cmd"
		;;
	esac
done <"$CORPUS"

echo "corpus: vetoed as expected $G_VETOED/$G_RUN guard entries; restored exactly $N_RESTORED/$N_RUN entries"
[ ${#NOT_VETOED[@]} -gt 0 ] && echo "corpus: guard entries not vetoed: ${NOT_VETOED[*]}"
[ ${#NOT_RESTORED[@]} -gt 0 ] && echo "corpus: entries not restored: ${NOT_RESTORED[*]}"
[ ${#STAGE_VETOED[@]} -gt 0 ] && echo "corpus: stage entries that met a veto: ${STAGE_VETOED[*]}"
echo "corpus: not run here (outside/network, for txfs run): ${SKIPPED[*]}"
# every workspace was checked on its own after its entry: no finish
FINISHED=1
exit 0
