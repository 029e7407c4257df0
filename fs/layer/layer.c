/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layer.c - the LMDB upper layer. The key schema is documented in layer.h.
 *
 * Durability: the environment is opened with MDB_NOSYNC, so a committed
 * write transaction is in the kernel's page cache (it survives the death
 * of the daemon) and reaches the disk on layer_sync(), which fsync(2) and
 * fdatasync(2) inside the mount call. With TXFS_LAYER_WRITEMAP=1 the
 * environment is opened with MDB_WRITEMAP (no pwrite per dirty page),
 * its map kept inside the data file's allocated blocks (reserve.c):
 * storing into a hole of a shared mapping on a full disk would kill the
 * daemon with SIGBUS instead of returning ENOSPC. Pages of the mapping
 * are the page cache: they survive the death of the daemon as pwrite's
 * data did. Opt-in: reserve.c says why.
 */
#include <endian.h>
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

#define LAYER_MAX_READERS 1024

/* --- environment --------------------------------------------------- */

static int open_dbis(struct layer *l)
{
	MDB_txn *txn;
	int rc = mdb_txn_begin(l->env, NULL, 0, &txn);

	if (rc)
		return lerr(rc);
	if ((rc = mdb_dbi_open(txn, "meta", MDB_CREATE, &l->meta)) ||
	    (rc = mdb_dbi_open(txn, "inodes", MDB_CREATE, &l->inodes)) ||
	    (rc = mdb_dbi_open(txn, "dirents", MDB_CREATE, &l->dirents)) ||
	    (rc = mdb_dbi_open(txn, "chunks", MDB_CREATE, &l->chunks)) ||
	    (rc = mdb_dbi_open(txn, "xattrs", MDB_CREATE, &l->xattrs)) ||
	    (rc = mdb_dbi_open(txn, "undo", MDB_CREATE, &l->undo)) ||
	    (rc = mdb_dbi_open(txn, "journal", MDB_CREATE, &l->journal))) {
		mdb_txn_abort(txn);
		return lerr(rc);
	}
	return lerr(mdb_txn_commit(txn));
}

static int meta_get(struct layer_txn *t, const char *key, MDB_val *v)
{
	MDB_val k = { strlen(key), (void *)key };

	return lerr(mdb_get(ltx(t), t->l->meta, &k, v));
}

static int meta_put(struct layer_txn *t, const char *key, const void *val,
		    size_t len)
{
	MDB_val k = { strlen(key), (void *)key };
	MDB_val v = { len, (void *)val };

	return lerr(mdb_put(ltx(t), t->l->meta, &k, &v, 0));
}

/* Check the format and workspace records, or write them on a new layer. */
static int check_identity(struct layer *l, struct layer_ws *ws,
			  const char **why)
{
	struct layer_txn *t;
	bool upgraded = false;
	MDB_val v;
	int rc = layer_begin(l, true, &t);

	if (rc)
		return rc;
	rc = meta_get(t, "format", &v);
	if (rc == -ENOENT && ws->dev == 0 && ws->ino == 0) {
		*why = "no layer here (empty state folder)";
		rc = -EINVAL;
		goto out;
	}
	if (rc == -ENOENT) {
		MDB_stat st;

		mdb_stat(ltx(t), l->inodes, &st);
		if (st.ms_entries) {
			*why = "no format record: not a txfs layer, or corrupt";
			rc = -EINVAL;
			goto out;
		}
		if ((rc = meta_put(t, "format", LAYER_FORMAT,
				   strlen(LAYER_FORMAT))) ||
		    (rc = meta_put(t, "workspace", ws, sizeof(*ws))) ||
		    (rc = layer_meta_put_u64(t, "gen", 1)) ||
		    (rc = layer_meta_put_u64(t, "next_ino", 1)) ||
		    (rc = layer_meta_put_u64(t, "txid", 1)))
			goto out;
		rc = layer_commit(t);
		return rc;
	}
	if (rc)
		goto out;
	if (v.mv_size == strlen(LAYER_FORMAT_1) &&
	    memcmp(v.mv_data, LAYER_FORMAT_1, v.mv_size) == 0) {
		/* a layer without pieces reads the same: upgrade the record,
		 * so an older txfs refuses it once it may hold pieces */
		if ((rc = meta_put(t, "format", LAYER_FORMAT,
				   strlen(LAYER_FORMAT))))
			goto out;
		upgraded = true;
	} else if (v.mv_size != strlen(LAYER_FORMAT) ||
		   memcmp(v.mv_data, LAYER_FORMAT, v.mv_size)) {
		*why = "unknown layer format (made by another txfs version?)";
		rc = -EINVAL;
		goto out;
	}
	rc = meta_get(t, "workspace", &v);
	if (rc || v.mv_size != sizeof(*ws)) {
		*why = "no workspace record: corrupt layer";
		rc = -EINVAL;
		goto out;
	}
	{
		const struct layer_ws *old = v.mv_data;

		if (ws->dev == 0 && ws->ino == 0) {
			*ws = *old;	/* recover: learn it */
		} else if (old->dev != ws->dev || old->ino != ws->ino) {
			*why = "it belongs to another workspace";
			rc = -EINVAL;
			goto out;
		}
	}
	rc = layer_meta_get_u64(t, "gen", &t->gen);
	if (rc == 0 && upgraded)
		return layer_commit(t);
out:
	layer_txn_end(t);
	return rc;
}

