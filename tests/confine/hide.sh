#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hide - confine_opts.hidden (the state folder of txfs run and exec): a
# folder the confined command cannot read, in both ways confine.c has:
# a private mount namespace (the default) and, with --no-ns (as where
# unprivileged user namespaces are disabled), Landlock read rules. Each
# way: the secret is not read by path, through a symlink planted before,
# by ".." from the workspace, by openat() from a parent dirfd, through
# /proc/self/fd of that dirfd, nor through an O_PATH fd on the folder;
# git, cc, python and node work beside it; with the read rules, / cannot
# be listed (documented), the workspace can.
. "$(dirname "$0")/lib.sh"

require_landlock
fixture
STATE=$T/state
mkdir -p "$STATE/history" && echo "txfs-hide-secret" >"$STATE/history/secret"
as_owner "$STATE"
ln -s "$STATE" "$WS/stlink"
as_owner "$WS"
before=$(tree_state "$STATE")

for mode in ns no-ns; do
	opts=(--hide "$STATE")
	[ $mode = no-ns ] && opts+=(--no-ns)
	must_fail "[$mode] by absolute path" "${opts[@]}" -- cat "$STATE/history/secret"
	must_fail "[$mode] listing it" "${opts[@]}" -- sh -c "ls -A '$STATE' | grep . >/dev/null"
	must_fail "[$mode] through a symlink planted before" "${opts[@]}" -- cat stlink/history/secret
	must_fail "[$mode] by '..' from the workspace" "${opts[@]}" -- cat ../state/history/secret
	if [ -n "$PY" ]; then
		must_fail "[$mode] openat() from a parent dirfd" "${opts[@]}" -- "$PY" -c \
			"import os; d = os.open('$T', os.O_PATH | os.O_DIRECTORY); print(os.read(os.open('state/history/secret', os.O_RDONLY, dir_fd=d), 99))"
		must_fail "[$mode] /proc/self/fd of a parent dirfd" "${opts[@]}" -- "$PY" -c \
			"import os; d = os.open('$T', os.O_RDONLY | os.O_DIRECTORY); print(open('/proc/self/fd/%d/state/history/secret' % d).read())"
		must_fail "[$mode] an O_PATH fd on the folder" "${opts[@]}" -- "$PY" -c \
			"import os; d = os.open('$STATE', os.O_PATH | os.O_DIRECTORY); print(open('/proc/self/fd/%d/history/secret' % d).read())"
	fi
	confined "${opts[@]}" -- sh -c "cat '$STATE/history/secret' stlink/history/secret; grep -r secret '$T' 2>/dev/null" >"$T/out" 2>&1
	grep -q txfs-hide-secret "$T/out" && fail "[$mode] the secret was printed: $(head -c 300 "$T/out")" ||
		ok "[$mode] the secret is in no output (cat, grep -r of the parent)"
	must_pass "[$mode] git, cc and python work beside it" "${opts[@]}" -- sh -c \
		'rm -rf g && mkdir g && cd g && git init -q && echo x > x && git add x &&
		git -c user.name=t -c user.email=t@t commit -qm x && git log --oneline | grep x >/dev/null &&
		cd .. && rm -rf g && cc -o "$TMPDIR/m" src/main.c && "$TMPDIR/m" && rm "$TMPDIR/m" &&
		python3 -c "import json, sqlite3, ssl"'
	if command -v node >/dev/null; then
		must_pass "[$mode] node works beside it" "${opts[@]}" -- node -e \
			'require("fs").readdirSync("/usr/lib"); require("crypto").randomBytes(4)'
	fi
	must_pass "[$mode] the workspace lists and reads" "${opts[@]}" -- sh -c 'ls -A . >/dev/null && cat src/main.c >/dev/null'
done
must_fail "[no-ns] / cannot be listed (documented)" --hide "$STATE" --no-ns -- ls /
if [ "$(tree_state "$STATE")" = "$before" ]; then
	ok "the hidden folder is byte-identical"
else
	fail "the hidden folder changed"
fi
finish
