/* SPDX-License-Identifier: Apache-2.0 */
/*
 * txn.c - the transaction verbs: commit, rollback, savepoint, release,
 * and the control verb lines that name them. The summaries behind
 * .txfs/status are changes.c; what the kernel must forget after each verb
 * is ilist.c.
 *
 * Every verb takes fs->txlock exclusive (no request runs meanwhile, none
 * sees half a verb), changes the layer, and releases the lock before the
 * kernel caches are invalidated and flushed (a notification may wait for
 * a kernel lock held by a process whose request waits for txlock). The
 * verb returns only when the invalidations are done, so the caller sees
 * the new state at once.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "session.h"

/* --- reports -------------------------------------------------------- */

static void report(struct txfs *fs, struct txn_report *r, int err,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void report(struct txfs *fs, struct txn_report *r, int err,
		   const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	r->err = err;
	r->text = text;
	txn_last_report(fs, text ? strdup(text) : NULL);
}

void txn_last_report(struct txfs *fs, char *text)
{
	pthread_mutex_lock(&fs->ctl_lock);
	free(fs->last_report);
	fs->last_report = text;
	fs->exec_running = 0;	/* the text is this verb's (or step's) now */
	pthread_mutex_unlock(&fs->ctl_lock);
}

/* Log event with the members json_pack() makes of fmt and the rest. */
static void audit(struct txfs *fs, const char *event, const char *fmt, ...)
{
	json_t *o;
	va_list ap;

	if (!fs->audit)
		return;
	va_start(ap, fmt);
	o = json_vpack_ex(NULL, 0, fmt, ap);
	va_end(ap);
	if (o)
		audit_record(fs->audit, event, o, NULL);
	json_decref(o);
}

/* Log event with member key: the savepoint name (bytes), and its level
 * when not 0. */
static void audit_name(struct txfs *fs, const char *event, const char *key,
		       const char *name, uint32_t level)
{
	json_t *o = fs->audit ? json_object() : NULL;

	if (o && !audit_json_set_bytes(o, key, name) &&
	    (!level || !json_object_set_new(o, "level", json_integer(level))))
		audit_record(fs->audit, event, o, NULL);
	json_decref(o);
}

/* --- commit ---------------------------------------------------------- */

/* "  a\n  b\n" of n lines, or NULL when there are none. */
static char *join_lines(char **v, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!n || !(f = open_memstream(&buf, &len)))
		return NULL;
	for (size_t i = 0; i < n; i++)
		fprintf(f, "  %s\n", v[i]);
	fclose(f);
	return buf;
}

/* Add text to the report (and to what .txfs/ctl reads). */
static void report_append(struct txfs *fs, struct txn_report *r,
			  const char *text)
{
	char *joined = NULL;

	if (asprintf(&joined, "%s%s", r->text ? r->text : "", text) < 0)
		return;
	free(r->text);
	r->text = joined;
	txn_last_report(fs, strdup(joined));
}

/* After commit_run: recover at once what stopped past the commit point;
 * *missed gets the steps not applied (NULL: none). 0, or the error of a
 * commit past its commit point that could not be completed now (then
 * reported here: never as "kept"). */
static int commit_end(struct txfs *fs, struct txn_report *r, struct plan *p,
		      int rc, char **missed)
{
	const char *what;
	char *rmissed = NULL;

	*missed = commit_missed_text(p);
	if (rc && !p->journaled && p->refused)
		report(fs, r, rc, "commit refused: %s; nothing was changed "
		       "and the transaction stays staged: change it, or roll "
		       "back\n", p->refused);
	if (rc == 0 || !p->journaled)
		return rc;
	if (txn_recover(fs, &what, &rmissed) == 0) {
		free(*missed);
		*missed = rmissed;	/* the replay's list is the whole one */
		return 0;
	}
	report(fs, r, rc, "commit stopped after its commit point: %s; the "
	       "real directory is partly committed and the journal kept: "
	       "unmount, then `txfs recover STATE` or the next mount "
	       "completes it\n", strerror(-rc));
	return rc;
}

/* A commit that stopped after its commit point and could not be
 * completed at once holds the journal (and the layer's data it needs):
 * nothing is committed or rolled back over it. Called under txlock. */
