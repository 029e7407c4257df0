/* SPDX-License-Identifier: Apache-2.0 */
/*
 * audit.c - the audit log: one JSON object a line, in a file of the state
 * folder, built and printed with jansson (JSON_COMPACT, members in the
 * order added).
 *
 *   {"time":"2026-11-21T14:05:55.123Z","event":"veto","op":"delete",
 *    "path":"src/a.c","rule":"default.policy:12","errno":"EACCES",
 *    "pid":123,"uid":1000,"exe":"/usr/bin/rm"}
 *   {"time":"...","event":"commit",<fields>,"pid":..,"uid":..,"exe":..}
 *
 * time is UTC with milliseconds; rule is null when no rule decided; exe is
 * readlink(/proc/PID/exe), null when that fails; pid, uid and exe are left
 * out when no caller is given.
 *
 * Bytes (paths, names, arguments, change lines) are not always UTF-8, and
 * a JSON string is. A member K holding bytes is written so that no two byte
 * strings give the same record, and every reader can get the bytes back:
 *
 *   - bytes that are valid UTF-8 (RFC 3629: no overlong forms, no
 *     surrogates): K is the string itself; control bytes, '"' and '\'
 *     are JSON escapes (\n, \u0001, ...), so the value is exact;
 *   - otherwise K is the same string with each byte that is not part of
 *     valid UTF-8 replaced by U+FFFD (for people), and K_hex (right after
 *     K) holds the exact bytes in lowercase hex.
 *
 *   "path":"bad\ufffd\n","path_hex":"626164ff0a"
 *
 * In an array K of such strings, K_hex (present when one element needs
 * it) is an array of the same length holding the hex of each inexact
 * element and null for the others. A reader takes K_hex when present, K
 * otherwise: audit_json_bytes() does. The bytes never contain NUL.
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
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "policy_int.h"

#define AUDIT_DEFAULT_MAX (4u << 20)
#define HEX_KEY_MAX 64		/* "K_hex" of a member name K */

struct audit {
	pthread_mutex_t lock;	/* guards fd and size */
	int dirfd;		/* our own dup of the state folder */
	int fd;			/* NAME, O_APPEND */
	uint64_t size;		/* bytes in NAME */
	uint64_t max_bytes;
	char *name, *rotated;	/* NAME, NAME.1 */
};

/* ---- bytes as JSON ---------------------------------------------------- */

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

static bool utf8_valid(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;

	for (size_t i = 0, k; i < n; i += k)
		if (!(k = utf8_len(u + i, n - i)))
			return false;
	return true;
}

/* s with each byte outside valid UTF-8 replaced by U+FFFD, or NULL. */
static json_t *display_string(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	struct sbuf b = { 0 };
	json_t *j;
	size_t k;

	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(u + i, n - i);
		if (k)
			sbuf_add(&b, s + i, k);
		else
			sbuf_add(&b, "\xef\xbf\xbd", 3), k = 1;
	}
	j = b.oom ? NULL : json_stringn(b.buf ? b.buf : "", b.len);
	sbuf_release(&b);
	return j;
}

json_t *audit_json_text(const char *s)
{
	size_t n = strlen(s);

	return utf8_valid(s, n) ? json_stringn(s, n) : display_string(s, n);
}

static json_t *hex_string(const char *s, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char *h = malloc(2 * n + 1);
	json_t *j;

	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		h[2 * i] = digits[(unsigned char)s[i] >> 4];
		h[2 * i + 1] = digits[(unsigned char)s[i] & 15];
	}
	j = json_stringn(h, 2 * n);
	free(h);
	return j;
}

static int hex_key(char *out, const char *key)
{
	int n = snprintf(out, HEX_KEY_MAX, "%s_hex", key);

	return n < 0 || n >= HEX_KEY_MAX ? -EINVAL : 0;
}

