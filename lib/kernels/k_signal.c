/*
 * k_signal.c - signal processing: DFT, STFT, HannWindow, HammingWindow,
 * BlackmanWindow, MelWeightMatrix.
 *
 * The transforms run on complex doubles: an iterative radix-2 FFT for
 * lengths that are powers of two, and Bluestein's chirp-z algorithm for
 * every other length (a convolution done by a radix-2 FFT of at least
 * 2n - 1 points), so any length costs O(n log n).  The inverse transform
 * is the forward one of the conjugate, conjugated and divided by n.
 * The plan (twiddles, Bluestein's chirp and its transform) is made when
 * the node is prepared.
 * Signals are independent, and are cut into chunks over the threads.
 *
 * The windows and MelWeightMatrix are computed in double and stored in
 * the output_datatype the node asks for.  No knobs: the family has no
 * search space.
 */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

typedef double complex cplx;

/*
 * An FFT plan for length n: m, the radix-2 size, is n itself or, for
 * Bluestein, a power of two of at least 2n - 1.
 */
typedef struct fft_plan {
	int64_t n, m;
	cplx *tw;		/* exp(-2 pi i k / m), k < m / 2 */
	cplx *chirp;		/* Bluestein: exp(-pi i j^2 / n), j < n */
	cplx *bf;		/* Bluestein: the FFT of the conjugate chirp */
} fft_plan;

static int
is_pow2(int64_t n)
{
	return n > 0 && (n & (n - 1)) == 0;
}

/* In-place radix-2 FFT of x[0..m), m a power of two, by the plan's tw. */
static void
fft2(const fft_plan *p, cplx *x, int64_t m)
{
	int64_t i, j, k, len, step;

	for (i = 1, j = 0; i < m; i++) {
		int64_t bit = m >> 1;

		for (; j & bit; bit >>= 1)
			j ^= bit;
		j ^= bit;
		if (i < j) {
			cplx t = x[i];
			x[i] = x[j];
			x[j] = t;
		}
	}
	for (len = 2; len <= m; len <<= 1) {
		step = p->m / len;
		for (i = 0; i < m; i += len)
			for (k = 0; k < len / 2; k++) {
				cplx w = p->tw[k * step];
				cplx u = x[i + k], v = x[i + k + len / 2] * w;
				x[i + k] = u + v;
				x[i + k + len / 2] = u - v;
			}
	}
}

static void
plan_free(fft_plan *p)
{
	free(p->tw);
	free(p->chirp);
	free(p->bf);
	memset(p, 0, sizeof(*p));
}

static void
plan_make(fft_plan *p, int64_t n)
{
	int64_t k;

	memset(p, 0, sizeof(*p));
	p->n = n;
	if (is_pow2(n))
		p->m = n;
	else
		for (p->m = 1; p->m < 2 * n - 1; p->m <<= 1)
			;
	p->tw = aoe_xmalloc((size_t)(p->m / 2 + 1) * sizeof(cplx));
	for (k = 0; k < p->m / 2 + 1; k++)
		p->tw[k] = cexp(-2 * M_PI * I * (double)k / (double)p->m);
	if (p->m == n)
		return;
	p->chirp = aoe_xmalloc((size_t)n * sizeof(cplx));
	p->bf = aoe_xcalloc((size_t)p->m, sizeof(cplx));
	for (k = 0; k < n; k++) {
		/* k^2 mod 2n keeps the angle exact for long signals. */
		int64_t q = (int64_t)((unsigned __int128)k * k % (2 * n));
		p->chirp[k] = cexp(-M_PI * I * (double)q / (double)n);
	}
	p->bf[0] = conj(p->chirp[0]);
	for (k = 1; k < n; k++)
		p->bf[k] = p->bf[p->m - k] = conj(p->chirp[k]);
	fft2(p, p->bf, p->m);
}

static void
plan_priv_free(void *p)
{
	if (p != NULL)
		plan_free(p);
	free(p);
}

/*
 * The plan for length n: the node's, made by its prepare for the length
 * it had then, or a new one in *tmp (free it with plan_free).
 */
static const fft_plan *
plan_get(const aoe_node *nd, int64_t n, fft_plan *tmp)
{
	const fft_plan *p = nd->priv;

	if (p != NULL && p->n == n)
		return p;
	plan_make(tmp, n);
	return tmp;
}

