/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reserve.c - the layer's data file with MDB_WRITEMAP: space reserved
 * ahead, so a full disk is an ENOSPC, never a SIGBUS.
 *
 * With MDB_WRITEMAP LMDB changes pages in a shared mapping of the data
 * file (no pwrite per dirty page: a small write transaction costs no
 * system call at all) and extends the file to the whole map size, as a
 * sparse file. Storing into a page of a hole makes the kernel allocate
 * a block, and on a full disk it kills the process with SIGBUS. So the
 * file's blocks are allocated (fallocate) ahead of LMDB, never behind:
 *
 *   - A write transaction starts with `used0` = the bytes of pages in
 *     use (mdb_env_info's me_last_pgno + 1) and charges every change it
 *     makes (layer_charge, from every put and delete of the layer): the
 *     bytes of the value and key (twice with a savepoint open: the undo
 *     copy), plus what the change may cost in pages of the tree.
 *   - Before the change, [0, used0 + charged + LAYER_COMMIT_SLACK) must
 *     be allocated; reserve() allocates LAYER_RESERVE_STEP (64 MiB) more
 *     at a time, or exactly what is needed when the disk has no more.
 *     If even that fails, the change fails with -ENOSPC before LMDB
 *     touched a page, and the caller aborts the transaction.
 *
 * LMDB takes new pages from its free list (pages inside the file,
 * allocated already) or past the last page in use, at most a few per
 * change: the leaf, the branches above it, a split or a merge, at worst
 * LAYER_PAGE_WORST for a change far from the previous one. Charging
 * that for every change would reserve gigabytes for a transaction of
 * 100,000 small changes that takes a few megabytes, so the charge is
 * LAYER_PAGE_COST while a whole step could be reserved (the step, 64
 * MiB, covers the difference for thousands of worst-case changes; past
 * that, a store into an unreserved page only allocates a block, which
 * a disk that had 64 MiB free a moment ago still has), and the worst
 * case, LAYER_PAGE_WORST, once the disk is so full that a step failed
 * (`tight`, cleared when a step succeeds again): then nothing is stored
 * outside the reserved space.
 *
 * LMDB sets the data file's size to the map size (64 GiB, sparse) when
 * it opens it with MDB_WRITEMAP; a clean close cuts it back to the pages
 * in use (no page past me_last_pgno is referenced by either meta page),
 * so a state folder at rest is as small as before (cp, backups).
 *
 * Where fallocate does not work (EOPNOTSUPP), the environment is opened
 * without MDB_WRITEMAP (pwrite, which reports a full disk as an error).
 * TXFS_LAYER_WRITEMAP=0 in the daemon's environment does the same (for
 * measurements).
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer_int.h"

#define LAYER_RESERVE_STEP (64ULL << 20)
#define LAYER_PAGE_COST 1024u		/* a change's share of its pages */
#define LAYER_PAGE_WORST (24u << 10)	/* 6 pages: path, split, sibling */
#define LAYER_COMMIT_SLACK (1ULL << 20)	/* free list and meta at commit */

unsigned layer_writemap_flag(int dirfd, const char *name)
{
	const char *e = getenv("TXFS_LAYER_WRITEMAP");
	char path[4200];
	int fd, rc;

	if (e && strcmp(e, "0") == 0)
		return 0;
	snprintf(path, sizeof(path), "%s/data.mdb", name);
	fd = openat(dirfd, path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0)
		return 0;
	/* one page past the end, the size kept: does this disk allocate? */
	rc = fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, 4096);
	close(fd);
	return rc == 0 || errno == ENOSPC ? MDB_WRITEMAP : 0;
}

int layer_reserve_open(struct layer *l)
{
	MDB_stat st;
	mdb_filehandle_t fd;

	if (!l->writemap)
		return 0;
	if (mdb_env_get_fd(l->env, &fd) || mdb_env_stat(l->env, &st))
		return -EIO;
	l->fd = fd;
	l->psize = st.ms_psize;
	l->reserved = 0;	/* fallocate skips what is allocated already */
	return 0;
}

/* Make [0, end) of the data file allocated. */
static int reserve(struct layer *l, uint64_t end)
{
	uint64_t want;

	if (end <= l->reserved)
		return 0;
	want = (end + LAYER_RESERVE_STEP - 1) / LAYER_RESERVE_STEP *
	       LAYER_RESERVE_STEP;
	if (fallocate(l->fd, 0, (off_t)l->reserved,
		      (off_t)(want - l->reserved)) == 0) {
		l->reserved = want;
		l->tight = false;
		return 0;
	}
	/* the disk is (nearly) full: exactly what this change needs, and
	 * worst-case charges from now on */
	l->tight = true;
	if (fallocate(l->fd, 0, (off_t)l->reserved,
		      (off_t)(end - l->reserved)) == 0) {
		l->reserved = end;
		return 0;
	}
	return errno == ENOSPC || errno == EDQUOT ? -ENOSPC : -errno;
}

int layer_reserve_begin(struct layer_txn *t)
{
	struct layer *l = t->l;
	MDB_envinfo info;

	if (!l->writemap)
		return 0;
	mdb_env_info(l->env, &info);
	t->used0 = ((uint64_t)info.me_last_pgno + 1) * l->psize;
	t->charged = 0;
	return reserve(l, t->used0 + LAYER_COMMIT_SLACK + LAYER_PAGE_WORST);
}

int layer_charge(struct layer_txn *t, size_t bytes)
{
	struct layer *l = t->l;

	if (!l->writemap)
		return 0;
	t->charged += (t->sp_level ? 2 * (uint64_t)bytes : bytes) +
		      (l->tight ? LAYER_PAGE_WORST : LAYER_PAGE_COST);
	return reserve(l, t->used0 + t->charged + LAYER_COMMIT_SLACK);
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
		off_t end = (off_t)(((uint64_t)info.me_last_pgno + 1) * l->psize);

		if (ftruncate(fd, end))
			fprintf(stderr, "txfs: layer: cannot shrink the data "
				"file: %s\n", strerror(errno));
		close(fd);
	}
}
