/* SPDX-License-Identifier: Apache-2.0 */
/*
 * readdir.c - the merged listing of a folder.
 *
 * A listing is the folder's layer entries that are not whiteouts, then the
 * real folder's entries that the layer neither shadows nor whites out. It
 * The control folder is not listed (so `git add -A`, tar and cp never pick
 * it up); it is reached by name. The listing
 * is built once per opendir (and again on a rewind to offset 0) into the
 * handle, so offsets are indexes into a snapshot: they stay valid however
 * the folder changes while it is being read, as POSIX allows.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"

struct names {
	char **v;
	size_t n, cap;
};

static int names_add(struct names *s, const char *name, size_t len)
{
	char *c;

	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 64;
		char **v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	c = strndup(name, len);
	if (!c)
		return -ENOMEM;
	s->v[s->n++] = c;
	return 0;
}

static void names_free(struct names *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The layer returns names in byte order, which is strcmp order. */
static bool names_has(const struct names *s, const char *name)
{
	if (!s->n)
		return false;
	return bsearch(&name, s->v, s->n, sizeof(*s->v), cmp_str) != NULL;
}

static int ents_add(struct dir_handle *dh, size_t *cap, const char *name,
		    size_t len, uint64_t tino, uint32_t type)
{
	struct dir_entry *e;

	if (dh->n == *cap) {
		size_t c = *cap ? *cap * 2 : 64;

		e = realloc(dh->ents, c * sizeof(*e));
		if (!e)
			return -ENOMEM;
		dh->ents = e;
		*cap = c;
	}
	e = &dh->ents[dh->n];
	e->name = strndup(name, len);
	if (!e->name)
		return -ENOMEM;
	e->tino = tino;
	e->type = type;
	dh->n++;
	return 0;
}

struct load_ctx {
	struct txfs *fs;
	uint64_t dir;
	bool all;		/* include names the policy hides */
	struct dir_handle *dh;
	size_t cap;
	struct names seen;	/* every name the layer holds */
};

static int load_layer_ent(void *arg, const char *name, size_t len,
			  const struct layer_dirent *d)
{
	struct load_ctx *c = arg;
	int rc = names_add(&c->seen, name, len);

	if (rc || d->tino == 0 ||
	    (!c->all && view_hidden(c->fs, c->dir, c->seen.v[c->seen.n - 1])))
		return rc;
	return ents_add(c->dh, &c->cap, name, len, d->tino, d->type);
}

static uint32_t dt_to_mode(unsigned char t)
{
	return (uint32_t)DTTOIF(t);
}

/* Call fn for every real entry of dir that the layer does not hide. */
typedef int (*lower_ent_fn)(void *arg, const char *name, uint64_t ino,
			    uint32_t type);

