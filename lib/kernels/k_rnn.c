/*
 * k_rnn.c - the recurrent layers: LSTM, GRU and RNN (ONNX opset 7 to
 * 22), float32.
 *
 * Every direction (forward, reverse, bidirectional), sequence_lens,
 * initial_h and initial_c, LSTM's peepholes (P) and input_forget, GRU's
 * linear_before_reset, clip, layout 0 ([seq, batch, ...]) and 1
 * ([batch, seq, ...]), and the activations the specification lists
 * (Relu, Tanh, Sigmoid, Affine, LeakyRelu, ThresholdedRelu, ScaledTanh,
 * HardSigmoid, Elu, Softsign, Softplus), their alpha and beta taken in
 * order from activation_alpha and activation_beta by the functions that
 * use them, as ONNX Runtime does.
 *
 * A direction runs in two kinds of GEMM, both the project's tunable one
 * (aoe_sgemm_ex with the node's schedule): the input projection of every
 * timestep at once, X W^T into a workspace of [rows, gates * hidden] (with
 * the biases added), and at each step the recurrent product H R^T, added
 * onto that step's rows.  The gates' element-wise math runs between them,
 * vectorised for the default Sigmoid and Tanh.  A batch entry past its
 * sequence length keeps its state and gets zeros in Y.
 *
 * Knobs (the search space beside the code): the GEMM's blocking (mr, nr,
 * mc, kc, nc, par, packb), sized by the input projection's m x n x k, and
 * prepack: W and R, when constant, packed once in prepare for the
 * schedule's micro-kernel (the recurrent product then reads its packed
 * R at every step instead of packing it again).
 */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define HAVE_AVX2 1
#endif

#include "aoe_kernels.h"
#include "kernel.h"

enum { LSTM, GRU, RNN };

enum { A_SIGMOID, A_TANH, A_RELU, A_AFFINE, A_LEAKYRELU, A_THRELU,
    A_SCALEDTANH, A_HARDSIGMOID, A_ELU, A_SOFTSIGN, A_SOFTPLUS };

/* The activations: name, alphas and betas used, their defaults. */
static const struct actdef {
	const char *name;
	int kind, na, nb;
	float a, b;
} actdefs[] = {
	{ "Sigmoid", A_SIGMOID, 0, 0, 0, 0 },
	{ "Tanh", A_TANH, 0, 0, 0, 0 },
	{ "Relu", A_RELU, 0, 0, 0, 0 },
	{ "Affine", A_AFFINE, 1, 1, 1, 0 },
	{ "LeakyRelu", A_LEAKYRELU, 1, 0, .01f, 0 },
	{ "ThresholdedRelu", A_THRELU, 1, 0, 1, 0 },
	{ "ScaledTanh", A_SCALEDTANH, 1, 1, 1, 1 },
	{ "HardSigmoid", A_HARDSIGMOID, 1, 1, .2f, .5f },
	{ "Elu", A_ELU, 1, 0, 1, 0 },
	{ "Softsign", A_SOFTSIGN, 0, 0, 0, 0 },
	{ "Softplus", A_SOFTPLUS, 0, 0, 0, 0 },
};
#define NACTDEFS (sizeof(actdefs) / sizeof(actdefs[0]))

typedef struct act {
	int kind;
	float a, b;
} act;

/* Everything a node's attributes and shapes say. */
typedef struct rnn {
	int type;		/* LSTM, GRU, RNN */
	int ng;			/* gates: 4, 3, 1 */
	int nact;		/* activations a direction: 3, 2, 1 */
	int ndir, dir;		/* directions; 0 fwd, 1 reverse, 2 both */
	int layout, lbr, input_forget, has_clip;
	float clip;
	int64_t seq, batch, in, hid;
	act acts[6];
} rnn;

static int
bad(const aoe_node *n, const char *what)
{
	return aoe_err(AOE_EDATA, "%s '%s': %s", n->op_type, n->name, what);
}

