/* SPDX-License-Identifier: Apache-2.0 */
/*
 * index.c - the lookup structure behind policy_check().
 *
 * For one operation, the globs of the rules that name it become entries
 * (order = position of the glob in the file, so first match wins is the
 * smallest order that matches). They are split three ways:
 *
 *   first:   the glob starts with a literal component (src, then
 *            anything; or .git), so only paths with that first component
 *            can match: a hash table from the component to its entries;
 *   last:    otherwise, the glob ends with a literal component (.envrc at
 *            any depth): a table keyed by the path's last component;
 *   general: the rest (any *.pem at any depth), scanned in order, each
 *            glob's literal prefix/suffix filters rejecting most paths
 *            cheaply.
 *
 * A class with fewer than MIN_KEYED entries joins the general list.
 * A lookup hashes the path's first and last components, scans the two
 * bucket lists and the general list, each only up to the best order found
 * so far. Tables are open addressing with linear probing, sized to a power
 * of two at least twice the number of entries, so a probe always ends at
 * an empty slot. Everything is allocated in the policy's arena and never
 * changes after index_build().
 */
#include <errno.h>
#include <string.h>

#include "policy_int.h"

enum eclass { EC_GENERAL, EC_FIRST, EC_LAST };

/* A class with fewer keyed entries than this stays in the general list:
 * hashing a path component costs more than scanning a few entries. */
#define MIN_KEYED 4

/* Up to 8 bytes of s as a number. */
static uint64_t load8(const char *s, size_t n)
{
	uint64_t v = 0;

	if (n >= 8) {
		memcpy(&v, s, 8);
		return v;
	}
	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)(uint8_t)s[i] << (8 * i);
	return v;
}

/* A hash of a component from its length and its first and last 8 bytes:
 * constant time whatever its length (object names are 38 bytes). */
static uint32_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = load8(s, n) * 0x9e3779b97f4a7c15ull;

	h ^= load8(s + (n > 8 ? n - 8 : 0), n) * 0xc2b2ae3d27d4eb4full;
	h ^= n * 0x165667b19e3779f9ull;
	return (uint32_t)(h >> 32) ^ (uint32_t)h;
}

/* The class of e and its key; classes the index does not use (bit
 * EC_FIRST or EC_LAST clear in use) fall through to the next one. */
static const struct gcomp *entry_key(const struct entry *e, unsigned use,
				     enum eclass *cls)
{
	const struct gcomp *c;

	*cls = EC_FIRST;
	c = glob_first_lit(e->g);
	if (c && (use & 1u << EC_FIRST))
		return c;
	*cls = EC_LAST;
	c = glob_last_lit(e->g);
	if (c && (use & 1u << EC_LAST))
		return c;
	*cls = EC_GENERAL;
	return NULL;
}

static bool rule_applies(const struct rule *r, uint32_t opmask, bool flags)
{
	if (flags)
		return r->kind == RULE_FLAG;
	return r->kind != RULE_FLAG && (r->ops & opmask);
}

static uint8_t rule_action(const struct rule *r)
{
	switch ((enum rule_kind)r->kind) {
	case RULE_DENY:
		return POLICY_DENY;
	case RULE_HIDE:
		return POLICY_HIDE;
	case RULE_ALLOW:
	case RULE_FLAG:
		break;
	}
	return POLICY_ALLOW;
}

static struct entry make_entry(const struct parsed *ps, const struct rule *r,
			       size_t j, const struct glob *const *callers)
{
	return (struct entry){
		.order = (uint32_t)(r->first + j),
		.action = rule_action(r),
		.by = r->by,
		.in_repo = r->in_repo,
		.line = r->line,
		.g = ps->globs[r->first + j],
		.bigrams = ps->globs[r->first + j]->bigrams,
		.callers = r->by ? callers + r->cfirst : NULL,
		.ncallers = (uint32_t)r->cn,
	};
}

/* Every entry for opmask (or the flags) into ix->all (unconditioned) or
 * ix->cond (with a caller condition), each in file order; the caller
 * globs are copied to the arena (ps is released after the build). */
