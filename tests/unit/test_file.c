/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_file.c - block copy-on-write: writes merged over a real file,
 * truncation and re-extension, reads across block edges, the partial
 * update that stores one block, and the real file left untouched.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
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

#include "view/view.h"

#define REAL_SIZE (5 * LAYER_BLOCK + 1234)

struct fx {
	char dir[64];
	struct txfs fs;
	char *model;		/* what the file must read as */
	size_t msize;
	uint64_t tino;
	struct fhandle *fh;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	struct layer_ws ws = { .dev = 1, .ino = 2 };
	const char *why;
	char p[128];
	struct stat st;
	int fd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/txfs-file-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(p, sizeof(p), "%s/ws", f->dir);
	assert_int_equal(mkdir(p, 0700), 0);
	f->msize = REAL_SIZE;
	f->model = malloc(64u << 20);
	for (size_t i = 0; i < f->msize; i++)
		f->model[i] = (char)('a' + (i * 7 + i / 977) % 26);
	snprintf(p, sizeof(p), "%s/ws/real", f->dir);
	fd = open(p, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, f->model, f->msize), (ssize_t)f->msize);
	fstat(fd, &st);
	close(fd);
	snprintf(p, sizeof(p), "%s/ws", f->dir);
	f->fs.rootfd = open(p, O_RDONLY | O_DIRECTORY);
	f->fs.use_openat2 = lower_has_openat2(f->fs.rootfd);
	f->fs.root_ino = 1;
	pthread_mutex_init(&f->fs.fh_lock, NULL);
	assert_int_equal(itab_init(&f->fs), 0);
	snprintf(p, sizeof(p), "%s", f->dir);
	assert_int_equal(layer_open(open(p, O_RDONLY | O_DIRECTORY), "layer",
				    0, &ws, &f->fs.layer, &why), 0);
	f->tino = st.st_ino;
	assert_int_equal(itab_get(&f->fs, f->tino, "real", 1, "real", 1), 0);
	assert_int_equal(file_open(&f->fs, f->tino, f->tino, O_RDWR, &f->fh), 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	file_close(&f->fs, f->fh);
	layer_close(f->fs.layer);
	itab_destroy(&f->fs);
	close(f->fs.rootfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f->model);
	free(f);
	return 0;
}

static void check_all(struct fx *f)
{
	char *buf = malloc(f->msize + 100);
	size_t got;

	assert_int_equal(file_read(&f->fs, f->fh, buf, f->msize + 100, 0, &got),
			 0);
	assert_int_equal(got, f->msize);
	assert_memory_equal(buf, f->model, f->msize);
	/* Odd offsets across block edges. */
	for (size_t off = 1; off < f->msize; off += LAYER_BLOCK / 3 + 17) {
		size_t n = 3 * LAYER_BLOCK / 2;

		assert_int_equal(file_read(&f->fs, f->fh, buf, n, (off_t)off,
					   &got), 0);
		assert_int_equal(got, off + n > f->msize ? f->msize - off : n);
		assert_memory_equal(buf, f->model + off, got);
	}
	free(buf);
}

static void do_write(struct fx *f, size_t off, size_t len, char c)
{
	char *buf = malloc(len);

	memset(buf, c, len);
	assert_int_equal(file_write(&f->fs, f->fh, buf, len, (off_t)off, NULL), 0);
	if (off > f->msize)
		memset(f->model + f->msize, 0, off - f->msize);
	memset(f->model + off, c, len);
	if (off + len > f->msize)
		f->msize = off + len;
	free(buf);
}

static void do_truncate(struct fx *f, size_t size)
{
	struct layer_txn *t;
	struct tview v;

	assert_int_equal(layer_begin(f->fs.layer, true, &t), 0);
	assert_int_equal(view_inode(&f->fs, t, f->tino, &v), 0);
	assert_int_equal(guard_copy_up(&f->fs, t, &v), 0);
	assert_int_equal(file_truncate(&f->fs, t, &v, size, NULL), 0);
	assert_int_equal(layer_inode_update(t, f->tino, &v.rec), 0);
	assert_int_equal(layer_commit(t), 0);
	tview_free(&v);
	if (size > f->msize)
		memset(f->model + f->msize, 0, size - f->msize);
	f->msize = size;
}

static void test_untouched_reads_real(void **state)
{
	check_all(*state);
}

static void test_block_merge(void **state)
{
	struct fx *f = *state;

	do_write(f, 100, 10, 'X');			/* inside block 0 */
	do_write(f, LAYER_BLOCK - 5, 10, 'Y');		/* across 0|1 */
	do_write(f, 2 * LAYER_BLOCK, LAYER_BLOCK, 'Z');	/* whole block 2 */
	do_write(f, REAL_SIZE - 10, 100, 'W');		/* extends the file */
	check_all(f);
}

static void test_truncate_then_extend_reads_zeros(void **state)
{
	struct fx *f = *state;

	do_write(f, 10, 5, 'A');
	do_truncate(f, LAYER_BLOCK + 100);	/* mid block 1, real bytes */
	do_truncate(f, 3 * LAYER_BLOCK);	/* grow: must be zeros */
	check_all(f);
	do_truncate(f, 20);			/* inside a written chunk */
	do_write(f, 4 * LAYER_BLOCK, 3, 'B');	/* hole then data */
	check_all(f);
}

