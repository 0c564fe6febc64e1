/*
 * k_seq.c - sequences and optionals: SequenceConstruct, SequenceEmpty,
 * SequenceInsert, SequenceAt, SequenceErase, SequenceLength,
 * SplitToSequence, ConcatFromSequence, Optional, OptionalHasElement and
 * OptionalGetElement.
 *
 * A sequence's elements are made when the graph runs (aoe_seq, in
 * lib/ir/seq.c); inference knows their dtype, their shape as far as
 * every element shares it, and often their number.  A tensor taken
 * from a sequence (SequenceAt, ConcatFromSequence) has a static shape
 * when that is known, else it is sized at run time (dynamic).  These
 * operators move data and have no search space.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Input i, which must be present and a sequence (not an optional). */
static int
seq_in(const aoe_graph *g, const aoe_node *n, int i, aoe_tensor **tp)
{
	aoe_tensor *t = opt_in(g, n, i);

	*tp = NULL;
	if (t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
		    n->op_type, n->name, i);
	if (t->vkind != AOE_V_SEQ || t->optional)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is %s, not a "
		    "sequence", n->op_type, n->name, t->name, t->optional ?
		    "an optional" : "a tensor");
	*tp = t;
	return 0;
}

/* Input i, which must be absent (when opt) or a tensor. */
static int
tensor_in(const aoe_graph *g, const aoe_node *n, int i, int opt,
    aoe_tensor **tp)
{
	aoe_tensor *t = opt_in(g, n, i);

	*tp = t;
	if (t == NULL && !opt)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
		    n->op_type, n->name, i);
	if (t != NULL && aoe_is_value(t)) {
		*tp = NULL;
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is %s, not a "
		    "tensor", n->op_type, n->name, t->name, t->optional ?
		    "an optional" : "a sequence");
	}
	return 0;
}

/* Output i as a sequence of dtype elements of shape (ndim, dims). */
static void
seq_out(aoe_tensor *y, int dtype, int ndim, const int64_t *dims, int len)
{
	aoe_tensor_set(y, dtype, ndim, dims);
	y->vkind = AOE_V_SEQ;
	y->optional = y->dynamic = 0;
	y->seq_len = len;
}

/*
 * Merge an element's shape into a sequence's: the dimensions all
 * elements share, -1 where they differ, rank -1 where ranks differ.
 */
static void
merge_shape(aoe_tensor *y, int ndim, const int64_t *dims)
{
	int i;

	if (y->ndim != ndim || ndim < 0) {
		y->ndim = -1;
		return;
	}
	for (i = 0; i < ndim; i++)
		if (y->dims[i] != dims[i])
			y->dims[i] = -1;
}

/* Whether a shape is fully known. */
static int
static_shape(int ndim, const int64_t *dims)
{
	int i;

	if (ndim < 0)
		return 0;
	for (i = 0; i < ndim; i++)
		if (dims[i] < 0)
			return 0;
	return 1;
}

/*
 * Output i as a tensor of dtype and shape (ndim, dims), sized at run
 * time when the shape is not fully known (or dyn is set).
 */
static int
tensor_out(aoe_graph *g, aoe_node *n, int i, int dtype, int ndim,
    const int64_t *dims, int dyn)
{
	aoe_tensor *y = aoe_out(g, n, i);

	if (y == NULL)
		return 0;
	if (!dyn && static_shape(ndim, dims))
		return aoe_set_output(g, n, i, dtype, ndim, dims);
	aoe_tensor_set(y, dtype, ndim, dims);
	y->vkind = AOE_V_TENSOR;
	y->optional = 0;
	y->dynamic = 1;
	return 0;
}

/*
 * The position in input i (an int32 or int64 scalar), normalised for a
 * sequence of len elements: -len..len-1 (or -len..len with end set, for
 * an insertion).  def when the input is absent.
 */
