/* SPDX-License-Identifier: Apache-2.0 */
/*
 * changes.c - the summaries behind .txfs/status and .txfs/changes: the
 * counts of the open transaction (added, modified, deleted, renamed,
 * needing review) and the list of changed paths, one "K path" a line,
 * from the plan of the merged view (plan.c). Read-only: it never changes
 * the layer.
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

/* A name on a line of .txfs/changes: as is, or C-quoted when it holds a
 * control byte, '"', '\', bytes outside UTF-8 or " -> " (audit_cquote),
 * so that one name is one line and every line parses back. */
static void put_name(FILE *out, const char *name)
{
	char *q = audit_cquote(name, " -> ");

	fputs(q ? q : name, out);
	free(q);
}

/* The names an object gained by hard link beyond its primary one (finals
 * past [0] all come from layer entries): each is a new name ("A"),
 * checked against the flag rules at that name (a link into .git/hooks/
 * needs review wherever its primary name is). */
static void extra_names(const struct cobj *o, struct txn_counts *c, FILE *out,
			const struct policy *pol, FILE *flagged)
{
	for (size_t j = 1; j < o->nfinals; j++) {
		const char *path = o->finals[j];	/* a layer entry */
		bool flag = pol && policy_is_flagged(pol, path, strlen(path));

		c->added++;
		c->flagged += flag;
		if (flag && flagged)
			fwrite(path, 1, strlen(path) + 1, flagged);
		if (out) {
			fputs("A ", out);
			put_name(out, path);
			fputs(flag ? "\t(needs review)\n" : "\n", out);
		}
	}
}

/* Count (and list in out, and the flagged ones in flagged, each followed
 * by a NUL: a path may hold any other byte) the changes. */
void changes_count(struct plan *p, struct txn_counts *c, FILE *out,
			  const struct policy *pol, FILE *flagged)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i < p->n; i++) {
		const struct cobj *o = &p->objs[i];
		const char *path = o->nfinals ? o->finals[0] : o->lower;
		char kind;

		if (o->tino == (uint64_t)p->fs->root_ino)
			continue;
		if (o->skip && p->commit)
			continue;	/* a forced commit leaves it */
		if (!o->lower && !o->nfinals)
			continue;	/* born and gone in this transaction */
		if (!o->lower)
			kind = 'A', c->added++;
		else if (!o->nfinals)
			kind = 'D', c->deleted++;
		else if (!o->natural)
			kind = 'R', c->renamed++;
		else if (S_ISDIR(o->rec.mode))
			continue;	/* only its entries changed */
		else
			kind = 'M', c->modified++;
		bool flag = pol && path &&
			    policy_is_flagged(pol, path, strlen(path));

		c->flagged += flag;
		if (flag && flagged)
			fwrite(path, 1, strlen(path) + 1, flagged);
		if (out) {
			fprintf(out, "%c ", kind);
			if (kind == 'R') {
				put_name(out, o->lower);
				fputs(" -> ", out);
			}
			put_name(out, path);
			fputs(flag ? "\t(needs review)\n" : "\n", out);
		}
		extra_names(o, c, out, pol, flagged);
	}
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
	rc = layer_begin(fs->layer, false, &t);
	if (rc == 0) {
		rc = plan_view(fs, t, &p);
		if (rc == 0)
			changes_count(&p, c, out, atomic_load(&fs->policy),
				      NULL);
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
