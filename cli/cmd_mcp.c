/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_mcp.c - `txfs mcp [--tools LIST] [MNT]`: a Model Context Protocol
 * server on stdio (revision 2025-06-18; JSON-RPC 2.0, one message a line)
 * that gives any MCP client the session mounted at MNT as tools: status,
 * diff, savepoint, rollback, commit, log, exec, history, undo, restore
 * (mcp_tools.c, mcp_exec.c).
 *
 * One loop polls stdin and the running exec's pipes, so that while a
 * command runs the server still reads: notifications/cancelled stops it
 * (and rolls it back), ping and the read-only tools (status, diff, log)
 * are answered at once, and notifications/progress tells the client it is
 * alive. The tools that change the transaction (exec, savepoint, rollback,
 * commit) wait their turn in one queue, in the order they came.
 *
 * The control verbs (savepoint, rollback, commit) are offered only when
 * the mount lets agents use them (not under --no-ctl-verbs: status.json's
 * ctl_verbs) and --tools names them; before each use the daemon is asked
 * again (control-check: `control deny`, --no-ctl-verbs).
 *
 * Errors: a line that is not JSON gets -32700 (id null), a message that is
 * not a request or a line longer than MCP_FRAME_MAX -32600 (the long line
 * is skipped as it comes, never held whole), an unknown method -32601, an
 * unknown tool or arguments that do not fit its schema -32602 (checked
 * before anything runs); a tool that fails (the mount is gone, a refusal,
 * a command that exits non-zero) answers a result with isError true.
 *
 * JSON is parsed and built with jansson (Debian's libjansson): a strict
 * RFC 8259 parser (rejects trailing garbage, invalid UTF-8 and NUL bytes
 * in strings), and dumping that escapes every string; no hand-written
 * JSON.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "cli.h"
#include "mcp.h"

static const char mcp_usage[] =
"usage: txfs mcp [--tools LIST] [MNT]\n\n"
"A Model Context Protocol server (revision " MCP_REVISION ") on stdin and\n"
"stdout, for the txfs session mounted at MNT (default: the mount holding\n"
"the current folder). Tools: status, diff, savepoint, rollback, commit,\n"
"log, exec, history, undo, restore; --tools LIST (comma-separated) offers\n"
"only those. savepoint, rollback, commit, undo and restore are not\n"
"offered when the mount has --no-ctl-verbs, and the policy's `control\n"
"deny` applies to them. Example client\n"
"configuration: {\"command\": \"txfs\", \"args\": [\"mcp\",\n"
"\"/path/to/workspace\"]}.\n";

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

double mcp_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void mcp_send(struct mcp *m, json_t *msg)
{
	char *s = msg ? json_dumps(msg, JSON_COMPACT | JSON_PRESERVE_ORDER) :
		  NULL;

	if (s && !m->out_gone &&
	    (printf("%s\n", s) < 0 || fflush(stdout)))
		m->out_gone = true;	/* the client is gone */
	free(s);
	json_decref(msg);
}

static void send_error(struct mcp *m, json_t *id, int code, const char *text)
{
	mcp_send(m, json_pack("{s:s,s:O,s:{s:i,s:s}}", "jsonrpc", "2.0", "id",
			      id ? id : json_null(), "error", "code", code,
			      "message", text));
}

static void send_result(struct mcp *m, json_t *id, json_t *result)
{
	if (!result)
		send_error(m, id, -32603, "internal error");
	else
		mcp_send(m, json_pack("{s:s,s:O,s:o}", "jsonrpc", "2.0", "id",
				      id, "result", result));
}

static json_t *initialize(void)
{
	return json_pack("{s:s,s:{s:{s:b}},s:{s:s,s:s,s:s},s:s}",
		"protocolVersion", MCP_REVISION,
		"capabilities", "tools", "listChanged", 0,
		"serverInfo", "name", "txfs", "title", "txfs transactions",
		"version", TXFS_VERSION,
		"instructions", "Every change to the workspace is staged in a "
		"transaction. Use exec to run commands (each one is rolled back "
		"if it fails), diff and status to review, rollback to undo.");
}

/* --- the queue of calls that change the transaction ----------------- */

static void job_pop(struct mcp *m, size_t i)
{
	mcp_job_free(m->q[i]);
	memmove(m->q + i, m->q + i + 1, (m->nq - i - 1) * sizeof(m->q[0]));
	m->nq--;
}

/* notifications/cancelled: a waiting call goes unanswered; a running
 * command is stopped and rolled back, and its answer never sent. */
static void cancel(struct mcp *m, json_t *id)
{
	for (size_t i = 0; id && i < m->nq; i++) {
		if (!json_equal(m->q[i]->id, id))
			continue;
		if (!m->q[i]->started) {
			job_pop(m, i);
			return;
		}
		m->q[i]->cancelled = true;
		mcp_exec_stop(m->q[i], mcp_now_ms());
		return;
	}
}

/* Start what heads the queue: the short tools run to their end here. */
static void advance(struct mcp *m)
{
	while (m->nq && !m->q[0]->started) {
		struct mcp_job *j = m->q[0];
		int rc;

		if (strcmp(j->t->name, "exec")) {
			send_result(m, j->id, mcp_run_tool(m, j->t, j->args));
			job_pop(m, 0);
			continue;
		}
		rc = mcp_exec_start(m, j);
		if (rc == 0)
			return;
		send_result(m, j->id, mcp_text_result(rc == -ENOTDIR ?
			"txfs: exec: cwd: not a folder inside the workspace" :
			"txfs: exec: could not start txfs exec", true, NULL));
		job_pop(m, 0);
	}
}

static void tools_call(struct mcp *m, json_t *id, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	json_t *token = json_object_get(json_object_get(params, "_meta"),
					"progressToken");
	const struct mcp_tool *t;
	const char *why = NULL;
	struct mcp_job *j;
	char *bad;

	if (!(t = mcp_tool_find(m, name, &why))) {
		send_error(m, id, -32602, why);
		return;
	}
	if (!args)
		args = json_object();
	else
		json_incref(args);
	if ((bad = mcp_check_args(t, args))) {
		send_error(m, id, -32602, bad);
		free(bad);
		json_decref(args);
		return;
	}
	if (!t->queued) {
		send_result(m, id, mcp_run_tool(m, t, args));
		json_decref(args);
		return;
	}
	if (m->nq == MCP_QUEUE_MAX || !(j = calloc(1, sizeof(*j)))) {
		send_result(m, id, mcp_text_result("txfs: mcp: too many calls "
			"waiting for the running command", true, NULL));
		json_decref(args);
		return;
	}
	j->id = json_incref(id);
	j->token = json_is_string(token) || json_is_integer(token) ?
		   json_incref(token) : NULL;
	j->args = args;
	j->t = t;
	j->pidfd = j->fd[0] = j->fd[1] = j->fd[2] = -1;
	j->timeout_s = (long)json_integer_value(json_object_get(args,
								"timeout"));
	j->called = j->last_progress = mcp_now_ms();
	m->q[m->nq++] = j;
	advance(m);
}

static void handle(struct mcp *m, const char *line, size_t len)
{
	json_t *msg = json_loadb(line, len, 0, NULL), *id, *params;
	const char *method;

	if (!msg) {
		send_error(m, NULL, -32700, "parse error");
		return;
	}
	id = json_object_get(msg, "id");
	method = json_string_value(json_object_get(msg, "method"));
	params = json_object_get(msg, "params");
	if (!json_is_object(msg) ||
	    strcmp(json_string_value(json_object_get(msg, "jsonrpc")) ?: "",
		   "2.0") || !method ||
	    (id && !json_is_string(id) && !json_is_integer(id))) {
		/* answers from the client (to nothing we asked) are dropped */
		if (!json_is_object(msg) || !json_object_get(msg, "result"))
			send_error(m, json_is_object(msg) &&
				   (json_is_string(id) || json_is_integer(id)) ?
				   id : NULL, -32600, "invalid request");
	} else if (!id) {	/* a notification: never answered */
		if (!strcmp(method, "notifications/cancelled"))
			cancel(m, json_object_get(params, "requestId"));
	} else if (!strcmp(method, "initialize")) {
		send_result(m, id, initialize());
	} else if (!strcmp(method, "ping")) {
		send_result(m, id, json_object());
	} else if (!strcmp(method, "tools/list")) {
		send_result(m, id, mcp_tools_list(m));
	} else if (!strcmp(method, "tools/call") && json_is_object(params)) {
		tools_call(m, id, params);
	} else if (!strcmp(method, "tools/call")) {
		send_error(m, id, -32602, "tools/call needs params {name, "
			   "arguments}");
	} else {
		send_error(m, id, -32601, "method not found");
	}
	json_decref(msg);
}

/* --- stdin: frames of at most MCP_FRAME_MAX bytes --------------------- */

struct input {
	char *buf;
	size_t len;
	bool skipping;	/* inside a line that was too long */
	bool eof;
};

static void read_input(struct mcp *m, struct input *in)
{
	ssize_t r = read(0, in->buf + in->len, MCP_FRAME_MAX + 1 - in->len);
	size_t off = 0;
	char *nl;

	if (r < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (r <= 0) {
		in->eof = true;
		return;
	}
	in->len += (size_t)r;
	while ((nl = memchr(in->buf + off, '\n', in->len - off))) {
		size_t l = (size_t)(nl - (in->buf + off));

		if (l && in->buf[off + l - 1] == '\r')
			l--;
		if (!in->skipping && l)
			handle(m, in->buf + off, l);
		in->skipping = false;
		off = (size_t)(nl - in->buf) + 1;
	}
	memmove(in->buf, in->buf + off, in->len - off);
	in->len -= off;
	if (in->len > MCP_FRAME_MAX) {	/* no newline in sight */
		if (!in->skipping)
			send_error(m, NULL, -32600, "frame too long: the "
				   "limit is 4 MiB a line; skipped");
		in->skipping = true;
		in->len = 0;
	}
}

/* --- the loop --------------------------------------------------------- */

static int loop(struct mcp *m, const sigset_t *old)
{
	struct input in = { .buf = malloc(MCP_FRAME_MAX + 1) };
	bool stopping = false;

	if (!in.buf)
		return -ENOMEM;
	/* stdin stays blocking (its file may be stdout's too): it is read
	 * once each time poll says it is readable */
	for (;;) {
		struct pollfd p[5];
		struct mcp_job *j = m->nq && m->q[0]->started ? m->q[0] : NULL;
		size_t n = 0;
		double now = mcp_now_ms();
		struct timespec ts = { 0, 250 * 1000 * 1000 };

		if ((in.eof || got_signal || m->out_gone) && !stopping) {
			/* the client is gone: stop the running command (it
			 * is rolled back), drop the waiting calls */
			stopping = true;
			while (m->nq > (j ? 1u : 0u))
				job_pop(m, m->nq - 1);
			if (j) {
				j->cancelled = true;
				mcp_exec_stop(j, now);
			}
		}
		if (stopping && !m->nq)
			break;
		if (!in.eof && !stopping)
			p[n++] = (struct pollfd){ .fd = 0, .events = POLLIN };
		if (j)
			n += mcp_exec_pollfds(j, p + n);
		if (ppoll(p, n, &ts, old) < 0 && errno != EINTR)
			break;
		if (!in.eof && !stopping && p[0].revents)
			read_input(m, &in);
		now = mcp_now_ms();
		if (j && mcp_exec_step(m, j, now)) {
			if (!j->cancelled)
				send_result(m, j->id, mcp_exec_result(j));
			else
				mcp_exec_log_stopped(j);
			job_pop(m, 0);
			advance(m);
		}
		for (size_t i = j ? 1 : 0; i < m->nq; i++)
			if (now - m->q[i]->last_progress >= MCP_PROGRESS_MS)
				mcp_progress(m, m->q[i], now, "waiting for "
					     "the command before it to end");
	}
	free(in.buf);
	return 0;
}

int cmd_mcp(int argc, char **argv)
{
	struct mcp m = { .offered = (1ul << mcp_ntools) - 1 };
	char cwd[PATH_MAX], *list = NULL;
	const char *arg = NULL, *bad = NULL;
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block, old;
	int i = 1, rc;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			fputs(mcp_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--tools") && i + 1 < argc) {
			list = argv[++i];
		} else if (!strncmp(argv[i], "--tools=", 8)) {
			list = argv[i] + 8;
		} else if (!strcmp(argv[i], "--")) {
			i++;
			break;
		} else {
			fputs(mcp_usage, stderr);
			return 2;
		}
	}
	if (argc - i > 1) {
		fputs(mcp_usage, stderr);
		return 2;
	}
	if (list && mcp_parse_tools(list, &m.offered, &bad)) {
		cli_err(0, "mcp: --tools: no tool '%s' (status, diff, "
			"savepoint, rollback, commit, log, exec, history, undo, "
			"restore)", bad);
		return 2;
	}
	if (!m.offered) {
		cli_err(0, "mcp: --tools: the list names no tool");
		return 2;
	}
	arg = i < argc ? argv[i] : NULL;
	if (!realpath(arg ? arg : (getcwd(cwd, sizeof(cwd)) ? cwd : "."),
		      m.mnt)) {
		cli_err(errno, "mcp: %s", arg ? arg : ".");
		return 1;
	}
	/* the mount holding MNT, from the kernel's mount table */
	{
		char path[PATH_MAX];

		memcpy(path, m.mnt, sizeof(path));
		if (cli_mount_of(path, m.mnt, sizeof(m.mnt)) ||
		    cli_find_state(m.mnt, ".txfs", m.state, sizeof(m.state))) {
			cli_err(0, "mcp: %s: not inside a txfs mount",
				arg ? arg : cwd);
			return 1;
		}
	}
	if (!mcp_ctl_verbs(&m))
		for (size_t t = 0; t < mcp_ntools; t++)
			if (mcp_tools[t].ctl)
				m.offered &= ~(1ul << t);
	signal(SIGPIPE, SIG_IGN);
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	rc = loop(&m, &old);
	if (rc)
		cli_err(rc, "mcp: the server loop");
	return rc ? 1 : 0;
}
