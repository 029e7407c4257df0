#!/bin/bash
# Commit and rollback round trip of FIFOs: new ones (with a mode), a real
# one deleted and a real one renamed.
. "$(dirname "$0")/txnlib.sh"
fixture
mkfifo "$WS/realfifo1" "$WS/realfifo2"
roundtrip '
mkfifo newfifo
mkfifo -m 600 dir/newfifo2
rm realfifo1
mv realfifo2 deep/fifo_moved
stat -c "%F %a %n" newfifo dir/newfifo2 deep/fifo_moved'
