/* SPDX-License-Identifier: Apache-2.0 */
/*
 * fuzz_policy_audit.c - libFuzzer target: any bytes as the names the audit
 * log writes (policy/audit.c: K, plus K_hex when not UTF-8).
 *
 * The input, cut at NUL bytes, gives up to 8 names. Each is set as a
 * member and appended to an array; the object is printed as jansson
 * prints a record and parsed back, strictly. Every name must read back to
 * its exact bytes, two different names must never print the same, and
 * audit_quote() must put no control byte on a terminal, nor
 * audit_cquote() (which must read back exactly). Any crash,
 * sanitizer report or abort() is a finding.
 */
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy_int.h"

#define MAX_NAMES 8

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* {"p":name} as printed in the log (K and K_hex). */
static char *print_one(const char *name)
{
	json_t *o = json_object();
	char *s;

	if (!o || audit_json_set_bytes(o, "p", name))
		abort();
	s = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	if (!s)
		abort();
	return s;
}

/* q holds no control byte: no C0, DEL or C1 (UTF-8 C2 80-9F). */
static void check_printable(const char *q)
{
	for (const unsigned char *c = (const unsigned char *)q; *c; c++)
		if (*c < 0x20 || *c == 0x7f ||
		    (c[0] == 0xc2 && c[1] >= 0x80 && c[1] < 0xa0))
			abort();
}

static void check_quote(const char *name)
{
	char *q = audit_quote(name);

	if (!q)
		abort();
	check_printable(q);
	free(q);
}

/* audit_cquote(): one printable line (no C0, DEL, C1), and the way back
 * (audit_cunquote) gives the exact bytes; a plain name is itself and
 * holds no separator. */
static void check_cquote(const char *name)
{
	char *q = audit_cquote(name, " -> "), *back = NULL;
	const char *end;

	if (!q)
		abort();
	check_printable(q);
	if (q[0] == '"' ? audit_cunquote(q, &back, &end) || *end ||
			  strcmp(back, name) :
			  strcmp(q, name) || strstr(q, " -> "))
		abort();
	free(back);
	free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf = malloc(size + 1), *names[MAX_NAMES], *printed[MAX_NAMES];
	json_t *o = json_object(), *back;
	size_t n = 0;
	char *s;

	if (!buf || !o)
		abort();
	memcpy(buf, data, size);
	buf[size] = '\0';
	for (size_t i = 0; i <= size && n < MAX_NAMES;
	     i += strlen(buf + i) + 1)
		names[n++] = buf + i;
	for (size_t i = 0; i < n; i++) {
		if (audit_json_set_bytes(o, "one", names[i]) ||
		    audit_json_append_bytes(o, "all", names[i]))
			abort();
		printed[i] = print_one(names[i]);
		check_quote(names[i]);
		check_cquote(names[i]);
	}
	s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
	back = s ? json_loads(s, JSON_REJECT_DUPLICATES, NULL) : NULL;
	if (!back)
		abort();
	for (size_t i = 0; i < n; i++) {
		char *got = audit_json_bytes(back, "all", (long)i);

		if (!got || strcmp(got, names[i]))
			abort();
		free(got);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(printed[i], printed[j]) !=
			    !strcmp(names[i], names[j]))
				abort();
	}
	if (n) {
		char *got = audit_json_bytes(back, "one", -1);

		if (!got || strcmp(got, names[n - 1]))
			abort();
		free(got);
	}
	for (size_t i = 0; i < n; i++)
		free(printed[i]);
	json_decref(back);
	json_decref(o);
	free(s);
	free(buf);
	return 0;
}