static int
parse_acts(const aoe_node *n, rnn *r)
{
	static const char *defs[3][3] = {
		{ "Sigmoid", "Tanh", "Tanh" },
		{ "Sigmoid", "Tanh", NULL },
		{ "Tanh", NULL, NULL },
	};
	const aoe_attr *a = aoe_attr_find(n, "activations");
	int na = 0, nb = 0, ia = 0, ib = 0, i, total = r->nact * r->ndir;
	const float *al = aoe_attr_floats(n, "activation_alpha", &na);
	const float *be = aoe_attr_floats(n, "activation_beta", &nb);
	size_t j;

	if (al == NULL)
		na = 0;
	if (be == NULL)
		nb = 0;
	if (a != NULL && (a->type != AOE_A_STRINGS || a->n != total))
		return aoe_err(AOE_EDATA, "%s '%s': activations has %d "
		    "names, %d expected (%d a direction)", n->op_type,
		    n->name, a->type == AOE_A_STRINGS ? a->n : 0, total,
		    r->nact);
	for (i = 0; i < total; i++) {
		const char *s = a ? a->strings[i] : defs[r->type][i % r->nact];
		for (j = 0; j < NACTDEFS; j++)
			if (strcasecmp(s, actdefs[j].name) == 0)
				break;
		if (j == NACTDEFS)
			return aoe_err(AOE_EDATA, "%s '%s': unknown activation "
			    "'%s'", n->op_type, n->name, s);
		r->acts[i].kind = actdefs[j].kind;
		r->acts[i].a = actdefs[j].a;
		r->acts[i].b = actdefs[j].b;
		if (actdefs[j].na && ia < na)
			r->acts[i].a = al[ia++];
		if (actdefs[j].nb && ib < nb)
			r->acts[i].b = be[ib++];
	}
	return 0;
}