static int refuse_pending(struct txfs *fs, struct txn_report *r,
			  const char *verb)
{
	if (fs->opts.salvage || !txn_journal_pending(fs))
		return 0;
	report(fs, r, -EBUSY, "%s refused: an earlier commit stopped after "
	       "its commit point and is not completed yet; nothing was "
	       "changed: unmount, then `txfs recover %s` (or mounting "
	       "again) completes it\n", verb, fs->state_path);
	return -EBUSY;
}

static void report_missed(struct txfs *fs, struct txn_report *r,
			  const char *missed)
{
	if (!missed)
		return;
	report_append(fs, r, "not applied, the real directory changed "
		      "underneath during the commit or its file system "
		      "refused them for good (left as it has them):\n");
	report_append(fs, r, missed);
}

/* After a commit the real directory is the merged view: every known node
 * now lives at its merged path; nodes whose object became another real
 * inode (born in the layer, or content replaced) are aliased to it. */
/* The real objects this commit may replace or delete stay alive while the
 * kernel knows their node ids (itab_pin): their inode numbers are not
 * given to files the commit (or a later one) creates. */
static void pin_replaced(struct txfs *fs, const struct plan *p)
{
	for (size_t i = 0; i < p->n; i++)
		if (!p->objs[i].skip && p->objs[i].lower)
			itab_pin(fs, p->objs[i].tino, p->objs[i].lower);
}

static int relink_nodes(struct txfs *fs, const struct plan *p)
{
	uint64_t *changed = malloc((p->n ? p->n : 1) * sizeof(*changed));

	if (!changed)
		return -ENOMEM;
	size_t k = 0;

	for (size_t i = 0; i < p->n; i++)	/* sorted by tino */
		if (!p->objs[i].skip && p->objs[i].nfinals)
			changed[k++] = p->objs[i].tino;
	lower_cache_flush(fs);	/* real paths changed */
	itab_relink(fs, changed, k);
	free(changed);
	atomic_fetch_add(&fs->epoch, 1);
	return 0;
}

/* The commit event: counts, and the flagged paths (n bytes of
 * NUL-terminated paths) as a JSON array of bytes. */
static void audit_commit(struct txfs *fs, uint64_t txid,
			 const struct txn_counts *c, const char *flagged,
			 size_t n)
{
	json_t *o;

	if (!fs->audit)
		return;
	o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:[]}",
		      "txid", (json_int_t)txid, "added", (json_int_t)c->added,
		      "modified", (json_int_t)c->modified,
		      "deleted", (json_int_t)c->deleted,
		      "renamed", (json_int_t)c->renamed,
		      "flagged", (json_int_t)c->flagged, "needs_review");
	for (size_t i = 0; o && flagged && i < n; i += strlen(flagged + i) + 1)
		if (audit_json_append_bytes(o, "needs_review", flagged + i))
			break;
	if (o)
		audit_record(fs->audit, "commit", o, NULL);
	json_decref(o);
}

/* The n bytes of NUL-terminated paths joined with ", " (for people). */
static char *join_paths(const char *paths, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!paths || !n || !(f = open_memstream(&buf, &len)))
		return NULL;
	for (size_t i = 0; i < n; i += strlen(paths + i) + 1) {
		char *q = audit_cquote(paths + i, ", ");	/* one name */

		fprintf(f, "%s%s", i ? ", " : "", q ? q : paths + i);
		free(q);
	}
	fclose(f);
	return buf;
}

static int commit_locked(struct txfs *fs, bool force, struct txn_report *r,
			 struct inval_list *il)
{
	char *flagged = NULL, *dropped = NULL, *flag_text, *missed = NULL;
	size_t flen = 0;
	FILE *flagf;
	struct txn_counts c;
	struct layer_txn *t;
	struct plan p;
	uint64_t txid;
	size_t freed;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	txid = txn_cur_id(t);
	/* forgotten orphans go first, inside the commit (view/reap.c) */
	if ((rc = reap_run_in(fs, t, &freed))) {
		layer_txn_end(t);
		return rc;
	}
	rc = plan_build_commit(fs, t, &p, force);
	if (rc == -EBUSY) {
		char *list = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&list, &len);

