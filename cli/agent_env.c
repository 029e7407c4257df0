/* SPDX-License-Identifier: Apache-2.0 */
/*
 * agent_env.c - the environment of a confined command (txfs run, txfs
 * exec): by default it is inherited whole (an agent's API keys pass
 * through); --clean-env keeps only PATH, HOME, USER, LOGNAME, LANG,
 * LC_ALL, TERM and TMPDIR; each --env NAME keeps NAME, --env NAME=VALUE
 * sets it. Nothing in the environment reaches the control socket: the
 * daemon refuses every peer under a seccomp filter (fs/session/sock.c).
 *
 * An allow-write folder may not hold the state folder nor lie inside it:
 * the command could otherwise rewrite the staged layer, its undo log (and
 * so defeat rollbacks) or the audit log. Both are compared canonical
 * (cli_canon_path): a state folder not made yet, reached through a
 * symlink ("--state LINK/st" with LINK -> an allowed folder), is where
 * the symlink leads, not the words given.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "mountinfo.h"

static const char *const keep[] = { "PATH", "HOME", "USER", "LOGNAME",
				     "LANG", "LC_ALL", "TERM", "TMPDIR" };
#define NKEEP (sizeof(keep) / sizeof(keep[0]))

static void clean(void)
{
	char *saved[NKEEP] = { 0 };

	for (size_t i = 0; i < NKEEP; i++)
		saved[i] = getenv(keep[i]) ? strdup(getenv(keep[i])) : NULL;
	clearenv();
	for (size_t i = 0; i < NKEEP; i++) {
		if (saved[i])
			setenv(keep[i], saved[i], 1);
		free(saved[i]);
	}
}

int cli_env_apply(const char *const *envs, size_t n, bool clean_env)
{
	char **vals = calloc(n ? n : 1, sizeof(*vals));
	int rc = vals ? 0 : -1;

	for (size_t i = 0; vals && i < n; i++)
		if (!strchr(envs[i], '=') && getenv(envs[i]))
			vals[i] = strdup(getenv(envs[i]));
	if (clean_env)
		clean();
	for (size_t i = 0; vals && i < n; i++) {
		const char *eq = strchr(envs[i], '=');

		if (eq) {
			char *name = strndup(envs[i], (size_t)(eq - envs[i]));

			if (!name || !name[0] || setenv(name, eq + 1, 1))
				rc = -1;
			free(name);
		} else if (vals[i]) {
			setenv(envs[i], vals[i], 1);
		}
		free(vals[i]);
	}
	free(vals);
	return rc;
}

/* Is one of the two paths the other or below it? */
static bool nested(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), l = la < lb ? la : lb;

	if (strncmp(a, b, l))
		return false;
	return la == lb || (la < lb ? b[la] == '/' || la == 1 :
				      a[lb] == '/' || lb == 1);
}

/* Most symlinks followed on one path (the kernel's MAXSYMLINKS). */
#define CANON_MAX_LINKS 40

/* Drop the last component of the canonical res ("/" stays "/"). */
static void canon_up(char *res)
{
	char *sl = strrchr(res, '/');

	if (sl == res)
		res[1] = '\0';
	else if (sl)
		*sl = '\0';
}

/* Put link's target in front of todo (the part still to walk); an
 * absolute target restarts res at "/". */
static int canon_link(const char *cand, char *res, char *todo, size_t size)
{
	char target[PATH_MAX], rest[PATH_MAX];
	ssize_t n = readlink(cand, target, sizeof(target) - 1);

	if (n < 0)
		return -errno;
	target[n] = '\0';
	snprintf(rest, sizeof(rest), "%s", todo);
	if ((size_t)snprintf(todo, size, "%s/%s", target, rest) >= size)
		return -ENAMETOOLONG;
	if (target[0] == '/')
		strcpy(res, "/");
	return 0;
}

/* Append component c (n bytes) to res: a symlink is followed, a name that
 * does not exist is appended as it is (so is everything after it). */
