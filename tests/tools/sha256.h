/* SPDX-License-Identifier: Apache-2.0 */
/*
 * sha256.h - a small SHA-256 (FIPS 180-4) for the test tools, so that they
 * need no crypto library. Not constant-time; not for secrets.
 */
#ifndef TXFS_TEST_SHA256_H
#define TXFS_TEST_SHA256_H

#include <stddef.h>
#include <stdint.h>

struct sha256 {
	uint32_t h[8];
	uint64_t len;
	unsigned char buf[64];
	size_t fill;
};

void sha256_init(struct sha256 *s);
void sha256_update(struct sha256 *s, const void *data, size_t n);
/* Writes 64 lowercase hex digits and a NUL into hex. */
void sha256_hex(struct sha256 *s, char hex[65]);

#endif
