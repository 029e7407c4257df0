// SPDX-License-Identifier: Apache-2.0
/*
 * keep.c - a commit keeps what it replaces (history.h).
 *
 * Before the commit point, history_capture() walks the commit's plan (it
 * reads struct plan, commit.h's types, and calls nothing of commit/) and,
 * for every real object the commit deletes, moves, replaces or changes:
 *   - a non-folder that goes: the commit's apply moves it into
 *     objs/s<hash>/k<tino> instead of unlinking it (history_take: no
 *     copy);
 *   - a non-folder that moves or gets new content: a hard link
 *     objs/k<tino>, made just past the commit point (history_link; the
 *     commit then renames over the name; the link keeps the inode: no
 *     copy). Another file system, or a file with other names: a copy.
 *   - a file patched in place: the old bytes of the ranges the patch
 *     writes, objs/p<tino> (a sparse file at the same offsets);
 *   - every object: its old mode, owner, times, xattrs, symlink target.
 * It writes manifest.json and makes the record durable (write_record: a
 * small one through the pack, pack.c, with one fdatasync; a larger one
 * with fsyncs of its files and folders), and the record is <id>.pending
 * until history_finish() (after the commit applied) adds what each path
 * became (post_st, for undo's conflict check) and renames it <id>.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "keep_int.h"

/* Keep the real non-folder at path as objs/name with a hard link - made
 * after the commit point (history_link), since a link changes the file's
 * ctime, which is how a later commit sees a conflict: a commit that stops
 * before its commit point must leave the real files as they were. Here
 * only what to link is written down (into the manifest and c->later). */
static int keep_later(struct cap *c, const char *path, const char *name,
		      const struct stat *st, json_t *entry)
{
	json_t *l = hist_arr("ssI", name, path, (json_int_t)st->st_ino);

	int rc = hist_cap_dir(c);	/* history_link links into objs/ */

	if (rc) {
		json_decref(l);
		return rc;
	}
	if (!l || json_array_append_new(c->later, l) ||
	    json_object_set_new(entry, "link_from", hist_jname(path)) ||
	    json_object_set_new(entry, "link_ino", json_integer((json_int_t)st->st_ino)))
		return -ENOMEM;
	c->bytes += (uint64_t)st->st_blocks * 512;
	return 0;
}

/* A file with one name that the commit deletes: the commit's apply moves
 * it into objs/<moved_name> (history_take), past the commit point - no
 * link now and unlink then. Its entry has "keep" and no "link_from": a
 * recovery links nothing for it, its replayed apply moves it. The files
 * of one real folder go into one sub-folder of objs/, s<hash of the
 * folder's path>: a rename into a small folder that the previous one
 * touched costs less than one into a folder of 100,000 names. */
static void moved_name(char *buf, size_t n, const char *path, uint64_t tino)
{
	const char *slash = strrchr(path, '/');
	uint32_t h = 2166136261u;	/* FNV-1a of the folder's path */

	for (const char *q = path; slash && q < slash; q++)
		h = (h ^ (uint8_t)*q) * 16777619u;
	snprintf(buf, n, "s%03x/k%llx", (unsigned)(h & 0xfff),
		 (unsigned long long)tino);
}

static int keep_moved(struct cap *c, const struct stat *st)
{
	c->bytes += (uint64_t)st->st_blocks * 512;
	return hist_cap_dir(c);	/* history_take moves it into objs/ */
}

/* The folder of path, beneath the root with no symlink: the last one
 * opened is kept (a mass deletion links a folder's files one after the
 * other). fd (owned by the cache) or -errno. */
struct pcache {
	char *dir;
	int fd;
};

static int cached_parent(struct txfs *fs, struct pcache *pc, const char *path,
			 const char **base)
{
	const char *slash = strrchr(path, '/');
	size_t n = slash ? (size_t)(slash - path) : 0;

	*base = slash ? slash + 1 : path;
	if (pc->dir && strlen(pc->dir) == n && !strncmp(pc->dir, path, n))
		return pc->fd;
	if (pc->fd >= 0)
		close(pc->fd);
	free(pc->dir);
	pc->dir = strndup(path, n);
	pc->fd = hist_parent(fs->rootfd, path, base, false);
	return pc->fd;
}