/* Read and check n's attributes and inputs into r. */
static int
rnn_parse(const aoe_graph *g, const aoe_node *n, rnn *r)
{
	const aoe_tensor *x, *w, *rr, *b, *sl, *h0, *c0, *p;
	const char *d;
	int64_t hs, bd, e;
	char buf[160];

	memset(r, 0, sizeof(*r));
	r->type = strcmp(n->op_type, "LSTM") == 0 ? LSTM :
	    strcmp(n->op_type, "GRU") == 0 ? GRU : RNN;
	r->ng = r->type == LSTM ? 4 : r->type == GRU ? 3 : 1;
	r->nact = r->type == LSTM ? 3 : r->type == GRU ? 2 : 1;
	/* Every output is optional (Y is often left out). */
	if (n->nin < 3 || n->nin > (r->type == LSTM ? 8 : 6) ||
	    opt_in(g, n, 0) == NULL || opt_in(g, n, 1) == NULL ||
	    opt_in(g, n, 2) == NULL)
		return bad(n, "inputs X, W and R are required");
	if (n->nout > (r->type == LSTM ? 3 : 2))
		return bad(n, "too many outputs");
	d = aoe_attr_str(n, "direction", "forward");
	if (strcmp(d, "forward") == 0)
		r->dir = 0;
	else if (strcmp(d, "reverse") == 0)
		r->dir = 1;
	else if (strcmp(d, "bidirectional") == 0)
		r->dir = 2;
	else
		return aoe_err(AOE_EDATA, "%s '%s': direction '%s' is not "
		    "forward, reverse or bidirectional", n->op_type, n->name,
		    d);
	r->ndir = r->dir == 2 ? 2 : 1;
	r->layout = (int)aoe_attr_int(n, "layout", 0);
	if (r->layout != 0 && r->layout != 1)
		return bad(n, "layout must be 0 or 1");
	r->lbr = (int)aoe_attr_int(n, "linear_before_reset", 0);
	r->input_forget = (int)aoe_attr_int(n, "input_forget", 0);
	if (r->lbr != 0 && r->lbr != 1)
		return bad(n, "linear_before_reset must be 0 or 1");
	if (r->input_forget != 0 && r->input_forget != 1)
		return bad(n, "input_forget must be 0 or 1");
	if (aoe_attr_find(n, "clip") != NULL) {
		r->has_clip = 1;
		r->clip = aoe_attr_float(n, "clip", 0);
		if (!(r->clip > 0))
			return bad(n, "clip must be positive");
	}
	x = aoe_in(g, n, 0);
	w = aoe_in(g, n, 1);
	rr = aoe_in(g, n, 2);
	if (x->dtype != AOE_F32 || w->dtype != AOE_F32 || rr->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': X, W and R must be "
		    "float32", n->op_type, n->name);
	if (x->ndim != 3 || w->ndim != 3 || rr->ndim != 3)
		return bad(n, "X, W and R must be 3-D");
	r->seq = x->dims[r->layout ? 1 : 0];
	r->batch = x->dims[r->layout ? 0 : 1];
	r->in = x->dims[2];
	if (rr->dims[2] <= 0 || rr->dims[1] != r->ng * rr->dims[2]) {
		snprintf(buf, sizeof(buf), "R is %lldx%lldx%lld, not "
		    "[directions, %d*hidden, hidden]", (long long)rr->dims[0],
		    (long long)rr->dims[1], (long long)rr->dims[2], r->ng);
		return bad(n, buf);
	}
	r->hid = rr->dims[2];
	hs = aoe_attr_int(n, "hidden_size", r->hid);
	if (hs != r->hid) {
		snprintf(buf, sizeof(buf), "hidden_size %lld disagrees with R "
		    "(hidden %lld)", (long long)hs, (long long)r->hid);
		return bad(n, buf);
	}
	if (w->dims[0] != r->ndir || rr->dims[0] != r->ndir) {
		snprintf(buf, sizeof(buf), "W and R have %lld and %lld "
		    "directions, direction '%s' needs %d",
		    (long long)w->dims[0], (long long)rr->dims[0], d, r->ndir);
		return bad(n, buf);
	}
	if (w->dims[1] != r->ng * r->hid || w->dims[2] != r->in) {
		snprintf(buf, sizeof(buf), "W is %lldx%lldx%lld, expected "
		    "%dx%lldx%lld (directions, %d*hidden, input)",
		    (long long)w->dims[0], (long long)w->dims[1],
		    (long long)w->dims[2], r->ndir, (long long)(r->ng *
		    r->hid), (long long)r->in, r->ng);
		return bad(n, buf);
	}
	if ((b = opt_in(g, n, 3)) != NULL && (b->dtype != AOE_F32 ||
	    b->ndim != 2 || b->dims[0] != r->ndir ||
	    b->dims[1] != 2 * r->ng * r->hid)) {
		snprintf(buf, sizeof(buf), "B must be float32 [%d, %lld]",
		    r->ndir, (long long)(2 * r->ng * r->hid));
		return bad(n, buf);
	}
	if ((sl = opt_in(g, n, 4)) != NULL && ((sl->dtype != AOE_I32 &&
	    sl->dtype != AOE_I64) || sl->ndim != 1 ||
	    sl->dims[0] != r->batch)) {
		snprintf(buf, sizeof(buf), "sequence_lens must be int32 "
		    "[%lld]", (long long)r->batch);
		return bad(n, buf);
	}
	bd = r->layout ? r->batch : r->ndir;
	e = r->layout ? r->ndir : r->batch;
	h0 = opt_in(g, n, 5);
	c0 = r->type == LSTM ? opt_in(g, n, 6) : NULL;
	if ((h0 != NULL && (h0->dtype != AOE_F32 || h0->ndim != 3 ||
	    h0->dims[0] != bd || h0->dims[1] != e ||
	    h0->dims[2] != r->hid)) || (c0 != NULL &&
	    (c0->dtype != AOE_F32 || c0->ndim != 3 || c0->dims[0] != bd ||
	    c0->dims[1] != e || c0->dims[2] != r->hid))) {
		snprintf(buf, sizeof(buf), "initial_h and initial_c must be "
		    "float32 [%lld, %lld, %lld]", (long long)bd, (long long)e,
		    (long long)r->hid);
		return bad(n, buf);
	}
	if (r->type == LSTM && (p = opt_in(g, n, 7)) != NULL &&
	    (p->dtype != AOE_F32 || p->ndim != 2 || p->dims[0] != r->ndir ||
	    p->dims[1] != 3 * r->hid)) {
		snprintf(buf, sizeof(buf), "P must be float32 [%d, %lld]",
		    r->ndir, (long long)(3 * r->hid));
		return bad(n, buf);
	}
	return parse_acts(n, r);
}

