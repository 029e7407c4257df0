/* SPDX-License-Identifier: Apache-2.0 */
/*
 * changes.c - the summaries behind .txfs/status and .txfs/changes: the
 * counts of the open transaction (added, modified, deleted, renamed,
 * needing review) and the list of changed paths, one "K path" a line,
 * from the plan of the merged view (plan.c). Read-only: it never changes
 * the layer.
 *
 * A list of changes (struct chg_list) is built first, then paired: a
 * file deleted at path P and a new file of the same type created at P is
 * one change, "M P", not "D P" and "A P" - what an editor's save, sed -i,
 * os.replace of a temporary file or git's index.lock do (the new file is
 * renamed over the old one). Not when the old file's identity matters: a
 * real file with another hard link (st_nlink > 1 in the real directory;
 * the other name keeps the old content), an object with more than one
 * name in the view, or a change of type. Pairing changes only what is
 * reported: the commit still replaces the inode (plan.c). The counts are
 * counted from the same paired list that is printed, so they agree with
 * it everywhere (status, status.json, changes, the commit report, txfs
 * exec's report and changes-since, which since.c builds the same way).
 * Then a file renamed and replaced by rename is found by its content
 * (similar.c): "R old -> new" rather than "D old" and "A new".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "session.h"

/* The id of the transaction open in the layer (0 before the first). */
uint64_t txn_cur_id(struct layer_txn *t)
{
	uint64_t id = 0;

	layer_meta_get_u64(t, "txid", &id);
	return id;
}

/* --- the list of changes -------------------------------------------- */

int chg_add(struct chg_list *l, char kind, const char *old, const char *new,
	    mode_t type, const char *lower, bool one_name)
{
	struct chg *c;

	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 64;

		c = realloc(l->v, cap * sizeof(*c));
		if (!c)
			return -ENOMEM;
		l->v = c;
		l->cap = cap;
	}
	c = &l->v[l->n++];
	*c = (struct chg){ .kind = kind, .old = old, .new = new,
			   .type = type & S_IFMT, .lower = lower,
			   .one_name = one_name };
	return 0;
}

