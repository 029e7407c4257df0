#!/bin/bash
# Which open mode a mount takes without -o open or -o noopen, and what the
# default no-open mode must keep exact (bench/results/2026-11-27-speed-5.md):
#  1. no option: no-open when the policy has no `exec deny` rule, no read
#     rule naming callers and no write rule (the shipped default, a policy
#     of delete/truncate/rename rules): status.json "noopen" true; open
#     mode when it has one of them: false; -o open and -o noopen force
#     theirs; the policy's refusals hold in each;
#  2. a reload that brings an `exec deny` or a write rule into a mount
#     that chose no-open is refused, says why, and the old policy stays in
#     force (its deny still refuses, the mount is unchanged);
#  3. files created in a fresh no-open mount cost no RELEASE: the daemon
#     makes the kernel's first OPEN itself before the mount is ready
#     (TXFS_STATS: OPEN 1, RELEASE 0 after 40 creates);
#  4. the layer data of unlinked files is freed off the serving thread,
#     yet nothing may see it late: bytes_staged drops at once after rm, a
#     `limit bytes` mount takes a new file as big as the one just removed,
#     and a commit right after rm leaves exactly the files that remain
#     (the real directory after unmount); the worker is made 3 s late
#     (TXFS_FAULT=reap-delay:3000), so only those runs of the queue can
#     pass these checks, and a read while the worker holds the list it
#     took (TXFS_FAULT=reap-hold:1500) waits for its commit;
#  6. what an attack on no-open found stays closed: a write rule naming
#     callers (only-by) is not dodged through a shared mapping's
#     write-back, and a page written into a deny-read file is not read back
#     from the kernel's cache (such policies take open mode; -o noopen
#     refuses them);
#  5. a mass unlink makes fewer than 1.5 layer transactions a file
#     (TXFS_STATS commits; 2 before the batches), and after a remount the
#     layer holds no orphan (bytes_staged 0).
# Each step runs as the scenario's user (root in the plain pass, txfstest in
# the unprivileged one).
. "$(dirname "$0")/lib.sh"
# this scenario picks each mount's mode itself
TXFS_TEST_MOUNT_OPTS=
command -v python3 >/dev/null || { fail "python3 is not installed"; exit 1; }
printf 'keep\n' >"$WS/denied.txt"
printf 'real\n' >"$WS/real.txt"
printf 'hidden\n' >"$WS/hidden.txt"
head -c 8192 /dev/zero >"$WS/secret.bin"
printf 'protected bytes\n' >"$WS/prot.txt"
sha_prot=$(sha256sum <"$WS/prot.txt")
cat >"$T/plain.policy" <<'EOF'
# open_mode.sh: nothing that needs the opens
deny delete,truncate,rename denied.txt
EOF
{ cat "$T/plain.policy"; echo 'exec deny **/forbidden-tool'; } >"$T/exec.policy"
{ cat "$T/plain.policy"; echo 'deny write denied.txt'; } >"$T/write.policy"
{ cat "$T/plain.policy"; echo 'deny read secret.bin'; } >"$T/read.policy"
{ cat "$T/plain.policy"; echo 'hide hidden.txt'; } >"$T/hide.policy"
{ cat "$T/plain.policy"; echo 'deny write prot.txt only-by /usr/bin/python3*'; } >"$T/writeby.policy"
{ cat "$T/plain.policy"; echo 'deny read **/byprog.txt except-by /usr/bin/python3*'; } >"$T/readby.policy"
{ cat "$T/plain.policy"; echo 'limit bytes 3M'; } >"$T/limit.policy"

# the "noopen" field of status.json, or what went wrong
noopen_of() {
	t 30 python3 -c 'import json,sys; print(str(json.load(open(sys.argv[1]))["noopen"]).lower())' \
		"$MNT/.txfs/status.json" 2>&1
}
bytes_of() {
	t 30 python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["bytes_staged"])' \
		"$MNT/.txfs/status.json" 2>&1
}
cnt() { awk -v op="$1" '$1 == "op" && $2 == op { print $3; f = 1 } END { if (!f) print 0 }' "$2"; }
stat_of() { awk -v k="$1" '$1 == k { print $2; f = 1 } END { if (!f) print 0 }' "$2"; }

