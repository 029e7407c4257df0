/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layer_names.c - the layer's folder entries and extended attributes
 * (keys in layer.h), and the collection of old generations' garbage.
 * Built on layer.c's primitives (layer_int.h): every state change still
 * goes through lput/ldel, so one grep shows them all.
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

/* --- dirents ------------------------------------------------------- */

static int dkey(struct key *k, uint64_t gen, uint64_t dir, const char *name,
		size_t len)
{
	key2(k, gen, dir);
	return key_str(k, name, len);
}

int layer_dirent_get(struct layer_txn *t, uint64_t dir, const char *name,
		     size_t len, struct layer_dirent *d)
{
	struct key k;
	MDB_val kv, v;
	int rc = dkey(&k, t->gen, dir, name, len);

	if (rc)
		return rc;
	kv = kval(&k);
	rc = lerr(mdb_get(ltx(t), t->l->dirents, &kv, &v));
	if (rc)
		return rc;
	if (v.mv_size != sizeof(*d))
		return -EIO;
	memcpy(d, v.mv_data, sizeof(*d));
	return 0;
}

int layer_dirent_put(struct layer_txn *t, uint64_t dir, const char *name,
		     size_t len, const struct layer_dirent *d)
{
	struct key k;
	MDB_val kv, v = { sizeof(*d), (void *)d };
	int rc = dkey(&k, t->gen, dir, name, len);

	if (rc)
		return rc;
	kv = kval(&k);
	return lput(t, t->l->dirents, &kv, &v, 0);
}

int layer_dirent_del(struct layer_txn *t, uint64_t dir, const char *name,
		     size_t len)
{
	struct key k;
	MDB_val kv;
	int rc = dkey(&k, t->gen, dir, name, len);

	if (rc)
		return rc;
	kv = kval(&k);
	rc = ldel(t, t->l->dirents, &kv);
	return rc == -ENOENT ? 0 : rc;
}

int layer_dirent_each(struct layer_txn *t, uint64_t dir, layer_dirent_fn fn,
		      void *arg)
{
	struct key pre;
	MDB_cursor *c;
	MDB_val k, v;
	int rc, stop = 0;

	key2(&pre, t->gen, dir);
	k = kval(&pre);
	if ((rc = mdb_cursor_open(ltx(t), t->l->dirents, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size > 16 && memcmp(k.mv_data, pre.b, 16) == 0) {
		struct layer_dirent d;

		memcpy(&d, v.mv_data, sizeof(d));
		stop = fn(arg, (const char *)k.mv_data + 16, k.mv_size - 16,
			  &d);
		if (stop)
			break;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (stop)
		return stop;
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}

int layer_dirents_clear(struct layer_txn *t, uint64_t dir)
{
	struct key pre;

	key2(&pre, t->gen, dir);
	return del_prefix(t, t->l->dirents, &pre);
}

/* --- xattrs -------------------------------------------------------- */

static int xkey(struct key *k, uint64_t gen, uint64_t tino, const char *name)
{
	key2(k, gen, tino);
	return key_str(k, name, strlen(name));
}

int layer_xattr_get(struct layer_txn *t, uint64_t tino, const char *name,
		    const void **val, size_t *len)
{
	struct key k;
	MDB_val kv, v;
	int rc = xkey(&k, t->gen, tino, name);

	if (rc)
		return rc;
	kv = kval(&k);
	rc = lerr(mdb_get(ltx(t), t->l->xattrs, &kv, &v));
	if (rc)
		return rc;
	*val = v.mv_data;
	*len = v.mv_size;
	return 0;
}

int layer_xattr_put(struct layer_txn *t, uint64_t tino, const char *name,
		    const void *val, size_t len)
{
	struct key k;
	MDB_val kv, v = { len, (void *)val };
	int rc = xkey(&k, t->gen, tino, name);

	if (rc)
		return rc;
	kv = kval(&k);
	return lput(t, t->l->xattrs, &kv, &v, 0);
}

int layer_xattr_del(struct layer_txn *t, uint64_t tino, const char *name)
{
	struct key k;
	MDB_val kv;
	int rc = xkey(&k, t->gen, tino, name);

	if (rc)
		return rc;
	kv = kval(&k);
	return ldel(t, t->l->xattrs, &kv);
}

int layer_xattr_each(struct layer_txn *t, uint64_t tino, layer_xattr_fn fn,
		     void *arg)
{
	struct key pre;
	MDB_cursor *c;
	MDB_val k, v;
	char name[256];
	int rc, stop = 0;

	key2(&pre, t->gen, tino);
	k = kval(&pre);
	if ((rc = mdb_cursor_open(ltx(t), t->l->xattrs, &c)))
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size > 16 && memcmp(k.mv_data, pre.b, 16) == 0) {
		size_t n = k.mv_size - 16;

		memcpy(name, (const char *)k.mv_data + 16, n);
		name[n] = '\0';
		stop = fn(arg, name, v.mv_data, v.mv_size);
		if (stop)
			break;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	if (stop)
		return stop;
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}

/* --- garbage of old generations ------------------------------------ */

/* Delete up to *budget keys of db whose generation is below gen. */
static int gc_db(MDB_txn *txn, MDB_dbi dbi, uint64_t gen, unsigned *budget,
		 bool *more)
{
	MDB_cursor *c;
	MDB_val k, v;
	int rc = mdb_cursor_open(txn, dbi, &c);

	if (rc)
		return lerr(rc);
	rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
	while (rc == 0 && k.mv_size >= 8 && key_get_u64(&k, 0) < gen) {
		if (*budget == 0) {
			*more = true;
			break;
		}
		if ((rc = mdb_cursor_del(c, 0)))
			break;
		(*budget)--;
		rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}

int layer_gc_step(struct layer *l, unsigned max, bool *more)
{
	struct layer_txn *t;
	MDB_dbi dbis[5] = { l->inodes, l->dirents, l->chunks, l->xattrs,
			    l->undo };
	unsigned budget = max;
	int rc = layer_begin(l, true, &t);

	*more = false;
	if (rc)
		return rc;
	for (size_t i = 0; i < 5 && rc == 0; i++)
		rc = gc_db(ltx(t), dbis[i], t->gen, &budget, more);
	if (rc) {
		layer_txn_end(t);
		return rc;
	}
	return layer_commit(t);
}
