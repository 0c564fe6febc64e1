/*
 * unit-pw - TAP property tests of the pointwise (1x1) Conv (lib/kernels/
 * k_conv.c: algo 1, the packed GEMM with its weights packed in prepare and
 * the epilogue in its store; and whatever else a schedule picks) against a
 * plain double-precision reference: random shapes whose channel counts
 * are and are not multiples of 8 and 16, output planes from 1x1 to 60x60,
 * strides 1 and 2 (a 1x1 stride-2 Conv is not algo 1's), one or two
 * images, a bias or none, with every fused epilogue (none, Relu, Clip as
 * ReLU6, Sigmoid, HardSwish, SiLU, GELU in both forms, and a residual),
 * run at 1 and 2 threads under the default schedule and under schedules
 * sampled from the node's search space.  Also: the default micro-kernel
 * shape of a pointwise Conv is the one whose tiles waste the fewest lanes
 * (pw_shape), and the space shows it as the default of mr and nr.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"
#include "kernel.h"
#include "onenode.h"

static const char *const aname[] = { "none", "relu", "relu6", "sigmoid",
    "hardswish", "silu", "gelu", "gelu_tanh" };

static double
act_ref(int kind, double x)
{
	switch (kind) {
	case AOE_ACT_RELU:
		return x < 0 ? 0 : x;
	case AOE_ACT_CLIP:
		return x < 0 ? 0 : x > 6 ? 6 : x;
	case AOE_ACT_SIGMOID:
		return 1 / (1 + exp(-x));
	case AOE_ACT_HARDSWISH: {
		double h = x / 6 + .5;
		return x * (h < 0 ? 0 : h > 1 ? 1 : h);
	}
	case AOE_ACT_SILU:
		return x / (1 + exp(-x));
	case AOE_ACT_GELU:
		return 0.5 * x * (1 + erf(x / sqrt(2)));
	case AOE_ACT_GELU_TANH:
		return 0.5 * x * (1 + tanh(sqrt(2 / M_PI) *
		    (x + 0.044715 * x * x * x)));
	}
	return x;
}

typedef struct pcase {
	int64_t n, c, m, h, w, s;
	int bias, act, res;
} pcase;

/* A 1x1 Conv node for case p, prepared, inputs filled. */
static int
pw_node(tg *t, const pcase *p)
{
	const int64_t xd[] = { p->n, p->c, p->h, p->w };
	const int64_t wd[] = { p->m, p->c, 1, 1 }, bd[] = { p->m };
	const int64_t ks[] = { 1, 1 }, st[] = { p->s, p->s };
	int64_t oh = (p->h - 1) / p->s + 1, ow = (p->w - 1) / p->s + 1;
	const int64_t rd[] = { p->n, p->m, oh, ow };

	tg_new(t, "pw");
	tg_input(t, 0, 4, xd);
	tg_input(t, 1, 4, wd);
	if (p->bias || p->res)
		tg_input(t, 1, 1, bd);
	if (!p->bias && p->res)
		memset(data(t, 2), 0, sizeof(float) * (size_t)p->m);
	if (p->res)
		tg_input(t, 0, 4, rd);
	tg_node(t, "Conv");
	attr_is(t, "kernel_shape", 2, ks);
	attr_is(t, "strides", 2, st);
	if (p->res)
		attr_i(t, "_aoe_add", 3);
	attr_i(t, "_aoe_act", p->act);
	if (p->act == AOE_ACT_CLIP) {
		attr_f(t, "_aoe_act_lo", 0);
		attr_f(t, "_aoe_act_hi", 6);
	}
	return tg_prepare(t);
}

