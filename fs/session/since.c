/* SPDX-License-Identifier: Apache-2.0 */
/*
 * since.c - what changed since a savepoint, and a file as it was then:
 * the "changes-since NAME" and "cmd-changes N" lists (session.c), txfs
 * exec's per-command report (cmd-end), and "sp-read" (sock.c), the
 * content of a path at a savepoint, for txfs diff --since / --command.
 *
 * A change since a savepoint is said against the view at the savepoint,
 * not against the real directory: "A p" p did not exist then, "D p" it
 * did and is gone, "M p" it is the same object at the same path (or a file
 * replaced by rename: chg_pair, changes.c) with new content or
 * attributes, "R old -> new" the object has another path. So a file
 * created by an earlier command and appended to by this one is "M", a
 * file created earlier and renamed now "R", one created earlier and
 * deleted now "D", and txfs diff --since diffs each against its content
 * at the savepoint (sp-read), which gives a patch from the tree at the
 * savepoint to the tree now.
 *
 * How, without changing anything: in one LMDB write transaction, plan the
 * staged objects, roll the layer back to the savepoint, plan again, then
 * abort. An object whose record, places or link differ between the two
 * plans changed since the savepoint; its path in each view is its first
 * final path there, or, for a real object a plan does not hold, its real
 * path moved with the real folders that plan moves.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

/* Level (1-based) of the newest savepoint called name, or 0. */
static uint32_t sp_level(struct layer_txn *t, const char *name)
{
	const void *v;
	const char *buf;
	size_t len, nl = strlen(name);
	uint32_t level = 0, found = 0;

	if (layer_meta_get(t, "savepoints", &v, &len))
		return 0;
	buf = v;
	for (size_t i = 0; i < len; i += strnlen(buf + i, len - i) + 1) {
		level++;
		if (strnlen(buf + i, len - i) == nl && !memcmp(buf + i, name, nl))
			found = level;
	}
	return found;
}

static bool finals_same(const struct cobj *a, const struct cobj *b)
{
	if (a->nfinals != b->nfinals)
		return false;
	for (size_t i = 0; i < a->nfinals; i++)
		if (strcmp(a->finals[i], b->finals[i]))
			return false;
	return true;
}

static bool obj_same(const struct cobj *a, const struct cobj *b)
{
	const struct layer_inode *x = &a->rec, *y = &b->rec;

	if (x->mode != y->mode || x->uid != y->uid || x->gid != y->gid ||
	    x->nlink != y->nlink || x->size != y->size ||
	    x->mtime_ns != y->mtime_ns || x->ctime_ns != y->ctime_ns ||
	    x->flags != y->flags || !finals_same(a, b))
		return false;
	if (!a->link != !b->link || (a->link && strcmp(a->link, b->link)))
		return false;
	return true;
}

/* The path of an object in view v: its first final path when the plan
 * holds it (o, may be NULL); else where its real path is in that view
 * (chg_view_path). *err on ENOMEM. */
static const char *path_in(const struct chg_view *v, const struct cobj *o,
			   const char *lower, struct chg_list *l, int *err)
{
	if (o)
		return o->nfinals ? o->finals[0] : NULL;
	return lower ? chg_view_path(v, lower, l, err) : NULL;
}

static bool has_final(const struct cobj *o, const char *path)
{
	for (size_t i = 0; o && i < o->nfinals; i++)
		if (!strcmp(o->finals[i], path))
			return true;
	return false;
}

/* The change of one object between view b (object ob, or NULL) and view
 * a (oa, or NULL). */
