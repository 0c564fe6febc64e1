/*
 * k_dwconv.c - depthwise 2-D convolution by rows (Conv's algo 4 with
 * dw_rows=1), NCHW, one input channel per group, any multiplier,
 * kernel up to 64 taps, any strides, dilations and pads.
 *
 * Each plane goes through a ring of padded input rows: an input row is
 * copied once, zero-padded left and right and split into its stride
 * phases (so that a strided tap is a contiguous load), into a buffer that
 * stays in L1; an output row is then the bias plus, for every tap whose
 * input row is inside the image, the weight times a shifted padded row,
 * four vectors at a time with the weights in registers, and the fused
 * epilogue (activation, residual, per-channel affine; see aoe_epi) runs
 * on the row while it is still in cache.  Rows above and below the image
 * are skipped, not read as zeros, so the padding costs nothing in the
 * inner loop.
 *
 * Knobs (in Conv's space, read only with algo=4): "dw_rows" (-1 auto,
 * 0 the older NCHW kernels of k_conv.c, 1 this one) and "dw_vec" (0
 * auto, 8 AVX2 vectors, 16 AVX-512 where aoe_cpu_avx512() allows).  The
 * default (dw_rows=-1) is still k_conv.c's 8-channel kernel, which was
 * faster on MobileNet's layers; dw_vec's default is the widest vectors
 * the CPU has.
 */
#include <immintrin.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Taps at most, and the vectors an output block holds. */
#define DW_MAXT 64
#define DW_NV 4

int
aoe_dw_rows_ok(const aoe_conv_geom *g)
{
	return g->cg == 1 && g->out[0] == 1 && g->in[0] == 1 &&
	    g->k[0] == 1 && g->k[1] * g->k[2] <= DW_MAXT &&
	    (g->k[1] - 1) * g->d[1] + 1 <= DW_MAXT;
}

int
aoe_dw_default_vec(void)
{
	return aoe_cpu_avx512() ? 16 : 8;
}

/* Floats in one padded, phase-split row of vector width vw. */
static int64_t
dw_pp(const aoe_conv_geom *g, int vw)
{
	const int64_t sw = g->s[2];
	const int64_t rw = (g->out[2] - 1) * sw + (g->k[2] - 1) * g->d[2] + 1;

	/* Slack so that the last block of DW_NV vectors reads zeros. */
	return (rw + sw - 1) / sw + DW_NV * vw + 16;
}

/* Rows the ring holds: every row one output row reads, and the next. */
static int64_t
dw_ns(const aoe_conv_geom *g)
{
	return (g->k[1] - 1) * g->d[1] + 1;
}

size_t
aoe_dw_bufsize(const aoe_conv_geom *g)
{
	return (size_t)(dw_ns(g) * g->s[2] * dw_pp(g, 16) + 64);
}

/*
 * Input row ih of plane x into d: phase q at d + q * pp, its column c
 * the input column c * sw + q - pw, zero outside the input.
 */
static void
dw_fill(const aoe_conv_geom *g, const float *x, int64_t ih, float *d,
    int64_t pp)
{
	const int64_t I2 = g->in[2], sw = g->s[2], pw = g->pb[2];
	const float *src = x + ih * I2;
	int64_t q, c;

	for (q = 0; q < sw; q++, d += pp) {
		int64_t o = q - pw;
		int64_t lo = o >= 0 ? 0 : (-o + sw - 1) / sw;
		int64_t hi = I2 - 1 - o >= 0 ? (I2 - 1 - o) / sw + 1 : 0;
		const float *sq = src + o;

		lo = min64(lo, pp);
		hi = min64(max64(hi, lo), pp);
		memset(d, 0, sizeof(float) * lo);
		if (sw == 1)
			memcpy(d + lo, sq + lo, sizeof(float) * (hi - lo));
		else if (sw == 2) {
			/* Eight even floats of sixteen a step. */
			for (c = lo; c + 8 <= hi && 2 * c + 16 + o <= I2;
			    c += 8) {
				__m256 a = _mm256_loadu_ps(sq + 2 * c);
				__m256 b = _mm256_loadu_ps(sq + 2 * c + 8);
				__m256 e = _mm256_shuffle_ps(a, b, 0x88);
				_mm256_storeu_ps(d + c, _mm256_castpd_ps(
				    _mm256_permute4x64_pd(_mm256_castps_pd(e),
				    0xd8)));
			}
			for (; c < hi; c++)
				d[c] = sq[2 * c];
		}
		else
			for (c = lo; c < hi; c++)
				d[c] = sq[c * sw];
		memset(d + hi, 0, sizeof(float) * (pp - hi));
	}
}

/*
 * Output row y[0..o2) = bias + sum over nt taps of w[t] * tp[t][ow], in
 * blocks of NV vectors of VW floats (NV * VW wide, the last under a
 * mask); T is nt when it is a constant (the loop unrolls).  Written once
 * for both widths: V is the vector type, the macros its operations.
 */
