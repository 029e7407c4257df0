/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commit.c - merging the layer into the real directory, crash-atomically.
 *
 *   1. plan (plan.c, its steps steps.c) and check for conflicts;
 *   2. prepare (stage.c): write every new file content into the staging
 *      folder (.txfs.staging/<txid>/d<tino> at the real root, the same
 *      filesystem, so a rename puts it in place) and fsync it and the
 *      folder; then try there what the file system would refuse for good
 *      after 3 (probe.c: xattrs, sizes, owners): a refusal now changes
 *      nothing;
 *   3. journal the steps and sync LMDB: THE COMMIT POINT (here);
 *   4. apply the steps (apply.c); each is idempotent, so a recovery
 *      replays them all from the first;
 *   5. finalize: one LMDB transaction drops the journal and starts a new,
 *      empty generation of the layer.
 *
 * A crash before 3 leaves the real directory untouched and the layer
 * intact (recovery removes the staging folder); a crash after 3 is rolled
 * forward by the next mount or `txfs recover`. Every real-directory access
 * goes through lower.c (openat2 beneath the root, no symlinks followed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "commit.h"

struct jhead {
	uint64_t txid;
	uint64_t gen;
	uint32_t nsteps;
	uint32_t state;
};

struct jstep {
	uint32_t kind;
	uint32_t alen;
	uint32_t blen;
	uint32_t pad;
	uint64_t tino;
};

/* --- the journal ---------------------------------------------------- */

static int journal_write(struct layer_txn *t, const struct plan *p,
			 uint64_t txid)
{
	struct jhead h = { .txid = txid, .gen = layer_txn_gen(t),
			   .nsteps = (uint32_t)p->nsteps, .state = 1 };
	int rc = 0;

	for (size_t i = 0; i < p->nsteps && rc == 0; i++) {
		const struct cstep *s = &p->steps[i];
		struct jstep j = { .kind = s->kind, .tino = s->tino,
				   .alen = (uint32_t)strlen(s->a),
				   .blen = (uint32_t)strlen(s->b) };
		size_t len = sizeof(j) + j.alen + 1 + j.blen + 1;
		char *buf = malloc(len);

		if (!buf)
			return -ENOMEM;
		memcpy(buf, &j, sizeof(j));
		memcpy(buf + sizeof(j), s->a, j.alen + 1);
		memcpy(buf + sizeof(j) + j.alen + 1, s->b, j.blen + 1);
		rc = layer_journal_put(t, (uint32_t)i, buf, len);
		free(buf);
	}
	return rc ? rc : layer_meta_put(t, "journal", &h, sizeof(h));
}

/* Load the journaled steps into p->steps. */
static int journal_load(struct layer_txn *t, struct plan *p, struct jhead *h)
{
	const void *v;
	size_t len;
	int rc = layer_meta_get(t, "journal", &v, &len);

	if (rc)
		return rc;
	if (len != sizeof(*h))
		return -EIO;
	memcpy(h, v, sizeof(*h));
	p->steps = calloc(h->nsteps ? h->nsteps : 1, sizeof(*p->steps));
	if (!p->steps)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nsteps; i++) {
		struct jstep j;
		const char *c;

		if ((rc = layer_journal_get(t, i, &v, &len)))
			return rc == -ENOENT ? -EIO : rc;
		memcpy(&j, v, sizeof(j));
		c = (const char *)v + sizeof(j);
		p->steps[i].kind = (enum cstep_kind)j.kind;
		p->steps[i].tino = j.tino;
		p->steps[i].a = strndup(c, j.alen);
		p->steps[i].b = strndup(c + j.alen + 1, j.blen);
		p->nsteps++;
		if (!p->steps[i].a || !p->steps[i].b)
			return -ENOMEM;
	}
	return 0;
}

/* Drop the journal and start a new, empty generation: the layer is
 * merged. */
static int finalize(struct txfs *fs, uint64_t txid)
{
	struct layer_txn *t;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	if ((rc = layer_journal_clear(t)) ||
	    (rc = layer_meta_del(t, "journal")) ||
	    (rc = layer_meta_del(t, "savepoints")) ||
	    (rc = layer_new_generation(t)) ||
	    (rc = layer_meta_put_u64(t, "txid", txid + 1))) {
		layer_txn_end(t);
		return rc;
	}
	if ((rc = layer_commit(t)))
		return rc;
	return layer_sync(fs->layer);
}

/* --- partial commits: forget what was committed, keep the rest ------ */

