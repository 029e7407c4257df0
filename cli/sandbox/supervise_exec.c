// SPDX-License-Identifier: Apache-2.0
/*
 * supervise_exec.c - `exec deny` by identity (txfs.policy(5)): the content
 * hashes (SHA-256) of the files the rules name, taken when the supervisor
 * is prepared and again when one of them changes, and the execve/execveat
 * handler that refuses any regular file with such content. Only files whose
 * size equals a forbidden size are read. The exec itself cannot be
 * performed on the target's behalf, so an allowed exec continues in the
 * kernel (the documented check-then-exec window).
 *
 * The kernel's own chain is followed (issue 23, hole 2): a script's "#!"
 * interpreter (relative to the caller's folder, as the kernel opens it) is
 * judged like the program, recursively up to SUP_INTERP_DEPTH levels, with
 * the arguments the kernel gives it; the dynamic loader run as a program
 * (`/lib64/ld-linux-x86-64.so.2 ./evil`, issue 23.6, or as a "#!"
 * interpreter) is recognised by the content of the system's loaders (a
 * copy elsewhere too) and refused when the first program argument after
 * its options names a denied file. A program whose first bytes cannot be
 * read is refused (its "#!" line cannot be followed). Code mapped
 * executable: supervise_map.c. Not covered, and documented in
 * txfs.policy(5): interpreters given a denied script as data (`sh
 * evil.sh`, `cat evil.sh | sh`: refusing the argument would stop
 * nothing), code copied into anonymous memory, binfmt_misc handlers.
 * The ELF interpreter an ELF program names (PT_INTERP: the kernel opens
 * and maps it with no system call of the command's) is judged like the
 * program, at every step of the chain (supervise_elf.c).
 *
 * Also here: the supervisor's lists from the policy (sup_lists_*).
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "supervise_int.h"
#include "../../policy/policy.h"
#include "../../tests/tools/sha256.h"

static int hash_fd(int fd, unsigned char out[SUP_HASH_LEN])
{
	static const char hexd[] = "0123456789abcdef";
	unsigned char buf[65536];
	struct sha256 h;
	char hex[65];
	ssize_t n;
	int i;

	sha256_init(&h);
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		sha256_update(&h, buf, (size_t)n);
	if (n < 0)
		return -errno;
	sha256_hex(&h, hex);
	for (i = 0; i < SUP_HASH_LEN; i++)
		out[i] = (unsigned char)((strchr(hexd, hex[2 * i]) - hexd) << 4 |
					 (strchr(hexd, hex[2 * i + 1]) - hexd));
	return 0;
}

/* Add the hash of f's current content (if new); updates f's identity. */
static int hash_file(struct sup *s, struct sup_exec_file *f)
{
	struct sup_hash h, *v;
	struct stat st;
	size_t i;
	int fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK), rc;

	if (fd < 0)
		return -errno;
	rc = fstat(fd, &st) < 0 ? -errno : 0;
	if (rc == 0 && !S_ISREG(st.st_mode))
		rc = -EINVAL;
	if (rc == 0)
		rc = hash_fd(fd, h.h);
	close(fd);
	if (rc < 0)
		return rc;
	f->dev = st.st_dev;
	f->ino = st.st_ino;
	f->size = h.size = st.st_size;
	f->mtime = st.st_mtim;
	f->ctime = st.st_ctim;
	for (i = 0; i < s->nhashes; i++)
		if (s->hashes[i].size == h.size && !memcmp(s->hashes[i].h, h.h, SUP_HASH_LEN))
			return 0;
	v = realloc(s->hashes, (s->nhashes + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	s->hashes = v;
	s->hashes[s->nhashes++] = h;
	return 0;
}

static bool same_time(struct timespec a, struct timespec b)
{
	return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* "On change": a named file whose identity changed is hashed again (the
 * old hash stays forbidden: copies of the old content remain refused). */
static void refresh_hashes(struct sup *s)
{
	struct stat st;
	size_t i;

	for (i = 0; i < s->nfiles; i++) {
		struct sup_exec_file *f = &s->files[i];

		if (stat(f->path, &st) < 0)
			continue;
		if (st.st_dev != f->dev || st.st_ino != f->ino || st.st_size != f->size ||
		    !same_time(st.st_mtim, f->mtime) || !same_time(st.st_ctim, f->ctime))
			(void)hash_file(s, f);
	}
}

/* The system's dynamic loaders, by content (only with exec deny files). */
static void load_loaders(struct sup *s)
{
	static const char *const globs[] = {
		"/lib64/ld-linux*.so*", "/lib/ld-linux*.so*", "/lib/*/ld-linux*.so*",
		"/usr/lib/*/ld-linux*.so*", "/lib/ld-musl-*.so*", "/usr/lib64/ld-linux*.so*",
	};
	size_t i, j, k;

	for (i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		glob_t g;

		if (glob(globs[i], GLOB_NOSORT, NULL, &g) != 0)
			continue;
		for (j = 0; j < g.gl_pathc && s->nloaders < 8; j++) {
			struct sup_hash h;
			struct stat st;
			int fd = open(g.gl_pathv[j], O_RDONLY | O_CLOEXEC | O_NONBLOCK);
			bool dup = false;

			if (fd < 0)
				continue;
			if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && hash_fd(fd, h.h) == 0) {
				h.size = st.st_size;
				for (k = 0; k < s->nloaders && !dup; k++)
					dup = s->loaders[k].size == h.size &&
					      !memcmp(s->loaders[k].h, h.h, SUP_HASH_LEN);
				if (!dup)
					s->loaders[s->nloaders++] = h;
			}
			close(fd);
		}
		globfree(&g);
	}
}

int sup_exec_load(struct sup *s)
{
	size_t i, j;
	int rc = 0;

	for (i = 0; i < s->o.n_exec_deny && rc == 0; i++) {
		glob_t g;

		if (glob(s->o.exec_deny[i], GLOB_NOSORT, NULL, &g) != 0)
			continue;	/* names nothing now (GLOB_NOMATCH) */
		for (j = 0; j < g.gl_pathc && rc == 0; j++) {
			struct sup_exec_file *v = realloc(s->files, (s->nfiles + 1) * sizeof(*v));

			if (!v) {
				rc = -ENOMEM;
				break;
			}
			s->files = v;
			memset(&v[s->nfiles], 0, sizeof(*v));
			v[s->nfiles].path = strdup(g.gl_pathv[j]);
			if (!v[s->nfiles].path) {
				rc = -ENOMEM;
				break;
			}
			if (hash_file(s, &v[s->nfiles]) == 0)
				s->nfiles++;
			else
				free(v[s->nfiles].path);
		}
		globfree(&g);
	}
	if (rc == 0 && s->nhashes > 0)
		load_loaders(s);
	return rc;
}

/* 1 when fd's content is forbidden, 0 if not, -errno if it cannot be read. */
static int forbidden_content(struct sup *s, int fd)
{
	unsigned char h[SUP_HASH_LEN];
	char link[64];
	struct stat st;
	bool size_match = false;
	size_t i;
	int rfd, rc;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return 0;
	pthread_mutex_lock(&s->lock);
	refresh_hashes(s);
	for (i = 0; i < s->nhashes; i++)
		size_match |= s->hashes[i].size == st.st_size;
	pthread_mutex_unlock(&s->lock);
	if (!size_match)
		return 0;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0)
		return -errno;
	rc = hash_fd(rfd, h);
	close(rfd);
	if (rc < 0)
		return rc;
	pthread_mutex_lock(&s->lock);
	for (i = 0, rc = 0; i < s->nhashes && !rc; i++)
		rc = s->hashes[i].size == st.st_size && !memcmp(s->hashes[i].h, h, SUP_HASH_LEN);
	pthread_mutex_unlock(&s->lock);
	return rc;
}

