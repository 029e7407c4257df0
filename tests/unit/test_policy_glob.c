/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_glob.c - the glob matcher of policy/glob.c.
 *
 * A table of pattern/path cases (with `**` at the start, middle and end,
 * dotfiles, brackets, escapes, trailing '/'), each checked both with and
 * without the prefilters; a table of refused globs with the offset of the
 * mistake; the literal filters computed for typical globs; and the
 * "below a folder" questions used by policy_check_tree.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy_int.h"

struct match_case {
	const char *glob, *path;
	bool match;
};

static const struct match_case match_cases[] = {
	/* literals */
	{ "a", "a", true },
	{ "a", "b", false },
	{ "a", "a/b", false },
	{ "a", "", false },
	{ "a/b", "a/b", true },
	{ "a/b", "a", false },
	{ "src/main.c", "src/main.c", true },
	{ "src/main.c", "src/main.cc", false },
	{ "src/main.c", "xsrc/main.c", false },
	{ ".git", ".git", true },
	{ ".git", ".github", false },
	{ ".git", "x/.git", false },
	{ "Makefile", "makefile", false },
	/* '*' stays inside one component, matches dotfiles */
	{ "*", "a", true },
	{ "*", ".hidden", true },
	{ "*", "a/b", false },
	{ "*", "", false },
	{ "*.c", "main.c", true },
	{ "*.c", ".c", true },
	{ "*.c", "main.h", false },
	{ "*.c", "src/main.c", false },
	{ "src/*.c", "src/main.c", true },
	{ "src/*.c", "src/sub/main.c", false },
	{ "src/*", "src/.env", true },
	{ "src/*", "src", false },
	{ "a*b", "ab", true },
	{ "a*b", "axxb", true },
	{ "a*b", "axxbx", false },
	{ "a*b*c", "abbbc", true },
	{ "a*b*c", "acb", false },
	{ "*a*", "banana", true },
	{ "*a*", "xyz", false },
	{ "*/x", "a/x", true },
	{ "*/x", "x", false },
	{ "*/x", "a/b/x", false },
	{ "*/*", "a/b", true },
	{ "*/*", "a", false },
	{ "**", "", true },
	/* '**' at the start */
	{ "**", "a", true },
	{ "**", "a/b/c", true },
	{ "**", ".git/objects/ab/cd", true },
	{ "**/x", "x", true },
	{ "**/x", "a/x", true },
	{ "**/x", "a/b/c/x", true },
	{ "**/x", "a/x/b", false },
	{ "**/x", "ax", false },
	{ "**/x", "a/xa", false },
	{ "**/.git", ".git", true },
	{ "**/.git", "sub/.git", true },
	{ "**/.git", "sub/.github", false },
	{ "**/*.pem", "key.pem", true },
	{ "**/*.pem", "a/b/key.pem", true },
	{ "**/*.pem", "a/b/key.pem.bak", false },
	{ "**/.env*", ".env", true },
	{ "**/.env*", "app/.env.local", true },
	{ "**/.env*", "app/env", false },
	{ "**/id_*", "home/.ssh/id_rsa", true },
	{ "**/id_*", "src/fid_x", false },
	{ "**/x/**", "x", true },
	{ "**/x/**", "a/x/b", true },
	{ "**/x/**", "a/y/b", false },
	{ "**/.git/hooks/**", ".git/hooks/pre-commit", true },
	{ "**/.git/hooks/**", "sub/.git/hooks/x", true },
	{ "**/.git/hooks/**", "sub/.git/hook/x", false },
	/* '**' in the middle */
	{ "a/**/b", "a/b", true },
	{ "a/**/b", "a/x/b", true },
	{ "a/**/b", "a/x/y/z/b", true },
	{ "a/**/b", "a/x/y/z/c", false },
	{ "a/**/b", "b", false },
	{ "a/**/b", "a/b/c", false },
	{ "a/**/b", "a/b/b", true },
	{ "a/**/b/c", "a/b/x/b/c", true },
	{ "a/**/b/c", "a/b/c/b/d", false },
	{ "a/**/b/**/c", "a/b/c", true },
	{ "a/**/b/**/c", "a/x/b/y/c", true },
	{ "a/**/b/**/c", "a/x/c/y/b", false },
	{ "a/**/*.c", "a/z.c", true },
	{ "a/**/*.c", "a/q/z.c", true },
	{ "a/**/*.c", "b/q/z.c", false },
	{ "**/b/**/d", "a/b/c/d", true },
	{ "**/b/**/d", "a/c/d", false },
	{ ".git/modules/**/config", ".git/modules/x/y/config", true },
	/* '**' at the end */
	{ "a/**", "a", true },
	{ "a/**", "a/b", true },
	{ "a/**", "a/b/c", true },
	{ "a/**", "ab", false },
	{ "a/**", "b/a", false },
	{ ".git/hooks/**", ".git/hooks/pre-commit", true },
	{ ".git/hooks/**", ".git/hooksx", false },
	{ "node_modules/**", "node_modules/x/y.js", true },
	{ "a/**/**", "a/b", true },
	/* a trailing '/' is the folder and everything below it */
	{ "build/", "build", true },
	{ "build/", "build/x/y.o", true },
	{ "build/", "builder", false },
	{ "build/", "src/build", false },
	{ "**/build/", "src/build/x", true },
	{ "**/build/", "build", true },
	{ ".ssh/", ".ssh/id_rsa", true },
	{ "a/**/", "a/b", true },
	/* '?' is one byte, never '/' */
	{ "?", "a", true },
	{ "?", "", false },
	{ "?", "ab", false },
	{ "a?c", "abc", true },
	{ "a?c", "a/c", false },
	{ "??", ".x", true },
	{ "file.?", "file.c", true },
	{ "file.?", "file.cc", false },
	/* brackets */
	{ "[abc]", "b", true },
	{ "[abc]", "d", false },
	{ "[a-c]x", "bx", true },
	{ "[!a-c]x", "dx", true },
	{ "[!a-c]x", "ax", false },
	{ "[^a]", "b", true },
	{ "[^a]", "a", false },
	{ "[]]", "]", true },
	{ "[!]]", "a", true },
	{ "[!]]", "]", false },
	{ "[a-]", "-", true },
	{ "[-a]", "-", true },
	{ "[-a]", "b", false },
	{ "*.[ch]", "x.h", true },
	{ "*.[ch]", "x.o", false },
	{ "[.]env", ".env", true },
	{ "x[0-9][0-9]", "x42", true },
	{ "x[0-9][0-9]", "x4a", false },
	{ "a[!x]b", "a/b", false },
	{ "[[]", "[", true },
	{ "[!a]", "\xc3", true },
	/* escapes */
	{ "\\[a]", "[a]", true },
	{ "[\\]]", "]", true },
	{ "\\*", "*", true },
	{ "\\*", "a", false },
	{ "a\\?", "a?", true },
	{ "a\\?", "ab", false },
	{ "dir\\ with\\ space/", "dir with space/x", true },
	{ "\\#x", "#x", true },
	{ "a\\\\b", "a\\b", true },
	{ "a]b", "a]b", true },
	/* hostile and non-ASCII names */
	{ "caf*", "caf\xc3\xa9", true },
	{ "*\xc3\xa9", "caf\xc3\xa9", true },
	{ "?", "\xc3\xa9", false },
	{ "??", "\xc3\xa9", true },
	{ "*", "a\nb", true },
	{ "**/x", "\xff/x", true },
	{ "*", "\xff\xfe", true },
};

