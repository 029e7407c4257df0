// SPDX-License-Identifier: Apache-2.0
/*
 * supervise.c - the supervisor's frame: the notify filter loaded in the
 * child, the hand-over of its listener, the thread that receives
 * notifications, the helpers that read the target race-free, and exec deny
 * by content. What is supervised and why: supervise.h. Sockets and
 * metadata: supervise_ops.c.
 *
 * Race rules every handler follows:
 *   - the target's memory is read once (process_vm_readv), into our buffers;
 *     decisions and actions use only those copies;
 *   - the target's descriptors are taken once (pidfd_getfd) and the action
 *     is performed on our copy, never by letting the kernel continue with
 *     numbers the target may have swapped (SECCOMP_USER_NOTIF_FLAG_CONTINUE
 *     only for exec, which cannot be performed on the target's behalf: that
 *     check-then-exec window is documented in txfs.policy(5));
 *   - after reading and taking, SECCOMP_IOCTL_NOTIF_ID_VALID proves the pid
 *     still named the waiting target (no pid reuse), before acting.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <seccomp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "supervise_int.h"
#include "confine.h"
#include "../../policy/policy.h"

#ifndef PIDFD_THREAD
#define PIDFD_THREAD O_EXCL
#endif
/* Newer than libseccomp 2.5.4 and the 6.1 headers; same number everywhere. */
#if defined(__x86_64__) || defined(__aarch64__)
#define NR_FCHMODAT2 452
#define NR_SETXATTRAT 463
#define NR_REMOVEXATTRAT 466
#endif

/* ---- helpers shared with supervise_ops.c ------------------------------------ */

int sup_reply(struct sup *s, uint64_t id, int64_t val, int err)
{
	struct seccomp_notif_resp r = { .id = id, .val = val, .error = err };

	if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0)
		return -errno;	/* ENOENT: the target died or was interrupted */
	return 0;
}

int sup_continue(struct sup *s, uint64_t id)
{
	struct seccomp_notif_resp r = { .id = id,
		.flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE };

	return ioctl(s->listener, SECCOMP_IOCTL_NOTIF_SEND, &r) < 0 ? -errno : 0;
}

int sup_valid(struct sup_call *c)
{
	uint64_t id = c->n.id;

	return ioctl(c->s->listener, SECCOMP_IOCTL_NOTIF_ID_VALID, &id) < 0 ? -ESRCH : 0;
}

int sup_read(struct sup_call *c, uint64_t addr, void *buf, size_t len)
{
	struct iovec l = { .iov_base = buf, .iov_len = len };
	struct iovec r = { .iov_base = (void *)(uintptr_t)addr, .iov_len = len };
	ssize_t n;

	if (len == 0)
		return 0;
	n = process_vm_readv((pid_t)c->n.pid, &l, 1, &r, 1, 0);
	if (n < 0)
		return errno == ESRCH ? -ESRCH : -EFAULT;
	return (size_t)n == len ? 0 : -EFAULT;
}

int sup_read_str(struct sup_call *c, uint64_t addr, char *buf, size_t max)
{
	size_t got = 0;

	/* Page by page: a string may end just before an unmapped page. */
	while (got < max) {
		uint64_t a = addr + got;
		size_t chunk = 4096 - (size_t)(a & 4095), i;
		int rc;

		if (chunk > max - got)
			chunk = max - got;
		rc = sup_read(c, a, buf + got, chunk);
		if (rc < 0)
			return rc;
		for (i = 0; i < chunk; i++)
			if (buf[got + i] == '\0')
				return 0;
		got += chunk;
	}
	return -ENAMETOOLONG;
}

pid_t sup_tgid(struct sup_call *c)
{
	char path[64], line[128];
	FILE *f;
	int v;

	if (c->tgid > 0)
		return c->tgid;
	snprintf(path, sizeof(path), "/proc/%u/status", c->n.pid);
	f = fopen(path, "re");
	if (!f)
		return -ESRCH;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &v) == 1 && v > 0) {
			c->tgid = (pid_t)v;
			break;
		}
	fclose(f);
	return c->tgid > 0 ? c->tgid : -ESRCH;
}

