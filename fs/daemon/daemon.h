/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon/ - the daemon's life: open the real directory, lock the state
 * folder, open the layer, mount, serve, unmount; dead mounts.
 *
 * Owns: mount.c (the public entry points of mount.h), state.c (the real
 * directory and the state folder, opened and locked), stats.c (the threads
 * that serve the session, request statistics), stale.c (dead txfs mounts).
 * May call: every other folder of fs/. Called by: cli/ through fs/mount.h.
 */
#ifndef TXFS_DAEMON_H
#define TXFS_DAEMON_H

#include "../ops/ops.h"
#include "../history/history.h"

/* ---- ops.c / mount.c ---- */

extern const struct fuse_lowlevel_ops txfs_ops;
/* stats.c: serve the session; counts requests when TXFS_STATS=FILE. */
int stats_serve(struct txfs *fs);

/* state.c: an error of the mount's start, reported to the parent through
 * the pipe (fd, then closed), or to stderr (fd -1); returns rc if
 * negative, else -EIO. */
struct report {
	int fd;			/* write end of the pipe, or -1 */
};
int rfail(struct report *r, int rc, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* state.c: open the real directory (fs->realfd) before the mount hides
 * it; check, make and lock the state folder; write daemon.pid. */
int daemon_open_workspace(struct txfs *fs, struct report *r);
int daemon_open_state(struct txfs *fs, struct report *r);
int daemon_write_pid(struct txfs *fs);

#endif /* TXFS_DAEMON_H */
