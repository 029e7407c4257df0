// SPDX-License-Identifier: Apache-2.0
/*
 * spawn.c - run one command confined (see spawn.h): the child's side
 * confines and execs; the parent's side supervises and waits.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "spawn.h"

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
	if (s->deathsig) {	/* if the caller is killed outright */
		prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
		if (getppid() != parent)	/* it died before the prctl */
			_exit(126);
	}
	if (chdir(s->dir)) {
		cli_err(errno, "%s: cd %s", s->who, s->dir);
		_exit(126);
	}
	rc = confine_apply(&s->co, &why);
	if (rc) {
		cli_err(0, "%s: cannot confine the command: %s%s", s->who,
			why ? why : strerror(-rc),
			s->co.allow_weaker ? "" : " (--allow-weaker runs it "
			"with what the kernel can enforce)");
		_exit(126);
	}
	if (why && !s->quiet)
		fprintf(stderr, "txfs: %s: note: %s\n", s->who, why);
	if ((rc = sup_child(sup))) {
		cli_err(rc, "%s: cannot start the supervisor", s->who);
		_exit(126);
	}
	if (shell)
		execl("/bin/sh", "sh", "-c", argv[0], (char *)NULL);
	else
		execvp(argv[0], argv);
	cli_err(errno, "%s: %s", s->who, argv[0]);
	_exit(127);
}

/* Wait for pid; the caller's signals stop its group (TERM, then KILL). */
static int wait_cmd(const struct spawn *s, pid_t pid)
{
	int status = 0, sent = 0;
	bool woken = false;

	for (;;) {
		pid_t w;

		/* a signal taken before the wait (while the supervisor
		 * started) counts as well as one that interrupts it */
		if (*s->got_signal && sent < 2 && (woken || !sent)) {
			kill(-pid, sent ? SIGKILL : SIGTERM);
			if (!sent++)
				alarm(5);
		}
		w = waitpid(pid, &status, 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return 126 << 8;
		woken = true;
	}
	alarm(0);
	return status;
}

int spawn_wait(const struct spawn *s, char *const *argv, bool shell)
{
	struct sup *sup = NULL;
	struct sup_stats st;
	pid_t pid, parent = getpid();
	int status, rc;

	if ((rc = sup_new(s->so, &sup))) {
		cli_err(rc, "%s: supervisor", s->who);
		return 126;
	}
	pid = fork();
	if (pid < 0) {
		sup_free(sup, NULL);
		return 126;
	}
	if (pid == 0)
		child(s, argv, shell, sup, parent);
	rc = sup_attach(sup, pid);
	if (rc && rc != -EPIPE)	/* EPIPE: the child said why */
		cli_err(rc, "%s: supervisor (the command was not run)", s->who);
	setpgid(pid, pid);
	status = wait_cmd(s, pid);
	sup_free(sup, &st);
	if (st.refused && !s->quiet)
		fprintf(stderr, "txfs: %s: the supervisor refused %lu of %lu "
			"calls (in the audit log: txfs log)\n", s->who,
			st.refused, st.notifications);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
