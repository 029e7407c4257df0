// SPDX-License-Identifier: Apache-2.0
/*
 * confine_known.c - the system calls confinement knows (issue 23.3): a
 * seccomp filter whose default is ENOSYS and which allows only the calls
 * listed here, loaded under confine.c's deny filter. A call a newer kernel
 * adds (file_setattr, 469, Linux 6.17, changed inode flags that
 * FS_IOC_SETFLAGS is refused for) is therefore refused until it is
 * reviewed and listed, and ENOSYS makes libc fall back to the older call.
 *
 * The list: every x86_64 system call of Linux 6.1 (numbers 0-450, named as
 * libseccomp names them; on another architecture the same names, those it
 * lacks skipped) except the obsolete or never-implemented ones (uselib,
 * _sysctl, create_module, get_kernel_syms, query_module, nfsservctl,
 * getpmsg, putpmsg, afs_syscall, tuxcall, security, lookup_dcookie,
 * epoll_ctl_old, epoll_wait_old, vserver), then the reviewed newer ones
 * of known_new[] (x86_64 and aarch64 share their numbers). What the deny
 * filter and the supervisor do with a listed call is unchanged (mount:
 * EPERM, chmod: supervised, ...): a listed call is allowed by this filter
 * only. Not listed, so ENOSYS: fchmodat2, setxattrat, removexattrat (the
 * supervisor cannot check their dirfd+path forms yet; libc falls back to
 * fchmodat, setxattr, removexattr, which it checks), lsm_set_self_attr,
 * file_getattr, file_setattr, uretprobe, uprobe and every number above
 * the highest one listed.
 */
#include <errno.h>
#include <seccomp.h>
#include <stddef.h>

#include "confine.h"

static const char *const known_names[] = {
	"read", "write", "open", "close", "stat", "fstat", "lstat", "poll",
	"lseek", "mmap", "mprotect", "munmap", "brk", "rt_sigaction",
	"rt_sigprocmask", "rt_sigreturn", "ioctl", "pread64", "pwrite64",
	"readv", "writev", "access", "pipe", "select", "sched_yield", "mremap",
	"msync", "mincore", "madvise", "shmget", "shmat", "shmctl", "dup",
	"dup2", "pause", "nanosleep", "getitimer", "alarm", "setitimer",
	"getpid", "sendfile", "socket", "connect", "accept", "sendto",
	"recvfrom", "sendmsg", "recvmsg", "shutdown", "bind", "listen",
	"getsockname", "getpeername", "socketpair", "setsockopt", "getsockopt",
	"clone", "fork", "vfork", "execve", "exit", "wait4", "kill", "uname",
	"semget", "semop", "semctl", "shmdt", "msgget", "msgsnd", "msgrcv",
	"msgctl", "fcntl", "flock", "fsync", "fdatasync", "truncate",
	"ftruncate", "getdents", "getcwd", "chdir", "fchdir", "rename",
	"mkdir", "rmdir", "creat", "link", "unlink", "symlink", "readlink",
	"chmod", "fchmod", "chown", "fchown", "lchown", "umask",
	"gettimeofday", "getrlimit", "getrusage", "sysinfo", "times", "ptrace",
	"getuid", "syslog", "getgid", "setuid", "setgid", "geteuid", "getegid",
	"setpgid", "getppid", "getpgrp", "setsid", "setreuid", "setregid",
	"getgroups", "setgroups", "setresuid", "getresuid", "setresgid",
	"getresgid", "getpgid", "setfsuid", "setfsgid", "getsid", "capget",
	"capset", "rt_sigpending", "rt_sigtimedwait", "rt_sigqueueinfo",
	"rt_sigsuspend", "sigaltstack", "utime", "mknod", "personality",
	"ustat", "statfs", "fstatfs", "sysfs", "getpriority", "setpriority",
	"sched_setparam", "sched_getparam", "sched_setscheduler",
	"sched_getscheduler", "sched_get_priority_max",
	"sched_get_priority_min", "sched_rr_get_interval", "mlock", "munlock",
	"mlockall", "munlockall", "vhangup", "modify_ldt", "pivot_root",
	"prctl", "arch_prctl", "adjtimex", "setrlimit", "chroot", "sync",
	"acct", "settimeofday", "mount", "umount2", "swapon", "swapoff",
	"reboot", "sethostname", "setdomainname", "iopl", "ioperm",
	"init_module", "delete_module", "quotactl", "gettid", "readahead",
	"setxattr", "lsetxattr", "fsetxattr", "getxattr", "lgetxattr",
	"fgetxattr", "listxattr", "llistxattr", "flistxattr", "removexattr",
	"lremovexattr", "fremovexattr", "tkill", "time", "futex",
	"sched_setaffinity", "sched_getaffinity", "set_thread_area",
	"io_setup", "io_destroy", "io_getevents", "io_submit", "io_cancel",
	"get_thread_area", "epoll_create", "remap_file_pages", "getdents64",
	"set_tid_address", "restart_syscall", "semtimedop", "fadvise64",
	"timer_create", "timer_settime", "timer_gettime", "timer_getoverrun",
	"timer_delete", "clock_settime", "clock_gettime", "clock_getres",
	"clock_nanosleep", "exit_group", "epoll_wait", "epoll_ctl", "tgkill",
	"utimes", "mbind", "set_mempolicy", "get_mempolicy", "mq_open",
	"mq_unlink", "mq_timedsend", "mq_timedreceive", "mq_notify",
	"mq_getsetattr", "kexec_load", "waitid", "add_key", "request_key",
	"keyctl", "ioprio_set", "ioprio_get", "inotify_init",
	"inotify_add_watch", "inotify_rm_watch", "migrate_pages", "openat",
	"mkdirat", "mknodat", "fchownat", "futimesat", "newfstatat",
	"unlinkat", "renameat", "linkat", "symlinkat", "readlinkat",
	"fchmodat", "faccessat", "pselect6", "ppoll", "unshare",
	"set_robust_list", "get_robust_list", "splice", "tee",
	"sync_file_range", "vmsplice", "move_pages", "utimensat",
	"epoll_pwait", "signalfd", "timerfd_create", "eventfd", "fallocate",
	"timerfd_settime", "timerfd_gettime", "accept4", "signalfd4",
	"eventfd2", "epoll_create1", "dup3", "pipe2", "inotify_init1",
	"preadv", "pwritev", "rt_tgsigqueueinfo", "perf_event_open",
	"recvmmsg", "fanotify_init", "fanotify_mark", "prlimit64",
	"name_to_handle_at", "open_by_handle_at", "clock_adjtime", "syncfs",
	"sendmmsg", "setns", "getcpu", "process_vm_readv", "process_vm_writev",
	"kcmp", "finit_module", "sched_setattr", "sched_getattr", "renameat2",
	"seccomp", "getrandom", "memfd_create", "kexec_file_load", "bpf",
	"execveat", "userfaultfd", "membarrier", "mlock2", "copy_file_range",
	"preadv2", "pwritev2", "pkey_mprotect", "pkey_alloc", "pkey_free",
	"statx", "io_pgetevents", "rseq", "pidfd_send_signal",
	"io_uring_setup", "io_uring_enter", "io_uring_register", "open_tree",
	"move_mount", "fsopen", "fsconfig", "fsmount", "fspick", "pidfd_open",
	"clone3", "close_range", "openat2", "pidfd_getfd", "faccessat2",
	"process_madvise", "epoll_pwait2", "mount_setattr", "quotactl_fd",
	"landlock_create_ruleset", "landlock_add_rule",
	"landlock_restrict_self", "memfd_secret", "process_mrelease",
	"futex_waitv", "set_mempolicy_home_node",
};

