/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fsop - one system call (or one small syscall scenario) per invocation, for
 * the mount tests: the calls the shell and coreutils can't make or can't
 * report precisely (renameat2 flags, O_TMPFILE, fallocate modes, SEEK_DATA,
 * fcntl/OFD/flock locks, shared mmap, copy_file_range, telldir/seekdir).
 *
 * Usage: fsop SUBCOMMAND ARGS...   (fsop help lists them)
 * Exit 0 on success. On a failed call it prints
 *     fsop: SUBCOMMAND: ENAME: strerror
 * on stderr and exits 1, so a test can assert the exact errno; a scenario
 * whose own check fails prints "fsop: SUBCOMMAND: what: expected X got Y"
 * and exits 3. Usage errors exit 2.
 */
#include "tree.h"
#include "sha256.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

static const char *sub = "fsop";

/* A failed system call: report its errno by name and exit 1. */
static _Noreturn void fail_errno(const char *what)
{
	int e = errno;

	fprintf(stderr, "fsop: %s: %s: %s: %s\n", sub, what, errno_name(e), strerror(e));
	exit(1);
}

/* A failed check inside a scenario: exit 3. */
static _Noreturn __attribute__((format(printf, 1, 2))) void fail_check(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "fsop: %s: ", sub);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(3);
}

static _Noreturn void usage(const char *msg)
{
	fprintf(stderr, "fsop: %s: usage: %s\n", sub, msg);
	exit(2);
}

static long long num(const char *s)
{
	char *end;
	long long v = strtoll(s, &end, 0);

	if (*end == 'k' || *end == 'K')
		v *= 1024, end++;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024, end++;
	else if (*end == 'g' || *end == 'G')
		v *= 1024LL * 1024 * 1024, end++;
	if (*end)
		usage("bad number");
	return v;
}

static void write_all(int fd, const void *buf, size_t n, off_t off)
{
	const char *p = buf;

	while (n) {
		ssize_t w = off < 0 ? write(fd, p, n) : pwrite(fd, p, n, off);
		if (w < 0)
			fail_errno("write");
		p += w;
		n -= (size_t)w;
		if (off >= 0)
			off += w;
	}
}

static int open_or_die(const char *path, int flags, mode_t mode)
{
	int fd = open(path, flags | O_CLOEXEC, mode);

	if (fd < 0)
		fail_errno("open");
	return fd;
}

/* ---- plain calls ---------------------------------------------------- */

static int c_tree(int argc, char **argv)
{
	unsigned flags = 0;
	int i = 1, r;

	for (; i < argc && argv[i][0] == '-'; i++)
		for (const char *f = argv[i] + 1; *f; f++)
			switch (*f) {
			case 'm': flags |= TREE_MTIME; break;
			case 'o': flags |= TREE_OWNER; break;
			case 'x': flags |= TREE_XATTR; break;
			case 'a': flags |= TREE_TOPCTL; break;
			case 'N': flags |= TREE_NONLINK; break;
			default: usage("tree [-moxaN] DIR");
			}
	if (i + 1 != argc)
		usage("tree [-moxaN] DIR");
	r = tree_list(argv[i], flags, stdout);
	if (r < 0) {
		errno = -r;
		fail_errno(argv[i]);
	}
	return 0;
}

static int c_rename2(int argc, char **argv)
{
	unsigned flags = 0;

	if (argc != 4)
		usage("rename2 none|noreplace|exchange OLD NEW");
	if (!strcmp(argv[1], "noreplace"))
		flags = RENAME_NOREPLACE;
	else if (!strcmp(argv[1], "exchange"))
		flags = RENAME_EXCHANGE;
	else if (strcmp(argv[1], "none"))
		usage("rename2 none|noreplace|exchange OLD NEW");
	if (renameat2(AT_FDCWD, argv[2], AT_FDCWD, argv[3], flags) < 0)
		fail_errno("renameat2");
	return 0;
}

static int c_simple(int argc, char **argv)
{
	const char *op = argv[0];
	int r = -1;

	if (!strcmp(op, "rename") && argc == 3)
		r = rename(argv[1], argv[2]);
	else if (!strcmp(op, "link") && argc == 3)
		r = link(argv[1], argv[2]);
	else if (!strcmp(op, "symlink") && argc == 3)
		r = symlink(argv[1], argv[2]);
	else if (!strcmp(op, "unlink") && argc == 2)
		r = unlink(argv[1]);
	else if (!strcmp(op, "rmdir") && argc == 2)
		r = rmdir(argv[1]);
	else if (!strcmp(op, "mkdir") && argc == 3)
		r = mkdir(argv[1], (mode_t)num(argv[2]));
	else if (!strcmp(op, "chmod") && argc == 3)
		r = chmod(argv[1], (mode_t)num(argv[2]));
	else if (!strcmp(op, "truncate") && argc == 3)
		r = truncate(argv[1], (off_t)num(argv[2]));
	else if (!strcmp(op, "mkfifo") && argc == 2)
		r = mknod(argv[1], S_IFIFO | 0644, 0);
	else if (!strcmp(op, "mknod-chr") && argc == 4)
		r = mknod(argv[1], S_IFCHR | 0644,
			  makedev((unsigned)num(argv[2]), (unsigned)num(argv[3])));
	else if (!strcmp(op, "lchown") && argc == 4)
		r = lchown(argv[1], (uid_t)num(argv[2]), (gid_t)num(argv[3]));
	else
		usage("rename|link|symlink A B, unlink|rmdir|mkfifo P, mkdir|chmod P MODE, "
		      "truncate P SIZE, mknod-chr P MAJ MIN, lchown P UID GID");
	if (r < 0)
		fail_errno(op);
	return 0;
}

