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
 * so defeat rollbacks) or the audit log.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

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

int cli_allow_write_check(const char *path, const char *state)
{
	char rp[PATH_MAX], rs[PATH_MAX];

	if (!realpath(path, rp))
		return -errno;
	if (!realpath(state, rs)) {	/* not made yet: compare as given */
		if (errno != ENOENT || state[0] != '/' ||
		    strlen(state) >= sizeof(rs))
			return -EPERM;
		strcpy(rs, state);
	}
	return nested(rp, rs) ? -EPERM : 0;
}
