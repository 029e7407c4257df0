/* SPDX-License-Identifier: Apache-2.0 */
/*
 * layer.h - the upper layer: every staged change, kept in LMDB.
 *
 * One LMDB environment in STATE/layer/ with these named databases. All
 * integers in keys are big-endian so that LMDB's byte order is numeric
 * order; values are host-endian structs (the state folder is not portable
 * between machines and says so in its format record).
 *
 *   meta     "format"       -> "txfs-layer-2" ("txfs-layer-1": the same
 *                                without pieces, upgraded at open)
 *            "workspace"    -> struct layer_ws (real root's dev, ino, path)
 *            "gen"          -> u64, the current generation (see below)
 *            "next_ino"     -> u64, the next number for a layer-born inode
 *            "txid"         -> u64, the open transaction's id
 *   inodes   gen|tino       -> struct layer_inode + lower path + link target
 *   dirents  gen|dir|name   -> struct layer_dirent (tino 0: a whiteout)
 *   chunks   gen|tino|block -> up to LAYER_BLOCK bytes of file data
 *            gen|tino|block|p -> piece p: up to LAYER_PIECE bytes over
 *                              the block (layer_chunk.c)
 *   xattrs   gen|tino|name  -> value
 *   undo     gen|level|db|key -> old value (savepoints, see undo.c)
 *   journal  step number    -> a commit step (see commit.c)
 *
 * Generations: every key of inodes, dirents, chunks and xattrs starts with
 * the generation it belongs to, and only the current generation is visible.
 * Discarding the whole layer (rollback, end of commit) is one write of
 * "gen" - constant time whatever the layer holds. The keys of older
 * generations sort first and are deleted in the background, in small
 * write transactions, by layer_gc_step().
 *
 * Inode numbers (tino): an object from the real directory is known by its
 * real st_ino (so stat data stays stable); objects born in the layer get
 * LAYER_INO_BASE + n and virtual objects (.txfs/) LAYER_INO_VIRT + k, all
 * inside [LAYER_INO_BASE, LAYER_INO_END) = [2^62 - 2^48, 2^62): positive
 * as signed 64-bit numbers (tools print them as such), and a range real
 * file systems do not use (ext2/3/4 numbers are 32-bit; xfs, btrfs and
 * tmpfs allocate from the bottom; overlayfs's xino puts its layer number
 * in the top bits and keeps bits 48-61 clear). Collision is ruled out,
 * not just unlikely: a real object whose st_ino falls in the reserved
 * range (layer_ino_reserved) is refused with EOVERFLOW by lower_stat and
 * lower_stat_at, so it never becomes a tino. Layers written before this
 * range (bit 63 set, format txfs-layer-1 too) keep their numbers: bit 63
 * is reserved as well.
 *
 * A file's data: block b of a file is chunk (tino, b) when that chunk
 * exists (a chunk shorter than LAYER_BLOCK reads as zeros past its end);
 * otherwise, for a file from the real directory, the real file's bytes
 * below inode.lower_valid; otherwise zeros. Pieces (gen|tino|block|p)
 * replace LAYER_PIECE-sized parts of a block: a small write into a big
 * stored block stores only the pieces it touches (layer_chunk.c).
 * Changing 4 KiB of a 1 GiB real file stores at most one block.
 * Holes are never stored: a block past the old end of file that a write
 * skips, a truncate up and a punched block past lower_valid have no
 * chunk; a punched block over real bytes gets an empty chunk.
 *
 * Every function returns 0 or a negative errno; LMDB codes never leave
 * this module (MDB_NOTFOUND -> -ENOENT, MDB_MAP_FULL/MDB_TXN_FULL ->
 * -ENOSPC, anything else is logged and becomes -EIO).
 */
#ifndef TXFS_LAYER_H
#define TXFS_LAYER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LAYER_BLOCK	 (64u * 1024u)
#define LAYER_INO_BASE	 ((1ULL << 62) - (1ULL << 48))
#define LAYER_INO_VIRT	 ((1ULL << 62) - (1ULL << 40))
#define LAYER_INO_END	 (1ULL << 62)
#define LAYER_INO_OLD	 (1ULL << 63)	/* layer-born, older layers */
#define LAYER_PIECE	 4096u	/* a piece: the unit of a small write */
#define LAYER_PIECES	 (LAYER_BLOCK / LAYER_PIECE)
#define LAYER_FORMAT	 "txfs-layer-2"	/* blocks may have pieces */
#define LAYER_FORMAT_1	 "txfs-layer-1"	/* read, and upgraded at open */

