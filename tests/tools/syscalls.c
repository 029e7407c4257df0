// SPDX-License-Identifier: Apache-2.0
/*
 * syscalls - the system call table of cli/sandbox/confine.c, probed from inside.
 *
 *   syscalls --expect-denied|--expect-allowed [--no-network]
 *            [--daemon-pid N] [--landlock-abi N]
 *
 * Calls each system call confine.c denies with arguments that make it fail
 * harmlessly when it is allowed (EFAULT, EBADF, EINVAL, ESRCH, or signal 0),
 * so a denial (EPERM; ENOSYS for clone3 and io_uring) is distinguishable,
 * and nothing is ever mounted, loaded, traced, signalled or created. Each
 * probe runs in a forked child (an int 0x80 on a kernel without i386
 * emulation kills only that child). Prints one line per probe:
 *
 *     mount: denied (EPERM)
 *     mount: allowed (EFAULT)
 *
 * then a summary; exits 1 if any result differs from the expectation, 2 on
 * wrong usage. Controls (calls that must stay allowed: clone without
 * namespace flags, ioctl TCGETS, AF_UNIX sockets, signals to ourselves) are
 * checked in both modes. --no-network: the socket probes expect denial too.
 * --daemon-pid: adds probes aimed at that process (signal 0 only).
 * --landlock-abi: the cap given to confined_exec, if any (the real ABI is
 * read from the kernel), for the one probe that depends on it.
 *
 * Inconclusive results are reported but are not failures: a probe whose
 * kernel code checks a capability before its arguments gives EPERM to
 * non-root callers whether or not seccomp denies it (run as root to tell),
 * and a kernel may lack a call (ENOSYS, or SIGSEGV for int 0x80 without i386
 * emulation). "known gap" marks the signal to a daemon thread by thread id,
 * which only Landlock ABI >= 6 refuses.
 *
 * Syscall numbers of the foreign ABIs: i386 close 6, mount 21, ptrace 26,
 * kill 37, socketcall 102, unshare 310, socket 359; x32 = x86_64 number |
 * 0x40000000.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BAD 1L			/* an address that always faults */
#define X32 0x40000000L		/* __X32_SYSCALL_BIT */
#define HIGH (1L << 32)		/* junk the kernel ignores in an int argument */
#define NR_OPEN_TREE_ATTR 467	/* Linux 6.15, not in the 6.1 headers */

enum expect {
	DENY,		/* EPERM when confined */
	DENY_NOSYS,	/* ENOSYS when confined */
	NET,		/* EPERM when confined with --no-network */
	ALLOW,		/* control: never denied */
	GAP,		/* EPERM when confined only with Landlock ABI >= 6 */
};

/* Probe flags. */
#define CAP_FIRST 1	/* a capability check comes before the arguments */
#define FOREIGN 2	/* i386 or x32 entry point */
#define NEEDS_DAEMON 4	/* only with --daemon-pid */
#define NEEDS_THREAD 8	/* only when the daemon has a second thread */
#define NEEDS_PGRP 16	/* only when the daemon leads its own process group */

struct probe {
	const char *name;
	long (*fn)(void);
	enum expect expect;
	int flags;
};

struct outcome {
	long ret;
	int err;
	int sig;
};

static pid_t daemon_pid, daemon_tid;

static long sys(long nr, long a, long b, long c, long d, long e)
{
	return syscall(nr, a, b, c, d, e);
}

#if defined(__x86_64__)
/* An i386 system call through int 0x80 (32-bit registers), errno-style. */
static long int80(long nr, long a, long b, long c)
{
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "memory", "r8", "r9", "r10", "r11");
	ret = (int)ret;
	if (ret < 0 && ret >= -4095) {
		errno = (int)-ret;
		return -1;
	}
	return ret;
}
#else
static long int80(long nr, long a, long b, long c)
{
	(void)nr, (void)a, (void)b, (void)c;
	errno = ENOSYS;
	return -1;
}
#endif

