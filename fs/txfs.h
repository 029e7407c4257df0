/* SPDX-License-Identifier: Apache-2.0 */
/*
 * txfs.h - the filesystem's internal header: one section per file of fs/.
 *
 * The request path, one way: kernel request -> ops.c / ops_dir.c (decode,
 * one reply) -> dir.c / file.c / attr.c (the do_*() of each operation) ->
 * guard.c (the policy's vetoes and limits) -> the view: namei.c,
 * readdir.c, inode.c, ctlns.c (the control folder's fixed names) ->
 * layer.c (the LMDB upper layer) or lower.c (the real directory, reached
 * only through the directory fd opened before mounting) -> reply. The
 * control side (ctl.c, sock.c, offload.c) and the transaction verbs
 * (session.c, txn.c, then plan.c, commit.c, gc.c) sit above the view and
 * call down only. tests/unit/layering.py checks this on the built library:
 * no module of the view calls up, and no new call cycle.
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

#include "layer.h"
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

/* The whole filesystem: the one piece of mutable state. */
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
	struct tnode **itab;
	size_t itab_size;
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

	bool use_openat2;
	struct lower_cache *lcache;	/* folder fds (lower.c) */

	/* transactions (txn.c) */
	pthread_mutex_t ctl_lock;	/* one control verb at a time */
	char *last_report;		/* what .txfs/ctl reads */
	/* -o noopen: the texts lookups of .txfs/ files took (ctl.c) */
	pthread_mutex_t snap_lock;
	struct ctl_snap *snaps;
	uint64_t snap_seq;
	_Atomic uint64_t vetoes;	/* vetoes since mount */
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
};

/* The caller of a request. */
struct req_ctx {
	uid_t uid;
	gid_t gid;
	pid_t pid;
	mode_t umask;
	bool kill_suidgid;	/* the kernel asked to clear set-uid bits */
};

/* ---- inode.c: the in-memory inode table ---- */

/* Another name of a hard-linked object, as the merged view showed it. */
struct tname {
	uint64_t parent;
	char *name;
	struct tname *next;
};

struct tnode {
	uint64_t tino;
	uint64_t nlookup;	/* kernel references */
	unsigned opens;		/* open file handles */
	bool orphan;		/* -o noopen: unlinked while the kernel held
				 * it; its layer data goes at its FORGET */
	char *orphan_path;	/* and the path it had: the policy's rules
				 * for reads and writes through old fds */
	bool kpages;		/* the kernel may hold pages of it that it
				 * reads without asking (itab_kpages) */
	char *lower_path;	/* real path relative to the root, or NULL */
	uint64_t alias;		/* after a commit: the real object's tino */
	unsigned aliased_by;	/* nodes whose alias is this node */
	uint64_t shown;		/* a node aliased to this object, which the
				 * kernel knows it by (lookups answer it) */
	uint64_t parent;	/* merged view: the folder it was last seen in */
	char *name;		/* and its name there (NULL for the root) */
	int pin;		/* O_PATH fd + 1 holding the real object a
				 * commit replaced or deleted, or 0 (itab_pin) */
	struct tname *others;	/* its other known names (hard links): the
				 * path of a file is the first of its names
				 * whose folders are all known, so removing
				 * one link or its folder never leaves the
				 * object without a path (issue 13) */
	struct tnode *next;	/* hash chain */
};

int itab_init(struct txfs *fs);
void itab_destroy(struct txfs *fs);
/* Find or add the node for tino and take `refs` kernel references.
 * lower_path (may be NULL) is recorded if the node has none; parent and
 * name (name may be NULL) record where the merged view last showed it. */
int itab_get(struct txfs *fs, uint64_t tino, const char *lower_path,
	     uint64_t parent, const char *name, uint64_t refs);
/* Record a move in the merged view (rename): name oldname in oldparent
 * becomes name in parent. */
void itab_move(struct txfs *fs, uint64_t tino, uint64_t oldparent,
	       const char *oldname, uint64_t parent, const char *name);
/* Record that name in parent no longer names tino (unlink, replaced). */
void itab_unname(struct txfs *fs, uint64_t tino, uint64_t parent,
		 const char *name);
