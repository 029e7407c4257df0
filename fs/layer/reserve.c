/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reserve.c - the layer's data file with MDB_WRITEMAP: the map never
 * reaches past the file's allocated blocks, so a full disk is an ENOSPC,
 * never a SIGBUS.
 *
 * With MDB_WRITEMAP LMDB changes pages in a shared mapping of the data
 * file: a write transaction costs no pwrite per dirty page (6-7 system
 * calls less per small transaction). LMDB sets the file's size to the
 * map size; storing into a page the disk has no block for makes the
 * kernel allocate one, and on a full disk it kills the process with
 * SIGBUS. So the map size is kept equal to what is allocated:
 *
 *   - at open, the file is allocated (fallocate) up to its size plus
 *     LAYER_RESERVE_STEP (64 MiB) or as much of that as the disk gives,
 *     and the map is that size;
 *   - before a write transaction, when fewer than LAYER_RESERVE_LOW
 *     (32 MiB) of the map are left past the pages in use, the file is
 *     allocated one step further (or as far as the disk allows), and
 *     then the map grows to it (mdb_env_set_mapsize);
 *   - LMDB never uses a page past the map: a transaction that needs one
 *     fails with MDB_MAP_FULL, which the layer reports as ENOSPC, and
 *     nothing stored before is touched. Freed pages are reused as on
 *     the pwrite path, so removing staged files makes room.
 *
 * mdb_env_set_mapsize moves the mapping: no transaction of this process
 * may be open meanwhile. Every transaction holds maplock shared from
 * begin to end; growing takes it exclusive with trywrlock and is
 * skipped when any transaction is open (tried again at the next write
 * transaction; the low mark leaves 32 MiB for that one). The map never
 * grows past the configured map size (layer_open's map_size).
 *
 * A clean close cuts the file back to the pages in use, so a state
 * folder at rest is as small as before. Where fallocate does not work
 * (EOPNOTSUPP) or the disk cannot give the first step, the environment
 * is opened without MDB_WRITEMAP: pwrite, which reports a full disk as
 * an error.
 *
 * Opt-in (TXFS_LAYER_WRITEMAP=1 in the daemon's environment), because
 * of what it was measured to cost (bench/results/2026-11-24-layer-
 * writes.md): it halves the daemon's time for small write transactions
 * and leaves one write syscall per request (the reply), but a 1 GiB
 * sequential write with fsync takes 2.3x as long (1 MiB writes: 0.6 ->
 * 2.7 ms in the handler), and on a quiet machine the wall times of tar x
 * and of creating 20,000 files barely move.
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "layer_int.h"

#define LAYER_RESERVE_STEP (64ULL << 20)
#define LAYER_RESERVE_LOW (32ULL << 20)
#define LAYER_RESERVE_MIN (1ULL << 20)	/* less than this: no WRITEMAP */
#define LAYER_LOCK_ROOM (512u << 10)	/* left free for lock.mdb at open */

/* Allocate [from, to) of fd, or as much of it as the disk gives (down
 * to min bytes past from); the new allocated end, or from if none. The
 * size stays (a new file must look empty to LMDB); LMDB's ftruncate up
 * to the map size keeps the blocks. */
static uint64_t alloc_upto(int fd, uint64_t from, uint64_t to, uint64_t min,
			   uint64_t margin)
{
	struct statvfs sv;

	/* leave the disk's last `margin` bytes */
	if (margin && fstatvfs(fd, &sv) == 0) {
		uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize;

		avail = avail > margin ? avail - margin : 0;
		if (to - from > avail)
			to = from + avail / 4096 * 4096;
	}
	while (to > from && to - from >= min) {
		if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from,
			      (off_t)(to - from)) == 0)
			return to;
		if (errno != ENOSPC && errno != EDQUOT)
			break;
		to = from + (to - from) / 2 / 4096 * 4096;
	}
	return from;
}

