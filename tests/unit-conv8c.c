/*
 * unit-conv8c - TAP property tests of Conv's blocked algorithm (algo 7,
 * lib/kernels/k_conv8c.c): on awkward shapes (1, 3, 8, 9, 17 and prime channel
 * counts, planes of 1, 7 and 13, strides 1 to 3, asymmetric pads up to
 * 3, dilation 2, 1x1 to 7x7 kernels, batches, groups, depthwise) with
 * every epilogue (bias, Relu, Clip, Sigmoid, HardSwish, per-channel scale
 * and shift, a fused residual), in all four combinations of a plain or
 * NCHW8c input and output, fixed and sampled legal algo-7 schedules match
 * a naive reference at 1 and 2 threads, and a blocked output keeps its
 * lanes past M at zero; algo=7 where it cannot run, and its illegal
 * schedules, are refused.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"

static aoe_run_opts opts;

typedef struct cspec {
	int64_t n, c, h, w, m, kh, kw, group;
	int64_t sh, sw, dh, dw, pt, pl, pb, pr;
	int bias, wconst, act, post, add;	/* act: _aoe_act's codes */
} cspec;

typedef struct tg {
	aoe_graph *g;
	aoe_node *n;
	int x, w, b, r, y;
	int64_t oh, ow;
	float *xp, *rp;			/* the plain input and residual */
} tg;

static int
add_tensor(tg *t, const char *name, int konst, int ndim,
    const int64_t *dims)
{
	int i = aoe_graph_tensor(t->g, name);
	aoe_tensor *x = t->g->tensors[i];
	int64_t j, n;

	aoe_tensor_set(x, AOE_F32, ndim, dims);
	if (konst) {
		x->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(x);
		n = aoe_tensor_numel(x);
		for (j = 0; j < n; j++)
			((float *)x->data)[j] = frand();
	} else {
		x->kind = AOE_T_INPUT;
		t->g->inputs[t->g->ninputs++] = i;
	}
	return i;
}

static void
attr_is(aoe_node *n, const char *name, int cnt, const int64_t *v)
{
	aoe_attr *a = aoe_node_add_attr(n, name, AOE_A_INTS);

	a->n = cnt;
	a->ints = aoe_xcalloc((size_t)cnt, sizeof(int64_t));
	memcpy(a->ints, v, sizeof(int64_t) * cnt);
}

static void
attr_fs(aoe_node *n, const char *name, int cnt, float lo, float span)
{
	aoe_attr *a = aoe_node_add_attr(n, name, AOE_A_FLOATS);
	int i;

	a->n = cnt;
	a->floats = aoe_xcalloc((size_t)cnt, sizeof(float));
	for (i = 0; i < cnt; i++)
		a->floats[i] = lo + span * frand();
}

static int64_t
numel(tg *t, int i)
{
	return aoe_tensor_numel(t->g->tensors[i]);
}

/* Plain data into tensor i, reordered when the tensor is NCHW8c. */
static void
put(tg *t, int i, const float *src)
{
	aoe_tensor *x = t->g->tensors[i];
	int64_t sp = x->dims[2] * x->dims[3];

	if (x->layout == AOE_LAYOUT_8C)
		aoe_to_8c(src, x->data, x->dims[0], x->dims[1], sp, 1);
	else
		memcpy(x->data, src, (size_t)aoe_tensor_numel(x) *
		    sizeof(float));
}

/*
 * A one-Conv graph for p with input and output layouts xl and yl
 * (the residual's is the output's), prepared and filled.
 */
