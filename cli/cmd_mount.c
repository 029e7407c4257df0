/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_mount.c - `txfs mount` and `txfs umount`.
 *
 * Options may also come inside -o (state=DIR, policy=FILE, ctl-name=NAME)
 * so that fstab entries and `mount -t fuse.txfs -o state=DIR` work; the
 * rest of -o goes to FUSE.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "policy.h"
#include "../fs/mount.h"

static const char mount_usage[] =
"usage: txfs mount [--state DIR] [--policy FILE] [--ctl-name NAME]\n"
"                  [--no-ctl-verbs] [--salvage] [-f] [-d]\n"
"                  [-o OPT[,OPT...]] WORKSPACE [MNT]\n"
"\n"
"Mount a copy-on-write view of WORKSPACE, in place over WORKSPACE itself,\n"
"or at MNT. Every change is staged in a layer in the state folder; the\n"
"real directory is untouched until the change is committed.\n"
"\n"
"  --state DIR      where the layer lives (default:\n"
"                   $XDG_STATE_HOME/txfs/NAME-HASH or ~/.local/state/txfs/)\n"
"  --policy FILE    the policy (default: the shipped default policy)\n"
"  --ctl-name NAME  name of the control folder (default .txfs)\n"
"  --no-ctl-verbs   .txfs/ctl refuses every verb (txfs run uses it: the\n"
"                   txfs command still commits and rolls back)\n"
"  --salvage        mount a layer the check at mount found damaged,\n"
"                   read-only and never committed, to save what can\n"
"                   still be read (txfs diff, cp); then remove the state\n"
"                   folder\n"
"  -f               stay in the foreground\n"
"  -d               FUSE debug output (implies -f)\n"
"  -o OPT           FUSE mount options; also state=DIR, policy=FILE,\n"
"                   ctl-name=NAME, threads=N (threads serving requests,\n"
"                   1 to 64; default 1, or TXFS_THREADS), spin=US\n"
"  -o spin=US       before it sleeps, the daemon waits up to US (0-1000,\n"
"                   default 50, 0: off) microseconds awake for the next\n"
"                   request: faster file-heavy work on a VM whose idle\n"
"                   vCPUs halt; backs off when requests are sparse,\n"
"                   stays off while the CPUs are busy\n"
"  -o batch=MS      group commit: the layer takes many requests' changes\n"
"                   in one write (closed after MS ms, at 512 operations,\n"
"                   fsync, syncfs, commit, rollback, savepoint). A daemon\n"
"                   killed loses what came after the last of those, never\n"
"                   part of an operation (txfs(1), CRASHES). 0: off\n"
"  -o noopen        the kernel opens and closes files without asking the\n"
"                   daemon (no OPEN, no RELEASE): a build's header opens\n"
"                   cost nothing. Policy checks move to each read and\n"
"                   write; a policy with `exec deny` rules, `read` rules,\n"
"                   or `write` rules naming callers is refused. The\n"
"                   default when the policy has no exec, read or write\n"
"                   rule (the shipped default policy has none)\n"
"  -o open          every open asks the daemon, which checks the policy\n"
"                   there; the default for a policy with such rules\n"
"\n"
"Environment: TXFS_MAP_SIZE=SIZE (bytes, or 8G; K, M, G, T) sets the\n"
"layer's maximum size.\n"
"Note: txfs cannot stop the kernel from following a symlink inside the\n"
"workspace to a target outside it; `txfs run` confines commands so.\n";

/* -o threads=N: 1 to TXFS_THREADS_MAX. */
static int take_threads(struct txfs_opts *o, const char *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n < 1 || n > TXFS_THREADS_MAX) {
		cli_err(0, "mount: -o threads=%s: not a number from 1 to %d",
			v, TXFS_THREADS_MAX);
		return -EINVAL;
	}
	o->threads = (unsigned)n;
	return 0;
}

