/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_audit.c - the audit log: record format (every line parsed
 * with jansson and compared by value, not by escaping style), hostile
 * paths (control bytes, quotes, backslashes, invalid UTF-8, 4 KiB, "\n")
 * written losslessly and unambiguously (K plus K_hex) and read back to the
 * same bytes, arrays of bytes, the terminal quoting, rotation, many threads
 * writing at once, records surviving a SIGKILL of the writer, and the
 * file's creation rules.
 *
 * Fixture: a fresh temporary state folder per test, opened as a dirfd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "policy_int.h"

struct fixture {
	char dir[64];
	int dirfd;
};

static int setup(void **state)
{
	struct fixture *f = calloc(1, sizeof(*f));

	strcpy(f->dir, "/tmp/txfs-audit-XXXXXX");
	if (!mkdtemp(f->dir))
		return -1;
	f->dirfd = open(f->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	*state = f;
	return f->dirfd < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	DIR *d = fdopendir(f->dirfd);
	struct dirent *e;

	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(f->dirfd, e->d_name, 0);
	closedir(d);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* ---- records, parsed with jansson ------------------------------------- */

#define MAX_RECS (8 * 500 + 16)

struct recs {
	json_t *r[MAX_RECS];
	size_t n;
};

/* Parse every line of buf (each must end in '\n' and be exactly one JSON
 * object, strict RFC 8259: jansson rejects invalid UTF-8 and garbage). */
static void parse_lines(const char *buf, size_t len, struct recs *out)
{
	out->n = 0;
	for (const char *s = buf, *nl; s < buf + len; s = nl + 1) {
		json_error_t err;
		json_t *r;

		nl = memchr(s, '\n', (size_t)(buf + len - s));
		assert_non_null(nl);
		r = json_loadb(s, (size_t)(nl - s), 0, &err);
		if (!json_is_object(r))
			fail_msg("line %zu is not a JSON object (%s): %.*s",
				 out->n + 1, err.text, (int)(nl - s), s);
		assert_true(out->n < MAX_RECS);
		out->r[out->n++] = r;
	}
}

static void free_recs(struct recs *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		json_decref(rs->r[i]);
	rs->n = 0;
}

static const char *str(const json_t *r, const char *key)
{
	const char *v = json_string_value(json_object_get(r, key));

	if (!v)
		fail_msg("no string member %s", key);
	return v;
}

static json_int_t num(const json_t *r, const char *key)
{
	const json_t *v = json_object_get(r, key);

	assert_true(json_is_integer(v));
	return json_integer_value(v);
}

/* The members of r are exactly keys, in this order. */
static void assert_keys(const json_t *r, const char *const *keys)
{
	const char *k;
	json_t *v;
	size_t i = 0;

	json_object_foreach((json_t *)r, k, v) {
		if (!keys[i])
			fail_msg("extra member %s", k);
		assert_string_equal(k, keys[i]);
		i++;
	}
	assert_null(keys[i]);
}

static void assert_time(const char *t)
{
	int y, mo, d, h, mi, s, ms, n = 0;

	assert_int_equal(strlen(t), 24);
	assert_int_equal(sscanf(t, "%4d-%2d-%2dT%2d:%2d:%2d.%3dZ%n", &y, &mo,
				&d, &h, &mi, &s, &ms, &n), 7);
	assert_int_equal(n, 24);
	assert_true(y >= 2024 && mo >= 1 && mo <= 12 && d >= 1 && d <= 31);
}

/* r[key] holds exactly the bytes want (through K_hex when needed), and
 * K_hex is there only when want is not UTF-8. */
static void assert_bytes(const json_t *r, const char *key, long idx,
			 const char *want, bool utf8)
{
	char *got = audit_json_bytes(r, key, idx), hk[64];
	const json_t *h;

	snprintf(hk, sizeof(hk), "%s_hex", key);
	h = json_object_get(r, hk);
	if (idx >= 0)
		h = json_array_get(h, (size_t)idx);
	assert_non_null(got);
	assert_int_equal(strlen(got), strlen(want));
	assert_memory_equal(got, want, strlen(want));
	if (utf8)
		assert_true(!h || json_is_null(h));
	else
		assert_true(json_is_string(h));
	free(got);
}

/* ---- helpers ---------------------------------------------------------- */

static struct audit *open_log(struct fixture *f, uint64_t max)
{
	struct audit *a = NULL;

	assert_int_equal(audit_open(f->dirfd, "audit.log", max, &a), 0);
	return a;
}

static char *read_log(struct audit *a, size_t *len)
{
	char *buf = NULL;

	assert_int_equal(audit_read(a, &buf, len), 0);
	assert_int_equal(strlen(buf), *len);
	return buf;
}

/* Check every line is one JSON object; return how many lines. */
static size_t check_lines(const char *buf, size_t len)
{
	static struct recs rs;
	size_t n;

	parse_lines(buf, len, &rs);
	n = rs.n;
	free_recs(&rs);
	return n;
}

/* The log's records, parsed. */
static void read_recs(struct audit *a, struct recs *rs)
{
	size_t len;
	char *buf = read_log(a, &len);

	parse_lines(buf, len, rs);
	free(buf);
}

static const struct policy_verdict deny3 = {
	.action = POLICY_DENY, .line = 3, .file = "t.policy",
};

/* ---- tests ------------------------------------------------------------ */

static void test_veto_record(void **state)
{
	static const char *const keys[] = { "time", "event", "op", "path",
		"rule", "errno", "pid", "uid", "exe", NULL };
	static struct recs rs;
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	struct audit_caller who = { .pid = getpid(), .uid = getuid() };
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len;
	char *buf;

	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(audit_veto(a, "delete", "src/a.c", &deny3, -EACCES,
				    &who), 0);
	buf = read_log(a, &len);
	/* compact: the greps of the shell suites depend on it */
	assert_non_null(strstr(buf, "\"event\":\"veto\",\"op\":\"delete\","
			       "\"path\":\"src/a.c\""));
	parse_lines(buf, len, &rs);
	assert_int_equal(rs.n, 1);
	assert_keys(rs.r[0], keys);
	assert_time(str(rs.r[0], "time"));
	assert_string_equal(str(rs.r[0], "event"), "veto");
	assert_string_equal(str(rs.r[0], "op"), "delete");
	assert_string_equal(str(rs.r[0], "path"), "src/a.c");
	assert_string_equal(str(rs.r[0], "rule"), "t.policy:3");
	assert_string_equal(str(rs.r[0], "errno"), "EACCES");
	assert_int_equal(num(rs.r[0], "pid"), getpid());
	assert_int_equal(num(rs.r[0], "uid"), getuid());
	assert_string_equal(str(rs.r[0], "exe"), exe);
	free_recs(&rs);
	free(buf);
	audit_close(a);
}

static void test_veto_without_rule_or_caller(void **state)
{
	static const char *const keys[] = { "time", "event", "op", "path",
		"rule", "errno", NULL };
	static struct recs rs;
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);

	assert_int_equal(audit_veto(a, "write", "x", NULL, ENOSPC, NULL), 0);
	assert_int_equal(audit_veto(a, "write", NULL, NULL, 4095, NULL), 0);
	read_recs(a, &rs);
	assert_int_equal(rs.n, 2);
	assert_keys(rs.r[0], keys);
	assert_true(json_is_null(json_object_get(rs.r[0], "rule")));
	assert_string_equal(str(rs.r[0], "errno"), "ENOSPC");
	/* no path: ""; an errno without a name: its number */
	assert_string_equal(str(rs.r[1], "path"), "");
	assert_string_equal(str(rs.r[1], "errno"), "4095");
	free_recs(&rs);
	audit_close(a);
}

static void test_event_record(void **state)
{
	static const char *const k0[] = { "time", "event", "txid", "paths",
		"pid", "uid", "exe", NULL };
	static const char *const k1[] = { "time", "event", NULL };
	static struct recs rs;
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	struct audit_caller who = { .pid = 999999999, .uid = 7 };

	assert_int_equal(audit_event(a, "commit", "\"txid\":3,\"paths\":12",
				     &who), 0);
	assert_int_equal(audit_event(a, "rollback", NULL, NULL), 0);
	assert_int_equal(audit_event(a, "savepoint", "", NULL), 0);
	read_recs(a, &rs);
	assert_int_equal(rs.n, 3);
	assert_keys(rs.r[0], k0);
	assert_int_equal(num(rs.r[0], "txid"), 3);
	assert_int_equal(num(rs.r[0], "paths"), 12);
	assert_int_equal(num(rs.r[0], "pid"), 999999999);
	assert_int_equal(num(rs.r[0], "uid"), 7);
	/* no such process: exe is null, the record is still written */
	assert_true(json_is_null(json_object_get(rs.r[0], "exe")));
	assert_keys(rs.r[1], k1);
	assert_string_equal(str(rs.r[1], "event"), "rollback");
	assert_keys(rs.r[2], k1);
	assert_string_equal(str(rs.r[2], "event"), "savepoint");
	free_recs(&rs);
	audit_close(a);
}

/* Members that are not JSON are refused, and still logged as bytes. */
static void test_event_bad_fields(void **state)
{
	static const char *const bad[] = { "\"a\":", "\"a\":1}", "\"a\":1,"
		"\"a\":2", "\"p\":\"\xff\"", "}{", "\"x\":1} , {\"y\":2" };
	static struct recs rs;
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	size_t n = sizeof(bad) / sizeof(bad[0]);

	for (size_t i = 0; i < n; i++)
		assert_int_equal(audit_event(a, "x", bad[i], NULL), -EINVAL);
	read_recs(a, &rs);
	assert_int_equal(rs.n, n);
	for (size_t i = 0; i < n; i++) {
		assert_string_equal(str(rs.r[i], "event"), "x");
		assert_bytes(rs.r[i], "bad_fields", -1, bad[i],
			     !strchr(bad[i], '\xff'));
	}
	free_recs(&rs);
	audit_close(a);
}

/* Fields given as a JSON object: order kept, time/event not overridden,
 * the object not consumed. */
static void test_record_object(void **state)
{
	static const char *const keys[] = { "time", "event", "name", "name_hex",
		"level", "list", "list_hex", NULL };
	static struct recs rs;
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	json_t *o = json_pack("{s:s,s:s}", "event", "forged", "time", "1999");

	assert_non_null(o);
	assert_int_equal(audit_json_set_bytes(o, "name", "sp\xfe"), 0);
	assert_int_equal(json_object_set_new(o, "level", json_integer(4)), 0);
	assert_int_equal(audit_json_append_bytes(o, "list", "ok"), 0);
	assert_int_equal(audit_json_append_bytes(o, "list", "n\xc3"), 0);
	json_object_del(o, "event");
	json_object_del(o, "time");
	assert_int_equal(audit_record(a, "savepoint", o, NULL), 0);
	assert_int_equal(json_object_size(o), 5);	/* still ours */
	json_object_set_new(o, "event", json_string("forged"));
	assert_int_equal(audit_record(a, "savepoint", o, NULL), 0);
	json_decref(o);
	assert_int_equal(audit_record(a, "recover", NULL, NULL), 0);
	read_recs(a, &rs);
	assert_int_equal(rs.n, 3);
	assert_keys(rs.r[0], keys);
	assert_bytes(rs.r[0], "name", -1, "sp\xfe", false);
	assert_string_equal(str(rs.r[0], "name"), "sp\xef\xbf\xbd");
	assert_bytes(rs.r[0], "list", 0, "ok", true);
	assert_bytes(rs.r[0], "list", 1, "n\xc3", false);
	assert_string_equal(str(rs.r[1], "event"), "savepoint");
	assert_string_equal(str(rs.r[2], "event"), "recover");
	free_recs(&rs);
	audit_close(a);
}

/* Hostile paths: every line is JSON, every path reads back to its exact
 * bytes, and no two different paths give the same (path, path_hex). */
static void test_hostile_paths(void **state)
{
	static struct recs rs;
	static char ctl[40], big[4097], bigbad[4097];
	const struct { const char *p; bool utf8; } t[] = {
		{ "q\"b\\s\nn\tt\x01\x1f\x7f \xc3\xa9 \xe2\x82\xac "
		  "\xf0\x9f\x98\x80", true },
		{ "\\\\\\\"\"\\u0000\\ufffd\\n", true },	/* escapes, as text */
		{ "line1\nline2", true }, { "\n", true }, { "a/b\n/c\r\n", true },
		{ ctl, true },				/* every C0 byte */
		{ "bad\xff", false }, { "bad\xc3", false },
		{ "\xed\xa0\x80", false },		/* a surrogate */
		{ "\xc0\xaf", false },			/* overlong */
		{ "\xf5\x80", false }, { "\xf4\x90\x80\x80", false },
		{ "\xe2\x82", false }, { "\x80", false },
		/* U+FFFD for real vs the bytes it stands for */
		{ "a\xef\xbf\xbd", true }, { "a\xff", false }, { "a\xfe", false },
		{ "\xc2\x80\xc2\x9f", true },		/* C1 controls */
		{ big, true }, { bigbad, false }, { "", true },
	};
	size_t n = sizeof(t) / sizeof(t[0]);
	struct fixture *f = *state;
	struct audit *a = open_log(f, 64u << 20);

	for (int i = 1; i < 32; i++)
		ctl[i - 1] = (char)i;
	memset(big, 'x', 4096);
	for (int i = 0; i < 4096; i += 64)
		big[i] = '/';
	memcpy(bigbad, big, sizeof(big));
	bigbad[2000] = '\xff';
	bigbad[4095] = '\n';
	for (size_t i = 0; i < n; i++)
		assert_int_equal(audit_veto(a, "op\"\\\n\xff", t[i].p, &deny3,
					    EACCES, NULL), 0);
	read_recs(a, &rs);
	assert_int_equal(rs.n, n);
	for (size_t i = 0; i < n; i++) {
		assert_bytes(rs.r[i], "path", -1, t[i].p, t[i].utf8);
		assert_bytes(rs.r[i], "op", -1, "op\"\\\n\xff", false);
	}
	/* unambiguous: different paths, different records */
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			json_t *hi = json_object_get(rs.r[i], "path_hex");
			json_t *hj = json_object_get(rs.r[j], "path_hex");

			assert_false(json_equal(json_object_get(rs.r[i],
					"path"), json_object_get(rs.r[j],
					"path")) && (hi == hj ||
					(hi && hj && json_equal(hi, hj))));
		}
	/* the display form: one U+FFFD a bad byte, the hex exact */
	assert_string_equal(str(rs.r[6], "path"), "bad\xef\xbf\xbd");
	assert_string_equal(str(rs.r[6], "path_hex"), "626164ff");
	assert_string_equal(str(rs.r[8], "path"),
			    "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	free_recs(&rs);
	audit_close(a);
}

/* Arrays of bytes: K_hex parallel to K, null for the exact elements. */
static void test_bytes_arrays(void **state)
{
	static const char *const argv[] = { "ls", "-l", "\xff\xfe", "x\ny",
					    "\xc3\xa9", "t\xc3" };
	json_t *o = json_object(), *h;
	size_t n = sizeof(argv) / sizeof(argv[0]);
	char *s;

	(void)state;
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(audit_json_append_bytes(o, "argv", argv[i]), 0);
		h = json_object_get(o, "argv_hex");
		/* no hex array until one element needs it, then parallel */
		assert_true(i < 2 ? h == NULL : json_array_size(h) == i + 1);
	}
	for (size_t i = 0; i < n; i++)
		assert_bytes(o, "argv", (long)i, argv[i],
			     i != 2 && i != 5);
	h = json_object_get(o, "argv_hex");
	assert_true(json_is_null(json_array_get(h, 0)));
	assert_string_equal(json_string_value(json_array_get(h, 2)), "fffe");
	/* round trip through text */
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	o = json_loads(s, 0, NULL);
	free(s);
	assert_non_null(o);
	for (size_t i = 0; i < n; i++)
		assert_bytes(o, "argv", (long)i, argv[i], i != 2 && i != 5);
	assert_null(audit_json_bytes(o, "argv", (long)n));
	/* a member set again loses a stale K_hex */
	assert_int_equal(audit_json_set_bytes(o, "p", "\xff"), 0);
	assert_int_equal(audit_json_set_bytes(o, "p", "fine"), 0);
	assert_null(json_object_get(o, "p_hex"));
	/* not an array, a key too long */
	assert_int_equal(audit_json_append_bytes(o, "p", "x"), -EINVAL);
	assert_int_equal(audit_json_set_bytes(o, "k123456789012345678901234567"
		"8901234567890123456789012345678901234567890", "x"), -EINVAL);
	json_decref(o);
}

