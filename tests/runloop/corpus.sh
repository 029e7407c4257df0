#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# corpus - every entry of the destructive corpus (shared/corpus/
# destructive.tsv) under `txfs run` with the DEFAULT policy (no --policy):
#
#   txfs run --state E/state --no-network --check false --json -- bash -c CMD
#
# in a fresh fixture (byte-identical to a template built once; copied again
# whenever an entry left it changed) as the corpus header describes it: $WS a git
# repository with history, staged, unstaged and untracked changes, .env, a
# nested repository sub/ with its own .git (1,100 files, so that its .git
# holds more objects than the mass-deletion guard allows), node_modules/,
# "dir with space/", 1,200 tracked vendored files, data/app.sqlite, and
# link -> a decoy project outside $WS; $HOME a decoy home with canaries; all
# under /var/tmp (never /tmp, which txfs run leaves writable); $PORT a
# listener on 127.0.0.1 that this scenario starts. --check false forces the
# rollback even when CMD succeeds (a commit would apply the damage).
#
# Checks per entry: the run rolled back (JSON action), nothing is left
# mounted, $WS (including .git) is byte-identical (names, types, modes,
# sizes, owners, mtimes, contents), the decoy home and project are
# byte-identical and nothing appeared beside $WS; then per class:
#   outside: CMD failed (exit != 0), decoys intact (38: /usr modes intact);
#   network: CMD failed and the listener saw no connection;
#   guard:   a "veto" or "guard" event in STATE/audit.log.
# Prints "interception: X/Y (guard+outside+network entries refused at least
# in part)" and "rollback success: Z/W".
#
# SAFETY (the corpus header): every entry runs with HOME = the decoy, only
# under `txfs run` (which refuses to run when it cannot confine), and - as
# root - as the unprivileged user txfstest (runuser), in a private mount
# namespace (unshare -m) whose /tmp and /dev/shm are fresh tmpfs: entry 13
# (`rm -rf /*`) then finds nothing of value even in the folders txfs run
# leaves writable. `outside` entries NEVER run as root: as root they run as
# txfstest, and the runner refuses an outside entry whose user is root.
# Not root: entries run as the current user without a namespace; `outside`
# entries run only if that user is txfstest (13 is then skipped: it needs
# the private /tmp), else they are skipped with a note. Before any outside
# entry, a probe checks that txfs run really refuses a write to the decoy
# home; if not, no outside entry runs.
#
# Environment: TXFS_CORPUS (default $TXFS_SRC/../shared/corpus/
# destructive.tsv; SKIP if missing), TXFS_CORPUS_IDS="1 5 ..." (a subset).
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
command -v git >/dev/null || skip "git is needed"
CORPUS=${TXFS_CORPUS:-${TXFS_SRC:-$(dirname "$0")/../..}/../shared/corpus/destructive.tsv}
[ -r "$CORPUS" ] || skip "the corpus $CORPUS is missing (set TXFS_CORPUS)"

# ---- who runs the entries, and where -------------------------------------------
NS=0 RUNNER=- RUN_OUTSIDE=1 OUTSIDE_NOTE=
if [ "$(id -u)" = 0 ]; then
	command -v unshare >/dev/null || skip "unshare (util-linux) is needed"
	unshare -m --propagation private true 2>/dev/null || skip "cannot make a private mount namespace"
	NS=1 RUNNER=$TEST_USER
	as_user test
elif [ "$(id -un)" = "$TEST_USER" ]; then
	as_user test
else
	as_user test
	RUN_OUTSIDE=0
	OUTSIDE_NOTE="not root and not $TEST_USER: outside entries are skipped (the corpus allows them only as an unprivileged user made for the test)"
fi
GITENV=(env GIT_AUTHOR_NAME=fixture GIT_AUTHOR_EMAIL=fixture@example.invalid
	GIT_COMMITTER_NAME=fixture GIT_COMMITTER_EMAIL=fixture@example.invalid
	GIT_CONFIG_NOSYSTEM=1 HOME="$T")

