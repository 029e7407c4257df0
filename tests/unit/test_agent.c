/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_agent.c - unit tests of the agent pieces that need no mount:
 * the policy's allow-write rules (policy/allow_write.c), the allow-write
 * guard of the state folder and --env/--clean-env (cli/agent_env.c), and
 * `txfs log`'s grouping by command (cli/cmd_session.c).
 */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli.h"
#include "policy.h"

/* cmd_session.c's other half lives in cmd_txn.c and main.c */
void cli_err(int err, const char *fmt, ...)
{
	(void)err, (void)fmt;
}

int cli_find_state(const char *mnt, const char *ctl, char *out, size_t size)
{
	(void)mnt, (void)ctl, (void)out, (void)size;
	return -ENOENT;
}

void cli_err_find_state(int rc, const char *prefix, const char *mnt,
			const char *ctl)
{
	(void)rc, (void)prefix, (void)mnt, (void)ctl;
}

int cli_request(const char *state, int argc, char **argv, int *err,
		char **out, size_t *outlen)
{
	(void)state, (void)argc, (void)argv, (void)err, (void)out, (void)outlen;
	return -ECONNREFUSED;
}

static void allow_write_rules(void **st)
{
	const char *text = "deny delete **/.git\n"
			   "allow-write ~/.claude /opt/x   # the agent\n"
			   "  allow-write\t~/a ~/b\n";
	struct policy *p = NULL;
	char *err = NULL, **v = NULL;
	size_t n = 0;

	(void)st;
	assert_int_equal(policy_load_buf("t.policy", text, strlen(text), &p,
					 &err), 0);
	assert_int_equal(policy_allow_write(p, "/home/u", &v, &n), 0);
	assert_int_equal(n, 4);
	assert_string_equal(v[0], "/home/u/.claude");
	assert_string_equal(v[1], "/opt/x");
	assert_string_equal(v[2], "/home/u/a");
	assert_string_equal(v[3], "/home/u/b");
	policy_allow_write_free(v, n);
	/* ~/ without a home is an error, not a silent skip */
	assert_int_equal(policy_allow_write(p, NULL, &v, &n), -EINVAL);
	assert_int_equal(policy_allow_write(p, "relative", &v, &n), -EINVAL);
	policy_free(p);
}

static void allow_write_bad_rules(void **st)
{
	const char *text = "allow-write relative/x\n";
	struct policy *p = NULL;
	char *err = NULL;

	(void)st;
	assert_int_equal(policy_load_buf("t.policy", text, strlen(text), &p,
					 &err), -EINVAL);
	assert_non_null(strstr(err, "t.policy:1:13:"));
	free(err);
}

static void allow_write_state_guard(void **st)
{
	char d[] = "/tmp/txfs-agent-unit-XXXXXX", a[PATH_MAX], b[PATH_MAX],
	     c[PATH_MAX], e[PATH_MAX], gone[PATH_MAX];

	(void)st;
	assert_non_null(mkdtemp(d));
	snprintf(a, sizeof(a), "%s/state", d);
	snprintf(b, sizeof(b), "%s/state/sub", d);
	snprintf(c, sizeof(c), "%s/stat", d);	/* a prefix, not a parent */
	snprintf(e, sizeof(e), "%s/other", d);
	snprintf(gone, sizeof(gone), "%s/other/not-yet", d);
	assert_int_equal(mkdir(a, 0700), 0);
	assert_int_equal(mkdir(b, 0700), 0);
	assert_int_equal(mkdir(c, 0700), 0);
	assert_int_equal(mkdir(e, 0700), 0);
	assert_int_equal(cli_allow_write_check(d, a), -EPERM);
	assert_int_equal(cli_allow_write_check(a, a), -EPERM);
	assert_int_equal(cli_allow_write_check(b, a), -EPERM);
	assert_int_equal(cli_allow_write_check("/", a), -EPERM);
	assert_int_equal(cli_allow_write_check(c, a), 0);
	assert_int_equal(cli_allow_write_check(e, a), 0);
	/* a state folder not made yet is compared canonical all the same */
	assert_int_equal(cli_allow_write_check(e, gone), -EPERM);
	assert_int_equal(cli_allow_write_check(c, gone), 0);
	rmdir(b), rmdir(a), rmdir(c), rmdir(e), rmdir(d);
}