int audit_json_set_bytes(json_t *obj, const char *key, const char *s)
{
	char hk[HEX_KEY_MAX];
	size_t n = strlen(s);
	bool exact = utf8_valid(s, n);

	if (hex_key(hk, key))
		return -EINVAL;
	if (json_object_set_new(obj, key, exact ? json_stringn(s, n) :
				display_string(s, n)))
		return -ENOMEM;
	if (exact) {
		json_object_del(obj, hk);
		return 0;
	}
	return json_object_set_new(obj, hk, hex_string(s, n)) ? -ENOMEM : 0;
}

int audit_json_append_bytes(json_t *obj, const char *key, const char *s)
{
	json_t *arr = json_object_get(obj, key), *hex;
	char hk[HEX_KEY_MAX];
	size_t n = strlen(s), idx;
	bool exact = utf8_valid(s, n);

	if (hex_key(hk, key))
		return -EINVAL;
	if (!arr && json_object_set_new(obj, key, arr = json_array()))
		return -ENOMEM;
	if (!json_is_array(arr))
		return -EINVAL;
	idx = json_array_size(arr);
	if (json_array_append_new(arr, exact ? json_stringn(s, n) :
				  display_string(s, n)))
		return -ENOMEM;
	hex = json_object_get(obj, hk);
	if (exact && !hex)
		return 0;
	if (!hex) {
		if (json_object_set_new(obj, hk, hex = json_array()))
			return -ENOMEM;
		for (size_t i = 0; i < idx; i++)
			if (json_array_append_new(hex, json_null()))
				return -ENOMEM;
	}
	return json_array_append_new(hex, exact ? json_null() :
				     hex_string(s, n)) ? -ENOMEM : 0;
}

static int hex_digit(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* The bytes spelled by hex h (lowercase, no 00), malloc'd, or NULL. */
static char *hex_decode(const char *h, size_t n)
{
	char *out = n % 2 ? NULL : malloc(n / 2 + 1);

	for (size_t i = 0; out && i < n; i += 2) {
		int hi = hex_digit(h[i]), lo = hex_digit(h[i + 1]);

		if (hi < 0 || lo < 0 || (hi | lo) == 0) {
			free(out);
			return NULL;
		}
		out[i / 2] = (char)(hi << 4 | lo);
	}
	if (out)
		out[n / 2] = '\0';
	return out;
}

static const json_t *member_at(const json_t *obj, const char *key, long idx)
{
	const json_t *v = json_object_get(obj, key);

	return idx < 0 ? v : json_array_get(v, (size_t)idx);
}

char *audit_json_bytes(const json_t *obj, const char *key, long idx)
{
	const json_t *v = member_at(obj, key, idx), *h;
	char hk[HEX_KEY_MAX];

	if (!json_is_string(v) || hex_key(hk, key))
		return NULL;
	h = member_at(obj, hk, idx);
	if (json_is_string(h))
		return hex_decode(json_string_value(h), json_string_length(h));
	if (strlen(json_string_value(v)) != json_string_length(v))
		return NULL;	/* a \u0000 no path can hold */
	return strdup(json_string_value(v));
}

char *audit_quote(const char *s)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), k;
	struct sbuf b = { 0 };

	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(u + i, n - i);
		if (k == 1 && u[i] == '\\')
			sbuf_add(&b, "\\\\", 2);
		else if (k == 1 && u[i] == '\n')
			sbuf_add(&b, "\\n", 2);
		else if (k == 1 && u[i] == '\t')
			sbuf_add(&b, "\\t", 2);
		else if (!k || (k == 1 && (u[i] < 0x20 || u[i] == 0x7f)))
			sbuf_addf(&b, "\\x%02x", u[i]), k = 1;
		else if (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)
			sbuf_addf(&b, "\\u%04x", u[i + 1]);	/* C1 controls */
		else
			sbuf_add(&b, s + i, k);
	}
	return sbuf_steal(&b);
}

/* ---- names in text listings: C-style quoting ---------------------------- */

