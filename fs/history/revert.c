// SPDX-License-Identifier: Apache-2.0
/*
 * revert.c - taking commits back (`txfs undo`) or one path (`txfs restore`)
 * from the records keep.c made.
 *
 * An undo of record R (and every later live record, newest first):
 *   1. conflicts: every path R made must still be what R left (its
 *      post_st: inode, type, size, mtime); a path R deleted must still be
 *      free. Any difference refuses (exit 1, the list), unless --force;
 *   2. plan the ops (revert_ops.c): aside what R made (deepest first),
 *      take back what R replaced, move back what R moved, make the
 *      folders R removed, patch back in-place patches (shallowest first),
 *      then the old metadata (deepest first);
 *   3. the undo's own record U (its inverse: what it moved aside, so an
 *      undo can be undone) as U.pending, the old bytes of patched ranges
 *      saved in it; then the journal history/undo.json: THE COMMIT POINT;
 *   4. the ops, then U final, R marked "undone_by": U, the journal gone.
 * A crash before 3 leaves the real directory as it was (U.pending is
 * dropped by the next undo or recovery); after it, history_recover()
 * replays the journal (every op is idempotent).
 *
 * A restore is the same for the objects of one record under the given
 * paths, with no conflict check (what is there now goes aside into U),
 * and takes copy instead of renaming, so that the record stays whole.
 * On a mounted workspace both are staged through the mount (asides are
 * removals, takes are copies; no journal: a rollback discards them).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "hist_int.h"

struct plan_u {
	const struct undo_opts *o;
	struct uctx c;
	json_t *ops, *inv, *inv_names, *undone, *conflicts, *touched;
	json_t *root;		/* the root's meta before the undo (for U) */
	int udir;		/* U.pending (offline) or -1 */
	unsigned naside, npatch;
	bool restore;
};

static int depth(const char *p)
{
	int d = 0;

	for (; p && *p; p++)
		d += *p == '/';
	return d;
}

static bool under(const char *p, const char *top)
{
	size_t n = strlen(top);

	return p && (!strcmp(p, top) || (!strncmp(p, top, n) && p[n] == '/'));
}

static const char *post0(json_t *obj)
{
	return json_string_value(json_array_get(json_object_get(obj, "post"), 0));
}

static bool selected(const struct undo_opts *o, json_t *obj)
{
	if (!o->paths)
		return true;
	/* a restore puts back what was at the paths before the commit, and
	 * the folders above them that the commit removed */
	for (size_t i = 0; i < o->npaths; i++) {
		const char *pre = hist_str(obj, "pre"), *type = hist_str(obj, "type");

		if (under(pre, o->paths[i]))
			return true;
		if (pre && type && type[0] == 'd' && !post0(obj) &&
		    under(o->paths[i], pre))
			return true;
	}
	return false;
}

static bool name_selected(const struct undo_opts *o, const char *path)
{
	for (size_t i = 0; o->paths && i < o->npaths; i++)
		if (under(path, o->paths[i]))
			return true;
	return !o->paths;
}

static int lstat_path(int root, const char *path, struct stat *st)
{
	const char *base;
	int pfd = hist_parent(root, path, &base, false), rc;

	if (pfd < 0)
		return pfd;
	rc = fstatat(pfd, base, st, AT_SYMLINK_NOFOLLOW) ? -errno : 0;
	close(pfd);
	return rc;
}

/* Is the object's old inode where the commit left it (renamed, or changed
 * in place)? */
static bool same_inode(json_t *obj)
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

static bool is_touched(struct plan_u *u, const char *path)
{
	return json_object_get(u->touched, path) != NULL;
}

static void conflict(struct plan_u *u, const char *path, const char *why,
		     const char *rec)
{
	json_array_append_new(u->conflicts, json_sprintf("%s: %s (commit %llu)",
							 path, why, strtoull(rec, NULL, 16)));
}

