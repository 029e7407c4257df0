// SPDX-License-Identifier: Apache-2.0
/*
 * supervise_helper.c - connects to abstract unix sockets inside the
 * sandbox's Landlock domain.
 *
 * Landlock ABI 6 scopes abstract unix sockets: a sandboxed process may
 * connect only to those created inside its own domain. The supervisor runs
 * outside that domain, so a connect it performed would bypass the scope,
 * and letting the kernel continue the target's own connect would re-read an
 * address the target can swap after the check. So the child, after
 * confine_apply() and before loading the notify filter, starts a helper
 * in the same domain, without the notify filter: one clone(CLONE_PARENT),
 * so the helper is a child of the supervising process (never of the
 * command, whose wait() must not see it), which reaps it itself when the
 * command is done (sup_free): the process-tree stop then finds nothing of
 * ours to kill. The supervisor sends it the target's socket (SCM_RIGHTS)
 * and the address it checked; the helper connects and answers the result:
 * the kernel applies the scope exactly as for the target. If the command
 * kills the helper, abstract connects fail (ECONNREFUSED): closed, not open.
 * The helper exits when the supervisor closes its end; sup_free, after
 * the command is waited for, also kills it through a pidfd and reaps it. Its name is "txfs-sup-helper" (PR_SET_NAME).
 */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "supervise_int.h"

struct helper_req {
	struct sockaddr_storage addr;
	socklen_t len;
};

static void helper_loop(int sp)
{
	for (;;) {
		struct helper_req req;
		char cbuf[CMSG_SPACE(sizeof(int))];
		struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
		struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
				    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
		struct cmsghdr *cm;
		ssize_t n = recvmsg(sp, &m, MSG_CMSG_CLOEXEC);
		int fd = -1, r;

		if (n <= 0 && !(n < 0 && errno == EINTR))
			_exit(0);
		cm = CMSG_FIRSTHDR(&m);
		if (cm && cm->cmsg_type == SCM_RIGHTS)
			memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
		if (n != (ssize_t)sizeof(req) || fd < 0 || req.len > sizeof(req.addr))
			r = -EINVAL;
		else
			r = connect(fd, (struct sockaddr *)&req.addr, req.len) < 0 ? -errno : 0;
		if (fd >= 0)
			close(fd);
		if (send(sp, &r, sizeof(r), MSG_NOSIGNAL) != (ssize_t)sizeof(r))
			_exit(0);
	}
}

int sup_helper_start(pid_t *pid)
{
	int sp[2];
	pid_t p;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sp) < 0)
		return -errno;
	/* Raw clone, as fork() without atfork handlers: we are
	 * single-threaded, and the helper calls no libc function that needs
	 * its thread data (no malloc, no stdio). */
	p = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
	if (p < 0) {
		close(sp[0]);
		close(sp[1]);
		return -errno;
	}
	if (p == 0) {
		/* A name the run's process sweep can recognise (and count apart). */
		(void)prctl(PR_SET_NAME, "txfs-sup-helper", 0, 0, 0);
		/* Hold nothing of the command's (its stdout, pipes): only sp. */
		if (dup2(sp[1], 0) < 0)
			_exit(1);
		close_range(1, ~0U, 0);
		helper_loop(0);
	}
	close(sp[1]);
	*pid = p;
	return sp[0];
}

int sup_helper_connect(struct sup *s, int sock, const void *addr, socklen_t len)
{
	struct helper_req req = { .len = len };
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { .iov_base = &req, .iov_len = sizeof(req) };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1,
			    .msg_control = cbuf, .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&m);
	int r = -ECONNREFUSED;

	if (s->helper < 0 || len > sizeof(req.addr))
		return -ECONNREFUSED;
	memcpy(&req.addr, addr, len);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &sock, sizeof(int));
	pthread_mutex_lock(&s->helper_lock);	/* one request, one answer */
	if (sendmsg(s->helper, &m, MSG_NOSIGNAL) == (ssize_t)sizeof(req) &&
	    recv(s->helper, &r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = -ECONNREFUSED;
	pthread_mutex_unlock(&s->helper_lock);
	return r;
}
