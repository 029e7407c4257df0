// SPDX-License-Identifier: Apache-2.0
/*
 * revert_ops.c - the operations an undo is made of (hist_int.h lists
 * them), each idempotent so that a crash replays the journal
 * (history/undo.json) from the first, and the journal's replay and end
 * (history_recover: an undo a crash interrupted).
 *
 * Offline (the real directory, not mounted) an aside renames what the
 * undone commit made into the undo's own record, and a take renames a
 * kept object back into place: both cost a rename, whatever the size.
 * Staged (on the mount) an aside removes through the mount and a take
 * copies: the undo is then an ordinary staged change, committed (and
 * kept in the history) like any other.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "hist_int.h"

static const char *arg(json_t *op, size_t i)
{
	return json_string_value(json_array_get(op, i));
}

/* objs/ of record rec: an fd the cache owns, or -errno */
static int record_objs(struct uctx *c, const char *rec)
{
	char rel[64];
	int fd;

	if (c->rec[0] && !strncmp(c->rec, rec, sizeof(c->rec)))
		return c->robjs;
	snprintf(rel, sizeof(rel), "%.24s/objs", rec);
	fd = openat(c->hfd, rel, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (c->rec[0])
		close(c->robjs);
	snprintf(c->rec, sizeof(c->rec), "%s", rec);
	c->robjs = fd;
	return fd;
}

static void pdir_drop(struct uctx *c)
{
	if (c->pdir)
		close(c->pfd);
	free(c->pdir);
	c->pdir = NULL;
}

/* The folder of path (hist_parent), the last one kept open: an fd the
 * cache owns, or -errno. */
static int parent_of(struct uctx *c, const char *path, const char **base,
		     bool create)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;
	int fd;

	*base = slash ? slash + 1 : path;
	if (c->pdir && strlen(c->pdir) == n && !strncmp(c->pdir, path, n))
		return c->pfd;
	fd = hist_parent(c->root, path, base, create);
	if (fd < 0)
		return fd;
	pdir_drop(c);
	if (!(c->pdir = strndup(path, n))) {
		close(fd);
		return -ENOMEM;
	}
	c->pfd = fd;
	return fd;
}

void undo_ops_done(struct uctx *c)
{
	if (c->rec[0])
		close(c->robjs);
	c->rec[0] = 0;
	pdir_drop(c);
}

static bool exists_at(int dir, const char *name)
{
	struct stat st;

	return fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

static int op_aside(struct uctx *c, const char *path, const char *name)
{
	const char *base;
	int pfd = hist_parent(c->root, path, &base, false), rc = 0;

	if (pfd == -ENOENT)
		return 0;	/* its folder went aside already */
	if (pfd < 0)
		return pfd;
	if (!exists_at(pfd, base) || (c->uobjs >= 0 && exists_at(c->uobjs, name)))
		rc = 0;		/* done before: what is there now was put back
				 * by a later op of the same journal */
	else if (c->uobjs < 0)
		rc = hist_rm_tree(pfd, base);
	else if (renameat(pfd, base, c->uobjs, name))
		rc = -errno;
	close(pfd);
	return rc;
}

static int op_take(struct uctx *c, const char *rec, const char *name,
		   const char *path)
{
	int objs = record_objs(c, rec), pfd;
	const char *base;

	if (objs < 0)
		return objs;
	pfd = parent_of(c, path, &base, true);
	if (pfd < 0)
		return pfd;
	/* the usual case in one call: there, and nothing in its place */
	if (!c->copy && renameat2(objs, name, pfd, base, RENAME_NOREPLACE) == 0)
		return 0;
	if (!exists_at(objs, name))
		return exists_at(pfd, base) ? 0 : -ENOENT;	/* a replay */
	if (exists_at(pfd, base))
		return c->copy ? 0 : -EEXIST;
	if (c->copy)
		return hist_copy(objs, name, pfd, base);
	return renameat(objs, name, pfd, base) ? -errno : 0;
}

static int op_move(struct uctx *c, const char *from, const char *to)
{
	const char *fb, *tb;
	int f = hist_parent(c->root, from, &fb, false), t, rc = 0;

	if (f < 0)
		return f == -ENOENT ? 0 : f;
	t = hist_parent(c->root, to, &tb, true);
	if (t >= 0 && exists_at(f, fb) && !exists_at(t, tb) &&
	    renameat(f, fb, t, tb))
		rc = -errno;
	if (t < 0)
		rc = t;
	else
		close(t);
	close(f);
	return rc;
}

/* Where temporary names are: the undo's objs/, or the mount's root. */
static int holder(struct uctx *c)
{
	return c->uobjs >= 0 ? c->uobjs : c->root;
}

/* path -> TMP, if the object there is still inode ino (a replay after
 * the unstash finds another object there, or none). */
static int op_stash(struct uctx *c, const char *path, const char *tmp,
		    int64_t ino)
{
	const char *base;
	struct stat st;
	int pfd, rc = 0;

	if (exists_at(holder(c), tmp))
		return 0;	/* done before */
	pfd = hist_parent(c->root, path, &base, false);
	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (int64_t)st.st_ino == ino && renameat(pfd, base, holder(c), tmp))
		rc = -errno;
	close(pfd);
	return rc;
}

