/* SPDX-License-Identifier: Apache-2.0 */
/*
 * vetoes.c - what the policy refused during one `txfs exec` command or one
 * `txfs run`, told where the caller looks (issue 22.4): the number of
 * vetoes, the first few as "op path (rule)", and, when a limit was
 * reached, the guard's note with its hint (commit or roll back). Read from
 * the audit log the daemon returns (the "log" request), never guessed.
 */
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "../policy/policy.h"

/* "op path (rule)" of a veto record, or NULL. */
static char *veto_line(const json_t *ev)
{
	char *op = audit_json_bytes(ev, "op", -1);
	char *path = audit_json_bytes(ev, "path", -1);
	char *rule = audit_json_bytes(ev, "rule", -1), *s = NULL;

	if (asprintf(&s, "%s %s (%s)", op ? op : "?", path ? path : "?",
		     rule ? rule : "no rule") < 0)
		s = NULL;
	free(op);
	free(path);
	free(rule);
	return s;
}

/* The guard's note of a guard record: "`limit deletes 1000`
 * (FILE:LINE) reached: OP PATH refused; HINT". */
static char *guard_line(const json_t *ev)
{
	const char *limit = json_string_value(json_object_get(ev, "limit"));
	const char *hint = json_string_value(json_object_get(ev, "hint"));
	char *rule = audit_json_bytes(ev, "rule", -1);
	char *op = audit_json_bytes(ev, "op", -1);
	char *path = audit_json_bytes(ev, "path", -1), *s = NULL;

	if (asprintf(&s, "`limit %s %lld` (%s) reached: %s %s refused; %s",
		     limit ? limit : "?",
		     (long long)json_integer_value(json_object_get(ev, "max")),
		     rule ? rule : "?", op ? op : "?", path ? path : "?",
		     hint ? hint : "commit or roll back") < 0)
		s = NULL;
	free(rule);
	free(op);
	free(path);
	return s;
}

/*
 * Which records are ours: those between cmd-begin of command cmd and its
 * cmd-end (cmd > 0), or, with cmd 0, the last `last` vetoes of the log
 * and what follows the first of them (a run's daemon counts its vetoes
 * from its mount: status's "vetoes").
 */
int cli_vetoes_read(const char *log, unsigned long long cmd, uint64_t last,
		    struct cli_vetoes *v)
{
	char *text = log ? strdup(log) : NULL, *save = NULL;
	uint64_t total = 0, seen = 0;
	bool in = cmd == 0;

	memset(v, 0, sizeof(*v));
	if (!text)
		return log ? -ENOMEM : 0;
	for (const char *p = strstr(text, "\"event\":\"veto\""); p;
	     p = strstr(p + 1, "\"event\":\"veto\""))
		total++;
	for (char *l = strtok_r(text, "\n", &save); l;
	     l = strtok_r(NULL, "\n", &save)) {
		json_t *ev = json_loads(l, 0, NULL);
		const char *e = json_string_value(json_object_get(ev, "event"));
		bool mine;

		if (!e) {
			json_decref(ev);
			continue;
		}
		if (cmd && !strcmp(e, "cmd-begin"))
			in = (unsigned long long)json_integer_value(
				json_object_get(ev, "cmd")) == cmd;
		else if (cmd && !strcmp(e, "cmd-end"))
			in = false;
		if (!strcmp(e, "veto")) {
			seen++;
			mine = in && (cmd || seen + last > total);
			if (mine && v->n < CLI_VETO_SHOW)
				v->first[v->n] = veto_line(ev);
			v->n += mine;
		} else if (!strcmp(e, "guard") && in && v->n) {
			free(v->guard);
			v->guard = guard_line(ev);
		}
		json_decref(ev);
	}
	free(text);
	return 0;
}

void cli_vetoes_print(const struct cli_vetoes *v, const char *mnt)
{
	for (size_t i = 0; i < v->n && i < CLI_VETO_SHOW; i++) {
		char *q = v->first[i] ? audit_quote(v->first[i]) : NULL;

		fprintf(stderr, "  vetoed: %s\n", q ? q : "?");
		free(q);
	}
	if (v->n > CLI_VETO_SHOW)
		fprintf(stderr, "  vetoed: ... and %zu more (txfs log %s)\n",
			v->n - CLI_VETO_SHOW, mnt);
	if (v->guard) {
		char *q = audit_quote(v->guard);

		fprintf(stderr, "  guard: %s\n", q ? q : v->guard);
		free(q);
	}
}

void cli_vetoes_free(struct cli_vetoes *v)
{
	for (size_t i = 0; i < CLI_VETO_SHOW; i++)
		free(v->first[i]);
	free(v->guard);
	memset(v, 0, sizeof(*v));
}
