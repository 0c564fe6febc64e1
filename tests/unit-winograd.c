/*
 * unit-winograd - TAP property tests of Conv's Winograd algorithm (algo
 * 5, lib/kernels/k_winograd.c): on awkward shapes (planes of 1, 2, 3, 5 and
 * primes, odd channel counts, asymmetric pads, batches, groups, with and
 * without bias, constant and variable weights, fused activations and
 * residuals) the default schedule and sampled legal Winograd schedules
 * match a naive reference at 1 and 2 threads; F(2,3) and F(4,3) errors
 * on resnet-like magnitudes stay far inside the verifier's tolerance;
 * algo=5 where it does not apply, and knobs it does not read, are
 * refused.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"

static aoe_run_opts opts;

typedef struct cspec {
	int64_t n, c, h, w, m, kh, kw, group;
	int64_t sh, sw, dh, dw, pt, pl, pb, pr;
	int bias, wconst, act;		/* act: 0 none, 1 Relu, 2 Clip */
	int add;			/* a fused residual, before act */
} cspec;

typedef struct tg {
	aoe_graph *g;
	aoe_node *n;
	int in[4], nin, y;
	int64_t oh, ow;
} tg;

static void
add_input(tg *t, int konst, int ndim, const int64_t *dims, float scale,
    float shift)
{
	char name[16];
	aoe_tensor *x;
	int i;
	int64_t j, n;

	snprintf(name, sizeof(name), "in%d", t->nin);
	i = aoe_graph_tensor(t->g, name);
	x = t->g->tensors[i];
	aoe_tensor_set(x, AOE_F32, ndim, dims);
	if (konst) {
		x->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(x);
		n = aoe_tensor_numel(x);
		for (j = 0; j < n; j++)
			((float *)x->data)[j] = frand() * scale + shift;
	} else {
		x->kind = AOE_T_INPUT;
		t->g->inputs[t->g->ninputs++] = i;
	}
	t->in[t->nin++] = i;
}

static void
attr_is(aoe_node *n, const char *name, int cnt, const int64_t *v)
{
	aoe_attr *a = aoe_node_add_attr(n, name, AOE_A_INTS);

	a->n = cnt;
	a->ints = aoe_xcalloc((size_t)cnt, sizeof(int64_t));
	memcpy(a->ints, v, sizeof(int64_t) * cnt);
}

/*
 * A one-Conv graph for p, prepared, its variable inputs filled (x with
 * xscale*U(-1,1) + xshift, w with wscale*U(-1,1)).
 */
static int
build(tg *t, const cspec *p, float xscale, float xshift, float wscale)
{
	int64_t j, n;
	int i, k;

	memset(t, 0, sizeof(*t));
	t->g = aoe_graph_new("wino");
	t->g->opset = 17;
	t->g->inputs = aoe_xcalloc(4, sizeof(int));
	t->oh = (p->h + p->pt + p->pb - p->dh * (p->kh - 1) - 1) / p->sh + 1;
	t->ow = (p->w + p->pl + p->pr - p->dw * (p->kw - 1) - 1) / p->sw + 1;
	t->g->outputs = aoe_xcalloc(1, sizeof(int));
	add_input(t, 0, 4, (int64_t[]){ p->n, p->c, p->h, p->w }, 1, 0);
	add_input(t, p->wconst, 4, (int64_t[]){ p->m, p->c / p->group, p->kh,
	    p->kw }, wscale, 0);
	if (p->bias)
		add_input(t, 1, 1, (int64_t[]){ p->m }, 1, 0);
	if (p->add) {
		/* As lib/passes/fuse.c folds it: input 3, a missing bias -1. */
		if (!p->bias)
			t->in[t->nin++] = -1;
		add_input(t, 0, 4, (int64_t[]){ p->n, p->m, t->oh, t->ow }, 1,
		    0);
	}
	t->y = aoe_graph_tensor(t->g, "y");
	k = aoe_graph_add_node(t->g, "conv", "Conv", t->nin, t->in, 1, &t->y);
	t->g->outputs[t->g->noutputs++] = t->y;
	t->n = &t->g->nodes[k];
	attr_is(t->n, "strides", 2, (int64_t[]){ p->sh, p->sw });
	attr_is(t->n, "dilations", 2, (int64_t[]){ p->dh, p->dw });
	attr_is(t->n, "pads", 4, (int64_t[]){ p->pt, p->pl, p->pb, p->pr });
	aoe_node_add_attr(t->n, "group", AOE_A_INT)->i = p->group;
	if (p->act) {
		aoe_node_add_attr(t->n, "_aoe_act", AOE_A_INT)->i = p->act;
		if (p->act == 2) {
			aoe_node_add_attr(t->n, "_aoe_act_lo", AOE_A_FLOAT)->f =
			    -0.5f;
			aoe_node_add_attr(t->n, "_aoe_act_hi", AOE_A_FLOAT)->f =
			    0.75f;
		}
	}
	if (p->add)
		aoe_node_add_attr(t->n, "_aoe_add", AOE_A_INT)->i = t->nin - 1;
	if (aoe_graph_prepare(t->g, &opts) < 0)
		return -1;
	for (i = 0; i < t->nin; i++) {
		aoe_tensor *x;
		if (t->in[i] < 0)
			continue;
		x = t->g->tensors[t->in[i]];
		if (x->kind != AOE_T_INPUT)
			continue;
		n = aoe_tensor_numel(x);
		for (j = 0; j < n; j++)
			((float *)x->data)[j] = frand() * (i ? wscale :
			    xscale) + (i ? 0 : xshift);
	}
	return 0;
}

