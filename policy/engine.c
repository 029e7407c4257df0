/* SPDX-License-Identifier: Apache-2.0 */
/*
 * engine.c - struct policy: loading, and every question the filesystem
 * asks of it.
 *
 * A struct policy (policy_int.h) owns one arena holding its name, a copy of
 * its text, the compiled globs and one index per operation plus one for the
 * flag rules. It is built completely before policy_load_*() returns and
 * never written afterwards, so any number of threads may query it.
 *
 * Decisions: the first deny/allow/readonly/hide rule in file order whose
 * operations include op and whose glob matches decides (index_match()).
 * Flag rules never decide; they only mark a modifying operation as
 * flagged. A path is hidden when the first rule that decides a read of it
 * is a hide rule, so an earlier `allow read` is an exception to a hide as
 * to a deny. A NULL policy allows everything.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "policy_int.h"

#define POLICY_MAX_SIZE (4u << 20)

static const struct policy_limits no_limits = {
	.bytes = UINT64_MAX, .files = UINT64_MAX,
	.file_size = UINT64_MAX, .deletes = UINT64_MAX,
	.timeout_ms = UINT64_MAX, .memory = UINT64_MAX,
	.cpu_ms = UINT64_MAX, .pids = UINT64_MAX,
};

/* ---- building --------------------------------------------------------- */

static int copy_exec(struct policy *p, const struct parsed *ps)
{
	const struct glob **g = arena_alloc(&p->arena,
					    ps->nexec * sizeof(*g));
	const char **t = arena_alloc(&p->arena, ps->nexec * sizeof(*t));
	unsigned *ln = arena_alloc(&p->arena, ps->nexec * sizeof(*ln));

	if (!g || !t || !ln)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nexec; i++) {
		g[i] = ps->exec[i];
		t[i] = ps->exec[i]->text;
		ln[i] = i < ps->nexec_line ? ps->exec_line[i] : 0;
	}
	p->exec = g;
	p->exec_text = t;
	p->exec_line = ln;
	p->nexec = ps->nexec;
	return 0;
}

static int build(struct policy *p, const struct parsed *ps)
{
	int ret;

	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		ret = index_build(&p->arena, ps, 1u << op, false, &p->by_op[op]);
		if (ret)
			return ret;
	}
	ret = index_build(&p->arena, ps, 0, true, &p->flags);
	if (ret)
		return ret;
	for (size_t i = 0; i < ps->nrules; i++)
		p->has_hide |= ps->rules[i].kind == RULE_HIDE;
	p->limits = ps->limits;
	const struct glob **u = arena_alloc(&p->arena, ps->nunlimited *
					    sizeof(*u));

	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nunlimited; i++)
		u[i] = ps->unlimited[i];
	p->unlimited = u;
	p->nunlimited = ps->nunlimited;
	u = arena_alloc(&p->arena, ps->nunlimited_by * sizeof(*u));
	if (!u)
		return -ENOMEM;
	for (size_t i = 0; i < ps->nunlimited_by; i++)
		u[i] = ps->unlimited_by[i];
	p->unlimited_by = u;
	p->nunlimited_by = ps->nunlimited_by;
	p->unlimited_ignored = ps->unlimited_ignored;
	p->network_denied = ps->network_denied;
	p->control_denied = ps->control_denied;
	p->nrules = ps->nstatements;
	return copy_exec(p, ps);
}

int policy_load_buf(const char *name, const char *text, size_t len,
		    struct policy **out, char **errmsg)
{
	struct parsed ps;
	struct policy *p;
	int ret = -ENOMEM;

	*out = NULL;
	if (errmsg)
		*errmsg = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->name = arena_strndup(&p->arena, name, strlen(name));
	p->text = arena_strndup(&p->arena, text, len);
	p->text_len = len;
	if (!p->name || !p->text)
		goto out_free;
	ret = parse_policy(&p->arena, p->name, p->text, len, &ps, errmsg);
	if (ret)
		goto out_free;
	ret = build(p, &ps);
	parsed_release(&ps);
	if (ret)
		goto out_free;
	*out = p;
	return 0;
out_free:
	policy_free(p);
	return ret;
}

