#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The mass-deletion guard of the default policy (`limit deletes 1000`)
# counts losses of real data, not operations (issue 10):
#  - rm -rf of a 5,000-file tree made in the transaction costs nothing;
#  - 1,001 removals of real files trip it, and so do 1,001 truncations
#    (O_TRUNC and ftruncate) and 1,001 rename-overs of real files;
#  - once tripped, only losses are refused: creating, writing, renaming
#    over and removing what the transaction made keep working, and
#    .txfs/ctl and .txfs/status say what happened and what to do;
#  - a rollback and a commit start a new count; files a committed
#    transaction made are real afterwards and count.
# And caller-conditioned rules (except-by, only-by) with copies, scripts
# and symlinks of the trusted program.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

rm -rf "$WS" && mkdir -p "$WS/real" "$WS/trunc" "$WS/prot"
for i in $(seq 1001); do echo "r$i" >"$WS/real/r$i"; echo "t$i" >"$WS/trunc/t$i"; done
echo keep >"$WS/prot/keep"
default_policy
txfs_mount || exit 1
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }
count() { in_mnt "ls $1 | wc -l"; }

# ---- what the transaction made costs nothing
allowed "5,000 files made in the transaction" \
	"mkdir -p made/a made/b && $PYTHON -c 'import sys
for i in range(5000): open(\"made/%s/f%d\" % (\"ab\"[i % 2], i), \"w\").write(\"x\")'"
allowed "rm -rf of the 5,000-file tree made in the transaction" 'rm -rf made'
allowed "5,000 files made and replaced by rename-over" \
	"mkdir made && $PYTHON -c 'import os
for i in range(2500):
    open(\"made/f%d\" % i, \"w\").write(\"x\"); open(\"made/g\", \"w\").write(\"y\"); os.rename(\"made/g\", \"made/f%d\" % i)' && rm -rf made"
in_mnt 'cat .txfs/ctl' | qgrep "limit deletes" &&
	fail "no loss yet, but .txfs/ctl speaks of the guard: $(in_mnt 'cat .txfs/ctl')" ||
	ok ".txfs/ctl: no guard note without losses"

# ---- removals of real files
refused "1,001 removals of real files" 'rm real/*'
check_eq "exactly 1,000 real files were removed" 1 "$(count real)"
log_guard "removals" deletes
grep -q "reached" "$MNT/.txfs/ctl" && grep -q "roll back" "$MNT/.txfs/ctl" &&
	ok ".txfs/ctl says the limit is reached and what to do" ||
	fail ".txfs/ctl: expected the guard note got: $(cat "$MNT/.txfs/ctl")"
grep -q "limit deletes 1000.*reached" "$MNT/.txfs/status" && ok ".txfs/status has the guard note" ||
	fail ".txfs/status: $(cat "$MNT/.txfs/status")"
refused "tripped: truncating a real file" ': > trunc/t1'
check_eq "... which keeps its data" t1 "$(in_mnt 'cat trunc/t1')"
refused "tripped: renaming over a real file" 'echo n > n1 && mv n1 trunc/t2'
allowed "tripped: creating, writing, renaming over and removing new files" \
	'mkdir -p lock/d && echo a > lock/x.lock && echo b > lock/y && mv lock/y lock/x.lock && : > lock/x.lock && rm -rf lock n1'
allowed "tripped: changing a real file without shrinking it" 'echo more >> trunc/t3'
ctl rollback
check_eq "rollback: every real file is back" 1001 "$(count real)"

# ---- truncations (O_TRUNC and ftruncate) of real files
refused "1,001 truncations of real files" \
	"for i in \$(seq 500); do : > trunc/t\$i || exit 1; done && $PYTHON -c 'import os
for i in range(501, 1002):
    fd = os.open(\"trunc/t%d\" % i, os.O_WRONLY); os.ftruncate(fd, 0); os.close(fd)'" \
	'Permission denied|PermissionError'
check_eq "exactly 1,000 real files were truncated" 1000 "$(in_mnt 'find trunc -type f -empty | wc -l')"
allowed "truncating an already truncated file again costs nothing" ': > trunc/t1 && truncate -s 0 trunc/t2'
ctl rollback

# ---- rename-over of real files
refused "1,001 rename-overs of real files" \
	"$PYTHON -c 'import os
for i in range(1, 1002):
    open(\"new\", \"w\").write(\"n\"); os.rename(\"new\", \"real/r%d\" % i)'" 'PermissionError'
check_eq "exactly 1,000 real files were replaced" 1000 "$(in_mnt 'grep -lx n real/* | wc -l')"
ctl rollback

# ---- a commit starts a new count; committed files are real
allowed "600 real removals" 'for i in $(seq 600); do rm real/r$i || exit 1; done'
ctl commit
allowed "after commit, 401 more real removals" 'rm real/*'
check_eq "after commit, the real folder is empty" 0 "$(count real)"
allowed "1,001 files made and committed" 'mkdir hist && for i in $(seq 1001); do : > hist/h$i || exit 1; done'
ctl commit
ls "$WS/hist" | wc -l | qgrep -x 1001 && ok "the 1,001 files are real now" || fail "hist: $(ls "$WS/hist" | wc -l)"
refused "removing the 1,001 committed files counts" 'rm hist/*'
check_eq "exactly 1,000 of them were removed" 1 "$(count hist)"
ctl rollback
txfs_umount

# ---- caller conditions
cp /bin/rm "$T/rm-copy"
mkdir -p "$T/bin"
printf '#!/bin/sh\nexec /bin/unlink "$@"\n' >"$T/bin/rm"; chmod 755 "$T/bin/rm"
ln -sf "$(readlink -f /bin/rm)" "$T/bin/rmlink"
use_policy callers <<EOF
# guard_losses.sh: only rm (the system's) may delete in prot/, and tee may
# not write to prot/keep
deny delete prot/** except-by $(readlink -f /bin/rm)
deny write prot/keep only-by /usr/bin/tee
EOF
txfs_mount || exit 1
refused "except-by: a copy of rm elsewhere" "'$T/rm-copy' prot/keep"
refused "except-by: a script named rm" "'$T/bin/rm' prot/keep" 'Permission denied|cannot unlink'
refused "except-by: another program (python)" "$PYTHON -c 'import os; os.unlink(\"prot/keep\")'" 'PermissionError'
log_veto "except-by: the veto is logged" delete prot/keep 3
allowed "only-by: another program may write" 'echo more >> prot/keep'
refused "only-by: the named program may not" 'echo x | tee -a prot/keep'
allowed "except-by: the real rm, through a symlink" "'$T/bin/rmlink' prot/keep"
ctl rollback
txfs_umount
cat >"$T/bad.policy" <<'EOF'
deny delete x except-by
deny delete x except-by usr/bin/git
hide x except-by /bin/rm
EOF
out=$("$TXFS" policy check "$T/bad.policy" 2>&1)
for want in "bad.policy:1:24:" "bad.policy:2:25:" "bad.policy:3:8:"; do
	grep -q "$want" <<<"$out" && ok "policy check reports $want" || fail "policy check: expected $want got: $out"
done
FINISHED=1
exit 0
