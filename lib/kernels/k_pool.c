/*
 * k_pool.c - pooling and resampling: MaxPool, AveragePool,
 * GlobalAveragePool, GlobalMaxPool, Resize and Upsample.
 *
 * 2-D float32 pooling (the case resnet, mobilenet and PP-OCR run) is
 * separable: each needed input row is padded into a line buffer and
 * reduced across the kernel width (a vector loop along the output width,
 * for any stride), then the kernel height is reduced across those row
 * results, again along the output width.  Planes (N * C) are spread over
 * the threads.  Every other case (1-D, 3-D, integer types, the Indices
 * output) takes a general N-D path.
 *
 * Resize works one axis at a time, from the last to the first, skipping
 * axes whose mapping is the identity: each pass maps [outer][in][inner]
 * to [outer][out][inner] through a table of taps (1 for nearest, 2 for
 * linear, 4 for cubic) and weights, so nearest, linear and cubic in any
 * rank share one implementation; nearest on the last two axes only (the
 * usual 2x upsample) has a one-pass gather.
 *
 * Every op here also runs in the blocked layout NCHW8c (kernel.h) when
 * its input is blocked and aoe_pool_8c_ok() allows it (4-D float32;
 * pools in 2-D without MaxPool's Indices, Resize and Upsample on the
 * last two axes in every mode): its output is then blocked too, as the
 * infer functions set.  A pixel is a vector of eight channels, so the
 * windows reduce whole vectors and nothing is transposed; the results
 * are the plain path's, operation for operation.
 *
 * Knobs (the search space beside the code):
 *
 *   par   elements per thread: a node touching n elements uses
 *         min(nthreads, n / par) threads.  Default 16384; searched over
 *         4096..1048576 (powers of two).  0 forces one thread.  The
 *         NCHW8c kernels count n as the plain path does.
 *   vec   2-D pooling: 2 each output row reduces its window's input
 *         rows first, then one horizontal pass (stride-2 windows of 2
 *         and 3 deinterleaved, 16 floats a vector where AVX-512 is
 *         allowed) writes it (pool2d_rows_v2); 1 the separable vector
 *         kernel; 0 the general N-D path (a baseline).  2 runs as 1
 *         where the horizontal dilation is not 1.  Default 2, but 1
 *         where a begin pad is above 0 (see pool_def_vec); {0, 1, 2}.
 *         Ignored in NCHW8c.
 *   tile  2-D pooling: output rows produced per block of a plane, so
 *         that the row results of a block stay in cache (0: the whole
 *         plane at once; with vec=2, whole planes unless there are
 *         fewer than 8 a thread, then blocks of rows, each block a work
 *         item).  Default 0; {0, 4, 8, 16, 32, 64}.  Ignored in NCHW8c,
 *         whose rows are independent.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define HAVE_AVX2 1
#define V1(x) _mm256_set1_ps(x)
#endif

#include "aoe_kernels.h"
#include "kernel.h"

#define DEF_PAR 16384
#define DEF_VEC 2
#define DEF_TILE 0
#define MAXSP (AOE_MAXDIM - 2)

static int layout_infer(aoe_graph *, aoe_node *);
static int run_8c(aoe_kctx *);

/*
 * vec: 2 (rows first) unless a begin pad is above 0.  bench/poolb -c, 1
 * thread, Zen 5, time against vec=1: MaxPool 3x3/2 ceil 64@111
 * (squeezenet1_1) 0.74x, 128@55 0.72x, 256@27 0.75x, 2x2/2 64@112
 * 0.68x, AveragePool 3x3/2 ceil 64@111 0.90x, 2x2/2 0.85x; under
 * AOE_MAX_ISA=avx2 0.91x, 0.90x, 0.86x and 0.60x (one earlier run, on a
 * heavily loaded host, had 128@55 and 256@27 at 1.2x; two repeats did
 * not).  In squeezenet1_1 (per-node minima) 0.71x-0.85x.  resnet18's
 * 3x3/2 pad 1 64@112 runs 0.71x alone (AVX2 0.97x) but 1.32x in the
 * model, after the stem's output (unexplained: its input's cache state),
 * so padded pools keep vec=1.  bench/results/sq-20261205.txt.
 */
static int
pool_def_vec(const aoe_node *n)
{
	const int64_t *ps;
	int np, i;

	if (strcmp(aoe_attr_str(n, "auto_pad", "NOTSET"), "NOTSET") != 0 &&
	    strcmp(aoe_attr_str(n, "auto_pad", "NOTSET"), "VALID") != 0)
		return 1;
	ps = aoe_attr_ints(n, "pads", &np);
	for (i = 0; ps != NULL && i < np / 2; i++)
		if (ps[i] != 0)
			return 1;
	return DEF_VEC;
}

static void
pool_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "par", DEF_PAR);
	if (strcmp(n->op_type, "MaxPool") == 0 ||
	    strcmp(n->op_type, "AveragePool") == 0) {
		aoe_sched_set(s, "vec", pool_def_vec(n));
		aoe_sched_set(s, "tile", DEF_TILE);
	}
}

/*
 * Pooling geometry, from the attributes and the input shape.
 */
struct pgeo {
	int ns;				/* spatial rank */
	int avg, cip, order;		/* AveragePool, count_include_pad,
					   storage_order */
	int64_t in[MAXSP], k[MAXSP], s[MAXSP], d[MAXSP];
	int64_t pb[MAXSP], pe[MAXSP], out[MAXSP];
};

/*
 * Output length of a pooling axis of in inputs, window ek (dilated),
 * stride s and pads pb, pe (auto_pad NOTSET); 0 if no window fits.
 */
static int64_t
pool_len(int64_t in, int64_t ek, int64_t s, int64_t pb, int64_t pe,
    int ceil_mode)
{
	int64_t span = in + pb + pe - ek, o;

	if (span < 0)
		return 0;
	if (!ceil_mode)
		return span / s + 1;
	o = (span + s - 1) / s + 1;
	/* The last window must start inside. */
	if ((o - 1) * s >= in + pb)
		o--;
	return o;
}

static int
pool_geo(const aoe_graph *g, const aoe_node *n, const aoe_tensor *x,
    struct pgeo *p)
{
	const int64_t *ks, *ss, *ds, *ps;
	const char *ap;
	int nk, nss, nds, nps, i, ceil_mode;

	memset(p, 0, sizeof(*p));
	p->avg = strcmp(n->op_type, "AveragePool") == 0;
	if (x->ndim < 3)
		return aoe_err(AOE_EDATA, "%s '%s': input has rank %d, at "
		    "least 3 (N, C, spatial) expected", n->op_type, n->name,
		    x->ndim);
	p->ns = x->ndim - 2;
	ks = aoe_attr_ints(n, "kernel_shape", &nk);
	if (ks == NULL || nk != p->ns)
		return aoe_err(AOE_EDATA, "%s '%s': kernel_shape must have %d "
		    "values", n->op_type, n->name, p->ns);
	ss = aoe_attr_ints(n, "strides", &nss);
	ds = aoe_attr_ints(n, "dilations", &nds);
	ps = aoe_attr_ints(n, "pads", &nps);
	if ((ss && nss != p->ns) || (ds && nds != p->ns) ||
	    (ps && nps != 2 * p->ns))
		return aoe_err(AOE_EDATA, "%s '%s': strides, dilations or pads "
		    "do not match the spatial rank %d", n->op_type, n->name,
		    p->ns);
	ceil_mode = aoe_attr_int(n, "ceil_mode", 0) != 0;
	p->cip = aoe_attr_int(n, "count_include_pad", 0) != 0;
	p->order = (int)aoe_attr_int(n, "storage_order", 0);
	if (p->order != 0 && p->order != 1)
		return aoe_err(AOE_EDATA, "%s '%s': storage_order %d",
		    n->op_type, n->name, p->order);
	ap = aoe_attr_str(n, "auto_pad", "NOTSET");
	for (i = 0; i < p->ns; i++) {
		int64_t in = x->dims[2 + i], ek, o;

		p->in[i] = in;
		p->k[i] = ks[i];
		p->s[i] = ss ? ss[i] : 1;
		p->d[i] = ds ? ds[i] : 1;
		p->pb[i] = ps ? ps[i] : 0;
		p->pe[i] = ps ? ps[p->ns + i] : 0;
		if (p->k[i] < 1 || p->s[i] < 1 || p->d[i] < 1 || p->pb[i] < 0 ||
		    p->pe[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': kernel %lld, stride "
			    "%lld, dilation %lld, pads %lld/%lld are invalid",
			    n->op_type, n->name, (long long)p->k[i],
			    (long long)p->s[i], (long long)p->d[i],
			    (long long)p->pb[i], (long long)p->pe[i]);
		ek = (p->k[i] - 1) * p->d[i] + 1;
		if (strcmp(ap, "NOTSET") == 0)
			o = pool_len(in, ek, p->s[i], p->pb[i], p->pe[i],
			    ceil_mode);
		else if (strcmp(ap, "VALID") == 0) {
			o = in - ek + 1 > 0 ?
			    (in - ek + 1 + p->s[i] - 1) / p->s[i] : 0;
			p->pb[i] = p->pe[i] = 0;
		} else if (strcmp(ap, "SAME_UPPER") == 0 ||
		    strcmp(ap, "SAME_LOWER") == 0) {
			int64_t tot;

			o = (in + p->s[i] - 1) / p->s[i];
			tot = (o - 1) * p->s[i] + ek - in;
			if (tot < 0)
				tot = 0;
			if (ap[5] == 'U') {
				p->pb[i] = tot / 2;
				p->pe[i] = tot - tot / 2;
			} else {
				p->pb[i] = tot - tot / 2;
				p->pe[i] = tot / 2;
			}
		} else
			return aoe_err(AOE_EUNSUP, "%s '%s': auto_pad '%s' not "
			    "supported", n->op_type, n->name, ap);
		if (o < 1 && in > 0)
			return aoe_err(AOE_EDATA, "%s '%s': kernel larger than "
			    "the padded input on spatial axis %d", n->op_type,
			    n->name, i);
		p->out[i] = o < 0 ? 0 : o;
	}
	return 0;
}

static int
pool_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	struct pgeo p;
	int64_t dims[AOE_MAXDIM];
	int rc, i, avg = strcmp(n->op_type, "AveragePool") == 0;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32 && (avg || (x->dtype != AOE_U8 &&
	    x->dtype != AOE_I8 && x->dtype != AOE_F64)))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	if ((rc = pool_geo(g, n, x, &p)) < 0)
		return rc;
	if (avg && n->nout > 1 && opt_out(g, n, 1) != NULL)
		return aoe_err(AOE_EDATA, "%s '%s': one output expected",
		    n->op_type, n->name);
	dims[0] = x->dims[0];
	dims[1] = x->dims[1];
	for (i = 0; i < p.ns; i++)
		dims[2 + i] = p.out[i];
	if ((rc = layout_infer(g, n)) < 0 ||
	    (rc = aoe_set_output(g, n, 0, x->dtype, x->ndim, dims)) < 0)
		return rc;
	if (!avg && n->nout > 1 && opt_out(g, n, 1) != NULL)
		return aoe_set_output(g, n, 1, AOE_I64, x->ndim, dims);
	return 0;
}

/*
 * The general N-D path: for each plane and output position, walk the
 * window's taps with an odometer.  Max for float32/float64/int8/uint8
 * (with the optional Indices), and average for float32.
 */
struct pgen_ctx {
	const struct pgeo *p;
	const void *x;
	void *y;
	int64_t *ind;
	int64_t planes, nch;
};

#define POOL_GEN(name, T, LOWEST)					\
static void								\
name##_chunk(void *ctx, int64_t chunk, int tid)				\
{									\
	const struct pgen_ctx *gc = ctx;				\
	const struct pgeo *p = gc->p;					\
	const T *x = gc->x;						\
	T *y = gc->y;							\
	int64_t *ind = gc->ind;						\
	int64_t isz = prod(p->in, 0, p->ns), osz = prod(p->out, 0, p->ns); \
	int64_t pl = aoe_chunk_lo(gc->planes, gc->nch, chunk);		\
	int64_t end = aoe_chunk_lo(gc->planes, gc->nch, chunk + 1);	\
									\
	for (; pl < end; pl++) {					\
		int64_t o, oi[MAXSP], ki[MAXSP];			\
		int ns = p->ns, j;					\
									\
		for (j = 0; j < ns; j++)				\
			oi[j] = 0;					\
		for (o = 0; o < osz; o++) {				\
			T best = LOWEST;				\
			double sum = 0.0;				\
			int64_t cnt = 1, bi = -1, taps = 1;		\
			int any = 0;					\
									\
			for (j = 0; j < ns; j++) {			\
				ki[j] = 0;				\
				taps *= p->k[j];			\
			}						\
			if (p->avg) {					\
				/* Count per axis, then multiply. */	\
				cnt = 1;				\
				for (j = 0; j < ns; j++) {		\
					int64_t c = 0, t, s0 =		\
					    oi[j] * p->s[j] - p->pb[j];	\
					for (t = 0; t < p->k[j]; t++) {	\
						int64_t q = s0 + t * p->d[j]; \
						if (p->cip ? (q >= -p->pb[j] && \
						    q < p->in[j] + p->pe[j]) : \
						    (q >= 0 && q < p->in[j])) \
							c++;		\
					}				\
					cnt *= c;			\
				}					\
			}						\
			for (; taps > 0; taps--) {			\
				int64_t off = 0, cm = 0, mul = 1;	\
				int ok = 1;				\
									\
				for (j = 0; j < ns; j++) {		\
					int64_t q = oi[j] * p->s[j] -	\
					    p->pb[j] + ki[j] * p->d[j];	\
					if (q < 0 || q >= p->in[j])	\
						ok = 0;			\
					off = off * p->in[j] + q;	\
					cm += q * mul;			\
					mul *= p->in[j];		\
				}					\
				if (ok) {				\
					T v = x[pl * isz + off];	\
					if (p->avg)			\
						sum += v;		\
					else if (!any || v > best) {	\
						best = v;		\
						bi = p->order ? cm : off; \
						any = 1;		\
					}				\
				}					\
				for (j = ns - 1; j >= 0; j--) {		\
					if (++ki[j] < p->k[j])		\
						break;			\
					ki[j] = 0;			\
				}					\
			}						\
			if (p->avg)					\
				y[pl * osz + o] = (T)(sum / (double)cnt); \
			else						\
				y[pl * osz + o] = best;			\
			if (ind)					\
				ind[pl * osz + o] = bi < 0 ? -1 :	\
				    pl * isz + bi;			\
			for (j = ns - 1; j >= 0; j--) {			\
				if (++oi[j] < p->out[j])		\
					break;				\
				oi[j] = 0;				\
			}						\
		}							\
	}								\
}									\
									\
