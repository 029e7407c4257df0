// SPDX-License-Identifier: Apache-2.0
/*
 * record.c - the kept commits of STATE/history/: each record's
 * manifest.json in and out (hist_int.h has its schema), the list that
 * `txfs history` prints, and retention (history_prune).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include "hist_int.h"
#include "../../policy/policy.h"

int hist_open(int statefd, bool create)
{
	int fd;

	if (create && mkdirat(statefd, HIST_DIR, 0700) && errno != EEXIST)
		return -errno;
	fd = openat(statefd, HIST_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

void hist_name(char *buf, size_t n, uint64_t id, bool pending)
{
	snprintf(buf, n, "%016" PRIx64 "%s", id, pending ? ".pending" : "");
}

/* The whole of file rel under dir, NUL-terminated (malloc'd; its length
 * into *len), or NULL. */
static char *slurp(int dir, const char *rel, size_t *len)
{
	int fd = openat(dir, rel, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	size_t n = 0, cap;
	struct stat st;
	char *buf = NULL, *p;
	ssize_t r;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st))
		goto fail;
	cap = (size_t)st.st_size + 1;
	if (!(buf = malloc(cap)))
		goto fail;
	/* to the end, whatever st_size said */
	while ((r = read(fd, buf + n, cap - 1 - n)) > 0) {
		n += (size_t)r;
		if (n == cap - 1) {
			if (!(p = realloc(buf, cap * 2)))
				goto fail;
			buf = p;
			cap *= 2;
		}
	}
	if (r < 0)
		goto fail;
	close(fd);
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	free(buf);
	close(fd);
	return NULL;
}

json_t *hist_load_file(int dir, const char *rel)
{
	size_t len = 0;
	char *buf = slurp(dir, rel, &len);
	json_t *doc;

	if (!buf)
		return NULL;
	doc = json_loadb(buf, len, 0, NULL);
	/* names written through names.c's mapping: back to their bytes */
	if (doc && memmem(buf, len, "\xF4\x8F", 2) && hist_mem_form(doc)) {
		json_decref(doc);
		doc = NULL;
	}
	free(buf);
	return doc;
}

/* A record's manifest, with its undone_by file merged in (an undo marks
 * the records it took back with that file, not a rewrite of their
 * manifests: 25 MB for a mass deletion's). */
json_t *hist_load(int hfd, const char *name)
{
	char rel[300], by[20] = "", *buf;
	json_t *doc;
	size_t len;

	snprintf(rel, sizeof(rel), "%s/" HIST_MANIFEST, name);
	if (!(doc = hist_load_file(hfd, rel)))
		return NULL;
	snprintf(rel, sizeof(rel), "%s/" HIST_UNDONE, name);
	if ((buf = slurp(hfd, rel, &len))) {
		snprintf(by, sizeof(by), "%.16s", buf);
		free(buf);
	}
	if (strlen(by) == 16 && strspn(by, "0123456789abcdef") == 16)
		json_object_set_new(doc, "undone_by", json_string(by));
	return doc;
}

int hist_mark_undone(int hfd, const char *rec, const char *by)
{
	int rfd = openat(hfd, rec, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	char line[24];
	int fd, n, rc = 0;

	if (rfd < 0)
		return -errno;
	n = snprintf(line, sizeof(line), "%.16s\n", by);
	fd = openat(rfd, "." HIST_UNDONE ".tmp",
		    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = -errno;
		goto out;
	}
	if (write(fd, line, (size_t)n) != n || fsync(fd))
		rc = errno ? -errno : -EIO;
	close(fd);
	if (rc == 0 && (renameat(rfd, "." HIST_UNDONE ".tmp", rfd, HIST_UNDONE) ||
			fsync(rfd)))
		rc = -errno;
out:
	close(rfd);
	return rc;
}

int hist_save(int dfd, const char *name, json_t *doc)
{
	char tmp[300];
	int fd, rc = 0;
	FILE *f;

	snprintf(tmp, sizeof(tmp), ".%s.tmp", name);
	fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		return -ENOMEM;
	}
	json_t *disk = hist_disk_form(doc);	/* its names as UTF-8 */

	if (!disk || json_dumpf(disk, f, JSON_COMPACT) || fflush(f) ||
	    fsync(fileno(f)))
		rc = errno ? -errno : -EIO;
	json_decref(disk);
	if (fclose(f) && rc == 0)
		rc = -errno;
	if (rc == 0 && renameat(dfd, tmp, dfd, name))
		rc = -errno;
	return rc;
}

