/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sock.c - the control socket STATE/ctl.sock: how the txfs command talks
 * to its daemon without going through the mount (so it works while the
 * policy denies .txfs/ctl verbs to the agent).
 *
 * Protocol, one request a connection: the client sends its arguments as
 * NUL-terminated strings followed by an empty string; the daemon answers
 * "ERRNO\n" (0 on success, else a positive errno) then a text, and closes.
 *
 * The peer is checked as soon as it is accepted, before a byte is read:
 * it must run as the daemon's uid (or root), and not under a seccomp
 * filter (a command confined by txfs run must not commit, roll back or
 * reload). Each accepted connection is served by a thread of its own (at
 * most SOCK_MAX_CONN at once) with a deadline of SOCK_DEADLINE_MS to send
 * its request and to take each part of the answer, so a client that
 * connects and stays silent delays nobody: not a commit, not a rollback.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "session.h"

#define SOCK_NAME "ctl.sock"
#define MAX_ARGS 4096
#define MAX_REQ (1u << 20)
#define SOCK_MAX_CONN 64
#define SOCK_DEADLINE_MS 3000
#ifndef SO_PEERPIDFD
#define SO_PEERPIDFD 77		/* Linux 6.5 */
#endif

static int sock_addr(int dirfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s",
		 dirfd, SOCK_NAME);
	return 0;
}

/* Is the peer confined by a seccomp filter? */
static bool peer_confined(pid_t pid)
{
	char path[64], line[256];
	bool confined = true;	/* unknown: refuse */
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			confined = atoi(line + 8) == 2;
	fclose(f);
	return confined;
}

/* After /proc/PID/status was read: is PID still the peer process? With
 * SO_PEERPIDFD a pidfd pins the peer; if it is still alive, the status
 * read was its own, not a process that got its pid after it exited. */
static bool peer_still_there(int cfd)
{
	socklen_t len = sizeof(int);
	int pfd = -1;
	bool alive;

	if (getsockopt(cfd, SOL_SOCKET, SO_PEERPIDFD, &pfd, &len))
		return errno == ENOPROTOOPT;	/* older kernel: the pid alone */
	if (pfd < 0)
		return false;
	alive = syscall(SYS_pidfd_send_signal, pfd, 0, NULL, 0) == 0;
	close(pfd);
	return alive;
}

/* May this peer talk to us? NULL if so, else why not (for the reply). */
static const char *peer_refused(int cfd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return "refused: unknown peer\n";
	if (cr.uid != geteuid() && cr.uid != 0)
		return "refused: the peer runs as another user\n";
	if (peer_confined(cr.pid) || !peer_still_there(cfd))
		return "refused: a confined process may not control the "
		       "transaction\n";
	return NULL;
}

static long ms_left(const struct timespec *end)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (long)(end->tv_sec - now.tv_sec) * 1000 +
	       (end->tv_nsec - now.tv_nsec) / 1000000;
}

/* read(2) that gives up at the deadline (-ETIMEDOUT). */
static ssize_t read_by(int cfd, char *buf, size_t size,
		       const struct timespec *end)
{
	struct pollfd p = { .fd = cfd, .events = POLLIN };
	long left = ms_left(end);
	int n;

	if (left <= 0)
		return -ETIMEDOUT;
	n = poll(&p, 1, (int)left);
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ETIMEDOUT;
	n = (int)read(cfd, buf, size);
	if (n < 0)
		return errno == EINTR || errno == EAGAIN ? 0 : -errno;
	return n == 0 ? -EPROTO : n;
}

static int read_request(int cfd, char *buf, size_t size, char **argv,
			int *argc)
{
	struct timespec end;
	size_t len = 0;
	int n = 0;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += SOCK_DEADLINE_MS / 1000;
	for (;;) {
		ssize_t r = read_by(cfd, buf + len, size - len, &end);

		if (r < 0)
			return (int)r;
		len += (size_t)r;
		/* complete when it ends with an empty string: "\0\0" */
		if (len >= 2 && buf[len - 1] == '\0' && buf[len - 2] == '\0')
			break;
		if (len == 1 && buf[0] == '\0')
			break;
		if (len == size)
			return -E2BIG;
	}
	for (size_t i = 0; i < len;) {
		size_t l = strlen(buf + i);

		if (!l)
			break;
		if (n == MAX_ARGS)	/* never cut short (a logged argv) */
			return -E2BIG;
		argv[n++] = buf + i;
		i += l + 1;
	}
	*argc = n;
	return 0;
}