static int
position(const aoe_graph *g, const aoe_node *n, int i, int len, int end,
    int def, int *pos)
{
	const aoe_tensor *t = opt_in(g, n, i);
	int64_t v;

	if (t == NULL) {
		*pos = def;
		return 0;
	}
	if (t->data == NULL || aoe_tensor_numel(t) != 1)
		return aoe_err(AOE_EDATA, "%s '%s': position '%s' must be one "
		    "value", n->op_type, n->name, t->name);
	v = t->dtype == AOE_I64 ? *(const int64_t *)t->data :
	    *(const int32_t *)t->data;
	if (v < -(int64_t)len || v > (int64_t)len - (end ? 0 : 1))
		return aoe_err(AOE_EDATA, "%s '%s': position %lld is out of "
		    "range for a sequence of %d", n->op_type, n->name,
		    (long long)v, len);
	*pos = (int)(v < 0 ? v + len : v);
	return 0;
}

/* A position input, when present, is an int32 or int64 scalar. */
static int
check_position(const aoe_graph *g, const aoe_node *n, int i)
{
	aoe_tensor *t;
	int rc;

	if ((rc = tensor_in(g, n, i, 1, &t)) < 0 || t == NULL)
		return rc;
	if ((t->dtype != AOE_I64 && t->dtype != AOE_I32) ||
	    aoe_tensor_numel(t) != 1)
		return aoe_err(AOE_EDATA, "%s '%s': position '%s' must be an "
		    "int32 or int64 scalar", n->op_type, n->name, t->name);
	return 0;
}

/* The error for tensor x of n that is not of the elements' dtype. */
static int
elem_dtype(const aoe_node *n, const aoe_tensor *x, int dtype)
{
	return aoe_err(AOE_EDATA, "%s '%s': tensor '%s' is %s, the "
	    "sequence's elements %s", n->op_type, n->name, x->name,
	    aoe_dtype_name(x->dtype), aoe_dtype_name(dtype));
}

/* Copy x's sequence to y's (unless they are one). */
static aoe_seq *
copy_seq(aoe_tensor *y, const aoe_tensor *x, int *rc)
{
	*rc = aoe_value_copy(y, x);
	return aoe_seq_of(y);
}

/*
 * SequenceConstruct.
 */

static int
construct_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *y = aoe_out(g, n, 0);
	int i, rc;

	if ((rc = aoe_need_inputs(g, n, 1, n->nin)) < 0)
		return rc;
	for (i = 0; i < n->nin; i++) {
		if ((rc = tensor_in(g, n, i, 0, &x)) < 0)
			return rc;
		if (i == 0)
			seq_out(y, x->dtype, x->ndim, x->dims, n->nin);
		else if (y->dtype == AOE_UNDEFINED)
			y->dtype = x->dtype;
		else if (x->dtype != y->dtype && x->dtype != AOE_UNDEFINED)
			return elem_dtype(n, x, y->dtype);
		if (i > 0)
			merge_shape(y, x->ndim, x->dims);
	}
	return 0;
}

static int
construct_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	aoe_seq *s = aoe_seq_of(y);
	int i, rc;

	aoe_seq_clear(s);
	for (i = 0; i < k->n->nin; i++)
		if (aoe_in(k->g, k->n, i)->dtype != y->dtype)
			return elem_dtype(k->n, aoe_in(k->g, k->n, i), y->dtype);
	for (i = 0; i < k->n->nin; i++)
		if ((rc = aoe_seq_insert(s, s->n,
		    aoe_tensor_dup(aoe_in(k->g, k->n, i)))) < 0)
			return rc;
	return 0;
}

/*
 * SequenceEmpty.
 */

static int
empty_infer(aoe_graph *g, aoe_node *n)
{
	int dtype = (int)aoe_attr_int(n, "dtype", AOE_F32);

	if (n->nout < 1 || aoe_out(g, n, 0) == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': no output", n->op_type,
		    n->name);
	if (aoe_dtype_size(dtype) == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': dtype %d is not "
		    "supported", n->op_type, n->name, dtype);
	seq_out(aoe_out(g, n, 0), dtype, -1, NULL, 0);
	return 0;
}

