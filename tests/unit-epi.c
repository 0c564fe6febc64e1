/*
 * unit-epi - TAP property tests of the fused epilogues (lib/kernels/epi.c,
 * aoe_epi_row and aoe_epi_f in kernel.h) and of the activations that
 * lib/passes/fuse.c canonicalises (Swish, Gelu; lib/kernels/k_act.c):
 * every kind (clamp, HardSwish, Sigmoid, SiLU, GELU erf and tanh forms)
 * with and without a column bias, a residual and a per-row affine, over
 * random row lengths that are and are not multiples of 8 and 16, matches
 * a plain scalar reference; a Conv (each of its algorithms that applies),
 * a Gemm and a MatMul with SiLU or GELU fused match the same node unfused
 * followed by the reference activation, at 1 and 2 threads; Swish and Gelu
 * nodes alone match it; x * Sigmoid(x) and the erf GELU written out
 * become one Swish and one Gelu node when the graph is prepared.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"
#include "kernel.h"
#include "passes.h"
#include "onenode.h"

static const char *const kname[] = { "clamp", "hardswish", "sigmoid",
    "silu", "gelu", "gelu_tanh" };

static float
ref_f(int kind, float lo, float hi, float v)
{
	double x = v;

	switch (kind) {
	case AOE_EPI_HARDSWISH: {
		double h = x / 6 + .5;
		return (float)(x * (h < 0 ? 0 : h > 1 ? 1 : h));
	}
	case AOE_EPI_SIGMOID:
		return (float)(1 / (1 + exp(-x)));
	case AOE_EPI_SILU:
		return (float)(x / (1 + exp(-x)));
	case AOE_EPI_GELU:
		return (float)(0.5 * x * (1 + erf(x / sqrt(2))));
	case AOE_EPI_GELU_TANH:
		return (float)(0.5 * x * (1 + tanh(sqrt(2 / M_PI) *
		    (x + 0.044715 * x * x * x))));
	}
	return v < lo ? lo : v > hi ? hi : v;
}

/* The activation kind of aoe_act for epilogue kind k. */
static int
act_of_epi(int k)
{
	static const int m[] = { AOE_ACT_CLIP, AOE_ACT_HARDSWISH,
	    AOE_ACT_SIGMOID, AOE_ACT_SILU, AOE_ACT_GELU, AOE_ACT_GELU_TANH };

	return m[k];
}

static int
close_enough(float got, float want)
{
	return fabsf(got - want) <= 2e-6f + 2e-5f * fabsf(want);
}

/* aoe_epi_row against the reference: returns the cases that differ. */
static int
rows_property(int *ncases)
{
	int bad = 0, k, i;

	for (k = AOE_EPI_CLAMP; k <= AOE_EPI_GELU_TANH; k++)
		for (i = 0; i < 60; i++) {
			int64_t len = 1 + (int64_t)((frand() + 1) * 50), j;
			float y[128], y0[128], pc[128], d[128], ps[4], pt[4];
			int usec = frand() > 0, used = frand() > 0;
			int aff = frand() > 0.3f;
			aoe_epi e;
			memset(&e, 0, sizeof(e));
			e.kind = k;
			e.lo = k == AOE_EPI_CLAMP ? -0.5f : -FLT_MAX;
			e.hi = k == AOE_EPI_CLAMP ? 0.75f : FLT_MAX;
			for (j = 0; j < 4; j++) {
				ps[j] = frand() * 2;
				pt[j] = frand();
			}
			for (j = 0; j < 128; j++) {
				y0[j] = y[j] = frand() * 8;
				pc[j] = frand();
				d[j] = frand();
			}
			e.pc = usec ? pc : NULL;
			e.ps = aff ? ps : NULL;
			e.pt = aff ? pt : NULL;
			aoe_epi_row(&e, 2, y, used ? d : NULL, len);
			(*ncases)++;
			for (j = 0; j < 128; j++) {
				float want = y0[j];
				if (j < len) {
					want += (usec ? pc[j] : 0) +
					    (used ? d[j] : 0);
					want = ref_f(k, e.lo, e.hi, want);
					if (aff)
						want = want * ps[2] + pt[2];
				}
				if (!close_enough(y[j], want)) {
					printf("# %s len %lld col %lld: %g, want "
					    "%g\n", kname[k], (long long)len,
					    (long long)j, y[j], want);
					bad++;
					break;
				}
			}
		}
	return bad;
}

/*
 * Node t (prepared, inputs filled) run with no activation, then with
 * activation kind ak: the second must be the first through the reference.
 */