# ---- the fixture (built once, copied per entry) ------------------------------------
TPL=$T/tpl
w() { mkdir -p "$(dirname "$1")" && printf '%b' "$2" >"$1"; }
g() { "${GITENV[@]}" git -C "$1" "${@:2}" >/dev/null 2>&1 || fail "fixture: git ${*:2} in $1"; }
build_fixture() {
	local ws=$TPL/ws home=$TPL/home decoy=$TPL/decoy i
	mkdir -p "$ws" "$home" "$decoy"
	w "$home/.ssh/id_ed25519" 'CANARY private key\n'
	chmod 700 "$home/.ssh" && chmod 600 "$home/.ssh/id_ed25519"
	w "$home/.bashrc" '# CANARY bashrc\n'
	w "$home/.gitconfig" '[user]\n\tname = canary\n\temail = canary@example.invalid\n[init]\n\tdefaultBranch = main\n'
	w "$home/Documents/thesis.txt" 'CANARY document\n'
	w "$home/projects/tool/web-crawler/crawl.py" '# CANARY crawler\n'
	w "$home/notes.txt" 'CANARY notes\n'
	w "$decoy/main.py" "print('CANARY decoy project')\n"
	w "$decoy/data/db.txt" 'CANARY data\n'
	g "$TPL" init -q -b main ws
	w "$ws/.gitignore" 'node_modules/\n.env\ndir with space/.cache/\nlink\n'
	w "$ws/README.md" '# fixture\n\nA project.\n'
	w "$ws/package.json" '{\n  "name": "fixture",\n  "version": "1.0.0"\n}\n'
	w "$ws/src/main.c" 'int main(void) { return 0; }\n'
	w "$ws/src/util.c" 'int util(void) { return 1; }\n'
	w "$ws/src/util.h" 'int util(void);\n'
	w "$ws/tests/test_main.c" '/* test */\n'
	w "$ws/patches/0001-fix.patch" '--- a\n+++ b\n'
	w "$ws/plan/plan.md" '# plan\n- step\n'
	w "$ws/docs/guide.md" '# guide\n'
	w "$ws/archive/2025.md" '# old notes\n'
	w "$ws/notes/inbox.jsonl" '{"note": 1}\n{"note": 2}\n'
	w "$ws/dir with space/readme.txt" 'spaces\n'
	for i in $(seq 0 1199); do
		[ $((i % 100)) = 0 ] && mkdir -p "$ws/vendor/lib$((i / 100))"
		printf 'int mod%d(void) { return %d; }\n' "$i" "$i" >"$ws/vendor/lib$((i / 100))/mod$i.c"
	done
	mkdir -p "$ws/data"
	"$PY" -c 'import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("create table t (k integer primary key, v text)")
db.executemany("insert into t (v) values (?)", [("row %d" % i,) for i in range(200)])
db.commit()' "$ws/data/app.sqlite" || fail "fixture: sqlite"
	g "$ws" add -A
	g "$ws" commit -q -m first
	w "$ws/src/main.c" 'int main(void) { return util(); }\n'
	g "$ws" commit -q -am second
	w "$ws/docs/guide.md" '# guide\n\nMore.\n'
	g "$ws" commit -q -am third
	# staged, unstaged, untracked, ignored
	w "$ws/src/util.c" 'int util(void) { return 2; }\n'
	g "$ws" add src/util.c
	w "$ws/README.md" '# fixture\n\nA project, edited.\n'
	w "$ws/notes/todo.txt" 'untracked\n'
	w "$ws/.env" 'API_KEY=canary-secret\n'
	chmod 600 "$ws/.env"
	w "$ws/node_modules/left-pad/index.js" 'module.exports = 1;\n'
	w "$ws/node_modules/left-pad/package.json" '{"name": "left-pad"}\n'
	w "$ws/dir with space/.cache/blob" 'cache\n'
	# nested repository with its own history (not tracked by the outer one)
	g "$ws" init -q -b main sub
	for i in $(seq 0 1099); do
		[ $((i % 100)) = 0 ] && mkdir -p "$ws/sub/pkg$((i / 100))"
		printf '/* sub %d */\n' "$i" >"$ws/sub/pkg$((i / 100))/f$i.c"
	done
	g "$ws/sub" add -A
	g "$ws/sub" commit -q -m sub
	# old, fixed times everywhere: any change of a time shows
	find "$TPL" -exec touch -h -d @1600000000 {} +
	as_owner "$TPL"
}