/* Make one link written down by keep_later: objs/name -> path, if path is
 * still the object (ino); a copy on another file system. Done before, or
 * the object gone (a replay past its step): nothing. fresh: right after
 * the commit point, under the lock, nothing applied yet: neither can be. */
static int link_one(struct txfs *fs, struct pcache *pc, int objs,
		    const char *name, const char *path, uint64_t ino, bool fresh)
{
	const char *base;
	struct stat st;
	int pfd, rc = 0;

	if (!fresh && fstatat(objs, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		return 0;
	if (!fresh && (lower_stat(fs, path, &st) || (uint64_t)st.st_ino != ino))
		return 0;
	pfd = cached_parent(fs, pc, path, &base);
	if (pfd < 0)
		return pfd;
	if (linkat(pfd, base, objs, name, 0)) {
		rc = -errno;
		if (rc == -ENOENT && fresh)
			rc = 0;	/* gone underneath (a forced commit) */
		if (rc == -EXDEV || rc == -EPERM || rc == -EMLINK)
			rc = hist_copy(pfd, base, objs, name);
	}
	return rc;
}

/* Keep a copy of the real file at path as objs/name. */
static int keep_copy(struct cap *c, const char *path, const char *name)
{
	const char *base;
	int pfd = hist_parent(c->fs->rootfd, path, &base, false), rc;
	struct stat st;

	if (pfd < 0)
		return pfd;
	if ((rc = hist_cap_dir(c))) {
		close(pfd);
		return rc;
	}
	unlinkat(c->objs, name, 0);
	c->copied = true;
	rc = hist_copy(pfd, base, c->objs, name);
	if (rc == 0 && fstatat(c->objs, name, &st, AT_SYMLINK_NOFOLLOW) == 0)
		c->bytes += (uint64_t)st.st_blocks * 512;
	close(pfd);
	return rc;
}

static json_t *paths_array(const struct cobj *o)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < o->nfinals; i++)
		if (json_array_append_new(a, hist_jname(o->finals[i]))) {
			json_decref(a);
			return NULL;
		}
	return a;
}

/* How the real inode of o is kept: 'l' a hard link (it leaves the tree:
 * deleted, or its name gets new content), 'c' a copy (a hard-linked file
 * whose new content is copied into the same inode, CS_COPY; and any
 * file with other names, see capture_pre), 0 not at
 * all (it stays: renamed, changed in its metadata, patched in place - a
 * link would show as one more st_nlink on a file that stays). */
static char keep_how(const struct cobj *o)
{
	bool data = plan_needs_data(o) && !o->patch;

	if (S_ISDIR(o->rec.mode))
		return 0;
	if (data && S_ISREG(o->rec.mode) && o->rec.nlink > 1)
		return 'c';
	if (o->nfinals == 0 || data)
		return 'l';
	return 0;
}

/* The real object o was before the commit: its meta, and what keeps it. */
static int capture_pre(struct cap *c, struct plan *p, const struct cobj *o,
		       json_t *obj)
{
	char name[32], target[4096] = "";
	struct stat st;
	int fd, rc;

	if (o->has_lst)
		st = o->lst;	/* the plan's conflict check stat it */
	else if (lower_stat(c->fs, o->lower, &st))
		return 0;	/* gone underneath (a forced commit) */
	if (S_ISLNK(st.st_mode) &&
	    lower_readlink(c->fs, o->lower, target, sizeof(target)) < 0)
		target[0] = 0;
	/* an object kept whole (a link, a copy) keeps its xattrs itself: only
	 * what stays in place needs them listed (3 system calls an object
	 * fewer for a mass deletion) */
	fd = !S_ISDIR(st.st_mode) && !o->patch && keep_how(o) ? -1 :
	     lower_open(c->fs, o->lower, O_PATH | O_NOFOLLOW);
	rc = hist_meta_put(obj, &st, fd, S_ISLNK(st.st_mode) ? target : NULL);
	if (fd >= 0)
		close(fd);
	if (rc || json_object_set_new(obj, "pre", hist_jname(o->lower)))
		return rc ? rc : -ENOMEM;
	if (S_ISDIR(st.st_mode))
		return 0;
	if (o->patch) {
		snprintf(name, sizeof(name), "p%llx", (unsigned long long)o->tino);
		rc = hist_keep_patch(c, p, o, &st, obj, name);
	} else if (keep_how(o)) {
		/* a link to a file with other names (which stay, or are
		 * outside) would show as one more st_nlink there: a copy */
		snprintf(name, sizeof(name), "k%llx", (unsigned long long)o->tino);
		if (keep_how(o) == 'l' && st.st_nlink == 1 && o->nfinals == 0) {
			moved_name(name, sizeof(name), o->lower, o->tino);
			rc = keep_moved(c, &st);
		} else if (keep_how(o) == 'l' && st.st_nlink == 1)
			rc = keep_later(c, o->lower, name, &st, obj);
		else
			rc = keep_copy(c, o->lower, name);
	} else {
		return 0;
	}
	if (rc == 0 && json_object_set_new(obj, "keep", json_string(name)))
		rc = -ENOMEM;
	c->nkept += rc == 0;
	return rc;
}

