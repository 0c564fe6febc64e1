/*
 * unit-quant - the quantized operators (lib/kernels/k_quant.c) against
 * plain scalar references: random shapes, types, zero points and scales,
 * each case under several schedules of its search space, the results
 * compared exactly; bad quantization parameters; QDQ fusion
 * (lib/passes/qdq.c) against the unfused graph.
 *
 * usage: unit-quant [-w dir]
 *	-w dir	write the bad models of tests/quant.t into dir and exit
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "tap.h"
#include "aoe.h"

static aoe_run_opts opts;

static uint32_t
urand32(void)
{
	rstate ^= rstate << 13;
	rstate ^= rstate >> 7;
	rstate ^= rstate << 17;
	return (uint32_t)(rstate >> 16);
}

/* Uniform in [lo, hi]. */
static int64_t
irand(int64_t lo, int64_t hi)
{
	return lo + (int64_t)(urand32() % (uint32_t)(hi - lo + 1));
}

/* A graph under construction. */
typedef struct qg {
	aoe_graph *g;
	int y;
} qg;

static void
qg_new(qg *t)
{
	memset(t, 0, sizeof(*t));
	t->g = aoe_graph_new("quant");
	t->g->opset = 21;
	t->g->inputs = aoe_xcalloc(16, sizeof(int));
	t->g->outputs = aoe_xcalloc(4, sizeof(int));
}

/* A tensor: a graph input (konst 0) or a constant; its index. */
static int
qg_tensor(qg *t, const char *name, int dt, int ndim, const int64_t *dims,
    int konst)
{
	int i = aoe_graph_tensor(t->g, name);
	aoe_tensor *x = t->g->tensors[i];

	aoe_tensor_set(x, dt, ndim, dims);
	if (konst) {
		x->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(x);
	} else {
		x->kind = AOE_T_INPUT;
		t->g->inputs[t->g->ninputs++] = i;
	}
	return i;
}

static void *
tdata(qg *t, int i)
{
	return t->g->tensors[i]->data;
}

/* Random data: the whole range of a byte type, floats in [-r, r). */
static void
fill(aoe_tensor *x, float r)
{
	int64_t i, n = aoe_tensor_numel(x);

	for (i = 0; i < n; i++)
		switch (x->dtype) {
		case AOE_U8:
			((uint8_t *)x->data)[i] = (uint8_t)urand32();
			break;
		case AOE_I8:
			((int8_t *)x->data)[i] = (int8_t)urand32();
			break;
		case AOE_I32:
			((int32_t *)x->data)[i] = (int32_t)irand(-5000, 5000);
			break;
		case AOE_F32:
			((float *)x->data)[i] = r * frand();
			break;
		}
}

/* Positive scales. */
static void
fill_scales(aoe_tensor *x, float lo, float hi)
{
	int64_t i, n = aoe_tensor_numel(x);

	for (i = 0; i < n; i++)
		((float *)x->data)[i] = lo + (hi - lo) * (frand() + 1) / 2;
}

static aoe_node *
qg_node(qg *t, const char *op, int nin, const int *in, int nout,
    const char *const *outs)
{
	int o[4], i, k;

	for (i = 0; i < nout; i++)
		o[i] = aoe_graph_tensor(t->g, outs[i]);
	k = aoe_graph_add_node(t->g, op, op, nin, in, nout, o);
	for (i = 0; i < nout; i++)
		t->g->outputs[t->g->noutputs++] = o[i];
	t->y = o[0];
	return &t->g->nodes[k];
}

static aoe_node *
qg_node1(qg *t, const char *op, int nin, const int *in)
{
	static const char *const y[] = { "y" };

	return qg_node(t, op, nin, in, 1, y);
}

static void
attr_i(aoe_node *n, const char *name, int64_t v)
{
	aoe_node_add_attr(n, name, AOE_A_INT)->i = v;
}

static void
attr_is(aoe_node *n, const char *name, int cnt, const int64_t *v)
{
	aoe_attr *a = aoe_node_add_attr(n, name, AOE_A_INTS);

	a->n = cnt;
	a->ints = aoe_xcalloc((size_t)cnt, sizeof(int64_t));
	memcpy(a->ints, v, sizeof(int64_t) * cnt);
}

static int32_t
at(const aoe_tensor *x, int64_t i)
{
	switch (x->dtype) {
	case AOE_U8:
		return ((const uint8_t *)x->data)[i];
	case AOE_I8:
		return ((const int8_t *)x->data)[i];
	case AOE_I32:
		return ((const int32_t *)x->data)[i];
	}
	return 0;
}

/* The value of zero point z for index i (0 when absent). */
static int32_t
zp(const aoe_tensor *z, int64_t i)
{
	if (z == NULL)
		return 0;
	return at(z, aoe_tensor_numel(z) == 1 ? 0 : i);
}

