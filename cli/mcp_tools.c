/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp_tools.c - the tools of `txfs mcp`: their JSON Schemas, the check of
 * a call's arguments against them (before anything runs), and the short
 * tools (status, diff, savepoint, rollback, commit, log), each run as
 * this binary's own subcommand with stdin /dev/null and its output
 * captured. Every path and name goes after `--`, so an argument that
 * looks like an option (`--force`, `--stat`) stays an argument. exec is
 * mcp_exec.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "mcp.h"
#include "policy.h"

/* a savepoint name: one printable word; cmd-* are txfs exec's */
#define SP_NAME "{\"type\":\"string\",\"pattern\":\"^[!-~]{1,200}$\"," \
	"\"not\":{\"pattern\":\"^cmd-\"},\"description\":\"a savepoint " \
	"name: 1 to 200 printable ASCII characters, no space; names " \
	"starting with cmd- are reserved for exec's commands\"}"
#define NO_ARGS "{\"type\":\"object\",\"properties\":{}," \
	"\"additionalProperties\":false}"

const struct mcp_tool mcp_tools[] = {
	{ "status", "Transaction status",
	  "What the session's open transaction holds: counts of added, "
	  "modified, deleted, renamed paths, savepoints, vetoes, and the "
	  "last command run with exec.", NO_ARGS,
	  "{\"type\":\"object\",\"properties\":{"
	  "\"transaction\":{\"type\":\"integer\"},"
	  "\"added\":{\"type\":\"integer\"},\"modified\":{\"type\":\"integer\"},"
	  "\"deleted\":{\"type\":\"integer\"},\"renamed\":{\"type\":\"integer\"},"
	  "\"savepoints\":{\"type\":\"integer\"},\"vetoes\":{\"type\":\"integer\"},"
	  "\"last_command\":{\"type\":[\"object\",\"null\"]}},"
	  "\"required\":[\"transaction\"]}", false, false },
	{ "diff", "Staged changes as a diff",
	  "The staged changes as a unified diff against the real directory; "
	  "or what changed since a savepoint, or what one exec command "
	  "changed, against the tree at that savepoint; only under the given "
	  "paths.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"since\":{\"type\":\"string\",\"pattern\":\"^[!-~]{1,200}$\","
	  "\"description\":\"a savepoint name\"},"
	  "\"command\":{\"type\":\"integer\",\"minimum\":1,"
	  "\"description\":\"an exec command number\"},"
	  "\"paths\":{\"type\":\"array\",\"minItems\":1,\"items\":{"
	  "\"type\":\"string\",\"minLength\":1,\"maxLength\":4096},"
	  "\"description\":\"workspace-relative paths to limit the diff to\"},"
	  "\"name_status\":{\"type\":\"boolean\"}},"
	  "\"not\":{\"required\":[\"since\",\"command\"]},"
	  "\"additionalProperties\":false}", NULL, false, false },
	{ "savepoint", "Take a savepoint",
	  "Take a savepoint NAME; rollback with that name returns to it.",
	  "{\"type\":\"object\",\"properties\":{\"name\":" SP_NAME "},"
	  "\"required\":[\"name\"],\"additionalProperties\":false}", NULL,
	  true, true },
	{ "rollback", "Roll back",
	  "Discard the staged changes: all of them, those since a savepoint, "
	  "or exec command N and every later one.",
	  "{\"type\":\"object\",\"properties\":{\"savepoint\":" SP_NAME ","
	  "\"command\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"not\":{\"required\":[\"savepoint\",\"command\"]},"
	  "\"additionalProperties\":false}", NULL, true, true },
	{ "commit", "Commit",
	  "Merge the staged changes into the real directory (refused when it "
	  "changed underneath, or when the policy denies commit to agents).",
	  NO_ARGS, NULL, true, true },
	{ "log", "Session history",
	  "The session's history: each exec command (argv, outcome, exit "
	  "status, savepoint, changes, vetoes) and the other events.",
	  NO_ARGS, NULL, false, false },
	{ "history", "Commits that can be taken back",
	  "The commits kept in the history, newest first (id, time, what made "
	  "it, counts, bytes kept); with paths_of an id, that commit's paths "
	  "(A, M, D, R); with deleted, every deleted path still recoverable "
	  "and the commit that deleted it.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"paths_of\":{\"type\":\"integer\",\"minimum\":1},"
	  "\"deleted\":{\"type\":\"boolean\"}},"
	  "\"not\":{\"required\":[\"paths_of\",\"deleted\"]},"
	  "\"additionalProperties\":false}", NULL, false, false },
	{ "undo", "Take commits back",
	  "Take the real directory back to just before commit id (default: "
	  "the newest) and every later one; refused with the conflicts when a "
	  "path changed since (force goes on); dry_run only says what it "
	  "would do. On this mounted session the undo is staged: commit or "
	  "roll it back. Refused while changes are staged.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"id\":{\"type\":\"integer\",\"minimum\":1},"
	  "\"dry_run\":{\"type\":\"boolean\"},"
	  "\"force\":{\"type\":\"boolean\"}},"
	  "\"additionalProperties\":false}", NULL, true, true },
	{ "restore", "Restore paths from before a commit",
	  "Put paths (files or folders, relative to the workspace) back as "
	  "they were before commit before (default: the newest commit that "
	  "changed each), staged in this session.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"paths\":{\"type\":\"array\",\"minItems\":1,\"maxItems\":256,"
	  "\"items\":{\"type\":\"string\",\"minLength\":1,"
	  "\"maxLength\":4096,\"pattern\":\"^[^/]\"}},"
	  "\"before\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"required\":[\"paths\"],\"additionalProperties\":false}", NULL,
	  true, true },
	{ "exec", "Run a command as a nested transaction",
	  "Run argv confined in the workspace as one nested transaction: its "
	  "changes stay staged when it (and check, a shell command run after "
	  "it) exits 0, else they are rolled back; also when it runs past "
	  "timeout seconds or the call is cancelled. Returns its stdout and "
	  "stderr as text (each capped at 64 KiB: the first and last 32 KiB) "
	  "and the report (exit, outcome, changes, vetoes); the structured "
	  "content holds both.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	  "\"minItems\":1,\"maxItems\":4096},"
	  "\"check\":{\"type\":\"string\",\"minLength\":1,"
	  "\"description\":\"a shell command run after argv exits 0; its "
	  "failure rolls the command back\"},"
	  "\"cwd\":{\"type\":\"string\",\"minLength\":1,\"maxLength\":4096,"
	  "\"pattern\":\"^[^/]\","
	  "\"description\":\"the folder to run in, relative to the workspace "
	  "root (default: the root); refused outside the workspace\"},"
	  "\"timeout\":{\"type\":\"integer\",\"minimum\":1,\"maximum\":86400,"
	  "\"description\":\"seconds; then the command is stopped and rolled "
	  "back\"}},"
	  "\"required\":[\"argv\"],\"additionalProperties\":false}",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"stdout\":{\"type\":\"string\",\"description\":\"the command's "
	  "stdout, capped as the text items\"},"
	  "\"stderr\":{\"type\":\"string\"},"
	  "\"cmd\":{\"type\":\"integer\"},\"savepoint\":{\"type\":\"string\"},"
	  "\"exit\":{\"type\":\"integer\"},\"outcome\":{\"type\":\"string\","
	  "\"enum\":[\"kept\",\"rolled-back\",\"rollback-failed\"]},"
	  "\"changes\":{\"type\":\"array\"},"
	  "\"changes_total\":{\"type\":\"integer\"},"
	  "\"vetoes\":{\"type\":\"integer\"},\"vetoed\":{\"type\":\"array\"},"
	  "\"check_exit\":{\"type\":\"integer\"},\"ms\":{\"type\":\"number\"},"
	  "\"timed_out\":{\"type\":\"boolean\"},"
	  "\"limit\":{\"type\":[\"object\",\"null\"],\"description\":"
	  "\"the resource limit that stopped the command (name: timeout, "
	  "memory, cpu or pids; value, text, used, by), or null\"},"
	  "\"output\":{\"type\":\"object\",\"properties\":{"
	  "\"cap\":{\"type\":\"integer\"},"
	  "\"stdout_bytes\":{\"type\":\"integer\"},"
	  "\"stderr_bytes\":{\"type\":\"integer\"},"
	  "\"stdout_truncated\":{\"type\":\"boolean\"},"
	  "\"stderr_truncated\":{\"type\":\"boolean\"}},"
	  "\"required\":[\"cap\",\"stdout_bytes\",\"stderr_bytes\","
	  "\"stdout_truncated\",\"stderr_truncated\"]}},"
	  "\"required\":[\"stdout\",\"stderr\",\"cmd\",\"exit\",\"outcome\","
	  "\"output\"]}",
	  false, true },
};
const size_t mcp_ntools = sizeof(mcp_tools) / sizeof(mcp_tools[0]);

