#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sup_exec_identity - issue 9 point 6: with `exec deny tools/evil.sh`, the
# supervisor refuses (EACCES, exit 126) any program with that content
# wherever it is executed from: a copy in /tmp, a copy in /dev/shm, a hard
# link in the workspace, a symlink to the copy, through python os.execv and
# os.execve by descriptor (execveat AT_EMPTY_PATH); after CMD rewrites
# evil.sh, its new content is refused too (hashed again on change). A
# program of the same size and different content (tools/good.sh) and
# system programs run. Without the policy, the copy runs. As root and as
# the unprivileged test user.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
printf '# exec deny by content\nexec deny tools/evil.sh\n' >"$T/exec.policy"
chmod 644 "$T/exec.policy"

ATTEMPTS='
exec 1>&2
try() { "$@"; echo "rc=$? $1"; }
c=$(mktemp /tmp/txfs-sup-XXXXXX); cp tools/evil.sh "$c"; chmod 755 "$c"
s=$(mktemp /dev/shm/txfs-sup-XXXXXX); cp tools/evil.sh "$s"; chmod 755 "$s"
ln tools/evil.sh f2
ln -s "$c" sl
try "$c"
try "$s"
try ./f2
try ./sl
"$PY" -c "import os, sys
try:
    os.execv(sys.argv[1], [sys.argv[1]])
except OSError as e:
    print(\"rc=126 execv errno\", e.errno)" "$c"
"$PY" -c "import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    os.execve(fd, [sys.argv[1]], {})
except OSError as e:
    print(\"rc=126 fexecve errno\", e.errno)" "$c"
printf "#!/bin/sh\necho new-evil-ran\n" > tools/evil.sh
cp tools/evil.sh "$c"
try "$c"
try ./tools/good.sh
try /bin/true
rm -f "$c" "$s"
'

body() {
	ws_fixture
	run_txfs -- --json --check false --policy "$T/exec.policy" -- bash -c "$ATTEMPTS"
	local n
	n=$(grep -c '^rc=126' "$RUN_ERR")
	if [ "$n" = 7 ] && ! grep -q 'evil-ran' "$RUN_ERR"; then
		ok "[$WHO] copies (/tmp, /dev/shm), hard link, symlink, execv, fexecve, rewritten content: all refused"
	else
		fail "[$WHO] exec by content: $n of 7 refused: $(grep -E 'rc=|evil-ran' "$RUN_ERR" | tr '\n' ' ' | head -c 500)"
	fi
	if audit_has '"event":"veto","op":"run-exec","path":"/tmp/txfs-sup-'; then
		ok "[$WHO] the refused exec of the copy is in STATE/audit.log"
	else
		fail "[$WHO] no run-exec veto in STATE/audit.log: $(tail -c 300 "$STATE/audit.log")"
	fi
	if grep -q 'execv errno 13' "$RUN_ERR" && grep -q 'fexecve errno 13' "$RUN_ERR"; then
		ok "[$WHO] execv and fexecve fail with EACCES"
	else
		fail "[$WHO] execv/fexecve errno: $(grep errno "$RUN_ERR" | head -c 200)"
	fi
	if grep -q '^good-ran$' "$RUN_ERR" && grep -q '^rc=0 ./tools/good.sh$' "$RUN_ERR" &&
		grep -q '^rc=0 /bin/true$' "$RUN_ERR"; then
		ok "[$WHO] a program of the same size (tools/good.sh) and /bin/true run"
	else
		fail "[$WHO] other programs: $(grep -E 'rc=|ran' "$RUN_ERR" | tr '\n' ' ' | head -c 400)"
	fi

	new_state
	run_txfs -- --json --check false -- bash -c \
		'exec 1>&2; c=$(mktemp /tmp/txfs-sup-XXXXXX); cp tools/evil.sh "$c"; chmod 755 "$c"; "$c"; rm -f "$c"'
	if grep -q '^evil-ran$' "$RUN_ERR"; then
		ok "[$WHO] without the policy, the copy runs"
	else
		fail "[$WHO] without the policy: $(head -c 300 "$RUN_ERR")"
	fi
}

for_each_user body
finish
