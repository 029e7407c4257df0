#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Hiding a file git tracks (issue 10): with examples/secrets.policy over a
# repository whose history holds .env, `cat .env` says ENOENT but
# `git show HEAD:.env` prints it and `git status` shows " D .env" (so
# `git commit -a` would record its deletion), as txfs.policy(5) says; txfs
# mount and `txfs policy check --workspace DIR` warn about it, and say
# nothing for an untracked hidden file.
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
echo "$out" | grep -q "warning: .*secrets.policy:[0-9]* hides .env, which git tracks" &&
	ok "policy check --workspace warns about the tracked .env" || fail "policy check --workspace: $out"
echo "$out" | grep -q "local.pem" && fail "policy check warns about the untracked local.pem: $out" ||
	ok "policy check: no warning for an untracked hidden file"
out=$(t 60 "$TXFS" policy check "$SECRETS" 2>&1)
echo "$out" | grep -q "warning" && fail "policy check without --workspace warns: $out" ||
	ok "policy check without --workspace: no git warning"

TXFS_POLICY=$SECRETS
txfs_mount || exit 1
echo "$ERR" | grep -q "warning: .* hides .env, which git tracks.*git show HEAD:.env" &&
	ok "txfs mount warns about the tracked .env" || fail "txfs mount stderr: $ERR"
py "cat .env: ENOENT" ENOENT stat .env
check_eq "git show HEAD:.env still prints it" "API_KEY=in-history" \
	"$(cd "$MNT" && t 30 git show HEAD:.env 2>&1)"
check_eq "git status shows ' D .env'" " D .env" "$(cd "$MNT" && t 30 git status --porcelain 2>&1)"
txfs_umount
FINISHED=1
exit 0