/* ---- mounts ---------------------------------------------------------------- */
static long p_mount(void) { return sys(SYS_mount, BAD, BAD, BAD, 0, BAD); }
static long p_umount2(void) { return sys(SYS_umount2, BAD, 0, 0, 0, 0); }
static long p_pivot_root(void) { return sys(SYS_pivot_root, BAD, BAD, 0, 0, 0); }
static long p_chroot(void) { return sys(SYS_chroot, BAD, 0, 0, 0, 0); }
static long p_fsopen(void) { return sys(SYS_fsopen, BAD, 0, 0, 0, 0); }
static long p_fsconfig(void) { return sys(SYS_fsconfig, -1, 0, BAD, 0, 0); }
static long p_fsmount(void) { return sys(SYS_fsmount, -1, 0, 0, 0, 0); }
static long p_fspick(void) { return sys(SYS_fspick, -1, BAD, 0, 0, 0); }
static long p_move_mount(void) { return sys(SYS_move_mount, -1, BAD, -1, BAD, 0); }
static long p_open_tree(void) { return sys(SYS_open_tree, -1, BAD, 0, 0, 0); }
static long p_open_tree_attr(void) { return sys(NR_OPEN_TREE_ATTR, -1, BAD, 0, BAD, 32); }
static long p_mount_setattr(void) { return sys(SYS_mount_setattr, -1, BAD, 0, BAD, 32); }

/* ---- other processes, kernel programs ---------------------------------------- */
static long p_ptrace(void) { return sys(SYS_ptrace, PTRACE_PEEKDATA, getpid(), 0, 0, 0); }
static long p_vm_readv(void) { return syscall(SYS_process_vm_readv, getpid(), BAD, 1, BAD, 1, 0); }
static long p_vm_writev(void) { return syscall(SYS_process_vm_writev, getpid(), BAD, 1, BAD, 1, 0); }
static long p_bpf(void) { return sys(SYS_bpf, 0, BAD, 64, 0, 0); }
static long p_perf(void) { return sys(SYS_perf_event_open, BAD, 0, -1, -1, 0); }
static long p_userfaultfd(void) { return sys(SYS_userfaultfd, ~0L, 0, 0, 0, 0); }

/* ---- the kernel ----------------------------------------------------------------- */
/* 1000 segments and a bogus architecture: EINVAL before anything is read. */
static long p_kexec_load(void) { return sys(SYS_kexec_load, 0, 1000, 0, 0xffff0000L, 0); }
static long p_kexec_file_load(void) { return sys(SYS_kexec_file_load, -1, -1, 0, 0, ~0L); }
/* Wrong magic numbers: EINVAL, never a reboot. */
static long p_reboot(void) { return sys(SYS_reboot, 0, 0, 0, 0, 0); }
/* Length 0: ENOEXEC before anything is loaded. */
static long p_init_module(void) { return sys(SYS_init_module, BAD, 0, BAD, 0, 0); }
static long p_finit_module(void) { return sys(SYS_finit_module, -1, BAD, 0, 0, 0); }
static long p_delete_module(void) { return sys(SYS_delete_module, BAD, 0, 0, 0, 0); }

