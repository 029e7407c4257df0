/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_parser.c - the policy language: every rule form is accepted
 * with its meaning, every mistake is reported as FILE:LINE:COL with the
 * right line and column, all mistakes of a file are reported, and a file
 * with any mistake yields no policy.
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

#include "policy_int.h"

static struct policy *load_ok(const char *text)
{
	struct policy *p = NULL;
	char *msg = NULL;
	int ret = policy_load_buf("t.policy", text, strlen(text), &p, &msg);

	if (ret)
		fail_msg("refused (%d): %s\n---\n%s", ret, msg ? msg : "",
			 text);
	assert_null(msg);
	return p;
}

/* The text is refused with exactly the error lines want (joined by \n),
 * each compared up to the length of the expected line. */
static void expect_errors(const char *text, size_t len, const char *want)
{
	struct policy *p = (struct policy *)1;
	char *msg = NULL;
	const char *g, *w = want;
	int ret = policy_load_buf("t.policy", text, len, &p, &msg);

	assert_int_equal(ret, -EINVAL);
	assert_null(p);
	assert_non_null(msg);
	for (g = msg; *w; ) {
		size_t wl = strcspn(w, "\n"), gl = strcspn(g, "\n");

		if (gl < wl || memcmp(g, w, wl))
			fail_msg("got:\n%s\nwant:\n%s", msg, want);
		w += wl + (w[wl] == '\n');
		g += gl + (g[gl] == '\n');
	}
	if (*g)
		fail_msg("extra errors:\n%s\nwant:\n%s", msg, want);
	free(msg);
}

#define EXPECT(text, want) expect_errors(text, strlen(text), want)

static enum policy_action action(const struct policy *p, enum policy_op op,
				 const char *path, unsigned *line)
{
	struct policy_verdict v;

	policy_check(p, op, path, strlen(path), &v);
	*line = v.line;
	return v.action;
}

/* ---- rule forms ------------------------------------------------------- */

static void test_deny_allow_forms(void **state)
{
	struct policy *p = load_ok(
		"allow write src/keep.c\n"
		"deny write,delete src/**\n"
		"deny modify cfg\n"
		"deny all secret\n");
	unsigned line;

	(void)state;
	assert_int_equal(action(p, POLICY_OP_WRITE, "src/a.c", &line),
			 POLICY_DENY);
	assert_int_equal(line, 2);
	assert_int_equal(action(p, POLICY_OP_DELETE, "src/a.c", &line),
			 POLICY_DENY);
	assert_int_equal(action(p, POLICY_OP_CREATE, "src/a.c", &line),
			 POLICY_ALLOW);
	assert_int_equal(line, 0);
	assert_int_equal(action(p, POLICY_OP_WRITE, "src/keep.c", &line),
			 POLICY_ALLOW);
	assert_int_equal(line, 1);
	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		assert_int_equal(action(p, op, "cfg", &line),
				 op == POLICY_OP_READ ? POLICY_ALLOW
						      : POLICY_DENY);
		assert_int_equal(action(p, op, "secret", &line), POLICY_DENY);
		assert_int_equal(line, 4);
	}
	assert_int_equal(policy_rule_count(p), 4);
	policy_free(p);
}

/* Caller conditions: the parsed form, the order with plain rules, and
 * every mistake at its column. */
