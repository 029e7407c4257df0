// SPDX-License-Identifier: Apache-2.0
/*
 * supervise_ops.c - the supervisor's socket and metadata handlers (policy:
 * supervise.h; race rules: supervise.c). Every allowed call is performed
 * here, on our copy of the target's descriptor and on an O_PATH descriptor
 * of the checked object ("/proc/self/fd/N"), and its result is the reply.
 * Calls that may block (connect or send on a blocking socket) run in a
 * detached worker thread so that one stuck peer does not stall the others.
 */
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <signal.h>
#include <limits.h>
#include <seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

#include "supervise_int.h"

#define SEND_MAX (8u << 20)	/* bytes of one emulated send */
#define CONTROL_MAX 4096

/* ---- socket calls ------------------------------------------------------------- */

struct sock_job {
	struct sup *s;
	uint64_t id;
	bool connect, via_helper;
	pid_t pid, tgid;	/* the caller: thread id, its process (or 0) */
	int sock, obj;		/* our copies; obj: checked socket file or -1 */
	struct sockaddr_storage addr;
	socklen_t addrlen;	/* 0: no address (send on a connected socket) */
	char *data, *control;
	size_t len, controllen;
	size_t sent;		/* sent by try_now() before blocking */
	int flags;
	int fds[CONTROL_MAX / sizeof(int)];
	size_t nfds;		/* SCM_RIGHTS descriptors taken from the target */
};

static void job_free(struct sock_job *j)
{
	size_t i;

	if (j->sock >= 0)
		close(j->sock);
	if (j->obj >= 0)
		close(j->obj);
	for (i = 0; i < j->nfds; i++)
		close(j->fds[i]);
	free(j->data);
	free(j->control);
	free(j);
}

static bool connect_allowed(const struct sup *s, const char *real)
{
	size_t i;

	for (i = 0; i < s->o.n_hidden; i++)
		if (sup_beneath(real, s->o.hidden[i]))
			return false;
	if (sup_beneath(real, s->o.workspace))
		return true;
	for (i = 0; i < s->o.n_connect_allow; i++)
		if (fnmatch(s->o.connect_allow[i], real, FNM_PATHNAME) == 0)
			return true;
	return false;
}

/* A pathname unix address: check the socket file, aim at its O_PATH fd. */
static int dest_unix_path(struct sup_call *c, struct sock_job *j,
			  const struct sockaddr_un *un, size_t plen)
{
	char path[sizeof(un->sun_path) + 1], real[PATH_MAX];
	struct sockaddr_un *to = (struct sockaddr_un *)&j->addr;
	struct stat st;
	int rc;

	memcpy(path, un->sun_path, plen);
	path[plen] = '\0';
	j->obj = sup_open_at(c, (uint64_t)(int64_t)AT_FDCWD, path, O_PATH);
	if (j->obj < 0)
		return j->obj;
	if (fstat(j->obj, &st) < 0 || !S_ISSOCK(st.st_mode))
		return -ECONNREFUSED;
	rc = sup_fd_path(j->obj, real, sizeof(real));
	if (rc < 0)
		return rc;
	if (!connect_allowed(c->s, real))
		return sup_veto(c->s, c, j->connect ? "connect to" : "send to", real,
				"a unix socket outside the workspace (policy: allow connect)");
	memset(to, 0, sizeof(*to));
	to->sun_family = AF_UNIX;
	snprintf(to->sun_path, sizeof(to->sun_path), "/proc/self/fd/%d", j->obj);
	j->addrlen = (socklen_t)(offsetof(struct sockaddr_un, sun_path) +
				 strlen(to->sun_path) + 1);
	return 0;
}

/* Decide the destination raw[0..len) (our copy); fills j->addr. */
static int dest(struct sup_call *c, struct sock_job *j, const struct sockaddr_storage *raw,
		size_t len)
{
	const struct sockaddr_un *un = (const struct sockaddr_un *)raw;
	size_t off = offsetof(struct sockaddr_un, sun_path);

	if (len < sizeof(sa_family_t))
		return -EINVAL;
	memcpy(&j->addr, raw, len);
	j->addrlen = (socklen_t)len;
	if (raw->ss_family != AF_UNIX) {
		if (c->s->o.no_network && raw->ss_family != AF_UNSPEC)
			return sup_veto(c->s, c, "connect", "(network address)",
					"--no-network or `network deny`");
		return 0;
	}
	if (len <= off)
		return 0;	/* unnamed: autobind or disconnect */
	if (un->sun_path[0] == '\0') {
		/* Abstract: Landlock ABI 6 scopes them to the sandbox, a scope
		 * the supervisor (outside it) cannot apply: the helper inside
		 * the domain connects (supervise_helper.c); a datagram by
		 * address cannot be handed over that way: refused. */
		if (c->s->landlock_abi < 6)
			return 0;
		if (!j->connect)
			return sup_veto(c->s, c, "send to", "(abstract unix socket)",
					"datagrams by address to abstract sockets");
		j->via_helper = true;
		return 0;
	}
	return dest_unix_path(c, j, un, strnlen(un->sun_path, len - off));
}

