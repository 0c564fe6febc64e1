/*
 * k_select.c - the selection family: operators whose output size depends
 * on the data: NonZero, Unique, NonMaxSuppression, TopK (with k an input
 * known only at run time) and Compress.
 *
 * Their outputs are dynamic tensors (see aoe_set_output_dyn in kernel.h
 * and lib/runtime/exec.c): infer gives the type and rank, and run sizes
 * each output with aoe_tensor_resize() once it knows how many elements
 * it selects.  When the deciding input is a constant (TopK's k,
 * Compress's condition) the size is known at load time and the output is
 * an ordinary, planned tensor.
 *
 * No search space: these kernels are sequential walks over the data, with
 * nothing to tune; the family has no knobs, so aoe-opat skips them.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Whether element i of t is not zero (bytes, so any type works). */
static int
nonzero_at(const aoe_tensor *t, int64_t i, size_t es)
{
	const unsigned char *p = (const unsigned char *)t->data + i * es;
	size_t b;

	if (t->dtype == AOE_F32)
		return ((const float *)t->data)[i] != 0;
	if (t->dtype == AOE_F64)
		return ((const double *)t->data)[i] != 0;
	for (b = 0; b < es; b++)
		if (p[b])
			return 1;
	return 0;
}

static int
numeric(int dtype)
{
	return aoe_dtype_size(dtype) != 0 && dtype != AOE_F16 &&
	    dtype != AOE_STRING;
}

static int
check_numeric(const aoe_node *n, const aoe_tensor *x)
{
	if (!numeric(x->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	return 0;
}

/*
 * NonZero: the indices of the non-zero elements, int64 [rank, count],
 * in row-major order.
 */
static int
nonzero_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t dims[2];
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if ((rc = check_numeric(n, x)) < 0)
		return rc;
	dims[0] = x->ndim;
	dims[1] = -1;
	return aoe_set_output_dyn(g, n, 0, AOE_I64, 2, dims);
}

static int
nonzero_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t numel = aoe_tensor_numel(x), cnt = 0, i, j, rem, dims[2];
	size_t es = aoe_dtype_size(x->dtype);
	int64_t *out;
	int d, r = x->ndim, rc;

	for (i = 0; i < numel; i++)
		cnt += nonzero_at(x, i, es);
	dims[0] = r;
	dims[1] = cnt;
	if ((rc = aoe_tensor_resize(y, AOE_I64, 2, dims)) < 0)
		return rc;
	out = y->data;
	for (i = j = 0; i < numel; i++) {
		if (!nonzero_at(x, i, es))
			continue;
		for (rem = i, d = r - 1; d >= 0; d--) {
			out[d * cnt + j] = rem % x->dims[d];
			rem /= x->dims[d];
		}
		j++;
	}
	return 0;
}

/*
 * TopK: the k largest (or smallest) elements along an axis and their
 * int64 indices; of equal elements, the one of lower index first (the
 * specification's rule), always sorted (which sorted=0 allows).  k is an
 * input from opset 10 (the attribute k before); when it is not a
 * constant, the outputs are sized at run time.
 */
typedef struct kv {
	double v;
	int64_t i;
} kv;

static int
kv_desc(const void *a, const void *b)
{
	const kv *x = a, *y = b;

	/* NaN counts as the largest value, as numpy's sort has it. */
	if (x->v != y->v) {
		if (x->v != x->v)
			return -1;
		if (y->v != y->v)
			return 1;
		return x->v > y->v ? -1 : 1;
	}
	return x->i < y->i ? -1 : x->i > y->i;
}