int layer_open(int dirfd, const char *name, uint64_t map_size,
	       struct layer_ws *ws, struct layer **out,
	       const char **why)
{
	struct layer *l = calloc(1, sizeof(*l));
	char path[64];
	uint64_t wmap;
	int rc;

	*why = NULL;
	if (!l)
		return -ENOMEM;
	if (mkdirat(dirfd, name, 0700) && errno != EEXIST) {
		rc = -errno;
		goto out_free;
	}
	/* LMDB takes a path: reach the folder through /proc/self/fd so the
	 * state folder is named by the fd we opened and locked. */
	snprintf(path, sizeof(path), "/proc/self/fd/%d/%s", dirfd, name);
	if ((rc = lerr(mdb_env_create(&l->env))))
		goto out_free;
	mdb_env_set_maxdbs(l->env, 8);
	mdb_env_set_maxreaders(l->env, LAYER_MAX_READERS);
	l->maxmap = map_size ? map_size : LAYER_DEFAULT_MAP;
	wmap = layer_writemap_prepare(l, dirfd, name);
	l->writemap = wmap != 0;
	mdb_env_set_mapsize(l->env, wmap ? wmap : l->maxmap);
	pthread_rwlock_init(&l->maplock, NULL);
	batch_init(l);
	/* no MDB_NORDAHEAD: file data in the layer is mostly read in
	 * order (bench W4: a cold read was 19x native without readahead) */
	rc = mdb_env_open(l->env, path,
			  MDB_NOSYNC | (wmap ? MDB_WRITEMAP : 0), 0600);
	if (rc) {
		if (rc == MDB_INVALID || rc == MDB_VERSION_MISMATCH ||
		    rc == MDB_CORRUPTED)
			*why = "not an LMDB environment, or corrupt";
		rc = *why ? -EINVAL : lerr(rc);
		goto out_env;
	}
	if ((rc = layer_reserve_open(l, dirfd, name)) || (rc = open_dbis(l)) ||
	    (rc = check_identity(l, ws, why))) {
		if (rc == -EIO && !*why)
			*why = "cannot read the layer: corrupt";
		goto out_env;
	}
	*out = l;
	return 0;
out_env:
	layer_reserve_refused(l, dirfd, name);	/* the file as it was */
	batch_destroy(l);
	pthread_rwlock_destroy(&l->maplock);
out_free:
	free(l);
	return rc;
}

void layer_close(struct layer *l)
{
	if (!l)
		return;
	batch_destroy(l);
	mdb_env_sync(l->env, 1);
	batch_trim(l);
	layer_reserve_close(l);
	pthread_rwlock_destroy(&l->maplock);
	free(l);
}

int layer_sync(struct layer *l)
{
	int rc = layer_batch_flush(l);

	if (rc == 0)
		rc = layer_batch_lost(l);	/* an earlier batch's failure */
	return rc ? rc : lerr(mdb_env_sync(l->env, 1));
}

int layer_used_bytes(struct layer *l, uint64_t *bytes)
{
	MDB_envinfo info;
	MDB_stat st;

	mdb_env_info(l->env, &info);
	mdb_env_stat(l->env, &st);
	*bytes = (uint64_t)(info.me_last_pgno + 1) * st.ms_psize;
	return 0;
}

