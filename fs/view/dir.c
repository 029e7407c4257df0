/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dir.c - namespace changes: create, unlink, rmdir, rename, link.
 *
 * Each operation is one LMDB write transaction, so its checks (does the
 * name exist? is the folder empty?) and its changes are atomic with
 * respect to every other change. Removing a name that exists in the real
 * folder leaves a whiteout; removing a name that only the layer has
 * deletes its entry. Objects from the real directory that are renamed,
 * linked or removed get a layer record first (metadata copy-up, no data),
 * so they keep their identity; a removed one keeps a record with nlink 0
 * (a tombstone) so that handles still open on it see it as deleted.
 * Renaming a real folder is a single entry change: its children are still
 * found through the folder's lower path. Never EXDEV.
 */
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "view.h"

/* A write transaction with the parent folder's view. */
struct dirop {
	struct txfs *fs;
	struct layer_txn *t;
	struct tview dir;
};

static int dirop_begin(struct txfs *fs, uint64_t parent, struct dirop *op)
{
	int rc;

	op->fs = fs;
	memset(&op->dir, 0, sizeof(op->dir));
	rc = layer_begin(fs->layer, true, &op->t);
	if (rc)
		return rc;
	rc = view_inode(fs, op->t, parent, &op->dir);
	if (rc == 0 && !S_ISDIR(op->dir.st.st_mode))
		rc = -ENOTDIR;
	if (rc == 0 && op->dir.in_layer && op->dir.rec.nlink == 0)
		rc = -ENOENT;
	if (rc) {
		layer_txn_end(op->t);
		tview_free(&op->dir);
	}
	return rc;
}

/* Commit when rc is 0, abort otherwise; returns the final status. */
static int dirop_end(struct dirop *op, int rc)
{
	if (rc == 0)
		rc = layer_commit(op->t);
	else
		layer_txn_end(op->t);
	tview_free(&op->dir);
	return rc;
}

static int check_name(const char *name)
{
	if (!name_ok(name))
		return -EINVAL;
	if (!strcmp(name, TXFS_STAGING))
		return -EPERM;	/* reserved (at the root) for commits */
	return strlen(name) > 255 ? -ENAMETOOLONG : 0;
}

/* Update a folder's record after an entry change; dnlink adjusts nlink
 * for a subfolder added (+1) or removed (-1). */
static int dir_touch(struct txfs *fs, struct layer_txn *t, struct tview *dir,
		     int dnlink)
{
	int rc = guard_copy_up(fs, t, dir);

	if (rc)
		return rc;
	touch_mc(&dir->rec);
	dir->rec.nlink = (uint32_t)((int)dir->rec.nlink + dnlink);
	rec_to_stat(dir->tino, &dir->rec, &dir->st);
	return layer_inode_update(t, dir->tino, &dir->rec);
}

/* Remove name from dir's listing: a whiteout if the real folder has it.
 * in_lower: the lookup of the name just found it there (the view's
 * from_lower; one fstatat less per unlink of a real file). */
static int drop_name(struct txfs *fs, struct layer_txn *t,
		     const struct tview *dir, const char *name, bool in_lower)
{
	struct stat st;
	struct layer_dirent wh = { 0 };
	int rc = in_lower ? 1 : name_in_lower(fs, dir, name, &st);

	if (rc < 0)
		return rc;
	if (rc)
		return layer_dirent_put(t, dir->tino, name, strlen(name), &wh);
	return layer_dirent_del(t, dir->tino, name, strlen(name));
}

/* Layer meta key: a file may be held open with no name (unlinked, or an
 * O_TMPFILE): the next mount looks for leftovers (view_reap_orphans). */
#define ORPHANS_KEY "orphans"

/* One link to v goes away. A folder or a last link leaves a tombstone
 * (real objects) or nothing (layer objects, unless still open). */
