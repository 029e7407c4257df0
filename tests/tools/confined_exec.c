// SPDX-License-Identifier: Apache-2.0
/*
 * confined_exec - test driver for cli/sandbox/confine.c until `txfs run` exists:
 * applies confine_apply() to itself, then execvp()s the command.
 *
 *   confined_exec [--no-network] [--allow-weaker] [--daemon-pid N]
 *                 [--landlock-abi N] [--exec-deny PATTERN]...
 *                 [--writable DIR...]... -- CMD [ARG...]
 *   confined_exec --probe          print "landlock_abi=N seccomp=yes|no"
 *   confined_exec --known          print the allow-listed system calls,
 *                                  "NR NAME" a line (cli/sandbox/confine_known.c)
 *
 * --writable takes one or more folders (until the next "--" argument) and
 * may be repeated. --landlock-abi caps the Landlock ABI used (this driver is
 * built with -DTXFS_CONFINE_TEST) to exercise older-kernel paths.
 *
 * Exit: the command's status; 125 when confinement is refused or fails
 * (the reason on stderr), 126 when the command cannot be executed, 127 when
 * it is not found, 2 on wrong usage. Notes of a weaker confinement go to
 * stderr as "confined_exec: note: ...".
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "confine.h"

#define MAX_PATHS 64

struct args {
	const char *writable[MAX_PATHS];
	const char *exec_deny[MAX_PATHS];
	const char *hidden[MAX_PATHS];
	struct confine_opts opts;
	char **cmd;
	bool probe, known;
};

static int usage(void)
{
	fprintf(stderr, "usage: confined_exec [--no-network] [--allow-weaker] "
		"[--daemon-pid N] [--landlock-abi N] [--exec-deny P]... "
		"[--hide DIR]... [--no-ns] [--writable DIR...]... -- CMD [ARG...]\n"
		"       confined_exec --probe | --known\n");
	return -EINVAL;
}

static int parse_int(const char *s, long *out)
{
	char *end;

	errno = 0;
	*out = strtol(s, &end, 10);
	return (errno != 0 || end == s || *end != '\0') ? -EINVAL : 0;
}

/* An option that takes one value (val is NULL when it is missing). */
static int parse_valued(struct args *a, const char *opt, const char *val)
{
	long v;

	if (val == NULL)
		return usage();
	if (strcmp(opt, "--exec-deny") == 0) {
		if (a->opts.n_exec_deny == MAX_PATHS)
			return usage();
		a->exec_deny[a->opts.n_exec_deny++] = val;
		return 0;
	}
	if (strcmp(opt, "--hide") == 0) {	/* confine_opts.hidden */
		if (a->opts.n_hidden == MAX_PATHS)
			return usage();
		a->hidden[a->opts.n_hidden++] = val;
		return 0;
	}
	if (parse_int(val, &v) < 0 || v < INT_MIN || v > INT_MAX)
		return usage();
	if (strcmp(opt, "--daemon-pid") == 0)
		a->opts.daemon_pid = (pid_t)v;
	else
		confine_test_max_landlock_abi = (int)v;
	return 0;
}

static int parse(struct args *a, int argc, char **argv)
{
	int i = 1, rc;

	while (i < argc) {
		const char *s = argv[i];

		if (strcmp(s, "--") == 0) {
			a->cmd = argv + i + 1;
			return argv[i + 1] != NULL ? 0 : usage();
		} else if (strcmp(s, "--probe") == 0) {
			a->probe = true;
		} else if (strcmp(s, "--known") == 0) {
			a->known = true;
		} else if (strcmp(s, "--no-network") == 0) {
			a->opts.no_network = true;
		} else if (strcmp(s, "--allow-weaker") == 0) {
			a->opts.allow_weaker = true;
		} else if (strcmp(s, "--no-ns") == 0) {	/* as without user namespaces */
			confine_test_no_ns = true;
		} else if (strcmp(s, "--writable") == 0) {
			while (i + 1 < argc && strncmp(argv[i + 1], "--", 2) != 0) {
				if (a->opts.n_writable == MAX_PATHS)
					return usage();
				a->writable[a->opts.n_writable++] = argv[++i];
			}
		} else if (strcmp(s, "--daemon-pid") == 0 || strcmp(s, "--landlock-abi") == 0 ||
			   strcmp(s, "--exec-deny") == 0 || strcmp(s, "--hide") == 0) {
			rc = parse_valued(a, s, argv[i + 1]);
			if (rc < 0)
				return rc;
			i += 2;
			continue;
		} else {
			return usage();
		}
		i++;
	}
	return a->probe || a->known ? 0 : usage();
}

static int print_known(int nr, const char *name, void *arg)
{
	(void)arg;
	printf("%d %s\n", nr, name);
	return 0;
}

static int probe(void)
{
	int abi = 0;
	int rc = confine_probe(&abi);

	printf("landlock_abi=%d seccomp=%s\n", abi, rc == -ENOSYS ? "no" : "yes");
	return 0;
}

int main(int argc, char **argv)
{
	static struct args a;
	const char *why = NULL;
	int rc;

	if (parse(&a, argc, argv) < 0)
		return 2;
	if (a.probe)
		return probe();
	if (a.known)
		return confine_known_each(print_known, NULL) ? 1 : 0;
	a.opts.writable = a.writable;
	a.opts.exec_deny = a.exec_deny;
	a.opts.hidden = a.hidden;
	rc = confine_apply(&a.opts, &why);
	if (rc < 0) {
		fprintf(stderr, "confined_exec: confinement refused: %s (%s)\n",
			why != NULL ? why : "no reason given", strerror(-rc));
		return 125;
	}
	if (why != NULL)
		fprintf(stderr, "confined_exec: note: %s\n", why);
	execvp(a.cmd[0], a.cmd);
	rc = errno;
	fprintf(stderr, "confined_exec: %s: %s\n", a.cmd[0], strerror(rc));
	return rc == ENOENT ? 127 : 126;
}
