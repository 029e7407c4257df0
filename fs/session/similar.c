/* SPDX-License-Identifier: Apache-2.0 */
/*
 * similar.c - renames found by content, as git finds them: a file that
 * was renamed and then replaced by rename (`mv a b; sed -i ... b`, an
 * editor saving the renamed file) leaves nothing in the layer that ties
 * the new file to the old one: the old object is deleted at its old path
 * ("D a") and a new object is created at the new one ("A b"). When the
 * two are regular files and at least half of the bytes of the larger are
 * lines they share (git's default similarity for rename detection), they
 * are one change "R a -> b" (and txfs diff shows the rename with a hunk).
 *
 * Only the deletions and creations chg_pair left unpaired are compared,
 * only when the old content is the real file's (c->real_data) and the new
 * one a file born in the layer (c->tino), both at most SIM_MAX_BYTES, at
 * most SIM_MAX_FILES of each, and only files with a partner of a size
 * that could score (the smaller at least half the larger): a status read
 * costs at most a few small reads, and none in the usual case.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "session.h"

#define SIM_MAX_BYTES (256u << 10)
#define SIM_MAX_FILES 16
#define SIM_MIN_SCORE 50	/* percent */

/* The lines of one file: a hash and a length each, sorted by hash. */
struct lines {
	uint64_t *h;	/* hash << 20 | length */
	size_t n;
	uint64_t size;
	bool ok;
};

static int line_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Split buf into lines: FNV-1a hashes, the line's length in the low 20
 * bits of the key (a line is at most SIM_MAX_BYTES). */
static int lines_of(const char *buf, size_t size, struct lines *l)
{
	size_t cap = 64;

	memset(l, 0, sizeof(*l));
	l->h = malloc(cap * sizeof(*l->h));
	if (!l->h)
		return -ENOMEM;
	for (size_t i = 0; i < size;) {
		const char *e = memchr(buf + i, '\n', size - i);
		size_t n = e ? (size_t)(e - (buf + i)) + 1 : size - i;
		uint64_t h = 1469598103934665603ULL;

		for (size_t k = 0; k < n; k++)
			h = (h ^ (unsigned char)buf[i + k]) * 1099511628211ULL;
		if (l->n == cap) {
			uint64_t *v = realloc(l->h, (cap *= 2) * sizeof(*v));

			if (!v)
				return -ENOMEM;
			l->h = v;
		}
		l->h[l->n++] = (h << 20) | (n & 0xfffff);
		i += n;
	}
	qsort(l->h, l->n, sizeof(*l->h), line_cmp);
	l->size = size;
	l->ok = true;
	return 0;
}

/* Percent of the larger file's bytes in lines both have. */
static unsigned score(const struct lines *a, const struct lines *b)
{
	uint64_t common = 0, big = a->size > b->size ? a->size : b->size;
	size_t i = 0, j = 0;

	if (!big)
		return 0;
	while (i < a->n && j < b->n) {
		if (a->h[i] == b->h[j]) {
			common += a->h[i] & 0xfffff;
			i++, j++;
		} else if (a->h[i] < b->h[j]) {
			i++;
		} else {
			j++;
		}
	}
	return (unsigned)(common * 100 / big);
}

/* The real file path (at most SIM_MAX_BYTES). */
static char *read_real(struct txfs *fs, const char *path, size_t *len)
{
	int fd = lower_open(fs, path, O_RDONLY);
	char *buf = fd >= 0 ? malloc(SIM_MAX_BYTES) : NULL;
	ssize_t n = 0;

	*len = 0;
	while (buf && *len < SIM_MAX_BYTES &&
	       (n = read(fd, buf + *len, SIM_MAX_BYTES - *len)) > 0)
		*len += (size_t)n;
	if (fd >= 0)
		close(fd);
	if (buf && (n < 0 || *len == SIM_MAX_BYTES)) {
		free(buf);	/* unreadable, or too big to compare */
		buf = NULL;
	}
	return buf;
}