/* ---- keyrings, namespaces, file handles ----------------------------------------- */
static long p_add_key(void) { return sys(SYS_add_key, BAD, BAD, 0, 0, 0); }
static long p_request_key(void) { return sys(SYS_request_key, BAD, BAD, BAD, 0, 0); }
static long p_keyctl(void) { return sys(SYS_keyctl, 0xffff, 0, 0, 0, 0); }
/* Bit 0 is not an unshare flag: EINVAL. */
static long p_unshare(void) { return sys(SYS_unshare, CLONE_NEWUSER | 1, 0, 0, 0, 0); }
static long p_setns(void) { return sys(SYS_setns, -1, 0, 0, 0, 0); }
/* CLONE_THREAD without CLONE_SIGHAND: EINVAL before any process exists. */
static long clone_ns(long flag) { return sys(SYS_clone, flag | CLONE_THREAD, 0, 0, 0, 0); }
static long p_clone_newns(void) { return clone_ns(CLONE_NEWNS); }
static long p_clone_newcgroup(void) { return clone_ns(CLONE_NEWCGROUP); }
static long p_clone_newuts(void) { return clone_ns(CLONE_NEWUTS); }
static long p_clone_newipc(void) { return clone_ns(CLONE_NEWIPC); }
static long p_clone_newuser(void) { return clone_ns(CLONE_NEWUSER); }
static long p_clone_newpid(void) { return clone_ns(CLONE_NEWPID); }
static long p_clone_newnet(void) { return clone_ns(CLONE_NEWNET); }
static long p_clone_newuser_high(void) { return clone_ns(HIGH | CLONE_NEWUSER); }
static long p_clone3(void) { return sys(SYS_clone3, BAD, 64, 0, 0, 0); }
static long p_open_by_handle(void) { return sys(SYS_open_by_handle_at, -1, BAD, 0, 0, 0); }
static long p_name_to_handle(void) { return sys(SYS_name_to_handle_at, -1, BAD, BAD, BAD, 0); }
static long p_uring_setup(void) { return sys(SYS_io_uring_setup, 1, BAD, 0, 0, 0); }
static long p_uring_enter(void) { return sys(SYS_io_uring_enter, -1, 0, 0, 0, 0); }
static long p_uring_register(void) { return sys(SYS_io_uring_register, -1, 0, 0, 0, 0); }

/* ---- host state ----------------------------------------------------------------- */
static long p_swapon(void) { return sys(SYS_swapon, BAD, 0, 0, 0, 0); }
static long p_swapoff(void) { return sys(SYS_swapoff, BAD, 0, 0, 0, 0); }
#if defined(__x86_64__)
static long p_iopl(void) { return sys(SYS_iopl, 4, 0, 0, 0, 0); }
static long p_ioperm(void) { return sys(SYS_ioperm, 0x10000, 1, 1, 0, 0); }
#endif
static long p_acct(void) { return sys(SYS_acct, BAD, 0, 0, 0, 0); }
static long p_quotactl(void) { return sys(SYS_quotactl, 0xffffffffL, BAD, 0, 0, 0); }
static long p_sethostname(void) { return sys(SYS_sethostname, BAD, 1, 0, 0, 0); }
static long p_setdomainname(void) { return sys(SYS_setdomainname, BAD, 1, 0, 0, 0); }
static long p_settimeofday(void) { return sys(SYS_settimeofday, BAD, 0, 0, 0, 0); }
static long p_clock_settime(void) { return sys(SYS_clock_settime, CLOCK_REALTIME, BAD, 0, 0, 0); }

/* ---- terminals, signals ---------------------------------------------------------- */
static long p_tiocsti(void) { return sys(SYS_ioctl, -1, TIOCSTI, BAD, 0, 0); }
static long p_tioclinux(void) { return sys(SYS_ioctl, -1, TIOCLINUX, BAD, 0, 0); }
static long p_tiocsti_high(void) { return sys(SYS_ioctl, -1, HIGH | TIOCSTI, BAD, 0, 0); }
static long p_tcgets(void) { return sys(SYS_ioctl, -1, TCGETS, BAD, 0, 0); }
static long p_tcgets_high(void) { return sys(SYS_ioctl, -1, ((long)TIOCSTI << 32) | TCGETS, BAD, 0, 0); }
/* Signal 0: permission check only, nothing is sent even when allowed. */
static long p_kill_all(void) { return sys(SYS_kill, -1, 0, 0, 0, 0); }
static long p_kill_all_low32(void) { return sys(SYS_kill, 0xffffffffL, 0, 0, 0, 0); }
static long p_kill_self(void) { return sys(SYS_kill, getpid(), 0, 0, 0, 0); }
static long p_clone_plain(void) { return sys(SYS_clone, CLONE_THREAD, 0, 0, 0, 0); }