static int64_t perform(struct sock_job *j)
{
	struct iovec iov = { .iov_base = j->data, .iov_len = j->len };
	struct msghdr m = {
		.msg_name = j->addrlen ? &j->addr : NULL, .msg_namelen = j->addrlen,
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = j->controllen ? j->control : NULL,
		.msg_controllen = j->controllen,
	};
	ssize_t n;

	if (j->via_helper)
		return sup_helper_connect(j->s, j->sock, &j->addr, j->addrlen);
	if (j->connect)
		return connect(j->sock, (struct sockaddr *)&j->addr, j->addrlen) < 0 ? -errno : 0;
	n = sendmsg(j->sock, &m, j->flags | MSG_NOSIGNAL);
	return n < 0 ? -errno : n;
}

/* The kernel would have sent SIGPIPE to the caller (we send with
 * MSG_NOSIGNAL, which must not kill txfs run). */
static void sigpipe(const struct sock_job *j, int64_t r)
{
	if (r != -EPIPE || j->connect || (j->flags & MSG_NOSIGNAL))
		return;
	/* to the calling thread, as the kernel does (send_sig on current) */
	if (j->tgid > 0)
		(void)syscall(SYS_tgkill, j->tgid, j->pid, SIGPIPE);
	else
		(void)kill(j->pid, SIGPIPE);
}

static void finish_job(struct sock_job *j)
{
	int64_t r = perform(j);

	sigpipe(j, r);

	if (j->sent > 0)	/* a first part went out in try_now() */
		r = r < 0 ? (int64_t)j->sent : r + (int64_t)j->sent;

	(void)sup_reply(j->s, j->id, r < 0 ? 0 : r, r < 0 ? (int)r : 0);
	job_free(j);
}

static void *worker(void *arg)
{
	struct sock_job *j = arg;
	struct sup *s = j->s;

	finish_job(j);
	sup_unref(s);
	return NULL;
}

/*
 * A send on a blocking socket, tried without blocking first (the common
 * case, and no thread to start). Returns 1 when done (replied), 0 when the
 * rest must block: then j holds what is left and j->sent what went out.
 */
static int try_now(struct sock_job *j)
{
	int64_t r;

	j->flags |= MSG_DONTWAIT;
	r = perform(j);
	j->flags &= ~MSG_DONTWAIT;
	sigpipe(j, r);
	if (r == -EAGAIN)
		return 0;
	if (r >= 0 && (size_t)r < j->len) {	/* stream: the rest blocks */
		memmove(j->data, j->data + r, j->len - (size_t)r);
		j->len -= (size_t)r;
		j->sent = (size_t)r;
		j->controllen = 0;	/* went with the first part */
		return 0;
	}
	(void)sup_reply(j->s, j->id, r < 0 ? 0 : r, r < 0 ? (int)r : 0);
	job_free(j);
	return 1;
}

/* Perform now, or in a worker when the call could block. */
static int dispatch(struct sock_job *j)
{
	pthread_attr_t at;
	pthread_t t;
	int fl = fcntl(j->sock, F_GETFL);

	if ((fl >= 0 && (fl & O_NONBLOCK)) || (!j->connect && (j->flags & MSG_DONTWAIT))) {
		finish_job(j);
		return 1;
	}
	if (!j->connect && !j->via_helper && try_now(j))
		return 1;
	sup_ref(j->s);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, worker, j) != 0) {
		sup_unref(j->s);	/* ours is not the last: the owner's */
		finish_job(j);	/* no thread: block here rather than fail */
	}
	pthread_attr_destroy(&at);
	return 1;
}

