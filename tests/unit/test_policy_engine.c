/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_policy_engine.c - the decisions of a loaded policy: rule order and
 * first match, allow exceptions, hide, flag, readonly, limits, the tree
 * checks, the NULL policy, the index agreeing with a plain scan, and the
 * shipped policies doing what their comments say (git keeps working under
 * strict.policy, secrets stay hidden, ci.policy leaves only outputs
 * writable).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "policy_int.h"

static struct policy *load_ok(const char *text)
{
	struct policy *p = NULL;
	char *msg = NULL;

	if (policy_load_buf("t.policy", text, strlen(text), &p, &msg))
		fail_msg("refused: %s", msg ? msg : "");
	return p;
}

static struct policy *load_file(const char *path)
{
	struct policy *p = NULL;
	char *msg = NULL;

	if (policy_load_file(path, &p, &msg))
		fail_msg("%s refused: %s", path, msg ? msg : "");
	return p;
}

static int check(const struct policy *p, enum policy_op op, const char *path)
{
	return policy_check(p, op, path, strlen(path), NULL);
}

/* The action and line deciding op on path. */
static void expect(const struct policy *p, enum policy_op op,
		   const char *path, enum policy_action a, unsigned line)
{
	struct policy_verdict v;
	int ret = policy_check(p, op, path, strlen(path), &v);

	if (v.action != a || v.line != line ||
	    ret != (a == POLICY_ALLOW ? 0 : -EACCES))
		fail_msg("%s %s: got %s line %u ret %d, want %s line %u",
			 policy_op_name(op), path, policy_action_name(v.action),
			 v.line, ret, policy_action_name(a), line);
}

static void test_first_match_wins(void **state)
{
	struct policy *p = load_ok("deny write a/**\n"
				   "allow write a/b\n"
				   "deny write **/*.c\n");

	(void)state;
	expect(p, POLICY_OP_WRITE, "a/b", POLICY_DENY, 1);
	expect(p, POLICY_OP_WRITE, "a/x.c", POLICY_DENY, 1);
	expect(p, POLICY_OP_WRITE, "b/x.c", POLICY_DENY, 3);
	expect(p, POLICY_OP_WRITE, "b/x.h", POLICY_ALLOW, 0);
	policy_free(p);
}

static void test_allow_exception(void **state)
{
	struct policy *p = load_ok("allow write a/keep\n"
				   "allow modify a/tmp/\n"
				   "deny modify a/\n");

	(void)state;
	expect(p, POLICY_OP_WRITE, "a/keep", POLICY_ALLOW, 1);
	expect(p, POLICY_OP_DELETE, "a/keep", POLICY_DENY, 3);
	expect(p, POLICY_OP_DELETE, "a/tmp/x/y", POLICY_ALLOW, 2);
	expect(p, POLICY_OP_WRITE, "a/other", POLICY_DENY, 3);
	expect(p, POLICY_OP_READ, "a/other", POLICY_ALLOW, 0);
	expect(p, POLICY_OP_WRITE, "b", POLICY_ALLOW, 0);
	policy_free(p);
}

/* The same glob in several rules, several globs in one rule. */
static void test_multi_glob_rules(void **state)
{
	struct policy *p = load_ok("deny delete x y/** *.tmp\n"
				   "deny delete,write y/z\n");

	(void)state;
	expect(p, POLICY_OP_DELETE, "x", POLICY_DENY, 1);
	expect(p, POLICY_OP_DELETE, "y/z", POLICY_DENY, 1);
	expect(p, POLICY_OP_WRITE, "y/z", POLICY_DENY, 2);
	expect(p, POLICY_OP_DELETE, "a.tmp", POLICY_DENY, 1);
	expect(p, POLICY_OP_DELETE, "d/a.tmp", POLICY_ALLOW, 0);
	policy_free(p);
}

