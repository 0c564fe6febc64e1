/*
 * k_train.c - the operators of training graphs: NegativeLogLikelihoodLoss,
 * SoftmaxCrossEntropyLoss and Dropout.
 *
 * The losses view the scores as [N][C][D] (D the product of the
 * dimensions after the classes, 1 for [N, C]) and the targets as [N][D].
 * A target equal to ignore_index contributes nothing and weighs nothing;
 * any other must be a class in [0, C).  The loss of an element is
 * -w[t] * x[n][t][d] (the log-softmax of x for SoftmaxCrossEntropyLoss,
 * which is also its optional second output), with w the class weights or
 * 1; "none" gives the losses in the targets' shape, "sum" their sum and
 * "mean" their sum over the sum of the weights (the count of targets not
 * ignored, without weights).  Sums are in double.  float32 and float64.
 *
 * Dropout at inference (no training_mode input, or false, or a ratio of
 * 0) copies its input and sets its optional mask to all true.  With
 * training_mode true it keeps an element when a uniform draw in [0, 1) is
 * at least the ratio and scales the kept ones by 1 / (1 - ratio).  The
 * draws are numpy's: MT19937 seeded by the seed attribute (0 when it is
 * absent) as np.random.seed(seed), then random_sample() in row-major
 * order, so a run is reproducible and matches the ONNX reference
 * implementation.  The ratio and training_mode are read when the node
 * runs, so they may be graph inputs.
 *
 * Knobs: "par" (elements per thread of the copy and the log-softmax; 0
 * one thread).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

#define DEF_PAR AOE_PAR_DEF

static inline double
ld(const void *p, int dt, int64_t i)
{
	return dt == AOE_F64 ? ((const double *)p)[i] :
	    ((const float *)p)[i];
}

static inline void
st(void *p, int dt, int64_t i, double v)
{
	if (dt == AOE_F64)
		((double *)p)[i] = v;
	else
		((float *)p)[i] = (float)v;
}

static inline int64_t
ix_at(const void *p, int dt, int64_t i)
{
	return dt == AOE_I64 ? ((const int64_t *)p)[i] :
	    ((const int32_t *)p)[i];
}

/*
 * Losses.
 */

enum { RED_NONE, RED_SUM, RED_MEAN };

static int
reduction(const aoe_node *n)
{
	const char *r = aoe_attr_str(n, "reduction", "mean");

	if (strcmp(r, "none") == 0)
		return RED_NONE;
	if (strcmp(r, "sum") == 0)
		return RED_SUM;
	if (strcmp(r, "mean") == 0)
		return RED_MEAN;
	return aoe_err(AOE_EDATA, "%s '%s': reduction '%s' is not none, sum "
	    "or mean", n->op_type, n->name, r);
}

/* Check the target t against class count c (the ignored one aside). */
static int
check_targets(const aoe_node *n, const aoe_tensor *t, int64_t c)
{
	const aoe_attr *ii = aoe_attr_find(n, "ignore_index");
	int64_t i, v, cnt = aoe_tensor_numel(t);

	for (i = 0; i < cnt; i++) {
		v = ix_at(t->data, t->dtype, i);
		if (ii != NULL && v == ii->i)
			continue;
		if (v < 0 || v >= c)
			return aoe_err(AOE_EDATA, "%s '%s': target %lld is out "
			    "of range for %lld classes", n->op_type, n->name,
			    (long long)v, (long long)c);
	}
	return 0;
}

static int
loss_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *t, *w;
	int64_t none = 0;
	int rc, red, d;

	if ((rc = aoe_need_inputs(g, n, 2, 3)) < 0)
		return rc;
	if ((red = reduction(n)) < 0)
		return red;
	x = aoe_in(g, n, 0);
	t = aoe_in(g, n, 1);
	w = opt_in(g, n, 2);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64)
		return aoe_err(AOE_EUNSUP, "%s '%s': scores of dtype %s not "
		    "supported", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (t->dtype != AOE_I32 && t->dtype != AOE_I64)
		return aoe_err(AOE_EDATA, "%s '%s': targets must be int32 or "
		    "int64, not %s", n->op_type, n->name,
		    aoe_dtype_name(t->dtype));
	if (x->ndim < 2 || t->ndim != x->ndim - 1)
		return aoe_err(AOE_EDATA, "%s '%s': scores of rank %d and "
		    "targets of rank %d (need [N, C, ...] and [N, ...])",
		    n->op_type, n->name, x->ndim, t->ndim);
	for (d = 0; d < t->ndim; d++)
		if (t->dims[d] != x->dims[d == 0 ? 0 : d + 1])
			return aoe_err(AOE_EDATA, "%s '%s': targets dimension "
			    "%d is %lld, the scores' is %lld", n->op_type,
			    n->name, d, (long long)t->dims[d],
			    (long long)x->dims[d == 0 ? 0 : d + 1]);
	if (w != NULL && (w->dtype != x->dtype || w->ndim != 1 ||
	    w->dims[0] != x->dims[1]))
		return aoe_err(AOE_EDATA, "%s '%s': weights must be %s of "
		    "shape [%lld]", n->op_type, n->name,
		    aoe_dtype_name(x->dtype), (long long)x->dims[1]);
	if (t->kind == AOE_T_CONST && t->data &&
	    (rc = check_targets(n, t, x->dims[1])) < 0)
		return rc;
	if (red == RED_NONE)
		rc = aoe_set_output(g, n, 0, x->dtype, t->ndim, t->dims);
	else
		rc = aoe_set_output(g, n, 0, x->dtype, 0, &none);
	if (rc < 0)
		return rc;
	if (strcmp(n->op_type, "SoftmaxCrossEntropyLoss") == 0 &&
	    opt_out(g, n, 1) != NULL)
		rc = aoe_set_output(g, n, 1, x->dtype, x->ndim, x->dims);
	return rc;
}

