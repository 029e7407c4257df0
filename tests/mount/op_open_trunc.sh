#!/bin/bash
# open(2) with O_TRUNC truncates a regular file whatever the access mode,
# as Linux does (issue 13, point 2: O_RDONLY|O_TRUNC kept the size):
# real and new files, through relative and absolute symlinks, with O_CREAT,
# after the file's pages were cached; a file the caller may not write is
# refused and keeps its bytes; a folder gives EISDIR. The same steps in a
# plain directory give the same results (as root and as a plain user).
. "$(dirname "$0")/lib.sh"
fixture
for f in t1 t2 t3 t4 t5; do echo "contents of $f" >"$WS/$f"; done
ln -s t2 "$WS/sym1"
ln -s sym1 "$WS/sym2"
mkdir "$WS/sd"
ln -s ../t5 "$WS/sd/up"
model
txfs_mount || exit 1

both 'cat t1 && $FSOP open t1 rt && stat -c %s t1 && cat t1 && echo end'
both 'echo new-file > n1 && cat n1 && $FSOP open n1 rt && stat -c %s n1'
both 'cat t2 && $FSOP open sym1 rt && stat -c %s t2 sym1 && cat sym2'
both 'echo again > t2 && $FSOP open sym2 rt && stat -c %s t2'
both '$FSOP open t3 rct && stat -c %s t3'
both '$FSOP open sd/up rct && stat -c %s t5'
both '$FSOP open t4 bt && stat -c %s t4'
both '$FSOP open fresh rct && stat -c %s fresh'
both 'echo big > n2 && ln n2 n2link && $FSOP open n2link rt && stat -c %s n2 n2link'
both '$FSOP open big.bin rt && stat -c %s big.bin && cmp big.bin /dev/null && echo empty'
both '$FSOP open ro.txt rt; echo rc=$?; stat -c %s ro.txt; cat ro.txt'
both '$FSOP open dir rt; echo rc=$?'
both '$FSOP open file.txt r && stat -c %s file.txt'
check_same
finish