/* The limits of a merged path the policy can be checked on. */
#define TXFS_PATH_DEPTH 1024	/* components */
#define TXFS_PATH_LEN 8191	/* bytes */
/* The merged path of tino (or of name inside folder tino when name is
 * not NULL), relative to the root; NULL if unknown (errno ENOENT) or over
 * the limits (errno ENAMETOOLONG). Caller frees. */
char *itab_path(struct txfs *fs, uint64_t tino, const char *name);
/* Copy of the node's lower path, or NULL if none. Caller frees. */
char *itab_lower_path(struct txfs *fs, uint64_t tino);
void itab_set_lower(struct txfs *fs, uint64_t tino, const char *lower_path);
/* Returns true if the node went away as an orphan (itab_orphan). */
bool itab_forget(struct txfs *fs, uint64_t tino, uint64_t n);
/* Open handle counting; itab_release returns the count left. */
void itab_open(struct txfs *fs, uint64_t tino);
unsigned itab_release(struct txfs *fs, uint64_t tino);
/* What may hold the object open: its handles, and under -o noopen (where
 * the kernel opens files without a handle) every kernel reference. */
unsigned itab_held(struct txfs *fs, uint64_t tino);
/* -o noopen: an unlinked object kept for the kernel's references; call
 * before its name is dropped (its path is kept for the policy). */
void itab_orphan(struct txfs *fs, uint64_t tino);
/* The path an orphan had (malloc'd), or NULL. */
char *itab_orphan_path(struct txfs *fs, uint64_t tino);
/*
 * Mark node `node` as one whose pages the kernel may read without a
 * request: a symlink whose target it cached (READLINK, CACHE_SYMLINKS),
 * and under -o noopen, where the kernel keeps a file's pages across opens,
 * a file it has up-to-date pages of. It makes a page up to date only from
 * a READ reply and from a WRITE that covered the whole page; the handlers
 * mark before they reply. Never cleared while the node lives (a
 * conservative mark).
 */
void itab_kpages(struct txfs *fs, uint64_t node);
/* Might the kernel read pages of tino without a request: an open handle,
 * or the mark above. */
bool itab_may_cache(struct txfs *fs, uint64_t tino);
/* Does the kernel know tino (is it in the table)? */
bool itab_known(struct txfs *fs, uint64_t tino);
/*
 * Before a commit replaces or deletes the real object lower_path: if the
 * kernel holds node tino, keep the object alive with an O_PATH descriptor
 * until the kernel forgets the node (at most TXFS_MAX_PINS at once), so
 * the file system cannot give its inode number to a file created later,
 * which would otherwise be taken for this node (aliases, shown ids).
 */
void itab_pin(struct txfs *fs, uint64_t tino, const char *lower_path);
#define TXFS_MAX_PINS 4096
/* After a commit: nodes in changed[] (sorted: the committed objects) get
 * their merged path as real path and are aliased to the real inode now
 * there when it is another; untouched real objects that moved along with
 * a committed folder get their new real path. */
void itab_relink(struct txfs *fs, const uint64_t *changed, size_t n);
/* The nodes aliased to one of sorted[0..n) (their kernel inodes cache the
 * same object): malloc'd into *out. */
int itab_aliases_of(struct txfs *fs, const uint64_t *sorted, size_t n,
		    uint64_t **out, size_t *nout);
/* After a write through kernel node `node` to object tino: drop the
 * cached pages of the object's other kernel nodes (tino itself and the
 * nodes aliased to it), which the kernel does not know are one file. */
void itab_inval_others(struct txfs *fs, uint64_t node, uint64_t tino);
/* The node id a lookup of object tino answers: the node aliased to it
 * that the kernel already knows (one kernel inode per object, and never
 * a node id the kernel knows as another object after an inode number was
 * reused), else tino. */
uint64_t itab_shown(struct txfs *fs, uint64_t tino);
/* Node id <-> tino (node ids of objects a commit re-created resolve to
 * the new real inode). */
uint64_t ino_to_tino(struct txfs *fs, fuse_ino_t ino);
fuse_ino_t tino_to_ino(const struct txfs *fs, uint64_t tino);

/* ---- lower.c: the real directory, through fds only ---- */

/* Open relpath ("" = root) below the real root without following any
 * symlink: flags as for openat (O_PATH, O_RDONLY, O_DIRECTORY...). */
int lower_open(struct txfs *fs, const char *relpath, int flags);
bool lower_has_openat2(int rootfd);
#define LOWER_CACHE 256
/* The folder fd cache: made at mount, emptied after every commit. */
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