struct lsm_ctx {
	const void *x;
	void *y;
	int dt;
	int64_t c, dd, rows, nch;
};

/* The log-softmax over the classes of rows (n, d) of a chunk. */
static void
lsm_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct lsm_ctx *l = ctx;
	int64_t r = aoe_chunk_lo(l->rows, l->nch, chunk);
	int64_t end = aoe_chunk_lo(l->rows, l->nch, chunk + 1), j, b;
	double m, s;

	for (; r < end; r++) {
		b = (r / l->dd) * l->c * l->dd + r % l->dd;
		m = -INFINITY;
		for (j = 0; j < l->c; j++)
			m = fmax(m, ld(l->x, l->dt, b + j * l->dd));
		s = 0;
		for (j = 0; j < l->c; j++)
			s += exp(ld(l->x, l->dt, b + j * l->dd) - m);
		s = m + log(s);
		for (j = 0; j < l->c; j++)
			st(l->y, l->dt, b + j * l->dd,
			    ld(l->x, l->dt, b + j * l->dd) - s);
	}
}

static int
loss_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *t = aoe_in(k->g, k->n, 1);
	aoe_tensor *w = opt_in(k->g, k->n, 2), *y = aoe_out(k->g, k->n, 0);
	aoe_tensor *lp = NULL;
	const aoe_attr *ii = aoe_attr_find(k->n, "ignore_index");
	const void *p = x->data;
	int64_t c = x->dims[1], dd = prod(x->dims, 2, x->ndim), i, v, nt;
	int64_t cnt = aoe_tensor_numel(t);
	double sum = 0, wsum = 0, wt, l;
	int red, rc, dt = x->dtype;

	if ((red = reduction(k->n)) < 0)
		return red;
	if ((rc = check_targets(k->n, t, c)) < 0)
		return rc;
	if (strcmp(k->n->op_type, "SoftmaxCrossEntropyLoss") == 0) {
		struct lsm_ctx s;

		lp = opt_out(k->g, k->n, 1);
		s.x = x->data;
		s.y = lp ? lp->data : k->scratch;
		s.dt = dt;
		s.c = c;
		s.dd = dd;
		s.rows = cnt;
		nt = nthreads_for(cnt * c, aoe_sched_get(k->sched, "par",
		    DEF_PAR), k->nthreads);
		s.nch = aoe_nchunks(cnt, (int)nt);
		if (cnt > 0)
			aoe_parallel((int)nt, s.nch, lsm_chunk, &s);
		p = s.y;
	}
	for (i = 0; i < cnt; i++) {
		v = ix_at(t->data, t->dtype, i);
		if (ii != NULL && v == ii->i) {
			l = 0;
			wt = 0;
		} else {
			wt = w ? ld(w->data, dt, v) : 1;
			l = -wt * ld(p, dt, (i / dd) * c * dd + v * dd +
			    i % dd);
		}
		if (red == RED_NONE)
			st(y->data, dt, i, l);
		sum += l;
		wsum += wt;
	}
	if (red == RED_SUM)
		st(y->data, dt, 0, sum);
	else if (red == RED_MEAN)
		st(y->data, dt, 0, sum / wsum);
	return 0;
}

