// SPDX-License-Identifier: Apache-2.0
/*
 * cmd_history.c - `txfs history`, `txfs undo` and `txfs restore`: what
 * the commits kept (fs/history/history.h), and taking it back.
 *
 * Each takes the workspace (unmounted: the real directory) or its mount,
 * and finds the state folder as txfs mount and txfs run do (--state DIR
 * overrides): a mount's .txfs/state, else the workspace's default one.
 *
 * Given a mount, what they print leaves out the paths the mount's policy
 * hides (its .txfs/policy), as a listing of the mount does, and says how
 * many: `txfs mcp` runs them so for the agent. Given the workspace, they
 * show everything (the human's view of the real directory).
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "../fs/mount.h"
#include "../fs/history/history.h"
#include "policy.h"

struct hopts {
	const char *state;
	bool json, deleted, prune, dry_run, force;
	unsigned long long paths_of, before;
	struct history_limits lim;	/* --prune's --keep, --days, --max-size */
	int first;
};

static const char history_usage[] =
"usage: txfs history [--json] [--paths ID | --deleted]\n"
"                    [--prune [--keep N] [--days N] [--max-size SIZE]]\n"
"                    [--state DIR] WORKSPACE|MNT\n"
"\n"
"The commits the history keeps, newest first: id, time, what made it,\n"
"counts, bytes kept. --paths ID lists one commit's paths (A added,\n"
"M modified, D deleted, R renamed), --deleted every deleted path still\n"
"recoverable and the commit that deleted it, --prune drops what the\n"
"retention no longer keeps: the last --keep N commits (20) or those of\n"
"the last --days N (7), the oldest first beyond --max-size SIZE (bytes,\n"
"or with K, M, G; default 10% of the free space, at most 4 GiB). Every\n"
"commit prunes with the defaults.\n";

static const char undo_usage[] =
"usage: txfs undo [--dry-run] [--force] [--state DIR] WORKSPACE|MNT [ID]\n"
"\n"
"Take the real directory back to just before commit ID (default: the\n"
"newest) and every later one, as one crash-atomic change of its own,\n"
"kept in the history (txfs undo again takes the undo back). Refused\n"
"(exit 1, the conflicts listed) if a path it would restore changed since;\n"
"--force overrides. On a mounted workspace the undo is staged: commit\n"
"or roll it back; it is refused while the session has staged changes.\n";

static const char restore_usage[] =
"usage: txfs restore [--before ID] [--state DIR] WORKSPACE|MNT PATH...\n"
"\n"
"Put PATH (a file or a folder) back as it was before commit ID (default:\n"
"the newest commit that changed it), touching nothing else. What is at\n"
"PATH now is kept in the history. On a mounted workspace it is staged.\n";

/* A count (unsigned) or, size, bytes with an optional K, M or G. */
static int number(const char *cmd, const char *opt, const char *arg, bool size,
		  void *out)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 10);
	if (size && end != arg && (*end == 'K' || *end == 'M' || *end == 'G') &&
	    !end[1]) {
		v <<= *end == 'K' ? 10 : *end == 'M' ? 20 : 30;
		end++;
	}
	if (errno || *end || end == arg || arg[0] == '-' || v == 0 ||
	    (!size && v > 1000000)) {
		fprintf(stderr, "txfs: %s: %s: not a %s: %s\n", cmd, opt,
			size ? "size (bytes, or with K, M, G)" : "positive count", arg);
		return -1;
	}
	if (size)
		*(uint64_t *)out = v;
	else
		*(unsigned *)out = (unsigned)v;
	return 0;
}

