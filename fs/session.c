/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.c - one command as one nested transaction inside a mounted
 * session (`txfs exec`), and the session's history. Control-socket verbs
 * (fs/sock.c hands every "cmd-*" and "changes-since" request here):
 *
 *   cmd-begin ARGV...          number the command N (meta "cmd_seq", kept
 *                              across remounts), take savepoint "cmd-N",
 *                              log {"event":"cmd-begin","cmd":N,"argv":[..]}.
 *                              Answers "N VETOES NETWORK GLOBS\n": the
 *                              vetoes counter now, 1 when the policy denies
 *                              the network (the client confines
 *                              accordingly), 1 when the answer lists the
 *                              supervisor's globs; then the policy's
 *                              allow-write folders, one a line (absolute),
 *                              then with GLOBS its `allow connect` globs
 *                              ("c:GLOB") and `exec deny` globs ("x:GLOB"),
 *                              as written, one a line (the client need not
 *                              read and parse .txfs/policy). GLOBS is 0
 *                              when a glob holds a newline: the client
 *                              then reads the policy.
 *   cmd-end N EXIT keep|rollback VETOES0
 *                              list what changed since savepoint cmd-N, then
 *                              keep the changes staged or roll back to it,
 *                              log {"event":"cmd-end",...} and answer the
 *                              same object (one JSON line; at most
 *                              CMD_MAX_CHANGES change lines, then
 *                              "changes_total").
 *   changes-since NAME         what changed since savepoint NAME, one
 *                              "K path" line each (K: A M D R), as
 *                              .txfs/changes writes them (names C-quoted
 *                              when they need it: audit_cquote).
 *   cmd-changes N              what kept command N changed: since cmd-N,
 *                              until the savepoint after it (or now).
 *   cmd-rollback N             undo command N and every later one: roll
 *                              back to the oldest savepoint cmd-M, M >= N.
 *   control-check VERB         EPERM (and a logged veto) when the policy's
 *                              `control deny` names VERB, or the mount has
 *                              --no-ctl-verbs: txfs mcp asks before commit,
 *                              rollback, savepoint, release.
 *
 * The savepoint cmd-N of a command whose changes were kept stays open (it
 * is what cmd-rollback returns to); that of a rolled-back command is
 * released once empty. A commit or a full rollback ends them all.
 *
 * What changed since a savepoint is computed without changing anything: in
 * one LMDB write transaction, plan the staged objects, roll the layer back
 * to the savepoint, plan again, then abort. An object whose record, place
 * or link differs between the two plans changed since the savepoint.
 *
 * cmd-end plans once where it can: the view a kept command ends with is
 * the view at the next command's savepoint when nothing else is committed
 * in between. cmd-end keeps its plan of the view now (fs->cmd_plan) with
 * the id of the layer commit it describes; cmd-begin binds it to its new
 * savepoint cmd-N only when the layer's commit ids show that its own two
 * commits (cmd_seq, the savepoint) were the only ones since; cmd-end N
 * then takes it as the view at cmd-N instead of rolling back and planning
 * again. Anything else committed in between (a file written outside a
 * command, a background clean-up) only means planning twice. Every
 * rollback, release and commit ends the kept plan (txn.c bumps fs->verbs
 * and a plan kept under an older count is dropped when next met), so a
 * savepoint removed and taken again under the same name never meets it.
 * (Both plans also read the real directory: a change made underneath
 * between two commands may show in the next command's list.)
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "txfs.h"
#include "commit.h"

#define CMD_SP_PREFIX "cmd-"
/* Change lines kept in a cmd-end record (the audit log rotates at a few
 * MiB; `txfs diff --command N` lists them all); changes_total says how
 * many there were when cut. */
#define CMD_MAX_CHANGES 1000
/* The largest plan kept between commands (objects; a few hundred bytes
 * each): a bigger layer is planned twice rather than held in memory. */
#define CMD_PLAN_KEEP_MAX 50000

/* Level (1-based) of the newest savepoint called name, or 0. With
 * min_cmd > 0: the level of the oldest "cmd-M" with M >= min_cmd, its M in
 * *found_cmd. */
static uint32_t sp_level_of(struct layer_txn *t, const char *name,
			    uint64_t min_cmd, uint64_t *found_cmd)
{
	const void *v;
	const char *buf;
	size_t len;
	uint32_t level = 0, found = 0;

	if (layer_meta_get(t, "savepoints", &v, &len))
		return 0;
	buf = v;
	for (size_t i = 0; i < len; i += strnlen(buf + i, len - i) + 1) {
		level++;
		if (name && strnlen(buf + i, len - i) == strlen(name) &&
		    !memcmp(buf + i, name, strlen(name)))
			found = level;
		if (!name && !found &&
		    !strncmp(buf + i, CMD_SP_PREFIX, strlen(CMD_SP_PREFIX))) {
			uint64_t m = strtoull(buf + i + 4, NULL, 10);

			if (m >= min_cmd) {
				found = level;
				*found_cmd = m;
			}
		}
	}
	return found;
}

static bool obj_same(const struct cobj *a, const struct cobj *b)
{
	const struct layer_inode *x = &a->rec, *y = &b->rec;

	if (x->mode != y->mode || x->uid != y->uid || x->gid != y->gid ||
	    x->nlink != y->nlink || x->size != y->size ||
	    x->mtime_ns != y->mtime_ns || x->ctime_ns != y->ctime_ns ||
	    x->flags != y->flags || a->nfinals != b->nfinals)
		return false;
	if (a->nfinals && strcmp(a->finals[0], b->finals[0]))
		return false;
	if (!a->link != !b->link || (a->link && strcmp(a->link, b->link)))
		return false;
	return true;
}

/* The change line of o ("M path"), or 0 when o is not a change. */
static char obj_kind(const struct plan *p, const struct cobj *o)
{
	if (o->tino == (uint64_t)p->fs->root_ino || (!o->lower && !o->nfinals))
		return 0;
	if (!o->lower)
		return 'A';
	if (!o->nfinals)
		return 'D';
	if (!o->natural)
		return 'R';
	return S_ISDIR(o->rec.mode) ? 0 : 'M';
}

/* Where change lines go: set["changes"] (bytes, as the audit log writes
 * them: names need not be UTF-8, "changes_hex" keeps them exact) and, when
 * text is not NULL, one line each as .txfs/changes writes them (names
 * C-quoted when needed, so a name with a newline stays one line). */
struct change_sink {
	json_t *set;
	FILE *text;
};

static void put_name(FILE *f, const char *name)
{
	char *q = audit_cquote(name, " -> ");

	fputs(q ? q : name, f);
	free(q);
}

static int add_change(struct change_sink *to, char kind, const char *a,
		      const char *b)
{
	char *line = NULL;
	int rc;

	if (kind == 'R' ? asprintf(&line, "R %s -> %s", a, b) < 0 :
			  asprintf(&line, "%c %s", kind, a) < 0)
		return -ENOMEM;
	rc = audit_json_append_bytes(to->set, "changes", line);
	free(line);
	if (rc || !to->text)
		return rc;
	fprintf(to->text, "%c ", kind);
	if (kind == 'R') {
		put_name(to->text, a);
		fputs(" -> ", to->text);
	}
	put_name(to->text, kind == 'R' ? b : a);
	fputc('\n', to->text);
	return 0;
}

/* Compare the plans: the changes of `after` not in `before`. */
static int diff_plans(struct plan *before, struct plan *after,
		      struct change_sink *list)
{
	int rc = 0;

	for (size_t i = 0; i < after->n && rc == 0; i++) {
		struct cobj *o = &after->objs[i], *b;
		char k = obj_kind(after, o);

		if (!k)
			continue;
		b = plan_obj(before, o->tino);
		if (b && obj_kind(before, b) && obj_same(o, b))
			continue;
		rc = add_change(list, k, k == 'R' ? o->lower :
				o->nfinals ? o->finals[0] : o->lower,
				o->nfinals ? o->finals[0] : "");
	}
	/* staged before, gone now (a new file deleted again, or a change
	 * undone by hand): the savepoint's state had it, the session has not */
	for (size_t i = 0; i < before->n && rc == 0; i++) {
		struct cobj *o = &before->objs[i];
		struct cobj *a = plan_obj(after, o->tino);

		if (obj_kind(before, o) && (!a || !obj_kind(after, a)))
			rc = add_change(list, o->lower ? 'M' : 'D',
					o->nfinals ? o->finals[0] : o->lower,
					"");
	}
	return rc;
}

/* The plans cmd-end shares with changes_since(). */
struct since_plans {
	struct plan *before;	/* in: the view at the savepoint, or NULL */
	struct plan *after;	/* out: the view now, when it was planned */
	uint64_t txid;		/* out: the layer commit the view now is */
};

/* What changed since savepoint `name`: an object whose "changes" array
 * holds the change lines (and "changes_hex" their bytes when one is not
 * UTF-8: audit_json_bytes reads them); with `only`, only until the next
 * savepoint (what one command did). With keep (cmd-end): keep->before,
 * when given, is taken as the view at the savepoint (one plan, not two),
 * and the plan of the view now is handed back in keep->after. */
static int changes_since(struct txfs *fs, const char *name, bool only,
			 json_t **out, FILE *text, struct since_plans *keep)
{
	struct plan before = { 0 }, after = { 0 };
	struct layer_txn *t;
	uint32_t level;
	bool dirty = false;
	json_t *list = json_pack("{s:[]}", "changes");
	struct change_sink sink = { list, text };
	int rc = list ? layer_begin(fs->layer, true, &t) : -ENOMEM;

	if (rc)
		goto out_list;
	level = sp_level_of(t, name, 0, NULL);
	if (!level) {
		rc = -ENOENT;
		goto out_txn;
	}
	if (keep)	/* a write transaction: the next commit's id */
		keep->txid = layer_txn_id(t) - 1;
	/* nothing recorded since the savepoint: no plans (the common case
	 * of a command that only reads costs nothing whatever the layer) */
	if ((rc = layer_sp_changed(t, level, &dirty)) || !dirty)
		goto out_txn;
	if (only && level < layer_sp_level(t) &&
	    (rc = layer_sp_rollback(t, level + 1)))
		goto out_txn;
	if ((rc = plan_view(fs, t, &after)))
		goto out_plans;
	if (keep && keep->before) {
		rc = diff_plans(keep->before, &after, &sink);
	} else {
		if ((rc = layer_sp_rollback(t, level)) ||
		    (rc = plan_view(fs, t, &before)))
			goto out_plans;
		rc = diff_plans(&before, &after, &sink);
	}
	if (rc == 0 && keep && (keep->after = malloc(sizeof(after)))) {
		*keep->after = after;
		memset(&after, 0, sizeof(after));
	}
out_plans:
	plan_free(&before);
	plan_free(&after);
out_txn:
	layer_txn_end(t);	/* aborted: nothing was rolled back */
out_list:
	if (rc)
		json_decref(list);
	else
		*out = list;
	return rc;
}

/* --- the view kept for the next cmd-end (see the top of the file) -- */

static void plan_drop(struct plan *p)
{
	if (p)
		plan_free(p);
	free(p);
}

void session_forget(struct txfs *fs)
{
	struct plan *p;

	pthread_mutex_lock(&fs->ctl_lock);
	p = fs->cmd_plan;
	fs->cmd_plan = NULL;
	pthread_mutex_unlock(&fs->ctl_lock);
	plan_drop(p);
}

/* Keep p (owned from now on), the view as of layer commit txid. */
static void keep_plan(struct txfs *fs, struct plan *p, uint64_t txid)
{
	struct plan *old;

	pthread_mutex_lock(&fs->ctl_lock);
	old = fs->cmd_plan;
	fs->cmd_plan = p;
	fs->cmd_plan_sp[0] = '\0';
	fs->cmd_plan_txid = txid;
	fs->cmd_plan_verbs = atomic_load(&fs->verbs);
	pthread_mutex_unlock(&fs->ctl_lock);
	plan_drop(old);
}

/* Savepoint sp was just taken, by the commit after the one with id
 * seq_txid (cmd_seq's): the kept view is the view at sp when it was the
 * last commit before seq_txid and sp's the last of all. Else drop it. */
static void bind_plan(struct txfs *fs, const char *sp, uint64_t seq_txid)
{
	struct layer_txn *t;
	uint64_t last = 0;
	struct plan *drop = NULL;

	if (layer_begin(fs->layer, false, &t) == 0) {
		last = layer_txn_id(t);
		layer_txn_end(t);
	}
	pthread_mutex_lock(&fs->ctl_lock);
	if (fs->cmd_plan && !fs->cmd_plan_sp[0] &&
	    fs->cmd_plan_verbs == atomic_load(&fs->verbs) &&
	    fs->cmd_plan_txid + 1 == seq_txid && last == seq_txid + 1) {
		snprintf(fs->cmd_plan_sp, sizeof(fs->cmd_plan_sp), "%s", sp);
	} else {
		drop = fs->cmd_plan;
		fs->cmd_plan = NULL;
	}
	pthread_mutex_unlock(&fs->ctl_lock);
	plan_drop(drop);
}

/* The kept view if it is the view at savepoint sp (the caller owns it). */
static struct plan *take_plan(struct txfs *fs, const char *sp)
{
	struct plan *p;

	pthread_mutex_lock(&fs->ctl_lock);
	p = fs->cmd_plan;
	fs->cmd_plan = NULL;
	if (p && (strcmp(fs->cmd_plan_sp, sp) ||
		  fs->cmd_plan_verbs != atomic_load(&fs->verbs))) {
		pthread_mutex_unlock(&fs->ctl_lock);
		plan_drop(p);
		return NULL;
	}
	pthread_mutex_unlock(&fs->ctl_lock);
	return p;
}

/* Log event with the members of obj (the object is not consumed). */
static void audit_json(struct txfs *fs, const char *event, json_t *obj)
{
	audit_record(fs->audit, event, obj, NULL);
}

/* The next command number (meta "cmd_seq"); *txid: the id it was
 * committed with. */
static int next_cmd_id(struct txfs *fs, uint64_t *id, uint64_t *txid)
{
	struct layer_txn *t;
	uint64_t n = 0;
	int rc = layer_begin(fs->layer, true, &t);

	if (rc)
		return rc;
	*txid = layer_txn_id(t);
	layer_meta_get_u64(t, "cmd_seq", &n);
	*id = n + 1;
	rc = layer_meta_put_u64(t, "cmd_seq", n + 1);
	if (rc == 0)
		return layer_commit(t);
	layer_txn_end(t);
	return rc;
}

/* The policy's allow-write folders, one a line after the first. */
static int add_allow_write(const struct policy *pol, struct txn_report *r)
{
	char **paths = NULL, *text;
	size_t n = 0;
	int rc = pol ? policy_allow_write(pol, getenv("HOME"), &paths, &n) : 0;

	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (asprintf(&text, "%s%s\n", r->text, paths[i]) < 0) {
			rc = -ENOMEM;
			break;
		}
		free(r->text);
		r->text = text;
	}
	policy_allow_write_free(paths, n);
	return rc;
}

