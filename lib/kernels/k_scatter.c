/*
 * k_scatter.c - indexed writes and reads: ScatterElements, Scatter (its
 * deprecated name), ScatterND, GatherND, OneHot and MaxUnpool.
 *
 * The scatters copy their data input to the output and then write (or,
 * with a reduction attribute of add, mul, max or min, combine) each
 * update at the place its index names, in the order of the updates, so
 * that duplicate indices behave as the ONNX reference does.  Indices are
 * int32 or int64 and may be negative (counted from the end); one out of
 * range is an error naming the node, checked at prepare time when the
 * indices are constant and again when the node runs.  Without a reduction
 * the elements are moved by their size, so any dtype goes; the reductions
 * take the numeric types.
 *
 * GatherND copies the slices data[b..., i...] that its index tuples name
 * (batch_dims b leading dimensions shared by data and indices).  OneHot
 * writes on_value where an index (any numeric type, negative from the
 * end; one outside [-depth, depth) makes an all-off row, as the spec
 * says) meets its position along axis, off_value elsewhere; depth must be
 * a constant.  MaxUnpool puts each input value at the flat output offset
 * its index names (as MaxPool's Indices give them) and zeros elsewhere.
 *
 * Knobs: "par" (bytes a thread must copy before the copy of the data is
 * split, in elements; 0 one thread).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Element i of a numeric tensor as a double. */
static double
num_at(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case AOE_F32:
		return ((const float *)p)[i];
	case AOE_F64:
		return ((const double *)p)[i];
	case AOE_I8:
		return ((const int8_t *)p)[i];
	case AOE_U8:
	case AOE_BOOL:
		return ((const uint8_t *)p)[i];
	case AOE_I16:
		return ((const int16_t *)p)[i];
	case AOE_U16:
		return ((const uint16_t *)p)[i];
	case AOE_I32:
		return ((const int32_t *)p)[i];
	case AOE_U32:
		return ((const uint32_t *)p)[i];
	case AOE_I64:
		return (double)((const int64_t *)p)[i];
	case AOE_U64:
		return (double)((const uint64_t *)p)[i];
	}
	return NAN;
}

static inline int64_t
ix_at(const void *p, int dt, int64_t i)
{
	return dt == AOE_I64 ? ((const int64_t *)p)[i] :
	    ((const int32_t *)p)[i];
}

/* Input i, present with a static shape and a dtype libaoe holds. */
static int
static_in(const aoe_graph *g, const aoe_node *n, int i, aoe_tensor **tp)
{
	aoe_tensor *t = opt_in(g, n, i);
	int d;

	*tp = t;
	if (t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
		    n->op_type, n->name, i);
	if (t->ndim < 0 || aoe_dtype_size(t->dtype) == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' has no static "
		    "shape or an unsupported dtype", n->op_type, n->name,
		    t->name);
	for (d = 0; d < t->ndim; d++)
		if (t->dims[d] < 0)
			return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' has "
			    "a dynamic dimension (bind it with --input-shape)",
			    n->op_type, n->name, t->name);
	return 0;
}

static int
index_type(const aoe_node *n, const aoe_tensor *t)
{
	if (t->dtype != AOE_I32 && t->dtype != AOE_I64)
		return aoe_err(AOE_EDATA, "%s '%s': indices must be int32 or "
		    "int64, not %s", n->op_type, n->name,
		    aoe_dtype_name(t->dtype));
	return 0;
}

/* An index v of a dimension of d, made non-negative; -1 out of range. */
static inline int64_t
fix_index(int64_t v, int64_t d)
{
	if (v < 0)
		v += d;
	return v >= 0 && v < d ? v : -1;
}

static int
bad_index(const aoe_node *n, int64_t v, int64_t d)
{
	return aoe_err(AOE_EDATA, "%s '%s': index %lld is out of range for a "
	    "dimension of %lld", n->op_type, n->name, (long long)v,
	    (long long)d);
}

/* Copy src to dst (n bytes) on the node's threads. */
struct copy_ctx {
	char *dst;
	const char *src;
	int64_t n, nch;
};