json_t *mcp_tools_list(const struct mcp *m)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < mcp_ntools; i++) {
		const struct mcp_tool *t = &mcp_tools[i];
		json_t *o;

		if (!(m->offered & (1ul << i)))
			continue;
		o = json_pack("{s:s,s:s,s:s,s:o}", "name", t->name, "title",
			      t->title, "description", t->description,
			      "inputSchema", json_loads(t->schema, 0, NULL));
		if (o && t->out_schema)
			json_object_set_new(o, "outputSchema",
					    json_loads(t->out_schema, 0, NULL));
		json_array_append_new(list, o);
	}
	return json_pack("{s:o}", "tools", list ? list : json_array());
}

const struct mcp_tool *mcp_tool_find(const struct mcp *m, const char *name,
				     const char **why)
{
	for (size_t i = 0; name && i < mcp_ntools; i++)
		if (!strcmp(mcp_tools[i].name, name)) {
			if (m->offered & (1ul << i))
				return &mcp_tools[i];
			*why = mcp_tools[i].ctl && !mcp_ctl_verbs(m) ?
			       "tool not offered: the mount refuses control "
			       "verbs to agents (--no-ctl-verbs)" :
			       "tool not offered (txfs mcp --tools)";
			return NULL;
		}
	*why = "unknown tool";
	return NULL;
}