/* Does s need quoting in a listing whose separator is sep (or NULL)? */
static bool cquote_needed(const char *s, const char *sep)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), k;

	if (sep && *sep && strstr(s, sep))
		return true;
	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(u + i, n - i);
		if (!k || (k == 1 && (u[i] < 0x20 || u[i] == 0x7f ||
				      u[i] == '"' || u[i] == '\\')) ||
		    (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0))
			return true;	/* C0, DEL, C1, quote, not UTF-8 */
	}
	return false;
}

/* Escape pairs: the letter after '\', the byte it stands for. */
static const char cquote_pairs[] = "a\ab\bt\tn\nv\vf\fr\r\"\"\\\\";

/* The letter that escapes byte c (\n: 'n'), or 0. */
static char cquote_letter(unsigned char c)
{
	for (size_t i = 0; i + 1 < sizeof(cquote_pairs); i += 2)
		if ((unsigned char)cquote_pairs[i + 1] == c)
			return cquote_pairs[i];
	return 0;
}

/* The byte an escape letter stands for ('n': \n), or -1. */
static int cquote_byte(char letter)
{
	for (size_t i = 0; i + 1 < sizeof(cquote_pairs); i += 2)
		if (cquote_pairs[i] == letter)
			return (unsigned char)cquote_pairs[i + 1];
	return -1;
}

char *audit_cquote(const char *s, const char *sep)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s), k;
	struct sbuf b = { 0 };
	char l;

	if (!cquote_needed(s, sep))
		return strdup(s);
	sbuf_addc(&b, '"');
	for (size_t i = 0; i < n; i += k) {
		k = utf8_len(u + i, n - i);
		if (k == 1 && (l = cquote_letter(u[i])))
			sbuf_addc(&b, '\\'), sbuf_addc(&b, l);
		else if (!k || (k == 1 && (u[i] < 0x20 || u[i] == 0x7f)) ||
			 (k == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0)) {
			k = k ? k : 1;
			for (size_t j = 0; j < k; j++)
				sbuf_addf(&b, "\\%03o", u[i + j]);
		} else {
			sbuf_add(&b, s + i, k);
		}
	}
	sbuf_addc(&b, '"');
	return sbuf_steal(&b);
}

int audit_cunquote(const char *s, char **out, const char **end)
{
	struct sbuf b = { 0 };
	const char *p = s + 1;
	int c;

	*out = NULL;
	if (*s != '"')
		return -EINVAL;
	for (; *p && *p != '"'; p++) {
		if (*p != '\\') {
			sbuf_addc(&b, *p);
			continue;
		}
		p++;
		if (*p >= '0' && *p <= '7') {
			c = 0;
			for (int i = 0; i < 3 && *p >= '0' && *p <= '7'; i++)
				c = c * 8 + (*p++ - '0');
			p--;
			if (c == 0 || c > 0xff)
				break;	/* no name holds NUL */
		} else if ((c = cquote_byte(*p)) < 0) {
			break;
		}
		sbuf_addc(&b, (char)c);
	}
	if (*p != '"' || b.oom) {
		bool oom = b.oom;

		sbuf_release(&b);
		return oom ? -ENOMEM : -EINVAL;
	}
	if (!(*out = sbuf_steal(&b)))
		return -ENOMEM;
	*end = p + 1;
	return 0;
}

/* ---- records ---------------------------------------------------------- */