/* SCM_RIGHTS numbers are the target's: replace them with our copies. */
static int take_rights(struct sup_call *c, struct sock_job *j)
{
	struct msghdr m = { .msg_control = j->control, .msg_controllen = j->controllen };
	struct cmsghdr *cm;

	for (cm = CMSG_FIRSTHDR(&m); cm; cm = CMSG_NXTHDR(&m, cm)) {
		size_t n, i;
		int *fd = (int *)(void *)CMSG_DATA(cm);

		/* cmsg_len is the target's: within our copy, or refused. */
		if (cm->cmsg_len < CMSG_LEN(0) ||
		    cm->cmsg_len > j->controllen - (size_t)((char *)cm - j->control))
			return -EINVAL;
		if (cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS)
			continue;
		n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		if (n > sizeof(j->fds) / sizeof(j->fds[0]) - j->nfds)
			return -EINVAL;
		for (i = 0; i < n; i++) {
			int ours = sup_getfd(c, (uint32_t)fd[i]);

			if (ours < 0)
				return ours;
			j->fds[j->nfds++] = ours;
			fd[i] = ours;
		}
	}
	return 0;
}

static int read_iov_data(struct sup_call *c, struct sock_job *j, uint64_t iov,
			 uint64_t iovlen, struct iovec *v);

/* Copy the iovecs of the target into one buffer (at most SEND_MAX). */
static int read_iov(struct sup_call *c, struct sock_job *j, uint64_t iov, uint64_t iovlen)
{
	struct iovec *v;
	int rc;

	if (iovlen > UIO_MAXIOV)
		return -EMSGSIZE;
	v = malloc((size_t)iovlen * sizeof(*v) + 1);
	if (!v)
		return -ENOMEM;
	rc = read_iov_data(c, j, iov, iovlen, v);
	free(v);
	return rc;
}

/* read_iov() with v, room for iovlen entries. */
static int read_iov_data(struct sup_call *c, struct sock_job *j, uint64_t iov,
			 uint64_t iovlen, struct iovec *v)
{
	size_t i, total = 0;
	int rc;

	rc = sup_read(c, iov, v, (size_t)iovlen * sizeof(v[0]));
	for (i = 0; rc == 0 && i < iovlen; i++)
		total += v[i].iov_len > SEND_MAX ? SEND_MAX : v[i].iov_len;
	if (rc < 0)
		return rc;
	j->data = malloc(total > SEND_MAX ? SEND_MAX : total ? total : 1);
	if (!j->data)
		return -ENOMEM;
	for (i = 0; i < iovlen && j->len < SEND_MAX; i++) {
		size_t n = v[i].iov_len;

		if (n > SEND_MAX - j->len)
			n = SEND_MAX - j->len;
		rc = sup_read(c, (uint64_t)(uintptr_t)v[i].iov_base, j->data + j->len, n);
		if (rc < 0)
			return rc;
		j->len += n;
	}
	return 0;
}

/* The struct msghdr at addr: every field read once. */
static int read_sendmsg(struct sup_call *c, struct sock_job *j, uint64_t addr, int flags,
			struct sockaddr_storage *raw, size_t *rawlen)
{
	struct msghdr m;
	int rc = sup_read(c, addr, &m, sizeof(m));

	if (rc < 0)
		return rc;
	j->flags = flags;
	*rawlen = m.msg_name ? m.msg_namelen : 0;
	if (*rawlen > sizeof(*raw))
		return -EINVAL;
	if (*rawlen && (rc = sup_read(c, (uint64_t)(uintptr_t)m.msg_name, raw, *rawlen)) < 0)
		return rc;
	rc = read_iov(c, j, (uint64_t)(uintptr_t)m.msg_iov, m.msg_iovlen);
	if (rc < 0 || !m.msg_control || !m.msg_controllen)
		return rc;
	if (m.msg_controllen > CONTROL_MAX)
		return -ENOBUFS;
	j->controllen = m.msg_controllen;
	j->control = malloc(j->controllen);
	if (!j->control)
		return -ENOMEM;
	rc = sup_read(c, (uint64_t)(uintptr_t)m.msg_control, j->control, j->controllen);
	return rc < 0 ? rc : take_rights(c, j);
}

