#!/bin/bash
# Hostile names: 255-byte names (ASCII and multi-byte), newlines, tabs,
# control bytes, invalid UTF-8, leading dashes, globs, backslashes; in the
# real directory and made in the mount; 256 bytes gives ENAMETOOLONG.
. "$(dirname "$0")/lib.sh"
fixture
long=$(printf 'a%.0s' $(seq 255))
multi="$(printf 'é%.0s' $(seq 127))x"
names=("$long" "$multi" $'new\nline' $'tab\there' $'\x01ctrl\x7f' $'\xff\xfe\xfd' $'bad\xc3(utf8' \
	'-rf' '*' '?' ' lead and trail ' '...' 'back\slash' '$(echo pwned)' "quote'\"" '%s%n' ':colon:')
mkdir "$WS/bad"
for n in "${names[@]}"; do
	printf '%s\n' "$n" >"$WS/bad/$n"
	mkdir "$WS/bad/d$n" 2>/dev/null || true
done
check_eq "fixture: a 255-byte name was created" 255 "$(printf '%s' "$long" | wc -c)"
check_eq "fixture: a 255-byte multi-byte name was created" 255 "$(printf '%s' "$multi" | wc -c)"
model
txfs_mount || exit 1

check_tree "the real hostile names are listed and read exactly as in the real directory" "$MNT/bad" "$WS/bad"
# each name made in the mount, read back, renamed, linked, removed
cat >"$T/names.sh" <<'EOS'
long=$(printf 'a%.0s' $(seq 255))
multi="$(printf 'é%.0s' $(seq 127))x"
names=("$long" "$multi" $'new\nline' $'tab\there' $'\x01ctrl\x7f' $'\xff\xfe\xfd' $'bad\xc3(utf8' \
	'-rf' '*' '?' ' lead and trail ' '...' 'back\slash' '$(echo pwned)' "quote'\"" '%s%n' ':colon:')
EOS
both '. "$T/names.sh"; mkdir made; for n in "${names[@]}"; do printf "%s\n" "$n" > "made/$n" && cat -- "made/$n" | od -c | tail -2; done'
both '. "$T/names.sh"; for n in "${names[@]}"; do mv -- "bad/$n" "bad/$n.2" 2>&1 || echo mv-failed; done; ls bad | od -c | sha256sum'
both '. "$T/names.sh"; for n in "${names[@]}"; do ln -- "made/$n" "made/l$n" 2>&1; ln -s -- "$n" "made/s$n" 2>&1; done; ls made | wc -l'
both '. "$T/names.sh"; for n in "${names[@]}"; do rm -- "made/$n" && rmdir -- "bad/d$n"; done; ls -A made bad | wc -l'
both 'n=$(printf "b%.0s" $(seq 256)); echo x > "$n"; echo rc=$?; mkdir "$n"; echo rc=$?'
both 'n=$(printf "b%.0s" $(seq 256)); mv file.txt "$n"; echo rc=$?; ln -s x "$n"; echo rc=$?'
both 'n=$(printf "c%.0s" $(seq 255)); mv dir "$n" && mv "$n" "$n"2; echo rc=$?; ls -d "$n"/sub'
both 'setfattr -n "user.$(printf "\xff\x01")" -v 1 big.bin; echo rc=$?'
both 'touch "$(printf "x/y")"; echo rc=$?'
finish
