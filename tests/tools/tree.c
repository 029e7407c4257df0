/* SPDX-License-Identifier: Apache-2.0 */
/*
 * tree.c - canonical tree listing (see tree.h for the format). Entries are
 * collected first, so that hard-link groups can be named by the first path
 * of each inode, then printed in walk order.
 */
#include "tree.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

struct ent {
	char *path;	/* escaped, relative to the top */
	char *rest;	/* fields after LINKGROUP (or after MODE) */
	struct stat st;
	size_t order;
	size_t group;	/* index of the first entry with the same inode */
};

struct walk {
	unsigned flags;
	const char *top;
	struct ent *v;
	size_t n, cap;
};

const char *errno_name(int err)
{
	static const struct { int e; const char *n; } t[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { EIO, "EIO" },
		{ EBADF, "EBADF" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EBUSY, "EBUSY" }, { EEXIST, "EEXIST" },
		{ EXDEV, "EXDEV" }, { ENODEV, "ENODEV" }, { ENOTDIR, "ENOTDIR" },
		{ EISDIR, "EISDIR" }, { EINVAL, "EINVAL" }, { ENFILE, "ENFILE" },
		{ EMFILE, "EMFILE" }, { ETXTBSY, "ETXTBSY" }, { EFBIG, "EFBIG" },
		{ ENOSPC, "ENOSPC" }, { ESPIPE, "ESPIPE" }, { EROFS, "EROFS" },
		{ EMLINK, "EMLINK" }, { ERANGE, "ERANGE" }, { EDEADLK, "EDEADLK" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { ENOSYS, "ENOSYS" },
		{ ENOTEMPTY, "ENOTEMPTY" }, { ELOOP, "ELOOP" }, { ENODATA, "ENODATA" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { ENOTCONN, "ENOTCONN" },
		{ ESTALE, "ESTALE" }, { EDQUOT, "EDQUOT" }, { ENXIO, "ENXIO" },
		{ E2BIG, "E2BIG" }, { EOVERFLOW, "EOVERFLOW" }, { EINTR, "EINTR" },
		{ ECONNABORTED, "ECONNABORTED" }, { ECONNREFUSED, "ECONNREFUSED" },
		{ EADDRINUSE, "EADDRINUSE" }, { ENOLCK, "ENOLCK" }, { EILSEQ, "EILSEQ" },
		{ ENOTSOCK, "ENOTSOCK" }, { ENOTTY, "ENOTTY" }, { EFAULT, "EFAULT" },
	};
	static char buf[16];

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == err)
			return t[i].n;
	snprintf(buf, sizeof(buf), "E%d", err);
	return buf;
}

/* Append s (n bytes) to a growing string, escaping as the format says. */
static void esc_append(char **out, size_t *len, const char *s, size_t n)
{
	char *p = realloc(*out, *len + 4 * n + 1);

	if (!p)
		abort();
	*out = p;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x21 || c > 0x7e || c == '\\')
			*len += (size_t)sprintf(p + *len, "\\x%02x", c);
		else
			p[(*len)++] = (char)c;
	}
	p[*len] = '\0';
}

static char *xstrdup(const char *s)
{
	char *p = strdup(s);

	if (!p)
		abort();
	return p;
}

/* rel is already escaped; name is raw. */
static char *path_join(const char *rel, const char *name)
{
	size_t len = rel ? strlen(rel) + 1 : 0;
	char *p = malloc(len + 1);

	if (!p)
		abort();
	if (rel)
		sprintf(p, "%s/", rel);
	else
		p[0] = '\0';
	esc_append(&p, &len, name, strlen(name));
	return p;
}

static void hash_fd(int fd, char hex[65])
{
	static char buf[1 << 20];
	struct sha256 s;
	ssize_t n;

	sha256_init(&s);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&s, buf, (size_t)n);
	if (n < 0)
		snprintf(hex, 65, "ERR:%s", errno_name(errno));
	else
		sha256_hex(&s, hex);
}

