// SPDX-License-Identifier: Apache-2.0
/*
 * confine.c - confinement for `txfs run`: PR_SET_NO_NEW_PRIVS, a Landlock
 * ruleset through raw system calls, and a libseccomp deny-list filter. What
 * is denied, and why, is documented in confine.h; this file is the how.
 *
 * Invariants:
 *   - Never silently weaker than asked. A kernel feature that is missing is
 *     either compensated (Landlock ABI < 3 has no TRUNCATE right: seccomp
 *     denies the truncation paths Landlock cannot see; ABI < 6 has no signal
 *     scope: seccomp denies pidfd_send_signal), or refused unless
 *     allow_weaker (no Landlock, no seccomp), or reported in *why (daemon
 *     threads before ABI 6, which nothing here can cover).
 *   - The Landlock ruleset handles only write-like rights of the ABI in use,
 *     so reading and executing stay unrestricted (but in the fallback for
 *     hidden folders without a namespace, which handles reading too); the ruleset attribute is
 *     passed with the size of that ABI, so it works with kernels from 5.13
 *     and with the 6.1 uapi headers of Debian 12 (newer constants are
 *     defined here when missing).
 *   - The seccomp filter contains the native architecture only; every other
 *     ABI (i386 int 0x80, x32) gets the bad-arch action ERRNO(EPERM).
 *   - Everything that can fail for a reason the user can fix (options,
 *     kernel support, writable paths that do not exist, building the
 *     filter) fails before anything is enforced; the enforcing steps come
 *     last (enforce()). If one of those still fails, the process is
 *     partially confined: the caller must _exit, not exec.
 *   - *why always points to why_buf (static), never to allocated memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/landlock.h>
#include <sched.h>
#include <seccomp.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "confine.h"

/* ---- Landlock constants newer than the 6.1 uapi headers ---------------- */

#ifndef LANDLOCK_ACCESS_FS_REFER
#define LANDLOCK_ACCESS_FS_REFER (1ULL << 13)		/* ABI 2 */
#endif
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)	/* ABI 3 */
#endif
#ifndef LANDLOCK_ACCESS_NET_BIND_TCP
#define LANDLOCK_ACCESS_NET_BIND_TCP (1ULL << 0)	/* ABI 4 */
#endif
#ifndef LANDLOCK_ACCESS_NET_CONNECT_TCP
#define LANDLOCK_ACCESS_NET_CONNECT_TCP (1ULL << 1)	/* ABI 4 */
#endif
#ifndef LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET
#define LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET (1ULL << 0)	/* ABI 6 */
#endif
#ifndef LANDLOCK_SCOPE_SIGNAL
#define LANDLOCK_SCOPE_SIGNAL (1ULL << 1)		/* ABI 6 */
#endif
#ifndef __NR_landlock_create_ruleset
#define __NR_landlock_create_ruleset 444
#define __NR_landlock_add_rule 445
#define __NR_landlock_restrict_self 446
#endif

/* open_tree_attr (Linux 6.15) is unknown to libseccomp 2.5.4 and to the
 * 6.1 headers; 467 is its number on every architecture that has it. */
#ifdef __NR_open_tree_attr
#define NR_OPEN_TREE_ATTR __NR_open_tree_attr
#elif defined(__x86_64__) || defined(__aarch64__)
#define NR_OPEN_TREE_ATTR 467
#endif

/* struct landlock_ruleset_attr as of ABI 6; the kernel gets the prefix its
 * ABI knows (ll_attr_size), so older kernels never see unknown fields. */
struct ll_ruleset_attr {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;	/* ABI 4 */
	uint64_t scoped;		/* ABI 6 */
};

/* Rights that apply to a file (the others need a folder). */
#define LL_FILE_RIGHTS (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE | \
			LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_TRUNCATE)
#define LL_DEVICES (LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_BLOCK)

#ifdef TXFS_CONFINE_TEST
int confine_test_max_landlock_abi = -1;
#endif

/* ---- the reason buffer ---------------------------------------------------- */

static char why_buf[CONFINE_WHY_MAX];

/* Replace the message; returns err so callers can `return why_set(...)`. */
__attribute__((format(printf, 3, 4)))
static int why_set(const char **why, int err, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why_buf, sizeof(why_buf), fmt, ap);
	va_end(ap);
	*why = why_buf;
	return err;
}

