/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops.c - the FUSE low-level handlers of lookup, attributes and the
 * namespace (file data is in ops_file.c, folders and xattrs in ops_dir.c)
 * and the one operations table.
 *
 * Each handler decodes its request, takes fs->txlock shared (commit and
 * rollback take it exclusive), calls one do_*() / file_*() function that
 * returns 0 or a negative errno, and sends exactly one reply. Only the
 * reply helpers here turn an errno into what fuse_reply_err() wants.
 *
 * Caching: the mount is the only way into the workspace, so entries
 * (positive and negative) and attributes are cached for TXFS_TIMEOUT and
 * file pages are kept across opens; whatever changes behind the kernel's
 * back (commit, rollback) is invalidated explicitly (inval.c). The .txfs/
 * files are never cached.
 */
#include <errno.h>
#include <stdio.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "ops.h"

/* Reply with an entry for v, found as `name` in `parent`; takes one
 * kernel reference on the node. */
static void reply_entry(fuse_req_t req, struct txfs *fs, uint64_t parent,
			const char *name, struct tview *v)
{
	struct fuse_entry_param e = { 0 };
	uint64_t node = itab_shown(fs, v->tino);
	int rc = itab_get(fs, node, node == v->tino ? v->lower_path : NULL,
			  parent, name, 1);

	if (rc) {
		reply_err(req, rc);
		return;
	}
	view_blocks_now(fs, v);
	e.ino = tino_to_ino(fs, node);
	e.attr = v->st;
	view_hide_counts(fs, &e.attr);
	e.attr_timeout = timeout_of(v);
	/* -o noopen: each lookup of a .txfs/ file is a new node with its
	 * text taken now (ctl_snap_take); a cached entry would keep the old */
	e.entry_timeout = v->virt && fs->opts.noopen ? 0.0 : TXFS_TIMEOUT;
	if (fuse_reply_entry(req, &e) == -ENOENT) {
		(void)itab_forget(fs, node, 1);	/* interrupted */
		if (ctl_is_ino(node))
			ctl_snap_forget(fs, node);
	}
}

/*
 * A name the layer whites out (a deleted real object) is answered with
 * no cache lifetime: the kernel never holds a valid entry for it (its own
 * unlink, rmdir and rename expire the old name's dentry too), so the
 * rollback and the commit that end the whiteout send no invalidation per
 * deleted name (111,000 names after a mass deletion: ~0.6 s of
 * notifications), only one for the folder's listing (txn.c, il_collect).
 * A repeated lookup of a deleted name costs a LOOKUP each time instead.
 */
static void reply_negative(fuse_req_t req, bool whiteout)
{
	struct fuse_entry_param e = { 0 };

	e.entry_timeout = whiteout ? 0.0 : TXFS_TIMEOUT;
	fuse_reply_entry(req, &e);
}

/* ---- init ---- */

