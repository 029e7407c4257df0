/* SPDX-License-Identifier: Apache-2.0 */
/*
 * parser.c - policy text to rules (grammar: txfs.policy(5)).
 *
 *   deny OPS GLOB...       allow OPS GLOB...
 *   hide GLOB...           readonly GLOB...        flag GLOB...
 *   limit bytes|file-size SIZE                     limit files|deletes N
 *   limit deletes N except GLOB...
 *   limit timeout|cpu DURATION  limit memory SIZE  limit pids N  (txfs run)
 *   network deny           exec deny GLOB...       control deny VERB...
 *
 * deny, allow and readonly rules may end with a caller condition:
 * `except-by EXE...` (the rule does not apply to those programs) or
 * `only-by EXE...` (it applies to them only); EXE is an absolute path
 * glob matched against the calling process's executable. `except-by
 * EXE... in-repo`: the exemption also needs the caller's working folder
 * not to be above the repository the path is in (see txfs.policy(5)).
 *
 * Each line is parsed on its own through the keyword table; every mistake
 * is reported at the column of the token that is wrong (or just after the
 * last token when something is missing), and parsing goes on with the
 * next token or line so one run reports all of them. A file with any
 * error yields no policy at all.
 *
 * Output (struct parsed): rules in file order, each naming a slice of the
 * globs array; `readonly` becomes a deny of OPMASK_MODIFY, `hide` a rule
 * for every operation whose globs also cover everything below what they
 * match (a hidden folder hides its contents). Limits keep the line that
 * set them (0: unset).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

/* One line being parsed. */
struct pline {
	struct arena *a;
	struct diag *diag;
	struct parsed *out;
	const struct token *t;	/* t[0] is the keyword */
	size_t n;
};

struct keyword {
	const char *word;
	int (*parse)(struct pline *l);
};

static bool tok_is(const struct token *t, const char *word)
{
	return strlen(word) == t->len && memcmp(t->s, word, t->len) == 0;
}

static void error_at(struct pline *l, const struct token *t,
		     const char *msg)
{
	diag_error(l->diag, t->line, t->col, "%s", msg);
}

/* Something is missing after token t. */
static void missing(struct pline *l, const struct token *t, const char *msg)
{
	diag_error(l->diag, t->line, t->col + t->len, "%s", msg);
}

static void unexpected(struct pline *l, size_t from, const char *after)
{
	const struct token *t = &l->t[from];

	if (from < l->n)
		diag_error(l->diag, t->line, t->col, "unexpected '%.*s' after "
			   "'%s'", (int)t->len, t->s, after);
}

/* ---- globs ------------------------------------------------------------ */

static int parse_glob(struct pline *l, const struct token *t, bool and_below,
		      const struct glob **g)
{
	struct glob_error err = { 0 };
	int ret = glob_compile(l->a, t->s, t->len, and_below, g, &err);

	if (ret == -EINVAL)
		diag_error(l->diag, t->line, t->col + (uint32_t)err.off,
			   "%s", err.msg);
	return ret;
}

/* Compile t[from..n) into *v; returns 0 or -ENOMEM (bad globs are only
 * reported). */
