/* SPDX-License-Identifier: Apache-2.0 */
/*
 * view/ - what the kernel sees: the merged view of the layer over the real
 * directory, and every operation's do_*() on it.
 *
 * Owns: namei.c (lookup through the layers), readdir.c (merged listings),
 * inode.c (the in-memory inode table), inval.c and ilist.c (what the kernel
 * must forget, sent from a thread of its own), ctlns.c (the control folder's
 * fixed names), dir.c / file.c / attr.c / datamap.c (namespace, data,
 * attributes and the data map: the do_*() of each operation), openmode.c
 * (which policies each open mode can enforce), reap.c (the
 * layer data of unlinked files nothing holds, freed in batches), guard.c (the
 * policy's vetoes and limits, checked before anything changes), killpriv.c
 * and spin.c (the channel to the kernel: FUSE_HANDLE_KILLPRIV_V2 and the
 * awake wait for the next request).
 * May call: layer/ and lower/ only. Inside the folder the core (namei,
 * readdir, inode, inval, ctlns) calls no do_*() and not the guard
 * (tests/unit/layering.py). Called by: session/, ops/, daemon/.
 */
#ifndef TXFS_VIEW_H
#define TXFS_VIEW_H

#include "../txfs.h"
#include "../layer/layer.h"
#include "../lower/lower.h"

/* ---- openmode.c: what each open mode can enforce ---- */

/* Why -o noopen cannot enforce policy p (a sentence), or NULL. */
const char *openmode_noopen_why(const struct policy *p);
/* Why a mount without -o open or -o noopen takes open mode for p, or
 * NULL: it takes no-open. */
const char *openmode_auto_why(const struct policy *p);

/* ---- reap.c: unlinked files' layer data, freed once nothing holds them ---- */

int reap_init(struct txfs *fs);
void reap_destroy(struct txfs *fs);
/* Queue orphan tino, forgotten by the kernel; *first when the queue was
 * empty (the caller then has the queue run: offload.c). -ENOMEM: not
 * queued, the caller frees it itself (reap_list). */
int reap_queue(struct txfs *fs, uint64_t tino, bool *first);
bool reap_pending(struct txfs *fs);
/* Sleep ns nanoseconds, or the milliseconds of TXFS_FAULT=FAULT:MS when
 * that fault is set (tests make the freeing late so). */
void reap_wait(struct txfs *fs, const char *fault, long ns);
/* Free the queued orphans in one layer transaction of their own. Call
 * with fs->txlock held shared and no layer transaction open. */
int reap_run(struct txfs *fs);
/* The same inside write transaction t (*freed: how many); on an error the
 * caller aborts t and the orphans stay queued. */
int reap_run_in(struct txfs *fs, struct layer_txn *t, size_t *freed);
/* Free the orphans of list (recheck: unless the kernel holds one again),
 * one transaction, committed only if something was freed. */
int reap_list(struct txfs *fs, const uint64_t *tino, size_t n, bool recheck);

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
	bool wmap;		/* -o noopen: a shared mapping may have
				 * dirtied it (itab_wmap) */
	bool drop;		/* a rollback is dropping its write-backs
				 * (itab_drop_set) */
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
/* The other paths tino is known by: its real path of origin (lower
 * path) and its other known names (hard links), each merged path that
 * resolves, without skip (its first path, or NULL). *out: an array of
 * malloc'd strings (caller frees each and the array). Returns how many,
 * or -ENOMEM; *names: how many of them are names (not the origin). */
int itab_other_paths(struct txfs *fs, uint64_t tino, const char *skip,
		     char ***out, int *names);
/* Copy of the node's lower path, or NULL if none. Caller frees. */
char *itab_lower_path(struct txfs *fs, uint64_t tino);
void itab_set_lower(struct txfs *fs, uint64_t tino, const char *lower_path);
/* The tino of an orphan (itab_orphan) that went away with this node (the
 * node's own, or the object it was an alias of), else 0. */
