// SPDX-License-Identifier: Apache-2.0
/*
 * confine_ns.c - folders the command must not read (confine_opts.hidden:
 * the state folder, a real directory mounted elsewhere), hidden in a
 * private mount namespace.
 *
 * Landlock cannot do it: its read rights are an allow-list of hierarchies,
 * and a folder cannot be carved out of an allowed parent. So the child,
 * before Landlock and seccomp:
 *
 *   1. unshare(CLONE_NEWNS) when it may (root, CAP_SYS_ADMIN), else
 *      unshare(CLONE_NEWUSER | CLONE_NEWNS) and map only its own uid and
 *      gid (setgroups denied first, as an unprivileged caller must);
 *   2. every mount below / becomes a slave: nothing it mounts propagates
 *      back to the caller's namespace, and the caller's unmounts (txfs
 *      umount of the workspace) still reach it;
 *   3. each hidden folder is covered by an empty tmpfs mounted read-only,
 *      nosuid, nodev, noexec, of mode 000;
 *
 * all of it first tried in a child that exits at once, so that a failure
 * after the unshare (a user namespace without capabilities) leaves the
 * caller as it was, free to fall back to Landlock read rules (below,
 * confine_hide_rules()).
 *
 * The cover is on the folder itself, so every path form reaches it: an
 * absolute path, a symlink, "..", /proc/self/fd of a descriptor opened
 * inside, openat() from any folder descriptor of the namespace. Nothing
 * of the command can remove it: mount, umount2, move_mount, open_tree,
 * unshare and setns are denied by seccomp, and Landlock refuses every
 * mount change to a sandboxed process. The ways around it are the ways
 * into another mount namespace: /proc/PID/root, cwd and fd of a process
 * outside (Landlock's ptrace check refuses those to a sandboxed process
 * for every process outside its domain), and descriptors opened before
 * the unshare (only 0, 1, 2 and --pass-fd reach the command; folders and
 * O_PATH are refused among them, spawn.h).
 *
 * What the command sees: an empty folder it cannot list (EACCES: mode 000
 * and, after exec, no capability) when unprivileged; as root (capabilities
 * kept) an empty folder: every name in it is ENOENT. In the user namespace
 * only the caller's uid and gid are mapped: files of other users and
 * groups (root's /usr) show as 65534 (nobody, nogroup); access is still
 * decided by the real ids.
 *
 * Fails (and the caller falls back to Landlock read rules, or without
 * Landlock refuses unless allow_weaker) where the kernel forbids
 * unprivileged user namespaces (Debian's
 * kernel.unprivileged_userns_clone=0, user.max_user_namespaces=0,
 * Ubuntu's AppArmor restriction) or the caller runs in a multi-threaded
 * process (unshare(CLONE_NEWUSER) needs a single thread: call it in the
 * child between fork and exec, as confine_apply() must be).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "confine.h"

#ifndef __NR_landlock_add_rule
#define __NR_landlock_add_rule 445
#endif

#ifdef TXFS_CONFINE_TEST
bool confine_test_no_ns;
#endif

/* Write text to /proc/self/<file>. 0 or -errno. */
static int write_proc(const char *file, const char *text)
{
	char path[64];
	size_t len = strlen(text);
	ssize_t n;
	int fd, rc = 0;

	snprintf(path, sizeof(path), "/proc/self/%s", file);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, text, len);
	if (n < 0)
		rc = -errno;
	else if ((size_t)n != len)
		rc = -EIO;
	close(fd);
	return rc;
}

static int write_id_maps(uid_t uid, gid_t gid, const char **step)
{
	char map[64];
	int rc;

	*step = "writing /proc/self/setgroups";
	rc = write_proc("setgroups", "deny");
	if (rc < 0 && rc != -ENOENT)	/* before Linux 3.19: no such file */
		return rc;
	*step = "writing /proc/self/uid_map";
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	rc = write_proc("uid_map", map);
	if (rc < 0)
		return rc;
	*step = "writing /proc/self/gid_map";
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	return write_proc("gid_map", map);
}

/* Our uid and gid maps: /proc/self/ of a process that is not dumpable (a
 * changed uid, PR_SET_DUMPABLE 0) belongs to root, so dumpable while we
 * write them, as before after. */
static int write_maps(uid_t uid, gid_t gid, const char **step)
{
	int dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0), rc;

	if (dumpable == 0 && prctl(PR_SET_DUMPABLE, 1, 0, 0, 0) < 0)
		return -errno;
	rc = write_id_maps(uid, gid, step);
	if (dumpable == 0)
		(void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
	return rc;
}

/* A user namespace mapping only our own ids, with a mount namespace. */
static int unshare_user(const char **step, enum confine_ns *how)
{
	uid_t uid = geteuid();	/* before: inside, unmapped ids read 65534 */
	gid_t gid = getegid();

	*step = "unshare(CLONE_NEWUSER|CLONE_NEWNS)";
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) < 0)
		return -errno;
	*how = CONFINE_NS_USER;
	return write_maps(uid, gid, step);
}

/* Cover path with an empty read-only tmpfs of mode 000. */
static int cover(const char *path)
{
	struct stat st;

	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	if (mount("txfs-hidden", path, "tmpfs",
		  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
		  "mode=000,size=4k,nr_inodes=2") < 0)
		return -errno;
	return 0;
}

