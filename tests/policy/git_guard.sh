#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# The default policy keeps git repositories whole against every program but
# git, while every git workflow keeps working (issue 10).
#
# Layout: WS is itself a repository ("outer") holding proj/, a repository
# that outer does not track (a nested repository), with a local submodule.
#  1. destructive commands (rm -rf .git, find . -delete, rm -rf .git/objects,
#     rm .git/index .git/HEAD, `git clean -ffdx` run in the parent folder,
#     : > .git/HEAD): after each, git fsck --full passes and git log shows
#     the same history; then commit, and the real repository is whole.
#  2. every git workflow (commit, amend, switch/checkout, branch -D, merge,
#     rebase and rebase --abort, stash, cherry-pick, reset --hard, gc and
#     prune, repack, worktree add/remove, submodule update, clean -fdx),
#     then commit, and the real repository passes fsck.
#  3. the same workflows after the mass-deletion guard tripped on real
#     deletions (git's locks and index replacement are no loss).
#  4. caller conditions: a copy of git elsewhere, and a script named git,
#     are not the real git: their deletions in .git are refused.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t GIT_TERMINAL_PROMPT=0 \
	GIT_EDITOR=true
mkdir -p "$HOME"
git config --global init.defaultBranch main
git config --global protocol.file.allow always
git config --global safe.directory '*'
git config --global gc.auto 0

g() { git -C "$1" "${@:2}" >/dev/null 2>&1 || fail "fixture: git ${*:2} in $1"; }
rm -rf "$WS" && mkdir -p "$WS"
g "$WS" init -q
echo top >"$WS/top.txt"
printf 'proj/\n' >"$WS/.gitignore"
mkdir -p "$WS/junk"
for i in $(seq 1010); do echo "$i" >"$WS/junk/j$i"; done
g "$WS" add -A && g "$WS" commit -qm outer
mkdir -p "$T/subsrc" && g "$T/subsrc" init -q
echo s >"$T/subsrc/s.txt" && g "$T/subsrc" add -A && g "$T/subsrc" commit -qm sub
P=$WS/proj
mkdir -p "$P" && g "$P" init -q
for i in 1 2 3 4; do
	echo "line $i" >>"$P/a.txt"; echo "$i" >"$P/f$i.txt"
	g "$P" add -A && g "$P" commit -qm "c$i"
done
g "$P" submodule add -q "$T/subsrc" sub && g "$P" commit -qm submodule
g "$P" branch side HEAD~2
LOG0=$(git -C "$P" log --format=%H --all | sort | sha256sum)
OUTER0=$(git -C "$WS" log --format=%H | sha256sum)

default_policy
txfs_mount || exit 1
M=$MNT/proj
ctl() { t 60 bash -c "echo '$1' > '$MNT/.txfs/ctl'" || fail "echo $1 > .txfs/ctl: $(cat "$MNT/.txfs/ctl")"; }

# whole WHAT [DIR]: git fsck --full passes and the history is the same
whole() {
	local d=${2:-$M} out
	out=$(cd "$d" && t 120 git fsck --full 2>&1) &&
		ok "$1: git fsck --full passes" ||
		fail "$1: git fsck --full in $d: $(echo "$out" | tail -3)"
	check_eq "$1: git log shows the same history" "$LOG0" \
		"$(cd "$d" && git log --format=%H --all 2>&1 | sort | sha256sum)"
}
# mnt_git WHAT 'script': a git workflow step in the mounted proj
step() {
	(cd "$M" && timeout -k 5 120 bash -ec "$2") >"$T/step.out" 2>&1 &&
		ok "$1" || fail "$1: $(tail -5 "$T/step.out")"
}

# ---- 1. destructive commands
# the files the default policy lets anyone remove (locks, messages) aside
gitfiles() { (cd "$M" && find .git -type f ! -name '*.lock' ! -name '*_MSG' ! -name '*_EDITMSG' | wc -l); }
nfiles=$(gitfiles)
in_mnt 'cd proj && rm -rf .git' >/dev/null 2>&1
check_eq "rm -rf .git: every file inside is still there" "$nfiles" "$(gitfiles)"
whole "rm -rf .git"
in_mnt 'cd proj && find . -delete' >/dev/null 2>&1
whole "find . -delete"
in_mnt 'cd proj && rm -rf .git/objects' >/dev/null 2>&1
whole "rm -rf .git/objects"
refused "rm .git/index .git/HEAD" 'cd proj && rm .git/index .git/HEAD'
whole "rm .git/index .git/HEAD"
in_mnt 'git clean -ffdx' >/dev/null 2>&1
whole "git clean -ffdx in the parent folder (proj is a nested repository)"
refused ": > .git/HEAD" 'cd proj && : > .git/HEAD'
whole ": > .git/HEAD"
refused "mv .git elsewhere" 'cd proj && mv .git ../gone'
refused "rm -rf proj (a folder holding a repository)" 'rm -rf proj'
whole "rm -rf proj"
ctl commit
whole "the real repository after commit" "$P"
check_eq "the real outer repository after commit" "$OUTER0" \
	"$(git -C "$WS" log --format=%H 2>&1 | sha256sum)"
