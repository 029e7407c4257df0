#!/bin/bash
# Commit and rollback round trip of symlinks: new ones (relative, to a
# folder, dangling, absolute), a real one changed to another target, a real
# one deleted, one renamed.
. "$(dirname "$0")/txnlib.sh"
fixture
roundtrip '
ln -s file.txt newlink
ln -s ../nowhere dir/newdangling
ln -s /etc/hostname abslink
ln -s deep/a newdirlink
ln -sfn dir/a.txt link_rel
rm dangling
mv link_dir dir/link_dir_moved
readlink newlink link_rel dir/link_dir_moved'
