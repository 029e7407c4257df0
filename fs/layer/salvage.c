/* SPDX-License-Identifier: Apache-2.0 */
/*
 * salvage.c - `txfs mount --salvage`: copy what can still be read of a
 * damaged layer into a sound one (layer_salvage).
 *
 * LMDB trusts its file: on a damaged page a cursor walk fails an
 * assertion (abort), faults, or returns MDB_CORRUPTED. The daemon must
 * never do such a walk, since the whole mount dies with it. So --salvage
 * never opens the damaged layer in the daemon: child processes copy it,
 * record by record, into a new environment STATE/salvaged, and the daemon
 * serves that copy (read-only mount, never committed). A crash or an
 * error kills only the child; the parent then knows, from the progress
 * the child reported through a pipe, where it stopped and starts another
 * child that goes on from there:
 *
 *   for each database, walk forward from the first key; when that walk
 *   dies, walk backward from the last key down to where the forward walk
 *   stopped; when that dies too, the records between are lost.
 *
 * Every record is committed on its own (MDB_NOSYNC, one sync at the end)
 * so a crash loses no record that was read. What could not be read is
 * printed and written, one line per gap, to STATE/salvaged/lost.txt
 * (`txfs diff` prints it); the inode numbers whose file data may be
 * incomplete go to STATE/salvaged/lost.objects (`txfs diff` names those
 * files). The damaged layer itself is only read, never changed.
 * Normal mounts never run this code.
 */
#include <errno.h>
#include <fcntl.h>
#include <lmdb.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "layer_int.h"

static const char *const dbs[] = { "meta",  "inodes", "dirents", "chunks",
				   "xattrs", "undo",  "journal" };
#define NDB (sizeof(dbs) / sizeof(dbs[0]))
#define MAXKEY 511

enum { M_START, M_KEY, M_SKIP, M_DONE };

/* One progress report from the child, fixed size (atomic on a pipe). */
struct msg {
	uint8_t db, kind, phase, pad;
	uint16_t len;
	unsigned char key[MAXKEY];
};

/* What the parent knows of one database. */
struct dbstate {
	int phase;		/* 0 forward, 1 backward, 2 gave up */
	bool done;
	size_t flen, blen;	/* last key copied by each walk; 0: none */
	unsigned char fkey[MAXKEY], bkey[MAXKEY];
	bool fany, bany;
	uint64_t entries;	/* records the tree says it holds */
	uint64_t copied;	/* records copied, both walks */
};

static void send_msg(int fd, unsigned db, int kind, int phase,
		     const MDB_val *k)
{
	struct msg m = { .db = (uint8_t)db, .kind = (uint8_t)kind,
			 .phase = (uint8_t)phase };

	if (k) {
		m.len = (uint16_t)(k->mv_size < MAXKEY ? k->mv_size : MAXKEY);
		memcpy(m.key, k->mv_data, m.len);
	}
	if (write(fd, &m, sizeof(m)) != (ssize_t)sizeof(m))
		_exit(3);
}

static int keycmp(const MDB_val *k, const unsigned char *b, size_t blen)
{
	size_t n = k->mv_size < blen ? k->mv_size : blen;
	int c = memcmp(k->mv_data, b, n);

	return c ? c : (k->mv_size > blen) - (k->mv_size < blen);
}

/* Copy one record into dst, committed on its own. */
static int put_one(MDB_env *dst, const char *name, const MDB_val *k,
		   const MDB_val *v)
{
	MDB_txn *t;
	MDB_dbi dbi;
	MDB_val k2 = *k, v2 = *v;
	int rc = mdb_txn_begin(dst, NULL, 0, &t);

	if (rc)
		return rc;
	if ((rc = mdb_dbi_open(t, name, MDB_CREATE, &dbi)) ||
	    (rc = mdb_put(t, dbi, &k2, &v2, 0))) {
		mdb_txn_abort(t);
		return rc;
	}
	return mdb_txn_commit(t);
}

/* One walk over database i of src in the child; returns when it is
 * complete, _exits on an error (a crash just ends the child). */
