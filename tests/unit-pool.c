/*
 * unit-pool.c - the thread pool (lib/base/pool.c): every chunk runs exactly
 * once, thread numbers stay below the thread count and are never shared
 * by two chunks at once, nested loops run inline, thousands of jobs in a
 * row hand over cleanly, two host threads may call it at once, a
 * fork() child gets a pool of its own, and each thread starts at its own
 * share of the chunks; and the probe of aoe_cores_far().
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"

static int nt, nfail;

static void
ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++nt, what);
	if (!cond)
		nfail++;
}

struct job {
	int64_t n;
	int nthreads;
	_Atomic int *hits;		/* per chunk */
	_Atomic int busy[64];		/* per tid: chunks running now */
	_Atomic int bad;		/* a tid out of range or shared */
	_Atomic int64_t sum;
	int nest;			/* run a nested loop in each chunk */
};

static void
inner(void *ctx, int64_t c, int tid)
{
	struct job *j = ctx;

	if (tid != 0)
		atomic_store(&j->bad, 1);
	atomic_fetch_add(&j->sum, c);
}

static void
chunk(void *ctx, int64_t c, int tid)
{
	struct job *j = ctx;

	if (tid < 0 || tid >= j->nthreads || atomic_fetch_add(&j->busy[tid],
	    1) != 0)
		atomic_store(&j->bad, 1);
	atomic_fetch_add(&j->hits[c], 1);
	if (j->nest) {
		struct job in;
		memset(&in, 0, sizeof(in));
		aoe_parallel(2, 4, inner, &in);
		if (atomic_load(&in.sum) != 6 || atomic_load(&in.bad))
			atomic_store(&j->bad, 1);
	}
	if (tid >= 0 && tid < 64)
		atomic_fetch_sub(&j->busy[tid], 1);
}

/* Run one loop; 1 if every chunk ran once and the tids were right. */
static int
run(int nthreads, int64_t n, int nest)
{
	struct job j;
	int64_t i;
	int good;

	memset(&j, 0, sizeof(j));
	j.n = n;
	j.nthreads = nthreads;
	j.nest = nest;
	j.hits = calloc((size_t)(n > 0 ? n : 1), sizeof(*j.hits));
	aoe_parallel(nthreads, n, chunk, &j);
	good = !atomic_load(&j.bad);
	for (i = 0; i < n; i++)
		if (atomic_load(&j.hits[i]) != 1)
			good = 0;
	free(j.hits);
	return good;
}

static void *
host(void *arg)
{
	int i, good = 1;

	(void)arg;
	for (i = 0; i < 2000; i++)
		good &= run(2, 1 + i % 37, 0);
	return (void *)(intptr_t)good;
}

/*
 * Shares: the caller holds chunk 0 until the worker has started a chunk
 * (two seconds at most), so the worker's first chunk shows where it
 * begins: at its own share, chunk 2 of 4, not at the next in line (1).
 */
struct share_job {
	_Atomic int64_t first[2];	/* the first chunk each tid ran */
	_Atomic int worker_in;
};

static void
share_chunk(void *ctx, int64_t c, int tid)
{
	struct share_job *j = ctx;
	int64_t none = -1;
	int i;

	if (tid < 2)
		atomic_compare_exchange_strong(&j->first[tid], &none, c);
	if (tid == 1)
		atomic_store(&j->worker_in, 1);
	if (c == 0 && tid == 0)
		for (i = 0; i < 2000 && !atomic_load(&j->worker_in); i++)
			usleep(1000);
}

