// SPDX-License-Identifier: Apache-2.0
/*
 * revert.c - taking commits back (`txfs undo`) or one path (`txfs restore`)
 * from the records keep.c made.
 *
 * An undo of record R (and every later live record, newest first):
 *   1. conflicts (revert_check.c): every path R made must still be what
 *      R left (its post_st: inode, type, size, mtime); a path R deleted
 *      must be free, or made free by the undo itself. Any difference
 *      refuses (exit 1, the list); --force takes back a changed path
 *      anyway (aside into U) but leaves out, whole, every object whose
 *      step would overwrite what the user made since (a path made again,
 *      a renamed object changed or replaced) and the objects it blocks;
 *   2. plan the ops as a whole (revert_ops.c), deepest first: aside what
 *      R made into U, a renamed object to a temporary name in U (stash),
 *      a hard link R made unlinked; then shallowest first: every folder
 *      on the way checked as the plan leaves it (a file that took a
 *      folder's place is gone by then), the renamed objects from their
 *      temporary names (unstash: swaps, cycles, chains in any order),
 *      what R replaced taken back, the folders R removed made, in-place
 *      patches patched back; then the old metadata (deepest first; the
 *      xattrs R added removed);
 *   3. the undo's own record U (its inverse: what it moved aside, so an
 *      undo can be undone) as U.pending, the old bytes of patched ranges
 *      saved in it; then the journal history/undo.json: THE COMMIT POINT;
 *   4. the ops, then U final (post states from U as written at 3, not
 *      read back), R marked undone by U (R/undone_by), the journal gone.
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
#include "../../policy/policy.h"

static int add_op(struct plan_u *u, json_t *op)
{
	return op && json_array_append_new(u->ops, op) == 0 ? 0 : -ENOMEM;
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
	json_object_set_new(inv, "pre", now_at ? hist_jname(now_at) : json_null());
	json_object_set_new(inv, "post", back_to ? hist_arr("s", back_to) : json_array());
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
	json_object_set_new_nocheck(u->touched, path, json_true());
	json_object_set_new_nocheck(u->vacated, path, json_true());
	return add_op(u, hist_arr("sss", "aside", path, name));
}

/* A renamed object out of the way under a temporary name (tmps: its old
 * path -> the name), so that swaps, cycles and chains of renames go back
 * whatever their order. */
static int stash(struct plan_u *u, json_t *obj, const char *path, json_t *tmps)
{
	char name[32];

	snprintf(name, sizeof(name), "%st%x", u->c.uobjs < 0 ? ".txfs-undo-" : "",
		 u->nstash++);
	json_object_set_new_nocheck(tmps, hist_str(obj, "pre"), json_string(name));
	json_object_set_new_nocheck(u->touched, path, json_true());
	json_object_set_new_nocheck(u->vacated, path, json_true());
	return add_op(u, hist_arr("sssI", "stash", path, name,
				   (json_int_t)hist_i64(obj, "ino")));
}

/* One more name of an inode that stays in the tree (at stays_at), which
 * the commit made: removed, and linked back by the undo of the undo. */
static int unlink_name(struct plan_u *u, const char *path, const char *stays_at,
		       int64_t ino)
{
	json_object_set_new_nocheck(u->touched, path, json_true());
	json_object_set_new_nocheck(u->vacated, path, json_true());
	if (json_array_append_new(u->inv_names, hist_obj("ss", "path", path,
							  "link", stays_at)))
		return -ENOMEM;
	return add_op(u, hist_arr("ssI", "unlink", path, (json_int_t)ino));
}

/* What the commit put at the paths of obj goes away: aside (kept in U),
 * under a temporary name (a renamed object), or unlinked (a name more). */
