// SPDX-License-Identifier: Apache-2.0
/*
 * spawn.c - run one command confined (see spawn.h): the child's side
 * confines and execs; the parent's side supervises and waits.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "spawn.h"

/* "txfs: what failed[: strerror(err)]" on stderr (the sandbox calls nothing
 * of the command line, so it has its own). */
__attribute__((format(printf, 2, 3)))
static void sandbox_err(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("txfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
}

/* Close every descriptor from lo up to hi (inclusive). */
static void close_from(unsigned lo, unsigned hi)
{
	struct rlimit rl;
	unsigned fd, max = 65536;

	if (lo > hi)
		return;
	if (close_range(lo, hi, 0) == 0)
		return;
	/* before Linux 5.9 */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < max)
		max = (unsigned)rl.rlim_cur;
	for (fd = lo; fd <= hi && fd < max; fd++)
		(void)close((int)fd);
}

/* In the child, right before exec: keep 0, 1, 2 and the --pass-fd ones. */
static void close_inherited(const struct spawn *s)
{
	unsigned lo = 3;
	size_t i;

	for (i = 0; i < s->n_pass_fds; i++) {
		unsigned fd = (unsigned)s->pass_fds[i];

		if (fd > lo)
			close_from(lo, fd - 1);
		(void)fcntl((int)fd, F_SETFD, 0);	/* passed: not close-on-exec */
		lo = fd + 1;
	}
	close_from(lo, ~0U);
}

/* Why fd may not reach the command, or NULL: a folder (it may be the real
 * directory under the mount: openat() below it bypasses the mount), or an
 * O_PATH descriptor (reopened through /proc/self/fd). Closed: NULL. */
static const char *fd_refused(int fd)
{
	struct stat st;
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0)
		return NULL;
	if (fl & O_PATH)
		return "an O_PATH descriptor";
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode))
		return "a folder (a descriptor on the real directory would reach "
		       "past the mount)";
	return NULL;
}

int spawn_pass_fd_add(int *fds, size_t *n, const char *arg, const char *who)
{
	const char *why;
	char *end;
	long v;
	size_t i;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v < 3 || v > INT_MAX) {
		sandbox_err(0, "%s: --pass-fd %s: not a descriptor number from 3 on "
			"(0, 1 and 2 are always passed)", who, arg);
		return 2;
	}
	if (fcntl((int)v, F_GETFD) < 0) {
		sandbox_err(errno, "%s: --pass-fd %ld", who, v);
		return 2;
	}
	why = fd_refused((int)v);
	if (why) {
		sandbox_err(0, "%s: --pass-fd %ld: refused: it is %s", who, v, why);
		return 2;
	}
	for (i = 0; i < *n && fds[i] < v; i++)
		;
	if (i < *n && fds[i] == v)
		return 0;
	if (*n == SPAWN_MAX_PASS_FD) {
		sandbox_err(0, "%s: more than %d --pass-fd", who, SPAWN_MAX_PASS_FD);
		return 2;
	}
	memmove(fds + i + 1, fds + i, (*n - i) * sizeof(*fds));
	fds[i] = (int)v;
	(*n)++;
	return 0;
}

bool ignore_sigpipe(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;

	if (sigaction(SIGPIPE, &ign, &old))
		return false;
	return old.sa_handler == SIG_IGN;
}

/* The child: never returns. parent: the caller, for the death signal. */
static void child(const struct spawn *s, char *const *argv, bool shell,
		  struct sup *sup, pid_t parent)
{
	const char *why = NULL;
	int rc;

	setpgid(0, 0);
	proctree_enter(s->pt);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGALRM, SIG_DFL);
	signal(SIGPIPE, s->sigpipe_ign ? SIG_IGN : SIG_DFL);
	if (s->lw)
		limwatch_child(s->lw);
	if (s->deathsig) {	/* if the caller is killed outright */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)	/* it died before the prctl */
			_exit(126);
	}
	if (chdir(s->dir)) {
		sandbox_err(errno, "%s: cd %s", s->who, s->dir);
		_exit(126);
	}
	rc = confine_apply(&s->co, &why);
	if (rc) {
		sandbox_err(0, "%s: cannot confine the command: %s%s", s->who,
			why ? why : strerror(-rc),
			s->co.allow_weaker ? "" : " (--allow-weaker runs it "
			"with what the kernel can enforce)");
		_exit(126);
	}
	if (why && !s->quiet)
		fprintf(stderr, "txfs: %s: note: %s\n", s->who, why);
	if ((rc = sup_child(sup))) {
		sandbox_err(rc, "%s: cannot start the supervisor", s->who);
		_exit(126);
	}
	close_inherited(s);
	if (shell)
		execl("/bin/sh", "sh", "-c", argv[0], (char *)NULL);
	else
		execvp(argv[0], argv);
	sandbox_err(errno, "%s: %s", s->who, argv[0]);
	_exit(127);
}

