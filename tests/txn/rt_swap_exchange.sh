#!/bin/bash
# Commit and rollback round trip of two real folders swapped with
# renameat2(RENAME_EXCHANGE), with a change inside one of them after the
# swap; a folder exchanged with a file; two files exchanged.
. "$(dirname "$0")/txnlib.sh"
fixture
mkdir -p "$WS/sa/sub" "$WS/sb"
echo a1 >"$WS/sa/f"; echo a2 >"$WS/sa/sub/g"; echo b1 >"$WS/sb/f"; echo b2 >"$WS/sb/h"
roundtrip '
"$FSOP" rename2 exchange sa sb
echo changed-after-swap >> sa/h
"$FSOP" rename2 exchange empty_dir exec.sh
"$FSOP" rename2 exchange file.txt dir/a.txt
cat sa/f sb/f sb/sub/g file.txt dir/a.txt empty_dir; ls exec.sh'