/* ---- network ----------------------------------------------------------------------- */
/* Type 0xffff is invalid: EINVAL when the domain is allowed. */
static long sock(long domain) { return sys(SYS_socket, domain, 0xffff, 0, 0, 0); }
static long p_sock_inet(void) { return sock(AF_INET); }
static long p_sock_inet6(void) { return sock(AF_INET6); }
static long p_sock_netlink(void) { return sock(AF_NETLINK); }
static long p_sock_packet(void) { return sock(AF_PACKET); }
static long p_sock_unix_high(void) { return sock(HIGH | AF_UNIX); }
static long p_sock_unix(void) { return sock(AF_UNIX); }
static long p_socketpair_inet(void) { return sys(SYS_socketpair, AF_INET, 0xffff, 0, BAD, 0); }
static long p_socketpair_unix(void) { return sys(SYS_socketpair, AF_UNIX, 0xffff, 0, BAD, 0); }

/* ---- foreign ABIs (denied entirely) ------------------------------------------------ */
static long p_i386_close(void) { return int80(6, -1, 0, 0); }
static long p_i386_mount(void) { return int80(21, BAD, BAD, BAD); }
static long p_i386_ptrace(void) { return int80(26, PTRACE_PEEKDATA, getpid(), 0); }
static long p_i386_kill(void) { return int80(37, -1, 0, 0); }
static long p_i386_socketcall(void) { return int80(102, 1, BAD, 0); }
static long p_i386_socket(void) { return int80(359, AF_INET, 0xffff, 0); }
static long p_i386_unshare(void) { return int80(310, CLONE_NEWUSER | 1, 0, 0); }
static long p_x32_close(void) { return sys(X32 | 3, -1, 0, 0, 0, 0); }
static long p_x32_mount(void) { return sys(X32 | 165, BAD, BAD, BAD, 0, BAD); }
static long p_x32_kill(void) { return sys(X32 | 62, -1, 0, 0, 0, 0); }
static long p_x32_socket(void) { return sys(X32 | 41, AF_INET, 0xffff, 0, 0, 0); }
static long p_x32_unshare(void) { return sys(X32 | 272, CLONE_NEWUSER | 1, 0, 0, 0, 0); }

/* ---- the daemon (signal 0, or calls that fail before acting) ------------------------ */
static long dpid(void) { return daemon_pid; }
static long p_d_kill(void) { return sys(SYS_kill, dpid(), 0, 0, 0, 0); }
static long p_d_kill_high(void) { return sys(SYS_kill, HIGH | dpid(), 0, 0, 0, 0); }
static long p_d_kill_group(void) { return sys(SYS_kill, -dpid(), 0, 0, 0, 0); }
static long p_d_tgkill(void) { return sys(SYS_tgkill, dpid(), dpid(), 0, 0, 0); }
static long p_d_tkill(void) { return sys(SYS_tkill, dpid(), 0, 0, 0, 0); }
static long p_d_thread_kill(void) { return sys(SYS_kill, daemon_tid, 0, 0, 0, 0); }

static long p_d_sigqueue(void)
{
	siginfo_t si = { .si_code = SI_QUEUE };

	return sys(SYS_rt_sigqueueinfo, dpid(), 0, (long)&si, 0, 0);
}

static long p_d_tgsigqueue(void)
{
	siginfo_t si = { .si_code = SI_QUEUE };

	return sys(SYS_rt_tgsigqueueinfo, dpid(), dpid(), 0, (long)&si, 0);
}

static long p_d_pidfd_open(void) { return sys(SYS_pidfd_open, dpid(), 0, 0, 0, 0); }

static long p_d_pidfd_send(void)
{
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d", (int)daemon_pid);
	fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return sys(SYS_pidfd_send_signal, fd, 0, 0, 0, 0);
}

static long p_d_ptrace(void) { return sys(SYS_ptrace, PTRACE_PEEKDATA, dpid(), 0, 0, 0); }
static long p_d_vm_readv(void) { return syscall(SYS_process_vm_readv, dpid(), BAD, 1, BAD, 1, 0); }

