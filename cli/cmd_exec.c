/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_exec.c - `txfs exec`: one command as one nested transaction inside a
 * mounted session.
 *
 *   cmd-begin (the daemon numbers the command N and takes savepoint cmd-N),
 *   run CMD confined as `txfs run` confines it (confine.c; its cwd is the
 *   current folder when that is inside the mount, else the mount root),
 *   stop its whole process tree when it exits, run --check the same way
 *   when CMD succeeded, then cmd-end: the changes stay staged (CMD and
 *   the check exited 0) or the session rolls back to cmd-N. Report what
 *   changed and what was vetoed (one JSON line with --json).
 *
 * Commands of one session run one at a time (flock on STATE/exec.lock):
 * savepoints are a stack, so rolling back a command while a later one runs
 * would discard the later one's changes too.
 *
 * The exit status is CMD's, or the check's when CMD succeeded; 124 when a
 * resource limit stopped it (reslimit.h), 125 when txfs itself failed (no
 * mount, daemon unreachable), 2 for wrong usage.
 * The command cannot commit, roll back, release or take savepoints: the
 * daemon refuses control requests from processes under a seccomp filter
 * (fs/session/sock.c), and every .txfs/ctl verb from the processes of a command
 * between cmd-begin and cmd-end (fs/session/exectree.c: we are the socket peer of
 * cmd-begin and the subreaper of the command), whatever the mount's
 * options; and after, as long as one lives, from the process group we
 * tell it with cmd-group before the command runs, which the command
 * cannot leave (setsid, setpgid: EPERM), so that what it leaves behind
 * when we are SIGKILLed stays refused.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "mountinfo.h"
#include "sandbox/sandbox.h"
#include "../fs/mount.h"
#include "../policy/policy.h"

static const char exec_usage[] =
"usage: txfs exec [--check CMD] [--json] [--json-fd FD]\n"
"                 [--allow-write PATH]...\n"
"                 [--env NAME[=VALUE]]... [--clean-env] [--no-network]\n"
"                 [--allow-weaker] [--pass-fd N]... [--timeout DURATION]\n"
"                 [--memory SIZE] [--cpu DURATION] [--pids N]\n"
"                 [MNT] -- CMD [ARG...]\n"
"\n"
"Run CMD as one nested transaction of the session mounted at MNT\n"
"(default: the txfs mount holding the current folder): take savepoint\n"
"cmd-N, run CMD confined as `txfs run` does (writes only inside MNT,\n"
"/tmp, $TMPDIR, /dev/shm and each --allow-write PATH), stop everything it\n"
"started, run --check the same way if CMD exited 0, then keep the changes\n"
"staged (both exited 0) or roll back to cmd-N. Prints what changed and\n"
"what the policy vetoed (--json: one JSON line on stdout). The exit status\n"
"is CMD's (or the check's); 125 when txfs failed. --json-fd FD writes\n"
"that line to descriptor FD instead (never CMD's). --clean-env starts CMD\n"
"with only PATH, HOME, USER, LOGNAME, LANG, LC_ALL, TERM, TMPDIR and each\n"
"--env NAME[=VALUE].\n"
"CMD gets stdin, stdout, stderr and each --pass-fd N (repeatable), no\n"
"other descriptor of the caller (a folder as one of them is refused). It\n"
"can neither commit, roll back, release nor take savepoints: the daemon\n"
"refuses .txfs/ctl verbs from its processes and the control socket to\n"
"confined peers.\n"
"--timeout DURATION (90s, 5m, 1h; plain: seconds), --memory SIZE (512M),\n"
"--cpu DURATION (CPU time of the whole tree), --pids N (tasks at once),\n"
"over the policy's `limit timeout|memory|cpu|pids` lines; `none` lifts\n"
"one. Past a limit the whole tree is stopped, the command rolled back,\n"
"exit 124, and the report names the limit (\"limit\" in --json).\n"
"Defaults: no timeout, memory or CPU bound, 32768 tasks.\n";

#define MAX_WRITABLE 64

/* SIGINT, SIGTERM or SIGHUP received: stop the command, roll it back. */
static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

