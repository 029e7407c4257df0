/* SPDX-License-Identifier: Apache-2.0 */
/*
 * spin.c - wait for the next FUSE request awake, briefly, before sleeping.
 *
 * On a virtual machine whose idle vCPUs halt at once (Firecracker, cpuidle
 * haltpoll with guest_halt_poll_ns 0) every request that finds the serving
 * thread asleep in read(2) pays the wake-up of a halted vCPU: tens of µs,
 * more than the daemon's own work on most requests
 * (bench/results/2026-11-24-W1-W8.md, "What the idle machine does to
 * FUSE"). With `-o spin=US` the read hook (killpriv.c's kp_read) calls
 * spin_wait() first: it polls the /dev/fuse fd with a zero timeout for up
 * to US microseconds, and only then lets the blocking read(2) sleep. A
 * request that the application sends soon after the previous reply finds
 * the daemon awake.
 *
 * Costs little when requests are sparse. The hook measures each request's
 * gap (from the hook's entry, i.e. after the previous request was
 * answered, to the request's arrival) and adapts:
 *   - how long: a moving average (1/8 weight) of the gaps that fell
 *     within the window (a spin that found the request, or a blocking read
 *     that returned that soon); the spin lasts 3x that average, at least
 *     SPIN_MIN_NS, at most the window. An application that sends its next
 *     request 5 µs after each reply makes misses cost ~15 µs, not the
 *     window;
 *   - whether: a spin that ran out (a miss) doubles `skip`: that many
 *     following requests block at once (up to SPIN_SKIP_MAX); a hit
 *     resets it. Isolated requests thus cost one spin per SPIN_SKIP_MAX.
 * And it does not take CPU that someone else needs:
 *   - between polls the spinner calls sched_yield(); a yield that took
 *     long (SPIN_YIELD_NS) means another task ran on this CPU, and the
 *     spin stops (counted as `yielded`, handled as a miss);
 *   - no spin at all while the machine had less than 1/SPIN_IDLE_SHARE
 *     idle CPU time over the last SPIN_LOAD_NS (/proc/stat; the time this
 *     daemon spun counts as idle). Busy vCPUs do not halt, so there is
 *     nothing to win, and a loaded build would lose the CPU the spin
 *     takes (bench/results/2026-11-24-spin.md: without this check W3 at
 *     load 14 spun 65 ms, W6 1.35 s; with it 0.4 ms and 7 ms).
 *     TXFS_SPIN_ALWAYS=1 (tests) turns the check off.
 *
 * TXFS_STATS (stats.c) gets the counters: spins, ready (the request was
 * queued at the first poll), hits (it came during the spin), misses,
 * yielded, µs spun, the average short gap, and requests not spun for
 * because the machine was busy (spin_loaded).
 *
 * Threads: at most one thread spins at a time (`owner`, a compare and
 * swap); the others block in read(2) as before. The counters and the
 * adaptive state are relaxed atomics: a lost update only changes one
 * decision. The fd's flags are never changed (libfuse's loop treats EAGAIN
 * as an error): poll(2) with a zero timeout looks, read(2) takes.
 *
 * Contract: spin_wait() returns 0 when the caller should read(2) now (a
 * request is there or the spin gave up), -EINTR when the session is
 * ending; spin_note() records the read's outcome. Both are no-ops when the
 * spin is off.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "view.h"

#define SPIN_MAX_US 1000		/* the largest -o spin=US */
#define SPIN_MIN_NS 5000u		/* the shortest spin */
#define SPIN_YIELD_NS 20000u		/* a yield this long: CPU is taken */
#define SPIN_SKIP_MAX 64u		/* requests that block after misses */
#define SPIN_LOAD_NS 100000000u		/* how often /proc/stat is read */
#define SPIN_IDLE_SHARE 8u		/* spin when idle >= 1/8 of the CPUs */