/* A file born in the layer: its chunks (zeros where there are none). */
static char *read_born(struct layer_txn *t, uint64_t tino, uint64_t size)
{
	char *buf = size <= SIM_MAX_BYTES ? calloc(1, size ? size : 1) : NULL;

	for (uint64_t b = 0; buf && b * LAYER_BLOCK < size; b++) {
		uint64_t off = b * LAYER_BLOCK;
		const void *data;
		size_t len, room = (size_t)(size - off);
		int rc = layer_chunk_get(t, tino, b, &data, &len);

		if (rc == 0)
			memcpy(buf + off, data, len < room ? len : room);
		else if (rc != -ENOENT) {
			free(buf);
			buf = NULL;
		}
	}
	return buf;
}

/* Could files of these sizes share half the larger's bytes? */
static bool may_score(uint64_t x, uint64_t y)
{
	uint64_t big = x > y ? x : y, small = x > y ? y : x;

	return small && big <= SIM_MAX_BYTES &&
	       small * 100 >= big * SIM_MIN_SCORE;
}

static void lines_free(struct lines *l)
{
	free(l->h);
	memset(l, 0, sizeof(*l));
}

int chg_similar(struct txfs *fs, struct layer_txn *now, struct chg_list *l)
{
	struct chg *d[SIM_MAX_FILES], *a[SIM_MAX_FILES];
	uint64_t dsize[SIM_MAX_FILES];
	struct lines ld[SIM_MAX_FILES] = { 0 }, la[SIM_MAX_FILES] = { 0 };
	size_t nd = 0, na = 0;
	unsigned dm = 0, am = 0;	/* which to read */
	struct layer_txn *own = NULL;
	int rc = 0;

	for (size_t i = 0; i < l->n; i++) {
		struct chg *c = &l->v[i];
		struct stat st;

		if (!S_ISREG(c->type))
			continue;
		if (c->kind == 'D' && c->real_data && c->lower && c->one_name &&
		    lower_stat(fs, c->lower, &st) == 0 && st.st_nlink == 1) {
			if (nd == SIM_MAX_FILES)
				return 0;	/* too many: left as they are */
			dsize[nd] = (uint64_t)st.st_size;
			d[nd++] = c;
		} else if (c->kind == 'A' && c->tino) {
			if (na == SIM_MAX_FILES)
				return 0;
			a[na++] = c;
		}
	}
	if (!nd || !na)
		return 0;
	for (size_t i = 0; i < nd; i++)
		for (size_t j = 0; j < na; j++)
			if (may_score(dsize[i], a[j]->size))
				dm |= 1u << i, am |= 1u << j;
	if (!dm)
		return 0;
	if (!now && (rc = layer_begin(fs->layer, false, &own)))
		return rc;
	for (size_t i = 0; i < nd && rc == 0; i++) {
		size_t len;
		char *buf = dm & (1u << i) ? read_real(fs, d[i]->lower, &len) :
					     NULL;

		if (buf)
			rc = lines_of(buf, len, &ld[i]);
		free(buf);
	}
	for (size_t j = 0; j < na && rc == 0; j++) {
		char *buf = am & (1u << j) ?
			    read_born(now ? now : own, a[j]->tino, a[j]->size) :
			    NULL;

		if (buf)
			rc = lines_of(buf, (size_t)a[j]->size, &la[j]);
		free(buf);
	}
	if (own)
		layer_txn_end(own);
	/* greedy, best pair first (as git does) */
	while (rc == 0) {
		unsigned best = SIM_MIN_SCORE - 1, s;
		size_t bi = 0, bj = 0;

		for (size_t i = 0; i < nd; i++)
			for (size_t j = 0; j < na; j++)
				if (ld[i].ok && la[j].ok && d[i]->kind == 'D' &&
				    a[j]->kind == 'A' &&
				    (s = score(&ld[i], &la[j])) > best)
					best = s, bi = i, bj = j;
		if (best < SIM_MIN_SCORE)
			break;
		d[bi]->kind = 'R';	/* at the old file's place */
		d[bi]->new = a[bj]->new;
		a[bj]->kind = 0;
	}
	for (size_t i = 0; i < SIM_MAX_FILES; i++) {
		lines_free(&ld[i]);
		lines_free(&la[i]);
	}
	return rc;
}
