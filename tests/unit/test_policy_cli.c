/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_cli.c - `txfs policy` (cli/cmd_policy.c): exit statuses
 * 0/1/2, what check and test print, and usage errors. cmd_policy() runs in
 * this process with stdout and stderr redirected to temporary files.
 * cli_err() belongs to cli/main.c; a stand-in with the same output
 * ("txfs: what: why", no ": why" when err is 0) is defined here.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../cli/cli.h"
#include "policy.h"

void cli_err(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("txfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
}

struct run {
	int status;
	char out[16384], err[16384];
};

static void slurp_fd(int fd, char *buf, size_t size)
{
	ssize_t n = pread(fd, buf, size - 1, 0);

	buf[n > 0 ? n : 0] = '\0';
	close(fd);
}

/* cmd_policy(argv...) with its output captured into r. */
static void run(struct run *r, int argc, const char *const *argv)
{
	char on[] = "/tmp/txfs-cli-out-XXXXXX", en[] = "/tmp/txfs-cli-err-XXXXXX";
	int of = mkstemp(on), ef = mkstemp(en);
	int so = dup(1), se = dup(2);

	assert_true(of >= 0 && ef >= 0 && so >= 0 && se >= 0);
	unlink(on);
	unlink(en);
	fflush(stdout);
	fflush(stderr);
	dup2(of, 1);
	dup2(ef, 2);
	r->status = cmd_policy(argc, (char **)argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp_fd(of, r->out, sizeof(r->out));
	slurp_fd(ef, r->err, sizeof(r->err));
}

#define RUN(r, ...) do { \
	const char *const argv_[] = { "policy", __VA_ARGS__ }; \
	run(r, (int)(sizeof(argv_) / sizeof(*argv_)), argv_); \
} while (0)

static char good[] = "/tmp/txfs-good-XXXXXX";
static char bad[] = "/tmp/txfs-bad-XXXXXX";

static void write_file(char *name, const char *text)
{
	int fd = mkstemp(name);

	assert_true(fd >= 0);
	assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
	close(fd);
}

static int setup(void **state)
{
	(void)state;
	write_file(good, "# example\n"
			 "allow write src/keep.c\n"
			 "readonly src/\n"
			 "hide **/.env\n"
			 "flag .github/workflows/\n");
	write_file(bad, "deny write x\n"
			"deny wrte x\n"
			"limit bytes 1MB\n");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(good);
	unlink(bad);
	return 0;
}

static struct run r;

static void test_help_and_usage(void **state)
{
	(void)state;
	RUN(&r, "--help");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage: txfs policy check [--workspace DIR] FILE"));
	assert_non_null(strstr(r.out, "txfs.policy(5)"));
	RUN(&r, "test", "-h");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "usage:"));
	{
		const char *const argv[] = { "policy" };

		run(&r, 1, argv);
	}
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "txfs: policy: missing subcommand"));
	RUN(&r, "frob");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown subcommand 'frob'"));
	RUN(&r, "check");
	assert_int_equal(r.status, 2);
	RUN(&r, "check", good, good);
	assert_int_equal(r.status, 2);
	RUN(&r, "test", good, "write");
	assert_int_equal(r.status, 2);
	RUN(&r, "default", "x");
	assert_int_equal(r.status, 2);
}

static void test_check(void **state)
{
	char want[256];

	(void)state;
	RUN(&r, "check", good);
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "%s: ok, 4 rules\n", good);
	assert_string_equal(r.out, want);
	assert_string_equal(r.err, "");
	RUN(&r, "check", bad);
	assert_int_equal(r.status, 1);
	assert_string_equal(r.out, "");
	snprintf(want, sizeof(want), "%s:2:6: unknown operation 'wrte'", bad);
	assert_non_null(strstr(r.err, want));
	snprintf(want, sizeof(want), "%s:3:14: decimal units", bad);
	assert_non_null(strstr(r.err, want));
	RUN(&r, "check", "/nonexistent.policy");
	assert_int_equal(r.status, 1);
	assert_string_equal(r.err, "txfs: policy check: /nonexistent.policy: "
			    "No such file or directory\n");
}

static void test_test(void **state)
{
	char want[512];

	(void)state;
	RUN(&r, "test", good, "write", "src/main.c");
	assert_int_equal(r.status, 1);
	snprintf(want, sizeof(want), "deny: write src/main.c\n"
		 "rule: %s:3: readonly src/\n", good);
	assert_string_equal(r.out, want);
	RUN(&r, "test", good, "write", "./src//keep.c/");
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "allow: write src/keep.c\n"
		 "rule: %s:2: allow write src/keep.c\n", good);
	assert_string_equal(r.out, want);
	RUN(&r, "test", good, "read", "src/main.c");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, "allow: read src/main.c\n"
			    "rule: none matched (allowed by default)\n");
	RUN(&r, "test", good, "read", "a/.env");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.out, "hide: read a/.env\n"));
	RUN(&r, "test", good, "create", "/.github/workflows/ci.yml");
	assert_int_equal(r.status, 0);
	snprintf(want, sizeof(want), "allow (flagged for review): create "
		 ".github/workflows/ci.yml\nrule: %s:5: flag "
		 ".github/workflows/\n", good);
	assert_string_equal(r.out, want);
	RUN(&r, "test", good, "chmod", ".");
	assert_int_equal(r.status, 0);
	assert_non_null(strstr(r.out, "allow: chmod .\n"));
}

static void test_test_errors(void **state)
{
	(void)state;
	RUN(&r, "test", good, "modify", "x");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "unknown operation 'modify'"));
	RUN(&r, "test", good, "read", "a/../../etc");
	assert_int_equal(r.status, 2);
	assert_non_null(strstr(r.err, "'..' in PATH"));
	RUN(&r, "test", bad, "read", "x");
	assert_int_equal(r.status, 1);
	assert_non_null(strstr(r.err, ":2:6: unknown operation"));
	assert_string_equal(r.out, "");
}

static void test_default_and_reload(void **state)
{
	(void)state;
	RUN(&r, "default");
	assert_int_equal(r.status, 0);
	assert_string_equal(r.out, policy_default_text());
	RUN(&r, "reload", "/mnt");
	assert_int_equal(r.status, 2);
	assert_string_equal(r.err, "txfs: policy reload: not available in "
			    "this build\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_help_and_usage),
		cmocka_unit_test(test_check),
		cmocka_unit_test(test_test),
		cmocka_unit_test(test_test_errors),
		cmocka_unit_test(test_default_and_reload),
	};

	return cmocka_run_group_tests_name("policy_cli", tests, setup,
					   teardown);
}
