/* SPDX-License-Identifier: Apache-2.0 */
/*
 * util.c - the small containers of the policy module.
 *
 * arena: a singly linked list of chunks, newest first; an allocation is
 * carved from the head chunk (aligned to max_align_t) or a new chunk is
 * pushed. Nothing is freed until arena_release(), which frees every chunk.
 *
 * sbuf: buf[0..len) is the text, buf[len] == '\0' whenever buf != NULL.
 * After an allocation failure oom stays set and further appends are
 * dropped, so callers check once at the end.
 *
 * diag: error lines "NAME:LINE:COL: message", at most DIAG_MAX of them
 * followed by one "NAME: too many errors" line; count counts them all.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

#define ARENA_CHUNK 16384

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, cap;
	max_align_t data[];
};

static size_t align_up(size_t n)
{
	size_t a = _Alignof(max_align_t);

	return (n + a - 1) & ~(a - 1);
}

static struct arena_chunk *arena_grow(struct arena *a, size_t size)
{
	size_t cap = size > ARENA_CHUNK ? size : ARENA_CHUNK;
	struct arena_chunk *c = malloc(sizeof(*c) + cap);

	if (!c)
		return NULL;
	c->next = a->head;
	c->used = 0;
	c->cap = cap;
	a->head = c;
	return c;
}

void *arena_alloc(struct arena *a, size_t size)
{
	struct arena_chunk *c = a->head;
	void *p;

	size = align_up(size ? size : 1);
	if (!c || c->cap - c->used < size) {
		c = arena_grow(a, size);
		if (!c)
			return NULL;
	}
	p = (char *)c->data + c->used;
	c->used += size;
	return p;
}

char *arena_strndup(struct arena *a, const char *s, size_t n)
{
	char *d = arena_alloc(a, n + 1);

	if (!d)
		return NULL;
	if (n)
		memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

void arena_release(struct arena *a)
{
	struct arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
}

static bool sbuf_reserve(struct sbuf *b, size_t extra)
{
	size_t cap = b->cap ? b->cap : 64;
	char *nb;

	if (b->oom)
		return false;
	if (b->len + extra < b->cap)
		return true;
	while (cap <= b->len + extra)
		cap *= 2;
	nb = realloc(b->buf, cap);
	if (!nb) {
		b->oom = true;
		return false;
	}
	b->buf = nb;
	b->cap = cap;
	return true;
}

void sbuf_add(struct sbuf *b, const char *s, size_t n)
{
	if (!sbuf_reserve(b, n))
		return;
	if (n)
		memcpy(b->buf + b->len, s, n);
	b->len += n;
	b->buf[b->len] = '\0';
}

void sbuf_addc(struct sbuf *b, char c)
{
	sbuf_add(b, &c, 1);
}

void sbuf_vaddf(struct sbuf *b, const char *fmt, va_list ap)
{
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0 || !sbuf_reserve(b, (size_t)n))
		return;
	vsnprintf(b->buf + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
}

void sbuf_addf(struct sbuf *b, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sbuf_vaddf(b, fmt, ap);
	va_end(ap);
}

char *sbuf_steal(struct sbuf *b)
{
	char *s = b->oom ? NULL : b->buf;

	if (!s && !b->oom)
		s = strdup("");
	if (b->oom)
		free(b->buf);
	*b = (struct sbuf){ 0 };
	return s;
}

void sbuf_release(struct sbuf *b)
{
	free(b->buf);
	*b = (struct sbuf){ 0 };
}

void *vec_push(void *v, size_t *n, size_t *cap, size_t elsize)
{
	void **vp = v;
	char *nv;

	if (*n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 8;

		nv = reallocarray(*vp, ncap, elsize);
		if (!nv)
			return NULL;
		*vp = nv;
		*cap = ncap;
	}
	nv = (char *)*vp + *n * elsize;
	memset(nv, 0, elsize);
	(*n)++;
	return nv;
}

void diag_error(struct diag *d, unsigned line, unsigned col,
		const char *fmt, ...)
{
	va_list ap;

	d->count++;
	if (d->count > DIAG_MAX + 1)
		return;
	if (d->out.len)
		sbuf_addc(&d->out, '\n');
	if (d->count == DIAG_MAX + 1) {
		sbuf_addf(&d->out, "%s: too many errors, giving up", d->name);
		return;
	}
	sbuf_addf(&d->out, "%s:%u:%u: ", d->name, line, col);
	va_start(ap, fmt);
	sbuf_vaddf(&d->out, fmt, ap);
	va_end(ap);
}