#if defined(__x86_64__) || defined(__aarch64__)
/* Newer than Linux 6.1 (and than libseccomp 2.5.4's own table), reviewed. */
static const struct { int nr; const char *name; } known_new[] = {
	{ 451, "cachestat" },		/* page cache state of one's own fd */
	{ 453, "map_shadow_stack" },	/* one's own memory (CET) */
	{ 454, "futex_wake" }, { 455, "futex_wait" }, { 456, "futex_requeue" },
	{ 457, "statmount" }, { 458, "listmount" },	/* as /proc/self/mountinfo */
	{ 459, "lsm_get_self_attr" }, { 461, "lsm_list_modules" },
	{ 462, "mseal" },		/* one's own memory */
	{ 464, "getxattrat" }, { 465, "listxattrat" },	/* reading */
	{ 467, "open_tree_attr" },	/* listed so that confine.c's EPERM applies */
};
#endif

int confine_known_each(int (*fn)(int nr, const char *name, void *arg), void *arg)
{
	size_t i;
	int nr, rc;

	for (i = 0; i < sizeof(known_names) / sizeof(known_names[0]); i++) {
		nr = seccomp_syscall_resolve_name(known_names[i]);
		if (nr < 0)	/* not on this architecture */
			continue;
		rc = fn(nr, known_names[i], arg);
		if (rc)
			return rc;
	}
#if defined(__x86_64__) || defined(__aarch64__)
	for (i = 0; i < sizeof(known_new) / sizeof(known_new[0]); i++) {
		rc = fn(known_new[i].nr, known_new[i].name, arg);
		if (rc)
			return rc;
	}
#endif
	return 0;
}

static int allow_one(int nr, const char *name, void *arg)
{
	(void)name;
	return seccomp_rule_add((scmp_filter_ctx)arg, SCMP_ACT_ALLOW, nr, 0);
}

int confine_known_filter(void **out)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ERRNO(ENOSYS));
	int rc;

	*out = NULL;
	if (!ctx)
		return -ENOMEM;
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2);	/* binary tree */
	/* as confine.c's filter: foreign ABIs fail with EPERM */
	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc == 0)
		rc = confine_known_each(allow_one, ctx);
	if (rc < 0) {
		seccomp_release(ctx);
		return rc;
	}
	*out = ctx;
	return 0;
}
