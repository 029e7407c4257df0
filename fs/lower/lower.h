/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lower/ - the real directory, reached only through file descriptors.
 *
 * Owns: lower.c: the directory fd opened before mounting, the cache of folder
 * fds, openat2(RESOLVE_BENEATH) or a component walk with O_NOFOLLOW; never a
 * path string joined onto an absolute path. ignored.c: what git ignores in
 * the real directory (git run on request, never per FUSE request).
 * May call: nothing of fs/ (only the core header, txfs.h). Called by: view/,
 * commit/, session/, ops/, daemon/.
 */
#ifndef TXFS_LOWER_H
#define TXFS_LOWER_H

#include "../txfs.h"

/* ---- lower.c: the real directory, through fds only ---- */

/* Open relpath ("" = root) below the real root without following any
 * symlink: flags as for openat (O_PATH, O_RDONLY, O_DIRECTORY...). */
int lower_open(struct txfs *fs, const char *relpath, int flags);
bool lower_has_openat2(int rootfd);
#define LOWER_CACHE 256
/* The folder fd cache: made at mount (which raises the daemon's soft
 * open-files limit to the hard one), emptied after every commit. */
int lower_cache_init(struct txfs *fs);
void lower_cache_flush(struct txfs *fs);
void lower_cache_destroy(struct txfs *fs);
/* lstat of relpath. */
int lower_stat(struct txfs *fs, const char *relpath, struct stat *st);
/* lstat of name in folder relpath. */
int lower_stat_at(struct txfs *fs, const char *dir, const char *name,
		  struct stat *st);
int lower_readlink(struct txfs *fs, const char *relpath, char *buf,
		   size_t size);
/* Join a folder's relative path and a name; caller frees. */
char *path_join(const char *dir, const char *name);
/* Is name a valid single component (no '/', not "." or "..")? */
bool name_ok(const char *name);

/* ---- ignored.c: what git ignores in the real directory ---- */

struct lower_ignored;
/* Run git once on the real directory ws (the path, so never while the
 * mount is over it) and keep the untracked, ignored paths: *out is an
 * empty set when ws is no repository or git is missing. */
int lower_ignored_load(const char *ws, struct lower_ignored **out);
/* Is path (relative to the root), or a folder above it, ignored? */
bool lower_ignored_has(const struct lower_ignored *ig, const char *path);
size_t lower_ignored_count(const struct lower_ignored *ig);
void lower_ignored_free(struct lower_ignored *ig);

#endif /* TXFS_LOWER_H */