static void test_readonly_modify_all(void **state)
{
	struct policy *p = load_ok("readonly ro/\n"
				   "deny all gone\n");

	(void)state;
	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		expect(p, op, "ro/f", op == POLICY_OP_READ ? POLICY_ALLOW
							   : POLICY_DENY,
		       op == POLICY_OP_READ ? 0 : 1);
		expect(p, op, "gone", POLICY_DENY, 2);
	}
	expect(p, POLICY_OP_MKDIR, "ro", POLICY_DENY, 1);
	expect(p, POLICY_OP_WRITE, "rw", POLICY_ALLOW, 0);
	policy_free(p);
}

static void test_hide(void **state)
{
	struct policy *p = load_ok("allow read pub.pem\n"
				   "allow all tmpl.pem\n"
				   "hide **/*.pem secrets/\n");

	(void)state;
	for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
		expect(p, op, "a/k.pem", POLICY_HIDE, 3);
		expect(p, op, "secrets/x", POLICY_HIDE, 3);
		expect(p, op, "tmpl.pem", POLICY_ALLOW, 2);
	}
	assert_true(policy_is_hidden(p, "a/k.pem", 7));
	assert_true(policy_is_hidden(p, "secrets", 7));
	assert_false(policy_is_hidden(p, "a/k.pe", 6));
	assert_true(policy_is_hidden(p, "a/k.pem/inner", 13));	/* below */
	/* an allow read before a hide makes the path visible, not writable */
	assert_false(policy_is_hidden(p, "pub.pem", 7));
	expect(p, POLICY_OP_READ, "pub.pem", POLICY_ALLOW, 1);
	expect(p, POLICY_OP_WRITE, "pub.pem", POLICY_HIDE, 3);
	assert_true(policy_hides_below(p, "", 0));
	assert_true(policy_hides_below(p, "src", 3));
	assert_true(policy_hides_below(p, "secrets", 7));
	policy_free(p);
	p = load_ok("hide secrets/\n");
	assert_true(policy_hides_below(p, "", 0));
	assert_true(policy_hides_below(p, "secrets/a", 9));
	assert_false(policy_hides_below(p, "src", 3));
	assert_false(policy_is_hidden(p, "src", 3));
	policy_free(p);
	p = load_ok("allow read pub/\nhide **/*.pem\n");
	assert_false(policy_hides_below(p, "pub", 3));
	assert_true(policy_hides_below(p, "priv", 4));
	policy_free(p);
}

static void test_flag(void **state)
{
	struct policy *p = load_ok("flag .github/workflows/ **/.envrc\n"
				   "deny delete .github/\n");
	struct policy_verdict v;

	(void)state;
	assert_int_equal(policy_check(p, POLICY_OP_WRITE,
				      ".github/workflows/ci.yml", 24, &v), 0);
	assert_true(v.flagged);
	assert_int_equal(v.action, POLICY_ALLOW);
	assert_int_equal(v.line, 1);
	assert_string_equal(v.file, "t.policy");
	/* a deciding rule keeps its line; the flag still shows */
	assert_int_equal(policy_check(p, POLICY_OP_DELETE,
				      ".github/workflows/ci.yml", 24, &v),
			 -EACCES);
	assert_true(v.flagged);
	assert_int_equal(v.line, 2);
	/* reads are never flagged */
	assert_int_equal(policy_check(p, POLICY_OP_READ, "a/.envrc", 8, &v), 0);
	assert_false(v.flagged);
	assert_int_equal(v.line, 0);
	assert_true(policy_is_flagged(p, "a/.envrc", 8));
	assert_false(policy_is_flagged(p, "a/envrc", 7));
	assert_int_equal(policy_check(p, POLICY_OP_WRITE, "src/x", 5, &v), 0);
	assert_false(v.flagged);
	policy_free(p);
}

