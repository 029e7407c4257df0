/* SPDX-License-Identifier: Apache-2.0 */
/*
 * batch.c - group commit (-o batch=MS): many requests' changes in one LMDB
 * write transaction.
 *
 * Without it every changing request is one LMDB write transaction, and
 * each commit writes its dirty pages, the free-list pages and a meta page
 * (about 8 page writes: an untar pays ~5 of them a file). With it, the
 * serving thread (the owner, bound by layer_batch_start) keeps one write
 * transaction open, the batch, and each operation is an LMDB nested
 * transaction inside it:
 *
 *   layer_begin(write)  -> mdb_txn_begin(env, batch): the operation;
 *   layer_commit        -> the operation joins the batch (no I/O);
 *   layer_txn_end       -> the operation is aborted, the batch untouched:
 *                          an operation is all or nothing, as before;
 *   layer_begin(read)   -> a handle on the batch (ltx(): it follows the
 *                          operation open in it), so the owner sees every
 *                          change it acknowledged.
 *
 * The batch is committed (batch_close) when it holds BATCH_MAX_OPS
 * operations or BATCH_MAX_BYTES of file data, when it is MS old, when the owner has waited MS for the next
 * request (layer_batch_wait, from the read hook), when another thread needs
 * the layer (it sets `wanted`, kicks the eventfd and waits), and on every
 * durability point: layer_sync (fsync, fdatasync, fsyncdir, commit) and
 * layer_batch_flush (before the serving thread waits for a transaction
 * verb). A daemon that dies loses the batch, never part of it: the layer
 * is then exactly as it was after some earlier batch, a prefix of the
 * acknowledged operations, and everything a sync point covered is in it.
 * Room on disk (batch_room): LMDB gets disk blocks for a transaction's
 * new pages only when it writes them, at commit, so a disk that filled
 * up while a batch was open would lose the batch whole. Before a batch
 * opens, the data file's blocks are allocated (fallocate, KEEP_SIZE)
 * BATCH_RESERVE past the last page in use: the batch's pages land in
 * blocks it already has, whoever fills the disk meanwhile. When the disk
 * cannot give that much (or the file system cannot preallocate), no batch
 * is opened: every operation is its own transaction again and the one
 * that does not fit gets ENOSPC alone. layer_close gives the blocks past
 * the file's end back.
 *
 * Threads: only the owner touches the batch (LMDB's writer lock belongs to
 * the thread that took it). Another thread's layer_begin waits until the
 * open batch is committed (`closes` moves), and the owner opens no new
 * batch while such a waiter has not begun its own transaction (so the
 * other thread's write cannot starve). Read handles on the batch pin it:
 * it is not committed while one is open (a committed batch's dirty pages
 * are freed). The batch needs LMDB's nested transactions, which
 * MDB_WRITEMAP does not have: with TXFS_LAYER_WRITEMAP=1 it stays off.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "layer_int.h"

#define BATCH_MAX_OPS 512	/* operations a batch holds at most */
#define BATCH_MAX_BYTES (32ULL << 20)	/* file data a batch holds at most */
/* Allocated past the last page in use before a batch opens: twice the
 * file data a batch holds, for its tree and free-list pages; allocated
 * BATCH_AHEAD further at a time (one fallocate per 32 MiB of growth). */
#define BATCH_RESERVE (64ULL << 20)
#define BATCH_AHEAD (32ULL << 20)
#define BATCH_MAX_MS 1000	/* the longest -o batch= accepted */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static bool is_owner(const struct layer *l)
{
	return l->b.on && pthread_equal(pthread_self(), l->b.owner);
}

void batch_init(struct layer *l)
{
	memset(&l->b, 0, sizeof(l->b));
	l->b.evfd = -1;
	pthread_mutex_init(&l->b.lock, NULL);
	pthread_cond_init(&l->b.closed, NULL);
}

void batch_destroy(struct layer *l)
{
	if (l->b.txn && is_owner(l))
		layer_batch_flush(l);
	if (l->b.evfd >= 0)
		close(l->b.evfd);
	pthread_cond_destroy(&l->b.closed);
	pthread_mutex_destroy(&l->b.lock);
}

