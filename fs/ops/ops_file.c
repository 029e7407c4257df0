/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops_file.c - the FUSE handlers of file data: create, open, read, write,
 * release, fsync, fallocate, lseek, and the -o noopen path that checks the
 * policy per READ and WRITE instead of at OPEN (see op_init in ops.c).
 * Split from ops.c, unchanged.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ops.h"

/* The kernel marks execve's open with __FMODE_EXEC (0x20) in the flags
 * FUSE passes on. */
#define FMODE_EXEC_FLAG 0x20

/* Opening checks the policy once: read, write, truncate, exec. */
static int open_guard(struct txfs *fs, uint64_t tino, int flags,
		      const struct req_ctx *c)
{
	char *path;
	int rc = 0;

	if (ctl_is_ino(tino))
		return 0;
	path = itab_path(fs, tino, NULL);
	if (!path && fs->opts.noopen)	/* unlinked, read through an fd */
		path = itab_orphan_path(fs, tino);
	/* every name of the object, and where it came from (issue 23) */
	if ((flags & O_ACCMODE) != O_WRONLY)
		rc = guard_ino(fs, POLICY_OP_READ, tino, path, c);
	if (!rc && ((flags & O_ACCMODE) != O_RDONLY || (flags & O_TRUNC)))
		rc = guard_ino(fs, POLICY_OP_WRITE, tino, path, c);
	if (!rc && (flags & O_TRUNC))
		rc = guard_ino(fs, POLICY_OP_TRUNCATE, tino, path, c);
	if (!rc && (flags & FMODE_EXEC_FLAG))
		rc = guard_exec(fs, path, c);
	free(path);
	return rc;
}

/* A control file: ctl.c says what it holds, the handle serves it. */
static int open_ctl(struct txfs *fs, uint64_t node, uint64_t tino,
		    int flags, struct fhandle **out)
{
	char *text;
	size_t len;
	int rc = ctl_open(fs, tino, flags, &text, &len);

	if (rc) {
		free(text);
		return rc;
	}
	return file_open_text(fs, node, tino, flags, text, len, out);
}

static int open_common(struct txfs *fs, uint64_t node, uint64_t tino,
		       struct fuse_file_info *fi, const struct req_ctx *c,
		       struct fhandle **out)
{
	struct req_ctx tc = *c;
	struct tview v;
	int rc;

	/* killpriv.c: the kernel's FUSE_OPEN_KILL_SUIDGID, for O_TRUNC */
	tc.kill_suidgid = fs->killpriv && (fi->flags & TXFS_FI_KILL);
	fi->flags &= ~TXFS_FI_KILL;
	rc = open_guard(fs, tino, fi->flags, c);

	if (rc == 0 && ctl_is_ino(tino))
		rc = open_ctl(fs, node, tino, fi->flags, out);
	else if (rc == 0)
		rc = file_open(fs, node, tino, fi->flags, out);
	if (rc)
		return rc;
	if ((*out)->virt) {
		fi->direct_io = 1;
	} else {
		fi->keep_cache = 1;
		/* O_TRUNC truncates whatever the access mode, as Linux
		 * does (the kernel checked write permission: with
		 * default_permissions, O_TRUNC asks for MAY_WRITE). Only
		 * regular files reach open with it. */
		if (fi->flags & O_TRUNC) {
			struct stat a = { .st_size = 0 };

			rc = do_setattr(fs, tino, &a, FUSE_SET_ATTR_SIZE, &tc,
					&v);
			if (rc == 0)
				tview_free(&v);
		}
	}
	if (rc) {
		itab_release(fs, node);
		file_close(fs, *out);
		return rc;
	}
	fi->fh = (uint64_t)(uintptr_t)*out;
	return 0;
}

