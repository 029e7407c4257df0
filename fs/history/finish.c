// SPDX-License-Identifier: Apache-2.0
/*
 * finish.c - a kept commit's record after its commit point (history.h):
 * made final once the commit applied (history_finish: what every path
 * became, for undo's conflict check, then <id>.pending -> <id>), settled
 * after a crash (history_settle), or dropped with a commit that stopped
 * before its commit point (history_discard).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../commit/commit.h"
#include "hist_int.h"

/* What path is now: the record undo checks before it touches it. */
static json_t *post_state(struct txfs *fs, const char *path)
{
	struct stat st;

	if (lower_stat(fs, path, &st))
		return json_null();
	return hist_state_json(&st);
}

/* The pending record of commit txid: its name into pend, its manifest. */
json_t *hist_find_pending(int hfd, uint64_t txid, char *pend, size_t n)
{
	struct dirent *e;
	json_t *doc = NULL;
	DIR *d = fdopendir(dup(hfd));

	if (d)
		rewinddir(d);	/* the dup shares the offset of hfd */

	while (d && !doc && (e = readdir(d))) {
		if (strlen(e->d_name) != 24 || strcmp(e->d_name + 16, ".pending"))
			continue;
		doc = hist_load(hfd, e->d_name);
		if (doc && (uint64_t)hist_i64(doc, "txid") == txid) {
			snprintf(pend, n, "%s", e->d_name);
		} else {
			json_decref(doc);
			doc = NULL;
		}
	}
	if (d)
		closedir(d);
	return doc;
}

/* The pending record of commit txid: the manifest capture wrote, kept in
 * memory (not read back: a mass deletion's is tens of MB of JSON), or
 * read from the folder after a crash. *mem: it was in memory. */
static json_t *pending_doc(struct txfs *fs, int hfd, uint64_t txid, char *pend,
			   size_t n, bool *mem)
{
	*mem = fs->hist_doc && fs->hist_txid == txid &&
	       (fs->hist_lazy ||
		faccessat(hfd, fs->hist_pend, F_OK, AT_SYMLINK_NOFOLLOW) == 0);
	if (!*mem)
		return hist_find_pending(hfd, txid, pend, n);
	snprintf(pend, n, "%s", fs->hist_pend);
	return json_incref(fs->hist_doc);
}

/* Every object's post_st (what its first path is now); false when the
 * manifest has them all already (no object has a path after the commit,
 * or capture wrote each one as it is: a file patched in place). */
static bool add_post_states(struct txfs *fs, json_t *doc, int *rc)
{
	json_t *obj;
	size_t i;
	bool changed = false;

	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		json_t *post = json_object_get(obj, "post"), *now;

		if (!json_array_size(post))
			continue;
		now = post_state(fs, json_string_value(json_array_get(post, 0)));
		if (now && json_equal(now, json_object_get(obj, "post_st"))) {
			json_decref(now);
			continue;
		}
		changed = true;
		if (json_object_set_new(obj, "post_st", now))
			*rc = -ENOMEM;
	}
	return changed;
}

static uint64_t manifest_bytes(int hfd, const char *rec)
{
	char rel[64];
	struct stat st;

	snprintf(rel, sizeof(rel), "%.24s/" HIST_MANIFEST, rec);
	return fstatat(hfd, rel, &st, 0) ? 0 : (uint64_t)st.st_blocks * 512;
}

/* A lazy record (keep.c): nothing of it on disk but its pack in the
 * layer; its folder is written by history_sync, from what the capture
 * kept in memory and the manifest with its post states. */
static void lazy_defer(struct txfs *fs, json_t *doc, const char *pend,
		       const char *fin)
{
	snprintf(fs->hist_sync, sizeof(fs->hist_sync), "%s", fin);
	snprintf(fs->hist_sync_pend, sizeof(fs->hist_sync_pend), "%s", pend);
	fs->hist_sync_doc = json_incref(doc);
	fs->hist_sync_pfiles = json_incref(fs->hist_pfiles);
	fs->hist_sync_mem = fs->hist_mem;
	fs->hist_mem = NULL;
	fs->hist_sync_bytes = fs->hist_bytes;
}

/* A lazy record's folder: its files written and fsync'ed, then made
 * final (<id>.pending -> <id>); history_sync_in fsyncs the folders. */
