/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree.h - a canonical, deterministic listing of a directory tree, used by
 * the mount tests to compare trees and to hash the real directory.
 *
 * One line per entry below DIR, in depth-first order with names sorted
 * bytewise; DIR itself is not listed. Fields, space separated:
 *
 *   PATH TYPE MODE [SIZE NLINK LINKGROUP SHA256]   regular file
 *   PATH TYPE MODE [SIZE -> TARGET]                symlink
 *   PATH TYPE MODE                                 directory, fifo, socket
 *
 * followed by optional fields chosen with flags: uid:gid, mtime (seconds and
 * nanoseconds), and one x:NAME=SHA256 per extended attribute (names sorted).
 * PATH and TARGET escape bytes outside 0x21..0x7e and '\' as \xHH, so hostile
 * names stay on one line. LINKGROUP is "-" for a file with one link, else the
 * path of the first name of that inode in the listing, so hard links are
 * compared by identity, never by inode number. Unreadable things print
 * ERR:ENAME in place of their content hash or of their children.
 */
#ifndef TXFS_TEST_TREE_H
#define TXFS_TEST_TREE_H

#include <stdio.h>

enum tree_flags {
	TREE_MTIME = 1 << 0,	/* add mtime: directories and files */
	TREE_OWNER = 1 << 1,	/* add uid:gid */
	TREE_XATTR = 1 << 2,	/* add extended attributes */
	TREE_TOPCTL = 1 << 3,	/* include ".txfs" at the top (omitted by default) */
	TREE_NONLINK = 1 << 4,	/* omit NLINK and LINKGROUP */
};

/* Print the listing of dir on out. Returns 0, or -errno if dir can't be opened. */
int tree_list(const char *dir, unsigned flags, FILE *out);

/* The symbolic name of an errno value ("ENOENT"), or "E<number>". */
const char *errno_name(int err);

#endif