uint64_t itab_forget(struct txfs *fs, uint64_t tino, uint64_t n);
/* Open handle counting; itab_release returns the count left. */
void itab_open(struct txfs *fs, uint64_t tino);
unsigned itab_release(struct txfs *fs, uint64_t tino);
/* What may hold the object open: its handles, and under -o noopen (where
 * the kernel opens files without a handle) every kernel reference. */
unsigned itab_held(struct txfs *fs, uint64_t tino);
/* -o noopen: an unlinked object kept for the kernel's references; call
 * before its name is dropped (its path is kept for the policy). */
void itab_orphan(struct txfs *fs, uint64_t tino);
/* The same for a file that never had a name (O_TMPFILE): the policy
 * judges it by parent's path + name until linkat names it. */
void itab_orphan_at(struct txfs *fs, uint64_t tino, uint64_t parent,
		    const char *name);
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
/*
 * -o noopen: a file the kernel may hold pages of stored through a shared
 * mapping and not yet written back. No OPEN shows a mapping's open, so
 * every file read or written is marked. A rollback has the kernel write
 * those pages back before it discards anything (txn.c, flush_mapped), so
 * that a store made before it cannot come back after it. Never cleared
 * while the node lives (the mapping outlives the request). Without
 * -o noopen a mapping holds its file's handle open, and the open handles
 * for writing (file_write_nodes) say the same.
 */
void itab_wmap(struct txfs *fs, uint64_t node);
/* The kernel node ids of the marked nodes (*ids malloc'ed; *n of them);
 * real_only: only those with a real counterpart (one a full rollback
 * leaves: a real file, or one a commit made real). */
int itab_wmapped(struct txfs *fs, bool real_only, uint64_t **ids, size_t *n);
/*
 * While a rollback runs (txn.c), the page write-backs of the files it may
 * have left dirty pages in are dropped (op_write answers them without
 * staging): their pages hold stores made before the rollback, or bytes of
 * the discarded transaction a mapping faulted in just before it.
 * itab_drop_set marks or unmarks the n nodes; itab_drop asks (cheap when
 * no rollback runs).
 */
void itab_drop_set(struct txfs *fs, const uint64_t *ids, size_t n, bool on);
bool itab_drop(struct txfs *fs, uint64_t node);
/* Might the kernel read pages of tino without a request: an open handle,
 * or the mark above. */
bool itab_may_cache(struct txfs *fs, uint64_t tino);
/* Does the kernel know tino (is it in the table)? */
bool itab_known(struct txfs *fs, uint64_t tino);
/*
 * Before a commit replaces or deletes the real object lower_path: if the
 * kernel holds node tino, keep the object alive with an O_PATH descriptor
 * until the kernel forgets the node (at most TXFS_MAX_PINS at once, and a
 * quarter of the open-files limit), so
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
/* Attributes as the kernel is told them: with hide rules, a folder's link
 * count would count its hidden subfolders, so every folder says 1 (the
 * "not counted" value find(1) knows), whatever it holds (issue 23). */
void view_hide_counts(const struct txfs *fs, struct stat *st);
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
/* O_TMPFILE in folder parent: a regular file with no name (nlink 0,
 * LI_TMPFILE), checked as a create of "#tmpfile" in that folder; what
 * linkat never names goes with its last handle (or FORGET), as an
 * unlinked file does. */
int do_tmpfile(struct txfs *fs, uint64_t parent, mode_t mode,
	       const struct req_ctx *c, struct tview *out);
/* At mount: free what files with no name (unlinked while open, or an
 * O_TMPFILE never named) still held when the daemon before died: nothing
 * can hold them now. *reaped: how many. */
int view_reap_orphans(struct txfs *fs, size_t *reaped);
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
/* The same, without the names the policy hides (what a listing shows). */
int dir_visible_empty(struct txfs *fs, struct layer_txn *t,
		      const struct tview *dir);

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
/* The nodes of the open handles that can write (a shared mapping holds
 * its file's handle: RELEASE comes after the last munmap and close);
 * *ids malloc'ed, *n of them. */
