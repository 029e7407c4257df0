/* SPDX-License-Identifier: Apache-2.0 */
/*
 * plan.c - what a commit has to do: the final place of every object of
 * the layer, and the ordered, idempotent steps that make the real
 * directory equal to the merged view.
 *
 * Objects: every inode record of the layer (changed, created, moved or
 * deleted objects; folders whose entries changed). Real objects the layer
 * never touched need nothing: they stay inside their real folder, and move
 * with it if that folder moves.
 *
 * Final paths: an object is placed explicitly by each layer entry that
 * names it (created, renamed to, linked), and naturally at its real path
 * when its real parent folder survives and the layer neither whites out
 * nor overrides its real name there. A folder has at most one place.
 *
 * Steps, in order (see struct cstep): DETACH moves every real object that
 * does not stay at its natural place into the staging folder (deepest
 * first, so no ancestor has moved yet); attach steps (MKDIR, ATTACH,
 * PLACE, COPY, SYMLINK, MKNOD) build the new places top-down; LINK adds
 * extra hard links; META sets modes, owners, times and xattrs (deepest
 * first); CLEAN removes the staging folder; SYNC flushes the filesystem.
 * New file contents are written to the staging folder and fsync'ed before
 * the plan is journaled (prepare, in commit.c), except for a real file
 * changed in part, which PATCH writes in place (patch.c; when, see
 * commit.h).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"

static int cobj_cmp(const void *a, const void *b)
{
	uint64_t x = ((const struct cobj *)a)->tino;
	uint64_t y = ((const struct cobj *)b)->tino;

	return x < y ? -1 : x > y;
}

struct cobj *plan_obj(struct plan *p, uint64_t tino)
{
	struct cobj key = { .tino = tino };

	if (!p->n)
		return NULL;
	return bsearch(&key, p->objs, p->n, sizeof(*p->objs), cobj_cmp);
}

static int collect_obj(void *arg, uint64_t tino, const struct layer_ino_view *v)
{
	struct plan *p = arg;
	struct cobj *o;

	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct cobj *n = realloc(p->objs, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->objs = n;
		p->cap = cap;
	}
	o = &p->objs[p->n];
	memset(o, 0, sizeof(*o));
	o->tino = tino;
	o->rec = v->rec;
	if ((v->rec.flags & LI_LOWER) && !(o->lower = strdup(v->lower_path)))
		return -ENOMEM;
	if (v->rec.link_len && !(o->link = strdup(v->link)))
		return -ENOMEM;
	p->n++;
	return 0;
}

static int add_place(struct cobj *o, uint64_t dir, const char *name,
		     size_t len)
{
	struct place *pl;

	if (o->nplaces == o->pcap) {
		size_t cap = o->pcap ? o->pcap * 2 : 2;

		pl = realloc(o->places, cap * sizeof(*pl));
		if (!pl)
			return -ENOMEM;
		o->places = pl;
		o->pcap = cap;
	}
	pl = &o->places[o->nplaces];
	pl->dir = dir;
	pl->name = strndup(name, len);
	if (!pl->name)
		return -ENOMEM;
	o->nplaces++;
	return 0;
}

static int collect_place(void *arg, uint64_t dir, const char *name,
			 size_t len, const struct layer_dirent *d)
{
	struct plan *p = arg;
	struct cobj *o;

	if (!d->tino) {
		if (p->nwh == p->whcap) {
			size_t cap = p->whcap ? p->whcap * 2 : 64;
			struct place *w = realloc(p->whiteouts,
						  cap * sizeof(*w));

			if (!w)
				return -ENOMEM;
			p->whiteouts = w;
			p->whcap = cap;
		}
		p->whiteouts[p->nwh].dir = dir;
		p->whiteouts[p->nwh].name = strndup(name, len);
		return p->whiteouts[p->nwh++].name ? 0 : -ENOMEM;
	}
	o = plan_obj(p, d->tino);
	/* an entry to an inode with no record: damage; under --salvage the
	 * record is among those that could not be read (lost.txt, which
	 * txfs diff prints), and the name is left out of the plan */
	if (!o)
		return p->fs->opts.salvage ? 0 : -EIO;
	return add_place(o, dir, name, len);
}