/* Append a note ("; " between notes) without touching *why. */
__attribute__((format(printf, 1, 2)))
static void why_note(const char *fmt, ...)
{
	size_t len = strlen(why_buf);
	va_list ap;

	if (len > 0 && len + 2 < sizeof(why_buf)) {
		memcpy(why_buf + len, "; ", 3);
		len += 2;
	}
	va_start(ap, fmt);
	vsnprintf(why_buf + len, sizeof(why_buf) - len, fmt, ap);
	va_end(ap);
}

/* ---- options -------------------------------------------------------------- */

static int check_path(const char *what, size_t i, const char *p, bool glob_ok,
		      const char **why)
{
	if (p == NULL || p[0] == '\0')
		return why_set(why, -EINVAL, "%s entry %zu is empty", what, i);
	if (p[0] != '/' && !(glob_ok && p[0] == '*'))
		return why_set(why, -EINVAL, "%s entry %zu is not absolute: %s", what, i, p);
	if (strlen(p) >= PATH_MAX)
		return why_set(why, -EINVAL, "%s entry %zu is longer than PATH_MAX", what, i);
	return 0;
}

/* Is one path the other, or below it? (both canonical) */
static bool nested(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;

	if (strncmp(a, b, l))
		return false;
	return la == lb || (la < lb ? b[la] == '/' || la == 1 :
				      a[lb] == '/' || lb == 1);
}

/* Hidden folders: absolute, never "/" nor nested with a writable path (a
 * cover over the workspace would hide it; one inside a writable folder
 * could be moved away with its parent). */
static int check_hidden(const struct confine_opts *o, const char **why)
{
	size_t i, j;
	int rc;

	for (i = 0; i < o->n_hidden; i++) {
		rc = check_path("hidden", i, o->hidden[i], false, why);
		if (rc < 0)
			return rc;
		if (!strcmp(o->hidden[i], "/"))
			return why_set(why, -EINVAL, "hidden entry %zu is /", i);
		for (j = 0; j < o->n_writable; j++)
			if (nested(o->hidden[i], o->writable[j]))
				return why_set(why, -EINVAL, "hidden folder %s and "
					       "writable path %s are nested",
					       o->hidden[i], o->writable[j]);
	}
	return 0;
}

int confine_check_opts(const struct confine_opts *o, const char **why)
{
	const char *dummy;
	size_t i;
	int rc;

	if (why == NULL)
		why = &dummy;
	if (o == NULL)
		return why_set(why, -EINVAL, "no confinement options");
	if ((o->n_writable > 0 && o->writable == NULL) ||
	    (o->n_exec_deny > 0 && o->exec_deny == NULL) ||
	    (o->n_hidden > 0 && o->hidden == NULL))
		return why_set(why, -EINVAL, "a path list is NULL but its count is not 0");
	for (i = 0; i < o->n_writable; i++) {
		rc = check_path("writable", i, o->writable[i], false, why);
		if (rc < 0)
			return rc;
	}
	for (i = 0; i < o->n_exec_deny; i++) {
		rc = check_path("exec deny", i, o->exec_deny[i], true, why);
		if (rc < 0)
			return rc;
	}
	rc = check_hidden(o, why);
	if (rc < 0)
		return rc;
	if (o->daemon_pid < 0)
		return why_set(why, -EINVAL, "daemon pid %d is negative", (int)o->daemon_pid);
	if (o->daemon_pid > 0 && o->daemon_pid == getpid())
		return why_set(why, -EINVAL, "daemon pid %d is the confined process itself",
			       (int)o->daemon_pid);
	return 0;
}

/* ---- probing -------------------------------------------------------------- */

/* Landlock ABI version, 0 if unusable; *err gets the errno then. */
static int landlock_abi(int *err)
{
	long v = syscall(__NR_landlock_create_ruleset, NULL, 0,
			 LANDLOCK_CREATE_RULESET_VERSION);

	*err = v < 0 ? errno : 0;
	if (v < 0)
		return 0;
#ifdef TXFS_CONFINE_TEST
	if (confine_test_max_landlock_abi >= 0 && v > confine_test_max_landlock_abi) {
		v = confine_test_max_landlock_abi;
		*err = 0;
	}
#endif
	return (int)v;
}