/* struct layer_inode.flags */
#define LI_LOWER	0x1u	/* has an origin in the real directory */
#define LI_XATTRS	0x2u	/* xattrs fully held in the layer */
#define LI_DATA		0x4u	/* data changed (chunks or lower_valid) */
#define LI_LOST		0x8u	/* a loss of its real bytes (truncated,
				 * overwritten, punched) was charged to
				 * `limit deletes`: later ones cost nothing */
#define LI_TMPFILE	0x10u	/* made by O_TMPFILE with no name (nlink 0):
				 * linkat may give it one (do_link) */

struct layer_inode {
	uint32_t mode;
	uint32_t uid;
	uint32_t gid;
	uint32_t nlink;
	uint64_t size;
	uint64_t rdev;
	int64_t atime_ns;
	int64_t mtime_ns;
	int64_t ctime_ns;
	uint64_t lower_valid;	/* bytes of the real file still valid */
	int64_t lower_ctime_ns;	/* the real object's ctime when first touched:
				 * commit refuses if it changed since */
	uint32_t flags;		/* LI_* */
	uint16_t lower_len;	/* length of the lower path after the struct */
	uint16_t link_len;	/* length of the symlink target after that */
};

/* An inode as read from the layer: the record and its variable parts.
 * The pointers refer to memory owned by the caller's buffer. */
struct layer_ino_view {
	struct layer_inode rec;
	const char *lower_path;	/* NUL-terminated, "" when !LI_LOWER */
	const char *link;	/* NUL-terminated symlink target or "" */
};

struct layer_dirent {
	uint64_t tino;		/* 0 = whiteout */
	uint32_t type;		/* S_IFMT bits of the target */
	uint32_t pad;
};

struct layer_ws {
	uint64_t dev;
	uint64_t ino;
	char path[4096];
};

struct layer;
struct layer_txn;

/* Is ino one of the layer's own numbers (layer-born or virtual)? A real
 * object with such a number is refused (see "Inode numbers" above). */
static inline bool layer_ino_reserved(uint64_t ino)
{
	return (ino >= LAYER_INO_BASE && ino < LAYER_INO_END) ||
	       ino >= LAYER_INO_OLD;
}

/* Open (creating if needed) the layer in folder dirfd/name. map_size 0
 * means the default. Returns -EINVAL with *why set for a corrupt or
 * foreign folder. */
int layer_open(int dirfd, const char *name, uint64_t map_size,
	       struct layer_ws *ws, struct layer **out,
	       const char **why);
void layer_close(struct layer *l);
/* Write transactions committed since open (for bench statistics). */
uint64_t layer_commits(struct layer *l);
/* check.c: walk every database of the layer in folder path (not open in
 * this process) in a child process. 0 if sound or absent; -EUCLEAN with
 * *why set if damaged. */
int layer_check(const char *path, uint64_t map_size, const char **why);
/* salvage.c: copy what can be read of the damaged layer STATE/layer into
 * a new one, STATE/salvaged (child processes read the damaged one: a
 * crash there is not ours). What could not be read is printed on stderr
 * ("txfs: salvage STATE: ...", state names the folder) and kept in
 * STATE/salvaged/lost.txt. layer_salvage_forget removes the copy. */
int layer_salvage(int statefd, uint64_t map, const char *state);
void layer_salvage_forget(int statefd);
/* Make everything committed so far durable (fsync); with a batch open,
 * commit it first (batch.c). */
int layer_sync(struct layer *l);

/* Group commit (batch.c). layer_batch_start binds the calling thread (the
 * one serving thread) as the batch's owner: its write transactions become
 * operations inside one LMDB transaction, committed when ms old, when the
 * owner waits ms for a request, at BATCH_MAX_OPS operations, at
 * layer_sync and layer_batch_flush, and when another thread begins a
 * transaction (it waits for that). 0: off. -ENOTSUP with MDB_WRITEMAP,
 * -EINVAL past 1000 ms. layer_batch_stop (owner) commits and ends it.
 * layer_batch_flush: the owner commits the open batch (-EBUSY inside an
 * operation); another thread waits until it is committed. An error means
 * the batch could not be committed and is lost (logged).
 * layer_batch_wait (owner, before it reads the next request from fd):
 * keeps the batch open while a request comes within its time, else
 * commits it. layer_batch_ops: operations that went through batches. */
