// SPDX-License-Identifier: Apache-2.0
/*
 * names.c - names in manifests. A manifest (and the undo journal) is
 * JSON, which must be UTF-8; a file name is any bytes but '/' and NUL. In
 * memory a name is its bytes (json_string_nocheck: every reader gets the
 * exact name); on disk each byte that is not part of valid UTF-8, and
 * each byte of a character U+10FF00..U+10FFFF (so that the mapping stays
 * one to one), is written as the character U+10FF00 + byte, a private-use
 * character no name needs. hist_dumps and hist_save write through the
 * mapping, hist_load_file reads through it back.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "hist_int.h"

/* The length of the valid UTF-8 character at s (1-4), 0 if there is
 * none (s is NUL-terminated: a NUL ends every check). */
static size_t u8len(const unsigned char *s)
{
	unsigned c = s[0];

	if (c < 0x80)
		return 1;
	if (c >= 0xC2 && c <= 0xDF)
		return (s[1] & 0xC0) == 0x80 ? 2 : 0;
	if (c >= 0xE0 && c <= 0xEF) {
		if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
		    (c == 0xE0 && s[1] < 0xA0) ||	/* overlong */
		    (c == 0xED && s[1] >= 0xA0))	/* a surrogate */
			return 0;
		return 3;
	}
	if (c >= 0xF0 && c <= 0xF4) {
		if ((s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 ||
		    (s[3] & 0xC0) != 0x80 || (c == 0xF0 && s[1] < 0x90) ||
		    (c == 0xF4 && s[1] >= 0x90))
			return 0;
		return 4;
	}
	return 0;
}

/* Is the character at s (valid, 4 bytes) one of U+10FF00..U+10FFFF? */
static bool is_esc(const unsigned char *s)
{
	return s[0] == 0xF4 && s[1] == 0x8F && s[2] >= 0xBC;
}

/* s as written on disk, malloc'd; NULL when s needs no change (or out
 * of memory: *err). */
static char *name_enc(const char *str, bool *err)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, n, o = 0;
	bool change = false;
	char *out;

	for (i = 0; s[i]; i += n ? n : 1) {
		n = u8len(s + i);
		change = change || !n || (n == 4 && is_esc(s + i));
	}
	if (!change)
		return NULL;
	if (!(out = malloc(4 * i + 1))) {
		*err = true;
		return NULL;
	}
	for (i = 0; s[i];) {
		n = u8len(s + i);
		if (n && !(n == 4 && is_esc(s + i))) {
			memcpy(out + o, s + i, n);
			o += n;
			i += n;
			continue;
		}
		for (size_t k = 0; k < (n ? n : 1); k++, i++) {
			out[o++] = (char)0xF4;
			out[o++] = (char)0x8F;
			out[o++] = (char)(0xBC + (s[i] >> 6));
			out[o++] = (char)(0x80 + (s[i] & 0x3F));
		}
	}
	out[o] = 0;
	return out;
}

/* s as read from disk back to its bytes, malloc'd; NULL when unchanged
 * (or out of memory: *err). */
static char *name_dec(const char *str, bool *err)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i, o = 0;
	char *out;

	if (!strstr(str, "\xF4\x8F"))
		return NULL;
	if (!(out = malloc(strlen(str) + 1))) {
		*err = true;
		return NULL;
	}
	for (i = 0; s[i];) {
		if (u8len(s + i) == 4 && is_esc(s + i)) {
			out[o++] = (char)(((s[i + 2] - 0xBC) << 6) | (s[i + 3] - 0x80));
			i += 4;
		} else {
			out[o++] = (char)s[i++];
		}
	}
	out[o] = 0;
	return out;
}

