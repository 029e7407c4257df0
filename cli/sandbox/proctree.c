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
	bool zombie, in_tree;
};

struct pset {
	struct pent *v;
	size_t n, cap;
};

/* ppid and state of pid from /proc/PID/stat; -ESRCH when gone. */
static int read_stat(pid_t pid, pid_t *ppid, bool *zombie)
{
	char path[64], buf[512], *p, state;
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
	if (!p || sscanf(p + 1, " %c %d", &state, &pp) != 2)
		return -ESRCH;
	*zombie = state == 'Z' || state == 'X';
	*ppid = (pid_t)pp;
	return 0;
}

static int pset_add(struct pset *s, pid_t pid, pid_t ppid, bool zombie)
{
	if (s->n == s->cap) {
		size_t cap = s->cap ? s->cap * 2 : 256;
		struct pent *v = realloc(s->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct pent){ pid, ppid, zombie, false };
	return 0;
}

/* Every process of /proc, with its parent. */
static int scan(struct pset *s)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	int rc = 0;

	if (!d)
		return -errno;
	s->n = 0;
	while (!rc && (de = readdir(d))) {
		pid_t pid = (pid_t)atoi(de->d_name), ppid;
		bool z;

		if (pid > 0 && read_stat(pid, &ppid, &z) == 0)
			rc = pset_add(s, pid, ppid, z);
	}
	closedir(d);
	return rc;
}

static bool in_tree(const struct pset *s, pid_t self, pid_t pid)
{
	if (pid == self)
		return true;
	for (size_t i = 0; i < s->n; i++)
		if (s->v[i].pid == pid)
			return s->v[i].in_tree;
	return false;
}

/* Mark the descendants of self (not exclude, nor its subtree); their
 * number. */
static size_t mark(struct pset *s, pid_t self, pid_t exclude)
{
	size_t found = 0;
	bool more = true;

	while (more) {
		more = false;
		for (size_t i = 0; i < s->n; i++) {
			struct pent *e = &s->v[i];

			if (e->in_tree || e->pid == self || e->pid == exclude ||
			    !in_tree(s, self, e->ppid))
				continue;
			e->in_tree = more = true;
			found++;
		}
	}
	return found;
}

/* SIGKILL pid if it is still a child of the tree: through a pidfd, whose
 * process is checked after it is pinned, so a recycled pid is safe. */
static bool kill_checked(const struct pset *s, pid_t self, pid_t pid)
{
	int pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	pid_t ppid;
	bool z, sent = false;

	if (pfd < 0)
		return errno == ENOSYS && kill(pid, SIGKILL) == 0;
	if (read_stat(pid, &ppid, &z) == 0 && !z && in_tree(s, self, ppid))
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

		if (!e->in_tree || e->zombie || !kill_checked(s, pt->self, e->pid) ||
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

int proctree_stop_all(struct proctree *pt, unsigned *count)
{
	struct pset s = { 0 };
	pid_t *killed = NULL;
	size_t nkilled = 0, cap = 0;
	double end = now_s() + STOP_SECONDS;
	struct timespec ms = { 0, 1000 * 1000 };
	int rc = -EAGAIN;

	cg_kill(pt);
	while (now_s() < end) {
		if (walk_once(pt, &s, &killed, &nkilled, &cap) == 0) {
			rc = 0;
			break;
		}
		nanosleep(&ms, NULL);
	}
	*count = (unsigned)nkilled;
	free(killed);
	free(s.v);
	return rc;
}

/* Our cgroup v2 folder, from /proc/self/cgroup ("0::/PATH"). */
static int cg_open_own(void)
{
	char line[4096], path[4200];
	FILE *f = fopen("/proc/self/cgroup", "re");
	int fd = -1;

	if (!f)
		return -1;
	while (fd < 0 && fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::/", 4))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s", line + 3);
		fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	}
	fclose(f);
	return fd;
}

/* Is fd a cgroup v2 folder delegated to us (owned by our uid, not root:
 * root's cgroups belong to the service manager, not to us)? */
static bool cg_delegated(int fd)
{
	struct statfs sfs;
	struct stat st;

	return fstatfs(fd, &sfs) == 0 &&
	       (unsigned long)sfs.f_type == CGROUP2_MAGIC &&
	       fstat(fd, &st) == 0 && st.st_uid == geteuid() &&
	       st.st_uid != 0 && faccessat(fd, ".", W_OK, 0) == 0;
}

/* A child cgroup of ours, if ours is delegated to us and the child has
 * cgroup.kill (Linux 5.14). */
static void cg_create(struct proctree *pt)
{
	pt->cgparent = cg_open_own();
	if (pt->cgparent >= 0 && !cg_delegated(pt->cgparent)) {
		close(pt->cgparent);
		pt->cgparent = -1;
	}
	if (pt->cgparent < 0)
		return;
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
