#!/bin/bash
# xattrs: user.* set/get/list/remove on real and new files and directories;
# trusted.* and security.* from the agent are refused (DESIGN 1.7).
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both 'getfattr -d file.txt'
both 'setfattr -n user.a -v 1 file.txt && setfattr -n user.b -v two file.txt && getfattr -d file.txt'
both 'setfattr -x user.fixture file.txt && getfattr -d file.txt'
both 'setfattr -n user.dir -v d dir && getfattr -d dir'
both 'echo n > new && setfattr -n user.new -v "hello world" new && getfattr -n user.new --only-values new; echo'
both 'v=$(head -c 3000 /dev/zero | tr "\0" v); setfattr -n user.long -v "$v" big.bin && getfattr -n user.long --only-values big.bin | wc -c'
both 'getfattr -n user.missing file.txt; echo rc=$?'
both 'setfattr -x user.missing file.txt; echo rc=$?'
both 'setfattr -n user.a -v changed file.txt && getfattr -n user.a --only-values file.txt; echo'
both 'setfattr -h -n user.l -v 1 link_rel; echo rc=$?'
both 'mv file.txt moved.txt && getfattr -d moved.txt'
both 'setfattr -n user.h -v 1 hard1 && getfattr -n user.h --only-values hard2; echo'
both '"$FSOP" listxattr new'
if is_root; then
	for ns in trusted.t security.s; do
		t 10 "$FSOP" setxattr "$MNT/big.bin" "$ns" v >"$T/x.out" 2>&1
		rc=$?
		if [ $rc = 1 ] && grep -Eq ': (EPERM|EACCES|EOPNOTSUPP):' "$T/x.out"; then
			ok "setxattr $ns refused ($(grep -o 'E[A-Z]*' "$T/x.out" | head -1))"
		else
			fail "setxattr $ns on a file in the mount: expected EPERM/EACCES/EOPNOTSUPP got exit $rc: $(cat "$T/x.out")"
		fi
	done
	t 10 setfattr -n security.capability -v 0x0100000200200000000000000000000000000000 "$MNT/exec.sh" >"$T/x.out" 2>&1
	if [ $? = 0 ]; then
		fail "setxattr security.capability: expected refused got success"
	else
		ok "file capability refused"
	fi
else
	echo "# trusted.* needs root to be meaningful: checked only in the root pass"
fi
finish