/*
 * Capabilities (issue 11; bench/results/2026-11-23-requests.md has the
 * numbers, bench/tools/reqstats measures them). Taken:
 *  - ASYNC_READ (libfuse's default, stated): readahead READs may be
 *    queued while others are pending.
 *  - READDIRPLUS for every listing call, not READDIRPLUS_AUTO: with AUTO
 *    the kernel asks for attributes only in a folder's first call (one
 *    buffer, ~400 names), and a `find -newer` of 1,000-name folders then
 *    sent a LOOKUP for each name past it: 59,301 LOOKUPs for 100,000
 *    real files (W9, bench/results/2026-11-24-W9.md), 1 without AUTO,
 *    daemon time per file about halved. Folders that fit one buffer
 *    (most) are listed the same either way; the EOF call becomes an
 *    empty READDIRPLUS (a few µs).
 *  - max_write 1 MiB: libfuse asks the kernel for max_pages to match
 *    (FUSE_MAX_PAGES): a 1 MiB write(2) is one WRITE.
 *  - CACHE_SYMLINKS, EXPLICIT_INVAL_DATA (commit/rollback invalidate).
 *  - no FLUSH handler (the comment after op_write): one request less
 *    per close.
 *  - HANDLE_KILLPRIV_V2 (fs/view/killpriv.c; libfuse 3.14 cannot ask for it,
 *    so a custom io adds it to the INIT reply): the kernel marks inodes
 *    S_NOSEC and stops asking GETXATTR security.capability before every
 *    WRITE (only once after each attribute refresh), and sends no GETATTR
 *    before a chown; the daemon clears set-uid/set-gid on WRITE, O_TRUNC,
 *    truncate and fallocate when the kernel says the caller lacks
 *    CAP_FSETID, and on every chown of a non-folder (killpriv.c's rules)
 *    (W1 tar x: 11.39 -> 10.16 requests a file; W3: GETXATTR 10.2 -> 7.1
 *    per cc -c; bench/results/2026-11-24-requests-2.md).
 * Not taken, and why:
 *  - PARALLEL_DIROPS: one thread serves the session by default, so
 *    lookups in one folder cannot be answered in parallel anyway. Asking
 *    for it here changes nothing: libfuse 3.14 leaves FUSE_PARALLEL_DIROPS
 *    out of its INIT reply even when conn->want has it (checked on the
 *    reply's bytes, bench/results/2026-11-26-speed-2.md, which also has
 *    its counts with the bit added by a custom io); the older W3 note
 *    ("~2.4 LOOKUP/FORGET more per cc -c") cannot have measured it.
 *  - SPLICE_READ/WRITE/MOVE: written data is copied into LMDB pages and
 *    read data comes out of LMDB pages or a pread into a buffer; a pipe
 *    in between adds syscalls and saves no copy.
 *  - NO_OPEN_SUPPORT, by default: it is all or nothing for the mount (the
 *    first OPEN answered ENOSYS sets the kernel's fc->no_open), and no
 *    request then shows an execve, so `exec deny` rules cannot be checked.
 *    It is the -o noopen option instead ("no-open" below).
 *  - NO_OPENDIR_SUPPORT: opendir checks the policy's read rule and its
 *    handle holds the listing a readdir pages through.
 *  - HANDLE_KILLPRIV (v1): the daemon would have to clear set-uid bits on
 *    every write without knowing the writer's CAP_FSETID, and the kernel
 *    still asks GETXATTR per write; V2 above tells the daemon when.
 *  - AUTO_INVAL_DATA: nothing changes behind the kernel's back but commit
 *    and rollback, which invalidate explicitly. (It is not what costs W7
 *    warm its GETATTR a file: that is the atime the kernel marks stale
 *    after every READ reply, fuse_invalidate_atime(), asked once by the
 *    next fstat; a third pass has none. Only a read-only mount skips it.)
 *  - WRITEBACK_CACHE (libfuse does not ask for it by default): measured
 *    and dropped (bench/results/2026-11-24-writeback.md). Only 4 KiB
 *    random writes gain (~2x); W1 and W6 make more requests (a SETATTR
 *    per file for the kernel's mtime), W3 fewer but no faster. It is not
 *    correct here yet: the kernel owns a cached file's size, so after a
 *    rollback a file keeps its staged size (zeros past the real end)
 *    until evicted, and write(2)-accepted data dies with the daemon. A
 *    correct version needs every rolled-back file to become a new kernel
 *    inode (a new generation in its entries: the kernel marks the old
 *    inode bad, so its late write-backs fail, and reads the size afresh)
 *    and a syncfs of the mount before commit and rollback; txfs writes
 *    through instead.
 */
/*
 * no-open (-o noopen). OPEN is answered ENOSYS: the kernel then opens and
 * closes every file of the mount without a request (no OPEN, no RELEASE;
 * a build's header opens were 91 % of its requests, W3 1.24x -> 1.01x:
 * bench/results/2026-11-24-noopen.md). What OPEN and RELEASE did moves:
 *  - the policy's read, write and truncate checks: to each READ, WRITE,
 *    fallocate and lseek (noopen_begin), and to the SETATTR that
 *    open(O_TRUNC) becomes once ATOMIC_O_TRUNC is not taken (op_init);
 *    an open of a denied file succeeds and its first read or write fails.
 *    A policy reload drops every cached page (guard.c), so that no read of
 *    a page cached under the old policy skips the new one;
 *  - `exec deny`: nothing shows an exec, so a policy with such rules is
 *    refused at mount and at reload (guard.c);
 *  - an unlinked file stays readable while the kernel holds it (every
 *    open fd holds the kernel's inode, so its lookup count stays up):
 *    itab_held counts the kernel's references, dir.c keeps the object as
 *    an orphan and its FORGET frees it (forget_one);
 *  - ESTALE after a rollback: a request on a node whose object is gone
 *    answers it. The kernel keeps pages across opens, so the rollback
 *    waits for the pages of every layer-born file it may hold up-to-date
 *    pages of, open or not (itab_kpages: a READ answered, a WRITE that
 *    covered a whole page); the other files it knows cost no wait (their
 *    attributes are dropped after the answer): any read of them is a
 *    request, answered ESTALE (ilist.c);
 *  - .txfs/ files: a lookup takes the text (ctl_snap_take) under a node id
 *    of its own, never cached, read through the page cache and freed at
 *    FORGET; a write to ctl is a verb as before.
 * CREATE makes no handle either: once no-open is on, the kernel sends
 * no RELEASE for a created file (Linux 6.18), so its handle would never
 * be freed; the created file's writes come like any other's.
 */