void op_create(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	uint64_t p = ino_to_tino(fs, parent);
	struct fuse_entry_param e = { 0 };
	struct fhandle *fh;
	struct req_ctx c;
	struct tview v;
	int rc;

	/* killpriv.c hands O_TMPFILE's FUSE_TMPFILE over as a CREATE named
	 * "/", the name the kernel gives it and no create can carry */
	bool tmpfile = !strcmp(name, "/");

	req_ctx(req, &c);
	if (!tmpfile && (fi->flags & O_ACCMODE) != O_RDONLY &&
	    ((rc = guard(fs, POLICY_OP_CREATE, p, name, &c)) ||
	     (rc = guard(fs, POLICY_OP_WRITE, p, name, &c)))) {
		reply_err(req, rc);
		return;
	}
	rdlock(fs);
	if (tmpfile)
		rc = do_tmpfile(fs, p, mode, &c, &v);
	else
		rc = do_mknod(fs, p, name, S_IFREG | (mode & 07777), 0, NULL,
			      &c, &v);
	if (rc == 0)
		rc = itab_get(fs, v.tino, NULL, p, tmpfile ? NULL : name, 1);
	if (rc == 0 && tmpfile)	/* judged as "#tmpfile" until linked */
		itab_orphan_at(fs, v.tino, p, "#tmpfile");
	if (rc == 0 && fs->opts.noopen) {
		/* no handle: the kernel sends no RELEASE for a created file
		 * once no-open is on (Linux 6.18), so a handle would never
		 * be freed; its reads and writes come like any other's */
		fh = NULL;
		fi->keep_cache = 1;
		fi->fh = 0;
	} else if (rc == 0) {
		/* The file is new: it needs no check beyond the create. */
		fi->flags &= ~O_TRUNC;
		rc = file_open(fs, v.tino, v.tino, fi->flags, &fh);
		if (rc == 0) {
			fi->keep_cache = 1;
			fi->fh = (uint64_t)(uintptr_t)fh;
		} else {
			(void)itab_forget(fs, v.tino, 1);
		}
	}
	unlock(fs);
	if (rc) {
		reply_err(req, rc);
		return;
	}
	e.ino = tino_to_ino(fs, v.tino);
	e.attr = v.st;
	e.attr_timeout = e.entry_timeout = TXFS_TIMEOUT;
	if (fuse_reply_create(req, &e, fi) == -ENOENT) {
		(void)itab_forget(fs, v.tino, 1);
		if (fh) {
			itab_release(fs, v.tino);
			file_close(fs, fh);
		}
	}
	tview_free(&v);
}

void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct fhandle *fh;
	struct req_ctx c;
	int rc;

	if (fs->opts.noopen) {
		/* the kernel opens every file of the mount without asking
		 * from now on ("no-open" above) */
		reply_err(req, -ENOSYS);
		return;
	}
	req_ctx(req, &c);
	rdlock(fs);
	rc = open_common(fs, node_of(fs, ino), ino_to_tino(fs, ino), fi, &c,
			 &fh);
	unlock(fs);
	if (rc)
		reply_err(req, rc);
	else if (fuse_reply_open(req, fi) == -ENOENT) {
		itab_release(fs, fh->node);
		file_close(fs, fh);
	}
}

static struct fhandle *fh_of(struct fuse_file_info *fi)
{
	return (struct fhandle *)(uintptr_t)fi->fh;
}

/*
 * -o noopen: a READ, WRITE, fallocate or lseek without a handle (the
 * kernel sent no OPEN). The policy is checked as the open would have
 * been, for this request's access, and a handle made for this request
 * only (noopen_end). An object gone since the kernel learnt of it (a
 * rollback) answers ESTALE. Called with fs->txlock held shared.
 */