int layer_batch_start(struct layer *l, unsigned ms)
{
	if (!ms)
		return 0;
	if (ms > BATCH_MAX_MS)
		return -EINVAL;
	if (l->writemap)
		return -ENOTSUP;	/* no nested transactions */
	l->b.evfd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (l->b.evfd < 0)
		return -errno;
	l->b.owner = pthread_self();
	l->b.max_ns = (uint64_t)ms * 1000000ULL;
	l->b.on = true;
	return 0;
}

void layer_batch_stop(struct layer *l)
{
	if (!is_owner(l))
		return;
	layer_batch_flush(l);
	pthread_mutex_lock(&l->b.lock);
	l->b.on = false;
	pthread_mutex_unlock(&l->b.lock);
}

int layer_batch_lost(struct layer *l)
{
	return atomic_exchange(&l->b.lost, 0);
}

uint64_t layer_batch_ops(struct layer *l)
{
	return l->b.total_ops + l->b.ops;
}

/* Commit the open batch. Owner only, with no operation or read handle
 * open in it. An error means the batch is lost (logged): the layer is as
 * it was after the previous batch. */
static int batch_close(struct layer *l)
{
	struct layer_batch *b = &l->b;
	uint64_t junk;
	unsigned ops = b->ops;
	int rc;

	if (!b->txn)
		return 0;
	rc = lerr_commit(l, lerr(mdb_txn_commit(b->txn)));
	b->txn = NULL;
	b->total_ops += b->ops;
	b->ops = 0;
	if (rc == 0)
		l->commits++;
	pthread_mutex_lock(&b->lock);
	b->open = false;
	b->closes++;
	b->wanted = false;
	pthread_cond_broadcast(&b->closed);
	pthread_mutex_unlock(&b->lock);
	if (read(b->evfd, &junk, sizeof(junk)) < 0)
		junk = 0;	/* nothing was kicked */
	if (rc) {
		fprintf(stderr, "txfs: layer: a batch of %u operations could "
			"not be committed (%s): they are lost\n", ops,
			strerror(-rc));
		b->lost = rc;	/* the next fsync says so, as a real file
				 * system reports a failed write-back */
	}
	return rc;
}

static bool batch_due(const struct layer_batch *b)
{
	return b->ops >= BATCH_MAX_OPS || b->wanted ||
	       b->bytes >= BATCH_MAX_BYTES ||
	       now_ns() - b->born_ns >= b->max_ns;
}

/* Close the batch if it is due and nothing pins it. */
static int batch_maybe_close(struct layer *l)
{
	struct layer_batch *b = &l->b;

	if (!b->txn || b->child || b->readers || !batch_due(b))
		return 0;
	return batch_close(l);
}

int layer_batch_flush(struct layer *l)
{
	struct layer_batch *b = &l->b;

	if (!b->on)
		return 0;
	if (!is_owner(l)) {
		pthread_mutex_lock(&b->lock);
		uint64_t seen = b->closes;

		while (b->open && b->closes == seen) {
			uint64_t one = 1;

			b->wanted = true;
			if (write(b->evfd, &one, sizeof(one)) < 0)
				one = 0;	/* already kicked */
			pthread_cond_wait(&b->closed, &b->lock);
		}
		pthread_mutex_unlock(&b->lock);
		return 0;
	}
	if (b->child || b->readers)
		return -EBUSY;	/* inside an operation: a caller's bug */
	return batch_close(l);
}

int layer_batch_wait(struct layer *l, int fd)
{
	struct layer_batch *b = &l->b;
	struct pollfd p[2] = { { .fd = fd, .events = POLLIN },
			       { .fd = b->evfd, .events = POLLIN } };
	uint64_t age;
	int ms;

	if (!b->txn || !is_owner(l))
		return 0;
	age = now_ns() - b->born_ns;
	if (!b->wanted && age < b->max_ns) {
		ms = (int)((b->max_ns - age + 999999) / 1000000);
		if (poll(p, 2, ms) > 0 && (p[0].revents & POLLIN) &&
		    !b->wanted)
			return 0;	/* the next request: keep it open */
	}
	return batch_close(l);
}

/* --- layer_begin, layer_commit, layer_txn_end inside the batch ------- */

/* Is the data file allocated BATCH_RESERVE past its last page in use
 * (made so here if the disk has the room)? See the top of the file. */
