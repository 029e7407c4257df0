/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_policy.c - `txfs policy`: validate a policy, test one decision,
 * print the built-in default policy, reload a mount's policy.
 *
 *   txfs policy check FILE            "FILE: ok, N rules" or the errors
 *   txfs policy test FILE OP PATH     the decision and the rule behind it
 *   txfs policy default               the default policy's text
 *   txfs policy reload MNT            (cmd_txn.c, through the daemon)
 *
 * Exit status: 0 success (for `test`: the operation is allowed), 1 a
 * refused or failed operation (a policy with errors; for `test`: the
 * operation is denied or the path hidden), 2 wrong usage. Parse errors are
 * printed as the policy module reports them, "FILE:LINE:COL: what".
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "policy.h"

static const char usage[] =
	"usage: txfs policy check [--workspace DIR] FILE\n"
	"       txfs policy test FILE OP PATH\n"
	"       txfs policy default\n"
	"       txfs policy reload MNT\n"
	"\n"
	"  check    validate FILE; print every mistake as FILE:LINE:COL;\n"
	"           with --workspace DIR, also warn about each path a hide\n"
	"           rule hides that git tracks in DIR (index or history)\n"
	"  test     print what FILE decides for operation OP on PATH\n"
	"           (OP: read, write, create, delete, rename, chmod, chown,\n"
	"           truncate, link, symlink, mkdir, xattr; PATH relative to\n"
	"           the workspace root); exit 1 if it is refused\n"
	"  default  print the built-in default policy\n"
	"  reload   make the mount at MNT read its policy file again\n"
	"\n"
	"The policy language: txfs.policy(5).\n";

static int usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static int usage_error(const char *fmt, ...)
{
	va_list ap;

	fputs("txfs: policy: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	return 2;
}

/* Load FILE, printing why not. */
static int load(const char *cmd, const char *file, struct policy **p)
{
	char *msg = NULL;
	int ret = policy_load_file(file, p, &msg);

	if (ret == -EINVAL && msg)
		fprintf(stderr, "%s\n", msg);
	else if (ret)
		cli_err(-ret, "policy %s: %s", cmd, file);
	free(msg);
	return ret;
}

static int policy_check_cmd(int argc, char **argv)
{
	const char *ws = NULL, *file = NULL;
	struct policy *p;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--workspace") && i + 1 < argc)
			ws = argv[++i];
		else if (!strncmp(argv[i], "--workspace=", 12))
			ws = argv[i] + 12;
		else if (!file && argv[i][0] != '-')
			file = argv[i];
		else
			return usage_error("check: unexpected '%s'", argv[i]);
	}
	if (!file)
		return usage_error("%s needs exactly one FILE", "check");
	if (load("check", file, &p))
		return 1;
	printf("%s: ok, %zu rule%s\n", file, policy_rule_count(p),
	       policy_rule_count(p) == 1 ? "" : "s");
	if (ws)
		warn_hidden_tracked(ws, p, file);
	policy_free(p);
	return 0;
}

/*
 * PATH as the engine wants it: relative, no "." or empty components, no
 * trailing '/'. A leading '/' means the workspace root. Returns -EINVAL
 * for a ".." component.
 */
static int canonical_path(const char *in, char *out)
{
	size_t n = 0, k;

	while (*in) {
		k = strcspn(in, "/");
		if (k == 2 && in[0] == '.' && in[1] == '.')
			return -EINVAL;
		if (k && !(k == 1 && in[0] == '.')) {
			if (n)
				out[n++] = '/';
			memcpy(out + n, in, k);
			n += k;
		}
		in += k + (in[k] == '/');
	}
	out[n] = '\0';
	return 0;
}

static void print_verdict(const struct policy *p, enum policy_op op,
			  const char *path, const struct policy_verdict *v)
{
	const char *rule;
	size_t len = 0;

	printf("%s%s: %s %s\n", policy_action_name(v->action),
	       v->flagged ? " (flagged for review)" : "", policy_op_name(op),
	       *path ? path : ".");
	rule = policy_rule_text(p, v->line, &len);
	if (rule)
		printf("rule: %s:%u: %.*s\n", v->file, v->line, (int)len, rule);
	else
		printf("rule: none matched (allowed by default)\n");
}

static int policy_test_cmd(int argc, char **argv)
{
	struct policy_verdict v;
	enum policy_op op;
	struct policy *p;
	char *path;
	int ret;

	if (argc != 4)
		return usage_error("%s needs FILE OP PATH", "test");
	if (policy_op_parse(argv[2], &op))
		return usage_error("test: unknown operation '%s'", argv[2]);
	path = malloc(strlen(argv[3]) + 1);
	if (!path) {
		cli_err(ENOMEM, "policy test");
		return 1;
	}
	if (canonical_path(argv[3], path)) {
		free(path);
		return usage_error("test: '..' in PATH '%s' (paths are "
				   "relative to the workspace root)", argv[3]);
	}
	ret = load("test", argv[1], &p);
	if (!ret) {
		ret = policy_check(p, op, path, strlen(path), &v);
		print_verdict(p, op, path, &v);
		policy_free(p);
	}
	free(path);
	return ret ? 1 : 0;
}

static int policy_default_cmd(int argc, char **argv)
{
	(void)argv;
	if (argc != 1)
		return usage_error("%s takes no arguments", "default");
	fputs(policy_default_text(), stdout);
	return 0;
}

/* `txfs policy reload MNT` talks to the daemon: the real one is in
 * cmd_txn.c; this weak fallback serves programs built without it (the
 * unit test of this file). */
__attribute__((weak)) int cmd_policy_reload(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "txfs: policy reload: not available in this build\n");
	return 2;
}

static const struct policy_subcmd {
	const char *name;
	int (*run)(int argc, char **argv);
} subcmds[] = {
	{ "check", policy_check_cmd },
	{ "test", policy_test_cmd },
	{ "default", policy_default_cmd },
	{ "reload", cmd_policy_reload },	/* cmd_txn.c: via the daemon */
};

static bool wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
			return true;
	return false;
}

int cmd_policy(int argc, char **argv)
{
	if (wants_help(argc, argv)) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 2)
		return usage_error("%s", "missing subcommand");
	for (size_t i = 0; i < sizeof(subcmds) / sizeof(subcmds[0]); i++)
		if (!strcmp(argv[1], subcmds[i].name))
			return subcmds[i].run(argc - 1, argv + 1);
	return usage_error("unknown subcommand '%s'", argv[1]);
}
