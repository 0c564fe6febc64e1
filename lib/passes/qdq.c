/*
 * qdq.c - quantized graphs in the QDQ form onto the integer kernels.
 *
 * Quantization tools write an int8 model as float operators between
 * DequantizeLinear and QuantizeLinear nodes.  A Conv (or MatMul) whose
 * data and weights are dequantized int8 or uint8 tensors, and whose
 * result is quantized again, directly or after a Relu, computes the same
 * in integers: the Conv becomes a QLinearConv (the MatMul a
 * QLinearMatMul) reading the quantized tensors and writing the
 * QuantizeLinear's output, and the QuantizeLinear and the Relu go (a
 * Relu before a quantization is a clamp at the zero point, attribute
 * _aoe_relu).  The data's scale must be one value; the weights' one, or
 * one a filter (a column for MatMul).  A bias must be a dequantized
 * int32 tensor of scale x_scale * w_scale with zero point 0, which
 * QLinearConv adds as it is, or a float constant, rounded to that scale.
 *
 * How exact: unfused, the Conv sums float products of the dequantized
 * values (each rounded to float, the sum rounded at each step) and the
 * QuantizeLinear rounds sum / y_scale to an integer.  Fused, the sum of
 * integer products is exact, and then multiplied by the float
 * x_scale * w_scale / y_scale and rounded to an integer.  The two agree
 * except where sum / y_scale lies within the float rounding errors
 * (about 1e-6 of it, relative) of a half-integer, where one rounds up
 * and the other down: then they differ by one quantum.  A float bias
 * rounded to the accumulator's scale moves each result by at most half
 * of x_scale * w_scale, far below a quantum of the output.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "kernel.h"

typedef struct qdq {
	aoe_graph *g;
	char *kill;
	int *ncons;		/* live readers of each tensor */
	char *isout;
} qdq;

/*
 * The node of type op that writes tensor t, or NULL: a live node, or
 * one folded into a constant at load time (a DequantizeLinear of
 * constant weights), whose inputs are still there.
 */
static aoe_node *
made_by(const qdq *q, int t, const char *op)
{
	const aoe_graph *g = q->g;
	const aoe_tensor *x;
	int p;

	if (t < 0)
		return NULL;
	x = g->tensors[t];
	if (x->kind != AOE_T_VALUE && !x->folded)
		return NULL;
	p = x->producer;
	if (p < 0 || p >= g->nnodes || (g->nodes[p].dead && !x->folded) ||
	    q->kill[p] || g->nodes[p].domain ||
	    strcmp(g->nodes[p].op_type, op) != 0)
		return NULL;
	return &g->nodes[p];
}

/* The one reader of tensor t, of type op, or NULL. */
static aoe_node *
read_by(const qdq *q, int t, const char *op)
{
	aoe_graph *g = q->g;
	int i, j;

	if (t < 0 || q->ncons[t] != 1 || q->isout[t])
		return NULL;
	for (i = 0; i < g->nnodes; i++) {
		aoe_node *n = &g->nodes[i];
		if (n->dead || q->kill[i])
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] == t)
				return n->domain == NULL && strcmp(n->op_type,
				    op) == 0 ? n : NULL;
	}
	return NULL;
}

/* A constant float32 tensor's values, all positive and finite, or NULL. */
static const float *
const_scales(const aoe_tensor *t, int64_t *cnt)
{
	const float *s;
	int64_t i;

	if (t == NULL || t->kind != AOE_T_CONST || t->data == NULL ||
	    t->dtype != AOE_F32 || t->ndim > 1)
		return NULL;
	*cnt = aoe_tensor_numel(t);
	s = t->data;
	for (i = 0; i < *cnt; i++)
		if (!(s[i] > 0) || !isfinite(s[i]))
			return NULL;
	return s;
}

/*
 * Whether DequantizeLinear d dequantizes int8 or uint8 data with one
 * scale, or (per > 0) per scales along axis of its input.
 */
static int
dq_ok(const aoe_graph *g, const aoe_node *d, int64_t per, int axis)
{
	const aoe_tensor *x = aoe_in(g, d, 0), *z = opt_in(g, d, 2);
	int64_t cnt;

	if (d->nin < 2 || (x->dtype != AOE_U8 && x->dtype != AOE_I8) ||
	    aoe_attr_int(d, "block_size", 0) != 0 ||
	    const_scales(aoe_in(g, d, 1), &cnt) == NULL ||
	    (z != NULL && z->dtype != x->dtype))
		return 0;
	if (cnt == 1)
		return 1;
	return per > 0 && cnt == per && x->ndim > axis &&
	    aoe_axis(aoe_attr_int(d, "axis", 1), x->ndim) == axis;
}

