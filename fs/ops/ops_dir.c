/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops_dir.c - the FUSE handlers for folders (opendir, readdir,
 * readdirplus, releasedir; fsyncdir is op_fsync), statfs and extended
 * attributes.
 * Same rules as ops.c: decode, check, one do_*() call, exactly one reply.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "ops.h"

/* ---- folders ---- */

void op_opendir(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	uint64_t tino = ino_to_tino(fs, ino);
	struct dir_handle *dh;
	struct req_ctx c;
	int rc = 0;

	req_ctx(req, &c);
	if (!ctl_is_ino(tino)) {	/* listing a folder reads it */
		char *path = itab_path(fs, node_of(fs, ino), NULL);

		rc = guard_path(fs, POLICY_OP_READ, path, &c);
		free(path);
	}
	if (rc) {
		reply_err(req, rc);
		return;
	}
	dh = calloc(1, sizeof(*dh));
	if (!dh) {
		reply_err(req, -ENOMEM);
		return;
	}
	pthread_mutex_init(&dh->lock, NULL);
	fi->fh = (uint64_t)(uintptr_t)dh;
	if (!ctl_is_ino(tino)) {
		fi->cache_readdir = 1;
		fi->keep_cache = 1;
	}
	if (fuse_reply_open(req, fi) == -ENOENT) {
		pthread_mutex_destroy(&dh->lock);
		free(dh);
	}
}

void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size,
		       off_t off, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	char *buf = malloc(size);
	size_t pos = 0;
	int rc = 0;

	if (!buf) {
		reply_err(req, -ENOMEM);
		return;
	}
	pthread_mutex_lock(&dh->lock);
	if (off == 0 || !dh->loaded) {
		rdlock(fs);
		rc = dir_load(fs, ino_to_tino(fs, ino), dh);
		unlock(fs);
	}
	for (size_t i = (size_t)off; rc == 0 && i < dh->n; i++) {
		struct stat st = { .st_ino = dh->ents[i].tino,
				   .st_mode = dh->ents[i].type };
		size_t n = fuse_add_direntry(req, buf + pos, size - pos,
					     dh->ents[i].name, &st,
					     (off_t)(i + 1));

		if (n > size - pos)
			break;
		pos += n;
	}
	pthread_mutex_unlock(&dh->lock);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, pos);
	free(buf);
}

/*
 * readdirplus: each entry comes with its attributes, so `ls -l`, `git
 * status` and `find` need no lookup per name. Every entry but . and ..
 * that is sent takes a kernel reference, like a lookup.
 */
static size_t add_plus(fuse_req_t req, struct txfs *fs, struct layer_txn *t,
		       const struct tview *dir, const struct dir_entry *e,
		       char *buf, size_t room, off_t next)
{
	struct fuse_entry_param ep = { 0 };
	bool dot = !strcmp(e->name, ".") || !strcmp(e->name, "..");
	struct tview v;
	uint64_t node;
	size_t n;

	if (dot || view_lookup(fs, t, dir, e->name, &v)) {
		/* . and .., or a name gone since the listing: no reference */
		ep.attr.st_ino = e->tino;
		ep.attr.st_mode = e->type;
		return fuse_add_direntry_plus(req, buf, room, e->name, &ep,
					      next);
	}
	if (v.virt && fs->opts.noopen && !S_ISDIR(v.st.st_mode)) {
		/* -o noopen: a .txfs/ file is a new node at each lookup
		 * (ctl_snap_take); node id 0 gives the kernel no entry */
		tview_free(&v);
		ep.attr.st_ino = e->tino;
		ep.attr.st_mode = e->type;
		return fuse_add_direntry_plus(req, buf, room, e->name, &ep,
					      next);
	}
	node = itab_shown(fs, v.tino);
	view_blocks(fs, t, &v);
	ep.ino = tino_to_ino(fs, node);
	ep.attr = v.st;
	view_hide_counts(fs, &ep.attr);
	ep.attr_timeout = timeout_of(&v);
	ep.entry_timeout = TXFS_TIMEOUT;
	n = fuse_add_direntry_plus(req, buf, room, e->name, &ep, next);
	if (n <= room && itab_get(fs, node, node == v.tino ? v.lower_path :
				  NULL, dir->tino, e->name, 1))
		n = room + 1;	/* cannot take the reference: stop here */
	tview_free(&v);
	return n;
}