/* The whole of confine_hide() in this process (n > 0). */
static int hide_here(const char *const *paths, size_t n, enum confine_ns *how,
		     const char **step, bool user_ns)
{
	size_t i;
	int rc;

	*step = "unshare(CLONE_NEWNS)";
	if (unshare(CLONE_NEWNS) < 0) {
		if (errno != EPERM || !user_ns)
			return -errno;
		rc = unshare_user(step, how);
		if (rc < 0)
			return rc;
	} else {
		*how = CONFINE_NS_MOUNT;
	}
	*step = "making the mounts slaves";
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		return -errno;
	for (i = 0; i < n; i++) {
		*step = paths[i];
		rc = cover(paths[i]);
		if (rc < 0)
			return rc;
	}
	*step = NULL;
	return 0;
}

/*
 * Try it first in a child that exits at once: where the unshare succeeds
 * but what follows cannot (a user namespace without capabilities, as
 * Ubuntu's AppArmor restriction leaves it; mounts forbidden by a security
 * module), this process is left as it was, and its caller can fall back.
 * 0 or the child's negative errno.
 */
static int hide_trial(const char *const *paths, size_t n)
{
	enum confine_ns how;
	const char *step;
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0)
		_exit(-hide_here(paths, n, &how, &step, true) & 0xff);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFEXITED(status))
		return -ECHILD;
	return -WEXITSTATUS(status);
}

int confine_hide(const char *const *paths, size_t n, enum confine_ns *how,
		 const char **step)
{
	enum confine_ns dummy_how;
	const char *dummy;
	int rc;

	if (step == NULL)
		step = &dummy;
	if (how == NULL)
		how = &dummy_how;
	*step = NULL;
	*how = CONFINE_NS_NONE;
	if (n == 0)
		return 0;
	*step = "a trial in a child process";
#ifdef TXFS_CONFINE_TEST
	if (confine_test_no_ns)
		return -EPERM;	/* as where user namespaces are disabled */
#endif
	/* root needs no trial (a fork less a command): it takes a mount
	 * namespace only, never a user namespace whose failure halfway would
	 * change what it may do (EPERM without CAP_SYS_ADMIN: the Landlock
	 * fallback), and one left half covered is still its own */
	if (geteuid() == 0)
		return hide_here(paths, n, how, step, false);
	rc = hide_trial(paths, n);
	if (rc < 0)
		return rc;
	return hide_here(paths, n, how, step, true);
}

/* ---- without a namespace: Landlock read rules ------------------------------ */

/* Is p "/", one of the hidden folders, or a folder on the way to one? */
static bool on_way(const char *p, const char *const *hidden, size_t n)
{
	size_t i, len = strlen(p);

	for (i = 0; i < n; i++)
		if (len == 1 || (!strncmp(hidden[i], p, len) &&
				 (hidden[i][len] == '\0' || hidden[i][len] == '/')))
			return true;
	return false;
}

/* Grant rights beneath path itself: O_NOFOLLOW, so a symlink planted
 * beside a hidden folder and pointing into it gets a rule on the link
 * (which nothing reads through), not on its target. */
static int allow_here(int ruleset, const char *path, uint64_t rights)
{
	struct landlock_path_beneath_attr rule;
	struct stat st;
	int fd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC), rc = 0;

	/* gone since the listing; or another user's FUSE mount, which
	 * answers even root EACCES (no allow_other): no rule either way,
	 * so it stays unreadable */
	if (fd < 0)
		return errno == ENOENT || errno == EACCES ? 0 : -errno;
	if (fstat(fd, &st) < 0) {
		rc = errno == EACCES ? 0 : -errno;	/* (the same) */
		goto out_close;
	}
	if (!S_ISDIR(st.st_mode))
		rights &= LANDLOCK_ACCESS_FS_READ_FILE;
	rule.allowed_access = rights;
	rule.parent_fd = fd;
	if (rights && syscall(__NR_landlock_add_rule, ruleset,
			      LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
		rc = -errno;
out_close:
	close(fd);
	return rc;
}

/* Grant rights beneath every entry of dir that is not on the way. */
static int allow_entries(int ruleset, const char *dir, const char *const *hidden,
			 size_t n, uint64_t rights)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	int rc = 0;

	if (!d)
		return -errno;
	while (rc == 0 && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", dir[1] ? dir : "",
				     e->d_name) >= sizeof(path))
			continue;	/* no rule: not readable, never more */
		if (!on_way(path, hidden, n))
			rc = allow_here(ruleset, path, rights);
	}
	closedir(d);
	return rc;
}

int confine_hide_rules(int ruleset, const char *const *hidden, size_t n,
		       uint64_t rights, const char **step)
{
	char dir[PATH_MAX];
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		char *sl;

		snprintf(dir, sizeof(dir), "%s", hidden[i]);
		/* from the hidden folder's parent up to / */
		while ((sl = strrchr(dir, '/'))) {
			sl[sl == dir] = '\0';	/* "/a" -> "/", "/a/b" -> "/a" */
			*step = hidden[i];
			rc = allow_entries(ruleset, dir, hidden, n, rights);
			if (rc < 0)
				return rc;
			if (!strcmp(dir, "/"))
				break;
		}
	}
	*step = NULL;
	return 0;
}