echo "# building the fixture in $TPL"
build_fixture
echo "# fixture: $(find "$TPL/ws" | wc -l) entries in \$WS ($(git -c safe.directory='*' -C "$TPL/ws" ls-files 2>/dev/null | wc -l) tracked), $(find "$TPL/ws/sub/.git" | wc -l) in sub/.git"
# the template as the entries see it: link -> the fixture copy's decoy
ln -s "$T/fx/decoy" "$TPL/ws/link"
touch -h -d @1600000000 "$TPL/ws/link" "$TPL/ws"
as_owner "$TPL/ws/link"
FX_WS='' FX_HOME='' FX_DECOY=''

# ---- the runner (a file: it runs inside the namespace) --------------------------------
cat >"$T/entry.sh" <<'EOF'
#!/bin/bash
# entry.sh NS FX R PORT TXFS USER: run R/cmd.txt under txfs run in the
# fixture FX (FX/ws, FX/home), state R/state (see corpus.sh).
set -u
ns=$1 FX=$2 R=$3 PORT=$4 TXFS=$5 user=$6
if [ "$ns" = 1 ]; then
	# The new namespace holds a copy of every FUSE mount of the tests that
	# run beside this one: detach the copies here, or those tests' daemons
	# cannot exit when they unmount (their umount waits 30 s and fails).
	sed -n 's/^[^ ]* [^ ]* [^ ]* [^ ]* \([^ ]*\) .* - fuse\(\.[^ ]*\)\{0,1\} .*/\1/p' /proc/self/mountinfo |
		sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
	mount -t tmpfs -o mode=1777,size=256m txfs-runloop-tmp /tmp || exit 90
	if [ -d /dev/shm ]; then mount -t tmpfs -o mode=1777,size=64m txfs-runloop-shm /dev/shm || exit 91; fi
fi
as=()
if [ "$user" != - ]; then
	as=(runuser -u "$user" --)
fi
# Never an outside entry as root.
if [ "$(cat "$R/class")" = outside ] && [ "$("${as[@]}" id -u)" = 0 ]; then
	echo "entry.sh: refusing to run an outside entry as root" >"$R/run.err"
	exit 93
fi
cmd=$(cat "$R/cmd.txt")
cd "$FX/ws" || exit 92
timeout -k 5 60 "${as[@]}" env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$FX/home" \
	WS="$FX/ws" PORT="$PORT" LC_ALL=C ASAN_OPTIONS="${ASAN_OPTIONS:-}" UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
	"$TXFS" run --state "$R/state" --no-network --check false --json -- bash -c "$cmd" \
	</dev/null >"$R/run.out" 2>"$R/run.err"
rc=$?
cd /
# Leftovers, seen from inside the namespace (they vanish with it).
if awk -v m="$FX/ws" '$2 == m { f = 1 } END { exit !f }' /proc/self/mounts; then
	echo mounted >"$R/leftover"
	pid=$(tr -dc 0-9 <"$R/state/daemon.pid" 2>/dev/null)
	[ -n "$pid" ] && grep -qa txfs "/proc/$pid/cmdline" 2>/dev/null && kill -9 "$pid"
	timeout 10 fusermount3 -uz "$FX/ws" 2>/dev/null || umount -l "$FX/ws" 2>/dev/null
fi
exit $rc
EOF
chmod 755 "$T/entry.sh"

# ---- the listener -----------------------------------------------------------------------
start_listener 1200

# json_tail FILE FIELD: FIELD of the last {"action":...} report in FILE
# (CMD's own stdout comes before it).
json_tail() {
	"$PY" - "$1" "$2" <<'PY'
import json, sys
s = open(sys.argv[1], errors="replace").read()
i = s.rfind('{"action":')
if i < 0:
    print("NO-REPORT"); sys.exit(0)
try:
    d, _ = json.JSONDecoder().raw_decode(s[i:])
except ValueError:
    print("INVALID-JSON"); sys.exit(0)
v = d.get(sys.argv[2], "")
if isinstance(v, dict):
    v = json.dumps(v, sort_keys=True)
print(v)
PY
}

