// SPDX-License-Identifier: Apache-2.0
/*
 * threadcalls - make every system call the supervisor of `txfs run` /
 * `txfs exec` handles (cli/sandbox/supervise_ops.c, supervise_exec.c) from a
 * thread that is NOT the thread-group leader, and print one line per call:
 *
 *     CALL NAME ERRNO        (0: it succeeded)
 *
 * The supervisor sees the caller's thread id; a pidfd of that id without
 * PIDFD_THREAD fails on Linux 6.18 (issue 22.1: every such call failed with
 * ENOENT). Each call checks first that it runs off the leader (gettid() !=
 * getpid()), else it prints "CALL NAME leader" and the tool exits 2.
 *
 * Usage:
 *   threadcalls meta FILE
 *       chmod fchmod fchmodat chown lchown fchown fchownat utime utimes
 *       futimesat utimensat futimens setxattr lsetxattr fsetxattr
 *       removexattr lremovexattr fremovexattr (user.txfs_thread), on FILE,
 *       setting what it has (its own mode, owner and times: nothing
 *       changes but the xattr, removed again);
 *   threadcalls ioctl FILE
 *       FS_IOC_GETFLAGS then FS_IOC_SETFLAGS with the same flags;
 *   threadcalls net PORT UNIXPATH [listen]
 *       connect to 127.0.0.1:PORT (TCP) and to UNIXPATH (with "listen":
 *       a listener the leader makes there first), sendto, sendmsg
 *       and sendmmsg by address to a UDP socket of its own on 127.0.0.1
 *       (each datagram is read back);
 *   threadcalls exec PROG [ARG...]
 *       execv(PROG) from the thread ("CALL execve ERRNO" only on failure).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/fs.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <sys/xattr.h>
#include <unistd.h>
#include <utime.h>

struct job {
	int argc;
	char **argv;
	int rc;
};

static int leader_calls;

static void report(const char *name, int r)
{
	if (gettid() == getpid()) {
		printf("CALL %s leader\n", name);
		leader_calls++;
		return;
	}
	printf("CALL %s %d\n", name, r < 0 ? errno : 0);
	fflush(stdout);
}

#define DO(name, expr) report(name, (expr))

static void meta(const char *f)
{
	struct stat st;
	struct timeval tv[2];
	struct timespec ts[2];
	struct utimbuf ub;
	char dir[4096], *slash, *base;
	int fd, dfd;

	if (stat(f, &st) < 0) {
		printf("CALL stat %d\n", errno);
		return;
	}
	snprintf(dir, sizeof(dir), "%s", f);
	slash = strrchr(dir, '/');
	base = slash ? slash + 1 : dir;
	if (slash)
		*slash = '\0';
	dfd = open(slash ? (dir[0] ? dir : "/") : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	fd = open(f, O_RDONLY | O_CLOEXEC);
	tv[0].tv_sec = st.st_atim.tv_sec, tv[0].tv_usec = st.st_atim.tv_nsec / 1000;
	tv[1].tv_sec = st.st_mtim.tv_sec, tv[1].tv_usec = st.st_mtim.tv_nsec / 1000;
	ts[0] = st.st_atim;
	ts[1] = st.st_mtim;
	ub.actime = st.st_atim.tv_sec;
	ub.modtime = st.st_mtim.tv_sec;
	DO("chmod", chmod(f, st.st_mode & 07777));
	DO("fchmod", fchmod(fd, st.st_mode & 07777));
	DO("fchmodat", fchmodat(dfd, base, st.st_mode & 07777, 0));
	DO("chown", chown(f, st.st_uid, st.st_gid));
	DO("lchown", lchown(f, st.st_uid, st.st_gid));
	DO("fchown", fchown(fd, st.st_uid, st.st_gid));
	DO("fchownat", fchownat(dfd, base, st.st_uid, st.st_gid, 0));
	DO("utime", utime(f, &ub));
	DO("utimes", utimes(f, tv));
	DO("futimesat", futimesat(dfd, base, tv));
	DO("utimensat", utimensat(dfd, base, ts, 0));
	DO("futimens", futimens(fd, ts));
	DO("setxattr", setxattr(f, "user.txfs_thread", "1", 1, 0));
	DO("lsetxattr", lsetxattr(f, "user.txfs_thread", "2", 1, 0));
	DO("fsetxattr", fsetxattr(fd, "user.txfs_thread", "3", 1, 0));
	DO("removexattr", removexattr(f, "user.txfs_thread"));
	(void)fsetxattr(fd, "user.txfs_thread", "4", 1, 0);
	DO("lremovexattr", lremovexattr(f, "user.txfs_thread"));
	(void)fsetxattr(fd, "user.txfs_thread", "5", 1, 0);
	DO("fremovexattr", fremovexattr(fd, "user.txfs_thread"));
	close(fd);
	close(dfd);
}

static void flags(const char *f)
{
	int fd = open(f, O_RDONLY | O_CLOEXEC), v = 0;

	DO("FS_IOC_GETFLAGS", ioctl(fd, FS_IOC_GETFLAGS, &v));
	DO("FS_IOC_SETFLAGS", ioctl(fd, FS_IOC_SETFLAGS, &v));
	close(fd);
}

/* One datagram by address, sent with how (0 sendto, 1 sendmsg, 2 sendmmsg),
 * read back on u. */
