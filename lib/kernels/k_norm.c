/*
 * k_norm.c - normalisation and reduction kernels: BatchNormalization,
 * MeanVarianceNormalization, LayerNormalization, InstanceNormalization,
 * LRN, Softmax, LogSoftmax, Hardmax, ArgMax, ArgMin and the Reduce family (Mean, Sum,
 * Max, Min, Prod, SumSquare, L1, L2, LogSum, LogSumExp).
 *
 * Every op views its input as [outer][n][inner]: the dimension (or the
 * collapsed run of dimensions) it normalises or reduces, between the
 * dimensions before and after it.  With inner == 1 a row is contiguous
 * and the loops run along it; otherwise they run along inner, a tile of
 * columns at a time, so both cases stream through memory with unit
 * stride.
 *
 * Knobs (the search space beside the code):
 *
 *   par   elements per thread: a node touching n elements uses
 *         min(nthreads, n / par) threads, so small nodes stay on one
 *         thread.  Default 32768; searched over 4096..1048576 (powers of
 *         two).  0 forces one thread.
 *   tile  columns processed together when the normalised axis is not the
 *         innermost (inner > 1).  Default 256; searched over 32..1024
 *         (powers of two).
 *   vec   Softmax/LogSoftmax/ReduceLogSumExp: 1 uses the AVX2+FMA
 *         polynomial exp, 0 the C library's expf.  Default 1; {0, 1}.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define HAVE_AVX2 1
#endif

#include "aoe_kernels.h"
#include "kernel.h"

#define DEF_PAR 32768
#define DEF_TILE 256
#define MAX_TILE 1024
#define DEF_VEC 1

static void
norm_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "par", DEF_PAR);
	if (strncmp(n->op_type, "Reduce", 6) == 0 ||
	    strcmp(n->op_type, "Softmax") == 0 ||
	    strcmp(n->op_type, "LogSoftmax") == 0)
		aoe_sched_set(s, "tile", DEF_TILE);
	if (strcmp(n->op_type, "Softmax") == 0 ||
	    strcmp(n->op_type, "LogSoftmax") == 0)
		aoe_sched_set(s, "vec", DEF_VEC);
}

/*
 * exp over a float array, vectorised (the same polynomial as k_elem.c's:
 * Cephes expf, about 1 ulp, flushing results below FLT_MIN to 0).
 */
#ifdef HAVE_AVX2
#define V1(x) _mm256_set1_ps(x)

#endif

/* o[i] = exp(x[i] - m); returns the sum of the o[i]. */
static float
exp_sub_sum(float *o, const float *x, int64_t n, float m, int vec)
{
	int64_t i = 0;
	float s = 0.0f;

#ifdef HAVE_AVX2
	if (vec) {
		__m256 vm = V1(m), acc = _mm256_setzero_ps();
		float tb[8];

		for (; i + 8 <= n; i += 8) {
			__m256 e = v_exp(_mm256_sub_ps(_mm256_loadu_ps(x + i),
			    vm));

			_mm256_storeu_ps(o + i, e);
			acc = _mm256_add_ps(acc, e);
		}
		_mm256_storeu_ps(tb, acc);
		s = ((tb[0] + tb[1]) + (tb[2] + tb[3])) +
		    ((tb[4] + tb[5]) + (tb[6] + tb[7]));
		if (i < n) {
			int64_t j;

			for (j = 0; j < 8; j++)
				tb[j] = i + j < n ? x[i + j] - m : -INFINITY;
			_mm256_storeu_ps(tb, v_exp(_mm256_loadu_ps(tb)));
			for (j = 0; i + j < n; j++) {
				o[i + j] = tb[j];
				s += tb[j];
			}
		}
		return s;
	}
#endif
	for (; i < n; i++) {
		o[i] = expf(x[i] - m);
		s += o[i];
	}
	return s;
}

/* exp in place over n elements. */
static void
exp_inplace(float *o, int64_t n, int vec)
{
	int64_t i = 0;

#ifdef HAVE_AVX2
	if (vec) {
		float tb[8];

		for (; i + 8 <= n; i += 8)
			_mm256_storeu_ps(o + i, v_exp(_mm256_loadu_ps(o + i)));
		if (i < n) {
			int64_t j;

			for (j = 0; j < 8; j++)
				tb[j] = i + j < n ? o[i + j] : 0.0f;
			_mm256_storeu_ps(tb, v_exp(_mm256_loadu_ps(tb)));
			for (j = 0; i + j < n; j++)
				o[i + j] = tb[j];
		}
		return;
	}
#endif
	for (; i < n; i++)
		o[i] = expf(o[i]);
}

static float
row_max(const float *x, int64_t n)
{
	float m[8];
	int64_t i;
	int j;

	if (n < 8) {
		float r = x[0];

		for (i = 1; i < n; i++)
			r = x[i] > r ? x[i] : r;
		return r;
	}
	for (j = 0; j < 8; j++)
		m[j] = x[j];
	for (i = 8; i + 8 <= n; i += 8)
		for (j = 0; j < 8; j++)
			m[j] = x[i + j] > m[j] ? x[i + j] : m[j];
	for (; i < n; i++)
		m[0] = x[i] > m[0] ? x[i] : m[0];
	for (j = 1; j < 8; j++)
		m[0] = m[j] > m[0] ? m[j] : m[0];
	return m[0];
}

static float
row_sum(const float *x, int64_t n)
{
	float s[16] = { 0 };
	int64_t i;
	int j;

	for (i = 0; i + 16 <= n; i += 16)
		for (j = 0; j < 16; j++)
			s[j] += x[i + j];
	for (; i < n; i++)
		s[0] += x[i];
	for (j = 1; j < 16; j++)
		s[0] += s[j];
	return s[0];
}

/*
 * BatchNormalization, inference mode: y = x * a[c] + b[c] with
 * a = scale / sqrt(var + epsilon) and b = B - mean * a.  With
 * training_mode=1 the mean and (population) variance are the batch's,
 * over every axis but the channels', and the optional outputs 1 and 2
 * are the running statistics, input_mean * momentum + batch_mean *
 * (1 - momentum) and the same for the variance.
 */
/* The batch's mean and variance of each channel, in double. */
static void
bn_stats(const float *x, int64_t nb, int64_t c, int64_t hw, int64_t ch,
    double *mean, double *var)
{
	double s = 0, q = 0, d;
	int64_t i, j;

	for (i = 0; i < nb; i++)
		for (j = 0; j < hw; j++)
			s += x[(i * c + ch) * hw + j];
	*mean = s / (double)(nb * hw);
	for (i = 0; i < nb; i++)
		for (j = 0; j < hw; j++) {
			d = x[(i * c + ch) * hw + j] - *mean;
			q += d * d;
		}
	*var = q / (double)(nb * hw);
}

