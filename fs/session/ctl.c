/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl.c - the virtual control folder (.txfs/ by default) at the root:
 * what its files say and what a write to ctl does. Its names, node ids
 * and attributes are ctlns.c's (below the view). Its objects cannot be
 * removed, renamed or written, except `ctl`. A file's text is generated
 * when it is opened (a snapshot) and served with direct I/O, so every
 * open sees fresh contents.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

typedef int (*ctl_gen_fn)(struct txfs *fs, char **buf, size_t *len);

static int gen_readme(struct txfs *fs, char **buf, size_t *len);
static int gen_status(struct txfs *fs, char **buf, size_t *len);
static int gen_status_json(struct txfs *fs, char **buf, size_t *len);
static int gen_policy(struct txfs *fs, char **buf, size_t *len);
static int gen_ctl(struct txfs *fs, char **buf, size_t *len);
static int gen_changes(struct txfs *fs, char **buf, size_t *len);
static int gen_log(struct txfs *fs, char **buf, size_t *len);
static int gen_state(struct txfs *fs, char **buf, size_t *len);

/* What each file says, generated at open (ctlns.c has the names and
 * modes, by the same index). */
static const ctl_gen_fn ctl_gens[NCTL] = {
	[CTL_README] = gen_readme,
	[CTL_STATUS] = gen_status,
	[CTL_STATUS_JSON] = gen_status_json,
	[CTL_POLICY] = gen_policy,
	[CTL_CTL] = gen_ctl,
	[CTL_CHANGES] = gen_changes,
	[CTL_LOG] = gen_log,
	[CTL_STATE] = gen_state,
};

static int gen_text(char **buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int gen_text(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(buf, fmt, ap);
	va_end(ap);
	if (n < 0) {
		*buf = NULL;	/* vasprintf leaves it undefined */
		return -ENOMEM;
	}
	*len = (size_t)n;
	return 0;
}

static int gen_readme(struct txfs *fs, char **buf, size_t *len)
{
	return gen_text(buf, len,
"This folder (%s/) is txfs's control folder. It is not part of your files.\n"
"Every change you make in this workspace is staged; nothing reaches the\n"
"real directory until it is committed.\n"
"\n"
"  cat %s/status          what is staged (status.json: the same as JSON)\n"
"  echo commit > %s/ctl   apply the staged changes to the real directory\n"
"  echo rollback > %s/ctl discard them\n"
"  cat %s/policy          the rules in force (refused operations: EACCES)\n",
			fs->ctl_name, fs->ctl_name, fs->ctl_name, fs->ctl_name,
			fs->ctl_name);
}

/* The status as a JSON object (jansson): paths are bytes, written as the
 * audit log writes them (K, and K_hex with the exact bytes when K is not
 * UTF-8: audit_json_set_bytes); last_command is the stored cmd-end
 * object; ctl_verbs is false under --no-ctl-verbs (txfs mcp then offers
 * no control verb); noopen says whether files open without requests.
 * NULL when out of memory. */
static json_t *status_object(struct txfs *fs, const struct txn_counts *c)
{
	char *last = session_last_json(fs);
	json_t *lc = last ? json_loads(last, 0, NULL) : NULL;
	uint64_t hbytes;
	unsigned hcount;
	json_t *o = json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:I,s:i}",
		"transaction", (json_int_t)c->txid,
		"added", (json_int_t)c->added,
		"modified", (json_int_t)c->modified,
		"deleted", (json_int_t)c->deleted,
		"renamed", (json_int_t)c->renamed,
		"needs_review", (json_int_t)c->flagged,
		"bytes_staged", (json_int_t)c->bytes,
		"savepoints", (json_int_t)c->savepoints,
		"vetoes", (json_int_t)atomic_load(&fs->vetoes),
		"pid", (int)getpid());

	free(last);
	loghide_object(fs, lc);	/* a human's command may name hidden paths */
	if (!o || audit_json_set_bytes(o, "workspace", fs->ws_path) ||
	    audit_json_set_bytes(o, "mountpoint", fs->mnt_path) ||
	    audit_json_set_bytes(o, "state", fs->state_path) ||
	    json_object_set_new(o, "last_command", lc ? lc : json_null()) ||
	    json_object_set_new(o, "ctl_verbs",
				json_boolean(!fs->opts.no_ctl_verbs)) ||
	    json_object_set_new(o, "noopen", json_boolean(fs->opts.noopen))) {
		json_decref(o);
		return NULL;
	}
	if (history_bytes(fs->state_path, &hbytes, &hcount) == 0 &&
	    (json_object_set_new(o, "history_commits", json_integer(hcount)) ||
	     json_object_set_new(o, "history_bytes", json_integer((json_int_t)hbytes)))) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* status.json: status_object() on one line. */
static int status_json(struct txfs *fs, const struct txn_counts *c, FILE *f)
{
	json_t *o = status_object(fs, c);
	int rc = o && !json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER) ?
		 0 : -ENOMEM;

	json_decref(o);
	if (rc == 0)
		fputc('\n', f);
	return rc;
}

