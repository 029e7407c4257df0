/* SPDX-License-Identifier: Apache-2.0 */
/*
 * glob.c - compile and match the globs of the policy language.
 *
 * A glob is matched against a whole canonical workspace-relative path
 * ("" is the root), component by component:
 *
 *   *      any bytes inside one component, a leading '.' included
 *   **     a whole component only: zero or more components, so `**` / `x`
 *          matches x at any depth (top level too) and `a/` `**` matches a
 *          and everything below it; `**` matches every path, the root too
 *   ?      one byte
 *   [...]  one ASCII byte from a set: ranges a-z, `!` or `^` first
 *          negates, `]` first is literal; never '/'
 *   \c     the byte c (so `\*`, `\?`, `\[`, `\ `, `\#`, `\\`)
 *   a/     a trailing '/' means a and everything below it (as a/ **)
 *
 * Compiled "and below" (for hide rules), a glob matches what it matches
 * as written and every path below those, as if it ended with '/'.
 *
 * Matching is byte-wise and case-sensitive. A glob with a leading '/', an
 * empty component, a "." or ".." component, `**` inside a name, an
 * unclosed '[' or a bad range is refused with the offset of the mistake.
 *
 * Compiled form (policy_int.h): an array of components, each a literal
 * name, `**` (never two in a row) or a pattern of tokens. Whole-path
 * matching is the classic two-pointer wildcard algorithm with components
 * as the letters and `**` as the star (linear unless it backtracks), and
 * the same algorithm on bytes inside a pattern component. Literal
 * prefix, suffix and last-component prefix, then a 64-bit map of the
 * pairs of adjacent bytes a match must contain (compared with the path's,
 * computed once per path), reject most paths before the full match.
 */
#include <endian.h>
#include <errno.h>
#include <string.h>

#include "policy_int.h"

#define NONE SIZE_MAX

/* Compilation state: the text, a cursor and the arrays being filled. */
struct gbuild {
	struct arena *a;
	const char *s;
	size_t len, i;
	struct gcomp *comps;
	uint32_t nc;
	struct gtok *tok;
	size_t ntok;
	struct glob_error *err;
};

static int fail(struct gbuild *b, size_t off, const char *msg)
{
	b->err->off = off;
	b->err->msg = msg;
	return -EINVAL;
}

/* ---- compilation ------------------------------------------------------ */

/* One byte of a set at b->i, unescaped; '/' and non-ASCII refused. */
static int set_char(struct gbuild *b, uint8_t *c)
{
	size_t at = b->i;
	char ch = b->s[at];

	if (ch == '[' && at + 1 < b->len && b->s[at + 1] &&
	    strchr(":.=", b->s[at + 1]))
		return fail(b, at, "character classes like [:alpha:] are "
			    "not supported");
	if (ch == '\\') {
		if (at + 1 >= b->len)
			return fail(b, at, "backslash at the end of the glob");
		ch = b->s[at + 1];
		b->i++;
	}
	b->i++;
	if (ch == '/')
		return fail(b, at, "'/' cannot appear inside [...]");
	if ((unsigned char)ch >= 0x80)
		return fail(b, at, "only ASCII characters can appear inside "
			    "[...]");
	*c = (uint8_t)ch;
	return 0;
}

/* One member of a set: a byte or a range lo-hi. */
static int set_member(struct gbuild *b, uint8_t *map)
{
	uint8_t lo, hi;
	size_t at;
	int ret;

	ret = set_char(b, &lo);
	if (ret)
		return ret;
	hi = lo;
	if (b->i + 1 < b->len && b->s[b->i] == '-' && b->s[b->i + 1] != ']') {
		at = ++b->i;
		ret = set_char(b, &hi);
		if (ret)
			return ret;
		if (hi < lo)
			return fail(b, at, "empty range in [...]: its end "
				    "comes before its start");
	}
	for (unsigned c = lo; c <= hi; c++)
		map[c >> 3] |= (uint8_t)(1u << (c & 7));
	return 0;
}

