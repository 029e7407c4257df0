/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stage.c - the real-directory side of a commit before its commit point
 * (commit.c has the order of it all): the crash points, writes that
 * finish, the staging folder (.txfs.staging/<txid>/ at the real root, the
 * same file system, so a rename puts a file in place), and step 2,
 * prepare: every new file content written there (from the layer's
 * chunks, and the real file's unchanged ranges) and made durable at once.
 * It calls only the layer and lower.c; patch.c and apply.c use its
 * helpers.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "commit.h"

#define BS ((uint64_t)LAYER_BLOCK)

/* --- fault injection ------------------------------------------------ */

int fault_point(struct txfs *fs, const char *phase)
{
	if (!fs->fault_phase || strcmp(fs->fault_phase, phase) != 0)
		return 0;
	if (++fs->fault_count != fs->fault_at)
		return 0;
	if (fs->fault_eio)
		return -EIO;
	fprintf(stderr, "txfs: fault injection: stopping at %s step %lu\n",
		phase, fs->fault_at);
	_exit(99);
}

/* --- helpers on the real directory ---------------------------------- */

/* Open the folder holding path; *base points into path. */
int stage_parent(struct txfs *fs, const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	*base = slash ? slash + 1 : path;
	if (!slash)
		return lower_open(fs, "", O_PATH | O_DIRECTORY);
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = lower_open(fs, dir, O_PATH | O_DIRECTORY);
	free(dir);
	return fd;
}

int stage_open(struct txfs *fs, uint64_t txid, bool create)
{
	char name[32];
	int dfd, fd;

	snprintf(name, sizeof(name), "%llu", (unsigned long long)txid);
	if (create && mkdirat(fs->rootfd, TXFS_STAGING, 0700) &&
	    errno != EEXIST)
		return -errno;
	/* beneath the root, no symlink followed: a symlink or file put at
	 * .txfs.staging fails here (ELOOP, ENOTDIR), nothing is made
	 * where it points */
	dfd = lower_open(fs, TXFS_STAGING, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return dfd;
	if (create && mkdirat(dfd, name, 0700) && errno != EEXIST) {
		fd = -errno;
		close(dfd);
		return fd;
	}
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(dfd);
	return fd;
}

void stage_name(char *buf, size_t n, char kind, uint64_t tino)
{
	snprintf(buf, n, "%c%llx", kind, (unsigned long long)tino);
}

static int rm_tree_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
				       O_CLOEXEC);
	struct dirent *de;
	DIR *d;
	int rc = 0;

	if (fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno != ENOTDIR && errno != ELOOP)
			return -errno;
		return unlinkat(dfd, name, 0) && errno != ENOENT ? -errno : 0;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while (rc == 0 && (de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			rc = rm_tree_at(dirfd(d), de->d_name);
	closedir(d);
	if (rc == 0 && unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT)
		rc = -errno;
	return rc;
}

/* Remove staging/<txid> (txid 0: the whole staging folder). */
int stage_remove(struct txfs *fs, uint64_t txid)
{
	char name[32];
	int sfd, rc;

	if (!txid)
		return rm_tree_at(fs->rootfd, TXFS_STAGING);
	sfd = lower_open(fs, TXFS_STAGING, O_PATH | O_DIRECTORY);
	if (sfd == -ENOENT)
		return 0;
	if (sfd < 0)
		return sfd;
	snprintf(name, sizeof(name), "%llu", (unsigned long long)txid);
	rc = rm_tree_at(sfd, name);
	close(sfd);
	if (rc == 0 && unlinkat(fs->rootfd, TXFS_STAGING, AT_REMOVEDIR) &&
	    errno != ENOTEMPTY && errno != ENOENT && errno != EEXIST)
		rc = -errno;
	return rc;
}

/* --- prepare: new contents into the staging folder ------------------ */

static int copy_lower_xattrs(struct txfs *fs, const char *lower, int dst)
{
	char list[8192], val[65536], path[64];
	ssize_t n, vl;
	int fd = lower_open(fs, lower, O_PATH);

	if (fd < 0)
		return fd;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = listxattr(path, list, sizeof(list));
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(list + i) + 1) {
		if (strncmp(list + i, "user.", 5))
			continue;
		vl = getxattr(path, list + i, val, sizeof(val));
		if (vl >= 0)
			fsetxattr(dst, list + i, val, (size_t)vl, 0);
	}
	close(fd);
	return 0;
}

int commit_write_all(int fd, const void *buf, size_t len, off_t off)
{
	while (len) {
		ssize_t n = pwrite(fd, buf, len, off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		buf = (const char *)buf + n;
		len -= (size_t)n;
		off += n;
	}
	return 0;
}

/* Write a chunk, leaving its all-zero 4 KiB pages out: dst is a new
 * file, so they stay holes (the committed file is as sparse as the
 * staged one). */
static int write_sparse(int fd, const char *data, size_t len, off_t off)
{
	static const char zero[4096];
	size_t i = 0, start;
	int rc = 0;

	while (i < len && rc == 0) {
		size_t n = len - i < sizeof(zero) ? len - i : sizeof(zero);

		if (!memcmp(data + i, zero, n)) {
			i += n;
			continue;
		}
		for (start = i; i < len; i += n) {
			n = len - i < sizeof(zero) ? len - i : sizeof(zero);
			if (!memcmp(data + i, zero, n))
				break;
		}
		rc = commit_write_all(fd, data + start, i - start,
				      off + (off_t)start);
	}
	return rc;
}

/* Copy [off, end) of the real file into dst (copy_file_range first). */
static int copy_span(int src, int dst, uint64_t off, uint64_t end, char *buf)
{
	while (off < end) {
		loff_t a = (loff_t)off, b = (loff_t)off;
		ssize_t n = copy_file_range(src, &a, dst, &b,
					    (size_t)(end - off), 0);

		if (n > 0) {
			off += (uint64_t)n;
			continue;
		}
		if (n == 0)
			break;	/* the real file is shorter: zeros */
		if (errno != EXDEV && errno != EINVAL && errno != EOPNOTSUPP &&
		    errno != ENOSYS)
			return -errno;
		n = pread(src, buf, end - off < BS ? end - off : BS, (off_t)off);
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		int rc = commit_write_all(dst, buf, (size_t)n, (off_t)off);

		if (rc)
			return rc;
		off += (uint64_t)n;
	}
	return 0;
}

/* Copy the data of [off, end) of the real file into dst, skipping its
 * holes (SEEK_DATA/SEEK_HOLE; everything if the file system has no map). */
int stage_copy_lower(int src, int dst, uint64_t off, uint64_t end,
		     char *buf)
{
	while (off < end) {
		off_t d = lseek(src, (off_t)off, SEEK_DATA), h;
		int rc;

		if (d < 0 && errno == ENXIO)
			return 0;	/* only a hole up to the end */
		if (d < 0 || (h = lseek(src, d, SEEK_HOLE)) <= d)
			return copy_span(src, dst, off, end, buf);
		if ((uint64_t)d >= end)
			return 0;
		if ((rc = copy_span(src, dst, (uint64_t)d,
				    (uint64_t)h < end ? (uint64_t)h : end, buf)))
			return rc;
		off = (uint64_t)h;
	}
	return 0;
}

static int write_content(struct txfs *fs, struct layer_txn *t,
			 const struct cobj *o, int dst)
{
	int src = -1, rc = 0;
	char *buf = malloc(BS);

	if (!buf)
		return -ENOMEM;
	if ((o->rec.flags & LI_LOWER) && o->rec.lower_valid) {
		src = lower_open(fs, o->lower, O_RDONLY);
		if (src < 0) {
			free(buf);
			return src;
		}
	}
	for (uint64_t b = 0; rc == 0 && b * BS < o->rec.size; b++) {
		uint64_t bs = b * BS, be = bs + BS < o->rec.size ?
					     bs + BS : o->rec.size;
		const void *data;
		size_t len;

		rc = layer_chunk_get(t, o->tino, b, &data, &len);
		if (rc == 0) {
			rc = write_sparse(dst, data, len, (off_t)bs);
		} else if (rc == -ENOENT) {
			rc = 0;
			if (src >= 0 && bs < o->rec.lower_valid)
				rc = stage_copy_lower(src, dst, bs,
					be < o->rec.lower_valid ?
					be : o->rec.lower_valid, buf);
		}
	}
	if (rc == 0 && ftruncate(dst, (off_t)o->rec.size))
		rc = -errno;
	if (src >= 0)
		close(src);
	free(buf);
	return rc;
}

static int prepare_one(struct txfs *fs, struct layer_txn *t, int sfd,
		       const struct cobj *o)
{
	char name[32];
	int fd, rc;

	stage_name(name, sizeof(name), 'd', o->tino);
	unlinkat(sfd, name, 0);
	fd = openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = write_content(fs, t, o, fd);
	if (rc == 0 && o->lower && !(o->rec.flags & LI_XATTRS))
		rc = copy_lower_xattrs(fs, o->lower, fd);
	close(fd);	/* made durable all at once by stage_prepare() */
	return rc;
}

/* Does the step change a name in the real directory (through the
 * staging folder, or beside it)? */
static bool names_step(enum cstep_kind k)
{
	switch (k) {
	case CS_PATCH:
	case CS_META:
	case CS_FORGET:
	case CS_CLEAN:
	case CS_SYNC:
	case CS_FSYNC:
		return false;
	case CS_DETACH:
	case CS_MKDIR:
	case CS_ATTACH:
	case CS_PLACE:
	case CS_COPY:
	case CS_SYMLINK:
	case CS_MKNOD:
	case CS_LINK:
		return true;
	}
	return true;
}

static bool uses_staging(const struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (names_step(p->steps[i].kind))
			return true;
	return false;
}

/* p->refused for a file o too big for the real file system; -err. */
static int stage_refuse_size(struct plan *p, const struct cobj *o, int err)
{
	const char *path = o->finals[0][0] ? o->finals[0] : ".";
	char *q = audit_cquote(path, ": "), *line;

	if (!q || asprintf(&line, "%s: the real file system cannot hold a "
			   "file of %llu bytes: %s", q,
			   (unsigned long long)o->rec.size, strerror(err)) < 0) {
		free(q);
		return -ENOMEM;
	}
	free(q);
	free(p->refused);
	p->refused = line;
	return -err;
}

/* Before anything is written: can the real file system hold the largest
 * file with new contents (staged or patched in place)? A scratch file in
 * the staging folder truncated to its size; EFBIG refuses the commit
 * (p->refused). */
static int check_sizes(struct plan *p, int sfd)
{
	const struct cobj *big = NULL;
	int fd, rc = 0;

	for (size_t i = 0; i < p->n; i++)
		if (!p->objs[i].skip && plan_needs_data(&p->objs[i]) &&
		    (!big || p->objs[i].rec.size > big->rec.size))
			big = &p->objs[i];
	if (!big || big->rec.size == 0)
		return 0;
	unlinkat(sfd, "size", 0);
	fd = openat(sfd, "size", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)big->rec.size))
		rc = errno == EFBIG || errno == EINVAL ?
		     stage_refuse_size(p, big, EFBIG) : -errno;
	close(fd);
	unlinkat(sfd, "size", 0);
	return rc;
}

int stage_prepare(struct txfs *fs, struct plan *p, uint64_t txid)
{
	size_t staged = 0;
	int sfd, rc = 0;

	stage_remove(fs, txid);
	sfd = stage_open(fs, txid, true);
	if (sfd < 0)
		return sfd;
	rc = check_sizes(p, sfd);
	for (size_t i = 0; i < p->n && rc == 0; i++)
		if (!p->objs[i].skip && plan_needs_data(&p->objs[i]) &&
		    !p->objs[i].patch && ++staged &&
		    (rc = prepare_one(fs, p->t, sfd, &p->objs[i])) == 0)
			rc = fault_point(fs, "commit");
		else if (rc == -EFBIG)	/* past the file system's maximum */
			rc = stage_refuse_size(p, &p->objs[i], EFBIG);
	/* one syncfs for every staged file (an fsync each costs ~1 ms a
	 * file), then the folders: all durable before the commit point.
	 * A commit of in-place patches only has nothing staged and no name
	 * to move through the staging folder: nothing to make durable. */
	if (rc == 0 && (staged || uses_staging(p)) &&
	    (syncfs(sfd) || fsync(sfd) || fsync(fs->rootfd)))
		rc = -errno;
	close(sfd);
	return rc;
}
