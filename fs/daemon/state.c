/* SPDX-License-Identifier: Apache-2.0 */
/*
 * state.c - where a workspace's daemon keeps its state, and opening it:
 * the default state folder's name, the real directory opened before the
 * mount hides it, the state folder checked (not inside the workspace, not
 * through a symlink, ours), locked and given the daemon's pid; and rfail,
 * how the mount's start reports an error. Split from mount.c (872 lines),
 * unchanged.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <unistd.h>

#include "daemon.h"

#define FUSE_SUPER_MAGIC 0x65735546

int rfail(struct report *r, int rc, const char *fmt, ...)
{
	char msg[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->fd >= 0) {
		ssize_t n = write(r->fd, msg, strlen(msg));

		(void)n;
		close(r->fd);
		r->fd = -1;
	} else {
		fprintf(stderr, "txfs: %s\n", msg);
	}
	return rc < 0 ? rc : -EIO;
}

/* FNV-1a of the workspace path, for the default state folder's name. */
static uint64_t hash_path(const char *s)
{
	uint64_t h = 1469598103934665603ULL;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ULL;
	return h;
}

int txfs_default_state(const char *ws, char *out, size_t size)
{
	const char *xdg = getenv("XDG_STATE_HOME");
	const char *home = getenv("HOME");
	const char *base = strrchr(ws, '/');
	int n;

	base = base && base[1] ? base + 1 : "root";
	if (xdg && xdg[0] == '/')
		n = snprintf(out, size, "%s/txfs/%s-%016llx", xdg, base,
			     (unsigned long long)hash_path(ws));
	else if (home && home[0] == '/')
		n = snprintf(out, size, "%s/.local/state/txfs/%s-%016llx",
			     home, base, (unsigned long long)hash_path(ws));
	else
		return -ENOENT;
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

/* mkdir -p with mode 0700 for the folders it creates. */
static int mkdir_p(const char *path)
{
	char buf[PATH_MAX];
	size_t len = strlen(path);

	if (len >= sizeof(buf))
		return -ENAMETOOLONG;
	memcpy(buf, path, len + 1);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	if (mkdir(buf, 0700) && errno != EEXIST)
		return -errno;
	return 0;
}

/* Is path inside dir (or equal)? Both are realpaths. */
static bool path_within(const char *path, const char *dir)
{
	size_t n = strlen(dir);

	return strncmp(path, dir, n) == 0 &&
	       (path[n] == '\0' || path[n] == '/' || n == 1);
}

/* Open the real directory and refuse one that is already a FUSE mount
 * (mounting over our own mount would deadlock). */
int daemon_open_workspace(struct txfs *fs, struct report *r)
{
	struct statfs sfs;
	struct stat st;

	fs->ws_path = realpath(fs->opts.workspace, NULL);
	if (!fs->ws_path)
		return rfail(r, -errno, "workspace %s: %s", fs->opts.workspace,
			    strerror(errno));
	fs->rootfd = open(fs->ws_path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fs->rootfd < 0)
		return rfail(r, -errno, "workspace %s: %s", fs->ws_path,
			    strerror(errno));
	if (fstatfs(fs->rootfd, &sfs) == 0 &&
	    (unsigned long)sfs.f_type == FUSE_SUPER_MAGIC)
		return rfail(r, -EBUSY, "workspace %s: is already a FUSE mount "
			    "(already mounted by txfs?)", fs->ws_path);
	if (fstat(fs->rootfd, &st))
		return rfail(r, -errno, "workspace %s: %s", fs->ws_path,
			    strerror(errno));
	if (layer_ino_reserved((uint64_t)st.st_ino))
		return rfail(r, -EOVERFLOW, "workspace %s: inode number %llu is "
			    "in the range txfs keeps for its own objects",
			    fs->ws_path, (unsigned long long)st.st_ino);
	fs->root_dev = st.st_dev;
	fs->root_ino = st.st_ino;
	fs->use_openat2 = lower_has_openat2(fs->rootfd);
	return 0;
}

static int read_pid(int dirfd)
{
	char buf[32] = { 0 };
	int fd = openat(dirfd, "daemon.pid", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : 0;
}

/*
 * The state folder must be ours alone: another user who could write to it
 * or to a folder above it, or who owns a symlink on the way, could swap
 * ctl.sock (fake answers) or the layer. Refused: the folder itself a
 * symlink; a symlink on the way owned by another user (not root); the
 * folder not owned by us, or group/world-writable; a folder above it owned
 * by another user (not root), or group/world-writable without the sticky
 * bit (as /tmp has).
 */
static int check_state_path(const char *given, const char *real,
			    struct report *r)
{
	char buf[PATH_MAX];
	uid_t me = geteuid();
	struct stat st;
	size_t len = strlen(given);

	if (len >= sizeof(buf))
		return rfail(r, -ENAMETOOLONG, "state folder %s: too long", given);
	memcpy(buf, given, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode))
		return rfail(r, -ELOOP, "state folder %s: refused: it is a "
			    "symlink (give its real path)", given);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (lstat(buf, &st) == 0 && S_ISLNK(st.st_mode) &&
		    st.st_uid != me && st.st_uid != 0)
			return rfail(r, -EPERM, "state folder %s: refused: it is "
				    "reached through %s, a symlink owned by uid "
				    "%u", given, buf, (unsigned)st.st_uid);
		*p = '/';
	}
	snprintf(buf, sizeof(buf), "%s", real);
	for (char *p = buf + strlen(buf); p > buf; p = strrchr(buf, '/')) {
		bool self = p == buf + strlen(real);

		*p = '\0';
		if (lstat(buf[0] ? buf : "/", &st))
			return rfail(r, -errno, "state folder %s: %s: %s", real,
				    buf[0] ? buf : "/", strerror(errno));
		if (self ? st.st_uid != me : st.st_uid != me && st.st_uid != 0)
			return rfail(r, -EPERM, "state folder %s: refused: %s is "
				    "owned by uid %u, not by you (uid %u)%s",
				    real, buf[0] ? buf : "/", (unsigned)st.st_uid,
				    (unsigned)me, self ? "" : " or root");
		if ((st.st_mode & 022) && (self || !(st.st_mode & S_ISVTX)))
			return rfail(r, -EPERM, "state folder %s: refused: %s is "
				    "writable by other users (mode %04o)", real,
				    buf[0] ? buf : "/", st.st_mode & 07777);
	}
	return 0;
}

