/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stats.c - the threads that serve the session, and request statistics
 * for the benchmarks (bench/tools/reqstats).
 *
 * Serving (opts.threads, -o threads=N or TXFS_THREADS): with one thread
 * the mount's main thread runs fuse_session_loop() as it always did. With
 * N > 1, N threads each loop on fuse_session_receive_buf() and
 * fuse_session_process_buf() with a buffer of their own, for the life of
 * the mount: what libfuse's fuse_session_loop_mt() does, without creating
 * and ending threads as the load changes. The main thread only waits for
 * SIGINT/SIGTERM (blocked in every serving thread, taken by sigwait) or
 * for a serving thread to leave (unmount: every read of /dev/fuse fails
 * with ENODEV; it signals the main thread), then cancels the others where
 * they wait for a request (cancellation is enabled only around the read:
 * a request being served is finished first) and joins them.
 *
 * Statistics: with TXFS_STATS=FILE in the daemon's environment every
 * request is counted by opcode with the time its handler took, and FILE
 * is written when the session ends (unmount):
 *
 *   op NAME COUNT MICROSECONDS     one line per opcode seen
 *   commits N                      LMDB write transactions committed
 *   nvcsw N / nivcsw N             context switches, all threads
 *   syscw N / wchar N              write syscalls and bytes, all fds
 *   write_bytes N                  page-cache pages dirtied, in bytes
 *   threads N                      serving threads
 *   queued N                       requests after whose reply another
 *                                  one was already waiting in /dev/fuse
 *   overlap N                      requests whose handler began while
 *                                  another handler ran (threads > 1)
 *   forgotten N                    inodes the kernel dropped from its
 *                                  cache (FORGET, BATCH_FORGET entries):
 *                                  each may cost a LOOKUP again later
 *
 * Each serving thread counts into its own table; the tables are summed
 * at the end. Without the variable nothing is counted, nothing costs. A
 * handler that answers later (fsync, control verbs: offload.c) is timed
 * until it handed the request over.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "daemon.h"

#define STATS_NOPS 64		/* FUSE opcodes in use are below this */

/* One serving thread's counts. */
struct stats {
	uint64_t n[STATS_NOPS + 1];	/* the last slot: other or unread */
	uint64_t ns[STATS_NOPS + 1];
	uint64_t queued, overlap;
	uint64_t forgotten;	/* inodes named in FORGET / BATCH_FORGET */
};

/* What the serving threads share. */
struct server {
	struct txfs *fs;
	struct fuse_session *se;
	bool counting;		/* TXFS_STATS */
	bool mt;		/* more than one serving thread */
	pthread_t main;		/* told when a serving thread leaves */
	_Atomic unsigned busy;	/* handlers running now (counting) */
	_Atomic int err;	/* the first read error of a serving thread */
	struct rusage ru0;	/* process counters at the start */
	uint64_t io0[3];
	uint64_t commits0;
	uint64_t ops0;		/* operations batched before */
};

struct worker {
	struct server *sv;
	pthread_t thread;
	struct fuse_buf buf;	/* its own request buffer */
	struct stats s;
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

/* How many inodes a FORGET (one) or BATCH_FORGET (its count, the
 * uint32 after the 40-byte request header) names. */
static uint64_t forgets_of(const struct fuse_buf *b, unsigned op)
{
	uint32_t count;

	if (op == 2)
		return 1;
	if (op != 42 || (b->flags & FUSE_BUF_IS_FD) || b->size < 44)
		return 0;
	memcpy(&count, (const char *)b->mem + 40, sizeof(count));
	return count;
}

static int stats_write(const struct server *sv, const char *path,
		       const struct stats *s, unsigned nthreads)
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
			layer_commits(sv->fs->layer) - sv->commits0));
	fprintf(f, "batched %llu\n", (unsigned long long)(
			layer_batch_ops(sv->fs->layer) - sv->ops0));
	fprintf(f, "nvcsw %ld\nnivcsw %ld\n", ru.ru_nvcsw - sv->ru0.ru_nvcsw,
		ru.ru_nivcsw - sv->ru0.ru_nivcsw);
	fprintf(f, "syscw %llu\nwchar %llu\nwrite_bytes %llu\n",
		(unsigned long long)(io[0] - sv->io0[0]),
		(unsigned long long)(io[1] - sv->io0[1]),
		(unsigned long long)(io[2] - sv->io0[2]));
	fprintf(f, "threads %u\nqueued %llu\noverlap %llu\n", nthreads,
		(unsigned long long)s->queued,
		(unsigned long long)s->overlap);
	fprintf(f, "forgotten %llu\n", (unsigned long long)s->forgotten);
	spin_counts(sv->fs, f);
	return fclose(f) ? -errno : 0;
}