# ---- 1. the mode each mount takes ---------------------------------------------------
mode_case() {	# LABEL POLICY|- EXPECT [txfs mount options...]
	local label=$1 pol=$2 want=$3
	shift 3
	STATE=$T/state-$label
	if [ "$pol" = - ]; then unset TXFS_POLICY; else TXFS_POLICY=$pol; fi
	txfs_mount "$@" || return
	check_eq "[1] $label: status.json noopen" "$want" "$(noopen_of)"
	# the mode works either way: a denied write is refused, the bytes stay
	if [ "$pol" != - ]; then
		check_errno "[1] $label: truncating denied.txt" EACCES truncate "$MNT/denied.txt" 0
		# growing it is a size change too (an attack used fallocate)
		check_errno "[1] $label: growing denied.txt with fallocate" EACCES \
			fallocate "$MNT/denied.txt" 0 0 100000
		check_errno "[1] $label: growing it with a zero range" EACCES \
			fallocate "$MNT/denied.txt" zero 0 100000
		check_errno "[1] $label: removing denied.txt" EACCES unlink "$MNT/denied.txt"
		[ "$label" = write ] &&
			check_errno "[1] $label: opening denied.txt for writing" EACCES pwrite "$MNT/denied.txt" 0 x
		check_content "[1] $label: denied.txt keeps its bytes" "$MNT/denied.txt" "keep"
	fi
	txfs_umount || force_detach
	rm -rf "$STATE"
}
mode_case default-policy - true
mode_case plain "$T/plain.policy" true
mode_case exec "$T/exec.policy" false
mode_case write "$T/write.policy" false
mode_case read "$T/read.policy" false
mode_case hide "$T/hide.policy" true
mode_case writeby "$T/writeby.policy" false
mode_case readby "$T/readby.policy" false
mode_case plain-open "$T/plain.policy" false -o open
mode_case plain-noopen "$T/plain.policy" true -o noopen
# ---- 6. what the attack on no-open found, under the mode each policy takes ----------------
# B2: a page written into a deny-read file must not be read back (under
# no-open the kernel's cache would serve it with no request)
STATE=$T/state-b2
TXFS_POLICY=$T/read.policy
if txfs_mount; then
	check_run "[6] a whole page written into deny-read secret.bin (writing is allowed)" \
		python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_WRONLY); os.pwrite(fd, b"TOKEN=s3cr3t".ljust(4096, b"."), 0); os.close(fd)' "$MNT/secret.bin"
	out=$(t 30 dd if="$MNT/secret.bin" bs=4096 count=1 status=none 2>&1)
	if [[ $out == *TOKEN* ]]; then
		fail "[6] the page written into secret.bin was read back: $(head -c 80 <<<"$out")"
	else
		ok "[6] reading secret.bin back is refused: $(head -c 120 <<<"$out")"
	fi
	txfs_umount || force_detach
