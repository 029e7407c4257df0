/* SPDX-License-Identifier: Apache-2.0 */
/*
 * apply.c - step 4 of a commit (commit.c has the order of it all): the
 * journaled steps applied to the real directory, after the commit point.
 * Each step is idempotent (it checks what is already done), so a
 * recovery replays them all from the first; the staging folder holds
 * what they move in (stage.c).
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

/* --- applying steps (each idempotent) ------------------------------ */

static bool exists_at(int dfd, const char *name)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0;
}

/* Is name in dfd an object of type fmt (never following a symlink)? */
static bool is_type_at(int dfd, const char *name, mode_t fmt)
{
	struct stat st;

	return fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       (st.st_mode & S_IFMT) == fmt;
}

/* rename src (in sfd) to path; done already if src is gone and path is
 * there. */
static int move_in(struct txfs *fs, int sfd, const char *src,
		   const char *path)
{
	const char *base;
	int pfd = stage_parent(fs, path, &base), rc = 0;

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

	stage_name(name, sizeof(name), 'o', s->tino);
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
	/* a deleted file goes into the history record (a rename), or away */
	if (!strcmp(s->b, CS_GONE) && !S_ISDIR(st.st_mode) &&
	    history_take(fs, pfd, s->a, &st) == 0)
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
	int pfd = stage_parent(fs, s->a, &base), rc = 0;

	if (pfd < 0)
		return pfd;
	if (mkdirat(pfd, base, 0700) && errno != EEXIST)
		rc = -errno;
	else if (!is_type_at(pfd, base, S_IFDIR))
		rc = -EEXIST;	/* not a folder there: made underneath */
	close(pfd);
	return rc;
}

static int step_copy(struct txfs *fs, int sfd, const struct cstep *s)
{
	char name[32], *buf;
	int src, dst, rc;
	struct stat st;

	stage_name(name, sizeof(name), 'd', s->tino);
	src = openat(sfd, name, O_RDONLY | O_CLOEXEC);
	if (src < 0)
		return errno == ENOENT ? 0 : -errno;
	dst = commit_open_writable(fs, s->a, O_TRUNC);	/* 0444 before META */
	buf = malloc(BS);
	if (dst < 0 || !buf || fstat(src, &st)) {
		rc = dst < 0 ? dst : -ENOMEM;
		goto out;
	}
	rc = stage_copy_lower(src, dst, 0, (uint64_t)st.st_size, buf);
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
	int pfd = stage_parent(fs, s->a, &base), rc = 0;

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
	int pfd = stage_parent(fs, s->a, &base), rc = 0;

	if (pfd < 0)
		return pfd;
	if (mknodat(pfd, base, (rec->mode & S_IFMT) | 0600, 0) &&
	    errno != EEXIST)
		rc = -errno;
	else if (!is_type_at(pfd, base, rec->mode & S_IFMT))
		rc = -EEXIST;	/* something else there: made underneath */
	close(pfd);
	return rc;
}