static void test_null_and_bad_op(void **state)
{
	struct policy_verdict v = { .line = 9, .flagged = true };
	const char *const *globs;
	struct policy *p = load_ok("deny write x\n");

	(void)state;
	assert_int_equal(policy_check(NULL, POLICY_OP_DELETE, "x", 1, &v), 0);
	assert_int_equal(v.action, POLICY_ALLOW);
	assert_int_equal(v.line, 0);
	assert_false(v.flagged);
	assert_null(v.file);
	assert_int_equal(policy_check_tree(NULL, POLICY_OP_DELETE, "", 0, &v),
			 0);
	assert_false(policy_is_hidden(NULL, "x", 1));
	assert_false(policy_hides_below(NULL, "", 0));
	assert_false(policy_is_flagged(NULL, "x", 1));
	assert_int_equal(policy_limits(NULL)->deletes, UINT64_MAX);
	assert_false(policy_network_denied(NULL));
	assert_false(policy_exec_denied(NULL, "x", 1));
	assert_false(policy_control_denied(NULL, "commit"));
	assert_int_equal(policy_exec_globs(NULL, &globs), 0);
	assert_string_equal(policy_text(NULL), "");
	assert_int_equal(policy_check(p, POLICY_OP__COUNT, "x", 1, &v),
			 -EINVAL);
	assert_int_equal(policy_check(p, (enum policy_op)-1, "x", 1, NULL),
			 -EINVAL);
	assert_int_equal(policy_check_tree(p, POLICY_OP__COUNT, "", 0, NULL),
			 -EINVAL);
	policy_free(p);
	policy_free(NULL);
}

static void test_op_names(void **state)
{
	enum policy_op op;

	(void)state;
	for (unsigned i = 0; i < POLICY_OP__COUNT; i++) {
		assert_int_equal(policy_op_parse(policy_op_name(i), &op), 0);
		assert_int_equal(op, i);
	}
	assert_string_equal(policy_op_name(POLICY_OP_TRUNCATE), "truncate");
	assert_int_equal(policy_op_parse("modify", &op), -EINVAL);
	assert_int_equal(policy_op_parse("", &op), -EINVAL);
	assert_string_equal(policy_action_name(POLICY_HIDE), "hide");
}

static void test_check_tree(void **state)
{
	struct policy *p = load_ok("allow delete a/x\n"
				   "deny delete a/*\n"
				   "deny delete .git/objects/\n"
				   "allow modify build/\n"
				   "readonly out/**\n"
				   "hide **/.env\n");
	struct policy_verdict v;

	(void)state;
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, "a", 1, &v),
			 -EACCES);
	assert_int_equal(v.line, 2);
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, "a/x", 3, &v),
			 -EACCES);	/* .env may be below */
	assert_int_equal(v.action, POLICY_HIDE);
	assert_int_equal(v.line, 6);
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, ".git", 4, &v),
			 -EACCES);
	assert_int_equal(v.line, 3);
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, "build", 5, &v),
			 0);	/* the allow covers all below */
	assert_int_equal(v.line, 0);
	assert_int_equal(policy_check_tree(p, POLICY_OP_WRITE, "out", 3, &v),
			 -EACCES);
	assert_int_equal(v.line, 5);
	policy_free(p);
	p = load_ok("deny delete a/*\nreadonly .git/config\n");
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, "src", 3, &v),
			 0);
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, "a", 1, &v),
			 -EACCES);
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, "a/b", 3, &v),
			 0);
	assert_int_equal(policy_check_tree(p, POLICY_OP_RENAME, ".git", 4, &v),
			 -EACCES);
	assert_int_equal(policy_check_tree(p, POLICY_OP_READ, ".git", 4, &v),
			 0);
	assert_int_equal(policy_check_tree(p, POLICY_OP_RENAME, "", 0, &v),
			 -EACCES);
	policy_free(p);
}