/* A [...] set; b->i is at the '['. */
static int parse_set(struct gbuild *b, struct gtok *t)
{
	size_t open = b->i++;
	bool neg = false, first = true;
	uint8_t *map = arena_alloc(b->a, 32);
	int ret;

	if (!map)
		return -ENOMEM;
	memset(map, 0, 32);
	if (b->i < b->len && (b->s[b->i] == '!' || b->s[b->i] == '^')) {
		neg = true;
		b->i++;
	}
	for (;; first = false) {
		if (b->i >= b->len)
			return fail(b, open, "unclosed '['");
		if (b->s[b->i] == ']' && !first)
			break;
		ret = set_member(b, map);
		if (ret)
			return ret;
	}
	b->i++;
	for (unsigned k = 0; neg && k < 32; k++)
		map[k] = (uint8_t)~map[k];
	map['/' >> 3] &= (uint8_t)~(1u << ('/' & 7));
	t->kind = GT_SET;
	t->set = map;
	return 0;
}

/* One token of a pattern component at b->i. */
static int parse_tok(struct gbuild *b, struct gtok *t)
{
	char c = b->s[b->i];

	switch (c) {
	case '*':
		if (b->i + 1 < b->len && b->s[b->i + 1] == '*')
			return fail(b, b->i, "'**' must be a whole path "
				    "component (use '*' inside a name)");
		t->kind = GT_STAR;
		break;
	case '?':
		t->kind = GT_ANY;
		break;
	case '[':
		return parse_set(b, t);
	case '\\':
		if (b->i + 1 >= b->len)
			return fail(b, b->i, "backslash at the end of the glob");
		if (b->s[b->i + 1] == '/')
			return fail(b, b->i, "'/' cannot be escaped: a name "
				    "never contains '/'");
		c = b->s[++b->i];
		/* fall through */
	default:
		if (c == '\0')
			return fail(b, b->i, "NUL byte in a glob");
		t->kind = GT_LIT;
		t->c = (uint8_t)c;
		break;
	}
	b->i++;
	return 0;
}

static bool is_dstar(const struct gbuild *b)
{
	size_t i = b->i;

	return i + 1 < b->len && b->s[i] == '*' && b->s[i + 1] == '*' &&
	       (i + 2 == b->len || b->s[i + 2] == '/');
}

/* A component of literal tokens becomes a GC_LIT name. */
static int make_lit(struct gbuild *b, struct gcomp *c, size_t t0,
		    size_t start)
{
	size_t n = b->ntok - t0;
	char *lit = arena_alloc(b->a, n + 1);

	if (!lit)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++)
		lit[k] = (char)b->tok[t0 + k].c;
	lit[n] = '\0';
	if ((n == 1 && lit[0] == '.') || (n == 2 && !memcmp(lit, "..", 2)))
		return fail(b, start, "'.' and '..' never appear in a "
			    "workspace path");
	b->ntok = t0;
	c->kind = GC_LIT;
	c->lit = lit;
	c->len = (uint32_t)n;
	return 0;
}

/* The component at b->i, up to the next '/' or the end. */
static int parse_comp(struct gbuild *b, struct gcomp *c)
{
	size_t start = b->i, t0 = b->ntok;
	bool lit = true;
	int ret;

	if (is_dstar(b)) {
		b->i += 2;
		c->kind = GC_DSTAR;
		return 0;
	}
	while (b->i < b->len && b->s[b->i] != '/') {
		ret = parse_tok(b, &b->tok[b->ntok]);
		if (ret)
			return ret;
		lit = lit && b->tok[b->ntok].kind == GT_LIT;
		b->ntok++;
	}
	if (lit)
		return make_lit(b, c, t0, start);
	c->kind = GC_PAT;
	c->tok = &b->tok[t0];
	c->len = (uint32_t)(b->ntok - t0);
	return 0;
}

static void push_comp(struct gbuild *b, const struct gcomp *c)
{
	if (c->kind == GC_DSTAR && b->nc &&
	    b->comps[b->nc - 1].kind == GC_DSTAR)
		return;
	b->comps[b->nc++] = *c;
}

