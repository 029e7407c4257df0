#!/bin/bash
# fallocate: plain, KEEP_SIZE, PUNCH_HOLE and ZERO_RANGE on new and real
# files; contents and sizes as in a plain directory.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1
both '"$FSOP" fallocate new.bin 0 0 1048576 && stat -c %s new.bin && sha256sum new.bin'
both '"$FSOP" fallocate big.bin 0 0 500000 && stat -c %s big.bin && sha256sum big.bin'
both '"$FSOP" fallocate file.txt keep 0 1048576 && stat -c %s file.txt && cat file.txt'
both '"$FSOP" fallocate big.bin punch 4096 70000 && stat -c %s big.bin && sha256sum big.bin'
both 'cp big.bin b2 && "$FSOP" fallocate b2 punch 100000 8192 && sha256sum b2'
both '"$FSOP" fallocate big.bin zero 200000 1000 && stat -c %s big.bin && sha256sum big.bin'
both 'fallocate -l 200000 viautil && stat -c %s viautil'
both '"$FSOP" fallocate dir 0 0 10; echo rc=$?'
finish
