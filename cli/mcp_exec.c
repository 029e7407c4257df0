/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp_exec.c - the exec tool of `txfs mcp`: `txfs exec --json-fd=3
 * [--check=CHECK] -- MNT -- ARGV...` in the folder cwd names, its stdout,
 * stderr and report read on three pipes while the server goes on reading
 * its own stdin (cmd_mcp.c polls them all), so that a cancellation can
 * stop it and progress can be told.
 *
 * The tool's timeout is txfs exec's --timeout (reslimit.h: the command's
 * tree is stopped and rolled back, the report says "limit"); the server
 * keeps a clock of its own MCP_TIMEOUT_GRACE_S longer, in case txfs exec
 * itself does not return. Stopping (that clock, notifications/cancelled,
 * the client gone) is SIGTERM to txfs exec, which stops the command's
 * whole process tree and rolls the command back (cmd_exec.c); SIGKILL
 * MCP_KILL_MS later if it is still there. Each stream keeps its first and last MCP_OUT_HALF bytes; the
 * result says how many bytes were cut where.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "mcp.h"
#include "policy.h"

#define REPORT_MAX (1u << 20)

static void cap_add(struct mcp_cap *c, const char *b, size_t n)
{
	for (size_t i = 0; i < n; i++, c->total++) {
		char ch = b[i] ? b[i] : (char)0xff;	/* NUL: U+FFFD */

		if (c->total < MCP_OUT_HALF)
			c->head[c->total] = ch;
		else
			c->tail[(c->total - MCP_OUT_HALF) % MCP_OUT_HALF] = ch;
	}
}

/* The kept bytes as text, with a line saying what was cut. */
static char *cap_text(const struct mcp_cap *c, const char *name)
{
	size_t h = c->total < MCP_OUT_HALF ? c->total : MCP_OUT_HALF;
	size_t rest = c->total - h, len = 0;
	char *s = NULL;
	FILE *f = open_memstream(&s, &len);

	if (!f)
		return NULL;
	fwrite(c->head, 1, h, f);
	if (rest <= MCP_OUT_HALF) {
		fwrite(c->tail, 1, rest, f);
	} else {
		size_t start = (c->total - 2 * MCP_OUT_HALF) % MCP_OUT_HALF;

		fprintf(f, "\n[txfs: %zu bytes cut here: %s was %zu bytes, "
			"capped at %u: the first and the last %u are "
			"shown]\n", c->total - MCP_OUT_CAP, name, c->total,
			MCP_OUT_CAP, MCP_OUT_HALF);
		fwrite(c->tail + start, 1, MCP_OUT_HALF - start, f);
		fwrite(c->tail, 1, start, f);
	}
	return fclose(f) ? (free(s), NULL) : s;
}

char *mcp_capped(const char *s, size_t n, const char *name)
{
	struct mcp_cap *c = calloc(1, sizeof(*c));
	char *t;

	if (!c)
		return NULL;
	cap_add(c, s, n);
	t = cap_text(c, name);
	free(c);
	return t;
}