static int
bn_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *p;
	int64_t c;
	int rc, i, train;

	if ((rc = aoe_need_inputs(g, n, 5, 5)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	train = aoe_attr_int(n, "training_mode", 0) != 0;
	if (aoe_attr_find(n, "spatial") != NULL &&
	    aoe_attr_int(n, "spatial", 1) != 1)
		return aoe_err(AOE_EUNSUP, "%s '%s': spatial=0 not supported",
		    n->op_type, n->name);
	for (i = 1; i < n->nout; i++)
		if (opt_out(g, n, i) != NULL && (!train || i > 2))
			return aoe_err(AOE_EUNSUP, "%s '%s': output %d (a "
			    "training-mode statistic) not supported%s",
			    n->op_type, n->name, i, train ? "" :
			    " without training_mode=1");
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (x->ndim < 2)
		return aoe_err(AOE_EDATA, "%s '%s': input has rank %d, at "
		    "least 2 expected", n->op_type, n->name, x->ndim);
	c = x->dims[1];
	for (i = 1; i < 5; i++) {
		p = aoe_in(g, n, i);
		if (p->dtype != AOE_F32)
			return aoe_err(AOE_EUNSUP, "%s '%s': %s parameter '%s' "
			    "not supported (float32 only)", n->op_type,
			    n->name, aoe_dtype_name(p->dtype), p->name);
		if (aoe_tensor_numel(p) != c)
			return aoe_err(AOE_EDATA, "%s '%s': parameter '%s' has "
			    "%lld values, expected %lld", n->op_type, n->name,
			    p->name, (long long)aoe_tensor_numel(p),
			    (long long)c);
	}
	n->scratch = (size_t)c * 2 * sizeof(float);
	if ((rc = aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims)) < 0)
		return rc;
	for (i = 1; i <= 2 && train; i++)
		if (opt_out(g, n, i) != NULL &&
		    (rc = aoe_set_output(g, n, i, AOE_F32, 1, &c)) < 0)
			return rc;
	return 0;
}

struct bn_ctx {
	const float *xs, *a, *b;
	float *ys;
	int64_t c, hw, n, nch;
};

static void
bn_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct bn_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->n, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->n, p->nch, chunk + 1), hw = p->hw;

	for (; t < end; t++) {
		const float *xp = p->xs + t * hw;
		float *yp = p->ys + t * hw;
		float av = p->a[t % p->c], bv = p->b[t % p->c];
		int64_t j;

		for (j = 0; j < hw; j++)
			yp[j] = xp[j] * av + bv;
	}
}

static int
bn_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	const float *sc = aoe_in(k->g, n, 1)->data;
	const float *bi = aoe_in(k->g, n, 2)->data;
	const float *mu = aoe_in(k->g, n, 3)->data;
	const float *va = aoe_in(k->g, n, 4)->data;
	float eps = aoe_attr_float(n, "epsilon", 1e-5f);
	float *a = k->scratch, *b;
	int64_t c = x->dims[1], nb = x->dims[0], hw = prod(x->dims, 2, x->ndim);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR), i;
	struct bn_ctx p;
	int nt;

	if (a == NULL)
		return aoe_err(AOE_EINTERNAL, "%s '%s': no workspace",
		    n->op_type, n->name);
	b = a + c;
	for (i = 0; i < c; i++) {
		if (aoe_attr_int(n, "training_mode", 0) != 0) {
			double m, v, mom = aoe_attr_float(n, "momentum", 0.9f);
			aoe_tensor *rm = opt_out(k->g, n, 1);
			aoe_tensor *rv = opt_out(k->g, n, 2);

			bn_stats(x->data, nb, c, hw, i, &m, &v);
			if (rm != NULL)
				((float *)rm->data)[i] = (float)(mu[i] * mom +
				    m * (1 - mom));
			if (rv != NULL)
				((float *)rv->data)[i] = (float)(va[i] * mom +
				    v * (1 - mom));
			a[i] = (float)(sc[i] / sqrt(v + eps));
			b[i] = (float)(bi[i] - m * a[i]);
			continue;
		}
		a[i] = sc[i] / sqrtf(va[i] + eps);
		b[i] = bi[i] - mu[i] * a[i];
	}
	nt = nthreads_for(nb * c * hw, grain, k->nthreads);
	p.xs = x->data;
	p.ys = y->data;
	p.a = a;
	p.b = b;
	p.c = c;
	p.hw = hw;
	p.n = nb * c;
	p.nch = aoe_nchunks(p.n, nt);
	aoe_parallel(nt, p.nch, bn_chunk, &p);
	return 0;
}

/*
 * MeanVarianceNormalization: y = (x - mean) / (sqrt(var) + 1e-9) with
 * the mean and the population variance over axes (default 0, 2, 3), as
 * the operator's function body computes them; float32.  The groups are
 * the coordinates off the axes; their sums go to the workspace, in
 * double.
 */
static int
mvn_axes(const aoe_node *n, int r, int *on)
{
	static const int64_t def[] = { 0, 2, 3 };
	const int64_t *ax;
	int na, i, a;

	if ((ax = aoe_attr_ints(n, "axes", &na)) == NULL) {
		ax = def;
		na = 3;
	}
	memset(on, 0, AOE_MAXDIM * sizeof(int));
	for (i = 0; i < na; i++) {
		if ((a = aoe_axis(ax[i], r)) < 0)
			return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out "
			    "of range for rank %d", n->op_type, n->name,
			    (long long)ax[i], r);
		on[a] = 1;
	}
	return 0;
}

/* The group of each element, odometer over x's dims (gs: its strides). */
static int64_t
mvn_groups(const aoe_tensor *x, const int *on, int64_t *gs)
{
	int64_t ng = 1;
	int d;

	for (d = x->ndim - 1; d >= 0; d--) {
		gs[d] = on[d] ? 0 : ng;
		if (!on[d])
			ng *= x->dims[d];
	}
	return ng;
}

static int
mvn_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t gs[AOE_MAXDIM];
	int on[AOE_MAXDIM], rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if ((rc = mvn_axes(n, x->ndim, on)) < 0)
		return rc;
	n->scratch = (size_t)mvn_groups(x, on, gs) * 2 * sizeof(double);
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

