#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# exec_deny_interp - issue 23 hole 2: `exec deny` judges what the kernel
# and the dynamic loader actually run, not the name executed. With a
# policy `exec deny tools/evil-elf` (an ELF program built here that, when
# it runs, overwrites the decoy a.txt and prints evil-elf-ran), under
# txfs run as root and as the unprivileged test user, each of these is
# refused (the shell: 126; python: errno 13) and the program never runs:
#   - a script whose "#!" interpreter is a copy of it, relative (#!./d);
#   - the same, absolute (#!/tmp/.../d);
#   - #!/lib64/ld-linux-x86-64.so.2 /tmp/.../d (the loader as interpreter);
#   - #!/tmp/.../ld-copy /tmp/.../d (a copy of the loader);
#   - a script whose interpreter is such a script (two levels);
#   - the script run through execveat(fd) (python os.execve on an fd);
#   - mmap(PROT_EXEC) of the copy (python mmap);
#   - mprotect(PROT_EXEC) of a private file mapping of the copy (ctypes).
#   - (x86_64) ELF programs whose interpreter (PT_INTERP, which the kernel
#     opens and maps itself) is a copy of evil-static, a static denied
#     program that would create evil-static-ran in the workspace: absolute
#     (cc -Wl,--dynamic-linker=/tmp/.../e), relative to the caller's folder
#     (--dynamic-linker=e), through execveat(fd), as a script's "#!"
#     interpreter, and through an ELF interpreter that names it in turn.
# Still allowed: a program built with the system's loader, a #!/bin/sh script, #!LOADER /bin/echo, ld.so /bin/echo,
# python (which maps its libraries executable), mmap(PROT_EXEC) of a copy
# of /bin/true. Afterwards the real directory is byte-identical (the
# command exited 0, so txfs run committed: the decoy a.txt was never
# written) and the vetoes are in the audit log.
. "$(dirname "$0")/lib.sh"

require_landlock
[ -n "$PY" ] || skip "python3 is needed"
LOADER=$(readlink -f /lib64/ld-linux-x86-64.so.2 2>/dev/null || true)
[ -x "$LOADER" ] || skip "no /lib64/ld-linux-x86-64.so.2"
command -v cc >/dev/null || skip "cc is needed"

cat >"$T/evil.c" <<'EOF'
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	const char *d = getenv("EVIL_DECOY");
	FILE *f = d ? fopen(d, "w") : NULL;

	if (f) {
		fputs("PWNED\n", f);
		fclose(f);
	}
	puts("evil-elf-ran");
	return 0;
}
EOF
cc -o "$T/evil-elf" "$T/evil.c" || skip "cc failed"
printf 'exec deny tools/evil-elf tools/evil-static\n' >"$T/interp.policy" && chmod 644 "$T/interp.policy"
PTINTERP=0
[ "$(uname -m)" = x86_64 ] && PTINTERP=1
# build_static MARK: $T/evil-static creates MARK (openat, O_CREAT), says
# evil-static-ran and exits 42, without libc.
build_static() {
	cat >"$T/evil-static.c" <<EOF
static long sys(long n, long a, long b, long c, long d)
{
	long r;
	register long r10 __asm__("r10") = d;
	__asm__ volatile("syscall" : "=a"(r) : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10) : "rcx", "r11", "memory");
	return r;
}
void _start(void)
{
	static const char m[] = "$1";
	sys(257, -100, (long)m, 0101, 0644);
	sys(1, 2, (long)"evil-static-ran\\n", 16, 0);
	sys(60, 42, 0, 0, 0);
	for (;;);
}
EOF
	cc -O1 -nostdlib -static -fno-stack-protector -o "$T/evil-static" "$T/evil-static.c"
}