static float *
data(tg *t, int i)
{
	return t->g->tensors[t->in[i]]->data;
}

/* The reference, in double, with the fused activation. */
static double *
reference(tg *t, const cspec *p)
{
	const float *x = data(t, 0), *w = data(t, 1);
	const float *b = p->bias ? data(t, 2) : NULL;
	const float *r = p->add ? data(t, t->nin - 1) : NULL;
	int64_t cg = p->c / p->group, mg = p->m / p->group;
	int64_t bi, m, i, j, c, u, v, oh = t->oh, ow = t->ow;
	double *y = aoe_xcalloc((size_t)(p->n * p->m * oh * ow),
	    sizeof(double));

	for (bi = 0; bi < p->n; bi++)
	for (m = 0; m < p->m; m++)
	for (i = 0; i < oh; i++)
	for (j = 0; j < ow; j++) {
		double s = b ? b[m] : 0;
		int64_t g = m / mg;
		for (c = 0; c < cg; c++)
		for (u = 0; u < p->kh; u++)
		for (v = 0; v < p->kw; v++) {
			int64_t r = i * p->sh - p->pt + u * p->dh;
			int64_t q = j * p->sw - p->pl + v * p->dw;
			if (r < 0 || r >= p->h || q < 0 || q >= p->w)
				continue;
			s += (double)x[((bi * p->c + g * cg + c) * p->h + r) *
			    p->w + q] * w[((m * cg + c) * p->kh + u) * p->kw +
			    v];
		}
		if (r != NULL)
			s += r[((bi * p->m + m) * oh + i) * ow + j];
		if (p->act == 1)
			s = s > 0 ? s : 0;
		else if (p->act == 2)
			s = s < -0.5 ? -0.5 : s > 0.75 ? 0.75 : s;
		y[((bi * p->m + m) * oh + i) * ow + j] = s;
	}
	return y;
}

/* Relative L2 error of y against ref, and whether every element is close. */
static int
close_to(const float *y, const double *ref, int64_t n, double *rel)
{
	double num = 0, den = 0;
	int64_t i;
	int good = 1;

	for (i = 0; i < n; i++) {
		double d = fabs((double)y[i] - ref[i]);
		if (!(d <= 1e-3 + 1e-4 * fabs(ref[i])))
			good = 0;
		num += d * d;
		den += ref[i] * ref[i];
	}
	*rel = den > 0 ? sqrt(num / den) : sqrt(num);
	return good;
}

static void
sched_str(const aoe_sched *s, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < s->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s=%lld",
		    i ? "," : "", s->k[i].name, (long long)s->k[i].v);
}

/* Apply s and run at 1 and 2 threads; 0 when both match ref. */
static int
run_both(tg *t, const aoe_sched *s, const double *ref, const char *what)
{
	aoe_tensor *yt = t->g->tensors[t->y];
	int64_t ny = aoe_tensor_numel(yt);
	char buf[512];
	double rel = 0;
	int th;

	sched_str(s, buf, sizeof(buf));
	if (aoe_space_apply(t->g, t->n, s) < 0) {
		printf("# %s: schedule %s refused: %s\n", what, buf,
		    aoe_errmsg());
		return -1;
	}
	for (th = 1; th <= 2; th++) {
		opts.nthreads = th;
		memset(yt->data, 0xff, (size_t)ny * sizeof(float));
		if (aoe_graph_run(t->g, &opts) < 0 ||
		    !close_to(yt->data, ref, ny, &rel)) {
			printf("# %s: threads %d, schedule %s: relative "
			    "error %g\n", what, th, buf, rel);
			return -1;
		}
	}
	return 0;
}

