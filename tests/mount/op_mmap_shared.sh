#!/bin/bash
# mmap MAP_SHARED writes (with msync) to real and new files reach the file,
# are coherent with read/write on other descriptors, and persist a remount.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1
both '"$FSOP" mmap-write big.bin 70000 MAPPED-LOWER && "$FSOP" pread big.bin 70000 12; echo; sha256sum big.bin'
both '"$FSOP" mmap-write big.bin 0 AT-START && head -c 8 big.bin; echo'
both 'head -c 100000 /dev/zero > new.bin && "$FSOP" mmap-write new.bin 99990 MAPPED-NEW && tail -c 10 new.bin; echo'
both '"$FSOP" mmap-read file.txt 0 6'
both '"$FSOP" mmap-coherent big.bin && "$FSOP" pread big.bin 100 8 && "$FSOP" pread big.bin 5000 8; echo'
both 'head -c 10000 /dev/zero > c.bin && "$FSOP" mmap-coherent c.bin && sha256sum c.bin'
both 'cp big.bin cp.bin && "$FSOP" mmap-write cp.bin 131072 THIRD-BLOCK && sha256sum cp.bin'
both '"$FSOP" mmap-write hard1 0 HA && cat hard2'
finish
