/* SPDX-License-Identifier: Apache-2.0 */
/*
 * check.c - the layer's consistency check at mount (layer_check).
 *
 * LMDB trusts its file: a damaged page (a flipped bit on disk, a torn
 * copy) is found only when a transaction reaches it, and then every write
 * that touches it fails (MDB_PAGE_NOTFOUND, MDB_CORRUPTED: EIO), or a read
 * faults. So before the layer is used, a child process opens it read-only
 * and walks every database with cursors, the free list included, touching
 * the first and last byte of every key and value (a value's first page and
 * its extent), searching every record again from the root and comparing
 * the count of records with the tree's own. The
 * walk runs in a child so that a fault on a damaged page is a verdict, not
 * a crash; the parent never maps a layer the check refused.
 *
 * Cost: one read of every page of the B-trees, the first and last page of
 * every value (the values' middle pages, file data, are not read) and a
 * root-to-leaf search per record (cached pages): see README for a layer of
 * 100,000 files.
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layer.h"

/* The child's verdicts, by exit status. */
static const char *const verdicts[] = {
	[1] = "damaged: the LMDB environment cannot be opened",
	[2] = "damaged: a page of the layer is missing or corrupt "
	      "(MDB_PAGE_NOTFOUND, MDB_CORRUPTED)",
	[3] = "damaged: a database of the layer has fewer or more records "
	      "than its tree says",
	[4] = "damaged: a database of the layer cannot be opened",
	[5] = "damaged: the check ran out of memory",
	[6] = "damaged: reading its pages faulted (a page points outside "
	      "the file)",
};
#define FAULTED 6

/* In the child: a fault on a damaged page is the verdict (no core dump,
 * no sanitizer report: the fault is expected there). */
static void on_fault(int sig)
{
	(void)sig;
	_exit(FAULTED);
}

static void catch_faults(void)
{
	struct sigaction sa = { .sa_handler = on_fault };
	struct rlimit no_core = { 0, 0 };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);	/* LMDB's assertions */
	setrlimit(RLIMIT_CORE, &no_core);
}

static unsigned char touch(const MDB_val *v)
{
	const volatile unsigned char *p = v->mv_data;

	return v->mv_size ? (unsigned char)(p[0] ^ p[v->mv_size - 1]) : 0;
}

/* Does a search from the root find record (k, v) where the walk did? A
 * sequential walk steps from leaf to leaf and never reads a leaf's own
 * flags; a lookup descends through every branch page above the record. */
static bool found_from_root(MDB_cursor *c, const MDB_val *k,
			    const MDB_val *v)
{
	MDB_val k2 = *k, v2;

	return mdb_cursor_get(c, &k2, &v2, MDB_SET_KEY) == 0 &&
	       v2.mv_size == v->mv_size && v2.mv_data == v->mv_data;
}

/* Walk one database: 0, or a verdict. lookup: also search every record
 * from the root (not for the free list, which only LMDB reads). */
static int walk_db(MDB_txn *txn, MDB_dbi dbi, bool lookup,
		   unsigned char *sum)
{
	MDB_cursor *c, *c2;
	MDB_val k, v;
	MDB_stat st;
	size_t n = 0;
	int rc, verdict = 0;

	if (mdb_stat(txn, dbi, &st) || mdb_cursor_open(txn, dbi, &c))
		return 2;
	if (mdb_cursor_open(txn, dbi, &c2)) {
		mdb_cursor_close(c);
		return 2;
	}
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && !verdict;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		*sum ^= touch(&k) ^ touch(&v);
		if (lookup && !found_from_root(c2, &k, &v))
			verdict = 2;
		n++;
	}
	mdb_cursor_close(c2);
	mdb_cursor_close(c);
	if (verdict || rc != MDB_NOTFOUND)
		return 2;
	return n == st.ms_entries ? 0 : 3;
}

/* Every named database listed in the main one, then the main one and the
 * free list. */
static int walk_all(MDB_txn *txn, unsigned char *sum)
{
	MDB_cursor *c;
	MDB_val k, v;
	MDB_dbi main_dbi, dbi;
	int rc, verdict = 0;

	if (mdb_dbi_open(txn, NULL, 0, &main_dbi))
		return 4;
	if (mdb_cursor_open(txn, main_dbi, &c))
		return 2;
	for (rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && !verdict;
	     rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
		char *name = strndup(k.mv_data, k.mv_size);

		if (!name)
			return 5;
		if (mdb_dbi_open(txn, name, 0, &dbi))
			verdict = 4;
		else
			verdict = walk_db(txn, dbi, true, sum);
		free(name);
	}
	mdb_cursor_close(c);
	if (!verdict && rc != MDB_NOTFOUND)
		verdict = 2;
	if (!verdict)
		verdict = walk_db(txn, main_dbi, true, sum);
	if (!verdict)
		verdict = walk_db(txn, 0, false, sum); /* FREE_DBI: writes */
	return verdict;
}

static int check_child(const char *path, uint64_t map_size)
{
	MDB_env *env;
	MDB_txn *txn;
	unsigned char sum = 0;
	int verdict;

	if (mdb_env_create(&env))
		return 5;
	mdb_env_set_maxdbs(env, 64);
	if (map_size)
		mdb_env_set_mapsize(env, map_size);
	/* read-only, no lock file: the state folder is locked by the
	 * caller, nothing else writes */
	if (mdb_env_open(env, path, MDB_RDONLY | MDB_NOLOCK, 0600))
		return 1;
	if (mdb_txn_begin(env, NULL, MDB_RDONLY, &txn))
		return 2;
	verdict = walk_all(txn, &sum);
	mdb_txn_abort(txn);
	mdb_env_close(env);
	(void)sum;
	return verdict;
}

int layer_check(const char *path, uint64_t map_size, const char **why)
{
	char data[4096];
	struct stat st;
	pid_t pid;
	int status;

	*why = NULL;
	snprintf(data, sizeof(data), "%s/data.mdb", path);
	if (stat(data, &st) && errno == ENOENT)
		return 0;	/* a new layer */
	fflush(NULL);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		catch_faults();
		_exit(check_child(path, map_size));
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFEXITED(status) && WEXITSTATUS(status) <
	    (int)(sizeof(verdicts) / sizeof(verdicts[0])) &&
	    verdicts[WEXITSTATUS(status)])
		*why = verdicts[WEXITSTATUS(status)];
	else
		*why = "damaged: reading its pages crashed the check";
	return -EUCLEAN;
}