/*
 * A pidfd of the calling thread (n.pid is a thread id: the leader's only
 * when the leader made the call). PIDFD_THREAD (Linux 6.9) names exactly
 * that thread, so pidfd_getfd reads its descriptor table; a plain pidfd
 * of a thread that is not the leader fails (EINVAL before 6.15, ENOENT
 * after), which on 6.18 made every call from a worker thread fail. Before
 * 6.9 (EINVAL for the flag): the pid alone, and for a thread the thread
 * group's pidfd (threads share the table unless made without CLONE_FILES;
 * either way what is checked is what is acted on). The caller proves with
 * sup_valid that the notification is still pending after using it.
 */
static int open_pidfd(struct sup_call *c)
{
	pid_t tgid;
	int fd;

	if (c->pidfd >= 0)
		return c->pidfd;
	fd = (int)syscall(SYS_pidfd_open, (pid_t)c->n.pid, PIDFD_THREAD);
	if (fd < 0 && errno == EINVAL)
		fd = (int)syscall(SYS_pidfd_open, (pid_t)c->n.pid, 0);
	if (fd < 0 && (errno == EINVAL || errno == ENOENT)) {
		tgid = sup_tgid(c);
		if (tgid < 0)
			return tgid;
		fd = (int)syscall(SYS_pidfd_open, tgid, 0);
	}
	if (fd < 0)
		return -errno;
	c->pidfd = fd;
	return fd;
}

int sup_getfd(struct sup_call *c, uint64_t fd)
{
	int pfd = open_pidfd(c), r;

	if (pfd < 0)
		return pfd;
	if (fd > INT_MAX)
		return -EBADF;
	r = (int)syscall(SYS_pidfd_getfd, pfd, (int)fd, 0);
	if (r < 0)
		return -errno;
	(void)fcntl(r, F_SETFD, FD_CLOEXEC);
	return r;
}

/*
 * Paths that name the caller itself ("/proc/self/...", "/dev/fd/...") would
 * name the supervisor here: aim them at the caller's /proc entry. (A
 * symlink further down the path that leads into /proc/self still resolves
 * in our context; what it yields is checked like anything else.)
 */
static const char *own_proc(struct sup_call *c, const char *path, char *buf,
			    size_t size)
{
	/* /proc/self is the thread group (its leader's entry), thread-self
	 * the calling thread: /proc/TGID/task/TID. */
	static const struct { const char *prefix; const char *sub; bool thread; } map[] = {
		{ "/proc/self/", "", false }, { "/proc/thread-self/", "", true },
		{ "/dev/fd/", "fd/", false }, { "/proc/self", "", false },
		{ "/proc/thread-self", "", true }, { "/dev/fd", "fd", false },
	};
	pid_t tgid;
	size_t i, n;
	int len;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		n = strlen(map[i].prefix);
		if (strncmp(path, map[i].prefix, n) != 0 ||
		    (path[n] != '\0' && map[i].prefix[n - 1] != '/'))
			continue;
		tgid = sup_tgid(c);
		if (tgid < 0)
			return NULL;
		if (map[i].thread)
			len = snprintf(buf, size, "/proc/%d/task/%u/%s%s", (int)tgid,
				       c->n.pid, map[i].sub, path + n);
		else
			len = snprintf(buf, size, "/proc/%d/%s%s", (int)tgid, map[i].sub,
				       path + n);
		if (len < 0 || (size_t)len >= size)
			return NULL;
		return buf;
	}
	return path;
}