/* ---- namei.c: lookup through the layers ---- */

/* The merged state of one object. */
struct tview {
	uint64_t tino;
	bool in_layer;		/* a layer record exists */
	bool virt;		/* a .txfs/ object */
	bool whiteout;		/* view_lookup's ENOENT: a name the layer
				 * deletes (it comes back on rollback) */
	bool from_lower;	/* view_lookup found the name in the real
				 * folder (no layer entry for it) */
	struct stat st;		/* merged attributes, st_ino = tino */
	struct layer_inode rec;	/* valid when in_layer */
	char *lower_path;	/* malloc'd, NULL if none */
	char *link;		/* malloc'd symlink target when in the layer */
};

void tview_free(struct tview *v);
/* The merged state of an inode the kernel knows. -ESTALE if it is gone. */
int view_inode(struct txfs *fs, struct layer_txn *t, uint64_t tino,
	       struct tview *v);
/* The view of a folder for a lookup in it: like view_inode, without a
 * stat of a real folder the layer never touched (st has only the type). */
int view_folder(struct txfs *fs, struct layer_txn *t, uint64_t tino,
		struct tview *v);
/* Look name up in folder dir. -ENOENT if it does not exist. */
int view_lookup(struct txfs *fs, struct layer_txn *t, const struct tview *dir,
		const char *name, struct tview *v);
/* Does name exist in dir? (0 no, 1 yes, <0 error) and its lower state. */
int name_in_lower(struct txfs *fs, const struct tview *dir, const char *name,
		  struct stat *st);
/* Convert a layer record to struct stat. */
void rec_to_stat(uint64_t tino, const struct layer_inode *rec,
		 struct stat *st);
/* Build a layer record from the real object's stat. */
void stat_to_rec(const struct stat *st, struct layer_inode *rec);
/* Is name in dir hidden by the policy (lookup must say ENOENT)? */
bool view_hidden(struct txfs *fs, uint64_t dir, const char *name);
/* The same for a merged path. */
bool view_hidden_path(struct txfs *fs, const char *path);
/* Give v a layer record (metadata copy-up), uncharged: guard_copy_up
 * charges it to the policy's limits first. */
int view_copy_up(struct txfs *fs, struct layer_txn *t, struct tview *v);
int64_t now_ns(void);
void touch_mc(struct layer_inode *rec); /* mtime = ctime = now */
void touch_c(struct layer_inode *rec);

/* ---- dir.c: namespace changes ---- */


int do_mknod(struct txfs *fs, uint64_t parent, const char *name, mode_t mode,
	     dev_t rdev, const char *link, const struct req_ctx *c,
	     struct tview *out);
int do_unlink(struct txfs *fs, uint64_t parent, const char *name, bool dir,
	      const struct req_ctx *c);
int do_rename(struct txfs *fs, uint64_t parent, const char *name,
	      uint64_t newparent, const char *newname, unsigned flags,
	      const struct req_ctx *c);
int do_link(struct txfs *fs, uint64_t tino, uint64_t newparent,
	    const char *newname, const struct req_ctx *c, struct tview *out);

/* ---- readdir.c ---- */

struct dir_entry {
	char *name;
	uint64_t tino;		/* 0 for a plain-real entry until looked up */
	uint32_t type;		/* S_IFMT */
};

struct dir_handle {
	pthread_mutex_t lock;
	struct dir_entry *ents;
	size_t n;
	bool loaded;
};

int dir_load(struct txfs *fs, uint64_t tino, struct dir_handle *dh);
void dir_free(struct dir_handle *dh);
/* Every merged entry of folder v, hidden ones included (no . or ..). */
int dir_names(struct txfs *fs, struct layer_txn *t, const struct tview *v,
	      struct dir_handle *dh);
/* Every node the kernel knows: (tino, parent, name) copies, malloc'd. */
struct node_ref {
	uint64_t tino, parent;
	char *name;
};
int itab_snapshot(struct txfs *fs, struct node_ref **out, size_t *n);
typedef int (*dir_walk_fn)(void *arg, const char *rel);
int dir_walk(struct txfs *fs, struct layer_txn *t, const struct tview *v,
	     const char *rel, dir_walk_fn fn, void *arg);
