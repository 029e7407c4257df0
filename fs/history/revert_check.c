// SPDX-License-Identifier: Apache-2.0
/*
 * revert_check.c - what an undo checks before its commit point: every
 * path the undone commit made must still be what the commit left there
 * (post_st), every path it takes back must be free or made free by the
 * undo itself, and every folder on the way to one must be a folder once
 * the undo's earlier steps are applied (a file or symlink the commit put
 * in a folder's place goes aside first, then the folder is made).
 *
 * A conflict refuses the undo. With --force, a conflict where the undo
 * would overwrite what is there now (a path made again since, a folder
 * on the way that is no folder, a renamed or in-place object gone,
 * replaced or changed since: it stays with the change) leaves that
 * object as it is instead: nothing of it is applied or recorded, and the
 * objects whose old place it keeps occupied are left too.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hist_int.h"
#include "../../policy/policy.h"

int ru_depth(const char *p)
{
	int d = 0;

	for (; p && *p; p++)
		d += *p == '/';
	return d;
}

bool ru_under(const char *p, const char *top)
{
	size_t n = strlen(top);

	return p && (!strcmp(p, top) || (!strncmp(p, top, n) && p[n] == '/'));
}

const char *ru_post0(json_t *obj)
{
	return json_string_value(json_array_get(json_object_get(obj, "post"), 0));
}

bool ru_selected(const struct undo_opts *o, json_t *obj)
{
	if (!o->paths)
		return true;
	/* a restore puts back what was at the paths before the commit, and
	 * the folders above them that the commit removed */
	for (size_t i = 0; i < o->npaths; i++) {
		const char *pre = hist_str(obj, "pre"), *type = hist_str(obj, "type");

		if (ru_under(pre, o->paths[i]))
			return true;
		if (pre && type && type[0] == 'd' && !ru_post0(obj) &&
		    ru_under(o->paths[i], pre))
			return true;
	}
	return false;
}

bool ru_name_selected(const struct undo_opts *o, const char *path)
{
	for (size_t i = 0; o->paths && i < o->npaths; i++)
		if (ru_under(path, o->paths[i]))
			return true;
	return !o->paths;
}

