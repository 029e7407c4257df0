/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lower.c - access to the real directory, only through file descriptors.
 *
 * Every path here is relative to fs->rootfd, the real directory opened
 * before mounting, and is resolved with openat2(2) and RESOLVE_BENEATH |
 * RESOLVE_NO_SYMLINKS: no component may be a symlink and nothing outside
 * the real directory can be reached, whatever a racing process swaps in.
 * Where openat2 is missing (Linux < 5.6), each component is opened with
 * openat(O_NOFOLLOW) in turn, which gives the same guarantee.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "txfs.h"

bool name_ok(const char *name)
{
	return name[0] && strchr(name, '/') == NULL && strcmp(name, ".") &&
	       strcmp(name, "..");
}

char *path_join(const char *dir, const char *name)
{
	size_t a = strlen(dir), b = strlen(name);
	char *p = malloc(a + b + 2);

	if (!p)
		return NULL;
	if (a) {
		memcpy(p, dir, a);
		p[a++] = '/';
	}
	memcpy(p + a, name, b + 1);
	return p;
}

static int open2(struct txfs *fs, const char *rel, int flags)
{
	struct open_how how = {
		.flags = (uint64_t)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd = syscall(SYS_openat2, fs->rootfd, rel, &how, sizeof(how));

	if (fd < 0)
		return -errno;
	return (int)fd;
}

/* The component walk for kernels without openat2. */
static int open_walk(struct txfs *fs, const char *rel, int flags)
{
	char *copy = strdup(rel), *save = NULL, *c, *next;
	int dfd = fs->rootfd, fd = -ENOENT;

	if (!copy)
		return -ENOMEM;
	c = strtok_r(copy, "/", &save);
	while (c) {
		next = strtok_r(NULL, "/", &save);
		if (!name_ok(c)) {
			fd = -EINVAL;
			break;
		}
		fd = openat(dfd, c, (next ? O_PATH | O_DIRECTORY : flags) |
					    O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			fd = -errno;
		if (dfd != fs->rootfd)
			close(dfd);
		if (fd < 0 || !next)
			break;
		dfd = fd;
		c = next;
	}
	free(copy);
	return fd;
}

/* Probe once, at mount, whether openat2 works here. */
bool lower_has_openat2(int rootfd)
{
	struct open_how how = { .flags = O_PATH | O_CLOEXEC,
				.resolve = RESOLVE_BENEATH };
	long fd = syscall(SYS_openat2, rootfd, ".", &how, sizeof(how));

	if (fd < 0)
		return false;
	close((int)fd);
	return true;
}

int lower_open(struct txfs *fs, const char *relpath, int flags)
{
	const char *rel = relpath[0] ? relpath : ".";
	int fd;

	if (fs->use_openat2)
		return open2(fs, rel, flags);
	if (!relpath[0]) {
		fd = openat(fs->rootfd, ".", flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	return open_walk(fs, relpath, flags);
}

int lower_stat(struct txfs *fs, const char *relpath, struct stat *st)
{
	int fd, rc = 0;

	if (!relpath[0])
		return fstat(fs->rootfd, st) ? -errno : 0;
	fd = lower_open(fs, relpath, O_PATH);
	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		rc = -errno;
	close(fd);
	return rc;
}

int lower_stat_at(struct txfs *fs, const char *dir, const char *name,
		  struct stat *st)
{
	int dfd, rc = 0;

	if (!dir[0])
		return fstatat(fs->rootfd, name, st, AT_SYMLINK_NOFOLLOW) ?
			       -errno : 0;
	dfd = lower_open(fs, dir, O_PATH | O_DIRECTORY);
	if (dfd < 0)
		return dfd == -ENOTDIR ? -ENOENT : dfd;
	if (fstatat(dfd, name, st, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	close(dfd);
	return rc;
}

int lower_readlink(struct txfs *fs, const char *relpath, char *buf,
		   size_t size)
{
	int fd = lower_open(fs, relpath, O_PATH);
	ssize_t n;

	if (fd < 0)
		return fd;
	n = readlinkat(fd, "", buf, size);
	close(fd);
	if (n < 0)
		return -errno;
	return (int)n;
}