/* Requantize as the kernel must: float multiplier, half to even. */
static int32_t
requant(int64_t acc, float sa, float sb, float sy, int32_t zy, int dt)
{
	float mult = sa * sb / sy;
	float f = rintf((float)(int32_t)acc * mult) + (float)zy;
	float lo = dt == AOE_I8 ? -128 : 0, hi = dt == AOE_I8 ? 127 : 255;

	f = f < lo ? lo : f > hi ? hi : f;
	return (int32_t)f;
}

/* Run g: 0 when every schedule sampled from node k's space gave want. */
static int
run_schedules(qg *t, int k, const int32_t *want, int64_t cnt, int nsched,
    int *nrun)
{
	aoe_graph *g = t->g;
	aoe_node *n = &g->nodes[k];
	aoe_tensor *y = g->tensors[t->y];
	uint64_t seed = 7 + (uint64_t)cnt;
	aoe_space sp;
	aoe_sched s;
	int i, bad = 0;
	int64_t j;

	if (aoe_space_for(g, n, &sp) < 0)
		return -1;
	for (i = 0; i < nsched; i++) {
		if (i == 0)
			s = sp.def;
		else if (aoe_space_sample(&sp, &seed, &s) < 0)
			return -1;
		if (aoe_space_apply(g, n, &s) < 0 ||
		    aoe_graph_run(g, &opts) < 0)
			return -1;
		(*nrun)++;
		for (j = 0; j < cnt; j++)
			if (at(y, j) != want[j]) {
				if (bad++ < 3)
					printf("# schedule %d: element %lld is "
					    "%d, want %d\n", i, (long long)j,
					    at(y, j), want[j]);
			}
	}
	return bad ? -1 : 0;
}

/*
 * One MatMulInteger or QLinearMatMul case: A (batch x m x k) and B
 * (k x n, or batch x k x n), random types and zero points; B constant
 * or not.
 */
static int
mm_case(int ql, int64_t batch, int64_t m, int64_t k, int64_t n, int bbatch,
    int bconst, int *nrun)
{
	int adt = irand(0, 1) ? AOE_U8 : AOE_I8, bdt = irand(0, 1) ? AOE_U8 :
	    AOE_I8, ydt = irand(0, 1) ? AOE_U8 : AOE_I8;
	int64_t ad[3] = { batch, m, k }, bd[3] = { batch, k, n }, one = 1;
	int64_t zan = ql ? 1 : irand(0, 1) ? m : 1, zbn = irand(0, 1) ? n : 1;
	int64_t b0, i, j, p, cnt = batch * m * n;
	aoe_tensor *A, *B, *za, *zb, *sa = NULL, *sb = NULL, *sy = NULL, *zy;
	int in[8], rc, ni;
	int32_t *want;
	qg t;

	qg_new(&t);
	in[0] = qg_tensor(&t, "a", adt, 3, ad, 0);
	if (ql) {
		in[1] = qg_tensor(&t, "as", AOE_F32, 0, &one, 1);
		in[2] = qg_tensor(&t, "az", adt, 0, &one, 1);
		in[3] = qg_tensor(&t, "b", bdt, bbatch ? 3 : 2, bbatch ? bd :
		    bd + 1, bconst);
		in[4] = qg_tensor(&t, "bs", AOE_F32, 1, &zbn, 1);
		in[5] = qg_tensor(&t, "bz", bdt, 1, &zbn, 1);
		in[6] = qg_tensor(&t, "ys", AOE_F32, 0, &one, 1);
		in[7] = qg_tensor(&t, "yz", ydt, 0, &one, 1);
		sa = t.g->tensors[in[1]];
		sb = t.g->tensors[in[4]];
		sy = t.g->tensors[in[6]];
		fill_scales(sa, 0.01f, 0.05f);
		fill_scales(sb, 0.01f, 0.05f);
		/* An output scale that keeps most results in range. */
		*(float *)sy->data = 0.0004f * sqrtf((float)k) * 255;
		ni = 8;
	} else {
		in[1] = qg_tensor(&t, "b", bdt, bbatch ? 3 : 2, bbatch ? bd :
		    bd + 1, bconst);
		in[2] = qg_tensor(&t, "az", adt, 1, &zan, 1);
		in[3] = qg_tensor(&t, "bz", bdt, 1, &zbn, 1);
		ni = 4;
	}
	A = t.g->tensors[in[0]];
	B = t.g->tensors[in[ql ? 3 : 1]];
	za = t.g->tensors[in[2]];
	zb = t.g->tensors[in[ql ? 5 : 3]];
	zy = ql ? t.g->tensors[in[7]] : NULL;
	if (bconst)
		fill(B, 0);
	fill(za, 0);
	fill(zb, 0);
	if (zy != NULL)
		fill(zy, 0);
	qg_node1(&t, ql ? "QLinearMatMul" : "MatMulInteger", ni, in);
	if (aoe_graph_prepare(t.g, &opts) < 0) {
		aoe_graph_free(t.g);
		return -1;
	}
	fill(A, 0);
	if (!bconst)
		fill(B, 0);
	want = aoe_xcalloc((size_t)cnt + 1, sizeof(int32_t));
	for (b0 = 0; b0 < batch; b0++)
		for (i = 0; i < m; i++)
			for (j = 0; j < n; j++) {
				int64_t acc = 0, o = bbatch ? b0 * k * n : 0;
				for (p = 0; p < k; p++)
					acc += (int64_t)(at(A, (b0 * m + i) *
					    k + p) - zp(za, i)) * (at(B, o +
					    p * n + j) - zp(zb, j));
				want[(b0 * m + i) * n + j] = !ql ?
				    (int32_t)acc : requant(acc, *(float *)
				    sa->data, ((float *)sb->data)[zbn == 1 ?
				    0 : j], *(float *)sy->data, zp(zy, 0),
				    zy->dtype);
			}
	rc = run_schedules(&t, 0, want, cnt, 4, nrun);
	free(want);
	aoe_graph_free(t.g);
	return rc;
}

