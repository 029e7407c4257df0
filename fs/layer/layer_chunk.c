/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layer_chunk.c - file data in the layer: blocks and their pieces.
 *
 *   chunks  gen|tino|block       -> the block's base: up to LAYER_BLOCK
 *                                   bytes (zeros past its end)
 *           gen|tino|block|p     -> piece p (one byte, 0..LAYER_PIECES-1):
 *                                   up to LAYER_PIECE bytes that replace
 *                                   [p*LAYER_PIECE, (p+1)*LAYER_PIECE) of
 *                                   the block (zeros past the piece's end)
 *
 * A piece key is its block's key plus one byte, so LMDB sorts a block's
 * pieces right after its base and before the next block. A small write
 * into a big block stores the pieces it touches instead of the whole
 * merged block: a 4 KiB write costs 2 overflow pages, not 17. Writing a
 * base (a whole block, a truncation, a punched hole) drops the block's
 * pieces, so a block never holds more pieces than the writer allows
 * (file.c compacts at LAYER_PIECES_MAX).
 *
 * Invariant kept by the writer (file.c): a block has pieces only when it
 * has a base or holds no bytes of the real file (at or past lower_valid),
 * so the content under the pieces is the base or zeros, and
 * layer_chunk_get can hand out the merged block.
 *
 * Format: layers written before pieces existed (txfs-layer-1) hold only
 * 24-byte keys, which read the same here; layer_open upgrades their
 * format record to txfs-layer-2 so that an older txfs refuses the layer
 * instead of misreading its pieces.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layer_int.h"

#define CKEY_LEN 24u
#define PKEY_LEN 25u

static void ckey(struct key *k, uint64_t gen, uint64_t tino, uint64_t block)
{
	key2(k, gen, tino);
	key_u64(k, block);
}

/* Is k a chunk key (base or piece) of the file prefix pre (16 bytes)? */
static bool of_file(const MDB_val *k, const struct key *pre)
{
	return (k->mv_size == CKEY_LEN || k->mv_size == PKEY_LEN) &&
	       memcmp(k->mv_data, pre->b, 16) == 0;
}

/* Is k a key of block bk (24 bytes: base or one of its pieces)? */
static bool of_block(const MDB_val *k, const struct key *bk)
{
	return (k->mv_size == CKEY_LEN || k->mv_size == PKEY_LEN) &&
	       memcmp(k->mv_data, bk->b, CKEY_LEN) == 0;
}

/* What a block holds: its base (or none) and its pieces, read with an
 * open cursor. The pointers refer to LMDB memory. */
struct blk {
	bool base;
	MDB_val bval;
	unsigned n;
	unsigned char idx[LAYER_PIECES];
	MDB_val pval[LAYER_PIECES];
};

static int blk_read(struct layer_txn *t, uint64_t tino, uint64_t block,
		    struct blk *bl)
{
	struct key k;
	MDB_cursor *c;
	MDB_val kv, v;
	int rc;

	memset(bl, 0, sizeof(*bl));
	ckey(&k, t->gen, tino, block);
	kv = kval(&k);
	if ((rc = mdb_cursor_open(ltx(t), t->l->chunks, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &kv, &v, MDB_SET_RANGE);
	for (; rc == 0 && of_block(&kv, &k);
	     rc = mdb_cursor_get(c, &kv, &v, MDB_NEXT)) {
		if (kv.mv_size == CKEY_LEN) {
			bl->base = true;
			bl->bval = v;
			continue;
		}
		if (bl->n == LAYER_PIECES ||
		    ((const unsigned char *)kv.mv_data)[24] >= LAYER_PIECES ||
		    v.mv_size > LAYER_PIECE) {
			rc = EIO;	/* not something we write */
			break;
		}
		bl->idx[bl->n] = ((const unsigned char *)kv.mv_data)[24];
		bl->pval[bl->n++] = v;
	}
	mdb_cursor_close(c);
	if (rc == EIO) {
		fprintf(stderr, "txfs: layer: a damaged piece in block %llu "
			"of inode %llu\n", (unsigned long long)block,
			(unsigned long long)tino);
		return -EIO;
	}
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}

/* The merged length of a block: where its last stored byte ends. */
static size_t blk_extent(const struct blk *bl)
{
	size_t len = bl->base ? bl->bval.mv_size : 0;

	for (unsigned i = 0; i < bl->n; i++) {
		size_t e = (size_t)bl->idx[i] * LAYER_PIECE + bl->pval[i].mv_size;

		if (e > len)
			len = e;
	}
	return len;
}

int layer_chunk_get(struct layer_txn *t, uint64_t tino, uint64_t block,
		    const void **data, size_t *len)
{
	struct blk bl;
	char *buf;
	int rc = blk_read(t, tino, block, &bl);

	if (rc)
		return rc;
	if (!bl.base && bl.n == 0)
		return -ENOENT;
	if (bl.n == 0) {
		*data = bl.bval.mv_data;
		*len = bl.bval.mv_size;
		return 0;
	}
	if (!t->blockbuf && !(t->blockbuf = malloc(LAYER_BLOCK)))
		return -ENOMEM;
	buf = t->blockbuf;
	*len = blk_extent(&bl);
	memset(buf, 0, *len);
	if (bl.base)
		memcpy(buf, bl.bval.mv_data, bl.bval.mv_size);
	for (unsigned i = 0; i < bl.n; i++) {
		char *p = buf + (size_t)bl.idx[i] * LAYER_PIECE;
		size_t n = bl.pval[i].mv_size;
		size_t rest = (size_t)bl.idx[i] * LAYER_PIECE + LAYER_PIECE;

		memcpy(p, bl.pval[i].mv_data, n);
		rest = (rest < *len ? rest : *len) -
		       (size_t)bl.idx[i] * LAYER_PIECE;
		memset(p + n, 0, rest - n);
	}
	*data = buf;
	return 0;
}

int layer_block_info(struct layer_txn *t, uint64_t tino, uint64_t block,
		     bool *base, unsigned *pieces)
{
	struct blk bl;
	int rc = blk_read(t, tino, block, &bl);

	if (rc == 0) {
		*base = bl.base;
		*pieces = bl.n;
	}
	return rc;
}

/* Delete the chunk keys from start on that begin with the plen bytes
 * of prefix (chunk keys only: a base or a piece). */
static int del_from(struct layer_txn *t, struct key *start,
		    const void *prefix, size_t plen)
{
	MDB_cursor *c;
	MDB_val kv = kval(start), v;
	int rc;

	if ((rc = mdb_cursor_open(ltx(t), t->l->chunks, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &kv, &v, MDB_SET_RANGE);
	while (rc == 0 &&
	       (kv.mv_size == CKEY_LEN || kv.mv_size == PKEY_LEN) &&
	       memcmp(kv.mv_data, prefix, plen) == 0) {
		t->dbytes -= (int64_t)v.mv_size;
		if ((rc = lcdel(t, c, t->l->chunks, &kv)))
			break;
		rc = mdb_cursor_get(c, &kv, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND || rc == -ENOENT || rc == 0 ?
		       0 : (rc < 0 ? rc : lerr(rc));
}

/* Delete the pieces of block (its key k, 24 bytes). */
static int del_pieces(struct layer_txn *t, const struct key *k)
{
	struct key pk = *k;

	/* from piece 0 on: the base (a shorter key) sorts before it */
	pk.b[CKEY_LEN] = 0;
	pk.len = PKEY_LEN;
	return del_from(t, &pk, k->b, CKEY_LEN);
}

/* Put one key of the chunks database; *old gets the length it had. */
static int chunk_store(struct layer_txn *t, struct key *k, const void *data,
		       size_t len, size_t *old)
{
	MDB_val kv = kval(k), v = { len, (void *)data }, ov = { 0 };
	int rc = lerr(mdb_get(ltx(t), t->l->chunks, &kv, &ov));

	if (rc && rc != -ENOENT)
		return rc;
	*old = rc ? 0 : ov.mv_size;
	if ((rc = lput(t, t->l->chunks, &kv, &v, 0)))
		return rc;
	t->dbytes += (int64_t)len - (int64_t)*old;
	return 0;
}

int layer_chunk_put(struct layer_txn *t, uint64_t tino, uint64_t block,
		    const void *data, size_t len)
{
	struct key k;
	size_t old;
	int rc;

	t->wbytes += len;	/* batch.c: what the batch will write */
	if (len > LAYER_BLOCK)
		return -EINVAL;
	ckey(&k, t->gen, tino, block);
	/* a base replaces the whole block: its pieces go (data may be a
	 * merged block from layer_chunk_get: our buffer, not LMDB's) */
	if ((rc = del_pieces(t, &k)))
		return rc;
	return chunk_store(t, &k, data, len, &old);
}

int layer_piece_put(struct layer_txn *t, uint64_t tino, uint64_t block,
		    unsigned piece, const void *data, size_t len, size_t *old)
{
	struct key k;

	if (piece >= LAYER_PIECES || len > LAYER_PIECE)
		return -EINVAL;
	t->wbytes += len;	/* batch.c: what the batch will write */
	ckey(&k, t->gen, tino, block);
	k.b[k.len++] = (unsigned char)piece;
	return chunk_store(t, &k, data, len, old);
}

int layer_chunks_trunc(struct layer_txn *t, uint64_t tino, uint64_t first)
{
	struct key k, pre;

	key2(&pre, t->gen, tino);
	ckey(&k, t->gen, tino, first);
	return del_from(t, &k, pre.b, 16);
}

int layer_chunk_next(struct layer_txn *t, uint64_t tino, uint64_t block,
		     uint64_t *found, size_t *len)
{
	struct key k, pre;
	MDB_cursor *c;
	MDB_val kv, v;
	struct blk bl;
	int rc;

	key2(&pre, t->gen, tino);
	ckey(&k, t->gen, tino, block);
	kv = kval(&k);
	if ((rc = mdb_cursor_open(ltx(t), t->l->chunks, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &kv, &v, MDB_SET_RANGE);
	if (rc == 0 && !of_file(&kv, &pre))
		rc = MDB_NOTFOUND;
	if (rc == 0)
		*found = key_get_u64(&kv, 16);
	mdb_cursor_close(c);
	if (rc)
		return lerr(rc);
	if ((rc = blk_read(t, tino, *found, &bl)))
		return rc;
	*len = blk_extent(&bl);
	return 0;
}

int layer_chunks_bytes(struct layer_txn *t, uint64_t tino, uint64_t *bytes)
{
	struct key pre;
	MDB_cursor *c;
	MDB_val k, v;
	int rc;

	*bytes = 0;
	key2(&pre, t->gen, tino);
	k = kval(&pre);
	if ((rc = mdb_cursor_open(ltx(t), t->l->chunks, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && of_file(&k, &pre)) {
		*bytes += v.mv_size;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}
