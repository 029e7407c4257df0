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
	return json_pack("{sIsssIsI}", "ino", (json_int_t)st.st_ino, "type",
			 (char[2]){ hist_type(st.st_mode), 0 }, "size",
			 (json_int_t)st.st_size, "mtime",
			 (json_int_t)st.st_mtim.tv_sec * 1000000000LL +
				 st.st_mtim.tv_nsec);
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
	       faccessat(hfd, fs->hist_pend, F_OK, AT_SYMLINK_NOFOLLOW) == 0;
	if (!*mem)
		return hist_find_pending(hfd, txid, pend, n);
	snprintf(pend, n, "%s", fs->hist_pend);
	return json_incref(fs->hist_doc);
}

/* Every object's post_st (what its first path is now); false when no
 * object has a path after the commit (nothing to add: a deletion). */
static bool add_post_states(struct txfs *fs, json_t *doc, int *rc)
{
	json_t *obj;
	size_t i;
	bool any = false;

	json_array_foreach(json_object_get(doc, "objects"), i, obj) {
		json_t *post = json_object_get(obj, "post");

		if (!json_array_size(post))
			continue;
		any = true;
		if (json_object_set_new(obj, "post_st",
					post_state(fs, json_string_value(
						json_array_get(post, 0)))))
			*rc = -ENOMEM;
	}
	return any;
}

static uint64_t manifest_bytes(int hfd, const char *rec)
{
	char rel[64];
	struct stat st;

	snprintf(rel, sizeof(rel), "%.24s/" HIST_MANIFEST, rec);
	return fstatat(hfd, rel, &st, 0) ? 0 : (uint64_t)st.st_blocks * 512;
}

void history_finish(struct txfs *fs, uint64_t txid)
{
	char pend[40], fin[40];
	json_t *doc;
	bool mem, save;
	int hfd = hist_open(fs->statefd, false), dfd = -1, rc = 0;

	if (hfd < 0)
		return;
	doc = pending_doc(fs, hfd, txid, pend, sizeof(pend), &mem);
	if (!doc)
		goto out;	/* nothing captured, or finished already */
	snprintf(fin, sizeof(fin), "%.16s", pend);
	lower_cache_flush(fs);
	save = add_post_states(fs, doc, &rc);
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
		fsync(hfd);
	}
	json_decref(doc);
	if (dfd >= 0)
		close(dfd);
	history_prune(fs->state_path, NULL, NULL);
out:
	hist_objs_close(fs);
	if (fs->hist_txid == txid)
		history_free(fs);
	close(hfd);
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

	if (hfd < 0)
		return;
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
	fs->hist_txid = 0;
	hist_objs_close(fs);
}

const char *history_kept(struct txfs *fs)
{
	return fs->hist_line[0] ? fs->hist_line : NULL;
}
