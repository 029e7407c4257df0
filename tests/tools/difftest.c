/* SPDX-License-Identifier: Apache-2.0 */
/*
 * difftest - the differential tester. The same seeded random sequence of
 * file-system operations is applied inside a plain directory and inside a
 * txfs mount; the two transcripts must be identical, errno for errno.
 *
 *   difftest --init SEED DIR        build the seeded starting tree in DIR
 *   difftest [-s SKIP] [-T] SEED N DIR
 *                                   apply operations SKIP..N-1 inside DIR,
 *                                   print one line per operation, then
 *                                   (unless -T) the canonical tree listing
 *
 * Operation i is drawn from a generator seeded by (SEED, i) alone, never
 * from the state of the tree, so a run can be split (-s) across a remount
 * and still apply exactly the same sequence. The transcript holds no inode
 * numbers, times or other values that legitimately differ between two file
 * systems; directory sizes and directory link counts are left out too.
 *
 * Paths are drawn from a small namespace (names a..f, depth 1-3) so that
 * operations collide: renames over files and directories, into their own
 * subdirectories, links onto existing names, rmdir of non-empty directories.
 * Opens use O_NOFOLLOW and symlink targets never contain "..", so nothing
 * reaches outside DIR; absolute targets point into a path that must not
 * exist.
 */
#include "sha256.h"
#include "tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OFF (300 * 1024)
#define MAX_LEN (24 * 1024)

struct rng {
	uint64_t s;
};

static uint64_t next(struct rng *r)
{
	uint64_t x = (r->s += 0x9e3779b97f4a7c15ULL);

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static unsigned pick(struct rng *r, unsigned n)
{
	return (unsigned)(next(r) % n);
}

enum { ANY, FILEISH, DIRISH };

/*
 * A path of depth 1-3 over names a..h. Directories tend to be called a..d
 * and files e..h (kind biases the last component; inner components are
 * mostly a..d), so that a good share of operations find what they expect
 * while the rest still collide with the other type.
 */
static void rand_path(struct rng *r, char *buf, size_t len, int kind)
{
	unsigned d = pick(r, 10), depth = d < 4 ? 1 : d < 8 ? 2 : 3;
	size_t o = 0;

	for (unsigned i = 0; i < depth && o + 3 < len; i++) {
		int last = i + 1 == depth;
		int want = last ? kind : DIRISH;
		unsigned c = pick(r, 4), lean = pick(r, 5) != 0;

		if (i)
			buf[o++] = '/';
		if (want == ANY || !lean)
			buf[o++] = (char)('a' + pick(r, 8));
		else
			buf[o++] = (char)((want == DIRISH ? 'a' : 'e') + c);
	}
	buf[o] = '\0';
}

static void rand_bytes(struct rng *r, char *buf, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t v = next(r);
		memcpy(buf + i, &v, n - i < 8 ? n - i : 8);
	}
}

static void hash_hex(const void *p, size_t n, char out[17])
{
	struct sha256 s;
	char hex[65];

	sha256_init(&s);
	sha256_update(&s, p, n);
	sha256_hex(&s, hex);
	memcpy(out, hex, 16);
	out[16] = '\0';
}

static const char *res(int r)
{
	return r < 0 ? errno_name(errno) : "0";
}

static const mode_t modes[] = { 0644, 0600, 0755, 0700, 0555, 0444, 0640, 0751 };

/* ---- the operations: each prints its arguments and result ---------------- */

static void op_create(struct rng *r, const char *p)
{
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW;
	mode_t mode = modes[pick(r, 4)];
	int fd;

	if (pick(r, 3) == 0)
		flags |= O_EXCL;
	if (pick(r, 3) == 0)
		flags |= O_TRUNC;
	if (pick(r, 4) == 0)	/* O_RDONLY | O_TRUNC truncates too */
		flags &= ~O_WRONLY;
	fd = open(p, flags, mode);
	printf("create %s %s%s%s %o = %s\n", p, flags & O_EXCL ? "x" : "",
	       flags & O_TRUNC ? "t" : "", flags & O_WRONLY ? "" : "r", mode,
	       res(fd));
	if (fd >= 0)
		close(fd);
}

