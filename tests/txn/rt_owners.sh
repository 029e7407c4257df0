#!/bin/bash
# Commit and rollback round trip of owners (as root): a real file, a real
# folder and a symlink chown'ed to other uids/gids, a new file given to
# another user. The tree listing compares uid:gid.
. "$(dirname "$0")/txnlib.sh"
is_root || skip "chown to another uid needs root"
fixture
roundtrip '
chown 1234:2345 file.txt
chown 4321 dir
chown -h 1111:1111 link_rel
chgrp 3456 dir/a.txt
echo new > new.txt && chown 1000:1000 new.txt
stat -c "%u:%g %n" file.txt dir new.txt'