usr_modes() { find /usr -xdev -printf '%m %U %p\n' 2>/dev/null | sha256sum | cut -c1-64; }

# ---- one entry ------------------------------------------------------------------------------
INTERCEPT=0 INTERCEPT_OF=0 ROLLBACK=0 ROLLBACK_OF=0 SKIPPED=()
declare -A SUMMARY

# fresh_fixture: $FX as built (copied again from the template only when an
# entry left it changed: a copy of 5,000 files is slow on some disks). A copy
# changes every file's ctime and inode number, so git's index is refreshed
# (as the user who runs the entries) before the fixture's snapshot is taken:
# otherwise git would take every tracked file for modified, and rewrite all
# of them on `git reset --hard`.
#
# Each snap walks and hashes the fixture's 5,000 files: run_entry takes the
# snapshots once after an entry (FX_NOW_*) and fresh_fixture compares those
# (nothing runs in between) instead of taking them again; after it, the
# fixture is FX_WS, FX_HOME, FX_DECOY (10 walks an entry before, 3 now).
FX=$T/fx
FX_NOW_WS='' FX_NOW_HOME='' FX_NOW_DECOY=''
fresh_fixture() {
	local now_ws=$FX_NOW_WS now_home=$FX_NOW_HOME now_decoy=$FX_NOW_DECOY
	FX_NOW_WS='' FX_NOW_HOME='' FX_NOW_DECOY=''
	if [ -d "$FX" ] && [ "${now_ws:-$(snap "$FX/ws")}" = "$FX_WS" ] &&
		[ "${now_home:-$(snap "$FX/home")}" = "$FX_HOME" ] &&
		[ "${now_decoy:-$(snap "$FX/decoy")}" = "$FX_DECOY" ] &&
		[ "$(ls -A "$FX")" = "$(printf 'decoy\nhome\nws')" ]; then
		return 0
	fi
	[ -d "$FX" ] && echo "#   (the fixture changed: copying it again)"
	rm -rf "$FX"
	cp -a "$TPL" "$FX"
	local d
	for d in "$FX/ws" "$FX/ws/sub"; do
		"${AS[@]}" env -i PATH=/usr/bin:/bin HOME="$FX/home" LC_ALL=C \
			git -C "$d" update-index -q --really-refresh >/dev/null 2>&1
	done
	touch -h -d @1600000000 "$FX/ws/.git" "$FX/ws/sub/.git"
	FX_WS=$(snap "$FX/ws") FX_HOME=$(snap "$FX/home") FX_DECOY=$(snap "$FX/decoy")
}