/* A reader refuses what no path can be: bad hex, a NUL byte; text. */
static void test_bytes_reader(void **state)
{
	static const char *const bad[] = {
		"{\"p\":\"x\",\"p_hex\":\"6\"}",
		"{\"p\":\"x\",\"p_hex\":\"zz\"}",
		"{\"p\":\"x\",\"p_hex\":\"6100\"}",
		"{\"p\":\"x\",\"p_hex\":\"6A\"}",
		"{\"p\":\"a\\u0000b\"}",
		"{\"p\":3}",
		"{\"q\":\"x\"}",
	};
	json_t *o;
	char *s;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		o = json_loads(bad[i], JSON_ALLOW_NUL, NULL);
		assert_non_null(o);
		s = audit_json_bytes(o, "p", -1);
		if (s)
			fail_msg("%s read as %s", bad[i], s);
		json_decref(o);
	}
	/* text for people or a model: lossy, always a JSON string */
	o = audit_json_text("a\xff\xc3\n\xc3\xa9");
	assert_string_equal(json_string_value(o),
			    "a\xef\xbf\xbd\xef\xbf\xbd\n\xc3\xa9");
	json_decref(o);
	o = audit_json_text("");
	assert_string_equal(json_string_value(o), "");
	json_decref(o);
	o = json_loads("{\"p\":\"\\ufffd\",\"p_hex\":\"0aff\"}", 0, NULL);
	s = audit_json_bytes(o, "p", -1);
	assert_string_equal(s, "\n\xff");
	free(s);
	json_decref(o);
}