static void
copy_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct copy_ctx *c = ctx;
	int64_t lo = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t hi = aoe_chunk_lo(c->n, c->nch, chunk + 1);

	memcpy(c->dst + lo, c->src + lo, (size_t)(hi - lo));
}

static void
par_copy(const aoe_kctx *k, void *dst, const void *src, int64_t bytes,
    int64_t elems)
{
	struct copy_ctx c;
	int nt;

	if (dst == src || bytes == 0)
		return;
	nt = nthreads_for(elems, aoe_sched_get(k->sched, "par", AOE_PAR_DEF),
	    k->nthreads);
	c.dst = dst;
	c.src = src;
	c.n = bytes;
	c.nch = aoe_nchunks(bytes, nt);
	aoe_parallel(nt, c.nch, copy_chunk, &c);
}

/*
 * Reductions.
 */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

static int
reduction(const aoe_node *n, int dt)
{
	const char *r = aoe_attr_str(n, "reduction", "none");
	static const char *names[] = { "none", "add", "mul", "max", "min" };
	int i;

	for (i = 0; i < 5; i++)
		if (strcmp(r, names[i]) == 0)
			break;
	if (i == 5)
		return aoe_err(AOE_EDATA, "%s '%s': reduction '%s' is not none, "
		    "add, mul, max or min", n->op_type, n->name, r);
	if (i != RED_NONE && (dt == AOE_BOOL || dt == AOE_STRING ||
	    dt == AOE_F16 || aoe_dtype_size(dt) == 0))
		return aoe_err(AOE_EUNSUP, "%s '%s': reduction '%s' on %s not "
		    "supported", n->op_type, n->name, r, aoe_dtype_name(dt));
	return i;
}

#define COMBINE(T) do {							\
	T *d_ = (T *)dst;						\
	const T *s_ = (const T *)src;					\
	for (i = 0; i < cnt; i++)					\
		switch (red) {						\
		case RED_ADD: d_[i] = (T)(d_[i] + s_[i]); break;	\
		case RED_MUL: d_[i] = (T)(d_[i] * s_[i]); break;	\
		case RED_MAX: d_[i] = d_[i] < s_[i] ? s_[i] : d_[i]; break; \
		default: d_[i] = s_[i] < d_[i] ? s_[i] : d_[i]; break;	\
		}							\
} while (0)

/* dst[0..cnt) = dst op src, or a copy for RED_NONE. */
static void
combine(void *dst, const void *src, int64_t cnt, int dt, int red)
{
	int64_t i;

	if (red == RED_NONE) {
		memcpy(dst, src, (size_t)cnt * aoe_dtype_size(dt));
		return;
	}
	switch (dt) {
	case AOE_F32: COMBINE(float); break;
	case AOE_F64: COMBINE(double); break;
	case AOE_I8: COMBINE(int8_t); break;
	case AOE_U8: COMBINE(uint8_t); break;
	case AOE_I16: COMBINE(int16_t); break;
	case AOE_U16: COMBINE(uint16_t); break;
	case AOE_I32: COMBINE(int32_t); break;
	case AOE_U32: COMBINE(uint32_t); break;
	case AOE_I64: COMBINE(int64_t); break;
	case AOE_U64: COMBINE(uint64_t); break;
	}
}

/*
 * ScatterElements and Scatter.
 */

