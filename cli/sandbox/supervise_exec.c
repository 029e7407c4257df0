// SPDX-License-Identifier: Apache-2.0
/*
 * supervise_exec.c - `exec deny` by identity (txfs.policy(5)): the content
 * hashes (SHA-256) of the files the rules name, taken when the supervisor
 * is prepared and again when one of them changes, and the execve/execveat
 * handler that refuses any regular file with such content. Only files whose
 * size equals a forbidden size are read. The exec itself cannot be
 * performed on the target's behalf, so an allowed exec continues in the
 * kernel (the documented check-then-exec window).
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

/*
 * execve(path, ...) / execveat(dirfd, path, ..., flags). The kernel
 * continues unless the file's content is forbidden. Returns 1 (replied) or
 * a negative errno to reply.
 */
int sup_handle_exec(struct sup_call *c)
{
	const __u64 *a = c->n.data.args;
	bool at = c->n.data.nr == SCMP_SYS(execveat);
	uint64_t flags = at ? a[4] : 0;
	char path[PATH_MAX], real[PATH_MAX];
	int fd, rc;

	if (sup_read_str(c, at ? a[1] : a[0], path, sizeof(path)) < 0)
		return sup_continue(c->s, c->n.id), 1;	/* the kernel fails it */
	if (path[0] == '\0' && (flags & AT_EMPTY_PATH))
		fd = sup_getfd(c, a[0]);
	else
		fd = sup_open_at(c, at ? a[0] : (uint64_t)(int64_t)AT_FDCWD, path,
				 O_PATH | ((flags & AT_SYMLINK_NOFOLLOW) ? O_NOFOLLOW : 0));
	if (fd < 0)
		return sup_continue(c->s, c->n.id), 1;
	rc = named_file(c->s, fd) ? 0 : forbidden_content(c->s, fd);
	if (rc != 0) {
		if (sup_fd_path(fd, real, sizeof(real)) < 0)
			snprintf(real, sizeof(real), "%s", path);
		close(fd);
		return sup_veto(c->s, c, "exec", real, rc > 0 ?
				"same content as a file of an `exec deny` rule" :
				"it cannot be read to compare with `exec deny` files");
	}
	close(fd);
	return sup_continue(c->s, c->n.id), 1;
}

