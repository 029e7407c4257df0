#!/bin/bash
# Commit and rollback round trip of hard links: a new link to a real file
# (then written through the new name), a third link to a real pair, a new
# file with two more links in other folders, and one name of a pair
# renamed. The tree listing compares link counts and link groups.
. "$(dirname "$0")/txnlib.sh"
fixture
roundtrip '
ln file.txt link_to_real
echo via-new-name >> link_to_real
ln hard1 dir/hard3
echo new > newf && ln newf dir/newf_link && ln newf "deep/a/newf_link2"
mv hard2 deep/hard2_moved
cat file.txt dir/newf_link; stat -c "%h %n" file.txt hard1 newf'
