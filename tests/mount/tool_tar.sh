#!/bin/bash
# tar x of a source tree (files, nested dirs, symlinks, hard links, modes,
# times) into a new directory and over a real copy of an older version.
. "$(dirname "$0")/lib.sh"
src=$OUTSIDE/proj
for d in $(seq 12); do
	mkdir -p "$src/lib$d/sub" "$src/empty$d"
	for f in $(seq 25); do
		printf '/* file %d/%d */\nint f_%d_%d(void) { return %d; }\n' "$d" "$f" "$d" "$f" "$((d * f))" >"$src/lib$d/f$f.c"
	done
	"$FSOP" fill "$src/lib$d/sub/blob.bin" $((d * 37000)) "$d"
	ln -s "../lib$d/f1.c" "$src/lib$d/sub/link.c"
	ln "$src/lib$d/f2.c" "$src/lib$d/hard.c"
done
chmod 755 "$src/lib1/f1.c"
chmod 600 "$src/lib2/f2.c"
touch -d @1234567890 "$src/lib3/f3.c"
tar -C "$OUTSIDE" -czf "$T/proj-new.tar.gz" proj
cp -a "$src" "$WS/proj"
for d in 1 5 9; do echo "old version" >"$WS/proj/lib$d/f7.c"; rm "$WS/proj/lib$d/f8.c"; echo stale >"$WS/proj/lib$d/stale.c"; done
rm -r "$WS/proj/lib12"
export TARBALL=$T/proj-new.tar.gz
model
txfs_mount || exit 1
both 'mkdir fresh && tar -C fresh -xzf "$TARBALL" && find fresh | wc -l'
both 'tar -xzf "$TARBALL" && find proj | wc -l && cat proj/lib1/f7.c proj/lib1/stale.c'
both 'tar -xzf "$TARBALL" --overwrite && diff -r fresh/proj proj; echo rc=$?'
both 'stat -c "%a %Y %h" fresh/proj/lib1/f1.c fresh/proj/lib2/f2.c fresh/proj/lib3/f3.c fresh/proj/lib4/hard.c'
both 'tar -C fresh -cf - proj | tar -tvf - | wc -l'
finish