static void
test_matmul(int ql)
{
	static const int64_t sz[][3] = {
		{ 1, 1, 1 }, { 1, 300, 70 }, { 37, 1, 19 }, { 13, 129, 1 },
		{ 50, 77, 65 }, { 97, 256, 48 }, { 12, 33, 64 }, { 7, 5, 129 },
	};
	int i, bad = 0, nrun = 0, ncase = 0;

	for (i = 0; i < (int)(sizeof(sz) / sizeof(sz[0])); i++) {
		ncase += 2;
		if (mm_case(ql, 1, sz[i][0], sz[i][1], sz[i][2], 0, 1,
		    &nrun) < 0 || mm_case(ql, 1, sz[i][0], sz[i][1],
		    sz[i][2], 0, 0, &nrun) < 0) {
			printf("# case %dx%dx%d failed\n", (int)sz[i][0],
			    (int)sz[i][1], (int)sz[i][2]);
			bad++;
		}
	}
	for (i = 0; i < 6; i++) {
		ncase++;
		if (mm_case(ql, irand(2, 3), irand(1, 20), irand(1, 90),
		    irand(1, 40), i & 1, i & 2, &nrun) < 0)
			bad++;
	}
	ok(bad == 0, "%s: %d random cases (types, zero points, shapes, "
	    "batches), %d runs under sampled schedules, all exact",
	    ql ? "QLinearMatMul" : "MatMulInteger", ncase, nrun);
}

/* A grouped 2-D convolution of X by W, for the reference. */
struct cref {
	const aoe_tensor *X, *W, *zx, *zw;
	int64_t c, h, w, cg, mg, kk, st, pad, dl;
};

/* The exact sum of output (im, oc, y0, x0). */
static int64_t
conv_ref(const struct cref *r, int64_t im, int64_t oc, int64_t y0,
    int64_t x0)
{
	int64_t acc = 0, gi = oc / r->mg, ci, ky, kx, iy, ix;
	int32_t xz = zp(r->zx, 0), xv, wv;

	for (ci = 0; ci < r->cg; ci++)
		for (ky = 0; ky < r->kk; ky++)
			for (kx = 0; kx < r->kk; kx++) {
				iy = y0 * r->st - r->pad + ky * r->dl;
				ix = x0 * r->st - r->pad + kx * r->dl;
				xv = xz;
				if (iy >= 0 && iy < r->h && ix >= 0 &&
				    ix < r->w)
					xv = at(r->X, ((im * r->c + gi * r->cg +
					    ci) * r->h + iy) * r->w + ix);
				wv = at(r->W, ((oc * r->cg + ci) * r->kk +
				    ky) * r->kk + kx) - zp(r->zw, oc);
				acc += (int64_t)(xv - xz) * wv;
			}
	return acc;
}

