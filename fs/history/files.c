// SPDX-License-Identifier: Apache-2.0
/*
 * files.c - the file work of history/ on folder fds: a path's parent
 * beneath a root with no symlink followed, copying an object (deep) with
 * its metadata, and an object's metadata to and from manifest.json.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "hist_int.h"

char hist_type(mode_t mode)
{
	return S_ISDIR(mode) ? 'd' : S_ISLNK(mode) ? 'l' : S_ISFIFO(mode) ? 'p' :
	       S_ISSOCK(mode) ? 's' : 'f';
}

json_t *hist_state_json(const struct stat *st)
{
	return json_pack("{sIsssIsI}", "ino", (json_int_t)st->st_ino, "type",
			 (char[2]){ hist_type(st->st_mode), 0 }, "size",
			 (json_int_t)st->st_size, "mtime",
			 (json_int_t)st->st_mtim.tv_sec * 1000000000LL +
				 st->st_mtim.tv_nsec);
}

static int open_beneath(int root, const char *path, int flags)
{
	struct open_how how = { .flags = (uint64_t)(flags | O_CLOEXEC),
				.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
					   RESOLVE_NO_MAGICLINKS };
	long fd = syscall(SYS_openat2, root, path[0] ? path : ".", &how,
			  sizeof(how));

	return fd < 0 ? -errno : (int)fd;
}

int hist_parent(int root, const char *path, const char **base, bool create)
{
	const char *slash = strrchr(path, '/');
	char *dir;
	int fd;

	*base = slash ? slash + 1 : path;
	if (!slash)
		return open_beneath(root, "", O_PATH | O_DIRECTORY);
	dir = strndup(path, (size_t)(slash - path));
	if (!dir)
		return -ENOMEM;
	fd = open_beneath(root, dir, O_PATH | O_DIRECTORY);
	if (fd == -ENOENT && create) {
		const char *pb;
		int pfd = hist_parent(root, dir, &pb, true);

		if (pfd >= 0) {
			if (mkdirat(pfd, pb, 0755) && errno != EEXIST)
				fd = -errno;
			else
				fd = open_beneath(root, dir, O_PATH | O_DIRECTORY);
			close(pfd);
		} else {
			fd = pfd;
		}
	}
	free(dir);
	return fd;
}

static char hexd(unsigned v)
{
	return "0123456789abcdef"[v & 15];
}

/* The xattrs of fd (O_PATH; through /proc/self/fd) into obj "xattrs";
 * fd -1 (an object kept whole keeps its own): no "xattrs" (as none). */
static int xattrs_put(json_t *obj, int fd)
{
	char path[64], list[4096], val[4096], hex[8193];
	ssize_t n, vl;
	json_t *x = fd >= 0 ? json_object() : NULL;

	if (fd < 0)
		return 0;
	if (!x)
		return -ENOMEM;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = fd >= 0 ? listxattr(path, list, sizeof(list)) : -1;
	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(list + i) + 1) {
		vl = getxattr(path, list + i, val, sizeof(val));
		if (vl < 0)
			continue;
		for (ssize_t k = 0; k < vl; k++) {
			hex[2 * k] = hexd((unsigned)(unsigned char)val[k] >> 4);
			hex[2 * k + 1] = hexd((unsigned char)val[k]);
		}
		hex[2 * vl] = 0;
		json_object_set_new_nocheck(x, list + i, json_string(hex));
	}
	return json_object_set_new(obj, "xattrs", x) ? -ENOMEM : 0;
}

int hist_meta_put(json_t *obj, const struct stat *st, int fd,
		  const char *target)
{
	int64_t at = (int64_t)st->st_atim.tv_sec * 1000000000LL + st->st_atim.tv_nsec;
	int64_t mt = (int64_t)st->st_mtim.tv_sec * 1000000000LL + st->st_mtim.tv_nsec;

	if (json_object_set_new(obj, "ino", json_integer((json_int_t)st->st_ino)) ||
	    json_object_set_new(obj, "mode", json_integer(st->st_mode & 07777)) ||
	    json_object_set_new(obj, "uid", json_integer(st->st_uid)) ||
	    json_object_set_new(obj, "gid", json_integer(st->st_gid)) ||
	    json_object_set_new(obj, "atime", json_integer(at)) ||
	    json_object_set_new(obj, "mtime", json_integer(mt)) ||
	    json_object_set_new(obj, "size", json_integer((json_int_t)st->st_size)) ||
	    json_object_set_new(obj, "type",
				json_sprintf("%c", hist_type(st->st_mode))) ||
	    (target && json_object_set_new(obj, "target", hist_jname(target))))
		return -ENOMEM;
	return S_ISLNK(st->st_mode) ? 0 : xattrs_put(obj, fd);
}

static int unhex(const char *s, char *out, size_t cap)
{
	size_t n = strlen(s) / 2;

	if (n > cap)
		return -E2BIG;
	for (size_t i = 0; i < n; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			return -EINVAL;
		out[i] = (char)v;
	}
	return (int)n;
}

