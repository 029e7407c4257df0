/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mountinfo.h - the txfs mount holding a path, from the kernel's
 * /proc/self/mountinfo: never from a file in the tree, which an agent
 * could have written (a fake sub/.txfs/). Shared by the txfs command and
 * txfs-claude-hook (cli/agents/claude_hook.c); calls only the C library.
 */
#ifndef TXFS_MOUNTINFO_H
#define TXFS_MOUNTINFO_H

#include <stdbool.h>
#include <stddef.h>

/* The nearest fuse.txfs mount holding PATH (absolute, resolved; the
 * topmost of several on one mount point) into mnt; own: only one mounted
 * by this user (root: any). 0, or -ENOENT when none does. */
int mountinfo_txfs_of(const char *path, bool own, char *mnt, size_t size);

/* The source of the (topmost) fuse.txfs mount at MNT: the real directory
 * the daemon mounted (its fsname), into src. 0, or -ENOENT. */
int mountinfo_txfs_source(const char *mnt, char *src, size_t size);

/* fn(arg, mountpoint, source) for every fuse.txfs mount of this user
 * (root: every one), in mountinfo's order; stops at fn's first non-zero
 * return, which it returns; 0, or -errno of reading mountinfo. */
int mountinfo_txfs_each(int (*fn)(void *arg, const char *mnt,
				  const char *src), void *arg);

#endif /* TXFS_MOUNTINFO_H */
