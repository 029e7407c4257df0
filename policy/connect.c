// SPDX-License-Identifier: Apache-2.0
/*
 * connect.c - the `allow connect PATH...` rule (txfs.policy(5)): pathname
 * unix sockets outside the workspace that `txfs run` lets the command
 * connect to. The daemon has no use for it, so the parser only checks the
 * line (connect_rule_check) and txfs run reads the paths back from the
 * policy's text (policy_connect_globs), which keeps this rule out of the
 * parser's structures.
 *
 * Each PATH is an absolute fnmatch(3) pattern (FNM_PATHNAME: `*` does not
 * cross `/`), matched against the socket's real path after symlinks.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "policy_int.h"

static bool is_connect(const struct token *t, size_t n)
{
	return n >= 2 && t[0].len == 5 && !memcmp(t[0].s, "allow", 5) &&
	       t[1].len == 7 && !memcmp(t[1].s, "connect", 7);
}

bool connect_rule_is(const struct token *t, size_t n)
{
	return is_connect(t, n);
}

int connect_rule_check(struct diag *d, const struct token *t, size_t n)
{
	size_t i;

	if (n < 3)
		diag_error(d, t[1].line, t[1].col + t[1].len,
			   "'allow connect' needs at least one absolute path");
	for (i = 2; i < n; i++) {
		if (t[i].s[0] != '/')
			diag_error(d, t[i].line, t[i].col, "'allow connect' takes "
				   "absolute paths (a socket outside the workspace)");
		else if (t[i].len >= PATH_MAX)
			diag_error(d, t[i].line, t[i].col, "path longer than PATH_MAX");
	}
	return 0;
}

static int push(char ***v, size_t *n, const struct token *t)
{
	char **nv = realloc(*v, (*n + 2) * sizeof(*nv));

	if (!nv)
		return -ENOMEM;
	*v = nv;
	nv[*n] = strndup(t->s, t->len);
	if (!nv[*n])
		return -ENOMEM;
	nv[++*n] = NULL;
	return 0;
}

int policy_connect_globs(const struct policy *p, char ***out, size_t *nout)
{
	const char *text = policy_text(p);
	struct diag diag = { .name = "" };
	struct lexer lx = { .p = text, .end = text + strlen(text), .diag = &diag };
	struct toks toks = { 0 };
	int ret;

	*out = NULL;
	*nout = 0;
	while ((ret = lexer_line(&lx, &toks)) > 0) {
		if (!is_connect(toks.v, toks.n))
			continue;
		for (size_t i = 2; i < toks.n && ret > 0; i++)
			if (toks.v[i].s[0] == '/' && push(out, nout, &toks.v[i]) < 0)
				ret = -ENOMEM;
		if (ret < 0)
			break;
	}
	free(toks.v);
	sbuf_release(&diag.out);
	if (ret < 0) {
		policy_connect_free(*out, *nout);
		*out = NULL;
		*nout = 0;
	}
	return ret < 0 ? ret : 0;
}

void policy_connect_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}