static int
build(tg *t, const cspec *p, int xl, int yl)
{
	int in[4], nin, k;
	int64_t j;

	memset(t, 0, sizeof(*t));
	t->g = aoe_graph_new("conv8c");
	t->g->opset = 17;
	t->g->inputs = aoe_xcalloc(4, sizeof(int));
	t->g->outputs = aoe_xcalloc(1, sizeof(int));
	t->oh = (p->h + p->pt + p->pb - p->dh * (p->kh - 1) - 1) / p->sh + 1;
	t->ow = (p->w + p->pl + p->pr - p->dw * (p->kw - 1) - 1) / p->sw + 1;
	t->x = add_tensor(t, "x", 0, 4, (int64_t[]){ p->n, p->c, p->h,
	    p->w });
	t->w = add_tensor(t, "w", p->wconst, 4, (int64_t[]){ p->m, p->c /
	    p->group, p->kh, p->kw });
	t->b = p->bias ? add_tensor(t, "b", 1, 1, (int64_t[]){ p->m }) : -1;
	t->r = p->add ? add_tensor(t, "r", 0, 4, (int64_t[]){ p->n, p->m,
	    t->oh, t->ow }) : -1;
	in[0] = t->x;
	in[1] = t->w;
	in[2] = t->b;
	in[3] = t->r;
	nin = p->add ? 4 : p->bias ? 3 : 2;
	t->y = aoe_graph_tensor(t->g, "y");
	k = aoe_graph_add_node(t->g, "conv", "Conv", nin, in, 1, &t->y);
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
	if (p->post) {
		attr_fs(t->n, "_aoe_post_s", (int)p->m, 0.5f, 0.5f);
		attr_fs(t->n, "_aoe_post_t", (int)p->m, 0, 0.5f);
	}
	if (p->add)
		aoe_node_add_attr(t->n, "_aoe_add", AOE_A_INT)->i = p->bias ?
		    3 : 2;
	t->g->tensors[t->x]->layout = xl ? AOE_LAYOUT_8C : 0;
	t->g->tensors[t->y]->layout = yl ? AOE_LAYOUT_8C : 0;
	if (p->add)
		t->g->tensors[t->r]->layout = yl ? AOE_LAYOUT_8C : 0;
	if (aoe_graph_prepare(t->g, &opts) < 0)
		return -1;
	t->xp = aoe_xcalloc((size_t)numel(t, t->x), sizeof(float));
	for (j = 0; j < numel(t, t->x); j++)
		t->xp[j] = frand();
	put(t, t->x, t->xp);
	if (p->add) {
		t->rp = aoe_xcalloc((size_t)numel(t, t->r), sizeof(float));
		for (j = 0; j < numel(t, t->r); j++)
			t->rp[j] = frand();
		put(t, t->r, t->rp);
	}
	if (!p->wconst) {
		float *wd = t->g->tensors[t->w]->data;
		for (j = 0; j < numel(t, t->w); j++)
			wd[j] = frand();
	}
	return 0;
}

static void
tg_free(tg *t)
{
	free(t->xp);
	free(t->rp);
	aoe_graph_free(t->g);
}

/* The reference, in double, with the whole epilogue. */
static double *
reference(tg *t, const cspec *p)
{
	const float *x = t->xp, *w = t->g->tensors[t->w]->data;
	const float *b = p->bias ? t->g->tensors[t->b]->data : NULL;
	const aoe_attr *ps = aoe_attr_find(t->n, "_aoe_post_s");
	const aoe_attr *pt = aoe_attr_find(t->n, "_aoe_post_t");
	int64_t cg = p->c / p->group, mg = p->m / p->group;
	int64_t bi, m, i, j, c, u, v, oh = t->oh, ow = t->ow, o;
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
		o = ((bi * p->m + m) * oh + i) * ow + j;
		if (p->add)
			s += t->rp[o];
		if (p->act == 1)
			s = s > 0 ? s : 0;
		else if (p->act == 2)
			s = s < -0.5 ? -0.5 : s > 0.75 ? 0.75 : s;
		else if (p->act == 3)
			s = 1 / (1 + exp(-s));
		else if (p->act == 4)
			s = s * fmin(1, fmax(0, s / 6 + 0.5));
		if (p->post)
			s = s * ps->floats[m] + pt->floats[m];
		y[o] = s;
	}
	return y;
}

