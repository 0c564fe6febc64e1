/*
 * unit-dwconv - TAP property tests of the depthwise convolution by rows
 * (lib/kernels/k_dwconv.c, Conv's algo 4 with dw_rows=1): over random
 * 2-D shapes (3x3 and 5x5 and odd kernels, strides 1, 2 and 3,
 * dilations, asymmetric pads, channel counts that are and are not
 * multiples of 8 and 16, depth multipliers, batches, planes narrower
 * than one vector) with the fused epilogues (none, Relu, Clip, Sigmoid,
 * HardSwish, a per-channel affine and a residual), at vector widths 8
 * and 16 and at 1 and 2 threads, the kernel matches a naive reference.
 * The register-blocked kernel (dw_rows=2) is tested the same way over
 * 3x3 and 5x5 kernels, strides 1 and 2, channels 1..67, any pads, its
 * pass shapes (dw_oh, dw_ow) and every epilogue (SiLU and GELU too).
 * The flat kernel (dw_rows=3) and the channels-in-lanes one (dw_rows=4,
 * any kernel up to 64 taps, strides 1 to 3, dilations, multipliers) are
 * tested the same way.  With DWCONV_BENCH set it also times the
 * MobileNet and EfficientNet layers under each kernel.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aoe.h"
#include "tap.h"
#include "kernel.h"
#include "onenode.h"
#include "convref.h"

typedef struct spec {
	int64_t n, c, mult, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
	int act, affine, add, bias;
} spec;

static void
geom_of(const spec *s, aoe_conv_geom *g)
{
	conv2d d = { s->n, s->c, 1, s->mult, s->h, s->w, s->kh, s->kw, s->sh,
	    s->sw, s->dh, s->dw, s->pt, s->pl, s->pb, s->pr };

	conv2d_geom(&d, g);
}

/*
 * The kernel run_case runs: reg = 0 the row kernel (dw_rows=1), 1 the
 * register-blocked one (dw_rows=2) at pass shape reg_oh, reg_ow, 2 the
 * flat one (dw_rows=3), 3 the channels-in-lanes one (dw_rows=4), 4 the
 * phase one (dw_rows=5).
 */
static int reg, reg_oh, reg_ow;

/*
 * dw_nt for dw_rows=2 and 4, cycled over the cases: -1 auto, 0 stores
 * through the caches, 1 staged and streamed (aoe_stage_put).
 */
static int case_nt, next_nt;

/* One case at vector width vw and nthreads threads; 1 if it matched. */
static int
run_case(const spec *s, int vw, int nthreads, double *maxerr)
{
	aoe_conv_geom g;
	aoe_act a;
	float *x, *w, *bias, *add, *y, *r, *ps = NULL, *pt = NULL;
	float guard[GUARD];
	int64_t ny;
	int ok_ = 1;

	geom_of(s, &g);
	ny = g.n * g.m * g.outsz;
	x = rnd(g.n * g.c * g.insz);
	w = rnd(g.m * g.ksz);
	bias = s->bias ? rnd(g.m) : NULL;
	add = s->add ? rnd(ny) : NULL;
	y = rnd_guarded(ny, guard);
	r = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
	memset(&a, 0, sizeof(a));
	a.kind = s->act < 7 ? actkind[s->act] : s->act;
	a.lo = a.kind == AOE_ACT_CLIP ? -0.25f : -FLT_MAX;
	a.hi = a.kind == AOE_ACT_CLIP ? 0.5f : FLT_MAX;
	if (s->affine) {
		a.ps = ps = rnd(g.m);
		a.pt = pt = rnd(g.m);
	}
	conv_reference(&g, x, w, bias, &a, add, r);
	case_nt = next_nt++ % 3 - 1;
	if (reg == 2) {
		if (aoe_dw_flat(&g, x, w, bias, &a, add, y, vw, nthreads) < 0)
			ok_ = 0;
	} else if (reg == 4) {
		if (aoe_dw_phase(&g, x, w, bias, &a, add, y, vw, case_nt,
		    nthreads) < 0)
			ok_ = 0;
	} else if (reg == 3) {
		if (aoe_dw_lanes(&g, x, w, bias, &a, add, y, vw, case_nt,
		    nthreads) < 0)
			ok_ = 0;
	} else if (reg ? aoe_dw_reg(&g, x, w, bias, &a, add, y, vw, reg_oh, reg_ow,
	    case_nt, nthreads) < 0 : aoe_dw_rows(&g, x, w, bias, &a, add, y, vw,
	    nthreads) < 0)
		ok_ = 0;
	*maxerr = INFINITY;
	ok_ = ok_ && same(y, r, ny, maxerr);
	ok_ = guard_intact(y, ny, guard) && ok_;
	free(x);
	free(w);
	free(bias);
	free(add);
	free(y);
	free(r);
	free(ps);
	free(pt);
	return ok_;
}

/* A case that did not match, for the TAP log. */
static void
print_mismatch(const spec *s, int vw, int th, double e)
{
	printf("# mismatch: n=%lld c=%lld x%lld %lldx%lld k=%lldx%lld "
	    "s=%lld,%lld d=%lld,%lld p=%lld,%lld,%lld,%lld act=%s affine=%d "
	    "add=%d bias=%d vw=%d threads=%d", (long long)s->n,
	    (long long)s->c, (long long)s->mult, (long long)s->h,
	    (long long)s->w, (long long)s->kh, (long long)s->kw,
	    (long long)s->sh, (long long)s->sw, (long long)s->dh,
	    (long long)s->dw, (long long)s->pt, (long long)s->pl,
	    (long long)s->pb, (long long)s->pr, actname[s->act], s->affine,
	    s->add, s->bias, vw, th);
	if (reg == 1)
		printf(" oh=%d ow=%d", reg_oh, reg_ow);
	if (reg == 1 || reg == 3 || reg == 4)
		printf(" nt=%d", case_nt);
	printf(" error %.3g\n", e);
}

