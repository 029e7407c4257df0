#!/bin/bash
# renameat2(RENAME_NOREPLACE): EEXIST over real and new names, success onto
# free names, for files and directories.
. "$(dirname "$0")/lib.sh"
fixture
model
txfs_mount || exit 1

both '"$FSOP" rename2 noreplace file.txt ro.txt; echo rc=$?; cat file.txt ro.txt'
both '"$FSOP" rename2 noreplace file.txt dir; echo rc=$?'
both 'echo n > n && "$FSOP" rename2 noreplace n file.txt; echo rc=$?'
both '"$FSOP" rename2 noreplace file.txt free && cat free && ls file.txt; echo rc=$?'
both '"$FSOP" rename2 noreplace dir empty_dir; echo rc=$?'
both '"$FSOP" rename2 noreplace dir dfree && ls dfree'
both 'rm ro.txt && "$FSOP" rename2 noreplace free ro.txt && cat ro.txt'
both '"$FSOP" rename2 noreplace hard1 hard2; echo rc=$?'
finish