/*
 * The property for p: the default schedule, algo=5 with each F(m,3),
 * prepack off, each batch_par, each cpf, and nsamples sampled Winograd schedules
 * all match the reference.
 */
static void
test_shape(const char *name, cspec p, int nsamples)
{
	static const int64_t bpar[] = { -1, 0, 1 };
	aoe_space sp;
	aoe_sched s;
	uint64_t seed = 77 + (uint64_t)(p.c * 31 + p.m * 7 + p.h);
	double *ref;
	char what[200];
	int bad = 0, runs = 0, i, tries;
	tg t;

	p.kh = p.kw = 3;
	p.sh = p.sw = p.dh = p.dw = 1;
	snprintf(what, sizeof(what), "%lldx%lldx%lldx%lld -> %lld g%lld pads "
	    "%lld,%lld,%lld,%lld%s%s%s%s (%s)", (long long)p.n, (long long)p.c,
	    (long long)p.h, (long long)p.w, (long long)p.m,
	    (long long)p.group, (long long)p.pt, (long long)p.pl,
	    (long long)p.pb, (long long)p.pr, p.bias ? " bias" : "",
	    p.wconst ? "" : " variable W", p.act == 1 ? " relu" :
	    p.act == 2 ? " clip" : "", p.add ? " residual" : "", name);
	if (build(&t, &p, 1, 0, 1) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "%s: build", what);
		aoe_graph_free(t.g);
		return;
	}
	ref = reference(&t, &p);
	bad |= run_both(&t, &sp.def, ref, what) < 0;
	runs++;
	for (i = 0; i < 12 && !bad; i++) {
		s = sp.def;
		aoe_sched_set(&s, "algo", 5);
		aoe_sched_set(&s, "wino_m", i % 2 ? 4 : 2);
		aoe_sched_set(&s, "batch_par", bpar[i / 2 % 3]);
		aoe_sched_set(&s, "prepack", i / 6 ? 0 : 1);
		/* The output asked for for writing: auto, never, always. */
		aoe_sched_set(&s, "cpf", i % 3 - 1);
		if (aoe_space_validate(&sp, &s, NULL, 0) < 0)
			continue;
		bad |= run_both(&t, &s, ref, what) < 0;
		runs++;
	}
	for (i = 0; i < nsamples && !bad; i++) {
		for (tries = 0; tries < 1000; tries++)
			if (aoe_space_sample(&sp, &seed, &s) == 0 &&
			    aoe_sched_get(&s, "algo", 0) == 5)
				break;
		if (tries == 1000) {
			printf("# %s: no Winograd point sampled\n", what);
			bad = 1;
			break;
		}
		bad |= run_both(&t, &s, ref, what) < 0;
		runs++;
	}
	ok(!bad, "%s: %d schedules match the reference at 1 and 2 threads",
	    what, runs);
	free(ref);
	aoe_graph_free(t.g);
}

/*
 * Resnet-like magnitudes (inputs after a Relu, He-initialised weights):
 * the relative L2 error of each F(m,3) against the double reference,
 * well inside the verifier's 1e-4 (lib/tune/measure.c).
 */
static void
test_accuracy(int64_t c, int64_t hw)
{
	cspec p = { 1, c, hw, hw, c, 3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	    1, 1, 0, 0 };
	aoe_sched s;
	aoe_space sp;
	double *ref, rel, worst;
	int64_t i, ny;
	int m;
	tg t;

	if (build(&t, &p, 0.5f, 0.5f, sqrtf(6.0f / (9 * c))) < 0 ||
	    aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "accuracy: build");
		aoe_graph_free(t.g);
		return;
	}
	ref = reference(&t, &p);
	ny = aoe_tensor_numel(t.g->tensors[t.y]);
	for (m = 2; m <= 4; m += 2) {
		const float *y = t.g->tensors[t.y]->data;
		double maxref = 0;
		s = sp.def;
		aoe_sched_set(&s, "algo", 5);
		aoe_sched_set(&s, "wino_m", m);
		opts.nthreads = 2;
		if (aoe_space_apply(t.g, t.n, &s) < 0 ||
		    aoe_graph_run(t.g, &opts) < 0) {
			ok(0, "accuracy F(%d,3): run", m);
			continue;
		}
		close_to(y, ref, ny, &rel);
		worst = 0;
		for (i = 0; i < ny; i++) {
			if (fabs(ref[i]) > maxref)
				maxref = fabs(ref[i]);
			if (fabs(y[i] - ref[i]) > worst)
				worst = fabs(y[i] - ref[i]);
		}
		ok(rel < 1e-5 && worst < 1e-4 * maxref, "F(%d,3) on %lldx%lldx"
		    "%lld: relative L2 error %.2g, worst element %.2g of max "
		    "%.3g", m, (long long)c, (long long)hw, (long long)hw, rel,
		    worst, maxref);
	}
	free(ref);
	aoe_graph_free(t.g);
}