static int
empty_run(aoe_kctx *k)
{
	aoe_seq_clear(aoe_seq_of(aoe_out(k->g, k->n, 0)));
	return 0;
}

/*
 * SequenceInsert.
 */

static int
insert_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *s, *x, *y = aoe_out(g, n, 0);
	int rc;

	if ((rc = aoe_need_inputs(g, n, 2, 3)) < 0 ||
	    (rc = seq_in(g, n, 0, &s)) < 0 ||
	    (rc = tensor_in(g, n, 1, 0, &x)) < 0 ||
	    (rc = check_position(g, n, 2)) < 0)
		return rc;
	/* A tensor sized at run time may get its dtype then too. */
	if (x->dtype != s->dtype && x->dtype != AOE_UNDEFINED)
		return elem_dtype(n, x, s->dtype);
	if (s->seq_len == 0)
		seq_out(y, s->dtype, x->ndim, x->dims, 1);
	else {
		seq_out(y, s->dtype, s->ndim, s->dims, s->seq_len < 0 ? -1 :
		    s->seq_len + 1);
		merge_shape(y, x->ndim, x->dims);
	}
	return 0;
}

static int
insert_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	const aoe_tensor *t = aoe_in(k->g, k->n, 1);
	int len = x->seq ? x->seq->n : 0, pos, rc;
	aoe_seq *s;

	if ((rc = position(k->g, k->n, 2, len, 1, len, &pos)) < 0)
		return rc;
	if (t->dtype != x->dtype)
		return elem_dtype(k->n, t, x->dtype);
	s = copy_seq(y, x, &rc);
	if (rc < 0)
		return rc;
	return aoe_seq_insert(s, pos, aoe_tensor_dup(t));
}

/*
 * SequenceAt.
 */

static int
at_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *s;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 2, 2)) < 0 ||
	    (rc = seq_in(g, n, 0, &s)) < 0 ||
	    (rc = check_position(g, n, 1)) < 0)
		return rc;
	return tensor_out(g, n, 0, s->dtype, s->ndim, s->dims, 0);
}

static int
at_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int len = x->seq ? x->seq->n : 0, pos, rc;
	char msg[1024];

	if ((rc = position(k->g, k->n, 1, len, 0, 0, &pos)) < 0)
		return rc;
	if ((rc = aoe_value_copy(y, x->seq->t[pos])) < 0) {
		snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
		return aoe_err(-rc, "%s '%s': %s", k->n->op_type, k->n->name,
		    msg);
	}
	return 0;
}

/*
 * SequenceErase.
 */

static int
erase_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *s;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 2)) < 0 ||
	    (rc = seq_in(g, n, 0, &s)) < 0 ||
	    (rc = check_position(g, n, 1)) < 0)
		return rc;
	if (s->seq_len == 0)
		return aoe_err(AOE_EDATA, "%s '%s': sequence '%s' is empty",
		    n->op_type, n->name, s->name);
	seq_out(aoe_out(g, n, 0), s->dtype, s->ndim, s->dims,
	    s->seq_len < 0 ? -1 : s->seq_len - 1);
	return 0;
}

static int
erase_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int len = x->seq ? x->seq->n : 0, pos, rc;
	aoe_seq *s;

	if (len == 0)
		return aoe_err(AOE_EDATA, "%s '%s': sequence '%s' is empty",
		    k->n->op_type, k->n->name, x->name);
	if ((rc = position(k->g, k->n, 1, len, 0, len - 1, &pos)) < 0)
		return rc;
	s = copy_seq(y, x, &rc);
	if (rc < 0)
		return rc;
	aoe_seq_erase(s, pos);
	return 0;
}

/*
 * SequenceLength.
 */

static int
length_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *s;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0 ||
	    (rc = seq_in(g, n, 0, &s)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, AOE_I64, 0, NULL);
}

static int
length_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);

	*(int64_t *)aoe_out(k->g, k->n, 0)->data = x->seq ? x->seq->n : 0;
	return 0;
}

/*
 * SplitToSequence.
 */