static const char *landlock_missing(int err)
{
	switch (err) {
	case 0:
		return "hidden by the test build's ABI cap";
	case ENOSYS:
		return "not built into this kernel";
	case EOPNOTSUPP:
		return "disabled at boot (not in the lsm= list)";
	default:
		return strerror(err);
	}
}

/* 0 when seccomp filters returning errno values are available, else -ENOSYS. */
static int seccomp_supported(void)
{
	uint32_t action = SECCOMP_RET_ERRNO;

	if (syscall(SYS_seccomp, SECCOMP_GET_ACTION_AVAIL, 0, &action) == 0)
		return 0;
	if (errno == EOPNOTSUPP)
		return -ENOSYS;
	/* Kernels before 4.14 lack the operation; filters exist if prctl knows
	 * seccomp at all (it fails with EINVAL without CONFIG_SECCOMP). */
	return prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 ? -ENOSYS : 0;
}

int confine_probe(int *landlock_abi_out)
{
	int err;

	if (landlock_abi_out == NULL)
		return -EINVAL;
	*landlock_abi_out = landlock_abi(&err);
	if (seccomp_supported() < 0)
		return -ENOSYS;
	return *landlock_abi_out >= 1 ? 0 : -EOPNOTSUPP;
}

/* ---- Landlock ------------------------------------------------------------- */

/* Write-like rights the ruleset handles (denies unless a rule grants them). */
static uint64_t ll_handled_fs(int abi)
{
	uint64_t r = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
		     LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
		     LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
		     LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
		     LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

	if (abi >= 2)
		r |= LANDLOCK_ACCESS_FS_REFER;
	if (abi >= 3)
		r |= LANDLOCK_ACCESS_FS_TRUNCATE;
	return r;
}

static size_t ll_attr_size(int abi)
{
	if (abi >= 6)
		return sizeof(struct ll_ruleset_attr);
	if (abi >= 4)
		return offsetof(struct ll_ruleset_attr, scoped);
	return offsetof(struct ll_ruleset_attr, handled_access_net);
}

/*
 * Grant rights beneath path (a file gets only the rights that apply to
 * files). Returns 0, -errno of open() (the caller decides whether a missing
 * path matters) or -errno of landlock_add_rule.
 */
static int ll_allow(int ruleset, const char *path, uint64_t rights)
{
	struct landlock_path_beneath_attr rule;
	struct stat st;
	int fd, rc = 0;

	fd = open(path, O_PATH | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		rc = -errno;
		goto out_close;
	}
	if (!S_ISDIR(st.st_mode))
		rights &= LL_FILE_RIGHTS;
	rule.allowed_access = rights;
	rule.parent_fd = fd;
	if (syscall(__NR_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) < 0)
		rc = -errno;
out_close:
	close(fd);
	return rc;
}

/*
 * Always writable besides o->writable, when present: the device files
 * programs write to (a folder here gets file rights only: /dev/pts/N) and
 * /dev/shm, a temp folder like /tmp (POSIX semaphores, shared memory).
 */
static const struct {
	const char *path;
	bool folder_rights;
} ll_builtin[] = {
	{ "/dev/null", false }, { "/dev/zero", false }, { "/dev/full", false },
	{ "/dev/random", false }, { "/dev/urandom", false }, { "/dev/tty", false },
	{ "/dev/ptmx", false }, { "/dev/pts", false }, { "/dev/shm", true },
};

static int ll_add_rules(int ruleset, const struct confine_opts *o, uint64_t handled,
			const char **why)
{
	uint64_t folder = handled & ~LL_DEVICES;
	uint64_t file = handled & LL_FILE_RIGHTS;
	size_t i;
	int rc;

	for (i = 0; i < o->n_writable; i++) {
		rc = ll_allow(ruleset, o->writable[i], folder);
		if (rc < 0)
			return why_set(why, rc, "writable path %s: %s", o->writable[i],
				       strerror(-rc));
	}
	for (i = 0; i < sizeof(ll_builtin) / sizeof(ll_builtin[0]); i++) {
		rc = ll_allow(ruleset, ll_builtin[i].path,
			      ll_builtin[i].folder_rights ? folder : file);
		if (rc < 0 && rc != -ENOENT && rc != -EACCES && rc != -ENXIO)
			return why_set(why, rc, "Landlock rule for %s: %s", ll_builtin[i].path,
				       strerror(-rc));
	}
	return 0;
}