		for (size_t i = 0; f && i < p.nconflicts; i++)
			fprintf(f, "  %s\n", p.conflicts[i]);
		if (f)
			fclose(f);
		report(fs, r, -EBUSY, "commit refused: the real directory "
		       "changed underneath this transaction; nothing was "
		       "changed. Conflicts:\n%sReview them, then roll back, "
		       "or commit with `txfs commit --force`.\n",
		       list ? list : "");
		audit(fs, "conflict", "{s:I,s:I}", "txid", (json_int_t)txid,
		      "conflicts", (json_int_t)p.nconflicts);
		free(list);
	}
	if (rc == 0)
		rc = il_collect(fs, t, il);
	if (rc) {
		layer_txn_end(t);
		plan_free(&p);
		return rc;
	}
	flagf = open_memstream(&flagged, &flen);
	rc = changes_count(&p, &c, NULL, atomic_load(&fs->policy), flagf);
	if (flagf)
		fclose(flagf);
	if (rc) {
		layer_txn_end(t);
		plan_free(&p);
		free(flagged);
		return rc;
	}
	dropped = join_lines(p.conflicts, p.nconflicts);
	pin_replaced(fs, &p);
	rc = commit_run(fs, &p, txid);	/* commits or ends t */
	if (p.t)
		layer_txn_end(p.t);
	p.t = NULL;
	rc = commit_end(fs, r, &p, rc, &missed);
	if (rc == 0 && (rc = relink_nodes(fs, &p)))
		report(fs, r, rc, "the commit is complete, but the mount could "
		       "not follow it: %s; unmount and mount again\n",
		       strerror(-rc));	/* never "kept" */
	plan_free(&p);
	if (rc) {
		free(flagged);
		free(dropped);
		free(missed);
		return rc;
	}
	flag_text = join_paths(flagged, flen);
	atomic_store(&fs->vetoes_window, 0);
	atomic_store(&fs->vetoes_window_bytes, 0);
	atomic_store(&fs->vetoes_unlogged, 0);
	report(fs, r, 0, "committed transaction %llu: %llu added, %llu "
	       "modified, %llu deleted, %llu renamed%s%s%s\n",
	       (unsigned long long)txid, (unsigned long long)c.added,
	       (unsigned long long)c.modified, (unsigned long long)c.deleted,
	       (unsigned long long)c.renamed,
	       c.flagged ? "; needs review (runs code on the host): " : "",
	       c.flagged && flag_text ? flag_text : "",
	       dropped ? "; forced past conflicts (what each got):" : "");
	if (dropped)
		report_append(fs, r, dropped);
	report_missed(fs, r, missed);
	free(missed);
	if (history_kept(fs)) {
		report_append(fs, r, history_kept(fs));
		report_append(fs, r, "\n");
	}
	audit_commit(fs, txid, &c, flagged, flen);
	free(flag_text);
	free(flagged);
	free(dropped);
	return 0;
}

void txn_history_sync(struct txfs *fs)
{
	pthread_rwlock_wrlock(&fs->txlock);
	/* the record is final and durable only through the pack: a crash
	 * here has the next mount (or txfs recover) write it from the pack
	 * (an injected EIO leaves it to the next commit or the exit) */
	if (!fs->hist_sync[0] || fault_point(fs, "commit") == 0)
		history_sync(fs);
	pthread_rwlock_unlock(&fs->txlock);
}

/* A layer mounted with --salvage is damaged: it is never committed. */
static int refuse_salvage(struct txfs *fs, struct txn_report *r)
{
	report(fs, r, -EROFS, "commit refused: mounted with --salvage (the "
	       "layer is damaged); save what you need, then remove the "
	       "state folder\n");
	return -EROFS;
}

