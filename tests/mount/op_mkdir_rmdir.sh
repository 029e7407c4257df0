#!/bin/bash
# mkdir/rmdir: new and real directories; a real directory emptied and
# removed; a directory made again under a removed real name starts empty.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both 'mkdir newdir && stat -c "%F %a" newdir'
both 'mkdir -m 700 private && stat -c %a private'
both 'mkdir -p a/b/c/d && rmdir a/b/c/d && ls a/b'
both 'rmdir empty_dir && ls -d empty_dir; echo rc=$?'
both 'rmdir dir; echo rc=$?'
both 'rmdir file.txt; echo rc=$?'
both 'mkdir dir; echo rc=$?'
both 'mkdir file.txt/x; echo rc=$?'
both 'rm dir/sub/deep.txt && rmdir dir/sub && ls dir'
both 'rm -r deep/a && rmdir deep && ls -d deep; echo rc=$?'
both 'mkdir deep && ls -A deep && echo empty'
both 'mkdir deep/a && ls -A deep/a && echo still-empty'
both 'mkdir empty_dir && touch empty_dir/x && ls empty_dir'
both 'rm -r "dir with space" && mkdir "dir with space" && ls -A "dir with space" | wc -l'
both 'mkdir n1 && rmdir n1 && mkdir n1 && ls -A n1 | wc -l'
finish