static int drop_link(struct txfs *fs, struct layer_txn *t, struct tview *v)
{
	bool isdir = S_ISDIR(v->st.st_mode);
	int rc = guard_copy_up(fs, t, v);

	if (rc)
		return rc;
	if (isdir && (rc = layer_dirents_clear(t, v->tino)))
		return rc;
	v->rec.nlink = isdir || v->rec.nlink <= 1 ? 0 : v->rec.nlink - 1;
	touch_c(&v->rec);
	if (v->rec.nlink == 0 && itab_held(fs, v->tino) == 0) {
		if (!(v->rec.flags & LI_LOWER))
			return layer_inode_del(t, v->tino);
		rc = layer_chunks_trunc(t, v->tino, 0);
		if (rc)
			return rc;
	} else if (v->rec.nlink == 0 && fs->opts.noopen) {
		itab_orphan(fs, v->tino);
	}
	/* held open with no name: a dead daemon's leftover to reap at the
	 * next mount (view_reap_orphans); the mark is written once (a put
	 * of the same value would still copy its pages: -o noopen makes
	 * every unlinked file an orphan) */
	if (v->rec.nlink == 0 && !isdir && itab_held(fs, v->tino) &&
	    layer_meta_get_u64(t, ORPHANS_KEY, &(uint64_t){ 0 }) &&
	    (rc = layer_meta_put_u64(t, ORPHANS_KEY, 1)))
		return rc;
	return layer_inode_update(t, v->tino, &v->rec);
}

/* ---- orphans a dead daemon left ---- */

struct orphans {
	uint64_t *tino;
	bool *lower;
	size_t n, cap;
};

static int note_orphan(void *arg, uint64_t tino,
		       const struct layer_ino_view *v)
{
	struct orphans *o = arg;

	if (v->rec.nlink != 0 || S_ISDIR(v->rec.mode) ||
	    ((v->rec.flags & LI_LOWER) && !(v->rec.flags & LI_DATA)))
		return 0;
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		uint64_t *t = realloc(o->tino, cap * sizeof(*t));
		bool *l;

		if (!t)
			return -ENOMEM;
		o->tino = t;
		if (!(l = realloc(o->lower, cap * sizeof(*l))))
			return -ENOMEM;
		o->lower = l;
		o->cap = cap;
	}
	o->tino[o->n] = tino;
	o->lower[o->n++] = v->rec.flags & LI_LOWER;
	return 0;
}

int view_reap_orphans(struct txfs *fs, size_t *reaped)
{
	struct orphans o = { 0 };
	struct layer_txn *t;
	int rc;

	*reaped = 0;
	if ((rc = layer_begin(fs->layer, true, &t)))
		return rc;
	if (layer_meta_get_u64(t, ORPHANS_KEY, &(uint64_t){ 0 })) {
		layer_txn_end(t);	/* no file was ever held unnamed */
		return 0;
	}
	rc = layer_inode_each(t, note_orphan, &o);
	for (size_t i = 0; rc == 0 && i < o.n; i++)
		rc = o.lower[i] ? layer_chunks_trunc(t, o.tino[i], 0) :
				  layer_inode_del(t, o.tino[i]);
	if (rc == 0)
		rc = layer_meta_del(t, ORPHANS_KEY);
	if (rc == 0)
		rc = layer_commit(t);
	else
		layer_txn_end(t);
	if (rc == 0)
		*reaped = o.n;
	free(o.tino);
	free(o.lower);
	return rc;
}

static int new_rec(const struct tview *dir, mode_t mode, dev_t rdev,
		   const char *link, const struct req_ctx *c,
		   struct layer_inode *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->mode = mode;
	rec->uid = c->uid;
	rec->gid = c->gid;
	if (dir->st.st_mode & S_ISGID) {
		rec->gid = dir->st.st_gid;
		if (S_ISDIR(mode))
			rec->mode |= S_ISGID;
	}
	rec->nlink = S_ISDIR(mode) ? 2 : 1;
	rec->rdev = rdev;
	rec->size = link ? strlen(link) : S_ISDIR(mode) ? 4096 : 0;
	rec->atime_ns = rec->mtime_ns = rec->ctime_ns = now_ns();
	return 0;
}

int do_mknod(struct txfs *fs, uint64_t parent, const char *name, mode_t mode,
	     dev_t rdev, const char *link, const struct req_ctx *c,
	     struct tview *out)
{
	struct dirop op;
	struct layer_inode rec;
	struct layer_dirent d;
	int rc = check_name(name);