/* Scratch complex values one transform needs beside its n values. */
static int64_t
plan_work(const fft_plan *p)
{
	return p->m == p->n ? 0 : p->m;
}

/*
 * The forward DFT of x[0..n) in place, X[k] = sum x[j] exp(-2 pi i jk/n);
 * w holds plan_work() values.
 */
static void
fft(const fft_plan *p, cplx *x, cplx *w)
{
	int64_t k, n = p->n, m = p->m;

	if (m == n) {
		fft2(p, x, m);
		return;
	}
	for (k = 0; k < n; k++)
		w[k] = x[k] * p->chirp[k];
	memset(w + n, 0, (size_t)(m - n) * sizeof(cplx));
	fft2(p, w, m);
	for (k = 0; k < m; k++)
		w[k] = conj(w[k] * p->bf[k]);
	/* The inverse FFT of m points, as a conjugated forward one. */
	fft2(p, w, m);
	for (k = 0; k < n; k++)
		x[k] = conj(w[k]) / (double)m * p->chirp[k];
}

/* The inverse, unscaled: sum x[j] exp(+2 pi i jk/n). */
static void
ifft(const fft_plan *p, cplx *x, cplx *w)
{
	int64_t k;

	for (k = 0; k < p->n; k++)
		x[k] = conj(x[k]);
	fft(p, x, w);
	for (k = 0; k < p->n; k++)
		x[k] = conj(x[k]);
}

static int
float_type(int dt)
{
	return dt == AOE_F32 || dt == AOE_F64;
}

/*
 * DFT: input [..., len, 1 or 2] with the transform along axis, an optional
 * dft_length (input 1) padding or cutting each signal, onesided (real
 * input only: the first n / 2 + 1 bins) and inverse.  The axis is an
 * attribute (opset 17) or input 2 (opset 20, default -2).
 */
struct dft_args {
	int64_t outer, len, inner, n, nout;
	int cin, inverse;
};

static int
dft_params(const aoe_graph *g, const aoe_node *n, struct dft_args *a,
    int *axp)
{
	const aoe_tensor *x = opt_in(g, n, 0);
	double v;
	int64_t axis;
	int r, ax, rc, onesided;

	if ((rc = aoe_need_inputs(g, n, 1, 3)) < 0)
		return rc;
	if (!float_type(x->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 or float64)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	r = x->ndim;
	if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
		return aoe_err(AOE_EDATA, "%s '%s': input must have rank 2 "
		    "or more and a last dimension of 1 (real) or 2 (complex)",
		    n->op_type, n->name);
	axis = aoe_attr_int(n, "axis", 1);
	if (opt_in(g, n, 2) != NULL) {
		if ((rc = aoe_const_scalar(g, n, 2, &v)) < 0)
			return rc;
		axis = (int64_t)v;
	} else if (g->opset >= 20)
		axis = -2;
	if ((ax = aoe_axis(axis, r)) < 0 || ax == r - 1)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is not a signal "
		    "axis of a rank-%d input", n->op_type, n->name,
		    (long long)axis, r);
	a->cin = (int)x->dims[r - 1];
	a->len = x->dims[ax];
	a->outer = prod(x->dims, 0, ax);
	a->inner = prod(x->dims, ax + 1, r - 1);
	a->n = a->len;
	if (opt_in(g, n, 1) != NULL) {
		if ((rc = aoe_const_scalar(g, n, 1, &v)) < 0)
			return rc;
		if (!(v >= 1 && v <= (double)(1 << 30)) || v != floor(v))
			return aoe_err(AOE_EDATA, "%s '%s': dft_length %g is "
			    "not a positive integer (at most 2^30)",
			    n->op_type, n->name, v);
		a->n = (int64_t)v;
	}
	if (a->n < 1)
		return aoe_err(AOE_EDATA, "%s '%s': the signal axis is empty",
		    n->op_type, n->name);
	a->inverse = aoe_attr_int(n, "inverse", 0) != 0;
	onesided = aoe_attr_int(n, "onesided", 0) != 0;
	if (onesided && a->cin == 2)
		return aoe_err(AOE_EDATA, "%s '%s': onesided needs a real "
		    "input", n->op_type, n->name);
	if (onesided && a->inverse)
		return aoe_err(AOE_EUNSUP, "%s '%s': onesided inverse "
		    "transform not supported", n->op_type, n->name);
	a->nout = onesided ? a->n / 2 + 1 : a->n;
	*axp = ax;
	return 0;
}