static void test_caller_forms(void **state)
{
	struct policy *p = load_ok(
		"deny delete keep/** except-by /usr/bin/git /usr/lib/git-core/*\n"
		"allow delete keep/tmp only-by /bin/rm\n"
		"deny delete keep/tmp\n"
		"readonly ro/ except-by /usr/bin/make\n"
		"limit deletes 5 except build/** except-by /usr/bin/git\n");
	unsigned line;

	(void)state;
	/* no caller known: except-by applies, only-by does not */
	assert_int_equal(action(p, POLICY_OP_DELETE, "keep/a", &line),
			 POLICY_DENY);
	assert_int_equal(line, 1);
	assert_int_equal(action(p, POLICY_OP_DELETE, "keep/tmp", &line),
			 POLICY_DENY);
	assert_int_equal(line, 1);
	assert_int_equal(action(p, POLICY_OP_WRITE, "ro/x", &line),
			 POLICY_DENY);
	assert_int_equal(line, 4);
	assert_true(policy_delete_uncounted(p, "build/x.o", 9));
	assert_false(policy_delete_uncounted(p, "src/x.c", 7));
	assert_int_equal(policy_limits(p)->deletes, 5);
	policy_free(p);

	EXPECT("deny delete x except-by",
	       "t.policy:1:24: missing program path after the caller");
	EXPECT("deny delete except-by /a",
	       "t.policy:1:12: missing glob before the caller condition");
	EXPECT("deny delete x except-by usr/bin/git",
	       "t.policy:1:25: expected the absolute path of a program");
	EXPECT("hide x except-by /bin/rm",
	       "t.policy:1:8: a caller condition is only allowed on deny");
	EXPECT("flag x only-by /bin/rm",
	       "t.policy:1:8: a caller condition is only allowed on deny");
	EXPECT("deny delete x except-by /a only-by /b",
	       "t.policy:1:28: only one caller condition per rule");
	EXPECT("deny delete x only-by /a in-repo",
	       "t.policy:1:26: 'in-repo' goes last");
	EXPECT("deny delete x except-by /a[",
	       "t.policy:1:27: unclosed '['");
	EXPECT("limit deletes 5 except",
	       "t.policy:1:23: missing glob after 'except'");
	EXPECT("limit deletes 5 only-by /x",
	       "t.policy:1:17: a limit takes 'except-by', not 'only-by'");
	EXPECT("limit files 5 except x",
	       "t.policy:1:15: unexpected 'except' after 'the limit value'");
}

/* `limit deletes N ... except-ignored`: right after N or after the globs
 * of except, once; every mistake at its column. */
static void test_except_ignored(void **state)
{
	static const char *const ok[] = {
		"limit deletes 5 except-ignored\n",
		"limit deletes 5 except-ignored except b/**\n",
		"limit deletes 5 except b/** except-ignored\n",
		"limit deletes 5 except b/** except-ignored except-by /bin/rm\n",
		"limit deletes 5 except-ignored except-by /bin/rm\n",
	};
	struct policy *p;

	(void)state;
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		p = load_ok(ok[i]);
		assert_true(policy_delete_uncounted_ignored(p));
		assert_true(policy_has_uncounted(p));
		assert_int_equal(policy_limits(p)->deletes, 5);
		assert_int_equal(policy_delete_uncounted(p, "b/x", 3),
				 strstr(ok[i], "b/**") != NULL);
		/* except-ignored is a keyword, never a glob */
		assert_false(policy_delete_uncounted(p, "except-ignored", 14));
		policy_free(p);
	}
	p = load_ok("limit deletes 5 except b/**\n");
	assert_false(policy_delete_uncounted_ignored(p));
	policy_free(p);
	p = load_ok("limit deletes 5\n");
	assert_false(policy_delete_uncounted_ignored(p));
	assert_false(policy_has_uncounted(p));
	policy_free(p);
	assert_int_equal(policy_load_default(&p), 0);
	assert_true(policy_delete_uncounted_ignored(p));
	policy_free(p);

	EXPECT("limit deletes 5 except a except-ignored b",
	       "t.policy:1:26: 'except-ignored' goes right after the limit "
	       "value or after the globs of 'except'");
	EXPECT("limit deletes 5 except-ignored except-ignored",
	       "t.policy:1:32: 'except-ignored' given twice");
	EXPECT("limit deletes 5 except-ignored x",
	       "t.policy:1:32: unexpected 'x' after 'except-ignored'");
	EXPECT("limit deletes 5 except-ignored except",
	       "t.policy:1:38: missing glob after 'except'");
	EXPECT("limit deletes 5 except except-ignored",
	       "t.policy:1:23: missing glob after 'except'");
	EXPECT("limit files 5 except-ignored",
	       "t.policy:1:15: unexpected 'except-ignored' after 'the limit "
	       "value'");
}

/* Every operation name of the language, alone in a deny. */
static void test_every_op_name(void **state)
{
	char text[64];
	struct policy *p;
	unsigned line;

	(void)state;
	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		snprintf(text, sizeof(text), "deny %s x",
			 policy_op_name((enum policy_op)op));
		p = load_ok(text);
		for (unsigned o = 0; o < POLICY_OP__COUNT; o++)
			assert_int_equal(action(p, o, "x", &line),
					 o == op ? POLICY_DENY : POLICY_ALLOW);
		policy_free(p);
	}
}