run_entry() {
	local id=$1 class=$2 expect=$3 cmd=$4
	local R=$T/r$1 ws_before home_before decoy_before around_before ws_now home_now decoy_now
	local usr_before='' rc action cexit vetoes count_before intercepted=0 rolled=0 why=()
	fresh_fixture
	mkdir -p "$R/state"
	printf '%s' "$cmd" >"$R/cmd.txt"
	printf '%s' "$expect" >"$R/class"
	as_owner "$R/state"
	chmod 755 "$R"
	# as fresh_fixture left it (its snapshots: nothing in FX changed since)
	ws_before=$FX_WS
	home_before=$FX_HOME
	decoy_before=$FX_DECOY
	around_before=$(ls -A "$FX")
	[ "$id" = 38 ] && usr_before=$(usr_modes)
	count_before=$(count)
	if [ "$NS" = 1 ]; then
		unshare -m --propagation private -- "$T/entry.sh" 1 "$FX" "$R" "$PORT" "$TXFS_BIN" "$RUNNER"
	else
		"$T/entry.sh" 0 "$FX" "$R" "$PORT" "$TXFS_BIN" -
	fi
	rc=$?
	action=$(json_tail "$R/run.out" action)
	cexit=$(json_tail "$R/run.out" exit)
	vetoes=$(grep -cE '"event":"(veto|guard)"' "$R/state/audit.log" 2>/dev/null)
	ws_now=$(snap "$FX/ws") home_now=$(snap "$FX/home") decoy_now=$(snap "$FX/decoy")
	# -- rollback
	if [ "$action" = rolled-back ]; then rolled=1; else why+=("action '$action' (txfs run exit $rc)"); fi
	if [ -e "$R/leftover" ] || is_mounted "$FX/ws"; then rolled=0; why+=("left mounted"); fi
	if [ -n "$(daemon_pid "$R/state")" ]; then rolled=0; why+=("daemon alive"); fi
	if [ "$ws_now" != "$ws_before" ]; then
		rolled=0
		why+=("\$WS changed: $(diff <(echo "$ws_before") <(echo "$ws_now") | grep '^[<>]' | head -4 | tr '\n' ';')")
	fi
	ROLLBACK_OF=$((ROLLBACK_OF + 1))
	if [ $rolled = 1 ]; then
		ROLLBACK=$((ROLLBACK + 1))
		ok "entry $id ($expect): rolled back, nothing left mounted, \$WS byte-identical (incl. .git)"
	else
		fail "entry $id ($expect) [$cmd]: rollback: ${why[*]}; stderr: $(grep -v 'current directory' "$R/run.err" | tail -n 3 | head -c 300)"
	fi
	# -- outside the workspace: always
	local outside_ok=1
	if [ "$home_now" != "$home_before" ]; then outside_ok=0; fail "entry $id ($expect) [$cmd]: the decoy home changed: $(diff <(echo "$home_before") <(echo "$home_now") | grep '^[<>]' | head -4 | tr '\n' ';')"; fi
	if [ "$decoy_now" != "$decoy_before" ]; then outside_ok=0; fail "entry $id ($expect) [$cmd]: the decoy project changed"; fi
	if [ "$(ls -A "$FX")" != "$around_before" ]; then
		outside_ok=0
		fail "entry $id ($expect) [$cmd]: something appeared beside \$WS: $(diff <(echo "$around_before") <(ls -A "$FX") | grep '^>' | head -3 | tr '\n' ' ')"
	fi
	if [ -n "$usr_before" ] && [ "$(usr_modes)" != "$usr_before" ]; then outside_ok=0; fail "entry $id: /usr modes or owners changed"; fi
	# -- per class
	case $expect in
	outside)
		INTERCEPT_OF=$((INTERCEPT_OF + 1))
		if [ "$outside_ok" = 1 ] && [ -n "$cexit" ] && [ "$cexit" != 0 ] && [ "$cexit" != NO-REPORT ]; then
			intercepted=1
			ok "entry $id (outside): refused (CMD exit $cexit), decoy home and project byte-identical"
		else
			fail "entry $id (outside) [$cmd]: expected CMD to fail with the decoys intact got CMD exit '$cexit'"
		fi ;;
	network)
		INTERCEPT_OF=$((INTERCEPT_OF + 1))
		if [ -n "$cexit" ] && [ "$cexit" != 0 ] && [ "$cexit" != NO-REPORT ] && [ "$(count)" = "$count_before" ]; then
			intercepted=1
			ok "entry $id (network): failed (CMD exit $cexit), the listener saw no connection"
		else
			fail "entry $id (network) [$cmd]: expected failure and no connection got CMD exit '$cexit', connections $count_before -> $(count)"
		fi ;;
	guard)
		INTERCEPT_OF=$((INTERCEPT_OF + 1))
		if [ "${vetoes:-0}" -gt 0 ]; then
			intercepted=1
			ok "entry $id (guard): vetoed at least in part ($vetoes veto/guard events: $(grep -m1 -oE '"event":"(veto|guard)"[^}]*' "$R/state/audit.log" | head -c 160))"
			# txfs run's command cannot commit: its hint says so
			if grep -q '"hint":"[^"]*echo commit' "$R/state/audit.log"; then
				fail "entry $id (guard): the hint tells txfs run's command to echo commit > .txfs/ctl, which it refuses"
			elif grep -q '"hint":"[^"]*txfs run commits when it exits 0' "$R/state/audit.log"; then
				ok "entry $id (guard): the hint says txfs run commits when the command exits 0"
			fi
		else
			fail "entry $id (guard) [$cmd]: no veto or guard event in STATE/audit.log"
		fi ;;
	esac
	[ $intercepted = 1 ] && INTERCEPT=$((INTERCEPT + 1))
	SUMMARY[$id]=$(printf '%-3s %-7s CMD exit %-4s action %-12s vetoes %-5s %s%s' "$id" "$expect" "$cexit" "$action" "${vetoes:-0}" \
		"$([ $rolled = 1 ] && echo 'WS identical' || echo 'WS CHANGED/NOT ROLLED BACK')" \
		"$(case $expect in outside|network|guard) [ $intercepted = 1 ] && echo ', intercepted' || echo ', NOT INTERCEPTED';; esac)")
	echo "#   ${SUMMARY[$id]}"
	# the state folder is the evidence (TXFS_KEEP=1 keeps it)
	[ "${TXFS_KEEP:-0}" = 1 ] || rm -rf "$R"
	FX_NOW_WS=$ws_now FX_NOW_HOME=$home_now FX_NOW_DECOY=$decoy_now
}

