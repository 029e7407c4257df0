/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_limits.c - cli/sandbox/reslimit.c without running anything: the
 * option values (--timeout, --memory, --cpu, --pids: units, "none", 0
 * refused), the values written back in reports, the defaults, and the
 * watch's schedule (no sample without limits; the timeout is due when
 * it passes).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "reslimit.h"

static void test_parse(void **state)
{
	uint64_t v;

	(void)state;
	assert_null(limit_parse(LIMIT_TIMEOUT, "90s", &v));
	assert_int_equal(v, 90000);
	assert_null(limit_parse(LIMIT_TIMEOUT, "5m", &v));
	assert_int_equal(v, 300000);
	assert_null(limit_parse(LIMIT_TIMEOUT, "1h", &v));
	assert_int_equal(v, 3600000);
	assert_null(limit_parse(LIMIT_TIMEOUT, "30", &v));
	assert_int_equal(v, 30000);
	assert_null(limit_parse(LIMIT_CPU, "600", &v));
	assert_int_equal(v, 600000);
	assert_null(limit_parse(LIMIT_MEMORY, "512M", &v));
	assert_int_equal(v, 512u << 20);
	assert_null(limit_parse(LIMIT_MEMORY, "2G", &v));
	assert_int_equal(v, 2ull << 30);
	assert_null(limit_parse(LIMIT_MEMORY, "1000000", &v));
	assert_int_equal(v, 1000000);
	assert_null(limit_parse(LIMIT_PIDS, "4096", &v));
	assert_int_equal(v, 4096);
	assert_null(limit_parse(LIMIT_PIDS, "none", &v));
	assert_int_equal(v, LIMIT_NONE);
	assert_null(limit_parse(LIMIT_MEMORY, "none", &v));
	assert_int_equal(v, LIMIT_NONE);
	assert_string_equal(limit_parse(LIMIT_MEMORY, "0", &v),
			    "must be more than 0 (none: no limit)");
	assert_string_equal(limit_parse(LIMIT_TIMEOUT, "0s", &v),
			    "must be more than 0 (none: no limit)");
	assert_non_null(limit_parse(LIMIT_MEMORY, "x", &v));
	assert_non_null(limit_parse(LIMIT_MEMORY, "2GB", &v));
	assert_non_null(limit_parse(LIMIT_MEMORY, "", &v));
	assert_non_null(limit_parse(LIMIT_TIMEOUT, "5x", &v));
	assert_non_null(limit_parse(LIMIT_TIMEOUT, "-1", &v));
	assert_non_null(limit_parse(LIMIT_PIDS, "10K", &v));
	assert_non_null(limit_parse(LIMIT_PIDS, "18446744073709551615", &v));
	assert_non_null(limit_parse(LIMIT_CPU, "None", &v));
}

static void test_format(void **state)
{
	char b[32];

	(void)state;
	limit_format(LIMIT_MEMORY, 4ull << 30, b, sizeof(b));
	assert_string_equal(b, "4G");
	limit_format(LIMIT_MEMORY, 512u << 20, b, sizeof(b));
	assert_string_equal(b, "512M");
	limit_format(LIMIT_MEMORY, 1000, b, sizeof(b));
	assert_string_equal(b, "1000");
	limit_format(LIMIT_TIMEOUT, 30 * 60000, b, sizeof(b));
	assert_string_equal(b, "30m");
	limit_format(LIMIT_TIMEOUT, 90000, b, sizeof(b));
	assert_string_equal(b, "90s");
	limit_format(LIMIT_CPU, 1500, b, sizeof(b));
	assert_string_equal(b, "1500ms");
	limit_format(LIMIT_TIMEOUT, 7200000, b, sizeof(b));
	assert_string_equal(b, "2h");
	limit_format(LIMIT_PIDS, 4096, b, sizeof(b));
	assert_string_equal(b, "4096");
	limit_format(LIMIT_PIDS, LIMIT_NONE, b, sizeof(b));
	assert_string_equal(b, "none");
	assert_string_equal(limit_name(LIMIT_TIMEOUT), "timeout");
	assert_string_equal(limit_name(LIMIT_MEMORY), "memory");
	assert_string_equal(limit_name(LIMIT_CPU), "cpu");
	assert_string_equal(limit_name(LIMIT_PIDS), "pids");
}

static void test_defaults_and_schedule(void **state)
{
	struct proctree pt = { .self = 1, .cgfd = -1, .cgparent = -1 };
	struct limwatch w;
	struct limits l;

	(void)state;
	limits_default(&l);
	assert_int_equal(l.v[LIMIT_PIDS], LIMIT_PIDS_DEFAULT);
	assert_int_equal(l.v[LIMIT_TIMEOUT], LIMIT_NONE);
	assert_int_equal(l.v[LIMIT_MEMORY], LIMIT_NONE);
	assert_int_equal(l.v[LIMIT_CPU], LIMIT_NONE);
	l.v[LIMIT_PIDS] = LIMIT_NONE;
	assert_int_equal(limwatch_start(&w, &l, &pt), 0);
	assert_int_equal(limwatch_due(&w), -1);		/* nothing to watch */
	assert_false(limwatch_check(&w, false));
	l.v[LIMIT_TIMEOUT] = 1;				/* 1 ms */
	assert_int_equal(limwatch_start(&w, &l, &pt), 0);
	assert_true(limwatch_due(&w) >= 0 && limwatch_due(&w) <= 2);
	while (!limwatch_check(&w, false))
		;
	assert_int_equal(w.hit, LIMIT_TIMEOUT);
	assert_true(w.seen >= 1);
	assert_int_equal(limwatch_due(&w), -1);		/* hit: done */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),
		cmocka_unit_test(test_format),
		cmocka_unit_test(test_defaults_and_schedule),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
