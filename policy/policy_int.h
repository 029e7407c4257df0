/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy_int.h - internals of the policy module, one section per file.
 *
 * Data flow: text -> lexer (tokens of one line) -> parser (rules, limits,
 * globs compiled by glob.c) -> index.c (per-operation lookup structures) ->
 * struct policy, which is immutable from then on. Everything a struct policy
 * points to lives in its arena, so policy_free() is one arena release.
 *
 * Nothing here is visible outside the module except to the unit tests and
 * fuzz targets, which include this header to test the pieces directly.
 */
#ifndef TXFS_POLICY_INT_H
#define TXFS_POLICY_INT_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "policy.h"

/* ---- util.c: arena, growable string, growable array ------------------- */

/* A bump allocator: memory is only ever freed all at once. */
struct arena_chunk;
struct arena {
	struct arena_chunk *head;
};

void *arena_alloc(struct arena *a, size_t size);
/* Copy n bytes and add a NUL. */
char *arena_strndup(struct arena *a, const char *s, size_t n);
void arena_release(struct arena *a);

/* A growable string; on allocation failure it sets oom and stops growing. */
struct sbuf {
	char *buf;
	size_t len, cap;
	bool oom;
};

void sbuf_add(struct sbuf *b, const char *s, size_t n);
void sbuf_addc(struct sbuf *b, char c);
void sbuf_addf(struct sbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
void sbuf_vaddf(struct sbuf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));
/* The NUL-terminated text (caller frees), or NULL after an allocation
 * failure; the sbuf is empty afterwards either way. */
char *sbuf_steal(struct sbuf *b);
void sbuf_release(struct sbuf *b);

/* Append one zeroed element of size elsize to *v (n elements, cap slots);
 * returns it, or NULL when out of memory. */
void *vec_push(void *v, size_t *n, size_t *cap, size_t elsize);

/* ---- diag (util.c): "FILE:LINE:COL: message" lines --------------------- */

#define DIAG_MAX 100	/* errors reported before giving up on a file */

struct diag {
	const char *name;
	struct sbuf out;	/* lines separated by '\n', no trailing '\n' */
	unsigned count;
};