/* 1. what changed since record rec (undo only) */
static void check(struct plan_u *u, json_t *doc, const char *rec)
{
	json_t *obj, *posts = json_object();
	struct stat st;
	size_t i, k;
	json_t *p;

	json_array_foreach(json_object_get(doc, "objects"), i, obj)
		json_array_foreach(json_object_get(obj, "post"), k, p)
			json_object_set_new(posts, json_string_value(p), json_true());
	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		const char *pre = hist_str(obj, "pre"), *p0 = post0(obj);
		json_t *ps = json_object_get(obj, "post_st");

		if (!selected(u->o, obj))
			continue;
		if (p0 && !is_touched(u, p0) && json_is_object(ps)) {
			if (lstat_path(u->c.root, p0, &st))
				conflict(u, p0, "removed since", rec);
			else if (!matches(ps, &st))
				conflict(u, p0, "changed since", rec);
		}
		if (pre && (!p0 || strcmp(pre, p0)) && !is_touched(u, pre) &&
		    !json_object_get(posts, pre) && lstat_path(u->c.root, pre, &st) == 0)
			conflict(u, pre, "made again since", rec);
	}
	json_array_foreach(json_object_get(doc, "names"), i, obj) {
		const char *path = hist_str(obj, "path");

		if (name_selected(u->o, path) && !is_touched(u, path) &&
		    !json_object_get(posts, path) && lstat_path(u->c.root, path, &st) == 0)
			conflict(u, path, "made again since", rec);
	}
	json_decref(posts);
}

static int add_op(struct plan_u *u, json_t *op)
{
	return op && json_array_append_new(u->ops, op) == 0 ? 0 : -ENOMEM;
}

/* Can path's folders be reached (or made) without a symlink: every one
 * that exists is a real folder? Checked before the commit point, so that
 * no op of the journal meets a symlink swapped in (ELOOP). */
static bool way_ok(struct plan_u *u, const char *path)
{
	char *p = strdup(path), *slash;
	const char *base;
	int fd = -ENOENT;

	/* the nearest folder on the way that exists: reached beneath the
	 * root with no symlink (hist_parent: ELOOP, ENOTDIR otherwise) */
	while (p && fd == -ENOENT) {
		fd = hist_parent(u->c.root, p, &base, false);
		if (fd == -ENOENT && (slash = strrchr(p, '/')))
			*slash = 0;
		else if (fd == -ENOENT)
			break;
	}
	free(p);
	if (fd >= 0)
		close(fd);
	return fd >= 0 || fd == -ENOENT;
}

/* The object now at path, as the inverse record keeps it. */
static json_t *inverse(struct plan_u *u, const char *now_at, const char *back_to)
{
	json_t *inv = json_object();
	struct stat st;
	const char *base;
	int pfd, fd;

	if (!inv)
		return NULL;
	json_object_set_new(inv, "pre", now_at ? json_string(now_at) : json_null());
	json_object_set_new(inv, "post", back_to ? json_pack("[s]", back_to) : json_array());
	if (now_at && (pfd = hist_parent(u->c.root, now_at, &base, false)) < 0)
		json_object_set_new(inv, "pre", json_null());	/* not there */
	else if (now_at) {
		if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0) {
			char target[4096] = "";
			ssize_t n = S_ISLNK(st.st_mode) ?
				readlinkat(pfd, base, target, sizeof(target) - 1) : 0;

			target[n > 0 ? n : 0] = 0;
			fd = openat(pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
			hist_meta_put(inv, &st, fd, S_ISLNK(st.st_mode) ? target : NULL);
			if (fd >= 0)
				close(fd);
		} else {
			json_object_set_new(inv, "pre", json_null());
		}
		close(pfd);
	}
	return inv;
}