static int
kv_asc(const void *a, const void *b)
{
	const kv *x = a, *y = b;

	if (x->v != y->v) {
		if (x->v != x->v)
			return 1;
		if (y->v != y->v)
			return -1;
		return x->v < y->v ? -1 : 1;
	}
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * TopK's k: the attribute (before opset 10) or input 1, when that is a
 * constant; *known is 0 when k is a value known only at run time.
 */
static int
topk_k(const aoe_graph *g, const aoe_node *n, int64_t *kp, int *known)
{
	const aoe_tensor *kt;

	*known = 1;
	if (g->opset < 10) {
		*kp = aoe_attr_int(n, "k", -1);
		return 0;
	}
	if ((kt = opt_in(g, n, 1)) == NULL || aoe_tensor_numel(kt) != 1 ||
	    (kt->dtype != AOE_I64 && kt->dtype != AOE_I32))
		return aoe_err(AOE_EDATA, "TopK '%s': K must be one int64",
		    n->name);
	if (kt->kind != AOE_T_CONST || kt->data == NULL) {
		*known = 0;
		return 0;
	}
	*kp = kt->dtype == AOE_I64 ? *(const int64_t *)kt->data :
	    *(const int32_t *)kt->data;
	return 0;
}

static int
topk_check(const aoe_node *n, const aoe_tensor *x, int axis, int64_t kk)
{
	if (kk < 0 || kk > x->dims[axis])
		return aoe_err(AOE_EDATA, "TopK '%s': k %lld is out of range "
		    "0..%lld", n->name, (long long)kk,
		    (long long)x->dims[axis]);
	return 0;
}

static int
topk_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t dims[AOE_MAXDIM], kk = 0;
	int rc, axis, known;

	if ((rc = aoe_need_inputs(g, n, g->opset < 10 ? 1 : 2, 2)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if ((rc = check_numeric(n, x)) < 0)
		return rc;
	if ((axis = aoe_axis(aoe_attr_int(n, "axis", -1), x->ndim)) < 0)
		return aoe_err(AOE_EDATA, "TopK '%s': axis %lld out of range "
		    "for rank %d", n->name,
		    (long long)aoe_attr_int(n, "axis", -1), x->ndim);
	if ((rc = topk_k(g, n, &kk, &known)) < 0)
		return rc;
	memcpy(dims, x->dims, (size_t)x->ndim * sizeof(int64_t));
	if (known != 1) {
		/* k is a run-time value: sized when the node runs. */
		dims[axis] = -1;
		if ((rc = aoe_set_output_dyn(g, n, 0, x->dtype, x->ndim,
		    dims)) < 0)
			return rc;
		return aoe_set_output_dyn(g, n, 1, AOE_I64, x->ndim, dims);
	}
	if ((rc = topk_check(n, x, axis, kk)) < 0)
		return rc;
	dims[axis] = kk;
	if ((rc = aoe_set_output(g, n, 0, x->dtype, x->ndim, dims)) < 0)
		return rc;
	return aoe_set_output(g, n, 1, AOE_I64, x->ndim, dims);
}

/* Copy element si of s to element di of d (same type), exactly. */
static void
cp(aoe_tensor *d, int64_t di, const aoe_tensor *s, int64_t si)
{
	size_t es = aoe_dtype_size(s->dtype);

	memcpy((char *)d->data + di * es, (const char *)s->data + si * es, es);
}

static int
topk_run(aoe_kctx *k)
{
	aoe_graph *g = k->g;
	aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(g, n, 0), *y = aoe_out(g, n, 0);
	aoe_tensor *yi = aoe_out(g, n, 1);
	int axis = aoe_axis(aoe_attr_int(n, "axis", -1), x->ndim), rc;
	int largest = aoe_attr_int(n, "largest", 1) != 0;
	int64_t kk = 0, outer, inner, d, o, in, j, dims[AOE_MAXDIM];
	const aoe_tensor *kt;
	kv *buf;

	/* k as this run has it (topk_k checked its type). */
	if (g->opset >= 10) {
		kt = aoe_in(g, n, 1);
		kk = kt->dtype == AOE_I64 ? *(const int64_t *)kt->data :
		    *(const int32_t *)kt->data;
	} else
		kk = aoe_attr_int(n, "k", -1);
	if ((rc = topk_check(n, x, axis, kk)) < 0)
		return rc;
	memcpy(dims, x->dims, (size_t)x->ndim * sizeof(int64_t));
	dims[axis] = kk;
	if (y->dynamic && (rc = aoe_tensor_resize(y, x->dtype, x->ndim,
	    dims)) < 0)
		return rc;
	if (yi && yi->dynamic && (rc = aoe_tensor_resize(yi, AOE_I64, x->ndim,
	    dims)) < 0)
		return rc;
	outer = prod(x->dims, 0, axis);
	d = x->dims[axis];
	inner = prod(x->dims, axis + 1, x->ndim);
	buf = aoe_xcalloc((size_t)d + 1, sizeof(kv));
	for (o = 0; o < outer; o++)
		for (in = 0; in < inner; in++) {
			int64_t base = o * d * inner + in;
			int64_t ob = o * kk * inner + in;
			for (j = 0; j < d; j++) {
				buf[j].v = aoe_tensor_elem(x, base + j * inner);
				buf[j].i = j;
			}
			qsort(buf, (size_t)d, sizeof(kv), largest ? kv_desc :
			    kv_asc);
			for (j = 0; j < kk; j++) {
				cp(y, ob + j * inner, x, base + buf[j].i *
				    inner);
				if (yi)
					((int64_t *)yi->data)[ob + j * inner] =
					    buf[j].i;
			}
		}
	free(buf);
	return 0;
}

/*
 * Compress: the slices along axis (or the elements of the flattened
 * input, without axis) where the 1-D bool condition is true; a condition
 * shorter than the axis selects nothing past its end.
 */
static int
compress_count(const aoe_node *n, const aoe_tensor *x, const aoe_tensor *c,
    int axis, int64_t *cnt)
{
	int64_t len = axis < 0 ? aoe_tensor_numel(x) : x->dims[axis], i;
	int64_t nc = aoe_tensor_numel(c);

	if (nc > len)
		return aoe_err(AOE_EDATA, "Compress '%s': the condition has %lld "
		    "values, more than the %lld to select from", n->name,
		    (long long)nc, (long long)len);
	for (*cnt = 0, i = 0; i < nc; i++)
		*cnt += ((const uint8_t *)c->data)[i] != 0;
	return 0;
}

/*
 * The optional attribute axis of n for x, normalised, or -1 when n has
 * none (Compress and Unique then flatten x).
 */
static int
opt_axis(const aoe_node *n, const aoe_tensor *x, int *axis)
{
	const aoe_attr *a = aoe_attr_find(n, "axis");

	*axis = -1;
	if (a == NULL)
		return 0;
	if ((*axis = aoe_axis(a->i, x->ndim)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld out of range for "
		    "rank %d", n->op_type, n->name, (long long)a->i, x->ndim);
	return 0;
}

static void
compress_dims(const aoe_tensor *x, int axis, int64_t cnt, int *nd,
    int64_t *dims)
{
	if (axis < 0) {
		*nd = 1;
		dims[0] = cnt;
		return;
	}
	*nd = x->ndim;
	memcpy(dims, x->dims, (size_t)x->ndim * sizeof(int64_t));
	dims[axis] = cnt;
}

static int
compress_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *c;
	int64_t dims[AOE_MAXDIM], cnt = 0;
	int rc, axis, nd;

	if ((rc = aoe_need_inputs(g, n, 2, 2)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	c = aoe_in(g, n, 1);
	if (c->dtype != AOE_BOOL || c->ndim != 1)
		return aoe_err(AOE_EDATA, "Compress '%s': the condition must be "
		    "a 1-D bool tensor", n->name);
	if (aoe_dtype_size(x->dtype) == 0)
		return aoe_err(AOE_EUNSUP, "Compress '%s': %s input not "
		    "supported", n->name, aoe_dtype_name(x->dtype));
	if ((rc = opt_axis(n, x, &axis)) < 0)
		return rc;
	if (c->kind != AOE_T_CONST) {
		compress_dims(x, axis, -1, &nd, dims);
		return aoe_set_output_dyn(g, n, 0, x->dtype, nd, dims);
	}
	if ((rc = compress_count(n, x, c, axis, &cnt)) < 0)
		return rc;
	compress_dims(x, axis, cnt, &nd, dims);
	return aoe_set_output(g, n, 0, x->dtype, nd, dims);
}

static int
compress_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *c = aoe_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	const uint8_t *cv = c->data;
	int64_t dims[AOE_MAXDIM], cnt = 0, outer, inner, len, nc, o, i, j;
	size_t es = aoe_dtype_size(x->dtype);
	int rc, axis, nd;

	if ((rc = opt_axis(k->n, x, &axis)) < 0 ||
	    (rc = compress_count(k->n, x, c, axis, &cnt)) < 0)
		return rc;
	compress_dims(x, axis, cnt, &nd, dims);
	if (y->dynamic && (rc = aoe_tensor_resize(y, x->dtype, nd, dims)) < 0)
		return rc;
	outer = axis < 0 ? 1 : prod(x->dims, 0, axis);
	len = axis < 0 ? aoe_tensor_numel(x) : x->dims[axis];
	inner = axis < 0 ? 1 : prod(x->dims, axis + 1, x->ndim);
	nc = aoe_tensor_numel(c);
	for (o = 0, j = 0; o < outer; o++)
		for (i = 0; i < nc && i < len; i++)
			if (cv[i]) {
				memcpy((char *)y->data + (size_t)(j++ * inner) *
				    es, (const char *)x->data + (size_t)((o *
				    len + i) * inner) * es, (size_t)inner * es);
			}
	return 0;
}

/*
 * Unique (axis, sorted): the distinct elements (or slices along axis) Y,
 * the index of each one's first occurrence, the index in Y of every
 * element (or slice) of X, and the counts.  sorted=1 orders Y
 * ascending (slices lexicographically), sorted=0 by first occurrence.
 */
typedef struct uctx {
	const aoe_tensor *x;
	int64_t outer, len, inner;	/* X as [outer, len, inner] */
} uctx;

/* Compare slices a and b of X along the axis, element by element. */
static int
ucmp(const uctx *u, int64_t a, int64_t b)
{
	int64_t o, i;

	for (o = 0; o < u->outer; o++)
		for (i = 0; i < u->inner; i++) {
			double x = aoe_tensor_elem(u->x, (o * u->len + a) * u->inner + i);
			double y = aoe_tensor_elem(u->x, (o * u->len + b) * u->inner + i);
			if (x != y)
				return x < y ? -1 : 1;
		}
	return 0;
}

/* Sort idx[0..n) by slice, then index (a merge sort: qsort has no ctx). */
static void
usort(const uctx *u, int64_t *idx, int64_t *tmp, int64_t n)
{
	int64_t m = n / 2, i = 0, j = m, k = 0;

	if (n < 2)
		return;
	usort(u, idx, tmp, m);
	usort(u, idx + m, tmp, n - m);
	while (i < m && j < n) {
		int c = ucmp(u, idx[i], idx[j]);
		tmp[k++] = (c < 0 || (c == 0 && idx[i] < idx[j])) ? idx[i++] :
		    idx[j++];
	}
	while (i < m)
		tmp[k++] = idx[i++];
	while (j < n)
		tmp[k++] = idx[j++];
	memcpy(idx, tmp, (size_t)n * sizeof(int64_t));
}

static int
unique_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t dims[AOE_MAXDIM];
	int rc, axis, i;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if ((rc = check_numeric(n, x)) < 0 || (rc = opt_axis(n, x,
	    &axis)) < 0)
		return rc;
	if (axis < 0) {
		if ((rc = aoe_set_output_dyn(g, n, 0, x->dtype, 1, NULL)) < 0)
			return rc;
	} else {
		memcpy(dims, x->dims, (size_t)x->ndim * sizeof(int64_t));
		dims[axis] = -1;
		if ((rc = aoe_set_output_dyn(g, n, 0, x->dtype, x->ndim,
		    dims)) < 0)
			return rc;
	}
	for (i = 1; i < 4 && i < n->nout; i++) {
		dims[0] = i == 2 ? (axis < 0 ? aoe_tensor_numel(x) :
		    x->dims[axis]) : -1;
		if (i == 2 && (rc = aoe_set_output(g, n, i, AOE_I64, 1,
		    dims)) < 0)
			return rc;
		if (i != 2 && (rc = aoe_set_output_dyn(g, n, i, AOE_I64, 1,
		    NULL)) < 0)
			return rc;
	}
	return 0;
}

static int
unique_run(aoe_kctx *k)
{
	aoe_graph *g = k->g;
	aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(g, n, 0), *y = aoe_out(g, n, 0);
	aoe_tensor *yi = opt_out(g, n, 1), *yinv = opt_out(g, n, 2);
	aoe_tensor *ycnt = opt_out(g, n, 3);
	int sorted = aoe_attr_int(n, "sorted", 1) != 0, axis, rc;
	int64_t *idx, *tmp, *grp, *first, *cnt, *rank, ng = 0, i, j, o, in;
	int64_t dims[AOE_MAXDIM];
	uctx u;

	if ((rc = opt_axis(n, x, &axis)) < 0)
		return rc;
	u.x = x;
	u.outer = axis < 0 ? 1 : prod(x->dims, 0, axis);
	u.len = axis < 0 ? aoe_tensor_numel(x) : x->dims[axis];
	u.inner = axis < 0 ? 1 : prod(x->dims, axis + 1, x->ndim);
	idx = aoe_xcalloc((size_t)u.len + 1, sizeof(int64_t));
	tmp = aoe_xcalloc((size_t)u.len + 1, sizeof(int64_t));
	grp = aoe_xcalloc((size_t)u.len + 1, sizeof(int64_t));
	first = aoe_xcalloc((size_t)u.len + 1, sizeof(int64_t));
	cnt = aoe_xcalloc((size_t)u.len + 1, sizeof(int64_t));
	rank = aoe_xcalloc((size_t)u.len + 1, sizeof(int64_t));
	for (i = 0; i < u.len; i++)
		idx[i] = i;
	usort(&u, idx, tmp, u.len);
	/* Groups in sorted order; grp[slice] is the group of each slice. */
	for (i = 0; i < u.len; i++) {
		if (i == 0 || ucmp(&u, idx[i - 1], idx[i]) != 0) {
			first[ng] = idx[i];
			cnt[ng++] = 0;
		}
		grp[idx[i]] = ng - 1;
		cnt[ng - 1]++;
	}
	/* rank[group]: its place in Y; by first occurrence when unsorted. */
	for (i = 0; i < ng; i++)
		rank[i] = i;
	if (!sorted) {
		for (i = 0, j = 0; i < u.len; i++)
			if (first[grp[i]] == i)
				rank[grp[i]] = j++;
	}
	if (axis < 0) {
		dims[0] = ng;
		rc = aoe_tensor_resize(y, x->dtype, 1, dims);
	} else {
		memcpy(dims, x->dims, (size_t)x->ndim * sizeof(int64_t));
		dims[axis] = ng;
		rc = aoe_tensor_resize(y, x->dtype, x->ndim, dims);
	}
	dims[0] = ng;
	if (rc == 0 && yi)
		rc = aoe_tensor_resize(yi, AOE_I64, 1, dims);
	if (rc == 0 && ycnt)
		rc = aoe_tensor_resize(ycnt, AOE_I64, 1, dims);
	if (rc == 0 && yinv && yinv->dynamic) {
		dims[0] = u.len;
		rc = aoe_tensor_resize(yinv, AOE_I64, 1, dims);
	}
	for (i = 0; i < ng && rc == 0; i++) {
		int64_t r = rank[i];
		for (o = 0; o < u.outer; o++)
			for (in = 0; in < u.inner; in++)
				cp(y, (o * ng + r) * u.inner + in, x,
				    (o * u.len + first[i]) * u.inner + in);
		if (yi)
			((int64_t *)yi->data)[r] = first[i];
		if (ycnt)
			((int64_t *)ycnt->data)[r] = cnt[i];
	}
	for (i = 0; i < u.len && rc == 0 && yinv; i++)
		((int64_t *)yinv->data)[i] = rank[grp[i]];
	free(idx);
	free(tmp);
	free(grp);
	free(first);
	free(cnt);
	free(rank);
	return rc;
}

/*
 * NonMaxSuppression (center_point_box): per batch and class, boxes by
 * descending score above score_threshold, each kept unless its IoU with
 * a kept box exceeds iou_threshold, at most max_output_boxes_per_class
 * (0 or absent: none); int64 [count, 3] rows of (batch, class, box).
 */
static int
nms_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *b, *s;
	int64_t dims[2] = { -1, 3 };
	int rc, i;

	if ((rc = aoe_need_inputs(g, n, 2, 5)) < 0)
		return rc;
	b = aoe_in(g, n, 0);
	s = aoe_in(g, n, 1);
	if (b->dtype != AOE_F32 || s->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "NonMaxSuppression '%s': boxes and "
		    "scores must be float32", n->name);
	if (b->ndim != 3 || b->dims[2] != 4 || s->ndim != 3 ||
	    s->dims[0] != b->dims[0] || s->dims[2] != b->dims[1])
		return aoe_err(AOE_EDATA, "NonMaxSuppression '%s': boxes must "
		    "be [batch, boxes, 4] and scores [batch, classes, boxes]",
		    n->name);
	for (i = 2; i < 5; i++) {
		const aoe_tensor *t = opt_in(g, n, i);
		if (t && (aoe_tensor_numel(t) != 1 || t->dtype != (i == 2 ?
		    AOE_I64 : AOE_F32)))
			return aoe_err(AOE_EDATA, "NonMaxSuppression '%s': "
			    "input %d must be one %s", n->name, i, i == 2 ?
			    "int64" : "float32");
	}
	return aoe_set_output_dyn(g, n, 0, AOE_I64, 2, dims);
}

/* A box as (y1, x1, y2, x2) with y1 <= y2 and x1 <= x2. */
static void
nms_box(const float *p, int center, float *q)
{
	if (center) {
		q[0] = p[1] - p[3] / 2;
		q[1] = p[0] - p[2] / 2;
		q[2] = p[1] + p[3] / 2;
		q[3] = p[0] + p[2] / 2;
		return;
	}
	q[0] = p[0] < p[2] ? p[0] : p[2];
	q[2] = p[0] < p[2] ? p[2] : p[0];
	q[1] = p[1] < p[3] ? p[1] : p[3];
	q[3] = p[1] < p[3] ? p[3] : p[1];
}

static float
nms_iou(const float *a, const float *b)
{
	float y1 = a[0] > b[0] ? a[0] : b[0], x1 = a[1] > b[1] ? a[1] : b[1];
	float y2 = a[2] < b[2] ? a[2] : b[2], x2 = a[3] < b[3] ? a[3] : b[3];
	float inter, ua;

	if (y2 <= y1 || x2 <= x1)
		return 0;
	inter = (y2 - y1) * (x2 - x1);
	ua = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) -
	    inter;
	return ua > 0 ? inter / ua : 0;
}