/* algo=5 where it does not apply, and knobs it does not read, refused. */
static void
test_illegal(const char *name, cspec p, int64_t algo, const char *knob,
    int64_t v)
{
	aoe_space sp;
	aoe_sched s, before;
	char why[256];
	tg t;

	if (build(&t, &p, 1, 0, 1) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "illegal %s: build", name);
		aoe_graph_free(t.g);
		return;
	}
	before = t.n->sched;
	s = sp.def;
	aoe_sched_set(&s, "algo", algo);
	if (knob)
		aoe_sched_set(&s, knob, v);
	ok(aoe_space_validate(&sp, &s, why, sizeof(why)) == -AOE_EDATA &&
	    aoe_space_apply(t.g, t.n, &s) == -AOE_EDATA &&
	    memcmp(&before, &t.n->sched, sizeof(before)) == 0,
	    "%s refused (%s)", name, why);
	aoe_graph_free(t.g);
}

/* The default value of knob name in sp, or -1. */
static int64_t
knob_def(const aoe_space *sp, const char *name)
{
	const aoe_knob *k = aoe_space_knob(sp, name);

	return k != NULL ? k->def : -1;
}

/*
 * The default F(m,3) of a 64>64 3x3 Conv on an h x h plane: F(2,3) on
 * planes of 16 F(4,3) tiles or fewer under AVX-512 (U from memory rules
 * there), F(4,3) from 12x12 up otherwise; F(2,3) on 13x13 (the 4x4 tiles
 * waste too much) and below 12x12 everywhere.
 */
static void
test_default_m(void)
{
	static const int64_t hs[] = { 7, 12, 13, 14, 16, 17, 28 };
	int wide = aoe_cpu_avx512(), bad = 0;
	unsigned i;

	for (i = 0; i < sizeof(hs) / sizeof(hs[0]); i++) {
		cspec p;
		aoe_space sp;
		tg t;
		int64_t h = hs[i], want = h < 12 || h == 13 ? 2 :
		    wide && h <= 16 ? 2 : 4;

		memset(&p, 0, sizeof(p));
		memset(&sp, 0, sizeof(sp));
		p.n = 1, p.c = p.m = 64, p.h = p.w = h, p.group = 1;
		p.kh = p.kw = 3, p.sh = p.sw = p.dh = p.dw = 1;
		p.pt = p.pl = p.pb = p.pr = 1, p.bias = 1, p.wconst = 1;
		if (build(&t, &p, 1, 0, 1) < 0 ||
		    aoe_space_for(t.g, t.n, &sp) < 0 ||
		    knob_def(&sp, "algo") != 5 ||
		    knob_def(&sp, "wino_m") != want) {
			printf("# %lldx%lld: algo %lld wino_m %lld, want 5 "
			    "and %lld\n", (long long)h, (long long)h,
			    (long long)knob_def(&sp, "algo"),
			    (long long)knob_def(&sp, "wino_m"),
			    (long long)want);
			bad = 1;
		}
		aoe_graph_free(t.g);
	}
	ok(!bad, "the default F(m,3) by plane, %s: F(2,3) up to %s, then "
	    "F(4,3)", wide ? "AVX-512" : "AVX2", wide ? "16x16" : "13x13");
}

