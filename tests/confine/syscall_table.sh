#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# syscall_table - the seccomp filter, probed from inside by tests/tools/
# syscalls (see its header for the probes and their harmless arguments):
#   1. unconfined, every probe is allowed (so a denial below means something);
#   2. confined, every entry is denied with the errno of the table (EPERM;
#      ENOSYS for clone3 and io_uring), i386 (int 0x80) and x32 included,
#      and the controls stay allowed; again with --no-network (sockets other
#      than AF_UNIX denied too), and with the Landlock ABI capped at 5 and 2;
#   3. the same as the unprivileged test user;
#   4. the allow-list (cli/sandbox/confine_known.c, issue 23.3) against the running
#      kernel: the syscall names of /proc/kallsyms that are not listed are
#      printed (file_setattr and file_getattr among them on 6.17+), every
#      number from 0 to 1023 that is not listed fails with ENOSYS when
#      confined (as root and as the test user; uretprobe 335 and uprobe 336
#      are passed through seccomp by the kernel itself and act only from a
#      uprobe trampoline), and file_setattr on a decoy outside gets ENOSYS
#      while its inode flags stay unchanged (unconfined, it sets them on a
#      copy: the call means something).
# The conclusive runs are those as root (capability checks cannot then
# produce EPERM): the probes only pass invalid arguments, so running them as
# root is harmless even unconfined. The full tables are printed.
. "$(dirname "$0")/lib.sh"

require_landlock
fixture

# run_table WHAT [--as-user] [DRIVER-OPTS...] -- [SYSCALLS-OPTS...]
run_table() {
	local what=$1 as_user=0 opts=() rc
	shift
	[ "${1:-}" = --as-user ] && { as_user=1; shift; }
	while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
	shift
	echo "## $what"
	if [ "$as_user" = 1 ]; then
		confined "${opts[@]}" -- "$SYSCALLS" --expect-denied "$@" >"$T/table" 2>&1
	else
		(cd "$WS" && t 60 "$CONFINED_EXEC" "${CONFINE_OPTS[@]}" "${opts[@]}" -- \
			"$SYSCALLS" --expect-denied "$@") >"$T/table" 2>&1
	fi
	rc=$?
	cat "$T/table"
	if [ "$rc" -eq 0 ]; then ok "$what"; else fail "$what (exit $rc)"; fi
}

echo "## unconfined, as $(id -un)"
t 60 "$SYSCALLS" --expect-allowed >"$T/table" 2>&1
rc=$?
cat "$T/table"
[ "$rc" -eq 0 ] && ok "unconfined: every probe allowed" || fail "unconfined: some probe denied (exit $rc)"

if [ "$(id -u)" = 0 ]; then
	run_table "confined as root" --
	run_table "confined as root, --no-network" --no-network -- --no-network
	[ "$ABI" -gt 5 ] && run_table "confined as root, Landlock ABI 5" --landlock-abi 5 -- --landlock-abi 5
	[ "$ABI" -gt 2 ] && run_table "confined as root, Landlock ABI 2" --landlock-abi 2 --no-network -- \
		--landlock-abi 2 --no-network
	run_table "confined as $TEST_USER" --as-user --no-network -- --no-network
else
	echo "# not root: capability-first probes are inconclusive (printed as such)"
	run_table "confined as $(id -un)" --as-user --no-network -- --no-network
fi
echo "## the allow-list against the running kernel"
"$CONFINED_EXEC" --known >"$T/known"
n=$(wc -l <"$T/known")
[ "$n" -ge 300 ] && ok "$n system calls listed" || fail "only $n system calls listed"
missing=
for c in read write openat execve clone ioctl connect mount landlock_restrict_self seccomp; do
	grep -q " $c\$" "$T/known" || missing="$missing $c"
done
[ -z "$missing" ] && ok "the everyday and the denied-by-rule calls are listed" || fail "not listed:$missing"
if grep -qE '^(468|469) ' "$T/known"; then
	fail "file_getattr or file_setattr is listed"
else
	ok "file_getattr (468) and file_setattr (469) are not listed"
