#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_deny - a policy `exec deny tools/evil.sh` (a script inside the
# workspace): under `txfs run --policy`, executing it fails with EACCES
# (shell: exit 126 "Permission denied"; python os.execv: errno 13) and an
# "exec" veto naming tools/evil.sh and its rule line is in STATE/audit.log; tools/good.sh and
# system programs still run, and tools/evil.sh can still be read. Without
# the policy, evil.sh runs. As root and as the unprivileged test user.
# (Running it as data, `sh tools/evil.sh`, is not an exec and is allowed:
# reported, not judged.)
# Issue 23.6, the dynamic loader run as a program on a denied ELF program
# (tools/evil-elf, built here): `ld.so ./tools/evil-elf`, with loader
# options (--argv0, --library-path), on a copy in /tmp, through a copy of
# the loader in /tmp, and through execveat: each refused (EACCES), the
# program did not run; `ld.so /bin/echo` still runs.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"

printf '# exec deny for txfs run\nexec deny tools/evil.sh\n' >"$T/exec.policy"
chmod 644 "$T/exec.policy"

body() {
	local u=$WHO
	ws_fixture
	"$TXFS_BIN" policy check "$T/exec.policy" >"$T/pc.out" 2>&1 ||
		fail "txfs policy check rejects 'exec deny tools/evil.sh': $(cat "$T/pc.out")"

	run_txfs -- --json --check false --policy "$T/exec.policy" -- bash -c \
		'exec 1>&2; ./tools/evil.sh; echo "evil rc=$?"'
	if grep -q '^evil rc=126$' "$RUN_ERR" && grep -q 'Permission denied' "$RUN_ERR" && ! grep -q evil-ran "$RUN_ERR"; then
		ok "[$u] ./tools/evil.sh: exit 126, Permission denied, did not run"
	else
		fail "[$u] ./tools/evil.sh: expected exit 126 and 'Permission denied' got: $(grep -vE 'current directory|^txfs: run' "$RUN_ERR" | head -c 300)"
	fi
	if audit_has '"event":"veto".*"op":"exec".*tools/evil\.sh'; then
		ok "[$u] exec veto logged in STATE/audit.log: $(grep -m1 '"op":"exec"' "$STATE/audit.log" | head -c 200)"
	else
		fail "[$u] no exec veto for tools/evil.sh in STATE/audit.log: $(head -c 400 "$STATE/audit.log" 2>&1)"
	fi
	# DESIGN 1.5: every veto is logged with its rule line (exec.policy:2)
	if audit_has '"op":"exec".*"rule":"[^"]*exec\.policy:2"'; then
		ok "[$u] the exec veto names its rule (exec.policy:2)"
	else
		fail "[$u] the exec veto does not name its rule: expected \"rule\":\"$T/exec.policy:2\" got $(grep -m1 -o '"rule":[^,]*' "$STATE/audit.log")"
	fi
	check_eq "[$u] the JSON report counts the veto (transaction.vetoes >= 1)" yes \
		"$(printf '%s' "$OUT" | "$PY" -c 'import json,sys; print("yes" if json.load(sys.stdin)["transaction"]["vetoes"] >= 1 else "no")' 2>&1)"

	new_state
	run_txfs -- --json --check false --policy "$T/exec.policy" -- "$PY" -c '
import os, sys
try:
    os.execv("tools/evil.sh", ["tools/evil.sh"])
except OSError as e:
    print("errno", e.errno, file=sys.stderr)
    sys.exit(0 if e.errno == 13 else 1)
'
	if [ "$(jget exit)" = 0 ] && grep -q '^errno 13$' "$RUN_ERR"; then
		ok "[$u] python os.execv(tools/evil.sh): EACCES"
	else
		fail "[$u] python os.execv(tools/evil.sh): expected EACCES got exit $(jget exit): $(grep -vE 'current directory|^txfs: run' "$RUN_ERR" | head -c 300)"
	fi

	new_state
	run_txfs -- --json --check false --policy "$T/exec.policy" -- tools/evil.sh
	if [ "$(jget exit)" != 0 ] && ! grep -q evil-ran "$RUN_OUT" "$RUN_ERR"; then
		ok "[$u] txfs run -- tools/evil.sh (CMD itself denied): exit $(jget exit)"
	else
		fail "[$u] txfs run -- tools/evil.sh ran: exit $(jget exit)"
	fi

	new_state
	run_txfs -- --json --check false --policy "$T/exec.policy" -- bash -c \
		'exec 1>&2; ./tools/good.sh && tools/good.sh && (cd tools && ./good.sh) && ls >/dev/null && "$PY" -c "print(1)" >/dev/null && cat tools/evil.sh >/dev/null && echo ALL-OK'
	if [ "$(jget exit)" = 0 ] && [ "$(grep -c good-ran "$RUN_ERR")" = 3 ] && grep -q ALL-OK "$RUN_ERR"; then
		ok "[$u] other scripts and programs run; evil.sh is still readable"
	else
		fail "[$u] other scripts: exit $(jget exit): $(grep -vE 'current directory|^txfs: run' "$RUN_ERR" | head -c 300)"
	fi
	if audit_has '"op":"exec"'; then fail "[$u] a veto was logged for allowed programs: $(grep '"op":"exec"' "$STATE/audit.log" | head -c 300)"; else ok "[$u] no exec veto for allowed programs"; fi

	new_state
	run_txfs -- --json --check false -- bash -c 'exec 1>&2; ./tools/evil.sh'
	if [ "$(jget exit)" = 0 ] && grep -q evil-ran "$RUN_ERR"; then
		ok "[$u] without the policy, tools/evil.sh runs"
	else
		fail "[$u] without the policy, tools/evil.sh: exit $(jget exit): $(head -c 300 "$RUN_ERR")"
	fi

	new_state
	run_txfs -- --json --check false --policy "$T/exec.policy" -- bash -c 'exec 1>&2; sh tools/evil.sh'
	echo "# note: 'sh tools/evil.sh' (read as data, not executed) under the policy: exit $(jget exit)$(grep -q evil-ran "$RUN_ERR" && echo ', it ran')"

	# the dynamic loader as a program (issue 23.6)
	[ -n "$LOADER" ] || return 0
	cp "$T/evil-elf" "$WS/tools/evil-elf" && as_owner "$WS/tools/evil-elf"
	new_state
	run_txfs -- --json --check false --policy "$T/elf.policy" -- bash -c "exec 1>&2
		L=$LOADER
		\$L ./tools/evil-elf; echo rc-plain=\$?
		\$L --argv0 x --library-path /lib ./tools/evil-elf; echo rc-options=\$?
		cp tools/evil-elf /tmp/evil-copy-\$\$; \$L /tmp/evil-copy-\$\$; echo rc-copy=\$?
		cp \$L /tmp/ld-copy-\$\$; /tmp/ld-copy-\$\$ ./tools/evil-elf; echo rc-ldcopy=\$?
		\"\$PY\" -c 'import os, sys
fd = os.open(sys.argv[1], os.O_PATH)
try:
    os.execve(fd, [\"ld\", \"tools/evil-elf\"], {})
except OSError as e:
    print(\"rc-execveat=%d\" % e.errno, file=sys.stderr)' \$L
		rm -f /tmp/evil-copy-\$\$ /tmp/ld-copy-\$\$
		\$L /bin/echo loader-ok"
	if ! grep -q evil-elf-ran "$RUN_ERR" &&
		[ "$(grep -c -E '^rc-(plain|options|copy|ldcopy)=126$|^rc-execveat=13$' "$RUN_ERR")" = 5 ] &&
		grep -q '^loader-ok$' "$RUN_ERR"; then
		ok "[$u] ld.so on a denied program (plain, options, a copy, a loader copy, execveat): refused; ld.so /bin/echo runs"
	else
		fail "[$u] ld.so on a denied program: $(grep -E '^rc-|evil-elf-ran|loader-ok' "$RUN_ERR" | tr '\n' ' ') $(grep -vE 'current directory|^rc-' "$RUN_ERR" | head -c 300)"
	fi
	if audit_has '"op":"run-exec".*evil'; then
		ok "[$u] the loader vetoes are in STATE/audit.log"
	else
		fail "[$u] no run-exec veto in STATE/audit.log: $(tail -c 300 "$STATE/audit.log")"
	fi
}

# A denied ELF program for the loader checks (issue 23.6).
LOADER=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
[ -x "$LOADER" ] || LOADER=
if [ -n "$LOADER" ] && command -v cc >/dev/null &&
	printf '#include <stdio.h>\nint main(void) { puts("evil-elf-ran"); return 0; }\n' >"$T/evil.c" &&
	cc -o "$T/evil-elf" "$T/evil.c"; then
	printf 'exec deny tools/evil-elf\n' >"$T/elf.policy" && chmod 644 "$T/elf.policy"
else
	LOADER=
	echo "# no /lib64/ld-linux-x86-64.so.2 or no cc: the loader checks are not run"
fi

for_each_user body
finish