/* Is the merged folder empty? 0 yes, -ENOTEMPTY no, <0 error. */
int dir_empty(struct txfs *fs, struct layer_txn *t, const struct tview *dir);

/* ---- file.c: data ---- */

struct fhandle {
	struct fhandle *prev, *next;	/* fs->handles: freed at unmount */
	uint64_t tino;		/* the object (re-resolved after a commit) */
	uint64_t node;		/* the node the open count was taken on */
	int lower_fd;		/* the real file, opened on demand, or -1 */
	char *lower_path;	/* its path, NULL for a layer-born file */
	pthread_mutex_t lock;
	int flags;
	bool virt;
	_Atomic uint64_t epoch;	/* fs->epoch when lower_fd was opened:
				 * read without the lock (fh_refresh) */
	bool linked;		/* on fs->handles */
	char *virt_buf;		/* .txfs/ file contents */
	size_t virt_len;
};

/* Open tino for the kernel's node `node` (the open count is taken on the
 * node; tino is the object it resolves to). */
int file_open(struct txfs *fs, uint64_t node, uint64_t tino, int flags,
	      struct fhandle **out);
/* The same for a control file whose contents are text (owned by the
 * handle from now on, freed on failure too): read-only, direct I/O. */
int file_open_text(struct txfs *fs, uint64_t node, uint64_t tino, int flags,
		   char *text, size_t len, struct fhandle **out);
void file_close(struct txfs *fs, struct fhandle *fh);
/* After a commit: re-resolve the handle's real object (once a commit). */
void fh_refresh(struct txfs *fs, struct fhandle *fh);
/* Free the handles the kernel never released (at unmount). */
void file_close_all(struct txfs *fs);
int file_read(struct txfs *fs, struct fhandle *fh, char *buf,
	      size_t size, off_t off, size_t *got);
int file_write(struct txfs *fs, struct fhandle *fh, const char *buf,
	       size_t size, off_t off, const struct req_ctx *c);
/* Truncate or extend tino to size inside write transaction t. */
int file_truncate(struct txfs *fs, struct layer_txn *t, struct tview *v,
		  uint64_t size, const struct req_ctx *c);
int file_fallocate(struct txfs *fs, struct fhandle *fh, int mode,
		   off_t off, off_t len, const struct req_ctx *c);
/* datamap.c: lseek SEEK_DATA / SEEK_HOLE over the merged map (chunks,
 * the real file's own map below lower_valid, holes elsewhere). */
int file_seek(struct txfs *fs, struct fhandle *fh, off_t off, int whence,
	      off_t *out);
/* Set v->st.st_blocks of a regular file the layer holds: the bytes its
 * chunks store plus what the real file has allocated under the blocks
 * no chunk covers. The _now form runs its own read transaction. */
void view_blocks(struct txfs *fs, struct layer_txn *t, struct tview *v);
void view_blocks_now(struct txfs *fs, struct tview *v);
/* Read len bytes of the real file at off into buf (zeros past EOF). */
int lower_pread(struct txfs *fs, const char *relpath, int *fdp, char *buf,
		size_t len, off_t off);

/* ---- attr.c: attributes and xattrs ---- */

int do_setattr(struct txfs *fs, uint64_t tino, const struct stat *attr,
	       int valid, const struct req_ctx *c, struct tview *out);
int do_getxattr(struct txfs *fs, uint64_t tino, const char *name, char *buf,
		size_t size, size_t *len);
int do_listxattr(struct txfs *fs, uint64_t tino, char *buf, size_t size,
		 size_t *len);
int do_setxattr(struct txfs *fs, uint64_t tino, const char *name,
		const char *val, size_t size, int flags,
		const struct req_ctx *c);
int do_removexattr(struct txfs *fs, uint64_t tino, const char *name,
		   const struct req_ctx *c);

/* ---- ctlns.c: the .txfs/ folder's names (below the view) ---- */

/* Node id LAYER_INO_VIRT + index; CTL_DIR is the folder. Under -o noopen
 * each lookup of a file gets a node id of its own, LAYER_INO_VIRT +
 * k * NCTL + index (k > 0, below CTL_SPAN): see ctl_snap_take. */
enum ctl_index {
	CTL_DIR,
	CTL_README,
	CTL_STATUS,
	CTL_STATUS_JSON,
	CTL_POLICY,
	CTL_CTL,
	CTL_CHANGES,
	CTL_LOG,
	CTL_STATE,
	NCTL
};