static int capture_obj(struct cap *c, struct plan *p, const struct cobj *o)
{
	json_t *obj, *post;
	int rc = 0;

	if (o->skip || o->tino == (uint64_t)c->fs->root_ino ||
	    (!o->lower && !o->nfinals))
		return 0;
	obj = json_object();
	post = paths_array(o);
	if (!obj || !post || json_object_set_new(obj, "post", post)) {
		json_decref(obj);
		return -ENOMEM;
	}
	if (json_object_set_new(obj, "type",
				json_sprintf("%c", hist_type(o->rec.mode))) ||
	    json_object_set_new(obj, "id", json_integer((json_int_t)o->tino)))
		rc = -ENOMEM;
	if (rc == 0 && o->lower)
		rc = capture_pre(c, p, o, obj);
	if (rc == 0 && json_array_append(c->objects, obj))
		rc = -ENOMEM;
	json_decref(obj);
	return rc;
}

/* The plan's object tino (p->objs is sorted by tino; history/ reads the
 * plan, it calls nothing of commit/). */
static const struct cobj *find_obj(const struct plan *p, uint64_t tino)
{
	size_t lo = 0, hi = p->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->objs[mid].tino == tino)
			return &p->objs[mid];
		if (p->objs[mid].tino < tino)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* A real name that goes with no object of its own: another name of a
 * hard-linked file. If its inode keeps a name in the tree, the undo links
 * that name back (no link kept: it would show as st_nlink); else (a name
 * a new object replaces, or the last one here) it is kept as n<k>. */
static int capture_name(struct cap *c, struct plan *p, const char *path)
{
	const struct cobj *o;
	json_t *entry;
	char name[32];
	struct stat st;
	int rc;

	if (lower_stat(c->fs, path, &st))
		return 0;
	o = find_obj(p, (uint64_t)st.st_ino);
	if (o && !o->skip && o->nfinals && S_ISREG(st.st_mode))
		return json_array_append_new(c->names, hist_obj("ss", "path",
					     path, "link", o->finals[0])) ? -ENOMEM : 0;
	snprintf(name, sizeof(name), "n%x", c->nnames++);
	entry = hist_obj("ss", "path", path, "keep", name);
	if (!entry)
		return -ENOMEM;
	rc = st.st_nlink > 1 ? keep_copy(c, path, name) :
			       keep_later(c, path, name, &st, entry);
	if (rc) {
		json_decref(entry);
		return rc == -ENOENT ? 0 : rc;
	}
	return json_array_append_new(c->names, entry) ? -ENOMEM : 0;
}

/* Is path the old place of an object the plan keeps already? */
static bool is_pre(struct plan *p, const char *path)
{
	for (size_t i = 0; i < p->n; i++)
		if (!p->objs[i].skip && p->objs[i].lower &&
		    !strcmp(p->objs[i].lower, path))
			return true;
	return false;
}

/* Names that go without an object: the steps' DETACH of a real name
 * (tino 0), and any real object a final path lands on. */