static int
fused_matches(tg *t, int ak, int ek, const char *what)
{
	aoe_tensor *yt = t->g->tensors[t->y];
	int64_t ny = aoe_tensor_numel(yt), j;
	float *plain = malloc(sizeof(float) * (size_t)ny);
	aoe_attr *a = (aoe_attr *)aoe_attr_find(t->n, "_aoe_act");
	int th, good = 1;

	if (a == NULL)
		a = aoe_node_add_attr(t->n, "_aoe_act", AOE_A_INT);
	for (th = 1; th <= 2 && good; th++) {
		opts.nthreads = th;
		a = (aoe_attr *)aoe_attr_find(t->n, "_aoe_act");
		a->i = AOE_ACT_NONE;
		if (aoe_graph_run(t->g, &opts) < 0) {
			good = 0;
			break;
		}
		memcpy(plain, yt->data, sizeof(float) * (size_t)ny);
		a->i = ak;
		if (aoe_graph_run(t->g, &opts) < 0) {
			good = 0;
			break;
		}
		for (j = 0; j < ny; j++)
			if (!close_enough(((float *)yt->data)[j], ref_f(ek, 0,
			    0, plain[j]))) {
				printf("# %s, %s, %d threads, at %lld: %g, want "
				    "%g\n", what, kname[ek], th, (long long)j,
				    ((float *)yt->data)[j], ref_f(ek, 0, 0,
				    plain[j]));
				good = 0;
				break;
			}
	}
	free(plain);
	return good;
}

static int
conv_node(tg *t, int64_t c, int64_t m, int64_t hw, int64_t k, int64_t group)
{
	const int64_t xd[] = { 1, c, hw, hw }, wd[] = { m, c / group, k, k };
	const int64_t bd[] = { m }, ks[] = { k, k };
	const int64_t pads[] = { k / 2, k / 2, k / 2, k / 2 };

	tg_new(t, "conv");
	tg_input(t, 0, 4, xd);
	tg_input(t, 1, 4, wd);
	tg_input(t, 1, 1, bd);
	tg_node(t, "Conv");
	attr_i(t, "group", group);
	attr_is(t, "kernel_shape", 2, ks);
	attr_is(t, "pads", 4, pads);
	aoe_node_add_attr(t->n, "_aoe_act", AOE_A_INT)->i = 0;
	return tg_prepare(t);
}

static int
mm_node(tg *t, const char *op, int64_t m, int64_t k, int64_t n)
{
	const int64_t ad[] = { m, k }, bd[] = { k, n };

	tg_new(t, op);
	tg_input(t, 0, 2, ad);
	tg_input(t, 1, 2, bd);
	tg_node(t, op);
	aoe_node_add_attr(t->n, "_aoe_act", AOE_A_INT)->i = 0;
	return tg_prepare(t);
}

/* A Swish or Gelu node alone over n values against the reference. */
static int
act_alone(const char *op, const char *approx, int ek, int64_t n)
{
	tg t;
	const int64_t d[] = { n };
	const float *x, *y;
	int64_t j;
	int good = 1, th;

	tg_new(&t, op);
	tg_input(&t, 0, 1, d);
	tg_node(&t, op);
	if (approx)
		aoe_node_add_attr(t.n, "approximate", AOE_A_STRING)->s =
		    aoe_xstrdup(approx);
	if (tg_prepare(&t) < 0)
		return 0;
	for (j = 0; j < n; j++)
		((float *)t.g->tensors[t.in[0]]->data)[j] = frand() * 8;
	for (th = 1; th <= 2; th++) {
		opts.nthreads = th;
		if (aoe_graph_run(t.g, &opts) < 0)
			return 0;
		x = t.g->tensors[t.in[0]]->data;
		y = t.g->tensors[t.y]->data;
		for (j = 0; j < n; j++)
			if (!close_enough(y[j], ref_f(ek, 0, 0, x[j]))) {
				good = 0;
				break;
			}
	}
	aoe_graph_free(t.g);
	return good;
}

/* A graph input x: [1, 8, 5, 5]; value tensors named by the caller. */
static int
vt(aoe_graph *g, const char *name)
{
	int i = aoe_graph_tensor(g, name);

	g->tensors[i]->kind = AOE_T_VALUE;
	return i;
}

static int
cst(aoe_graph *g, const char *name, float v)
{
	int i = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[i];

	aoe_tensor_set(t, AOE_F32, 0, NULL);
	t->kind = AOE_T_CONST;
	aoe_tensor_alloc_const(t);
	*(float *)t->data = v;
	return i;
}

