/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inode.c - the in-memory inode table: node id -> struct tnode.
 *
 * A chained hash table keyed by tino, under fs->itab_lock. A node lives
 * while the kernel holds references to it (nlookup > 0) or a handle is
 * open on it; forget and release free it. A node holds no file
 * descriptor: the real object is reopened from its lower path on demand,
 * so a tree of any size never exhausts the open-files limit.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

#define ITAB_MIN 1024

static size_t slot(const struct txfs *fs, uint64_t tino)
{
	uint64_t h = tino * 0x9E3779B97F4A7C15ULL;

	return (size_t)(h >> 20) & (fs->itab_size - 1);
}

int itab_init(struct txfs *fs)
{
	fs->itab_size = ITAB_MIN;
	fs->itab_count = 0;
	fs->itab = calloc(fs->itab_size, sizeof(*fs->itab));
	if (!fs->itab)
		return -ENOMEM;
	pthread_mutex_init(&fs->itab_lock, NULL);
	/* the root: the kernel knows it from the start, and never forgets it */
	return itab_get(fs, (uint64_t)fs->root_ino, "", 0, NULL, 1);
}

static void node_free(struct tnode *n)
{
	struct tname *o, *next;

	for (o = n->others; o; o = next) {
		next = o->next;
		free(o->name);
		free(o);
	}
	free(n->orphan_path);
	if (n->pin)
		close(n->pin - 1);
	free(n->lower_path);
	free(n->name);
	free(n);
}

void itab_destroy(struct txfs *fs)
{
	for (size_t i = 0; i < fs->itab_size; i++) {
		struct tnode *n = fs->itab[i], *next;

		for (; n; n = next) {
			next = n->next;
			node_free(n);
		}
	}
	free(fs->itab);
	fs->itab = NULL;
	pthread_mutex_destroy(&fs->itab_lock);
}

static struct tnode *find(struct txfs *fs, uint64_t tino)
{
	struct tnode *n = fs->itab[slot(fs, tino)];

	while (n && n->tino != tino)
		n = n->next;
	return n;
}

/* Double the table when it is full; failure to grow is harmless. */
static void grow(struct txfs *fs)
{
	size_t old = fs->itab_size;
	struct tnode **o = fs->itab;
	struct tnode **t = calloc(old * 2, sizeof(*t));

	if (!t)
		return;
	fs->itab = t;
	fs->itab_size = old * 2;
	for (size_t i = 0; i < old; i++) {
		struct tnode *n = o[i], *next;

		for (; n; n = next) {
			size_t s = slot(fs, n->tino);

			next = n->next;
			n->next = t[s];
			t[s] = n;
		}
	}
	free(o);
}

/* Take (parent, name) out of n's other names; true if it was there. */
static bool drop_other(struct tnode *n, uint64_t parent, const char *name)
{
	for (struct tname **pp = &n->others; *pp; pp = &(*pp)->next) {
		struct tname *o = *pp;

		if (o->parent == parent && !strcmp(o->name, name)) {
			*pp = o->next;
			free(o->name);
			free(o);
			return true;
		}
	}
	return false;
}

/* (parent, name) is where the merged view showed n last: it becomes the
 * first name, the previous first one is kept among the others (a hard
 * link has several; a folder has one, and itab_move replaces it). */
static void set_name(struct tnode *n, uint64_t parent, const char *name)
{
	struct tname *o;
	char *c;

	if (!name || (n->name && n->parent == parent && !strcmp(n->name, name)))
		return;
	c = strdup(name);
	if (!c)
		return;
	drop_other(n, parent, name);
	if (n->name) {
		o = malloc(sizeof(*o));
		if (o) {
			o->parent = n->parent;
			o->name = n->name;
			o->next = n->others;
			n->others = o;
		} else {
			free(n->name);
		}
	}
	n->name = c;
	n->parent = parent;
}

/* name in parent no longer names n: the next known name takes over. */
static void unname(struct tnode *n, uint64_t parent, const char *name)
{
	struct tname *o = n->others;

	if (!name)
		return;
	if (!n->name || n->parent != parent || strcmp(n->name, name)) {
		drop_other(n, parent, name);
		return;
	}
	free(n->name);
	n->name = NULL;
	n->parent = 0;
	if (o) {
		n->name = o->name;
		n->parent = o->parent;
		n->others = o->next;
		free(o);
	}
}