/* A path on a line of status: as is, or C-quoted (audit_cquote) when it
 * holds a newline, another control byte, '"', '\' or bytes outside UTF-8. */
static void put_path(FILE *f, const char *what, const char *path)
{
	char *q = audit_cquote(path, NULL);

	fprintf(f, "%s: %s\n", what, q ? q : path);
	free(q);
}

static int status_text(struct txfs *fs, const struct txn_counts *c, FILE *f)
{
	char *note = guard_note(fs);
	uint64_t hbytes;
	unsigned hcount;

	fprintf(f, "transaction %llu: %llu added, %llu modified, "
		"%llu deleted, %llu renamed; %llu need review\n"
		"bytes staged: %llu\nsavepoints: %u\nvetoes: %llu\n",
		(unsigned long long)c->txid, (unsigned long long)c->added,
		(unsigned long long)c->modified,
		(unsigned long long)c->deleted,
		(unsigned long long)c->renamed,
		(unsigned long long)c->flagged,
		(unsigned long long)c->bytes, c->savepoints,
		(unsigned long long)atomic_load(&fs->vetoes));
	put_path(f, "workspace", fs->ws_path);
	put_path(f, "mounted at", fs->mnt_path);
	put_path(f, "state", fs->state_path);
	fprintf(f, "pid: %d\n", (int)getpid());
	if (history_bytes(fs->state_path, &hbytes, &hcount) == 0)
		fprintf(f, "history: %u commits kept, %llu bytes (txfs history, "
			"txfs undo)\n", hcount, (unsigned long long)hbytes);
	if (note)
		fputs(note, f);
	free(note);
	return 0;
}

