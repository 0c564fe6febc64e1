/*
 * convref.h - what the convolution kernels' property tests share
 * (tests/unit-dwconv.c, tests/unit-grpconv.c): a 2-D geometry, the naive
 * grouped convolution with its fused epilogue (a depthwise one is the
 * case of one channel a group), random buffers, the comparison, and the
 * timing helpers of their benchmarks.  Include after tap.h, whose
 * frand() it draws from.
 */
#ifndef TESTS_CONVREF_H
#define TESTS_CONVREF_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aoe.h"
#include "kernel.h"

/* The 2-D fields of a convolution's geometry, the output's from them. */
typedef struct conv2d {
	int64_t n, group, cg, mg;		/* images; channels a group */
	int64_t h, w, kh, kw, sh, sw, dh, dw;
	int64_t pt, pl, pb, pr;			/* pads */
} conv2d;

static void __attribute__((unused))
conv2d_geom(const conv2d *s, aoe_conv_geom *g)
{
	memset(g, 0, sizeof(*g));
	g->nsp = 2;
	g->n = s->n;
	g->group = s->group;
	g->cg = s->cg;
	g->mg = s->mg;
	g->c = s->group * s->cg;
	g->m = s->group * s->mg;
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

/* The activations the tests fuse, by index, and their names. */
static const char *const actname[] = { "none", "relu", "clip", "sigmoid",
    "hardswish", "silu", "gelu" };
static const int actkind[] = { AOE_ACT_NONE, AOE_ACT_RELU, AOE_ACT_CLIP,
    AOE_ACT_SIGMOID, AOE_ACT_HARDSWISH, AOE_ACT_SILU, AOE_ACT_GELU };

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
	case AOE_ACT_SILU:
		return v / (1 + expf(-v));
	case AOE_ACT_GELU:
		return 0.5f * v * (1 + erff(v * 0.70710678f));
	}
	return v;
}

/*
 * The convolution of geometry g in doubles: bias, the residual add, the
 * activation, then the per-channel affine, as the fused epilogue does.
 */
static void __attribute__((unused))
conv_reference(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const aoe_act *a, const float *add, float *y)
{
	int64_t b, m, oh, ow, ic, kh, kw;

	for (b = 0; b < g->n; b++)
		for (m = 0; m < g->m; m++)
			for (oh = 0; oh < g->out[1]; oh++)
				for (ow = 0; ow < g->out[2]; ow++) {
					double acc = bias ? bias[m] : 0;
					int64_t o = ((b * g->m + m) * g->out[1] +
					    oh) * g->out[2] + ow;
					int64_t c0 = m / g->mg * g->cg;
					float v;
					for (ic = 0; ic < g->cg; ic++)
					for (kh = 0; kh < g->k[1]; kh++)
						for (kw = 0; kw < g->k[2]; kw++) {
							int64_t ih = oh * g->s[1] -
							    g->pb[1] + kh * g->d[1];
							int64_t iw = ow * g->s[2] -
							    g->pb[2] + kw * g->d[2];
							if (ih < 0 || ih >= g->in[1] ||
							    iw < 0 || iw >= g->in[2])
								continue;
							acc += (double)w[((m *
							    g->cg + ic) * g->k[1] +
							    kh) * g->k[2] + kw] *
							    x[((b * g->c + c0 + ic) *
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

/* n random floats in [-1, 1) (one at least, for a size of 0). */
static float * __attribute__((unused))
rnd(int64_t n)
{
	float *p = malloc(sizeof(float) * (size_t)(n > 0 ? n : 1));
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = frand();
	return p;
}

/* Floats after a case's output that its kernel must leave as they were. */
#define GUARD 64

/* n random floats, and GUARD more after them, copied to guard. */
static float * __attribute__((unused))
rnd_guarded(int64_t n, float guard[GUARD])
{
	float *p = rnd(n + GUARD);

	memcpy(guard, p + n, sizeof(float) * GUARD);
	return p;
}

/* 1 if the GUARD floats after y's first n are guard's; else 0, said. */
static int __attribute__((unused))
guard_intact(const float *y, int64_t n, const float guard[GUARD])
{
	if (memcmp(guard, y + n, sizeof(float) * GUARD) == 0)
		return 1;
	printf("# a store past the output's end\n");
	return 0;
}

/* Compare y with r; 1 if they match, the worst error in *maxerr. */
static int __attribute__((unused))
same(const float *y, const float *r, int64_t ny, double *maxerr)
{
	int64_t i;
	int ok_ = 1;

	*maxerr = 0;
	for (i = 0; i < ny; i++) {
		double e = fabs((double)y[i] - r[i]);
		if (!(e <= 1e-4 * (1 + fabs(r[i]))))
			ok_ = 0;
		if (!(e <= *maxerr))
			*maxerr = e;
	}
	return ok_;
}

/* One of the n values v, at random. */
static int64_t __attribute__((unused))
pick(const int64_t *v, int n)
{
	return v[(int)((frand() + 1) / 2 * n) % n];
}

/* For qsort of doubles, in increasing order. */
static int __attribute__((unused))
dcmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Seconds: of the wall clock, or of the process's CPU time. */
static double __attribute__((unused))
cputime(int wall)
{
	struct timespec ts;

	clock_gettime(wall ? CLOCK_MONOTONIC : CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif
