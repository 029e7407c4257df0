#!/bin/bash
# Commit and rollback round trip of set-uid/set-gid bits the daemon clears
# (fs/view/killpriv.c): real files written, truncated, opened with O_TRUNC by a
# caller without CAP_FSETID (root with it dropped, or the unprivileged
# pass), and chown'ed (root); the real directory ends up as on ext4.
. "$(dirname "$0")/txnlib.sh"
fixture
for f in su sg sgnx tr ot ch; do printf 'real\n' >"$WS/$f"; done
chmod 4755 "$WS/su" "$WS/tr" "$WS/ch"
chmod 2775 "$WS/sg" "$WS/ot"
chmod 2745 "$WS/sgnx"
if is_root; then
	NOF='capsh --drop=cap_fsetid --'
	CHOWN='chown 0:0 ch'
else
	NOF=bash
	CHOWN='chown $(id -u):$(id -g) ch'
fi
export NOF
roundtrip '
$NOF -c "echo w >> su; echo w >> sg; echo w >> sgnx; truncate -s 2 tr; : > ot"
'"$CHOWN"'
stat -c "%a %n" su sg sgnx tr ot ch'
finish
