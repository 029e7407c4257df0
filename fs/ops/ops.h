/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops/ - the FUSE low-level handlers: decode a request, call the view's
 * do_*() (or a verb of session/), send exactly one reply.
 *
 * Owns: ops.c, ops_file.c and ops_dir.c (the handlers and the one
 * operations table), offload.c (requests answered from a worker thread:
 * .txfs/ctl writes, fsync).
 * May call: session/, view/, layer/, lower/. Called by: daemon/.
 *
 * ops.h - what the handler files (ops.c: lookup, attributes, namespace;
 * ops_file.c: file data; ops_dir.c: folders, statfs, xattrs) share:
 * decoding helpers and the handlers ops.c's table names from the others.
 */
#ifndef TXFS_OPS_H
#define TXFS_OPS_H

#include <errno.h>

#include "../session/session.h"

static inline struct txfs *fs_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

/* A transaction verb that waits for txlock will wait for the layer's
 * open batch too (layer/batch.c): commit it before waiting behind it. */
static inline void rdlock(struct txfs *fs)
{
	if (pthread_rwlock_tryrdlock(&fs->txlock) == 0)
		return;
	layer_batch_flush(fs->layer);
	pthread_rwlock_rdlock(&fs->txlock);
}

static inline void unlock(struct txfs *fs)
{
	pthread_rwlock_unlock(&fs->txlock);
}

static inline void reply_err(fuse_req_t req, int rc)
{
	fuse_reply_err(req, rc < 0 ? -rc : rc);
}

static inline double timeout_of(const struct tview *v)
{
	return v->virt ? 0.0 : TXFS_TIMEOUT;
}

static inline void req_ctx(fuse_req_t req, struct req_ctx *c)
{
	const struct fuse_ctx *x = fuse_req_ctx(req);

	c->uid = x->uid;
	c->gid = x->gid;
	c->pid = x->pid;
	c->umask = x->umask;
	c->kill_suidgid = false;
}

/* The node a kernel reference counts on: never re-mapped by an alias. */
static inline uint64_t node_of(const struct txfs *fs, fuse_ino_t ino)
{
	return ino == FUSE_ROOT_ID ? (uint64_t)fs->root_ino : ino;
}

/* ops_file.c */
void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
	       mode_t mode, struct fuse_file_info *fi);
void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
	     struct fuse_file_info *fi);
void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf, size_t size,
	      off_t off, struct fuse_file_info *fi);
void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi);
void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode, off_t offset,
		  off_t length, struct fuse_file_info *fi);
void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
	      struct fuse_file_info *fi);
/* Free what an unlinked layer file held once nothing holds it. */
void ops_reap_orphan(struct txfs *fs, uint64_t tino);

/* ops_dir.c */
void op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi);
void op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void op_statfs(fuse_req_t req, fuse_ino_t ino);
void op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 size_t size);
void op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name,
		 const char *value, size_t size, int flags);
void op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

/* ---- offload.c: requests answered from a worker thread ---- */

int offload_start(struct txfs *fs);
void offload_stop(struct txfs *fs);
/* Queue a .txfs/ctl write (copies buf) / an fsync; the worker replies. */
int offload_ctl(struct txfs *fs, fuse_req_t req, const char *buf,
		size_t size);
int offload_sync(struct txfs *fs, fuse_req_t req);
/* no-open: queue a forgotten orphan (view/reap.c); the worker frees the
 * queue. 0, or an error: the caller frees it itself (reap_run). */
int offload_reap(struct txfs *fs, uint64_t tino);

#endif /* TXFS_OPS_H */
