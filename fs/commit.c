/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commit.c - merging the layer into the real directory, crash-atomically.
 *
 *   1. plan (plan.c) and check for conflicts;
 *   2. prepare: write every new file content into the staging folder
 *      (.txfs.staging/<txid>/d<tino> at the real root, the same filesystem,
 *      so a rename puts it in place) and fsync it and the folder;
 *   3. journal the steps and sync LMDB: THE COMMIT POINT;
 *   4. apply the steps; each is idempotent, so a recovery replays them all
 *      from the first;
 *   5. finalize: one LMDB transaction drops the journal and starts a new,
 *      empty generation of the layer.
 *
 * A crash before 3 leaves the real directory untouched and the layer
 * intact (recovery removes the staging folder); a crash after 3 is rolled
 * forward by the next mount or `txfs recover`. Every real-directory access
 * goes through lower.c (openat2 beneath the root, no symlinks followed).
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

#include "txfs.h"
#include "commit.h"

#define BS ((uint64_t)LAYER_BLOCK)

struct jhead {
	uint64_t txid;
	uint64_t gen;
	uint32_t nsteps;
	uint32_t state;
};

struct jstep {
	uint32_t kind;
	uint32_t alen;
	uint32_t blen;
	uint32_t pad;
	uint64_t tino;
};

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
static int open_parent(struct txfs *fs, const char *path, const char **base)
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

static int stage_open(struct txfs *fs, uint64_t txid, bool create)
{
	char rel[64];

	snprintf(rel, sizeof(rel), TXFS_STAGING "/%llu",
		 (unsigned long long)txid);
	if (create) {
		if (mkdirat(fs->rootfd, TXFS_STAGING, 0700) && errno != EEXIST)
			return -errno;
		if (mkdirat(fs->rootfd, rel, 0700) && errno != EEXIST)
			return -errno;
	}
	return lower_open(fs, rel, O_RDONLY | O_DIRECTORY);
}

