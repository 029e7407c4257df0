#!/bin/bash
# Commit and rollback round trip of user.* extended attributes: added to
# real files and a real folder, changed, removed (the fixture's
# user.fixture on file.txt), set on a new file; a modified real file
# keeps its untouched xattr.
. "$(dirname "$0")/txnlib.sh"
fixture
setfattr -n user.keep -v kept "$WS/dir/a.txt" || skip "no user xattrs on $T"
setfattr -n user.change -v old "$WS/hard1"
roundtrip '
setfattr -x user.fixture file.txt
setfattr -n user.a -v va file.txt
setfattr -n user.dir -v vd dir
setfattr -n user.change -v new hard1
echo modified >> dir/a.txt
echo new > new.txt && setfattr -n user.new -v vn new.txt
getfattr -d file.txt dir/a.txt hard1 new.txt'
