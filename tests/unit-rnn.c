/*
 * unit-rnn.c - LSTM, GRU and RNN (lib/kernels/k_rnn.c) against a plain
 * reference in double over random shapes, directions, layouts, sequence
 * lengths, initial states, peepholes, clip, linear_before_reset,
 * input_forget and activations, each case run with its default schedule
 * and schedules sampled from its search space, on one and two threads.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"

static aoe_run_opts opts;

enum { LSTM, GRU, RNN };

static const char *actnames[] = { "Sigmoid", "Tanh", "Relu", "Affine",
    "LeakyRelu", "ThresholdedRelu", "ScaledTanh", "HardSigmoid", "Elu",
    "Softsign", "Softplus" };
/* How many of activation_alpha and activation_beta each one takes. */
static const int nalpha[] = { 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0 };
static const int nbeta[] = { 0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 0 };

typedef struct rcase {
	int type, dir, ndir, layout, lbr, ifg, ng, nact;
	int64_t T, B, I, H;
	int has_b, has_sl, has_h0, has_c0, has_p, has_clip, konst, acts;
	float clip;
	int act[6];
	double al[6], be[6];
	float *x, *w, *r, *b, *h0, *c0, *p;
	int32_t *sl;
} rcase;

static int
irand(int lo, int hi)
{
	return lo + (int)((frand() + 1) / 2 * (hi - lo + 1) - 1e-9);
}

static double
act(int k, double a, double b, double x)
{
	switch (k) {
	case 0:
		return 1 / (1 + exp(-x));
	case 1:
		return tanh(x);
	case 2:
		return x > 0 ? x : 0;
	case 3:
		return a * x + b;
	case 4:
		return x >= 0 ? x : a * x;
	case 5:
		return x > a ? x : 0;
	case 6:
		return a * tanh(b * x);
	case 7:
		x = a * x + b;
		return x < 0 ? 0 : x > 1 ? 1 : x;
	case 8:
		return x >= 0 ? x : a * (exp(x) - 1);
	case 9:
		return x / (1 + fabs(x));
	default:
		return log1p(exp(x));
	}
}

static float *
rnd(int64_t n)
{
	float *v = aoe_xcalloc((size_t)n + 1, sizeof(float));
	int64_t i;

	for (i = 0; i < n; i++)
		v[i] = frand();
	return v;
}

/* Layout-aware offsets of X, Y and the states. */
static int64_t
xoff(const rcase *c, int64_t t, int64_t b)
{
	return (c->layout ? b * c->T + t : t * c->B + b) * c->I;
}

static int64_t
soff(const rcase *c, int d, int64_t b)
{
	return (c->layout ? b * c->ndir + d : d * c->B + b) * c->H;
}

static double
clipv(const rcase *c, double v)
{
	if (!c->has_clip)
		return v;
	return v < -c->clip ? -c->clip : v > c->clip ? c->clip : v;
}