static void sname(char *buf, size_t n, char kind, uint64_t tino)
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
static int stage_remove(struct txfs *fs, uint64_t txid)
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
static int copy_lower_range(int src, int dst, uint64_t off, uint64_t end,
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
				rc = copy_lower_range(src, dst, bs,
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

	sname(name, sizeof(name), 'd', o->tino);
	unlinkat(sfd, name, 0);
	fd = openat(sfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	rc = write_content(fs, t, o, fd);
	if (rc == 0 && o->lower && !(o->rec.flags & LI_XATTRS))
		rc = copy_lower_xattrs(fs, o->lower, fd);
	close(fd);	/* made durable all at once by prepare() */
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

static int prepare(struct txfs *fs, struct plan *p, uint64_t txid)
{
	size_t staged = 0;
	int sfd, rc = 0;

	stage_remove(fs, txid);
	sfd = stage_open(fs, txid, true);
	if (sfd < 0)
		return sfd;
	for (size_t i = 0; i < p->n && rc == 0; i++)
		if (!p->objs[i].skip && plan_needs_data(&p->objs[i]) &&
		    !p->objs[i].patch && ++staged &&
		    (rc = prepare_one(fs, p->t, sfd, &p->objs[i])) == 0)
			rc = fault_point(fs, "commit");
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

/* --- the journal ---------------------------------------------------- */

static int journal_write(struct layer_txn *t, const struct plan *p,
			 uint64_t txid)
{
	struct jhead h = { .txid = txid, .gen = layer_txn_gen(t),
			   .nsteps = (uint32_t)p->nsteps, .state = 1 };
	int rc = 0;

	for (size_t i = 0; i < p->nsteps && rc == 0; i++) {
		const struct cstep *s = &p->steps[i];
		struct jstep j = { .kind = s->kind, .tino = s->tino,
				   .alen = (uint32_t)strlen(s->a),
				   .blen = (uint32_t)strlen(s->b) };
		size_t len = sizeof(j) + j.alen + 1 + j.blen + 1;
		char *buf = malloc(len);

		if (!buf)
			return -ENOMEM;
		memcpy(buf, &j, sizeof(j));
		memcpy(buf + sizeof(j), s->a, j.alen + 1);
		memcpy(buf + sizeof(j) + j.alen + 1, s->b, j.blen + 1);
		rc = layer_journal_put(t, (uint32_t)i, buf, len);
		free(buf);
	}
	return rc ? rc : layer_meta_put(t, "journal", &h, sizeof(h));
}

/* Load the journaled steps into p->steps. */
static int journal_load(struct layer_txn *t, struct plan *p, struct jhead *h)
{
	const void *v;
	size_t len;
	int rc = layer_meta_get(t, "journal", &v, &len);

	if (rc)
		return rc;
	if (len != sizeof(*h))
		return -EIO;
	memcpy(h, v, sizeof(*h));
	p->steps = calloc(h->nsteps ? h->nsteps : 1, sizeof(*p->steps));
	if (!p->steps)
		return -ENOMEM;
	for (uint32_t i = 0; i < h->nsteps; i++) {
		struct jstep j;
		const char *c;

		if ((rc = layer_journal_get(t, i, &v, &len)))
			return rc == -ENOENT ? -EIO : rc;
		memcpy(&j, v, sizeof(j));
		c = (const char *)v + sizeof(j);
		p->steps[i].kind = (enum cstep_kind)j.kind;
		p->steps[i].tino = j.tino;
		p->steps[i].a = strndup(c, j.alen);
		p->steps[i].b = strndup(c + j.alen + 1, j.blen);
		p->nsteps++;
		if (!p->steps[i].a || !p->steps[i].b)
			return -ENOMEM;
	}
	return 0;
}

/* --- applying steps (each idempotent) ------------------------------ */

static bool exists_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* rename src (in sfd) to path; done already if src is gone and path is
 * there. */
static int move_in(struct txfs *fs, int sfd, const char *src,
		   const char *path)
{
	const char *base;
	int pfd = open_parent(fs, path, &base), rc = 0;

	if (pfd < 0)
		return pfd;
	if (renameat(sfd, src, pfd, base)) {
		rc = -errno;
		if (rc == -ENOENT && exists_at(pfd, base))
			rc = 0;
	}
	close(pfd);
	return rc;
}

/*
 * The folder of the last DETACH, kept open for the next ones: they run
 * deepest first and, at one depth, sorted by path (plan.c, cmp_step), so
 * a folder's names come together and its fd is opened once, not once a
 * name. No DETACH moves a folder whose path a later DETACH walks (deeper
 * paths go first), so the fd still names that path while it is cached.
 */
struct parent_cache {
	char *dir;	/* NULL: nothing cached */
	int fd;		/* an fd, or the negative errno of opening dir */
};

static void parent_cache_drop(struct parent_cache *c)
{
	if (c->dir && c->fd >= 0)
		close(c->fd);
	free(c->dir);
	c->dir = NULL;
}

/* The fd of path's folder (owned by the cache), or a negative errno. */
static int parent_cached(struct txfs *fs, struct parent_cache *c,
			 const char *path, const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	*base = slash ? slash + 1 : path;
	if (c->dir && strlen(c->dir) == len && !strncmp(c->dir, path, len))
		return c->fd;
	parent_cache_drop(c);
	c->dir = strndup(path, len);
	if (!c->dir)
		return -ENOMEM;
	c->fd = lower_open(fs, c->dir, O_PATH | O_DIRECTORY);
	return c->fd;
}

static int step_detach(struct txfs *fs, int sfd, struct parent_cache *pc,
		       const struct cstep *s)
{
	struct stat st;
	char name[32];
	const char *base;
	int pfd, rc = 0;

	sname(name, sizeof(name), 'o', s->tino);
	pfd = parent_cached(fs, pc, s->a, &base);
	if (pfd == -ENOENT || pfd == -ENOTDIR)
		return 0;	/* a replay: its folder moved on already */
	if (pfd < 0)
		return pfd;
	if (s->tino == 0)	/* a real name that goes away */
		return unlinkat(pfd, base, 0) && errno != ENOENT ? -errno : 0;
	/* only the object meant: on a replay, a new object may be there */
	if (fstatat(pfd, base, &st, AT_SYMLINK_NOFOLLOW) ||
	    (uint64_t)st.st_ino != s->tino)
		return 0;
	if (!strcmp(s->b, CS_GONE) && !S_ISDIR(st.st_mode))
		return unlinkat(pfd, base, 0) && errno != ENOENT ? -errno : 0;
	if (renameat(pfd, base, sfd, name)) {
		rc = -errno;
		if (rc == -ENOENT)
			rc = 0;	/* done before, or gone (forced commit) */
	}
	return rc;
}

static int step_mkdir(struct txfs *fs, const struct cstep *s)
{
	const char *base;
	int pfd = open_parent(fs, s->a, &base), rc = 0;

	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, base, 0700) && errno != EEXIST)
		rc = -errno;
	close(pfd);
	return rc;
}

static int step_copy(struct txfs *fs, int sfd, const struct cstep *s)
{
	char name[32], *buf;
	int src, dst, rc;
	struct stat st;

	sname(name, sizeof(name), 'd', s->tino);
	src = openat(sfd, name, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return errno == ENOENT ? 0 : -errno;
	dst = lower_open(fs, s->a, O_WRONLY | O_TRUNC);
	buf = malloc(BS);
	if (dst < 0 || !buf || fstat(src, &st)) {
		rc = dst < 0 ? dst : -ENOMEM;
		goto out;
	}
	rc = copy_lower_range(src, dst, 0, (uint64_t)st.st_size, buf);
	if (rc == 0 && fsync(dst))
		rc = -errno;
out:
	free(buf);
	if (dst >= 0)
		close(dst);
	close(src);
	return rc;
}

static int step_symlink(struct txfs *fs, const struct cstep *s)
{
	char cur[4097];
	const char *base;
	ssize_t n;
	int pfd = open_parent(fs, s->a, &base), rc = 0;

	if (pfd < 0)
		return pfd;
	if (symlinkat(s->b, pfd, base) == 0)
		goto out;
	if (errno != EEXIST) {
		rc = -errno;
		goto out;
	}
	/* done before (a replay), or something else is in the way */
	n = readlinkat(pfd, base, cur, sizeof(cur) - 1);
	if (n >= 0 && (size_t)n == strlen(s->b) && !memcmp(cur, s->b, (size_t)n))
		goto out;
	if (unlinkat(pfd, base, 0) || symlinkat(s->b, pfd, base))
		rc = -errno;
out:
	close(pfd);
	return rc;
}

static int step_mknod(struct txfs *fs, const struct layer_inode *rec,
		      const struct cstep *s)
{
	const char *base;
	int pfd = open_parent(fs, s->a, &base), rc = 0;

	if (pfd < 0)
		return pfd;
	if (mknodat(pfd, base, (rec->mode & S_IFMT) | 0600, 0) &&
	    errno != EEXIST)
		rc = -errno;
	close(pfd);
	return rc;
}

static int step_link(struct txfs *fs, int sfd, const struct cstep *s)
{
	const char *ba, *bb;
	struct stat sa, sb;
	char tmp[40];
	int pa = open_parent(fs, s->a, &ba), pb, rc = 0;

	if (pa < 0)
		return pa;
	pb = open_parent(fs, s->b, &bb);
	if (pb < 0) {
		close(pa);
		return pb;
	}
	if (linkat(pa, ba, pb, bb, 0) == 0)
		goto out;
	rc = -errno;
	if (rc == -EEXIST && fstatat(pa, ba, &sa, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fstatat(pb, bb, &sb, AT_SYMLINK_NOFOLLOW) == 0) {
		if (sa.st_ino == sb.st_ino)
			rc = 0;
		else {
			snprintf(tmp, sizeof(tmp), "l%llx",
				 (unsigned long long)s->tino);
			unlinkat(sfd, tmp, 0);
			rc = linkat(pa, ba, sfd, tmp, 0) ||
			     renameat(sfd, tmp, pb, bb) ? -errno : 0;
		}
	}
out:
	close(pa);
	close(pb);
	return rc;
}

struct xset {
	int fd;
	const char *path;
};

static int set_one_xattr(void *arg, const char *name, const void *val,
			 size_t len)
{
	const struct xset *x = arg;

	return setxattr(x->path, name, val, len, 0) ? -errno : 0;
}

/* Make the real object's user.* xattrs exactly the layer's. */
static int step_xattrs(struct layer_txn *t, uint64_t tino, int fd)
{
	char path[64], list[8192];
	struct xset x = { fd, path };
	const void *v;
	size_t vl;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = listxattr(path, list, sizeof(list));
	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(list + i) + 1)
		if (!strncmp(list + i, "user.", 5) &&
		    layer_xattr_get(t, tino, list + i, &v, &vl) == -ENOENT)
			removexattr(path, list + i);
	return layer_xattr_each(t, tino, set_one_xattr, &x);
}

static struct timespec ts_of(int64_t ns)
{
	return (struct timespec){ ns / 1000000000LL, ns % 1000000000LL };
}

static int step_meta(struct txfs *fs, struct layer_txn *t,
		     const struct layer_inode *rec, const struct cstep *s)
{
	struct timespec tv[2] = { ts_of(rec->atime_ns), ts_of(rec->mtime_ns) };
	const char *base;
	int pfd, fd, rc = 0;
	bool lnk = S_ISLNK(rec->mode);

	if (s->a[0] == '\0') {
		pfd = lower_open(fs, "", O_PATH | O_DIRECTORY);
		base = ".";
	} else {
		pfd = open_parent(fs, s->a, &base);
	}
	if (pfd < 0)
		return pfd;
	if (fchownat(pfd, base, rec->uid, rec->gid, AT_SYMLINK_NOFOLLOW) &&
	    errno != EPERM)
		rc = -errno;	/* owners only where permitted */
	if (rc == 0 && !lnk && fchmodat(pfd, base, rec->mode & 07777, 0))
		rc = -errno;
	if (rc == 0 && !lnk && (!(rec->flags & LI_LOWER) ||
				(rec->flags & LI_XATTRS))) {
		fd = openat(pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		rc = fd < 0 ? -errno : step_xattrs(t, s->tino, fd);
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0 && utimensat(pfd, base, tv, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	close(pfd);
	return rc;
}

/* Times only, for a folder the layer has no record of. */
static int step_times(struct txfs *fs, const struct cstep *s)
{
	long long at = 0, mt = 0;
	struct timespec tv[2];
	const char *base;
	int pfd, rc = 0;

	if (sscanf(s->b, "%lld %lld", &at, &mt) != 2)
		return -EINVAL;
	tv[0] = ts_of(at);
	tv[1] = ts_of(mt);
	if (s->a[0] == '\0') {
		pfd = lower_open(fs, "", O_PATH | O_DIRECTORY);
		base = ".";
	} else {
		pfd = open_parent(fs, s->a, &base);
	}
	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (utimensat(pfd, base, tv, AT_SYMLINK_NOFOLLOW) && errno != ENOENT)
		rc = -errno;
	close(pfd);
	return rc;
}

static int apply_step(struct txfs *fs, struct layer_txn *t, int sfd,
		      struct parent_cache *pc, uint64_t txid,
		      const struct cstep *s, const char *phase)
{
	struct layer_ino_view lv;
	char name[32];
	int rc;

	if (s->kind != CS_DETACH)
		parent_cache_drop(pc);	/* other steps change folders */
	switch (s->kind) {
	case CS_DETACH:
		return step_detach(fs, sfd, pc, s);
	case CS_MKDIR:
		return step_mkdir(fs, s);
	case CS_ATTACH:
	case CS_PLACE:
		sname(name, sizeof(name), s->kind == CS_ATTACH ? 'o' : 'd',
		      s->tino);
		return move_in(fs, sfd, name, s->a);
	case CS_COPY:
		return step_copy(fs, sfd, s);
	case CS_PATCH:
		return patch_apply(fs, t, s, phase);
	case CS_FSYNC:
		return patch_fsync(fs, s);
	case CS_SYMLINK:
		return step_symlink(fs, s);
	case CS_LINK:
		return step_link(fs, sfd, s);
	case CS_META:
		if (s->tino == 0)
			return step_times(fs, s);
		/* fall through */
	case CS_MKNOD:
		if ((rc = layer_inode_get(t, s->tino, &lv)))
			return rc;
		return s->kind == CS_MKNOD ? step_mknod(fs, &lv.rec, s) :
					     step_meta(fs, t, &lv.rec, s);
	case CS_CLEAN:
		return stage_remove(fs, txid);
	case CS_SYNC:
		return syncfs(fs->rootfd) ? -errno : 0;
	case CS_FORGET:
		return 0;	/* done by finalize_partial */
	}
	return -EINVAL;
}

static int apply_all(struct txfs *fs, struct plan *p, uint64_t txid,
		     const char *phase)
{
	struct parent_cache pc = { NULL, -1 };
	struct layer_txn *t;
	int sfd, rc;

	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	sfd = stage_open(fs, txid, true);
	if (sfd < 0) {
		layer_txn_end(t);
		return sfd;
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		if ((rc = apply_step(fs, t, sfd, &pc, txid, &p->steps[i],
				     phase)) ||
		    (rc = fault_point(fs, phase))) {
			fprintf(stderr, "txfs: commit step %zu (%d %s): %s\n",
				i, p->steps[i].kind, p->steps[i].a,
				strerror(-rc));
			break;
		}
	}
	parent_cache_drop(&pc);
	close(sfd);
	layer_txn_end(t);
	lower_cache_flush(fs);	/* real paths changed under the cache */
	return rc;
}

/* Drop the journal and start a new, empty generation: the layer is
 * merged. */
static int finalize(struct txfs *fs, uint64_t txid)
{
	struct layer_txn *t;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	if ((rc = layer_journal_clear(t)) ||
	    (rc = layer_meta_del(t, "journal")) ||
	    (rc = layer_meta_del(t, "savepoints")) ||
	    (rc = layer_new_generation(t)) ||
	    (rc = layer_meta_put_u64(t, "txid", txid + 1))) {
		layer_txn_end(t);
		return rc;
	}
	if ((rc = layer_commit(t)))
		return rc;
	return layer_sync(fs->layer);
}

/* --- partial commits: forget what was committed, keep the rest ------ */

struct forget_ctx {
	const uint64_t *tinos;	/* sorted */
	size_t n;
	struct { uint64_t dir; char *name; } *dead;
	size_t nd, cap;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static bool forgotten(const struct forget_ctx *c, uint64_t tino)
{
	return bsearch(&tino, c->tinos, c->n, sizeof(*c->tinos), cmp_u64);
}

static int dead_add(struct forget_ctx *c, uint64_t dir, const char *name,
		    size_t len)
{
	if (c->nd == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		void *n = realloc(c->dead, cap * sizeof(*c->dead));

		if (!n)
			return -ENOMEM;
		c->dead = n;
		c->cap = cap;
	}
	c->dead[c->nd].dir = dir;
	c->dead[c->nd].name = strndup(name, len);
	return c->dead[c->nd++].name ? 0 : -ENOMEM;
}

/* Entries naming a forgotten object, or inside a forgotten folder. */
static int find_dead(void *arg, uint64_t dir, const char *name, size_t len,
		     const struct layer_dirent *d)
{
	struct forget_ctx *c = arg;

	if (forgotten(c, dir) || (d->tino && forgotten(c, d->tino)))
		return dead_add(c, dir, name, len);
	return 0;
}

/* The whiteout a forgotten real object left at its real name. */
static int dead_whiteout(struct txfs *fs, struct layer_txn *t,
			 struct forget_ctx *c, uint64_t tino)
{
	struct layer_ino_view v;
	struct layer_dirent d;
	struct stat st;
	const char *slash, *base;
	char *dir;
	int rc = layer_inode_get(t, tino, &v);

	if (rc || !(v.rec.flags & LI_LOWER) || !v.lower_path[0])
		return rc == -ENOENT ? 0 : rc;
	slash = strrchr(v.lower_path, '/');
	base = slash ? slash + 1 : v.lower_path;
	dir = slash ? strndup(v.lower_path, (size_t)(slash - v.lower_path)) :
		      strdup("");
	if (!dir)
		return -ENOMEM;
	rc = lower_stat(fs, dir, &st);
	free(dir);
	if (rc)
		return 0;	/* that folder moved too: its entries go */
	if (layer_dirent_get(t, (uint64_t)st.st_ino, base, strlen(base), &d) == 0 &&
	    d.tino == 0)
		return dead_add(c, (uint64_t)st.st_ino, base, strlen(base));
	return 0;
}

static int finalize_partial(struct txfs *fs, const struct plan *p)
{
	struct forget_ctx c = { 0 };
	uint64_t *tinos = malloc((p->nsteps + 1) * sizeof(*tinos));
	struct layer_txn *t = NULL;
	int rc;

	if (!tinos)
		return -ENOMEM;
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].kind == CS_FORGET)
			tinos[c.n++] = p->steps[i].tino;
	qsort(tinos, c.n, sizeof(*tinos), cmp_u64);
	c.tinos = tinos;
	if ((rc = layer_begin(fs->layer, true, &t)) ||
	    (rc = layer_dirent_each_all(t, find_dead, &c)))
		goto out;
	for (size_t i = 0; i < c.n && rc == 0; i++)
		rc = dead_whiteout(fs, t, &c, tinos[i]);
	for (size_t i = 0; i < c.nd && rc == 0; i++)
		rc = layer_dirent_del(t, c.dead[i].dir, c.dead[i].name,
				      strlen(c.dead[i].name));
	for (size_t i = 0; i < c.n && rc == 0; i++)
		rc = layer_inode_del(t, tinos[i]);
	if (rc || (rc = layer_sp_clear(t)) ||
	    (rc = layer_meta_del(t, "savepoints")) ||
	    (rc = layer_journal_clear(t)) ||
	    (rc = layer_meta_del(t, "journal")))
		goto out;
	rc = layer_commit(t);
	t = NULL;
	if (rc == 0)
		rc = layer_sync(fs->layer);
out:
	layer_txn_end(t);
	for (size_t i = 0; i < c.nd; i++)
		free(c.dead[i].name);
	free(c.dead);
	free(tinos);
	return rc;
}

static bool is_partial(const struct plan *p)
{
	for (size_t i = 0; i < p->nsteps; i++)
		if (p->steps[i].kind == CS_FORGET)
			return true;
	return false;
}

/* --- the whole commit ----------------------------------------------- */

static bool has_work(const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (!p->objs[i].skip)
			return true;
	return false;
}

int commit_run(struct txfs *fs, struct plan *p, uint64_t txid)
{
	int rc;

	if (!has_work(p)) {	/* nothing staged: no staging, no journal */
		layer_txn_end(p->t);
		p->t = NULL;
		return p->partial ? 0 : finalize(fs, txid);
	}
	rc = prepare(fs, p, txid);

	if (rc == 0)
		rc = fault_point(fs, "commit");
	if (rc == 0)
		rc = journal_write(p->t, p, txid);
	if (rc) {
		stage_remove(fs, txid);
		return rc;	/* before the commit point: nothing happened */
	}
	rc = layer_commit(p->t);
	p->t = NULL;
	if (rc == 0)
		rc = layer_sync(fs->layer);	/* the commit point */
	if (rc) {
		stage_remove(fs, txid);
		return rc;
	}
	if ((rc = fault_point(fs, "commit")) ||
	    (rc = apply_all(fs, p, txid, "commit")) ||
	    (rc = fault_point(fs, "commit")))
		return rc == -EIO ? -EIO : rc;
	return is_partial(p) ? finalize_partial(fs, p) : finalize(fs, txid);
}

int txn_recover(struct txfs *fs, const char **what)
{
	struct plan p = { .fs = fs };
	struct layer_txn *t;
	struct jhead h;
	int rc = layer_begin(fs->layer, false, &t);

	*what = NULL;
	if (rc)
		return rc;
	rc = journal_load(t, &p, &h);
	layer_txn_end(t);
	if (rc == -ENOENT) {
		plan_free(&p);
		if (lower_open(fs, TXFS_STAGING, O_PATH) == -ENOENT)
			return 0;
		*what = "an interrupted commit stopped before its commit "
			"point: the real directory was left as it was and the "
			"staged changes are kept";
		return stage_remove(fs, 0);
	}
	if (rc == 0 && (rc = apply_all(fs, &p, h.txid, "recover")) == 0)
		rc = is_partial(&p) ? finalize_partial(fs, &p) :
				      finalize(fs, h.txid);
	plan_free(&p);
	if (rc == 0)
		*what = "an interrupted commit passed its commit point: it was "
			"completed, the real directory now holds the "
			"committed changes";
	return rc;
}