/* One ConvInteger or QLinearConv case. */
static int
conv_case(int ql, int64_t nb, int64_t c, int64_t group, int64_t mg,
    int64_t h, int64_t w, int64_t kk, int64_t st, int64_t pad, int64_t dl,
    int wconst, int *nrun)
{
	int xdt = irand(0, 1) ? AOE_U8 : AOE_I8, wdt = irand(0, 1) ? AOE_U8 :
	    AOE_I8, ydt = irand(0, 1) ? AOE_U8 : AOE_I8;
	int64_t m = mg * group, cg = c / group, one = 1;
	int64_t xd[4] = { nb, c, h, w }, wd[4] = { m, cg, kk, kk };
	int64_t oh = (h + 2 * pad - (kk - 1) * dl - 1) / st + 1;
	int64_t ow = (w + 2 * pad - (kk - 1) * dl - 1) / st + 1;
	int64_t pads[4] = { pad, pad, pad, pad }, sts[2] = { st, st };
	int64_t dls[2] = { dl, dl }, zwn = irand(0, 1) ? m : 1;
	int64_t im, oc, y0, x0, cnt;
	struct cref r;
	aoe_tensor *X, *W, *zx, *zw, *sx = NULL, *sw = NULL, *sy = NULL;
	aoe_tensor *zy = NULL, *B = NULL;
	int in[9], ni, rc;
	aoe_node *nd;
	int32_t *want;
	qg t;

	if (h + 2 * pad < (kk - 1) * dl + 1 || w + 2 * pad < (kk - 1) * dl + 1)
		return 0;
	qg_new(&t);
	in[0] = qg_tensor(&t, "x", xdt, 4, xd, 0);
	if (ql) {
		in[1] = qg_tensor(&t, "xs", AOE_F32, 0, &one, 1);
		in[2] = qg_tensor(&t, "xz", xdt, 0, &one, 1);
		in[3] = qg_tensor(&t, "w", wdt, 4, wd, wconst);
		in[4] = qg_tensor(&t, "ws", AOE_F32, 1, &zwn, 1);
		in[5] = qg_tensor(&t, "wz", wdt, 1, &zwn, 1);
		in[6] = qg_tensor(&t, "ys", AOE_F32, 0, &one, 1);
		in[7] = qg_tensor(&t, "yz", ydt, 0, &one, 1);
		in[8] = qg_tensor(&t, "b", AOE_I32, 1, &m, 1);
		sx = t.g->tensors[in[1]];
		sw = t.g->tensors[in[4]];
		sy = t.g->tensors[in[6]];
		zy = t.g->tensors[in[7]];
		B = t.g->tensors[in[8]];
		fill_scales(sx, 0.01f, 0.05f);
		fill_scales(sw, 0.01f, 0.05f);
		*(float *)sy->data = 0.0004f * sqrtf((float)(cg * kk * kk)) *
		    255;
		fill(zy, 0);
		fill(B, 0);
		ni = 9;
	} else {
		in[1] = qg_tensor(&t, "w", wdt, 4, wd, wconst);
		in[2] = qg_tensor(&t, "xz", xdt, 0, &one, 1);
		in[3] = qg_tensor(&t, "wz", wdt, 1, &zwn, 1);
		ni = 4;
	}
	X = t.g->tensors[in[0]];
	W = t.g->tensors[in[ql ? 3 : 1]];
	zx = t.g->tensors[in[2]];
	zw = t.g->tensors[in[ql ? 5 : 3]];
	fill(zx, 0);
	fill(zw, 0);
	if (wconst)
		fill(W, 0);
	nd = qg_node1(&t, ql ? "QLinearConv" : "ConvInteger", ni, in);
	attr_is(nd, "pads", 4, pads);
	attr_is(nd, "strides", 2, sts);
	attr_is(nd, "dilations", 2, dls);
	attr_i(nd, "group", group);
	if (aoe_graph_prepare(t.g, &opts) < 0) {
		aoe_graph_free(t.g);
		return -1;
	}
	fill(X, 0);
	if (!wconst)
		fill(W, 0);
	cnt = nb * m * oh * ow;
	want = aoe_xcalloc((size_t)cnt + 1, sizeof(int32_t));
	r.X = X, r.W = W, r.zx = zx, r.zw = zw;
	r.c = c, r.h = h, r.w = w, r.cg = cg, r.mg = mg, r.kk = kk;
	r.st = st, r.pad = pad, r.dl = dl;
	for (im = 0; im < nb; im++)
		for (oc = 0; oc < m; oc++)
			for (y0 = 0; y0 < oh; y0++)
				for (x0 = 0; x0 < ow; x0++) {
					int64_t acc = conv_ref(&r, im, oc, y0,
					    x0);
					int64_t o = ((im * m + oc) * oh + y0) *
					    ow + x0;
					if (!ql)
						want[o] = (int32_t)acc;
					else
						want[o] = requant(acc + at(B,
						    oc), *(float *)sx->data,
						    ((float *)sw->data)[zwn ==
						    1 ? 0 : oc], *(float *)
						    sy->data, zp(zy, 0),
						    zy->dtype);
				}
	rc = run_schedules(&t, 0, want, cnt, 3, nrun);
	free(want);
	aoe_graph_free(t.g);
	return rc;
}

static void
test_conv(int ql)
{
	int i, bad = 0, nrun = 0, ncase = 0;

	/* Fixed: a 3x3 layer, a 1x1 layer, a depthwise one. */
	ncase += 3;
	if (conv_case(ql, 1, 16, 1, 40, 9, 11, 3, 1, 1, 1, 1, &nrun) < 0 ||
	    conv_case(ql, 2, 33, 1, 17, 5, 5, 1, 1, 0, 1, 1, &nrun) < 0 ||
	    conv_case(ql, 1, 8, 8, 1, 7, 6, 3, 2, 1, 1, 1, &nrun) < 0)
		bad++;
	for (i = 0; i < 14; i++) {
		int64_t group = irand(1, 3), c = group * irand(1, 6);
		ncase++;
		if (conv_case(ql, irand(1, 2), c, group, irand(1, 20),
		    irand(1, 10), irand(1, 10), irand(1, 3), irand(1, 2),
		    irand(0, 2), irand(1, 2), i & 1, &nrun) < 0) {
			printf("# random case %d failed\n", i);
			bad++;
		}
	}
	ok(bad == 0, "%s: %d cases (groups, strides, pads, dilations, "
	    "types, per-channel zero points), %d runs under sampled "
	    "schedules, all exact", ql ? "QLinearConv" : "ConvInteger",
	    ncase, nrun);
}