static int
scatter_axis(const aoe_node *n, int r)
{
	int64_t axis = aoe_attr_int(n, "axis", 0);
	int ax;

	if ((ax = aoe_axis(axis, r)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name, (long long)axis, r);
	return ax;
}

/*
 * Check ScatterElements' indices (when known) against the data: 0, or
 * an error naming the first out of range.
 */
static int
sel_check(const aoe_node *n, const aoe_tensor *x, const aoe_tensor *ix,
    int ax)
{
	int64_t i, cnt = aoe_tensor_numel(ix), v;

	for (i = 0; i < cnt; i++) {
		v = ix_at(ix->data, ix->dtype, i);
		if (fix_index(v, x->dims[ax]) < 0)
			return bad_index(n, v, x->dims[ax]);
	}
	return 0;
}

static int
sel_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *ix, *u;
	int rc, ax, d;

	if ((rc = aoe_need_inputs(g, n, 3, 3)) < 0 ||
	    (rc = static_in(g, n, 0, &x)) < 0 ||
	    (rc = static_in(g, n, 1, &ix)) < 0 ||
	    (rc = static_in(g, n, 2, &u)) < 0 ||
	    (rc = index_type(n, ix)) < 0 ||
	    (rc = reduction(n, x->dtype)) < 0)
		return rc;
	if ((ax = scatter_axis(n, x->ndim)) < 0)
		return ax;
	if (u->dtype != x->dtype)
		return aoe_err(AOE_EDATA, "%s '%s': updates are %s, data %s",
		    n->op_type, n->name, aoe_dtype_name(u->dtype),
		    aoe_dtype_name(x->dtype));
	if (ix->ndim != x->ndim || !aoe_same_shape(ix, u))
		return aoe_err(AOE_EDATA, "%s '%s': indices and updates must "
		    "have one shape of the data's rank %d", n->op_type,
		    n->name, x->ndim);
	for (d = 0; d < x->ndim; d++)
		if (d != ax && ix->dims[d] > x->dims[d])
			return aoe_err(AOE_EDATA, "%s '%s': indices dimension "
			    "%d of %lld exceeds the data's %lld", n->op_type,
			    n->name, d, (long long)ix->dims[d],
			    (long long)x->dims[d]);
	if (ix->kind == AOE_T_CONST && ix->data &&
	    (rc = sel_check(n, x, ix, ax)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

static int
sel_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *ix = aoe_in(k->g, k->n, 1);
	aoe_tensor *u = aoe_in(k->g, k->n, 2), *y = aoe_out(k->g, k->n, 0);
	size_t es = aoe_dtype_size(x->dtype);
	int64_t cnt = aoe_tensor_numel(ix), xs[AOE_MAXDIM], c[AOE_MAXDIM];
	int64_t i, off, v, s;
	int ax, red, rc, d;

	if ((red = reduction(k->n, x->dtype)) < 0)
		return red;
	if ((ax = scatter_axis(k->n, x->ndim)) < 0)
		return ax;
	if ((rc = sel_check(k->n, x, ix, ax)) < 0)
		return rc;
	par_copy(k, y->data, x->data, (int64_t)aoe_tensor_nbytes(x),
	    aoe_tensor_numel(x));
	for (s = 1, d = x->ndim - 1; d >= 0; d--) {
		xs[d] = s;
		s *= x->dims[d];
	}
	memset(c, 0, sizeof(c));
	for (i = 0; i < cnt; i++) {
		v = fix_index(ix_at(ix->data, ix->dtype, i), x->dims[ax]);
		for (off = 0, d = 0; d < x->ndim; d++)
			off += (d == ax ? v : c[d]) * xs[d];
		combine((char *)y->data + off * (int64_t)es,
		    (const char *)u->data + i * (int64_t)es, 1, x->dtype, red);
		/* The next coordinate of the indices, row-major. */
		for (d = x->ndim - 1; d >= 0 && ++c[d] == ix->dims[d]; d--)
			c[d] = 0;
	}
	return 0;
}

/*
 * ScatterND and GatherND: index tuples of k coordinates, each naming a
 * slice of the data of prod(data.shape[b + k:]) elements.
 */

/*
 * The offset (in slices) of index tuple t of indices ix into data x
 * past its b batch dimensions, or -1 with an error.
 */
static int64_t
nd_offset(const aoe_node *n, const aoe_tensor *x, const aoe_tensor *ix,
    int b, int64_t t)
{
	int kk = (int)ix->dims[ix->ndim - 1], j;
	int64_t off = 0, v, w;

	for (j = 0; j < kk; j++) {
		v = ix_at(ix->data, ix->dtype, t * kk + j);
		if ((w = fix_index(v, x->dims[b + j])) < 0) {
			bad_index(n, v, x->dims[b + j]);
			return -1;
		}
		off = off * x->dims[b + j] + w;
	}
	return off;
}

/* Check the k of indices ix against data x and b batch dimensions. */
static int
nd_shapes(const aoe_node *n, const aoe_tensor *x, const aoe_tensor *ix,
    int b)
{
	int64_t kk;
	int d;

	if (ix->ndim < 1 || x->ndim < 1)
		return aoe_err(AOE_EDATA, "%s '%s': data and indices need a "
		    "rank of at least 1", n->op_type, n->name);
	kk = ix->dims[ix->ndim - 1];
	if (b < 0 || b >= ix->ndim || b >= x->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': batch_dims %d is out of "
		    "range", n->op_type, n->name, b);
	if (kk < 1 || b + kk > x->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': index tuples of %lld "
		    "coordinates for data of rank %d", n->op_type, n->name,
		    (long long)kk, x->ndim);
	for (d = 0; d < b; d++)
		if (x->dims[d] != ix->dims[d])
			return aoe_err(AOE_EDATA, "%s '%s': batch dimension "
			    "%d is %lld in the data, %lld in the indices",
			    n->op_type, n->name, d, (long long)x->dims[d],
			    (long long)ix->dims[d]);
	return 0;
}

/* Check every tuple of constant (or run-time) indices. */
static int
nd_check(const aoe_node *n, const aoe_tensor *x, const aoe_tensor *ix,
    int b)
{
	int64_t t, nt = aoe_tensor_numel(ix) / ix->dims[ix->ndim - 1];

	for (t = 0; t < nt; t++)
		if (nd_offset(n, x, ix, b, t) < 0)
			return -AOE_EDATA;
	return 0;
}

static int
snd_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *ix, *u;
	int64_t want[2 * AOE_MAXDIM];
	int rc, kk, d, nw = 0;

	if ((rc = aoe_need_inputs(g, n, 3, 3)) < 0 ||
	    (rc = static_in(g, n, 0, &x)) < 0 ||
	    (rc = static_in(g, n, 1, &ix)) < 0 ||
	    (rc = static_in(g, n, 2, &u)) < 0 ||
	    (rc = index_type(n, ix)) < 0 ||
	    (rc = reduction(n, x->dtype)) < 0 ||
	    (rc = nd_shapes(n, x, ix, 0)) < 0)
		return rc;
	if (u->dtype != x->dtype)
		return aoe_err(AOE_EDATA, "%s '%s': updates are %s, data %s",
		    n->op_type, n->name, aoe_dtype_name(u->dtype),
		    aoe_dtype_name(x->dtype));
	kk = (int)ix->dims[ix->ndim - 1];
	for (d = 0; d < ix->ndim - 1; d++)
		want[nw++] = ix->dims[d];
	for (d = kk; d < x->ndim; d++)
		want[nw++] = x->dims[d];
	if (u->ndim != nw || memcmp(u->dims, want, (size_t)nw *
	    sizeof(int64_t)) != 0)
		return aoe_err(AOE_EDATA, "%s '%s': updates must have shape "
		    "indices.shape[:-1] + data.shape[%d:]", n->op_type,
		    n->name, kk);
	if (ix->kind == AOE_T_CONST && ix->data &&
	    (rc = nd_check(n, x, ix, 0)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

static int
snd_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *ix = aoe_in(k->g, k->n, 1);
	aoe_tensor *u = aoe_in(k->g, k->n, 2), *y = aoe_out(k->g, k->n, 0);
	size_t es = aoe_dtype_size(x->dtype);
	int kk = (int)ix->dims[ix->ndim - 1];
	int64_t slice = prod(x->dims, kk, x->ndim), t, nt, off;
	int red, rc;

	if ((red = reduction(k->n, x->dtype)) < 0)
		return red;
	if ((rc = nd_check(k->n, x, ix, 0)) < 0)
		return rc;
	par_copy(k, y->data, x->data, (int64_t)aoe_tensor_nbytes(x),
	    aoe_tensor_numel(x));
	nt = aoe_tensor_numel(ix) / kk;
	for (t = 0; t < nt; t++) {
		off = nd_offset(k->n, x, ix, 0, t);
		combine((char *)y->data + off * slice * (int64_t)es,
		    (const char *)u->data + t * slice * (int64_t)es, slice,
		    x->dtype, red);
	}
	return 0;
}

static int
gnd_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *ix;
	int64_t dims[2 * AOE_MAXDIM];
	int rc, kk, d, nd = 0;
	int b = (int)aoe_attr_int(n, "batch_dims", 0);

	if ((rc = aoe_need_inputs(g, n, 2, 2)) < 0 ||
	    (rc = static_in(g, n, 0, &x)) < 0 ||
	    (rc = static_in(g, n, 1, &ix)) < 0 ||
	    (rc = index_type(n, ix)) < 0 ||
	    (rc = nd_shapes(n, x, ix, b)) < 0)
		return rc;
	kk = (int)ix->dims[ix->ndim - 1];
	for (d = 0; d < ix->ndim - 1; d++)
		dims[nd++] = ix->dims[d];
	for (d = b + kk; d < x->ndim; d++)
		dims[nd++] = x->dims[d];
	if (nd > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, nd, AOE_MAXDIM);
	if (ix->kind == AOE_T_CONST && ix->data &&
	    (rc = nd_check(n, x, ix, b)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, nd, dims);
}

static int
gnd_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *ix = aoe_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	int b = (int)aoe_attr_int(k->n, "batch_dims", 0);
	int kk = (int)ix->dims[ix->ndim - 1];
	size_t es = aoe_dtype_size(x->dtype);
	int64_t slice = prod(x->dims, b + kk, x->ndim);
	int64_t batch = prod(x->dims, 0, b), bsz = prod(x->dims, b, x->ndim);
	int64_t nt = aoe_tensor_numel(ix) / kk, per = nt / (batch ? batch : 1);
	int64_t t, off;
	int rc;

	if ((rc = nd_check(k->n, x, ix, b)) < 0)
		return rc;
	for (t = 0; t < nt; t++) {
		off = nd_offset(k->n, x, ix, b, t);
		memcpy((char *)y->data + t * slice * (int64_t)es,
		    (const char *)x->data + ((t / per) * bsz + off * slice) *
		    (int64_t)es, (size_t)slice * es);
	}
	return 0;
}

/*
 * OneHot.
 */

static int
onehot_depth(const aoe_graph *g, const aoe_node *n, int64_t *depth)
{
	aoe_tensor *t = opt_in(g, n, 1);
	double v;

	if (t == NULL || aoe_tensor_numel(t) != 1 ||
	    aoe_dtype_size(t->dtype) == 0 || t->dtype == AOE_F16)
		return aoe_err(AOE_EDATA, "%s '%s': depth must be one number",
		    n->op_type, n->name);
	if (t->kind != AOE_T_CONST || t->data == NULL)
		return aoe_err(AOE_EUNSUP, "%s '%s': depth '%s' must be a "
		    "constant", n->op_type, n->name, t->name);
	v = num_at(t->data, t->dtype, 0);
	if (!(v >= 1 && v <= 1e9))
		return aoe_err(AOE_EDATA, "%s '%s': depth %g is not in "
		    "[1, 1e9]", n->op_type, n->name, v);
	*depth = (int64_t)v;
	return 0;
}

static int
onehot_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *ix, *vals;
	int64_t depth, dims[AOE_MAXDIM], axis = aoe_attr_int(n, "axis", -1);
	int rc, ax, d, nd = 0;

	if ((rc = aoe_need_inputs(g, n, 3, 3)) < 0 ||
	    (rc = static_in(g, n, 0, &ix)) < 0 ||
	    (rc = static_in(g, n, 2, &vals)) < 0)
		return rc;
	if (ix->dtype == AOE_BOOL || ix->dtype == AOE_F16)
		return aoe_err(AOE_EUNSUP, "%s '%s': indices of %s not "
		    "supported", n->op_type, n->name,
		    aoe_dtype_name(ix->dtype));
	if (aoe_tensor_numel(vals) != 2)
		return aoe_err(AOE_EDATA, "%s '%s': values must hold two "
		    "elements (off, on)", n->op_type, n->name);
	if (ix->ndim + 1 > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, ix->ndim + 1, AOE_MAXDIM);
	if ((ax = aoe_axis(axis, ix->ndim + 1)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name, (long long)axis,
		    ix->ndim + 1);
	if ((rc = onehot_depth(g, n, &depth)) < 0)
		return rc;
	for (d = 0; d <= ix->ndim; d++)
		dims[nd++] = d == ax ? depth : ix->dims[d < ax ? d : d - 1];
	return aoe_set_output(g, n, 0, vals->dtype, nd, dims);
}

static int
onehot_run(aoe_kctx *k)
{
	aoe_tensor *ix = aoe_in(k->g, k->n, 0), *vals = aoe_in(k->g, k->n, 2);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	size_t es = aoe_dtype_size(vals->dtype);
	int64_t depth = 0, i, j, outer, inner, cnt = aoe_tensor_numel(ix);
	const char *off = vals->data, *on = off + es;
	char *yd = y->data;
	double v;
	int ax, rc;

	if ((rc = onehot_depth(k->g, k->n, &depth)) < 0)
		return rc;
	ax = aoe_axis(aoe_attr_int(k->n, "axis", -1), ix->ndim + 1);
	outer = prod(ix->dims, 0, ax);
	inner = prod(ix->dims, ax, ix->ndim);
	for (i = 0; i < outer * depth * inner; i++)
		memcpy(yd + i * (int64_t)es, off, es);
	for (i = 0; i < cnt; i++) {
		v = num_at(ix->data, ix->dtype, i);
		if (v < 0)
			v += (double)depth;
		if (!(v >= 0 && v < (double)depth))
			continue;
		j = (int64_t)v;
		memcpy(yd + (((i / inner) * depth + j) * inner + i % inner) *
		    (int64_t)es, on, es);
	}
	return 0;
}

/*
 * MaxUnpool.
 */

/*
 * The output's dims: output_shape when given (and def set to the shape
 * the attributes give, in which the indices count), else that shape.
 */
static int
unpool_shape(const aoe_graph *g, const aoe_node *n, const aoe_tensor *x,
    int64_t *dims, int64_t *def)
{
	const int64_t *ks, *st, *pads;
	aoe_tensor *os = opt_in(g, n, 2);
	int nk, ns = 0, np = 0, sp = x->ndim - 2, i, rc;

	if (os != NULL && def == NULL) {
		if (os->kind != AOE_T_CONST || os->data == NULL)
			return aoe_err(AOE_EUNSUP, "%s '%s': output_shape "
			    "'%s' must be a constant", n->op_type, n->name,
			    os->name);
		if ((rc = aoe_const_ints(g, n, 2, dims, AOE_MAXDIM)) < 0)
			return rc;
		if (rc != x->ndim || dims[0] != x->dims[0] ||
		    dims[1] != x->dims[1])
			return aoe_err(AOE_EDATA, "%s '%s': output_shape must "
			    "be of rank %d with the input's N and C",
			    n->op_type, n->name, x->ndim);
		for (i = 2; i < x->ndim; i++)
			if (dims[i] < 1 || dims[i] > ((int64_t)1 << 31))
				return aoe_err(AOE_EDATA, "%s '%s': "
				    "output_shape %lld is out of range",
				    n->op_type, n->name, (long long)dims[i]);
		return 0;
	}
	ks = aoe_attr_ints(n, "kernel_shape", &nk);
	st = aoe_attr_ints(n, "strides", &ns);
	pads = aoe_attr_ints(n, "pads", &np);
	if (ks == NULL || nk != sp || (st && ns != sp) ||
	    (pads && np != 2 * sp))
		return aoe_err(AOE_EDATA, "%s '%s': kernel_shape, strides and "
		    "pads must match %d spatial dimensions", n->op_type,
		    n->name, sp);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (i = 0; i < sp; i++) {
		int64_t s = st ? st[i] : 1;
		int64_t p = pads ? pads[i] + pads[i + sp] : 0;

		if (s < 1 || ks[i] < 1 || s > 65536 || ks[i] > 65536)
			return aoe_err(AOE_EDATA, "%s '%s': a kernel or stride "
			    "is out of range", n->op_type, n->name);
		dims[i + 2] = (x->dims[i + 2] - 1) * s + ks[i] - p;
		if (dims[i + 2] < 1)
			return aoe_err(AOE_EDATA, "%s '%s': the pads leave no "
			    "output", n->op_type, n->name);
	}
	if (def != NULL) {
		memcpy(def, dims, (size_t)x->ndim * sizeof(int64_t));
		if (os != NULL)
			return unpool_shape(g, n, x, dims, NULL);
	}
	return 0;
}

static int
unpool_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *ix;
	int64_t dims[AOE_MAXDIM], def[AOE_MAXDIM];
	int rc;

	if ((rc = aoe_need_inputs(g, n, 2, 3)) < 0 ||
	    (rc = static_in(g, n, 0, &x)) < 0 ||
	    (rc = static_in(g, n, 1, &ix)) < 0)
		return rc;
	if (ix->dtype != AOE_I64)
		return aoe_err(AOE_EDATA, "%s '%s': indices must be int64",
		    n->op_type, n->name);
	if (x->ndim < 3 || !aoe_same_shape(x, ix))
		return aoe_err(AOE_EDATA, "%s '%s': input and indices must "
		    "have one shape [N, C, spatial...]", n->op_type, n->name);
	if ((rc = unpool_shape(g, n, x, dims, def)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, dims);
}

static int
unpool_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *ix = aoe_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	size_t es = aoe_dtype_size(x->dtype);
	int64_t i, v, o, q, cnt = aoe_tensor_numel(x), def[AOE_MAXDIM];
	int64_t dims[AOE_MAXDIM], nd;
	const int64_t *id = ix->data;
	int rc, d;

	if ((rc = unpool_shape(k->g, k->n, x, dims, def)) < 0)
		return rc;
	nd = prod(def, 0, x->ndim);
	memset(y->data, 0, aoe_tensor_nbytes(y));
	for (i = 0; i < cnt; i++) {
		if ((v = id[i]) < 0 || v >= nd)
			return aoe_err(AOE_EDATA, "%s '%s': index %lld is out "
			    "of range for an output of %lld elements",
			    k->n->op_type, k->n->name, (long long)v,
			    (long long)nd);
		/*
		 * The index counts in the attributes' shape; an output_shape
		 * keeps each coordinate (the extra rows and columns stay 0).
		 */
		for (o = 0, q = 1, d = x->ndim - 1; d >= 0; d--) {
			if (v % def[d] >= y->dims[d])
				return aoe_err(AOE_EDATA, "%s '%s': index %lld "
				    "falls outside output_shape",
				    k->n->op_type, k->n->name,
				    (long long)id[i]);
			o += v % def[d] * q;
			q *= y->dims[d];
			v /= def[d];
		}
		memcpy((char *)y->data + o * (int64_t)es,
		    (const char *)x->data + i * (int64_t)es, es);
	}
	return 0;
}

const aoe_op aoe_ops_scatter[] = {
	{ "ScatterElements", sel_infer, sel_run, NULL, aoe_par_sched },
	{ "Scatter", sel_infer, sel_run, NULL, aoe_par_sched },
	{ "ScatterND", snd_infer, snd_run, NULL, aoe_par_sched },
	{ "GatherND", gnd_infer, gnd_run, NULL, aoe_par_sched },
	{ "OneHot", onehot_infer, onehot_run, NULL, aoe_par_sched },
	{ "MaxUnpool", unpool_infer, unpool_run, NULL, aoe_par_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};
