/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inval.c - kernel cache invalidation, sent from a thread of its own.
 *
 * A notification must never be sent from inside the handler of the
 * request that caused it: the kernel may hold a lock that the
 * notification waits for (deadlock). Handlers queue them here; one thread
 * sends them in order. inval_flush() waits until everything queued before
 * it has been sent (it is called with no request lock held).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "view.h"

struct inval_item {
	struct inval_item *next;
	uint64_t ino;		/* node id (already mapped) */
	char *name;		/* NULL: invalidate the inode */
	bool data;		/* inode: pages too */
	bool expire;		/* entry: mark it expired, do not drop it */
};

struct inval_queue {
	pthread_mutex_t lock;
	pthread_cond_t cond;	/* work queued, or stop */
	pthread_cond_t done;	/* sent advanced */
	struct inval_item *head, *tail;
	uint64_t queued, sent;
	uint64_t want;		/* the newest inval_flush target */
	bool stop;
	pthread_t thread;
};

static void send_one(struct txfs *fs, struct inval_item *it)
{
	if (!fs->se)
		return;
	if (it->name && it->expire) {
		/* kernels before 6.2 cannot expire only: drop it then */
		if (fuse_lowlevel_notify_expire_entry(fs->se, it->ino, it->name,
						      strlen(it->name),
						      FUSE_LL_EXPIRE_ONLY) ==
		    -ENOSYS)
			fuse_lowlevel_notify_inval_entry(fs->se, it->ino,
							 it->name,
							 strlen(it->name));
	} else if (it->name)
		fuse_lowlevel_notify_inval_entry(fs->se, it->ino, it->name,
						 strlen(it->name));
	else
		fuse_lowlevel_notify_inval_inode(fs->se, it->ino,
						 it->data ? 0 : -1, 0);
}

static void *inval_main(void *arg)
{
	struct txfs *fs = arg;
	struct inval_queue *q = fs->inval;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct inval_item *it;

		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head)
			break;
		it = q->head;
		q->head = it->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&q->lock);
		send_one(fs, it);
		free(it->name);
		free(it);
		pthread_mutex_lock(&q->lock);
		q->sent++;
		/* a waiter wakes when its target or the end of the queue is
		 * reached, not after every item (each wake-up is a context
		 * switch: 100,000 of them after a large rollback) */
		if (!q->head || q->sent == q->want)
			pthread_cond_broadcast(&q->done);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int inval_start(struct txfs *fs)
{
	struct inval_queue *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	pthread_cond_init(&q->done, NULL);
	fs->inval = q;
	rc = pthread_create(&q->thread, NULL, inval_main, fs);
	if (rc) {
		free(q);
		fs->inval = NULL;
		return -rc;
	}
	return 0;
}

void inval_stop(struct txfs *fs)
{
	struct inval_queue *q = fs->inval;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	while (q->head) {
		struct inval_item *it = q->head;

		q->head = it->next;
		free(it->name);
		free(it);
	}
	free(q);
	fs->inval = NULL;
}

static void push(struct txfs *fs, uint64_t tino, const char *name, bool data,
		 bool expire)
{
	struct inval_queue *q = fs->inval;
	struct inval_item *it = calloc(1, sizeof(*it));

	if (!q || !it || (name && !(it->name = strdup(name)))) {
		free(it);
		return;
	}
	it->ino = tino_to_ino(fs, tino);
	it->data = data;
	it->expire = expire;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = it;
	else
		q->head = it;
	q->tail = it;
	q->queued++;
	pthread_cond_signal(&q->cond);
	pthread_mutex_unlock(&q->lock);
}

/* A re-created object is known to the kernel by the node id lookups
 * answer for it (itab_shown), maybe by its own tino too: both. */
void inval_entry(struct txfs *fs, uint64_t parent, const char *name)
{
	uint64_t shown = itab_shown(fs, parent);

	push(fs, parent, name, false, false);
	if (shown != parent)
		push(fs, shown, name, false, false);
}

/* The entry's next lookup must ask the daemon (the kernel revalidates an
 * expired dentry on every path walk through it), but the kernel keeps it
 * and what is cached below it: O(1) for the kernel, unlike an
 * invalidation, which prunes the cached subtree before it returns. */
void inval_entry_expire(struct txfs *fs, uint64_t parent, const char *name)
{
	uint64_t shown = itab_shown(fs, parent);

	push(fs, parent, name, false, true);
	if (shown != parent)
		push(fs, shown, name, false, true);
}

void inval_inode(struct txfs *fs, uint64_t tino, bool data)
{
	uint64_t shown = itab_shown(fs, tino);

	push(fs, tino, NULL, data, false);
	if (shown != tino)
		push(fs, shown, NULL, data, false);
}

void inval_flush(struct txfs *fs)
{
	struct inval_queue *q = fs->inval;
	uint64_t target;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	target = q->queued;
	q->want = target;
	while (q->sent < target && !q->stop)
		pthread_cond_wait(&q->done, &q->lock);
	pthread_mutex_unlock(&q->lock);
}
