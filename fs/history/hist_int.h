/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hist_int.h - what the files of history/ share: the record's folder,
 * manifest.json in and out, file helpers on folder fds.
 *
 * manifest.json of a kept commit:
 *   { "version": 1, "id": N, "time": UNIX, "via": "txfs commit",
 *     "undo_of": [ids] (an undo's record), "undone_by": ID (once undone:
 *     from the record's undone_by file, see HIST_UNDONE),
 *     "bytes": kept, "objects": [OBJ...], "names": [NAME...] }
 *   OBJ:  { "type": "f"|"d"|"l"|"p"|"s", "pre": PATH|null,
 *           "post": [PATH...] (empty: deleted), "ino", "mode", "uid",
 *           "gid", "atime", "mtime", "size", "target" (symlinks),
 *           "xattrs": {NAME: HEX}, "keep": OBJNAME|null,
 *           "ranges": [[OFF, LEN]...] (keep "p..."), "new_size",
 *           "post_st": {"ino", "type", "size", "mtime"} or null }
 *   NAME: { "path": PATH, "keep": OBJNAME | "link": PATH } another real
 *         name of a file that went (kept, or linked back from where its
 *         inode stays)
 * An undo's record may add "link_of": PATH to an object (a name the undo
 * linked to the inode at PATH: its undo unlinks it again, no aside).
 * "pre" is where the object was before the commit (null: it is new),
 * "post" where it is after; the meta fields are the object's before.
 */
#ifndef TXFS_HIST_INT_H
#define TXFS_HIST_INT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "history.h"

#define HIST_DIR "history"
#define HIST_MANIFEST "manifest.json"
#define HIST_JOURNAL "undo.json"
#define HIST_PACK_KEY "hist_pack"
/* A record this small (manifest and pre-images) is made durable by the
 * commit point through the pack (pack.c), not by syncs of its files. */
#define HIST_PACK_MAX ((size_t)4 << 20)
/* A record's file "ID\n": the undo that took it back (hist_load merges it
 * into the manifest's "undone_by", which older versions rewrote). */
#define HIST_UNDONE "undone_by"

/* keep.c and finish.c: the pending record of commit txid (its folder's
 * name into pend) and its manifest, or NULL; the record's objs/ that
 * history_link left open for history_take, closed. */
struct txfs;
json_t *hist_find_pending(int hfd, uint64_t txid, char *pend, size_t n);
void hist_objs_close(struct txfs *fs);

/* pack.c: the pack of record pend (the manifest as text, pfiles
 * [[NAME, SIZE, RANGES]...] read from pend's objs/ through dfd, or from
 * mem: their ranges' bytes one after the other), malloc'd into *buf; put
 * into the commit's LMDB transaction by the capture. */
int hist_pack_build(uint64_t txid, const char *pend, int dfd,
		    const char *manifest, size_t mlen, json_t *pfiles,
		    const char *mem, char **buf, size_t *len);
/* The bytes of ranges [[OFF, LEN]...], one after the other in data,
 * written into fd at their offsets. */
int hist_put_ranges(int fd, json_t *ranges, const char *data);
/* The pre-images pfiles, their bytes in mem (as hist_pack_build takes
 * them), written as files under objs (fsync'ed if sync). */
int hist_pack_spill(int objs, json_t *pfiles, const char *mem, bool sync);
/* Write a pack back into its record under hfd (the final folder, or the
 * pending one, made if missing), fsync'ed; a manifest that parses with
 * the pack's txid is kept (finish's post states, an undo's mark).
 * -EINVAL: not a whole pack. */
int hist_pack_apply(int hfd, const void *pack, size_t len);
/* The pack in fs's layer, if any: applied under hfd, then dropped. */
struct layer_txn;
int hist_pack_restore(struct txfs *fs, int hfd);
/* Does fs's layer hold a pack? */
bool hist_pack_present(struct txfs *fs);
/* Drop the pack: in t, or in a transaction of its own, synced (t NULL). */
int hist_pack_drop(struct txfs *fs, struct layer_txn *t);
/* finish.c: history_sync, the pack dropped in t (a capture's commit
 * transaction) instead of a transaction of its own, and no pruning.
 * -errno: a lazy record could not be written (its pack stays). */