/* Whether QuantizeLinear q quantizes to int8 or uint8 with one scale. */
static int
q_ok(const aoe_graph *g, const aoe_node *q)
{
	const aoe_tensor *z = opt_in(g, q, 2);
	int64_t cnt, odt = aoe_attr_int(q, "output_dtype", 0);

	if (q->nin < 2 || aoe_in(g, q, 0)->dtype != AOE_F32 ||
	    aoe_attr_int(q, "block_size", 0) != 0 ||
	    const_scales(aoe_in(g, q, 1), &cnt) == NULL || cnt != 1)
		return 0;
	if (z != NULL)
		return z->dtype == AOE_U8 || z->dtype == AOE_I8;
	return odt == 0 || odt == AOE_U8 || odt == AOE_I8;
}

/*
 * Input i of d, or when it is absent new zeros of type dt, shaped as d's
 * scale (input 1).
 */
static int
zp_or_zero(aoe_graph *g, const aoe_node *d, int i, int dt)
{
	const aoe_tensor *s = aoe_in(g, d, 1);
	aoe_tensor like;

	if (opt_in(g, d, i) != NULL)
		return d->in[i];
	memset(&like, 0, sizeof(like));
	like.dtype = dt;
	like.ndim = s->ndim;
	memcpy(like.dims, s->dims, sizeof(like.dims));
	return aoe_fuse_const(g, d->name, "zp", &like);
}

/*
 * The int32 bias of Conv c (input 2) at the scale sx * sw[j], or -1 when
 * there is none; -2 when it cannot be had.
 */
static int
conv_bias(qdq *q, const aoe_node *c, float sx, const float *sw, int64_t nsw,
    int64_t m)
{
	aoe_graph *g = q->g;
	const aoe_tensor *b = opt_in(g, c, 2);
	const aoe_node *db;
	aoe_tensor like;
	const float *bf;
	int32_t *bi;
	int64_t j, cnt;
	int t;

	if (b == NULL)
		return -1;
	if (b->ndim != 1 || b->dims[0] != m)
		return -2;
	if ((db = made_by(q, c->in[2], "DequantizeLinear")) != NULL) {
		const aoe_tensor *x = aoe_in(g, db, 0), *z = opt_in(g, db, 2);
		const float *sb = const_scales(aoe_in(g, db, 1), &cnt);
		if (x->dtype != AOE_I32 || sb == NULL || (cnt != 1 &&
		    cnt != m) || (z != NULL && (z->kind != AOE_T_CONST ||
		    z->data == NULL)))
			return -2;
		for (j = 0; z != NULL && j < aoe_tensor_numel(z); j++)
			if (((const int32_t *)z->data)[j] != 0)
				return -2;
		for (j = 0; j < m; j++) {
			float want = sx * sw[nsw == 1 ? 0 : j];
			if (fabsf(sb[cnt == 1 ? 0 : j] - want) > 1e-6f * want)
				return -2;
		}
		return db->in[0];
	}
	if (b->kind != AOE_T_CONST || b->data == NULL || b->dtype != AOE_F32)
		return -2;
	bf = b->data;
	for (j = 0; j < m; j++) {
		double v = rint(bf[j] / ((double)sx * sw[nsw == 1 ? 0 : j]));
		if (!(fabs(v) < 2147483647.0))
			return -2;
	}
	memset(&like, 0, sizeof(like));
	like.dtype = AOE_I32;
	like.ndim = 1;
	like.dims[0] = m;
	if ((t = aoe_fuse_const(g, c->name, "qbias", &like)) < 0)
		return -2;
	bi = g->tensors[t]->data;
	for (j = 0; j < m; j++)
		bi[j] = (int32_t)rint(bf[j] / ((double)sx *
		    sw[nsw == 1 ? 0 : j]));
	return t;
}

/*
 * Rewrite node p (a Conv or MatMul) into op, reading in[0..nin) and
 * writing quantization q's output; q and the Relu r (may be NULL) go.
 */
static void
rewrite(qdq *d, aoe_node *p, const char *op, const int *in, int nin,
    aoe_node *q, aoe_node *r)
{
	aoe_graph *g = d->g;
	int i;

	free(p->op_type);
	p->op_type = aoe_xstrdup(op);
	free(p->in);
	p->in = aoe_xcalloc((size_t)nin, sizeof(int));
	memcpy(p->in, in, sizeof(int) * nin);
	p->nin = nin;
	p->out[0] = q->out[0];
	if (r != NULL) {
		aoe_node_add_attr(p, "_aoe_relu", AOE_A_INT)->i = 1;
		d->kill[r - g->nodes] = 1;
	}
	d->kill[q - g->nodes] = 1;
	for (i = 0; i < nin; i++)
		if (in[i] >= 0)
			d->ncons[in[i]]++;
}

/*
 * The inputs of the integer node that replaces a product of the
 * dequantized da and db, quantized by q: the data, its scale and zero
 * point, the weights, theirs, and the output's scale and zero point
 * (in[0..8)).  0, or -1 when a missing zero point could not be made.
 */