static int aside(struct plan_u *u, const char *path, json_t *inv)
{
	char name[32];

	snprintf(name, sizeof(name), "a%x", u->naside++);
	if (inv)
		json_object_set_new(inv, "keep", json_string(name));
	json_object_set_new(u->touched, path, json_true());
	return add_op(u, json_pack("[sss]", "aside", path, name));
}

/* The current bytes of a patched file's ranges into U (so that the undo
 * can be undone), before the commit point. */
static int save_patch(struct plan_u *u, json_t *obj, json_t *inv)
{
	char name[32];
	const char *base;
	json_t *r;
	size_t i;
	int pfd, src, dst, rc = 0;
	char buf[65536];

	if (u->udir < 0)
		return 0;	/* staged: the commit of the mount keeps it */
	snprintf(name, sizeof(name), "objs/p%x", u->npatch++);
	pfd = hist_parent(u->c.root, hist_str(obj, "pre"), &base, false);
	if (pfd < 0)
		return pfd;
	src = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (src < 0)
		return -errno;
	dst = openat(u->udir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (dst < 0) {
		rc = -errno;
		close(src);
		return rc;
	}
	json_array_foreach(json_object_get(obj, "ranges"), i, r) {
		off_t off = (off_t)json_integer_value(json_array_get(r, 0));
		off_t end = off + (off_t)json_integer_value(json_array_get(r, 1));

		while (rc == 0 && off < end) {
			size_t n = (size_t)(end - off) < sizeof(buf) ?
					   (size_t)(end - off) : sizeof(buf);
			ssize_t got = pread(src, buf, n, off);

			if (got < 0 || (got > 0 && pwrite(dst, buf, (size_t)got, off) != got))
				rc = -errno;
			if (got <= 0)
				break;
			off += got;
		}
	}
	if (rc == 0 && fsync(dst))
		rc = -errno;
	close(src);
	close(dst);
	json_object_set_new(inv, "keep", json_string(name + 5));
	json_object_set(inv, "ranges", json_object_get(obj, "ranges"));
	return rc;
}

/* The whole current content of path into U (a hard-linked file an undo
 * copies into), as keep k<n> of the inverse. */
static int save_whole(struct plan_u *u, const char *path, json_t *inv)
{
	char name[32];
	const char *base;
	int pfd, rc;

	if (u->udir < 0)
		return 0;	/* staged or dry run */
	snprintf(name, sizeof(name), "k%x", u->npatch++);
	pfd = hist_parent(u->c.root, path, &base, false);
	if (pfd < 0)
		return pfd;
	rc = hist_copy(pfd, base, u->c.uobjs, name);
	close(pfd);
	if (rc == 0)
		json_object_set_new(inv, "keep", json_string(name));
	return rc;
}

static int cmp_deep(const void *a, const void *b)
{
	const char *x = json_string_value(json_array_get(*(json_t *const *)a, 1));
	const char *y = json_string_value(json_array_get(*(json_t *const *)b, 1));

	return depth(y) - depth(x);
}

/* 2. the ops of one record, and its part of the inverse */
static int plan_record(struct plan_u *u, json_t *doc, const char *rec)
{
	json_t *obj, *p, *asides = json_array(), *metas = json_array(), *inv;
	size_t i, k, first = json_array_size(u->ops);
	int rc = 0;

	/* asides, deepest first */
	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		const char *pre = hist_str(obj, "pre"), *p0 = post0(obj);

		if (!selected(u->o, obj))
			continue;
		if (u->restore) {
			struct stat st;

			if (!pre || (same_inode(obj) && p0 && !strcmp(p0, pre)))
				continue;
			inv = inverse(u, pre, pre);
			if (lstat_path(u->c.root, pre, &st) == 0)
				rc = aside(u, pre, inv);
			json_array_append_new(u->inv, inv);
			continue;
		}
		json_array_foreach(json_object_get(obj, "post"), k, p) {
			const char *path = json_string_value(p);

			if (k == 0 && same_inode(obj))
				continue;
			if (k == 0) {
				inv = inverse(u, path, pre);
				rc = aside(u, path, inv);
				json_array_append_new(u->inv, inv);
			} else {
				char name[32];

				snprintf(name, sizeof(name), "a%x", u->naside);
				json_array_append_new(u->inv_names, json_pack("{ssss}",
						"path", path, "keep", name));
				rc = aside(u, path, NULL);
			}
		}
	}
	/* sort this record's asides deepest first */
	for (i = first; i < json_array_size(u->ops); i++)
		json_array_append(asides, json_array_get(u->ops, i));
	{
		size_t n = json_array_size(asides);
		json_t **v = calloc(n ? n : 1, sizeof(*v));

		for (i = 0; v && i < n; i++)
			v[i] = json_array_get(asides, i);
		if (v)
			qsort(v, n, sizeof(*v), cmp_deep);
		for (i = 0; v && i < n; i++)
			json_array_set(u->ops, first + i, v[i]);
		free(v);
	}
	json_decref(asides);
	/* restores, shallowest first (the objects are sorted by id, not by
	 * path: collect, then order by depth) */
	for (int d = 0; rc == 0 && d < 4096; d++) {
		bool any = false;

		json_array_foreach(json_object_get(doc, "objects"), i, obj) {
			const char *pre = hist_str(obj, "pre"), *p0 = post0(obj);
			const char *keep = hist_str(obj, "keep"), *type = hist_str(obj, "type");

			if (!pre || !selected(u->o, obj) || depth(pre) < d)
				continue;
			any = true;
			if (depth(pre) != d)
				continue;
			if (!way_ok(u, pre)) {
				conflict(u, pre, "a folder on its way is now a symlink or "
					 "not a folder", rec);
				continue;
			}
			json_object_set_new(u->touched, pre, json_true());
			if (same_inode(obj) && strcmp(p0, pre)) {
				if (u->restore) {
					conflict(u, pre, "was renamed by the commit: rename it back", rec);
					continue;
				}
				rc = add_op(u, json_pack("[sss]", "move", p0, pre));
				json_array_append_new(u->inv, inverse(u, p0, pre));
			} else if (keep && keep[0] == 'p') {
				inv = inverse(u, pre, pre);
				rc = save_patch(u, obj, inv);
				json_array_append_new(u->inv, inv);
				if (rc == 0)
					rc = add_op(u, json_pack("[ssssOI]", "patch", rec, keep,
						pre, json_object_get(obj, "ranges"),
						(json_int_t)hist_i64(obj, "size")));
			} else if (same_inode(obj) && !u->restore && keep &&
				   keep[0] == 'k') {
				/* a hard-linked file whose content the commit
				 * copied into the same inode: copied back into
				 * it (every name sees it); the undo's record
				 * keeps the content of now */
				inv = inverse(u, p0, pre);
				rc = save_whole(u, pre, inv);
				json_array_append_new(u->inv, inv);
				if (rc == 0)
					rc = add_op(u, json_pack("[ssss]", "copyin", rec,
								 keep, pre));
			} else if (same_inode(obj) && !u->restore) {
				/* changed in place (metadata): the undo's record
				 * keeps what it is now */
				json_array_append_new(u->inv, inverse(u, p0, pre));
			} else if (keep) {
				rc = add_op(u, json_pack("[ssss]", "take", rec, keep, pre));
			} else if (type && type[0] == 'd' && !same_inode(obj)) {
				rc = add_op(u, json_pack("[ssI]", "mkdir", pre,
							 (json_int_t)(hist_i64(obj, "mode") | 0700)));
			}
			/* what the commit deleted, the undo adds */
			if (rc == 0 && !p0 && !u->restore)
				json_array_append_new(u->inv, inverse(u, NULL, pre));
			if (rc == 0)
				json_array_append_new(metas, json_pack("[ssO]", "meta", pre, obj));
		}
		if (!any)
			break;
	}
	json_array_foreach(json_object_get(doc, "names"), i, obj)
		if (rc == 0 && name_selected(u->o, hist_str(obj, "path"))) {
			rc = hist_str(obj, "link") ?
				add_op(u, json_pack("[sss]", "link", hist_str(obj, "link"),
						    hist_str(obj, "path"))) :
				add_op(u, json_pack("[ssss]", "take", rec, hist_str(obj, "keep"),
						    hist_str(obj, "path")));
			if (!u->restore)
				json_array_append_new(u->inv, inverse(u, NULL,
							hist_str(obj, "path")));
		}
	/* metadata, deepest first: a folder's times after its children; the
	 * root's last (an undo only: a restore leaves the rest as it is) */
	for (i = json_array_size(metas); rc == 0 && i-- > 0;)
		rc = add_op(u, json_incref(json_array_get(metas, i)));
	json_decref(metas);
	if (rc == 0 && !u->restore && json_is_object(json_object_get(doc, "root"))) {
		rc = add_op(u, json_pack("[ssO]", "meta", "", json_object_get(doc, "root")));
	}
	return rc;
}