int sup_open_at(struct sup_call *c, uint64_t dirfd, const char *path, int flags)
{
	char cwd[64], abs[PATH_MAX + 64];
	int base, fd;

	if (path[0] == '/') {
		path = own_proc(c, path, abs, sizeof(abs));
		if (!path)
			return -ENAMETOOLONG;	/* or the caller is gone */
		fd = openat(AT_FDCWD, path, flags | O_CLOEXEC);
		return fd < 0 ? -errno : fd;
	}
	if ((int)dirfd == AT_FDCWD) {
		/* the calling thread's folder (a thread made without
		 * CLONE_FS has its own): /proc/TID names that thread */
		snprintf(cwd, sizeof(cwd), "/proc/%u/cwd", c->n.pid);
		base = open(cwd, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (base < 0)
			return -errno;
	} else {
		base = sup_getfd(c, (uint32_t)dirfd);
		if (base < 0)
			return base;
	}
	fd = openat(base, path, flags | O_CLOEXEC);
	if (fd < 0)
		fd = -errno;
	close(base);
	return fd;
}

int sup_fd_path(int fd, char *buf, size_t size)
{
	char link[64];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

bool sup_beneath(const char *path, const char *root)
{
	size_t n = strlen(root);

	if (n == 1 && root[0] == '/')
		return path[0] == '/';
	return strncmp(path, root, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

int sup_veto(struct sup *s, struct sup_call *c, const char *what,
	     const char *path, const char *why)
{
	struct audit_caller who = { .pid = (pid_t)c->n.pid, .uid = getuid() };
	pid_t tgid = sup_tgid(c);
	char op[64], thr[32] = "";

	atomic_fetch_add(&s->refused, 1);
	if (tgid > 0 && tgid != (pid_t)c->n.pid) {	/* the process, and which thread */
		who.pid = tgid;
		snprintf(thr, sizeof(thr), " thread %u", c->n.pid);
	}
	/* op: "run-connect", "run-exec", "run-metadata" (the first word). */
	snprintf(op, sizeof(op), "run-%.*s", (int)strcspn(what, " "), what);
	(void)audit_veto(s->audit, op, path, NULL, EACCES, &who);
	if (!s->o.quiet) {
		pthread_mutex_lock(&s->lock);
		fprintf(stderr, "txfs: run: refused %s %s (pid %d%s): %s\n", what,
			path, (int)who.pid, thr, why);
		pthread_mutex_unlock(&s->lock);
	}
	return -EACCES;
}

/* Parent pid from /proc/PID/stat, or -1. */
static pid_t parent_of(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd, pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	if (!p || sscanf(p + 1, " %*c %d", &pp) != 1)
		return -1;
	return pp;
}

/* ---- the filter, in the child ----------------------------------------------------- */

static const int meta_calls[] = {
	SCMP_SYS(chmod), SCMP_SYS(fchmod), SCMP_SYS(fchmodat), SCMP_SYS(chown),
	SCMP_SYS(fchown), SCMP_SYS(lchown), SCMP_SYS(fchownat), SCMP_SYS(utime),
	SCMP_SYS(utimes), SCMP_SYS(futimesat), SCMP_SYS(utimensat),
	SCMP_SYS(setxattr), SCMP_SYS(lsetxattr), SCMP_SYS(fsetxattr),
	SCMP_SYS(removexattr), SCMP_SYS(lremovexattr), SCMP_SYS(fremovexattr),
};

/* Inode flags, generation, project attributes (the kernel compares the
 * request as an unsigned int: low 32 bits). */
static const scmp_datum_t flag_ioctls[] = {
	(uint32_t)FS_IOC_SETFLAGS, (uint32_t)FS_IOC_SETVERSION, (uint32_t)FS_IOC_FSSETXATTR,
};

static int add_rules(scmp_filter_ctx ctx, const struct sup *s, uint32_t act)
{
	static const int nosys[] = {
#ifdef NR_FCHMODAT2
		NR_FCHMODAT2, NR_SETXATTRAT, NR_REMOVEXATTRAT,
#endif
		-1,	/* end */
	};
	size_t i;
	int rc = 0;

	for (i = 0; i < sizeof(meta_calls) / sizeof(meta_calls[0]) && rc == 0; i++)
		if (meta_calls[i] >= 0)
			rc = seccomp_rule_add(ctx, act, meta_calls[i], 0);
	for (i = 0; nosys[i] >= 0 && rc == 0; i++)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), nosys[i], 0);
	for (i = 0; i < sizeof(flag_ioctls) / sizeof(flag_ioctls[0]) && rc == 0; i++)
		rc = seccomp_rule_add(ctx, act, SCMP_SYS(ioctl), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, 0xffffffffULL, flag_ioctls[i]));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, act, SCMP_SYS(connect), 0);
	if (rc == 0)	/* without an address: nothing to decide */
		rc = seccomp_rule_add(ctx, act, SCMP_SYS(sendto), 1, SCMP_A4(SCMP_CMP_NE, 0));
	/* The address of sendmsg is in memory: every call (not in the fallback,
	 * where refusing it would refuse all sendmsg). */
	if (rc == 0 && act == SCMP_ACT_NOTIFY)
		rc = seccomp_rule_add(ctx, act, SCMP_SYS(sendmsg), 0);
	if (rc == 0)	/* the same; ENOSYS in the fallback */
		rc = seccomp_rule_add(ctx, act == SCMP_ACT_NOTIFY ? act : SCMP_ACT_ERRNO(ENOSYS),
				      SCMP_SYS(sendmmsg), 0);
	if (rc == 0 && act == SCMP_ACT_NOTIFY && s->nhashes > 0) {
		rc = seccomp_rule_add(ctx, act, SCMP_SYS(execve), 0);
		if (rc == 0)
			rc = seccomp_rule_add(ctx, act, SCMP_SYS(execveat), 0);
		if (rc == 0)	/* code mapped from a file (supervise_map.c) */
			rc = sup_map_rules(ctx);
	}
	return rc;
}

