/* SPDX-License-Identifier: Apache-2.0 */
/*
 * prefetch.c - a real folder read from a cold disk is warmed ahead of the
 * lookups that will follow.
 *
 * A lookup of a real name costs the serving thread an fstatat in the real
 * folder (lower_stat_at). On a cold cache that fstatat waits for the disk
 * (the folder's blocks, the inode table), and the requests of every other
 * caller wait behind it: `git status` right after mounting (bench W2 cold)
 * spent ~45 us of daemon time a LOOKUP, against ~5 us warm. So when an
 * fstatat took PF_SLOW_NS or more, the folder is queued once (per mount)
 * and one of PF_THREADS threads lists it and lstats each entry (up to
 * PF_MAX_ENTRIES): the kernel's dentry and inode caches fill while the
 * serving thread answers, and several folders are read from the disk at
 * once. Nothing is kept but which folders were queued: the daemon still
 * asks the real directory itself at every lookup, so a prefetch can only
 * make it faster, never make it see something else.
 *
 * A warm fstatat (1-2 us) never queues anything, so workloads on a warm
 * cache pay one clock read per real lookup. Folders are reached as every
 * other real path is (lower_open: RESOLVE_BENEATH, no symlinks). The
 * queue holds PF_QUEUE folders; a full queue drops the request, and after
 * PF_SEEN folders the mount stops prefetching (memory stays bounded).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "lower.h"

#define PF_THREADS 3
#define PF_QUEUE 256
#define PF_SEEN 16384u		/* a power of 2 */
#define PF_MAX_ENTRIES 8192
#define PF_SLOW_NS 20000

struct lower_prefetch {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* queued, or stop */
	char *q[PF_QUEUE];
	unsigned head, n;
	uint64_t seen[PF_SEEN];	/* folder path hashes; 0: free */
	unsigned nseen;
	_Atomic bool stop;
	_Atomic uint64_t dirs, entries;	/* warmed, for TXFS_STATS */
	pthread_t th[PF_THREADS];
	unsigned nth;
	struct txfs *fs;
};

static uint64_t hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h ? h : 1;
}

/* Under lock: true the first time this folder is seen. */
static bool first_time(struct lower_prefetch *p, uint64_t h)
{
	unsigned i = (unsigned)h & (PF_SEEN - 1);

	if (p->nseen >= PF_SEEN / 2)
		return false;	/* this mount has prefetched enough */
	while (p->seen[i]) {
		if (p->seen[i] == h)
			return false;
		i = (i + 1) & (PF_SEEN - 1);
	}
	p->seen[i] = h;
	p->nseen++;
	return true;
}

static void warm(struct lower_prefetch *p, const char *dir)
{
	int fd = lower_open(p->fs, dir, O_RDONLY | O_DIRECTORY);
	struct dirent *e;
	struct stat st;
	unsigned n = 0;
	DIR *d;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while (n++ < PF_MAX_ENTRIES && !atomic_load(&p->stop) &&
	       (e = readdir(d))) {
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") &&
		    fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
			atomic_fetch_add(&p->entries, 1);
	}
	closedir(d);
	atomic_fetch_add(&p->dirs, 1);
}

static void *pf_main(void *arg)
{
	struct lower_prefetch *p = arg;

	for (;;) {
		char *dir;

		pthread_mutex_lock(&p->lock);
		while (!p->n && !atomic_load(&p->stop))
			pthread_cond_wait(&p->cond, &p->lock);
		if (atomic_load(&p->stop)) {
			pthread_mutex_unlock(&p->lock);
			return NULL;
		}
		dir = p->q[p->head];
		p->head = (p->head + 1) % PF_QUEUE;
		p->n--;
		pthread_mutex_unlock(&p->lock);
		warm(p, dir);
		free(dir);
	}
}

int lower_prefetch_start(struct txfs *fs)
{
	struct lower_prefetch *p = calloc(1, sizeof(*p));

	if (!p)
		return -ENOMEM;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->fs = fs;
	for (; p->nth < PF_THREADS; p->nth++)
		if (pthread_create(&p->th[p->nth], NULL, pf_main, p))
			break;	/* fewer threads: still correct */
	fs->prefetch = p;
	return 0;
}

void lower_prefetch_stop(struct txfs *fs)
{
	struct lower_prefetch *p = fs->prefetch;

	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	atomic_store(&p->stop, true);
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nth; i++)
		pthread_join(p->th[i], NULL);
	for (; p->n; p->n--, p->head = (p->head + 1) % PF_QUEUE)
		free(p->q[p->head]);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
	fs->prefetch = NULL;
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t lower_prefetch_clock(const struct txfs *fs)
{
	return fs->prefetch && fs->prefetch->nth ? now_ns() : 0;
}

void lower_prefetch_note(struct txfs *fs, const char *dir, int64_t t0)
{
	struct lower_prefetch *p = fs->prefetch;
	char *copy;

	if (!t0 || now_ns() - t0 < PF_SLOW_NS)
		return;
	pthread_mutex_lock(&p->lock);
	if (p->n < PF_QUEUE && first_time(p, hash_path(dir)) &&
	    (copy = strdup(dir))) {
		p->q[(p->head + p->n) % PF_QUEUE] = copy;
		p->n++;
		pthread_cond_signal(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
}

void lower_prefetch_counts(const struct txfs *fs, uint64_t *dirs,
			   uint64_t *entries)
{
	*dirs = fs->prefetch ? atomic_load(&fs->prefetch->dirs) : 0;
	*entries = fs->prefetch ? atomic_load(&fs->prefetch->entries) : 0;
}