struct exec_ctx {
	bool sigpipe_ign;	/* our caller ignored SIGPIPE (spawn.h) */
	const char *check;
	bool json, no_network, allow_weaker, clean_env;
	int json_fd;		/* --json-fd: the report's descriptor, or -1 */
	const char *mnt_arg;
	char **cmd;
	char mnt[PATH_MAX], state[PATH_MAX], cwd[PATH_MAX];
	const char *writable[MAX_WRITABLE];
	size_t nwritable;
	const char *envs[MAX_WRITABLE], *allow[MAX_WRITABLE];
	size_t nenvs, nallow;
	pid_t daemon;
	unsigned long long id, vetoes0;
	char *begin_text;	/* cmd-begin's answer: the allow-write paths */
	struct proctree pt;	/* every process the command starts */
	unsigned stopped;	/* leftovers stopped after it exited */
	bool tree_failed;	/* some could not be stopped: roll back */
	struct sup_lists sup;	/* the supervisor's policy part */
	bool have_globs;	/* sup filled from cmd-begin's answer */
	int pass_fds[SPAWN_MAX_PASS_FD];	/* --pass-fd, ascending */
	size_t npass;
	char ws_real[PATH_MAX];	/* the real directory, if not at mnt */
	struct cli_limits lim;	/* --timeout, --memory, --cpu, --pids */
	struct policy_limits pol_lim;	/* the policy's limit lines */
	bool have_pol_lim;
	struct limwatch lw;	/* the command's and the check's limits */
	struct cli_hidden hid;	/* what the command must not read (cli.h) */
};

static int add_path(struct exec_ctx *x, const char *path, bool must)
{
	struct stat st;

	if (!path || path[0] != '/' || stat(path, &st) || !S_ISDIR(st.st_mode)) {
		if (must)
			cli_err(0, "exec: --allow-write %s: not an absolute "
				"path of a folder", path ? path : "");
		return must ? -EINVAL : 0;
	}
	if (x->state[0] && cli_allow_write_check(path, x->state) == -EPERM) {
		cli_err(0, "exec: allow-write %s: refused: it holds or is "
			"inside the state folder %s", path, x->state);
		return -EPERM;
	}
	/* a real directory mounted elsewhere (MNT is not the workspace
	 * itself) is reachable by its own path: never where the command may
	 * write, or it would change the real files past the mount */
	if (x->ws_real[0] && strcmp(path, x->mnt) &&
	    cli_allow_write_check(path, x->ws_real) == -EPERM) {
		cli_err(0, "exec: the real directory %s is inside %s, which the "
			"command may write, so it could change it past the mount "
			"at %s: mount the workspace in place (txfs mount %s)",
			x->ws_real, path, x->mnt, x->ws_real);
		return -EPERM;
	}
	if (x->nwritable == MAX_WRITABLE)
		return -E2BIG;
	x->writable[x->nwritable++] = path;
	return 0;
}

/* The real directory of the mount, when it is mounted elsewhere: the
 * mount's source in the kernel's mountinfo (the daemon's fsname), not
 * .txfs/status.json, which the daemon builds by counting the changes. */
static void load_ws_real(struct exec_ctx *x)
{
	char ws[PATH_MAX];

	if (mountinfo_txfs_source(x->mnt, ws, sizeof(ws)) == 0 &&
	    ws[0] == '/' &&
	    cli_canon_path(ws, x->ws_real, sizeof(x->ws_real)) == 0 &&
	    !strcmp(x->ws_real, x->mnt))
		x->ws_real[0] = '\0';
}

/* What the command must not read: the state folder, the root of the
 * default ones (other workspaces' layers and histories) if there, and the
 * real directory when it is not under the mount (reading it by its path
 * would pass by hide and deny read rules). */