int hist_meta_set(int dir, const char *name, json_t *obj)
{
	struct timespec ts[2];
	const char *type = hist_str(obj, "type"), *k;
	char path[64], val[4096];
	json_t *v;
	int fd, rc = 0;

	ts[0].tv_sec = hist_i64(obj, "atime") / 1000000000LL;
	ts[0].tv_nsec = hist_i64(obj, "atime") % 1000000000LL;
	ts[1].tv_sec = hist_i64(obj, "mtime") / 1000000000LL;
	ts[1].tv_nsec = hist_i64(obj, "mtime") % 1000000000LL;
	/* the owner first: chown clears set-id bits the mode then sets */
	if (fchownat(dir, name, (uid_t)hist_i64(obj, "uid"),
		     (gid_t)hist_i64(obj, "gid"), AT_SYMLINK_NOFOLLOW) &&
	    errno != EPERM)
		rc = -errno;
	if (type && type[0] == 'l')
		return utimensat(dir, name, ts, AT_SYMLINK_NOFOLLOW) ? -errno : rc;
	fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	json_object_foreach(json_object_get(obj, "xattrs"), k, v) {
		int n = unhex(json_string_value(v), val, sizeof(val));

		if (n >= 0)
			setxattr(path, k, val, (size_t)n, 0);
	}
	if (fchmodat(dir, name, (mode_t)hist_i64(obj, "mode"), 0) && rc == 0)
		rc = -errno;
	if (utimensat(dir, name, ts, AT_SYMLINK_NOFOLLOW) && rc == 0)
		rc = -errno;
	close(fd);
	return rc;
}

/* --- copying ---------------------------------------------------------- */

static int copy_xattrs(int sfd, int dfd)
{
	char list[4096], val[4096];
	ssize_t n = flistxattr(sfd, list, sizeof(list));

	for (ssize_t i = 0; i < n; i += (ssize_t)strlen(list + i) + 1) {
		ssize_t vl = fgetxattr(sfd, list + i, val, sizeof(val));

		if (vl >= 0)
			fsetxattr(dfd, list + i, val, (size_t)vl, 0);
	}
	return 0;
}

/* read/write from off to end (copy_file_range cannot cross file systems) */
static int copy_rw(int s, int d, off_t off, off_t end)
{
	char buf[65536];

	while (off < end) {
		ssize_t n = pread(s, buf, sizeof(buf), off);

		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (pwrite(d, buf, (size_t)n, off) != n)
			return errno ? -errno : -EIO;
		off += n;
	}
	return 0;
}

static int copy_file(int sdir, const char *sname, int ddir, const char *dname,
		     const struct stat *st)
{
	int s = openat(sdir, sname, O_RDONLY | O_NOFOLLOW | O_CLOEXEC), d, rc = 0;
	off_t off = 0;

	if (s < 0)
		return -errno;
	d = openat(ddir, dname, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (d < 0) {
		rc = -errno;
		close(s);
		return rc;
	}
	while (off < st->st_size) {
		ssize_t n = copy_file_range(s, &off, d, &off,
					    (size_t)(st->st_size - off), 0);

		if (n < 0 && (errno == EXDEV || errno == EINVAL ||
			      errno == EOPNOTSUPP || errno == ENOSYS)) {
			rc = copy_rw(s, d, off, st->st_size);	/* other fs */
			break;
		}
		if (n < 0) {
			rc = -errno;
			break;
		}
		if (n == 0)
			break;
	}
	if (rc == 0)
		rc = copy_xattrs(s, d);
	if (rc == 0 && fsync(d))
		rc = -errno;
	close(s);
	close(d);
	return rc;
}

static int copy_dir(int sdir, const char *sname, int ddir, const char *dname)
{
	int s = openat(sdir, sname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	int d = -1, rc = 0;
	struct dirent *e;
	DIR *dp;

	if (s < 0)
		return -errno;
	if (mkdirat(ddir, dname, 0700) && errno != EEXIST) {
		rc = -errno;
		close(s);
		return rc;
	}
	d = openat(ddir, dname, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	dp = fdopendir(s);
	if (d < 0 || !dp) {
		rc = -errno;
		goto out;
	}
	while (rc == 0 && (e = readdir(dp)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			rc = hist_copy(s, e->d_name, d, e->d_name);
	if (rc == 0)
		rc = copy_xattrs(s, d);
out:
	if (dp)
		closedir(dp);
	else
		close(s);
	if (d >= 0)
		close(d);
	return rc;
}

int hist_copy(int sdir, const char *sname, int ddir, const char *dname)
{
	struct timespec ts[2];
	char target[4096];
	struct stat st;
	ssize_t n;
	int rc;

	if (fstatat(sdir, sname, &st, AT_SYMLINK_NOFOLLOW))
		return -errno;
	if (S_ISREG(st.st_mode)) {
		rc = copy_file(sdir, sname, ddir, dname, &st);
	} else if (S_ISDIR(st.st_mode)) {
		rc = copy_dir(sdir, sname, ddir, dname);
	} else if (S_ISLNK(st.st_mode)) {
		n = readlinkat(sdir, sname, target, sizeof(target) - 1);
		if (n < 0)
			return -errno;
		target[n] = 0;
		rc = symlinkat(target, ddir, dname) ? -errno : 0;
	} else {
		rc = mknodat(ddir, dname, st.st_mode & (S_IFMT | 07777), 0) ? -errno : 0;
	}
	if (rc)
		return rc;
	if (fchownat(ddir, dname, st.st_uid, st.st_gid, AT_SYMLINK_NOFOLLOW) == 0 &&
	    !S_ISLNK(st.st_mode))
		fchmodat(ddir, dname, st.st_mode & 07777, 0);
	else if (!S_ISLNK(st.st_mode))
		fchmodat(ddir, dname, st.st_mode & 0777, 0);
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	utimensat(ddir, dname, ts, AT_SYMLINK_NOFOLLOW);
	return 0;
}
