/* SPDX-License-Identifier: Apache-2.0 */
/*
 * proctree.c - find, kill and reap every descendant of this process (see
 * proctree.h for the contract and the mechanisms).
 *
 * Why the walk terminates with nothing left: we are a child subreaper, so
 * every descendant's chain of parents ends at us, and a descendant that
 * died stays visible (a zombie of its parent, at worst of ours) until its
 * parent reaps it. We reap only between walks; a walk that sees no
 * descendant at all therefore means none exists, and no process outside
 * the tree can have been started by one (only a live process forks, and
 * a live descendant is seen and killed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "proctree.h"

#define STOP_SECONDS 10
#define CGROUP2_MAGIC 0x63677270

struct pent {
	pid_t pid, ppid;
	bool zombie;
	signed char in_tree;	/* -1 not known yet, 0 no, 1 yes */
	unsigned long ticks;	/* utime + stime + cutime + cstime */
	long threads;
};

struct pset {
	struct pent *v;
	size_t n, cap;
};

/* ppid, state, CPU ticks and threads of pid from /proc/PID/stat; -ESRCH
 * when gone. */
static int read_stat(pid_t pid, struct pent *e)
{
	char path[64], buf[1024], *p, state;
	unsigned long ut = 0, st = 0;
	long cut = 0, cst = 0, thr = 1;
	ssize_t n;
	int fd, pp;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ESRCH;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* the name may hold spaces and ')' */
	if (!p || sscanf(p + 1, " %c %d %*d %*d %*d %*d %*u %*u %*u %*u %*u "
			 "%lu %lu %ld %ld %*d %*d %ld", &state, &pp, &ut, &st,
			 &cut, &cst, &thr) < 2)
		return -ESRCH;
	*e = (struct pent){ .pid = pid, .ppid = (pid_t)pp,
		.zombie = state == 'Z' || state == 'X', .in_tree = -1,
		.ticks = ut + st + (unsigned long)(cut > 0 ? cut : 0) +
			 (unsigned long)(cst > 0 ? cst : 0),
		.threads = thr > 0 ? thr : 1 };
	return 0;
}

static int pset_add(struct pset *s, const struct pent *e)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct pent *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = *e;
	return 0;
}

static int by_pid(const void *a, const void *b)
{
	pid_t x = ((const struct pent *)a)->pid, y = ((const struct pent *)b)->pid;

	return (x > y) - (x < y);
}

/* Every process of /proc, with its parent, sorted by pid. */
static int scan(struct pset *s)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	struct pent e;
	int rc = 0;

	if (!d)
		return -errno;
	s->n = 0;
	while (!rc && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name);

		if (pid > 0 && read_stat(pid, &e) == 0)
			rc = pset_add(s, &e);
	}
	closedir(d);
	if (s->n)
		qsort(s->v, s->n, sizeof(*s->v), by_pid);
	return rc;
}

static struct pent *find(const struct pset *s, pid_t pid)
{
	struct pent key = { .pid = pid };

	return s->n ? bsearch(&key, s->v, s->n, sizeof(*s->v), by_pid) : NULL;
}

/* Is pid self or a descendant of self (not exclude, nor below it)?
 * Memoized: each entry's answer is found once, by climbing its parents
 * until one whose answer is known (O(n log n) for the whole set; the walk
 * was quadratic, and 1,500 escaped children took 35 s to stop). */
static bool in_tree_m(struct pset *s, pid_t self, pid_t exclude, pid_t pid)
{
	struct pent *chain[64];
	size_t n = 0;
	bool yes = false;

	for (;;) {
		struct pent *e;

		if (pid == self) {
			yes = true;
			break;
		}
		if (pid == exclude || pid <= 1 || !(e = find(s, pid)))
			break;
		if (e->in_tree >= 0) {
			yes = e->in_tree == 1;
			break;
		}
		if (n == sizeof(chain) / sizeof(chain[0])) {
			/* a deep chain: settle this part first */
			yes = in_tree_m(s, self, exclude, e->pid);
			break;
		}
		chain[n++] = e;
		pid = e->ppid;
	}
	while (n)
		chain[--n]->in_tree = yes;
	return yes;
}