static int plan_away(struct plan_u *u, json_t *obj, json_t *tmps)
{
	const char *pre = hist_str(obj, "pre"), *link_of = hist_str(obj, "link_of");
	bool same = ru_same_inode(obj);
	json_t *p, *inv;
	size_t k;
	int rc = 0;

	json_array_foreach(json_object_get(obj, "post"), k, p) {
		const char *path = json_string_value(p);
		char name[32];

		if (rc)
			break;
		if (k == 0 && same && !strcmp(path, pre))
			continue;	/* changed in place */
		if (k == 0 && same) {
			rc = stash(u, obj, path, tmps);
		} else if (k == 0 && !pre && link_of &&
			   json_is_object(json_object_get(obj, "post_st"))) {
			rc = unlink_name(u, path, link_of,
					 hist_i64(json_object_get(obj, "post_st"), "ino"));
		} else if (k == 0) {
			inv = inverse(u, path, pre);
			rc = aside(u, path, inv);
			json_array_append_new(u->inv, inv);
		} else if (same) {	/* linked again from where it is now */
			rc = unlink_name(u, path, ru_post0(obj), hist_i64(obj, "ino"));
		} else {
			snprintf(name, sizeof(name), "a%x", u->naside);
			json_array_append_new(u->inv_names, hist_obj("ss",
					"path", path, "keep", name));
			rc = aside(u, path, NULL);
		}
	}
	return rc;
}

static int cmp_deep(const void *a, const void *b)
{
	const char *x = json_string_value(json_array_get(*(json_t *const *)a, 1));
	const char *y = json_string_value(json_array_get(*(json_t *const *)b, 1));

	return ru_depth(y) - ru_depth(x);
}

/* Where the undo leaves the inode that the commit left at path: its old
 * path, if the commit renamed it (names are linked after the moves). */
static const char *back_at(json_t *doc, const char *path)
{
	json_t *obj;
	size_t i;

	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		const char *p0 = ru_post0(obj);

		if (p0 && !strcmp(p0, path) && ru_same_inode(obj))
			return hist_str(obj, "pre");
	}
	return path;
}

/* The asides (and stashes, unlinks) of one record, deepest first. */
static int plan_asides(struct plan_u *u, json_t *doc, json_t *tmps)
{
	size_t i, n, first = json_array_size(u->ops);
	json_t *obj, *inv, **v;
	int rc = 0;

	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		const char *pre = hist_str(obj, "pre"), *p0 = ru_post0(obj);
		struct stat st;

		if (rc || !ru_selected(u->o, obj) || ru_skipped(u, obj))
			continue;
		if (!u->restore) {
			rc = plan_away(u, obj, tmps);
			continue;
		}
		if (!pre || (ru_same_inode(obj) && p0 && !strcmp(p0, pre)))
			continue;
		inv = inverse(u, pre, pre);
		if (ru_lstat(u, pre, &st) == 0)
			rc = aside(u, pre, inv);
		json_array_append_new(u->inv, inv);
	}
	n = json_array_size(u->ops) - first;
	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (i = 0; i < n; i++)
		v[i] = json_incref(json_array_get(u->ops, first + i));
	qsort(v, n, sizeof(*v), cmp_deep);
	for (i = 0; i < n; i++)
		json_array_set_new(u->ops, first + i, v[i]);
	free(v);
	return rc;
}

/* Put back what obj was before record rec (its folders are back by
 * now): the renamed object from its temporary name, a patch, a copy
 * into a hard-linked file, a take, a folder; its metadata to metas. */