/* sendto(fd, buf, len, flags, addr, addrlen). */
static int read_sendto(struct sup_call *c, struct sock_job *j, struct sockaddr_storage *raw,
		       size_t *rawlen)
{
	const __u64 *a = c->n.data.args;
	size_t len = a[2] > SEND_MAX ? SEND_MAX : (size_t)a[2];
	int rc;

	j->flags = (int)a[3];
	*rawlen = (size_t)a[5];
	if (*rawlen > sizeof(*raw))
		return -EINVAL;
	rc = sup_read(c, a[4], raw, *rawlen);
	if (rc < 0)
		return rc;
	j->data = malloc(len ? len : 1);
	if (!j->data)
		return -ENOMEM;
	j->len = len;
	return sup_read(c, a[1], j->data, len);
}

/* ---- sendmmsg: each message as a sendmsg ------------------------------------- */

#define MMSG_MAX 64	/* messages handled per call; the caller sends the rest */

struct mmsg_job {
	struct sup_call c;	/* copy: id and pid, for the msg_len writes */
	uint64_t vec;
	unsigned n;
	int sock;
	struct sock_job *m[MMSG_MAX];
};

static void mmsg_free(struct mmsg_job *mj)
{
	unsigned i;

	for (i = 0; i < mj->n; i++) {
		mj->m[i]->sock = -1;	/* mj->sock, shared */
		job_free(mj->m[i]);
	}
	if (mj->sock >= 0)
		close(mj->sock);
	free(mj);
}

/* Send them in order; store each msg_len in the caller's array as the
 * kernel does; reply with the count (or the first message's error). */
static void mmsg_finish(struct mmsg_job *mj)
{
	struct sup *s = mj->c.s;
	int64_t r = 0;
	unsigned i;

	for (i = 0; i < mj->n; i++) {
		size_t off = i * sizeof(struct mmsghdr) + offsetof(struct mmsghdr, msg_len);
		unsigned len32;
		int64_t n = perform(mj->m[i]);
		struct iovec l = { .iov_base = &len32, .iov_len = sizeof(len32) };
		struct iovec rv = { .iov_base = (void *)(uintptr_t)(mj->vec + off),
				    .iov_len = sizeof(len32) };

		if (n < 0) {
			r = i ? (int64_t)i : n;
			break;
		}
		len32 = (unsigned)n;
		if (sup_valid(&mj->c) < 0 ||
		    process_vm_writev((pid_t)mj->c.n.pid, &l, 1, &rv, 1, 0) != sizeof(len32)) {
			r = i ? (int64_t)i : -EFAULT;
			break;
		}
		r = i + 1;
	}
	(void)sup_reply(s, mj->c.n.id, r < 0 ? 0 : r, r < 0 ? (int)r : 0);
	mmsg_free(mj);
}

static void *mmsg_worker(void *arg)
{
	struct mmsg_job *mj = arg;
	struct sup *s = mj->c.s;

	mmsg_finish(mj);
	sup_unref(s);
	return NULL;
}

/* sendmmsg(fd, vec, vlen, flags): glibc's resolver needs it (A and AAAA in
 * one call, with no fallback), so it is performed, not refused. */
static int handle_sendmmsg(struct sup_call *c)
{
	const __u64 *a = c->n.data.args;
	struct mmsg_job *mj = calloc(1, sizeof(*mj));
	int flags = (int)a[3], rc = 0, fl;
	pthread_attr_t at;
	pthread_t t;

	if (!mj)
		return -ENOMEM;
	mj->c = *c;
	mj->c.pidfd = -1;
	mj->vec = a[1];
	mj->sock = sup_getfd(c, (uint32_t)a[0]);
	if (mj->sock < 0) {
		rc = mj->sock;
		goto out_free;
	}
	for (; mj->n < (a[2] > MMSG_MAX ? MMSG_MAX : a[2]) && rc == 0; mj->n++) {
		struct sockaddr_storage raw;
		size_t rawlen = 0;
		struct sock_job *j = calloc(1, sizeof(*j));

		if (!j) {
			rc = -ENOMEM;
			break;
		}
		j->s = c->s;
		j->id = c->n.id;
		j->obj = -1;
		j->sock = mj->sock;
		mj->m[mj->n] = j;
		rc = read_sendmsg(c, j, mj->vec + mj->n * sizeof(struct mmsghdr), flags,
				  &raw, &rawlen);
		if (rc == 0)
			rc = sup_valid(c);
		if (rc == 0 && rawlen > 0)
			rc = dest(c, j, &raw, rawlen);
	}
	if (rc < 0)
		goto out_free;
	fl = fcntl(mj->sock, F_GETFL);
	if ((fl >= 0 && (fl & O_NONBLOCK)) || (flags & MSG_DONTWAIT)) {
		mmsg_finish(mj);
		return 1;
	}
	sup_ref(c->s);
	pthread_attr_init(&at);
	pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
	if (pthread_create(&t, &at, mmsg_worker, mj) != 0) {
		sup_unref(c->s);	/* the owner's reference remains */
		mmsg_finish(mj);
	}
	pthread_attr_destroy(&at);
	return 1;
out_free:
	mmsg_free(mj);
	return rc;
}