static int
mvn_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	const float *xs = x->data;
	float *ys = y->data;
	int64_t gs[AOE_MAXDIM], c[AOE_MAXDIM], ng, i, gi, cnt, per;
	double *s = k->scratch, *q, m;
	int on[AOE_MAXDIM], d, rc, pass;

	if ((rc = mvn_axes(k->n, x->ndim, on)) < 0)
		return rc;
	ng = mvn_groups(x, on, gs);
	cnt = aoe_tensor_numel(x);
	if (cnt == 0)
		return 0;
	per = cnt / ng;
	q = s + ng;
	memset(s, 0, (size_t)ng * 2 * sizeof(double));
	for (pass = 0; pass < 2; pass++) {
		memset(c, 0, sizeof(c));
		for (gi = 0, i = 0; i < cnt; i++) {
			if (pass == 0) {
				s[gi] += xs[i];
				q[gi] += (double)xs[i] * xs[i];
			} else
				ys[i] = (float)((xs[i] - s[gi]) / q[gi]);
			for (d = x->ndim - 1; d >= 0; d--) {
				gi += gs[d];
				if (++c[d] < x->dims[d])
					break;
				gi -= gs[d] * c[d];
				c[d] = 0;
			}
		}
		for (i = 0; pass == 0 && i < ng; i++) {
			m = s[i] / (double)per;
			s[i] = m;
			q[i] = q[i] / (double)per - m * m;
			q[i] = sqrt(q[i] > 0 ? q[i] : 0) + 1e-9;
		}
	}
	return 0;
}

/*
 * LayerNormalization (opset 17): normalise over the dimensions from axis
 * on; Scale and B cover those dimensions (or are scalars).  Mean and
 * InvStdDev are written when the node asks for them.
 */
static int
ln_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *p;
	int64_t dims[AOE_MAXDIM], d;
	int rc, axis, i, j;

	if ((rc = aoe_need_inputs(g, n, 2, 3)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (aoe_attr_int(n, "stash_type", 1) != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': stash_type %lld not "
		    "supported (float32 only)", n->op_type, n->name,
		    (long long)aoe_attr_int(n, "stash_type", 1));
	axis = aoe_axis(aoe_attr_int(n, "axis", -1), x->ndim);
	if (axis < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld out of range for "
		    "rank %d", n->op_type, n->name,
		    (long long)aoe_attr_int(n, "axis", -1), x->ndim);
	d = prod(x->dims, axis, x->ndim);
	for (i = 1; i < 3; i++) {
		if ((p = opt_in(g, n, i)) == NULL)
			continue;
		if (p->dtype != AOE_F32)
			return aoe_err(AOE_EUNSUP, "%s '%s': %s %s not "
			    "supported (float32 only)", n->op_type, n->name,
			    aoe_dtype_name(p->dtype), i == 1 ? "scale" : "bias");
		if (aoe_tensor_numel(p) == 1)
			continue;
		/* Its shape must be the normalised one, up to leading 1s. */
		if (aoe_tensor_numel(p) != d || p->ndim > x->ndim)
			goto badshape;
		for (j = 0; j < p->ndim; j++) {
			int xd = x->ndim - p->ndim + j;

			if (xd < axis ? p->dims[j] != 1 :
			    p->dims[j] != x->dims[xd])
				goto badshape;
		}
		continue;
badshape:
		return aoe_err(AOE_EUNSUP, "%s '%s': %s of %lld values does "
		    "not match the normalised shape (%lld values); other "
		    "broadcasts not supported", n->op_type, n->name,
		    i == 1 ? "scale" : "bias", (long long)aoe_tensor_numel(p),
		    (long long)d);
	}
	if ((rc = aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims)) < 0)
		return rc;
	for (i = 0; i < x->ndim; i++)
		dims[i] = i < axis ? x->dims[i] : 1;
	for (i = 1; i < n->nout && i < 3; i++)
		if (opt_out(g, n, i) != NULL &&
		    (rc = aoe_set_output(g, n, i, AOE_F32, x->ndim, dims)) < 0)
			return rc;
	return 0;
}

struct ln_ctx {
	const float *xs, *sc, *bi;
	float *ys, *om, *oi;
	int sc1, bi1;
	float eps;
	int64_t rows, d, nch;
};

static void
ln_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct ln_ctx *p = ctx;
	const float *sc = p->sc, *bi = p->bi;
	int64_t r = aoe_chunk_lo(p->rows, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->rows, p->nch, chunk + 1), d = p->d;
	int sc1 = p->sc1, bi1 = p->bi1;

	for (; r < end; r++) {
		const float *xp = p->xs + r * d;
		float *yp = p->ys + r * d;
		float mean, var, inv, v[16] = { 0 };
		int64_t j;
		int q;

		mean = row_sum(xp, d) / (float)d;
		for (j = 0; j + 16 <= d; j += 16)
			for (q = 0; q < 16; q++)
				v[q] += (xp[j + q] - mean) * (xp[j + q] - mean);
		for (; j < d; j++)
			v[0] += (xp[j] - mean) * (xp[j] - mean);
		for (q = 1; q < 16; q++)
			v[0] += v[q];
		var = v[0] / (float)d;
		inv = 1.0f / sqrtf(var + p->eps);
		if (p->om)
			p->om[r] = mean;
		if (p->oi)
			p->oi[r] = inv;
		if (!sc1 && bi && !bi1)
			for (j = 0; j < d; j++)
				yp[j] = (xp[j] - mean) * inv * sc[j] + bi[j];
		else if (!sc1 && !bi)
			for (j = 0; j < d; j++)
				yp[j] = (xp[j] - mean) * inv * sc[j];
		else
			for (j = 0; j < d; j++)
				yp[j] = (xp[j] - mean) * inv *
				    sc[sc1 ? 0 : j] + (bi ? bi[bi1 ? 0 : j] : 0.0f);
	}
}

static int
ln_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	aoe_tensor *ts = aoe_in(k->g, n, 1), *tb = opt_in(k->g, n, 2);
	aoe_tensor *tm = opt_out(k->g, n, 1), *ti = opt_out(k->g, n, 2);
	const float *sc = ts->data, *bi = tb ? tb->data : NULL;
	float *om = tm ? tm->data : NULL, *oi = ti ? ti->data : NULL;
	int sc1 = aoe_tensor_numel(ts) == 1, bi1 = tb &&
	    aoe_tensor_numel(tb) == 1;
	float eps = aoe_attr_float(n, "epsilon", 1e-5f);
	int axis = aoe_axis(aoe_attr_int(n, "axis", -1), x->ndim);
	int64_t rows = prod(x->dims, 0, axis), d = prod(x->dims, axis, x->ndim);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int nt = nthreads_for(rows * d, grain, k->nthreads);
	struct ln_ctx p;

	if (d == 0)
		return 0;
	p.xs = x->data;
	p.ys = y->data;
	p.sc = sc;
	p.bi = bi;
	p.om = om;
	p.oi = oi;
	p.sc1 = sc1;
	p.bi1 = bi1;
	p.eps = eps;
	p.rows = rows;
	p.d = d;
	p.nch = aoe_nchunks(rows, nt);
	aoe_parallel(nt, p.nch, ln_chunk, &p);
	return 0;
}