static int plan_back(struct plan_u *u, json_t *obj, const char *rec,
		     json_t *tmps, json_t *metas)
{
	const char *pre = hist_str(obj, "pre"), *p0 = ru_post0(obj);
	const char *keep = hist_str(obj, "keep"), *type = hist_str(obj, "type");
	const char *tmp = json_string_value(json_object_get(tmps, pre));
	bool same = ru_same_inode(obj), whole = false;
	json_t *inv;
	int rc = 0;

	if (!ru_way_ok(u, pre)) {
		ru_conflict(u, pre, "a folder on its way is now a symlink or "
			    "not a folder", rec, true);
		/* --force: back where it was */
		return tmp ? add_op(u, hist_arr("ssss", "unstash", tmp, p0, p0)) : 0;
	}
	json_object_set_new_nocheck(u->touched, pre, json_true());
	if (!u->restore || !same || !strcmp(p0, pre))
		json_object_set_new_nocheck(u->made, pre, json_string(type ? type : "f"));
	if (same && strcmp(p0, pre)) {
		if (u->restore) {
			ru_conflict(u, pre, "was renamed by the commit: rename "
				    "it back", rec, false);
			return 0;
		}
		inv = inverse(u, p0, pre);
		json_object_set_new(inv, "keep", json_string(tmp));
		json_array_append_new(u->inv, inv);
		rc = add_op(u, hist_arr("ssss", "unstash", tmp, pre, p0));
	} else if (keep && keep[0] == 'p') {
		/* the old bytes of the pages the commit changed: they make the
		 * file before it only out of the file the commit left */
		if (u->restore && !ru_as_left(u, obj, pre)) {
			ru_conflict(u, pre, "changed since the commit, which "
				    "patched it in place: only the file it left "
				    "can be put back", rec, false);
			return 0;
		}
		inv = inverse(u, pre, pre);
		rc = ru_save_patch(u, obj, inv);
		json_array_append_new(u->inv, inv);
		if (rc == 0)
			rc = add_op(u, hist_arr("ssssOI", "patch", rec, keep,
				pre, json_object_get(obj, "ranges"),
				(json_int_t)hist_i64(obj, "size")));
	} else if (same && !u->restore && keep && keep[0] == 'k') {
		/* a hard-linked file whose content the commit copied into
		 * the same inode: copied back into it (every name sees it);
		 * the undo's record keeps the content of now */
		inv = inverse(u, p0, pre);
		rc = ru_save_whole(u, pre, inv);
		json_array_append_new(u->inv, inv);
		if (rc == 0)
			rc = add_op(u, hist_arr("ssss", "copyin", rec, keep, pre));
	} else if (same && !u->restore) {
		/* changed in place (metadata): the undo's record keeps what
		 * it is now */
		json_array_append_new(u->inv, inverse(u, p0, pre));
	} else if (keep) {
		rc = add_op(u, hist_arr("ssss", "take", rec, keep, pre));
		/* a non-folder the commit moved into the record whole (keep
		 * s...: a deleted file of one name, untouched but for that
		 * rename) and renamed back is the same inode: mode, owner,
		 * times and xattrs as they were, no meta op (5 calls less) */
		whole = !u->c.copy && keep[0] == 's' && type && type[0] != 'd';
	} else if (type && type[0] == 'd' && !same) {
		rc = add_op(u, hist_arr("ssI", "mkdir", pre,
					 (json_int_t)(hist_i64(obj, "mode") | 0700)));
	}
	/* what the commit deleted, the undo adds */
	if (rc == 0 && !p0 && !u->restore)
		json_array_append_new(u->inv, inverse(u, NULL, pre));
	if (rc == 0 && !whole)
		json_array_append_new(metas, hist_arr("ssO", "meta", pre, obj));
	return rc;
}

/* The other names of hard-linked files the commit removed. */
static int plan_names(struct plan_u *u, json_t *doc, const char *rec)
{
	json_t *obj, *inv;
	size_t i;
	int rc = 0;

	json_array_foreach(json_object_get(doc, "names"), i, obj) {
		const char *path = hist_str(obj, "path"), *from = hist_str(obj, "link");

		if (rc || !ru_name_selected(u->o, path) || json_object_get(u->skip, path))
			continue;
		rc = from ? add_op(u, hist_arr("sss", "link", back_at(doc, from), path)) :
			    add_op(u, hist_arr("ssss", "take", rec,
						hist_str(obj, "keep"), path));
		if (!u->restore) {
			inv = inverse(u, NULL, path);
			if (from)	/* its undo unlinks it again */
				json_object_set_new(inv, "link_of", hist_jname(from));
			json_array_append_new(u->inv, inv);
		}
	}
	return rc;
}

