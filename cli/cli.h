/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cli.h - the txfs command line: one cmd_<name>() per subcommand group,
 * dispatched from the command table in main.c.
 *
 * Every cmd_*() takes the arguments after the subcommand name (argv[0] is
 * the subcommand) and returns the process exit status: 0 success, 1 a
 * refused or failed operation, 2 wrong usage. Errors are printed on stderr
 * as "txfs: what failed: why".
 */
#ifndef TXFS_CLI_H
#define TXFS_CLI_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sandbox/reslimit.h"

int cmd_mount(int argc, char **argv);
int cmd_umount(int argc, char **argv);
int cmd_policy(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_commit(int argc, char **argv);
int cmd_rollback(int argc, char **argv);
int cmd_savepoint(int argc, char **argv);
int cmd_release(int argc, char **argv);
int cmd_log(int argc, char **argv);
int cmd_recover(int argc, char **argv);
/* txfs policy reload MNT (argv[0] is "reload"). */
int cmd_policy_reload(int argc, char **argv);

int cmd_run(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_mcp(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_undo(int argc, char **argv);
int cmd_restore(int argc, char **argv);
/* agent_env.c: --env NAME[=VALUE]... and --clean-env on our environment
 * (before the fork: the command inherits it). -1 on a bad entry. */
int cli_env_apply(const char *const *envs, size_t n, bool clean_env);
/* path made absolute and canonical in out (size bytes) as realpath(3)
 * would, also when its end does not exist yet: the longest existing prefix
 * resolved (symlinks followed, a dangling one by its target), the rest
 * appended ("." dropped, ".." taken lexically). 0, -ELOOP (more than 40
 * symlinks), -ENOTDIR (a file on the way), -ENAMETOOLONG or -errno. */
int cli_canon_path(const char *path, char *out, size_t size);
/* 0 when the command may write path: -EPERM when path is the state folder,
 * holds it or lies inside it, compared canonical (cli_canon_path), or when
 * either runs into a symlink loop; -errno when either cannot be resolved. */
int cli_allow_write_check(const char *path, const char *state);
/* The folders a confined command must not read (confine_opts.hidden): the
 * state folder, the root of the default state folders (every workspace's
 * state), a real directory mounted elsewhere; canonical, none inside
 * another (list[i] points to path[i]). */
#define CLI_MAX_HIDDEN 16
struct cli_hidden {
	char path[CLI_MAX_HIDDEN][PATH_MAX];
	const char *list[CLI_MAX_HIDDEN];
	size_t n;
};
/* Add path (an existing folder) to h, canonical; 0, -EPERM when it holds
 * or lies in one of writable[0..nw) (it could not be covered), -ENOTDIR,
 * -E2BIG or the -errno of cli_canon_path or stat. */
int cli_hidden_add(struct cli_hidden *h, const char *path,
		   const char *const *writable, size_t nw);
/* Also the real directory of every other txfs mount of this user (other
 * sessions) mounted elsewhere, from mountinfo alone; best effort: what
 * cannot be covered (a writable folder holds it, the list is full) is
 * left. Their state folders are covered only where they are default ones
 * (the root of those is hidden whole). */
void cli_hidden_add_others(struct cli_hidden *h, const char *self_mnt,
			   const char *const *writable, size_t nw);
/* cmd_session.c: the audit log text grouped by txfs exec command
 * (modifies text); txfs rollback MNT --command N. */
int cli_log_grouped(char *text, bool json);
int cli_rollback_command(const char *mnt, const char *n);
/* The state folder of the mount MNT (from MNT/<ctl>/status.json). */
int cli_find_state(const char *mnt, const char *ctl, char *out, size_t size);
/* The nearest fuse.txfs mount holding PATH (absolute, resolved), from the
 * kernel's /proc/self/mountinfo, never from a .txfs/ in the tree (which an
 * agent could fake); -ENOENT when none does. */
int cli_mount_of(const char *path, char *mnt, size_t size);
/* Print why cli_find_state(mnt, ctl) failed with rc, as
 * "txfs: PREFIXMNT: not a txfs mount (...)": with an errno only where one
 * is the cause (not for a missing or foreign status file). */
void cli_err_find_state(int rc, const char *prefix, const char *mnt,
			const char *ctl);
/* One request to the daemon whose state folder is `state` (see
 * fs/session/sock.c): *err its errno (0 ok), *out its text (malloc'd). */
int cli_request(const char *state, int argc, char **argv, int *err,
		char **out, size_t *outlen);

/* vetoes.c: the vetoes of one txfs exec command (cmd > 0: between its
 * cmd-begin and cmd-end records) or of one txfs run (cmd 0: the last
 * `last` vetoes of the log), read from the audit log text: how many, the
 * first CLI_VETO_SHOW as "op path (rule)", and the last guard record's
 * note ("`limit deletes 1000` (FILE:LINE) reached: ...; HINT") or NULL.
 * cli_vetoes_print writes them to stderr, indented. */
#define CLI_VETO_SHOW 10
struct cli_vetoes {
	size_t n;
	char *first[CLI_VETO_SHOW];
	char *guard;
};
int cli_vetoes_read(const char *log, unsigned long long cmd, uint64_t last,
		    struct cli_vetoes *v);
void cli_vetoes_print(const struct cli_vetoes *v, const char *mnt);
void cli_vetoes_free(struct cli_vetoes *v);

struct policy;
/* hide_tracked.c: warn on stderr about each path a hide rule of p hides
 * that git tracks in workspace ws (index or history); policy_file names
 * the policy in the messages. Returns 1 if it warned, else 0. */
int warn_hidden_tracked(const char *ws, const struct policy *p,
			const char *policy_file);

/* cmd_txn.c: the options the transaction commands share (cmd_diff.c
 * too). copts_parse returns 0 (o->help: --help was printed) or 2. */
struct copts {
	bool json, force, stat, name_status, help, commands;
	const char *ctl, *since, *command;
	int first;	/* index of the first operand */
	/* diff under --salvage: inode numbers whose file data has a gap
	 * (pairs FIRST, LAST from STATE/salvaged/lost.objects) */
	unsigned long long (*gaps)[2];
	size_t ngaps;
};
/* Parse the options; one that allow (short letters: j --json, F --force,
 * s --stat, n --name-status, S --since, N --command, M --commands) leaves
 * out is refused: 2 after "txfs: CMD: --X is not an option of this
 * command". */
int copts_parse(int argc, char **argv, struct copts *o, const char *usage,
		const char *allow);

/* limit_opts.c: --timeout, --memory, --cpu, --pids (set: given on the
 * command line, "none" included). cli_limit_opt returns 0 or 2 after
 * "txfs: WHO: --NAME: bad size 'ARG': why". cli_limits_merge: the
 * options over the policy's limits (p may be NULL) over the defaults.
 * cli_limit_json: {"name","value","text","used","by"} of the limit
 * hit, or JSON null; cli_limit_print: "txfs: WHO: limit hit: ..." */
struct cli_limits {
	uint64_t v[LIMIT_N];
	bool set[LIMIT_N];
};
struct policy_limits;
struct json_t;
int cli_limit_opt(struct cli_limits *c, enum limit_kind k, const char *arg,
		  const char *who);
void cli_limits_merge(const struct cli_limits *c,
		      const struct policy_limits *p, struct limits *out);
struct json_t *cli_limit_json(const struct limwatch *w);
void cli_limit_print(const struct limwatch *w, const char *who);

/* Print "txfs: what: why" (why from errno value err, or a string). */
void cli_err(int err, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* TXFS_CLI_H */