/* F_SETOWN on a pipe without O_ASYNC: nothing is ever signalled. */
static long setown(long cmd, long arg)
{
	int fds[2];

	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	return sys(SYS_fcntl, fds[0], cmd, arg, 0, 0);
}

static long p_d_setown(void) { return setown(F_SETOWN, dpid()); }
static long p_d_setown_group(void) { return setown(F_SETOWN, -dpid()); }
static long p_self_setown(void) { return setown(F_SETOWN, getpid()); }

static long p_d_setown_ex(void)
{
	struct f_owner_ex owner = { .type = F_OWNER_PID, .pid = daemon_pid };

	return setown(F_SETOWN_EX, (long)&owner);
}

static long sock_owner(long request)
{
	int fds[2], who = daemon_pid;

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) < 0)
		return -1;
	return sys(SYS_ioctl, fds[0], request, (long)&who, 0, 0);
}

static long p_d_fiosetown(void) { return sock_owner(FIOSETOWN); }
static long p_d_siocspgrp(void) { return sock_owner(SIOCSPGRP); }

#define P(name, fn, expect, flags) { name, fn, expect, flags }

static const struct probe probes[] = {
	P("mount", p_mount, DENY, 0),
	P("umount2", p_umount2, DENY, 0),
	P("pivot_root", p_pivot_root, DENY, CAP_FIRST),
	P("chroot", p_chroot, DENY, 0),
	P("fsopen", p_fsopen, DENY, CAP_FIRST),
	P("fsconfig", p_fsconfig, DENY, 0),
	P("fsmount", p_fsmount, DENY, CAP_FIRST),
	P("fspick", p_fspick, DENY, CAP_FIRST),
	P("move_mount", p_move_mount, DENY, CAP_FIRST),
	P("open_tree", p_open_tree, DENY, 0),
	P("open_tree_attr", p_open_tree_attr, DENY, 0),
	P("mount_setattr", p_mount_setattr, DENY, CAP_FIRST),
	P("ptrace", p_ptrace, DENY, 0),
	P("process_vm_readv", p_vm_readv, DENY, 0),
	P("process_vm_writev", p_vm_writev, DENY, 0),
	P("bpf", p_bpf, DENY, CAP_FIRST),
	P("perf_event_open", p_perf, DENY, 0),
	P("userfaultfd", p_userfaultfd, DENY, CAP_FIRST),
	P("kexec_load", p_kexec_load, DENY, CAP_FIRST),
	P("kexec_file_load", p_kexec_file_load, DENY, CAP_FIRST),
	P("reboot", p_reboot, DENY, CAP_FIRST),
	P("init_module", p_init_module, DENY, CAP_FIRST),
	P("finit_module", p_finit_module, DENY, CAP_FIRST),
	P("delete_module", p_delete_module, DENY, CAP_FIRST),
	P("add_key", p_add_key, DENY, 0),
	P("request_key", p_request_key, DENY, 0),
	P("keyctl", p_keyctl, DENY, 0),
	P("unshare", p_unshare, DENY, 0),
	P("setns", p_setns, DENY, 0),
	P("clone(CLONE_NEWNS)", p_clone_newns, DENY, 0),
	P("clone(CLONE_NEWCGROUP)", p_clone_newcgroup, DENY, 0),
	P("clone(CLONE_NEWUTS)", p_clone_newuts, DENY, 0),
	P("clone(CLONE_NEWIPC)", p_clone_newipc, DENY, 0),
	P("clone(CLONE_NEWUSER)", p_clone_newuser, DENY, 0),
	P("clone(CLONE_NEWPID)", p_clone_newpid, DENY, 0),
	P("clone(CLONE_NEWNET)", p_clone_newnet, DENY, 0),
	P("clone(1<<32|CLONE_NEWUSER)", p_clone_newuser_high, DENY, 0),
	P("clone3", p_clone3, DENY_NOSYS, 0),
	P("open_by_handle_at", p_open_by_handle, DENY, CAP_FIRST),
	P("name_to_handle_at", p_name_to_handle, DENY, 0),
	P("io_uring_setup", p_uring_setup, DENY_NOSYS, 0),
	P("io_uring_enter", p_uring_enter, DENY_NOSYS, 0),
	P("io_uring_register", p_uring_register, DENY_NOSYS, 0),
	P("swapon", p_swapon, DENY, CAP_FIRST),
	P("swapoff", p_swapoff, DENY, CAP_FIRST),
#if defined(__x86_64__)
	P("iopl", p_iopl, DENY, 0),
	P("ioperm", p_ioperm, DENY, 0),
#endif
	P("acct", p_acct, DENY, CAP_FIRST),
	P("quotactl", p_quotactl, DENY, 0),
	P("sethostname", p_sethostname, DENY, CAP_FIRST),
	P("setdomainname", p_setdomainname, DENY, CAP_FIRST),
	P("settimeofday", p_settimeofday, DENY, 0),
	P("clock_settime", p_clock_settime, DENY, 0),
	P("ioctl(TIOCSTI)", p_tiocsti, DENY, 0),
	P("ioctl(TIOCLINUX)", p_tioclinux, DENY, 0),
	P("ioctl(1<<32|TIOCSTI)", p_tiocsti_high, DENY, 0),
	P("kill(-1, 0)", p_kill_all, DENY, 0),
	P("kill(0xffffffff, 0)", p_kill_all_low32, DENY, 0),
	P("socket(AF_INET)", p_sock_inet, NET, 0),
	P("socket(AF_INET6)", p_sock_inet6, NET, 0),
	P("socket(AF_NETLINK)", p_sock_netlink, NET, 0),
	P("socket(AF_PACKET)", p_sock_packet, NET, 0),
	P("socket(1<<32|AF_UNIX)", p_sock_unix_high, NET, 0),
	P("socketpair(AF_INET)", p_socketpair_inet, NET, 0),
	P("i386 close", p_i386_close, DENY, FOREIGN),
	P("i386 mount", p_i386_mount, DENY, FOREIGN),
	P("i386 ptrace", p_i386_ptrace, DENY, FOREIGN),
	P("i386 kill(-1, 0)", p_i386_kill, DENY, FOREIGN),
	P("i386 socketcall(SYS_SOCKET)", p_i386_socketcall, DENY, FOREIGN),
	P("i386 socket(AF_INET)", p_i386_socket, DENY, FOREIGN),
	P("i386 unshare", p_i386_unshare, DENY, FOREIGN),
	P("x32 close", p_x32_close, DENY, FOREIGN),
	P("x32 mount", p_x32_mount, DENY, FOREIGN),
	P("x32 kill(-1, 0)", p_x32_kill, DENY, FOREIGN),
	P("x32 socket(AF_INET)", p_x32_socket, DENY, FOREIGN),
	P("x32 unshare", p_x32_unshare, DENY, FOREIGN),
	P("daemon: kill(pid, 0)", p_d_kill, DENY, NEEDS_DAEMON),
	P("daemon: kill(1<<32|pid, 0)", p_d_kill_high, DENY, NEEDS_DAEMON),
	P("daemon: kill(-pid, 0)", p_d_kill_group, DENY, NEEDS_DAEMON | NEEDS_PGRP),
	P("daemon: tgkill(pid, pid, 0)", p_d_tgkill, DENY, NEEDS_DAEMON),
	P("daemon: tkill(pid, 0)", p_d_tkill, DENY, NEEDS_DAEMON),
	P("daemon: rt_sigqueueinfo(pid, 0)", p_d_sigqueue, DENY, NEEDS_DAEMON),
	P("daemon: rt_tgsigqueueinfo(pid, pid, 0)", p_d_tgsigqueue, DENY, NEEDS_DAEMON),
	P("daemon: pidfd_open(pid)", p_d_pidfd_open, DENY, NEEDS_DAEMON),
	P("daemon: pidfd_send_signal(/proc/pid, 0)", p_d_pidfd_send, DENY, NEEDS_DAEMON),
	P("daemon: ptrace(PEEKDATA, pid)", p_d_ptrace, DENY, NEEDS_DAEMON),
	P("daemon: process_vm_readv(pid)", p_d_vm_readv, DENY, NEEDS_DAEMON),
	P("daemon: fcntl(F_SETOWN, pid)", p_d_setown, DENY, NEEDS_DAEMON),
	P("daemon: fcntl(F_SETOWN, -pid)", p_d_setown_group, DENY, NEEDS_DAEMON | NEEDS_PGRP),
	P("daemon: fcntl(F_SETOWN_EX, pid)", p_d_setown_ex, DENY, NEEDS_DAEMON),
	P("daemon: ioctl(FIOSETOWN, pid)", p_d_fiosetown, DENY, NEEDS_DAEMON),
	P("daemon: ioctl(SIOCSPGRP, pid)", p_d_siocspgrp, DENY, NEEDS_DAEMON),
	P("daemon: kill(thread id, 0)", p_d_thread_kill, GAP, NEEDS_DAEMON | NEEDS_THREAD),
	P("control: clone(CLONE_THREAD)", p_clone_plain, ALLOW, 0),
	P("control: ioctl(TCGETS)", p_tcgets, ALLOW, 0),
	P("control: ioctl(TIOCSTI<<32|TCGETS)", p_tcgets_high, ALLOW, 0),
	P("control: socket(AF_UNIX)", p_sock_unix, ALLOW, 0),
	P("control: socketpair(AF_UNIX)", p_socketpair_unix, ALLOW, 0),
	P("control: kill(self, 0)", p_kill_self, ALLOW, 0),
	P("control: fcntl(F_SETOWN, self)", p_self_setown, ALLOW, 0),
};

