/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_parser.c - libFuzzer target: any bytes as a policy file.
 *
 * A refused text must come with error lines "fuzz.policy:LINE:COL: ..."
 * (or the final "too many errors" line) and no policy. An accepted one is
 * then queried: every operation on a set of paths (including the globs of
 * the policy itself, taken as paths), the index against a plain scan of
 * every rule, the tree questions, and the quoted rule line of each
 * verdict. Any crash, sanitizer report or abort() is a finding.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const paths[] = {
	"", "a", "a/b", "src/main.c", ".git", ".git/objects/ab/cd",
	".git/hooks/pre-commit", ".env", "x/.env.local", "build/x.o",
	"node_modules/p/i.js", "dir with space/f", "a/b/c/d/e/f/g",
	"\xff\xfe/x", "a\nb", "[x]", "*", "**",
};

static void check_errors(const char *msg)
{
	unsigned line, col;

	for (const char *s = msg; s; s = strchr(s, '\n')) {
		s += *s == '\n';
		if (!strncmp(s, "fuzz.policy: too many errors", 28))
			continue;
		if (sscanf(s, "fuzz.policy:%u:%u: ", &line, &col) != 2 ||
		    !line || !col)
			abort();
	}
}

static void check_verdict(const struct policy *p,
			  const struct policy_verdict *v, int ret)
{
	size_t len;

	if ((ret == 0) != (v->action == POLICY_ALLOW))
		abort();
	if (v->line && !policy_rule_text(p, v->line, &len))
		abort();
	if (v->line && v->file != policy_name(p))
		abort();
}

static void query(const struct policy *p, const char *path, size_t len)
{
	struct policy_verdict v;
	const struct entry *a, *b;
	int ret;

	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		ret = policy_check(p, op, path, len, &v);
		check_verdict(p, &v, ret);
		a = index_match(&p->by_op[op], path, len);
		b = index_match_linear(&p->by_op[op], path, len);
		if ((a == NULL) != (b == NULL) || (a && a->order != b->order))
			abort();
		ret = policy_check_tree(p, op, path, len, &v);
		check_verdict(p, &v, ret);
	}
	if (policy_is_hidden(p, path, len) &&
	    !policy_hides_below(p, "", 0))
		abort();
	policy_is_flagged(p, path, len);
	policy_exec_denied(p, path, len);
}

static void exercise(const struct policy *p)
{
	const char *const *globs;
	size_t n = policy_exec_globs(p, &globs);

	for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++)
		query(p, paths[i], strlen(paths[i]));
	for (size_t i = 0; i < n; i++)
		query(p, globs[i], strlen(globs[i]));
	for (uint32_t i = 0; i < p->by_op[0].nall; i++)
		query(p, p->by_op[0].all[i].g->text,
		      strlen(p->by_op[0].all[i].g->text));
	policy_control_denied(p, "commit");
	policy_network_denied(p);
	if (strlen(policy_text(p)) > p->text_len)
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy *p = NULL;
	char *msg = NULL;
	int ret;

	ret = policy_load_buf("fuzz.policy", (const char *)data, size, &p,
			      &msg);
	if (ret == -EINVAL) {
		if (p || !msg)
			abort();
		check_errors(msg);
	} else if (ret == 0) {
		if (!p || msg)
			abort();
		exercise(p);
	} else if (ret != -ENOMEM) {
		abort();
	}
	free(msg);
	policy_free(p);
	return 0;
}