uint64_t layer_writemap_prepare(struct layer *l, int dirfd, const char *name)
{
	const char *e = getenv("TXFS_LAYER_WRITEMAP");
	char path[4200];
	struct stat st;
	uint64_t size, end;
	int fd;

	if (!e || strcmp(e, "1") != 0)
		return 0;	/* opt-in, see the top of this file */
	snprintf(path, sizeof(path), "%s/data.mdb", name);
	fd = openat(dirfd, path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
		    0600);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	l->size0 = (uint64_t)st.st_size;
	size = ((uint64_t)st.st_size + 4095) / 4096 * 4096;
	/* what is there may have holes (a crash of an older daemon with the
	 * map past the data): allocate all of it, then a step more */
	end = size + LAYER_RESERVE_STEP;
	if (end > l->maxmap)
		end = l->maxmap > size ? l->maxmap : size;
	/* LMDB's lock file (a shared mapping too) may not exist yet: its
	 * room stays free (layer_reserve_open allocates it) */
	if (size && alloc_upto(fd, 0, size, size, 0) != size)
		end = 0;
	else
		end = alloc_upto(fd, size, end, LAYER_RESERVE_MIN,
				 LAYER_LOCK_ROOM);
	close(fd);
	if (end < size + LAYER_RESERVE_MIN && end < l->maxmap)
		return 0;	/* no fallocate here, or no room for it */
	return end;
}

/* Allocate the blocks of LMDB's lock file: it is a shared mapping whose
 * reader slots are touched as readers come, maybe on a full disk. */
static int alloc_lock_file(int dirfd, const char *name)
{
	char path[4200];
	struct stat st;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "%s/lock.mdb", name);
	fd = openat(dirfd, path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st))
		rc = -errno;
	else if (st.st_size && fallocate(fd, 0, 0, st.st_size))
		rc = -errno;
	if (fd >= 0)
		close(fd);
	return rc;
}

int layer_reserve_open(struct layer *l, int dirfd, const char *name)
{
	MDB_stat st;
	MDB_envinfo info;
	mdb_filehandle_t fd;
	int rc;

	if (!l->writemap)
		return 0;
	if ((rc = alloc_lock_file(dirfd, name)))
		return rc;	/* ENOSPC: no room for the reader table */
	if (mdb_env_get_fd(l->env, &fd) || mdb_env_stat(l->env, &st))
		return -EIO;
	mdb_env_info(l->env, &info);
	l->fd = fd;
	l->psize = st.ms_psize;
	l->mapsize = info.me_mapsize;
	return 0;
}

static bool disk_has(int fd, uint64_t bytes)
{
	struct statvfs sv;

	return fstatvfs(fd, &sv) || (uint64_t)sv.f_bavail * sv.f_frsize >= bytes;
}

void layer_reserve_grow(struct layer *l)
{
	MDB_envinfo info;
	uint64_t used, end;

	if (!l->writemap)
		return;
	mdb_env_info(l->env, &info);
	used = ((uint64_t)info.me_last_pgno + 1) * l->psize;
	if (l->mapsize >= l->maxmap || l->mapsize - used >= LAYER_RESERVE_LOW)
		return;
	if (l->grow_failed && !disk_has(l->fd, 64u * 1024u))
		return;		/* the disk is full: a statfs, no more */
	if (pthread_rwlock_trywrlock(&l->maplock))
		return;		/* a transaction is open: next time */
	end = l->mapsize + LAYER_RESERVE_STEP;
	if (end > l->maxmap)
		end = l->maxmap;
	end = alloc_upto(l->fd, l->mapsize, end, 64u * 1024u, 0);
	l->grow_failed = true;
	if (end > l->mapsize && mdb_env_set_mapsize(l->env, end) == 0) {
		l->mapsize = end;
		l->grow_failed = false;
	}
	pthread_rwlock_unlock(&l->maplock);
}

void layer_reserve_refused(struct layer *l, int dirfd, const char *name)
{
	char path[4200];
	int fd;

	mdb_env_close(l->env);
	if (!l->writemap)
		return;
	snprintf(path, sizeof(path), "%s/data.mdb", name);
	fd = openat(dirfd, path, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (ftruncate(fd, (off_t)l->size0))
		fprintf(stderr, "txfs: layer: cannot give the data file back "
			"its size: %s\n", strerror(errno));
	close(fd);
}

void layer_reserve_close(struct layer *l)
{
	MDB_envinfo info;
	int fd = -1;

	if (l->writemap) {
		mdb_env_info(l->env, &info);
		fd = fcntl(l->fd, F_DUPFD_CLOEXEC, 0);
	}
	mdb_env_close(l->env);
	if (fd >= 0) {
		/* no page past me_last_pgno is referenced by either meta */
		off_t end = (off_t)(((uint64_t)info.me_last_pgno + 1) * l->psize);

		if (ftruncate(fd, end))
			fprintf(stderr, "txfs: layer: cannot shrink the data "
				"file: %s\n", strerror(errno));
		close(fd);
	}
}
