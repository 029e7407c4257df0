/* SPDX-License-Identifier: Apache-2.0 */
/*
 * partial.c - W5 partial update: overwrite SIZE bytes at OFFSET of an
 * existing FILE with fresh bytes and fsync, timed in-process from open to
 * close.
 *
 *   partial FILE OFFSET SIZE
 *
 * Prints the elapsed seconds, or "fails: ERRNAME" and exits 1.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static char buf[1 << 20];
	size_t size;
	off_t off;
	double t0;
	int fd;

	if (argc != 4) {
		fprintf(stderr, "usage: partial FILE OFFSET SIZE\n");
		return 2;
	}
	off = (off_t)atoll(argv[2]);
	size = (size_t)atoll(argv[3]);
	if (size > sizeof(buf))
		size = sizeof(buf);
	srand((unsigned)time(NULL) ^ (unsigned)getpid());
	for (size_t i = 0; i < size; i++)
		buf[i] = (char)rand();
	t0 = now();
	fd = open(argv[1], O_RDWR | O_CLOEXEC);
	if (fd < 0 || pwrite(fd, buf, size, off) != (ssize_t)size ||
	    fsync(fd) < 0 || close(fd) < 0) {
		const char *name = strerrorname_np(errno);

		printf("fails: %s\n", name ? name : "?");
		return 1;
	}
	printf("%.6f\n", now() - t0);
	return 0;
}