/* Is another request waiting in /dev/fuse right now? */
static bool request_waiting(struct fuse_session *se)
{
	struct pollfd p = { .fd = fuse_session_fd(se), .events = POLLIN };

	return poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

/* Serve the request in buf, counting it into s. */
static void serve_counted(struct server *sv, const struct fuse_buf *buf,
			  struct stats *s)
{
	unsigned op = opcode_of(buf);
	uint64_t t0;

	s->forgotten += forgets_of(buf, op);

	if (atomic_fetch_add(&sv->busy, 1))
		s->overlap++;
	t0 = stats_clock();
	fuse_session_process_buf(sv->se, buf);
	s->n[op]++;
	s->ns[op] += stats_clock() - t0;

	atomic_fetch_sub(&sv->busy, 1);
	if (request_waiting(sv->se))
		s->queued++;
}

/* Read and serve requests until the session ends; 0 or a negative errno
 * (fuse_session_loop()'s contract). With several threads, this one may
 * be cancelled only while it waits for a request. */
static int serve_loop(struct worker *w)
{
	struct server *sv = w->sv;
	int res = 0;

	while (!fuse_session_exited(sv->se)) {
		if (sv->mt)
			pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
		res = fuse_session_receive_buf(sv->se, &w->buf);
		if (sv->mt)
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
		if (res == -EINTR)
			continue;
		if (res <= 0)
			break;
		if (sv->counting)
			serve_counted(sv, &w->buf, &w->s);
		else
			fuse_session_process_buf(sv->se, &w->buf);
	}
	return res > 0 ? 0 : res;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int res;

	pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
	res = serve_loop(w);
	if (res) {
		int none = 0;

		atomic_compare_exchange_strong(&w->sv->err, &none, res);
	}
	fuse_session_exit(w->sv->se);
	pthread_kill(w->sv->main, SIGTERM);	/* taken by serve_threads */
	return NULL;
}

/* The signals that end the session: only the main thread takes them. */
static void exit_signals(sigset_t *set)
{
	sigemptyset(set);
	sigaddset(set, SIGINT);
	sigaddset(set, SIGTERM);
}

/* Start n serving threads in w[] (with the exit signals blocked: they
 * inherit the main thread's mask); the number started. */
static unsigned start_workers(struct server *sv, struct worker *w,
			      unsigned n)
{
	unsigned i;

	for (i = 0; i < n; i++) {
		w[i].sv = sv;
		if (pthread_create(&w[i].thread, NULL, worker_main, &w[i]))
			break;
	}
	if (i < n)
		fprintf(stderr, "txfs: starting serving threads: only %u of "
			"%u started\n", i, n);
	return i;
}

/* Wait for SIGINT/SIGTERM (from outside, or from a serving thread that
 * left), then stop and join the serving threads. */
static void stop_workers(struct server *sv, struct worker *w, unsigned n,
			 const sigset_t *set)
{
	const struct timespec zero = { 0, 0 };
	int sig;

	if (!fuse_session_exited(sv->se))
		sigwait(set, &sig);	/* pending ones return at once */
	fuse_session_exit(sv->se);
	for (unsigned i = 0; i < n; i++)
		pthread_cancel(w[i].thread);
	for (unsigned i = 0; i < n; i++)
		pthread_join(w[i].thread, NULL);
	while (sigtimedwait(set, NULL, &zero) > 0)
		;	/* the serving threads' wake-ups */
}

/* n serving threads (n > 1); 0 or the first read error. */
static int serve_threads(struct server *sv, struct worker *w, unsigned n)
{
	sigset_t set, old;
	unsigned started;

	exit_signals(&set);
	if (pthread_sigmask(SIG_BLOCK, &set, &old))
		return -EINVAL;
	sv->main = pthread_self();
	started = start_workers(sv, w, n);
	if (started == 0) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		return -EAGAIN;
	}
	stop_workers(sv, w, started, &set);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return atomic_load(&sv->err);
}