static int get_locked(struct txfs *fs, uint64_t tino, struct tnode **out)
{
	struct tnode *n = find(fs, tino);
	size_t s;

	if (!n) {
		n = calloc(1, sizeof(*n));
		if (!n)
			return -ENOMEM;
		n->tino = tino;
		if (fs->itab_count >= fs->itab_size)
			grow(fs);
		s = slot(fs, tino);
		n->next = fs->itab[s];
		fs->itab[s] = n;
		fs->itab_count++;
	}
	*out = n;
	return 0;
}

int itab_get(struct txfs *fs, uint64_t tino, const char *lower_path,
	     uint64_t parent, const char *name, uint64_t refs)
{
	struct tnode *n;
	int rc;

	pthread_mutex_lock(&fs->itab_lock);
	rc = get_locked(fs, tino, &n);
	if (rc == 0) {
		if (lower_path && !n->lower_path)
			n->lower_path = strdup(lower_path);
		set_name(n, parent, name);
		n->nlookup += refs;
	}
	pthread_mutex_unlock(&fs->itab_lock);
	return rc;
}

void itab_move(struct txfs *fs, uint64_t tino, uint64_t oldparent,
	       const char *oldname, uint64_t parent, const char *name)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n) {
		unname(n, oldparent, oldname);
		set_name(n, parent, name);
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

void itab_unname(struct txfs *fs, uint64_t tino, uint64_t parent,
		 const char *name)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n)
		unname(n, parent, name);
	pthread_mutex_unlock(&fs->itab_lock);
}

/* The path of tino (+ name) through the first names only, itab_lock
 * held. NULL with errno ENAMETOOLONG past TXFS_PATH_DEPTH components or
 * TXFS_PATH_LEN bytes, ENOENT if a node on the way is unknown. */
static char *chain_locked(struct txfs *fs, uint64_t tino, const char *name)
{
	char buf[TXFS_PATH_LEN + 1];
	size_t pos = sizeof(buf) - 1;
	const char *parts[TXFS_PATH_DEPTH];
	size_t np = 0;
	struct tnode *n;

	buf[pos] = '\0';
	if (name)
		parts[np++] = name;
	while (tino != (uint64_t)fs->root_ino && np < TXFS_PATH_DEPTH) {
		n = find(fs, tino);
		if (!n || !n->name) {
			errno = ENOENT;
			return NULL;
		}
		parts[np++] = n->name;
		tino = n->parent;
	}
	if (tino != (uint64_t)fs->root_ino) {
		errno = ENAMETOOLONG;
		return NULL;
	}
	for (size_t i = 0; i < np; i++) {
		size_t l = strlen(parts[i]) + (i ? 1 : 0);

		if (l > pos) {
			errno = ENAMETOOLONG;
			return NULL;
		}
		pos -= l;
		memcpy(buf + pos, parts[i], strlen(parts[i]));
		if (i)
			buf[pos + l - 1] = '/';
	}
	return strdup(buf + pos);
}

/* The merged path of tino (+ name), itab_lock held: through its first
 * name, else through the first of its other names that still resolves
 * (the folder of a removed link may be gone). */
static char *path_locked(struct txfs *fs, uint64_t tino, const char *name)
{
	char *p = chain_locked(fs, tino, name), *dir;
	int err = errno;	/* why the first name failed */
	struct tnode *n;

	if (p || tino == (uint64_t)fs->root_ino || !(n = find(fs, tino)))
		return p;
	for (struct tname *o = n->others; o && !p; o = o->next) {
		dir = chain_locked(fs, o->parent, o->name);
		p = dir && name ? path_join(dir, name) : dir;
		if (p != dir)
			free(dir);
	}
	if (!p)
		errno = err;
	return p;
}

char *itab_path(struct txfs *fs, uint64_t tino, const char *name)
{
	char *p;

	pthread_mutex_lock(&fs->itab_lock);
	p = path_locked(fs, tino, name);
	pthread_mutex_unlock(&fs->itab_lock);
	return p;
}