/* fd is one of the files the rules name, by its path: the daemon refuses
 * that exec by name itself, and logs the veto with its rule line. */
static bool named_file(struct sup *s, int fd)
{
	char real[PATH_MAX];
	bool named = false;
	size_t i;

	if (sup_fd_path(fd, real, sizeof(real)) < 0 || !sup_beneath(real, s->o.workspace))
		return false;
	pthread_mutex_lock(&s->lock);
	for (i = 0; i < s->nfiles && !named; i++)
		named = strcmp(real, s->files[i].path) == 0;
	pthread_mutex_unlock(&s->lock);
	return named;
}

int sup_exec_forbidden(struct sup *s, int fd)
{
	return named_file(s, fd) ? 1 : forbidden_content(s, fd);
}

/* fd (a regular file) has a system loader's content. */
static bool is_loader(struct sup *s, int fd)
{
	unsigned char h[SUP_HASH_LEN];
	char link[64];
	struct stat st;
	bool size_match = false;
	size_t i;
	int rfd, rc;

	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode))
		return false;
	for (i = 0; i < s->nloaders; i++)
		size_match |= s->loaders[i].size == st.st_size;
	if (!size_match)
		return false;
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (rfd < 0)
		return true;	/* cannot tell: judge its arguments */
	rc = hash_fd(rfd, h);
	close(rfd);
	for (i = 0; i < s->nloaders; i++)
		if (rc < 0 || (s->loaders[i].size == st.st_size &&
			       !memcmp(s->loaders[i].h, h, SUP_HASH_LEN)))
			return true;
	return false;
}

