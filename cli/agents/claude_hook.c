/* SPDX-License-Identifier: Apache-2.0 */
/*
 * txfs-claude-hook - Claude Code hooks that make every tool call a nested
 * transaction of the txfs session mounted over the project
 * (share/txfs/agents/claude-settings.json wires them):
 *
 *   PreToolUse          take savepoint tool-ID (waits while another tool
 *                       call of the session holds one: calls are
 *                       serialized, since savepoints nest and rolling one
 *                       back would discard a later call's changes too)
 *   PostToolUse,        roll the call back to tool-ID when it failed or the
 *   PostToolUseFailure  policy vetoed something during it (exit 2, the
 *                       reason on stderr, which Claude Code shows to the
 *                       model), else release tool-ID (changes stay staged)
 *   PermissionDenied    Claude Code refused the call after PreToolUse: roll
 *                       back to tool-ID and release it (no orphan). Its
 *                       permission rules deny without that event: the next
 *                       PreToolUse of the session then finds the call's
 *                       tool_result in the transcript and does the same
 *   Stop                print `txfs status`, and how to undo a commit
 *
 * The event's JSON comes on stdin; its hook_event_name decides (the
 * argument pre|post|denied|stop is only checked against it). The mount is
 * the nearest fuse.txfs mount of the caller's uid holding "cwd", from the
 * kernel's /proc/self/mountinfo; the daemon is the one whose state folder
 * the mount's own control folder names (MNT/.txfs/state, a file of the
 * mount itself), reached at STATE/ctl.sock and believed only when the
 * socket's peer runs as us or root. Nothing is read from files an agent
 * can write. Fails closed: a tool call outside any txfs mount, or whose
 * savepoint cannot be taken, is blocked (exit 2), unless
 * TXFS_HOOK_OUTSIDE=allow lets calls outside a mount run unhooked.
 *
 * The open call is kept in $XDG_RUNTIME_DIR (or $TMPDIR, /tmp)
 * /txfs-claude-hooks-UID/HASH.open (HASH: of the state folder), under
 * flock(2) of HASH.lock; a call left open by a Claude Code process that
 * is gone (the nearest ancestor named claude*) is rolled back. TXFS_HOOK_WAIT: seconds PreToolUse waits (default 590).
 * One pre + post costs about 2 ms of CPU: no interpreter, no txfs command.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>

#include "../mountinfo.h"
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CTL ".txfs"

static void say(const char *fmt, ...)
{
	va_list ap;

	fputs("txfs: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* --- the mount, from the kernel -------------------------------------- */

/* The nearest fuse.txfs mount of our uid holding PATH (resolved). */
static int mount_of(const char *path, char *mnt, size_t size)
{
	return mountinfo_txfs_of(path, true, mnt, size);
}

/* MNT/.txfs/state: a regular file of the mount itself (same device as
 * MNT: the daemon's control folder, not a symlink out of it), one line,
 * the state folder. */
static int state_of(const char *mnt, char *state, size_t size)
{
	char path[PATH_MAX + 16];
	struct stat m, s;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/" CTL, mnt);
	if (stat(mnt, &m) || lstat(path, &s))
		return -errno;
	if (!S_ISDIR(s.st_mode) || s.st_dev != m.st_dev)
		return -EPERM;
	snprintf(path, sizeof(path), "%s/" CTL "/state", mnt);
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &s) || !S_ISREG(s.st_mode) || s.st_dev != m.st_dev) {
		close(fd);
		return -EPERM;
	}
	n = read(fd, state, size - 1);
	close(fd);
	if (n < 2 || state[0] != '/' || state[n - 1] != '\n' ||
	    memchr(state, '\n', (size_t)n - 1) || memchr(state, '\0', (size_t)n))
		return -EIO;	/* a quoted (odd) name: not handled here */
	state[n - 1] = '\0';
	return 0;
}

/* --- the daemon ------------------------------------------------------ */

/* One request (ARGS, NULL-terminated) to STATE/ctl.sock; *out: the
 * answer's text (malloc'd). Returns the daemon's errno (>= 0), or < 0
 * when it could not be asked. */