static void op_write(struct rng *r, const char *p)
{
	static char buf[MAX_LEN];
	int append = pick(r, 5) == 0, sync = pick(r, 20) == 0;
	off_t off = (off_t)pick(r, MAX_OFF);
	size_t len = pick(r, 4) == 0 ? 1 + pick(r, MAX_LEN) : 1 + pick(r, 600);
	int fd = open(p, O_WRONLY | O_NOFOLLOW | (append ? O_APPEND : 0));
	ssize_t n = 0;

	rand_bytes(r, buf, len);
	if (fd >= 0) {
		n = append ? write(fd, buf, len) : pwrite(fd, buf, len, off);
		if (n >= 0 && sync && fsync(fd) < 0)
			n = -1;
	}
	printf("write %s %s%lld+%zu = %s", p, append ? "append " : "",
	       (long long)(append ? 0 : off), len, fd < 0 ? res(fd) : res((int)n));
	if (n >= 0 && fd >= 0)
		printf(" %zd", n);
	putchar('\n');
	if (fd >= 0)
		close(fd);
}

static void op_read(struct rng *r, const char *p)
{
	static char buf[MAX_LEN * 2];
	off_t off = pick(r, 3) == 0 ? 0 : (off_t)pick(r, MAX_OFF);
	size_t len = 1 + pick(r, sizeof(buf) - 1);
	int fd = open(p, O_RDONLY | O_NOFOLLOW);
	ssize_t n = -1;
	char hex[17] = "";

	if (fd >= 0) {
		n = pread(fd, buf, len, off);
		if (n >= 0)
			hash_hex(buf, (size_t)n, hex);
	}
	printf("read %s %lld+%zu = %s", p, (long long)off, len,
	       fd < 0 ? res(fd) : res((int)n));
	if (n >= 0)
		printf(" %zd %s", n, hex);
	putchar('\n');
	if (fd >= 0)
		close(fd);
}

static void op_truncate(struct rng *r, const char *p)
{
	off_t len = pick(r, 4) == 0 ? 0 : (off_t)pick(r, MAX_OFF + MAX_LEN);

	printf("truncate %s %lld = %s\n", p, (long long)len, res(truncate(p, len)));
}

static void op_rename(struct rng *r, const char *p)
{
	char q[64];
	unsigned k = pick(r, 20);
	unsigned flags = k == 0 ? RENAME_NOREPLACE : k == 1 ? RENAME_EXCHANGE : 0;

	rand_path(r, q, sizeof(q), ANY);
	printf("rename %s %s %s = %s\n", p, q,
	       flags == RENAME_NOREPLACE ? "noreplace" : flags ? "exchange" : "-",
	       res(renameat2(AT_FDCWD, p, AT_FDCWD, q, flags)));
}

static void op_link(struct rng *r, const char *p)
{
	char q[64];

	rand_path(r, q, sizeof(q), FILEISH);
	printf("link %s %s = %s\n", p, q, res(link(p, q)));
}

static void op_symlink(struct rng *r, const char *p)
{
	char t[80];

	if (pick(r, 4) == 0) {
		strcpy(t, "/nonexistent-txfs-difftest/");
		rand_path(r, t + strlen(t), sizeof(t) - strlen(t), ANY);
	} else {
		rand_path(r, t, sizeof(t), ANY);
	}
	printf("symlink %s %s = %s\n", t, p, res(symlink(t, p)));
}

static void op_chmod(struct rng *r, const char *p)
{
	mode_t m = modes[pick(r, sizeof(modes) / sizeof(modes[0]))];

	printf("chmod %s %o = %s\n", p, m, res(chmod(p, m)));
}

