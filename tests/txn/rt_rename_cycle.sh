#!/bin/bash
# Commit and rollback round trip of a cycle of three renames: folders
# c1 -> c2 -> c3 -> c1 (through a temporary name), and the same for three
# files, so every target name is taken by another object until the end.
. "$(dirname "$0")/txnlib.sh"
fixture
for i in 1 2 3; do mkdir -p "$WS/c$i/in$i"; echo "c$i" >"$WS/c$i/in$i/f"; echo "file$i" >"$WS/f$i"; done
roundtrip '
mv c1 tmp && mv c3 c1 && mv c2 c3 && mv tmp c2
mv f1 tmp && mv f3 f1 && mv f2 f3 && mv tmp f2
cat c1/in3/f c2/in1/f c3/in2/f f1 f2 f3'