int ru_lstat(struct plan_u *u, const char *path, struct stat *st)
{
	const char *slash = strrchr(path, '/'), *base;
	size_t n = slash ? (size_t)(slash - path) : 0;
	int pfd;

	if (!u->ldir || strlen(u->ldir) != n || strncmp(u->ldir, path, n)) {
		ru_lstat_done(u);
		if (!(u->ldir = strndup(path, n)))
			return -ENOMEM;
		u->lfd = hist_parent(u->c.root, path, &base, false);
	}
	base = slash ? slash + 1 : path;
	if ((pfd = u->lfd) < 0)
		return pfd;
	return fstatat(pfd, base, st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
}

void ru_lstat_done(struct plan_u *u)
{
	if (u->ldir && u->lfd >= 0)
		close(u->lfd);
	free(u->ldir);
	u->ldir = NULL;
	u->lfd = -1;
}

bool ru_same_inode(json_t *obj)
{
	json_t *ps = json_object_get(obj, "post_st");

	return hist_str(obj, "pre") && json_is_object(ps) &&
	       hist_i64(ps, "ino") == hist_i64(obj, "ino");
}

static bool matches(json_t *ps, const struct stat *st)
{
	return hist_i64(ps, "ino") == (int64_t)st->st_ino &&
	       hist_i64(ps, "size") == (int64_t)st->st_size &&
	       hist_i64(ps, "mtime") == (int64_t)st->st_mtim.tv_sec * 1000000000LL +
					       st->st_mtim.tv_nsec;
}

bool ru_as_left(struct plan_u *u, json_t *obj, const char *path)
{
	json_t *ps = json_object_get(obj, "post_st");
	struct stat st;

	return json_is_object(ps) && ru_lstat(u, path, &st) == 0 && matches(ps, &st);
}

bool ru_is_touched(struct plan_u *u, const char *path)
{
	return json_object_get(u->touched, path) != NULL;
}

void ru_conflict(struct plan_u *u, const char *path, const char *why,
		 const char *rec, bool skippable)
{
	unsigned long long id = strtoull(rec, NULL, 16);
	bool hid = ru_hidden(u->o, path);
	/* quoted as NAMES IN OUTPUT says (a newline or ": " in a name never
	 * splits its line); the text is then UTF-8, which json_sprintf
	 * needs: a name that is not made json_sprintf return NULL, and the
	 * conflict was lost (an undo overwrote a file changed since) */
	char *q = audit_cquote(path, ": ");
	json_t *line;

	if (u->o->force && skippable) {
		if (!json_object_get(u->skip, path) && hid)
			u->hid_skipped++;	/* counted, not named */
		else if (!json_object_get(u->skip, path))
			fprintf(stderr, "not undone (--force): %s: %s (commit %llu)\n",
				q ? q : "?", why, id);
		json_object_set_new_nocheck(u->skip, path, json_true());
		free(q);
		return;
	}
	if (u->o->force) {
		free(q);
		return;	/* --force takes it back anyway (aside: kept in U) */
	}
	if (hid) {
		u->hid_conflicts++;	/* refuses as any other, unnamed */
		free(q);
		return;
	}
	line = q ? json_sprintf("%s: %s (commit %llu)", q, why, id) : NULL;
	if (!line || json_array_append_new(u->conflicts, line))
		u->nomem_conflicts++;	/* still refused */
	free(q);
}

bool ru_hidden(const struct undo_opts *o, const char *path)
{
	return o->hide && path && path[0] &&
	       policy_is_hidden(o->hide, path, strlen(path));
}

bool ru_op_hidden(const struct undo_opts *o, json_t *op)
{
	size_t i;

	for (i = 1; i < json_array_size(op); i++)
		if (ru_hidden(o, json_string_value(json_array_get(op, i))))
			return true;
	return false;
}

bool ru_skipped(struct plan_u *u, json_t *obj)
{
	const char *pre = hist_str(obj, "pre"), *p0 = ru_post0(obj);

	return (pre && json_object_get(u->skip, pre)) ||
	       (p0 && json_object_get(u->skip, p0));
}

/* --force: an object left as it is keeps its paths as they are, and an
 * object whose old or new place that is is left too (to the fixpoint). */
static void skip_blocked(struct plan_u *u, json_t *doc)
{
	bool more = true;
	json_t *obj;
	size_t i;

	while (more) {
		more = false;
		json_array_foreach(json_object_get(doc, "objects"), i, obj) {
			const char *pre = hist_str(obj, "pre"), *p0 = ru_post0(obj);

			if (!ru_skipped(u, obj))
				continue;
			if (pre && !json_object_get(u->skip, pre))
				more = !json_object_set_new_nocheck(u->skip, pre, json_true());
			if (p0 && !json_object_get(u->skip, p0))
				more = !json_object_set_new_nocheck(u->skip, p0, json_true());
		}
	}
}

/* Was the kept old version of obj (a hard link to the replaced file, the
 * deleted file moved aside) written since the commit? A process that
 * still had the old file open can (its size or mtime differ from what
 * the record says it was). */
static bool kept_written(struct plan_u *u, json_t *obj, const char *rec)
{
	const char *keep = hist_str(obj, "keep");
	char rel[160];
	struct stat st;

	if (!keep || keep[0] == 'p' || !json_is_integer(json_object_get(obj, "mtime")))
		return false;	/* patches: their pages are checked whole */
	snprintf(rel, sizeof(rel), "%.24s/objs/%s", rec, keep);
	return fstatat(u->c.hfd, rel, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       !S_ISDIR(st.st_mode) &&
	       (hist_i64(obj, "size") != (int64_t)st.st_size ||
		hist_i64(obj, "mtime") != (int64_t)st.st_mtim.tv_sec * 1000000000LL +
					   st.st_mtim.tv_nsec);
}

void ru_check(struct plan_u *u, json_t *doc, const char *rec)
{
	json_t *obj, *posts = json_object();
	struct stat st;
	size_t i, k;
	json_t *p;

	json_array_foreach(json_object_get(doc, "objects"), i, obj)
		json_array_foreach(json_object_get(obj, "post"), k, p)
			json_object_set_new_nocheck(posts, json_string_value(p), json_true());
	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		const char *pre = hist_str(obj, "pre"), *p0 = ru_post0(obj);
		json_t *ps = json_object_get(obj, "post_st");

		if (!ru_selected(u->o, obj))
			continue;
		if (kept_written(u, obj, rec))
			ru_conflict(u, pre ? pre : p0, "its kept old version was "
				    "written since the commit (a process had it "
				    "open)", rec, false);
		if (p0 && !ru_is_touched(u, p0) && json_is_object(ps)) {
			/* a renamed object gone: nothing to move back */
			if (ru_lstat(u, p0, &st))
				ru_conflict(u, p0, u->o->mnt ? "not on the mount: "
					    "removed since, or hidden by its policy "
					    "(undo it unmounted)" : "removed since",
					    rec, ru_same_inode(obj) || u->o->mnt);
			else if (ru_same_inode(obj) &&
				 hist_i64(ps, "ino") != (int64_t)st.st_ino)
				/* another object there: the commit's is
				 * gone, what is there now is not its */
				ru_conflict(u, p0, "replaced since", rec, true);
			else if (!matches(ps, &st))	/* --force: aside, kept
							 * in U; a renamed one
							 * stays with its change */
				ru_conflict(u, p0, "changed since", rec,
					    ru_same_inode(obj));
		}
		if (pre && (!p0 || strcmp(pre, p0)) && !ru_is_touched(u, pre) &&
		    !json_object_get(posts, pre) && ru_lstat(u, pre, &st) == 0)
			ru_conflict(u, pre, "made again since", rec, true);
	}
	json_array_foreach(json_object_get(doc, "names"), i, obj) {
		const char *path = hist_str(obj, "path");

		if (ru_name_selected(u->o, path) && !ru_is_touched(u, path) &&
		    !json_object_get(posts, path) && ru_lstat(u, path, &st) == 0)
			ru_conflict(u, path, "made again since", rec, true);
	}
	json_decref(posts);
	if (json_object_size(u->skip))
		skip_blocked(u, doc);
}

/* One folder on the way: 0 it is (or will be) a folder, 1 it will be
 * gone (the rest of the way is made), -1 no way. */
static int way_step(struct plan_u *u, const char *dir)
{
	const char *made = json_string_value(json_object_get(u->made, dir));
	struct stat st;
	int rc;

	if (made)
		return made[0] == 'd' ? 0 : -1;
	if (json_object_get(u->vacated, dir))
		return 1;
	rc = ru_lstat(u, dir, &st);
	if (rc == -ENOENT)
		return 1;
	return rc == 0 && S_ISDIR(st.st_mode) ? 0 : -1;
}

bool ru_way_ok(struct plan_u *u, const char *path)
{
	char *p = strdup(path), *slash;
	int r = 0;

	if (!p)
		return false;
	/* each folder on the way, shallowest first, checked as the plan
	 * leaves it (hist_parent then finds no symlink at replay: ELOOP) */
	for (slash = strchr(p, '/'); slash && r == 0; slash = strchr(slash + 1, '/')) {
		*slash = 0;
		r = way_step(u, p);
		*slash = '/';
	}
	free(p);
	return r >= 0;
}