struct spin {
	uint64_t window_ns;		/* 0: off */
	_Atomic bool owner;		/* a thread is spinning */
	_Atomic uint64_t avg_gap_ns;	/* of gaps within the window */
	_Atomic uint32_t skip;		/* requests left to block at once */
	_Atomic uint32_t backoff;	/* skip after the next miss */
	/* the machine's idle share (only the thread that spins reads it) */
	int statfd;			/* /proc/stat, or -1 */
	uint64_t load_t;		/* when it was read last */
	uint64_t idle0, total0;		/* its idle and total ticks then */
	uint64_t spun0;			/* spin_ns then */
	bool loaded;			/* no idle CPU time lately: no spin */
	/* counters (spin_counts) */
	_Atomic uint64_t spins, ready, hits, misses, yielded, spin_ns;
	_Atomic uint64_t loaded_n;	/* not spun: the machine was busy */
};

static uint64_t spin_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* 0 off, 1..SPIN_MAX_US on; -EINVAL for anything else. */
int spin_parse(const char *s, unsigned *us)
{
	char *end = "";
	unsigned long v;

	errno = 0;
	v = s && *s >= '0' && *s <= '9' ? strtoul(s, &end, 10) : ULONG_MAX;
	if (v > SPIN_MAX_US || errno || *end)
		return -EINVAL;
	*us = (unsigned)v;
	return 0;
}

int spin_init(struct txfs *fs, unsigned us)
{
	const char *always;
	struct spin *s;

	if (!us)
		return 0;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->window_ns = (uint64_t)us * 1000u;
	s->backoff = 1;
	s->avg_gap_ns = s->window_ns / 3;
	/* TXFS_SPIN_ALWAYS=1 (tests): spin on a busy machine too */
	always = getenv("TXFS_SPIN_ALWAYS");
	s->statfd = always && !strcmp(always, "1") ? -1 :
		    open("/proc/stat", O_RDONLY | O_CLOEXEC);
	fs->spin = s;
	return 0;
}

void spin_destroy(struct txfs *fs)
{
	if (fs->spin && fs->spin->statfd >= 0)
		close(fs->spin->statfd);
	free(fs->spin);
	fs->spin = NULL;
}

/* Should this request be waited for awake? */
static bool spin_wanted(struct spin *s)
{
	uint32_t skip = atomic_load_explicit(&s->skip, memory_order_relaxed);

	if (!skip)
		return true;
	atomic_store_explicit(&s->skip, skip - 1, memory_order_relaxed);
	return false;
}

/* Idle and total ticks of all CPUs (the "cpu" line of /proc/stat). */
static int spin_ticks(int fd, uint64_t *idle, uint64_t *total)
{
	char buf[256];
	unsigned long long v[8] = { 0 };
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	if (sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) < 4)
		return -EIO;
	*idle = v[3] + v[4];
	*total = 0;
	for (int i = 0; i < 8; i++)
		*total += v[i];
	return 0;
}

/*
 * Is the machine busy? Only an idle CPU halts, and only a halted one is
 * slow to wake: when the CPUs had (almost) no idle time over the last
 * SPIN_LOAD_NS, every vCPU is awake anyway, and a spin would only take
 * CPU from the work that keeps them busy (a loaded build). The time this
 * thread spun counts as idle (it would have been). Called by the spinning
 * thread only.
 */
static bool spin_loaded(struct spin *s, uint64_t now)
{
	uint64_t idle, total, spun, tick = 1000000000u /
		(uint64_t)sysconf(_SC_CLK_TCK);

	if (s->statfd < 0 || now - s->load_t < SPIN_LOAD_NS)
		return s->loaded;
	if (spin_ticks(s->statfd, &idle, &total))
		return s->loaded = false;
	spun = (s->spin_ns - s->spun0) / tick;
	if (s->load_t && total > s->total0)
		s->loaded = (idle - s->idle0 + spun) * SPIN_IDLE_SHARE <
			    total - s->total0;
	s->load_t = now;
	s->idle0 = idle;
	s->total0 = total;
	s->spun0 = s->spin_ns;
	return s->loaded;
}