static void reply(int cfd, int err, const char *text)
{
	char head[16];
	int n = snprintf(head, sizeof(head), "%d\n", err < 0 ? -err : err);
	ssize_t w = send(cfd, head, (size_t)n, MSG_NOSIGNAL);

	if (w == n && text)
		for (size_t off = 0, len = strlen(text); off < len;) {
			w = send(cfd, text + off, len - off, MSG_NOSIGNAL);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
}

/* The daemon serves no content the policy keeps from reads, whoever asks
 * (txfs diff for a person or for an agent's MCP tool): a hidden path
 * answers as missing, a read-denied one is refused and its veto logged
 * (judged for the socket's peer: `except-by` names the program asking). */
static int may_read(struct txfs *fs, int cfd, const char *path)
{
	const struct policy *p = atomic_load(&fs->policy);
	struct req_ctx c = { 0 };
	struct ucred cr;
	socklen_t l = sizeof(cr);

	if (!p)
		return 0;
	if (policy_is_hidden(p, path, strlen(path)))
		return -ENOENT;
	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &l) == 0) {
		c.uid = cr.uid;
		c.gid = cr.gid;
		c.pid = cr.pid;
	}
	return guard_path(fs, POLICY_OP_READ, path, &c);
}

/* "real PATH": the real file's content, for txfs diff. */
static int send_real(struct txfs *fs, int cfd, const char *path)
{
	char buf[65536];
	ssize_t n;
	int fd = may_read(fs, cfd, path);

	if (fd == 0)
		fd = lower_open(fs, path, O_RDONLY);

	if (fd < 0) {
		reply(cfd, fd, strerror(-fd));
		return fd;
	}
	reply(cfd, 0, NULL);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (send(cfd, buf, (size_t)n, MSG_NOSIGNAL) != n)
			break;
	close(fd);
	return 0;
}

