#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Indirect ways around a rule that the main matrix (bypass.sh) does not
# cover, kept apart because they test what the rules mean rather than one
# system call: a `deny read` file must not become readable by renaming it,
# renaming its folder or hard-linking it elsewhere (all three are allowed
# operations on their own); no new hard link can be made to a readonly
# file (a link that existed before the mount is a documented limitation).
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

fixture
mkdir -p "$WS/sec" "$WS/prot" "$WS/free"
echo 'SECRET' >"$WS/sec/s.txt"
echo 'PROTECTED' >"$WS/prot/h"
ln "$WS/prot/h" "$WS/free/h"
use_policy gaps <<'EOF'
# bypass_gaps.sh
deny read sec/s.txt
readonly prot/
EOF
txfs_mount || exit 1

refused "deny read: cat" 'cat sec/s.txt'
refused "deny read: rename the file, then read it" 'mv sec/s.txt sec/t.txt && cat sec/t.txt'
in_mnt 'test -e sec/t.txt && mv sec/t.txt sec/s.txt' >/dev/null 2>&1
refused "deny read: hard-link the file elsewhere, then read it" 'ln sec/s.txt free/s && cat free/s'
refused "deny read: rename its folder, then read it" 'mv sec sec2 && cat sec2/s.txt'
in_mnt 'test -e sec2 && mv sec2 sec' >/dev/null 2>&1
# Known limitation (README, "Policy"): a hard link that existed in the real
# directory before the mount is another name txfs has no way to know
# without scanning the whole tree; rules apply to the name used. New hard
# links to a protected file are refused (link needs write on the source):
refused "readonly: a new hard link to a readonly file" 'ln prot/h free/h2'
echo rollback >"$MNT/.txfs/ctl" || fail "rollback"
finish