int file_write_nodes(struct txfs *fs, uint64_t **ids, size_t *n);
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

/* guard.c: reload the policy file; on error the old policy stays, *msg says why. */
int txfs_reload_policy(struct txfs *fs, char **msg);

/* Load the policy (--policy or the default) and open the audit log.
 * On failure writes the message to *report_fd (or stderr if < 0). */
int txfs_load_policy(struct txfs *fs, int *report_fd);
void txfs_free_policy(struct txfs *fs);
/* 0 if op on name in folder dir (name NULL: dir itself) is allowed,
 * -EACCES (logged) if the policy refuses it. */
int guard(struct txfs *fs, enum policy_op op, uint64_t dir, const char *name,
	  const struct req_ctx *c);
/* guard_path on path (tino's first path, from itab_path) and on every
 * other path tino is known by (itab_other_paths): a hard link or a moved
 * file is judged by all its names and by where it came from (issue 23,
 * hole 3). */
int guard_ino(struct txfs *fs, enum policy_op op, uint64_t tino,
	      const char *path, const struct req_ctx *c);
/* A hard link of tino at newparent/newname joins only names the policy
 * treats alike (every operation, for a caller no exception covers):
 * 0 or -EACCES after a veto. */
int guard_link_alike(struct txfs *fs, uint64_t tino, const char *src,
		     uint64_t newparent, const char *newname,
		     const struct req_ctx *c);
/* A folder that lists empty holds names the policy hides: removing or
 * replacing it (op) is refused as a protected operation is, EACCES with a
 * veto that names the folder, never ENOTEMPTY (issue 23, hole 4). */
int guard_hidden_inside(struct txfs *fs, enum policy_op op, uint64_t dir,
			const char *name, const struct req_ctx *c);
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
	const char *lower;	/* a loss: the real path of the object lost
				 * (`except-ignored`), or NULL */
	uint64_t deletes, files;
	int64_t bytes;		/* > 0: the change made the layer grow (the
				 * layer counts the bytes itself) */
};

/* Count a change inside write transaction t: -EACCES past `limit
 * deletes`, -EDQUOT past the other limits (logged as vetoes). */
int guard_charge(struct txfs *fs, struct layer_txn *t, const struct charge *ch);
/* Does the policy count losses (`limit deletes`)? Else a caller may skip
 * finding out whether a change is one. */
bool guard_counts_losses(struct txfs *fs);
/* `except-ignored`: read what git ignores in the real directory again
 * (mounted: the FUSE mount exists; an in-place mount keeps what it read
 * at mount). Call with no lock held: it runs git. */
void guard_ignored_refresh(struct txfs *fs, bool mounted);
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

/* ---- ilist.c: what the kernel must forget after a verb ---- */

/* Entries to invalidate, and inodes (attributes; pages too on rollback).
 * dirs: folders whose cached listing must go (their own names' entries
 * stand for the entries below them, see il_collapse). */
struct inval_list {
	uint64_t *inos;
	size_t ni, ci;
	uint64_t *soft;		/* -o noopen: layer-born files the kernel
				 * knows but reads no pages of without a
				 * request: their attributes only, not waited
				 * for by a full rollback (ilist.c) */
	size_t ns, cs;
	uint64_t *dirs;
	size_t nd, cd;
	struct il_ent {
		uint64_t dir, child;	/* child: 0 = whiteout */
		char *name;		/* NULL: collapsed into its folder's */
		bool is_dir;
		bool born;		/* a folder made in the layer */
	} *ents;
	size_t ne, ce;
};
/* Add everything the layer of t touches that the kernel may have
 * cached. */
int il_collect(struct txfs *fs, struct layer_txn *t, struct inval_list *l);
/* Queue l and wait until the kernel has it; empties it (data: pages
 * too; lazy, a full rollback: folders made in the layer only expire
 * before the wait, see ilist.c). */
void il_send(struct txfs *fs, struct inval_list *l, bool data, bool lazy);

#endif /* TXFS_VIEW_H */