static void test_match_table(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;
	size_t n = sizeof(match_cases) / sizeof(match_cases[0]);

	(void)state;
	assert_true(n >= 100);
	for (size_t i = 0; i < n; i++) {
		const struct match_case *c = &match_cases[i];
		size_t len = strlen(c->path);
		int ret = glob_compile(&a, c->glob, strlen(c->glob), false,
				       &g, &err);

		if (ret)
			fail_msg("compile '%s': %s", c->glob, err.msg);
		if (glob_match(g, c->path, len) != c->match)
			fail_msg("glob '%s' path '%s': expected %s", c->glob,
				 c->path, c->match ? "match" : "no match");
		if (glob_match_full(g, c->path, len) != c->match)
			fail_msg("unfiltered: glob '%s' path '%s'", c->glob,
				 c->path);
	}
	arena_release(&a);
}

/* A path that matches implies its parent folder has a match below it. */
static void test_match_implies_below(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(match_cases) / sizeof(*match_cases); i++) {
		const struct match_case *c = &match_cases[i];
		const char *sl = strrchr(c->path, '/');
		size_t plen = sl ? (size_t)(sl - c->path) : 0;

		if (!c->match || !*c->path)
			continue;
		assert_int_equal(glob_compile(&a, c->glob, strlen(c->glob),
					      false, &g, &err), 0);
		if (!glob_match_below(g, c->path, plen))
			fail_msg("glob '%s' matches '%s' but not below '%.*s'",
				 c->glob, c->path, (int)plen, c->path);
	}
	arena_release(&a);
}

