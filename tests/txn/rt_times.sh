#!/bin/bash
# Commit and rollback round trip of times (touch -d): real files, a real
# folder and a symlink (touch -h) given explicit mtimes, with nanoseconds.
# No entry is created, so the whole listing with mtimes must match the model.
. "$(dirname "$0")/txnlib.sh"
fixture
RT_FLAGS=-mox
roundtrip '
touch -d "2001-02-03 04:05:06.123456789" file.txt
touch -m -d "1999-12-31 23:59:59" dir/a.txt
touch -d "2010-10-10 10:10:10.5" big.bin
touch -h -d "2005-05-05 05:05:05" link_rel
touch -d "2003-03-03 03:03:03" "deep/a" dir
stat -c "%y %n" file.txt dir/a.txt dir'
