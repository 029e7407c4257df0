/* SPDX-License-Identifier: Apache-2.0 */
/*
 * guard.c - the policy at the VFS level: every operation is checked here
 * before anything changes, and every veto is written to the audit log.
 *
 * The policy in force is an immutable struct policy behind an atomic
 * pointer; a reload swaps the pointer and keeps the old policy until
 * unmount (a request may still be reading it; reloads are rare).
 * Paths given to the policy are merged-view paths relative to the root,
 * rebuilt from the inode table (itab_path), never from the lower paths.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "view.h"

#define AUDIT_MAX (8u << 20)
/* Vetoes logged one by one between two transaction verbs (or txfs exec
 * commands): at most VETO_LOG_MAX of them and VETO_LOG_BYTES of records
 * (a record is ~650 bytes, more with a long path: 4 KiB paths would fill
 * the log with 2,000), half of AUDIT_MAX, so that one window causes at
 * most one rotation and what came before it stays in audit.log.1. */
#define VETO_LOG_MAX 10000u
#define VETO_LOG_BYTES (AUDIT_MAX / 2)

/* What an agent is told when `limit deletes` refuses a loss. */
#define GUARD_HINT "only losses of real data (removing, truncating, " \
	"overwriting or replacing what exists outside this transaction) " \
	"are refused now; " \
	"creating, writing and removing what this transaction made still " \
	"work. Commit what is wanted (echo commit > .txfs/ctl) and go on, " \
	"or roll back (echo rollback > .txfs/ctl); either starts a new count"
/* ... and where .txfs/ctl takes no verb (txfs run: its command never
 * commits) */
#define GUARD_HINT_RUN "only losses of real data (removing, truncating, " \
	"overwriting or replacing what exists outside this transaction) " \
	"are refused now; creating, writing and removing what this " \
	"transaction made still work. The command cannot commit: txfs run " \
	"commits when it exits 0 and rolls back otherwise"

static const char *guard_hint(const struct txfs *fs)
{
	return fs->opts.no_ctl_verbs ? GUARD_HINT_RUN : GUARD_HINT;
}

static int report(int *fd, const char *msg)
{
	if (*fd >= 0) {
		ssize_t n = write(*fd, msg, strlen(msg));

		(void)n;
		close(*fd);
		*fd = -1;
	} else {
		fprintf(stderr, "txfs: %s\n", msg);
	}
	return -EINVAL;
}

int txfs_load_policy(struct txfs *fs, int *report_fd)
{
	struct policy *p = NULL;
	char *err = NULL, msg[4096];
	int rc;

	if (fs->opts.policy)
		rc = policy_load_file(fs->opts.policy, &p, &err);
	else
		rc = policy_load_default(&p);
	if (rc) {
		snprintf(msg, sizeof(msg), "policy %s: refused, not mounted:\n%s",
			 fs->opts.policy ? fs->opts.policy : "(default)",
			 err ? err : strerror(-rc));
		free(err);
		return report(report_fd, msg);
	}
	/* Neither -o open nor -o noopen: no-open, the faster mode, unless
	 * the policy needs the opens (bench/results/2026-11-27-speed-5.md) */
	if (!fs->opts.open_set)
		fs->opts.noopen = !openmode_auto_why(p);
	if (fs->opts.noopen && openmode_noopen_why(p)) {
		snprintf(msg, sizeof(msg), "policy %s: refused, not mounted: "
			 "%s", fs->opts.policy ? fs->opts.policy : "(default)",
			 openmode_noopen_why(p));
		policy_free(p);
		return report(report_fd, msg);
	}
	atomic_store(&fs->policy, p);
	fs->has_hide = policy_hides_below(p, "", 0);
	rc = audit_open(fs->statefd, "audit.log", AUDIT_MAX, &fs->audit);
	if (rc) {
		snprintf(msg, sizeof(msg), "audit log in %s: %s",
			 fs->state_path, strerror(-rc));
		return report(report_fd, msg);
	}
	guard_ignored_refresh(fs, false);
	return 0;
}

