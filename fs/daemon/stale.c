/* SPDX-License-Identifier: Apache-2.0 */
/*
 * stale.c - dead txfs mounts: recognise them and detach them.
 *
 * A daemon that died (SIGKILL, crash) leaves its mount behind; every
 * access to it fails with ENOTCONN ("Transport endpoint is not
 * connected"), or ECONNABORTED once aborted through the fusectl folder.
 * Dead mounts can be stacked on one mount point (a mount made over a live
 * one, both daemons killed): each is detached in turn. Whether a mount
 * point holds a txfs mount is read from /proc/self/mountinfo (type
 * fuse.txfs), which never touches the mount itself.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../mount.h"

/* What a FUSE mount whose daemon died answers (ECONNABORTED: aborted
 * through /sys/fs/fuse/connections). */
static bool dead_errno(int e)
{
	return e == ENOTCONN || e == ECONNABORTED;
}

/* Lazily detach mnt: fusermount3 -uz, or umount2 when we are root. */
static int detach(const char *mnt)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		execlp("fusermount3", "fusermount3", "-uz", mnt, (char *)NULL);
		_exit(127);
	}
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 0)
		return 0;
	if (geteuid() == 0 && umount2(mnt, MNT_DETACH) == 0)
		return 0;
	return -EBUSY;
}

int txfs_unmount_stale(const char *mnt)
{
	struct statfs sfs;
	int n = 0, rc;

	/* statfs always asks the daemon (stat may answer from the cache);
	 * dead mounts may be stacked: detach until a live one or none */
	while (n < 16 && statfs(mnt, &sfs) && dead_errno(errno)) {
		if ((rc = detach(mnt)))
			return rc;
		n++;
	}
	if (n)
		fprintf(stderr, "txfs: %s: cleaned %d stale mount%s left by a "
			"dead daemon\n", mnt, n, n == 1 ? "" : "s");
	return 0;
}

/* Undo the octal escapes of a /proc/self/mountinfo field, in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] && s[3]) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = '\0';
}

/* mnt as an absolute path without touching mnt itself (a dead mount
 * answers ENOTCONN to realpath): realpath of its folder + its name. */
static int abs_mnt(const char *mnt, char *out, size_t size)
{
	char buf[PATH_MAX], *slash, *dir;
	size_t len = strlen(mnt);

	if (len == 0 || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, mnt, len + 1);
	while (len > 1 && buf[len - 1] == '/')
		buf[--len] = '\0';
	slash = strrchr(buf, '/');
	if (slash == buf)
		return snprintf(out, size, "%s", buf) < (int)size ? 0 :
			-ENAMETOOLONG;
	if (slash)
		*slash = '\0';
	dir = realpath(slash ? buf : ".", NULL);
	if (!dir)
		return -errno;
	len = (size_t)snprintf(out, size, "%s/%s", strcmp(dir, "/") ? dir : "",
			       slash ? slash + 1 : buf);
	free(dir);
	return len < size ? 0 : -ENAMETOOLONG;
}

bool txfs_is_txfs_mount(const char *mnt)
{
	char want[PATH_MAX], line[8192];
	bool found = false;
	FILE *f;

	if (abs_mnt(mnt, want, sizeof(want)) ||
	    !(f = fopen("/proc/self/mountinfo", "re")))
		return false;
	/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - FSTYPE SOURCE */
	while (fgets(line, sizeof(line), f)) {
		char *save = NULL, *mp = NULL, *t = strtok_r(line, " ", &save);

		for (int i = 0; t && i < 4; i++)
			mp = t = strtok_r(NULL, " ", &save);
		while (t && strcmp(t, "-"))
			t = strtok_r(NULL, " ", &save);
		t = t ? strtok_r(NULL, " ", &save) : NULL;
		if (!mp || !t)
			continue;
		unescape(mp);
		if (!strcmp(mp, want))	/* the last one is the top */
			found = !strcmp(t, "fuse.txfs");
	}
	fclose(f);
	return found;
}
