/*
 * xcore - what a store costs by where the cache line was: two threads
 * pinned to CPUs A and B (default 0 and 1) pass a buffer between them,
 * and A's stores over it are timed, plain and non-temporal, after B
 * wrote it, read it, or left it alone.  The figures behind dw_nt
 * (lib/kernels/k_dwconv.c) and aoe_cores_far() (lib/base/pool.c): on a
 * machine whose cores are far apart (another CCD or socket), storing
 * over lines that both cores hold costs several times more than over
 * lines only the other core holds, and non-temporal stores avoid it.
 *
 *   bench/xcore [-a cpu] [-b cpu] [-r rounds] [KB ...]
 *
 * For each buffer size (default 112 450 1600 KB) it prints the minimum
 * over the rounds (default 50) of each case, in microseconds and
 * nanoseconds a 64-byte line, and first the round trip of one line
 * bounced between A and B.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <immintrin.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { OP_NONE, OP_WRITE, OP_READ, OP_QUIT };

static float *buf;
static size_t nfl;			/* floats in buf */
static int cpu_b = 1;
static _Alignas(64) _Atomic int op;
static _Alignas(64) _Atomic unsigned ball;
static volatile float sink;

static double
now_us(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int
pin(int cpu)
{
	cpu_set_t s;

	CPU_ZERO(&s);
	CPU_SET(cpu, &s);
	return pthread_setaffinity_np(pthread_self(), sizeof(s), &s);
}

/* v over the buffer, through the caches or, when nt, streamed. */
static void
store(float v, int nt)
{
	__m256 x = _mm256_set1_ps(v);
	size_t i;

	for (i = 0; i < nfl; i += 8)
		if (nt)
			_mm256_stream_ps(buf + i, x);
		else
			_mm256_store_ps(buf + i, x);
	_mm_sfence();
}

static float
load(void)
{
	__m256 a = _mm256_setzero_ps();
	float t[8], s = 0;
	size_t i;
	int j;

	for (i = 0; i < nfl; i += 8)
		a = _mm256_add_ps(a, _mm256_load_ps(buf + i));
	_mm256_storeu_ps(t, a);
	for (j = 0; j < 8; j++)
		s += t[j];
	return s;
}

static void *
partner(void *arg)
{
	unsigned v = 1;
	int o;

	(void)arg;
	if (pin(cpu_b) != 0)
		return NULL;
	/* First the round trips, then the buffer operations. */
	while (v < 2 * 20000) {
		if (atomic_load_explicit(&ball, memory_order_acquire) == v) {
			atomic_store_explicit(&ball, v + 1,
			    memory_order_release);
			v += 2;
		} else
			_mm_pause();
	}
	for (;;) {
		while ((o = atomic_load(&op)) == OP_NONE)
			_mm_pause();
		if (o == OP_QUIT)
			break;
		if (o == OP_WRITE)
			store(1, 0);
		else
			sink = load();
		atomic_store(&op, OP_NONE);
	}
	return NULL;
}

/* Have B do o, and wait until it has. */
static void
on_b(int o)
{
	atomic_store(&op, o);
	while (atomic_load(&op) != OP_NONE)
		_mm_pause();
}

static long
num(const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < lo || v > hi) {
		fprintf(stderr, "xcore: %s: not a number from %ld to %ld\n",
		    s, lo, hi);
		exit(2);
	}
	return v;
}

int
main(int argc, char **argv)
{
	static const char *const name[] = {
		"A's own lines",
		"lines B wrote",
		"lines A wrote, B read",
		"lines B wrote, A read",
		"lines A wrote, B read; streamed",
		"A's own lines; streamed",
	};
	enum { NCASE = sizeof(name) / sizeof(name[0]) };
	static const long defkb[] = { 112, 450, 1600 };
	long kb[16];
	int cpu_a = 0, rounds = 50, nkb = 0, c, r, k, i;
	double best[NCASE], t0, dt, trip;
	pthread_t t;
	unsigned v = 0;

	while ((c = getopt(argc, argv, "a:b:r:")) != -1)
		switch (c) {
		case 'a':
			cpu_a = (int)num(optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'b':
			cpu_b = (int)num(optarg, 0, CPU_SETSIZE - 1);
			break;
		case 'r':
			rounds = (int)num(optarg, 1, 100000);
			break;
		default:
			fprintf(stderr, "usage: xcore [-a cpu] [-b cpu] "
			    "[-r rounds] [KB ...]\n");
			return 2;
		}
	for (i = optind; i < argc && nkb < 16; i++)
		kb[nkb++] = num(argv[i], 4, 1L << 20);
	if (nkb == 0)
		for (nkb = 0; nkb < 3; nkb++)
			kb[nkb] = defkb[nkb];
	if (cpu_a == cpu_b || pin(cpu_a) != 0) {
		fprintf(stderr, "xcore: cannot run on CPUs %d and %d\n",
		    cpu_a, cpu_b);
		return 1;
	}
	if (pthread_create(&t, NULL, partner, NULL) != 0) {
		fprintf(stderr, "xcore: cannot start a thread\n");
		return 1;
	}
	t0 = now_us();
	while (v < 2 * 20000) {
		atomic_store_explicit(&ball, v + 1, memory_order_release);
		while (atomic_load_explicit(&ball, memory_order_acquire) !=
		    v + 2)
			_mm_pause();
		v += 2;
	}
	trip = (now_us() - t0) * 1000 / 20000;
	printf("# CPUs %d and %d: a line's round trip %.0f ns\n", cpu_a,
	    cpu_b, trip);
	for (k = 0; k < nkb; k++) {
		nfl = (size_t)kb[k] * 1024 / sizeof(float);
		buf = aligned_alloc(64, nfl * sizeof(float));
		if (buf == NULL) {
			fprintf(stderr, "xcore: out of memory\n");
			return 1;
		}
		memset(buf, 0, nfl * sizeof(float));
		for (c = 0; c < NCASE; c++)
			best[c] = 1e300;
		for (r = 0; r < rounds; r++)
			for (c = 0; c < NCASE; c++) {
				switch (c) {
				case 0:
				case 5:
					store(2, 0);
					break;
				case 1:
					on_b(OP_WRITE);
					break;
				case 2:
				case 4:
					store(2, 0);
					on_b(OP_READ);
					break;
				case 3:
					on_b(OP_WRITE);
					sink = load();
					on_b(OP_READ);
					break;
				}
				t0 = now_us();
				store(3, c >= 4);
				dt = now_us() - t0;
				if (dt < best[c])
					best[c] = dt;
			}
		printf("%ld KB stored by CPU %d, least of %d rounds:\n", kb[k],
		    cpu_a, rounds);
		for (c = 0; c < NCASE; c++)
			printf("  %-34s %8.1f us %6.2f ns a line\n", name[c],
			    best[c], best[c] * 1000 / (double)(nfl / 16));
		free(buf);
	}
	atomic_store(&op, OP_QUIT);
	pthread_join(t, NULL);
	return 0;
}
