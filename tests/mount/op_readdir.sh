#!/bin/bash
# opendir/readdir(plus): the merged listing (real + new - removed), types,
# big directories spread over many readdir calls, and the rm -rf pattern
# (unlink each entry right after reading it).
. "$(dirname "$0")/lib.sh"
fixture
mkdir "$WS/many" "$WS/eat"
for i in $(seq 1500); do : >"$WS/many/real-entry-with-a-longish-name-$i"; done
for i in $(seq 2000); do : >"$WS/eat/e$i"; done
model
txfs_mount || exit 1

list='find . -mindepth 1 -path ./.txfs -prune -o \( -type d -printf "%p %y %m\n" \) -o \( -printf "%p %y %m %s\n" \) | sort'
both "$list"
both 'ls -A | grep -vx .txfs'
both 'ls -ln --time-style=+ dir/sub'
both 'for i in $(seq 1500); do : > many/new-entry-with-a-longish-name-$i; done; rm many/real-entry-with-a-longish-name-1?? ; ls many | wc -l; ls many | sort | sha256sum'
both 'ls -U many | sort | uniq -d | wc -l'
both 'rm file.txt && touch n1 && mkdir n2 && ln -s x n3 && ls -A | grep -vx .txfs'
both 'find . -path ./.txfs -prune -o -printf "%y %p\n" | sort | sha256sum'
t 60 "$FSOP" readdir-unlink "$MNT/eat" >"$T/ru.out" 2>&1
rc=$?
if [ $rc = 0 ]; then ok "readdir+unlink of 2000 real entries empties the directory ($(cat "$T/ru.out"))"; else fail "readdir-unlink: $(cat "$T/ru.out")"; fi
rm -f "$MODEL"/eat/*
both 'ls -A eat | wc -l && rmdir eat'
both 'ls -A empty_dir | wc -l'
both 'ls nothing; echo rc=$?'
both 'ls file.txt/; echo rc=$?'
finish
