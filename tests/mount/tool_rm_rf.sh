#!/bin/bash
# rm -rf of real trees inside the mount: gone from the view (also after a
# remount), a directory made again under the name is empty, and the real
# tree stays intact. Then everything at the top is removed.
. "$(dirname "$0")/lib.sh"
fixture
for d in $(seq 40); do mkdir -p "$WS/tree/d$d/x"; for f in $(seq 50); do : >"$WS/tree/d$d/x/f$f"; done; ln -s .. "$WS/tree/d$d/up"; done
model
txfs_mount || exit 1
both 'rm -rf tree && ls tree; echo rc=$?'
both 'mkdir -p tree/d1/x && ls -A tree tree/d1/x | wc -l'
both 'rm -rf dir deep "dir with space" && ls -A | grep -vx .txfs'
remount || exit 1
both 'ls -A | grep -vx .txfs; ls -A tree/d1/x | wc -l'
both 'find . -mindepth 1 -maxdepth 1 ! -name .txfs -exec rm -rf {} + ; ls -A | grep -vx .txfs | wc -l'
both 'mkdir dir && echo fresh > dir/a.txt && ls -A dir'
finish