/* --- transactions -------------------------------------------------- */

/* The generation and savepoint level, read at the start of t. */
static void begin_meta(struct layer_txn *t)
{
	MDB_val v;

	if (meta_get(t, "gen", &v) == 0 && v.mv_size == 8)
		memcpy(&t->gen, v.mv_data, 8);
	if (meta_get(t, "sp_level", &v) == 0 && v.mv_size == 8) {
		uint64_t lv;

		memcpy(&lv, v.mv_data, 8);
		t->sp_level = (uint32_t)lv;
	}
}

/* A transaction of its own (not inside the batch). */
static int begin_plain(struct layer *l, bool write, struct layer_txn *t)
{
	int rc;

	t->maplocked = l->writemap;
	if (write)
		layer_reserve_grow(l);
	if (t->maplocked)
		pthread_rwlock_rdlock(&l->maplock);
	rc = mdb_txn_begin(l->env, NULL, write ? 0 : MDB_RDONLY, &t->txn);
	if (rc && t->maplocked)
		pthread_rwlock_unlock(&l->maplock);
	return lerr(rc);
}

int layer_begin(struct layer *l, bool write, struct layer_txn **out)
{
	struct layer_txn *t = calloc(1, sizeof(*t));
	int rc = 2;	/* batch_begin's "a plain transaction" */

	if (!t)
		return -ENOMEM;
	t->l = l;
	t->write = write;
	if (l->b.on)
		rc = batch_begin(l, write, t);	/* batch.c */
	if (rc > 0) {
		int waited = rc == 1;

		rc = begin_plain(l, write, t);
		if (waited)
			batch_unwait(l);
	}
	if (rc) {
		free(t);
		return rc;
	}
	begin_meta(t);
	*out = t;
	return 0;
}

uint64_t layer_commits(struct layer *l)
{
	return l->commits;
}

int layer_commit(struct layer_txn *t)
{
	struct layer *l = t->l;
	struct layer_counters c;
	int rc = 0;

	/* what the chunks gained or lost joins the counters, in the same
	 * transaction (so a savepoint's undo restores both together) */
	if (t->dbytes && (rc = layer_counters_get(t, &c)) == 0)
		rc = layer_counters_put(t, &c);
	if (rc) {
		layer_txn_end(t);
		return rc;
	}
	if (t->nested || t->batchref) {
		rc = t->nested ? batch_commit(t) : 0;
		if (t->batchref)
			batch_end(t);
		free(t->blockbuf);
		free(t);
		return rc;
	}
	rc = lerr(mdb_txn_commit(t->txn));
	if (t->maplocked)
		pthread_rwlock_unlock(&l->maplock);
	free(t->blockbuf);
	free(t);
	if (rc == 0)
		l->commits++;
	/* LMDB says EIO when the disk took only part of a page write (a
	 * short write: the disk filled up); the caller must hear ENOSPC
	 * (README), not a damaged-device error. The transaction is aborted
	 * either way: nothing committed before is touched. */
	return lerr_commit(l, rc);
}

void layer_txn_end(struct layer_txn *t)
{
	if (!t)
		return;
	if (t->nested || t->batchref)
		batch_end(t);
	else
		mdb_txn_abort(t->txn);
	if (t->maplocked)
		pthread_rwlock_unlock(&t->l->maplock);
	free(t->blockbuf);
	free(t);
}

uint64_t layer_txn_gen(const struct layer_txn *t)
{
	return t->gen;
}

int layer_meta_get_u64(struct layer_txn *t, const char *key, uint64_t *v)
{
	MDB_val val;
	int rc = meta_get(t, key, &val);

	if (rc)
		return rc;
	if (val.mv_size != 8)
		return -EIO;
	memcpy(v, val.mv_data, 8);
	return 0;
}

int layer_meta_put_u64(struct layer_txn *t, const char *key, uint64_t v)
{
	return meta_put(t, key, &v, 8);
}

int layer_meta_get(struct layer_txn *t, const char *key, const void **val,
		   size_t *len)
{
	MDB_val v;
	int rc = meta_get(t, key, &v);

	if (rc == 0) {
		*val = v.mv_data;
		*len = v.mv_size;
	}
	return rc;
}

int layer_meta_put(struct layer_txn *t, const char *key, const void *val,
		   size_t len)
{
	return meta_put(t, key, val, len);
}

