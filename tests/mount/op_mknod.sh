#!/bin/bash
# mknod: FIFOs and unix sockets made in the mount work; a real FIFO is
# usable without the daemon blocking on it; device nodes are refused.
. "$(dirname "$0")/lib.sh"
fixture
mkfifo "$WS/realfifo"
model
txfs_mount || exit 1

both 'mkfifo ff && stat -c "%F %a" ff'
check_run "data through a FIFO made in the mount" "$FSOP" fifo "$MNT/ff"
check_run "data through a FIFO from the real directory" "$FSOP" fifo "$MNT/realfifo"
"$FSOP" fifo "$MODEL/ff"
both 'stat -c %F realfifo && mv realfifo dir/moved-fifo && stat -c %F dir/moved-fifo'
check_run "a unix socket bound in the mount accepts a connection" "$FSOP" sock "$MNT/sock"
check_run "a unix socket bound in a real subdirectory" "$FSOP" sock "$MNT/dir/sub/s2"
"$FSOP" sock "$MODEL/sock" && "$FSOP" sock "$MODEL/dir/sub/s2" || fail "binding sockets in the model failed (test bug)"
both 'stat -c %F sock dir/sub/s2; rm sock && ls sock; echo rc=$?'
both 'mkfifo file.txt; echo rc=$?'
if is_root; then
	check_errno "mknod of a character device refused (DESIGN 1.7)" EPERM mknod-chr "$MNT/null" 1 3
	t 5 test -e "$MNT/null" && fail "a refused device node exists anyway"
else
	both '"$FSOP" mknod-chr null 1 3; echo rc=$?'
fi
both 'rm dir/sub/s2 && ls dir/sub'
finish
