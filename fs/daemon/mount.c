/* SPDX-License-Identifier: Apache-2.0 */
/*
 * mount.c - the daemon's life: open the real directory, lock the state
 * folder, daemonize, open the layer, mount, serve, unmount.
 *
 * Order matters: the real directory is opened before mounting (an in-place
 * mount hides it from every later path lookup); LMDB is opened after the
 * fork (an LMDB environment must not cross fork); the parent of the fork
 * waits on a pipe until the child has mounted or failed, so `txfs mount`
 * returns only when the mount is usable and reports the child's error.
 *
 * Dead mounts are recognised and detached in stale.c.
 *
 * State folder contents: layer/ (LMDB), lock (flock'ed by the daemon),
 * daemon.pid, daemon.log (the daemon's stderr).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "daemon.h"

#define FUSE_SUPER_MAGIC 0x65735546

/* Refuse a damaged layer before anything uses it, saying how to save the
 * staged changes that can still be read, or how to discard them. */
static int check_layer(struct txfs *fs, uint64_t map, struct report *r)
{
	const char *why = NULL;
	const char *ws = fs->ws_path ? fs->ws_path : "WORKSPACE";
	char path[64];
	int rc;

	snprintf(path, sizeof(path), "/proc/self/fd/%d/layer", fs->statefd);
	rc = layer_check(path, map, &why);
	if (rc == 0)
		return 0;
	if (!why)
		return rfail(r, rc, "state folder %s: cannot check the layer: "
			    "%s", fs->state_path, strerror(-rc));
	return rfail(r, rc, "state folder %s: refused: the layer is %s. "
		    "Nothing was done; the real directory %s is untouched. "
		    "To save the staged changes that can still be read: "
		    "`txfs mount --salvage --state %s %s MNT` (read-only, "
		    "no commit), then `txfs diff MNT > staged.patch` or copy "
		    "files out, `txfs umount MNT`. To discard the staged "
		    "changes: remove the state folder (rm -r %s) and mount "
		    "again", fs->state_path, why, ws, fs->state_path, ws,
		    fs->state_path);
}

/* TXFS_MAP_SIZE: BYTES, or a number with K, M, G or T (binary); at
 * least 1 MiB. 0 for a text that is none of these (strtoull alone read
 * "8G" as 8 bytes, and the mount failed with a bare ENOSPC). */
static uint64_t map_size_of(const char *s)
{
	static const char units[] = "KMGT";
	uint64_t v = 0;
	const char *u;
	const char *p = s;

	if (*p < '0' || *p > '9')
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return 0;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	if (*p && (u = strchr(units, *p & ~0x20)) && *u) {
		for (long i = 0; i <= u - units; i++) {
			if (v > UINT64_MAX >> 10)
				return 0;
			v <<= 10;
		}
		p++;
		if ((*p & ~0x20) == 'I' && (p[1] & ~0x20) == 'B')
			p += 2;
	}
	return *p || v < (1u << 20) ? 0 : v;
}

static int open_layer(struct txfs *fs, struct report *r)
{
	struct layer_ws ws = { .dev = fs->root_dev, .ino = fs->root_ino };
	const char *env = getenv("TXFS_MAP_SIZE");
	uint64_t map = env && *env ? map_size_of(env) : 0;
	const char *why = NULL;
	int rc;

	if (env && *env && map == 0)
		return rfail(r, -EINVAL, "TXFS_MAP_SIZE=%s: not a size of at "
			    "least 1 MiB (BYTES, or a number with K, M, G or "
			    "T: 8G)", env);
	snprintf(ws.path, sizeof(ws.path), "%s", fs->ws_path);
	if (!fs->opts.salvage && (rc = check_layer(fs, map, r)))
		return rc;
	/* --salvage serves a copy of what can be read (salvage.c) */
	if (fs->opts.salvage && (rc = layer_salvage(fs->statefd, map,
						     fs->state_path)))
		return rfail(r, rc, "state folder %s: salvage: cannot copy the "
			    "layer: %s", fs->state_path, strerror(-rc));
	if (!fs->opts.salvage)
		layer_salvage_forget(fs->statefd);
	rc = layer_open(fs->statefd, fs->opts.salvage ? "salvaged" : "layer",
			map, &ws, &fs->layer, &why);
	if (rc && why)
		return rfail(r, rc, "state folder %s: refused: %s (it was "
			    "left untouched)", fs->state_path, why);
	if (rc)
		return rfail(r, rc, "state folder %s: cannot open the layer: %s",
			    fs->state_path, strerror(-rc));
	return 0;
}

