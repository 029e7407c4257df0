#!/bin/bash
# Commit and rollback round trip of modes: real files and folders chmod'ed
# (also a read-only file made writable and a folder made private, sticky),
# a new file with an unusual mode.
. "$(dirname "$0")/txnlib.sh"
fixture
roundtrip '
chmod 600 file.txt
chmod 755 dir/a.txt
chmod 644 ro.txt && echo now-writable > ro.txt
chmod 700 dir
chmod 1777 empty_dir
chmod 640 exec.sh
echo new > new.txt && chmod 404 new.txt
stat -c "%a %n" file.txt dir dir/a.txt empty_dir new.txt'
