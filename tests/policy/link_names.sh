#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# link_names - issue 23 hole 3: a rule protects the object, not only the
# name it is reached by. Under the default policy (.git/* may not be
# truncated or deleted but by git) and a policy `deny write,truncate
# secret/**` (rename allowed), as root and as txfstest (unpriv.sh):
#   - a hard link that would give a protected file an unprotected name is
#     refused (EACCES): ln .git/HEAD hh, python os.link(.git/index),
#     cp -al .git/refs, and the reverse (ln new .git/x); then `: > hh`
#     has nothing to truncate;
#   - a file moved out of a protected folder, or whose folder is renamed,
#     keeps its rules: mv secret/a.txt pub.txt; : > pub.txt, echo >>,
#     python truncate, and mv secret pubdir; : > pubdir/b.txt: refused;
#   - a real file hard-linked before the mount (.git/description and
#     desc-link): truncating it through desc-link is refused, whether the
#     other name is known to the daemon or not (a real file with more
#     links than known names is refused an operation the policy denies
#     anywhere: txfs.policy(5));
#   - links between names with the same rules (ln a.txt a2.txt), git
#     itself, and writes to unprotected files still work.
# After a commit the real .git/HEAD, index, refs and description and
# secret/ are byte-identical, git fsck is clean, and the workspace mounts
# again.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"
. "$(dirname "$0")/unpriv.sh"

command -v git >/dev/null || skip "git is needed"
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }
rm -rf "$WS" && mkdir -p "$WS/secret/sub"
(cd "$WS" && git -c init.defaultBranch=main init -q && echo a > a.txt &&
	git add a.txt && git -c user.name=t -c user.email=t@t.invalid commit -qm one) ||
	fail "git init"
printf 'secret a\n' >"$WS/secret/a.txt"
printf 'secret b\n' >"$WS/secret/sub/b.txt"
ln "$WS/.git/description" "$WS/desc-link"
protected() {
	(cd "$1" && sha256sum .git/HEAD .git/index .git/description .git/refs/heads/main \
		secret/a.txt secret/sub/b.txt)
}
protected "$WS" >"$T/protected.before"

default_policy
txfs_mount || exit 1
M=$MNT
refused "ln .git/HEAD hh" 'ln .git/HEAD hh'
allowed "no hh after the refused link" 'test ! -e hh'
py "python os.link(.git/index, idx)" EACCES link .git/index idx
refused "cp -al .git/refs r2" 'cp -al .git/refs r2'
refused "the reverse: ln new .git/x" 'echo x > new && ln new .git/x'
allowed "ln a.txt a2.txt (same rules)" 'ln a.txt a2.txt && echo more >> a2.txt && grep -q more a.txt'
check_eq ".git/HEAD intact in the view" "$(sed -n 1p "$T/protected.before" | cut -c1-64)" \
	"$(cd "$M" && sha256sum .git/HEAD | cut -c1-64)"
# linked before the mount: the other name may be unknown here
refused ": > desc-link (a real file with 2 links, the other unknown)" ': > desc-link'
py "python truncate(desc-link)" EACCES truncate desc-link 0
allowed "read .git/description (its name becomes known)" 'cat .git/description >/dev/null && cat desc-link >/dev/null'
refused ": > desc-link, .git/description known" ': > desc-link'
allowed "appending to a multi-link file (write is not denied anywhere)" 'echo ok >> a2.txt'
allowed "git status and git add in the mount" 'git status --short >/dev/null && git add a.txt a2.txt'
ctl commit
txfs_umount
protected "$WS" >"$T/protected.after"
if diff "$T/protected.before" "$T/protected.after" >/dev/null; then
	ok "after commit: real .git/HEAD, index, description, refs, secret/ byte-identical"
else
	# the index is git's own: git add rewrote it
	grep -v ' .git/index$' "$T/protected.before" >"$T/p1"
	grep -v ' .git/index$' "$T/protected.after" >"$T/p2"
	diff "$T/p1" "$T/p2" >/dev/null &&
		ok "after commit: real .git/HEAD, description, refs, secret/ byte-identical (index: git's own add)" ||
		fail "after commit: protected bytes changed: $(diff "$T/protected.before" "$T/protected.after" | tr '\n' ' ')"
fi
out=$(cd "$WS" && t 60 git fsck --full 2>&1) && ok "git fsck of the real repository" ||
	fail "git fsck: $out"

# moved out of a protected folder: keeps its rules
use_policy secret <<'EOF'
# link_names.sh
deny write,truncate secret/**
EOF
txfs_mount || exit 1
allowed "mv secret/a.txt pub.txt (rename is allowed)" 'mv secret/a.txt pub.txt'
refused ": > pub.txt" ': > pub.txt'
refused "echo >> pub.txt" 'echo x >> pub.txt'
py "python truncate(pub.txt)" EACCES truncate pub.txt 0
allowed "mv secret pubdir" 'mv secret pubdir'
refused ": > pubdir/sub/b.txt (its folder was renamed)" ': > pubdir/sub/b.txt'
refused "ln of a moved protected file to a new name" 'ln pubdir/sub/b.txt p3'
allowed "an unprotected file is still writable" 'echo y > c.txt && echo z >> c.txt'
refused "a file with 2 links (a.txt, a2.txt committed), one name unknown: write refused where the policy denies writes elsewhere" 'echo y >> a.txt'
ctl commit
txfs_umount
check_eq "after commit: the moved files kept their bytes" "secret a
secret b" "$(cat "$WS/pub.txt" "$WS/pubdir/sub/b.txt" 2>&1)"
# put them back for the end
mv "$WS/pub.txt" "$WS/pubdir/a.txt" && mv "$WS/pubdir" "$WS/secret"
protected "$WS" | grep secret >"$T/s.after"
grep secret "$T/protected.before" | diff - "$T/s.after" >/dev/null &&
	ok "secret/ bytes identical after the round trip" || fail "secret/ changed"
default_policy
txfs_mount || exit 1
allowed "mounts again; git log works" 'git log --oneline | grep one >/dev/null'
txfs_umount
FINISHED=1
exit 0