/*
 * `limit deletes N except-ignored`: ask git (lower/ignored.c) what it
 * ignores in the real directory, and keep that until the next refresh.
 * At mount (mounted false: the FUSE mount does not exist yet), after a
 * reload and after each commit. Once mounted over the real directory
 * itself (in place) or inside it, its path leads into the mount, where
 * git would read the transaction's own .gitignore files and index: the
 * set read at mount is kept then. Without the option in the policy,
 * nothing is kept.
 */
void guard_ignored_refresh(struct txfs *fs, bool mounted)
{
	const struct policy *p = atomic_load(&fs->policy);
	struct lower_ignored *ig = NULL, *old;
	char fields[64];
	int rc;

	if (policy_delete_uncounted_ignored(p)) {
		size_t l = fs->ws_path ? strlen(fs->ws_path) : 0;

		/* mounted in place, or inside the real directory: git
		 * would read the mount */
		if (mounted && (!fs->mnt_path || !fs->ws_path ||
				(!strncmp(fs->mnt_path, fs->ws_path, l) &&
				 (fs->mnt_path[l] == '/' ||
				  !fs->mnt_path[l]))))
			return;
		if ((rc = lower_ignored_load(fs->ws_path, &ig))) {
			fprintf(stderr, "txfs: what git ignores in %s: %s; "
				"every loss counts\n", fs->ws_path,
				strerror(-rc));
			ig = NULL;
		}
	}
	pthread_mutex_lock(&fs->ign_lock);
	old = fs->ignored;
	fs->ignored = ig;
	pthread_mutex_unlock(&fs->ign_lock);
	lower_ignored_free(old);
	if (ig && fs->audit) {
		snprintf(fields, sizeof(fields), "\"paths\":%zu",
			 lower_ignored_count(ig));
		audit_event(fs->audit, "git-ignored", fields, NULL);
	}
}

/* Is the real object at lower (a real path) one git ignores? */
static bool ignored_loss(struct txfs *fs, const char *lower)
{
	bool yes;

	if (!lower)
		return false;
	pthread_mutex_lock(&fs->ign_lock);
	yes = lower_ignored_has(fs->ignored, lower);
	pthread_mutex_unlock(&fs->ign_lock);
	return yes;
}

/* Names in known folder d whose hidden state differs between policies. */
static void inval_hidden(struct txfs *fs, struct layer_txn *t, uint64_t d,
			 const struct policy *old, const struct policy *new)
{
	struct dir_handle dh = { 0 };
	struct tview v;
	char *dir;

	if (view_inode(fs, t, d, &v))
		return;
	dir = itab_path(fs, d, NULL);
	if (dir && S_ISDIR(v.st.st_mode) && dir_names(fs, t, &v, &dh) == 0) {
		for (size_t i = 0; i < dh.n; i++) {
			char *p = path_join(dir, dh.ents[i].name);
			size_t l = p ? strlen(p) : 0;

			if (p && (!old || !new ||
				  policy_is_hidden(old, p, l) !=
				  policy_is_hidden(new, p, l)))
				inval_entry(fs, d, dh.ents[i].name);
			free(p);
		}
		dir_free(&dh);
		inval_inode(fs, d, true);	/* its listing */
	}
	free(dir);
	tview_free(&v);
}

/*
 * After a reload, what the kernel cached under the old policy may be
 * wrong: names it may now see, or no longer. Every known node's entry,
 * and every name whose hidden state changed in a known folder, are
 * invalidated (reloads are rare; this walks only what the kernel knows).
 */
static void reload_invalidate(struct txfs *fs, const struct policy *old,
			      const struct policy *new)
{
	struct node_ref *nodes;
	struct layer_txn *t;
	size_t n;

	if (itab_snapshot(fs, &nodes, &n))
		return;
	if (layer_begin(fs->layer, false, &t) == 0) {
		for (size_t i = 0; i < n; i++) {
			if (nodes[i].name)
				inval_entry(fs, nodes[i].parent, nodes[i].name);
			inval_hidden(fs, t, nodes[i].tino, old, new);
			/* -o noopen: reads of cached pages never reach the
			 * daemon; drop them, so that the next read is
			 * checked against the new policy (only nodes the
			 * kernel may hold pages of: itab_kpages) */
			if (fs->opts.noopen &&
			    itab_may_cache(fs, nodes[i].tino))
				inval_inode(fs, nodes[i].tino, true);
		}
		layer_txn_end(t);
	}
	for (size_t i = 0; i < n; i++)
		free(nodes[i].name);
	free(nodes);
}