/* Create, open and lock the state folder. */
int daemon_open_state(struct txfs *fs, struct report *r)
{
	char def[PATH_MAX];
	const char *state = fs->opts.state;
	int rc;

	if (!state) {
		if ((rc = txfs_default_state(fs->ws_path, def, sizeof(def))))
			return rfail(r, rc, "state folder: set --state, HOME or "
				    "XDG_STATE_HOME");
		state = def;
	}
	if ((rc = mkdir_p(state)))
		return rfail(r, rc, "state folder %s: %s", state,
			    strerror(-rc));
	fs->state_path = realpath(state, NULL);
	if (!fs->state_path)
		return rfail(r, -errno, "state folder %s: %s", state,
			    strerror(errno));
	if ((rc = check_state_path(state, fs->state_path, r)))
		return rc;
	if (fs->ws_path && path_within(fs->state_path, fs->ws_path))
		return rfail(r, -EINVAL, "state folder %s: must be outside the "
			    "workspace %s", fs->state_path, fs->ws_path);
	fs->statefd = open(fs->state_path,
			   O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fs->statefd < 0)
		return rfail(r, -errno, "state folder %s: %s", fs->state_path,
			    strerror(errno));
	fs->lockfd = openat(fs->statefd, "lock",
			    O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fs->lockfd < 0)
		return rfail(r, -errno, "state folder %s: lock: %s",
			    fs->state_path, strerror(errno));
	for (int i = 0; i < 50 && flock(fs->lockfd, LOCK_EX | LOCK_NB); i++)
		usleep(100000);	/* a daemon just unmounted may be closing */
	if (flock(fs->lockfd, LOCK_EX | LOCK_NB))
		return rfail(r, -EBUSY, "state folder %s: in use by another txfs "
			    "daemon (pid %d)", fs->state_path,
			    read_pid(fs->statefd));
	return 0;
}

int daemon_write_pid(struct txfs *fs)
{
	char buf[32];
	int fd = openat(fs->statefd, "daemon.pid.tmp",
			O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
			0600);
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());

	if (fd < 0)
		return -errno;
	if (write(fd, buf, (size_t)n) != n) {
		close(fd);
		return -EIO;
	}
	close(fd);
	return renameat(fs->statefd, "daemon.pid.tmp", fs->statefd,
			"daemon.pid") ? -errno : 0;
}
