/* SPDX-License-Identifier: Apache-2.0 */
/*
 * loghide.c - the audit log as the mount shows it (.txfs/log and the
 * socket's "log" request: txfs log MNT, txfs exec's and txfs run's
 * reports, the MCP log tool): without the paths the mount's policy hides,
 * as a listing of the mount leaves them out. The log in the state folder
 * is shared by every session of the workspace (a human's session under
 * another policy too) and keeps every record whole; only what is served
 * through the mount is filtered:
 *
 *   - a record whose "path" is hidden (a veto, a guard event) is left out
 *     (absolute paths - the supervisor's run-exec vetoes - are judged
 *     below the mount point or the workspace, others are not hidden);
 *   - a hidden element of "needs_review" (commit) or "changes" (cmd-end:
 *     "K path", "R old -> new", either side) is left out of its array,
 *     and of the array's "_hex" twin at the same index;
 *   - an element of "argv" (cmd-begin: a command line, the human's too)
 *     with a word that is a hidden path - words split at blanks and the
 *     shell's  ;|&<>()'"=` characters, a leading ./ dropped - is replaced
 *     by "(hidden)": a guess at what the command names (a path built at
 *     run time, or relative to another folder, is not recognised);
 *   - after the last record, when anything was left out, one record
 *     {"time":...,"event":"hidden","left_out":N,...} says how many,
 *     never which.
 *
 * The last command's record in .txfs/status.json (last_command, kept in
 * the layer across sessions) is filtered the same way (loghide_object).
 *
 * Records that are not JSON are kept as they are (the log only holds
 * JSON lines; the test of log_wellformed says so).
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "session.h"

/* path (a record's bytes) is one the mount's policy hides. */
static bool hidden(const struct txfs *fs, const struct policy *p,
		   const char *path)
{
	const char *roots[2] = { fs->mnt_path, fs->ws_path };
	size_t i, n;

	if (!path || !path[0])
		return false;
	if (path[0] != '/')
		return policy_is_hidden(p, path, strlen(path));
	for (i = 0; i < 2; i++) {
		if (!roots[i])
			continue;
		n = strlen(roots[i]);
		if (!strncmp(path, roots[i], n) && path[n] == '/' && path[n + 1])
			return policy_is_hidden(p, path + n + 1, strlen(path + n + 1));
	}
	return false;
}

/* A "changes" line ("A path", "R old -> new") names a hidden path. */
static bool change_hidden(const struct txfs *fs, const struct policy *p,
			  const char *line)
{
	const char *rest = strlen(line) > 2 ? line + 2 : NULL, *arrow;
	char *old;
	bool h;

	if (!rest)
		return false;
	if (hidden(fs, p, rest))
		return true;
	if (line[0] != 'R' || !(arrow = strstr(rest, " -> ")))
		return false;
	if (!(old = strndup(rest, (size_t)(arrow - rest))))
		return true;	/* cannot tell: left out */
	h = hidden(fs, p, old) || hidden(fs, p, arrow + 4);
	free(old);
	return h;
}

/* An argument of a command line holds a word that is a hidden path. */
static bool arg_hidden(const struct txfs *fs, const struct policy *p,
		       const char *arg)
{
	static const char seps[] = " \t\n;|&<>()'\"=`";
	char *copy = strdup(arg), *save = NULL, *w;
	bool h = false;

	if (!copy)
		return true;
	for (w = strtok_r(copy, seps, &save); w && !h; w = strtok_r(NULL, seps, &save)) {
		while (w[0] == '.' && w[1] == '/')
			w += 2;
		h = hidden(fs, p, w);
	}
	free(copy);
	return h;
}

/* Replace the elements of "argv" that name hidden paths: how many. */
static unsigned filter_argv(const struct txfs *fs, const struct policy *p,
			    json_t *o)
{
	json_t *a = json_object_get(o, "argv"), *h = json_object_get(o, "argv_hex");
	unsigned left = 0;
	size_t i;

	for (i = 0; i < json_array_size(a); i++) {
		char *b = audit_json_bytes(o, "argv", (long)i);
		bool out = !b || arg_hidden(fs, p, b);

		free(b);
		if (!out)
			continue;
		json_array_set_new(a, i, json_string("(hidden)"));
		if (json_is_array(h))
			json_array_set_new(h, i, json_null());
		left++;
	}
	return left;
}

