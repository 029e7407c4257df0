#!/bin/bash
# The mount suite's last test: no fuse.txfs mount and no mount under a
# scenario's temp dir (txfs-mt.*) is left behind. Leftovers are reported,
# detached, and fail this test.
set -u
left=$(awk '$3 == "fuse.txfs" || $2 ~ /\/txfs-mt\./ { print $2 " " $3 }' /proc/self/mounts)
if [ -z "$left" ]; then
	echo "ok - no txfs mounts left behind"
	exit 0
fi
echo "FAIL: mounts left behind by the suite:"
echo "$left" | sed 's/^/    /'
echo "$left" | while read -r m _; do
	case $m in
	*/txfs-mt.*) timeout 10 fusermount3 -uz "$m" 2>/dev/null || timeout 10 umount -l "$m" 2>/dev/null ;;
	esac
done
exit 1
