#!/bin/bash
# copy_file_range (or the kernel's fallback): real to new, new to new,
# into a real file, and cp (which uses it) from inside and outside.
. "$(dirname "$0")/lib.sh"
fixture
head -c 1000000 /dev/urandom >"$OUTSIDE/src.bin"
model
txfs_mount || exit 1
both '"$FSOP" cfr big.bin c1 && sha256sum c1 big.bin'
both '"$FSOP" cfr c1 dir/c2 && cmp c1 dir/c2 && echo same'
both '"$FSOP" cfr file.txt ro.txt && cat ro.txt'
both '"$FSOP" cfr sparse.bin sp2 && stat -c %s sp2 && cmp sparse.bin sp2 && echo same'
both 'cp big.bin c3 && cp --reflink=auto big.bin c4 && sha256sum c3 c4'
both 'cp "$OUTSIDE/src.bin" fromout && cmp "$OUTSIDE/src.bin" fromout && echo same'
both '"$FSOP" cfr dir x; echo rc=$?'
finish
