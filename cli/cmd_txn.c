/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_txn.c - the transaction commands: status, diff, commit, rollback,
 * savepoint, release, log, recover, policy reload.
 *
 * They reach the daemon through its control socket STATE/ctl.sock (see
 * fs/session/sock.c), not through the mount, so they keep working when the policy
 * denies the .txfs/ctl verbs to the agent. The state folder of a mount is
 * found in MNT/.txfs/status.json (--ctl-name NAME if it was renamed).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <jansson.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "mountinfo.h"
#include "policy.h"
#include "../fs/mount.h"

/* --- talking to the daemon ------------------------------------------ */

/* MNT/<ctl>/state: the state folder on one line (cheap: a fixed text),
 * C-quoted when it holds a newline or other odd bytes (audit_cquote).
 * -ENOENT from a daemon older than that file. */
static int state_file(const char *mnt, const char *ctl, char *out,
		      size_t size)
{
	char path[PATH_MAX], line[PATH_MAX * 4 + 4], *name = NULL;
	const char *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s/state", mnt, ctl);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, line, sizeof(line));
	close(fd);
	if (n < 2 || (size_t)n >= sizeof(line) || line[n - 1] != '\n' ||
	    memchr(line, '\n', (size_t)n - 1) || memchr(line, '\0', (size_t)n))
		return -EIO;
	line[n - 1] = '\0';
	if (line[0] == '"' && (audit_cunquote(line, &name, &end) || *end)) {
		free(name);
		return -EIO;
	}
	if (!name && !(name = strdup(line)))
		return -ENOMEM;
	fd = name[0] != '/' ? -EIO : strlen(name) >= size ? -ENAMETOOLONG : 0;
	if (fd == 0)
		memcpy(out, name, strlen(name) + 1);
	free(name);
	return fd;
}

/* The state folder of the mount: MNT/<ctl>/state, or (older daemons)
 * "state" of MNT/<ctl>/status.json (state_hex when it is not UTF-8).
 * MNT must be a txfs mount of ours at that path (mountinfo): a folder that
 * only holds a <ctl>/ of its own (a clone's, or one written to name another
 * session's state folder) names nothing: -EIO ("not txfs's"), -ENOENT
 * when it has no <ctl>/status.json either. */
int cli_find_state(const char *mnt, const char *ctl, char *out,
		      size_t size)
{
	char path[2 * PATH_MAX], real[PATH_MAX], at[PATH_MAX], *st;
	json_t *o;
	int rc;

	if (!realpath(mnt, real))
		return -errno;
	if (mountinfo_txfs_of(real, true, at, sizeof(at)) || strcmp(at, real)) {
		snprintf(path, sizeof(path), "%s/%s/status.json", real, ctl);
		return access(path, F_OK) ? -ENOENT : -EIO;
	}
	rc = state_file(mnt, ctl, out, size);

	if (rc != -ENOENT)
		return rc;
	snprintf(path, sizeof(path), "%s/%s/status.json", mnt, ctl);
	o = json_load_file(path, JSON_DISABLE_EOF_CHECK, NULL);
	if (!o)
		return access(path, R_OK) ? -errno : -EIO;
	st = audit_json_bytes(o, "state", -1);
	json_decref(o);
	rc = !st || st[0] != '/' ? -EIO : strlen(st) >= size ? -ENAMETOOLONG : 0;
	if (rc == 0)
		memcpy(out, st, strlen(st) + 1);
	free(st);
	return rc;
}

/* The nearest fuse.txfs mount that holds PATH (mountinfo.h). */
int cli_mount_of(const char *path, char *mnt, size_t size)
{
	return mountinfo_txfs_of(path, false, mnt, size);
}

