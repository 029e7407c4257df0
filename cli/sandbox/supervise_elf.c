// SPDX-License-Identifier: Apache-2.0
/*
 * supervise_elf.c - the ELF program interpreter (PT_INTERP) of a file, as
 * the kernel reads it at exec (fs/binfmt_elf.c, load_elf_binary): the
 * first PT_INTERP program header, its p_filesz bytes at p_offset, at least
 * 2 and at most PATH_MAX, the last one NUL. The kernel opens that file
 * (open_exec: absolute, or relative to the caller's current folder, not
 * to an execveat dirfd) and maps it itself, with no mmap(2) the seccomp
 * filter would see, so supervise_exec.c judges it like the program.
 *
 * 32- and 64-bit, little- and big-endian headers are read (the kernel
 * runs only its own kinds; reading more only ever refuses more).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "supervise_int.h"

#define EI_NIDENT 16
#define PT_INTERP_TYPE 3

static uint64_t get(const unsigned char *p, size_t n, bool be)
{
	uint64_t v = 0;
	size_t i;

	for (i = 0; i < n; i++)
		v |= (uint64_t)p[be ? n - 1 - i : i] << (8 * i);
	return v;
}

/* Bytes at off of rfd, exactly n: 0, -EIO when short, or -errno. */
static int read_at(int rfd, void *buf, size_t n, uint64_t off)
{
	ssize_t r;

	if (off > (uint64_t)INT64_MAX)
		return -EIO;
	r = pread(rfd, buf, n, (off_t)off);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

int sup_elf_interp(int fd, char *interp, size_t size)
{
	unsigned char eh[64], ph[56];
	char link[64];
	uint64_t phoff, off, fsz;
	unsigned phentsize, phnum, i;
	bool is64, be;
	int rfd, rc;

	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	rfd = open(link, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (rfd < 0)
		return -errno;
	rc = read_at(rfd, eh, EI_NIDENT, 0);
	if (rc < 0 || memcmp(eh, "\177ELF", 4) != 0 || (eh[4] != 1 && eh[4] != 2) ||
	    (eh[5] != 1 && eh[5] != 2)) {
		rc = rc == -EIO ? 0 : rc;	/* short or not ELF: not ours */
		goto out;
	}
	is64 = eh[4] == 2;
	be = eh[5] == 2;
	rc = read_at(rfd, eh, is64 ? 64 : 52, 0);
	if (rc < 0) {
		rc = rc == -EIO ? 0 : rc;
		goto out;
	}
	phoff = is64 ? get(eh + 32, 8, be) : get(eh + 28, 4, be);
	phentsize = (unsigned)get(eh + (is64 ? 54 : 42), 2, be);
	phnum = (unsigned)get(eh + (is64 ? 56 : 44), 2, be);
	rc = 0;
	if (phentsize != (is64 ? 56u : 32u))
		goto out;	/* the kernel: ENOEXEC */
	for (i = 0; i < phnum; i++) {
		rc = read_at(rfd, ph, phentsize, phoff + (uint64_t)i * phentsize);
		if (rc < 0) {
			rc = rc == -EIO ? 0 : rc;
			goto out;
		}
		if (get(ph, 4, be) != PT_INTERP_TYPE)
			continue;
		off = is64 ? get(ph + 8, 8, be) : get(ph + 4, 4, be);
		fsz = is64 ? get(ph + 32, 8, be) : get(ph + 16, 4, be);
		if (fsz < 2 || fsz > PATH_MAX)
			goto out;	/* the kernel: ENOEXEC */
		if (fsz > size) {
			rc = -ENAMETOOLONG;
			goto out;
		}
		rc = read_at(rfd, interp, (size_t)fsz, off);
		if (rc < 0) {
			rc = rc == -EIO ? 0 : rc;	/* the kernel: EIO */
			goto out;
		}
		rc = interp[fsz - 1] == '\0' && interp[0] != '\0';
		goto out;	/* the first PT_INTERP only, as the kernel */
	}
out:
	close(rfd);
	return rc;
}