static int noopen_begin(struct txfs *fs, fuse_req_t req, fuse_ino_t ino,
			int flags, bool pages, struct fhandle **out)
{
	uint64_t node = node_of(fs, ino), tino = ino_to_tino(fs, ino);
	struct req_ctx c;
	int rc;

	*out = NULL;
	if (!fs->opts.noopen || ctl_is_ino(tino))
		return -EBADF;
	/* marked before the reply, under txlock: a rollback that collects
	 * after this request sees the mark, one before it made the object
	 * gone and this request answers ESTALE */
	if (pages)
		itab_kpages(fs, node);
	req_ctx(req, &c);
	rc = open_guard(fs, tino, flags, &c);
	if (rc == 0)
		rc = file_open(fs, node, tino, flags, out);
	return rc == -ENOENT ? -ESTALE : rc;
}

static void noopen_end(struct txfs *fs, struct fhandle *fh)
{
	if (fh) {
		itab_release(fs, fh->node);
		file_close(fs, fh);
	}
}

/* -o noopen: a read of a .txfs/ file, from the text its lookup took. */
static void read_ctl_snap(fuse_req_t req, struct txfs *fs, fuse_ino_t ino,
			  size_t size, off_t off)
{
	char *buf = malloc(size ? size : 1);
	size_t got = 0;

	if (!buf) {
		reply_err(req, -ENOMEM);
		return;
	}
	ctl_snap_read(fs, ino_to_tino(fs, ino), buf, size, off, &got);
	fuse_reply_buf(req, buf, got);
	free(buf);
}

void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct fhandle *fh = fh_of(fi), *tmp = NULL;
	size_t got = 0;
	char *buf;
	int rc;

	if (!fh && ctl_is_ino(ino_to_tino(fs, ino))) {
		read_ctl_snap(req, fs, ino, size, off);
		return;
	}
	if (fh && fh->virt) {
		size_t o = (size_t)off < fh->virt_len ? (size_t)off :
							 fh->virt_len;
		size_t n = fh->virt_len - o < size ? fh->virt_len - o : size;

		/* replied from a copy: once the kernel has the reply, the
		 * reader may close and another serving thread free the
		 * handle's text while this writev returns (the sanitizers
		 * read the buffer after the call) */
		buf = malloc(n ? n : 1);
		if (!buf) {
			reply_err(req, -ENOMEM);
			return;
		}
		memcpy(buf, fh->virt_buf + o, n);
		fuse_reply_buf(req, buf, n);
		free(buf);
		return;
	}
	buf = malloc(size ? size : 1);
	if (!buf) {
		reply_err(req, -ENOMEM);
		return;
	}
	rdlock(fs);
	rc = fh ? 0 : noopen_begin(fs, req, ino, O_RDONLY, true, &tmp);
	if (rc == 0)
		rc = file_read(fs, fh ? fh : tmp, buf, size, off, &got);
	noopen_end(fs, tmp);
	unlock(fs);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_buf(req, buf, got);
	free(buf);
}

/* Does [off, off + size) cover a whole page? Only then does a written page
 * become up to date in the kernel's cache (fuse_fill_write_pages: a folio
 * is marked up to date when the write filled it, else it is read again by
 * the next read); a folio is one page or more, so this is the weaker test. */
static bool whole_page(off_t off, size_t size)
{
	uint64_t ps = (uint64_t)getpagesize();
	uint64_t first = ((uint64_t)off + ps - 1) & ~(ps - 1);

	return first + ps <= (uint64_t)off + size;
}