int mcp_parse_tools(char *list, unsigned long *mask, const char **bad)
{
	*mask = 0;
	for (char *s, *tok = strtok_r(list, ",", &s); tok;
	     tok = strtok_r(NULL, ",", &s)) {
		size_t i = 0;

		while (i < mcp_ntools && strcmp(mcp_tools[i].name, tok))
			i++;
		if (i == mcp_ntools) {
			*bad = tok;
			return -EINVAL;
		}
		*mask |= 1ul << i;
	}
	return 0;
}

bool mcp_ctl_verbs(const struct mcp *m)
{
	char *req[2] = { "status", "--json" }, *out = NULL;
	size_t len;
	int err = 0;
	json_t *st = NULL;
	bool ok = true;

	if (cli_request(m->state, 2, req, &err, &out, &len) == 0 && !err)
		st = json_loads(out, 0, NULL);
	if (json_is_false(json_object_get(st, "ctl_verbs")))
		ok = false;
	json_decref(st);
	free(out);
	return ok;
}

/* --- arguments against the schema ----------------------------------- */

/* Does s match the POSIX extended regular expression re? (The schemas'
 * patterns are written to mean the same in ECMA-262 and POSIX ERE.) */
static bool matches(const char *re, const char *s)
{
	regex_t r;
	bool m;

	if (regcomp(&r, re, REG_EXTENDED | REG_NOSUB))
		return false;
	m = regexec(&r, s, 0, NULL, 0) == 0;
	regfree(&r);
	return m;
}