static int
qlinear_inputs(aoe_graph *g, const aoe_node *da, const aoe_node *db,
    const aoe_node *q, int *in)
{
	int64_t odt = aoe_attr_int(q, "output_dtype", 0);

	in[0] = da->in[0];
	in[1] = da->in[1];
	in[2] = zp_or_zero(g, da, 2, aoe_in(g, da, 0)->dtype);
	in[3] = db->in[0];
	in[4] = db->in[1];
	in[5] = zp_or_zero(g, db, 2, aoe_in(g, db, 0)->dtype);
	in[6] = q->in[1];
	in[7] = zp_or_zero(g, q, 2, odt ? (int)odt : AOE_U8);
	return in[2] < 0 || in[5] < 0 || in[7] < 0 ? -1 : 0;
}

/* The QuantizeLinear after p's output, through a Relu or not. */
static aoe_node *
quant_after(qdq *d, const aoe_node *p, aoe_node **relu)
{
	aoe_node *q;

	*relu = NULL;
	if ((q = read_by(d, p->out[0], "QuantizeLinear")) == NULL &&
	    (*relu = read_by(d, p->out[0], "Relu")) != NULL)
		q = read_by(d, (*relu)->out[0], "QuantizeLinear");
	return q != NULL && q_ok(d->g, q) ? q : NULL;
}

static int
fuse_conv(qdq *d, aoe_node *c)
{
	aoe_graph *g = d->g;
	aoe_node *dx, *dw, *q, *r;
	const aoe_tensor *w;
	int64_t m, nsw = 1, cnt = 1;
	int in[9], bias;
	const float *sx, *sw;

	if (c->nin < 2 || c->nout != 1 ||
	    (dx = made_by(d, c->in[0], "DequantizeLinear")) == NULL ||
	    (dw = made_by(d, c->in[1], "DequantizeLinear")) == NULL ||
	    (w = aoe_in(g, dw, 0))->ndim < 3 ||
	    !dq_ok(g, dx, 0, 0) || !dq_ok(g, dw, w->dims[0], 0) ||
	    (q = quant_after(d, c, &r)) == NULL)
		return 0;
	m = w->dims[0];
	sx = const_scales(aoe_in(g, dx, 1), &cnt);
	sw = const_scales(aoe_in(g, dw, 1), &nsw);
	if ((bias = conv_bias(d, c, sx[0], sw, nsw, m)) == -2)
		return 0;
	if (qlinear_inputs(g, dx, dw, q, in) < 0)
		return 0;
	in[8] = bias;
	rewrite(d, c, "QLinearConv", in, bias >= 0 ? 9 : 8, q, r);
	return 1 + (r != NULL);
}

static int
fuse_matmul(qdq *d, aoe_node *mm)
{
	aoe_graph *g = d->g;
	aoe_node *da, *db, *q, *r;
	const aoe_tensor *b;
	int in[8];

	if (mm->nin != 2 || mm->nout != 1 ||
	    (da = made_by(d, mm->in[0], "DequantizeLinear")) == NULL ||
	    (db = made_by(d, mm->in[1], "DequantizeLinear")) == NULL ||
	    (b = aoe_in(g, db, 0))->ndim < 1 || !dq_ok(g, da, 0, 0) ||
	    !dq_ok(g, db, b->ndim == 2 ? b->dims[1] : 0, 1) ||
	    (q = quant_after(d, mm, &r)) == NULL)
		return 0;
	if (qlinear_inputs(g, da, db, q, in) < 0)
		return 0;
	rewrite(d, mm, "QLinearMatMul", in, 8, q, r);
	return 1 + (r != NULL);
}

int
aoe_fuse_qdq(aoe_graph *g)
{
	char *kill = aoe_xcalloc((size_t)g->nnodes + 1, 1);
	qdq d;
	int i, j, nk = 0, nnodes = g->nnodes;

	memset(&d, 0, sizeof(d));
	d.g = g;
	d.kill = kill;
	d.ncons = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	d.isout = aoe_xcalloc((size_t)g->ntensors + 1, 1);
	for (i = 0; i < g->noutputs; i++)
		d.isout[g->outputs[i]] = 1;
	for (i = 0; i < nnodes; i++) {
		const aoe_node *n = &g->nodes[i];
		for (j = 0; j < n->nin && !n->dead && !kill[i]; j++)
			if (n->in[j] >= 0)
				d.ncons[n->in[j]]++;
	}
	for (i = 0; i < nnodes; i++) {
		aoe_node *n = &g->nodes[i];
		if (n->dead || kill[i] || n->domain)
			continue;
		/*
		 * A fusion adds at most four constants: room for their
		 * counts past the tensors there are now.
		 */
		d.ncons = aoe_xrealloc(d.ncons, ((size_t)g->ntensors + 16) *
		    sizeof(int));
		d.isout = aoe_xrealloc(d.isout, (size_t)g->ntensors + 16);
		memset(d.ncons + g->ntensors, 0, 16 * sizeof(int));
		memset(d.isout + g->ntensors, 0, 16);
		if (strcmp(n->op_type, "Conv") == 0)
			nk += fuse_conv(&d, n);
		else if (strcmp(n->op_type, "MatMul") == 0)
			nk += fuse_matmul(&d, n);
	}
	if (nk > 0)
		aoe_fuse_compact(g, kill);
	free(d.ncons);
	free(d.isout);
	free(kill);
	return nk > 0;
}
