/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_audit.c - the audit log: record format (checked by a small
 * JSON parser in this file), escaping of hostile paths, rotation, many
 * threads writing at once, records surviving a SIGKILL of the writer, and
 * the file's creation rules.
 *
 * Fixture: a fresh temporary state folder per test, opened as a dirfd.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* ---- a strict little JSON parser -------------------------------------- */

static const char *json_value(const char *s);

static const char *json_string(const char *s)
{
	if (*s++ != '"')
		return NULL;
	for (; *s != '"'; s++) {
		if ((unsigned char)*s < 0x20)
			return NULL;
		if (*s != '\\')
			continue;
		s++;
		if (*s == 'u') {
			for (int i = 1; i <= 4; i++)
				if (!strchr("0123456789abcdefABCDEF", s[i]) ||
				    !s[i])
					return NULL;
			s += 4;
		} else if (!*s || !strchr("\"\\/bfnrt", *s)) {
			return NULL;
		}
	}
	return s + 1;
}

static const char *json_object(const char *s)
{
	if (*s++ != '{')
		return NULL;
	if (*s == '}')
		return s + 1;
	for (;;) {
		s = json_string(s);
		if (!s || *s++ != ':')
			return NULL;
		s = json_value(s);
		if (!s)
			return NULL;
		if (*s == '}')
			return s + 1;
		if (*s++ != ',')
			return NULL;
	}
}

static const char *json_value(const char *s)
{
	if (*s == '"')
		return json_string(s);
	if (*s == '{')
		return json_object(s);
	if (!strncmp(s, "null", 4))
		return s + 4;
	if (*s == '-')
		s++;
	if (*s < '0' || *s > '9')
		return NULL;
	while (*s >= '0' && *s <= '9')
		s++;
	return s;
}

/* line is exactly one JSON object followed by '\n'. */
static void assert_json_line(const char *line, size_t len)
{
	char *copy = strndup(line, len);
	const char *end = json_object(copy);

	if (!end || *end != '\n' || end[1])
		fail_msg("not a JSON line: %s", copy);
	free(copy);
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

/* Check every line is JSON; return how many lines. */
static size_t check_lines(const char *buf, size_t len)
{
	size_t n = 0;

	for (const char *s = buf, *nl; s < buf + len; s = nl + 1) {
		nl = memchr(s, '\n', (size_t)(buf + len - s));
		assert_non_null(nl);
		assert_json_line(s, (size_t)(nl - s) + 1);
		n++;
	}
	return n;
}

static const struct policy_verdict deny3 = {
	.action = POLICY_DENY, .line = 3, .file = "t.policy",
};

/* ---- tests ------------------------------------------------------------ */

static void test_veto_record(void **state)
{
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	struct audit_caller who = { .pid = getpid(), .uid = getuid() };
	char want[4096 + 512], exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	size_t len;
	char *buf;
	int y, mo, d, h, mi, s, ms;
	char z;

	assert_true(n > 0);
	exe[n] = '\0';
	assert_int_equal(audit_veto(a, "delete", "src/a.c", &deny3, -EACCES,
				    &who), 0);
	buf = read_log(a, &len);
	assert_int_equal(check_lines(buf, len), 1);
	assert_int_equal(sscanf(buf, "{\"time\":\"%4d-%2d-%2dT%2d:%2d:%2d.%3d%c\"",
				&y, &mo, &d, &h, &mi, &s, &ms, &z), 8);
	assert_true(y >= 2024 && mo >= 1 && mo <= 12 && z == 'Z');
	assert_int_equal(buf[34], ',');	/* fixed-width time */
	snprintf(want, sizeof(want), ",\"event\":\"veto\",\"op\":\"delete\","
		 "\"path\":\"src/a.c\",\"rule\":\"t.policy:3\",\"errno\":"
		 "\"EACCES\",\"pid\":%d,\"uid\":%u,\"exe\":\"%s\"}\n",
		 (int)getpid(), (unsigned)getuid(), exe);
	assert_string_equal(buf + 34, want);
	free(buf);
	audit_close(a);
}

static void test_veto_without_rule_or_caller(void **state)
{
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	size_t len;
	char *buf;

	assert_int_equal(audit_veto(a, "write", "x", NULL, ENOSPC, NULL), 0);
	buf = read_log(a, &len);
	check_lines(buf, len);
	assert_non_null(strstr(buf, "\"rule\":null,\"errno\":\"ENOSPC\"}\n"));
	assert_null(strstr(buf, "\"pid\""));
	free(buf);
	audit_close(a);
}

static void test_event_record(void **state)
{
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	struct audit_caller who = { .pid = 999999999, .uid = 7 };
	size_t len;
	char *buf;

	assert_int_equal(audit_event(a, "commit", "\"txid\":3,\"paths\":12",
				     &who), 0);
	assert_int_equal(audit_event(a, "rollback", NULL, NULL), 0);
	assert_int_equal(audit_event(a, "savepoint", "", NULL), 0);
	buf = read_log(a, &len);
	assert_int_equal(check_lines(buf, len), 3);
	/* no such process: exe is null, the record is still written */
	assert_non_null(strstr(buf, ",\"event\":\"commit\",\"txid\":3,"
			       "\"paths\":12,\"pid\":999999999,\"uid\":7,"
			       "\"exe\":null}\n"));
	assert_non_null(strstr(buf, ",\"event\":\"rollback\"}\n"));
	assert_non_null(strstr(buf, ",\"event\":\"savepoint\"}\n"));
	free(buf);
	audit_close(a);
}

static void test_escaping(void **state)
{
	static const char hostile[] =
		"q\"b\\s\nn\tt\x01\x1f\x7f \xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 "
		"bad\xff\xc3 \xed\xa0\x80 \xc0\xaf end";
	struct fixture *f = *state;
	struct audit *a = open_log(f, 0);
	char hex[256] = "";
	size_t len;
	char *buf;

	assert_int_equal(audit_veto(a, "op\"x", hostile, &deny3, EACCES, NULL),
			 0);
	assert_int_equal(audit_veto(a, "read", "plain\xc3\xa9", &deny3,
				    EACCES, NULL), 0);
	buf = read_log(a, &len);
	assert_int_equal(check_lines(buf, len), 2);
	assert_non_null(strstr(buf, "\"op\":\"op\\\"x\""));
	assert_non_null(strstr(buf,
		"\"path\":\"q\\\"b\\\\s\\u000an\\u0009t\\u0001\\u001f\\u007f "
		"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 bad\\ufffd\\ufffd "
		"\\ufffd\\ufffd\\ufffd \\ufffd\\ufffd end\""));
	for (const char *s = hostile; *s; s++)
		sprintf(hex + strlen(hex), "%02x", (unsigned char)*s);
	assert_non_null(strstr(buf, hex));
	assert_non_null(strstr(buf, "\"path_hex\":\""));
	/* valid UTF-8 needs no hex copy: only the first line has one */
	assert_non_null(strstr(buf, "\"path\":\"plain\xc3\xa9\",\"rule\""));
	assert_true(strstr(buf, "path_hex") < strchr(buf, '\n'));
	assert_null(strstr(strchr(buf, '\n'), "path_hex"));
	free(buf);
	audit_close(a);
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
		cmocka_unit_test_setup_teardown(test_escaping, setup, teardown),
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