static int capture_names(struct cap *c, struct plan *p)
{
	struct stat st;
	int rc = 0;

	for (size_t i = 0; i < p->nsteps && rc == 0; i++)
		if (p->steps[i].kind == CS_DETACH && p->steps[i].tino == 0)
			rc = capture_name(c, p, p->steps[i].a);
	for (size_t i = 0; i < p->n && rc == 0; i++) {
		const struct cobj *o = &p->objs[i];

		for (size_t k = 0; k < o->nfinals && rc == 0 && !o->skip; k++)
			if (!is_pre(p, o->finals[k]) &&
			    lower_stat(c->fs, o->finals[k], &st) == 0 &&
			    !S_ISDIR(st.st_mode) && (uint64_t)st.st_ino != o->tino)
				rc = capture_name(c, p, o->finals[k]);
	}
	return rc;
}

/* The real root's own metadata (its times change with what is in it). */
static int capture_root(struct cap *c, json_t *doc)
{
	json_t *root = json_object();
	struct stat st;
	int rc;

	if (!root)
		return -ENOMEM;
	if (fstat(c->fs->rootfd, &st)) {
		json_decref(root);
		return -errno;
	}
	rc = hist_meta_put(root, &st, c->fs->rootfd, NULL);
	if (rc == 0 && json_object_set_new(doc, "root", root))
		return -ENOMEM;
	if (rc)
		json_decref(root);
	return rc;
}

/* The record's files durable by the commit point: a small record
 * through the pack (its manifest written plain, the pack put into the
 * commit's own LMDB transaction t, which the commit point syncs;
 * history_sync makes the files themselves durable once the commit
 * answered), a larger one (or if the pack fails) by fsyncs of its own
 * files and folders. *packed: which. */
static int write_record(struct cap *c, struct layer_txn *t, uint64_t txid,
			json_t *doc, bool *packed)
{
	char *m = hist_dumps(doc), *pk = NULL;
	size_t mlen = m ? strlen(m) : 0, plen = 0, i;
	json_t *e;
	int rc = 0, fd;

	*packed = false;
	if (!m)
		return -ENOMEM;
	if (!c->copied && mlen + c->pbytes <= HIST_PACK_MAX &&
	    (c->lazy || hist_put_file(c->dfd, HIST_MANIFEST, m, mlen) == 0) &&
	    hist_pack_build(txid, c->pend, c->dfd, m, mlen, c->pfiles,
			    c->lazy ? c->mem : NULL, &pk, &plen) == 0 &&
	    layer_meta_put(t, HIST_PACK_KEY, pk, plen) == 0)
		*packed = true;
	free(m);
	free(pk);
	if (*packed)	/* lazy: its folder is written once answered */
		return 0;
	if ((rc = hist_cap_dir(c)))	/* a lazy record that could not be packed */
		return rc;
	/* a pack left in the layer (its record's files were synced at the
	 * start of this capture, but a commit that dropped it stopped
	 * before its commit point) must not outlive this commit: a crash
	 * would write back a record the retention may have removed since */
	rc = layer_meta_del(t, HIST_PACK_KEY);
	if (rc && rc != -ENOENT)
		return rc;
	rc = 0;
	json_array_foreach(c->pfiles, i, e) {
		fd = openat(c->objs, json_string_value(json_array_get(e, 0)),
			    O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fsync(fd))
			rc = -errno;
		if (fd >= 0)
			close(fd);
		if (rc)
			return rc;
	}
	if (fsync(c->objs))
		return -errno;
	rc = hist_save(c->dfd, HIST_MANIFEST, doc);
	if (rc == 0 && (fsync(c->dfd) || fsync(c->hfd) ||
			(c->fs->hist_new_dir && fsync(c->fs->statefd))))
		rc = -errno;
	if (rc == 0)
		c->fs->hist_new_dir = false;
	return rc;
}

