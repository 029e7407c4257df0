/* SPDX-License-Identifier: Apache-2.0 */
/*
 * openmode.c - which policies each open mode can enforce: -o noopen
 * refuses the ones it cannot (openmode_noopen_why), and a mount given
 * neither -o open nor -o noopen takes no-open only for a policy that
 * needs nothing the opens give (openmode_auto_why). ops.c, "no-open",
 * says what moves without OPEN; guard.c applies the answers at mount and
 * at reload. Calls only policy/.
 */
#include "view.h"

/* -o noopen refuses these: the kernel sends no OPEN, so nothing shows an
 * execve (ops.c, "no-open"). */
#define NOOPEN_EXEC_WHY "it has `exec deny` rules, and under -o noopen " \
			"no request shows an exec to check them against"

/* ... nor these: the kernel keeps the pages one program read and serves
 * them to the next reader without a request, so a read rule that depends
 * on the caller would hold only until an exempt program has read (or
 * mapped) the file. */
#define NOOPEN_READ_WHY "it has `read` rules with except-by or only-by, " \
			"and under -o noopen the pages an exempt program " \
			"read are served from the kernel's cache to every " \
			"other reader"

static bool has_exec(const struct policy *p)
{
	const char *const *globs;

	return policy_exec_globs(p, &globs) > 0;
}

/* ... nor these: a page written into a file (a whole page, by anyone the
 * write rules let) stays in the kernel's cache, and every later read of
 * it is served from there, with no request to check against a read rule. */
#define NOOPEN_READPAGE_WHY "it has `read` rules, and under -o noopen a " \
			    "page written into a file stays in the kernel's " \
			    "cache, where every program reads it back with no " \
			    "request to check"

/* ... nor these: a store into a shared mapping reaches the daemon as the
 * kernel's write-back, which names no caller, so a rule that exempts or
 * targets callers cannot tell whose store it is. */
#define NOOPEN_WRITE_WHY "it has `write` rules with except-by or only-by, " \
			 "and under -o noopen a store into a shared mapping " \
			 "reaches the daemon as the kernel's write-back, " \
			 "which names no program"

/* Why -o noopen cannot enforce p, or NULL. */
const char *openmode_noopen_why(const struct policy *p)
{
	if (has_exec(p))
		return NOOPEN_EXEC_WHY;
	if (policy_op_by_caller(p, POLICY_OP_READ))
		return NOOPEN_READ_WHY;
	if (policy_op_has_rules(p, POLICY_OP_READ))
		return NOOPEN_READPAGE_WHY;
	if (policy_op_by_caller(p, POLICY_OP_WRITE))
		return NOOPEN_WRITE_WHY;
	return NULL;
}

/* ... and what no-open is not chosen for without -o noopen: a store into
 * a shared mapping reaches the daemon only as the kernel's write-back,
 * which no process sent, so a write rule would refuse it after the
 * program's store succeeded, and log it with no process (-o noopen
 * accepts that); under open mode the open for writing is refused first. */
#define AUTO_WRITE_WHY "it has `write` rules (deny write, readonly), " \
		       "which open mode checks at the open of a file for " \
		       "writing, before a shared mapping can take stores"

/* Why a mount without -o open or -o noopen takes open mode, or NULL. */
const char *openmode_auto_why(const struct policy *p)
{
	const char *why = openmode_noopen_why(p);

	if (!why && policy_op_has_rules(p, POLICY_OP_WRITE))
		why = AUTO_WRITE_WHY;
	return why;
}

