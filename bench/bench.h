/*
 * bench.h - what the micro-benchmarks share: a clock, a seeded filler and
 * a comparison for qsort of doubles (for medians).
 */
#ifndef AOE_BENCH_H
#define AOE_BENCH_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The clock now() reads: wall time, or the process's CPU time (-c). */
static clockid_t bench_clk = CLOCK_MONOTONIC;

static double
now(void)
{
	struct timespec ts;

	clock_gettime(bench_clk, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* p[0..n) uniform in [lo, hi), from one xorshift stream (repeatable). */
static void
fill_range(float *p, int64_t n, double lo, double hi)
{
	static uint64_t rs = 12345;

	for (int64_t i = 0; i < n; i++) {
		rs ^= rs << 13;
		rs ^= rs >> 7;
		rs ^= rs << 17;
		p[i] = (float)(lo + (double)(rs >> 11) / 9007199254740992.0 *
		    (hi - lo));
	}
}

static int
cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

#ifdef AOE_H
/*
 * Declare tensor name of g as a float input, or as a constant filled by
 * fill_range(lo, hi); returns its index.
 */
static inline int
bench_input(aoe_graph *g, const char *name, int konst, int ndim,
    const int64_t *dims, double lo, double hi)
{
	int i = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[i];

	aoe_tensor_set(t, AOE_F32, ndim, dims);
	if (konst) {
		t->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(t);
		fill_range(t->data, aoe_tensor_numel(t), lo, hi);
	} else {
		t->kind = AOE_T_INPUT;
		g->inputs[g->ninputs++] = i;
	}
	return i;
}

/*
 * The variants of a node's schedule that convb and poolb interleave:
 * each of args[0..n) a comma-separated list of knob=value over the
 * node's own schedule base ("def" alone: base).  Fills sc and name (at
 * most max) and returns their count, at least 1 ("def" when n is 0);
 * -1 for an item that is not knob=value with an integer value.
 */
static inline int
bench_variants(char **args, int n, const aoe_sched *base, aoe_sched *sc,
    const char **name, int max)
{
	int nv;

	for (nv = 0; nv < n && nv < max; nv++) {
		char *p, *end, *save = NULL, *dup = strdup(args[nv]);
		long long v;

		sc[nv] = *base;
		name[nv] = args[nv];
		for (p = strtok_r(dup, ",", &save); p != NULL;
		    p = strtok_r(NULL, ",", &save)) {
			char *eq = strchr(p, '=');
			if (strcmp(p, "def") == 0)
				continue;
			if (eq == NULL) {
				free(dup);
				return -1;
			}
			*eq = '\0';
			errno = 0;
			v = strtoll(eq + 1, &end, 10);
			if (errno != 0 || end == eq + 1 || *end != '\0') {
				free(dup);
				return -1;
			}
			aoe_sched_set(&sc[nv], p, (int64_t)v);
		}
		free(dup);
	}
	if (nv == 0) {
		sc[0] = *base;
		name[nv++] = "def";
	}
	return nv;
}

/* Seconds one run of g takes, by bench_clk (aoe's own wall clock). */
static inline double
bench_run(aoe_graph *g, const aoe_run_opts *o)
{
	double t0 = bench_clk == CLOCK_MONOTONIC ? aoe_now_us() * 1e-6 : now();

	if (aoe_graph_run(g, o) < 0)
		return -1;
	return (bench_clk == CLOCK_MONOTONIC ? aoe_now_us() * 1e-6 : now()) -
	    t0;
}

/*
 * The table of nv variants timed over rounds rounds (t[i][r] seconds;
 * sorted in place): each one's minimum and median, its rate at the
 * minimum (work units a second, in units of 1e9 called unit), and the
 * median of its time over the first variant's, round by round, which
 * shrugs off the load's drift.
 */
static inline void
bench_table(double (*t)[64], int nv, int rounds, const char **name,
    int width, double work, const char *unit)
{
	double rt[64], q[64];
	int i, r;

	for (i = 0; i < nv; i++) {
		for (r = 0; r < rounds; r++)
			q[r] = t[i][r] / t[0][r];
		qsort(q, (size_t)rounds, sizeof(double), cmpd);
		rt[i] = q[rounds / 2];
	}
	for (i = 0; i < nv; i++) {
		qsort(t[i], (size_t)rounds, sizeof(double), cmpd);
		printf("%-*s min %8.1f med %8.1f us %6.1f %s  x%.3f\n", width,
		    name[i], t[i][0] * 1e6, t[i][rounds / 2] * 1e6,
		    work / t[i][0] / 1e9, unit, rt[i]);
	}
}
#endif

#endif
