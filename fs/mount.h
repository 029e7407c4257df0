/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount.h - what the command line needs of the filesystem module.
 */
#ifndef TXFS_MOUNT_H
#define TXFS_MOUNT_H

#include <stdbool.h>
#include <stddef.h>

struct txfs;

/* Options, filled by the command line. */
struct txfs_opts {
	const char *workspace;	/* real directory */
	const char *mountpoint;	/* NULL: in place, over workspace */
	const char *state;	/* state folder, NULL: the default */
	const char *policy;	/* policy file, NULL: the default policy */
	const char *ctl_name;	/* control folder name, default ".txfs" */
	const char *fuse_opts;	/* -o, comma list */
	const char *spin;	/* -o spin=US (fs/view/spin.c), NULL: default */
	bool foreground;
	bool debug;
	bool no_ctl_verbs;	/* .txfs/ctl refuses every verb (txfs run) */
	bool salvage;		/* a damaged layer: no check, read-only,
				 * no commit (to save what can be read) */
	bool noopen;		/* no OPEN/RELEASE for files (ops.c,
				 * "no-open"): -o noopen, or chosen at
				 * mount when the policy allows it */
	bool open_set;		/* -o open or -o noopen given: no
				 * automatic choice (guard.c) */
	unsigned threads;	/* serving threads (-o threads=N); 0: the
				 * TXFS_THREADS variable, else the default */
	unsigned batch_ms;	/* -o batch=MS: group commit (fs/layer/batch.c);
				 * 0: off */
	bool batch_set;		/* -o batch= given (else TXFS_BATCH) */
	bool no_history;	/* -o nohistory: commits keep nothing to undo
				 * (fs/history/history.h) */
};

/* Serving threads: the default, and the most -o threads= takes. */
#define TXFS_THREADS_DEFAULT 1
#define TXFS_THREADS_MAX 64

/* Mount and serve until unmounted. Without opts->foreground, forks: the
 * calling process exits 0 once the mount is ready, or 1 after printing
 * the daemon's error. Returns 0 or a negative errno (foreground). */
int txfs_run_mount(struct txfs_opts *opts);
/* The default state folder of a workspace (a realpath). */
int txfs_default_state(const char *ws, char *out, size_t size);
/* While mnt is a dead FUSE mount (ENOTCONN), lazily unmount it (dead
 * mounts may be stacked). 0 when nothing dead is left, else -EBUSY. */
int txfs_unmount_stale(const char *mnt);
/* Is the top mount at mnt a txfs mount (fstype fuse.txfs in
 * /proc/self/mountinfo)? Does not touch mnt (a dead one hangs or fails). */
bool txfs_is_txfs_mount(const char *mnt);

/* Finish or discard an interrupted commit of the layer in state (not
 * mounted). msg receives what happened or why it failed. */
int txfs_recover_state(const char *state, char *msg, size_t size);

#endif /* TXFS_MOUNT_H */