static int collect(struct arena *a, const struct parsed *ps, uint32_t opmask,
		   bool flags, struct index *ix)
{
	const struct glob **callers;
	struct entry *all, *cond;
	uint32_t n = 0, nc = 0;

	for (size_t i = 0; i < ps->nrules; i++) {
		const struct rule *r = &ps->rules[i];

		if (rule_applies(r, opmask, flags))
			*(r->by ? &nc : &n) += (uint32_t)r->n;
	}
	all = arena_alloc(a, n * sizeof(*all));
	cond = arena_alloc(a, nc * sizeof(*cond));
	callers = arena_alloc(a, ps->ncallers * sizeof(*callers));
	if (!all || !cond || !callers)
		return -ENOMEM;
	for (size_t i = 0; i < ps->ncallers; i++)
		callers[i] = ps->callers[i];
	ix->all = all;
	ix->nall = n;
	ix->cond = cond;
	ix->ncond = nc;
	for (size_t i = 0; i < ps->nrules; i++) {
		const struct rule *r = &ps->rules[i];

		if (!rule_applies(r, opmask, flags))
			continue;
		for (size_t j = 0; j < r->n; j++) {
			if (r->by)
				*cond++ = make_entry(ps, r, j, callers);
			else
				*all++ = make_entry(ps, r, j, callers);
		}
	}
	return 0;
}

static uint32_t count_class(const struct index *ix, unsigned use,
			    enum eclass want)
{
	enum eclass cls;
	uint32_t n = 0;

	for (uint32_t i = 0; i < ix->nall; i++) {
		entry_key(&ix->all[i], use, &cls);
		n += cls == want;
	}
	return n;
}

/* The keyed classes worth a hash table. */
static unsigned classes_used(const struct index *ix)
{
	unsigned use = 1u << EC_FIRST | 1u << EC_LAST;

	if (count_class(ix, use, EC_FIRST) < MIN_KEYED)
		use &= ~(1u << EC_FIRST);
	if (count_class(ix, use, EC_LAST) < MIN_KEYED)
		use &= ~(1u << EC_LAST);
	return use;
}

static int build_general(struct arena *a, struct index *ix, unsigned use)
{
	uint32_t n = count_class(ix, use, EC_GENERAL);
	struct entry *v = arena_alloc(a, n * sizeof(*v));
	enum eclass cls;

	if (!v)
		return -ENOMEM;
	ix->general = v;
	ix->ngeneral = n;
	for (uint32_t i = 0; i < ix->nall; i++) {
		entry_key(&ix->all[i], use, &cls);
		if (cls == EC_GENERAL)
			*v++ = ix->all[i];
	}
	return 0;
}

static struct bucket *slot_of(struct bucket *t, uint32_t mask,
			      const struct gcomp *key)
{
	uint32_t h = hash_bytes(key->lit, key->len), i = h & mask;

	for (;; i = (i + 1) & mask) {
		if (!t[i].key || (t[i].hash == h && t[i].keylen == key->len &&
				  !memcmp(t[i].key, key->lit, key->len)))
			break;
	}
	t[i].key = key->lit;
	t[i].keylen = key->len;
	t[i].hash = h;
	return &t[i];
}

/* Give every used slot room for its entries, then fill them in order. */
static int fill_table(struct arena *a, struct index *ix, struct bucket *t,
		      uint32_t mask, unsigned use, enum eclass want)
{
	const struct gcomp *key;
	struct bucket *b;
	enum eclass cls;

	for (uint32_t i = 0; i <= mask; i++) {
		if (!t[i].key)
			continue;
		t[i].v = arena_alloc(a, t[i].n * sizeof(*t[i].v));
		if (!t[i].v)
			return -ENOMEM;
		t[i].n = 0;
	}
	for (uint32_t i = 0; i < ix->nall; i++) {
		key = entry_key(&ix->all[i], use, &cls);
		if (cls != want)
			continue;
		b = slot_of(t, mask, key);
		b->v[b->n++] = ix->all[i];
	}
	return 0;
}

