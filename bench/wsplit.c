/*
 * wsplit - what it costs two threads to write one output between them,
 * by how they split it.  A kernel that splits an NCHW output by pixels
 * (rows, tiles, columns) gives each thread a piece of every channel's
 * plane, so the two threads' stores interleave along the buffer; one
 * that splits it by channels gives each a contiguous half.
 *
 *   bench/wsplit [-r rounds] [planes plane_floats]
 *
 * Each round, both threads start together (a barrier) and write their
 * part of a buffer of planes x plane_floats floats (default 64 x 3025,
 * the output of a 64-channel 55x55 convolution), the same part round
 * after round (each thread's lines stay in its own cache), in each of
 * these ways, one after the other:
 * "pixels" (thread t the t-th half of every plane), "channels" (thread
 * t the t-th half of the planes), "pixels, other buffers" (each thread
 * the same interleaved pattern but in a buffer of its own), and "pixels,
 * one thread" (thread 0 alone, its half of every plane).  Prints each
 * way's median time a round over the threads' slower one, and its ratio
 * to "channels".
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"

enum { PIXELS, CHANNELS, OWN, ALONE, NWAYS };

static const char *const wname[NWAYS] = { "pixels", "channels",
    "pixels, other buffers", "pixels, one thread" };
static float *buf[2];
static int64_t np = 64, pf = 3025;
static int rounds = 200;
static pthread_barrier_t bar;
static double took[NWAYS][2][1024];

static void
fill(float *b, int64_t lo, int64_t hi, float v)
{
	__m256 x = _mm256_set1_ps(v);
	int64_t i = lo;

	for (; i + 8 <= hi; i += 8)
		_mm256_storeu_ps(b + i, x);
	for (; i < hi; i++)
		b[i] = v;
}

/* Thread t's part under way w. */
static void
part(int w, int t)
{
	int64_t c, h = pf / 2;

	if (w == CHANNELS) {
		fill(buf[0], t * (np / 2) * pf, (t ? np : np / 2) * pf, 1);
		return;
	}
	if (w == ALONE && t == 1)
		return;
	for (c = 0; c < np; c++)
		fill(buf[w == OWN ? t : 0], c * pf + (t ? h : 0),
		    c * pf + (t ? pf : h), (float)c);
}

static void *
run(void *arg)
{
	int t = (int)(intptr_t)arg, r, w;

	for (w = 0; w < NWAYS; w++)
		for (r = 0; r < rounds; r++) {
			double t0;
			pthread_barrier_wait(&bar);
			t0 = now();
			part(w, t);
			took[w][t][r] = now() - t0;
			pthread_barrier_wait(&bar);
		}
	return NULL;
}

int
main(int argc, char **argv)
{
	double m[NWAYS];
	pthread_t th;
	char *end;
	int c, w, r;

	while ((c = getopt(argc, argv, "r:")) != -1) {
		if (c != 'r')
			goto usage;
		rounds = (int)strtol(optarg, &end, 10);
		if (*end != '\0' || rounds < 1 || rounds > 1024)
			goto usage;
	}
	if (argc - optind == 2) {
		np = strtoll(argv[optind], &end, 10);
		if (*end != '\0' || np < 2 || np > 4096)
			goto usage;
		pf = strtoll(argv[optind + 1], &end, 10);
		if (*end != '\0' || pf < 16 || pf > (1 << 20))
			goto usage;
	} else if (argc != optind)
		goto usage;
	for (c = 0; c < 2; c++) {
		buf[c] = aligned_alloc(64, ((size_t)(np * pf) * 4 + 63) &
		    ~(size_t)63);
		if (buf[c] == NULL)
			return 1;
		memset(buf[c], 0, (size_t)(np * pf) * 4);
	}
	pthread_barrier_init(&bar, NULL, 2);
	pthread_create(&th, NULL, run, (void *)(intptr_t)1);
	run((void *)(intptr_t)0);
	pthread_join(th, NULL);
	printf("# wsplit: %lld planes of %lld floats, two threads, %d "
	    "rounds; median of the slower thread's time\n", (long long)np,
	    (long long)pf, rounds);
	for (w = 0; w < NWAYS; w++) {
		double s[1024];
		for (r = 0; r < rounds; r++)
			s[r] = took[w][0][r] > took[w][1][r] ? took[w][0][r] :
			    took[w][1][r];
		qsort(s, (size_t)rounds, sizeof(double), cmpd);
		m[w] = s[rounds / 2];
	}
	for (w = 0; w < NWAYS; w++)
		printf("%-24s %8.2f us  x%.2f\n", wname[w], m[w] * 1e6,
		    m[w] / m[CHANNELS]);
	return 0;
usage:
	fprintf(stderr, "usage: wsplit [-r rounds] [planes plane_floats]\n");
	return 2;
}