/*
 * Softmax and LogSoftmax.  Before opset 13 the input is coerced to 2-D at
 * axis (default 1) and each row is normalised; from 13 the op runs along
 * axis (default -1).  Both subtract the maximum first.
 */
static int
sm_axis(const aoe_graph *g, const aoe_node *n, const aoe_tensor *x,
    int *axis)
{
	int64_t a = aoe_attr_int(n, "axis", g->opset < 13 ? 1 : -1);

	if (x->ndim == 0 && (a == 0 || a == -1)) {
		*axis = 0;
		return 0;
	}
	*axis = aoe_axis(a, x->ndim);
	if (*axis < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld out of range for "
		    "rank %d", n->op_type, n->name, (long long)a, x->ndim);
	return 0;
}

static int
sm_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc, axis;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if ((rc = sm_axis(g, n, x, &axis)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

/* One contiguous row. */
static void
sm_row(float *y, const float *x, int64_t d, int logsm, int vec)
{
	float m = row_max(x, d), s;
	int64_t j;

	s = exp_sub_sum(y, x, d, m, vec);
	if (logsm) {
		float ls = m + logf(s);

		for (j = 0; j < d; j++)
			y[j] = x[j] - ls;
	} else {
		float inv = 1.0f / s;

		for (j = 0; j < d; j++)
			y[j] *= inv;
	}
}

/* d rows of stride `inner`, over w columns starting at x and y. */
static void
sm_cols(float *y, const float *x, int64_t d, int64_t inner, int64_t w,
    int logsm, int vec)
{
	float m[MAX_TILE], s[MAX_TILE];
	int64_t r, j;

	memcpy(m, x, (size_t)w * sizeof(float));
	for (r = 1; r < d; r++) {
		const float *xr = x + r * inner;

		for (j = 0; j < w; j++)
			m[j] = xr[j] > m[j] ? xr[j] : m[j];
	}
	for (j = 0; j < w; j++)
		s[j] = 0.0f;
	for (r = 0; r < d; r++) {
		const float *xr = x + r * inner;
		float *yr = y + r * inner;

		for (j = 0; j < w; j++)
			yr[j] = xr[j] - m[j];
		exp_inplace(yr, w, vec);
		for (j = 0; j < w; j++)
			s[j] += yr[j];
	}
	if (logsm) {
		for (j = 0; j < w; j++)
			s[j] = m[j] + logf(s[j]);
		for (r = 0; r < d; r++) {
			const float *xr = x + r * inner;
			float *yr = y + r * inner;

			for (j = 0; j < w; j++)
				yr[j] = xr[j] - s[j];
		}
	} else {
		for (j = 0; j < w; j++)
			s[j] = 1.0f / s[j];
		for (r = 0; r < d; r++) {
			float *yr = y + r * inner;

			for (j = 0; j < w; j++)
				yr[j] *= s[j];
		}
	}
}

struct sm_ctx {
	const float *xs;
	float *ys;
	int64_t d, inner, tile, ntile, n, nch;
	int logsm, vec;
};

/* Rows of a Softmax whose axis is innermost. */
static void
sm_rows_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct sm_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->n, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->n, p->nch, chunk + 1), d = p->d;

	for (; t < end; t++)
		sm_row(p->ys + t * d, p->xs + t * d, d, p->logsm, p->vec);
}

/* Tiles of columns of a Softmax whose axis is not innermost. */
static void
sm_cols_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct sm_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->n, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->n, p->nch, chunk + 1);
	int64_t ntile = p->ntile, tile = p->tile, inner = p->inner;

	for (; t < end; t++) {
		int64_t o = t / ntile, c0 = (t % ntile) * tile;
		int64_t w = inner - c0 < tile ? inner - c0 : tile;
		int64_t base = o * p->d * inner + c0;

		sm_cols(p->ys + base, p->xs + base, p->d, inner, w, p->logsm,
		    p->vec);
	}
}

static int
sm_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int logsm = strcmp(n->op_type, "LogSoftmax") == 0, axis;
	int vec = (int)aoe_sched_get(k->sched, "vec", DEF_VEC);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int64_t tile = aoe_sched_get(k->sched, "tile", DEF_TILE);
	int64_t outer, d, inner, total;
	struct sm_ctx p;
	int nt;

	sm_axis(k->g, n, x, &axis);
	if (x->ndim == 0) {
		outer = d = inner = 1;
	} else if (k->g->opset < 13) {
		outer = prod(x->dims, 0, axis);
		d = prod(x->dims, axis, x->ndim);
		inner = 1;
	} else {
		outer = prod(x->dims, 0, axis);
		d = x->dims[axis];
		inner = prod(x->dims, axis + 1, x->ndim);
	}
	total = outer * d * inner;
	if (total == 0)
		return 0;
	nt = nthreads_for(total, grain, k->nthreads);
	p.xs = x->data;
	p.ys = y->data;
	p.d = d;
	p.inner = inner;
	p.logsm = logsm;
	p.vec = vec;
	if (inner == 1) {
		p.n = outer;
		p.nch = aoe_nchunks(p.n, nt);
		aoe_parallel(nt, p.nch, sm_rows_chunk, &p);
		return 0;
	}
	if (tile < 8)
		tile = 8;
	if (tile > MAX_TILE)
		tile = MAX_TILE;
	p.tile = tile;
	p.ntile = (inner + tile - 1) / tile;
	p.n = outer * p.ntile;
	p.nch = aoe_nchunks(p.n, nt);
	aoe_parallel(nt, p.nch, sm_cols_chunk, &p);
	return 0;
}

/*
 * The Reduce family.
 */
enum { R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_SUMSQ, R_L1, R_L2, R_LOGSUM,
	R_LSE };

static const struct {
	const char *op;
	int kind;
	int axes_input_opset;	/* the opset from which axes is an input */
} rops[] = {
	{ "ReduceSum", R_SUM, 13 },
	{ "ReduceMean", R_MEAN, 18 },
	{ "ReduceMax", R_MAX, 18 },
	{ "ReduceMin", R_MIN, 18 },
	{ "ReduceProd", R_PROD, 18 },
	{ "ReduceSumSquare", R_SUMSQ, 18 },
	{ "ReduceL1", R_L1, 18 },
	{ "ReduceL2", R_L2, 18 },
	{ "ReduceLogSum", R_LOGSUM, 18 },
	{ "ReduceLogSumExp", R_LSE, 18 },
};

static int
rop_kind(const char *op)
{
	size_t i;

	for (i = 0; i < sizeof(rops) / sizeof(rops[0]); i++)
		if (strcmp(rops[i].op, op) == 0)
			return rops[i].kind;
	return -1;
}