/* --- final paths ---------------------------------------------------- */

static char *join(const char *a, const char *b)
{
	return path_join(a, b);
}

static int memo_get(struct plan *p, uint64_t tino, char **path, bool *known)
{
	for (size_t i = 0; i < p->nmemo; i++)
		if (p->memo[i].tino == tino) {
			*path = p->memo[i].path;
			*known = true;
			return 0;
		}
	*known = false;
	return 0;
}

static int memo_put(struct plan *p, uint64_t tino, char *path)
{
	if (p->nmemo == p->mcap) {
		size_t cap = p->mcap ? p->mcap * 2 : 64;
		struct memo *m = realloc(p->memo, cap * sizeof(*m));

		if (!m)
			return -ENOMEM;
		p->memo = m;
		p->mcap = cap;
	}
	p->memo[p->nmemo].tino = tino;
	p->memo[p->nmemo].path = path;
	p->nmemo++;
	return 0;
}

static char *folder_path(struct plan *p, uint64_t tino, const char *lower);

/* The natural final path of the real object at lower path L, or NULL. */
static char *natural_path(struct plan *p, const char *L)
{
	const char *slash = strrchr(L, '/');
	char *parent = slash ? strndup(L, (size_t)(slash - L)) : strdup("");
	const char *base = slash ? slash + 1 : L;
	struct layer_dirent d;
	struct stat st;
	char *pp, *r = NULL;

	if (!parent)
		return NULL;
	if (lower_stat(p->fs, parent, &st) == 0 &&
	    layer_dirent_get(p->t, (uint64_t)st.st_ino, base, strlen(base),
			     &d) == -ENOENT) {
		pp = folder_path(p, (uint64_t)st.st_ino, parent);
		if (pp)
			r = join(pp, base);
	}
	free(parent);
	return r;
}

/* The final path of a folder (owned by the memo), or NULL if it is gone. */
static char *folder_path(struct plan *p, uint64_t tino, const char *lower)
{
	struct cobj *o;
	char *path = NULL;
	bool known;

	if (tino == (uint64_t)p->fs->root_ino)
		return "";
	memo_get(p, tino, &path, &known);
	if (known)
		return path;
	o = plan_obj(p, tino);
	if (o && o->rec.nlink == 0) {
		path = NULL;
	} else if (o && o->nplaces) {
		char *pp = folder_path(p, o->places[0].dir, NULL);

		path = pp ? join(pp, o->places[0].name) : NULL;
	} else if (o ? o->lower != NULL : lower != NULL) {
		path = natural_path(p, o ? o->lower : lower);
	}
	if (memo_put(p, tino, path)) {
		free(path);
		return NULL;
	}
	return path;
}

static int add_final(struct cobj *o, char *path)
{
	char **f;

	if (!path)
		return 0;
	f = realloc(o->finals, (o->nfinals + 1) * sizeof(*f));
	if (!f) {
		free(path);
		return -ENOMEM;
	}
	o->finals = f;
	o->finals[o->nfinals++] = path;
	return 0;
}

/* Fill o->finals and o->natural. */
static int place_obj(struct plan *p, struct cobj *o)
{
	int rc = 0;

	if (o->tino == (uint64_t)p->fs->root_ino) {
		o->natural = true;
		return add_final(o, strdup(""));
	}
	if (o->rec.nlink == 0)
		return 0;
	if (S_ISDIR(o->rec.mode)) {
		char *fp = folder_path(p, o->tino, o->lower);

		o->natural = fp && !o->nplaces;
		return fp ? add_final(o, strdup(fp)) : 0;
	}
	if (o->lower) {
		char *nat = natural_path(p, o->lower);

		o->natural = nat != NULL;
		if ((rc = add_final(o, nat)))
			return rc;
	}
	for (size_t i = 0; i < o->nplaces && rc == 0; i++) {
		char *pp = folder_path(p, o->places[i].dir, NULL);

		if (pp)
			rc = add_final(o, join(pp, o->places[i].name));
	}
	return rc;
}

/* --- conflicts ------------------------------------------------------ */

