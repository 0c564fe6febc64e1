/*
 * unit-grpconv - TAP property tests of the grouped convolution
 * (lib/kernels/k_grpconv.c, Conv's algo 8): over random 2-D shapes
 * (one group in five, a dense Conv, else 2 to 6; group widths 8, 16,
 * 24, 32, 40 and 64 output channels, any input channels a group, kernels 1x1 to 5x5 and odd ones, row strides 1 to 3,
 * column strides 1 and 2, dilations, asymmetric pads, batches, planes
 * narrower than a tile) with the fused epilogues (none, Relu, Clip,
 * Sigmoid, HardSwish, SiLU, GELU, a per-channel affine and a residual),
 * at vector widths 8 and 16 (where AVX-512 runs), one and two vectors a
 * tile, random tiles and work items, at 1 and 2 threads, the kernel
 * matches a naive reference; then Conv nodes through the schedules
 * sampled from their space, the refusals and the default.  With
 * GRPCONV_BENCH set it times regnet_x_400mf's grouped layers under the
 * implicit GEMM (algo 2) and algo 8's variants.
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
	int64_t n, group, cg, mg, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
	int act, affine, add, bias;
} spec;

static void
geom_of(const spec *s, aoe_conv_geom *g)
{
	conv2d d = { s->n, s->group, s->cg, s->mg, s->h, s->w, s->kh, s->kw,
	    s->sh, s->sw, s->dh, s->dw, s->pt, s->pl, s->pb, s->pr };

	conv2d_geom(&d, g);
}

/*
 * The kernel's scratch, as NaN, as a model's arena may hold: a kernel
 * that reads scratch it did not write (even to multiply by a zero
 * weight) spoils its output.
 */
static float *
nan_scratch(const aoe_conv_geom *g)
{
	int64_t n = aoe_grp_wsize(g, 16, 2), i;
	float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));

	for (i = 0; i < n; i++)
		p[i] = NAN;
	return p;
}

/* The activation of a case (a Clip to [-0.25, 0.5]). */
static void
spec_act(const spec *sp, aoe_act *a)
{
	memset(a, 0, sizeof(*a));
	a->kind = actkind[sp->act];
	a->lo = a->kind == AOE_ACT_CLIP ? -0.25f : -FLT_MAX;
	a->hi = a->kind == AOE_ACT_CLIP ? 0.5f : FLT_MAX;
}

/*
 * One case under schedule s (grp_* knobs), prepacked or not, at nthreads
 * threads; 1 if it matched.
 */
static int
run_case(const spec *sp, const aoe_sched *s, int prepack, int nthreads,
    double *maxerr)
{
	aoe_conv_geom g;
	aoe_act a;
	float *x, *w, *bias, *add, *y, *r, *ps = NULL, *pt = NULL, *wp = NULL;
	float *scratch, guard[GUARD];
	int64_t ny;
	int ok_ = 1, vw = 0, nv = 0;

	geom_of(sp, &g);
	ny = g.n * g.m * g.outsz;
	x = rnd(g.n * g.c * g.insz);
	w = rnd(g.m * g.cg * g.ksz);
	bias = sp->bias ? rnd(g.m) : NULL;
	add = sp->add ? rnd(ny) : NULL;
	y = rnd_guarded(ny, guard);
	r = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
	scratch = nan_scratch(&g);
	spec_act(sp, &a);
	if (sp->affine) {
		a.ps = ps = rnd(g.m);
		a.pt = pt = rnd(g.m);
	}
	if (prepack) {
		vw = aoe_grp_vec(s);
		nv = aoe_grp_nv(&g, s, vw);
		wp = malloc(sizeof(float) * aoe_grp_wsize(&g, vw, nv));
		aoe_grp_pack(&g, vw, nv, w, wp);
	}
	conv_reference(&g, x, w, bias, &a, add, r);
	*maxerr = INFINITY;
	if (aoe_grp_run(&g, x, w, wp, vw, nv, bias, &a, add, y, scratch, s,
	    nthreads) < 0)
		ok_ = 0;
	ok_ = ok_ && same(y, r, ny, maxerr);
	ok_ = guard_intact(y, ny, guard) && ok_;
	free(x);
	free(w);
	free(wp);
	free(bias);
	free(add);
	free(y);
	free(r);
	free(ps);
	free(pt);
	free(scratch);
	return ok_;
}

/*
 * A max pool of window k, stride s, leading pads pb, trailing pe and
 * ceil_mode ceil fused after the Conv: the kernel pooling as it goes
 * against the reference Conv, then a naive pool; 1 if it matched.  The
 * pool's geometry comes from aoe_pool2_of, as a Conv node's does.
 */