/* Build the ruleset (not yet enforced). Returns its fd or a negative errno.
 * ll_read: reading is handled too, granted everywhere but o->hidden. */
static int ll_prepare(const struct confine_opts *o, int abi, bool ll_read,
		      const char **why)
{
	const uint64_t read = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
	struct ll_ruleset_attr attr = {
		.handled_access_fs = ll_handled_fs(abi) | (ll_read ? read : 0),
	};
	const char *step;
	int ruleset, rc;

	if (abi >= 4 && o->no_network)
		attr.handled_access_net = LANDLOCK_ACCESS_NET_BIND_TCP |
					  LANDLOCK_ACCESS_NET_CONNECT_TCP;
	if (abi >= 6)
		attr.scoped = LANDLOCK_SCOPE_SIGNAL | LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET;
	ruleset = (int)syscall(__NR_landlock_create_ruleset, &attr, ll_attr_size(abi), 0);
	if (ruleset < 0)
		return why_set(why, -errno, "landlock_create_ruleset (ABI %d): %s", abi,
			       strerror(errno));
	rc = ll_add_rules(ruleset, o, attr.handled_access_fs, why);
	if (rc == 0 && ll_read &&
	    (rc = confine_hide_rules(ruleset, o->hidden, o->n_hidden, read, &step)))
		why_set(why, rc, "Landlock read rules hiding %s: %s", step, strerror(-rc));
	if (rc < 0) {
		close(ruleset);
		return rc;
	}
	return ruleset;
}

/* ---- seccomp -------------------------------------------------------------- */

#define LOW32 0xffffffffULL
#define U32(v) ((scmp_datum_t)(uint32_t)(v))

struct sc_deny {
	int nr;
	int err;
};

#define DENY(sys) { SCMP_SYS(sys), EPERM }
#define NOSYS(sys) { SCMP_SYS(sys), ENOSYS }

/* Denied whatever the arguments. */
static const struct sc_deny sc_always[] = {
	/* mounts, old and new API */
	DENY(mount), DENY(umount2), DENY(pivot_root), DENY(chroot), DENY(fsopen),
	DENY(fsconfig), DENY(fsmount), DENY(fspick), DENY(move_mount), DENY(open_tree),
	DENY(mount_setattr),
#ifdef NR_OPEN_TREE_ATTR
	{ NR_OPEN_TREE_ATTR, EPERM },
#endif
	/* other processes' memory, kernel programs, kernel exploitation aids */
	DENY(ptrace), DENY(process_vm_readv), DENY(process_vm_writev), DENY(bpf),
	DENY(perf_event_open), DENY(userfaultfd),
	/* the kernel itself */
	DENY(kexec_load), DENY(kexec_file_load), DENY(reboot), DENY(init_module),
	DENY(finit_module), DENY(delete_module),
	/* keyrings */
	DENY(add_key), DENY(request_key), DENY(keyctl),
	/* namespaces (clone: ns flags only, below; clone3: ENOSYS) */
	DENY(unshare), DENY(setns),
	/* file handles bypass path-based checks */
	DENY(open_by_handle_at), DENY(name_to_handle_at),
	/* host state that only a privileged caller could change anyway */
	DENY(swapon), DENY(swapoff), DENY(iopl), DENY(ioperm), DENY(acct),
	DENY(quotactl), DENY(sethostname), DENY(setdomainname), DENY(settimeofday),
	DENY(clock_settime),
	/* ENOSYS: glibc falls back to clone(), io_uring users to epoll/threads */
	NOSYS(clone3), NOSYS(io_uring_setup), NOSYS(io_uring_enter),
	NOSYS(io_uring_register),
};

/* Landlock ABI < 3: truncation that the ruleset cannot see. */
static const struct sc_deny sc_no_truncate[] = { DENY(truncate), NOSYS(openat2) };

