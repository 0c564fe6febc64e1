/*
 * base.h - libaoe's base layer, the part for libaoe's own files (and
 * its white-box tests): CPU dispatch, hashes and the thread pool.  Not
 * installed; users include aoe.h.
 */
#ifndef AOE_BASE_INT_H
#define AOE_BASE_INT_H

#include "aoe_base.h"

/* The time now in UTC as ISO 8601, "2026-01-01T00:00:00Z" (21 bytes). */
void aoe_iso_now(char *buf, size_t len);

/*
 * Whether the AVX-512 micro-kernels may run: the CPU has AVX-512F and
 * AOE_MAX_ISA=avx2 does not cap libaoe (read once).
 */
int aoe_cpu_avx512(void);
/*
 * Make aoe_cpu_avx512() say avx512 (0 or 1) in this thread, or the host's
 * again (-1), for checking schedules against the search spaces of another
 * soc_version's ISA; returns what was in force before (-1: the host's).
 * Only for checks: no kernel may run while it is set.
 */
int aoe_cpu_isa_override(int avx512);
/* What aoe_cpu_isa_override() set in this thread: 0, 1, or -1 for none. */
int aoe_cpu_isa_forced(void);
/*
 * The AVX-512 answer for soc_version soc: 1 for an x86-64-v4 soc, 0 for
 * any lower level, -1 when soc names no level (the host's applies).
 */
int aoe_soc_avx512(const char *soc);
/* 64-bit FNV-1a of n bytes, continuing from h (start: AOE_FNV_INIT). */
#define AOE_FNV_INIT 0xcbf29ce484222325ULL
uint64_t aoe_fnv1a(uint64_t h, const void *p, size_t n);
/*
 * The next number of the splitmix64 stream whose state is *state (any
 * value to start); reproducible, unlike libc's global rand().
 */
uint64_t aoe_splitmix64(uint64_t *state);

/* SHA-256, for the checksums of bank archives. */
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
/*
 * The thread pool (lib/base/pool.c), on which every parallel loop runs.
 * aoe_parallel() calls fn(ctx, chunk, tid) once for each chunk in
 * [0, nchunks), on up to nthreads threads; the caller is tid 0, and every
 * tid is below nthreads and used by one thread at a time, so per-thread
 * scratch may be indexed by it.  Chunks run in no particular order.  The
 * caller takes chunks itself and waits only for those a worker started.
 * With nthreads < 2, one chunk, or from inside a chunk, the chunks run in
 * order on the calling thread.
 */
typedef void (*aoe_chunk_fn)(void *ctx, int64_t chunk, int tid);
void aoe_parallel(int nthreads, int64_t nchunks, aoe_chunk_fn fn,
    void *ctx);
/*
 * A loop of one part a thread: n units cut into nthreads contiguous
 * parts, part t [cut[t], cut[t + 1]) (cut has nthreads + 1 entries;
 * every part has a unit while there are enough), sized by the speeds
 * the pool measured of each thread on fn's earlier loops so cut, evenly
 * until then (or under AOE_POOL_BALANCE=0).  The caller then runs
 * aoe_parallel(nthreads, nthreads, fn, ctx), chunk t being part t; that
 * loop's times update the speeds.
 */
void aoe_pool_cut(aoe_chunk_fn fn, int nthreads, int64_t n, int64_t *cut);
/*
 * Whether the calling thread is running a chunk of a loop that other
 * threads of the pool share (not one run in order on the caller): its
 * data has likely been in the other cores' caches.
 */
int aoe_pool_shared(void);
/* The threads a caller's cut array on the stack need hold at most. */
#define AOE_CUT_MAX 64

/*
 * Whether this machine's cores are far apart, so that storing over cache
 * lines another core holds is slow (pool.c): measured once a process,
 * or AOE_FAR_CORES.
 */
int aoe_cores_far(void);

/* Whether s is one of list[0..n). */
int aoe_str_in(const char *s, const char *const *list, size_t n);

#endif