/*
 * The reduction's geometry: red[d] is 1 for each reduced dimension, or
 * noop when the node copies its input.
 */
struct rgeo {
	int noop;
	int red[AOE_MAXDIM];
};

static int
red_geo(const aoe_graph *g, const aoe_node *n, const aoe_tensor *x,
    struct rgeo *r)
{
	int64_t axes[AOE_MAXDIM * 2];
	const int64_t *aa;
	int na = 0, i, a, have = 0;

	memset(r, 0, sizeof(*r));
	if (opt_in(g, n, 1) != NULL) {
		if ((na = aoe_const_ints(g, n, 1, axes, AOE_MAXDIM * 2)) < 0)
			return na;
		have = 1;
	} else if ((aa = aoe_attr_ints(n, "axes", &na)) != NULL) {
		if (na > AOE_MAXDIM * 2)
			return aoe_err(AOE_EDATA, "%s '%s': %d axes for rank %d",
			    n->op_type, n->name, na, x->ndim);
		memcpy(axes, aa, (size_t)na * sizeof(int64_t));
		have = 1;
	}
	if (!have || na == 0) {
		/* No axes: all of them, or none with noop_with_empty_axes. */
		if (aoe_attr_int(n, "noop_with_empty_axes", 0) != 0)
			r->noop = 1;
		else
			for (i = 0; i < x->ndim; i++)
				r->red[i] = 1;
		return 0;
	}
	for (i = 0; i < na; i++) {
		if ((a = aoe_axis(axes[i], x->ndim)) < 0)
			return aoe_err(AOE_EDATA, "%s '%s': axis %lld out of "
			    "range for rank %d", n->op_type, n->name,
			    (long long)axes[i], x->ndim);
		r->red[a] = 1;
	}
	return 0;
}

static int
red_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	struct rgeo r;
	int64_t dims[AOE_MAXDIM];
	int rc, kind, i, nd, keep;

	if ((rc = aoe_need_inputs(g, n, 1, 2)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	kind = rop_kind(n->op_type);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64 &&
	    !((x->dtype == AOE_I64 || x->dtype == AOE_I32) &&
	    (kind == R_SUM || kind == R_MEAN || kind == R_MAX ||
	    kind == R_MIN || kind == R_PROD)))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	if ((rc = red_geo(g, n, x, &r)) < 0)
		return rc;
	keep = aoe_attr_int(n, "keepdims", 1) != 0;
	if (r.noop)
		return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
	nd = 0;
	for (i = 0; i < x->ndim; i++) {
		if (!r.red[i])
			dims[nd++] = x->dims[i];
		else if (keep)
			dims[nd++] = 1;
	}
	return aoe_set_output(g, n, 0, x->dtype, nd, dims);
}

/* Finish a float reduction over cnt elements. */
static inline double
red_post(int kind, double acc, int64_t cnt)
{
	switch (kind) {
	case R_MEAN:
		return acc / (double)cnt;
	case R_L2:
		return sqrt(acc);
	case R_LOGSUM:
		return log(acc);
	}
	return acc;
}

/*
 * The general path: every output element walks its reduced elements with
 * an odometer.  Used for any mix of reduced dimensions, the non-float32
 * types and LogSumExp.
 */
struct red_ctx {
	const aoe_tensor *x;
	void *yd;
	int kind, dt, nr, nk;
	int64_t rdims[AOE_MAXDIM], rst[AOE_MAXDIM];
	int64_t kdims[AOE_MAXDIM], kst[AOE_MAXDIM];
	int64_t rcount, nout, nch;
};

static void
red_general_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct red_ctx *p = ctx;
	const aoe_tensor *x = p->x;
	void *yd = p->yd;
	const int64_t *rdims = p->rdims, *rst = p->rst;
	const int64_t *kdims = p->kdims, *kst = p->kst;
	int64_t rcount = p->rcount, o;
	int64_t lo = aoe_chunk_lo(p->nout, p->nch, chunk);
	int64_t hi = aoe_chunk_lo(p->nout, p->nch, chunk + 1);
	int kind = p->kind, dt = p->dt, nr = p->nr, nk = p->nk;

	for (o = lo; o < hi; o++) {
		int64_t base = 0, rem = o, idx[AOE_MAXDIM], e, off;
		double acc, m = -INFINITY;
		int64_t iacc;
		int j, pass;

		for (j = nk - 1; j >= 0; j--) {
			base += (rem % kdims[j]) * kst[j];
			rem /= kdims[j];
		}
		acc = kind == R_PROD ? 1.0 : kind == R_MAX ? -INFINITY :
		    kind == R_MIN ? INFINITY : 0.0;
		iacc = kind == R_PROD ? 1 : kind == R_MAX ? INT64_MIN :
		    kind == R_MIN ? INT64_MAX : 0;
		for (pass = kind == R_LSE ? 0 : 1; pass < 2; pass++) {
			for (j = 0; j < nr; j++)
				idx[j] = 0;
			off = base;
			for (e = 0; e < rcount; e++) {
				double v = 0.0;
				int64_t iv = 0;

				switch (dt) {
				case AOE_F32:
					v = ((const float *)x->data)[off];
					break;
				case AOE_F64:
					v = ((const double *)x->data)[off];
					break;
				case AOE_I32:
					iv = ((const int32_t *)x->data)[off];
					break;
				default:
					iv = ((const int64_t *)x->data)[off];
					break;
				}
				if (dt == AOE_I32 || dt == AOE_I64) {
					switch (kind) {
					case R_SUM: case R_MEAN:
						iacc = (int64_t)((uint64_t)iacc +
						    (uint64_t)iv);
						break;
					case R_PROD:
						iacc = (int64_t)((uint64_t)iacc *
						    (uint64_t)iv);
						break;
					case R_MAX:
						iacc = iv > iacc ? iv : iacc;
						break;
					case R_MIN:
						iacc = iv < iacc ? iv : iacc;
						break;
					}
				} else if (pass == 0) {
					m = v > m ? v : m;
				} else {
					switch (kind) {
					case R_SUM: case R_MEAN: case R_LOGSUM:
						acc += v;
						break;
					case R_PROD:
						acc *= v;
						break;
					case R_MAX:
						acc = v > acc || v != v ? v : acc;
						break;
					case R_MIN:
						acc = v < acc || v != v ? v : acc;
						break;
					case R_SUMSQ: case R_L2:
						acc += v * v;
						break;
					case R_L1:
						acc += fabs(v);
						break;
					case R_LSE:
						acc += exp(v - m);
						break;
					}
				}
				for (j = nr - 1; j >= 0; j--) {
					off += rst[j];
					if (++idx[j] < rdims[j])
						break;
					off -= idx[j] * rst[j];
					idx[j] = 0;
				}
			}
		}
		if (kind == R_LSE)
			acc = isinf(m) ? m : m + log(acc);
		else
			acc = red_post(kind, acc, rcount);
		switch (dt) {
		case AOE_F32:
			((float *)yd)[o] = (float)acc;
			break;
		case AOE_F64:
			((double *)yd)[o] = acc;
			break;
		case AOE_I32:
			if (kind == R_MEAN)
				iacc = rcount ? iacc / rcount : 0;
			((int32_t *)yd)[o] = (int32_t)iacc;
			break;
		default:
			if (kind == R_MEAN)
				iacc = rcount ? iacc / rcount : 0;
			((int64_t *)yd)[o] = iacc;
			break;
		}
	}
}