/* TMP -> path (its folders made); the path must be free. */
static int op_unstash(struct uctx *c, const char *tmp, const char *path)
{
	const char *base;
	int pfd, rc = 0;

	if (!exists_at(holder(c), tmp))
		return 0;	/* done before */
	pfd = hist_parent(c->root, path, &base, true);
	if (pfd < 0)
		return pfd;
	if (renameat2(holder(c), tmp, pfd, base, RENAME_NOREPLACE))
		rc = -errno;
	if (rc == -EINVAL)	/* a file system without the flag */
		rc = exists_at(pfd, base) ? -EEXIST :
		     renameat(holder(c), tmp, pfd, base) ? -errno : 0;
	close(pfd);
	return rc;
}

/* One more name of inode ino, which stays under another name. */
static int op_unlink(struct uctx *c, const char *path, int64_t ino)
{
	const char *base;
	struct stat st;
	int pfd = hist_parent(c->root, path, &base, false), rc = 0;

	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    (int64_t)st.st_ino == ino && !S_ISDIR(st.st_mode) &&
	    unlinkat(pfd, base, 0))
		rc = -errno;
	close(pfd);
	return rc;
}

/* Another name of a file that stays in the tree, linked back. */
static int op_link(struct uctx *c, const char *from, const char *to)
{
	const char *fb, *tb;
	int f = hist_parent(c->root, from, &fb, false), t, rc = 0;

	if (f < 0)
		return f;
	t = hist_parent(c->root, to, &tb, true);
	if (t >= 0 && linkat(f, fb, t, tb, 0) && errno != EEXIST)
		rc = -errno;
	if (t < 0)
		rc = t;
	else
		close(t);
	close(f);
	return rc;
}

/* Copy a kept content into the existing file at path (the same inode:
 * its other names see it too); idempotent. */