/* For a terminal: no control byte reaches it, and the way back is one. */
static void test_quote(void **state)
{
	static const char *const in[] = { "plain/\xc3\xa9", "a\\b", "a\nb\tc",
		"\x1b[31m\x7f", "bad\xff\xc3", "\xc2\x9b" "x", "\\x1b", "" };
	static const char *const out[] = { "plain/\xc3\xa9", "a\\\\b",
		"a\\nb\\tc", "\\x1b[31m\\x7f", "bad\\xff\\xc3", "\\u009bx",
		"\\\\x1b", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		char *q = audit_quote(in[i]);

		assert_non_null(q);
		assert_string_equal(q, out[i]);
		for (const char *c = q; *c; c++)
			assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
		free(q);
	}
}

/* Names for text listings: plain names as is; the others quoted as git
 * quotes them, and read back to the exact bytes. */
static void test_cquote(void **state)
{
	static const char *const in[] = { "plain/\xc3\xa9 x", "a\\b", "a\nb",
		"q\"", "\x01\x1b\x7f", "bad\xff\xc3", "\xc2\x85" "c1",
		"a -> b", "a, b", "\a\b\t\v\f\r", "" };
	static const char *const sep[] = { " -> ", NULL, NULL, NULL, NULL,
		NULL, NULL, " -> ", ", ", NULL, NULL };
	static const char *const out[] = { "plain/\xc3\xa9 x", "\"a\\\\b\"",
		"\"a\\nb\"", "\"q\\\"\"", "\"\\001\\033\\177\"",
		"\"bad\\377\\303\"", "\"\\302\\205c1\"", "\"a -> b\"",
		"\"a, b\"", "\"\\a\\b\\t\\v\\f\\r\"", "" };

	(void)state;
	for (size_t i = 0; i < sizeof(in) / sizeof(in[0]); i++) {
		char *q = audit_cquote(in[i], sep[i]), *back;
		const char *end;

		assert_non_null(q);
		assert_string_equal(q, out[i]);
		for (const char *c = q; *c; c++)	/* one line, printable */
			assert_true((unsigned char)*c >= 0x20 && *c != 0x7f);
		if (q[0] == '"') {
			assert_int_equal(audit_cunquote(q, &back, &end), 0);
			assert_string_equal(back, in[i]);
			assert_int_equal(*end, '\0');
			free(back);
		}
		free(q);
	}
	/* "a, b" is plain where the separator is not ", " */
	char *q = audit_cquote("a, b", NULL);

	assert_string_equal(q, "a, b");
	free(q);
}