int txn_commit(struct txfs *fs, bool force, struct txn_report *r)
{
	struct inval_list il = { 0 };
	int rc;

	memset(r, 0, sizeof(*r));
	if (fs->opts.salvage)
		return refuse_salvage(fs, r);
	atomic_fetch_add(&fs->verbs, 1);	/* ends the kept plan */
	pthread_rwlock_wrlock(&fs->txlock);
	rc = refuse_pending(fs, r, "commit");
	if (rc == 0)
		rc = commit_locked(fs, force, r, &il);
	pthread_rwlock_unlock(&fs->txlock);
	il_send(fs, &il, false, false);
	if (rc == 0) {
		gc_kick(fs);
		guard_ignored_refresh(fs, true);	/* the real dir changed */
		session_last_closed(fs);
	} else if (!r->text)
		report(fs, r, rc, "commit failed: %s; the staged changes are "
		       "kept\n", strerror(-rc));
	return rc;
}

/* --- rollback and savepoints ---------------------------------------- */

struct sp_names {
	char *buf;	/* "a\0b\0" */
	size_t len;
};

static int sp_load(struct layer_txn *t, struct sp_names *n)
{
	const void *v;
	size_t len;
	int rc = layer_meta_get(t, "savepoints", &v, &len);

	n->buf = NULL;
	n->len = 0;
	if (rc == -ENOENT)
		return 0;
	if (rc)
		return rc;
	n->buf = malloc(len ? len : 1);
	if (!n->buf)
		return -ENOMEM;
	memcpy(n->buf, v, len);
	n->len = len;
	return 0;
}

/* Level (1-based) of the newest savepoint called name, or 0. */
static uint32_t sp_find(const struct sp_names *n, const char *name)
{
	uint32_t level = 0, found = 0;

	for (size_t i = 0; i < n->len; i += strlen(n->buf + i) + 1) {
		level++;
		if (!strcmp(n->buf + i, name))
			found = level;
	}
	return found;
}

/* Keep the first `keep` names. */
static int sp_truncate(struct layer_txn *t, struct sp_names *n, uint32_t keep)
{
	size_t i = 0;

	for (uint32_t l = 0; l < keep && i < n->len; l++)
		i += strlen(n->buf + i) + 1;
	return i ? layer_meta_put(t, "savepoints", n->buf, i) :
		   layer_meta_del(t, "savepoints");
}

static int rollback_all(struct txfs *fs, struct txn_report *r,
			struct inval_list *il)
{
	struct layer_txn *t;
	uint64_t txid;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	txid = txn_cur_id(t);
	if ((rc = il_collect(fs, t, il)) ||
	    (rc = layer_new_generation(t)) ||
	    (rc = layer_meta_del(t, "savepoints")) ||
	    (rc = layer_meta_put_u64(t, "txid", txid + 1))) {
		layer_txn_end(t);
		return rc;
	}
	/* not synced: a rollback survives the death of the daemon (the
	 * page cache keeps it); a sync would first flush every staged byte
	 * and make rollback as slow as the layer is big */
	if ((rc = layer_commit(t)))
		return rc;
	report(fs, r, 0, "rolled back transaction %llu: every staged change "
	       "was discarded; the workspace is as it was\n",
	       (unsigned long long)txid);
	audit(fs, "rollback", "{s:I}", "txid", (json_int_t)txid);
	atomic_store(&fs->vetoes_window, 0);
	atomic_store(&fs->vetoes_window_bytes, 0);
	atomic_store(&fs->vetoes_unlogged, 0);
	return 0;
}

static int rollback_to(struct txfs *fs, const char *name,
		       struct txn_report *r, struct inval_list *il)
{
	struct layer_txn *t;
	struct sp_names n;
	uint32_t level;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	if ((rc = sp_load(t, &n)))
		goto out;
	level = sp_find(&n, name);
	if (!level) {
		rc = -ENOENT;
		report(fs, r, rc, "rollback %s: no such savepoint\n", name);
		goto out;
	}
	if ((rc = il_collect(fs, t, il)) ||
	    (rc = layer_sp_rollback(t, level)) ||
	    (rc = il_collect(fs, t, il)) ||
	    (rc = sp_truncate(t, &n, level)))
		goto out;
	rc = layer_commit(t);	/* not synced: see rollback_all */
	t = NULL;
	if (rc == 0) {
		report(fs, r, 0, "rolled back to savepoint %s: the changes "
		       "made since it were discarded\n", name);
		audit_name(fs, "rollback", "savepoint", name, 0);
	}
out:
	free(n.buf);
	layer_txn_end(t);
	return rc;
}

