/* SPDX-License-Identifier: Apache-2.0 */
/*
 * attr.c - attributes (chmod, chown, truncate, utimens) and xattrs.
 *
 * Attributes of a changed object live in its layer record. Extended
 * attributes of a real object are read from the real file until the first
 * change; then its user.* attributes are copied into the layer and the
 * record says so (LI_XATTRS), and the layer holds the whole set from then
 * on. security.* and trusted.* attributes from the agent are refused (they
 * could carry privilege into the real directory at commit); system.* (ACLs)
 * is not supported.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "view.h"

static void apply_times(struct layer_inode *rec, const struct stat *a,
			int valid)
{
	int64_t now = now_ns();

	if (valid & FUSE_SET_ATTR_ATIME_NOW)
		rec->atime_ns = now;
	else if (valid & FUSE_SET_ATTR_ATIME)
		rec->atime_ns = ts_ns(a->st_atim);
	if (valid & FUSE_SET_ATTR_MTIME_NOW)
		rec->mtime_ns = now;
	else if (valid & FUSE_SET_ATTR_MTIME)
		rec->mtime_ns = ts_ns(a->st_mtim);
}

/* chmod, chown, truncate (a write too) and utimens (a write). */
static int setattr_guard(struct txfs *fs, uint64_t tino, int valid,
			 const struct req_ctx *c)
{
	char *path = itab_path(fs, tino, NULL);
	int rc = 0;

	if (valid & FUSE_SET_ATTR_MODE)
		rc = guard_ino(fs, POLICY_OP_CHMOD, tino, path, c);
	if (!rc && (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)))
		rc = guard_ino(fs, POLICY_OP_CHOWN, tino, path, c);
	if (!rc && (valid & FUSE_SET_ATTR_SIZE))
		rc = guard_ino(fs, POLICY_OP_TRUNCATE, tino, path, c);
	if (!rc && (valid & (FUSE_SET_ATTR_SIZE | FUSE_SET_ATTR_ATIME |
			     FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME_NOW |
			     FUSE_SET_ATTR_MTIME_NOW)))
		rc = guard_ino(fs, POLICY_OP_WRITE, tino, path, c);
	free(path);
	return rc;
}

/*
 * FUSE_HANDLE_KILLPRIV_V2 (killpriv.c): which rule a SETATTR asks for.
 * The kernel sets FATTR_KILL_SUIDGID (libfuse's FUSE_SET_ATTR_KILL_SUID)
 * on every chown/chgrp of a non-folder, and on a truncate by a caller
 * without CAP_FSETID; O_TRUNC's open passes its own flag in c. What the
 * VFS strips before asking, a SETATTR with nothing to set, is its
 * file_remove_privs (fallocate by a caller without CAP_FSETID) or a
 * chown(-1, -1): the chown rule covers both (it takes what the write
 * rule takes from a caller without CAP_FSETID). Folders keep their bits.
 */
static bool setattr_kill(struct tview *v, const struct stat *a, int valid,
			 const struct req_ctx *c)
{
	const int own = FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID;
	gid_t newgid = valid & FUSE_SET_ATTR_GID ? a->st_gid : v->rec.gid;

	if (S_ISDIR(v->rec.mode))
		return false;
	if ((valid & own) && (valid & FUSE_SET_ATTR_KILL_SUID))
		return killpriv_chown(c, v->rec.gid, newgid, &v->rec.mode);
	if (!S_ISREG(v->rec.mode))
		return false;
	if ((valid & FUSE_SET_ATTR_KILL_SUID) || c->kill_suidgid)
		return killpriv_write(c, v->rec.gid, &v->rec.mode);
	if ((valid & ~FUSE_SET_ATTR_CTIME) == 0)
		return killpriv_chown(c, v->rec.gid, v->rec.gid, &v->rec.mode);
	return false;
}

