/* SPDX-License-Identifier: Apache-2.0 */
/*
 * file.c - file data: block copy-on-write over the real file.
 *
 * Block b of a file covers bytes [b*LAYER_BLOCK, (b+1)*LAYER_BLOCK). Its
 * content is the layer chunk (tino, b) if there is one (zeros past the
 * chunk's length), else the real file's bytes below rec.lower_valid, else
 * zeros. A write stores each touched block whole, merged with the old
 * content (read-modify-write only for partly covered blocks); a truncate
 * deletes chunks past the end, trims the last one and lowers lower_valid,
 * so growing the file again shows zeros, not old real bytes.
 *
 * A file untouched by the layer is read straight from the real file. Each
 * write is one LMDB write transaction, committed before the reply: once
 * write(2) returns, the data survives the death of the daemon.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"

#define BS ((uint64_t)LAYER_BLOCK)

int lower_pread(struct txfs *fs, const char *relpath, int *fdp, char *buf,
		size_t len, off_t off)
{
	size_t done = 0;

	if (*fdp < 0) {
		if (!relpath)
			return -ESTALE;
		*fdp = lower_open(fs, relpath, O_RDONLY);
		if (*fdp < 0) {
			int rc = *fdp;

			*fdp = -1;
			return rc;
		}
	}
	while (done < len) {
		ssize_t n = pread(*fdp, buf + done, len - done,
				  off + (off_t)done);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	memset(buf + done, 0, len - done);
	return 0;
}

/* The real file's fd of a handle, opened on first use. */
static int fh_lower(struct txfs *fs, struct fhandle *fh, char *buf,
		    size_t len, off_t off)
{
	int rc;

	pthread_mutex_lock(&fh->lock);
	rc = lower_pread(fs, fh->lower_path, &fh->lower_fd, buf, len, off);
	pthread_mutex_unlock(&fh->lock);
	return rc;
}

/* After a commit, the handle's object may live at another real path or
 * be another real inode: re-resolve it (once per commit) from the node
 * the open was taken on, which holds the handle's alias (a node that
 * only an alias held may be gone after later commits). */
void fh_refresh(struct txfs *fs, struct fhandle *fh)
{
	uint64_t e = atomic_load(&fs->epoch);

	if (fh->epoch == e)
		return;
	pthread_mutex_lock(&fh->lock);
	if (fh->epoch != e) {
		uint64_t t = ino_to_tino(fs, fh->node);
		char *p = itab_lower_path(fs, t);

		if (fh->lower_fd >= 0)
			close(fh->lower_fd);
		fh->lower_fd = -1;
		if (p || t != fh->tino) {
			free(fh->lower_path);
			fh->lower_path = p;
		}
		fh->tino = t;
		fh->epoch = e;
	}
	pthread_mutex_unlock(&fh->lock);
}

