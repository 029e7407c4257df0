/* SPDX-License-Identifier: Apache-2.0 */
/*
 * session.c - one command as one nested transaction inside a mounted
 * session (`txfs exec`), and the session's history. Control-socket verbs
 * (fs/session/sock.c hands every "cmd-*" and "changes-since" request here):
 *
 *   cmd-begin [--argv=] ARGV...
 *                              (with --argv=, each argument after "=", so
 *                              that an empty one is sent too)
 *                              number the command N (meta "cmd_seq", kept
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
 *   cmd-group N PGID           txfs exec started a command of N (or its
 *                              --check) in process group PGID, a child of
 *                              the peer; its processes stay refused ctl
 *                              verbs after txfs exec dies (exectree.c).
 *   cmd-end N EXIT keep|rollback VETOES0
 *                              list what changed since savepoint cmd-N, then
 *                              keep the changes staged or roll back to it,
 *                              log {"event":"cmd-end",...} and answer the
 *                              same object (one JSON line; at most
 *                              CMD_MAX_CHANGES change lines, then
 *                              "changes_total").
 *   changes-since NAME         what changed since savepoint NAME, one
 *                              "K path" line each (K: A M D R, against
 *                              the view at NAME: since.c), as
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
 * What changed since a savepoint (said against the view at the savepoint,
 * not the real directory), and how it is computed without changing
 * anything: since.c.
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
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

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

/* What .txfs/ctl reads after a txfs exec step (the savepoint verbs it
 * runs underneath would otherwise speak for it: "savepoint cmd-1
 * released; its changes are kept" after a command was rolled back). */
static void set_last(struct txfs *fs, const char *fmt, ...)
{
	va_list ap;
	char *text = NULL;

	va_start(ap, fmt);
	if (vasprintf(&text, fmt, ap) < 0)
		text = NULL;
	va_end(ap);
	txn_last_report(fs, text);
}

static int cmd_begin(struct txfs *fs, int cfd, int argc, char **argv,
		     struct txn_report *r)
{
	const struct policy *pol = atomic_load(&fs->policy);
	uint64_t vetoes = atomic_load(&fs->vetoes), id, seq_txid;
	char sp[32], *globs = NULL;
	json_t *ev;
	int globs_rc, prefixed = 0, rc = next_cmd_id(fs, &id, &seq_txid);

	if (rc)
		return rc;
	atomic_store(&fs->vetoes_window, 0);	/* guard.c's flood cap */
	atomic_store(&fs->vetoes_window_bytes, 0);
	atomic_store(&fs->vetoes_unlogged, 0);
	/* its processes may not use .txfs/ctl until cmd-end (exectree.c) */
	rc = exectree_begin(fs, cfd, id);
	if (rc) {
		if (asprintf(&r->text, "cannot tell the command's processes "
			     "apart: %s\n", strerror(-rc)) < 0)
			r->text = NULL;
		return rc;
	}
	snprintf(sp, sizeof(sp), CMD_SP_PREFIX "%llu", (unsigned long long)id);
	rc = txn_savepoint(fs, sp, r);
	free(r->text);
	r->text = NULL;
	if (rc) {
		exectree_end(fs, id);
		return rc;
	}
	bind_plan(fs, sp, seq_txid);
	if (argc > 1 && !strcmp(argv[0], "--argv=")) {
		/* each argument after "=" (cmd_exec.c): an empty one too */
		argc--;
		argv++;
		prefixed = 1;
	}
	set_last(fs, "txfs exec: command %llu running (savepoint %s)\n",
		 (unsigned long long)id, sp);
	pthread_mutex_lock(&fs->ctl_lock);
	fs->exec_running = id;	/* ctl.c: unless txfs exec died since */
	pthread_mutex_unlock(&fs->ctl_lock);
	/* argv is bytes: "argv_hex" keeps an argument that is not UTF-8 */
	ev = json_pack("{s:I,s:[]}", "cmd", (json_int_t)id, "argv");
	for (int i = 0; ev && i < argc; i++)
		if (audit_json_append_bytes(ev, "argv", argv[i] + prefixed))
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
	int rc;

	if (layer_begin(fs->layer, true, &t))
		return 0;
	txid = layer_txn_id(t);
	rc = layer_meta_del(t, "last_cmd_closed");
	if ((rc == 0 || rc == -ENOENT) &&
	    layer_meta_put(t, "last_cmd", json, strlen(json) + 1) == 0)
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

	exectree_end(fs, id);	/* txfs exec has stopped its processes */
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
	set_last(fs, "txfs exec: command %llu %s (exit %d): %zu change%s %s\n",
		 (unsigned long long)id, rc ? "could not be rolled back" :
		 undo ? "rolled back" : "kept", atoi(argv[2]), total,
		 total == 1 ? "" : "s", rc ? "stay staged" : undo ?
		 "discarded" : "staged in the session (commit or roll back "
		 "the session to end it)");
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

		session_last_mark(fs, found, "undone");
		set_last(fs, "txfs exec: commands %llu and later rolled back "
			 "(to savepoint %s): their changes discarded\n",
			 (unsigned long long)found, sp);
		if (ev)
			audit_json(fs, "cmd-rollback", ev);
		json_decref(ev);
	}
	return rc;
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

/* cmd-group ID PGID: txfs exec started a command of id in group PGID
 * (exectree.c: its processes stay known by it after txfs exec dies). */
static int cmd_group(struct txfs *fs, int cfd, char **argv, struct txn_report *r)
{
	char *end;
	unsigned long long id = strtoull(argv[1], &end, 10);
	long pg;
	int rc = *end ? -EINVAL : 0;

	pg = rc ? 0 : strtol(argv[2], &end, 10);
	if (rc == 0 && (*end || pg <= 1 || pg > INT32_MAX))
		rc = -EINVAL;
	if (rc == 0)
		rc = exectree_group(fs, cfd, id, (pid_t)pg);
	if (asprintf(&r->text, rc ? "cmd-group: %s\n" : "%s\n",
		     rc ? strerror(-rc) : argv[2]) < 0)
		r->text = NULL;
	return rc;
}

int session_dispatch(struct txfs *fs, int cfd, int argc, char **argv,
		     struct txn_report *r)
{
	const char *verb = argv[0];

	if (!strcmp(verb, "cmd-begin") && argc >= 2)
		return cmd_begin(fs, cfd, argc - 1, argv + 1, r);
	if (!strcmp(verb, "cmd-group") && argc == 3)
		return cmd_group(fs, cfd, argv, r);
	if (!strcmp(verb, "cmd-end") && argc == 5)
		return cmd_end(fs, argv, r);
	if (!strcmp(verb, "cmd-rollback") && argc == 2)
		return cmd_rollback(fs, argv[1], r);
	if (!strcmp(verb, "control-check") && argc == 2)
		return control_check(fs, argv[1], r);
	if (!strcmp(verb, "changes-since") && argc == 2)
		return since_text(fs, argv[1], false, r);
	if (!strcmp(verb, "cmd-changes") && argc == 2) {
		char sp[64];

		snprintf(sp, sizeof(sp), CMD_SP_PREFIX "%s", argv[1]);
		return since_text(fs, sp, true, r);
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