static int op_copyin(struct uctx *c, const char *rec, const char *name,
		     const char *path)
{
	int objs = record_objs(c, rec), src = -1, dst = -1, pfd, rc = 0;
	const char *base;
	char buf[65536];
	ssize_t n;
	off_t off = 0;

	if (objs < 0)
		return objs;
	pfd = hist_parent(c->root, path, &base, false);
	if (pfd >= 0) {
		src = openat(objs, name, O_RDONLY | O_CLOEXEC);
		dst = openat(pfd, base, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
	}
	if (pfd < 0 || src < 0 || dst < 0) {
		rc = pfd < 0 ? pfd : -errno;
		goto out;
	}
	while ((n = pread(src, buf, sizeof(buf), off)) > 0) {
		if (pwrite(dst, buf, (size_t)n, off) != n) {
			rc = errno ? -errno : -EIO;
			break;
		}
		off += n;
	}
	if (n < 0)
		rc = -errno;
	if (rc == 0 && fsync(dst))
		rc = -errno;
out:
	if (dst >= 0)
		close(dst);
	if (src >= 0)
		close(src);
	if (pfd >= 0)
		close(pfd);
	return rc;
}

static int op_mkdir(struct uctx *c, const char *path, mode_t mode)
{
	const char *base;
	int pfd = parent_of(c, path, &base, true);

	if (pfd < 0)
		return pfd;
	return mkdirat(pfd, base, mode & 07777) && errno != EEXIST ? -errno : 0;
}

/* Write the kept bytes of every range back at their offsets, then the
 * size. */
static int op_patch(struct uctx *c, json_t *op)
{
	int objs = record_objs(c, arg(op, 1)), src = -1, dst = -1, rc = 0;
	const char *base;
	char buf[65536];
	json_t *r;
	size_t i;
	int pfd;

	if (objs < 0)
		return objs;
	pfd = hist_parent(c->root, arg(op, 3), &base, false);
	src = openat(objs, arg(op, 2), O_RDONLY | O_CLOEXEC);
	if (pfd >= 0)
		dst = openat(pfd, base, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 || src < 0 || dst < 0) {
		rc = pfd < 0 ? pfd : -errno;
		goto out;
	}
	json_array_foreach(json_array_get(op, 4), i, r) {
		off_t off = (off_t)json_integer_value(json_array_get(r, 0));
		off_t end = off + (off_t)json_integer_value(json_array_get(r, 1));

		while (rc == 0 && off < end) {
			size_t n = (size_t)(end - off) < sizeof(buf) ?
					   (size_t)(end - off) : sizeof(buf);
			ssize_t got = pread(src, buf, n, off);

			if (got == 0)
				rc = -EIO;	/* the kept bytes end short */
			else if (got < 0 || pwrite(dst, buf, (size_t)got, off) != got)
				rc = errno ? -errno : -EIO;
			off += got > 0 ? got : 0;
		}
	}
	if (rc == 0 && ftruncate(dst, (off_t)json_integer_value(json_array_get(op, 5))))
		rc = -errno;
	if (rc == 0 && fsync(dst))
		rc = -errno;
out:
	if (dst >= 0)
		close(dst);
	if (src >= 0)
		close(src);
	if (pfd >= 0)
		close(pfd);
	return rc;
}

/* Is obj's xattr list all the object had (a record lists none for an
 * object it keeps whole, which keeps its own)? */
static bool xattrs_listed(json_t *obj)
{
	const char *keep = hist_str(obj, "keep"), *type = hist_str(obj, "type");

	return json_is_object(json_object_get(obj, "xattrs")) &&
	       !(keep && keep[0] == 'k') && !(type && type[0] == 'l');
}

/* Remove the user. and trusted. xattrs of name that obj does not list
 * (added by the commit): an empty list means none. */
static int xattrs_prune(int dir, const char *name, json_t *obj)
{
	char path[64], list[65536];
	json_t *x = json_object_get(obj, "xattrs");
	ssize_t n;
	int fd, rc = 0;

	if (!xattrs_listed(obj))
		return 0;
	fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = listxattr(path, list, sizeof(list));
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(list + i) + 1)
		if ((!strncmp(list + i, "user.", 5) || !strncmp(list + i, "trusted.", 8)) &&
		    !json_object_get(x, list + i) && removexattr(path, list + i) &&
		    errno != ENODATA && rc == 0)
			rc = -errno;
	close(fd);
	return rc;
}

static int op_meta(struct uctx *c, const char *path, json_t *obj)
{
	const char *base;
	int pfd, rc = 0;

	if (!path[0]) {	/* the root itself */
		xattrs_prune(c->root, ".", obj);
		return hist_meta_set(c->root, ".", obj);
	}
	pfd = parent_of(c, path, &base, false);
	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;	/* nothing there to set */
	if (exists_at(pfd, base)) {
		xattrs_prune(pfd, base, obj);
		rc = hist_meta_set(pfd, base, obj);
	}
	return rc;
}