/* {"time":...,"event":event}, or NULL. */
static json_t *head(const char *event)
{
	struct timespec ts;
	struct tm tm;
	char t[48];

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(t, sizeof(t), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(t + strlen(t), sizeof(t) - strlen(t), ".%03ldZ",
		 ts.tv_nsec / 1000000);
	return json_pack("{s:s,s:s}", "time", t, "event", event);
}

static int add_caller(json_t *o, const struct audit_caller *who)
{
	char link[64], exe[4096];
	ssize_t n;

	if (!who)
		return 0;
	if (json_object_set_new(o, "pid", json_integer(who->pid)) ||
	    json_object_set_new(o, "uid", json_integer(who->uid)))
		return -ENOMEM;
	snprintf(link, sizeof(link), "/proc/%ld/exe", (long)who->pid);
	n = readlink(link, exe, sizeof(exe) - 1);
	if (n < 0)
		return json_object_set_new(o, "exe", json_null()) ? -ENOMEM : 0;
	exe[n] = '\0';
	return audit_json_set_bytes(o, "exe", exe);
}

static int add_rule(json_t *o, const struct policy_verdict *v)
{
	char *r = NULL;
	int rc;

	if (!v || !v->line || !v->file)
		return json_object_set_new(o, "rule", json_null()) ? -ENOMEM : 0;
	if (asprintf(&r, "%s:%u", v->file, v->line) < 0)
		return -ENOMEM;
	rc = audit_json_set_bytes(o, "rule", r);
	free(r);
	return rc;
}

static int add_errno(json_t *o, int err)
{
	const char *name;
	char num[16];

	err = err < 0 ? -err : err;
	name = strerrorname_np(err);
	if (!name) {
		snprintf(num, sizeof(num), "%d", err);
		name = num;
	}
	return json_object_set_new(o, "errno", json_string(name)) ? -ENOMEM : 0;
}

static int dump_cb(const char *s, size_t n, void *data)
{
	struct sbuf *b = data;

	sbuf_add(b, s, n);
	return b->oom ? -1 : 0;
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

/* Print the record o as one line and append it; drops o. */
static int append(struct audit *a, json_t *o)
{
	struct sbuf b = { 0 };
	int ret;

	if (json_dump_callback(o, dump_cb, &b, JSON_COMPACT |
			       JSON_PRESERVE_ORDER))
		b.oom = true;
	json_decref(o);
	sbuf_addc(&b, '\n');
	if (b.oom) {
		sbuf_release(&b);
		return -ENOMEM;
	}
	pthread_mutex_lock(&a->lock);
	maybe_rotate(a, b.len);
	ret = write_full(a->fd, b.buf, b.len);
	if (!ret)
		a->size += b.len;
	pthread_mutex_unlock(&a->lock);
	sbuf_release(&b);
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
	json_t *o;

	if (!a)
		return 0;
	o = head("veto");
	if (!o || audit_json_set_bytes(o, "op", op ? op : "") ||
	    audit_json_set_bytes(o, "path", path ? path : "") ||
	    add_rule(o, v) || add_errno(o, err) || add_caller(o, who)) {
		json_decref(o);
		return -ENOMEM;
	}
	return append(a, o);
}

int audit_record(struct audit *a, const char *event, const json_t *fields,
		 const struct audit_caller *who)
{
	json_t *o;

	if (!a)
		return 0;
	o = head(event);
	if (!o || (fields && json_object_update_missing(o, (json_t *)fields)) ||
	    add_caller(o, who)) {
		json_decref(o);
		return -ENOMEM;
	}
	return append(a, o);
}

int audit_event(struct audit *a, const char *event, const char *fields_json,
		const struct audit_caller *who)
{
	json_t *fields = NULL;
	char *text = NULL;
	int rc = 0;

	if (!a)
		return 0;
	if (fields_json && *fields_json) {
		if (asprintf(&text, "{%s}", fields_json) < 0)
			return -ENOMEM;
		fields = json_loads(text, JSON_REJECT_DUPLICATES, NULL);
		free(text);
	}
	if (fields_json && *fields_json && !fields) {
		/* not JSON members: log the text itself, refuse the call */
		rc = -EINVAL;
		if (!(fields = json_object()) ||
		    audit_json_set_bytes(fields, "bad_fields", fields_json)) {
			json_decref(fields);
			return -ENOMEM;
		}
	}
	rc = audit_record(a, event, fields, who) ?: rc;
	json_decref(fields);
	return rc;
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