static void test_exec_and_control(void **state)
{
	struct policy *p = load_ok("exec deny **/rm bin/\ncontrol deny "
				   "savepoint\n");
	const char *const *globs;

	(void)state;
	assert_true(policy_exec_denied(p, "rm", 2));
	assert_true(policy_exec_denied(p, "usr/bin/rm", 10));
	assert_true(policy_exec_denied(p, "bin/x/y", 7));
	assert_false(policy_exec_denied(p, "rmdir", 5));
	assert_int_equal(policy_exec_globs(p, &globs), 2);
	assert_string_equal(globs[1], "bin/");
	assert_true(policy_control_denied(p, "savepoint"));
	assert_false(policy_control_denied(p, "commit"));
	assert_false(policy_control_denied(p, NULL));
	/* exec deny and control deny are not file rules */
	assert_int_equal(check(p, POLICY_OP_READ, "bin/x"), 0);
	policy_free(p);
}

/* ---- the index agrees with a plain scan ------------------------------- */

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(*s >> 33);
}

static const char *const parts[] = {
	"src", "a", "b", ".git", "x.c", "*.c", "*", "**", "?", "[ab]",
	"objects", ".env*", "node_modules", "id_*", "lib",
};

static void random_glob(uint64_t *s, char *out)
{
	unsigned n = 1 + rnd(s) % 4;

	out[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		if (i)
			strcat(out, "/");
		strcat(out, parts[rnd(s) % (sizeof(parts) / sizeof(*parts))]);
	}
	if (rnd(s) % 8 == 0)
		strcat(out, "/");
}

static void random_path(uint64_t *s, char *out)
{
	static const char *const names[] = {
		"src", "a", "b", ".git", "x.c", "y.h", "objects", ".env",
		".envrc", "node_modules", "id_rsa", "lib", "ab",
	};
	unsigned n = rnd(s) % 5;

	out[0] = '\0';
	for (unsigned i = 0; i < n; i++) {
		if (i)
			strcat(out, "/");
		strcat(out, names[rnd(s) % (sizeof(names) / sizeof(*names))]);
	}
}

static char *random_policy(uint64_t *s)
{
	static const char *const kinds[] = {
		"deny write", "deny delete,rename", "allow modify", "hide",
		"readonly", "flag", "allow read", "deny all",
	};
	char *text = calloc(1, 64 * 1024), glob[256];

	for (unsigned r = 0; r < 40; r++) {
		strcat(text, kinds[rnd(s) % (sizeof(kinds) / sizeof(*kinds))]);
		for (unsigned g = 0; g < 1 + rnd(s) % 3; g++) {
			random_glob(s, glob);
			strcat(text, " ");
			strcat(text, glob);
		}
		strcat(text, "\n");
	}
	return text;
}

static void compare_index(const struct index *ix, const char *path)
{
	const struct entry *a = index_match(ix, path, strlen(path));
	const struct entry *b = index_match_linear(ix, path, strlen(path));

	if ((a == NULL) != (b == NULL) || (a && a->order != b->order))
		fail_msg("path '%s': index %d, scan %d", path,
			 a ? (int)a->order : -1, b ? (int)b->order : -1);
}

static void test_index_matches_scan(void **state)
{
	uint64_t s = 42;
	char path[256];
	unsigned matched = 0;

	(void)state;
	for (unsigned round = 0; round < 50; round++) {
		char *text = random_policy(&s);
		struct policy *p = load_ok(text);

		for (unsigned i = 0; i < 400; i++) {
			random_path(&s, path);
			for (unsigned op = 0; op < POLICY_OP__COUNT; op++) {
				compare_index(&p->by_op[op], path);
				matched += index_match(&p->by_op[op], path,
						       strlen(path)) != NULL;
			}
			compare_index(&p->flags, path);
		}
		policy_free(p);
		free(text);
	}
	assert_true(matched > 10000);	/* the test did exercise matches */
}

/* ---- the shipped policies --------------------------------------------- */

