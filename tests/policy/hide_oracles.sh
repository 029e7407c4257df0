#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hide_oracles - issue 23 hole 4: names the policy hides cannot be told
# from names that do not exist. Policy `hide **/.env* **/secretdir/`; as
# root and as txfstest (unpriv.sh), with onlyhidden/ (holds only .env),
# trulyempty/ (holds nothing), mixed/ (.env and a visible file), p1/ (a
# hidden secretdir/ and a visible sub/) and p2/ (a visible sub/ only):
#   - rmdir onlyhidden: EACCES with a veto naming the folder, as any
#     protected operation, never ENOTEMPTY (shell rmdir, python os.rmdir,
#     rm -rf); rename of an empty folder over it: EACCES (mv -T, python
#     renameat2); trulyempty/ still goes; mixed/ says ENOTEMPTY as usual;
#   - st_nlink of p1 and p2 is the same (1: not counted);
#   - O_CREAT|O_EXCL, stat, getxattr, ls -d of onlyhidden/.env and of
#     trulyempty/.env (which does not exist) give the same errors;
# then after a commit the hidden real files are byte-identical, onlyhidden/
# is still there, trulyempty/ is gone, and the workspace mounts again.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"
. "$(dirname "$0")/unpriv.sh"

rm -rf "$WS" && mkdir -p "$WS/onlyhidden" "$WS/trulyempty" "$WS/mixed" \
	"$WS/p1/secretdir" "$WS/p1/sub" "$WS/p2/sub"
printf 'API_KEY=only\n' >"$WS/onlyhidden/.env"
printf 'API_KEY=mixed\n' >"$WS/mixed/.env"
printf 'visible\n' >"$WS/mixed/visible.txt"
printf 'deep secret\n' >"$WS/p1/secretdir/key"
hidden_sums() { (cd "$WS" && sha256sum onlyhidden/.env mixed/.env p1/secretdir/key); }
hidden_sums >"$T/hidden.before"

use_policy hideo <<'EOF'
# hide_oracles.sh
hide **/.env* **/secretdir/
EOF
txfs_mount || exit 1

# errors for a hidden name and for a name that does not exist: equal
same() {
	local what=$1 a b
	a=$(in_mnt "$2" 2>&1 | sed 's/onlyhidden/X/g')
	b=$(in_mnt "$3" 2>&1 | sed 's/trulyempty/X/g')
	check_eq "$what: hidden and missing answer alike" "$b" "$a"
}

check_eq "ls -A onlyhidden is empty" "" "$(in_mnt 'ls -A onlyhidden')"
same "ls -d" 'ls -d onlyhidden/.env; echo rc=$?' 'ls -d trulyempty/.env; echo rc=$?'
same "stat" 'stat -c %n onlyhidden/.env; echo rc=$?' 'stat -c %n trulyempty/.env; echo rc=$?'
same "O_CREAT|O_EXCL" '"$PYTHON" "$PYOP" open onlyhidden/.env w,creat,excl' \
	'"$PYTHON" "$PYOP" open trulyempty/.env w,creat,excl'
same "getxattr" '"$PYTHON" -c "import os
try: os.getxattr(\"onlyhidden/.env\", \"user.x\")
except OSError as e: print(e.errno)"' '"$PYTHON" -c "import os
try: os.getxattr(\"trulyempty/.env\", \"user.x\")
except OSError as e: print(e.errno)"'
check_eq "st_nlink of a folder with a hidden subfolder equals one without" \
	"$(in_mnt 'stat -c %h p2')" "$(in_mnt 'stat -c %h p1')"
check_eq "st_nlink of folders is 1 (not counted) under hide rules" 1 "$(in_mnt 'stat -c %h p1')"

refused "rmdir onlyhidden: EACCES, not ENOTEMPTY" 'rmdir onlyhidden'
py "python os.rmdir(onlyhidden)" EACCES rmdir onlyhidden
refused "rm -rf onlyhidden" 'rm -rf onlyhidden'
in_mnt 'rm -rf onlyhidden' 2>&1 | qgrep -i "not empty" &&
	fail "rm -rf onlyhidden says 'not empty'" || ok "rm -rf onlyhidden never says 'not empty'"
allowed "mkdir newd" 'mkdir newd newd2'
refused "mv -T newd onlyhidden (rename over it)" 'mv -T newd onlyhidden'
py "python renameat2(newd2, onlyhidden)" EACCES rename2 newd2 onlyhidden none
log_veto "rmdir onlyhidden" delete onlyhidden 2
py "rmdir mixed: ENOTEMPTY (a visible file)" ENOTEMPTY rmdir mixed
allowed "rmdir trulyempty" 'rmdir trulyempty && rmdir newd newd2'
t 60 bash -c "echo commit > '$MNT/.txfs/ctl'" || fail "commit"
txfs_umount
hidden_sums >"$T/hidden.after"
diff "$T/hidden.before" "$T/hidden.after" >/dev/null &&
	ok "after commit: the hidden real files are byte-identical" ||
	fail "hidden files changed: $(diff "$T/hidden.before" "$T/hidden.after" | tr '\n' ' ')"
[ -d "$WS/onlyhidden" ] && [ ! -e "$WS/trulyempty" ] &&
	ok "after commit: onlyhidden/ kept, trulyempty/ removed" || fail "after commit: $(ls -A "$WS")"
txfs_mount || exit 1
check_eq "mounts again: mixed/ lists its visible file" visible.txt "$(in_mnt 'ls -A mixed')"
txfs_umount
FINISHED=1
exit 0