static void
red_general(aoe_kctx *k, const aoe_tensor *x, void *yd, const struct rgeo *r,
    int kind)
{
	int64_t st[AOE_MAXDIM], nout = 1, rcount = 1;
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int nd = x->ndim, nr = 0, nk = 0, i, nt;
	struct red_ctx p;

	st[nd > 0 ? nd - 1 : 0] = 1;
	for (i = nd - 2; i >= 0; i--)
		st[i] = st[i + 1] * x->dims[i + 1];
	for (i = 0; i < nd; i++) {
		if (r->red[i]) {
			p.rdims[nr] = x->dims[i];
			p.rst[nr++] = st[i];
			rcount *= x->dims[i];
		} else {
			p.kdims[nk] = x->dims[i];
			p.kst[nk++] = st[i];
			nout *= x->dims[i];
		}
	}
	nt = nthreads_for(nout * rcount, grain, k->nthreads);
	p.x = x;
	p.yd = yd;
	p.kind = kind;
	p.dt = x->dtype;
	p.nr = nr;
	p.nk = nk;
	p.rcount = rcount;
	p.nout = nout;
	p.nch = aoe_nchunks(nout, nt);
	aoe_parallel(nt, p.nch, red_general_chunk, &p);
}

/* Reduce contiguous rows of length d: float32 sum-like, max, min, prod. */
static float
red_row(int kind, const float *x, int64_t d)
{
	float a[16];
	int64_t i;
	int j;

	switch (kind) {
	case R_MAX:
	case R_MIN:
		if (d == 0)
			return kind == R_MAX ? -INFINITY : INFINITY;
		for (j = 0; j < 16; j++)
			a[j] = x[0];
		for (i = 0; i + 16 <= d; i += 16)
			for (j = 0; j < 16; j++)
				a[j] = kind == R_MAX ?
				    (x[i + j] > a[j] ? x[i + j] : a[j]) :
				    (x[i + j] < a[j] ? x[i + j] : a[j]);
		for (; i < d; i++)
			a[0] = kind == R_MAX ? (x[i] > a[0] ? x[i] : a[0]) :
			    (x[i] < a[0] ? x[i] : a[0]);
		for (j = 1; j < 16; j++)
			a[0] = kind == R_MAX ? (a[j] > a[0] ? a[j] : a[0]) :
			    (a[j] < a[0] ? a[j] : a[0]);
		return a[0];
	case R_PROD:
		for (j = 0; j < 16; j++)
			a[j] = 1.0f;
		for (i = 0; i + 16 <= d; i += 16)
			for (j = 0; j < 16; j++)
				a[j] *= x[i + j];
		for (; i < d; i++)
			a[0] *= x[i];
		for (j = 1; j < 16; j++)
			a[0] *= a[j];
		return a[0];
	}
	for (j = 0; j < 16; j++)
		a[j] = 0.0f;
	if (kind == R_SUMSQ || kind == R_L2) {
		for (i = 0; i + 16 <= d; i += 16)
			for (j = 0; j < 16; j++)
				a[j] += x[i + j] * x[i + j];
		for (; i < d; i++)
			a[0] += x[i] * x[i];
	} else if (kind == R_L1) {
		for (i = 0; i + 16 <= d; i += 16)
			for (j = 0; j < 16; j++)
				a[j] += fabsf(x[i + j]);
		for (; i < d; i++)
			a[0] += fabsf(x[i]);
	} else {
		for (i = 0; i + 16 <= d; i += 16)
			for (j = 0; j < 16; j++)
				a[j] += x[i + j];
		for (; i < d; i++)
			a[0] += x[i];
	}
	for (j = 1; j < 16; j++)
		a[0] += a[j];
	return a[0];
}

/* Reduce d rows of stride `inner` over w columns into y[0..w). */
static void
red_cols(int kind, float *y, const float *x, int64_t d, int64_t inner,
    int64_t w)
{
	int64_t r, j;
	float init = kind == R_MAX ? -INFINITY : kind == R_MIN ? INFINITY :
	    kind == R_PROD ? 1.0f : 0.0f;

	for (j = 0; j < w; j++)
		y[j] = init;
	for (r = 0; r < d; r++) {
		const float *xr = x + r * inner;

		switch (kind) {
		case R_MAX:
			for (j = 0; j < w; j++)
				y[j] = xr[j] > y[j] ? xr[j] : y[j];
			break;
		case R_MIN:
			for (j = 0; j < w; j++)
				y[j] = xr[j] < y[j] ? xr[j] : y[j];
			break;
		case R_PROD:
			for (j = 0; j < w; j++)
				y[j] *= xr[j];
			break;
		case R_SUMSQ: case R_L2:
			for (j = 0; j < w; j++)
				y[j] += xr[j] * xr[j];
			break;
		case R_L1:
			for (j = 0; j < w; j++)
				y[j] += fabsf(xr[j]);
			break;
		default:
			for (j = 0; j < w; j++)
				y[j] += xr[j];
			break;
		}
	}
}

struct redf_ctx {
	const float *xs;
	float *ys;
	int kind;
	int64_t d, inner, tile, ntile, n, nch;
};

/* Float32 reduction of contiguous rows. */
static void
red_rows_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct redf_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->n, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->n, p->nch, chunk + 1), d = p->d;

	for (; t < end; t++)
		p->ys[t] = (float)red_post(p->kind, red_row(p->kind,
		    p->xs + t * d, d), d);
}

/* Float32 reduction of tiles of columns. */
static void
red_cols_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct redf_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->n, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->n, p->nch, chunk + 1);
	int64_t ntile = p->ntile, tile = p->tile, inner = p->inner, d = p->d;
	int kind = p->kind;

	for (; t < end; t++) {
		int64_t o = t / ntile, c0 = (t % ntile) * tile, j;
		int64_t w = inner - c0 < tile ? inner - c0 : tile;
		float *yp = p->ys + o * inner + c0;

		red_cols(kind, yp, p->xs + o * d * inner + c0, d, inner, w);
		if (kind == R_MEAN || kind == R_L2 || kind == R_LOGSUM)
			for (j = 0; j < w; j++)
				yp[j] = (float)red_post(kind, yp[j], d);
	}
}

