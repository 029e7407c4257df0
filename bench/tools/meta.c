/* SPDX-License-Identifier: Apache-2.0 */
/*
 * meta.c - W6 metadata workload: create, stat or unlink NDIRS*NFILES empty
 * files in DIR/d000..., timed in-process so that no shell or interpreter
 * start-up is measured.
 *
 *   meta create|stat|unlink DIR NDIRS NFILES
 *
 * Prints the elapsed seconds on stdout and exits 0, or prints
 * "fails: ERRNAME at N" and exits 1 at the first failing call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int fail(long done)
{
	const char *name = strerrorname_np(errno);

	printf("fails: %s at %ld\n", name ? name : "?", done);
	return 1;
}

static int one(const char *op, const char *path)
{
	struct stat st;
	int fd;

	if (strcmp(op, "create") == 0) {
		fd = open(path, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0644);
		return fd < 0 ? -1 : close(fd);
	}
	if (strcmp(op, "stat") == 0)
		return stat(path, &st);
	return unlink(path);
}

int main(int argc, char **argv)
{
	char path[4096];
	long ndirs, nfiles, done = 0;
	double t0;

	if (argc != 5) {
		fprintf(stderr, "usage: meta create|stat|unlink DIR NDIRS NFILES\n");
		return 2;
	}
	ndirs = atol(argv[3]);
	nfiles = atol(argv[4]);
	t0 = now();
	for (long d = 0; d < ndirs; d++) {
		snprintf(path, sizeof(path), "%s/d%03ld", argv[2], d);
		if (strcmp(argv[1], "create") == 0 && mkdir(path, 0755) < 0)
			return fail(done);
		for (long i = 0; i < nfiles; i++, done++) {
			snprintf(path, sizeof(path), "%s/d%03ld/f%05ld", argv[2], d, i);
			if (one(argv[1], path) < 0)
				return fail(done);
		}
	}
	printf("%.6f\n", now() - t0);
	return 0;
}
