#!/bin/bash
# Hard links whose folders go away (issue 13, point 1): after `ln f b/g;
# rm b/g; rmdir b` the file must stay readable and linkable under its other
# name (it answered EACCES, even to root, until the next mount, because the
# object's path was rebuilt through the removed folder). Every order of
# link, unlink, rmdir and rename of the folders holding the links, for new
# files, real files and a real pair of links, with the kernel's cached
# names kept (cat through them) and across a remount; then `git clone
# --local` (hard-linked objects) and `rm -rf` of the clone, then git fsck.
# The commit half is tests/txn/rt_link_dirs.sh.
. "$(dirname "$0")/lib.sh"
command -v git >/dev/null || { fail "git is not installed"; exit 1; }
fixture
for f in real1 real2 real3 real4 real5 real6 real7 real8; do
	echo "content of $f" >"$WS/$f"
done
mkdir -p "$WS/rdir" "$WS/rdir2/sub"
model
txfs_mount || exit 1

# The orders, each run on a file named $F (a new file or a real one).
orders=(
	'mkdir b && ln $F b/g && rm b/g && rmdir b && cat $F && ln $F again && rm again'
	'mkdir b && ln $F b/g && cat b/g && rm -r b && cat $F && stat -c %h $F'
	'mkdir b && ln $F b/g && mv b c && rm c/g && rmdir c && cat $F'
	'mkdir b && ln $F b/g && mv b c && rm -r c && cat $F'
	'mkdir -p b/c && ln $F b/c/g && mv b/c d && rmdir b && cat $F d/g && rm -r d && cat $F'
	'mkdir b && ln $F b/g && rm $F && cat b/g && mv b b2 && ln b2/g $F && rm -r b2 && cat $F'
	'mkdir b b2 && ln $F b/g && ln b/g b2/h && rm $F && rm -r b && mv b2/h $F && rmdir b2 && cat $F'
	'mkdir b && ln $F b/g && echo other > b/h && mv b/h b/g && cat b/g && rm -r b && cat $F'
	'ln $F rdir/g && mv rdir rdir_moved && rm rdir_moved/g && cat $F && mv rdir_moved rdir'
	'mkdir -p x/y && ln $F x/y/g && mv x/y rdir2/sub/y && rm -r x && rm -r rdir2 && cat $F'
)
i=0
for o in "${orders[@]}"; do
	i=$((i + 1))
	both "echo new$i > new$i && F=new$i && $o && stat -c %h new$i"
	both "F=real$(( (i - 1) % 8 + 1 )) && cat \$F && $o && stat -c %h \$F"
	[ -e "$MNT/rdir2" ] || both 'mkdir -p rdir2/sub'
done
both 'mkdir b && ln hard1 b/h && rm hard2 && rm -r b && cat hard1 && stat -c %h hard1 && ln hard1 hard2'
check_same "after every order, the merged view equals the model"

# Links made before a remount, removed after it (the new mount learns the
# names afresh), then the reverse.
both 'echo r1 > n1 && mkdir lb && ln n1 lb/g && ln real1 lb/r && ln hard1 lb/h1'
remount || exit 1
both 'cat lb/g lb/r lb/h1 && rm lb/g lb/r lb/h1 && rmdir lb && cat n1 real1 hard1'
both 'mkdir lb2 && ln n1 lb2/g && cat lb2/g && ln real2 lb2/r'
remount || exit 1
both 'rm -r lb2 && cat n1 real2 && stat -c %h n1 real2'

# git clone --local hard-links the objects; removing the clone must leave
# the source repository sound.
export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.invalid \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.invalid \
	GIT_AUTHOR_DATE='2024-01-01T00:00:00Z' GIT_COMMITTER_DATE='2024-01-01T00:00:00Z'
mkdir -p "$HOME"
git config --global init.defaultBranch main
both 'git init -q src && cd src && for i in 1 2 3 4 5; do echo $i > f$i; git add f$i; git commit -qm c$i; done && git rev-parse HEAD'
both 'git clone -q --local src clone && git -C clone log --oneline | wc -l && rm -rf clone && git -C src fsck --full --strict 2>&1 && git -C src log --oneline | wc -l'
both 'git clone -q --local src clone2 && cd src && git gc -q && cd .. && rm -rf clone2 && git -C src fsck --full 2>&1 && cat src/f3'
both "rm src/.git/index"  # stat data (inode numbers) differ by nature
finish