void op_write(fuse_req_t req, fuse_ino_t ino, const char *buf,
		     size_t size, off_t off, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct fhandle *fh = fh_of(fi), *tmp = NULL;
	int rc;

	if (fh ? fh->virt : ctl_is_ino(ino_to_tino(fs, ino))) {
		/* a control verb is answered by the worker (offload.c) */
		rc = offload_ctl(fs, req, buf, size);
		if (rc == 0)
			return;
	} else {
		struct req_ctx c;

		req_ctx(req, &c);
		c.kill_suidgid = fs->killpriv && (fi->flags & TXFS_FI_KILL);
		rdlock(fs);
		/* a page written back while a rollback drops them (txn.c,
		 * rollback_pages, which marks them under txlock): discarded
		 * with the transaction */
		if (fi->writepage && itab_drop(fs, node_of(fs, ino))) {
			unlock(fs);
			fuse_reply_write(req, size);
			return;
		}
		rc = fh ? 0 : noopen_begin(fs, req, ino, O_WRONLY,
					   whole_page(off, size), &tmp);
		if (rc == 0)
			rc = file_write(fs, fh ? fh : tmp, buf, size, off, &c);
		noopen_end(fs, tmp);
		unlock(fs);
		/* the kernel copied the refused bytes into its cached pages
		 * before it asked (a write(2) over cached pages, or a shared
		 * mmap's write-back): drop them, so that nothing shows bytes
		 * the file does not have (off the request path: inval.c) */
		if (rc)
			inval_inode(fs, ino_to_tino(fs, ino), true);
	}
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_write(req, size);
}

/* No FLUSH handler: data is staged by every WRITE before it is answered,
 * so a close has nothing to do; libfuse answers the first FLUSH ENOSYS and
 * the kernel sends no more (fc->no_flush), one round trip less per close.
 * Locks are the kernel's (no lock handlers), so no lock owner needs it. */

/* Free what an unlinked layer file held once its last handle closes. */
void ops_reap_orphan(struct txfs *fs, uint64_t tino)
{
	(void)reap_list(fs, &tino, 1, false);
}

void op_release(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct fhandle *fh = fh_of(fi);

	(void)ino;
	if (!fh) {	/* -o noopen: a file created without a handle */
		fuse_reply_err(req, 0);
		return;
	}
	rdlock(fs);
	/* under -o noopen the kernel may still hold the file open without a
	 * handle: then its FORGET reaps it (forget_one) */
	if (itab_release(fs, fh->node) == 0 && !fh->virt &&
	    itab_held(fs, fh->node) == 0)
		ops_reap_orphan(fs, fh->tino);
	unlock(fs);
	file_close(fs, fh);
	fuse_reply_err(req, 0);
}

/* fsync and fsyncdir (ops.c's table names it for both). */
void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync,
	      struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	int rc;

	(void)ino, (void)datasync, (void)fi;
	rc = offload_sync(fs, req);	/* the worker replies when durable */
	if (rc)
		reply_err(req, rc);
}

void op_fallocate(fuse_req_t req, fuse_ino_t ino, int mode,
			 off_t off, off_t len, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct fhandle *tmp = NULL;
	struct req_ctx c;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = fi->fh ? 0 : noopen_begin(fs, req, ino, O_WRONLY, false, &tmp);
	if (rc == 0)
		rc = file_fallocate(fs, fi->fh ? fh_of(fi) : tmp, mode, off,
				    len, &c);
	noopen_end(fs, tmp);
	unlock(fs);
	reply_err(req, rc);
}

void op_lseek(fuse_req_t req, fuse_ino_t ino, off_t off, int whence,
		     struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct fhandle *tmp = NULL;
	off_t pos;
	int rc;

	if (whence != SEEK_DATA && whence != SEEK_HOLE) {
		reply_err(req, -EINVAL);
		return;
	}
	if (!fi->fh && ctl_is_ino(ino_to_tino(fs, ino))) {
		/* -o noopen: a .txfs/ file's text is all data */
		off_t end = (off_t)ctl_snap_size(fs, ino_to_tino(fs, ino));

		if (off < 0 || off >= end)
			reply_err(req, -ENXIO);
		else
			fuse_reply_lseek(req, whence == SEEK_DATA ? off : end);
		return;
	}
	rdlock(fs);
	rc = fi->fh ? 0 : noopen_begin(fs, req, ino, O_RDONLY, false, &tmp);
	if (rc == 0)
		rc = file_seek(fs, fi->fh ? fh_of(fi) : tmp, off, whence,
			       &pos);
	noopen_end(fs, tmp);
	unlock(fs);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_lseek(req, pos);
}