static int parse(int argc, char **argv, struct hopts *o, const char *usage)
{
	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "paths", required_argument, NULL, 'p' },
		{ "deleted", no_argument, NULL, 'D' },
		{ "prune", no_argument, NULL, 'P' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "force", no_argument, NULL, 'f' },
		{ "before", required_argument, NULL, 'b' },
		{ "state", required_argument, NULL, 's' },
		{ "keep", required_argument, NULL, 'k' },
		{ "days", required_argument, NULL, 'd' },
		{ "max-size", required_argument, NULL, 'm' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "+h", lo, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'D': o->deleted = true; break;
		case 'P': o->prune = true; break;
		case 'n': o->dry_run = true; break;
		case 'f': o->force = true; break;
		case 's': o->state = optarg; break;
		case 'p':
		case 'b':
			errno = 0;
			*(c == 'p' ? &o->paths_of : &o->before) = strtoull(optarg, &end, 10);
			if (errno || *end || end == optarg || optarg[0] == '-') {
				fprintf(stderr, "txfs: %s: not a commit id: %s\n",
					argv[0], optarg);
				return 2;
			}
			break;
		case 'k':
		case 'd':
		case 'm':
			if (number(argv[0], c == 'k' ? "--keep" : c == 'd' ? "--days" :
				   "--max-size", optarg, c == 'm', c == 'k' ?
				   (void *)&o->lim.keep_n : c == 'd' ? (void *)&o->lim.keep_days :
				   (void *)&o->lim.max_bytes))
				return 2;
			break;
		case 'h': fputs(usage, stdout); return -1;
		default: fputs(usage, stderr); return 2;
		}
	}
	o->first = optind;
	if (optind >= argc) {
		fputs(usage, stderr);
		return 2;
	}
	return 0;
}

/* The policy of the mount mnt (its .txfs/policy), whose hidden paths
 * what is printed leaves out; NULL with a message when it cannot be read
 * (nothing is printed then). */
static struct policy *mount_policy(const char *cmd, const char *mnt)
{
	char path[PATH_MAX], *err = NULL;
	struct policy *p = NULL;
	int rc;

	if (snprintf(path, sizeof(path), "%s/.txfs/policy", mnt) >= (int)sizeof(path))
		rc = -ENAMETOOLONG;
	else
		rc = policy_load_file(path, &p, &err);
	if (rc) {
		cli_err(rc, "%s: %s: the mount's policy (what it hides)%s%s", cmd,
			mnt, err ? ": " : "", err ? err : "");
		p = NULL;
	}
	free(err);
	return p;
}

/* On a mount: the daemon writes the record of the last commit it
 * answered (it does so right after the answer; this waits for it), so
 * that what follows reads it. Nothing when the daemon cannot be asked. */
static void record_written(const char *state)
{
	char *req[] = { (char *)"history-sync", NULL }, *out = NULL;
	size_t len = 0;
	int err = 0;

	if (cli_request(state, 1, req, &err, &out, &len) == 0)
		free(out);
}

/* The state folder of path (a mount or a workspace); *mounted set when
 * path is a txfs mount (cli_find_state: one the kernel lists as ours; a
 * folder that only holds a .txfs/ of its own is a workspace). */
static int find_state(const struct hopts *o, const char *path, char *state,
		      size_t n, bool *mounted)
{
	char real[PATH_MAX];

	if (!realpath(path, real))
		return -errno;
	*mounted = cli_find_state(real, ".txfs", state, n) == 0;
	if (o->state) {
		if (!realpath(o->state, state))
			return -errno;
		return 0;
	}
	if (*mounted)
		return 0;
	return txfs_default_state(real, state, n);
}

int cmd_history(int argc, char **argv)
{
	struct hopts o = { 0 };
	char state[PATH_MAX];
	struct policy *hide = NULL;
	uint64_t freed;
	bool mounted;
	int rc = parse(argc, argv, &o, history_usage);

	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = find_state(&o, argv[o.first], state, sizeof(state), &mounted))) {
		cli_err(rc, "history: %s: its state folder", argv[o.first]);
		return 1;
	}
	if (o.prune) {
		if ((rc = history_prune(state, &o.lim, &freed))) {
			cli_err(rc, "history: prune %s", state);
			return 1;
		}
		printf("pruned: %llu bytes freed\n", (unsigned long long)freed);
		return 0;
	}
	if (mounted && !(hide = mount_policy("history", argv[o.first])))
		return 1;
	if (mounted)
		record_written(state);
	rc = history_list(state, o.json, o.paths_of, o.deleted, hide);
	policy_free(hide);
	if (rc == -ENOENT && o.paths_of) {
		cli_err(0, "history: no commit %llu in the history of %s", o.paths_of,
			argv[o.first]);
		return 1;
	}
	if (rc) {
		cli_err(rc, "history: %s", state);
		return 1;
	}
	return 0;
}