	memset(out, 0, sizeof(*out));
	if (rc)
		return rc;
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return -EPERM;	/* device nodes are never created */
	if (link && strlen(link) >= 4096)
		return -ENAMETOOLONG;
	rc = guard(fs, S_ISDIR(mode) ? POLICY_OP_MKDIR :
		   S_ISLNK(mode) ? POLICY_OP_SYMLINK : POLICY_OP_CREATE,
		   parent, name, c);
	if (rc || (rc = dirop_begin(fs, parent, &op)))
		return rc;
	rc = view_lookup(fs, op.t, &op.dir, name, out);
	tview_free(out);
	if (rc == 0)
		rc = -EEXIST;
	else if (rc == -ENOENT)
		rc = 0;
	if (rc)
		goto out;
	new_rec(&op.dir, mode, S_ISDIR(mode) ? 0 : rdev, link, c, &rec);
	d = (struct layer_dirent){ .type = mode & S_IFMT };
	struct charge ch = { .c = c, .op = "create", .dir = parent,
			     .name = name, .files = 1 };

	if ((rc = guard_charge(fs, op.t, &ch)) ||
	    (rc = layer_alloc_ino(op.t, &d.tino)) ||
	    (rc = layer_inode_put(op.t, d.tino, &rec, NULL, link)) ||
	    (rc = layer_dirent_put(op.t, parent, name, strlen(name), &d)) ||
	    (rc = dir_touch(fs, op.t, &op.dir, S_ISDIR(mode) ? 1 : 0)))
		goto out;
	out->tino = d.tino;
	out->in_layer = true;
	out->rec = rec;
	rec_to_stat(d.tino, &rec, &out->st);
out:
	return dirop_end(&op, rc);
}

int do_tmpfile(struct txfs *fs, uint64_t parent, mode_t mode,
	       const struct req_ctx *c, struct tview *out)
{
	static const char name[] = "#tmpfile";	/* as the kernel names it */
	struct charge ch = { .c = c, .op = "create", .dir = parent,
			     .name = name, .files = 1 };
	struct layer_inode rec;
	struct dirop op;
	uint64_t tino;
	int rc;

	memset(out, 0, sizeof(*out));
	if ((rc = guard(fs, POLICY_OP_CREATE, parent, name, c)) ||
	    (rc = guard(fs, POLICY_OP_WRITE, parent, name, c)) ||
	    (rc = dirop_begin(fs, parent, &op)))
		return rc;
	new_rec(&op.dir, S_IFREG | (mode & 07777), 0, NULL, c, &rec);
	rec.nlink = 0;
	rec.flags |= LI_TMPFILE;
	if ((rc = guard_charge(fs, op.t, &ch)) ||
	    (rc = layer_meta_put_u64(op.t, ORPHANS_KEY, 1)) ||
	    (rc = layer_alloc_ino(op.t, &tino)) ||
	    (rc = layer_inode_put(op.t, tino, &rec, NULL, NULL)))
		goto out;
	out->tino = tino;
	out->in_layer = true;
	out->rec = rec;
	rec_to_stat(tino, &rec, &out->st);
out:
	return dirop_end(&op, rc);
}