int hist_rm_tree(int dfd, const char *name)
{
	struct dirent *e;
	DIR *d;
	int fd;

	if (unlinkat(dfd, name, 0) == 0 || errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -errno;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -errno;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			hist_rm_tree(fd, e->d_name);
	closedir(d);
	return unlinkat(dfd, name, AT_REMOVEDIR) && errno != ENOENT ? -errno : 0;
}

int64_t hist_i64(json_t *o, const char *key)
{
	return (int64_t)json_integer_value(json_object_get(o, key));
}

const char *hist_str(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

/* Bytes only the record holds: files with no other name. */
uint64_t hist_tree_bytes(int dfd, const char *name)
{
	uint64_t sum = 0;
	struct dirent *e;
	struct stat st;
	DIR *d;
	int fd;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW))
		return 0;
	if (!S_ISDIR(st.st_mode))
		return st.st_nlink == 1 ? (uint64_t)st.st_blocks * 512 : 0;
	fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			sum += hist_tree_bytes(fd, e->d_name);
	closedir(d);
	return sum;
}

/* <name>/info: "TIME BYTES\n", written when a record is made final, so
 * that the retention and the status read two numbers, not the manifest
 * and the tree. Missing (an older record): from the manifest and the tree. */
int hist_info_write(int hfd, const char *name, int64_t t, uint64_t bytes)
{
	char rel[64], line[64];
	int fd, n, rc = 0;

	n = snprintf(line, sizeof(line), "%lld %llu\n", (long long)t,
		     (unsigned long long)bytes);
	snprintf(rel, sizeof(rel), "%.24s/info", name);
	fd = openat(hfd, rel, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, line, (size_t)n) != n)
		rc = -EIO;
	close(fd);
	return rc;
}

int hist_info_put(int hfd, const char *name)
{
	json_t *doc = hist_load(hfd, name);
	int64_t t = doc ? hist_i64(doc, "time") : 0;

	json_decref(doc);
	return hist_info_write(hfd, name, t, hist_tree_bytes(hfd, name));
}

int hist_info_read(int hfd, const char *name, int64_t *t, uint64_t *bytes)
{
	char rel[64], line[64] = "";
	long long tt = 0;
	unsigned long long b = 0;
	int fd;
	ssize_t n;

	snprintf(rel, sizeof(rel), "%.24s/info", name);
	fd = openat(hfd, rel, O_RDONLY | O_CLOEXEC);
	n = fd >= 0 ? read(fd, line, sizeof(line) - 1) : -1;
	if (fd >= 0)
		close(fd);
	if (n <= 0 || sscanf(line, "%lld %llu", &tt, &b) != 2)
		return -ENOENT;
	*t = tt;
	*bytes = b;
	return 0;
}

static void hist_info_get(int hfd, const char *name, int64_t *t, uint64_t *bytes)
{
	json_t *doc;

	if (hist_info_read(hfd, name, t, bytes) == 0)
		return;
	doc = hist_load(hfd, name);
	*t = doc ? hist_i64(doc, "time") : 0;
	json_decref(doc);
	*bytes = hist_tree_bytes(hfd, name);
}

uint64_t hist_next_id(int hfd)
{
	uint64_t max = 0;
	struct dirent *e;
	DIR *d = fdopendir(dup(hfd));

	if (d)
		rewinddir(d);	/* the dup shares the offset of hfd */

	if (!d)
		return 1;
	while ((e = readdir(d))) {
		char *end;
		uint64_t id = strtoull(e->d_name, &end, 16);

		if (end == e->d_name + 16 && id > max)
			max = id;
	}
	closedir(d);
	return max + 1;
}