struct error_case {
	const char *glob;
	size_t off;
	const char *msg;	/* a part of the message */
};

static const struct error_case error_cases[] = {
	{ "", 0, "empty glob" },
	{ "[abc", 0, "unclosed '['" },
	{ "a/[b", 2, "unclosed '['" },
	{ "[", 0, "unclosed '['" },
	{ "[]", 0, "unclosed '['" },
	{ "[!]", 0, "unclosed '['" },
	{ "/a", 0, "leading '/'" },
	{ "/", 0, "leading '/'" },
	{ "a//b", 2, "empty path component" },
	{ "a/**b", 2, "whole path component" },
	{ "**a", 0, "whole path component" },
	{ "***", 0, "whole path component" },
	{ "a\\", 1, "backslash at the end" },
	{ "a/./b", 2, "'.' and '..'" },
	{ "../a", 0, "'.' and '..'" },
	{ "a/..", 2, "'.' and '..'" },
	{ ".", 0, "'.' and '..'" },
	{ "[z-a]", 3, "empty range" },
	{ "[[:alpha:]]", 1, "character classes" },
	{ "[a/b]", 2, "'/' cannot appear inside" },
	{ "[\\/]", 1, "'/' cannot appear inside" },
	{ "[\xc3\xa9]", 1, "only ASCII" },
	{ "a\\/b", 1, "cannot be escaped" },
	{ "[a\\", 2, "backslash at the end" },
};

static void test_compile_errors(void **state)
{
	struct arena a = { 0 };
	const struct glob *g = NULL;
	struct glob_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(error_cases) / sizeof(*error_cases); i++) {
		const struct error_case *c = &error_cases[i];

		memset(&err, 0, sizeof(err));
		if (glob_compile(&a, c->glob, strlen(c->glob), false, &g,
				 &err) != -EINVAL)
			fail_msg("glob '%s' was accepted", c->glob);
		if (err.off != c->off || !strstr(err.msg, c->msg))
			fail_msg("glob '%s': got %zu '%s', want %zu '%s'",
				 c->glob, err.off, err.msg, c->off, c->msg);
	}
	arena_release(&a);
}