/* The whole of fd into a malloc'd, NUL-terminated buffer. */
static int read_all(int fd, char **buf, size_t *len)
{
	struct sbuf b = { 0 };
	char chunk[8192];
	ssize_t r;
	int ret = 0;

	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			goto out_release;
		}
		if (b.len + (size_t)r > POLICY_MAX_SIZE) {
			ret = -EFBIG;
			goto out_release;
		}
		sbuf_add(&b, chunk, (size_t)r);
	}
	*len = b.len;
	*buf = sbuf_steal(&b);
	return *buf ? 0 : -ENOMEM;
out_release:
	sbuf_release(&b);
	return ret;
}

int policy_load_file(const char *path, struct policy **out, char **errmsg)
{
	char *text;
	size_t len;
	int fd, ret;

	*out = NULL;
	if (errmsg)
		*errmsg = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return -errno;
	ret = read_all(fd, &text, &len);
	close(fd);
	if (ret)
		return ret;
	ret = policy_load_buf(path, text, len, out, errmsg);
	free(text);
	return ret;
}

const char *policy_default_text(void)
{
	return policy_default_data;
}

int policy_load_default(struct policy **out)
{
	char *msg = NULL;
	int ret;

	ret = policy_load_buf("default.policy", policy_default_data,
			      policy_default_size, out, &msg);
	free(msg);
	return ret;
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	arena_release(&p->arena);
	free(p);
}

/* ---- decisions -------------------------------------------------------- */

static void verdict(const struct policy *p, const struct entry *e,
		    struct policy_verdict *v)
{
	v->action = e ? (enum policy_action)e->action : POLICY_ALLOW;
	v->flagged = false;
	v->line = e ? e->line : 0;
	v->file = e ? p->name : NULL;
}

/* Flags only matter for operations that change something. */
static void flag_verdict(const struct policy *p, enum policy_op op,
			 const char *path, size_t len,
			 struct policy_verdict *v)
{
	const struct entry *f;

	if (op == POLICY_OP_READ || !p->flags.nall)
		return;
	f = index_match(&p->flags, path, len);
	if (!f)
		return;
	v->flagged = true;
	if (!v->line) {
		v->line = f->line;
		v->file = p->name;
	}
}

/* The caller's executable, asked for once (the first time a conditioned
 * rule matches the path). */
struct caller_exe {
	const struct policy_caller *who;
	bool asked, known;
	char path[4096];
};

static bool caller_matches(struct caller_exe *ce, const struct entry *e)
{
	if (!ce->asked) {
		ce->asked = true;
		ce->known = ce->who && ce->who->exe &&
			    ce->who->exe(ce->who->arg, ce->path,
					 sizeof(ce->path)) == 0 &&
			    ce->path[0] == '/';
	}
	if (!ce->known)
		return false;
	for (uint32_t i = 0; i < e->ncallers; i++)
		if (glob_match(e->callers[i], ce->path + 1,
			       strlen(ce->path + 1)))
			return true;
	return false;
}

/* The repository of path: the folder holding its first component named
 * .git (path itself if none). */
static size_t repo_root_len(const char *path, size_t len)
{
	for (size_t i = 0; i + 4 <= len; i++)
		if ((i == 0 || path[i - 1] == '/') && !memcmp(path + i, ".git", 4)
		    && (i + 4 == len || path[i + 4] == '/'))
			return i ? i - 1 : 0;
	return len;
}

/* in-repo: is the caller's working folder strictly above path's
 * repository (git run from a parent folder: `git clean -ffdx` there
 * removes nested repositories)? Unknown counts as above. */
