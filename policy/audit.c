/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.c - the audit log: one JSON object a line, in a file of the state
 * folder.
 *
 *   {"time":"2026-11-21T14:05:55.123Z","event":"veto","op":"delete",
 *    "path":"src/a.c","rule":"default.policy:12","errno":"EACCES",
 *    "pid":123,"uid":1000,"exe":"/usr/bin/rm"}
 *   {"time":"...","event":"commit",<fields_json>,"pid":..,"uid":..,"exe":..}
 *
 * time is UTC with milliseconds; rule is null when no rule decided; exe is
 * readlink(/proc/PID/exe), null when that fails; pid, uid and exe are left
 * out when no caller is given. Strings are escaped as JSON: '"' and '\',
 * bytes below 0x20 and 0x7f as \u00XX, valid UTF-8 as is, and each byte
 * that is not part of valid UTF-8 as \uFFFD; when that happens to the path,
 * a "path_hex" member carries the path's exact bytes in hex.
 *
 * Durability: a record is built in memory, then written with one write(2)
 * on an O_APPEND descriptor, so once the write returns the record is in the
 * file and survives the daemon's SIGKILL. Size: when a record would take
 * the file past max_bytes, NAME is renamed to NAME.1 (replacing the older
 * one) and a fresh NAME is started, so the log holds at most about
 * 2 * max_bytes. The mutex serialises rotation and writes (callers are
 * many FUSE threads); records are formatted outside it.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy_int.h"

#define AUDIT_DEFAULT_MAX (4u << 20)

struct audit {
	pthread_mutex_t lock;	/* guards fd and size */
	int dirfd;		/* our own dup of the state folder */
	int fd;			/* NAME, O_APPEND */
	uint64_t size;		/* bytes in NAME */
	uint64_t max_bytes;
	char *name, *rotated;	/* NAME, NAME.1 */
};

/* ---- JSON ------------------------------------------------------------- */

/* Length of the valid UTF-8 sequence at s, or 0 (RFC 3629 table 3-7). */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (n < len || s[1] < lo || s[1] > hi)
		return 0;
	for (size_t i = 2; i < len; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return len;
}

/* s as a JSON string; returns false if it had bytes that are not UTF-8. */
static bool add_str(struct sbuf *b, const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	bool valid = true;
	size_t k;

	sbuf_addc(b, '"');
	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(u + i, n - i);
		if (!k) {
			sbuf_add(b, "\\ufffd", 6);
			valid = false;
			k = 1;
		} else if (u[i] == '"' || u[i] == '\\') {
			sbuf_addc(b, '\\');
			sbuf_addc(b, (char)u[i]);
		} else if (u[i] < 0x20 || u[i] == 0x7f) {
			sbuf_addf(b, "\\u%04x", u[i]);
		} else {
			sbuf_add(b, s + i, k);
		}
	}
	sbuf_addc(b, '"');
	return valid;
}

static void add_member(struct sbuf *b, const char *key, const char *val)
{
	sbuf_addf(b, ",\"%s\":", key);
	if (val)
		add_str(b, val, strlen(val));
	else
		sbuf_add(b, "null", 4);
}

static void add_hex(struct sbuf *b, const char *key, const char *s)
{
	sbuf_addf(b, ",\"%s\":\"", key);
	for (; *s; s++)
		sbuf_addf(b, "%02x", (unsigned char)*s);
	sbuf_addc(b, '"');
}

static void add_head(struct sbuf *b, const char *event)
{
	struct timespec ts;
	struct tm tm;
	char t[32];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	sbuf_addf(b, "{\"time\":\"%s.%03ldZ\"", t, ts.tv_nsec / 1000000);
	add_member(b, "event", event);
}

static void add_caller(struct sbuf *b, const struct audit_caller *who)
{
	char link[64], exe[4096];
	ssize_t n;

	if (!who)
		return;
	sbuf_addf(b, ",\"pid\":%ld,\"uid\":%lu", (long)who->pid,
		  (unsigned long)who->uid);
	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)who->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n >= 0)
		exe[n] = '\0';
	add_member(b, "exe", n >= 0 ? exe : NULL);
}

static void add_rule(struct sbuf *b, const struct policy_verdict *v)
{
	struct sbuf r = { 0 };

	if (!v || !v->line || !v->file) {
		add_member(b, "rule", NULL);
		return;
	}
	sbuf_addf(&r, "%s:%u", v->file, v->line);
	add_member(b, "rule", r.oom ? NULL : r.buf);
	sbuf_release(&r);
}

static void add_errno(struct sbuf *b, int err)
{
	const char *name;
	char num[16];

	err = err < 0 ? -err : err;
	name = strerrorname_np(err);
	if (!name) {
		snprintf(num, sizeof(num), "%d", err);
		name = num;
	}
	add_member(b, "errno", name);
}

/* ---- the file --------------------------------------------------------- */

static int open_log(const struct audit *a, uint64_t *size)
{
	struct stat st;
	int fd;

	fd = openat(a->dirfd, a->name, O_WRONLY | O_APPEND | O_CREAT |
		    O_CLOEXEC | O_NOFOLLOW | O_NOCTTY, 0600);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		int err = -errno;

		close(fd);
		return err;
	}
	if (!S_ISREG(st.st_mode)) {
		close(fd);
		return -EINVAL;
	}
	*size = (uint64_t)st.st_size;
	return fd;
}