void history_capture(struct txfs *fs, struct plan *p, uint64_t txid)
{
	char pend[40];
	struct cap c = { .fs = fs, .objs = -1, .dfd = -1, .pend = pend,
			 .lazy = true };
	json_t *doc = NULL;
	int rc;
	bool packed = false;

	fs->hist_line[0] = 0;
	/* the last record (its answer is sent before; left only if a sync
	 * failed): durable, its pack dropped in this commit's transaction */
	rc = history_sync_in(fs, p->t);
	history_free(fs);
	if (fs->opts.no_history)
		return;
	/* history/ itself, if it is new: made by the first record that
	 * needs a folder now (hist_cap_dir), or after the answer (a lazy
	 * one, history_sync) */
	c.hfd = hist_open(fs->statefd, false);
	if (c.hfd < 0 && c.hfd != -ENOENT) {
		rc = c.hfd;
		goto out;
	}
	/* a pending record left by a crash: settled at mount (txn_recover);
	 * again only if a commit since left one */
	if (!fs->hist_settled) {
		history_settle(fs, txid);
		/* a record still only in the pack (it cannot be written:
		 * a full disk) is not replaced by this commit's */
		if (rc == 0 && hist_pack_present(fs))
			rc = -ENOSPC;
	}
	if (rc) {
		snprintf(fs->hist_line, sizeof(fs->hist_line),
			 "history: nothing saved (the previous commit's record "
			 "could not be written: %s): this commit cannot be undone",
			 strerror(-rc));
		if (c.hfd >= 0)
			close(c.hfd);
		return;
	}
	/* the record's folder: made by the first keep that needs it */
	hist_name(pend, sizeof(pend), hist_next_id(c.hfd), true);
	c.objects = json_array();
	c.names = json_array();
	c.later = json_array();
	c.pfiles = json_array();
	/* (via: a command line, any bytes, as a name is) */
	doc = json_pack("{sisIsIsososo}", "version", 1, "txid", (json_int_t)txid,
			"time", (json_int_t)time(NULL), "via",
			hist_jname(fs->commit_via[0] ? fs->commit_via : "txfs commit"),
			"objects", c.objects, "names", c.names);
	rc = doc && c.pfiles ? 0 : -ENOMEM;
	if (rc == 0)
		rc = capture_root(&c, doc);
	for (size_t i = 0; i < p->n && rc == 0; i++)
		rc = capture_obj(&c, p, &p->objs[i]);
	if (rc == 0)
		rc = capture_names(&c, p);
	if (rc == 0 && json_object_set_new(doc, "bytes",
					   json_integer((json_int_t)c.bytes)))
		rc = -ENOMEM;
	if (rc == 0)
		rc = write_record(&c, p->t, txid, doc, &packed);
	if (rc == 0) {	/* the links, once past the commit point */
		fs->hist_packed = packed;
		fs->hist_lazy = c.lazy;	/* packed: lazy only if packed */
		fs->hist_mem = c.mem;
		c.mem = NULL;
		fs->hist_pfiles = json_incref(c.pfiles);
		fs->hist_later = json_incref(c.later);
		fs->hist_doc = json_incref(doc);	/* for history_finish */
		fs->hist_txid = txid;
		fs->hist_bytes = c.bytes;
		snprintf(fs->hist_pend, sizeof(fs->hist_pend), "%s", pend);
	}
out:
	json_decref(c.later);
	json_decref(c.pfiles);
	if (c.objs >= 0)
		close(c.objs);
	if (c.dfd >= 0)
		close(c.dfd);
	free(c.mem);
	json_decref(doc);
	if (rc) {
		if (c.hfd >= 0)
			hist_rm_tree(c.hfd, pend);
		snprintf(fs->hist_line, sizeof(fs->hist_line),
			 "history: nothing saved (%s): this commit cannot be "
			 "undone", strerror(-rc));
	} else {
		snprintf(fs->hist_line, sizeof(fs->hist_line),
			 "history: %llu objects saved, %llu bytes (txfs undo takes "
			 "the commit back)", (unsigned long long)c.nkept,
			 (unsigned long long)c.bytes);
	}
	if (c.hfd >= 0)
		close(c.hfd);
}

/* The links of the pending record of commit txid (in memory since the
 * capture, or read back from its manifest after a crash). */
static json_t *later_of(struct txfs *fs, int hfd, uint64_t txid, char *pend,
			size_t n)
{
	json_t *doc, *l = json_array(), *o;
	size_t i;

	if (fs->hist_later) {
		snprintf(pend, n, "%s", fs->hist_pend);
		json_decref(l);
		return json_incref(fs->hist_later);
	}
	if (!l || !(doc = hist_find_pending(hfd, txid, pend, n))) {
		json_decref(l);
		return NULL;
	}
	json_array_foreach(json_object_get(doc, "objects"), i, o)
		if (hist_str(o, "link_from"))
			json_array_append_new(l, hist_arr("ssI", hist_str(o, "keep"),
				hist_str(o, "link_from"), (json_int_t)hist_i64(o, "link_ino")));
	json_array_foreach(json_object_get(doc, "names"), i, o)
		if (hist_str(o, "link_from"))
			json_array_append_new(l, hist_arr("ssI", hist_str(o, "keep"),
				hist_str(o, "link_from"), (json_int_t)hist_i64(o, "link_ino")));
	json_decref(doc);
	return l;
}

