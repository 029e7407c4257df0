/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_confine.c - cli/sandbox/confine.c: option validation, the kernel probe, and
 * confine_apply() in forked children that check from inside that denied
 * calls fail, allowed ones work, and a canary outside stays intact.
 *
 * Built with -DTXFS_CONFINE_TEST so children can pose as older kernels
 * (confine_test_max_landlock_abi). The test process itself is never
 * confined: every confine_apply() runs in a child that _exits with 0, or
 * prints the failed check and exits non-zero. Temp folders live under
 * /var/tmp, because /tmp is writable by design. Nothing here sends network
 * traffic (sockets are created, never connected). The tests that apply
 * confinement are skipped when the kernel (or valgrind, which does not
 * implement the Landlock and seccomp system calls) cannot enforce it.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <linux/landlock.h>
#include <linux/openat2.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "confine.h"

#define CANARY "canary: must stay byte-identical\n"

struct fix {
	char root[64];		/* /var/tmp/txfs-confine-unit.XXXXXX */
	char ws[96];		/* writable */
	char outside[96];	/* not writable */
	char canary[128];	/* outside/canary */
	pid_t daemon;		/* a paused child standing in for the daemon */
};

/* In a child: report the first failed check and exit. */
#define CHECK(cond)                                                               \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "child check failed, line %d: %s (errno %s)\n", \
				__LINE__, #cond, strerrorname_np(errno));         \
			_exit(1);                                                 \
		}                                                                 \
	} while (0)

#define CHECK_ERR(expr, err) CHECK((expr) == -1 && errno == (err))

static int write_file(const char *path, const char *text)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, text, strlen(text));
	close(fd);
	return n == (ssize_t)strlen(text) ? 0 : -EIO;
}

static bool file_is(const char *path, const char *text)
{
	char buf[256];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n < 0)
		return false;
	buf[n] = '\0';
	return strcmp(buf, text) == 0;
}

static int setup(void **state)
{
	struct fix *f = calloc(1, sizeof(*f));

	assert_non_null(f);
	strcpy(f->root, "/var/tmp/txfs-confine-unit.XXXXXX");
	assert_non_null(mkdtemp(f->root));
	snprintf(f->ws, sizeof(f->ws), "%s/ws", f->root);
	snprintf(f->outside, sizeof(f->outside), "%s/outside", f->root);
	snprintf(f->canary, sizeof(f->canary), "%s/canary", f->outside);
	assert_int_equal(mkdir(f->ws, 0755), 0);
	assert_int_equal(mkdir(f->outside, 0755), 0);
	assert_int_equal(write_file(f->canary, CANARY), 0);
	f->daemon = fork();
	assert_true(f->daemon >= 0);
	if (f->daemon == 0) {
		setpgid(0, 0);
		pause();
		_exit(0);
	}
	setpgid(f->daemon, f->daemon);
	*state = f;
	return 0;
}

static int rm_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	return remove(path);
}

static int teardown(void **state)
{
	struct fix *f = *state;

	kill(f->daemon, SIGKILL);
	waitpid(f->daemon, NULL, 0);
	assert_true(file_is(f->canary, CANARY));
	assert_int_equal(strncmp(f->root, "/var/tmp/txfs-confine-unit.", 27), 0);
	nftw(f->root, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	free(f);
	return 0;
}

/* Run fn(f) in a child and require it to exit 0. */
static void in_child(struct fix *f, void (*fn)(struct fix *f))
{
	int status;
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (pid == 0) {
		fn(f);
		_exit(0);
	}
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
}

/* Can this kernel enforce everything? Else the apply tests are skipped. */
static bool kernel_ready(void)
{
	int abi;

	return confine_probe(&abi) == 0;
}

static int real_abi(void)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	return v < 0 ? 0 : (int)v;
}

static void child_opts(struct fix *f, struct confine_opts *o, const char **w)
{
	w[0] = f->ws;
	*o = (struct confine_opts){ .writable = w, .n_writable = 1,
				    .daemon_pid = f->daemon };
}

/* ---- validation and probe ------------------------------------------------- */