static char *say(const char *fmt, const char *k, const char *extra)
{
	char *s;

	return asprintf(&s, fmt, k, extra ? extra : "") < 0 ? NULL : s;
}

/* One value v of argument k against its schema p; NULL when it fits. */
static char *check_value(const char *k, json_t *p, json_t *v)
{
	const char *type = json_string_value(json_object_get(p, "type"));
	json_t *min = json_object_get(p, "minimum");
	json_t *max = json_object_get(p, "maximum");
	json_t *pat = json_object_get(p, "pattern");
	json_t *notpat = json_object_get(json_object_get(p, "not"), "pattern");
	json_t *e;
	size_t j;

	if (!strcmp(type, "boolean") && !json_is_boolean(v))
		return say("argument %s: must be true or false%s", k, NULL);
	if (!strcmp(type, "integer")) {
		if (!json_is_integer(v))
			return say("argument %s: must be an integer%s", k, NULL);
		if ((min && json_integer_value(v) < json_integer_value(min)) ||
		    (max && json_integer_value(v) > json_integer_value(max))) {
			char range[64];

			snprintf(range, sizeof(range), "%lld", (long long)
				 json_integer_value(min));
			if (max)
				snprintf(range + strlen(range), sizeof(range) -
					 strlen(range), " to %lld", (long long)
					 json_integer_value(max));
			return say(max ? "argument %s: out of range (%s)" :
				   "argument %s: must be at least %s", k,
				   range);
		}
	}
	if (!strcmp(type, "string")) {
		const char *s = json_string_value(v);
		size_t l = s ? strlen(s) : 0;
		json_int_t lo = json_integer_value(json_object_get(p,
							"minLength"));
		json_t *hi = json_object_get(p, "maxLength");

		if (!s)
			return say("argument %s: must be a string%s", k, NULL);
		if ((json_int_t)l < lo ||
		    (hi && (json_int_t)l > json_integer_value(hi)))
			return say("argument %s: wrong length%s", k, NULL);
		if (pat && !matches(json_string_value(pat), s))
			return say("argument %s: does not match %s", k,
				   json_string_value(pat));
		if (notpat && matches(json_string_value(notpat), s))
			return say("argument %s: reserved (names matching %s "
				   "are txfs exec's)", k,
				   json_string_value(notpat));
	}
	if (!strcmp(type, "array")) {
		json_t *items = json_object_get(p, "items");

		if (!json_is_array(v))
			return say("argument %s: must be an array%s", k, NULL);
		if ((json_int_t)json_array_size(v) < json_integer_value(
			json_object_get(p, "minItems")))
			return say("argument %s: must not be empty%s", k, NULL);
		if (json_object_get(p, "maxItems") &&
		    (json_int_t)json_array_size(v) > json_integer_value(
			json_object_get(p, "maxItems")))
			return say("argument %s: too many items%s", k, NULL);
		json_array_foreach(v, j, e) {
			char *bad = check_value(k, items, e);

			if (bad)
				return bad;
		}
	}
	return NULL;
}

char *mcp_check_args(const struct mcp_tool *t, json_t *args)
{
	json_t *schema = json_loads(t->schema, 0, NULL);
	json_t *props = json_object_get(schema, "properties"), *v;
	json_t *excl = json_object_get(json_object_get(schema, "not"),
				       "required");
	const char *k;
	char *bad = NULL;
	size_t i, n = 0;

	if (!json_is_object(args)) {
		bad = strdup("arguments must be an object");
		goto out;
	}
	json_array_foreach(json_object_get(schema, "required"), i, v)
		if (!json_object_get(args, json_string_value(v))) {
			bad = say("argument %s is required%s",
				  json_string_value(v), NULL);
			goto out;
		}
	json_array_foreach(excl, i, v)
		n += json_object_get(args, json_string_value(v)) != NULL;
	if (excl && n == json_array_size(excl)) {
		bad = strdup("arguments since/savepoint and command exclude "
			     "each other");
		goto out;
	}
	json_object_foreach(args, k, v) {
		json_t *p = json_object_get(props, k);

		bad = p ? check_value(k, p, v) :
			  say("unknown argument %s%s", k, NULL);
		if (bad)
			goto out;
	}
out:
	json_decref(schema);
	return bad;
}