/* The reference: y, yh, yc as the outputs are laid out. */
static void
reference(const rcase *c, double *y, double *yh, double *yc)
{
	int64_t H = c->H, G = c->ng * H, t, s, b, j, q;
	int d;
	double *h = calloc(H, sizeof(double)), *cc = calloc(H, sizeof(double));
	double *g = calloc(G, sizeof(double)), *nh = calloc(H, sizeof(double));

	memset(y, 0, sizeof(double) * c->T * c->ndir * c->B * H);
	for (d = 0; d < c->ndir; d++) {
		const float *w = c->w + d * G * c->I, *r = c->r + d * G * H;
		const float *wb = c->has_b ? c->b + d * 2 * G : NULL;
		const float *p = c->has_p ? c->p + d * 3 * H : NULL;
		const int *ak = c->act + d * c->nact;
		const double *aa = c->al + d * c->nact, *ab = c->be + d * c->nact;
		int rev = c->dir == 1 || d == 1;
		for (b = 0; b < c->B; b++) {
			int64_t len = c->has_sl ? c->sl[b] : c->T;
			for (j = 0; j < H; j++) {
				h[j] = c->has_h0 ? c->h0[soff(c, d, b) + j] : 0;
				cc[j] = c->has_c0 ? c->c0[soff(c, d, b) + j] : 0;
			}
			for (s = 0; s < len; s++) {
				const float *xt;
				t = rev ? len - 1 - s : s;
				xt = c->x + xoff(c, t, b);
				/* x W^T + Wb, and h R^T + Rb. */
				for (j = 0; j < G; j++) {
					double v = wb ? wb[j] : 0, u = wb ?
					    wb[G + j] : 0;
					for (q = 0; q < c->I; q++)
						v += xt[q] * w[j * c->I + q];
					for (q = 0; q < H; q++)
						u += h[q] * r[j * H + q];
					g[j] = v + (c->type == GRU && j >= 2 *
					    H ? 0 : u);
				}
				if (c->type == LSTM) {
					for (j = 0; j < H; j++) {
						double i_ = g[j], o = g[H + j];
						double f = g[2 * H + j];
						double z = g[3 * H + j];
						if (p) {
							i_ += p[j] * cc[j];
							f += p[2 * H + j] * cc[j];
						}
						i_ = act(ak[0], aa[0], ab[0],
						    clipv(c, i_));
						f = c->ifg ? 1 - i_ : act(ak[0],
						    aa[0], ab[0], clipv(c, f));
						z = act(ak[1], aa[1], ab[1],
						    clipv(c, z));
						cc[j] = f * cc[j] + i_ * z;
						if (p)
							o += p[H + j] * cc[j];
						o = act(ak[0], aa[0], ab[0],
						    clipv(c, o));
						nh[j] = o * act(ak[2], aa[2],
						    ab[2], cc[j]);
					}
				} else if (c->type == GRU) {
					for (j = 0; j < H; j++) {
						double z = act(ak[0], aa[0],
						    ab[0], clipv(c, g[j]));
						double rr = act(ak[0], aa[0],
						    ab[0], clipv(c, g[H + j]));
						double hh = g[2 * H + j], u;
						if (c->lbr) {
							u = wb ? wb[G + 2 * H +
							    j] : 0;
							for (q = 0; q < H; q++)
								u += h[q] * r[(2 *
								    H + j) * H +
								    q];
							hh += rr * u;
						} else {
							u = wb ? wb[G + 2 * H +
							    j] : 0;
							/* (r . h) Rh^T. */
							for (q = 0; q < H; q++)
								u += act(ak[0],
								    aa[0], ab[0],
								    clipv(c, g[H +
								    q])) * h[q] *
								    r[(2 * H + j) *
								    H + q];
							hh += u;
						}
						hh = act(ak[1], aa[1], ab[1],
						    clipv(c, hh));
						nh[j] = (1 - z) * hh + z * h[j];
					}
				} else
					for (j = 0; j < H; j++)
						nh[j] = act(ak[0], aa[0], ab[0],
						    clipv(c, g[j]));
				memcpy(h, nh, sizeof(double) * H);
				for (j = 0; j < H; j++)
					y[(c->layout ? (b * c->T + t) * c->ndir +
					    d : (t * c->ndir + d) * c->B + b) *
					    H + j] = h[j];
			}
			for (j = 0; j < H; j++) {
				yh[soff(c, d, b) + j] = h[j];
				yc[soff(c, d, b) + j] = cc[j];
			}
		}
	}
	free(h);
	free(cc);
	free(g);
	free(nh);
}

/* Add tensor name with data v (a graph input unless konst). */
static int
add_in(aoe_graph *g, const char *name, int dtype, int nd,
    const int64_t *dims, const void *v, int konst)
{
	int i = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[i];

	aoe_tensor_set(t, dtype, nd, dims);
	if (konst) {
		t->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(t);
		memcpy(t->data, v, aoe_tensor_nbytes(t));
	} else {
		t->kind = AOE_T_INPUT;
		g->inputs[g->ninputs++] = i;
	}
	return i;
}

