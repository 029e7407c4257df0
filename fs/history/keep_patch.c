// SPDX-License-Identifier: Apache-2.0
/*
 * keep_patch.c - the pre-images of a file patched in place (keep.c's
 * capture): the old bytes of the blocks the commit overwrites, in memory
 * while the record is lazy (it goes whole into the pack, pack.c, and its
 * folder is written once the commit answered), or in objs/p<tino> once
 * the record has a folder (a link, a copy or a moved file needs one, or
 * the pre-images pass HIST_PACK_MAX).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "keep_int.h"

/* The record's folder and objs/, made now if the record was lazy so far:
 * the pre-images read into memory are written out (mem stays until the
 * caller frees it). */
int hist_cap_dir(struct cap *c)
{
	if (c->objs >= 0)
		return 0;
	c->lazy = false;
	if (c->hfd < 0) {	/* history/ is new: synced with the record */
		if ((c->hfd = hist_open(c->fs->statefd, true)) < 0)
			return c->hfd;
		c->fs->hist_new_dir = true;
	}
	if (mkdirat(c->hfd, c->pend, 0700) ||
	    (c->dfd = openat(c->hfd, c->pend, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0 ||
	    mkdirat(c->dfd, "objs", 0700) ||
	    (c->objs = openat(c->dfd, "objs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return -errno;
	return hist_pack_spill(c->objs, c->pfiles, c->mem, false);
}

/* [off, off + n) of src into buf; what the file no longer has (it is
 * shorter now) reads as zeros, as a hole would. */
static int read_old(int src, char *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = pread(src, buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		got += (size_t)r;
	}
	memset(buf + got, 0, n - got);
	return 0;
}

/* [off, end) kept: appended to ranges, or the last range grown when it
 * ends at off (a long tail is kept in pieces, one range). */
static int add_range(json_t *ranges, uint64_t off, uint64_t end)
{
	json_t *last = json_array_get(ranges, json_array_size(ranges) - 1);

	if (last && (uint64_t)(json_integer_value(json_array_get(last, 0)) +
			       json_integer_value(json_array_get(last, 1))) == off)
		return json_array_set_new(last, 1, json_integer(
			json_integer_value(json_array_get(last, 1)) +
			(json_int_t)(end - off))) ? -ENOMEM : 0;
	return json_array_append_new(ranges, json_pack("[II]", (json_int_t)off,
					      (json_int_t)(end - off))) ? -ENOMEM : 0;
}

/* One pre-image file on its way: objs/name (fd, or -1 while the record
 * is lazy and its bytes go to memory from start), its ranges, its size. */
struct pfile {
	const char *name;
	int fd;
	json_t *ranges;
	size_t start;
	uint64_t size;
};

/* The old bytes buf of [from, to): into the lazy record's memory, or
 * into objs/name (opened here when the memory would pass HIST_PACK_MAX:
 * the record gets its folder, hist_cap_dir, and the file the ranges it
 * had in memory). Then the range is the file's. */
static int keep_bytes(struct cap *c, struct pfile *f, const char *buf,
		      uint64_t from, uint64_t to)
{
	size_t n = (size_t)(to - from);
	int rc;

	if (c->lazy && c->mlen + n > HIST_PACK_MAX) {
		if ((rc = hist_cap_dir(c)))
			return rc;
		f->fd = openat(c->objs, f->name, O_WRONLY | O_CREAT | O_EXCL |
					      O_CLOEXEC, 0600);
		if (f->fd < 0)
			return -errno;
		if ((rc = hist_put_ranges(f->fd, f->ranges, c->mem + f->start)))
			return rc;
	}
	if (!c->lazy) {
		if (pwrite(f->fd, buf, n, (off_t)from) != (ssize_t)n)
			return errno ? -errno : -EIO;
	} else {
		if (c->mlen + n > c->mcap) {
			size_t cap = c->mcap * 2 > c->mlen + n ? c->mcap * 2 :
								 c->mlen + n;
			char *m = realloc(c->mem, cap);

			if (!m)
				return -ENOMEM;
			c->mem = m;
			c->mcap = cap;
		}
		memcpy(c->mem + c->mlen, buf, n);
		c->mlen += n;
	}
	f->size = to > f->size ? to : f->size;
	c->bytes += n;
	return add_range(f->ranges, from, to);
}

#define PAGE 4096u

/* Does page [x, x + n) of the old bytes (old, at from) differ from what
 * the patch writes there: the chunk's bytes, zeros past its end? */
static bool page_differs(const char *old, uint64_t from, uint64_t x, size_t n,
			 const char *data, size_t len)
{
	static const char zero[PAGE];
	size_t at = (size_t)(x - from), in = at < len ? len - at : 0;

	if (in > n)
		in = n;
	return (in && memcmp(old + at, data + at, in)) ||
	       (n > in && memcmp(old + at + in, zero, n - in));
}

/* Block `block` of o at [from, to): the patch writes the chunk there
 * (zeros past its end) below l; the 4 KiB pages whose old bytes differ
 * from that are kept (an editor's 4 KiB change of a 64 KiB block keeps
 * 4 KiB). Past l the tail range keeps the old bytes whole. */
static int keep_block(struct cap *c, struct plan *p, const struct cobj *o,
		      struct pfile *f, int src, char *old, uint64_t block,
		      uint64_t from, uint64_t to, uint64_t l)
{
	uint64_t end = to < l ? to : l, run = 0;
	const void *data;
	size_t len;
	bool in_run = false;
	int rc;

	if (from >= end)
		return 0;
	if ((rc = read_old(src, old, (size_t)(end - from), from)) ||
	    (rc = layer_chunk_get(p->t, o->tino, block, &data, &len)))
		return rc;
	for (uint64_t x = from; x < end; x += PAGE) {
		size_t n = end - x < PAGE ? (size_t)(end - x) : PAGE;
		bool d = page_differs(old, from, x, n, data, len);

		if (d && !in_run)
			run = x;
		if (!d && in_run &&
		    (rc = keep_bytes(c, f, old + (run - from), run, x)))
			return rc;
		in_run = d;
	}
	return in_run ? keep_bytes(c, f, old + (run - from), run, end) : 0;
}

/* A file patched in place: the old bytes of the pages the layer's blocks
 * change, and of what a shrink drops (patch.c's order), into
 * objs/p<tino> (or memory: a lazy record). Not fsync'ed here:
 * write_record makes it durable (in the pack, or itself). Its post state
 * is known now: the same inode, the layer's size, and the mtime the
 * commit's CS_META sets (history_finish checks it, and writes what it
 * finds if it differs). */
int hist_keep_patch(struct cap *c, struct plan *p, const struct cobj *o,
		    const struct stat *st, json_t *obj, const char *name)
{
	uint64_t old = (uint64_t)st->st_size, b = 0, found;
	uint64_t l = o->rec.lower_valid < o->rec.size ? o->rec.lower_valid :
							o->rec.size;
	struct pfile f = { .name = name, .fd = -1, .ranges = json_array(),
			   .start = c->mlen };
	char *buf = malloc(BS);
	int src, rc = 0;
	size_t len;

	src = lower_open(c->fs, o->lower, O_RDONLY);
	if (src < 0 || !f.ranges || !buf) {
		rc = src < 0 ? src : -ENOMEM;
		goto out;
	}
	if (!c->lazy) {
		unlinkat(c->objs, name, 0);
		f.fd = openat(c->objs, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC,
			      0600);
		if (f.fd < 0) {
			rc = -errno;
			goto out;
		}
	}
	while (rc == 0 && layer_chunk_next(p->t, o->tino, b, &found, &len) == 0) {
		uint64_t from = found * BS, to = from + BS < old ? from + BS : old;

		if (from < old)
			rc = keep_block(c, p, o, &f, src, buf, found, from, to, l);
		b = found + 1;
	}
	for (uint64_t x = l; rc == 0 && x < old; x += BS) {	/* the tail */
		uint64_t to = x + BS < old ? x + BS : old;

		if ((rc = read_old(src, buf, (size_t)(to - x), x)) == 0)
			rc = keep_bytes(c, &f, buf, x, to);
	}
	if (rc == 0 && json_array_append_new(c->pfiles, json_pack("[sIO]", name,
			(json_int_t)f.size, f.ranges)))
		rc = -ENOMEM;
	for (size_t i = 0; rc == 0 && i < json_array_size(f.ranges); i++)
		c->pbytes += (uint64_t)json_integer_value(json_array_get(
					json_array_get(f.ranges, i), 1));
	if (rc == 0 && (json_object_set(obj, "ranges", f.ranges) ||
			json_object_set_new(obj, "new_size",
					    json_integer((json_int_t)o->rec.size)) ||
			json_object_set_new(obj, "post_st", json_pack("{sIsssIsI}",
				"ino", (json_int_t)st->st_ino, "type", "f", "size",
				(json_int_t)o->rec.size, "mtime",
				(json_int_t)o->rec.mtime_ns))))
		rc = -ENOMEM;
out:
	if (f.fd >= 0)
		close(f.fd);
	if (src >= 0)
		close(src);
	json_decref(f.ranges);
	free(buf);
	return rc;
}