void cli_err_find_state(int rc, const char *prefix, const char *mnt,
			const char *ctl)
{
	if (rc == -ENOENT || rc == -ENOTDIR)
		cli_err(0, "%s%s: not a txfs mount (no %s/status.json)", prefix,
			mnt, ctl);
	else if (rc == -EIO)
		cli_err(0, "%s%s: not a txfs mount (%s/status.json or %s/state "
			"is not txfs's: no state folder in it)", prefix, mnt,
			ctl, ctl);
	else if (rc == -ENAMETOOLONG)
		cli_err(0, "%s%s: the state folder named in %s/state is too "
			"long a path", prefix, mnt, ctl);
	else
		cli_err(rc, "%s%s: cannot read %s/status.json", prefix, mnt,
			ctl);
}

/* Is the server on fd our own daemon: same uid as us, or root? A socket
 * swapped in by another user is refused before anything is believed
 * (SO_PEERCRED gives the uid that called listen()). */
static int check_server(int fd, const char *state)
{
	struct ucred cr;
	socklen_t len = sizeof(cr);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &len))
		return -errno;
	if (cr.uid == geteuid() || cr.uid == 0)
		return 0;
	cli_err(0, "%s/ctl.sock: refused: it is served by uid %u (pid %d), "
		"not by you (uid %u) or root; its answers would not be the "
		"daemon's", state, (unsigned)cr.uid, (int)cr.pid,
		(unsigned)geteuid());
	return -EPERM;
}

/* The request as one buffer: each argument with its NUL, then an empty
 * string; sent with one send(2), so the daemon reads it in one wakeup. */
