/* SPDX-License-Identifier: Apache-2.0 */
/*
 * supervise_int.h - internals shared by supervise.c (the loop, the filter,
 * exec by content) and supervise_ops.c (sockets and metadata).
 */
#ifndef TXFS_SUPERVISE_INT_H
#define TXFS_SUPERVISE_INT_H

#include <linux/seccomp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#include "supervise.h"

#define SUP_HASH_LEN 32
/* "#!" interpreters followed (the kernel: ELOOP past 5 levels of exec
 * handlers, fs/exec.c) */
#define SUP_INTERP_DEPTH 6

struct sup_exec_file {		/* one file an exec deny pattern names */
	char *path;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
};

struct sup_hash {
	off_t size;
	unsigned char h[SUP_HASH_LEN];
};

struct sup {
	struct sup_opts o;	/* strings owned by own[] */
	void **own;
	size_t nown;
	int landlock_abi;
	pid_t root;		/* the confined child */
	int listener, stop_pipe[2];
	int pipes[4];		/* socket pairs: report [0] parent [1] child,
				 * ack [2] child [3] parent */
	pthread_t thread;
	bool started;
	pthread_mutex_t lock;	/* exec tables, vetoes printed */
	struct sup_exec_file *files;
	size_t nfiles;
	struct sup_hash *hashes;
	size_t nhashes;
	struct sup_hash loaders[8];	/* the system's dynamic loaders */
	size_t nloaders;
	atomic_ulong notifications, refused;
	atomic_int refs;	/* the owner (until sup_free) and each detached
				 * worker still using the listener: the last
				 * one frees s (sup_unref) */
	int helper;		/* socket to the in-domain helper, or -1 */
	int helper_pidfd;	/* the helper (our child), or -1 */
	struct audit *audit;	/* STATE/audit.log, or NULL */
	pthread_mutex_t helper_lock;
};

/* One notification being handled. */
struct sup_call {
	struct sup *s;
	struct seccomp_notif n;
	int pidfd;		/* of the thread n.pid, -1 if not opened yet */
	pid_t tgid;		/* its thread group (process), 0 if not read yet */
};

/* ---- supervise.c ---------------------------------------------------------- */

/* Reply: error 0 with val, or -err. Returns 0 or -errno of the ioctl. */
int sup_reply(struct sup *s, uint64_t id, int64_t val, int err);
/* A detached worker's reference on s (taken before it starts, dropped when
 * it ends); the last reference dropped frees s (sup_free drops the
 * owner's). */
void sup_ref(struct sup *s);
void sup_unref(struct sup *s);
/* Let the kernel continue the call (exec only: see supervise.c). */
int sup_continue(struct sup *s, uint64_t id);
/* 0 while the notification is still pending (the target waits). */
int sup_valid(struct sup_call *c);
/* Copy len bytes at addr of the target. 0 or -EFAULT/-ESRCH. */
int sup_read(struct sup_call *c, uint64_t addr, void *buf, size_t len);
/* NUL-terminated string at addr, at most max bytes with the NUL. */
int sup_read_str(struct sup_call *c, uint64_t addr, char *buf, size_t max);
/* The target's descriptor fd, as ours (close it). fd or -errno. */
int sup_getfd(struct sup_call *c, uint64_t fd);
/* O_PATH open of path relative to the caller's dirfd (AT_FDCWD: its cwd). */
int sup_open_at(struct sup_call *c, uint64_t dirfd, const char *path, int flags);
/* Real path of our fd into buf; 0 or -errno. */
int sup_fd_path(int fd, char *buf, size_t size);
/* path equal to root or below it. */
bool sup_beneath(const char *path, const char *root);
/* Print a veto (unless quiet) and count it. Returns -EACCES. */
int sup_veto(struct sup *s, struct sup_call *c, const char *what,
	     const char *path, const char *why);
/* The process (thread group) of the calling thread n.pid, or -ESRCH. */
pid_t sup_tgid(struct sup_call *c);

/* ---- supervise_ops.c --------------------------------------------------------- */

/*
 * Handle a socket (connect, sendto, sendmsg) or metadata notification.
 * Returns 1 when it replied (or handed the call to a worker that will),
 * 0 when c is not one of its calls, or a negative errno to reply.
 */
int sup_handle_socket(struct sup_call *c);
int sup_handle_meta(struct sup_call *c);
int sup_handle_ioctl(struct sup_call *c);

/* ---- supervise_exec.c ------------------------------------------------------------ */

/* Hash the files of o.exec_deny (sup_new). 0 or -ENOMEM. */
int sup_exec_load(struct sup *s);
/* execve/execveat: 1 (replied) or a negative errno to reply. */
int sup_handle_exec(struct sup_call *c);
/* fd (ours) is a file an exec deny rule names, or has such a file's
 * content: 1; 0 if not; -errno when it cannot be read to compare. */
int sup_exec_forbidden(struct sup *s, int fd);

/* ---- supervise_elf.c ------------------------------------------------------------- */

/* The PT_INTERP path of the ELF file at fd (ours) into interp: 1 when it
 * names one, 0 when fd is no ELF file or names none (or one the kernel
 * refuses: ENOEXEC), -errno when it cannot be read. */
int sup_elf_interp(int fd, char *interp, size_t size);

/* ---- supervise_map.c ------------------------------------------------------------- */

/* Add the notify rules for mmap/mprotect/pkey_mprotect with PROT_EXEC of a
 * file to ctx (a scmp_filter_ctx). 0 or a negative errno. */
int sup_map_rules(void *ctx);
/* mmap/mprotect/pkey_mprotect: 1 (replied), 0 when c is not one, or a
 * negative errno to reply. */
int sup_handle_map(struct sup_call *c);

/* ---- supervise_helper.c --------------------------------------------------------- */

/* In the child, confined, before the notify filter: start the helper (a
 * child of our parent: CLONE_PARENT), its pid in *pid; returns our end of
 * its socket or -errno. */
int sup_helper_start(pid_t *pid);
/* connect(sock, addr) performed by the helper: 0 or -errno. */
int sup_helper_connect(struct sup *s, int sock, const void *addr, socklen_t len);

#endif /* TXFS_SUPERVISE_INT_H */
