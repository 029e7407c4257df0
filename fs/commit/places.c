/* SPDX-License-Identifier: Apache-2.0 */
/*
 * places.c - before the commit point (commit.c has the order of it all):
 * every place a step of the plan puts a name at, checked against the
 * real directory as it is now, so that the steps journaled at the commit
 * point can apply.
 *
 * A step that makes a name (MKDIR, ATTACH, PLACE, SYMLINK, MKNOD, and the
 * new name of a LINK) relies on two things the merged view cannot show
 * when the real directory changed underneath:
 *   - its folder: one the plan makes (MKDIR, or a folder ATTACHed), or a
 *     real folder reached beneath the root without a symlink (lower.c);
 *     not a folder removed, replaced by a file, or by a symlink to
 *     anywhere;
 *   - the name: free in the real directory, or taken by the object itself
 *     or by what a DETACH of the plan moves away first (that name, or a
 *     folder above it).
 * Otherwise the object is a conflict (what the plan puts below it is not
 * listed again): without --force the commit is refused (nothing
 * changed); with it, the object and whatever the plan
 * puts below it are dropped, left as the real directory has them, and
 * reported with the other forced conflicts.
 *
 * This runs under the transaction lock, after the plan. The real
 * directory can still change between this check and the steps (another
 * process, not through the mount): apply.c then records the steps that
 * cannot apply instead of stopping (the commit and a recovery end).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"

struct pathset {
	const char **v;
	size_t n;
};

/* A folder the plan makes at final path f: src is the real folder an
 * ATTACH moves there (with its real subtree), NULL for a MKDIR. */
struct made {
	const char *f, *src;
};

struct madeset {
	struct made *v;
	size_t n;
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static bool set_has(const struct pathset *s, const char *path)
{
	return s->n && bsearch(&path, s->v, s->n, sizeof(*s->v), cmp_str);
}

/* Is path, or a folder above it, in s? */
static bool set_has_at_or_above(const struct pathset *s, const char *path)
{
	char *copy = strdup(path), *slash;
	bool found = copy && set_has(s, copy);

	while (copy && !found && (slash = strrchr(copy, '/'))) {
		*slash = '\0';
		found = set_has(s, copy);
	}
	free(copy);
	return found;
}

static bool makes_name(enum cstep_kind k)
{
	return k == CS_MKDIR || k == CS_ATTACH || k == CS_PLACE ||
	       k == CS_SYMLINK || k == CS_MKNOD || k == CS_LINK;
}

/* The folders the plan makes, and the real paths it detaches. */
static int collect(struct plan *p, struct madeset *made, struct pathset *gone)
{
	made->v = calloc(p->nsteps + 1, sizeof(*made->v));
	gone->v = calloc(p->nsteps + 1, sizeof(*gone->v));
	made->n = gone->n = 0;
	if (!made->v || !gone->v)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct cstep *s = &p->steps[i];
		const struct cobj *o = s->tino ? plan_obj(p, s->tino) : NULL;

		if (s->kind == CS_DETACH)
			gone->v[gone->n++] = s->a;
		else if (s->kind == CS_MKDIR)
			made->v[made->n++] = (struct made){ s->a, NULL };
		else if (s->kind == CS_ATTACH && o && S_ISDIR(o->rec.mode))
			made->v[made->n++] = (struct made){ s->a, o->lower };
	}
	qsort(made->v, made->n, sizeof(*made->v), cmp_str);
	qsort(gone->v, gone->n, sizeof(*gone->v), cmp_str);
	return 0;
}

/*
 * Where folder f (a final path) is in the real directory now: below the
 * nearest folder the plan makes at or above f, the same place below that
 * folder's real source (an ATTACHed folder brings its real subtree).
 * *real is malloc'ed; NULL when f is, or is inside, a folder the plan
 * makes new (nothing real to check). 0 or -ENOMEM.
 */
static int real_of(const struct madeset *made, const char *f, char **real)
{
	char *copy = strdup(f), *slash;
	const struct made *m = NULL;

	*real = NULL;
	if (!copy)
		return -ENOMEM;
	for (;;) {
		const char *key = copy;

		m = made->n ? bsearch(&key, made->v, made->n, sizeof(*made->v),
				      cmp_str) : NULL;
		if (m || !(slash = strrchr(copy, '/')))
			break;
		*slash = '\0';
	}
	free(copy);
	if (!m)
		*real = strdup(f);
	else if (!m->src)
		return 0;
	else if (asprintf(real, "%s%s", m->src, f + strlen(m->f)) < 0)
		*real = NULL;
	return *real ? 0 : -ENOMEM;
}