/* Every single byte and every pair of bytes quotes to one printable,
 * valid UTF-8 line and reads back exactly; malformed quoted text is
 * refused. */
static void test_cquote_roundtrip(void **state)
{
	static const char *const bad[] = { "\"abc", "\"a\\q\"", "\"\\000\"",
		"\"\\", "abc", "\"\\777\"" };
	char name[3] = { 0 }, *q, *back;
	const char *end;

	(void)state;
	for (int a = 1; a < 256; a++)
		for (int b = 0; b < 256; b++) {
			name[0] = (char)a;
			name[1] = (char)b;
			q = audit_cquote(name, " -> ");
			assert_non_null(q);
			assert_null(strchr(q, '\n'));
			if (q[0] == '"') {
				assert_int_equal(audit_cunquote(q, &back, &end), 0);
				assert_string_equal(back, name);
				assert_int_equal(*end, '\0');
				free(back);
			} else {
				assert_string_equal(q, name);
			}
			free(q);
		}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		back = (char *)1;
		assert_int_equal(audit_cunquote(bad[i], &back, &end), -EINVAL);
		assert_null(back);
	}
	/* what follows the closing quote is left to the caller */
	assert_int_equal(audit_cunquote("\"a\\nb\" -> x", &back, &end), 0);
	assert_string_equal(back, "a\nb");
	assert_string_equal(end, " -> x");
	free(back);
}

