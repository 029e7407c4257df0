#!/bin/bash
# mmap MAP_PRIVATE: stores stay in the process, never reach the file.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1
both '"$FSOP" mmap-private big.bin 70000 PRIVATE && sha256sum big.bin'
both 'cp file.txt n.txt && "$FSOP" mmap-private n.txt 0 PRIV && cat n.txt'
both '"$FSOP" mmap-write big.bin 10 SHARED && "$FSOP" mmap-private big.bin 10 PRIVAT && "$FSOP" pread big.bin 10 6; echo'
finish
