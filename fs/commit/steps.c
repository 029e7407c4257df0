/* SPDX-License-Identifier: Apache-2.0 */
/*
 * steps.c - turning a plan's objects (their final paths, plan.c) into the
 * ordered, journaled steps commit.c applies (commit.h lists the kinds):
 * detach what moves or goes, make folders, attach, place or copy new
 * contents, patch in place, link, set metadata, clean the staging folder
 * and sync. The order lets every step be idempotent and a crash replay
 * them all from the first.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"

static int add_step(struct plan *p, enum cstep_kind kind, uint64_t tino,
		    const char *a, const char *b, int depth)
{
	struct cstep *s;

	if (p->nsteps == p->scap) {
		size_t cap = p->scap ? p->scap * 2 : 256;

		s = realloc(p->steps, cap * sizeof(*s));
		if (!s)
			return -ENOMEM;
		p->steps = s;
		p->scap = cap;
	}
	s = &p->steps[p->nsteps];
	s->kind = kind;
	s->tino = tino;
	s->depth = depth;
	s->a = strdup(a ? a : "");
	s->b = strdup(b ? b : "");
	if (!s->a || !s->b)
		return -ENOMEM;
	p->nsteps++;
	return 0;
}

static int depth_of(const char *path)
{
	int d = path[0] ? 1 : 0;

	for (; *path; path++)
		d += *path == '/';
	return d;
}

/* A folder without a layer record keeps the times the merged view shows
 * (its real ones) when a file in it is replaced by a rename. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? strndup(path, (size_t)(slash - path)) : strdup("");
}

static int keep_folder_times(struct plan *p, const char *lower,
			     const char *final)
{
	char *dir = dir_of(lower), *fdir = dir_of(final);
	char times[64];
	struct stat st;
	int rc = dir && fdir ? 0 : -ENOMEM;

	if (rc == 0 && lower_stat(p->fs, dir, &st) == 0 &&
	    !plan_obj(p, (uint64_t)st.st_ino)) {
		snprintf(times, sizeof(times), "%lld %lld",
			 (long long)ts_ns(st.st_atim),
			 (long long)ts_ns(st.st_mtim));
		rc = add_step(p, CS_META, 0, fdir, times, depth_of(fdir));
	}
	free(dir);
	free(fdir);
	return rc;
}

static int keep_root_times(struct plan *p)
{
	char times[64];
	struct stat st;

	if (lower_stat(p->fs, "", &st))
		return 0;
	snprintf(times, sizeof(times), "%lld %lld",
		 (long long)ts_ns(st.st_atim), (long long)ts_ns(st.st_mtim));
	return add_step(p, CS_META, 0, "", times, 0);
}

static int attach_steps(struct plan *p, struct cobj *o)
{
	const char *f0 = o->finals[0];
	int d = depth_of(f0);
	mode_t fmt = o->rec.mode & S_IFMT;
	int rc;

	if (o->tino == (uint64_t)p->fs->root_ino)
		return 0;
	if (p->commit && plan_needs_data(o) && patch_fits(p, o)) {
		o->patch = true;	/* no staged copy, no detach */
		return add_step(p, CS_PATCH, o->tino, f0, NULL, d);
	}
	if (plan_needs_data(o)) {
		bool inplace = o->natural && o->rec.nlink > 1;

		/* the old content goes to staging first: its inode stays
		 * alive (and its number unused) until the commit ends */
		if (!inplace && o->lower && o->natural &&
		    ((rc = add_step(p, CS_DETACH, o->tino, o->lower, NULL,
				    depth_of(o->lower))) ||
		     (rc = keep_folder_times(p, o->lower, f0))))
			return rc;
		return add_step(p, inplace ? CS_COPY : CS_PLACE, o->tino, f0,
				NULL, d);
	}
	if (o->lower && o->natural)
		return 0;	/* stays where it is */
	if (o->lower)
		return add_step(p, CS_ATTACH, o->tino, f0, NULL, d);
	if (fmt == S_IFDIR)
		return add_step(p, CS_MKDIR, o->tino, f0, NULL, d);
	if (fmt == S_IFLNK)
		return add_step(p, CS_SYMLINK, o->tino, f0, o->link, d);
	return add_step(p, CS_MKNOD, o->tino, f0, NULL, d);
}

/* The place of a kind in the order of steps: PATCH runs with COPY,
 * FSYNC where SYNC would. */
static int kind_rank(enum cstep_kind k)
{
	if (k == CS_PATCH)
		return (int)CS_COPY;
	return k == CS_FSYNC ? (int)CS_SYNC : (int)k;
}

/* Paths as a last key (a CLEAN step has none): the order of a plan never
 * depends on inode numbers, so a commit's fault points are numbered the
 * same way every time (the crash loops count on it). */
static int cmp_path(const struct cstep *x, const struct cstep *y)
{
	return strcmp(x->a ? x->a : "", y->a ? y->a : "");
}

static int cmp_step(const void *a, const void *b)
{
	const struct cstep *x = a, *y = b;

	if (kind_rank(x->kind) != kind_rank(y->kind))
		return kind_rank(x->kind) - kind_rank(y->kind);
	/* detach and meta: deepest first (a folder's names together);
	 * attach kinds: shallowest first */
	if (x->kind == CS_META || x->kind == CS_DETACH)
		return x->depth != y->depth ? y->depth - x->depth :
					      cmp_path(x, y);
	return x->depth != y->depth ? x->depth - y->depth : cmp_path(x, y);
}