static aoe_graph *
build(const rcase *c, aoe_node **np)
{
	static const char *ops[] = { "LSTM", "GRU", "RNN" };
	static const char *dirs[] = { "forward", "reverse", "bidirectional" };
	aoe_graph *g = aoe_graph_new("rnn");
	int64_t G = c->ng * c->H, d3[3], d2[2], d1[1];
	int in[8], out[3], nin, k, i;
	aoe_node *n;
	aoe_attr *a;

	g->opset = 17;
	g->inputs = aoe_xcalloc(8, sizeof(int));
	g->outputs = aoe_xcalloc(3, sizeof(int));
	for (i = 0; i < 8; i++)
		in[i] = -1;
	d3[0] = c->layout ? c->B : c->T;
	d3[1] = c->layout ? c->T : c->B;
	d3[2] = c->I;
	in[0] = add_in(g, "X", AOE_F32, 3, d3, c->x, 0);
	d3[0] = c->ndir;
	d3[1] = G;
	d3[2] = c->I;
	in[1] = add_in(g, "W", AOE_F32, 3, d3, c->w, c->konst);
	d3[2] = c->H;
	in[2] = add_in(g, "R", AOE_F32, 3, d3, c->r, c->konst);
	d2[0] = c->ndir;
	d2[1] = 2 * G;
	if (c->has_b)
		in[3] = add_in(g, "B", AOE_F32, 2, d2, c->b, 1);
	d1[0] = c->B;
	if (c->has_sl)
		in[4] = add_in(g, "sl", AOE_I32, 1, d1, c->sl, 1);
	d3[0] = c->layout ? c->B : c->ndir;
	d3[1] = c->layout ? c->ndir : c->B;
	d3[2] = c->H;
	if (c->has_h0)
		in[5] = add_in(g, "h0", AOE_F32, 3, d3, c->h0, 1);
	if (c->has_c0)
		in[6] = add_in(g, "c0", AOE_F32, 3, d3, c->c0, 1);
	d2[1] = 3 * c->H;
	if (c->has_p)
		in[7] = add_in(g, "P", AOE_F32, 2, d2, c->p, 1);
	nin = c->type == LSTM ? 8 : 6;
	while (nin > 3 && in[nin - 1] < 0)
		nin--;
	/* A missing optional input in the middle stays -1. */
	out[0] = aoe_graph_tensor(g, "Y");
	out[1] = aoe_graph_tensor(g, "Y_h");
	out[2] = aoe_graph_tensor(g, "Y_c");
	k = aoe_graph_add_node(g, "rnn0", ops[c->type], nin, in,
	    c->type == LSTM ? 3 : 2, out);
	for (i = 0; i < (c->type == LSTM ? 3 : 2); i++)
		g->outputs[g->noutputs++] = out[i];
	n = &g->nodes[k];
	aoe_node_add_attr(n, "hidden_size", AOE_A_INT)->i = c->H;
	a = aoe_node_add_attr(n, "direction", AOE_A_STRING);
	a->s = aoe_xstrdup(dirs[c->dir]);
	aoe_node_add_attr(n, "layout", AOE_A_INT)->i = c->layout;
	if (c->type == GRU)
		aoe_node_add_attr(n, "linear_before_reset", AOE_A_INT)->i =
		    c->lbr;
	if (c->type == LSTM && c->ifg)
		aoe_node_add_attr(n, "input_forget", AOE_A_INT)->i = 1;
	if (c->has_clip)
		aoe_node_add_attr(n, "clip", AOE_A_FLOAT)->f = c->clip;
	if (c->acts) {
		int na = 0, nb = 0, m = c->nact * c->ndir;
		float al[6], be[6];
		a = aoe_node_add_attr(n, "activations", AOE_A_STRINGS);
		a->n = m;
		a->strings = aoe_xcalloc(m, sizeof(char *));
		for (i = 0; i < m; i++) {
			a->strings[i] = aoe_xstrdup(actnames[c->act[i]]);
			if (nalpha[c->act[i]])
				al[na++] = (float)c->al[i];
			if (nbeta[c->act[i]])
				be[nb++] = (float)c->be[i];
		}
		if (na) {
			a = aoe_node_add_attr(n, "activation_alpha",
			    AOE_A_FLOATS);
			a->n = na;
			a->floats = aoe_xcalloc(na, sizeof(float));
			memcpy(a->floats, al, sizeof(float) * na);
		}
		if (nb) {
			a = aoe_node_add_attr(n, "activation_beta",
			    AOE_A_FLOATS);
			a->n = nb;
			a->floats = aoe_xcalloc(nb, sizeof(float));
			memcpy(a->floats, be, sizeof(float) * nb);
		}
	}
	*np = n;
	return g;
}