static int obj_change(struct txfs *fs, struct chg_list *l,
		      const struct chg_view *b, const struct cobj *ob,
		      const struct chg_view *a, const struct cobj *oa)
{
	const struct cobj *o = oa ? oa : ob;
	mode_t t = o->rec.mode & S_IFMT;
	const char *bp, *ap;
	int rc = 0;

	if (o->tino == (uint64_t)fs->root_ino ||
	    (oa && ob && obj_same(oa, ob)))
		return 0;
	bp = path_in(b, ob, o->lower, l, &rc);
	ap = rc ? NULL : path_in(a, oa, o->lower, l, &rc);
	if (rc || (!bp && !ap))
		return rc;
	if (!bp) {
		rc = chg_add(l, 'A', NULL, ap, t, NULL, false);
		if (rc == 0 && !o->lower) {	/* born in the layer */
			l->v[l->n - 1].tino = o->tino;
			l->v[l->n - 1].size = o->rec.size;
		}
	} else if (!ap) {
		rc = chg_add(l, 'D', bp, NULL, t, o->lower,
			     !ob || ob->nfinals == 1);
		/* its content at the savepoint: the real file's */
		if (rc == 0 && o->lower &&
		    (!ob || !(ob->rec.flags & LI_DATA)))
			l->v[l->n - 1].real_data = true;
	} else if (strcmp(bp, ap)) {
		rc = chg_add(l, 'R', bp, ap, t, NULL, false);
	} else if (!S_ISDIR(t)) {	/* a folder: only its entries changed */
		rc = chg_add(l, 'M', bp, ap, t, NULL, false);
	}
	/* hard links: names gained and lost beyond the first */
	for (size_t j = 1; oa && j < oa->nfinals && rc == 0; j++)
		if (!has_final(ob, oa->finals[j]))
			rc = chg_add(l, 'A', NULL, oa->finals[j], t, NULL,
				     false);
	for (size_t j = 1; ob && j < ob->nfinals && rc == 0; j++)
		if (!has_final(oa, ob->finals[j]))
			rc = chg_add(l, 'D', ob->finals[j], NULL, t, NULL,
				     false);
	return rc;
}

static void put_name(FILE *f, const char *name)
{
	char *q = audit_cquote(name, " -> ");

	fputs(q ? q : name, f);
	free(q);
}

/* c into set["changes"] (bytes, as the audit log writes them: names need
 * not be UTF-8, "changes_hex" keeps them exact) and, when text is not
 * NULL, one line as .txfs/changes writes it (names C-quoted when needed,
 * so a name with a newline stays one line). */
static int sink_put(json_t *set, FILE *text, const struct chg *c)
{
	const char *p = c->kind == 'D' ? c->old : c->new;
	char *line = NULL;
	int rc;

	if (c->kind == 'R' ? asprintf(&line, "R %s -> %s", c->old, c->new) < 0 :
			     asprintf(&line, "%c %s", c->kind, p) < 0)
		return -ENOMEM;
	rc = audit_json_append_bytes(set, "changes", line);
	free(line);
	if (rc || !text)
		return rc;
	fprintf(text, "%c ", c->kind);
	if (c->kind == 'R') {
		put_name(text, c->old);
		fputs(" -> ", text);
	}
	put_name(text, p);
	fputc('\n', text);
	return 0;
}

/* Compare the plans: the changes from `before` to `after` into l (paths
 * borrowed from the plans and l), paired by path. */
static int diff_plans(struct txfs *fs, struct plan *before,
		      struct plan *after, struct chg_list *l)
{
	struct chg_view b = { 0 }, a = { 0 };
	int rc = chg_view_init(&b, before);

	if (rc == 0)
		rc = chg_view_init(&a, after);
	for (size_t i = 0; i < after->n && rc == 0; i++) {
		struct cobj *o = &after->objs[i];

		rc = obj_change(fs, l, &b, plan_obj(before, o->tino), &a, o);
	}
	/* staged before, gone now (a new file deleted again) */
	for (size_t i = 0; i < before->n && rc == 0; i++)
		if (!plan_obj(after, before->objs[i].tino))
			rc = obj_change(fs, l, &b, &before->objs[i], &a,
					NULL);
	if (rc == 0)
		rc = chg_pair(fs, l);
	chg_view_free(&b);
	chg_view_free(&a);
	return rc;
}

int changes_since(struct txfs *fs, const char *name, bool only,
		  json_t **out, FILE *text, struct since_plans *keep)
{
	struct plan before = { 0 }, after = { 0 }, *bp = &before;
	struct chg_list l = { 0 };
	struct layer_txn *t;
	uint32_t level;
	bool dirty = false, now = true, planned = false;
	json_t *list = json_pack("{s:[]}", "changes");
	int rc = list ? layer_begin(fs->layer, true, &t) : -ENOMEM;

	if (rc)
		goto out_list;
	level = sp_level(t, name);
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
	if (only && level < layer_sp_level(t)) {
		now = false;	/* the view at the next savepoint */
		if ((rc = layer_sp_rollback(t, level + 1)))
			goto out_txn;
	}
	if ((rc = plan_view(fs, t, &after)))
		goto out_txn;
	planned = true;
	if (keep && keep->before)
		bp = keep->before;
	else if ((rc = layer_sp_rollback(t, level)) ||
		 (rc = plan_view(fs, t, &before)))
		goto out_txn;
	rc = diff_plans(fs, bp, &after, &l);
out_txn:
	layer_txn_end(t);	/* aborted: nothing was rolled back */
	/* renames found by content read the new files as they are now (a
	 * transaction of their own: the one above was rolled back) */
	if (rc == 0 && now && l.n)
		rc = chg_similar(fs, NULL, &l);
	for (size_t i = 0; i < l.n && rc == 0; i++)
		if (l.v[i].kind)
			rc = sink_put(list, text, &l.v[i]);
	if (rc == 0 && keep && planned &&
	    (keep->after = malloc(sizeof(after)))) {
		*keep->after = after;
		memset(&after, 0, sizeof(after));
	}
	chg_free(&l);
	plan_free(&before);
	plan_free(&after);
out_list:
	if (rc)
		json_decref(list);
	else
		*out = list;
	return rc;
}

