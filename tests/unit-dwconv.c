/*
 * unit-dwconv - TAP property tests of the depthwise convolution by rows
 * (lib/kernels/k_dwconv.c, Conv's algo 4 with dw_rows=1): over random
 * 2-D shapes (3x3 and 5x5 and odd kernels, strides 1, 2 and 3,
 * dilations, asymmetric pads, channel counts that are and are not
 * multiples of 8 and 16, depth multipliers, batches, planes narrower
 * than one vector) with the fused epilogues (none, Relu, Clip, Sigmoid,
 * HardSwish, a per-channel affine and a residual), at vector widths 8
 * and 16 and at 1 and 2 threads, the kernel matches a naive reference.
 * With DWCONV_BENCH set it also times a few MobileNet layers.
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

typedef struct spec {
	int64_t n, c, mult, h, w, kh, kw, sh, sw, dh, dw, pt, pl, pb, pr;
	int act, affine, add, bias;
} spec;

static void
geom_of(const spec *s, aoe_conv_geom *g)
{
	memset(g, 0, sizeof(*g));
	g->nsp = 2;
	g->n = s->n;
	g->c = s->c;
	g->m = s->c * s->mult;
	g->group = s->c;
	g->cg = 1;
	g->mg = s->mult;
	g->in[0] = g->out[0] = g->k[0] = g->s[0] = g->d[0] = 1;
	g->in[1] = s->h;
	g->in[2] = s->w;
	g->k[1] = s->kh;
	g->k[2] = s->kw;
	g->s[1] = s->sh;
	g->s[2] = s->sw;
	g->d[1] = s->dh;
	g->d[2] = s->dw;
	g->pb[1] = s->pt;
	g->pb[2] = s->pl;
	g->pe[1] = s->pb;
	g->pe[2] = s->pr;
	g->out[1] = (s->h + s->pt + s->pb - (s->kh - 1) * s->dh - 1) / s->sh + 1;
	g->out[2] = (s->w + s->pl + s->pr - (s->kw - 1) * s->dw - 1) / s->sw + 1;
	g->insz = s->h * s->w;
	g->outsz = g->out[1] * g->out[2];
	g->ksz = s->kh * s->kw;
}

static float
ref_act(const aoe_act *a, float v)
{
	switch (a->kind) {
	case AOE_ACT_RELU:
		return v < 0 ? 0 : v;
	case AOE_ACT_CLIP:
		return v < a->lo ? a->lo : v > a->hi ? a->hi : v;
	case AOE_ACT_SIGMOID:
		return 1 / (1 + expf(-v));
	case AOE_ACT_HARDSWISH: {
		float h = v / 6 + .5f;
		return v * (h < 0 ? 0 : h > 1 ? 1 : h);
	}
	}
	return v;
}

static void
reference(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const aoe_act *a, const float *add, float *y)
{
	int64_t b, m, oh, ow, kh, kw;

	for (b = 0; b < g->n; b++)
		for (m = 0; m < g->m; m++)
			for (oh = 0; oh < g->out[1]; oh++)
				for (ow = 0; ow < g->out[2]; ow++) {
					double acc = bias ? bias[m] : 0;
					int64_t o = ((b * g->m + m) * g->out[1] +
					    oh) * g->out[2] + ow;
					float v;
					for (kh = 0; kh < g->k[1]; kh++)
						for (kw = 0; kw < g->k[2]; kw++) {
							int64_t ih = oh * g->s[1] -
							    g->pb[1] + kh * g->d[1];
							int64_t iw = ow * g->s[2] -
							    g->pb[2] + kw * g->d[2];
							if (ih < 0 || ih >= g->in[1] ||
							    iw < 0 || iw >= g->in[2])
								continue;
							acc += (double)w[m * g->ksz +
							    kh * g->k[2] + kw] *
							    x[((b * g->c + m / g->mg) *
							    g->in[1] + ih) * g->in[2] + iw];
						}
					v = (float)acc + (add ? add[o] : 0);
					v = ref_act(a, v);
					if (a->ps || a->pt)
						v = v * (a->ps ? a->ps[m] : 1) +
						    (a->pt ? a->pt[m] : 0);
					y[o] = v;
				}
}

static float *
rnd(int64_t n)
{
	float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = frand();
	return p;
}

static const char *const actname[] = { "none", "relu", "clip", "sigmoid",
    "hardswish" };

/* One case at vector width vw and nthreads threads; 1 if it matched. */
static int
run_case(const spec *s, int vw, int nthreads, double *maxerr)
{
	aoe_conv_geom g;
	aoe_act a;
	float *x, *w, *bias, *add, *y, *r, *ps = NULL, *pt = NULL;
	int64_t ny, i;
	int ok_ = 1;

	geom_of(s, &g);
	ny = g.n * g.m * g.outsz;
	x = rnd(g.n * g.c * g.insz);
	w = rnd(g.m * g.ksz);
	bias = s->bias ? rnd(g.m) : NULL;
	add = s->add ? rnd(ny) : NULL;
	y = rnd(ny);
	r = malloc(sizeof(float) * (size_t)(ny > 0 ? ny : 1));
	memset(&a, 0, sizeof(a));
	a.kind = s->act;
	a.lo = s->act == AOE_ACT_CLIP ? -0.25f : -FLT_MAX;
	a.hi = s->act == AOE_ACT_CLIP ? 0.5f : FLT_MAX;
	if (s->affine) {
		a.ps = ps = rnd(g.m);
		a.pt = pt = rnd(g.m);
	}
	reference(&g, x, w, bias, &a, add, r);
	if (aoe_dw_rows(&g, x, w, bias, &a, add, y, vw, nthreads) < 0)
		ok_ = 0;
	*maxerr = 0;
	for (i = 0; ok_ && i < ny; i++) {
		double e = fabs((double)y[i] - r[i]);
		if (e > *maxerr)
			*maxerr = e;
		if (!(e <= 1e-4 * (1 + fabs(r[i]))))
			ok_ = 0;
	}
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

static int64_t
pick(const int64_t *v, int n)
{
	return v[(int)((frand() + 1) / 2 * n) % n];
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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
 * DWCONV_BENCH: microseconds a MobileNet layer takes as a Conv node,
 * the older kernels (dw_rows=0) and this one at each width, interleaved
 * (medians of 15 rounds).
 */
static int
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static void
bench(void)
{
	static const int64_t L[][4] = { { 96, 112, 3, 2 }, { 144, 56, 3, 1 },
	    { 144, 56, 3, 2 }, { 240, 28, 5, 1 }, { 384, 14, 3, 1 },
	    { 672, 14, 5, 2 }, { 960, 7, 5, 1 }, { 33, 56, 3, 1 } };
	static const int64_t cfg[][2] = { { 0, 0 }, { 1, 8 }, { 1, 16 } };
	unsigned k;
	int th = getenv("DWCONV_THREADS") ? atoi(getenv("DWCONV_THREADS")) : 1;

	opts.nthreads = th;
	for (k = 0; k < sizeof(L) / sizeof(L[0]); k++) {
		tg t;
		double tm[3][15];
		int r, c, it;
		if (conv_graph(&t, L[k][0], L[k][1], L[k][2], L[k][3]) < 0)
			continue;
		for (r = 0; r < 15; r++)
			for (c = 0; c < 3; c++) {
				aoe_sched s;
				double t0;
				memset(&s, 0, sizeof(s));
				aoe_sched_set(&s, "algo", 4);
				aoe_sched_set(&s, "dw_rows", cfg[c][0]);
				aoe_sched_set(&s, "dw_vec", cfg[c][1]);
				if (aoe_space_apply(t.g, t.n, &s) < 0)
					continue;
				aoe_graph_run(t.g, &opts);
				t0 = now();
				for (it = 0; it < 10; it++)
					aoe_graph_run(t.g, &opts);
				tm[c][r] = (now() - t0) / 10 * 1e6;
			}
		for (c = 0; c < 3; c++)
			qsort(tm[c], 15, sizeof(double), dcmp);
		printf("# bench %d thread(s) dw %lldx%lld/%lld c=%lld hw=%lld: "
		    "old %.1f us, rows vw=8 %.1f us, rows vw=16 %.1f us\n", th,
		    (long long)L[k][2], (long long)L[k][2], (long long)L[k][3],
		    (long long)L[k][0], (long long)L[k][1], tm[0][7], tm[1][7],
		    tm[2][7]);
		aoe_graph_free(t.g);
	}
}

int
main(void)
{
	static const int64_t chans[] = { 1, 3, 7, 8, 9, 15, 16, 17, 24, 33 };
	static const int64_t sizes[] = { 1, 2, 3, 5, 7, 8, 13, 16, 17, 31, 33,
	    64, 70 };
	static const int64_t ks[] = { 1, 2, 3, 3, 5, 5, 7 };
	static const int64_t strides[] = { 1, 1, 2, 2, 3 };
	int i, vw, th, bad = 0, nc = 0;
	double e, worst = 0;
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
				ok(run_case(&s, vw, 2, &e), "dw %lldx%lld/%lld "
				    "c=%lld hw=%lld act=%s vw=%d: max error %.2g",
				    (long long)s.kh, (long long)s.kw,
				    (long long)s.sh, (long long)s.c,
				    (long long)s.h, actname[s.act], vw, e);
			}
	}
	/* Random shapes, each at both widths and thread counts. */
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
		for (vw = 8; vw <= 16; vw += 8)
			for (th = 1; th <= 2; th++) {
				nc++;
				if (!run_case(&s, vw, th, &e)) {
					bad++;
					printf("# mismatch: n=%lld c=%lld x%lld "
					    "%lldx%lld k=%lldx%lld s=%lld,%lld "
					    "d=%lld,%lld p=%lld,%lld,%lld,%lld "
					    "act=%s affine=%d add=%d bias=%d "
					    "vw=%d threads=%d error %.3g\n",
					    (long long)s.n, (long long)s.c,
					    (long long)s.mult, (long long)s.h,
					    (long long)s.w, (long long)s.kh,
					    (long long)s.kw, (long long)s.sh,
					    (long long)s.sw, (long long)s.dh,
					    (long long)s.dw, (long long)s.pt,
					    (long long)s.pl, (long long)s.pb,
					    (long long)s.pr, actname[s.act],
					    s.affine, s.add, s.bias, vw, th, e);
				}
				if (e > worst)
					worst = e;
			}
	}
	ok(bad == 0, "%d random depthwise cases (widths 8 and 16, 1 and 2 "
	    "threads) match the reference, worst error %.2g", nc, worst);
	/* Through Conv's space: each dw schedule gives the same output. */
	{
		static const int64_t L[][4] = { { 17, 23, 3, 1 },
		    { 24, 30, 5, 2 }, { 40, 9, 3, 2 } };
		static const int64_t cfg[][3] = { { 4, 0, 0 }, { 4, 1, 8 },
		    { 4, 1, 16 }, { 4, -1, 0 } };
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
			for (c = 0; c < 4; c++)
				for (th = 1; th <= 2; th++) {
					aoe_sched s;
					const float *y;
					/* No 16-float choice without AVX-512. */
					if (cfg[c][2] == 16 && !aoe_cpu_avx512())
						continue;
					memset(&s, 0, sizeof(s));
					aoe_sched_set(&s, "algo", cfg[c][0]);
					aoe_sched_set(&s, "dw_rows", cfg[c][1]);
					aoe_sched_set(&s, "dw_vec", cfg[c][2]);
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
				aoe_sched s;
				memset(&s, 0, sizeof(s));
				aoe_sched_set(&s, "algo", 2);
				aoe_sched_set(&s, "dw_rows", 1);
				if (aoe_space_apply(t.g, t.n, &s) == 0)
					refused = 0;
				memset(&s, 0, sizeof(s));
				aoe_sched_set(&s, "algo", 4);
				aoe_sched_set(&s, "dw_rows", 0);
				aoe_sched_set(&s, "dw_vec", 8);
				if (aoe_space_apply(t.g, t.n, &s) == 0)
					refused = 0;
			}
			free(ref);
			aoe_graph_free(t.g);
		}
		ok(same, "a depthwise Conv node gives the same output under "
		    "dw_rows 0, 1 (dw_vec 8, 16) and -1, at 1 and 2 "
		    "threads");
		ok(refused, "dw_rows with another algo, and dw_vec without "
		    "dw_rows=1, are refused");
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
	}
	return done_testing();
}