static int
run_pool_case(const spec *sp, const int64_t *pk, const int64_t *ps,
    const int64_t *pb, const int64_t *pe, int ceil, const aoe_sched *s,
    int nthreads, double *maxerr)
{
	aoe_conv_geom g;
	aoe_pool2 pl;
	aoe_node nd;
	aoe_attr at;
	aoe_act a;
	float *x, *w, *bias, *y, *r, *rp, *scratch;
	int64_t v[9], ny, np, i, c, oh, ow, ih, iw;
	int ok_ = 1;

	geom_of(sp, &g);
	for (i = 0; i < 2; i++) {
		v[i] = pk[i];
		v[2 + i] = ps[i];
		v[4 + i] = pb[i];
		v[6 + i] = pe[i];
	}
	v[8] = ceil;
	memset(&nd, 0, sizeof(nd));
	memset(&at, 0, sizeof(at));
	at.name = "_aoe_pool";
	at.type = AOE_A_INTS;
	at.n = 9;
	at.ints = v;
	nd.name = "conv";
	nd.op_type = "Conv";
	nd.attrs = &at;
	nd.nattr = 1;
	*maxerr = INFINITY;
	if (aoe_pool2_of(&nd, g.out + 1, &pl) != 1)
		return 0;
	ny = g.n * g.m * g.outsz;
	np = g.n * g.m * pl.out[0] * pl.out[1];
	x = rnd(g.n * g.c * g.insz);
	w = rnd(g.m * g.cg * g.ksz);
	bias = sp->bias ? rnd(g.m) : NULL;
	y = rnd(np);
	r = malloc(sizeof(float) * (size_t)ny);
	rp = malloc(sizeof(float) * (size_t)np);
	scratch = nan_scratch(&g);
	spec_act(sp, &a);
	conv_reference(&g, x, w, bias, &a, NULL, r);
	for (c = 0; c < g.n * g.m; c++)
		for (oh = 0; oh < pl.out[0]; oh++)
			for (ow = 0; ow < pl.out[1]; ow++) {
				float m = -INFINITY;
				for (ih = oh * ps[0] - pb[0]; ih < oh * ps[0] -
				    pb[0] + pk[0]; ih++)
					for (iw = ow * ps[1] - pb[1]; iw < ow *
					    ps[1] - pb[1] + pk[1]; iw++)
						if (ih >= 0 && ih < g.out[1] &&
						    iw >= 0 && iw < g.out[2])
							m = fmaxf(m, r[(c *
							    g.out[1] + ih) *
							    g.out[2] + iw]);
				rp[(c * pl.out[0] + oh) * pl.out[1] + ow] = m;
			}
	if (!aoe_grp_pool_ok(&g, &a, NULL) || aoe_grp_run_pool(&g, &pl, x,
	    w, NULL, 0, 0, bias, &a, y, scratch, s, nthreads) < 0)
		ok_ = 0;
	ok_ = ok_ && same(y, rp, np, maxerr);
	/* The pool apart, as a Conv that pools from its workspace. */
	if (ok_ && aoe_maxpool2d(&pl, r, g.n * g.m, g.out[1], g.out[2], y,
	    &nd, nthreads) < 0)
		ok_ = 0;
	ok_ = ok_ && memcmp(y, rp, sizeof(float) * (size_t)np) == 0;
	free(x);
	free(w);
	free(bias);
	free(y);
	free(r);
	free(rp);
	free(scratch);
	return ok_;
}

static int
irand(int n)
{
	return (int)((frand() + 1) / 2 * n) % n;
}

/* A random grouped shape the kernel takes. */
static void
random_spec(spec *s)
{
	static const int64_t mgs[] = { 8, 16, 16, 24, 32, 40, 64 };
	static const int64_t cgs[] = { 1, 3, 8, 16, 16, 24, 5 };
	static const int64_t sizes[] = { 1, 2, 3, 5, 7, 8, 13, 14, 15, 17, 28,
	    30 };
	static const int64_t ks[] = { 1, 3, 3, 3, 5, 2 };
	aoe_conv_geom g;

	do {
		memset(s, 0, sizeof(*s));
		s->n = 1 + (frand() > 0.8f);
		/* One group in five: a dense Conv. */
		s->group = frand() > 0.6f ? 1 : 2 + irand(5);
		s->mg = pick(mgs, 7);
		s->cg = frand() > 0.5f ? s->mg : pick(cgs, 7);
		s->h = pick(sizes, 12);
		s->w = frand() > 0.3f ? s->h : pick(sizes, 12);
		s->kh = pick(ks, 6);
		s->kw = frand() > 0.8f ? pick(ks, 6) : s->kh;
		s->sh = 1 + irand(frand() > 0.8f ? 3 : 2);
		s->sw = frand() > 0.8f ? 1 + irand(2) : (s->sh > 2 ? 2 : s->sh);
		s->dh = frand() > 0.85f ? 2 : 1;
		s->dw = frand() > 0.85f ? 2 : 1;
		s->pt = irand((int)s->kh + 1);
		s->pl = irand((int)s->kw + 1);
		s->pb = irand((int)s->kh + 1);
		s->pr = irand((int)s->kw + 1);
		s->act = irand(7);
		s->affine = frand() > 0.7f;
		s->add = frand() > 0.6f;
		s->bias = frand() > 0.3f;
		geom_of(s, &g);
	} while (g.out[1] < 1 || g.out[2] < 1 ||
	    g.n * g.m * g.outsz * g.cg * g.ksz > 3000000);
}

/*
 * A random stem the kernel takes: one group of 1 to 4 input channels,
 * 1 to 80 output channels (most not a multiple of 8), square or not
 * kernels of 3 to 7, strides 1 and 2, pads up to the kernel's.
 */