/* open PATH FLAGS [MODE]: FLAGS letters r w b(=rdwr) c x t a d n s(ync) */
static int c_open(int argc, char **argv)
{
	int flags = 0, fd;

	if (argc < 3)
		usage("open PATH FLAGS [MODE]");
	for (const char *f = argv[2]; *f; f++)
		switch (*f) {
		case 'r': flags |= O_RDONLY; break;
		case 'w': flags |= O_WRONLY; break;
		case 'b': flags |= O_RDWR; break;
		case 'c': flags |= O_CREAT; break;
		case 'x': flags |= O_EXCL; break;
		case 't': flags |= O_TRUNC; break;
		case 'a': flags |= O_APPEND; break;
		case 'd': flags |= O_DIRECTORY; break;
		case 'n': flags |= O_NOFOLLOW; break;
		case 's': flags |= O_SYNC; break;
		default: usage("open PATH FLAGS [MODE]");
		}
	fd = open(argv[1], flags, argc > 3 ? (mode_t)num(argv[3]) : 0644);
	if (fd < 0)
		fail_errno("open");
	if (close(fd) < 0)
		fail_errno("close");
	return 0;
}

/* pwrite FILE OFF STRING [fsync|fdatasync]: no truncation, creates if missing */
static int c_pwrite(int argc, char **argv)
{
	int fd;

	if (argc < 4)
		usage("pwrite FILE OFF STRING [fsync|fdatasync]");
	fd = open_or_die(argv[1], O_WRONLY | O_CREAT, 0644);
	write_all(fd, argv[3], strlen(argv[3]), (off_t)num(argv[2]));
	if (argc > 4 && !strcmp(argv[4], "fsync") && fsync(fd) < 0)
		fail_errno("fsync");
	if (argc > 4 && !strcmp(argv[4], "fdatasync") && fdatasync(fd) < 0)
		fail_errno("fdatasync");
	if (close(fd) < 0)
		fail_errno("close");
	return 0;
}

/* pread FILE OFF LEN: the bytes on stdout */
static int c_pread(int argc, char **argv)
{
	char buf[65536];
	long long len;
	off_t off;
	int fd;

	if (argc != 4)
		usage("pread FILE OFF LEN");
	fd = open_or_die(argv[1], O_RDONLY, 0);
	off = (off_t)num(argv[2]);
	len = num(argv[3]);
	while (len > 0) {
		ssize_t n = pread(fd, buf, (size_t)(len < (long long)sizeof(buf) ? len : (long long)sizeof(buf)), off);
		if (n < 0)
			fail_errno("pread");
		if (n == 0)
			break;
		fwrite(buf, 1, (size_t)n, stdout);
		off += n;
		len -= n;
	}
	close(fd);
	return 0;
}

static int c_sync(int argc, char **argv)
{
	int fd;

	if (argc != 2)
		usage("fsync|fdatasync FILE");
	fd = open_or_die(argv[1], O_RDONLY, 0);
	if ((!strcmp(argv[0], "fsync") ? fsync(fd) : fdatasync(fd)) < 0)
		fail_errno(argv[0]);
	close(fd);
	return 0;
}

/* fallocate FILE 0|keep|punch|zero OFF LEN */
static int c_fallocate(int argc, char **argv)
{
	int mode = 0, fd;

	if (argc != 5)
		usage("fallocate FILE 0|keep|punch|zero OFF LEN");
	if (!strcmp(argv[2], "keep"))
		mode = FALLOC_FL_KEEP_SIZE;
	else if (!strcmp(argv[2], "punch"))
		mode = FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE;
	else if (!strcmp(argv[2], "zero"))
		mode = FALLOC_FL_ZERO_RANGE;
	else if (strcmp(argv[2], "0"))
		usage("fallocate FILE 0|keep|punch|zero OFF LEN");
	fd = open_or_die(argv[1], O_RDWR | O_CREAT, 0644);
	if (fallocate(fd, mode, (off_t)num(argv[3]), (off_t)num(argv[4])) < 0)
		fail_errno("fallocate");
	if (close(fd) < 0)
		fail_errno("close");
	return 0;
}

/* seek FILE data|hole|end OFF: prints the resulting offset */
static int c_seek(int argc, char **argv)
{
	int whence, fd;
	off_t r;

	if (argc != 4)
		usage("seek FILE data|hole|end OFF");
	whence = !strcmp(argv[2], "data") ? SEEK_DATA :
		 !strcmp(argv[2], "hole") ? SEEK_HOLE : SEEK_END;
	fd = open_or_die(argv[1], O_RDONLY, 0);
	r = lseek(fd, (off_t)num(argv[3]), whence);
	if (r < 0)
		fail_errno("lseek");
	printf("%lld\n", (long long)r);
	close(fd);
	return 0;
}

/* utimens PATH ATIME MTIME [nofollow]: SEC[.NSEC] | now | omit */
static void parse_ts(const char *s, struct timespec *ts)
{
	if (!strcmp(s, "now")) {
		ts->tv_nsec = UTIME_NOW;
	} else if (!strcmp(s, "omit")) {
		ts->tv_nsec = UTIME_OMIT;
	} else {
		char *dot = strchr(s, '.');
		ts->tv_sec = (time_t)strtoll(s, NULL, 10);
		ts->tv_nsec = dot ? strtol(dot + 1, NULL, 10) : 0;
	}
}

static int c_utimens(int argc, char **argv)
{
	struct timespec ts[2];

	if (argc < 4)
		usage("utimens PATH ATIME MTIME [nofollow]");
	parse_ts(argv[2], &ts[0]);
	parse_ts(argv[3], &ts[1]);
	if (utimensat(AT_FDCWD, argv[1], ts,
		      argc > 4 && !strcmp(argv[4], "nofollow") ? AT_SYMLINK_NOFOLLOW : 0) < 0)
		fail_errno("utimensat");
	return 0;
}

/* ---- xattrs ---------------------------------------------------------- */

