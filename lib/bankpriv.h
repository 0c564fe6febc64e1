/*
 * bankpriv.h - helpers private to the knowledge bank (lib/bank.c,
 * lib/sig.c); not part of the public header.
 */
#ifndef AOE_BANKPRIV_H
#define AOE_BANKPRIV_H

#include <stddef.h>
#include <stdint.h>

typedef struct aoe_sha256 {
	uint32_t h[8];
	uint64_t len;
	uint8_t buf[64];
	size_t nbuf;
} aoe_sha256;

void aoe_sha256_init(aoe_sha256 *c);
void aoe_sha256_update(aoe_sha256 *c, const void *data, size_t n);
/* Finish and write the digest as 64 hex digits and a NUL. */
void aoe_sha256_hex(aoe_sha256 *c, char out[65]);

/* 1 if s is a safe soc_version (a file name of [A-Za-z0-9._-]). */
int aoe_soc_valid(const char *s);

#endif