static void test_rotation(void **state)
{
	struct fixture *f = *state;
	struct audit *a = open_log(f, 1000);
	char fields[32], *buf;
	struct stat st;
	size_t len, n;
	int first, last;

	for (int i = 0; i < 60; i++) {
		snprintf(fields, sizeof(fields), "\"seq\":%d", i);
		assert_int_equal(audit_event(a, "savepoint", fields, NULL), 0);
		assert_int_equal(fstatat(f->dirfd, "audit.log", &st, 0), 0);
		assert_true(st.st_size <= 1000);
	}
	assert_int_equal(fstatat(f->dirfd, "audit.log.1", &st, 0), 0);
	assert_true(st.st_size <= 1000 && st.st_size > 500);
	buf = read_log(a, &len);
	n = check_lines(buf, len);
	assert_true(len <= 2000);
	/* the newest records, in order, without a gap */
	assert_int_equal(sscanf(strstr(buf, "\"seq\":"), "\"seq\":%d", &first),
			 1);
	last = first - 1;
	for (const char *s = buf; (s = strstr(s, "\"seq\":")); s++) {
		int seq;

		assert_int_equal(sscanf(s, "\"seq\":%d", &seq), 1);
		assert_int_equal(seq, last + 1);
		last = seq;
	}
	assert_int_equal(last, 59);
	assert_int_equal((size_t)(last - first + 1), n);
	free(buf);
	audit_close(a);
	/* reopening appends to the existing file */
	a = open_log(f, 1000);
	assert_int_equal(audit_event(a, "recover", NULL, NULL), 0);
	buf = read_log(a, &len);
	assert_non_null(strstr(buf, "\"seq\":59}\n"));
	assert_non_null(strstr(buf, "\"event\":\"recover\"}\n"));
	free(buf);
	audit_close(a);
}