static void								\
name(const struct pgeo *p, const T *x, T *y, int64_t *ind,		\
    int64_t planes, int nt)						\
{									\
	struct pgen_ctx gc;						\
									\
	gc.p = p;							\
	gc.x = x;							\
	gc.y = y;							\
	gc.ind = ind;							\
	gc.planes = planes;						\
	gc.nch = aoe_nchunks(planes, nt);				\
	aoe_parallel(nt, gc.nch, name##_chunk, &gc);			\
}
POOL_GEN(pool_gen_f32, float, -INFINITY)
POOL_GEN(pool_gen_f64, double, -INFINITY)
POOL_GEN(pool_gen_u8, uint8_t, 0)
POOL_GEN(pool_gen_i8, int8_t, INT8_MIN)

/*
 * The separable 2-D float32 kernel.
 *
 * Horizontal pass: hrow[ow] = reduce over kw of line[ow * sw + kw * dw],
 * where line is the input row padded with the identity (-inf or 0) on
 * both sides.  Vertical pass: out[oh][ow] = reduce over the valid input
 * rows of the window of hrow[row][ow].  For the average, the divisor is
 * the product of the per-axis counts.
 */
#ifdef HAVE_AVX2
/* The even elements of p[0..16). */
static inline __m256
even8(const float *p)
{
	__m256 a = _mm256_loadu_ps(p), b = _mm256_loadu_ps(p + 8);
	__m256 e = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));

	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(e),
	    _MM_SHUFFLE(3, 1, 2, 0)));
}
#endif

static void
hpass(float *restrict h, const float *restrict line, int64_t ow, int64_t kw,
    int64_t sw, int64_t dw, int avg)
{
	int64_t j = 0, t;

#ifdef HAVE_AVX2
	/*
	 * Eight outputs at a time, the kernel width in registers; the last
	 * few too, as a whole vector: line has 16 floats of slack after the
	 * last one any output needs, and h at least 8 after its row (the
	 * next row's, written later, or the buffer's slack).  That tail ran
	 * scalar once: squeezenet1_1's 3x3/2 pools (55, 27 and 13 wide
	 * out) spent most of their time in it.
	 */
	if (sw == 1 || sw == 2) {
		for (; j < ow; j += 8) {
			const float *b = line + j * sw;
			__m256 acc = sw == 1 ? _mm256_loadu_ps(b) : even8(b);

			for (t = 1; t < kw; t++) {
				__m256 v = sw == 1 ? _mm256_loadu_ps(b + t * dw) :
				    even8(b + t * dw);

				acc = avg ? _mm256_add_ps(acc, v) :
				    _mm256_max_ps(acc, v);
			}
			_mm256_storeu_ps(h + j, acc);
		}
	}
#endif
	for (; j < ow; j++) {
		const float *b = line + j * sw;
		float acc = b[0];

		for (t = 1; t < kw; t++) {
			float v = b[t * dw];

			acc = avg ? acc + v : (v > acc ? v : acc);
		}
		h[j] = acc;
	}
}

/*
 * Combine nr row results into one output row: max, or sum times the
 * reciprocal counts (invh for the row, invw per column).
 */
static void
vpass(float *y, const float *const *rows, int nr, int64_t ow,
    int avg, float invh, const float *invw)
{
	int64_t j = 0;
	int r;

#ifdef HAVE_AVX2
	for (; j + 8 <= ow; j += 8) {
		__m256 acc = _mm256_loadu_ps(rows[0] + j);

		for (r = 1; r < nr; r++)
			acc = avg ? _mm256_add_ps(acc, _mm256_loadu_ps(rows[r] + j)) :
			    _mm256_max_ps(acc, _mm256_loadu_ps(rows[r] + j));
		if (avg)
			acc = _mm256_mul_ps(_mm256_mul_ps(acc,
			    _mm256_set1_ps(invh)), _mm256_loadu_ps(invw + j));
		_mm256_storeu_ps(y + j, acc);
	}
	/* The last few under a mask (y's row may end its tensor). */
	if (j < ow) {
		__m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(ow - j)),
		    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		__m256 acc = _mm256_maskload_ps(rows[0] + j, m);

		for (r = 1; r < nr; r++)
			acc = avg ? _mm256_add_ps(acc,
			    _mm256_maskload_ps(rows[r] + j, m)) :
			    _mm256_max_ps(acc, _mm256_maskload_ps(rows[r] + j,
			    m));
		if (avg)
			acc = _mm256_mul_ps(_mm256_mul_ps(acc,
			    _mm256_set1_ps(invh)), _mm256_maskload_ps(invw + j,
			    m));
		_mm256_maskstore_ps(y + j, m, acc);
		j = ow;
	}
#endif
	for (; j < ow; j++) {
		float acc = rows[0][j];

		for (r = 1; r < nr; r++)
			acc = avg ? acc + rows[r][j] :
			    (rows[r][j] > acc ? rows[r][j] : acc);
		y[j] = avg ? acc * invh * invw[j] : acc;
	}
}

struct p2d {
	int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw;
	int64_t linelen;
	int avg;
	const float *invw, *invh;	/* 1/count per axis (average) */
	const float *ones;		/* OW ones, for partial folds */
};

#ifdef HAVE_AVX2
/*
 * A max pool with a vertical stride of 2 or more, output rows [r0, r1):
 * each output row takes the maximum of its input rows first, straight
 * from x into the padded line, then one horizontal pass (into hb, whose
 * slack takes its last vector) and a copy out.  The general way below
 * copies and passes every input row horizontally, about twice the
 * horizontal work at stride 2: squeezenet1_1's three ceil-mode 3x3/2
 * MaxPools 404 -> 257 us at 1 thread, resnet18's 3x3/2 231 -> 174 (per-node
 * minima, AMD EPYC Zen 5).
 */
static void
pool2d_rows_vfirst(const struct p2d *q, const float *x, float *y,
    float *line, float *hb, int64_t r0, int64_t r1)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const float *rows[64];
	int64_t oh, j, t, ih;
	int nr, r;

	for (j = 0; j < q->pw; j++)
		line[j] = -INFINITY;
	for (j = q->pw + q->W; j < q->linelen + 16; j++)
		line[j] = -INFINITY;
	for (oh = r0; oh < r1; oh++) {
		float *yr = y + oh * q->OW, *d = line + q->pw;

		nr = 0;
		for (t = 0; t < q->kh; t++) {
			ih = oh * q->sh - q->ph + t * q->dh;
			if (ih >= 0 && ih < q->H)
				rows[nr++] = x + ih * q->W;
		}
		if (nr == 0) {
			for (j = 0; j < q->OW; j++)
				yr[j] = -INFINITY;
			continue;
		}
		for (j = 0; j + 8 <= q->W; j += 8) {
			__m256 acc = _mm256_loadu_ps(rows[0] + j);
			for (r = 1; r < nr; r++)
				acc = _mm256_max_ps(acc,
				    _mm256_loadu_ps(rows[r] + j));
			_mm256_storeu_ps(d + j, acc);
		}
		if (j < q->W) {
			__m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32(
			    (int)(q->W - j)), lane);
			__m256 acc = _mm256_maskload_ps(rows[0] + j, m);
			for (r = 1; r < nr; r++)
				acc = _mm256_max_ps(acc,
				    _mm256_maskload_ps(rows[r] + j, m));
			_mm256_maskstore_ps(d + j, m, acc);
		}
		hpass(hb, line, q->OW, q->kw, q->sw, q->dw, 0);
		memcpy(yr, hb, (size_t)q->OW * sizeof(float));
	}
}

/*
 * vec=2, any 2-D pool of horizontal dilation 1: each output row reduces
 * its window's input rows (max, or sum) first, then one horizontal pass
 * writes the output row itself.  Windows 3 and 2 wide at stride 2
 * (resnet's and squeezenet's 3x3/2, the 2x2/2 of U-Nets and PP-OCR)
 * take the rows straight from x, split into even and odd floats once:
 * two shuffles a vector on AVX2 (the max or sum taken before their
 * common lane order is undone, one permute a vector), two-source
 * permutes on AVX-512; a max pool of at most 3 rows keeps the rows'
 * reduction in registers (mx2s8, mx2s16, and for left pads 0 and 1
 * mx2s16a, which loads each row once per 16 columns and shifts with
 * valignd).  Other windows reduce the rows into the padded line, then
 * go through hpass.  An average is scaled by its row's and columns'
 * reciprocal counts.  Timings: pool_def_vec.
 */
struct pv2 {
	const struct p2d *q;
	int w16;		/* AVX-512 */
	float pad;
};

/* The reduction of nr rows of n floats into d, 8 a vector. */
static void
vred8(float *d, const float *const *rows, int nr, int64_t n, int avg)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int64_t j;
	int r;

	for (j = 0; j + 8 <= n; j += 8) {
		__m256 acc = _mm256_loadu_ps(rows[0] + j);
		for (r = 1; r < nr; r++)
			acc = avg ? _mm256_add_ps(acc, _mm256_loadu_ps(rows[r] +
			    j)) : _mm256_max_ps(acc, _mm256_loadu_ps(rows[r] +
			    j));
		_mm256_storeu_ps(d + j, acc);
	}
	if (j < n) {
		__m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(n - j)),
		    lane);
		__m256 acc = _mm256_maskload_ps(rows[0] + j, m);
		for (r = 1; r < nr; r++)
			acc = avg ? _mm256_add_ps(acc, _mm256_maskload_ps(rows[r] +
			    j, m)) : _mm256_max_ps(acc,
			    _mm256_maskload_ps(rows[r] + j, m));
		_mm256_maskstore_ps(d + j, m, acc);
	}
}

/*
 * Eight floats of row from column c0 on, the lanes outside [0, w) the
 * pad value (and not read).
 */
static inline __attribute__((always_inline)) __m256
ld8(const float *row, int64_t c0, int64_t w, __m256 padv)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	__m256i m;

	if (c0 >= 0 && c0 + 8 <= w)
		return _mm256_loadu_ps(row + c0);
	m = _mm256_and_si256(_mm256_cmpgt_epi32(lane, _mm256_set1_epi32(
	    (int)(-c0 - 1 > 8 ? 8 : -c0 - 1))), _mm256_cmpgt_epi32(
	    _mm256_set1_epi32((int)(w - c0 < -1 ? -1 : w - c0 > 8 ? 8 :
	    w - c0)), lane));
	return _mm256_blendv_ps(padv, _mm256_maskload_ps(row + c0, m),
	    _mm256_castsi256_ps(m));
}

/*
 * The 2-wide or 3-wide stride-2 window of the nr rows straight from x
 * (column 0 of the output at padded column 0, input column -pw), ow
 * outputs into y, the vertical reduction in registers: no line written
 * and read again (which on AVX-512 cost more than the pass, the loads at
 * +2 spanning two stores not yet retired).
 */
static void
f2s8(float *y, const float *const *rows, int nr, int64_t w, int64_t pw,
    int64_t ow, int kw, int avg, float sc, const float *invw)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const __m256 padv = _mm256_set1_ps(avg ? 0.0f : -INFINITY);
	int64_t j;
	int r;

	for (j = 0; j < ow; j += 8) {
		const int64_t c0 = 2 * j - pw;
		__m256 a0 = ld8(rows[0], c0, w, padv);
		__m256 a1 = ld8(rows[0], c0 + 8, w, padv);
		__m256 c0v = kw == 3 ? ld8(rows[0], c0 + 2, w, padv) : a0;
		__m256 c1v = kw == 3 ? ld8(rows[0], c0 + 10, w, padv) : a1;
		__m256 e, o, m;

		for (r = 1; r < nr; r++) {
			if (avg) {
				a0 = _mm256_add_ps(a0, ld8(rows[r], c0, w, padv));
				a1 = _mm256_add_ps(a1, ld8(rows[r], c0 + 8, w,
				    padv));
			} else {
				a0 = _mm256_max_ps(a0, ld8(rows[r], c0, w, padv));
				a1 = _mm256_max_ps(a1, ld8(rows[r], c0 + 8, w,
				    padv));
			}
			if (kw == 3 && avg) {
				c0v = _mm256_add_ps(c0v, ld8(rows[r], c0 + 2, w,
				    padv));
				c1v = _mm256_add_ps(c1v, ld8(rows[r], c0 + 10,
				    w, padv));
			} else if (kw == 3) {
				c0v = _mm256_max_ps(c0v, ld8(rows[r], c0 + 2, w,
				    padv));
				c1v = _mm256_max_ps(c1v, ld8(rows[r], c0 + 10,
				    w, padv));
			}
		}
		e = _mm256_shuffle_ps(a0, a1, _MM_SHUFFLE(2, 0, 2, 0));
		o = _mm256_shuffle_ps(a0, a1, _MM_SHUFFLE(3, 1, 3, 1));
		m = avg ? _mm256_add_ps(e, o) : _mm256_max_ps(e, o);
		if (kw == 3) {
			__m256 e2 = _mm256_shuffle_ps(c0v, c1v,
			    _MM_SHUFFLE(2, 0, 2, 0));
			m = avg ? _mm256_add_ps(m, e2) : _mm256_max_ps(m, e2);
		}
		m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m),
		    _MM_SHUFFLE(3, 1, 2, 0)));
		if (j + 8 <= ow) {
			if (avg)
				m = _mm256_mul_ps(_mm256_mul_ps(m,
				    _mm256_set1_ps(sc)), _mm256_loadu_ps(invw +
				    j));
			_mm256_storeu_ps(y + j, m);
		} else {
			__m256i k = _mm256_cmpgt_epi32(_mm256_set1_epi32(
			    (int)(ow - j)), lane);
			if (avg)
				m = _mm256_mul_ps(_mm256_mul_ps(m,
				    _mm256_set1_ps(sc)), _mm256_maskload_ps(invw +
				    j, k));
			_mm256_maskstore_ps(y + j, k, m);
		}
	}
}

/*
 * A max pool's 2-wide or 3-wide stride-2 window over exactly three rows
 * (a shorter window's rows repeated: the max does not mind), ow outputs
 * at y; the interior vectors with plain loads, the edges through ld8.
 */
static inline __attribute__((always_inline)) __m256
mx8(const float *r0, const float *r1, const float *r2, int64_t c0, int64_t w,
    int edge)
{
	const __m256 padv = _mm256_set1_ps(-INFINITY);

	if (!edge)
		return _mm256_max_ps(_mm256_max_ps(_mm256_loadu_ps(r0 + c0),
		    _mm256_loadu_ps(r1 + c0)), _mm256_loadu_ps(r2 + c0));
	return _mm256_max_ps(_mm256_max_ps(ld8(r0, c0, w, padv), ld8(r1, c0, w,
	    padv)), ld8(r2, c0, w, padv));
}

