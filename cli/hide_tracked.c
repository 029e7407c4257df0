/* SPDX-License-Identifier: Apache-2.0 */
/*
 * hide_tracked.c - warn when a hide rule hides a file git tracks.
 *
 * Hiding a tracked file hides it from the file system only: git still has
 * it in its objects (`git show HEAD:.env` prints it), and `git status` in
 * the mount shows it deleted (` D .env`), so `git commit -a` records its
 * deletion. The warning is given by the command line (txfs mount, txfs
 * policy check --workspace), which asks git itself, before any mount:
 * `git ls-files` (the index) and `git log --all --name-only
 * --diff-filter=A` (paths added in the newest HISTORY_MAX commits).
 * The daemon's request path never runs git.
 *
 * git runs with hooks, fsmonitor and pagers off (it only reads), its
 * stderr discarded; a workspace that is no repository gives no output.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "policy.h"

#define SHOW_MAX 20	/* paths named; the rest are counted */
/* commits of history looked at (newest first): a mount of a huge
 * repository must not wait for a walk of all its history */
#define HISTORY_MAX "10000"

/* The NUL-separated output of `git -C ws ARGS...` into *out. */
static int git_output(const char *ws, const char *const *args, char **out,
		      size_t *len)
{
	const char *argv[24] = { "git", "--no-pager", "-c",
				 "core.fsmonitor=false", "-c",
				 "core.hooksPath=/dev/null", "-c",
				 "safe.directory=*", "-C", ws };
	size_t n = 10, cap = 0;
	int pfd[2], status;
	pid_t pid;

	*out = NULL;
	*len = 0;
	/* every argument or none: a log without its -z (once cut off here)
	 * printed names one a line, read below as one NUL-ended name */
	for (; *args; args++) {
		if (n + 1 >= sizeof(argv) / sizeof(argv[0]))
			return -E2BIG;
		argv[n++] = *args;
	}
	argv[n] = NULL;
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -errno;
	}
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(pfd[1], 1);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 2);
		}
		execvp("git", (char *const *)argv);
		_exit(127);
	}
	close(pfd[1]);
	for (;;) {
		if (*len + 65536 > cap) {
			char *b = realloc(*out, cap + 65536 + 1);

			if (!b)
				break;
			*out = b;
			cap += 65536;
		}
		ssize_t r = read(pfd[0], *out + *len, cap - *len);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		*len += (size_t)r;
	}
	close(pfd[0]);
	waitpid(pid, &status, 0);
	if (*out)
		(*out)[*len] = '\0';
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every hidden path of the NUL-separated list buf into *v. */
static void collect(const struct policy *p, char *buf, size_t len,
		    char ***v, size_t *n, size_t *cap)
{
	for (size_t o = 0; buf && o < len;) {
		char *s = buf + o;
		size_t l = strnlen(s, len - o);

		o += l + 1;
		/* git log --name-only -z separates commits with a newline */
		while (l && *s == '\n') {
			s++;
			l--;
		}
		if (!l || !policy_is_hidden(p, s, l))
			continue;
		if (*n == *cap) {
			char **w = realloc(*v, (*cap + 64) * sizeof(*w));

			if (!w)
				return;
			*v = w;
			*cap += 64;
		}
		(*v)[(*n)++] = s;
	}
}

int warn_hidden_tracked(const char *ws, const struct policy *p,
			const char *policy_file)
{
	static const char *const index_args[] = { "ls-files", "-z", NULL };
	static const char *const log_args[] = { "log", "--all", "--format=",
						"--name-only",
						"--diff-filter=A", "-z",
						"--max-count=" HISTORY_MAX,
						NULL };
	char *idx = NULL, *log = NULL, **v = NULL;
	size_t ilen = 0, llen = 0, n = 0, cap = 0, shown = 0;
	struct policy_verdict verdict;

	if (!policy_hides_below(p, "", 0))
		return 0;
	git_output(ws, index_args, &idx, &ilen);
	git_output(ws, log_args, &log, &llen);
	collect(p, idx, ilen, &v, &n, &cap);
	collect(p, log, llen, &v, &n, &cap);
	if (n)
		qsort(v, n, sizeof(*v), cmp_str);
	for (size_t i = 0; i < n; i++) {
		char *q;

		if (i && !strcmp(v[i], v[i - 1]))
			continue;
		if (shown++ >= SHOW_MAX)
			continue;
		policy_check(p, POLICY_OP_READ, v[i], strlen(v[i]), &verdict);
		/* one line a name: quoted when it holds a newline, a control
		 * character or a quote (as in txfs's other output) */
		q = audit_cquote(v[i], NULL);
		fprintf(stderr, "txfs: warning: %s:%u hides %s, which git "
			"tracks in %s: the hide covers the file system only: "
			"`git show HEAD:%s` still prints it, and `git status` "
			"in the mount shows it deleted (' D %s'), so `git "
			"commit -a` there records its deletion\n",
			policy_file, verdict.line, q ? q : v[i], ws,
			q ? q : v[i], q ? q : v[i]);
		free(q);
	}
	if (shown > SHOW_MAX)
		fprintf(stderr, "txfs: warning: ... and %zu more hidden paths "
			"git tracks\n", shown - SHOW_MAX);
	free(v);
	free(idx);
	free(log);
	return (int)(shown > 0);
}
