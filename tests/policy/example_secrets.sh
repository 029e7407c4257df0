#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# policy/examples/secrets.policy: .env*, keys and certificates, SSH keys,
# .aws/, .ssh/ and other credential files are invisible to ls, cat, find,
# grep -r, tar c, cp -a, rsync, git add -A and python's os.walk; templates
# (.env.example) and look-alike sources (id_map.c) stay visible; a commit
# of the visible changes leaves the secrets untouched.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

SRC=${TXFS_SRC:-$(cd "$(dirname "$0")/../.." && pwd)}
SECRETS=$SRC/policy/examples/secrets.policy
[ -r "$SECRETS" ] || { fail "no $SECRETS"; finish; }
export GIT_AUTHOR_NAME=agent GIT_AUTHOR_EMAIL=agent@example.com
export GIT_COMMITTER_NAME=agent GIT_COMMITTER_EMAIL=agent@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home
mkdir -p "$HOME"

SECRET_FILES=".env .env.production config/.env.local certs/server.pem certs/server.key
.ssh/id_ed25519 .ssh/config .aws/credentials deploy/id_rsa deploy/id_rsa.pub
.netrc .docker/config.json .kube/config app/.gnupg/secring.gpg"
VISIBLE_FILES=".env.example src/id_map.c src/main.c src/old.c config/app.yml deploy/deploy.sh"
for f in $SECRET_FILES; do
	mkdir -p "$WS/$(dirname "$f")"
	printf 'CANARY secret %s\n' "$f" >"$WS/$f"
done
for f in $VISIBLE_FILES; do
	mkdir -p "$WS/$(dirname "$f")"
	printf 'visible %s\n' "$f" >"$WS/$f"
done
chmod 600 "$WS/.ssh/id_ed25519" "$WS/deploy/id_rsa"
ids() { for f in $SECRET_FILES; do printf '%s %s %s\n' "$f" "$(stat -c '%i %s %a %Y' "$WS/$f")" "$(sha "$WS/$f")"; done; }
ids >"$T/secrets.before"
expected_visible=$(cd "$WS" && find . -type f | sed 's#^\./##' | grep -vxF -f <(printf '%s\n' $SECRET_FILES) | sort)

TXFS_POLICY=$SECRETS
txfs_mount || exit 1

check_eq "find lists only the visible files" "$expected_visible" "$(in_mnt 'find . -type f' | sed 's#^\./##' | sort)"
check_eq "ls -A shows no secret at the top" "" "$(in_mnt 'ls -A' | grep -E '^(\.env|\.env\.production|\.ssh|\.aws|\.netrc)$')"
check_eq "ls -laR has no secret name" "" "$(in_mnt 'ls -laR' | grep -E 'server\.(pem|key)|id_rsa|id_ed25519|credentials|\.env\.local|secring|\.netrc')"
check_eq "grep -r finds no canary" "" "$(in_mnt 'grep -r CANARY . 2>&1')"
for f in $SECRET_FILES; do
	out=$(cd "$MNT" && cat "$f" 2>&1)
	case $out in *"No such file"*) ;; *) fail "cat $f: expected ENOENT got '$out'"; continue ;; esac
done
ok "cat of every secret: No such file or directory"
check_eq "tar c holds no secret" "" "$(in_mnt 'tar cf - . | tar tf -' | grep -E 'CANARY|\.env($|\.production|\.local)|\.pem|\.key$|id_rsa|id_ed25519|\.aws|\.ssh|\.netrc|config\.json|\.kube/config|\.gnupg')"
check_eq "tar c: no canary in the archive bytes" 0 "$(in_mnt 'tar cf - .' | grep -c CANARY)"
in_mnt "cp -a . '$T/copy'" >"$T/cp.out" 2>&1 && ok "cp -a of the workspace" || fail "cp -a: $(head -c 300 "$T/cp.out")"
check_eq "cp -a copied no secret" "" "$(grep -rl CANARY "$T/copy" 2>&1)"
in_mnt "rsync -a ./ '$T/rsynced/'" >"$T/rs.out" 2>&1 && ok "rsync -a" || fail "rsync -a: $(head -c 300 "$T/rs.out")"
check_eq "rsync copied no secret" "" "$(grep -rl CANARY "$T/rsynced" 2>&1)"
check_eq "python os.walk sees no secret" "" "$(cd "$MNT" && "$PYTHON" -c '
import os
for d, ds, fs in os.walk("."):
    for f in fs:
        if "CANARY" in open(os.path.join(d, f), errors="replace").read(): print(d, f)')"
allowed "git add -A in a new repository" 'git init -q -b main && git add -A && git commit -qm all'
check_eq "git ls-files has no secret" "" "$(in_mnt 'git ls-files' | grep -vxF -f <(echo "$expected_visible"))"
check_eq "templates stay readable: .env.example" "visible .env.example" "$(cat "$MNT/.env.example" 2>&1)"
check_eq "look-alike sources stay visible: src/id_map.c" "visible src/id_map.c" "$(cat "$MNT/src/id_map.c" 2>&1)"
allowed ".env.example is writable (allow all before hide)" 'echo API_KEY= >> .env.example'
refused "writing a new .env" 'echo API_KEY=leak > .env'
refused "copying a key into .ssh" 'cp src/main.c .ssh/authorized_keys' 'Permission denied|No such file'
refused "creating ~-style credentials in a new folder" 'mkdir -p newhome/.aws' 'Permission denied'

# commit the visible changes; the secrets stay as they were
allowed "visible changes" 'echo edit >> src/main.c && rm src/old.c && echo new > src/new.c'
if t 60 bash -c "echo commit > '$MNT/.txfs/ctl'"; then ok "commit"; else fail "commit: $(cat "$MNT/.txfs/ctl")"; fi
txfs_umount
ids >"$T/secrets.after"
if cmp -s "$T/secrets.before" "$T/secrets.after"; then
	ok "commit left every secret untouched (inode, size, mode, mtime, content)"
else
	fail "secrets changed by the commit:"
	diff "$T/secrets.before" "$T/secrets.after" | sed 's/^/    /'
fi
check_eq "the visible edit was committed" "visible src/main.c
edit" "$(cat "$WS/src/main.c")"
check_eq "the visible deletion was committed" no "$(test -e "$WS/src/old.c" && echo yes || echo no)"
check_eq ".env.example change committed" "visible .env.example
API_KEY=" "$(cat "$WS/.env.example")"
snapshot_real
finish