/*
 * Whether the output matches ref: read back through aoe_from_8c when it
 * is blocked, whose lanes past M must then be zero.
 */
static int
check_out(tg *t, const double *ref, double *worst)
{
	aoe_tensor *yt = t->g->tensors[t->y];
	int64_t n = yt->dims[0], m = yt->dims[1], sp = yt->dims[2] *
	    yt->dims[3], ny = n * m * sp, cb = (m + 7) / 8, i, b, s, q;
	float *y = yt->data, *plain = NULL;
	int good = 1;

	if (yt->layout == AOE_LAYOUT_8C) {
		plain = aoe_xcalloc((size_t)ny, sizeof(float));
		aoe_from_8c(yt->data, plain, n, m, sp, 1);
		for (i = 0; i < n; i++)
			for (b = 0; b < cb; b++)
				for (s = 0; s < sp; s++)
					for (q = m - b * 8; q < 8; q++)
						if (yt->layout && ((float *)
						    yt->data)[((i * cb + b) *
						    sp + s) * 8 + q] != 0)
							good = 0;
		y = plain;
	}
	*worst = 0;
	for (i = 0; i < ny; i++) {
		double d = fabs((double)y[i] - ref[i]);
		if (!(d <= 1e-4 + 1e-4 * fabs(ref[i])))
			good = 0;
		if (!(d <= *worst))
			*worst = d;
	}
	free(plain);
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
	char buf[512];
	double worst = 0;
	int th;

	sched_str(s, buf, sizeof(buf));
	if (aoe_space_apply(t->g, t->n, s) < 0) {
		printf("# %s: schedule %s refused: %s\n", what, buf,
		    aoe_errmsg());
		return -1;
	}
	for (th = 1; th <= 2; th++) {
		opts.nthreads = th;
		memset(yt->data, 0xff, aoe_tensor_nbytes(yt));
		if (aoe_graph_run(t->g, &opts) < 0 ||
		    !check_out(t, ref, &worst)) {
			printf("# %s: threads %d, schedule %s: worst error "
			    "%g\n", what, th, buf, worst);
			return -1;
		}
	}
	return 0;
}

/*
 * The property for p: in each layout combination, algo=7 with its
 * defaults, fixed knob settings, and nsamples sampled algo-7 schedules
 * all match the reference.
 */