/* TXFS_FAULT=commit:N | commit-eio:N | recover:N (tests only). */
static void parse_fault(struct txfs *fs)
{
	static const struct { const char *name, *phase; bool eio; } kinds[] = {
		{ "commit:", "commit", false },
		{ "commit-eio:", "commit", true },
		{ "recover:", "recover", false },
		/* not a crash: the offload worker frees forgotten orphans
		 * N ms late (view/reap.c), so tests see that nothing reads
		 * the layer before it */
		{ "reap-delay:", "reap-delay", false },
		/* ... or holds the list it took N ms before it frees it */
		{ "reap-hold:", "reap-hold", false },
	};
	const char *env = getenv("TXFS_FAULT");

	for (size_t i = 0; env && i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		size_t n = strlen(kinds[i].name);

		if (!strncmp(env, kinds[i].name, n)) {
			fs->fault_phase = kinds[i].phase;
			fs->fault_eio = kinds[i].eio;
			fs->fault_at = strtoul(env + n, NULL, 10);
		}
	}
}

/* Finish an undo a crash interrupted (history/undo.json), before serving. */
static int recover_undo(struct txfs *fs, struct report *r)
{
	bool done;
	int rc = history_recover(fs->state_path, fs->ws_path, &done);

	if (rc)
		return rfail(r, rc, "state folder %s: recovery of an interrupted "
			    "undo failed: %s (nothing was mounted; the journal is "
			    "kept, run `txfs recover %s` to retry)",
			    fs->state_path, strerror(-rc), fs->state_path);
	if (done)
		fprintf(stderr, "txfs: recovered: an interrupted undo was "
			"completed\n");
	return 0;
}

/* Files the daemon before held open with no name (unlinked, O_TMPFILE)
 * when it died: nothing holds them now, their bytes go. */
static int reap_orphans(struct txfs *fs, struct report *r)
{
	size_t n;
	int rc = view_reap_orphans(fs, &n);

	if (rc)
		return rfail(r, rc, "state folder %s: freeing the files a dead "
			    "daemon held open unnamed: %s", fs->state_path,
			    strerror(-rc));
	if (n)
		fprintf(stderr, "txfs: freed %zu file%s the previous daemon "
			"held open with no name\n", n, n == 1 ? "" : "s");
	return 0;
}

/* Finish or discard a commit a crash interrupted, before serving. */
static int recover(struct txfs *fs, struct report *r)
{
	const char *what = NULL;
	char *missed = NULL;
	int rc;

	/* never apply a damaged layer's journal: --salvage is read-only */
	if (fs->opts.salvage)
		return 0;
	if ((rc = txn_recover(fs, &what, &missed)))
		return rfail(r, rc, "state folder %s: recovery of an interrupted "
			    "commit failed: %s (nothing was mounted; the journal "
			    "is kept, run `txfs recover %s` to retry)",
			    fs->state_path, strerror(-rc), fs->state_path);
	if (what) {
		fprintf(stderr, "txfs: recovered: %s%s%s", what,
			missed ? ":\n" : "\n", missed ? missed : "");
		free(missed);
		if (fs->audit)
			audit_event(fs->audit, "recover", NULL, NULL);
	}
	if ((rc = recover_undo(fs, r)))
		return rc;
	return reap_orphans(fs, r);
}

/* ---- SIGHUP: reload the policy ---- */

/*
 * SIGHUP is blocked in every thread (the mask is set before any thread
 * starts) and read from a signalfd by a thread of its own, so libfuse's
 * handler (which would end the session) never sees it.
 */
