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
#include <pthread.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lower.h"

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

/* A real object numbered inside the layer's reserved range would collide
 * with the layer's own numbers: it is refused (see layer.h). */
static int ino_check(int rc, const struct stat *st)
{
	return rc == 0 && layer_ino_reserved((uint64_t)st->st_ino) ?
		       -EOVERFLOW : rc;
}

static int stat_raw(struct txfs *fs, const char *relpath, struct stat *st);
static int stat_at_raw(struct txfs *fs, const char *dir, const char *name,
		       struct stat *st);

int lower_stat(struct txfs *fs, const char *relpath, struct stat *st)
{
	return ino_check(stat_raw(fs, relpath, st), st);
}

int lower_stat_at(struct txfs *fs, const char *dir, const char *name,
		  struct stat *st)
{
	return ino_check(stat_at_raw(fs, dir, name, st), st);
}

static int stat_raw(struct txfs *fs, const char *relpath, struct stat *st)
{
	const char *slash = strrchr(relpath, '/');
	int fd, rc = 0;

	if (!relpath[0])
		return fstat(fs->rootfd, st) ? -errno : 0;
	if (fs->lcache && name_ok(slash ? slash + 1 : relpath)) {
		char *dir = slash ? strndup(relpath, (size_t)(slash - relpath)) :
				    strdup("");

		if (!dir)
			return -ENOMEM;
		rc = lower_stat_at(fs, dir, slash ? slash + 1 : relpath, st);
		free(dir);
		return rc;
	}
	fd = lower_open(fs, relpath, O_PATH);
	if (fd < 0)
		return fd;
	if (fstat(fd, st))
		rc = -errno;
	close(fd);
	return rc;
}

/*
 * A small cache of folder fds (O_PATH) by real path, so that a lookup in a
 * real folder costs one fstatat instead of open + fstatat + close. It is
 * direct-mapped and bounded: at most LOWER_CACHE fds, and at most an
 * eighth of the open-files limit (nslots, set again at every flush: a
 * limit lowered on the running daemon, prlimit, is followed), so a tree of
 * any size never exhausts it. Emptied after every commit, which is when
 * real paths change.
 */
struct lower_cache {
	pthread_mutex_t lock;
	size_t nslots;	/* in use: e[0, nslots) */
	struct { char *path; int fd; } e[LOWER_CACHE];
};

static size_t cache_slots(void)
{
	struct rlimit rl;
	rlim_t n = LOWER_CACHE;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		n = rl.rlim_cur / 8;
	return n < 4 ? 4 : n > LOWER_CACHE ? LOWER_CACHE : (size_t)n;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

/* Called once, by the daemon: its soft open-files limit goes up to the
 * hard one (at most 65,536), so that the default soft limit of 1,024
 * does not shrink this cache and the pins of a commit (inode.c), which
 * take shares of it. Never lowered; nothing if it cannot be raised. */
static void raise_nofile(void)
{
	struct rlimit rl;
	rlim_t want;

	if (getrlimit(RLIMIT_NOFILE, &rl))
		return;
	want = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > 65536 ?
		       65536 : rl.rlim_max;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = want;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

int lower_cache_init(struct txfs *fs)
{
	struct lower_cache *c = calloc(1, sizeof(*c));

	if (!c)
		return -ENOMEM;
	raise_nofile();
	pthread_mutex_init(&c->lock, NULL);
	for (size_t i = 0; i < LOWER_CACHE; i++)
		c->e[i].fd = -1;
	c->nslots = cache_slots();
	fs->lcache = c;
	return 0;
}

void lower_cache_flush(struct txfs *fs)
{
	struct lower_cache *c = fs->lcache;

	if (!c)
		return;
	pthread_mutex_lock(&c->lock);
	for (size_t i = 0; i < LOWER_CACHE; i++) {
		if (c->e[i].fd >= 0)
			close(c->e[i].fd);
		free(c->e[i].path);
		c->e[i].path = NULL;
		c->e[i].fd = -1;
	}
	c->nslots = cache_slots();
	pthread_mutex_unlock(&c->lock);
}

void lower_cache_destroy(struct txfs *fs)
{
	if (!fs->lcache)
		return;
	lower_cache_flush(fs);
	pthread_mutex_destroy(&fs->lcache->lock);
	free(fs->lcache);
	fs->lcache = NULL;
}

/* fstatat(dir, name) through the cache; the cache lock is held around the
 * use of the cached fd, so a flush never closes it underneath. */
static int cached_stat_at(struct txfs *fs, const char *dir, const char *name,
			  struct stat *st)
{
	struct lower_cache *c = fs->lcache;
	size_t i;
	int rc = 0, fd;

	pthread_mutex_lock(&c->lock);
	i = (size_t)(hash_str(dir) % c->nslots);
	if (!c->e[i].path || strcmp(c->e[i].path, dir)) {
		fd = lower_open(fs, dir, O_PATH | O_DIRECTORY);
		if (fd < 0) {
			pthread_mutex_unlock(&c->lock);
			return fd == -ENOTDIR ? -ENOENT : fd;
		}
		if (c->e[i].fd >= 0)
			close(c->e[i].fd);
		free(c->e[i].path);
		c->e[i].path = strdup(dir);
		c->e[i].fd = c->e[i].path ? fd : -1;
		if (!c->e[i].path) {
			close(fd);
			pthread_mutex_unlock(&c->lock);
			return -ENOMEM;
		}
	}
	if (fstatat(c->e[i].fd, name, st, AT_SYMLINK_NOFOLLOW))
		rc = -errno;
	pthread_mutex_unlock(&c->lock);
	return rc;
}

static int stat_at_raw(struct txfs *fs, const char *dir, const char *name,
		       struct stat *st)
{
	int dfd, rc = 0;

	if (!dir[0])
		return fstatat(fs->rootfd, name, st, AT_SYMLINK_NOFOLLOW) ?
			       -errno : 0;
	if (fs->lcache)
		return cached_stat_at(fs, dir, name, st);
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