int layer_batch_start(struct layer *l, unsigned ms);
void layer_batch_stop(struct layer *l);
int layer_batch_flush(struct layer *l);
int layer_batch_wait(struct layer *l, int fd);
uint64_t layer_batch_ops(struct layer *l);
/* The error of a batch that could not be committed since the last call
 * (0: none); layer_sync returns it. */
int layer_batch_lost(struct layer *l);

/* Transactions. A read transaction sees a stable snapshot; a write
 * transaction is exclusive among writers. layer_txn_end() aborts a write
 * transaction that was not committed. */
int layer_begin(struct layer *l, bool write, struct layer_txn **out);
int layer_commit(struct layer_txn *t);
void layer_txn_end(struct layer_txn *t);
uint64_t layer_txn_gen(const struct layer_txn *t);

/* meta */
int layer_meta_get_u64(struct layer_txn *t, const char *key, uint64_t *v);
int layer_meta_put_u64(struct layer_txn *t, const char *key, uint64_t v);
int layer_alloc_ino(struct layer_txn *t, uint64_t *tino);
/* Start a new, empty generation: the constant-time discard. */
int layer_new_generation(struct layer_txn *t);

/* inodes. layer_inode_get fills *v with pointers into LMDB memory valid
 * until the transaction ends. */
int layer_inode_get(struct layer_txn *t, uint64_t tino,
		    struct layer_ino_view *v);
int layer_inode_put(struct layer_txn *t, uint64_t tino,
		    const struct layer_inode *rec, const char *lower_path,
		    const char *link);
/* Rewrite only the fixed part (keeps the lower path and link). */
int layer_inode_update(struct layer_txn *t, uint64_t tino,
		       const struct layer_inode *rec);
/* Delete an inode with its chunks and xattrs. */
int layer_inode_del(struct layer_txn *t, uint64_t tino);

/* dirents */
int layer_dirent_get(struct layer_txn *t, uint64_t dir, const char *name,
		     size_t len, struct layer_dirent *d);
int layer_dirent_put(struct layer_txn *t, uint64_t dir, const char *name,
		     size_t len, const struct layer_dirent *d);
int layer_dirent_del(struct layer_txn *t, uint64_t dir, const char *name,
		     size_t len);
/* Call fn for every entry of dir (whiteouts included), in name order,
 * until fn returns non-zero (which is returned). */
typedef int (*layer_dirent_fn)(void *arg, const char *name, size_t len,
			       const struct layer_dirent *d);
int layer_dirent_each(struct layer_txn *t, uint64_t dir, layer_dirent_fn fn,
		      void *arg);
/* Delete every entry of dir. */
int layer_dirents_clear(struct layer_txn *t, uint64_t dir);

/* chunks: the block as stored, its pieces merged over its base (or over
 * zeros); -ENOENT if the layer holds neither. *data points into LMDB
 * memory or, when the block has pieces, into a buffer of the transaction
 * (valid until the next layer_chunk_get or the end of the transaction). */
int layer_chunk_get(struct layer_txn *t, uint64_t tino, uint64_t block,
		    const void **data, size_t *len);
/* Store the block's base (its whole content); drops its pieces. */
int layer_chunk_put(struct layer_txn *t, uint64_t tino, uint64_t block,
		    const void *data, size_t len);
/* Store piece `piece` of a block: len <= LAYER_PIECE bytes that replace
 * [piece * LAYER_PIECE, (piece + 1) * LAYER_PIECE) of it (zeros past len).
 * Only for a block with a base or with no real-file bytes under it.
 * *old gets the length of the piece it replaced (0: none). */
int layer_piece_put(struct layer_txn *t, uint64_t tino, uint64_t block,
		    unsigned piece, const void *data, size_t len, size_t *old);
/* Whether the block has a base, and how many pieces. */
int layer_block_info(struct layer_txn *t, uint64_t tino, uint64_t block,
		     bool *base, unsigned *pieces);
/* Delete chunks with block >= first. */
int layer_chunks_trunc(struct layer_txn *t, uint64_t tino, uint64_t first);
/* The first chunk of tino at block or after it: its block and length
 * (merged: where the last stored byte of the block ends; -ENOENT if
 * none). A chunk of length 0 marks a punched hole over the
 * real file's bytes (it reads as zeros and stores nothing). */