static int cmp_desc(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? 1 : x > y ? -1 : 0;
}

int hist_ids(int hfd, uint64_t **ids, size_t *n)
{
	size_t cap = 0;
	struct dirent *e;
	DIR *d = fdopendir(dup(hfd));

	if (d)
		rewinddir(d);	/* the dup shares the offset of hfd */

	*ids = NULL;
	*n = 0;
	if (!d)
		return -errno;
	while ((e = readdir(d))) {
		char *end;
		uint64_t id = strtoull(e->d_name, &end, 16);

		if (strlen(e->d_name) != 16 || *end)
			continue;	/* pending, journal, temporary */
		if (*n == cap) {
			uint64_t *p = realloc(*ids, (cap = cap ? 2 * cap : 32) * sizeof(*p));

			if (!p) {
				closedir(d);
				return -ENOMEM;
			}
			*ids = p;
		}
		(*ids)[(*n)++] = id;
	}
	closedir(d);
	if (*n)	/* qsort of NULL, 0 is undefined */
		qsort(*ids, *n, sizeof(**ids), cmp_desc);
	return 0;
}

/* --- what a record says ---------------------------------------------- */

/* 'A' added, 'M' modified, 'D' deleted, 'R' renamed */
static char kind_of(json_t *obj)
{
	const char *pre = hist_str(obj, "pre");
	json_t *post = json_object_get(obj, "post");
	const char *p0 = json_string_value(json_array_get(post, 0));

	if (!pre)
		return 'A';
	if (!p0)
		return 'D';
	return strcmp(pre, p0) ? 'R' : 'M';
}

/* A path one object left and another took (a file replaced by a rename,
 * a symlink made again): one modification, as the diff shows it. */
static json_t *replaced_paths(json_t *doc)
{
	json_t *added = json_object(), *both = json_object(), *obj;
	size_t i;

	json_array_foreach(json_object_get(doc, "objects"), i, obj)
		if (kind_of(obj) == 'A')
			json_object_set_new_nocheck(added, json_string_value(json_array_get(
				json_object_get(obj, "post"), 0)), json_true());
	json_array_foreach(json_object_get(doc, "objects"), i, obj)
		if (kind_of(obj) == 'D' && json_object_get(added, hist_str(obj, "pre")))
			json_object_set_new_nocheck(both, hist_str(obj, "pre"), json_true());
	json_decref(added);
	return both;
}

/* The object's status as the user reads it ('M' for a replaced path:
 * its 'A' half says so, its 'D' half is not listed: 0). */
static char status_of(json_t *obj, json_t *both)
{
	char k = kind_of(obj);
	const char *p0 = json_string_value(json_array_get(json_object_get(obj, "post"), 0));

	if (k == 'A' && json_object_get(both, p0))
		return 'M';
	if (k == 'D' && json_object_get(both, hist_str(obj, "pre")))
		return 0;
	return k;
}

static void counts(json_t *doc, unsigned c[4])
{
	json_t *obj, *both = replaced_paths(doc);
	size_t i;

	c[0] = c[1] = c[2] = c[3] = 0;
	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		switch (status_of(obj, both)) {
		case 'A': c[0]++; break;
		case 'M': c[1]++; break;
		case 'D': c[2]++; break;
		case 'R': c[3]++; break;
		default: break;
		}
	}
	c[2] += (unsigned)json_array_size(json_object_get(doc, "names"));
	json_decref(both);
}