static void
random_case(rcase *c)
{
	static const int defs[3][3] = { { 0, 1, 1 }, { 0, 1, 0 }, { 1, 0, 0 } };
	static const int bounded[] = { 0, 1, 6, 7, 9 };
	int i;

	memset(c, 0, sizeof(*c));
	c->type = irand(0, 2);
	c->ng = c->type == LSTM ? 4 : c->type == GRU ? 3 : 1;
	c->nact = c->type == LSTM ? 3 : c->type == GRU ? 2 : 1;
	c->dir = irand(0, 2);
	c->ndir = c->dir == 2 ? 2 : 1;
	c->layout = irand(0, 1);
	c->lbr = irand(0, 1);
	c->ifg = c->type == LSTM && irand(0, 3) == 0;
	c->T = irand(1, 7);
	c->B = irand(1, 5);
	c->I = irand(1, 20);
	c->H = irand(1, 24);
	c->has_b = irand(0, 1);
	c->has_sl = irand(0, 2) == 0;
	c->has_h0 = irand(0, 1);
	c->has_c0 = c->type == LSTM && irand(0, 1);
	c->has_p = c->type == LSTM && irand(0, 1);
	c->has_clip = irand(0, 3) == 0;
	c->clip = 0.5f + (frand() + 1);
	c->konst = irand(0, 2) != 0;
	c->acts = irand(0, 2) == 0;
	for (i = 0; i < c->nact * c->ndir; i++) {
		/*
		 * The gates' activation (f) bounded, as a gate is; the
		 * others any, with small weights so that nothing explodes.
		 */
		c->act[i] = !c->acts ? defs[c->type][i % c->nact] :
		    i % c->nact == 0 && c->type != RNN ? bounded[irand(0, 4)] :
		    irand(0, 10);
		c->al[i] = c->acts ? 0.1 + (frand() + 1) / 2 : 0;
		c->be[i] = c->acts ? (frand() + 1) / 2 : 0;
		if (!c->acts) {
			/* The kernel's defaults, which the reference needs. */
			c->al[i] = 0;
			c->be[i] = 0;
		}
	}
	c->x = rnd(c->T * c->B * c->I);
	c->w = rnd(c->ndir * c->ng * c->H * c->I);
	c->r = rnd(c->ndir * c->ng * c->H * c->H);
	for (i = 0; i < c->ndir * c->ng * c->H * c->H; i++)
		c->r[i] /= 1 + c->H / 4;
	c->b = rnd(c->ndir * 2 * c->ng * c->H);
	c->h0 = rnd(c->ndir * c->B * c->H);
	c->c0 = rnd(c->ndir * c->B * c->H);
	c->p = rnd(c->ndir * 3 * c->H);
	c->sl = aoe_xcalloc(c->B, sizeof(int32_t));
	for (i = 0; i < c->B; i++)
		c->sl[i] = irand(1, (int)c->T);
}

static void
free_case(rcase *c)
{
	free(c->x);
	free(c->w);
	free(c->r);
	free(c->b);
	free(c->h0);
	free(c->c0);
	free(c->p);
	free(c->sl);
}

static int
close_enough(const float *y, const double *ref, int64_t n, double *worst)
{
	int64_t i;
	double e;

	*worst = 0;
	for (i = 0; i < n; i++) {
		e = fabs(y[i] - ref[i]) / (1 + fabs(ref[i]));
		if (!(e <= *worst))
			*worst = isnan(e) ? INFINITY : e;
	}
	return *worst <= 2e-5;
}