/* ---- running and judging --------------------------------------------------------- */

struct config {
	bool expect_denied;
	bool no_network;
	bool daemon_leads_group;
	int landlock_abi;
};

struct tally {
	int total, expected, unexpected, inconclusive, gaps;
};

static struct outcome run_probe(const struct probe *p)
{
	struct outcome o = { .ret = -1, .err = 0, .sig = 0 };
	int fds[2], status;
	pid_t pid;

	if (pipe(fds) < 0) {
		o.err = errno;
		return o;
	}
	pid = fork();
	if (pid == 0) {
		close(fds[0]);
		errno = 0;
		o.ret = p->fn();
		o.err = o.ret == -1 ? errno : 0;
		if (write(fds[1], &o, sizeof(o)) != (ssize_t)sizeof(o))
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	if (pid < 0 || read(fds[0], &o, sizeof(o)) != (ssize_t)sizeof(o))
		o.err = pid < 0 ? errno : EIO;
	close(fds[0]);
	if (pid > 0 && waitpid(pid, &status, 0) == pid && WIFSIGNALED(status))
		o.sig = WTERMSIG(status);
	return o;
}

static bool wants_denial(const struct probe *p, const struct config *c)
{
	if (!c->expect_denied)
		return false;
	switch (p->expect) {
	case DENY:
	case DENY_NOSYS:
		return true;
	case NET:
		return c->no_network;
	case GAP:
		return c->landlock_abi >= 6;
	case ALLOW:
		return false;
	}
	return false;
}

static const char *errname(int err)
{
	const char *s = strerrorname_np(err);

	return s != NULL ? s : "?";
}

/* Print one line for the probe and count it in *t. */
static void judge(const struct probe *p, const struct outcome *o, const struct config *c,
		  struct tally *t)
{
	int denial = p->expect == DENY_NOSYS ? ENOSYS : EPERM;
	bool denied = o->sig == 0 && o->ret == -1 && o->err == denial;
	bool want = wants_denial(p, c);
	const char *note = NULL;

