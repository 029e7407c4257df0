/* SPDX-License-Identifier: Apache-2.0 */
/*
 * confine.h - confinement of the command `txfs run` executes:
 * PR_SET_NO_NEW_PRIVS, Landlock and a seccomp filter, and, when o->hidden
 * names folders to hide, a private mount namespace (confine_ns.c; a user
 * namespace too when unprivileged).
 *
 * What confine_apply() enforces in the calling process and everything it
 * execs afterwards (nothing here can be undone):
 *
 *   - PR_SET_NO_NEW_PRIVS: setuid/setcap binaries (fusermount3, sudo) gain
 *     nothing.
 *   - Landlock (best ABI the kernel has): writes (write-open, create, remove,
 *     rename, link, truncate from ABI 3) only beneath o->writable and a few
 *     device files (/dev/null, /dev/tty, /dev/pts/ ...) plus /dev/shm.
 *     Reading and executing are not restricted. Device nodes cannot be
 *     created anywhere. From ABI 6: LANDLOCK_SCOPE_SIGNAL and
 *     LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (no signals to, no abstract unix
 *     sockets of, processes outside the sandbox). From ABI 4 with
 *     no_network: TCP bind/connect denied too (on top of seccomp).
 *   - seccomp, allow-list: only the system calls confine_known.c lists;
 *     any other number (one a newer kernel adds: file_setattr) fails with
 *     ENOSYS;
 *   - seccomp (libseccomp), for the native architecture (foreign ABIs: see
 *     below), denying with EPERM unless said otherwise:
 *       mount, umount2, pivot_root, chroot, fsopen, fsconfig, fsmount, fspick,
 *       move_mount, open_tree, open_tree_attr, mount_setattr;
 *       ptrace, process_vm_readv, process_vm_writev; bpf, perf_event_open,
 *       userfaultfd; kexec_load, kexec_file_load, reboot; init_module,
 *       finit_module, delete_module; add_key, request_key, keyctl;
 *       unshare, setns, clone with any CLONE_NEW* flag; open_by_handle_at,
 *       name_to_handle_at; swapon, swapoff, iopl, ioperm, acct, quotactl,
 *       sethostname, setdomainname, settimeofday, clock_settime;
 *       ioctl TIOCSTI and TIOCLINUX (low 32 bits of the request compared);
 *       kill(-1, ...);
 *       ENOSYS (so libc and liburing users fall back): clone3,
 *       io_uring_setup, io_uring_enter, io_uring_register;
 *       with no_network: socket() and socketpair() whose domain is not
 *       AF_UNIX (all 64 bits compared: junk in the high half is denied);
 *       with daemon_pid: kill/tgkill/rt_sigqueueinfo/rt_tgsigqueueinfo/
 *       pidfd_open aimed at its pid, kill at -pid and at -(its process
 *       group), kill(0) when it shares our process group, fcntl(F_SETOWN) at
 *       it; tkill, fcntl(F_SETOWN_EX), ioctl FIOSETOWN/SIOCSPGRP entirely
 *       (their target cannot be checked); pidfd_send_signal entirely when
 *       Landlock has no signal scope (ABI < 6; from ABI 6 the scope covers
 *       it, and /proc/<pid> fds, which seccomp cannot see);
 *       with Landlock ABI < 3 (no TRUNCATE right, e.g. Debian 12's 6.1
 *       kernel): truncate(2) entirely, open/openat with O_TRUNC on a
 *       descriptor not opened for writing, and openat2 (ENOSYS) - the ways
 *       to truncate a file that Landlock cannot see there (so truncate(2)
 *       fails inside the workspace too; ftruncate and O_TRUNC on a
 *       descriptor opened for writing work).
 *     Foreign ABIs are denied entirely, not filtered: only the native
 *     architecture is in the filter, and libseccomp's bad-arch action is set
 *     to ERRNO(EPERM), so every i386 (int 0x80, sysenter) and x32 system call
 *     fails with EPERM. Filtering them would need per-ABI argument rules
 *     (i386 socketcall() passes socket()'s domain in memory, where seccomp
 *     cannot read it) for binaries a coding agent does not run; 32-bit
 *     programs therefore cannot run under `txfs run`.
 *
 * Not covered here (Landlock has no right for them), but by the supervisor
 * of `txfs run` (supervise.h), a second, notifying seccomp filter:
 *   - metadata of files outside the writable paths (chmod, chown, utimes,
 *     setxattr);
 *   - connect() to pathname unix sockets outside the workspace; besides,
 *     the daemon's control socket refuses peers under a seccomp filter by
 *     itself (fs/session/sock.c), which is why running without seccomp needs
 *     allow_weaker;
 *   - with Landlock ABI < 6, signals sent by thread id to the daemon's
 *     threads other than its main one (kill(tid) reaches the whole process);
 *     seccomp cannot know those ids. confine_apply() says so in *why;
 *   - exec deny rules are not enforced here (see confine_opts.exec_deny).
 *
 * Older kernels are stricter, never weaker: with Landlock ABI 1 (no REFER
 * right) renames and links across folders fail with EXDEV even inside the
 * workspace (mv copies instead). The daemon should run in its own process
 * group and session (kill(0) and terminal signals to our group would reach
 * it otherwise; confine_apply() denies kill(0) in that case).
 *
 * Reading is not restricted by Landlock (its read rights are an allow-list:
 * a folder cannot be carved out of an allowed parent); the folders in
 * o->hidden are covered by an empty tmpfs in a private mount namespace
 * instead (confine_ns.c, confine_hide()), before Landlock and seccomp,
 * which then keep the command from removing the cover. Where no namespace
 * can be had (unprivileged user namespaces disabled), Landlock handles
 * READ_FILE and READ_DIR too and grants them beneath every entry of the
 * folders on the way to a hidden folder but the way itself
 * (confine_hide_rules(); *why says so): / and those folders cannot be
 * listed then. Without Landlock either: refused unless allow_weaker.
 *
 * Threads: landlock_restrict_self() restricts only the calling thread, so
 * confine_apply() must run in a single-threaded process: the child between
 * fork() and exec(). Errors the user can cause (options, kernel support,
 * missing writable paths) are returned before anything is enforced; an error
 * after that (rare: prctl, landlock_restrict_self, seccomp_load) leaves the
 * process partially confined, so on any error the child must _exit, not
 * exec the command.
 */