int plan_add_conflict(struct plan *p, const char *path, const char *why)
{
	char *line, **c, *q = audit_cquote(path[0] ? path : ".", ": ");
	int n = q ? asprintf(&line, "%s: %s", q, why) : -1;

	free(q);	/* a name with a newline stays on its line */
	if (n < 0)
		return -ENOMEM;
	c = realloc(p->conflicts, (p->nconflicts + 1) * sizeof(*c));
	if (!c) {
		free(line);
		return -ENOMEM;
	}
	p->conflicts = c;
	p->conflicts[p->nconflicts++] = line;
	return 0;
}

/* Was the real object changed by someone else since we first touched it? */
/* Is the real path of o strictly below that of folder d? */
static bool lower_below(const struct cobj *o, const struct cobj *d)
{
	size_t l = strlen(d->lower);

	return o->lower && !strncmp(o->lower, d->lower, l) && o->lower[l] == '/';
}

/* A real folder the transaction removes: every name in it must be an
 * object of the plan (removed or moved by the transaction too). *name
 * (malloc'd): the first that is not, else NULL. */
static int gone_dir_stranger(struct plan *p, const struct cobj *o, char **name)
{
	int fd = lower_open(p->fs, o->lower, O_RDONLY | O_DIRECTORY), rc = 0;
	struct dirent *e;
	DIR *d;

	*name = NULL;
	if (fd < 0)
		return fd == -ENOENT || fd == -ENOTDIR || fd == -ELOOP ? 0 : fd;
	if (!(d = fdopendir(fd))) {
		close(fd);
		return -errno;
	}
	while (!*name && (e = readdir(d))) {
		const struct cobj *c = plan_obj(p, (uint64_t)e->d_ino);

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if (c && c->lower && lower_below(c, o) &&
		    !strcmp(c->lower + strlen(o->lower) + 1, e->d_name))
			continue;	/* the transaction's own */
		if (!(*name = strdup(e->d_name)))
			rc = -ENOMEM;
	}
	closedir(d);
	return rc;
}

/* The folder is the conflict (--force then leaves it, with what is in
 * it, as the real directory has it). */
static int check_gone_dir(struct plan *p, const struct cobj *o, bool drop)
{
	char *name, *why;
	int rc = gone_dir_stranger(p, o, &name);

	if (rc || !name)
		return rc;
	if (asprintf(&why, "holds %s, made in the real directory since; the "
		     "transaction removes the folder%s", name,
		     drop ? ": left as it is there" : "") < 0)
		why = NULL;
	rc = why ? plan_add_conflict(p, o->lower, why) : -ENOMEM;
	free(why);
	free(name);
	return rc;
}

static int check_conflict(struct plan *p, struct cobj *o)
{
	struct stat st;
	int rc = lower_stat(p->fs, o->lower, &st);

	o->has_lst = rc == 0;
	o->lst = st;

	if (rc == -ENOENT || rc == -ENOTDIR || rc == -ELOOP)
		return plan_add_conflict(p, o->lower, "deleted or replaced in the "
				    "real directory");
	if (rc)
		return rc;
	if ((uint64_t)st.st_ino != o->tino ||
	    (st.st_mode & S_IFMT) != (o->rec.mode & S_IFMT))
		return plan_add_conflict(p, o->lower, "replaced in the real "
				    "directory");
	/* A folder conflicts only when it is gone or replaced: entries added
	 * beside ours are no conflict, and a commit's own staging folder
	 * changes the root's times - unless the transaction removes the
	 * folder: what was made in it underneath would go with it, never
	 * seen by anyone (nor kept by the history). Files: any change
	 * (ctime). */
	if (S_ISDIR(st.st_mode) && o->nfinals == 0)
		return check_gone_dir(p, o, false);
	if (!S_ISDIR(st.st_mode) && ts_ns(st.st_ctim) != o->rec.lower_ctime_ns)
		return plan_add_conflict(p, o->lower, "changed in the real "
				    "directory since the transaction "
				    "touched it");
	return 0;
}


/*
 * What was below a dropped folder cannot be placed either. Only the
 * folders dropped before this pass are compared with: one it drops lies
 * below one of those, and so does everything below it. O(objects x
 * dropped folders), not O(objects^2): with none dropped (the usual case)
 * a plan of 2,000 staged objects no longer compares 4 million pairs.
 */
