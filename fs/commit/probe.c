/* SPDX-License-Identifier: Apache-2.0 */
/*
 * probe.c - before the commit point (commit.c calls it after staging),
 * what the real
 * file system would refuse for good after it: a step that fails there can
 * only be listed as missed, so the commit is refused here instead, with
 * nothing changed and the transaction still staged (p->refused says
 * which path and why). Tried on the staging folder, which lives on the
 * real file system:
 *   - user.* xattrs: set on the staged copy of a file (it is renamed into
 *     place with them), or for an object changed in place (a folder, a
 *     patched or metadata-only file) on a scratch file, then removed:
 *     ext4 refuses a value that does not fit its inode and one block
 *     (ENOSPC, E2BIG), any file system a name too long (ERANGE);
 *   - (stage.c, before anything is written) the size of every file
 *     with new contents: a scratch file truncated to the largest one
 *     (EFBIG past the file system's maximum);
 *   - owners: a scratch file chowned to an owner id the file system
 *     cannot store (EINVAL; EPERM is not an error: owners are set only
 *     where permitted).
 * A step can still fail for good after the commit point (the real
 * directory changed, an xattr the real object already has leaves less
 * room): apply.c lists it as missed and completes the rest.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "commit.h"

#define PROBE_NAME "probe"

struct xtry {
	int fd;
	int err;
	char *name;	/* the xattr refused */
};

static int try_one_xattr(void *arg, const char *name, const void *val,
			 size_t len)
{
	struct xtry *x = arg;

	if (strncmp(name, "user.", 5))
		return 0;	/* apply.c sets the layer's user.* ones */
	if (fsetxattr(x->fd, name, val, len, 0) == 0)
		return 0;
	x->err = errno;
	x->name = audit_cquote(name, ": ");	/* a name for a terminal */
	return x->name ? -ECANCELED : -ENOMEM;
}

static void remove_user_xattrs(int fd)
{
	char list[8192];
	ssize_t n = flistxattr(fd, list, sizeof(list));

	for (ssize_t i = 0; n > 0 && i < n; i += (ssize_t)strlen(list + i) + 1)
		if (!strncmp(list + i, "user.", 5))
			fremovexattr(fd, list + i);
}

static int refuse(struct plan *p, const struct cobj *o, const char *fmt,
		  const char *arg, int err)
{
	char *q = audit_cquote(o->finals[0][0] ? o->finals[0] : ".", ": ");
	char *why, *line;
	int rc = -ENOMEM;

	if (!q)
		return rc;
	if (asprintf(&why, fmt, arg) < 0)
		goto out;
	if (asprintf(&line, "%s: %s: %s", q, why, strerror(err)) >= 0) {
		free(p->refused);
		p->refused = line;
		rc = err == ENOSPC || err == EDQUOT || err == EFBIG ? -err :
								      -EINVAL;
	}
	free(why);
out:
	free(q);
	return rc;
}

/* Set o's layer xattrs on fd; a refusal names the path and the xattr. */
static int try_xattrs(struct plan *p, const struct cobj *o, int fd)
{
	struct xtry x = { fd, 0, NULL };
	int rc = layer_xattr_each(p->t, o->tino, try_one_xattr, &x);

	if (rc == -ECANCELED)
		rc = refuse(p, o, "the real file system cannot store its "
			    "extended attribute %s", x.name, x.err);
	free(x.name);
	return rc;
}

static bool sets_xattrs(const struct cobj *o)
{
	return !S_ISLNK(o->rec.mode) && (!(o->rec.flags & LI_LOWER) ||
					 (o->rec.flags & LI_XATTRS));
}

static bool staged_copy(const struct cobj *o)
{
	return plan_needs_data(o) && !o->patch;
}

/* The xattrs of an object with a staged copy, set on that copy. */
static int probe_staged(struct plan *p, int sfd, const struct cobj *o)
{
	char name[32];
	int fd, rc;

	stage_name(name, sizeof(name), 'd', o->tino);
	fd = openat(sfd, name, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = try_xattrs(p, o, fd);
	close(fd);
	return rc;
}

/* Everything else, on the scratch file sc (owned by the committer). */
static int probe_scratch(struct plan *p, int sc, const struct stat *sst,
			 const struct cobj *o)
{
	char ids[64];
	int rc = 0;

	if ((o->rec.uid != sst->st_uid || o->rec.gid != sst->st_gid) &&
	    fchown(sc, o->rec.uid, o->rec.gid) && errno != EPERM) {
		snprintf(ids, sizeof(ids), "%u:%u", (unsigned)o->rec.uid,
			 (unsigned)o->rec.gid);
		return refuse(p, o, "the real file system cannot give it the "
			      "owner %s", ids, errno);
	}
	if (fchown(sc, sst->st_uid, sst->st_gid) && errno != EPERM)
		return -errno;
	if (sets_xattrs(o)) {
		rc = try_xattrs(p, o, sc);
		remove_user_xattrs(sc);
	}
	return rc;
}

int stage_probe(struct txfs *fs, struct plan *p, uint64_t txid)
{
	struct stat sst;
	int sfd = stage_open(fs, txid, false), sc, rc;

	if (sfd < 0)
		return sfd;
	unlinkat(sfd, PROBE_NAME, 0);
	sc = openat(sfd, PROBE_NAME, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC,
		    0600);
	if (sc < 0) {
		rc = -errno;
		close(sfd);
		return rc;
	}
	rc = fstat(sc, &sst) ? -errno : 0;
	for (size_t i = 0; i < p->n && rc == 0; i++) {
		const struct cobj *o = &p->objs[i];

		if (o->skip || !o->nfinals)
			continue;
		if (staged_copy(o))
			rc = sets_xattrs(o) ? probe_staged(p, sfd, o) : 0;
		else
			rc = probe_scratch(p, sc, &sst, o);
	}
	close(sc);
	unlinkat(sfd, PROBE_NAME, 0);
	close(sfd);
	return rc;
}
