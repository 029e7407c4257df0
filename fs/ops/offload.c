/* SPDX-License-Identifier: Apache-2.0 */
/*
 * offload.c - requests answered from a worker thread, off the session loop.
 *
 * By default one thread serves the session (stats.c): it reads a request,
 * serves it and reads the next one, often already queued, which costs far
 * fewer wake-ups than several serving threads (-o threads=N, ours or
 * libfuse's loop_mt alike: 40 % less daemon CPU on an untar than four,
 * bench/results/2026-11-24-threads.md). Requests that may wait long are
 * queued here instead and answered by the worker when done:
 *   - .txfs/ctl verbs: commit and rollback wait for the kernel to take
 *     their cache invalidations, and the kernel may need the session loop
 *     to serve a request first (it holds a lock the invalidation waits
 *     for); the serving threads must stay free;
 *   - fsync and fsyncdir: a disk flush must not stall every other request.
 * The worker answers in queue order.
 * It also frees the layer data of unlinked files the kernel forgot under
 * -o noopen (offload_reap): FORGET needs no answer, and the orphans that
 * came in meanwhile go in one layer transaction, so a mass unlink no
 * longer makes a second write transaction per file on the serving thread
 * (bench/results/2026-11-27-speed-5.md). A daemon that dies first leaves
 * them as orphans, which the next mount reaps (view_reap_orphans).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ops.h"

enum job_kind { JOB_CTL, JOB_SYNC, JOB_REAP };

/* a reap waits this long for more orphans to come (a mass unlink) */
#define REAP_GATHER_NS 500000L

struct job {
	struct job *next;
	enum job_kind kind;
	fuse_req_t req;
	struct req_ctx who;	/* the writer of a control verb */
	size_t size;
	char *buf;
};

struct offload {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct job *head, *tail;
	bool stop;
	pthread_t thread;
};

static void run_job(struct txfs *fs, struct job *j)
{
	int rc;

	switch (j->kind) {
	case JOB_CTL:
		rc = ctl_write(fs, &j->who, j->buf, j->size);
		if (rc)
			fuse_reply_err(j->req, -rc);
		else
			fuse_reply_write(j->req, j->size);
		break;
	case JOB_SYNC:
		fuse_reply_err(j->req, -layer_sync(fs->layer));
		break;
	case JOB_REAP:
		reap_wait(fs, "reap-delay", REAP_GATHER_NS);
		rdlock(fs);
		(void)reap_run(fs);	/* what it could not free: next mount */
		unlock(fs);
		break;
	}
}

static void *offload_main(void *arg)
{
	struct txfs *fs = arg;
	struct offload *q = fs->offload;

	pthread_mutex_lock(&q->lock);
	for (;;) {
		struct job *j;

		while (!q->head && !q->stop)
			pthread_cond_wait(&q->cond, &q->lock);
		if (!q->head)
			break;
		j = q->head;
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		pthread_mutex_unlock(&q->lock);
		run_job(fs, j);
		free(j->buf);
		free(j);
		pthread_mutex_lock(&q->lock);
	}
	pthread_mutex_unlock(&q->lock);
	return NULL;
}

int offload_start(struct txfs *fs)
{
	struct offload *q = calloc(1, sizeof(*q));
	int rc;

	if (!q)
		return -ENOMEM;
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->cond, NULL);
	fs->offload = q;
	rc = pthread_create(&q->thread, NULL, offload_main, fs);
	if (rc) {
		fs->offload = NULL;
		free(q);
		return -rc;
	}
	return 0;
}

/* Answer what is still queued with ESHUTDOWN-like errors, then stop. */
void offload_stop(struct txfs *fs)
{
	struct offload *q = fs->offload;

	if (!q)
		return;
	pthread_mutex_lock(&q->lock);
	q->stop = true;
	pthread_cond_broadcast(&q->cond);
	pthread_mutex_unlock(&q->lock);
	pthread_join(q->thread, NULL);
	while (q->head) {
		struct job *j = q->head;

		q->head = j->next;
		if (j->kind != JOB_REAP)
			fuse_reply_err(j->req, EIO);
		free(j->buf);
		free(j);
	}
	rdlock(fs);
	(void)reap_run(fs);	/* the layer is still open (mount.c) */
	unlock(fs);
	pthread_mutex_destroy(&q->lock);
	pthread_cond_destroy(&q->cond);
	free(q);
	fs->offload = NULL;
}

static void enqueue(struct offload *q, struct job *j)
{
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	pthread_cond_signal(&q->cond);
}

static int push(struct txfs *fs, struct job *j)
{
	struct offload *q = fs->offload;

	/* a sync point: the serving thread commits the layer's open batch
	 * now, so the worker does not have to wait for it (layer/batch.c) */
	layer_batch_flush(fs->layer);
	if (!q)
		return -ENOTCONN;
	pthread_mutex_lock(&q->lock);
	enqueue(q, j);
	pthread_mutex_unlock(&q->lock);
	return 0;
}

int offload_reap(struct txfs *fs, uint64_t tino)
{
	struct offload *q = fs->offload;
	bool first = false;
	int rc = reap_queue(fs, tino, &first);
	struct job *j;

	if (rc || !first)
		return rc;
	if (!q || !(j = calloc(1, sizeof(*j))))
		return -ENOMEM;
	j->kind = JOB_REAP;
	pthread_mutex_lock(&q->lock);
	if (q->stop) {
		rc = -ENOTCONN;
		free(j);
	} else {
		enqueue(q, j);
	}
	pthread_mutex_unlock(&q->lock);
	return rc;
}
int offload_ctl(struct txfs *fs, fuse_req_t req, const char *buf,
		size_t size)
{
	const struct fuse_ctx *x = fuse_req_ctx(req);
	struct job *j = calloc(1, sizeof(*j));
	int rc;

	if (!j || !(j->buf = malloc(size ? size : 1))) {
		free(j);
		return -ENOMEM;
	}
	memcpy(j->buf, buf, size);	/* buf dies with the handler */
	j->kind = JOB_CTL;
	j->req = req;
	j->who = (struct req_ctx){ .uid = x->uid, .gid = x->gid,
				   .pid = x->pid };
	j->size = size;
	if ((rc = push(fs, j))) {
		free(j->buf);
		free(j);
	}
	return rc;
}

int offload_sync(struct txfs *fs, fuse_req_t req)
{
	struct job *j = calloc(1, sizeof(*j));
	int rc;

	if (!j)
		return -ENOMEM;
	j->kind = JOB_SYNC;
	j->req = req;
	if ((rc = push(fs, j)))
		free(j);
	return rc;
}
