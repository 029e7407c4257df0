/* SPDX-License-Identifier: Apache-2.0 */
/*
 * patch.c - committing a partly changed real file in place (CS_PATCH).
 *
 * The changed blocks of such a file are already durable in the layer
 * (chunks, see layer.h). Instead of writing a whole new copy of the file
 * into the staging folder before the commit point, the plan journals one
 * CS_PATCH step, and after the commit point that step writes the layer's
 * blocks into the real file where it is:
 *
 *   1. ftruncate to L = min(lower_valid, size) if the file is longer:
 *      bytes past lower_valid read as zeros in the merged view;
 *   2. for every chunk (tino, b): pwrite its bytes at b * LAYER_BLOCK, and
 *      zero what the chunk leaves of its block below L (a chunk reads as
 *      zeros past its end; an empty chunk is a punched block);
 *   3. ftruncate to size.
 *
 * Redo is idempotent: the bytes below L that no chunk covers are never
 * written, so they stay the real file's own bytes; every other byte is
 * set from the chunks, which stay in LMDB until the commit is finalized,
 * after the patched bytes are durable: a commit with only patches and
 * metadata changes ends with an fsync of each file it touched (CS_FSYNC,
 * instead of CS_SYNC's syncfs of the whole file system), any other
 * commit with CS_SYNC. A replay after a crash at any point therefore ends
 * with the same bytes. Between steps 1 and 3 the file's size can differ
 * from both ends (only when the change shrinks or grows it).
 *
 * patch_fits() decides, at plan time (before the commit point), whether a
 * file takes this path; see the rules in commit.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commit.h"

#define BS ((uint64_t)LAYER_BLOCK)

static int64_t ctime_ns(const struct stat *st)
{
	return (int64_t)st->st_ctim.tv_sec * 1000000000LL + st->st_ctim.tv_nsec;
}

/* Does the layer change at most half the blocks of the file? Counts the
 * chunks and stops as soon as the answer is known. */
static bool few_chunks(struct layer_txn *t, const struct cobj *o)
{
	uint64_t total = (o->rec.size + BS - 1) / BS, b = 0, found, n = 0;
	size_t len;

	if (total == 0)
		total = 1;
	while (layer_chunk_next(t, o->tino, b, &found, &len) == 0) {
		if (++n * 2 > total)
			return false;
		b = found + 1;
	}
	return true;
}

bool patch_fits(struct plan *p, const struct cobj *o)
{
	const struct layer_inode *r = &o->rec;
	struct stat st;
	int fd;

	if (!S_ISREG(r->mode) || !o->lower || !(r->flags & LI_LOWER) ||
	    !(r->flags & LI_DATA) || !o->natural || o->nfinals != 1 ||
	    strcmp(o->finals[0], o->lower) || r->nlink != 1 ||
	    r->lower_valid == 0)
		return false;	/* new, moved, linked or rewritten whole */
	if (lower_stat(p->fs, o->lower, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_ino != o->tino || st.st_nlink != 1 ||
	    (st.st_mode & (S_ISUID | S_ISGID)) ||
	    ctime_ns(&st) != r->lower_ctime_ns ||
	    (uint64_t)st.st_size < r->lower_valid)
		return false;	/* other names, privilege, or changed (--force) */
	if (!few_chunks(p->t, o))
		return false;
	fd = lower_open(p->fs, o->lower, O_WRONLY);	/* EACCES, ETXTBSY... */
	if (fd < 0)
		return false;
	close(fd);
	return true;
}

/* --- applying ------------------------------------------------------- */

/* Zero [from, to) of the real file: a punched hole, or written zeros
 * where the file system cannot punch. */
static int zero_range(int fd, uint64_t from, uint64_t to)
{
	static const char zero[4096];
	int rc = 0;

	if (from >= to)
		return 0;
	if (fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
		      (off_t)from, (off_t)(to - from)) == 0)
		return 0;
	if (errno != EOPNOTSUPP && errno != ENOSYS && errno != EINVAL)
		return -errno;
	for (; rc == 0 && from < to; from += sizeof(zero)) {
		size_t n = to - from < sizeof(zero) ? (size_t)(to - from) :
						      sizeof(zero);

		rc = commit_write_all(fd, zero, n, (off_t)from);
	}
	return rc;
}