static int
dft_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x;
	struct dft_args a;
	int64_t dims[AOE_MAXDIM];
	int ax, rc;

	if ((rc = dft_params(g, n, &a, &ax)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	memcpy(dims, x->dims, sizeof(dims));
	dims[ax] = a.nout;
	dims[x->ndim - 1] = 2;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, dims);
}

static int
dft_prepare(aoe_graph *g, aoe_node *n)
{
	struct dft_args a;
	fft_plan *p;
	int ax, rc;

	if ((rc = dft_params(g, n, &a, &ax)) < 0)
		return rc;
	p = aoe_xmalloc(sizeof(*p));
	plan_make(p, a.n);
	n->priv = p;
	n->priv_free = plan_priv_free;
	return 0;
}

struct dft_ctx {
	const fft_plan *p;
	const struct dft_args *a;
	const void *x;
	void *y;
	int dt;
	int64_t nitems, nchunks;
};

static void
dft_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct dft_ctx *c = ctx;
	const struct dft_args *a = c->a;
	int64_t lo = aoe_chunk_lo(c->nitems, c->nchunks, chunk);
	int64_t hi = aoe_chunk_lo(c->nitems, c->nchunks, chunk + 1);
	int64_t it, j, cnt = min64(a->len, a->n);
	cplx *buf = aoe_xmalloc((size_t)(a->n + plan_work(c->p)) *
	    sizeof(cplx));

	for (it = lo; it < hi; it++) {
		int64_t o = it / a->inner, in = it % a->inner;
		int64_t xb = o * a->len * a->inner + in;
		int64_t yb = o * a->nout * a->inner + in;

		for (j = 0; j < cnt; j++) {
			int64_t e = (xb + j * a->inner) * a->cin;
			buf[j] = ld_fd(c->x, c->dt, e) + (a->cin == 2 ?
			    ld_fd(c->x, c->dt, e + 1) * I : 0);
		}
		for (; j < a->n; j++)
			buf[j] = 0;
		if (a->inverse) {
			ifft(c->p, buf, buf + a->n);
			for (j = 0; j < a->n; j++)
				buf[j] /= (double)a->n;
		} else
			fft(c->p, buf, buf + a->n);
		for (j = 0; j < a->nout; j++) {
			int64_t e = (yb + j * a->inner) * 2;
			st_fd(c->y, c->dt, e, creal(buf[j]));
			st_fd(c->y, c->dt, e + 1, cimag(buf[j]));
		}
	}
	free(buf);
}

static int
dft_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	struct dft_args a;
	struct dft_ctx c;
	fft_plan tmp;
	int ax, rc, nt;

	if ((rc = dft_params(k->g, k->n, &a, &ax)) < 0)
		return rc;
	memset(&tmp, 0, sizeof(tmp));
	c.p = plan_get(k->n, a.n, &tmp);
	c.a = &a;
	c.x = x->data;
	c.y = aoe_out(k->g, k->n, 0)->data;
	c.dt = x->dtype;
	c.nitems = a.outer * a.inner;
	nt = nthreads_for(c.nitems * a.n, 16384, k->nthreads);
	c.nchunks = aoe_nchunks(c.nitems, nt);
	if (c.nitems > 0)
		aoe_parallel(nt, c.nchunks, dft_chunk, &c);
	plan_free(&tmp);
	return 0;
}

/*
 * STFT: signal [batch, length, 1 or 2], frame_step (input 1), an optional
 * window (input 2) and frame_length (input 3), of which at least one;
 * output [batch, frames, bins, 2], onesided (the default, real signals
 * only) keeping frame_length / 2 + 1 bins.
 */
struct stft_args {
	int64_t batch, len, step, flen, frames, bins;
	int cin;
};