static int c_xattr(int argc, char **argv)
{
	const char *op = argv[0];
	int nofollow = argc > 1 && !strcmp(argv[argc - 1], "nofollow");
	char buf[65536];
	ssize_t n;

	if (nofollow)
		argc--;
	if (!strcmp(op, "setxattr") && argc == 4) {
		int r = nofollow ? lsetxattr(argv[1], argv[2], argv[3], strlen(argv[3]), 0)
				 : setxattr(argv[1], argv[2], argv[3], strlen(argv[3]), 0);
		if (r < 0)
			fail_errno("setxattr");
	} else if (!strcmp(op, "getxattr") && argc == 3) {
		n = nofollow ? lgetxattr(argv[1], argv[2], buf, sizeof(buf))
			     : getxattr(argv[1], argv[2], buf, sizeof(buf));
		if (n < 0)
			fail_errno("getxattr");
		fwrite(buf, 1, (size_t)n, stdout);
		putchar('\n');
	} else if (!strcmp(op, "listxattr") && argc == 2) {
		n = nofollow ? llistxattr(argv[1], buf, sizeof(buf))
			     : listxattr(argv[1], buf, sizeof(buf));
		if (n < 0)
			fail_errno("listxattr");
		for (char *p = buf; p < buf + n; p += strlen(p) + 1)
			puts(p);
	} else if (!strcmp(op, "removexattr") && argc == 3) {
		if ((nofollow ? lremovexattr(argv[1], argv[2]) : removexattr(argv[1], argv[2])) < 0)
			fail_errno("removexattr");
	} else {
		usage("setxattr P NAME VALUE | getxattr P NAME | listxattr P | "
		      "removexattr P NAME  [nofollow]");
	}
	return 0;
}

/* ---- O_TMPFILE ------------------------------------------------------- */

/* tmpfile DIR [NAME]: anonymous file; with NAME, linked in and read back */
static int c_tmpfile(int argc, char **argv)
{
	static const char data[] = "tmpfile-data\n";
	char buf[64], proc[64];
	struct stat st;
	int fd;

	if (argc < 2)
		usage("tmpfile DIR [NAME]");
	fd = open(argv[1], O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd < 0)
		fail_errno("open(O_TMPFILE)");
	write_all(fd, data, sizeof(data) - 1, 0);
	if (fstat(fd, &st) < 0)
		fail_errno("fstat");
	if (st.st_nlink != 0)
		fail_check("nlink of a fresh O_TMPFILE: expected 0 got %lu",
			   (unsigned long)st.st_nlink);
	if (pread(fd, buf, sizeof(buf), 0) != (ssize_t)sizeof(data) - 1 ||
	    memcmp(buf, data, sizeof(data) - 1))
		fail_check("read back of O_TMPFILE data: expected %s", data);
	if (argc > 2) {
		int fd2;
		ssize_t n;
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, argv[2], AT_SYMLINK_FOLLOW) < 0)
			fail_errno("linkat");
		fd2 = open_or_die(argv[2], O_RDONLY, 0);
		n = read(fd2, buf, sizeof(buf));
		if (n != (ssize_t)sizeof(data) - 1 || memcmp(buf, data, (size_t)n))
			fail_check("content of linked O_TMPFILE: expected %s", data);
		close(fd2);
	}
	close(fd);
	return 0;
}

/* ---- mmap ------------------------------------------------------------ */

static char *map_file(int fd, size_t len, int prot, int flags)
{
	char *p = mmap(NULL, len, prot, flags, fd, 0);

	if (p == MAP_FAILED)
		fail_errno("mmap");
	return p;
}

static size_t file_size(int fd)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		fail_errno("fstat");
	return (size_t)st.st_size;
}

/* mmap-write FILE OFF STRING: MAP_SHARED store, msync(MS_SYNC), munmap */
static int c_mmap_write(int argc, char **argv)
{
	size_t off, len;
	char *p;
	int fd;

	if (argc != 4)
		usage("mmap-write FILE OFF STRING");
	off = (size_t)num(argv[2]);
	len = strlen(argv[3]);
	fd = open_or_die(argv[1], O_RDWR, 0);
	if (file_size(fd) < off + len)
		fail_check("file too small for the mapping");
	p = map_file(fd, off + len, PROT_READ | PROT_WRITE, MAP_SHARED);
	memcpy(p + off, argv[3], len);
	if (msync(p, off + len, MS_SYNC) < 0)
		fail_errno("msync");
	if (munmap(p, off + len) < 0)
		fail_errno("munmap");
	if (close(fd) < 0)
		fail_errno("close");
	return 0;
}

/* mmap-read FILE OFF LEN: bytes through a shared read-only mapping */
static int c_mmap_read(int argc, char **argv)
{
	size_t off, len;
	char *p;
	int fd;

	if (argc != 4)
		usage("mmap-read FILE OFF LEN");
	off = (size_t)num(argv[2]);
	len = (size_t)num(argv[3]);
	fd = open_or_die(argv[1], O_RDONLY, 0);
	if (file_size(fd) < off + len)
		fail_check("file too small for the mapping");
	p = map_file(fd, off + len, PROT_READ, MAP_SHARED);
	fwrite(p + off, 1, len, stdout);
	munmap(p, off + len);
	close(fd);
	return 0;
}

/* mmap-private FILE OFF STRING: a private store must not reach the file */
static int c_mmap_private(int argc, char **argv)
{
	size_t off, len;
	char *p, *before;
	int fd;

	if (argc != 4)
		usage("mmap-private FILE OFF STRING");
	off = (size_t)num(argv[2]);
	len = strlen(argv[3]);
	fd = open_or_die(argv[1], O_RDWR, 0);
	if (file_size(fd) < off + len)
		fail_check("file too small for the mapping");
	before = malloc(len);
	if (!before || pread(fd, before, len, (off_t)off) != (ssize_t)len)
		fail_errno("pread");
	p = map_file(fd, off + len, PROT_READ | PROT_WRITE, MAP_PRIVATE);
	memcpy(p + off, argv[3], len);
	if (memcmp(p + off, argv[3], len))
		fail_check("private mapping does not hold the store");
	{
		char *now = malloc(len);
		if (!now || pread(fd, now, len, (off_t)off) != (ssize_t)len)
			fail_errno("pread");
		if (memcmp(now, before, len))
			fail_check("a MAP_PRIVATE store reached the file");
		free(now);
	}
	munmap(p, off + len);
	close(fd);
	free(before);
	return 0;
}