/* 2. the ops of one record, and its part of the inverse */
static int plan_record(struct plan_u *u, json_t *doc, const char *rec)
{
	json_t *obj, *metas = json_array(), *tmps = json_object();
	size_t i;
	int rc = metas && tmps ? plan_asides(u, doc, tmps) : -ENOMEM;

	/* put back, shallowest first (the objects are sorted by id, not by
	 * path: collect, then order by depth) */
	for (int d = 0; rc == 0 && d < 4096; d++) {
		bool any = false;

		json_array_foreach(json_object_get(doc, "objects"), i, obj) {
			const char *pre = hist_str(obj, "pre");

			if (rc || !pre || !ru_selected(u->o, obj) || ru_depth(pre) < d)
				continue;
			any = true;
			if (ru_depth(pre) == d && !ru_skipped(u, obj))
				rc = plan_back(u, obj, rec, tmps, metas);
		}
		if (!any)
			break;
	}
	if (rc == 0)
		rc = plan_names(u, doc, rec);
	/* metadata, deepest first: a folder's times after its children; the
	 * root's last (an undo only: a restore leaves the rest as it is) */
	for (i = json_array_size(metas); rc == 0 && i-- > 0;)
		rc = add_op(u, json_incref(json_array_get(metas, i)));
	if (rc == 0 && !u->restore && json_is_object(json_object_get(doc, "root")))
		rc = add_op(u, hist_arr("ssO", "meta", "", json_object_get(doc, "root")));
	json_decref(metas);
	json_decref(tmps);
	return rc;
}

/* --- the whole undo ------------------------------------------------- */

/* What an undo record comes down to: the commit under its first undone
 * record (*commit) and how many undos lie between: 1 it took that commit
 * back, 2 it redid it (took back its undo), ...; 0: not an undo. */
static int undo_depth(int hfd, json_t *doc, uint64_t *commit)
{
	json_t *d = json_incref(doc), *n;
	int depth = 0;

	while (d && depth < 64) {
		const char *first = json_string_value(json_array_get(
					json_object_get(d, "undo_of"), 0));

		if (!first)
			break;
		*commit = strtoull(first, NULL, 16);
		depth++;
		n = hist_load(hfd, first);
		json_decref(d);
		d = n;
	}
	json_decref(d);
	return depth;
}

/* Taking back down to before commit `from`, is the live record doc (id)
 * one to take back? A commit: yes, unless a redo taken back already
 * carries it (carried). An undo of a commit in the range: no (taking it
 * back would redo the commit; they cancel). An undo of one before it:
 * yes (that commit was in effect before `from`). A redo of a commit in
 * the range: yes, and it carries that commit (whose old versions are in
 * the redo's record now, not the commit's). A redo of one before it: no. */
static bool in_range(int hfd, json_t *doc, uint64_t id, uint64_t from,
		     json_t *carried)
{
	char key[24];
	uint64_t c = 0;
	int depth = undo_depth(hfd, doc, &c);

	if (depth == 0) {
		snprintf(key, sizeof(key), "%llu", (unsigned long long)id);
		return !json_object_get(carried, key);
	}
	if (depth % 2 == 1)
		return c < from;
	if (c < from)
		return false;
	snprintf(key, sizeof(key), "%llu", (unsigned long long)c);
	json_object_set_new(carried, key, json_true());
	return true;
}

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

/* The name at op[i], quoted for a text line (txfs(1), NAMES IN OUTPUT). */
static char *op_name(json_t *op, size_t i)
{
	const char *s = json_string_value(json_array_get(op, i));
	char *q = s ? audit_cquote(s, " -> ") : NULL;

	return q ? q : strdup("");
}

