#!/bin/bash
# git inside the mount, on a real repository with history: status (clean,
# as the index's stat data must match), add, commit, branch, checkout,
# merge, gc, fsck. The same steps in a plain copy give the same commit ids
# (dates are fixed), the same work tree and a sound repository.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { fail "git is not installed"; exit 1; }
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid \
	GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
mkdir -p "$HOME"
git config --global init.defaultBranch main
git config --global gc.autoDetach false
git config --global core.fsync all 2>/dev/null || true
r=$WS/repo
git init -q "$r"
for i in $(seq 30); do
	mkdir -p "$r/src/m$((i % 5))"
	seq "$i" 200 >"$r/src/m$((i % 5))/f$i.txt"
	echo "commit $i" >>"$r/README"
	git -C "$r" add -A && git -C "$r" commit -qm "commit $i"
	[ "$i" = 10 ] && git -C "$r" tag v1
	[ "$i" = 20 ] && git -C "$r" gc -q
done
git -C "$r" checkout -qb feature
for i in 1 2 3; do echo "feature $i" >"$r/feature$i.txt"; git -C "$r" add -A; git -C "$r" commit -qm "feature $i"; done
git -C "$r" checkout -q main
echo untracked >"$r/untracked.txt"
model
txfs_mount || exit 1

g() { both "cd repo && $1"; }
g 'git status --porcelain'
g 'git log --oneline | wc -l && git rev-parse HEAD v1 feature'
g 'sed -i s/5/FIVE/ src/m0/f5.txt && echo new > src/new.txt && git add -A && git commit -qm change1 && git rev-parse HEAD'
g 'git status --porcelain'
g 'git branch topic && git checkout -q topic && echo topic > topic.txt && git add topic.txt && git commit -qm topic && git rev-parse HEAD'
g 'git checkout -q main && echo main >> README && git commit -qam main-side && git merge -q --no-edit topic && git rev-parse HEAD'
g 'git merge -q --no-edit feature && git log --oneline | wc -l && git rev-parse HEAD'
g 'git checkout -q v1 && ls src/m0 && git checkout -q main && git status --porcelain'
g 'git rm -q src/m1/f1.txt && git mv src/m2 src/moved && git commit -qm moves && git rev-parse HEAD'
g 'git gc -q --prune=now && git count-objects -v | grep -E "^(count|in-pack|packs):"'
g 'git fsck --full --strict 2>&1 | grep -v "^Checking" ; git status --porcelain'
g 'git stash list | wc -l && echo dirty >> README && git stash -q && git status --porcelain && git stash pop -q && git diff --stat'
g 'git checkout -q -- README && git status --porcelain && git log --format=%H%x20%T | sha256sum'
# the work trees match; .git differs in stat caches (index) only
for d in "$MNT/repo" "$MODEL/repo"; do
	(cd "$d" && t 60 "$FSOP" tree . | grep -v '^\.git/' | grep -v '^\.git ') >"$d.tree" 2>&1
done
if cmp -s "$MNT/repo.tree" "$MODEL/repo.tree"; then ok "work trees identical"; else fail "work trees differ:"; diff "$MNT/repo.tree" "$MODEL/repo.tree" | head | sed 's/^/    /'; fi
rm -f "$MNT/repo.tree" "$MODEL/repo.tree"
remount || exit 1
g 'git status --porcelain && git fsck --full 2>&1 | grep -v "^Checking"; git rev-parse HEAD'
MODEL=
finish