bool ctl_is_name(const struct txfs *fs, uint64_t parent, const char *name);
#define CTL_SPAN (1ULL << 39)
bool ctl_is_ino(uint64_t tino);
enum ctl_index ctl_index(uint64_t tino);	/* ctl_is_ino(tino) */
mode_t ctl_mode(uint64_t tino);		/* ctl_is_ino(tino) */
int ctl_lookup(uint64_t parent, const char *name, struct tview *v);
int ctl_view(uint64_t tino, struct tview *v);
/* The folder's listing, "." and ".." first. */
int ctl_readdir(const struct txfs *fs, struct dir_handle *dh);

/* ---- ctl.c: what the .txfs/ files say, the verbs written to ctl ---- */

/* Opening control file tino: its text now (malloc'd), or EISDIR for the
 * folder, EACCES for writing a file that takes no writes. */
int ctl_open(struct txfs *fs, uint64_t tino, int flags, char **text,
	     size_t *len);
/* -o noopen, where no OPEN gives a file its text: a lookup of .txfs/
 * file v takes its text now under a node id of its own (v's tino and size
 * are set to it), reads read it, and its FORGET frees it. */
int ctl_snap_take(struct txfs *fs, struct tview *v);
size_t ctl_snap_size(struct txfs *fs, uint64_t tino);
void ctl_snap_read(struct txfs *fs, uint64_t tino, char *buf, size_t size,
		   off_t off, size_t *got);
void ctl_snap_forget(struct txfs *fs, uint64_t tino);
void ctl_snap_free_all(struct txfs *fs);
/* One control verb written to .txfs/ctl by caller c. */
int ctl_write(struct txfs *fs, const struct req_ctx *c, const char *buf,
	      size_t size);

/* ---- inval.c: kernel cache invalidation, off the request path ---- */

int inval_start(struct txfs *fs);
void inval_stop(struct txfs *fs);
void inval_entry(struct txfs *fs, uint64_t parent, const char *name);
void inval_entry_expire(struct txfs *fs, uint64_t parent, const char *name);
/* data: drop cached pages too (else attributes only). */
void inval_inode(struct txfs *fs, uint64_t tino, bool data);
/* Wait until everything queued so far has been sent. */
void inval_flush(struct txfs *fs);

/* ---- guard.c: the policy at the VFS level ---- */

/* Load the policy (--policy or the default) and open the audit log.
 * On failure writes the message to *report_fd (or stderr if < 0). */
int txfs_load_policy(struct txfs *fs, int *report_fd);
void txfs_free_policy(struct txfs *fs);
/* 0 if op on name in folder dir (name NULL: dir itself) is allowed,
 * -EACCES (logged) if the policy refuses it. */
int guard(struct txfs *fs, enum policy_op op, uint64_t dir, const char *name,
	  const struct req_ctx *c);
int guard_path(struct txfs *fs, enum policy_op op, const char *path,
	       const struct req_ctx *c);
/* Could a rule for op match some path below folder name in dir? */
bool guard_tree_may(struct txfs *fs, enum policy_op op, uint64_t dir,
		    const char *name);
/* A change counted against the policy's limits: who, what op, where
 * (name in folder dir, or the object dir itself when name is NULL). */
struct charge {
	const struct req_ctx *c;	/* may be NULL */
	const char *op;
	uint64_t dir;
	const char *name;
	uint64_t deletes, files;
	int64_t bytes;		/* > 0: the change made the layer grow (the
				 * layer counts the bytes itself) */
};

/* Count a change inside write transaction t: -EACCES past `limit
 * deletes`, -EDQUOT past the other limits (logged as vetoes). */
int guard_charge(struct txfs *fs, struct layer_txn *t, const struct charge *ch);
/* Give v a layer record (view_copy_up), charged first as a "modify" of
 * one file; nothing to do if it has one, EPERM for a control file. */
int guard_copy_up(struct txfs *fs, struct layer_txn *t, struct tview *v);
int guard_file_size(struct txfs *fs, uint64_t size, const struct charge *ch);
/* exec deny: -EACCES (logged) if path may not be executed. */
int guard_exec(struct txfs *fs, const char *path, const struct req_ctx *c);
/* When `limit deletes` is reached in the open transaction, a malloc'd
 * note saying so and what to do (for .txfs/ctl and .txfs/status), else
 * NULL. */