/*
 * The lengths of the pieces along an axis of length dim: from split
 * (absent: pieces of 1; a scalar: pieces of that, the last shorter; a
 * vector: those lengths, adding up to dim) into len[0..*np), which has
 * room for dim pieces (or 1 when dim is 0).
 */
static int
split_lengths(const aoe_node *n, const aoe_tensor *split, int64_t dim,
    int64_t *len, int64_t *np)
{
	int64_t i, cnt, sum = 0, v;

	if (split == NULL) {
		for (i = 0; i < dim; i++)
			len[i] = 1;
		*np = dim;
		return 0;
	}
	cnt = aoe_tensor_numel(split);
	if (split->ndim == 0) {
		v = split->dtype == AOE_I64 ? *(const int64_t *)split->data :
		    *(const int32_t *)split->data;
		if (v <= 0)
			return aoe_err(AOE_EDATA, "%s '%s': split %lld is not "
			    "positive", n->op_type, n->name, (long long)v);
		for (*np = 0, i = 0; i < dim; i += v)
			len[(*np)++] = min64(v, dim - i);
		return 0;
	}
	if (cnt > dim && dim > 0)
		return aoe_err(AOE_EDATA, "%s '%s': %lld split lengths for an "
		    "axis of %lld", n->op_type, n->name, (long long)cnt,
		    (long long)dim);
	for (i = 0; i < cnt; i++) {
		v = split->dtype == AOE_I64 ? ((const int64_t *)split->data)[i] :
		    ((const int32_t *)split->data)[i];
		if (v < 0 || v > dim - sum)
			return aoe_err(AOE_EDATA, "%s '%s': split length %lld "
			    "is negative or past the axis of %lld", n->op_type,
			    n->name, (long long)v, (long long)dim);
		len[i] = v;
		sum += v;
	}
	if (sum != dim)
		return aoe_err(AOE_EDATA, "%s '%s': split lengths add up to "
		    "%lld, the axis is %lld", n->op_type, n->name,
		    (long long)sum, (long long)dim);
	*np = cnt;
	return 0;
}

static int
split_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *split, *y = aoe_out(g, n, 0);
	int64_t dims[AOE_MAXDIM], *len, np = 0, i;
	int rc, axis, keep = (int)aoe_attr_int(n, "keepdims", 1), nd;

	if ((rc = aoe_need_inputs(g, n, 1, 2)) < 0 ||
	    (rc = tensor_in(g, n, 0, 0, &x)) < 0 ||
	    (rc = tensor_in(g, n, 1, 1, &split)) < 0)
		return rc;
	if (x->ndim == 0)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is a scalar",
		    n->op_type, n->name, x->name);
	if (x->ndim < 0 || x->dynamic) {
		/* Pieces of an input sized at run time: sized then. */
		seq_out(y, x->dtype, -1, NULL, -1);
		return 0;
	}
	if ((axis = aoe_axis(aoe_attr_int(n, "axis", 0), x->ndim)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name,
		    (long long)aoe_attr_int(n, "axis", 0), x->ndim);
	if (split && ((split->dtype != AOE_I64 && split->dtype != AOE_I32) ||
	    split->ndim > 1))
		return aoe_err(AOE_EDATA, "%s '%s': split '%s' must be an int32 "
		    "or int64 scalar or vector", n->op_type, n->name,
		    split->name);
	memcpy(dims, x->dims, sizeof(dims));
	nd = x->ndim;
	if (split == NULL)
		dims[axis] = 1;
	if (split == NULL && !keep) {
		memmove(dims + axis, dims + axis + 1, (size_t)(nd - axis - 1) *
		    sizeof(*dims));
		nd--;
	}
	if (split && split->kind != AOE_T_CONST) {
		/* The lengths are known only at run time. */
		dims[axis] = -1;
		seq_out(y, x->dtype, nd, dims, -1);
		return 0;
	}
	len = aoe_xcalloc((size_t)x->dims[axis] + 1, sizeof(*len));
	rc = split_lengths(n, split, x->dims[axis], len, &np);
	if (rc == 0) {
		if (split)
			dims[axis] = np > 0 ? len[0] : 0;
		seq_out(y, x->dtype, nd, dims, (int)np);
		for (i = 1; split && i < np; i++)
			if (len[i] != len[0])
				y->dims[axis] = -1;
	}
	free(len);
	return rc;
}