static void
random_stem(spec *s)
{
	static const int64_t mgs[] = { 64, 32, 16, 24, 1, 5, 13, 20, 37, 70,
	    80 };
	static const int64_t sizes[] = { 3, 5, 7, 9, 16, 17, 23, 31, 40, 57 };
	aoe_conv_geom g;

	do {
		memset(s, 0, sizeof(*s));
		s->n = 1 + (frand() > 0.8f);
		s->group = 1;
		s->cg = 1 + irand(4);
		s->mg = pick(mgs, 11);
		s->h = pick(sizes, 10);
		s->w = frand() > 0.3f ? s->h : pick(sizes, 10);
		s->kh = 3 + irand(5);
		s->kw = frand() > 0.8f ? 3 + irand(5) : s->kh;
		s->sh = 1 + irand(2);
		s->sw = frand() > 0.8f ? 1 + irand(2) : s->sh;
		s->dh = s->dw = 1;
		s->pt = irand((int)s->kh);
		s->pl = irand((int)s->kw);
		s->pb = irand((int)s->kh);
		s->pr = irand((int)s->kw);
		s->act = irand(7);
		s->affine = frand() > 0.7f;
		s->add = frand() > 0.6f;
		s->bias = frand() > 0.3f;
		geom_of(s, &g);
	} while (g.out[1] < 1 || g.out[2] < 1 ||
	    g.n * g.m * g.outsz * g.cg * g.ksz > 3000000);
}

/* A random schedule of grp_* knobs for g (sometimes the defaults). */
static void
random_sched(const aoe_conv_geom *g, aoe_sched *s)
{
	static const int64_t rows[] = { 0, 1, 2, 4, 8, 16 };
	int vw, nv, oh, pmax;

	memset(s, 0, sizeof(*s));
	if (frand() > 0.8f)
		return;
	vw = aoe_cpu_avx512() && frand() > 0 ? 16 : 8;
	nv = 1 + (frand() > 0);
	oh = 1 + (frand() > 0);
	pmax = vw == 16 ? (nv == 1 ? 14 : 12) : (nv == 1 ? 12 : 6);
	aoe_sched_set(s, "grp_vec", vw);
	aoe_sched_set(s, "grp_nv", nv);
	aoe_sched_set(s, "grp_oh", oh);
	aoe_sched_set(s, "grp_ow", 1 + irand(pmax / oh));
	aoe_sched_set(s, "grp_rows", pick(rows, 6));
	/*
	 * The tap form, the row form (where it applies: one vector of 16),
	 * the flat form (tiles of up to grp_ow pixels across rows) or auto.
	 */
	aoe_sched_set(s, "grp_form", irand(vw == 16 && nv == 1 ? 3 : 2));
	if (frand() > 0.5f) {
		aoe_sched_set(s, "grp_form", 3);
		aoe_sched_set(s, "grp_oh", 0);
		aoe_sched_set(s, "grp_ow", irand(pmax + 1));
	}
	/* The output rows asked for for writing: auto, never, always. */
	aoe_sched_set(s, "cpf", irand(3) - 1);
	(void)g;
}

static void
print_case(const spec *s, const aoe_sched *k, int th, double e)
{
	printf("# mismatch: n=%lld g=%lld cg=%lld mg=%lld %lldx%lld "
	    "k=%lldx%lld s=%lld,%lld d=%lld,%lld p=%lld,%lld,%lld,%lld "
	    "act=%s affine=%d add=%d bias=%d vec=%lld nv=%lld oh=%lld "
	    "ow=%lld rows=%lld form=%lld cpf=%lld threads=%d error %.3g\n",
	    (long long)s->n,
	    (long long)s->group, (long long)s->cg, (long long)s->mg,
	    (long long)s->h, (long long)s->w, (long long)s->kh,
	    (long long)s->kw, (long long)s->sh, (long long)s->sw,
	    (long long)s->dh, (long long)s->dw, (long long)s->pt,
	    (long long)s->pl, (long long)s->pb, (long long)s->pr,
	    actname[s->act], s->affine, s->add, s->bias,
	    (long long)aoe_sched_get(k, "grp_vec", 0),
	    (long long)aoe_sched_get(k, "grp_nv", 0),
	    (long long)aoe_sched_get(k, "grp_oh", 0),
	    (long long)aoe_sched_get(k, "grp_ow", 0),
	    (long long)aoe_sched_get(k, "grp_rows", 0),
	    (long long)aoe_sched_get(k, "grp_form", 0),
	    (long long)aoe_sched_get(k, "cpf", AOE_CPF_DEF), th, e);
}

/*
 * A grouped Conv node: x n x c x h x w, W m x cg x kh x kw (constant),
 * a bias, and the activation act fused.
 */
