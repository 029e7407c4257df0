/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise.h - the seccomp user-notification supervisor of `txfs run`.
 *
 * Landlock (up to ABI 7) has no right for connecting to a pathname unix
 * socket, for metadata changes (chmod, chown, utimes, xattrs) or for
 * executing a program by identity. The confined command therefore gets a
 * second seccomp filter whose SCMP_ACT_NOTIFY rules hand these system calls
 * to a thread of the `txfs run` process, which decides and, where the
 * decision depends on memory or descriptors the target could change
 * afterwards, performs the call itself on what it checked:
 *
 *   connect, sendto (with an address), sendmsg: the address is read once
 *     from the target's memory, the socket taken with pidfd_getfd. A
 *     pathname unix address is resolved relative to the caller's current
 *     folder, opened O_PATH, its real location (readlink /proc/self/fd/N)
 *     checked, and the connect/send performed on "/proc/self/fd/N" (the
 *     checked inode). Allowed: beneath the workspace; paths matching an
 *     `allow connect GLOB` policy rule (fnmatch, FNM_PATHNAME, on the real
 *     path).
 *     Else EACCES (sockets in /tmp too, even the command's own: who made a
 *     socket file cannot be known race-free). Abstract addresses with
 *     Landlock ABI >= 6: connected by a helper inside the sandbox's domain
 *     (supervise_helper.c), so Landlock's scope applies; datagrams by
 *     address to them: EACCES. Below ABI 6 abstract addresses are
 *     performed as given (as without the supervisor). Non-unix addresses:
 *     EACCES with no_network, else performed as given. sendmmsg: each
 *     message as a sendmsg (up to 64 a call), msg_len written back.
 *   chmod/fchmod/fchmodat, chown/fchown/lchown/fchownat, utime/utimes/
 *     futimesat/utimensat, {,l,f}setxattr, {,l,f}removexattr: the object is
 *     opened O_PATH relative to the caller's dirfd or current folder (fd
 *     forms: the caller's descriptor via pidfd_getfd), its real path must
 *     be beneath the workspace or strictly beneath another writable root
 *     (/tmp itself is the system's), and the change is made on that
 *     descriptor. Else EACCES. fchmodat2, setxattrat, removexattrat: ENOSYS
 *     (libc falls back). ioctl FS_IOC_SETFLAGS, FS_IOC_SETVERSION,
 *     FS_IOC_FSSETXATTR (chattr): the same check on the descriptor, the
 *     ioctl made on our copy with our copy of the argument.
 *   execve/execveat, only when exec deny files exist: the program is
 *     opened, and when its size equals a forbidden file's size, hashed
 *     (SHA-256); equal content -> EACCES, else the kernel continues. A
 *     script's "#!" interpreter is judged the same way, recursively, and
 *     the dynamic loader's program too (supervise_exec.c).
 *   mmap with PROT_EXEC of a file, mprotect/pkey_mprotect adding
 *     PROT_EXEC, only when exec deny files exist: the file mapped is
 *     judged as an exec is (supervise_map.c).
 *
 * Without user notification (or pidfd_getfd) in the kernel (before 5.6):
 * connect, sendto with an address and the metadata calls are refused
 * outright (EACCES), sendmmsg gets ENOSYS; sendmsg (its address is in
 * memory) stays allowed and exec deny by content is not enforced.
 */
#ifndef TXFS_SUPERVISE_H
#define TXFS_SUPERVISE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct sup_opts {
	const char *workspace;			/* absolute; connect allowed beneath */
	const char *const *writable;		/* metadata changes allowed beneath */
	size_t n_writable;
	const char *const *connect_allow;	/* absolute fnmatch globs */
	size_t n_connect_allow;
	const char *const *exec_deny;		/* absolute glob(3) patterns */
	size_t n_exec_deny;
	bool no_network;
	bool quiet;				/* no veto lines on stderr */
	const char *state;			/* vetoes go to its audit.log; NULL: not logged */
	/* the command's hidden folders (confine_opts.hidden): the supervisor,
	 * which resolves paths in its own mount namespace where they are not
	 * covered, never connects to a socket beneath them, whatever the
	 * policy's allow connect */
	const char *const *hidden;
	size_t n_hidden;
};

struct sup_stats {
	unsigned long notifications, refused;
};

struct sup;

struct policy;

/* What the policy adds: `allow connect` paths, `exec deny` globs made
 * absolute (relative ones are beneath ws). */
struct sup_lists {
	char **connect;
	size_t nconnect;
	char **exec;
	size_t nexec;
};

/* Fill *l from p (nothing kept from p). Returns 0 or -ENOMEM. */
int sup_lists_from_policy(const struct policy *p, const char *ws, struct sup_lists *l);
/* Add one glob as written in the policy to *l (zeroed at first): an
 * `allow connect` glob (exec false) or an `exec deny` glob, made absolute
 * beneath ws as sup_lists_from_policy does. 0 or -ENOMEM. */
int sup_lists_add(struct sup_lists *l, bool exec, const char *glob, const char *ws);
void sup_lists_free(struct sup_lists *l);


/*
 * Prepare in the parent, before fork: copy o, take the content hashes of
 * the exec deny files, make the hand-over pipes. Returns 0 or a negative
 * errno (*out NULL then).
 */
int sup_new(const struct sup_opts *o, struct sup **out);

/* 1 when the kernel has user notification and pidfd_getfd, else 0. */
int sup_supported(void);

/*
 * In the child after confine_apply(), single-threaded: load the notify
 * filter, report the listener's fd number to the parent through a pipe
 * made by sup_new (write(2) is not filtered: no deadlock), wait for its ack
 * (the parent holds a copy of the listener then, taken with pidfd_getfd),
 * close what the parent took. Without kernel support: load the refusing
 * filter instead and report -1. Returns 0 or a negative errno (then _exit).
 */
int sup_child(struct sup *s);

/*
 * In the parent after fork: take the listener from child, ack, start the
 * thread. -EPIPE when the child failed before reporting (it said why);
 * without the ack the child exits, so nothing runs unsupervised.
 */
int sup_attach(struct sup *s, pid_t child);

/* Stop the thread (if started), fill *st (may be NULL), free s. */
void sup_free(struct sup *s, struct sup_stats *st);

#endif /* TXFS_SUPERVISE_H */
