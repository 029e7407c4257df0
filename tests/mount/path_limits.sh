#!/bin/bash
# Paths over the limits the policy is checked on (TXFS_PATH_DEPTH = 1024
# components, TXFS_PATH_LEN = 8191 bytes of merged path, reached with
# relative paths from a deep current directory) fail with ENAMETOOLONG,
# not with an EACCES that no log entry explains (the old code), and they
# are not vetoes. Everything below the limits works; the real directory is
# untouched.
. "$(dirname "$0")/lib.sh"
printf 'deny write **/never-written\n' >"$T/limits.policy"
TXFS_POLICY=$T/limits.policy
fixture
txfs_mount || exit 1
PY=$(command -v python3) || skip "python3 is needed"
deep() { # NAME-LENGTH MAX-LEVELS: mkdir+chdir until it fails
	t 120 "$PY" -c '
import errno, os, sys
os.chdir(sys.argv[1])
name = "d" * int(sys.argv[2])
for i in range(1, int(sys.argv[3]) + 1):
    try:
        os.mkdir(name)
        os.chdir(name)
    except OSError as e:
        op = "mkdir"
        try:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644)
            os.close(fd)
            op = "create-ok"
        except OSError as e2:
            op = "create:" + errno.errorcode[e2.errno]
        print("level %d: %s %s" % (i, errno.errorcode[e.errno], op))
        sys.exit(0)
fd = os.open("f", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(fd, b"deep\n")
os.close(fd)
print("all %d levels" % (i))
' "$1" "$2" "$3"
}
veto_count() {
	if [ -f "$STATE/audit.log" ]; then grep -c '"event":"veto"' "$STATE/audit.log"; else echo 0; fi
}
vetoes_before=$(veto_count)
got=$(deep "$MNT" 1 1100)
check_eq "1100 levels of one-letter folders: the 1025th component fails, a file there too" \
	"level 1025: ENAMETOOLONG create:ENAMETOOLONG" "$got"
got=$(deep "$MNT/dir" 255 40)
check_eq "255-byte names: the folder whose path passes 8191 bytes fails, a file there too" \
	"level 32: ENAMETOOLONG create:ENAMETOOLONG" "$got"
got=$(deep "$MNT/empty_dir" 1 500)
check_eq "500 levels work, a file at the bottom too" "all 500 levels" "$got"
check_eq "no veto was logged for them" "$vetoes_before" "$(veto_count)"
check_eq "the daemon is alive" 1 "$([ -n "$(daemon_pid)" ] && echo 1)"
finish