/* Argument i (from 1) of what a loader would get: pre[0..npre) (what
 * script interpreters put before them), then the target's argv[1..] at
 * addr. 0, -ENOENT past the end, or -errno. */
static int loader_arg(struct sup_call *c, const char *const *pre, size_t npre,
		      uint64_t argv, size_t i, char *buf, size_t size)
{
	uint64_t p;
	int rc;

	if (i - 1 < npre) {
		if (strlen(pre[i - 1]) >= size)
			return -ENAMETOOLONG;
		strcpy(buf, pre[i - 1]);
		return 0;
	}
	rc = sup_read(c, argv + (i - npre) * sizeof(p), &p, sizeof(p));
	if (rc < 0)
		return rc;
	if (p == 0)
		return -ENOENT;
	return sup_read_str(c, p, buf, size);
}

/* The program a loader run as a program would run: the first argument
 * after argv[0] and the loader's options (glibc's ld.so; those taking a
 * value skip it). Read once (loader_arg) into path. 0, -ENOENT when there
 * is none, or -errno. */
static int loader_program(struct sup_call *c, const char *const *pre, size_t npre,
			  uint64_t argv, char *path, size_t size)
{
	static const char *const valued[] = {
		"--library-path", "--glibc-hwcaps-prepend", "--glibc-hwcaps-mask",
		"--inhibit-rpath", "--audit", "--preload", "--argv0",
	};
	size_t i, k;
	int rc;

	for (i = 1; i < 256; i++) {
		bool skip = false;

		rc = loader_arg(c, pre, npre, argv, i, path, size);
		if (rc < 0)
			return rc;
		if (strncmp(path, "--", 2) != 0)
			return 0;
		for (k = 0; k < sizeof(valued) / sizeof(valued[0]); k++)
			skip |= strcmp(path, valued[k]) == 0;
		i += skip;
	}
	return -E2BIG;
}

/* A loader run as a program on a denied file: 1, 0 if not, -errno when
 * that file cannot be read to compare (refused too). real: its path. */
static int loader_runs_denied(struct sup_call *c, int fd, const char *const *pre,
			      size_t npre, char *real, size_t size)
{
	const __u64 *a = c->n.data.args;
	bool at = c->n.data.nr == SCMP_SYS(execveat);
	char prog[PATH_MAX];
	int pfd, rc;

	if (c->s->nloaders == 0 || !is_loader(c->s, fd))
		return 0;
	if (loader_program(c, pre, npre, at ? a[2] : a[1], prog, sizeof(prog)) < 0)
		return 0;	/* the loader gets no program (or fails itself) */
	pfd = sup_open_at(c, (uint64_t)(int64_t)AT_FDCWD, prog, O_PATH);
	if (pfd < 0)
		return 0;	/* the loader will not find it either */
	rc = sup_exec_forbidden(c->s, pfd);
	if (rc != 0 && sup_fd_path(pfd, real, size) < 0)
		snprintf(real, size, "%s", prog);
	close(pfd);
	return rc;
}

/* One step of the chain the kernel follows for an exec: file fd, run
 * under the name name, with pre[] (npre) the arguments the script
 * interpreters so far put before the command's argv[1..]. */
struct exec_step {
	int fd;
	char name[PATH_MAX];
	char *pre[2 * SUP_INTERP_DEPTH + 1];
	size_t npre;
	char arg[SUP_INTERP_DEPTH][256];	/* the interpreters' arguments */
	char names[SUP_INTERP_DEPTH][PATH_MAX];	/* and the scripts' names */
};

/* Veto for step k: what, and why as 1/-errno from a check. */
static int exec_veto(struct sup_call *c, int fd, const char *name, int rc,
		     const char *how)
{
	char real[PATH_MAX], why[256];

	if (sup_fd_path(fd, real, sizeof(real)) < 0)
		snprintf(real, sizeof(real), "%s", name);
	snprintf(why, sizeof(why), "%s%s", how, rc > 0 ?
		 "same content as a file of an `exec deny` rule" :
		 "it cannot be read to compare with `exec deny` files");
	return sup_veto(c->s, c, "exec", real, why);
}

/*
 * The "#!" line of the file at fd, as the kernel reads it (fs/binfmt_script.c,
 * the first 256 bytes): the interpreter into interp, its one optional
 * argument into arg. 1 when it is a script, 0 if not, -errno when it
 * cannot be read (the kernel reads it without read permission).
 */
