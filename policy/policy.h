/* SPDX-License-Identifier: Apache-2.0 */
/*
 * policy.h - the txfs policy engine, the module's only public header.
 *
 * A policy is plain text, one rule a line (see txfs.policy(5)). It is parsed
 * and compiled once into an immutable struct policy; the filesystem asks it
 * for a verdict on every operation. A reload builds a new struct policy and
 * the filesystem swaps a pointer, so a struct policy is never modified after
 * policy_load_*() returns and may be read by any number of threads at once.
 *
 * Paths given to the engine are relative to the workspace root and canonical:
 * no leading or trailing '/', no "." or ".." components, no "//". The root
 * itself is "". Every function here that takes a path also takes its length,
 * so callers can pass a slice of a larger buffer.
 *
 * Errors: functions return 0 or a negative errno. Parse errors are returned
 * as -EINVAL with *errmsg set to a malloc'd text of one or more lines
 * "FILE:LINE:COL: what is wrong" (separated by '\n', no trailing newline;
 * COL counts bytes from 1); the caller frees it. Other errors leave
 * *errmsg NULL. errmsg may be NULL.
 */
#ifndef TXFS_POLICY_H
#define TXFS_POLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Operation classes a rule can name. POLICY_OP_RENAME is the "rename" op of
 * the language; the filesystem checks a rename as RENAME + DELETE at the
 * source and RENAME + CREATE at the target. */
enum policy_op {
	POLICY_OP_READ,
	POLICY_OP_WRITE,
	POLICY_OP_CREATE,
	POLICY_OP_DELETE,
	POLICY_OP_RENAME,
	POLICY_OP_CHMOD,
	POLICY_OP_CHOWN,
	POLICY_OP_TRUNCATE,
	POLICY_OP_LINK,
	POLICY_OP_SYMLINK,
	POLICY_OP_MKDIR,
	POLICY_OP_XATTR,
	POLICY_OP__COUNT
};

/* Name of an operation as the language spells it ("read", "write", ...). */
const char *policy_op_name(enum policy_op op);
/* Parse an operation name; returns 0 and sets *op, or -EINVAL. */
int policy_op_parse(const char *name, enum policy_op *op);

enum policy_action {
	POLICY_ALLOW = 0,	/* no rule matched, or an allow rule */
	POLICY_DENY,		/* a deny or readonly rule */
	POLICY_HIDE,		/* a hide rule: the path does not exist */
};

/* "allow", "deny" or "hide". */
const char *policy_action_name(enum policy_action a);

struct policy_verdict {
	enum policy_action action;
	bool flagged;		/* a flag rule matches and op is not read:
				 * "needs review" */
	unsigned line;		/* line of the deciding rule, else of the
				 * flag rule if flagged, else 0 */
	const char *file;	/* file of the deciding rule (owned by policy) */
};

/* Per-transaction limits; UINT64_MAX when the policy sets none. */
struct policy_limits {
	uint64_t bytes;		/* bytes staged in the layer */
	uint64_t files;		/* paths changed in one transaction */
	uint64_t file_size;	/* largest file */
	uint64_t deletes;	/* deletions in one transaction */
	unsigned bytes_line, files_line, file_size_line, deletes_line;
	/* For txfs run and txfs exec (the daemon ignores them): the
	 * command's wall time and CPU time in milliseconds, its memory in
	 * bytes, its tasks (processes and threads). */
	uint64_t timeout_ms, memory, cpu_ms, pids;
	unsigned timeout_line, memory_line, cpu_line, pids_line;
};

/*
 * units.c - the numbers of policies and of the command line: s[0..n) as
 * a size (N, NK, NM, NG, NT, NKiB ... 1024-based: `512M`), a duration in
 * milliseconds (N seconds, Nms, Ns, Nm, Nh, Nd: `90s`, `5m`) or a plain
 * count. Each returns NULL with *out set, or an error message (static
 * text) with *off the offset of the mistake in s.
 */
const char *policy_parse_size(const char *s, size_t n, uint64_t *out,
			      size_t *off);
const char *policy_parse_duration(const char *s, size_t n, uint64_t *ms,
				  size_t *off);
const char *policy_parse_count(const char *s, size_t n, uint64_t *out,
			       size_t *off);

struct policy;

/* Parse and compile. name is used in error messages (the file name).
 * policy_load_file: also -errno of open/read, -EFBIG past 4 MiB. */
int policy_load_buf(const char *name, const char *text, size_t len,
		    struct policy **out, char **errmsg);
int policy_load_file(const char *path, struct policy **out, char **errmsg);
/* The shipped default policy (compiled into the binary). */
int policy_load_default(struct policy **out);
const char *policy_default_text(void);
void policy_free(struct policy *p);

/*
 * The verdict for one operation on one path. Returns 0 when allowed,
 * -EACCES when denied (a deny/readonly rule, or a hide rule: a hidden path
 * cannot be touched at all), -EINVAL for an unknown op, and fills *v (may
 * be NULL; flags are only looked up when it is not) either way.
 * The first deny/allow/readonly/hide rule naming op that matches decides;
 * a hide rule matches what its globs match and everything below that.
 * A NULL policy allows everything.
 */