/* Every string and key of v through name_enc (enc) or name_dec, in place. */
static int recode(json_t *v, bool enc)
{
	char *(*fn)(const char *, bool *) = enc ? name_enc : name_dec;
	bool err = false;
	json_t *val, *moved = NULL;
	const char *key;
	void *tmp;
	size_t i;
	int rc = 0;
	char *n;

	switch (json_typeof(v)) {
	case JSON_STRING:
		if ((n = fn(json_string_value(v), &err))) {
			rc = json_string_set_nocheck(v, n) ? -ENOMEM : 0;
			free(n);
		}
		return err ? -ENOMEM : rc;
	case JSON_ARRAY:
		json_array_foreach(v, i, val)
			if (rc == 0)
				rc = recode(val, enc);
		return rc;
	case JSON_OBJECT:
		json_object_foreach_safe(v, tmp, key, val) {
			if (rc == 0)
				rc = recode(val, enc);
			if (rc || !(n = fn(key, &err)))
				continue;
			if (!moved && !(moved = json_object()))
				rc = -ENOMEM;
			if (rc == 0 && json_object_set_nocheck(moved, n, val))
				rc = -ENOMEM;
			if (rc == 0)
				json_object_del(v, key);
			free(n);
		}
		json_object_foreach(moved, key, val)
			if (rc == 0 && json_object_set_nocheck(v, key, val))
				rc = -ENOMEM;
		json_decref(moved);
		return err ? -ENOMEM : rc;
	case JSON_INTEGER:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
	default:
		return 0;
	}
}

/* Does any string or key of v need name_enc? */
static bool needs_enc(json_t *v)
{
	bool err = false;
	const char *key;
	json_t *val;
	size_t i;
	char *n;

	switch (json_typeof(v)) {
	case JSON_STRING:
		n = name_enc(json_string_value(v), &err);
		free(n);
		return n || err;
	case JSON_ARRAY:
		json_array_foreach(v, i, val)
			if (needs_enc(val))
				return true;
		return false;
	case JSON_OBJECT:
		json_object_foreach(v, key, val) {
			n = name_enc(key, &err);
			free(n);
			if (n || err || needs_enc(val))
				return true;
		}
		return false;
	case JSON_INTEGER:
	case JSON_REAL:
	case JSON_TRUE:
	case JSON_FALSE:
	case JSON_NULL:
	default:
		return false;
	}
}

json_t *hist_disk_form(json_t *doc)
{
	json_t *copy;

	if (!needs_enc(doc))
		return json_incref(doc);
	if (!(copy = json_deep_copy(doc)) || recode(copy, true)) {
		json_decref(copy);
		return NULL;
	}
	return copy;
}

int hist_mem_form(json_t *doc)
{
	return recode(doc, false);
}

char *hist_dumps(json_t *doc)
{
	json_t *d = hist_disk_form(doc);
	char *s = d ? json_dumps(d, JSON_COMPACT) : NULL;

	json_decref(d);
	return s;
}

json_t *hist_jname(const char *name)
{
	return json_string_nocheck(name);
}

/* One element of hist_arr / hist_obj: 's' a name (any bytes; NULL: null),
 * 'I' a json_int_t, 'O' a json_t (a new reference), 'o' a json_t (taken). */
static json_t *one(char f, va_list *ap)
{
	switch (f) {
	case 's': {
		const char *s = va_arg(*ap, const char *);

		return s ? json_string_nocheck(s) : json_null();
	}
	case 'I':
		return json_integer(va_arg(*ap, json_int_t));
	case 'O':
		return json_incref(va_arg(*ap, json_t *));
	case 'o':
		return va_arg(*ap, json_t *);
	default:
		return NULL;
	}
}

json_t *hist_arr(const char *fmt, ...)
{
	json_t *a = json_array();
	va_list ap;
	bool bad = !a;

	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		json_t *v = one(*fmt, &ap);

		bad = bad || !v || json_array_append_new(a, v);
	}
	va_end(ap);
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

json_t *hist_obj(const char *fmt, ...)
{
	json_t *o = json_object();
	va_list ap;
	bool bad = !o;

	va_start(ap, fmt);
	for (; *fmt; fmt++) {
		const char *key = va_arg(ap, const char *);
		json_t *v = one(*fmt, &ap);

		bad = bad || !v || json_object_set_new_nocheck(o, key, v);
	}
	va_end(ap);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}
