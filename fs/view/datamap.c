/* SPDX-License-Identifier: Apache-2.0 */
/*
 * datamap.c - a file's data map through the view: which ranges are data
 * and which are holes (SEEK_DATA/SEEK_HOLE) and the blocks it occupies
 * (st_blocks). A block with a layer chunk is data up to the chunk's
 * length; a block without one is the real file's map below lower_valid,
 * a hole past it (file.c has the block model).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "view.h"

#define BS ((uint64_t)LAYER_BLOCK)

/* One file's merged map: its layer record, chunks, and the real file. */
struct fmap {
	struct layer_txn *t;
	uint64_t tino;
	const struct layer_inode *rec;
	int fd;			/* the real file, -1 if none is underneath */
};

static uint64_t min64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Is pos (< size) data or a hole, and where does that run end? A block
 * with a chunk is data up to the chunk's length; a block without one is
 * the real file's map below lower_valid, a hole past it. */
static int map_at(const struct fmap *m, uint64_t pos, bool *data,
		  uint64_t *end)
{
	uint64_t size = m->rec->size, b = pos / BS, nb, limit;
	size_t len;
	int rc = layer_chunk_next(m->t, m->tino, b, &nb, &len);

	if (rc && rc != -ENOENT)
		return rc;
	if (rc == 0 && nb == b) {
		*data = pos < b * BS + len;
		*end = min64(*data ? b * BS + len : (b + 1) * BS, size);
		return 0;
	}
	limit = rc == 0 && nb <= size / BS ? nb * BS : size;
	*data = false;
	*end = limit;
	if (m->fd >= 0 && pos < m->rec->lower_valid) {
		uint64_t lim = min64(limit, m->rec->lower_valid);
		off_t d = lseek(m->fd, (off_t)pos, SEEK_DATA), h;

		if (d < 0 && errno != ENXIO)
			return -errno;
		if (d >= 0 && (uint64_t)d == pos) {
			h = lseek(m->fd, (off_t)pos, SEEK_HOLE);
			if (h < 0)
				return -errno;
			*data = true;
			*end = min64((uint64_t)h, lim);
		} else {
			*end = d < 0 ? lim : min64((uint64_t)d, lim);
			if (*end <= pos)
				*end = lim;
		}
	}
	if (*end <= pos)
		*end = pos + 1;	/* never loop forever on a surprise */
	return 0;
}

/* The real file's fd of a handle (opened on demand), or -1. */
static int fh_lower_fd(struct txfs *fs, struct fhandle *fh)
{
	char c;
	int fd;

	pthread_mutex_lock(&fh->lock);
	lower_pread(fs, fh->lower_path, &fh->lower_fd, &c, 0, 0);
	fd = fh->lower_fd;
	pthread_mutex_unlock(&fh->lock);
	return fd;
}

int file_seek(struct txfs *fs, struct fhandle *fh, off_t off, int whence,
	      off_t *out)
{
	struct layer_ino_view lv;
	struct layer_txn *t;
	struct fmap m;
	uint64_t pos = (uint64_t)off, end;
	bool data;
	int rc;

	if (fh->virt) {
		/* .txfs/ files: all data */
		if (off < 0 || (uint64_t)off >= fh->virt_len)
			return -ENXIO;
		*out = whence == SEEK_DATA ? off : (off_t)fh->virt_len;
		return 0;
	}
	fh_refresh(fs, fh);
	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	rc = layer_inode_get(t, fh->tino, &lv);
	if (rc == -ENOENT) {
		/* an untouched real file: its own map */
		layer_txn_end(t);
		if ((rc = fh_lower_fd(fs, fh)) < 0)
			return rc;
		*out = lseek(rc, off, whence);
		return *out < 0 ? -errno : 0;
	}
	if (rc)
		goto out;
	if (off < 0 || pos >= lv.rec.size) {
		rc = -ENXIO;
		goto out;
	}
	m = (struct fmap){ .t = t, .tino = fh->tino, .rec = &lv.rec, .fd = -1 };
	if ((lv.rec.flags & LI_LOWER) && lv.rec.lower_valid)
		m.fd = fh_lower_fd(fs, fh);
	for (; pos < lv.rec.size; pos = end) {
		if ((rc = map_at(&m, pos, &data, &end)))
			goto out;
		if (data == (whence == SEEK_DATA))
			break;
	}
	if (pos >= lv.rec.size && whence == SEEK_DATA)
		rc = -ENXIO;
	*out = (off_t)min64(pos, lv.rec.size);
out:
	layer_txn_end(t);
	return rc;
}

/* Bytes the real file has allocated in [from, to) (SEEK_DATA walk). */
static uint64_t real_alloc(int fd, uint64_t from, uint64_t to)
{
	uint64_t n = 0;

	while (from < to) {
		off_t d = lseek(fd, (off_t)from, SEEK_DATA), h;

		if (d < 0 || (uint64_t)d >= to)
			break;
		h = lseek(fd, d, SEEK_HOLE);
		if (h <= d)
			break;
		n += min64((uint64_t)h, to) - (uint64_t)d;
		from = (uint64_t)h;
	}
	return n;
}

/*
 * st_blocks of a file the layer holds: its chunks, plus what the real file
 * has allocated below lower_valid in blocks no chunk covers (a file from
 * the layer alone is as sparse as what was written to it).
 */
void view_blocks(struct txfs *fs, struct layer_txn *t, struct tview *v)
{
	uint64_t bytes = 0, real = 0, covered = 0, b = 0, nb;
	uint64_t lv = v->rec.lower_valid;
	size_t len;
	int fd = -1;

	if (!v->in_layer || !S_ISREG(v->rec.mode))
		return;
	if ((v->rec.flags & LI_LOWER) && lv && v->lower_path)
		fd = lower_open(fs, v->lower_path, O_RDONLY);
	if (fd < 0) {
		/* nothing underneath: one pass over the chunks */
		if (layer_chunks_bytes(t, v->tino, &bytes) == 0)
			v->st.st_blocks = (blkcnt_t)((bytes + 511) / 512);
		return;
	}
	while (layer_chunk_next(t, v->tino, b, &nb, &len) == 0) {
		bytes += (len + 511) / 512 * 512;
		if (nb * BS < lv)
			covered += real_alloc(fd, nb * BS,
					      min64((nb + 1) * BS, lv));
		b = nb + 1;
	}
	real = real_alloc(fd, 0, lv);
	close(fd);
	bytes += real > covered ? real - covered : 0;
	v->st.st_blocks = (blkcnt_t)((bytes + 511) / 512);
}

/* The same in a transaction of its own (for replies made after one). */
void view_blocks_now(struct txfs *fs, struct tview *v)
{
	struct layer_txn *t;

	if (!v->in_layer || !S_ISREG(v->rec.mode) ||
	    layer_begin(fs->layer, false, &t))
		return;
	view_blocks(fs, t, v);
	layer_txn_end(t);
}
