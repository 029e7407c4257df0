#!/bin/bash
# create/open/read/write/flush/release: new files, lower files written at
# the start, middle and end, O_TRUNC, O_APPEND, O_EXCL, hard-linked lower
# files, executing a lower file; compared with the same steps in a plain dir.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both 'printf new > new.txt && cat new.txt'
both 'cat file.txt big.bin | sha256sum'
both 'echo more >> file.txt && cat file.txt'
both 'printf X | dd of=big.bin bs=1 seek=70000 conv=notrunc status=none && sha256sum big.bin'
both 'printf END | dd of=big.bin bs=1 seek=307197 conv=notrunc status=none && sha256sum big.bin && stat -c %s big.bin'
both 'dd if=/dev/zero of=big.bin bs=4096 seek=10 count=3 conv=notrunc status=none && sha256sum big.bin'
both 'printf PAST | dd of=big.bin bs=1 seek=400000 conv=notrunc status=none && stat -c %s big.bin && sha256sum big.bin'
both ': > dir/a.txt && wc -c < dir/a.txt'
both 'printf abc > "dir with space/x y.txt" && cat "dir with space/x y.txt"'
both '"$FSOP" open file.txt wcx; echo rc=$?'
both '"$FSOP" open brand-new wcx && stat -c "%s %a" brand-new'
both 'head -c 200000 /dev/zero | tr "\0" z > zz && sha256sum zz'
both 'for i in $(seq 200); do echo line$i >> multi; done; sha256sum multi'
both './exec.sh'
both 'cp exec.sh e2.sh && ./e2.sh && stat -c %a e2.sh'
both 'echo through-one > hard1 && cat hard2'
both 'exec 3<>file.txt; printf Z >&3; exec 3>&-; cat file.txt'
both 'exec 3<big.bin; printf W | dd of=big.bin conv=notrunc status=none; head -c 1 <&3; exec 3<&-'
both 'exec 3>>dir/sub/deep.txt; echo a1 >&3; echo a2 >&3; exec 3>&-; cat dir/sub/deep.txt'
both '"$FSOP" pwrite deep/a/b/c/leaf.txt 1 XYZ && cat deep/a/b/c/leaf.txt'
both '"$FSOP" pwrite dir 0 x; echo rc=$?'
both '"$FSOP" open nodir/x wc; echo rc=$?'
both '"$FSOP" open file.txt/x wc; echo rc=$?'
both '"$FSOP" fill rnd 3000000 7 && cp rnd rnd2 && cmp rnd rnd2 && echo same'
finish
