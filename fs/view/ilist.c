/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ilist.c - what the kernel must forget after a transaction verb: the
 * entries, attributes and listings a commit or rollback made stale,
 * collected from the layer while txlock is held (il_collect) and sent
 * after it is released (il_send: a notification may wait for a kernel
 * lock held by a process whose request waits for txlock). Folders'
 * listings stand for the names below them where that is enough (see
 * il_collapse), so a verb sends one notification a folder, not a name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "view.h"

static int u64_push(uint64_t **a, size_t *n, size_t *cap, uint64_t v)
{
	if (*n == *cap) {
		size_t c = *cap ? *cap * 2 : 256;
		uint64_t *m = realloc(*a, c * sizeof(*m));

		if (!m)
			return -ENOMEM;
		*a = m;
		*cap = c;
	}
	(*a)[(*n)++] = v;
	return 0;
}


static int il_ino(struct inval_list *l, uint64_t tino)
{
	return u64_push(&l->inos, &l->ni, &l->ci, tino);
}

static int il_ent(struct inval_list *l, uint64_t dir, const char *name,
		  size_t len, const struct layer_dirent *d)
{
	if (l->ne == l->ce) {
		size_t c = l->ce ? l->ce * 2 : 256;
		void *n = realloc(l->ents, c * sizeof(*l->ents));

		if (!n)
			return -ENOMEM;
		l->ents = n;
		l->ce = c;
	}
	l->ents[l->ne].dir = dir;
	l->ents[l->ne].child = d->tino;
	l->ents[l->ne].is_dir = d->tino && S_ISDIR(d->type);
	l->ents[l->ne].born = false;	/* il_from_dirent sets it */
	l->ents[l->ne].name = strndup(name, len);
	if (!l->ents[l->ne].name)
		return -ENOMEM;
	l->ne++;
	return 0;
}

/*
 * A whiteout's name needs no invalidation, whatever the verb makes of it
 * (rollback: the real object is back; commit: it is gone for real): the
 * kernel holds no valid entry for it, because lookups answer a whiteout
 * with no cache lifetime (ops.c, reply_negative) and the kernel expires
 * the dentry of a name it unlinks, removes or renames away itself. Only
 * its folder's cached listing and attributes change: one invalidation
 * per folder instead of one per name (a layer walk lists a folder's
 * entries together, so comparing with the last folder added dedups).
 */
static int il_whiteout(struct inval_list *l, uint64_t dir)
{
	if (l->nd && l->dirs[l->nd - 1] == dir)
		return 0;
	return u64_push(&l->dirs, &l->nd, &l->cd, dir);
}

struct il_ctx {
	struct txfs *fs;
	struct inval_list *l;
	struct layer_txn *t;
	uint64_t last_dir;	/* the walk lists a folder's entries */
	bool last_known;	/* together: one itab look-up per folder */
};

static int il_from_dirent(void *arg, uint64_t dir, const char *name,
			  size_t len, const struct layer_dirent *d)
{
	struct il_ctx *c = arg;

	struct layer_ino_view v;
	int rc;

	if (dir != c->last_dir || !c->last_dir) {
		c->last_dir = dir;
		c->last_known = itab_known(c->fs, dir);
	}
	if (!c->last_known)
		return 0;
	if (d->tino == 0)	/* a whiteout: see il_whiteout */
		return il_whiteout(c->l, dir);
	rc = il_ent(c->l, dir, name, len, d);
	if (rc == 0 && c->l->ents[c->l->ne - 1].is_dir &&
	    layer_inode_get(c->t, d->tino, &v) == 0)
		c->l->ents[c->l->ne - 1].born = !(v.rec.flags & LI_LOWER);
	return rc;
}

static int il_from_inode(void *arg, uint64_t tino,
			 const struct layer_ino_view *v)
{
	struct il_ctx *c = arg;
	bool pages = !(v->rec.flags & LI_LOWER) && itab_may_cache(c->fs, tino);

	/* an object born in the layer that nothing holds open goes away
	 * with its entries (their invalidation makes the kernel forget it);
	 * real objects, open ones and those whose pages the kernel may read
	 * without a request (a symlink's target: itab_kpages) could show
	 * stale attributes or pages */
	if (!(v->rec.flags & LI_LOWER) && !pages && itab_held(c->fs, tino) == 0)
		return 0;
	/* -o noopen: every file the kernel knows counts as held, but only
	 * those it may read pages of without a request need the wait: the
	 * others' reads and writes come here and answer ESTALE once the
	 * object is gone (noopen_begin) */
	if (!(v->rec.flags & LI_LOWER) && !pages && !S_ISDIR(v->rec.mode))
		return u64_push(&c->l->soft, &c->l->ns, &c->l->cs, tino);
	return itab_known(c->fs, tino) ? il_ino(c->l, tino) : 0;
}

