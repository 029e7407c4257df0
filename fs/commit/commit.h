/* SPDX-License-Identifier: Apache-2.0 */
/*
 * commit.h - the commit plan (plan.c, steps.c, places.c), its journal and
 * application (commit.c, stage.c, apply.c, patch.c), and the transaction
 * verbs (txn.c).
 *
 * How a regular file's new content reaches the real directory:
 *
 *   CS_PATCH  in place (patch.c): a real file whose data changed partly.
 *             After the commit point the layer's changed blocks are
 *             written into the real file (pwrite, ftruncate), as an
 *             idempotent redo step: a crash replays it from the chunks,
 *             which stay in the layer until the commit is finalized.
 *             Cost: the changed blocks, not the file. A commit whose
 *             steps are only such patches and metadata ends with an
 *             fsync of each file it touched (CS_FSYNC) instead of a
 *             syncfs of the whole file system. Chosen only when
 *             all of these hold (patch_fits):
 *               - the file stays at its real path (not renamed, not
 *                 replaced, no name added or moved in the layer);
 *               - it has one name: the layer's and the real st_nlink are
 *                 both 1 (a hard-linked file keeps CS_COPY below, as
 *                 before this path existed);
 *               - it is unchanged underneath (the real ctime equals the
 *                 one recorded when the transaction first touched it:
 *                 otherwise a conflict, or with --force the copy path);
 *               - it is not setuid/setgid, and txfs can open it for
 *                 writing now (not busy as a running program, ...);
 *               - the layer keeps some of its real bytes (lower_valid >
 *                 0) and changes at most half of its 64 KiB blocks.
 *             Readers of the real directory can see the file partly
 *             patched while the commit runs (as with `git checkout` or an
 *             editor saving in place); after a crash the next mount (or
 *             `txfs recover`) completes the patch.
 *   CS_PLACE  a new copy: the whole content is written into the staging
 *             folder and fsync'ed before the commit point, the old file
 *             is detached and the copy renamed into place (atomic per
 *             file). New files, renamed or replaced ones, and files
 *             rewritten for the most part.
 *   CS_COPY   a hard-linked real file (layer nlink > 1): staged as for
 *             CS_PLACE, then copied into the existing inode, so that every
 *             name of it shows the new content - names outside the
 *             workspace included, since they are the same file.
 */
#ifndef TXFS_COMMIT_H
#define TXFS_COMMIT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "../txfs.h"
#include "../layer/layer.h"
#include "../lower/lower.h"
#include "../history/history.h"

struct txfs;

/* One layer entry naming an object: where the merged view shows it. */
struct place {
	uint64_t dir;
	char *name;
};

/* One object of the layer. */
struct cobj {
	uint64_t tino;
	struct layer_inode rec;
	char *lower;		/* real path, NULL if born in the layer */
	char *link;		/* symlink target */
	struct place *places;	/* explicit places (layer entries) */
	size_t nplaces, pcap;
	char **finals;		/* final paths, [0] the primary */
	size_t nfinals;
	bool natural;		/* stays at its real path */
	bool skip;		/* partial commit: not selected, stays staged */
	bool patch;		/* data committed in place (CS_PATCH) */
	bool has_lst;		/* lst holds the real object's lstat from
				 * the conflict check (history reuses it) */
	struct stat lst;
};

/* Step kinds, in the order they run (attach kinds interleave). */
enum cstep_kind {
	CS_DETACH = 1,	/* real a -> staging o<tino>; tino 0: unlink a;
			 * b CS_GONE: a deleted non-folder, unlinked in
			 * place (still only if a is object tino) */
	CS_MKDIR,	/* mkdir a */
	CS_ATTACH,	/* staging o<tino> -> a */
	CS_PLACE,	/* staging d<tino> -> a (replaces) */
	CS_COPY,	/* staging d<tino> copied into a, in place */
	CS_SYMLINK,	/* symlink b at a */
	CS_MKNOD,	/* FIFO or socket at a */
	CS_LINK,	/* hard link b to a */
	CS_CLEAN,	/* remove the staging folder */
	CS_META,	/* mode, owner, times, xattrs of a from the layer;
			 * tino 0: only times, b = "atime_ns mtime_ns"
			 * (after CLEAN: removing staging changes the root) */
	CS_SYNC,	/* syncfs */
	CS_FORGET,	/* partial commit: drop tino from the layer at the end */
	CS_PATCH,	/* the layer's blocks of tino written into real a in
			 * place (runs among the attach kinds, where CS_COPY
			 * does; numbered last so older journals keep their
			 * numbers) */
	CS_FSYNC,	/* fsync a (a regular file or folder; anything else,
			 * or one that cannot be opened: syncfs). Replaces
			 * CS_SYNC in a commit that patches files in place and
			 * changes no names (only PATCH and META steps): it
			 * then waits for its own files, not for every dirty
			 * page of the file system */
};