/* SoftmaxCrossEntropyLoss keeps its log-softmax in scratch without it. */
static int
sce_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc;

	if ((rc = loss_infer(g, n)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (opt_out(g, n, 1) == NULL)
		n->scratch = aoe_tensor_nbytes(x);
	return 0;
}

/*
 * Dropout.
 */

/* numpy's legacy MT19937: np.random.seed(s), then random_sample(). */
typedef struct mt19937 {
	uint32_t mt[624];
	int i;
} mt19937;

static void
mt_seed(mt19937 *m, uint32_t s)
{
	int i;

	m->mt[0] = s;
	for (i = 1; i < 624; i++)
		m->mt[i] = 1812433253u * (m->mt[i - 1] ^
		    (m->mt[i - 1] >> 30)) + (uint32_t)i;
	m->i = 624;
}

static uint32_t
mt_next(mt19937 *m)
{
	uint32_t y;
	int k;

	if (m->i >= 624) {
		for (k = 0; k < 624; k++) {
			y = (m->mt[k] & 0x80000000u) |
			    (m->mt[(k + 1) % 624] & 0x7fffffffu);
			m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^
			    (y & 1 ? 0x9908b0dfu : 0);
		}
		m->i = 0;
	}
	y = m->mt[m->i++];
	y ^= y >> 11;
	y ^= (y << 7) & 0x9d2c5680u;
	y ^= (y << 15) & 0xefc60000u;
	y ^= y >> 18;
	return y;
}

static double
mt_double(mt19937 *m)
{
	uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;

	return (a * 67108864.0 + b) / 9007199254740992.0;
}

static int
dropout_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *r, *tm;
	int rc, mdt;

	if ((rc = aoe_need_inputs(g, n, 1, 3)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->ndim < 0 || aoe_dtype_size(x->dtype) == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' has no static "
		    "shape or an unsupported dtype", n->op_type, n->name,
		    x->name);
	if ((r = opt_in(g, n, 1)) != NULL && (aoe_tensor_numel(r) != 1 ||
	    (r->dtype != AOE_F32 && r->dtype != AOE_F64)))
		return aoe_err(AOE_EDATA, "%s '%s': ratio must be one float",
		    n->op_type, n->name);
	if ((tm = opt_in(g, n, 2)) != NULL && (aoe_tensor_numel(tm) != 1 ||
	    tm->dtype != AOE_BOOL))
		return aoe_err(AOE_EDATA, "%s '%s': training_mode must be one "
		    "bool", n->op_type, n->name);
	if (tm != NULL && x->dtype != AOE_F32 && x->dtype != AOE_F64)
		return aoe_err(AOE_EUNSUP, "%s '%s': training mode on %s not "
		    "supported", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if ((rc = aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims)) < 0)
		return rc;
	/* Before opset 10 the mask has the input's type. */
	mdt = g->opset > 0 && g->opset < 10 ? x->dtype : AOE_BOOL;
	if (opt_out(g, n, 1) != NULL) {
		if (mdt != AOE_BOOL && mdt != AOE_F32 && mdt != AOE_F64)
			return aoe_err(AOE_EUNSUP, "%s '%s': a mask of %s not "
			    "supported", n->op_type, n->name,
			    aoe_dtype_name(mdt));
		rc = aoe_set_output(g, n, 1, mdt, x->ndim, x->dims);
	}
	return rc;
}

static int
dropout_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *r = opt_in(k->g, k->n, 1);
	aoe_tensor *tm = opt_in(k->g, k->n, 2), *y = aoe_out(k->g, k->n, 0);
	aoe_tensor *m = opt_out(k->g, k->n, 1);
	int64_t cnt = aoe_tensor_numel(x), i;
	double ratio = 0.5, scale;
	mt19937 mt;
	int keep;

	if (tm == NULL || !*(const uint8_t *)tm->data) {
		if (y->data != x->data)
			memcpy(y->data, x->data, aoe_tensor_nbytes(x));
		if (m == NULL)
			return 0;
		if (m->dtype == AOE_BOOL)
			memset(m->data, 1, (size_t)cnt);
		else
			for (i = 0; i < cnt; i++)
				st(m->data, m->dtype, i, 1);
		return 0;
	}
	if (r != NULL)
		ratio = ld(r->data, r->dtype, 0);
	if (!(ratio >= 0 && ratio < 1))
		return aoe_err(AOE_EDATA, "%s '%s': ratio %g is not in [0, 1)",
		    k->n->op_type, k->n->name, ratio);
	scale = x->dtype == AOE_F32 ? (double)(1.0f / (1.0f - (float)ratio)) :
	    1 / (1 - ratio);
	mt_seed(&mt, (uint32_t)aoe_attr_int(k->n, "seed", 0));
	for (i = 0; i < cnt; i++) {
		keep = ratio == 0 || mt_double(&mt) >= ratio;
		if (x->dtype == AOE_F32)
			((float *)y->data)[i] = keep ?
			    ((const float *)x->data)[i] * (float)scale : 0;
		else
			((double *)y->data)[i] = keep ?
			    ((const double *)x->data)[i] * scale : 0;
		if (m != NULL)
			((uint8_t *)m->data)[i] = (uint8_t)keep;
	}
	return 0;
}

const aoe_op aoe_ops_train[] = {
	{ "NegativeLogLikelihoodLoss", loss_infer, loss_run, NULL,
	    aoe_par_sched },
	{ "SoftmaxCrossEntropyLoss", sce_infer, loss_run, NULL,
	    aoe_par_sched },
	{ "Dropout", dropout_infer, dropout_run, NULL, aoe_par_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};