/* The line of text that starts with rule. */
static unsigned line_of(const char *text, const char *rule)
{
	unsigned line = 1;

	for (const char *s = text; *s; s++) {
		if ((s == text || s[-1] == '\n') &&
		    !strncmp(s, rule, strlen(rule)))
			return line;
		line += *s == '\n';
	}
	fail_msg("no line '%s'", rule);
	return 0;
}

/* A caller for policy_check_by: its executable and working folder. */
struct fake_caller {
	const char *exe, *cwd;
};

static int fake_exe(void *arg, char *buf, size_t size)
{
	const struct fake_caller *f = arg;

	snprintf(buf, size, "%s", f->exe);
	return 0;
}

static int fake_cwd(void *arg, char *buf, size_t size)
{
	const struct fake_caller *f = arg;

	snprintf(buf, size, "%s", f->cwd);
	return 0;
}

static int check_as(const struct policy *p, enum policy_op op,
		    const char *path, const char *exe, const char *cwd)
{
	struct fake_caller f = { exe, cwd };
	struct policy_caller who = { fake_exe, fake_cwd, &f };

	return policy_check_by(p, op, path, strlen(path), &who, NULL);
}

static void test_default_policy(void **state)
{
	struct policy *p = NULL;
	struct policy_verdict v;
	unsigned git, in;

	(void)state;
	assert_int_equal(policy_load_default(&p), 0);
	git = line_of(policy_text(p), "deny delete,rename **/.git except-by");
	in = line_of(policy_text(p), "deny delete,truncate **/.git/* ");
	expect(p, POLICY_OP_DELETE, ".git", POLICY_DENY, git);
	expect(p, POLICY_OP_RENAME, ".git", POLICY_DENY, git);
	/* an unknown program (policy_check: no caller) is no git */
	expect(p, POLICY_OP_DELETE, ".git/index", POLICY_DENY, in);
	expect(p, POLICY_OP_TRUNCATE, ".git/HEAD", POLICY_DENY, in);
	expect(p, POLICY_OP_DELETE, ".git/objects/ab/cd", POLICY_DENY, in);
	expect(p, POLICY_OP_DELETE, ".git/index.lock", POLICY_ALLOW,
	       line_of(policy_text(p), "allow delete,truncate **/.git/*.lock"));
	expect(p, POLICY_OP_WRITE, ".git/index", POLICY_ALLOW, 0);
	expect(p, POLICY_OP_CREATE, ".git/objects/ab/cd", POLICY_ALLOW, 0);
	expect(p, POLICY_OP_DELETE, "sub/.git", POLICY_DENY, git);
	expect(p, POLICY_OP_RENAME, "a/b/.git", POLICY_DENY, git);
	/* the real git, in its repository, is exempt; from a parent folder
	 * it is not (git clean -ffdx there); copies are not git */
	assert_int_equal(check_as(p, POLICY_OP_DELETE, ".git/index",
				  "/usr/bin/git", ""), 0);
	assert_int_equal(check_as(p, POLICY_OP_DELETE, "sub/.git/index",
				  "/usr/lib/git-core/git", "sub/x"), 0);
	assert_int_equal(check_as(p, POLICY_OP_DELETE, "sub/.git/index",
				  "/usr/bin/git", ""), -EACCES);
	assert_int_equal(check_as(p, POLICY_OP_DELETE, "sub/.git",
				  "/usr/bin/git", ""), 0);
	assert_int_equal(check_as(p, POLICY_OP_DELETE, ".git/index",
				  "/tmp/git", ""), -EACCES);
	assert_int_equal(check_as(p, POLICY_OP_DELETE, ".git/index",
				  "/usr/bin/git-evil", ""), -EACCES);
	expect(p, POLICY_OP_WRITE, "src/main.c", POLICY_ALLOW, 0);
	/* a nested repository could be below any folder: the tree check is
	 * conservative (the filesystem then walks the folder) */
	assert_int_equal(policy_check_tree(p, POLICY_OP_RENAME, "src", 3, &v),
			 -EACCES);
	assert_int_equal(policy_check_tree(p, POLICY_OP_WRITE, "src", 3, &v),
			 0);
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE, ".git", 4, &v),
			 -EACCES);	/* a .git could be nested in .git */
	assert_int_equal(policy_limits(p)->deletes, 1000);
	static const char *const flagged[] = {
		".git/hooks/pre-commit", ".git/config", "sub/.git/config",
		".git/modules/m/hooks/post-checkout", ".gitattributes",
		"a/.gitattributes", ".gitmodules", ".envrc", "x/y/.envrc",
		".bashrc", ".zshrc", ".profile", ".vscode/tasks.json",
		"pkg/.vscode/launch.json", "app.code-workspace",
		".github/workflows/ci.yml", ".gitlab-ci.yml",
		".circleci/config.yml", "Jenkinsfile", ".husky/pre-commit",
		".pre-commit-config.yaml", ".devcontainer/devcontainer.json",
	};
	for (size_t i = 0; i < sizeof(flagged) / sizeof(*flagged); i++) {
		policy_check(p, POLICY_OP_WRITE, flagged[i],
			     strlen(flagged[i]), &v);
		if (!v.flagged || v.action != POLICY_ALLOW)
			fail_msg("%s is not flagged", flagged[i]);
	}
	static const char *const plain[] = {
		"src/main.c", ".git/index", ".git/objects/ab/cdef", "README",
		".github/CODEOWNERS", "config", ".git/refs/heads/config",
		"node_modules/x/y.js", ".vscode/extensions.json",
	};
	for (size_t i = 0; i < sizeof(plain) / sizeof(*plain); i++) {
		policy_check(p, POLICY_OP_WRITE, plain[i], strlen(plain[i]),
			     &v);
		if (v.flagged)
			fail_msg("%s is flagged", plain[i]);
	}
	assert_false(policy_hides_below(p, "", 0));
	policy_free(p);
}

