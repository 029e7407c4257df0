#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# known_syscalls - issue 23.3 through the real loop: with the allow-list
# filter (cli/sandbox/confine_known.c) under `txfs run`, as root and as the
# unprivileged test user,
#   - ordinary programs still work and their results are committed: sh,
#     make + cc (a C program built and run), git (init, add, commit),
#     python3 (threads, a subprocess), node (a child process, a Worker,
#     fs), npm (init -y, run a script);
#   - every number from 0 to 1023 that is not listed fails with ENOSYS
#     (tests/tools/sysnr; uretprobe and uprobe pass seccomp by the
#     kernel's own rule);
#   - file_setattr and file_getattr on a decoy outside fail with ENOSYS
#     and its inode flags are unchanged.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
for p in git make cc node npm; do
	command -v "$p" >/dev/null || skip "$p is needed"
done
"$CONFINED_EXEC" --known >"$T/known" && chmod 644 "$T/known"

PROGRAMS='set -e
export npm_config_cache=/tmp/npm-cache-$$ npm_config_update_notifier=false
printf "#include <stdio.h>\nint main(void) { puts(\"built-ok\"); return 0; }\n" > hello.c
printf "hello: hello.c\n\tcc -O1 -o hello hello.c\n" > Makefile
make -s
./hello > built.txt
git init -q repo
cd repo
echo tracked > f.txt
git -c user.name=t -c user.email=t@example.invalid add f.txt
git -c user.name=t -c user.email=t@example.invalid commit -qm one
git log --format=%s > ../git.txt
cd ..
"$PY" -c "
import subprocess, threading
out = []
t = threading.Thread(target=lambda: out.append(subprocess.run([\"echo\", \"py-ok\"], capture_output=True, text=True).stdout.strip()))
t.start(); t.join()
open(\"py.txt\", \"w\").write(out[0] + \"\n\")"
node -e "
const { execFileSync } = require(\"child_process\"), fs = require(\"fs\"), { Worker } = require(\"worker_threads\");
const w = new Worker(\"require(\\\"worker_threads\\\").parentPort.postMessage(6 * 7)\", { eval: true });
w.on(\"message\", (m) => { fs.writeFileSync(\"node.txt\", execFileSync(\"echo\", [\"node-ok\"]).toString().trim() + \" \" + m + \"\n\"); w.terminate(); });"
mkdir pkg && cd pkg && npm init -y >/dev/null
node -e "const p = require(\"./package.json\"); p.scripts = { hi: \"echo npm-ok > ../npm.txt\" }; require(\"fs\").writeFileSync(\"package.json\", JSON.stringify(p))"
npm run -s hi
cd .. && rm -rf /tmp/npm-cache-$$
echo PROGRAMS-DONE >&2'

body() {
	local before
	ws_fixture
	RUN_SECS=180 run_txfs -- --json -- bash -c "$PROGRAMS"
	check_eq "[$WHO] sh, make, cc, git, python3, node, npm: committed" "committed 0" "$(jget action) $(jget exit)"
	check_eq "[$WHO] their results are in the workspace" \
		"built-ok|one|py-ok|node-ok 42|npm-ok" \
		"$(cat "$WS/built.txt" "$WS/git.txt" "$WS/py.txt" "$WS/node.txt" "$WS/npm.txt" 2>&1 | paste -sd'|')"
	[ "$(jget exit)" = 0 ] || echo "# stderr: $(tail -c 600 "$RUN_ERR")"

	new_state
	run_txfs -- --json -- "$SYSNR" sweep "$T/known" 1023
	if grep -q '^SWEEP checked=[1-9]' "$RUN_OUT" &&
		! grep -v -e '^SWEEP' -e '^{' "$RUN_OUT" | grep -vE '^(335 signal 4|336 No such device or address)$' | qgrep .; then
		ok "[$WHO] txfs run: every unlisted number 0-1023 fails with ENOSYS ($(grep '^SWEEP' "$RUN_OUT"))"
	else
		fail "[$WHO] txfs run: unlisted numbers that did not fail with ENOSYS: $(grep -v '^{' "$RUN_OUT" | head -5 | tr '\n' ';') $(head -c 300 "$RUN_ERR")"
	fi

	D=$HOME_DECOY/notes.txt
	before=$(lsattr "$D" | cut -d' ' -f1)
	new_state
	run_txfs -- --json --check false -- "$SYSNR" fileattr "$D"
	check_eq "[$WHO] txfs run: file_getattr, file_setattr on a decoy outside: ENOSYS" \
		"file_getattr 38|file_setattr 38" "$(grep '^file_' "$RUN_OUT" | paste -sd'|')"
	check_eq "[$WHO] the decoy's inode flags are unchanged" "$before" "$(lsattr "$D" | cut -d' ' -f1)"
}

for_each_user body
finish