/* Append p (taken; NULL or equal to skip: dropped) to *v of *k. */
static int push_path(char ***v, size_t *k, char *p, const char *skip)
{
	char **m;

	if (!p || (skip && !strcmp(p, skip))) {
		free(p);
		return 0;
	}
	m = realloc(*v, (*k + 1) * sizeof(*m));
	if (!m) {
		free(p);
		return -ENOMEM;
	}
	m[(*k)++] = p;
	*v = m;
	return 0;
}

int itab_other_paths(struct txfs *fs, uint64_t tino, const char *skip,
		     char ***out, int *names)
{
	struct tnode *n;
	size_t k = 0;
	int rc = 0;

	*out = NULL;
	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n && n->lower_path)	/* its origin in the real directory */
		rc = push_path(out, &k, strdup(n->lower_path), skip);
	*names = -(int)k;
	for (struct tname *o = n ? n->others : NULL; o && rc == 0; o = o->next)
		rc = push_path(out, &k, chain_locked(fs, o->parent, o->name), skip);
	pthread_mutex_unlock(&fs->itab_lock);
	*names += (int)k;
	return rc ? rc : (int)k;
}

char *itab_lower_path(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	char *p = NULL;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n && n->lower_path)
		p = strdup(n->lower_path);
	pthread_mutex_unlock(&fs->itab_lock);
	return p;
}

void itab_set_lower(struct txfs *fs, uint64_t tino, const char *lower_path)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n) {
		char *p = lower_path ? strdup(lower_path) : NULL;

		free(n->lower_path);
		n->lower_path = p;
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

static void unlink_node(struct txfs *fs, struct tnode *n)
{
	struct tnode **pp = &fs->itab[slot(fs, n->tino)];
	uint64_t alias = n->alias, n_tino = n->tino;
	struct tnode *target;

	while (*pp != n)
		pp = &(*pp)->next;
	*pp = n->next;
	fs->itab_count--;
	if (n->pin)
		fs->npins--;
	node_free(n);
	/* an alias holds a reference on its target (see itab_relink) */
	target = alias ? find(fs, alias) : NULL;
	if (target && target->aliased_by)
		target->aliased_by--;
	if (target && target->shown == n_tino)
		target->shown = 0;
	if (target && target->nlookup && --target->nlookup == 0 &&
	    target->opens == 0)
		unlink_node(fs, target);
}

bool itab_forget(struct txfs *fs, uint64_t tino, uint64_t count)
{
	struct tnode *n;
	bool orphan = false;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n) {
		n->nlookup = n->nlookup > count ? n->nlookup - count : 0;
		if (n->nlookup == 0 && n->opens == 0 &&
		    tino != fs->root_ino) {
			orphan = n->orphan;
			unlink_node(fs, n);
		}
	}
	pthread_mutex_unlock(&fs->itab_lock);
	return orphan;
}

void itab_open(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	if (get_locked(fs, tino, &n) == 0)
		n->opens++;
	pthread_mutex_unlock(&fs->itab_lock);
}

unsigned itab_release(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	unsigned left = 0;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n) {
		if (n->opens)
			n->opens--;
		left = n->opens;
		if (n->nlookup == 0 && n->opens == 0 &&
		    tino != fs->root_ino)
			unlink_node(fs, n);
	}
	pthread_mutex_unlock(&fs->itab_lock);
	return left;
}

unsigned itab_held(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	unsigned c = 0;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n)
		c = n->opens + (fs->opts.noopen && n->nlookup);
	pthread_mutex_unlock(&fs->itab_lock);
	return c;
}

void itab_orphan(struct txfs *fs, uint64_t tino)
{
	itab_orphan_at(fs, tino, 0, NULL);
}

void itab_orphan_at(struct txfs *fs, uint64_t tino, uint64_t parent,
		    const char *name)
{
	char *p = name ? itab_path(fs, parent, name) : itab_path(fs, tino, NULL);
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n) {
		n->orphan = true;
		if (p && !n->orphan_path) {
			n->orphan_path = p;
			p = NULL;
		}
	}
	pthread_mutex_unlock(&fs->itab_lock);
	free(p);
}

char *itab_orphan_path(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	char *p = NULL;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n && n->orphan_path)
		p = strdup(n->orphan_path);
	pthread_mutex_unlock(&fs->itab_lock);
	return p;
}

