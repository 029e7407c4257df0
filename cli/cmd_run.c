/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_run.c - `txfs run`: the transactional execution loop.
 *
 *   mount DIR in place (exactly as `txfs mount`), start CMD confined
 *   (confine.c: no-new-privs, Landlock, seccomp) with its current folder
 *   inside the mount, wait; run --check the same way when CMD succeeded;
 *   commit if both exited 0, roll back otherwise (--keep: leave the
 *   transaction staged and mounted); unmount; report.
 *
 * The exit status is CMD's, or the check's when CMD succeeded and the
 * check failed (the JSON report says which); 124 when a resource limit
 * (--timeout, --memory, --cpu, --pids, the policy's limit lines:
 * sandbox/reslimit.h) stopped them; 1 when the commit itself was
 * refused (conflicts: the transaction is kept staged in the state folder),
 * 2 for wrong usage, 125 when CMD was not run because the state folder
 * holds a transaction kept staged by an earlier mount. SIGINT and SIGTERM stop CMD (its process group) and
 * roll back. After CMD and after the check, every process CMD started is
 * stopped (proctree.c: txfs run is their subreaper) before anything reads
 * or commits the transaction.
 */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "sandbox/sandbox.h"
#include "../fs/mount.h"
#include "../policy/policy.h"

static const char run_usage[] =
"usage: txfs run [-C DIR] [--policy FILE] [--state DIR] [--check CMD]\n"
"                [--keep] [--no-network] [--allow-weaker] [--json] [-o OPT]...\n"
"                [--allow-write PATH]... [--env NAME[=VALUE]]... [--clean-env]\n"
"                [--pass-fd N]... [--timeout DURATION] [--memory SIZE]\n"
"                [--cpu DURATION] [--pids N] -- CMD [ARG...]\n"
"\n"
"Mount DIR (default: the current folder) in place, run CMD confined\n"
"inside it, then commit if CMD (and --check, run the same way) exited 0,\n"
"or roll back. --keep leaves the transaction staged and mounted.\n"
"Confinement: the state folder unreadable (an empty folder in CMD's own\n"
"mount namespace, in a user namespace when unprivileged; without one,\n"
"Landlock read rules: see txfs(1) SECURITY); writes only inside DIR, /tmp,\n"
"$TMPDIR and /dev/shm (Landlock); no mount, ptrace, bpf, kexec, modules,\n"
"keyrings, namespaces, io_uring, TIOCSTI (seccomp); --no-network (or the\n"
"policy's `network deny`) forbids every non-unix socket. If the kernel\n"
"cannot enforce all of it, txfs run refuses unless --allow-weaker.\n"
"Every process CMD started (setsid, double forks, daemons) is stopped\n"
"before --check and before the commit; the report says how many.\n"
"--allow-write PATH (repeatable; or the policy's `allow-write PATH`) keeps\n"
"a folder outside DIR writable (an agent's state: ~/.claude, ~/.codex).\n"
"The environment passes through (API keys); --clean-env keeps only PATH,\n"
"HOME, USER, LOGNAME, LANG, LC_ALL, TERM, TMPDIR and each --env NAME or\n"
"NAME=VALUE. CMD never reaches the control socket (seccomp peers are\n"
"refused), nor .txfs/ctl's verbs. CMD gets stdin, stdout, stderr and each\n"
"--pass-fd N (repeatable), no other descriptor of the caller; a folder as\n"
"one of them is refused.\n"
"-o OPT (repeatable): txfs mount's noopen, open, threads=N, batch=MS or\n"
"spin=US (see txfs mount --help: without noopen or open, the mount takes\n"
"noopen unless the policy has exec, read or write rules).\n"
"--timeout DURATION (90s, 5m, 1h; plain: seconds), --memory SIZE (512M,\n"
"2G), --cpu DURATION (CPU time of the whole tree), --pids N (processes\n"
"and threads at once), each also a policy line (`limit timeout 30m`);\n"
"`none` lifts one. Past a limit the whole tree is stopped and rolled\n"
"back, exit 124, the report says `limit hit: NAME (VALUE)`. Defaults: no\n"
"timeout, memory or CPU bound, 32768 tasks (txfs(1) says which bound the\n"
"kernel holds and which the supervisor counts).\n";