int policy_check(const struct policy *p, enum policy_op op,
		 const char *path, size_t len, struct policy_verdict *v);

/*
 * The calling program, for rules with a caller condition (`except-by`,
 * `only-by`). exe writes the absolute path of the caller's executable into
 * buf (NUL-terminated) and returns 0, or a negative errno when it cannot
 * be known: then the caller matches no program (an except-by rule applies
 * to it, an only-by rule does not). It is called at most once per check,
 * and only when a conditioned rule matches the path.
 */
struct policy_caller {
	int (*exe)(void *arg, char *buf, size_t size);
	/* The caller's working folder, for `in-repo`: 0 with buf the
	 * workspace-relative path ("" for the root); 1 when it is above the
	 * workspace root (a strict ancestor of the mount point); -ENOENT when
	 * it is elsewhere, outside; another negative errno when unknown
	 * (taken as above). May be NULL (unknown). */
	int (*cwd)(void *arg, char *buf, size_t size);
	void *arg;
};

/* policy_check for caller who (NULL: an unknown program). policy_check is
 * policy_check_by with who NULL. */
int policy_check_by(const struct policy *p, enum policy_op op,
		    const char *path, size_t len,
		    const struct policy_caller *who, struct policy_verdict *v);

/*
 * The verdict for an operation on every path strictly below folder
 * `path` (for rename or removal of a whole folder): -EACCES if any deny,
 * readonly or hide rule for op could match some path below it, ignoring
 * allow exceptions (conservative) except an allow rule for op, before it,
 * that matches every path below `path` (`allow modify build/` before
 * `readonly **` leaves everything below build/ allowed). Fills *v with the
 * rule that decided.
 *
 * Rules with a caller condition count as matching whoever calls.
 *
 * Caveat: "could match" knows nothing of the folder's contents, so a rule
 * for any depth (`hide ** /.env`, `readonly **`) refuses every folder; the
 * caller can then check the paths really below it one by one.
 */
int policy_check_tree(const struct policy *p, enum policy_op op,
		      const char *path, size_t len, struct policy_verdict *v);

/* True if a hide rule covers path (lookup must say ENOENT): the rule that
 * decides a read of path is a hide rule. */
bool policy_is_hidden(const struct policy *p, const char *path, size_t len);
/* True if some hide rule could match a path below folder `path` (with the
 * same allow exception as policy_check_tree for reads). */
bool policy_hides_below(const struct policy *p, const char *path, size_t len);
/* True if a flag rule matches path. */
bool policy_is_flagged(const struct policy *p, const char *path, size_t len);

const struct policy_limits *policy_limits(const struct policy *p);
/* `limit deletes N except GLOB...`: is a loss at path not counted? */
bool policy_delete_uncounted(const struct policy *p, const char *path,
			     size_t len);
/* `... except-by EXE...`: is a loss made by who not counted? */
bool policy_delete_uncounted_by(const struct policy *p,
				const struct policy_caller *who);
/* `... except-ignored`: are losses of real objects that git ignores
 * (untracked and matched by the real directory's ignore rules) not
 * counted? The filesystem knows which those are (lower/ignored.c). */
bool policy_delete_uncounted_ignored(const struct policy *p);
bool policy_has_uncounted(const struct policy *p);
bool policy_network_denied(const struct policy *p);
/* exec deny: path is workspace-relative. */
bool policy_exec_denied(const struct policy *p, const char *path, size_t len);
/* The line of the first `exec deny` rule matching path, 0 if none. */
unsigned policy_exec_rule(const struct policy *p, const char *path,
			  size_t len);
/* control deny VERB: verb as written to .txfs/ctl ("commit", ...). */
bool policy_control_denied(const struct policy *p, const char *verb);
/* Number of exec deny globs and each one as written (for txfs run). */
size_t policy_exec_globs(const struct policy *p, const char *const **globs);
/* The policy as text, the file's contents as loaded (for .txfs/policy). */
const char *policy_text(const struct policy *p);
/*
 * `allow connect PATH...` (for txfs run): the paths of every such rule, as
 * written, into a NULL-terminated array *out of *n strings (free with
 * policy_connect_free). Returns 0 or -ENOMEM.
 */
int policy_connect_globs(const struct policy *p, char ***out, size_t *n);
void policy_connect_free(char **v, size_t n);

/* The `allow-write PATH...` rules (allow_write.c): folders outside the
 * workspace a confined command may write, ~/ expanded against home.
 * *paths (malloc'd, free with policy_allow_write_free) may be NULL.
 * Returns 0, -EINVAL for a ~/ path without an absolute home, -ENOMEM. */
int policy_allow_write(const struct policy *p, const char *home,
		       char ***paths, size_t *n);
void policy_allow_write_free(char **paths, size_t n);
const char *policy_name(const struct policy *p);
/* Number of lines holding a rule (of any kind). */
/* Whether a rule naming op depends on the caller (except-by, only-by). */
bool policy_op_by_caller(const struct policy *p, enum policy_op op);
/* Whether an allow or deny rule (readonly included, conditioned or not;
 * not hide) names op. */