static int
red_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int kind = rop_kind(n->op_type), i, first = -1, last = -1, groups = 0;
	int prev;
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int64_t tile = aoe_sched_get(k->sched, "tile", DEF_TILE);
	int64_t outer, d, inner;
	struct redf_ctx p;
	struct rgeo r;
	int rc, nt;

	if ((rc = red_geo(k->g, n, x, &r)) < 0)
		return rc;
	if (r.noop) {
		memcpy(y->data, x->data, aoe_tensor_nbytes(x));
		return 0;
	}
	/*
	 * The fast path needs the reduced dimensions of size > 1 to form one
	 * run (size-1 dimensions may sit anywhere).
	 */
	prev = 0;
	for (i = 0; i < x->ndim; i++) {
		if (x->dims[i] == 1)
			continue;
		if (r.red[i]) {
			if (!prev)
				groups++;
			if (first < 0)
				first = i;
			last = i;
		}
		prev = r.red[i];
	}
	if (x->dtype != AOE_F32 || kind == R_LSE || groups > 1 ||
	    aoe_tensor_numel(x) == 0) {
		red_general(k, x, y->data, &r, kind);
		return 0;
	}
	if (groups == 0) {
		/* Nothing of size > 1 is reduced: an element-wise finish. */
		first = last = 0;
		outer = 1;
		d = 1;
		inner = aoe_tensor_numel(x);
	} else {
		outer = prod(x->dims, 0, first);
		d = prod(x->dims, first, last + 1);
		inner = prod(x->dims, last + 1, x->ndim);
	}
	nt = nthreads_for(outer * d * inner, grain, k->nthreads);
	p.xs = x->data;
	p.ys = y->data;
	p.kind = kind;
	p.d = d;
	p.inner = inner;
	if (inner == 1) {
		p.n = outer;
		p.nch = aoe_nchunks(p.n, nt);
		aoe_parallel(nt, p.nch, red_rows_chunk, &p);
		return 0;
	}
	if (tile < 8)
		tile = 8;
	p.tile = tile;
	p.ntile = (inner + tile - 1) / tile;
	p.n = outer * p.ntile;
	p.nch = aoe_nchunks(p.n, nt);
	aoe_parallel(nt, p.nch, red_cols_chunk, &p);
	return 0;
}

/*
 * ArgMax and ArgMin (axis, keepdims, select_last_index): int64 indices
 * along one axis.  NaN is treated as the extreme, as numpy does.
 */
static int
arg_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t dims[AOE_MAXDIM];
	int rc, axis, i, nd = 0, keep;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32 && x->dtype != AOE_I64 && x->dtype != AOE_I32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	axis = aoe_axis(aoe_attr_int(n, "axis", 0), x->ndim);
	if (axis < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld out of range for "
		    "rank %d", n->op_type, n->name,
		    (long long)aoe_attr_int(n, "axis", 0), x->ndim);
	if (x->dims[axis] == 0)
		return aoe_err(AOE_EDATA, "%s '%s': the axis is empty",
		    n->op_type, n->name);
	keep = aoe_attr_int(n, "keepdims", 1) != 0;
	for (i = 0; i < x->ndim; i++)
		if (i != axis)
			dims[nd++] = x->dims[i];
		else if (keep)
			dims[nd++] = 1;
	return aoe_set_output(g, n, 0, AOE_I64, nd, dims);
}

static inline double
ldv(const aoe_tensor *x, int64_t i)
{
	switch (x->dtype) {
	case AOE_F32:
		return ((const float *)x->data)[i];
	case AOE_I32:
		return ((const int32_t *)x->data)[i];
	}
	return (double)((const int64_t *)x->data)[i];
}

static int
arg_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int axis = aoe_axis(aoe_attr_int(n, "axis", 0), x->ndim);
	int last = aoe_attr_int(n, "select_last_index", 0) != 0;
	int ismax = strcmp(n->op_type, "ArgMax") == 0;
	int64_t outer = prod(x->dims, 0, axis), d = x->dims[axis];
	int64_t inner = prod(x->dims, axis + 1, x->ndim), o;
	int64_t *ys = y->data;

	for (o = 0; o < outer * inner; o++) {
		int64_t b = (o / inner) * d * inner + o % inner, best = 0, j;
		double bv = ldv(x, b);

		for (j = 1; j < d && bv == bv; j++) {
			double v = ldv(x, b + j * inner);

			if (v != v || (ismax ? (last ? v >= bv : v > bv) :
			    (last ? v <= bv : v < bv))) {
				bv = v;
				best = j;
			}
		}
		ys[o] = best;
	}
	return 0;
}

/*
 * Hardmax: 1 at the first maximum along the axis, 0 elsewhere.  Before
 * opset 13 the input is coerced to 2-D at axis (default 1).
 */
static int
hardmax_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int64_t outer, d, inner, o, j;
	const float *xs = x->data;
	float *ys = y->data;
	int axis;

	sm_axis(k->g, n, x, &axis);
	if (x->ndim == 0) {
		ys[0] = 1.0f;
		return 0;
	}
	outer = prod(x->dims, 0, axis);
	if (k->g->opset < 13) {
		d = prod(x->dims, axis, x->ndim);
		inner = 1;
	} else {
		d = x->dims[axis];
		inner = prod(x->dims, axis + 1, x->ndim);
	}
	memset(ys, 0, aoe_tensor_nbytes(y));
	for (o = 0; o < outer * inner && d > 0; o++) {
		int64_t b = (o / inner) * d * inner + o % inner, best = 0;

		for (j = 1; j < d; j++)
			if (xs[b + j * inner] > xs[b + best * inner])
				best = j;
		ys[b + best * inner] = 1.0f;
	}
	return 0;
}

/*
 * InstanceNormalization: each (n, c) plane normalised by its own mean and
 * variance, then scaled and shifted per channel.
 */