/* Append " field" to *rest. */
static void add_field(char **rest, const char *field)
{
	size_t old = *rest ? strlen(*rest) : 0;
	char *p = realloc(*rest, old + strlen(field) + 2);

	if (!p)
		abort();
	p[old] = ' ';
	strcpy(p + old + 1, field);
	*rest = p;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_xattrs(struct walk *w, const char *rel, char **rest)
{
	char full[8192], names[65536], val[65536], field[512];
	char *list[1024];
	ssize_t n;
	size_t cnt = 0;

	snprintf(full, sizeof(full), "%s/%s", w->top, rel);
	n = llistxattr(full, names, sizeof(names));
	if (n < 0) {
		if (errno != ENOTSUP && errno != EOPNOTSUPP) {
			snprintf(field, sizeof(field), "x:ERR:%s", errno_name(errno));
			add_field(rest, field);
		}
		return;
	}
	for (char *p = names; p < names + n && cnt < 1024; p += strlen(p) + 1)
		list[cnt++] = p;
	qsort(list, cnt, sizeof(list[0]), cmp_str);
	for (size_t i = 0; i < cnt; i++) {
		struct sha256 s;
		char hex[65];
		ssize_t vl = lgetxattr(full, list[i], val, sizeof(val));

		if (vl < 0) {
			snprintf(hex, sizeof(hex), "ERR:%s", errno_name(errno));
		} else {
			sha256_init(&s);
			sha256_update(&s, val, (size_t)vl);
			sha256_hex(&s, hex);
		}
		snprintf(field, sizeof(field), "x:%s=%.16s", list[i], hex);
		add_field(rest, field);
	}
}

static void describe(struct walk *w, int dfd, const char *name,
		     const char *rel, struct ent *e)
{
	char field[8300];

	if (S_ISREG(e->st.st_mode)) {
		char hex[65];
		int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			snprintf(hex, sizeof(hex), "ERR:%s", errno_name(errno));
		} else {
			hash_fd(fd, hex);
			close(fd);
		}
		add_field(&e->rest, hex);
	} else if (S_ISLNK(e->st.st_mode)) {
		char tgt[8192];
		char *esc = NULL;
		size_t len = 0;
		ssize_t n = readlinkat(dfd, name, tgt, sizeof(tgt));
		if (n < 0) {
			snprintf(field, sizeof(field), "-> ERR:%s", errno_name(errno));
		} else {
			esc_append(&esc, &len, tgt, (size_t)n);
			snprintf(field, sizeof(field), "-> %s", esc);
			free(esc);
		}
		add_field(&e->rest, field);
	}
	if (w->flags & TREE_OWNER) {
		snprintf(field, sizeof(field), "%u:%u", (unsigned)e->st.st_uid,
			 (unsigned)e->st.st_gid);
		add_field(&e->rest, field);
	}
	if ((w->flags & TREE_MTIME) && !S_ISLNK(e->st.st_mode)) {
		snprintf(field, sizeof(field), "t:%lld.%09ld",
			 (long long)e->st.st_mtim.tv_sec, e->st.st_mtim.tv_nsec);
		add_field(&e->rest, field);
	}
	if (w->flags & TREE_XATTR)
		add_xattrs(w, rel, &e->rest);
}

static struct ent *push(struct walk *w)
{
	if (w->n == w->cap) {
		w->cap = w->cap ? 2 * w->cap : 256;
		w->v = realloc(w->v, w->cap * sizeof(*w->v));
		if (!w->v)
			abort();
	}
	memset(&w->v[w->n], 0, sizeof(w->v[0]));
	w->v[w->n].order = w->n;
	return &w->v[w->n++];
}

static void walk_dir(struct walk *w, int dfd, const char *rel, const char *relraw);