void mcp_child_signals(void)
{
	sigset_t none;

	/* the server's handlers first: a SIGTERM (a cancellation) already
	 * pending must kill this child, not be taken by a handler it
	 * inherited and forgotten by the txfs exec it becomes */
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

int mcp_exec_start(struct mcp *m, struct mcp_job *j)
{
	json_t *argv_j = json_object_get(j->args, "argv"), *v;
	const char *cwd = json_string_value(json_object_get(j->args, "cwd"));
	const char *check = json_string_value(json_object_get(j->args,
							      "check"));
	char dir[PATH_MAX], real[PATH_MAX], *chk = NULL, **argv = NULL;
	char tmo[48];
	int p[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } }, rc = 0;
	size_t n = 0, i, ml = strlen(m->mnt);

	if (snprintf(dir, sizeof(dir), "%s/%s", m->mnt, cwd ? cwd : ".") >=
	    (int)sizeof(dir) || !realpath(dir, real) ||
	    strncmp(real, m->mnt, ml) || (real[ml] && real[ml] != '/'))
		return -ENOTDIR;
	argv = calloc(json_array_size(argv_j) + 8, sizeof(*argv));
	if (!argv || (check && asprintf(&chk, "--check=%s", check) < 0)) {
		chk = NULL;
		rc = -ENOMEM;
		goto out;
	}
	argv[n++] = "txfs";
	argv[n++] = "exec";
	argv[n++] = "--json-fd=3";
	if (chk)
		argv[n++] = chk;
	if (j->timeout_s > 0) {
		snprintf(tmo, sizeof(tmo), "--timeout=%lds", j->timeout_s);
		argv[n++] = tmo;
	}
	argv[n++] = m->mnt;
	argv[n++] = "--";
	json_array_foreach(argv_j, i, v)
		argv[n++] = (char *)json_string_value(v);
	for (i = 0; i < 3; i++)
		if (pipe2(p[i], O_CLOEXEC)) {
			rc = -errno;
			goto out;
		}
	j->pid = fork();
	if (j->pid < 0) {
		rc = -errno;
		goto out;
	}
	if (j->pid == 0) {
		int nul = open("/dev/null", O_RDONLY);

		/* its own group: a ^C meant for the server is the server's
		 * to pass on (as a cancellation) */
		setpgid(0, 0);
		mcp_child_signals();
		if (nul < 0 || chdir(real) || dup2(nul, 0) < 0 ||
		    dup2(p[0][1], 1) < 0 || dup2(p[1][1], 2) < 0 ||
		    dup2(p[2][1], 3) < 0)
			_exit(125);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	j->pidfd = (int)syscall(SYS_pidfd_open, j->pid, 0);
	for (i = 0; i < 3; i++) {
		j->fd[i] = p[i][0];
		p[i][0] = -1;
		fcntl(j->fd[i], F_SETFL, O_NONBLOCK);
	}
	j->started = true;
	j->t0 = j->last_progress = mcp_now_ms();
out:
	for (i = 0; i < 3; i++) {
		if (p[i][0] >= 0)
			close(p[i][0]);
		if (p[i][1] >= 0)
			close(p[i][1]);
	}
	free(chk);
	free(argv);
	return rc;
}

size_t mcp_exec_pollfds(struct mcp_job *j, struct pollfd *p)
{
	size_t n = 0;

	for (int i = 0; i < 3; i++)
		if (j->fd[i] >= 0)
			p[n++] = (struct pollfd){ .fd = j->fd[i],
						  .events = POLLIN };
	if (!j->exited && j->pidfd >= 0)
		p[n++] = (struct pollfd){ .fd = j->pidfd, .events = POLLIN };
	return n;
}

/* Read what fd i holds now; close it at its end. */
static void drain(struct mcp_job *j, int i)
{
	char buf[65536];
	ssize_t r;

	while (j->fd[i] >= 0) {
		r = read(j->fd[i], buf, sizeof(buf));
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 && errno == EAGAIN)
			return;
		if (r <= 0) {
			close(j->fd[i]);
			j->fd[i] = -1;
			return;
		}
		if (i < 2) {
			cap_add(&j->cap[i], buf, (size_t)r);
		} else if (j->rlen + (size_t)r < REPORT_MAX) {
			char *b = realloc(j->report, j->rlen + (size_t)r + 1);

			if (!b)
				continue;
			j->report = b;
			memcpy(b + j->rlen, buf, (size_t)r);
			j->rlen += (size_t)r;
			b[j->rlen] = '\0';
		}
	}
}

void mcp_exec_stop(struct mcp_job *j, double now)
{
	if (j->pid > 0 && !j->exited && !j->term_at) {
		kill(j->pid, SIGTERM);
		j->term_at = now;
	}
}

void mcp_progress(struct mcp *m, struct mcp_job *j, double now,
		  const char *what)
{
	if (!j->token)
		return;
	j->last_progress = now;
	mcp_send(m, json_pack("{s:s,s:s,s:{s:O,s:f,s:s}}", "jsonrpc", "2.0",
			      "method", "notifications/progress", "params",
			      "progressToken", j->token, "progress",
			      (now - j->called) / 1000.0, "message", what));
}

int mcp_exec_step(struct mcp *m, struct mcp_job *j, double now)
{
	int st;

	for (int i = 0; i < 3; i++)
		drain(j, i);
	if (!j->exited && waitpid(j->pid, &st, WNOHANG) == j->pid) {
		j->exited = true;
		j->status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) :
			    WEXITSTATUS(st);
		/* all it wrote is in the pipes; a process that escaped the
		 * tree and holds them is not waited for */
		for (int i = 0; i < 3; i++) {
			drain(j, i);
			if (j->fd[i] >= 0)
				close(j->fd[i]);
			j->fd[i] = -1;
		}
		return 1;
	}
	if (j->timeout_s && !j->term_at && now - j->t0 >=
	    (double)(j->timeout_s + MCP_TIMEOUT_GRACE_S) * 1000.0) {
		j->timed_out = true;
		mcp_exec_stop(j, now);
	}
	if (j->term_at && now - j->term_at >= MCP_KILL_MS)
		kill(j->pid, SIGKILL);
	if (now - j->last_progress >= MCP_PROGRESS_MS) {
		char what[160];

		snprintf(what, sizeof(what), "%s for %.0f s; %zu bytes on "
			 "stdout, %zu on stderr", j->term_at ? "stopping "
			 "(rolling back)" : "running", (now - j->t0) / 1000.0,
			 j->cap[0].total, j->cap[1].total);
		mcp_progress(m, j, now, what);
	}
	return 0;
}