static int canon_step(char *res, const char *c, size_t n, char *todo,
		      size_t size, int *links)
{
	char cand[PATH_MAX];
	struct stat st;

	if (n == 0 || (n == 1 && c[0] == '.'))
		return 0;
	if (n == 2 && c[0] == '.' && c[1] == '.') {
		canon_up(res);
		return 0;
	}
	if ((size_t)snprintf(cand, sizeof(cand), "%s%s%.*s", res,
			     res[1] ? "/" : "", (int)n, c) >= sizeof(cand))
		return -ENAMETOOLONG;
	if (lstat(cand, &st) < 0) {
		if (errno != ENOENT)
			return -errno;	/* ENOTDIR, EACCES: not a folder we know */
	} else if (S_ISLNK(st.st_mode)) {
		if (++*links > CANON_MAX_LINKS)
			return -ELOOP;
		return canon_link(cand, res, todo, size);
	}
	strcpy(res, cand);
	return 0;
}

int cli_canon_path(const char *path, char *out, size_t size)
{
	char res[PATH_MAX] = "/", todo[PATH_MAX], cwd[PATH_MAX];
	int links = 0, rc = 0;

	if (!path || !path[0])
		return -ENOENT;
	if (path[0] != '/' && !getcwd(cwd, sizeof(cwd)))
		return -errno;
	if ((size_t)snprintf(todo, sizeof(todo), "%s/%s",
			     path[0] == '/' ? "" : cwd, path) >= sizeof(todo))
		return -ENAMETOOLONG;
	while (todo[0] && rc == 0) {
		size_t n = strcspn(todo, "/");
		char c[NAME_MAX + 1];

		if (n > NAME_MAX)
			return -ENAMETOOLONG;
		memcpy(c, todo, n);
		c[n] = '\0';
		memmove(todo, todo + n + (todo[n] == '/'), strlen(todo + n) + 1);
		rc = canon_step(res, c, n, todo, sizeof(todo), &links);
	}
	if (rc == 0 && strlen(res) >= size)
		rc = -ENAMETOOLONG;
	if (rc == 0)
		strcpy(out, res);
	return rc;
}

int cli_allow_write_check(const char *path, const char *state)
{
	char rp[PATH_MAX], rs[PATH_MAX];
	int rc = cli_canon_path(path, rp, sizeof(rp));

	if (rc == 0)
		rc = cli_canon_path(state, rs, sizeof(rs));
	if (rc == -ELOOP || rc == -ENOTDIR)
		return -EPERM;	/* never usable as the state folder: refuse */
	if (rc < 0)
		return rc;
	return nested(rp, rs) ? -EPERM : 0;
}

/* Add canonical c to h unless a folder of h holds it; drop those it holds. */
static int hidden_put(struct cli_hidden *h, const char *c)
{
	size_t i, n = 0;

	for (i = 0; i < h->n; i++)
		if (nested(h->path[i], c) && strlen(h->path[i]) <= strlen(c))
			return 0;
	for (i = 0; i < h->n; i++)
		if (!nested(c, h->path[i]) && n++ != i)
			memcpy(h->path[n - 1], h->path[i], sizeof(h->path[i]));
	if (n == CLI_MAX_HIDDEN)
		return -E2BIG;
	strcpy(h->path[n++], c);
	h->n = n;
	for (i = 0; i < n; i++)
		h->list[i] = h->path[i];
	return 0;
}

struct others {
	struct cli_hidden *h;
	const char *self;
	const char *const *writable;
	size_t nw;
};

static int add_other(void *arg, const char *mnt, const char *src)
{
	struct others *o = arg;

	/* from mountinfo alone: nothing of another mount is read (its
	 * daemon may be stopped, and a read of it would hang) */
	if (strcmp(mnt, o->self) && src[0] == '/' && strcmp(src, mnt))
		(void)cli_hidden_add(o->h, src, o->writable, o->nw);
	return 0;
}

void cli_hidden_add_others(struct cli_hidden *h, const char *self_mnt,
			   const char *const *writable, size_t nw)
{
	struct others o = { h, self_mnt, writable, nw };

	(void)mountinfo_txfs_each(add_other, &o);
}

int cli_hidden_add(struct cli_hidden *h, const char *path,
		   const char *const *writable, size_t nw)
{
	char c[PATH_MAX];
	struct stat st;
	size_t i;
	int rc = cli_canon_path(path, c, sizeof(c));

	if (rc < 0)
		return rc;
	if (stat(c, &st) < 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	for (i = 0; i < nw; i++)
		if (cli_allow_write_check(writable[i], c) == -EPERM)
			return -EPERM;
	return hidden_put(h, c);
}
