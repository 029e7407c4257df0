/* SPDX-License-Identifier: Apache-2.0 */
/*
 * namei.c - lookup through the layers, and the merged view of an inode.
 *
 * A name in folder D resolves, in order: the .txfs/ folder at the root;
 * D's entry in the layer (a whiteout there means "deleted"); D's real
 * folder, if D has one. An object found in the real folder is known by
 * its real st_ino; if the layer holds a record for that number (it was
 * changed in place), the record's attributes win.
 *
 * struct tview is the merged state of one object; it owns its strings.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "view.h"

int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

void touch_mc(struct layer_inode *rec)
{
	rec->mtime_ns = rec->ctime_ns = now_ns();
}

void touch_c(struct layer_inode *rec)
{
	rec->ctime_ns = now_ns();
}

void tview_free(struct tview *v)
{
	free(v->lower_path);
	free(v->link);
	v->lower_path = v->link = NULL;
}

static struct timespec ns_ts(int64_t ns)
{
	return (struct timespec){ .tv_sec = ns / 1000000000LL,
				  .tv_nsec = ns % 1000000000LL };
}

void rec_to_stat(uint64_t tino, const struct layer_inode *rec,
		 struct stat *st)
{
	memset(st, 0, sizeof(*st));
	st->st_ino = tino;
	st->st_mode = rec->mode;
	st->st_nlink = rec->nlink;
	st->st_uid = rec->uid;
	st->st_gid = rec->gid;
	st->st_rdev = rec->rdev;
	st->st_size = (off_t)rec->size;
	st->st_blksize = LAYER_BLOCK;
	st->st_blocks = (blkcnt_t)((rec->size + 511) / 512);
	st->st_atim = ns_ts(rec->atime_ns);
	st->st_mtim = ns_ts(rec->mtime_ns);
	st->st_ctim = ns_ts(rec->ctime_ns);
}

void stat_to_rec(const struct stat *st, struct layer_inode *rec)
{
	memset(rec, 0, sizeof(*rec));
	rec->mode = st->st_mode;
	rec->uid = st->st_uid;
	rec->gid = st->st_gid;
	rec->nlink = (uint32_t)st->st_nlink;
	rec->size = (uint64_t)st->st_size;
	rec->rdev = st->st_rdev;
	rec->atime_ns = ts_ns(st->st_atim);
	rec->mtime_ns = ts_ns(st->st_mtim);
	rec->ctime_ns = ts_ns(st->st_ctim);
	rec->flags = LI_LOWER;
	rec->lower_ctime_ns = ts_ns(st->st_ctim);
	rec->lower_valid = S_ISREG(st->st_mode) ? (uint64_t)st->st_size : 0;
}

static int dupstr(char **dst, const char *s)
{
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

/* Fill v from the layer record of tino. */
static int view_from_layer(uint64_t tino, const struct layer_ino_view *lv,
			   struct tview *v)
{
	int rc;

	v->tino = tino;
	v->in_layer = true;
	v->rec = lv->rec;
	rec_to_stat(tino, &lv->rec, &v->st);
	if ((lv->rec.flags & LI_LOWER) &&
	    (rc = dupstr(&v->lower_path, lv->lower_path)))
		return rc;
	if (lv->rec.link_len && (rc = dupstr(&v->link, lv->link)))
		return rc;
	return 0;
}

int view_inode(struct txfs *fs, struct layer_txn *t, uint64_t tino,
	       struct tview *v)
{
	struct layer_ino_view lv;
	int rc;

	memset(v, 0, sizeof(*v));
	if (ctl_is_ino(tino))
		return ctl_view(tino, v);
	rc = layer_inode_get(t, tino, &lv);
	if (rc == 0)
		return view_from_layer(tino, &lv, v);
	if (rc != -ENOENT)
		return rc;
	if (layer_ino_reserved(tino))
		return -ESTALE;
	v->tino = tino;
	v->lower_path = tino == (uint64_t)fs->root_ino ?
				strdup("") : itab_lower_path(fs, tino);
	if (!v->lower_path)
		return -ESTALE;
	rc = lower_stat(fs, v->lower_path, &v->st);
	if (rc == 0 && v->st.st_ino != tino)
		rc = -ESTALE;
	if (rc) {
		tview_free(v);
		return rc == -ENOENT ? -ESTALE : rc;
	}
	v->st.st_blksize = LAYER_BLOCK;
	return 0;
}

int view_folder(struct txfs *fs, struct layer_txn *t, uint64_t tino,
		struct tview *v)
{
	struct layer_ino_view lv;
	int rc;