/* QuantizeLinear then DequantizeLinear, per tensor and per axis. */
static void
test_qdq_ops(void)
{
	static const int64_t xd[3] = { 3, 5, 37 };
	int axis, dt, bad = 0, runs = 0;
	int64_t i, cnt = 3 * 5 * 37;

	for (axis = -1; axis < 3; axis++)
		for (dt = 0; dt < 2; dt++) {
			int64_t len = axis < 0 ? 1 : xd[axis];
			int odt = dt ? AOE_I8 : AOE_U8, in[3], in2[3];
			aoe_tensor *x, *s, *z, *q, *y;
			aoe_node *nq, *nd;
			static const char *const qo[] = { "q" };
			qg t;

			qg_new(&t);
			in[0] = qg_tensor(&t, "x", AOE_F32, 3, xd, 0);
			in[1] = qg_tensor(&t, "s", AOE_F32, axis < 0 ? 0 : 1,
			    &len, 1);
			in[2] = qg_tensor(&t, "z", odt, axis < 0 ? 0 : 1,
			    &len, 1);
			s = t.g->tensors[in[1]];
			z = t.g->tensors[in[2]];
			fill_scales(s, 0.005f, 0.02f);
			fill(z, 0);
			nq = qg_node(&t, "QuantizeLinear", 3, in, 1, qo);
			in2[0] = t.y;
			in2[1] = in[1];
			in2[2] = in[2];
			nd = qg_node1(&t, "DequantizeLinear", 3, in2);
			if (axis >= 0) {
				attr_i(nq, "axis", axis);
				attr_i(nd, "axis", axis);
			}
			if (aoe_graph_prepare(t.g, &opts) < 0) {
				bad++;
				aoe_graph_free(t.g);
				continue;
			}
			x = t.g->tensors[in[0]];
			fill(x, 3);
			/* Ties: halves of the scale must round to even. */
			for (i = 0; i < 8; i++)
				((float *)x->data)[i] = ((float)i - 3.5f) *
				    ((float *)s->data)[0];
			if (aoe_graph_run(t.g, &opts) < 0) {
				bad++;
				aoe_graph_free(t.g);
				continue;
			}
			runs++;
			q = t.g->tensors[aoe_graph_find(t.g, "q")];
			y = t.g->tensors[t.y];
			for (i = 0; i < cnt; i++) {
				int64_t a = axis < 0 ? 0 : i / (axis == 0 ?
				    185 : axis == 1 ? 37 : 1) % len;
				float sc = ((float *)s->data)[a];
				float v = rintf(((float *)x->data)[i] / sc) +
				    (float)zp(z, a);
				int32_t want;
				v = v < (dt ? -128 : 0) ? (dt ? -128 : 0) :
				    v > (dt ? 127 : 255) ? (dt ? 127 : 255) : v;
				want = (int32_t)v;
				if (at(q, i) != want || ((float *)y->data)[i] !=
				    (float)(want - zp(z, a)) * sc)
					bad++;
			}
			aoe_graph_free(t.g);
		}
	ok(bad == 0 && runs == 8, "QuantizeLinear and DequantizeLinear: "
	    "per tensor and along each axis, uint8 and int8, ties to even, "
	    "exact (%d graphs)", runs);
}

/* A graph whose preparation (or run) must fail with want in the message. */
static void
expect_fail(qg *t, int at_run, const char *want, const char *what)
{
	int rc = aoe_graph_prepare(t->g, &opts);
	const char *msg;

	if (rc == 0 && at_run)
		rc = aoe_graph_run(t->g, &opts);
	msg = aoe_errmsg();
	ok(rc < 0 && strstr(msg, want) != NULL && strchr(msg, '\n') == NULL,
	    "%s: %s", what, rc < 0 ? msg : "accepted");
	aoe_graph_free(t->g);
}

/*
 * The bad graphs: a QuantizeLinear with one scale of value s, a
 * constant or an input (set after prepare, by the caller); a
 * DequantizeLinear whose zero point is int8 and its data uint8; a
 * QuantizeLinear of a 2x3 tensor with 4 scales along axis 1.  The node
 * is named name.  Returns the scale's tensor.
 */