static int
split_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	const aoe_tensor *split = opt_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0), *e;
	aoe_seq *s = aoe_seq_of(y);
	int keep = (int)aoe_attr_int(k->n, "keepdims", 1), rc = 0, nd;
	int axis = aoe_axis(aoe_attr_int(k->n, "axis", 0), x->ndim);
	int64_t dims[AOE_MAXDIM], *len, np, i, o, off = 0, outer, inner;
	size_t es = aoe_dtype_size(x->dtype);

	if (axis < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", k->n->op_type, k->n->name,
		    (long long)aoe_attr_int(k->n, "axis", 0), x->ndim);
	outer = prod(x->dims, 0, axis);
	inner = prod(x->dims, axis + 1, x->ndim) * (int64_t)es;
	len = aoe_xcalloc((size_t)x->dims[axis] + 1, sizeof(*len));
	if ((rc = split_lengths(k->n, split, x->dims[axis], len, &np)) < 0)
		goto out;
	aoe_seq_clear(s);
	for (i = 0; i < np; i++) {
		memcpy(dims, x->dims, sizeof(dims));
		dims[axis] = len[i];
		nd = x->ndim;
		if (split == NULL && !keep) {
			memmove(dims + axis, dims + axis + 1,
			    (size_t)(nd - axis - 1) * sizeof(*dims));
			nd--;
		}
		e = aoe_xcalloc(1, sizeof(*e));
		e->name = aoe_xstrdup(y->name);
		e->producer = e->last_use = e->alias = -1;
		e->offset = -1;
		if ((rc = aoe_tensor_resize(e, x->dtype, nd, dims)) < 0) {
			aoe_tensor_free(e);
			goto out;
		}
		if ((rc = aoe_seq_insert(s, s->n, e)) < 0)
			goto out;
		for (o = 0; o < outer; o++)
			memcpy((char *)e->data + o * len[i] * inner,
			    (const char *)x->data + (o * x->dims[axis] + off) *
			    inner, (size_t)(len[i] * inner));
		off += len[i];
	}
out:
	free(len);
	return rc;
}

/*
 * ConcatFromSequence.
 */

/*
 * The output shape for elements of shape (nd, dims), count of them,
 * joined along axis (new: stacked on a new axis) into out; or -1 with
 * the axis out of range.
 */
static int
concat_shape(int nd, const int64_t *dims, int64_t count, int64_t axis,
    int new, int *ond, int64_t *out)
{
	int a = aoe_axis(axis, nd + (new ? 1 : 0)), i;

	if (a < 0 || nd + (new ? 1 : 0) > AOE_MAXDIM || (!new && nd == 0))
		return -1;
	*ond = nd + (new ? 1 : 0);
	for (i = 0; i < *ond; i++) {
		if (new)
			out[i] = i < a ? dims[i] : i == a ? count : dims[i - 1];
		else
			out[i] = i == a ? (dims[a] < 0 || count < 0 ? -1 :
			    dims[a] * count) : dims[i];
	}
	return a;
}

