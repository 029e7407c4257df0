/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mcp.h - the pieces of `txfs mcp` (cmd_mcp.c: the loop and JSON-RPC;
 * mcp_tools.c: the tools, their schemas and the short ones; mcp_exec.c:
 * the exec tool's running command).
 */
#ifndef TXFS_MCP_H
#define TXFS_MCP_H

#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define MCP_REVISION "2025-06-18"
#define MCP_FRAME_MAX (4u << 20)	/* a longer line gets -32600 */
#define MCP_OUT_HALF 32768u	/* exec keeps a stream's first and last */
#define MCP_OUT_CAP (2 * MCP_OUT_HALF)
#define MCP_PROGRESS_MS 2000.0	/* notifications/progress while running */
#define MCP_KILL_MS 30000.0	/* SIGKILL txfs exec this long after TERM */
#define MCP_TIMEOUT_GRACE_S 15	/* our clock: txfs exec's --timeout + this */
#define MCP_QUEUE_MAX 32	/* calls waiting for the transaction */
#define MCP_TIMEOUT_MAX 86400

struct mcp_tool {
	const char *name, *title, *description, *schema, *out_schema;
	bool ctl;	/* a control verb: --no-ctl-verbs, `control deny` */
	bool queued;	/* changes the transaction: waits its turn */
};
extern const struct mcp_tool mcp_tools[];
extern const size_t mcp_ntools;

/* A stream's first MCP_OUT_HALF bytes and its last (a ring). */
struct mcp_cap {
	char head[MCP_OUT_HALF], tail[MCP_OUT_HALF];
	size_t total;
};

struct mcp_job {
	json_t *id, *token, *args;	/* the request's id, progressToken */
	const struct mcp_tool *t;
	pid_t pid;			/* txfs exec; 0 while queued */
	int pidfd, fd[3];		/* stdout, stderr, report; -1 closed */
	struct mcp_cap cap[2];
	char *report;
	size_t rlen;
	double called, t0, last_progress, term_at;	/* ms */
	long timeout_s;			/* 0: none */
	int status;			/* txfs exec's exit status */
	bool started, exited, timed_out, cancelled;
};

struct mcp {
	char mnt[PATH_MAX], state[PATH_MAX];
	unsigned long offered;		/* bit i: mcp_tools[i] */
	struct mcp_job *q[MCP_QUEUE_MAX];	/* q[0] runs */
	size_t nq;
	bool out_gone;			/* stdout closed: stop answering */
};

/* cmd_mcp.c */
void mcp_send(struct mcp *m, json_t *msg);
double mcp_now_ms(void);

/* mcp_tools.c */
json_t *mcp_tools_list(const struct mcp *m);
/* The offered tool called name; NULL with *why set. */
const struct mcp_tool *mcp_tool_find(const struct mcp *m, const char *name,
				     const char **why);
/* NULL when args fit t's input schema, else what does not (-32602). */
char *mcp_check_args(const struct mcp_tool *t, json_t *args);
/* Run t (not exec) now; its result. */
json_t *mcp_run_tool(struct mcp *m, const struct mcp_tool *t, json_t *args);
json_t *mcp_text_result(const char *text, bool error, json_t *structured);
/* --tools LIST into a mask of mcp_tools; -EINVAL with *bad set. */
int mcp_parse_tools(char *list, unsigned long *mask, const char **bad);
/* Whether the mount lets agents use control verbs (status.json). */
bool mcp_ctl_verbs(const struct mcp *m);

/* mcp_exec.c */
/* In a child of the server, before exec: default dispositions, then no
 * signal blocked. */
void mcp_child_signals(void);
int mcp_exec_start(struct mcp *m, struct mcp_job *j);
/* Read what is ready; reap; time out; 1 when the job has ended. */
int mcp_exec_step(struct mcp *m, struct mcp_job *j, double now);
/* The exec result of an ended job. */
json_t *mcp_exec_result(struct mcp_job *j);
/* A cancelled or stopped command's end, one line on stderr (the server's
 * log): its exit, its outcome, or txfs exec's last stderr lines. */
void mcp_exec_log_stopped(const struct mcp_job *j);
/* s (n bytes) with its first and last MCP_OUT_HALF bytes kept, the cut
 * said; malloc'd. */
char *mcp_capped(const char *s, size_t n, const char *name);
/* SIGTERM the command (it stops its tree and rolls back). */
void mcp_exec_stop(struct mcp_job *j, double now);
/* Its descriptors to poll; returns how many it filled (at most 4). */
size_t mcp_exec_pollfds(struct mcp_job *j, struct pollfd *p);
void mcp_job_free(struct mcp_job *j);
void mcp_progress(struct mcp *m, struct mcp_job *j, double now,
		  const char *what);

#endif /* TXFS_MCP_H */