fi
if [ -r /proc/kallsyms ] && grep -q ' __x64_sys_read$' /proc/kallsyms; then
	sed -n 's/.* __x64_sys_\([a-z0-9_]*\)$/\1/p' /proc/kallsyms | sort -u >"$T/kernel"
	awk '{ print $2 }' "$T/known" | sort -u >"$T/listed"
	# the kernel's entry points for calls listed under another name, and
	# those of the compat (i386, 16-bit, time32) tables
	comm -23 "$T/kernel" "$T/listed" | grep -vE '^(new(stat|fstat|lstat|uname)|umount|sendfile64|ni_syscall)$|_time32$|16$|^ia32_|^old|^s390|^spu_|^pciconfig|^rtas$|^subpage_prot$|^vm86' >"$T/unlisted"
	echo "# in the running kernel ($(uname -r)), not listed (ENOSYS when confined): $(tr '\n' ' ' <"$T/unlisted")"
	if grep -q '^file_setattr$' "$T/kernel"; then
		grep -qx file_setattr "$T/unlisted" && grep -qx file_getattr "$T/unlisted" &&
			ok "file_setattr and file_getattr: in this kernel, not listed" ||
			fail "file_setattr/file_getattr: in this kernel but listed"
	else
		ok "this kernel has no file_setattr (before 6.17)"
	fi
else
	echo "# /proc/kallsyms has no x86_64 entry points here: the names are not compared"
fi

# sweep [--as-user]: every unlisted number from 0 to 1023, confined.
sweep() {
	local who=root out
	if [ "${1:-}" = --as-user ]; then
		who=$TEST_USER
		out=$(confined -- "$SYSNR" sweep "$T/known" 1023 2>&1)
	else
		out=$(cd "$WS" && t 120 "$CONFINED_EXEC" "${CONFINE_OPTS[@]}" -- "$SYSNR" sweep "$T/known" 1023 2>&1)
	fi
	echo "$out" | sed 's/^/#   /'
	# uretprobe and uprobe: the kernel skips seccomp for them (x86_64)
	if grep -q '^SWEEP checked=[1-9][0-9]* ' <<<"$out" &&
		! grep -v '^SWEEP' <<<"$out" | grep -vE '^(335 signal 4|336 No such device or address)$' | qgrep .; then
		ok "confined as $who: every unlisted number 0-1023 fails with ENOSYS ($(echo "$out" | grep '^SWEEP'))"
	else
		fail "confined as $who: unlisted numbers that did not fail with ENOSYS: $(grep -v '^SWEEP' <<<"$out" | head -5 | tr '\n' ';')"
	fi
}
chmod 644 "$T/known"
if [ "$(id -u)" = 0 ]; then
	sweep
	sweep --as-user
else
	sweep --as-user
fi

# file_setattr on a decoy outside: ENOSYS, its flags unchanged.
D=$HOME_DECOY/notes.txt
cp -p "$D" "$HOME_DECOY/copy.txt"
before=$(lsattr "$D" 2>/dev/null | cut -d' ' -f1)
out=$(unconfined "$SYSNR" fileattr "$HOME_DECOY/copy.txt" | tr '\n' ' ')
if [ "$out" = "file_getattr 0 file_setattr 0 " ]; then
	case $(lsattr "$HOME_DECOY/copy.txt" | cut -d' ' -f1) in
	*d*) ok "unconfined, file_setattr sets the nodump flag on a copy" ;;
	*) fail "unconfined, file_setattr said 0 but the copy has no nodump flag" ;;
	esac
else
	echo "# unconfined: $out (this kernel or file system has no file_setattr)"
fi
out=$(confined -- "$SYSNR" fileattr "$D" | tr '\n' ' ')
check_fa() { [ "$2" = "$3" ] && ok "$1" || fail "$1: expected '$2' got '$3'"; }
check_fa "confined, file_getattr and file_setattr on the decoy: ENOSYS" "file_getattr 38 file_setattr 38 " "$out"
check_fa "the decoy's inode flags are unchanged" "$before" "$(lsattr "$D" 2>/dev/null | cut -d' ' -f1)"
finish