static int drop_below_dropped(struct plan *p)
{
	size_t *dirs = NULL, n = 0;

	for (size_t k = 0; k < p->n; k++) {
		const struct cobj *d = &p->objs[k];

		if (!d->skip || !S_ISDIR(d->rec.mode) || !d->lower || !*d->lower)
			continue;
		size_t *v = realloc(dirs, (n + 1) * sizeof(*v));	/* rare */

		if (!v) {
			free(dirs);
			return -ENOMEM;
		}
		dirs = v;
		dirs[n++] = k;
	}
	for (size_t i = 0; i < p->n && n; i++)
		for (size_t j = 0; j < n && !p->objs[i].skip; j++)
			if (lower_below(&p->objs[i], &p->objs[dirs[j]]))
				p->objs[i].skip = true;
	free(dirs);
	return 0;
}

/*
 * --force commits what the mount shows. An object whose real base is gone
 * or replaced is not in the merged view any more (lookups find the real
 * directory's new state), so the commit leaves that name as the real
 * directory has it. A file changed underneath but still the same object
 * shows its staged version, which replaces it (the history keeps the real
 * one). Both are listed in p->conflicts for the report.
 */
static int drop_vanished(struct plan *p)
{
	int rc = 0;

	for (size_t i = 0; i < p->n && rc == 0; i++) {
		struct cobj *o = &p->objs[i];
		struct stat st;

		if (!o->lower || o->tino == (uint64_t)p->fs->root_ino)
			continue;
		if (lower_stat(p->fs, o->lower, &st) == 0 &&
		    (uint64_t)st.st_ino == o->tino &&
		    (st.st_mode & S_IFMT) == (o->rec.mode & S_IFMT)) {
			size_t before = p->nconflicts;

			o->has_lst = true;
			o->lst = st;

			/* changed underneath, still the same object: the
			 * mount shows the staged version, which is what
			 * --force commits; the real one it replaces goes to
			 * the history like any other (txfs restore) */
			if (!S_ISDIR(st.st_mode) &&
			    ts_ns(st.st_ctim) != o->rec.lower_ctime_ns) {
				rc = plan_add_conflict(p, o->lower, "changed in "
					"the real directory: replaced by the "
					"staged version (the real one is kept "
					"in the history)");
				continue;
			}
			if (!S_ISDIR(st.st_mode) || o->nfinals ||
			    (rc = check_gone_dir(p, o, true)) ||
			    p->nconflicts == before)
				continue;
			o->skip = true;	/* it holds what is not ours */
			continue;
		}
		o->skip = true;
		rc = plan_add_conflict(p, o->lower, "gone or replaced in the real "
				  "directory: left as it is there");
	}
	return rc ? rc : drop_below_dropped(p);
}

/* The objects and their final places (no steps); commit: the plan will
 * be committed, so its steps may patch real files in place. */
int plan_objects(struct txfs *fs, struct layer_txn *t, struct plan *p,
		 bool force, bool commit)
{
	int rc;

	memset(p, 0, sizeof(*p));
	p->fs = fs;
	p->t = t;
	p->commit = commit;
	if ((rc = layer_inode_each(t, collect_obj, p)) ||
	    (rc = layer_dirent_each_all(t, collect_place, p)))
		return rc;
	for (size_t i = 0; i < p->n && rc == 0; i++)
		rc = place_obj(p, &p->objs[i]);
	if (rc == 0 && !force)
		rc = plan_conflicts(p);
	else if (rc == 0)
		rc = drop_vanished(p);
	return rc;
}

int plan_build(struct txfs *fs, struct layer_txn *t, struct plan *p,
	       bool force)
{
	int rc = plan_objects(fs, t, p, force, false);

	return rc ? rc : plan_steps(p);
}

int plan_view(struct txfs *fs, struct layer_txn *t, struct plan *p)
{
	return plan_objects(fs, t, p, true, false);
}

int plan_conflicts(struct plan *p)
{
	int rc = 0;

	for (size_t i = 0; i < p->n && rc == 0; i++)
		if (p->objs[i].lower && !p->objs[i].skip)
			rc = check_conflict(p, &p->objs[i]);
	return rc ? rc : p->nconflicts ? -EBUSY : 0;
}

