// SPDX-License-Identifier: Apache-2.0
/*
 * reslimit.c - the command's resource limits (see reslimit.h): parsing and
 * printing them, the cgroup's bounds, the child's rlimits, and the
 * samples the supervisor takes while it waits for the command.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "reslimit.h"
#include "../../policy/policy.h"

#define SAMPLE_S 0.1		/* between samples, at least */
#define SAMPLE_DEFAULT_S 0.5	/* the same when only the default pids limit is watched */
#define SAMPLE_COST 20		/* interval >= this many times a sample */

static const char *const names[LIMIT_N] = {
	[LIMIT_TIMEOUT] = "timeout", [LIMIT_MEMORY] = "memory",
	[LIMIT_CPU] = "cpu", [LIMIT_PIDS] = "pids",
};

const char *limit_name(enum limit_kind k)
{
	return k < LIMIT_N ? names[k] : "?";
}

struct unit {
	const char *u;
	uint64_t m;
};

void limit_format(enum limit_kind k, uint64_t v, char *buf, size_t size)
{
	static const struct unit sz[] = {
		{ "T", 1ULL << 40 }, { "G", 1ULL << 30 }, { "M", 1ULL << 20 },
		{ "K", 1ULL << 10 },
	}, tm[] = {
		{ "d", 86400000 }, { "h", 3600000 }, { "m", 60000 },
		{ "s", 1000 },
	};
	const struct unit *t = k == LIMIT_MEMORY ? sz :
		(k == LIMIT_PIDS ? NULL : tm);

	if (v == LIMIT_NONE) {
		snprintf(buf, size, "none");
		return;
	}
	for (size_t i = 0; t && i < 4; i++)
		if (v >= t[i].m && v % t[i].m == 0) {
			snprintf(buf, size, "%llu%s",
				 (unsigned long long)(v / t[i].m), t[i].u);
			return;
		}
	snprintf(buf, size, "%llu%s", (unsigned long long)v,
		 k == LIMIT_TIMEOUT || k == LIMIT_CPU ? "ms" : "");
}

const char *limit_parse(enum limit_kind k, const char *arg, uint64_t *v)
{
	size_t off, n = strlen(arg);
	const char *msg;

	if (!strcmp(arg, "none")) {
		*v = LIMIT_NONE;
		return NULL;
	}
	if (k == LIMIT_MEMORY)
		msg = policy_parse_size(arg, n, v, &off);
	else if (k == LIMIT_PIDS)
		msg = policy_parse_count(arg, n, v, &off);
	else
		msg = policy_parse_duration(arg, n, v, &off);
	if (!msg && *v == 0)
		msg = "must be more than 0 (none: no limit)";
	if (!msg && *v == LIMIT_NONE)
		msg = "number too large";
	return msg;
}

