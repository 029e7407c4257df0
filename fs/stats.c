/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.c - request statistics for the benchmarks (bench/tools/reqstats).
 *
 * With TXFS_STATS=FILE in the daemon's environment the session is served
 * by a loop of our own that counts every request by opcode and the time
 * its handler took, and writes FILE when the session ends (unmount):
 *
 *   op NAME COUNT MICROSECONDS     one line per opcode seen
 *   commits N                      LMDB write transactions committed
 *   nvcsw N / nivcsw N             context switches, all threads
 *   syscw N / wchar N              write syscalls and bytes, all fds
 *   write_bytes N                  page-cache pages dirtied, in bytes
 *
 * Without the variable the session runs fuse_session_loop() as before:
 * nothing is counted, nothing costs. A handler that answers later (fsync,
 * control verbs: offload.c) is timed until it handed the request over.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "ops.h"

#define STATS_NOPS 64		/* FUSE opcodes in use are below this */

struct stats {
	uint64_t n[STATS_NOPS + 1];	/* the last slot: other or unread */
	uint64_t ns[STATS_NOPS + 1];
	struct rusage ru0;
	uint64_t io0[3];
	uint64_t commits0;
};

static const char *const op_names[STATS_NOPS] = {
	[1] = "LOOKUP", [2] = "FORGET", [3] = "GETATTR", [4] = "SETATTR",
	[5] = "READLINK", [6] = "SYMLINK", [8] = "MKNOD", [9] = "MKDIR",
	[10] = "UNLINK", [11] = "RMDIR", [12] = "RENAME", [13] = "LINK",
	[14] = "OPEN", [15] = "READ", [16] = "WRITE", [17] = "STATFS",
	[18] = "RELEASE", [20] = "FSYNC", [21] = "SETXATTR",
	[22] = "GETXATTR", [23] = "LISTXATTR", [24] = "REMOVEXATTR",
	[25] = "FLUSH", [26] = "INIT", [27] = "OPENDIR", [28] = "READDIR",
	[29] = "RELEASEDIR", [30] = "FSYNCDIR", [31] = "GETLK",
	[32] = "SETLK", [33] = "SETLKW", [34] = "ACCESS", [35] = "CREATE",
	[36] = "INTERRUPT", [37] = "BMAP", [38] = "DESTROY", [39] = "IOCTL",
	[40] = "POLL", [41] = "NOTIFY_REPLY", [42] = "BATCH_FORGET",
	[43] = "FALLOCATE", [44] = "READDIRPLUS", [45] = "RENAME2",
	[46] = "LSEEK", [47] = "COPY_FILE_RANGE", [48] = "SETUPMAPPING",
	[49] = "REMOVEMAPPING", [50] = "SYNCFS", [51] = "TMPFILE",
};

static uint64_t stats_clock(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* syscw, wchar, write_bytes of this process (0 where unreadable). */
static void read_io(uint64_t io[3])
{
	static const char *const keys[3] = { "syscw:", "wchar:",
					     "write_bytes:" };
	char key[64];
	unsigned long long v;
	FILE *f = fopen("/proc/self/io", "re");

	memset(io, 0, 3 * sizeof(*io));
	if (!f)
		return;
	while (fscanf(f, "%63s %llu", key, &v) == 2)
		for (int i = 0; i < 3; i++)
			if (!strcmp(key, keys[i]))
				io[i] = v;
	fclose(f);
}

/* The opcode of a request read into memory (fuse_in_header: len, then
 * opcode, both 32-bit); STATS_NOPS when it is not in memory. */
static unsigned opcode_of(const struct fuse_buf *b)
{
	uint32_t op;

	if ((b->flags & FUSE_BUF_IS_FD) || b->size < 8 || !b->mem)
		return STATS_NOPS;
	memcpy(&op, (const char *)b->mem + 4, sizeof(op));
	return op < STATS_NOPS ? op : STATS_NOPS;
}

static int stats_write(struct txfs *fs, const char *path,
		       const struct stats *s)
{
	struct rusage ru;
	uint64_t io[3];
	FILE *f = fopen(path, "we");

	if (!f) {
		fprintf(stderr, "txfs: writing %s: %s\n", path,
			strerror(errno));
		return -errno;
	}
	getrusage(RUSAGE_SELF, &ru);
	read_io(io);
	for (unsigned i = 0; i <= STATS_NOPS; i++)
		if (s->n[i])
			fprintf(f, "op %s %llu %llu\n",
				i < STATS_NOPS && op_names[i] ? op_names[i] :
								"OTHER",
				(unsigned long long)s->n[i],
				(unsigned long long)(s->ns[i] / 1000));
	fprintf(f, "commits %llu\n", (unsigned long long)(
			layer_commits(fs->layer) - s->commits0));
	fprintf(f, "nvcsw %ld\nnivcsw %ld\n", ru.ru_nvcsw - s->ru0.ru_nvcsw,
		ru.ru_nivcsw - s->ru0.ru_nivcsw);
	fprintf(f, "syscw %llu\nwchar %llu\nwrite_bytes %llu\n",
		(unsigned long long)(io[0] - s->io0[0]),
		(unsigned long long)(io[1] - s->io0[1]),
		(unsigned long long)(io[2] - s->io0[2]));
	spin_counts(fs, f);
	return fclose(f) ? -errno : 0;
}

/* fuse_session_loop(), counting. Same return contract. */
static int counted_loop(struct txfs *fs, const char *path)
{
	struct fuse_session *se = fs->se;
	struct fuse_buf buf = { 0 };
	struct stats *s = calloc(1, sizeof(*s));
	int res = 0;

	if (!s)
		return -ENOMEM;
	getrusage(RUSAGE_SELF, &s->ru0);
	read_io(s->io0);
	s->commits0 = layer_commits(fs->layer);
	while (!fuse_session_exited(se)) {
		uint64_t t0;
		unsigned op;

		res = fuse_session_receive_buf(se, &buf);
		if (res == -EINTR)
			continue;
		if (res <= 0)
			break;
		op = opcode_of(&buf);
		t0 = stats_clock();
		fuse_session_process_buf(se, &buf);
		s->n[op]++;
		s->ns[op] += stats_clock() - t0;
	}
	free(buf.mem);
	if (res > 0)
		res = 0;
	stats_write(fs, path, s);
	free(s);
	fuse_session_reset(se);
	return res;
}

int stats_serve(struct txfs *fs)
{
	const char *path = getenv("TXFS_STATS");

	if (!path || !*path)
		return fuse_session_loop(fs->se);
	return counted_loop(fs, path);
}
