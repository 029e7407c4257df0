#!/bin/bash
# symlink/readlink: relative, absolute, dangling and long targets; real
# symlinks read and followed; hostile target bytes.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both 'ln -s file.txt s1 && readlink s1 && cat s1 && stat -c "%F %s" s1'
both 'ln -s /nonexistent/abs s2 && readlink s2 && stat -c %s s2'
both 'ln -s "" s3; echo rc=$?'
both 'ln -s nowhere s4 && cat s4; echo rc=$?'
both 'readlink link_rel link_dir dangling && cat link_dir/a.txt && ls link_dir/'
both 't=$(head -c 4000 /dev/zero | tr "\0" a); ln -s "$t" longlink && readlink longlink | wc -c'
both 't=$(head -c 4096 /dev/zero | tr "\0" a); ln -s "$t" toolong; echo rc=$?'
both 'ln -s "$(printf "with\nnewline and \\xff byte")" weird && readlink weird | od -c | head -3'
both 'ln -s x file.txt; echo rc=$?'
both 'ln -s dir/sub sublink && cat sublink/deep.txt && echo new > sublink/through && cat dir/sub/through'
both 'ln -s ../file.txt dir/up && cat dir/up'
both 'readlink file.txt; echo rc=$?'
both 'ln -sf big.bin link_rel && readlink link_rel'
finish