void limits_default(struct limits *l)
{
	for (int k = 0; k < LIMIT_N; k++)
		l->v[k] = LIMIT_NONE;
	l->v[LIMIT_PIDS] = LIMIT_PIDS_DEFAULT;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t children_cpu_us(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_CHILDREN, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000 +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* The tasks of our real uid now (RLIMIT_NPROC counts them all). */
static uint64_t user_tasks(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	uint64_t n = 0;
	uid_t me = getuid();

	while (d && (de = readdir(d))) {
		char path[300], line[256];
		unsigned uid = (unsigned)-1;
		long thr = 0;
		FILE *f;

		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/status", de->d_name);
		if (!(f = fopen(path, "re")))
			continue;
		while (fgets(line, sizeof(line), f))
			if (sscanf(line, "Uid: %u", &uid) != 1)
				(void)sscanf(line, "Threads: %ld", &thr);
		fclose(f);
		if (uid == me && thr > 0)
			n += (uint64_t)thr;
	}
	if (d)
		closedir(d);
	return n;
}

/* The kernel's bounds in the cgroup, where its controllers allow. */
static void cg_bounds(struct limwatch *w)
{
	const struct proctree *pt = w->pt;
	uint64_t v;

	if (pt->cgfd < 0)
		return;
	w->by_cgroup[LIMIT_CPU] = proctree_cg_read(pt, "cpu.stat",
						   "usage_usec", &v) == 0;
	if (w->lim.v[LIMIT_MEMORY] != LIMIT_NONE &&
	    proctree_cg_limit(pt, "memory.max", w->lim.v[LIMIT_MEMORY]) == 0) {
		w->by_cgroup[LIMIT_MEMORY] = true;
		(void)proctree_cg_limit(pt, "memory.swap.max", 0);
		(void)proctree_cg_limit(pt, "memory.oom.group", 1);
		(void)proctree_cg_read(pt, "memory.events", "oom_kill",
				       &w->cg_events0[0]);
	}
	if (w->lim.v[LIMIT_PIDS] != LIMIT_NONE &&
	    proctree_cg_limit(pt, "pids.max", w->lim.v[LIMIT_PIDS]) == 0) {
		w->by_cgroup[LIMIT_PIDS] = true;
		(void)proctree_cg_read(pt, "pids.events", "max",
				       &w->cg_events0[1]);
	}
}

int limwatch_start(struct limwatch *w, const struct limits *l,
		   const struct proctree *pt)
{
	bool light = l->v[LIMIT_MEMORY] == LIMIT_NONE &&
		     l->v[LIMIT_CPU] == LIMIT_NONE &&
		     l->v[LIMIT_PIDS] == LIMIT_PIDS_DEFAULT;

	*w = (struct limwatch){ .lim = *l, .pt = pt, .hit = -1,
		.interval = light ? SAMPLE_DEFAULT_S : SAMPLE_S };
	w->base = w->interval;
	cg_bounds(w);
	/* the kernel's backstop, a little above the limit so that the
	 * supervisor sees the tree pass it (the user's other tasks, our
	 * supervisor thread and helper, count in RLIMIT_NPROC too); not
	 * for the default, where the user's own RLIMIT_NPROC is one and the
	 * walk to count the user's tasks would cost every txfs exec */
	if (!w->by_cgroup[LIMIT_PIDS] && l->v[LIMIT_PIDS] != LIMIT_NONE &&
	    l->v[LIMIT_PIDS] != LIMIT_PIDS_DEFAULT && geteuid() != 0 &&
	    l->v[LIMIT_PIDS] < LIMIT_NONE / 4)
		w->nproc = user_tasks() + l->v[LIMIT_PIDS] +
			   (l->v[LIMIT_PIDS] / 4 > 16 ? l->v[LIMIT_PIDS] / 4 : 16);
	w->cpu0_us = children_cpu_us();
	w->t0 = now_s();
	w->next = w->t0 + w->interval;	/* a command of 3 ms takes no sample */
	return 0;
}

/* Lower resource r to v (never raise it). */
static void lower(int r, rlim_t soft, rlim_t hard)
{
	struct rlimit rl;

	if (getrlimit(r, &rl))
		return;
	if (rl.rlim_max != RLIM_INFINITY && rl.rlim_max < hard)
		hard = rl.rlim_max;
	if (soft > hard)
		soft = hard;
	rl.rlim_cur = soft;
	rl.rlim_max = hard;
	(void)setrlimit(r, &rl);
}

void limwatch_child(const struct limwatch *w)
{
	uint64_t cpu = w->lim.v[LIMIT_CPU];

	if (cpu != LIMIT_NONE) {	/* SIGXCPU at the limit, SIGKILL 1 s on */
		rlim_t s = (rlim_t)((cpu + 999) / 1000);

		lower(RLIMIT_CPU, s, s + 1);
	}
	if (w->nproc)
		lower(RLIMIT_NPROC, (rlim_t)w->nproc, (rlim_t)w->nproc);
}

static bool sampled(const struct limwatch *w)
{
	return w->lim.v[LIMIT_MEMORY] != LIMIT_NONE ||
	       w->lim.v[LIMIT_CPU] != LIMIT_NONE ||
	       w->lim.v[LIMIT_PIDS] != LIMIT_NONE;
}

int limwatch_due(const struct limwatch *w)
{
	double now = now_s(), due = -1;

	if (w->hit >= 0)
		return -1;
	if (w->lim.v[LIMIT_TIMEOUT] != LIMIT_NONE)
		due = w->t0 + (double)w->lim.v[LIMIT_TIMEOUT] / 1000 - now;
	if (sampled(w) && (due < 0 || w->next - now < due))
		due = w->next - now;
	if (due == -1 && w->lim.v[LIMIT_TIMEOUT] == LIMIT_NONE && !sampled(w))
		return -1;
	return due <= 0 ? 0 : (int)(due * 1000) + 1;
}

static bool hit(struct limwatch *w, enum limit_kind k, uint64_t seen)
{
	w->hit = (int)k;
	w->seen = seen;
	return true;
}

/* The kernel refused a fork or killed for memory in the cgroup. */
static bool cg_events(struct limwatch *w)
{
	uint64_t v;

	if (w->by_cgroup[LIMIT_MEMORY] &&
	    proctree_cg_read(w->pt, "memory.events", "oom_kill", &v) == 0 &&
	    v > w->cg_events0[0]) {
		if (proctree_cg_read(w->pt, "memory.peak", NULL, &v))
			v = w->lim.v[LIMIT_MEMORY];
		return hit(w, LIMIT_MEMORY, v);
	}
	if (w->by_cgroup[LIMIT_PIDS] &&
	    proctree_cg_read(w->pt, "pids.events", "max", &v) == 0 &&
	    v > w->cg_events0[1])
		return hit(w, LIMIT_PIDS, w->lim.v[LIMIT_PIDS] + 1);
	return false;
}

/* An explicit pids limit the supervisor counts (no pids.max). */
static bool pids_counted(const struct limwatch *w)
{
	return !w->by_cgroup[LIMIT_PIDS] &&
	       w->lim.v[LIMIT_PIDS] != LIMIT_NONE &&
	       w->lim.v[LIMIT_PIDS] != LIMIT_PIDS_DEFAULT;
}

bool limwatch_check(struct limwatch *w, bool final)
{
	const uint64_t *l = w->lim.v;
	struct proctree_usage u;
	bool mem = l[LIMIT_MEMORY] != LIMIT_NONE && !w->by_cgroup[LIMIT_MEMORY];
	double t = now_s(), took;
	uint64_t cpu;

	if (w->hit >= 0)
		return true;
	if (!final && l[LIMIT_TIMEOUT] != LIMIT_NONE &&
	    (t - w->t0) * 1000 >= (double)l[LIMIT_TIMEOUT])
		return hit(w, LIMIT_TIMEOUT, (uint64_t)((t - w->t0) * 1000));
	if (!sampled(w) || (!final && t < w->next))
		return false;
	/* at the end only what the exit may have hidden: the kernel's
	 * kills and refusals, the CPU, and the tasks left when the kernel
	 * refused a fork past an explicit limit before a sample (a walk
	 * only for those, not for every command) */
	if (final && l[LIMIT_CPU] == LIMIT_NONE && !pids_counted(w))
		return cg_events(w);
	w->next = t + w->interval;	/* also when this sample fails */
	if (cg_events(w) || proctree_usage(w->pt, mem, &u))
		return w->hit >= 0;
	took = now_s() - t;
	w->interval = took * SAMPLE_COST > w->base ? took * SAMPLE_COST : w->base;
	w->next = now_s() + w->interval;
	cpu = u.cpu_us + (w->by_cgroup[LIMIT_CPU] ? 0 :
			  children_cpu_us() - w->cpu0_us);
	if (l[LIMIT_CPU] != LIMIT_NONE && cpu / 1000 >= l[LIMIT_CPU])
		return hit(w, LIMIT_CPU, cpu / 1000);
	if (!final && mem && u.mem > l[LIMIT_MEMORY])
		return hit(w, LIMIT_MEMORY, u.mem);
	if (l[LIMIT_PIDS] != LIMIT_NONE && !w->by_cgroup[LIMIT_PIDS] &&
	    u.tasks >= l[LIMIT_PIDS])
		return hit(w, LIMIT_PIDS, u.tasks);
	return false;
}

bool limwatch_exited(struct limwatch *w, int status)
{
	if (w->hit < 0 && WIFSIGNALED(status) && WTERMSIG(status) == SIGXCPU &&
	    w->lim.v[LIMIT_CPU] != LIMIT_NONE)	/* RLIMIT_CPU: one process */
		return hit(w, LIMIT_CPU, w->lim.v[LIMIT_CPU]);
	return limwatch_check(w, true);
}

bool limits_want_cgroup(const struct limits *lim)
{
	return lim->v[LIMIT_MEMORY] != LIMIT_NONE ||
	       lim->v[LIMIT_CPU] != LIMIT_NONE ||
	       lim->v[LIMIT_PIDS] != LIMIT_PIDS_DEFAULT;
}