static inline __attribute__((always_inline)) void
mx2s8_blk(float *y, const float *r0, const float *r1, const float *r2,
    int64_t w, int64_t pw, int64_t j, int64_t ow, const int kw, int edge)
{
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	const int64_t c0 = 2 * j - pw;
	__m256 a0 = mx8(r0, r1, r2, c0, w, edge);
	__m256 a1 = mx8(r0, r1, r2, c0 + 8, w, edge);
	__m256 m = _mm256_max_ps(_mm256_shuffle_ps(a0, a1,
	    _MM_SHUFFLE(2, 0, 2, 0)), _mm256_shuffle_ps(a0, a1,
	    _MM_SHUFFLE(3, 1, 3, 1)));

	if (kw == 3) {
		__m256 c0v = mx8(r0, r1, r2, c0 + 2, w, edge);
		__m256 c1v = mx8(r0, r1, r2, c0 + 10, w, edge);
		m = _mm256_max_ps(m, _mm256_shuffle_ps(c0v, c1v,
		    _MM_SHUFFLE(2, 0, 2, 0)));
	}
	m = _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(m),
	    _MM_SHUFFLE(3, 1, 2, 0)));
	if (j + 8 <= ow)
		_mm256_storeu_ps(y + j, m);
	else
		_mm256_maskstore_ps(y + j, _mm256_cmpgt_epi32(
		    _mm256_set1_epi32((int)(ow - j)), lane), m);
}

static inline __attribute__((always_inline)) void
mx2s8_k(float *y, const float *r0, const float *r1, const float *r2,
    int64_t w, int64_t pw, int64_t ow, const int kw)
{
	int64_t j = 0;

	/* The left edge, the interior (every load inside), the right. */
	for (; j < ow && 2 * j - pw < 0; j += 8)
		mx2s8_blk(y, r0, r1, r2, w, pw, j, ow, kw, 1);
	for (; j + 8 <= ow && 2 * j - pw + (kw == 3 ? 18 : 16) <= w; j += 8)
		mx2s8_blk(y, r0, r1, r2, w, pw, j, ow, kw, 0);
	for (; j < ow; j += 8)
		mx2s8_blk(y, r0, r1, r2, w, pw, j, ow, kw, 1);
}

static void
mx2s8(float *y, const float *r0, const float *r1, const float *r2,
    int64_t w, int64_t pw, int64_t ow, int kw)
{
	if (kw == 3)
		mx2s8_k(y, r0, r1, r2, w, pw, ow, 3);
	else
		mx2s8_k(y, r0, r1, r2, w, pw, ow, 2);
}

/*
 * The input rows of output row oh's window (three at most) that lie
 * inside the plane, into rows[0..2], the last repeated where the window
 * holds fewer; returns how many, and when none, fills the output row y
 * with -inf.
 */
static inline int
win_rows(const struct p2d *q, const float *x, float *y, int64_t oh,
    const float **rows)
{
	int64_t t;
	int nr = 0;

	for (t = 0; t < q->kh && t < 3; t++) {
		int64_t ih = oh * q->sh - q->ph + t * q->dh;
		if (ih >= 0 && ih < q->H)
			rows[nr++] = x + ih * q->W;
	}
	if (nr == 0)
		for (t = 0; t < q->OW; t++)
			y[oh * q->OW + t] = -INFINITY;
	for (t = nr; nr > 0 && t < 3; t++)
		rows[t] = rows[nr - 1];
	return nr;
}

/*
 * Output rows [r0, r1) of one plane by mx2s8, for windows of up to three
 * rows, in one loop (see mx2s16_rows).
 */
static inline __attribute__((always_inline)) void
mx2s8_rows_k(const struct p2d *q, const float *x, float *y, int64_t r0,
    int64_t r1, const int kw)
{
	const float *rows[3];
	int64_t oh;

	for (oh = r0; oh < r1; oh++)
		if (win_rows(q, x, y, oh, rows) > 0)
			mx2s8_k(y + oh * q->OW, rows[0], rows[1], rows[2],
			    q->W, q->pw, q->OW, kw);
}

static void
mx2s8_rows(const struct p2d *q, const float *x, float *y, int64_t r0,
    int64_t r1)
{
	if (q->kw == 3)
		mx2s8_rows_k(q, x, y, r0, r1, 3);
	else
		mx2s8_rows_k(q, x, y, r0, r1, 2);
}

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
ld16(const float *row, int64_t c0, int64_t w, __m512 padv)
{
	int64_t lo, hi;
	__mmask16 m;

	if (c0 >= 0 && c0 + 16 <= w)
		return _mm512_loadu_ps(row + c0);
	lo = c0 < 0 ? -c0 : 0;
	hi = w - c0 < 16 ? w - c0 : 16;
	m = hi <= lo ? 0 : (__mmask16)(((1u << hi) - 1) & ~((1u << lo) - 1));
	return _mm512_mask_loadu_ps(padv, m, row + c0);
}

/* f2s8 on sixteen floats a vector. */
static void
f2s16(float *y, const float *const *rows, int nr, int64_t w, int64_t pw,
    int64_t ow, int kw, int avg, float sc, const float *invw)
{
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16,
	    18, 20, 22, 24, 26, 28, 30);
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
	const __m512 padv = _mm512_set1_ps(avg ? 0.0f : -INFINITY);
	int64_t j;
	int r;

	for (j = 0; j < ow; j += 16) {
		const int64_t c0 = 2 * j - pw;
		__m512 a0 = ld16(rows[0], c0, w, padv);
		__m512 a1 = ld16(rows[0], c0 + 16, w, padv);
		__m512 c0v = kw == 3 ? ld16(rows[0], c0 + 2, w, padv) : a0;
		__m512 c1v = kw == 3 ? ld16(rows[0], c0 + 18, w, padv) : a1;
		__m512 e, o, m;
		__mmask16 k = ow - j >= 16 ? 0xffff :
		    (__mmask16)((1u << (ow - j)) - 1);

		for (r = 1; r < nr; r++) {
			if (avg) {
				a0 = _mm512_add_ps(a0, ld16(rows[r], c0, w, padv));
				a1 = _mm512_add_ps(a1, ld16(rows[r], c0 + 16, w,
				    padv));
			} else {
				a0 = _mm512_max_ps(a0, ld16(rows[r], c0, w, padv));
				a1 = _mm512_max_ps(a1, ld16(rows[r], c0 + 16, w,
				    padv));
			}
			if (kw == 3 && avg) {
				c0v = _mm512_add_ps(c0v, ld16(rows[r], c0 + 2, w,
				    padv));
				c1v = _mm512_add_ps(c1v, ld16(rows[r], c0 + 18,
				    w, padv));
			} else if (kw == 3) {
				c0v = _mm512_max_ps(c0v, ld16(rows[r], c0 + 2, w,
				    padv));
				c1v = _mm512_max_ps(c1v, ld16(rows[r], c0 + 18,
				    w, padv));
			}
		}
		e = _mm512_permutex2var_ps(a0, ev, a1);
		o = _mm512_permutex2var_ps(a0, od, a1);
		m = avg ? _mm512_add_ps(e, o) : _mm512_max_ps(e, o);
		if (kw == 3) {
			__m512 e2 = _mm512_permutex2var_ps(c0v, ev, c1v);
			m = avg ? _mm512_add_ps(m, e2) : _mm512_max_ps(m, e2);
		}
		if (avg)
			m = _mm512_mul_ps(_mm512_mul_ps(m, _mm512_set1_ps(sc)),
			    _mm512_maskz_loadu_ps(k, invw + j));
		_mm512_mask_storeu_ps(y + j, k, m);
	}
}

static inline __attribute__((always_inline)) __m512
mx16(const float *r0, const float *r1, const float *r2, int64_t c0,
    int64_t w, int edge)
{
	const __m512 padv = _mm512_set1_ps(-INFINITY);

	if (!edge)
		return _mm512_max_ps(_mm512_max_ps(_mm512_loadu_ps(r0 + c0),
		    _mm512_loadu_ps(r1 + c0)), _mm512_loadu_ps(r2 + c0));
	return _mm512_max_ps(_mm512_max_ps(ld16(r0, c0, w, padv), ld16(r1, c0,
	    w, padv)), ld16(r2, c0, w, padv));
}

static inline __attribute__((always_inline)) void
mx2s16_blk(float *y, const float *r0, const float *r1, const float *r2,
    int64_t w, int64_t pw, int64_t j, int64_t ow, const int kw, int edge)
{
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16,
	    18, 20, 22, 24, 26, 28, 30);
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
	const int64_t c0 = 2 * j - pw;
	__m512 a0 = mx16(r0, r1, r2, c0, w, edge);
	__m512 a1 = mx16(r0, r1, r2, c0 + 16, w, edge);
	__m512 m = _mm512_max_ps(_mm512_permutex2var_ps(a0, ev, a1),
	    _mm512_permutex2var_ps(a0, od, a1));

	if (kw == 3)
		m = _mm512_max_ps(m, _mm512_permutex2var_ps(mx16(r0, r1, r2,
		    c0 + 2, w, edge), ev, mx16(r0, r1, r2, c0 + 18, w, edge)));
	if (j + 16 <= ow)
		_mm512_storeu_ps(y + j, m);
	else
		_mm512_mask_storeu_ps(y + j, (__mmask16)((1u << (ow - j)) - 1),
		    m);
}

/*
 * mx2s16 for a left pad P of 0 or 1: the three rows' maximum taken once
 * per 16 columns, on vectors that start where the rows' do (C0..C3 the
 * columns from 2j - 16, 2j, 2j + 16, 2j + 32 on), the windows' shifted
 * vectors made from them by valignd: 6 loads per 16 outputs instead of
 * 12.
 */
static inline __attribute__((always_inline)) void
mx2s16a(float *y, const float *r0, const float *r1, const float *r2,
    int64_t w, int64_t ow, const int kw, const int P)
{
	const __m512i ev = _mm512_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14, 16,
	    18, 20, 22, 24, 26, 28, 30);
	const __m512i od = _mm512_add_epi32(ev, _mm512_set1_epi32(1));
	__m512 C0 = _mm512_set1_ps(-INFINITY);
	__m512 C1 = mx16(r0, r1, r2, 0, w, w < 16);
	int64_t j;

	for (j = 0; j < ow; j += 16) {
		const int edge = 2 * j + 48 > w;
		__m512 C2 = mx16(r0, r1, r2, 2 * j + 16, w, edge);
		__m512 C3 = mx16(r0, r1, r2, 2 * j + 32, w, edge);
		__m512 a0, a1, m;

		if (P == 0) {
			a0 = C1;
			a1 = C2;
		} else {
			a0 = _mm512_castsi512_ps(_mm512_alignr_epi32(
			    _mm512_castps_si512(C1), _mm512_castps_si512(C0),
			    15));
			a1 = _mm512_castsi512_ps(_mm512_alignr_epi32(
			    _mm512_castps_si512(C2), _mm512_castps_si512(C1),
			    15));
		}
		m = _mm512_max_ps(_mm512_permutex2var_ps(a0, ev, a1),
		    _mm512_permutex2var_ps(a0, od, a1));
		if (kw == 3) {
			/*
			 * The shift is 2 - P, written out: alignr takes only
			 * a constant, and clang without optimisation (the
			 * fuzz and sanitizer builds) does not fold P.
			 */
			__m512i i1 = _mm512_castps_si512(C1);
			__m512i i2 = _mm512_castps_si512(C2);
			__m512i i3 = _mm512_castps_si512(C3);
			__m512 c0v = _mm512_castsi512_ps(P == 0 ?
			    _mm512_alignr_epi32(i2, i1, 2) :
			    _mm512_alignr_epi32(i2, i1, 1));
			__m512 c1v = _mm512_castsi512_ps(P == 0 ?
			    _mm512_alignr_epi32(i3, i2, 2) :
			    _mm512_alignr_epi32(i3, i2, 1));
			m = _mm512_max_ps(m, _mm512_permutex2var_ps(c0v, ev,
			    c1v));
		}
		if (j + 16 <= ow)
			_mm512_storeu_ps(y + j, m);
		else
			_mm512_mask_storeu_ps(y + j, (__mmask16)((1u <<
			    (ow - j)) - 1), m);
		C0 = C2;
		C1 = C3;
	}
}

/* mx2s8 on sixteen floats a vector. */
static void
mx2s16(float *y, const float *r0, const float *r1, const float *r2,
    int64_t w, int64_t pw, int64_t ow, int kw)
{
	int64_t j = 0;

	if (pw == 0 && kw == 3)
		return mx2s16a(y, r0, r1, r2, w, ow, 3, 0);
	if (pw == 1 && kw == 3)
		return mx2s16a(y, r0, r1, r2, w, ow, 3, 1);
	if (pw == 0)
		return mx2s16a(y, r0, r1, r2, w, ow, 2, 0);
	if (pw == 1)
		return mx2s16a(y, r0, r1, r2, w, ow, 2, 1);
	for (; j < ow && 2 * j - pw < 0; j += 16)
		mx2s16_blk(y, r0, r1, r2, w, pw, j, ow, kw, 1);
	if (kw == 3)
		for (; j + 16 <= ow && 2 * j - pw + 34 <= w; j += 16)
			mx2s16_blk(y, r0, r1, r2, w, pw, j, ow, 3, 0);
	else
		for (; j + 16 <= ow && 2 * j - pw + 32 <= w; j += 16)
			mx2s16_blk(y, r0, r1, r2, w, pw, j, ow, 2, 0);
	for (; j < ow; j += 16)
		mx2s16_blk(y, r0, r1, r2, w, pw, j, ow, kw, 1);
}

/*
 * Output rows [r0, r1) of one plane by mx2s16a, for windows of up to
 * three rows and a left pad of 0 or 1: the choice of the window's rows
 * and of the variant made in one loop, not per row through
 * pool2d_rows_v2 and mx2s16.  On squeezenet1_1's small planes (a row of
 * 13 or 27 outputs is one or two vectors) those calls cost as much as
 * the maxima.
 */
static inline __attribute__((always_inline)) void
mx2s16_rows_k(const struct p2d *q, const float *x, float *y, int64_t r0,
    int64_t r1, const int kw, const int P)
{
	const float *rows[3];
	int64_t oh;

	for (oh = r0; oh < r1; oh++)
		if (win_rows(q, x, y, oh, rows) > 0)
			mx2s16a(y + oh * q->OW, rows[0], rows[1], rows[2],
			    q->W, q->OW, kw, P);
}