static int parse_comps(struct gbuild *b)
{
	struct gcomp c;
	int ret;

	for (;;) {
		if (b->s[b->i] == '/')
			return fail(b, b->i, b->i ? "empty path component "
				    "('//')" : "globs are relative to the "
				    "workspace root: drop the leading '/'");
		memset(&c, 0, sizeof(c));
		ret = parse_comp(b, &c);
		if (ret)
			return ret;
		push_comp(b, &c);
		if (b->i == b->len)
			return 0;
		if (++b->i == b->len) {
			c.kind = GC_DSTAR;	/* trailing '/' */
			push_comp(b, &c);
			return 0;
		}
	}
}

/* ---- filters ---------------------------------------------------------- */

/* Leading literal bytes of a pattern component, copied to out if not
 * NULL; returns how many. */
static size_t tok_lit_prefix(const struct gcomp *c, char *out)
{
	size_t n = 0;

	for (; n < c->len && c->tok[n].kind == GT_LIT; n++)
		if (out)
			out[n] = (char)c->tok[n].c;
	return n;
}

static size_t tok_lit_suffix(const struct gcomp *c, char *end)
{
	size_t n = 0;

	for (; n < c->len && c->tok[c->len - 1 - n].kind == GT_LIT; n++)
		end[-1 - (ptrdiff_t)n] = (char)c->tok[c->len - 1 - n].c;
	return n;
}

static size_t calc_prefix(const struct glob *g, char *out)
{
	size_t n = 0;

	for (uint32_t i = 0; i < g->ncomps; i++) {
		const struct gcomp *c = &g->comps[i];

		if (c->kind == GC_DSTAR)
			break;
		if (i)
			out[n++] = '/';
		if (c->kind == GC_PAT)
			return n + tok_lit_prefix(c, out + n);
		memcpy(out + n, c->lit, c->len);
		n += c->len;
	}
	return n;
}

/* Literal bytes every match ends with, written backwards from end. */
static size_t calc_suffix(const struct glob *g, char *end)
{
	size_t n = 0;

	for (uint32_t i = g->ncomps; i-- > 0;) {
		const struct gcomp *c = &g->comps[i];

		if (c->kind == GC_DSTAR)
			break;
		if (i + 1 < g->ncomps)
			end[-1 - (ptrdiff_t)n++] = '/';
		if (c->kind == GC_PAT)
			return n + tok_lit_suffix(c, end - n);
		n += c->len;
		memcpy(end - n, c->lit, c->len);
	}
	return n;
}

/* Bit of the pair of bytes a, b in a 64-bit bigram map (Fibonacci
 * hashing of the 16-bit pair). */
static uint64_t bigram_bit(unsigned char a, unsigned char b)
{
	return 1ull << ((a | (unsigned)b << 8) * 0x85ebca6bu >> 26);
}

/* Every pair of adjacent bytes inside a literal run of the glob: a path
 * that matches contains them all. */
static void calc_bigrams(struct glob *g)
{
	for (uint32_t i = 0; i < g->ncomps; i++) {
		const struct gcomp *c = &g->comps[i];

		for (uint32_t k = 1; c->kind == GC_LIT && k < c->len; k++)
			g->bigrams |= bigram_bit((unsigned char)c->lit[k - 1],
						 (unsigned char)c->lit[k]);
		for (uint32_t k = 1; c->kind == GC_PAT && k < c->len; k++)
			if (c->tok[k - 1].kind == GT_LIT &&
			    c->tok[k].kind == GT_LIT)
				g->bigrams |= bigram_bit(c->tok[k - 1].c,
							 c->tok[k].c);
	}
}

static int calc_filters(struct arena *a, struct glob *g, size_t len)
{
	char *buf = arena_alloc(a, 3 * (len + 1));
	const struct gcomp *last = &g->comps[g->ncomps - 1];

	if (!buf)
		return -ENOMEM;
	g->literal = true;
	for (uint32_t i = 0; i < g->ncomps; i++)
		g->literal = g->literal && g->comps[i].kind == GC_LIT;
	g->prefix = buf;
	g->plen = (uint32_t)calc_prefix(g, buf);
	if (g->literal)
		return 0;
	g->slen = (uint32_t)calc_suffix(g, buf + 2 * (len + 1));
	g->suffix = buf + 2 * (len + 1) - g->slen;
	g->lcp = buf + 2 * (len + 1);
	if (g->ncomps > 1 && last->kind == GC_PAT)
		g->lcplen = (uint32_t)tok_lit_prefix(last, buf + 2 * (len + 1));
	calc_bigrams(g);
	return 0;
}

