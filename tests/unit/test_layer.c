/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_layer.c - the LMDB upper layer: key schema, generations, error
 * mapping. mdb_put is wrapped at link time (-Wl,--wrap=mdb_put) so a test
 * can make it fail with any LMDB code.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <lmdb.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "layer/layer.h"

int __real_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
		   unsigned int flags);
int __wrap_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
		   unsigned int flags);

static int fail_put;	/* 0: pass through; else the code to return */

int __wrap_mdb_put(MDB_txn *txn, MDB_dbi dbi, MDB_val *key, MDB_val *data,
		   unsigned int flags)
{
	if (fail_put)
		return fail_put;
	return __real_mdb_put(txn, dbi, key, data, flags);
}

struct fx {
	char dir[64];
	int dirfd;
	struct layer *l;
	struct layer_ws ws;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	const char *why;

	snprintf(f->dir, sizeof(f->dir), "/tmp/txfs-ut-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY);
	f->ws.dev = 1;
	f->ws.ino = 2;
	strcpy(f->ws.path, "/ws");
	assert_int_equal(layer_open(f->dirfd, "layer", 0, &f->ws, &f->l, &why),
			 0);
	fail_put = 0;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	layer_close(f->l);
	close(f->dirfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static struct layer_txn *wtxn(struct fx *f)
{
	struct layer_txn *t;

	assert_int_equal(layer_begin(f->l, true, &t), 0);
	return t;
}

static void test_inode_roundtrip(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	struct layer_inode rec = { .mode = S_IFLNK | 0777, .nlink = 1,
				   .size = 6, .flags = LI_LOWER };
	struct layer_ino_view v;

	assert_int_equal(layer_inode_put(t, 42, &rec, "a/b", "target"), 0);
	assert_int_equal(layer_inode_get(t, 42, &v), 0);
	assert_int_equal(v.rec.mode, S_IFLNK | 0777);
	assert_string_equal(v.lower_path, "a/b");
	assert_string_equal(v.link, "target");
	rec.size = 99;
	assert_int_equal(layer_inode_update(t, 42, &rec), 0);
	assert_int_equal(layer_inode_get(t, 42, &v), 0);
	assert_int_equal(v.rec.size, 99);
	assert_string_equal(v.lower_path, "a/b");
	assert_int_equal(layer_inode_get(t, 43, &v), -ENOENT);
	assert_int_equal(layer_commit(t), 0);
}

static void test_alloc_ino_distinct(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	uint64_t a, b;

	assert_int_equal(layer_alloc_ino(t, &a), 0);
	assert_int_equal(layer_alloc_ino(t, &b), 0);
	assert_true(a != b);
	/* issue 13: positive as signed 64-bit, inside the reserved range */
	assert_true(a >= LAYER_INO_BASE && a < LAYER_INO_VIRT);
	assert_true(b >= LAYER_INO_BASE && b < LAYER_INO_VIRT);
	assert_true((int64_t)a > 0 && (int64_t)b > 0);
	assert_true(layer_ino_reserved(a) && layer_ino_reserved(b));
	assert_true(layer_ino_reserved(LAYER_INO_VIRT));
	assert_true(layer_ino_reserved(LAYER_INO_OLD | 5));	/* older layers */
	assert_false(layer_ino_reserved(LAYER_INO_BASE - 1));
	assert_false(layer_ino_reserved(LAYER_INO_END));
	assert_false(layer_ino_reserved(4294967295ULL));
	assert_int_equal(layer_commit(t), 0);
}

struct collect {
	char names[16][32];
	uint64_t tinos[16];
	int n;
};

static int collect_ent(void *arg, const char *name, size_t len,
		       const struct layer_dirent *d)
{
	struct collect *c = arg;

	memcpy(c->names[c->n], name, len);
	c->names[c->n][len] = '\0';
	c->tinos[c->n++] = d->tino;
	return 0;
}

static void test_dirents_and_whiteouts(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	struct layer_dirent d = { .tino = 7, .type = S_IFREG }, wh = { 0 }, o;
	struct collect c = { .n = 0 };

	assert_int_equal(layer_dirent_put(t, 5, "zeta", 4, &d), 0);
	assert_int_equal(layer_dirent_put(t, 5, "alpha", 5, &d), 0);
	assert_int_equal(layer_dirent_put(t, 5, "gone", 4, &wh), 0);
	assert_int_equal(layer_dirent_put(t, 6, "other", 5, &d), 0);
	assert_int_equal(layer_dirent_each(t, 5, collect_ent, &c), 0);
	assert_int_equal(c.n, 3);	/* folder 6 not included */
	assert_string_equal(c.names[0], "alpha");
	assert_string_equal(c.names[1], "gone");
	assert_int_equal(c.tinos[1], 0);	/* the whiteout */
	assert_string_equal(c.names[2], "zeta");
	assert_int_equal(layer_dirent_get(t, 5, "gone", 4, &o), 0);
	assert_int_equal(o.tino, 0);
	assert_int_equal(layer_dirents_clear(t, 5), 0);
	assert_int_equal(layer_dirent_get(t, 5, "alpha", 5, &o), -ENOENT);
	assert_int_equal(layer_dirent_get(t, 6, "other", 5, &o), 0);
	{
		char longname[300];

		memset(longname, 'x', sizeof(longname));
		assert_int_equal(layer_dirent_put(t, 5, longname, 256, &d),
				 -ENAMETOOLONG);
	}
	assert_int_equal(layer_commit(t), 0);
}

static void test_chunks_trunc(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	char buf[LAYER_BLOCK];
	const void *data;
	size_t len;
	uint64_t bytes;

	memset(buf, 'q', sizeof(buf));
	for (uint64_t b = 0; b < 300; b++)
		assert_int_equal(layer_chunk_put(t, 9, b, buf, 1000), 0);
	assert_int_equal(layer_chunk_put(t, 10, 0, buf, 5), 0);
	assert_int_equal(layer_chunks_bytes(t, 9, &bytes), 0);
	assert_int_equal(bytes, 300 * 1000);
	assert_int_equal(layer_chunks_trunc(t, 9, 100), 0);
	assert_int_equal(layer_chunks_bytes(t, 9, &bytes), 0);
	assert_int_equal(bytes, 100 * 1000);
	assert_int_equal(layer_chunk_get(t, 9, 99, &data, &len), 0);
	assert_int_equal(len, 1000);
	assert_int_equal(layer_chunk_get(t, 9, 100, &data, &len), -ENOENT);
	assert_int_equal(layer_chunk_get(t, 10, 0, &data, &len), 0);
	assert_int_equal(len, 5);
	assert_int_equal(layer_chunk_put(t, 9, 0, buf, LAYER_BLOCK + 1),
			 -EINVAL);
	/* Deleting an inode deletes its chunks, not its neighbour's. */
	assert_int_equal(layer_inode_del(t, 9), 0);
	assert_int_equal(layer_chunks_bytes(t, 9, &bytes), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(layer_chunk_get(t, 10, 0, &data, &len), 0);
	assert_int_equal(layer_commit(t), 0);
}

/* Pieces: merged over the base (zeros past a short piece), over zeros
 * without a base, dropped by a base put, cut by a truncation, counted
 * in bytes and in the counters, and undone by a savepoint rollback. */
static void test_pieces(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	static char base[LAYER_BLOCK], want[LAYER_BLOCK], pc[LAYER_PIECE];
	struct layer_counters c;
	const void *data;
	size_t len, old;
	uint64_t bytes, nb;
	uint32_t lv;
	bool hasbase;
	unsigned n;

	memset(base, 'b', sizeof(base));
	memset(pc, 'p', sizeof(pc));
	assert_int_equal(layer_chunk_put(t, 7, 3, base, 10000), 0);
	assert_int_equal(layer_piece_put(t, 7, 3, 1, pc, LAYER_PIECE, &old), 0);
	assert_int_equal(old, 0);
	/* a short piece past the base's end: the block grows */
	assert_int_equal(layer_piece_put(t, 7, 3, 5, pc, 100, &old), 0);
	/* a short piece over base bytes: zeros after it in its range */
	assert_int_equal(layer_piece_put(t, 7, 3, 2, pc, 10, &old), 0);
	memset(want, 0, sizeof(want));
	memset(want, 'b', 10000);
	memset(want + LAYER_PIECE, 'p', LAYER_PIECE);
	memset(want + 2 * LAYER_PIECE, 0, LAYER_PIECE);
	memset(want + 2 * LAYER_PIECE, 'p', 10);
	memset(want + 5 * LAYER_PIECE, 'p', 100);
	assert_int_equal(layer_chunk_get(t, 7, 3, &data, &len), 0);
	assert_int_equal(len, 5 * LAYER_PIECE + 100);
	assert_memory_equal(data, want, len);
	assert_int_equal(layer_block_info(t, 7, 3, &hasbase, &n), 0);
	assert_true(hasbase);
	assert_int_equal(n, 3);
	assert_int_equal(layer_chunks_bytes(t, 7, &bytes), 0);
	assert_int_equal(bytes, 10000 + LAYER_PIECE + 100 + 10);
	/* replacing a piece reports its old length */
	assert_int_equal(layer_piece_put(t, 7, 3, 5, pc, 200, &old), 0);
	assert_int_equal(old, 100);
	/* neighbours: no base, pieces over zeros; block 2 has nothing */
	assert_int_equal(layer_piece_put(t, 7, 4, 15, pc, 3, &old), 0);
	assert_int_equal(layer_chunk_get(t, 7, 4, &data, &len), 0);
	assert_int_equal(len, 15 * LAYER_PIECE + 3);
	memset(want, 0, sizeof(want));
	memset(want + 15 * LAYER_PIECE, 'p', 3);
	assert_memory_equal(data, want, len);
	assert_int_equal(layer_chunk_get(t, 7, 2, &data, &len), -ENOENT);
	assert_int_equal(layer_chunk_next(t, 7, 0, &nb, &len), 0);
	assert_int_equal(nb, 3);
	assert_int_equal(len, 5 * LAYER_PIECE + 200);
	assert_int_equal(layer_chunk_next(t, 7, 4, &nb, &len), 0);
	assert_int_equal(nb, 4);
	assert_int_equal(len, 15 * LAYER_PIECE + 3);
	assert_int_equal(layer_chunk_next(t, 7, 5, &nb, &len), -ENOENT);
	/* bad piece numbers and sizes */
	assert_int_equal(layer_piece_put(t, 7, 3, LAYER_PIECES, pc, 1, &old),
			 -EINVAL);
	assert_int_equal(layer_piece_put(t, 7, 3, 0, pc, LAYER_PIECE + 1,
					 &old), -EINVAL);
	/* the counters follow pieces */
	assert_int_equal(layer_counters_get(t, &c), 0);
	assert_int_equal(c.bytes, 10000 + LAYER_PIECE + 200 + 10 + 3);
	assert_int_equal(layer_commit(t), 0);

	/* a savepoint undoes pieces and the base put that dropped them */
	t = wtxn(f);
	assert_int_equal(layer_sp_push(t, &lv), 0);
	assert_int_equal(layer_chunk_put(t, 7, 3, base, 20), 0);
	assert_int_equal(layer_block_info(t, 7, 3, &hasbase, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(layer_chunk_get(t, 7, 3, &data, &len), 0);
	assert_int_equal(len, 20);
	/* (a rollback comes in a later transaction: the counters hold the
	 * chunk bytes only once a transaction committed them) */
	assert_int_equal(layer_commit(t), 0);
	t = wtxn(f);
	assert_int_equal(layer_sp_rollback(t, lv), 0);
	assert_int_equal(layer_block_info(t, 7, 3, &hasbase, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(layer_chunk_get(t, 7, 3, &data, &len), 0);
	assert_int_equal(len, 5 * LAYER_PIECE + 200);
	assert_int_equal(layer_sp_clear(t), 0);
	/* truncation through pieces: from block 4 on, then everything */
	assert_int_equal(layer_chunks_trunc(t, 7, 4), 0);
	assert_int_equal(layer_chunk_get(t, 7, 4, &data, &len), -ENOENT);
	assert_int_equal(layer_chunk_next(t, 7, 0, &nb, &len), 0);
	assert_int_equal(nb, 3);
	assert_int_equal(layer_chunks_trunc(t, 7, 0), 0);
	assert_int_equal(layer_chunks_bytes(t, 7, &bytes), 0);
	assert_int_equal(bytes, 0);
	assert_int_equal(layer_counters_get(t, &c), 0);
	assert_int_equal(c.bytes, 0);
	assert_int_equal(layer_commit(t), 0);
}

/* A layer of format txfs-layer-1 opens, reads the same, and is upgraded
 * to txfs-layer-2 (so an older txfs refuses it from then on). */
static void test_format_1_upgraded(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	const void *v;
	const char *why;
	size_t len;

	assert_int_equal(layer_chunk_put(t, 7, 0, "old", 3), 0);
	assert_int_equal(layer_meta_put(t, "format", LAYER_FORMAT_1,
					strlen(LAYER_FORMAT_1)), 0);
	assert_int_equal(layer_commit(t), 0);
	layer_close(f->l);
	assert_int_equal(layer_open(f->dirfd, "layer", 0, &f->ws, &f->l, &why),
			 0);
	assert_int_equal(layer_begin(f->l, false, &t), 0);
	assert_int_equal(layer_meta_get(t, "format", &v, &len), 0);
	assert_int_equal(len, strlen(LAYER_FORMAT));
	assert_memory_equal(v, LAYER_FORMAT, len);
	assert_int_equal(layer_chunk_get(t, 7, 0, &v, &len), 0);
	assert_int_equal(len, 3);
	assert_memory_equal(v, "old", 3);
	layer_txn_end(t);
	/* a format from the future is still refused */
	t = wtxn(f);
	assert_int_equal(layer_meta_put(t, "format", "txfs-layer-9", 12), 0);
	assert_int_equal(layer_commit(t), 0);
	layer_close(f->l);
	f->l = NULL;
	assert_int_equal(layer_open(f->dirfd, "layer", 0, &f->ws, &f->l, &why),
			 -EINVAL);
	assert_non_null(strstr(why, "unknown layer format"));
	assert_int_equal(layer_open(f->dirfd, "layer", 0, &f->ws, &f->l, &why),
			 -EINVAL);
	f->l = NULL;
}

static void test_generation_discard_and_gc(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	struct layer_inode rec = { .mode = S_IFREG | 0644, .nlink = 1 };
	struct layer_ino_view v;
	char buf[100] = { 0 };
	bool more = true;
	int steps = 0;

	for (uint64_t i = 1; i <= 5000; i++) {
		assert_int_equal(layer_inode_put(t, i, &rec, NULL, NULL), 0);
		assert_int_equal(layer_chunk_put(t, i, 0, buf, sizeof(buf)), 0);
	}
	assert_int_equal(layer_commit(t), 0);
	t = wtxn(f);
	assert_int_equal(layer_new_generation(t), 0);
	assert_int_equal(layer_commit(t), 0);
	t = wtxn(f);
	assert_int_equal(layer_inode_get(t, 1, &v), -ENOENT);
	assert_int_equal(layer_inode_put(t, 1, &rec, "new", NULL), 0);
	assert_int_equal(layer_commit(t), 0);
	while (more && steps++ < 100)
		assert_int_equal(layer_gc_step(f->l, 1000, &more), 0);
	assert_false(more);
	assert_true(steps >= 10);	/* 10,000 keys, 1,000 a step */
	t = wtxn(f);
	assert_int_equal(layer_inode_get(t, 1, &v), 0);	/* new gen kept */
	assert_string_equal(v.lower_path, "new");
	layer_txn_end(t);
}

static void test_error_mapping(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	struct layer_inode rec = { .mode = S_IFREG };

	fail_put = MDB_MAP_FULL;
	assert_int_equal(layer_inode_put(t, 1, &rec, NULL, NULL), -ENOSPC);
	fail_put = MDB_TXN_FULL;
	assert_int_equal(layer_chunk_put(t, 1, 0, "x", 1), -ENOSPC);
	fail_put = MDB_CORRUPTED;
	assert_int_equal(layer_chunk_put(t, 1, 0, "x", 1), -EIO);
	fail_put = EIO;
	assert_int_equal(layer_meta_put_u64(t, "x", 1), -EIO);
	fail_put = 0;
	layer_txn_end(t);
}

static void test_map_full_keeps_data(void **state)
{
	struct fx *f = *state;
	struct layer *small;
	struct layer_txn *t;
	struct layer_ws ws = f->ws;
	char buf[LAYER_BLOCK];
	const char *why;
	const void *data;
	size_t len;
	int rc = 0;
	uint64_t b;

	memset(buf, 'z', sizeof(buf));
	assert_int_equal(layer_open(f->dirfd, "small", 1u << 20, &ws, &small,
				    &why), 0);
	for (b = 0; b < 100 && rc == 0; b++) {
		assert_int_equal(layer_begin(small, true, &t), 0);
		rc = layer_chunk_put(t, 1, b, buf, sizeof(buf));
		if (rc == 0)
			rc = layer_commit(t);
		else
			layer_txn_end(t);
	}
	assert_int_equal(rc, -ENOSPC);
	assert_true(b > 2);
	assert_int_equal(layer_begin(small, false, &t), 0);
	assert_int_equal(layer_chunk_get(t, 1, 0, &data, &len), 0);
	assert_int_equal(len, LAYER_BLOCK);
	assert_memory_equal(data, buf, LAYER_BLOCK);
	layer_txn_end(t);
	layer_close(small);
}

static void test_foreign_refused(void **state)
{
	struct fx *f = *state;
	struct layer_ws other = f->ws;
	struct layer *l2;
	const char *why = NULL;

	layer_close(f->l);
	other.ino = 999;
	assert_int_equal(layer_open(f->dirfd, "layer", 0, &other, &l2, &why),
			 -EINVAL);
	assert_non_null(why);
	assert_non_null(strstr(why, "another workspace"));
	assert_int_equal(layer_open(f->dirfd, "layer", 0, &f->ws, &f->l, &why),
			 0);
}

static void test_corrupt_refused(void **state)
{
	struct fx *f = *state;
	struct layer *l2;
	const char *why = NULL;
	int fd;

	assert_int_equal(mkdirat(f->dirfd, "junk", 0700), 0);
	fd = openat(f->dirfd, "junk/data.mdb", O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	for (int i = 0; i < 64; i++)
		assert_int_equal(write(fd, "garbage-garbage-", 16), 16);
	close(fd);
	assert_int_equal(layer_open(f->dirfd, "junk", 0, &f->ws, &l2, &why),
			 -EINVAL);
	assert_non_null(why);
	/* Refused, not reset: the junk is still there. */
	fd = openat(f->dirfd, "junk/data.mdb", O_RDONLY);
	{
		char b[16];

		assert_int_equal(read(fd, b, 16), 16);
		assert_memory_equal(b, "garbage-garbage-", 16);
	}
	close(fd);
}

static uint64_t inode_size(struct layer_txn *t, uint64_t tino)
{
	struct layer_ino_view v;

	return layer_inode_get(t, tino, &v) == 0 ? v.rec.size : 0;
}

static void put_size(struct layer_txn *t, uint64_t tino, uint64_t size)
{
	struct layer_inode rec = { .mode = S_IFREG | 0644, .size = size };

	assert_int_equal(layer_inode_put(t, tino, &rec, NULL, NULL), 0);
}

/* Nested savepoints: rollback restores each level exactly; release merges
 * a level's undo records into the one below, keeping the oldest value. */
static void test_savepoints(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t = wtxn(f);
	struct layer_ino_view v;
	uint32_t l1, l2, l3;

	put_size(t, 1, 10);			/* before any savepoint */
	assert_int_equal(layer_sp_push(t, &l1), 0);
	put_size(t, 1, 11);
	put_size(t, 2, 20);
	assert_int_equal(layer_sp_push(t, &l2), 0);
	put_size(t, 1, 12);
	assert_int_equal(layer_inode_del(t, 2), 0);
	assert_int_equal(layer_sp_push(t, &l3), 0);
	put_size(t, 3, 30);
	assert_int_equal(l3, 3);
	assert_int_equal(layer_sp_rollback(t, l3), 0);	/* level 3 undone */
	assert_int_equal(layer_inode_get(t, 3, &v), -ENOENT);
	assert_int_equal(inode_size(t, 1), 12);
	put_size(t, 3, 31);
	assert_int_equal(layer_sp_release(t, l2), 0);	/* 2 and 3 merged */
	assert_int_equal(layer_sp_level(t), 1);
	assert_int_equal(layer_sp_rollback(t, l2), -ENOENT);
	assert_int_equal(layer_sp_rollback(t, l1), 0);	/* all undone */
	assert_int_equal(inode_size(t, 1), 10);
	assert_int_equal(layer_inode_get(t, 2, &v), -ENOENT);
	assert_int_equal(layer_inode_get(t, 3, &v), -ENOENT);
	assert_int_equal(layer_sp_level(t), 1);		/* l1 stays open */
	assert_int_equal(layer_commit(t), 0);
}


/* Another thread's read: it waits until the owner commits the batch. */
static void *batch_reader(void *arg)
{
	struct fx *f = arg;
	struct layer_txn *t;
	uint64_t size;

	if (layer_begin(f->l, false, &t))
		return (void *)1;
	size = inode_size(t, 1);
	layer_txn_end(t);
	return size == 10 ? NULL : (void *)2;
}

/* Group commit (batch.c): an operation joins the batch, an aborted one
 * leaves no trace, the owner reads the batch, another thread waits for
 * the batch to be committed and then sees it, layer_sync commits it. */
static void test_batch(void **state)
{
	struct fx *f = *state;
	uint64_t c0 = layer_commits(f->l);
	struct layer_txn *t;
	pthread_t th;
	void *res;

	assert_int_equal(layer_batch_start(f->l, 1000), 0);
	t = wtxn(f);
	put_size(t, 1, 10);
	assert_int_equal(layer_commit(t), 0);
	t = wtxn(f);
	put_size(t, 2, 20);
	layer_txn_end(t);			/* aborted: not in the batch */
	assert_int_equal(layer_begin(f->l, false, &t), 0);
	assert_int_equal(inode_size(t, 1), 10);
	assert_int_equal(inode_size(t, 2), 0);
	layer_txn_end(t);
	assert_int_equal(layer_commits(f->l), c0);	/* still open */
	assert_int_equal(pthread_create(&th, NULL, batch_reader, f), 0);
	usleep(50000);
	assert_int_equal(layer_batch_flush(f->l), 0);	/* frees the reader */
	assert_int_equal(pthread_join(th, &res), 0);
	assert_null(res);
	assert_int_equal(layer_commits(f->l), c0 + 1);
	assert_int_equal(layer_batch_ops(f->l), 1);
	t = wtxn(f);
	put_size(t, 3, 30);
	assert_int_equal(layer_commit(t), 0);
	assert_int_equal(layer_sync(f->l), 0);	/* a sync point commits it */
	assert_int_equal(layer_commits(f->l), c0 + 2);
	layer_batch_stop(f->l);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inode_roundtrip, setup, teardown),
		cmocka_unit_test_setup_teardown(test_alloc_ino_distinct, setup, teardown),
		cmocka_unit_test_setup_teardown(test_dirents_and_whiteouts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chunks_trunc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pieces, setup, teardown),
		cmocka_unit_test_setup_teardown(test_format_1_upgraded, setup, teardown),
		cmocka_unit_test_setup_teardown(test_generation_discard_and_gc, setup, teardown),
		cmocka_unit_test_setup_teardown(test_error_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_map_full_keeps_data, setup, teardown),
		cmocka_unit_test_setup_teardown(test_foreign_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_refused, setup, teardown),
		cmocka_unit_test_setup_teardown(test_savepoints, setup, teardown),
		cmocka_unit_test_setup_teardown(test_batch, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