/* How long to spin: 3x the average short gap, within the bounds. */
static uint64_t spin_len(struct spin *s)
{
	uint64_t ns = 3 * atomic_load_explicit(&s->avg_gap_ns,
					       memory_order_relaxed);

	if (ns < SPIN_MIN_NS)
		ns = SPIN_MIN_NS;
	return ns < s->window_ns ? ns : s->window_ns;
}

/* Poll until a request is there (1; 3 when it was there at once), the
 * window ends (0), the CPU is wanted elsewhere (2), or poll fails (-1:
 * read(2) will say why). */
static int spin_poll(int fd, uint64_t t0, uint64_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	for (int i = 0;; i++) {
		uint64_t t;
		int n = poll(&p, 1, 0);

		if (n > 0)
			return !(p.revents & POLLIN) ? -1 : i ? 1 : 3;
		if (n < 0 && errno != EINTR)
			return -1;
		t = spin_now();
		if (t - t0 >= len)
			return 0;
		sched_yield();
		if (spin_now() - t >= SPIN_YIELD_NS)
			return 2;
	}
}

static void spin_count(struct spin *s, int res, uint64_t ns)
{
	uint32_t b = atomic_load_explicit(&s->backoff, memory_order_relaxed);

	atomic_fetch_add_explicit(&s->spins, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->spin_ns, ns, memory_order_relaxed);
	if (res == 1 || res == 3) {
		atomic_fetch_add_explicit(res == 1 ? &s->hits : &s->ready, 1,
					  memory_order_relaxed);
		atomic_store_explicit(&s->backoff, 1, memory_order_relaxed);
	} else if (res == 0 || res == 2) {
		atomic_fetch_add_explicit(res ? &s->yielded : &s->misses, 1,
					  memory_order_relaxed);
		atomic_store_explicit(&s->skip, b, memory_order_relaxed);
		atomic_store_explicit(&s->backoff,
				      b < SPIN_SKIP_MAX ? 2 * b : b,
				      memory_order_relaxed);
	}
}

int spin_wait(struct txfs *fs, int fd, uint64_t *t0)
{
	struct spin *s = fs->spin;
	bool idle = false;
	int res;

	if (!s)
		return 0;
	*t0 = spin_now();
	if (!spin_wanted(s) ||
	    !atomic_compare_exchange_strong(&s->owner, &idle, true))
		return 0;
	if (spin_loaded(s, *t0)) {
		atomic_fetch_add_explicit(&s->loaded_n, 1,
					  memory_order_relaxed);
		atomic_store(&s->owner, false);
		return 0;
	}
	res = spin_poll(fd, *t0, spin_len(s));
	atomic_store(&s->owner, false);
	spin_count(s, res, spin_now() - *t0);
	return fuse_session_exited(fs->se) ? -EINTR : 0;
}

void spin_note(struct txfs *fs, uint64_t t0)
{
	struct spin *s = fs->spin;
	uint64_t gap, avg;

	if (!s)
		return;
	gap = spin_now() - t0;
	if (gap > s->window_ns)
		return;
	avg = atomic_load_explicit(&s->avg_gap_ns, memory_order_relaxed);
	atomic_store_explicit(&s->avg_gap_ns, avg - avg / 8 + gap / 8,
			      memory_order_relaxed);
}

void spin_counts(const struct txfs *fs, FILE *f)
{
	const struct spin *s = fs->spin;

	if (!s)
		return;
	fprintf(f, "spin_spins %llu\nspin_ready %llu\nspin_hits %llu\n"
		"spin_misses %llu\nspin_yielded %llu\nspin_us %llu\n"
		"spin_avg_gap_ns %llu\nspin_loaded %llu\n",
		(unsigned long long)s->spins, (unsigned long long)s->ready,
		(unsigned long long)s->hits,
		(unsigned long long)s->misses, (unsigned long long)s->yielded,
		(unsigned long long)(s->spin_ns / 1000),
		(unsigned long long)s->avg_gap_ns,
		(unsigned long long)s->loaded_n);
}
