/* SPDX-License-Identifier: Apache-2.0 */
/*
 * killpriv.c - FUSE_HANDLE_KILLPRIV_V2, which libfuse 3.14 cannot ask for.
 *
 * Without it the kernel asks GETXATTR security.capability before every
 * WRITE to a FUSE file (file_remove_privs: FUSE inodes never get S_NOSEC)
 * and clears set-uid bits itself with a SETATTR. With it the superblock
 * gets SB_NOSEC: the kernel asks once, marks the inode S_NOSEC when it has
 * no set-uid bits and no capability, and from then on writes go out
 * without a GETXATTR until the next attribute refresh. In exchange the
 * daemon clears the bits itself (include/uapi/linux/fuse.h):
 *   - WRITE with FUSE_WRITE_KILL_SUIDGID (the writer lacks CAP_FSETID),
 *   - OPEN with O_TRUNC and FUSE_OPEN_KILL_SUIDGID (same condition),
 *   - SETATTR with FATTR_KILL_SUIDGID (chown of a non-folder: always;
 *     truncate: when the caller lacks CAP_FSETID);
 * set-uid always, set-gid only with group execute (the VFS rule).
 * security.capability is still removed by the kernel (REMOVEXATTR) when
 * its GETXATTR finds one; attr.c lets that removal through.
 *
 * libfuse 3.14 knows neither the INIT flag nor the two request flags, so
 * this file sits between libfuse and /dev/fuse (fuse_session_custom_io):
 *   read:   remembers the INIT request's unique when the kernel offers
 *           V2; moves FUSE_WRITE_KILL_SUIDGID and FUSE_OPEN_KILL_SUIDGID
 *           into TXFS_FI_KILL of the request's open flags, which libfuse
 *           copies into fi->flags (bit 31: no O_* flag uses it);
 *   writev: adds FUSE_HANDLE_KILLPRIV_V2 to that INIT's reply.
 * Both only look at headers whose sizes they checked. TXFS_KILLPRIV=0 in
 * the daemon's environment turns it off (for measurements and tests).
 * The read hook also hosts spin.c's wait (-o spin=US).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/fuse.h>

#include "view.h"

static struct txfs *kp_fs(void *userdata)
{
	return userdata;
}

static void kp_note_init(struct txfs *fs, const char *buf, size_t n)
{
	const struct fuse_in_header *h = (const void *)buf;
	const struct fuse_init_in *in = (const void *)(buf + sizeof(*h));

	if (n < sizeof(*h) + offsetof(struct fuse_init_in, flags) +
		    sizeof(in->flags))
		return;
	if (in->major == 7 && in->minor >= 33 &&
	    (in->flags & FUSE_HANDLE_KILLPRIV_V2))
		fs->kp_init_unique = h->unique;
}

/* Carry the kernel's kill flag into the open flags libfuse passes on. */
static void kp_mark(char *buf, size_t n)
{
	struct fuse_in_header *h = (void *)buf;

	if (h->opcode == FUSE_WRITE &&
	    n >= sizeof(*h) + sizeof(struct fuse_write_in)) {
		struct fuse_write_in *w = (void *)(buf + sizeof(*h));

		if (w->write_flags & FUSE_WRITE_KILL_SUIDGID)
			w->flags |= (uint32_t)TXFS_FI_KILL;
	} else if (h->opcode == FUSE_OPEN &&
		   n >= sizeof(*h) + sizeof(struct fuse_open_in)) {
		struct fuse_open_in *o = (void *)(buf + sizeof(*h));

		if (o->open_flags & FUSE_OPEN_KILL_SUIDGID)
			o->flags |= (uint32_t)TXFS_FI_KILL;
	}
}

/* Every request comes through here (txfs takes no SPLICE_READ, the one
 * path of libfuse 3.14 that reads without the hook), from every serving
 * thread: spin.c first waits awake for it, briefly, when asked to. */
static ssize_t kp_read(int fd, void *buf, size_t len, void *userdata)
{
	struct txfs *fs = kp_fs(userdata);
	uint64_t t0 = 0;
	ssize_t n;

	if (spin_wait(fs, fd, &t0)) {
		errno = EINTR;
		return -1;
	}
	n = read(fd, buf, len);
	spin_note(fs, t0);
	if (n < (ssize_t)sizeof(struct fuse_in_header) || fs->killpriv_off)
		return n;
	if (((struct fuse_in_header *)buf)->opcode == FUSE_INIT)
		kp_note_init(fs, buf, (size_t)n);
	else if (fs->killpriv)
		kp_mark(buf, (size_t)n);
	return n;
}

static ssize_t kp_writev(int fd, struct iovec *iov, int count,
			 void *userdata)
{
	struct txfs *fs = kp_fs(userdata);
	const struct fuse_out_header *h = iov[0].iov_base;

	if (fs->kp_init_unique && count >= 2 &&
	    iov[0].iov_len == sizeof(*h) && h->unique == fs->kp_init_unique &&
	    h->error == 0 && iov[1].iov_len >= offsetof(struct fuse_init_out,
							 flags) + 4) {
		struct fuse_init_out *o = iov[1].iov_base;

		o->flags |= FUSE_HANDLE_KILLPRIV_V2;
		fs->kp_init_unique = 0;
		fs->killpriv = true;
	}
	return writev(fd, iov, count);
}

int killpriv_install(struct txfs *fs)
{
	static const struct fuse_custom_io io = {
		.read = kp_read,
		.writev = kp_writev,
	};
	const char *env = getenv("TXFS_KILLPRIV");

	fs->killpriv_off = env && strcmp(env, "0") == 0;
	if (fs->killpriv_off && !fs->spin)
		return 0;
	return fuse_session_custom_io(fs->se, &io, fuse_session_fd(fs->se));
}

/* The VFS rule: set-uid always, set-gid only with group execute. */
bool killpriv_mode(uint32_t *mode)
{
	uint32_t m = *mode & ~(uint32_t)S_ISUID;

	if ((m & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP))
		m &= ~(uint32_t)S_ISGID;
	if (m == *mode)
		return false;
	*mode = m;
	return true;
}

/*
 * After a WRITE cleared the bits: the kernel keeps the mode it had (a
 * WRITE reply carries no attributes, and it marks only size and times
 * stale), so `stat -c %a` (statx asking for the mode alone) would show
 * the old bits. Mark the inode's attributes stale before the reply.
 * Sent from the handler, unlike inval.c's: attributes only (offset -1)
 * take no page or inode lock in the kernel (fuse_reverse_inval_inode),
 * so the WRITE in flight cannot deadlock with it.
 */
void killpriv_notify(struct txfs *fs, uint64_t node)
{
	if (fs->se)
		fuse_lowlevel_notify_inval_inode(fs->se, tino_to_ino(fs, node),
						 -1, 0);
}