static int hide_paths(struct exec_ctx *x)
{
	char def[PATH_MAX], *sl;
	int rc = cli_hidden_add(&x->hid, x->state, x->writable, x->nwritable);

	if (rc) {
		cli_err(rc, "exec: state folder %s", x->state);
		return rc;
	}
	if (x->ws_real[0] &&
	    (rc = cli_hidden_add(&x->hid, x->ws_real, x->writable, x->nwritable))) {
		cli_err(rc, "exec: the real directory %s", x->ws_real);
		return rc;
	}
	if (txfs_default_state(x->ws_real[0] ? x->ws_real : x->mnt, def,
			       sizeof(def)) == 0 &&
	    (sl = strrchr(def, '/')) && sl != def) {
		*sl = '\0';
		(void)cli_hidden_add(&x->hid, def, x->writable, x->nwritable);
	}
	cli_hidden_add_others(&x->hid, x->mnt, x->writable, x->nwritable);
	return 0;
}

/* --pass-fd of a connection to the mount's daemon (its control socket,
 * connected before txfs exec ran: the daemon would take the command's
 * verbs for txfs exec's own) is refused. */
static int refuse_daemon_fds(const struct exec_ctx *x)
{
	for (size_t i = 0; i < x->npass; i++) {
		struct ucred cr;
		socklen_t l = sizeof(cr);
		struct stat st;

		if (fstat(x->pass_fds[i], &st) || !S_ISSOCK(st.st_mode) ||
		    getsockopt(x->pass_fds[i], SOL_SOCKET, SO_PEERCRED, &cr,
			       &l) || cr.pid <= 0 || cr.pid != x->daemon)
			continue;
		cli_err(0, "exec: --pass-fd %d: a connection to the mount's "
			"daemon cannot be passed to the command",
			x->pass_fds[i]);
		return -EPERM;
	}
	return 0;
}

