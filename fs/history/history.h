/* SPDX-License-Identifier: Apache-2.0 */
/*
 * history/ - what a commit replaced, kept so that the commit can be taken
 * back: `txfs history`, `txfs undo`, `txfs restore`.
 *
 * Owns: keep.c and keep_patch.c (the daemon's side: before a commit's
 * commit point, every real object the commit will delete, replace or
 * change is kept in STATE/history/<id>.pending/ - a hard link of the
 * object, the old bytes of the blocks an in-place patch overwrites, the
 * metadata of folders - and after the commit the record is finished with
 * what each path became);
 * record.c (the record: manifest.json read and written, the list, the
 * retention and pruning); revert.c and revert_ops.c (taking one or more
 * commits back, or one path, as a crash-atomic change of its own that is
 * itself recorded, so an undo can be undone).
 * May call: lower/ (the real directory, through fds) and layer/ (the
 * chunks an in-place patch will write). Called by: commit/ (keep.c's
 * three entry points) and cli/ (this header is public for the txfs
 * command, like fs/mount.h).
 *
 * STATE/history/ holds one folder a kept commit, named by its id (the
 * commit's transaction id, 16 hex digits), with manifest.json and objs/:
 *
 *   k<tino>   a hard link to a real non-folder the commit replaced or
 *             moved, or a copy of a deleted one with other names (a copy
 *             where the state folder is on another file system: EXDEV)
 *   s<h>/k<tino>  a real file with one name the commit deleted: the file
 *             itself, moved there by the commit's apply (history_take;
 *             h: a hash of its folder's path, 3 hex digits)
 *   p<tino>   the old bytes of the ranges an in-place patch overwrote, at
 *             their offsets (a sparse file); the manifest lists the ranges
 *   n<k>      another real name of a hard-linked file that went away
 *   a<k>      (undo records) what an undo moved aside
 *   t<k>      (undo records) a renamed object on its way back to its old
 *             name: there only while the undo runs (or, if the step that
 *             puts it back was not applied, listed as its keep)
 *
 * A small record's manifest and pre-images are also put, as one value
 * (the pack, pack.c), into the commit's own LMDB transaction, which the
 * commit point syncs: the record's own files are fsync'ed once the commit
 * answered (history_sync), and until then a crash recovers the record
 * from the pack. A small record that needs no file of the real directory
 * (no link, copy or moved file: metadata and patched blocks' old bytes,
 * keep_patch.c) is lazy: it has no folder before the answer at all, and
 * history_sync writes it from memory (the socket's "history-sync" asks
 * for that before txfs history / undo read a mounted workspace's).
 *
 * A crash before the commit point leaves <id>.pending, removed by the
 * recovery that discards the commit; a crash after it is completed with
 * the commit. An undo writes STATE/history/undo.json (its operations) as
 * its commit point and replays it after a crash.
 */
#ifndef TXFS_HISTORY_H
#define TXFS_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct txfs;
struct plan;

/* ---- keep.c: the daemon's side, called by commit/commit.c ---- */

/* Before the commit point of commit txid: keep what plan p will replace
 * in STATE/history/<txid>.pending/ (durable). Never fails the commit: on
 * an error (a full disk) the commit goes on without history and
 * history_kept() says why. */
void history_capture(struct txfs *fs, struct plan *p, uint64_t txid);
/* Right after the commit point (and in a recovery, before the journal is
 * applied): the hard links history_capture wrote down, made now (a link
 * changes a file's ctime: before the commit point it would turn a failed
 * commit's retry into conflicts). */
void history_link(struct txfs *fs, uint64_t txid);
/* In the apply of the commit history_link was called for: the real
 * non-folder at path (its folder open as pfd, st its lstat) leaves the
 * tree (a deletion). 0: it was moved into the record
 * (objs/s<hash>/k<ino>, one rename instead of a link now and an unlink);
 * -ENOENT: the record does not take it (none, or kept already as a
 * copy): the caller unlinks it. */
struct stat;
int history_take(struct txfs *fs, int pfd, const char *path,
		 const struct stat *st);
/* After the commit applied: record what every path became and make the
 * record final (<txid>.pending -> <txid>), then prune. Safe to call again
 * (recovery) and when nothing was captured. */
void history_finish(struct txfs *fs, uint64_t txid);
/* After a crash, when no journal is left: a pending record whose commit
 * was finalized (its txid below next_txid, the layer's next one) is
 * finished, any other dropped. */
void history_settle(struct txfs *fs, uint64_t next_txid);
/* A record finished through the pack (pack.c): its own files and folders
 * made durable, the pack marked done, then the retention applied. Called
 * once the commit answered (under the lock that serializes commits), by
 * the next capture, and at exit; nothing when none waits. */
void history_sync(struct txfs *fs);
/* The commit was discarded before its commit point: drop what was kept. */
void history_discard(struct txfs *fs, uint64_t txid);
/* What history keeps in memory between a capture and its links (exit). */
void history_free(struct txfs *fs);
/* A line for the commit report: "history: N objects saved, B bytes" or
 * why nothing was kept; NULL before any commit. Static storage of fs. */
const char *history_kept(struct txfs *fs);

/* ---- record.c and undo.c: public for the txfs command ---- */

/* Retention: keep at least the last keep_n commits or those younger than
 * keep_days, and prune the oldest beyond max_bytes. 0: the default. */
struct history_limits {
	unsigned keep_n;		/* default 20 */
	unsigned keep_days;		/* default 7 */
	uint64_t max_bytes;		/* default: 10% of the free space,
					 * at most 4 GiB, at least 64 MiB */
};

/* Print the history of the workspace whose state folder is state:
 * newest first, or one commit's paths (paths_of != 0), or every deleted
 * path still recoverable (deleted). json: one JSON document. hide (a
 * mount's policy, or NULL): the paths it hides are left out and counted
 * ("hidden": N in a commit with paths_of; with deleted, a last element
 * {"left_out": N, "why": ...}; in text, a line saying how many). */
struct policy;
int history_list(const char *state, bool json, uint64_t paths_of,
		 bool deleted, const struct policy *hide);
/* Prune under lim (NULL: the defaults); *freed the bytes freed. */
int history_prune(const char *state, const struct history_limits *lim,
		  uint64_t *freed);
/* Bytes kept under STATE/history. */
int history_bytes(const char *state, uint64_t *bytes, unsigned *count);

struct undo_opts {
	const char *state;	/* the state folder */
	const char *ws;		/* the real directory (unmounted), or */
	const char *mnt;	/* the mount: the undo is staged there */
	uint64_t id;		/* 0: the newest commit kept */
	const char *const *paths;	/* restore: only these (NULL: all) */
	size_t npaths;
	bool before;		/* restore --before ID: id is set */
	bool dry_run;
	bool force;		/* undo: conflicts do not refuse */
	/* a mount's policy, or NULL: the paths it hides are left out of
	 * what is printed (the operations, the conflicts, what --force
	 * leaves), said as counts; the undo itself is the same */
	const struct policy *hide;
};

/* Take commit o->id (and every later one) back, or restore paths as they
 * were before it. Prints what it did (or would do) on stdout and the
 * conflicts on stderr; -EBUSY: refused because of conflicts, or the state
 * folder is locked (mounted); -ESRCH: no such commit in the history. */
int history_undo(const struct undo_opts *o);
/* Finish an undo that a crash interrupted (STATE/history/undo.json):
 * 0 when there was none or it was finished; *done set when one was. */
int history_recover(const char *state, const char *ws, bool *done);

#endif /* TXFS_HISTORY_H */
