// SPDX-License-Identifier: Apache-2.0
/*
 * supervise_map.c - `exec deny` beyond execve: code mapped executable
 * from a file (issue 23, hole 2). The dynamic loader run as a program, a
 * copy of it, a loader the command wrote, or any program that loads a
 * file's code with mmap(PROT_EXEC) or makes a file mapping executable with
 * mprotect/pkey_mprotect(PROT_EXEC) is refused (EACCES) when that file is
 * one an `exec deny` rule names or has its content (supervise_exec.c).
 *
 * Only with exec deny files (as execve); anonymous mappings are not
 * notified (MAP_ANONYMOUS) or are continued at once (mprotect of memory
 * no file backs: a JIT's), so their cost is one notification each.
 *   mmap(addr, len, prot, flags, fd, off): the target's fd is taken with
 *     pidfd_getfd and judged; the kernel then continues (a mapping cannot
 *     be made on the target's behalf: a thread that swaps fd with dup2
 *     between the check and the kernel's own lookup wins the race,
 *     documented in txfs.policy(5)).
 *   mprotect(addr, len, prot): every file mapping the range touches is
 *     found in /proc/TGID/maps (device, inode, path), opened by that path
 *     and checked to be that inode, then judged; one that cannot be
 *     opened so (deleted, renamed since) is refused.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "supervise_int.h"

int sup_map_rules(void *ctx)
{
	int rc;

	rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mmap), 2,
			      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
			      SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(mprotect), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_NOTIFY, SCMP_SYS(pkey_mprotect), 1,
				      SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC));
	return rc;
}

static int map_veto(struct sup_call *c, int fd, const char *path, int rc)
{
	char real[PATH_MAX];

	if (fd < 0 || sup_fd_path(fd, real, sizeof(real)) < 0)
		snprintf(real, sizeof(real), "%s", path);
	return sup_veto(c->s, c, "exec mapping of", real, rc > 0 ?
			"mapped executable: same content as a file of an `exec "
			"deny` rule" : "mapped executable: it cannot be read to "
			"compare with `exec deny` files");
}

static int handle_mmap(struct sup_call *c)
{
	int fd = sup_getfd(c, c->n.data.args[4]), rc;

	if (fd < 0)
		return sup_continue(c->s, c->n.id), 1;	/* the kernel: EBADF */
	rc = sup_exec_forbidden(c->s, fd);
	if (rc != 0)
		rc = map_veto(c, fd, "(descriptor)", rc);
	close(fd);
	if (rc)
		return rc;
	return sup_continue(c->s, c->n.id), 1;
}

/* One line of /proc/PID/maps touching [lo, hi): judge its file. 0 to
 * allow, else -EACCES after a veto. */
static int judge_line(struct sup_call *c, const char *line, uint64_t lo, uint64_t hi)
{
	unsigned long long start, end, ino;
	unsigned maj, min;
	char path[PATH_MAX] = "";
	struct stat st;
	int n = 0, fd, rc;

	if (sscanf(line, "%llx-%llx %*s %*s %x:%x %llu %n", &start, &end, &maj,
		   &min, &ino, &n) < 5 || end <= lo || start >= hi || ino == 0)
		return 0;	/* not in the range, or no file behind it */
	snprintf(path, sizeof(path), "%s", line + n);
	path[strcspn(path, "\n")] = '\0';
	fd = path[0] == '/' ? open(path, O_PATH | O_CLOEXEC) : -1;
	if (fd >= 0 && (fstat(fd, &st) < 0 || st.st_ino != ino ||
			st.st_dev != makedev(maj, min))) {
		close(fd);
		fd = -1;
	}
	rc = fd < 0 ? -EACCES : sup_exec_forbidden(c->s, fd);
	if (rc != 0)
		rc = map_veto(c, fd, path, rc);
	if (fd >= 0)
		close(fd);
	return rc;
}

static int handle_mprotect(struct sup_call *c)
{
	uint64_t lo = c->n.data.args[0], hi = lo + c->n.data.args[1];
	char path[64], *line = NULL;
	size_t cap = 0;
	pid_t tgid = sup_tgid(c);
	FILE *f;
	int rc = 0;

	if (tgid < 0)
		return tgid;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tgid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (rc == 0 && getline(&line, &cap, f) > 0)
		rc = judge_line(c, line, lo, hi);
	free(line);
	fclose(f);
	if (rc == 0)
		rc = sup_valid(c);
	if (rc)
		return rc;
	return sup_continue(c->s, c->n.id), 1;
}

int sup_handle_map(struct sup_call *c)
{
	int nr = c->n.data.nr;

	if (nr == SCMP_SYS(mmap))
		return handle_mmap(c);
	if (nr == SCMP_SYS(mprotect) || nr == SCMP_SYS(pkey_mprotect))
		return handle_mprotect(c);
	return 0;
}
