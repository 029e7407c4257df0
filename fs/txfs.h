/* SPDX-License-Identifier: Apache-2.0 */
/*
 * txfs.h - the core of fs/: struct txfs (the one piece of mutable state)
 * and the types every module shares. Each module is a folder with one
 * header that says what it owns and which folders it may call:
 *
 *   daemon/   the daemon's life: mount, serve, unmount (daemon.h)
 *   ops/      the FUSE handlers: decode, call down, one reply (ops.h)
 *   session/  the transaction verbs, the control folder and socket,
 *             txfs exec's nested transactions (session.h)
 *   commit/   merging the layer into the real directory (commit.h)
 *   view/     the merged view and every operation's do_*(), the guard,
 *             the inode table, invalidation (view.h)
 *   layer/    the LMDB upper layer (layer.h, layer_int.h)
 *   lower/    the real directory, through fds only (lower.h)
 *
 * The calls go one way, down that list (commit/ and view/ are siblings);
 * tests/unit/layering.py checks it on the built library. fs/mount.h is the
 * one header cli/ includes.
 *
 * Identity: the kernel's node id for an object is its tino (see layer.h),
 * except the root, which the kernel calls FUSE_ROOT_ID. The in-memory
 * inode table (inode.c) holds, for each node id the kernel knows, its
 * lookup count and, for objects from the real directory, the path of that
 * object relative to the real root (stable during a transaction because
 * the real directory only changes at commit).
 *
 * Locking: fs->txlock is taken shared by every request and exclusive by
 * commit and rollback, so a request never sees half of either. Namespace
 * changes are serialised by the layer's single LMDB writer.
 */
#ifndef TXFS_FS_H
#define TXFS_FS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>

#include <fuse_lowlevel.h>

#include "layer/layer.h"
#include "mount.h"
#include "../policy/policy.h"

#define TXFS_TIMEOUT 86400.0	/* entry/attr cache lifetime, seconds */