/* A folder's times put back (one the commit did not change but whose
 * names the undo did: its times as they were before the undo). */
static int op_times(struct uctx *c, const char *path, json_t *op)
{
	struct timespec ts[2];
	struct stat st;
	const char *base;
	int pfd, rc = 0;
	json_int_t at = json_integer_value(json_array_get(op, 2));
	json_int_t mt = json_integer_value(json_array_get(op, 3));

	ts[0].tv_sec = at / 1000000000LL;
	ts[0].tv_nsec = at % 1000000000LL;
	ts[1].tv_sec = mt / 1000000000LL;
	ts[1].tv_nsec = mt % 1000000000LL;
	pfd = parent_of(c, path, &base, false);
	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;	/* nothing there to set */
	/* the same folder only (another object there: left alone) */
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    (json_int_t)st.st_ino == json_integer_value(json_array_get(op, 4)) &&
	    utimensat(pfd, base, ts, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	return rc;
}

int undo_op(struct uctx *c, json_t *op)
{
	const char *k = arg(op, 0);

	if (!k)
		return -EINVAL;
	/* these move or remove names: a folder kept open may be one */
	if (strcmp(k, "take") && strcmp(k, "meta") && strcmp(k, "mkdir") &&
	    strcmp(k, "patch") && strcmp(k, "copyin") && strcmp(k, "times"))
		pdir_drop(c);
	if (!strcmp(k, "aside"))
		return op_aside(c, arg(op, 1), arg(op, 2));
	if (!strcmp(k, "take"))
		return op_take(c, arg(op, 1), arg(op, 2), arg(op, 3));
	if (!strcmp(k, "move"))
		return op_move(c, arg(op, 1), arg(op, 2));
	if (!strcmp(k, "stash"))
		return op_stash(c, arg(op, 1), arg(op, 2),
				json_integer_value(json_array_get(op, 3)));
	if (!strcmp(k, "unstash"))
		return op_unstash(c, arg(op, 1), arg(op, 2));
	if (!strcmp(k, "unlink"))
		return op_unlink(c, arg(op, 1), json_integer_value(json_array_get(op, 2)));
	if (!strcmp(k, "link"))
		return op_link(c, arg(op, 1), arg(op, 2));
	if (!strcmp(k, "copyin"))
		return op_copyin(c, arg(op, 1), arg(op, 2), arg(op, 3));
	if (!strcmp(k, "mkdir"))
		return op_mkdir(c, arg(op, 1),
				(mode_t)json_integer_value(json_array_get(op, 2)));
	if (!strcmp(k, "patch"))
		return op_patch(c, op);
	if (!strcmp(k, "meta"))
		return op_meta(c, arg(op, 1), json_array_get(op, 2));
	if (!strcmp(k, "times"))
		return op_times(c, arg(op, 1), op);
	return -EINVAL;
}

/* What path is now, for the undo's own record (its conflict check). */
static json_t *now_state(struct uctx *c, const char *path)
{
	const char *base;
	struct stat st;
	int pfd = parent_of(c, path, &base, false);

	if (pfd < 0 || fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW))
		return json_null();
	return hist_state_json(&st);
}

/* The undo's record says what the undo did: an object that nothing was
 * put back for (a step not applied) has no post, and one that also took
 * nothing away is no part of it. */
static void drop_unapplied(json_t *objs)
{
	json_t *obj;
	size_t i;

	for (i = json_array_size(objs); i-- > 0;) {
		obj = json_array_get(objs, i);
		if (!json_array_size(json_object_get(obj, "post")) ||
		    !json_is_null(json_object_get(obj, "post_st")))
			continue;
		if (json_is_null(json_object_get(obj, "pre")) ||
		    !json_object_get(obj, "pre"))
			json_array_remove(objs, i);
		else
			json_object_set_new(obj, "post", json_array());
	}
}