fi
rm -rf "$STATE"
# B1: a write rule naming callers cannot be dodged through a shared mapping
STATE=$T/state-b1
TXFS_POLICY=$T/writeby.policy
if txfs_mount; then
	out=$(t 30 /usr/bin/python3 -c 'import os,mmap,sys
fd=os.open(sys.argv[1], os.O_RDWR); m=mmap.mmap(fd, 0); m[0:6]=b"BYPASS"; m.flush()' "$MNT/prot.txt" 2>&1)
	rc=$?
	if [ $rc != 0 ] && [[ $out == *PermissionError* ]]; then
		ok "[6] python's shared-mapping store into prot.txt (deny write only-by python): refused at open"
	else
		fail "[6] python's shared-mapping store into prot.txt: expected PermissionError got exit $rc: $out"
	fi
	check_run "[6] commit" "$TXFS" commit "$MNT"
	txfs_umount || force_detach
	check_eq "[6] the real prot.txt is unchanged" "$sha_prot" "$(sha256sum <"$WS/prot.txt")"
	snapshot_real
fi
rm -rf "$STATE"
# -o noopen refuses what it cannot enforce (noopen.sh, 4, for exec and read)
TXFS_POLICY=$T/writeby.policy
STATE=$T/state-refused
txfs_mount --expect-fail -o noopen
if [ "$RC" != 0 ] && [[ $ERR == *only-by* ]] && ! is_mounted "$MNT"; then
	ok "[6] a write rule naming callers with -o noopen: refused (exit $RC), nothing mounted"
else
	fail "[6] write only-by with -o noopen: expected a refusal naming only-by got exit $RC: $ERR"
	is_mounted "$MNT" && { txfs_umount || force_detach; }
fi
rm -rf "$STATE"
# -o noopen with a policy that needs the opens stays refused (noopen.sh, 4)
TXFS_POLICY=$T/exec.policy
STATE=$T/state-refused
txfs_mount --expect-fail -o noopen
if [ "$RC" != 0 ] && [[ $ERR == *exec* ]] && ! is_mounted "$MNT"; then
	ok "[1] exec deny with -o noopen: refused (exit $RC), nothing mounted"
else
	fail "[1] exec deny with -o noopen: expected a refusal and no mount got exit $RC: $ERR"
	is_mounted "$MNT" && { txfs_umount || force_detach; }
fi
rm -rf "$STATE"

# ---- 2. a reload that needs the opens, into a no-open mount -----------------------------
STATE=$T/state-reload
cp "$T/plain.policy" "$T/live.policy"
TXFS_POLICY=$T/live.policy
if txfs_mount; then
	cp "$T/exec.policy" "$T/live.policy"
	out=$(t 30 "$TXFS" policy reload "$MNT" 2>&1)
	rc=$?
	if [ $rc != 0 ] && [[ $out == *"chosen at mount"* ]] && [[ $out == *exec* ]]; then
		ok "[2] reload with exec deny into a no-open mount: refused (exit $rc): $(head -c 300 <<<"$out")"
	else
		fail "[2] reload with exec deny into a no-open mount: expected a refusal saying 'chosen at mount' got exit $rc: $out"
	fi
	cp "$T/write.policy" "$T/live.policy"
	out=$(t 30 "$TXFS" policy reload "$MNT" 2>&1)
	rc=$?
	if [ $rc != 0 ] && [[ $out == *"chosen at mount"* ]] && [[ $out == *write* ]]; then
		ok "[2] reload with a write rule into a no-open mount: refused (exit $rc)"
	else
		fail "[2] reload with a write rule into a no-open mount: expected a refusal got exit $rc: $out"
	fi
	check_eq "[2] after the refused reloads: status.json noopen" true "$(noopen_of)"
	check_errno "[2] after the refused reloads: the old deny still refuses" EACCES \
		truncate "$MNT/denied.txt" 0
	check_run "[2] and the write rule is not in force (writing denied.txt works)" \
		"$FSOP" pwrite "$MNT/denied.txt" 0 keep
	check_content "[2] denied.txt keeps its bytes" "$MNT/denied.txt" "keep"
	# a reload the mode can enforce goes through
	{ cat "$T/plain.policy"; echo 'deny delete real.txt'; } >"$T/live.policy"
	check_run "[2] a reload without such rules is taken" "$TXFS" policy reload "$MNT"
	check_errno "[2] after it, its new deny refuses" EACCES unlink "$MNT/real.txt"
	txfs_umount || force_detach
fi
rm -rf "$STATE"

# ---- 3. no RELEASE for files created in a fresh no-open mount ------------------------------
STATE=$T/state-create
TXFS_POLICY=$T/plain.policy
export TXFS_STATS=$T/stats-create
if txfs_mount; then
	unset TXFS_STATS
	check_run "[3] 40 files created with : > f (no file of the mount opened before)" \
		bash -c 'for i in $(seq 1 40); do : > "$1/c$i"; done' sh "$MNT"
	txfs_umount || force_detach
	if [ -s "$T/stats-create" ]; then
		check_eq "[3] CREATE requests" 40 "$(cnt CREATE "$T/stats-create")"
		check_eq "[3] RELEASE requests (the kernel's no_open was set before the first create)" \
			0 "$(cnt RELEASE "$T/stats-create")"
		check_eq "[3] OPEN requests (the daemon's own, answered ENOSYS)" 1 "$(cnt OPEN "$T/stats-create")"
	else
		fail "[3] TXFS_STATS: expected request counts in $T/stats-create got none"
	fi
fi
unset TXFS_STATS
rm -rf "$STATE"

# ---- 4. unlinked files: freed off the serving thread, never seen late ---------------------
STATE=$T/state-reap
TXFS_POLICY=$T/limit.policy
# mount_fault FAULT: txfs_mount with TXFS_FAULT=FAULT in the daemon's
# environment only
mount_fault() {
	local rc
	export TXFS_FAULT=$1
	txfs_mount
	rc=$?
	unset TXFS_FAULT
	return $rc
}
# the worker frees forgotten orphans 3 s late: only the reads' and the
# limit's own runs of the queue can make the checks below pass
if mount_fault reap-delay:3000; then
	check_run "[4] 200 files of 8,000 bytes made" bash -c '
		set -e; mkdir "$1/many"
		for i in $(seq 1 200); do head -c 8000 /dev/zero > "$1/many/f$i"; done' sh "$MNT"
	check_eq "[4] bytes_staged after them" 1600000 "$(bytes_of)"
	check_run "[4] rm -rf many (200 files)" rm -rf "$MNT/many"
	check_eq "[4] bytes_staged right after rm" 0 "$(bytes_of)"
	# limit bytes 3M: each 2 MiB file fits only if what was removed
	# before it no longer counts
	check_run "[4] a 2 MiB file at once (1.6 MB removed, limit bytes 3M)" \
		bash -c 'head -c 2097152 /dev/zero > "$1/big-a"' sh "$MNT"
	check_run "[4] rm big-a, then another 2 MiB file at once" \
		bash -c 'rm "$1/big-a" && head -c 2097152 /dev/zero > "$1/big-b"' sh "$MNT"
	check_eq "[4] bytes_staged: big-b only" 2097152 "$(bytes_of)"
	check_run "[4] 50 more files made and removed, then a commit at once" bash -c '
		set -e; for i in $(seq 1 50); do printf "%s\n" "$i" > "$1/t$i"; done
		rm "$1"/t*; echo commit > "$1/.txfs/ctl"' sh "$MNT"
	txfs_umount || force_detach
	check_eq "[4] after the commit the real big-b has 2 MiB" 2097152 "$(wc -c <"$WS/big-b" 2>&1)"
	left=$(cd "$WS" && ls -A | grep -v -x -e denied.txt -e real.txt -e big-b -e hidden.txt -e secret.bin -e prot.txt | tr '\n' ' ')
	check_eq "[4] the real directory holds nothing else that the mount made" "" "$left"
	snapshot_real	# the commit is done: the rest leaves the real directory alone
fi
rm -rf "$STATE"

# the worker takes the queue and holds it 1.5 s before its commit: a read
# of the counts must wait for that commit, not read around it
STATE=$T/state-hold
TXFS_POLICY=$T/plain.policy
if mount_fault reap-hold:1500; then
	check_run "[4] 20 files of 8,000 bytes made" bash -c '
		set -e; for i in $(seq 1 20); do head -c 8000 /dev/zero > "$1/h$i"; done' sh "$MNT"
	check_run "[4] rm them, sleep 0.2 s (the worker has taken them)" bash -c 'rm "$1"/h*; sleep 0.2' sh "$MNT"
	check_eq "[4] bytes_staged while the worker holds them: waits, then 0" 0 "$(bytes_of)"
	txfs_umount || force_detach
fi
rm -rf "$STATE"

# ---- 5. a mass unlink: fewer layer transactions than files, no orphan left ------------------
STATE=$T/state-mass
TXFS_POLICY=$T/plain.policy
if txfs_mount; then
	check_run "[5] 300 files of 100 bytes made" bash -c '
		set -e; mkdir "$1/m"; for i in $(seq 1 300); do head -c 100 /dev/zero > "$1/m/f$i"; done' sh "$MNT"
	txfs_umount || force_detach
fi
export TXFS_STATS=$T/stats-mass
if txfs_mount; then
	unset TXFS_STATS
	check_run "[5] rm -rf of the 300 files (staged before a remount)" rm -rf "$MNT/m"
	txfs_umount || force_detach
	if [ -s "$T/stats-mass" ]; then
		commits=$(stat_of commits "$T/stats-mass")
		unl=$(cnt UNLINK "$T/stats-mass")
		# each unlink is one layer transaction; the frees of forgotten
		# orphans come in batches, not one more per file
		if [ "$unl" = 300 ] && [ "$commits" -lt 450 ]; then
			ok "[5] 300 unlinks made $commits layer commits in all (not 2 per file)"
		else
			fail "[5] expected 300 unlinks and under 450 layer commits got $unl unlinks, $commits commits"
		fi
	else
		fail "[5] TXFS_STATS: expected counts in $T/stats-mass got none"
	fi
fi
unset TXFS_STATS
if txfs_mount; then
	check_eq "[5] after a remount: bytes_staged (no orphan left in the layer)" 0 "$(bytes_of)"
	txfs_umount || force_detach
fi
left=$(awk -v t="$T/" 'index($2, t) == 1 { print $2 " " $3 }' /proc/self/mounts)
check_eq "no mount left under $T (/proc/self/mounts)" "" "$left"
finish