int layer_chunk_next(struct layer_txn *t, uint64_t tino, uint64_t block,
		     uint64_t *found, size_t *len);
/* Bytes held in chunks and pieces of tino (statistics, st_blocks). */
int layer_chunks_bytes(struct layer_txn *t, uint64_t tino, uint64_t *bytes);

/* xattrs */
int layer_xattr_get(struct layer_txn *t, uint64_t tino, const char *name,
		    const void **val, size_t *len);
int layer_xattr_put(struct layer_txn *t, uint64_t tino, const char *name,
		    const void *val, size_t len);
int layer_xattr_del(struct layer_txn *t, uint64_t tino, const char *name);
typedef int (*layer_xattr_fn)(void *arg, const char *name, const void *val,
			      size_t len);
int layer_xattr_each(struct layer_txn *t, uint64_t tino, layer_xattr_fn fn,
		     void *arg);

/* Per-transaction counters (policy limits), kept under the reserved
 * inode number 0 of the current generation, so a discard resets them. */
struct layer_counters {
	uint64_t deletes;	/* names removed */
	uint64_t files;		/* objects changed or created */
	int64_t bytes;		/* bytes held in chunks now: every chunk put,
				 * trimmed or deleted changes it, within the
				 * same LMDB transaction (so rollbacks of
				 * savepoints restore it with the chunks) */
};

/* layer_counters_get includes the transaction's chunk changes so far;
 * layer_counters_put stores them; layer_commit stores what is left. */
int layer_counters_get(struct layer_txn *t, struct layer_counters *c);
int layer_counters_put(struct layer_txn *t, const struct layer_counters *c);

/*
 * Savepoints: while any is open, every first change of a key at the
 * current level saves the key's old value in the undo log.
 * layer_sp_push opens one (its level is returned), layer_sp_rollback(L)
 * restores everything to how it was when level L was opened and keeps L
 * open, layer_sp_release(L) closes L and those above it, keeping their
 * changes. -ENOENT for a level that is not open.
 */
int layer_sp_push(struct layer_txn *t, uint32_t *level);
int layer_sp_rollback(struct layer_txn *t, uint32_t level);
int layer_sp_release(struct layer_txn *t, uint32_t level);
uint32_t layer_sp_level(const struct layer_txn *t);
/* *changed: whether anything changed since savepoint level `level` was
 * opened (the undo log has a record at that level or above). */
int layer_sp_changed(struct layer_txn *t, uint32_t level, bool *changed);
/* LMDB's id of transaction t: in a read transaction the last commit it
 * sees; in a write transaction that commit + 1 (the id it commits as).
 * Ids grow by one per committed write transaction, so two ids tell
 * whether anything was committed between. */
uint64_t layer_txn_id(const struct layer_txn *t);
/* Close every savepoint and drop the undo log. */
int layer_sp_clear(struct layer_txn *t);

/* meta: any small value under a string key. */
int layer_meta_get(struct layer_txn *t, const char *key, const void **val,
		   size_t *len);
int layer_meta_put(struct layer_txn *t, const char *key, const void *val,
		   size_t len);
int layer_meta_del(struct layer_txn *t, const char *key);

/* The commit journal: steps numbered from 0 (see commit.c). */
int layer_journal_put(struct layer_txn *t, uint32_t i, const void *step,
		      size_t len);
int layer_journal_get(struct layer_txn *t, uint32_t i, const void **step,
		      size_t *len);
int layer_journal_clear(struct layer_txn *t);

/* Iterate every entry of every folder of the current generation. */
typedef int (*layer_any_dirent_fn)(void *arg, uint64_t dir, const char *name,
				   size_t len, const struct layer_dirent *d);
int layer_dirent_each_all(struct layer_txn *t, layer_any_dirent_fn fn,
			  void *arg);

/* Iterate every inode of the current generation. */
typedef int (*layer_inode_fn)(void *arg, uint64_t tino,
			      const struct layer_ino_view *v);
int layer_inode_each(struct layer_txn *t, layer_inode_fn fn, void *arg);

/* Delete up to max keys of older generations; *more says whether any
 * remain. Runs its own write transaction. */
int layer_gc_step(struct layer *l, unsigned max, bool *more);

/* Bytes used by the LMDB file (pages in use times page size). */
int layer_used_bytes(struct layer *l, uint64_t *bytes);

#endif /* TXFS_LAYER_H */