int sup_supported(void)
{
	uint32_t action = SECCOMP_RET_USER_NOTIF;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) < 0)
		return 0;
	/* pidfd_getfd (5.6): EBADF for a bad pidfd, ENOSYS when missing. */
	if (syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 && errno == ENOSYS)
		return 0;
	return 1;
}

/* The hand-over channels are socket pairs so that a peer gone gives EPIPE,
 * never a SIGPIPE that would kill txfs run before it rolls back. */
static int write_all(int fd, const void *p, size_t n)
{
	ssize_t w;

	do
		w = send(fd, p, n, MSG_NOSIGNAL);
	while (w < 0 && errno == EINTR);
	return w == (ssize_t)n ? 0 : -EIO;
}

/*
 * Load ctx with a listener, waiting killably once a notification is
 * received (SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, Linux 5.19): otherwise
 * a signal during a call the supervisor has already performed (a send)
 * would make the kernel restart it and the supervisor perform it twice.
 * libseccomp 2.5.4 cannot set that flag: the program is exported and
 * loaded here. Returns the listener or -errno.
 */
static int load_notify(scmp_filter_ctx ctx)
{
	struct sock_fprog prog;
	void *buf = NULL;
	off_t size;
	int mfd = memfd_create("txfs-sup-bpf", MFD_CLOEXEC), fd = -ENOMEM, rc;

	if (mfd < 0)
		return -errno;
	rc = seccomp_export_bpf(ctx, mfd);
	size = rc == 0 ? lseek(mfd, 0, SEEK_END) : -1;
	if (size > 0 && size % 8 == 0 && size <= 8 * 65535)
		buf = malloc((size_t)size);
	if (buf && pread(mfd, buf, (size_t)size, 0) == size) {
		prog.len = (unsigned short)(size / 8);
		prog.filter = buf;
		fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
				  SECCOMP_FILTER_FLAG_NEW_LISTENER |
				  SECCOMP_FILTER_FLAG_WAIT_KILLABLE_RECV, &prog);
		if (fd < 0 && errno == EINVAL)	/* before 5.19 */
			fd = (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER,
					  SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
		if (fd < 0)
			fd = -errno;
	} else if (rc < 0) {
		fd = rc;
	}
	free(buf);
	close(mfd);
	return fd;
}