	if (o->sig != 0)
		printf("%s: killed (%s)", p->name, sigabbrev_np(o->sig));
	else
		printf("%s: %s (%s)", p->name, denied ? "denied" : "allowed",
		       o->ret == -1 ? errname(o->err) : "0");
	t->total++;
	if (o->sig != 0 && (p->flags & FOREIGN))
		note = "inconclusive: this ABI is missing from the kernel";
	else if (o->err == EPERM && denial == EPERM && (p->flags & CAP_FIRST) && geteuid() != 0)
		note = "inconclusive: capability check before the arguments, run as root";
	else if (denied && !want && denial == ENOSYS && !c->expect_denied)
		note = "inconclusive: the kernel lacks this call";
	else if (p->expect == GAP && !want && c->expect_denied)
		note = "known gap: Landlock ABI < 6 has no signal scope";
	if (note != NULL) {
		printf("  [%s]\n", note);
		if (p->expect == GAP)
			t->gaps++;
		else
			t->inconclusive++;
	} else if (denied == want && o->sig == 0) {
		printf("\n");
		t->expected++;
	} else {
		printf("  <- UNEXPECTED (expected %s)\n", want ? "denied" : "allowed");
		t->unexpected++;
	}
}

static bool applies(const struct probe *p, const struct config *c)
{
	if ((p->flags & NEEDS_DAEMON) && daemon_pid <= 0)
		return false;
	if ((p->flags & NEEDS_THREAD) && daemon_tid <= 0)
		return false;
	if ((p->flags & NEEDS_PGRP) && !c->daemon_leads_group)
		return false;
	return true;
}

/* ---- setup -------------------------------------------------------------------------- */

/* A thread of the daemon other than its main one, or 0. */
static pid_t find_daemon_thread(pid_t pid)
{
	char path[64];
	struct dirent *de;
	pid_t tid = 0;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (d == NULL)
		return 0;
	while ((de = readdir(d)) != NULL && tid == 0) {
		long v = strtol(de->d_name, NULL, 10);

		if (v > 0 && v != pid)
			tid = (pid_t)v;
	}
	closedir(d);
	return tid;
}

static int landlock_abi(int cap)
{
	long v = syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION);