/* Issue B10: --state LINK/st with LINK -> an allowed folder, not made yet. */
static void canon_path_forms(void **st)
{
	char d[] = "/tmp/txfs-agent-unit-XXXXXX", p[PATH_MAX], q[PATH_MAX],
	     out[PATH_MAX], want[PATH_MAX];

	(void)st;
	assert_non_null(mkdtemp(d));
	snprintf(p, sizeof(p), "%s/sx", d);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(q, sizeof(q), "%s/link", d);
	assert_int_equal(symlink(p, q), 0);		/* absolute target */
	snprintf(q, sizeof(q), "%s/chain", d);
	assert_int_equal(symlink("link", q), 0);	/* relative, to a link */
	snprintf(q, sizeof(q), "%s/dang", d);
	snprintf(want, sizeof(want), "%s/sx/notyet", d);
	assert_int_equal(symlink(want, q), 0);		/* dangling */
	snprintf(q, sizeof(q), "%s/la", d);
	assert_int_equal(symlink("lb", q), 0);
	snprintf(q, sizeof(q), "%s/lb", d);
	assert_int_equal(symlink("la", q), 0);

	snprintf(want, sizeof(want), "%s/sx/st3", d);
	snprintf(q, sizeof(q), "%s/link/st3", d);
	assert_int_equal(cli_canon_path(q, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	snprintf(q, sizeof(q), "%s/chain/a/.././st3/", d);
	assert_int_equal(cli_canon_path(q, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	snprintf(q, sizeof(q), "%s/dang/st", d);
	snprintf(want, sizeof(want), "%s/sx/notyet/st", d);
	assert_int_equal(cli_canon_path(q, out, sizeof(out)), 0);
	assert_string_equal(out, want);
	snprintf(q, sizeof(q), "%s/la/st", d);
	assert_int_equal(cli_canon_path(q, out, sizeof(out)), -ELOOP);
	assert_int_equal(cli_canon_path("/etc/passwd/x", out, sizeof(out)), -ENOTDIR);
	assert_int_equal(cli_canon_path("/..//.", out, sizeof(out)), 0);
	assert_string_equal(out, "/");
	/* the checks: an allowed folder holding such a state folder */
	snprintf(q, sizeof(q), "%s/link/st3", d);
	assert_int_equal(cli_allow_write_check(p, q), -EPERM);
	snprintf(q, sizeof(q), "%s/la/st", d);
	assert_int_equal(cli_allow_write_check(p, q), -EPERM);
	snprintf(q, sizeof(q), "%s/link", d);
	assert_int_equal(cli_allow_write_check(q, want), -EPERM);
	snprintf(q, sizeof(q), "%s/la", d), unlink(q);
	snprintf(q, sizeof(q), "%s/lb", d), unlink(q);
	snprintf(q, sizeof(q), "%s/dang", d), unlink(q);
	snprintf(q, sizeof(q), "%s/chain", d), unlink(q);
	snprintf(q, sizeof(q), "%s/link", d), unlink(q);
	rmdir(p), rmdir(d);
}

static void env_apply(void **st)
{
	const char *envs[] = { "KEY", "SET=v=1", "MISSING" };

	(void)st;
	setenv("KEY", "secret", 1);
	setenv("OTHER", "x", 1);
	setenv("PATH", "/usr/bin:/bin", 1);
	unsetenv("MISSING");
	assert_int_equal(cli_env_apply(envs, 3, true), 0);
	assert_string_equal(getenv("KEY"), "secret");
	assert_string_equal(getenv("SET"), "v=1");
	assert_string_equal(getenv("PATH"), "/usr/bin:/bin");
	assert_null(getenv("OTHER"));
	assert_null(getenv("MISSING"));
	envs[0] = "=bad";
	assert_int_equal(cli_env_apply(envs, 1, false), -1);
}

/* cli_log_grouped's output for text (stdout captured in a file). */
static char *grouped(const char *log, bool json)
{
	char *text = strdup(log), *out;
	FILE *f = tmpfile();
	int saved = dup(1);
	long len;

	assert_non_null(f);
	fflush(stdout);
	dup2(fileno(f), 1);
	assert_int_equal(cli_log_grouped(text, json), 0);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	len = ftell(f) > 0 ? ftell(f) : lseek(fileno(f), 0, SEEK_END);
	out = calloc(1, (size_t)len + 1);
	assert_int_equal(pread(fileno(f), out, (size_t)len, 0), len);
	fclose(f);
	free(text);
	return out;
}

static void log_grouping(void **st)
{
	const char *log =
		"{\"time\":\"t0\",\"event\":\"savepoint\",\"name\":\"cmd-1\",\"level\":1}\n"
		"{\"time\":\"t1\",\"event\":\"cmd-begin\",\"cmd\":1,\"argv\":[\"rm\",\"-rf\",\".git\"],\"savepoint\":\"cmd-1\"}\n"
		"{\"time\":\"t2\",\"event\":\"veto\",\"op\":\"delete\",\"path\":\".git\",\"rule\":\"p:1\"}\n"
		"{\"time\":\"t3\",\"event\":\"cmd-end\",\"cmd\":1,\"savepoint\":\"cmd-1\",\"exit\":1,\"outcome\":\"rolled-back\",\"changes\":[],\"vetoes\":1}\n"
		"{\"time\":\"t4\",\"event\":\"cmd-begin\",\"cmd\":2,\"argv\":[\"touch\",\"x\"],\"savepoint\":\"cmd-2\"}\n"
		"{\"time\":\"t5\",\"event\":\"cmd-end\",\"cmd\":2,\"savepoint\":\"cmd-2\",\"exit\":0,\"outcome\":\"kept\",\"changes\":[\"A x\"],\"vetoes\":0}\n"
		"not json\n"
		"{\"time\":\"t6\",\"event\":\"cmd-rollback\",\"cmd\":2,\"savepoint\":\"cmd-2\"}\n"
		"{\"time\":\"t7\",\"event\":\"commit\",\"txid\":1}\n";
	char *text = grouped(log, false), *json = grouped(log, true);

	(void)st;
	assert_non_null(strstr(text, "command 1: rm -rf .git\n"
				     "  rolled-back, exit 1, savepoint cmd-1, "
				     "0 changes, 1 vetoes\n"));
	assert_non_null(strstr(text, "    t2 veto op=delete path=.git rule=p:1\n"));
	assert_non_null(strstr(text, "command 2: touch x\n  undone, exit 0"));
	assert_non_null(strstr(text, "    A x\n"));
	assert_non_null(strstr(text, "t7 commit txid=1\n"));
	assert_null(strstr(text, "name=cmd-1"));	/* exec's own savepoints */
	assert_non_null(strstr(json, "\"cmd\":2,"));
	assert_non_null(strstr(json, "\"outcome\":\"undone\""));
	free(text);
	free(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(allow_write_rules),
		cmocka_unit_test(allow_write_bad_rules),
		cmocka_unit_test(allow_write_state_guard),
		cmocka_unit_test(canon_path_forms),
		cmocka_unit_test(env_apply),
		cmocka_unit_test(log_grouping),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
