#!/bin/bash
# Commit and rollback round trip of deletions: real files (small, large,
# read-only, one name of a hard-link pair), a real folder tree (rm -rf), a
# nested real folder, an empty real folder, and a file born and deleted in
# the same transaction (commits as nothing).
. "$(dirname "$0")/txnlib.sh"
fixture
roundtrip '
rm file.txt big.bin ro.txt hard2
rm -rf dir "deep/a/b"
rmdir empty_dir
echo short-lived > gone.txt && rm gone.txt
ls'