/* CS_DETACH's b for an object that leaves the tree (an older journal
 * has "" there, and an older binary renames it to staging: same end). */
#define CS_GONE "gone"

struct cstep {
	enum cstep_kind kind;
	uint64_t tino;
	int depth;
	char *a, *b;
};

struct memo {
	uint64_t tino;
	char *path;
};

struct plan {
	struct txfs *fs;
	struct layer_txn *t;
	struct cobj *objs;	/* sorted by tino */
	size_t n, cap;
	struct memo *memo;	/* final paths of folders */
	size_t nmemo, mcap;
	struct cstep *steps;
	size_t nsteps, scap;
	char **conflicts;
	size_t nconflicts;
	bool partial;		/* plan_select was applied */
	bool commit;		/* built to be committed: may choose CS_PATCH
				 * (probes the real files; status and diff
				 * plans do not) */
	struct place *whiteouts;	/* layer whiteouts (dir, name) */
	size_t nwh, whcap;
	/* steps that could not apply after the commit point because the
	 * real directory changed underneath (apply.c): "path: what: why" */
	char **missed;
	size_t nmissed;
	bool journaled;		/* commit_run passed the commit point */
	/* probe.c: "path: why" of what the real file system refused before
	 * the commit point (the commit was refused, nothing changed) */
	char *refused;
};

/* Build the plan from transaction t. -EBUSY with p->conflicts filled when
 * the real directory changed underneath (unless force). */
int plan_build(struct txfs *fs, struct layer_txn *t, struct plan *p,
	       bool force);
/* places.c: the same for a plan that will be committed: the steps may
 * patch real files in place (CS_PATCH), which plan_build never chooses,
 * and every place they make a name at is checked (plan_check_places). */
int plan_build_commit(struct txfs *fs, struct layer_txn *t, struct plan *p,
		      bool force);
/* plan_build(force) without the steps: what the merged view is (objects
 * and their final paths), for the status and the changes since a
 * savepoint, which list changes and execute nothing. */
int plan_view(struct txfs *fs, struct layer_txn *t, struct plan *p);
void plan_free(struct plan *p);
/* The objects and their final places, conflicts checked (or with force,
 * the vanished ones dropped); no steps. commit: may choose CS_PATCH. */
int plan_objects(struct txfs *fs, struct layer_txn *t, struct plan *p,
		 bool force, bool commit);
/* Partial commit: keep only the objects at or below paths, and what they
 * need (new or moved folders above them, with everything below those),
 * then rebuild the steps. -ENOENT if nothing matches. */
int plan_select(struct plan *p, const char *const *paths, size_t n);
/* steps.c: build p->steps from the selected objects. */
int plan_steps(struct plan *p);
/* Check the selected objects against the real directory: -EBUSY with
 * p->conflicts filled if any changed underneath. */
int plan_conflicts(struct plan *p);
struct cobj *plan_obj(struct plan *p, uint64_t tino);
/* Add "path: why" to p->conflicts. */
int plan_add_conflict(struct plan *p, const char *path, const char *why);
/* places.c: before the commit point, check every place a step puts a name
 * at against the real directory: its folder is a real folder (no
 * symlink) or one the plan makes, and the name is free or taken by what
 * the plan moves away. Otherwise a conflict: -EBUSY, or with force the
 * object and what the plan puts below it are dropped (left as the real
 * directory has them, listed in p->conflicts) and the steps rebuilt. */
int plan_check_places(struct plan *p, bool force);
/* Regular files whose new content goes through the staging folder (or
 * in place, CS_PATCH): new ones, and real ones whose data changed. A
 * predicate on the object alone, here so that stage.c needs no plan.c. */