/* Counts of a group of cases: run, mismatched, the worst error. */
typedef struct tally {
	int nc, bad;
	double worst;
} tally;

/* One case at vw and th threads into the tally t. */
static void
tally_case(tally *t, const spec *s, int vw, int th)
{
	double e;

	t->nc++;
	if (!run_case(s, vw, th, &e)) {
		t->bad++;
		print_mismatch(s, vw, th, e);
	}
	if (e > t->worst)
		t->worst = e;
}

/* One case at both vector widths and both thread counts. */
static void
tally_widths_threads(tally *t, const spec *s)
{
	int vw, th;

	for (vw = 8; vw <= 16; vw += 8)
		for (th = 1; th <= 2; th++)
			tally_case(t, s, vw, th);
}

/*
 * The model shapes L[k] = { channels, plane, kernel, stride, pad } at
 * both widths, an epilogue each, 1 or 2 threads in turn.
 */
static void
tally_models(tally *t, const int64_t (*L)[5], unsigned n)
{
	unsigned k;
	int vw;

	for (k = 0; k < n; k++)
		for (vw = 8; vw <= 16; vw += 8) {
			spec s = { 1, L[k][0], 1, L[k][1], L[k][1], L[k][2],
			    L[k][2], L[k][3], L[k][3], 1, 1, L[k][4], L[k][4],
			    L[k][4], L[k][4], (int)((k + vw / 8) % 7),
			    (int)(k & 1), (int)(k % 3 == 0), 1 };
			tally_case(t, &s, vw, 1 + (int)(k & 1));
		}
}

static const int64_t sizes[] = { 1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 33, 64,
    70 };
static const int64_t strides[] = { 1, 1, 2, 2, 3 };

/*
 * The random draws the kernels' own case sets share: images, channels
 * 1..67, multiplier and plane (before the kernel's fields), ...
 */
static void
random_plane(spec *s)
{
	memset(s, 0, sizeof(*s));
	s->n = 1 + (frand() > 0.7f);
	s->c = 1 + (int64_t)((frand() + 1) / 2 * 67) % 67;
	s->mult = frand() > 0.85f ? 2 : 1;
	s->h = frand() > 0.5f ? pick(sizes, 13) :
	    1 + (int64_t)((frand() + 1) / 2 * 70) % 70;
	s->w = frand() > 0.5f ? pick(sizes, 13) :
	    1 + (int64_t)((frand() + 1) / 2 * 70) % 70;
}

/* ... a kernel up to 7x7, not only square, pads up to its size ... */
static void
random_kernel7(spec *s)
{
	s->kh = 1 + (int64_t)((frand() + 1) / 2 * 7) % 7;
	s->kw = frand() > 0.7f ? 1 + (int64_t)((frand() + 1) / 2 * 7) % 7 :
	    s->kh;
}

static void
random_pads_upto(spec *s)
{
	s->pt = (int64_t)((frand() + 1) / 2 * (s->kh + 1)) % (s->kh + 1);
	s->pl = (int64_t)((frand() + 1) / 2 * (s->kw + 1)) % (s->kw + 1);
	s->pb = (int64_t)((frand() + 1) / 2 * (s->kh + 1)) % (s->kh + 1);
	s->pr = (int64_t)((frand() + 1) / 2 * (s->kw + 1)) % (s->kw + 1);
}

/* ... and, after them, the epilogue (any of the seven activations). */
static void
random_epilogue(spec *s)
{
	s->act = (int)((frand() + 1) / 2 * 7) % 7;
	s->affine = frand() > 0.6f;
	s->add = frand() > 0.6f;
	s->bias = frand() > 0.3f;
}

/* A depthwise Conv node c x hw x hw, k x k, stride st, Clip(0, 6) fused. */
static int
conv_graph(tg *t, int64_t c, int64_t hw, int64_t k, int64_t st)
{
	const int64_t xd[] = { 1, c, hw, hw }, wd[] = { c, 1, k, k };
	const int64_t bd[] = { c }, ks[] = { k, k }, ss[] = { st, st };
	const int64_t pads[] = { k / 2, k / 2, k / 2, k / 2 };

	tg_new(t, "dw");
	tg_input(t, 0, 4, xd);
	tg_input(t, 1, 4, wd);
	tg_input(t, 1, 1, bd);
	tg_node(t, "Conv");
	attr_i(t, "group", c);
	attr_is(t, "kernel_shape", 2, ks);
	attr_is(t, "strides", 2, ss);
	attr_is(t, "pads", 4, pads);
	aoe_node_add_attr(t->n, "_aoe_act", AOE_A_INT)->i = AOE_ACT_CLIP;
	aoe_node_add_attr(t->n, "_aoe_act_lo", AOE_A_FLOAT)->f = 0;
	aoe_node_add_attr(t->n, "_aoe_act_hi", AOE_A_FLOAT)->f = 6;
	return tg_prepare(t);
}

