/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sandbox/ - running a command confined: the module `txfs run` and
 * `txfs exec` share, built as its own library (libtxfs_sandbox).
 *
 * Owns: confine.c (Landlock and the seccomp filters, confine.h),
 * supervise*.c (the seccomp user-notification supervisor: connect, exec
 * identity, metadata outside the workspace, supervise.h), proctree.c (the
 * command's process tree: its cgroup, stopping what it left behind,
 * proctree.h), reslimit.c (the command's timeout, memory, CPU and task
 * bounds: the cgroup's, the child's rlimits, the parent's samples,
 * reslimit.h), spawn.c (the child's confine-and-exec and the parent's
 * wait, spawn.h).
 * May call: policy/ (the exec and connect rules) and the C library; never
 * the command line (the cmd_*.c files) nor fs/: the commands call the sandbox, not
 * the other way (the library links without them: tests/confine builds
 * test_sandbox_link against it alone).
 */
#ifndef TXFS_SANDBOX_H
#define TXFS_SANDBOX_H

#include "spawn.h"	/* confine.h, reslimit.h, proctree.h, supervise.h */

#endif /* TXFS_SANDBOX_H */