static bool in_tree(const struct pset *s, pid_t self, pid_t pid)
{
	struct pent *e;

	if (pid == self)
		return true;
	e = find(s, pid);
	return e && e->in_tree == 1;
}

/* Mark the descendants of self (not exclude, nor its subtree); their
 * number. */
static size_t mark(struct pset *s, pid_t self, pid_t exclude)
{
	size_t found = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid != self &&
		    in_tree_m(s, self, exclude, s->v[i].pid))
			found++;
	for (size_t i = 0; i < s->n; i++)	/* self is not its own */
		if (s->v[i].pid == self)
			s->v[i].in_tree = 0;
	return found;
}

/* SIGKILL pid if it is still a child of the tree: through a pidfd, whose
 * process is checked after it is pinned, so a recycled pid is safe. */
static bool kill_checked(const struct pset *s, pid_t self, pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	struct pent now;
	bool sent = false;

	if (pfd < 0)
		return errno == ENOSYS && kill(pid, SIGKILL) == 0;
	if (read_stat(pid, &now) == 0 && !now.zombie &&
	    in_tree(s, self, now.ppid))
		sent = syscall(SYS_pidfd_send_signal, pfd, SIGKILL, NULL, 0) == 0;
	close(pfd);
	return sent;
}

static void reap(void)
{
	int st;

	while (waitpid(-1, &st, WNOHANG) > 0)
		;
}

/* Has pid been signalled before (so it is counted once)? */
static bool seen(pid_t *killed, size_t nkilled, pid_t pid)
{
	for (size_t i = 0; i < nkilled; i++)
		if (killed[i] == pid)
			return true;
	return false;
}

static void cg_kill(const struct proctree *pt)
{
	int fd;

	if (pt->cgfd < 0)
		return;
	fd = openat(pt->cgfd, "cgroup.kill", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "1", 1) != 1)
			(void)0;	/* the walk still kills them */
		close(fd);
	}
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One walk: kill what lives, count the new ones. 0 when nothing is left. */
static size_t walk_once(struct proctree *pt, struct pset *s, pid_t **killed,
			size_t *nkilled, size_t *cap)
{
	size_t found;

	reap();
	/* a subreaper without a child has no descendant left: an orphan is
	 * reparented to us before its parent's exit can be reaped */
	if (waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD)
		return 0;
	if (scan(s))
		return 1;
	found = mark(s, pt->self, pt->exclude);
	for (size_t i = 0; i < s->n; i++) {
		struct pent *e = &s->v[i];

		if (e->in_tree != 1 || e->zombie || !kill_checked(s, pt->self, e->pid) ||
		    seen(*killed, *nkilled, e->pid))
			continue;
		if (*nkilled == *cap) {
			pid_t *k = realloc(*killed, (*cap = *cap * 2 + 64) *
							    sizeof(pid_t));
			if (!k)
				continue;
			*killed = k;
		}
		(*killed)[(*nkilled)++] = e->pid;
	}
	return found;
}

/* The processes in the cgroup now (the lines of cgroup.procs). */
static size_t cg_count(const struct proctree *pt)
{
	char buf[4096];
	size_t n = 0;
	ssize_t r;
	int fd;

	if (pt->cgfd < 0)
		return 0;
	fd = openat(pt->cgfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		for (ssize_t i = 0; i < r; i++)
			n += buf[i] == '\n';
	close(fd);
	return n;
}

/* Is pid our child and not reaped yet (running or a zombie)? Then it
 * cannot be reused, nor the id of the group it leads. */
static bool unreaped_child(pid_t pid)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	return pid > 0 &&
	       waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0;
}