void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size,
			   off_t off, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;
	uint64_t tino = ino_to_tino(fs, ino);
	struct layer_txn *t = NULL;
	struct tview dir = { 0 };
	char *buf = malloc(size);
	size_t pos = 0;
	int rc = 0;

	if (!buf) {
		reply_err(req, -ENOMEM);
		return;
	}
	pthread_mutex_lock(&dh->lock);
	rdlock(fs);
	if (off == 0 || !dh->loaded)
		rc = dir_load(fs, tino, dh);
	if (rc == 0 && (rc = layer_begin(fs->layer, false, &t)) == 0)
		rc = view_inode(fs, t, tino, &dir);
	for (size_t i = (size_t)off; rc == 0 && i < dh->n; i++) {
		size_t n = add_plus(req, fs, t, &dir, &dh->ents[i], buf + pos,
				    size - pos, (off_t)(i + 1));

		if (n > size - pos)
			break;
		pos += n;
	}
	tview_free(&dir);
	layer_txn_end(t);
	unlock(fs);
	pthread_mutex_unlock(&dh->lock);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, pos);
	free(buf);
}

void op_releasedir(fuse_req_t req, fuse_ino_t ino,
			  struct fuse_file_info *fi)
{
	struct dir_handle *dh = (struct dir_handle *)(uintptr_t)fi->fh;

	(void)ino;
	dir_free(dh);
	pthread_mutex_destroy(&dh->lock);
	free(dh);
	fuse_reply_err(req, 0);
}

void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct txfs *fs = fs_of(req);
	struct statvfs sv;

	(void)ino;
	if (fstatvfs(fs->rootfd, &sv))
		reply_err(req, -errno);
	else
		fuse_reply_statfs(req, &sv);
}

/* ---- xattrs ---- */

static void reply_xattr(fuse_req_t req, int rc, size_t size, char *buf,
			size_t len)
{
	if (rc)
		reply_err(req, rc);
	else if (size == 0)
		fuse_reply_xattr(req, len);
	else
		fuse_reply_buf(req, buf, len);
}

void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			size_t size)
{
	struct txfs *fs = fs_of(req);
	char *buf = size ? malloc(size) : NULL;
	size_t len = 0;
	int rc = size && !buf ? -ENOMEM : 0;

	rdlock(fs);
	if (rc == 0)
		rc = do_getxattr(fs, ino_to_tino(fs, ino), name, buf, size,
				 &len);
	unlock(fs);
	reply_xattr(req, rc, size, buf, len);
	free(buf);
}

void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct txfs *fs = fs_of(req);
	char *buf = size ? malloc(size) : NULL;
	size_t len = 0;
	int rc = size && !buf ? -ENOMEM : 0;

	rdlock(fs);
	if (rc == 0)
		rc = do_listxattr(fs, ino_to_tino(fs, ino), buf, size, &len);
	unlock(fs);
	reply_xattr(req, rc, size, buf, len);
	free(buf);
}

void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
			const char *value, size_t size, int flags)
{
	struct txfs *fs = fs_of(req);
	struct req_ctx c;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = do_setxattr(fs, ino_to_tino(fs, ino), name, value, size, flags,
			 &c);
	unlock(fs);
	reply_err(req, rc);
}

void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct txfs *fs = fs_of(req);
	struct req_ctx c;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = do_removexattr(fs, ino_to_tino(fs, ino), name, &c);
	unlock(fs);
	reply_err(req, rc);
}