/* The workspace: XW, then the states h, c and a row buffer t. */
static size_t
rnn_scratch(const rnn *r)
{
	int64_t gh = r->ng * r->hid;

	return sizeof(float) * (size_t)(r->seq * r->batch * gh +
	    3 * r->batch * r->hid + r->batch * gh + 64);
}

static int
rnn_infer(aoe_graph *g, aoe_node *n)
{
	rnn r;
	int64_t dims[4];
	int rc, i;

	if ((rc = rnn_parse(g, n, &r)) < 0)
		return rc;
	if (r.layout == 0) {
		dims[0] = r.seq;
		dims[1] = r.ndir;
		dims[2] = r.batch;
	} else {
		dims[0] = r.batch;
		dims[1] = r.seq;
		dims[2] = r.ndir;
	}
	dims[3] = r.hid;
	if (opt_out(g, n, 0) != NULL &&
	    (rc = aoe_set_output(g, n, 0, AOE_F32, 4, dims)) < 0)
		return rc;
	if (r.layout == 0) {
		dims[0] = r.ndir;
		dims[1] = r.batch;
	} else {
		dims[0] = r.batch;
		dims[1] = r.ndir;
	}
	dims[2] = r.hid;
	for (i = 1; i < n->nout; i++)
		if (opt_out(g, n, i) != NULL &&
		    (rc = aoe_set_output(g, n, i, AOE_F32, 3, dims)) < 0)
			return rc;
	n->scratch = rnn_scratch(&r);
	return 0;
}

/*
 * Prepared state: W and R of each direction packed for the schedule.
 * R is packed in two parts, rows [0, rsplit) and the rest, where GRU's
 * hidden gate needs its own product (linear_before_reset 0).
 */
typedef struct rnn_priv {
	float *w[2], *ra[2], *rb[2];
	int64_t id;
} rnn_priv;

static void
rnn_priv_free(void *v)
{
	rnn_priv *q = v;
	int d;

	if (q == NULL)
		return;
	for (d = 0; d < 2; d++) {
		free(q->w[d]);
		free(q->ra[d]);
		free(q->rb[d]);
	}
	free(q);
}

static float *
pack_rows(const float *src, int64_t rows, int64_t k, const aoe_sched *s)
{
	size_t sz = aoe_sgemm_packed_size(1, rows, k, s);
	float *p;

	if (rows <= 0)
		return NULL;
	p = aligned_alloc(64, (sz * sizeof(float) + 63) & ~(size_t)63);
	if (p != NULL)
		aoe_sgemm_pack(1, 1, rows, k, src, k, p, s);
	return p;
}

/* The rows of R in the first recurrent product. */
static int64_t
rsplit(const rnn *r)
{
	return r->type == GRU && !r->lbr ? 2 * r->hid : r->ng * r->hid;
}