# ---- the probe: txfs run confines, or no outside entry runs ---------------------------------
probe_confinement() {
	local P=$T/probe R=$T/probe/r
	mkdir -p "$P/ws" "$P/home" "$R/state"
	echo canary >"$P/home/canary"
	printf 'probe' >"$R/class"
	printf '%s' 'echo overwritten > "$HOME/canary"; touch "$HOME/new"; exit 0' >"$R/cmd.txt"
	as_owner "$P"
	chmod 755 "$P" "$R"
	if [ "$NS" = 1 ]; then
		unshare -m --propagation private -- "$T/entry.sh" 1 "$P" "$R" 0 "$TXFS_BIN" "$RUNNER"
	else
		"$T/entry.sh" 0 "$P" "$R" 0 "$TXFS_BIN" -
	fi
	if [ "$(cat "$P/home/canary")" = canary ] && [ ! -e "$P/home/new" ] &&
		[ "$(json_tail "$R/run.out" action)" = rolled-back ]; then
		ok "probe: txfs run refuses writes to the decoy home (outside entries may run)"
		return 0
	fi
	fail "probe: txfs run did NOT refuse a write to the decoy home: outside entries are not run ($(head -c 300 "$R/run.err"))"
	return 1
}

if [ "$RUN_OUTSIDE" = 1 ]; then
	probe_confinement || RUN_OUTSIDE=0
fi
[ -n "$OUTSIDE_NOTE" ] && echo "# note: $OUTSIDE_NOTE"
echo "# entries run as $([ "$NS" = 1 ] && echo "$RUNNER, in a private mount namespace with fresh /tmp and /dev/shm" || id -un), HOME = decoy, cwd = \$WS"

ids=" ${TXFS_CORPUS_IDS:-} "
while IFS=$'\t' read -r id class expect cmd; do
	case $id in '#'* | '') continue ;; esac
	[ "$ids" = "  " ] || [[ $ids == *" $id "* ]] || continue
	if [ "$expect" = outside ] && [ "$RUN_OUTSIDE" = 0 ]; then
		SKIPPED+=("$id"); continue
	fi
	if [ "$expect" = outside ] && [ "$NS" = 0 ] && [ "$id" = 13 ]; then
		SKIPPED+=("$id (needs root for a private /tmp)"); continue
	fi
	run_entry "$id" "$class" "$expect" "$cmd"
done <"$CORPUS"

stop_listener
[ ${#SKIPPED[@]} = 0 ] || echo "# skipped (outside entries, see the note above): ${SKIPPED[*]}"
echo "interception: $INTERCEPT/$INTERCEPT_OF (guard+outside+network entries refused at least in part)"
echo "rollback success: $ROLLBACK/$ROLLBACK_OF"
finish
