#!/bin/bash
# Commit and rollback round trip of new files and modified files: a new
# file, a new folder with files, a small real file rewritten, a multi-block
# new file (several 64 KiB layer blocks), a partial overwrite in the middle
# of a large real file (block copy-on-write), an append, a truncation.
. "$(dirname "$0")/txnlib.sh"
fixture
"$FSOP" fill "$WS/large.bin" 3m 7
roundtrip '
echo new > new.txt
mkdir -p newdir/sub && echo n1 > newdir/n1 && echo n2 > newdir/sub/n2
echo rewritten > file.txt
"$FSOP" fill multi.bin 700k 3
"$FSOP" pwrite large.bin 1500000 PARTIAL-OVERWRITE-IN-THE-MIDDLE
"$FSOP" pwrite large.bin 65530 across-a-block-boundary
echo appended >> dir/a.txt
truncate -s 100000 big.bin
cat file.txt new.txt newdir/sub/n2; sha256sum large.bin multi.bin big.bin'