/* A limit is exceeded: the whole tree at once (the cgroup, else the
 * command's group; the caller's proctree_stop_all takes what fled it). */
static void stop_for_limit(const struct spawn *s, pid_t pid)
{
	proctree_cg_kill(s->pt);
	kill(-pid, SIGKILL);
	kill(pid, SIGKILL);
}

/* Sleep until pid's pidfd is readable, a signal or ms pass. True when
 * a signal woke it. */
static bool sleep_on(int pfd, int ms)
{
	struct pollfd p = { .fd = pfd, .events = POLLIN };

	return poll(pfd >= 0 ? &p : NULL, pfd >= 0 ? 1 : 0, ms) < 0 &&
	       errno == EINTR;
}

/* waitpid(pid, &status, hang ? 0 : WNOHANG) that leaves pid unreaped
 * (WNOWAIT): its pid and group id stay ours until proctree_stop_all()
 * has killed the group (proctree.h). pid, 0 (still running) or -1. */
static pid_t wait_keep(pid_t pid, int *status, bool hang)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	if (waitid(P_PID, (id_t)pid, &si,
		   WEXITED | WNOWAIT | (hang ? 0 : WNOHANG)) < 0)
		return -1;
	if (si.si_pid != pid)
		return 0;
	switch (si.si_code) {
	case CLD_EXITED: *status = (si.si_status & 0xff) << 8; break;
	case CLD_DUMPED: *status = (si.si_status & 0x7f) | 0x80; break;
	default: *status = si.si_status & 0x7f; break;
	}
	return pid;
}

/* Wait for pid; the caller's signals stop its group (TERM, then KILL);
 * the limits are sampled while it runs. */
static int wait_cmd(const struct spawn *s, pid_t pid)
{
	int status = 0, sent = 0, pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	bool woken = false;

	for (;;) {
		pid_t w;
		int due = s->lw ? limwatch_due(s->lw) : -1;

		/* a signal taken before the wait (while the supervisor
		 * started) counts as well as one that interrupts it */
		if (*s->got_signal && sent < 2 && (woken || !sent)) {
			kill(-pid, sent ? SIGKILL : SIGTERM);
			if (!sent++)
				alarm(5);
		}
		if (due == 0 && limwatch_check(s->lw, false))
			stop_for_limit(s, pid);
		if (due >= 0 && s->lw->hit < 0) {
			w = wait_keep(pid, &status, false);
			if (w == 0) {
				woken = sleep_on(pfd, due) || woken;
				continue;
			}
		} else {
			w = wait_keep(pid, &status, true);
		}
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			status = 126 << 8;
			break;
		}
		woken = true;
	}
	alarm(0);
	if (pfd >= 0)
		close(pfd);
	if (s->lw && s->lw->hit < 0 && limwatch_exited(s->lw, status))
		stop_for_limit(s, pid);
	return status;
}

int spawn_wait(const struct spawn *s, char *const *argv, bool shell)
{
	struct sup *sup = NULL;
	struct sup_stats st;
	static const char *const names[] = { "standard input", "standard output",
					      "standard error" };
	pid_t pid, parent = getpid();
	const char *why;
	int status, rc, fd;

	for (fd = 0; fd < 3; fd++)
		if ((why = fd_refused(fd))) {
			sandbox_err(0, "%s: %s is %s: refused (the command was not run)",
				s->who, names[fd], why);
			return 126;
		}
	if ((rc = sup_new(s->so, &sup))) {
		sandbox_err(rc, "%s: supervisor", s->who);
		return 126;
	}
	pid = fork();
	if (pid < 0) {
		sup_free(sup, NULL);
		return 126;
	}
	if (pid == 0)
		child(s, argv, shell, sup, parent);
	setpgid(pid, pid);	/* the child does too: set before started() */
	if (s->started && s->started(s->started_arg, pid)) {
		kill(pid, SIGKILL);	/* it waits for the supervisor's ack */
		waitpid(pid, NULL, 0);
		sup_free(sup, NULL);
		return 126;
	}
	s->pt->cmd = pid;	/* unreaped until proctree_stop_all() */
	rc = sup_attach(sup, pid);
	if (rc && rc != -EPIPE)	/* EPIPE: the child said why */
		sandbox_err(rc, "%s: supervisor (the command was not run)", s->who);
	status = wait_cmd(s, pid);
	sup_free(sup, &st);
	if (st.refused && !s->quiet)
		fprintf(stderr, "txfs: %s: the supervisor refused %lu of %lu "
			"calls (in the audit log: txfs log)\n", s->who,
			st.refused, st.notifications);
	if (s->lw && s->lw->hit >= 0)
		return LIMIT_EXIT;
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