/* Append one line to *text (malloc'd). 0 or -ENOMEM. */
static int add_line(char **text, const char *prefix, const char *line)
{
	char *t;

	if (asprintf(&t, "%s%s%s\n", *text ? *text : "", prefix, line) < 0)
		return -ENOMEM;
	free(*text);
	*text = t;
	return 0;
}

/* The policy's `allow connect` and `exec deny` globs as "c:" and "x:"
 * lines into *text; -EINVAL when one holds a newline (not sendable). */
static int sup_globs(const struct policy *pol, char **text)
{
	const char *const *g;
	char **c = NULL;
	size_t nc = 0, nx = pol ? policy_exec_globs(pol, &g) : 0;
	int rc = pol ? policy_connect_globs(pol, &c, &nc) : 0;

	*text = NULL;
	for (size_t i = 0; rc == 0 && i < nc; i++)
		rc = strchr(c[i], '\n') ? -EINVAL : add_line(text, "c:", c[i]);
	for (size_t i = 0; rc == 0 && i < nx; i++)
		rc = strchr(g[i], '\n') ? -EINVAL : add_line(text, "x:", g[i]);
	policy_connect_free(c, nc);
	if (rc) {
		free(*text);
		*text = NULL;
	}
	return rc;
}

static int cmd_begin(struct txfs *fs, int argc, char **argv,
		     struct txn_report *r)
{
	const struct policy *pol = atomic_load(&fs->policy);
	uint64_t vetoes = atomic_load(&fs->vetoes), id, seq_txid;
	char sp[32], *globs = NULL;
	json_t *ev;
	int globs_rc, rc = next_cmd_id(fs, &id, &seq_txid);