static int
concatseq_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *s;
	int64_t out[AOE_MAXDIM];
	int rc, nd = 0, isnew = (int)aoe_attr_int(n, "new_axis", 0);
	const aoe_attr *a = aoe_attr_find(n, "axis");

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0 ||
	    (rc = seq_in(g, n, 0, &s)) < 0)
		return rc;
	if (a == NULL || a->type != AOE_A_INT)
		return aoe_err(AOE_EDATA, "%s '%s': attribute 'axis' is "
		    "required", n->op_type, n->name);
	if (isnew != 0 && isnew != 1)
		return aoe_err(AOE_EDATA, "%s '%s': new_axis %d is not 0 or 1",
		    n->op_type, n->name, isnew);
	if (s->seq_len == 0)
		return aoe_err(AOE_EDATA, "%s '%s': sequence '%s' is empty",
		    n->op_type, n->name, s->name);
	if (s->ndim < 0) {
		/* The rank is known only at run time. */
		aoe_tensor *y = aoe_out(g, n, 0);
		aoe_tensor_set(y, s->dtype, -1, NULL);
		y->vkind = AOE_V_TENSOR;
		y->optional = 0;
		y->dynamic = 1;
		return 0;
	}
	if (concat_shape(s->ndim, s->dims, s->seq_len, a->i, isnew, &nd,
	    out) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for elements of rank %d", n->op_type, n->name,
		    (long long)a->i, s->ndim);
	return tensor_out(g, n, 0, s->dtype, nd, out, 0);
}

static int
concatseq_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0), *e0, *e;
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	int isnew = (int)aoe_attr_int(k->n, "new_axis", 0), nd, a, i, d, rc;
	int64_t out[AOE_MAXDIM], outer, inner, off = 0, o, chunk;
	size_t es = aoe_dtype_size(x->dtype);
	char sa[128], sb[128];

	if (x->seq == NULL || x->seq->n == 0)
		return aoe_err(AOE_EDATA, "%s '%s': sequence '%s' is empty",
		    k->n->op_type, k->n->name, x->name);
	e0 = x->seq->t[0];
	if ((a = concat_shape(e0->ndim, e0->dims, x->seq->n,
	    aoe_attr_int(k->n, "axis", 0), isnew, &nd, out)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for elements of rank %d", k->n->op_type, k->n->name,
		    (long long)aoe_attr_int(k->n, "axis", 0), e0->ndim);
	/* Every element must match the first but along the axis. */
	for (i = 1; i < x->seq->n; i++) {
		e = x->seq->t[i];
		for (d = 0; d < e->ndim && e->ndim == e0->ndim; d++)
			if (e->dims[d] != e0->dims[d] && (isnew || d != a))
				break;
		if (e->ndim != e0->ndim || d < e->ndim)
			return aoe_err(AOE_EDATA, "%s '%s': element %d is %s, "
			    "element 0 %s", k->n->op_type, k->n->name, i,
			    aoe_shape_str(e, sa, sizeof(sa)),
			    aoe_shape_str(e0, sb, sizeof(sb)));
		if (!isnew && i > 0)
			out[a] += e->dims[a] - e0->dims[a];
	}
	if (y->dynamic) {
		if ((rc = aoe_tensor_resize(y, x->dtype, nd, out)) < 0)
			return rc;
	} else if (y->ndim != nd || memcmp(y->dims, out, (size_t)nd *
	    sizeof(*out)) != 0) {
		aoe_tensor tmp;
		memset(&tmp, 0, sizeof(tmp));
		aoe_tensor_set(&tmp, y->dtype, nd, out);
		return aoe_err(AOE_EDATA, "%s '%s': the result is %s at run "
		    "time, %s when the graph was prepared", k->n->op_type,
		    k->n->name, aoe_shape_str(&tmp, sa, sizeof(sa)),
		    aoe_shape_str(y, sb, sizeof(sb)));
	}
	outer = prod(out, 0, a);
	inner = prod(out, a + 1, nd) * (int64_t)es;
	for (i = 0; i < x->seq->n; i++) {
		e = x->seq->t[i];
		chunk = (isnew ? 1 : e->dims[a]) * inner;
		for (o = 0; o < outer; o++)
			memcpy((char *)y->data + (o * out[a] * inner + off),
			    (const char *)e->data + o * chunk, (size_t)chunk);
		off += chunk;
	}
	return 0;
}

/*
 * Optional.
 */