/* Why the name path of step s cannot be made (*why), or NULL. */
static int place_problem(struct plan *p, const struct madeset *made,
			 const struct pathset *gone, const struct cstep *s,
			 const char *path, const char **why)
{
	static const char *no_folder = "its folder is gone, not a folder, "
				       "or a symlink in the real directory";
	const char *slash = strrchr(path, '/');
	char *dir = slash ? strndup(path, (size_t)(slash - path)) : strdup("");
	char *real = NULL, *name = NULL;
	struct stat st;
	int rc = dir ? real_of(made, dir, &real) : -ENOMEM;

	*why = NULL;
	if (rc || !real)
		goto out;	/* inside a folder the plan makes new */
	/* lstat through lower.c's folder cache (siblings cost one fstatat):
	 * no symlink on the way, and the folder itself not one */
	if (real[0] && (lower_stat(p->fs, real, &st) || !S_ISDIR(st.st_mode))) {
		*why = no_folder;	/* gone, a file, or a symlink */
		goto out;
	}
	if (!(name = path_join(real, slash ? slash + 1 : path))) {
		rc = -ENOMEM;
		goto out;
	}
	rc = lower_stat(p->fs, name, &st);
	if (rc == -ENOTDIR || rc == -ELOOP)
		*why = no_folder;
	else if (rc && rc != -ENOENT)
		*why = "its name cannot be checked in the real directory";
	else if (rc == 0 && (uint64_t)st.st_ino != s->tino &&
		 !set_has_at_or_above(gone, name))
		*why = "the name was taken in the real directory since the "
		       "transaction staged it";
	rc = 0;	/* free, the object itself, or what moves away first */
out:
	free(name);
	free(real);
	free(dir);
	return rc;
}

static bool at_or_below(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return !strncmp(path, dir, n) && (path[n] == '\0' || path[n] == '/');
}

/* --force: drop o, and every object the plan puts at or below its place
 * (a folder's subtree). */
static void drop(struct plan *p, struct cobj *o, const char *place)
{
	o->skip = true;
	if (!S_ISDIR(o->rec.mode))
		return;
	for (size_t i = 0; i < p->n; i++)
		for (size_t k = 0; k < p->objs[i].nfinals; k++)
			if (at_or_below(p->objs[i].finals[k], place))
				p->objs[i].skip = true;
}

static int restep(struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++) {
		free(p->steps[i].a);
		free(p->steps[i].b);
	}
	p->nsteps = 0;
	return plan_steps(p);
}

/* One pass; *dropped counts the objects dropped (force). */
static int check_pass(struct plan *p, bool force, size_t *dropped)
{
	struct madeset made;
	struct pathset gone;
	int rc = collect(p, &made, &gone);

	*dropped = 0;
	for (size_t i = 0; i < p->nsteps && rc == 0; i++) {
		const struct cstep *s = &p->steps[i];
		struct cobj *o = plan_obj(p, s->tino);
		const char *why;
		char *path;

		if (!makes_name(s->kind) || !o || o->skip)
			continue;
		if (!(path = strdup(s->kind == CS_LINK ? s->b : s->a))) {
			rc = -ENOMEM;
			break;
		}
		rc = place_problem(p, &made, &gone, s, path, &why);
		if (rc == 0 && why && force) {
			char *line = NULL;

			if (asprintf(&line, "%s: left as the real directory "
				     "has it", why) < 0)
				rc = -ENOMEM;
			else
				rc = plan_add_conflict(p, path, line);
			free(line);
			drop(p, o, path);
			++*dropped;
		} else if (rc == 0 && why) {
			rc = plan_add_conflict(p, path, why);
			drop(p, o, path);	/* refused: only its subtree's
						 * own conflicts are left out */
		}
		free(path);
	}
	free(made.v);
	free(gone.v);
	return rc;
}

int plan_check_places(struct plan *p, bool force)
{
	size_t dropped, before = p->nconflicts;
	int rc;

	do {
		if ((rc = check_pass(p, force, &dropped)))
			return rc;
		if (dropped && (rc = restep(p)))
			return rc;
	} while (dropped);
	return !force && p->nconflicts > before ? -EBUSY : 0;
}

int plan_build_commit(struct txfs *fs, struct layer_txn *t, struct plan *p,
		      bool force)
{
	int rc = plan_objects(fs, t, p, force, true), places;

	/* refused: the places are checked too, so that every conflict is
	 * listed at once */
	if (rc && rc != -EBUSY)
		return rc;
	if ((places = plan_steps(p)) == 0)
		places = plan_check_places(p, force);
	return rc ? rc : places;
}