static json_t *paths_json(json_t *doc)
{
	json_t *out = json_array(), *obj, *both = replaced_paths(doc);
	size_t i;

	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		char k = status_of(obj, both);
		const char *p0 = json_string_value(json_array_get(json_object_get(obj, "post"), 0));

		char st[2] = { k, 0 };

		if (!k)
			continue;
		json_array_append_new(out, k == 'R' ?
			hist_obj("sss", "status", st, "path", p0, "from", hist_str(obj, "pre")) :
			hist_obj("ss", "status", st, "path",
				 k == 'D' ? hist_str(obj, "pre") : p0));
	}
	json_array_foreach(json_object_get(doc, "names"), i, obj)
		json_array_append_new(out, hist_obj("ss", "status", "D",
						    "path", hist_str(obj, "path")));
	json_decref(both);
	return out;
}

static uint64_t info_bytes(int hfd, const char *name)
{
	int64_t t;
	uint64_t b;

	hist_info_get(hfd, name, &t, &b);
	return b;
}

static json_t *summary(int hfd, uint64_t id, json_t *doc)
{
	unsigned c[4];
	char name[40];
	json_t *undo_of = json_object_get(doc, "undo_of");

	counts(doc, c);
	hist_name(name, sizeof(name), id, false);
	return json_pack("{sIsIsosisisisisIsO*sO*}", "id", (json_int_t)id,
			 "time", (json_int_t)hist_i64(doc, "time"), "via",
			 hist_jname(hist_str(doc, "via") ? hist_str(doc, "via") : ""),
			 "added", c[0], "modified", c[1], "deleted", c[2],
			 "renamed", c[3], "bytes",
			 (json_int_t)info_bytes(hfd, name), "undone_by",
			 json_object_get(doc, "undone_by"), "undo_of", undo_of);
}

static void print_summary(json_t *s)
{
	char when[32];
	time_t t = (time_t)hist_i64(s, "time");
	json_t *u = json_object_get(s, "undone_by");

	/* the command line one way back to its bytes, on one line */
	char *via = audit_quote(hist_str(s, "via") ? hist_str(s, "via") : "");

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&t));
	printf("%-6" PRId64 " %s  %4" PRId64 " added %4" PRId64 " modified %4" PRId64
	       " deleted %4" PRId64 " renamed  %8" PRId64 " bytes kept  %s%s\n",
	       hist_i64(s, "id"), when, hist_i64(s, "added"),
	       hist_i64(s, "modified"), hist_i64(s, "deleted"),
	       hist_i64(s, "renamed"), hist_i64(s, "bytes"), via ? via : "?",
	       u ? "  (undone)" : "");
	free(via);
}

/* A name for a text line: quoted as git quotes paths (txfs(1), NAMES IN
 * OUTPUT), sep the line's separator; never NULL. */
static char *qname(const char *name, const char *sep)
{
	char *q = name ? audit_cquote(name, sep) : NULL;

	return q ? q : strdup("?");
}

static void print_paths(json_t *paths)
{
	size_t i;
	json_t *p;

	json_array_foreach(paths, i, p) {
		char *a = qname(hist_str(p, "path"), " -> "), *b = NULL;

		if (hist_str(p, "from"))
			printf("%s %s -> %s\n", hist_str(p, "status"),
			       (b = qname(hist_str(p, "from"), " -> ")), a);
		else
			printf("%s %s\n", hist_str(p, "status"), a);
		free(a);
		free(b);
	}
}

/* The names of list (its elements' "path" and "from", and their
 * "paths"' too) as JSON output writes names (txfs(1), NAMES IN OUTPUT):
 * the string when it is UTF-8, else U+FFFD a bad byte and K_hex. */
static void out_names(json_t *list)
{
	static const char *const keys[] = { "path", "from", "via" };
	json_t *e;
	size_t i;

	json_array_foreach(list, i, e) {
		for (size_t k = 0; k < 3; k++) {
			char *raw = hist_str(e, keys[k]) ? strdup(hist_str(e, keys[k])) : NULL;

			if (raw)
				audit_json_set_bytes(e, keys[k], raw);
			free(raw);
		}
		out_names(json_object_get(e, "paths"));
	}
}

