#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# refuse_weaker - never silently weaker: without Landlock (simulated with the
# test driver's --landlock-abi 0), confinement is refused with a reason
# unless --allow-weaker, which runs the command with the seccomp filter
# alone and says what is not enforced. Bad options are refused before
# anything runs.
. "$(dirname "$0")/lib.sh"

require_landlock
fixture

confined --landlock-abi 0 -- true >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 125 ] && grep -q "Landlock is unavailable" "$T/out"; then
	ok "no Landlock: refused (exit 125): $(head -c 160 "$T/out")"
else
	fail "no Landlock: expected refusal (125), got exit $rc: $(head -c 300 "$T/out")"
fi

confined --landlock-abi 0 --allow-weaker -- true >"$T/out" 2>&1
rc=$?
if [ "$rc" -eq 0 ] && grep -q "writes are not restricted" "$T/out"; then
	ok "no Landlock, --allow-weaker: runs and says so"
else
	fail "no Landlock, --allow-weaker: exit $rc: $(head -c 300 "$T/out")"
fi

# The seccomp filter still applies in full.
if confined --landlock-abi 0 --allow-weaker -- "$SYSCALLS" --expect-denied >"$T/out" 2>&1; then
	ok "no Landlock, --allow-weaker: every system call of the table still denied"
else
	fail "no Landlock, --allow-weaker: $(grep UNEXPECTED "$T/out" | head -5)"
fi

for bad in /nonexistent/txfs-confine relative/path; do
	confined --writable "$bad" -- true >"$T/out" 2>&1
	rc=$?
	if [ "$rc" -eq 125 ] && grep -q "$bad" "$T/out"; then
		ok "writable $bad: refused, named in the reason"
	else
		fail "writable $bad: exit $rc: $(head -c 300 "$T/out")"
	fi
done

confined --daemon-pid -7 -- true >"$T/out" 2>&1
[ $? -eq 125 ] && ok "negative daemon pid: refused" || fail "negative daemon pid accepted"
finish