/* -o batch=MS: 0 (off) to 1000. */
static int take_batch(struct txfs_opts *o, const char *v)
{
	char *end;
	unsigned long n;

	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || end == v || *end || n > 1000) {
		cli_err(0, "mount: -o batch=%s: not a number of milliseconds "
			"from 0 (off) to 1000", v);
		return -EINVAL;
	}
	o->batch_ms = (unsigned)n;
	o->batch_set = true;
	return 0;
}

/* Split -o: our keys into opts, the rest appended to fuse (comma list). */
static int take_o(struct txfs_opts *o, char *arg, char *fuse, size_t fsize)
{
	char *save = NULL;

	for (char *t = strtok_r(arg, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		size_t used = strlen(fuse);

		if (!strncmp(t, "state=", 6))
			o->state = t + 6;
		else if (!strncmp(t, "policy=", 7))
			o->policy = t + 7;
		else if (!strncmp(t, "ctl-name=", 9))
			o->ctl_name = t + 9;
		else if (!strncmp(t, "spin=", 5))
			o->spin = t + 5;
		else if (!strcmp(t, "noopen") || !strcmp(t, "open")) {
			o->noopen = t[0] == 'n';
			o->open_set = true;
		}
		else if (!strcmp(t, "nohistory"))
			o->no_history = true;
		else if (!strncmp(t, "threads=", 8)) {
			if (take_threads(o, t + 8))
				return -EINVAL;
		} else if (!strncmp(t, "batch=", 6)) {
			if (take_batch(o, t + 6))
				return -EINVAL;
		} else if (used + strlen(t) + 2 < fsize)
			snprintf(fuse + used, fsize - used, "%s%s",
				 used ? "," : "", t);
		else
			return -E2BIG;
	}
	return 0;
}

static bool ctl_name_ok(const char *n)
{
	return n[0] && !strchr(n, '/') && strcmp(n, ".") && strcmp(n, "..") &&
	       strlen(n) <= 255;
}

/* Warn about processes whose current directory is inside the workspace:
 * they keep seeing the real directory, not the mount. */
static void warn_users(const char *ws)
{
	char *real = realpath(ws, NULL), link[PATH_MAX], path[300];
	struct dirent *de;
	size_t n;
	DIR *d;

	if (!real || !(d = opendir("/proc"))) {
		free(real);
		return;
	}
	n = strlen(real);
	while ((de = readdir(d))) {
		ssize_t l;

		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    atoi(de->d_name) == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cwd", de->d_name);
		l = readlink(path, link, sizeof(link) - 1);
		if (l < 0)
			continue;
		link[l] = '\0';
		if (!strncmp(link, real, n) && (link[n] == '\0' || link[n] == '/'))
			fprintf(stderr, "txfs: warning: process %s has its current "
				"directory in %s: it keeps seeing the real "
				"directory until it changes directory again\n",
				de->d_name, real);
	}
	closedir(d);
	free(real);
}

/* Before mounting: a hide rule over a file git tracks (hide_tracked.c).
 * A policy that does not load is left to the daemon to report. */
static void warn_hide_tracked(const struct txfs_opts *o)
{
	struct policy *p = NULL;
	char *msg = NULL;
	int rc = o->policy ? policy_load_file(o->policy, &p, &msg) :
			     policy_load_default(&p);

	free(msg);
	if (rc == 0)
		warn_hidden_tracked(o->workspace, p,
				    o->policy ? o->policy : "default.policy");
	policy_free(p);
}

int cmd_mount(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "state", required_argument, NULL, 's' },
		{ "policy", required_argument, NULL, 'p' },
		{ "ctl-name", required_argument, NULL, 'c' },
		{ "no-ctl-verbs", no_argument, NULL, 'V' },
		{ "salvage", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static char fuse[4096];
	struct txfs_opts o = { 0 };
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "fdo:h", lopts, NULL)) != -1) {
		switch (c) {
		case 's': o.state = optarg; break;
		case 'p': o.policy = optarg; break;
		case 'c': o.ctl_name = optarg; break;
		case 'V': o.no_ctl_verbs = true; break;
		case 'S': o.salvage = true; break;
		case 'f': o.foreground = true; break;
		case 'd': o.debug = o.foreground = true; break;
		case 'o':
			if ((rc = take_o(&o, optarg, fuse, sizeof(fuse)))) {
				if (rc == -E2BIG)
					cli_err(0, "mount: -o: too many "
						"options");
				return 2;
			}
			break;
		case 'h': fputs(mount_usage, stdout); return 0;
		default:
			cli_err(0, "mount: unknown option (see txfs mount "
				"--help)");
			return 2;
		}
	}
	if (argc - optind < 1 || argc - optind > 2) {
		cli_err(0, "mount: %s", argc - optind < 1 ?
			"missing WORKSPACE" : "too many arguments");
		fputs(mount_usage, stderr);
		return 2;
	}
	if (o.ctl_name && !ctl_name_ok(o.ctl_name)) {
		cli_err(0, "mount: --ctl-name %s: not a valid file name",
			o.ctl_name);
		return 2;
	}
	o.workspace = argv[optind];
	warn_users(o.workspace);
	warn_hide_tracked(&o);
	o.mountpoint = argc - optind == 2 ? argv[optind + 1] : NULL;
	o.fuse_opts = fuse[0] ? fuse : NULL;
	rc = txfs_run_mount(&o);
	return rc ? 1 : 0;
}