/* x * Sigmoid(x), and GELU's erf form: how many nodes are left of each. */
static void
canon_checks(void)
{
	static const int64_t xd[] = { 1, 8, 5, 5 };
	aoe_graph *g = aoe_graph_new("canon");
	int x, s, y, in2[2], dv, e, a, m, z, i, nsw = 0, ngelu = 0, nlive = 0;

	g->opset = 17;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->outputs = aoe_xcalloc(2, sizeof(int));
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 4, xd);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs[g->ninputs++] = x;
	s = vt(g, "s");
	y = vt(g, "y");
	aoe_graph_add_node(g, "sig", "Sigmoid", 1, &x, 1, &s);
	in2[0] = s;
	in2[1] = x;
	aoe_graph_add_node(g, "mul", "Mul", 2, in2, 1, &y);
	g->outputs[g->noutputs++] = y;
	/* Gelu: Mul(Mul(y, Add(Erf(Div(y, sqrt 2)), 1)), 0.5). */
	dv = vt(g, "dv");
	e = vt(g, "e");
	a = vt(g, "a");
	m = vt(g, "m");
	z = vt(g, "z");
	in2[0] = y;
	in2[1] = cst(g, "r2", 1.41421356f);
	aoe_graph_add_node(g, "div", "Div", 2, in2, 1, &dv);
	aoe_graph_add_node(g, "erf", "Erf", 1, &dv, 1, &e);
	in2[0] = e;
	in2[1] = cst(g, "one", 1);
	aoe_graph_add_node(g, "add", "Add", 2, in2, 1, &a);
	in2[0] = y;
	in2[1] = a;
	aoe_graph_add_node(g, "mulx", "Mul", 2, in2, 1, &m);
	in2[0] = m;
	in2[1] = cst(g, "half", 0.5f);
	aoe_graph_add_node(g, "mulh", "Mul", 2, in2, 1, &z);
	g->outputs[g->noutputs++] = z;
	if (aoe_graph_prepare(g, &opts) < 0) {
		ok(0, "the written-out SiLU and GELU graph prepares");
		aoe_graph_free(g);
		return;
	}
	/* Preparing canonicalises; a second pass finds nothing more. */
	ok(aoe_fuse_canon(g) == 0, "aoe_fuse_canon after prepare finds "
	    "nothing left to canonicalise");
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		if (n->dead)
			continue;
		nlive++;
		nsw += strcmp(n->op_type, "Swish") == 0;
		ngelu += strcmp(n->op_type, "Gelu") == 0;
	}
	ok(nsw == 1 && ngelu == 1 && nlive == 2, "x * Sigmoid(x) became one "
	    "Swish and the erf GELU one Gelu (%d Swish, %d Gelu, %d nodes)",
	    nsw, ngelu, nlive);
	aoe_graph_free(g);
}

/*
 * GELU's tanh form written out, 0.5 * x * (1 + Tanh(sqrt(2 / pi) * (x +
 * 0.044715 * x^3))), as exporters write it from input x into tensor y:
 * form 0 with Pow(x, 3) and the 0.5 last, form 1 with Mul(Mul(x, x), x),
 * the 0.5 first and each operand pair the other way round; form 2 is
 * form 0 with 0.05 for 0.044715, which is not GELU.
 */
static void
gelu_tanh_out(aoe_graph *g, int form, int x, int y)
{
	char nm[32];
	int c3, k, s, q, e, a, m, in2[2];

#define T(v) (snprintf(nm, sizeof(nm), "%s%d", #v, form), vt(g, nm))
#define C(v, f) (snprintf(nm, sizeof(nm), "%s%d", #v, form), cst(g, nm, f))
#define N(v, op, n, a0, a1, out) (in2[0] = (a0), in2[1] = (a1),	\
	snprintf(nm, sizeof(nm), "%s%d", #v, form),			\
	aoe_graph_add_node(g, nm, op, n, in2, 1, &(out)))
	c3 = T(c3);
	if (form == 1) {
		int sq = T(sq);
		N(sq, "Mul", 2, x, x, sq);
		N(cube, "Mul", 2, x, sq, c3);
	} else
		N(pow, "Pow", 2, x, C(three, 3), c3);
	k = T(k);
	s = T(s);
	q = T(q);
	e = T(e);
	a = T(a);
	m = T(m);
	if (form == 1) {
		N(k, "Mul", 2, c3, C(c, 0.044715f), k);
		N(s, "Add", 2, k, x, s);
		N(q, "Mul", 2, C(r, 0.7978845608f), s, q);
		N(tanh, "Tanh", 1, q, q, e);
		N(a, "Add", 2, C(one, 1), e, a);
		N(h, "Mul", 2, C(half, 0.5f), x, m);
		N(y, "Mul", 2, a, m, y);
	} else {
		N(k, "Mul", 2, C(c, form == 2 ? 0.05f : 0.044715f), c3, k);
		N(s, "Add", 2, x, k, s);
		N(q, "Mul", 2, s, C(r, 0.7978845608f), q);
		N(tanh, "Tanh", 1, q, q, e);
		N(a, "Add", 2, e, C(one, 1), a);
		N(m, "Mul", 2, x, a, m);
		N(y, "Mul", 2, m, C(half, 0.5f), y);
	}
#undef T
#undef C
#undef N
}

