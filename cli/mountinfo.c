// SPDX-License-Identifier: Apache-2.0
/*
 * mountinfo.c - see mountinfo.h.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mountinfo.h"

/* Undo mountinfo's octal escapes (\040 for a space, \011, \012, \134)
 * in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++, o++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' &&
		    s[2] >= '0' && s[2] <= '7' && s[3] >= '0' && s[3] <= '7') {
			*o = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				    (s[3] - '0'));
			s += 3;
		} else {
			*o = *s;
		}
	}
	*o = '\0';
}

int mountinfo_txfs_of(const char *path, bool own, char *mnt, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, want[32];
	size_t cap = 0, best = 0;
	bool found = false;

	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "user_id=%u,", (unsigned)geteuid());
	while (getline(&line, &cap, f) > 0) {
		char *sp = line, *sep, *mp, *opts;
		size_t l;

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTS [TAGS...] - TYPE
		 * SOURCE SUPER_OPTIONS */
		for (int i = 0; i < 4 && sp; i++)
			sp = strchr(sp, ' ') ? strchr(sp, ' ') + 1 : NULL;
		sep = sp ? strstr(sp, " - ") : NULL;
		if (!sep || strncmp(sep + 3, "fuse.txfs ", 10))
			continue;
		opts = strrchr(sep, ' ');	/* the mounter's user_id */
		if (own && (!opts || (geteuid() != 0 && !strstr(opts, want))))
			continue;
		mp = sp;
		*strchr(mp, ' ') = '\0';
		unescape(mp);
		l = strcmp(mp, "/") ? strlen(mp) : 0;
		if (strncmp(path, mp, l) || (path[l] && path[l] != '/') ||
		    (found && l < best) || strlen(mp) >= size)
			continue;
		memcpy(mnt, mp, strlen(mp) + 1);
		best = l;
		found = true;
	}
	free(line);
	fclose(f);
	return found ? 0 : -ENOENT;
}

int mountinfo_txfs_source(const char *mnt, char *src, size_t size)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;

	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		char *sp = line, *sep, *mp, *so, *end;

		for (int i = 0; i < 4 && sp; i++)
			sp = strchr(sp, ' ') ? strchr(sp, ' ') + 1 : NULL;
		sep = sp ? strstr(sp, " - ") : NULL;
		if (!sep || strncmp(sep + 3, "fuse.txfs ", 10))
			continue;
		mp = sp;
		*strchr(mp, ' ') = '\0';
		unescape(mp);
		so = sep + 13;		/* " - fuse.txfs " */
		if (strcmp(mp, mnt) || !(end = strchr(so, ' ')))
			continue;
		*end = '\0';
		unescape(so);
		if (strlen(so) >= size)
			continue;
		memcpy(src, so, strlen(so) + 1);	/* the last: topmost */
		found = true;
	}
	free(line);
	fclose(f);
	return found ? 0 : -ENOENT;
}

int mountinfo_txfs_each(int (*fn)(void *arg, const char *mnt,
				  const char *src), void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL, want[32];
	size_t cap = 0;
	int rc = 0;

	if (!f)
		return -errno;
	snprintf(want, sizeof(want), "user_id=%u,", (unsigned)geteuid());
	while (rc == 0 && getline(&line, &cap, f) > 0) {
		char *sp = line, *sep, *mp, *so, *end, *opts;

		for (int i = 0; i < 4 && sp; i++)
			sp = strchr(sp, ' ') ? strchr(sp, ' ') + 1 : NULL;
		sep = sp ? strstr(sp, " - ") : NULL;
		if (!sep || strncmp(sep + 3, "fuse.txfs ", 10))
			continue;
		opts = strrchr(sep, ' ');
		if (geteuid() != 0 && (!opts || !strstr(opts, want)))
			continue;
		mp = sp;
		*strchr(mp, ' ') = '\0';
		unescape(mp);
		so = sep + 13;		/* " - fuse.txfs " */
		if (!(end = strchr(so, ' ')))
			continue;
		*end = '\0';
		unescape(so);
		rc = fn(arg, mp, so);
	}
	free(line);
	fclose(f);
	return rc;
}