static int cmp_later(const void *a, const void *b)
{
	return strcmp(json_string_value(json_array_get(*(json_t *const *)a, 1)),
		      json_string_value(json_array_get(*(json_t *const *)b, 1)));
}

void history_link(struct txfs *fs, uint64_t txid)
{
	int hfd = hist_open(fs->statefd, false), objs;
	char pend[40], rel[64];
	json_t *l, *e;
	size_t i;
	bool fresh = fs->hist_later != NULL;	/* not a recovery */

	hist_objs_close(fs);
	/* a recovery of a lazy record's commit: history/ itself may never
	 * have been made (history_sync makes it once answered) */
	if (hfd == -ENOENT && !fresh && hist_pack_present(fs))
		hfd = hist_open(fs->statefd, true);
	if (hfd < 0)
		return;
	struct pcache pc = { NULL, -1 };
	json_t **v;
	size_t n;

	if (!fresh)	/* a recovery: the record may be in the pack only */
		hist_pack_restore(fs, hfd);
	l = later_of(fs, hfd, txid, pend, sizeof(pend));
	snprintf(rel, sizeof(rel), "%s/objs", pend);
	objs = l ? openat(hfd, rel, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
	/* by path: a folder's files one after another (one open of it) */
	n = json_array_size(l);
	v = n ? calloc(n, sizeof(*v)) : NULL;
	json_array_foreach(l, i, e)
		if (v)
			v[i] = e;
	if (v)
		qsort(v, n, sizeof(*v), cmp_later);
	for (i = 0; objs >= 0 && i < n; i++) {
		e = v ? v[i] : json_array_get(l, i);
		if (link_one(fs, &pc, objs, json_string_value(json_array_get(e, 0)),
			     json_string_value(json_array_get(e, 1)),
			     (uint64_t)json_integer_value(json_array_get(e, 2)), fresh))
			fprintf(stderr, "txfs: history: %s not kept\n",
				json_string_value(json_array_get(e, 1)));
	}
	free(v);
	if (pc.fd >= 0)
		close(pc.fd);
	free(pc.dir);
	if (objs >= 0 && n)
		fsync(objs);	/* the links, before the apply unlinks */
	if (objs >= 0) {	/* for history_take, until the record is final */
		fs->hist_objs = objs;
		fs->hist_objs_open = true;
	}
	json_decref(l);
	json_decref(fs->hist_later);
	fs->hist_later = NULL;
	close(hfd);
}

int history_take(struct txfs *fs, int pfd, const char *path,
		 const struct stat *st)
{
	const char *slash = strrchr(path, '/'), *base = slash ? slash + 1 : path;
	char name[48];
	int rc;

	if (!fs->hist_objs_open)
		return -ENOENT;
	/* a file with other names was kept as a copy by the capture */
	snprintf(name, sizeof(name), "k%llx", (unsigned long long)st->st_ino);
	if (st->st_nlink > 1 &&
	    faccessat(fs->hist_objs, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		return -ENOENT;
	moved_name(name, sizeof(name), path, (uint64_t)st->st_ino);
	rc = renameat2(pfd, base, fs->hist_objs, name, RENAME_NOREPLACE) ? -errno : 0;
	if (rc == -ENOENT) {	/* its sub-folder, made by the first one */
		name[4] = 0;
		if (mkdirat(fs->hist_objs, name, 0700) && errno != EEXIST)
			return -ENOENT;
		name[4] = '/';
		rc = renameat2(pfd, base, fs->hist_objs, name, RENAME_NOREPLACE) ?
			     -errno : 0;
	}
	if (rc == 0)
		return 0;
	if (rc == -EEXIST)
		return -ENOENT;	/* kept already (cannot be: a replay finds
				 * the file gone first) */
	if (rc != -EXDEV || hist_copy(pfd, base, fs->hist_objs, name))
		fprintf(stderr, "txfs: history: %s not kept\n", path);
	return -ENOENT;
}
