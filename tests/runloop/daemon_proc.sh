#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# daemon_proc - a plain `txfs mount` does not hand the real directory to a
# same-user process through /proc/<daemon> (issue 9, point 7). The daemon
# is not dumpable, so /proc/<pid>/fd, fdinfo, cwd, root, mem, environ,
# map_files and the same under task/<tid>/ are refused to its own user, and
# so is pidfd_getfd(2) of its descriptors;
# its current folder is "/". Through them, the decoy workspace's hidden
# .env cannot be read, its readonly file cannot be appended to and .git
# cannot be deleted; the real directory is byte-identical at the end.
# The refusals are checked as the unprivileged test user (root may read
# any /proc entry); the cwd as root too.
. "$(dirname "$0")/lib.sh"

printf 'hide **/.env*\nreadonly ro.txt\ndeny delete,rename .git\n' >"$T/proc.policy"
chmod 644 "$T/proc.policy"

body() {
	local u=$WHO before pid n paths p tid
	ws_fixture
	echo 'canary: secret' >"$WS/.env"
	echo 'read only' >"$WS/ro.txt"
	mkdir -p "$WS/.git/objects"
	echo 'ref: refs/heads/main' >"$WS/.git/HEAD"
	as_owner "$WS"
	before=$(snap "$WS")
	(cd / && txfs_as mount --state "$STATE" --policy "$T/proc.policy" "$WS") >"$T/m.out" 2>&1 ||
		{ fail "[$u] txfs mount: $(cat "$T/m.out")"; return; }
	pid=$(daemon_pid)
	[ -n "$pid" ] || { fail "[$u] no daemon after mount"; return; }
	check_eq "[$u] the daemon's current folder is /" / "$(readlink "/proc/$pid/cwd")"
	if [ "$AS_TEST_USER" = 1 ]; then
		tid=$(ls "/proc/$pid/task" | tail -n 1)
		paths="fd fdinfo cwd root mem environ map_files task/$tid/fd task/$tid/cwd task/$tid/root"
		for p in $paths; do
			if as_run "$PY" -c 'import os, sys
p = sys.argv[1]
try:
    os.listdir(p)
except NotADirectoryError:
    open(p, "rb").close()' "/proc/$pid/$p" >/dev/null 2>&1; then
				fail "[$u] /proc/<daemon>/$p is open to the same user"
			else
				ok "[$u] /proc/<daemon>/$p refused"
			fi
		done
		# pidfd_getfd(2) (438): copying the daemon's descriptors
		if as_run "$PY" -c 'import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pfd = os.pidfd_open(int(sys.argv[1]))
got = [n for n in range(0, 64) if libc.syscall(438, pfd, n, 0) >= 0]
sys.exit(0 if got else 1)' "$pid" 2>/dev/null; then
			fail "[$u] pidfd_getfd copied a descriptor of the daemon"
		else
			ok "[$u] pidfd_getfd of the daemon's descriptors refused"
		fi
		for n in $(seq 0 40); do
			for p in "fd/$n" cwd root; do
				as_run cat "/proc/$pid/$p/.env" >/dev/null 2>&1 &&
					fail "[$u] hidden .env read through /proc/<daemon>/$p"
				as_run sh -c "echo pwned >> /proc/$pid/$p/ro.txt" 2>/dev/null &&
					fail "[$u] readonly ro.txt appended to through /proc/<daemon>/$p"
				as_run rm -rf "/proc/$pid/$p/.git" 2>/dev/null
			done
		done
		ok "[$u] tried .env, ro.txt and .git through fd/0..40, cwd and root"
	else
		echo "# [$u] root may read any /proc entry: the refusals are checked as the test user"
	fi
	txfs_as umount "$WS" >"$T/u.out" 2>&1 || fail "[$u] txfs umount: $(cat "$T/u.out")"
	check_unmounted "[$u] after umount"
	check_snap "[$u] real directory byte-identical (.env, ro.txt, .git untouched)" "$before" "$(snap "$WS")"
}

for_each_user body
finish
