/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_inode.c - the in-memory inode table: references, merged paths,
 * moves, node id mapping.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "view/view.h"

static int setup(void **state)
{
	struct txfs *fs = calloc(1, sizeof(*fs));

	fs->root_ino = 2;
	assert_int_equal(itab_init(fs), 0);
	assert_int_equal(itab_get(fs, 2, "", 0, NULL, 1), 0);
	*state = fs;
	return 0;
}

static int teardown(void **state)
{
	struct txfs *fs = *state;

	itab_destroy(fs);
	free(fs);
	return 0;
}

static void test_root_mapping(void **state)
{
	struct txfs *fs = *state;

	assert_int_equal(ino_to_tino(fs, FUSE_ROOT_ID), 2);
	assert_int_equal(tino_to_ino(fs, 2), FUSE_ROOT_ID);
	assert_int_equal(ino_to_tino(fs, 1234), 1234);
	assert_int_equal(tino_to_ino(fs, LAYER_INO_BASE | 5),
			 LAYER_INO_BASE | 5);
}

static void test_paths_and_moves(void **state)
{
	struct txfs *fs = *state;
	char *p;

	assert_int_equal(itab_get(fs, 10, "src", 2, "src", 1), 0);
	assert_int_equal(itab_get(fs, 11, "src/lib", 10, "lib", 1), 0);
	assert_int_equal(itab_get(fs, 12, "src/lib/a.c", 11, "a.c", 1), 0);
	p = itab_path(fs, 12, NULL);
	assert_string_equal(p, "src/lib/a.c");
	free(p);
	p = itab_path(fs, 11, "new.c");
	assert_string_equal(p, "src/lib/new.c");
	free(p);
	p = itab_path(fs, 2, NULL);
	assert_string_equal(p, "");
	free(p);
	p = itab_path(fs, 2, "top");
	assert_string_equal(p, "top");
	free(p);
	/* Renaming a folder moves one node; the lower path stays. */
	itab_move(fs, 10, 2, "src", 2, "renamed");
	p = itab_path(fs, 12, NULL);
	assert_string_equal(p, "renamed/lib/a.c");
	free(p);
	p = itab_lower_path(fs, 12);
	assert_string_equal(p, "src/lib/a.c");
	free(p);
	/* An unknown parent gives no path (the caller refuses). */
	assert_null(itab_path(fs, 99, "x"));
}

/* Issue 13: a hard link seen in a folder that is then removed must not
 * leave the file without a path (every open was refused with EACCES). */
static void test_hard_link_names(void **state)
{
	struct txfs *fs = *state;
	char *p;

	assert_int_equal(itab_get(fs, 30, NULL, 2, "f", 1), 0);
	assert_int_equal(itab_get(fs, 31, NULL, 2, "b", 1), 0);
	assert_int_equal(itab_get(fs, 30, NULL, 31, "g", 1), 0);  /* ln f b/g */
	p = itab_path(fs, 30, NULL);
	assert_string_equal(p, "b/g");	/* the last name seen comes first */
	free(p);
	itab_forget(fs, 31, 1);		/* b forgotten: the other name serves */
	p = itab_path(fs, 30, NULL);
	assert_string_equal(p, "f");
	free(p);
	itab_unname(fs, 30, 31, "g");	/* rm b/g */
	p = itab_path(fs, 30, "x");
	assert_string_equal(p, "f/x");
	free(p);
	/* rename of one link moves that link only */
	assert_int_equal(itab_get(fs, 32, NULL, 2, "d", 1), 0);
	assert_int_equal(itab_get(fs, 30, NULL, 32, "h", 1), 0);
	itab_move(fs, 30, 2, "f", 2, "f2");
	itab_unname(fs, 30, 32, "h");
	p = itab_path(fs, 30, NULL);
	assert_string_equal(p, "f2");
	free(p);
	itab_unname(fs, 30, 2, "f2");	/* the last name: no path */
	assert_null(itab_path(fs, 30, NULL));
	itab_unname(fs, 30, 2, "never");	/* unknown name: harmless */
}

static void test_lookup_counts(void **state)
{
	struct txfs *fs = *state;
	char *p;

	assert_int_equal(itab_get(fs, 20, "f", 2, "f", 2), 0);
	itab_forget(fs, 20, 1);
	p = itab_lower_path(fs, 20);
	assert_non_null(p);	/* one reference left */
	free(p);
	itab_open(fs, 20);
	itab_forget(fs, 20, 1);
	assert_int_equal(itab_held(fs, 20), 1);	/* kept while open */
	assert_int_equal(itab_release(fs, 20), 0);
	assert_null(itab_lower_path(fs, 20));	/* freed */
	itab_forget(fs, 2, 100);
	p = itab_path(fs, 2, "x");	/* the root is never freed */
	assert_string_equal(p, "x");
	free(p);
}

/* -o noopen: held = every kernel reference; may-cache = an open handle or
 * the kpages mark, which lives as long as the node and no longer. */
static void test_kpages_mark(void **state)
{
	struct txfs *fs = *state;

	fs->opts.noopen = true;
	assert_int_equal(itab_get(fs, 30, NULL, 2, "a", 1), 0);
	assert_int_equal(itab_held(fs, 30), 1);	/* the lookup holds it */
	assert_false(itab_may_cache(fs, 30));	/* no page yet */
	itab_open(fs, 30);
	assert_true(itab_may_cache(fs, 30));	/* an open handle */
	assert_int_equal(itab_release(fs, 30), 0);
	assert_false(itab_may_cache(fs, 30));
	itab_kpages(fs, 30);
	assert_true(itab_may_cache(fs, 30));	/* marked, no handle */
	itab_kpages(fs, 31);			/* unknown node: no-op */
	assert_false(itab_may_cache(fs, 31));
	itab_forget(fs, 30, 1);			/* gone with the node */
	assert_false(itab_known(fs, 30));
	assert_int_equal(itab_get(fs, 30, NULL, 2, "a", 1), 0);
	assert_false(itab_may_cache(fs, 30));	/* a new node starts clean */
	fs->opts.noopen = false;
	assert_int_equal(itab_held(fs, 30), 0);	/* default: handles only */
}

static void test_many_nodes_grow(void **state)
{
	struct txfs *fs = *state;

	for (uint64_t i = 100; i < 20100; i++)
		assert_int_equal(itab_get(fs, i, NULL, 2, "n", 1), 0);
	assert_true(fs->itab_size >= 20000);
	for (uint64_t i = 100; i < 20100; i++) {
		char *p = itab_path(fs, i, NULL);

		assert_string_equal(p, "n");
		free(p);
		itab_forget(fs, i, 1);
	}
	assert_int_equal(fs->itab_count, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_root_mapping, setup, teardown),
		cmocka_unit_test_setup_teardown(test_paths_and_moves, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hard_link_names, setup, teardown),
		cmocka_unit_test_setup_teardown(test_lookup_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_kpages_mark, setup, teardown),
		cmocka_unit_test_setup_teardown(test_many_nodes_grow, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
