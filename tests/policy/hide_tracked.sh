#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Hiding a file git tracks (issue 10): with examples/secrets.policy over a
# repository whose history holds .env, `cat .env` says ENOENT but
# `git show HEAD:.env` prints it and `git status` shows " D .env" (so
# `git commit -a` would record its deletion), as txfs.policy(5) says; txfs
# mount and `txfs policy check --workspace DIR` warn about it, and say
# nothing for an untracked hidden file. With many such files (issue 23, 5)
# the warning names one path a line (quoted if it holds a newline), 20 of
# them, and counts the rest.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

export HOME=$T/home GIT_CONFIG_NOSYSTEM=1 GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@t \
	GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@t
mkdir -p "$HOME"
git config --global safe.directory '*'
rm -rf "$WS" && mkdir -p "$WS"
git -C "$WS" init -q
echo 'API_KEY=in-history' >"$WS/.env"
echo 'int x;' >"$WS/main.c"
git -C "$WS" add -A && git -C "$WS" commit -qm init
echo untracked >"$WS/local.pem"
SECRETS=$TXFS_SRC/policy/examples/secrets.policy

out=$(t 60 "$TXFS" policy check --workspace "$WS" "$SECRETS" 2>&1)
grep -q "warning: .*secrets.policy:[0-9]* hides .env, which git tracks" <<<"$out" &&
	ok "policy check --workspace warns about the tracked .env" || fail "policy check --workspace: $out"
grep -q "local.pem" <<<"$out" && fail "policy check warns about the untracked local.pem: $out" ||
	ok "policy check: no warning for an untracked hidden file"
out=$(t 60 "$TXFS" policy check "$SECRETS" 2>&1)
grep -q "warning" <<<"$out" && fail "policy check without --workspace warns: $out" ||
	ok "policy check without --workspace: no git warning"

TXFS_POLICY=$SECRETS
txfs_mount || exit 1
grep -q "warning: .* hides .env, which git tracks.*git show HEAD:.env" <<<"$ERR" &&
	ok "txfs mount warns about the tracked .env" || fail "txfs mount stderr: $ERR"
py "cat .env: ENOENT" ENOENT stat .env
check_eq "git show HEAD:.env still prints it" "API_KEY=in-history" \
	"$(cd "$MNT" && t 30 git show HEAD:.env 2>&1)"
check_eq "git status shows ' D .env'" " D .env" "$(cd "$MNT" && t 30 git status --porcelain 2>&1)"
txfs_umount

# Many hidden tracked files (issue 23, 5): over two commits, one named
# with a newline, one only in history (removed from the index). The
# warning names each path on a line of its own (the newline one quoted),
# never a newline-joined list as one name, 20 of them, then counts the
# rest exactly.
R=$T/many
mkdir -p "$R/secret"
git -C "$R" init -q
for i in $(seq 30); do echo "$i" >"$R/secret/f$i.txt"; done
echo nl >"$R/secret/new
line.txt"
echo gone >"$R/secret/gone.txt"
echo x >"$R/main.c"
git -C "$R" add -A && git -C "$R" commit -qm one
echo later >"$R/secret/later.txt"
git -C "$R" rm -q secret/gone.txt
git -C "$R" add -A && git -C "$R" commit -qm two
printf 'hide secret/**\n' >"$T/many.policy"
out=$(t 60 "$TXFS" policy check --workspace "$R" "$T/many.policy" 2>&1)
check_eq "every line of the output is a txfs warning or the check's verdict" "" \
	"$(grep -v '^txfs: warning: \|^'"$T/many.policy"': ok' <<<"$out" | head -3)"
check_eq "20 paths are named" 20 "$(grep -c '^txfs: warning: .* hides ' <<<"$out")"
check_eq "and the rest counted: 33 hidden tracked paths in all" \
	"txfs: warning: ... and 13 more hidden paths git tracks" "$(grep 'more hidden paths' <<<"$out")"
bad=$(grep '^txfs: warning: .* hides ' <<<"$out" | sed 's/^.* hides \(.*\), which git tracks in .*$/\1/' |
	grep -vxE 'secret/f[0-9]+\.txt|secret/later\.txt|secret/gone\.txt|"secret/new\\nline\.txt"')
check_eq "each named path is one tracked path (none joined to another)" "" "$bad"
out=$(t 60 "$TXFS" policy check --workspace "$R" <(printf 'hide secret/new*\nhide secret/gone.txt\n') 2>&1)
grep -q 'hides "secret/new\\nline.txt", which git tracks' <<<"$out" &&
	ok "the name with a newline is quoted on its line" || fail "the newline name: $out"
grep -q 'hides secret/gone.txt, which git tracks' <<<"$out" &&
	ok "a path only in history is named" || fail "the history-only path: $out"
FINISHED=1
exit 0