/*
 * Reload: parse the file again; a bad file keeps the old policy. The old
 * policy is kept (a request may still read it) until unmount.
 */
int txfs_reload_policy(struct txfs *fs, char **msg)
{
	struct policy *p = NULL, *old;
	const char *why;
	char *err = NULL;
	int rc;

	*msg = NULL;
	rc = fs->opts.policy ? policy_load_file(fs->opts.policy, &p, &err) :
			       policy_load_default(&p);
	/* a no-open mount cannot take what its mode cannot enforce */
	why = rc || !fs->opts.noopen ? NULL :
	      fs->opts.open_set ? openmode_noopen_why(p) : openmode_auto_why(p);
	if (why) {
		if (asprintf(&err, "%s; this mount runs without OPEN "
			     "requests (%s): unmount and mount again to use "
			     "such rules", why, fs->opts.open_set ?
			     "-o noopen" : "chosen at mount, when the policy "
			     "had no such rule") < 0)
			err = NULL;
		policy_free(p);
		p = NULL;
		rc = -EINVAL;
	}
	if (rc) {
		if (asprintf(msg, "policy reload refused, the old policy stays "
			     "in force:\n%s\n", err ? err : strerror(-rc)) < 0)
			*msg = NULL;
		free(err);
		return rc;
	}
	pthread_mutex_lock(&fs->ctl_lock);
	old = (struct policy *)atomic_exchange(&fs->policy, p);
	fs->has_hide = policy_hides_below(p, "", 0);
	if (old) {
		struct policy **r = realloc(fs->retired, (fs->nretired + 1) *
						     sizeof(*r));

		if (r) {
			fs->retired = r;
			fs->retired[fs->nretired++] = old;
		}
	}
	pthread_mutex_unlock(&fs->ctl_lock);
	pthread_rwlock_rdlock(&fs->txlock);
	reload_invalidate(fs, old, p);
	pthread_rwlock_unlock(&fs->txlock);
	inval_flush(fs);	/* with no lock held (see inval.c) */
	guard_ignored_refresh(fs, true);
	if (fs->audit)
		audit_event(fs->audit, "policy-reload", NULL, NULL);
	if (asprintf(msg, "policy reloaded from %s\n",
		     fs->opts.policy ? fs->opts.policy : "(default)") < 0)
		*msg = NULL;
	return 0;
}

void txfs_free_policy(struct txfs *fs)
{
	for (size_t i = 0; i < fs->nretired; i++)
		policy_free(fs->retired[i]);
	free(fs->retired);
	fs->retired = NULL;
	fs->nretired = 0;
	policy_free((struct policy *)atomic_load(&fs->policy));
	atomic_store(&fs->policy, NULL);
	audit_close(fs->audit);
	fs->audit = NULL;
	lower_ignored_free(fs->ignored);
	fs->ignored = NULL;
}

/* A veto record's size at most: ~650 bytes of members (rule, exe,
 * times), and the path as audit.c escapes it (a control, quote or
 * non-ASCII byte: 6, \\u00XX). */
static uint64_t veto_size(const char *path)
{
	uint64_t n = 640;

	for (const unsigned char *p = (const void *)(path ? path : ""); *p; p++)
		n += *p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\' ? 1 : 6;
	return n;
}

static void veto(struct txfs *fs, enum policy_op op, const char *path,
		 const struct policy_verdict *v, const struct req_ctx *c)
{
	struct audit_caller who = { .pid = c ? c->pid : 0,
				    .uid = c ? c->uid : 0 };

	uint64_t sz = veto_size(path);
	uint64_t n = atomic_fetch_add(&fs->vetoes_window, 1);
	uint64_t b = atomic_fetch_add(&fs->vetoes_window_bytes, sz);
	char fields[96];

	atomic_fetch_add(&fs->vetoes, 1);
	if (!fs->audit)
		return;
	if (n < VETO_LOG_MAX && b + sz <= VETO_LOG_BYTES) {
		audit_veto(fs->audit, policy_op_name(op), path, v, EACCES,
			   &who);
		return;
	}
	/* a flood: one record per VETO_LOG_MAX not logged, counted, so that
	 * the log's rotation keeps what came before it */
	if (atomic_fetch_add(&fs->vetoes_unlogged, 1) % VETO_LOG_MAX == 0) {
		snprintf(fields, sizeof(fields), "\"not_logged_from\":%llu,"
			 "\"every\":%u", (unsigned long long)n + 1,
			 VETO_LOG_MAX);
		audit_event(fs->audit, "veto-flood", fields, &who);
	}
}

