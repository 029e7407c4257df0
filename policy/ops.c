/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ops.c - the names of operations, operation sets and control verbs.
 *
 * op_names[] is indexed by enum policy_op and spells each operation as the
 * language does. An operation set is a uint32_t mask with bit (1 << op);
 * "modify" is every operation except read, "all" is every operation.
 * control_verbs[] are the verbs .txfs/ctl accepts, bit i of a control mask.
 */
#include <errno.h>
#include <string.h>

#include "policy_int.h"

static const char *const op_names[POLICY_OP__COUNT] = {
	[POLICY_OP_READ] = "read",
	[POLICY_OP_WRITE] = "write",
	[POLICY_OP_CREATE] = "create",
	[POLICY_OP_DELETE] = "delete",
	[POLICY_OP_RENAME] = "rename",
	[POLICY_OP_CHMOD] = "chmod",
	[POLICY_OP_CHOWN] = "chown",
	[POLICY_OP_TRUNCATE] = "truncate",
	[POLICY_OP_LINK] = "link",
	[POLICY_OP_SYMLINK] = "symlink",
	[POLICY_OP_MKDIR] = "mkdir",
	[POLICY_OP_XATTR] = "xattr",
};

const char *const control_verbs[] = {
	"commit", "rollback", "savepoint", "release",
	"undo", "restore",	/* txfs mcp's history tools (not .txfs/ctl) */
};
const size_t control_verb_count =
	sizeof(control_verbs) / sizeof(control_verbs[0]);

static bool word_is(const char *s, size_t n, const char *word)
{
	return strlen(word) == n && memcmp(s, word, n) == 0;
}

const char *policy_op_name(enum policy_op op)
{
	if ((unsigned)op >= POLICY_OP__COUNT)
		return "?";
	return op_names[op];
}

int policy_op_parse(const char *name, enum policy_op *op)
{
	for (unsigned i = 0; i < POLICY_OP__COUNT; i++) {
		if (strcmp(name, op_names[i]) == 0) {
			*op = (enum policy_op)i;
			return 0;
		}
	}
	return -EINVAL;
}

const char *policy_action_name(enum policy_action a)
{
	switch (a) {
	case POLICY_ALLOW:
		return "allow";
	case POLICY_DENY:
		return "deny";
	case POLICY_HIDE:
		return "hide";
	}
	return "?";
}

int ops_parse_word(const char *s, size_t n, uint32_t *mask)
{
	if (word_is(s, n, "all")) {
		*mask = OPMASK_ALL;
		return 0;
	}
	if (word_is(s, n, "modify")) {
		*mask = OPMASK_MODIFY;
		return 0;
	}
	for (unsigned i = 0; i < POLICY_OP__COUNT; i++) {
		if (word_is(s, n, op_names[i])) {
			*mask = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}

int control_verb_parse(const char *s, size_t n, uint32_t *bit)
{
	for (size_t i = 0; i < control_verb_count; i++) {
		if (word_is(s, n, control_verbs[i])) {
			*bit = 1u << i;
			return 0;
		}
	}
	return -EINVAL;
}