static void test_partial_update_stores_one_block(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t;
	uint64_t bytes;

	do_write(f, 3 * LAYER_BLOCK + 4096, 4096, 'P');
	assert_int_equal(layer_begin(f->fs.layer, false, &t), 0);
	assert_int_equal(layer_chunks_bytes(t, f->tino, &bytes), 0);
	layer_txn_end(t);
	assert_int_equal(bytes, LAYER_BLOCK);
	check_all(f);
}

/* A small write into a stored block stores a piece, not the block again;
 * reads, a truncation through pieces and growing again see the right
 * bytes. */
static void test_small_write_stores_piece(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t;
	uint64_t bytes;
	bool base;
	unsigned n;

	do_write(f, 2 * LAYER_BLOCK, LAYER_BLOCK, 'Z');	/* a base */
	do_write(f, 2 * LAYER_BLOCK + 4096, 4096, 'P');	/* one piece */
	do_write(f, 2 * LAYER_BLOCK + 3 * 4096 + 100, 50, 'Q'); /* partial */
	assert_int_equal(layer_begin(f->fs.layer, false, &t), 0);
	assert_int_equal(layer_chunks_bytes(t, f->tino, &bytes), 0);
	assert_int_equal(layer_block_info(t, f->tino, 2, &base, &n), 0);
	layer_txn_end(t);
	assert_int_equal(bytes, LAYER_BLOCK + 2 * 4096);
	assert_true(base);
	assert_int_equal(n, 2);
	check_all(f);
	do_truncate(f, 2 * LAYER_BLOCK + 3 * 4096 + 120);	/* mid piece */
	check_all(f);
	do_truncate(f, 4 * LAYER_BLOCK);			/* zeros */
	check_all(f);
	/* more pieces than a block keeps: stored whole again */
	for (size_t i = 0; i < LAYER_PIECES; i++)
		do_write(f, 2 * LAYER_BLOCK + i * 4096 + 7, 9, (char)('a' + i));
	assert_int_equal(layer_begin(f->fs.layer, false, &t), 0);
	assert_int_equal(layer_block_info(t, f->tino, 2, &base, &n), 0);
	layer_txn_end(t);
	assert_true(base);
	assert_true(n <= 8);
	check_all(f);
}

/* A block of real bytes with no base takes no pieces (they would hide
 * the real bytes from layer_chunk_get); a block past lower_valid does. */
static void test_pieces_never_over_real_bytes(void **state)
{
	struct fx *f = *state;
	struct layer_txn *t;
	bool base;
	unsigned n;

	do_write(f, LAYER_BLOCK + 4096, 4096, 'R');		/* real block */
	do_truncate(f, 2 * LAYER_BLOCK);
	do_truncate(f, 8 * LAYER_BLOCK);			/* zeros */
	do_write(f, 6 * LAYER_BLOCK + 8192, 4096, 'H');	/* in a hole */
	assert_int_equal(layer_begin(f->fs.layer, false, &t), 0);
	assert_int_equal(layer_block_info(t, f->tino, 1, &base, &n), 0);
	assert_true(base);
	assert_int_equal(n, 0);
	assert_int_equal(layer_block_info(t, f->tino, 6, &base, &n), 0);
	assert_false(base);
	assert_int_equal(n, 1);
	layer_txn_end(t);
	check_all(f);
}

/* Random writes, truncations and punched holes of every size against a
 * model of the file, read back whole and across edges. */
static void test_random_small_writes(void **state)
{
	struct fx *f = *state;
	unsigned seed = 11;

	for (int i = 0; i < 400; i++) {
		unsigned r = (unsigned)rand_r(&seed);
		size_t off = (size_t)rand_r(&seed) % (12 * LAYER_BLOCK);
		size_t len = r % 4 == 0 ? 4096 : (size_t)rand_r(&seed) % 9000 + 1;

		if (r % 4 == 0)
			off &= ~(size_t)4095;
		if (r % 29 == 0) {
			do_truncate(f, off);
		} else if (r % 31 == 0 && off < f->msize) {
			size_t e = off + len < f->msize ? off + len : f->msize;

			assert_int_equal(file_fallocate(&f->fs, f->fh,
				FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
				(off_t)off, (off_t)len, NULL), 0);
			memset(f->model + off, 0, e - off);
		} else {
			do_write(f, off, len, (char)('A' + i % 26));
		}
		if (i % 50 == 49)
			check_all(f);
	}
	check_all(f);
}

static void test_real_file_untouched(void **state)
{
	struct fx *f = *state;
	char *buf = malloc(REAL_SIZE), *orig = malloc(REAL_SIZE);
	char p[128];
	int fd;

	memcpy(orig, f->model, REAL_SIZE);
	do_write(f, 0, 50000, 'R');
	do_truncate(f, 7);
	snprintf(p, sizeof(p), "%s/ws/real", f->dir);
	fd = open(p, O_RDONLY);
	assert_int_equal(read(fd, buf, REAL_SIZE), REAL_SIZE);
	close(fd);
	assert_memory_equal(buf, orig, REAL_SIZE);
	free(buf);
	free(orig);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_untouched_reads_real, setup, teardown),
		cmocka_unit_test_setup_teardown(test_block_merge, setup, teardown),
		cmocka_unit_test_setup_teardown(test_truncate_then_extend_reads_zeros, setup, teardown),
		cmocka_unit_test_setup_teardown(test_partial_update_stores_one_block, setup, teardown),
		cmocka_unit_test_setup_teardown(test_real_file_untouched, setup, teardown),
		cmocka_unit_test_setup_teardown(test_small_write_stores_piece, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pieces_never_over_real_bytes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_random_small_writes, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