static int
mk_scale(qg *t, const char *name, float s, int konst)
{
	int64_t d[1] = { 4 }, one = 1;
	int in[3];

	qg_new(t);
	in[0] = qg_tensor(t, "x", AOE_F32, 1, d, 0);
	in[1] = qg_tensor(t, "s", AOE_F32, 0, &one, konst);
	in[2] = qg_tensor(t, "z", AOE_U8, 0, &one, 1);
	if (konst)
		*(float *)tdata(t, in[1]) = s;
	qg_node1(t, "QuantizeLinear", 3, in);
	free(t->g->nodes[0].name);
	t->g->nodes[0].name = aoe_xstrdup(name);
	return in[1];
}

static void
mk_zptype(qg *t, const char *name)
{
	int64_t d3[2] = { 2, 3 }, one = 1;
	int in[3];

	qg_new(t);
	in[0] = qg_tensor(t, "x", AOE_U8, 2, d3, 0);
	in[1] = qg_tensor(t, "s", AOE_F32, 0, &one, 1);
	in[2] = qg_tensor(t, "z", AOE_I8, 0, &one, 1);
	*(float *)tdata(t, in[1]) = 0.5f;
	qg_node1(t, "DequantizeLinear", 3, in);
	free(t->g->nodes[0].name);
	t->g->nodes[0].name = aoe_xstrdup(name);
}

static void
mk_axislen(qg *t, const char *name)
{
	int64_t d3[2] = { 2, 3 }, four = 4;
	int in[3];

	qg_new(t);
	in[0] = qg_tensor(t, "x", AOE_F32, 2, d3, 0);
	in[1] = qg_tensor(t, "s", AOE_F32, 1, &four, 1);
	in[2] = qg_tensor(t, "z", AOE_U8, 1, &four, 1);
	fill_scales(t->g->tensors[in[1]], 0.1f, 0.2f);
	qg_node1(t, "QuantizeLinear", 3, in);
	free(t->g->nodes[0].name);
	t->g->nodes[0].name = aoe_xstrdup(name);
}

/* QuantizeLinear with one scale of value s, a constant or an input. */
static void
bad_scale(float s, int konst)
{
	char want[128];
	int si;
	qg t;

	si = mk_scale(&t, "q1", s, konst);
	if (!konst) {
		if (aoe_graph_prepare(t.g, &opts) < 0) {
			ok(0, "prepare");
			return;
		}
		*(float *)tdata(&t, si) = s;
	}
	snprintf(want, sizeof(want), "QuantizeLinear 'q1': scale %g is not "
	    "a positive finite number", (double)s);
	expect_fail(&t, !konst, want, konst ? "a constant bad scale is "
	    "refused in prepare" : "an input's bad scale is refused in the "
	    "run");
}

static void
test_bad(void)
{
	int64_t d3[2] = { 2, 3 }, one = 1, m = 5;
	int in[8];
	qg t;

	bad_scale(0, 1);
	bad_scale(-0.5f, 1);
	bad_scale(NAN, 1);
	bad_scale(0, 0);
	mk_zptype(&t, "dq1");
	expect_fail(&t, 0, "DequantizeLinear 'dq1': zero point 'z' is int8, "
	    "not uint8", "a zero point of another type");
	mk_axislen(&t, "q2");
	expect_fail(&t, 0, "QuantizeLinear 'q2': scale 's' has 4 values, 1 "
	    "or 3 expected", "a per-axis scale of the wrong length");
	/* QLinearMatMul: b's zero point of another type than b. */
	qg_new(&t);
	in[0] = qg_tensor(&t, "a", AOE_U8, 2, d3, 0);
	in[1] = qg_tensor(&t, "as", AOE_F32, 0, &one, 1);
	in[2] = qg_tensor(&t, "az", AOE_U8, 0, &one, 1);
	in[3] = qg_tensor(&t, "b", AOE_I8, 2, (int64_t[]){ 3, 5 }, 1);
	in[4] = qg_tensor(&t, "bs", AOE_F32, 1, &m, 1);
	in[5] = qg_tensor(&t, "bz", AOE_U8, 1, &m, 1);
	in[6] = qg_tensor(&t, "ys", AOE_F32, 0, &one, 1);
	in[7] = qg_tensor(&t, "yz", AOE_U8, 0, &one, 1);
	qg_node1(&t, "QLinearMatMul", 8, in);
	expect_fail(&t, 0, "QLinearMatMul 'QLinearMatMul': B's zero point "
	    "'bz' must be int8", "QLinearMatMul: a zero point of another "
	    "type than B");
}

/*
 * QDQ fusion: x -> Q -> DQ -> Conv (DQ weights per channel, DQ int32
 * bias) -> Relu -> Q -> DQ -> MatMul (DQ weights per column) -> Q -> DQ,
 * fused and not; the outputs agree within one quantum.
 */