int do_unlink(struct txfs *fs, uint64_t parent, const char *name, bool isdir,
	      const struct req_ctx *c)
{
	struct dirop op;
	struct tview v;
	uint64_t gone;
	int rc = isdir ? 0 : guard(fs, POLICY_OP_DELETE, parent, name, c);

	if (rc || (rc = dirop_begin(fs, parent, &op)))
		return rc;
	rc = view_lookup(fs, op.t, &op.dir, name, &v);
	if (rc)
		goto out;
	gone = v.tino;
	if (v.virt)
		rc = -EPERM;
	else if (isdir && !S_ISDIR(v.st.st_mode))
		rc = -ENOTDIR;
	else if (!isdir && S_ISDIR(v.st.st_mode))
		rc = -EISDIR;
	else if (isdir && (rc = dir_empty(fs, op.t, &v)) == 0)
		/* a folder that is not empty fails as such, not as a veto */
		rc = guard(fs, POLICY_OP_DELETE, parent, name, c);
	else if (rc == -ENOTEMPTY && dir_visible_empty(fs, op.t, &v) == 0)
		/* ... unless all it holds is hidden: not a hint of them */
		rc = guard_hidden_inside(fs, POLICY_OP_DELETE, parent, name, c);
	if (rc == 0 && v.lower_path) {
		/* a loss for `limit deletes`: an object of the real directory
		 * (what this transaction made costs nothing) */
		struct charge ch = { .c = c, .op = "delete", .dir = parent,
				     .name = name, .lower = v.lower_path,
				     .deletes = 1 };

		rc = guard_charge(fs, op.t, &ch);
	}
	if (rc == 0 &&
	    (rc = drop_name(fs, op.t, &op.dir, name, v.from_lower)) == 0 &&
	    (rc = drop_link(fs, op.t, &v)) == 0)
		rc = dir_touch(fs, op.t, &op.dir, isdir ? -1 : 0);
	tview_free(&v);
	rc = dirop_end(&op, rc);
	if (rc == 0)
		itab_unname(fs, gone, parent, name);
	return rc;
out:
	return dirop_end(&op, rc);
}

static int put_entry(struct layer_txn *t, uint64_t dir, const char *name,
		     const struct tview *v)
{
	struct layer_dirent d = { .tino = v->tino,
				  .type = v->st.st_mode & S_IFMT };

	return layer_dirent_put(t, dir, name, strlen(name), &d);
}

/* State of a rename: both folders (the same view when equal), both
 * objects. */
struct rename_ctx {
	struct dirop op;
	struct tview dir2;
	struct tview *d2;	/* &op.dir or &dir2 */
	struct tview src, dst;
	bool have_dst;
	const char *name, *newname;
	uint64_t newparent;
	const struct req_ctx *c;
};

/* Rename is delete + rename at the source and create + rename at the
 * target, for the names themselves and, for folders, every name below:
 * when a rule could match below (policy_check_tree, cheap), the folder's
 * merged subtree is walked and every path checked (exact). */
struct tree_check {
	struct txfs *fs;
	const char *src, *dst;	/* merged paths of the folder */
	const struct req_ctx *c;
};

static int check_below(void *arg, const char *rel)
{
	struct tree_check *k = arg;
	char *a = path_join(k->src, rel), *b = path_join(k->dst, rel);
	int rc = a && b ? 0 : -ENOMEM;

	/* a hidden name below: the folder cannot move (the hidden object
	 * would go with it), and the refusal names nothing and logs
	 * nothing: EXDEV, as for a folder on another filesystem, so mv
	 * copies what it sees instead */
	if (rc == 0 && view_hidden_path(k->fs, a))
		rc = -EXDEV;
	if (rc == 0 && !(rc = guard_path(k->fs, POLICY_OP_DELETE, a, k->c)) &&
	    !(rc = guard_path(k->fs, POLICY_OP_READ, a, k->c)) &&
	    !(rc = guard_path(k->fs, POLICY_OP_RENAME, a, k->c)) &&
	    !(rc = guard_path(k->fs, POLICY_OP_CREATE, b, k->c)))
		rc = guard_path(k->fs, POLICY_OP_RENAME, b, k->c);
	free(a);
	free(b);
	return rc;
}

static int tree_guard(struct txfs *fs, struct layer_txn *t,
		      const struct tview *dir, uint64_t p1, const char *n1,
		      uint64_t p2, const char *n2, const struct req_ctx *c)
{
	struct tree_check k = { .fs = fs, .c = c };
	char *src, *dst;
	int rc;

	if (!guard_tree_may(fs, POLICY_OP_DELETE, p1, n1) &&
	    !guard_tree_may(fs, POLICY_OP_READ, p1, n1) &&
	    !guard_tree_may(fs, POLICY_OP_RENAME, p1, n1) &&
	    !guard_tree_may(fs, POLICY_OP_CREATE, p2, n2) &&
	    !guard_tree_may(fs, POLICY_OP_RENAME, p2, n2))
		return 0;
	src = itab_path(fs, p1, n1);
	dst = itab_path(fs, p2, n2);
	if (!src || !dst) {
		/* over the limits, or an unknown place: refuse, never guess */
		rc = errno == ENAMETOOLONG ? -ENAMETOOLONG : -EACCES;
	} else {
		k.src = src;
		k.dst = dst;
		rc = dir_walk(fs, t, dir, "", check_below, &k);
	}
	free(src);
	free(dst);
	return rc;
}