static void test_compile_limits(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;
	char buf[GLOB_MAX_LEN + 2];

	(void)state;
	/* 63 components are fine, 64 are not */
	memset(buf, 0, sizeof(buf));
	for (int i = 0; i < 63; i++)
		strcat(buf, i ? "/a" : "a");
	assert_int_equal(glob_compile(&a, buf, strlen(buf), false, &g, &err),
			 0);
	assert_true(glob_match(g, buf, strlen(buf)));
	strcat(buf, "/a");
	assert_int_equal(glob_compile(&a, buf, strlen(buf), false, &g, &err),
			 -EINVAL);
	assert_non_null(strstr(err.msg, "63"));
	/* length */
	memset(buf, 'x', GLOB_MAX_LEN + 1);
	assert_int_equal(glob_compile(&a, buf, GLOB_MAX_LEN, false, &g,
				      &err), 0);
	assert_int_equal(glob_compile(&a, buf, GLOB_MAX_LEN + 1, false, &g,
				      &err), -EINVAL);
	arena_release(&a);
}

struct filter_case {
	const char *glob, *prefix, *suffix, *lcp;
	bool literal;
};

static const struct filter_case filter_cases[] = {
	{ "src/main.c", "src/main.c", "", "", true },
	{ "src/*.c", "src/", ".c", "", false },
	{ "a/**", "a", "", "", false },
	{ "build/", "build", "", "", false },
	{ "**/.envrc", "", ".envrc", "", false },
	{ "**/*.pem", "", ".pem", "", false },
	{ "**/id_*", "", "", "id_", false },
	{ "**/.git/hooks/**", "", "", "", false },
	{ "a/**/b/c", "a", "b/c", "", false },
	{ "*/x/y/*", "", "", "", false },
	{ "\\*lit", "*lit", "*lit", "", true },
	{ "a*/b", "a", "/b", "", false },
	{ "x\\*", "x*", "x*", "", true },
};

static void test_filters(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(filter_cases) / sizeof(*filter_cases);
	     i++) {
		const struct filter_case *c = &filter_cases[i];

		assert_int_equal(glob_compile(&a, c->glob, strlen(c->glob),
					      false, &g, &err), 0);
		assert_int_equal(g->literal, c->literal);
		assert_int_equal(g->plen, strlen(c->prefix));
		assert_memory_equal(g->prefix, c->prefix, g->plen);
		if (c->literal)
			continue;
		assert_int_equal(g->slen, strlen(c->suffix));
		assert_memory_equal(g->suffix, c->suffix, g->slen);
		assert_int_equal(g->lcplen, strlen(c->lcp));
		assert_memory_equal(g->lcp, c->lcp, g->lcplen);
	}
	/* bigrams: only from literal runs, and a match is never rejected */
	assert_int_equal(glob_compile(&a, "**/*/?", 6, false, &g, &err), 0);
	assert_int_equal(g->bigrams, 0);
	assert_int_equal(glob_compile(&a, "**/.git/hooks/**", 16, false, &g,
				      &err), 0);
	assert_int_not_equal(g->bigrams, 0);
	{
		struct glob_path p = { .s = "src/hooks/a.c", .len = 13 };

		assert_false(glob_match_path(g, &p));
		assert_true(p.have_map);	/* rejected by the bigrams */
		p = (struct glob_path){ .s = "x/.git/hooks/y", .len = 14 };
		assert_true(glob_match_path(g, &p));
	}
	arena_release(&a);
}

struct below_case {
	const char *glob, *folder;
	bool below, covers;
};

static const struct below_case below_cases[] = {
	{ "**/.env", "src", true, false },
	{ "**/.env", "", true, false },
	{ "src/**", "src", true, true },
	{ "src/**", "", true, false },
	{ "src/**", "lib", false, false },
	{ "src/**", "src/a/b", true, true },
	{ "src/*.c", "src", true, false },
	{ "src/*.c", "src/sub", false, false },
	{ "src", "src", false, false },
	{ "src", "", true, false },
	{ "a/b", "a", true, false },
	{ "a/b", "a/b", false, false },
	{ "**", "anything", true, true },
	{ "**", "", true, true },
	{ "build/", "build", true, true },
	{ "build/", "build/x", true, true },
	{ "build/", "buildx", false, false },
	{ "*/x", "a", true, false },
	{ "*/x", "a/b", false, false },
	{ "*/**", "a", true, true },
	{ ".git/objects/", ".git", true, false },
	{ ".git/objects/", ".git/objects", true, true },
	{ "a/**/b", "a/x/y", true, false },
	{ "a/**/b/**", "a/x/b", true, true },
};