int history_sync_in(struct txfs *fs, struct layer_txn *t);
/* name in dfd made len bytes of buf (no fsync) */
int hist_put_file(int dfd, const char *name, const char *buf, size_t len);

/* names.c: a name (any bytes) as a JSON string in memory; a document
 * as written on disk (its names mapped to UTF-8: a new reference, the
 * same document when nothing needs it; NULL when out of memory) and its
 * text; a document read from disk, its names back to their bytes. */
json_t *hist_jname(const char *name);
/* json_pack's "[...]" and "{...}" for names: fmt is one letter a value
 * ('s' a name, any bytes, NULL for null; 'I' json_int_t; 'O' a json_t,
 * referenced; 'o' a json_t, taken); hist_obj takes a key before each. */
json_t *hist_arr(const char *fmt, ...);
json_t *hist_obj(const char *fmt, ...);
json_t *hist_disk_form(json_t *doc);
char *hist_dumps(json_t *doc);
int hist_mem_form(json_t *doc);

/* record.c */
int hist_open(int statefd, bool create);
void hist_name(char *buf, size_t n, uint64_t id, bool pending);
json_t *hist_load(int hfd, const char *name);
/* A JSON file read whole and parsed (json_loadf reads a character at a
 * time through stdio: seconds for a mass deletion's manifest), or NULL. */
json_t *hist_load_file(int dir, const char *rel);
int hist_save(int dfd, const char *name, json_t *doc);
/* Mark record rec as undone by record by: its undone_by file, durable. */
int hist_mark_undone(int hfd, const char *rec, const char *by);
int hist_rm_tree(int dfd, const char *name);
/* The id the next record takes: one more than any record's, pending or
 * final. */
uint64_t hist_next_id(int hfd);
/* Ids of the final records, newest first (*ids malloc'd). */
int hist_ids(int hfd, uint64_t **ids, size_t *n);
int64_t hist_i64(json_t *o, const char *key);
const char *hist_str(json_t *o, const char *key);
uint64_t hist_tree_bytes(int dfd, const char *name);
/* Write <name>/info (time, bytes) of a final record: from its manifest
 * and its tree (put), or as given (write). */
int hist_info_put(int hfd, const char *name);
int hist_info_write(int hfd, const char *name, int64_t t, uint64_t bytes);
/* Time and bytes from <name>/info: 0, or -ENOENT (none, unreadable). */
int hist_info_read(int hfd, const char *name, int64_t *t, uint64_t *bytes);
char hist_type(mode_t mode);
/* A post state: {"ino", "type", "size", "mtime" (ns)} of st (what a
 * conflict check compares against later). */
json_t *hist_state_json(const struct stat *st);
/* The meta of st (and fd's xattrs, fd O_PATH or -1) into obj. */
int hist_meta_put(json_t *obj, const struct stat *st, int fd,
		  const char *target);

/* A path's parent folder under root, no symlink followed: fd or -errno;
 * *base points into path. create: make missing folders (mode 0755). */
int hist_parent(int root, const char *path, const char **base, bool create);
/* Copy object name in sdir to dname in ddir: a file's bytes, a symlink, a
 * FIFO; a folder with what is in it (deep). Owner, mode, times, xattrs. */
int hist_copy(int sdir, const char *sname, int ddir, const char *dname);
/* Set mode, owner, times and xattrs of name in dir from obj's meta. */
int hist_meta_set(int dir, const char *name, json_t *obj);

/* revert_ops.c: one operation of an undo (a JSON array: ["aside", PATH,
 * NAME], ["take", RECORD, NAME, PATH], ["move", FROM, TO] (older
 * journals), ["link", FROM, TO], ["mkdir", PATH, MODE], ["patch", RECORD,
 * NAME, PATH, RANGES, SIZE], ["copyin", RECORD, NAME, PATH], ["meta",
 * PATH, OBJ], and the three below), idempotent. root: the real directory or the mount; u: the
 * undo's own record's objs/ (asides go there; -1: staged, removed through
 * the mount); copy: take copies (restore, staged) instead of renaming. */
