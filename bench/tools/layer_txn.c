/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layer_txn.c - the layer's write transactions of W6 without FUSE (issue
 * 11): N creates (counters charge, alloc_ino, inode put, dirent put, the
 * parent's update), then N unlinks (dirent and inode deleted, the
 * parent's update), one LMDB write transaction each, in 100 folders.
 * Prints the CPU seconds (user + sys) of each phase: far less noisy than
 * daemon µs on a shared machine, and it isolates a change of the layer.
 *
 *   cc -O2 -D_GNU_SOURCE -Ifs -o /tmp/layer_txn bench/tools/layer_txn.c \
 *      fs/layer/layer.c fs/layer/undo.c fs/layer/reserve.c fs/layer/layer_chunk.c -llmdb -lpthread
 *   /tmp/layer_txn EMPTY_DIR N          (CREATE_ONLY=1: skip the unlinks)
 *
 * Compare two trees by building each one's fs/ sources and running the
 * binaries in alternation on fresh folders.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "layer/layer.h"

#define NDIRS 100

static double cpu(void)
{
	struct rusage r;

	getrusage(RUSAGE_SELF, &r);
	return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) +
	       (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e6;
}

/* Commit t if rc is 0, else end it; rc or the commit's result. */
static int finish(struct layer_txn *t, int rc)
{
	if (rc) {
		layer_txn_end(t);
		return rc;
	}
	return layer_commit(t);
}

/* Begin a write transaction for file number i: its name into nm, and
 * the folder's new mtime into drec. */
static int start(struct layer *l, struct layer_inode *drec, int i,
		 char nm[32], struct layer_txn **t)
{
	snprintf(nm, 32, "f%06d", i);
	drec->mtime_ns = i;
	return layer_begin(l, true, t);
}

static int create_one(struct layer *l, uint64_t dir, struct layer_inode *drec,
		      int i, uint64_t *tino)
{
	struct layer_inode r = { .mode = S_IFREG | 0644, .nlink = 1 };
	struct layer_dirent de = { .type = S_IFREG };
	struct layer_counters c;
	struct layer_txn *t;
	char nm[32];
	int rc = start(l, drec, i, nm, &t);

	if (rc)
		return rc;
	if ((rc = layer_counters_get(t, &c)) == 0 && ++c.files &&
	    (rc = layer_counters_put(t, &c)) == 0 &&
	    (rc = layer_alloc_ino(t, &de.tino)) == 0 &&
	    (rc = layer_inode_put(t, de.tino, &r, NULL, NULL)) == 0 &&
	    (rc = layer_dirent_put(t, dir, nm, strlen(nm), &de)) == 0)
		rc = layer_inode_update(t, dir, drec);
	*tino = de.tino;
	return finish(t, rc);
}

static int unlink_one(struct layer *l, uint64_t dir, struct layer_inode *drec,
		      int i, uint64_t tino)
{
	struct layer_txn *t;
	char nm[32];
	int rc = start(l, drec, i, nm, &t);

	if (rc)
		return rc;
	if ((rc = layer_dirent_del(t, dir, nm, strlen(nm))) == 0 &&
	    (rc = layer_inode_del(t, tino)) == 0)
		rc = layer_inode_update(t, dir, drec);
	return finish(t, rc);
}

int main(int argc, char **argv)
{
	struct layer_ws ws = { .dev = 1, .ino = 2, .path = "/ws" };
	struct layer_inode drec = { .mode = S_IFDIR | 0755, .nlink = 2 };
	uint64_t dirs[NDIRS], *tinos;
	struct layer_txn *t;
	struct layer *l;
	const char *why = "";
	double c0, c1, c2;
	int n, dfd;

	if (argc != 3 || (n = atoi(argv[2])) < NDIRS) {
		fprintf(stderr, "usage: layer_txn EMPTY_DIR N (N >= %d)\n",
			NDIRS);
		return 2;
	}
	dfd = open(argv[1], O_RDONLY | O_DIRECTORY);
	tinos = calloc((size_t)n, sizeof(*tinos));
	if (dfd < 0 || !tinos || layer_open(dfd, "layer", 0, &ws, &l, &why)) {
		fprintf(stderr, "layer_txn: %s: cannot open a layer: %s\n",
			argv[1], why);
		return 1;
	}
	if (layer_begin(l, true, &t))
		return 1;
	for (int d = 0; d < NDIRS; d++)
		if (layer_alloc_ino(t, &dirs[d]) ||
		    layer_inode_put(t, dirs[d], &drec, NULL, NULL))
			return 1;
	if (layer_commit(t))
		return 1;
	c0 = cpu();
	for (int i = 0; i < n; i++)
		if (create_one(l, dirs[i / (n / NDIRS) % NDIRS], &drec, i,
			       &tinos[i])) {
			fprintf(stderr, "layer_txn: create %d failed\n", i);
			return 1;
		}
	c1 = cpu();
	if (getenv("CREATE_ONLY")) {
		printf("create %.3f\n", c1 - c0);
		return 0;
	}
	for (int i = 0; i < n; i++)
		if (unlink_one(l, dirs[i / (n / NDIRS) % NDIRS], &drec, i,
			       tinos[i])) {
			fprintf(stderr, "layer_txn: unlink %d failed\n", i);
			return 1;
		}
	c2 = cpu();
	printf("create %.3f unlink %.3f\n", c1 - c0, c2 - c1);
	layer_close(l);
	close(dfd);
	free(tinos);
	return 0;
}
