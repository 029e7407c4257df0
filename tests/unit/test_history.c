/* SPDX-License-Identifier: Apache-2.0 */
/*
 * test_history.c - the history's records without a mount (fs/history/):
 * ids, the retention by count, age and size, the bytes a record holds,
 * the list's counts (a path one object left and another took is one
 * modification), an undo refused by a conflict changing nothing, and
 * the temporary-name ops of an undo replayed from any point (a swap),
 * and the pack a small record is made durable through (written back
 * into its record after a crash, keeping a whole manifest; never a
 * damaged pack).
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
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "history/hist_int.h"

struct fx {
	char dir[64], state[96], ws[96];
	int hfd;
};

/* a final record: manifest (time t), one kept file of size bytes */
static void record(struct fx *f, uint64_t id, time_t t, size_t bytes,
		   const char *objects)
{
	char name[40], rel[80], *buf = calloc(1, bytes + 1);
	json_t *doc;
	int fd;

	hist_name(name, sizeof(name), id, false);
	assert_int_equal(mkdirat(f->hfd, name, 0700), 0);
	snprintf(rel, sizeof(rel), "%s/objs", name);
	assert_int_equal(mkdirat(f->hfd, rel, 0700), 0);
	snprintf(rel, sizeof(rel), "%s/objs/k1", name);
	fd = openat(f->hfd, rel, O_WRONLY | O_CREAT, 0600);
	assert_true(fd >= 0);
	memset(buf, 'x', bytes);
	assert_int_equal(write(fd, buf, bytes), (ssize_t)bytes);
	fsync(fd);
	close(fd);
	free(buf);
	doc = json_pack("{sisIsss{}so}", "version", 1, "time", (json_int_t)t,
			"via", "test", "root", "objects",
			json_loads(objects, 0, NULL));
	assert_non_null(doc);
	snprintf(rel, sizeof(rel), "%s", name);
	fd = openat(f->hfd, rel, O_RDONLY | O_DIRECTORY);
	assert_int_equal(hist_save(fd, HIST_MANIFEST, doc), 0);
	close(fd);
	json_decref(doc);
	assert_int_equal(hist_info_put(f->hfd, name), 0);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	int sfd;

	snprintf(f->dir, sizeof(f->dir), "/tmp/txfs-hist-XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	snprintf(f->state, sizeof(f->state), "%s/state", f->dir);
	snprintf(f->ws, sizeof(f->ws), "%s/ws", f->dir);
	assert_int_equal(mkdir(f->state, 0700), 0);
	assert_int_equal(mkdir(f->ws, 0700), 0);
	sfd = open(f->state, O_RDONLY | O_DIRECTORY);
	f->hfd = hist_open(sfd, true);
	close(sfd);
	assert_true(f->hfd >= 0);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char cmd[128];

	close(f->hfd);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", f->dir);
	assert_int_equal(system(cmd), 0);
	free(f);
	return 0;
}

static void test_ids_and_next(void **state)
{
	struct fx *f = *state;
	uint64_t *ids;
	size_t n;

	assert_int_equal(hist_next_id(f->hfd), 1);
	record(f, 1, time(NULL), 10, "[]");
	record(f, 3, time(NULL), 10, "[]");
	assert_int_equal(mkdirat(f->hfd, "0000000000000007.pending", 0700), 0);
	assert_int_equal(hist_next_id(f->hfd), 8);	/* pending ids count */
	assert_int_equal(hist_ids(f->hfd, &ids, &n), 0);
	assert_int_equal(n, 2);				/* pending ones do not */
	assert_int_equal(ids[0], 3);			/* newest first */
	assert_int_equal(ids[1], 1);
	free(ids);
}

static void test_prune_count_age_size(void **state)
{
	struct fx *f = *state;
	struct history_limits lim = { .keep_n = 2, .keep_days = 1,
				      .max_bytes = 1ULL << 30 };
	uint64_t freed, bytes;
	unsigned count;
	time_t old = time(NULL) - 3 * 86400;

	for (uint64_t id = 1; id <= 4; id++)
		record(f, id, id <= 3 ? old : time(NULL), 8192, "[]");
	/* 1 and 2 are old and beyond the last two: pruned; 3 is old but
	 * among the last two: kept */
	assert_int_equal(history_prune(f->state, &lim, &freed), 0);
	assert_int_equal(history_bytes(f->state, &bytes, &count), 0);
	assert_int_equal(count, 2);
	assert_true(freed >= 2 * 8192);
	/* a 1-byte cap: everything but the newest */
	lim.max_bytes = 1;
	assert_int_equal(history_prune(f->state, &lim, &freed), 0);
	assert_int_equal(history_bytes(f->state, &bytes, &count), 0);
	assert_int_equal(count, 1);
	assert_true(faccessat(f->hfd, "0000000000000004", F_OK, 0) == 0);
}

static void test_undo_refused_by_conflict(void **state)
{
	struct fx *f = *state;
	struct undo_opts o = { .state = f->state, .ws = f->ws };
	char path[160], buf[16] = "";
	int fd;

	/* the record says a.txt was made with inode 1 and size 99: the file
	 * there now is another one */
	record(f, 1, time(NULL), 4, "[{\"type\":\"f\",\"pre\":null,"
	       "\"post\":[\"a.txt\"],\"post_st\":{\"ino\":1,\"type\":\"f\","
	       "\"size\":99,\"mtime\":1}}]");
	snprintf(path, sizeof(path), "%s/a.txt", f->ws);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	assert_int_equal(write(fd, "mine\n", 5), 5);
	close(fd);
	assert_int_equal(history_undo(&o), -EBUSY);
	fd = open(path, O_RDONLY);
	assert_int_equal(read(fd, buf, sizeof(buf)), 5);	/* untouched */
	close(fd);
	assert_string_equal(buf, "mine\n");
	assert_true(faccessat(f->hfd, HIST_JOURNAL, F_OK, 0) != 0);
	o.force = true;					/* --force: done */
	assert_int_equal(history_undo(&o), 0);
	assert_true(access(path, F_OK) != 0);
}

static ino_t ino_of(const char *ws, const char *name)
{
	char path[160];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", ws, name);
	return stat(path, &st) ? 0 : st.st_ino;
}

/* a committed swap (a <-> b) taken back through temporary names: the
 * ops run from the first after a crash at any point, and run twice,
 * leave a and b as they were */
static void test_stash_replay_swap(void **state)
{
	struct fx *f = *state;
	char path[160], buf[8];
	int fd;

	for (int stop = 0; stop <= 4; stop++) {
		struct uctx c = { .hfd = f->hfd, .failed = NULL };
		json_t *ops;
		ino_t x, y;

		snprintf(path, sizeof(path), "%s/a", f->ws);
		unlink(path);
		fd = open(path, O_WRONLY | O_CREAT, 0644);	/* X, was b */
		assert_int_equal(write(fd, "b", 1), 1);
		close(fd);
		snprintf(path, sizeof(path), "%s/b", f->ws);
		unlink(path);
		fd = open(path, O_WRONLY | O_CREAT, 0644);	/* Y, was a */
		assert_int_equal(write(fd, "a", 1), 1);
		close(fd);
		x = ino_of(f->ws, "a");
		y = ino_of(f->ws, "b");
		c.root = open(f->ws, O_PATH | O_DIRECTORY);
		c.uobjs = f->hfd;	/* the holder of the temporary names */
		ops = json_pack("[[sssI][sssI][ssss][ssss]]",
				"stash", "b", "t0", (json_int_t)y,
				"stash", "a", "t1", (json_int_t)x,
				"unstash", "t0", "a", "b",
				"unstash", "t1", "b", "a");
		for (int i = 0; i < stop; i++)	/* a crash after op stop */
			assert_int_equal(undo_op(&c, json_array_get(ops, (size_t)i)), 0);
		for (int round = 0; round < 2; round++)	/* replay, twice */
			for (size_t i = 0; i < 4; i++)
				assert_int_equal(undo_op(&c, json_array_get(ops, i)), 0);
		assert_int_equal(ino_of(f->ws, "a"), y);
		assert_int_equal(ino_of(f->ws, "b"), x);
		snprintf(path, sizeof(path), "%s/a", f->ws);
		fd = open(path, O_RDONLY);
		assert_int_equal(read(fd, buf, sizeof(buf)), 1);
		close(fd);
		assert_int_equal(buf[0], 'a');
		assert_true(faccessat(f->hfd, "t0", F_OK, 0) != 0);
		assert_true(faccessat(f->hfd, "t1", F_OK, 0) != 0);
		json_decref(ops);
		close(c.root);
	}
}

/* --- the pack (pack.c): a small record durable by the commit point --- */

static void pack_get(int dfd, char **buf, size_t *len)
{
	const char *m = "{\"version\":1,\"txid\":9,\"objects\":[]}";
	json_t *pf = json_pack("[[sI[[II]]]]", "p5", (json_int_t)65636,
			       (json_int_t)65536, (json_int_t)100);

	assert_int_equal(hist_pack_build(9, "0000000000000003.pending", dfd, m,
					 strlen(m), pf, NULL, buf, len), 0);
	json_decref(pf);
}

static int pre_ok(int hfd, const char *rec)
{
	char rel[80], buf[100], want[100];
	struct stat st;
	int fd;

	snprintf(rel, sizeof(rel), "%s/objs/p5", rec);
	fd = openat(hfd, rel, O_RDONLY);
	if (fd < 0)
		return 0;
	memset(want, 'o', sizeof(want));
	fstat(fd, &st);
	if (st.st_size != 65636 || pread(fd, buf, 100, 65536) != 100 ||
	    memcmp(buf, want, 100)) {
		close(fd);
		return 0;
	}
	close(fd);
	return 1;
}

static void test_pack(void **state)
{
	struct fx *f = *state;
	const char *pend = "0000000000000003.pending", *fin = "0000000000000003";
	char buf[100], *pk;
	size_t len;
	json_t *doc;
	int dfd, fd;

	assert_int_equal(mkdirat(f->hfd, pend, 0700), 0);
	dfd = openat(f->hfd, pend, O_RDONLY | O_DIRECTORY);
	assert_int_equal(mkdirat(dfd, "objs", 0700), 0);
	fd = openat(dfd, "objs/p5", O_WRONLY | O_CREAT, 0600);
	memset(buf, 'o', sizeof(buf));
	assert_int_equal(pwrite(fd, buf, 100, 65536), 100);
	close(fd);
	pack_get(dfd, &pk, &len);
	/* a crash lost the record's own files: written back from the pack */
	assert_int_equal(unlinkat(dfd, "objs/p5", 0), 0);
	assert_int_equal(hist_put_file(dfd, HIST_MANIFEST, "{\"ver", 5), 0);
	assert_int_equal(hist_pack_apply(f->hfd, pk, len), 0);
	assert_true(pre_ok(f->hfd, pend));
	doc = hist_load(f->hfd, pend);
	assert_non_null(doc);
	assert_int_equal(hist_i64(doc, "txid"), 9);
	json_decref(doc);
	/* final already: written into it; a whole manifest is kept */
	assert_int_equal(renameat(f->hfd, pend, f->hfd, fin), 0);
	close(dfd);
	dfd = openat(f->hfd, fin, O_RDONLY | O_DIRECTORY);
	assert_int_equal(unlinkat(dfd, "objs/p5", 0), 0);
	doc = json_pack("{sisIss}", "version", 1, "txid", (json_int_t)9,
			"undone_by", "x");
	assert_int_equal(hist_save(dfd, HIST_MANIFEST, doc), 0);
	json_decref(doc);
	assert_int_equal(hist_pack_apply(f->hfd, pk, len), 0);
	assert_true(pre_ok(f->hfd, fin));
	assert_int_equal(faccessat(f->hfd, pend, F_OK, 0), -1);
	doc = hist_load(f->hfd, fin);
	assert_string_equal(hist_str(doc, "undone_by"), "x");
	json_decref(doc);
	/* not whole (a byte changed, or cut short): refused, nothing written */
	assert_int_equal(unlinkat(dfd, "objs/p5", 0), 0);
	pk[60] ^= 1;
	assert_int_equal(hist_pack_apply(f->hfd, pk, len), -EINVAL);
	pk[60] ^= 1;
	assert_int_equal(hist_pack_apply(f->hfd, pk, len - 1), -EINVAL);
	assert_false(pre_ok(f->hfd, fin));
	/* the record's folder lost altogether: made again, pending */
	close(dfd);
	assert_int_equal(hist_rm_tree(f->hfd, fin), 0);
	assert_int_equal(hist_pack_apply(f->hfd, pk, len), 0);
	assert_true(pre_ok(f->hfd, pend));
	free(pk);
}

/* A lazy record (keep.c): its pre-images' bytes in memory, no folder. The
 * pack built from memory is the pack built from the files, byte for
 * byte; hist_pack_spill writes the files (two files, two ranges each, a
 * sparse size) as the capture would have; a truncated source is zeros. */
static void test_pack_from_memory(void **state)
{
	struct fx *f = *state;
	const char *m = "{\"version\":1,\"txid\":9,\"objects\":[]}";
	const char *pend = "0000000000000004.pending";
	json_t *pf = json_pack("[[sI[[II][II]]][sI[[II][II]]]]",
			       "p1", (json_int_t)12288, (json_int_t)0,
			       (json_int_t)4096, (json_int_t)8192, (json_int_t)4096,
			       "p2", (json_int_t)4100, (json_int_t)4096,
			       (json_int_t)4, (json_int_t)0, (json_int_t)10);
	char mem[4096 * 2 + 4 + 10], *a, *b, buf[4096];
	size_t la, lb;
	int dfd, ofd, fd;
	struct stat st;

	for (size_t i = 0; i < sizeof(mem); i++)
		mem[i] = (char)('a' + i % 23);
	assert_int_equal(mkdirat(f->hfd, pend, 0700), 0);
	dfd = openat(f->hfd, pend, O_RDONLY | O_DIRECTORY);
	assert_int_equal(mkdirat(dfd, "objs", 0700), 0);
	ofd = openat(dfd, "objs", O_RDONLY | O_DIRECTORY);
	assert_int_equal(hist_pack_spill(ofd, pf, mem, true), 0);
	assert_int_equal(fstatat(ofd, "p1", &st, 0), 0);
	assert_int_equal(st.st_size, 12288);
	assert_int_equal(fstatat(ofd, "p2", &st, 0), 0);
	assert_int_equal(st.st_size, 4100);
	fd = openat(ofd, "p1", O_RDONLY);
	assert_int_equal(pread(fd, buf, 4096, 8192), 4096);
	assert_memory_equal(buf, mem + 4096, 4096);
	assert_int_equal(pread(fd, buf, 4096, 4096), 4096);	/* the hole */
	for (size_t i = 0; i < 4096; i++)
		assert_int_equal(buf[i], 0);
	close(fd);
	fd = openat(ofd, "p2", O_RDONLY);
	assert_int_equal(pread(fd, buf, 10, 0), 10);
	assert_memory_equal(buf, mem + 8192 + 4, 10);
	assert_int_equal(pread(fd, buf, 4, 4096), 4);
	assert_memory_equal(buf, mem + 8192, 4);
	close(fd);
	assert_int_equal(hist_pack_build(9, pend, dfd, m, strlen(m), pf, NULL,
					 &a, &la), 0);
	assert_int_equal(hist_pack_build(9, pend, -1, m, strlen(m), pf, mem,
					 &b, &lb), 0);
	assert_int_equal(la, lb);
	assert_memory_equal(a, b, la);
	/* a pack an older txfs left (TXFSPK2: byte-wise FNV-1a) is read;
	 * the same checksum under the new magic is not */
	{
		char *v2 = malloc(lb);
		uint64_t h = 14695981039346656037ull, txid, len;

		memcpy(v2, b, lb);
		memcpy(&txid, v2 + 8, 8);
		memcpy(&len, v2 + 16, 8);
		for (size_t i = 0; i < 8; i++)
			h = (h ^ (unsigned char)v2[8 + i]) * 1099511628211ull;
		for (size_t i = 0; i < 8; i++)
			h = (h ^ (unsigned char)v2[16 + i]) * 1099511628211ull;
		for (size_t i = 32; i < lb; i++)
			h = (h ^ (unsigned char)v2[i]) * 1099511628211ull;
		memcpy(v2 + 24, &h, 8);
		assert_int_equal(hist_pack_apply(f->hfd, v2, lb), -EINVAL);
		memcpy(v2, "TXFSPK2", 8);
		close(ofd);
		close(dfd);
		assert_int_equal(hist_rm_tree(f->hfd, pend), 0);
		assert_int_equal(hist_pack_apply(f->hfd, v2, lb), 0);
		assert_int_equal(faccessat(f->hfd, "0000000000000004.pending/objs/p2",
					   F_OK, 0), 0);
		free(v2);
		dfd = ofd = -1;
	}
	/* applied where no folder is: the same files, pending */
	assert_int_equal(hist_rm_tree(f->hfd, pend), 0);
	assert_int_equal(hist_pack_apply(f->hfd, b, lb), 0);
	dfd = openat(f->hfd, pend, O_RDONLY | O_DIRECTORY);
	assert_true(dfd >= 0);
	fd = openat(dfd, "objs/p2", O_RDONLY);
	assert_int_equal(pread(fd, buf, 10, 0), 10);
	assert_memory_equal(buf, mem + 8192 + 4, 10);
	close(fd);
	close(dfd);
	free(a);
	free(b);
	json_decref(pf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ids_and_next, setup, teardown),
		cmocka_unit_test_setup_teardown(test_prune_count_age_size, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_undo_refused_by_conflict,
						setup, teardown),
		cmocka_unit_test_setup_teardown(test_stash_replay_swap, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_pack, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pack_from_memory, setup,
						teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
