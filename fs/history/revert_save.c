// SPDX-License-Identifier: Apache-2.0
/*
 * revert_save.c - what an undo keeps of what it changes (revert.c's
 * plan): the current bytes of a patched file's ranges and of what its
 * truncate drops, a whole file it copies into, and, last in the plan,
 * the times of the folders whose names it changes.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hist_int.h"

/* [off, end) of src into dst at the same offsets (end within src). */
static int copy_out(int src, int dst, off_t off, off_t end, char *buf,
		    size_t size)
{
	while (off < end) {
		size_t n = (size_t)(end - off) < size ? (size_t)(end - off) : size;
		ssize_t got = pread(src, buf, n, off);

		if (got == 0)
			return -EIO;	/* shorter than it was a moment ago */
		if (got < 0 || pwrite(dst, buf, (size_t)got, off) != got)
			return errno ? -errno : -EIO;
		off += got;
	}
	return 0;
}

/* The current bytes of a patched file's ranges into U (so that the undo
 * can be undone), before the commit point. */
int ru_save_patch(struct plan_u *u, json_t *obj, json_t *inv)
{
	char name[32];
	const char *base;
	json_t *r, *now;
	size_t i;
	int pfd, src, dst, rc = 0;
	char buf[65536];
	struct stat st;

	if (u->udir < 0)
		return 0;	/* staged: the commit of the mount keeps it */
	snprintf(name, sizeof(name), "objs/p%x", u->npatch++);
	pfd = hist_parent(u->c.root, hist_str(obj, "pre"), &base, false);
	if (pfd < 0)
		return pfd;
	src = openat(pfd, base, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	close(pfd);
	if (src < 0)
		return -errno;
	dst = openat(u->udir, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (dst < 0) {
		rc = -errno;
		close(src);
		return rc;
	}
	if (!(now = json_array())) {
		close(src);
		close(dst);
		return -ENOMEM;
	}
	if (fstat(src, &st))
		rc = -errno;
	/* the ranges as far as the file reaches now: past its end (the
	 * commit truncated it) there is nothing to keep, and the undo of
	 * this undo truncates it again to the size it has now */
	json_array_foreach(json_object_get(obj, "ranges"), i, r) {
		off_t off = (off_t)json_integer_value(json_array_get(r, 0));
		off_t end = off + (off_t)json_integer_value(json_array_get(r, 1));

		if (rc || off >= st.st_size)
			continue;
		if (end > st.st_size)
			end = st.st_size;
		json_array_append_new(now, hist_arr("II", (json_int_t)off,
						     (json_int_t)(end - off)));
		rc = copy_out(src, dst, off, end, buf, sizeof(buf));
	}
	/* and what the undo's truncate to the record's size drops */
	if (rc == 0 && hist_i64(obj, "size") < st.st_size) {
		off_t off = (off_t)hist_i64(obj, "size");

		json_array_append_new(now, hist_arr("II", (json_int_t)off,
						     (json_int_t)(st.st_size - off)));
		rc = copy_out(src, dst, off, st.st_size, buf, sizeof(buf));
	}
	if (rc == 0 && fsync(dst))
		rc = -errno;
	close(src);
	close(dst);
	json_object_set_new(inv, "keep", json_string(name + 5));
	json_object_set_new(inv, "ranges", now);
	return rc;
}

/* The whole current content of path into U (a hard-linked file an undo
 * copies into), as keep k<n> of the inverse. */
int ru_save_whole(struct plan_u *u, const char *path, json_t *inv)
{
	char name[32];
	const char *base;
	int pfd, rc;

	if (u->udir < 0)
		return 0;	/* staged or dry run */
	snprintf(name, sizeof(name), "k%x", u->npatch++);
	pfd = hist_parent(u->c.root, path, &base, false);
	if (pfd < 0)
		return pfd;
	rc = hist_copy(pfd, base, u->c.uobjs, name);
	close(pfd);
	if (rc == 0)
		json_object_set_new(inv, "keep", json_string(name));
	return rc;
}

/* Last: the times of each folder whose names the undo changes and which
 * no record puts back itself (a "meta" op): as they are now (a commit
 * that left a folder's own metadata alone keeps its times; the undo
 * does too). */
int ru_folder_times(struct plan_u *u)
{
	json_t *dirs = json_object(), *metas = json_object(), *op, *v;
	const char *path;
	struct stat st;
	size_t i;
	int rc = dirs && metas ? 0 : -ENOMEM;

	json_array_foreach(u->ops, i, op)
		if (rc == 0 && !strcmp(json_string_value(json_array_get(op, 0)), "meta"))
			rc = json_object_set_new_nocheck(metas, json_string_value(
				json_array_get(op, 1)), json_true()) ? -ENOMEM : 0;
	json_object_foreach(u->touched, path, v) {
		char *p = strdup(path), *sl;

		while (rc == 0 && p && (sl = strrchr(p, '/'))) {
			*sl = 0;
			if (json_object_set_new_nocheck(dirs, p, json_true()))
				rc = -ENOMEM;
		}
		free(p);
	}
	/* (not one the undo removes or makes: another object is there after
	 * it; the op checks the inode too) */
	json_object_foreach(dirs, path, v)
		if (rc == 0 && !json_object_get(metas, path) &&
		    !json_object_get(u->vacated, path) && !json_object_get(u->made, path) &&
		    ru_lstat(u, path, &st) == 0 && S_ISDIR(st.st_mode))
			rc = json_array_append_new(u->ops, hist_arr("ssIII", "times", path,
				(json_int_t)st.st_atim.tv_sec * 1000000000LL + st.st_atim.tv_nsec,
				(json_int_t)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec,
				(json_int_t)st.st_ino)) ? -ENOMEM : 0;
	json_decref(dirs);
	json_decref(metas);
	return rc;
}
