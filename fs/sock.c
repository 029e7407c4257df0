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
 * A peer running under a seccomp filter (a command confined by txfs run)
 * is refused: the confined agent must not commit, roll back or reload.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "txfs.h"
#include "commit.h"

#define SOCK_NAME "ctl.sock"
#define MAX_ARGS 4096
#define MAX_REQ (1u << 20)

static int sock_addr(int dirfd, struct sockaddr_un *a)
{
	memset(a, 0, sizeof(*a));
	a->sun_family = AF_UNIX;
	snprintf(a->sun_path, sizeof(a->sun_path), "/proc/self/fd/%d/%s",
		 dirfd, SOCK_NAME);
	return 0;
}

/* Is the peer confined by a seccomp filter? */
static bool peer_confined(int cfd)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);
	char path[64], line[256];
	bool confined = true;	/* unknown: refuse */
	FILE *f;

	if (getsockopt(cfd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return true;
	snprintf(path, sizeof(path), "/proc/%d/status", (int)cr.pid);
	f = fopen(path, "re");
	if (!f)
		return true;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "Seccomp:", 8))
			confined = atoi(line + 8) == 2;
	fclose(f);
	return confined;
}

static int read_request(int cfd, char *buf, size_t size, char **argv,
			int *argc)
{
	size_t len = 0;
	int n = 0;

	for (;;) {
		ssize_t r = read(cfd, buf + len, size - len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EPROTO;
		len += (size_t)r;
		/* complete when it ends with an empty string: "\0\0" */
		if (len >= 2 && buf[len - 1] == '\0' && buf[len - 2] == '\0')
			break;
		if (len == 1 && buf[0] == '\0')
			break;
		if (len == size)
			return -E2BIG;
	}
	for (size_t i = 0; i < len && n < MAX_ARGS;) {
		size_t l = strlen(buf + i);

		if (!l)
			break;
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

/* "real PATH": the real file's content, for txfs diff. */
static int send_real(struct txfs *fs, int cfd, const char *path)
{
	char buf[65536];
	ssize_t n;
	int fd = lower_open(fs, path, O_RDONLY);

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

static int serve_one(struct txfs *fs, int cfd)
{
	char *buf = malloc(MAX_REQ), **argv = calloc(MAX_ARGS, sizeof(char *));
	struct txn_report r = { 0 };
	int argc = 0, rc = -ENOMEM;

	if (!buf || !argv)
		goto out;
	rc = read_request(cfd, buf, MAX_REQ, argv, &argc);
	if (peer_confined(cfd)) {	/* read first: the client gets EPERM */
		rc = -EPERM;
		reply(cfd, rc, "refused: a confined process may not control "
		      "the transaction\n");
		goto out;
	}
	if (rc || !argc) {
		reply(cfd, rc ? rc : -EINVAL, "bad request\n");
		goto out;
	}
	rc = sock_dispatch(fs, cfd, argc, argv, &r);
	if (rc != SOCK_REPLIED)
		reply(cfd, rc, r.text ? r.text : "");
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
		bool force = argc > 1 && !strcmp(argv[1], "--force");

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
	if (!strncmp(verb, "cmd-", 4) || !strcmp(verb, "changes-since") ||
	    !strcmp(verb, "control-check"))
		return session_dispatch(fs, argc, argv, r);
	if (!strcmp(verb, "policy-reload"))
		return txfs_reload_policy(fs, &r->text);
	if (asprintf(&r->text, "unknown request '%s'\n", verb) < 0)
		r->text = NULL;
	return -EINVAL;
}

static void *sock_main(void *arg)
{
	struct txfs *fs = arg;

	for (;;) {
		struct pollfd p = { .fd = fs->sockfd, .events = POLLIN };
		int cfd;

		if (poll(&p, 1, -1) < 0 && errno != EINTR)
			break;
		if (atomic_load(&fs->sock_stop))
			break;
		cfd = accept4(fs->sockfd, NULL, NULL, SOCK_CLOEXEC);
		if (cfd < 0)
			continue;
		serve_one(fs, cfd);
		close(cfd);
	}
	return NULL;
}

int sock_start(struct txfs *fs)
{
	struct sockaddr_un a;
	int rc;

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
	close(fs->sockfd);
	fs->sockfd = -1;
	unlinkat(fs->statefd, SOCK_NAME, 0);
}