static int
rnn_prepare(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *w = aoe_in(g, n, 1), *rr = aoe_in(g, n, 2);
	rnn_priv *q;
	rnn r;
	int64_t gh, ra;
	int d, rc;

	aoe_node_unprepare(n);
	if ((rc = rnn_parse(g, n, &r)) < 0)
		return rc;
	if (w->kind != AOE_T_CONST || rr->kind != AOE_T_CONST ||
	    w->data == NULL || rr->data == NULL ||
	    aoe_sched_get(&n->sched, "prepack", 1) == 0)
		return 0;
	gh = r.ng * r.hid;
	ra = rsplit(&r);
	if ((q = calloc(1, sizeof(*q))) == NULL)
		goto nomem;
	for (d = 0; d < r.ndir; d++) {
		const float *wd = (const float *)w->data + d * gh * r.in;
		const float *rd = (const float *)rr->data + d * gh * r.hid;
		if (r.seq * r.batch > 1 && r.in > 0 &&
		    (q->w[d] = pack_rows(wd, gh, r.in, &n->sched)) == NULL)
			goto nomem;
		/* A matrix-vector product (batch 1) reads R as it is. */
		if (r.batch <= 1)
			continue;
		if ((q->ra[d] = pack_rows(rd, ra, r.hid, &n->sched)) == NULL)
			goto nomem;
		if (ra < gh && (q->rb[d] = pack_rows(rd + ra * r.hid, gh - ra,
		    r.hid, &n->sched)) == NULL)
			goto nomem;
	}
	q->id = aoe_sgemm_pack_id(1, &n->sched);
	n->priv = q;
	n->priv_free = rnn_priv_free;
	return 0;
nomem:
	rnn_priv_free(q);
	return aoe_err(AOE_ENOMEM, "%s '%s': out of memory", n->op_type,
	    n->name);
}

/*
 * The activations.  Sigmoid and Tanh, the common ones, are vectorised
 * with the exp of kernel.h; the others are plain loops.
 */
