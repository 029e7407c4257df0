/* SPDX-License-Identifier: Apache-2.0 */
/*
 * gc.c - the background thread that frees the layer's discarded
 * generations (what a rollback or commit left behind, layer_gc_step) in
 * small steps, so neither waits for it. A verb kicks it (txn.c); the
 * mount starts and stops it (mount.c). It calls only the layer.
 */
#include <errno.h>
#include <pthread.h>

#include "session.h"

static void *gc_main(void *arg)
{
	struct txfs *fs = arg;
	bool more;

	pthread_mutex_lock(&fs->gc_lock);
	while (!fs->stop_gc) {
		if (!fs->gc_wanted) {
			pthread_cond_wait(&fs->gc_cond, &fs->gc_lock);
			continue;
		}
		fs->gc_wanted = false;
		pthread_mutex_unlock(&fs->gc_lock);
		do {
			more = false;
			if (layer_gc_step(fs->layer, 2000, &more))
				break;
		} while (more && !fs->stop_gc);
		pthread_mutex_lock(&fs->gc_lock);
	}
	pthread_mutex_unlock(&fs->gc_lock);
	return NULL;
}

void gc_kick(struct txfs *fs)
{
	pthread_mutex_lock(&fs->gc_lock);
	fs->gc_wanted = true;
	pthread_cond_signal(&fs->gc_cond);
	pthread_mutex_unlock(&fs->gc_lock);
}

int gc_start(struct txfs *fs)
{
	pthread_mutex_init(&fs->gc_lock, NULL);
	pthread_cond_init(&fs->gc_cond, NULL);
	fs->gc_wanted = true;	/* leftovers of a previous run */
	if (pthread_create(&fs->gc_thread, NULL, gc_main, fs))
		return -EAGAIN;
	fs->gc_running = true;
	return 0;
}

void gc_stop(struct txfs *fs)
{
	if (!fs->gc_running)
		return;
	pthread_mutex_lock(&fs->gc_lock);
	fs->stop_gc = true;
	pthread_cond_signal(&fs->gc_cond);
	pthread_mutex_unlock(&fs->gc_lock);
	pthread_join(fs->gc_thread, NULL);
	fs->gc_running = false;
}
