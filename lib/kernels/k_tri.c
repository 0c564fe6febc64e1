/*
 * k_tri.c - Trilu and CumSum: a triangle of each matrix of a batch, and
 * running sums along an axis.
 *
 * Trilu (opset 14) keeps the upper (upper = 1, the default) or lower
 * triangle of the last two axes, from diagonal k (input 1, a scalar,
 * default 0; positive above the main diagonal), of any element type,
 * and zeroes the rest.  CumSum (opset 11, 14) sums along the axis of
 * input 1 (an int32 or int64 scalar), forwards or backwards (reverse),
 * including each element or not (exclusive), over float32, float64,
 * int32, int64, uint32 and uint64.  k and axis may be graph inputs: they
 * are read when the node runs.  Neither reads a knob.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* The integer scalar of input i (int32 or int64, one element) into *v. */
static int
scalar_in(const aoe_graph *g, const aoe_node *n, int i, const char *what,
    int64_t *v)
{
	const aoe_tensor *t = opt_in(g, n, i);

	if (t == NULL)
		return 0;
	if ((t->dtype != AOE_I64 && t->dtype != AOE_I32) ||
	    aoe_tensor_numel(t) != 1 || t->ndim > 1)
		return aoe_err(AOE_EDATA, "%s '%s': %s must be one int32 or "
		    "int64 value", n->op_type, n->name, what);
	if (t->data == NULL)
		return 1;
	*v = t->dtype == AOE_I64 ? *(const int64_t *)t->data :
	    *(const int32_t *)t->data;
	return 0;
}

static int
trilu_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x;
	int64_t k = 0;
	int rc, u;

	if ((rc = aoe_need_inputs(g, n, 1, 2)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->ndim < 2)
		return aoe_err(AOE_EDATA, "%s '%s': input of rank %d, at least "
		    "2 expected", n->op_type, n->name, x->ndim);
	if (aoe_dtype_size(x->dtype) == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	u = (int)aoe_attr_int(n, "upper", 1);
	if (u != 0 && u != 1)
		return aoe_err(AOE_EDATA, "%s '%s': upper must be 0 or 1",
		    n->op_type, n->name);
	if ((rc = scalar_in(g, n, 1, "k", &k)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

static int
trilu_run(aoe_kctx *kc)
{
	const aoe_graph *g = kc->g;
	const aoe_node *n = kc->n;
	const aoe_tensor *x = aoe_in(g, n, 0);
	const char *src = x->data;
	char *dst = aoe_out(g, n, 0)->data;
	const size_t es = aoe_dtype_size(x->dtype);
	const int64_t r = x->dims[x->ndim - 2], c = x->dims[x->ndim - 1];
	const int64_t nb = prod(x->dims, 0, x->ndim - 2);
	const int upper = aoe_attr_int(n, "upper", 1) != 0;
	int64_t k = 0, b, i, lo, hi;
	int rc;

	if ((rc = scalar_in(g, n, 1, "k", &k)) < 0)
		return rc;
	for (b = 0; b < nb; b++)
		for (i = 0; i < r; i++) {
			size_t o = (size_t)((b * r + i) * c) * es;
			/* Row i keeps columns [lo, hi). */
			if (upper) {
				lo = max64(0, min64(c, i + k));
				hi = c;
			} else {
				lo = 0;
				hi = max64(0, min64(c, i + k + 1));
			}
			memset(dst + o, 0, (size_t)lo * es);
			memcpy(dst + o + lo * es, src + o + lo * es,
			    (size_t)(hi - lo) * es);
			memset(dst + o + hi * es, 0, (size_t)(c - hi) * es);
		}
	return 0;
}

/*
 * Each position along the axis from the one before it, a row of inner
 * values at a time: y[p] = y[q] + x[p], or x[q] when exclusive, where q
 * is the position before p in the direction of the sum.
 */
#define CUMSUM(T, NAME)							\
static void								\
NAME(const T *x, T *y, int64_t outer, int64_t len, int64_t inner,	\
    int excl, int rev)							\
{									\
	int64_t o, i, j, p, q;						\
									\
	for (o = 0; o < outer; o++) {					\
		const T *xo = x + o * len * inner;			\
		T *yo = y + o * len * inner;				\
		for (i = 0; i < len; i++) {				\
			p = (rev ? len - 1 - i : i) * inner;		\
			q = (rev ? len - i : i - 1) * inner;		\
			for (j = 0; j < inner; j++)			\
				yo[p + j] = (i == 0 ? 0 : yo[q + j]) +	\
				    (excl ? (i == 0 ? 0 : xo[q + j]) :	\
				    xo[p + j]);				\
		}							\
	}								\
}
CUMSUM(float, cumsum_f32)
CUMSUM(double, cumsum_f64)
CUMSUM(int32_t, cumsum_i32)
CUMSUM(int64_t, cumsum_i64)
CUMSUM(uint32_t, cumsum_u32)
CUMSUM(uint64_t, cumsum_u64)

static int
cumsum_axis(const aoe_graph *g, const aoe_node *n, int64_t *axis)
{
	const aoe_tensor *x = aoe_in(g, n, 0);
	int rc, a;

	if ((rc = scalar_in(g, n, 1, "axis", axis)) != 0)
		return rc;
	if ((a = aoe_axis(*axis, x->ndim)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld out of range "
		    "for rank %d", n->op_type, n->name, (long long)*axis,
		    x->ndim);
	*axis = a;
	return 0;
}

static int
cumsum_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x;
	int64_t axis;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 2, 2)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64 &&
	    x->dtype != AOE_I32 && x->dtype != AOE_I64 &&
	    x->dtype != AOE_U32 && x->dtype != AOE_U64)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	if (x->ndim < 1)
		return aoe_err(AOE_EDATA, "%s '%s': a scalar input has no "
		    "axis", n->op_type, n->name);
	if ((rc = cumsum_axis(g, n, &axis)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

static int
cumsum_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *x = aoe_in(g, n, 0);
	void *y = aoe_out(g, n, 0)->data;
	int excl = aoe_attr_int(n, "exclusive", 0) != 0;
	int rev = aoe_attr_int(n, "reverse", 0) != 0;
	int64_t axis, outer, len, inner;
	int rc;

	if ((rc = cumsum_axis(g, n, &axis)) < 0)
		return rc;
	outer = prod(x->dims, 0, (int)axis);
	len = x->dims[axis];
	inner = prod(x->dims, (int)axis + 1, x->ndim);
	switch (x->dtype) {
	case AOE_F32:
		cumsum_f32(x->data, y, outer, len, inner, excl, rev);
		break;
	case AOE_F64:
		cumsum_f64(x->data, y, outer, len, inner, excl, rev);
		break;
	case AOE_I32:
		cumsum_i32(x->data, y, outer, len, inner, excl, rev);
		break;
	case AOE_I64:
		cumsum_i64(x->data, y, outer, len, inner, excl, rev);
		break;
	case AOE_U32:
		cumsum_u32(x->data, y, outer, len, inner, excl, rev);
		break;
	default:
		cumsum_u64(x->data, y, outer, len, inner, excl, rev);
		break;
	}
	return 0;
}

const aoe_op aoe_ops_tri[] = {
	{ "Trilu", trilu_infer, trilu_run, NULL, NULL },
	{ "CumSum", cumsum_infer, cumsum_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