#define THREADS 8
#define PER_THREAD 500

struct writer {
	struct audit *a;
	int id;
};

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	char path[64];

	for (int i = 0; i < PER_THREAD; i++) {
		snprintf(path, sizeof(path), "t%d/file-%04d", w->id, i);
		if (audit_veto(w->a, "write", path, &deny3, EACCES, NULL))
			return (void *)1;
	}
	return NULL;
}

static void run_writers(struct audit *a)
{
	pthread_t th[THREADS];
	struct writer w[THREADS];
	void *ret;

	for (int i = 0; i < THREADS; i++) {
		w[i] = (struct writer){ a, i };
		assert_int_equal(pthread_create(&th[i], NULL, writer_main,
						&w[i]), 0);
	}
	for (int i = 0; i < THREADS; i++) {
		assert_int_equal(pthread_join(th[i], &ret), 0);
		assert_null(ret);
	}
}

static void test_threads(void **state)
{
	struct fixture *f = *state;
	struct audit *a = open_log(f, 64u << 20);
	char want[64], *buf;
	size_t len;

	run_writers(a);
	buf = read_log(a, &len);
	assert_int_equal(check_lines(buf, len), THREADS * PER_THREAD);
	for (int t = 0; t < THREADS; t++) {
		snprintf(want, sizeof(want), "\"t%d/file-%04d\"", t,
			 PER_THREAD - 1);
		assert_non_null(strstr(buf, want));
	}
	free(buf);
	audit_close(a);
}