int layer_meta_del(struct layer_txn *t, const char *key)
{
	MDB_val k = { strlen(key), (void *)key };
	int rc = lerr(mdb_del(ltx(t), t->l->meta, &k, NULL));

	return rc == -ENOENT ? 0 : rc;
}

int layer_journal_put(struct layer_txn *t, uint32_t i, const void *step,
		      size_t len)
{
	uint32_t be = htobe32(i);
	MDB_val k = { 4, &be }, v = { len, (void *)step };

	return lerr(mdb_put(ltx(t), t->l->journal, &k, &v, 0));
}

int layer_journal_get(struct layer_txn *t, uint32_t i, const void **step,
		      size_t *len)
{
	uint32_t be = htobe32(i);
	MDB_val k = { 4, &be }, v;
	int rc = lerr(mdb_get(ltx(t), t->l->journal, &k, &v));

	if (rc == 0) {
		*step = v.mv_data;
		*len = v.mv_size;
	}
	return rc;
}

int layer_journal_clear(struct layer_txn *t)
{
	return lerr(mdb_drop(ltx(t), t->l->journal, 0));
}

int layer_dirent_each_all(struct layer_txn *t, layer_any_dirent_fn fn,
			  void *arg)
{
	struct key pre;
	MDB_cursor *c;
	MDB_val k, v;
	int rc, stop = 0;

	pre.len = 0;
	key_u64(&pre, t->gen);
	k = kval(&pre);
	if ((rc = mdb_cursor_open(ltx(t), t->l->dirents, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size > 16 && memcmp(k.mv_data, pre.b, 8) == 0) {
		struct layer_dirent d;

		memcpy(&d, v.mv_data, sizeof(d));
		stop = fn(arg, key_get_u64(&k, 8), (const char *)k.mv_data + 16,
			  k.mv_size - 16, &d);
		if (stop)
			break;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (stop)
		return stop;
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}

int layer_alloc_ino(struct layer_txn *t, uint64_t *tino)
{
	uint64_t n;
	int rc = layer_meta_get_u64(t, "next_ino", &n);

	if (rc)
		return rc;
	if (n >= LAYER_INO_VIRT - LAYER_INO_BASE)
		return -EOVERFLOW;	/* 2^48 - 2^40 creations: never */
	*tino = LAYER_INO_BASE + n;
	return layer_meta_put_u64(t, "next_ino", n + 1);
}

int layer_new_generation(struct layer_txn *t)
{
	int rc = layer_meta_put_u64(t, "gen", t->gen + 1);

	if (rc == 0)
		rc = layer_meta_put_u64(t, "sp_level", 0);
	if (rc == 0) {
		t->gen++;
		t->sp_level = 0;
		t->dbytes = 0;	/* the new generation starts from zero */
	}
	return rc;
}

/* --- inodes -------------------------------------------------------- */

int layer_inode_get(struct layer_txn *t, uint64_t tino,
		    struct layer_ino_view *v)
{
	struct key k;
	MDB_val kv, val;
	const char *tail;
	int rc;

	key2(&k, t->gen, tino);
	kv = kval(&k);
	rc = lerr(mdb_get(ltx(t), t->l->inodes, &kv, &val));
	if (rc)
		return rc;
	if (val.mv_size < sizeof(v->rec))
		return -EIO;
	memcpy(&v->rec, val.mv_data, sizeof(v->rec));
	if (val.mv_size != sizeof(v->rec) + v->rec.lower_len + 1u +
				   v->rec.link_len + 1u)
		return -EIO;
	tail = (const char *)val.mv_data + sizeof(v->rec);
	v->lower_path = tail;
	v->link = tail + v->rec.lower_len + 1;
	return 0;
}

int layer_inode_put(struct layer_txn *t, uint64_t tino,
		    const struct layer_inode *rec, const char *lower_path,
		    const char *link)
{
	size_t llen = lower_path ? strlen(lower_path) : 0;
	size_t slen = link ? strlen(link) : 0;
	struct layer_inode r = *rec;
	struct key k;
	MDB_val kv, val;
	char *p;
	int rc;

	if (llen > 65535 || slen > 65535)
		return -ENAMETOOLONG;
	r.lower_len = (uint16_t)llen;
	r.link_len = (uint16_t)slen;
	key2(&k, t->gen, tino);
	kv = kval(&k);
	val.mv_size = sizeof(r) + llen + 1 + slen + 1;
	val.mv_data = NULL;
	rc = lput(t, t->l->inodes, &kv, &val, MDB_RESERVE);
	if (rc)
		return rc;
	p = val.mv_data;
	memcpy(p, &r, sizeof(r));
	p += sizeof(r);
	memcpy(p, llen ? lower_path : "", llen + 1);
	memcpy(p + llen + 1, slen ? link : "", slen + 1);
	return 0;
}

int layer_inode_update(struct layer_txn *t, uint64_t tino,
		       const struct layer_inode *rec)
{
	struct layer_ino_view v;
	char *lp, *ln;
	int rc = layer_inode_get(t, tino, &v);

	if (rc)
		return rc;
	/* The old value's memory may be reused by the put: copy first. */
	lp = strdup(v.lower_path);
	ln = strdup(v.link);
	if (!lp || !ln) {
		rc = -ENOMEM;
		goto out;
	}
	rc = layer_inode_put(t, tino, rec, lp, ln);
out:
	free(lp);
	free(ln);
	return rc;
}

/* Delete every key of db that starts with prefix (plen bytes). */
int del_prefix(struct layer_txn *t, MDB_dbi dbi, const struct key *pre)
{
	MDB_cursor *c;
	MDB_val k = { pre->len, (void *)pre->b }, v;
	int rc = mdb_cursor_open(ltx(t), dbi, &c);

	if (rc)
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size >= pre->len &&
	       memcmp(k.mv_data, pre->b, pre->len) == 0) {
		if (dbi == t->l->chunks)
			t->dbytes -= (int64_t)v.mv_size;
		rc = lcdel(t, c, dbi, &k);
		if (rc)
			break;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return rc == -ENOENT || rc == MDB_NOTFOUND ? 0 : (rc < 0 ? rc : lerr(rc));
}

int layer_inode_del(struct layer_txn *t, uint64_t tino)
{
	struct key k;
	MDB_val kv;
	int rc;

	key2(&k, t->gen, tino);
	if ((rc = del_prefix(t, t->l->chunks, &k)) ||
	    (rc = del_prefix(t, t->l->xattrs, &k)))
		return rc;
	kv = kval(&k);
	rc = ldel(t, t->l->inodes, &kv);
	return rc == -ENOENT ? 0 : rc;
}

int layer_counters_get(struct layer_txn *t, struct layer_counters *c)
{
	struct key k;
	MDB_val kv, v;
	int rc;

	key2(&k, t->gen, 0);
	kv = kval(&k);
	rc = lerr(mdb_get(ltx(t), t->l->inodes, &kv, &v));
	memset(c, 0, sizeof(*c));
	if (rc == 0 && v.mv_size == sizeof(*c))
		memcpy(c, v.mv_data, sizeof(*c));
	c->bytes += t->dbytes;
	return rc == -ENOENT ? 0 : rc;
}

int layer_counters_put(struct layer_txn *t, const struct layer_counters *c)
{
	struct key k;
	MDB_val kv, v = { sizeof(*c), (void *)c };
	int rc;

	key2(&k, t->gen, 0);
	kv = kval(&k);
	rc = lput(t, t->l->inodes, &kv, &v, 0);
	if (rc == 0)
		t->dbytes = 0;	/* c->bytes included them (counters_get) */
	return rc;
}

int layer_inode_each(struct layer_txn *t, layer_inode_fn fn, void *arg)
{
	struct key pre;
	MDB_cursor *c;
	MDB_val k, v;
	int rc, stop = 0;

	pre.len = 0;
	key_u64(&pre, t->gen);
	k = kval(&pre);
	if ((rc = mdb_cursor_open(ltx(t), t->l->inodes, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size == 16 && key_get_u64(&k, 0) == t->gen) {
		struct layer_ino_view iv;
		const char *tail;

		if (key_get_u64(&k, 8) == 0) {	/* the counters */
			rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
			continue;
		}
		tail = (const char *)v.mv_data + sizeof(iv.rec);

		memcpy(&iv.rec, v.mv_data, sizeof(iv.rec));
		iv.lower_path = tail;
		iv.link = tail + iv.rec.lower_len + 1;
		stop = fn(arg, key_get_u64(&k, 8), &iv);
		if (stop)
			break;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (stop)
		return stop;
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}