/* The command's process group at once, then reap what it held (every
 * member is a descendant: an orphan comes to us). Returns how many died
 * of that SIGKILL, the command itself not counted (a process of the
 * group that had exited on its own is reaped, not counted). Gives the
 * dying at most a second; what is left is the walk's. */
static size_t cmd_group_kill(struct proctree *pt)
{
	struct timespec ms = { 0, 1000 * 1000 };
	double end = now_s() + 1.0;
	pid_t cmd = pt->cmd, w;
	size_t n = 0;
	int st;

	pt->cmd = 0;
	if (!unreaped_child(cmd))
		return 0;
	kill(-cmd, SIGKILL);
	while ((w = waitpid(-cmd, &st, WNOHANG | __WALL)) >= 0) {
		if (w == 0) {
			if (now_s() > end)
				break;
			nanosleep(&ms, NULL);
			continue;
		}
		if (w != cmd && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL)
			n++;
	}
	return n;
}

int proctree_stop_all(struct proctree *pt, unsigned *count)
{
	struct pset s = { 0 };
	pid_t *killed = NULL;
	size_t nkilled = 0, cap = 0;
	double end = now_s() + STOP_SECONDS;
	struct timespec ms = { 0, 1000 * 1000 };
	/* counted before cgroup.kill, which leaves the walk only the dying
	 * (signalled again, so counted again: the larger count holds) */
	size_t in_cg = cg_count(pt);
	int rc = -EAGAIN;

	size_t in_group;

	cg_kill(pt);
	in_group = cmd_group_kill(pt);
	while (now_s() < end) {
		if (walk_once(pt, &s, &killed, &nkilled, &cap) == 0) {
			rc = 0;
			break;
		}
		nanosleep(&ms, NULL);
	}
	nkilled += in_group;
	*count = (unsigned)(in_cg > nkilled ? in_cg : nkilled);
	free(killed);
	free(s.v);
	return rc;
}

/* Where the cgroup v2 hierarchy is mounted (/sys/fs/cgroup, or
 * /sys/fs/cgroup/unified on a hybrid system) and the mount's root, from
 * /proc/self/mountinfo. 0 or -ENOENT. */
static int cg_mount(char *mnt, size_t msize, char *root, size_t rsize)
{
	char line[4096], r[1024], m[1024], *dash;
	FILE *f = fopen("/proc/self/mountinfo", "re");
	int rc = -ENOENT;

	if (!f)
		return -ENOENT;
	while (rc && fgets(line, sizeof(line), f)) {
		dash = strstr(line, " - cgroup2 ");
		if (dash && sscanf(line, "%*s %*s %*s %1023s %1023s", r, m) == 2 &&
		    strlen(m) < msize && strlen(r) < rsize) {
			memcpy(mnt, m, strlen(m) + 1);
			memcpy(root, r, strlen(r) + 1);
			rc = 0;
		}
	}
	fclose(f);
	return rc;
}

/* Our cgroup v2 folder, from /proc/self/cgroup ("0::/PATH"). */
static int cg_open_own(void)
{
	char line[4096], path[6200], mnt[1024], root[1024];
	FILE *f;
	int fd = -1;

	if (getenv("TXFS_NO_CGROUP") || cg_mount(mnt, sizeof(mnt), root,
						 sizeof(root)))
		return -1;	/* (the variable: tests of the fallback) */
	f = fopen("/proc/self/cgroup", "re");
	if (!f)
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		const char *rel = line + 3;
		size_t rl = strlen(root);

		if (strncmp(line, "0::/", 4))
			continue;
		line[strcspn(line, "\n")] = '\0';
		if (strcmp(root, "/") && !strncmp(rel, root, rl))
			rel += rl;	/* the mount shows a subtree only */
		snprintf(path, sizeof(path), "%s%s%s", mnt,
			 rel[0] == '/' ? "" : "/", rel);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	fclose(f);
	return fd;
}

/* Is fd a cgroup v2 folder we may make children in (owned by our uid and
 * writable: delegated to us, e.g. a systemd user scope, or root's own)? */