static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	struct txfs *fs = userdata;

	/* -o noopen: with ATOMIC_O_TRUNC the kernel leaves open(O_TRUNC)'s
	 * truncation to the OPEN it will not send, and the file keeps its
	 * bytes; without it the kernel sends a SETATTR, which the policy's
	 * truncate rules and `limit deletes` check */
	if (fs->opts.noopen)
		conn->want &= ~(unsigned)FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned)FUSE_CAP_HANDLE_KILLPRIV;
	conn->want &= ~(unsigned)FUSE_CAP_AUTO_INVAL_DATA;
	conn->want &= ~(unsigned)(FUSE_CAP_PARALLEL_DIROPS |
				  FUSE_CAP_SPLICE_READ |
				  FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
	if (conn->capable & FUSE_CAP_ASYNC_READ)
		conn->want |= FUSE_CAP_ASYNC_READ;
	if (conn->capable & FUSE_CAP_CACHE_SYMLINKS)
		conn->want |= FUSE_CAP_CACHE_SYMLINKS;
	if (conn->capable & FUSE_CAP_EXPLICIT_INVAL_DATA)
		conn->want |= FUSE_CAP_EXPLICIT_INVAL_DATA;
	if (conn->capable & FUSE_CAP_READDIRPLUS) {
		conn->want |= FUSE_CAP_READDIRPLUS;
		conn->want &= ~(unsigned)FUSE_CAP_READDIRPLUS_AUTO;
	}
	conn->max_write = 1u << 20;
	conn->max_readahead = 1u << 20;
}

/* ---- lookup and attributes ---- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct txfs *fs = fs_of(req);
	uint64_t p = ino_to_tino(fs, parent);
	struct layer_txn *t;
	struct tview dir, v = { 0 };
	int rc;

	rdlock(fs);
	if ((rc = layer_begin(fs->layer, false, &t)))
		goto out;
	rc = view_folder(fs, t, p, &dir);
	if (rc == 0) {
		rc = view_lookup(fs, t, &dir, name, &v);
		tview_free(&dir);
	}
	layer_txn_end(t);
	if (rc == 0 && v.virt && S_ISREG(v.st.st_mode) && fs->opts.noopen)
		rc = ctl_snap_take(fs, &v);
	if (rc == 0) {
		reply_entry(req, fs, p, name, &v);
		tview_free(&v);
	} else if (rc == -ENOENT) {
		reply_negative(req, v.whiteout);
	}
out:
	unlock(fs);
	if (rc && rc != -ENOENT)
		reply_err(req, rc);
}

/* The kernel's last reference to a node: under no-open an unlinked file
 * it held (itab_orphan) loses its layer data now, through the offload
 * worker's queue (view/reap.c). */
static void forget_one(struct txfs *fs, fuse_ino_t ino, uint64_t n)
{
	uint64_t node = node_of(fs, ino), orphan;

	if (ctl_is_ino(node))
		ctl_snap_forget(fs, node);
	orphan = itab_forget(fs, node, n);
	if (orphan && offload_reap(fs, orphan)) {
		rdlock(fs);	/* not queued, or no worker: free it now */
		(void)reap_run(fs);
		ops_reap_orphan(fs, orphan);
		unlock(fs);
	}
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t n)
{
	forget_one(fs_of(req), ino, n);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count,
			    struct fuse_forget_data *list)
{
	struct txfs *fs = fs_of(req);

	for (size_t i = 0; i < count; i++)
		forget_one(fs, list[i].ino, list[i].nlookup);
	fuse_reply_none(req);
}

static int get_view(struct txfs *fs, uint64_t tino, struct tview *v)
{
	struct layer_txn *t;
	int rc = layer_begin(fs->layer, false, &t);

	if (rc)
		return rc;
	rc = view_inode(fs, t, tino, v);
	if (rc == 0)
		view_blocks(fs, t, v);
	layer_txn_end(t);
	return rc;
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino,
		       struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	struct tview v;
	int rc;

	(void)fi;
	rdlock(fs);
	rc = get_view(fs, ino_to_tino(fs, ino), &v);
	unlock(fs);
	if (rc) {
		reply_err(req, rc);
		return;
	}
	if (v.virt && fs->opts.noopen)
		v.st.st_size = (off_t)ctl_snap_size(fs, v.tino);
	view_hide_counts(fs, &v.st);
	fuse_reply_attr(req, &v.st, timeout_of(&v));
	tview_free(&v);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr,
		       int to_set, struct fuse_file_info *fi)
{
	struct txfs *fs = fs_of(req);
	uint64_t tino = ino_to_tino(fs, ino);
	struct req_ctx c;
	struct tview v;
	int rc;

	(void)fi;
	req_ctx(req, &c);
	rdlock(fs);
	if (ctl_is_ino(tino)) {
		/* `> .txfs/ctl` truncates: accept, change nothing. Under
		 * -o noopen that truncation is a SETATTR with the times (and,
		 * for a caller without CAP_FSETID, killpriv's bit) beside the
		 * size: only a change of mode or owner is refused. */
		rc = (to_set & FUSE_SET_ATTR_SIZE) &&
			     !(to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID |
					 FUSE_SET_ATTR_GID)) ?
			     ctl_view(tino, &v) :
			     -EPERM;
	} else {
		rc = do_setattr(fs, tino, attr, to_set, &c, &v);
		if (rc == 0)
			view_blocks_now(fs, &v);
	}
	unlock(fs);
	if (rc) {
		reply_err(req, rc);
		return;
	}
	view_hide_counts(fs, &v.st);
	fuse_reply_attr(req, &v.st, timeout_of(&v));
	tview_free(&v);
}

