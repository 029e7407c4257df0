#!/bin/bash
# Set-uid/set-gid bits and file capabilities after write, truncate, O_TRUNC
# and chown, compared with the same steps on a plain directory. txfs takes
# FUSE_HANDLE_KILLPRIV_V2 (fs/view/killpriv.c): the daemon, not the kernel,
# clears the bits, only when the kernel says the caller lacks CAP_FSETID.
# The caller without CAP_FSETID: root with it dropped (capsh), or the
# unprivileged user of the second pass (tests/run runs both).
. "$(dirname "$0")/lib.sh"
fixture
# real (lower) files with the bits; they are copied up by the first write
for f in lsu lsg lsgnx lsug lcap; do printf 'real\n' >"$WS/$f"; done
chmod 4755 "$WS/lsu"
chmod 2775 "$WS/lsg"
chmod 2745 "$WS/lsgnx"
chmod 6777 "$WS/lsug"
if is_root; then
	for f in lcap lcap_t lcap_o lcap_c lcap_r; do printf 'cap\n' >"$WS/$f"; done
	for f in lcap lcap_t lcap_o lcap_c lcap_r; do
		setcap cap_net_raw+ep "$WS/$f" ||
			skip "setcap failed on $WS (no security xattrs here)"
	done
	NOF='capsh --drop=cap_fsetid --'
else
	NOF=bash
fi
export NOF
model
txfs_mount || exit 1

nofsetid=$($NOF -c 'grep CapEff /proc/self/status' | awk '{print $2}')
if [ $((0x$nofsetid & 0x10)) = 0 ]; then
	ok "the writer lacks CAP_FSETID (CapEff $nofsetid)"
else
	fail "the writer lacks CAP_FSETID: expected bit 4 clear in CapEff got $nofsetid"
fi

# files born in the layer
both 'for f in su sg sgnx sug; do echo a > $f; done; chmod 4755 su; chmod 2775 sg; chmod 2745 sgnx; chmod 6777 sug; stat -c "%n %a" su sg sgnx sug'

# write by a caller without CAP_FSETID: set-uid goes, set-gid only with g+x
both '$NOF -c "for f in su sg sgnx sug lsu lsg lsgnx lsug; do echo w >> \$f; done"; stat -c "%n %a" su sg sgnx sug lsu lsg lsgnx lsug'
both 'cat lsu lsug'

# the bits set again after the inode was written (S_NOSEC cached in the
# kernel) must be cleared by the next write, also through an open fd
both 'chmod 4755 su lsu; $NOF -c "exec 3>>su 4>>lsu; echo x >&3; echo x >&4; chmod 6775 su lsu; echo y >&3; echo y >&4"; stat -c "%n %a" su lsu'
both 'chmod 4755 su; $NOF -c "echo z >> su"; $NOF -c "echo z >> su"; chmod 4755 su; $NOF -c "echo z >> su"; stat -c "%n %a" su'

# truncate(2), ftruncate and O_TRUNC without CAP_FSETID
both 'chmod 6775 sg lsg; chmod 4755 su lsu; $NOF -c "truncate -s 1 sg; truncate -s 1 lsg; : > su; : > lsu"; stat -c "%n %a %s" sg lsg su lsu'
both 'echo t > ft && chmod 4755 ft && $NOF -c "exec 3<>ft; truncate -s 0 /dev/fd/3" ; stat -c "%n %a %s" ft'
both 'echo t > fo && chmod 2777 fo && $NOF -c ": > fo"; stat -c "%n %a %s" fo'
# the mode alone (statx asks only for it: a stale cached mode would show)
both 'echo t > fm && chmod 2777 fm && $NOF -c ": > fm"; stat -c "%n %a" fm'
both 'echo t > fw && chmod 4777 fw && $NOF -c "echo u >> fw"; stat -c "%n %a" fw'
both 'echo t > fx && chmod 4777 fx && $NOF -c "truncate -s 0 fx"; stat -c "%n %a" fx'

# an unchanged size still counts as a truncate; a failed write changes nothing
both 'echo q > fs && chmod 4777 fs && $NOF -c "truncate -s 2 fs"; stat -c "%n %a %s" fs'
both 'echo r > fro && chmod 4555 fro && $NOF -c "echo no >> fro" 2>/dev/null; echo rc=$?; stat -c "%n %a" fro'