/* mmap-coherent FILE: a shared mapping and read/write on another fd agree */
static int c_mmap_coherent(int argc, char **argv)
{
	char buf[16];
	char *p;
	int fdm, fdr;
	size_t len;

	if (argc != 2)
		usage("mmap-coherent FILE");
	fdm = open_or_die(argv[1], O_RDWR, 0);
	fdr = open_or_die(argv[1], O_RDWR, 0);
	len = file_size(fdm);
	if (len < 8192)
		fail_check("file must have at least 8192 bytes");
	p = map_file(fdm, len, PROT_READ | PROT_WRITE, MAP_SHARED);
	memcpy(p + 100, "MAPSTORE", 8);
	if (pread(fdr, buf, 8, 100) != 8)
		fail_errno("pread");
	if (memcmp(buf, "MAPSTORE", 8))
		fail_check("read(2) after a store in a shared mapping: expected MAPSTORE got %.8s", buf);
	write_all(fdr, "PWRITTEN", 8, 5000);
	if (memcmp(p + 5000, "PWRITTEN", 8))
		fail_check("mapping after pwrite(2): expected PWRITTEN got %.8s", p + 5000);
	if (msync(p, len, MS_SYNC) < 0)
		fail_errno("msync");
	munmap(p, len);
	close(fdm);
	close(fdr);
	return 0;
}

/* ---- copy_file_range --------------------------------------------------- */

/* cfr SRC DST: copy all of SRC into DST (created, truncated) */
static int c_cfr(int argc, char **argv)
{
	int in, out;
	long long total = 0;
	ssize_t n;

	if (argc != 3)
		usage("cfr SRC DST");
	in = open_or_die(argv[1], O_RDONLY, 0);
	out = open_or_die(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while ((n = copy_file_range(in, NULL, out, NULL, 1 << 20, 0)) > 0)
		total += n;
	if (n < 0)
		fail_errno("copy_file_range");
	if (close(out) < 0)
		fail_errno("close");
	close(in);
	printf("%lld\n", total);
	return 0;
}

/* ---- locks ------------------------------------------------------------ */

static int try_lock(int fd, int cmd, short type, off_t start, off_t len)
{
	struct flock fl = { .l_type = type, .l_whence = SEEK_SET,
			    .l_start = start, .l_len = len };

	return fcntl(fd, cmd, &fl) < 0 ? -errno : 0;
}

/* Run fn in a child; returns its exit status. */
static int in_child(int (*fn)(const char *, long), const char *path, long arg)
{
	int st;
	pid_t pid = fork();

	if (pid < 0)
		fail_errno("fork");
	if (pid == 0)
		_exit(fn(path, arg));
	if (waitpid(pid, &st, 0) < 0)
		fail_errno("waitpid");
	return WIFEXITED(st) ? WEXITSTATUS(st) : 100;
}

/* child: conflicting lock must fail, F_GETLK must name the parent */
static int child_posix_conflict(const char *path, long parent)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET,
			    .l_start = 50, .l_len = 10 };
	int fd = open(path, O_RDWR);
	int r;

	if (fd < 0)
		return 10;
	r = try_lock(fd, F_SETLK, F_WRLCK, 50, 10);
	if (r != -EAGAIN && r != -EACCES) {
		fprintf(stderr, "conflicting F_SETLK: expected EAGAIN got %s\n",
			r ? errno_name(-r) : "success");
		return 11;
	}
	if (fcntl(fd, F_GETLK, &fl) < 0)
		return 12;
	if (fl.l_type != F_WRLCK || fl.l_pid != (pid_t)parent) {
		fprintf(stderr, "F_GETLK: expected F_WRLCK by %ld got type %d by %d\n",
			parent, fl.l_type, (int)fl.l_pid);
		return 13;
	}
	if (try_lock(fd, F_SETLK, F_WRLCK, 200, 100) != 0) {
		fprintf(stderr, "F_SETLK on a free range failed\n");
		return 14;
	}
	return 0;
}

static int child_posix_free(const char *path, long unused)
{
	int fd = open(path, O_RDWR);

	(void)unused;
	if (fd < 0)
		return 10;
	if (try_lock(fd, F_SETLK, F_WRLCK, 0, 100) != 0) {
		fprintf(stderr, "F_SETLK after the holder unlocked failed\n");
		return 15;
	}
	return 0;
}

static int child_flock(const char *path, long expect_busy)
{
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return 10;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		if (expect_busy && errno == EWOULDBLOCK)
			return 0;
		fprintf(stderr, "flock(LOCK_EX|LOCK_NB): %s\n", errno_name(errno));
		return 20;
	}
	if (expect_busy) {
		fprintf(stderr, "flock(LOCK_EX|LOCK_NB) succeeded while another holder has it\n");
		return 21;
	}
	return 0;
}