/* A mounted session with staged changes refuses an undo (its
 * status.json: the control folder is the daemon's, not a file). */
static bool staged(const char *mnt)
{
	char path[PATH_MAX];
	json_t *o;
	bool any;

	snprintf(path, sizeof(path), "%s/.txfs/status.json", mnt);
	if (!(o = json_load_file(path, 0, NULL)))
		return false;
	any = json_integer_value(json_object_get(o, "added")) +
	      json_integer_value(json_object_get(o, "modified")) +
	      json_integer_value(json_object_get(o, "deleted")) +
	      json_integer_value(json_object_get(o, "renamed")) > 0;
	json_decref(o);
	return any;
}

static int run_undo(int argc, char **argv, bool restore)
{
	struct hopts o = { 0 };
	struct undo_opts u = { 0 };
	char state[PATH_MAX], real[PATH_MAX];
	const char *who = restore ? "restore" : "undo";
	struct policy *hide = NULL;
	bool mounted;
	int rc = parse(argc, argv, &o, restore ? restore_usage : undo_usage);
	char *end;

	if (rc)
		return rc < 0 ? 0 : rc;
	if ((rc = find_state(&o, argv[o.first], state, sizeof(state), &mounted))) {
		cli_err(rc, "%s: %s: its state folder", who, argv[o.first]);
		return 1;
	}
	u.state = state;
	u.dry_run = o.dry_run;
	u.force = o.force;
	if (mounted) {
		u.mnt = argv[o.first];
		if (!restore && !o.dry_run && staged(u.mnt)) {
			cli_err(0, "undo: %s has staged changes: commit or roll them "
				"back first (txfs commit / txfs rollback)", u.mnt);
			return 1;
		}
	} else {
		if (!realpath(argv[o.first], real)) {
			cli_err(errno, "%s: %s", who, argv[o.first]);
			return 1;
		}
		u.ws = real;
	}
	if (restore) {
		if (o.first + 1 >= argc) {
			fputs(restore_usage, stderr);
			return 2;
		}
		u.paths = (const char *const *)argv + o.first + 1;
		u.npaths = (size_t)(argc - o.first - 1);
		for (size_t i = 0; i < u.npaths; i++)
			if (!u.paths[i][0] || u.paths[i][0] == '/' ||
			    strstr(u.paths[i], "..")) {	/* "": everything */
				cli_err(0, "restore: %s: give a path relative to the "
					"workspace, without '..'", u.paths[i]);
				return 2;
			}
		u.before = o.before != 0;
		u.id = o.before;
	} else if (o.first + 1 < argc) {
		errno = 0;
		u.id = strtoull(argv[o.first + 1], &end, 10);
		if (errno || *end || !u.id || o.first + 2 < argc) {
			fputs(undo_usage, stderr);
			return 2;
		}
	}
	if (mounted && !(hide = mount_policy(who, u.mnt)))
		return 1;
	if (mounted)
		record_written(state);
	u.hide = hide;
	rc = history_undo(&u);
	policy_free(hide);
	if (rc == -EBUSY && mounted) {	/* the mount takes no lock */
		cli_err(0, "%s: refused (the conflicts above%s)", who,
			restore || o.force ? "" : "; --force overrides");
		return 1;
	}
	if (rc == -EBUSY && !mounted && !o.force) {
		/* conflicts printed, or the state folder is locked */
		cli_err(0, "%s: refused (the conflicts above%s), or the "
			"workspace is mounted: run it on the mount", who,
			restore ? "" : "; --force overrides");
		return 1;
	}
	if (rc == -ESRCH) {
		cli_err(0, "%s: nothing to %s: no such commit in the history of %s "
			"(txfs history lists them)", who, who, argv[o.first]);
		return 1;
	}
	if (rc) {
		cli_err(rc, "%s: %s", who, argv[o.first]);
		return 1;
	}
	return 0;
}

int cmd_undo(int argc, char **argv)
{
	return run_undo(argc, argv, false);
}

int cmd_restore(int argc, char **argv)
{
	return run_undo(argc, argv, true);
}