# The attempts (bash, in the mount); each prints rc-FORM=N.
ATTEMPTS='exec 1>&2
export EVIL_DECOY=$PWD/a.txt
D=$(mktemp -d /tmp/txfs-interp.XXXXXX)
cp tools/evil-elf "$D/d"; cp "$LOADER" "$D/ld-copy"
printf "#!./d\n" > "$D/s-rel"; printf "#!%s/d\n" "$D" > "$D/s-abs"
printf "#!%s %s/d\n" "$LOADER" "$D" > "$D/s-ld"
printf "#!%s/ld-copy %s/d\n" "$D" "$D" > "$D/s-ldcopy"
printf "#!%s/s-abs\n" "$D" > "$D/s-nested"
printf "#!/bin/sh\necho sh-script-ok\n" > "$D/ok-sh"
printf "#!%s /bin/echo\n" "$LOADER" > "$D/ok-ld"
cp /bin/true "$D/true-copy"
chmod 755 "$D"/*
(cd "$D" && ./s-rel); echo rc-rel=$?
"$D/s-abs"; echo rc-abs=$?
"$D/s-ld"; echo rc-ld=$?
"$D/s-ldcopy"; echo rc-ldcopy=$?
"$D/s-nested"; echo rc-nested=$?
"$PY" -c "import os, sys
fd = os.open(sys.argv[1], os.O_PATH)
try:
    os.execve(fd, [\"s\"], dict(os.environ))
except OSError as e:
    print(\"rc-execveat=%d\" % e.errno, file=sys.stderr)" "$D/s-abs"
"$PY" -c "import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
try:
    mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)
    print(\"rc-mmap=0\", file=sys.stderr)
except OSError as e:
    print(\"rc-mmap=%d\" % e.errno, file=sys.stderr)" "$D/d"
"$PY" -c "import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_WRITE)
a = ctypes.addressof(ctypes.c_char.from_buffer(m))
r = libc.mprotect(a, 4096, mmap.PROT_READ | mmap.PROT_EXEC)
print(\"rc-mprotect=%d\" % (0 if r == 0 else ctypes.get_errno()), file=sys.stderr)" "$D/d"
"$D/ok-sh"; "$D/ok-ld" ld-script-ok; "$LOADER" /bin/echo loader-ok
"$PY" -c "import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
mmap.mmap(fd, 4096, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)
print(\"mmap-ok\", file=sys.stderr)" "$D/true-copy"
if [ "$PTINTERP" = 1 ]; then
	cp tools/evil-static "$D/e"
	echo "int main(void) { return 0; }" > "$D/l.c"
	cc -o "$D/launch-abs" "$D/l.c" -Wl,--dynamic-linker="$D/e"
	cc -o "$D/launch-rel" "$D/l.c" -Wl,--dynamic-linker=e
	cc -o "$D/launch-nest" "$D/l.c" -Wl,--dynamic-linker="$D/launch-abs"
	cc -o "$D/launch-ok" "$D/l.c"
	printf "#!%s/launch-abs\n" "$D" > "$D/s-pt"; chmod 755 "$D/s-pt"
	"$D/launch-abs"; echo rc-ptabs=$?
	(cd "$D" && ./launch-rel); echo rc-ptrel=$?
	"$PY" -c "import os, sys
fd = os.open(sys.argv[1], os.O_PATH)
try:
    os.execve(fd, [\"l\"], dict(os.environ))
except OSError as e:
    print(\"rc-ptat=%d\" % e.errno, file=sys.stderr)" "$D/launch-abs"
	"$D/s-pt"; echo rc-ptsh=$?
	"$D/launch-nest"; echo rc-ptnest=$?
	"$D/launch-ok" && echo launch-ok
fi
rm -rf "$D"
exit 0'

body() {
	local u=$WHO real want got
	ws_fixture
	cp "$T/evil-elf" "$WS/tools/evil-elf" && as_owner "$WS/tools/evil-elf"
	if [ "$PTINTERP" = 1 ]; then
		build_static "$WS/evil-static-ran" || fail "[$u] cc -static -nostdlib failed"
		cp "$T/evil-static" "$WS/tools/evil-static" && as_owner "$WS/tools/evil-static"
		touch -h -d @1600000000 "$WS/tools/evil-static"
	fi
	touch -h -d @1600000000 "$WS/tools/evil-elf" "$WS/tools"
	real=$(snap "$WS")
	run_txfs LOADER="$LOADER" PTINTERP="$PTINTERP" -- --json --policy "$T/interp.policy" -- bash -c "$ATTEMPTS"
	want="rc-rel=126 rc-abs=126 rc-ld=126 rc-ldcopy=126 rc-nested=126 rc-execveat=13 rc-mmap=13 rc-mprotect=13"
	[ "$PTINTERP" = 1 ] && want="$want rc-ptabs=126 rc-ptrel=126 rc-ptat=13 rc-ptsh=126 rc-ptnest=126"
	got=$(grep -oE '^rc-[a-z]+=[0-9]+' "$RUN_ERR" | tr '\n' ' ' | sed 's/ $//')
	check_eq "[$u] shebang (relative, absolute, loader, loader copy, nested), execveat, mmap, mprotect, PT_INTERP (absolute, relative, execveat, #!, nested): refused" "$want" "$got"
	grep -q evil-elf-ran "$RUN_ERR" "$RUN_OUT" && fail "[$u] the denied program ran" ||
		ok "[$u] the denied program never ran"
	grep -q evil-static-ran "$RUN_ERR" "$RUN_OUT" && fail "[$u] the static denied program ran (as PT_INTERP)" ||
		ok "[$u] the static denied program never ran"
	[ -e "$WS/evil-static-ran" ] && fail "[$u] its side effect file exists" ||
		ok "[$u] its side effect file is absent"
	for w in sh-script-ok ld-script-ok loader-ok mmap-ok $([ "$PTINTERP" = 1 ] && echo launch-ok); do
		grep -q "$w" "$RUN_ERR" && ok "[$u] still allowed: $w" ||
			fail "[$u] an allowed form was refused: $w: $(grep -v 'current directory' "$RUN_ERR" | head -c 400)"
	done
	check_eq "[$u] the command exited 0 and was committed" 0 "$(jget exit)"
	check_snap "[$u] the real directory is byte-identical (decoy a.txt never written)" "$real" "$(snap "$WS")"
	audit_has '"op":"run-exec".*"path":"[^"]*/d"' && ok "[$u] the vetoes name the copy in the audit log" ||
		fail "[$u] no run-exec veto for the copy: $(grep -m2 run-exec "$STATE/audit.log" | head -c 300)"
	check_unmounted "[$u] after txfs run"
}

for_each_user body
finish