/* --- the whole undo ------------------------------------------------- */

/* Not undone, or undone by a record that was itself undone. */
static bool live(int hfd, json_t *doc, int level)
{
	const char *by = hist_str(doc, "undone_by");
	json_t *u;
	bool l;

	if (!by || level > 64)
		return !by;
	u = hist_load(hfd, by);
	l = !u || !live(hfd, u, level + 1);
	json_decref(u);
	return l;
}

static void print_op(json_t *op, bool dry)
{
	const char *k = json_string_value(json_array_get(op, 0));
	const char *a = json_string_value(json_array_get(op, 1));
	const char *b = json_string_value(json_array_get(op, 2));
	const char *d = json_string_value(json_array_get(op, !strcmp(k, "link") ? 2 : 3));

	if (!strcmp(k, "aside"))
		printf("%s %s\n", dry ? "would remove " : "removed ", a);
	else if (!strcmp(k, "take") || !strcmp(k, "patch") || !strcmp(k, "link") ||
		 !strcmp(k, "copyin"))
		printf("%s %s\n", dry ? "would restore" : "restored", d);
	else if (!strcmp(k, "move"))
		printf("%s %s -> %s\n", dry ? "would move   " : "moved   ", a, b);
	else if (!strcmp(k, "mkdir"))
		printf("%s %s/\n", dry ? "would restore" : "restored", a);
}