#define DW_ROW(NAME, V, VW, SET1, LOADU, FMADD, STOREU, MSTORE)		\
static inline __attribute__((always_inline)) void				\
NAME(const int NV, const int T, int nt, const float *const *tp,		\
    const float *wt, float bv, float *y, int64_t o2)			\
{									\
	V wv[DW_MAXT], vb = SET1(bv), a[DW_NV];				\
	int64_t ow, v;							\
	int t;								\
									\
	if (T)								\
		nt = T;							\
	for (t = 0; t < nt; t++)					\
		wv[t] = SET1(wt[t]);					\
	for (ow = 0; ow < o2; ow += NV * VW) {				\
		for (v = 0; v < NV; v++)				\
			a[v] = vb;					\
		for (t = 0; t < nt; t++) {				\
			const float *sp = tp[t] + ow;			\
			for (v = 0; v < NV; v++)			\
				a[v] = FMADD(wv[t], LOADU(sp + v * VW),	\
				    a[v]);				\
		}							\
		if (ow + NV * VW <= o2)					\
			for (v = 0; v < NV; v++)			\
				STOREU(y + ow + v * VW, a[v]);		\
		else							\
			for (v = 0; v < NV && ow + v * VW < o2; v++)	\
				MSTORE(y + ow + v * VW, a[v],		\
				    o2 - ow - v * VW);			\
	}								\
}

/* The last k < 8 floats of a: a masked store is slow on AMD, so copy. */
static inline __attribute__((always_inline)) void
dw_mstore8(float *y, __m256 a, int64_t k)
{
	float tmp[8];

	if (k >= 8) {
		_mm256_storeu_ps(y, a);
		return;
	}
	_mm256_storeu_ps(tmp, a);
	memcpy(y, tmp, sizeof(float) * k);
}

DW_ROW(dw_row8, __m256, 8, _mm256_set1_ps, _mm256_loadu_ps,
    _mm256_fmadd_ps, _mm256_storeu_ps, dw_mstore8)

/* Taps and vectors a block as constants for the common kernels. */
#define DW_DISPATCH(FN, nv, nt, tp, wt, bv, y, o2) do {		\
	switch ((nt) * 8 + (nv)) {					\
	case 9 * 8 + 1: FN(1, 9, 9, tp, wt, bv, y, o2); break;		\
	case 9 * 8 + 2: FN(2, 9, 9, tp, wt, bv, y, o2); break;		\
	case 9 * 8 + 3: FN(3, 9, 9, tp, wt, bv, y, o2); break;		\
	case 9 * 8 + 4: FN(4, 9, 9, tp, wt, bv, y, o2); break;		\
	case 25 * 8 + 1: FN(1, 25, 25, tp, wt, bv, y, o2); break;	\
	case 25 * 8 + 2: FN(2, 25, 25, tp, wt, bv, y, o2); break;	\
	case 25 * 8 + 3: FN(3, 25, 25, tp, wt, bv, y, o2); break;	\
	case 25 * 8 + 4: FN(4, 25, 25, tp, wt, bv, y, o2); break;	\
	default:							\
		switch (nv) {						\
		case 1: FN(1, 0, nt, tp, wt, bv, y, o2); break;		\
		case 2: FN(2, 0, nt, tp, wt, bv, y, o2); break;		\
		case 3: FN(3, 0, nt, tp, wt, bv, y, o2); break;		\
		default: FN(4, 0, nt, tp, wt, bv, y, o2); break;	\
		}							\
	}								\
} while (0)

static void
dw_row8_any(int nv, int nt, const float *const *tp, const float *wt,
    float bv, float *y, int64_t o2)
{
	DW_DISPATCH(dw_row8, nv, nt, tp, wt, bv, y, o2);
}

/* The same in AVX-512, 16 floats a vector. */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) void
dw_mstore16(float *y, __m512 a, int64_t k)
{
	_mm512_mask_storeu_ps(y, (__mmask16)(k >= 16 ? 0xffff :
	    (1u << k) - 1), a);
}

DW_ROW(dw_row16, __m512, 16, _mm512_set1_ps, _mm512_loadu_ps,
    _mm512_fmadd_ps, _mm512_storeu_ps, dw_mstore16)

static void
dw_row16_any(int nv, int nt, const float *const *tp, const float *wt,
    float bv, float *y, int64_t o2)
{
	DW_DISPATCH(dw_row16, nv, nt, tp, wt, bv, y, o2);
}
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

struct dwr_ctx {
	const aoe_conv_geom *g;
	const float *x, *w, *bias, *add;
	float *y;
	aoe_epi e;
	int epi, vw;
	int64_t items, nch;
	int *fail;
};

