/*
 * bench.h - what the micro-benchmarks share: a clock, a seeded filler and
 * a comparison for qsort of doubles (for medians).
 */
#ifndef AOE_BENCH_H
#define AOE_BENCH_H

#include <stdint.h>
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
#endif

#endif