static void walk(MDB_txn *src, MDB_env *dst, unsigned i,
		 const struct dbstate *s, int out)
{
	MDB_cursor *c;
	MDB_dbi dbi;
	MDB_val k, v;
	MDB_val prev = { 0, NULL };
	MDB_cursor_op op, step;
	MDB_stat st;
	uint64_t n = 0;
	MDB_val nv = { sizeof(n), &n };
	int rc = mdb_dbi_open(src, dbs[i], 0, &dbi);

	/* the count of records the tree claims: a damaged page may list
	 * fewer than it holds, and no walk sees those */
	if (rc == 0 && mdb_stat(src, dbi, &st) == 0)
		n = st.ms_entries;
	send_msg(out, i, M_START, s->phase, &nv);
	if (rc == MDB_NOTFOUND)
		return;		/* never created: nothing to copy */
	if (rc || mdb_cursor_open(src, dbi, &c))
		_exit(2);
	op = s->phase ? MDB_LAST : MDB_FIRST;
	step = s->phase ? MDB_PREV : MDB_NEXT;
	for (rc = mdb_cursor_get(c, &k, &v, op); rc == 0;
	     rc = mdb_cursor_get(c, &k, &v, step)) {
		if (s->phase && s->fany && keycmp(&k, s->fkey, s->flen) <= 0)
			return;	/* met the forward walk */
		/* keys only ever go one way: a damaged branch that leads
		 * back would otherwise make the walk endless */
		if (prev.mv_data &&
		    (s->phase ? keycmp(&k, prev.mv_data, prev.mv_size) >= 0 :
				keycmp(&k, prev.mv_data, prev.mv_size) <= 0))
			_exit(2);
		/* a full copy is not damage; a record LMDB will not store
		 * (a damaged size) is skipped, and counted as lost */
		rc = put_one(dst, dbs[i], &k, &v);
		if (rc == MDB_MAP_FULL)
			_exit(5);
		send_msg(out, i, rc ? M_SKIP : M_KEY, s->phase, &k);
		prev = k;
	}
	if (rc != MDB_NOTFOUND)
		_exit(2);
}

static void on_fault(int sig)
{
	(void)sig;
	_exit(4);
}

static void child(const char *src_path, const char *dst_path, uint64_t map,
		  const struct dbstate *st, int out)
{
	struct sigaction sa = { .sa_handler = on_fault };
	MDB_env *src, *dst;
	MDB_txn *t;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);
	sigaction(SIGABRT, &sa, NULL);	/* LMDB's assertions */
	if (mdb_env_create(&src) || mdb_env_create(&dst))
		_exit(1);
	mdb_env_set_maxdbs(src, 64);
	mdb_env_set_maxdbs(dst, 8);
	if (map)
		mdb_env_set_mapsize(src, map);
	mdb_env_set_mapsize(dst, map ? map : LAYER_DEFAULT_MAP);
	if (mdb_env_open(src, src_path, MDB_RDONLY | MDB_NOLOCK, 0600) ||
	    mdb_env_open(dst, dst_path, MDB_NOSYNC, 0600) ||
	    mdb_txn_begin(src, NULL, MDB_RDONLY, &t))
		_exit(1);
	for (unsigned i = 0; i < NDB; i++) {
		if (st[i].done)
			continue;
		walk(t, dst, i, &st[i], out);
		send_msg(out, i, M_DONE, st[i].phase, NULL);
	}
	mdb_txn_abort(t);
	_exit(mdb_env_sync(dst, 1) ? 2 : 0);
}

/* Read the child's reports until it ends; returns the database it was
 * working on when it stopped, or -1 if it finished them all. */
static int follow(int in, struct dbstate *st)
{
	struct msg m;
	int cur = -1;

	while (read(in, &m, sizeof(m)) == (ssize_t)sizeof(m)) {
		struct dbstate *s;

		if (m.db >= NDB)
			break;
		s = &st[m.db];
		cur = m.kind == M_DONE ? -1 : m.db;
		if (m.kind == M_DONE)
			s->done = true;
		if (m.kind == M_START && m.len == sizeof(s->entries))
			memcpy(&s->entries, m.key, sizeof(s->entries));
		if (m.kind != M_KEY && m.kind != M_SKIP)
			continue;
		s->copied += m.kind == M_KEY;	/* a skipped key is lost */
		memcpy(m.phase ? s->bkey : s->fkey, m.key, m.len);
		*(m.phase ? &s->blen : &s->flen) = m.len;
		*(m.phase ? &s->bany : &s->fany) = true;
	}
	return cur;
}