static int
conv_graph(tg *t, const spec *s, int act)
{
	aoe_conv_geom g;
	int64_t xd[4], wd[4], bd[1], ks[2], ss[2], ds[2], pads[4];

	geom_of(s, &g);
	xd[0] = s->n;
	xd[1] = g.c;
	xd[2] = s->h;
	xd[3] = s->w;
	wd[0] = g.m;
	wd[1] = s->cg;
	wd[2] = s->kh;
	wd[3] = s->kw;
	bd[0] = g.m;
	ks[0] = s->kh;
	ks[1] = s->kw;
	ss[0] = s->sh;
	ss[1] = s->sw;
	ds[0] = s->dh;
	ds[1] = s->dw;
	pads[0] = s->pt;
	pads[1] = s->pl;
	pads[2] = s->pb;
	pads[3] = s->pr;
	tg_new(t, "grp");
	tg_input(t, 0, 4, xd);
	tg_input(t, 1, 4, wd);
	tg_input(t, 1, 1, bd);
	tg_node(t, "Conv");
	attr_i(t, "group", s->group);
	attr_is(t, "kernel_shape", 2, ks);
	attr_is(t, "strides", 2, ss);
	attr_is(t, "dilations", 2, ds);
	attr_is(t, "pads", 4, pads);
	if (act) {
		aoe_node_add_attr(t->n, "_aoe_act", AOE_A_INT)->i = act;
		aoe_node_add_attr(t->n, "_aoe_act_lo", AOE_A_FLOAT)->f = 0;
		aoe_node_add_attr(t->n, "_aoe_act_hi", AOE_A_FLOAT)->f = 6;
	}
	return tg_prepare(t);
}

/* The node's output under s at 1 and 2 threads against ref. */
static int
node_matches(tg *t, const aoe_sched *s, const float *ref, double *e)
{
	int th, ok_ = 1;

	if (aoe_space_apply(t->g, t->n, s) < 0)
		return 0;
	for (th = 1; th <= 2 && ok_; th++) {
		opts.nthreads = th;
		if (aoe_graph_run(t->g, &opts) < 0)
			return 0;
		ok_ = same(t->g->tensors[t->y]->data, ref, numel_y(t), e);
	}
	opts.nthreads = 1;
	return ok_;
}

/*
 * Schedules sampled from a grouped Conv's space (algo 8 ones, and any
 * others) against the reference.
 */
static void
test_space(const spec *s, int act)
{
	aoe_space sp;
	aoe_sched k;
	aoe_conv_geom g;
	aoe_act a;
	float *ref;
	uint64_t seed = 7;
	double e = 0;
	int i, tries, runs = 0, bad = 0, algo8 = 0;
	tg t;

	geom_of(s, &g);
	if (conv_graph(&t, s, act) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "space case: build");
		return;
	}
	memset(&a, 0, sizeof(a));
	a.kind = act;
	a.lo = act == AOE_ACT_CLIP ? 0 : -FLT_MAX;
	a.hi = act == AOE_ACT_CLIP ? 6 : FLT_MAX;
	ref = malloc(sizeof(float) * (size_t)numel_y(&t));
	conv_reference(&g, data(&t, 0), data(&t, 1), data(&t, 2), &a, NULL, ref);
	bad |= !node_matches(&t, &sp.def, ref, &e);
	runs++;
	for (i = 0; i < 10 && !bad; i++) {
		for (tries = 0; tries < 2000; tries++)
			if (aoe_space_sample(&sp, &seed, &k) == 0 &&
			    (i % 3 == 2 || aoe_sched_get(&k, "algo", 0) == 8))
				break;
		if (tries == 2000)
			continue;
		algo8 += aoe_sched_get(&k, "algo", 0) == 8;
		if (!node_matches(&t, &k, ref, &e)) {
			bad = 1;
			print_case(s, &k, 0, e);
			printf("#   algo %lld\n", (long long)aoe_sched_get(&k,
			    "algo", 0));
		}
		runs++;
	}
	ok(!bad && algo8 > 0, "Conv g=%lld %lld>%lld %lldx%lld k=%lld "
	    "s=%lld act=%d: %d sampled schedules (%d algo=8) match at 1 and 2 "
	    "threads, error %.2g", (long long)s->group, (long long)g.c,
	    (long long)g.m, (long long)s->h, (long long)s->w,
	    (long long)s->kh, (long long)s->sh, act, runs, algo8, e);
	free(ref);
	aoe_graph_free(t.g);
}

/*
 * GRPCONV_BENCH: microseconds regnet_x_400mf's grouped layers take as a
 * Conv node (Relu fused) under the implicit GEMM and algo 8 (default,
 * and a few forced shapes), interleaved, the median of 15 rounds (CPU
 * time at 1 thread, wall clock at 2: GRPCONV_THREADS).
 */