/*
 * The files whose cached pages may hold stores made through a shared
 * mapping and not written back yet, among those that outlive a rollback
 * (full: skip those made in the layer, whose objects go away and whose
 * late write-backs fail): the files open for writing (a mapping holds its
 * file's handle until the last munmap and close; a closed file's dirty
 * pages were written back at its close), or under -o noopen the marked
 * ones (itab_wmap).
 */
static int mapped_files(struct txfs *fs, bool full, uint64_t **ids, size_t *n)
{
	return fs->opts.noopen ? itab_wmapped(fs, full, ids, n) :
				 file_write_nodes(fs, ids, n);
}

static void inval_pages(struct txfs *fs, const uint64_t *ids, size_t n)
{
	for (size_t i = 0; i < n; i++)
		inval_inode(fs, ids[i], true);
	inval_flush(fs);
}

/* Before a savepoint: the kernel writes those pages back now (an
 * invalidation writes dirty pages back first: launder), so that a store
 * made before the savepoint lands before it and a rollback to it keeps
 * it. */
static void flush_mapped(struct txfs *fs)
{
	uint64_t *ids = NULL;
	size_t n = 0;

	if (mapped_files(fs, false, &ids, &n) == 0 && n)
		inval_pages(fs, ids, n);
	free(ids);
}

/*
 * A rollback and those pages. A store made before the rollback and not
 * written back, or a page a mapping faulted in from the transaction just
 * before it was discarded (and then stored into), must not be written back
 * after it: that brought changes of the discarded transaction back (found
 * by tests and two attacks, 2026-11-27). So, under txlock and only once
 * nothing refuses the rollback: mark the files (their write-backs are
 * dropped, op_write, which looks under txlock too), discard; after it,
 * invalidate their pages (the kernel writes the dirty ones back first,
 * dropped, and unmaps them: the next access reads the file as the
 * rollback left it), unmark, and invalidate once more (a write-back the
 * kernel made on its own while the mark was on left a clean page of
 * dropped bytes). A rollback that is refused or fails unmarks before it
 * lets go of txlock: no write-back is dropped and nothing is lost. A
 * store made while the rollback runs lands on either side of it, as a
 * write(2) racing it does; write(2) itself is never dropped.
 */
static int rollback_pages(struct txfs *fs, bool full, uint64_t **ids,
			  size_t *n)
{
	int rc = mapped_files(fs, full, ids, n);

	if (rc == 0 && *n)
		itab_drop_set(fs, *ids, *n, true);
	return rc;
}

static void rollback_pages_done(struct txfs *fs, uint64_t *ids, size_t n)
{
	if (n) {
		inval_pages(fs, ids, n);
		itab_drop_set(fs, ids, n, false);
		inval_pages(fs, ids, n);
	}
	free(ids);
}

int txn_rollback(struct txfs *fs, const char *savepoint, struct txn_report *r)
{
	struct inval_list il = { 0 };
	uint64_t *ids = NULL;
	size_t nids = 0;
	int rc;

	memset(r, 0, sizeof(*r));
	atomic_fetch_add(&fs->verbs, 1);	/* ends the kept plan */
	pthread_rwlock_wrlock(&fs->txlock);
	rc = refuse_pending(fs, r, "rollback");
	if (rc == 0)
		rc = rollback_pages(fs, !savepoint, &ids, &nids);
	if (rc == 0)
		rc = savepoint ? rollback_to(fs, savepoint, r, &il) :
				 rollback_all(fs, r, &il);
	if (rc && nids) {	/* nothing rolled back: nothing dropped */
		itab_drop_set(fs, ids, nids, false);
		nids = 0;
	}
	pthread_rwlock_unlock(&fs->txlock);
	il_send(fs, &il, true, !savepoint);
	rollback_pages_done(fs, ids, nids);
	if (rc == 0 && !savepoint) {
		gc_kick(fs);
		session_last_mark(fs, 0, "discarded");
	} else if (rc == 0 && strncmp(savepoint, "cmd-", 4)) {
		/* back past the last command's savepoint: it is undone */
		session_last_mark(fs, UINT64_MAX, "undone");
	}
	if (rc && !r->text)
		report(fs, r, rc, "rollback failed: %s\n", strerror(-rc));
	return rc;
}