void chg_free(struct chg_list *l)
{
	for (size_t i = 0; i < l->nown; i++)
		free(l->own[i]);
	free(l->own);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* Keep s (malloc'd) with the list; NULL (s freed) when out of memory. */
static const char *chg_own(struct chg_list *l, char *s)
{
	char **v;

	if (!s || !(v = realloc(l->own, (l->nown + 1) * sizeof(*v)))) {
		free(s);
		return NULL;
	}
	l->own = v;
	return v[l->nown++] = s;
}

/* --- where a real path is in a view --------------------------------- */

static int moved_cmp(const void *a, const void *b)
{
	const struct chg_moved *x = a, *y = b;

	return strcmp(x->lower, y->lower);
}

int chg_view_init(struct chg_view *v, const struct plan *p)
{
	memset(v, 0, sizeof(*v));
	for (size_t i = 0; i < p->n; i++) {
		const struct cobj *o = &p->objs[i];
		struct chg_moved *m;

		if (!S_ISDIR(o->rec.mode) || !o->lower || !o->lower[0] ||
		    (o->nfinals && !strcmp(o->finals[0], o->lower)))
			continue;
		if (v->nm == v->cap) {
			v->cap = v->cap ? v->cap * 2 : 16;
			if (!(m = realloc(v->m, v->cap * sizeof(*m))))
				return -ENOMEM;
			v->m = m;
		}
		v->m[v->nm++] = (struct chg_moved){ o->lower,
			o->nfinals ? o->finals[0] : NULL, strlen(o->lower) };
	}
	if (v->nm > 1)	/* by real path: chg_view_path bsearches */
		qsort(v->m, v->nm, sizeof(*v->m), moved_cmp);
	return 0;
}

void chg_view_free(struct chg_view *v)
{
	free(v->m);
	memset(v, 0, sizeof(*v));
}

/* The moved folder whose real path is the first len bytes of path. */
static const struct chg_moved *moved_find(const struct chg_view *v,
					  const char *path, size_t len)
{
	size_t lo = 0, hi = v->nm;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct chg_moved *m = &v->m[mid];
		int c = strncmp(path, m->lower, len);

		if (c == 0)	/* the entry starts with the prefix */
			c = m->len == len ? 0 : -1;
		if (c == 0)
			return m;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return NULL;
}

const char *chg_view_path(const struct chg_view *v, const char *lower,
			  struct chg_list *l, int *err)
{
	const struct chg_moved *best = NULL;
	const char *r;

	/* the deepest moved folder above it: each of its parents, from the
	 * nearest, looked up (depth x log(moved folders)) */
	for (const char *e = strrchr(lower, '/'); v->nm && e && !best;
	     e = e > lower ? memrchr(lower, '/', (size_t)(e - lower)) : NULL)
		best = moved_find(v, lower, (size_t)(e - lower));
	if (!best)
		return lower;
	if (!best->final)
		return NULL;
	if (!(r = chg_own(l, path_join(best->final, lower + best->len + 1))))
		*err = -ENOMEM;
	return r;
}

/* May change c (a D) and a creation at its path be one modification? */
static bool may_pair(struct txfs *fs, const struct chg *c)
{
	struct stat st;

	if (c->kind != 'D' || !c->one_name ||
	    (!S_ISREG(c->type) && !S_ISLNK(c->type)))
		return false;
	if (!c->lower)
		return true;	/* born in the layer: one name (one_name) */
	/* a real file: its other hard links keep the old inode's content */
	return lower_stat(fs, c->lower, &st) == 0 && st.st_nlink == 1 &&
	       (st.st_mode & S_IFMT) == c->type;
}

/* Where c is (A) or was last seen in the view (D). */
static const char *chg_at(const struct chg *c)
{
	return c->kind == 'D' ? (c->at ? c->at : c->old) : c->new;
}

static int by_path(const void *a, const void *b)
{
	const struct chg *x = *(struct chg *const *)a;
	const struct chg *y = *(struct chg *const *)b;
	const char *px = chg_at(x), *py = chg_at(y);
	int r = strcmp(px, py);

	return r ? r : (x->kind == 'D') - (y->kind == 'D');
}

int chg_pair(struct txfs *fs, struct chg_list *l)
{
	struct chg **s;
	size_t n = 0;

	for (size_t i = 0; i < l->n; i++)
		n += l->v[i].kind == 'A' || l->v[i].kind == 'D';
	if (n < 2)
		return 0;
	if (!(s = malloc(n * sizeof(*s))))
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < l->n; i++)
		if (l->v[i].kind == 'A' || l->v[i].kind == 'D')
			s[n++] = &l->v[i];
	qsort(s, n, sizeof(*s), by_path);	/* at one path: A, then D */
	for (size_t i = 0; i + 1 < n; i++) {
		struct chg *a = s[i], *d = s[i + 1];

		if (a->kind != 'A' || d->kind != 'D' ||
		    strcmp(a->new, chg_at(d)) || a->type != d->type ||
		    !may_pair(fs, d))
			continue;
		d->kind = 'M';	/* at the old file's place in the list */
		d->new = a->new;
		a->kind = 0;	/* merged */
		i++;
	}
	free(s);
	return 0;
}

/* A name on a line of .txfs/changes: as is, or C-quoted when it holds a
 * control byte, '"', '\', bytes outside UTF-8 or " -> " (audit_cquote),
 * so that one name is one line and every line parses back. */
static void put_name(FILE *out, const char *name)
{
	char *q = audit_cquote(name, " -> ");

	fputs(q ? q : name, out);
	free(q);
}

void chg_put(FILE *out, const struct chg *c, bool flag)
{
	fprintf(out, "%c ", c->kind);
	if (c->kind == 'R') {
		put_name(out, c->old);
		fputs(" -> ", out);
	}
	put_name(out, c->kind == 'D' ? c->old : c->new);
	fputs(flag ? "\t(needs review)\n" : "\n", out);
}

/* --- the open transaction against the real directory ----------------- */

/* The changes of plan p (the merged view against the real directory),
 * paired; paths point into p. */
static int plan_changes(struct plan *p, struct chg_list *l)
{
	struct chg_view v;
	int rc = chg_view_init(&v, p);

	for (size_t i = 0; i < p->n && rc == 0; i++) {
		const struct cobj *o = &p->objs[i];
		mode_t t = o->rec.mode & S_IFMT;

		if (o->tino == (uint64_t)p->fs->root_ino)
			continue;
		if (o->skip && p->commit)
			continue;	/* a forced commit leaves it */
		if (!o->lower && !o->nfinals)
			continue;	/* born and gone in this transaction */
		if (!o->lower) {
			rc = chg_add(l, 'A', NULL, o->finals[0], t, NULL,
				     o->nfinals == 1);
			if (rc == 0) {
				l->v[l->n - 1].tino = o->tino;
				l->v[l->n - 1].size = o->rec.size;
			}
		} else if (!o->nfinals) {
			rc = chg_add(l, 'D', o->lower, NULL, t, o->lower, true);
			if (rc == 0)	/* the real directory has the old */
				l->v[l->n - 1].real_data = true;
			/* where it was in the view: its real path moved with
			 * its folders (a file replaced in a renamed folder) */
			if (rc == 0)
				l->v[l->n - 1].at = chg_view_path(&v, o->lower,
								  l, &rc);
		}
		else if (!o->natural)
			rc = chg_add(l, 'R', o->lower, o->finals[0], t, NULL,
				     false);
		else if (!S_ISDIR(o->rec.mode))	/* a folder: its entries */
			rc = chg_add(l, 'M', o->lower, o->finals[0], t, NULL,
				     false);
		/* the names it gained by hard link beyond its primary one
		 * (finals past [0] all come from layer entries) are new */
		for (size_t j = 1; j < o->nfinals && rc == 0; j++)
			rc = chg_add(l, 'A', NULL, o->finals[j], t, NULL,
				     false);
	}
	chg_view_free(&v);
	if (rc == 0)
		rc = chg_pair(p->fs, l);
	return rc ? rc : chg_similar(p->fs, p->t, l);
}

void chg_count(const struct chg *c, struct txn_counts *n)
{
	n->added += c->kind == 'A';
	n->modified += c->kind == 'M';
	n->deleted += c->kind == 'D';
	n->renamed += c->kind == 'R';
}

/* Count (and list in out, and the flagged ones in flagged, each followed
 * by a NUL: a path may hold any other byte) the changes. A name is
 * checked against the flag rules where it is now (a link into
 * .git/hooks/ needs review wherever its primary name is). */
int changes_count(struct plan *p, struct txn_counts *c, FILE *out,
		  const struct policy *pol, FILE *flagged)
{
	struct chg_list l = { 0 };
	int rc = plan_changes(p, &l);

	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < l.n && rc == 0; i++) {
		const struct chg *x = &l.v[i];
		const char *path = x->kind == 'D' ? x->old : x->new;
		bool flag;

		if (!x->kind)
			continue;
		flag = pol && policy_is_flagged(pol, path, strlen(path));
		chg_count(x, c);
		c->flagged += flag;
		if (flag && flagged)
			fwrite(path, 1, strlen(path) + 1, flagged);
		if (out)
			chg_put(out, x, flag);
	}
	chg_free(&l);
	return rc;
}
/* A summary of the open transaction (for status, changes, reports). */
int txn_summary(struct txfs *fs, struct txn_counts *c, char **changes)
{
	struct layer_txn *t;
	struct layer_counters lc;
	struct plan p;
	char *buf = NULL;
	size_t len = 0;
	FILE *out = changes ? open_memstream(&buf, &len) : NULL;
	int rc;

	if (changes && !out)
		return -ENOMEM;
	if (reap_pending(fs))	/* what the kernel forgot is gone (reap.c) */
		(void)reap_run(fs);
	rc = layer_begin(fs->layer, false, &t);
	if (rc == 0) {
		rc = plan_view(fs, t, &p);
		if (rc == 0)
			rc = changes_count(&p, c, out,
					   atomic_load(&fs->policy), NULL);
		plan_free(&p);
		if (rc == 0 && layer_counters_get(t, &lc) == 0)
			c->bytes = lc.bytes > 0 ? (uint64_t)lc.bytes : 0;
		c->txid = txn_cur_id(t);
		c->savepoints = layer_sp_level(t);
		layer_txn_end(t);
	}
	if (out)
		fclose(out);
	if (changes && rc == 0)
		*changes = buf;
	else
		free(buf);
	return rc;
}