static void
mx2s16_rows(const struct p2d *q, const float *x, float *y, int64_t r0,
    int64_t r1)
{
	if (q->kw == 3 && q->pw == 0)
		mx2s16_rows_k(q, x, y, r0, r1, 3, 0);
	else if (q->kw == 3)
		mx2s16_rows_k(q, x, y, r0, r1, 3, 1);
	else if (q->pw == 0)
		mx2s16_rows_k(q, x, y, r0, r1, 2, 0);
	else
		mx2s16_rows_k(q, x, y, r0, r1, 2, 1);
}

static void
vred16(float *d, const float *const *rows, int nr, int64_t n, int avg)
{
	int64_t j;
	int r;

	for (j = 0; j < n; j += 16) {
		__mmask16 m = n - j >= 16 ? 0xffff :
		    (__mmask16)((1u << (n - j)) - 1);
		__m512 acc = _mm512_maskz_loadu_ps(m, rows[0] + j);
		for (r = 1; r < nr; r++)
			acc = avg ? _mm512_add_ps(acc, _mm512_maskz_loadu_ps(m,
			    rows[r] + j)) : _mm512_max_ps(acc,
			    _mm512_maskz_loadu_ps(m, rows[r] + j));
		_mm512_mask_storeu_ps(d + j, m, acc);
	}
}

#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/* Floats of slack the line needs past 2 * OW (hpass reads ahead). */
#define PV2_SLACK 64

/* One plane, output rows [r0, r1), vec=2. */
static void
pool2d_rows_v2(const struct pv2 *v, const float *x, float *y, float *line,
    float *hb, int64_t r0, int64_t r1)
{
	const struct p2d *q = v->q;
	const int fast = q->sw == 2 && (q->kw == 2 || q->kw == 3);
	const float *rows[64];
	float *d = line + q->pw;
	int64_t oh, j, t, ih, len;
	int nr;

	if (fast && !q->avg && q->kh <= 3 && (!v->w16 || q->pw <= 1)) {
		if (v->w16)
			mx2s16_rows(q, x, y, r0, r1);
		else
			mx2s8_rows(q, x, y, r0, r1);
		return;
	}
	/* The pads, and past them what the horizontal pass may read. */
	len = max64(q->linelen + 16, 2 * q->OW + PV2_SLACK);
	for (j = 0; j < q->pw; j++)
		line[j] = v->pad;
	for (j = q->pw + q->W; j < len; j++)
		line[j] = v->pad;
	for (oh = r0; oh < r1; oh++) {
		float *yr = y + oh * q->OW;
		float sc = q->avg ? q->invh[oh] : 1.0f;

		nr = 0;
		for (t = 0; t < q->kh; t++) {
			ih = oh * q->sh - q->ph + t * q->dh;
			if (ih >= 0 && ih < q->H)
				rows[nr++] = x + ih * q->W;
		}
		if (nr == 0) {
			for (j = 0; j < q->OW; j++)
				yr[j] = q->avg ? NAN : -INFINITY;
			continue;
		}
		if (fast && !q->avg && nr <= 3) {
			/* Three rows, a shorter window's repeated. */
			const float *r1 = rows[nr > 1 ? 1 : 0];
			const float *r2 = rows[nr > 2 ? 2 : nr - 1];
			if (v->w16)
				mx2s16(yr, rows[0], r1, r2, q->W, q->pw, q->OW,
				    (int)q->kw);
			else
				mx2s8(yr, rows[0], r1, r2, q->W, q->pw, q->OW,
				    (int)q->kw);
			continue;
		}
		if (fast && v->w16) {
			f2s16(yr, rows, nr, q->W, q->pw, q->OW, (int)q->kw,
			    q->avg, sc, q->invw);
			continue;
		}
		if (fast) {
			f2s8(yr, rows, nr, q->W, q->pw, q->OW, (int)q->kw,
			    q->avg, sc, q->invw);
			continue;
		}
		if (v->w16)
			vred16(d, rows, nr, q->W, q->avg);
		else
			vred8(d, rows, nr, q->W, q->avg);
		{
			hpass(hb, line, q->OW, q->kw, q->sw, q->dw, q->avg);
			if (q->avg)
				for (j = 0; j < q->OW; j++)
					yr[j] = hb[j] * sc * q->invw[j];
			else
				memcpy(yr, hb, (size_t)q->OW * sizeof(float));
		}
	}
}
#endif

/* One plane, output rows [r0, r1). */
static void
pool2d_rows(const struct p2d *q, const float *x, float *y, float *line,
    float *hb, int64_t r0, int64_t r1)
{
	float pad = q->avg ? 0.0f : -INFINITY;
	int64_t ih0, ih1, ih, oh, j, t;

#ifdef HAVE_AVX2
	if (!q->avg && q->sh >= 2 && q->kh <= 64) {
		pool2d_rows_vfirst(q, x, y, line, hb, r0, r1);
		return;
	}
#endif

	/* The input rows this block of output rows needs. */
	ih0 = r0 * q->sh - q->ph;
	ih1 = (r1 - 1) * q->sh - q->ph + (q->kh - 1) * q->dh + 1;
	if (ih0 < 0)
		ih0 = 0;
	if (ih1 > q->H)
		ih1 = q->H;
	for (j = 0; j < q->pw; j++)
		line[j] = pad;
	for (j = q->pw + q->W; j < q->linelen; j++)
		line[j] = pad;
	for (ih = ih0; ih < ih1; ih++) {
		/* With dilation or stride > kernel some rows are unused. */
		if (q->dh > 1 || q->sh > q->kh) {
			int used = 0;

			for (t = 0; t < q->kh && !used; t++) {
				int64_t a = ih + q->ph - t * q->dh;

				if (a >= 0 && a % q->sh == 0 && a / q->sh >= r0 &&
				    a / q->sh < r1)
					used = 1;
			}
			if (!used)
				continue;
		}
		memcpy(line + q->pw, x + ih * q->W, (size_t)q->W * sizeof(float));
		hpass(hb + (ih - ih0) * q->OW, line, q->OW, q->kw, q->sw, q->dw,
		    q->avg);
	}
	for (oh = r0; oh < r1; oh++) {
		float *yr = y + oh * q->OW;
		const float *rows[64];
		int nr = 0;

		for (t = 0; t < q->kh; t++) {
			ih = oh * q->sh - q->ph + t * q->dh;
			if (ih < 0 || ih >= q->H)
				continue;
			rows[nr++] = hb + (ih - ih0) * q->OW;
			if (nr == 64 && t + 1 < q->kh) {
				/* Very tall kernels: fold as we go. */
				vpass(yr, rows, nr, q->OW, q->avg, 1.0f, q->ones);
				rows[0] = yr;
				nr = 1;
			}
		}
		if (nr == 0)
			for (j = 0; j < q->OW; j++)
				yr[j] = q->avg ? NAN : -INFINITY;
		else
			vpass(yr, rows, nr, q->OW, q->avg,
			    q->avg ? q->invh[oh] : 1.0f, q->invw);
	}
}

/* Per-axis reciprocal counts for the average. */
static void
avg_counts(float *inv, int64_t out, int64_t in, int64_t k, int64_t s,
    int64_t d, int64_t pb, int64_t pe, int cip)
{
	int64_t o, t;

	for (o = 0; o < out; o++) {
		int64_t c = 0, s0 = o * s - pb;

		for (t = 0; t < k; t++) {
			int64_t q = s0 + t * d;

			if (cip ? (q >= -pb && q < in + pe) : (q >= 0 && q < in))
				c++;
		}
		inv[o] = c ? 1.0f / (float)c : NAN;
	}
}

struct pool2d_ctx {
	const struct p2d *q;
	const float *x;
	float *y;
	float *buf;		/* per thread: a line, then the row results */
	size_t per;		/* floats of buf per thread */
	int64_t tile, planes, nch;
	int64_t hoff;		/* floats from a line to its row results */
	int64_t nrb;		/* vec=2: blocks of tile rows a plane */
#ifdef HAVE_AVX2
	const struct pv2 *v2;	/* vec=2, else NULL */
#endif
};

static void
pool2d_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct pool2d_ctx *c = ctx;
	const struct p2d *q = c->q;
	float *line = c->buf + (size_t)tid * c->per;
	float *hb = line + c->hoff;
	int64_t pl = aoe_chunk_lo(c->planes, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->planes, c->nch, chunk + 1);
	int64_t tile = c->tile, r0;

#ifdef HAVE_AVX2
	if (c->v2 != NULL) {
		/* Items are (plane, block of tile output rows). */
		for (; pl < end; pl++) {
			int64_t p = pl / c->nrb;
			r0 = pl % c->nrb * tile;
			pool2d_rows_v2(c->v2, c->x + p * q->H * q->W,
			    c->y + p * q->OH * q->OW, line, hb, r0,
			    min64(r0 + tile, q->OH));
		}
		return;
	}
#endif
	for (; pl < end; pl++)
		for (r0 = 0; r0 < q->OH; r0 += tile)
			pool2d_rows(q, c->x + pl * q->H * q->W,
			    c->y + pl * q->OH * q->OW, line, hb, r0,
			    r0 + tile < q->OH ? r0 + tile : q->OH);
}

static int
pool2d(aoe_kctx *k, const struct pgeo *p, const float *x, float *y,
    int64_t planes, int vec)
{
	struct pool2d_ctx c;
	struct p2d q;
#ifdef HAVE_AVX2
	struct pv2 v2;
#endif
	float *inv;
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int64_t tile = aoe_sched_get(k->sched, "tile", DEF_TILE);
	int64_t pl, need, hrows;
	int nt;

	q.H = p->in[0];
	q.W = p->in[1];
	q.OH = p->out[0];
	q.OW = p->out[1];
	q.kh = p->k[0];
	q.kw = p->k[1];
	q.sh = p->s[0];
	q.sw = p->s[1];
	q.dh = p->d[0];
	q.dw = p->d[1];
	q.ph = p->pb[0];
	q.pw = p->pb[1];
	q.avg = p->avg;
	need = (q.OW - 1) * q.sw + (q.kw - 1) * q.dw + 1;
	q.linelen = need > q.pw + q.W ? need : q.pw + q.W;
	if (tile <= 0 || tile > q.OH)
		tile = q.OH;
	inv = NULL;
	q.invh = q.invw = q.ones = NULL;
	if (q.avg) {
		inv = malloc((size_t)(q.OH + 2 * q.OW) * sizeof(float));
		if (inv == NULL)
			return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
			    k->n->op_type, k->n->name);
		avg_counts(inv, q.OH, q.H, q.kh, q.sh, q.dh, p->pb[0],
		    p->pe[0], p->cip);
		avg_counts(inv + q.OH, q.OW, q.W, q.kw, q.sw, q.dw, p->pb[1],
		    p->pe[1], p->cip);
		q.invh = inv;
		q.invw = inv + q.OH;
		for (pl = 0; pl < q.OW; pl++)
			inv[q.OH + q.OW + pl] = 1.0f;
		q.ones = inv + q.OH + q.OW;
	}
	nt = nthreads_for(planes * (q.H * q.W + q.OH * q.OW), grain,
	    k->nthreads);
	c.nrb = 1;
	c.hoff = q.linelen + 16;
#ifdef HAVE_AVX2
	c.v2 = NULL;
	if (vec == 2 && q.dw == 1 && q.kh <= 64) {
		v2.q = &q;
		v2.w16 = aoe_cpu_avx512();
		v2.pad = q.avg ? 0.0f : -INFINITY;
		c.v2 = &v2;
		/*
		 * Whole planes a work item, unless the planes are too few
		 * to keep the threads evenly busy: then blocks of rows.
		 */
		if (aoe_sched_get(k->sched, "tile", DEF_TILE) <= 0 &&
		    nt > 1 && planes < 8 * nt)
			tile = max64(1, ceildiv(q.OH, ceildiv(8 * nt,
			    planes)));
		c.nrb = ceildiv(q.OH, tile);
		c.hoff = max64(q.linelen + 16, 2 * q.OW + PV2_SLACK) + 16;
		tile = min64(tile, q.OH);
	}
#endif
	/*
	 * Each thread's line buffer and row results, for as many output rows
	 * as one block needs at most; a multiple of 64 bytes apiece.
	 */
	hrows = (tile - 1) * q.sh + (q.kh - 1) * q.dh + 1;
	if (hrows > q.H)
		hrows = q.H;
	c.per = ((size_t)(c.hoff + hrows * q.OW + 16) + 15) & ~(size_t)15;
	c.buf = aligned_alloc(64, c.per * (size_t)nt * sizeof(float));
	if (c.buf == NULL) {
		free(inv);
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    k->n->op_type, k->n->name);
	}
	c.q = &q;
	c.x = x;
	c.y = y;
	c.tile = tile;
	c.planes = planes * c.nrb;
	c.nch = aoe_nchunks(c.planes, nt);
	aoe_parallel(nt, c.nch, pool2d_chunk, &c);
	free(c.buf);
	free(inv);
	return 0;
}

static int
pool_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	aoe_tensor *ti = n->nout > 1 ? opt_out(k->g, n, 1) : NULL;
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR), planes;
	int vec = (int)aoe_sched_get(k->sched, "vec", DEF_VEC);
	struct pgeo p;
	int rc, nt;

	if (x->layout == AOE_LAYOUT_8C)
		return run_8c(k);
	if ((rc = pool_geo(k->g, n, x, &p)) < 0)
		return rc;
	planes = x->dims[0] * x->dims[1];
	if (planes == 0 || aoe_tensor_numel(y) == 0)
		return 0;
	if (x->dtype == AOE_F32 && p.ns == 2 && ti == NULL && vec &&
	    prod(p.in, 0, 2) > 0)
		return pool2d(k, &p, x->data, y->data, planes, vec);
	nt = nthreads_for(aoe_tensor_numel(y) * prod(p.k, 0, p.ns), grain,
	    k->nthreads);
	switch (x->dtype) {
	case AOE_F32:
		pool_gen_f32(&p, x->data, y->data, ti ? ti->data : NULL,
		    planes, nt);
		break;
	case AOE_F64:
		pool_gen_f64(&p, x->data, y->data, ti ? ti->data : NULL,
		    planes, nt);
		break;
	case AOE_U8:
		pool_gen_u8(&p, x->data, y->data, ti ? ti->data : NULL,
		    planes, nt);
		break;
	default:
		pool_gen_i8(&p, x->data, y->data, ti ? ti->data : NULL,
		    planes, nt);
		break;
	}
	return 0;
}