int sup_child(struct sup *s)
{
	int report_fd = s->pipes[1], ack_fd = s->pipes[2];
	bool notify = sup_supported() == 1;
	scmp_filter_ctx ctx;
	int rc, fd[3] = { -1, -1, 0 };	/* listener, helper, its pid */
	char ack;

	close(s->pipes[0]);
	close(s->pipes[3]);
	if (notify && s->landlock_abi >= 6) {
		fd[1] = sup_helper_start(&fd[2]);
		if (fd[1] < 0)
			return fd[1];
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (!ctx)
		return -ENOMEM;
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	/* As confine.c's filter: foreign ABIs fail with EPERM (libseccomp's
	 * default, KILL, would take precedence over that filter's EPERM). */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc == 0)
		rc = add_rules(ctx, s, notify ? SCMP_ACT_NOTIFY : SCMP_ACT_ERRNO(EACCES));
	if (rc == 0 && notify) {
		fd[0] = load_notify(ctx);
		rc = fd[0] < 0 ? fd[0] : 0;
	} else if (rc == 0) {
		rc = seccomp_load(ctx);
	}
	seccomp_release(ctx);
	if (rc == 0)
		rc = write_all(report_fd, fd, sizeof(fd));
	close(report_fd);
	/* Read is not filtered: no deadlock while the parent takes the fds. */
	if (rc == 0 && fd[0] >= 0 && read(ack_fd, &ack, 1) != 1)
		rc = -EPIPE;
	close(ack_fd);
	if (fd[0] >= 0)
		close(fd[0]);
	if (fd[1] >= 0)
		close(fd[1]);
	return rc;
}

/* ---- the thread, in the parent ---------------------------------------------------- */

static void handle(struct sup *s, struct sup_call *c)
{
	int rc;

	atomic_fetch_add(&s->notifications, 1);
	if (c->n.data.nr == SCMP_SYS(execve) || c->n.data.nr == SCMP_SYS(execveat))
		rc = sup_handle_exec(c);
	else if ((rc = sup_handle_map(c)) == 0 && (rc = sup_handle_socket(c)) == 0 &&
		 (rc = sup_handle_meta(c)) == 0 && (rc = sup_handle_ioctl(c)) == 0)
		rc = -ENOSYS;
	if (rc < 0)
		(void)sup_reply(s, c->n.id, 0, rc);
	if (c->pidfd >= 0)
		close(c->pidfd);
}

static void *loop(void *arg)
{
	struct sup *s = arg;
	struct pollfd p[2] = { { .fd = s->listener, .events = POLLIN },
			       { .fd = s->stop_pipe[0], .events = POLLIN } };

	for (;;) {
		struct sup_call c = { .s = s, .pidfd = -1 };

		if (poll(p, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN)) {
			if (p[0].revents)	/* POLLHUP: no target left */
				p[0].fd = -1;
			continue;
		}
		if (ioctl(s->listener, SECCOMP_IOCTL_NOTIF_RECV, &c.n) < 0)
			continue;	/* ENOENT: the target went away */
		handle(s, &c);
	}
	return NULL;
}

/* The helper's pid, as reported by the child: a pidfd on it once it is
 * checked to be our child (CLONE_PARENT), so that sup_free can reap it. */
static void take_helper(struct sup *s, pid_t pid)
{
	int pfd;

	if (pid <= 0)
		return;
	pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pfd >= 0 && parent_of(pid) == getpid()) {
		s->helper_pidfd = pfd;
		return;
	}
	if (pfd >= 0)
		close(pfd);	/* not ours: the process-tree stop finds it */
}

/* After the command: reap the helper (killed by sup_free), so no
 * descendant of ours is left for the tree walk; given up after 1 s (the
 * walk then kills and reaps it). */
static void reap_helper(struct sup *s)
{
	struct pollfd p = { .fd = s->helper_pidfd, .events = POLLIN };
	siginfo_t si;

	while (poll(&p, 1, 1000) < 0 && errno == EINTR)
		;
	(void)waitid((idtype_t)P_PIDFD, (id_t)s->helper_pidfd, &si,
		     WEXITED | WNOHANG);
	close(s->helper_pidfd);
	s->helper_pidfd = -1;
}

