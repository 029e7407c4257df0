/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spawn.h - run one command confined, the one way `txfs run` and
 * `txfs exec` both do it.
 *
 * The child: its own process group, the command's cgroup (proctree.h),
 * default SIGINT/SIGTERM/SIGHUP, its working folder, confine_apply()
 * (Landlock and seccomp, confine.h), the supervisor's notify filter handed
 * to the parent (supervise.h), then exec. The parent: the supervisor's
 * thread, and a wait for the command; a signal the caller's handler
 * recorded in *got_signal sends SIGTERM to the command's group, and
 * SIGKILL once it has asked 5 s later (SIGALRM) or on a second signal.
 * What the command left behind is the caller's to stop (proctree).
 * With lw, the parent samples the command's use while it waits
 * (reslimit.h); past a limit it kills the cgroup and the command's group
 * at once, and spawn_wait returns LIMIT_EXIT with lw->hit set.
 *
 * Descriptors: the command gets its standard input, output and error and
 * the --pass-fd descriptors, nothing else the caller had open (close_range
 * in the child, issue 23.1: an inherited descriptor is not checked by
 * Landlock, which sees only new opens, so `exec 7>>~/outside/f` or a
 * folder descriptor on the real directory under the mount would cross the
 * sandbox). A standard descriptor or --pass-fd that is a folder, or an
 * O_PATH descriptor, is refused before anything runs; one that is a file
 * opened for writing outside stays writable by the command (that is what
 * a redirection asks for).
 */
#ifndef TXFS_SPAWN_H
#define TXFS_SPAWN_H

#include <signal.h>
#include <stdbool.h>

#include "confine.h"
#include "reslimit.h"
#include "proctree.h"
#include "supervise.h"

struct spawn {
	const char *who;		/* "run" or "exec": the error prefix */
	const char *dir;		/* the command's working folder */
	struct confine_opts co;		/* what confine_apply() enforces */
	const struct sup_opts *so;	/* the supervisor's options */
	struct proctree *pt;		/* the command's cgroup, if any; its
					 * cmd is set to the command's pid */
	struct limwatch *lw;		/* its limits (reslimit.h), or NULL */
	bool quiet;			/* no notes nor refusal counts (--json) */
	bool deathsig;			/* the command dies with its caller */
	bool sigpipe_ign;		/* the caller's caller ignored SIGPIPE:
					 * the command gets that back (else
					 * the default), as txfs run and txfs
					 * exec ignore it for themselves */
	volatile sig_atomic_t *got_signal; /* set by the caller's handlers */
	const int *pass_fds;		/* ascending, >= 3: kept open for CMD */
	size_t n_pass_fds;
	/* When set: called in the parent with the command's pid (the leader
	 * of its process group, set before the call) before the command may
	 * run; non-zero: it is killed and not run (126). */
	int (*started)(void *arg, pid_t pid);
	void *started_arg;
};

#define SPAWN_MAX_PASS_FD 16

/*
 * --pass-fd ARG: add the descriptor ARG (a number >= 3, open, neither a
 * folder nor O_PATH) to fds (ascending, no duplicates, at most
 * SPAWN_MAX_PASS_FD). Returns 0, or 2 after saying why ("txfs: WHO: ...").
 */
int spawn_pass_fd_add(int *fds, size_t *n, const char *arg, const char *who);

/*
 * Run argv (with shell: `sh -c argv[0]`) as described above and wait for
 * it. The caller handles SIGALRM (without SA_RESTART) like its other
 * signals. Returns the command's exit status, 128+N when signal N ended
 * it, 126 when it could not be started or confined, 127 when not found,
 * LIMIT_EXIT (124) when a limit of lw stopped it.
 */
int spawn_wait(const struct spawn *s, char *const *argv, bool shell);

/* Ignore SIGPIPE from now on (a write to a closed pipe fails with EPIPE);
 * whether it was ignored before, for struct spawn's sigpipe_ign. */
bool ignore_sigpipe(void);

#endif /* TXFS_SPAWN_H */