static void
test_shape(cspec p, int nsamples)
{
	static const int64_t fixed[][5] = {	/* ur_w oc_blk ic_blk oh_blk x8c */
		{ 0, 0, 0, 0, 0 }, { 14, 1, 0, 0, 1 }, { 7, 2, 1, 1, 0 },
		{ 4, 3, 2, 2, 1 }, { 3, 4, 1, 0, 0 }, { 5, 0, 0, 1, 1 },
		{ 8, 0, 0, 0, 0 },
	};
	static const char *const acts[] = { "", " relu", " clip",
	    " sigmoid", " hardswish" };
	aoe_space sp;
	aoe_sched s;
	uint64_t seed = 99 + (uint64_t)(p.c * 31 + p.m * 7 + p.h * 3 + p.kh);
	double *ref;
	char what[300];
	int bad = 0, runs = 0, i, tries, l;
	size_t f;
	tg t;

	for (l = 0; l < 4 && !bad; l++) {
		snprintf(what, sizeof(what), "%lldx%lldx%lldx%lld -> %lld "
		    "k%lldx%lld s%lld,%lld d%lld,%lld g%lld pads %lld,%lld,"
		    "%lld,%lld%s%s%s%s%s, %s in, %s out", (long long)p.n,
		    (long long)p.c, (long long)p.h, (long long)p.w,
		    (long long)p.m, (long long)p.kh, (long long)p.kw,
		    (long long)p.sh, (long long)p.sw, (long long)p.dh,
		    (long long)p.dw, (long long)p.group, (long long)p.pt,
		    (long long)p.pl, (long long)p.pb, (long long)p.pr,
		    p.bias ? " bias" : "", p.wconst ? "" : " variable W",
		    acts[p.act], p.post ? " scale+shift" : "",
		    p.add ? " residual" : "", l & 1 ? "NCHW8c" : "plain",
		    l & 2 ? "NCHW8c" : "plain");
		if (build(&t, &p, l & 1, l & 2) < 0 ||
		    aoe_space_for(t.g, t.n, &sp) < 0) {
			ok(0, "%s: build: %s", what, aoe_errmsg());
			tg_free(&t);
			return;
		}
		ref = reference(&t, &p);
		for (f = 0; f < sizeof(fixed) / sizeof(fixed[0]) && !bad;
		    f++) {
			s = sp.def;
			aoe_sched_set(&s, "algo", 7);
			aoe_sched_set(&s, "ur_w", fixed[f][0]);
			aoe_sched_set(&s, "oc_blk", fixed[f][1]);
			aoe_sched_set(&s, "ic_blk", fixed[f][2]);
			aoe_sched_set(&s, "oh_blk", fixed[f][3]);
			aoe_sched_set(&s, "x8c", fixed[f][4]);
			if (aoe_space_validate(&sp, &s, NULL, 0) < 0)
				continue;
			bad |= run_both(&t, &s, ref, what) < 0;
			runs++;
		}
		/* A blocked tensor makes the default schedule run algo 7. */
		if (l && !bad) {
			bad |= run_both(&t, &sp.def, ref, what) < 0;
			runs++;
		}
		for (i = 0; i < nsamples && !bad; i++) {
			for (tries = 0; tries < 2000; tries++)
				if (aoe_space_sample(&sp, &seed, &s) == 0 &&
				    aoe_sched_get(&s, "algo", 0) == 7)
					break;
			if (tries == 2000) {
				printf("# %s: no algo-7 point sampled\n",
				    what);
				bad = 1;
				break;
			}
			bad |= run_both(&t, &s, ref, what) < 0;
			runs++;
		}
		free(ref);
		tg_free(&t);
	}
	ok(!bad && runs > 4, "%s: %d schedules match the reference at 1 and "
	    "2 threads", what, runs);
}

/* algo=7 where it cannot run, and schedules it forbids, refused. */
static void
test_illegal(const char *name, cspec p, int64_t algo, const char *k1,
    int64_t v1, const char *k2, int64_t v2)
{
	aoe_space sp;
	aoe_sched s, before;
	char why[256];
	tg t;

	if (build(&t, &p, 0, 0) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "illegal %s: build", name);
		tg_free(&t);
		return;
	}
	before = t.n->sched;
	s = sp.def;
	aoe_sched_set(&s, "algo", algo);
	if (k1)
		aoe_sched_set(&s, k1, v1);
	if (k2)
		aoe_sched_set(&s, k2, v2);
	ok(aoe_space_validate(&sp, &s, why, sizeof(why)) == -AOE_EDATA &&
	    aoe_space_apply(t.g, t.n, &s) == -AOE_EDATA &&
	    memcmp(&before, &t.n->sched, sizeof(before)) == 0,
	    "%s refused (%s)", name, why);
	tg_free(&t);
}

/* aoe_conv_8c_ok() says which Convs algo 7 runs. */
static void
test_ok(const char *name, cspec p, int want)
{
	tg t;

	if (build(&t, &p, 0, 0) < 0) {
		ok(0, "8c_ok %s: build", name);
		tg_free(&t);
		return;
	}
	ok(aoe_conv_8c_ok(t.g, t.n) == want, "aoe_conv_8c_ok %s is %d", name,
	    want);
	tg_free(&t);
}