static int ask(const char *state, char **out, const char *arg0, ...)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	char req[PATH_MAX * 2], *buf = NULL;
	size_t len = 0, cap = 0, rl = 0;
	struct ucred cr;
	socklen_t crl = sizeof(cr);
	const char *s;
	int dfd, fd = -1, rc;
	va_list ap;

	*out = NULL;
	va_start(ap, arg0);
	for (s = arg0; s; s = va_arg(ap, const char *)) {
		size_t l = strlen(s) + 1;

		if (rl + l + 1 > sizeof(req)) {
			va_end(ap);
			return -E2BIG;
		}
		memcpy(req + rl, s, l);
		rl += l;
	}
	va_end(ap);
	req[rl++] = '\0';
	dfd = open(state, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0)
		return -errno;
	snprintf(a.sun_path, sizeof(a.sun_path), "/proc/self/fd/%d/ctl.sock",
		 dfd);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof(a))) {
		rc = -errno;
		goto out;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cr, &crl)) {
		rc = -errno;
		goto out;
	}
	if (cr.uid != geteuid() && cr.uid != 0) {
		say("%s/ctl.sock: refused: served by uid %u, not by you or root",
		    state, (unsigned)cr.uid);
		rc = -EPERM;
		goto out;
	}
	if (send(fd, req, rl, MSG_NOSIGNAL) != (ssize_t)rl) {
		rc = -errno;
		goto out;
	}
	for (;;) {
		ssize_t n;

		if (len + 4096 > cap) {
			char *b = realloc(buf, cap = cap * 2 + 8192);

			if (!b) {
				rc = -ENOMEM;
				goto out;
			}
			buf = b;
		}
		n = read(fd, buf + len, cap - len - 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		len += (size_t)n;
	}
	if (!buf || !memchr(buf, '\n', len)) {
		rc = -EPROTO;
		goto out;
	}
	buf[len] = '\0';
	rc = atoi(buf);
	memmove(buf, strchr(buf, '\n') + 1, strlen(strchr(buf, '\n') + 1) + 1);
	*out = buf;
	buf = NULL;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	close(dfd);
	return rc;
}

static long vetoes(const char *state)
{
	char *out;
	long v = -1;
	json_t *o;

	if (ask(state, &out, "status", "--json", NULL) == 0 &&
	    (o = json_loads(out, JSON_DISABLE_EOF_CHECK, NULL))) {
		v = (long)json_integer_value(json_object_get(o, "vetoes"));
		json_decref(o);
	}
	free(out);
	return v;
}

/* Roll back to savepoint SP and forget it; 0 or the error said. */
static int undo(const char *state, const char *sp)
{
	char *out = NULL;
	int rc = ask(state, &out, "rollback", sp, NULL);

	if (rc) {
		say("rollback %s failed: %s", sp,
		    rc < 0 ? strerror(-rc) : out ? out : strerror(rc));
		free(out);
		return -1;
	}
	free(out);
	rc = ask(state, &out, "release", sp, NULL);
	free(out);
	return 0;
}

/* --- the open call: HASH.open under flock(HASH.lock) ----------------- */

struct open_call {
	char id[256], sp[300], session[256];
	long vetoes;
	long pid;
	unsigned long long start;
};

static unsigned long long proc_start(long pid)
{
	char path[64], buf[1024], *p;
	unsigned long long st = 0;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	p = strrchr(buf, ')');	/* then field 3 on; starttime is field 22 */
	for (int i = 0; p && i < 20; i++)
		p = strchr(p + 1, ' ');
	if (p)
		st = strtoull(p + 1, NULL, 10);
	return st;
}

/* The Claude Code process running this hook: the nearest ancestor whose
 * name begins with "claude"; 0 when there is none (then an open call is
 * never taken for abandoned). */
static long claude_pid(void)
{
	long pid = (long)getppid();

	for (int depth = 0; pid > 1 && depth < 8; depth++) {
		char path[64], buf[1024], *p;
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return 0;
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			return 0;
		buf[n] = '\0';
		p = strrchr(buf, ')');
		if (!strncmp(strchr(buf, '(') ? strchr(buf, '(') + 1 : "",
			     "claude", 6))
			return pid;
		if (!p || sscanf(p + 2, "%*c %ld", &pid) != 1)
			return 0;
	}
	return 0;
}

