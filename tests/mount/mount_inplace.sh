#!/bin/bash
# txfs mount WORKSPACE mounts over the workspace itself: the path shows the
# merged view, a process that was already inside keeps seeing the real
# directory, txfs mount warns about it, and unmounting reveals the real
# directory untouched; mounting again shows the staged changes.
. "$(dirname "$0")/lib.sh"
fixture
snapshot_real
# a process already inside: it looks for the new file once the test says go
(cd "$WS" && for i in $(seq 300); do [ -e "$T/go" ] && break; sleep 0.1; done &&
	ls new-inplace >"$T/oldcwd.out" 2>&1; echo $? >"$T/oldcwd.rc") &
sleep 0.3
txfs_mount --inplace || exit 1
if grep -Eq '^txfs: ' <<<"$ERR"; then ok "txfs mount warns about a process inside the workspace: $ERR"; else
	fail "txfs mount in place with a process whose cwd is inside: expected a 'txfs: ...' warning got '$ERR'"; fi
check_eq "the workspace is a fuse.txfs mount" fuse.txfs "$(fstype_of "$WS")"
check_content "the merged view at the workspace path" "$WS/file.txt" hello
t 10 bash -c 'echo staged > "$WS/new-inplace" && mkdir "$WS/newdir" && rm "$WS/ro.txt"' || fail "changes in place failed"
check_content "new file visible at the workspace path" "$WS/new-inplace" staged
touch "$T/go"
wait
check_eq "a process whose cwd was inside before the mount still sees the real directory" 2 "$(cat "$T/oldcwd.rc")"
txfs_umount "$WS" || exit 1
check_real_unchanged
[ -e "$WS/new-inplace" ] && fail "after unmount, the staged file is in the real directory"
txfs_mount --inplace || exit 1
check_content "mounted again: the staged file" "$WS/new-inplace" staged
t 5 test -e "$WS/ro.txt" && fail "mounted again: ro.txt should stay deleted"
t 5 test -d "$WS/newdir" || fail "mounted again: newdir missing"
txfs_umount "$WS" || exit 1
finish