static void test_hide_readonly_flag_forms(void **state)
{
	struct policy *p = load_ok(
		"hide .env **/*.pem\n"
		"readonly .git/config\n"
		"flag .github/workflows/ .envrc\n");
	struct policy_verdict v;
	unsigned line;

	(void)state;
	assert_int_equal(action(p, POLICY_OP_READ, "a/b.pem", &line),
			 POLICY_HIDE);
	assert_int_equal(line, 1);
	assert_true(policy_is_hidden(p, ".env", 4));
	assert_int_equal(action(p, POLICY_OP_READ, ".git/config", &line),
			 POLICY_ALLOW);
	assert_int_equal(action(p, POLICY_OP_RENAME, ".git/config", &line),
			 POLICY_DENY);
	assert_int_equal(line, 2);
	assert_int_equal(policy_check(p, POLICY_OP_WRITE, ".envrc", 6, &v), 0);
	assert_true(v.flagged);
	assert_int_equal(v.line, 3);
	assert_true(policy_is_flagged(p, ".github/workflows/ci.yml", 24));
	policy_free(p);
}

static void test_limit_forms(void **state)
{
	struct policy *p = load_ok(
		"limit bytes 10M\n"
		"limit files 100\n"
		"\n"
		"limit file-size 1GiB\n"
		"limit deletes 0\n");
	const struct policy_limits *l = policy_limits(p);

	(void)state;
	assert_int_equal(l->bytes, 10u << 20);
	assert_int_equal(l->bytes_line, 1);
	assert_int_equal(l->files, 100);
	assert_int_equal(l->files_line, 2);
	assert_int_equal(l->file_size, 1u << 30);
	assert_int_equal(l->file_size_line, 4);
	assert_int_equal(l->deletes, 0);
	assert_int_equal(l->deletes_line, 5);
	policy_free(p);
	p = load_ok("limit deletes 7\n");
	l = policy_limits(p);
	assert_true(l->bytes == UINT64_MAX && l->files == UINT64_MAX &&
		    l->file_size == UINT64_MAX);
	assert_int_equal(l->bytes_line + l->files_line + l->file_size_line, 0);
	policy_free(p);
}

/* The command's limits (txfs run, txfs exec): timeout and cpu are
 * durations in milliseconds, memory a size, pids a count. */
static void test_command_limit_forms(void **state)
{
	struct policy *p = load_ok(
		"limit timeout 30m\n"
		"limit memory 4G\n"
		"limit cpu 600\n"
		"limit pids 4096\n");
	const struct policy_limits *l = policy_limits(p);

	(void)state;
	assert_int_equal(l->timeout_ms, 30 * 60 * 1000);
	assert_int_equal(l->timeout_line, 1);
	assert_int_equal(l->memory, 4ull << 30);
	assert_int_equal(l->memory_line, 2);
	assert_int_equal(l->cpu_ms, 600 * 1000);
	assert_int_equal(l->cpu_line, 3);
	assert_int_equal(l->pids, 4096);
	assert_int_equal(l->pids_line, 4);
	assert_true(l->bytes == UINT64_MAX && l->deletes == UINT64_MAX);
	policy_free(p);
	p = load_ok("limit deletes 7\n");
	l = policy_limits(p);
	assert_true(l->timeout_ms == UINT64_MAX && l->memory == UINT64_MAX &&
		    l->cpu_ms == UINT64_MAX && l->pids == UINT64_MAX);
	policy_free(p);
	p = load_ok("limit timeout 1500ms\nlimit cpu 2h\n");
	assert_int_equal(policy_limits(p)->timeout_ms, 1500);
	assert_int_equal(policy_limits(p)->cpu_ms, 2 * 3600 * 1000);
	policy_free(p);
}

/* units.c itself: what the command line's --timeout, --memory, --cpu and
 * --pids read. */