static void walk_one(struct walk *w, int dfd, const char *rel,
		     const char *relraw, const char *name)
{
	char raw[8192];
	struct ent *e;
	size_t idx;

	snprintf(raw, sizeof(raw), "%s%s%s", relraw ? relraw : "",
		 relraw ? "/" : "", name);
	e = push(w);
	idx = w->n - 1;
	e->path = path_join(rel, name);
	if (fstatat(dfd, name, &e->st, AT_SYMLINK_NOFOLLOW) < 0) {
		char f[64];
		snprintf(f, sizeof(f), "ERR:%s", errno_name(errno));
		add_field(&e->rest, f);
		e->st.st_mode = 0;
		return;
	}
	describe(w, dfd, name, raw, e);
	if (S_ISDIR(e->st.st_mode)) {
		char *path = xstrdup(e->path);
		int fd = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0) {
			char f[64];
			snprintf(f, sizeof(f), "ERR:%s", errno_name(errno));
			add_field(&w->v[idx].rest, f);
		} else {
			walk_dir(w, fd, path, raw);
		}
		free(path);
	}
}

/* Takes ownership of dfd. */
static void walk_dir(struct walk *w, int dfd, const char *rel, const char *relraw)
{
	DIR *d = fdopendir(dfd);
	struct dirent *de;
	char **names = NULL;
	size_t n = 0, cap = 0;

	if (!d) {
		close(dfd);
		return;
	}
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (!rel && !(w->flags & TREE_TOPCTL) && !strcmp(de->d_name, ".txfs"))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			names = realloc(names, cap * sizeof(*names));
			if (!names)
				abort();
		}
		names[n++] = xstrdup(de->d_name);
	}
	qsort(names, n, sizeof(*names), cmp_str);
	for (size_t i = 0; i < n; i++) {
		walk_one(w, dirfd(d), rel, relraw, names[i]);
		free(names[i]);
	}
	free(names);
	closedir(d);
}

static int cmp_ino(const void *a, const void *b)
{
	const struct ent *x = *(struct ent *const *)a, *y = *(struct ent *const *)b;

	if (x->st.st_dev != y->st.st_dev)
		return x->st.st_dev < y->st.st_dev ? -1 : 1;
	if (x->st.st_ino != y->st.st_ino)
		return x->st.st_ino < y->st.st_ino ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int same_inode(const struct ent *a, const struct ent *b)
{
	return a->st.st_dev == b->st.st_dev && a->st.st_ino == b->st.st_ino;
}

/* Name each hard-link group by its first member in walk order. */
static void link_groups(struct walk *w)
{
	struct ent **by = malloc((w->n + 1) * sizeof(*by));

	if (!by)
		abort();
	for (size_t i = 0; i < w->n; i++)
		by[i] = &w->v[i];
	qsort(by, w->n, sizeof(*by), cmp_ino);
	for (size_t i = 0; i < w->n; i++) {
		by[i]->group = by[i]->order;
		if (i && same_inode(by[i - 1], by[i]))
			by[i]->group = by[i - 1]->group;
	}
	free(by);
}

int tree_list(const char *dir, unsigned flags, FILE *out)
{
	struct walk w = { .flags = flags, .top = dir };
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	walk_dir(&w, fd, NULL, NULL);
	link_groups(&w);
	for (size_t i = 0; i < w.n; i++) {
		struct ent *e = &w.v[i];
		mode_t m = e->st.st_mode;
		char type = S_ISREG(m) ? 'f' : S_ISDIR(m) ? 'd' : S_ISLNK(m) ? 'l' :
			    S_ISFIFO(m) ? 'p' : S_ISSOCK(m) ? 's' : S_ISCHR(m) ? 'c' :
			    S_ISBLK(m) ? 'b' : '?';

		fprintf(out, "%s %c %04o", e->path, type, (unsigned)(m & 07777));
		if (S_ISREG(m) || S_ISLNK(m))
			fprintf(out, " %lld", (long long)e->st.st_size);
		if (S_ISREG(m) && !(flags & TREE_NONLINK)) {
			fprintf(out, " %lu", (unsigned long)e->st.st_nlink);
			fprintf(out, " %s", e->st.st_nlink > 1 ? w.v[e->group].path : "-");
		}
		if (S_ISCHR(m) || S_ISBLK(m))
			fprintf(out, " %u:%u", major(e->st.st_rdev), minor(e->st.st_rdev));
		fprintf(out, "%s\n", e->rest ? e->rest : "");
	}
	for (size_t i = 0; i < w.n; i++) {
		free(w.v[i].path);
		free(w.v[i].rest);
	}
	free(w.v);
	return 0;
}