int sup_handle_socket(struct sup_call *c)
{
	int nr = c->n.data.nr;
	struct sockaddr_storage raw;
	struct sock_job *j;
	size_t rawlen = 0;
	int rc;

	if (nr == SCMP_SYS(sendmmsg))
		return handle_sendmmsg(c);
	if (nr != SCMP_SYS(connect) && nr != SCMP_SYS(sendto) && nr != SCMP_SYS(sendmsg))
		return 0;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	j->s = c->s;
	j->id = c->n.id;
	j->pid = (pid_t)c->n.pid;
	j->tgid = sup_tgid(c) > 0 ? c->tgid : 0;
	j->sock = j->obj = -1;
	j->connect = nr == SCMP_SYS(connect);
	if (j->connect) {
		rawlen = (size_t)c->n.data.args[2];
		rc = rawlen > sizeof(raw) ? -EINVAL : sup_read(c, c->n.data.args[1], &raw, rawlen);
	} else if (nr == SCMP_SYS(sendto)) {
		rc = read_sendto(c, j, &raw, &rawlen);
	} else {
		rc = read_sendmsg(c, j, c->n.data.args[1], (int)c->n.data.args[2], &raw, &rawlen);
	}
	if (rc == 0) {
		j->sock = sup_getfd(c, (uint32_t)c->n.data.args[0]);
		rc = j->sock < 0 ? j->sock : 0;
	}
	if (rc == 0)
		rc = sup_valid(c);	/* memory and fd were the waiting target's */
	if (rc == 0 && (j->connect || rawlen > 0))
		rc = dest(c, j, &raw, rawlen);
	if (rc < 0) {
		job_free(j);
		return rc;
	}
	return dispatch(j);
}

/* ---- metadata calls ------------------------------------------------------------- */

enum meta_kind { M_CHMOD, M_CHOWN, M_UTIMES, M_SETX, M_REMOVEX };

/* Argument positions; -1: absent (dirfd absent = AT_FDCWD, path absent =
 * the fd form on fd_arg). follow: the default without flags. */
struct meta_call {
	int nr;
	enum meta_kind kind;
	int dirfd, path, flags;
	bool follow;
	int rest;		/* first argument after the object */
};

static const struct meta_call meta[] = {
	{ SCMP_SYS(chmod), M_CHMOD, -1, 0, -1, true, 1 },
	{ SCMP_SYS(fchmod), M_CHMOD, 0, -1, -1, true, 1 },
	{ SCMP_SYS(fchmodat), M_CHMOD, 0, 1, -1, true, 2 },
	{ SCMP_SYS(chown), M_CHOWN, -1, 0, -1, true, 1 },
	{ SCMP_SYS(lchown), M_CHOWN, -1, 0, -1, false, 1 },
	{ SCMP_SYS(fchown), M_CHOWN, 0, -1, -1, true, 1 },
	{ SCMP_SYS(fchownat), M_CHOWN, 0, 1, 4, true, 2 },
	{ SCMP_SYS(utime), M_UTIMES, -1, 0, -1, true, 1 },
	{ SCMP_SYS(utimes), M_UTIMES, -1, 0, -1, true, 1 },
	{ SCMP_SYS(futimesat), M_UTIMES, 0, 1, -1, true, 2 },
	{ SCMP_SYS(utimensat), M_UTIMES, 0, 1, 3, true, 2 },
	{ SCMP_SYS(setxattr), M_SETX, -1, 0, -1, true, 1 },
	{ SCMP_SYS(lsetxattr), M_SETX, -1, 0, -1, false, 1 },
	{ SCMP_SYS(fsetxattr), M_SETX, 0, -1, -1, true, 1 },
	{ SCMP_SYS(removexattr), M_REMOVEX, -1, 0, -1, true, 1 },
	{ SCMP_SYS(lremovexattr), M_REMOVEX, -1, 0, -1, false, 1 },
	{ SCMP_SYS(fremovexattr), M_REMOVEX, 0, -1, -1, true, 1 },
};