static bool cg_delegated(int fd)
{
	struct statfs sfs;
	struct stat st;

	return fstatfs(fd, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == CGROUP2_MAGIC &&
	       fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	       faccessat(fd, ".", W_OK, AT_EACCESS) == 0;
}

/* A child cgroup of ours, if ours is delegated to us and the child has
 * cgroup.kill (Linux 5.14). */
/* Remove the empty cgroups of txfs runs that are gone: one killed with
 * SIGKILL never removed its own (a cgroup still holding processes is
 * not empty and stays). */
static void cg_sweep(int parent)
{
	int fd = openat(parent, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return;
	}
	while ((de = readdir(d))) {
		char *end;
		long pid;

		if (strncmp(de->d_name, "txfs-run-", 9))
			continue;
		pid = strtol(de->d_name + 9, &end, 10);
		if (*end || pid <= 0 || kill((pid_t)pid, 0) == 0 ||
		    errno != ESRCH)
			continue;	/* alive (or another user's) */
		(void)unlinkat(parent, de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

static void cg_create(struct proctree *pt)
{
	if (pt->no_cgroup)
		return;
	pt->cgparent = cg_open_own();
	if (pt->cgparent >= 0 && !cg_delegated(pt->cgparent)) {
		close(pt->cgparent);
		pt->cgparent = -1;
	}
	if (pt->cgparent < 0)
		return;
	cg_sweep(pt->cgparent);
	snprintf(pt->cgname, sizeof(pt->cgname), "txfs-run-%d", (int)pt->self);
	if (mkdirat(pt->cgparent, pt->cgname, 0755) == 0) {
		pt->cgfd = openat(pt->cgparent, pt->cgname,
				  O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (pt->cgfd >= 0 &&
		    faccessat(pt->cgfd, "cgroup.kill", W_OK, 0) == 0 &&
		    faccessat(pt->cgfd, "cgroup.procs", W_OK, 0) == 0)
			return;
		proctree_end(pt);
		return;
	}
	close(pt->cgparent);
	pt->cgparent = -1;
}

int proctree_start(struct proctree *pt)
{
	pt->self = getpid();
	pt->cgfd = pt->cgparent = -1;
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0))
		return -errno;
	cg_create(pt);
	return 0;
}

void proctree_enter(const struct proctree *pt)
{
	int fd;

	if (pt->cgfd < 0)
		return;
	fd = openat(pt->cgfd, "cgroup.procs", O_WRONLY | O_CLOEXEC);
	if (fd >= 0) {
		if (write(fd, "0", 1) != 1)
			(void)0;	/* not movable here: the walk covers it */
		close(fd);
	}
}

void proctree_end(struct proctree *pt)
{
	struct timespec ms = { 0, 2 * 1000 * 1000 };

	if (pt->cgfd >= 0)
		close(pt->cgfd);
	pt->cgfd = -1;
	if (pt->cgparent < 0)
		return;
	/* the last reaped task may take a moment to leave the cgroup */
	for (int i = 0; i < 500 && unlinkat(pt->cgparent, pt->cgname,
					    AT_REMOVEDIR) && errno == EBUSY; i++)
		nanosleep(&ms, NULL);
	close(pt->cgparent);
	pt->cgparent = -1;
}

/* ---- what the tree uses (reslimit.c) --------------------------------------- */

/* The first number after key (or the file's first number, key NULL) in
 * file name of folder dfd. 0 or -errno. */
static int cg_read_u64(int dfd, const char *name, const char *key,
		       uint64_t *v)
{
	char buf[4096], *p;
	int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -EIO;
	buf[n] = '\0';
	p = buf;
	if (key) {
		size_t kl = strlen(key);

		for (p = buf; p && (strncmp(p, key, kl) || p[kl] != ' ');
		     p = strchr(p, '\n'), p = p ? p + 1 : NULL)
			;
		if (!p)
			return -ENOENT;
		p += kl;
	}
	*v = strtoull(p, NULL, 10);
	return 0;
}

/* The memory pid holds that no file on disk backs: its anonymous pages
 * and its shared memory (MAP_SHARED|MAP_ANONYMOUS, memfd and tmpfs pages
 * it maps), RssAnon + RssShmem of /proc/PID/status. A shared page counts
 * once for each process that maps it: the sum errs high, never low. */
static uint64_t anon_bytes(pid_t pid)
{
	char path[64], buf[4096], *p;
	unsigned long long kb = 0, v;
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	if ((p = strstr(buf, "\nRssAnon:")) &&
	    sscanf(p + 10, "%llu", &v) == 1)
		kb += v;
	if ((p = strstr(buf, "\nRssShmem:")) &&
	    sscanf(p + 11, "%llu", &v) == 1)
		kb += v;
	return (uint64_t)kb * 1024;
}

/* The cgroup's tasks (pids.current, else the lines of cgroup.threads)
 * and, without memory.current, the anonymous memory of its processes. */
static int cg_usage(const struct proctree *pt, bool mem,
		    struct proctree_usage *u)
{
	char buf[8192];
	FILE *f;
	int fd;

	if (cg_read_u64(pt->cgfd, "cpu.stat", "usage_usec", &u->cpu_us))
		u->cpu_us = 0;
	if (cg_read_u64(pt->cgfd, "pids.current", NULL, &u->tasks)) {
		u->tasks = 0;
		fd = openat(pt->cgfd, "cgroup.threads", O_RDONLY | O_CLOEXEC);
		f = fd >= 0 ? fdopen(fd, "r") : NULL;
		while (f && fgets(buf, sizeof(buf), f))
			u->tasks++;
		if (f)
			fclose(f);
		else if (fd >= 0)
			close(fd);
	}
	if (!mem || cg_read_u64(pt->cgfd, "memory.current", NULL, &u->mem) == 0)
		return 0;
	u->mem = 0;
	fd = openat(pt->cgfd, "cgroup.procs", O_RDONLY | O_CLOEXEC);
	f = fd >= 0 ? fdopen(fd, "r") : NULL;
	while (f && fgets(buf, sizeof(buf), f))
		u->mem += anon_bytes((pid_t)atoi(buf));
	if (f)
		fclose(f);
	else if (fd >= 0)
		close(fd);
	return 0;
}

int proctree_usage(const struct proctree *pt, bool mem,
		   struct proctree_usage *u)
{
	struct pset s = { 0 };
	long hz = sysconf(_SC_CLK_TCK);
	int rc;

	*u = (struct proctree_usage){ 0 };
	if (pt->cgfd >= 0)
		return cg_usage(pt, mem, u);
	rc = scan(&s);
	if (rc == 0) {
		mark(&s, pt->self, pt->exclude);
		for (size_t i = 0; i < s.n; i++) {
			const struct pent *e = &s.v[i];

			if (e->in_tree != 1)
				continue;
			u->tasks += e->zombie ? 0 : (uint64_t)e->threads;
			u->cpu_us += (uint64_t)e->ticks * 1000000 /
				     (uint64_t)(hz > 0 ? hz : 100);
			if (mem && !e->zombie)
				u->mem += anon_bytes(e->pid);
		}
	}
	free(s.v);
	return rc;
}

int proctree_cg_limit(const struct proctree *pt, const char *file,
		      uint64_t v)
{
	char buf[32];
	int fd, n;

	if (pt->cgfd < 0)
		return -ENOENT;
	fd = openat(pt->cgfd, file, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%llu", (unsigned long long)v);
	n = write(fd, buf, (size_t)n) == n ? 0 : -errno;
	close(fd);
	return n;
}

int proctree_cg_read(const struct proctree *pt, const char *file,
		     const char *key, uint64_t *v)
{
	return pt->cgfd < 0 ? -ENOENT : cg_read_u64(pt->cgfd, file, key, v);
}

void proctree_cg_kill(const struct proctree *pt)
{
	cg_kill(pt);
}