static int sc_add_list(scmp_filter_ctx ctx, const struct sc_deny *d, size_t n)
{
	size_t i;
	int rc;

	for (i = 0; i < n; i++) {
		if (d[i].nr < 0)	/* pseudo number: not on this architecture */
			continue;
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((uint32_t)d[i].err), d[i].nr, 0);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Deny nr when argument arg's low 32 bits equal value. */
static int sc_deny_low32(scmp_filter_ctx ctx, int nr, unsigned arg, uint32_t value)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 1,
				SCMP_CMP(arg, SCMP_CMP_MASKED_EQ, LOW32, (scmp_datum_t)value));
}

static int sc_deny_clone_ns(scmp_filter_ctx ctx)
{
	static const uint64_t ns[] = { CLONE_NEWNS, CLONE_NEWCGROUP, CLONE_NEWUTS,
				       CLONE_NEWIPC, CLONE_NEWUSER, CLONE_NEWPID,
				       CLONE_NEWNET };
	size_t i;
	int rc;

	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(clone), 1,
				      SCMP_A0(SCMP_CMP_MASKED_EQ, ns[i], ns[i]));
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int sc_deny_basics(scmp_filter_ctx ctx)
{
	int rc;

	rc = sc_add_list(ctx, sc_always, sizeof(sc_always) / sizeof(sc_always[0]));
	if (rc == 0)
		rc = sc_deny_clone_ns(ctx);
	/* The kernel reads the ioctl request as an unsigned int. */
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(ioctl), 1, TIOCSTI);
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(ioctl), 1, TIOCLINUX);
	/* kill(-1, sig) signals every process we may signal. */
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(kill), 0, (uint32_t)-1);
	return rc;
}

/* socket()/socketpair() with any domain but AF_UNIX; all 64 bits compared so
 * junk in the upper half fails closed. */
static int sc_deny_network(scmp_filter_ctx ctx)
{
	int rc;

	rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socket), 1,
			      SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)AF_UNIX));
	if (rc == 0)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(socketpair), 1,
				      SCMP_A0(SCMP_CMP_NE, (scmp_datum_t)AF_UNIX));
	return rc;
}

/* fcntl(fd, F_SETOWN, who) for one value of who. */
static int sc_deny_setown(scmp_filter_ctx ctx, uint32_t who)
{
	return seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(fcntl), 2,
				SCMP_A1(SCMP_CMP_MASKED_EQ, LOW32, U32(F_SETOWN)),
				SCMP_A2(SCMP_CMP_MASKED_EQ, LOW32, (scmp_datum_t)who));
}

/*
 * Values of a pid argument that designate the daemon: its pid, -pid, its
 * process group negated and, when we share that group, 0. Returns the count.
 */
static size_t daemon_targets(pid_t d, uint32_t out[4])
{
	pid_t pgid = getpgid(d);
	size_t n = 0;

	out[n++] = (uint32_t)d;
	out[n++] = (uint32_t)-d;
	if (pgid > 0 && pgid != d)
		out[n++] = (uint32_t)-pgid;
	if (pgid > 0 && pgid == getpgrp())
		out[n++] = 0;
	return n;
}

static int sc_protect_daemon(scmp_filter_ctx ctx, pid_t d, bool signal_scope)
{
	static const struct sc_deny entirely[] = { DENY(tkill) };
	uint32_t who[4];
	size_t i, n = daemon_targets(d, who);
	int rc = 0;

	for (i = 0; i < n && rc == 0; i++) {
		rc = sc_deny_low32(ctx, SCMP_SYS(kill), 0, who[i]);
		if (rc == 0 && who[i] != 0)
			rc = sc_deny_setown(ctx, who[i]);
	}
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(tgkill), 0, (uint32_t)d);
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(rt_sigqueueinfo), 0, (uint32_t)d);
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(rt_tgsigqueueinfo), 0, (uint32_t)d);
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(pidfd_open), 0, (uint32_t)d);
	/* Owners given through memory or by thread id: cannot be checked. */
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(fcntl), 1, F_SETOWN_EX);
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(ioctl), 1, FIOSETOWN);
	if (rc == 0)
		rc = sc_deny_low32(ctx, SCMP_SYS(ioctl), 1, SIOCSPGRP);
	if (rc == 0)
		rc = sc_add_list(ctx, entirely, 1);
	/* A pidfd may come from open("/proc/<pid>"), invisible to seccomp. */
	if (rc == 0 && !signal_scope)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(pidfd_send_signal), 0);
	return rc;
}

