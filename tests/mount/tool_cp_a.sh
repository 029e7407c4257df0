#!/bin/bash
# cp -a inside the mount (real tree to a new place), out of the mount and
# into it: modes, times, symlinks, hard links, xattrs preserved as in a
# plain directory.
. "$(dirname "$0")/lib.sh"
fixture
mkfifo "$WS/dir/fifo"
setfattr -n user.tag -v cp "$WS/dir/a.txt" 2>/dev/null || true
touch -h -d @1300000000 "$WS/link_rel"
model
txfs_mount || exit 1
attrs='find copy -mindepth 1 \( -type d -printf "%p %y %m %T@\n" \) -o \( -printf "%p %y %m %s %T@ %l\n" \) | sort; find copy -type f -printf "%n %p\n" | sort'
both 'mkdir copy && cp -a dir deep exec.sh ro.txt hard1 hard2 link_rel link_dir dangling sparse.bin "dir with space" copy/ && '"$attrs"
both 'getfattr -d copy/dir/a.txt copy/file.txt 2>&1 | grep -v "^$"; cp -a file.txt copy/ && getfattr -d copy/file.txt'
both 'stat -c "%i" copy/hard1 copy/hard2 | uniq | wc -l'
both 'cp -a copy copy2 && diff -r --no-dereference copy copy2 && echo same'
both 'touch -d @1500000000 copy'
mkdir "$T/out1" "$T/out2"
t 60 cp -a "$MNT/copy" "$T/out1/" || fail "cp -a out of the mount failed"
cp -a "$MODEL/copy" "$T/out2/"
check_tree "cp -a out of the mount equals cp -a out of a plain dir" "$T/out1" "$T/out2" -mox
cp -a "$WS/dir" "$OUTSIDE/fromout"
both 'cp -a "$OUTSIDE/fromout" in && find in \( -type d -printf "%p %y %m %T@\n" \) -o \( -printf "%p %y %m %s %T@\n" \) | sort'
finish