static int
stft_params(const aoe_graph *g, const aoe_node *n, struct stft_args *a)
{
	const aoe_tensor *x = opt_in(g, n, 0), *w;
	double v;
	int rc, onesided;

	if ((rc = aoe_need_inputs(g, n, 2, 4)) < 0)
		return rc;
	if (!float_type(x->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s signal not supported "
		    "(float32 or float64)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (x->ndim != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
		return aoe_err(AOE_EDATA, "%s '%s': signal must be [batch, "
		    "length, 1 or 2]", n->op_type, n->name);
	a->batch = x->dims[0];
	a->len = x->dims[1];
	a->cin = (int)x->dims[2];
	if ((rc = aoe_const_scalar(g, n, 1, &v)) < 0)
		return rc;
	if (!(v >= 1 && v <= (double)INT32_MAX) || v != floor(v))
		return aoe_err(AOE_EDATA, "%s '%s': frame_step %g is not a "
		    "positive integer", n->op_type, n->name, v);
	a->step = (int64_t)v;
	a->flen = -1;
	if ((w = opt_in(g, n, 2)) != NULL) {
		if (w->ndim != 1 || w->dtype != x->dtype)
			return aoe_err(AOE_EDATA, "%s '%s': window must be "
			    "1-D and of the signal's type", n->op_type,
			    n->name);
		a->flen = w->dims[0];
	}
	if (opt_in(g, n, 3) != NULL) {
		if ((rc = aoe_const_scalar(g, n, 3, &v)) < 0)
			return rc;
		if (!(v >= 1 && v <= (double)(1 << 30)) || v != floor(v))
			return aoe_err(AOE_EDATA, "%s '%s': frame_length %g "
			    "is not a positive integer (at most 2^30)",
			    n->op_type, n->name, v);
		if (a->flen >= 0 && a->flen != (int64_t)v)
			return aoe_err(AOE_EDATA, "%s '%s': frame_length "
			    "%lld differs from the window's %lld", n->op_type,
			    n->name, (long long)v, (long long)a->flen);
		a->flen = (int64_t)v;
	}
	if (a->flen < 1)
		return aoe_err(AOE_EDATA, "%s '%s': needs a window or a "
		    "frame_length of at least 1", n->op_type, n->name);
	if (a->flen > a->len)
		return aoe_err(AOE_EDATA, "%s '%s': frame_length %lld is "
		    "longer than the signal (%lld)", n->op_type, n->name,
		    (long long)a->flen, (long long)a->len);
	onesided = aoe_attr_int(n, "onesided", 1) != 0;
	if (onesided && a->cin == 2)
		return aoe_err(AOE_EDATA, "%s '%s': onesided needs a real "
		    "signal", n->op_type, n->name);
	a->frames = (a->len - a->flen) / a->step + 1;
	a->bins = onesided ? a->flen / 2 + 1 : a->flen;
	return 0;
}

static int
stft_infer(aoe_graph *g, aoe_node *n)
{
	struct stft_args a;
	int64_t dims[4];
	int rc;

	if ((rc = stft_params(g, n, &a)) < 0)
		return rc;
	dims[0] = a.batch;
	dims[1] = a.frames;
	dims[2] = a.bins;
	dims[3] = 2;
	return aoe_set_output(g, n, 0, aoe_in(g, n, 0)->dtype, 4, dims);
}

static int
stft_prepare(aoe_graph *g, aoe_node *n)
{
	struct stft_args a;
	fft_plan *p;
	int rc;

	if ((rc = stft_params(g, n, &a)) < 0)
		return rc;
	p = aoe_xmalloc(sizeof(*p));
	plan_make(p, a.flen);
	n->priv = p;
	n->priv_free = plan_priv_free;
	return 0;
}

struct stft_ctx {
	const fft_plan *p;
	const struct stft_args *a;
	const void *x, *w;
	void *y;
	int dt;
	int64_t nitems, nchunks;
};

static void
stft_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct stft_ctx *c = ctx;
	const struct stft_args *a = c->a;
	int64_t lo = aoe_chunk_lo(c->nitems, c->nchunks, chunk);
	int64_t hi = aoe_chunk_lo(c->nitems, c->nchunks, chunk + 1);
	int64_t it, j;
	cplx *buf = aoe_xmalloc((size_t)(a->flen + plan_work(c->p)) *
	    sizeof(cplx));

	for (it = lo; it < hi; it++) {
		int64_t b = it / a->frames, f = it % a->frames;
		int64_t xb = (b * a->len + f * a->step) * a->cin;

		for (j = 0; j < a->flen; j++) {
			int64_t e = xb + j * a->cin;
			double wv = c->w ? ld_fd(c->w, c->dt, j) : 1;
			buf[j] = wv * (ld_fd(c->x, c->dt, e) + (a->cin == 2 ?
			    ld_fd(c->x, c->dt, e + 1) * I : 0));
		}
		fft(c->p, buf, buf + a->flen);
		for (j = 0; j < a->bins; j++) {
			int64_t e = (it * a->bins + j) * 2;
			st_fd(c->y, c->dt, e, creal(buf[j]));
			st_fd(c->y, c->dt, e + 1, cimag(buf[j]));
		}
	}
	free(buf);
}

static int
stft_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	const aoe_tensor *w = opt_in(k->g, k->n, 2);
	struct stft_args a;
	struct stft_ctx c;
	fft_plan tmp;
	int rc, nt;

	if ((rc = stft_params(k->g, k->n, &a)) < 0)
		return rc;
	memset(&tmp, 0, sizeof(tmp));
	c.p = plan_get(k->n, a.flen, &tmp);
	c.a = &a;
	c.x = x->data;
	c.w = w ? w->data : NULL;
	c.y = aoe_out(k->g, k->n, 0)->data;
	c.dt = x->dtype;
	c.nitems = a.batch * a.frames;
	nt = nthreads_for(c.nitems * a.flen, 16384, k->nthreads);
	c.nchunks = aoe_nchunks(c.nitems, nt);
	if (c.nitems > 0)
		aoe_parallel(nt, c.nchunks, stft_chunk, &c);
	plan_free(&tmp);
	return 0;
}