/*
 * DWCONV_BENCH: microseconds a MobileNet / EfficientNet layer takes as
 * a Conv node under each depthwise kernel (dw_rows 0, 1 and 2, and
 * dw_rows=2's pass shapes), interleaved, the median of 15 rounds (the
 * process's CPU time at 1 thread, so that other jobs' time slices are
 * left out; the wall clock at 2).  DWCONV_ACT=kind (0 none, 2 Clip(0,
 * 6), 4 HardSwish, 5 SiLU; default 0) is the fused epilogue,
 * DWCONV_THREADS the threads, DWCONV_ONLY=C:HW:K:S one layer.
 */
static void
bench(void)
{
	static const int64_t L[][4] = { { 32, 112, 3, 1 }, { 16, 112, 3, 1 },
	    { 96, 112, 3, 2 }, { 64, 112, 3, 2 }, { 144, 56, 3, 1 },
	    { 72, 56, 3, 1 }, { 144, 56, 3, 2 }, { 144, 56, 5, 2 },
	    { 72, 56, 5, 2 }, { 192, 28, 3, 1 }, { 240, 28, 5, 1 },
	    { 120, 28, 5, 1 }, { 192, 28, 3, 2 }, { 240, 28, 3, 2 },
	    { 384, 14, 3, 1 }, { 480, 14, 3, 1 }, { 576, 14, 3, 1 },
	    { 184, 14, 3, 1 }, { 480, 14, 5, 1 }, { 672, 14, 5, 1 },
	    { 576, 14, 3, 2 }, { 672, 14, 5, 2 }, { 960, 7, 3, 1 },
	    { 1152, 7, 3, 1 }, { 1152, 7, 5, 1 }, { 960, 7, 5, 1 } };
	static const int64_t cfg[][5] = { { 0, 0, 0, 0 }, { 1, 16, 0, 0 },
	    { 2, 0, 0, 0 }, { 2, 8, 0, 0 }, { 2, 16, 1, 1 }, { 2, 16, 2, 1 },
	    { 2, 16, 4, 1 }, { 2, 16, 2, 2 }, { 2, 16, 4, 2 }, { 3, 8, 0, 0 },
	    { 3, 16, 0, 0 }, { 4, 8, 0, 0 }, { 4, 16, 0, 0 },
	    { -1, 0, 0, 0 } };
	enum { NC = sizeof(cfg) / sizeof(cfg[0]) };
	unsigned k;
	int th = getenv("DWCONV_THREADS") ? atoi(getenv("DWCONV_THREADS")) : 1;
	int act = getenv("DWCONV_ACT") ? atoi(getenv("DWCONV_ACT")) : 0;
	const char *only = getenv("DWCONV_ONLY");

	opts.nthreads = th;
	printf("# bench: %d thread(s), act %d, %s; us, medians of 15; "
	    "columns dw_rows,dw_vec,dw_oh,dw_ow\n# %-16s", th, act,
	    aoe_cpu_avx512() ? "avx512" : "avx2", "layer");
	for (k = 0; k < NC; k++)
		printf(" %2lld,%2lld,%lld,%lld", (long long)cfg[k][0],
		    (long long)cfg[k][1], (long long)cfg[k][2],
		    (long long)cfg[k][3]);
	printf("\n");
	for (k = 0; k < sizeof(L) / sizeof(L[0]); k++) {
		tg t;
		double tm[NC][15];
		char name[32];
		int r, c, it, reps;
		snprintf(name, sizeof(name), "%lld:%lld:%lld:%lld",
		    (long long)L[k][0], (long long)L[k][1],
		    (long long)L[k][2], (long long)L[k][3]);
		if (only && strcmp(only, name) != 0)
			continue;
		if (conv_graph(&t, L[k][0], L[k][1], L[k][2], L[k][3]) < 0)
			continue;
		((aoe_attr *)aoe_attr_find(t.n, "_aoe_act"))->i = act;
		reps = (int)(2e6 / (L[k][0] * L[k][1] * L[k][1] / L[k][3] /
		    L[k][3] * L[k][2] * L[k][2])) + 1;
		for (r = 0; r < 15; r++)
			for (c = 0; c < NC; c++) {
				aoe_sched s;
				double t0;
				memset(&s, 0, sizeof(s));
				aoe_sched_set(&s, "algo", 4);
				aoe_sched_set(&s, "dw_rows", cfg[c][0]);
				aoe_sched_set(&s, "dw_vec", cfg[c][1]);
				aoe_sched_set(&s, "dw_oh", cfg[c][2]);
				aoe_sched_set(&s, "dw_ow", cfg[c][3]);
				tm[c][r] = 0;
				if (aoe_space_apply(t.g, t.n, &s) < 0)
					continue;
				aoe_graph_run(t.g, &opts);
				t0 = cputime(th > 1);
				for (it = 0; it < reps; it++)
					aoe_graph_run(t.g, &opts);
				tm[c][r] = (cputime(th > 1) - t0) / reps * 1e6;
			}
		printf("  %-16s", name);
		for (c = 0; c < NC; c++) {
			qsort(tm[c], 15, sizeof(double), dcmp);
			printf(" %10.1f", tm[c][7]);
		}
		printf("\n");
		fflush(stdout);
		aoe_graph_free(t.g);
	}
}

/*
 * One case of the fused activation test (see main): the depthwise Conv
 * node of layer L (channels, plane, kernel, stride) with, by kind, a
 * Relu, a Clip(-0.25, 0.5), a HardSwish or a SiLU, under dw_rows on th
 * threads; 1 if it matches the reference.
 */