static void *hup_main(void *arg)
{
	struct txfs *fs = arg;
	struct signalfd_siginfo si;
	char *msg;

	while (read(fs->sigfd, &si, sizeof(si)) == sizeof(si)) {
		if (si.ssi_signo != SIGHUP)
			break;	/* SIGUSR2: stop */
		txfs_reload_policy(fs, &msg);
		if (msg)
			fprintf(stderr, "txfs: %s", msg);
		free(msg);
	}
	return NULL;
}

static int hup_block(struct txfs *fs)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGUSR2);
	if (pthread_sigmask(SIG_BLOCK, &set, NULL))
		return -EINVAL;
	fs->sigfd = signalfd(-1, &set, SFD_CLOEXEC);
	return fs->sigfd < 0 ? -errno : 0;
}

static int hup_start(struct txfs *fs)
{
	signal(SIGHUP, SIG_DFL);	/* undo libfuse's handler */
	if (pthread_create(&fs->hup_thread, NULL, hup_main, fs))
		return -EAGAIN;
	fs->hup_running = true;
	return 0;
}

static void hup_stop(struct txfs *fs)
{
	if (fs->hup_running) {
		pthread_kill(fs->hup_thread, SIGUSR2);
		pthread_join(fs->hup_thread, NULL);
		fs->hup_running = false;
	}
	if (fs->sigfd >= 0)
		close(fs->sigfd);
	fs->sigfd = -1;
}

/*
 * -o noopen: the kernel stops sending OPEN and RELEASE for the mount only
 * once an OPEN was answered ENOSYS (its fc->no_open). Until a program
 * opens an existing file, every file it creates still costs a RELEASE at
 * its close (Linux 6.18: a created file's RELEASE is skipped only while
 * no_open is set): a `tar x` into a fresh mount made 1 more request a
 * file. So the daemon opens a file of its own mount once (the control
 * folder's README, whose text is fixed: status's grows with the layer),
 * from a thread of its own (the serving thread answers), and only then
 * tells the caller that the mount is ready (ready_fd). The open's failure
 * costs only that request.
 */
static void *prime_main(void *arg)
{
	struct txfs *fs = arg;
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/%s/README", fs->mnt_path,
		     fs->ctl_name) < (int)sizeof(path) &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0)
		close(fd);
	if (fs->prime_ready_fd >= 0) {
		/* a failed write: the caller reads EOF and says so */
		ssize_t n = write(fs->prime_ready_fd, "", 1);

		(void)n;
		close(fs->prime_ready_fd);
	}
	return NULL;
}

/* Returns ready_fd when the caller is to say "ready" itself, else -1 (the
 * thread says it after its open). */
static int noopen_prime(struct txfs *fs, int ready_fd)
{
	if (!fs->opts.noopen || !fs->ctl_name || fs->opts.salvage)
		return ready_fd;
	fs->prime_ready_fd = ready_fd;
	fs->prime_running = !pthread_create(&fs->prime_thread, NULL,
					    prime_main, fs);
	return fs->prime_running ? -1 : ready_fd;
}

/* ---- the FUSE session ---- */

/* -o spin=US: wait awake for the next request (spin.c). */
static int spin_setup(struct txfs *fs, struct report *r)
{
	unsigned us = TXFS_SPIN_DEFAULT_US;
	int rc;

	if (fs->opts.spin && spin_parse(fs->opts.spin, &us))
		return rfail(r, -EINVAL, "-o spin=%s: not a number of "
			    "microseconds from 0 (off) to 1000", fs->opts.spin);
	rc = spin_init(fs, us);
	return rc ? rfail(r, rc, "spin: %s", strerror(-rc)) : 0;
}

