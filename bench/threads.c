/*
 * threads.c - what a parallel region costs on this machine, for the tiny
 * ops (an add of a few thousand floats) where dispatch overhead matters
 * most: OpenMP, a small hand-written pthread pool, and libaoe's own pool
 * (lib/base/pool.c, aoe_parallel(), on which every kernel runs).
 *
 * usage: threads [iterations]      (build: make -C bench threads)
 *
 * Prints, for each element count, the median and 90th percentile time of
 * one parallel elementwise add over 2 threads with each runtime, and the
 * serial time.  The pools are timed before OpenMP's workers exist, since
 * their idle spinning would take the second core from the pools' workers.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aoe.h"
#include "kernel.h"

#define NT 2

static double
now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static float *a, *b, *c;

static void
add_range(long lo, long hi)
{
	long i;

	for (i = lo; i < hi; i++)
		c[i] = a[i] + b[i];
}

/*
 * The pool: workers spin briefly on a generation counter, then sleep on a
 * condition variable, as a small hand-written pool would.
 */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static atomic_long gen, done;
static long job_n;

static void *
worker(void *arg)
{
	long id = (long)arg, seen = 0, spins;

	for (;;) {
		for (spins = 0; atomic_load(&gen) == seen && spins < 200000;
		    spins++)
			;
		if (atomic_load(&gen) == seen) {
			pthread_mutex_lock(&mu);
			while (atomic_load(&gen) == seen)
				pthread_cond_wait(&cv, &mu);
			pthread_mutex_unlock(&mu);
		}
		seen = atomic_load(&gen);
		if (seen < 0)
			return NULL;
		add_range(job_n * id / NT, job_n * (id + 1) / NT);
		atomic_fetch_add(&done, 1);
	}
}

static void
pool_run(long n)
{
	job_n = n;
	atomic_store(&done, 0);
	pthread_mutex_lock(&mu);
	atomic_fetch_add(&gen, 1);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&mu);
	add_range(0, n / NT);
	while (atomic_load(&done) != NT - 1)
		;
}

/* libaoe's pool: one chunk a thread, as a small op gets. */
static long aoe_n;

static void
aoe_chunk(void *ctx, int64_t chunk, int tid)
{
	add_range(aoe_n * chunk / NT, aoe_n * (chunk + 1) / NT);
}

static void
aoe_pool_run(long n)
{
	aoe_n = n;
	aoe_parallel(NT, NT, aoe_chunk, NULL);
}

static int
cmp(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

/* Median and 90th percentile of t[0..n), sorted in place. */
static void
stats(double *t, int n, double *med, double *p90)
{
	qsort(t, n, sizeof(double), cmp);
	*med = t[n / 2];
	*p90 = t[(n * 9 + 9) / 10 - 1];
}

int
main(int argc, char **argv)
{
	static const long sizes[] = { 256, 4096, 65536, 1048576 };
	int iters = argc > 1 ? atoi(argv[1]) : 2000, k, it;
	double *t, t0, r[4][2][4];
	pthread_t th[NT];
	long i;

	if (iters < 1)
		iters = 1;
	t = calloc((size_t)iters, sizeof(double));
	a = calloc(1 << 20, 4);
	b = calloc(1 << 20, 4);
	c = calloc(1 << 20, 4);
	for (i = 1; i < NT; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	/* Every runtime in turn, OpenMP last (see above). */
	for (k = 0; k < 4; k++) {
		long n = sizes[k];
		for (it = 0; it < iters; it++) {
			t0 = now_us();
			add_range(0, n);
			t[it] = now_us() - t0;
		}
		stats(t, iters, &r[k][0][0], &r[k][1][0]);
		for (it = 0; it < iters; it++) {
			t0 = now_us();
			pool_run(n);
			t[it] = now_us() - t0;
		}
		stats(t, iters, &r[k][0][2], &r[k][1][2]);
	}
	for (k = 0; k < 4; k++) {
		long n = sizes[k];
		for (it = 0; it < iters; it++) {
			t0 = now_us();
			aoe_pool_run(n);
			t[it] = now_us() - t0;
		}
		stats(t, iters, &r[k][0][3], &r[k][1][3]);
	}
	for (k = 0; k < 4; k++) {
		long n = sizes[k];
		for (it = 0; it < iters; it++) {
			t0 = now_us();
#pragma omp parallel for num_threads(NT) schedule(static)
			for (long j = 0; j < NT; j++)
				add_range(n * j / NT, n * (j + 1) / NT);
			t[it] = now_us() - t0;
		}
		stats(t, iters, &r[k][0][1], &r[k][1][1]);
	}
	printf("%-10s %-6s %10s %10s %10s %10s   (microseconds, %d threads, "
	    "%d iterations)\n", "elements", "stat", "serial", "openmp",
	    "pthread", "libaoe", NT, iters);
	for (k = 0; k < 4; k++)
		for (i = 0; i < 2; i++)
			printf("%-10ld %-6s %10.2f %10.2f %10.2f %10.2f\n",
			    sizes[k], i ? "p90" : "median", r[k][i][0],
			    r[k][i][1], r[k][i][2], r[k][i][3]);
	return 0;
}