char *guard_note(struct txfs *fs);

/* ---- sock.c: the control socket in the state folder ---- */

struct txn_report;
#define SOCK_REPLIED 1	/* sock_dispatch answered by itself */
int sock_start(struct txfs *fs);
void sock_stop(struct txfs *fs);
int sock_dispatch(struct txfs *fs, int cfd, int argc, char **argv,
		  struct txn_report *r);
/* The text of .txfs/status (json: status.json), changes or log. */
/* session.c: the "cmd-*" and "changes-since" socket verbs (txfs exec). */
int session_dispatch(struct txfs *fs, int argc, char **argv,
		     struct txn_report *r);
/* The summary of the last `txfs exec` command (JSON, malloc'd) or NULL. */
char *session_last_json(struct txfs *fs);
/* Free the view session.c keeps for the next command's cmd-end (at
 * unmount; a commit, rollback or release ends it by bumping fs->verbs). */
void session_forget(struct txfs *fs);
int ctl_text(struct txfs *fs, const char *name, bool json, char **buf,
	     size_t *len);
/* Reload the policy file; on error the old policy stays, *msg says why. */
int txfs_reload_policy(struct txfs *fs, char **msg);

/* ---- offload.c: requests answered from a worker thread ---- */

int offload_start(struct txfs *fs);
void offload_stop(struct txfs *fs);
/* Queue a .txfs/ctl write (copies buf) / an fsync; the worker replies. */
int offload_ctl(struct txfs *fs, fuse_req_t req, const char *buf,
		size_t size);
int offload_sync(struct txfs *fs, fuse_req_t req);

/* ---- ops.c / mount.c ---- */

extern const struct fuse_lowlevel_ops txfs_ops;
/* stats.c: serve the session; counts requests when TXFS_STATS=FILE. */
int stats_serve(struct txfs *fs);

/* ---- killpriv.c: FUSE_HANDLE_KILLPRIV_V2 under libfuse 3.14 ---- */

/* Set in a request's open flags (fi->flags) when the kernel asked the
 * daemon to clear set-uid/set-gid bits (WRITE, OPEN with O_TRUNC). */
#define TXFS_FI_KILL ((int)(1u << 31))

int killpriv_install(struct txfs *fs);
/* The kernel's rules for the bits a kill clears (killpriv.c); true if
 * *mode changed. _write: the kernel asked (WRITE, truncate, O_TRUNC,
 * fallocate: the caller lacks CAP_FSETID); _chown: chown or chgrp of a
 * non-folder, every caller; gid: the file's group before, newgid after. */
bool killpriv_write(const struct req_ctx *c, gid_t gid, uint32_t *mode);
bool killpriv_chown(const struct req_ctx *c, gid_t gid, gid_t newgid,
		    uint32_t *mode);
/* Mark the kernel's attributes of node stale (after a WRITE cleared bits). */
void killpriv_notify(struct txfs *fs, uint64_t node);

/* ---- spin.c: wait for the next request awake, briefly ---- */

/* The window without -o spin=US (bench/results/2026-11-24-spin.md). */
#define TXFS_SPIN_DEFAULT_US 50u

/* "0".."1000" (µs; 0 off) into *us, else -EINVAL. */
int spin_parse(const char *s, unsigned *us);
int spin_init(struct txfs *fs, unsigned us);
void spin_destroy(struct txfs *fs);
/* Before read(2) of fd: poll for up to the window (one thread at a
 * time). *t0 receives the hook's entry time for spin_note(). 0: read
 * now; -EINTR: the session is ending. */
int spin_wait(struct txfs *fs, int fd, uint64_t *t0);
/* After read(2): the request's gap (now - t0) steers the next spin. */
void spin_note(struct txfs *fs, uint64_t t0);
/* "spin_* N" lines for TXFS_STATS (nothing when off). */
void spin_counts(const struct txfs *fs, FILE *f);

/* ---- gc.c: the background collector of discarded generations ---- */

int gc_start(struct txfs *fs);
void gc_stop(struct txfs *fs);	/* joins the thread; fine if not started */
/* Ask it to run (after a rollback or commit discarded a generation). */
void gc_kick(struct txfs *fs);

#endif /* TXFS_FS_H */