/* Leave the hidden elements of array key (and key_hex) out of o: how
 * many were. */
static unsigned filter_array(const struct txfs *fs, const struct policy *p,
			     json_t *o, const char *key, bool changes)
{
	char hk[80];
	json_t *a = json_object_get(o, key), *h;
	unsigned left = 0;
	size_t i;

	snprintf(hk, sizeof(hk), "%s_hex", key);
	h = json_object_get(o, hk);
	if (!json_is_array(a))
		return 0;
	for (i = json_array_size(a); i-- > 0;) {
		char *b = audit_json_bytes(o, key, (long)i);
		bool out = !b || (changes ? change_hidden(fs, p, b) :
				  hidden(fs, p, b));

		free(b);
		if (!out)
			continue;
		json_array_remove(a, i);
		if (json_is_array(h))
			json_array_remove(h, i);
		left++;
	}
	return left;
}

/* One record: 0 kept as it is, 1 kept changed (o to be printed), -1
 * left out; *left counts the paths left out. */
static int filter_record(const struct txfs *fs, const struct policy *p,
			 json_t *o, unsigned *left)
{
	char *path = json_object_get(o, "path") ?
		     audit_json_bytes(o, "path", -1) : NULL;
	bool h = path && hidden(fs, p, path);
	unsigned n;

	free(path);
	if (h) {
		(*left)++;
		return -1;
	}
	n = filter_array(fs, p, o, "needs_review", false) +
	    filter_array(fs, p, o, "changes", true) + filter_argv(fs, p, o);
	*left += n;
	return n ? 1 : 0;
}

unsigned loghide_object(struct txfs *fs, json_t *o)
{
	const struct policy *p = atomic_load(&fs->policy);
	unsigned left = 0;

	if (!p || !fs->has_hide || !json_is_object(o))
		return 0;
	left = filter_array(fs, p, o, "needs_review", false) +
	       filter_array(fs, p, o, "changes", true) + filter_argv(fs, p, o);
	if (left)
		json_object_set_new(o, "hidden", json_integer(left));
	return left;
}

int loghide_filter(struct txfs *fs, char **buf, size_t *len)
{
	const struct policy *p = atomic_load(&fs->policy);
	char *nb = NULL, *line, *end;
	size_t nl = 0;
	unsigned left = 0;
	FILE *f;

	if (!p || !fs->has_hide || !*buf)
		return 0;
	if (!(f = open_memstream(&nb, &nl)))
		return -ENOMEM;
	for (line = *buf; line < *buf + *len; line = end + 1) {
		json_t *o;
		int k;

		end = memchr(line, '\n', (size_t)(*buf + *len - line));
		if (!end)
			end = *buf + *len;
		o = json_loadb(line, (size_t)(end - line), 0, NULL);
		k = o ? filter_record(fs, p, o, &left) : 0;
		if (k == 0) {
			fwrite(line, 1, (size_t)(end - line), f);
			if (end < *buf + *len)
				fputc('\n', f);
		} else if (k > 0) {
			json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
			fputc('\n', f);
		}
		json_decref(o);
	}
	if (left) {
		struct timespec ts;
		struct tm tm;
		char when[40] = "1970-01-01T00:00:00";

		clock_gettime(CLOCK_REALTIME, &ts);
		if (gmtime_r(&ts.tv_sec, &tm))
			strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
		fprintf(f, "{\"time\":\"%s.%03ldZ\",", when, ts.tv_nsec / 1000000);
		fprintf(f, "\"event\":\"hidden\",\"left_out\":%u,\"why\":\"paths "
			"the mount's policy hides are left out of this log, as "
			"from a listing\"}\n", left);
	}
	if (fclose(f)) {
		free(nb);
		return -ENOMEM;
	}
	free(*buf);
	*buf = nb;
	*len = nl;
	return 0;
}