/* The times argument of utime/utimes/futimesat/utimensat as timespecs;
 * *now when NULL (set both to the current time). */
static int read_times(struct sup_call *c, uint64_t addr, struct timespec ts[2], bool *now)
{
	int nr = c->n.data.nr, rc;

	*now = addr == 0;
	if (*now)
		return 0;
	if (nr == SCMP_SYS(utimensat))
		return sup_read(c, addr, ts, 2 * sizeof(ts[0]));
	if (nr == SCMP_SYS(utime)) {
		struct utimbuf u;

		rc = sup_read(c, addr, &u, sizeof(u));
		ts[0] = (struct timespec){ .tv_sec = u.actime };
		ts[1] = (struct timespec){ .tv_sec = u.modtime };
		return rc;
	}
	struct timeval tv[2];

	rc = sup_read(c, addr, tv, sizeof(tv));
	if (rc == 0 && (tv[0].tv_usec < 0 || tv[0].tv_usec >= 1000000 ||
			tv[1].tv_usec < 0 || tv[1].tv_usec >= 1000000))
		return -EINVAL;
	ts[0] = (struct timespec){ .tv_sec = tv[0].tv_sec, .tv_nsec = tv[0].tv_usec * 1000 };
	ts[1] = (struct timespec){ .tv_sec = tv[1].tv_sec, .tv_nsec = tv[1].tv_usec * 1000 };
	return rc;
}

/* Perform the change on obj (our fd: O_PATH or the target's, copied). */
static int meta_act(struct sup_call *c, const struct meta_call *m, int obj)
{
	const __u64 *a = c->n.data.args;
	char proc[64], name[XATTR_NAME_MAX + 1];
	struct timespec ts[2];
	void *val = NULL;
	bool now;
	int rc = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", obj);
	switch (m->kind) {
	case M_CHMOD:
		return chmod(proc, (mode_t)a[m->rest]) < 0 ? -errno : 0;
	case M_CHOWN:
		return fchownat(obj, "", (uid_t)a[m->rest], (gid_t)a[m->rest + 1],
				AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) < 0 ? -errno : 0;
	case M_UTIMES:
		rc = read_times(c, a[m->rest], ts, &now);
		if (rc == 0 && utimensat(obj, "", now ? NULL : ts, AT_EMPTY_PATH) < 0)
			rc = -errno;
		return rc;
	case M_SETX:
	case M_REMOVEX:
		rc = sup_read_str(c, a[m->rest], name, sizeof(name));
		if (rc < 0)
			return rc == -ENAMETOOLONG ? -ERANGE : rc;
		if (m->kind == M_REMOVEX)
			return removexattr(proc, name) < 0 ? -errno : 0;
		if (a[m->rest + 2] > XATTR_SIZE_MAX)
			return -E2BIG;
		val = malloc(a[m->rest + 2] ? (size_t)a[m->rest + 2] : 1);
		if (!val)
			return -ENOMEM;
		rc = sup_read(c, a[m->rest + 1], val, (size_t)a[m->rest + 2]);
		if (rc == 0 && setxattr(proc, name, val, (size_t)a[m->rest + 2],
					(int)a[m->rest + 3]) < 0)
			rc = -errno;
		free(val);
		return rc;
	}
	return -ENOSYS;
}

/* The object of the call as our fd; *from_fd: taken from the caller's
 * descriptor table (not named by a path, which we resolve in our own
 * context: "/proc/<our pid>/fd/N" would name our descriptors). */
static int meta_object(struct sup_call *c, const struct meta_call *m, char *path,
		       bool *from_fd)
{
	const __u64 *a = c->n.data.args;
	uint64_t flags = m->flags >= 0 ? a[m->flags] : 0;
	uint64_t dirfd = m->dirfd >= 0 ? a[m->dirfd] : (uint64_t)(int64_t)AT_FDCWD;
	bool follow = m->follow && !(flags & AT_SYMLINK_NOFOLLOW);
	int rc;

	*from_fd = true;
	if (m->path < 0 || (c->n.data.nr == SCMP_SYS(utimensat) && a[m->path] == 0)) {
		strcpy(path, "(descriptor)");
		return sup_getfd(c, (uint32_t)dirfd);
	}
	rc = sup_read_str(c, a[m->path], path, PATH_MAX);
	if (rc < 0)
		return rc;
	if (path[0] == '\0') {
		if (!(flags & AT_EMPTY_PATH))
			return -ENOENT;
		return sup_getfd(c, (uint32_t)dirfd);
	}
	*from_fd = false;
	return sup_open_at(c, dirfd, path, O_PATH | (follow ? 0 : O_NOFOLLOW));
}