/* locks FILE: POSIX record locks, OFD locks and flock across processes */
static int c_locks(int argc, char **argv)
{
	int fd, fd2, r;

	if (argc != 2)
		usage("locks FILE");
	fd = open_or_die(argv[1], O_RDWR | O_CREAT, 0644);
	if (try_lock(fd, F_SETLK, F_WRLCK, 0, 100) < 0)
		fail_check("F_SETLK on a fresh file failed");
	if ((r = in_child(child_posix_conflict, argv[1], getpid())))
		fail_check("POSIX lock conflict check failed (child exit %d)", r);
	if (try_lock(fd, F_SETLK, F_UNLCK, 0, 100) < 0)
		fail_check("F_UNLCK failed");
	if ((r = in_child(child_posix_free, argv[1], 0)))
		fail_check("POSIX lock after unlock (child exit %d)", r);

	/* OFD locks conflict between two open file descriptions of one process */
	fd2 = open_or_die(argv[1], O_RDWR, 0);
	if (try_lock(fd, F_OFD_SETLK, F_WRLCK, 0, 10) < 0)
		fail_check("F_OFD_SETLK failed: %s", errno_name(errno));
	r = try_lock(fd2, F_OFD_SETLK, F_WRLCK, 5, 10);
	if (r != -EAGAIN && r != -EACCES)
		fail_check("conflicting F_OFD_SETLK: expected EAGAIN got %s",
			   r ? errno_name(-r) : "success");
	try_lock(fd, F_OFD_SETLK, F_UNLCK, 0, 10);
	if (try_lock(fd2, F_OFD_SETLK, F_WRLCK, 5, 10) < 0)
		fail_check("F_OFD_SETLK after unlock failed");
	try_lock(fd2, F_OFD_SETLK, F_UNLCK, 5, 10);

	/* flock */
	if (flock(fd, LOCK_EX) < 0)
		fail_errno("flock");
	if ((r = in_child(child_flock, argv[1], 1)))
		fail_check("flock conflict check failed (child exit %d)", r);
	if (flock(fd, LOCK_UN) < 0)
		fail_errno("flock(LOCK_UN)");
	if ((r = in_child(child_flock, argv[1], 0)))
		fail_check("flock after unlock failed (child exit %d)", r);
	close(fd2);
	close(fd);
	return 0;
}

/* ---- FIFOs and sockets -------------------------------------------------- */

/* fifo PATH: a child writes through an existing FIFO, the parent reads */
static int c_fifo(int argc, char **argv)
{
	char buf[64] = "";
	ssize_t n;
	pid_t pid;
	int fd, st;

	if (argc != 2)
		usage("fifo PATH");
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		int w = open(argv[1], O_WRONLY);
		_exit(w < 0 || write(w, "through-fifo", 12) != 12);
	}
	fd = open_or_die(argv[1], O_RDONLY, 0);
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		fail_errno("read");
	waitpid(pid, &st, 0);
	if (strcmp(buf, "through-fifo"))
		fail_check("data through the FIFO: expected through-fifo got '%s'", buf);
	close(fd);
	return 0;
}

/* sock PATH: bind a unix socket at PATH, a child connects and sends */
static int c_sock(int argc, char **argv)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char buf[64] = "";
	struct stat st;
	int s, c, wst;
	pid_t pid;

	if (argc != 2)
		usage("sock PATH");
	if (strlen(argv[1]) >= sizeof(sa.sun_path))
		usage("socket path too long");
	strcpy(sa.sun_path, argv[1]);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s < 0)
		fail_errno("socket");
	if (bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		fail_errno("bind");
	if (listen(s, 1) < 0)
		fail_errno("listen");
	if (lstat(argv[1], &st) < 0)
		fail_errno("lstat");
	if (!S_ISSOCK(st.st_mode))
		fail_check("type after bind: expected socket got mode %o", st.st_mode);
	pid = fork();
	if (pid < 0)
		fail_errno("fork");
	if (pid == 0) {
		int k = socket(AF_UNIX, SOCK_STREAM, 0);
		if (k < 0 || connect(k, (struct sockaddr *)&sa, sizeof(sa)) < 0)
			_exit(1);
		_exit(write(k, "through-socket", 14) != 14);
	}
	c = accept(s, NULL, NULL);
	if (c < 0)
		fail_errno("accept");
	if (read(c, buf, sizeof(buf) - 1) < 0)
		fail_errno("read");
	waitpid(pid, &wst, 0);
	if (strcmp(buf, "through-socket"))
		fail_check("data through the socket: expected through-socket got '%s'", buf);
	close(c);
	close(s);
	return 0;
}

/* ---- directories ------------------------------------------------------- */

struct seen {
	char **names;
	size_t n, cap;
};

static void seen_add(struct seen *s, const char *name)
{
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 256;
		s->names = realloc(s->names, s->cap * sizeof(char *));
		if (!s->names)
			abort();
	}
	s->names[s->n++] = strdup(name);
}

static size_t seen_count(const struct seen *s, const char *name)
{
	size_t c = 0;

	for (size_t i = 0; i < s->n; i++)
		c += !strcmp(s->names[i], name);
	return c;
}

static void touch_at(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		fail_errno("create");
	close(fd);
}

/*
 * readdir-stable DIR N: DIR holds e0000..e{N-1} (made by the caller).
 * Read a third, remember telldir and the next name, then remove every
 * fourth entry already read and every seventh not yet read, and create N/2
 * new ones; read on. Every entry that existed throughout must be seen once,
 * nothing twice, nothing unknown; seekdir to the remembered offset returns
 * the remembered name; a rewind sees exactly the directory's content.
 */
