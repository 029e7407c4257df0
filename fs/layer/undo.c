/* SPDX-License-Identifier: Apache-2.0 */
/*
 * undo.c - savepoints: the undo log of the layer (schema below).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "layer_int.h"

/* --- the undo log of savepoints ------------------------------------ */

/*
 * undo   gen|level|db|key -> 1 byte (1: existed, 0: absent) + old value
 *
 * While savepoints are open (sp_level > 0), the first change of a key at
 * the current level saves the key's value as it was (MDB_NOOVERWRITE: the
 * first save wins). Rolling back to level L replays the records of levels
 * top..L (newest first), which restores every key to its value when
 * savepoint L was taken.
 */

static MDB_dbi db_of(const struct layer *l, unsigned id)
{
	switch (id) {
	case 1: return l->inodes;
	case 2: return l->dirents;
	case 3: return l->chunks;
	default: return l->xattrs;
	}
}

static unsigned id_of(const struct layer *l, MDB_dbi dbi)
{
	return dbi == l->inodes ? 1 : dbi == l->dirents ? 2 :
	       dbi == l->chunks ? 3 : dbi == l->xattrs ? 4 : 0;
}

static void ukey(struct key *k, uint64_t gen, uint32_t level, unsigned id,
		 const MDB_val *key)
{
	uint32_t be = htobe32(level);

	k->len = 0;
	key_u64(k, gen);
	memcpy(k->b + k->len, &be, 4);
	k->b[k->len + 4] = (unsigned char)id;
	k->len += 5;
	memcpy(k->b + k->len, key->mv_data, key->mv_size);
	k->len += key->mv_size;
}

/* Save key's current value before it changes, once per level. */
static int undo_save(struct layer_txn *t, MDB_dbi dbi, MDB_val *key)
{
	unsigned id = id_of(t->l, dbi);
	struct key uk;
	MDB_val uv, old, nv;
	unsigned char *buf;
	int rc;

	if (!t->sp_level || t->replaying || !id)
		return 0;
	ukey(&uk, t->gen, t->sp_level, id, key);
	uv = kval(&uk);
	if (mdb_get(ltx(t), t->l->undo, &uv, &nv) == 0)
		return 0;	/* already saved at this level */
	rc = mdb_get(ltx(t), dbi, key, &old);
	if (rc && rc != MDB_NOTFOUND)
		return lerr(rc);
	nv.mv_size = rc ? 1 : old.mv_size + 1;
	buf = malloc(nv.mv_size);
	if (!buf)
		return -ENOMEM;
	buf[0] = rc == 0;
	if (rc == 0)
		memcpy(buf + 1, old.mv_data, old.mv_size);
	nv.mv_data = buf;
	rc = lerr(mdb_put(ltx(t), t->l->undo, &uv, &nv, 0));
	free(buf);
	return rc;
}

int lput(struct layer_txn *t, MDB_dbi dbi, MDB_val *k, MDB_val *v,
	 unsigned flags)
{
	int rc = undo_save(t, dbi, k);

	return rc ? rc : lerr(mdb_put(ltx(t), dbi, k, v, flags));
}

int ldel(struct layer_txn *t, MDB_dbi dbi, MDB_val *k)
{
	int rc = undo_save(t, dbi, k);

	return rc ? rc : lerr(mdb_del(ltx(t), dbi, k, NULL));
}

/* Delete the cursor's current item (saving it first). */
int lcdel(struct layer_txn *t, MDB_cursor *c, MDB_dbi dbi, MDB_val *k)
{
	if (t->sp_level && !t->replaying) {
		struct key copy;
		MDB_val kc;
		int rc;

		if (k->mv_size > sizeof(copy.b))
			return -EIO;
		memcpy(copy.b, k->mv_data, k->mv_size);
		copy.len = k->mv_size;
		kc = kval(&copy);
		if ((rc = undo_save(t, dbi, &kc)))
			return rc;
	}
	return lerr(mdb_cursor_del(c, 0));
}

/* Apply (restore) every undo record of level `level`, or merge it down
 * into level `into` (0: drop it). */