static bool is_hidden(const struct policy *hide, const char *path)
{
	return hide && path && path[0] && policy_is_hidden(hide, path, strlen(path));
}

/* A record's "via" (txfs run: CMD) has a word that is a hidden path:
 * words split at blanks and the shell's ;|&<>()'"=` characters, a
 * leading ./ dropped (a guess, as for the audit log's argv). */
static bool via_hidden(const struct policy *hide, const char *via)
{
	static const char seps[] = " \t\n;|&<>()'\"=`";
	char *copy, *save = NULL, *w;
	bool h = false;

	if (!hide || !via || !(copy = strdup(via)))
		return hide && via;
	for (w = strtok_r(copy, seps, &save); w && !h; w = strtok_r(NULL, seps, &save)) {
		while (w[0] == '.' && w[1] == '/')
			w += 2;
		h = is_hidden(hide, w);
	}
	free(copy);
	return h;
}

/* Leave out of list the elements whose "path" or "from" hide hides. */
static unsigned hide_paths(json_t *list, const struct policy *hide)
{
	unsigned n = 0;
	size_t i;

	for (i = json_array_size(list); hide && i-- > 0;) {
		json_t *p = json_array_get(list, i);

		if (is_hidden(hide, hist_str(p, "path")) ||
		    is_hidden(hide, hist_str(p, "from"))) {
			json_array_remove(list, i);
			n++;
		}
	}
	return n;
}

int history_list(const char *state, bool json, uint64_t paths_of,
		 bool deleted, const struct policy *hide)
{
	unsigned left = 0;
	int sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC), hfd, rc = 0;
	json_t *out = json_array();
	uint64_t *ids = NULL;
	size_t n = 0;

	if (sfd < 0 || !out) {
		json_decref(out);
		return sfd < 0 ? -errno : -ENOMEM;
	}
	hfd = hist_open(sfd, false);
	close(sfd);
	if (hfd >= 0)
		rc = hist_ids(hfd, &ids, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char name[40];
		json_t *doc, *s, *obj;
		size_t k;

		if (paths_of && ids[i] != paths_of)
			continue;
		hist_name(name, sizeof(name), ids[i], false);
		if (!(doc = hist_load(hfd, name)))
			continue;
		s = summary(hfd, ids[i], doc);
		if (s && via_hidden(hide, hist_str(s, "via")))
			json_object_set_new(s, "via", json_string("(a command line "
					    "naming a path the mount's policy hides)"));
		if (paths_of && s) {
			json_t *ps = paths_json(doc);

			left = hide_paths(ps, hide);
			json_object_set_new(s, "paths", ps);
			if (left)	/* how many, never which */
				json_object_set_new(s, "hidden", json_integer(left));
		}
		if (deleted && s && json_object_get(doc, "undone_by")) {
			json_decref(s);	/* taken back: nothing of it is lost */
			s = NULL;
		} else if (deleted && s) {
			json_array_foreach(json_object_get(doc, "objects"), k, obj)
				if (kind_of(obj) == 'D' && is_hidden(hide, hist_str(obj, "pre")))
					left++;
				else if (kind_of(obj) == 'D' && hist_str(obj, "pre"))
					json_array_append_new(out, hist_obj("sI",
						"path", hist_str(obj, "pre"), "deleted_by",
						(json_int_t)ids[i]));
			json_decref(s);
			s = NULL;
		}
		if (s)
			json_array_append_new(out, s);
		json_decref(doc);
	}
	if (rc == 0 && paths_of && json_array_size(out) == 0)
		rc = -ENOENT;
	if (rc == 0 && deleted && left)
		json_array_append_new(out, json_pack("{sIss}", "left_out",
			(json_int_t)left, "why", "paths the mount's policy hides"));
	if (rc == 0 && json) {
		out_names(out);
		json_dumpf(out, stdout, JSON_COMPACT);
		putchar('\n');
	} else if (rc == 0) {
		size_t i;
		json_t *s;

		json_array_foreach(out, i, s) {
			if (deleted && !hist_str(s, "path"))
				printf("(%" PRId64 " paths the mount's policy hides left out)\n",
				       hist_i64(s, "left_out"));
			else if (deleted) {
				char *q = qname(hist_str(s, "path"), "  (");

				printf("%s  (deleted by %" PRId64 ")\n", q,
				       hist_i64(s, "deleted_by"));
				free(q);
			}
			else
				print_summary(s);
			if (paths_of)
				print_paths(json_object_get(s, "paths"));
			if (paths_of && json_object_get(s, "hidden"))
				printf("(%" PRId64 " paths the mount's policy hides left out)\n",
				       hist_i64(s, "hidden"));
		}
		if (!n)
			puts("no commit kept in the history");
	}
	json_decref(out);
	free(ids);
	if (hfd >= 0)
		close(hfd);
	return rc;
}

