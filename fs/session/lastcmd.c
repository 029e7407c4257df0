// SPDX-License-Identifier: Apache-2.0
/*
 * lastcmd.c - what status.json's last_command says of the last txfs exec
 * command once a verb after it changed its fate: undone (txfs rollback
 * --command, a rollback to a savepoint taken before it), discarded (a
 * full rollback), or closed by a commit (then it stays kept: it is
 * real). Called by session.c and txn.c; calls only the layer, so that
 * neither calls the other back.
 */
#include <errno.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "session.h"

/* Is savepoint name open (meta "savepoints": the names, NUL-separated)? */
static bool sp_open(struct layer_txn *t, const char *name)
{
	const void *v;
	const char *buf;
	size_t len;

	if (layer_meta_get(t, "savepoints", &v, &len))
		return false;
	buf = v;
	for (size_t i = 0; i < len; i += strnlen(buf + i, len - i) + 1)
		if (strnlen(buf + i, len - i) == strlen(name) &&
		    !memcmp(buf + i, name, strlen(name)))
			return true;
	return false;
}

void session_last_mark(struct txfs *fs, uint64_t first, const char *as)
{
	struct layer_txn *t;
	const void *v;
	size_t len;
	json_t *j = NULL;
	char *s = NULL;
	char sp[32];
	uint64_t cmd;

	if (layer_begin(fs->layer, true, &t))
		return;
	/* a commit since the command ended it (session_last_closed) */
	if (layer_meta_get(t, "last_cmd_closed", &v, &len) == 0) {
		layer_txn_end(t);
		return;
	}
	if (layer_meta_get(t, "last_cmd", &v, &len) == 0 && len &&
	    ((const char *)v)[len - 1] == '\0')
		j = json_loads(v, 0, NULL);
	cmd = (uint64_t)json_integer_value(json_object_get(j, "cmd"));
	snprintf(sp, sizeof(sp), "cmd-%llu", (unsigned long long)cmd);
	if (first == UINT64_MAX)	/* a savepoint rollback: is cmd-N gone? */
		first = sp_open(t, sp) ? UINT64_MAX : 0;
	if (j && cmd >= first &&
	    !strcmp(json_string_value(json_object_get(j, "outcome")) ?: "",
		    "kept") &&
	    !json_object_set_new(j, "outcome", json_string(as)) &&
	    (s = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER)) &&
	    layer_meta_put(t, "last_cmd", s, strlen(s) + 1) == 0) {
		layer_commit(t);
		t = NULL;
	}
	layer_txn_end(t);
	json_decref(j);
	free(s);
}

void session_last_closed(struct txfs *fs)
{
	struct layer_txn *t;

	if (layer_begin(fs->layer, true, &t))
		return;
	if (layer_meta_put(t, "last_cmd_closed", "1", 2) == 0) {
		layer_commit(t);
		t = NULL;
	}
	layer_txn_end(t);
}