static int rename_guard(struct txfs *fs, struct layer_txn *t,
			const struct tview *obj, uint64_t p1, const char *n1,
			uint64_t p2, const char *n2, const struct req_ctx *c)
{
	int rc;

	/* READ at the source too: a new name must not make readable what
	 * the policy keeps unread */
	if ((rc = guard(fs, POLICY_OP_RENAME, p1, n1, c)) ||
	    (rc = guard(fs, POLICY_OP_DELETE, p1, n1, c)) ||
	    (rc = guard(fs, POLICY_OP_READ, p1, n1, c)) ||
	    (rc = guard(fs, POLICY_OP_RENAME, p2, n2, c)) ||
	    (rc = guard(fs, POLICY_OP_CREATE, p2, n2, c)))
		return rc;
	/* a file that arrives at n2 sets what n2 holds: a write there (else
	 * `deny write X` falls to: write a file, keep it open, rename it
	 * onto X, go on writing through the descriptor) */
	if (!S_ISDIR(obj->st.st_mode))
		return guard(fs, POLICY_OP_WRITE, p2, n2, c);
	return tree_guard(fs, t, obj, p1, n1, p2, n2, c);
}

static int rename_policy(struct txfs *fs, struct rename_ctx *r,
			 uint64_t parent, unsigned flags)
{
	int rc = rename_guard(fs, r->op.t, &r->src, parent, r->name,
			      r->newparent, r->newname, r->c);
	/* `limit files`: an object of the real directory moved to a name
	 * is that path changed besides its own (its copy up); what this
	 * transaction made changes no more paths by moving */
	struct charge name = { .c = r->c, .op = "rename", .dir = r->newparent,
			       .name = r->newname, .files = 1 };

	if (rc == 0 && !(flags & RENAME_EXCHANGE) && !r->src.in_layer)
		rc = guard_charge(fs, r->op.t, &name);
	if (rc || !r->have_dst)
		return rc;
	if (flags & RENAME_EXCHANGE)
		return rename_guard(fs, r->op.t, &r->dst, r->newparent,
				    r->newname, parent, r->name, r->c);
	if ((rc = guard(fs, POLICY_OP_DELETE, r->newparent, r->newname, r->c)))
		return rc;
	if (!r->dst.lower_path)
		return 0;	/* replacing what this transaction made */
	struct charge ch = { .c = r->c, .op = "rename", .dir = r->newparent,
			     .name = r->newname, .lower = r->dst.lower_path,
			     .deletes = 1 };

	return guard_charge(fs, r->op.t, &ch);
}

static int rename_check(struct txfs *fs, struct rename_ctx *r,
			unsigned flags)
{
	bool sdir = S_ISDIR(r->src.st.st_mode);
	bool ddir;

	if (r->src.virt || (r->have_dst && r->dst.virt))
		return -EPERM;
	if (!r->have_dst)
		return (flags & RENAME_EXCHANGE) ? -ENOENT : 0;
	if (flags & RENAME_NOREPLACE)
		return -EEXIST;
	if (flags & RENAME_EXCHANGE)
		return 0;
	ddir = S_ISDIR(r->dst.st.st_mode);
	if (sdir && !ddir)
		return -ENOTDIR;
	if (!sdir && ddir)
		return -EISDIR;
	if (!ddir || dir_empty(fs, r->op.t, &r->dst) == 0)
		return 0;
	if (dir_visible_empty(fs, r->op.t, &r->dst) == 0)	/* hidden only */
		return guard_hidden_inside(fs, POLICY_OP_DELETE, r->newparent,
					   r->newname, r->c);
	return -ENOTEMPTY;
}