step "restore the working tree (reset --hard, submodule update)" \
	'git reset -q --hard && git submodule -q update --init'

# ---- 2. workflows
workflows() {
	local w=$1
	export R=$2	# a round number: the files each round creates are new
	step "$w: commit" 'echo x >> a.txt && git commit -qam w1'
	step "$w: commit --amend" 'git commit -q --amend -m w1b'
	step "$w: switch -c / checkout" 'git switch -qc topic && echo t > t$R.txt && git add t$R.txt && git commit -qm t && git checkout -q main'
	step "$w: merge" 'git merge -q --no-edit topic'
	step "$w: branch -D" 'git branch -qD topic'
	step "$w: rebase" 'git switch -qc rb side && echo r > r$R.txt && git add r$R.txt && git commit -qm r && git rebase -q main && git switch -q main'
	step "$w: rebase --abort" 'git switch -qc ra side && echo conflict >> a.txt && git commit -qam ra; ! git rebase -q main >/dev/null 2>&1; git rebase --abort && git switch -q main && git branch -qD ra rb'
	step "$w: stash" 'echo s >> a.txt && git stash -q && git stash pop -q && git checkout -q -- a.txt'
	step "$w: cherry-pick" 'git switch -qc cp side && echo c > cp$R.txt && git add cp$R.txt && git commit -qm cp && git switch -q main && git cherry-pick $(git rev-parse cp) >/dev/null && git branch -qD cp'
	step "$w: reset --hard" 'echo junk >> a.txt && git reset -q --hard HEAD~1'
	step "$w: gc and prune" 'git gc -q --prune=now'
	step "$w: repack" 'git repack -qad'
	step "$w: worktree add and remove" 'git worktree add -q ../wt-$RANDOM side >/dev/null 2>&1 && wt=$(git worktree list --porcelain | sed -n "s/^worktree //p" | tail -1) && echo w > "$wt/w.txt" && git worktree remove --force "$wt" && ! test -e "$wt"'
	step "$w: submodule update" 'git submodule -q deinit -f sub && git submodule -q update --init && test -f sub/s.txt'
	step "$w: clean -fdx" 'mkdir -p build && touch build/o untracked && git clean -qfdx && ! test -e build && ! test -e untracked && test -d .git'
	local out
	out=$(cd "$M" && t 120 git fsck --full 2>&1) && ok "$w: git fsck --full passes" ||
		fail "$w: git fsck: $(echo "$out" | tail -3)"
}
workflows "workflow" 1
ctl commit
out=$(t 120 git -C "$P" fsck --full 2>&1) && ok "workflows: the real repository passes fsck after commit" ||
	fail "workflows: real fsck: $(echo "$out" | tail -3)"

# ---- 3. after the guard tripped on real deletions
refused "1010 real deletions trip the guard" 'rm -rf junk'
check_eq "the guard stopped at 1000 losses" 10 "$(in_mnt 'ls junk | wc -l')"
in_mnt 'cat .txfs/ctl' | qgrep "limit deletes 1000.*reached.*roll back" &&
	ok ".txfs/ctl says the guard is reached and what to do" ||
	fail ".txfs/ctl: $(in_mnt 'cat .txfs/ctl')"
log_guard "guard" deletes
refused "after the trip, another real loss" 'rm top.txt'
allowed "after the trip, creating and removing a new file" 'mkdir -p tmpd && touch tmpd/x && rm -rf tmpd'
workflows "after the guard tripped" 2
ctl rollback
check_eq "rollback restores every junk file" 1010 "$(in_mnt 'ls junk | wc -l')"

# ---- 4. caller conditions: only the real git is exempt
cp /usr/bin/git "$T/git"
mkdir -p "$T/bin"
printf '#!/bin/sh\nrm -f "$@"\n' >"$T/bin/git"; chmod 755 "$T/bin/git"
refused "a copy of git elsewhere cannot delete a ref" \
	"cd proj && '$T/git' update-ref -d refs/heads/side"
check_eq "... the ref is still there" ok "$(cd "$M" && git rev-parse -q --verify refs/heads/side >/dev/null && echo ok)"
refused "a script named git cannot delete in .git" "cd proj && '$T/bin/git' .git/HEAD" 'Permission denied|Operation not permitted'
ctl rollback	# the copy of git left a packed-refs.new it could not remove
ln -sf /usr/bin/git "$T/bin/gitlink"
allowed "the real git through a symlink is the real git" \
	"cd proj && '$T/bin/gitlink' branch -q tmpb side && '$T/bin/gitlink' branch -qD tmpb"
ctl rollback
finish_real() {
	local entry
	is_mounted "$MNT" && txfs_umount
	FINISHED=1
	exit 0
}
finish_real