static bool caller_above(const struct policy_caller *who, const char *path,
			 size_t len)
{
	char cwd[4096];
	size_t root = repo_root_len(path, len), n;
	int rc = who && who->cwd ? who->cwd(who->arg, cwd, sizeof(cwd))
				 : -EIO;

	if (rc == -ENOENT)
		return false;
	if (rc)
		return true;
	n = strlen(cwd);
	if (n == 0)
		return root > 0;
	return n < root && path[n] == '/' && !memcmp(cwd, path, n);
}

/* The first conditioned entry before `best` that matches path and applies
 * to the caller, else best. */
static const struct entry *cond_match(const struct index *ix,
				      const struct entry *best,
				      const char *path, size_t len,
				      const struct policy_caller *who)
{
	struct caller_exe ce = { .who = who };
	const struct entry *e;

	for (uint32_t i = 0; i < ix->ncond; i++) {
		e = &ix->cond[i];
		if (best && e->order > best->order)
			break;
		if (!glob_match(e->g, path, len))
			continue;
		bool by = caller_matches(&ce, e);

		if (by && e->in_repo && caller_above(who, path, len))
			by = false;
		if (by == (e->by == BY_ONLY))
			return e;
	}
	return best;
}

int policy_check_by(const struct policy *p, enum policy_op op,
		    const char *path, size_t len,
		    const struct policy_caller *who, struct policy_verdict *v)
{
	const struct entry *e = NULL;

	if ((unsigned)op >= POLICY_OP__COUNT)
		return -EINVAL;
	if (!path)
		path = "";
	if (p) {
		e = index_match(&p->by_op[op], path, len);
		if (p->by_op[op].ncond)
			e = cond_match(&p->by_op[op], e, path, len, who);
	}
	if (v) {
		verdict(p, e, v);
		if (p)
			flag_verdict(p, op, path, len, v);
	}
	return e && e->action != POLICY_ALLOW ? -EACCES : 0;
}

int policy_check(const struct policy *p, enum policy_op op,
		 const char *path, size_t len, struct policy_verdict *v)
{
	return policy_check_by(p, op, path, len, NULL, v);
}

/*
 * The first rule that could deny or hide op on some path strictly below
 * path, unless an allow rule before it matches every such path (then none
 * of the later rules can decide anything there). NULL: nothing below can
 * be refused.
 */
static const struct entry *tree_match(const struct index *ix, int want,
				      const char *path, size_t len)
{
	const struct entry *e, *c = NULL;

	/* conditioned rules may apply to whoever calls: the first one that
	 * could match below competes with the unconditioned ones by order */
	for (uint32_t i = 0; i < ix->ncond && !c; i++)
		if ((want < 0 || ix->cond[i].action == want) &&
		    ix->cond[i].action != POLICY_ALLOW &&
		    glob_match_below(ix->cond[i].g, path, len))
			c = &ix->cond[i];
	for (uint32_t i = 0; i < ix->nall; i++) {
		e = &ix->all[i];
		if (c && c->order < e->order)
			return c;
		if (e->action == POLICY_ALLOW) {
			if (glob_covers_below(e->g, path, len))
				return NULL;
		} else if ((want < 0 || e->action == want) &&
			   glob_match_below(e->g, path, len)) {
			return e;
		}
	}
	return c;
}

int policy_check_tree(const struct policy *p, enum policy_op op,
		      const char *path, size_t len, struct policy_verdict *v)
{
	const struct entry *e = NULL;

	if ((unsigned)op >= POLICY_OP__COUNT)
		return -EINVAL;
	if (p)
		e = tree_match(&p->by_op[op], -1, path ? path : "", len);
	if (v)
		verdict(p, e, v);
	return e ? -EACCES : 0;
}

bool policy_is_hidden(const struct policy *p, const char *path, size_t len)
{
	const struct entry *e;

	if (!p || !p->has_hide)
		return false;
	e = index_match(&p->by_op[POLICY_OP_READ], path ? path : "", len);
	return e && e->action == POLICY_HIDE;
}

bool policy_hides_below(const struct policy *p, const char *path, size_t len)
{
	if (!p || !p->has_hide)
		return false;
	return tree_match(&p->by_op[POLICY_OP_READ], POLICY_HIDE,
			  path ? path : "", len) != NULL;
}