int
main(void)
{
	static const int64_t sizes[] = { 0, 1, 2, 3, 7, 64, 1000, 100003 };
	char what[128];
	pthread_t th;
	void *res;
	int t, k, i, good, st;
	pid_t pid;

	printf("1..17\n");
	for (t = 1; t <= 4; t += 3) {
		good = 1;
		for (k = 0; k < 8; k++)
			good &= run(t, sizes[k], 0);
		snprintf(what, sizeof(what), "%d thread%s: every chunk runs "
		    "once, tids in range and never shared", t, t > 1 ? "s" : "");
		ok(good, what);
	}
	good = 1;
	for (k = 0; k < 8; k++)
		good &= run(2, sizes[k], 0);
	ok(good, "2 threads: every chunk runs once, tids in range");
	ok(run(2, 500, 1), "a loop inside a chunk runs inline on that thread");
	good = 1;
	for (i = 0; i < 20000; i++)
		good &= run(2, 1 + i % 5, 0);
	ok(good, "20000 small jobs in a row hand over cleanly");
	good = 1;
	for (i = 0; i < 200; i++)
		good &= run(1 + i % 4, 1 + i % 9, 0);
	ok(good, "thread counts changing from job to job");
	ok(run(64, 10000, 0), "64 threads");
	ok(run(1000, 10, 0), "a thread count beyond the pool's limit is capped");

	/* Two host threads calling at once: one runs inline, both correct. */
	pthread_create(&th, NULL, host, NULL);
	good = (int)(intptr_t)host(NULL);
	pthread_join(th, &res);
	ok(good && (intptr_t)res, "two host threads at once");

	/* A fork() child has no workers of the parent's: it starts its own. */
	ok(run(2, 100, 0), "the pool runs before a fork");
	fflush(stdout);
	if ((pid = fork()) == 0) {
		int g = 1;
		for (i = 0; i < 1000; i++)
			g &= run(2, 1 + i % 17, 0);
		_exit(g ? 0 : 1);
	}
	ok(pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
	    WEXITSTATUS(st) == 0, "a fork child runs parallel loops");
	ok(run(2, 100, 0), "the parent's pool still runs after the fork");

	/* Workers that have gone to sleep wake for the next job. */
	usleep(20000);
	good = 1;
	for (i = 0; i < 100; i++) {
		good &= run(2, 8, 0);
		if (i % 10 == 0)
			usleep(2000);
	}
	ok(good, "sleeping workers wake for new jobs");
	{
		struct share_job j;

		atomic_init(&j.first[0], -1);
		atomic_init(&j.first[1], -1);
		atomic_init(&j.worker_in, 0);
		aoe_parallel(2, 4, share_chunk, &j);
		if (atomic_load(&j.first[1]) < 0)
			printf("ok %d # skip the worker did not wake in 2 s\n",
			    ++nt);
		else
			ok(atomic_load(&j.first[0]) == 0 &&
			    atomic_load(&j.first[1]) == 2, "each thread "
			    "starts at its own share of the chunks");
	}
	ok(aoe_chunk_lo(10, 3, 0) == 0 && aoe_chunk_lo(10, 3, 1) == 3 &&
	    aoe_chunk_lo(10, 3, 2) == 6 && aoe_chunk_lo(10, 3, 3) == 10,
	    "aoe_chunk_lo cuts 10 items into 3, 3 and 4");
	ok(aoe_chunk_lo(INT64_MAX / 2, 7, 7) == INT64_MAX / 2,
	    "aoe_chunk_lo does not overflow on huge counts");
	{
		/* Each in a child: the answer is kept for the process. */
		static const char *const env[] = { "1", "0", NULL, NULL };
		static const int want[] = { 1, 0, 0, -1 };
		double t0;
		int r, bad = 0;
		for (i = 0; i < 4; i++) {
			if ((pid = fork()) == 0) {
				cpu_set_t one;
				if (env[i] != NULL)
					setenv("AOE_FAR_CORES", env[i], 1);
				else
					unsetenv("AOE_FAR_CORES");
				if (i == 2) {
					/* One CPU: near, without waiting. */
					CPU_ZERO(&one);
					CPU_SET(sched_getcpu(), &one);
					sched_setaffinity(0, sizeof(one), &one);
				}
				t0 = aoe_now_us();
				r = aoe_cores_far();
				_exit(r != 0 && r != 1 ? 3 : (want[i] >= 0 &&
				    r != want[i]) || (i == 2 && aoe_now_us() -
				    t0 > 1000) || aoe_cores_far() != r ? 2 :
				    0);
			}
			if (pid < 0 || waitpid(pid, &st, 0) != pid ||
			    !WIFEXITED(st) || WEXITSTATUS(st) != 0)
				bad++;
		}
		ok(bad == 0, "aoe_cores_far: AOE_FAR_CORES 1 and 0 say it, one "
		    "CPU is near at once, a measurement is 0 or 1 and kept");
	}
	return nfail != 0;
}