static int parse_globs(struct pline *l, size_t from, bool and_below,
		       const struct glob ***v, size_t *n, size_t *cap)
{
	const struct glob *g, **slot;
	int ret;

	for (size_t i = from; i < l->n; i++) {
		ret = parse_glob(l, &l->t[i], and_below, &g);
		if (ret == -ENOMEM)
			return ret;
		if (ret)
			continue;
		slot = vec_push(v, n, cap, sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		*slot = g;
	}
	return 0;
}

/* The index of the first `except-by`/`only-by` token after from, or n. */
static size_t find_by(const struct pline *l, size_t from)
{
	for (size_t i = from; i < l->n; i++)
		if (tok_is(&l->t[i], "except-by") || tok_is(&l->t[i], "only-by"))
			return i;
	return l->n;
}

/* One executable glob into *v: an absolute path, compiled without its
 * '/'. */
static int parse_caller(struct pline *l, const struct token *t,
			const struct glob ***v, size_t *n, size_t *cap)
{
	struct token rel = *t;
	const struct glob *g, **slot;
	int ret;

	if (t->len < 2 || t->s[0] != '/') {
		error_at(l, t, "expected the absolute path of a program (e.g. "
			 "/usr/bin/git)");
		return 0;
	}
	rel.s++;
	rel.len--;
	rel.col++;
	ret = parse_glob(l, &rel, false, &g);
	if (ret)
		return ret == -ENOMEM ? ret : 0;
	slot = vec_push(v, n, cap, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = g;
	return 0;
}

/* The caller condition t[at..n) of rule r (at == n: none). */
static int parse_by(struct pline *l, enum rule_kind kind, size_t at,
		    struct rule *r)
{
	int ret;

	r->cfirst = l->out->ncallers;
	if (at >= l->n)
		return 0;
	if (kind != RULE_DENY && kind != RULE_ALLOW) {
		error_at(l, &l->t[at], "a caller condition is only allowed on "
			 "deny, allow and readonly rules");
		return 0;
	}
	r->by = tok_is(&l->t[at], "except-by") ? BY_EXCEPT : BY_ONLY;
	if (at + 1 >= l->n)
		missing(l, &l->t[at], "missing program path after the caller "
			"condition (e.g. 'except-by /usr/bin/git')");
	for (size_t i = at + 1; i < l->n; i++) {
		if (tok_is(&l->t[i], "in-repo")) {
			if (r->by != BY_EXCEPT || i + 1 != l->n || i == at + 1)
				error_at(l, &l->t[i], "'in-repo' goes last, "
					 "after the programs of 'except-by'");
			r->in_repo = true;
			break;
		}
		if (find_by(l, i) == i) {
			error_at(l, &l->t[i], "only one caller condition per "
				 "rule");
			break;
		}
		if ((ret = parse_caller(l, &l->t[i], &l->out->callers,
					&l->out->ncallers, &l->out->capcallers)))
			return ret;
	}
	r->cn = l->out->ncallers - r->cfirst;
	return 0;
}

static int add_rule(struct pline *l, enum rule_kind kind, uint32_t ops,
		    size_t from)
{
	struct parsed *o = l->out;
	size_t first = o->nglobs, by = find_by(l, from), n = l->n;
	struct rule r = { .kind = (uint8_t)kind, .ops = ops,
			  .line = l->t[0].line, .first = first };
	struct rule *slot;
	int ret;

	if (by == from && by < n)
		missing(l, &l->t[from - 1], "missing glob before the caller "
			"condition");
	l->n = by;	/* the globs end where the condition starts */
	ret = parse_globs(l, from, kind == RULE_HIDE, &o->globs, &o->nglobs,
			  &o->capglobs);
	l->n = n;
	if (ret || (ret = parse_by(l, kind, by, &r)))
		return ret;
	r.n = o->nglobs - first;
	slot = vec_push(&o->rules, &o->nrules, &o->caprules, sizeof(*slot));
	if (!slot)
		return -ENOMEM;
	*slot = r;
	return 0;
}

/* ---- operations -------------------------------------------------------- */

static bool looks_like_glob(const struct token *t)
{
	for (uint32_t i = 0; i < t->len; i++)
		if (t->s[i] && strchr("/*?[.", t->s[i]))
			return true;
	return false;
}

static void bad_op(struct pline *l, const struct token *t, uint32_t off,
		   uint32_t len)
{
	if (!len)
		diag_error(l->diag, t->line, t->col + off,
			   "empty operation in the list");
	else if (off == 0 && looks_like_glob(t))
		error_at(l, t, "expected a list of operations before the "
			 "globs (e.g. 'deny modify GLOB')");
	else
		diag_error(l->diag, t->line, t->col + off, "unknown operation "
			   "'%.*s' (expected read, write, create, delete, "
			   "rename, chmod, chown, truncate, link, symlink, "
			   "mkdir, xattr, modify or all)", (int)len,
			   t->s + off);
}

/* A comma list of operations; false if any element is wrong. */
static bool parse_ops(struct pline *l, const struct token *t, uint32_t *mask)
{
	uint32_t off = 0, end, m;
	bool ok = true;

	*mask = 0;
	for (;;) {
		const char *comma = memchr(t->s + off, ',', t->len - off);

		end = comma ? (uint32_t)(comma - t->s) : t->len;
		if (ops_parse_word(t->s + off, end - off, &m) == 0) {
			*mask |= m;
		} else {
			bad_op(l, t, off, end - off);
			ok = false;
			if (off == 0 && end - off && looks_like_glob(t))
				return false;
		}
		if (!comma)
			return ok;
		off = end + 1;
	}
}

/* ---- rules ------------------------------------------------------------ */

static int parse_ops_rule(struct pline *l, enum rule_kind kind)
{
	uint32_t ops;

	if (l->n < 2) {
		missing(l, &l->t[0], "missing operations and globs (e.g. "
			"'deny modify GLOB')");
		return 0;
	}
	if (!parse_ops(l, &l->t[1], &ops))
		return add_rule(l, kind, 0, 2);	/* still check the globs */
	if (l->n < 3) {
		missing(l, &l->t[1], "missing glob after the operations");
		return 0;
	}
	return add_rule(l, kind, ops, 2);
}

static int parse_deny(struct pline *l)
{
	return parse_ops_rule(l, RULE_DENY);
}

static int parse_allow(struct pline *l)
{
	if (connect_rule_is(l->t, l->n))	/* connect.c: for txfs run */
		return connect_rule_check(l->diag, l->t, l->n);
	return parse_ops_rule(l, RULE_ALLOW);
}

static int parse_glob_rule(struct pline *l, enum rule_kind kind,
			   uint32_t ops)
{
	if (l->n < 2) {
		diag_error(l->diag, l->t[0].line, l->t[0].col + l->t[0].len,
			   "'%.*s' needs at least one glob", (int)l->t[0].len,
			   l->t[0].s);
		return 0;
	}
	return add_rule(l, kind, ops, 1);
}

static int parse_hide(struct pline *l)
{
	return parse_glob_rule(l, RULE_HIDE, OPMASK_ALL);
}

static int parse_readonly(struct pline *l)
{
	return parse_glob_rule(l, RULE_DENY, OPMASK_MODIFY);
}

static int parse_flag(struct pline *l)
{
	return parse_glob_rule(l, RULE_FLAG, OPMASK_ALL);
}

/* ---- limits ----------------------------------------------------------- */

enum limit_value { LV_COUNT, LV_SIZE, LV_DURATION };

struct limit_kind {
	const char *word;
	enum limit_value kind;	/* how its value is written */
	bool positive;		/* 0 refused (it would run nothing) */
};

/* bytes .. deletes: the daemon's, per transaction; timeout .. pids: the
 * command's, for txfs run and txfs exec (cli/sandbox/reslimit.h). */
static const struct limit_kind limit_kinds[] = {
	{ "bytes", LV_SIZE, false }, { "files", LV_COUNT, false },
	{ "file-size", LV_SIZE, false }, { "deletes", LV_COUNT, false },
	{ "timeout", LV_DURATION, true }, { "memory", LV_SIZE, true },
	{ "cpu", LV_DURATION, true }, { "pids", LV_COUNT, true },
};

#define LIMIT_KINDS_TEXT "bytes, files, file-size, deletes, timeout, " \
	"memory, cpu or pids"

static uint64_t *limit_slot(struct policy_limits *lim, size_t k,
			    unsigned **line)
{
	struct { uint64_t *v; unsigned *line; } slots[] = {
		{ &lim->bytes, &lim->bytes_line },
		{ &lim->files, &lim->files_line },
		{ &lim->file_size, &lim->file_size_line },
		{ &lim->deletes, &lim->deletes_line },
		{ &lim->timeout_ms, &lim->timeout_line },
		{ &lim->memory, &lim->memory_line },
		{ &lim->cpu_ms, &lim->cpu_line },
		{ &lim->pids, &lim->pids_line },
	};

	*line = slots[k].line;
	return slots[k].v;
}

/* The value of limit kind k in token t (units.c). Returns NULL or an
 * error message with *off the offset of the mistake. */
static const char *parse_value(const struct token *t, size_t k,
			       uint64_t *val, uint32_t *off)
{
	const struct limit_kind *lk = &limit_kinds[k];
	const char *msg;
	size_t o = 0;

	switch (lk->kind) {
	case LV_SIZE:
		msg = policy_parse_size(t->s, t->len, val, &o);
		break;
	case LV_DURATION:
		msg = policy_parse_duration(t->s, t->len, val, &o);
		break;
	case LV_COUNT:
	default:
		msg = policy_parse_count(t->s, t->len, val, &o);
		break;
	}
	*off = (uint32_t)o;
	if (!msg && lk->positive && *val == 0) {
		*off = 0;
		msg = "must be more than 0 (leave the line out for no limit)";
	}
	return msg;
}

static int find_limit_kind(const struct token *t, size_t *k)
{
	for (size_t i = 0; i < sizeof(limit_kinds) / sizeof(*limit_kinds); i++) {
		if (tok_is(t, limit_kinds[i].word)) {
			*k = i;
			return 0;
		}
	}
	return -EINVAL;
}

static void set_limit(struct pline *l, size_t k, uint64_t v)
{
	unsigned *line;
	uint64_t *slot = limit_slot(&l->out->limits, k, &line);

	if (*line) {
		diag_error(l->diag, l->t[1].line, l->t[1].col, "duplicate "
			   "'limit %s': already set on line %u",
			   limit_kinds[k].word, *line);
		return;
	}
	*slot = v;
	*line = l->t[0].line;
}

/* The index of `except-ignored` in [from, to), or to. */
static size_t find_ignored(const struct pline *l, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (tok_is(&l->t[i], "except-ignored"))
			return i;
	return to;
}

/* `limit deletes N [except GLOB...] [except-ignored] [except-by EXE...]`
 * (except-ignored may also come first): losses at those paths, of what
 * git ignores in the real directory, or made by those programs, are not
 * counted. */
static int parse_uncounted(struct pline *l)
{
	struct parsed *o = l->out;
	size_t by = find_by(l, 3), n = l->n, from = 3, to = by;
	size_t ign = find_ignored(l, 3, by);
	int ret = 0;

	if (ign < by) {
		if (find_ignored(l, ign + 1, by) < by) {
			error_at(l, &l->t[find_ignored(l, ign + 1, by)],
				 "'except-ignored' given twice");
			return 0;
		}
		if (ign != 3 && ign != by - 1) {
			error_at(l, &l->t[ign], "'except-ignored' goes right "
				 "after the limit value or after the globs "
				 "of 'except'");
			return 0;
		}
		o->unlimited_ignored = true;
		if (ign == 3)
			from = 4;
		else
			to = ign;
	}
	if (from < to && tok_is(&l->t[from], "except")) {
		if (to < from + 2)
			missing(l, &l->t[to - 1], "missing glob after 'except'");
		l->n = to;
		ret = parse_globs(l, from + 1, false, &o->unlimited,
				  &o->nunlimited, &o->capunlimited);
		l->n = n;
	} else if (from < to) {
		unexpected(l, from, from == 3 ? "the limit value" :
			   "except-ignored");
		return 0;
	}
	if (ret || by == n)
		return ret;
	if (!tok_is(&l->t[by], "except-by")) {
		error_at(l, &l->t[by], "a limit takes 'except-by', not "
			 "'only-by'");
		return 0;
	}
	if (by + 1 == n)
		missing(l, &l->t[by], "missing program path after 'except-by'");
	for (size_t i = by + 1; i < n && ret == 0; i++)
		ret = parse_caller(l, &l->t[i], &o->unlimited_by,
				   &o->nunlimited_by, &o->capunlimited_by);
	return ret;
}

static int parse_limit(struct pline *l)
{
	const char *msg;
	uint64_t v = 0;
	uint32_t off;
	size_t k;

	if (l->n < 2) {
		missing(l, &l->t[0], "missing limit kind ("
			LIMIT_KINDS_TEXT ")");
		return 0;
	}
	if (find_limit_kind(&l->t[1], &k)) {
		error_at(l, &l->t[1], "unknown limit (expected "
			 LIMIT_KINDS_TEXT ")");
		return 0;
	}
	if (l->n < 3) {
		missing(l, &l->t[1], "missing value for the limit");
		return 0;
	}
	msg = parse_value(&l->t[2], k, &v, &off);
	if (msg)
		diag_error(l->diag, l->t[2].line, l->t[2].col + off, "%s", msg);
	else
		set_limit(l, k, v);
	if (k == 3 && l->n > 3)
		return parse_uncounted(l);
	unexpected(l, 3, "the limit value");
	return 0;
}

/* ---- network, exec, control ------------------------------------------- */

/* `KEYWORD deny`: false (after an error) if t[1] is not "deny". */
static bool want_deny(struct pline *l, const char *what)
{
	if (l->n < 2) {
		diag_error(l->diag, l->t[0].line, l->t[0].col + l->t[0].len,
			   "expected 'deny' after '%s'", what);
		return false;
	}
	if (!tok_is(&l->t[1], "deny")) {
		diag_error(l->diag, l->t[1].line, l->t[1].col, "unknown %s "
			   "rule '%.*s' (only '%s deny' exists)", what,
			   (int)l->t[1].len, l->t[1].s, what);
		return false;
	}
	return true;
}

static int parse_network(struct pline *l)
{
	if (!want_deny(l, "network"))
		return 0;
	l->out->network_denied = true;
	unexpected(l, 2, "network deny");
	return 0;
}

static int parse_exec(struct pline *l)
{
	struct parsed *o = l->out;

	if (!want_deny(l, "exec"))
		return 0;
	if (l->n < 3) {
		missing(l, &l->t[1], "'exec deny' needs at least one glob");
		return 0;
	}
	size_t before = o->nexec;
	int ret = parse_globs(l, 2, false, &o->exec, &o->nexec, &o->capexec);

	for (size_t i = before; ret == 0 && i < o->nexec; i++) {
		unsigned *slot = vec_push(&o->exec_line, &o->nexec_line,
					  &o->capexec_line, sizeof(*slot));

		if (!slot)
			return -ENOMEM;
		*slot = l->t[0].line;
	}
	return ret;
}

static int parse_control(struct pline *l)
{
	const struct token *t;
	uint32_t bit;

	if (!want_deny(l, "control"))
		return 0;
	if (l->n < 3)
		missing(l, &l->t[1], "'control deny' needs at least one verb "
			"(commit, rollback, savepoint or release)");
	for (size_t i = 2; i < l->n; i++) {
		t = &l->t[i];
		if (control_verb_parse(t->s, t->len, &bit) == 0)
			l->out->control_denied |= bit;
		else
			error_at(l, t, "unknown control verb (expected "
				 "commit, rollback, savepoint or release)");
	}
	return 0;
}

/* `allow-write PATH...`: absolute or ~/ paths (allow_write.c reads them). */
static int parse_allow_write(struct pline *l)
{
	if (l->n < 2)
		missing(l, &l->t[0], "'allow-write' needs at least one path");
	for (size_t i = 1; i < l->n; i++)
		if (l->t[i].s[0] != '/' && (l->t[i].len < 2 ||
		    l->t[i].s[0] != '~' || l->t[i].s[1] != '/'))
			error_at(l, &l->t[i], "allow-write takes absolute "
				 "paths or ~/PATH");
	return 0;
}

/* ---- lines and files -------------------------------------------------- */

static const struct keyword keywords[] = {
	{ "deny", parse_deny },		{ "allow", parse_allow },
	{ "hide", parse_hide },		{ "readonly", parse_readonly },
	{ "flag", parse_flag },		{ "limit", parse_limit },
	{ "network", parse_network },	{ "exec", parse_exec },
	{ "control", parse_control },	{ "allow-write", parse_allow_write },
};

static int parse_line(struct pline *l)
{
	for (size_t i = 0; i < sizeof(keywords) / sizeof(*keywords); i++)
		if (tok_is(&l->t[0], keywords[i].word))
			return keywords[i].parse(l);
	diag_error(l->diag, l->t[0].line, l->t[0].col, "unknown rule '%.*s' "
		   "(expected deny, allow, hide, readonly, flag, limit, "
		   "network, exec or control)", (int)l->t[0].len, l->t[0].s);
	return 0;
}

static void limits_init(struct policy_limits *lim)
{
	*lim = (struct policy_limits){
		.bytes = UINT64_MAX, .files = UINT64_MAX,
		.file_size = UINT64_MAX, .deletes = UINT64_MAX,
		.timeout_ms = UINT64_MAX, .memory = UINT64_MAX,
		.cpu_ms = UINT64_MAX, .pids = UINT64_MAX,
	};
}

static int parse_lines(struct lexer *lx, struct pline *l)
{
	struct toks toks = { 0 };
	int ret;

	while ((ret = lexer_line(lx, &toks)) > 0) {
		if (!toks.n)
			continue;
		l->t = toks.v;
		l->n = toks.n;
		l->out->nstatements++;
		ret = parse_line(l);
		if (ret)
			break;
	}
	free(toks.v);
	return ret;
}

int parse_policy(struct arena *a, const char *name, const char *text,
		 size_t len, struct parsed *out, char **errmsg)
{
	struct diag diag = { .name = name };
	struct lexer lx = { .p = text, .end = text + len, .diag = &diag };
	struct pline l = { .a = a, .diag = &diag, .out = out };
	int ret;

	memset(out, 0, sizeof(*out));
	limits_init(&out->limits);
	ret = parse_lines(&lx, &l);
	if (ret)
		goto out_release;
	if (diag.count) {
		ret = -EINVAL;
		if (errmsg)
			*errmsg = sbuf_steal(&diag.out);
		if (errmsg && !*errmsg)
			ret = -ENOMEM;
	}
out_release:
	sbuf_release(&diag.out);
	if (ret)
		parsed_release(out);
	return ret;
}

void parsed_release(struct parsed *ps)
{
	free(ps->rules);
	free(ps->globs);
	free(ps->callers);
	free(ps->unlimited);
	free(ps->unlimited_by);
	free(ps->exec);
	free(ps->exec_line);
	memset(ps, 0, sizeof(*ps));
}