static void test_below(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;

	(void)state;
	for (size_t i = 0; i < sizeof(below_cases) / sizeof(*below_cases); i++) {
		const struct below_case *c = &below_cases[i];
		size_t len = strlen(c->folder);

		assert_int_equal(glob_compile(&a, c->glob, strlen(c->glob),
					      false, &g, &err), 0);
		if (glob_match_below(g, c->folder, len) != c->below)
			fail_msg("below: glob '%s' folder '%s'", c->glob,
				 c->folder);
		if (glob_covers_below(g, c->folder, len) != c->covers)
			fail_msg("covers: glob '%s' folder '%s'", c->glob,
				 c->folder);
	}
	arena_release(&a);
}

/* Consecutive '**' collapse, a trailing '/' after '**' adds nothing. */
static void test_dstar_collapse(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;

	(void)state;
	assert_int_equal(glob_compile(&a, "a/**/**/b", 9, false, &g, &err), 0);
	assert_int_equal(g->ncomps, 3);
	assert_int_equal(glob_compile(&a, "a/**/", 5, false, &g, &err), 0);
	assert_int_equal(g->ncomps, 2);
	assert_int_equal(glob_compile(&a, "a/", 2, false, &g, &err), 0);
	assert_int_equal(g->ncomps, 2);
	assert_int_equal(g->comps[1].kind, GC_DSTAR);
	assert_string_equal(g->text, "a/");
	arena_release(&a);
}

/* Hide rules compile their globs "and below". */
static void test_and_below(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;

	(void)state;
	assert_int_equal(glob_compile(&a, "**/*.pem", 8, true, &g, &err), 0);
	assert_string_equal(g->text, "**/*.pem");
	assert_true(glob_match(g, "k.pem", 5));
	assert_true(glob_match(g, "a/k.pem", 7));
	assert_true(glob_match(g, "a/k.pem/inner/x", 15));
	assert_false(glob_match(g, "a/k.pemx", 8));
	assert_false(glob_match(g, "a/k", 3));
	assert_int_equal(g->slen, 0);
	assert_true(g->bigrams);	/* ".pem" filters */
	assert_int_equal(glob_compile(&a, "secrets/", 8, true, &g, &err), 0);
	assert_int_equal(g->ncomps, 2);
	assert_true(glob_match(g, "secrets", 7));
	assert_true(glob_match(g, "secrets/a", 9));
	assert_int_equal(glob_compile(&a, ".env", 4, true, &g, &err), 0);
	assert_false(g->literal);
	assert_true(glob_match(g, ".env", 4));
	assert_true(glob_match(g, ".env/x", 6));
	assert_false(glob_match(g, ".envx", 5));
	arena_release(&a);
}

/* Paths are slices: bytes past len are never looked at. */
static void test_slice(void **state)
{
	struct arena a = { 0 };
	const struct glob *g;
	struct glob_error err;

	(void)state;
	assert_int_equal(glob_compile(&a, "src/*.c", 7, false, &g, &err), 0);
	assert_true(glob_match(g, "src/a.c/more", 7));
	assert_false(glob_match(g, "src/a.c", 6));
	assert_int_equal(glob_compile(&a, "src", 3, false, &g, &err), 0);
	assert_true(glob_match(g, "src/x", 3));
	arena_release(&a);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_match_table),
		cmocka_unit_test(test_match_implies_below),
		cmocka_unit_test(test_compile_errors),
		cmocka_unit_test(test_compile_limits),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_below),
		cmocka_unit_test(test_dstar_collapse),
		cmocka_unit_test(test_and_below),
		cmocka_unit_test(test_slice),
	};

	return cmocka_run_group_tests_name("policy_glob", tests, NULL, NULL);
}