/* The caller of a request, for struct policy_caller. */
struct who_arg {
	const struct txfs *fs;
	const struct req_ctx *c;
};

/*
 * The executable of the process that made the request, for rules with a
 * caller condition: read from /proc/PID/exe by the daemon at the time of
 * the check, never from anything the caller says, and not cached (a pid
 * may be reused). The pid is the requesting thread's, blocked in the
 * syscall while the check runs. Unreadable (the process is gone, not
 * dumpable, pid 0): the caller matches no program.
 */
static int caller_exe(void *arg, char *buf, size_t size)
{
	const struct req_ctx *c = ((const struct who_arg *)arg)->c;
	char proc[64];
	ssize_t n;

	if (!c || c->pid <= 0 || size < 2)
		return -ESRCH;
	snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)c->pid);
	n = readlink(proc, buf, size - 1);
	if (n < 0)
		return -errno;
	if ((size_t)n >= size - 1)
		return -ENAMETOOLONG;
	buf[n] = '\0';
	return 0;
}

/* The caller's working folder relative to the mount (see struct
 * policy_caller), read like its executable. */
static int caller_cwd(void *arg, char *buf, size_t size)
{
	const struct who_arg *w = arg;
	const char *mnt = w->fs->mnt_path;
	char proc[64], cwd[4096];
	size_t m = mnt ? strlen(mnt) : 0, n;
	ssize_t r;

	if (!w->c || w->c->pid <= 0 || !mnt)
		return -ESRCH;
	snprintf(proc, sizeof(proc), "/proc/%d/cwd", (int)w->c->pid);
	r = readlink(proc, cwd, sizeof(cwd) - 1);
	if (r < 0)
		return -errno;
	n = (size_t)r;
	cwd[n] = '\0';
	if (n >= m && !memcmp(cwd, mnt, m) && (n == m || cwd[m] == '/')) {
		snprintf(buf, size, "%s", n == m ? "" : cwd + m + 1);
		return 0;
	}
	if (n < m && !memcmp(cwd, mnt, n) && (n == 1 || mnt[n] == '/'))
		return 1;	/* above the mount point */
	return -ENOENT;
}

/* An object whose merged path is unknown: refuse, never guess, and say so
 * in the log (a refusal nobody can trace is a mystery to the agent). */
static int path_unknown(struct txfs *fs, enum policy_op op,
			const struct req_ctx *c)
{
	struct policy_verdict v = { 0 };

	veto(fs, op, "(unknown path)", &v, c);
	return -EACCES;
}

int guard_path(struct txfs *fs, enum policy_op op, const char *path,
	       const struct req_ctx *c)
{
	const struct policy *p = atomic_load(&fs->policy);
	struct who_arg w = { .fs = fs, .c = c };
	struct policy_caller who = { .exe = caller_exe, .cwd = caller_cwd,
				     .arg = &w };
	struct policy_verdict v;
	int rc;

	if (!p)
		return 0;
	if (!path)	/* errno from itab_path: too long, or unknown */
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : path_unknown(fs,
								    op, c);
	rc = policy_check_by(p, op, path, strlen(path), &who, &v);
	if (rc)
		veto(fs, op, path, &v, c);
	return rc;
}

/*
 * A real file with more links than names known here (linked before the
 * mount, or names the inode table forgot): one of the others may be
 * protected, and finding it means searching the whole real directory.
 * Where the policy could refuse op on some path, op is refused (logged
 * with the name used); without such a rule nothing is asked. known: how
 * many distinct names were judged.
 */
