/* SPDX-License-Identifier: Apache-2.0 */
/*
 * ctl.c - the virtual control folder (.txfs/ by default) at the root.
 *
 * Its objects have fixed inode numbers LAYER_INO_VIRT + index into
 * ctl_files[] (index 0 is the folder). They are never stored in the layer
 * and never committed; they cannot be removed, renamed or written, except
 * `ctl`. A file's text is generated when it is opened (a snapshot) and
 * served with direct I/O, so every open sees fresh contents.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "txfs.h"

typedef int (*ctl_gen_fn)(struct txfs *fs, char **buf, size_t *len);

struct ctl_file {
	const char *name;
	mode_t mode;
	ctl_gen_fn gen;
};

static int gen_readme(struct txfs *fs, char **buf, size_t *len);
static int gen_status(struct txfs *fs, char **buf, size_t *len);
static int gen_status_json(struct txfs *fs, char **buf, size_t *len);
static int gen_policy(struct txfs *fs, char **buf, size_t *len);
static int gen_ctl(struct txfs *fs, char **buf, size_t *len);

static const struct ctl_file ctl_files[] = {
	{ NULL, S_IFDIR | 0555, NULL },
	{ "README", S_IFREG | 0444, gen_readme },
	{ "status", S_IFREG | 0444, gen_status },
	{ "status.json", S_IFREG | 0444, gen_status_json },
	{ "policy", S_IFREG | 0444, gen_policy },
	{ "ctl", S_IFREG | 0644, gen_ctl },
};
#define NCTL (sizeof(ctl_files) / sizeof(ctl_files[0]))

bool ctl_is_ino(uint64_t tino)
{
	return tino >= LAYER_INO_VIRT && tino < LAYER_INO_VIRT + NCTL;
}

bool ctl_is_name(const struct txfs *fs, uint64_t parent, const char *name)
{
	return (parent == (uint64_t)fs->root_ino &&
		strcmp(name, fs->ctl_name) == 0) || parent == LAYER_INO_VIRT;
}

int ctl_view(struct txfs *fs, uint64_t tino, struct tview *v)
{
	const struct ctl_file *f = &ctl_files[tino - LAYER_INO_VIRT];

	(void)fs;
	memset(v, 0, sizeof(*v));
	v->tino = tino;
	v->virt = true;
	v->st.st_ino = tino;
	v->st.st_mode = f->mode;
	v->st.st_nlink = S_ISDIR(f->mode) ? 2 : 1;
	v->st.st_uid = getuid();
	v->st.st_gid = getgid();
	v->st.st_blksize = 4096;
	clock_gettime(CLOCK_REALTIME, &v->st.st_mtim);
	v->st.st_atim = v->st.st_ctim = v->st.st_mtim;
	return 0;
}

int ctl_lookup(struct txfs *fs, uint64_t parent, const char *name,
	       struct tview *v)
{
	if (parent != LAYER_INO_VIRT)
		return ctl_view(fs, LAYER_INO_VIRT, v);
	for (size_t i = 1; i < NCTL; i++)
		if (strcmp(ctl_files[i].name, name) == 0)
			return ctl_view(fs, LAYER_INO_VIRT + i, v);
	return -ENOENT;
}

int ctl_readdir(struct txfs *fs, uint64_t tino, struct dir_handle *dh)
{
	size_t n = NCTL + 1;

	(void)tino;
	dh->ents = calloc(n, sizeof(*dh->ents));
	if (!dh->ents)
		return -ENOMEM;
	dh->ents[0] = (struct dir_entry){ strdup("."), LAYER_INO_VIRT,
					  S_IFDIR };
	dh->ents[1] = (struct dir_entry){ strdup(".."),
					  (uint64_t)fs->root_ino, S_IFDIR };
	for (size_t i = 1; i < NCTL; i++)
		dh->ents[i + 1] = (struct dir_entry){
			strdup(ctl_files[i].name), LAYER_INO_VIRT + i,
			ctl_files[i].mode & S_IFMT };
	dh->n = n;
	for (size_t i = 0; i < n; i++)
		if (!dh->ents[i].name) {
			dir_free(dh);
			return -ENOMEM;
		}
	dh->loaded = true;
	return 0;
}

static int gen_text(char **buf, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int gen_text(char **buf, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vasprintf(buf, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -ENOMEM;
	*len = (size_t)n;
	return 0;
}

static int gen_readme(struct txfs *fs, char **buf, size_t *len)
{
	return gen_text(buf, len,
"This folder (%s/) is txfs's control folder. It is not part of your files.\n"
"Every change you make in this workspace is staged; nothing reaches the\n"
"real directory until it is committed.\n"
"\n"
"  cat %s/status          what is staged (status.json: the same as JSON)\n"
"  echo commit > %s/ctl   apply the staged changes to the real directory\n"
"  echo rollback > %s/ctl discard them\n"
"  cat %s/policy          the rules in force (refused operations: EACCES)\n",
			fs->ctl_name, fs->ctl_name, fs->ctl_name, fs->ctl_name,
			fs->ctl_name);
}

static int txid(struct txfs *fs, uint64_t *id)
{
	struct layer_txn *t;
	int rc = layer_begin(fs->layer, false, &t);

	if (rc)
		return rc;
	rc = layer_meta_get_u64(t, "txid", id);
	layer_txn_end(t);
	return rc;
}

static int gen_status(struct txfs *fs, char **buf, size_t *len)
{
	uint64_t id = 0;

	txid(fs, &id);
	return gen_text(buf, len,
			"transaction: %llu\nworkspace: %s\nmounted at: %s\n"
			"state: %s\npid: %d\n",
			(unsigned long long)id, fs->ws_path, fs->mnt_path,
			fs->state_path, (int)getpid());
}

static int gen_status_json(struct txfs *fs, char **buf, size_t *len)
{
	uint64_t id = 0;

	txid(fs, &id);
	/* Paths are printed as JSON strings by the caller's realpath: they
	 * may hold any byte; escape the two that matter for JSON. */
	return gen_text(buf, len,
			"{\"transaction\":%llu,\"pid\":%d,\"workspace\":\"%s\","
			"\"mountpoint\":\"%s\",\"state\":\"%s\"}\n",
			(unsigned long long)id, (int)getpid(), fs->ws_path,
			fs->mnt_path, fs->state_path);
}

static int gen_policy(struct txfs *fs, char **buf, size_t *len)
{
	const struct policy *p = atomic_load(&fs->policy);

	return gen_text(buf, len, "%s", p ? policy_text(p) : "");
}

static int gen_ctl(struct txfs *fs, char **buf, size_t *len)
{
	(void)fs;
	return gen_text(buf, len, "ready\n");
}

int ctl_open(struct txfs *fs, uint64_t tino, int flags,
	     struct fhandle *fh)
{
	const struct ctl_file *f = &ctl_files[tino - LAYER_INO_VIRT];

	fh->virt = true;
	if (S_ISDIR(f->mode))
		return -EISDIR;
	if ((flags & O_ACCMODE) != O_RDONLY && !(f->mode & 0200))
		return -EACCES;
	return f->gen(fs, &fh->virt_buf, &fh->virt_len);
}

int ctl_write(struct txfs *fs, struct fhandle *fh, const char *buf,
	      size_t size, off_t off)
{
	(void)fs, (void)fh, (void)buf, (void)size, (void)off;
	return -ENOSYS;
}