#define RUN_MAX_EXTRA 64

struct run_opts {
	const char *dir, *policy, *state, *check;
	bool keep, no_network, allow_weaker, json, clean_env;
	char **cmd;
	const char *allow[RUN_MAX_EXTRA], *envs[RUN_MAX_EXTRA];
	size_t nallow, nenvs;
	const char *mopts[RUN_MAX_EXTRA];	/* -o: txfs mount's -o */
	size_t nmopts;
	int pass_fds[SPAWN_MAX_PASS_FD];	/* --pass-fd, ascending */
	size_t npass;
	struct cli_limits lim;		/* --timeout, --memory, --cpu, --pids */
};

struct run_ctx {
	struct run_opts o;
	bool sigpipe_ign;	/* our caller ignored SIGPIPE (spawn.h) */
	char ws[PATH_MAX];
	char state[PATH_MAX];
	char policy[PATH_MAX];	/* --policy, absolute (the mount runs in /) */
	pid_t daemon;
	bool network_denied;
	const char *writable[4 + 2 * RUN_MAX_EXTRA];
	size_t nwritable;
	struct proctree pt;	/* every process CMD starts (proctree.h) */
	unsigned stopped;	/* leftovers stopped after CMD and --check */
	bool tree_failed;	/* some could not be stopped: never commit */
	struct sup_lists sup;	/* the supervisor's policy part (supervise.h) */
	struct sup_opts so;	/* the supervisor's options */
	char **pol_allow;	/* the policy's allow-write paths */
	size_t npol_allow;
	struct policy_limits pol_lim;	/* the policy's limit lines */
	struct limwatch lw;	/* CMD's and the check's limits (reslimit.h) */
	struct cli_hidden hid;	/* what CMD must not read (cli.h) */
};

static volatile sig_atomic_t got_signal;

static void on_signal(int sig)
{
	got_signal = sig;
}

/* -o for txfs run: the speed options of txfs mount only; state=, policy=
 * and FUSE options would change what run set up and confined. */
static bool run_mopt_ok(const char *arg)
{
	const char *t = arg;

	while (*t) {
		size_t n = strcspn(t, ",");

		if (!((n == 6 && !strncmp(t, "noopen", 6)) ||
		      (n == 4 && !strncmp(t, "open", 4)) ||
		      (n > 8 && !strncmp(t, "threads=", 8)) ||
		      (n > 6 && !strncmp(t, "batch=", 6)) ||
		      (n > 5 && !strncmp(t, "spin=", 5))))
			return false;
		t += n + (t[n] == ',');
	}
	return arg[0] != '\0';
}

static int parse_run(int argc, char **argv, struct run_opts *o)
{
	static const struct option lopts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "state", required_argument, NULL, 's' },
		{ "check", required_argument, NULL, 'k' },
		{ "keep", no_argument, NULL, 'K' },
		{ "no-network", no_argument, NULL, 'n' },
		{ "allow-weaker", no_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "allow-write", required_argument, NULL, 'W' },
		{ "env", required_argument, NULL, 'e' },
		{ "clean-env", no_argument, NULL, 'E' },
		{ "pass-fd", required_argument, NULL, 'F' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "memory", required_argument, NULL, 'M' },
		{ "cpu", required_argument, NULL, 'U' },
		{ "pids", required_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	optind = 1;
	while ((c = getopt_long(argc, argv, "+C:o:h", lopts, NULL)) != -1) {
		switch (c) {
		case 'C': o->dir = optarg; break;
		case 'o':
			if (o->nmopts == RUN_MAX_EXTRA) {
				cli_err(0, "run: too many -o");
				return 2;
			}
			if (!run_mopt_ok(optarg)) {
				cli_err(0, "run: -o %s: only noopen, open, "
					"threads=N, batch=MS and spin=US (txfs "
					"run sets the state, "
					"the policy and the rest)", optarg);
				return 2;
			}
			o->mopts[o->nmopts++] = optarg;
			break;
		case 'p': o->policy = optarg; break;
		case 's': o->state = optarg; break;
		case 'k': o->check = optarg; break;
		case 'K': o->keep = true; break;
		case 'n': o->no_network = true; break;
		case 'w': o->allow_weaker = true; break;
		case 'j': o->json = true; break;
		case 'W':
		case 'e':
			if ((c == 'W' ? o->nallow : o->nenvs) == RUN_MAX_EXTRA) {
				cli_err(0, "run: too many --%s",
					c == 'W' ? "allow-write" : "env");
				return 2;
			}
			if (c == 'W')
				o->allow[o->nallow++] = optarg;
			else
				o->envs[o->nenvs++] = optarg;
			break;
		case 'E': o->clean_env = true; break;
		case 'F':
			if (spawn_pass_fd_add(o->pass_fds, &o->npass, optarg, "run"))
				return 2;
			break;
		case 'T': case 'M': case 'U': case 'P':
			if (cli_limit_opt(&o->lim, c == 'T' ? LIMIT_TIMEOUT :
					  c == 'M' ? LIMIT_MEMORY : c == 'U' ?
					  LIMIT_CPU : LIMIT_PIDS, optarg, "run"))
				return 2;
			break;
		case 'h': fputs(run_usage, stdout); return -1;
		default:
			cli_err(0, "run: unknown option (see txfs run --help)");
			return 2;
		}
	}
	if (optind >= argc) {
		cli_err(0, "run: missing CMD (txfs run [OPTIONS] -- CMD ...)");
		return 2;
	}
	o->cmd = argv + optind;
	return 0;
}