static int parse_exec(int argc, char **argv, struct exec_ctx *x)
{
	static const struct option lopts[] = {
		{ "check", required_argument, NULL, 'k' },
		{ "json", no_argument, NULL, 'j' },
		{ "json-fd", required_argument, NULL, 'J' },
		{ "allow-write", required_argument, NULL, 'W' },
		{ "env", required_argument, NULL, 'e' },
		{ "clean-env", no_argument, NULL, 'E' },
		{ "no-network", no_argument, NULL, 'n' },
		{ "allow-weaker", no_argument, NULL, 'w' },
		{ "pass-fd", required_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "memory", required_argument, NULL, 'M' },
		{ "cpu", required_argument, NULL, 'U' },
		{ "pids", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c, dd = 1;

	while (dd < argc && strcmp(argv[dd], "--"))
		dd++;
	optind = 1;
	while ((c = getopt_long(dd, argv, "+h", lopts, NULL)) != -1) {
		switch (c) {
		case 'k': x->check = optarg; break;
		case 'j': x->json = true; break;
		case 'J': {
			char *end;
			long fd = strtol(optarg, &end, 10);

			if (!optarg[0] || *end || fd < 3 || fd > INT_MAX ||
			    fcntl((int)fd, F_SETFD, FD_CLOEXEC) < 0) {
				cli_err(0, "exec: --json-fd %s: not an open "
					"descriptor above 2", optarg);
				return 2;
			}
			x->json = true;
			x->json_fd = (int)fd;
			break;
		}
		case 'W':
			if (x->nallow < MAX_WRITABLE)
				x->allow[x->nallow++] = optarg;
			break;
		case 'e':
			if (x->nenvs < MAX_WRITABLE)
				x->envs[x->nenvs++] = optarg;
			break;
		case 'E': x->clean_env = true; break;
		case 'n': x->no_network = true; break;
		case 'w': x->allow_weaker = true; break;
		case 'F':
			if (spawn_pass_fd_add(x->pass_fds, &x->npass, optarg, "exec"))
				return 2;
			break;
		case 'T': case 'M': case 'U': case 'P':
			if (cli_limit_opt(&x->lim, c == 'T' ? LIMIT_TIMEOUT :
					  c == 'M' ? LIMIT_MEMORY : c == 'U' ?
					  LIMIT_CPU : LIMIT_PIDS, optarg, "exec"))
				return 2;
			break;
		case 'h': fputs(exec_usage, stdout); return -1;
		default:
			cli_err(0, "exec: unknown option (see txfs exec --help)");
			return 2;
		}
	}
	if (dd >= argc - 1 || dd - optind > 1) {
		cli_err(0, "exec: usage: txfs exec [OPTIONS] [MNT] -- CMD ...");
		return 2;
	}
	x->mnt_arg = dd - optind == 1 ? argv[optind] : NULL;
	x->cmd = argv + dd + 1;
	return 0;
}

/* The txfs mount holding MNT, or the current folder (cli_mount_of);
 * x->state: its control folder's state file (.txfs/ at the mount's root
 * is the daemon's own). */
static int find_mount(struct exec_ctx *x)
{
	char real[PATH_MAX];

	if (!getcwd(x->cwd, sizeof(x->cwd)))
		return -errno;
	if (!realpath(x->mnt_arg ? x->mnt_arg : x->cwd, real))
		return -errno;
	return cli_mount_of(real, x->mnt, sizeof(x->mnt));
}

static pid_t read_daemon_pid(const char *state)
{
	char path[PATH_MAX + 16], buf[32] = "";
	int fd;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/daemon.pid", state);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? (pid_t)atoi(buf) : 0;
}

/* The policy in force, read back from the mount's .txfs/policy: its
 * limit lines, and the supervisor's `allow connect` and `exec deny` lists
 * (when cmd-begin's answer did not carry them: a daemon from before it
 * did). */
static int load_sup_lists(struct exec_ctx *x)
{
	char path[PATH_MAX + 16], *text = NULL, *err = NULL;
	struct policy *p = NULL;
	size_t len = 0;
	FILE *f;
	int rc;

	snprintf(path, sizeof(path), "%s/.txfs/policy", x->mnt);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	{
		FILE *m = open_memstream(&text, &len);
		char buf[8192];
		size_t n;

		if (!m) {
			fclose(f);
			return -ENOMEM;
		}
		while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
			fwrite(buf, 1, n, m);
		fclose(m);
	}
	fclose(f);
	rc = policy_load_buf(path, text ? text : "", len, &p, &err);
	free(text);
	if (rc) {
		cli_err(0, "exec: policy %s: %s", path, err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	x->pol_lim = *policy_limits(p);
	x->have_pol_lim = true;
	rc = x->have_globs ? 0 : sup_lists_from_policy(p, x->mnt, &x->sup);
	policy_free(p);
	return rc;
}

/* The command's folder: where txfs exec was called, if inside the mount. */
static const char *cmd_dir(const struct exec_ctx *x)
{
	size_t ml = strlen(x->mnt);

	if (strncmp(x->cwd, x->mnt, ml) || (x->cwd[ml] && x->cwd[ml] != '/'))
		return x->mnt;
	return x->cwd;
}

/*
 * Spawn argv confined exactly as txfs run does (spawn.h), wait for it,
 * then stop every process it left (proctree.c). Returns its exit status
 * (128+N for signal N), 126 when it could not be started.
 */
static char *ask(struct exec_ctx *x, int argc, char **argv);

/* spawn's started(): the daemon learns the command's process group before
 * it runs, so that it stays refused ctl verbs if we are killed. */
static int tell_group(void *arg, pid_t pid)
{
	struct exec_ctx *x = arg;
	char ids[32], pg[32], *req[3] = { "cmd-group", ids, pg }, *out;

	snprintf(ids, sizeof(ids), "%llu", x->id);
	snprintf(pg, sizeof(pg), "%d", (int)pid);
	out = ask(x, 3, req);
	free(out);
	return out ? 0 : -EPROTO;
}

static int exec_spawn_wait(struct exec_ctx *x, char *const *argv, bool shell)
{
	const struct sup_opts so = {
		.workspace = x->mnt, .writable = x->writable,
		.n_writable = x->nwritable,
		.connect_allow = (const char *const *)x->sup.connect,
		.n_connect_allow = x->sup.nconnect,
		.exec_deny = (const char *const *)x->sup.exec,
		.n_exec_deny = x->sup.nexec,
		.no_network = x->no_network, .quiet = x->json, .state = x->state,
		.hidden = x->hid.list, .n_hidden = x->hid.n,
	};
	const struct spawn sp = {
		.who = "exec", .dir = cmd_dir(x),
		.co = { .writable = x->writable, .n_writable = x->nwritable,
			.daemon_pid = x->daemon, .no_network = x->no_network,
			.allow_weaker = x->allow_weaker, .keep_group = true,
			.hidden = x->hid.list, .n_hidden = x->hid.n },
		.so = &so, .pt = &x->pt, .lw = &x->lw, .quiet = x->json,
		.deathsig = true, .sigpipe_ign = x->sigpipe_ign,
		.got_signal = &got_signal,
		.pass_fds = x->pass_fds, .n_pass_fds = x->npass,
		.started = tell_group, .started_arg = x,
	};
	unsigned n = 0;
	int status = spawn_wait(&sp, argv, shell);

	if (proctree_stop_all(&x->pt, &n)) {
		x->tree_failed = true;
		cli_err(0, "exec: some processes started by the command could "
			"not be stopped: the command is rolled back");
	}
	x->stopped += n;
	return status;
}

/* Wait for the session's other txfs exec commands; the lock goes with
 * the process (the descriptor is not inherited: O_CLOEXEC). */
static int lock_session(const struct exec_ctx *x)
{
	char path[PATH_MAX + 16];
	int fd;

	snprintf(path, sizeof(path), "%s/exec.lock", x->state);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	while (flock(fd, LOCK_EX) < 0)
		if (errno != EINTR || got_signal) {
			close(fd);
			return errno == EINTR ? -EINTR : -errno;
		}
	return fd;
}

/* One request to the daemon; its text (malloc'd) or NULL (printed). */
static char *ask(struct exec_ctx *x, int argc, char **argv)
{
	char *out = NULL;
	size_t len;
	int err = 0, rc = cli_request(x->state, argc, argv, &err, &out, &len);

	if (rc || err) {
		cli_err(rc ? rc : out && out[0] ? 0 : -err, "exec: %s: %s",
			argv[0],
			out && out[0] ? out : "the daemon refused");
		free(out);
		return NULL;
	}
	return out;
}

static int begin(struct exec_ctx *x)
{
	int n = 0;
	char **req;
	char *out;
	int network = 0, globs = 0;

	while (x->cmd[n])
		n++;
	/* each argument after "=", so that an empty one (the request's end
	 * marker) does not cut the logged argv short: `sh -c 'eval "$1"' ""
	 * PAYLOAD` would log without its payload */
	req = calloc((size_t)n + 3, sizeof(*req));
	if (!req)
		return -ENOMEM;
	req[0] = "cmd-begin";
	req[1] = "--argv=";
	for (int i = 0; i < n; i++)
		if (asprintf(&req[i + 2], "=%s", x->cmd[i]) < 0) {
			req[i + 2] = NULL;
			for (int k = 2; k < i + 2; k++)
				free(req[k]);
			free(req);
			return -ENOMEM;
		}
	out = ask(x, n + 2, req);
	for (int i = 0; i < n; i++)
		free(req[i + 2]);
	free(req);
	if (!out || sscanf(out, "%llu %llu %d %d", &x->id, &x->vetoes0,
			   &network, &globs) < 3) {
		x->id = 0;
		free(out);
		return -EPROTO;
	}
	x->begin_text = out;
	x->no_network = x->no_network || network;
	x->have_globs = globs == 1;
	/* the policy's allow-write folders (missing ones are skipped), then
	 * its connect ("c:") and exec deny ("x:") globs */
	for (char *l = strchr(out, '\n'); l;) {
		char *e;
		int rc;

		*l++ = '\0';
		if (!*l)
			break;
		e = strchr(l, '\n');
		if (e)
			*e = '\0';
		if (x->have_globs && (l[0] == 'c' || l[0] == 'x') && l[1] == ':')
			rc = sup_lists_add(&x->sup, l[0] == 'x', l + 2, x->mnt);
		else
			rc = add_path(x, l, false) ? -EPERM : 0;
		if (rc)
			return rc;
		l = e;
	}
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* The vetoes logged while command x->id ran, as "op path (rule)" lines in
 * o["vetoed"] (bytes: "vetoed_hex" when one is not UTF-8), and in *cv
 * the first few and the guard's note (vetoes.c). */
static void vetoed(struct exec_ctx *x, json_t *o, struct cli_vetoes *cv)
{
	char *req[1] = { "log" }, *log = ask(x, 1, req);
	bool in = false;

	cli_vetoes_read(log, x->id, 0, cv);
	json_object_set_new(o, "vetoed", json_array());
	for (char *l = log ? strtok(log, "\n") : NULL; l;
	     l = strtok(NULL, "\n")) {
		json_t *ev = json_loads(l, 0, NULL);
		const char *e = json_string_value(json_object_get(ev, "event"));
		json_int_t c = json_integer_value(json_object_get(ev, "cmd"));

		if (e && !strcmp(e, "cmd-begin"))
			in = c == (json_int_t)x->id;
		else if (e && !strcmp(e, "cmd-end"))
			in = false;
		else if (in && e && !strcmp(e, "veto")) {
			char *op = audit_json_bytes(ev, "op", -1);
			char *path = audit_json_bytes(ev, "path", -1);
			char *rule = audit_json_bytes(ev, "rule", -1), *s;

			if (asprintf(&s, "%s %s (%s)", op ? op : "?",
				     path ? path : "?",
				     rule ? rule : "no rule") > 0) {
				audit_json_append_bytes(o, "vetoed", s);
				free(s);
			}
			free(op);
			free(path);
			free(rule);
		}
		json_decref(ev);
	}
	free(log);
}

/* Print o[key]'s byte strings, one a line after pre, for a terminal. */
static void put_lines(json_t *o, const char *key, const char *pre)
{
	for (size_t i = 0; i < json_array_size(json_object_get(o, key)); i++) {
		char *b = audit_json_bytes(o, key, (long)i);
		char *q = b ? audit_quote(b) : NULL;

		fprintf(stderr, "  %s%s\n", pre, q ? q : "?");
		free(q);
		free(b);
	}
}

/* Print the daemon's cmd-end object, with what only we know added. */
static void report(struct exec_ctx *x, const char *end, int check_status,
		   double ms)
{
	json_t *o = json_loads(end, 0, NULL), *ch;
	struct cli_vetoes cv = { 0 };

	if (!o) {
		if (x->json_fd >= 0)
			dprintf(x->json_fd, "%s", end);
		else
			fputs(end, x->json ? stdout : stderr);
		return;
	}
	json_object_set_new(o, "check_exit", json_integer(check_status));
	if (json_integer_value(json_object_get(o, "vetoes")))
		vetoed(x, o, &cv);
	else
		json_object_set_new(o, "vetoed", json_array());
	/* a limit reached: what to do (the agent reads this, not the log) */
	if (!cv.guard || audit_json_set_bytes(o, "guard", cv.guard))
		json_object_set_new(o, "guard", json_null());
	json_object_set_new(o, "limit", cli_limit_json(&x->lw));
	json_object_set_new(o, "ms", json_real(ms));
	if (x->json) {
		char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

		if (s && x->json_fd >= 0)
			dprintf(x->json_fd, "%s\n", s);
		else if (s)
			printf("%s\n", s);
		free(s);
		json_decref(o);
		cli_vetoes_free(&cv);
		return;
	}
	ch = json_object_get(o, "changes");
	cli_limit_print(&x->lw, "exec");
	fprintf(stderr, "txfs: exec: command %lld %s (exit %lld%s): %zu "
		"change%s, %lld veto%s\n",
		(long long)json_integer_value(json_object_get(o, "cmd")),
		json_string_value(json_object_get(o, "outcome")),
		(long long)json_integer_value(json_object_get(o, "exit")),
		check_status >= 0 ? ", check ran" : "", json_array_size(ch),
		json_array_size(ch) == 1 ? "" : "s",
		(long long)json_integer_value(json_object_get(o, "vetoes")),
		json_integer_value(json_object_get(o, "vetoes")) == 1 ? "" :
		"es");
	put_lines(o, "changes", "");
	cli_vetoes_print(&cv, x->mnt);
	cli_vetoes_free(&cv);
	json_decref(o);
}

static int setup(struct exec_ctx *x, int argc, char **argv)
{
	char state[PATH_MAX];
	int rc = parse_exec(argc, argv, x);

	if (rc)
		return rc;
	if ((rc = find_mount(x))) {
		cli_err(rc == -ENOENT && !x->mnt_arg ? 0 : rc, "exec: %s: no "
			"txfs mount (give MNT, or run inside one)",
			x->mnt_arg ? x->mnt_arg : "current folder");
		return 125;
	}
	if (!x->state[0] && (rc = cli_find_state(x->mnt, ".txfs", state,
						 sizeof(state)))) {
		cli_err_find_state(rc, "exec: ", x->mnt, ".txfs");
		return 125;
	}
	if (!x->state[0] && (rc = cli_canon_path(state, x->state,
						 sizeof(x->state)))) {
		cli_err(rc, "exec: state folder %s", state);
		return 125;
	}
	x->daemon = read_daemon_pid(x->state);
	load_ws_real(x);
	if (refuse_daemon_fds(x))
		return 2;
	if (add_path(x, x->mnt, false) || add_path(x, "/tmp", false) ||
	    add_path(x, getenv("TMPDIR"), false) ||
	    add_path(x, "/dev/shm", false))
		return 2;
	for (size_t i = 0; i < x->nallow; i++)
		if (add_path(x, x->allow[i], true))
			return 2;
	if (cli_env_apply(x->envs, x->nenvs, x->clean_env)) {
		cli_err(0, "exec: --env: bad NAME=VALUE");
		return 2;
	}
	return 0;
}

int cmd_exec(int argc, char **argv)
{
	struct exec_ctx x = { .pt = { .cgfd = -1, .cgparent = -1 },
			      .json_fd = -1, .lw = { .hit = -1 } };
	char ids[32], v0[32], st[16], *end, *req[5];
	int rc, status, check_status = -1, lock;
	double t0 = now_ms(), ms;
	struct sigaction sa = { .sa_handler = on_signal };

	rc = setup(&x, argc, argv);
	if (rc)
		return rc < 0 ? 0 : rc;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);	/* spawn.h: SIGKILL 5 s after */
	/* as txfs run: a closed stdout ends no step half done */
	x.sigpipe_ign = ignore_sigpipe();
	lock = lock_session(&x);
	if (lock < 0) {
		cli_err(lock, "exec: lock %s/exec.lock", x.state);
		return 125;
	}
	rc = begin(&x);
	if (rc && !x.id) {
		free(x.begin_text);
		close(lock);
		return 125;
	}
	/* begun but refused (a policy allow-write over the state folder),
	 * or its policy or subreaper not to be had: not run, and ended as a
	 * failure so that its savepoint goes */
	if (rc == 0)
		rc = hide_paths(&x);	/* after the policy's allow-write */
	if (rc == 0 && (rc = load_sup_lists(&x)) == 0) {
		struct limits lim;

		cli_limits_merge(&x.lim, x.have_pol_lim ? &x.pol_lim : NULL,
				 &lim);
		x.pt.no_cgroup = !limits_want_cgroup(&lim);
		if ((rc = proctree_start(&x.pt)))
			cli_err(rc, "exec: cannot become the subreaper of the "
				"command");
		else
			rc = limwatch_start(&x.lw, &lim, &x.pt);
	}
	status = rc ? 125 : exec_spawn_wait(&x, x.cmd, false);
	if (got_signal && status == 0)
		status = 128 + got_signal;
	if (status == 0 && x.check && !got_signal && !x.tree_failed) {
		char *check[] = { (char *)x.check, NULL };

		check_status = exec_spawn_wait(&x, check, true);
	}
	proctree_end(&x.pt);
	sup_lists_free(&x.sup);
	snprintf(ids, sizeof(ids), "%llu", x.id);
	snprintf(v0, sizeof(v0), "%llu", x.vetoes0);
	snprintf(st, sizeof(st), "%d", status);
	req[0] = "cmd-end";
	req[1] = ids;
	req[2] = st;
	req[3] = status == 0 && check_status <= 0 && !x.tree_failed ?
		 "keep" : "rollback";
	req[4] = v0;
	end = ask(&x, 5, req);
	close(lock);
	free(x.begin_text);
	ms = now_ms() - t0;
	if (!end)
		return 125;
	report(&x, end, check_status, ms);
	free(end);
	return status ? status : check_status > 0 ? check_status : 0;
}