/* A key as a person can use it: gen|object|rest for the file databases. */
static void key_text(FILE *f, unsigned db, const unsigned char *k, size_t n)
{
	if (db >= 1 && db <= 4 && n >= 16) {
		MDB_val v = { n, (void *)k };

		fprintf(f, "object %llu", (unsigned long long)key_get_u64(&v, 8));
		if (db == 3 && n >= 24)
			fprintf(f, " block %llu",
				(unsigned long long)key_get_u64(&v, 16));
		else if (n > 16) {
			fputs(" name '", f);
			for (size_t j = 16; j < n; j++)
				fputc(k[j] >= 32 && k[j] < 127 ? k[j] : '?', f);
			fputc('\'', f);
		}
		return;
	}
	for (size_t j = 0; j < n; j++)
		fputc(k[j] >= 32 && k[j] < 127 ? k[j] : '?', f);
}

/* For txfs diff: the objects whose file data (chunks) has a gap, one
 * "FIRST LAST" line per gap (inclusive; 0 and 2^64-1 for the ends). */
static void chunk_gaps(FILE *f, const struct dbstate *s)
{
	MDB_val fk = { s->flen, (void *)s->fkey }, bk = { s->blen,
							   (void *)s->bkey };

	if (s->phase == 0)
		return;
	fprintf(f, "%llu %llu\n",
		s->fany && s->flen >= 16 ?
			(unsigned long long)key_get_u64(&fk, 8) : 0ULL,
		s->bany && s->blen >= 16 ?
			(unsigned long long)key_get_u64(&bk, 8) : ~0ULL);
}

static void report_gaps(FILE *f, const struct dbstate *st)
{
	for (unsigned i = 0; i < NDB; i++) {
		const struct dbstate *s = &st[i];

		if (s->copied < s->entries)
			fprintf(f, "%s: %llu of its %llu records could not be "
				"read\n", dbs[i],
				(unsigned long long)(s->entries - s->copied),
				(unsigned long long)s->entries);
		if (s->phase == 0)
			continue;
		fprintf(f, "%s: the records after ", dbs[i]);
		if (s->fany)
			key_text(f, i, s->fkey, s->flen);
		else
			fputs("the start", f);
		fputs(" and before ", f);
		if (s->bany)
			key_text(f, i, s->bkey, s->blen);
		else
			fputs("the end", f);
		fputs(" could not be read\n", f);
	}
}

/* Has tino a chunk in gen (the copy, sound: read in this process)? */
static bool has_chunk(MDB_cursor *c, uint64_t gen, uint64_t tino)
{
	struct key k;
	MDB_val kv, v;

	key2(&k, gen, tino);
	key_u64(&k, 0);
	kv = kval(&k);
	return mdb_cursor_get(c, &kv, &v, MDB_SET_RANGE) == 0 &&
	       kv.mv_size >= 16 && key_get_u64(&kv, 0) == gen &&
	       key_get_u64(&kv, 8) == tino;
}

/* A damaged page can list fewer records than it holds; then nothing says
 * where the lost chunks were. Flag, in the copy, every file with staged
 * bytes (past the real file's valid ones) and no chunk at all: "T T". A
 * file that is all hole is flagged too: "may be incomplete" is honest. */
static void hidden_chunks(const char *dst, FILE *f)
{
	MDB_env *env;
	MDB_txn *t;
	MDB_dbi meta, inodes, chunks;
	MDB_cursor *ci, *cc;
	MDB_val k = { 3, "gen" }, v;
	struct key start;
	uint64_t gen;
	int rc;

	if (mdb_env_create(&env))
		return;
	mdb_env_set_maxdbs(env, 8);
	if (mdb_env_open(env, dst, MDB_RDONLY | MDB_NOLOCK, 0600) ||
	    mdb_txn_begin(env, NULL, MDB_RDONLY, &t))
		goto out_env;
	if (mdb_dbi_open(t, "meta", 0, &meta) ||
	    mdb_dbi_open(t, "inodes", 0, &inodes) ||
	    mdb_dbi_open(t, "chunks", 0, &chunks) ||
	    mdb_get(t, meta, &k, &v) || v.mv_size != 8 ||
	    mdb_cursor_open(t, inodes, &ci))
		goto out_txn;
	memcpy(&gen, v.mv_data, 8);
	if (mdb_cursor_open(t, chunks, &cc))
		goto out_ci;
	key2(&start, gen, 0);
	k = kval(&start);
	for (rc = mdb_cursor_get(ci, &k, &v, MDB_SET_RANGE);
	     rc == 0 && k.mv_size >= 16 && key_get_u64(&k, 0) == gen;
	     rc = mdb_cursor_get(ci, &k, &v, MDB_NEXT)) {
		struct layer_inode r;
		uint64_t tino = key_get_u64(&k, 8);

		if (v.mv_size < sizeof(r) || tino == 0)
			continue;
		memcpy(&r, v.mv_data, sizeof(r));
		if (S_ISREG(r.mode) &&
		    r.size > (r.flags & LI_LOWER ? r.lower_valid : 0) &&
		    !has_chunk(cc, gen, tino))
			fprintf(f, "%llu %llu\n", (unsigned long long)tino,
				(unsigned long long)tino);
	}
	mdb_cursor_close(cc);
out_ci:
	mdb_cursor_close(ci);
out_txn:
	mdb_txn_abort(t);
out_env:
	mdb_env_close(env);
}