/*
 * A max pool fused into a Conv (lib/passes/fuse.c's fuse_pool), from the
 * Conv's attribute _aoe_pool: kh, kw, sh, sw, then the pads top, left,
 * bottom, right, then ceil_mode; in is the Conv's output height and
 * width.  Returns 1 with p filled, 0 without the attribute, -1 (an
 * error set) when it is malformed or leaves a window without an input.
 */
int
aoe_pool2_of(const aoe_node *n, const int64_t in[2], aoe_pool2 *p)
{
	const int64_t *v;
	int nv, i;

	if ((v = aoe_attr_ints(n, "_aoe_pool", &nv)) == NULL)
		return 0;
	if (nv != 9)
		return aoe_err(AOE_EDATA, "%s '%s': _aoe_pool has %d values, "
		    "not 9", n->op_type, n->name, nv);
	for (i = 0; i < 2; i++) {
		p->k[i] = v[i];
		p->s[i] = v[2 + i];
		p->pb[i] = v[4 + i];
		if (v[i] < 1 || v[2 + i] < 1 || v[4 + i] < 0 ||
		    v[6 + i] < 0 || v[4 + i] >= v[i] || v[6 + i] >= v[i] ||
		    in[i] < 1 || v[i] > INT32_MAX || v[2 + i] > INT32_MAX ||
		    v[6 + i] > INT32_MAX)
			return aoe_err(AOE_EDATA, "%s '%s': fused pool window "
			    "%lld, stride %lld, pads %lld/%lld are invalid",
			    n->op_type, n->name, (long long)v[i],
			    (long long)v[2 + i], (long long)v[4 + i],
			    (long long)v[6 + i]);
		p->out[i] = pool_len(in[i], p->k[i], p->s[i], p->pb[i],
		    v[6 + i], v[8] != 0);
		if (p->out[i] < 1)
			return aoe_err(AOE_EDATA, "%s '%s': fused pool window "
			    "larger than its padded input", n->op_type,
			    n->name);
	}
	return 1;
}

/*
 * The fused pool of a Conv computed apart: y from x (planes of h x w),
 * by the MaxPool kernel on nthreads (with its default schedule).
 */
int
aoe_maxpool2d(const aoe_pool2 *pp, const float *x, int64_t planes,
    int64_t h, int64_t w, float *y, const aoe_node *n, int nthreads)
{
	aoe_sched none;
	aoe_kctx k;
	struct pgeo p;
	int i;

	memset(&none, 0, sizeof(none));
	memset(&k, 0, sizeof(k));
	memset(&p, 0, sizeof(p));
	k.n = (aoe_node *)n;
	k.nthreads = nthreads;
	k.sched = &none;
	p.ns = 2;
	p.in[0] = h;
	p.in[1] = w;
	for (i = 0; i < 2; i++) {
		p.k[i] = pp->k[i];
		p.s[i] = pp->s[i];
		p.d[i] = 1;
		p.pb[i] = pp->pb[i];
		p.pe[i] = max64(0, (pp->out[i] - 1) * pp->s[i] + pp->k[i] -
		    pp->pb[i] - p.in[i]);
		p.out[i] = pp->out[i];
	}
	if (planes == 0)
		return 0;
	/* vec=2 (rows first) wants no leading pads, as pool_def_vec. */
	return pool2d(&k, &p, x, y, planes, p.pb[0] || p.pb[1] ? 1 :
	    DEF_VEC);
}

/*
 * GlobalAveragePool and GlobalMaxPool: one value per (N, C) plane.
 */
static int
gpool_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t dims[AOE_MAXDIM];
	int rc, i;

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
	for (i = 0; i < x->ndim; i++)
		dims[i] = i < 2 ? x->dims[i] : 1;
	if ((rc = layout_infer(g, n)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, dims);
}

struct gpool_ctx {
	const float *xs;
	float *ys;
	int avg;
	int64_t hw, planes, nch;
};

static void
gpool_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct gpool_ctx *c = ctx;
	int64_t pl = aoe_chunk_lo(c->planes, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->planes, c->nch, chunk + 1), hw = c->hw;
	float *ys = c->ys;
	int avg = c->avg;

	for (; pl < end; pl++) {
		const float *xp = c->xs + pl * hw;
		float a[16];
		int64_t i;
		int j;

		if (hw == 0) {
			ys[pl] = avg ? NAN : -INFINITY;
			continue;
		}
		for (j = 0; j < 16; j++)
			a[j] = avg ? 0.0f : xp[0];
		if (avg) {
			for (i = 0; i + 16 <= hw; i += 16)
				for (j = 0; j < 16; j++)
					a[j] += xp[i + j];
			for (; i < hw; i++)
				a[0] += xp[i];
			for (j = 1; j < 16; j++)
				a[0] += a[j];
			ys[pl] = a[0] / (float)hw;
		} else {
			for (i = 0; i + 16 <= hw; i += 16)
				for (j = 0; j < 16; j++)
					a[j] = xp[i + j] > a[j] ? xp[i + j] :
					    a[j];
			for (; i < hw; i++)
				a[0] = xp[i] > a[0] ? xp[i] : a[0];
			for (j = 1; j < 16; j++)
				a[0] = a[j] > a[0] ? a[j] : a[0];
			ys[pl] = a[0];
		}
	}
}

static int
gpool_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int64_t planes = x->dims[0] * x->dims[1], hw = prod(x->dims, 2, x->ndim);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int nt = nthreads_for(planes * hw, grain, k->nthreads);
	struct gpool_ctx c;

	if (x->layout == AOE_LAYOUT_8C)
		return run_8c(k);
	c.xs = x->data;
	c.ys = y->data;
	c.avg = strcmp(n->op_type, "GlobalAveragePool") == 0;
	c.hw = hw;
	c.planes = planes;
	c.nch = aoe_nchunks(planes, nt);
	aoe_parallel(nt, c.nch, gpool_chunk, &c);
	return 0;
}

/*
 * Resize (opsets 10-17) and Upsample (7-9).
 */
enum { M_NEAREST, M_LINEAR, M_CUBIC };
enum { C_HALF, C_PYTORCH, C_ALIGN, C_ASYM, C_TFNN, C_CROP };
enum { N_RPF, N_RPC, N_FLOOR, N_CEIL, N_SIMPLE };

struct rgeo {
	int nd, mode, ctm, nm, excl;
	float a, extrap;
	int64_t in[AOE_MAXDIM], out[AOE_MAXDIM];
	double scale[AOE_MAXDIM];	/* out/in as the reference uses it */
	double lres[AOE_MAXDIM];	/* the resized length, scale * in */
	double roi[2 * AOE_MAXDIM];
};

static int resize_scratch(aoe_graph *, aoe_node *, const struct rgeo *,
    size_t);

static int
lookup(const char *s, const char *const *names, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(s, names[i]) == 0)
			return i;
	return -1;
}

/* A float constant input (scales, roi); returns the count or an error. */
static int
const_floats(const aoe_graph *g, const aoe_node *n, int i, double *out,
    int max)
{
	const aoe_tensor *t = aoe_in(g, n, i);
	int64_t numel, j;

	if (t->kind != AOE_T_CONST || t->data == NULL)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' must be a "
		    "constant (bind dynamic shapes with --input-shape)",
		    n->op_type, n->name, t->name);
	numel = aoe_tensor_numel(t);
	if (numel < 0 || numel > max)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' has %lld values, "
		    "at most %d allowed", n->op_type, n->name, t->name,
		    (long long)numel, max);
	for (j = 0; j < numel; j++) {
		if (t->dtype == AOE_F32)
			out[j] = ((const float *)t->data)[j];
		else if (t->dtype == AOE_F64)
			out[j] = ((const double *)t->data)[j];
		else
			return aoe_err(AOE_EDATA, "%s '%s': input '%s' must be "
			    "float, not %s", n->op_type, n->name, t->name,
			    aoe_dtype_name(t->dtype));
	}
	return (int)numel;
}

static int
resize_geo(const aoe_graph *g, const aoe_node *n, struct rgeo *r)
{
	static const char *const modes[] = { "nearest", "linear", "cubic" };
	static const char *const ctms[] = { "half_pixel",
	    "pytorch_half_pixel", "align_corners", "asymmetric",
	    "tf_half_pixel_for_nn", "tf_crop_and_resize" };
	static const char *const nms[] = { "round_prefer_floor",
	    "round_prefer_ceil", "floor", "ceil" };
	const aoe_tensor *x = aoe_in(g, n, 0), *ts, *tz, *tr;
	double sc[AOE_MAXDIM];
	int64_t sz[AOE_MAXDIM];
	const float *af;
	const char *s;
	int up = strcmp(n->op_type, "Upsample") == 0, nsc = 0, nsz = 0, i, c;
	int legacy = up || g->opset < 11;

	memset(r, 0, sizeof(*r));
	r->nd = x->ndim;
	s = aoe_attr_str(n, "mode", "nearest");
	if ((r->mode = lookup(s, modes, up || g->opset < 11 ? 2 : 3)) < 0) {
		/* Upsample and opset-10 Resize also spell it "bilinear". */
		if (legacy && strcmp(s, "bilinear") == 0)
			r->mode = M_LINEAR;
		else
			return aoe_err(AOE_EUNSUP, "%s '%s': mode '%s' not "
			    "supported", n->op_type, n->name, s);
	}
	if (aoe_attr_find(n, "axes") || aoe_attr_find(n, "antialias") ||
	    aoe_attr_find(n, "keep_aspect_ratio_policy"))
		return aoe_err(AOE_EUNSUP, "%s '%s': the opset-18 attributes "
		    "(axes, antialias, keep_aspect_ratio_policy) not supported",
		    n->op_type, n->name);
	if (legacy) {
		r->ctm = C_ASYM;
		r->nm = N_SIMPLE;
	} else {
		s = aoe_attr_str(n, "coordinate_transformation_mode",
		    "half_pixel");
		if ((r->ctm = lookup(s, ctms, 6)) < 0 ||
		    (r->ctm == C_TFNN && g->opset >= 13))
			return aoe_err(AOE_EUNSUP, "%s '%s': "
			    "coordinate_transformation_mode '%s' not supported",
			    n->op_type, n->name, s);
		s = aoe_attr_str(n, "nearest_mode", "round_prefer_floor");
		if ((r->nm = lookup(s, nms, 4)) < 0)
			return aoe_err(AOE_EUNSUP, "%s '%s': nearest_mode '%s' "
			    "not supported", n->op_type, n->name, s);
	}
	r->a = aoe_attr_float(n, "cubic_coeff_a", -0.75f);
	r->excl = aoe_attr_int(n, "exclude_outside", 0) != 0;
	r->extrap = aoe_attr_float(n, "extrapolation_value", 0.0f);
	/* Scales and sizes. */
	if (up && g->opset < 9) {
		if ((af = aoe_attr_floats(n, "scales", &nsc)) == NULL)
			return aoe_err(AOE_EDATA, "%s '%s': no scales",
			    n->op_type, n->name);
		for (i = 0; i < nsc && i < AOE_MAXDIM; i++)
			sc[i] = af[i];
	} else if (legacy) {
		if (n->nin < 2 || opt_in(g, n, 1) == NULL)
			return aoe_err(AOE_EDATA, "%s '%s': no scales input",
			    n->op_type, n->name);
		if ((nsc = const_floats(g, n, 1, sc, AOE_MAXDIM)) < 0)
			return nsc;
	} else {
		ts = n->nin > 2 ? opt_in(g, n, 2) : NULL;
		tz = n->nin > 3 ? opt_in(g, n, 3) : NULL;
		if (ts && aoe_tensor_numel(ts) > 0 &&
		    (nsc = const_floats(g, n, 2, sc, AOE_MAXDIM)) < 0)
			return nsc;
		if (tz && aoe_tensor_numel(tz) > 0 &&
		    (nsz = aoe_const_ints(g, n, 3, sz, AOE_MAXDIM)) < 0)
			return nsz;
		if ((nsc > 0) == (nsz > 0))
			return aoe_err(AOE_EDATA, "%s '%s': exactly one of "
			    "scales and sizes must be given", n->op_type,
			    n->name);
		if (r->ctm == C_CROP) {
			double roi[2 * AOE_MAXDIM];

			tr = n->nin > 1 ? opt_in(g, n, 1) : NULL;
			if (tr == NULL || (c = const_floats(g, n, 1, roi,
			    2 * AOE_MAXDIM)) < 0 || c != 2 * r->nd)
				return aoe_err(AOE_EDATA, "%s '%s': "
				    "tf_crop_and_resize needs a constant roi of "
				    "%d values", n->op_type, n->name, 2 * r->nd);
			memcpy(r->roi, roi, sizeof(roi));
		}
	}
	if ((nsc > 0 && nsc != r->nd) || (nsz > 0 && nsz != r->nd))
		return aoe_err(AOE_EDATA, "%s '%s': %d %s for rank %d",
		    n->op_type, n->name, nsc ? nsc : nsz,
		    nsc ? "scales" : "sizes", r->nd);
	for (i = 0; i < r->nd; i++) {
		r->in[i] = x->dims[i];
		if (nsz > 0) {
			if (sz[i] < 0)
				return aoe_err(AOE_EDATA, "%s '%s': negative "
				    "size %lld", n->op_type, n->name,
				    (long long)sz[i]);
			r->out[i] = sz[i];
			r->scale[i] = r->in[i] ? (double)sz[i] / r->in[i] : 1.0;
			r->lres[i] = (double)sz[i];
		} else {
			double f = r->ctm == C_CROP ?
			    (r->roi[r->nd + i] - r->roi[i]) : 1.0;

			if (!(sc[i] > 0.0))
				return aoe_err(AOE_EDATA, "%s '%s': scale %g is "
				    "not positive", n->op_type, n->name, sc[i]);
			r->scale[i] = sc[i];
			r->out[i] = (int64_t)floor((double)r->in[i] * f * sc[i]);
			r->lres[i] = sc[i] * (double)r->in[i];
		}
	}
	return 0;
}

static int
resize_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	struct rgeo r;
	int rc, up = strcmp(n->op_type, "Upsample") == 0;

	if ((rc = aoe_need_inputs(g, n, 1, up ? 2 : 4)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if ((rc = resize_geo(g, n, &r)) < 0)
		return rc;
	if (x->dtype != AOE_F32 && (r.mode != M_NEAREST ||
	    aoe_dtype_size(x->dtype) == 0 || x->dtype == AOE_STRING ||
	    r.ctm == C_CROP))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32, or any numeric type with nearest)", n->op_type,
		    n->name, aoe_dtype_name(x->dtype));
	if ((rc = layout_infer(g, n)) < 0 ||
	    (rc = aoe_set_output(g, n, 0, x->dtype, r.nd, r.out)) < 0)
		return rc;
	/* The blocked kernel needs no workspace. */
	if (x->layout == AOE_LAYOUT_8C) {
		n->scratch = 0;
		return 0;
	}
	return resize_scratch(g, n, &r, aoe_dtype_size(x->dtype));
}