static const char umount_usage[] =
"usage: txfs umount [-z] [--ctl-name NAME] MNT\n"
"\n"
"Unmount a txfs mount and wait for its daemon to exit. The staged layer\n"
"is kept: the next `txfs mount` of the workspace resumes it. A stale mount\n"
"left by a dead daemon is cleaned up. -z detaches a busy mount lazily.\n";

/* Unmount mnt: umount2 when we are root (needs neither fusermount3 nor
 * /etc/mtab), else fusermount3 -u (-uz when lazy). 0, or -errno with why
 * saying what failed in the user's words: "busy ..." or fusermount3's own
 * message (it prints to stderr, which is read here, not passed through). */
static int run_fusermount(const char *mnt, bool lazy, char *why, size_t len)
{
	char buf[1024], *line;
	size_t got = 0;
	ssize_t n;
	int p[2], status, rc = -EBUSY;
	pid_t pid;

	snprintf(why, len, "busy (a process uses it; -z detaches it lazily)");
	if (geteuid() == 0) {
		if (umount2(mnt, lazy ? MNT_DETACH : 0) == 0)
			return 0;
		if (errno == EBUSY)
			return -EBUSY;
		if (errno != EPERM) {
			rc = -errno;
			snprintf(why, len, "%s", strerror(-rc));
			return rc;
		}
	}
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		rc = -errno;
		close(p[0]);
		close(p[1]);
		return rc;
	}
	if (pid == 0) {
		dup2(p[1], STDERR_FILENO);
		execlp("fusermount3", "fusermount3", lazy ? "-uz" : "-u", mnt,
		       (char *)NULL);
		dprintf(STDERR_FILENO, "fusermount3: cannot run it: %s\n",
			strerror(errno));
		_exit(127);
	}
	close(p[1]);
	while (got < sizeof(buf) - 1 &&
	       (n = read(p[0], buf + got, sizeof(buf) - 1 - got)) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		got += (size_t)n;
	}
	close(p[0]);
	buf[got] = '\0';
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	/* its last line says why; "busy" stays the message it was */
	while (got && buf[got - 1] == '\n')
		buf[--got] = '\0';
	line = strrchr(buf, '\n');
	line = line ? line + 1 : buf;
	if (*line && !strstr(line, "busy"))
		snprintf(why, len, "fusermount3 failed: %.400s", line);
	return rc;
}