/*
 * Metadata of real may change: beneath a writable root, and for the shared
 * ones (/tmp, /dev/shm, $TMPDIR) strictly beneath: their own mode, owner
 * and times are the system's (`chmod 600 /tmp` as root would break every
 * other user). The workspace root itself goes through the mount (staged).
 */
static bool meta_allowed(const struct sup *s, const char *real)
{
	size_t i;

	for (i = 0; i < s->o.n_hidden; i++)
		if (sup_beneath(real, s->o.hidden[i]))
			return false;
	if (sup_beneath(real, s->o.workspace))
		return true;
	for (i = 0; i < s->o.n_writable; i++)
		if (sup_beneath(real, s->o.writable[i]) && strcmp(real, s->o.writable[i]) != 0)
			return true;
	return false;
}

int sup_handle_meta(struct sup_call *c)
{
	const struct meta_call *m = NULL;
	char path[PATH_MAX], real[PATH_MAX];
	size_t i;
	int obj, rc;
	bool ok = false, from_fd = false;

	for (i = 0; i < sizeof(meta) / sizeof(meta[0]) && !m; i++)
		if (meta[i].nr == c->n.data.nr)
			m = &meta[i];
	if (!m)
		return 0;
	obj = meta_object(c, m, path, &from_fd);
	if (obj < 0)
		return obj;
	rc = sup_valid(c);
	if (rc == 0)
		rc = sup_fd_path(obj, real, sizeof(real));
	if (rc == 0)
		ok = (real[0] != '/' && from_fd) ||	/* the caller's pipe:, socket: */
		     meta_allowed(c->s, real);
	if (rc == 0 && !ok)
		rc = sup_veto(c->s, c, "metadata change of", real,
			      "outside the writable paths");
	if (rc == 0)
		rc = meta_act(c, m, obj);
	close(obj);
	if (rc < 0)
		return rc;
	return sup_reply(c->s, c->n.id, 0, 0) == 0 ? 1 : 1;
}

/* ---- inode flags (chattr) ---------------------------------------------------------- */

/*
 * ioctl(fd, FS_IOC_SETFLAGS | FS_IOC_SETVERSION | FS_IOC_FSSETXATTR, arg):
 * inode flags (chattr +d/+A/..., +i/+a with CAP_LINUX_IMMUTABLE), the
 * generation and the project attributes, settable on a descriptor opened
 * for reading. The filter notifies only these requests; the file must be
 * beneath a writable root, and the ioctl is made on our copy of the
 * descriptor with our copy of the argument.
 */
int sup_handle_ioctl(struct sup_call *c)
{
	const __u64 *a = c->n.data.args;
	unsigned cmd = (unsigned)a[1];
	union { int i; struct fsxattr x; } arg;
	size_t len = cmd == (unsigned)FS_IOC_FSSETXATTR ? sizeof(arg.x) : sizeof(arg.i);
	char real[PATH_MAX];
	bool ok = false;
	int fd, rc;

	if (c->n.data.nr != SCMP_SYS(ioctl) || (cmd != (unsigned)FS_IOC_SETFLAGS &&
	    cmd != (unsigned)FS_IOC_SETVERSION && cmd != (unsigned)FS_IOC_FSSETXATTR))
		return 0;
	rc = sup_read(c, a[2], &arg, len);
	if (rc < 0)
		return rc;
	fd = sup_getfd(c, (uint32_t)a[0]);
	if (fd < 0)
		return fd;
	rc = sup_valid(c);
	if (rc == 0)
		rc = sup_fd_path(fd, real, sizeof(real));
	ok = rc == 0 && (real[0] != '/' ||	/* the caller's pipe or socket */
			 meta_allowed(c->s, real));
	if (rc == 0 && !ok)
		rc = sup_veto(c->s, c, "metadata change of", real,
			      "inode flags outside the writable paths");
	if (rc == 0 && ioctl(fd, (unsigned long)cmd, &arg) < 0)
		rc = -errno;
	close(fd);
	if (rc < 0)
		return rc;
	(void)sup_reply(c->s, c->n.id, 0, 0);
	return 1;
}