	if (rc)
		return rc;
	snprintf(sp, sizeof(sp), CMD_SP_PREFIX "%llu", (unsigned long long)id);
	rc = txn_savepoint(fs, sp, r);
	free(r->text);
	r->text = NULL;
	if (rc)
		return rc;
	bind_plan(fs, sp, seq_txid);
	/* argv is bytes: "argv_hex" keeps an argument that is not UTF-8 */
	ev = json_pack("{s:I,s:[]}", "cmd", (json_int_t)id, "argv");
	for (int i = 0; ev && i < argc; i++)
		if (audit_json_append_bytes(ev, "argv", argv[i]))
			break;
	if (ev && !json_object_set_new(ev, "savepoint", json_string(sp)))
		audit_json(fs, "cmd-begin", ev);
	json_decref(ev);
	globs_rc = sup_globs(pol, &globs);
	if (globs_rc == -ENOMEM)
		return -ENOMEM;
	if (asprintf(&r->text, "%llu %llu %d %d\n", (unsigned long long)id,
		     (unsigned long long)vetoes,
		     pol && policy_network_denied(pol), globs_rc == 0) < 0) {
		free(globs);
		return -ENOMEM;
	}
	rc = add_allow_write(pol, r);
	if (rc == 0 && globs) {
		char *t;

		if (asprintf(&t, "%s%s", r->text, globs) < 0)
			rc = -ENOMEM;
		else {
			free(r->text);
			r->text = t;
		}
	}
	free(globs);
	return rc;
}