/* The source coordinate of output index x along one axis. */
static double
src_coord(const struct rgeo *r, int ax, int64_t x)
{
	double s = r->scale[ax], in = (double)r->in[ax], lr = r->lres[ax];
	double st, en;

	switch (r->ctm) {
	case C_HALF:
		return (x + 0.5) / s - 0.5;
	case C_PYTORCH:
		return lr == 1.0 ? -0.5 : (x + 0.5) / s - 0.5;
	case C_ALIGN:
		return lr == 1.0 ? 0.0 : x * (in - 1) / (lr - 1);
	case C_TFNN:
		return (x + 0.5) / s;
	case C_CROP:
		st = r->roi[ax];
		en = r->roi[r->nd + ax];
		if (lr == 1.0)
			return (en - st) * (in - 1) / 2 + st * (in - 1);
		return x * (en - st) * (in - 1) / (lr - 1) + st * (in - 1);
	}
	return x / s;
}

/* Taps for one axis: idx[o * nt + t], w[...], and an extrapolation flag. */
struct taps {
	int nt;
	int64_t *idx;
	float *w;
	uint8_t *ex;
	int ident;
	/*
	 * A 2x upscale whose taps repeat with period 2 on [ilo, ihi):
	 * output 2i + p reads x[i + off[p][t]] with weight pw[p][t].
	 */
	int per2;
	int64_t ilo, ihi, off[2][4];
	float pw[2][4];
};

/* Does output pair i follow the period-2 pattern? */
static int
per2_match(const struct taps *tp, int64_t i)
{
	int p, t;

	for (p = 0; p < 2; p++)
		for (t = 0; t < tp->nt; t++) {
			int64_t k = (2 * i + p) * tp->nt + t;

			if (tp->idx[k] != i + tp->off[p][t] ||
			    tp->w[k] != tp->pw[p][t])
				return 0;
		}
	return 1;
}

/* Find the period-2 interior of a 2x upscale, if there is one. */
static void
find_per2(struct taps *tp, int64_t in)
{
	int64_t ref = in / 2, i;
	int p, t;

	for (p = 0; p < 2; p++)
		for (t = 0; t < tp->nt; t++) {
			int64_t k = (2 * ref + p) * tp->nt + t;

			tp->off[p][t] = tp->idx[k] - ref;
			tp->pw[p][t] = tp->w[k];
		}
	for (i = ref; i > 0 && per2_match(tp, i - 1); i--)
		;
	tp->ilo = i;
	for (i = ref + 1; i < in && per2_match(tp, i); i++)
		;
	tp->ihi = i;
	tp->per2 = tp->ihi - tp->ilo >= 8;
}

static int
make_taps(const struct rgeo *r, int ax, struct taps *tp)
{
	int64_t in = r->in[ax], out = r->out[ax], o, t;
	int nt = r->mode == M_NEAREST ? 1 : r->mode == M_LINEAR ? 2 : 4;

	tp->nt = nt;
	tp->idx = malloc((size_t)(out * nt + 1) * sizeof(int64_t));
	tp->w = malloc((size_t)(out * nt + 1) * sizeof(float));
	tp->ex = malloc((size_t)out + 1);
	if (tp->idx == NULL || tp->w == NULL || tp->ex == NULL)
		return -1;
	tp->ident = in == out;
	for (o = 0; o < out; o++) {
		double xo = src_coord(r, ax, o), fl = floor(xo), fr = xo - fl;
		int64_t *id = tp->idx + o * nt, x0 = (int64_t)fl;
		float *w = tp->w + o * nt;

		tp->ex[o] = r->ctm == C_CROP && (xo < 0 || xo > in - 1);
		if (r->mode == M_NEAREST) {
			int64_t v;

			switch (r->nm) {
			case N_RPF:
				v = fr == 0 ? x0 : fr <= 0.5 ? x0 : x0 + 1;
				break;
			case N_RPC:
				v = fr < 0.5 ? x0 : x0 + 1;
				break;
			case N_FLOOR:
				v = x0;
				break;
			case N_CEIL:
				v = fr == 0 ? x0 : x0 + 1;
				break;
			default:
				/* ORT's legacy rule: ceil when shrinking. */
				v = r->scale[ax] < 1.0 ? (int64_t)ceil(xo) :
				    (int64_t)xo;
				break;
			}
			id[0] = v < 0 ? 0 : v >= in ? in - 1 : v;
			w[0] = 1.0f;
		} else {
			double cw[4], sum = 0;

			if (r->mode == M_LINEAR) {
				cw[0] = 1.0 - fr;
				cw[1] = fr;
			} else {
				double A = r->a, s1 = fr + 1, s2 = 1 - fr,
				    s3 = 2 - fr;

				cw[0] = ((A * s1 - 5 * A) * s1 + 8 * A) * s1 -
				    4 * A;
				cw[1] = ((A + 2) * fr - (A + 3)) * fr * fr + 1;
				cw[2] = ((A + 2) * s2 - (A + 3)) * s2 * s2 + 1;
				cw[3] = ((A * s3 - 5 * A) * s3 + 8 * A) * s3 -
				    4 * A;
				x0 -= 1;
			}
			for (t = 0; t < nt; t++) {
				int64_t q = x0 + t;

				if (r->excl && (q < 0 || q >= in))
					cw[t] = 0.0;
				sum += cw[t];
				id[t] = q < 0 ? 0 : q >= in ? in - 1 : q;
			}
			for (t = 0; t < nt; t++)
				w[t] = (float)(r->excl && sum != 0.0 ?
				    cw[t] / sum : cw[t]);
		}
		/* The identity: o maps to o with weight 1 alone. */
		if (tp->ex[o])
			tp->ident = 0;
		for (t = 0; t < nt && tp->ident; t++)
			if (w[t] != 0.0f && (id[t] != o || w[t] != 1.0f))
				tp->ident = 0;
	}
	if (out == 2 * in && in >= 8 && r->mode != M_NEAREST &&
	    r->ctm != C_CROP)
		find_per2(tp, in);
	return 0;
}

static void
free_taps(struct taps *tp)
{
	free(tp->idx);
	free(tp->w);
	free(tp->ex);
}

/*
 * The passes: taps for every axis, and the axes (last first) whose
 * mapping is not the identity.  Returns 0 or -1 when out of memory.
 */
static int
resize_plan(const struct rgeo *r, struct taps *tp, int *ax, int *np)
{
	int i;

	memset(tp, 0, AOE_MAXDIM * sizeof(*tp));
	*np = 0;
	for (i = r->nd - 1; i >= 0; i--) {
		if (make_taps(r, i, &tp[i]) < 0)
			return -1;
		if (!tp[i].ident)
			ax[(*np)++] = i;
	}
	return 0;
}

/* Nearest over the last two axes only: one gather pass, no workspace. */
static int
resize_one_pass(const struct rgeo *r, const int *ax, int np)
{
	return np <= 1 || (r->mode == M_NEAREST && r->nd >= 2 &&
	    r->ctm != C_CROP && ax[0] >= r->nd - 2 &&
	    (np == 1 || (np == 2 && ax[1] == r->nd - 2)));
}

/* The largest intermediate result, in elements. */
static int64_t
resize_big(const struct rgeo *r, const int *ax, int np)
{
	int64_t cur[AOE_MAXDIM], big = 0, sz;
	int p;

	memcpy(cur, r->in, sizeof(cur));
	for (p = 0; p < np; p++) {
		cur[ax[p]] = r->out[ax[p]];
		sz = prod(cur, 0, r->nd);
		if (sz > big)
			big = sz;
	}
	return big;
}

/* Two ping-pong buffers for the intermediate passes, when needed. */
static int
resize_scratch(aoe_graph *g, aoe_node *n, const struct rgeo *r, size_t es)
{
	struct taps tp[AOE_MAXDIM];
	int ax[AOE_MAXDIM], np, i, rc = 0;

	n->scratch = 0;
	if (resize_plan(r, tp, ax, &np) < 0)
		rc = aoe_err(AOE_ENOMEM, "%s '%s': out of memory", n->op_type,
		    n->name);
	else if (!resize_one_pass(r, ax, np))
		n->scratch = 2 * (((size_t)resize_big(r, ax, np) * es + 63) /
		    64 * 64);
	for (i = 0; i < r->nd; i++)
		free_taps(&tp[i]);
	return rc;
}

/* A pass of Resize, as the chunk functions see it. */
struct pass_ctx {
	const struct taps *tp;
	const void *x;
	void *y;
	int64_t in, out, inner, n, nch;
	size_t es;
	float extrap;
};

static void
pass_f32_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct pass_ctx *c = ctx;
	const struct taps *tp = c->tp;
	const float *x = c->x;
	float *y = c->y, extrap = c->extrap;
	int64_t r = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->n, c->nch, chunk + 1);
	int64_t in = c->in, out = c->out, inner = c->inner;

	for (; r < end; r++) {
		int64_t o = r % out, b = r / out, j, t;
		const int64_t *id = tp->idx + o * tp->nt;
		const float *w = tp->w + o * tp->nt;
		const float *xb = x + b * in * inner;
		float *yr = y + r * inner;

		if (tp->ex[o]) {
			for (j = 0; j < inner; j++)
				yr[j] = extrap;
			continue;
		}
		if (inner == 1) {
			float s = 0.0f;

			for (t = 0; t < tp->nt; t++)
				s += w[t] * xb[id[t]];
			yr[0] = s;
			continue;
		}
		{
			const float *x0 = xb + id[0] * inner;
			float w0 = w[0];

			for (j = 0; j < inner; j++)
				yr[j] = w0 * x0[j];
		}
		for (t = 1; t < tp->nt; t++) {
			const float *xt = xb + id[t] * inner;
			float wt = w[t];

			if (wt == 0.0f)
				continue;
			for (j = 0; j < inner; j++)
				yr[j] += wt * xt[j];
		}
	}
}

/* One weighted pass (float32): [outer][in][inner] -> [outer][out][inner]. */
static void
pass_f32(const struct taps *tp, const float *x, float *y, int64_t outer,
    int64_t in, int64_t out, int64_t inner, float extrap, int nthreads,
    int64_t grain)
{
	int64_t rows = outer * out;
	int nt = nthreads_for(rows * inner * tp->nt, grain, nthreads);
	struct pass_ctx c;

	c.tp = tp;
	c.x = x;
	c.y = y;
	c.in = in;
	c.out = out;
	c.inner = inner;
	c.extrap = extrap;
	c.n = rows;
	c.nch = aoe_nchunks(rows, nt);
	aoe_parallel(nt, c.nch, pass_f32_chunk, &c);
}

/* Output o of one row, from the tap table. */
static inline float
tap_one(const struct taps *tp, const float *xr, int64_t o)
{
	const int64_t *id = tp->idx + o * tp->nt;
	const float *w = tp->w + o * tp->nt;
	float s = w[0] * xr[id[0]];
	int t;

	for (t = 1; t < tp->nt; t++)
		s += w[t] * xr[id[t]];
	return s;
}

/*
 * Along the last axis with inner == 1: a gather per row, except that the
 * interior of a 2x upscale is computed as two shifted vector streams
 * (even and odd outputs) and interleaved.
 */
static void
pass_f32_last_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct pass_ctx *c = ctx;
	const struct taps *tp = c->tp;
	const float *x = c->x;
	float *y = c->y, extrap = c->extrap;
	int64_t b = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->n, c->nch, chunk + 1);
	int64_t in = c->in, out = c->out;

	for (; b < end; b++) {
		const float *xr = x + b * in;
		float *yr = y + b * out;
		int64_t o = 0, i;

#ifdef HAVE_AVX2
		if (tp->per2) {
			for (; o < 2 * tp->ilo; o++)
				yr[o] = tap_one(tp, xr, o);
			for (i = tp->ilo; i + 8 <= tp->ihi; i += 8) {
				__m256 e, d, lo, hi;
				int t;

				e = _mm256_mul_ps(V1(tp->pw[0][0]),
				    _mm256_loadu_ps(xr + i + tp->off[0][0]));
				d = _mm256_mul_ps(V1(tp->pw[1][0]),
				    _mm256_loadu_ps(xr + i + tp->off[1][0]));
				for (t = 1; t < tp->nt; t++) {
					e = _mm256_fmadd_ps(V1(tp->pw[0][t]),
					    _mm256_loadu_ps(xr + i +
					    tp->off[0][t]), e);
					d = _mm256_fmadd_ps(V1(tp->pw[1][t]),
					    _mm256_loadu_ps(xr + i +
					    tp->off[1][t]), d);
				}
				lo = _mm256_unpacklo_ps(e, d);
				hi = _mm256_unpackhi_ps(e, d);
				_mm256_storeu_ps(yr + 2 * i,
				    _mm256_permute2f128_ps(lo, hi, 0x20));
				_mm256_storeu_ps(yr + 2 * i + 8,
				    _mm256_permute2f128_ps(lo, hi, 0x31));
			}
			o = 2 * i;
		}
#endif
		(void)i;
		for (; o < out; o++)
			yr[o] = tap_one(tp, xr, o);
		for (o = 0; o < out; o++)
			if (tp->ex[o])
				yr[o] = extrap;
	}
}

static void
pass_f32_last(const struct taps *tp, const float *x, float *y, int64_t outer,
    int64_t in, int64_t out, float extrap, int nthreads, int64_t grain)
{
	int nt = nthreads_for(outer * out * tp->nt, grain, nthreads);
	struct pass_ctx c;

	c.tp = tp;
	c.x = x;
	c.y = y;
	c.in = in;
	c.out = out;
	c.extrap = extrap;
	c.n = outer;
	c.nch = aoe_nchunks(outer, nt);
	aoe_parallel(nt, c.nch, pass_f32_last_chunk, &c);
}

/* Nearest along the last axis, 4-byte elements: a gather per row. */
static void
nearest_last4_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct pass_ctx *c = ctx;
	const struct taps *tp = c->tp;
	int64_t r = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->n, c->nch, chunk + 1);
	int64_t in = c->in, out = c->out;

	for (; r < end; r++) {
		const uint32_t *xr = (const uint32_t *)c->x + r * in;
		uint32_t *yr = (uint32_t *)c->y + r * out;
		int64_t o;

		for (o = 0; o < out; o++)
			yr[o] = xr[tp->idx[o]];
		for (o = 0; o < out; o++)
			if (tp->ex[o])
				memcpy(&yr[o], &c->extrap, 4);
	}
}