static int make_session(struct txfs *fs, struct report *r)
{
	char opts[8192];
	char *argv[4] = { "txfs", "-o", opts, NULL };
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	int n;

	if ((n = spin_setup(fs, r)))
		return n;
	n = snprintf(opts, sizeof(opts),
		     "fsname=%s,subtype=txfs,default_permissions%s%s%s",
		     fs->ws_path, fs->opts.salvage ? ",ro" : "",
		     fs->opts.fuse_opts ? "," : "",
		     fs->opts.fuse_opts ? fs->opts.fuse_opts : "");
	if (n < 0 || (size_t)n >= sizeof(opts) || strchr(fs->ws_path, ','))
		return rfail(r, -EINVAL, "workspace %s: path not usable as a "
			    "mount source (comma or too long)", fs->ws_path);
	if (fs->opts.debug) {
		argv[3] = "-d";
		args.argc = 4;
	}
	fs->se = fuse_session_new(&args, &txfs_ops, sizeof(txfs_ops), fs);
	fuse_opt_free_args(&args);
	if (!fs->se)
		return rfail(r, -EINVAL, "cannot start a FUSE session (bad -o "
			    "option?)");
	if (fuse_set_signal_handlers(fs->se))
		return rfail(r, -EIO, "cannot install signal handlers");
	if (fuse_session_mount(fs->se, fs->mnt_path))
		return rfail(r, -EIO, "mount %s: failed (is fusermount3 "
			    "installed, and /dev/fuse usable?)", fs->mnt_path);
	if (killpriv_install(fs))
		return rfail(r, -EIO, "cannot hook the FUSE channel "
			    "(fuse_session_custom_io)");
	return 0;
}

/* opts.threads threads serve the session (stats.c; one by default, see
 * offload.c for what is answered elsewhere). The FUSE capabilities it
 * asks for, and why the others are not taken, are listed above op_init()
 * in ops.c. */
static int serve(struct txfs *fs)
{
	return stats_serve(fs);
}

static void cleanup(struct txfs *fs)
{
	history_free(fs);
	sock_stop(fs);
	history_sync(fs);	/* a record the last commit left to the pack */
	hup_stop(fs);
	offload_stop(fs);
	if (fs->se) {
		fuse_session_unmount(fs->se);
		fuse_remove_signal_handlers(fs->se);
	}
	if (fs->prime_running)	/* its open fails once unmounted */
		pthread_join(fs->prime_thread, NULL);
	fs->prime_running = false;
	inval_stop(fs);
	gc_stop(fs);
	if (fs->se)
		fuse_session_destroy(fs->se);
	spin_destroy(fs);
	file_close_all(fs);
	layer_close(fs->layer);
	txfs_free_policy(fs);
	if (fs->statefd >= 0 && fs->se)
		unlinkat(fs->statefd, "daemon.pid", 0);
	if (fs->itab)
		itab_destroy(fs);
	reap_destroy(fs);
	lower_cache_destroy(fs);
	if (fs->lockfd >= 0)
		close(fs->lockfd);
	if (fs->statefd >= 0)
		close(fs->statefd);
	if (fs->rootfd >= 0)
		close(fs->rootfd);
	pthread_rwlock_destroy(&fs->txlock);
	session_forget(fs);
	exectree_destroy(fs);
	pthread_mutex_destroy(&fs->ctl_lock);
	pthread_mutex_destroy(&fs->ign_lock);
	ctl_snap_free_all(fs);
	pthread_mutex_destroy(&fs->snap_lock);
	free(fs->last_report);
	free(fs->ws_path);
	free(fs->mnt_path);
	free(fs->state_path);
}

/* Fork; the parent waits for the child's word and exits with it. */
static int daemonize(struct report *r)
{
	int p[2];
	pid_t pid;
	char msg[1024];
	ssize_t n;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid > 0) {
		close(p[1]);
		n = read(p[0], msg, sizeof(msg) - 1);
		if (n == 1 && msg[0] == '\0')
			_exit(0);
		if (n > 0) {
			msg[n] = '\0';
			fprintf(stderr, "txfs: %s\n", msg);
		} else {
			fprintf(stderr, "txfs: mount: the daemon died while "
				"starting (see daemon.log in the state "
				"folder)\n");
		}
		_exit(1);
	}
	close(p[0]);
	r->fd = p[1];
	setsid();
	return 0;
}

