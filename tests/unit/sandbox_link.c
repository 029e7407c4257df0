// SPDX-License-Identifier: Apache-2.0
/*
 * sandbox_link.c - links the whole sandbox library (cli/sandbox/) and
 * nothing of the command line: the build of this program is the test
 * that the sandbox calls nothing above it. Run, it asks the library for
 * the kernel's Landlock ABI.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "../../cli/sandbox/sandbox.h"

int main(void)
{
	int abi = -1;
	int rc = confine_probe(&abi);

	/* The library answers on its own: the kernel's Landlock ABI (or why
	 * not), with no command-line code linked in. */
	if (rc < 0 && rc != -ENOSYS && rc != -EOPNOTSUPP) {
		fprintf(stderr, "sandbox_link: confine_probe: %s\n", strerror(-rc));
		return 1;
	}
	printf("sandbox_link: cli/sandbox links on its own (Landlock ABI %d)\n", abi);
	return 0;
}
