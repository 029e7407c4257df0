/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lerr.c - LMDB's return codes as negative errnos: the one place they are
 * mapped, so no LMDB code leaves the layer module (layer.h).
 */
#include <errno.h>
#include <lmdb.h>
#include <stdio.h>
#include <sys/statvfs.h>

#include "layer_int.h"

/* Map an LMDB return code to a negative errno. */
int lerr(int rc)
{
	switch (rc) {
	case MDB_SUCCESS:
		return 0;
	case MDB_NOTFOUND:
		return -ENOENT;
	case MDB_MAP_FULL:
	case MDB_TXN_FULL:
	case MDB_PAGE_FULL:
		return -ENOSPC;
	case MDB_READERS_FULL:
		return -EAGAIN;
	case MDB_KEYEXIST:
		return -EEXIST;
	default:
		if (rc > 0 && rc < 4096)
			return -rc; /* a system errno, e.g. ENOSPC, EIO */
		fprintf(stderr, "txfs: layer: %s\n", mdb_strerror(rc));
		return -EIO;
	}
}

/* Free space below which a failed page write means a full disk: more
 * than the largest write transaction (a 1 MiB FUSE write and its pages). */
#define LAYER_FULL_SLACK (4ULL << 20)

/* Is the file system of the layer's data file (nearly) full? */
static bool layer_disk_full(struct layer *l)
{
	struct statvfs sv;
	mdb_filehandle_t fd;

	if (mdb_env_get_fd(l->env, &fd) || fstatvfs(fd, &sv))
		return false;
	return (uint64_t)sv.f_bavail * sv.f_frsize < LAYER_FULL_SLACK;
}

int lerr_commit(struct layer *l, int rc)
{
	return rc == -EIO && layer_disk_full(l) ? -ENOSPC : rc;
}