/* One git step: each op on a path must give the expected answer. */
struct git_step {
	enum policy_op op;
	const char *path;
	bool allowed;
};

static void run_steps(const struct policy *p, const struct git_step *s,
		      size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int ret = check(p, s[i].op, s[i].path);

		if ((ret == 0) != s[i].allowed)
			fail_msg("%s %s: %s", policy_op_name(s[i].op),
				 s[i].path, ret ? "denied" : "allowed");
	}
}

/* rename(from, to) onto a new name, and onto an existing file (which the
 * filesystem also checks as a delete of that file) */
#define GIT_RENAME_NEW(from, to) \
	{ POLICY_OP_RENAME, from, true }, { POLICY_OP_DELETE, from, true }, \
	{ POLICY_OP_RENAME, to, true }, { POLICY_OP_CREATE, to, true }
#define GIT_RENAME(from, to) \
	GIT_RENAME_NEW(from, to), { POLICY_OP_DELETE, to, true }
#define GIT_LOCKED_WRITE(file) \
	{ POLICY_OP_CREATE, file ".lock", true }, \
	{ POLICY_OP_WRITE, file ".lock", true }, GIT_RENAME(file ".lock", file)

static void test_strict_git_works(void **state)
{
	static const struct git_step steps[] = {
		/* git add: a loose object */
		{ POLICY_OP_MKDIR, ".git/objects/ab", true },
		{ POLICY_OP_CREATE, ".git/objects/ab/tmp_obj_Xy12", true },
		{ POLICY_OP_WRITE, ".git/objects/ab/tmp_obj_Xy12", true },
		{ POLICY_OP_LINK, ".git/objects/ab/cdef01", true },
		{ POLICY_OP_CREATE, ".git/objects/ab/cdef01", true },
		{ POLICY_OP_DELETE, ".git/objects/ab/tmp_obj_Xy12", true },
		{ POLICY_OP_WRITE, ".git/objects/ab/cdef01", true }, /* utime */
		GIT_RENAME_NEW(".git/objects/ab/tmp_obj_Q",
			       ".git/objects/ab/ef"),
		GIT_LOCKED_WRITE(".git/index"),
		/* git commit */
		GIT_LOCKED_WRITE(".git/HEAD"),
		GIT_LOCKED_WRITE(".git/refs/heads/main"),
		{ POLICY_OP_WRITE, ".git/logs/HEAD", true },
		{ POLICY_OP_CREATE, ".git/logs/refs/heads/main", true },
		{ POLICY_OP_TRUNCATE, ".git/COMMIT_EDITMSG", true },
		{ POLICY_OP_WRITE, ".git/COMMIT_EDITMSG", true },
		GIT_LOCKED_WRITE(".git/objects/info/commit-graph"),
		/* git branch, checkout, branch -d */
		{ POLICY_OP_MKDIR, ".git/refs/heads/feature", true },
		GIT_LOCKED_WRITE(".git/refs/heads/feature/x"),
		GIT_LOCKED_WRITE(".git/ORIG_HEAD"),
		GIT_LOCKED_WRITE(".git/packed-refs"),
		{ POLICY_OP_DELETE, ".git/refs/heads/feature/x", true },
		{ POLICY_OP_DELETE, ".git/logs/refs/heads/feature/x", true },
		{ POLICY_OP_DELETE, ".git/refs/heads/feature", true },
		/* git fetch: a pack */
		{ POLICY_OP_CREATE, ".git/objects/pack/tmp_pack_a1", true },
		GIT_RENAME_NEW(".git/objects/pack/tmp_pack_a1",
			       ".git/objects/pack/pack-1.pack"),
		{ POLICY_OP_CREATE, ".git/config.lock", true },
		{ POLICY_OP_DELETE, ".git/config.lock", true },
		{ POLICY_OP_WRITE, "src/main.c", true },
		{ POLICY_OP_DELETE, "src/old.c", true },
		/* what strict.policy refuses */
		{ POLICY_OP_DELETE, ".git", false },
		{ POLICY_OP_RENAME, ".git", false },
		{ POLICY_OP_DELETE, ".git/objects/ab/cdef01", false },
		{ POLICY_OP_TRUNCATE, ".git/objects/ab/cdef01", false },
		{ POLICY_OP_CHMOD, ".git/objects/ab/cdef01", false },
		{ POLICY_OP_DELETE, ".git/objects/pack/pack-1.pack", false },
		{ POLICY_OP_DELETE, ".git/objects/ab", false },
		{ POLICY_OP_DELETE, ".git/objects", false },
		{ POLICY_OP_RENAME, ".git/config", false },
		{ POLICY_OP_WRITE, ".git/config", false },
		{ POLICY_OP_CREATE, ".git/hooks/pre-commit", false },
		{ POLICY_OP_WRITE, ".git/hooks/post-checkout", false },
		{ POLICY_OP_CHMOD, ".git/hooks/pre-push", false },
		{ POLICY_OP_DELETE, ".git/refs/heads", false },
		{ POLICY_OP_DELETE, ".git/refs", false },
		{ POLICY_OP_DELETE, ".git/logs", false },
	};
	struct policy *p = load_file(POLICY_SRCDIR "/examples/strict.policy");
	struct policy_verdict v;

	(void)state;
	run_steps(p, steps, sizeof(steps) / sizeof(*steps));
	/* renaming an object folder away is refused; src folders are not */
	assert_int_equal(policy_check_tree(p, POLICY_OP_DELETE,
					   ".git/objects/ab", 15, &v), -EACCES);
	assert_int_equal(policy_check_tree(p, POLICY_OP_RENAME, "src", 3, &v),
			 0);
	assert_int_equal(policy_limits(p)->deletes, 1000);
	policy_free(p);
}

