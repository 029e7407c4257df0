/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reslimit.h - resource limits of the command `txfs run` and `txfs exec`
 * run: wall time (timeout), memory, CPU time and tasks (pids). Exceeding
 * one stops the command's whole tree; the caller rolls it back.
 *
 * Mechanisms, per limit (limwatch_start decides, limwatch.by_cgroup says):
 *   - the command's cgroup (proctree.h), where one could be made: CPU is
 *     its cpu.stat usage_usec (every process it ever held); memory.max
 *     (with memory.swap.max 0 and memory.oom.group 1) and pids.max when
 *     those controllers are enabled for it, the kernel then enforcing
 *     them (an OOM kill, or a refused fork, counts as the hit); else the
 *     supervisor counts its tasks (cgroup.threads) and sums its
 *     processes' anonymous resident memory. The tree is stopped with
 *     cgroup.kill, in one step whatever its size.
 *   - no cgroup: the supervisor's own accounting, one walk of /proc per
 *     sample: the live descendants' CPU (plus the children they reaped)
 *     plus what txfs reaped itself (RUSAGE_CHILDREN), their threads, the
 *     sum of their anonymous resident memory (RssAnon: pages shared
 *     after a fork count once per process). Hard bounds in the kernel:
 *     RLIMIT_CPU per process (SIGXCPU at the limit, SIGKILL a second
 *     later; a death by SIGXCPU is the cpu limit) and, not for root nor
 *     for the default limit, RLIMIT_NPROC: per user, so set to the
 *     user's tasks at the start plus the limit plus a quarter of it (at
 *     least 16), a backstop just past the limit (the supervisor sees the
 *     tree pass the limit and stops it there; a command that fails when
 *     the kernel refuses its fork leaves survivors that the last sample
 *     counts); the user's other processes count in it too.
 *   - timeout: the supervisor's clock (CLOCK_MONOTONIC), in both.
 * Samples are taken every 100 ms (500 ms when only the default pids
 * limit is watched), or less often when one takes long (the interval is
 * at least 20 times a sample's cost: about 5% of a core): memory and
 * tasks may overshoot by what the tree makes in one interval where the
 * kernel does not bound them.
 *
 * One watch covers a command and its --check (the timeout and the CPU are
 * their sum).
 */
#ifndef TXFS_RESLIMIT_H
#define TXFS_RESLIMIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proctree.h"

enum limit_kind { LIMIT_TIMEOUT, LIMIT_MEMORY, LIMIT_CPU, LIMIT_PIDS, LIMIT_N };

#define LIMIT_NONE UINT64_MAX
/* The defaults (txfs(1)): no timeout, memory or CPU bound (a long agent
 * session or build is one command); 32768 tasks stops a fork bomb long
 * before the machine's pid space (4 million) while no build comes near. */
#define LIMIT_PIDS_DEFAULT 32768
/* The exit status of a command a limit stopped (as timeout(1)). */
#define LIMIT_EXIT 124

/* timeout and cpu in milliseconds, memory in bytes, pids in tasks. */
struct limits {
	uint64_t v[LIMIT_N];
};

struct limwatch {
	struct limits lim;
	const struct proctree *pt;
	bool by_cgroup[LIMIT_N];	/* bounded or counted by the cgroup */
	double t0;			/* start (s, CLOCK_MONOTONIC) */
	uint64_t cpu0_us;		/* RUSAGE_CHILDREN at the start */
	uint64_t nproc;			/* RLIMIT_NPROC for the child, or 0 */
	uint64_t cg_events0[2];		/* oom_kill, pids max at the start */
	double interval, base;		/* s between samples; at least */
	double next;			/* the next sample is due (s) */
	int hit;			/* -1, or the limit_kind hit */
	uint64_t seen;			/* what was measured then */
};

/* "timeout", "memory", "cpu", "pids". */
/* Whether lim needs the command's own cgroup: a memory, CPU or tasks
 * bound other than the default. Without one the tree is walked (a
 * timeout, the default tasks bound): moving a process into a cgroup
 * waits for an RCU grace period, ~13 ms a command on this kernel. */
bool limits_want_cgroup(const struct limits *lim);
const char *limit_name(enum limit_kind k);
/* v of kind k as written back: "4G", "512M", "1000" bytes; "30m", "90s",
 * "1500ms"; a count. */
void limit_format(enum limit_kind k, uint64_t v, char *buf, size_t size);
/* The value of an option or policy line for kind k: "none" (LIMIT_NONE)
 * or what units.c reads (0 refused). NULL, or why not (static text). */
const char *limit_parse(enum limit_kind k, const char *arg, uint64_t *v);
/* No limit but LIMIT_PIDS_DEFAULT. */
void limits_default(struct limits *l);

/* After proctree_start: choose the mechanisms, set the cgroup's bounds,
 * start the clock. 0 or a negative errno. */
int limwatch_start(struct limwatch *w, const struct limits *l,
		   const struct proctree *pt);
/* In the forked child, before exec: RLIMIT_CPU, RLIMIT_NPROC. */
void limwatch_child(const struct limwatch *w);
/* Milliseconds until the next sample is due (-1: none needed). */
int limwatch_due(const struct limwatch *w);
/* Take a sample; true (w->hit set) when a limit is exceeded. The caller
 * then stops the tree (proctree_cg_kill, a kill of the group, and
 * proctree_stop_all). final: the command has exited (its CPU counted,
 * the kernel's OOM kills and refused forks read). */
bool limwatch_check(struct limwatch *w, bool final);
/* The command exited with wait status status: limwatch_check(w, true),
 * and a death by SIGXCPU (RLIMIT_CPU) is the cpu limit. */
bool limwatch_exited(struct limwatch *w, int status);

#endif /* TXFS_RESLIMIT_H */