static int unknown_links(struct txfs *fs, const struct policy *p,
			 enum policy_op op, uint64_t tino, const char *path,
			 int known, const struct req_ctx *c)
{
	struct policy_verdict v = { 0 };
	char *lower, why[64];
	struct stat st;
	int rc;

	/* reads are not judged so (txfs.policy(5)): every multi-link file
	 * would turn unreadable under any deny read, git's objects too */
	if (op == POLICY_OP_READ || !policy_check_tree(p, op, "", 0, &v))
		return 0;
	lower = itab_lower_path(fs, tino);
	if (!lower)
		return 0;	/* made in the layer: its names are all known */
	rc = lower_stat(fs, lower, &st);
	free(lower);
	if (rc || !S_ISREG(st.st_mode) || st.st_nlink <= (nlink_t)known)
		return 0;
	snprintf(why, sizeof(why), " (one of %lu links)", (unsigned long)st.st_nlink);
	v.action = POLICY_DENY;	/* the rule: one that denies op somewhere */
	lower = malloc(strlen(path) + sizeof(why));
	if (lower) {
		strcpy(lower, path);
		strcat(lower, why);
	}
	veto(fs, op, lower ? lower : path, &v, c);
	free(lower);
	return -EACCES;
}

int guard_ino(struct txfs *fs, enum policy_op op, uint64_t tino,
	      const char *path, const struct req_ctx *c)
{
	const struct policy *p = atomic_load(&fs->policy);
	char **other = NULL;
	int rc = guard_path(fs, op, path, c), n, i, names = 0;

	if (rc || !path || !p)
		return rc;
	n = itab_other_paths(fs, tino, path, &other, &names);
	if (n < 0)
		return n;
	for (i = 0; i < n; i++) {
		if (rc == 0)
			rc = guard_path(fs, op, other[i], c);
		free(other[i]);
	}
	free(other);
	if (rc == 0)
		rc = unknown_links(fs, p, op, tino, path, 1 + names, c);
	return rc;
}

/* The operations a hard link must not open to another name. */
static const enum policy_op link_ops[] = {
	POLICY_OP_READ, POLICY_OP_WRITE, POLICY_OP_TRUNCATE, POLICY_OP_DELETE,
	POLICY_OP_RENAME, POLICY_OP_CHMOD, POLICY_OP_CHOWN, POLICY_OP_XATTR,
};

/* Bit i: link_ops[i] on path is refused to a caller no exception covers. */
static unsigned denied_ops(const struct policy *p, const char *path)
{
	struct policy_verdict v;
	unsigned bits = 0;

	for (size_t i = 0; i < sizeof(link_ops) / sizeof(link_ops[0]); i++)
		if (policy_check_by(p, link_ops[i], path, strlen(path), NULL, &v))
			bits |= 1u << i;
	return bits;
}

int guard_link_alike(struct txfs *fs, uint64_t tino, const char *src,
		     uint64_t newparent, const char *newname,
		     const struct req_ctx *c)
{
	const struct policy *p = atomic_load(&fs->policy);
	char **other = NULL, *dst;
	const char *by = NULL;
	unsigned want, have, bits;
	struct policy_verdict v = { 0 };
	int n, i, rc = 0;

	if (!p || !src)
		return 0;	/* no policy; an unknown source: guard_path's */
	dst = itab_path(fs, newparent, newname);
	if (!dst)
		return errno == ENAMETOOLONG ? -ENAMETOOLONG : -EACCES;
	want = denied_ops(p, dst);
	have = denied_ops(p, src);
	if (have != want)
		by = src;
	n = itab_other_paths(fs, tino, src, &other, &i);
	for (i = 0; i < n; i++) {
		bits = denied_ops(p, other[i]);
		if (!by && (have | bits) != want)
			by = other[i];
		have |= bits;
	}
	if (n < 0)
		rc = n;
	else if (have != want) {
		/* the first operation the names differ on, and its rule */
		for (i = 0; !((have ^ want) & (1u << i)); i++)
			;
		by = have & (1u << i) ? by : dst;
		(void)policy_check_by(p, link_ops[i], by, strlen(by), NULL, &v);
		v.action = POLICY_DENY;
		veto(fs, POLICY_OP_LINK, dst, &v, c);
		rc = -EACCES;
	}
	for (i = 0; i < n; i++)
		free(other[i]);
	free(other);
	free(dst);
	return rc;
}