static void test_check_opts(void **state)
{
	const char *ok[] = { "/work/ws", "/tmp" };
	const char *rel[] = { "/tmp", "ws" };
	const char *null_entry[] = { NULL };
	const char *empty[] = { "" };
	const char *globs[] = { "*.sh", "/usr/bin/cu*" };
	const char *bad_glob[] = { "curl" };
	struct confine_opts o = { .writable = ok, .n_writable = 2 };
	const char *why = NULL;

	(void)state;
	assert_int_equal(confine_check_opts(NULL, &why), -EINVAL);
	assert_non_null(why);
	assert_int_equal(confine_check_opts(&o, &why), 0);
	o.exec_deny = globs, o.n_exec_deny = 2;
	assert_int_equal(confine_check_opts(&o, NULL), 0);
	o.exec_deny = bad_glob, o.n_exec_deny = 1;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	assert_non_null(strstr(why, "curl"));
	o.exec_deny = NULL;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	o.n_exec_deny = 0;
	o.writable = rel;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	assert_non_null(strstr(why, "not absolute"));
	o.writable = null_entry, o.n_writable = 1;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	o.writable = empty;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	o.writable = NULL;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	o.n_writable = 0;
	assert_int_equal(confine_check_opts(&o, &why), 0);
	o.daemon_pid = -5;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	o.daemon_pid = getpid();
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
}

static void test_probe(void **state)
{
	int abi = -1;

	(void)state;
	assert_int_equal(confine_probe(NULL), -EINVAL);
	assert_int_equal(confine_probe(&abi), real_abi() >= 1 ? 0 : -EOPNOTSUPP);
	assert_int_equal(abi, real_abi());
	confine_test_max_landlock_abi = 0;
	assert_int_equal(confine_probe(&abi), -EOPNOTSUPP);
	assert_int_equal(abi, 0);
	confine_test_max_landlock_abi = -1;
}

/* ---- applied in children --------------------------------------------------- */

static void apply_or_die(const struct confine_opts *o)
{
	const char *why = NULL;
	int rc = confine_apply(o, &why);

	if (rc < 0)
		fprintf(stderr, "confine_apply: %s\n", why ? why : "?");
	CHECK(rc == 0);
}

/* Writes inside the workspace work; outside they fail; the canary survives. */
static void check_writes(struct fix *f)
{
	char in[160], in2[160], dir[160], out[160];
	int fd;

	snprintf(in, sizeof(in), "%s/file", f->ws);
	snprintf(in2, sizeof(in2), "%s/sub/moved", f->ws);
	snprintf(dir, sizeof(dir), "%s/sub", f->ws);
	snprintf(out, sizeof(out), "%s/new", f->outside);
	CHECK(write_file(in, "inside\n") == 0);
	CHECK(mkdir(dir, 0755) == 0);
	CHECK(rename(in, in2) == 0);
	fd = open(in2, O_RDWR | O_CLOEXEC);
	CHECK(fd >= 0 && ftruncate(fd, 1) == 0);
	close(fd);
	CHECK(unlink(in2) == 0);
	CHECK(rmdir(dir) == 0);
	fd = open("/dev/null", O_WRONLY | O_TRUNC | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
	CHECK_ERR(open(f->canary, O_WRONLY | O_CLOEXEC), EACCES);
	CHECK_ERR(open(f->canary, O_RDWR | O_APPEND | O_CLOEXEC), EACCES);
	CHECK_ERR(open(out, O_WRONLY | O_CREAT | O_CLOEXEC, 0644), EACCES);
	CHECK_ERR(unlink(f->canary), EACCES);
	CHECK_ERR(mkdir(out, 0755), EACCES);
	CHECK_ERR(symlink("/", out), EACCES);
	CHECK_ERR(mkfifo(out, 0644), EACCES);
	CHECK(rename(f->canary, in) == -1);
	CHECK(link(f->canary, in) == -1);
	CHECK(truncate(f->canary, 0) == -1);
	CHECK(open(f->canary, O_RDONLY | O_TRUNC | O_CLOEXEC) == -1 || file_is(f->canary, CANARY));
	CHECK_ERR(rmdir(f->outside), EACCES);
	CHECK(file_is(f->canary, CANARY));
}

static void check_denials(struct fix *f)
{
	/* Arguments that fail harmlessly should the filter be missing. */
	CHECK_ERR(syscall(SYS_mount, 1L, 1L, 1L, 0L, 1L), EPERM);
	CHECK_ERR(umount2(f->ws, MNT_DETACH), EPERM);
	CHECK_ERR(chroot(f->ws), EPERM);
	CHECK_ERR(syscall(SYS_clone3, NULL, 0), ENOSYS);
	CHECK_ERR(syscall(SYS_io_uring_setup, 1, NULL), ENOSYS);
	CHECK_ERR(unshare(CLONE_NEWUSER), EPERM);
	CHECK_ERR(ptrace(PTRACE_PEEKDATA, getppid(), NULL, NULL), EPERM);
	CHECK_ERR(ioctl(0, TIOCSTI, "x"), EPERM);
	CHECK_ERR(kill(-1, 0), EPERM);
	CHECK_ERR(kill(f->daemon, 0), EPERM);
	CHECK_ERR(kill(-f->daemon, 0), EPERM);
	CHECK_ERR(syscall(SYS_tgkill, f->daemon, f->daemon, 0), EPERM);
	CHECK_ERR(syscall(SYS_pidfd_open, f->daemon, 0), EPERM);
	CHECK(kill(getpid(), 0) == 0);
}

static void child_full(struct fix *f)
{
	const char *w[1];
	struct confine_opts o;
	int fd;

	child_opts(f, &o, w);
	o.no_network = true;
	apply_or_die(&o);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1);
	check_writes(f);
	check_denials(f);
	CHECK_ERR(socket(AF_INET, SOCK_STREAM, 0), EPERM);
	CHECK_ERR(socket(AF_INET6, SOCK_DGRAM, 0), EPERM);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	close(fd);
}