static void test_secrets_policy(void **state)
{
	static const char *const hidden[] = {
		".env", "app/.env", "app/.env.local", "key.pem", "a/b/c.key",
		".ssh/id_rsa", "home/.ssh/config", "id_ed25519.pub",
		".aws/credentials", "x/.aws", ".netrc", ".kube/config",
		".docker/config.json", "cert.p12", ".envy/x", ".env.d/secret",
		"k.pem/inner",
	};
	static const char *const visible[] = {
		"src/main.c", ".env.example", "app/.env.sample", "src/id_map.c",
		"README.md", "pem", "a.pemx", "src/env",
	};
	struct policy *p = load_file(POLICY_SRCDIR "/examples/secrets.policy");

	(void)state;
	for (size_t i = 0; i < sizeof(hidden) / sizeof(*hidden); i++)
		if (!policy_is_hidden(p, hidden[i], strlen(hidden[i])) ||
		    check(p, POLICY_OP_CREATE, hidden[i]) != -EACCES)
			fail_msg("%s is not hidden", hidden[i]);
	for (size_t i = 0; i < sizeof(visible) / sizeof(*visible); i++)
		if (policy_is_hidden(p, visible[i], strlen(visible[i])) ||
		    check(p, POLICY_OP_WRITE, visible[i]))
			fail_msg("%s is hidden", visible[i]);
	assert_true(policy_hides_below(p, "src", 3));
	policy_free(p);
}