static int shebang(int fd, char *interp, size_t isize, char *arg, size_t asize)
{
	char buf[257], link[64], *p, *e;
	ssize_t n;
	int rfd;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (rfd < 0)
		return -errno;
	n = pread(rfd, buf, 256, 0);
	close(rfd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	if (n < 2 || buf[0] != '#' || buf[1] != '!')
		return 0;
	e = memchr(buf, '\n', (size_t)n);
	if (e)
		*e = '\0';
	for (p = buf + 2; *p == ' ' || *p == '\t'; p++)
		;
	n = (ssize_t)strcspn(p, " \t");
	if (n == 0 || (size_t)n >= isize)
		return n == 0 ? 0 : -ENAMETOOLONG;	/* the kernel: ENOEXEC */
	memcpy(interp, p, (size_t)n);
	interp[n] = '\0';
	for (p += n; *p == ' ' || *p == '\t'; p++)
		;
	for (e = p + strlen(p); e > p && (e[-1] == ' ' || e[-1] == '\t'); e--)
		;
	if ((size_t)(e - p) >= asize)
		return -ENAMETOOLONG;
	memcpy(arg, p, (size_t)(e - p));
	arg[e - p] = '\0';
	return 1;
}

/* The ELF interpreter (PT_INTERP) of fd, which the kernel opens and maps
 * itself (supervise_elf.c): judged by name and content, and so is what it
 * names in turn when it is an ELF file with a PT_INTERP of its own (the
 * kernel does not follow that one; refusing it costs nothing). 0 when
 * allowed, -EACCES after a veto. */
static int judge_elf_interp(struct sup_call *c, int fd)
{
	char interp[PATH_MAX];
	int level, cur = fd, next, rc = 0;

	for (level = 0; level < SUP_INTERP_DEPTH && rc == 0; level++) {
		rc = sup_elf_interp(cur, interp, sizeof(interp));
		if (rc < 0) {
			rc = exec_veto(c, cur, interp, rc, "an ELF program whose "
				       "interpreter (PT_INTERP) cannot be read: ");
			break;
		}
		if (rc == 0)
			break;
		/* open_exec(): absolute, or from the caller's folder */
		next = sup_open_at(c, (uint64_t)(int64_t)AT_FDCWD, interp, O_PATH);
		if (next < 0) {
			rc = 0;
			break;	/* the kernel fails it too (ENOENT) */
		}
		rc = sup_exec_forbidden(c->s, next);
		if (rc != 0)
			rc = exec_veto(c, next, interp, rc, "ELF interpreter "
				       "(PT_INTERP) of a program: ");
		if (cur != fd)
			close(cur);
		cur = next;
	}
	if (cur != fd)
		close(cur);
	return rc;
}

/* Judge st->fd: its content, a loader's program, then (a script) its
 * interpreter, as the kernel would follow it. Returns 0 when allowed, or
 * -EACCES after a veto. Takes st->fd. */
static int judge_chain(struct sup_call *c, struct exec_step *st)
{
	char interp[PATH_MAX], real[PATH_MAX];
	int depth, rc = 0;

	for (depth = 0; rc == 0; depth++) {
		/* a named file the kernel opens for exec (the program, an
		 * interpreter) is refused by the daemon, by name with its rule */
		rc = named_file(c->s, st->fd) ? 0 : forbidden_content(c->s, st->fd);
		if (rc != 0) {
			rc = exec_veto(c, st->fd, st->name, rc, depth ?
				       "interpreter of a script: " : "");
			break;
		}
		rc = loader_runs_denied(c, st->fd, (const char *const *)st->pre,
					st->npre, real, sizeof(real));
		if (rc != 0) {
			rc = sup_veto(c->s, c, "exec", real, rc > 0 ?
				      "run by the dynamic loader: same content as a "
				      "file of an `exec deny` rule" :
				      "run by the dynamic loader: it cannot be read "
				      "to compare with `exec deny` files");
			break;
		}
		if (depth == SUP_INTERP_DEPTH)
			break;	/* the kernel stops before: ELOOP */
		rc = shebang(st->fd, interp, sizeof(interp), st->arg[depth],
			     sizeof(st->arg[depth]));
		if (rc < 0)
			rc = exec_veto(c, st->fd, st->name, rc, "a script "
				       "whose interpreter cannot be read: ");
		else if (rc == 0)
			rc = judge_elf_interp(c, st->fd);
		if (rc <= 0)
			break;
		/* the next level gets [arg] name pre... (fs/binfmt_script.c) */
		snprintf(st->names[depth], sizeof(st->names[depth]), "%s", st->name);
		memmove(st->pre + 1 + !!st->arg[depth][0], st->pre, st->npre * sizeof(*st->pre));
		if (st->arg[depth][0])
			st->pre[0] = st->arg[depth];
		st->pre[!!st->arg[depth][0]] = st->names[depth];
		st->npre += 1 + !!st->arg[depth][0];
		close(st->fd);
		snprintf(st->name, sizeof(st->name), "%s", interp);
		st->fd = sup_open_at(c, (uint64_t)(int64_t)AT_FDCWD, interp, O_PATH);
		rc = 0;
		if (st->fd < 0)
			return 0;	/* the kernel fails it too (ENOENT) */
	}
	close(st->fd);
	st->fd = -1;
	return rc;
}

/*
 * execve(path, ...) / execveat(dirfd, path, ..., flags). The kernel
 * continues unless the file's content is forbidden, or the dynamic loader
 * would run such a file, or a script's interpreter (followed as the kernel
 * follows "#!" lines, up to SUP_INTERP_DEPTH) is such a file or such a
 * loader run. Returns 1 (replied) or a negative errno to reply.
 */
int sup_handle_exec(struct sup_call *c)
{
	const __u64 *a = c->n.data.args;
	bool at = c->n.data.nr == SCMP_SYS(execveat);
	uint64_t flags = at ? a[4] : 0;
	struct exec_step *st = calloc(1, sizeof(*st));
	int fd, rc;

	if (!st)
		return -ENOMEM;
	if (sup_read_str(c, at ? a[1] : a[0], st->name, sizeof(st->name)) < 0)
		goto out_continue;	/* the kernel fails it */
	if (st->name[0] == '\0' && (flags & AT_EMPTY_PATH))
		fd = sup_getfd(c, a[0]);
	else
		fd = sup_open_at(c, at ? a[0] : (uint64_t)(int64_t)AT_FDCWD, st->name,
				 O_PATH | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0)
		goto out_continue;
	/* the name a script's interpreter gets (fs/exec.c) */
	if (at && st->name[0] != '/') {
		char given[PATH_MAX];

		memcpy(given, st->name, sizeof(given));
		if (snprintf(st->name, sizeof(st->name), "/dev/fd/%d%s%.4000s",
			     (int)a[0], given[0] ? "/" : "", given) < 0)
			st->name[0] = '\0';
	}
	st->fd = fd;
	rc = judge_chain(c, st);
	free(st);
	if (rc)
		return rc;
	return sup_continue(c->s, c->n.id), 1;
out_continue:
	free(st);
	return sup_continue(c->s, c->n.id), 1;
}

/* ---- from the policy ------------------------------------------------------------- */

/* An exec deny glob made absolute: relative ones are beneath ws. */
static char *exec_glob(const char *g, const char *ws)
{
	char *s = NULL;

	if (g[0] == '/')
		return strdup(g);
	return asprintf(&s, "%s/%s", ws, g) < 0 ? NULL : s;
}

int sup_lists_from_policy(const struct policy *p, const char *ws, struct sup_lists *l)
{
	const char *const *g;
	size_t i, n = policy_exec_globs(p, &g);
	int rc;

	memset(l, 0, sizeof(*l));
	rc = policy_connect_globs(p, &l->connect, &l->nconnect);
	if (rc < 0)
		return rc;
	l->exec = calloc(n + 1, sizeof(*l->exec));
	if (!l->exec && n)
		return -ENOMEM;
	for (i = 0; i < n; i++, l->nexec++) {
		l->exec[i] = exec_glob(g[i], ws);
		if (!l->exec[i]) {
			sup_lists_free(l);
			return -ENOMEM;
		}
	}
	return 0;
}

/* Append s (taken) to the NULL-terminated array *v of *n. */
static int push(char ***v, size_t *n, char *s)
{
	char **nv = s ? realloc(*v, (*n + 2) * sizeof(**v)) : NULL;

	if (!nv) {
		free(s);
		return -ENOMEM;
	}
	nv[(*n)++] = s;
	nv[*n] = NULL;
	*v = nv;
	return 0;
}

int sup_lists_add(struct sup_lists *l, bool exec, const char *glob, const char *ws)
{
	if (exec)
		return push(&l->exec, &l->nexec, exec_glob(glob, ws));
	return push(&l->connect, &l->nconnect, strdup(glob));
}

void sup_lists_free(struct sup_lists *l)
{
	size_t i;

	policy_connect_free(l->connect, l->nconnect);
	for (i = 0; i < l->nexec; i++)
		free(l->exec[i]);
	free(l->exec);
	memset(l, 0, sizeof(*l));
}