static void print_op(json_t *op, bool dry, bool failed)
{
	const char *k = json_string_value(json_array_get(op, 0));
	char *a = op_name(op, 1), *b = op_name(op, 2),
	     *d = op_name(op, !strcmp(k, "link") ? 2 : 3);

	if (failed) {	/* undo_replay said why on stderr */
		if (strcmp(k, "stash") && strcmp(k, "meta"))
			printf("not applied %s\n", !strcmp(k, "unstash") ? b :
			       !strcmp(k, "take") || !strcmp(k, "patch") ||
			       !strcmp(k, "copyin") || !strcmp(k, "link") ? d : a);
	} else if (!strcmp(k, "aside") || !strcmp(k, "unlink")) {
		printf("%s %s\n", dry ? "would remove " : "removed ", a);
	} else if (!strcmp(k, "take") || !strcmp(k, "patch") || !strcmp(k, "link") ||
		   !strcmp(k, "copyin")) {
		printf("%s %s\n", dry ? "would restore" : "restored", d);
	} else if (!strcmp(k, "unstash") && strcmp(json_string_value(json_array_get(op, 2)),
						  json_string_value(json_array_get(op, 3)))) {
		printf("%s %s -> %s\n", dry ? "would move   " : "moved   ", d, b);
	} else if (!strcmp(k, "mkdir")) {
		printf("%s %s/\n", dry ? "would restore" : "restored", a);
	}
	free(a);
	free(b);
	free(d);
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
	json_t *carried = json_object();	/* commits a taken redo carries */

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
		take = o->before || (live(hfd, doc, 0) &&
				     (!o->id || u->restore ||
				      in_range(hfd, doc, ids[i], o->id, carried)));
		if (take && u->restore && !o->before) {
			take = false;	/* the newest live record with the path */
			json_array_foreach(json_object_get(doc, "objects"), k, obj)
				take = take || ru_selected(o, obj);
		}
		/* (down to record id: taken or not, the range ends there) */
		found = !u->restore && o->id && ids[i] == o->id;
		if (!take) {
			json_decref(doc);
			continue;
		}
		json_array_append_new(recs, json_pack("{ssso}", "name", name, "doc", doc));
		found = u->restore || !o->id || ids[i] == o->id;
	}
	free(ids);
	json_decref(carried);
	if (rc == 0 && (!found || !json_array_size(recs)))
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
	if (rc == 0 && (fsync(u->c.uobjs) || fsync(u->udir) || fsync(hfd)))
		rc = -errno;
	j = json_pack("{sssosOsb}", "as", uname, "undone",
		      u->restore ? json_array() : json_incref(u->undone), "ops",
		      u->ops, "copy", u->c.copy);
	if (rc == 0)
		rc = j ? hist_save(hfd, HIST_JOURNAL, j) : -ENOMEM;
	if (rc == 0 && fsync(hfd))
		rc = -errno;
	if (rc == 0) {	/* past the commit point */
		u->c.udoc = doc;	/* U as written: not read back */
		rc = undo_replay(&u->c, j);
		u->c.udoc = NULL;
	}
	json_decref(j);
	json_decref(doc);
	return rc;
}

static void report(struct plan_u *u, const char *uname)
{
	size_t i;
	json_t *op;

	json_array_foreach(u->ops, i, op) {
		bool failed = false;
		size_t f;
		json_t *x;

		json_array_foreach(u->c.failed, f, x)
			failed = failed || json_integer_value(x) == (json_int_t)i;
		if (ru_op_hidden(u->o, op))
			u->hid_ops++;	/* a hidden path: counted, not named */
		else
			print_op(op, u->o->dry_run, failed);
	}
	if (u->hid_ops)
		printf("%s %u changes to paths the mount's policy hides (left out)\n",
		       u->o->dry_run ? "would make" : "made", u->hid_ops);
	if (u->o->dry_run)
		return;
	if (u->o->mnt)
		printf("staged on the mount: txfs commit makes it real, txfs rollback "
		       "discards it\n");
	else
		printf("done, as history record %lld (txfs undo %lld takes it back)\n",
		       (long long)strtoll(uname, NULL, 16), (long long)strtoll(uname, NULL, 16));
}