static int rename_exchange(struct txfs *fs, struct rename_ctx *r)
{
	struct layer_txn *t = r->op.t;
	int sdir = S_ISDIR(r->src.st.st_mode) ? 1 : 0;
	int ddir = S_ISDIR(r->dst.st.st_mode) ? 1 : 0;
	int rc;

	if ((rc = guard_copy_up(fs, t, &r->src)) ||
	    (rc = guard_copy_up(fs, t, &r->dst)) ||
	    (rc = put_entry(t, r->op.dir.tino, r->name, &r->dst)) ||
	    (rc = put_entry(t, r->newparent, r->newname, &r->src)))
		return rc;
	touch_c(&r->src.rec);
	touch_c(&r->dst.rec);
	if ((rc = layer_inode_update(t, r->src.tino, &r->src.rec)) ||
	    (rc = layer_inode_update(t, r->dst.tino, &r->dst.rec)))
		return rc;
	if (r->d2 == &r->op.dir)
		return dir_touch(fs, t, &r->op.dir, 0);
	if ((rc = dir_touch(fs, t, &r->op.dir, ddir - sdir)))
		return rc;
	return dir_touch(fs, t, r->d2, sdir - ddir);
}

static int rename_move(struct txfs *fs, struct rename_ctx *r)
{
	struct layer_txn *t = r->op.t;
	int sdir = S_ISDIR(r->src.st.st_mode) ? 1 : 0;
	int ddir = r->have_dst && S_ISDIR(r->dst.st.st_mode) ? 1 : 0;
	int rc;

	if (r->have_dst && (rc = drop_link(fs, t, &r->dst)))
		return rc;
	if ((rc = guard_copy_up(fs, t, &r->src)) ||
	    (rc = put_entry(t, r->newparent, r->newname, &r->src)) ||
	    (rc = drop_name(fs, t, &r->op.dir, r->name,
				 r->src.from_lower)))
		return rc;
	touch_c(&r->src.rec);
	if ((rc = layer_inode_update(t, r->src.tino, &r->src.rec)))
		return rc;
	if (r->d2 == &r->op.dir)
		return dir_touch(fs, t, &r->op.dir, -ddir);
	if ((rc = dir_touch(fs, t, &r->op.dir, -sdir)))
		return rc;
	return dir_touch(fs, t, r->d2, sdir - ddir);
}

int do_rename(struct txfs *fs, uint64_t parent, const char *name,
	      uint64_t newparent, const char *newname, unsigned flags,
	      const struct req_ctx *c)
{
	struct rename_ctx r = { .name = name, .newname = newname,
				.newparent = newparent, .c = c };
	int rc = check_name(newname);

	if (rc)
		return rc;
	if (flags & ~(unsigned)(RENAME_NOREPLACE | RENAME_EXCHANGE))
		return -EINVAL;
	if ((rc = dirop_begin(fs, parent, &r.op)))
		return rc;
	r.d2 = &r.op.dir;
	if (newparent != parent) {
		r.d2 = &r.dir2;
		rc = view_inode(fs, r.op.t, newparent, &r.dir2);
		if (rc == 0 && !S_ISDIR(r.dir2.st.st_mode))
			rc = -ENOTDIR;
		if (rc)
			goto out;
	}
	if ((rc = view_lookup(fs, r.op.t, &r.op.dir, name, &r.src)))
		goto out;
	rc = view_lookup(fs, r.op.t, r.d2, newname, &r.dst);
	if (rc && rc != -ENOENT)
		goto out;
	r.have_dst = rc == 0;
	rc = rename_check(fs, &r, flags);
	if (rc || (r.have_dst && r.dst.tino == r.src.tino))
		goto out;
	if ((rc = rename_policy(fs, &r, parent, flags)))
		goto out;
	rc = (flags & RENAME_EXCHANGE) ? rename_exchange(fs, &r) :
					 rename_move(fs, &r);
out:
	tview_free(&r.src);
	tview_free(&r.dst);
	tview_free(&r.dir2);
	rc = dirop_end(&r.op, rc);
	if (rc == 0 && r.have_dst && r.dst.tino == r.src.tino)
		return 0;	/* two links of one file: nothing changes */
	if (rc == 0 && r.have_dst && !(flags & RENAME_EXCHANGE))
		itab_unname(fs, r.dst.tino, newparent, newname);
	if (rc == 0) {
		itab_move(fs, r.src.tino, parent, name, newparent, newname);
		if ((flags & RENAME_EXCHANGE) && r.have_dst)
			itab_move(fs, r.dst.tino, newparent, newname, parent,
				  name);
	}
	return rc;
}