/* Keep the first max change lines of set (and their "changes_hex");
 * returns how many there were. */
static size_t cut_changes(json_t *set, size_t max)
{
	json_t *ch = json_object_get(set, "changes");
	json_t *hex = json_object_get(set, "changes_hex");
	size_t total = json_array_size(ch);

	while (json_array_size(ch) > max)
		json_array_remove(ch, json_array_size(ch) - 1);
	while (json_array_size(hex) > max)
		json_array_remove(hex, json_array_size(hex) - 1);
	return total;
}

/* Keep the last command's summary for status --json (meta "last_cmd").
 * Returns the id it was committed with, or 0. */
static uint64_t store_last(struct txfs *fs, const char *json)
{
	struct layer_txn *t;
	uint64_t txid;

	if (layer_begin(fs->layer, true, &t))
		return 0;
	txid = layer_txn_id(t);
	if (layer_meta_put(t, "last_cmd", json, strlen(json) + 1) == 0)
		return layer_commit(t) == 0 ? txid : 0;
	layer_txn_end(t);
	return 0;
}

static int cmd_end(struct txfs *fs, char **argv, struct txn_report *r)
{
	uint64_t id = strtoull(argv[1], NULL, 10);
	uint64_t v0 = strtoull(argv[4], NULL, 10);
	bool undo = !strcmp(argv[3], "rollback");
	struct txn_report sub = { 0 };
	struct since_plans keep = { 0 };
	json_t *changes = NULL, *ev;
	char sp[32], *s;
	uint64_t txid;
	size_t total;
	int rc;

	snprintf(sp, sizeof(sp), CMD_SP_PREFIX "%llu", (unsigned long long)id);
	keep.before = take_plan(fs, sp);
	rc = changes_since(fs, sp, false, &changes, NULL, &keep);
	if (rc || undo) {
		plan_drop(keep.before);
		plan_drop(keep.after);
		keep.before = keep.after = NULL;
	} else if (keep.after) {
		plan_drop(keep.before);	/* the view now: keep.after */
	} else {
		keep.after = keep.before;	/* unchanged since sp */
	}
	if (rc)
		return rc;
	if (undo) {
		rc = txn_rollback(fs, sp, &sub);
		free(sub.text);
		if (rc == 0)
			rc = txn_release(fs, sp, &sub);	/* empty now */
		free(sub.text);
	}
	total = cut_changes(changes, CMD_MAX_CHANGES);
	ev = json_pack("{s:I,s:s,s:i,s:s}", "cmd", (json_int_t)id,
		       "savepoint", sp, "exit", atoi(argv[2]),
		       "outcome", rc ? "rollback-failed" :
		       undo ? "rolled-back" : "kept");
	/* "changes" (and "changes_hex") move over, then "vetoes" */
	if (!ev || json_object_update(ev, changes) ||
	    json_object_set_new(ev, "vetoes", json_integer((json_int_t)(
			atomic_load(&fs->vetoes) - v0)))) {
		json_decref(ev);
		json_decref(changes);
		return -ENOMEM;
	}
	json_decref(changes);
	if (total > CMD_MAX_CHANGES)
		json_object_set_new(ev, "changes_total",
				    json_integer((json_int_t)total));
	audit_json(fs, "cmd-end", ev);
	s = json_dumps(ev, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(ev);
	if (!s) {
		plan_drop(keep.after);
		return -ENOMEM;
	}
	txid = store_last(fs, s);
	/* the view now is the next command's savepoint's if nothing but
	 * store_last was committed since it was planned */
	if (keep.after && txid && txid == keep.txid + 1 &&
	    keep.after->n <= CMD_PLAN_KEEP_MAX)
		keep_plan(fs, keep.after, txid);
	else
		plan_drop(keep.after);
	if (asprintf(&r->text, "%s\n", s) < 0)
		r->text = NULL;
	free(s);
	return rc;
}

static int cmd_rollback(struct txfs *fs, const char *arg,
			struct txn_report *r)
{
	uint64_t n = strtoull(arg, NULL, 10), found = 0;
	struct txn_report sub = { 0 };
	struct layer_txn *t;
	char sp[32];
	int rc = layer_begin(fs->layer, false, &t);

	if (rc)
		return rc;
	sp_level_of(t, NULL, n ? n : 1, &found);
	layer_txn_end(t);
	if (!found) {
		if (asprintf(&r->text, "command %llu: nothing to undo: no "
			     "command from %llu on is kept in the open "
			     "transaction (rolled back, undone or committed)\n",
			     (unsigned long long)n,
			     (unsigned long long)n) < 0)
			r->text = NULL;
		return -ENOENT;
	}
	snprintf(sp, sizeof(sp), CMD_SP_PREFIX "%llu",
		 (unsigned long long)found);
	rc = txn_rollback(fs, sp, &sub);
	free(sub.text);
	if (rc == 0)
		rc = txn_release(fs, sp, &sub);
	free(sub.text);
	if (rc == 0 && asprintf(&r->text, "rolled back commands %llu and "
				"later (to savepoint %s)\n",
				(unsigned long long)n, sp) < 0)
		r->text = NULL;
	if (rc == 0) {
		json_t *ev = json_pack("{s:I,s:s}", "cmd", (json_int_t)n,
				       "savepoint", sp);

		if (ev)
			audit_json(fs, "cmd-rollback", ev);
		json_decref(ev);
	}
	return rc;
}

static int since(struct txfs *fs, const char *name, bool only,
		 struct txn_report *r)
{
	json_t *list = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	if (!f)
		return -ENOMEM;
	rc = changes_since(fs, name, only, &list, f, NULL);
	fclose(f);
	json_decref(list);
	if (rc) {
		free(buf);
		if (rc == -ENOENT &&
		    asprintf(&r->text, "no savepoint %s\n", name) < 0)
			r->text = NULL;
		return rc;
	}
	r->text = buf;
	return 0;
}

/* May an agent's tool (txfs mcp) use control verb `verb`? Not under
 * --no-ctl-verbs; else the policy's `control deny` decides, as for
 * .txfs/ctl; a refusal is a logged veto. */
static int control_check(struct txfs *fs, const char *verb,
			 struct txn_report *r)
{
	const struct policy *pol = atomic_load(&fs->policy);
	char why[128];

	if (fs->opts.no_ctl_verbs)
		snprintf(why, sizeof(why), "the mount refuses control verbs "
			 "to agents (--no-ctl-verbs)");
	else if (!pol || !policy_control_denied(pol, verb))
		return 0;
	else
		snprintf(why, sizeof(why), "the policy denies it (control "
			 "deny %s); only the txfs command may do it", verb);
	txn_refuse(fs, verb, NULL, why, r);
	return -EPERM;
}

int session_dispatch(struct txfs *fs, int argc, char **argv,
		     struct txn_report *r)
{
	const char *verb = argv[0];

	if (!strcmp(verb, "cmd-begin") && argc >= 2)
		return cmd_begin(fs, argc - 1, argv + 1, r);
	if (!strcmp(verb, "cmd-end") && argc == 5)
		return cmd_end(fs, argv, r);
	if (!strcmp(verb, "cmd-rollback") && argc == 2)
		return cmd_rollback(fs, argv[1], r);
	if (!strcmp(verb, "control-check") && argc == 2)
		return control_check(fs, argv[1], r);
	if (!strcmp(verb, "changes-since") && argc == 2)
		return since(fs, argv[1], false, r);
	if (!strcmp(verb, "cmd-changes") && argc == 2) {
		char sp[64];

		snprintf(sp, sizeof(sp), CMD_SP_PREFIX "%s", argv[1]);
		return since(fs, sp, true, r);
	}
	if (asprintf(&r->text, "bad request '%s'\n", verb) < 0)
		r->text = NULL;
	return -EINVAL;
}

/* The last command's summary (one JSON object) or NULL. */
char *session_last_json(struct txfs *fs)
{
	struct layer_txn *t;
	const void *v;
	size_t len;
	char *s = NULL;

	if (layer_begin(fs->layer, false, &t))
		return NULL;
	if (layer_meta_get(t, "last_cmd", &v, &len) == 0 && len &&
	    ((const char *)v)[len - 1] == '\0')
		s = strdup(v);
	layer_txn_end(t);
	return s;
}
