// SPDX-License-Identifier: Apache-2.0
/*
 * limit_opts.c - the resource limits of `txfs run` and `txfs exec` on the
 * command line: --timeout, --memory, --cpu and --pids, merged over the
 * policy's `limit timeout|memory|cpu|pids` lines and the defaults
 * (cli/sandbox/reslimit.h), and the report of the one that was hit.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "../policy/policy.h"

int cli_limit_opt(struct cli_limits *c, enum limit_kind k, const char *arg,
		  const char *who)
{
	static const char *const what[LIMIT_N] = {
		[LIMIT_TIMEOUT] = "duration", [LIMIT_MEMORY] = "size",
		[LIMIT_CPU] = "duration", [LIMIT_PIDS] = "number",
	};
	const char *msg = limit_parse(k, arg, &c->v[k]);

	if (msg) {
		cli_err(0, "%s: --%s: bad %s '%s': %s", who, limit_name(k),
			what[k], arg, msg);
		return 2;
	}
	c->set[k] = true;
	return 0;
}

void cli_limits_merge(const struct cli_limits *c,
		      const struct policy_limits *p, struct limits *out)
{
	const uint64_t pol[LIMIT_N] = {
		[LIMIT_TIMEOUT] = p ? p->timeout_ms : LIMIT_NONE,
		[LIMIT_MEMORY] = p ? p->memory : LIMIT_NONE,
		[LIMIT_CPU] = p ? p->cpu_ms : LIMIT_NONE,
		[LIMIT_PIDS] = p ? p->pids : LIMIT_NONE,
	};

	limits_default(out);
	for (int k = 0; k < LIMIT_N; k++) {
		if (c->set[k])
			out->v[k] = c->v[k];
		else if (pol[k] != LIMIT_NONE)
			out->v[k] = pol[k];
	}
}

json_t *cli_limit_json(const struct limwatch *w)
{
	char text[32];

	if (!w || w->hit < 0)
		return json_null();
	limit_format((enum limit_kind)w->hit, w->lim.v[w->hit], text,
		     sizeof(text));
	return json_pack("{s:s,s:I,s:s,s:I,s:s}", "name",
			 limit_name((enum limit_kind)w->hit), "value",
			 (json_int_t)w->lim.v[w->hit], "text", text, "used",
			 (json_int_t)w->seen, "by", w->by_cgroup[w->hit] ?
			 "cgroup" : "supervisor");
}

void cli_limit_print(const struct limwatch *w, const char *who)
{
	char text[32], used[32];

	if (!w || w->hit < 0)
		return;
	limit_format((enum limit_kind)w->hit, w->lim.v[w->hit], text,
		     sizeof(text));
	limit_format((enum limit_kind)w->hit, w->seen, used, sizeof(used));
	fprintf(stderr, "txfs: %s: limit hit: %s (%s): the command's whole "
		"tree was stopped (%s: %s)\n", who,
		limit_name((enum limit_kind)w->hit), text,
		w->hit == LIMIT_PIDS && w->by_cgroup[LIMIT_PIDS] ?
		"a fork refused by the cgroup" : "measured", used);
}