/* Regular real file path: its data (malloc'd) and mode. */
static int read_real(struct txfs *fs, const char *path, char **buf,
		     size_t *len, mode_t *mode)
{
	struct stat st;
	size_t got = 0;
	int fd = lower_open(fs, path, O_RDONLY), rc = 0;

	*buf = NULL;
	if (fd < 0)
		return fd;
	if (fstat(fd, &st))
		rc = -errno;
	else if (!S_ISREG(st.st_mode))
		rc = S_ISDIR(st.st_mode) ? -EISDIR : -ELOOP;
	else if (!(*buf = malloc((size_t)st.st_size + 1)))
		rc = -ENOMEM;
	while (rc == 0 && got < (size_t)st.st_size) {
		ssize_t n = read(fd, *buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			rc = n ? -errno : 0;
			break;	/* shorter than it was: what there is */
		}
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	*mode = st.st_mode;
	if (rc) {
		free(*buf);
		*buf = NULL;
	}
	return rc;
}

/* "sp-read at|next|real NAME PATH": "MODE\n" (octal) and the file's data
 * as it was at savepoint NAME (since_read), or in the real directory
 * (real: NAME is ignored), for txfs diff. */
static int send_at(struct txfs *fs, int cfd, char **argv)
{
	char *buf = NULL, head[32];
	size_t len = 0, off = 0;
	mode_t mode = 0;
	int n, rc = may_read(fs, cfd, argv[3]);

	if (rc == 0)
		rc = !strcmp(argv[1], "real") ?
			     read_real(fs, argv[3], &buf, &len, &mode) :
			     since_read(fs, argv[1], argv[2], argv[3], &buf,
					&len, &mode);

	if (rc) {
		reply(cfd, rc, strerror(-rc));
		return rc;
	}
	reply(cfd, 0, NULL);
	n = snprintf(head, sizeof(head), "%o\n", (unsigned)mode);
	if (send(cfd, head, (size_t)n, MSG_NOSIGNAL) == n)
		while (off < len) {
			ssize_t w = send(cfd, buf + off, len - off,
					 MSG_NOSIGNAL);

			if (w <= 0)
				break;
			off += (size_t)w;
		}
	free(buf);
	return 0;
}

static int serve_one(struct txfs *fs, int cfd)
{
	char *buf = malloc(MAX_REQ), **argv = calloc(MAX_ARGS, sizeof(char *));
	struct txn_report r = { 0 };
	int argc = 0, rc = -ENOMEM;

	if (!buf || !argv)
		goto out;
	rc = read_request(cfd, buf, MAX_REQ, argv, &argc);
	if (rc || !argc) {
		reply(cfd, rc ? rc : -EINVAL, rc == -E2BIG ? "bad request: "
		      "too many arguments (4096 at most, the request's own "
		      "included: txfs exec takes 4094) or more than 1 MiB\n" : "bad request\n");
		goto out;
	}
	rc = sock_dispatch(fs, cfd, argc, argv, &r);
	if (rc != SOCK_REPLIED)
		reply(cfd, rc, r.text ? r.text : "");
	if (!strcmp(argv[0], "commit")) {	/* once the client has it all */
		shutdown(cfd, SHUT_WR);
		txn_history_sync(fs);
	}
out:
	free(r.text);
	free(argv);
	free(buf);
	return rc;
}

int sock_dispatch(struct txfs *fs, int cfd, int argc, char **argv,
		  struct txn_report *r)
{
	const char *verb = argv[0];
	bool json = argc > 1 && !strcmp(argv[1], "--json");
	int rc;

	if (!strcmp(verb, "commit")) {
		/* "--via=WHAT" first: what asked, for the history record */
		bool via = argc > 1 && !strncmp(argv[1], "--via=", 6);
		bool force;

		if (via) {
			argv++;
			argc--;
		}
		snprintf(fs->commit_via, sizeof(fs->commit_via), "%s",
			 via ? argv[0] + 6 : "txfs commit");
		argv[0] = (char *)verb;
		force = argc > 1 && !strcmp(argv[1], "--force");
		/* "--": the paths follow (a path may be named --force) */
		if (argc > 1 + force && !strcmp(argv[1 + force], "--")) {
			if (argc == 2 + force) {
				r->text = strdup("commit refused: '--' and no "
						 "path; nothing was committed\n");
				return -EINVAL;
			}
			return txn_commit_paths(fs, force,
						(const char *const *)argv +
							2 + force,
						(size_t)(argc - 2 - force), r);
		}
		if (argc > 1 + force)
			return txn_commit_paths(fs, force,
						(const char *const *)argv +
							1 + force,
						(size_t)(argc - 1 - force), r);
		return txn_commit(fs, force, r);
	}
	if (!strcmp(verb, "rollback"))
		return txn_rollback(fs, argc > 1 ? argv[1] : NULL, r);
	if (!strcmp(verb, "savepoint") && argc == 2)
		return txn_savepoint(fs, argv[1], r);
	if (!strcmp(verb, "release") && argc == 2)
		return txn_release(fs, argv[1], r);
	if (!strcmp(verb, "status") || !strcmp(verb, "changes") ||
	    !strcmp(verb, "log")) {
		size_t len = 0;

		rc = ctl_text(fs, verb, json, &r->text, &len);
		return rc;
	}
	if (!strcmp(verb, "real") && argc == 2) {
		send_real(fs, cfd, argv[1]);
		return SOCK_REPLIED;
	}
	if (!strcmp(verb, "sp-read") && argc == 4) {
		send_at(fs, cfd, argv);
		return SOCK_REPLIED;
	}
	if (!strncmp(verb, "cmd-", 4) || !strcmp(verb, "changes-since") ||
	    !strcmp(verb, "control-check"))
		return session_dispatch(fs, cfd, argc, argv, r);
	if (!strcmp(verb, "policy-reload"))
		return txfs_reload_policy(fs, &r->text);
	if (!strcmp(verb, "history-sync")) {	/* the last commit's record */
		txn_history_sync(fs);		/* written: txfs history, undo */
		return 0;
	}
	if (asprintf(&r->text, "unknown request '%s'\n", verb) < 0)
		r->text = NULL;
	return -EINVAL;
}

/* Answer and close without reading; what the peer sent is dropped
 * after our answer, so it still reads it rather than a reset. */
static void refuse(int cfd, int err, const char *why)
{
	char sink[4096];

	reply(cfd, err, why);
	shutdown(cfd, SHUT_WR);
	for (int i = 0; i < 64 &&	/* bounded: a peer may keep sending */
	     recv(cfd, sink, sizeof(sink), MSG_DONTWAIT) > 0; i++)
		;
	close(cfd);
}

struct conn {
	struct txfs *fs;
	int cfd;
};

static void *conn_main(void *arg)
{
	struct conn *c = arg;
	struct txfs *fs = c->fs;

	serve_one(fs, c->cfd);
	close(c->cfd);
	free(c);
	pthread_mutex_lock(&fs->sock_lock);
	fs->sock_active--;
	pthread_cond_broadcast(&fs->sock_idle);
	pthread_mutex_unlock(&fs->sock_lock);
	return NULL;
}

/* Serve cfd on a detached thread of its own; closes cfd either way. */
static void serve_async(struct txfs *fs, int cfd)
{
	struct timeval tv = { .tv_sec = SOCK_DEADLINE_MS / 1000 };
	struct conn *c = malloc(sizeof(*c));
	pthread_attr_t at;
	pthread_t th;
	bool full;

	pthread_mutex_lock(&fs->sock_lock);
	full = fs->sock_active >= SOCK_MAX_CONN;
	if (!full && c)
		fs->sock_active++;
	pthread_mutex_unlock(&fs->sock_lock);
	if (full || !c) {
		free(c);
		refuse(cfd, -EBUSY, "busy: too many clients at once\n");
		return;
	}
	/* a client that stops reading the answer cannot hold a thread */
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	*c = (struct conn){ fs, cfd };
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&th, &at, conn_main, c) == 0) {
		pthread_attr_destroy(&at);
		return;
	}
	pthread_attr_destroy(&at);
	free(c);
	pthread_mutex_lock(&fs->sock_lock);
	fs->sock_active--;
	pthread_mutex_unlock(&fs->sock_lock);
	refuse(cfd, -EAGAIN, "busy: cannot start a thread\n");
}