/*
 * The tanh form, in both forms, becomes one Gelu with approximate
 * "tanh" and computes what the written-out graph does; the near miss is
 * left alone.
 */
static void
canon_tanh_checks(void)
{
	static const int64_t xd[] = { 1, 8, 5, 5 };
	aoe_graph *g = aoe_graph_new("canon_tanh");
	const float *xv;
	int x, y[3], i, f, ngelu = 0, nlive = 0, good = 1;

	g->opset = 17;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->outputs = aoe_xcalloc(3, sizeof(int));
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 4, xd);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs[g->ninputs++] = x;
	for (f = 0; f < 3; f++) {
		char nm[8];
		snprintf(nm, sizeof(nm), "y%d", f);
		y[f] = vt(g, nm);
		gelu_tanh_out(g, f, x, y[f]);
		g->outputs[g->noutputs++] = y[f];
	}
	opts.nthreads = 1;
	if (aoe_graph_prepare(g, &opts) < 0) {
		ok(0, "the written-out tanh GELU graph prepares: %s",
		    aoe_errmsg());
		aoe_graph_free(g);
		return;
	}
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		if (n->dead)
			continue;
		nlive++;
		ngelu += strcmp(n->op_type, "Gelu") == 0 && strcmp(
		    aoe_attr_str(n, "approximate", "none"), "tanh") == 0;
	}
	ok(ngelu == 2, "GELU's tanh form written out (Pow or "
	    "x*x*x, the 0.5 first or last, operands either way) became a "
	    "Gelu with approximate=tanh; the near miss did not (%d Gelu, "
	    "%d nodes)", ngelu, nlive);
	xv = g->tensors[x]->data;
	for (i = 0; i < 200; i++)
		((float *)g->tensors[x]->data)[i] = frand() * 8;
	if (aoe_graph_run(g, &opts) < 0)
		good = 0;
	for (f = 0; f < 3 && good; f++)
		for (i = 0; i < 200; i++) {
			double v = xv[i], r = .5 * v * (1 + tanh(
			    0.7978845608 * (v + (f == 2 ? 0.05 : 0.044715) *
			    v * v * v)));
			if (!close_enough(((float *)g->tensors[y[f]]->data)[i],
			    (float)r)) {
				good = 0;
				break;
			}
		}
	ok(good, "... and computes what the written-out graph does");
	aoe_graph_free(g);
}

int
main(void)
{
	int nc = 0, bad, ek;

	bad = rows_property(&nc);
	ok(bad == 0, "aoe_epi_row: %d random rows (6 kinds, lengths 1 to "
	    "100, bias, residual, affine) match the reference", nc);
	for (ek = AOE_EPI_SILU; ek <= AOE_EPI_GELU_TANH; ek++) {
		static const int64_t cs[][5] = { { 8, 16, 9, 3, 1 },
		    { 5, 13, 7, 3, 1 }, { 17, 17, 11, 3, 17 },
		    { 16, 24, 6, 1, 1 }, { 3, 33, 20, 5, 1 } };
		unsigned c;
		int good = 1;
		for (c = 0; c < sizeof(cs) / sizeof(cs[0]); c++) {
			tg t;
			if (conv_node(&t, cs[c][0], cs[c][1], cs[c][2],
			    cs[c][3], cs[c][4]) < 0 ||
			    !fused_matches(&t, act_of_epi(ek), ek, "Conv"))
				good = 0;
			aoe_graph_free(t.g);
		}
		ok(good, "Conv (1x1, 3x3, 5x5, depthwise; channels 3 to 33) "
		    "with %s fused matches Conv then %s", kname[ek],
		    kname[ek]);
		{
			tg t;
			good = mm_node(&t, "MatMul", 7, 19, 13) == 0 &&
			    fused_matches(&t, act_of_epi(ek), ek, "MatMul");
			aoe_graph_free(t.g);
			ok(good, "MatMul 7x19x13 with %s fused matches",
			    kname[ek]);
			good = mm_node(&t, "Gemm", 9, 17, 33) == 0 &&
			    fused_matches(&t, act_of_epi(ek), ek, "Gemm");
			aoe_graph_free(t.g);
			ok(good, "Gemm 9x17x33 with %s fused matches",
			    kname[ek]);
		}
	}
	ok(act_alone("Swish", NULL, AOE_EPI_SILU, 1001), "a Swish node "
	    "alone (1001 values) matches x * sigmoid(x)");
	ok(act_alone("Gelu", NULL, AOE_EPI_GELU, 9001), "a Gelu node alone "
	    "(9001 values) matches the erf form");
	ok(act_alone("Gelu", "tanh", AOE_EPI_GELU_TANH, 77), "a Gelu node "
	    "with approximate=tanh matches the tanh form");
	canon_checks();
	canon_tanh_checks();
	(void)data;
	(void)numel_y;
	(void)attr_f;
	return done_testing();
}