struct uctx {
	int root, hfd, uobjs;
	bool copy;
	json_t *failed;		/* the indexes of the ops not applied, or NULL */
	json_t *udoc;		/* the undo's record as its commit point wrote
				 * it (NULL: journal_end reads U.pending) */
	/* what the ops keep open (a mass undo's ops come folder by folder):
	 * objs/ of record rec (rec[0] 0: none), and the folder pdir of the
	 * last path an op resolved (NULL: none), dropped by every op that
	 * moves or removes names (one of its folders could be that one) */
	char rec[32];
	int robjs;
	char *pdir;
	int pfd;
};
int undo_op(struct uctx *c, json_t *op);
/* Close what the ops keep open (undo_replay does at its end). */
void undo_ops_done(struct uctx *c);
/* The ops that take a path through a temporary name (a swap, a cycle, a
 * chain of renames, a folder that a file replaced): ["stash", PATH, TMP,
 * INO] moves the object INO at PATH to TMP in the holder (the undo's
 * objs/, or the root of a mount); ["unstash", TMP, PATH, FROM] moves it to
 * PATH; ["unlink", PATH, INO] removes one more name of INO, which stays. */

/* revert_check.c: what an undo is planned with (revert.c), its conflict
 * checks and the paths it skips (--force) */
struct plan_u {
	const struct undo_opts *o;
	struct uctx c;
	json_t *ops, *inv, *inv_names, *undone, *conflicts, *touched;
	json_t *vacated;	/* path -> true: the plan moves it away */
	json_t *made;		/* path -> type: the plan puts it back */
	json_t *skip;		/* path -> true: --force leaves it as it is */
	json_t *root;		/* the root's meta before the undo (for U) */
	int udir;		/* U.pending (offline) or -1 */
	/* planning reads a tree that nothing changes meanwhile: the folder
	 * of the last path it stat'ed (ldir, NULL: none; lfd an fd or
	 * -errno) stays open for its siblings */
	char *ldir;
	int lfd;
	unsigned naside, npatch, nstash;
	unsigned hid_conflicts, hid_skipped, hid_ops;	/* left out (o->hide) */
	unsigned nomem_conflicts;	/* not named: out of memory */
	bool restore;
};
int ru_depth(const char *p);
bool ru_under(const char *p, const char *top);
const char *ru_post0(json_t *obj);
bool ru_selected(const struct undo_opts *o, json_t *obj);
bool ru_name_selected(const struct undo_opts *o, const char *path);
int ru_lstat(struct plan_u *u, const char *path, struct stat *st);
void ru_lstat_done(struct plan_u *u);
/* Is the object's old inode where the commit left it (renamed, or changed
 * in place)? */
bool ru_same_inode(json_t *obj);
/* Is path now what the commit left there (obj's post_st: inode, size,
 * mtime)? */
bool ru_as_left(struct plan_u *u, json_t *obj, const char *path);
bool ru_is_touched(struct plan_u *u, const char *path);
/* A conflict of record rec at path: refuses the undo, or with --force
 * (skippable ones: the undo would overwrite what is there now) the path
 * is left as it is, said on stderr. */
void ru_conflict(struct plan_u *u, const char *path, const char *why,
		 const char *rec, bool skippable);
/* revert_save.c: the current bytes of obj's patched ranges (and of what
 * its undo's truncate drops) into U as inv's keep; the whole file at
 * path into U; the ops that put back the times of the folders whose
 * names the plan changes (last). */
int ru_save_patch(struct plan_u *u, json_t *obj, json_t *inv);
int ru_save_whole(struct plan_u *u, const char *path, json_t *inv);
int ru_folder_times(struct plan_u *u);
/* 1. what changed since record rec (undo only) */
void ru_check(struct plan_u *u, json_t *doc, const char *rec);
/* Does o->hide (a mount's policy) hide path, or a path op names? */
bool ru_hidden(const struct undo_opts *o, const char *path);
bool ru_op_hidden(const struct undo_opts *o, json_t *op);
/* Does --force leave this object of the record as it is? */
bool ru_skipped(struct plan_u *u, json_t *obj);
/* Can path's folders be reached (or made) without a symlink once the
 * plan so far is applied: every one on the way a folder, or going away
 * (vacated), or put back as a folder (made)? */
bool ru_way_ok(struct plan_u *u, const char *path);
/* Run every op of the journal (history/undo.json), then finish it. */
int undo_replay(struct uctx *c, json_t *journal);

#endif /* TXFS_HIST_INT_H */
