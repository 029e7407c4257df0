/* SPDX-License-Identifier: Apache-2.0 */
/*
 * keep_int.h - what keep.c and keep_patch.c share: the state of one
 * capture (history_capture). Private to those two files.
 */
#ifndef TXFS_HISTORY_KEEP_INT_H
#define TXFS_HISTORY_KEEP_INT_H

#include "../commit/commit.h"
#include "hist_int.h"

#define BS ((uint64_t)LAYER_BLOCK)

struct cap {
	struct txfs *fs;
	int hfd;		/* history/ */
	const char *pend;	/* the record's name there */
	int dfd, objs;		/* pending/ and pending/objs, or -1: not made
				 * yet (lazy) */
	json_t *objects, *names;
	json_t *later;		/* [name, path, ino]: links after the commit point */
	json_t *pfiles;		/* [name, size, ranges]: the pre-images p<tino> */
	uint64_t bytes, nkept, pbytes;
	unsigned nnames;
	bool copied;		/* a copy was made (keep_copy): no pack */
	/* lazy: the record has no folder yet; the pre-images' bytes are in
	 * mem (pfiles' ranges, in order) and go into the pack, and the
	 * folder is written from the pack once the commit answered
	 * (history_sync). Only a record of pre-images (no link, copy or
	 * moved file: those need objs/ at once) of at most HIST_PACK_MAX. */
	bool lazy;
	char *mem;
	size_t mlen, mcap;
};

/* keep_patch.c: the record's folder and objs/, made now if the record
 * was lazy so far: the pre-images read into memory are written out (mem
 * stays until the capture frees it). */
int hist_cap_dir(struct cap *c);
/* keep_patch.c: the old bytes of the blocks an in-place patch of o
 * overwrites, kept as name (objs/name, or memory), their ranges and the
 * file's post state set in obj. */
int hist_keep_patch(struct cap *c, struct plan *p, const struct cobj *o,
		    const struct stat *st, json_t *obj, const char *name);

#endif /* TXFS_HISTORY_KEEP_INT_H */
