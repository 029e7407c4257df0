/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ignored.c - what git ignores in the real directory, for `limit deletes
 * N except-ignored` (txfs.policy(5)): the paths that
 *
 *   git ls-files -z --others --ignored --exclude-standard --directory
 *
 * lists when run on the REAL directory: untracked (not in git's index)
 * and matched by the repository's ignore rules (.gitignore files,
 * .git/info/exclude, core.excludesFile). A folder wholly ignored is one
 * entry ("node_modules/"), and stands for everything below it; a folder
 * that is a repository itself (a nested repository or a worktree the
 * parent ignores: it has a .git) is left out, its files are no cache.
 *
 * git runs only when the caller asks (at mount, before the FUSE mount
 * exists, and where the real directory is not the mount point, after a
 * commit or a reload), never per request. It only reads: hooks,
 * fsmonitor, optional locks and pagers off, safe.directory=* (a daemon of
 * another user may read the repository), its environment rebuilt (no
 * GIT_DIR or GIT_INDEX_FILE of the caller), stderr discarded. No repository,
 * no git, or a failure: an empty set (every loss counts).
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lower.h"

struct lower_ignored {
	char *buf;	/* git's output, NUL-separated */
	char **paths;	/* into buf, no trailing '/', sorted */
	size_t n;
};

static int cmp_path(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Read fd to its end into *out (NUL-terminated), *len bytes. */
static int read_all(int fd, char **out, size_t *len)
{
	size_t cap = 0;

	*out = NULL;
	*len = 0;
	for (;;) {
		ssize_t r;

		if (*len + 65536 > cap) {
			char *b = realloc(*out, cap + 65536 + 1);

			if (!b)
				return -ENOMEM;
			*out = b;
			cap += 65536;
		}
		r = read(fd, *out + *len, cap - *len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		*len += (size_t)r;
	}
	(*out)[*len] = '\0';
	return 0;
}

/* The environment git gets: the caller's HOME, PATH and XDG_CONFIG_HOME
 * (for core.excludesFile), nothing else of it. */
static void git_env(char **env, char (*bufs)[4096])
{
	static const char *const keep[] = { "HOME", "PATH",
					    "XDG_CONFIG_HOME" };
	size_t n = 0;

	for (size_t i = 0; i < 3; i++) {
		const char *v = getenv(keep[i]);

		if (!v && i == 1)
			v = "/usr/bin:/bin";
		if (v) {
			snprintf(bufs[n], sizeof(bufs[n]), "%s=%s", keep[i], v);
			env[n] = bufs[n];
			n++;
		}
	}
	env[n++] = "GIT_OPTIONAL_LOCKS=0";
	env[n++] = "LC_ALL=C";
	env[n] = NULL;
}

/* git's output for the real directory ws into *out, *len (empty when git
 * fails or is missing). */
static int run_git(const char *ws, char **out, size_t *len)
{
	char *argv[] = { "git", "--no-pager", "-c", "core.fsmonitor=false",
			 "-c", "core.hooksPath=/dev/null", "-c",
			 "safe.directory=*", "-C", (char *)ws, "ls-files",
			 "-z", "--others", "--ignored", "--exclude-standard",
			 "--directory", NULL };
	char envb[3][4096], *env[6];
	posix_spawn_file_actions_t fa;
	int pfd[2], status = 0, rc;
	pid_t pid, w;

	git_env(env, envb);
	if (pipe2(pfd, O_CLOEXEC))
		return -errno;
	if ((rc = -posix_spawn_file_actions_init(&fa)))
		goto out_pipe;
	if ((rc = -posix_spawn_file_actions_adddup2(&fa, pfd[1], 1)) ||
	    (rc = -posix_spawn_file_actions_addopen(&fa, 0, "/dev/null",
						    O_RDONLY, 0)) ||
	    (rc = -posix_spawn_file_actions_addopen(&fa, 2, "/dev/null",
						    O_WRONLY, 0)))
		goto out_fa;
	rc = -posix_spawnp(&pid, "git", &fa, NULL, argv, env);
	if (rc)
		goto out_fa;
	close(pfd[1]);
	pfd[1] = -1;
	rc = read_all(pfd[0], out, len);
	while ((w = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
		;
	if (rc == 0 && (w != pid || !WIFEXITED(status) ||
			WEXITSTATUS(status) != 0))
		*len = 0;	/* no repository: nothing is ignored */
out_fa:
	posix_spawn_file_actions_destroy(&fa);
out_pipe:
	close(pfd[0]);
	if (pfd[1] >= 0)
		close(pfd[1]);
	if (rc == -ENOENT)	/* no git: nothing is ignored */
		rc = 0;
	return rc;
}

/* Is ws/rel a repository of its own (has a .git)? */
static bool is_repo(const char *ws, const char *rel)
{
	struct stat st;
	char *p = NULL;
	bool yes;

	if (asprintf(&p, "%s/%s/.git", ws, rel) < 0)
		return true;	/* unknown: not exempt */
	yes = lstat(p, &st) == 0;
	free(p);
	return yes;
}

int lower_ignored_load(const char *ws, struct lower_ignored **out)
{
	struct lower_ignored *ig = calloc(1, sizeof(*ig));
	size_t len = 0, n = 0;
	int rc;

	*out = NULL;
	if (!ig)
		return -ENOMEM;
	if ((rc = run_git(ws, &ig->buf, &len)))
		goto fail;
	for (size_t i = 0; i < len; i++)
		n += ig->buf[i] == '\0';
	if (n && !(ig->paths = calloc(n, sizeof(*ig->paths)))) {
		rc = -ENOMEM;
		goto fail;
	}
	for (size_t i = 0; i < len;) {
		char *p = ig->buf + i;
		size_t l = strlen(p);

		bool dir = l && p[l - 1] == '/';

		i += l + 1;
		while (l && p[l - 1] == '/')
			p[--l] = '\0';
		if (l && ig->n < n && !(dir && is_repo(ws, p)))
			ig->paths[ig->n++] = p;
	}
	if (ig->n)
		qsort(ig->paths, ig->n, sizeof(*ig->paths), cmp_path);
	*out = ig;
	return 0;
fail:
	lower_ignored_free(ig);
	return rc;
}

bool lower_ignored_has(const struct lower_ignored *ig, const char *path)
{
	size_t l = path ? strlen(path) : 0;
	char *key;
	bool found = false;

	if (!ig || !ig->n || !l || !(key = malloc(l + 1)))
		return false;
	memcpy(key, path, l + 1);
	/* the path itself, or a folder above it, is an entry */
	for (size_t i = 1; i <= l && !found; i++) {
		if (i < l && path[i] != '/')
			continue;
		key[i] = '\0';
		found = bsearch(&key, ig->paths, ig->n, sizeof(*ig->paths),
				cmp_path) != NULL;
		key[i] = path[i];
	}
	free(key);
	return found;
}

size_t lower_ignored_count(const struct lower_ignored *ig)
{
	return ig ? ig->n : 0;
}

void lower_ignored_free(struct lower_ignored *ig)
{
	if (!ig)
		return;
	free(ig->paths);
	free(ig->buf);
	free(ig);
}