static void test_apply(void **state)
{
	if (!kernel_ready())
		skip();
	in_child(*state, child_full);
}

static void child_network(struct fix *f)
{
	const char *w[1];
	struct confine_opts o;
	int fd;

	child_opts(f, &o, w);
	apply_or_die(&o);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0);
	close(fd);
}

static void test_network_allowed(void **state)
{
	if (!kernel_ready())
		skip();
	in_child(*state, child_network);
}

/* Debian 12's 6.1 kernel: no TRUNCATE right, seccomp closes the paths. */
static void child_abi2(struct fix *f)
{
	struct open_how how = { .flags = O_RDONLY };
	const char *w[1];
	struct confine_opts o;

	confine_test_max_landlock_abi = 2;
	child_opts(f, &o, w);
	apply_or_die(&o);
	CHECK_ERR(truncate(f->canary, 0), EPERM);
	CHECK_ERR(open(f->canary, O_RDONLY | O_TRUNC | O_CLOEXEC), EPERM);
	CHECK_ERR(openat(AT_FDCWD, f->canary, O_ACCMODE | O_TRUNC | O_CLOEXEC), EPERM);
	CHECK_ERR(syscall(SYS_openat2, AT_FDCWD, f->canary, &how, sizeof(how)), ENOSYS);
	check_writes(f);
	check_denials(f);
	CHECK_ERR(syscall(SYS_pidfd_send_signal, -1, 0, NULL, 0), EPERM);
}

static void test_apply_abi2(void **state)
{
	if (!kernel_ready() || real_abi() < 2)
		skip();
	in_child(*state, child_abi2);
}

/* ABI 1: no REFER right, so renames across folders fail with EXDEV: stricter. */
static void child_abi1(struct fix *f)
{
	const char *w[1];
	struct confine_opts o;

	confine_test_max_landlock_abi = 1;
	child_opts(f, &o, w);
	apply_or_die(&o);
	CHECK_ERR(truncate(f->canary, 0), EPERM);
	CHECK_ERR(unlink(f->canary), EACCES);
	check_denials(f);
	CHECK(file_is(f->canary, CANARY));
}

static void test_apply_abi1(void **state)
{
	if (!kernel_ready() || real_abi() < 1)
		skip();
	in_child(*state, child_abi1);
}