int
main(void)
{
	cspec p;

	aoe_run_opts_init(&opts);
	opts.nthreads = 2;
	opts.use_bank = 0;

#define SHAPE(n_, c_, h_, w_, m_, g_, pt_, pl_, pb_, pr_, b_, wc_, a_)	\
	(memset(&p, 0, sizeof(p)), p.n = n_, p.c = c_, p.h = h_, p.w = w_, \
	p.m = m_, p.group = g_, p.pt = pt_, p.pl = pl_, p.pb = pb_,	\
	p.pr = pr_, p.bias = b_, p.wconst = wc_, p.act = a_, p)

	test_shape("one pixel", SHAPE(1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0),
	    4);
	test_shape("2x2", SHAPE(1, 3, 2, 2, 3, 1, 1, 1, 1, 1, 1, 1, 0), 6);
	test_shape("3x3 no pads", SHAPE(1, 3, 3, 3, 17, 1, 0, 0, 0, 0, 1, 1,
	    0), 6);
	test_shape("5x5", SHAPE(1, 17, 5, 5, 3, 1, 1, 1, 1, 1, 0, 1, 0), 6);
	test_shape("13x29 asymmetric pads", SHAPE(1, 17, 13, 29, 17, 1, 0, 2,
	    1, 0, 1, 1, 0), 8);
	test_shape("29x13 pads 2", SHAPE(2, 3, 29, 13, 1, 1, 2, 2, 2, 2, 1, 1,
	    0), 8);
	test_shape("1x13 wide", SHAPE(1, 5, 1, 13, 7, 1, 1, 1, 1, 1, 1, 1, 0),
	    6);
	test_shape("13x1 tall", SHAPE(2, 5, 13, 1, 7, 1, 1, 1, 1, 1, 0, 1, 0),
	    6);
	test_shape("batch 2, groups 3", SHAPE(2, 6, 13, 11, 9, 3, 1, 1, 1, 1,
	    1, 1, 0), 8);
	test_shape("depthwise", SHAPE(1, 8, 9, 9, 8, 8, 1, 1, 1, 1, 1, 1, 0),
	    4);
	test_shape("variable weights", SHAPE(2, 17, 13, 13, 19, 1, 1, 0, 0, 1,
	    1, 0, 0), 6);
	test_shape("relu", SHAPE(1, 17, 29, 29, 17, 1, 1, 1, 1, 1, 1, 1, 1),
	    6);
	test_shape("clip", SHAPE(2, 3, 13, 13, 5, 1, 1, 1, 1, 1, 1, 1, 2), 6);
	test_shape("resnet-like 64x28x28", SHAPE(1, 64, 28, 28, 64, 1, 1, 1,
	    1, 1, 1, 1, 1), 6);
	/*
	 * Residuals: alone, under a Relu and a Clip (added in registers as
	 * rows are stored), on planes whose tile groups straddle rows of
	 * tiles (7 and 13 tiles a row) and whose last tiles are partial.
	 */
#define RESID(...) ((void)SHAPE(__VA_ARGS__), p.add = 1, p)
	test_shape("resnet-like residual", RESID(1, 64, 28, 28, 64, 1, 1, 1,
	    1, 1, 1, 1, 1), 6);
	test_shape("residual, no activation", RESID(2, 17, 13, 13, 19, 1, 1,
	    1, 1, 1, 0, 1, 0), 6);
	test_shape("residual under a clip", RESID(1, 9, 25, 27, 11, 1, 1, 1,
	    1, 1, 1, 0, 2), 6);
	test_shape("residual, groups 3", RESID(1, 6, 14, 14, 12, 3, 1, 1, 1,
	    1, 1, 1, 1), 6);
	test_shape("K past a block, 40x19x23 -> 100", SHAPE(1, 40, 19, 23, 100,
	    1, 1, 1, 1, 1, 1, 1, 0), 6);
	test_shape("many tiles, 8x61x67 -> 13", SHAPE(1, 8, 61, 67, 13, 1, 1,
	    1, 1, 1, 1, 1, 0), 6);

	test_default_m();
	test_accuracy(64, 56);
	test_accuracy(256, 14);
	test_accuracy(512, 7);

	p = SHAPE(1, 4, 9, 9, 4, 1, 2, 2, 2, 2, 1, 1, 0);
	p.kh = p.kw = 5;
	p.sh = p.sw = p.dh = p.dw = 1;
	test_illegal("algo=5 on a 5x5 kernel", p, 5, NULL, 0);
	p = SHAPE(1, 4, 9, 9, 4, 1, 1, 1, 1, 1, 1, 1, 0);
	p.kh = p.kw = 3;
	p.sh = p.sw = 2;
	p.dh = p.dw = 1;
	test_illegal("algo=5 with stride 2", p, 5, NULL, 0);
	p.sh = p.sw = 1;
	p.dh = p.dw = 2;
	p.pt = p.pl = p.pb = p.pr = 2;
	test_illegal("algo=5 with dilation 2", p, 5, NULL, 0);
	p.dh = p.dw = 1;
	p.pt = p.pl = p.pb = p.pr = 1;
	test_illegal("algo=5 with par=1", p, 5, "par", 1);
	test_illegal("algo=5 with tile=256", p, 5, "tile", 256);
	test_illegal("algo=5 with wino_m=3", p, 5, "wino_m", 3);
	test_illegal("algo=2 with wino_m=4", p, 2, "wino_m", 4);
	test_illegal("algo=2 with wino_tb=8", p, 2, "wino_tb", 8);
	return done_testing();
}