/* stdin/stdout to /dev/null, stderr to STATE/daemon.log. */
static void detach_stdio(struct txfs *fs)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	int log = openat(fs->statefd, "daemon.log",
			 O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW,
			 0600);

	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		close(null);
	}
	if (log >= 0) {
		dup2(log, 2);
		close(log);
	}
}

/*
 * The daemon holds the real directory open: a same-user process must not
 * reach it through /proc/<daemon>/{fd,cwd,root,mem,environ,map_files}.
 * Not dumpable makes those root's (ptrace access checks fail for others);
 * it is set before the real directory is opened and is inherited by the
 * fork of daemonize(). fusermount3 is exec'ed (exec resets it in the
 * child only) and LeakSanitizer lifts it for itself, so nothing needs it.
 */
static int seal_process(void)
{
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) ? -errno : 0;
}

/* The policy path as the daemon will see it after chdir("/"). */
static char *abs_policy(const char *policy)
{
	char cwd[PATH_MAX], *out = NULL;

	if (!policy || policy[0] == '/')
		return NULL;
	if (!getcwd(cwd, sizeof(cwd)) ||
	    asprintf(&out, "%s/%s", cwd, policy) < 0)
		return NULL;
	return out;
}

/*
 * fs->txlock prefers its writer: once commit, rollback or savepoint asks
 * for it, new requests wait until the verb is done, so serving threads
 * whose requests overlap without a gap cannot starve a verb (glibc's
 * default prefers readers). Safe because no thread takes it shared twice:
 * handlers take it once, at their top; nothing that holds it waits for
 * another request.
 */
static void txlock_init(struct txfs *fs)
{
	pthread_rwlockattr_t a;

	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a,
			PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&fs->txlock, &a);
	pthread_rwlockattr_destroy(&a);
}

int txfs_run_mount(struct txfs_opts *opts)
{
	struct txfs fs = { .opts = *opts, .rootfd = -1, .statefd = -1,
			   .lockfd = -1, .sockfd = -1, .sigfd = -1 };
	struct report r = { .fd = -1 };
	char *policy = abs_policy(opts->policy);
	int rc;

	if (policy)
		fs.opts.policy = policy;
	fs.ctl_name = opts->ctl_name ? opts->ctl_name : ".txfs";
	fs.ctl_len = strlen(fs.ctl_name);
	txlock_init(&fs);
	pthread_mutex_init(&fs.ctl_lock, NULL);
	pthread_mutex_init(&fs.snap_lock, NULL);
	pthread_mutex_init(&fs.fh_lock, NULL);
	exectree_init(&fs);
	pthread_mutex_init(&fs.ign_lock, NULL);
	if ((rc = seal_process())) {
		rc = rfail(&r, rc, "cannot make the daemon non-dumpable: %s",
			  strerror(-rc));
		goto out;
	}
	if (!opts->mountpoint && (rc = txfs_unmount_stale(opts->workspace))) {
		rc = rfail(&r, rc, "workspace %s: a stale mount is in the way "
			  "and could not be removed", opts->workspace);
		goto out;
	}
	if ((rc = daemon_open_workspace(&fs, &r)))
		goto out;
	if (opts->mountpoint && (rc = txfs_unmount_stale(opts->mountpoint))) {
		rc = rfail(&r, rc, "mountpoint %s: a stale mount is in the way "
			  "and could not be removed", opts->mountpoint);
		goto out;
	}
	fs.mnt_path = realpath(opts->mountpoint ? opts->mountpoint :
						  fs.ws_path, NULL);
	if (!fs.mnt_path) {
		rc = rfail(&r, -errno, "mountpoint %s: %s", opts->mountpoint,
			  strerror(errno));
		goto out;
	}
	if ((rc = daemon_open_state(&fs, &r)))
		goto out;
	if (!opts->foreground && (rc = daemonize(&r)))
		goto out;
	if (chdir("/")) {	/* the cwd must not be a way into anything */
		rc = rfail(&r, -errno, "chdir /: %s", strerror(errno));
		goto out;
	}
	parse_fault(&fs);
	if ((rc = hup_block(&fs)) || (rc = itab_init(&fs)) ||
	    (rc = reap_init(&fs)) ||
	    (rc = lower_cache_init(&fs)) ||
	    (rc = open_layer(&fs, &r)) ||
	    (rc = txfs_load_policy(&fs, &r.fd)) || (rc = recover(&fs, &r)) ||
	    (rc = make_session(&fs, &r)))
		goto out;
	if ((rc = daemon_write_pid(&fs)) || (rc = inval_start(&fs)) ||
	    (rc = gc_start(&fs)) || (rc = sock_start(&fs)) ||
	    (rc = offload_start(&fs)) ||
	    (rc = hup_start(&fs))) {
		rc = rfail(&r, rc, "start: %s", strerror(-rc));
		goto out;
	}
	if (r.fd >= 0)
		detach_stdio(&fs);
	r.fd = noopen_prime(&fs, r.fd);
	if (r.fd >= 0) {
		if (write(r.fd, "", 1) != 1)
			rc = -EIO;
		close(r.fd);
		r.fd = -1;
	}
	rc = serve(&fs);
out:
	if (r.fd >= 0)
		close(r.fd);
	cleanup(&fs);
	free(policy);
	return rc;
}

