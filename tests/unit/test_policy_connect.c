/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_connect.c - the `allow connect PATH...` rule (policy/
 * connect.c): accepted with absolute paths, refused (FILE:LINE:COL) without
 * a path or with a relative one, its paths read back in file order with
 * backslashes kept (fnmatch gives them their meaning), and other allow
 * rules untouched.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy.h"

static void globs_in_order(void **state)
{
	const char *text = "# sockets\nallow connect /run/user/*/bus\n"
			   "allow read src/\nallow connect /tmp/a\\ b.sock /var/x  # end\n";
	struct policy *p = NULL;
	char *msg = NULL, **v = NULL;
	size_t n = 9;

	(void)state;
	assert_int_equal(policy_load_buf("t.policy", text, strlen(text), &p, &msg), 0);
	assert_int_equal(policy_connect_globs(p, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_string_equal(v[0], "/run/user/*/bus");
	assert_string_equal(v[1], "/tmp/a\\ b.sock");
	assert_string_equal(v[2], "/var/x");
	assert_null(v[3]);
	policy_connect_free(v, n);
	policy_free(p);
}

static void none(void **state)
{
	const char *text = "allow read src/\n";
	struct policy *p = NULL;
	char *msg = NULL, **v = NULL;
	size_t n = 9;

	(void)state;
	assert_int_equal(policy_load_buf("t.policy", text, strlen(text), &p, &msg), 0);
	assert_int_equal(policy_connect_globs(p, &v, &n), 0);
	assert_int_equal(n, 0);
	policy_connect_free(v, n);
	policy_free(p);
}

static void refused(void **state)
{
	const char *text = "allow connect\nallow connect run/x.sock\n";
	struct policy *p = NULL;
	char *msg = NULL;

	(void)state;
	assert_int_equal(policy_load_buf("t.policy", text, strlen(text), &p, &msg), -EINVAL);
	assert_non_null(msg);
	assert_non_null(strstr(msg, "t.policy:1:14: 'allow connect' needs"));
	assert_non_null(strstr(msg, "t.policy:2:15: 'allow connect' takes absolute paths"));
	assert_null(p);
	free(msg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(globs_in_order),
		cmocka_unit_test(none),
		cmocka_unit_test(refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