/* The output against the reference: 1 if every value is close. */
static int
pw_matches(tg *t, const pcase *p, const char *what)
{
	const float *x = data(t, 0), *w = data(t, 1);
	const float *b = p->bias || p->res ? data(t, 2) : NULL;
	const float *r = p->res ? data(t, 3) : NULL;
	const float *y = t->g->tensors[t->y]->data;
	int64_t oh = (p->h - 1) / p->s + 1, ow = (p->w - 1) / p->s + 1;
	int64_t i, o, k, u, v;

	for (i = 0; i < p->n; i++)
		for (o = 0; o < p->m; o++)
			for (u = 0; u < oh; u++)
				for (v = 0; v < ow; v++) {
					int64_t at = ((i * p->m + o) * oh + u) *
					    ow + v;
					double s = b ? b[o] : 0, want, tol;
					for (k = 0; k < p->c; k++)
						s += (double)w[o * p->c + k] *
						    x[((i * p->c + k) * p->h +
						    u * p->s) * p->w + v * p->s];
					if (r)
						s += r[at];
					want = act_ref(p->act, s);
					tol = 1e-5 * (p->c + 4) * (1 +
					    fabs(want));
					if (!(fabs(y[at] - want) <= tol)) {
						printf("# %s: at n%lld c%lld "
						    "(%lld,%lld): %g, want "
						    "%g\n", what, (long long)i,
						    (long long)o, (long long)u,
						    (long long)v, y[at], want);
						return 0;
					}
				}
	return 1;
}

/* Run node t at 1 and 2 threads and check each. */
static int
runs_match(tg *t, const pcase *p, const char *what)
{
	int th;

	for (th = 1; th <= 2; th++) {
		opts.nthreads = th;
		memset(t->g->tensors[t->y]->data, 0xff, sizeof(float) *
		    (size_t)numel_y(t));
		if (aoe_graph_run(t->g, &opts) < 0 || !pw_matches(t, p, what))
			return 0;
	}
	return 1;
}

static int64_t
irand(int64_t lo, int64_t hi)
{
	int64_t v = lo + (int64_t)((frand() + 1) / 2 * (double)(hi - lo + 1));

	return v > hi ? hi : v;
}

/* Random cases: each epilogue, strides 1 and 2, sampled schedules. */
static void
random_cases(void)
{
	static const int64_t chans[] = { 1, 3, 7, 8, 13, 16, 17, 24, 31, 33,
	    40, 48, 67 };
	int act, rep;
	uint64_t seed = 7;

	for (act = AOE_ACT_NONE; act <= AOE_ACT_GELU_TANH; act++)
		for (rep = 0; rep < 6; rep++) {
			pcase p;
			tg t;
			aoe_space sp;
			aoe_sched s;
			char what[160];
			int good = 1, j, tried = 0, big = rep % 3 == 2;

			p.n = rep == 4 ? 2 : 1;
			p.c = chans[irand(0, 12)];
			p.m = chans[irand(0, 12)];
			p.h = big ? irand(40, 60) : irand(1, 9);
			p.w = big ? irand(40, 60) : irand(1, 9);
			p.s = rep % 2 ? 2 : 1;
			p.bias = rep != 1;
			p.res = rep == 3;
			p.act = act;
			snprintf(what, sizeof(what), "1x1/%lld %lld>%lld @%lldx"
			    "%lld n%lld, %s%s%s", (long long)p.s,
			    (long long)p.c, (long long)p.m, (long long)p.h,
			    (long long)p.w, (long long)p.n, aname[act],
			    p.bias ? ", bias" : "", p.res ? ", residual" : "");
			if (pw_node(&t, &p) < 0) {
				ok(0, "%s: prepares", what);
				aoe_graph_free(t.g);
				continue;
			}
			good = runs_match(&t, &p, what);
			if (good && aoe_space_for(t.g, t.n, &sp) == 0)
				for (j = 0; j < 5 && good; j++) {
					if (aoe_space_sample(&sp, &seed, &s) < 0 ||
					    aoe_space_apply(t.g, t.n, &s) < 0) {
						good = 0;
						break;
					}
					tried++;
					if (!runs_match(&t, &p, what)) {
						printf("# schedule algo=%lld "
						    "mr=%lld nr=%lld\n",
						    (long long)aoe_sched_get(&s,
						    "algo", 0),
						    (long long)aoe_sched_get(&s,
						    "mr", 0),
						    (long long)aoe_sched_get(&s,
						    "nr", 0));
						good = 0;
					}
				}
			ok(good && tried == 5, "%s: matches the reference at 1 "
			    "and 2 threads, default and 5 sampled schedules",
			    what);
			aoe_graph_free(t.g);
		}
}