int do_setattr(struct txfs *fs, uint64_t tino, const struct stat *a,
	       int valid, const struct req_ctx *c, struct tview *v)
{
	struct layer_txn *t;
	bool killed = false;
	int rc;

	memset(v, 0, sizeof(*v));
	if ((rc = setattr_guard(fs, tino, valid, c)))
		return rc;
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if ((rc = view_inode(fs, t, tino, v)) ||
	    (rc = guard_copy_up(fs, t, v)))
		goto out;
	if (valid & FUSE_SET_ATTR_SIZE) {
		if (S_ISDIR(v->rec.mode))
			rc = -EISDIR;
		else if (!S_ISREG(v->rec.mode))
			rc = -EINVAL;
		else
			rc = file_truncate(fs, t, v, (uint64_t)a->st_size, c);
		if (rc)
			goto out;
	}
	if (valid & FUSE_SET_ATTR_MODE)
		v->rec.mode = (v->rec.mode & S_IFMT) | (a->st_mode & 07777);
	else if (fs->killpriv && c)
		killed = setattr_kill(v, a, valid, c);
	if (valid & FUSE_SET_ATTR_UID)
		v->rec.uid = a->st_uid;
	if (valid & FUSE_SET_ATTR_GID)
		v->rec.gid = a->st_gid;
	apply_times(&v->rec, a, valid);
	touch_c(&v->rec);
	if (valid & FUSE_SET_ATTR_CTIME)
		v->rec.ctime_ns = ts_ns(a->st_ctim);
	rec_to_stat(tino, &v->rec, &v->st);
	rc = layer_inode_update(t, tino, &v->rec);
out:
	if (rc == 0) {
		rc = layer_commit(t);
		/* O_TRUNC's open reply carries no mode (killpriv.c) */
		if (rc == 0 && killed)
			killpriv_notify(fs, itab_shown(fs, tino));
		return rc;
	}
	layer_txn_end(t);
	tview_free(v);
	return rc;
}

/* --- extended attributes ------------------------------------------- */

static bool xname_settable(const char *name)
{
	return strncmp(name, "user.", 5) == 0;
}

/* A file capability of a real file may go (it takes privilege away): the
 * kernel removes it on write, truncate and chown (killpriv.c). The layer
 * never holds one, so a copy-up of the xattrs is its removal. */
static bool xname_removable(const char *name)
{
	return strcmp(name, "security.capability") == 0;
}

/* getxattr/listxattr on the real object (regular files and folders). */
static ssize_t lower_xattr(struct txfs *fs, const struct tview *v,
			   const char *name, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	if (!v->lower_path || (!S_ISREG(v->st.st_mode) &&
			       !S_ISDIR(v->st.st_mode)))
		return name ? -ENODATA : 0;
	fd = lower_open(fs, v->lower_path, O_PATH);
	if (fd < 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = name ? getxattr(path, name, buf, size) :
		   listxattr(path, buf, size);
	if (n < 0)
		n = -errno;
	close(fd);
	if (n == -ENOTSUP)
		n = name ? -ENODATA : 0;
	return n;
}

static bool layer_has_xattrs(const struct tview *v)
{
	return v->in_layer && ((v->rec.flags & LI_XATTRS) ||
			       !(v->rec.flags & LI_LOWER));
}

/* Copy the real object's user.* xattrs into the layer once. */
static int xattr_copy_up(struct txfs *fs, struct layer_txn *t,
			 struct tview *v)
{
	char *list = NULL, *val = NULL;
	ssize_t n;
	int rc;

	if ((rc = guard_copy_up(fs, t, v)) || layer_has_xattrs(v))
		return rc;
	n = lower_xattr(fs, v, NULL, NULL, 0);
	if (n > 0 && (list = malloc((size_t)n)) && (val = malloc(65536)))
		n = lower_xattr(fs, v, NULL, list, (size_t)n);
	else if (n > 0)
		n = -ENOMEM;
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(list + i) + 1) {
		ssize_t vl;

		if (!xname_settable(list + i))
			continue;
		vl = lower_xattr(fs, v, list + i, val, 65536);
		if (vl < 0 && vl != -ENODATA) {
			n = vl;
			break;
		}
		if (vl >= 0 && (rc = layer_xattr_put(t, v->tino, list + i, val,
						     (size_t)vl)))
			break;
	}
	free(list);
	free(val);
	if (rc || n < 0)
		return rc ? rc : (int)n;
	v->rec.flags |= LI_XATTRS;
	return layer_inode_update(t, v->tino, &v->rec);
}