/* Run txfs itself with argv, wait; returns its exit status or -1. */
static int self_wait(char *const *argv)
{
	pid_t pid = fork();
	int status;

	if (pid < 0)
		return -1;
	if (pid == 0) {
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int read_pid(const char *state)
{
	char path[PATH_MAX + 16], buf[32] = "";
	int fd, n;

	snprintf(path, sizeof(path), "%s/daemon.pid", state);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : 0;
}

/* The policy decides network deny (the daemon loads the same file). */
static int load_policy(struct run_ctx *r)
{
	struct policy *p = NULL;
	char *err = NULL;
	int rc = r->o.policy ? policy_load_file(r->o.policy, &p, &err) :
			       policy_load_default(&p);

	if (rc) {
		cli_err(0, "run: policy %s: refused:\n%s", r->o.policy,
			err ? err : strerror(-rc));
		free(err);
		return rc;
	}
	r->network_denied = r->o.no_network || policy_network_denied(p);
	r->pol_lim = *policy_limits(p);
	rc = sup_lists_from_policy(p, r->ws, &r->sup);
	if (rc)
		cli_err(rc, "run: policy");
	else if ((rc = policy_allow_write(p, getenv("HOME"), &r->pol_allow,
					  &r->npol_allow)))
		cli_err(rc, "run: the policy's allow-write (a ~/ path needs "
			"HOME)");
	policy_free(p);
	return rc;
}

static int mount_ws(struct run_ctx *r)
{
	char *argv[12 + 2 * RUN_MAX_EXTRA];
	int n = 0, rc;

	argv[n++] = "txfs";
	argv[n++] = "mount";
	argv[n++] = "--no-ctl-verbs";	/* CMD must not commit past --check */
	for (size_t i = 0; i < r->o.nmopts; i++) {
		argv[n++] = "-o";
		argv[n++] = (char *)r->o.mopts[i];
	}
	argv[n++] = "--state";
	argv[n++] = r->state;
	if (r->o.policy) {
		argv[n++] = "--policy";
		argv[n++] = (char *)r->o.policy;
	}
	argv[n++] = r->ws;
	argv[n] = NULL;
	rc = self_wait(argv);
	if (rc != 0)
		return -EIO;	/* txfs mount printed why */
	r->daemon = read_pid(r->state);
	return r->daemon > 0 ? 0 : -ESRCH;
}

static void umount_ws(struct run_ctx *r)
{
	char *argv[] = { "txfs", "umount", "-z", r->ws, NULL };

	self_wait(argv);
}

static void add_writable(struct run_ctx *r, const char *path)
{
	struct stat st;

	if (path && path[0] == '/' && stat(path, &st) == 0 &&
	    S_ISDIR(st.st_mode) && r->nwritable < 4 + 2 * RUN_MAX_EXTRA)
		r->writable[r->nwritable++] = path;
}

/* --allow-write and the policy's allow-write: absolute folders that
 * exist (a missing one is an error: the agent would fail later). */
static int add_allowed(struct run_ctx *r)
{
	struct stat st;

	for (size_t i = 0; i < r->o.nallow + r->npol_allow; i++) {
		const char *p = i < r->o.nallow ? r->o.allow[i] :
			r->pol_allow[i - r->o.nallow];

		if (p[0] != '/' || stat(p, &st) || !S_ISDIR(st.st_mode)) {
			cli_err(0, "run: allow-write %s: not an absolute path "
				"of an existing folder", p);
			return 2;
		}
		if (cli_allow_write_check(p, r->state) == -EPERM) {
			cli_err(0, "run: allow-write %s: refused: it holds or "
				"is inside the state folder %s", p, r->state);
			return 2;
		}
		add_writable(r, p);
	}
	if (cli_env_apply(r->o.envs, r->o.nenvs, r->o.clean_env)) {
		cli_err(0, "run: --env: bad NAME=VALUE");
		return 2;
	}
	return 0;
}

/* After the mount (it makes the state folder): what CMD must not read,
 * the state folder and, if there, the root of the default ones (other
 * workspaces' layers and histories). */
static int hide_state(struct run_ctx *r)
{
	char def[PATH_MAX], *sl;
	int rc = cli_hidden_add(&r->hid, r->state, r->writable, r->nwritable);

	if (rc) {
		cli_err(rc, "run: state folder %s", r->state);
		return rc;
	}
	if (txfs_default_state(r->ws, def, sizeof(def)) == 0 &&
	    (sl = strrchr(def, '/')) && sl != def) {
		*sl = '\0';
		(void)cli_hidden_add(&r->hid, def, r->writable, r->nwritable);
	}
	cli_hidden_add_others(&r->hid, r->ws, r->writable, r->nwritable);
	r->so.n_hidden = r->hid.n;
	return 0;
}

/* Run one confined command (spawn.h); its exit status. */
static int run_confined(struct run_ctx *r, char *const *argv, bool shell)
{
	const struct spawn sp = {
		.who = "run", .dir = r->ws,
		.co = { .writable = r->writable, .n_writable = r->nwritable,
			.daemon_pid = r->daemon, .no_network = r->network_denied,
			.allow_weaker = r->o.allow_weaker,
			.hidden = r->hid.list, .n_hidden = r->hid.n },
		.so = &r->so, .pt = &r->pt, .lw = &r->lw, .quiet = r->o.json,
		.got_signal = &got_signal, .sigpipe_ign = r->sigpipe_ign,
		.pass_fds = r->o.pass_fds, .n_pass_fds = r->o.npass,
	};

	return spawn_wait(&sp, argv, shell);
}

static char *daemon_text(struct run_ctx *r, const char *verb, bool json,
			 int *err)
{
	char *req[2] = { (char *)verb, "--json" }, *out = NULL;
	size_t len;

	*err = 0;
	if (cli_request(r->state, json ? 2 : 1, req, err, &out, &len)) {
		*err = EIO;
		free(out);
		return NULL;
	}
	return out;
}

struct outcome {
	const char *action;	/* committed, rolled-back, kept, ... */
	int cmd_status, check_status;	/* -1: not run */
	char *status_json;	/* before the end of the transaction */
	char *changes;
	char *message;		/* the daemon's words */
	unsigned stopped;	/* processes left by CMD or --check, killed */
	double seconds;
	struct cli_vetoes vetoes;	/* what the policy refused (vetoes.c) */
	const struct limwatch *lw;	/* the limit hit, if any */
};

/* The vetoes of this run (its daemon counts them from its mount: status's
 * "vetoes"), read from the log while the daemon is there. */
static void read_vetoes(struct run_ctx *r, struct outcome *o)
{
	json_t *st = o->status_json ? json_loads(o->status_json,
						 JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	json_int_t n = json_integer_value(json_object_get(st, "vetoes"));
	char *log;
	int err;

	json_decref(st);
	if (n > 0 && (log = daemon_text(r, "log", false, &err))) {
		cli_vetoes_read(log, 0, (uint64_t)n, &o->vetoes);
		free(log);
	}
}

/* The --json report, built with jansson: "transaction" is the daemon's
 * status.json object, "changes" the text of .txfs/changes and "message"
 * the daemon's words, as bytes (K_hex when not UTF-8, as in the audit
 * log); printed on one line. */
static void report_json(const struct outcome *o)
{
	json_t *st = o->status_json ? json_loads(o->status_json,
						 JSON_DISABLE_EOF_CHECK, NULL) : NULL;
	json_t *j = json_pack("{s:s,s:i,s:i,s:I,s:f,s:o}",
		"action", o->action, "exit", o->cmd_status,
		"check_exit", o->check_status, "stopped", (json_int_t)o->stopped,
		"seconds", (double)(long long)(o->seconds * 1000 + 0.5) / 1000,
		"transaction", json_is_object(st) ? st : json_null());
	char *s = NULL;

	if (st && !json_is_object(st))
		json_decref(st);
	if (j)
		json_object_set_new(j, "limit", cli_limit_json(o->lw));
	if (j && o->vetoes.guard &&
	    audit_json_set_bytes(j, "guard", o->vetoes.guard))
		json_object_del(j, "guard");
	if (j && !audit_json_set_bytes(j, "changes", o->changes ? o->changes : "") &&
	    !audit_json_set_bytes(j, "message", o->message ? o->message : ""))
		s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER |
			       JSON_REAL_PRECISION(12));
	if (s)
		printf("%s\n", s);
	else
		cli_err(-ENOMEM, "run: the JSON report");
	free(s);
	json_decref(j);
}

static void report(const struct run_ctx *r, const struct outcome *o)
{
	if (r->o.json) {
		report_json(o);
		return;
	}
	cli_limit_print(o->lw, "run");
	if (o->stopped)
		fprintf(stderr, "txfs: run: stopped %u process%s left running "
			"by the command\n", o->stopped,
			o->stopped == 1 ? "" : "es");
	fprintf(stderr, "txfs: run: %s%s%s", o->action,
		o->message ? ": " : "\n", o->message ? o->message : "");
	if (o->changes && o->changes[0])
		fprintf(stderr, "%s", o->changes);
	if (o->vetoes.n) {
		fprintf(stderr, "txfs: run: %zu veto%s by the policy:\n",
			o->vetoes.n, o->vetoes.n == 1 ? "" : "es");
		cli_vetoes_print(&o->vetoes, r->ws);
	}
	if (o->status_json)
		fprintf(stderr, "txfs: run: transaction: %s", o->status_json);
	if (!strcmp(o->action, "kept"))
		fprintf(stderr, "txfs: run: the transaction is staged and "
			"mounted at %s: review it (txfs diff %s), then "
			"`txfs commit %s` or `txfs rollback %s`, and "
			"`txfs umount %s`\n", r->ws, r->ws, r->ws, r->ws, r->ws);
}

static int setup(struct run_ctx *r, int argc, char **argv)
{
	char cwd[PATH_MAX];
	int rc = parse_run(argc, argv, &r->o);

	if (rc)
		return rc;
	if (!realpath(r->o.dir ? r->o.dir : (getcwd(cwd, sizeof(cwd)) ?
					      cwd : "."), r->ws)) {
		cli_err(errno, "run: %s", r->o.dir ? r->o.dir : ".");
		return 1;
	}
	if (r->o.state) {
		snprintf(cwd, sizeof(cwd), "%s", r->o.state);
	} else if ((rc = txfs_default_state(r->ws, cwd, sizeof(cwd)))) {
		cli_err(rc, "run: state folder (set --state or HOME)");
		return 1;
	}
	/* canonical even when not made yet: the checks below compare where
	 * it is, not how it was named (a symlink to an allowed folder) */
	if ((rc = cli_canon_path(cwd, r->state, sizeof(r->state)))) {
		cli_err(rc, "run: state folder %s", cwd);
		return 2;
	}
	if (load_policy(r))
		return 1;
	/* txfs mount runs from / (mount_ws): a relative --policy, read above
	 * under the name given, is passed on absolute */
	if (r->o.policy && r->o.policy[0] != '/' &&
	    realpath(r->o.policy, r->policy))
		r->o.policy = r->policy;
	add_writable(r, r->ws);
	add_writable(r, "/tmp");
	add_writable(r, getenv("TMPDIR"));
	add_writable(r, "/dev/shm");
	if ((rc = add_allowed(r)))
		return rc;
	/* the state folder (the layer, the history, the audit log) is never
	 * where the command may write: /tmp, $TMPDIR, /dev/shm included */
	for (size_t i = 0; i < r->nwritable; i++)
		if (cli_allow_write_check(r->writable[i], r->state) == -EPERM) {
			cli_err(0, "run: the state folder %s is inside %s, which "
				"the command may write: give another --state (or "
				"TMPDIR)", r->state, r->writable[i]);
			return 2;
		}
	r->so = (struct sup_opts){
		.workspace = r->ws, .writable = r->writable, .n_writable = r->nwritable,
		.connect_allow = (const char *const *)r->sup.connect,
		.n_connect_allow = r->sup.nconnect,
		.exec_deny = (const char *const *)r->sup.exec, .n_exec_deny = r->sup.nexec,
		.no_network = r->network_denied, .quiet = r->o.json, .state = r->state,
		.hidden = r->hid.list, .n_hidden = 0,	/* hide_state() sets it */
	};
	return 0;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- the process tree: nothing CMD started outlives it (proctree.h) ---- */

/* After the mount (the daemon must not become our child): subreaper. */
static int tree_begin(struct run_ctx *r)
{
	struct limits lim;
	int rc;

	cli_limits_merge(&r->o.lim, &r->pol_lim, &lim);
	/* the cgroup whenever one is ours, limits or not: cgroup.kill stops
	 * what left the command's group (setsid) and forks faster than the
	 * walk; one run pays its few hundred µs once (txfs exec, paid per
	 * command, makes one only for limits: its commands cannot leave
	 * their group) */
	r->pt.no_cgroup = false;
	rc = proctree_start(&r->pt);
	r->pt.exclude = r->daemon;
	if (rc) {
		cli_err(rc, "run: cannot become the subreaper of CMD");
		return rc;
	}
	return limwatch_start(&r->lw, &lim, &r->pt);
}

/* Stop every process left by CMD (or the check) before anything reads
 * or commits the workspace. */
static void tree_stop(struct run_ctx *r)
{
	unsigned n = 0;

	if (proctree_stop_all(&r->pt, &n)) {
		r->tree_failed = true;
		cli_err(0, "run: some processes started by the command could "
			"not be stopped: the transaction is rolled back");
	}
	r->stopped += n;
}

/* txfs run starts from a clean transaction: a layer kept staged by an
 * earlier txfs mount (or run --keep) is not adopted, listed as CMD's
 * change, rolled back or committed under its name. 125 (CMD not run) when
 * one is kept, or when that cannot be read. */
static int refuse_kept(struct run_ctx *r)
{
	const char *st = r->o.state ? " --state " : "";
	const char *sv = r->o.state ? r->state : "";
	char *changes;
	size_t n = 0;
	int err, rc;

	changes = daemon_text(r, "changes", false, &err);
	rc = err || !changes || changes[0] ? 125 : 0;
	for (const char *c = changes; c && *c; c++)
		n += *c == '\n';
	if (err || !changes)
		cli_err(0, "run: cannot read the transaction of %s: %s", r->ws,
			err ? strerror(err) : "no answer");
	else if (changes[0])
		cli_err(0, "run: %s has a transaction kept staged by an earlier "
			"mount (%zu staged change%s); txfs run starts from a "
			"clean one and did not run the command. Commit or roll "
			"it back first: txfs mount%s%s %s, then txfs commit %s "
			"(or txfs rollback %s), then txfs umount %s", r->ws, n,
			n == 1 ? "" : "s", st, sv, r->ws, r->ws, r->ws, r->ws);
	free(changes);
	return rc;
}

/* Commit, roll back or keep, per the outcome of CMD and the check. */
/* "--via=txfs run: CMD ARG..." for the commit's history record. */
static char *via_text(const struct run_ctx *r, char *buf, size_t size)
{
	size_t used = (size_t)snprintf(buf, size, "--via=txfs run:");

	for (char **a = r->o.cmd; *a && used < size; a++)
		used += (size_t)snprintf(buf + used, size - used, " %s", *a);
	return buf;
}

static int decide(struct run_ctx *r, struct outcome *o)
{
	char *req[2], via[256];
	size_t len;
	int err = 0, rc;
	bool ok = o->cmd_status == 0 && o->check_status <= 0 && !got_signal &&
		  !r->tree_failed;

	if (r->o.keep) {
		o->action = "kept";
		return 0;
	}
	req[0] = ok ? "commit" : "rollback";
	req[1] = via_text(r, via, sizeof(via));
	o->action = ok ? "committed" : "rolled-back";
	rc = cli_request(r->state, ok ? 2 : 1, req, &err, &o->message, &len);
	if (rc < 0) {	/* no answer: the daemon is gone */
		o->action = ok ? "commit-failed" : "rollback-failed";
		free(o->message);
		if (asprintf(&o->message, "the daemon of %s does not answer "
			     "(%s): it died or was killed. The transaction "
			     "stays in %s: `txfs recover %s` completes or "
			     "undoes a commit it stopped in, then `txfs mount "
			     "%s` shows what is staged (commit or roll it "
			     "back)\n", r->ws, rc == -EPROTO ? "the "
			     "connection closed without an answer" :
			     strerror(-rc), r->state,
			     r->state, r->ws) < 0)
			o->message = NULL;
		return 1;
	}
	if (rc || err) {
		o->action = ok ? "commit-refused" : "rollback-failed";
		return 1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct run_ctx r = { .lw = { .hit = -1 } };
	struct outcome o = { .cmd_status = -1, .check_status = -1 };
	struct sigaction sa = { .sa_handler = on_signal };
	double t0 = now_s();
	int rc, err;

	rc = setup(&r, argc, argv);
	if (rc) {
		policy_allow_write_free(r.pol_allow, r.npol_allow);
		sup_lists_free(&r.sup);
		return rc < 0 ? 0 : rc;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGALRM, &sa, NULL);
	/* a reader that goes away (`txfs run ... | head -1`) must not kill
	 * us before the command is stopped and the transaction ended: a write
	 * to it fails with EPIPE instead */
	r.sigpipe_ign = ignore_sigpipe();
	if (chdir("/") || (rc = mount_ws(&r))) {	/* our own cwd must
						 * not pin the real folder */
		/* -EIO: txfs mount failed and said why (no errno here) */
		cli_err(rc == -EIO ? 0 : rc ? rc : errno, "run: mount %s%s",
			r.ws, rc == -EIO ? " failed" : "");
		policy_allow_write_free(r.pol_allow, r.npol_allow);
		sup_lists_free(&r.sup);
		return 125;	/* CMD did not run */
	}
	if ((rc = refuse_kept(&r)) || hide_state(&r) || tree_begin(&r)) {
		umount_ws(&r);
		policy_allow_write_free(r.pol_allow, r.npol_allow);
		sup_lists_free(&r.sup);
		return rc ? rc : 1;
	}
	o.cmd_status = run_confined(&r, r.o.cmd, false);
	tree_stop(&r);
	if (o.cmd_status == 0 && r.o.check && !got_signal && !r.tree_failed) {
		char *check[] = { (char *)r.o.check, NULL };

		o.check_status = run_confined(&r, check, true);
		tree_stop(&r);
	}
	o.status_json = daemon_text(&r, "status", true, &err);
	o.changes = daemon_text(&r, "changes", false, &err);
	read_vetoes(&r, &o);
	rc = decide(&r, &o);
	if (!r.o.keep)
		umount_ws(&r);
	proctree_end(&r.pt);
	o.stopped = r.stopped;
	o.lw = &r.lw;
	o.seconds = now_s() - t0;
	report(&r, &o);
	free(o.status_json);
	free(o.changes);
	free(o.message);
	cli_vetoes_free(&o.vetoes);
	sup_lists_free(&r.sup);
	policy_allow_write_free(r.pol_allow, r.npol_allow);
	if (rc)
		return 1;
	if (o.cmd_status != 0)
		return o.cmd_status;
	return o.check_status > 0 ? o.check_status : 0;
}