bool policy_is_flagged(const struct policy *p, const char *path, size_t len)
{
	return p && index_match(&p->flags, path ? path : "", len);
}

/* ---- the rest of the policy ------------------------------------------- */

const struct policy_limits *policy_limits(const struct policy *p)
{
	return p ? &p->limits : &no_limits;
}

bool policy_delete_uncounted(const struct policy *p, const char *path,
			     size_t len)
{
	for (size_t i = 0; p && path && i < p->nunlimited; i++)
		if (glob_match(p->unlimited[i], path, len))
			return true;
	return false;
}

bool policy_delete_uncounted_by(const struct policy *p,
				const struct policy_caller *who)
{
	char exe[4096];

	if (!p || !p->nunlimited_by || !who || !who->exe ||
	    who->exe(who->arg, exe, sizeof(exe)) || exe[0] != '/')
		return false;
	for (size_t i = 0; i < p->nunlimited_by; i++)
		if (glob_match(p->unlimited_by[i], exe + 1, strlen(exe + 1)))
			return true;
	return false;
}

bool policy_delete_uncounted_ignored(const struct policy *p)
{
	return p && p->unlimited_ignored;
}

bool policy_has_uncounted(const struct policy *p)
{
	return p && (p->nunlimited || p->nunlimited_by ||
		     p->unlimited_ignored);
}

bool policy_network_denied(const struct policy *p)
{
	return p && p->network_denied;
}

bool policy_exec_denied(const struct policy *p, const char *path, size_t len)
{
	return policy_exec_rule(p, path, len) != 0;
}

unsigned policy_exec_rule(const struct policy *p, const char *path,
			  size_t len)
{
	for (size_t i = 0; p && i < p->nexec; i++)
		if (glob_match(p->exec[i], path ? path : "", len))
			return p->exec_line[i] ? p->exec_line[i] : 1;
	return 0;
}

bool policy_control_denied(const struct policy *p, const char *verb)
{
	uint32_t bit;

	if (!p || !verb || control_verb_parse(verb, strlen(verb), &bit))
		return false;
	return p->control_denied & bit;
}

size_t policy_exec_globs(const struct policy *p, const char *const **globs)
{
	*globs = p ? p->exec_text : NULL;
	return p ? p->nexec : 0;
}

const char *policy_text(const struct policy *p)
{
	return p ? p->text : "";
}

const char *policy_name(const struct policy *p)
{
	return p ? p->name : "";
}

bool policy_op_by_caller(const struct policy *p, enum policy_op op)
{
	return p && (unsigned)op < POLICY_OP__COUNT && p->by_op[op].ncond > 0;
}

static bool any_but_hide(const struct entry *e, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (e[i].action != POLICY_HIDE)
			return true;
	return false;
}

bool policy_op_has_rules(const struct policy *p, enum policy_op op)
{
	const struct index *ix;

	if (!p || (unsigned)op >= POLICY_OP__COUNT)
		return false;
	ix = &p->by_op[op];
	return any_but_hide(ix->all, ix->nall) ||
	       any_but_hide(ix->cond, ix->ncond);
}

size_t policy_rule_count(const struct policy *p)
{
	return p ? p->nrules : 0;
}

const char *policy_rule_text(const struct policy *p, unsigned line,
			     size_t *len)
{
	const char *s, *end, *nl;

	if (!p || !line)
		return NULL;
	s = p->text;
	end = s + p->text_len;
	for (unsigned l = 1; l < line; l++) {
		nl = memchr(s, '\n', (size_t)(end - s));
		if (!nl)
			return NULL;
		s = nl + 1;
	}
	nl = memchr(s, '\n', (size_t)(end - s));
	*len = (size_t)((nl ? nl : end) - s);
	while (*len && (s[*len - 1] == ' ' || s[*len - 1] == '\t' ||
			s[*len - 1] == '\r'))
		(*len)--;
	return s;
}