/* Which records: an undo takes id and every later live record, newest
 * first; a restore one record (--before ID, else the newest live one
 * that changed a path). */
static int choose(struct plan_u *u, int hfd, json_t *recs)
{
	const struct undo_opts *o = u->o;
	uint64_t *ids = NULL;
	size_t n = 0;
	int rc = hist_ids(hfd, &ids, &n);
	bool found = false;

	for (size_t i = 0; rc == 0 && i < n && !found; i++) {
		char name[40];
		json_t *doc, *obj;
		size_t k;
		bool take;

		if (o->before && ids[i] != o->id)
			continue;
		hist_name(name, sizeof(name), ids[i], false);
		if (!(doc = hist_load(hfd, name)))
			continue;
		take = o->before || live(hfd, doc, 0);
		if (take && u->restore && !o->before) {
			take = false;	/* the newest live record with the path */
			json_array_foreach(json_object_get(doc, "objects"), k, obj)
				take = take || selected(o, obj);
		}
		if (!take) {
			json_decref(doc);
			continue;
		}
		json_array_append_new(recs, json_pack("{ssso}", "name", name, "doc", doc));
		found = u->restore || !o->id || ids[i] == o->id;
	}
	free(ids);
	if (rc == 0 && !found)
		rc = -ESRCH;	/* no such record (ENOENT would be a file's) */
	return rc;
}

