// SPDX-License-Identifier: Apache-2.0
/*
 * sysnr - system calls by number, for the allow-list filter of
 * cli/sandbox/confine_known.c (issue 23.3).
 *
 *   sysnr sweep KNOWN MAX
 *       KNOWN: the allowed numbers, "NR NAME" a line (confined_exec
 *       --known). Calls every number from 0 to MAX that is not in KNOWN,
 *       each in a forked child (alarm 2 s), with every argument -1, and
 *       prints "NR ERRNO-NAME" for each that did not fail with ENOSYS,
 *       then "SWEEP checked=N enosys=N other=N". Exit 0 when all gave
 *       ENOSYS. Refuses to run (exit 3) unless this process is under a
 *       seccomp filter: unconfined, it would call unknown system calls.
 *   sysnr fileattr PATH
 *       file_getattr (468) and file_setattr (469, FS_XFLAG_NODUMP added
 *       to the flags read) on PATH; prints "file_getattr ERRNO" and
 *       "file_setattr ERRNO" (0: it worked).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NR_FILE_GETATTR 468	/* x86_64 and aarch64 */
#define NR_FILE_SETATTR 469
#define XFLAG_NODUMP 0x00000080

struct file_attr_v0 {		/* FILE_ATTR_SIZE_VER0 */
	uint64_t fa_xflags;
	uint32_t fa_extsize, fa_nextents, fa_projid, fa_cowextsize;
};

static int confined(void)
{
	char line[256];
	FILE *f = fopen("/proc/self/status", "re");
	int on = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			on = atoi(line + 8) == 2;
	fclose(f);
	return on;
}

static int sweep(const char *known, long max)
{
	static unsigned char allowed[4096];
	unsigned long checked = 0, enosys = 0, other = 0;
	char line[256];
	FILE *f = fopen(known, "re");
	long nr;

	if (!f) {
		perror(known);
		return 2;
	}
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%ld", &nr) == 1 && nr >= 0 && nr < 4096)
			allowed[nr] = 1;
	fclose(f);
	if (!confined()) {
		fprintf(stderr, "sysnr: sweep: not under a seccomp filter: refused\n");
		return 3;
	}
	for (nr = 0; nr <= max && nr < 4096; nr++) {
		int st = 0;
		pid_t p;

		if (allowed[nr])
			continue;
		checked++;
		p = fork();
		if (p == 0) {
			long r;

			alarm(2);
			r = syscall(nr, -1L, -1L, -1L, -1L, -1L, -1L);
			_exit(r < 0 && errno == ENOSYS ? 0 : r < 0 ? (errno & 0x7f) + 1 : 127);
		}
		if (p < 0 || waitpid(p, &st, 0) != p) {
			printf("%ld fork/wait failed\n", nr);
			other++;
			continue;
		}
		if (WIFEXITED(st) && WEXITSTATUS(st) == 0) {
			enosys++;
		} else {
			other++;
			if (WIFSIGNALED(st))
				printf("%ld signal %d\n", nr, WTERMSIG(st));
			else if (WEXITSTATUS(st) == 127)
				printf("%ld succeeded\n", nr);
			else
				printf("%ld %s\n", nr, strerror(WEXITSTATUS(st) - 1));
		}
	}
	printf("SWEEP checked=%lu enosys=%lu other=%lu\n", checked, enosys, other);
	return other ? 1 : 0;
}

static int fileattr(const char *path)
{
	struct file_attr_v0 fa;
	long r;

	memset(&fa, 0, sizeof(fa));
	r = syscall(NR_FILE_GETATTR, AT_FDCWD, path, &fa, sizeof(fa), 0);
	printf("file_getattr %d\n", r < 0 ? errno : 0);
	fa.fa_xflags |= XFLAG_NODUMP;
	r = syscall(NR_FILE_SETATTR, AT_FDCWD, path, &fa, sizeof(fa), 0);
	printf("file_setattr %d\n", r < 0 ? errno : 0);
	return 0;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc == 4 && !strcmp(argv[1], "sweep"))
		return sweep(argv[2], atol(argv[3]));
	if (argc == 3 && !strcmp(argv[1], "fileattr"))
		return fileattr(argv[2]);
	fprintf(stderr, "usage: sysnr sweep KNOWN MAX | sysnr fileattr PATH\n");
	return 2;
}