	if (ctl_is_ino(tino) || layer_ino_reserved(tino) ||
	    (rc = layer_inode_get(t, tino, &lv)) == 0 || rc != -ENOENT)
		return view_inode(fs, t, tino, v);
	/* a real folder the layer never touched: its path is all a lookup
	 * in it needs, no stat */
	memset(v, 0, sizeof(*v));
	v->tino = tino;
	v->st.st_ino = tino;
	v->st.st_mode = S_IFDIR | 0755;
	v->lower_path = tino == (uint64_t)fs->root_ino ?
				strdup("") : itab_lower_path(fs, tino);
	return v->lower_path ? 0 : -ESTALE;
}

int name_in_lower(struct txfs *fs, const struct tview *dir, const char *name,
		  struct stat *st)
{
	int rc;

	if (!dir->lower_path)
		return 0;
	rc = lower_stat_at(fs, dir->lower_path, name, st);
	if (rc == -ENOENT || rc == -ENOTDIR)
		return 0;
	return rc ? rc : 1;
}

/* Names the policy hides are not in the view: a lookup says ENOENT, a
 * listing leaves them out (the policy is a library below fs/; guard.c
 * refuses operations, hiding is the namespace itself). */
bool view_hidden_path(struct txfs *fs, const char *path)
{
	const struct policy *p = atomic_load(&fs->policy);

	return p && fs->has_hide && path &&
	       policy_is_hidden(p, path, strlen(path));
}

void view_hide_counts(const struct txfs *fs, struct stat *st)
{
	if (fs->has_hide && S_ISDIR(st->st_mode))
		st->st_nlink = 1;	/* "not counted", as btrfs says */
}

bool view_hidden(struct txfs *fs, uint64_t dir, const char *name)
{
	const struct policy *p = atomic_load(&fs->policy);
	char *path;
	bool hidden;

	if (!p || !fs->has_hide)
		return false;
	path = itab_path(fs, dir, name);
	hidden = !path || policy_is_hidden(p, path, strlen(path));
	free(path);
	return hidden;
}

int view_lookup(struct txfs *fs, struct layer_txn *t, const struct tview *dir,
		const char *name, struct tview *v)
{
	struct layer_dirent d;
	struct layer_ino_view lv;
	struct stat st;
	int rc;

	memset(v, 0, sizeof(*v));
	if (!S_ISDIR(dir->st.st_mode))
		return -ENOTDIR;
	if (strlen(name) > 255)
		return -ENAMETOOLONG;
	if (ctl_is_name(fs, dir->tino, name))
		return ctl_lookup(dir->tino, name, v);
	if (view_hidden(fs, dir->tino, name) ||
	    (dir->tino == (uint64_t)fs->root_ino && !strcmp(name, TXFS_STAGING)))
		return -ENOENT;
	rc = layer_dirent_get(t, dir->tino, name, strlen(name), &d);
	if (rc == 0) {
		if (d.tino == 0) {
			v->whiteout = true;
			return -ENOENT;
		}
		rc = layer_inode_get(t, d.tino, &lv);
		return rc == 0 ? view_from_layer(d.tino, &lv, v) :
				 (rc == -ENOENT ? -EIO : rc);
	}
	if (rc != -ENOENT)
		return rc;
	rc = name_in_lower(fs, dir, name, &st);
	if (rc <= 0)
		return rc ? rc : -ENOENT;
	v->from_lower = true;
	if (layer_inode_get(t, (uint64_t)st.st_ino, &lv) == 0)
		return view_from_layer((uint64_t)st.st_ino, &lv, v);
	v->tino = (uint64_t)st.st_ino;
	v->st = st;
	v->st.st_blksize = LAYER_BLOCK;
	v->lower_path = path_join(dir->lower_path, name);
	return v->lower_path ? 0 : -ENOMEM;
}

int view_copy_up(struct txfs *fs, struct layer_txn *t, struct tview *v)
{
	struct layer_inode rec;
	char target[4097];
	const char *link = NULL;
	int rc;

	if (v->in_layer)
		return 0;
	if (v->virt)
		return -EPERM;
	stat_to_rec(&v->st, &rec);
	if (S_ISLNK(v->st.st_mode)) {
		rc = lower_readlink(fs, v->lower_path, target,
				    sizeof(target) - 1);
		if (rc < 0)
			return rc;
		target[rc] = '\0';
		link = target;
		if ((rc = dupstr(&v->link, target)))
			return rc;
	}
	rc = layer_inode_put(t, v->tino, &rec, v->lower_path, link);
	if (rc)
		return rc;
	v->in_layer = true;
	v->rec = rec;
	return 0;
}
