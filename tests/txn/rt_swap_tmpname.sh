#!/bin/bash
# Commit and rollback round trip of two real folders swapped through a
# temporary name (a -> tmp, b -> a, tmp -> b), with a change inside one of
# them after the swap, and two files swapped the same way.
. "$(dirname "$0")/txnlib.sh"
fixture
mkdir -p "$WS/sa/sub" "$WS/sb"
echo a1 >"$WS/sa/f"; echo a2 >"$WS/sa/sub/g"; echo b1 >"$WS/sb/f"; echo b2 >"$WS/sb/h"
roundtrip '
mv sa tmp && mv sb sa && mv tmp sb
echo changed-after-swap >> sb/sub/g
mv file.txt t.txt && mv ro.txt file.txt && mv t.txt ro.txt
cat sa/f sb/f sb/sub/g file.txt ro.txt'
