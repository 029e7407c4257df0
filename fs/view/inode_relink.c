/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inode_relink.c - the inode table after a commit, a rollback or a
 * savepoint changed what names point at: relinking nodes to their new
 * paths, the aliases a hard link makes (one object shown under several
 * node ids) and invalidating the others when one of them is written.
 * Split from inode.c, unchanged; the table's internals it uses are in
 * inode_int.h.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"
#include "inode_int.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct alias_list {
	uint64_t *tinos;
	char **paths;
	struct tnode **from;	/* the node aliased to tinos[i] */
	size_t n;
};

/* Re-check one node at its new real path (itab_lock held); the real
 * inode's own node is created after the walk (creating one may grow the
 * table under the walk). */
static void relink_one(struct txfs *fs, struct tnode *n, char *path,
		       struct alias_list *al)
{
	struct stat st;

	free(n->lower_path);
	n->lower_path = path;
	if (lower_stat(fs, path, &st) || (uint64_t)st.st_ino == n->tino)
		return;
	n->alias = (uint64_t)st.st_ino;
	atomic_store(&fs->has_alias, true);
	uint64_t *t = realloc(al->tinos, (al->n + 1) * sizeof(*t));
	char **p = t ? realloc(al->paths, (al->n + 1) * sizeof(*p)) : NULL;
	struct tnode **f = p ? realloc(al->from, (al->n + 1) * sizeof(*f)) :
			       NULL;

	if (t)
		al->tinos = t;
	if (p)
		al->paths = p;
	if (!f)
		return;
	al->from = f;
	al->tinos[al->n] = n->alias;
	al->from[al->n] = n;
	al->paths[al->n++] = strdup(path);
}

/* A real object the commit did not touch, moved with a folder that it
 * did move: gone from its old path, there at the new one. */
static bool moved_along(struct txfs *fs, const struct tnode *n,
			const char *path)
{
	struct stat st;

	if (layer_ino_reserved(n->tino) || !n->lower_path ||
	    !strcmp(n->lower_path, path))
		return false;
	if (lower_stat(fs, n->lower_path, &st) == 0 &&
	    (uint64_t)st.st_ino == n->tino)
		return false;
	return lower_stat(fs, path, &st) == 0 && (uint64_t)st.st_ino == n->tino;
}

/* The references a re-pointed alias gave up, dropped after the walk. */
struct drop_list {
	uint64_t *tinos;
	size_t n;
};

static void drop_add(struct drop_list *d, uint64_t tino)
{
	uint64_t *t = realloc(d->tinos, (d->n + 1) * sizeof(*t));

	if (!t)
		return;	/* the node stays a little longer: harmless */
	d->tinos = t;
	d->tinos[d->n++] = tino;
}

static void drop_all(struct txfs *fs, struct drop_list *d)
{
	for (size_t i = 0; i < d->n; i++) {
		struct tnode *n = itab_find_locked(fs, d->tinos[i]);

		if (n && n->aliased_by)
			n->aliased_by--;
		if (n && n->nlookup && --n->nlookup == 0 && n->opens == 0 &&
		    n->tino != (uint64_t)fs->root_ino)
			itab_unlink_node(fs, n);
	}
	free(d->tinos);
}

struct remap {
	uint64_t from, to;
};

static int cmp_remap(const void *a, const void *b)
{
	return cmp_u64(&((const struct remap *)a)->from,
		       &((const struct remap *)b)->from);
}

/* A folder this commit re-created as a real one (X -> Y in m) is the
 * parent of its children's names under Y from now on: X is only the
 * kernel's alias of Y, and goes away at its FORGET while a child (an open
 * file, say) may stay known; a name whose parent is gone has no path
 * (itab_path: ENOENT), and the policy refuses what it cannot place. */
static void remap_parents(struct tnode *n, const struct remap *m, size_t nm)
{
	struct remap key = { .from = n->parent };
	const struct remap *r;

	if (n->name && (r = bsearch(&key, m, nm, sizeof(*m), cmp_remap)))
		n->parent = r->to;
	for (struct tname *o = n->others; o; o = o->next) {
		key.from = o->parent;
		if ((r = bsearch(&key, m, nm, sizeof(*m), cmp_remap)))
			o->parent = r->to;
	}
}

/* Keep every alias one hop long (ino_to_tino follows one): a node X
 * aliased to Y, where this commit re-created Y as Z, now points to Z.
 * Without this, a file committed again and again (a writer and a loop of
 * commits) left the kernel's older node ids on a real inode that no
 * longer exists: ESTALE on the next open or write. */
