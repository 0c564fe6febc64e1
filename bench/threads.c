/*
 * threads.c - what a parallel region costs on this machine: OpenMP (as
 * libaoe uses) against a small pthread pool, for the tiny ops (an add of a
 * few thousand floats) where dispatch overhead matters most.
 *
 * usage: threads [iterations]      (build: make -C bench threads)
 *
 * Prints, for each runtime and element count, the median time of one
 * parallel elementwise add over 2 threads, and the serial time.  The pool
 * is timed before OpenMP's workers exist, since their idle spinning would
 * take the second core from the pool's worker.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

static int
cmp(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;

	return p < q ? -1 : p > q;
}

int
main(int argc, char **argv)
{
	static const long sizes[] = { 256, 4096, 65536, 1048576 };
	int iters = argc > 1 ? atoi(argv[1]) : 2000, k, it;
	double *t = calloc((size_t)iters, sizeof(double)), t0;
	pthread_t th[NT];
	long i;

	a = calloc(1 << 20, 4);
	b = calloc(1 << 20, 4);
	c = calloc(1 << 20, 4);
	for (i = 1; i < NT; i++)
		pthread_create(&th[i], NULL, worker, (void *)i);
	printf("%-10s %12s %12s %12s\n", "elements", "serial_us", "openmp_us",
	    "pool_us");
	for (k = 0; k < 4; k++) {
		long n = sizes[k];
		double s, o, p;

		for (it = 0; it < iters; it++) {
			t0 = now_us();
			add_range(0, n);
			t[it] = now_us() - t0;
		}
		qsort(t, iters, sizeof(double), cmp);
		s = t[iters / 2];
		for (it = 0; it < iters; it++) {
			t0 = now_us();
			pool_run(n);
			t[it] = now_us() - t0;
		}
		qsort(t, iters, sizeof(double), cmp);
		p = t[iters / 2];
		for (it = 0; it < iters; it++) {
			t0 = now_us();
#pragma omp parallel for num_threads(NT) schedule(static)
			for (long j = 0; j < NT; j++)
				add_range(n * j / NT, n * (j + 1) / NT);
			t[it] = now_us() - t0;
		}
		qsort(t, iters, sizeof(double), cmp);
		o = t[iters / 2];
		printf("%-10ld %12.2f %12.2f %12.2f\n", n, s, o, p);
	}
	return 0;
}