int since_text(struct txfs *fs, const char *name, bool only,
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

/* --- a file as it was at a savepoint -------------------------------- */

/* The data of regular file v (size bytes) as view t has it. */
static int read_data(struct txfs *fs, struct layer_txn *t,
		     const struct tview *v, char *buf, size_t size)
{
	uint64_t valid = v->in_layer ? v->rec.lower_valid : size;
	int fd = -1, rc = 0;

	memset(buf, 0, size);
	for (uint64_t b = 0; rc == 0 && b * LAYER_BLOCK < size; b++) {
		uint64_t bs = b * LAYER_BLOCK;
		size_t n = size - bs < LAYER_BLOCK ? (size_t)(size - bs) :
						     LAYER_BLOCK;
		const void *data;
		size_t len;

		rc = v->in_layer ? layer_chunk_get(t, v->tino, b, &data, &len)
				 : -ENOENT;
		if (rc == 0) {
			memcpy(buf + bs, data, len < n ? len : n);
		} else if (rc == -ENOENT) {
			rc = 0;
			if (v->lower_path && bs < valid)
				rc = lower_pread(fs, v->lower_path, &fd,
					buf + bs, valid - bs < n ?
					(size_t)(valid - bs) : n, (off_t)bs);
		}
	}
	if (fd >= 0)
		close(fd);
	return rc;
}

/* Resolve path from the root in view t (v: the object, owned). */
static int resolve(struct txfs *fs, struct layer_txn *t, const char *path,
		   struct tview *v)
{
	char *copy = strdup(path), *save = NULL;
	int rc = copy ? view_folder(fs, t, (uint64_t)fs->root_ino, v) :
			-ENOMEM;

	for (char *c = copy ? strtok_r(copy, "/", &save) : NULL; rc == 0 && c;
	     c = strtok_r(NULL, "/", &save)) {
		struct tview next;

		if (!strcmp(c, ".") || !strcmp(c, "..")) {
			rc = -EINVAL;	/* names only: nothing above the root */
			break;
		}
		rc = view_lookup(fs, t, v, c, &next);
		tview_free(v);
		if (rc == 0)
			*v = next;
	}
	free(copy);
	return rc;
}

int since_read(struct txfs *fs, const char *which, const char *name,
	       const char *path, char **buf, size_t *len, mode_t *mode)
{
	struct layer_txn *t;
	struct tview v = { 0 };
	uint32_t level;
	int rc = layer_begin(fs->layer, true, &t);

	*buf = NULL;
	if (rc)
		return rc;
	level = sp_level(t, name);
	if (!level)
		rc = -ENOENT;
	else if (!strcmp(which, "at"))
		rc = layer_sp_rollback(t, level);
	else if (!strcmp(which, "next"))
		rc = level < layer_sp_level(t) ?
		     layer_sp_rollback(t, level + 1) : 0;
	else
		rc = -EINVAL;
	if (rc == 0)
		rc = resolve(fs, t, path, &v);
	if (rc == 0 && !S_ISREG(v.st.st_mode))
		rc = S_ISDIR(v.st.st_mode) ? -EISDIR : -ELOOP;
	if (rc == 0 && (uint64_t)v.st.st_size > (1ULL << 30))
		rc = -EFBIG;
	if (rc == 0) {
		*len = (size_t)v.st.st_size;
		*mode = v.st.st_mode;
		*buf = malloc(*len ? *len : 1);
		rc = *buf ? read_data(fs, t, &v, *buf, *len) : -ENOMEM;
	}
	tview_free(&v);
	layer_txn_end(t);	/* aborted: nothing was rolled back */
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}