/* After the ops: the undo's record final, the undone records marked,
 * the journal gone. Each part is idempotent. */
static int journal_end(struct uctx *c, json_t *j)
{
	const char *as = hist_str(j, "as");
	char pend[40], fin[40];
	json_t *doc, *obj, *id;
	size_t i;
	int dfd, rc = 0;

	snprintf(pend, sizeof(pend), "%s.pending", as);
	snprintf(fin, sizeof(fin), "%s", as);
	if ((doc = c->udoc ? json_incref(c->udoc) : hist_load(c->hfd, pend))) {
		json_array_foreach(json_object_get(doc, "objects"), i, obj) {
			const char *p0 = json_string_value(
				json_array_get(json_object_get(obj, "post"), 0));

			if (p0)
				json_object_set_new(obj, "post_st", now_state(c, p0));
		}
		drop_unapplied(json_object_get(doc, "objects"));
		dfd = openat(c->hfd, pend, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		rc = dfd < 0 ? -errno : hist_save(dfd, HIST_MANIFEST, doc);
		if (dfd >= 0)
			close(dfd);
		if (rc == 0 && renameat(c->hfd, pend, c->hfd, fin))
			rc = -errno;
		if (rc == 0)	/* its time from the manifest in hand */
			hist_info_write(c->hfd, fin, hist_i64(doc, "time"),
					hist_tree_bytes(c->hfd, fin));
		json_decref(doc);
	}
	/* the records taken back: a small undone_by file each, not their
	 * manifests written again */
	json_array_foreach(json_object_get(j, "undone"), i, id) {
		const char *rec = json_string_value(id);
		int64_t t;
		uint64_t b;

		if (rc)
			break;
		if ((rc = hist_mark_undone(c->hfd, rec, as)) == -ENOENT) {
			rc = 0;	/* no such record any more */
			continue;
		}
		/* its objects went back into place: its bytes again */
		if (rc == 0 && hist_info_read(c->hfd, rec, &t, &b) == 0)
			hist_info_write(c->hfd, rec, t, hist_tree_bytes(c->hfd, rec));
		else if (rc == 0)
			hist_info_put(c->hfd, rec);
	}
	if (rc == 0 && (fsync(c->hfd) || unlinkat(c->hfd, HIST_JOURNAL, 0)))
		rc = -errno;
	if (rc == 0)
		fsync(c->hfd);
	return rc;
}

int undo_replay(struct uctx *c, json_t *j)
{
	json_t *op;
	size_t i;
	int rc = 0;

	const char *f = getenv("TXFS_FAULT");
	unsigned long stop = f && !strncmp(f, "undo:", 5) ? strtoul(f + 5, NULL, 10) : 0;

	json_array_foreach(json_object_get(j, "ops"), i, op) {
		if (stop && i + 1 == stop) {	/* tests: a crash after op N-1 */
			fprintf(stderr, "txfs: fault injection: stopping at undo "
				"step %lu\n", stop);
			_exit(99);
		}
		if ((rc = undo_op(c, op))) {
			fprintf(stderr, "txfs: undo: %s %s: %s%s\n", arg(op, 0),
				arg(op, 1), strerror(-rc), rc == -EIO || rc == -ENOSPC ||
				rc == -ENOMEM ? "" : " (the real directory changed: "
				"not applied, the rest goes on)");
			if (rc == -EIO || rc == -ENOSPC || rc == -ENOMEM) {
				undo_ops_done(c);
				return rc;	/* the journal stays: retry */
			}
			if (c->failed)
				json_array_append_new(c->failed, json_integer((json_int_t)i));
			rc = 0;
		}
	}
	rc = journal_end(c, j);
	undo_ops_done(c);
	return rc;
}

/* --- an undo a crash interrupted ----------------------------------- */

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
		j = hist_load_file(c.hfd, HIST_JOURNAL);
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