static int
fused_act_ok(const int64_t L[4], int kind, int dw_rows, int th)
{
	static const int kinds[] = { AOE_ACT_RELU, AOE_ACT_CLIP,
	    AOE_ACT_HARDSWISH, AOE_ACT_SILU };
	spec sp = { 1, L[0], 1, L[1], L[1], L[2], L[2], L[3], L[3], 1, 1,
	    L[2] / 2, L[2] / 2, L[2] / 2, L[2] / 2, 0, 0, 0, 1 };
	aoe_conv_geom g;
	aoe_act ac;
	aoe_sched sc;
	tg t;
	float *r;
	double e;
	int good;

	if (conv_graph(&t, L[0], L[1], L[2], L[3]) < 0)
		return 0;
	memset(&ac, 0, sizeof(ac));
	ac.kind = kinds[kind];
	ac.lo = kind == 1 ? -0.25f : kind == 0 ? 0 : -FLT_MAX;
	ac.hi = kind == 1 ? 0.5f : FLT_MAX;
	((aoe_attr *)aoe_attr_find(t.n, "_aoe_act"))->i = ac.kind;
	((aoe_attr *)aoe_attr_find(t.n, "_aoe_act_lo"))->f = ac.lo;
	/* A Relu keeps the graph's 6, which it must ignore. */
	((aoe_attr *)aoe_attr_find(t.n, "_aoe_act_hi"))->f = kind == 0 ? 6 :
	    ac.hi;
	memset(&sc, 0, sizeof(sc));
	aoe_sched_set(&sc, "algo", 4);
	aoe_sched_set(&sc, "dw_rows", dw_rows);
	geom_of(&sp, &g);
	r = malloc(sizeof(float) * (size_t)numel_y(&t));
	conv_reference(&g, t.g->tensors[t.in[0]]->data,
	    t.g->tensors[t.in[1]]->data, t.g->tensors[t.in[2]]->data, &ac,
	    NULL, r);
	opts.nthreads = th;
	good = aoe_space_apply(t.g, t.n, &sc) >= 0 &&
	    aoe_graph_run(t.g, &opts) >= 0 &&
	    same(t.g->tensors[t.y]->data, r, numel_y(&t), &e);
	free(r);
	aoe_graph_free(t.g);
	return good;
}