static bool sp_name_ok(const char *name)
{
	if (!name[0] || strlen(name) > 200)
		return false;
	for (const char *c = name; *c; c++)
		if (*c <= ' ' || *c == 0x7f)
			return false;
	return true;
}

int txn_savepoint(struct txfs *fs, const char *name, struct txn_report *r)
{
	struct layer_txn *t;
	struct sp_names n = { 0 };
	uint32_t level;
	char *buf = NULL;
	int rc;

	memset(r, 0, sizeof(*r));
	if (!sp_name_ok(name)) {
		report(fs, r, -EINVAL, "savepoint: a name is one word\n");
		return -EINVAL;
	}
	/* a store through a mapping made before the savepoint lands before
	 * it, so that a rollback to it keeps the store (flush_mapped) */
	flush_mapped(fs);
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if ((rc = sp_load(t, &n)) || (rc = layer_sp_push(t, &level)))
		goto out;
	buf = malloc(n.len + strlen(name) + 1);
	if (!buf) {
		rc = -ENOMEM;
		goto out;
	}
	if (n.len)
		memcpy(buf, n.buf, n.len);
	memcpy(buf + n.len, name, strlen(name) + 1);
	if ((rc = layer_meta_put(t, "savepoints", buf,
				 n.len + strlen(name) + 1)))
		goto out;
	rc = layer_commit(t);
	t = NULL;
	if (rc == 0) {
		report(fs, r, 0, "savepoint %s taken (level %u)\n", name, level);
		audit_name(fs, "savepoint", "name", name, level);
	}
out:
	free(buf);
	free(n.buf);
	layer_txn_end(t);
	if (rc && !r->text)
		report(fs, r, rc, "savepoint failed: %s\n", strerror(-rc));
	return rc;
}

int txn_release(struct txfs *fs, const char *name, struct txn_report *r)
{
	struct layer_txn *t;
	struct sp_names n = { 0 };
	uint32_t level;
	bool changed = false;
	int rc;

	memset(r, 0, sizeof(*r));
	atomic_fetch_add(&fs->verbs, 1);	/* ends the kept plan */
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if ((rc = sp_load(t, &n)))
		goto out;
	level = sp_find(&n, name);
	if (!level) {
		rc = -ENOENT;
		report(fs, r, rc, "release %s: no such savepoint\n", name);
		goto out;
	}
	if ((rc = layer_sp_changed(t, level, &changed)) ||
	    (rc = layer_sp_release(t, level)) ||
	    (rc = sp_truncate(t, &n, level - 1)))
		goto out;
	rc = layer_commit(t);
	t = NULL;
	if (rc == 0)
		report(fs, r, 0, changed ? "savepoint %s released; its changes "
		       "are kept\n" : "savepoint %s released; nothing had "
		       "changed since it\n", name);
out:
	free(n.buf);
	layer_txn_end(t);
	if (rc && !r->text)
		report(fs, r, rc, "release failed: %s\n", strerror(-rc));
	return rc;
}

/* --- the control verbs ---------------------------------------------- */

/* The line of the `control deny` rule naming verb (for the log). */
static unsigned control_line(const struct policy *pol, const char *verb)
{
	const char *t = policy_text(pol);
	unsigned line = 1;

	for (const char *l = t; l && *l; line++) {
		const char *e = strchr(l, '\n');
		size_t n = e ? (size_t)(e - l) : strlen(l);
		char buf[512];
		char w1[32], w2[32];

		char *hash, *save = NULL;

		snprintf(buf, sizeof(buf), "%.*s", (int)(n < 511 ? n : 511), l);
		if ((hash = strchr(buf, '#')))
			*hash = '\0';
		if (sscanf(buf, "%31s %31s", w1, w2) == 2 &&
		    !strcmp(w1, "control") && !strcmp(w2, "deny")) {
			char *rest = strstr(buf, "deny") + 4;

			for (char *w = strtok_r(rest, " \t,", &save); w;
			     w = strtok_r(NULL, " \t,", &save))
				if (!strcmp(w, verb))
					return line;
		}
		l = e ? e + 1 : NULL;
	}
	return 0;
}