static int lower_each(struct txfs *fs, const struct tview *dir,
		      const struct names *seen, lower_ent_fn fn, void *arg)
{
	struct dirent *de;
	DIR *d;
	int fd, rc = 0;
	bool root = dir->tino == (uint64_t)fs->root_ino;

	if (!dir->lower_path)
		return 0;
	fd = lower_open(fs, dir->lower_path, O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR ? 0 : fd;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (errno = 0, de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (root && (!strcmp(de->d_name, fs->ctl_name) ||
			     !strcmp(de->d_name, TXFS_STAGING)))
			continue;
		if (seen && names_has(seen, de->d_name))
			continue;
		rc = fn(arg, de->d_name, de->d_ino, dt_to_mode(de->d_type));
	}
	if (rc == 0 && errno)
		rc = -errno;
	closedir(d);
	return rc;
}

static int load_lower_ent(void *arg, const char *name, uint64_t ino,
			  uint32_t type)
{
	struct load_ctx *c = arg;

	if (!c->all && view_hidden(c->fs, c->dir, name))
		return 0;
	return ents_add(c->dh, &c->cap, name, strlen(name), ino, type);
}

void dir_free(struct dir_handle *dh)
{
	for (size_t i = 0; i < dh->n; i++)
		free(dh->ents[i].name);
	free(dh->ents);
	dh->ents = NULL;
	dh->n = 0;
	dh->loaded = false;
}

/* The merged entries of folder v (no "." or ".."), in transaction t. */
static int dir_fill(struct txfs *fs, struct layer_txn *t, const struct tview *v,
		    struct load_ctx *c)
{
	int rc;

	if (v->in_layer && v->rec.nlink == 0)
		return 0;	/* removed: empty */
	if ((rc = layer_dirent_each(t, v->tino, load_layer_ent, c)))
		return rc;
	return lower_each(fs, v, &c->seen, load_lower_ent, c);
}

int dir_load(struct txfs *fs, uint64_t tino, struct dir_handle *dh)
{
	struct load_ctx c = { .fs = fs, .dir = tino, .dh = dh };
	struct layer_txn *t;
	struct tview v;
	int rc;

	dir_free(dh);
	if (ctl_is_ino(tino))
		return ctl_readdir(fs, dh);
	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	if ((rc = view_inode(fs, t, tino, &v)))
		goto out_txn;
	if ((rc = ents_add(dh, &c.cap, ".", 1, tino, S_IFDIR)) ||
	    (rc = ents_add(dh, &c.cap, "..", 2, (uint64_t)fs->root_ino,
			   S_IFDIR)))
		goto out;
	rc = dir_fill(fs, t, &v, &c);
out:
	tview_free(&v);
	names_free(&c.seen);
out_txn:
	layer_txn_end(t);
	if (rc)
		dir_free(dh);
	else
		dh->loaded = true;
	return rc;
}

/*
 * Call fn for every path below folder v (relative to v, "a", "a/b", ...),
 * hidden ones included, depth first, in transaction t; stops at the first
 * non-zero return.
 */
int dir_walk(struct txfs *fs, struct layer_txn *t, const struct tview *v,
	     const char *rel, dir_walk_fn fn, void *arg)
{
	struct dir_handle dh = { 0 };
	struct load_ctx c = { .fs = fs, .dir = v->tino, .all = true,
			      .dh = &dh };
	int rc = dir_fill(fs, t, v, &c);

	names_free(&c.seen);
	for (size_t i = 0; rc == 0 && i < dh.n; i++) {
		char *sub = path_join(rel, dh.ents[i].name);
		struct tview cv;

		if (!sub) {
			rc = -ENOMEM;
			break;
		}
		rc = fn(arg, sub);
		if (rc == 0 && S_ISDIR(dh.ents[i].type) &&
		    view_lookup(fs, t, v, dh.ents[i].name, &cv) == 0) {
			rc = dir_walk(fs, t, &cv, sub, fn, arg);
			tview_free(&cv);
		}
		free(sub);
	}
	dir_free(&dh);
	return rc;
}

static int seen_or_full(void *arg, const char *name, size_t len,
			const struct layer_dirent *d)
{
	struct names *seen = arg;

	if (d->tino)
		return -ENOTEMPTY;
	return names_add(seen, name, len);
}

static int found_one(void *arg, const char *name, uint64_t ino,
		     uint32_t type)
{
	(void)arg, (void)name, (void)ino, (void)type;
	return -ENOTEMPTY;
}

int dir_empty(struct txfs *fs, struct layer_txn *t, const struct tview *dir)
{
	struct names seen = { 0 };
	int rc;

	if (dir->in_layer && dir->rec.nlink == 0)
		return 0;
	rc = layer_dirent_each(t, dir->tino, seen_or_full, &seen);
	if (rc == 0)
		rc = lower_each(fs, dir, &seen, found_one, NULL);
	names_free(&seen);
	return rc;
}

int dir_visible_empty(struct txfs *fs, struct layer_txn *t,
		      const struct tview *dir)
{
	struct dir_handle dh = { 0 };
	struct load_ctx c = { .fs = fs, .dir = dir->tino, .dh = &dh };
	int rc = dir_fill(fs, t, dir, &c);

	names_free(&c.seen);
	if (rc == 0 && dh.n > 0)
		rc = -ENOTEMPTY;
	dir_free(&dh);
	return rc;
}

int dir_names(struct txfs *fs, struct layer_txn *t, const struct tview *v,
	      struct dir_handle *dh)
{
	struct load_ctx c = { .fs = fs, .dir = v->tino, .all = true,
			      .dh = dh };
	int rc = dir_fill(fs, t, v, &c);

	names_free(&c.seen);
	if (rc)
		dir_free(dh);
	return rc;
}