int
main(void)
{
	static const int64_t chans[] = { 1, 3, 7, 8, 9, 15, 16, 17, 24, 33 };
	static const int64_t ks[] = { 1, 2, 3, 3, 5, 5, 7 };
	int i, vw, th, good;
	double e;
	aoe_conv_geom g;

	(void)data;
	if (getenv("DWCONV_BENCH"))
		bench();
	/* Fixed cases: the MobileNet and EfficientNet shapes. */
	{
		static const int64_t L[][5] = { { 32, 112, 3, 1, 1 },
		    { 96, 112, 3, 2, 1 }, { 144, 56, 5, 2, 2 },
		    { 40, 28, 5, 1, 2 }, { 20, 9, 3, 2, 1 },
		    { 672, 14, 5, 1, 2 } };
		unsigned k;
		for (k = 0; k < sizeof(L) / sizeof(L[0]); k++)
			for (vw = 8; vw <= 16; vw += 8) {
				spec s = { 1, L[k][0], 1, L[k][1], L[k][1],
				    L[k][2], L[k][2], L[k][3], L[k][3], 1, 1,
				    L[k][4], L[k][4], L[k][4], L[k][4],
				    (int)(k % 5), (int)(k & 1), (int)(k == 3),
				    1 };
				good = run_case(&s, vw, 2, &e);
				ok(good, "dw %lldx%lld/%lld "
				    "c=%lld hw=%lld act=%s vw=%d: max error %.2g",
				    (long long)s.kh, (long long)s.kw,
				    (long long)s.sh, (long long)s.c,
				    (long long)s.h, actname[s.act], vw, e);
			}
	}
	/* Random shapes, each at both widths and thread counts. */
	{
		tally t = { 0, 0, 0 };
		for (i = 0; i < 120; i++) {
			spec s;
			memset(&s, 0, sizeof(s));
			s.n = 1 + (frand() > 0.7f);
			s.c = pick(chans, 10);
			s.mult = frand() > 0.8f ? 2 : 1;
			s.h = pick(sizes, 13);
			s.w = pick(sizes, 13);
			s.kh = pick(ks, 7);
			s.kw = frand() > 0.8f ? pick(ks, 7) : s.kh;
			s.sh = pick(strides, 5);
			s.sw = frand() > 0.8f ? pick(strides, 5) : s.sh;
			s.dh = frand() > 0.85f ? 2 : 1;
			s.dw = frand() > 0.85f ? 2 : 1;
			s.pt = (int64_t)((frand() + 1) / 2 * s.kh);
			s.pl = (int64_t)((frand() + 1) / 2 * s.kw);
			s.pb = (int64_t)((frand() + 1) / 2 * s.kh);
			s.pr = (int64_t)((frand() + 1) / 2 * s.kw);
			s.act = (int)((frand() + 1) / 2 * 5) % 5;
			s.affine = frand() > 0.6f;
			s.add = frand() > 0.6f;
			s.bias = frand() > 0.3f;
			geom_of(&s, &g);
			if (g.out[1] < 1 || g.out[2] < 1) {
				i--;
				continue;
			}
			tally_widths_threads(&t, &s);
		}
		ok(t.bad == 0, "%d random depthwise cases (widths 8 and 16, 1 "
		    "and 2 threads) match the reference, worst error %.2g",
		    t.nc, t.worst);
	}
	/*
	 * The register-blocked kernel (dw_rows=2): the model shapes at
	 * every pass shape, then random shapes it takes, channels 1..67.
	 */
	{
		static const int64_t L[][5] = { { 32, 112, 3, 1, 1 },
		    { 96, 112, 3, 2, 1 }, { 144, 56, 5, 2, 2 },
		    { 144, 56, 3, 1, 1 }, { 40, 28, 5, 1, 2 },
		    { 67, 14, 5, 1, 2 }, { 17, 7, 3, 1, 1 },
		    { 33, 7, 5, 1, 2 }, { 20, 9, 3, 2, 1 } };
		static const int ohs[] = { 0, 1, 2, 4, 8 }, ows[] = { 0, 1, 2 };
		tally t = { 0, 0, 0 };
		unsigned k;
		int a, b;
		reg = 1;
		for (k = 0; k < sizeof(L) / sizeof(L[0]); k++)
			for (vw = 8; vw <= 16; vw += 8)
				for (a = 0; a < 5; a++)
					for (b = 0; b < 3; b++) {
						spec s = { 1, L[k][0], 1, L[k][1],
						    L[k][1], L[k][2], L[k][2],
						    L[k][3], L[k][3], 1, 1,
						    L[k][4], L[k][4], L[k][4],
						    L[k][4], (int)((k + a + b) %
						    7), (int)(k & 1),
						    (int)(k % 3 == 0), 1 };
						reg_oh = ohs[a];
						reg_ow = ows[b];
						tally_case(&t, &s, vw, 1 + (a & 1));
					}
		ok(t.bad == 0, "dw_rows=2: %d model shapes x pass shapes "
		    "(dw_oh 0 1 2 4 8, dw_ow 0 1 2, widths 8 and 16) match the "
		    "reference, worst error %.2g", t.nc, t.worst);
		t.nc = t.bad = 0;
		t.worst = 0;
		for (i = 0; i < 300; i++) {
			spec s;
			random_plane(&s);
			s.kh = s.kw = frand() > 0 ? 3 : 5;
			s.sh = s.sw = frand() > 0 ? 1 : 2;
			s.dh = s.dw = 1;
			s.pt = (int64_t)((frand() + 1) / 2 * s.kh) % s.kh;
			s.pl = (int64_t)((frand() + 1) / 2 * s.kw) % s.kw;
			s.pb = (int64_t)((frand() + 1) / 2 * s.kh) % s.kh;
			s.pr = (int64_t)((frand() + 1) / 2 * s.kw) % s.kw;
			random_epilogue(&s);
			geom_of(&s, &g);
			if (g.out[1] < 1 || g.out[2] < 1 ||
			    !aoe_dw_reg_ok(&g)) {
				i--;
				continue;
			}
			reg_oh = ohs[(int)((frand() + 1) / 2 * 5) % 5];
			reg_ow = ows[(int)((frand() + 1) / 2 * 3) % 3];
			tally_widths_threads(&t, &s);
		}
		ok(t.bad == 0, "dw_rows=2: %d random cases (channels 1..67, "
		    "3x3 and 5x5, strides 1 and 2, pads, every epilogue, "
		    "sampled dw_oh and dw_ow, widths 8 and 16, 1 and 2 "
		    "threads) match the reference, worst error %.2g", t.nc,
		    t.worst);
		reg = 0;
	}
	/*
	 * The flat kernel (dw_rows=3): the model shapes, then random
	 * shapes it takes (kernels 1x1 to 7x7, not only square, strides 1
	 * and 2, pads up to the kernel's size, channels 1..67).
	 */
	{
		static const int64_t L[][5] = { { 96, 112, 3, 2, 1 },
		    { 144, 56, 5, 2, 2 }, { 576, 14, 3, 2, 1 },
		    { 67, 14, 5, 2, 2 }, { 960, 7, 3, 1, 1 },
		    { 33, 7, 5, 1, 2 }, { 17, 14, 3, 1, 1 },
		    { 20, 9, 3, 2, 1 }, { 40, 28, 5, 1, 2 } };
		tally t = { 0, 0, 0 };
		reg = 2;
		tally_models(&t, L, sizeof(L) / sizeof(L[0]));
		ok(t.bad == 0, "dw_rows=3: %d model shapes (widths 8 and 16) "
		    "match the reference, worst error %.2g", t.nc, t.worst);
		t.nc = t.bad = 0;
		t.worst = 0;
		for (i = 0; i < 300; i++) {
			spec s;
			random_plane(&s);
			random_kernel7(&s);
			s.sh = s.sw = frand() > 0 ? 1 : 2;
			s.dh = s.dw = 1;
			random_pads_upto(&s);
			random_epilogue(&s);
			geom_of(&s, &g);
			if (g.out[1] < 1 || g.out[2] < 1 ||
			    !aoe_dw_flat_ok(&g)) {
				i--;
				continue;
			}
			tally_widths_threads(&t, &s);
		}
		ok(t.bad == 0, "dw_rows=3: %d random cases (channels 1..67, "
		    "kernels up to 7x7, strides 1 and 2, pads up to the "
		    "kernel, every epilogue, widths 8 and 16, 1 and 2 "
		    "threads) match the reference, worst error %.2g", t.nc,
		    t.worst);
		reg = 0;
	}
	/*
	 * The channels-in-lanes kernel (dw_rows=4): the model shapes, then
	 * random shapes (kernels 1x1 to 7x7 and not only square, strides 1
	 * to 3, dilations, pads up to the kernel's size, channels 1..67,
	 * multipliers, batches).
	 */
	{
		static const int64_t L[][5] = { { 96, 112, 3, 2, 1 },
		    { 144, 56, 5, 2, 2 }, { 576, 14, 3, 2, 1 },
		    { 67, 14, 5, 2, 2 }, { 960, 7, 3, 1, 1 },
		    { 33, 7, 5, 1, 2 }, { 17, 14, 3, 1, 1 },
		    { 20, 9, 3, 2, 1 }, { 40, 28, 5, 1, 2 },
		    { 72, 56, 5, 2, 2 }, { 240, 28, 3, 2, 1 } };
		tally t = { 0, 0, 0 };
		reg = 3;
		tally_models(&t, L, sizeof(L) / sizeof(L[0]));
		ok(t.bad == 0, "dw_rows=4: %d model shapes (widths 8 and 16) "
		    "match the reference, worst error %.2g", t.nc, t.worst);
		t.nc = t.bad = 0;
		t.worst = 0;
		for (i = 0; i < 300; i++) {
			spec s;
			random_plane(&s);
			random_kernel7(&s);
			s.sh = pick(strides, 5);
			s.sw = frand() > 0.8f ? pick(strides, 5) : s.sh;
			s.dh = frand() > 0.85f ? 2 : 1;
			s.dw = frand() > 0.85f ? 2 : 1;
			random_pads_upto(&s);
			random_epilogue(&s);
			geom_of(&s, &g);
			if (g.out[1] < 1 || g.out[2] < 1 ||
			    !aoe_dw_rows_ok(&g)) {
				i--;
				continue;
			}
			tally_widths_threads(&t, &s);
		}
		ok(t.bad == 0, "dw_rows=4: %d random cases (channels 1..67, "
		    "multipliers, kernels up to 7x7, strides 1 to 3, "
		    "dilations, pads up to the kernel, every epilogue, widths "
		    "8 and 16, 1 and 2 threads) match the reference, worst "
		    "error %.2g", t.nc, t.worst);
		reg = 0;
	}
	/*
	 * The phase kernel (dw_rows=5): the model shapes (outputs 56 and
	 * 112 wide: one and two blocks of four vectors), then random shapes
	 * it takes (3x3 and 5x5 at stride 2, a left pad of 0 or half the
	 * kernel, any other pads, channels 1..67, multipliers, batches).
	 */
	{
		static const int64_t L[][5] = { { 96, 112, 3, 2, 1 },
		    { 144, 56, 5, 2, 2 }, { 32, 224, 3, 2, 1 },
		    { 72, 56, 5, 2, 2 }, { 19, 113, 3, 2, 1 },
		    { 40, 30, 5, 2, 2 }, { 67, 14, 3, 2, 1 },
		    { 20, 9, 3, 2, 1 }, { 24, 150, 5, 2, 2 } };
		tally t = { 0, 0, 0 };
		reg = 4;
		tally_models(&t, L, sizeof(L) / sizeof(L[0]));
		ok(t.bad == 0, "dw_rows=5: %d model shapes (widths 8 and 16) "
		    "match the reference, worst error %.2g", t.nc, t.worst);
		t.nc = t.bad = 0;
		t.worst = 0;
		for (i = 0; i < 300; i++) {
			spec s;
			random_plane(&s);
			if (frand() > 0.5f)
				s.w = 1 + (int64_t)((frand() + 1) / 2 * 300) %
				    300;
			s.kh = s.kw = frand() > 0 ? 3 : 5;
			s.sh = s.sw = 2;
			s.dh = s.dw = 1;
			random_pads_upto(&s);
			s.pl = frand() > 0.3f ? s.kw / 2 : 0;
			random_epilogue(&s);
			geom_of(&s, &g);
			if (g.out[1] < 1 || g.out[2] < 1 ||
			    !aoe_dw_phase_ok(&g)) {
				i--;
				continue;
			}
			tally_widths_threads(&t, &s);
		}
		ok(t.bad == 0, "dw_rows=5: %d random cases (channels 1..67, "
		    "multipliers, 3x3 and 5x5 at stride 2, planes up to 300 "
		    "wide, left pads 0 and half the kernel, other pads up to "
		    "the kernel, every epilogue, widths 8 and 16, 1 and 2 "
		    "threads) match the reference, worst error %.2g", t.nc,
		    t.worst);
		reg = 0;
	}
	/* Through Conv's space: each dw schedule gives the same output. */
	{
		static const int64_t L[][4] = { { 17, 23, 3, 1 },
		    { 24, 30, 5, 2 }, { 40, 9, 3, 2 } };
		static const int64_t cfg[][5] = { { 4, 0, 0, 0, 0 },
		    { 4, 1, 8, 0, 0 }, { 4, 1, 16, 0, 0 },
		    { 4, -1, 0, 0, 0 }, { 4, 2, 0, 0, 0 },
		    { 4, 2, 8, 2, 1 }, { 4, 2, 16, 4, 2 },
		    { 4, 2, 16, 1, 2 }, { 4, 3, 0, 0, 0 }, { 4, 3, 8, 0, 0 },
		    { 4, 3, 16, 0, 0 }, { 4, 4, 0, 0, 0 }, { 4, 4, 8, 0, 0 },
		    { 4, 4, 16, 0, 0 }, { 4, 5, 0, 0, 0 }, { 4, 5, 8, 0, 0 },
		    { 4, 5, 16, 0, 0 } };
		enum { NCFG = sizeof(cfg) / sizeof(cfg[0]) };
		unsigned k, c;
		int same = 1, refused = 1;
		for (k = 0; k < 3; k++) {
			tg t;
			float *ref;
			int64_t ny, j;
			if (conv_graph(&t, L[k][0], L[k][1], L[k][2],
			    L[k][3]) < 0) {
				same = 0;
				continue;
			}
			ny = numel_y(&t);
			ref = malloc(sizeof(float) * (size_t)ny);
			for (c = 0; c < NCFG; c++)
				for (th = 1; th <= 2; th++) {
					aoe_sched s;
					const float *y;
					/* No 16-float choice without AVX-512. */
					if (cfg[c][2] == 16 && !aoe_cpu_avx512())
						continue;
					/* dw_rows=5 at stride 2 only. */
					if (cfg[c][1] == 5 && L[k][3] != 2)
						continue;
					memset(&s, 0, sizeof(s));
					aoe_sched_set(&s, "algo", cfg[c][0]);
					aoe_sched_set(&s, "dw_rows", cfg[c][1]);
					aoe_sched_set(&s, "dw_vec", cfg[c][2]);
					aoe_sched_set(&s, "dw_oh", cfg[c][3]);
					aoe_sched_set(&s, "dw_ow", cfg[c][4]);
					if (cfg[c][0] == 4 && (cfg[c][1] == -1 ||
					    cfg[c][1] == 0 || cfg[c][1] == 2 ||
					    cfg[c][1] == 4 || cfg[c][1] == 5))
						aoe_sched_set(&s, "dw_nt",
						    (c + th) % 2 ? 1 : -1);
					opts.nthreads = th;
					if (aoe_space_apply(t.g, t.n, &s) < 0 ||
					    aoe_graph_run(t.g, &opts) < 0) {
						printf("# config %u refused: %s\n",
						    c, aoe_errmsg());
						same = 0;
						continue;
					}
					y = t.g->tensors[t.y]->data;
					if (c == 0 && th == 1)
						memcpy(ref, y, sizeof(float) *
						    (size_t)ny);
					for (j = 0; j < ny; j++)
						if (fabsf(y[j] - ref[j]) >
						    1e-4f * (1 + fabsf(ref[j])))
							same = 0;
				}
			{
				/* Schedules the space must refuse: knob, value. */
				static const struct {
					const char *k[3];
					int64_t v[3];
				} bad[] = {
					{ { "algo", "dw_rows" }, { 2, 1 } },
					{ { "algo", "dw_rows", "dw_vec" },
					    { 4, 0, 8 } },
					{ { "algo", "dw_rows", "dw_oh" },
					    { 4, 1, 2 } },
					{ { "algo", "dw_rows", "dw_oh" },
					    { 4, 2, 3 } },
					{ { "algo", "dw_rows", "dw_nt" },
					    { 4, 1, 1 } },
					{ { "algo", "dw_nt" }, { 2, 1 } },
					{ { "algo", "dw_nt" }, { 4, 0 } },
				};
				aoe_sched s;
				unsigned b, q;
				for (b = 0; b < sizeof(bad) / sizeof(bad[0]);
				    b++) {
					memset(&s, 0, sizeof(s));
					for (q = 0; q < 3 && bad[b].k[q]; q++)
						aoe_sched_set(&s, bad[b].k[q],
						    bad[b].v[q]);
					if (aoe_space_apply(t.g, t.n, &s) == 0)
						refused = 0;
				}
				/* dw_rows=5 at stride 1. */
				memset(&s, 0, sizeof(s));
				aoe_sched_set(&s, "algo", 4);
				aoe_sched_set(&s, "dw_rows", 5);
				if (L[k][3] == 1 &&
				    aoe_space_apply(t.g, t.n, &s) == 0)
					refused = 0;
			}
			free(ref);
			aoe_graph_free(t.g);
		}
		ok(same, "a depthwise Conv node gives the same output under "
		    "dw_rows 0, 1 (dw_vec 8, 16), 2 (dw_vec, dw_oh, dw_ow), "
		    "3, 4 and 5 (dw_vec; 5 at stride 2) and -1, at 1 and 2 "
		    "threads, dw_nt -1 and 1 where it applies");
		ok(refused, "dw_rows with another algo, dw_vec without "
		    "dw_rows=1 or 2, dw_oh without dw_rows=2, dw_oh=3, dw_nt "
		    "with dw_rows=1 or another algo, and dw_nt=0 are refused");
	}
	/*
	 * A plain Relu, Clip or HardSwish fused into a depthwise Conv node
	 * is applied in registers by dw_rows=0 (eight planes at once), and
	 * all four by 2 (as each vector is stored; dw_rows=-1 picks it for
	 * 3x3 on a 7x7 plane): against the reference, with the Clip's
	 * bounds not 0 and 6, at 1 and 2 threads.
	 */
	{
		static const int64_t L[][4] = { { 24, 56, 3, 2 },
		    { 20, 30, 3, 1 }, { 13, 9, 5, 1 }, { 9, 14, 3, 1 },
		    { 19, 7, 3, 1 } };
		static const int rows[] = { 0, 2, -1 };
		static const char *const kname[] = { "Relu", "Clip",
		    "HardSwish", "SiLU" };
		/* Each layer, each activation, each dw_rows, 1 and 2 threads. */
		int ncase = (int)(sizeof(L) / sizeof(L[0])) * 4 * 3 * 2;
		good = 1;
		for (i = 0; i < ncase; i++) {
			int k = i / 24, kind = i / 6 % 4, rr = rows[i / 2 % 3];
			if (!fused_act_ok(L[k], kind, rr, 1 + i % 2)) {
				printf("# fused %s, layer %d, dw_rows=%d, %d "
				    "threads: mismatch\n", kname[kind], k, rr,
				    1 + i % 2);
				good = 0;
			}
		}
		ok(good, "a depthwise Conv node with Relu, Clip(-0.25, 0.5), "
		    "HardSwish or SiLU fused matches the reference under "
		    "dw_rows 0, 2 and -1, at 1 and 2 threads (%d cases)",
		    ncase);
	}
	ok(aoe_dw_default_vec() == (aoe_cpu_avx512() ? 16 : 8),
	    "the default vector width is %d, the widest this CPU allows",
	    aoe_dw_default_vec());
	{
		spec s = { 1, 8, 1, 9, 9, 9, 9, 1, 1, 1, 1, 4, 4, 4, 4, 0, 0,
		    0, 1 };
		geom_of(&s, &g);
		ok(aoe_dw_rows_ok(&g) == 0, "81 taps (9x9) are refused");
		s.kh = s.kw = 7;
		geom_of(&s, &g);
		ok(aoe_dw_rows_ok(&g) == 1, "49 taps (7x7) are taken");
		ok(aoe_dw_reg_ok(&g) == 0, "dw_rows=2 does not take 7x7");
		s.kh = s.kw = 3;
		s.sh = s.sw = 2;
		s.pt = s.pl = s.pb = s.pr = 1;
		geom_of(&s, &g);
		ok(aoe_dw_reg_ok(&g) == 1 && aoe_dw_auto(&g, 0) ==
		    (aoe_cpu_avx512() ? 5 : 4), "dw_rows=2 takes 3x3 stride 2 "
		    "(5x5 output), but the default is dw_rows=%d",
		    aoe_cpu_avx512() ? 5 : 4);
		s.h = s.w = 112;
		geom_of(&s, &g);
		ok(aoe_dw_auto(&g, 0) == (aoe_cpu_avx512() ? 5 : 0),
		    "3x3 stride 2 from 112x112 runs dw_rows=%d by default",
		    aoe_cpu_avx512() ? 5 : 0);
		s.h = s.w = 56;
		geom_of(&s, &g);
		ok(aoe_dw_auto(&g, 0) == (aoe_cpu_avx512() ? 5 : 0),
		    "3x3 stride 2 from 56x56 runs dw_rows=%d by default",
		    aoe_cpu_avx512() ? 5 : 0);
		s.h = s.w = 28;
		geom_of(&s, &g);
		ok(aoe_dw_auto(&g, 0) == (aoe_cpu_avx512() ? 5 : 0) &&
		    aoe_dw_auto(&g, 1) == (aoe_cpu_avx512() ? 5 : 0),
		    "3x3 stride 2 from 28x28 runs dw_rows=%d by default, "
		    "whatever the epilogue", aoe_cpu_avx512() ? 5 : 0);
		s.h = s.w = 14;
		geom_of(&s, &g);
		ok(aoe_dw_auto(&g, 0) == (aoe_cpu_avx512() ? 5 : 4),
		    "3x3 stride 2 from 14x14 runs dw_rows=%d by default "
		    "with SiLU or HardSwish", aoe_cpu_avx512() ? 5 : 4);
		ok(aoe_dw_auto(&g, 1) == (aoe_cpu_avx512() ? 5 : 0),
		    "3x3 stride 2 from 14x14 runs dw_rows=%d by default "
		    "with a plain Relu or Clip", aoe_cpu_avx512() ? 5 : 0);
		s.h = s.w = 19;
		s.pt = s.pl = 0;
		s.kh = s.kw = 5;
		geom_of(&s, &g);
		ok(g.out[2] == 8 && aoe_dw_auto(&g, 0) == 4, "5x5 stride 2 from "
		    "19 wide to 8 runs dw_rows=4 by default");
		ok(aoe_dw_auto(&g, 1) == (aoe_cpu_avx512() ? 4 : 0),
		    "and dw_rows=%d with a plain Relu or Clip",
		    aoe_cpu_avx512() ? 4 : 0);
		s.kh = s.kw = 3;
		s.pt = s.pl = 1;
		s.h = s.w = 7;
		s.sh = s.sw = 1;
		geom_of(&s, &g);
		ok(aoe_dw_auto(&g, 0) == (aoe_cpu_avx512() ? 4 : 2) &&
		    aoe_dw_flat_ok(&g), "3x3 stride 1 on a 7x7 plane runs "
		    "dw_rows=%d by default", aoe_cpu_avx512() ? 4 : 2);
		s.h = s.w = 9;
		s.kh = s.kw = 7;
		s.sh = s.sw = 2;
		s.pt = s.pl = s.pb = s.pr = 3;
		geom_of(&s, &g);
		ok(aoe_dw_flat_ok(&g) && aoe_dw_auto(&g, 0) == 0,
		    "dw_rows=3 takes 7x7 stride 2; the default does not");
		s.h = s.w = 17;
		s.kh = s.kw = 3;
		s.sh = s.sw = 1;
		s.pt = s.pl = s.pb = s.pr = 1;
		s.kh = s.kw = 5;
		s.sh = s.sw = 1;
		s.pt = s.pl = s.pb = s.pr = 2;
		geom_of(&s, &g);
		ok(aoe_dw_auto(&g, 0) == 2, "5x5 stride 1 runs dw_rows=2 by "
		    "default");
		s.sh = 3;
		s.sw = 3;
		geom_of(&s, &g);
		ok(aoe_dw_reg_ok(&g) == 0, "dw_rows=2 does not take stride 3");
	}
	return done_testing();
}