static void test_units(void **state)
{
	static const struct {
		const char *text;
		uint64_t ms;
	} durations[] = {
		{ "90", 90000 }, { "90s", 90000 }, { "5m", 300000 },
		{ "1h", 3600000 }, { "2d", 172800000 }, { "250ms", 250 },
		{ "0", 0 },
	};
	static const struct {
		const char *text, *err;
		size_t off;
	} bad[] = {
		{ "", "expected a duration", 0 }, { "s", "expected a duration", 0 },
		{ "5x", "unknown unit", 1 }, { "1.5h", "unknown unit", 1 },
		{ "-1", "expected a duration", 0 }, { "5 m", "unknown unit", 1 },
		{ "18446744073709551615s", "duration too large", 0 },
		{ "99999999999999999999", "number too large", 0 },
	};
	uint64_t v;
	size_t off;

	(void)state;
	for (size_t i = 0; i < sizeof(durations) / sizeof(*durations); i++) {
		assert_null(policy_parse_duration(durations[i].text,
			strlen(durations[i].text), &v, &off));
		assert_int_equal(v, durations[i].ms);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
		const char *m = policy_parse_duration(bad[i].text,
			strlen(bad[i].text), &v, &off);

		assert_non_null(m);
		if (strncmp(m, bad[i].err, strlen(bad[i].err)))
			fail_msg("'%s': got '%s' want '%s'", bad[i].text, m,
				 bad[i].err);
		assert_int_equal(off, bad[i].off);
	}
	assert_null(policy_parse_size("512M", 4, &v, &off));
	assert_int_equal(v, 512u << 20);
	assert_null(policy_parse_size("2G", 2, &v, &off));
	assert_int_equal(v, 2ull << 30);
	assert_null(policy_parse_size("4096", 4, &v, &off));
	assert_int_equal(v, 4096);
	assert_string_equal(policy_parse_size("2GB", 3, &v, &off),
			    "decimal units are not accepted: write K, M, G, "
			    "T or KiB, MiB, GiB, TiB (all 1024-based)");
	assert_int_equal(off, 1);
	assert_non_null(policy_parse_size("x", 1, &v, &off));
	assert_non_null(policy_parse_size("16777216T", 9, &v, &off));
	assert_null(policy_parse_count("4096", 4, &v, &off));
	assert_int_equal(v, 4096);
	assert_non_null(policy_parse_count("4K", 2, &v, &off));
	assert_int_equal(off, 1);
}

static void test_sizes(void **state)
{
	static const struct {
		const char *text;
		uint64_t bytes;
	} sizes[] = {
		{ "0", 0 }, { "10", 10 }, { "10K", 10240 },
		{ "10KiB", 10240 }, { "10M", 10u << 20 },
		{ "10MiB", 10u << 20 }, { "1G", 1u << 30 },
		{ "1GiB", 1u << 30 }, { "2T", 2ull << 40 },
		{ "3TiB", 3ull << 40 },
		{ "18446744073709551615", UINT64_MAX },
		{ "16777215T", 16777215ull << 40 },
	};
	char text[64];
	struct policy *p;

	(void)state;
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++) {
		snprintf(text, sizeof(text), "limit bytes %s", sizes[i].text);
		p = load_ok(text);
		assert_int_equal(policy_limits(p)->bytes, sizes[i].bytes);
		policy_free(p);
	}
}

static void test_network_exec_control_forms(void **state)
{
	struct policy *p = load_ok(
		"network deny\n"
		"exec deny **/curl bin/*\n"
		"exec deny tools/x\n"
		"control deny commit rollback\n"
		"control deny release\n");
	const char *const *globs;

	(void)state;
	assert_true(policy_network_denied(p));
	assert_int_equal(policy_exec_globs(p, &globs), 3);
	assert_string_equal(globs[0], "**/curl");
	assert_string_equal(globs[1], "bin/*");
	assert_string_equal(globs[2], "tools/x");
	assert_true(policy_exec_denied(p, "a/b/curl", 8));
	assert_true(policy_exec_denied(p, "bin/sh", 6));
	assert_false(policy_exec_denied(p, "bin/x/sh", 8));
	assert_true(policy_control_denied(p, "commit"));
	assert_true(policy_control_denied(p, "rollback"));
	assert_true(policy_control_denied(p, "release"));
	assert_false(policy_control_denied(p, "savepoint"));
	assert_false(policy_control_denied(p, "bogus"));
	policy_free(p);
	p = load_ok("deny write x\n");
	assert_false(policy_network_denied(p));
	assert_int_equal(policy_exec_globs(p, &globs), 0);
	assert_false(policy_control_denied(p, "commit"));
	policy_free(p);
}

