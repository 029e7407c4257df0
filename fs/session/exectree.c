// SPDX-License-Identifier: Apache-2.0
/*
 * exectree.c - which callers belong to a command `txfs exec` runs, so that
 * .txfs/ctl refuses them every verb (issue 23.2: `echo commit >
 * .txfs/ctl` from inside committed the whole session, whatever the mount's
 * options; txfs run has its own mount with --no-ctl-verbs).
 *
 * cmd-begin (socket, session.c) records its peer: the txfs exec process,
 * known by SO_PEERCRED and pinned by SO_PEERPIDFD, until its cmd-end.
 * txfs exec is a child subreaper (cli/proctree.c): every process the
 * command starts stays its descendant, however it double-forks or calls
 * setsid, until txfs exec has stopped them all (before cmd-end). So a
 * caller is the command's when a parent of its process, followed through
 * /proc/PID/status "PPid:" (a thread id gives its process's parent), is a
 * recorded runner that is still alive (the pidfd: a recycled pid of a
 * runner that died without cmd-end is not taken for it).
 *
 * Limits: a process the command leaves running after txfs exec is gone
 * (txfs exec killed with SIGKILL; its direct child dies with it,
 * PR_SET_PDEATHSIG) is no longer recognised; and a parent that exits
 * while the walk reads it is reparented to the subreaper, which the walk
 * then meets. The control socket refuses every confined peer anyway
 * (sock.c).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "session.h"

#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77		/* Linux 6.5 */
#endif

/* Parent of pid's process from /proc/PID/status, or -1. */
static pid_t ppid_of(pid_t pid)
{
	char path[64], line[128];
	pid_t pp = -1;
	FILE *f;
	int v;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "PPid: %d", &v) == 1) {
			pp = (pid_t)v;
			break;
		}
	fclose(f);
	return pp;
}

/* The runner is alive (its pidfd, when the kernel gave one). */
static bool alive(const struct exec_runner *e)
{
	if (e->pidfd < 0)
		return kill(e->pid, 0) == 0 || errno == EPERM;
	return syscall(SYS_pidfd_send_signal, e->pidfd, 0, NULL, 0) == 0;
}

static void drop(struct exec_runner *e)
{
	if (e->pidfd >= 0)
		close(e->pidfd);
	memset(e, 0, sizeof(*e));
	e->pidfd = -1;
}

void exectree_init(struct txfs *fs)
{
	pthread_mutex_init(&fs->exec_lock, NULL);
	for (size_t i = 0; i < EXEC_RUNNERS_MAX; i++) {
		memset(&fs->runners[i], 0, sizeof(fs->runners[i]));
		fs->runners[i].pidfd = -1;
	}
}

void exectree_destroy(struct txfs *fs)
{
	for (size_t i = 0; i < EXEC_RUNNERS_MAX; i++)
		if (fs->runners[i].pid > 0)
			drop(&fs->runners[i]);
	pthread_mutex_destroy(&fs->exec_lock);
}

int exectree_begin(struct txfs *fs, int cfd, uint64_t id)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	struct exec_runner *slot = NULL;
	int pfd = -1;

	if (cfd < 0 || getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || cr.pid <= 0)
		return -ESRCH;
	len = sizeof(pfd);
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len))
		pfd = -1;	/* before 6.5: the pid alone */
	pthread_mutex_lock(&fs->exec_lock);
	for (size_t i = 0; i < EXEC_RUNNERS_MAX; i++) {
		struct exec_runner *e = &fs->runners[i];

		if (e->pid > 0 && !alive(e))
			drop(e);	/* died without cmd-end */
		if (e->pid == 0 && !slot)
			slot = e;
	}
	if (slot) {
		slot->pid = cr.pid;
		slot->pidfd = pfd;
		slot->id = id;
	}
	pthread_mutex_unlock(&fs->exec_lock);
	if (!slot && pfd >= 0)
		close(pfd);
	return slot ? 0 : -EBUSY;
}

void exectree_end(struct txfs *fs, uint64_t id)
{
	pthread_mutex_lock(&fs->exec_lock);
	for (size_t i = 0; i < EXEC_RUNNERS_MAX; i++)
		if (fs->runners[i].pid > 0 && fs->runners[i].id == id)
			drop(&fs->runners[i]);
	pthread_mutex_unlock(&fs->exec_lock);
}

bool exectree_has(struct txfs *fs, pid_t pid)
{
	pid_t run[EXEC_RUNNERS_MAX];
	size_t n = 0, i;
	bool found = false;
	int depth;

	pthread_mutex_lock(&fs->exec_lock);
	for (i = 0; i < EXEC_RUNNERS_MAX; i++)
		if (fs->runners[i].pid > 0 && alive(&fs->runners[i]))
			run[n++] = fs->runners[i].pid;
	pthread_mutex_unlock(&fs->exec_lock);
	if (n == 0)
		return false;
	if (pid <= 0)
		return true;	/* unknown caller while a command runs: refused */
	for (depth = 0; pid > 1 && depth < 4096 && !found; depth++) {
		pid = ppid_of(pid);
		for (i = 0; i < n && !found; i++)
			found = pid == run[i];
	}
	return found;
}