# The kernel's rules case by case (Linux 6.x fs/attr.c: setattr_should_
# drop_suidgid for write, truncate, O_TRUNC and fallocate by a caller
# without CAP_FSETID; chown_common + notify_change + setattr_prepare for
# chown and chgrp by every caller): one file per mode, the same operation
# on each, in the mount and in the plain directory; the modes must match.
# MODE:GID is a file of group GID (root's pass: a group root is not in).
# kp OP WHO: WHO is fsetid (the caller holds CAP_FSETID: root) or
# nofsetid (it lacks it: root through capsh, or the ordinary user).
cat >"$T/kp" <<'KP'
op=$1 who=$2
run=(bash -c)
[ "$who" = nofsetid ] && read -ra run <<<"$NOF -c"
for spec in $KP_MODES; do
	m=${spec%%:*} g=
	[ "$spec" != "$m" ] && g=${spec#*:}
	f=$op.$who.$m${g:+.$g}
	rm -rf "$f"
	case $op in
	fifo*) mkfifo "$f" ;;
	dir*) mkdir "$f" ;;
	*) echo data >"$f" ;;
	esac
	[ -n "$g" ] && chgrp "$g" "$f"
	chmod "$m" "$f"
	case $op in
	write) "${run[@]}" "echo more >> $f" ;;
	truncate) "${run[@]}" "truncate -s 2 $f" ;;
	ftruncate) "${run[@]}" "python3 -c 'import os, sys; os.ftruncate(os.open(sys.argv[1], os.O_WRONLY), 1)' $f" ;;
	otrunc) "${run[@]}" ": > $f" ;;
	fallocate) "${run[@]}" "fallocate -l 8192 $f" ;;
	keepsize) "${run[@]}" "fallocate -n -l 16384 $f" ;;
	punch) "${run[@]}" "fallocate -p -o 0 -l 1 $f" ;;
	chown | fifo-chown | dir-chown) "${run[@]}" "chown $KP_OWNER $f" ;;
	chgrp | fifo-chgrp | dir-chgrp) "${run[@]}" "chgrp $KP_GROUP $f" ;;
	chgrp0) "${run[@]}" "chgrp 0 $f" ;;
	chown-same) "${run[@]}" "chown $(stat -c %u:%g "$f") $f" ;;
	chown-none) "${run[@]}" "python3 -c 'import os, sys; os.chown(sys.argv[1], -1, -1)' $f" ;;
	dir-write) "${run[@]}" "echo x > $f/f; truncate -s 0 $f/f" ;;
	esac
done
stat -c '%n %a %u %g' "$op.$who".* | sort
KP
if is_root; then
	export KP_MODES='4755 2775 2745 6777 6745 6555 0755 2775:1234 2745:1234 6745:1234 6755:1234' KP_OWNER=1234 KP_GROUP=1234
	whos='fsetid nofsetid'
else
	# the ordinary user owns its files, is in their group, can only
	# give them to itself and its own group
	export KP_MODES='4755 2775 2745 6777 6745 6555 0755' KP_OWNER=$(id -u) KP_GROUP=$(id -g)
	whos=nofsetid
fi
for who in $whos; do
	for op in write truncate ftruncate otrunc fallocate keepsize punch \
		chown chgrp chown-same chown-none fifo-chown fifo-chgrp \
		dir-chown dir-chgrp dir-write; do
		both "bash $T/kp $op $who"
	done
	is_root && both "bash $T/kp chgrp0 $who"
done

# folders keep their set-gid bit (it is inheritance there, not privilege)
both 'mkdir -p gdir && chmod 2775 gdir && echo f > gdir/f && stat -c "%n %a" gdir gdir/f'

if is_root; then
	# root keeps the bits on write and truncate (CAP_FSETID) ...
	both 'echo a > rs && chmod 6775 rs && echo b >> rs && truncate -s 1 rs && : > rs && stat -c "%n %a" rs'
	# ... but chown clears set-uid for everyone, set-gid with g+x
	both 'for f in c1 c2 c3; do echo c > $f; done; chmod 4755 c1; chmod 2775 c2; chmod 2745 c3; chown 1234:1234 c1 c2 c3; stat -c "%n %a %u" c1 c2 c3'
	both 'chmod 6755 lsug; chown 0:0 lsug; stat -c "%n %a" lsug'
	both 'chmod 2775 gdir && chown 1234 gdir && stat -c "%n %a" gdir'
	# file capabilities of real files go on write (even root's), truncate,
	# O_TRUNC and chown; a plain getxattr/removexattr sees them as ext4 does
	both 'getcap lcap lcap_t lcap_o lcap_c lcap_r | sort'
	both 'echo w >> lcap; truncate -s 1 lcap_t; : > lcap_o; chown 0:0 lcap_c; getcap lcap lcap_t lcap_o lcap_c | sort; cat lcap'
	both 'setfattr -x security.capability lcap_r; echo rc=$?; getcap lcap_r'
	both 'setfattr -x security.capability lcap_r 2>&1 | sed "s/.*: //"'
	t 10 sh -c 'echo x > "$1"' sh "$MNT/newcap"
	t 10 setcap cap_net_raw+ep "$MNT/newcap" 2>/dev/null
	rc=$?
	if [ $rc = 0 ] || [ -n "$(getcap "$MNT/newcap" 2>/dev/null)" ]; then
		fail "setcap through the mount: expected refused got rc=$rc $(getcap "$MNT/newcap")"
	else
		ok "setcap through the mount is refused (no privilege from the agent)"
	fi
	t 10 cp -a "$MNT/newcap" "$MODEL/newcap"
else
	both 'echo a > cu && chmod 6775 cu && chown $(id -u):$(id -g) cu; stat -c "%n %a" cu'
	echo "# CAP_FSETID, chown to another user and capabilities need root: checked in the root pass"
fi
check_same "modes and xattrs equal the model's"
finish