static void test_comments_blanks_crlf(void **state)
{
	struct policy *p = load_ok(
		"# a comment\n"
		"\n"
		"   \t\n"
		"  deny write x   # trailing comment\r\n"
		"hide a#b \\#c\r\n"
		"\tflag dir\\ with\\ space/\n"
		"deny read y");	/* no final newline */
	unsigned line;

	(void)state;
	assert_int_equal(action(p, POLICY_OP_WRITE, "x", &line), POLICY_DENY);
	assert_int_equal(line, 4);
	assert_true(policy_is_hidden(p, "a#b", 3));
	assert_true(policy_is_hidden(p, "#c", 2));
	assert_true(policy_is_flagged(p, "dir with space/f", 16));
	assert_int_equal(action(p, POLICY_OP_READ, "y", &line), POLICY_DENY);
	assert_int_equal(line, 7);
	assert_int_equal(policy_rule_count(p), 4);
	policy_free(p);
}

static void test_empty_policy(void **state)
{
	struct policy *p = load_ok("");
	struct policy_verdict v;

	(void)state;
	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		assert_int_equal(policy_check(p, op, "a/b", 3, &v), 0);
		assert_int_equal(v.action, POLICY_ALLOW);
		assert_false(v.flagged);
		assert_int_equal(v.line, 0);
	}
	assert_int_equal(policy_rule_count(p), 0);
	assert_string_equal(policy_text(p), "");
	policy_free(p);
	p = load_ok("# only a comment\n\n");
	assert_int_equal(policy_rule_count(p), 0);
	policy_free(p);
}

/* ---- errors ----------------------------------------------------------- */

static void test_error_keywords(void **state)
{
	(void)state;
	EXPECT("frobnicate x", "t.policy:1:1: unknown rule 'frobnicate'");
	EXPECT("\n\n  Deny write x", "t.policy:3:3: unknown rule 'Deny'");
	EXPECT("\tbogus", "t.policy:1:2: unknown rule");
	EXPECT("deny", "t.policy:1:5: missing operations and globs");
	EXPECT("allow   ", "t.policy:1:6: missing operations and globs");
	EXPECT("deny write", "t.policy:1:11: missing glob after the operations");
	EXPECT("hide", "t.policy:1:5: 'hide' needs at least one glob");
	EXPECT("readonly", "t.policy:1:9: 'readonly' needs at least one glob");
	EXPECT("flag # comment", "t.policy:1:5: 'flag' needs at least one glob");
}

static void test_error_ops(void **state)
{
	(void)state;
	EXPECT("deny wrte x", "t.policy:1:6: unknown operation 'wrte'");
	EXPECT("deny read,wrte x", "t.policy:1:11: unknown operation 'wrte'");
	EXPECT("deny read,,write x", "t.policy:1:11: empty operation");
	EXPECT("deny read, x", "t.policy:1:11: empty operation");
	EXPECT("deny ,read x", "t.policy:1:6: empty operation");
	EXPECT("deny .git/** x", "t.policy:1:6: expected a list of operations");
	EXPECT("deny .git/**", "t.policy:1:6: expected a list of operations");
	EXPECT("allow reed,wrte x",
	       "t.policy:1:7: unknown operation 'reed'\n"
	       "t.policy:1:12: unknown operation 'wrte'");
	EXPECT("deny READ x", "t.policy:1:6: unknown operation 'READ'");
}

static void test_error_globs(void **state)
{
	(void)state;
	EXPECT("deny write [abc", "t.policy:1:12: unclosed '['");
	EXPECT("deny write ok a/[bc", "t.policy:1:17: unclosed '['");
	EXPECT("hide /abs", "t.policy:1:6: globs are relative");
	EXPECT("hide a//b", "t.policy:1:8: empty path component");
	EXPECT("hide a/**b", "t.policy:1:8: '**' must be a whole");
	EXPECT("hide a/../b", "t.policy:1:8: '.' and '..'");
	EXPECT("flag [z-a]", "t.policy:1:9: empty range");
	EXPECT("exec deny [", "t.policy:1:11: unclosed '['");
	EXPECT("readonly x ] [ y [",
	       "t.policy:1:14: unclosed '['\n"
	       "t.policy:1:18: unclosed '['");
}