uint64_t ino_to_tino(struct txfs *fs, fuse_ino_t ino)
{
	struct tnode *n;
	uint64_t t = ino;

	if (ino == FUSE_ROOT_ID)
		return (uint64_t)fs->root_ino;
	if (!atomic_load(&fs->has_alias))
		return ino;
	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, ino);
	if (n && n->alias)
		t = n->alias;	/* X -> Y; Y itself is never aliased */
	pthread_mutex_unlock(&fs->itab_lock);
	return t;
}

/* Pins held at most: TXFS_MAX_PINS, and a quarter of the open-files
 * limit as it is now (prlimit may lower it on the running daemon): a
 * commit of any size leaves the descriptors the daemon needs. */
static unsigned max_pins(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 >= TXFS_MAX_PINS)
		return TXFS_MAX_PINS;
	return (unsigned)(rl.rlim_cur / 4);
}

void itab_pin(struct txfs *fs, uint64_t tino, const char *lower_path)
{
	unsigned cap = max_pins();
	struct tnode *n;
	int fd;

	if (!itab_known(fs, tino) || fs->npins >= cap)
		return;
	fd = lower_open(fs, lower_path, O_PATH | O_NOFOLLOW);
	if (fd < 0)
		return;
	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n && n->nlookup && !n->pin && fs->npins < cap) {
		n->pin = fd + 1;
		fs->npins++;
		fd = -1;
	}
	pthread_mutex_unlock(&fs->itab_lock);
	if (fd >= 0)
		close(fd);
}

void itab_kpages(struct txfs *fs, uint64_t node)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, node);
	if (n)
		n->kpages = true;
	pthread_mutex_unlock(&fs->itab_lock);
}

bool itab_may_cache(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	bool c;

	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	c = n && (n->opens || n->kpages);
	pthread_mutex_unlock(&fs->itab_lock);
	return c;
}

bool itab_known(struct txfs *fs, uint64_t tino)
{
	bool k;

	pthread_mutex_lock(&fs->itab_lock);
	k = find(fs, tino) != NULL;
	pthread_mutex_unlock(&fs->itab_lock);
	return k;
}

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
		struct tnode *n = find(fs, d->tinos[i]);

		if (n && n->aliased_by)
			n->aliased_by--;
		if (n && n->nlookup && --n->nlookup == 0 && n->opens == 0 &&
		    n->tino != (uint64_t)fs->root_ino)
			unlink_node(fs, n);
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
			to = n->alias ? find(fs, n->alias) : NULL;
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
			path = path_locked(fs, n->tino, NULL);
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
		if (al.paths[i] && get_locked(fs, al.tinos[i], &real) == 0) {
			free(real->lower_path);
			real->lower_path = al.paths[i];
			set_name(real, al.from[i]->parent, al.from[i]->name);
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
	t = find(fs, tino);
	nn = node != tino ? find(fs, node) : NULL;
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

uint64_t itab_shown(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	uint64_t id = tino;

	if (!atomic_load(&fs->has_alias))
		return tino;
	pthread_mutex_lock(&fs->itab_lock);
	n = find(fs, tino);
	if (n && n->shown)
		id = n->shown;
	pthread_mutex_unlock(&fs->itab_lock);
	return id;
}

fuse_ino_t tino_to_ino(const struct txfs *fs, uint64_t tino)
{
	return tino == (uint64_t)fs->root_ino ? FUSE_ROOT_ID : tino;
}

int itab_snapshot(struct txfs *fs, struct node_ref **out, size_t *n)
{
	struct node_ref *v;
	size_t k = 0;

	pthread_mutex_lock(&fs->itab_lock);
	v = calloc(fs->itab_count + 1, sizeof(*v));
	for (size_t i = 0; v && i < fs->itab_size; i++)
		for (struct tnode *t = fs->itab[i]; t && k <= fs->itab_count;
		     t = t->next) {
			v[k].tino = t->tino;
			v[k].parent = t->parent;
			v[k].name = t->name ? strdup(t->name) : NULL;
			k++;
		}
	pthread_mutex_unlock(&fs->itab_lock);
	if (!v)
		return -ENOMEM;
	*out = v;
	*n = k;
	return 0;
}