int guard_hidden_inside(struct txfs *fs, enum policy_op op, uint64_t dir,
			const char *name, const struct req_ctx *c)
{
	const struct policy *p = atomic_load(&fs->policy);
	struct policy_verdict v = { .action = POLICY_DENY };
	char *path = itab_path(fs, dir, name);

	if (p && path)	/* the hide rule that holds below it, as the rule */
		(void)policy_check_tree(p, POLICY_OP_READ, path, strlen(path), &v);
	v.action = POLICY_DENY;
	veto(fs, op, path ? path : "(unknown path)", &v, c);
	free(path);
	return -EACCES;
}

int guard(struct txfs *fs, enum policy_op op, uint64_t dir, const char *name,
	  const struct req_ctx *c)
{
	char *path;
	int rc;

	if (!atomic_load(&fs->policy))
		return 0;
	path = itab_path(fs, dir, name);
	rc = guard_path(fs, op, path, c);
	free(path);
	return rc;
}

bool guard_tree_may(struct txfs *fs, enum policy_op op, uint64_t dir,
		    const char *name)
{
	const struct policy *p = atomic_load(&fs->policy);
	char *path;
	bool may;

	if (!p)
		return false;
	path = itab_path(fs, dir, name);
	may = !path || policy_check_tree(p, op, path, strlen(path), NULL) != 0;
	free(path);
	return may;
}

/* ---- limits: counted per transaction in the layer ---- */

/* The members of a guard event: limit, max, rule, op, errno, hint, path
 * (bytes, as audit.c writes them; left out when unknown). */
static json_t *guard_fields(const struct txfs *fs, const char *what,
			    uint64_t max, const char *file, unsigned line,
			    const char *op, int err, const char *path)
{
	json_t *o = json_pack("{s:s,s:I}", "limit", what, "max",
			      (json_int_t)max);
	char *rule = NULL;

	if (!o || asprintf(&rule, "%s:%u", file ? file : "", line) < 0 ||
	    audit_json_set_bytes(o, "rule", rule) ||
	    audit_json_set_bytes(o, "op", op) ||
	    json_object_set_new(o, "errno", json_string(err == EDQUOT ?
						"EDQUOT" : "EACCES")) ||
	    json_object_set_new(o, "hint", json_string(err == EDQUOT ?
				"commit or roll back, or raise the limit in "
				"the policy" : guard_hint(fs))) ||
	    (path && audit_json_set_bytes(o, "path", path))) {
		json_decref(o);
		o = NULL;
	}
	free(rule);
	return o;
}

static int over(struct txfs *fs, const struct charge *ch, const char *what,
		uint64_t max, unsigned line)
{
	const struct policy *p = atomic_load(&fs->policy);
	struct policy_verdict v = { .action = POLICY_DENY, .line = line,
				    .file = policy_name(p) };
	struct audit_caller who = { .pid = ch->c ? ch->c->pid : 0,
				    .uid = ch->c ? ch->c->uid : 0 };
	int err = strcmp(what, "deletes") ? EDQUOT : EACCES;
	char *path = itab_path(fs, ch->dir, ch->name);
	json_t *o;

	atomic_fetch_add(&fs->vetoes, 1);
	if (fs->audit) {
		/* the veto itself, like any other, then the guard event */
		audit_veto(fs->audit, ch->op, path ? path : "?", &v, err, &who);
		o = guard_fields(fs, what, max, v.file, line, ch->op, err,
				 path);
		if (o)
			audit_record(fs->audit, "guard", o, &who);
		json_decref(o);
	}
	free(path);
	return -err;
}