#ifndef TXFS_CONFINE_H
#define TXFS_CONFINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct confine_opts {
	const char *const *writable;	/* absolute paths where writes are allowed (workspace mount, /tmp, $TMPDIR, policy extras) */
	size_t n_writable;
	pid_t daemon_pid;		/* 0 if none: kill/ptrace of it denied */
	bool no_network;		/* deny non-unix sockets */
	bool allow_weaker;		/* run even if Landlock/seccomp can't enforce everything */
	/* setsid and setpgid denied (EPERM): every process keeps the process
	 * group it starts in, which is how the daemon knows a command of txfs
	 * exec after txfs exec is gone (fs/session/exectree.c) */
	bool keep_group;
	/*
	 * `exec deny` rules of the policy (absolute paths or globs). Not
	 * enforced by confine_apply(), which only validates them: Landlock can
	 * grant EXECUTE per hierarchy but cannot carve one program out of an
	 * allowed folder. The filesystem enforces them in its open-for-exec
	 * check, which sees only files under the workspace mount.
	 */
	const char *const *exec_deny;
	size_t n_exec_deny;
	/*
	 * Folders the command must not read (the state folder, a real
	 * directory mounted elsewhere): absolute, canonical (no symlink, no
	 * "." or ".."), existing, neither holding nor inside a writable path.
	 * Covered in a private mount namespace (confine_hide()); where the
	 * kernel allows no such namespace, refused unless allow_weaker.
	 */
	const char *const *hidden;
	size_t n_hidden;
};

/* Longest *why message, including the terminating NUL. */
#define CONFINE_WHY_MAX 512

/*
 * Report what the kernel supports (Landlock ABI, seccomp), for --help/--json
 * and tests. *landlock_abi is always set: 0 when Landlock is missing,
 * disabled at boot or blocked, else its ABI version.
 * Returns 0 when confine_apply() can enforce everything without
 * allow_weaker, -ENOSYS when seccomp filters are unavailable, -EOPNOTSUPP
 * when Landlock is, -EINVAL when landlock_abi is NULL.
 */
int confine_probe(int *landlock_abi);