void txn_refuse(struct txfs *fs, const char *line, const struct req_ctx *c,
		const char *why, struct txn_report *r)
{
	struct policy_verdict v = { .action = POLICY_DENY };
	struct audit_caller who = { .pid = c ? c->pid : 0,
				    .uid = c ? c->uid : 0 };

	memset(r, 0, sizeof(*r));
	report(fs, r, -EPERM, "%s: refused: %s\n", line, why);
	atomic_fetch_add(&fs->vetoes, 1);
	if (fs->audit)
		audit_veto(fs->audit, "control", line, &v, EPERM, &who);
}

int txn_command(struct txfs *fs, const char *line, const struct req_ctx *c,
		struct txn_report *r)
{
	bool from_mount = c != NULL;
	char verb[32] = "", arg[256] = "", extra[8] = "";
	const struct policy *pol = atomic_load(&fs->policy);
	int n = sscanf(line, "%31s %255s %7s", verb, arg, extra);

	memset(r, 0, sizeof(*r));
	if (n < 1 || n > 2) {
		report(fs, r, -EINVAL, "unknown command: write one of commit, "
		       "rollback, savepoint NAME, rollback NAME, release NAME\n");
		return -EINVAL;
	}
	if (from_mount && pol && policy_control_denied(pol, verb)) {
		struct policy_verdict v = { .action = POLICY_DENY,
					    .file = policy_name(pol),
					    .line = control_line(pol, verb) };
		struct audit_caller who = { .pid = c->pid, .uid = c->uid };

		report(fs, r, -EPERM, "%s: refused by the policy (control deny "
		       "%s); only the txfs command may do it\n", verb, verb);
		atomic_fetch_add(&fs->vetoes, 1);
		if (fs->audit)
			audit_veto(fs->audit, "control", verb, &v, EPERM, &who);
		return -EPERM;
	}
	if (!strcmp(verb, "commit") && n == 1) {
		snprintf(fs->commit_via, sizeof(fs->commit_via),
			 "commit written to .txfs/ctl");
		int rc = txn_commit(fs, false, r);

		txn_history_sync(fs);	/* before the write returns */
		return rc;
	}
	if (!strcmp(verb, "rollback") && n == 1 &&
	    strcmp(line + strspn(line, " \t"), "rollback")) {
		/* "rollback " (an unset $SP) never means "everything" */
		report(fs, r, -EINVAL, "rollback: the savepoint name is empty: "
		       "nothing was rolled back (write `rollback` alone to "
		       "discard every staged change)\n");
		return -EINVAL;
	}
	if (!strcmp(verb, "rollback"))
		return txn_rollback(fs, n == 2 ? arg : NULL, r);
	if (!strcmp(verb, "savepoint") && n == 2)
		return txn_savepoint(fs, arg, r);
	if (!strcmp(verb, "release") && n == 2)
		return txn_release(fs, arg, r);
	report(fs, r, -EINVAL, "unknown command '%s': write one of commit, "
	       "rollback, savepoint NAME, rollback NAME, release NAME\n", line);
	return -EINVAL;
}

/* Paths as the CLI gives them: relative to the mount root; "./", "//"
 * and a trailing "/" do not matter. */
static char *canon_path(const char *in)
{
	char *out = malloc(strlen(in) + 1), *o = out;
	const char *c = in;

	if (!out)
		return NULL;
	while (*c) {
		while (*c == '/')
			c++;
		if (c[0] == '.' && (c[1] == '/' || !c[1])) {
			c++;
			continue;
		}
		if (!*c)
			break;
		if (o != out)
			*o++ = '/';
		while (*c && *c != '/')
			*o++ = *c++;
	}
	*o = '\0';
	return out;
}

