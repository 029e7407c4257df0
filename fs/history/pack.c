// SPDX-License-Identifier: Apache-2.0
/*
 * pack.c - the record of a small commit made durable by the commit's own
 * commit point, with no sync of its own (hist_int.h, "the pack").
 *
 * history_capture writes the pending record's folder as always
 * (manifest.json, objs/p<tino>) but, when it is small, does not fsync it:
 * it copies the manifest and the pre-image bytes into one value, the
 * layer's meta key "hist_pack", put in the commit's own LMDB write
 * transaction - the one that writes the journal, whose sync is the commit
 * point. A commit stopped before that point takes the pack with it; one
 * that passed it has its pack. Once the commit is done and its reply
 * sent, history_sync fsyncs the record's files and folders and drops the
 * pack (an LMDB transaction and its sync). Until then the pack is what a
 * crash recovers the record from: settle (mount, txfs recover) and a
 * recovery's history_link write it back into the record's folder (made
 * again if it is missing) before they read that record, then drop it.
 *
 * pack: a header (struct pack_head; magic TXFSPK3, or TXFSPK2 whose
 * checksum is byte-wise FNV-1a, still read), then a JSON line
 *   {"name": "<id>.pending", "files": [[REL, SIZE, [[OFF, LEN]...]]...]}
 * then the bytes of every [OFF, LEN] of every file, in that order. REL is
 * relative to the record's folder; a file is made SIZE long (a sparse
 * pre-image) and gets the bytes at their offsets. The checksum covers the
 * txid, the length and the body.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../txfs.h"
#include "../layer/layer.h"
#include "hist_int.h"

#define PACK_MAGIC "TXFSPK3"
#define PACK_MAGIC_V2 "TXFSPK2"

struct pack_head {
	char magic[8];
	uint64_t txid;
	uint64_t len;		/* of the body */
	uint64_t sum;		/* pack_sum of txid, len, body */
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ c[i]) * 1099511628211ull;
	return h;
}

/* FNV-1a over 64-bit words (the tail bytes one by one): a W5 pack is
 * 66 KB, hashed before the commit point; byte by byte that took ~90 us */
static uint64_t fnv_words(uint64_t h, const char *p, size_t n)
{
	uint64_t w;

	for (; n >= 8; p += 8, n -= 8) {
		memcpy(&w, p, 8);
		h = (h ^ w) * 1099511628211ull;
	}
	return fnv(h, p, n);
}

/* PK3: fnv_words; PK2 (a pack an older txfs left in the layer): fnv. */
static uint64_t pack_sum(uint64_t txid, uint64_t len, const char *body,
			 bool v2)
{
	uint64_t h = 14695981039346656037ull;

	h = fnv(h, &txid, sizeof(txid));
	h = fnv(h, &len, sizeof(len));
	return v2 ? fnv(h, body, (size_t)len) : fnv_words(h, body, (size_t)len);
}