/* STATE/salvaged/lost.objects, from chunk_gaps (db 3: chunks). */
static int write_file(int statefd, const char *name, const char *dst,
		      const struct dbstate *st)
{
	int fd = openat(statefd, name, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			0600);
	FILE *f = fd < 0 ? NULL : fdopen(fd, "w");
	int rc = 0;

	if (!f) {
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	chunk_gaps(f, &st[3]);
	if (st[3].copied < st[3].entries)
		hidden_chunks(dst, f);
	if (fclose(f))
		rc = -EIO;
	return rc;
}

/* Empty folder name in dirfd (the files LMDB and we put there). */
static int reset_dir(int dirfd, const char *name)
{
	static const char *const files[] = { "data.mdb", "lock.mdb",
					     "lost.txt", "lost.objects" };
	int fd;

	if (mkdirat(dirfd, name, 0700) && errno != EEXIST)
		return -errno;
	fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (unlinkat(fd, files[i], 0) && errno != ENOENT) {
			close(fd);
			return -errno;
		}
	close(fd);
	return 0;
}

void layer_salvage_forget(int statefd)
{
	if (reset_dir(statefd, "salvaged") == 0)
		unlinkat(statefd, "salvaged", AT_REMOVEDIR);
}

/* Run one child from where st says; returns after it ended. */
static int one_child(const char *src, const char *dst, uint64_t map,
		     struct dbstate *st, int *stopped)
{
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[0]);
		child(src, dst, map, st, p[1]);
	}
	close(p[1]);
	*stopped = follow(p[0], st);
	close(p[0]);
	for (unsigned i = 0; *stopped < 0 && i < NDB; i++)
		if (!st[i].done)
			*stopped = (int)i;	/* died between two */
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return -errno;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 1)
		return -EIO;	/* cannot even open the environments */
	if (WIFEXITED(status) && WEXITSTATUS(status) == 5)
		return -ENOSPC;	/* the copy's disk or map is full */
	return 0;
}

int layer_salvage(int statefd, uint64_t map, const char *state)
{
	struct dbstate *st = calloc(NDB, sizeof(*st));
	char src[64], dst[64], *text = NULL;
	size_t tlen = 0;
	int rc, stopped = -1;
	FILE *f;

	if (!st)
		return -ENOMEM;
	if ((rc = reset_dir(statefd, "salvaged")))
		goto out;
	snprintf(src, sizeof(src), "/proc/self/fd/%d/layer", statefd);
	snprintf(dst, sizeof(dst), "/proc/self/fd/%d/salvaged", statefd);
	/* each round either finishes or moves one database a phase on:
	 * at most two rounds per database, plus the last one */
	for (unsigned round = 0; round <= 2 * NDB; round++) {
		if ((rc = one_child(src, dst, map, st, &stopped)))
			goto out;
		if (stopped < 0)
			break;
		if (++st[stopped].phase == 2)
			st[stopped].done = true;
	}
	f = open_memstream(&text, &tlen);
	if (!f) {
		rc = -ENOMEM;
		goto out;
	}
	report_gaps(f, st);
	fclose(f);
	if ((rc = write_file(statefd, "salvaged/lost.objects", dst, st)))
		goto out;
	if (tlen) {
		int fd = openat(statefd, "salvaged/lost.txt",
				O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

		if (fd < 0 || write(fd, text, tlen) != (ssize_t)tlen)
			rc = -EIO;
		if (fd >= 0)
			close(fd);
		fprintf(stderr, "txfs: salvage %s: parts of the layer could "
			"not be read (txfs diff names them; the copy is in "
			"%s/salvaged):\n%s", state, state, text);
	}
out:
	free(text);
	free(st);
	return rc;
}