/* open/openat with O_TRUNC on a descriptor without write access (O_RDONLY,
 * or the odd access mode 3): truncates without Landlock's WRITE_FILE check. */
static int sc_deny_open_trunc(scmp_filter_ctx ctx)
{
	static const scmp_datum_t modes[] = { O_TRUNC | O_RDONLY, O_TRUNC | O_ACCMODE };
	const scmp_datum_t mask = O_TRUNC | O_ACCMODE;
	size_t i;
	int rc = 0;

	for (i = 0; i < 2 && rc == 0; i++) {
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(open), 1,
				      SCMP_A1(SCMP_CMP_MASKED_EQ, mask, modes[i]));
		if (rc == 0)
			rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(openat), 1,
					      SCMP_A2(SCMP_CMP_MASKED_EQ, mask, modes[i]));
	}
	if (rc == 0)
		rc = sc_add_list(ctx, sc_no_truncate,
				 sizeof(sc_no_truncate) / sizeof(sc_no_truncate[0]));
	return rc;
}

static int sc_build(scmp_filter_ctx ctx, const struct confine_opts *o, int abi)
{
	int rc;

	rc = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_ERRNO(EPERM));
	if (rc == 0)
		rc = sc_deny_basics(ctx);
	if (rc == 0 && o->no_network)
		rc = sc_deny_network(ctx);
	if (rc == 0 && o->keep_group)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setsid), 0);
	if (rc == 0 && o->keep_group)
		rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(setpgid), 0);
	if (rc == 0 && o->daemon_pid > 0)
		rc = sc_protect_daemon(ctx, o->daemon_pid, abi >= 6);
	if (rc == 0 && abi >= 1 && abi < 3)
		rc = sc_deny_open_trunc(ctx);
	return rc;
}

/* Build the filter (not yet loaded) into *out. */
static int sc_prepare(const struct confine_opts *o, int abi, scmp_filter_ctx *out,
		      const char **why)
{
	scmp_filter_ctx ctx;
	int rc;

	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (ctx == NULL)
		return why_set(why, -ENOMEM, "seccomp_init failed");
	/* Optional niceties: raw kernel errnos, all threads of the caller. */
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_API_SYSRAWRC, 1);
	(void)seccomp_attr_set(ctx, SCMP_FLTATR_CTL_TSYNC, 1);
	rc = sc_build(ctx, o, abi);
	if (rc < 0) {
		seccomp_release(ctx);
		return why_set(why, rc, "building the seccomp filter: %s", strerror(-rc));
	}
	*out = ctx;
	return 0;
}

/* ---- the entry point ------------------------------------------------------ */

/* Refuse what the kernel cannot enforce, unless allow_weaker; else note it. */
static int check_support(const struct confine_opts *o, int abi, int abi_err, int sc,
			 const char **why)
{
	if (abi < 1 && !o->allow_weaker)
		return why_set(why, -EOPNOTSUPP,
			       "Landlock is unavailable (%s), so writes outside the "
			       "workspace cannot be refused; allow weaker confinement to "
			       "run anyway", landlock_missing(abi_err));
	if (sc < 0 && !o->allow_weaker)
		return why_set(why, -ENOSYS,
			       "seccomp filters are unavailable, so mount, ptrace and "
			       "the network cannot be denied; allow weaker confinement "
			       "to run anyway");
	if (abi < 1)
		why_note("Landlock unavailable (%s): writes are not restricted",
			 landlock_missing(abi_err));
	if (sc < 0)
		why_note("seccomp unavailable: no system call is denied%s",
			 o->no_network ? ", the network stays reachable" : "");
	if (sc < 0 && abi >= 1 && abi < 3)
		why_note("Landlock ABI %d cannot refuse truncating files outside", abi);
	return 0;
}

/*
 * Cover o->hidden (confine_ns.c) before Landlock, which forbids mounting.
 * No namespace to be had (nothing changed yet): with Landlock, its read
 * rules instead (*ll_read, noted); without, refused unless allow_weaker.
 * A failure after the unshare is always an error.
 */