static int send_request(int fd, int argc, char **argv)
{
	size_t len = 1, off = 0;
	char *req;
	ssize_t w;
	int err;

	for (int i = 0; i < argc; i++)
		len += strlen(argv[i]) + 1;
	req = malloc(len);
	if (!req)
		return -ENOMEM;
	for (int i = 0; i < argc; i++) {
		size_t l = strlen(argv[i]) + 1;

		memcpy(req + off, argv[i], l);
		off += l;
	}
	req[off] = '\0';
	/* MSG_NOSIGNAL: a daemon that refuses closes early; its answer is
	 * still there to read */
	for (off = 0; off < len; off += (size_t)w) {
		w = send(fd, req + off, len - off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			w = 0;
		else if (w < 0)
			break;
	}
	err = off < len ? errno : 0;
	free(req);
	return err && err != EPIPE ? -err : 0;
}

/* Send argv to the daemon of state; *err gets its errno, *out its text. */
int cli_request(const char *state, int argc, char **argv, int *err,
		   char **out, size_t *outlen)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	int dfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd = -1;
	char *buf = NULL;
	size_t len = 0, cap = 0;
	ssize_t n;
	int rc = 0;

	if (dfd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/ctl.sock",
		 dfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		rc = -errno;
		goto out;
	}
	if ((rc = check_server(fd, state)))
		goto out;
	if ((rc = send_request(fd, argc, argv)))
		goto out;
	for (;;) {
		if (len + 65536 > cap) {
			char *b = realloc(buf, cap = cap * 2 + 65536);

			if (!b) {
				rc = -ENOMEM;
				goto out;
			}
			buf = b;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;	/* the answer comes (txfs exec: SIGTERM
					 * during cmd-begin left it begun) */
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	buf = buf ? buf : calloc(1, 1);
	if (!buf || !memchr(buf, '\n', len)) {
		rc = -EPROTO;
		goto out;
	}
	buf[len] = '\0';
	*err = atoi(buf);
	n = strchr(buf, '\n') - buf + 1;
	memmove(buf, buf + n, len - (size_t)n + 1);
	*out = buf;
	*outlen = len - (size_t)n;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

/* Find MNT's daemon and run one request; prints errors. */
static int mnt_request(const char *what, const char *mnt, const char *ctl,
		       int argc, char **argv, char **out, size_t *len)
{
	char state[PATH_MAX];
	int err = 0, rc = cli_find_state(mnt, ctl, state, sizeof(state));

	if (rc) {
		char prefix[64];

		snprintf(prefix, sizeof(prefix), "%s ", what);
		cli_err_find_state(rc, prefix, mnt, ctl);
		return -1;
	}
	rc = cli_request(state, argc, argv, &err, out, len);
	if (rc) {
		cli_err(rc, "%s %s: cannot reach the daemon at %s/ctl.sock",
			what, mnt, state);
		return -1;
	}
	return err;
}

/* --- option parsing shared by the commands -------------------------- */

/* Every command that finds its mount through the control folder takes it. */
static const char ctl_name_help[] =
	"\n  --ctl-name NAME  the control folder's name, for a mount given one\n"
	"                   (default .txfs)\n";

/* The options given that allow (their short letters: j F s n S N M)
 * leaves out: the first one's name, or NULL. */
static const char *copts_extra(const struct copts *o, const char *allow)
{
	static const struct { char c; const char *name; } names[] = {
		{ 'j', "--json" }, { 'F', "--force" }, { 's', "--stat" },
		{ 'n', "--name-status" }, { 'S', "--since" },
		{ 'N', "--command" }, { 'M', "--commands" },
	};
	bool set[] = { o->json, o->force, o->stat, o->name_status,
		       o->since != NULL, o->command != NULL, o->commands };

	for (size_t i = 0; i < sizeof(set) / sizeof(set[0]); i++)
		if (set[i] && !strchr(allow, names[i].c))
			return names[i].name;
	return NULL;
}

int copts_parse(int argc, char **argv, struct copts *o, const char *usage,
		const char *allow)
{
	const char *extra;
	static const struct option lopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "force", no_argument, NULL, 'F' },
		{ "stat", no_argument, NULL, 's' },
		{ "name-status", no_argument, NULL, 'n' },
		{ "ctl-name", required_argument, NULL, 'c' },
		{ "since", required_argument, NULL, 'S' },
		{ "command", required_argument, NULL, 'N' },
		{ "commands", no_argument, NULL, 'M' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	memset(o, 0, sizeof(*o));
	o->ctl = ".txfs";
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", lopts, NULL)) != -1) {
		switch (c) {
		case 'j': o->json = true; break;
		case 'F': o->force = true; break;
		case 's': o->stat = true; break;
		case 'n': o->name_status = true; break;
		case 'c': o->ctl = optarg; break;
		case 'S': o->since = optarg; break;
		case 'N': o->command = optarg; break;
		case 'M': o->commands = true; break;
		case 'h':
			fputs(usage, stdout);
			fputs(ctl_name_help, stdout);
			o->help = true;
			return 0;
		default:
			cli_err(0, "%s: unknown option (see --help)", argv[0]);
			return 2;
		}
	}
	o->first = optind;
	if ((extra = copts_extra(o, allow))) {
		/* `txfs rollback MNT --force` was a plain full rollback */
		cli_err(0, "%s: %s is not an option of this command (see "
			"--help); nothing was done", argv[0], extra);
		return 2;
	}
	return 0;
}

static int finish(const char *what, int err, char *out)
{
	if (err) {
		char *nl = out ? strchr(out, '\n') : NULL;

		if (nl && nl[1] == '\0')
			*nl = '\0';
		cli_err(0, "%s: %s", what, out && out[0] ? out : strerror(err));
		free(out);
		return 1;
	}
	if (out)
		fputs(out, stdout);
	free(out);
	return 0;
}

/* An empty argument (an unset variable: `txfs rollback MNT "$SP"`) would
 * end the request (send_request) and turn a rollback to a savepoint into a
 * full one, a commit of paths into a commit of everything: refused. */
static int cli_empty_arg(const char *what, int argc, char **argv)
{
	for (int i = 0; i < argc; i++)
		if (!argv[i][0]) {
			cli_err(0, "%s: argument %d is empty (an unset "
				"variable?): refused, nothing was done", what,
				i + 1);
			return 1;
		}
	return 0;
}

static int simple(int argc, char **argv, const char *usage, int min, int max,
		  bool json_ok)
{
	struct copts o;
	char *out = NULL, *req[8];
	size_t len, n = 0;
	int rc = copts_parse(argc, argv, &o, usage, json_ok ? "j" : ""), err;

	if (rc || o.help)
		return rc;
	if (argc - o.first < min || argc - o.first > max ||
	    (o.json && !json_ok)) {
		cli_err(0, "%s: wrong arguments", argv[0]);
		fputs(usage, stderr);
		return 2;
	}
	if (cli_empty_arg(argv[0], argc - o.first, argv + o.first))
		return 2;
	req[n++] = argv[0];
	if (o.json)
		req[n++] = "--json";
	for (int i = o.first + 1; i < argc; i++)
		req[n++] = argv[i];
	err = mnt_request(argv[0], argv[o.first], o.ctl, (int)n, req, &out,
			  &len);
	if (err < 0)
		return 1;
	return finish(argv[0], err, out);
}

/* --- the commands --------------------------------------------------- */

int cmd_status(int argc, char **argv)
{
	return simple(argc, argv,
		"usage: txfs status [--json] MNT\n\n"
		"What the open transaction holds: counts of added, modified,\n"
		"deleted and renamed paths, bytes staged, savepoints, vetoes.\n"
		"Paths: C-quoted when they need it (text); K plus K_hex, the\n"
		"exact bytes, when not UTF-8 (--json; see txfs(1)).\n",
		1, 1, true);
}

int cmd_rollback(int argc, char **argv)
{
	struct copts o;

	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strncmp(argv[i], "--command", 9)) {
			if (copts_parse(argc, argv, &o, "", "N") ||
			    argc - o.first != 1 || !o.command) {
				cli_err(0, "rollback: usage: txfs rollback MNT "
					"--command N");
				return 2;
			}
			return cli_rollback_command(argv[o.first], o.command);
		}
	return simple(argc, argv,
		"usage: txfs rollback MNT [SAVEPOINT | --command N]\n\n"
		"Discard every staged change (in constant time), or those made\n"
		"since SAVEPOINT, which stays open. --command N undoes `txfs\n"
		"exec` command N and every later one.\n", 1, 2, false);
}

int cmd_savepoint(int argc, char **argv)
{
	return simple(argc, argv,
		"usage: txfs savepoint MNT NAME\n\n"
		"Take a savepoint: `txfs rollback MNT NAME` returns to it.\n",
		2, 2, false);
}

int cmd_release(int argc, char **argv)
{
	return simple(argc, argv,
		"usage: txfs release MNT NAME\n\n"
		"Forget savepoint NAME (and newer ones), keeping the changes.\n",
		2, 2, false);
}

int cmd_commit(int argc, char **argv)
{
	static const char usage[] =
		"usage: txfs commit [--force] MNT [PATH...]\n\n"
		"Merge the staged changes into the real directory, crash-\n"
		"atomically. Refused (exit 1) when the real directory changed\n"
		"underneath; --force overrides. With PATHs, commits only those\n"
		"(and the folders they need) and keeps the rest staged. A real\n"
		"file changed in part is patched in place (its changed blocks\n"
		"only), not copied; see txfs-design(7), COMMIT.\n";
	struct copts o;
	char **req, *out = NULL;
	size_t len, n = 0;
	int rc = copts_parse(argc, argv, &o, usage, "F"), err;

	if (rc || o.help)
		return rc;
	if (argc - o.first < 1) {
		cli_err(0, "commit: missing MNT");
		return 2;
	}
	if (cli_empty_arg("commit", argc - o.first, argv + o.first))
		return 2;
	req = calloc((size_t)argc + 3, sizeof(*req));
	if (!req)
		return 1;
	req[n++] = "commit";
	if (o.force)
		req[n++] = "--force";
	if (o.first + 1 < argc)	/* a path named --force is a path */
		req[n++] = "--";
	for (int i = o.first + 1; i < argc; i++)
		req[n++] = argv[i];
	err = mnt_request("commit", argv[o.first], o.ctl, (int)n, req, &out,
			  &len);
	free(req);
	return err < 0 ? 1 : finish("commit", err, out);
}

static const char log_usage[] =
	"usage: txfs log [--json [--commands]] MNT\n\n"
	"The audit log: vetoes and transaction events, grouped by `txfs exec`\n"
	"command (number, argv, outcome, exit status, savepoint, changes,\n"
	"vetoes and the events while it ran). --json prints the JSON lines as\n"
	"stored; --json --commands one JSON object a command or event.\n"
	"Names are printed for a terminal: \\\\ for \\, \\n, \\t, \\xNN for\n"
	"other control bytes and bytes that are not UTF-8 (in the JSON, such a\n"
	"name is K plus its exact bytes in K_hex; see txfs(1)).\n";

/* One JSON line to "time event op path rule errno exe txid": strings as
 * their bytes quoted for a terminal (audit_quote), other values as
 * KEY=JSON. A line that is not JSON is shown quoted, not dropped. */
static void log_line(const char *l)
{
	static const char *keys[] = { "time", "event", "op", "path", "rule",
				      "errno", "exe", "txid" };
	json_t *ev = json_loads(l, 0, NULL);
	const char *sep = "";

	if (!json_is_object(ev)) {
		char *q = audit_quote(l);

		printf("(not JSON) %s\n", q ? q : "?");
		free(q);
		json_decref(ev);
		return;
	}
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
		json_t *v = json_object_get(ev, keys[k]);
		char *s = NULL, *q = NULL;

		if (!v)
			continue;
		if (json_is_string(v) &&
		    (s = audit_json_bytes(ev, keys[k], -1)))
			q = audit_quote(s);
		else if (!json_is_string(v))
			s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		if (json_is_string(v))
			printf("%s%s", sep, q ? q : "?");
		else
			printf("%s%s=%s", sep, keys[k], s ? s : "?");
		sep = " ";
		free(q);
		free(s);
	}
	putchar('\n');
	json_decref(ev);
}

