/* SPDX-License-Identifier: Apache-2.0 */
/*
 * inode_int.h - the inode table's internals shared by inode.c (the table)
 * and inode_relink.c (relinking after commit, rollback and savepoints;
 * aliases). Nothing outside those two files includes it. Every function
 * here expects fs->itab_lock held.
 */
#ifndef TXFS_INODE_INT_H
#define TXFS_INODE_INT_H

#include "view.h"

/* The node of tino, or NULL. */
struct tnode *itab_find_locked(struct txfs *fs, uint64_t tino);
/* The node of tino, made if new (-ENOMEM). */
int itab_get_locked(struct txfs *fs, uint64_t tino, struct tnode **out);
/* The node's path ("" for the root) with name appended when given;
 * malloc'd, NULL when not known. */
char *itab_path_locked(struct txfs *fs, uint64_t tino, const char *name);
/* Record (parent, name) as one of the node's names. */
void itab_set_name(struct tnode *n, uint64_t parent, const char *name);
/* Take the node out of the table and free it. */
void itab_unlink_node(struct txfs *fs, struct tnode *n);

#endif
