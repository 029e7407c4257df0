#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# bench/tools/w5_crash_record.sh TXFS [WORKDIR] - a W5 commit (4 KiB into
# a 64 MiB real file) crashed at each of its TXFS_FAULT=commit:N points,
# then `txfs recover` and `txfs undo`: before the commit point nothing is
# kept, after it the record gives the file back. LOSE=1: before the
# recover, delete the record's pre-images and empty its manifest (what a
# power loss could leave before the record's own files are synced): the
# recover must write them back from the layer. One line a fault point.
TXFS=${1:?usage: w5_crash_record.sh TXFS [WORKDIR]}
B=${2:-/var/tmp/txfs-w5crash}
for n in $(seq 1 60); do
	fusermount3 -uz "$B/ws" 2>/dev/null
	rm -rf "${B:?}"
	mkdir -p "$B/ws"
	python3 -c "
f = open('$B/ws/big', 'wb'); f.truncate(64 << 20)
for off in range(0, 64 << 20, 1 << 20): f.seek(off); f.write(b'x' * 4096)"
	before=$(md5sum <"$B/ws/big")
	: >"$B/empty.policy"
	TXFS_FAULT=commit:$n "$TXFS" mount --state "$B/state" --policy "$B/empty.policy" "$B/ws" || exit 1
	python3 -c "
import os
f = open('$B/ws/big', 'r+b'); f.seek(32 << 20); f.write(os.urandom(4096))"
	"$TXFS" commit "$B/ws" >/dev/null 2>&1
	rc=$?
	sleep 0.3	# a fault after the reply
	fired=$(grep -c "stopping at commit step $n\$" "$B/state/daemon.log")
	pid=$(cat "$B/state/daemon.pid" 2>/dev/null)
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && "$TXFS" umount "$B/ws"
	fusermount3 -uz "$B/ws" 2>/dev/null
	if [ "${LOSE:-0}" = 1 ] && [ "$fired" = 1 ]; then
		for r in "$B"/state/history/0*; do
			[ -d "$r" ] || continue
			rm -f "$r"/objs/p*
			: >"$r/manifest.json"
		done
	fi
	"$TXFS" recover "$B/state" >/dev/null 2>&1
	recs=$(ls "$B/state/history" 2>/dev/null | grep -c '^[0-9a-f]\{16\}$')
	pend=$(ls "$B/state/history" 2>/dev/null | grep -c pending)
	state=before undo=-
	[ "$(md5sum <"$B/ws/big")" != "$before" ] && state=after
	if [ $state = after ]; then
		"$TXFS" undo --state "$B/state" "$B/ws" >/dev/null 2>&1 &&
			[ "$(md5sum <"$B/ws/big")" = "$before" ] && undo=ok || undo=FAIL
	fi
	echo "commit:$n commit exit $rc, fault fired $fired: $state, records $recs, pending $pend, undo $undo"
	[ "$fired" = 0 ] && break
done
fusermount3 -uz "$B/ws" 2>/dev/null
rm -rf "${B:?}"
