/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctlns.c - the control folder's names (.txfs/ by default): which node ids
 * and names are its objects, and their attributes and listing. A fixed
 * table below the view: namei.c and readdir.c ask it, and it calls no
 * other part of fs/. What the files say and what a write to ctl does is
 * ctl.c, above the view.
 *
 * Its objects have fixed inode numbers LAYER_INO_VIRT + enum ctl_index
 * (CTL_DIR, 0, is the folder). They are never stored in the layer and
 * never committed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "view.h"

/* The files that name changed paths (status counts and names the paths
 * that need review, ctl's outcome lists conflicts) are the mount owner's
 * only: under -o allow_other other users see the tree by its own modes,
 * but not what this transaction changed (root passes, default_permissions
 * is set). */
static const struct {
	const char *name;
	mode_t mode;
} ctl_files[NCTL] = {
	[CTL_DIR] = { NULL, S_IFDIR | 0555 },
	[CTL_README] = { "README", S_IFREG | 0444 },
	[CTL_STATUS] = { "status", S_IFREG | 0400 },
	[CTL_STATUS_JSON] = { "status.json", S_IFREG | 0400 },
	[CTL_POLICY] = { "policy", S_IFREG | 0444 },
	[CTL_CTL] = { "ctl", S_IFREG | 0600 },
	[CTL_CHANGES] = { "changes", S_IFREG | 0400 },
	[CTL_LOG] = { "log", S_IFREG | 0400 },
	[CTL_STATE] = { "state", S_IFREG | 0400 },
};

bool ctl_is_ino(uint64_t tino)
{
	return tino >= LAYER_INO_VIRT && tino < LAYER_INO_VIRT + CTL_SPAN;
}

bool ctl_is_name(const struct txfs *fs, uint64_t parent, const char *name)
{
	return (parent == (uint64_t)fs->root_ino &&
		strcmp(name, fs->ctl_name) == 0) || parent == LAYER_INO_VIRT;
}

enum ctl_index ctl_index(uint64_t tino)
{
	return (enum ctl_index)((tino - LAYER_INO_VIRT) % NCTL);
}

mode_t ctl_mode(uint64_t tino)
{
	return ctl_files[ctl_index(tino)].mode;
}

int ctl_view(uint64_t tino, struct tview *v)
{
	mode_t mode = ctl_mode(tino);

	memset(v, 0, sizeof(*v));
	v->tino = tino;
	v->virt = true;
	v->st.st_ino = tino;
	v->st.st_mode = mode;
	v->st.st_nlink = S_ISDIR(mode) ? 2 : 1;
	v->st.st_uid = getuid();
	v->st.st_gid = getgid();
	v->st.st_blksize = 4096;
	clock_gettime(CLOCK_REALTIME, &v->st.st_mtim);
	v->st.st_atim = v->st.st_ctim = v->st.st_mtim;
	return 0;
}

int ctl_lookup(uint64_t parent, const char *name, struct tview *v)
{
	if (parent != LAYER_INO_VIRT)
		return ctl_view(LAYER_INO_VIRT, v);
	for (size_t i = 1; i < NCTL; i++)
		if (strcmp(ctl_files[i].name, name) == 0)
			return ctl_view(LAYER_INO_VIRT + i, v);
	return -ENOENT;
}

int ctl_readdir(const struct txfs *fs, struct dir_handle *dh)
{
	size_t n = NCTL + 1;
	struct dir_entry *e = calloc(n, sizeof(*e));

	if (!e)
		return -ENOMEM;
	e[0] = (struct dir_entry){ strdup("."), LAYER_INO_VIRT, S_IFDIR };
	e[1] = (struct dir_entry){ strdup(".."), (uint64_t)fs->root_ino,
				   S_IFDIR };
	for (size_t i = 1; i < NCTL; i++)
		e[i + 1] = (struct dir_entry){ strdup(ctl_files[i].name),
					       LAYER_INO_VIRT + i,
					       ctl_files[i].mode & S_IFMT };
	for (size_t i = 0; i < n; i++) {
		if (e[i].name)
			continue;
		for (size_t j = 0; j < n; j++)
			free(e[j].name);
		free(e);
		return -ENOMEM;
	}
	dh->ents = e;
	dh->n = n;
	dh->loaded = true;
	return 0;
}