bool policy_op_has_rules(const struct policy *p, enum policy_op op);
size_t policy_rule_count(const struct policy *p);
/* The text of line `line` of the policy (no newline, trailing blanks cut)
 * with its length in *len, or NULL past the end: to quote the rule of a
 * verdict. */
const char *policy_rule_text(const struct policy *p, unsigned line,
			     size_t *len);

/*
 * The audit log: JSON lines in a file of the state folder, appended with
 * one write(2) a record (O_APPEND), so a record written before a SIGKILL is
 * never lost; rotated to NAME.1 when it passes max_bytes (0: 4 MiB), so it
 * holds at most about 2 * max_bytes. Safe to call from many threads.
 * Records are built and printed with jansson. Record format, and how bytes
 * that are not UTF-8 are written (K plus K_hex): the comment at the top of
 * audit.c.
 */
struct audit;
struct json_t;			/* jansson's json_t */

struct audit_caller {
	pid_t pid;
	uid_t uid;
};

/* Open (create, mode 0600) NAME in the folder dirfd (which stays the
 * caller's; a is given its own copy). Returns -EINVAL for a NAME with '/',
 * -ELOOP for a symlink, -errno of openat. */
int audit_open(int dirfd, const char *name, uint64_t max_bytes,
	       struct audit **out);
void audit_close(struct audit *a);
/* One veto: op, path, the verdict that refused it and the errno returned
 * (either sign). who may be NULL (no pid, uid, exe); a NULL a drops the
 * record and returns 0, as do audit_record and audit_event. Returns -errno
 * of write, -ENOMEM. */
int audit_veto(struct audit *a, const char *op, const char *path,
	       const struct policy_verdict *v, int err,
	       const struct audit_caller *who);
/* One transaction event ("commit", "rollback", "savepoint", "conflict",
 * "guard", "recover", ...) with the members of the JSON object fields (or
 * NULL; not consumed; "time" and "event" in it are ignored). Put anything
 * that holds bytes (a path, a name) in fields with audit_json_set_bytes()
 * or audit_json_append_bytes(). */
int audit_record(struct audit *a, const char *event,
		 const struct json_t *fields, const struct audit_caller *who);
/* The same with fields given as JSON members without braces (e.g.
 * "\"txid\":3,\"paths\":12"), or NULL: for fixed words and numbers only.
 * Text that is not JSON members is logged as "bad_fields" (K/K_hex) and
 * -EINVAL returned. */
int audit_event(struct audit *a, const char *event, const char *fields_json,
		const struct audit_caller *who);
/* The whole log (rotated part first) as a malloc'd NUL-terminated buffer
 * of *len bytes. */
int audit_read(struct audit *a, char **buf, size_t *len);

/* Bytes in JSON (see audit.c): set obj[key] to the bytes s (K, and K_hex
 * when s is not UTF-8), or append s to the array obj[key] (created when
 * missing; K_hex kept parallel). Return 0, -ENOMEM, -EINVAL (key too long
 * or not an array). */
int audit_json_set_bytes(struct json_t *obj, const char *key, const char *s);
int audit_json_append_bytes(struct json_t *obj, const char *key,
			    const char *s);
/* The exact bytes of obj[key] (idx < 0) or of obj[key][idx]: from K_hex
 * when it has them, else the string. malloc'd and NUL-terminated; NULL when
 * missing, not a string, malformed hex, a NUL byte, or out of memory. */
char *audit_json_bytes(const struct json_t *obj, const char *key, long idx);
/* s as a JSON string with each byte outside valid UTF-8 as U+FFFD: lossy,
 * for text shown to people or a model (MCP content); NULL when out of
 * memory. */
struct json_t *audit_json_text(const char *s);
/* The bytes s for a terminal, one way back to the bytes: valid UTF-8 as
 * is, except '\' as \\, newline \n, tab \t, other control bytes (C0, DEL)
 * and bytes outside valid UTF-8 as \xNN, C1 controls as \u00NN. malloc'd;
 * NULL when out of memory. */
char *audit_quote(const char *s);

/* A name for a text listing read by programs (.txfs/changes, txfs diff,
 * status), quoted as git quotes paths (core.quotePath=false): a name that
 * holds a control byte (C0, DEL, C1), '"', '\', a byte outside valid
 * UTF-8, or the listing's separator sep (e.g. " -> "; NULL: none) is
 * written in double quotes with C escapes (\a \b \t \n \v \f \r \" \\,
 * other bytes as 3-digit octal \ooo); any other name as is. So one name
 * is one line, plain names print exactly as they are, and the output is
 * valid UTF-8. malloc'd; NULL when out of memory. */
char *audit_cquote(const char *s, const char *sep);
/* Read one quoted name at s (which starts with '"'): its bytes into *out
 * (malloc'd), *end just past the closing quote. 0, -EINVAL (not a quoted
 * name, a bad escape, \000), -ENOMEM. */
int audit_cunquote(const char *s, char **out, const char **end);

#endif /* TXFS_POLICY_H */
