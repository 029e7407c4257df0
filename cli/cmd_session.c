/* SPDX-License-Identifier: Apache-2.0 */
/*
 * cmd_session.c - the session's history as commands: `txfs log` grouped
 * by `txfs exec` command, and `txfs rollback MNT --command N`.
 *
 * The audit log holds, per command, a cmd-begin record (cmd, argv,
 * savepoint), the vetoes and events that happened while it ran, and a
 * cmd-end record (exit, outcome, changes, vetoes); cmd-rollback records
 * mark commands undone later. Records are parsed with jansson; names and
 * arguments are bytes (K, or K_hex when present: policy/audit.c), printed
 * for people with audit_quote() and kept as stored with --json.
 */
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "policy.h"

struct entry {
	json_t *ev;		/* an event outside any command, or NULL */
	json_t *cmd;		/* a command: {cmd, argv, ..., events[]} */
	bool closed;		/* a commit came after it: no later rollback
				 * takes it back */
};

struct history {
	struct entry *e;
	size_t n, cap;
	json_t *open;		/* the command running (begun, not ended) */
	json_t *sps;		/* savepoint name -> h->n when it was taken */
};

static int push(struct history *h, json_t *ev, json_t *cmd)
{
	if (h->n == h->cap) {
		size_t c = h->cap ? h->cap * 2 : 64;
		struct entry *e = realloc(h->e, c * sizeof(*e));

		if (!e)
			return -ENOMEM;
		h->e = e;
		h->cap = c;
	}
	h->e[h->n].ev = ev;
	h->e[h->n].cmd = cmd;
	h->e[h->n].closed = false;
	h->n++;
	return 0;
}

