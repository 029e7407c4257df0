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
}

for_each_user body
finish
