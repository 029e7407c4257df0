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
#include <sys/stat.h>

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

bool reap_pending(struct txfs *fs)
{
	bool any;

	pthread_mutex_lock(&fs->reap_lock);
	any = fs->nreap > 0;
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

/* Take the queue (the caller owns the list). */
static uint64_t *take(struct txfs *fs, size_t *n)
{
	uint64_t *l;

	pthread_mutex_lock(&fs->reap_lock);
	l = fs->reap;
	*n = fs->nreap;
	fs->reap = NULL;
	fs->nreap = fs->creap = 0;
	pthread_mutex_unlock(&fs->reap_lock);
	return l;
}

/* Put what could not be freed back in front of the queue. */
static void give_back(struct txfs *fs, uint64_t *l, size_t n)
{
	pthread_mutex_lock(&fs->reap_lock);
	if (fs->nreap == 0 || !fs->reap) {
		free(fs->reap);
		fs->reap = l;
		fs->nreap = fs->creap = n;
		l = NULL;
	}
	pthread_mutex_unlock(&fs->reap_lock);
	free(l);	/* lost from the queue: the next mount frees them */
}

int reap_run(struct txfs *fs)
{
	size_t n;
	uint64_t *l = take(fs, &n);
	int rc = reap_list(fs, l, n, true);

	if (rc && n)
		give_back(fs, l, n);
	else
		free(l);
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
	/* on failure t is aborted by its owner: the queue keeps them all */
	if (rc && n)
		give_back(fs, l, n);
	else
		free(l);
	return rc;
}