static bool batch_room(struct layer *l)
{
	MDB_envinfo info;
	MDB_stat st;
	mdb_filehandle_t fd;
	uint64_t used;

	if (mdb_env_get_fd(l->env, &fd) || mdb_env_info(l->env, &info) ||
	    mdb_env_stat(l->env, &st))
		return false;
	used = (uint64_t)(info.me_last_pgno + 1) * st.ms_psize;
	if (used + BATCH_RESERVE <= l->b.alloc_end)
		return true;
	if (fallocate(fd, FALLOC_FL_KEEP_SIZE, 0,
		      (off_t)(used + BATCH_RESERVE + BATCH_AHEAD)) &&
	    fallocate(fd, FALLOC_FL_KEEP_SIZE, 0, (off_t)(used + BATCH_RESERVE)))
		return false;	/* ENOSPC, EOPNOTSUPP: no batch */
	l->b.alloc_end = used + BATCH_RESERVE;
	return true;
}

void batch_trim(struct layer *l)
{
	mdb_filehandle_t fd;
	struct stat st;

	/* the blocks allocated past the file's end, given back: a punch
	 * (tmpfs), a truncate to the same size (ext4, which punches no
	 * hole past the end) */
	if (l->b.alloc_end && mdb_env_get_fd(l->env, &fd) == 0 &&
	    fstat(fd, &st) == 0) {
		if ((uint64_t)st.st_size < l->b.alloc_end + BATCH_AHEAD)
			(void)fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
					st.st_size, (off_t)(l->b.alloc_end + BATCH_AHEAD -
							    (uint64_t)st.st_size));
		(void)ftruncate(fd, st.st_size);
	}
	l->b.alloc_end = 0;
}

static int batch_open(struct layer *l)
{
	struct layer_batch *b = &l->b;
	int rc;

	pthread_mutex_lock(&b->lock);
	while (b->waiters)
		pthread_cond_wait(&b->closed, &b->lock);
	pthread_mutex_unlock(&b->lock);
	rc = lerr(mdb_txn_begin(l->env, NULL, 0, &b->txn));
	if (rc)
		return rc;
	b->born_ns = now_ns();
	b->ops = 0;
	b->bytes = 0;
	pthread_mutex_lock(&b->lock);
	b->open = true;
	pthread_mutex_unlock(&b->lock);
	return 0;
}

/* Another thread: wait for the open batch to be committed, and count as
 * a waiter until layer_begin has its transaction (batch_unwait). */
static void batch_other(struct layer *l)
{
	struct layer_batch *b = &l->b;

	pthread_mutex_lock(&b->lock);
	b->waiters++;
	pthread_mutex_unlock(&b->lock);
	layer_batch_flush(l);
}

void batch_unwait(struct layer *l)
{
	struct layer_batch *b = &l->b;

	pthread_mutex_lock(&b->lock);
	if (--b->waiters == 0)
		pthread_cond_broadcast(&b->closed);
	pthread_mutex_unlock(&b->lock);
}

int batch_begin(struct layer *l, bool write, struct layer_txn *t)
{
	struct layer_batch *b = &l->b;
	int rc;

	if (!is_owner(l)) {
		batch_other(l);
		return 1;
	}
	if (!write) {
		if (!b->txn)
			return 2;	/* nothing pending: a plain snapshot */
		t->batchref = true;
		b->readers++;
		return 0;
	}
	if (b->child)
		return -EDEADLK;	/* one operation at a time */
	if ((rc = batch_maybe_close(l)) == 0 && !b->txn) {
		if (!batch_room(l))
			return 2;	/* a plain transaction of its own */
		rc = batch_open(l);
	}
	if (rc)
		return rc;
	rc = lerr(mdb_txn_begin(l->env, b->txn, 0, &b->child));
	if (rc)
		return rc;
	t->txn = b->child;
	t->nested = true;
	return 0;
}

int batch_commit(struct layer_txn *t)
{
	struct layer *l = t->l;
	int rc = lerr(mdb_txn_commit(t->txn));

	l->b.child = NULL;
	if (rc == 0) {
		l->b.ops++;
		l->b.bytes += t->wbytes;
	}
	if (rc == 0)
		rc = batch_maybe_close(l);
	return rc;
}

void batch_end(struct layer_txn *t)
{
	struct layer *l = t->l;

	if (t->nested) {
		mdb_txn_abort(t->txn);
		l->b.child = NULL;
	} else if (t->batchref) {
		l->b.readers--;
	}
}