/* --- running the short tools ----------------------------------------- */

struct run_out {
	int status;	/* exit status, 128+N for signal N, -1 not run */
	char *out, *err;
};

static char *slurp(int fd)
{
	off_t size = lseek(fd, 0, SEEK_END);
	char *buf;

	if (size < 0 || !(buf = malloc((size_t)size + 1)))
		return NULL;
	if (pread(fd, buf, (size_t)size, 0) != size) {
		free(buf);
		return NULL;
	}
	buf[size] = '\0';
	return buf;
}

/* `txfs ARGV...` with stdin /dev/null, stdout and stderr captured. */
static int run_txfs(char *const *argv, struct run_out *o)
{
	int fo = memfd_create("txfs-mcp-out", MFD_CLOEXEC);
	int fe = memfd_create("txfs-mcp-err", MFD_CLOEXEC);
	int st;
	pid_t pid;

	o->status = -1;
	o->out = o->err = NULL;
	if (fo < 0 || fe < 0)
		goto out;
	pid = fork();
	if (pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		mcp_child_signals();
		if (nul < 0 || dup2(nul, 0) < 0 || dup2(fo, 1) < 0 ||
		    dup2(fe, 2) < 0)
			_exit(125);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	if (pid > 0) {
		while (waitpid(pid, &st, 0) < 0)
			if (errno != EINTR)
				goto out;
		o->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) :
			    WEXITSTATUS(st);
	}
	o->out = slurp(fo);
	o->err = slurp(fe);
out:
	if (fo >= 0)
		close(fo);
	if (fe >= 0)
		close(fe);
	return o->status < 0 ? -EIO : 0;
}

/* Ask the daemon whether the agent may use verb (--no-ctl-verbs, the
 * policy's `control deny`); *why the refusal. */
static int control_ok(struct mcp *m, const char *verb, char **why)
{
	char *req[2] = { "control-check", (char *)verb }, *out = NULL;
	size_t len;
	int err = 0, rc = cli_request(m->state, 2, req, &err, &out, &len);

	if (rc || err) {
		if (asprintf(why, "txfs: %s: %s", verb, out && out[0] ? out :
			     strerror(rc ? -rc : err)) < 0)
			*why = NULL;
		free(out);
		return -EPERM;
	}
	free(out);
	return 0;
}

/* A tool's result: text (a command's output, which need not be UTF-8:
 * each byte that is not becomes U+FFFD, as JSON text must be UTF-8). */
json_t *mcp_text_result(const char *text, bool error, json_t *structured)
{
	json_t *t = audit_json_text(text ? text : "");
	json_t *r = t ? json_pack("{s:[{s:s,s:o}],s:b}", "content", "type",
				  "text", "text", t, "isError", error) : NULL;

	if (r && structured)
		json_object_set_new(r, "structuredContent", structured);
	else
		json_decref(structured);
	return r;
}

static const char *str(json_t *args, const char *k)
{
	return json_string_value(json_object_get(args, k));
}

/* The txfs command line of tool t: options, then `--`, then MNT and the
 * names and paths. Strings it makes live in opt[]. */
