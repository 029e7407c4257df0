/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layer_int.h - what layer.c and undo.c share: the handles, key building,
 * and the recorded put/delete every change goes through.
 */
#ifndef TXFS_LAYER_INT_H
#define TXFS_LAYER_INT_H

#include <endian.h>
#include <lmdb.h>
#include <pthread.h>
#include <string.h>

#include "layer.h"

#define LAYER_DEFAULT_MAP (64ULL << 30)

/* Group commit (batch.c): the serving thread's operations, each an LMDB
 * nested transaction, gathered into one write transaction. Only the owner
 * thread opens, uses and commits it (LMDB's writer lock belongs to the
 * thread that took it); other threads wait until it is committed. */
struct layer_batch {
	_Atomic bool on;	/* enabled by layer_batch_start (set after
				 * owner: other threads read it) */
	pthread_t owner;
	MDB_txn *txn;		/* the open batch, or NULL */
	MDB_txn *child;		/* the operation open in it, or NULL */
	unsigned readers;	/* owner read handles on the batch */
	unsigned ops;		/* operations committed into it */
	uint64_t bytes;		/* file data its operations put */
	uint64_t born_ns;	/* CLOCK_MONOTONIC when it was opened */
	uint64_t max_ns;	/* it is committed when this old */
	uint64_t closes;	/* batches committed (lock) */
	uint64_t total_ops;	/* operations in every batch (stats) */
	unsigned waiters;	/* other threads waiting (lock) */
	bool open;		/* txn != NULL, read under lock */
	_Atomic bool wanted;	/* another thread waits: commit it now */
	_Atomic int lost;	/* a batch could not be committed: its
				 * error, for the next layer_sync */
	int evfd;		/* eventfd: wakes the owner's wait */
	uint64_t alloc_end;	/* the data file's blocks are allocated up
				 * to here, at least (batch_room; owner) */
	pthread_mutex_t lock;
	pthread_cond_t closed;	/* closes moved / waiters dropped */
};

struct layer {
	MDB_env *env;
	MDB_dbi meta, inodes, dirents, chunks, xattrs, undo, journal;
	_Atomic uint64_t commits;	/* write transactions committed (stats) */
	/* MDB_WRITEMAP (reserve.c) */
	bool writemap;
	int fd;			/* the data file */
	uint64_t psize;		/* LMDB page size */
	uint64_t maxmap;	/* the configured map size: the most it grows */
	uint64_t mapsize;	/* the map now: all of it allocated on disk */
	uint64_t size0;		/* the data file's size before the open */
	bool grow_failed;	/* the disk had no room: statfs before trying */
	pthread_rwlock_t maplock; /* shared: a transaction is open;
				   * exclusive: the map moves */
	struct layer_batch b;
};

struct layer_txn {
	struct layer *l;
	MDB_txn *txn;
	uint64_t gen;
	uint32_t sp_level;	/* savepoints open: undo records are kept */
	bool write;
	bool replaying;		/* applying undo: record nothing */
	int64_t dbytes;		/* chunk bytes added (removed: negative) in
				 * this transaction and not yet in the
				 * counters; folded in at commit */
	bool maplocked;		/* holds l->maplock shared */
	bool nested;		/* txn is an operation inside the batch */
	bool batchref;		/* a read handle on the owner's batch */
	uint64_t wbytes;	/* file data put (chunks, pieces) */
	char *blockbuf;		/* a merged block (layer_chunk_get) */
};

/* --- keys ---------------------------------------------------------- */

struct key {
	unsigned char b[16 + 512];
	size_t len;
};

static inline void key_u64(struct key *k, uint64_t v)
{
	uint64_t be = htobe64(v);

	memcpy(k->b + k->len, &be, 8);
	k->len += 8;
}

static inline int key_str(struct key *k, const char *s, size_t len)
{
	if (len > 255)
		return -ENAMETOOLONG;
	memcpy(k->b + k->len, s, len);
	k->len += len;
	return 0;
}

static inline uint64_t key_get_u64(const MDB_val *v, size_t off)
{
	uint64_t be;

	memcpy(&be, (const char *)v->mv_data + off, 8);
	return be64toh(be);
}

static inline MDB_val kval(struct key *k)
{
	return (MDB_val){ .mv_size = k->len, .mv_data = k->b };
}

static inline void key2(struct key *k, uint64_t gen, uint64_t a)
{
	k->len = 0;
	key_u64(k, gen);
	key_u64(k, a);
}

/* The LMDB transaction behind t: a read handle on the batch follows the
 * operation open in it (it sees that operation's changes so far). */
static inline MDB_txn *ltx(const struct layer_txn *t)
{
	if (!t->batchref)
		return t->txn;
	return t->l->b.child ? t->l->b.child : t->l->b.txn;
}

/* Map an LMDB return code to a negative errno. */
int lerr(int rc);
/* After a failed commit (rc from lerr): LMDB says EIO when the disk took
 * only part of a page write; on a (nearly) full disk that is -ENOSPC. */
int lerr_commit(struct layer *l, int rc);
/* batch.c: layer_begin/commit/txn_end for the batch. begin: 1 when the
 * calling thread does not own the batch (it waited for the batch to be
 * committed; open a plain transaction), 0 when t was set up inside the
 * batch, or a negative errno. */
int batch_begin(struct layer *l, bool write, struct layer_txn *t);
int batch_commit(struct layer_txn *t);
void batch_end(struct layer_txn *t);
void batch_unwait(struct layer *l);
void batch_init(struct layer *l);
void batch_destroy(struct layer *l);
/* The data file's blocks batch_room allocated past its end, freed (at
 * close, no transaction open). */
void batch_trim(struct layer *l);
/* reserve.c: MDB_WRITEMAP with the map kept inside allocated blocks.
 * prepare (before mdb_env_open): the map size to open with (0: open
 * without MDB_WRITEMAP); open: learn the fd and sizes; grow: before a
 * write transaction, allocate and map further when little is left;
 * close: close the environment and cut the file back to the pages in use;
 * refused: close it and give the file back the size it had before. */
uint64_t layer_writemap_prepare(struct layer *l, int dirfd, const char *name);
int layer_reserve_open(struct layer *l, int dirfd, const char *name);
void layer_reserve_grow(struct layer *l);
void layer_reserve_close(struct layer *l);
void layer_reserve_refused(struct layer *l, int dirfd, const char *name);
/* Delete every key of dbi that starts with pre (recorded for undo). */
int del_prefix(struct layer_txn *t, MDB_dbi dbi, const struct key *pre);

/* undo.c: every change of inodes, dirents, chunks and xattrs goes through
 * these, which save the old value when a savepoint is open. */
int lput(struct layer_txn *t, MDB_dbi dbi, MDB_val *k, MDB_val *v,
	 unsigned flags);
int ldel(struct layer_txn *t, MDB_dbi dbi, MDB_val *k);
int lcdel(struct layer_txn *t, MDB_cursor *c, MDB_dbi dbi, MDB_val *k);

#endif /* TXFS_LAYER_INT_H */