int guard_charge(struct txfs *fs, struct layer_txn *t, const struct charge *ch)
{
	const struct policy *p = atomic_load(&fs->policy);
	const struct policy_limits *lim = p ? policy_limits(p) : NULL;
	struct layer_counters n;
	int rc = layer_counters_get(t, &n);

	if (rc)
		return rc;
	if (ch->deletes && policy_has_uncounted(p)) {
		struct who_arg w = { .fs = fs, .c = ch->c };
		struct policy_caller who = { .exe = caller_exe, .arg = &w };
		char *path = itab_path(fs, ch->dir, ch->name);
		/* the real path of what is lost decides, not the name it has
		 * now: a real file moved under an uncounted folder counts */
		const char *at = ch->lower ? ch->lower : path;
		bool free_loss = (at && policy_delete_uncounted(p, at,
								strlen(at)))
				 || (policy_delete_uncounted_ignored(p) &&
				     ignored_loss(fs, ch->lower))
				 || policy_delete_uncounted_by(p, &who);

		free(path);
		if (free_loss)	/* loss charges carry nothing else */
			return 0;
	}
	/* n.bytes is what the layer holds now, this transaction's chunk
	 * changes included (the layer counts them as they happen):
	 * ch->bytes > 0 only says this change made it grow */
	n.deletes += ch->deletes;
	n.files += ch->files;
	if (lim && ch->deletes && n.deletes > lim->deletes)
		return over(fs, ch, "deletes", lim->deletes, lim->deletes_line);
	if (lim && ch->files && n.files > lim->files)
		return over(fs, ch, "files", lim->files, lim->files_line);
	if (lim && ch->bytes > 0 && n.bytes > 0 &&
	    (uint64_t)n.bytes > lim->bytes && reap_pending(fs)) {
		size_t freed;	/* forgotten orphans still hold bytes (reap.c) */

		if ((rc = reap_run_in(fs, t, &freed)) ||
		    (freed && (rc = layer_counters_get(t, &n))))
			return rc;
		n.deletes += freed ? ch->deletes : 0;
		n.files += freed ? ch->files : 0;
	}
	if (lim && ch->bytes > 0 && n.bytes > 0 &&
	    (uint64_t)n.bytes > lim->bytes)
		return over(fs, ch, "bytes", lim->bytes, lim->bytes_line);
	return layer_counters_put(t, &n);
}

bool guard_counts_losses(struct txfs *fs)
{
	const struct policy *p = atomic_load(&fs->policy);
	const struct policy_limits *lim = p ? policy_limits(p) : NULL;

	return lim && lim->deletes != UINT64_MAX;
}

int guard_copy_up(struct txfs *fs, struct layer_txn *t, struct tview *v)
{
	struct charge ch = { .op = "modify", .dir = v->tino, .files = 1 };
	int rc;

	if (v->in_layer)
		return 0;
	if (v->virt)
		return -EPERM;
	if ((rc = guard_charge(fs, t, &ch)))
		return rc;
	return view_copy_up(fs, t, v);
}

int guard_file_size(struct txfs *fs, uint64_t size, const struct charge *ch)
{
	const struct policy *p = atomic_load(&fs->policy);
	const struct policy_limits *lim = p ? policy_limits(p) : NULL;

	if (lim && size > lim->file_size)
		return over(fs, ch, "file-size", lim->file_size,
			    lim->file_size_line);
	return 0;
}

int guard_exec(struct txfs *fs, const char *path, const struct req_ctx *c)
{
	const struct policy *p = atomic_load(&fs->policy);
	struct policy_verdict v = { .action = POLICY_DENY };
	struct audit_caller who = { .pid = c ? c->pid : 0,
				    .uid = c ? c->uid : 0 };

	if (!p || !path || !(v.line = policy_exec_rule(p, path, strlen(path))))
		return 0;
	atomic_fetch_add(&fs->vetoes, 1);
	v.file = policy_name(p);
	if (fs->audit)
		audit_veto(fs->audit, "exec", path, &v, EACCES, &who);
	return -EACCES;
}

char *guard_note(struct txfs *fs)
{
	const struct policy *p = atomic_load(&fs->policy);
	const struct policy_limits *lim = p ? policy_limits(p) : NULL;
	struct layer_counters n = { 0 };
	struct layer_txn *t;
	char *msg = NULL;

	if (!lim || lim->deletes == UINT64_MAX ||
	    layer_begin(fs->layer, false, &t))
		return NULL;
	if (layer_counters_get(t, &n))
		n.deletes = 0;
	layer_txn_end(t);
	if (n.deletes < lim->deletes)
		return NULL;
	if (asprintf(&msg, "guard: `limit deletes %llu` (%s:%u) reached: "
		     "%llu losses in this transaction; %s.\n",
		     (unsigned long long)lim->deletes, policy_name(p),
		     lim->deletes_line, (unsigned long long)n.deletes,
		     guard_hint(fs)) < 0)
		msg = NULL;
	return msg;
}