static void
bench(void)
{
	/* groups, input hw, stride; 16 channels a group, 3x3, pad 1. */
	static const int64_t L[][3] = { { 2, 112, 2 }, { 2, 56, 1 },
	    { 4, 56, 2 }, { 4, 28, 1 }, { 10, 28, 2 }, { 10, 14, 1 },
	    { 25, 14, 2 }, { 25, 7, 1 } };
	static const int64_t cfg[][4] = { { 2, 0, 0, 0 }, { 8, 0, 0, 0 },
	    { 8, 8, 0, 0 }, { 8, 0, 0, 4 }, { 8, 0, 0, 8 }, { 8, 0, 0, 16 } };
	enum { NC = sizeof(cfg) / sizeof(cfg[0]) };
	unsigned k;
	int th = getenv("GRPCONV_THREADS") ? atoi(getenv("GRPCONV_THREADS")) :
	    1;

	printf("# bench: %d thread(s), %s; us, medians of 15; columns "
	    "algo,grp_vec,grp_nv,grp_rows\n# %-12s", th,
	    aoe_cpu_avx512() ? "avx512" : "avx2", "layer");
	for (k = 0; k < NC; k++)
		printf("   %lld,%2lld,%lld,%lld", (long long)cfg[k][0],
		    (long long)cfg[k][1], (long long)cfg[k][2],
		    (long long)cfg[k][3]);
	printf("\n");
	for (k = 0; k < sizeof(L) / sizeof(L[0]); k++) {
		spec s = { 1, L[k][0], 16, 16, L[k][1], L[k][1], 3, 3,
		    L[k][2], L[k][2], 1, 1, 1, 1, 1, 1, 0, 0, 0, 1 };
		double tm[NC][15];
		int r, c, it, reps;
		aoe_conv_geom g;
		tg t;

		geom_of(&s, &g);
		if (conv_graph(&t, &s, AOE_ACT_RELU) < 0)
			continue;
		reps = (int)(3e7 / (double)(g.m * g.outsz * 144)) + 1;
		opts.nthreads = th;
		for (r = 0; r < 15; r++)
			for (c = 0; c < NC; c++) {
				aoe_sched q;
				double t0;
				memset(&q, 0, sizeof(q));
				aoe_sched_set(&q, "algo", cfg[c][0]);
				if (cfg[c][0] == 8) {
					aoe_sched_set(&q, "grp_vec", cfg[c][1]);
					aoe_sched_set(&q, "grp_nv", cfg[c][2]);
					aoe_sched_set(&q, "grp_rows",
					    cfg[c][3]);
				}
				tm[c][r] = 0;
				if (aoe_space_apply(t.g, t.n, &q) < 0)
					continue;
				aoe_graph_run(t.g, &opts);
				t0 = cputime(th > 1);
				for (it = 0; it < reps; it++)
					aoe_graph_run(t.g, &opts);
				tm[c][r] = (cputime(th > 1) - t0) / reps * 1e6;
			}
		printf("  g%-2lld %3lld/%lld  ", (long long)L[k][0],
		    (long long)L[k][1], (long long)L[k][2]);
		for (c = 0; c < NC; c++) {
			qsort(tm[c], 15, sizeof(double), dcmp);
			printf(" %9.1f", tm[c][7]);
		}
		printf("   (%.1f GFLOP/s at algo 8)\n", 2.0 * g.m * g.outsz *
		    144 / tm[1][7] / 1e3);
		fflush(stdout);
		aoe_graph_free(t.g);
	}
	opts.nthreads = 1;
}

/* Whether the Conv of s (Relu fused) defaults to knob = want. */
static void
default_knob(const spec *s, const char *knob, int64_t want,
    const char *what)
{
	aoe_space sp;
	tg t;

	if (conv_graph(&t, s, AOE_ACT_RELU) < 0 ||
	    aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "%s: build", what);
		aoe_graph_free(t.g);
		return;
	}
	ok(aoe_sched_get(&sp.def, knob, 0) == want, "%s defaults to "
	    "%s %lld", what, knob, (long long)want);
	aoe_graph_free(t.g);
}

static void
default_algo(const spec *s, int want, const char *what)
{
	default_knob(s, "algo", want, what);
}