static void test_error_limits(void **state)
{
	(void)state;
	EXPECT("limit", "t.policy:1:6: missing limit kind");
	EXPECT("limit size 10", "t.policy:1:7: unknown limit");
	EXPECT("limit bytes", "t.policy:1:12: missing value");
	EXPECT("limit bytes 10MB", "t.policy:1:15: decimal units");
	EXPECT("limit bytes 10kB", "t.policy:1:15: decimal units");
	EXPECT("limit bytes 10X", "t.policy:1:15: unknown unit");
	EXPECT("limit bytes 10 M", "t.policy:1:16: unexpected 'M'");
	EXPECT("limit bytes M", "t.policy:1:13: expected a size");
	EXPECT("limit bytes -1", "t.policy:1:13: expected a size");
	EXPECT("limit files 10K", "t.policy:1:15: expected a plain number");
	EXPECT("limit deletes x", "t.policy:1:15: expected a number");
	EXPECT("limit bytes 18446744073709551616", "t.policy:1:13: number too");
	EXPECT("limit bytes 16777216T", "t.policy:1:13: size too large");
	EXPECT("limit bytes 10M extra", "t.policy:1:17: unexpected 'extra'");
	EXPECT("limit timeout", "t.policy:1:14: missing value");
	EXPECT("limit timeout 5x", "t.policy:1:16: unknown unit");
	EXPECT("limit timeout 0", "t.policy:1:15: must be more than 0");
	EXPECT("limit cpu 1.5h", "t.policy:1:12: unknown unit");
	EXPECT("limit cpu -5", "t.policy:1:11: expected a duration");
	EXPECT("limit memory 4GB", "t.policy:1:15: decimal units");
	EXPECT("limit memory 0", "t.policy:1:14: must be more than 0");
	EXPECT("limit memory none", "t.policy:1:14: expected a size");
	EXPECT("limit pids 4K", "t.policy:1:13: expected a plain number");
	EXPECT("limit pids 0", "t.policy:1:12: must be more than 0");
	EXPECT("limit pids 10 more", "t.policy:1:15: unexpected 'more'");
	EXPECT("limit memory 1G\nlimit memory 2G",
	       "t.policy:2:7: duplicate 'limit memory': already set on line 1");
	EXPECT("limit time 5s", "t.policy:1:7: unknown limit (expected bytes, "
	       "files, file-size, deletes, timeout, memory, cpu or pids)");
	EXPECT("limit deletes 5\n# x\nlimit deletes 6",
	       "t.policy:3:7: duplicate 'limit deletes': already set on "
	       "line 1");
	EXPECT("limit bytes 1\nlimit file-size 1\nlimit bytes 2\n"
	       "limit file-size 2",
	       "t.policy:3:7: duplicate 'limit bytes'\n"
	       "t.policy:4:7: duplicate 'limit file-size'");
}

static void test_error_network_exec_control(void **state)
{
	(void)state;
	EXPECT("network", "t.policy:1:8: expected 'deny' after 'network'");
	EXPECT("network allow", "t.policy:1:9: unknown network rule 'allow'");
	EXPECT("network deny now", "t.policy:1:14: unexpected 'now'");
	EXPECT("exec", "t.policy:1:5: expected 'deny' after 'exec'");
	EXPECT("exec allow x", "t.policy:1:6: unknown exec rule 'allow'");
	EXPECT("exec deny", "t.policy:1:10: 'exec deny' needs at least one");
	EXPECT("control deny", "t.policy:1:13: 'control deny' needs");
	EXPECT("control deny commit push",
	       "t.policy:1:21: unknown control verb");
	EXPECT("control permit commit",
	       "t.policy:1:9: unknown control rule 'permit'");
}

static void test_error_lexical(void **state)
{
	static const char nul[] = "deny\0 write x\nhide y\0\n";

	(void)state;
	expect_errors(nul, sizeof(nul) - 1,
		      "t.policy:1:5: NUL byte\n"
		      "t.policy:2:7: NUL byte");
	EXPECT("hide a\\\nhide b", "t.policy:1:7: backslash at the end of a "
	       "line");
	EXPECT("hide a\\", "t.policy:1:7: backslash at the end of a line");
}

/* All mistakes of a file, in order, and no policy. */
static void test_error_all_reported(void **state)
{
	(void)state;
	EXPECT("bogus\n"
	       "deny write [\n"
	       "# fine\n"
	       "deny write ok\n"
	       "limit bytes 1KB\n"
	       "deny wrte,reed x [\n",
	       "t.policy:1:1: unknown rule 'bogus'\n"
	       "t.policy:2:12: unclosed '['\n"
	       "t.policy:5:14: decimal units\n"
	       "t.policy:6:6: unknown operation 'wrte'\n"
	       "t.policy:6:11: unknown operation 'reed'\n"
	       "t.policy:6:18: unclosed '['");
}

