/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proctree.h - stop every process a command started, however it left:
 * double forks, setsid, daemons, reparented orphans.
 *
 * Mechanisms (see proctree.c):
 *   - PR_SET_CHILD_SUBREAPER in the calling process: an orphaned
 *     descendant is reparented to us, never to init, so every process the
 *     command started stays a descendant of ours until we reap it;
 *   - the command's process group, killed at once (kill(-pid) cannot be
 *     outrun by fork: a group signal reaches a child being forked too):
 *     spawn.c waits for the command without reaping it (WNOWAIT), so its
 *     pid, and with it the group's id, cannot be reused by another
 *     process until proctree_stop_all() has signalled the group. A fork
 *     chain that stays in the group (every one under txfs exec, which
 *     refuses setsid and setpgid) is stopped whatever the machine's load;
 *   - a kill-and-reap loop: walk /proc for our descendants, SIGKILL them
 *     (through a pidfd, re-checking the parent, so a recycled pid is never
 *     signalled), reap, repeat until none is left and waitpid says ECHILD;
 *   - where our cgroup v2 (found in /proc/self/mountinfo: also the
 *     unified hierarchy of a hybrid system) is ours (owned by our uid and
 *     writable: delegated, e.g. a systemd user scope, or root's own): the
 *     command runs in a child cgroup, killed at once with cgroup.kill (it
 *     catches what a fork loop races past the walk), whose accounting
 *     reslimit.c reads. Optional: without it the walk alone stops
 *     everything, only slower against a fork bomb. TXFS_NO_CGROUP in the
 *     environment (tests) makes none.
 *
 * Usage: proctree_start() before forking the command; proctree_enter() in
 * the forked child before exec; proctree_stop_all() after the command
 * exited (or was signalled); proctree_end() at the end.
 */
#ifndef TXFS_PROCTREE_H
#define TXFS_PROCTREE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct proctree {
	pid_t self;		/* the subreaper (getpid() at start) */
	pid_t exclude;		/* a descendant to leave alone, or 0 */
	int cgfd;		/* the command's cgroup folder, or -1 */
	char cgname[64];	/* its name in our own cgroup */
	int cgparent;		/* our own cgroup folder, or -1 */
	bool no_cgroup;		/* set before start: no cgroup wanted
				 * (limits_want_cgroup, reslimit.h) */
	pid_t cmd;		/* the command: a child of ours not reaped
				 * yet, the leader of its own group; or 0 */
};

/* Become a child subreaper; create the cgroup if one is delegated.
 * Returns 0 or a negative errno (the subreaper could not be set). */
int proctree_start(struct proctree *pt);
/* In the forked child: move into the command's cgroup (if any). */
void proctree_enter(const struct proctree *pt);
/* Kill and reap every descendant (but pt->exclude and its subtree),
 * first the group of pt->cmd (if still our unreaped child), then reap it;
 * *count: how many were still alive. Returns 0, or -EAGAIN when some
 * still ran after 10 s of trying (the caller must not trust the tree). */
int proctree_stop_all(struct proctree *pt, unsigned *count);
/* Remove the cgroup; stays a subreaper. */
void proctree_end(struct proctree *pt);

/*
 * What the tree uses now (for reslimit.c). With the cgroup: its CPU
 * (cpu.stat usage_usec, every process it ever held), its tasks
 * (pids.current, else the lines of cgroup.threads) and, when mem, its
 * memory (memory.current, else the anonymous resident memory of each of
 * its processes). Without: the same summed over the live descendants
 * (utime + stime + the children they reaped; threads; anonymous resident
 * memory), one walk of /proc. Returns 0 or a negative errno.
 */
struct proctree_usage {
	uint64_t cpu_us, mem, tasks;
};
int proctree_usage(const struct proctree *pt, bool mem,
		   struct proctree_usage *u);
/* Write v to the cgroup's file (memory.max, pids.max ...); read the
 * number after key (NULL: the first) of file. -ENOENT without a cgroup. */
int proctree_cg_limit(const struct proctree *pt, const char *file, uint64_t v);
int proctree_cg_read(const struct proctree *pt, const char *file,
		     const char *key, uint64_t *v);
/* cgroup.kill: every process of the cgroup, at once (no-op without). */
void proctree_cg_kill(const struct proctree *pt);

#endif /* TXFS_PROCTREE_H */
