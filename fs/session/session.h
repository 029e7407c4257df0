/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session/ - the transaction verbs and who may say them.
 *
 * Owns: txn.c (commit, rollback, savepoint, release, recovery at mount, the
 * verb lines), changes.c (the counts and lists of the open transaction:
 * a file replaced by rename is one modification), similar.c (renames found
 * by content), since.c (what changed since a savepoint, against the view
 * at it; a file as it was at a savepoint),
 * ctl.c (what the control folder's files say, what a write to ctl does),
 * sock.c (the control socket in the state folder), session.c (`txfs exec`:
 * one command as one nested transaction), lastcmd.c (what status.json's
 * last_command says once a later verb changed that command's fate),
 * gc.c (the collector of discarded
 * generations).
 * May call: commit/, view/, layer/, lower/. Called by: ops/, daemon/.
 */
#ifndef TXFS_SESSION_H
#define TXFS_SESSION_H

#include "../commit/commit.h"
#include "../view/view.h"

/* Counts of the open transaction. */
struct txn_counts {
	uint64_t txid;
	uint64_t added, modified, deleted, renamed, flagged;
	uint64_t bytes;		/* bytes staged in chunks */
	uint32_t savepoints;
};

/* ---- changes.c: the counts and the list of changes ---- */

/* Counts, and (changes != NULL) the list "K path" a line. */
int txn_summary(struct txfs *fs, struct txn_counts *c, char **changes);
/* Count plan p's changes into c; with out, write the list there; with
 * flagged, the paths the policy flags for review. */
struct policy;
int changes_count(struct plan *p, struct txn_counts *c, FILE *out,
		  const struct policy *pol, FILE *flagged);

/* One change of a list (the open transaction against the real directory,
 * or what changed since a savepoint): kind 'A', 'M', 'D' or 'R' (0: merged
 * into another by chg_pair); old: its path before (NULL for A), new: its
 * path now (NULL for D). Paths are borrowed (from the plans). */
struct chg {
	char kind;
	const char *old, *new;
	mode_t type;		/* S_IFMT of the object */
	const char *lower;	/* D: its real path, if it is a real object */
	bool one_name;		/* D: the object had one name */
	bool real_data;		/* D: its old content is the real file's */
	uint64_t tino, size;	/* A: a file born in the layer (else 0) */
	const char *at;		/* D: where it was in the view, if not old */
};

struct chg_list {
	struct chg *v;
	size_t n, cap;
	char **own;		/* paths made for the list */
	size_t nown;
};

/* Where the real paths below the real folders a plan moves or deletes are
 * in its view. */
struct chg_moved {
	const char *lower, *final;	/* final NULL: gone */
	size_t len;
};

struct chg_view {
	struct chg_moved *m;	/* sorted by lower */
	size_t nm, cap;
};

int chg_view_init(struct chg_view *v, const struct plan *p);
void chg_view_free(struct chg_view *v);
/* Real path lower as the view shows it (moved with the real folders it
 * is in; NULL: one of them is gone). Made paths are kept by l; *err on
 * ENOMEM. */
const char *chg_view_path(const struct chg_view *v, const char *lower,
			  struct chg_list *l, int *err);

int chg_add(struct chg_list *l, char kind, const char *old, const char *new,
	    mode_t type, const char *lower, bool one_name);
void chg_free(struct chg_list *l);
/* A deletion and a creation of the same type at one path become one
 * modification 'M' (a file replaced by rename), unless the deleted object
 * had more than one name (a real file: st_nlink > 1 now). */
int chg_pair(struct txfs *fs, struct chg_list *l);
/* similar.c: an unpaired deletion of a real file and creation of a file
 * born in the layer whose contents share at least half of their bytes
 * (lines) become one rename 'R' (git's rename detection). The new files
 * are read in now (NULL: a read transaction of its own). */
int chg_similar(struct txfs *fs, struct layer_txn *now, struct chg_list *l);
/* The line of c as .txfs/changes writes it ("K path", "R old -> new",
 * names C-quoted when they need it), with "\t(needs review)" when flag. */
void chg_put(FILE *out, const struct chg *c, bool flag);
/* Add c to the counts of its kind. */
void chg_count(const struct chg *c, struct txn_counts *n);
/* The id of the transaction open in the layer (0 before the first). */
uint64_t txn_cur_id(struct layer_txn *t);

/* The result of a transaction verb, for .txfs/ctl and the CLI. */
struct txn_report {
	int err;		/* 0 or a negative errno */
	char *text;		/* words an agent can act on (malloc'd) */
};

int txn_commit(struct txfs *fs, bool force, struct txn_report *r);
/* Once a commit answered: what its history record still needs to be
 * durable on its own (history_sync), under the commits' lock. */
void txn_history_sync(struct txfs *fs);
/* Commit only the named paths (and the folders they need). */
int txn_commit_paths(struct txfs *fs, bool force, const char *const *paths,
		     size_t n, struct txn_report *r);
int txn_rollback(struct txfs *fs, const char *savepoint, struct txn_report *r);
int txn_savepoint(struct txfs *fs, const char *name, struct txn_report *r);
int txn_release(struct txfs *fs, const char *name, struct txn_report *r);
/* Run one control verb line ("commit", "rollback NAME", ...). */
/* c: the process that wrote the verb to .txfs/ctl (the policy's `control
 * deny` applies), NULL for the txfs command (it does not). */
struct req_ctx;
/* What .txfs/ctl reads from now on: text (taken; NULL: the default). */
void txn_last_report(struct txfs *fs, char *text);
int txn_command(struct txfs *fs, const char *line, const struct req_ctx *c,
		struct txn_report *r);
/* Refuse a verb written to .txfs/ctl (logged as a veto). */
void txn_refuse(struct txfs *fs, const char *line, const struct req_ctx *c,
		const char *why, struct txn_report *r);

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

/* ---- sock.c: the control socket in the state folder ---- */

struct txn_report;
#define SOCK_REPLIED 1	/* sock_dispatch answered by itself */
int sock_start(struct txfs *fs);
void sock_stop(struct txfs *fs);
int sock_dispatch(struct txfs *fs, int cfd, int argc, char **argv,
		  struct txn_report *r);
/* The text of .txfs/status (json: status.json), changes or log. */
/* session.c: the "cmd-*" and "changes-since" socket verbs (txfs exec);
 * cfd: the connection (cmd-begin records its peer, exectree.c). */
int session_dispatch(struct txfs *fs, int cfd, int argc, char **argv,
		     struct txn_report *r);
/* exectree.c: the processes of commands txfs exec runs now. begin: the
 * peer of cfd runs command id (0, -ESRCH: no peer, -EBUSY: full); end:
 * it ended; has: pid (a thread id) is one of their processes (pid <= 0,
 * unknown: true while a command runs). */
void exectree_init(struct txfs *fs);
void exectree_destroy(struct txfs *fs);
int exectree_begin(struct txfs *fs, int cfd, uint64_t id);
void exectree_end(struct txfs *fs, uint64_t id);
bool exectree_has(struct txfs *fs, pid_t pid);
/* Is txfs exec of command id alive (between its cmd-begin and cmd-end)? */
bool exectree_runs(struct txfs *fs, uint64_t id);
/* The last txfs exec command's summary (status.json's last_command), if
 * it is command first or later and kept, now says `as` (undone by
 * cmd-rollback; discarded by a full rollback, first 0; first UINT64_MAX:
 * after a rollback to a savepoint, undone if its savepoint cmd-N is
 * gone). Nothing once a commit closed it (session_last_closed). */
void session_last_mark(struct txfs *fs, uint64_t first, const char *as);
/* A commit (whole or of paths) ended the commands before it. */
void session_last_closed(struct txfs *fs);
/* cmd-group: the peer of cfd, the runner of command id, started a
 * command in process group pgid (a child of the peer that leads it).
 * 0, -ESRCH (not that command's runner), -EINVAL, -EBUSY (too many). */
int exectree_group(struct txfs *fs, int cfd, uint64_t id, pid_t pgid);
/* since.c: what changed since savepoint `name` (against the view at it):
 * an object whose "changes" array holds the change lines (and
 * "changes_hex" their bytes when one is not UTF-8), and with text, the
 * lines as .txfs/changes writes them; with `only`, only until the next
 * savepoint (what one command did). With keep (cmd-end): keep->before,
 * when given, is taken as the view at the savepoint (one plan, not two),
 * and the plan of the view now is handed back in keep->after. */
struct since_plans {
	struct plan *before;	/* in: the view at the savepoint, or NULL */
	struct plan *after;	/* out: the view now, when it was planned */
	uint64_t txid;		/* out: the layer commit the view now is */
};
int changes_since(struct txfs *fs, const char *name, bool only,
		  struct json_t **out, FILE *text, struct since_plans *keep);
/* The text of changes_since (-ENOENT: "no savepoint NAME"). */
int since_text(struct txfs *fs, const char *name, bool only,
	       struct txn_report *r);
/* "sp-read at|next NAME PATH": regular file PATH as the view had it when
 * savepoint NAME was taken (at), or at the savepoint after NAME, or now
 * if none (next): its data (malloc'd) and mode. -ENOENT (no such
 * savepoint or path), -EISDIR, -ELOOP (not a regular file). */
int since_read(struct txfs *fs, const char *which, const char *name,
	       const char *path, char **buf, size_t *len, mode_t *mode);
/* The summary of the last `txfs exec` command (JSON, malloc'd) or NULL. */
char *session_last_json(struct txfs *fs);
/* Free the view session.c keeps for the next command's cmd-end (at
 * unmount; a commit, rollback or release ends it by bumping fs->verbs). */
void session_forget(struct txfs *fs);
int ctl_text(struct txfs *fs, const char *name, bool json, char **buf,
	     size_t *len);
/* loghide.c: the audit log text *buf (*len bytes, malloc'd) without the
 * paths the mount's policy hides, and a count of those left out: *buf is
 * replaced. 0 or -ENOMEM (*buf untouched). */
int loghide_filter(struct txfs *fs, char **buf, size_t *len);
/* The same for one record o (a cmd-end's: status.json's last_command):
 * hidden elements of its arrays left out, "hidden": N added; N. */
unsigned loghide_object(struct txfs *fs, struct json_t *o);

/* ---- gc.c: the background collector of discarded generations ---- */

int gc_start(struct txfs *fs);
void gc_stop(struct txfs *fs);	/* joins the thread; fine if not started */
/* Ask it to run (after a rollback or commit discarded a generation). */
void gc_kick(struct txfs *fs);

#endif /* TXFS_SESSION_H */
