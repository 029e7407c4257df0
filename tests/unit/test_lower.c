/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_lower.c - path handling in the real directory: resolution stays
 * beneath the root and never follows a symlink, with openat2 and with the
 * component walk; names and joins; what git ignores (ignored.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "lower/lower.h"

struct fx {
	char dir[64];
	struct txfs fs;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	char p[128];
	FILE *fp;

	snprintf(f->dir, sizeof(f->dir), "/tmp/txfs-lower-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(p, sizeof(p), "%s/ws", f->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/ws/d", f->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	snprintf(p, sizeof(p), "%s/ws/d/file", f->dir);
	fp = fopen(p, "w");
	fputs("inside", fp);
	fclose(fp);
	snprintf(p, sizeof(p), "%s/secret", f->dir);
	fp = fopen(p, "w");
	fputs("outside", fp);
	fclose(fp);
	snprintf(p, sizeof(p), "%s/ws/out", f->dir);
	assert_int_equal(symlink("..", p), 0);
	snprintf(p, sizeof(p), "%s/ws/dl", f->dir);
	assert_int_equal(symlink("d", p), 0);
	snprintf(p, sizeof(p), "%s/ws", f->dir);
	f->fs.rootfd = open(p, O_RDONLY | O_DIRECTORY);
	f->fs.use_openat2 = lower_has_openat2(f->fs.rootfd);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	close(f->fs.rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void check_resolution(struct txfs *fs)
{
	struct stat st;
	char buf[64];
	int fd;

	fd = lower_open(fs, "d/file", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(read(fd, buf, 6), 6);
	assert_memory_equal(buf, "inside", 6);
	close(fd);
	/* A symlink component is never followed, not even inside. */
	assert_true(lower_open(fs, "out/secret", O_RDONLY) < 0);
	assert_true(lower_open(fs, "dl/file", O_RDONLY) < 0);
	/* The final symlink is refused for a real open... */
	assert_true(lower_open(fs, "out", O_RDONLY) < 0);
	/* ...and is the link itself for lstat and readlink. */
	assert_int_equal(lower_stat(fs, "out", &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(lower_readlink(fs, "out", buf, sizeof(buf)), 2);
	assert_true(lower_open(fs, "../secret", O_RDONLY) < 0);
	assert_true(lower_open(fs, "d/../../secret", O_RDONLY) < 0);
	assert_int_equal(lower_stat_at(fs, "d", "file", &st), 0);
	assert_int_equal(st.st_size, 6);
	assert_int_equal(lower_stat_at(fs, "", "d", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
	assert_int_equal(lower_stat_at(fs, "dl", "file", &st), -ENOENT);
	assert_int_equal(lower_stat_at(fs, "d", "missing", &st), -ENOENT);
	assert_int_equal(lower_stat(fs, "", &st), 0);
	assert_true(S_ISDIR(st.st_mode));
}

static void test_openat2(void **state)
{
	struct fx *f = *state;

	assert_true(f->fs.use_openat2);	/* Linux >= 5.6 */
	check_resolution(&f->fs);
}

static void test_component_walk(void **state)
{
	struct fx *f = *state;

	f->fs.use_openat2 = false;
	check_resolution(&f->fs);
}

static void test_names(void **state)
{
	char *p;

	(void)state;
	assert_true(name_ok("a"));
	assert_true(name_ok("..."));
	assert_true(name_ok("new\nline"));
	assert_false(name_ok(""));
	assert_false(name_ok("."));
	assert_false(name_ok(".."));
	assert_false(name_ok("a/b"));
	p = path_join("", "x");
	assert_string_equal(p, "x");
	free(p);
	p = path_join("a/b", "c");
	assert_string_equal(p, "a/b/c");
	free(p);
}

/* lower/ignored.c: what git ignores (untracked and matched by the ignore
 * rules), a folder standing for everything below it; tracked files that
 * a rule matches are not; no repository: nothing. */
static void test_ignored(void **state)
{
	struct lower_ignored *ig;
	char dir[64], cmd[1024];

	(void)state;
	if (system("git --version >/dev/null 2>&1")) {
		skip();
		return;
	}
	snprintf(dir, sizeof(dir), "/tmp/txfs-ignored-XXXXXX");
	assert_non_null(mkdtemp(dir));
	assert_int_equal(lower_ignored_load(dir, &ig), 0);
	assert_int_equal(lower_ignored_count(ig), 0);	/* no repository */
	lower_ignored_free(ig);
	snprintf(cmd, sizeof(cmd), "cd %s && git init -q . && "
		 "printf 'node_modules/\\n*.log\\n' > .gitignore && "
		 "mkdir -p node_modules/a src && echo 1 > node_modules/a/x.js && "
		 "echo 2 > src/t.log && echo 3 > src/u.log && echo 4 > src/m.c "
		 "&& git add -f src/t.log && mkdir -p sub/.git && "
		 "echo 5 > sub/f && printf 'sub/\\n' >> .gitignore", dir);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(lower_ignored_load(dir, &ig), 0);
	assert_true(lower_ignored_has(ig, "node_modules"));
	assert_true(lower_ignored_has(ig, "node_modules/a/x.js"));
	assert_true(lower_ignored_has(ig, "src/u.log"));
	assert_false(lower_ignored_has(ig, "src/t.log"));	/* tracked */
	assert_false(lower_ignored_has(ig, "src/m.c"));
	assert_false(lower_ignored_has(ig, "src"));
	assert_false(lower_ignored_has(ig, "node_modulesx"));
	assert_false(lower_ignored_has(ig, "sub/f"));	/* a repository */
	assert_false(lower_ignored_has(ig, ""));
	assert_false(lower_ignored_has(NULL, "node_modules"));
	lower_ignored_free(ig);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	assert_int_equal(system(cmd), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_openat2, setup, teardown),
		cmocka_unit_test_setup_teardown(test_component_walk, setup, teardown),
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_ignored),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