static json_int_t ival(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

/* Is c's outcome one of the staged ones: kept, or begun and never ended
 * (running, unfinished)? */
static bool staged_outcome(json_t *c)
{
	const char *o = json_string_value(json_object_get(c, "outcome")) ?: "";

	return !strcmp(o, "kept") || !strcmp(o, "running") ||
	       !strcmp(o, "unfinished");
}

/* Mark every staged command >= n, from entry from on, as `as` (undone by
 * a later cmd-rollback or a rollback to a savepoint taken before it;
 * discarded by a full rollback, n 0); not one a commit closed. */
static void mark_undone(struct history *h, json_int_t n, const char *as,
			size_t from)
{
	for (size_t i = from; i < h->n; i++)
		if (h->e[i].cmd && !h->e[i].closed &&
		    ival(h->e[i].cmd, "cmd") >= n &&
		    staged_outcome(h->e[i].cmd))
			json_object_set_new(h->e[i].cmd, "outcome",
					    json_string(as));
}

/* Copy from's key_hex (the exact bytes of key's strings) into to. */
static void copy_hex(json_t *to, json_t *from, const char *key)
{
	char hk[64];

	snprintf(hk, sizeof(hk), "%s_hex", key);
	if (json_object_get(from, hk))
		json_object_set(to, hk, json_object_get(from, hk));
	else
		json_object_del(to, hk);
}

/* Print the bytes of o[key] (idx < 0) or o[key][idx], quoted for a
 * terminal; "?" when they are missing. */
static void put_bytes(FILE *f, const char *pre, json_t *o, const char *key,
		      long idx)
{
	char *b = audit_json_bytes(o, key, idx);
	char *q = b ? audit_quote(b) : NULL;

	fprintf(f, "%s%s", pre, q ? q : "?");
	free(q);
	free(b);
}

/* Has o a member key_hex (bytes of key that are not UTF-8)? */
static bool has_hex(json_t *o, const char *key)
{
	char hk[64];

	snprintf(hk, sizeof(hk), "%s_hex", key);
	return json_object_get(o, hk) != NULL;
}

/* Is k the K_hex of a member K of o (printed with K)? */
static bool is_hex_of_member(json_t *o, const char *k)
{
	size_t n = strlen(k);
	char base[64];

	if (n <= 4 || n - 4 >= sizeof(base) || strcmp(k + n - 4, "_hex"))
		return false;
	memcpy(base, k, n - 4);
	base[n - 4] = '\0';
	return json_object_get(o, base) != NULL;
}

static int add_record(struct history *h, json_t *ev)
{
	const char *what = json_string_value(json_object_get(ev, "event"));

	if (!what)
		what = "";
	if (!strcmp(what, "cmd-begin")) {
		json_t *c;

		/* commands of a session run one at a time: one begun and
		 * never ended (txfs exec killed) is over once another begins */
		if (h->open)
			json_object_set_new(h->open, "outcome",
					    json_string("unfinished"));
		c = json_pack("{s:I,s:O,s:O,s:O,s:s,s:n,s:[]}",
			"cmd", ival(ev, "cmd"), "time", json_object_get(ev, "time"),
			"argv", json_object_get(ev, "argv"),
			"savepoint", json_object_get(ev, "savepoint"),
			"outcome", "running", "exit", "events");

		if (c)
			copy_hex(c, ev, "argv");
		json_decref(ev);
		if (!c)
			return -ENOMEM;
		h->open = c;
		return push(h, NULL, c);
	}
	if (!strcmp(what, "cmd-end")) {
		for (size_t i = h->n; i-- > 0;)
			if (h->e[i].cmd &&
			    ival(h->e[i].cmd, "cmd") == ival(ev, "cmd")) {
				json_t *c = h->e[i].cmd;

				json_object_set(c, "exit", json_object_get(ev, "exit"));
				json_object_set(c, "outcome", json_object_get(ev, "outcome"));
				json_object_set(c, "changes", json_object_get(ev, "changes"));
				copy_hex(c, ev, "changes");
				json_object_set(c, "vetoes", json_object_get(ev, "vetoes"));
				break;
			}
		h->open = NULL;
		json_decref(ev);
		return 0;
	}
	/* the savepoints of txfs exec are part of its commands */
	if ((!strcmp(what, "savepoint") &&
	     !strncmp(json_string_value(json_object_get(ev, "name")) ?: "",
		      "cmd-", 4)) ||
	    (!strcmp(what, "rollback") &&
	     !strncmp(json_string_value(json_object_get(ev, "savepoint")) ?: "",
		      "cmd-", 4))) {
		json_decref(ev);
		return 0;
	}
	if (!strcmp(what, "cmd-rollback"))
		mark_undone(h, ival(ev, "cmd"), "undone", 0);
	/* a full rollback (no savepoint) discards every staged command; a
	 * rollback to savepoint S undoes those begun after S was taken; a
	 * commit closes every command before it */
	if (!strcmp(what, "rollback") && !json_object_get(ev, "savepoint"))
		mark_undone(h, 0, "discarded", 0);
	if (!strcmp(what, "rollback") && h->sps &&
	    json_is_integer(json_object_get(h->sps, json_string_value(
			json_object_get(ev, "savepoint")) ?: "")))
		mark_undone(h, 0, "undone", (size_t)ival(h->sps,
			json_string_value(json_object_get(ev, "savepoint"))));
	if (!strcmp(what, "savepoint") && h->sps &&
	    json_string_value(json_object_get(ev, "name")))
		json_object_set_new(h->sps, json_string_value(json_object_get(
			ev, "name")), json_integer((json_int_t)h->n));
	if (!strcmp(what, "commit"))
		for (size_t i = 0; i < h->n; i++)
			h->e[i].closed = true;
	if (h->open && strcmp(what, "savepoint") && strcmp(what, "rollback")) {
		json_array_append_new(json_object_get(h->open, "events"), ev);
		return 0;
	}
	return push(h, ev, NULL);
}

/* "time event key=value ..." of a record outside the commands. */
static void print_event(FILE *f, json_t *ev, const char *indent)
{
	const char *k;
	json_t *v;

	fprintf(f, "%s%s %s", indent,
		json_string_value(json_object_get(ev, "time")) ?: "",
		json_string_value(json_object_get(ev, "event")) ?: "");
	json_object_foreach(ev, k, v) {
		char *s;

		if (!strcmp(k, "time") || !strcmp(k, "event") ||
		    json_is_null(v) || is_hex_of_member(ev, k))
			continue;
		if (json_is_string(v)) {
			fprintf(f, " %s=", k);
			put_bytes(f, "", ev, k, -1);
			continue;
		}
		if (json_is_array(v) && has_hex(ev, k)) {
			fprintf(f, " %s=[", k);
			for (size_t i = 0; i < json_array_size(v); i++)
				put_bytes(f, i ? "," : "", ev, k, (long)i);
			fputc(']', f);
			continue;
		}
		s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY);
		fprintf(f, " %s=%s", k, s ? s : "?");
		free(s);
	}
	fputc('\n', f);
}