/* One plane: channel m of image b. */
static void
dw_plane_rows(const struct dwr_ctx *d, int64_t b, int64_t m, float *buf)
{
	const aoe_conv_geom *g = d->g;
	const int64_t I1 = g->in[1], O1 = g->out[1], O2 = g->out[2];
	const int64_t K1 = g->k[1], K2 = g->k[2], sh = g->s[1];
	const int64_t sw = g->s[2], dh = g->d[1], dw = g->d[2];
	const int64_t pp = dw_pp(g, d->vw), ns = dw_ns(g), rs = sw * pp;
	const float *x = d->x + (b * g->c + m / g->mg) * g->insz;
	const float *w = d->w + m * g->ksz;
	const float bv = d->bias ? d->bias[m] : 0;
	float *y = d->y + (b * g->m + m) * g->outsz;
	const float *add = d->add ? d->add + (b * g->m + m) * g->outsz : NULL;
	const float *tp[DW_MAXT];
	float wt[DW_MAXT];
	int64_t tag[DW_MAXT], toff[DW_MAXT], oh, kh, kw, ih, s, slot;
	/* Vectors a block: no more than the row needs, at most four. */
	const int nv = (int)min64(DW_NV, (O2 + d->vw - 1) / d->vw);
	int nt;

	/* Divisions out of the row loop: they cost as much as the FMAs. */
	for (s = 0; s < ns; s++)
		tag[s] = -1;
	for (kw = 0; kw < K2; kw++)
		toff[kw] = (kw * dw % sw) * pp + kw * dw / sw;
	slot = (oh = 0) * sh - g->pb[1];
	slot = ((slot % ns) + ns) % ns;
	for (oh = 0; oh < O1; oh++) {
		nt = 0;
		/* slot: the ring slot of row oh * sh - pb, the first read. */
		for (kh = 0, s = slot; kh < K1; kh++) {
			float *row;
			ih = oh * sh - g->pb[1] + kh * dh;
			if (kh > 0 && (s += dh) >= ns)
				s -= ns;
			if (ih < 0 || ih >= I1)
				continue;
			row = buf + s * rs;
			if (tag[s] != ih) {
				dw_fill(g, x, ih, row, pp);
				tag[s] = ih;
			}
			for (kw = 0; kw < K2; kw++) {
				tp[nt] = row + toff[kw];
				wt[nt++] = w[kh * K2 + kw];
			}
		}
		for (s = 0; s < sh; s++)
			if (++slot == ns)
				slot = 0;
		if (nt == 0) {
			for (s = 0; s < O2; s++)
				y[oh * O2 + s] = bv;
		} else if (d->vw == 16)
			dw_row16_any(nv, nt, tp, wt, bv, y + oh * O2, O2);
		else
			dw_row8_any(nv, nt, tp, wt, bv, y + oh * O2, O2);
		if (d->epi)
			aoe_epi_row(&d->e, m, y + oh * O2,
			    add ? add + oh * O2 : NULL, O2);
	}
}

static void
dwr_chunk(void *arg, int64_t c, int tid)
{
	const struct dwr_ctx *d = arg;
	const aoe_conv_geom *g = d->g;
	int64_t pl, p1 = aoe_chunk_lo(d->items, d->nch, c + 1);
	float *buf = aoe_sgemm_tlbuf(2, aoe_dw_bufsize(g));

	(void)tid;
	if (buf == NULL) {
		__atomic_store_n(d->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	for (pl = aoe_chunk_lo(d->items, d->nch, c); pl < p1; pl++)
		dw_plane_rows(d, pl / g->m, pl % g->m, buf);
}

int
aoe_dw_rows(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const aoe_act *act, const float *add, float *y,
    int vw, int nthreads)
{
	struct dwr_ctx d;
	int64_t planes = g->n * g->m;
	int fail = 0;

	memset(&d, 0, sizeof(d));
	d.g = g;
	d.x = x;
	d.w = w;
	d.bias = bias;
	d.add = add;
	d.y = y;
	d.vw = vw == 16 && aoe_cpu_avx512() ? 16 : 8;
	d.epi = (act != NULL && aoe_act_epi(act, &d.e)) || add != NULL;
	if (d.epi && act == NULL) {
		d.e.kind = AOE_EPI_CLAMP;
		d.e.lo = -3.4028235e38f;
		d.e.hi = 3.4028235e38f;
	}
	if (nthreads < 2 || planes < 2 || planes * g->outsz * g->ksz <= 32768)
		nthreads = 1;
	d.items = planes;
	d.nch = aoe_nchunks(planes, nthreads);
	d.fail = &fail;
	aoe_parallel(nthreads, d.nch, dwr_chunk, &d);
	return fail ? -1 : 0;
}

int
aoe_space_dw(aoe_space *sp, int live)
{
	static const int64_t rows[] = { -1, 0, 1 }, vec[] = { 0, 8, 16 };
	int nv = aoe_cpu_avx512() ? 3 : 2;

	if (aoe_space_add(sp, "dw_rows", live ? 3 : 1, rows, "algo=4: "
	    "-1 auto (as 0), 0 the NCHW plane and 8-channel kernels, 1 by "
	    "rows through a ring of padded rows, epilogue fused "
	    "(k_dwconv.c)") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, -1);
	if (aoe_space_add(sp, "dw_vec", live ? nv : 1, vec, "algo=4 with "
	    "dw_rows=1: vector width, 0 auto (16 where AVX-512 is allowed, "
	    "else 8), 8, 16") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 0);
	return 0;
}