static int commit_some(struct txfs *fs, bool force, char **paths, size_t n,
		       struct txn_report *r, struct inval_list *il)
{
	struct layer_txn *t;
	struct plan p;
	uint64_t txid;
	size_t chosen = 0;
	char *missed = NULL, *list;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	txid = txn_cur_id(t);
	rc = plan_build_commit(fs, t, &p, true);
	if (rc == 0 && (rc = plan_select(&p, (const char *const *)paths, n)) ==
			       -ENOENT)
		report(fs, r, rc, "commit: no staged change at the paths "
		       "given\n");
	if (rc == 0 && !force)
		rc = plan_conflicts(&p);
	if (rc == 0)
		rc = plan_check_places(&p, force);
	if (rc == -EBUSY)
		report(fs, r, rc, "commit refused: the real directory changed "
		       "underneath (%s%s); nothing was changed\n",
		       p.conflicts[0], p.nconflicts > 1 ? ", ..." : "");
	if (rc == 0)
		rc = il_collect(fs, t, il);
	if (rc) {
		layer_txn_end(t);
		plan_free(&p);
		return rc;
	}
	for (size_t i = 0; i < p.n; i++)
		chosen += !p.objs[i].skip;
	pin_replaced(fs, &p);
	rc = commit_run(fs, &p, txid);
	if (p.t)
		layer_txn_end(p.t);
	p.t = NULL;
	rc = commit_end(fs, r, &p, rc, &missed);
	if (rc == 0 && (rc = relink_nodes(fs, &p)))
		report(fs, r, rc, "the commit is complete, but the mount could "
		       "not follow it: %s; unmount and mount again\n",
		       strerror(-rc));	/* never "kept" */
	list = rc == 0 && force ? join_lines(p.conflicts, p.nconflicts) : NULL;
	plan_free(&p);
	if (rc == 0) {
		report(fs, r, 0, "committed %zu staged objects at the paths "
		       "given; the rest stays staged (savepoints were "
		       "released)%s\n", chosen, list ? "; forced past "
		       "conflicts, left as the real directory has them: " : "");
		if (list)
			report_append(fs, r, list);
		report_missed(fs, r, missed);
		audit(fs, "commit", "{s:I,s:b,s:I}", "txid", (json_int_t)txid,
		      "partial", 1, "objects", (json_int_t)chosen);
		session_last_closed(fs);	/* savepoints released */
	}
	free(list);
	free(missed);
	return rc;
}

int txn_commit_paths(struct txfs *fs, bool force, const char *const *paths,
		     size_t n, struct txn_report *r)
{
	struct inval_list il = { 0 };
	char **canon = calloc(n ? n : 1, sizeof(*canon));
	int rc = canon ? 0 : -ENOMEM;

	memset(r, 0, sizeof(*r));
	if (fs->opts.salvage) {
		free(canon);
		return refuse_salvage(fs, r);
	}
	for (size_t i = 0; i < n && rc == 0; i++)
		if (!(canon[i] = canon_path(paths[i])))
			rc = -ENOMEM;
	/* "/" ("$DIR/" with DIR unset), "." or "./." names the root: a
	 * commit of everything was not asked for by naming paths; an
	 * absolute path is refused too (paths are the mount root's) */
	for (size_t i = 0; i < n && rc == 0; i++)
		if (paths[i][0] == '/' || !canon[i][0]) {
			rc = -EINVAL;
			report(fs, r, rc, "commit refused: '%s' %s; nothing was "
			       "committed\n", paths[i], paths[i][0] == '/' &&
			       canon[i][0] ? "is absolute: give paths relative "
			       "to the mount's root" : "names the whole "
			       "workspace: commit without paths to commit "
			       "everything");
		}
	if (rc == 0) {
		atomic_fetch_add(&fs->verbs, 1);	/* ends the kept plan */
		pthread_rwlock_wrlock(&fs->txlock);
		rc = refuse_pending(fs, r, "commit");
		if (rc == 0)
			rc = commit_some(fs, force, canon, n, r, &il);
		pthread_rwlock_unlock(&fs->txlock);
		il_send(fs, &il, false, false);
		if (rc == 0)
			guard_ignored_refresh(fs, true);
	}
	for (size_t i = 0; canon && i < n; i++)
		free(canon[i]);
	free(canon);
	if (rc && !r->text)
		report(fs, r, rc, "commit failed: %s; the staged changes are "
		       "kept\n", strerror(-rc));
	return rc;
}
