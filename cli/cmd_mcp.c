/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_mcp.c - `txfs mcp [MNT]`: a Model Context Protocol server on stdio
 * (revision 2025-06-18; JSON-RPC 2.0, one message a line) that gives any
 * MCP client the session mounted at MNT as tools: status, diff, savepoint,
 * rollback, commit, log, exec.
 *
 * Each tool runs this txfs binary's own subcommand (txfs status, txfs exec
 * ...) with stdin /dev/null and its output captured, so the tools behave
 * exactly as the commands do. The control verbs (savepoint, rollback,
 * commit; release) first ask the daemon (control-check): the policy's
 * `control deny` applies to them as to .txfs/ctl, because the caller is
 * the agent, not its user.
 *
 * Errors: a line that is not JSON gets -32700 (id null), a message that is
 * not a request -32600, an unknown method -32601, an unknown tool or bad
 * arguments -32602; a tool that fails (the mount is gone, a refusal)
 * answers a result with isError true and the command's words.
 *
 * JSON is parsed and built with jansson (Debian's libjansson): maintained,
 * a strict RFC 8259 parser (rejects trailing garbage, invalid UTF-8 and
 * NUL bytes in strings), a small reference-counted API, and dumping that
 * escapes every string; no hand-written JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "config.h"
#include "cli.h"
#include "policy.h"

#define MCP_REVISION "2025-06-18"

static const char mcp_usage[] =
"usage: txfs mcp [MNT]\n\n"
"A Model Context Protocol server (revision " MCP_REVISION ") on stdin and\n"
"stdout, for the txfs session mounted at MNT (default: the mount holding\n"
"the current folder). Tools: status, diff, savepoint, rollback, commit,\n"
"log, exec. The policy's `control deny` applies to savepoint, rollback and\n"
"commit. Example client configuration: {\"command\": \"txfs\", \"args\":\n"
"[\"mcp\", \"/path/to/workspace\"]}.\n";

struct mcp {
	char mnt[PATH_MAX];
	char state[PATH_MAX];
};

/* --- running our own subcommands ----------------------------------- */

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

/* --- tools ---------------------------------------------------------- */

/* Ask the daemon whether the policy lets the agent use verb. */
static int control_ok(struct mcp *m, const char *verb, char **why)
{
	char *req[2] = { "control-check", (char *)verb }, *out = NULL;
	size_t len;
	int err = 0, rc = cli_request(m->state, 2, req, &err, &out, &len);

	if (rc || err) {
		if (asprintf(why, "%s", out && out[0] ? out :
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
static json_t *text_result(const char *text, bool error, json_t *structured)
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

/* Result of a captured command: its stdout, and stderr on failure. */
static json_t *cmd_result(const struct run_out *o, bool parse_json)
{
	bool bad = o->status != 0;
	json_t *sc = NULL;
	char *text = NULL;

	if (parse_json && o->out) {
		const char *last = o->out, *p;

		for (p = o->out; *p; p++)	/* the report is the last line */
			if (*p == '\n' && p[1])
				last = p + 1;
		sc = json_loads(last, JSON_DISABLE_EOF_CHECK, NULL);
		if (sc && !json_is_object(sc)) {
			json_decref(sc);
			sc = NULL;
		}
	}
	if (asprintf(&text, "%s%s%s", o->out ? o->out : "",
		     bad && o->err && o->err[0] ? o->err : "",
		     o->status < 0 ? "txfs: could not run the command\n" : "") < 0)
		text = NULL;
	json_t *r = text_result(text, bad, sc);

	free(text);
	return r;
}

struct tool {
	const char *name, *title, *description, *schema;
	const char *verb;	/* control verb the policy may deny */
};

static const struct tool tools[] = {
	{ "status", "Transaction status",
	  "What the session's open transaction holds: counts of added, "
	  "modified, deleted, renamed paths, savepoints, vetoes, and the "
	  "last command run with exec.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  NULL },
	{ "diff", "Staged changes as a diff",
	  "The staged changes as a unified diff against the real directory; "
	  "or what changed since a savepoint, or what one exec command "
	  "changed, against the tree at that savepoint.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"since\":{\"type\":\"string\",\"description\":\"a savepoint name\"},"
	  "\"command\":{\"type\":\"integer\",\"minimum\":1},"
	  "\"paths\":{\"type\":\"array\",\"items\":{\"type\":\"string\"}},"
	  "\"name_status\":{\"type\":\"boolean\"}},"
	  "\"additionalProperties\":false}", NULL },
	{ "savepoint", "Take a savepoint",
	  "Take a savepoint NAME; rollback with that name returns to it.",
	  "{\"type\":\"object\",\"properties\":{\"name\":{\"type\":\"string\","
	  "\"pattern\":\"^[!-~]{1,200}$\"}},\"required\":[\"name\"],"
	  "\"additionalProperties\":false}", "savepoint" },
	{ "rollback", "Roll back",
	  "Discard the staged changes: all of them, those since a savepoint, "
	  "or exec command N and every later one.",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"savepoint\":{\"type\":\"string\"},"
	  "\"command\":{\"type\":\"integer\",\"minimum\":1}},"
	  "\"additionalProperties\":false}", "rollback" },
	{ "commit", "Commit",
	  "Merge the staged changes into the real directory (refused when it "
	  "changed underneath, or when the policy denies commit to agents).",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  "commit" },
	{ "log", "Session history",
	  "The session's history: each exec command (argv, outcome, exit "
	  "status, savepoint, changes, vetoes) and the other events.",
	  "{\"type\":\"object\",\"properties\":{},\"additionalProperties\":false}",
	  NULL },
	{ "exec", "Run a command as a nested transaction",
	  "Run argv confined in the workspace as one nested transaction: its "
	  "changes stay staged when it (and check, a shell command run after "
	  "it) exits 0, else they are rolled back. Returns its output and a "
	  "report (exit, outcome, changes, vetoes).",
	  "{\"type\":\"object\",\"properties\":{"
	  "\"argv\":{\"type\":\"array\",\"items\":{\"type\":\"string\"},"
	  "\"minItems\":1},\"check\":{\"type\":\"string\"}},"
	  "\"required\":[\"argv\"],\"additionalProperties\":false}", NULL },
};
#define NTOOLS (sizeof(tools) / sizeof(tools[0]))

static json_t *tools_list(void)
{
	json_t *list = json_array();

	for (size_t i = 0; list && i < NTOOLS; i++) {
		json_t *schema = json_loads(tools[i].schema, 0, NULL);

		json_array_append_new(list, json_pack("{s:s,s:s,s:s,s:o}",
			"name", tools[i].name, "title", tools[i].title,
			"description", tools[i].description,
			"inputSchema", schema ? schema : json_object()));
	}
	return json_pack("{s:o}", "tools", list ? list : json_array());
}

/* Check args against what the schema allows (types, required, unknown
 * keys); returns a message or NULL. */
static const char *check_args(const struct tool *t, json_t *args)
{
	json_t *schema = json_loads(t->schema, 0, NULL);
	json_t *props = json_object_get(schema, "properties"), *v, *p;
	const char *k, *bad = NULL;
	size_t i;

	json_array_foreach(json_object_get(schema, "required"), i, v)
		if (!json_object_get(args, json_string_value(v)))
			bad = "a required argument is missing";
	json_object_foreach(args, k, v) {
		const char *type;

		p = json_object_get(props, k);
		type = json_string_value(json_object_get(p, "type"));
		if (!p)
			bad = "unknown argument";
		else if ((!strcmp(type, "string") && !json_is_string(v)) ||
			 (!strcmp(type, "integer") &&
			  (!json_is_integer(v) || json_integer_value(v) < 1)) ||
			 (!strcmp(type, "boolean") && !json_is_boolean(v)))
			bad = "an argument has the wrong type";
		else if (!strcmp(type, "array")) {
			json_t *e;
			size_t j;

			if (!json_is_array(v) || !json_array_size(v))
				bad = "an array argument is empty or not an array";
			json_array_foreach(v, j, e)
				if (!json_is_string(e))
					bad = "array items must be strings";
		}
	}
	json_decref(schema);
	return bad;
}

static const char *str(json_t *args, const char *k)
{
	return json_string_value(json_object_get(args, k));
}

/* Build the txfs command line of tool t; argv strings live in buf. */
static int tool_argv(struct mcp *m, const struct tool *t, json_t *args,
		     char **argv, size_t max, char num[32])
{
	size_t n = 0, i;
	json_t *v;

	argv[n++] = "txfs";
	argv[n++] = (char *)t->name;
	if (json_is_integer(json_object_get(args, "command")))
		snprintf(num, 32, "%lld", (long long)json_integer_value(
			 json_object_get(args, "command")));
	if (!strcmp(t->name, "status")) {
		argv[n++] = "--json";
	} else if (!strcmp(t->name, "diff")) {
		if (json_is_true(json_object_get(args, "name_status")))
			argv[n++] = "--name-status";
		if (str(args, "since")) {
			argv[n++] = "--since";
			argv[n++] = (char *)str(args, "since");
		} else if (num[0]) {
			argv[n++] = "--command";
			argv[n++] = num;
		}
	} else if (!strcmp(t->name, "exec")) {
		argv[n++] = "--json";
		if (str(args, "check")) {
			argv[n++] = "--check";
			argv[n++] = (char *)str(args, "check");
		}
		argv[n++] = m->mnt;
		argv[n++] = "--";
		json_array_foreach(json_object_get(args, "argv"), i, v)
			if (n + 1 < max)
				argv[n++] = (char *)json_string_value(v);
		argv[n] = NULL;
		return 0;
	}
	argv[n++] = m->mnt;
	if (!strcmp(t->name, "savepoint"))
		argv[n++] = (char *)str(args, "name");
	if (!strcmp(t->name, "rollback") && str(args, "savepoint"))
		argv[n++] = (char *)str(args, "savepoint");
	else if (!strcmp(t->name, "rollback") && num[0]) {
		argv[n++] = "--command";
		argv[n++] = num;
	}
	json_array_foreach(json_object_get(args, "paths"), i, v)
		if (n + 1 < max)
			argv[n++] = (char *)json_string_value(v);
	argv[n] = NULL;
	return 0;
}

/* tools/call: a result, or NULL with *code and *msg set (a protocol
 * error). */
static json_t *tools_call(struct mcp *m, json_t *params, int *code,
			  const char **msg)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments"), *r;
	const struct tool *t = NULL;
	struct run_out o;
	char *argv[256], num[32] = "", *why = NULL;

	for (size_t i = 0; name && i < NTOOLS; i++)
		if (!strcmp(tools[i].name, name))
			t = &tools[i];
	*code = -32602;
	if (!t) {
		*msg = "unknown tool";
		return NULL;
	}
	if (!args)
		args = json_object();
	else
		json_incref(args);
	if (!json_is_object(args) || (*msg = check_args(t, args))) {
		if (!json_is_object(args))
			*msg = "arguments must be an object";
		json_decref(args);
		return NULL;
	}
	if (t->verb && control_ok(m, t->verb, &why)) {
		r = text_result(why ? why : "refused", true, NULL);
		free(why);
		json_decref(args);
		return r;
	}
	tool_argv(m, t, args, argv, sizeof(argv) / sizeof(argv[0]), num);
	if (run_txfs(argv, &o))
		r = text_result("txfs: could not run the tool", true, NULL);
	else
		r = cmd_result(&o, !strcmp(t->name, "exec") ||
				   !strcmp(t->name, "status"));
	free(o.out);
	free(o.err);
	json_decref(args);
	return r;
}

/* --- JSON-RPC ------------------------------------------------------- */

static void send_msg(json_t *msg)
{
	char *s = json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (s) {
		printf("%s\n", s);
		fflush(stdout);
	}
	free(s);
	json_decref(msg);
}

static void send_error(json_t *id, int code, const char *message)
{
	send_msg(json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
			   id ? id : json_null(), "error", "code", code,
			   "message", message));
}

static json_t *initialize(json_t *params)
{
	(void)params;	/* we speak one revision; the client decides */
	return json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}",
		"protocolVersion", MCP_REVISION,
		"capabilities", "tools", "listChanged", 0,
		"serverInfo", "name", "txfs", "title", "txfs transactions",
		"version", TXFS_VERSION,
		"instructions", "Every change to the workspace is staged in a "
		"transaction. Use exec to run commands (each one is rolled back "
		"if it fails), diff and status to review, rollback to undo.");
}

static void handle(struct mcp *m, const char *line)
{
	json_error_t jerr;
	json_t *msg = json_loads(line, 0, &jerr), *id, *params, *result = NULL;
	const char *method, *emsg = "invalid params";
	int code = 0;

	if (!msg) {
		send_error(NULL, -32700, "parse error");
		return;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!json_is_object(msg) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "",
		   "2.0") || !method ||
	    (id && !json_is_string(id) && !json_is_integer(id))) {
		if (!json_is_object(msg) || !json_object_get(msg, "result"))
			send_error(json_is_object(msg) && (json_is_string(id) ||
				   json_is_integer(id)) ? id : NULL, -32600,
				   "invalid request");
		json_decref(msg);
		return;
	}
	if (!id) {	/* a notification: never answered */
		json_decref(msg);
		return;
	}
	if (!strcmp(method, "initialize"))
		result = initialize(params);
	else if (!strcmp(method, "ping"))
		result = json_object();
	else if (!strcmp(method, "tools/list"))
		result = tools_list();
	else if (!strcmp(method, "tools/call") && json_is_object(params))
		result = tools_call(m, params, &code, &emsg);
	else if (!strcmp(method, "tools/call"))
		code = -32602;
	else
		code = -32601, emsg = "method not found";
	if (result)
		send_msg(json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id", id,
				   "result", result));
	else
		send_error(id, code ? code : -32603,
			   code ? emsg : "internal error");
	json_decref(msg);
}