static void *sock_main(void *arg)
{
	struct txfs *fs = arg;

	for (;;) {
		struct pollfd p = { .fd = fs->sockfd, .events = POLLIN };
		const char *why;
		int cfd;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (atomic_load(&fs->sock_stop))
			break;
		cfd = accept4(fs->sockfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		why = peer_refused(cfd);	/* before reading a byte */
		if (why)
			refuse(cfd, -EPERM, why);
		else
			serve_async(fs, cfd);
	}
	return NULL;
}

int sock_start(struct txfs *fs)
{
	struct sockaddr_un a;
	int rc;

	pthread_mutex_init(&fs->sock_lock, NULL);
	pthread_cond_init(&fs->sock_idle, NULL);
	sock_addr(fs->statefd, &a);
	unlinkat(fs->statefd, SOCK_NAME, 0);
	fs->sockfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fs->sockfd < 0)
		return -errno;
	if (bind(fs->sockfd, (struct sockaddr *)&a, sizeof(a)) ||
	    fchmodat(fs->statefd, SOCK_NAME, 0600, 0) ||
	    listen(fs->sockfd, 16)) {
		rc = -errno;
		close(fs->sockfd);
		fs->sockfd = -1;
		return rc;
	}
	rc = pthread_create(&fs->sock_thread, NULL, sock_main, fs);
	if (rc) {
		close(fs->sockfd);
		fs->sockfd = -1;
		return -rc;
	}
	return 0;
}

void sock_stop(struct txfs *fs)
{
	if (fs->sockfd < 0)
		return;
	atomic_store(&fs->sock_stop, true);
	shutdown(fs->sockfd, SHUT_RDWR);
	pthread_join(fs->sock_thread, NULL);
	/* connection threads end by their deadline at the latest */
	pthread_mutex_lock(&fs->sock_lock);
	while (fs->sock_active)
		pthread_cond_wait(&fs->sock_idle, &fs->sock_lock);
	pthread_mutex_unlock(&fs->sock_lock);
	close(fs->sockfd);
	fs->sockfd = -1;
	unlinkat(fs->statefd, SOCK_NAME, 0);
}
