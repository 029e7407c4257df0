#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# syscall_table - the seccomp filter, probed from inside by tests/tools/
# syscalls (see its header for the probes and their harmless arguments):
#   1. unconfined, every probe is allowed (so a denial below means something);
#   2. confined, every entry is denied with the errno of the table (EPERM;
#      ENOSYS for clone3 and io_uring), i386 (int 0x80) and x32 included,
#      and the controls stay allowed; again with --no-network (sockets other
#      than AF_UNIX denied too), and with the Landlock ABI capped at 5 and 2;
#   3. the same as the unprivileged test user.
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
finish