/* The signal scope replaces the blanket pidfd_send_signal denial. */
static void child_scoped(struct fix *f)
{
	const char *w[1], *why = NULL;
	struct confine_opts o;
	char path[64];
	int fd;

	child_opts(f, &o, w);
	CHECK(confine_apply(&o, &why) == 0);
	CHECK(why == NULL);
	CHECK_ERR(syscall(SYS_pidfd_send_signal, -1, 0, NULL, 0), EBADF);
	snprintf(path, sizeof(path), "/proc/%d", (int)f->daemon);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_ERR(syscall(SYS_pidfd_send_signal, fd, 0, NULL, 0), EPERM);
	CHECK_ERR(kill(getppid(), 0), EPERM);
}

static void test_apply_scoped(void **state)
{
	if (!kernel_ready() || real_abi() < 6)
		skip();
	in_child(*state, child_scoped);
}

static void child_unscoped(struct fix *f)
{
	const char *w[1], *why = NULL;
	struct confine_opts o;

	confine_test_max_landlock_abi = 5;
	child_opts(f, &o, w);
	CHECK(confine_apply(&o, &why) == 0);
	CHECK(why != NULL && strstr(why, "thread") != NULL);
	CHECK_ERR(syscall(SYS_pidfd_send_signal, -1, 0, NULL, 0), EPERM);
	CHECK(kill(getppid(), 0) == 0);
	check_denials(f);
}

static void test_apply_unscoped(void **state)
{
	if (!kernel_ready() || real_abi() < 5)
		skip();
	in_child(*state, child_unscoped);
}

/* No Landlock: refused, and nothing was applied before refusing. */
static void child_refused(struct fix *f)
{
	const char *w[1], *why = NULL;
	struct confine_opts o;

	confine_test_max_landlock_abi = 0;
	child_opts(f, &o, w);
	CHECK(confine_apply(&o, &why) == -EOPNOTSUPP);
	CHECK(why != NULL && strstr(why, "Landlock") != NULL);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
	o.allow_weaker = true;
	CHECK(confine_apply(&o, &why) == 0);
	CHECK(why != NULL && strstr(why, "writes are not restricted") != NULL);
	CHECK_ERR(syscall(SYS_mount, 1L, 1L, 1L, 0L, 1L), EPERM);
	CHECK_ERR(syscall(SYS_clone3, NULL, 0), ENOSYS);
}

static void test_refuse_weaker(void **state)
{
	if (!kernel_ready())
		skip();
	in_child(*state, child_refused);
}

static void child_bad_path(struct fix *f)
{
	const char *w[2] = { f->ws, "/nonexistent/txfs-confine" }, *why = NULL;
	struct confine_opts o = { .writable = w, .n_writable = 2 };

	CHECK(confine_apply(&o, &why) == -ENOENT);
	CHECK(why != NULL && strstr(why, "/nonexistent/txfs-confine") != NULL);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
	o.daemon_pid = -1;
	CHECK(confine_apply(&o, &why) == -EINVAL);
	CHECK(prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 0);
}

static void test_bad_path(void **state)
{
	if (!kernel_ready())
		skip();
	in_child(*state, child_bad_path);
}

/* ---- hidden folders (confine_ns.c) ------------------------------------------- */

/* o.hidden = { outside }: the canary is unreadable by every name, the
 * cover cannot be removed, the workspace stays writable. */
static void check_hidden(struct fix *f)
{
	const char *w[1], *h[1] = { f->outside };
	struct confine_opts o;
	char up[200];
	DIR *d;
	int fd;

	child_opts(f, &o, w);
	o.hidden = h;
	o.n_hidden = 1;
	apply_or_die(&o);
	/* EACCES after an exec as a user; before it (here) the creator of the
	 * user namespace still has its capabilities in it: an empty folder */
	CHECK(open(f->canary, O_RDONLY | O_CLOEXEC) == -1);
	CHECK(errno == EACCES || errno == ENOENT);
	snprintf(up, sizeof(up), "%s/../outside/canary", f->ws);
	CHECK(open(up, O_RDONLY | O_CLOEXEC) == -1);
	fd = open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0 && openat(fd, "outside/canary", O_RDONLY | O_CLOEXEC) == -1);
	close(fd);
	d = opendir(f->outside);
	CHECK(d == NULL || (readdir(d) && readdir(d) && !readdir(d)));	/* . and .. */
	if (d)
		closedir(d);
	CHECK_ERR(umount2(f->outside, MNT_DETACH), EPERM);
	CHECK(write_file(f->outside, "x") < 0);
	snprintf(up, sizeof(up), "%s/file", f->ws);
	CHECK(write_file(up, "inside\n") == 0 && unlink(up) == 0);
}

