/* SPDX-License-Identifier: Apache-2.0 */
/*
 * main.c - the txfs command: a table of subcommands.
 *
 * `txfs SRC MNT [-o OPTS]` (what mount.fuse3 runs for `mount -t fuse.txfs`
 * and fstab entries) is treated as `txfs mount -o OPTS SRC MNT`.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "config.h"
#include "cli.h"

struct command {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static int cmd_help(int argc, char **argv);
static int cmd_version(int argc, char **argv);

static const struct command commands[] = {
	{ "mount", cmd_mount, "mount a workspace (copy-on-write, staged)" },
	{ "umount", cmd_umount, "unmount it (the staged layer is kept)" },
	{ "status", cmd_status, "what the open transaction holds" },
	{ "diff", cmd_diff, "the staged changes as a unified diff" },
	{ "commit", cmd_commit, "merge the staged changes into the real "
				"directory" },
	{ "rollback", cmd_rollback, "discard the staged changes (or back to "
				    "a savepoint)" },
	{ "savepoint", cmd_savepoint, "take a savepoint" },
	{ "release", cmd_release, "forget a savepoint, keeping its changes" },
	{ "log", cmd_log, "the audit log: vetoes and transaction events" },
	{ "recover", cmd_recover, "finish or discard an interrupted commit" },
	{ "run", cmd_run, "run a command in a transaction, confined: commit "
			  "on success" },
	{ "exec", cmd_exec, "run one command as a nested transaction of a "
			    "mounted session" },
	{ "mcp", cmd_mcp, "an MCP server on stdio: the session's "
			  "transactions as tools" },
	{ "history", cmd_history, "the commits kept, and what each changed" },
	{ "undo", cmd_undo, "take commits back (crash-atomic, undoable)" },
	{ "restore", cmd_restore, "put a path back as it was before a commit" },
	{ "policy", cmd_policy, "check, test, reload or print the default policy" },
	{ "help", cmd_help, "this help" },
	{ "version", cmd_version, "print the version" },
};

void cli_err(int err, const char *fmt, ...)
{
	va_list ap;

	fputs("txfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (err)
		fprintf(stderr, ": %s", strerror(err < 0 ? -err : err));
	fputc('\n', stderr);
}

static int cmd_help(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("usage: txfs COMMAND [ARGS]   (txfs COMMAND --help for more)\n\n"
	       "txfs is a transactional workspace filesystem: every change is\n"
	       "staged and can be committed or rolled back.\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		printf("  %-10s %s\n", commands[i].name, commands[i].summary);
	return 0;
}

static int cmd_version(int argc, char **argv)
{
	(void)argc, (void)argv;
	printf("txfs %s\n", TXFS_VERSION);
	return 0;
}

static bool is_dir(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int main(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))
		return argc < 2 ? (cmd_help(0, NULL), 2) : cmd_help(0, NULL);
	if (!strcmp(argv[1], "--version"))
		return cmd_version(0, NULL);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	if (argc >= 3 && argv[1][0] != '-' && is_dir(argv[1])) {
		argv[0] = "mount";	/* mount helper convention */
		return cmd_mount(argc, argv);
	}
	cli_err(0, "%s: unknown command (see txfs --help)", argv[1]);
	return 2;
}
