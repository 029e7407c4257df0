#!/bin/bash
# The mount suite's last test: no mount made by a scenario is left behind.
# Scenarios make their mounts under $TXFS_TEST_TMP/txfs-mt.* (tests/run sets
# TXFS_TEST_TMP to a directory of its own; without it, lib.sh derives one
# from the txfs binary's path), so that is where to look; mounts of other
# users of the machine are not touched. Leftovers are reported, detached, and fail this test.
set -u
# the same base as lib.sh
if [ -z "${TXFS_TEST_TMP:-}" ]; then
	TXFS_TEST_TMP=${TMPDIR:-/tmp}/txfs-tests-$(id -u)-$(printf '%s' "$(readlink -f "$TXFS")" | sha256sum | cut -c1-8)
fi
base=$(readlink -f "$TXFS_TEST_TMP")
left=$(awk -v b="$base/txfs-mt." 'index($2, b) == 1 || index($1, b) == 1 { print $2 " " $3 }' /proc/self/mounts)
if [ -z "$left" ]; then
	echo "ok - no mount left under $base/txfs-mt.*"
	exit 0
fi
echo "FAIL: mounts left behind by the suite:"
echo "$left" | sed 's/^/    /'
echo "$left" | while read -r m _; do
	timeout 10 fusermount3 -uz "$m" 2>/dev/null || timeout 10 umount -l "$m" 2>/dev/null
done
exit 1