#ifdef HAVE_AVX2
static inline __m256
v_sigmoid(__m256 x)
{
	const __m256 one = _mm256_set1_ps(1);

	return _mm256_div_ps(one, _mm256_add_ps(one,
	    v_exp(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

/* tanh x = sign(x) (1 - e) / (1 + e), e = exp(-2|x|). */
static inline __m256
v_tanh(__m256 x)
{
	const __m256 one = _mm256_set1_ps(1), sgn = _mm256_set1_ps(-0.0f);
	__m256 ax = _mm256_andnot_ps(sgn, x), e, t;

	e = v_exp(_mm256_mul_ps(ax, _mm256_set1_ps(-2)));
	t = _mm256_div_ps(_mm256_sub_ps(one, e), _mm256_add_ps(one, e));
	return _mm256_or_ps(t, _mm256_and_ps(sgn, x));
}
#endif

static void
act_run(const act *a, float *x, int64_t n)
{
	int64_t i = 0;
	float v;

	switch (a->kind) {
	case A_SIGMOID:
#ifdef HAVE_AVX2
		for (; i + 8 <= n; i += 8)
			_mm256_storeu_ps(x + i, v_sigmoid(_mm256_loadu_ps(x +
			    i)));
#endif
		for (; i < n; i++)
			x[i] = 1 / (1 + expf(-x[i]));
		break;
	case A_TANH:
#ifdef HAVE_AVX2
		for (; i + 8 <= n; i += 8)
			_mm256_storeu_ps(x + i, v_tanh(_mm256_loadu_ps(x + i)));
#endif
		for (; i < n; i++)
			x[i] = tanhf(x[i]);
		break;
	case A_RELU:
		for (; i < n; i++)
			x[i] = x[i] > 0 ? x[i] : 0;
		break;
	case A_AFFINE:
		for (; i < n; i++)
			x[i] = a->a * x[i] + a->b;
		break;
	case A_LEAKYRELU:
		for (; i < n; i++)
			x[i] = x[i] >= 0 ? x[i] : a->a * x[i];
		break;
	case A_THRELU:
		for (; i < n; i++)
			x[i] = x[i] > a->a ? x[i] : 0;
		break;
	case A_SCALEDTANH:
		for (; i < n; i++)
			x[i] = a->a * tanhf(a->b * x[i]);
		break;
	case A_HARDSIGMOID:
		for (; i < n; i++) {
			v = a->a * x[i] + a->b;
			x[i] = v < 0 ? 0 : v > 1 ? 1 : v;
		}
		break;
	case A_ELU:
		for (; i < n; i++)
			x[i] = x[i] >= 0 ? x[i] : a->a * (expf(x[i]) - 1);
		break;
	case A_SOFTSIGN:
		for (; i < n; i++)
			x[i] = x[i] / (1 + fabsf(x[i]));
		break;
	case A_SOFTPLUS:
		for (; i < n; i++)
			x[i] = x[i] > 0 ? x[i] + log1pf(expf(-x[i])) :
			    log1pf(expf(x[i]));
		break;
	}
}

static void
clip_run(const rnn *r, float *x, int64_t n)
{
	int64_t i;

	if (!r->has_clip)
		return;
	for (i = 0; i < n; i++)
		x[i] = x[i] < -r->clip ? -r->clip : x[i] > r->clip ? r->clip :
		    x[i];
}

/* C (m x n, ldc) = beta C + A (m x k, lda) B^T, B n x k, maybe packed. */
static int
gemm_bt(int64_t m, int64_t n, int64_t k, const float *a, int64_t lda,
    const float *b, const float *bpack, int64_t id, float beta, float *c,
    int64_t ldc, int nthreads, const aoe_sched *s)
{
	aoe_gemm_ex x;

	memset(&x, 0, sizeof(x));
	x.transb = 1;
	x.m = m;
	x.n = n;
	x.k = k;
	x.alpha = 1;
	x.beta = beta;
	x.a = a;
	x.lda = lda;
	x.b = b;
	x.ldb = k;
	x.c = c;
	x.ldc = ldc;
	x.bpack = bpack;
	x.bpack_id = id;
	return aoe_sgemm_ex(&x, nthreads, s);
}

/* One direction d of node n (rev: it runs backwards in time). */
static int
rnn_dir(aoe_kctx *k, const rnn *r, int d, int rev, float *ws)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const rnn_priv *q = n->priv;
	const aoe_tensor *bt = opt_in(g, n, 3), *sl = opt_in(g, n, 4);
	const aoe_tensor *h0 = opt_in(g, n, 5);
	const aoe_tensor *c0 = r->type == LSTM ? opt_in(g, n, 6) : NULL;
	const aoe_tensor *pt = r->type == LSTM ? opt_in(g, n, 7) : NULL;
	const aoe_tensor *yt = opt_out(g, n, 0);
	const int64_t H = r->hid, B = r->batch, T = r->seq, gh = r->ng * H;
	const int64_t rows = T * B, ra = rsplit(r);
	const float *x = aoe_in(g, n, 0)->data;
	const float *w = (const float *)aoe_in(g, n, 1)->data + d * gh * r->in;
	const float *rw = (const float *)aoe_in(g, n, 2)->data + d * gh * H;
	const float *bias = bt ? (const float *)bt->data + d * 2 * gh : NULL;
	const float *pp = pt ? (const float *)pt->data + d * 3 * H : NULL;
	const act *f = &r->acts[d * r->nact], *ga = f + 1, *ha = f + 2;
	float *xw = ws, *h = xw + rows * gh, *c = h + B * H, *t = c + B * H;
	float *hr = t + B * H, *y = yt ? yt->data : NULL;
	int64_t step, ti, b, j, ldx, hb, cs;
	int rc;

	/* The input projection of every step, then the biases. */
	if ((rc = gemm_bt(rows, gh, r->in, x, r->in, w, q ? q->w[d] : NULL,
	    q ? q->id : 0, 0, xw, gh, k->nthreads, k->sched)) < 0)
		return rc;
	if (bias != NULL)
		for (j = 0; j < rows; j++) {
			float *row = xw + j * gh;
			for (b = 0; b < gh; b++)
				row[b] += bias[b] + (r->type == GRU && r->lbr &&
				    b >= 2 * H ? 0 : bias[gh + b]);
		}
	/* The initial states (layout 1 holds them [batch, dir, hidden]). */
	hb = r->layout ? (int64_t)r->ndir * H : H;
	for (b = 0; b < B; b++) {
		int64_t o = r->layout ? b * hb + d * H : (d * B + b) * H;
		if (h0)
			memcpy(h + b * H, (const float *)h0->data + o,
			    sizeof(float) * H);
		else
			memset(h + b * H, 0, sizeof(float) * H);
		if (c0)
			memcpy(c + b * H, (const float *)c0->data + o,
			    sizeof(float) * H);
		else
			memset(c + b * H, 0, sizeof(float) * H);
	}
	ldx = r->layout ? T * gh : gh;
	for (step = 0; step < T; step++) {
		float *gt;
		ti = rev ? T - 1 - step : step;
		gt = xw + (r->layout ? ti * gh : ti * B * gh);
		/* The recurrent product onto this step's rows. */
		if (r->type == GRU && r->lbr)
			rc = gemm_bt(B, gh, H, h, H, rw, q ? q->ra[d] : NULL,
			    q ? q->id : 0, 0, hr, gh, k->nthreads, k->sched);
		else
			rc = gemm_bt(B, ra, H, h, H, rw, q ? q->ra[d] : NULL,
			    q ? q->id : 0, 1, gt, ldx, k->nthreads, k->sched);
		if (rc < 0)
			return rc;
		for (b = 0; b < B; b++) {
			float *gb = gt + b * ldx, *hp = h + b * H;
			float *cp = c + b * H, *tb = t + b * H;
			int64_t len = T;
			if (sl != NULL)
				len = sl->dtype == AOE_I32 ?
				    ((const int32_t *)sl->data)[b] :
				    ((const int64_t *)sl->data)[b];
			if (len < 0 || len > T)
				return aoe_err(AOE_EDATA, "%s '%s': "
				    "sequence_lens[%lld] = %lld is not in "
				    "[0, %lld]", n->op_type, n->name,
				    (long long)b, (long long)len,
				    (long long)T);
			if (ti >= len) {
				if (r->type == GRU && !r->lbr)
					memset(tb, 0, sizeof(float) * H);
				continue;
			}
			if (r->type == LSTM) {
				float *gi = gb, *go = gb + H, *gf = gb + 2 * H;
				float *gc = gb + 3 * H;
				if (pp)
					for (j = 0; j < H; j++) {
						gi[j] += pp[j] * cp[j];
						gf[j] += pp[2 * H + j] * cp[j];
					}
				clip_run(r, gi, H);
				clip_run(r, gf, 2 * H);
				act_run(f, gi, H);
				if (r->input_forget)
					for (j = 0; j < H; j++)
						gf[j] = 1 - gi[j];
				else
					act_run(f, gf, H);
				act_run(ga, gc, H);
				for (j = 0; j < H; j++)
					cp[j] = gf[j] * cp[j] + gi[j] * gc[j];
				if (pp)
					for (j = 0; j < H; j++)
						go[j] += pp[H + j] * cp[j];
				clip_run(r, go, H);
				act_run(f, go, H);
				memcpy(tb, cp, sizeof(float) * H);
				act_run(ha, tb, H);
				for (j = 0; j < H; j++)
					hp[j] = go[j] * tb[j];
			} else if (r->type == GRU) {
				float *gz = gb, *gr = gb + H;
				if (r->lbr) {
					const float *hz = hr + b * gh;
					for (j = 0; j < 2 * H; j++)
						gz[j] += hz[j];
				}
				clip_run(r, gz, 2 * H);
				act_run(f, gz, 2 * H);
				if (r->lbr) {
					const float *hh = hr + b * gh + 2 * H;
					const float *rbh = bias ? bias + gh +
					    2 * H : NULL;
					for (j = 0; j < H; j++)
						gb[2 * H + j] += gr[j] *
						    (hh[j] + (rbh ? rbh[j] :
						    0));
				} else
					for (j = 0; j < H; j++)
						tb[j] = gr[j] * hp[j];
			} else {
				clip_run(r, gb, H);
				act_run(f, gb, H);
				memcpy(hp, gb, sizeof(float) * H);
			}
		}
		if (r->type == GRU) {
			/* (r . H) Rh^T, then the new state. */
			if (!r->lbr && (rc = gemm_bt(B, H, H, t, H, rw + ra * H,
			    q ? q->rb[d] : NULL, q ? q->id : 0, 1, gt + ra,
			    ldx, k->nthreads, k->sched)) < 0)
				return rc;
			for (b = 0; b < B; b++) {
				float *gb = gt + b * ldx, *hp = h + b * H;
				int64_t len = T;
				if (sl != NULL)
					len = sl->dtype == AOE_I32 ?
					    ((const int32_t *)sl->data)[b] :
					    ((const int64_t *)sl->data)[b];
				if (ti >= len)
					continue;
				clip_run(r, gb + 2 * H, H);
				act_run(ga, gb + 2 * H, H);
				for (j = 0; j < H; j++)
					hp[j] = (1 - gb[j]) * gb[2 * H + j] +
					    gb[j] * hp[j];
			}
		}
		/* This step's Y: the new state, zeros past a sequence. */
		if (y == NULL)
			continue;
		for (b = 0; b < B; b++) {
			int64_t len = T;
			float *yo = y + (r->layout ? ((b * T + ti) * r->ndir +
			    d) * H : ((ti * r->ndir + d) * B + b) * H);
			if (sl != NULL)
				len = sl->dtype == AOE_I32 ?
				    ((const int32_t *)sl->data)[b] :
				    ((const int64_t *)sl->data)[b];
			if (ti < len)
				memcpy(yo, h + b * H, sizeof(float) * H);
			else
				memset(yo, 0, sizeof(float) * H);
		}
	}
	/* The last states. */
	for (cs = 1; cs < n->nout && cs < 3; cs++) {
		aoe_tensor *o = opt_out(g, n, (int)cs);
		const float *src = cs == 1 ? h : c;
		if (o == NULL)
			continue;
		for (b = 0; b < B; b++)
			memcpy((float *)o->data + (r->layout ? b * hb + d * H :
			    (d * B + b) * H), src + b * H, sizeof(float) * H);
	}
	return 0;
}

static int
rnn_run(aoe_kctx *k)
{
	rnn r;
	int rc, d;

	if ((rc = rnn_parse(k->g, k->n, &r)) < 0)
		return rc;
	for (d = 0; d < r.ndir; d++)
		if ((rc = rnn_dir(k, &r, d, r.dir == 1 || d == 1,
		    k->scratch)) < 0)
			return rc;
	return 0;
}

int
aoe_space_rnn(aoe_space *sp)
{
	static const int64_t onoff[] = { 0, 1 };
	const aoe_tensor *w = aoe_in(sp->g, sp->n, 1);
	const aoe_tensor *rr = aoe_in(sp->g, sp->n, 2);
	rnn r;
	int rc, cw;

	if ((rc = rnn_parse(sp->g, sp->n, &r)) < 0)
		return rc;
	if ((rc = aoe_space_gemm_knobs(sp, r.seq * r.batch, r.ng * r.hid,
	    r.in)) < 0)
		return rc;
	cw = w->kind == AOE_T_CONST && rr->kind == AOE_T_CONST &&
	    r.seq * r.batch > 1;
	if (aoe_space_add(sp, "prepack", cw ? 2 : 1, cw ? onoff : onoff + 1,
	    "pack constant W and R once, in prepare") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 1);
	sp->fact[0] = cw;
	sp->check = aoe_gemm_check;
	sp->constraints = "as Gemm's: (mr,nr) a micro-kernel of this CPU; "
	    "mc % mr == 0; nc % nr == 0; packb == -1 when W and R (the "
	    "constant B) are prepacked";
	return 0;
}

const aoe_op aoe_ops_rnn[] = {
	{ "LSTM", rnn_infer, rnn_run, rnn_prepare,
	    aoe_gemm_default_sched },
	{ "GRU", rnn_infer, rnn_run, rnn_prepare,
	    aoe_gemm_default_sched },
	{ "RNN", rnn_infer, rnn_run, rnn_prepare,
	    aoe_gemm_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};