int
main(void)
{
	static const int64_t fixed[][5] = { { 2, 112, 2, 16, 16 },
	    { 2, 56, 1, 16, 16 }, { 4, 28, 1, 16, 16 }, { 10, 28, 2, 16, 16 },
	    { 25, 14, 2, 16, 16 }, { 25, 7, 1, 16, 16 }, { 8, 9, 1, 8, 8 },
	    { 3, 10, 2, 24, 24 }, { 4, 12, 1, 32, 32 } };
	int i, th, good, bad = 0, nc = 0;
	double e, worst = 0;
	aoe_conv_geom g;
	aoe_sched k;
	unsigned f;
	int form;

	(void)data;
	if (getenv("GRPCONV_BENCH")) {
		bench();
		return 0;
	}
	/* regnet_x_400mf's shapes (and widths 8, 24, 32) at the defaults. */
	for (f = 0; f < sizeof(fixed) / sizeof(fixed[0]); f++) {
		spec s = { 1, fixed[f][0], fixed[f][4], fixed[f][3],
		    fixed[f][1], fixed[f][1], 3, 3, fixed[f][2], fixed[f][2],
		    1, 1, 1, 1, 1, 1, (int)(f % 7), (int)(f & 1),
		    (int)(f % 3 == 0), 1 };
		memset(&k, 0, sizeof(k));
		good = run_case(&s, &k, (int)(f & 1), 2, &e);
		ok(good, "g=%lld %lldx%lld "
		    "/%lld mg=%lld act=%s: max error %.2g",
		    (long long)s.group, (long long)s.h, (long long)s.w,
		    (long long)s.sh, (long long)s.mg, actname[s.act], e);
		/*
		 * The tap form, where the default is the row form or the
		 * flat one, and the flat form.
		 */
		for (form = 1; form <= 3; form += 2) {
			aoe_sched_set(&k, "grp_form", form);
			good = run_case(&s, &k, (int)(f & 1), 2, &e);
			ok(good, "g=%lld %lldx%lld /%lld mg=%lld act=%s, "
			    "grp_form=%d: max error %.2g", (long long)s.group,
			    (long long)s.h, (long long)s.w, (long long)s.sh,
			    (long long)s.mg, actname[s.act], form, e);
		}
	}
	/* A plane whose padded input passes 4 MB: work items of row blocks. */
	{
		spec s = { 1, 2, 64, 8, 20, 2000, 1, 3, 1, 1, 1, 1, 0, 1, 0, 1,
		    1, 0, 1, 1 };
		memset(&k, 0, sizeof(k));
		good = run_case(&s, &k, 0, 2, &e);
		ok(good, "g=2 cg=64 20x2000 1x3: max "
		    "error %.2g", e);
	}
	/* Random shapes and schedules, each at 1 and 2 threads. */
	for (i = 0; i < 150; i++) {
		spec s;
		random_spec(&s);
		geom_of(&s, &g);
		random_sched(&g, &k);
		for (th = 1; th <= 2; th++) {
			nc++;
			if (!run_case(&s, &k, i & 1, th, &e)) {
				bad++;
				print_case(&s, &k, th, e);
			}
			if (e > worst)
				worst = e;
		}
	}
	ok(bad == 0, "%d random grouped cases (widths 8 to 64, 1 and 2 "
	    "threads, random tiles) match the reference, worst error %.2g",
	    nc, worst);
	/* Random stems (one group, 1 to 4 input channels), likewise. */
	bad = nc = 0;
	worst = 0;
	for (i = 0; i < 120; i++) {
		spec s;
		random_stem(&s);
		geom_of(&s, &g);
		if (!aoe_grp_ok(&g)) {
			bad++;
			print_case(&s, &k, 0, 0);
			continue;
		}
		random_sched(&g, &k);
		/* Channels or pixels along the lanes, in turn. */
		aoe_sched_set(&k, "grp_lanes", i % 3);
		for (th = 1; th <= 2; th++) {
			nc++;
			if (!run_case(&s, &k, i & 1, th, &e)) {
				bad++;
				print_case(&s, &k, th, e);
				printf("#   grp_lanes %d\n", i % 3);
			}
			if (e > worst)
				worst = e;
		}
	}
	ok(bad == 0, "%d random stem cases (1 to 4 input channels, 1 to 80 "
	    "output channels, kernels 3 to 7, strides 1 and 2, 1 and 2 "
	    "threads, random tiles, channels or pixels along the lanes) "
	    "match the reference, worst error %.2g", nc, worst);
	/*
	 * A max pool fused after the Conv: random stems (some of wide
	 * planes) and dense Convs (no epilogue, Relu or Clip), windows 1 to
	 * 4, strides 1 to 3,
	 * pads below the window, ceil_mode, at 1 and 2 threads, the rows
	 * a work item random; and the pool computed apart.
	 */
	bad = nc = 0;
	worst = 0;
	for (i = 0; i < 120; i++) {
		spec s;
		int64_t pk[2], ps[2], pb[2], pe[2];
		int j;
		do {
			if (i % 2)
				random_stem(&s);
			else
				random_spec(&s);
			s.group = 1;
			s.add = s.affine = 0;
			s.act = irand(3);
			/*
			 * Wide stems: rows of many floats, so that an item's
			 * rows take several bands.
			 */
			if (i % 4 == 1) {
				s.w = 150 + irand(200);
				s.h = 8 + irand(24);
			}
			geom_of(&s, &g);
		} while (!aoe_grp_ok(&g) || g.out[1] < 2 || g.out[2] < 2);
		for (j = 0; j < 2; j++) {
			pk[j] = 1 + irand((int)min64(4, g.out[1 + j]));
			ps[j] = 1 + irand(3);
			pb[j] = irand((int)pk[j]);
			pe[j] = irand((int)pk[j]);
		}
		random_sched(&g, &k);
		for (th = 1; th <= 2; th++) {
			nc++;
			if (!run_pool_case(&s, pk, ps, pb, pe, i % 3 == 0, &k,
			    th, &e)) {
				bad++;
				print_case(&s, &k, th, e);
				printf("#   pool %lldx%lld /%lld,%lld pads "
				    "%lld,%lld,%lld,%lld ceil %d\n",
				    (long long)pk[0], (long long)pk[1],
				    (long long)ps[0], (long long)ps[1],
				    (long long)pb[0], (long long)pb[1],
				    (long long)pe[0], (long long)pe[1], i % 3 == 0);
			}
			if (e > worst)
				worst = e;
		}
	}
	ok(bad == 0, "%d random Convs with a fused max pool (stems and dense, "
	    "windows 1 to 4, strides 1 to 3, pads, ceil_mode, 1 and 2 "
	    "threads) match the reference, and so does the pool apart, "
	    "worst error %.2g", nc, worst);
	/* squeezenet's and resnet's stems with their pools. */
	{
		static const int64_t sp[][8] = {
		    { 3, 64, 224, 3, 2, 0, 0, 1 },	/* squeezenet1_1 */
		    { 3, 64, 224, 7, 2, 3, 1, 0 } };	/* resnet */
		for (f = 0; f < 2; f++) {
			spec s = { 1, 1, sp[f][0], sp[f][1], sp[f][2],
			    sp[f][2], sp[f][3], sp[f][3], sp[f][4], sp[f][4],
			    1, 1, sp[f][5], sp[f][5], sp[f][5], sp[f][5], 1, 0,
			    0, 1 };
			int64_t pk[2] = { 3, 3 }, ps[2] = { 2, 2 };
			int64_t pp[2] = { sp[f][6], sp[f][6] };
			memset(&k, 0, sizeof(k));
			good = run_pool_case(&s, pk, ps, pp, pp, (int)sp[f][7],
			    &k, 2, &e);
			ok(good, "stem %lld>%lld @%lld %lldx%lld/%lld, Relu, "
			    "MaxPool 3x3/2%s: max error %.2g",
			    (long long)s.cg, (long long)s.mg, (long long)s.h,
			    (long long)s.kh, (long long)s.kh, (long long)s.sh,
			    sp[f][7] ? " ceil" : " pad 1", e);
		}
	}
	/* The stems of squeezenet, resnet and the MobileNets, at the defaults. */
	{
		static const int64_t st[][5] = { { 3, 64, 224, 3, 2 },
		    { 3, 64, 224, 7, 2 }, { 3, 32, 224, 3, 2 },
		    { 3, 16, 224, 3, 2 } };
		for (f = 0; f < sizeof(st) / sizeof(st[0]); f++) {
			spec s = { 1, 1, st[f][0], st[f][1], st[f][2],
			    st[f][2], st[f][3], st[f][3], st[f][4], st[f][4],
			    1, 1, st[f][3] / 2, st[f][3] / 2, st[f][3] / 2,
			    st[f][3] / 2, (int)(f % 2), 0, 0, 1 };
			if (f == 0)
				s.pt = s.pl = s.pb = s.pr = 0;
			memset(&k, 0, sizeof(k));
			good = run_case(&s, &k, 1, 2, &e);
			ok(good, "stem %lld>%lld @%lld "
			    "%lldx%lld/%lld: max error %.2g",
			    (long long)s.cg, (long long)s.mg, (long long)s.h,
			    (long long)s.kh, (long long)s.kh, (long long)s.sh,
			    e);
		}
	}
	/* Conv nodes through their space. */
	{
		spec s1 = { 1, 4, 16, 16, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1,
		    0, 0, 0, 1 };
		spec s2 = { 2, 3, 8, 24, 9, 11, 3, 3, 2, 2, 1, 1, 1, 0, 1, 1,
		    0, 0, 0, 1 };
		spec s3 = { 1, 5, 16, 8, 7, 7, 5, 5, 1, 1, 1, 1, 2, 2, 2, 2,
		    0, 0, 0, 1 };
		spec s4 = { 1, 1, 3, 20, 17, 19, 5, 5, 2, 2, 1, 1, 2, 1, 2, 2,
		    0, 0, 0, 1 };
		test_space(&s1, AOE_ACT_RELU);
		test_space(&s2, AOE_ACT_SILU);
		test_space(&s3, AOE_ACT_CLIP);
		test_space(&s4, AOE_ACT_RELU);
	}
	/* The refusals: other group widths and strides keep other algos. */
	{
		spec s = { 1, 4, 12, 12, 14, 14, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1,
		    0, 0, 0, 1 };
		aoe_space sp;
		tg t;
		char why[256];
		int refused;

		geom_of(&s, &g);
		ok(!aoe_grp_ok(&g), "12 channels a group: not algo 8");
		s.mg = 16;
		s.cg = 16;
		s.sw = 3;
		geom_of(&s, &g);
		ok(!aoe_grp_ok(&g), "column stride 3: not algo 8");
		s.sw = 1;
		s.group = 1;
		s.mg = 12;
		geom_of(&s, &g);
		ok(!aoe_grp_ok(&g), "one group of 12 output channels: not "
		    "algo 8");
		s.mg = 16;
		geom_of(&s, &g);
		ok(aoe_grp_ok(&g), "one group of 16 output channels: algo 8");
		s.mg = 12;
		s.cg = 12;
		s.group = 4;
		if (conv_graph(&t, &s, 0) == 0 && aoe_space_for(t.g, t.n,
		    &sp) == 0) {
			memset(&k, 0, sizeof(k));
			aoe_sched_set(&k, "algo", 8);
			refused = aoe_space_validate(&sp, &k, why,
			    sizeof(why)) < 0;
			ok(refused, "algo=8 refused by a 12-channel group's "
			    "space");
			ok(aoe_sched_get(&sp.def, "algo", 0) != 8,
			    "a 12-channel group's default is not algo 8");
			aoe_graph_free(t.g);
		} else
			ok(0, "12-channel group: build");
		/* The grp knobs are refused with another algo. */
		s.mg = s.cg = 16;
		if (conv_graph(&t, &s, 0) == 0 && aoe_space_for(t.g, t.n,
		    &sp) == 0) {
			memset(&k, 0, sizeof(k));
			aoe_sched_set(&k, "algo", 2);
			aoe_sched_set(&k, "grp_nv", 1);
			ok(aoe_space_validate(&sp, &k, why, sizeof(why)) < 0,
			    "grp_nv refused with algo=2");
			aoe_sched_set(&k, "algo", 8);
			ok(aoe_space_validate(&sp, &k, why, sizeof(why)) == 0,
			    "grp_nv taken with algo=8");
			/* The row form is one vector's, 16 wide. */
			aoe_sched_set(&k, "grp_form", 2);
			ok((aoe_space_validate(&sp, &k, why, sizeof(why)) ==
			    0) == aoe_cpu_avx512(), "grp_form=2 with "
			    "grp_nv=1 %s", aoe_cpu_avx512() ? "taken" :
			    "refused without AVX-512");
			aoe_sched_set(&k, "grp_nv", 2);
			ok(aoe_space_validate(&sp, &k, why, sizeof(why)) < 0,
			    "grp_form=2 refused with grp_nv=2");
			aoe_sched_set(&k, "grp_nv", 1);
			aoe_sched_set(&k, "grp_vec", 8);
			ok(aoe_space_validate(&sp, &k, why, sizeof(why)) < 0,
			    "grp_form=2 refused with grp_vec=8");
			/* Flat tiles are a row of pixels: no grp_oh. */
			aoe_sched_set(&k, "grp_form", 3);
			ok(aoe_space_validate(&sp, &k, why, sizeof(why)) == 0,
			    "grp_form=3 taken with algo=8");
			aoe_sched_set(&k, "grp_oh", 2);
			ok(aoe_space_validate(&sp, &k, why, sizeof(why)) < 0,
			    "grp_form=3 refused with grp_oh=2");
			memset(&k, 0, sizeof(k));
			aoe_sched_set(&k, "algo", 8);
			ok(aoe_sched_get(&sp.def, "algo", 0) == 8,
			    "regnet's 16-channel groups default to algo 8");
			aoe_graph_free(t.g);
		} else
			ok(0, "16-channel group: build");
		/* A stem defaults to algo 8; 5 input channels are no stem. */
		s.group = 1;
		s.cg = 3;
		s.mg = 64;
		s.sh = s.sw = 2;
		default_algo(&s, 8, "a 3>64 3x3/2 stem");
		s.cg = 5;
		s.mg = 20;
		geom_of(&s, &g);
		ok(!aoe_grp_ok(&g), "one group of 5 input channels and 20 "
		    "output channels: not algo 8");
		/*
		 * Dense 3x3 Convs: algo 8 by default at stride 2 (but algo 7
		 * under AVX2 from 64 channels in and out), Winograd at
		 * stride 1, and a 1x1 keeps the GEMM.
		 */
		s.cg = 32;
		s.mg = 64;
		s.h = s.w = 28;
		default_algo(&s, 8, "a dense 32>64 3x3/2");
		s.cg = 64;
		s.mg = 128;
		default_algo(&s, aoe_cpu_avx512() ? 8 : 7,
		    "a dense 64>128 3x3/2");
		s.sh = s.sw = 1;
		default_algo(&s, 5, "a dense 64>128 3x3/1");
		s.kh = s.kw = 1;
		s.pt = s.pl = s.pb = s.pr = 0;
		default_algo(&s, 1, "a dense 64>128 1x1");
		/*
		 * A strided 1x1 at 14x14 (7x7 out) turns round (algo 6) with
		 * many weights only, under AVX2 as under AVX-512.
		 */
		s.sh = s.sw = 2;
		s.h = s.w = 14;
		s.cg = 160;
		s.mg = 400;
		default_algo(&s, 2, "a strided 1x1 160>400 @14/2");
		s.cg = 1024;
		s.mg = 2048;
		default_algo(&s, 6, "a strided 1x1 1024>2048 @14/2");
		/*
		 * A pointwise Conv's blocks: under AVX2 192 deep past 256
		 * input channels, else the GEMM's 384; with AVX-512 all of
		 * K up to 1024 (the first of 256, 384, ... that holds it).
		 */
		s.sh = s.sw = 1;
		s.cg = 384;
		s.mg = 64;
		default_knob(&s, "kc", aoe_cpu_avx512() ? 384 : 192,
		    "a 1x1 384>64 @14");
		s.cg = 256;
		s.mg = 1024;
		default_knob(&s, "kc", aoe_cpu_avx512() ? 256 : 384,
		    "a 1x1 256>1024 @14");
		/*
		 * Grouped 3x3 at unit strides: Winograd under AVX2 from 28x28
		 * planes, the grouped kernel at 14x14 and with AVX-512.
		 */
		s.group = 4;
		s.cg = s.mg = 16;
		s.kh = s.kw = 3;
		s.sh = s.sw = 1;
		s.pt = s.pl = s.pb = s.pr = 1;
		s.h = s.w = 28;
		default_algo(&s, aoe_cpu_avx512() ? 8 : 5,
		    "a grouped 64>64 3x3/1 @28, 4 groups");
		s.group = 10;
		s.h = s.w = 14;
		default_algo(&s, 8, "a grouped 160>160 3x3/1 @14, 10 groups");
	}
	return done_testing();
}