/* A hard link is a create at the new name, and must not open a way to
 * write a file the policy protects: linking needs write on the source. */
static int link_guard(struct txfs *fs, uint64_t tino, uint64_t newparent,
		      const char *newname, const struct req_ctx *c)
{
	char *src = itab_path(fs, tino, NULL);
	bool nameless = !src && errno != ENAMETOOLONG;
	int rc;

	/* a file with no name yet (O_TMPFILE, "dir/#tmpfile"): what it
	 * holds arrives under the new name, a write there */
	if (nameless)
		src = itab_orphan_path(fs, tino);
	rc = guard_ino(fs, POLICY_OP_WRITE, tino, src, c);
	if (rc == 0)
		rc = guard_ino(fs, POLICY_OP_READ, tino, src, c);
	if (rc || (rc = guard(fs, POLICY_OP_LINK, newparent, newname, c)) ||
	    (nameless &&
	     (rc = guard(fs, POLICY_OP_WRITE, newparent, newname, c))) ||
	    (rc = guard(fs, POLICY_OP_CREATE, newparent, newname, c))) {
		free(src);
		return rc;
	}
	/* the new name gets the same rules as the others (issue 23); a
	 * nameless file has no other name to be alike with */
	rc = nameless ? 0 : guard_link_alike(fs, tino, src, newparent,
					       newname, c);
	free(src);
	return rc;
}

int do_link(struct txfs *fs, uint64_t tino, uint64_t newparent,
	    const char *newname, const struct req_ctx *c, struct tview *out)
{
	struct dirop op;
	struct tview dst;
	struct charge ch;
	bool first;
	int rc = check_name(newname);

	memset(out, 0, sizeof(*out));
	if (rc || (rc = link_guard(fs, tino, newparent, newname, c)))
		return rc;
	if ((rc = dirop_begin(fs, newparent, &op)))
		return rc;
	if ((rc = view_inode(fs, op.t, tino, out)))
		goto out;
	if (S_ISDIR(out->st.st_mode) || out->virt) {
		rc = -EPERM;
		goto out;
	}
	/* a name for an unlinked file only if O_TMPFILE made it nameless
	 * (the kernel lets linkat through for those alone: I_LINKABLE) */
	if (out->in_layer && out->rec.nlink == 0 &&
	    !(out->rec.flags & LI_TMPFILE)) {
		rc = -ENOENT;
		goto out;
	}
	/* the first name of an O_TMPFILE file was charged at its creation */
	first = out->in_layer && out->rec.nlink == 0;
	out->rec.flags &= ~LI_TMPFILE;
	rc = view_lookup(fs, op.t, &op.dir, newname, &dst);
	tview_free(&dst);
	if (rc != -ENOENT) {
		rc = rc ? rc : -EEXIST;
		goto out;
	}
	/* every other new name is a path changed (`limit files`) */
	ch = (struct charge){ .c = c, .op = "link", .dir = newparent,
			      .name = newname, .files = 1 };
	if ((!first && (rc = guard_charge(fs, op.t, &ch))) ||
	    (rc = guard_copy_up(fs, op.t, out)) ||
	    (rc = put_entry(op.t, newparent, newname, out)))
		goto out;
	out->rec.nlink++;
	touch_c(&out->rec);
	rec_to_stat(tino, &out->rec, &out->st);
	if ((rc = layer_inode_update(op.t, tino, &out->rec)))
		goto out;
	rc = dir_touch(fs, op.t, &op.dir, 0);
out:
	return dirop_end(&op, rc);
}
