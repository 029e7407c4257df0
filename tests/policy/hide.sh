#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# hide: a hidden path does not exist for the agent. Lookup says ENOENT,
# readdir omits it, it cannot be read (also not through a symlink or a
# path with ..), a shadowing name cannot be created (EACCES, also with
# O_EXCL: EACCES, never EEXIST), it cannot be renamed, linked or deleted,
# nor can the folders that hold it (a rename of such a folder says EXDEV
# and logs nothing: no veto names a hidden path); an `allow read` before the hide makes a
# path visible and readable but not writable. A commit of the visible
# changes next to hidden files never touches the hidden real files.
. "$(dirname "$0")/../mount/lib.sh"
. "$(dirname "$0")/plib.sh"

fixture
mkdir -p "$WS/cfg" "$WS/keys" "$WS/secret/inner" "$WS/app"
printf 'API_KEY=top-secret\n' >"$WS/.env"
printf 'API_KEY=\n' >"$WS/.env.example"
printf 'LOCAL=secret\n' >"$WS/cfg/.env.local"
printf 'visible\n' >"$WS/cfg/visible"
printf -- '-----BEGIN KEY-----\n' >"$WS/keys/a.pem"
printf 'x\n' >"$WS/secret/inner/x"
printf 'int main(void) { return 0; }\n' >"$WS/app/main.c"
printf 'APP=secret\n' >"$WS/app/.env"
ln -s .env "$WS/lnk"
chmod 600 "$WS/.env"
HIDDEN_REAL=".env cfg/.env.local keys/a.pem secret/inner/x app/.env"
real_ids() {
	local p
	for p in $HIDDEN_REAL; do
		printf '%s %s %s\n' "$p" "$(stat -c '%i %s %a %u %Y' "$WS/$p")" "$(sha "$WS/$p")"
	done
	ls -A "$WS/secret" "$WS/keys"
}
real_ids >"$T/hidden.before"