static int
optional_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x = opt_in(g, n, 0), *y = aoe_out(g, n, 0);
	const aoe_attr *a = aoe_attr_find(n, "type");

	if (n->nin > 1 || y == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': %d inputs and %s output, "
		    "expected at most one input and an output", n->op_type,
		    n->name, n->nin, y ? "an" : "no");
	if (x == NULL && (a == NULL || a->t == NULL))
		return aoe_err(AOE_EDATA, "%s '%s': neither an input nor the "
		    "attribute 'type'", n->op_type, n->name);
	if (x != NULL && x->optional)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is already an "
		    "optional", n->op_type, n->name, x->name);
	aoe_value_like(y, x ? x : a->t);
	y->optional = 1;
	if (x == NULL && a->t->optional)
		return aoe_err(AOE_EDATA, "%s '%s': type is an optional",
		    n->op_type, n->name);
	if (x == NULL && y->vkind == AOE_V_TENSOR &&
	    !static_shape(y->ndim, y->dims)) {
		/* An empty optional of a tensor of no particular shape. */
		y->ndim = 0;
	}
	if (aoe_dtype_size(y->dtype) == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': dtype %s is not "
		    "supported", n->op_type, n->name,
		    aoe_dtype_name(y->dtype));
	return 0;
}

static int
optional_run(aoe_kctx *k)
{
	aoe_tensor *x = opt_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);

	if (x == NULL) {
		y->present = 0;
		aoe_seq_clear(y->seq);
		return 0;
	}
	return aoe_value_copy(y, x);
}

/*
 * OptionalHasElement.
 */

static int
has_infer(aoe_graph *g, aoe_node *n)
{
	if (n->nin > 1)
		return aoe_err(AOE_EDATA, "%s '%s': %d inputs, expected at "
		    "most one", n->op_type, n->name, n->nin);
	if (n->nout < 1 || aoe_out(g, n, 0) == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': no output", n->op_type,
		    n->name);
	return aoe_set_output(g, n, 0, AOE_BOOL, 0, NULL);
}

static int
has_run(aoe_kctx *k)
{
	const aoe_tensor *x = opt_in(k->g, k->n, 0);

	*(uint8_t *)aoe_out(k->g, k->n, 0)->data = x != NULL &&
	    (!x->optional || x->present);
	return 0;
}

/*
 * OptionalGetElement.
 */

static int
get_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *y = aoe_out(g, n, 0);
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	aoe_value_like(y, x);
	y->optional = 0;
	return 0;
}

static int
get_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	char msg[1024];
	int rc;

	if (x->optional && !x->present)
		return aoe_err(AOE_EDATA, "%s '%s': optional '%s' is empty",
		    k->n->op_type, k->n->name, x->name);
	if ((rc = aoe_value_copy(y, x)) < 0) {
		snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
		return aoe_err(-rc, "%s '%s': %s", k->n->op_type, k->n->name,
		    msg);
	}
	return 0;
}

const aoe_op aoe_ops_seq[] = {
	{ "SequenceConstruct", construct_infer, construct_run, NULL, NULL },
	{ "SequenceEmpty", empty_infer, empty_run, NULL, NULL },
	{ "SequenceInsert", insert_infer, insert_run, NULL, NULL },
	{ "SequenceAt", at_infer, at_run, NULL, NULL },
	{ "SequenceErase", erase_infer, erase_run, NULL, NULL },
	{ "SequenceLength", length_infer, length_run, NULL, NULL },
	{ "SplitToSequence", split_infer, split_run, NULL, NULL },
	{ "ConcatFromSequence", concatseq_infer, concatseq_run, NULL,
	    NULL },
	{ "Optional", optional_infer, optional_run, NULL, NULL },
	{ "OptionalHasElement", has_infer, has_run, NULL, NULL },
	{ "OptionalGetElement", get_infer, get_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

int
aoe_op_seq(const aoe_op *op)
{
	const aoe_op *o;

	for (o = aoe_ops_seq; o->op_type != NULL; o++)
		if (o == op)
			return 1;
	return 0;
}

int
aoe_op_takes_values(const aoe_op *op)
{
	static const char *const others[] = { "Identity", "If", "Loop",
	    "Scan", "SequenceMap" };

	return aoe_op_seq(op) || aoe_str_in(op->op_type, others, sizeof(others) /
	    sizeof(others[0]));
}