static int
in_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *p;
	int rc, i;

	if ((rc = aoe_need_inputs(g, n, 3, 3)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (x->ndim < 3)
		return aoe_err(AOE_EDATA, "%s '%s': input has rank %d, at "
		    "least 3 expected", n->op_type, n->name, x->ndim);
	for (i = 1; i < 3; i++) {
		p = aoe_in(g, n, i);
		if (p->dtype != AOE_F32 || aoe_tensor_numel(p) != x->dims[1])
			return aoe_err(AOE_EDATA, "%s '%s': %s must be %lld "
			    "float32 values", n->op_type, n->name,
			    i == 1 ? "scale" : "B", (long long)x->dims[1]);
	}
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

struct in_ctx {
	const float *xs, *sc, *bi;
	float *ys;
	float eps;
	int64_t c, hw, planes, nch;
};

static void
in_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct in_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->planes, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->planes, p->nch, chunk + 1), hw = p->hw;

	for (; t < end; t++) {
		const float *xp = p->xs + t * hw;
		float *yp = p->ys + t * hw;
		float mean = row_sum(xp, hw) / (float)hw, a, b;
		double v = 0.0;
		int64_t j;

		for (j = 0; j < hw; j++)
			v += (double)(xp[j] - mean) * (xp[j] - mean);
		a = p->sc[t % p->c] / sqrtf((float)(v / (double)hw) + p->eps);
		b = p->bi[t % p->c] - mean * a;
		for (j = 0; j < hw; j++)
			yp[j] = xp[j] * a + b;
	}
}

static int
in_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	const float *sc = aoe_in(k->g, n, 1)->data;
	const float *bi = aoe_in(k->g, n, 2)->data;
	float eps = aoe_attr_float(n, "epsilon", 1e-5f);
	int64_t c = x->dims[1], planes = x->dims[0] * c;
	int64_t hw = prod(x->dims, 2, x->ndim);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int nt = nthreads_for(planes * hw, grain, k->nthreads);
	struct in_ctx p;

	if (hw == 0)
		return 0;
	p.xs = x->data;
	p.ys = y->data;
	p.sc = sc;
	p.bi = bi;
	p.eps = eps;
	p.c = c;
	p.hw = hw;
	p.planes = planes;
	p.nch = aoe_nchunks(planes, nt);
	aoe_parallel(nt, p.nch, in_chunk, &p);
	return 0;
}

/*
 * LRN across channels: y = x / (bias + alpha / size * sum of x^2 over
 * the channels [c - (size-1)/2, c + size/2])^beta.
 */
static int
lrn_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (x->ndim < 2)
		return aoe_err(AOE_EDATA, "%s '%s': input has rank %d, at "
		    "least 2 expected", n->op_type, n->name, x->ndim);
	if (aoe_attr_int(n, "size", 0) < 1)
		return aoe_err(AOE_EDATA, "%s '%s': size must be positive",
		    n->op_type, n->name);
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

struct lrn_ctx {
	const float *xs;
	float *ys;
	float alpha, beta, bias;
	int64_t size, c, hw, lo, hi, n, nch;
};

static void
lrn_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct lrn_ctx *p = ctx;
	int64_t t = aoe_chunk_lo(p->n, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->n, p->nch, chunk + 1);
	int64_t c = p->c, hw = p->hw;
	const float *xs = p->xs;

	for (; t < end; t++) {
		int64_t ch = t % c, b = t / c, c0, c1, j, q;
		float *yp = p->ys + t * hw;

		c0 = ch - p->lo < 0 ? 0 : ch - p->lo;
		c1 = ch + p->hi >= c ? c - 1 : ch + p->hi;
		for (j = 0; j < hw; j++)
			yp[j] = 0.0f;
		for (q = c0; q <= c1; q++) {
			const float *xq = xs + (b * c + q) * hw;

			for (j = 0; j < hw; j++)
				yp[j] += xq[j] * xq[j];
		}
		for (j = 0; j < hw; j++)
			yp[j] = xs[t * hw + j] / powf(p->bias + p->alpha /
			    (float)p->size * yp[j], p->beta);
	}
}

static int
lrn_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	float alpha = aoe_attr_float(n, "alpha", 1e-4f);
	float beta = aoe_attr_float(n, "beta", 0.75f);
	float bias = aoe_attr_float(n, "bias", 1.0f);
	int64_t size = aoe_attr_int(n, "size", 1);
	int64_t nb = x->dims[0], c = x->dims[1], hw = prod(x->dims, 2, x->ndim);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int nt = nthreads_for(nb * c * hw * size, grain, k->nthreads);
	struct lrn_ctx p;

	p.xs = x->data;
	p.ys = y->data;
	p.alpha = alpha;
	p.beta = beta;
	p.bias = bias;
	p.size = size;
	p.c = c;
	p.hw = hw;
	p.lo = (size - 1) / 2;
	p.hi = size - 1 - p.lo;
	p.n = nb * c;
	p.nch = aoe_nchunks(p.n, nt);
	aoe_parallel(nt, p.nch, lrn_chunk, &p);
	return 0;
}

const aoe_op aoe_ops_norm[] = {
	{ "BatchNormalization", bn_infer, bn_run, NULL, norm_default_sched },
	{ "LayerNormalization", ln_infer, ln_run, NULL, norm_default_sched },
	{ "MeanVarianceNormalization", mvn_infer, mvn_run, NULL,
	    norm_default_sched },
	{ "Softmax", sm_infer, sm_run, NULL, norm_default_sched },
	{ "LogSoftmax", sm_infer, sm_run, NULL, norm_default_sched },
	{ "Hardmax", sm_infer, hardmax_run, NULL, NULL },
	{ "InstanceNormalization", in_infer, in_run, NULL,
	    norm_default_sched },
	{ "LRN", lrn_infer, lrn_run, NULL, norm_default_sched },
	{ "ArgMax", arg_infer, arg_run, NULL, NULL },
	{ "ArgMin", arg_infer, arg_run, NULL, NULL },
	{ "ReduceSum", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceMean", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceMax", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceMin", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceProd", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceSumSquare", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceL1", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceL2", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceLogSum", red_infer, red_run, NULL, norm_default_sched },
	{ "ReduceLogSumExp", red_infer, red_run, NULL, norm_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};

/* The search space (see aoe_space_for() in space.c and the top). */
int
aoe_space_norm(aoe_space *sp)
{
	if (aoe_space_add_pow2(sp, "par", 1, 4096, 1048576, DEF_PAR, 1,
	    "elements per thread (0: one thread)") < 0)
		return -AOE_EINTERNAL;
	if (aoe_sched_get(&sp->def, "tile", -1) != -1 &&
	    aoe_space_add_pow2(sp, "tile", 0, 32, MAX_TILE, DEF_TILE, 1,
	    "columns processed together when the axis is not innermost") < 0)
		return -AOE_EINTERNAL;
	if (aoe_sched_get(&sp->def, "vec", -1) != -1 &&
	    aoe_space_add_pow2(sp, "vec", 1, 1, 1, DEF_VEC, 1,
	    "1 AVX2 polynomial exp, 0 the C library's expf") < 0)
		return -AOE_EINTERNAL;
	return 0;
}