static void plan_init(struct plan_u *u)
{
	u->c.root = u->c.uobjs = -1;
	u->ops = json_array();
	u->inv = json_array();
	u->inv_names = json_array();
	u->undone = json_array();
	u->conflicts = json_array();
	u->touched = json_object();
	u->vacated = json_object();
	u->made = json_object();
	u->skip = json_object();
	u->c.failed = json_array();
}

static void plan_free(struct plan_u *u)
{
	ru_lstat_done(u);
	json_decref(u->ops);
	json_decref(u->inv);
	json_decref(u->inv_names);
	json_decref(u->undone);
	json_decref(u->conflicts);
	json_decref(u->touched);
	json_decref(u->vacated);
	json_decref(u->made);
	json_decref(u->skip);
	json_decref(u->c.failed);
	json_decref(u->root);
}

/* Check and plan every chosen record, newest first: -EBUSY with the
 * conflicts on stderr. */
static int plan_all(struct plan_u *u, json_t *recs)
{
	json_t *r, *c;
	size_t i;
	int rc;

	json_array_foreach(recs, i, r) {
		const char *name = hist_str(r, "name");
		json_t *doc = json_object_get(r, "doc");

		if (!u->restore)
			ru_check(u, doc, name);
		json_array_append_new(u->undone, json_string(name));
		if ((rc = plan_record(u, doc, name)))
			return rc;
	}
	if ((rc = ru_folder_times(u)))
		return rc;
	json_array_foreach(u->conflicts, i, c)
		fprintf(stderr, "conflict: %s\n", json_string_value(c));
	if (u->hid_conflicts)
		fprintf(stderr, "conflict: %u paths the mount's policy hides (left "
			"out)\n", u->hid_conflicts);
	if (u->hid_skipped)
		fprintf(stderr, "not undone (--force): %u paths the mount's policy "
			"hides (left out)\n", u->hid_skipped);
	if (u->nomem_conflicts)
		fprintf(stderr, "conflict: %u paths not named (out of memory)\n",
			u->nomem_conflicts);
	return json_array_size(u->conflicts) || u->hid_conflicts ||
	       u->nomem_conflicts ? -EBUSY : 0;
}

int history_undo(const struct undo_opts *o)
{
	struct plan_u u = { .o = o, .udir = -1, .lfd = -1,
			    .restore = o->paths != NULL };
	int sfd, hfd = -1, lockfd = -1, rc;
	json_t *recs = json_array();
	char uname[40] = "";
	size_t i;

	plan_init(&u);
	sfd = open(o->state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (sfd < 0) {	/* no state folder: no history */
		rc = -errno;
		goto out;
	}
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
		json_t *first = json_object_get(json_object_get(json_array_get(recs, 0),
								 "doc"), "root");

		if (fstat(u.c.root, &st) == 0 && (u.root = json_object()))
			hist_meta_put(u.root, &st, u.c.root, NULL);
		/* the folder the commits changed, not another one now at its
		 * path (or a symlink to one): never written through */
		if (!o->mnt && json_is_integer(json_object_get(first, "ino")) &&
		    hist_i64(first, "ino") != (int64_t)st.st_ino) {
			fprintf(stderr, "conflict: .: %s is not the folder the "
				"commit changed (replaced since, or a symlink to "
				"another folder)\n", o->ws);
			rc = -EBUSY;
			goto out;
		}
	}
	if (!o->mnt && !o->dry_run && (rc = make_pending(&u, hfd, uname, sizeof(uname))))
		goto out;
	if ((rc = plan_all(&u, recs)))
		goto out;
	if (o->dry_run) {
		rc = 0;
	} else if (o->mnt) {
		json_t *op;

		json_array_foreach(u.ops, i, op)
			if ((rc = undo_op(&u.c, op)))
				break;
		undo_ops_done(&u.c);
		if (rc)
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
	if (sfd >= 0)
		close(sfd);
	json_decref(recs);
	plan_free(&u);
	return rc;
}