static int undo_level(struct layer_txn *t, uint32_t level, bool restore,
		      uint32_t into)
{
	struct key pre;
	MDB_cursor *c;
	MDB_val k, v;
	int rc;

	pre.len = 0;
	key_u64(&pre, t->gen);
	{
		uint32_t be = htobe32(level);

		memcpy(pre.b + 8, &be, 4);
		pre.len = 12;
	}
	if ((rc = mdb_cursor_open(ltx(t), t->l->undo, &c)))
		return lerr(rc);
	k = kval(&pre);
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	while (rc == 0 && k.mv_size > 13 && memcmp(k.mv_data, pre.b, 12) == 0) {
		MDB_dbi dbi = db_of(t->l, ((unsigned char *)k.mv_data)[12]);
		MDB_val key = { k.mv_size - 13, (char *)k.mv_data + 13 };
		MDB_val val = { v.mv_size - 1, (char *)v.mv_data + 1 };
		bool existed = ((unsigned char *)v.mv_data)[0];
		struct key kcopy, down;

		memcpy(kcopy.b, k.mv_data, k.mv_size);
		kcopy.len = k.mv_size;
		if (restore) {
			/* copy the value out: the put may reuse its pages */
			void *tmp = existed ? malloc(val.mv_size ? val.mv_size : 1) : NULL;

			if (existed && !tmp) {
				rc = ENOMEM;
				break;
			}
			if (existed)
				memcpy(tmp, val.mv_data, val.mv_size);
			MDB_val kk = { key.mv_size, kcopy.b + 13 };
			MDB_val vv = { val.mv_size, tmp };

			rc = existed ? mdb_put(ltx(t), dbi, &kk, &vv, 0) :
				       mdb_del(ltx(t), dbi, &kk, NULL);
			free(tmp);
			if (rc == MDB_NOTFOUND)
				rc = 0;
		} else if (into > 0) {
			ukey(&down, t->gen, into,
			     ((unsigned char *)k.mv_data)[12], &key);
			MDB_val dk = kval(&down);

			rc = mdb_put(ltx(t), t->l->undo, &dk, &v,
				     MDB_NOOVERWRITE);
			if (rc == MDB_KEYEXIST)
				rc = 0;
		}
		if (rc)
			break;
		MDB_val kc = kval(&kcopy);

		if ((rc = mdb_cursor_get(c, &kc, &v, MDB_SET)) ||
		    (rc = mdb_cursor_del(c, 0)))
			break;
		k = kval(&pre);
		rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	}
	mdb_cursor_close(c);
	return rc == MDB_NOTFOUND || rc == 0 ? 0 : lerr(rc);
}

int layer_sp_push(struct layer_txn *t, uint32_t *level)
{
	int rc = layer_meta_put_u64(t, "sp_level", t->sp_level + 1);

	if (rc == 0)
		*level = ++t->sp_level;
	return rc;
}

int layer_sp_rollback(struct layer_txn *t, uint32_t level)
{
	int rc = 0;

	if (level == 0 || level > t->sp_level)
		return -ENOENT;
	t->replaying = true;
	for (uint32_t l = t->sp_level; l >= level && rc == 0; l--)
		rc = undo_level(t, l, true, 0);
	t->replaying = false;
	if (rc == 0 && (rc = layer_meta_put_u64(t, "sp_level", level)) == 0)
		t->sp_level = level;
	return rc;
}

int layer_sp_release(struct layer_txn *t, uint32_t level)
{
	int rc = 0;

	if (level == 0 || level > t->sp_level)
		return -ENOENT;
	/* oldest first: the first record merged for a key is the oldest
	 * value, and MDB_NOOVERWRITE keeps it */
	for (uint32_t l = level; l <= t->sp_level && rc == 0; l++)
		rc = undo_level(t, l, false, level - 1);
	if (rc == 0 && (rc = layer_meta_put_u64(t, "sp_level", level - 1)) == 0)
		t->sp_level = level - 1;
	return rc;
}

int layer_sp_clear(struct layer_txn *t)
{
	struct key pre;
	int rc;

	pre.len = 0;
	key_u64(&pre, t->gen);
	t->replaying = true;
	rc = del_prefix(t, t->l->undo, &pre);
	t->replaying = false;
	if (rc == 0 && (rc = layer_meta_put_u64(t, "sp_level", 0)) == 0)
		t->sp_level = 0;
	return rc;
}

int layer_sp_changed(struct layer_txn *t, uint32_t level, bool *changed)
{
	struct key pre;
	uint32_t be = htobe32(level);
	MDB_cursor *c;
	MDB_val k, v;
	int rc;

	*changed = false;
	pre.len = 0;
	key_u64(&pre, t->gen);
	memcpy(pre.b + 8, &be, 4);
	pre.len = 12;
	if ((rc = mdb_cursor_open(ltx(t), t->l->undo, &c)))
		return lerr(rc);
	k = kval(&pre);
	/* keys sort by gen then big-endian level: the first one at or after
	 * gen|level is of a level >= level exactly when it has our gen */
	rc = mdb_cursor_get(c, &k, &v, MDB_SET_RANGE);
	if (rc == 0)
		*changed = k.mv_size >= 8 && !memcmp(k.mv_data, pre.b, 8);
	mdb_cursor_close(c);
	return rc == 0 || rc == MDB_NOTFOUND ? 0 : lerr(rc);
}

uint64_t layer_txn_id(const struct layer_txn *t)
{
	return (uint64_t)mdb_txn_id(ltx(t));
}

uint32_t layer_sp_level(const struct layer_txn *t)
{
	return t->sp_level;
}