static int private_dir(char *d, size_t size)
{
	const char *base = getenv("XDG_RUNTIME_DIR");
	struct stat s;

	if (!base || !*base)
		base = getenv("TMPDIR");
	if (!base || !*base)
		base = "/tmp";
	snprintf(d, size, "%s/txfs-claude-hooks-%u", base, (unsigned)geteuid());
	if (mkdir(d, 0700) && errno != EEXIST)
		return -errno;
	if (lstat(d, &s))
		return -errno;
	if (!S_ISDIR(s.st_mode) || s.st_uid != geteuid() ||
	    (s.st_mode & 077)) {
		say("hook: %s is not a private folder of this user; refusing",
		    d);
		return -EPERM;
	}
	return 0;
}

static int lock_state(const char *state, char *openf, size_t size)
{
	char d[PATH_MAX], lockf[PATH_MAX + 64];
	uint64_t h = 1469598103934665603ull;
	int fd, rc;

	if ((rc = private_dir(d, sizeof(d))))
		return rc;
	for (const char *p = state; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	snprintf(lockf, sizeof(lockf), "%s/%016llx.lock", d,
		 (unsigned long long)h);
	snprintf(openf, size, "%s/%016llx.open", d, (unsigned long long)h);
	fd = open(lockf, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 || flock(fd, LOCK_EX)) {
		rc = -errno;
		if (fd >= 0)
			close(fd);
		return rc;
	}
	return fd;
}

static bool read_open(const char *openf, struct open_call *c)
{
	FILE *f = fopen(openf, "re");
	bool ok;

	if (!f)
		return false;
	memset(c, 0, sizeof(*c));
	ok = fscanf(f, "%255s %299s %ld %ld %llu %255s", c->id, c->sp,
		    &c->vetoes, &c->pid, &c->start, c->session) == 6;
	fclose(f);
	return ok;
}

static int write_open(const char *openf, const struct open_call *c)
{
	char tmp[PATH_MAX + 80];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", openf);
	f = fopen(tmp, "we");
	if (!f)
		return -errno;
	fprintf(f, "%s %s %ld %ld %llu %s\n", c->id, c->sp, c->vetoes, c->pid,
		c->start, c->session);
	if (fclose(f) || rename(tmp, openf))
		return -errno;
	return 0;
}

/* --- the events ------------------------------------------------------ */

static void safe_id(const char *s, char *out, size_t size)
{
	size_t i = 0;

	for (; s && *s && i + 1 < size && i < 80; s++)
		out[i++] = (isalnum((unsigned char)*s) || strchr("_.-", *s)) ?
				   *s : '_';
	out[i] = '\0';
	if (!i)
		snprintf(out, size, "call");
}

static const char *failed(const char *event, json_t *r, char *buf,
			  size_t size)
{
	static const char *codes[] = { "exit_code", "exitCode", "returncode" };

	if (!strcmp(event, "PostToolUseFailure"))
		return "the tool call failed";
	if (!json_is_object(r))
		return NULL;
	if (json_is_false(json_object_get(r, "success")) ||
	    json_is_true(json_object_get(r, "is_error")) ||
	    json_is_true(json_object_get(r, "isError")))
		return "the tool call failed";
	if (json_is_true(json_object_get(r, "interrupted")))
		return "the tool call was interrupted";
	for (size_t i = 0; i < 3; i++) {
		json_t *v = json_object_get(r, codes[i]);

		if (json_is_integer(v) && json_integer_value(v) != 0) {
			snprintf(buf, size, "the command exited %lld",
				 (long long)json_integer_value(v));
			return buf;
		}
	}
	return NULL;
}

/* Has the session's transcript (Claude Code's JSONL, a regular file of
 * ours) the tool_result of call ID? Then that call is over: Claude Code
 * answered it without running it (its own permission check denied it
 * after PreToolUse: no PostToolUse follows, and PermissionDenied comes
 * only for the auto mode's denials). */
static bool answered(const char *transcript, const char *id)
{
	char key[300], *line = NULL;
	size_t cap = 0;
	bool found = false;
	struct stat st;
	int fd;
	FILE *f;

	if (!transcript || !*transcript)
		return false;
	fd = open(transcript, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid() || !(f = fdopen(fd, "re"))) {
		close(fd);
		return false;
	}
	snprintf(key, sizeof(key), "\"tool_use_id\":\"%s\"", id);
	while (!found && getline(&line, &cap, f) > 0)
		found = strstr(line, key) && strstr(line, "\"tool_result\"");
	free(line);
	fclose(f);
	return found;
}

static int pre(const char *state, const char *id, const char *tool,
	       const char *session, const char *transcript)
{
	char openf[PATH_MAX + 64], *out = NULL;
	const char *w = getenv("TXFS_HOOK_WAIT");
	time_t deadline = time(NULL) + (w && *w ? atol(w) : 590);
	struct open_call c, o;
	int lk, rc;

	memset(&c, 0, sizeof(c));
	safe_id(id, c.id, sizeof(c.id));
	safe_id(session, c.session, sizeof(c.session));
	snprintf(c.sp, sizeof(c.sp), "tool-%s", c.id);
	c.pid = claude_pid();
	c.start = c.pid ? proc_start(c.pid) : 0;
	for (;;) {
		if ((lk = lock_state(state, openf, sizeof(openf))) < 0) {
			say("hook: lock for %s: %s", state, strerror(-lk));
			return 2;
		}
		if (!read_open(openf, &o) || !strcmp(o.id, c.id))
			break;
		if (!strcmp(o.session, c.session) &&
		    answered(transcript, o.id)) {
			/* denied by Claude Code after its PreToolUse */
			undo(state, o.sp);
			unlink(openf);
			break;
		}
		if (o.pid && proc_start(o.pid) != o.start) {
			/* its Claude Code is gone: roll its call back */
			say("hook: rolling back %s, left open by a Claude Code "
			    "that is gone", o.sp);
			undo(state, o.sp);
			unlink(openf);
			break;
		}
		close(lk);
		if (time(NULL) >= deadline) {
			say("%s call blocked: tool call %s still holds savepoint "
			    "%s (txfs runs one tool call at a time; if none runs, "
			    "`txfs rollback MNT %s` and remove %s)", tool, o.id,
			    o.sp, o.sp, openf);
			return 2;
		}
		usleep(20000);
	}
	rc = ask(state, &out, "savepoint", c.sp, NULL);
	if (rc) {
		say("%s call blocked: savepoint %s: %s", tool, c.sp,
		    rc < 0 ? strerror(-rc) : out && *out ? out : strerror(rc));
		free(out);
		close(lk);
		return 2;
	}
	free(out);
	c.vetoes = vetoes(state);
	if ((rc = write_open(openf, &c))) {
		say("hook: %s: %s", openf, strerror(-rc));
		undo(state, c.sp);
		close(lk);
		return 2;
	}
	close(lk);
	return 0;
}

static int post(const char *state, const char *event, const char *id,
		const char *tool, json_t *resp)
{
	char openf[PATH_MAX + 64], sid[256], buf[64], why2[96], *out = NULL;
	const char *why;
	struct open_call o;
	long now;
	int lk, rc = 0;

	safe_id(id, sid, sizeof(sid));
	if ((lk = lock_state(state, openf, sizeof(openf))) < 0) {
		say("hook: lock for %s: %s", state, strerror(-lk));
		return 1;
	}
	if (!read_open(openf, &o) || strcmp(o.id, sid)) {
		close(lk);
		return 0;	/* no savepoint of ours for this call */
	}
	if (!strcmp(event, "PermissionDenied")) {
		rc = undo(state, o.sp) ? 1 : 0;
		unlink(openf);
		close(lk);
		return rc;
	}
	why = failed(event, resp, buf, sizeof(buf));
	now = vetoes(state);
	if (!why && now > o.vetoes) {
		snprintf(why2, sizeof(why2),
			 "the policy vetoed %ld operation(s) of it",
			 now - o.vetoes);
		why = why2;
	}
	if (why) {
		if (undo(state, o.sp))
			rc = 1;
		else {
			say("rolled back this %s call (%s): its changes to the "
			    "workspace were discarded", tool, why);
			rc = 2;
		}
	} else {
		ask(state, &out, "release", o.sp, NULL);
		free(out);
	}
	unlink(openf);
	close(lk);
	return rc;
}

/* Is the file a tool writes (Write, Edit, MultiEdit: file_path;
 * NotebookEdit: notebook_path) inside the mount? Relative paths are the
 * cwd's. A path that does not exist yet is judged by its folder. */
static bool path_inside(json_t *in, const char *cwd, const char *mnt)
{
	const char *f = json_string_value(json_object_get(in, "file_path"));
	char abs[PATH_MAX * 2], real[PATH_MAX], *slash;
	size_t n = strlen(mnt);

	if (!f)
		f = json_string_value(json_object_get(in, "notebook_path"));
	if (!f)
		return true;	/* no file named (Bash: its cwd is checked) */
	snprintf(abs, sizeof(abs), "%s%s%s", f[0] == '/' ? "" : cwd,
		 f[0] == '/' ? "" : "/", f);
	while (!realpath(abs, real)) {	/* the nearest existing folder */
		if (!(slash = strrchr(abs, '/')) || slash == abs)
			return false;
		*slash = 0;
	}
	return !strncmp(real, mnt, n) && (real[n] == '/' || real[n] == 0);
}

int main(int argc, char **argv)
{
	static const char *args[][2] = {
		{ "pre", "PreToolUse" },	{ "post", "PostToolUse" },
		{ "post", "PostToolUseFailure" }, { "denied", "PermissionDenied" },
		{ "stop", "Stop" },
	};
	char cwd[PATH_MAX], mnt[PATH_MAX], state[PATH_MAX], *out = NULL;
	const char *event, *id, *tool, *c, *o;
	json_error_t jerr;
	json_t *ev;
	size_t i;
	int rc;

	if (argc > 2) {
		fputs("usage: txfs-claude-hook [pre|post|denied|stop]  (the "
		      "hook event's JSON on stdin)\n", stderr);
		return 1;
	}
	ev = json_loadf(stdin, JSON_DISABLE_EOF_CHECK, &jerr);
	if (!json_is_object(ev)) {	/* fail closed: 2 blocks the call */
		say("hook: bad hook input: %s", jerr.text);
		return 2;
	}
	event = json_string_value(json_object_get(ev, "hook_event_name"));
	id = json_string_value(json_object_get(ev, "tool_use_id"));
	tool = json_string_value(json_object_get(ev, "tool_name"));
	c = json_string_value(json_object_get(ev, "cwd"));
	tool = tool ? tool : "tool";
	for (i = 0; event && i < sizeof(args) / sizeof(args[0]); i++)
		if (!strcmp(event, args[i][1]) &&
		    (argc < 2 || !strcmp(argv[1], args[i][0])))
			break;
	if (!event || i == sizeof(args) / sizeof(args[0])) {
		say("hook: event %s is not one for `txfs-claude-hook %s`",
		    event ? event : "(none)", argc > 1 ? argv[1] : "");
		rc = 1;
		goto out;
	}
	if (!realpath(c && *c ? c : ".", cwd) ||
	    mount_of(cwd, mnt, sizeof(mnt))) {
		o = getenv("TXFS_HOOK_OUTSIDE");
		if (strcmp(args[i][0], "pre") || (o && !strcmp(o, "allow"))) {
			rc = 0;
			goto out;
		}
		say("%s call blocked: %s is not inside a txfs mount of yours "
		    "(set TXFS_HOOK_OUTSIDE=allow to let such calls run "
		    "unprotected)", tool, c ? c : "the current folder");
		rc = 2;
		goto out;
	}
	if ((rc = state_of(mnt, state, sizeof(state)))) {
		say("%s: no control folder %s/" CTL "/state of the daemon: %s",
		    mnt, mnt, strerror(-rc));
		rc = strcmp(args[i][0], "pre") ? 1 : 2;
		goto out;
	}
	if (!strcmp(args[i][0], "pre") &&
	    !path_inside(json_object_get(ev, "tool_input"), cwd, mnt)) {
		say("%s call blocked: its file is outside the txfs mount %s, "
		    "where its change could not be rolled back", tool, mnt);
		rc = 2;
		goto out;
	}
	if (!strcmp(args[i][0], "pre"))
		rc = pre(state, id, tool,
			 json_string_value(json_object_get(ev, "session_id")),
			 json_string_value(json_object_get(ev, "transcript_path")));
	else if (!strcmp(args[i][0], "stop")) {
		rc = ask(state, &out, "status", NULL);
		printf("txfs: the session's staged changes (review with `txfs "
		       "diff %s`, then `txfs commit %s`):\n%s"
		       "txfs: a commit can be taken back: `txfs history %s` lists "
		       "them, `txfs undo %s` undoes the newest\n", mnt, mnt,
		       out ? out : "(the daemon did not answer)\n", mnt, mnt);
		free(out);
		rc = 0;
	} else
		rc = post(state, event, id, tool,
			  json_object_get(ev, "tool_response"));
out:
	json_decref(ev);
	return rc;
}