static void
test_fusion(void)
{
	int64_t xd[4] = { 1, 8, 12, 12 }, wd[4] = { 16, 8, 3, 3 };
	int64_t md[2] = { 12, 20 }, one = 1, m16 = 16, n20 = 20, i;
	int64_t pads[4] = { 1, 1, 1, 1 }, cnt, ndiff = 0, maxd = 0;
	static const char *const names[] = { "xq", "xd", "wd", "bd", "c", "r",
	    "cq", "cd", "md", "mm", "mq", "out" };
	int t_[16], k, pass, nq = 0;
	float *out[2] = { NULL, NULL }, ys;
	qg t;

	for (pass = 0; pass < 2; pass++) {
		aoe_run_opts o = opts;
		aoe_node *n;
		int in[3];

		rstate = 12345;
		qg_new(&t);
		t_[0] = qg_tensor(&t, "x", AOE_F32, 4, xd, 0);
		t_[1] = qg_tensor(&t, "xs", AOE_F32, 0, &one, 1);
		t_[2] = qg_tensor(&t, "xz", AOE_U8, 0, &one, 1);
		t_[3] = qg_tensor(&t, "w", AOE_I8, 4, wd, 1);
		t_[4] = qg_tensor(&t, "ws", AOE_F32, 1, &m16, 1);
		t_[5] = qg_tensor(&t, "b", AOE_I32, 1, &m16, 1);
		t_[6] = qg_tensor(&t, "bs", AOE_F32, 1, &m16, 1);
		t_[7] = qg_tensor(&t, "cs", AOE_F32, 0, &one, 1);
		t_[8] = qg_tensor(&t, "cz", AOE_U8, 0, &one, 1);
		t_[9] = qg_tensor(&t, "mw", AOE_I8, 2, md, 1);
		t_[10] = qg_tensor(&t, "mws", AOE_F32, 1, &n20, 1);
		t_[11] = qg_tensor(&t, "ms", AOE_F32, 0, &one, 1);
		t_[12] = qg_tensor(&t, "mz", AOE_I8, 0, &one, 1);
		*(float *)tdata(&t, t_[1]) = 2.0f / 255;
		*(uint8_t *)tdata(&t, t_[2]) = 128;
		fill(t.g->tensors[t_[3]], 0);
		fill_scales(t.g->tensors[t_[4]], 0.002f, 0.004f);
		fill(t.g->tensors[t_[5]], 0);
		for (i = 0; i < 16; i++)
			((float *)tdata(&t, t_[6]))[i] = *(float *)tdata(&t,
			    t_[1]) * ((float *)tdata(&t, t_[4]))[i];
		*(float *)tdata(&t, t_[7]) = 0.03f;
		*(uint8_t *)tdata(&t, t_[8]) = 0;
		fill(t.g->tensors[t_[9]], 0);
		fill_scales(t.g->tensors[t_[10]], 0.002f, 0.004f);
		ys = 0.05f;
		*(float *)tdata(&t, t_[11]) = ys;
		*(int8_t *)tdata(&t, t_[12]) = 3;
		t.g->noutputs = 0;
#define NODE(op, o, ...) do {						\
	int a_[] = { __VA_ARGS__ };					\
	const char *const o_[] = { names[o] };				\
	n = qg_node(&t, op, (int)(sizeof(a_) / sizeof(a_[0])), a_, 1,	\
	    o_);							\
	t.g->noutputs = 0;						\
} while (0)
		NODE("QuantizeLinear", 0, t_[0], t_[1], t_[2]);
		in[0] = t.y;
		NODE("DequantizeLinear", 1, in[0], t_[1], t_[2]);
		in[1] = t.y;
		NODE("DequantizeLinear", 2, t_[3], t_[4]);
		attr_i(n, "axis", 0);
		in[2] = t.y;
		NODE("DequantizeLinear", 3, t_[5], t_[6]);
		attr_i(n, "axis", 0);
		k = t.y;
		NODE("Conv", 4, in[1], in[2], k);
		attr_is(n, "pads", 4, pads);
		NODE("Relu", 5, t.y);
		NODE("QuantizeLinear", 6, t.y, t_[7], t_[8]);
		NODE("DequantizeLinear", 7, t.y, t_[7], t_[8]);
		k = t.y;
		NODE("DequantizeLinear", 8, t_[9], t_[10]);
		attr_i(n, "axis", 1);
		NODE("MatMul", 9, k, t.y);
		NODE("QuantizeLinear", 10, t.y, t_[11], t_[12]);
		NODE("DequantizeLinear", 11, t.y, t_[11], t_[12]);
#undef NODE
		t.g->outputs[0] = t.y;
		t.g->noutputs = 1;
		if (pass == 0)
			o.fuse_mode = AOE_FUSE_OFF;
		if (aoe_graph_prepare(t.g, &o) < 0) {
			ok(0, "QDQ graph prepared (pass %d)", pass);
			aoe_graph_free(t.g);
			return;
		}
		fill(t.g->tensors[t_[0]], 1.2f);
		if (aoe_graph_run(t.g, &o) < 0) {
			ok(0, "QDQ graph ran (pass %d)", pass);
			aoe_graph_free(t.g);
			return;
		}
		for (i = 0; pass == 1 && i < t.g->norder; i++) {
			const aoe_node *x = &t.g->nodes[t.g->order[i]];
			if (!x->dead && strncmp(x->op_type, "QLinear", 7) == 0)
				nq++;
		}
		cnt = aoe_tensor_numel(t.g->tensors[t.y]);
		out[pass] = aoe_xcalloc((size_t)cnt, sizeof(float));
		memcpy(out[pass], t.g->tensors[t.y]->data, sizeof(float) * cnt);
		aoe_graph_free(t.g);
	}
	for (i = 0; i < cnt; i++) {
		int64_t d = llrintf(fabsf(out[0][i] - out[1][i]) / ys);
		ndiff += d != 0;
		maxd = d > maxd ? d : maxd;
	}
	ok(nq == 2, "QDQ: the Conv and the MatMul run as QLinearConv and "
	    "QLinearMatMul (%d integer nodes)", nq);
	/*
	 * The QLinearConv's output differs from the unfused at ties (a
	 * quantum of the Conv's output, which the MatMul sums); so the
	 * final output is within a few of its quanta.
	 */
	ok(maxd <= 2 && ndiff * 20 <= cnt, "QDQ fused and unfused agree: %lld "
	    "of %lld outputs differ, by at most %lld quanta of the output "
	    "(allowed: 2, on at most 5%% of them)", (long long)ndiff,
	    (long long)cnt, (long long)maxd);
	free(out[0]);
	free(out[1]);
}