static int check_length(size_t len, struct glob_error *err)
{
	err->off = 0;
	if (len == 0)
		err->msg = "empty glob";
	else if (len > GLOB_MAX_LEN)
		err->msg = "glob longer than 4096 bytes";
	else
		return 0;
	return -EINVAL;
}

int glob_compile(struct arena *a, const char *text, size_t len,
		 bool and_below, const struct glob **out,
		 struct glob_error *err)
{
	static const struct gcomp dstar = { .kind = GC_DSTAR };
	struct gbuild b = { .a = a, .s = text, .len = len, .err = err };
	struct glob *g;
	int ret;

	ret = check_length(len, err);
	if (ret)
		return ret;
	g = arena_alloc(a, sizeof(*g));
	b.comps = arena_alloc(a, (len / 2 + 2) * sizeof(*b.comps));
	b.tok = arena_alloc(a, len * sizeof(*b.tok));
	if (!g || !b.comps || !b.tok)
		return -ENOMEM;
	memset(g, 0, sizeof(*g));
	ret = parse_comps(&b);
	if (ret)
		return ret;
	if (and_below)
		push_comp(&b, &dstar);
	if (b.nc > GLOB_MAX_COMPS)
		return fail(&b, 0, "glob has more than 63 path components");
	g->comps = b.comps;
	g->ncomps = b.nc;
	g->text = arena_strndup(a, text, len);
	if (!g->text)
		return -ENOMEM;
	ret = calc_filters(a, g, len);
	if (ret)
		return ret;
	*out = g;
	return 0;
}

/* ---- matching --------------------------------------------------------- */

static bool tok_match(const struct gtok *t, unsigned char c)
{
	switch ((enum gtok_kind)t->kind) {
	case GT_LIT:
		return t->c == c;
	case GT_ANY:
		return true;
	case GT_SET:
		return t->set[c >> 3] & (1u << (c & 7));
	case GT_STAR:
		break;
	}
	return false;
}

/* Tokens t[0..nt) against the whole of s[0..n). */
static bool pat_match(const struct gtok *t, size_t nt, const char *s,
		      size_t n)
{
	size_t ti = 0, si = 0, star = NONE, star_si = 0;

	while (si < n) {
		if (ti < nt && t[ti].kind == GT_STAR) {
			star = ti++;
			star_si = si;
		} else if (ti < nt && tok_match(&t[ti], (unsigned char)s[si])) {
			ti++;
			si++;
		} else if (star != NONE) {
			ti = star + 1;
			si = ++star_si;
		} else {
			return false;
		}
	}
	while (ti < nt && t[ti].kind == GT_STAR)
		ti++;
	return ti == nt;
}

static bool comp_match(const struct gcomp *c, const char *s, size_t n)
{
	if (c->kind == GC_LIT)
		return c->len == n && memcmp(c->lit, s, n) == 0;
	return pat_match(c->tok, c->len, s, n);
}

/* End of the component that starts at sp. */
static size_t comp_end(const char *path, size_t len, size_t sp)
{
	const char *sl = memchr(path + sp, '/', len - sp);

	return sl ? (size_t)(sl - path) : len;
}

/*
 * Components of path are [sp, comp_end) for sp = 0 and each '/' + 1;
 * sp == len + 1 means there are no more (the root "" has none).
 */
bool glob_match_full(const struct glob *g, const char *path, size_t len)
{
	size_t pi = 0, sp = len ? 0 : 1, e, star = NONE, star_sp = 0;
	const struct gcomp *c = g->comps;

	while (sp <= len) {
		e = comp_end(path, len, sp);
		if (pi < g->ncomps && c[pi].kind == GC_DSTAR) {
			star = pi++;
			star_sp = sp;
		} else if (pi < g->ncomps && comp_match(&c[pi], path + sp,
							 e - sp)) {
			pi++;
			sp = e + 1;
		} else if (star != NONE) {
			pi = star + 1;
			star_sp = comp_end(path, len, star_sp) + 1;
			sp = star_sp;
		} else {
			return false;
		}
	}
	while (pi < g->ncomps && c[pi].kind == GC_DSTAR)
		pi++;
	return pi == g->ncomps;
}

