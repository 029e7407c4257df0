#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# policy/examples/strict.policy: ordinary git use works (init of a nested
# repository, add, commit, branch, checkout, switch, merge, tag, stash, gc,
# fsck), while
# `rm -rf .git` and rewriting .git/config or the hooks are refused, and
# no object is lost.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

SRC=${TXFS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
STRICT=$SRC/policy/examples/strict.policy
[ -r "$STRICT" ] || { fail "no $STRICT"; finish; }
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com
export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home GIT_TERMINAL_PROMPT=0
mkdir -p "$HOME"
g() { git -C "$1" "${@:2}" >/dev/null 2>&1; }

# An empty workspace: git init at the top cannot work with this policy,
# and that is not a failure: git init writes .git/config several times
# (config.lock renamed over config), which is exactly the rewrite that
# `readonly .git/config` refuses. Reported as a note; a nested `git init`
# below the top is tested with the repository further down.
mkdir -p "$T/empty" "$T/mnt0"
TXFS_POLICY=$STRICT
txfs_mount --ws "$T/empty" --mnt "$T/mnt0" --state "$T/state0" || exit 1
if (cd "$T/mnt0" && timeout 60 git init -q -b main) >"$T/init.out" 2>&1; then
	echo "note: git init at the top of an empty workspace works under strict.policy"
else
	echo "note: git init at the top of an empty workspace is refused by strict.policy (readonly .git/config, .git/hooks/): $(head -1 "$T/init.out")"
fi
txfs_umount "$T/mnt0" "$T/state0"
REAL_BEFORE=	# the real directory checked at the end is $WS, hashed at the next mount

# a repository with history
fixture
g "$WS" init -q -b main
g "$WS" add -A
g "$WS" commit -qm first
echo second >>"$WS/file.txt"
g "$WS" commit -qam second
cp "$WS/.git/config" "$T/config.orig"
sha_hooks() { (cd "$1/.git/hooks" && sha256sum -- * | sha256sum | cut -c1-64); }
HOOKS=$(sha_hooks "$WS")
txfs_mount || exit 1

allowed "git status" 'git status --short'
allowed "git add + commit" 'echo new > new.txt && git add new.txt && git commit -qm third'
allowed "git branch + checkout" 'git branch feature && git checkout -q feature'
allowed "commit on the branch" 'echo f > feature.txt && git add feature.txt && git commit -qm feature'
allowed "git switch back" 'git switch -q main'
allowed "a diverging commit" 'echo m >> file.txt && git commit -qam main-change'
allowed "git merge (a merge commit)" 'git merge -q --no-edit feature'
allowed "git tag" 'git tag v1'
allowed "git stash + pop" 'echo dirty >> new.txt && git stash -q && git stash pop -q'
allowed "git commit -a" 'git commit -qam after-stash'
allowed "git init of a nested repository" 'git init -q -b main nested && cd nested && echo n > n && git add n && git commit -qm n'
allowed "git gc" 'git gc --quiet'
allowed "git fsck" 'git fsck --no-progress'
check_eq "history: 7 commits reachable from main" 7 "$(in_mnt 'git rev-list --count main' 2>&1)"
objects() { (cd "$MNT/.git/objects" && find . -path ./info -prune -o -type f ! -name 'tmp_*' ! -name '.tmp-*' -exec sha256sum {} + | sort); }
objects >"$T/objects.before"

# refused
refused "git config --local (rewrites .git/config)" 'git config --local core.hooksPath /tmp/evil' 'Permission denied'
refused "appending to .git/config" 'echo "[alias] x = !sh" >> .git/config'
refused "sed -i .git/config" 'sed -i s/bare/BARE/ .git/config'
refused "writing a new hook" 'printf "#!/bin/sh\necho pwned\n" > .git/hooks/pre-commit'
refused "enabling a sample hook (mv)" 'mv .git/hooks/pre-commit.sample .git/hooks/pre-commit'
refused "chmod of a hook" 'chmod +x .git/hooks/update.sample'
refused "rm -rf .git" 'rm -rf .git'
check_eq ".git is still there" yes "$(test -d "$MNT/.git" && echo yes || echo no)"
check_eq ".git/config intact" "$(sha "$T/config.orig")" "$(sha "$MNT/.git/config")"
check_eq ".git/hooks intact" "$HOOKS" "$(sha_hooks "$MNT")"
objects >"$T/objects.after"
if cmp -s "$T/objects.before" "$T/objects.after"; then
	ok "every file of .git/objects (but the derived info/) intact after rm -rf .git ($(wc -l <"$T/objects.before") files)"
else
	fail "files of .git/objects changed by rm -rf .git:"
	diff "$T/objects.before" "$T/objects.after" | head -20 | sed 's/^/    /'
fi
if ! git -C "$MNT" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	echo "note: after rm -rf .git the objects, config and hooks are intact, but HEAD and the ref files are gone (strict.policy lets git rename onto them, so it cannot deny deleting them)"
fi

echo rollback >"$MNT/.txfs/ctl" || fail "rollback"
check_eq "after rollback, HEAD is back" "$(git -C "$WS" rev-parse HEAD)" "$(git -C "$MNT" rev-parse HEAD 2>&1)"
finish