int sup_attach(struct sup *s, pid_t child)
{
	int fd[3] = { -1, -1, 0 }, pfd = -1, rc = 0;
	int report_fd = s->pipes[0], ack_fd = s->pipes[3];
	ssize_t n;

	close(s->pipes[1]);
	close(s->pipes[2]);
	s->pipes[0] = s->pipes[1] = s->pipes[2] = s->pipes[3] = -1;

	s->root = child;
	do
		n = read(report_fd, fd, sizeof(fd));
	while (n < 0 && errno == EINTR);
	close(report_fd);
	if (n != (ssize_t)sizeof(fd)) {
		rc = -EPIPE;	/* the child failed and said why */
		goto out;
	}
	take_helper(s, fd[2]);
	if (fd[0] < 0)
		goto out;	/* the refusing fallback filter */
	pfd = (int)syscall(SYS_pidfd_open, child, 0);
	if (pfd < 0) {
		rc = -errno;
		goto out;
	}
	s->listener = (int)syscall(SYS_pidfd_getfd, pfd, fd[0], 0);
	if (s->listener >= 0 && fd[1] >= 0)
		s->helper = (int)syscall(SYS_pidfd_getfd, pfd, fd[1], 0);
	if (s->listener < 0 || (fd[1] >= 0 && s->helper < 0)) {
		rc = -errno;
		goto out;
	}
	(void)fcntl(s->listener, F_SETFD, FD_CLOEXEC);
	if (s->helper >= 0)
		(void)fcntl(s->helper, F_SETFD, FD_CLOEXEC);
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->stop_pipe) < 0) {
		rc = -errno;
		goto out;
	}
	{
		/* our threads take no signal meant for the caller: one
		 * taken here would not wake its waitpid (spawn.c) */
		static const int faults[] = { SIGSEGV, SIGBUS, SIGFPE,
					      SIGILL, SIGTRAP, SIGABRT, SIGSYS };
		sigset_t mask, old;

		sigfillset(&mask);
		for (size_t i = 0; i < sizeof(faults) / sizeof(faults[0]); i++)
			sigdelset(&mask, faults[i]);	/* stay deliverable */
		pthread_sigmask(SIG_BLOCK, &mask, &old);
		rc = -pthread_create(&s->thread, NULL, loop, s);
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	s->started = rc == 0;
out:
	if (pfd >= 0)
		close(pfd);
	/* Without the ack the child exits: nothing runs unsupervised. */
	if (rc == 0)
		rc = write_all(ack_fd, "k", 1);
	close(ack_fd);
	return rc;
}

/* ---- life cycle ---------------------------------------------------------------------- */

/* Take ownership of p (freed by sup_free); NULL stays NULL. */
static void *own(struct sup *s, void *p)
{
	void **v;

	if (!p)
		return NULL;
	v = realloc(s->own, (s->nown + 1) * sizeof(*v));
	if (!v) {
		free(p);
		return NULL;
	}
	s->own = v;
	s->own[s->nown++] = p;
	return p;
}

static const char *keep(struct sup *s, const char *str)
{
	return str ? own(s, strdup(str)) : NULL;
}

/* A copy of n strings; roots made canonical when they exist. */
static const char *const *keep_list(struct sup *s, const char *const *in, size_t n,
				    bool canonical, int *rc)
{
	const char **out = own(s, calloc(n + 1, sizeof(*out)));
	char buf[PATH_MAX];
	size_t i;

	if (!out) {
		*rc = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		const char *src = canonical && realpath(in[i], buf) ? buf : in[i];

		out[i] = keep(s, src);
		if (!out[i])
			*rc = -ENOMEM;
	}
	return out;
}

/* The daemon's audit log, appended to (O_APPEND, one write a record) beside
 * the daemon; not fatal when it cannot be opened. */