static int gen_status_any(struct txfs *fs, char **buf, size_t *len,
			  bool json)
{
	struct txn_counts c;
	FILE *f = open_memstream(buf, len);
	int rc;

	if (!f)
		return -ENOMEM;
	rc = txn_summary(fs, &c, NULL);
	if (rc == 0)
		rc = json ? status_json(fs, &c, f) : status_text(fs, &c, f);
	if (fclose(f) && rc == 0)
		rc = -ENOMEM;
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

static int gen_status(struct txfs *fs, char **buf, size_t *len)
{
	return gen_status_any(fs, buf, len, false);
}

static int gen_status_json(struct txfs *fs, char **buf, size_t *len)
{
	return gen_status_any(fs, buf, len, true);
}

static int gen_changes(struct txfs *fs, char **buf, size_t *len)
{
	struct txn_counts c;
	int rc = txn_summary(fs, &c, buf);

	if (rc == 0)
		*len = strlen(*buf);
	return rc;
}

static int gen_log(struct txfs *fs, char **buf, size_t *len)
{
	int rc;

	if (!fs->audit)
		return gen_text(buf, len, "%s", "");
	rc = audit_read(fs->audit, buf, len);
	if (rc == 0 && (rc = loghide_filter(fs, buf, len))) {
		free(*buf);	/* never the log unfiltered */
		*buf = NULL;
	}
	return rc;
}

/* The state folder, one line: how a client finds the control socket
 * without having the whole status computed (it grows with the layer).
 * C-quoted (audit_cquote) when it holds a newline or other odd bytes. */
static int gen_state(struct txfs *fs, char **buf, size_t *len)
{
	char *q = audit_cquote(fs->state_path, NULL);
	int rc = q ? gen_text(buf, len, "%s\n", q) : -ENOMEM;

	free(q);
	return rc;
}

static int gen_policy(struct txfs *fs, char **buf, size_t *len)
{
	const struct policy *p = atomic_load(&fs->policy);

	return gen_text(buf, len, "%s", p ? policy_text(p) : "");
}

static int gen_ctl(struct txfs *fs, char **buf, size_t *len)
{
	char *note = guard_note(fs);	/* outside ctl_lock */
	uint64_t id;
	bool gone;
	int rc;

	pthread_mutex_lock(&fs->ctl_lock);
	id = fs->exec_running;
	pthread_mutex_unlock(&fs->ctl_lock);
	gone = id && !exectree_runs(fs, id);	/* outside ctl_lock too */
	pthread_mutex_lock(&fs->ctl_lock);
	if (gone && fs->exec_running == id)
		rc = gen_text(buf, len, "txfs exec: command %llu: txfs exec "
			      "ended without finishing it (killed?); its "
			      "changes stay staged since savepoint cmd-%llu "
			      "(`txfs diff --command %llu` shows them, `txfs "
			      "rollback MNT --command %llu` discards them)\n%s",
			      (unsigned long long)id, (unsigned long long)id,
			      (unsigned long long)id, (unsigned long long)id,
			      note ? note : "");
	else
		rc = gen_text(buf, len, "%s%s", fs->last_report ?
			      fs->last_report : "no command yet: write commit, "
			      "rollback, savepoint NAME, rollback NAME or release "
			      "NAME to this file\n", note ? note : "");
	pthread_mutex_unlock(&fs->ctl_lock);
	free(note);
	return rc;
}

int ctl_open(struct txfs *fs, uint64_t tino, int flags, char **text,
	     size_t *len)
{
	mode_t mode = ctl_mode(tino);

	*text = NULL;
	*len = 0;
	if (S_ISDIR(mode))
		return -EISDIR;
	if ((flags & O_ACCMODE) != O_RDONLY && !(mode & 0200))
		return -EACCES;
	return ctl_gens[ctl_index(tino)](fs, text, len);
}

/* ---- -o noopen: texts taken at lookup ---- */

struct ctl_snap {
	uint64_t tino;
	char *text;
	size_t len;
	struct ctl_snap *next;
};

int ctl_snap_take(struct txfs *fs, struct tview *v)
{
	struct ctl_snap *s = calloc(1, sizeof(*s));
	int rc;

	if (!s)
		return -ENOMEM;
	rc = ctl_open(fs, v->tino, O_RDONLY, &s->text, &s->len);
	if (rc) {
		free(s->text);
		free(s);
		return rc;
	}
	pthread_mutex_lock(&fs->snap_lock);
	if (++fs->snap_seq >= CTL_SPAN / NCTL)
		fs->snap_seq = 1;	/* 2^39 / 9 lookups: never */
	s->tino = LAYER_INO_VIRT + fs->snap_seq * NCTL + ctl_index(v->tino);
	s->next = fs->snaps;
	fs->snaps = s;
	pthread_mutex_unlock(&fs->snap_lock);
	v->tino = s->tino;
	v->st.st_ino = (ino_t)s->tino;
	v->st.st_size = (off_t)s->len;
	return 0;
}

static void snap_free(struct ctl_snap *s)
{
	free(s->text);
	free(s);
}

/* Under snap_lock. */
static struct ctl_snap **snap_find(struct txfs *fs, uint64_t tino)
{
	struct ctl_snap **pp = &fs->snaps;

	while (*pp && (*pp)->tino != tino)
		pp = &(*pp)->next;
	return pp;
}

size_t ctl_snap_size(struct txfs *fs, uint64_t tino)
{
	struct ctl_snap *s;
	size_t len;

	pthread_mutex_lock(&fs->snap_lock);
	s = *snap_find(fs, tino);
	len = s ? s->len : 0;
	pthread_mutex_unlock(&fs->snap_lock);
	return len;
}

void ctl_snap_read(struct txfs *fs, uint64_t tino, char *buf, size_t size,
		   off_t off, size_t *got)
{
	struct ctl_snap *s;

	*got = 0;
	pthread_mutex_lock(&fs->snap_lock);
	s = *snap_find(fs, tino);
	if (s && off >= 0 && (size_t)off < s->len) {
		*got = s->len - (size_t)off < size ? s->len - (size_t)off :
						      size;
		memcpy(buf, s->text + off, *got);
	}
	pthread_mutex_unlock(&fs->snap_lock);
}

void ctl_snap_forget(struct txfs *fs, uint64_t tino)
{
	struct ctl_snap **pp, *s;

	pthread_mutex_lock(&fs->snap_lock);
	pp = snap_find(fs, tino);
	s = *pp;
	if (s)
		*pp = s->next;
	pthread_mutex_unlock(&fs->snap_lock);
	if (s)
		snap_free(s);
}

void ctl_snap_free_all(struct txfs *fs)
{
	while (fs->snaps) {
		struct ctl_snap *s = fs->snaps;

		fs->snaps = s->next;
		snap_free(s);
	}
}

/* One command a write; trailing newline and blanks are ignored. */
int ctl_write(struct txfs *fs, const struct req_ctx *c, const char *buf,
	      size_t size)
{
	struct txn_report r;
	char line[512];
	size_t n = size;
	int rc;

	/* line ends only: a blank after the verb is kept, so that
	 * "rollback $SP" with SP empty is refused, not a full rollback */
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	if (n == 0)
		return 0;
	if (n >= sizeof(line) || memchr(buf, '\0', n))
		return -EINVAL;
	memcpy(line, buf, n);
	line[n] = '\0';
	if (fs->opts.no_ctl_verbs) {
		/* under txfs run, txfs run decides (after --check) */
		txn_refuse(fs, line, c, "under `txfs run` the transaction is "
			   "committed or rolled back by txfs run when the "
			   "command ends", &r);
		free(r.text);
		return -EPERM;
	}
	if (exectree_has(fs, c ? c->pid : 0)) {
		/* a command of txfs exec: txfs exec ends it (exectree.c) */
		txn_refuse(fs, line, c, "a command run by `txfs exec` may not "
			   "commit, roll back, release or take savepoints: txfs "
			   "exec keeps or rolls back its changes when it ends", &r);
		free(r.text);
		return -EPERM;
	}
	rc = txn_command(fs, line, c, &r);
	free(r.text);
	return rc;
}

int ctl_text(struct txfs *fs, const char *name, bool json, char **buf,
	     size_t *len)
{
	if (!strcmp(name, "status"))
		return gen_status_any(fs, buf, len, json);
	if (!strcmp(name, "changes"))
		return gen_changes(fs, buf, len);
	if (!strcmp(name, "log"))
		return gen_log(fs, buf, len);
	return -EINVAL;
}