use_policy hide <<'EOF'
# hide.sh
allow read .env.example
hide **/.env* **/*.pem secret/
EOF
HL=3
txfs_mount || exit 1

# lookup
py "lookup .env" ENOENT stat .env
py "lookup cfg/.env.local" ENOENT stat cfg/.env.local
py "lookup keys/a.pem" ENOENT stat keys/a.pem
py "lookup the hidden folder" ENOENT stat secret
py "lookup below the hidden folder" ENOENT stat secret/inner/x
py "lookup app/.env" ENOENT lstat app/.env
py "lookup through canonicalization (app/../.env)" ENOENT stat app/../.env

# readdir
check_eq "ls -A of the root omits them" "" "$(in_mnt 'ls -A' | grep -E '^(\.env|secret)$')"
check_eq "ls -A keys is empty" "" "$(in_mnt 'ls -A keys')"
check_eq "find sees no hidden path" "./.env.example" "$(in_mnt "find . \( -name '.env*' -o -name '*.pem' -o -name secret \) -print" | sort)"
check_eq "python listdir of cfg" "visible" "$(cd "$MNT" && "$PYTHON" "$PYOP" listdir cfg)"

# reads
refused "cat .env" 'cat .env' 'No such file'
refused "cat through a real symlink to it" 'cat lnk' 'No such file'
refused "cat ./app/../.env" 'cat ./app/../.env' 'No such file'
refused "grep -r finds nothing" 'grep -r secret .' ''
py "open secret/inner/x" ENOENT open secret/inner/x r

# allow read before hide
allowed "allow read before hide: visible and readable" 'test "$(cat .env.example)" = API_KEY='
refused "allow read before hide: still not writable" 'echo X=1 >> .env.example'
log_veto "write to .env.example" write .env.example "$HL"

# shadowing names
refused "echo > .env" 'echo x > .env'
refused "touch a new hidden name" 'touch cfg/.env.new'
refused "cp onto a hidden name" 'cp app/main.c .env'
refused "mkdir a hidden name" 'mkdir secret'
refused "ln -s to a hidden name" 'ln -s app/main.c .env'
refused "a hidden name in a new folder" 'mkdir -p newdir && echo x > newdir/.env'
py "O_CREAT|O_EXCL of a hidden name is EACCES, not EEXIST" EACCES open .env w,creat,excl
py "O_CREAT|O_EXCL below a hidden folder" ENOENT open secret/new w,creat,excl
py "mkdir of a hidden folder name" EACCES mkdir secret
# the veto names a hidden path: it is in the state folder's audit.log,
# while .txfs/log (what the mount shows) leaves it out and counts it
if t 30 "$PYTHON" "$LOGCHECK" "$STATE/audit.log" veto create .env "$HL" EACCES \
	"$TXFS_POLICY" "$(id -u)" >"$T/log.out" 2>&1; then
	ok "create .env: logged in STATE/audit.log ($(cat "$T/log.out"))"
else
	fail "create .env: $(cat "$T/log.out")"
fi
grep -q '"path":"\.env"' "$MNT/.txfs/log" && fail "create .env: .txfs/log names the hidden path" ||
	ok "create .env: .txfs/log leaves the hidden path out"
grep -q '"event":"hidden","left_out":[1-9]' "$MNT/.txfs/log" && ok "create .env: .txfs/log says how many it left out" ||
	fail "create .env: .txfs/log has no count of what it left out: $(tail -2 "$MNT/.txfs/log")"

# rename, link, delete of it
py "rename it away" ENOENT rename .env gone
py "rename onto it" EACCES rename cfg/visible .env
py "RENAME_EXCHANGE with it" fail rename2 cfg/visible .env exchange
py "hard link of it" ENOENT link .env gone
py "hard link onto it" EACCES link cfg/visible cfg/.env.x
py "unlink it" ENOENT unlink .env
py "rmdir the hidden folder" ENOENT rmdir secret
# a folder that lists empty: refused as protected (EACCES), never "not
# empty", which would tell that something hidden is in it (issue 23)
refused "rmdir a folder that holds only hidden files" 'rmdir keys' 'Permission denied'
refused "rm -rf a folder that holds hidden files" 'rm -rf cfg' 'Permission denied'
allowed "... its visible file is gone" '! test -e cfg/visible'
py "rename a folder that holds hidden files: EXDEV, as across filesystems" EXDEV rename app app2
py "... its hidden file stays hidden in place" ENOENT stat app/.env
check_eq "... the refusal names no hidden path in .txfs/log" 0 "$(grep -c 'app/\.env' "$MNT/.txfs/log")"

# visible changes next to the hidden files, committed
allowed "edit a visible file beside a hidden one" 'echo "int x;" >> app/main.c'
allowed "create a visible file" 'echo new > app/new.c'
log_wellformed
if t 60 bash -c "echo commit > '$MNT/.txfs/ctl'"; then ok "commit"; else fail "commit: $(cat "$MNT/.txfs/ctl")"; fi
check_eq "after the commit, .env still hidden" "ENOENT" "$(cd "$MNT" && "$PYTHON" "$PYOP" stat .env | cut -d: -f1)"
txfs_umount
real_ids >"$T/hidden.after"
if cmp -s "$T/hidden.before" "$T/hidden.after"; then
	ok "commit never touched the hidden real files (inode, size, mode, owner, mtime, content)"
else
	fail "hidden real files changed by the commit:"
	diff "$T/hidden.before" "$T/hidden.after" | sed 's/^/    /'
fi
check_eq "the visible change was committed" "int main(void) { return 0; }
int x;" "$(cat "$WS/app/main.c")"
check_eq "the visible deletion was committed" "no" "$(test -e "$WS/cfg/visible" && echo yes || echo no)"
check_eq "the new visible file was committed" "new" "$(cat "$WS/app/new.c" 2>&1)"
snapshot_real
finish
