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
 * When txfs exec itself is gone without cmd-end (SIGKILL), the processes
 * its command left are reparented out of its tree; they are still known
 * by their process group (issue 23.1). txfs exec puts each command it
 * runs in a group of its own (the command's pid) and tells the daemon
 * with cmd-group before the command runs; the confinement of txfs exec
 * denies setsid and setpgid (confine.h keep_group), so every process of
 * the command, through setsid attempts, double forks, re-parenting to
 * init and threads, keeps that group. A group number cannot be reused
 * while one of its processes lives; the record goes when none is left
 * (kill(-pgid, 0): ESRCH), checked on every use. Limits: a group emptied
 * and reused by an unrelated process group between two checks is
 * refused verbs (the safe side); a process started on the command's
 * behalf by a service outside (systemd-run, at) is not its process (the
 * supervisor refuses connecting to sockets outside the workspace). The
 * control socket refuses every confined peer anyway (sock.c).
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

/* Some process of group pgid lives (EPERM: one we may not signal). */
static bool group_alive(pid_t pgid)
{
	return pgid > 1 && (kill(-pgid, 0) == 0 || errno == EPERM);
}

static void drop(struct exec_runner *e)
{
	if (e->pidfd >= 0)
		close(e->pidfd);
	memset(e, 0, sizeof(*e));
	e->pidfd = -1;
}

/* txfs exec is gone (cmd-end, or died): forget it, keep the groups that
 * still have processes; the slot is free when none has. */
static void runner_gone(struct exec_runner *e)
{
	size_t i, n = 0;

	for (i = 0; i < e->ngroups; i++)
		if (group_alive(e->groups[i]))
			e->groups[n++] = e->groups[i];
	e->ngroups = n;
	if (n == 0) {
		drop(e);
		return;
	}
	if (e->pidfd >= 0)
		close(e->pidfd);
	e->pidfd = -1;
	e->pid = -1;
}

/* Under exec_lock: the slot's state brought up to date. */
static void refresh(struct exec_runner *e)
{
	if (e->pid > 0 && !alive(e))
		runner_gone(e);	/* died without cmd-end */
	else if (e->pid < 0)
		runner_gone(e);
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

		refresh(e);
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
			runner_gone(&fs->runners[i]);	/* a survivor stays known */
	pthread_mutex_unlock(&fs->exec_lock);
}

/* The process group's leader is a child of the runner. */
static bool child_of(pid_t pgid, pid_t runner)
{
	return getpgid(pgid) == pgid && ppid_of(pgid) == runner;
}

int exectree_group(struct txfs *fs, int cfd, uint64_t id, pid_t pgid)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	int rc = -ESRCH;

	if (cfd < 0 || getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len) || cr.pid <= 0)
		return -ESRCH;
	if (pgid <= 1 || !child_of(pgid, cr.pid))
		return -EINVAL;
	pthread_mutex_lock(&fs->exec_lock);
	for (size_t i = 0; i < EXEC_RUNNERS_MAX && rc == -ESRCH; i++) {
		struct exec_runner *e = &fs->runners[i];

		if (e->pid != cr.pid || e->id != id || !alive(e))
			continue;
		rc = -EBUSY;
		if (e->ngroups < EXEC_GROUPS_MAX) {
			e->groups[e->ngroups++] = pgid;
			rc = 0;
		}
	}
	pthread_mutex_unlock(&fs->exec_lock);
	return rc;
}

bool exectree_runs(struct txfs *fs, uint64_t id)
{
	bool r = false;

	pthread_mutex_lock(&fs->exec_lock);
	for (size_t i = 0; i < EXEC_RUNNERS_MAX && !r; i++) {
		refresh(&fs->runners[i]);
		r = fs->runners[i].pid > 0 && fs->runners[i].id == id;
	}
	pthread_mutex_unlock(&fs->exec_lock);
	return r;
}

bool exectree_has(struct txfs *fs, pid_t pid)
{
	pid_t run[EXEC_RUNNERS_MAX], grp[EXEC_RUNNERS_MAX * EXEC_GROUPS_MAX];
	size_t n = 0, ng = 0, i, j;
	bool found = false, any = false;
	pid_t pg = pid > 0 ? getpgid(pid) : -1;
	int depth;

	pthread_mutex_lock(&fs->exec_lock);
	for (i = 0; i < EXEC_RUNNERS_MAX; i++) {
		struct exec_runner *e = &fs->runners[i];

		refresh(e);
		any |= e->pid != 0;
		if (e->pid > 0)
			run[n++] = e->pid;
		for (j = 0; e->pid != 0 && j < e->ngroups; j++)
			grp[ng++] = e->groups[j];
	}
	pthread_mutex_unlock(&fs->exec_lock);
	if (!any)
		return false;
	if (pid <= 0)
		return true;	/* unknown caller while a command runs: refused */
	for (i = 0; i < ng && !found; i++)
		found = pg == grp[i];	/* its group, whoever its parent now */
	for (depth = 0; pid > 1 && depth < 4096 && !found && n > 0; depth++) {
		pid = ppid_of(pid);
		for (i = 0; i < n && !found; i++)
			found = pid == run[i];
	}
	return found;
}