void diag_error(struct diag *d, unsigned line, unsigned col,
		const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* ---- ops.c: operation names and sets ----------------------------------- */

#define OPMASK_ALL ((1u << POLICY_OP__COUNT) - 1)
#define OPMASK_MODIFY (OPMASK_ALL & ~(1u << POLICY_OP_READ))

/* One element of an OPS list: an operation, "modify" or "all". */
int ops_parse_word(const char *s, size_t n, uint32_t *mask);

/* Verbs of `control deny`; bit i of a mask is control_verbs[i]. */
extern const char *const control_verbs[];
extern const size_t control_verb_count;
int control_verb_parse(const char *s, size_t n, uint32_t *bit);

/* ---- lexer.c: one line at a time -------------------------------------- */

struct token {
	const char *s;		/* into the text, not NUL-terminated */
	uint32_t len;
	uint32_t line, col;	/* 1-based; col counts bytes */
};

struct toks {
	struct token *v;
	size_t n, cap;
};

struct lexer {
	const char *p, *end;
	uint32_t line;
	struct diag *diag;
};

/* Tokens of the next line into out (replacing its contents). Returns 1 when
 * a line was read (it may have no tokens), 0 at the end of the text,
 * -ENOMEM. Lexical errors go to lx->diag. */
int lexer_line(struct lexer *lx, struct toks *out);

/* ---- connect.c: `allow connect PATH...` ---------------------------------- */

/* The line is an `allow connect` rule. */
bool connect_rule_is(const struct token *t, size_t n);
/* Check its paths (errors to d). Returns 0. */
int connect_rule_check(struct diag *d, const struct token *t, size_t n);


/* ---- glob.c: compiled globs -------------------------------------------- */

#define GLOB_MAX_LEN 4096
#define GLOB_MAX_COMPS 63	/* states of glob_match_below fit a uint64_t */

enum gtok_kind { GT_LIT, GT_ANY, GT_STAR, GT_SET };

/* One element of a component pattern: a byte, '?', '*' or a [...] set. */
struct gtok {
	uint8_t kind;		/* enum gtok_kind */
	uint8_t c;		/* GT_LIT */
	const uint8_t *set;	/* GT_SET: 256-bit map of the bytes it takes */
};

enum gcomp_kind { GC_LIT, GC_DSTAR, GC_PAT };

/* One path component of a glob. */
struct gcomp {
	uint8_t kind;		/* enum gcomp_kind */
	uint32_t len;		/* GC_LIT: bytes; GC_PAT: tokens */
	const char *lit;	/* GC_LIT: the name, unescaped */
	const struct gtok *tok;	/* GC_PAT */
};

/*
 * A compiled glob. The filters are necessary conditions of a match, checked
 * before the full match: every matching path starts with prefix, ends with
 * suffix, has a last component starting with lcp and contains every pair
 * of adjacent bytes of the glob's literal runs (bigrams: a 64-bit map of
 * hashed pairs). literal: no wildcard at all, the glob matches exactly the
 * path `prefix`.
 */
struct glob {
	const char *text;	/* as written, NUL-terminated */
	const struct gcomp *comps;
	uint32_t ncomps;	/* >= 1; no two GC_DSTAR in a row */
	bool literal;
	uint32_t plen, slen, lcplen;
	const char *prefix, *suffix, *lcp;
	uint64_t bigrams;
};

/* A path being matched against many globs: its bigram map is computed the
 * first time a glob needs it. Initialise as { .s = path, .len = len }. */
struct glob_path {
	const char *s;
	size_t len;
	bool have_map;
	uint64_t map;
};

struct glob_error {
	size_t off;		/* byte offset in the glob text */
	const char *msg;	/* static text */
};

/* Compile text[0..len) into *out; and_below: also match every path below
 * a match (as if the glob ended with '/'). Returns 0, -EINVAL (err
 * filled) or -ENOMEM. */
int glob_compile(struct arena *a, const char *text, size_t len,
		 bool and_below, const struct glob **out,
		 struct glob_error *err);
bool glob_match(const struct glob *g, const char *path, size_t len);
bool glob_match_path(const struct glob *g, struct glob_path *p);
/* Compute p->map if not done yet. */
void glob_path_map(struct glob_path *p);

/* True if some bigram of want (a glob's bigrams) is not in the path. */
static inline bool glob_bigrams_missing(uint64_t want, struct glob_path *p)
{
	if (!want)
		return false;
	if (!p->have_map)
		glob_path_map(p);
	return want & ~p->map;
}
/* The same without the prefilters (for tests: both must agree). */
bool glob_match_full(const struct glob *g, const char *path, size_t len);
/* True if g could match some path strictly below folder path. */
bool glob_match_below(const struct glob *g, const char *path, size_t len);
/* True if g matches every path strictly below folder path. */
bool glob_covers_below(const struct glob *g, const char *path, size_t len);
/* The literal first component every match has (NULL if none). */
const struct gcomp *glob_first_lit(const struct glob *g);
/* The literal last component (NULL if none or the glob has one component). */
const struct gcomp *glob_last_lit(const struct glob *g);

/* ---- parser.c: text to rules ------------------------------------------ */

enum rule_kind { RULE_DENY, RULE_ALLOW, RULE_HIDE, RULE_FLAG };

/* A caller condition (`except-by EXE...`, `only-by EXE...`): the rule
 * applies to every caller but those whose executable matches one of the
 * globs, or only to those. */
enum rule_by { BY_ANY = 0, BY_EXCEPT, BY_ONLY };

struct rule {
	uint8_t kind;		/* enum rule_kind; readonly is a deny */
	uint8_t by;		/* enum rule_by */
	bool in_repo;		/* except-by ... in-repo */
	uint32_t ops;		/* mask of 1 << enum policy_op */
	unsigned line;
	size_t first, n;	/* globs[first .. first + n) of struct parsed */
	size_t cfirst, cn;	/* callers[cfirst .. cfirst + cn) */
};

struct parsed {
	struct rule *rules;
	size_t nrules, caprules;
	const struct glob **globs;
	size_t nglobs, capglobs;
	const struct glob **callers;	/* executable globs, without the '/' */
	size_t ncallers, capcallers;
	const struct glob **exec;
	size_t nexec, capexec;
	unsigned *exec_line;	/* line of exec[i] */
	size_t nexec_line, capexec_line;
	struct policy_limits limits;
	const struct glob **unlimited;	/* `limit deletes N except GLOB...` */
	size_t nunlimited, capunlimited;
	const struct glob **unlimited_by;	/* `... except-by EXE...` */
	size_t nunlimited_by, capunlimited_by;
	bool unlimited_ignored;		/* `... except-ignored` */
	bool network_denied;
	uint32_t control_denied;	/* bit i: control_verbs[i] */
	size_t nstatements;		/* lines holding a rule */
};

/* Parse text into *out (globs allocated in a). Returns 0, -EINVAL with
 * *errmsg set (if errmsg is not NULL), or -ENOMEM. */
int parse_policy(struct arena *a, const char *name, const char *text,
		 size_t len, struct parsed *out, char **errmsg);
void parsed_release(struct parsed *ps);

/* ---- index.c: per-operation lookup ------------------------------------ */

/* One glob of one rule, as one operation (or the flag list) sees it. The
 * glob's bigrams are copied here so a scan rejects most entries without
 * touching the glob. */
struct entry {
	uint32_t order;		/* position of the glob in the file */
	uint8_t action;		/* enum policy_action */
	uint8_t by;		/* enum rule_by */
	bool in_repo;		/* the exemption needs the caller in the
				 * path's repository (not above it) */
	unsigned line;
	const struct glob *g;
	uint64_t bigrams;
	const struct glob *const *callers;	/* when by != BY_ANY */
	uint32_t ncallers;
};

struct bucket {
	const char *key;
	uint32_t keylen, hash;
	struct entry *v;	/* in file order; NULL: empty slot */
	uint32_t n;
};

/*
 * The entries one operation consults, in three disjoint classes: those
 * whose glob starts with a literal component (found by hashing the path's
 * first component), those that end with one (the last component), and the
 * rest, scanned in order. `all` holds every entry in file order.
 */
struct index {
	const struct entry *all;
	uint32_t nall;
	const struct entry *cond;	/* entries of caller-conditioned rules,
					 * in file order; never in `all` */
	uint32_t ncond;
	const struct entry *general;
	uint32_t ngeneral;
	const struct bucket *first, *last;	/* NULL when empty */
	uint32_t first_mask, last_mask;		/* table size - 1 */
};

/* Build ix from the rules of ps that apply: an entry for each glob of each
 * rule r with (r->ops & opmask) and kind != RULE_FLAG, or, when flags is
 * true, of each flag rule. Entries of rules with a caller condition go to
 * ix->cond, the others to ix->all and the lookup tables. */
int index_build(struct arena *a, const struct parsed *ps, uint32_t opmask,
		bool flags, struct index *ix);
/* The first entry in file order whose glob matches path, or NULL. */
const struct entry *index_match(const struct index *ix, const char *path,
				size_t len);
/* The same by scanning ix->all (for tests: both must agree). */
const struct entry *index_match_linear(const struct index *ix,
				       const char *path, size_t len);

/* ---- engine.c: struct policy ------------------------------------------ */

struct policy {
	struct arena arena;
	const char *name;
	const char *text;	/* NUL-terminated copy of the file */
	size_t text_len;
	size_t nrules;
	struct index by_op[POLICY_OP__COUNT];
	struct index flags;
	bool has_hide;
	struct policy_limits limits;
	const struct glob *const *unlimited;	/* not counted as deletes */
	size_t nunlimited;
	const struct glob *const *unlimited_by;	/* callers not counted */
	size_t nunlimited_by;
	bool unlimited_ignored;		/* git-ignored real paths not counted */
	bool network_denied;
	uint32_t control_denied;
	const char *const *exec_text;
	const struct glob *const *exec;
	const unsigned *exec_line;
	size_t nexec;
};

/* ---- default_policy.c (generated from default.policy) ----------------- */

extern const char policy_default_data[];
extern const size_t policy_default_size;

#endif /* TXFS_POLICY_INT_H */