static int build_table(struct arena *a, struct index *ix, unsigned use,
		       enum eclass want, const struct bucket **out,
		       uint32_t *maskp)
{
	uint32_t n = count_class(ix, use, want), size = 2, mask;
	const struct gcomp *key;
	struct bucket *t;
	enum eclass cls;

	*out = NULL;
	if (!n)
		return 0;
	while (size < 2 * n)
		size *= 2;
	mask = size - 1;
	t = arena_alloc(a, size * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memset(t, 0, size * sizeof(*t));
	for (uint32_t i = 0; i < ix->nall; i++) {
		key = entry_key(&ix->all[i], use, &cls);
		if (cls == want)
			slot_of(t, mask, key)->n++;
	}
	*out = t;
	*maskp = mask;
	return fill_table(a, ix, t, mask, use, want);
}

int index_build(struct arena *a, const struct parsed *ps, uint32_t opmask,
		bool flags, struct index *ix)
{
	unsigned use;
	int ret;

	memset(ix, 0, sizeof(*ix));
	ret = collect(a, ps, opmask, flags, ix);
	if (ret)
		return ret;
	use = classes_used(ix);
	ret = build_general(a, ix, use);
	if (!ret)
		ret = build_table(a, ix, use, EC_FIRST, &ix->first,
				  &ix->first_mask);
	if (!ret)
		ret = build_table(a, ix, use, EC_LAST, &ix->last,
				  &ix->last_mask);
	return ret;
}

/* ---- lookup ----------------------------------------------------------- */

static const struct bucket *lookup(const struct bucket *t, uint32_t mask,
				   const char *key, size_t n)
{
	uint32_t h = hash_bytes(key, n);

	for (uint32_t i = h & mask;; i = (i + 1) & mask) {
		if (!t[i].key)
			return NULL;
		if (t[i].hash == h && t[i].keylen == n &&
		    !memcmp(t[i].key, key, n))
			return &t[i];
	}
}

/* The first entry of v[0..n) with order < limit that matches. */
static const struct entry *scan(const struct entry *v, uint32_t n,
				uint32_t limit, struct glob_path *p)
{
	for (uint32_t i = 0; i < n && v[i].order < limit; i++)
		if (!glob_bigrams_missing(v[i].bigrams, p) &&
		    glob_match_path(v[i].g, p))
			return &v[i];
	return NULL;
}

static const struct entry *scan_bucket(const struct bucket *t, uint32_t mask,
				       const char *key, size_t n,
				       const struct entry *best,
				       struct glob_path *p)
{
	const struct bucket *b = lookup(t, mask, key, n);
	const struct entry *e;

	if (!b)
		return best;
	e = scan(b->v, b->n, best ? best->order : UINT32_MAX, p);
	return e ? e : best;
}

const struct entry *index_match(const struct index *ix, const char *path,
				size_t len)
{
	struct glob_path p = { .s = path, .len = len };
	const struct entry *best = NULL, *e;
	const char *sl;
	size_t start;

	if (!ix->nall)
		return NULL;
	if (ix->first) {
		sl = memchr(path, '/', len);
		best = scan_bucket(ix->first, ix->first_mask, path,
				   sl ? (size_t)(sl - path) : len, best, &p);
	}
	if (ix->last) {
		sl = memrchr(path, '/', len);
		start = sl ? (size_t)(sl - path) + 1 : 0;
		best = scan_bucket(ix->last, ix->last_mask, path + start,
				   len - start, best, &p);
	}
	e = scan(ix->general, ix->ngeneral, best ? best->order : UINT32_MAX,
		 &p);
	return e ? e : best;
}

const struct entry *index_match_linear(const struct index *ix,
				       const char *path, size_t len)
{
	struct glob_path p = { .s = path, .len = len };

	return scan(ix->all, ix->nall, UINT32_MAX, &p);
}