/* Write a chunk past L, where the file is a hole: its all-zero 4 KiB
 * pages stay holes (the committed file is as sparse as the copy path
 * makes it). */
static int write_past_end(int fd, const char *data, size_t len, off_t off)
{
	static const char zero[4096];
	size_t i = 0;
	int rc = 0;

	while (i < len && rc == 0) {
		size_t n = len - i < sizeof(zero) ? len - i : sizeof(zero);

		if (memcmp(data + i, zero, n))
			rc = commit_write_all(fd, data + i, n, off + (off_t)i);
		i += n;
	}
	return rc;
}

/* Open the real file for writing. A replay may find it read-only: the
 * journal's CS_META of the first run set the layer's mode already; it
 * gets u+w for the patch and its mode back from the same CS_META, which
 * runs after this step. */
int commit_open_writable(struct txfs *fs, const char *path, int flags)
{
	char proc[64];
	struct stat st;
	int fd = lower_open(fs, path, O_WRONLY | flags), pfd;

	if (fd != -EACCES)
		return fd;
	pfd = lower_open(fs, path, O_PATH);
	if (pfd < 0)
		return pfd;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	if (fstat(pfd, &st) || chmod(proc, (st.st_mode & 07777) | S_IWUSR))
		fd = -errno;
	else
		fd = lower_open(fs, path, O_WRONLY | flags);
	close(pfd);
	return fd;
}

/* One chunk: its bytes at block b, then zeros for the rest of the block
 * below L (the merged view reads zeros past a chunk's end). */
static int patch_block(int fd, uint64_t b, const void *data, size_t len,
		       uint64_t lv)
{
	uint64_t bs = b * BS, end = bs + BS < lv ? bs + BS : lv;
	int rc;

	if (bs >= lv)
		return write_past_end(fd, data, len, (off_t)bs);
	rc = commit_write_all(fd, data, len, (off_t)bs);
	return rc ? rc : zero_range(fd, bs + len, end);
}

static int patch_blocks(struct txfs *fs, struct layer_txn *t, int fd,
			uint64_t tino, uint64_t lv, const char *phase)
{
	uint64_t b = 0, found;
	const void *data;
	size_t len;
	int rc;

	while ((rc = layer_chunk_next(t, tino, b, &found, &len)) == 0) {
		if ((rc = layer_chunk_get(t, tino, found, &data, &len)) ||
		    (rc = patch_block(fd, found, data, len, lv)) ||
		    (rc = fault_point(fs, phase)))
			return rc;
		b = found + 1;
	}
	return rc == -ENOENT ? 0 : rc;
}

int patch_apply(struct txfs *fs, struct layer_txn *t, const struct cstep *s,
		const char *phase)
{
	struct layer_ino_view v;
	struct layer_inode rec;
	struct stat st;
	uint64_t lv;
	int fd, rc = layer_inode_get(t, s->tino, &v);

	if (rc)
		return rc;
	rec = v.rec;
	lv = rec.lower_valid < rec.size ? rec.lower_valid : rec.size;
	fd = commit_open_writable(fs, s->a, 0);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		rc = -errno;
		goto out_close;
	}
	if ((uint64_t)st.st_ino != s->tino) {
		rc = -ESTALE;	/* never patch another file */
		goto out_close;
	}
	if ((uint64_t)st.st_size > lv && ftruncate(fd, (off_t)lv)) {
		rc = -errno;
		goto out_close;
	}
	if ((rc = fault_point(fs, phase)) ||
	    (rc = patch_blocks(fs, t, fd, s->tino, lv, phase)))
		goto out_close;
	if (ftruncate(fd, (off_t)rec.size))
		rc = -errno;
out_close:
	close(fd);
	return rc;
}

int patch_fsync(struct txfs *fs, const struct cstep *s)
{
	struct stat st;
	int fd = lower_open(fs, s->a, O_RDONLY | O_NONBLOCK | O_NOCTTY), rc;

	if (fd < 0)	/* gone, or not ours to open: flush everything */
		return syncfs(fs->rootfd) ? -errno : 0;
	if (fstat(fd, &st) || !(S_ISREG(st.st_mode) || S_ISDIR(st.st_mode)))
		rc = syncfs(fs->rootfd) ? -errno : 0;
	else
		rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}
