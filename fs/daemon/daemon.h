/* SPDX-License-Identifier: Apache-2.0 */
/*
 * daemon/ - the daemon's life: open the real directory, lock the state
 * folder, open the layer, mount, serve, unmount; dead mounts.
 *
 * Owns: mount.c (the public entry points of mount.h), stats.c (the threads
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

#endif /* TXFS_DAEMON_H */