static int lock_state(int sfd)
{
	int fd = openat(sfd, "lock", O_RDWR | O_CREAT | O_CLOEXEC, 0600);

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB)) {
		close(fd);
		return -EBUSY;
	}
	return fd;
}

static int make_pending(struct plan_u *u, int hfd, char *uname, size_t n)
{
	char pend[48];

	hist_name(uname, n, hist_next_id(hfd), false);
	snprintf(pend, sizeof(pend), "%s.pending", uname);
	if (mkdirat(hfd, pend, 0700) ||
	    (u->udir = openat(hfd, pend, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(u->udir, "objs", 0700) ||
	    (u->c.uobjs = openat(u->udir, "objs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	return 0;
}

static int commit_point(struct plan_u *u, int hfd, const char *uname)
{
	char via[512];
	json_t *doc, *j;
	int rc;

	const char *first = json_string_value(json_array_get(u->undone, 0));

	snprintf(via, sizeof(via), "%s of %llu", u->restore ? "txfs restore" :
		 "txfs undo", first ? strtoull(first, NULL, 16) : 0ULL);
	doc = json_pack("{sisIsssOsOsOsO*}", "version", 1, "time", (json_int_t)time(NULL),
			"via", via, "objects", u->inv, "names", u->inv_names,
			"undo_of", u->undone, "root", u->root);
	if (!doc)
		return -ENOMEM;
	rc = hist_save(u->udir, HIST_MANIFEST, doc);
	json_decref(doc);
	if (rc == 0 && (fsync(u->c.uobjs) || fsync(u->udir) || fsync(hfd)))
		rc = -errno;
	j = json_pack("{sssosOsb}", "as", uname, "undone",
		      u->restore ? json_array() : json_incref(u->undone), "ops",
		      u->ops, "copy", u->c.copy);
	if (rc == 0)
		rc = j ? hist_save(hfd, HIST_JOURNAL, j) : -ENOMEM;
	if (rc == 0 && fsync(hfd))
		rc = -errno;
	if (rc == 0)
		rc = undo_replay(&u->c, j);	/* past the commit point */
	json_decref(j);
	return rc;
}

static void report(struct plan_u *u, const char *uname)
{
	size_t i;
	json_t *op;

	json_array_foreach(u->ops, i, op)
		print_op(op, u->o->dry_run);
	if (u->o->dry_run)
		return;
	if (u->o->mnt)
		printf("staged on the mount: txfs commit makes it real, txfs rollback "
		       "discards it\n");
	else
		printf("done, as history record %lld (txfs undo %lld takes it back)\n",
		       (long long)strtoll(uname, NULL, 16), (long long)strtoll(uname, NULL, 16));
}

int history_undo(const struct undo_opts *o)
{
	struct plan_u u = { .o = o, .udir = -1, .restore = o->paths != NULL };
	int sfd, hfd = -1, lockfd = -1, rc;
	json_t *recs = json_array(), *r;
	char uname[40] = "";
	size_t i;

	u.c.root = u.c.uobjs = -1;
	u.ops = json_array();
	u.inv = json_array();
	u.inv_names = json_array();
	u.undone = json_array();
	u.conflicts = json_array();
	u.touched = json_object();
	sfd = open(o->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0)
		return -errno;
	if (!o->mnt && (lockfd = lock_state(sfd)) < 0) {
		rc = lockfd;
		goto out;
	}
	if ((hfd = hist_open(sfd, false)) < 0) {
		rc = hfd;
		goto out;
	}
	if (!o->mnt) {
		bool done;

		if ((rc = history_recover(o->state, o->ws, &done)))
			goto out;
		if (done) {	/* that was the undo asked for again */
			printf("an interrupted undo was completed; nothing else "
			       "was done\n");
			goto out;
		}
	}
	u.c.hfd = hfd;
	u.c.copy = u.restore || o->mnt;
	u.c.root = open(o->mnt ? o->mnt : o->ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (u.c.root < 0 || (rc = choose(&u, hfd, recs))) {
		rc = u.c.root < 0 ? -errno : rc;
		goto out;
	}
	{
		struct stat st;

		if (fstat(u.c.root, &st) == 0 && (u.root = json_object()))
			hist_meta_put(u.root, &st, u.c.root, NULL);
	}
	if (!o->mnt && !o->dry_run && (rc = make_pending(&u, hfd, uname, sizeof(uname))))
		goto out;
	json_array_foreach(recs, i, r) {
		const char *name = hist_str(r, "name");
		json_t *doc = json_object_get(r, "doc");

		if (!u.restore && !o->force)
			check(&u, doc, name);
		json_array_append_new(u.undone, json_string(name));
		if ((rc = plan_record(&u, doc, name)))
			goto out;
	}
	if (json_array_size(u.conflicts)) {
		json_t *c;

		json_array_foreach(u.conflicts, i, c)
			fprintf(stderr, "conflict: %s\n", json_string_value(c));
		rc = -EBUSY;
		goto out;
	}
	if (o->dry_run) {
		rc = 0;
	} else if (o->mnt) {
		json_t *op;

		json_array_foreach(u.ops, i, op)
			if ((rc = undo_op(&u.c, op)))
				goto out;
	} else {
		rc = commit_point(&u, hfd, uname);
	}
	if (rc == 0)
		report(&u, uname);
out:
	if (rc && uname[0] && hfd >= 0 && faccessat(hfd, HIST_JOURNAL, F_OK, 0)) {
		char pend[48];

		snprintf(pend, sizeof(pend), "%s.pending", uname);
		hist_rm_tree(hfd, pend);	/* before the commit point */
	}
	if (u.c.uobjs >= 0)
		close(u.c.uobjs);
	if (u.udir >= 0)
		close(u.udir);
	if (u.c.root >= 0)
		close(u.c.root);
	if (hfd >= 0)
		close(hfd);
	if (lockfd >= 0)
		close(lockfd);
	close(sfd);
	json_decref(recs);
	json_decref(u.ops);
	json_decref(u.inv);
	json_decref(u.inv_names);
	json_decref(u.undone);
	json_decref(u.conflicts);
	json_decref(u.touched);
	json_decref(u.root);
	return rc;
}

int history_recover(const char *state, const char *ws, bool *done)
{
	struct uctx c = { .root = -1, .hfd = -1, .uobjs = -1 };
	int sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC), rc = 0;
	char rel[64];
	json_t *j = NULL;

	*done = false;
	if (sfd < 0)
		return -errno;
	c.hfd = hist_open(sfd, false);
	close(sfd);
	if (c.hfd < 0)
		return c.hfd == -ENOENT ? 0 : c.hfd;
	if (faccessat(c.hfd, HIST_JOURNAL, F_OK, 0) == 0) {
		int fd = openat(c.hfd, HIST_JOURNAL, O_RDONLY | O_CLOEXEC);
		FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

		j = f ? json_loadf(f, 0, NULL) : NULL;
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
		if (!j) {
			rc = -EIO;
			goto out;
		}
		snprintf(rel, sizeof(rel), "%.16s.pending/objs", hist_str(j, "as"));
		c.uobjs = openat(c.hfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (c.uobjs < 0) {	/* finished but for the journal */
			snprintf(rel, sizeof(rel), "%.16s/objs", hist_str(j, "as"));
			c.uobjs = openat(c.hfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		}
		c.copy = json_is_true(json_object_get(j, "copy"));
		c.root = open(ws, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (c.root < 0 || c.uobjs < 0) {
			rc = -errno;
			goto out;
		}
		rc = undo_replay(&c, j);
		*done = rc == 0;
	}
out:
	json_decref(j);
	if (c.root >= 0)
		close(c.root);
	if (c.uobjs >= 0)
		close(c.uobjs);
	close(c.hfd);
	return rc;
}