void plan_free(struct plan *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct cobj *o = &p->objs[i];

		free(o->lower);
		free(o->link);
		for (size_t k = 0; k < o->nplaces; k++)
			free(o->places[k].name);
		free(o->places);
		for (size_t k = 0; k < o->nfinals; k++)
			free(o->finals[k]);
		free(o->finals);
	}
	free(p->objs);
	for (size_t i = 0; i < p->nmemo; i++)
		free(p->memo[i].path);
	free(p->memo);
	for (size_t i = 0; i < p->nsteps; i++) {
		free(p->steps[i].a);
		free(p->steps[i].b);
	}
	free(p->steps);
	for (size_t i = 0; i < p->nconflicts; i++)
		free(p->conflicts[i]);
	free(p->conflicts);
	for (size_t i = 0; i < p->nwh; i++)
		free(p->whiteouts[i].name);
	free(p->whiteouts);
	for (size_t i = 0; i < p->nmissed; i++)
		free(p->missed[i]);
	free(p->missed);
	free(p->refused);
	memset(p, 0, sizeof(*p));
}

/* --- partial commit ------------------------------------------------- */

/* Is path at or below prefix (both canonical, "" the root)? */
static bool at_or_below(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (!path)
		return false;
	if (n == 0)
		return true;
	return !strncmp(path, prefix, n) && (path[n] == '\0' || path[n] == '/');
}

static bool obj_under(const struct cobj *o, const char *prefix)
{
	if (o->lower && at_or_below(o->lower, prefix))
		return true;
	for (size_t k = 0; k < o->nfinals; k++)
		if (at_or_below(o->finals[k], prefix))
			return true;
	return false;
}

/* Select every object at or below prefix; returns how many were new. */
static size_t select_under(struct plan *p, const char *prefix)
{
	size_t added = 0;

	for (size_t i = 0; i < p->n; i++)
		if (p->objs[i].skip && obj_under(&p->objs[i], prefix)) {
			p->objs[i].skip = false;
			added++;
		}
	return added;
}

/* A folder whose place changes (new, moved, deleted) takes its subtree. */
static bool moves(const struct cobj *o)
{
	return S_ISDIR(o->rec.mode) && o->tino != (uint64_t)0 &&
	       (!o->lower || !o->natural);
}

/* The folder objects above a selected object that must come along. */
static size_t select_needs(struct plan *p)
{
	size_t added = 0;

	for (size_t i = 0; i < p->n; i++) {
		struct cobj *o = &p->objs[i];

		if (o->skip || !moves(o))
			continue;
		if (o->lower)
			added += select_under(p, o->lower);
		for (size_t k = 0; k < o->nfinals; k++)
			added += select_under(p, o->finals[k]);
	}
	for (size_t i = 0; i < p->n; i++) {
		struct cobj *d = &p->objs[i];

		if (!d->skip || !moves(d) || !d->nfinals)
			continue;
		for (size_t j = 0; j < p->n; j++) {
			struct cobj *o = &p->objs[j];

			if (o->skip || o == d)
				continue;
			for (size_t k = 0; k < o->nfinals && d->skip; k++)
				if (at_or_below(o->finals[k], d->finals[0]))
					d->skip = false, added++;
		}
	}
	return added;
}

int plan_select(struct plan *p, const char *const *paths, size_t n)
{
	size_t chosen = 0;

	for (size_t i = 0; i < p->n; i++)
		p->objs[i].skip = true;
	for (size_t i = 0; i < n; i++)
		chosen += select_under(p, paths[i]);
	if (!chosen)
		return -ENOENT;
	while (select_needs(p))
		;
	for (size_t i = 0; i < p->n; i++)	/* the root is never dropped */
		if (p->objs[i].tino == (uint64_t)p->fs->root_ino)
			p->objs[i].skip = true;
	for (size_t i = 0; i < p->nsteps; i++) {
		free(p->steps[i].a);
		free(p->steps[i].b);
	}
	p->nsteps = 0;
	p->partial = true;
	return plan_steps(p);
}