/* Start a fresh NAME when len more bytes would pass max_bytes. On failure
 * the log goes on in the current file: a record is never dropped. */
static void maybe_rotate(struct audit *a, size_t len)
{
	uint64_t size;
	int fd;

	if (!a->size || a->size + len <= a->max_bytes)
		return;
	if (renameat(a->dirfd, a->name, a->dirfd, a->rotated) &&
	    errno != ENOENT)
		return;
	fd = open_log(a, &size);
	if (fd < 0)
		return;
	close(a->fd);
	a->fd = fd;
	a->size = size;
}

static int write_full(int fd, const char *s, size_t n)
{
	ssize_t w;

	while (n) {
		w = write(fd, s, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		s += w;
		n -= (size_t)w;
	}
	return 0;
}

/* Finish the record in b and append it; frees b. */
static int append(struct audit *a, struct sbuf *b)
{
	int ret;

	sbuf_add(b, "}\n", 2);
	if (b->oom) {
		sbuf_release(b);
		return -ENOMEM;
	}
	pthread_mutex_lock(&a->lock);
	maybe_rotate(a, b->len);
	ret = write_full(a->fd, b->buf, b->len);
	if (!ret)
		a->size += b->len;
	pthread_mutex_unlock(&a->lock);
	sbuf_release(b);
	return ret;
}

/* ---- API -------------------------------------------------------------- */

static int audit_names(struct audit *a, const char *name)
{
	if (!*name || strchr(name, '/'))
		return -EINVAL;
	a->name = strdup(name);
	if (!a->name || asprintf(&a->rotated, "%s.1", name) < 0) {
		a->rotated = NULL;
		return -ENOMEM;
	}
	return 0;
}

int audit_open(int dirfd, const char *name, uint64_t max_bytes,
	       struct audit **out)
{
	struct audit *a = calloc(1, sizeof(*a));
	int ret;

	*out = NULL;
	if (!a)
		return -ENOMEM;
	a->fd = -1;
	a->max_bytes = max_bytes ? max_bytes : AUDIT_DEFAULT_MAX;
	ret = audit_names(a, name);
	if (ret)
		goto out_free;
	a->dirfd = fcntl(dirfd, F_DUPFD_CLOEXEC, 3);
	if (a->dirfd < 0) {
		ret = -errno;
		goto out_free;
	}
	a->fd = open_log(a, &a->size);
	if (a->fd < 0) {
		ret = a->fd;
		goto out_close;
	}
	pthread_mutex_init(&a->lock, NULL);
	*out = a;
	return 0;
out_close:
	close(a->dirfd);
out_free:
	free(a->name);
	free(a->rotated);
	free(a);
	return ret;
}

void audit_close(struct audit *a)
{
	if (!a)
		return;
	pthread_mutex_destroy(&a->lock);
	close(a->fd);
	close(a->dirfd);
	free(a->name);
	free(a->rotated);
	free(a);
}

int audit_veto(struct audit *a, const char *op, const char *path,
	       const struct policy_verdict *v, int err,
	       const struct audit_caller *who)
{
	struct sbuf b = { 0 };

	if (!a)
		return 0;
	path = path ? path : "";
	add_head(&b, "veto");
	add_member(&b, "op", op);
	sbuf_add(&b, ",\"path\":", 8);
	if (!add_str(&b, path, strlen(path)))
		add_hex(&b, "path_hex", path);
	add_rule(&b, v);
	add_errno(&b, err);
	add_caller(&b, who);
	return append(a, &b);
}

int audit_event(struct audit *a, const char *event, const char *fields_json,
		const struct audit_caller *who)
{
	struct sbuf b = { 0 };

	if (!a)
		return 0;
	add_head(&b, event);
	if (fields_json && *fields_json) {
		sbuf_addc(&b, ',');
		sbuf_add(&b, fields_json, strlen(fields_json));
	}
	add_caller(&b, who);
	return append(a, &b);
}

/* Append the file NAME of the state folder to b (nothing if missing). */
static int read_into(const struct audit *a, const char *name, struct sbuf *b)
{
	char chunk[8192];
	ssize_t r;
	int fd, ret = 0;

	fd = openat(a->dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return errno == ENOENT ? 0 : -errno;
	while ((r = read(fd, chunk, sizeof(chunk))) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			ret = -errno;
			break;
		}
		sbuf_add(b, chunk, (size_t)r);
	}
	close(fd);
	return ret;
}

int audit_read(struct audit *a, char **buf, size_t *len)
{
	struct sbuf b = { 0 };
	int ret;

	pthread_mutex_lock(&a->lock);
	ret = read_into(a, a->rotated, &b);
	if (!ret)
		ret = read_into(a, a->name, &b);
	pthread_mutex_unlock(&a->lock);
	if (ret) {
		sbuf_release(&b);
		return ret;
	}
	*len = b.len;
	*buf = sbuf_steal(&b);
	return *buf ? 0 : -ENOMEM;
}