/* Threads and rotation at once: every record whole, sizes bounded. */
static void test_threads_rotating(void **state)
{
	struct fixture *f = *state;
	struct audit *a = open_log(f, 8192);
	struct stat st;
	size_t len;
	char *buf;

	run_writers(a);
	buf = read_log(a, &len);
	assert_true(check_lines(buf, len) > 50);
	assert_true(len <= 2 * 8192);
	assert_int_equal(fstatat(f->dirfd, "audit.log", &st, 0), 0);
	assert_true(st.st_size <= 8192);
	free(buf);
	audit_close(a);
}

/* A record whose write returned is in the file after a SIGKILL. */
static void test_survives_sigkill(void **state)
{
	struct fixture *f = *state;
	struct audit *a;
	size_t len;
	char *buf;
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		if (audit_open(f->dirfd, "audit.log", 0, &a))
			_exit(2);
		for (int i = 0; i < 100; i++)
			audit_event(a, "commit", "\"n\":1", NULL);
		raise(SIGKILL);
		_exit(3);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
	a = open_log(f, 0);
	buf = read_log(a, &len);
	assert_int_equal(check_lines(buf, len), 100);
	free(buf);
	audit_close(a);
}

static void test_open_rules(void **state)
{
	struct fixture *f = *state;
	struct audit *a = NULL;
	struct stat st;

	assert_int_equal(audit_open(f->dirfd, "a/b", 0, &a), -EINVAL);
	assert_null(a);
	assert_int_equal(audit_open(f->dirfd, "", 0, &a), -EINVAL);
	assert_int_equal(audit_open(-1, "log", 0, &a), -EBADF);
	assert_int_equal(symlinkat("/etc/passwd", f->dirfd, "link"), 0);
	assert_int_equal(audit_open(f->dirfd, "link", 0, &a), -ELOOP);
	assert_int_equal(mkdirat(f->dirfd, "dir", 0700), 0);
	assert_int_equal(audit_open(f->dirfd, "dir", 0, &a), -EISDIR);
	unlinkat(f->dirfd, "dir", AT_REMOVEDIR);
	a = open_log(f, 0);
	assert_int_equal(fstatat(f->dirfd, "audit.log", &st, 0), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	audit_close(a);
	/* a NULL log accepts and drops records */
	assert_int_equal(audit_veto(NULL, "x", "y", NULL, EACCES, NULL), 0);
	assert_int_equal(audit_event(NULL, "commit", NULL, NULL), 0);
	audit_close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_veto_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_veto_without_rule_or_caller,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_event_record, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_event_bad_fields, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_record_object, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hostile_paths, setup,
						teardown),
		cmocka_unit_test(test_bytes_arrays),
		cmocka_unit_test(test_bytes_reader),
		cmocka_unit_test(test_quote),
		cmocka_unit_test(test_cquote),
		cmocka_unit_test(test_cquote_roundtrip),
		cmocka_unit_test_setup_teardown(test_rotation, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads, setup, teardown),
		cmocka_unit_test_setup_teardown(test_threads_rotating, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_survives_sigkill, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_open_rules, setup,
						teardown),
	};

	return cmocka_run_group_tests_name("policy_audit", tests, NULL, NULL);
}