/* A QLinearMatMul of 64x256 by a constant 256x96, for aoe-opat. */
static int
write_qmm(const char *dir)
{
	int64_t ad[2] = { 64, 256 }, bd[2] = { 256, 96 }, one = 1;
	char path[1024];
	int in[8], rc;
	qg t;

	qg_new(&t);
	in[0] = qg_tensor(&t, "a", AOE_U8, 2, ad, 0);
	in[1] = qg_tensor(&t, "as", AOE_F32, 0, &one, 1);
	in[2] = qg_tensor(&t, "az", AOE_U8, 0, &one, 1);
	in[3] = qg_tensor(&t, "b", AOE_I8, 2, bd, 1);
	in[4] = qg_tensor(&t, "bs", AOE_F32, 0, &one, 1);
	in[5] = qg_tensor(&t, "bz", AOE_I8, 0, &one, 1);
	in[6] = qg_tensor(&t, "ys", AOE_F32, 0, &one, 1);
	in[7] = qg_tensor(&t, "yz", AOE_U8, 0, &one, 1);
	*(float *)tdata(&t, in[1]) = 0.02f;
	*(uint8_t *)tdata(&t, in[2]) = 7;
	fill(t.g->tensors[in[3]], 0);
	*(float *)tdata(&t, in[4]) = 0.01f;
	*(float *)tdata(&t, in[6]) = 0.5f;
	*(uint8_t *)tdata(&t, in[7]) = 128;
	qg_node1(&t, "QLinearMatMul", 8, in);
	free(t.g->nodes[0].name);
	t.g->nodes[0].name = aoe_xstrdup("qmm");
	snprintf(path, sizeof(path), "%s/qmm.onnx", dir);
	rc = aoe_onnx_save(t.g, path);
	aoe_graph_free(t.g);
	return rc;
}

/*
 * The models of tests/quant.t, through libaoe's ONNX writer: bad ones,
 * and a QLinearMatMul.
 */
static int
write_models(const char *dir)
{
	static const float sc[] = { 0, -1, NAN };
	char path[1024];
	int i, rc = 0;
	qg t;

	for (i = 0; i < 4; i++) {
		if (i < 3) {
			mk_scale(&t, "q1", sc[i], 1);
			snprintf(path, sizeof(path), "%s/scale%d.onnx", dir, i);
		} else {
			mk_zptype(&t, "dq1");
			snprintf(path, sizeof(path), "%s/zptype.onnx", dir);
		}
		rc |= aoe_onnx_save(t.g, path);
		aoe_graph_free(t.g);
	}
	mk_axislen(&t, "q2");
	snprintf(path, sizeof(path), "%s/axislen.onnx", dir);
	rc |= aoe_onnx_save(t.g, path);
	aoe_graph_free(t.g);
	rc |= write_qmm(dir);
	return rc < 0;
}

int
main(int argc, char **argv)
{
	const char *cap = getenv("AOE_MAX_ISA");

	if (argc == 3 && strcmp(argv[1], "-w") == 0)
		return write_models(argv[2]);
	__builtin_cpu_init();
	printf("# the VNNI form %s\n", __builtin_cpu_supports("avx512vnni") &&
	    !(cap != NULL && strcasecmp(cap, "avx2") == 0) ? "runs here" :
	    "cannot run here: the AVX2 form only");
	aoe_run_opts_init(&opts);
	opts.nthreads = 2;
	opts.use_bank = 0;
	test_matmul(0);
	test_matmul(1);
	test_conv(0);
	test_conv(1);
	test_qdq_ops();
	test_bad();
	test_fusion();
	return done_testing();
}