int do_getxattr(struct txfs *fs, uint64_t tino, const char *name, char *buf,
		size_t size, size_t *len)
{
	struct layer_txn *t;
	struct tview v;
	const void *val;
	ssize_t n;
	int rc;

	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	if ((rc = view_inode(fs, t, tino, &v)))
		goto out_txn;
	if (layer_has_xattrs(&v)) {
		rc = layer_xattr_get(t, tino, name, &val, len);
		if (rc == -ENOENT)
			rc = -ENODATA;
		else if (rc == 0 && size && *len > size)
			rc = -ERANGE;
		else if (rc == 0 && size)
			memcpy(buf, val, *len);
	} else {
		n = lower_xattr(fs, &v, name, buf, size);
		rc = n < 0 ? (int)n : 0;
		*len = n < 0 ? 0 : (size_t)n;
	}
	tview_free(&v);
out_txn:
	layer_txn_end(t);
	return rc;
}

struct list_ctx {
	char *buf;
	size_t size, len;
};

static int list_one(void *arg, const char *name, const void *val, size_t l)
{
	struct list_ctx *c = arg;
	size_t n = strlen(name) + 1;

	(void)val, (void)l;
	if (c->size && c->len + n > c->size)
		return -ERANGE;
	if (c->size)
		memcpy(c->buf + c->len, name, n);
	c->len += n;
	return 0;
}

int do_listxattr(struct txfs *fs, uint64_t tino, char *buf, size_t size,
		 size_t *len)
{
	struct list_ctx c = { buf, size, 0 };
	struct layer_txn *t;
	struct tview v;
	ssize_t n;
	int rc;

	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	if ((rc = view_inode(fs, t, tino, &v)))
		goto out_txn;
	if (layer_has_xattrs(&v)) {
		rc = layer_xattr_each(t, tino, list_one, &c);
		*len = c.len;
	} else {
		n = lower_xattr(fs, &v, NULL, buf, size);
		rc = n < 0 ? (int)n : 0;
		*len = n < 0 ? 0 : (size_t)n;
	}
	tview_free(&v);
out_txn:
	layer_txn_end(t);
	return rc;
}

static int xattr_change(struct txfs *fs, uint64_t tino, const char *name,
			const char *val, size_t size, int flags, bool remove,
			const struct req_ctx *c)
{
	struct layer_txn *t;
	struct tview v;
	const void *old;
	size_t olen;
	char *path;
	bool had;
	int rc;

	if (!xname_settable(name) && !(remove && xname_removable(name)))
		return strncmp(name, "system.", 7) ? -EPERM : -EOPNOTSUPP;
	path = itab_path(fs, tino, NULL);
	rc = guard_ino(fs, POLICY_OP_XATTR, tino, path, c);
	free(path);
	if (rc)
		return rc;
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if ((rc = view_inode(fs, t, tino, &v)))
		goto out_txn;
	if (v.virt || S_ISLNK(v.st.st_mode)) {
		rc = v.virt ? -EPERM : -EOPNOTSUPP;
		goto out;
	}
	had = !layer_has_xattrs(&v) && lower_xattr(fs, &v, name, NULL, 0) >= 0;
	if ((rc = xattr_copy_up(fs, t, &v)))
		goto out;
	if (!xname_settable(name))	/* gone with the copy-up */
		rc = had ? 0 : -ENODATA;
	else
		rc = layer_xattr_get(t, tino, name, &old, &olen);
	if (rc == 0 && (flags & XATTR_CREATE))
		rc = -EEXIST;
	else if (rc == -ENOENT)
		rc = (remove || (flags & XATTR_REPLACE)) ? -ENODATA : 0;
	if (rc == 0 && xname_settable(name))
		rc = remove ? layer_xattr_del(t, tino, name) :
			      layer_xattr_put(t, tino, name, val, size);
	if (rc == 0) {
		touch_c(&v.rec);
		rc = layer_inode_update(t, tino, &v.rec);
	}
out:
	tview_free(&v);
	if (rc == 0)
		return layer_commit(t);
out_txn:
	layer_txn_end(t);
	return rc;
}

int do_setxattr(struct txfs *fs, uint64_t tino, const char *name,
		const char *val, size_t size, int flags,
		const struct req_ctx *c)
{
	return xattr_change(fs, tino, name, val, size, flags, false, c);
}

int do_removexattr(struct txfs *fs, uint64_t tino, const char *name,
		   const struct req_ctx *c)
{
	return xattr_change(fs, tino, name, NULL, 0, 0, true, c);
}
