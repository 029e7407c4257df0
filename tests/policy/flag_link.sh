#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# A new name made by hard link (or rename) into a flagged path is flagged at
# that name (issue 9 point 9): `ln payload .git/hooks/post-checkout` lists
# the hook as needing review in .txfs/changes, .txfs/status, txfs status,
# txfs diff --name-status and the commit report, under a policy that only
# flags .git/hooks/. Under the default policy (where .git/* may not be
# truncated or deleted) such a link is refused: a hard link joins only
# names the policy treats alike (issue 23 hole 3; link_names.sh).
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

rm -rf "$WS" && mkdir -p "$WS/.git/hooks"
echo real >"$WS/realfile"
default_policy
txfs_mount || exit 1
refused "default policy: ln payload .git/hooks/post-checkout (rules differ)" \
	'echo x > payload0 && ln payload0 .git/hooks/post-checkout'
refused "default policy: ln realfile .git/hooks/post-merge (rules differ)" 'ln realfile .git/hooks/post-merge'
ctl_rollback() { t 60 bash -c "echo rollback > '$MNT/.txfs/ctl'"; }
ctl_rollback
txfs_umount
use_policy flagonly <<'EOF'
flag **/.git/hooks/ **/.git/modules/**/hooks/
EOF
txfs_mount || exit 1

allowed "a new payload, hard-linked into .git/hooks" \
	'printf "#!/bin/sh\necho pwned\n" > payload && chmod +x payload && ln payload .git/hooks/post-checkout'
allowed "a real file, hard-linked into .git/hooks" 'ln realfile .git/hooks/post-merge'
allowed "a new file renamed into .git/hooks" 'echo x > p2 && mv p2 .git/hooks/pre-commit'
changes=$(cat "$MNT/.txfs/changes")
echo "$changes" | sed 's/^/    changes: /'
for p in .git/hooks/post-checkout .git/hooks/post-merge .git/hooks/pre-commit; do
	grep -q "^A $p[[:space:]].*needs review" <<<"$changes" && ok "changes: 'A $p' needs review" ||
		fail "changes: expected 'A $p (needs review)' got: $changes"
done
check_eq "status.json: 3 need review" 3 "$(status_field needs_review)"
out=$(t 30 "$TXFS" status "$MNT" 2>&1)
grep -q "3 need review" <<<"$out" && ok "txfs status: 3 need review" || fail "txfs status: $out"
out=$(t 30 "$TXFS" diff --name-status "$MNT" 2>&1)
grep -q "^A	.git/hooks/post-checkout	(needs review)" <<<"$out" &&
	ok "txfs diff --name-status lists the linked hook as needing review" ||
	fail "txfs diff --name-status: $out"
out=$(t 60 "$TXFS" commit "$MNT" 2>&1)
grep -q "needs review.*\.git/hooks/post-checkout" <<<"$out" &&
	ok "the commit report names the linked hook" || fail "commit report: $out"
[ -x "$WS/.git/hooks/post-checkout" ] && [ "$(stat -c %h "$WS/payload")" = 2 ] &&
	ok "committed as a hard link, as it was made" || fail "real: $(ls -li "$WS" "$WS/.git/hooks")"
txfs_umount
FINISHED=1
exit 0
