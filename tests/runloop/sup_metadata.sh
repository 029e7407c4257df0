#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# sup_metadata - issue 9 point 5: under `txfs run`, chmod, chown, utimes,
# xattr and inode-flag (chattr) changes of files outside the writable paths
# are refused (EACCES)
# by the supervisor (cli/sandbox/supervise_ops.c), in their path, relative path,
# dirfd, fd and symlink forms, and the decoy's mode, owner, times (mtime
# and ctime) and xattrs are unchanged afterwards; the same changes inside
# the workspace (committed) and in /tmp work. As root and as the
# unprivileged test user.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
command -v setfattr >/dev/null || skip "setfattr (attr) is needed"

# meta FILE: mode, owner, group, mtime, ctime, inode flags and user xattrs.
meta() {
	stat -c '%a %u %g %Y %Z' "$1"
	lsattr -d "$1" 2>/dev/null | cut -d' ' -f1
	getfattr -d --absolute-names "$1" 2>/dev/null | grep -v '^#'
}

ATTEMPTS='
try() { "$@" >/dev/null 2>&1 && echo "ESCAPED: $*" || echo "refused: $1"; }
D=$DECOY_HOME/notes.txt
try chmod 777 "$D"
try touch -d @1 "$D"
try touch -h -d @1 "$D"
try setfattr -n user.x -v 1 "$D"
try setfattr -x user.keep "$D"
try chown "$(id -u):$(id -g)" "$D"
try chattr +d "$D"
try chmod 777 ../home/notes.txt
try chgrp "$(id -g)" ../home/notes.txt
l=$(mktemp -u /tmp/txfs-sup-XXXXXX); ln -s "$D" "$l"
try chmod 777 "$l"
try touch -d @1 "$l"
try setfattr -n user.x -v 1 "$l"
rm -f "$l"
# The shared writable roots themselves are the system'"'"'s (as root this
# would break /tmp for everyone): their metadata is refused, what is below
# them is not. Only modes that change nothing are tried.
try chmod "$(stat -c %a /tmp)" /tmp
try chmod "$(stat -c %a /dev/shm)" /dev/shm/
try touch -c -r /tmp /tmp
"$PY" - "$D" <<PYEOF
import os, sys
d = sys.argv[1]
def t(name, f):
    try:
        f()
        print("ESCAPED:", name)
    except OSError as e:
        print("refused:", name, e.errno)
fd = os.open(d, os.O_RDONLY)
dfd = os.open(os.path.dirname(d), os.O_RDONLY)
t("fchmod", lambda: os.fchmod(fd, 0o777))
t("fchown", lambda: os.fchown(fd, os.getuid(), os.getgid()))
t("futimens", lambda: os.utime(fd, (1, 1)))
t("fsetxattr", lambda: os.setxattr(fd, "user.x", b"1"))
t("fremovexattr", lambda: os.removexattr(fd, "user.keep"))
t("fchmodat dirfd", lambda: os.chmod("notes.txt", 0o777, dir_fd=dfd))
t("utimensat dirfd", lambda: os.utime("notes.txt", (1, 1), dir_fd=dfd))
t("fchownat dirfd", lambda: os.chown("notes.txt", os.getuid(), os.getgid(), dir_fd=dfd))
t("lchown", lambda: os.lchown(d, os.getuid(), os.getgid()))
t("utimensat nofollow", lambda: os.utime(d, (1, 1), follow_symlinks=False))
# The supervisor resolves paths in its own process: txfs run'"'"'s descriptors
# by /proc/<its pid>/fd/N must not become reachable through it.
pp = os.getppid()
esc = []
for n in range(64):
    for f in (lambda p: os.chmod(p, 0o777), lambda p: os.utime(p, (1, 1))):
        try:
            f("/proc/%d/fd/%d" % (pp, n))
            esc.append(n)
        except OSError:
            pass
print("ESCAPED: /proc/txfs-run/fd", esc) if esc else print("refused: /proc/txfs-run/fd/*")
PYEOF
'

mkdir -p "$T/sup" && cp "$(dirname "$0")"/sup/*.py "$T/sup/" && chmod -R a+rX "$T/sup"

body() {
	local before after n
	ws_fixture
	setfattr -n user.keep -v 1 "$HOME_DECOY/notes.txt" 2>/dev/null ||
		skip "the test folder's file system has no user xattrs"
	before=$(meta "$HOME_DECOY/notes.txt")
	run_txfs DECOY_HOME="$HOME_DECOY" -- --json --check false -- bash -c "exec 1>&2; $ATTEMPTS"
	n=$(grep -c '^refused' "$RUN_ERR")
	if [ "$n" = 26 ] && ! grep -q ESCAPED "$RUN_ERR"; then
		ok "[$WHO] 26 metadata changes of a decoy outside (and of /tmp, /dev/shm themselves) refused"
	else
		fail "[$WHO] metadata outside: $n of 26 refused: $(grep -E 'ESCAPED|Traceback|Error' "$RUN_ERR" | head -c 400)"
	fi
	if grep '^refused: f' "$RUN_ERR" | qgrep -v ' 13$'; then
		fail "[$WHO] an fd form failed with another errno than EACCES: $(grep '^refused: f' "$RUN_ERR" | grep -v ' 13$' | head -3)"
	else
		ok "[$WHO] the fd forms fail with EACCES (13)"
	fi
	if audit_has '"event":"veto","op":"run-metadata","path":"[^"]*/notes\.txt"'; then
		ok "[$WHO] the refused changes are in STATE/audit.log"
	else
		fail "[$WHO] no run-metadata veto in STATE/audit.log: $(tail -c 300 "$STATE/audit.log")"
	fi
	run_txfs -- --json --check false -- bash -c \
		"exec 1>&2; \"\$PY\" \"\$T/sup/chmod_race.py\" $HOME_DECOY/notes.txt 3000"
	if grep -q '^RACE inside=[1-9][0-9]* refused=[1-9]' "$RUN_ERR"; then
		ok "[$WHO] 3000 chmods while another thread swaps the path: $(grep '^RACE' "$RUN_ERR")"
	else
		fail "[$WHO] chmod path-swap race: $(grep -v 'current directory' "$RUN_ERR" | head -c 300)"
	fi
	after=$(meta "$HOME_DECOY/notes.txt")
	check_eq "[$WHO] the decoy's mode, owner, times and xattrs are unchanged" "$before" "$after"

	new_state
	run_txfs -- --json -- bash -c '
set -e
chmod 600 a.txt; touch -d @5 a.txt; setfattr -n user.y -v 2 a.txt
chown "$(id -u):$(id -g)" a.txt
[ "$(stat -c "%a %Y" a.txt)" = "600 5" ]
[ "$(getfattr --only-values -n user.y a.txt)" = 2 ]
t=$(mktemp); chmod 640 "$t"; touch -d @7 "$t"; setfattr -n user.z -v 3 "$t"
chown "$(id -u):$(id -g)" "$t"
[ "$(stat -c "%a %Y" "$t")" = "640 7" ]
[ "$(getfattr --only-values -n user.z "$t")" = 3 ]
rm -f "$t"
"$PY" -c "import os; fd = os.open(\"a.txt\", os.O_RDONLY); os.fchmod(fd, 0o640); os.utime(fd, (9, 9))"
[ "$(stat -c "%a %Y" a.txt)" = "640 9" ]'
	check_eq "[$WHO] chmod, touch, setfattr, chown inside the workspace and in /tmp work" 0 "$(jget exit)"
	check_eq "[$WHO] ... and the workspace's change is committed" "640 9" "$(stat -c '%a %Y' "$WS/a.txt")"
}

for_each_user body
finish