static inline bool plan_needs_data(const struct cobj *o)
{
	return S_ISREG(o->rec.mode) && o->nfinals &&
	       (!(o->rec.flags & LI_LOWER) || (o->rec.flags & LI_DATA));
}

/* ---- stage.c: the real-directory side before the commit point ---- */

/* pwrite all of buf at off (the staged copies; also the in-place patch). */
int commit_write_all(int fd, const void *buf, size_t len, off_t off);
/* The real folder of path, opened beneath the root; *base is its last
 * component (in path). An fd, or a negative errno. */
int stage_parent(struct txfs *fs, const char *path, const char **base);
/* The staging folder of commit txid (made when create): fd or -errno. */
int stage_open(struct txfs *fs, uint64_t txid, bool create);
/* Remove it with everything in it (absent: 0). */
int stage_remove(struct txfs *fs, uint64_t txid);
/* The name in it of object tino's file: kind 'd' (new contents) or 'o'
 * (a real object moved aside). */
void stage_name(char *buf, size_t n, char kind, uint64_t tino);
/* Copy the data of [off, end) of real file src into dst, skipping holes;
 * buf holds one block (LAYER_BLOCK). */
int stage_copy_lower(int src, int dst, uint64_t off, uint64_t end,
		     char *buf);
/* Step 2: every new file content of p into the staging folder, durable. */
int stage_prepare(struct txfs *fs, struct plan *p, uint64_t txid);

/* probe.c: try on the staging folder of txid (real file system) what
 * the steps will ask of it for good - the layer's user.* xattrs of each
 * object, owners (stage_prepare tried the largest file size before it
 * wrote anything) - and refuse what
 * it cannot take before the commit point: -ENOSPC, -EFBIG, -EDQUOT or
 * -EINVAL with p->refused set. */
int stage_probe(struct txfs *fs, struct plan *p, uint64_t txid);

/* ---- apply.c: the journaled steps, after the commit point ---- */

/* Apply p's steps in order, fault_point(fs, phase) after each. */
int commit_apply(struct txfs *fs, struct plan *p, uint64_t txid,
		 const char *phase);

/* patch.c: should o's data be committed in place (CS_PATCH)? Checks the
 * rules above against the layer (p->t) and the real file. */
bool patch_fits(struct plan *p, const struct cobj *o);
/* Apply a CS_PATCH step with the layer's chunks read in t; idempotent.
 * Calls fault_point(fs, phase) between its writes. */
int patch_apply(struct txfs *fs, struct layer_txn *t, const struct cstep *s,
		const char *phase);
/* Open real file path for writing (O_WRONLY | flags); a read-only file
 * the commit makes writable (its CS_META sets the mode after) gets u+w
 * first. fd or -errno. */
int commit_open_writable(struct txfs *fs, const char *path, int flags);
/* Apply a CS_FSYNC step. */
int patch_fsync(struct txfs *fs, const struct cstep *s);

/* Prepare, journal (the commit point), apply and finalize a plan built
 * in write transaction p->t (which this commits). Steps the real
 * directory's changes made impossible are in p->missed (the rest is
 * committed); p->journaled says whether it passed the commit point. */
int commit_run(struct txfs *fs, struct plan *p, uint64_t txid);

/* commit.c: finish or discard an interrupted commit (at mount, or txfs
 * recover). *what says which, for the report; *missed (when not NULL, the
 * caller frees it) lists the steps the real directory's changes made
 * impossible, one "  path: what: why" line each, at most 10 and a count. */
int txn_recover(struct txfs *fs, const char **what, char **missed);
/* Is a commit that passed its commit point waiting for its recovery (it
 * stopped, and completing it at once failed)? */
bool txn_journal_pending(struct txfs *fs);
/* The same lines for p->missed (NULL if none). */
char *commit_missed_text(const struct plan *p);

/* Fault injection: TXFS_FAULT=commit:N stops the daemon at the Nth step
 * of a commit, commit-eio:N makes it fail with EIO there, recover:N stops
 * a recovery. Inert unless set. */
int fault_point(struct txfs *fs, const char *phase);

#endif /* TXFS_COMMIT_H */