static int cmp_tino(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* A node the kernel knows under an older id (aliased after an earlier
 * commit) caches the same object's pages, written through another node:
 * invalidate its pages too (il_send waits for these as well). */
static int il_add_aliases(struct txfs *fs, struct inval_list *l)
{
	uint64_t *more;
	size_t n;
	int rc;

	if (l->ni == 0)
		return 0;
	qsort(l->inos, l->ni, sizeof(*l->inos), cmp_tino);
	rc = itab_aliases_of(fs, l->inos, l->ni, &more, &n);
	for (size_t i = 0; rc == 0 && i < n; i++)
		inval_inode(fs, more[i], true);	/* pages too */
	free(more);
	return rc;
}

/*
 * Keep only the topmost changed names of the entries [from, ne) (one
 * state of the layer, so its folders form a tree). Invalidating a
 * folder's entry makes the kernel drop its whole cached subtree
 * (d_invalidate prunes every unused dentry below it), so the entries
 * inside a folder whose own entry is invalidated need not be sent one
 * by one: N notifications become one (10,000 staged files in a new
 * folder: one instead of 10,000). What pruning cannot reach is handled
 * here: a name whose object is open keeps its own entry (its dentry is
 * in use, so not pruned), and each such folder the kernel still holds
 * (a process's cwd) gets its listing and attributes dropped. Under
 * -o noopen the daemon cannot see opens: the names of files the kernel
 * may read pages of without a request (itab_kpages) keep theirs.
 */
static int il_collapse(struct txfs *fs, struct inval_list *l, size_t from)
{
	uint64_t *tops = NULL;
	size_t nt = 0, ct = 0;
	int rc = 0;

	for (size_t i = from; rc == 0 && i < l->ne; i++)
		if (l->ents[i].is_dir)
			rc = u64_push(&tops, &nt, &ct, l->ents[i].child);
	if (rc || nt == 0)
		goto out;
	qsort(tops, nt, sizeof(*tops), cmp_tino);
	for (size_t i = from; i < l->ne; i++) {
		struct il_ent *e = &l->ents[i];

		if (!bsearch(&e->dir, tops, nt, sizeof(*tops), cmp_tino))
			continue;
		/* an open child keeps its entry; under -o noopen every
		 * child the kernel knows counts as held (itab_held), and
		 * those it may read pages of stand for the open ones: the
		 * others' requests answer ESTALE through any stale name */
		if (e->child && (fs->opts.noopen ?
					 itab_may_cache(fs, e->child) :
					 itab_held(fs, e->child) > 0))
			continue;
		free(e->name);
		e->name = NULL;
	}
	for (size_t i = 0; rc == 0 && i < nt; i++)
		if ((i == 0 || tops[i] != tops[i - 1]) &&
		    itab_known(fs, tops[i]))
			rc = u64_push(&l->dirs, &l->nd, &l->cd, tops[i]);
out:
	free(tops);
	return rc;
}

/* Everything the layer of t touches that the kernel may have cached. */
int il_collect(struct txfs *fs, struct layer_txn *t, struct inval_list *l)
{
	struct il_ctx c = { fs, l, t, 0, false };
	size_t from = l->ne;
	int rc = layer_dirent_each_all(t, il_from_dirent, &c);

	if (rc == 0)
		rc = il_collapse(fs, l, from);
	if (rc == 0)
		rc = layer_inode_each(t, il_from_inode, &c);
	return rc ? rc : il_add_aliases(fs, l);
}

/*
 * Queue the list and wait until the kernel has it; frees it.
 *
 * lazy (a full rollback): the entry of a folder made in the layer is only
 * expired before the wait (O(1) for the kernel; every path walk through
 * it asks the daemon again, which answers ENOENT), and invalidated after
 * it: a folder invalidation prunes the whole cached subtree inside the
 * kernel before it returns (10,000 cached names: ~20-50 ms), which the
 * caller need not wait for. Only such folders: a real folder (renamed,
 * say) is found again under its old name, and the kernel would move its
 * cached dentry there with the stale names below it; a savepoint or a
 * commit keeps layer folders alive under maybe other names, likewise.
 */
void il_send(struct txfs *fs, struct inval_list *l, bool data, bool lazy)
{
	for (size_t i = 0; i < l->ne; i++) {
		struct il_ent *e = &l->ents[i];

		if (!e->name)
			continue;	/* collapsed */
		if (lazy && e->born)
			inval_entry_expire(fs, e->dir, e->name);
		else
			inval_entry(fs, e->dir, e->name);
	}
	for (size_t i = 0; i < l->ni; i++)
		inval_inode(fs, l->inos[i], data);
	for (size_t i = 0; i < l->nd; i++)
		inval_inode(fs, l->dirs[i], true);	/* listing too */
	/* a file a savepoint's rollback keeps, or a commit, must show its
	 * attributes at once; after a full rollback these are gone, and only
	 * an fstat through an old fd could still show their cached ones */
	for (size_t i = 0; !lazy && i < l->ns; i++)
		inval_inode(fs, l->soft[i], false);
	inval_flush(fs);
	/* after the answer, not waited for: drop the expired folders'
	 * cached subtrees (memory; and names looked up relative to a cwd
	 * inside one, which do not walk through the expired entry) */
	for (size_t i = 0; i < l->ne; i++) {
		struct il_ent *e = &l->ents[i];

		if (lazy && e->name && e->born)
			inval_entry(fs, e->dir, e->name);
		free(e->name);
	}
	for (size_t i = 0; lazy && i < l->ns; i++)
		inval_inode(fs, l->soft[i], false);
	free(l->ents);
	free(l->inos);
	free(l->soft);
	free(l->dirs);
	memset(l, 0, sizeof(*l));
}