static int write_all(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		p += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

static int read_all(int fd, void *buf, size_t len, off_t off)
{
	char *p = buf;

	while (len) {
		ssize_t r = pread(fd, p, len, off);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? -errno : -EIO;
		p += r;
		len -= (size_t)r;
		off += r;
	}
	return 0;
}

int hist_put_file(int dfd, const char *name, const char *buf, size_t len)
{
	int fd = openat(dfd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	int rc;

	if (fd < 0)
		return -errno;
	rc = write_all(fd, buf, len, 0);
	close(fd);
	return rc;
}

int hist_put_ranges(int fd, json_t *ranges, const char *data)
{
	json_t *r;
	size_t k;
	int rc = 0;

	json_array_foreach(ranges, k, r) {
		size_t n = (size_t)json_integer_value(json_array_get(r, 1));

		if (rc == 0)
			rc = write_all(fd, data, n,
				       (off_t)json_integer_value(json_array_get(r, 0)));
		data += n;
	}
	return rc;
}

int hist_pack_spill(int objs, json_t *pfiles, const char *mem, bool sync)
{
	json_t *e, *r;
	size_t i, k;
	int fd, rc = 0;

	json_array_foreach(pfiles, i, e) {
		json_t *ranges = json_array_get(e, 2);

		fd = openat(objs, json_string_value(json_array_get(e, 0)),
			    O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			return -errno;
		if (ftruncate(fd, (off_t)json_integer_value(json_array_get(e, 1))))
			rc = -errno;
		if (rc == 0)
			rc = hist_put_ranges(fd, ranges, mem);
		if (rc == 0 && sync && fsync(fd))
			rc = -errno;
		close(fd);
		if (rc)
			return rc;
		json_array_foreach(ranges, k, r)
			mem += (size_t)json_integer_value(json_array_get(r, 1));
	}
	return 0;
}

int hist_pack_build(uint64_t txid, const char *pend, int dfd,
		    const char *manifest, size_t mlen, json_t *pfiles,
		    const char *mem, char **out, size_t *outlen)
{
	struct pack_head h = { .magic = PACK_MAGIC, .txid = txid };
	json_t *files = json_array(), *e, *r, *head = NULL;
	char *hs = NULL, *buf = NULL;
	size_t i, k, total = 0, hl, off;
	int pf, rc = -ENOMEM;

	if (!files || json_array_append_new(files, json_pack("[sI[[II]]]",
				HIST_MANIFEST, (json_int_t)mlen, 0, (json_int_t)mlen)))
		goto out;
	total = mlen;
	json_array_foreach(pfiles, i, e) {	/* [name, size, ranges] */
		char rel[64];

		snprintf(rel, sizeof(rel), "objs/%s", json_string_value(json_array_get(e, 0)));
		if (json_array_append_new(files, json_pack("[sOO]", rel,
				json_array_get(e, 1), json_array_get(e, 2))))
			goto out;
		json_array_foreach(json_array_get(e, 2), k, r)
			total += (size_t)json_integer_value(json_array_get(r, 1));
	}
	head = json_pack("{sssO}", "name", pend, "files", files);
	hs = head ? json_dumps(head, JSON_COMPACT) : NULL;
	if (!hs)
		goto out;
	hl = strlen(hs);
	h.len = hl + 1 + total;
	buf = malloc(sizeof(h) + h.len);
	if (!buf)
		goto out;
	off = sizeof(h);
	memcpy(buf + off, hs, hl);
	buf[off + hl] = '\n';
	off += hl + 1;
	memcpy(buf + off, manifest, mlen);
	off += mlen;
	rc = 0;
	if (mem)	/* a lazy record's pre-images, in the same order */
		memcpy(buf + off, mem, total - mlen);
	json_array_foreach(pfiles, i, e) {
		if (mem)
			break;
		char rel[64];

		snprintf(rel, sizeof(rel), "objs/%s", json_string_value(json_array_get(e, 0)));
		if ((pf = openat(dfd, rel, O_RDONLY | O_CLOEXEC)) < 0) {
			rc = -errno;
			goto out;
		}
		json_array_foreach(json_array_get(e, 2), k, r) {
			size_t n = (size_t)json_integer_value(json_array_get(r, 1));

			if (rc == 0)
				rc = read_all(pf, buf + off, n,
					      (off_t)json_integer_value(json_array_get(r, 0)));
			off += n;
		}
		close(pf);
		if (rc)
			goto out;
	}
	h.sum = pack_sum(txid, h.len, buf + sizeof(h), false);
	memcpy(buf, &h, sizeof(h));
	*out = buf;
	*outlen = sizeof(h) + h.len;
	buf = NULL;
out:
	free(buf);
	free(hs);
	json_decref(head);
	json_decref(files);
	return rc;
}

/* Write one file of the pack back into the record folder dfd. */
static int restore_file(int dfd, json_t *f, const char **data, uint64_t txid)
{
	const char *rel = json_string_value(json_array_get(f, 0));
	json_t *ranges = json_array_get(f, 2), *r, *doc;
	size_t k, all = 0;
	int fd, rc = 0;

	json_array_foreach(ranges, k, r)
		all += (size_t)json_integer_value(json_array_get(r, 1));
	if (!rel || strstr(rel, ".."))
		return -EINVAL;
	if (!strcmp(rel, HIST_MANIFEST)) {
		/* a manifest that reads whole is the newer one (finish may
		 * have added post states, an undo its mark): kept */
		doc = hist_load(dfd, ".");
		if (doc && (uint64_t)hist_i64(doc, "txid") == txid) {
			json_decref(doc);
			*data += all;
			return 0;
		}
		json_decref(doc);
	}
	fd = openat(dfd, rel, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)json_integer_value(json_array_get(f, 1))))
		rc = -errno;
	if (rc == 0)
		rc = hist_put_ranges(fd, ranges, *data);
	*data += all;
	if (rc == 0 && fsync(fd))
		rc = -errno;
	close(fd);
	return rc;
}

int hist_pack_apply(int hfd, const void *pack, size_t plen)
{
	struct pack_head h;
	char *body = NULL, fin[40], pend[40];
	const char *data, *name;
	json_t *head = NULL, *f;
	int dfd = -1, ofd, rc = -EINVAL;
	size_t i;
	bool v2;

	if (plen < sizeof(h))
		return -EINVAL;
	memcpy(&h, pack, sizeof(h));
	v2 = !memcmp(h.magic, PACK_MAGIC_V2, 8);
	if ((!v2 && memcmp(h.magic, PACK_MAGIC, 8)) || h.len != plen - sizeof(h))
		return -EINVAL;
	body = malloc((size_t)h.len + 1);
	if (!body)
		return -ENOMEM;
	memcpy(body, (const char *)pack + sizeof(h), (size_t)h.len);
	if (pack_sum(h.txid, h.len, body, v2) != h.sum)
		goto out;
	body[h.len] = 0;
	data = memchr(body, '\n', (size_t)h.len);
	head = data ? json_loadb(body, (size_t)(data - body), 0, NULL) : NULL;
	name = hist_str(head, "name");
	if (!name || strlen(name) != 24)
		goto out;
	data++;
	snprintf(pend, sizeof(pend), "%s", name);
	snprintf(fin, sizeof(fin), "%.16s", name);
	/* final already (finish renamed it), or still pending (made again
	 * if the crash lost it) */
	dfd = openat(hfd, fin, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (mkdirat(hfd, pend, 0700) && errno != EEXIST) {
			rc = -errno;
			goto out;
		}
		dfd = openat(hfd, pend, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (dfd < 0 || (mkdirat(dfd, "objs", 0700) && errno != EEXIST)) {
		rc = -errno;
		goto out;
	}
	rc = 0;
	json_array_foreach(json_object_get(head, "files"), i, f)
		if (rc == 0)
			rc = restore_file(dfd, f, &data, h.txid);
	ofd = openat(dfd, "objs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rc == 0 && (ofd < 0 || fsync(ofd) || fsync(dfd) || fsync(hfd)))
		rc = -errno;
	if (ofd >= 0)
		close(ofd);
out:
	if (dfd >= 0)
		close(dfd);
	json_decref(head);
	free(body);
	return rc;
}

int hist_pack_drop(struct txfs *fs, struct layer_txn *t)
{
	struct layer_txn *own = NULL;
	int rc;

	if (!t && (rc = layer_begin(fs->layer, true, &own)))
		return rc;
	rc = layer_meta_del(t ? t : own, HIST_PACK_KEY);
	if (rc == -ENOENT)
		rc = 0;
	if (own && rc == 0 && (rc = layer_commit(own)) == 0)
		return layer_sync(fs->layer);
	if (own && rc)
		layer_txn_end(own);
	return rc;
}

bool hist_pack_present(struct txfs *fs)
{
	struct layer_txn *t;
	const void *v;
	size_t len;
	bool yes;

	if (layer_begin(fs->layer, false, &t))
		return false;
	yes = layer_meta_get(t, HIST_PACK_KEY, &v, &len) == 0;
	layer_txn_end(t);
	return yes;
}

int hist_pack_restore(struct txfs *fs, int hfd)
{
	struct layer_txn *t;
	const void *v;
	void *copy = NULL;
	size_t len = 0;
	int rc = layer_begin(fs->layer, false, &t);

	if (rc)
		return rc;
	rc = layer_meta_get(t, HIST_PACK_KEY, &v, &len);
	if (rc == 0 && !(copy = malloc(len ? len : 1)))
		rc = -ENOMEM;
	else if (rc == 0)
		memcpy(copy, v, len);
	layer_txn_end(t);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	/* its commit passed its commit point (the pack is in the same
	 * transaction as the journal): the record written back, durable,
	 * then the pack dropped (one that is not whole, dropped too) */
	rc = hist_pack_apply(hfd, copy, len);
	free(copy);
	/* history/ may be new (a lazy record's, made by the recovery):
	 * its name durable before the pack goes */
	if (rc == 0 && fsync(fs->statefd))
		rc = -errno;
	if (rc == 0 || rc == -EINVAL)
		rc = hist_pack_drop(fs, NULL);
	return rc;
}