static void child_hidden(struct fix *f)
{
	check_hidden(f);
}

/* The same without privileges: a user namespace (skipped where the kernel
 * allows none to an unprivileged user). */
static void child_hidden_user(struct fix *f)
{
	CHECK(chmod(f->root, 0755) == 0 && chown(f->ws, 54321, 54321) == 0);
	CHECK(setgroups(0, NULL) == 0 && setgid(54321) == 0 && setuid(54321) == 0);
	check_hidden(f);
}

static void test_hidden(void **state)
{
	struct fix *f = *state;

	if (!kernel_ready())
		skip();
	in_child(f, child_hidden);
	if (geteuid() == 0)
		in_child(f, child_hidden_user);
}

/* Without a namespace (as where user namespaces are disabled): Landlock
 * read rules hide it; the folders on the way cannot be listed; everything
 * else reads. */
static void child_hidden_landlock(struct fix *f)
{
	const char *w[1], *h[1] = { f->outside };
	struct confine_opts o;
	char link[200], via[220], in[200], buf[8];
	int fd;

	snprintf(link, sizeof(link), "%s/link", f->root);
	CHECK(symlink(f->outside, link) == 0);	/* planted before */
	confine_test_no_ns = true;
	child_opts(f, &o, w);
	o.hidden = h;
	o.n_hidden = 1;
	apply_or_die(&o);
	CHECK_ERR(open(f->canary, O_RDONLY | O_CLOEXEC), EACCES);
	CHECK_ERR(open(f->outside, O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
	snprintf(via, sizeof(via), "%s/canary", link);
	CHECK_ERR(open(via, O_RDONLY | O_CLOEXEC), EACCES);
	CHECK_ERR(open("/", O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
	CHECK_ERR(open(f->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC), EACCES);
	fd = open(f->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	CHECK_ERR(openat(fd, "outside/canary", O_RDONLY | O_CLOEXEC), EACCES);
	close(fd);
	CHECK(file_is("/proc/self/comm", "test_confine\n"));
	fd = open("/etc/passwd", O_RDONLY | O_CLOEXEC);
	CHECK(fd >= 0 && read(fd, buf, sizeof(buf)) > 0);
	close(fd);
	snprintf(in, sizeof(in), "%s/file", f->ws);
	CHECK(write_file(in, "inside\n") == 0 && file_is(in, "inside\n") && unlink(in) == 0);
	fd = open(f->ws, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	CHECK(fd >= 0);
	close(fd);
}

static void test_hidden_landlock(void **state)
{
	if (!kernel_ready())
		skip();
	in_child(*state, child_hidden_landlock);
}

static void test_hidden_opts(void **state)
{
	const char *w[] = { "/work/ws" }, *bad[] = { "/work" }, *root[] = { "/" };
	struct confine_opts o = { .writable = w, .n_writable = 1, .hidden = bad,
				  .n_hidden = 1 };
	const char *why;

	(void)state;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);	/* holds ws */
	o.hidden = root;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);
	o.n_hidden = 0;
	o.hidden = NULL;
	assert_int_equal(confine_check_opts(&o, &why), 0);
	o.n_hidden = 1;
	assert_int_equal(confine_check_opts(&o, &why), -EINVAL);	/* NULL list */
	assert_int_equal(confine_hide(NULL, 0, NULL, NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_check_opts),
		cmocka_unit_test(test_probe),
		cmocka_unit_test_setup_teardown(test_apply, setup, teardown),
		cmocka_unit_test_setup_teardown(test_network_allowed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_abi2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_abi1, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_scoped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_apply_unscoped, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuse_weaker, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_path, setup, teardown),
		cmocka_unit_test(test_hidden_opts),
		cmocka_unit_test_setup_teardown(test_hidden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hidden_landlock, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