/*
 * The windows: input 0 the size (a scalar), periodic (default 1: the
 * period is the size, else one less), output_datatype (default float).
 */
static int
out_dtype(const aoe_node *n, int *dt)
{
	*dt = (int)aoe_attr_int(n, "output_datatype", AOE_F32);
	if (!aoe_num_dtype(*dt))
		return aoe_err(AOE_EUNSUP, "%s '%s': output_datatype %d not "
		    "supported", n->op_type, n->name, *dt);
	return 0;
}

static int
window_params(const aoe_graph *g, const aoe_node *n, int64_t *size, int *dt)
{
	double v;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0 ||
	    (rc = aoe_const_scalar(g, n, 0, &v)) < 0 ||
	    (rc = out_dtype(n, dt)) < 0)
		return rc;
	if (!(v >= 0 && v <= (double)(1 << 30)) || v != floor(v))
		return aoe_err(AOE_EDATA, "%s '%s': size %g is not an "
		    "integer in [0, 2^30]", n->op_type, n->name, v);
	*size = (int64_t)v;
	return 0;
}

static int
window_infer(aoe_graph *g, aoe_node *n)
{
	int64_t size = 0;
	int dt, rc;

	if ((rc = window_params(g, n, &size, &dt)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, dt, 1, &size);
}

static int
window_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	void *y = aoe_out(k->g, n, 0)->data;
	int64_t size = 0, i;
	double a0, a1, a2, per, t;
	int dt, rc;

	if ((rc = window_params(k->g, n, &size, &dt)) < 0)
		return rc;
	/* w(i) = a0 - a1 cos(2 pi i / N) + a2 cos(4 pi i / N). */
	if (strcmp(n->op_type, "HannWindow") == 0) {
		a0 = a1 = .5;
		a2 = 0;
	} else if (strcmp(n->op_type, "HammingWindow") == 0) {
		a0 = 25.0 / 46;
		a1 = 1 - a0;
		a2 = 0;
	} else {
		a0 = .42;
		a1 = .5;
		a2 = .08;
	}
	per = aoe_attr_int(n, "periodic", 1) ? (double)size :
	    (double)size - 1;
	for (i = 0; i < size; i++) {
		t = per > 0 ? 2 * M_PI * (double)i / per : 0;
		aoe_put_f64(y, dt, i, a0 - a1 * cos(t) + a2 * cos(2 * t));
	}
	return 0;
}

/*
 * MelWeightMatrix: [dft_length / 2 + 1, num_mel_bins] triangular filters
 * between lower_edge_hertz and upper_edge_hertz on the mel scale, as
 * ONNX's reference computes them (its mel step divides by
 * num_mel_bins + 2, as ONNX Runtime's does).
 */