/* Attach kinds share one order: shallowest first, whatever the kind; at
 * one depth, by kind, then by path (as cmp_step left them). */
static int cmp_attach(const void *a, const void *b)
{
	const struct cstep *x = a, *y = b;

	if (x->depth != y->depth)
		return x->depth - y->depth;
	if (kind_rank(x->kind) != kind_rank(y->kind))
		return kind_rank(x->kind) - kind_rank(y->kind);
	return cmp_path(x, y);
}

static bool is_attach(enum cstep_kind k)
{
	return kind_rank(k) >= CS_MKDIR && kind_rank(k) <= CS_MKNOD;
}

/*
 * A whiteout whose real name no DETACH removes (another real name of a
 * hard-linked file that stays elsewhere): unlink that name.
 */
static int unlink_step(struct plan *p, const struct place *w)
{
	struct cobj *d = plan_obj(p, w->dir), *o;
	struct stat st;
	char *real;
	int rc = 0;

	if (!d || !d->lower || !d->nfinals || d->skip)
		return 0;	/* folder gone or not committed: nothing */
	real = path_join(d->lower, w->name);
	if (!real)
		return -ENOMEM;
	if (lower_stat(p->fs, real, &st) == 0 && !S_ISDIR(st.st_mode)) {
		o = plan_obj(p, (uint64_t)st.st_ino);
		if (!o || !o->lower || strcmp(o->lower, real) || o->natural)
			rc = add_step(p, CS_DETACH, 0, real, NULL,
				      depth_of(real));
	}
	free(real);
	return rc;
}

#define FSYNC_MAX 64	/* more files than this: one syncfs is cheaper */

/* Does the commit only patch files in place and set metadata of regular
 * files and folders (no name created, moved or removed)? */
static bool only_patches(struct plan *p)
{
	size_t npatch = 0, nmeta = 0;

	for (size_t i = 0; i < p->nsteps; i++) {
		const struct cstep *s = &p->steps[i];
		const struct cobj *o = s->tino ? plan_obj(p, s->tino) : NULL;

		if (s->kind == CS_PATCH)
			npatch++;
		else if (s->kind == CS_META && (!s->tino || (o &&
			 (S_ISREG(o->rec.mode) || S_ISDIR(o->rec.mode)))))
			nmeta++;
		else if (s->kind != CS_FORGET)
			return false;
	}
	return npatch && nmeta <= FSYNC_MAX;
}

/* The durability steps at the end: an fsync of every file and folder a
 * patch-only commit touched, else one syncfs. */
static int sync_steps(struct plan *p)
{
	size_t n = p->nsteps;
	int rc = 0;

	if (!only_patches(p))
		return add_step(p, CS_SYNC, 0, NULL, NULL, 0);
	for (size_t i = 0; i < n && rc == 0; i++)
		if (p->steps[i].kind == CS_META)
			rc = add_step(p, CS_FSYNC, p->steps[i].tino,
				      p->steps[i].a, NULL, 0);
	return rc;
}

/* A real non-folder that leaves the tree: unlinked where it is, not
 * moved to staging first (one directory change instead of a rename into
 * a staging folder of maybe 100,000 names and an unlink there). */
static bool gone(const struct cobj *o)
{
	return o->nfinals == 0 && !S_ISDIR(o->rec.mode);
}

int plan_steps(struct plan *p)
{
	size_t first = 0, last;
	int rc = 0;

	for (size_t i = 0; i < p->n && rc == 0; i++) {
		struct cobj *o = &p->objs[i];

		o->patch = false;
		if (o->skip)
			continue;
		if (p->partial && (rc = add_step(p, CS_FORGET, o->tino, NULL,
						 NULL, 0)))
			break;
		if (o->lower && !o->natural && o->tino != (uint64_t)p->fs->root_ino)
			rc = add_step(p, CS_DETACH, o->tino, o->lower,
				      gone(o) ? CS_GONE : NULL,
				      depth_of(o->lower));
		if (rc == 0 && o->nfinals)
			rc = attach_steps(p, o);
		for (size_t k = 1; rc == 0 && k < o->nfinals; k++)
			rc = add_step(p, CS_LINK, o->tino, o->finals[0],
				      o->finals[k], 0);
		if (rc == 0 && o->nfinals)
			rc = add_step(p, CS_META, o->tino, o->finals[0], NULL,
				      depth_of(o->finals[0]));
	}
	for (size_t i = 0; i < p->nwh && rc == 0; i++)
		rc = unlink_step(p, &p->whiteouts[i]);
	if (rc == 0 && !plan_obj(p, (uint64_t)p->fs->root_ino))
		rc = keep_root_times(p);	/* staging comes and goes there */
	if (rc || (rc = sync_steps(p)) ||
	    (rc = add_step(p, CS_CLEAN, 0, NULL, NULL, 0)))
		return rc;
	qsort(p->steps, p->nsteps, sizeof(*p->steps), cmp_step);
	while (first < p->nsteps && !is_attach(p->steps[first].kind))
		first++;
	for (last = first; last < p->nsteps && is_attach(p->steps[last].kind);)
		last++;
	qsort(p->steps + first, last - first, sizeof(*p->steps), cmp_attach);
	return 0;
}