static int
nms_run(aoe_kctx *k)
{
	aoe_graph *g = k->g;
	aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 0), *st = aoe_in(g, n, 1), *t;
	aoe_tensor *y = aoe_out(g, n, 0);
	int center = aoe_attr_int(n, "center_point_box", 0) != 0, rc;
	int64_t nb = bt->dims[0], nbox = bt->dims[1], ncls = st->dims[1];
	int64_t maxo = 0, b, c, i, j, nsel, total = 0, cap = 0, dims[2];
	float iou_t = 0, score_t = -INFINITY, *boxes;
	int64_t *out = NULL, *sel;
	kv *cand;

	if ((t = opt_in(g, n, 2)) != NULL)
		maxo = *(const int64_t *)t->data;
	if ((t = opt_in(g, n, 3)) != NULL)
		iou_t = *(const float *)t->data;
	if ((t = opt_in(g, n, 4)) != NULL)
		score_t = *(const float *)t->data;
	if (iou_t < 0 || iou_t > 1)
		return aoe_err(AOE_EDATA, "NonMaxSuppression '%s': "
		    "iou_threshold %g is not in [0, 1]", n->name, iou_t);
	boxes = aoe_xcalloc((size_t)nbox * 4 + 1, sizeof(float));
	cand = aoe_xcalloc((size_t)nbox + 1, sizeof(kv));
	sel = aoe_xcalloc((size_t)nbox + 1, sizeof(int64_t));
	for (b = 0; b < nb && maxo > 0; b++) {
		for (i = 0; i < nbox; i++)
			nms_box((const float *)bt->data + (b * nbox + i) * 4,
			    center, boxes + i * 4);
		for (c = 0; c < ncls; c++) {
			const float *sc = (const float *)st->data +
			    (b * ncls + c) * nbox;
			int64_t nc = 0;
			for (i = 0; i < nbox; i++)
				if (sc[i] > score_t) {
					cand[nc].v = sc[i];
					cand[nc++].i = i;
				}
			qsort(cand, (size_t)nc, sizeof(kv), kv_desc);
			for (nsel = 0, i = 0; i < nc && nsel < maxo; i++) {
				for (j = 0; j < nsel; j++)
					if (nms_iou(boxes + cand[i].i * 4,
					    boxes + sel[j] * 4) > iou_t)
						break;
				if (j < nsel)
					continue;
				sel[nsel++] = cand[i].i;
				if (total == cap) {
					cap = cap ? 2 * cap : 64;
					out = aoe_xrealloc(out, (size_t)cap * 3 *
					    sizeof(int64_t));
				}
				out[total * 3] = b;
				out[total * 3 + 1] = c;
				out[total++ * 3 + 2] = cand[i].i;
			}
		}
	}
	dims[0] = total;
	dims[1] = 3;
	if ((rc = aoe_tensor_resize(y, AOE_I64, 2, dims)) == 0 && total)
		memcpy(y->data, out, (size_t)total * 3 * sizeof(int64_t));
	free(out);
	free(boxes);
	free(cand);
	free(sel);
	return rc;
}

const aoe_op aoe_ops_select[] = {
	{ "NonZero", nonzero_infer, nonzero_run, NULL, NULL },
	{ "TopK", topk_infer, topk_run, NULL, NULL },
	{ "Compress", compress_infer, compress_run, NULL, NULL },
	{ "Unique", unique_infer, unique_run, NULL, NULL },
	{ "NonMaxSuppression", nms_infer, nms_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