	if (v < 0)
		v = 0;
	if (cap >= 0 && v > cap)
		v = cap;
	return (int)v;
}

static int usage(void)
{
	fprintf(stderr, "usage: syscalls --expect-denied|--expect-allowed [--no-network] "
		"[--daemon-pid N] [--landlock-abi N]\n");
	return 2;
}

static int parse(int argc, char **argv, struct config *c)
{
	int i, mode = 0, cap = -1;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--expect-denied") == 0)
			mode = 1, c->expect_denied = true;
		else if (strcmp(argv[i], "--expect-allowed") == 0)
			mode = 2, c->expect_denied = false;
		else if (strcmp(argv[i], "--no-network") == 0)
			c->no_network = true;
		else if (strcmp(argv[i], "--daemon-pid") == 0 && i + 1 < argc)
			daemon_pid = (pid_t)atoi(argv[++i]);
		else if (strcmp(argv[i], "--landlock-abi") == 0 && i + 1 < argc)
			cap = atoi(argv[++i]);
		else
			return -EINVAL;
	}
	if (mode == 0 || daemon_pid < 0)
		return -EINVAL;
	c->landlock_abi = landlock_abi(cap);
	if (daemon_pid > 0) {
		c->daemon_leads_group = getpgid(daemon_pid) == daemon_pid;
		daemon_tid = find_daemon_thread(daemon_pid);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct config c = { 0 };
	struct tally t = { 0 };
	size_t i;

	if (parse(argc, argv, &c) < 0)
		return usage();
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# syscalls: expect %s%s, euid %d, landlock ABI %d%s\n",
	       c.expect_denied ? "denied" : "allowed", c.no_network ? " (no network)" : "",
	       (int)geteuid(), c.landlock_abi, daemon_pid > 0 ? ", daemon probes" : "");
	for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		struct outcome o;

		if (!applies(&probes[i], &c))
			continue;
		o = run_probe(&probes[i]);
		judge(&probes[i], &o, &c, &t);
	}
	printf("# %d probes: %d as expected, %d unexpected, %d inconclusive, %d known gaps\n",
	       t.total, t.expected, t.unexpected, t.inconclusive, t.gaps);
	return t.unexpected > 0 ? 1 : 0;
}