static void op_readlink(fuse_req_t req, fuse_ino_t ino)
{
	struct txfs *fs = fs_of(req);
	char buf[4097];
	struct tview v;
	int rc;

	rdlock(fs);
	/* CACHE_SYMLINKS: the kernel keeps the target in a page, which an
	 * O_PATH fd reads again after a rollback unless it is dropped */
	itab_kpages(fs, node_of(fs, ino));
	rc = get_view(fs, ino_to_tino(fs, ino), &v);
	if (rc == 0 && !S_ISLNK(v.st.st_mode))
		rc = -EINVAL;
	if (rc == 0 && v.in_layer) {
		snprintf(buf, sizeof(buf), "%s", v.link ? v.link : "");
	} else if (rc == 0) {
		rc = lower_readlink(fs, v.lower_path, buf, sizeof(buf) - 1);
		if (rc >= 0) {
			buf[rc] = '\0';
			rc = 0;
		}
	}
	if (rc == 0)
		tview_free(&v);
	unlock(fs);
	if (rc)
		reply_err(req, rc);
	else
		fuse_reply_readlink(req, buf);
}

/* ---- namespace ---- */

static void make_node(fuse_req_t req, fuse_ino_t parent, const char *name,
		      mode_t mode, dev_t rdev, const char *link)
{
	struct txfs *fs = fs_of(req);
	uint64_t p = ino_to_tino(fs, parent);
	struct req_ctx c;
	struct tview v;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = do_mknod(fs, p, name, mode, rdev, link, &c, &v);
	if (rc == 0) {
		reply_entry(req, fs, p, name, &v);
		tview_free(&v);
	}
	unlock(fs);
	if (rc)
		reply_err(req, rc);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode, dev_t rdev)
{
	make_node(req, parent, name, mode, rdev, NULL);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name,
		     mode_t mode)
{
	make_node(req, parent, name, S_IFDIR | (mode & 07777), 0, NULL);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent,
		       const char *name)
{
	make_node(req, parent, name, S_IFLNK | 0777, 0, link);
}

static void remove_name(fuse_req_t req, fuse_ino_t parent, const char *name,
			bool dir)
{
	struct txfs *fs = fs_of(req);
	struct req_ctx c;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = do_unlink(fs, ino_to_tino(fs, parent), name, dir, &c);
	unlock(fs);
	reply_err(req, rc);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, false);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_name(req, parent, name, true);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent, const char *name,
		      fuse_ino_t newparent, const char *newname,
		      unsigned int flags)
{
	struct txfs *fs = fs_of(req);
	struct req_ctx c;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = do_rename(fs, ino_to_tino(fs, parent), name,
		       ino_to_tino(fs, newparent), newname, flags, &c);
	unlock(fs);
	reply_err(req, rc);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent,
		    const char *newname)
{
	struct txfs *fs = fs_of(req);
	uint64_t np = ino_to_tino(fs, newparent);
	struct req_ctx c;
	struct tview v;
	int rc;

	req_ctx(req, &c);
	rdlock(fs);
	rc = do_link(fs, ino_to_tino(fs, ino), np, newname, &c, &v);
	if (rc == 0)
		reply_entry(req, fs, np, newname, &v);
	tview_free(&v);
	unlock(fs);
	if (rc)
		reply_err(req, rc);
}

const struct fuse_lowlevel_ops txfs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.readlink = op_readlink,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.symlink = op_symlink,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.rename = op_rename,
	.link = op_link,
	.create = op_create,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.release = op_release,
	.fsync = op_fsync,
	.fallocate = op_fallocate,
	.lseek = op_lseek,
	.opendir = op_opendir,
	.readdir = op_readdir,
	.readdirplus = op_readdirplus,
	.releasedir = op_releasedir,
	.fsyncdir = op_fsync,	/* the same: the layer made durable */
	.statfs = op_statfs,
	.setxattr = op_setxattr,
	.getxattr = op_getxattr,
	.listxattr = op_listxattr,
	.removexattr = op_removexattr,
};
