#!/bin/bash
# make -j2 of a multi-file C program with cc in a real directory; correct
# output; a second make does nothing; touching one source rebuilds exactly
# it; changing the header rebuilds all; make clean.
. "$(dirname "$0")/lib.sh"
command -v cc >/dev/null || { fail "cc is not installed"; exit 1; }
p=$WS/prog
mkdir -p "$p/src"
echo '#define SCALE 3' >"$p/src/common.h"
for i in $(seq 24); do
	printf '#include "common.h"\nint f%d(void);\nint f%d(void) { return %d * SCALE; }\n' "$i" "$i" "$i" >"$p/src/f$i.c"
done
{
	echo '#include <stdio.h>'
	for i in $(seq 24); do echo "int f$i(void);"; done
	echo 'int main(void) { long s = 0;'
	for i in $(seq 24); do echo "s += f$i();"; done
	echo 'printf("sum=%ld\n", s); return 0; }'
} >"$p/src/main.c"
cat >"$p/Makefile" <<'EOM'
SRCS := $(wildcard src/*.c)
OBJS := $(SRCS:src/%.c=build/%.o)
prog: $(OBJS)
	cc -o $@ $^
build/%.o: src/%.c | build
	cc -O1 -MMD -c -o $@ $<
build:
	mkdir -p build
clean:
	rm -rf build prog
-include $(OBJS:.o=.d)
EOM
touch -d '-1 hour' "$p"/src/* "$p/Makefile"
txfs_mount || exit 1
t 10 test -d "$MNT/prog" && cd "$MNT/prog" || { fail "cannot enter $MNT/prog"; exit 1; }
check_run "make -j2" make -j2
check_eq "the program's output" "sum=900" "$(t 10 ./prog)"
out=$(t 60 make -j2 2>&1)
check_eq "a second make has nothing to do" "make: 'prog' is up to date." "$out"
sleep 1.1
t 10 touch src/f7.c
out=$(t 60 make -j2 2>&1)
check_eq "after touching src/f7.c: one compile and one link" "2" "$(grep -c '^cc' <<<"$out")"
grep -q 'f7.o src/f7.c' <<<"$out" || fail "the rebuilt object is not f7.o: $out"
sleep 1.1
t 10 bash -c 'echo "#define SCALE 4" > src/common.h'
out=$(t 120 make -j2 2>&1)
check_eq "after changing the header: 24 compiles and one link" 25 "$(grep -c '^cc' <<<"$out")"
check_eq "the program's output after the change" "sum=1200" "$(t 10 ./prog)"
check_run "make clean" make clean
check_eq "build/ gone" 0 "$(ls -d build prog 2>/dev/null | wc -l)"
check_run "make -j2 from clean again" make -j2
cd "$T" || exit 1
finish