/* The default shape of a pointwise Conv and the space's defaults. */
static void
default_shape(int64_t c, int64_t m, int64_t hw, int64_t mr512,
    int64_t nr512, int64_t mr2, int64_t nr2)
{
	pcase p = { 1, c, m, hw, hw, 1, 1, AOE_ACT_CLIP, 0 };
	int w = aoe_cpu_avx512();
	int64_t mr = w ? mr512 : mr2, nr = w ? nr512 : nr2;
	aoe_space sp;
	tg t;

	if (pw_node(&t, &p) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "pointwise %lld>%lld @%lld: space", (long long)c,
		    (long long)m, (long long)hw);
		aoe_graph_free(t.g);
		return;
	}
	ok(aoe_sched_get(&t.n->sched, "algo", 0) == 1 &&
	    aoe_sched_get(&t.n->sched, "mr", 0) == mr &&
	    aoe_sched_get(&t.n->sched, "nr", 0) == nr &&
	    aoe_sched_get(&sp.def, "mr", 0) == mr &&
	    aoe_sched_get(&sp.def, "nr", 0) == nr,
	    "pointwise %lld>%lld @%lldx%lld (%s): default algo 1, %lldx%lld, "
	    "in the schedule and the space (got %lldx%lld, space %lldx%lld)",
	    (long long)c, (long long)m, (long long)hw, (long long)hw,
	    w ? "avx512" : "avx2",
	    (long long)mr, (long long)nr,
	    (long long)aoe_sched_get(&t.n->sched, "mr", 0),
	    (long long)aoe_sched_get(&t.n->sched, "nr", 0),
	    (long long)aoe_sched_get(&sp.def, "mr", 0),
	    (long long)aoe_sched_get(&sp.def, "nr", 0));
	ok(runs_match(&t, &p, "default shape"), "pointwise %lld>%lld @%lld "
	    "matches the reference", (long long)c, (long long)m,
	    (long long)hw);
	aoe_graph_free(t.g);
}

/*
 * Stride 2 by the subsampled input (k_conv.c, sub_row2): eight outputs a
 * vector, each reading one value past the last it keeps, then a scalar
 * tail; input widths around multiples of 16 take the vectors alone, the
 * tail alone and both.
 */
static void
strided_widths(void)
{
	static const int64_t ws[] = { 1, 2, 15, 16, 17, 31, 32, 33, 47, 49 };
	size_t i;

	for (i = 0; i < sizeof(ws) / sizeof(ws[0]); i++) {
		pcase p = { 1, 5, 9, 3, ws[i], 2, 1, AOE_ACT_RELU, 0 };
		tg t;

		if (pw_node(&t, &p) < 0) {
			ok(0, "1x1/2 5>9 @3x%lld: prepares", (long long)ws[i]);
			aoe_graph_free(t.g);
			continue;
		}
		ok(runs_match(&t, &p, "strided width"), "1x1/2 5>9 @3x%lld "
		    "matches the reference", (long long)ws[i]);
		aoe_graph_free(t.g);
	}
}

int
main(void)
{
	aoe_run_opts_init(&opts);
	opts.use_bank = 0;
	random_cases();
	strided_widths();
	/*
	 * Rows 96: 12 on AVX-512 (14 leaves 2 of 98 idle), 6 on AVX2 from
	 * 64 input channels, 4x24 there from 32 or fewer (shallow).
	 */
	default_shape(64, 96, 48, 12, 32, 6, 16);
	default_shape(16, 96, 48, 12, 32, 4, 24);
	default_shape(32, 96, 48, 12, 32, 4, 24);
	/* Rows 16: 8x48 (14 + 2); 4x24 on AVX2 (6 leaves 2 of 18). */
	default_shape(64, 16, 48, 8, 48, 4, 24);
	/* Rows 28: the ISA's default fits (on AVX2, 6 leaves 2 of 30). */
	default_shape(64, 28, 48, 14, 32, 4, 24);
	/* Rows 6 from 16 channels: 4x24 would waste a third of a tile. */
	default_shape(16, 6, 48, 6, 64, 6, 16);
	/* One output position: a matrix-vector product, the default. */
	default_shape(16, 16, 1, 14, 32, 6, 16);
	return done_testing();
}
