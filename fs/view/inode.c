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
#include "inode_int.h"

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

struct tnode *itab_find_locked(struct txfs *fs, uint64_t tino)
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
void itab_set_name(struct tnode *n, uint64_t parent, const char *name)
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

int itab_get_locked(struct txfs *fs, uint64_t tino, struct tnode **out)
{
	struct tnode *n = itab_find_locked(fs, tino);
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
	rc = itab_get_locked(fs, tino, &n);
	if (rc == 0) {
		if (lower_path && !n->lower_path)
			n->lower_path = strdup(lower_path);
		itab_set_name(n, parent, name);
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
	n = itab_find_locked(fs, tino);
	if (n) {
		unname(n, oldparent, oldname);
		itab_set_name(n, parent, name);
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

void itab_unname(struct txfs *fs, uint64_t tino, uint64_t parent,
		 const char *name)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
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
		n = itab_find_locked(fs, tino);
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
char *itab_path_locked(struct txfs *fs, uint64_t tino, const char *name)
{
	char *p = chain_locked(fs, tino, name), *dir;
	int err = errno;	/* why the first name failed */
	struct tnode *n;

	if (p || tino == (uint64_t)fs->root_ino || !(n = itab_find_locked(fs, tino)))
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
	p = itab_path_locked(fs, tino, name);
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
	n = itab_find_locked(fs, tino);
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
	n = itab_find_locked(fs, tino);
	if (n && n->lower_path)
		p = strdup(n->lower_path);
	pthread_mutex_unlock(&fs->itab_lock);
	return p;
}

void itab_set_lower(struct txfs *fs, uint64_t tino, const char *lower_path)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
	if (n) {
		char *p = lower_path ? strdup(lower_path) : NULL;

		free(n->lower_path);
		n->lower_path = p;
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

void itab_unlink_node(struct txfs *fs, struct tnode *n)
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
	if (n->wmap)
		fs->nwmap--;
	if (n->drop)
		atomic_fetch_sub(&fs->ndrop, 1);
	node_free(n);
	/* an alias holds a reference on its target (see itab_relink) */
	target = alias ? itab_find_locked(fs, alias) : NULL;
	if (target && target->aliased_by)
		target->aliased_by--;
	if (target && target->shown == n_tino)
		target->shown = 0;
	if (target && target->nlookup && --target->nlookup == 0 &&
	    target->opens == 0)
		itab_unlink_node(fs, target);
}

uint64_t itab_forget(struct txfs *fs, uint64_t tino, uint64_t count)
{
	struct tnode *n, *target;
	uint64_t orphan = 0;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
	if (n) {
		n->nlookup = n->nlookup > count ? n->nlookup - count : 0;
		if (n->nlookup == 0 && n->opens == 0 &&
		    tino != fs->root_ino) {
			/* an alias (after a rollback or commit) may hold the
			 * last reference on its target, which goes with it
			 * (itab_unlink_node): the orphan may be that one */
			target = n->alias ? itab_find_locked(fs, n->alias) :
					    NULL;
			if (n->orphan)
				orphan = n->tino;
			else if (target && target->orphan &&
				 target->nlookup == 1 && target->opens == 0)
				orphan = target->tino;
			itab_unlink_node(fs, n);
		}
	}
	pthread_mutex_unlock(&fs->itab_lock);
	return orphan;
}

void itab_open(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	if (itab_get_locked(fs, tino, &n) == 0)
		n->opens++;
	pthread_mutex_unlock(&fs->itab_lock);
}

unsigned itab_release(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	unsigned left = 0;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
	if (n) {
		if (n->opens)
			n->opens--;
		left = n->opens;
		if (n->nlookup == 0 && n->opens == 0 &&
		    tino != fs->root_ino)
			itab_unlink_node(fs, n);
	}
	pthread_mutex_unlock(&fs->itab_lock);
	return left;
}

unsigned itab_held(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	unsigned c = 0;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
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
	n = itab_find_locked(fs, tino);
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
	n = itab_find_locked(fs, tino);
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
	n = itab_find_locked(fs, ino);
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
	n = itab_find_locked(fs, tino);
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
	n = itab_find_locked(fs, node);
	if (n)
		n->kpages = true;
	pthread_mutex_unlock(&fs->itab_lock);
}

void itab_wmap(struct txfs *fs, uint64_t node)
{
	struct tnode *n;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, node);
	if (n && !n->wmap) {
		n->wmap = true;
		fs->nwmap++;
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

void itab_drop_set(struct txfs *fs, const uint64_t *ids, size_t n, bool on)
{
	pthread_mutex_lock(&fs->itab_lock);
	for (size_t i = 0; i < n; i++) {
		struct tnode *x = itab_find_locked(fs, ids[i]);

		if (x && x->drop != on) {
			x->drop = on;
			if (on)
				atomic_fetch_add(&fs->ndrop, 1);
			else
				atomic_fetch_sub(&fs->ndrop, 1);
		}
	}
	pthread_mutex_unlock(&fs->itab_lock);
}

bool itab_drop(struct txfs *fs, uint64_t node)
{
	struct tnode *x;
	bool d;

	if (atomic_load(&fs->ndrop) == 0)
		return false;
	pthread_mutex_lock(&fs->itab_lock);
	x = itab_find_locked(fs, node);
	d = x && x->drop;
	pthread_mutex_unlock(&fs->itab_lock);
	return d;
}

int itab_wmapped(struct txfs *fs, bool real_only, uint64_t **ids, size_t *n)
{
	size_t got = 0;
	int rc = 0;

	*ids = NULL;
	pthread_mutex_lock(&fs->itab_lock);
	if (fs->nwmap && !(*ids = malloc(fs->nwmap * sizeof(**ids))))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && got < fs->nwmap && i < fs->itab_size; i++)
		for (struct tnode *x = fs->itab[i]; x && got < fs->nwmap;
		     x = x->next)
			if (x->wmap && (!real_only || x->lower_path ||
					x->alias))
				(*ids)[got++] = x->tino;
	pthread_mutex_unlock(&fs->itab_lock);
	*n = got;
	return rc;
}

bool itab_may_cache(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	bool c;

	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
	c = n && (n->opens || n->kpages);
	pthread_mutex_unlock(&fs->itab_lock);
	return c;
}

bool itab_known(struct txfs *fs, uint64_t tino)
{
	bool k;

	pthread_mutex_lock(&fs->itab_lock);
	k = itab_find_locked(fs, tino) != NULL;
	pthread_mutex_unlock(&fs->itab_lock);
	return k;
}

uint64_t itab_shown(struct txfs *fs, uint64_t tino)
{
	struct tnode *n;
	uint64_t id = tino;

	if (!atomic_load(&fs->has_alias))
		return tino;
	pthread_mutex_lock(&fs->itab_lock);
	n = itab_find_locked(fs, tino);
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