int cmd_log(int argc, char **argv)
{
	struct copts o;
	char *out = NULL, *req[1] = { "log" };
	size_t len;
	int rc = copts_parse(argc, argv, &o, log_usage, "jM"), err;

	if (rc || o.help)
		return rc;
	if (argc - o.first != 1) {
		cli_err(0, "log: wrong arguments");
		return 2;
	}
	err = mnt_request("log", argv[o.first], o.ctl, 1, req, &out, &len);
	if (err < 0)
		return 1;
	if (err || (o.json && !o.commands))
		return finish("log", err, out);
	if (o.commands || strstr(out, "\"event\":\"cmd-")) {
		rc = cli_log_grouped(out, o.json);
		free(out);
		return rc;
	}
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"))
		log_line(l);
	free(out);
	return 0;
}

int cmd_recover(int argc, char **argv)
{
	char msg[8192] = "";	/* with up to 10 lines of steps not applied */
	int rc;

	if (argc == 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
		fputs("usage: txfs recover STATE\n\nFinish (past its commit "
		      "point) or discard (before it) a commit that a crash\n"
		      "interrupted, without mounting. Mounting does the same.\n",
		      stdout);
		return 0;
	}
	if (argc != 2) {
		cli_err(0, "recover: usage: txfs recover STATE");
		return 2;
	}
	rc = txfs_recover_state(argv[1], msg, sizeof(msg));
	if (rc) {
		cli_err(0, "recover %s: %s", argv[1], msg);
		return 1;
	}
	printf("%s\n", msg);
	return 0;
}

int cmd_policy_reload(int argc, char **argv)
{
	char *out = NULL, *req[1] = { "policy-reload" };
	size_t len;
	int err;

	if (argc != 2) {
		cli_err(0, "policy reload: usage: txfs policy reload MNT");
		return 2;
	}
	err = mnt_request("policy reload", argv[1], ".txfs", 1, req, &out,
			  &len);
	return err < 0 ? 1 : finish("policy reload", err, out);
}
