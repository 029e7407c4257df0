/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_glob.c - libFuzzer target for the glob matcher.
 *
 * Input: a glob, a newline, a path (the rest). The glob is compiled as
 * written and "and below"; the fast matcher must agree with itself without
 * prefilters and with a naive recursive reference matcher written here;
 * a match must imply a match below the parent folder; covering a folder
 * must imply matching a path below it; "and below" must mean "the path or
 * an ancestor matches".
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_COMPS 64

/* ---- reference matcher: plain recursion, exponential, small inputs -- */

static bool ref_tok(const struct gtok *t, size_t nt, const char *s, size_t n)
{
	unsigned char c;

	if (!nt)
		return !n;
	if (t->kind == GT_STAR) {
		for (size_t k = 0; k <= n; k++)
			if (ref_tok(t + 1, nt - 1, s + k, n - k))
				return true;
		return false;
	}
	if (!n)
		return false;
	c = (unsigned char)*s;
	if ((t->kind == GT_LIT && t->c != c) ||
	    (t->kind == GT_SET && !(t->set[c >> 3] & (1u << (c & 7)))))
		return false;
	return ref_tok(t + 1, nt - 1, s + 1, n - 1);
}

struct comps {
	const char *s[MAX_COMPS];
	size_t n[MAX_COMPS];
	size_t count;
};

static bool ref_comps(const struct gcomp *c, size_t nc, const struct comps *p,
		      size_t from)
{
	const struct gcomp *g = c;

	if (!nc)
		return from == p->count;
	if (g->kind == GC_DSTAR) {
		for (size_t k = from; k <= p->count; k++)
			if (ref_comps(c + 1, nc - 1, p, k))
				return true;
		return false;
	}
	if (from == p->count)
		return false;
	if (g->kind == GC_LIT ? g->len != p->n[from] ||
	    memcmp(g->lit, p->s[from], g->len) :
	    !ref_tok(g->tok, g->len, p->s[from], p->n[from]))
		return false;
	return ref_comps(c + 1, nc - 1, p, from + 1);
}

/* "" has no components; otherwise every '/' separates two. */
static bool split(const char *s, size_t len, struct comps *p)
{
	size_t start = 0;

	p->count = 0;
	if (!len)
		return true;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && s[i] != '/')
			continue;
		if (p->count == MAX_COMPS)
			return false;
		p->s[p->count] = s + start;
		p->n[p->count++] = i - start;
		start = i + 1;
	}
	return true;
}

/* Few enough wildcards for the recursion to stay fast. */
static bool small(const struct glob *g, size_t len)
{
	unsigned stars = 0;

	for (uint32_t i = 0; i < g->ncomps; i++) {
		stars += g->comps[i].kind == GC_DSTAR;
		for (uint32_t k = 0; g->comps[i].kind == GC_PAT &&
		     k < g->comps[i].len; k++)
			stars += g->comps[i].tok[k].kind == GT_STAR;
	}
	return stars <= 6 && len <= 128;
}

/* ---- properties -------------------------------------------------------- */

static void check_plain(const struct glob *g, const char *path, size_t len)
{
	bool m = glob_match(g, path, len);
	struct comps c;
	const char *sl;
	char *below;

	if (m != glob_match_full(g, path, len))
		abort();
	if (small(g, len) && split(path, len, &c) &&
	    m != ref_comps(g->comps, g->ncomps, &c, 0))
		abort();
	sl = memrchr(path, '/', len);
	if (m && len && !glob_match_below(g, path, sl ? (size_t)(sl - path)
					   : 0))
		abort();
	if (glob_covers_below(g, path, len)) {
		below = malloc(len + 2);
		memcpy(below, path, len);
		below[len] = '/';
		below[len + 1] = 'x';
		if (!glob_match(g, len ? below : "x", len ? len + 2 : 1) ||
		    !glob_match_below(g, path, len))
			abort();
		free(below);
	}
}

/* A path as the engine gets them: no leading, trailing or double '/'. */
static bool canonical(const char *path, size_t len)
{
	if (len && (path[0] == '/' || path[len - 1] == '/'))
		return false;
	for (size_t i = 1; i < len; i++)
		if (path[i] == '/' && path[i - 1] == '/')
			return false;
	return true;
}

/* and_below matches path iff the plain glob matches path or an ancestor. */
static void check_below(const struct glob *plain, const struct glob *g,
			const char *path, size_t len)
{
	bool want = glob_match_full(plain, path, len);

	for (size_t i = 0; i < len && !want; i++)
		if (path[i] == '/')
			want = glob_match_full(plain, path, i);
	if (len && !want && glob_match_full(plain, "", 0))
		want = true;
	if (glob_match(g, path, len) != want)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nl = memchr(s, '\n', size);
	size_t glen = nl ? (size_t)(nl - s) : size;
	const char *path = nl ? nl + 1 : "";
	size_t plen = nl ? size - glen - 1 : 0;
	struct arena a = { 0 };
	const struct glob *g, *gb;
	struct glob_error err;

	if (glob_compile(&a, s, glen, false, &g, &err) == 0) {
		check_plain(g, path, plen);
		if (glob_compile(&a, s, glen, true, &gb, &err) &&
		    g->ncomps < GLOB_MAX_COMPS)
			abort();
		if (g->ncomps < GLOB_MAX_COMPS && canonical(path, plen))
			check_below(g, gb, path, plen);
	} else if (!err.msg || err.off > glen) {
		abort();
	}
	arena_release(&a);
	return 0;
}