static void test_error_cap(void **state)
{
	struct policy *p = NULL;
	char *text = malloc(150 * 6 + 1), *msg = NULL;
	size_t lines = 0;

	(void)state;
	text[0] = '\0';
	for (int i = 0; i < 150; i++)
		strcat(text, "bogus\n");
	assert_int_equal(policy_load_buf("t.policy", text, strlen(text), &p,
					 &msg), -EINVAL);
	assert_null(p);
	for (const char *s = msg; s; s = strchr(s + 1, '\n'))
		lines++;
	assert_int_equal(lines, DIAG_MAX + 1);
	assert_non_null(strstr(msg, "t.policy:100:1: unknown rule"));
	assert_non_null(strstr(msg, "t.policy: too many errors"));
	assert_null(strstr(msg, "t.policy:101:"));
	free(msg);
	free(text);
}

static void test_errmsg_optional(void **state)
{
	struct policy *p = NULL;

	(void)state;
	assert_int_equal(policy_load_buf("t", "bogus", 5, &p, NULL), -EINVAL);
	assert_null(p);
}

/* ---- files and the shipped policies ----------------------------------- */

static void test_load_file_errors(void **state)
{
	struct policy *p = (struct policy *)1;
	char *msg = (char *)1;

	(void)state;
	assert_int_equal(policy_load_file("/nonexistent/x.policy", &p, &msg),
			 -ENOENT);
	assert_null(p);
	assert_null(msg);
	assert_int_equal(policy_load_file("/", &p, &msg), -EISDIR);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

static void test_default_policy(void **state)
{
	struct policy *p = NULL;
	size_t len;
	char *file = slurp(POLICY_SRCDIR "/default.policy", &len);

	(void)state;
	assert_string_equal(policy_default_text(), file);
	assert_int_equal(policy_load_default(&p), 0);
	assert_string_equal(policy_name(p), "default.policy");
	assert_string_equal(policy_text(p), file);
	assert_int_equal(policy_limits(p)->deletes, 1000);
	assert_false(policy_hides_below(p, "", 0));
	policy_free(p);
	free(file);
}

static void test_examples_load(void **state)
{
	static const char *const names[] = {
		POLICY_SRCDIR "/default.policy",
		POLICY_SRCDIR "/examples/strict.policy",
		POLICY_SRCDIR "/examples/secrets.policy",
		POLICY_SRCDIR "/examples/ci.policy",
	};
	struct policy *p;
	char *msg = NULL;

	(void)state;
	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		if (policy_load_file(names[i], &p, &msg))
			fail_msg("%s: %s", names[i], msg ? msg : "");
		assert_string_equal(policy_name(p), names[i]);
		assert_true(policy_rule_count(p) > 3);
		policy_free(p);
	}
}

static void test_rule_text(void **state)
{
	struct policy *p = load_ok("# c\ndeny write x  \t\r\n\nhide y");
	const char *s;
	size_t len;

	(void)state;
	s = policy_rule_text(p, 2, &len);
	assert_non_null(s);
	assert_int_equal(len, 12);
	assert_memory_equal(s, "deny write x", 12);
	s = policy_rule_text(p, 4, &len);
	assert_int_equal(len, 6);
	assert_memory_equal(s, "hide y", 6);
	assert_null(policy_rule_text(p, 5, &len));
	assert_null(policy_rule_text(p, 0, &len));
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_deny_allow_forms),
		cmocka_unit_test(test_caller_forms),
		cmocka_unit_test(test_every_op_name),
		cmocka_unit_test(test_hide_readonly_flag_forms),
		cmocka_unit_test(test_limit_forms),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_command_limit_forms),
		cmocka_unit_test(test_units),
		cmocka_unit_test(test_network_exec_control_forms),
		cmocka_unit_test(test_comments_blanks_crlf),
		cmocka_unit_test(test_empty_policy),
		cmocka_unit_test(test_error_keywords),
		cmocka_unit_test(test_error_ops),
		cmocka_unit_test(test_error_globs),
		cmocka_unit_test(test_error_limits),
		cmocka_unit_test(test_error_network_exec_control),
		cmocka_unit_test(test_error_lexical),
		cmocka_unit_test(test_error_all_reported),
		cmocka_unit_test(test_error_cap),
		cmocka_unit_test(test_errmsg_optional),
		cmocka_unit_test(test_load_file_errors),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_except_ignored),
		cmocka_unit_test(test_examples_load),
		cmocka_unit_test(test_rule_text),
	};

	return cmocka_run_group_tests_name("policy_parser", tests, NULL, NULL);
}