static int c_readdir_stable(int argc, char **argv)
{
	struct seen seen = { 0 };
	struct dirent *de;
	char name[64], mark[256] = "";
	long n, cut, pos = -1;
	size_t got;
	DIR *d;
	int dfd;

	if (argc != 3)
		usage("readdir-stable DIR N");
	n = (long)num(argv[2]);
	cut = n / 3;
	d = opendir(argv[1]);
	if (!d)
		fail_errno("opendir");
	dfd = dirfd(d);
	while (seen.n < (size_t)cut + 2 && (de = readdir(d)))
		seen_add(&seen, de->d_name);
	pos = telldir(d);
	de = readdir(d);
	if (!de)
		fail_check("directory ended early after %zu entries", seen.n);
	snprintf(mark, sizeof(mark), "%s", de->d_name);
	seen_add(&seen, de->d_name);

	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "e%04ld", i);
		int was_read = seen_count(&seen, name) > 0;
		if (!strcmp(name, mark))
			continue;
		if ((was_read && i % 4 == 0) || (!was_read && i % 7 == 0))
			if (unlinkat(dfd, name, 0) < 0)
				fail_errno("unlink");
	}
	for (long i = 0; i < n / 2; i++) {
		snprintf(name, sizeof(name), "new%04ld", i);
		touch_at(dfd, name);
	}
	while ((de = readdir(d)))
		seen_add(&seen, de->d_name);

	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "e%04ld", i);
		int was_read_early = 0;
		for (size_t k = 0; k < (size_t)cut + 3 && k < seen.n; k++)
			was_read_early |= !strcmp(seen.names[k], name);
		got = seen_count(&seen, name);
		int removed = (was_read_early && i % 4 == 0) ||
			      (!was_read_early && i % 7 == 0 && strcmp(name, mark));
		if (!removed && got != 1)
			fail_check("entry %s, present throughout: expected seen once got %zu times",
				   name, got);
		if (got > 1)
			fail_check("entry %s seen %zu times", name, got);
	}
	for (size_t i = 0; i < seen.n; i++) {
		const char *s = seen.names[i];
		if (strcmp(s, ".") && strcmp(s, "..") && strncmp(s, "e", 1) &&
		    strncmp(s, "new", 3))
			fail_check("unknown entry '%s' returned", s);
		if (!strncmp(s, "new", 3) && seen_count(&seen, s) > 1)
			fail_check("new entry %s seen twice", s);
	}
	seekdir(d, pos);
	de = readdir(d);
	if (!de || strcmp(de->d_name, mark))
		fail_check("readdir after seekdir(telldir): expected %s got %s", mark,
			   de ? de->d_name : "(end)");

	/* A fresh pass must list exactly what is there now. */
	rewinddir(d);
	size_t total = 0;
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		struct stat st;
		if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
			fail_check("rewound readdir returned %s, which lstat says is gone (%s)",
				   de->d_name, errno_name(errno));
		total++;
	}
	size_t expect = 0;
	for (long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "e%04ld", i);
		expect += faccessat(dfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	}
	expect += (size_t)(n / 2);
	if (total != expect)
		fail_check("entries after rewinddir: expected %zu got %zu", expect, total);
	closedir(d);
	return 0;
}

/* readdir-unlink DIR: remove each entry right after readdir returns it (the
 * rm -rf pattern); at the end the directory must be empty. */
static int c_readdir_unlink(int argc, char **argv)
{
	struct dirent *de;
	size_t removed = 0, left = 0;
	DIR *d;

	if (argc != 2)
		usage("readdir-unlink DIR");
	d = opendir(argv[1]);
	if (!d)
		fail_errno("opendir");
	while ((de = readdir(d))) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) < 0)
			fail_errno("unlinkat");
		removed++;
	}
	rewinddir(d);
	while ((de = readdir(d)))
		left += strcmp(de->d_name, ".") && strcmp(de->d_name, "..");
	closedir(d);
	if (left)
		fail_check("entries left after one unlinking pass: expected 0 got %zu (removed %zu)",
			   left, removed);
	printf("%zu\n", removed);
	return 0;
}