/*
 * `txfs recover STATE`: finish or discard an interrupted commit without
 * mounting. The workspace is the one the layer records.
 */
int txfs_recover_state(const char *state, char *msg, size_t size)
{
	struct txfs fs = { .rootfd = -1, .statefd = -1, .lockfd = -1,
			   .sockfd = -1, .sigfd = -1 };
	struct report r = { .fd = -1 };
	struct layer_ws ws = { 0 };
	const char *why = NULL, *what = NULL;
	char *missed = NULL;
	struct stat st;
	size_t n;
	int rc;

	fs.opts.state = state;
	pthread_rwlock_init(&fs.txlock, NULL);
	pthread_mutex_init(&fs.ctl_lock, NULL);
	pthread_mutex_init(&fs.snap_lock, NULL);
	pthread_mutex_init(&fs.fh_lock, NULL);
	exectree_init(&fs);
	pthread_mutex_init(&fs.ign_lock, NULL);
	if ((rc = daemon_open_state(&fs, &r)))
		goto out;
	fs.statefd = fs.statefd;
	snprintf(msg, size, "state folder %s", state);
	if ((rc = check_layer(&fs, 0, &r)))
		goto out;
	msg[0] = '\0';
	rc = layer_open(fs.statefd, "layer", 0, &ws, &fs.layer, &why);
	if (rc) {
		snprintf(msg, size, "state folder %s: %s", fs.state_path,
			 why ? why : strerror(-rc));
		goto out;
	}
	fs.ws_path = strdup(ws.path);
	if (txfs_unmount_stale(ws.path) ||
	    (fs.rootfd = open(ws.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    fstat(fs.rootfd, &st) || st.st_dev != ws.dev || st.st_ino != ws.ino) {
		rc = -ENOENT;
		snprintf(msg, size, "workspace %s of state folder %s: missing, "
			 "replaced or still mounted", ws.path, fs.state_path);
		goto out;
	}
	fs.root_dev = st.st_dev;
	fs.root_ino = st.st_ino;
	fs.use_openat2 = lower_has_openat2(fs.rootfd);
	parse_fault(&fs);
	if ((rc = itab_init(&fs)) || (rc = reap_init(&fs)))
		goto out;
	rc = txn_recover(&fs, &what, &missed);
	if (rc == 0) {
		bool done;

		rc = history_recover(fs.state_path, fs.ws_path, &done);
		if (rc == 0 && done && !what)
			what = "an interrupted undo was completed";
	}
	snprintf(msg, size, "%s%s%s", rc ? strerror(-rc) : what ? what :
		 "nothing to recover: no commit was interrupted",
		 missed ? ":\n" : "", missed ? missed : "");
	if (missed && (n = strlen(msg)) && msg[n - 1] == '\n')
		msg[n - 1] = '\0';	/* the caller ends the line */
	free(missed);
out:
	if (rc && !msg[0])
		snprintf(msg, size, "%s", strerror(-rc));
	cleanup(&fs);
	return rc;
}