/*
 * Check o without changing anything: writable entries non-NULL, absolute
 * and shorter than PATH_MAX; n_* > 0 only with a non-NULL array; daemon_pid
 * >= 0 and not the caller; exec_deny entries non-empty and absolute (a glob
 * may start with '*'). Returns 0 or -EINVAL and, if why is not NULL, sets
 * *why as confine_apply() does.
 */
int confine_check_opts(const struct confine_opts *o, const char **why);

/*
 * Apply in the current process (call in the child between fork and exec).
 * Returns 0 or a negative errno; on refusal (kernel can't enforce and
 * !allow_weaker) returns -ENOSYS (no seccomp filters) or -EOPNOTSUPP (no
 * Landlock) and sets *why to a human-readable reason.
 *
 * *why (why may be NULL) points to a static buffer of this module, valid
 * until the next confine_* call; never free it. It is set on every error
 * (-EINVAL bad options, -ENOENT etc. for a writable path that cannot be
 * opened, other errnos from prctl/landlock/seccomp) and, on success, to a
 * note of what is weaker than asked (allow_weaker) or not covered on this
 * kernel (daemon threads before Landlock ABI 6), or to NULL when nothing is.
 */
int confine_apply(const struct confine_opts *o, const char **why);

/*
 * confine_ns.c - hide paths[0..n) (absolute, canonical, existing folders)
 * from this process and everything it execs: a private mount namespace
 * (inside a new user namespace mapping only our uid and gid when
 * unshare(CLONE_NEWNS) alone is not permitted), every mount a slave, each
 * path covered by an empty read-only tmpfs of mode 000. Tried first in a
 * child that exits at once, so that a failure anywhere (not only of the
 * unshare) leaves this process untouched. Single-threaded callers only
 * (the child between fork and exec), before Landlock (which forbids
 * mounting) and seccomp. *how (may be NULL): CONFINE_NS_NONE while
 * nothing was changed (n == 0, or the trial failed: the caller may fall
 * back), CONFINE_NS_MOUNT, CONFINE_NS_USER. *step (may be NULL): on error
 * what failed (a static string or one of paths), else NULL.
 * Returns 0 or a negative errno (EPERM, ENOSPC, EINVAL: no namespace for
 * us; others from mount(2) or the uid and gid maps).
 */
enum confine_ns { CONFINE_NS_NONE, CONFINE_NS_MOUNT, CONFINE_NS_USER };
int confine_hide(const char *const *paths, size_t n, enum confine_ns *how,
		 const char **step);

/*
 * confine_ns.c, the fallback without a namespace: add to the Landlock
 * ruleset (which handles rights, READ_FILE and READ_DIR) rules granting
 * rights beneath every entry of every folder on the way from / to each of
 * hidden[0..n) but those on the way and the hidden folders: the hidden
 * folders are then unreadable, and so are the folders on the way
 * themselves (/ cannot be listed) and what is made in them later. A
 * symlink among the entries gets a rule on itself (O_NOFOLLOW), never on
 * its target. Returns 0 or a negative errno (a folder on the way that
 * cannot be listed), *step the hidden folder it was for.
 */
int confine_hide_rules(int ruleset, const char *const *hidden, size_t n,
		       uint64_t rights, const char **step);

/*
 * confine_known.c - the system calls the confinement knows: a second
 * seccomp filter, loaded by confine_apply() before the deny filter, allows
 * only them and answers every other number ENOSYS (a call a newer kernel
 * adds is refused until reviewed; the list and the rule are in
 * confine_known.c and txfs(1)).
 *
 * confine_known_each: fn(nr, name, arg) for each allowed call of the
 * native architecture; stops at fn's first non-zero return (returned).
 * confine_known_filter: that filter, built, not loaded, in *out (a
 * scmp_filter_ctx). 0 or a negative errno.
 */
int confine_known_each(int (*fn)(int nr, const char *name, void *arg), void *arg);
int confine_known_filter(void **out);

#ifdef TXFS_CONFINE_TEST
/*
 * Test builds only (-DTXFS_CONFINE_TEST): when >= 0, confine_* behave as if
 * the kernel's Landlock ABI were min(real, this), so tests can exercise the
 * paths for older kernels (0: no Landlock). Default -1.
 */
extern int confine_test_max_landlock_abi;
/* When true, confine_hide() fails as where no namespace is permitted. */
extern bool confine_test_no_ns;
#endif

#endif /* TXFS_CONFINE_H */
