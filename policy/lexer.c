/* SPDX-License-Identifier: Apache-2.0 */
/*
 * lexer.c - split policy text into lines of tokens.
 *
 * A token is a run of bytes other than blanks (space, tab, CR, VT, FF),
 * newline and NUL. A backslash takes the next byte into the token whatever
 * it is (so `dir\ with\ space/` is one token); the backslash stays in the
 * token text and glob.c gives it its meaning. A `#` at the start of a token
 * begins a comment that runs to the end of the line; inside a token it is
 * an ordinary byte. Line and column are 1-based, columns count bytes.
 *
 * Lexical errors (a NUL byte, a backslash at the end of a line) are reported
 * to the diag and the offending bytes skipped, so the rest of the file is
 * still checked.
 */
#include <errno.h>

#include "policy_int.h"

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static bool ends_token(char c)
{
	return is_blank(c) || c == '\n' || c == '\0';
}

static uint32_t col_of(const char *bol, const char *p)
{
	return (uint32_t)(p - bol) + 1;
}

/* Scan one token starting at lx->p; returns its end and sets *next to
 * where lexing goes on (past a dangling backslash, which is dropped). */
static const char *scan_token(struct lexer *lx, const char *bol,
			      const char **next)
{
	const char *p = lx->p;

	while (p < lx->end && !ends_token(*p)) {
		if (*p != '\\') {
			p++;
			continue;
		}
		if (p + 1 == lx->end || p[1] == '\n') {
			diag_error(lx->diag, lx->line, col_of(bol, p),
				   "backslash at the end of a line (lines "
				   "cannot be continued)");
			*next = p + 1;
			return p;
		}
		p += 2;
	}
	*next = p;
	return p;
}

static int push_token(struct toks *out, const char *s, const char *e,
		      uint32_t line, uint32_t col)
{
	struct token *t = vec_push(&out->v, &out->n, &out->cap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	t->s = s;
	t->len = (uint32_t)(e - s);
	t->line = line;
	t->col = col;
	return 0;
}

static const char *skip_comment(const struct lexer *lx, const char *p)
{
	while (p < lx->end && *p != '\n')
		p++;
	return p;
}

int lexer_line(struct lexer *lx, struct toks *out)
{
	const char *bol = lx->p, *e, *next;
	int ret;

	out->n = 0;
	if (lx->p >= lx->end)
		return 0;
	lx->line++;
	while (lx->p < lx->end && *lx->p != '\n') {
		if (is_blank(*lx->p)) {
			lx->p++;
		} else if (*lx->p == '\0') {
			diag_error(lx->diag, lx->line, col_of(bol, lx->p),
				   "NUL byte in the policy text");
			lx->p++;
		} else if (*lx->p == '#') {
			lx->p = skip_comment(lx, lx->p);
		} else {
			e = scan_token(lx, bol, &next);
			if (e > lx->p) {
				ret = push_token(out, lx->p, e, lx->line,
						 col_of(bol, lx->p));
				if (ret)
					return ret;
			}
			lx->p = next;
		}
	}
	if (lx->p < lx->end)
		lx->p++;
	return 1;
}