static void tool_argv(struct mcp *m, const struct mcp_tool *t, json_t *args,
		      char **argv, size_t max, char opt[2][PATH_MAX])
{
	json_int_t cmd = json_integer_value(json_object_get(args, "command"));
	size_t n = 0, i;
	json_t *v;

	argv[n++] = "txfs";
	argv[n++] = (char *)t->name;
	if (cmd)
		snprintf(opt[0], PATH_MAX, "--command=%lld", (long long)cmd);
	if (!strcmp(t->name, "status") || !strcmp(t->name, "history"))
		argv[n++] = "--json";
	if (!strcmp(t->name, "history") && json_object_get(args, "paths_of")) {
		snprintf(opt[1], PATH_MAX, "--paths=%lld", (long long)
			 json_integer_value(json_object_get(args, "paths_of")));
		argv[n++] = opt[1];
	}
	if (!strcmp(t->name, "history") &&
	    json_is_true(json_object_get(args, "deleted")))
		argv[n++] = "--deleted";
	if (!strcmp(t->name, "undo") &&
	    json_is_true(json_object_get(args, "dry_run")))
		argv[n++] = "--dry-run";
	if (!strcmp(t->name, "undo") &&
	    json_is_true(json_object_get(args, "force")))
		argv[n++] = "--force";
	if (!strcmp(t->name, "restore") && json_object_get(args, "before")) {
		snprintf(opt[1], PATH_MAX, "--before=%lld", (long long)
			 json_integer_value(json_object_get(args, "before")));
		argv[n++] = opt[1];
	}
	if (!strcmp(t->name, "diff") &&
	    json_is_true(json_object_get(args, "name_status")))
		argv[n++] = "--name-status";
	if (!strcmp(t->name, "diff") && str(args, "since")) {
		snprintf(opt[1], PATH_MAX, "--since=%s", str(args, "since"));
		argv[n++] = opt[1];
	}
	if (cmd)
		argv[n++] = opt[0];
	argv[n++] = "--";
	argv[n++] = m->mnt;
	if (!strcmp(t->name, "savepoint"))
		argv[n++] = (char *)str(args, "name");
	if (!strcmp(t->name, "rollback") && str(args, "savepoint"))
		argv[n++] = (char *)str(args, "savepoint");
	if (!strcmp(t->name, "undo") && json_object_get(args, "id")) {
		snprintf(opt[0], PATH_MAX, "%lld", (long long)
			 json_integer_value(json_object_get(args, "id")));
		argv[n++] = opt[0];
	}
	json_array_foreach(json_object_get(args, "paths"), i, v)
		if (n + 1 < max)
			argv[n++] = (char *)json_string_value(v);
	argv[n] = NULL;
}

json_t *mcp_run_tool(struct mcp *m, const struct mcp_tool *t, json_t *args)
{
	char *argv[256], opt[2][PATH_MAX] = { "", "" }, *why = NULL, *text;
	json_t *sc = NULL, *r;
	struct run_out o;
	bool bad;

	if (t->ctl && control_ok(m, t->name, &why)) {
		r = mcp_text_result(why ? why : "txfs: refused", true, NULL);
		free(why);
		return r;
	}
	tool_argv(m, t, args, argv, sizeof(argv) / sizeof(argv[0]), opt);
	if (run_txfs(argv, &o)) {
		free(o.out);
		free(o.err);
		return mcp_text_result("txfs: mcp: could not run the tool",
				       true, NULL);
	}
	bad = o.status != 0;
	if (t->out_schema && !bad && o.out) {
		sc = json_loads(o.out, JSON_DISABLE_EOF_CHECK, NULL);
		if (!json_is_object(sc)) {
			json_decref(sc);
			sc = NULL;
			bad = true;
		}
	}
	if (asprintf(&text, "%s%s", o.out ? o.out : "",
		     bad && o.err ? o.err : "") < 0)
		text = NULL;
	if (text && strlen(text) > MCP_OUT_CAP && !sc) {
		/* a diff or a log for a model: its ends (paths narrow a diff) */
		char *c = mcp_capped(text, strlen(text), t->name);

		free(text);
		text = c;
	}
	r = mcp_text_result(text, bad, sc);
	free(text);
	free(o.out);
	free(o.err);
	return r;
}
