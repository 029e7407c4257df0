#!/bin/bash
# renameat2(RENAME_EXCHANGE): real with new, file with directory, real
# directory with new directory, and ENOENT when one side is missing.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both '"$FSOP" rename2 exchange file.txt ro.txt && cat file.txt ro.txt && stat -c %a file.txt ro.txt'
both 'echo n > n && "$FSOP" rename2 exchange n big.bin && cat big.bin && sha256sum n'
both '"$FSOP" rename2 exchange dir exec.sh && ls exec.sh && cat dir'
both 'mkdir nd && echo in-nd > nd/f && "$FSOP" rename2 exchange nd exec.sh && cat exec.sh/f && ls nd'
both '"$FSOP" rename2 exchange "dir with space" deep/a && ls "dir with space" deep/a'
both '"$FSOP" rename2 exchange missing file.txt; echo rc=$?'
both '"$FSOP" rename2 exchange hard1 link_rel && readlink hard1 && cat link_rel'
finish