static void op_stat(struct rng *r, const char *p)
{
	struct stat st;
	int follow = pick(r, 4) == 0;
	int rc = follow ? stat(p, &st) : lstat(p, &st);

	printf("%s %s = %s", follow ? "stat" : "lstat", p, res(rc));
	if (rc == 0) {
		char t = S_ISREG(st.st_mode) ? 'f' : S_ISDIR(st.st_mode) ? 'd' :
			 S_ISLNK(st.st_mode) ? 'l' : '?';
		printf(" %c %04o", t, (unsigned)(st.st_mode & 07777));
		if (t == 'f')
			printf(" %lld %lu", (long long)st.st_size, (unsigned long)st.st_nlink);
		if (t == 'l')
			printf(" %lld", (long long)st.st_size);
	}
	putchar('\n');
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void op_readdir(const char *p)
{
	char *names[512];
	size_t n = 0;
	struct dirent *de;
	DIR *d = opendir(p);

	printf("readdir %s = %s", p, d ? "0" : errno_name(errno));
	if (d) {
		while ((de = readdir(d)) && n < 512)
			if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
				names[n++] = strdup(de->d_name);
		closedir(d);
		qsort(names, n, sizeof(names[0]), cmp_str);
		for (size_t i = 0; i < n; i++) {
			printf(" %s", names[i]);
			free(names[i]);
		}
	}
	putchar('\n');
}

static void op_readlink(const char *p)
{
	char buf[256];
	ssize_t n = readlink(p, buf, sizeof(buf) - 1);

	printf("readlink %s = %s", p, n < 0 ? errno_name(errno) : "0");
	if (n >= 0)
		printf(" %.*s", (int)n, buf);
	putchar('\n');
}

/* One operation, chosen and parameterised by r alone. */
static void one_op(struct rng *r)
{
	char p[64];
	unsigned w = pick(r, 100);
	int kind = (w >= 66 && w < 81) ? DIRISH : (w >= 53 && w < 66) || w >= 85 ? ANY : FILEISH;

	rand_path(r, p, sizeof(p), kind);
	if (w < 10)
		op_create(r, p);
	else if (w < 26)
		op_write(r, p);
	else if (w < 36)
		op_read(r, p);
	else if (w < 42)
		op_truncate(r, p);
	else if (w < 53)
		op_rename(r, p);
	else if (w < 58)
		op_link(r, p);
	else if (w < 66)
		printf("unlink %s = %s\n", p, res(unlink(p)));
	else if (w < 75)
		printf("mkdir %s = %s\n", p, res(mkdir(p, pick(r, 2) ? 0755 : 0700)));
	else if (w < 81)
		printf("rmdir %s = %s\n", p, res(rmdir(p)));
	else if (w < 85)
		op_symlink(r, p);
	else if (w < 90)
		op_chmod(r, p);
	else if (w < 96)
		op_stat(r, p);
	else if (w < 98)
		op_readdir(p);
	else
		op_readlink(p);
}

/* ---- the starting tree ----------------------------------------------- */

static void init_tree(uint64_t seed)
{
	static char buf[200 * 1024];
	struct rng r = { seed ^ 0x5eed5eedULL };
	char p[64], q[64];

	for (int i = 0; i < 40; i++) {
		rand_path(&r, p, sizeof(p), DIRISH);
		(void)mkdir(p, 0755);
	}
	for (int i = 0; i < 120; i++) {
		size_t len = pick(&r, 3) == 0 ? pick(&r, sizeof(buf)) : pick(&r, 3000);
		int fd;
		rand_path(&r, p, sizeof(p), FILEISH);
		fd = open(p, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644);
		if (fd < 0)
			continue;
		rand_bytes(&r, buf, len);
		if (write(fd, buf, len) != (ssize_t)len)
			perror("difftest: init write");
		close(fd);
	}
	for (int i = 0; i < 15; i++) {
		rand_path(&r, p, sizeof(p), FILEISH);
		rand_path(&r, q, sizeof(q), FILEISH);
		(void)link(p, q);
		rand_path(&r, p, sizeof(p), ANY);
		rand_path(&r, q, sizeof(q), FILEISH);
		(void)symlink(p, q);
	}
}

static uint64_t op_seed(uint64_t seed, long i)
{
	struct rng r = { seed * 0x100000001b3ULL ^ (uint64_t)i };

	next(&r);
	return next(&r);
}

static int usage(void)
{
	fprintf(stderr, "usage: difftest --init SEED DIR\n"
			"       difftest [-s SKIP] [-T] SEED N DIR\n");
	return 2;
}

int main(int argc, char **argv)
{
	long skip = 0, n;
	int notree = 0, i = 1;
	uint64_t seed;

	if (argc == 4 && !strcmp(argv[1], "--init")) {
		if (chdir(argv[3]) < 0) {
			perror("difftest: chdir");
			return 1;
		}
		umask(022);
		init_tree(strtoull(argv[2], NULL, 0));
		return 0;
	}
	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "-s") && i + 1 < argc)
			skip = strtol(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "-T"))
			notree = 1;
		else
			return usage();
	}
	if (argc - i != 3)
		return usage();
	seed = strtoull(argv[i], NULL, 0);
	n = strtol(argv[i + 1], NULL, 0);
	if (chdir(argv[i + 2]) < 0) {
		perror("difftest: chdir");
		return 1;
	}
	umask(022);
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	for (long k = skip; k < n; k++) {
		struct rng r = { op_seed(seed, k) };
		printf("%ld ", k);
		one_op(&r);
	}
	if (!notree) {
		printf("--- tree\n");
		fflush(stdout);
		if (tree_list(".", 0, stdout) < 0) {
			perror("difftest: tree");
			return 1;
		}
	}
	return fflush(stdout) ? 1 : 0;
}