int cmd_mcp(int argc, char **argv)
{
	struct mcp m = { 0 };
	char cwd[PATH_MAX], *line = NULL;
	size_t cap = 0;
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs(mcp_usage, stdout);
		return 0;
	}
	if (argc > 2) {
		fputs(mcp_usage, stderr);
		return 2;
	}
	if (!realpath(argc == 2 ? argv[1] : (getcwd(cwd, sizeof(cwd)) ?
					     cwd : "."), m.mnt)) {
		cli_err(errno, "mcp: %s", argc == 2 ? argv[1] : ".");
		return 1;
	}
	/* the mount holding MNT, from the kernel's mount table */
	{
		char path[PATH_MAX];

		memcpy(path, m.mnt, sizeof(path));
		if (cli_mount_of(path, m.mnt, sizeof(m.mnt)) ||
		    cli_find_state(m.mnt, ".txfs", m.state, sizeof(m.state))) {
			cli_err(0, "mcp: %s: not inside a txfs mount",
				argc == 2 ? argv[1] : cwd);
			return 1;
		}
	}
	while ((rc = (int)getline(&line, &cap, stdin)) >= 0) {
		if (rc > 0 && line[rc - 1] == '\n')
			line[--rc] = '\0';
		if (rc > 0)
			handle(&m, line);
	}
	free(line);
	return 0;
}