static void
run_case(int no)
{
	static const char *ops[] = { "LSTM", "GRU", "RNN" };
	rcase c;
	aoe_graph *g;
	aoe_node *n;
	aoe_space sp;
	aoe_sched s;
	uint64_t seed = 1000 + no;
	double *ry, *rh, *rc, worst = 0;
	int64_t ny, ns;
	int i, th, bad = 0, runs = 0;
	char what[160];

	random_case(&c);
	snprintf(what, sizeof(what), "%s dir %d layout %d T%lld B%lld I%lld "
	    "H%lld%s%s%s%s%s%s%s%s", ops[c.type], c.dir, c.layout,
	    (long long)c.T, (long long)c.B, (long long)c.I, (long long)c.H,
	    c.has_b ? " B" : "", c.has_sl ? " seq_lens" : "",
	    c.has_h0 ? " h0" : "", c.has_c0 ? " c0" : "",
	    c.has_p ? " P" : "", c.has_clip ? " clip" : "",
	    c.type == GRU && c.lbr ? " lbr" : "", c.acts ? " acts" : "");
	ny = c.T * c.ndir * c.B * c.H;
	ns = c.ndir * c.B * c.H;
	ry = calloc(ny, sizeof(double));
	rh = calloc(ns, sizeof(double));
	rc = calloc(ns, sizeof(double));
	/* The kernel's default alpha and beta, for the reference. */
	for (i = 0; i < c.nact * c.ndir && c.acts; i++) {
		if (!nalpha[c.act[i]])
			c.al[i] = 0;
		if (!nbeta[c.act[i]])
			c.be[i] = 0;
	}
	reference(&c, ry, rh, rc);
	g = build(&c, &n);
	if (aoe_graph_prepare(g, &opts) < 0) {
		ok(0, "%s: prepare: %s", what, aoe_errmsg());
		goto out;
	}
	memcpy(g->tensors[g->inputs[0]]->data, c.x,
	    sizeof(float) * c.T * c.B * c.I);
	if (!c.konst) {
		memcpy(g->tensors[g->inputs[1]]->data, c.w, sizeof(float) *
		    c.ndir * c.ng * c.H * c.I);
		memcpy(g->tensors[g->inputs[2]]->data, c.r, sizeof(float) *
		    c.ndir * c.ng * c.H * c.H);
	}
	if (aoe_space_for(g, n, &sp) < 0) {
		ok(0, "%s: space: %s", what, aoe_errmsg());
		goto out;
	}
	for (i = -1; i < 3 && !bad; i++) {
		if (i < 0)
			s = sp.def;
		else if (aoe_space_sample(&sp, &seed, &s) < 0)
			break;
		if (aoe_space_apply(g, n, &s) < 0) {
			bad = 1;
			break;
		}
		for (th = 1; th <= 2 && !bad; th++) {
			const float *y = g->tensors[g->outputs[0]]->data;
			const float *yh = g->tensors[g->outputs[1]]->data;
			const float *yc = c.type == LSTM ?
			    g->tensors[g->outputs[2]]->data : NULL;
			double w1 = 0, w2 = 0, w3 = 0;
			opts.nthreads = th;
			if (aoe_graph_run(g, &opts) < 0) {
				printf("# run: %s\n", aoe_errmsg());
				bad = 1;
				break;
			}
			if (!close_enough(y, ry, ny, &w1) ||
			    !close_enough(yh, rh, ns, &w2) ||
			    (yc && !close_enough(yc, rc, ns, &w3))) {
				int q;
				bad = 1;
				printf("# threads %d, errors Y %g, Y_h %g, Y_c "
				    "%g; activations", th, w1, w2, w3);
				for (q = 0; q < c.nact * c.ndir; q++)
					printf(" %s(%g,%g)", actnames[c.act[q]],
					    c.al[q], c.be[q]);
				printf("\n");
			}
			if (w1 > worst)
				worst = w1;
			runs++;
		}
	}
	ok(!bad, "%s: %d runs match the reference (worst %.2g)", what, runs,
	    worst);
out:
	aoe_graph_free(g);
	free(ry);
	free(rh);
	free(rc);
	free_case(&c);
}

int
main(void)
{
	int i;

	aoe_run_opts_init(&opts);
	opts.use_bank = 0;
	opts.nthreads = 2;
	for (i = 0; i < 60; i++)
		run_case(i);
	return done_testing();
}