static void open_audit(struct sup *s, const char *state)
{
	int dfd = open(state, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0)
		return;
	if (audit_open(dfd, "audit.log", 0, &s->audit) < 0)
		s->audit = NULL;
	close(dfd);
}

int sup_new(const struct sup_opts *o, struct sup **out)
{
	struct sup *s = calloc(1, sizeof(*s));
	char buf[PATH_MAX];
	int rc = 0;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	s->listener = s->stop_pipe[0] = s->stop_pipe[1] = s->helper = -1;
	s->helper_pidfd = -1;
	s->pipes[0] = s->pipes[1] = s->pipes[2] = s->pipes[3] = -1;
	atomic_init(&s->refs, 1);	/* the owner's; sup_free drops it */
	pthread_mutex_init(&s->lock, NULL);
	pthread_mutex_init(&s->helper_lock, NULL);
	s->o = *o;
	s->o.workspace = keep(s, realpath(o->workspace, buf) ? buf : o->workspace);
	s->o.state = NULL;	/* used in sup_new only */
	s->o.writable = keep_list(s, o->writable, o->n_writable, true, &rc);
	s->o.connect_allow = keep_list(s, o->connect_allow, o->n_connect_allow, false, &rc);
	s->o.exec_deny = keep_list(s, o->exec_deny, o->n_exec_deny, false, &rc);
	s->o.hidden = keep_list(s, o->hidden, o->n_hidden, true, &rc);
	if (rc == 0 && !s->o.workspace)
		rc = -ENOMEM;
	if (rc == 0)
		rc = sup_exec_load(s);
	if (rc == 0 && o->state)
		open_audit(s, o->state);
	if (rc == 0 && (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->pipes) < 0 ||
			socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, s->pipes + 2) < 0))
		rc = -errno;
	if (rc == 0)
		(void)confine_probe(&s->landlock_abi);
	if (rc < 0) {
		sup_free(s, NULL);
		return rc;
	}
	*out = s;
	return 0;
}

void sup_free(struct sup *s, struct sup_stats *st)
{
	if (!s)
		return;
	/* The command is done: the helper may go (a connect still asked by
	 * a leftover of the command fails: ECONNREFUSED). Killed first, it
	 * dies while the thread stops; reaped below. */
	if (s->helper_pidfd >= 0)
		(void)syscall(SYS_pidfd_send_signal, s->helper_pidfd, SIGKILL, NULL, 0);
	if (s->started) {
		(void)write_all(s->stop_pipe[1], "x", 1);
		pthread_join(s->thread, NULL);
	}
	if (st) {
		st->notifications = atomic_load(&s->notifications);
		st->refused = atomic_load(&s->refused);
	}
	/* Detached workers (blocking connects) may still use the listener
	 * and s: the last of them frees it (sup_unref), or the process's exit
	 * ends them (their stacks still hold s, so no leak is reported). */
	sup_unref(s);
}

void sup_ref(struct sup *s)
{
	atomic_fetch_add(&s->refs, 1);
}

void sup_unref(struct sup *s)
{
	size_t i;

	if (atomic_fetch_sub(&s->refs, 1) != 1)
		return;
	if (s->listener >= 0)
		close(s->listener);
	if (s->helper >= 0)
		close(s->helper);	/* the helper exits */
	if (s->helper_pidfd >= 0)
		reap_helper(s);
	for (i = 0; i < 2; i++)
		if (s->stop_pipe[i] >= 0)
			close(s->stop_pipe[i]);
	for (i = 0; i < 4; i++)
		if (s->pipes[i] >= 0)
			close(s->pipes[i]);
	for (i = 0; i < s->nfiles; i++)
		free(s->files[i].path);
	for (i = 0; i < s->nown; i++)
		free(s->own[i]);
	free(s->own);
	free(s->files);
	free(s->hashes);
	pthread_mutex_destroy(&s->lock);
	pthread_mutex_destroy(&s->helper_lock);
	audit_close(s->audit);
	free(s);
}
