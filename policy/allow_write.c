/* SPDX-License-Identifier: Apache-2.0 */
/*
 * allow_write.c - the `allow-write PATH...` rules of a policy: folders
 * outside the workspace that a confined command may write (an agent's own
 * state: ~/.claude, ~/.codex, ~/.cache ...). The parser only checks their
 * form (absolute, or ~/...); this reads them back from the policy's text,
 * so the engine's structures stay as they are.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"

/* One word of a rule, ~/ expanded against home, in *out: -EINVAL when
 * it is neither absolute nor ~/ (or ~/ without an absolute home). */
static int expand(const char *w, size_t n, const char *home, char **out)
{
	*out = NULL;
	if (n >= 2 && w[0] == '~' && w[1] == '/') {
		if (!home || home[0] != '/')
			return -EINVAL;
		if (asprintf(out, "%s%.*s", home, (int)n - 1, w + 1) < 0) {
			*out = NULL;
			return -ENOMEM;
		}
		return 0;
	}
	if (w[0] != '/')
		return -EINVAL;
	*out = strndup(w, n);
	return *out ? 0 : -ENOMEM;
}

int policy_allow_write(const struct policy *p, const char *home,
		       char ***paths, size_t *n)
{
	const char *t = p ? policy_text(p) : NULL;
	char **v = NULL;
	size_t cnt = 0;
	int rc;

	*paths = NULL;
	*n = 0;
	for (const char *l = t; l && *l;) {
		const char *e = strchr(l, '\n'), *c;
		size_t len = e ? (size_t)(e - l) : strlen(l);
		const char *end = l + len;

		while (l < end && (*l == ' ' || *l == '\t'))
			l++;
		if ((size_t)(end - l) > 12 && !strncmp(l, "allow-write", 11) &&
		    (l[11] == ' ' || l[11] == '\t')) {
			for (c = l + 11; c < end;) {
				size_t wl;
				char *s, **nv;

				while (c < end && (*c == ' ' || *c == '\t'))
					c++;
				if (c >= end || *c == '#')
					break;
				wl = strcspn(c, " \t\n");
				rc = expand(c, wl, home, &s);
				nv = rc ? NULL : realloc(v, (cnt + 1) * sizeof(*v));
				if (!nv) {
					free(s);
					policy_allow_write_free(v, cnt);
					return rc ? rc : -ENOMEM;
				}
				v = nv;
				v[cnt++] = s;
				c += wl;
			}
		}
		l = e ? e + 1 : NULL;
	}
	*paths = v;
	*n = cnt;
	return 0;
}

void policy_allow_write_free(char **paths, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
}