/* ---- data helpers ------------------------------------------------------- */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* fill FILE SIZE SEED: SIZE pseudo-random bytes, fast */
static int c_fill(int argc, char **argv)
{
	static uint64_t buf[1 << 17];
	uint64_t seed, ctr = 0;
	long long size, done = 0;
	int fd;

	if (argc != 4)
		usage("fill FILE SIZE SEED");
	size = num(argv[2]);
	seed = (uint64_t)num(argv[3]);
	fd = open_or_die(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	while (done < size) {
		size_t chunk = sizeof(buf);
		if ((long long)chunk > size - done)
			chunk = (size_t)(size - done);
		for (size_t i = 0; i < (chunk + 7) / 8; i++)
			buf[i] = mix(seed ^ ctr++);
		write_all(fd, buf, chunk, -1);
		done += (long long)chunk;
	}
	if (close(fd) < 0)
		fail_errno("close");
	return 0;
}

#define REC 4096

static void record(char *buf, long i)
{
	int n = snprintf(buf, REC, "record %08ld\n", i);

	for (int k = n; k < REC; k++)
		buf[k] = (char)('a' + (i + k) % 26);
	buf[REC - 1] = '\n';
}

/*
 * writer FILE LOG N: append N 4 KiB records to FILE with write(2), and after
 * each write returns, append its number to LOG (outside the mount). Stops
 * at the first error (the daemon was killed); exits 0 either way.
 */
static int c_writer(int argc, char **argv)
{
	char buf[REC], line[32];
	long n;
	int fd, log;

	if (argc != 4)
		usage("writer FILE LOG N");
	n = (long)num(argv[3]);
	fd = open_or_die(argv[1], O_WRONLY | O_CREAT | O_APPEND, 0644);
	log = open_or_die(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	for (long i = 0; i < n; i++) {
		record(buf, i);
		if (write(fd, buf, REC) != REC)
			break;
		int len = snprintf(line, sizeof(line), "%ld\n", i);
		write_all(log, line, (size_t)len, -1);
	}
	return 0;
}

/* verify FILE LOG: every record LOG names is in FILE, intact */
static int c_verify(int argc, char **argv)
{
	char buf[REC], want[REC];
	long last = -1, v;
	FILE *lf;
	int fd;

	if (argc != 3)
		usage("verify FILE LOG");
	lf = fopen(argv[2], "r");
	if (!lf)
		fail_errno("fopen log");
	while (fscanf(lf, "%ld", &v) == 1)
		last = v;
	fclose(lf);
	fd = open(argv[1], O_RDONLY);
	if (fd < 0) {
		if (last < 0 && errno == ENOENT)
			return printf("0\n"), 0;
		fail_errno("open");
	}
	for (long i = 0; i <= last; i++) {
		ssize_t r = pread(fd, buf, REC, (off_t)i * REC);
		record(want, i);
		if (r != REC || memcmp(buf, want, REC))
			fail_check("record %ld of %ld written before the kill: expected intact got %s",
				   i, last + 1, r < 0 ? errno_name(errno) : r != REC ? "short" : "different bytes");
	}
	close(fd);
	printf("%ld\n", last + 1);
	return 0;
}

/*
 * metawriter DIR LOG N: namespace operations, each logged to LOG after it
 * returned: i: create f<i> holding "<i>"; every 3rd: rename f<i> to r<i>;
 * every 5th: mkdir d<i> and create d<i>/x; every 7th: unlink f<i-1> or r<i-1>.
 */
static int c_metawriter(int argc, char **argv)
{
	char a[64], b[64], line[160];
	long n;
	int log;

	if (argc != 4)
		usage("metawriter DIR LOG N");
	n = (long)num(argv[3]);
	log = open_or_die(argv[2], O_WRONLY | O_CREAT | O_APPEND, 0644);
	if (chdir(argv[1]) < 0)
		fail_errno("chdir");
	for (long i = 0; i < n; i++) {
		snprintf(a, sizeof(a), "f%ld", i);
		int fd = open(a, O_WRONLY | O_CREAT | O_EXCL, 0644);
		if (fd < 0)
			return 0;
		int len = snprintf(b, sizeof(b), "%ld", i);
		if (write(fd, b, (size_t)len) != len || close(fd) < 0)
			return 0;
		write_all(log, line, (size_t)snprintf(line, sizeof(line), "C %ld\n", i), -1);
		if (i % 3 == 0) {
			snprintf(b, sizeof(b), "r%ld", i);
			if (rename(a, b) < 0)
				return 0;
			write_all(log, line, (size_t)snprintf(line, sizeof(line), "R %ld\n", i), -1);
		}
		if (i % 5 == 0) {
			snprintf(b, sizeof(b), "d%ld", i);
			if (mkdir(b, 0755) < 0)
				return 0;
			snprintf(b, sizeof(b), "d%ld/x", i);
			fd = open(b, O_WRONLY | O_CREAT | O_EXCL, 0644);
			if (fd < 0 || close(fd) < 0)
				return 0;
			write_all(log, line, (size_t)snprintf(line, sizeof(line), "D %ld\n", i), -1);
		}
		if (i % 7 == 0 && i > 0) {
			snprintf(b, sizeof(b), "%c%ld", (i - 1) % 3 == 0 ? 'r' : 'f', i - 1);
			if (unlink(b) < 0)
				return 0;
			write_all(log, line, (size_t)snprintf(line, sizeof(line), "U %ld\n", i - 1), -1);
		}
	}
	return 0;
}

static void expect_entry(const char *fmt, long i, int content)
{
	char path[64], buf[64], want[32];
	ssize_t r;
	int fd;

	snprintf(path, sizeof(path), fmt, i);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		fail_check("%s, logged as done before the kill: expected present got %s",
			   path, errno_name(errno));
	r = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (!content)
		return;
	snprintf(want, sizeof(want), "%ld", i);
	if (r < 0)
		fail_check("%s: read failed: %s", path, errno_name(errno));
	buf[r] = '\0';
	if (strcmp(buf, want))
		fail_check("content of %s: expected '%s' got '%s'", path, want, buf);
}

/*
 * verify-meta DIR LOG: every operation LOG records is in effect. The last
 * operation attempted may or may not have been applied (its reply can be
 * lost with the daemon), so the two highest indexes are not checked.
 */
static int c_verify_meta(int argc, char **argv)
{
	enum { F = 1, R = 2, D = 4, MAXI = 1 << 20 };
	long i, count = 0, max = -1;
	char op, path[64];
	unsigned char *state;
	FILE *lf;

	if (argc != 3)
		usage("verify-meta DIR LOG");
	lf = fopen(argv[2], "r");
	if (!lf)
		fail_errno("fopen log");
	if (chdir(argv[1]) < 0)
		fail_errno("chdir");
	state = calloc(MAXI, 1);
	if (!state)
		abort();
	while (fscanf(lf, " %c %ld", &op, &i) == 2 && i >= 0 && i < MAXI) {
		if (op == 'C')
			state[i] |= F;
		else if (op == 'R')
			state[i] = (unsigned char)((state[i] & ~F) | R);
		else if (op == 'D')
			state[i] |= D;
		else if (op == 'U')
			state[i] &= (unsigned char)~(F | R);
		max = i > max ? i : max;
		count++;
	}
	fclose(lf);
	for (i = 0; i < max - 1; i++) {
		if (state[i] & F)
			expect_entry("f%ld", i, 1);
		if (state[i] & R)
			expect_entry("r%ld", i, 1);
		if (state[i] & D)
			expect_entry("d%ld/x", i, 0);
		snprintf(path, sizeof(path), "f%ld", i);
		if (!(state[i] & F) && access(path, F_OK) == 0)
			fail_check("%s: expected gone (renamed or unlinked) got present", path);
	}
	free(state);
	printf("%ld\n", count);
	return 0;
}

/* unlink-open FILE: an open file stays usable after its name is removed */
static int c_unlink_open(int argc, char **argv)
{
	char buf[32] = "";
	struct stat st;
	int fd;

	if (argc != 2)
		usage("unlink-open FILE");
	fd = open_or_die(argv[1], O_RDWR, 0);
	if (unlink(argv[1]) < 0)
		fail_errno("unlink");
	write_all(fd, "after-unlink", 12, 0);
	if (pread(fd, buf, 12, 0) != 12 || memcmp(buf, "after-unlink", 12))
		fail_check("read back through the unlinked fd: expected after-unlink got '%s'", buf);
	if (fstat(fd, &st) < 0)
		fail_errno("fstat");
	if (st.st_nlink != 0)
		fail_check("nlink of an unlinked open file: expected 0 got %lu",
			   (unsigned long)st.st_nlink);
	if (access(argv[1], F_OK) == 0)
		fail_check("name still present after unlink");
	close(fd);
	return 0;
}

/*
 * dirfd-ops DIR SCRIPT: open DIR, run SCRIPT with sh -c (it may swap DIR's
 * real counterpart for a symlink), then act through the directory fd only:
 * read f, write f, create newfile, mkdir newdir, rename f, unlink f.
 * Prints one line per operation: its result and what a read returned.
 * Never fails itself: the caller judges where the effects landed.
 */
static int c_dirfd_ops(int argc, char **argv)
{
	char buf[256];
	ssize_t n;
	int dfd, fd;

	if (argc != 3)
		usage("dirfd-ops DIR SCRIPT");
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		fail_errno("open dir");
	if (system(argv[2]) != 0)
		fail_check("the script failed: %s", argv[2]);
	fd = openat(dfd, "f", O_RDONLY | O_CLOEXEC);
	n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
	printf("read f: %s", n < 0 ? errno_name(errno) : "0");
	if (n >= 0)
		printf(" '%.*s'", (int)n, buf);
	putchar('\n');
	if (fd >= 0)
		close(fd);
	fd = openat(dfd, "f", O_WRONLY | O_APPEND | O_CLOEXEC);
	n = fd < 0 ? -1 : write(fd, "via-dirfd\n", 10);
	printf("append f: %s\n", n < 0 ? errno_name(errno) : "0");
	if (fd >= 0)
		close(fd);
	fd = openat(dfd, "newfile", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	printf("create newfile: %s\n", fd < 0 ? errno_name(errno) : "0");
	if (fd >= 0)
		close(fd);
	printf("mkdir newdir: %s\n", mkdirat(dfd, "newdir", 0755) < 0 ? errno_name(errno) : "0");
	printf("symlink newlink: %s\n",
	       symlinkat("target", dfd, "newlink") < 0 ? errno_name(errno) : "0");
	printf("rename f g: %s\n", renameat(dfd, "f", dfd, "g") < 0 ? errno_name(errno) : "0");
	printf("unlink g: %s\n", unlinkat(dfd, "g", 0) < 0 ? errno_name(errno) : "0");
	printf("fchmod dir: %s\n", fchmod(dfd, 0700) < 0 ? errno_name(errno) : "0");
	close(dfd);
	return 0;
}

/* statfs PATH: prints bsize blocks bfree bavail files namemax */
static int c_statfs(int argc, char **argv)
{
	struct statvfs s;

	if (argc != 2)
		usage("statfs PATH");
	if (statvfs(argv[1], &s) < 0)
		fail_errno("statvfs");
	printf("%lu %llu %llu %llu %llu %lu\n", s.f_bsize, (unsigned long long)s.f_blocks,
	       (unsigned long long)s.f_bfree, (unsigned long long)s.f_bavail,
	       (unsigned long long)s.f_files, s.f_namemax);
	return 0;
}

/* stat PATH: ino nlink mode(octal) size uid gid (lstat) */
static int c_stat(int argc, char **argv)
{
	struct stat st;

	if (argc != 2)
		usage("stat PATH");
	if (lstat(argv[1], &st) < 0)
		fail_errno("lstat");
	printf("%llu %lu %o %lld %u %u\n", (unsigned long long)st.st_ino,
	       (unsigned long)st.st_nlink, st.st_mode, (long long)st.st_size,
	       st.st_uid, st.st_gid);
	return 0;
}

/* hold FILE SECONDS: keep FILE open (for busy-unmount and kill tests) */
static int c_hold(int argc, char **argv)
{
	int fd;

	if (argc != 3)
		usage("hold FILE SECONDS");
	fd = open_or_die(argv[1], O_RDONLY, 0);
	sleep((unsigned)num(argv[2]));
	close(fd);
	return 0;
}

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {
	{ "tree", c_tree }, { "rename2", c_rename2 }, { "rename", c_simple },
	{ "link", c_simple }, { "symlink", c_simple }, { "unlink", c_simple },
	{ "rmdir", c_simple }, { "mkdir", c_simple }, { "chmod", c_simple },
	{ "truncate", c_simple }, { "mkfifo", c_simple }, { "mknod-chr", c_simple },
	{ "lchown", c_simple }, { "open", c_open }, { "pwrite", c_pwrite },
	{ "pread", c_pread }, { "fsync", c_sync }, { "fdatasync", c_sync },
	{ "fallocate", c_fallocate }, { "seek", c_seek }, { "utimens", c_utimens },
	{ "setxattr", c_xattr }, { "getxattr", c_xattr }, { "listxattr", c_xattr },
	{ "removexattr", c_xattr }, { "tmpfile", c_tmpfile },
	{ "mmap-write", c_mmap_write }, { "mmap-read", c_mmap_read },
	{ "mmap-private", c_mmap_private }, { "mmap-coherent", c_mmap_coherent },
	{ "cfr", c_cfr }, { "locks", c_locks }, { "fifo", c_fifo }, { "sock", c_sock },
	{ "readdir-stable", c_readdir_stable }, { "readdir-unlink", c_readdir_unlink },
	{ "fill", c_fill }, { "writer", c_writer }, { "verify", c_verify },
	{ "metawriter", c_metawriter }, { "verify-meta", c_verify_meta },
	{ "unlink-open", c_unlink_open }, { "statfs", c_statfs }, { "stat", c_stat },
	{ "hold", c_hold }, { "dirfd-ops", c_dirfd_ops },
};

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "help")) {
		fprintf(stderr, "usage: fsop SUBCOMMAND ARGS...\nsubcommands:");
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			fprintf(stderr, " %s", cmds[i].name);
		fputc('\n', stderr);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name)) {
			sub = cmds[i].name;
			return cmds[i].fn(argc - 1, argv + 1);
		}
	fprintf(stderr, "fsop: unknown subcommand %s\n", argv[1]);
	return 2;
}