/* Nearest along any axis: a copy of a row of inner elements per output. */
static void
nearest_rows_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct pass_ctx *c = ctx;
	const struct taps *tp = c->tp;
	const char *x = c->x;
	char *y = c->y;
	int64_t r = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->n, c->nch, chunk + 1);
	int64_t in = c->in, out = c->out, inner = c->inner;
	size_t es = c->es;

	for (; r < end; r++) {
		int64_t o = r % out, b = r / out, j;
		char *yr = y + r * inner * es;

		if (tp->ex[o]) {
			for (j = 0; j < inner; j++)
				memcpy(yr + j * es, &c->extrap, es);
			continue;
		}
		memcpy(yr, x + (b * in + tp->idx[o]) * inner * es,
		    (size_t)inner * es);
	}
}

/* One nearest pass for any element size. */
static void
pass_nearest(const struct taps *tp, const void *x, void *y, int64_t outer,
    int64_t in, int64_t out, int64_t inner, size_t es, float extrap,
    int nthreads, int64_t grain)
{
	int64_t rows = outer * out;
	int nt = nthreads_for(rows * inner, grain, nthreads);
	struct pass_ctx c;

	c.tp = tp;
	c.x = x;
	c.y = y;
	c.in = in;
	c.out = out;
	c.inner = inner;
	c.es = es;
	c.extrap = extrap;
	if (inner == 1 && es == 4) {
		c.n = outer;
		c.nch = aoe_nchunks(outer, nt);
		aoe_parallel(nt, c.nch, nearest_last4_chunk, &c);
		return;
	}
	c.n = rows;
	c.nch = aoe_nchunks(rows, nt);
	aoe_parallel(nt, c.nch, nearest_rows_chunk, &c);
}

/* y[i * f + r] = x[i]: an integer nearest upscale of one row. */
static void
rep4(uint32_t *restrict y, const uint32_t *restrict x, int64_t w, int64_t f)
{
	int64_t i = 0, r;

#ifdef HAVE_AVX2
	if (f == 2) {
		for (; i + 8 <= w; i += 8) {
			__m256 v = _mm256_loadu_ps((const float *)x + i);
			__m256 lo = _mm256_unpacklo_ps(v, v);
			__m256 hi = _mm256_unpackhi_ps(v, v);

			_mm256_storeu_ps((float *)y + 2 * i,
			    _mm256_permute2f128_ps(lo, hi, 0x20));
			_mm256_storeu_ps((float *)y + 2 * i + 8,
			    _mm256_permute2f128_ps(lo, hi, 0x31));
		}
	}
#endif
	for (; i < w; i++)
		for (r = 0; r < f; r++)
			y[i * f + r] = x[i];
}

struct nearest2d_ctx {
	const struct taps *th, *tw;
	const char *x;
	char *y;
	int64_t H, W, OH, OW, fw, planes, nch;
	size_t es;
};

static void
nearest2d_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct nearest2d_ctx *c = ctx;
	const struct taps *th = c->th, *tw = c->tw;
	const char *x = c->x;
	char *y = c->y;
	int64_t pl = aoe_chunk_lo(c->planes, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->planes, c->nch, chunk + 1);
	int64_t H = c->H, W = c->W, OH = c->OH, OW = c->OW, fw = c->fw;
	size_t es = c->es;

	for (; pl < end; pl++) {
		int64_t oh, ow;

		for (oh = 0; oh < OH; oh++) {
			char *yr = y + (pl * OH + oh) * OW * es;
			const char *xr = x + (pl * H + th->idx[oh]) * W * es;

			if (oh > 0 && th->idx[oh] == th->idx[oh - 1]) {
				memcpy(yr, yr - OW * es, (size_t)OW * es);
				continue;
			}
			if (es == 4 && fw > 0)
				rep4((uint32_t *)yr, (const uint32_t *)xr, W, fw);
			else if (es == 4)
				for (ow = 0; ow < OW; ow++)
					((uint32_t *)yr)[ow] =
					    ((const uint32_t *)xr)[tw->idx[ow]];
			else
				for (ow = 0; ow < OW; ow++)
					memcpy(yr + ow * es,
					    xr + tw->idx[ow] * es, es);
		}
	}
}

/* Nearest on the last two axes in one pass (the common 2-D upsample). */
static void
nearest2d(const struct taps *th, const struct taps *tw, const void *x,
    void *y, int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW,
    size_t es, int nthreads, int64_t grain)
{
	int64_t fw = W > 0 && OW % W == 0 ? OW / W : 0, o;
	int nt = nthreads_for(planes * OH * OW, grain, nthreads);
	struct nearest2d_ctx c;

	/* An integer upscale along W: each element repeated fw times. */
	for (o = 0; o < OW && fw > 0; o++)
		if (tw->idx[o] != o / fw)
			fw = 0;
	c.th = th;
	c.tw = tw;
	c.x = x;
	c.y = y;
	c.H = H;
	c.W = W;
	c.OH = OH;
	c.OW = OW;
	c.fw = fw;
	c.es = es;
	c.planes = planes;
	c.nch = aoe_nchunks(planes, nt);
	aoe_parallel(nt, c.nch, nearest2d_chunk, &c);
}

static int
resize_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int64_t cur[AOE_MAXDIM], big;
	size_t es = aoe_dtype_size(x->dtype);
	struct taps tp[AOE_MAXDIM];
	struct rgeo r;
	int ax[AOE_MAXDIM], np = 0, i, rc, p;
	const void *src;
	void *dst, *buf[2];

	if (x->layout == AOE_LAYOUT_8C)
		return run_8c(k);
	if ((rc = resize_geo(k->g, n, &r)) < 0)
		return rc;
	if (resize_plan(&r, tp, ax, &np) < 0) {
		rc = aoe_err(AOE_ENOMEM, "%s '%s': out of memory", n->op_type,
		    n->name);
		goto done;
	}
	rc = 0;
	if (aoe_tensor_numel(y) == 0)
		goto done;
	if (np == 0) {
		memcpy(y->data, x->data, aoe_tensor_nbytes(x));
		goto done;
	}
	if (np > 1 && resize_one_pass(&r, ax, np)) {
		nearest2d(&tp[r.nd - 2], &tp[r.nd - 1], x->data, y->data,
		    prod(r.in, 0, r.nd - 2), r.in[r.nd - 2], r.in[r.nd - 1],
		    r.out[r.nd - 2], r.out[r.nd - 1], es, k->nthreads, grain);
		goto done;
	}
	if (np > 1 && k->scratch == NULL) {
		rc = aoe_err(AOE_EINTERNAL, "%s '%s': no workspace",
		    n->op_type, n->name);
		goto done;
	}
	big = resize_big(&r, ax, np);
	buf[0] = k->scratch;
	buf[1] = (char *)k->scratch + ((size_t)big * es + 63) / 64 * 64;
	memcpy(cur, r.in, sizeof(cur));
	src = x->data;
	for (p = 0; p < np; p++) {
		int a = ax[p];
		int64_t outer = prod(cur, 0, a), inner = prod(cur, a + 1, r.nd);

		dst = p == np - 1 ? y->data : buf[p & 1];
		if (r.mode == M_NEAREST)
			pass_nearest(&tp[a], src, dst, outer, cur[a], r.out[a],
			    inner, es, r.extrap, k->nthreads, grain);
		else if (inner == 1)
			pass_f32_last(&tp[a], src, dst, outer, cur[a], r.out[a],
			    r.extrap, k->nthreads, grain);
		else
			pass_f32(&tp[a], src, dst, outer, cur[a], r.out[a],
			    inner, r.extrap, k->nthreads, grain);
		cur[a] = r.out[a];
		src = dst;
	}
done:
	for (i = 0; i < r.nd; i++)
		free_taps(&tp[i]);
	return rc;
}

/*
 * The blocked layout NCHW8c (see kernel.h and the top of this file).  A
 * pixel is one vector of eight channels, so a window's reduction is a
 * vector max or sum over its pixels and a resampled pixel a weighted sum
 * of vectors; nothing is transposed.  Each kernel follows the plain
 * path's order of operations (rows reduced across the kernel width,
 * then down the height; Resize's passes last axis first, fused where
 * the plain 2x interior is fused), so that both layouts give the same
 * floats.  The work is rows of output pixels of one channel block of
 * one image; the lanes past C in the last block are written as zero.
 */
#ifdef HAVE_AVX2
/* The lanes of block blk (image * cb + block) that hold channels. */
static inline __m256
lanes_of(int64_t blk, int64_t c, int64_t cb)
{
	return _mm256_castsi256_ps(aoe_lane_mask((int)min64(8,
	    c - blk % cb * 8)));
}

/* The taps [*lo, *hi) of a window from s0, dilation d, inside [0, in). */
static inline void
valid_taps(int64_t s0, int64_t k, int64_t d, int64_t in, int64_t *lo,
    int64_t *hi)
{
	/* Without dilation (the usual case) there is nothing to divide. */
	if (d == 1) {
		*lo = s0 < 0 ? -s0 : 0;
		*hi = max64(0, min64(k, in - s0));
	} else {
		*lo = s0 < 0 ? ceildiv(-s0, d) : 0;
		*hi = in - 1 - s0 < 0 ? 0 : min64(k, (in - 1 - s0) / d + 1);
	}
	if (*lo > *hi)
		*lo = *hi;
}

struct pool8c_ctx {
	const float *x;
	float *y;
	const float *invh, *invw;	/* 1/count per axis (average) */
	int64_t H, W, OH, OW, kh, kw, sh, sw, dh, dw, ph, pw;
	int64_t c, cb, rows, nch;
};

/* Output row oh of block blk; avg is a constant where this is inlined. */
static inline __attribute__((always_inline)) void
pool8c_row(const struct pool8c_ctx *q, int64_t blk, int64_t oh, int avg)
{
	const float *xb = q->x + blk * q->H * q->W * 8;
	float *yr = q->y + (blk * q->OH + oh) * q->OW * 8;
	const __m256 m = lanes_of(blk, q->c, q->cb);
	const __m256 none = _mm256_set1_ps(avg ? 0.0f : -INFINITY);
	int64_t ih0 = oh * q->sh - q->ph, r0, r1, ow, c0, c1, t, u;

	valid_taps(ih0, q->kh, q->dh, q->H, &r0, &r1);
	for (ow = 0; ow < q->OW; ow++) {
		int64_t iw0 = ow * q->sw - q->pw;
		__m256 acc;

		valid_taps(iw0, q->kw, q->dw, q->W, &c0, &c1);
		if (r0 == r1) {
			/* As the plain path: no input row in the window. */
			acc = _mm256_set1_ps(avg ? NAN : -INFINITY);
			_mm256_storeu_ps(yr + ow * 8, _mm256_and_ps(acc, m));
			continue;
		}
		acc = none;
		for (t = r0; t < r1; t++) {
			const float *xr = xb + ((ih0 + t * q->dh) * q->W +
			    iw0 + c0 * q->dw) * 8;
			__m256 h = none;

			if (c0 < c1)
				h = _mm256_loadu_ps(xr);
			for (u = 1; u < c1 - c0; u++) {
				__m256 v = _mm256_loadu_ps(xr + u * q->dw * 8);

				h = avg ? _mm256_add_ps(h, v) :
				    _mm256_max_ps(h, v);
			}
			if (t == r0)
				acc = h;
			else
				acc = avg ? _mm256_add_ps(acc, h) :
				    _mm256_max_ps(acc, h);
		}
		if (avg)
			acc = _mm256_mul_ps(_mm256_mul_ps(acc,
			    _mm256_set1_ps(q->invh[oh])),
			    _mm256_set1_ps(q->invw[ow]));
		_mm256_storeu_ps(yr + ow * 8, _mm256_and_ps(acc, m));
	}
}

static void
maxpool8c_chunk(void *arg, int64_t chunk, int tid)
{
	const struct pool8c_ctx *q = arg;
	int64_t r = aoe_chunk_lo(q->rows, q->nch, chunk);
	int64_t end = aoe_chunk_lo(q->rows, q->nch, chunk + 1);

	for (; r < end; r++)
		pool8c_row(q, r / q->OH, r % q->OH, 0);
}

static void
avgpool8c_chunk(void *arg, int64_t chunk, int tid)
{
	const struct pool8c_ctx *q = arg;
	int64_t r = aoe_chunk_lo(q->rows, q->nch, chunk);
	int64_t end = aoe_chunk_lo(q->rows, q->nch, chunk + 1);

	for (; r < end; r++)
		pool8c_row(q, r / q->OH, r % q->OH, 1);
}

/* MaxPool and AveragePool, 2-D. */
static int
pool8c_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR), planes;
	struct pool8c_ctx q;
	struct pgeo p;
	float *inv = NULL;
	int rc, nt;

	if ((rc = pool_geo(k->g, k->n, x, &p)) < 0)
		return rc;
	q.x = x->data;
	q.y = aoe_out(k->g, k->n, 0)->data;
	q.H = p.in[0];
	q.W = p.in[1];
	q.OH = p.out[0];
	q.OW = p.out[1];
	q.kh = p.k[0];
	q.kw = p.k[1];
	q.sh = p.s[0];
	q.sw = p.s[1];
	q.dh = p.d[0];
	q.dw = p.d[1];
	q.ph = p.pb[0];
	q.pw = p.pb[1];
	q.c = x->dims[1];
	q.cb = ceildiv(q.c, 8);
	q.rows = x->dims[0] * q.cb * q.OH;
	q.invh = q.invw = NULL;
	if (q.rows == 0 || q.OW == 0)
		return 0;
	if (p.avg) {
		inv = malloc((size_t)(q.OH + q.OW) * sizeof(float));
		if (inv == NULL)
			return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
			    k->n->op_type, k->n->name);
		avg_counts(inv, q.OH, q.H, q.kh, q.sh, q.dh, p.pb[0], p.pe[0],
		    p.cip);
		avg_counts(inv + q.OH, q.OW, q.W, q.kw, q.sw, q.dw, p.pb[1],
		    p.pe[1], p.cip);
		q.invh = inv;
		q.invw = inv + q.OH;
	}
	/* The plain path's measure of the work, for the same "par". */
	planes = x->dims[0] * q.c;
	nt = nthreads_for(planes * (q.H * q.W + q.OH * q.OW), grain,
	    k->nthreads);
	q.nch = aoe_nchunks(q.rows, nt);
	aoe_parallel(nt, q.nch, p.avg ? avgpool8c_chunk : maxpool8c_chunk,
	    &q);
	free(inv);
	return 0;
}