static int udp_send(int s, int u, const struct sockaddr_in *to, int how)
{
	char buf[8] = "ping", got[8];
	struct iovec iov = { .iov_base = buf, .iov_len = 4 };
	struct mmsghdr mm = { .msg_hdr = { .msg_name = (void *)to, .msg_namelen = sizeof(*to),
					   .msg_iov = &iov, .msg_iovlen = 1 } };
	ssize_t n;

	if (how == 0)
		n = sendto(s, buf, 4, 0, (const struct sockaddr *)to, sizeof(*to));
	else if (how == 1)
		n = sendmsg(s, &mm.msg_hdr, 0);
	else
		n = sendmmsg(s, &mm, 1, 0) == 1 ? (ssize_t)mm.msg_len : -1;
	if (n != 4)
		return -1;
	if (recv(u, got, sizeof(got), 0) != 4 || memcmp(got, "ping", 4)) {
		errno = EIO;
		return -1;
	}
	return 0;
}

static void net(int port, const char *upath)
{
	struct sockaddr_in in = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct sockaddr_un un = { .sun_family = AF_UNIX };
	struct timeval tmo = { .tv_sec = 5 };
	socklen_t len = sizeof(in);
	int s, u;

	inet_pton(AF_INET, "127.0.0.1", &in.sin_addr);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	DO("connect-tcp", connect(s, (struct sockaddr *)&in, sizeof(in)));
	close(s);
	snprintf(un.sun_path, sizeof(un.sun_path), "%s", upath);
	s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	DO("connect-unix", connect(s, (struct sockaddr *)&un, sizeof(un)));
	close(s);
	u = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	in.sin_port = 0;
	setsockopt(u, SOL_SOCKET, SO_RCVTIMEO, &tmo, sizeof(tmo));
	if (bind(u, (struct sockaddr *)&in, sizeof(in)) < 0 ||
	    getsockname(u, (struct sockaddr *)&in, &len) < 0) {
		printf("CALL udp-bind %d\n", errno);
		return;
	}
	s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	DO("sendto", udp_send(s, u, &in, 0));
	DO("sendmsg", udp_send(s, u, &in, 1));
	DO("sendmmsg", udp_send(s, u, &in, 2));
	close(s);
	close(u);
}

static void *thread_main(void *arg)
{
	struct job *j = arg;

	if (!strcmp(j->argv[1], "meta") && j->argc == 3)
		meta(j->argv[2]);
	else if (!strcmp(j->argv[1], "ioctl") && j->argc == 3)
		flags(j->argv[2]);
	else if (!strcmp(j->argv[1], "net") && j->argc == 4)
		net(atoi(j->argv[2]), j->argv[3]);
	else if (!strcmp(j->argv[1], "exec") && j->argc >= 3) {
		if (gettid() == getpid()) {
			leader_calls++;
		} else {
			fflush(stdout);
			execv(j->argv[2], j->argv + 2);
		}
		DO("execve", -1);
	} else {
		j->rc = 2;
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct job j = { .argc = argc, .argv = argv };
	pthread_t t;
	int l = -1;

	if (argc == 5 && !strcmp(argv[1], "net") && !strcmp(argv[4], "listen")) {
		struct sockaddr_un un = { .sun_family = AF_UNIX };

		snprintf(un.sun_path, sizeof(un.sun_path), "%s", argv[3]);
		unlink(argv[3]);
		l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (bind(l, (struct sockaddr *)&un, sizeof(un)) < 0 || listen(l, 4) < 0)
			printf("CALL unix-listen %d\n", errno);
		j.argc = 4;
	}
	if (argc < 2) {
		fprintf(stderr, "usage: threadcalls meta|ioctl|net|exec ...\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (pthread_create(&t, NULL, thread_main, &j) != 0)
		return 3;
	pthread_join(t, NULL);
	if (l >= 0) {
		close(l);
		unlink(argv[3]);
	}
	if (j.rc)
		fprintf(stderr, "usage: threadcalls meta|ioctl|net|exec ...\n");
	return j.rc ? j.rc : leader_calls ? 2 : 0;
}