static int step_link(struct txfs *fs, int sfd, const struct cstep *s)
{
	const char *ba, *bb;
	struct stat sa, sb;
	char tmp[40];
	int pa = stage_parent(fs, s->a, &ba), pb, rc = 0;

	if (pa < 0)
		return pa;
	pb = stage_parent(fs, s->b, &bb);
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

static int miss_xattr(struct plan *p, const struct cstep *s,
		      const char *name, int err);

struct xset {
	int fd;
	const char *path;
	struct plan *p;
	const struct cstep *s;
};

/* An xattr the file system refuses for good (too big for what is left of
 * its room, a name too long, none supported): listed as missed. */
static bool xattr_refused(int err)
{
	return err == ENOSPC || err == EDQUOT || err == E2BIG ||
	       err == ERANGE || err == EINVAL || err == EOPNOTSUPP ||
	       err == EPERM || err == EACCES;
}

static int set_one_xattr(void *arg, const char *name, const void *val,
			 size_t len)
{
	const struct xset *x = arg;

	if (setxattr(x->path, name, val, len, 0) == 0)
		return 0;
	return xattr_refused(errno) ? miss_xattr(x->p, x->s, name, errno) :
				      -errno;
}

/* Make the real object's user.* xattrs exactly the layer's. */
static int step_xattrs(struct plan *p, struct layer_txn *t,
		       const struct cstep *s, int fd)
{
	uint64_t tino = s->tino;
	char path[64], list[8192];
	struct xset x = { fd, path, p, s };
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

static int step_meta(struct txfs *fs, struct plan *p, struct layer_txn *t,
		     const struct layer_inode *rec, const struct cstep *s)
{
	struct timespec tv[2] = { ts_of(rec->atime_ns), ts_of(rec->mtime_ns) };
	const char *base;
	char proc[64];
	struct stat st;
	int pfd, fd = -1, rc = 0;
	bool lnk = S_ISLNK(rec->mode);

	if (s->a[0] == '\0') {
		pfd = lower_open(fs, "", O_PATH | O_DIRECTORY);
		base = ".";
	} else {
		pfd = stage_parent(fs, s->a, &base);
	}
	if (pfd < 0)
		return pfd;
	/* the object itself, never what a symlink put there underneath
	 * points at: mode and xattrs are set through this fd */
	fd = openat(pfd, base, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st)) {
		rc = -errno;
		goto out;
	}
	if ((st.st_mode & S_IFMT) != (rec->mode & S_IFMT)) {
		rc = S_ISLNK(st.st_mode) ? -ELOOP : -EEXIST;
		goto out;	/* replaced underneath */
	}
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	if (fchownat(pfd, base, rec->uid, rec->gid, AT_SYMLINK_NOFOLLOW) &&
	    errno != EPERM)
		rc = -errno;	/* owners only where permitted */
	if (rc == 0 && !lnk && chmod(proc, rec->mode & 07777))
		rc = -errno;
	if (rc == 0 && !lnk && (!(rec->flags & LI_LOWER) ||
				(rec->flags & LI_XATTRS)))
		rc = step_xattrs(p, t, s, fd);
	if (rc == 0 && utimensat(pfd, base, tv, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
out:
	if (fd >= 0)
		close(fd);
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
		pfd = stage_parent(fs, s->a, &base);
	}
	if (pfd < 0)
		return pfd == -ENOENT ? 0 : pfd;
	if (utimensat(pfd, base, tv, AT_SYMLINK_NOFOLLOW) && errno != ENOENT)
		rc = -errno;
	close(pfd);
	return rc;
}

static int apply_step(struct txfs *fs, struct plan *p,
		      struct layer_txn *t, int sfd,
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
		stage_name(name, sizeof(name), s->kind == CS_ATTACH ? 'o' : 'd',
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
					     step_meta(fs, p, t, &lv.rec, s);
	case CS_CLEAN:
		return stage_remove(fs, txid);
	case CS_SYNC:
		return syncfs(fs->rootfd) ? -errno : 0;
	case CS_FORGET:
		return 0;	/* done by finalize_partial */
	}
	return -EINVAL;
}

/*
 * After the commit point a step can find the real directory changed
 * underneath by someone else (a folder removed, replaced by a file or by
 * a symlink, a name taken): it can never apply, now or on a replay. Such
 * a step is recorded in p->missed and the commit goes on with the rest,
 * so that it (and any recovery) ends. So is a step the real file system
 * refuses for good, which a retry would only meet again (probe.c refuses
 * what it can find before the commit point): a file past its maximum
 * size (EFBIG), a value it cannot represent (EINVAL, EOVERFLOW, E2BIG,
 * ERANGE), an xattr it has no room for (step_xattrs: that xattr only).
 * Other errors (EIO, ENOSPC and EDQUOT of data, ENOMEM, EROFS, an
 * injected fault) stop it: the journal stays and a recovery retries.
 */
static bool underneath(int rc)
{
	switch (-rc) {
	case ENOENT: case ENOTDIR: case ELOOP: case EISDIR: case ENOTEMPTY:
	case EEXIST: case ESTALE: case EXDEV: case EACCES: case EPERM:
	case EMLINK: case ENAMETOOLONG: case EBUSY: case ETXTBSY:
	case EFBIG: case EINVAL: case EOVERFLOW: case E2BIG: case ERANGE:
		return true;
	}
	return false;
}

static const char *step_what(enum cstep_kind k)
{
	switch (k) {
	case CS_DETACH:	return "not moved away or removed";
	case CS_MKDIR:	return "folder not made";
	case CS_ATTACH:
	case CS_PLACE:	return "not put in place";
	case CS_COPY:
	case CS_PATCH:	return "content not written";
	case CS_SYMLINK: return "symlink not made";
	case CS_MKNOD:	return "not made";
	case CS_LINK:	return "hard link not made";
	case CS_META:	return "mode, owner, times not set";
	case CS_CLEAN:	return "staging folder not removed";
	case CS_SYNC:
	case CS_FSYNC:	return "not synced";
	case CS_FORGET:	break;
	}
	return "not applied";
}

static int miss_line(struct plan *p, const struct cstep *s, const char *what,
		     const char *arg, int rc)
{
	const char *path = s->kind == CS_LINK ? s->b : s->a;
	char *q = audit_cquote(path[0] ? path : ".", ": "), *line, **m;

	if (!q || asprintf(&line, "%s: %s%s: %s", q, what, arg,
			   strerror(-rc)) < 0) {
		free(q);
		return -ENOMEM;
	}
	free(q);
	m = realloc(p->missed, (p->nmissed + 1) * sizeof(*m));
	if (!m) {
		free(line);
		return -ENOMEM;
	}
	p->missed = m;
	p->missed[p->nmissed++] = line;
	return 0;
}

static int miss(struct plan *p, const struct cstep *s, int rc)
{
	return miss_line(p, s, step_what(s->kind), "", rc);
}

static int miss_xattr(struct plan *p, const struct cstep *s,
		      const char *name, int err)
{
	char *q = audit_cquote(name, ": ");	/* a name for a terminal */
	int rc = q ? miss_line(p, s, "extended attribute not set: ", q, -err) :
		     -ENOMEM;

	free(q);
	return rc;
}

/* Does the step move something through the staging folder? */
static bool needs_staging(const struct cstep *s)
{
	if (s->kind == CS_DETACH)
		return s->tino && strcmp(s->b, CS_GONE);
	return s->kind == CS_ATTACH || s->kind == CS_PLACE ||
	       s->kind == CS_COPY || s->kind == CS_LINK;
}

int commit_apply(struct txfs *fs, struct plan *p, uint64_t txid,
		 const char *phase)
{
	struct parent_cache pc = { NULL, -1 };
	struct cstep clean = { .kind = CS_CLEAN, .a = TXFS_STAGING };
	struct layer_txn *t;
	int sfd, rc;

	if ((rc = layer_begin(fs->layer, false, &t)))
		return rc;
	sfd = stage_open(fs, txid, true);
	if (sfd < 0 && (!underneath(sfd) || (rc = miss(p, &clean, sfd)))) {
		layer_txn_end(t);
		return rc ? rc : sfd;
	}
	for (size_t i = 0; i < p->nsteps; i++) {
		const struct cstep *s = &p->steps[i];

		rc = sfd < 0 && needs_staging(s) ? -ENOENT :
		     apply_step(fs, p, t, sfd, &pc, txid, s, phase);
		if (rc && underneath(rc) && (rc = miss(p, s, rc)) == 0)
			parent_cache_drop(&pc);
		if (rc == 0)
			rc = fault_point(fs, phase);
		if (rc) {
			fprintf(stderr, "txfs: commit step %zu (%d %s): %s\n",
				i, s->kind, s->a, strerror(-rc));
			break;
		}
	}
	parent_cache_drop(&pc);
	if (sfd >= 0)
		close(sfd);
	layer_txn_end(t);
	/* the staging folder goes in every outcome that ends the commit */
	if (rc == 0 && p->nmissed)
		stage_remove(fs, txid);
	lower_cache_flush(fs);	/* real paths changed under the cache */
	return rc;
}