struct forget_ctx {
	const uint64_t *tinos;	/* sorted */
	size_t n;
	struct { uint64_t dir; char *name; } *dead;
	size_t nd, cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool forgotten(const struct forget_ctx *c, uint64_t tino)
{
	return bsearch(&tino, c->tinos, c->n, sizeof(*c->tinos), cmp_u64);
}

static int dead_add(struct forget_ctx *c, uint64_t dir, const char *name,
		    size_t len)
{
	if (c->nd == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *n = realloc(c->dead, cap * sizeof(*c->dead));

		if (!n)
			return -ENOMEM;
		c->dead = n;
		c->cap = cap;
	}
	c->dead[c->nd].dir = dir;
	c->dead[c->nd].name = strndup(name, len);
	return c->dead[c->nd++].name ? 0 : -ENOMEM;
}

/* Entries naming a forgotten object, or inside a forgotten folder. */
static int find_dead(void *arg, uint64_t dir, const char *name, size_t len,
		     const struct layer_dirent *d)
{
	struct forget_ctx *c = arg;

	if (forgotten(c, dir) || (d->tino && forgotten(c, d->tino)))
		return dead_add(c, dir, name, len);
	return 0;
}

/* The whiteout a forgotten real object left at its real name. */
static int dead_whiteout(struct txfs *fs, struct layer_txn *t,
			 struct forget_ctx *c, uint64_t tino)
{
	struct layer_ino_view v;
	struct layer_dirent d;
	struct stat st;
	const char *slash, *base;
	char *dir;
	int rc = layer_inode_get(t, tino, &v);

	if (rc || !(v.rec.flags & LI_LOWER) || !v.lower_path[0])
		return rc == -ENOENT ? 0 : rc;
	slash = strrchr(v.lower_path, '/');
	base = slash ? slash + 1 : v.lower_path;
	dir = slash ? strndup(v.lower_path, (size_t)(slash - v.lower_path)) :
		      strdup("");
	if (!dir)
		return -ENOMEM;
	rc = lower_stat(fs, dir, &st);
	free(dir);
	if (rc)
		return 0;	/* that folder moved too: its entries go */
	if (layer_dirent_get(t, (uint64_t)st.st_ino, base, strlen(base), &d) == 0 &&
	    d.tino == 0)
		return dead_add(c, (uint64_t)st.st_ino, base, strlen(base));
	return 0;
}

static int finalize_partial(struct txfs *fs, const struct plan *p)
{
	struct forget_ctx c = { 0 };
	uint64_t *tinos = malloc((p->nsteps + 1) * sizeof(*tinos));
	struct layer_txn *t = NULL;
	int rc;

	if (!tinos)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].kind == CS_FORGET)
			tinos[c.n++] = p->steps[i].tino;
	qsort(tinos, c.n, sizeof(*tinos), cmp_u64);
	c.tinos = tinos;
	if ((rc = layer_begin(fs->layer, true, &t)) ||
	    (rc = layer_dirent_each_all(t, find_dead, &c)))
		goto out;
	for (size_t i = 0; i < c.n && rc == 0; i++)
		rc = dead_whiteout(fs, t, &c, tinos[i]);
	for (size_t i = 0; i < c.nd && rc == 0; i++)
		rc = layer_dirent_del(t, c.dead[i].dir, c.dead[i].name,
				      strlen(c.dead[i].name));
	for (size_t i = 0; i < c.n && rc == 0; i++)
		rc = layer_inode_del(t, tinos[i]);
	if (rc || (rc = layer_sp_clear(t)) ||
	    (rc = layer_meta_del(t, "savepoints")) ||
	    (rc = layer_journal_clear(t)) ||
	    (rc = layer_meta_del(t, "journal")))
		goto out;
	rc = layer_commit(t);
	t = NULL;
	if (rc == 0)
		rc = layer_sync(fs->layer);
out:
	layer_txn_end(t);
	for (size_t i = 0; i < c.nd; i++)
		free(c.dead[i].name);
	free(c.dead);
	free(tinos);
	return rc;
}

static bool is_partial(const struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].kind == CS_FORGET)
			return true;
	return false;
}

/* --- the whole commit ----------------------------------------------- */

static bool has_work(const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (!p->objs[i].skip)
			return true;
	return false;
}

