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
 *   - SETATTR with FATTR_KILL_SUIDGID (chown of a non-folder: always,
 *     root included; truncate: when the caller lacks CAP_FSETID),
 *   - an empty SETATTR: what file_remove_privs leaves of its own kill
 *     (fallocate by a caller without CAP_FSETID) and chown(-1, -1);
 * which bits go follows the VFS (killpriv_write, killpriv_chown below):
 * set-uid always, set-gid with group execute, and set-gid without it
 * from a caller outside the file's group lacking CAP_FSETID.
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
 * The read hook also hosts spin.c's wait (-o spin=US) and hands
 * FUSE_TMPFILE (O_TMPFILE), which libfuse 3.14 does not know, to
 * op_create (kp_tmpfile).
 */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/capability.h>
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

/* O_TMPFILE: libfuse 3.14 has no tmpfile operation and would answer
 * ENOSYS (the kernel then says EOPNOTSUPP for good). FUSE_TMPFILE carries
 * what FUSE_CREATE carries (fuse_create_in, then the name: "/", which
 * no real create can have) and wants the same reply (entry, open), so it
 * goes on as a CREATE that op_create knows by that name. */
static void kp_tmpfile(char *buf, size_t n)
{
	struct fuse_in_header *h = (void *)buf;
	const char *name = buf + sizeof(*h) + sizeof(struct fuse_create_in);

	if (n >= sizeof(*h) + sizeof(struct fuse_create_in) + 2 &&
	    name[0] == '/' && name[1] == '\0')
		h->opcode = FUSE_CREATE;
}

/* Every request comes through here (txfs takes no SPLICE_READ, the one
 * path of libfuse 3.14 that reads without the hook), from every serving
 * thread: spin.c first waits awake for it, briefly, when asked to. */
static ssize_t kp_read(int fd, void *buf, size_t len, void *userdata)
{
	struct txfs *fs = kp_fs(userdata);
	uint64_t t0 = 0;
	ssize_t n;

	/* -o batch: keep the layer's batch open while the next request
	 * comes soon, else commit it before sleeping (layer/batch.c) */
	layer_batch_wait(fs->layer, fd);
	if (spin_wait(fs, fd, &t0)) {
		errno = EINTR;
		return -1;
	}
	n = read(fd, buf, len);
	spin_note(fs, t0);
	if (n < (ssize_t)sizeof(struct fuse_in_header))
		return n;
	if (((struct fuse_in_header *)buf)->opcode == FUSE_TMPFILE)
		kp_tmpfile(buf, (size_t)n);
	if (fs->killpriv_off)
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
	return fuse_session_custom_io(fs->se, &io, fuse_session_fd(fs->se));
}

/* What the kernel's rules need to know of the caller: is it in group g1,
 * in g2 (its fsgid or a supplementary group), does it hold CAP_FSETID.
 * Read from /proc/PID/status only when a set-gid bit without group
 * execute makes it matter; unreadable (the caller is gone, or in a pid
 * namespace the mount cannot see): the fsgid alone, no capability, so
 * the bits go rather than stay. */
struct kp_caller {
	bool in1, in2, fsetid;
};

static void kp_caller(const struct req_ctx *c, gid_t g1, gid_t g2,
		      struct kp_caller *k)
{
	char path[64], *line = NULL;
	size_t cap = 0;
	FILE *f;

	k->in1 = c->gid == g1;
	k->in2 = c->gid == g2;
	k->fsetid = false;
	if (c->pid <= 0)
		return;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)c->pid);
	if (!(f = fopen(path, "re")))
		return;
	while (getline(&line, &cap, f) > 0) {
		if (!strncmp(line, "Groups:", 7)) {
			char *p = line + 7, *end;

			for (;;) {
				unsigned long g = strtoul(p, &end, 10);

				if (end == p)
					break;
				k->in1 |= g == g1;
				k->in2 |= g == g2;
				p = end;
			}
		} else if (!strncmp(line, "CapEff:", 7)) {
			unsigned long long e = strtoull(line + 7, NULL, 16);

			k->fsetid = (e >> CAP_FSETID) & 1;
		}
	}
	free(line);
	fclose(f);
}

static bool kp_set(uint32_t *mode, uint32_t m)
{
	if (m == *mode)
		return false;
	*mode = m;
	return true;
}

#define KP_SGX ((uint32_t)(S_ISGID | S_IXGRP))

/*
 * WRITE, truncate, OPEN with O_TRUNC, fallocate: the kernel asks only for
 * a caller without CAP_FSETID, of a regular file (setattr_should_drop_
 * suidgid, fs/attr.c): set-uid goes; set-gid goes with group execute, and
 * without it when the caller is not in the file's group.
 */
bool killpriv_write(const struct req_ctx *c, gid_t gid, uint32_t *mode)
{
	uint32_t m = *mode & ~(uint32_t)S_ISUID;
	struct kp_caller k;

	if ((m & KP_SGX) == KP_SGX)
		m &= ~(uint32_t)S_ISGID;
	else if (m & S_ISGID) {
		kp_caller(c, gid, gid, &k);
		if (!k.in1)
			m &= ~(uint32_t)S_ISGID;
	}
	return kp_set(mode, m);
}

/*
 * chown and chgrp of anything but a folder, by every caller, root with
 * CAP_FSETID included (chown_common, notify_change, setattr_prepare):
 * set-uid goes; set-gid goes with group execute, and without it when the
 * caller lacks CAP_FSETID and is outside the group the file had, or,
 * when the mode changes anyway (a bit went), outside the group it gets.
 */
bool killpriv_chown(const struct req_ctx *c, gid_t gid, gid_t newgid,
		    uint32_t *mode)
{
	uint32_t m = *mode & ~(uint32_t)S_ISUID;
	struct kp_caller k;

	if ((m & KP_SGX) == KP_SGX)
		m &= ~(uint32_t)S_ISGID;
	else if (m & S_ISGID) {
		kp_caller(c, gid, newgid, &k);
		if (!k.fsetid && (!k.in1 || ((*mode & S_ISUID) && !k.in2)))
			m &= ~(uint32_t)S_ISGID;
	}
	return kp_set(mode, m);
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
