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
	# issue 13.6: a refused mknod leaves nothing behind under that name:
	# not in a listing, not staged, free for a file, in real and new
	# folders, for block devices too, and still so after a remount
	t 5 mkdir "$MNT/newdir"
	for p in dev1 dir/dev2 newdir/dev3; do
		out=$(t 10 mknod "$MNT/$p" b 7 0 2>&1)
		case $out in
		*"Operation not permitted"*) ok "mknod $p b 7 0: EPERM" ;;
		*) fail "mknod $p b 7 0: expected EPERM got '$out'" ;;
		esac
		check_errno "mknod $p c 1 3" EPERM mknod-chr "$MNT/$p" 1 3
		check_errno "nothing at $p" ENOENT stat "$MNT/$p"
		check_eq "$p not listed" "" "$(t 10 ls -a "$(dirname "$MNT/$p")" | grep -x "$(basename "$p")")"
	done
	check_eq "nothing staged under the refused names" "" "$(t 10 grep -E 'dev[123]|null' "$MNT/.txfs/changes")"
	check_run "the name is free for a regular file" bash -c 'echo f > "$MNT/dir/dev2" && cat "$MNT/dir/dev2"'
	t 5 rm "$MNT/dir/dev2"
	t 5 rmdir "$MNT/newdir"
	remount || exit 1
	for p in null dev1 dir/dev2; do check_errno "after a remount, nothing at $p" ENOENT stat "$MNT/$p"; done
else
	both '"$FSOP" mknod-chr null 1 3; echo rc=$?'
fi
both 'rm dir/sub/s2 && ls dir/sub'
finish
