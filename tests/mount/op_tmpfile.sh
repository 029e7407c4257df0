#!/bin/bash
# O_TMPFILE: an anonymous file in the mount, readable and writable, that
# can be linked in with linkat. Skipped only where the kernel or libfuse
# can't deliver FUSE_TMPFILE to the daemon at all.
. "$(dirname "$0")/lib.sh"
fixture
txfs_mount || exit 1
t 10 "$FSOP" tmpfile "$MNT" >"$T/tmp.out" 2>&1
rc=$?
if [ $rc != 0 ] && grep -q ': EOPNOTSUPP:' "$T/tmp.out"; then
	hdr=$(pkg-config --variable=includedir fuse3 2>/dev/null)/fuse3/fuse_lowlevel.h
	if [ -r "$hdr" ] && ! grep -q 'tmpfile' "$hdr"; then
		t 10 ls "$MNT" >/dev/null || fail "the mount stopped answering after O_TMPFILE"
		txfs_umount
		check_real_unchanged
		skip "O_TMPFILE: libfuse $(pkg-config --modversion fuse3) has no tmpfile operation, so the kernel's FUSE_TMPFILE gets ENOSYS (EOPNOTSUPP)"
	fi
	if [ "$(printf '%s\n' "$(uname -r)" 6.1 | sort -V | head -1)" != 6.1 ]; then
		skip "O_TMPFILE: kernel $(uname -r) predates FUSE_TMPFILE (6.1)"
	fi
fi
if [ $rc = 0 ]; then ok "O_TMPFILE file in the mount root"; else fail "O_TMPFILE in the mount: $(cat "$T/tmp.out")"; fi
check_run "O_TMPFILE in a real subdirectory, linked in as a name" "$FSOP" tmpfile "$MNT/dir" "$MNT/dir/linked"
check_content "linked O_TMPFILE content" "$MNT/dir/linked" "tmpfile-data"
finish
