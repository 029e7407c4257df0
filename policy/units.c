// SPDX-License-Identifier: Apache-2.0
/*
 * units.c - the numbers a policy and the command line share: sizes
 * (`512M`, `2G`, `4096`; 1024-based units K, M, G, T and KiB ... TiB),
 * durations (`90s`, `5m`, `1h`, `500ms`, `2d`, a plain number of seconds)
 * and plain counts. One number and at most one unit, no blanks, no sign.
 *
 * Each parser returns NULL and the value, or an error message (static
 * text) and in *off the offset in s of the mistake.
 */
#include <stdint.h>
#include <string.h>

#include "policy.h"

struct unit {
	const char *name;
	uint64_t mult;
};

static const struct unit size_units[] = {
	{ "K", 1ULL << 10 }, { "KiB", 1ULL << 10 }, { "M", 1ULL << 20 },
	{ "MiB", 1ULL << 20 }, { "G", 1ULL << 30 }, { "GiB", 1ULL << 30 },
	{ "T", 1ULL << 40 }, { "TiB", 1ULL << 40 },
};

static const struct unit time_units[] = {
	{ "ms", 1 }, { "s", 1000 }, { "m", 60 * 1000 }, { "h", 3600 * 1000 },
	{ "d", 24 * 3600 * 1000ULL },
};

/* The digits at the start of s[0..n): their value and count. */
static const char *digits(const char *s, size_t n, uint64_t *v, size_t *i)
{
	*v = 0;
	for (*i = 0; *i < n && s[*i] >= '0' && s[*i] <= '9'; (*i)++) {
		uint64_t d = (uint64_t)(s[*i] - '0');

		if (*v > (UINT64_MAX - d) / 10)
			return "number too large";
		*v = *v * 10 + d;
	}
	return NULL;
}

static const struct unit *find_unit(const struct unit *u, size_t nu,
				    const char *s, size_t n)
{
	for (size_t i = 0; i < nu; i++)
		if (strlen(u[i].name) == n && !memcmp(s, u[i].name, n))
			return &u[i];
	return NULL;
}

/* v * mult, or an error when it overflows. */
static const char *scale(uint64_t v, uint64_t mult, uint64_t *out,
			 const char *too_large)
{
	if (mult && v > UINT64_MAX / mult)
		return too_large;
	*out = v * mult;
	return NULL;
}

const char *policy_parse_size(const char *s, size_t n, uint64_t *out,
			      size_t *off)
{
	static const char *const decimal[] = { "KB", "kB", "MB", "GB", "TB" };
	const struct unit *u;
	const char *msg;
	uint64_t v;
	size_t i;

	*off = 0;
	if ((msg = digits(s, n, &v, &i)))
		return msg;
	if (i == 0)
		return "expected a size (e.g. 100M)";
	*off = i;
	if (i == n)
		return scale(v, 1, out, NULL);
	if ((u = find_unit(size_units, sizeof(size_units) /
			   sizeof(size_units[0]), s + i, n - i))) {
		*off = 0;
		return scale(v, u->mult, out, "size too large");
	}
	for (size_t k = 0; k < sizeof(decimal) / sizeof(decimal[0]); k++)
		if (n - i == 2 && !memcmp(s + i, decimal[k], 2))
			return "decimal units are not accepted: write K, M, "
			       "G, T or KiB, MiB, GiB, TiB (all 1024-based)";
	return "unknown unit (use K, M, G, T or KiB, MiB, GiB, TiB)";
}

const char *policy_parse_duration(const char *s, size_t n, uint64_t *ms,
				  size_t *off)
{
	const struct unit *u;
	const char *msg;
	uint64_t v;
	size_t i;

	*off = 0;
	if ((msg = digits(s, n, &v, &i)))
		return msg;
	if (i == 0)
		return "expected a duration (e.g. 90s, 5m, 1h)";
	*off = i;
	if (i == n)
		return scale(v, 1000, ms, "duration too large");
	u = find_unit(time_units, sizeof(time_units) / sizeof(time_units[0]),
		      s + i, n - i);
	if (!u)
		return "unknown unit (use ms, s, m, h or d; a plain number "
		       "is seconds)";
	*off = 0;
	return scale(v, u->mult, ms, "duration too large");
}

const char *policy_parse_count(const char *s, size_t n, uint64_t *out,
			       size_t *off)
{
	const char *msg;
	size_t i;

	*off = 0;
	if ((msg = digits(s, n, out, &i)))
		return msg;
	if (i == 0)
		return "expected a number";
	*off = i;
	if (i < n)
		return "expected a plain number here (no unit)";
	return NULL;
}
