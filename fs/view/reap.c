/* SPDX-License-Identifier: Apache-2.0 */
/*
 * reap.c - freeing the layer data of unlinked files nothing holds any more.
 *
 * Under no-open (ops.c) every unlinked file the kernel knew stays an
 * orphan (dir.c, drop_link) until the kernel's FORGET, since no request
 * says whether a program still has it open. Freeing it there cost a
 * second layer transaction per unlinked file on the serving thread. So a
 * FORGET only queues the orphan (reap_queue) and the offload worker frees
 * what is queued in one transaction (reap_run). Nothing may see the
 * difference: whoever reads the layer's counts (status, the commit) runs
 * the queue first, and the bytes limit, before it refuses a change, frees
 * the queued orphans inside the same transaction and counts again
 * (reap_run_in). A daemon that dies first leaves orphans, which the next
 * mount frees (view_reap_orphans).
 *
 * Lock: fs->reap_lock guards the queue only; the freeing runs under the
 * caller's fs->txlock (shared) like every other change of the layer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "view.h"

int reap_init(struct txfs *fs)
{
	fs->reap = NULL;
	fs->nreap = fs->creap = 0;
	return -pthread_mutex_init(&fs->reap_lock, NULL);
}

void reap_destroy(struct txfs *fs)
{
	free(fs->reap);
	fs->reap = NULL;
	fs->nreap = fs->creap = 0;
	pthread_mutex_destroy(&fs->reap_lock);
}

int reap_queue(struct txfs *fs, uint64_t tino, bool *first)
{
	int rc = 0;

	pthread_mutex_lock(&fs->reap_lock);
	if (fs->nreap == fs->creap) {
		size_t cap = fs->creap ? 2 * fs->creap : 256;
		uint64_t *l = realloc(fs->reap, cap * sizeof(*l));

		if (!l) {
			rc = -ENOMEM;
			goto out;
		}
		fs->reap = l;
		fs->creap = cap;
	}
	*first = fs->nreap == 0;
	fs->reap[fs->nreap++] = tino;
out:
	pthread_mutex_unlock(&fs->reap_lock);
	return rc;
}

void reap_wait(struct txfs *fs, const char *fault, long ns)
{
	struct timespec ts = { 0, ns };

	if (fs->fault_phase && !strcmp(fs->fault_phase, fault))
		ts = (struct timespec){ (time_t)(fs->fault_at / 1000),
					(long)(fs->fault_at % 1000) * 1000000L };
	if (ts.tv_sec || ts.tv_nsec)
		nanosleep(&ts, NULL);
}

bool reap_pending(struct txfs *fs)
{
	bool any;

	pthread_mutex_lock(&fs->reap_lock);
	any = fs->nreap > 0 || fs->reaping > 0;
	pthread_mutex_unlock(&fs->reap_lock);
	return any;
}

/* Free what orphan tino holds, in t, if it still is one: no name, not
 * held by a handle or (recheck) the kernel; one that came back through a
 * rollback, or a new object of the same number, is left alone. *freed
 * counts what was freed. */
static int reap_one(struct txfs *fs, struct layer_txn *t, uint64_t tino,
		    bool recheck, size_t *freed)
{
	struct layer_ino_view lv;

	if ((recheck && itab_held(fs, tino)) ||
	    layer_inode_get(t, tino, &lv) || lv.rec.nlink != 0 ||
	    S_ISDIR(lv.rec.mode))
		return 0;
	/* a real file whose bytes the layer never held: nothing to free
	 * (its record stays, a tombstone's object; view_reap_orphans skips
	 * it too) */
	if ((lv.rec.flags & LI_LOWER) && !(lv.rec.flags & LI_DATA))
		return 0;
	(*freed)++;
	return (lv.rec.flags & LI_LOWER) ? layer_chunks_trunc(t, tino, 0) :
					   layer_inode_del(t, tino);
}

int reap_list(struct txfs *fs, const uint64_t *tino, size_t n, bool recheck)
{
	struct layer_txn *t;
	size_t freed = 0;
	int rc;

	if (n == 0)
		return 0;
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = reap_one(fs, t, tino[i], recheck, &freed);
	if (rc == 0 && freed)
		return layer_commit(t);
	layer_txn_end(t);	/* nothing freed: no commit */
	return rc;
}

/* Take the queue (the caller owns the list), inside a write transaction:
 * `reaping` counts the lists taken and not yet committed or given back,
 * so that reap_pending stays true until their frees are visible. */
static uint64_t *take(struct txfs *fs, size_t *n)
{
	uint64_t *l;

	pthread_mutex_lock(&fs->reap_lock);
	l = fs->reap;
	*n = fs->nreap;
	fs->reap = NULL;
	fs->nreap = fs->creap = 0;
	fs->reaping++;
	pthread_mutex_unlock(&fs->reap_lock);
	return l;
}

/* The list's frees are committed (ok), or put it back in front of the
 * queue. */
static void done(struct txfs *fs, uint64_t *l, size_t n, bool ok)
{
	pthread_mutex_lock(&fs->reap_lock);
	if (!ok && n && (fs->nreap == 0 || !fs->reap)) {
		free(fs->reap);
		fs->reap = l;
		fs->nreap = fs->creap = n;
		l = NULL;
	}
	fs->reaping--;
	pthread_mutex_unlock(&fs->reap_lock);
	free(l);	/* freed, or lost from the queue: the next mount frees
			 * what is left */
}

/*
 * The write transaction begins before the queue is taken: a reader's run
 * (txn_summary) that finds the worker's list taken waits for the worker's
 * commit on the layer's writer lock, then reads what it freed; and inside
 * a write transaction (reap_run_in) no other run can hold a taken list.
 */
int reap_run(struct txfs *fs)
{
	struct layer_txn *t;
	size_t n, freed = 0;
	uint64_t *l;
	int rc;

	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	l = take(fs, &n);
	if (n)	/* tests: hold the taken list (TXFS_FAULT=reap-hold:MS) */
		reap_wait(fs, "reap-hold", 0);
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = reap_one(fs, t, l[i], true, &freed);
	if (rc == 0 && freed)
		rc = layer_commit(t);
	else
		layer_txn_end(t);	/* nothing freed, or failed */
	done(fs, l, n, rc == 0);
	return rc;
}

int reap_run_in(struct txfs *fs, struct layer_txn *t, size_t *freed)
{
	size_t n;
	uint64_t *l = take(fs, &n);
	int rc = 0;

	*freed = 0;
	for (size_t i = 0; rc == 0 && i < n; i++)
		rc = reap_one(fs, t, l[i], true, freed);
	/* t commits or aborts later, under its owner: until then no other
	 * write transaction can begin, so `reaping` may drop now; on failure
	 * the owner aborts t and the queue keeps them all */
	done(fs, l, n, rc == 0);
	return rc;
}