/* A timestamp in nanoseconds since the epoch (the layer's unit). */
static inline int64_t ts_ns(struct timespec ts)
{
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

struct tnode;
struct inval_queue;
struct offload;
struct lower_cache;
struct spin;
struct lower_ignored;

/* The whole filesystem: the one piece of mutable state. */
/* A txfs exec between cmd-begin and cmd-end (exectree.c). */
#define EXEC_RUNNERS_MAX 8
#define EXEC_GROUPS_MAX 2	/* the command and its --check */
struct exec_runner {
	pid_t pid;		/* 0: free; -1: txfs exec gone, groups kept */
	int pidfd;		/* pins pid (SO_PEERPIDFD), or -1 */
	uint64_t id;		/* its command number */
	pid_t groups[EXEC_GROUPS_MAX];	/* its commands' process groups */
	size_t ngroups;
};

struct txfs {
	struct txfs_opts opts;
	char *ws_path;		/* realpath of the workspace */
	char *mnt_path;		/* where it is mounted */
	char *state_path;	/* realpath of the state folder */
	int rootfd;		/* the real directory, opened before mounting */
	int statefd;		/* the state folder (locked) */
	int lockfd;
	dev_t root_dev;
	ino_t root_ino;
	struct layer *layer;
	struct fuse_session *se;
	const char *ctl_name;
	size_t ctl_len;

	pthread_rwlock_t txlock;

	/* inode table (inode.c) */
	pthread_mutex_t itab_lock;
	/* orphans the kernel forgot, to free (view/reap.c) */
	pthread_mutex_t reap_lock;
	uint64_t *reap;
	size_t nreap, creap;
	unsigned reaping;		/* lists taken, not yet committed */
	struct tnode **itab;
	size_t itab_size;
	size_t nwmap;		/* nodes marked by itab_wmap */
	_Atomic size_t ndrop;	/* nodes marked by itab_drop_set */
	size_t itab_count;

	struct inval_queue *inval;
	struct offload *offload;
	pthread_mutex_t fh_lock;
	struct fhandle *handles;	/* open file handles */

	_Atomic(struct policy *) policy;
	_Atomic bool has_hide;	/* the policy has hide rules (a reload
				 * sets it while requests read it) */
	struct policy **retired;	/* replaced by reloads, freed at exit */
	size_t nretired;
	struct audit *audit;
	/* `except-ignored`: what git ignores in the real directory
	 * (lower/ignored.c), read at mount and after commits (guard.c) */
	pthread_mutex_t ign_lock;
	struct lower_ignored *ignored;

	bool use_openat2;
	struct lower_cache *lcache;	/* folder fds (lower.c) */

	/* transactions (txn.c) */
	pthread_mutex_t ctl_lock;	/* one control verb at a time */
	char *last_report;		/* what .txfs/ctl reads */
	uint64_t exec_running;		/* its "command N running" (0: no) */
	/* -o noopen: the texts lookups of .txfs/ files took (ctl.c) */
	pthread_mutex_t snap_lock;
	struct ctl_snap *snaps;
	uint64_t snap_seq;
	_Atomic uint64_t vetoes;	/* vetoes since mount */
	/* vetoes since the last commit, rollback or txfs exec command:
	 * past VETO_LOG_MAX of them the audit log gets a count instead of
	 * each (guard.c), so no command floods out what came before */
	_Atomic uint64_t vetoes_window;
	_Atomic uint64_t vetoes_window_bytes;	/* their records' size, at most */
	_Atomic uint64_t vetoes_unlogged;	/* of them, not logged one by one */
	_Atomic uint64_t epoch;		/* bumped by every commit */
	_Atomic bool has_alias;		/* some node ids were re-mapped */
	unsigned npins;			/* nodes with a pin (itab_lock) */
	/* bumped by txn.c before every commit, rollback and release: a
	 * plan session.c kept under an older value is stale */
	_Atomic uint64_t verbs;
	/* session.c: the view at savepoint cmd_plan_sp (none yet: ""),
	 * valid while layer commit cmd_plan_txid is the last and verbs is
	 * cmd_plan_verbs; ctl_lock */
	struct plan *cmd_plan;
	char cmd_plan_sp[32];
	uint64_t cmd_plan_txid;
	uint64_t cmd_plan_verbs;

	/* control socket (sock.c) */
	int sockfd;
	pthread_t sock_thread;
	_Atomic bool sock_stop;
	pthread_mutex_t sock_lock;	/* guards sock_active */
	pthread_cond_t sock_idle;	/* signalled when sock_active drops */
	unsigned sock_active;		/* connections being served */
	int sigfd;		/* SIGHUP: reload the policy */
	pthread_t hup_thread;
	bool hup_running;
	pthread_t prime_thread;	/* -o noopen: mount.c's noopen_prime */
	bool prime_running;
	int prime_ready_fd;	/* its "ready" to the caller, or -1 */

	/* fault injection (commit.c) */
	const char *fault_phase;
	unsigned long fault_at, fault_count;
	bool fault_eio;
	bool stop_gc;
	pthread_t gc_thread;
	pthread_mutex_t gc_lock;
	pthread_cond_t gc_cond;
	bool gc_wanted;
	bool gc_running;

	/* FUSE_HANDLE_KILLPRIV_V2 (killpriv.c) */
	_Atomic uint64_t kp_init_unique;	/* INIT offering it, unanswered */
	_Atomic bool killpriv;		/* negotiated: the daemon clears bits */
	bool killpriv_off;		/* TXFS_KILLPRIV=0: leave it out */

	struct spin *spin;	/* -o spin=US (spin.c); NULL: off */

	char commit_via[256];	/* what asked for the next commit, for its
				 * history record ("txfs run: make") */
	char hist_line[200];	/* what the last commit kept (history/) */
	void *hist_later;	/* json_t array: links to make past the
				 * commit point (history/keep.c) */
	char hist_pend[40];	/* the pending record they go into */
	void *hist_doc;		/* json_t: its manifest, as written (finish
				 * adds to it instead of reading it back) */
	uint64_t hist_txid;	/* the commit hist_doc is of */
	uint64_t hist_bytes;	/* what it keeps (its info file) */
	int hist_objs;		/* its objs/ from history_link until the
				 * record is final: history_take moves into
				 * it; valid only if hist_objs_open */
	bool hist_objs_open;
	bool hist_packed;	/* hist_doc's record is durable through the
				 * pack only (history/pack.c) */
	void *hist_pfiles;	/* json_t: its pre-images [name, size, ranges] */
	bool hist_lazy;		/* hist_doc's record has no folder yet: it is
				 * written from hist_doc, hist_pfiles and
				 * hist_mem by history_sync */
	char *hist_mem;		/* its pre-images' bytes (hist_pack_build) */
	char hist_sync[40];	/* a final record whose own files wait for
				 * history_sync ("": none) */
	void *hist_sync_pfiles;	/* json_t: that record's pre-images */
	bool hist_sync_manifest;	/* its manifest needs an fsync too */
	/* a lazy record waiting for history_sync: its pending name, its
	 * manifest (json_t, with the post states), pre-image bytes, and
	 * what it keeps (its info file) */
	char hist_sync_pend[40];
	void *hist_sync_doc;
	char *hist_sync_mem;
	uint64_t hist_sync_bytes;
	bool hist_new_dir;	/* capture made history/: its name is synced
				 * by history_sync */
	bool hist_settled;	/* history_settle ran (mount, recovery) and
				 * every record since was made final: a
				 * capture need not look for pending ones */

	/* session/exectree.c: the txfs exec processes whose command runs now */
	pthread_mutex_t exec_lock;
	struct exec_runner runners[EXEC_RUNNERS_MAX];
};

/* The caller of a request. */
struct req_ctx {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	mode_t umask;
	bool kill_suidgid;	/* the kernel asked to clear set-uid bits */
};

/* Name of the staging folder at the real root (hidden from the view). */
#define TXFS_STAGING ".txfs.staging"

#endif /* TXFS_FS_H */
