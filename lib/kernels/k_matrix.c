/*
 * k_matrix.c - small matrix operators: EyeLike and Det.
 *
 * EyeLike writes a 2-D tensor of its input's shape (and the dtype
 * attribute's type, else the input's) with ones on the diagonal k places
 * above the main one (below for k < 0) and zeros elsewhere.
 *
 * Det computes the determinant of each square matrix in the last two
 * dimensions by LU decomposition with partial pivoting, in double (float32
 * and float64).
 *
 * Neither has a knob: the family has no search space.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

static int
eye_dtype(const aoe_node *n, const aoe_tensor *x)
{
	int64_t dt = aoe_attr_int(n, "dtype", x->dtype);

	switch (dt) {
	case AOE_F32: case AOE_F64: case AOE_I8: case AOE_U8: case AOE_I16:
	case AOE_U16: case AOE_I32: case AOE_U32: case AOE_I64: case AOE_U64:
	case AOE_BOOL:
		return (int)dt;
	}
	return aoe_err(AOE_EUNSUP, "%s '%s': dtype %lld not supported",
	    n->op_type, n->name, (long long)dt);
}

static int
eye_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc, dt;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->ndim != 2)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' has rank %d, "
		    "EyeLike needs 2", n->op_type, n->name, x->name, x->ndim);
	if ((dt = eye_dtype(n, x)) < 0)
		return dt;
	return aoe_set_output(g, n, 0, dt, 2, x->dims);
}

static int
eye_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	int64_t kk = aoe_attr_int(k->n, "k", 0), r, c;
	size_t es = aoe_dtype_size(y->dtype);
	const double one64 = 1;
	const float one32 = 1;
	const int64_t onei = 1;
	const void *one;

	memset(y->data, 0, aoe_tensor_nbytes(y));
	one = y->dtype == AOE_F64 ? (const void *)&one64 :
	    y->dtype == AOE_F32 ? (const void *)&one32 : (const void *)&onei;
	for (r = 0; r < y->dims[0]; r++) {
		c = r + kk;
		if (c >= 0 && c < y->dims[1])
			/* Little-endian: the low bytes of 1 are 1. */
			memcpy((char *)y->data + (r * y->dims[1] + c) *
			    (int64_t)es, one, es);
	}
	return 0;
}

static int
det_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	if (x->ndim < 2 || x->dims[x->ndim - 1] != x->dims[x->ndim - 2])
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is not a batch "
		    "of square matrices", n->op_type, n->name, x->name);
	n->scratch = (size_t)(x->dims[x->ndim - 1] * x->dims[x->ndim - 1]) *
	    sizeof(double);
	return aoe_set_output(g, n, 0, x->dtype, x->ndim - 2, x->dims);
}

/* The determinant of the m x m matrix a (destroyed). */
static double
det(double *a, int64_t m)
{
	double d = 1, t;
	int64_t i, j, r, p;

	for (j = 0; j < m; j++) {
		for (p = j, i = j + 1; i < m; i++)
			if (fabs(a[i * m + j]) > fabs(a[p * m + j]))
				p = i;
		if (a[p * m + j] == 0)
			return 0;
		if (p != j) {
			for (i = 0; i < m; i++) {
				t = a[j * m + i];
				a[j * m + i] = a[p * m + i];
				a[p * m + i] = t;
			}
			d = -d;
		}
		d *= a[j * m + j];
		for (r = j + 1; r < m; r++) {
			t = a[r * m + j] / a[j * m + j];
			for (i = j + 1; i < m; i++)
				a[r * m + i] -= t * a[j * m + i];
		}
	}
	return d;
}

static int
det_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t m = x->dims[x->ndim - 1], mm = m * m, nb, b, i;
	double *a = k->scratch, v;

	nb = prod(x->dims, 0, x->ndim - 2);
	for (b = 0; b < nb; b++) {
		for (i = 0; i < mm; i++)
			a[i] = x->dtype == AOE_F64 ?
			    ((const double *)x->data)[b * mm + i] :
			    ((const float *)x->data)[b * mm + i];
		v = m > 0 ? det(a, m) : 1;
		if (x->dtype == AOE_F64)
			((double *)y->data)[b] = v;
		else
			((float *)y->data)[b] = (float)v;
	}
	return 0;
}

const aoe_op aoe_ops_matrix[] = {
	{ "EyeLike", eye_infer, eye_run, NULL, NULL },
	{ "Det", det_infer, det_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