static void test_ci_policy(void **state)
{
	static const struct git_step steps[] = {
		{ POLICY_OP_READ, "src/main.c", true },
		{ POLICY_OP_WRITE, "src/main.c", false },
		{ POLICY_OP_CREATE, "src/new.c", false },
		{ POLICY_OP_DELETE, "Makefile", false },
		{ POLICY_OP_CREATE, "build/main.o", true },
		{ POLICY_OP_MKDIR, "build", true },
		{ POLICY_OP_DELETE, "build/x/y.o", true },
		{ POLICY_OP_WRITE, "target/debug/app", true },
		{ POLICY_OP_CREATE, "tests/__pycache__/t.cpython-311.pyc", true },
		{ POLICY_OP_WRITE, "node_modules/.cache/x", true },
		{ POLICY_OP_WRITE, "node_modules/x/index.js", false },
		{ POLICY_OP_CREATE, ".git/index.lock", false },
	};
	struct policy *p = load_file(POLICY_SRCDIR "/examples/ci.policy");
	struct policy_verdict v;

	(void)state;
	run_steps(p, steps, sizeof(steps) / sizeof(*steps));
	assert_true(policy_network_denied(p));
	assert_true(policy_control_denied(p, "commit"));
	assert_false(policy_control_denied(p, "rollback"));
	assert_int_equal(policy_limits(p)->file_size, 1ull << 30);
	assert_int_equal(policy_check_tree(p, POLICY_OP_RENAME, "build/a", 7,
					   &v), 0);
	assert_int_equal(policy_check_tree(p, POLICY_OP_RENAME, "src", 3, &v),
			 -EACCES);
	policy_free(p);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_first_match_wins),
		cmocka_unit_test(test_allow_exception),
		cmocka_unit_test(test_multi_glob_rules),
		cmocka_unit_test(test_readonly_modify_all),
		cmocka_unit_test(test_hide),
		cmocka_unit_test(test_flag),
		cmocka_unit_test(test_null_and_bad_op),
		cmocka_unit_test(test_op_names),
		cmocka_unit_test(test_check_tree),
		cmocka_unit_test(test_exec_and_control),
		cmocka_unit_test(test_index_matches_scan),
		cmocka_unit_test(test_default_policy),
		cmocka_unit_test(test_strict_git_works),
		cmocka_unit_test(test_secrets_policy),
		cmocka_unit_test(test_ci_policy),
	};

	return cmocka_run_group_tests_name("policy_engine", tests, NULL, NULL);
}