int commit_run(struct txfs *fs, struct plan *p, uint64_t txid)
{
	int rc;

	if (!has_work(p)) {	/* nothing staged: no staging, no journal */
		layer_txn_end(p->t);
		p->t = NULL;
		return p->partial ? 0 : finalize(fs, txid);
	}
	/* what the commit replaces, kept (history/): before the staging
	 * folder changes the root's times */
	history_capture(fs, p, txid);
	rc = stage_prepare(fs, p, txid);
	if (rc == 0)	/* what the real file system refuses for good */
		rc = stage_probe(fs, p, txid);
	if (rc == 0)
		rc = fault_point(fs, "commit");
	if (rc == 0)
		rc = journal_write(p->t, p, txid);
	if (rc) {
		stage_remove(fs, txid);
		history_discard(fs, txid);
		return rc;	/* before the commit point: nothing happened */
	}
	rc = layer_commit(p->t);
	p->t = NULL;
	p->journaled = rc == 0;	/* committed (only the sync may fail) */
	if (rc == 0)
		rc = layer_sync(fs->layer);	/* the commit point */
	if (rc) {
		if (!p->journaled) {
			stage_remove(fs, txid);
			history_discard(fs, txid);
		}
		return rc;
	}
	history_link(fs, txid);	/* past the commit point */
	if ((rc = fault_point(fs, "commit")) ||
	    (rc = commit_apply(fs, p, txid, "commit")) ||
	    (rc = fault_point(fs, "commit")))
		return rc == -EIO ? -EIO : rc;
	rc = is_partial(p) ? finalize_partial(fs, p) : finalize(fs, txid);
	if (rc == 0)
		history_finish(fs, txid);
	return rc;
}

/* No journal: a pending history record is a commit's that stopped before
 * its commit point (dropped) or that was finalized just before a crash
 * (finished): the layer's next txid tells which. */
static void settle_history(struct txfs *fs)
{
	struct layer_txn *t;
	uint64_t next = 0;

	if (layer_begin(fs->layer, false, &t))
		return;
	layer_meta_get_u64(t, "txid", &next);
	layer_txn_end(t);
	history_settle(fs, next);
}

bool txn_journal_pending(struct txfs *fs)
{
	struct layer_txn *t;
	const void *v;
	size_t len;
	bool pending;

	if (layer_begin(fs->layer, false, &t))
		return false;
	pending = layer_meta_get(t, "journal", &v, &len) == 0;
	layer_txn_end(t);
	return pending;
}

#define MISSED_SHOWN 10

char *commit_missed_text(const struct plan *p)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!p->nmissed || !(f = open_memstream(&buf, &len)))
		return NULL;
	for (size_t i = 0; i < p->nmissed && i < MISSED_SHOWN; i++)
		fprintf(f, "  %s\n", p->missed[i]);
	if (p->nmissed > MISSED_SHOWN)
		fprintf(f, "  ... and %zu more\n", p->nmissed - MISSED_SHOWN);
	fclose(f);
	return buf;
}

int txn_recover(struct txfs *fs, const char **what, char **missed)
{
	struct plan p = { .fs = fs };
	struct layer_txn *t;
	struct jhead h;
	int rc = layer_begin(fs->layer, false, &t);

	*what = NULL;
	if (missed)
		*missed = NULL;
	if (rc)
		return rc;
	rc = journal_load(t, &p, &h);
	layer_txn_end(t);
	if (rc == -ENOENT) {
		plan_free(&p);
		settle_history(fs);	/* before staging, or after finalize */
		if (lower_open(fs, TXFS_STAGING, O_PATH) == -ENOENT)
			return 0;
		*what = "an interrupted commit stopped before its commit "
			"point: the real directory was left as it was and the "
			"staged changes are kept";
		return stage_remove(fs, 0);
	}
	if (rc == 0)
		history_link(fs, h.txid);
	if (rc == 0 && (rc = commit_apply(fs, &p, h.txid, "recover")) == 0)
		rc = is_partial(&p) ? finalize_partial(fs, &p) :
				      finalize(fs, h.txid);
	if (rc == 0)
		history_finish(fs, h.txid);
	if (rc == 0 && p.nmissed)
		*what = "an interrupted commit passed its commit point: it was "
			"completed, except for these steps, not applied because "
			"the real directory changed underneath or its file "
			"system refused them for good (left as it has them)";
	else if (rc == 0)
		*what = "an interrupted commit passed its commit point: it was "
			"completed, the real directory now holds the "
			"committed changes";
	if (rc == 0 && missed)
		*missed = commit_missed_text(&p);
	plan_free(&p);
	return rc;
}