static void print_cmd(FILE *f, json_t *c)
{
	json_t *v, *argv = json_object_get(c, "argv");
	char ex[24] = "-";
	size_t i;

	if (json_is_integer(json_object_get(c, "exit")))
		snprintf(ex, sizeof(ex), "%lld", (long long)ival(c, "exit"));

	fprintf(f, "command %lld:", (long long)ival(c, "cmd"));
	json_array_foreach(argv, i, v) {
		/* one argument a word: C-quoted when it holds a blank, a
		 * quote, a control byte or bytes that are not UTF-8, "" when
		 * empty (NAMES IN OUTPUT), so that `echo "a b"` and `echo a
		 * b` never read the same */
		char *b = audit_json_bytes(c, "argv", (long)i);
		char *q = b && *b ? audit_cquote(b, " ") : NULL;

		fprintf(f, " %s", b && !*b ? "\"\"" : q ? q : "?");
		free(q);
		free(b);
	}
	fprintf(f, "\n  %s, exit %s, savepoint %s, %zu changes, %lld vetoes\n",
		json_string_value(json_object_get(c, "outcome")),
		ex,
		json_string_value(json_object_get(c, "savepoint")) ?: "-",
		json_array_size(json_object_get(c, "changes")),
		(long long)ival(c, "vetoes"));
	json_array_foreach(json_object_get(c, "changes"), i, v) {
		put_bytes(f, "    ", c, "changes", (long)i);
		fputc('\n', f);
	}
	json_array_foreach(json_object_get(c, "events"), i, v)
		print_event(f, v, "    ");
}

int cli_log_grouped(char *text, bool json)
{
	struct history h = { .sps = json_object() };
	int rc = 0;

	for (char *l = strtok(text, "\n"); l && rc == 0; l = strtok(NULL, "\n")) {
		json_t *ev = json_loads(l, 0, NULL);

		if (ev)
			rc = add_record(&h, ev);
	}
	for (size_t i = 0; i < h.n; i++) {
		json_t *o = h.e[i].cmd ? h.e[i].cmd : h.e[i].ev;

		if (json) {
			char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);

			if (s)
				printf("%s\n", s);
			free(s);
		} else if (h.e[i].cmd) {
			print_cmd(stdout, o);
		} else {
			print_event(stdout, o, "");
		}
		json_decref(o);
	}
	free(h.e);
	json_decref(h.sps);
	return rc ? 1 : 0;
}

/* txfs rollback MNT --command N: the daemon's cmd-rollback verb. */
int cli_rollback_command(const char *mnt, const char *n)
{
	char state[PATH_MAX], *out = NULL, *req[2] = { "cmd-rollback",
						      (char *)n };
	size_t len;
	int err = 0, rc;
	char *end;

	strtoull(n, &end, 10);
	if (!n[0] || *end) {
		cli_err(0, "rollback: --command takes a command number");
		return 2;
	}
	if ((rc = cli_find_state(mnt, ".txfs", state, sizeof(state)))) {
		cli_err_find_state(rc, "rollback ", mnt, ".txfs");
		return 1;
	}
	rc = cli_request(state, 2, req, &err, &out, &len);
	if (rc || err) {
		char *nl = out ? strchr(out, '\n') : NULL;

		if (nl && !nl[1])
			*nl = '\0';
		cli_err(rc ? rc : out && out[0] ? 0 : -err,
			"rollback %s --command %s%s%s", mnt, n,
			out && out[0] ? ": " : "", out ? out : "");
		free(out);
		return 1;
	}
	fputs(out, stdout);
	free(out);
	return 0;
}