/* The daemon's pid, from MNT/<ctl>/status.json ("pid":N), or 0. */
static pid_t daemon_pid(const char *mnt, const char *ctl)
{
	char path[PATH_MAX];
	json_t *o;
	json_int_t pid;

	snprintf(path, sizeof(path), "%s/%s/status.json", mnt, ctl);
	o = json_load_file(path, JSON_DISABLE_EOF_CHECK, NULL);
	pid = json_integer_value(json_object_get(o, "pid"));
	json_decref(o);
	return pid > 0 && pid <= INT_MAX ? (pid_t)pid : 0;
}

/* Has pid exited (gone, or a zombie its new parent has not reaped)? */
static bool exited(pid_t pid)
{
	char path[64], buf[512], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return true;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return true;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && (p[2] == 'Z' || p[2] == 'X');
}

static void wait_exit(pid_t pid, int seconds)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	for (int i = 0; pid > 0 && i < seconds * 500; i++) {
		if (exited(pid))
			return;
		nanosleep(&ts, NULL);
	}
}

/* A dead mount (its daemon died): detach it, and any dead one under. */
static int umount_dead(const char *mnt)
{
	int rc = txfs_unmount_stale(mnt);

	if (rc)
		cli_err(rc, "umount %s: stale mount", mnt);
	return rc ? 1 : 0;
}

/* /proc/self/mountinfo says txfs but the control folder did not answer
 * (a daemon that died between two looks, another --ctl-name, a dead
 * mount under a live one): unmount it all the same. */
static int umount_unknown(const char *mnt, bool lazy)
{
	struct statfs sfs;

	if (statfs(mnt, &sfs))
		return umount_dead(mnt);
	char why[512];

	if (run_fusermount(mnt, lazy, why, sizeof(why))) {
		cli_err(0, "umount %s: %s", mnt, why);
		return 1;
	}
	return txfs_unmount_stale(mnt) ? 1 : 0;
}

int cmd_umount(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "ctl-name", required_argument, NULL, 'c' },
		{ "lazy", no_argument, NULL, 'z' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *ctl = ".txfs";
	bool lazy = false;
	struct statfs sfs;
	char why[512];
	pid_t pid;
	int c, rc;

	optind = 1;
	while ((c = getopt_long(argc, argv, "zh", lopts, NULL)) != -1) {
		switch (c) {
		case 'c': ctl = optarg; break;
		case 'z': lazy = true; break;
		case 'h': fputs(umount_usage, stdout); return 0;
		default:
			cli_err(0, "umount: unknown option (see txfs umount "
				"--help)");
			return 2;
		}
	}
	if (argc - optind != 1) {
		cli_err(0, "umount: %s", argc - optind < 1 ? "missing MNT" :
			"too many arguments");
		return 2;
	}
	if (statfs(argv[optind], &sfs) &&
	    (errno == ENOTCONN || errno == ECONNABORTED))
		return umount_dead(argv[optind]);
	pid = daemon_pid(argv[optind], ctl);
	if (pid <= 0 && txfs_is_txfs_mount(argv[optind]))
		return umount_unknown(argv[optind], lazy);
	if (pid <= 0) {
		cli_err(0, "umount %s: not a txfs mount", argv[optind]);
		return 1;
	}
	rc = run_fusermount(argv[optind], lazy, why, sizeof(why));
	if (rc) {
		cli_err(0, "umount %s: %s", argv[optind], why);
		return 1;
	}
	wait_exit(pid, 30);
	if (!exited(pid))
		fprintf(stderr, "txfs: umount %s: detached, but its daemon (pid "
			"%d) still serves a copy of the mount that another mount "
			"namespace holds; it exits when that namespace ends\n",
			argv[optind], (int)pid);
	/* a dead mount left under the live one (stacked by an older run) */
	return txfs_unmount_stale(argv[optind]) ? 1 : 0;
}