static bool last_comp_starts(const char *path, size_t len, const char *lit,
			     size_t n)
{
	const char *sl = memrchr(path, '/', len);
	size_t start = sl ? (size_t)(sl - path) + 1 : 0;

	return len - start >= n && memcmp(path + start, lit, n) == 0;
}

/* The bigram map of the path, computed once per path: it is most of the
 * cost of a check against globs that have no literal prefix or suffix. */
void glob_path_map(struct glob_path *p)
{
	uint64_t map = 0;
	uint16_t pair;

	if (p->have_map)
		return;
	for (size_t k = 1; k < p->len; k++) {
		memcpy(&pair, p->s + k - 1, 2);	/* a | b << 8 on x86 */
		map |= 1ull << (le16toh(pair) * 0x85ebca6bu >> 26);
	}
	p->map = map;
	p->have_map = true;
}


bool glob_match_path(const struct glob *g, struct glob_path *p)
{
	const char *path = p->s;
	size_t len = p->len;

	if (g->literal)
		return len == g->plen && memcmp(path, g->prefix, len) == 0;
	if (g->ncomps == 1 && g->comps[0].kind == GC_DSTAR)
		return true;	/* `**` */
	if (g->plen && (len < g->plen || memcmp(path, g->prefix, g->plen)))
		return false;
	if (g->slen && (len < g->slen ||
			memcmp(path + len - g->slen, g->suffix, g->slen)))
		return false;
	if (g->lcplen && !last_comp_starts(path, len, g->lcp, g->lcplen))
		return false;
	if (glob_bigrams_missing(g->bigrams, p))
		return false;
	return glob_match_full(g, path, len);
}

bool glob_match(const struct glob *g, const char *path, size_t len)
{
	struct glob_path p = { .s = path, .len = len };

	return glob_match_path(g, &p);
}

/* ---- matching below a folder ------------------------------------------ */

/* Add the states reachable by letting a `**` match nothing. */
static uint64_t closure(const struct glob *g, uint64_t st)
{
	for (uint32_t i = 0; i < g->ncomps; i++)
		if ((st >> i & 1) && g->comps[i].kind == GC_DSTAR)
			st |= 1ull << (i + 1);
	return st;
}

static uint64_t step(const struct glob *g, uint64_t st, const char *s,
		     size_t n)
{
	uint64_t next = 0;

	for (uint32_t i = 0; i < g->ncomps; i++) {
		if (!(st >> i & 1))
			continue;
		if (g->comps[i].kind == GC_DSTAR)
			next |= 1ull << i;
		else if (comp_match(&g->comps[i], s, n))
			next |= 1ull << (i + 1);
	}
	return closure(g, next);
}

/*
 * A set of glob positions (bit i: comps[0..i) matched the path so far) is
 * run over the components of path.
 */
static uint64_t run_states(const struct glob *g, const char *path, size_t len)
{
	uint64_t st = closure(g, 1);
	size_t sp = len ? 0 : 1, e;

	for (; sp <= len && st; sp = e + 1) {
		e = comp_end(path, len, sp);
		st = step(g, st, path + sp, e - sp);
	}
	return st;
}

/* Some longer path matches if a position is left before the end, since
 * every component pattern accepts some name. */
bool glob_match_below(const struct glob *g, const char *path, size_t len)
{
	return (run_states(g, path, len) & ((1ull << g->ncomps) - 1)) != 0;
}

/* Every longer path matches if the glob's trailing `**` is reached. */
bool glob_covers_below(const struct glob *g, const char *path, size_t len)
{
	uint32_t last = g->ncomps - 1;

	return g->comps[last].kind == GC_DSTAR &&
	       (run_states(g, path, len) >> last & 1);
}

const struct gcomp *glob_first_lit(const struct glob *g)
{
	return g->comps[0].kind == GC_LIT ? &g->comps[0] : NULL;
}

const struct gcomp *glob_last_lit(const struct glob *g)
{
	const struct gcomp *c = &g->comps[g->ncomps - 1];

	return g->ncomps > 1 && c->kind == GC_LIT ? c : NULL;
}