void mcp_exec_log_stopped(const struct mcp_job *j)
{
	json_t *rep = j->report ? json_loads(j->report, 0, NULL) : NULL;
	const char *outcome = json_string_value(json_object_get(rep,
							      "outcome"));
	char *err = cap_text(&j->cap[1], "stderr");
	size_t n = err ? strlen(err) : 0;

	/* the log of a client that went away or cancelled: how it ended
	 * (the last lines of txfs exec's stderr when it did not say) */
	fprintf(stderr, "txfs: mcp: the stopped exec ended: exit %d, %s%s%.*s",
		j->status, outcome ? outcome : "no report",
		outcome || !n ? "\n" : "; its stderr:\n",
		outcome ? 0 : (int)(n > 2000 ? 2000 : n),
		err ? err + (n > 2000 ? n - 2000 : 0) : "");
	if (!outcome && n && err[n - 1] != '\n')
		fputc('\n', stderr);
	free(err);
	json_decref(rep);
}

static void add_text(json_t *content, const char *text)
{
	json_t *t = audit_json_text(text);

	if (t)
		json_array_append_new(content, json_pack("{s:s,s:o}", "type",
							 "text", "text", t));
}

json_t *mcp_exec_result(struct mcp_job *j)
{
	json_t *rep = j->report ? json_loads(j->report, 0, NULL) : NULL;
	json_t *content = json_array(), *r, *sc;
	char *out = cap_text(&j->cap[0], "stdout");
	char *err = cap_text(&j->cap[1], "stderr"), *s = NULL;
	bool bad;

	if (!json_is_object(rep)) {
		json_decref(rep);
		rep = NULL;
	}
	/* txfs exec's --timeout stopped it (or, failing that, our clock) */
	if (!strcmp(json_string_value(json_object_get(json_object_get(rep,
	    "limit"), "name")) ?: "", "timeout"))
		j->timed_out = true;
	if (out && j->cap[0].total)
		add_text(content, out);
	if (err && j->cap[1].total &&
	    asprintf(&s, "stderr:\n%s", err) >= 0) {
		add_text(content, s);
		free(s);
	}
	if (j->timed_out && asprintf(&s, "txfs: exec: timed out after %ld "
				     "s: the command was stopped and rolled "
				     "back", j->timeout_s) >= 0) {
		add_text(content, s);
		free(s);
	}
	if (rep) {
		json_object_set_new(rep, "timed_out",
				    json_boolean(j->timed_out));
		json_object_set_new(rep, "output", json_pack(
			"{s:i,s:I,s:I,s:b,s:b}", "cap", MCP_OUT_CAP,
			"stdout_bytes", (json_int_t)j->cap[0].total,
			"stderr_bytes", (json_int_t)j->cap[1].total,
			"stdout_truncated", j->cap[0].total > MCP_OUT_CAP,
			"stderr_truncated", j->cap[1].total > MCP_OUT_CAP));
		s = json_dumps(rep, JSON_COMPACT | JSON_PRESERVE_ORDER);
		if (s)
			add_text(content, s);
		free(s);
	} else if (asprintf(&s, "txfs: exec: the command ended without a "
			    "report (txfs exec exited %d)", j->status) >= 0) {
		add_text(content, s);
		free(s);
	}
	bad = !rep || j->status != 0 || strcmp(json_string_value(
		json_object_get(rep, "outcome")) ?: "", "kept");
	r = json_pack("{s:o,s:b}", "content", content, "isError", bad);
	/* the structured result holds the output too, first: a client
	 * that gives its model only structuredContent (Claude Code) must
	 * not lose it */
	sc = rep ? json_pack("{s:o,s:o}", "stdout", audit_json_text(
			     out ? out : ""), "stderr", audit_json_text(
			     err ? err : "")) : NULL;
	if (r && sc && !json_object_update(sc, rep))
		json_object_set_new(r, "structuredContent", sc);
	else
		json_decref(sc);
	json_decref(rep);
	free(out);
	free(err);
	return r;
}

void mcp_job_free(struct mcp_job *j)
{
	if (!j)
		return;
	for (int i = 0; i < 3; i++)
		if (j->fd[i] >= 0)
			close(j->fd[i]);
	if (j->pidfd >= 0)
		close(j->pidfd);
	json_decref(j->id);
	json_decref(j->token);
	json_decref(j->args);
	free(j->report);
	free(j);
}