static void retarget(struct txfs *fs, struct remap *m, size_t nm,
		     struct drop_list *d)
{
	qsort(m, nm, sizeof(*m), cmp_remap);
	for (size_t i = 0; i < fs->itab_size; i++) {
		for (struct tnode *n = fs->itab[i]; n; n = n->next) {
			struct remap key = { .from = n->alias }, *r;
			struct tnode *to;

			remap_parents(n, m, nm);
			if (!n->alias || !(r = bsearch(&key, m, nm, sizeof(*m),
						       cmp_remap)))
				continue;
			drop_add(d, n->alias);
			n->alias = r->to == n->tino ? 0 : r->to;
			to = n->alias ? itab_find_locked(fs, n->alias) : NULL;
			if (to) {
				to->nlookup++;	/* held by the alias */
				to->aliased_by++;
			}
			else
				n->alias = 0;
		}
	}
}

void itab_relink(struct txfs *fs, const uint64_t *changed, size_t nchanged)
{
	struct alias_list al = { 0 };
	struct drop_list d = { 0 };
	struct remap *m;
	struct tnode *real;
	size_t nm = 0;

	pthread_mutex_lock(&fs->itab_lock);
	for (size_t i = 0; i < fs->itab_size; i++) {
		for (struct tnode *n = fs->itab[i]; n; n = n->next) {
			char *path;

			if (n->tino == (uint64_t)fs->root_ino || n->alias)
				continue;
			path = itab_path_locked(fs, n->tino, NULL);
			if (!path)
				continue;
			if (bsearch(&n->tino, changed, nchanged,
				    sizeof(*changed), cmp_u64))
				relink_one(fs, n, path, &al);
			else if (moved_along(fs, n, path))
				relink_one(fs, n, path, &al);
			else
				free(path);
		}
	}
	m = calloc(al.n ? al.n : 1, sizeof(*m));
	for (size_t i = 0; i < al.n; i++) {
		if (al.paths[i] && itab_get_locked(fs, al.tinos[i], &real) == 0) {
			free(real->lower_path);
			real->lower_path = al.paths[i];
			itab_set_name(real, al.from[i]->parent, al.from[i]->name);
			real->nlookup++;	/* held by the alias */
			real->aliased_by++;
			/* the kernel goes on seeing the object under the
			 * node id it knows; a reused inode number that is
			 * still a node id for another object stays that */
			real->shown = al.from[i]->shown ? al.from[i]->shown :
							 al.from[i]->tino;
			al.from[i]->shown = 0;
			if (m)
				m[nm++] = (struct remap){ al.from[i]->tino,
							  al.tinos[i] };
		} else {
			free(al.paths[i]);
		}
	}
	if (m)
		retarget(fs, m, nm, &d);
	drop_all(fs, &d);
	pthread_mutex_unlock(&fs->itab_lock);
	free(m);
	free(al.tinos);
	free(al.paths);
	free(al.from);
}

int itab_aliases_of(struct txfs *fs, const uint64_t *sorted, size_t n,
		    uint64_t **out, size_t *nout)
{
	uint64_t *v = NULL;
	size_t k = 0, cap = 0;
	int rc = 0;

	*out = NULL;
	*nout = 0;
	if (!atomic_load(&fs->has_alias))
		return 0;
	pthread_mutex_lock(&fs->itab_lock);
	for (size_t i = 0; i < fs->itab_size && rc == 0; i++) {
		for (struct tnode *t = fs->itab[i]; t; t = t->next) {
			if (!t->alias || !bsearch(&t->alias, sorted, n,
						  sizeof(*sorted), cmp_u64))
				continue;
			if (k == cap) {
				uint64_t *g = realloc(v, (cap ? cap * 2 : 16) *
							     sizeof(*g));

				if (!g) {
					rc = -ENOMEM;
					break;
				}
				v = g;
				cap = cap ? cap * 2 : 16;
			}
			v[k++] = t->tino;
		}
	}
	pthread_mutex_unlock(&fs->itab_lock);
	if (rc) {
		free(v);
		return rc;
	}
	*out = v;
	*nout = k;
	return 0;
}

void itab_inval_others(struct txfs *fs, uint64_t node, uint64_t tino)
{
	struct tnode *t, *nn;
	uint64_t *v = NULL;
	size_t k = 0, others = 0;
	bool tino_known = false;

	if (!atomic_load(&fs->has_alias))
		return;
	pthread_mutex_lock(&fs->itab_lock);
	t = itab_find_locked(fs, tino);
	nn = node != tino ? itab_find_locked(fs, node) : NULL;
	if (t) {
		/* the aliases other than the writing node; tino itself only
		 * if the kernel holds references beyond the aliases' */
		others = t->aliased_by - (nn && nn->alias == tino &&
					  t->aliased_by ? 1 : 0);
		tino_known = node != tino && t->nlookup > t->aliased_by;
	}
	if (others)
		v = malloc(others * sizeof(*v));
	for (size_t i = 0; v && i < fs->itab_size && k < others; i++)
		for (struct tnode *n = fs->itab[i]; n && k < others;
		     n = n->next)
			if (n->alias == tino && n->tino != node)
				v[k++] = n->tino;
	pthread_mutex_unlock(&fs->itab_lock);
	for (size_t i = 0; i < k; i++)
		inval_inode(fs, v[i], true);
	if (tino_known)
		inval_inode(fs, tino, true);
	free(v);
}