struct gpool8c_ctx {
	const float *x;
	float *y;
	int64_t hw, c, cb, blocks, nch;
	int avg;
};

/*
 * Blocks of GlobalAveragePool and GlobalMaxPool: sixteen partial results
 * over the pixels, folded in order, as the plain path does per channel.
 */
static void
gpool8c_chunk(void *arg, int64_t chunk, int tid)
{
	const struct gpool8c_ctx *q = arg;
	int64_t blk = aoe_chunk_lo(q->blocks, q->nch, chunk);
	int64_t end = aoe_chunk_lo(q->blocks, q->nch, chunk + 1), hw = q->hw;

	for (; blk < end; blk++) {
		const float *xp = q->x + blk * hw * 8;
		__m256 a[16], v;
		int64_t i;
		int j;

		if (hw == 0)
			v = _mm256_set1_ps(q->avg ? NAN : -INFINITY);
		else if (q->avg) {
			for (j = 0; j < 16; j++)
				a[j] = _mm256_setzero_ps();
			for (i = 0; i + 16 <= hw; i += 16)
				for (j = 0; j < 16; j++)
					a[j] = _mm256_add_ps(a[j],
					    _mm256_loadu_ps(xp + (i + j) * 8));
			for (; i < hw; i++)
				a[0] = _mm256_add_ps(a[0],
				    _mm256_loadu_ps(xp + i * 8));
			for (j = 1; j < 16; j++)
				a[0] = _mm256_add_ps(a[0], a[j]);
			v = _mm256_div_ps(a[0], _mm256_set1_ps((float)hw));
		} else {
			for (j = 0; j < 16; j++)
				a[j] = _mm256_loadu_ps(xp);
			for (i = 0; i + 16 <= hw; i += 16)
				for (j = 0; j < 16; j++)
					a[j] = _mm256_max_ps(a[j],
					    _mm256_loadu_ps(xp + (i + j) * 8));
			for (; i < hw; i++)
				a[0] = _mm256_max_ps(a[0],
				    _mm256_loadu_ps(xp + i * 8));
			for (j = 1; j < 16; j++)
				a[0] = _mm256_max_ps(a[0], a[j]);
			v = a[0];
		}
		_mm256_storeu_ps(q->y + blk * 8, _mm256_and_ps(v,
		    lanes_of(blk, q->c, q->cb)));
	}
}

static int
gpool8c_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	struct gpool8c_ctx q;
	int nt;

	q.x = x->data;
	q.y = aoe_out(k->g, k->n, 0)->data;
	q.hw = x->dims[2] * x->dims[3];
	q.c = x->dims[1];
	q.cb = ceildiv(q.c, 8);
	q.blocks = x->dims[0] * q.cb;
	q.avg = strcmp(k->n->op_type, "GlobalAveragePool") == 0;
	if (q.blocks == 0)
		return 0;
	nt = nthreads_for(x->dims[0] * q.c * q.hw, grain, k->nthreads);
	q.nch = aoe_nchunks(q.blocks, nt);
	aoe_parallel(nt, q.nch, gpool8c_chunk, &q);
	return 0;
}

struct resize8c_ctx {
	const struct taps *th, *tw;
	const float *x;
	float *y;
	int64_t H, W, OH, OW, c, cb, rows, nch;
	/*
	 * The outputs along each axis that the plain path computes with
	 * fused multiply-adds (the interior of a 2x upscale of a last axis):
	 * [fh0, fh1) and [fw0, fw1).
	 */
	int64_t fh0, fh1, fw0, fw1;
	int nearest;
	float extrap;
};

/* The outputs of a last-axis pass that pass_f32_last_chunk fuses. */
static void
fused_range(const struct taps *tp, int64_t *lo, int64_t *hi)
{
	*lo = *hi = 0;
	if (tp->per2 && !tp->ident) {
		*lo = 2 * tp->ilo;
		*hi = 2 * (tp->ilo + (tp->ihi - tp->ilo) / 8 * 8);
	}
}

/*
 * Input row ih resampled along the width at output column ow: the plain
 * path's first pass, for one pixel.
 */
static inline __m256
resize8c_w(const struct resize8c_ctx *q, const float *xb, int64_t ih,
    int64_t ow)
{
	const struct taps *tw = q->tw;
	const int64_t *id = tw->idx + ow * tw->nt;
	const float *w = tw->w + ow * tw->nt;
	const float *xr = xb + ih * q->W * 8;
	int fused = ow >= q->fw0 && ow < q->fw1, t;
	__m256 s;

	if (tw->ex[ow])
		return _mm256_set1_ps(q->extrap);
	s = _mm256_mul_ps(_mm256_set1_ps(w[0]), _mm256_loadu_ps(xr +
	    id[0] * 8));
	for (t = 1; t < tw->nt; t++) {
		__m256 v = _mm256_loadu_ps(xr + id[t] * 8);

		s = fused ? _mm256_fmadd_ps(_mm256_set1_ps(w[t]), v, s) :
		    _mm256_add_ps(s, _mm256_mul_ps(_mm256_set1_ps(w[t]), v));
	}
	return s;
}

static void
resize8c_chunk(void *arg, int64_t chunk, int tid)
{
	const struct resize8c_ctx *q = arg;
	const struct taps *th = q->th, *tw = q->tw;
	int64_t r = aoe_chunk_lo(q->rows, q->nch, chunk);
	int64_t end = aoe_chunk_lo(q->rows, q->nch, chunk + 1);
	const __m256 ex = _mm256_set1_ps(q->extrap);

	for (; r < end; r++) {
		int64_t blk = r / q->OH, oh = r % q->OH, ow;
		const float *xb = q->x + blk * q->H * q->W * 8;
		float *yr = q->y + (blk * q->OH + oh) * q->OW * 8;
		const int64_t *id = th->idx + oh * th->nt;
		const float *w = th->w + oh * th->nt;
		const __m256 m = lanes_of(blk, q->c, q->cb);
		int fused = oh >= q->fh0 && oh < q->fh1, t;

		for (ow = 0; ow < q->OW; ow++) {
			__m256 s;

			if (th->ex[oh])
				s = ex;
			else if (q->nearest)
				s = tw->ex[ow] ? ex : _mm256_loadu_ps(xb +
				    (id[0] * q->W + tw->idx[ow]) * 8);
			else {
				s = _mm256_mul_ps(_mm256_set1_ps(w[0]),
				    resize8c_w(q, xb, id[0], ow));
				for (t = 1; t < th->nt; t++) {
					__m256 v;

					/* Skip zero weights, as plain does. */
					if (w[t] == 0.0f && !fused)
						continue;
					v = resize8c_w(q, xb, id[t], ow);
					s = fused ? _mm256_fmadd_ps(
					    _mm256_set1_ps(w[t]), v, s) :
					    _mm256_add_ps(s, _mm256_mul_ps(
					    _mm256_set1_ps(w[t]), v));
				}
			}
			_mm256_storeu_ps(yr + ow * 8, _mm256_and_ps(s, m));
		}
	}
}

/* Resize and Upsample on the last two axes. */
static int
resize8c_run(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	struct taps tp[AOE_MAXDIM];
	struct resize8c_ctx q;
	struct rgeo r;
	int ax[AOE_MAXDIM], np, i, rc = 0, nt;

	if ((rc = resize_geo(k->g, k->n, &r)) < 0)
		return rc;
	if (resize_plan(&r, tp, ax, &np) < 0) {
		rc = aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    k->n->op_type, k->n->name);
		goto done;
	}
	q.th = &tp[2];
	q.tw = &tp[3];
	q.x = x->data;
	q.y = aoe_out(k->g, k->n, 0)->data;
	q.H = r.in[2];
	q.W = r.in[3];
	q.OH = r.out[2];
	q.OW = r.out[3];
	q.c = x->dims[1];
	q.cb = ceildiv(q.c, 8);
	q.rows = x->dims[0] * q.cb * q.OH;
	q.nearest = r.mode == M_NEAREST;
	q.extrap = r.extrap;
	fused_range(q.tw, &q.fw0, &q.fw1);
	/* The height pass is a last-axis pass only when one column is left. */
	q.fh0 = q.fh1 = 0;
	if (q.OW == 1)
		fused_range(q.th, &q.fh0, &q.fh1);
	if (q.rows == 0 || q.OW == 0)
		goto done;
	nt = nthreads_for(x->dims[0] * q.c * q.OH * q.OW *
	    (q.nearest ? 1 : q.th->nt), grain, k->nthreads);
	q.nch = aoe_nchunks(q.rows, nt);
	aoe_parallel(nt, q.nch, resize8c_chunk, &q);
done:
	for (i = 0; i < r.nd; i++)
		free_taps(&tp[i]);
	return rc;
}

static int
run_8c(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	const aoe_tensor *y = aoe_out(k->g, n, 0);

	if (y->layout != AOE_LAYOUT_8C || !aoe_pool_8c_ok(k->g, n))
		return aoe_err(AOE_EINTERNAL, "%s '%s': an NCHW8c input needs "
		    "an NCHW8c output and a node that can run so", n->op_type,
		    n->name);
	if (strcmp(n->op_type, "MaxPool") == 0 ||
	    strcmp(n->op_type, "AveragePool") == 0)
		return pool8c_run(k);
	if (strncmp(n->op_type, "Global", 6) == 0)
		return gpool8c_run(k);
	return resize8c_run(k);
}
#else
static int
run_8c(aoe_kctx *k)
{
	return aoe_err(AOE_EUNSUP, "%s '%s': NCHW8c needs an AVX2 build",
	    k->n->op_type, k->n->name);
}
#endif

#ifdef HAVE_AVX2
/*
 * Whether axis a of length 1 maps onto itself: pytorch_half_pixel (or a
 * crop) samples a point off the only pixel, so the plain path makes a
 * pass of weights summing to 1 over copies of it, which the blocked
 * kernel leaves out.  A batch or channel axis must be so.
 */
static int
one_to_one(const struct rgeo *r, const struct taps *tp, int a)
{
	double sum = 0;
	int t;

	if (r->in[a] != 1 || r->out[a] != 1 || tp->ex[0])
		return 0;
	for (t = 0; t < tp->nt; t++)
		sum += tp->w[t];
	return fabs(sum - 1) < 1e-6;
}
#endif

/*
 * Whether node n can run on an NCHW8c input: a 4-D float32 input of
 * known shape, and for MaxPool no Indices output, for the pools valid
 * attributes, for Resize and Upsample constant scales or sizes that
 * leave the batch and channel axes alone (see one_to_one()).  May leave
 * a message in aoe_errmsg() when it returns 0.
 */
int
aoe_pool_8c_ok(const aoe_graph *g, const aoe_node *n)
{
#ifdef HAVE_AVX2
	const aoe_tensor *x = n->nin >= 1 ? opt_in(g, n, 0) : NULL;
	struct taps tp[AOE_MAXDIM];
	struct pgeo p;
	struct rgeo r;
	int ax[AOE_MAXDIM], np, i, ok;

	if (x == NULL || n->nout < 1 || opt_out(g, n, 0) == NULL ||
	    x->dtype != AOE_F32 || x->ndim != 4)
		return 0;
	for (i = 0; i < 4; i++)
		if (x->dims[i] <= 0)
			return 0;
	if (strcmp(n->op_type, "MaxPool") == 0 ||
	    strcmp(n->op_type, "AveragePool") == 0)
		return n->nin == 1 && (n->nout < 2 || opt_out(g, n, 1) ==
		    NULL) && pool_geo(g, n, x, &p) == 0;
	if (strcmp(n->op_type, "GlobalAveragePool") == 0 ||
	    strcmp(n->op_type, "GlobalMaxPool") == 0)
		return n->nin == 1;
	if (strcmp(n->op_type, "Resize") != 0 &&
	    strcmp(n->op_type, "Upsample") != 0)
		return 0;
	if (n->nin > (strcmp(n->op_type, "Upsample") == 0 ? 2 : 4) ||
	    resize_geo(g, n, &r) < 0)
		return 0;
	if (resize_plan(&r, tp, ax, &np) < 0)
		ok = 0;
	else
		for (ok = 1, i = 0; i < np; i++)
			if (ax[i] < 2 && !one_to_one(&r, &tp[ax[i]], ax[i]))
				ok = 0;
	for (i = 0; i < r.nd; i++)
		free_taps(&tp[i]);
	return ok;
#else
	return 0;
#endif
}

/*
 * The layout of a node's first output follows its input's: blocked when
 * the input is blocked (and the node can run so), else plain.  Before
 * the output's shape is set, so that its size counts the padding.
 */
static int
layout_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x = aoe_in(g, n, 0), *y = aoe_out(g, n, 0);

	if (x->layout != AOE_LAYOUT_8C) {
		y->layout = 0;
		return 0;
	}
	if (!aoe_pool_8c_ok(g, n))
		return aoe_err(AOE_EUNSUP, "%s '%s': cannot run on the NCHW8c "
		    "input '%s'", n->op_type, n->name, x->name);
	y->layout = AOE_LAYOUT_8C;
	return 0;
}

const aoe_op aoe_ops_pool[] = {
	{ "MaxPool", pool_infer, pool_run, NULL, pool_default_sched },
	{ "AveragePool", pool_infer, pool_run, NULL, pool_default_sched },
	{ "GlobalAveragePool", gpool_infer, gpool_run, NULL,
	    pool_default_sched },
	{ "GlobalMaxPool", gpool_infer, gpool_run, NULL, pool_default_sched },
	{ "Resize", resize_infer, resize_run, NULL, pool_default_sched },
	{ "Upsample", resize_infer, resize_run, NULL, pool_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};

/* The search space (see aoe_space_for() in space.c and the top). */
int
aoe_space_pool(aoe_space *sp)
{
	if (aoe_space_add_pow2(sp, "par", 1, 4096, 1048576, DEF_PAR, 1,
	    "elements per thread (0: one thread)") < 0)
		return -AOE_EINTERNAL;
	if (aoe_sched_get(&sp->def, "vec", -1) != -1 &&
	    (aoe_space_add_pow2(sp, "vec", 1, 1, 2,
	    aoe_sched_get(&sp->def, "vec", DEF_VEC), 1,
	    "2 rows first, the horizontal pass into the output (AVX-512 "
	    "where allowed), 1 separable vector kernel, 0 the general N-D "
	    "path") < 0 ||
	    aoe_space_add_pow2(sp, "tile", 1, 4, 64, DEF_TILE, 1,
	    "output rows per block of a plane (0: whole plane)") < 0))
		return -AOE_EINTERNAL;
	return 0;
}