static int lazy_write(struct txfs *fs, int hfd)
{
	const char *pend = fs->hist_sync_pend, *fin = fs->hist_sync;
	int dfd = -1, ofd = -1, rc = 0;

	if ((mkdirat(hfd, pend, 0700) && errno != EEXIST) ||
	    (dfd = openat(hfd, pend, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
					   O_CLOEXEC)) < 0 ||
	    (mkdirat(dfd, "objs", 0700) && errno != EEXIST) ||
	    (ofd = openat(dfd, "objs", O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		rc = -errno;
	if (rc == 0)
		rc = hist_pack_spill(ofd, fs->hist_sync_pfiles, fs->hist_sync_mem, true);
	if (rc == 0)
		rc = hist_save(dfd, HIST_MANIFEST, fs->hist_sync_doc);
	if (rc == 0 && renameat(hfd, pend, hfd, fin))
		rc = -errno;
	if (rc == 0)
		hist_info_write(hfd, fin, hist_i64(fs->hist_sync_doc, "time"),
				fs->hist_sync_bytes + manifest_bytes(hfd, fin));
	if (ofd >= 0)
		close(ofd);
	if (dfd >= 0)
		close(dfd);
	return rc;
}

static void lazy_forget(struct txfs *fs)
{
	json_decref(fs->hist_sync_doc);
	fs->hist_sync_doc = NULL;
	free(fs->hist_sync_mem);
	fs->hist_sync_mem = NULL;
}

void history_finish(struct txfs *fs, uint64_t txid)
{
	char pend[40], fin[40];
	json_t *doc;
	bool mem, save, packed = false;
	int hfd = hist_open(fs->statefd, false), dfd = -1, rc = 0;

	/* (a lazy record's history/ may be new: history_sync makes it) */
	if (hfd < 0 && !(fs->hist_lazy && fs->hist_doc && fs->hist_txid == txid))
		return;
	doc = pending_doc(fs, hfd, txid, pend, sizeof(pend), &mem);
	if (!doc)
		goto out;	/* nothing captured, or finished already */
	packed = mem && fs->hist_packed;
	snprintf(fin, sizeof(fin), "%.16s", pend);
	lower_cache_flush(fs);
	save = add_post_states(fs, doc, &rc);
	if (mem && fs->hist_lazy) {
		if (rc == 0)	/* all of it once answered */
			lazy_defer(fs, doc, pend, fin);
		else	/* the pack is the record: the next capture settles */
			fs->hist_settled = false;
		json_decref(doc);
		goto out;
	}
	dfd = openat(hfd, pend, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	/* the manifest rewritten only when it gained post states; the
	 * rename makes the record final (a crash before it: a recovery
	 * finishes it again) */
	if (rc == 0 && dfd >= 0 && (!save || hist_save(dfd, HIST_MANIFEST, doc) == 0) &&
	    renameat(hfd, pend, hfd, fin) == 0) {
		if (mem)	/* what capture kept, and the manifest */
			hist_info_write(hfd, fin, hist_i64(doc, "time"),
					fs->hist_bytes + manifest_bytes(hfd, fin));
		else
			hist_info_put(hfd, fin);
		if (packed) {	/* the record's files: once answered */
			snprintf(fs->hist_sync, sizeof(fs->hist_sync), "%s", fin);
			fs->hist_sync_pfiles = json_incref(fs->hist_pfiles);
			fs->hist_sync_manifest = !save;	/* hist_save fsynced */
		} else {
			fsync(hfd);
		}
	} else {
		packed = false;	/* the pack stays the record's truth */
		fs->hist_settled = false;	/* the next capture settles it */
	}
	json_decref(doc);
	if (dfd >= 0)
		close(dfd);
	if (packed && save)	/* the manifest changed: all of it now */
		history_sync(fs);
	else if (!packed)
		history_prune(fs->state_path, NULL, NULL);
out:
	hist_objs_close(fs);
	if (fs->hist_txid == txid)
		history_free(fs);
	if (hfd >= 0)
		close(hfd);
}

void history_sync(struct txfs *fs)
{
	history_sync_in(fs, NULL);
}

int history_sync_in(struct txfs *fs, struct layer_txn *t)
{
	int hfd, dfd = -1, ofd = -1, fd, rc = 0;
	json_t *pf = fs->hist_sync_pfiles, *e;
	bool lazy = fs->hist_sync_doc != NULL;
	size_t i;

	if (!fs->hist_sync[0])
		return 0;
	hfd = hist_open(fs->statefd, false);
	if (hfd == -ENOENT && lazy && (hfd = hist_open(fs->statefd, true)) >= 0)
		fs->hist_new_dir = true;	/* synced below */
	if (hfd < 0) {
		rc = hfd;
		goto out;
	}
	/* a lazy record that cannot be written (a full disk) keeps its
	 * pack: the next capture settles (writes it from the pack) and
	 * keeps nothing new while it cannot */
	if (lazy && (rc = lazy_write(fs, hfd))) {
		close(hfd);
		goto out;
	}
	if (lazy)
		pf = NULL;	/* written and fsync'ed */
	dfd = openat(hfd, fs->hist_sync, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	ofd = dfd < 0 ? -1 : openat(dfd, "objs", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ofd < 0)
		rc = -errno;
	json_array_foreach(pf, i, e) {
		if (rc)
			break;
		fd = openat(ofd, json_string_value(json_array_get(e, 0)),
			    O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fsync(fd))
			rc = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0 && fs->hist_sync_manifest && !lazy) {
		fd = openat(dfd, HIST_MANIFEST, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fsync(fd))
			rc = -errno;
		if (fd >= 0)
			close(fd);
	}
	if (rc == 0 && ((json_array_size(pf) && fsync(ofd)) || fsync(dfd) ||
			fsync(hfd) || (fs->hist_new_dir && fsync(fs->statefd))))
		rc = -errno;
	if (rc == 0)
		fs->hist_new_dir = false;
	/* durable now: the pack is not needed any more (on an error it
	 * stays, and a recovery writes the record from it again; in a
	 * capture's transaction t it goes, the new record's replaces it) */
	if (rc == 0 || t)
		hist_pack_drop(fs, t);
	if (ofd >= 0)
		close(ofd);
	if (dfd >= 0)
		close(dfd);
	close(hfd);
	if (!t)	/* not before the drop is durable (a pruned record must
		 * not be written back) */
		history_prune(fs->state_path, NULL, NULL);
out:
	if (lazy && rc)
		fs->hist_settled = false;
	fs->hist_sync[0] = 0;
	json_decref(fs->hist_sync_pfiles);
	fs->hist_sync_pfiles = NULL;
	lazy_forget(fs);
	return lazy ? rc : 0;
}

void history_discard(struct txfs *fs, uint64_t txid)
{
	int hfd = hist_open(fs->statefd, false);
	char pend[40];
	json_t *doc;
	DIR *d;
	struct dirent *e;

	if (txid && fs->hist_txid == txid)
		history_free(fs);
	if (hfd < 0)
		return;
	if (txid) {
		if ((doc = hist_find_pending(hfd, txid, pend, sizeof(pend))))
			hist_rm_tree(hfd, pend);
		json_decref(doc);
	} else if ((d = fdopendir(dup(hfd)))) {	/* every pending record */
		/* but the one of an undo a crash interrupted: its journal
		 * (history_recover) needs it */
		json_t *j = hist_load_file(hfd, HIST_JOURNAL);
		const char *undo = hist_str(j, "as");

		rewinddir(d);
		while ((e = readdir(d)))
			if (strstr(e->d_name, ".pending") &&
			    !(undo && !strncmp(e->d_name, undo, 16)))
				hist_rm_tree(hfd, e->d_name);
		closedir(d);
		json_decref(j);
	}
	close(hfd);
}

void history_settle(struct txfs *fs, uint64_t next_txid)
{
	int hfd = hist_open(fs->statefd, false);
	uint64_t *done = NULL;
	size_t n = 0, cap = 0;
	struct dirent *e;
	json_t *doc;
	DIR *d;

	/* history/ itself lost by a crash (its mkdir is synced after the
	 * reply): made again if the layer holds a pack */
	if (hfd == -ENOENT && hist_pack_present(fs))
		hfd = hist_open(fs->statefd, true);
	if (hfd < 0) {
		fs->hist_settled = hfd == -ENOENT;	/* nothing kept yet */
		return;
	}
	/* a record the pack holds and its own files may not (a crash
	 * before history_sync), written back first */
	hist_pack_restore(fs, hfd);
	if ((d = fdopendir(dup(hfd)))) {
		rewinddir(d);
		while ((e = readdir(d))) {
			uint64_t tx, *v;

			if (strlen(e->d_name) != 24 || strcmp(e->d_name + 16, ".pending") ||
			    !(doc = hist_load(hfd, e->d_name)))
				continue;
			tx = (uint64_t)hist_i64(doc, "txid");
			json_decref(doc);
			if (tx == 0 || tx >= next_txid)
				continue;
			if (n == cap) {
				v = realloc(done, (cap = cap ? 2 * cap : 8) * sizeof(*v));
				if (!v)
					break;
				done = v;
			}
			done[n++] = tx;
		}
		closedir(d);
	}
	close(hfd);
	/* committed (the layer moved past its txid): finish them; the rest
	 * were stopped before their commit point: drop them */
	for (size_t i = 0; i < n; i++)
		history_finish(fs, done[i]);
	free(done);
	history_discard(fs, 0);
	fs->hist_settled = true;
}

void hist_objs_close(struct txfs *fs)
{
	if (fs->hist_objs_open)
		close(fs->hist_objs);
	fs->hist_objs_open = false;
}

void history_free(struct txfs *fs)
{
	json_decref(fs->hist_later);
	fs->hist_later = NULL;
	json_decref(fs->hist_doc);
	fs->hist_doc = NULL;
	json_decref(fs->hist_pfiles);
	fs->hist_pfiles = NULL;
	free(fs->hist_mem);
	fs->hist_mem = NULL;
	fs->hist_lazy = false;
	fs->hist_packed = false;
	fs->hist_txid = 0;
	hist_objs_close(fs);
}

const char *history_kept(struct txfs *fs)
{
	return fs->hist_line[0] ? fs->hist_line : NULL;
}