int
main(void)
{
	cspec p;

	aoe_run_opts_init(&opts);
	opts.nthreads = 2;
	opts.use_bank = 0;

#define SH(n_, c_, h_, w_, m_, k_, g_, s_, d_, pt_, pl_, pb_, pr_, b_, a_, \
    po_, ad_)								\
	(memset(&p, 0, sizeof(p)), p.n = n_, p.c = c_, p.h = h_, p.w = w_, \
	p.m = m_, p.kh = p.kw = k_, p.group = g_, p.sh = p.sw = s_,	\
	p.dh = p.dw = d_, p.pt = pt_, p.pl = pl_, p.pb = pb_, p.pr = pr_, \
	p.bias = b_, p.wconst = 1, p.act = a_, p.post = po_, p.add = ad_, p)

	/* Dense. */
	test_shape(SH(1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0), 2);
	test_shape(SH(1, 3, 7, 7, 8, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0), 3);
	test_shape(SH(2, 8, 13, 13, 9, 3, 1, 2, 1, 1, 1, 1, 1, 1, 2, 1, 1),
	    3);
	test_shape(SH(1, 9, 13, 7, 17, 5, 1, 3, 1, 2, 0, 1, 3, 0, 3, 0, 1),
	    3);
	test_shape(SH(1, 17, 13, 13, 3, 3, 1, 1, 2, 2, 2, 2, 2, 1, 4, 1, 0),
	    3);
	test_shape(SH(2, 3, 13, 13, 17, 7, 1, 2, 1, 3, 3, 3, 3, 1, 1, 1, 1),
	    3);
	test_shape(SH(1, 13, 7, 13, 11, 1, 1, 1, 1, 0, 0, 0, 0, 1, 0, 1, 1),
	    3);
	test_shape(SH(1, 5, 13, 7, 23, 1, 1, 2, 1, 0, 1, 0, 1, 0, 2, 0, 0),
	    3);
	/*
	 * Pointwise, each plane one row (c8_flat), its columns the chunks:
	 * 7x7 and 14x14 planes, residuals, two groups of 16, a batch; then
	 * a trailing pad, which keeps the rows.
	 */
	test_shape(SH(2, 40, 7, 7, 40, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 1),
	    8);
	test_shape(SH(1, 24, 14, 14, 48, 1, 1, 1, 1, 0, 0, 0, 0, 1, 2, 1, 1),
	    8);
	test_shape(SH(1, 32, 14, 14, 32, 1, 2, 1, 1, 0, 0, 0, 0, 0, 1, 0, 1),
	    6);
	test_shape(SH(1, 16, 7, 9, 24, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 0, 0),
	    4);
	test_shape(SH(1, 16, 1, 13, 32, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1),
	    3);
	test_shape(SH(1, 7, 7, 1, 40, 3, 1, 1, 1, 1, 2, 0, 1, 1, 3, 1, 0), 3);
	test_shape(SH(2, 24, 13, 13, 41, 3, 1, 2, 1, 0, 0, 1, 1, 1, 1, 0, 1),
	    3);
	test_shape(SH(1, 11, 7, 7, 5, 7, 1, 3, 2, 3, 3, 3, 3, 1, 4, 1, 1), 3);
	/* A variable weight, packed at each run. */
	(void)SH(1, 9, 7, 13, 9, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1);
	p.wconst = 0;
	test_shape(p, 2);
	/* Rectangular kernel, mixed strides and dilations. */
	(void)SH(1, 10, 13, 11, 12, 3, 1, 1, 1, 1, 0, 2, 1, 1, 2, 0, 1);
	p.kw = 5;
	p.sw = 2;
	p.dh = 2;
	test_shape(p, 3);
	test_shape(SH(1, 19, 29, 31, 37, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1),
	    4);
	test_shape(SH(1, 64, 15, 15, 64, 3, 1, 2, 1, 1, 1, 1, 1, 1, 1, 1, 0),
	    4);
	/* Groups of multiples of 8 channels. */
	test_shape(SH(2, 16, 7, 13, 32, 3, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1),
	    3);
	test_shape(SH(1, 32, 13, 7, 16, 3, 2, 2, 1, 1, 0, 1, 0, 1, 3, 0, 0),
	    3);
	/* Depthwise. */
	test_shape(SH(1, 1, 7, 7, 1, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0), 2);
	test_shape(SH(2, 9, 13, 13, 9, 3, 9, 1, 1, 1, 1, 1, 1, 1, 4, 1, 1),
	    3);
	test_shape(SH(1, 17, 13, 7, 17, 5, 17, 2, 1, 2, 2, 2, 2, 0, 3, 1, 0),
	    3);
	test_shape(SH(1, 8, 7, 13, 8, 3, 8, 3, 2, 0, 3, 1, 2, 1, 2, 0, 1),
	    3);
	test_shape(SH(1, 24, 13, 13, 24, 7, 24, 2, 1, 3, 3, 3, 3, 1, 1, 1, 1),
	    3);
	test_shape(SH(1, 3, 1, 13, 3, 3, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 1), 2);

	test_ok("dense", SH(1, 3, 7, 7, 5, 3, 1, 1, 1, 1, 1, 1, 1, 0, 0, 0,
	    0), 1);
	test_ok("depthwise", SH(1, 5, 7, 7, 5, 3, 5, 1, 1, 1, 1, 1, 1, 0, 0,
	    0, 0), 1);
	test_ok("groups of 8", SH(1, 16, 7, 7, 32, 3, 2, 1, 1, 1, 1, 1, 1, 0,
	    0, 0, 0), 1);
	test_ok("groups of 3", SH(1, 6, 7, 7, 6, 3, 2, 1, 1, 1, 1, 1, 1, 0, 0,
	    0, 0), 0);
	test_ok("depth multiplier 2", SH(1, 4, 7, 7, 8, 3, 4, 1, 1, 1, 1, 1,
	    1, 0, 0, 0, 0), 0);

	test_illegal("algo=7 on groups of 3", SH(1, 6, 7, 7, 6, 3, 2, 1, 1, 1,
	    1, 1, 1, 0, 0, 0, 0), 7, NULL, 0, NULL, 0);
	test_illegal("algo=7 with planes set", SH(1, 8, 7, 7, 8, 3, 1, 1, 1, 1, 1,
	    1, 1, 0, 0, 0, 0), 7, "planes", 1, NULL, 0);
	test_illegal("algo=7 with batch_par 1", SH(1, 8, 7, 7, 8, 3, 1, 1, 1,
	    1, 1, 1, 1, 0, 0, 0, 0), 7, "batch_par", 1, NULL, 0);
	test_illegal("algo=7 with ur_w 14, oc_blk 2", SH(1, 8, 7, 7, 24, 3, 1,
	    1, 1, 1, 1, 1, 1, 0, 0, 0, 0), 7, "oc_blk", 2, "ur_w", 14);
	test_illegal("ur_w 14 with oc_blk auto", SH(1, 8, 7, 7, 8, 3, 1, 1, 1,
	    1, 1, 1, 1, 0, 0, 0, 0), 7, "ur_w", 14, NULL, 0);
	test_illegal("ur_w with algo=2", SH(1, 8, 7, 7, 8, 3, 1, 1, 1, 1, 1,
	    1, 1, 0, 0, 0, 0), 2, "ur_w", 4, NULL, 0);
	test_illegal("x8c with algo=3", SH(1, 8, 7, 7, 8, 3, 1, 1, 1, 1, 1,
	    1, 1, 0, 0, 0, 0), 3, "x8c", 1, NULL, 0);
	test_illegal("oc_blk on depthwise", SH(1, 8, 7, 7, 8, 3, 8, 1, 1, 1,
	    1, 1, 1, 0, 0, 0, 0), 7, "oc_blk", 2, NULL, 0);
	test_illegal("ur_w 12 on depthwise", SH(1, 8, 7, 7, 8, 3, 8, 1, 1, 1,
	    1, 1, 1, 0, 0, 0, 0), 7, "ur_w", 12, NULL, 0);
	return done_testing();
}