/* The counts of all threads summed into w[0].s. */
static void sum_stats(struct worker *w, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		for (unsigned k = 0; k <= STATS_NOPS; k++) {
			w[0].s.n[k] += w[i].s.n[k];
			w[0].s.ns[k] += w[i].s.ns[k];
		}
		w[0].s.queued += w[i].s.queued;
		w[0].s.overlap += w[i].s.overlap;
		w[0].s.forgotten += w[i].s.forgotten;
	}
}

static unsigned nthreads(const struct txfs *fs)
{
	const char *env = getenv("TXFS_THREADS");
	unsigned long n = fs->opts.threads;
	char *end;

	if (n == 0 && env && *env) {
		errno = 0;
		n = strtoul(env, &end, 10);
		if (errno || *end || n < 1 || n > TXFS_THREADS_MAX) {
			fprintf(stderr, "txfs: TXFS_THREADS=%s: not a number "
				"from 1 to %d; using %d\n", env,
				TXFS_THREADS_MAX, TXFS_THREADS_DEFAULT);
			n = 0;
		}
	}
	return n ? (unsigned)n : TXFS_THREADS_DEFAULT;
}

/* -o batch=MS, else TXFS_BATCH=MS (the tests' way to run every mount
 * with it): group commit by the one serving thread (layer/batch.c). */
static unsigned batch_ms(struct txfs *fs)
{
	const char *env = getenv("TXFS_BATCH");

	if (fs->opts.batch_set)
		return fs->opts.batch_ms;
	return env && *env ? (unsigned)strtoul(env, NULL, 10) : 0;
}

static void batch_bind(struct txfs *fs, unsigned n)
{
	unsigned ms = batch_ms(fs);
	int rc;

	if (!ms)
		return;
	if (n > 1) {
		fprintf(stderr, "txfs: -o batch: off with %u serving threads "
			"(it needs one)\n", n);
		return;
	}
	if ((rc = layer_batch_start(fs->layer, ms)))
		fprintf(stderr, "txfs: -o batch=%u: off: %s\n", ms,
			rc == -ENOTSUP ? "not with TXFS_LAYER_WRITEMAP=1" :
					 strerror(-rc));
}

int stats_serve(struct txfs *fs)
{
	const char *path = getenv("TXFS_STATS");
	unsigned n = nthreads(fs);
	struct server sv = { .fs = fs, .se = fs->se, .mt = n > 1,
			     .counting = path && *path };
	struct worker *w;
	int res;

	batch_bind(fs, n);
	if (n == 1 && !sv.counting) {
		res = fuse_session_loop(fs->se);
		layer_batch_stop(fs->layer);
		return res;
	}
	w = calloc(n, sizeof(*w));
	if (!w) {
		layer_batch_stop(fs->layer);
		return -ENOMEM;
	}
	getrusage(RUSAGE_SELF, &sv.ru0);
	read_io(sv.io0);
	sv.commits0 = layer_commits(fs->layer);
	sv.ops0 = layer_batch_ops(fs->layer);
	if (n == 1) {
		w[0].sv = &sv;
		res = serve_loop(&w[0]);
	} else {
		res = serve_threads(&sv, w, n);
	}
	layer_batch_stop(fs->layer);
	if (sv.counting) {
		sum_stats(w, n);
		stats_write(&sv, path, &w[0].s, n);
	}
	for (unsigned i = 0; i < n; i++)
		free(w[i].buf.mem);
	free(w);
	fuse_session_reset(fs->se);
	return res;
}