struct mel_args {
	int64_t bins, dft, rate;
	double lo, hi;
	int dt;
};

static int
mel_params(const aoe_graph *g, const aoe_node *n, struct mel_args *a)
{
	double v[5];
	int i, rc;

	if ((rc = aoe_need_inputs(g, n, 5, 5)) < 0)
		return rc;
	for (i = 0; i < 5; i++)
		if ((rc = aoe_const_scalar(g, n, i, &v[i])) < 0)
			return rc;
	if ((rc = out_dtype(n, &a->dt)) < 0)
		return rc;
	for (i = 0; i < 3; i++)
		if (!(v[i] >= 1 && v[i] <= (double)(1 << 30)) ||
		    v[i] != floor(v[i]))
			return aoe_err(AOE_EDATA, "%s '%s': input %d (%g) is "
			    "not a positive integer", n->op_type, n->name,
			    i, v[i]);
	a->bins = (int64_t)v[0];
	a->dft = (int64_t)v[1];
	a->rate = (int64_t)v[2];
	a->lo = v[3];
	a->hi = v[4];
	if (!(a->lo >= 0 && a->lo < a->hi && a->hi <= (double)a->rate / 2))
		return aoe_err(AOE_EDATA, "%s '%s': the edges %g and %g Hz "
		    "must satisfy 0 <= lower < upper <= sample_rate / 2",
		    n->op_type, n->name, a->lo, a->hi);
	if ((a->dft / 2 + 1) * a->bins > ((int64_t)1 << 30))
		return aoe_err(AOE_EDATA, "%s '%s': the matrix is too large",
		    n->op_type, n->name);
	return 0;
}

static int
mel_infer(aoe_graph *g, aoe_node *n)
{
	struct mel_args a;
	int64_t dims[2];
	int rc;

	if ((rc = mel_params(g, n, &a)) < 0)
		return rc;
	dims[0] = a.dft / 2 + 1;
	dims[1] = a.bins;
	return aoe_set_output(g, n, 0, a.dt, 2, dims);
}

static int
mel_run(aoe_kctx *k)
{
	void *y = aoe_out(k->g, k->n, 0)->data;
	struct mel_args a;
	int64_t *fb, nspec, i, j, l, c, h;
	double lmel, hmel, step, f;
	int rc;

	if ((rc = mel_params(k->g, k->n, &a)) < 0)
		return rc;
	nspec = a.dft / 2 + 1;
	fb = aoe_xmalloc((size_t)(a.bins + 2) * sizeof(int64_t));
	lmel = 2595 * log10(1 + a.lo / 700);
	hmel = 2595 * log10(1 + a.hi / 700);
	step = (hmel - lmel) / (double)(a.bins + 2);
	for (i = 0; i < a.bins + 2; i++) {
		f = 700 * (pow(10, ((double)i * step + lmel) / 2595) - 1);
		fb[i] = (int64_t)floor((double)(a.dft + 1) * f /
		    (double)a.rate);
		fb[i] = min64(max64(fb[i], 0), nspec - 1);
	}
	for (i = 0; i < nspec * a.bins; i++)
		aoe_put_f64(y, a.dt, i, 0);
	for (i = 0; i < a.bins; i++) {
		l = fb[i];
		c = fb[i + 1];
		h = fb[i + 2];
		if (c == l)
			aoe_put_f64(y, a.dt, c * a.bins + i, 1);
		else
			for (j = l; j <= c; j++)
				aoe_put_f64(y, a.dt, j * a.bins + i,
				    (double)(j - l) / (double)(c - l));
		for (j = c; j < h; j++)
			aoe_put_f64(y, a.dt, j * a.bins + i,
			    (double)(h - j) / (double)(h - c));
	}
	free(fb);
	return 0;
}

const aoe_op aoe_ops_signal[] = {
	{ "DFT", dft_infer, dft_run, dft_prepare, NULL },
	{ "STFT", stft_infer, stft_run, stft_prepare, NULL },
	{ "HannWindow", window_infer, window_run, NULL, NULL },
	{ "HammingWindow", window_infer, window_run, NULL, NULL },
	{ "BlackmanWindow", window_infer, window_run, NULL, NULL },
	{ "MelWeightMatrix", mel_infer, mel_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