/* --- retention ------------------------------------------------------- */

static uint64_t default_cap(int sfd)
{
	struct statvfs sv;
	uint64_t cap;

	if (fstatvfs(sfd, &sv))
		return 1ULL << 30;
	cap = (uint64_t)sv.f_bavail * sv.f_frsize / 10;
	if (cap > 4ULL << 30)
		cap = 4ULL << 30;
	return cap < 64ULL << 20 ? 64ULL << 20 : cap;
}

int history_prune(const char *state, const struct history_limits *lim,
		  uint64_t *freed)
{
	int sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC), hfd, rc;
	unsigned keep_n = lim && lim->keep_n ? lim->keep_n : 20;
	unsigned days = lim && lim->keep_days ? lim->keep_days : 7;
	uint64_t cap, total = 0, *ids = NULL, *bytes = NULL;
	int64_t *times = NULL;
	time_t now = time(NULL);
	size_t n = 0;

	if (freed)
		*freed = 0;
	if (sfd < 0)
		return -errno;
	cap = lim && lim->max_bytes ? lim->max_bytes : default_cap(sfd);
	hfd = hist_open(sfd, false);
	close(sfd);
	if (hfd < 0)
		return hfd == -ENOENT ? 0 : hfd;
	if (faccessat(hfd, HIST_JOURNAL, F_OK, 0) == 0) {
		close(hfd);
		return 0;	/* an undo is not finished: touch nothing */
	}
	rc = hist_ids(hfd, &ids, &n);
	if (rc == 0 && n && (!(bytes = calloc(n, sizeof(*bytes))) ||
			     !(times = calloc(n, sizeof(*times)))))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char name[40];

		hist_name(name, sizeof(name), ids[i], false);
		hist_info_get(hfd, name, &times[i], &bytes[i]);
		total += bytes[i];
	}
	/* oldest first: beyond both the count and the age, or over the cap
	 * (the newest record always stays) */
	for (size_t i = n; rc == 0 && i-- > 1;) {
		char name[40];
		bool old = i >= keep_n && now - (time_t)times[i] > (time_t)days * 86400;

		if (!old && total <= cap)
			continue;
		hist_name(name, sizeof(name), ids[i], false);
		if ((rc = hist_rm_tree(hfd, name)))
			break;
		total -= bytes[i];
		if (freed)
			*freed += bytes[i];
	}
	free(times);
	free(ids);
	free(bytes);
	close(hfd);
	return rc;
}

int history_bytes(const char *state, uint64_t *bytes, unsigned *count)
{
	int sfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC), hfd, rc;
	uint64_t *ids = NULL;
	size_t n = 0;

	*bytes = 0;
	*count = 0;
	if (sfd < 0)
		return -errno;
	hfd = hist_open(sfd, false);
	close(sfd);
	if (hfd < 0)
		return hfd == -ENOENT ? 0 : hfd;
	rc = hist_ids(hfd, &ids, &n);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		char name[40];

		hist_name(name, sizeof(name), ids[i], false);
		*bytes += info_bytes(hfd, name);
	}
	*count = (unsigned)n;
	free(ids);
	close(hfd);
	return rc;
}
