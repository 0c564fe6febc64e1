/*
 * simclock.c - a simulated two-core clock for aoe-run, for measuring how
 * well the kernels split their work between threads on a machine whose
 * other core is busy (a loaded 2-vCPU host, where a real 2-thread run
 * mostly measures the neighbours).
 *
 * Linked into aoe-run with -Wl,--wrap=aoe_parallel,--wrap=aoe_now_us
 * (make -C bench aoe-run-sim).  With AOE_SIM set, every parallel loop
 * (aoe_parallel(), lib/base/pool.c) runs on the calling thread, chunk by
 * chunk: each chunk is timed and given to the simulated thread that is
 * free first, as the pool's workers claim chunks as they come; the loop's
 * simulated wall time is the busiest thread's.  aoe_now_us() then runs
 * slow by the difference between the loops' real and simulated times, so
 * that aoe-run's latency line and --profile report the simulated time.
 * Without AOE_SIM the program is aoe-run.
 *
 * What it leaves out: the cost of waking a worker and of joining (about
 * 1 to 2.5 us a loop here, bench/threads), and the caches: a second
 * thread's chunks find in this core's caches what the first one's left
 * there (shared weights, say), where a real second core would read them
 * again from L3.  It shows partitions that waste work (duplicated
 * packing, uneven pieces, serial passes), not bandwidth limits.
 * AOE_SIM_JOIN_US=t adds t microseconds to every split loop, for the
 * fork/join's cost; AOE_SIM_COUNT prints at exit how many loops were
 * split and how many serial stretches between them outlasted the
 * workers' 100 us spin (each of which costs a futex wake-up).
 *
 *   AOE_SIM=1 bench/aoe-run-sim --no-bank --threads 2 --runs 40 model.onnx
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef void (*chunk_fn)(void *, int64_t, int);

void __real_aoe_parallel(int, int64_t, chunk_fn, void *);
double __real_aoe_now_us(void);
void __wrap_aoe_parallel(int, int64_t, chunk_fn, void *);
double __wrap_aoe_now_us(void);

#define SIM_MAX 64

static int sim_on = -1, sim_depth;
static double slow_us;		/* real minus simulated time so far */
static double join_us = -1;	/* AOE_SIM_JOIN_US: added to each loop */
static long nloops;		/* loops split between threads */
static long ngaps;		/* serial stretches over 100 us between them */
static double gap_us, last_end;

static void
count_print(void)
{
	fprintf(stderr, "simclock: %ld parallel loops, %ld serial stretches "
	    "over 100 us between them (%.0f us)\n", nloops, ngaps, gap_us);
}

double
__wrap_aoe_now_us(void)
{
	return __real_aoe_now_us() - slow_us;
}

void
__wrap_aoe_parallel(int nt, int64_t n, chunk_fn fn, void *ctx)
{
	double load[SIM_MAX] = { 0 }, t0, c0, most = 0;
	int64_t i;
	int j, b;

	if (sim_on < 0)
		sim_on = getenv("AOE_SIM") != NULL;
	if (sim_depth > 0) {
		/* A nested loop runs inline, as in the pool. */
		for (i = 0; i < n; i++)
			fn(ctx, i, 0);
		return;
	}
	if (!sim_on) {
		__real_aoe_parallel(nt, n, fn, ctx);
		return;
	}
	if (nt > SIM_MAX)
		nt = SIM_MAX;
	sim_depth++;
	if (nt < 2 || n < 2) {
		for (i = 0; i < n; i++)
			fn(ctx, i, 0);
		sim_depth--;
		return;
	}
	t0 = __real_aoe_now_us();
	/* A serial stretch longer than the workers spin puts them to sleep. */
	if (last_end > 0 && t0 - last_end > 100) {
		ngaps++;
		gap_us += t0 - last_end;
	}
	for (i = 0; i < n; i++) {
		for (b = 0, j = 1; j < nt; j++)
			if (load[j] < load[b])
				b = j;
		c0 = __real_aoe_now_us();
		fn(ctx, i, b);
		load[b] += __real_aoe_now_us() - c0;
	}
	sim_depth--;
	for (j = 0; j < nt; j++)
		if (load[j] > most)
			most = load[j];
	/* A fork/join's own cost, when AOE_SIM_JOIN_US says. */
	if (join_us < 0) {
		const char *e = getenv("AOE_SIM_JOIN_US");
		join_us = e ? atof(e) : 0;
		if (getenv("AOE_SIM_COUNT"))
			atexit(count_print);
	}
	nloops++;
	most += join_us;
	last_end = __real_aoe_now_us();
	slow_us += last_end - t0 - most;
}