static int hide(const struct confine_opts *o, int abi, bool *ll_read, const char **why)
{
	enum confine_ns how;
	const char *step;
	int rc = confine_hide(o->hidden, o->n_hidden, &how, &step);

	*ll_read = false;
	if (rc == 0)
		return 0;
	if (how != CONFINE_NS_NONE)
		return why_set(why, rc, "hiding the state folder: %s: %s", step,
			       strerror(-rc));
	if (abi >= 1) {
		*ll_read = true;
		why_note("no private mount namespace (%s): the state folder is hidden by "
			 "Landlock read rules, so the folders on its way (/ included) "
			 "cannot be listed and what is made in them later is unreadable",
			 strerror(-rc));
		return 0;
	}
	if (!o->allow_weaker)
		return why_set(why, -EOPNOTSUPP,
			       "neither a private mount namespace (%s: %s; unprivileged "
			       "user namespaces disabled?) nor Landlock, so the state "
			       "folder cannot be hidden from the command; allow weaker "
			       "confinement to run anyway", step, strerror(-rc));
	why_note("no private mount namespace (%s): the state folder stays readable",
		 strerror(-rc));
	return 0;
}

/*
 * Enforce what is prepared, in this order: no new privileges (required by
 * both), Landlock, seccomp (last, so the filter need not allow Landlock).
 */
static int enforce(int ruleset, scmp_filter_ctx known, scmp_filter_ctx ctx,
		   const char **why)
{
	int rc;

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return why_set(why, -errno, "PR_SET_NO_NEW_PRIVS: %s", strerror(errno));
	if (ruleset >= 0 && syscall(__NR_landlock_restrict_self, ruleset, 0) < 0)
		return why_set(why, -errno, "landlock_restrict_self: %s", strerror(errno));
	/* The allow-list first: the deny filter, loaded after it, runs first
	 * and its errno (EPERM for mount) is the one a denied call gets. */
	if (known != NULL) {
		rc = seccomp_load(known);
		if (rc < 0)
			return why_set(why, rc, "loading the allow-list filter: %s",
				       strerror(-rc));
	}
	if (ctx != NULL) {
		rc = seccomp_load(ctx);
		if (rc < 0)
			return why_set(why, rc, "loading the seccomp filter: %s", strerror(-rc));
	}
	return 0;
}

int confine_apply(const struct confine_opts *o, const char **why)
{
	scmp_filter_ctx ctx = NULL;
	void *known = NULL;
	const char *dummy;
	bool ll_read;
	int abi, abi_err, sc, rc, ruleset = -1;

	if (why == NULL)
		why = &dummy;
	*why = NULL;
	why_buf[0] = '\0';
	rc = confine_check_opts(o, why);
	if (rc < 0)
		return rc;
	abi = landlock_abi(&abi_err);
	sc = seccomp_supported();
	rc = check_support(o, abi, abi_err, sc, why);
	if (rc < 0)
		return rc;
	rc = hide(o, abi, &ll_read, why);
	if (rc < 0)
		return rc;
	if (abi >= 1) {
		ruleset = ll_prepare(o, abi, ll_read, why);
		if (ruleset < 0)
			return ruleset;
	}
	if (sc == 0) {
		rc = sc_prepare(o, abi, &ctx, why);
		if (rc < 0)
			goto out_close;
		rc = confine_known_filter(&known);
		if (rc < 0) {
			why_set(why, rc, "building the allow-list filter: %s", strerror(-rc));
			goto out_release;
		}
	}
	rc = enforce(ruleset, known, ctx, why);
	if (rc < 0)
		goto out_release;
	if (o->daemon_pid > 0 && abi < 6)
		why_note("Landlock ABI %d has no signal scope: the daemon's threads other "
			 "than its main one can still be signalled by thread id", abi);
	*why = why_buf[0] != '\0' ? why_buf : NULL;
out_release:
	if (known != NULL)
		seccomp_release(known);
	if (ctx != NULL)
		seccomp_release(ctx);
out_close:
	if (ruleset >= 0)
		close(ruleset);
	return rc;
}