/* Plain read of the real file: short at end of file. */
static int fh_read_lower(struct txfs *fs, struct fhandle *fh, char *buf,
			 size_t size, off_t off, size_t *got)
{
	int fd, rc;

	pthread_mutex_lock(&fh->lock);
	rc = lower_pread(fs, fh->lower_path, &fh->lower_fd, buf, 0, 0);
	fd = fh->lower_fd;
	pthread_mutex_unlock(&fh->lock);
	if (rc)
		return rc;
	*got = 0;
	while (*got < size) {
		ssize_t n = pread(fd, buf + *got, size - *got,
				  off + (off_t)*got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		*got += (size_t)n;
	}
	return 0;
}

/* A handle of node (kernel node id) for tino, counted as an open of the
 * node: the count is taken before the object is looked at, so an UNLINK
 * served by another thread meanwhile sees it and keeps the object as an
 * orphan instead of deleting it under this open. */
static struct fhandle *fh_new(struct txfs *fs, uint64_t node, uint64_t tino,
			      int flags)
{
	struct fhandle *fh = calloc(1, sizeof(*fh));

	if (!fh)
		return NULL;
	fh->tino = tino;
	fh->node = node;
	fh->lower_fd = -1;
	fh->flags = flags;
	fh->epoch = atomic_load(&fs->epoch);
	pthread_mutex_init(&fh->lock, NULL);
	itab_open(fs, node);
	return fh;
}

/* Finish an open: on failure undo fh_new, else list the handle. */
static int fh_finish(struct txfs *fs, struct fhandle *fh, int rc,
		   struct fhandle **out)
{
	if (rc) {
		itab_release(fs, fh->node);
		file_close(fs, fh);
		return rc;
	}
	pthread_mutex_lock(&fs->fh_lock);
	fh->next = fs->handles;
	if (fs->handles)
		fs->handles->prev = fh;
	fs->handles = fh;
	fh->prev = NULL;
	pthread_mutex_unlock(&fs->fh_lock);
	fh->linked = true;
	*out = fh;
	return 0;
}

int file_open(struct txfs *fs, uint64_t node, uint64_t tino, int flags,
	      struct fhandle **out)
{
	struct fhandle *fh = fh_new(fs, node, tino, flags);
	struct layer_txn *t;
	struct tview v;
	int rc;

	if (!fh)
		return -ENOMEM;
	if ((rc = layer_begin(fs->layer, false, &t)))
		return fh_finish(fs, fh, rc, out);
	rc = view_inode(fs, t, tino, &v);
	layer_txn_end(t);
	if (rc)
		return fh_finish(fs, fh, rc, out);
	if (S_ISDIR(v.st.st_mode))
		rc = -EISDIR;
	else if (v.virt)	/* a control file: file_open_text */
		rc = -EPERM;
	/* -o noopen: no OPEN shows a mapping's open, so every file read or
	 * written may have been mapped and stored into: see itab_wmap */
	if (rc == 0 && fs->opts.noopen)
		itab_wmap(fs, node);
	fh->lower_path = v.lower_path;
	v.lower_path = NULL;
	tview_free(&v);
	return fh_finish(fs, fh, rc, out);
}

int file_open_text(struct txfs *fs, uint64_t node, uint64_t tino, int flags,
		   char *text, size_t len, struct fhandle **out)
{
	struct fhandle *fh = fh_new(fs, node, tino, flags);

	if (!fh) {
		free(text);
		return -ENOMEM;
	}
	fh->virt = true;
	fh->virt_buf = text;
	fh->virt_len = len;
	return fh_finish(fs, fh, 0, out);
}

int file_write_nodes(struct txfs *fs, uint64_t **ids, size_t *n)
{
	size_t cap = 0, got = 0;
	int rc = 0;

	*ids = NULL;
	pthread_mutex_lock(&fs->fh_lock);
	for (struct fhandle *fh = fs->handles; fh && !rc; fh = fh->next) {
		if (fh->virt || (fh->flags & O_ACCMODE) == O_RDONLY)
			continue;
		if (got == cap) {
			uint64_t *m = realloc(*ids, (cap ? 2 * cap : 16) *
						    sizeof(**ids));

			if (!m) {
				rc = -ENOMEM;
				break;
			}
			*ids = m;
			cap = cap ? 2 * cap : 16;
		}
		(*ids)[got++] = fh->node;
	}
	pthread_mutex_unlock(&fs->fh_lock);
	*n = got;
	return rc;
}

void file_close(struct txfs *fs, struct fhandle *fh)
{
	if (fh->linked) {
		pthread_mutex_lock(&fs->fh_lock);
		if (fh->prev)
			fh->prev->next = fh->next;
		else
			fs->handles = fh->next;
		if (fh->next)
			fh->next->prev = fh->prev;
		pthread_mutex_unlock(&fs->fh_lock);
	}
	if (fh->lower_fd >= 0)
		close(fh->lower_fd);
	pthread_mutex_destroy(&fh->lock);
	free(fh->lower_path);
	free(fh->virt_buf);
	free(fh);
}

/* Read [from, to) of block b of a changed file into dst. */
static int read_block(struct txfs *fs, struct fhandle *fh,
		      struct layer_txn *t, const struct layer_inode *rec,
		      uint64_t b, uint64_t from, uint64_t to, char *dst)
{
	uint64_t bstart = b * BS;
	const void *data;
	size_t clen;
	int rc = layer_chunk_get(t, fh->tino, b, &data, &clen);

	if (rc == 0) {
		uint64_t cend = bstart + clen;
		uint64_t n = cend > from ? (cend < to ? cend : to) - from : 0;

		memcpy(dst, (const char *)data + (from - bstart), n);
		memset(dst + n, 0, to - from - n);
		return 0;
	}
	if (rc != -ENOENT)
		return rc;
	if ((rec->flags & LI_LOWER) && from < rec->lower_valid) {
		uint64_t lend = to < rec->lower_valid ? to : rec->lower_valid;

		rc = fh_lower(fs, fh, dst, lend - from, (off_t)from);
		memset(dst + (lend - from), 0, to - lend);
		return rc;
	}
	memset(dst, 0, to - from);
	return 0;
}

int file_read(struct txfs *fs, struct fhandle *fh, char *buf,
	      size_t size, off_t off, size_t *got)
{
	struct layer_txn *t;
	struct layer_ino_view lv;
	uint64_t pos = (uint64_t)off, end;
	int rc;

	*got = 0;
	fh_refresh(fs, fh);
	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	rc = layer_inode_get(t, fh->tino, &lv);
	if (rc == -ENOENT) {
		/* Untouched real file: straight through, short at EOF. */
		layer_txn_end(t);
		return fh_read_lower(fs, fh, buf, size, off, got);
	}
	if (rc)
		goto out;
	end = pos + size < lv.rec.size ? pos + size : lv.rec.size;
	while (pos < end && rc == 0) {
		uint64_t b = pos / BS;
		uint64_t to = (b + 1) * BS < end ? (b + 1) * BS : end;

		rc = read_block(fs, fh, t, &lv.rec, b, pos, to,
				buf + (pos - (uint64_t)off));
		pos = to;
	}
	if (rc == 0 && end > (uint64_t)off)
		*got = (size_t)(end - (uint64_t)off);
out:
	layer_txn_end(t);
	return rc;
}

/* Most pieces a block keeps (layer_chunk.c); a write that would make
 * more stores the merged block whole, which drops them. */
#define PIECES_MAX 8u
#define PS ((uint64_t)LAYER_PIECE)

/* Should the write of [pos, to) into block b (blen bytes long after it)
 * store pieces? When they are smaller than the block they would spare
 * rewriting, and the block has a base or no real-file bytes under it. */
static bool use_pieces(struct layer_txn *t, const struct tview *v,
		       uint64_t b, uint64_t pos, uint64_t to, uint64_t blen)
{
	uint64_t bstart = b * BS;
	uint64_t n = (to - 1 - bstart) / PS - (pos - bstart) / PS + 1;
	unsigned have;
	bool base;

	if (2 * n * PS > blen)
		return false;
	if (layer_block_info(t, v->tino, b, &base, &have))
		return false;
	if (!base && (v->rec.flags & LI_LOWER) && bstart < v->rec.lower_valid)
		return false;
	return have + n <= PIECES_MAX;
}

/* Write [pos, to) of block b as pieces; buf holds the bytes from off
 * (NULL: zeros). Partly covered pieces are merged with what they held. */
static int write_pieces(struct txfs *fs, struct fhandle *fh,
			struct layer_txn *t, struct tview *v, uint64_t b,
			const char *buf, uint64_t off, uint64_t pos,
			uint64_t to, uint64_t newsize, int64_t *grown)
{
	uint64_t bstart = b * BS;
	char *tmp = NULL;
	int rc = 0;

	for (uint64_t ps = bstart + (pos - bstart) / PS * PS; ps < to && !rc;
	     ps += PS) {
		uint64_t pe = ps + PS < newsize ? ps + PS : newsize;
		uint64_t ws = pos > ps ? pos : ps, we = to < pe ? to : pe;
		uint64_t old = v->rec.size > ps ?
			(v->rec.size < pe ? v->rec.size : pe) - ps : 0;
		const char *data = buf ? buf + (ps - off) : NULL;
		size_t was;

		if (!buf || ws != ps || we != pe) {
			if (!tmp && !(tmp = malloc(PS)))
				return -ENOMEM;
			rc = old ? read_block(fs, fh, t, &v->rec, b, ps,
					      ps + old, tmp) : 0;
			memset(tmp + old, 0, pe - ps - old);
			if (buf)
				memcpy(tmp + (ws - ps), buf + (ws - off),
				       we - ws);
			else
				memset(tmp + (ws - ps), 0, we - ws);
			data = tmp;
		}
		if (rc == 0)
			rc = layer_piece_put(t, v->tino, b,
					     (unsigned)((ps - bstart) / PS),
					     data, pe - ps, &was);
		if (rc == 0)
			*grown += (int64_t)(pe - ps) - (int64_t)was;
	}
	free(tmp);
	return rc;
}

static bool all_zero(const char *p, size_t n)
{
	return n == 0 || (p[0] == 0 && !memcmp(p, p + 1, n - 1));
}

/*
 * `limit deletes` counts a loss of real data once a file: the first
 * truncation below the real bytes still in place (file_truncate), or the
 * first write of size bytes of buf (zeros when NULL: a punch, a zeroed
 * range) at off that changes real bytes still in place, [0, lower_valid).
 * Until that charge the file holds its real bytes there (any change of
 * them would have been charged), so comparing with what it holds now
 * tells whether real data is destroyed: writing the same bytes back, or
 * appending, destroys nothing. Sets LI_LOST in v->rec (the caller stores
 * the record).
 */
static int charge_overwrite(struct txfs *fs, struct fhandle *fh,
			    struct layer_txn *t, struct tview *v,
			    const char *buf, uint64_t size, uint64_t off,
			    const struct req_ctx *c)
{
	struct charge ch = { .c = c, .op = "overwrite", .dir = fh->node,
			     .lower = v->lower_path, .deletes = 1 };
	uint64_t end = off + size < v->rec.lower_valid ? off + size :
			v->rec.lower_valid;
	bool same = true;
	char *tmp;
	int rc = 0;

	if (!(v->rec.flags & LI_LOWER) || (v->rec.flags & LI_LOST) ||
	    off >= end || !guard_counts_losses(fs))
		return 0;
	if (!(tmp = malloc(BS)))
		return -ENOMEM;
	for (uint64_t pos = off; pos < end && same && rc == 0;) {
		uint64_t b = pos / BS, to = (b + 1) * BS < end ? (b + 1) * BS :
			     end;

		rc = read_block(fs, fh, t, &v->rec, b, pos, to, tmp);
		if (rc == 0)
			same = buf ? !memcmp(tmp, buf + (pos - off), to - pos) :
				     all_zero(tmp, to - pos);
		pos = to;
	}
	free(tmp);
	if (rc == 0 && !same && (rc = guard_charge(fs, t, &ch)) == 0)
		v->rec.flags |= LI_LOST;
	return rc;
}

/*
 * Write size bytes (zeros when buf is NULL) at off into v's data, inside
 * write transaction t. v must have a layer record; the caller updates it.
 * A block the write covers whole is stored whole; a small part of a big
 * block goes to pieces (write_pieces); otherwise the block is merged
 * with its old content and stored whole.
 */
static int write_range(struct txfs *fs, struct fhandle *fh,
		       struct layer_txn *t, struct tview *v, const char *buf,
		       uint64_t size, uint64_t off, const struct req_ctx *c)
{
	struct charge ch = { .c = c, .op = "write", .dir = fh->node };
	uint64_t end = off + size;
	uint64_t newsize = end > v->rec.size ? end : v->rec.size;
	char *tmp = NULL;
	int64_t grown = 0;
	int rc = guard_file_size(fs, newsize, &ch);

	if (rc == 0)
		rc = charge_overwrite(fs, fh, t, v, buf, size, off, c);
	for (uint64_t pos = off; pos < end && rc == 0;) {
		uint64_t b = pos / BS, bstart = b * BS;
		uint64_t to = bstart + BS < end ? bstart + BS : end;
		uint64_t blen = newsize - bstart < BS ? newsize - bstart : BS;
		const void *od;
		size_t olen = 0;

		if (!(pos == bstart && to == bstart + blen) &&
		    use_pieces(t, v, b, pos, to, blen)) {
			rc = write_pieces(fs, fh, t, v, b, buf, off, pos, to,
					  newsize, &grown);
			pos = to;
			continue;
		}
		if (layer_chunk_get(t, v->tino, b, &od, &olen))
			olen = 0;
		grown += (int64_t)blen - (int64_t)olen;

		if (buf && pos == bstart && to == bstart + blen) {
			rc = layer_chunk_put(t, v->tino, b, buf + (pos - off),
					     blen);
		} else {
			if (!tmp && !(tmp = malloc(BS)))
				return -ENOMEM;
			uint64_t old = v->rec.size > bstart ?
				(v->rec.size - bstart < blen ?
				 v->rec.size - bstart : blen) : 0;

			rc = old ? read_block(fs, fh, t, &v->rec, b, bstart,
					      bstart + old, tmp) : 0;
			memset(tmp + old, 0, blen - old);
			if (buf)
				memcpy(tmp + (pos - bstart), buf + (pos - off),
				       to - pos);
			else
				memset(tmp + (pos - bstart), 0, to - pos);
			if (rc == 0)
				rc = layer_chunk_put(t, v->tino, b, tmp, blen);
		}
		pos = to;
	}
	free(tmp);
	ch.bytes = grown;
	if (rc == 0)
		rc = guard_charge(fs, t, &ch);
	if (rc == 0) {
		v->rec.size = newsize;
		v->rec.flags |= LI_DATA;
	}
	return rc;
}

int file_write(struct txfs *fs, struct fhandle *fh, const char *buf,
	       size_t size, off_t off, const struct req_ctx *c)
{
	struct layer_txn *t;
	struct tview v;
	bool killed = false;
	int rc;

	if (fh->virt)	/* a control verb: ops.c hands it to ctl_write */
		return -EBADF;
	fh_refresh(fs, fh);
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if ((rc = view_inode(fs, t, fh->tino, &v)))
		goto out_txn;
	if ((rc = guard_copy_up(fs, t, &v)) ||
	    (rc = write_range(fs, fh, t, &v, buf, size, (uint64_t)off, c)))
		goto out;
	touch_mc(&v.rec);
	killed = c && c->kill_suidgid &&
		 killpriv_write(c, v.rec.gid, &v.rec.mode);
	rc = layer_inode_update(t, v.tino, &v.rec);
out:
	tview_free(&v);
	if (rc == 0) {
		if ((rc = layer_commit(t)) == 0)
			itab_inval_others(fs, fh->node, fh->tino);
		if (rc == 0 && killed)	/* killpriv.c */
			killpriv_notify(fs, fh->node);
		return rc;
	}
out_txn:
	layer_txn_end(t);
	return rc;
}

int file_truncate(struct txfs *fs, struct layer_txn *t, struct tview *v,
		  uint64_t size, const struct req_ctx *c)
{
	struct charge ch = { .c = c, .op = "truncate", .dir = v->tino };
	struct layer_inode *rec = &v->rec;
	int rc;

	int rc2 = guard_file_size(fs, size, &ch);

	if (rc2)
		return rc2;
	/* a loss for `limit deletes`: bytes of the real file still in place
	 * are cut (once a file: a truncation after an earlier loss of the
	 * same file, charge_overwrite, costs nothing) */
	if ((rec->flags & LI_LOWER) && !(rec->flags & LI_LOST) &&
	    size < rec->lower_valid) {
		ch.deletes = 1;
		ch.lower = v->lower_path;
		if ((rc2 = guard_charge(fs, t, &ch)))
			return rc2;
		rec->flags |= LI_LOST;
	}
	if (size < rec->size) {
		uint64_t b = size / BS, keep = size % BS;
		const void *data;
		size_t clen;

		if ((rc = layer_chunks_trunc(t, v->tino, b + (keep ? 1 : 0))))
			return rc;
		rc = keep ? layer_chunk_get(t, v->tino, b, &data, &clen) :
			    -ENOENT;
		if (rc == 0 && clen > keep) {
			char *tmp = malloc(keep);

			if (!tmp)
				return -ENOMEM;
			memcpy(tmp, data, keep);
			rc = layer_chunk_put(t, v->tino, b, tmp, keep);
			free(tmp);
		}
		if (rc && rc != -ENOENT)
			return rc;
		if (rec->lower_valid > size)
			rec->lower_valid = size;
	}
	rec->size = size;
	rec->flags |= LI_DATA;
	touch_mc(rec);
	return 0;
}

/* Does block b hold anything (a chunk with bytes, or real bytes)? */
static bool block_stored(struct layer_txn *t, const struct tview *v,
			 uint64_t b)
{
	const void *data;
	size_t len;

	if (layer_chunk_get(t, v->tino, b, &data, &len) == 0)
		return len > 0;
	return (v->rec.flags & LI_LOWER) && b * BS < v->rec.lower_valid;
}

/* Zero [o, e) (e <= size) without storing zeros: whole blocks become
 * holes (no chunk, or an empty one over real bytes), blocks that are
 * holes already stay so, only partly covered blocks with data are
 * rewritten. PUNCH_HOLE and ZERO_RANGE both end here. */
static int punch(struct txfs *fs, struct fhandle *fh, struct layer_txn *t,
		 struct tview *v, uint64_t o, uint64_t e,
		 const struct req_ctx *c)
{
	int rc = charge_overwrite(fs, fh, t, v, NULL, e - o, o, c);

	for (uint64_t pos = o; pos < e && rc == 0;) {
		uint64_t b = pos / BS, bs = b * BS;
		uint64_t to = bs + BS < e ? bs + BS : e;

		if (!block_stored(t, v, b))
			rc = 0;
		else if (pos == bs && (to == bs + BS || to == v->rec.size))
			rc = layer_chunk_put(t, v->tino, b, "", 0);
		else
			rc = write_range(fs, fh, t, v, NULL, to - pos, pos, c);
		pos = to;
	}
	if (rc == 0) {
		v->rec.flags |= LI_DATA;
		touch_mc(&v->rec);
	}
	return rc;
}

int file_fallocate(struct txfs *fs, struct fhandle *fh, int mode,
		   off_t off, off_t len, const struct req_ctx *c)
{
	struct layer_txn *t;
	struct tview v;
	uint64_t o = (uint64_t)off, l = (uint64_t)len;
	int rc;

	if (off < 0 || len <= 0)
		return -EINVAL;
	if (mode & ~(FALLOC_FL_KEEP_SIZE | FALLOC_FL_PUNCH_HOLE |
		     FALLOC_FL_ZERO_RANGE))
		return -EOPNOTSUPP;
	if ((mode & FALLOC_FL_PUNCH_HOLE) && !(mode & FALLOC_FL_KEEP_SIZE))
		return -EINVAL;
	if (fh->virt)
		return -EPERM;
	fh_refresh(fs, fh);
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if ((rc = view_inode(fs, t, fh->tino, &v)))
		goto out_txn;
	/* growing the file changes its size: the policy's truncate rules,
	 * as for ftruncate (an attack grew a `deny truncate` file so) */
	if (!(mode & FALLOC_FL_KEEP_SIZE) && o + l > v.rec.size) {
		char *path = itab_path(fs, fh->tino, NULL);

		rc = guard_ino(fs, POLICY_OP_TRUNCATE, fh->tino, path, c);
		free(path);
		if (rc)
			goto out;
	}
	if ((rc = guard_copy_up(fs, t, &v)))
		goto out;
	if (mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE)) {
		uint64_t e = o + l < v.rec.size ? o + l : v.rec.size;

		if (o < e)
			rc = punch(fs, fh, t, &v, o, e, c);
		if (rc == 0 && !(mode & FALLOC_FL_KEEP_SIZE) &&
		    o + l > v.rec.size)
			rc = file_truncate(fs, t, &v, o + l, c);
	} else if (!(mode & FALLOC_FL_KEEP_SIZE) && o + l > v.rec.size) {
		rc = file_truncate(fs, t, &v, o + l, c);
	}
	if (rc == 0) {
		touch_c(&v.rec);
		rc = layer_inode_update(t, v.tino, &v.rec);
	}
out:
	tview_free(&v);
	if (rc == 0)
		return layer_commit(t);
out_txn:
	layer_txn_end(t);
	return rc;
}

void file_close_all(struct txfs *fs)
{
	while (fs->handles)
		file_close(fs, fs->handles);
}
