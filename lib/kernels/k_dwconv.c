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
 * The file's second kernel (dw_rows=2, below) makes several output rows
 * a pass in registers, reading the input in place.
 *
 * Knobs (in Conv's space, read only with algo=4): "dw_rows" (-1 auto,
 * 0 the older NCHW kernels of k_conv.c, 1 the ring kernel, 2 the
 * register-blocked one), "dw_vec" (0 auto, 8 AVX2 vectors, 16 AVX-512
 * where aoe_cpu_avx512() allows), and for dw_rows=2 "dw_oh" and "dw_ow"
 * (rows and vectors a pass, 0 auto).  The default (dw_rows=-1,
 * aoe_dw_auto) is dw_rows=2 at stride 1 (on AVX2 for 5x5 and for
 * planes 8 wide or less only; on AVX-512 planes 8 wide or less run the
 * fourth kernel, dw_rows=4, channels in the lanes, last in this file,
 * but 3x3 with a plain Relu or Clip fused: see k_conv.c's dw_mode_of),
 * dw_rows=4 at stride 2 on outputs up to 16 wide, and on larger ones
 * the fifth kernel (dw_rows=5, phases, last in this file) under AVX-512
 * and k_conv.c's 8-channel kernel under AVX2.
 * The third kernel (dw_rows=3, flat) is a choice for the tuner only.
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
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
 * A stride-2 row's two phases from a pair of vectors u, v (its columns
 * 0 .. 2 vw - 1): the even columns and the odd ones.  On AVX2 the two
 * shuffles leave the lanes in the order 0 1 4 5 2 3 6 7 (dw_even8_raw,
 * dw_odd8_raw), which dw_order8 puts right; the phase kernel keeps them
 * so until its store, the flat and ring kernels order each vector.
 */
static inline __attribute__((always_inline)) __m256
dw_even8_raw(__m256 u, __m256 v)
{
	return _mm256_shuffle_ps(u, v, 0x88);
}

static inline __attribute__((always_inline)) __m256
dw_odd8_raw(__m256 u, __m256 v)
{
	return _mm256_shuffle_ps(u, v, 0xdd);
}

static inline __attribute__((always_inline)) __m256
dw_order8(__m256 v)
{
	return _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(v),
	    0xd8));
}

static inline __attribute__((always_inline)) __m256
df_even8(__m256 u, __m256 v)
{
	return dw_order8(dw_even8_raw(u, v));
}

static inline __attribute__((always_inline)) __m256
df_odd8(__m256 u, __m256 v)
{
	return dw_order8(dw_odd8_raw(u, v));
}

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
df_even16(__m512 u, __m512 v)
{
	return _mm512_permutex2var_ps(u, _mm512_setr_epi32(0, 2, 4, 6, 8,
	    10, 12, 14, 16, 18, 20, 22, 24, 26, 28, 30), v);
}

static inline __attribute__((always_inline)) __m512
df_odd16(__m512 u, __m512 v)
{
	return _mm512_permutex2var_ps(u, _mm512_setr_epi32(1, 3, 5, 7, 9,
	    11, 13, 15, 17, 19, 21, 23, 25, 27, 29, 31), v);
}
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

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
		else
			for (c = lo; c < hi; c++)
				d[c] = sq[c * sw];
		memset(d + hi, 0, sizeof(float) * (pp - hi));
	}
}

/*
 * At stride 2 both phases of a row come from one pass over it: a pair
 * of vectors from input column 2c - pw holds phase 0's columns c.. in
 * its even lanes and phase 1's in its odd ones, so a row is two loads,
 * two permutes and two stores a vector of each phase, the pads read as
 * zeros under the loads' masks.  Only the ncols columns the taps read
 * are written (rounded up to a vector): the ring is zeroed when a chunk
 * starts, so the slack after them, which only dropped lanes read, holds
 * zeros.  (dw_fill's memsets and one-float copies took 6 times the FMAs'
 * time on mobilenet_v2's 96 @112/2.)
 */
static int64_t
dw_ncols(const aoe_conv_geom *g)
{
	const int64_t sw = g->s[2];
	const int64_t rw = (g->out[2] - 1) * sw + (g->k[2] - 1) * g->d[2] + 1;

	return (rw + sw - 1) / sw;
}

/* The lanes [lo, hi) of a vector of vw at input column p inside [0, w). */
static inline void
dw_lanes(int64_t p, int64_t w, int vw, int *lo, int *hi)
{
	*lo = (int)min64(p < 0 ? -p : 0, vw);
	*hi = (int)max64(min64(w - p, vw), *lo);
}

static inline __m256
dw_mload8(const float *p, int64_t col, int64_t w)
{
	int lo, hi;

	dw_lanes(col, w, 8, &lo, &hi);
	return _mm256_maskload_ps(p, _mm256_andnot_si256(aoe_lane_mask(lo),
	    aoe_lane_mask(hi)));
}

/* Both widths: MLOAD(p, col, w) loads the lanes of columns in [0, w). */
#define DW_FILL2(NAME, VT, VW, LOADU, MLOAD, STOREU, EVEN, ODD)		\
static void								\
NAME(const aoe_conv_geom *g, const float *x, int64_t ih, float *d,	\
    int64_t pp, int64_t ncols)						\
{									\
	const int64_t I2 = g->in[2], pw = g->pb[2];			\
	const float *src = x + ih * I2;					\
	int64_t c;							\
									\
	for (c = 0; c < ncols; c += VW) {				\
		int64_t p = 2 * c - pw;					\
		VT u, v;						\
									\
		if (p >= 0 && p + 2 * VW <= I2) {			\
			u = LOADU(src + p);				\
			v = LOADU(src + p + VW);			\
		} else {						\
			u = MLOAD(src + p, p, I2);			\
			v = MLOAD(src + p + VW, p + VW, I2);		\
		}							\
		STOREU(d + c, EVEN(u, v));				\
		STOREU(d + pp + c, ODD(u, v));				\
	}								\
}

DW_FILL2(dw_fill2_8, __m256, 8, _mm256_loadu_ps, dw_mload8,
    _mm256_storeu_ps, df_even8, df_odd8)

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __m512
dw_mload16(const float *p, int64_t col, int64_t w)
{
	int lo, hi;

	dw_lanes(col, w, 16, &lo, &hi);
	return _mm512_maskz_loadu_ps((__mmask16)(((1u << hi) - 1) &
	    ~((1u << lo) - 1)), p);
}

DW_FILL2(dw_fill2_16, __m512, 16, _mm512_loadu_ps, dw_mload16,
    _mm512_storeu_ps, df_even16, df_odd16)
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

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
	const int64_t ncols = dw_ncols(g);
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
				if (sw != 2)
					dw_fill(g, x, ih, row, pp);
				else if (d->vw == 16)
					dw_fill2_16(g, x, ih, row, pp, ncols);
				else
					dw_fill2_8(g, x, ih, row, pp, ncols);
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
	/* The slack of the rows dw_fill2_* makes (see there). */
	if (g->s[2] == 2)
		memset(buf, 0, sizeof(float) * aoe_dw_bufsize(g));
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

/*
 * The register-blocked kernel (dw_rows=2): 3x3 and 5x5 kernels, strides
 * 1 and 2 (the same both ways), unit dilations, any pads.  A pass makes
 * R output rows (dw_oh: 1, 2, 4 or 8) of V vectors (dw_ow: 1 or 2) in
 * R * V accumulators: every input row it needs is loaded once per
 * column tap (kw) and that vector feeds each of the R rows it touches,
 * so that at stride 1 and R = 4 a 3x3 kernel needs 0.5 loads a FMA, not
 * 1.  The input is read where it lies, with no padded copy: a pass whose
 * columns are all inside the image (the interior) loads plainly, one at
 * an edge under per-lane masks precomputed once per call (zero outside
 * the image, so pads cost nothing and nothing outside the plane is
 * touched).  At stride 2 a tap is two loads and one two-source permute
 * (AVX-512) or shuffle (AVX2) keeping the even lanes.  Rows above and
 * below the image are skipped.  A row's last vector may spill a few
 * lanes into the rows after it (made later, so overwritten)
 * where the row is the only column block and the spill stays in the
 * plane; else a part vector is stored under a mask (AVX-512) or through
 * a copy (AVX2, where a masked store is slow on AMD).  A plain Relu or
 * Clip is applied to each vector as it is stored, SiLU and HardSwish to
 * the pass's accumulators (neither with a residual or an affine after
 * it); any other epilogue runs on the rows made so far (one span of the
 * plane: the per-channel affine is the same over it) once they hold 512
 * floats, while they are in L1.  Threads split the planes (channels).
 */
#define DR_MAXR 8
#define DR_MAXV 2
#define DR_MAXK 5

int
aoe_dw_reg_ok(const aoe_conv_geom *g)
{
	return g->nsp == 2 && g->cg == 1 && g->k[1] == g->k[2] &&
	    (g->k[1] == 3 || g->k[1] == 5) && g->s[1] == g->s[2] &&
	    (g->s[1] == 1 || g->s[1] == 2) && g->d[1] == 1 &&
	    g->d[2] == 1 && g->pb[1] < g->k[1] && g->pb[2] < g->k[2];
}

/* What one pass reads: the plane, its geometry, the column blocks. */
struct dr_args {
	const float *x, *w;	/* input plane, K * K weights */
	float *y;		/* output plane */
	float bv;
	float lo, hi;		/* the clamp's bounds, when clamp */
	int clamp;
	int act;		/* 1 SiLU, 2 HardSwish in registers, else 0 */
	int64_t H, W, OH, OW, pt, pl, nb;
	const unsigned char *edge;	/* per column block: 1 at an edge */
	const void *mk;		/* masks: per block, V * (K * 2 + 1) */
};

/* The masks' element: a 16-lane bitmask or 8 lanes of -1 / 0. */
typedef struct { int32_t l[8]; } dr_m8;

/*
 * One pass of R rows from oh0 and V vectors of VW floats from ow0,
 * written once for both widths: TAP(S, EDGE, p, mk) loads a tap,
 * PSTORE(p, v, n) stores the first n lanes.  Where MS, an edge block
 * stores every vector under its mask (MSTORE(p, v, m), the block's
 * masks' last V): on the Zen 5 a masked store costs what a plain one
 * does, and the branches on each vector's part of the row took about a
 * tenth of a pass (a harness of the pass, 3x3, 4 rows by 2 vectors, 56
 * wide: 66 to 60 cycles a block).
 */
#define DR_BLK(NAME, VT, VW, MT, SET1, LOADU, FMADD, STOREU, TAP, PSTORE, \
    MS, MSTORE, MAXF, MINF, SILU, HSWISH)				\
static inline __attribute__((always_inline)) void			\
NAME(const int K, const int S, const int R, const int V, const int EDGE, \
    const struct dr_args *a, int64_t oh0, int64_t ow0, const MT *mk)	\
{									\
	VT acc[DR_MAXR][DR_MAXV], xv[DR_MAXV], wv[DR_MAXK * DR_MAXK];	\
	MT m[DR_MAXV * DR_MAXK * 2];					\
	const float *x = a->x;						\
	const VT lov = SET1(a->lo), hiv = SET1(a->hi);			\
	int64_t j, ih;							\
	int r, v, kw;							\
									\
	for (r = 0; r < R; r++)						\
		for (v = 0; v < V; v++)					\
			acc[r][v] = SET1(a->bv);			\
	/* 3x3: weights and masks in registers; 5x5 would spill them. */ \
	for (r = 0; K == 3 && r < K * K; r++)				\
		wv[r] = SET1(a->w[r]);					\
	for (r = 0; K == 3 && EDGE && r < V * K * 2; r++)		\
		m[r] = mk[r];						\
	_Pragma("GCC unroll 16")					\
	for (j = 0; j < (R - 1) * S + K; j++) {				\
		const float *xr;					\
		ih = oh0 * S - a->pt + j;				\
		if (ih < 0 || ih >= a->H)				\
			continue;					\
		xr = x + ih * a->W + ow0 * S - a->pl;			\
		_Pragma("GCC unroll 8")					\
		for (kw = 0; kw < K; kw++) {				\
			for (v = 0; v < V; v++)				\
				xv[v] = TAP(S, EDGE, xr + v * VW * S +	\
				    kw, (K == 3 ? m : mk) + (v * K + kw) * 2); \
			_Pragma("GCC unroll 8")				\
			for (r = 0; r < R; r++) {			\
				const int kh = (int)j - r * S;		\
				VT wt;					\
				if (kh < 0 || kh >= K)			\
					continue;			\
				wt = K == 3 ? wv[kh * K + kw] :		\
				    SET1(a->w[kh * K + kw]);		\
				for (v = 0; v < V; v++)			\
					acc[r][v] = FMADD(wt, xv[v],	\
					    acc[r][v]);			\
			}						\
		}							\
	}								\
	if (a->act == 1)						\
		for (r = 0; r < R; r++)					\
			for (v = 0; v < V; v++)				\
				acc[r][v] = SILU(acc[r][v]);		\
	else if (a->act == 2)						\
		for (r = 0; r < R; r++)					\
			for (v = 0; v < V; v++)				\
				acc[r][v] = HSWISH(acc[r][v]);		\
	for (r = 0; r < R && oh0 + r < a->OH; r++) {			\
		float *yr = a->y + (oh0 + r) * a->OW + ow0;		\
		for (v = 0; v < V; v++) {				\
			int64_t left = a->OW - ow0 - v * VW;		\
			if (!(MS && EDGE) && left <= 0)			\
				break;					\
			if (a->clamp)					\
				acc[r][v] = MINF(hiv, MAXF(lov,	\
				    acc[r][v]));			\
			if (MS && EDGE)					\
				MSTORE(yr + v * VW, acc[r][v],		\
				    mk[V * K * 2 + v]);			\
			else if (!EDGE || left >= VW || (a->nb == 1 &&	\
			    (oh0 + r) * a->OW + ow0 + (v + 1) * VW <=	\
			    a->OH * a->OW))				\
				STOREU(yr + v * VW, acc[r][v]);		\
			else						\
				PSTORE(yr + v * VW, acc[r][v], left);	\
		}							\
	}								\
}

/* A pass over every column block, for R rows from oh0. */
#define DR_ROWS(NAME, BLK, MT)						\
static inline __attribute__((always_inline)) void			\
NAME(const int K, const int S, const int R, const int V,		\
    const struct dr_args *a, int64_t oh0)				\
{									\
	const MT *mk = a->mk;						\
	int64_t b;							\
									\
	for (b = 0; b < a->nb; b++)					\
		if (a->edge[b])						\
			BLK(K, S, R, V, 1, a, oh0, b * V * (int64_t)	\
			    (sizeof(MT) == 2 ? 16 : 8),			\
			    mk + b * V * (K * 2 + 1));			\
		else							\
			BLK(K, S, R, V, 0, a, oh0, b * V * (int64_t)	\
			    (sizeof(MT) == 2 ? 16 : 8), mk);		\
}

/*
 * The instances: K 3 and 5, S 1 and 2, R 1, 2, 4 and 8, V 1 and 2, each
 * making rows oh0..oh1 in passes of R.  a is restrict: no store through
 * a->y reaches *a, so its fields stay in registers across the passes.
 */
#define DR_FN(P, K, S, R, V)						\
static void								\
P##_##K##_##S##_##R##_##V(const struct dr_args *restrict a,		\
    int64_t oh0, int64_t oh1)						\
{									\
	for (; oh0 < oh1; oh0 += R)					\
		P##_rows(K, S, R, V, a, oh0);				\
}
#define DR_FN_V(P, K, S, R) DR_FN(P, K, S, R, 1) DR_FN(P, K, S, R, 2)
#define DR_FN_R(P, K, S) DR_FN_V(P, K, S, 1) DR_FN_V(P, K, S, 2)	\
	DR_FN_V(P, K, S, 4) DR_FN_V(P, K, S, 8)
#define DR_FN_ALL(P) DR_FN_R(P, 3, 1) DR_FN_R(P, 3, 2) DR_FN_R(P, 5, 1) \
	DR_FN_R(P, 5, 2)
#define DR_T_V(P, K, S, R) { P##_##K##_##S##_##R##_1, P##_##K##_##S##_##R##_2 }
#define DR_T_R(P, K, S) { DR_T_V(P, K, S, 1), DR_T_V(P, K, S, 2),	\
	DR_T_V(P, K, S, 4), DR_T_V(P, K, S, 8) }
#define DR_TAB(P) { { DR_T_R(P, 3, 1), DR_T_R(P, 3, 2) },		\
	{ DR_T_R(P, 5, 1), DR_T_R(P, 5, 2) } }

typedef void dr_fn(const struct dr_args *, int64_t, int64_t);

/* AVX2: 8 floats a vector. */
static inline __attribute__((always_inline)) __m256
dr_tap8(const int S, const int EDGE, const float *p, const dr_m8 *mk)
{
	__m256 a, b;

	if (S == 1)
		return EDGE ? _mm256_maskload_ps(p, _mm256_loadu_si256(
		    (const __m256i *)mk[0].l)) : _mm256_loadu_ps(p);
	a = EDGE ? _mm256_maskload_ps(p, _mm256_loadu_si256(
	    (const __m256i *)mk[0].l)) : _mm256_loadu_ps(p);
	b = EDGE ? _mm256_maskload_ps(p + 8, _mm256_loadu_si256(
	    (const __m256i *)mk[1].l)) : _mm256_loadu_ps(p + 8);
	return df_even8(a, b);
}

static inline __attribute__((always_inline)) __m256
dr_hswish8(__m256 v)
{
	return aoe_epi_k8(AOE_EPI_HARDSWISH, NULL, v);
}

static inline __attribute__((always_inline)) void
dr_pstore8(float *y, __m256 v, int64_t n)
{
	float t[8];

	_mm256_storeu_ps(t, v);
	memcpy(y, t, sizeof(float) * (size_t)n);
}

/*
 * AVX2 keeps the part-vector copy at a block's edge (MS 0): an AVX2
 * masked store (vmaskmovps) is microcoded on the Zen 2.
 */
#define dr_nomstore(p, v, m) ((void)0)
DR_BLK(dr8_blk, __m256, 8, dr_m8, _mm256_set1_ps, _mm256_loadu_ps,
    _mm256_fmadd_ps, _mm256_storeu_ps, dr_tap8, dr_pstore8, 0, dr_nomstore,
    _mm256_max_ps, _mm256_min_ps, aoe_v8_silu, dr_hswish8)
DR_ROWS(dr8_rows, dr8_blk, dr_m8)
DR_FN_ALL(dr8)
static dr_fn *const dr8_tab[2][2][4][2] = DR_TAB(dr8);

/* AVX-512: 16 floats a vector. */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
dr_tap16(const int S, const int EDGE, const float *p, const uint16_t *mk)
{
	__m512 a, b;

	if (S == 1)
		return EDGE ? _mm512_maskz_loadu_ps(mk[0], p) :
		    _mm512_loadu_ps(p);
	a = EDGE ? _mm512_maskz_loadu_ps(mk[0], p) : _mm512_loadu_ps(p);
	b = EDGE ? _mm512_maskz_loadu_ps(mk[1], p + 16) :
	    _mm512_loadu_ps(p + 16);
	return df_even16(a, b);
}

static inline __attribute__((always_inline)) void
dr_pstore16(float *y, __m512 v, int64_t n)
{
	_mm512_mask_storeu_ps(y, (__mmask16)((1u << n) - 1), v);
}

static inline __attribute__((always_inline)) void
dr_mstore16(float *y, __m512 v, uint16_t m)
{
	_mm512_mask_storeu_ps(y, (__mmask16)m, v);
}

static inline __attribute__((always_inline)) __m512
dr_hswish16(__m512 v)
{
	return aoe_epi_k16(AOE_EPI_HARDSWISH, NULL, v);
}

DR_BLK(dr16_blk, __m512, 16, uint16_t, _mm512_set1_ps, _mm512_loadu_ps,
    _mm512_fmadd_ps, _mm512_storeu_ps, dr_tap16, dr_pstore16, 1,
    dr_mstore16, _mm512_max_ps, _mm512_min_ps, aoe_z16_silu, dr_hswish16)
DR_ROWS(dr16_rows, dr16_blk, uint16_t)
DR_FN_ALL(dr16)
static dr_fn *const dr16_tab[2][2][4][2] = DR_TAB(dr16);
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/*
 * The pass shape (rows R, vectors V) and width for g: the schedule's
 * where it gives one (oh, ow, vw not 0), else the default.  Measured on
 * a Zen 5 (AVX-512), 1 thread: see aoe_dw_reg_default.
 */
void
aoe_dw_reg_default(const aoe_conv_geom *g, int *vw, int *oh, int *ow)
{
	int64_t OW = g->out[2];

	if (*vw != 8 && *vw != 16)
		*vw = aoe_cpu_avx512() && OW > 8 ? 16 : 8;
	if (*vw == 16 && !aoe_cpu_avx512())
		*vw = 8;
	/*
	 * Eight rows a pass where a row is one vector (16-float vectors on
	 * planes up to 16 wide, and for 3x3 on planes 64 wide or more), and
	 * with 8-float vectors on planes up to 16 wide: eight chains of
	 * FMAs hide their latency where four did not.  Zen 5, 1 thread, warm,
	 * bench/convb, Relu fused, us, 4 rows against 8: AVX-512 576 @14
	 * 41.2 to 35.1, 384 @14 25.9 to 22.7, 672 @14 5x5 95.8 to 78.7,
	 * 1152 @7 5x5 (8-float vectors) 73.4 to 66.4, 32 @112 (one vector
	 * a pass) 99.1 to 86.8; at 28 and 56 wide two vectors by four rows
	 * stay (8 rows of one vector even or slower, 5x5 @28 107 to 121;
	 * 8 rows of two vectors spill).  Under AOE_MAX_ISA=avx2: 576 @14
	 * 63.0 to 55.6, 672 @14 5x5 126.6 to 117.6, 960 @7 29.6 to 27.1,
	 * 1152 @7 5x5 70.0 to 63.1; 28 and 56 wide even.  At stride 2 a
	 * pass of eight rows reads seventeen, and spills (672 @14/2 5x5 74
	 * to 164 us).
	 */
	if (*ow != 1 && *ow != 2)
		*ow = OW > *vw && !(*vw == 16 && g->k[1] == 3 && OW >= 64) ?
		    2 : 1;
	if (*oh != 1 && *oh != 2 && *oh != 4 && *oh != 8)
		*oh = g->s[1] == 1 && ((*vw == 16 && *ow == 1) || (*vw == 8 &&
		    OW <= 16)) ? 8 : 4;
}

/*
 * The kernel dw_rows=-1 picks (0, 2, 3, 4 or 5).  Measured on a Zen 5 (AVX-512),
 * 1 thread, efficientnet_b1's, mobilenet_v2's and mobilenet_v3_large's
 * layers as Conv nodes (tests/unit-dwconv with DWCONV_BENCH, CPU time,
 * medians; a loaded machine): at stride 1 dw_rows=2 is 1.1x to 1.65x
 * faster than the 8-channel kernel (dw_rows=0) with no epilogue or with
 * SiLU fused (5x5 most: 240>240 @28 1.65x bare, 1.35x with SiLU), and
 * on 7x7 planes, where it takes 8-float vectors, 1.1x to 1.3x (960 @7
 * 3x3: 28 against 35 us bare, 36 against 41 with Clip, 42 against 56
 * with SiLU); at stride 2 the 8-channel kernel wins 1.05x to 1.4x (a
 * tap there is two loads and a permute), so it stayed (until the phase
 * kernel, dw_rows=5, below).  Under
 * AOE_MAX_ISA=avx2 (8-wide vectors, the path a Zen 2 runs; Clip fused):
 * 5x5 at stride 1 1.0x to 1.2x faster by rows (672>672 @14 1.15x, 960
 * @7 1.2x), 3x3 at stride 1 on 7x7 planes 1.17x to 1.2x (960 @7 42
 * against 49 us, 1152 @7 56 against 67), on 14x14 even, on larger
 * planes 0.9x to 0.93x (144 @56 0.91x, 192 @28 0.93x), stride 2 0.7x
 * to 0.85x: on AVX2 5x5 at stride 1 and 3x3 on planes 8 wide or less
 * run by rows.  The flat kernel (dw_rows=3, 16-float vectors) is the
 * AVX-512 default for 3x3 at stride 1 on planes 8 wide or less, where
 * its whole vectors over the 7x7 plane beat dw_rows=2's 7-of-8-lane
 * rows once an epilogue is fused (minima of 3 runs: 960 @7 34.5
 * against 37.0 us with Clip, 40.6 against 43.5 with SiLU; 1152 @7 41.2
 * against 45.5, 49.1 against 54.5) though not bare (29.7 against 27.5),
 * and a Conv there always has one in these models.  Elsewhere it loses,
 * 1.1x to 4x (a tap there is a load a FMA, with no reuse across rows,
 * and at stride 2 its copy costs), and under AVX2 (8-float vectors) on
 * 7x7 too (52 against 42 us).  See bench/results/dw-20261204.txt and
 * mb-20261204.txt.  The channels-in-lanes kernel (dw_rows=4) then took
 * stride 2 on outputs up to 28 wide (16 since) and, on AVX-512, planes 8
 * wide or less (figures at aoe_dw_lanes; bench/results/mv-20261205.txt).
 */
/*
 * Outputs that the phase kernel makes two rows a vector of under AVX-512
 * (dq16_blk): 8 wide or less, from rows of 16 floats or less.
 */
static int
dq_fits(const aoe_conv_geom *g)
{
	return g->out[2] <= 8 && g->in[2] <= 16;
}

int
aoe_dw_auto(const aoe_conv_geom *g, int light)
{
	int avx512 = aoe_cpu_avx512();

	/*
	 * The channels-in-lanes kernel (dw_rows=4, below): at stride 2 on
	 * outputs up to 16 wide, and under AVX-512 on planes 8 wide or less
	 * at stride 1.  Its figures are by aoe_dw_lanes.  On outputs 28 wide
	 * (from 56) it took them under AVX-512 too, until the 8-channel
	 * kernel got its eight FMA chains: Zen 5, unit-dwconv's
	 * DWCONV_BENCH, lanes against 8-channel, us, 1 thread (CPU time)
	 * with Clip, HardSwish, SiLU: 144 @56/2 80.6 to 75.3, 82.7 to 81.4,
	 * 93.0 to 88.7; 144 @56/2 5x5 131.5 to 126.5, 134.3 to 132.6, 144.2
	 * to 139.4; 72 @56/2 5x5 72.0 to 65.1, 69.2 to 64.3, 73.4 to 68.1;
	 * 2 threads (wall clock), Clip and SiLU: 144 @56/2 47.1 to 41.2,
	 * 76.9 to 63.2; 72 @56/2 5x5 41.3 to 35.3, 46.8 to 43.7.  From 28
	 * (14 wide) the lanes stay ahead (576 @14/2 23.3 against 31.2).
	 * Under AVX-512 the phase kernel took them since (below), but for
	 * outputs 8 wide or less from rows wider than 16.
	 */
	/*
	 * But under AVX2 at stride 2 the 8-channel kernel, whose eight FMA
	 * chains a tap came after this choice, beats the lanes on outputs
	 * wider than 8 whatever the epilogue, and on narrower ones where
	 * it applies the epilogue as cheaply (light: none, or a plain Relu
	 * or Clip); a SiLU it runs as a pass over the planes, a HardSwish in
	 * registers at some cost, and there the lanes stay ahead (with
	 * HardSwish in registers, 576 @14/2 30.9 against 32.7, 672 @14/2
	 * 5x5 55.4 against 55.6, 1 thread).  AOE_MAX_ISA=avx2 on a
	 * Zen 5, unit-dwconv's DWCONV_BENCH, us, lanes against 8-channel,
	 * 1 thread (CPU time) and 2 (wall clock), Clip: 192 @28/2 53.9 to
	 * 37.3 and 16.3 to 12.3, 240 @28/2 39.4 to 30.5 and 19.5 to 15.2,
	 * 576 @14/2 31.2 to 26.8 and 15.2 to 13.8, 672 @14/2 5x5 55.7 to
	 * 55.5 and 27.3 to 25.6; SiLU: 192 @28/2 39.5 to 37.8, 240 @28/2
	 * 49.0 to 46.9 (1 thread), but 576 @14/2 37.9 against 46.7 and 672
	 * @14/2 5x5 68.9 against 78.2.
	 */
	if (!avx512 && g->s[1] == 2 && (g->out[2] > 8 || light))
		return 0;
	if (aoe_dw_reg_ok(g) && aoe_dw_rows_ok(g) && g->k[1] == g->k[2] &&
	    g->d[1] == 1 && g->d[2] == 1 && ((g->s[1] == 2 &&
	    g->out[2] <= 16 && !(avx512 && aoe_dw_phase_ok(g) &&
	    (g->out[2] > 8 || dq_fits(g)))) || (avx512 &&
	    g->s[1] == 1 && g->out[2] <= 8)))
		return 4;
	/*
	 * At stride 2 on wider outputs, under AVX-512, the phase kernel
	 * (dw_rows=5; figures there; on AVX2, AOE_MAX_ISA=avx2 on the same
	 * Zen 5, it took 1.5x to 2x the 8-channel kernel's time).  At 2
	 * threads, cold weights: 96 @112/2 163 to 137 us, 144 @56/2 59 to
	 * 46, 72 @56/2 5x5 56 to 40; on outputs 14 wide it lost (192 @28/2
	 * 24.5 to 27.9, 240 @28/2 5x5 41 to 51) with passes of two vectors,
	 * the lanes kept there, until it got passes of one: lanes against
	 * phase, bench/convb warm, us, 1 thread: 192 @28/2 21.2 to 19.7,
	 * 240 @28/2 5x5 48.4 to 41.9, 240 @30/2 31.0 to 28.4, 144 @32/2
	 * 19.5 to 10.8, 480 @30/2 5x5 113 to 98 (the 8-channel kernel 107);
	 * 2 threads: 11.9 to 11.3, 26.8 to 22.9, 16.7 to 15.2, 12.1 to 7.0,
	 * 59.9 to 56.4 (the 8-channel kernel 54.7).  On outputs 7 wide a
	 * vector was half empty and the lanes stayed (576 @14/2 26.3 against
	 * 35.7 cold, 672 @14/2 5x5 44.0 against 67.7) until a vector held
	 * two rows there (dq16_blk, rows of 16 floats or less): 1 thread
	 * warm 576 @14/2 20.3 to 15.0, 960 @14/2 36.6 to 26.0, 672 @14/2
	 * 5x5 38.6 to 32.0, 672 @15/2 5x5 41.0 to 32.8; 2 threads 13.1 to
	 * 9.6, 19.6 to 15.2, 21.2 to 18.4, 21.8 to 18.6.
	 */
	if (avx512 && g->s[1] == 2 && aoe_dw_phase_ok(g))
		return 5;
	if (!aoe_dw_reg_ok(g) || g->s[1] != 1)
		return 0;
	if (!avx512)
		return g->k[1] == 5 || g->out[2] <= 8 ? 2 : 0;
	return g->k[1] == 3 && g->out[2] <= 8 && aoe_dw_flat_ok(g) ? 3 : 2;
}

/*
 * dw_nt=-1: stream outputs of 64 KB to 1 MB at 2 threads and more.  Larger
 * ones leave the caches before the next run writes them, so that no
 * other core holds their lines then; streamed, they would only go to
 * memory and back.  Measured on an AMD EPYC Zen 5 whose two vCPUs sit
 * on different CCDs (a cache line's round trip between them 410-490
 * ns), mobilenet_v2 at 2 threads, per-node minima over 60 runs, us,
 * caches against streamed: 576 @14 (450 KB) 64.9 to 41.6, 384 @14 46.6
 * to 30.6, 960 @7 37.8 to 30.1, 192 @28 (600 KB) 63.3 to 56.5, 144 @56
 * s2 (450 KB) 92.6 to 74.5; the pointwise Convs that read them 1.05x
 * to 1.1x faster too (memory is nearer than the other CCD's cache); 144
 * @56 (1.8 MB) 140 to 153-175, slower.  A microbenchmark there: storing
 * over lines that both cores hold takes 8 ns a line, streaming them 1.4
 * (the read back from memory 1.5), storing over lines held by this core
 * alone 0.3; with the vCPUs on one CCD (a round trip of 130-150 ns),
 * 1.7, 1.4 and 0.3: so only where aoe_cores_far() says the cores are
 * far apart.  The Conv passes dw_nt=0 where no Conv of one group reads
 * the output (k_conv.c): others read it by channels, each core its own.
 */
#define DW_NT_MAX ((int64_t)1 << 18)
/*
 * Nor below 64 KB: the smallest measured gain was at 188 KB (960 @7),
 * and the example model's 32 KB depthwise output, streamed, made its
 * 55 us whole-model time noisier (tests/proc.t's 2 % noise floor failed
 * 3 runs in 20, none in 8 without streaming).
 */
#define DW_NT_MIN ((int64_t)1 << 14)

int
aoe_dw_stream(const aoe_conv_geom *g, int nt, int nthreads)
{
	if (nt == 0 || nt == 1)
		return nt;
	return nthreads > 1 && g->n * g->m * g->outsz <= DW_NT_MAX &&
	    g->n * g->m * g->outsz >= DW_NT_MIN && aoe_cores_far();
}

struct dr_ctx {
	const aoe_conv_geom *g;
	const float *x, *w, *bias, *add;
	float *y;
	aoe_epi e;
	int epi, clamp, act;
	dr_fn *fn;
	int R;
	int64_t nb, items, nch;
	int nt, *fail;
	const unsigned char *edge;
	const void *mk;
};

/* What every pass of a call reads, but the plane's pointers and bias. */
static void
dr_args_of(const struct dr_ctx *d, struct dr_args *a)
{
	const aoe_conv_geom *g = d->g;

	memset(a, 0, sizeof(*a));
	a->H = g->in[1];
	a->W = g->in[2];
	a->OH = g->out[1];
	a->OW = g->out[2];
	a->pt = g->pb[1];
	a->pl = g->pb[2];
	a->nb = d->nb;
	a->edge = d->edge;
	a->mk = d->mk;
	a->clamp = d->clamp;
	a->act = d->act;
	a->lo = d->e.lo;
	a->hi = d->e.hi;
}

static void
dr_chunk(void *arg, int64_t c, int tid)
{
	const struct dr_ctx *d = arg;
	const aoe_conv_geom *g = d->g;
	int64_t p0 = aoe_chunk_lo(d->items, d->nch, c), pl, oh, r;
	int64_t p1 = aoe_chunk_lo(d->items, d->nch, c + 1);
	float *y = d->y + p0 * g->outsz, *sb = NULL;
	struct dr_args a;

	(void)tid;
	dr_args_of(d, &a);
	/* The chunk's planes are one range of y: staged, it is one copy. */
	if (d->nt && (sb = aoe_stage_buf(y, (p1 - p0) * g->outsz)) == NULL) {
		__atomic_store_n(d->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	for (pl = p0; pl < p1; pl++) {
		int64_t b = pl / g->m, m = pl % g->m;
		const float *add = d->add ? d->add + pl * g->outsz : NULL;

		a.x = d->x + (b * g->c + m / g->mg) * g->insz;
		a.w = d->w + m * g->ksz;
		a.y = (sb ? sb - p0 * g->outsz : d->y) + pl * g->outsz;
		a.bv = d->bias ? d->bias[m] : 0;
		/*
		 * The epilogue over the rows made since the last, once
		 * they hold 512 floats (2 KB, still in L1) or at the
		 * plane's end: a 7- or 14-float row alone would spend
		 * most of its time in the part vector's copies.
		 */
		if (!d->epi) {
			d->fn(&a, 0, a.OH);
			continue;
		}
		for (oh = 0, r = 0; oh < a.OH; oh += d->R) {
			int64_t e = min64(oh + d->R, a.OH);
			d->fn(&a, oh, e);
			if ((e - r) * a.OW < 512 && e < a.OH)
				continue;
			aoe_epi_row(&d->e, m, a.y + r * a.OW, add ? add +
			    r * a.OW : NULL, (e - r) * a.OW);
			r = e;
		}
	}
	if (sb)
		aoe_stage_put(y, sb, (p1 - p0) * g->outsz);
}

/*
 * What a call of the register-blocked kernel sets up once: the pass
 * function and shape, the epilogue's form, the column blocks' edges and
 * masks (on the heap when there are more than fit here).
 */
struct dr_setup {
	struct dr_ctx d;
	unsigned char ebuf[64];
	uint16_t mb16[64 * DR_MAXV * (DR_MAXK * 2 + 1)];
	dr_m8 mb8[16 * DR_MAXV * (DR_MAXK * 2 + 1)];
	void *heap;
};

/*
 * The epilogue's forms for the kernels that read the input in place
 * (dw_rows=2 and 5): e and *epi as aoe_act_epi makes them (a pass over
 * the rows; a residual alone is a clamp that keeps every value), unless
 * no residual or affine follows, when the activation is applied in
 * registers: a plain Relu or Clip (*clamp) as each vector is stored,
 * SiLU (*kind 1) and HardSwish (2) to each pass's accumulators, the kind
 * fixed per call.  As a pass over the rows, Relu took 7.5 of 45 us on
 * 576 @14 (Zen 5, 1 thread).  SiLU and HardSwish, unit-dwconv's
 * DWCONV_BENCH, CPU time, minima of 3, pass against registers,
 * HardSwish: 576 @14 45.2 to 38.0 us, 672 @14 5x5 94.5 to 84.8, 144 @56
 * 157.2 to 142.9, 32 @112 104.5 to 94.1; SiLU: 576 @14 50.4 to 49.7, 672
 * @14 5x5 100.7 to 96.0, 144 @56 190.4 to 155.8, 240 @28 5x5 131.3 to
 * 125.0.  (Any kind switched at each store instead made 576 @14 with
 * Relu 35 to 62 us: six activations inlined at every store site of the
 * unrolled passes.)
 */
static void
dr_epi_forms(const struct aoe_act *act, const float *add, aoe_epi *e,
    int *epi, int *clamp, int *kind)
{
	*epi = (act != NULL && aoe_act_epi(act, e)) || add != NULL;
	*clamp = *kind = 0;
	if (*epi && add == NULL && e->ps == NULL && e->pt == NULL) {
		*clamp = e->kind == AOE_EPI_CLAMP;
		*kind = e->kind == AOE_EPI_SILU ? 1 :
		    e->kind == AOE_EPI_HARDSWISH ? 2 : 0;
		if (*clamp || *kind)
			*epi = 0;
	}
	if (*epi && act == NULL) {
		e->kind = AOE_EPI_CLAMP;
		e->lo = -3.4028235e38f;
		e->hi = 3.4028235e38f;
	}
}

/* Set s up for g, act and add; -1 when out of memory. */
static int
dr_prepare(struct dr_setup *s, const aoe_conv_geom *g,
    const struct aoe_act *act, const float *add, int vw, int oh, int ow)
{
	const int64_t K = g->k[1], S = g->s[1], W = g->in[2];
	struct dr_ctx *d = &s->d;
	int64_t nb, b, v, kw, h, l;
	unsigned char *edge = s->ebuf;
	uint16_t *m16 = s->mb16;
	dr_m8 *m8 = s->mb8;
	size_t per;

	aoe_dw_reg_default(g, &vw, &oh, &ow);
	memset(d, 0, sizeof(*d));
	s->heap = NULL;
	d->g = g;
	d->add = add;
	d->R = oh;
	dr_epi_forms(act, add, &d->e, &d->epi, &d->clamp, &d->act);
	nb = (g->out[2] + (int64_t)ow * vw - 1) / ((int64_t)ow * vw);
	per = (size_t)(ow * (K * 2 + 1));
	if (nb > 64 || (vw == 8 && nb > 16)) {
		s->heap = malloc((size_t)nb * (1 + per * (vw == 8 ?
		    sizeof(dr_m8) : sizeof(uint16_t))) + 32);
		if (s->heap == NULL)
			return -1;
		edge = s->heap;
		m16 = (uint16_t *)(void *)(edge + nb + (-nb & 31));
		m8 = (dr_m8 *)(void *)m16;
	}
	/* Edges and masks: lane l of vector v, tap kw, half h. */
	for (b = 0; b < nb; b++) {
		int64_t ow0 = b * ow * vw;
		int64_t lo = ow0 * S - g->pb[2];
		int64_t hi = S == 1 ? ow0 + ow * vw - 1 - g->pb[2] + K - 1 :
		    (ow0 + ow * vw) * 2 - g->pb[2] + K - 2;
		edge[b] = lo < 0 || hi >= W || ow0 + ow * vw > g->out[2];
		if (!edge[b])
			continue;
		for (v = 0; v < ow; v++)
			for (kw = 0; kw < K; kw++)
				for (h = 0; h < 2; h++) {
					size_t i = (size_t)b * per +
					    (size_t)((v * K + kw) * 2 + h);
					uint32_t bits = 0;
					for (l = 0; l < vw; l++) {
						int64_t p = (ow0 + v * vw) * S -
						    g->pb[2] + kw + h * vw + l;
						int in = p >= 0 && p < W &&
						    (h == 0 || S == 2);
						if (S == 1 && ow0 + v * vw + l >=
						    g->out[2])
							in = 0;
						bits |= (uint32_t)in << l;
						if (vw == 8)
							m8[i].l[l] = in ? -1 : 0;
					}
					if (vw == 16)
						m16[i] = (uint16_t)bits;
				}
		/*
		 * After them, the stores': the row's lanes, read by AVX-512
		 * alone (MS); AVX2 leaves its slots unused.
		 */
		for (v = 0; vw == 16 && v < ow; v++) {
			uint32_t bits = 0;
			for (l = 0; l < vw; l++)
				bits |= (uint32_t)(ow0 + v * vw + l <
				    g->out[2]) << l;
			m16[(size_t)b * per + (size_t)(ow * K * 2 + v)] =
			    (uint16_t)bits;
		}
	}
	d->nb = nb;
	d->edge = edge;
	d->mk = vw == 16 ? (const void *)m16 : (const void *)m8;
	d->fn = (vw == 16 ? dr16_tab : dr8_tab)[K == 5][S == 2]
	    [oh == 8 ? 3 : oh == 4 ? 2 : oh - 1][ow - 1];
	return 0;
}

int
aoe_dw_reg(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int oh, int ow, int nt, int nthreads)
{
	struct dr_setup s;
	struct dr_ctx *d = &s.d;
	int64_t planes = g->n * g->m;
	int fail = 0;

	if (!aoe_dw_reg_ok(g))
		return aoe_err(AOE_EINTERNAL, "dw_rows=2 does not apply");
	if (dr_prepare(&s, g, act, add, vw, oh, ow) < 0)
		return -1;
	d->x = x;
	d->w = w;
	d->bias = bias;
	d->y = y;
	if (nthreads < 2 || planes < 2 || planes * g->outsz * g->ksz <= 32768)
		nthreads = 1;
	d->items = planes;
	d->nt = aoe_dw_stream(g, nt, nthreads);
	d->fail = &fail;
	d->nch = aoe_nchunks(planes, nthreads);
	aoe_parallel(nthreads, d->nch, dr_chunk, d);
	free(s.heap);
	return fail ? -1 : 0;
}

int
aoe_dw_band_init(aoe_dw_band *b, const aoe_conv_geom *g,
    const struct aoe_act *act)
{
	struct dr_setup *s;

	memset(b, 0, sizeof(*b));
	if (!aoe_dw_reg_ok(g))
		return aoe_err(AOE_EINTERNAL, "dw_rows=2 does not apply");
	if ((s = malloc(sizeof(*s))) == NULL)
		return -1;
	if (dr_prepare(s, g, act, NULL, 0, 0, 0) < 0) {
		free(s);
		return -1;
	}
	b->g = g;
	b->R = s->d.R;
	b->priv = s;
	return 0;
}

/*
 * As dr_chunk makes a plane, but rows oh0..oh1 into dst: the passes
 * address the plane's rows from y, so y is dst less oh0 rows (never
 * dereferenced there).  A pass past oh1 (a band of a part pass) writes
 * its rows after the band; a row's last vector may spill up to a vector
 * past the row's end where the row is its plane's only column block.
 */
void
aoe_dw_band_rows(const aoe_dw_band *b, int64_t pl, const float *x,
    const float *w, float bv, float *dst, int64_t oh0, int64_t oh1)
{
	const struct dr_setup *s = b->priv;
	const struct dr_ctx *d = &s->d;
	const aoe_conv_geom *g = b->g;
	struct dr_args a;

	dr_args_of(d, &a);
	a.x = x;
	a.w = w;
	a.bv = bv;
	a.y = (float *)((uintptr_t)dst - (uintptr_t)(oh0 * a.OW *
	    (int64_t)sizeof(float)));
	d->fn(&a, oh0, oh1);
	if (d->epi)
		aoe_epi_row(&d->e, pl % g->m, dst, NULL, (oh1 - oh0) * a.OW);
}

int64_t
aoe_dw_band_slack(const aoe_dw_band *b)
{
	return (int64_t)b->R * b->g->out[2] + 32;
}

void
aoe_dw_band_free(aoe_dw_band *b)
{
	struct dr_setup *s = b->priv;

	if (s != NULL)
		free(s->heap);
	free(s);
	b->priv = NULL;
}

/*
 * The flat kernel (dw_rows=3): any kernel up to 7x7, strides 1,1 and
 * 2,2, unit dilations, any pads.  A plane is first copied into a
 * zero-padded buffer split into its stride phases (one at stride 1,
 * four at stride 2: row parity a, column parity b), each phase PW =
 * ceil(padded width / S) floats wide.  The output is then made on a
 * grid of OH rows of PW columns, flattened: output p = oh * PW + ow
 * reads, for tap (kh, kw), phase (kh % S, kw % S) at p + (kh / S) * PW
 * + kw / S, so that every tap is one plain load of whole vectors over
 * the flattened plane and no lane is lost to a row's end: a 7x7 plane
 * at 3x3 is 63 grid points, four 16-float vectors (row by row it is
 * seven, each 7 of 16 lanes full), and a stride-2 tap is one load, not
 * two and a permute.  Pads cost nothing (they are zeros in the copy),
 * and the columns ow >= OW of the grid are made and dropped when the
 * rows are copied out to y; the epilogue then runs on the plane in
 * cache.  At stride 1 with OW == W (same padding) there is no copy:
 * the grid is the plane itself, each tap a load under a per-lane mask
 * (precomputed once a call) that zeroes what falls outside the image
 * or wraps to the next row.  Threads split the planes.  The AVX-512
 * default for 3x3 on 7x7 planes only (see aoe_dw_auto).
 */
#define DF_MAXK 7
#define DF_NV 4

int
aoe_dw_flat_ok(const aoe_conv_geom *g)
{
	return g->nsp == 2 && g->cg == 1 && g->s[1] == g->s[2] &&
	    (g->s[1] == 1 || g->s[1] == 2) && g->d[1] == 1 &&
	    g->d[2] == 1 && g->k[1] <= DF_MAXK && g->k[2] <= DF_MAXK;
}

/* The flat layout of g at vector width vw. */
struct df_geom {
	int64_t S, PW, PH, ps;	/* stride, phase width and rows, stride */
	int64_t nout, nblk;	/* grid points OH * PW, blocks of DF_NV */
	int64_t nt, off[DF_MAXK * DF_MAXK];	/* taps, their offsets */
	int64_t size;		/* floats: phases and the grid */
};

static void
df_geom_of(const aoe_conv_geom *g, int vw, struct df_geom *f)
{
	const int64_t S = g->s[1], KH = g->k[1], KW = g->k[2];
	const int64_t Hp = (g->out[1] - 1) * S + KH;
	const int64_t Wp = (g->out[2] - 1) * S + KW;
	int64_t kh, kw, omax;

	f->S = S;
	f->PW = (Wp + S - 1) / S;
	f->PH = (Hp + S - 1) / S;
	f->nout = g->out[1] * f->PW;
	f->nblk = (f->nout + DF_NV * vw - 1) / (DF_NV * vw);
	omax = (KH - 1) / S * f->PW + (KW - 1) / S;
	/* A block's loads stay inside its phase; the slack reads zeros. */
	f->ps = max64(f->PH * f->PW, f->nblk * DF_NV * vw + omax) + 64;
	f->nt = 0;
	for (kh = 0; kh < KH; kh++)
		for (kw = 0; kw < KW; kw++)
			f->off[f->nt++] = (kh % S * S + kw % S) * f->ps +
			    kh / S * f->PW + kw / S;
	/* The phases, the grid, then one padded input row (df_line). */
	f->size = S * S * f->ps + f->nblk * DF_NV * vw + 2 * f->PW + 128;
}

size_t
aoe_dw_flat_bufsize(const aoe_conv_geom *g)
{
	struct df_geom f;

	df_geom_of(g, 16, &f);
	return (size_t)f.size;
}

/*
 * Plane x into the phases at buf, an input row at a time: the row is
 * written zero-padded into a line (the phase itself at stride 1), and
 * at stride 2 the line is split into its even and odd columns.  Every
 * store is a whole vector: a row may spill up to a vector's worth of
 * floats into the next row of its phase (made later) or into the slack
 * after the phase, which only grid points that are dropped read.  The
 * same code at both widths, VW floats a step.
 */
#define DF_FILL(NAME, VT, VW, MT, ZERO, LOADU, MLOAD, STOREU, EVEN, ODD) \
static void								\
NAME(const aoe_conv_geom *g, const struct df_geom *f, const float *x,	\
    float *buf, float *line)						\
{									\
	const int64_t S = f->S, PW = f->PW, W = g->in[2];		\
	const int64_t pl = g->pb[2], n = S * PW;			\
	int64_t a, i, c, k;						\
									\
	for (a = 0; a < S; a++)						\
		for (i = 0; i < f->PH; i++) {				\
			int64_t ih = i * S + a - g->pb[1];		\
			float *d0 = buf + a * S * f->ps + i * PW;	\
			float *d1 = d0 + f->ps, *l = S == 1 ? d0 : line; \
			if (ih < 0 || ih >= g->in[1]) {			\
				for (c = 0; c < PW; c += VW) {		\
					STOREU(d0 + c, ZERO);		\
					if (S == 2)			\
						STOREU(d1 + c, ZERO);	\
				}					\
				continue;				\
			}						\
			/* The line: pl zeros, the row, zeros to n. */	\
			for (c = 0; c < pl && c < n; c += VW)		\
				STOREU(l + c, ZERO);			\
			if (pl < n) {					\
				const float *r = x + ih * W;		\
				for (k = 0; k + VW <= W; k += VW)	\
					STOREU(l + pl + k, LOADU(r + k)); \
				if (k < W)				\
					STOREU(l + pl + k, MLOAD(r + k,	\
					    W - k));			\
				for (c = pl + k + VW; c < n; c += VW)	\
					STOREU(l + c, ZERO);		\
				if (k == W)				\
					STOREU(l + pl + k, ZERO);	\
			}						\
			for (c = 0; S == 2 && c < PW; c += VW) {	\
				VT u = LOADU(line + 2 * c);		\
				VT v = LOADU(line + 2 * c + VW);	\
				STOREU(d0 + c, EVEN(u, v));		\
				STOREU(d1 + c, ODD(u, v));		\
			}						\
		}							\
}

static inline __attribute__((always_inline)) __m256
df_mload8(const float *p, int64_t n)
{
	return _mm256_maskload_ps(p, aoe_lane_mask((int)n));
}

DF_FILL(df_fill8, __m256, 8, int, _mm256_setzero_ps(), _mm256_loadu_ps,
    df_mload8, _mm256_storeu_ps, df_even8, df_odd8)

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
df_mload16(const float *p, int64_t n)
{
	return _mm512_maskz_loadu_ps((__mmask16)((1u << n) - 1), p);
}

DF_FILL(df_fill16, __m512, 16, int, _mm512_setzero_ps(), _mm512_loadu_ps,
    df_mload16, _mm512_storeu_ps, df_even16, df_odd16)
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/*
 * The grid: blocks of DF_NV vectors of VW floats, out[p] = bias + the
 * sum over the taps of w[t] * buf[off[t] + p]; T is the tap count when
 * it is a constant (the loop unrolls).  Written once for both widths.
 */
#define DF_GRID(NAME, VT, VW, SET1, LOADU, FMADD, STOREU)		\
static inline __attribute__((always_inline)) void			\
NAME(const int T, int nt, const float *buf, const int64_t *off,	\
    const float *w, float bv, float *out, int64_t nblk)		\
{									\
	VT wv[DF_MAXK * DF_MAXK], acc[DF_NV];				\
	int64_t p, bk;							\
	int t, v;							\
									\
	if (T)								\
		nt = T;							\
	for (t = 0; t < nt && T; t++)					\
		wv[t] = SET1(w[t]);					\
	for (bk = 0, p = 0; bk < nblk; bk++, p += DF_NV * VW) {		\
		for (v = 0; v < DF_NV; v++)				\
			acc[v] = SET1(bv);				\
		for (t = 0; t < nt; t++) {				\
			const float *q = buf + off[t] + p;		\
			VT wt = T ? wv[t] : SET1(w[t]);			\
			for (v = 0; v < DF_NV; v++)			\
				acc[v] = FMADD(wt, LOADU(q + v * VW),	\
				    acc[v]);				\
		}							\
		for (v = 0; v < DF_NV; v++)				\
			STOREU(out + p + v * VW, acc[v]);		\
	}								\
}

DF_GRID(df_grid8, __m256, 8, _mm256_set1_ps, _mm256_loadu_ps,
    _mm256_fmadd_ps, _mm256_storeu_ps)

static void
df_grid8_any(int nt, const float *buf, const int64_t *off, const float *w,
    float bv, float *out, int64_t nblk)
{
	if (nt == 9)
		df_grid8(9, 9, buf, off, w, bv, out, nblk);
	else if (nt == 25)
		df_grid8(25, 25, buf, off, w, bv, out, nblk);
	else
		df_grid8(0, nt, buf, off, w, bv, out, nblk);
}

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
DF_GRID(df_grid16, __m512, 16, _mm512_set1_ps, _mm512_loadu_ps,
    _mm512_fmadd_ps, _mm512_storeu_ps)

static void
df_grid16_any(int nt, const float *buf, const int64_t *off, const float *w,
    float bv, float *out, int64_t nblk)
{
	if (nt == 9)
		df_grid16(9, 9, buf, off, w, bv, out, nblk);
	else if (nt == 25)
		df_grid16(25, 25, buf, off, w, bv, out, nblk);
	else
		df_grid16(0, nt, buf, off, w, bv, out, nblk);
}
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/*
 * In place (stride 1, OW == W, so that output p and its input for tap
 * t are off[t] floats apart over the flattened plane): blocks of NB
 * vectors, each tap a load under its mask mk[v * nt + t] (zero where the
 * tap falls outside the image or wraps to another row), the last
 * vector stored in part.  No copy at all; the plane is read and written
 * where it lies.
 */
#define DM_BLK(NAME, VT, VW, MT, SET1, MLOAD, FMADD, STOREU, PSTORE)	\
static inline __attribute__((always_inline)) void			\
NAME(const int NB, const int T, int nt, const float *x,		\
    const int64_t *off, const MT *mk, const float *w, float bv,	\
    float *y, int64_t n, int64_t v0)					\
{									\
	VT acc[DF_NV];							\
	int t, v;							\
									\
	if (T)								\
		nt = T;							\
	for (v = 0; v < NB; v++)					\
		acc[v] = SET1(bv);					\
	for (t = 0; t < nt; t++) {					\
		VT wt = SET1(w[t]);					\
		for (v = 0; v < NB; v++)				\
			acc[v] = FMADD(wt, MLOAD(x + (v0 + v) * VW +	\
			    off[t], mk + (v0 + v) * nt + t), acc[v]);	\
	}								\
	for (v = 0; v < NB; v++)					\
		if ((v0 + v + 1) * VW <= n)				\
			STOREU(y + (v0 + v) * VW, acc[v]);		\
		else							\
			PSTORE(y + (v0 + v) * VW, acc[v],		\
			    n - (v0 + v) * VW);				\
}
#define DM_PLANE(NAME, BLK, MT)						\
static void								\
NAME(int nt, const float *x, const int64_t *off, const MT *mk,		\
    const float *w, float bv, float *y, int64_t n, int64_t nvec)	\
{									\
	int64_t v0 = 0;							\
									\
	if (nt == 9)							\
		for (; v0 + DF_NV <= nvec; v0 += DF_NV)			\
			BLK(DF_NV, 9, 9, x, off, mk, w, bv, y, n, v0);	\
	else if (nt == 25)						\
		for (; v0 + DF_NV <= nvec; v0 += DF_NV)			\
			BLK(DF_NV, 25, 25, x, off, mk, w, bv, y, n, v0); \
	else								\
		for (; v0 + DF_NV <= nvec; v0 += DF_NV)			\
			BLK(DF_NV, 0, nt, x, off, mk, w, bv, y, n, v0);	\
	for (; v0 < nvec; v0++)						\
		BLK(1, 0, nt, x, off, mk, w, bv, y, n, v0);		\
}

static inline __attribute__((always_inline)) __m256
dm_load8(const float *p, const dr_m8 *mk)
{
	return _mm256_maskload_ps(p, _mm256_loadu_si256(
	    (const __m256i *)mk->l));
}

DM_BLK(dm_blk8, __m256, 8, dr_m8, _mm256_set1_ps, dm_load8,
    _mm256_fmadd_ps, _mm256_storeu_ps, dr_pstore8)
DM_PLANE(dm_plane8, dm_blk8, dr_m8)

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
dm_load16(const float *p, const uint16_t *mk)
{
	return _mm512_maskz_loadu_ps(*mk, p);
}

DM_BLK(dm_blk16, __m512, 16, uint16_t, _mm512_set1_ps, dm_load16,
    _mm512_fmadd_ps, _mm512_storeu_ps, dr_pstore16)
DM_PLANE(dm_plane16, dm_blk16, uint16_t)
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

struct df_ctx {
	const aoe_conv_geom *g;
	const struct df_geom *f;
	const void *mk;		/* in place: the masks, else NULL */
	int64_t moff[DF_MAXK * DF_MAXK], nvec;
	const float *x, *w, *bias, *add;
	float *y;
	aoe_epi e;
	int epi, vw;
	int64_t items, nch;
	int *fail;
};

static void
df_chunk(void *arg, int64_t c, int tid)
{
	const struct df_ctx *d = arg;
	const aoe_conv_geom *g = d->g;
	const struct df_geom *f = d->f;
	const int64_t OH = g->out[1], OW = g->out[2], PW = f->PW;
	int64_t pl, p1 = aoe_chunk_lo(d->items, d->nch, c + 1), q, oh;
	float *buf = d->mk ? NULL : aoe_sgemm_tlbuf(2, (size_t)f->size);
	float *grid = NULL;

	(void)tid;
	if (d->mk != NULL)
		goto planes;
	if (buf == NULL) {
		__atomic_store_n(d->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	grid = buf + f->S * f->S * f->ps;
	for (q = 0; q < f->S * f->S; q++)
		memset(buf + q * f->ps + f->PH * PW, 0, sizeof(float) *
		    (f->ps - f->PH * PW));
planes:
	for (pl = aoe_chunk_lo(d->items, d->nch, c); pl < p1; pl++) {
		int64_t b = pl / g->m, m = pl % g->m;
		float *y = d->y + pl * g->outsz;
		const float *x = d->x + (b * g->c + m / g->mg) * g->insz;

		if (d->mk != NULL) {
			if (d->vw == 16)
				dm_plane16((int)f->nt, x, d->moff, d->mk,
				    d->w + m * g->ksz, d->bias ? d->bias[m] :
				    0, y, g->outsz, d->nvec);
			else
				dm_plane8((int)f->nt, x, d->moff, d->mk,
				    d->w + m * g->ksz, d->bias ? d->bias[m] :
				    0, y, g->outsz, d->nvec);
			if (d->epi)
				aoe_epi_row(&d->e, m, y, d->add ? d->add +
				    pl * g->outsz : NULL, g->outsz);
			continue;
		}
		if (d->vw == 16)
			df_fill16(g, f, x, buf, grid + f->nblk * DF_NV * 16);
		else
			df_fill8(g, f, x, buf, grid + f->nblk * DF_NV * 8);
		(d->vw == 16 ? df_grid16_any : df_grid8_any)((int)f->nt, buf,
		    f->off, d->w + m * g->ksz, d->bias ? d->bias[m] : 0,
		    grid, f->nblk);
		for (oh = 0; oh < OH; oh++)
			memcpy(y + oh * OW, grid + oh * PW,
			    sizeof(float) * OW);
		if (d->epi)
			aoe_epi_row(&d->e, m, y, d->add ? d->add +
			    pl * g->outsz : NULL, g->outsz);
	}
}

/*
 * The in-place masks and offsets for d (stride 1, OW == W): lane l of
 * vector v is output p = v * vw + l, and tap (kh, kw) reads it from
 * the input row oh + kh - pt, column ow + kw - pl, when that is inside
 * the image.  Returns the masks' memory (d->mk), NULL when out of it.
 */
static void *
df_masks(const aoe_conv_geom *g, int vw, struct df_ctx *d)
{
	const int64_t OW = g->out[2], n = g->outsz, KW = g->k[2];
	const int64_t nt = g->k[1] * KW, nvec = (n + vw - 1) / vw;
	uint16_t *m16;
	dr_m8 *m8;
	void *p;
	int64_t v, t, l;

	p = malloc((size_t)(nvec * nt) * (vw == 16 ? sizeof(uint16_t) :
	    sizeof(dr_m8)) + 64);
	if (p == NULL)
		return NULL;
	m16 = p;
	m8 = p;
	for (t = 0; t < nt; t++)
		d->moff[t] = (t / KW - g->pb[1]) * g->in[2] + t % KW - g->pb[2];
	for (v = 0; v < nvec; v++)
		for (t = 0; t < nt; t++) {
			uint32_t bits = 0;
			for (l = 0; l < vw; l++) {
				int64_t q = v * vw + l;
				int64_t ih = q / OW + t / KW - g->pb[1];
				int64_t iw = q % OW + t % KW - g->pb[2];
				int in = q < n && ih >= 0 && ih < g->in[1] &&
				    iw >= 0 && iw < g->in[2];
				bits |= (uint32_t)in << l;
				if (vw == 8)
					m8[v * nt + t].l[l] = in ? -1 : 0;
			}
			if (vw == 16)
				m16[v * nt + t] = (uint16_t)bits;
		}
	d->nvec = nvec;
	d->mk = p;
	return p;
}

int
aoe_dw_flat(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nthreads)
{
	struct df_ctx d;
	struct df_geom f;
	int64_t planes = g->n * g->m;
	int fail = 0;
	void *heap = NULL;

	if (!aoe_dw_flat_ok(g))
		return aoe_err(AOE_EINTERNAL, "dw_rows=3 does not apply");
	memset(&d, 0, sizeof(d));
	d.vw = vw == 16 || (vw != 8 && aoe_dw_default_vec() == 16) ? 16 : 8;
	if (d.vw == 16 && !aoe_cpu_avx512())
		d.vw = 8;
	df_geom_of(g, d.vw, &f);
	d.g = g;
	d.f = &f;
	d.x = x;
	d.w = w;
	d.bias = bias;
	d.add = add;
	d.y = y;
	d.epi = (act != NULL && aoe_act_epi(act, &d.e)) || add != NULL;
	if (d.epi && act == NULL) {
		d.e.kind = AOE_EPI_CLAMP;
		d.e.lo = -3.4028235e38f;
		d.e.hi = 3.4028235e38f;
	}
	if (g->s[1] == 1 && g->out[2] == g->in[2] &&
	    (heap = df_masks(g, d.vw, &d)) == NULL)
		return -1;
	if (nthreads < 2 || planes < 2 || planes * g->outsz * g->ksz <= 32768)
		nthreads = 1;
	d.items = planes;
	d.nch = aoe_nchunks(planes, nthreads);
	d.fail = &fail;
	aoe_parallel(nthreads, d.nch, df_chunk, &d);
	free(heap);
	return fail ? -1 : 0;
}

int
aoe_space_dw(aoe_space *sp, int live, int reg, int flat, int phase)
{
	static const int64_t vec[] = { 0, 8, 16 };
	static const int64_t oh[] = { 0, 1, 2, 4, 8 }, ow[] = { 0, 1, 2 };
	/*
	 * No dw_nt=0: alone, as the tuner measures an op, -1 does not
	 * stream (no Conv reads the output), so 0 would tie with it and
	 * might be kept, to stop the streaming in the model.
	 */
	static const int64_t nt[] = { -1, 1 };
	int64_t rows[7] = { -1, 0, 1 };
	int nv = aoe_cpu_avx512() ? 3 : 2, nr = 3;

	if (reg)
		rows[nr++] = 2;
	if (flat)
		rows[nr++] = 3;
	rows[nr++] = 4;
	if (phase)
		rows[nr++] = 5;
	if (aoe_space_add(sp, "dw_rows", live ? nr : 1, rows,
	    "algo=4: -1 auto (3x3 and 5x5 at stride 2: AVX-512 5, but 4 on "
	    "outputs 8 wide or less from rows wider than 16; AVX2 0, but 4 "
	    "on outputs 8 wide or less with an epilogue other than a plain "
	    "Relu or Clip; at stride 1: "
	    "AVX-512 4 on planes 8 wide or less (2 for 3x3 with a plain "
	    "Relu or Clip fused), else 2; AVX2 2 for 5x5 "
	    "and planes 8 wide or less, else 0), 0 the NCHW plane "
	    "and 8-channel kernels, 1 by rows through a ring of padded rows, "
	    "2 register-blocked passes of dw_oh rows by dw_ow vectors, read "
	    "in place under edge masks (3x3 and 5x5, strides 1 and 2), 3 "
	    "flat: a padded, phase-split copy of the plane and whole vectors "
	    "over its flattened output grid (up to 7x7, strides 1 and 2), 4 "
	    "channels in the lanes: dw_vec planes interleaved a band of rows "
	    "at a time, whole vectors over the flattened output grid (any "
	    "kernel, stride, pads), 5 phases: stride-2 rows read in place, "
	    "a pair of loads split into even and odd columns making two "
	    "taps (3x3 and 5x5, left pad 0 or half the kernel); 1 to 5 fuse "
	    "the epilogue (k_dwconv.c)") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, -1);
	if (aoe_space_add(sp, "dw_vec", live ? nv : 1, vec, "algo=4 with "
	    "dw_rows=1 to 5: vector width, 0 auto (dw_rows=1, 3, 4 and 5: 16 "
	    "where AVX-512 is allowed, else 8; dw_rows=2: 16 there when the "
	    "output is wider than 8 columns, else 8), 8, 16") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 0);
	if (aoe_space_add(sp, "dw_oh", reg ? 5 : 1, oh, "algo=4 with "
	    "dw_rows=2: output rows a pass, 0 auto, 1, 2, 4, 8") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 0);
	if (aoe_space_add(sp, "dw_ow", reg ? 3 : 1, ow, "algo=4 with "
	    "dw_rows=2: vectors a pass along a row, 0 auto, 1, 2") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 0);
	if (aoe_space_add(sp, "dw_nt", live ? 2 : 1, nt, "algo=4 with "
	    "dw_rows -1, 0, 2, 4 or 5 (0 with eight planes an item, 4 and 5 with "
	    "whole planes): the output made in a per-thread buffer and "
	    "streamed to memory "
	    "(non-temporal stores), -1 auto (at 2 threads and more, on "
	    "cores far apart, outputs of 64 KB to 1 MB that a Conv of one "
	    "group reads), 1 yes") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, -1);
	return 0;
}

/*
 * The channels-in-lanes kernel (dw_rows=4): any 2-D depthwise Conv of at
 * most 64 taps, any strides, dilations and pads, vw channels (8 under
 * AVX2, 16 under AVX-512) a pass, the lanes of one vector being the
 * channels.  A band of input rows of the vw planes is interleaved,
 * zero-padded, into a per-thread buffer as [row][column][channel] (a
 * vw x vw transpose a vw pixels), so that every tap of an output pixel,
 * at any stride, is one plain load and one FMA for vw channels; the
 * output pixels of the band go vw at a time over the flattened
 * rows-by-columns grid (no lanes lost to short rows: a 7x7 plane is 49
 * pixels, not 7 rows of 16), are transposed back, and the fused
 * epilogue (residual, activation, per-channel affine) runs on them in
 * registers before the store.  It is k_conv.c's 8-channel kernel
 * (dw_rows=0) at 16 lanes and with the epilogue fused, which that one
 * runs as a second pass over the output.
 */
struct dl_ctx {
	const aoe_conv_geom *g;
	const float *x, *w, *bias, *add;
	float *y;
	aoe_epi e;
	int epi, vw;
	int64_t RW, OB, nb, groups, items, nch, ring;
	int nt;
	size_t bufsz;
	int *fail;
};

/* One band: output rows oh0..oh1 of channels m0..m0+nch of image b. */
struct dl_band {
	const float *xp[16];
	float *yp[16];
	const float *ap[16];
	float ps[16], pt[16], wt[DW_MAXT * 16], bv[16];
	int64_t toff[DW_MAXT];
	int64_t oh0, oh1, RH;
	int nch, aff;
	float *buf;
};

static void
dl_band_of(const struct dl_ctx *d, int64_t b, int64_t m0, int nch,
    int64_t oh0, int64_t oh1, float *buf, struct dl_band *bd)
{
	const aoe_conv_geom *g = d->g;
	const int64_t nt = g->k[1] * g->k[2], vw = d->vw;
	int64_t t;
	int l;

	bd->oh0 = oh0;
	bd->oh1 = oh1;
	bd->RH = (oh1 - oh0 - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
	bd->nch = nch;
	bd->buf = buf;
	bd->aff = d->e.ps != NULL || d->e.pt != NULL;
	for (l = 0; l < vw; l++) {
		/* Lanes past the last channel repeat it (and are not stored). */
		int64_t m = m0 + (l < nch ? l : nch - 1);
		bd->xp[l] = d->x + (b * g->c + m / g->mg) * g->insz;
		bd->yp[l] = d->y + (b * g->m + m) * g->outsz;
		bd->ap[l] = d->add ? d->add + (b * g->m + m) * g->outsz : NULL;
		bd->bv[l] = d->bias ? d->bias[m] : 0;
		bd->ps[l] = d->e.ps ? d->e.ps[m] : 1;
		bd->pt[l] = d->e.pt ? d->e.pt[m] : 0;
		for (t = 0; t < nt; t++)
			bd->wt[t * vw + l] = d->w[m * nt + t];
	}
	for (t = 0; t < nt; t++)
		bd->toff[t] = ((t / g->k[2]) * g->d[1] * d->RW +
		    (t % g->k[2]) * g->d[2]) * vw;
}

/* The buffer offsets (floats) of the output pixels p..p+n of a band. */
static inline __attribute__((always_inline)) void
dl_offsets(const aoe_conv_geom *g, int64_t RW, int vw, int64_t p, int n,
    int64_t *po)
{
	const int64_t OW = g->out[2], sh = g->s[1], sw = g->s[2];
	int64_t oh = p / OW, ow = p % OW;
	int l;

	for (l = 0; l < vw; l++) {
		po[l] = (oh * sh * RW + ow * sw) * vw;
		if (l + 1 < n && ++ow == OW) {
			ow = 0;
			oh++;
		}
	}
}

/*
 * The rows of a band go through the buffer in one of two ways.  Flat
 * (ring 0): every input row of the band is interleaved first, then the
 * output pixels go vw at a time over the flattened band, rows run
 * together; for small planes, whose band fits L1.  Ring (ring = the
 * kernel's dilated height): the buffer holds that many rows, each
 * output row interleaves the input rows it is the first to need into
 * the ring (so a row is copied once and read while in L1) and goes vw
 * pixels at a time along the row.
 */
#define DL_BAND(NAME, V, VT, FILLROW, BLOCK)				\
static void								\
NAME(const struct dl_ctx *d, struct dl_band *bd)			\
{									\
	const aoe_conv_geom *g = d->g;					\
	const int64_t OW = g->out[2], RW = d->RW, sh = g->s[1];		\
	const int64_t KW = g->k[2], nt = g->k[1] * KW;			\
	const int64_t np = (bd->oh1 - bd->oh0) * OW;			\
	const int64_t ih0 = bd->oh0 * sh - g->pb[1];			\
	VT wv[DW_MAXT];							\
	int64_t rr, p, t, j, filled = 0, po[V];				\
	int l;								\
									\
	for (t = 0; t < nt; t++)					\
		wv[t] = LOADW(bd->wt + t * V);				\
	if (!d->ring) {							\
		for (rr = 0; rr < bd->RH; rr++)				\
			FILLROW(d, bd, ih0 + rr, bd->buf + rr * RW * V); \
		for (p = 0; p < np; p += V) {				\
			int n = (int)min64(V, np - p);			\
			dl_offsets(g, RW, V, p, n, po);			\
			BLOCK(d, bd, wv, po, nt, n, bd->oh0 * OW + p);	\
		}							\
		return;							\
	}								\
	for (j = 0; j < bd->oh1 - bd->oh0; j++) {			\
		int64_t need = j * sh + (g->k[1] - 1) * g->d[1] + 1, ow; \
		for (; filled < need; filled++)				\
			FILLROW(d, bd, ih0 + filled, bd->buf +		\
			    filled % d->ring * RW * V);			\
		for (t = 0; t < nt; t++)				\
			bd->toff[t] = ((j * sh + t / KW * g->d[1]) %	\
			    d->ring * RW + t % KW * g->d[2]) * V;	\
		for (ow = 0; ow < OW; ow += V) {			\
			int n = (int)min64(V, OW - ow);			\
			for (l = 0; l < V; l++)				\
				po[l] = min64(ow + l, OW - 1) * g->s[2] * V; \
			BLOCK(d, bd, wv, po, nt, n, (bd->oh0 + j) * OW + ow); \
		}							\
	}								\
}

/*
 * Eight-lane form (AVX2).  One input row ih (zeros outside the image)
 * interleaved into dst as [column][8 channels].
 */
static inline __attribute__((always_inline)) void
dl_fill8(const struct dl_ctx *d, const struct dl_band *bd, int64_t ih,
    float *dst)
{
	const aoe_conv_geom *g = d->g;
	const int64_t I2 = g->in[2], RW = d->RW, pw = g->pb[2];
	const int64_t lo = min64(pw, RW), hi = min64(pw + I2, RW);
	const int64_t mid = max64(hi, lo);
	__m256 r[8];
	int64_t c;
	int l;

	if (ih < 0 || ih >= g->in[1]) {
		memset(dst, 0, sizeof(float) * RW * 8);
		return;
	}
	memset(dst, 0, sizeof(float) * lo * 8);
	for (c = lo; c < hi; c += 8) {
		int n = (int)min64(8, hi - c);
		if (n == 8)
			for (l = 0; l < 8; l++)
				r[l] = _mm256_loadu_ps(bd->xp[l] + ih * I2 +
				    c - pw);
		else {
			__m256i mk = aoe_lane_mask(n);
			for (l = 0; l < 8; l++)
				r[l] = _mm256_maskload_ps(bd->xp[l] +
				    ih * I2 + c - pw, mk);
		}
		aoe_tr8(r);
		/*
		 * A whole block by constant-count stores (a loop of n of
		 * them compiles to a rep movs from a spill, 3x slower).
		 */
		if (n == 8)
			for (l = 0; l < 8; l++)
				_mm256_storeu_ps(dst + (c + l) * 8, r[l]);
		else
			for (l = 0; l < 8; l++)
				if (l < n)
					_mm256_storeu_ps(dst + (c + l) * 8,
					    r[l]);
	}
	memset(dst + mid * 8, 0, sizeof(float) * (RW - mid) * 8);
}

/*
 * Eight output pixels (buffer offsets po) of the eight channels, four
 * accumulators a pass as dw8_pixels, transposed, the epilogue, and the
 * first n stored at yo of each channel's plane.
 */
static inline __attribute__((always_inline)) void
dl_block8(const struct dl_ctx *d, const struct dl_band *bd,
    const __m256 *wv, const int64_t *po, int64_t nt, int n, int64_t yo)
{
	const __m256 vb = _mm256_loadu_ps(bd->bv);
	__m256 r[8];
	int64_t t;
	int l;

	for (l = 0; l < 8; l += 4) {
		const float *p0 = bd->buf + po[l], *p1 = bd->buf + po[l + 1];
		const float *p2 = bd->buf + po[l + 2], *p3 = bd->buf +
		    po[l + 3];
		__m256 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
#define DL_TAP8 do {							\
	int64_t o = bd->toff[t];					\
	a0 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(p0 + o), a0);	\
	a1 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(p1 + o), a1);	\
	a2 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(p2 + o), a2);	\
	a3 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(p3 + o), a3);	\
} while (0)
		if (nt == 9)
			for (t = 0; t < 9; t++)
				DL_TAP8;
		else
			for (t = 0; t < nt; t++)
				DL_TAP8;
#undef DL_TAP8
		r[l] = a0;
		r[l + 1] = a1;
		r[l + 2] = a2;
		r[l + 3] = a3;
	}
	aoe_tr8(r);
	if (n == 8 && !d->epi) {
		for (l = 0; l < bd->nch; l++)
			_mm256_storeu_ps(bd->yp[l] + yo, r[l]);
		return;
	}
	{
		__m256i mk = aoe_lane_mask(n);
		for (l = 0; l < bd->nch; l++) {
			__m256 v = r[l];
			if (d->epi) {
				if (bd->ap[l])
					v = _mm256_add_ps(v, n == 8 ?
					    _mm256_loadu_ps(bd->ap[l] + yo) :
					    _mm256_maskload_ps(bd->ap[l] + yo,
					    mk));
				v = aoe_epi_k8(d->e.kind, &d->e, v);
				if (bd->aff)
					v = _mm256_fmadd_ps(v,
					    _mm256_set1_ps(bd->ps[l]),
					    _mm256_set1_ps(bd->pt[l]));
			}
			if (n == 8)
				_mm256_storeu_ps(bd->yp[l] + yo, v);
			else
				_mm256_maskstore_ps(bd->yp[l] + yo, mk, v);
		}
	}
}

#define LOADW _mm256_loadu_ps
DL_BAND(dl_band8, 8, __m256, dl_fill8, dl_block8)
#undef LOADW

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
/* Transpose 16x16 in registers: on return r[q] holds lane q of each r. */
static inline __attribute__((always_inline)) void
dl_tr16(__m512 r[16])
{
	__m512 t[16], u[16];
	int i;

	for (i = 0; i < 16; i += 2) {
		t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);
		t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);
	}
	/* t[2j], t[2j+1]: rows 2j, 2j+1 interleaved in pairs per 128 bits. */
	for (i = 0; i < 16; i += 4) {
		u[i] = _mm512_castpd_ps(_mm512_unpacklo_pd(
		    _mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
		u[i + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(
		    _mm512_castps_pd(t[i]), _mm512_castps_pd(t[i + 2])));
		u[i + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(
		    _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
		u[i + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(
		    _mm512_castps_pd(t[i + 1]), _mm512_castps_pd(t[i + 3])));
	}
	/*
	 * u[4a + q], lane block j (of four floats): column 4j + q of rows
	 * 4a..4a+3.  Gather the 128-bit blocks across the four groups.
	 */
	for (i = 0; i < 4; i++) {
		t[i] = _mm512_shuffle_f32x4(u[i], u[4 + i], 0x88);
		t[4 + i] = _mm512_shuffle_f32x4(u[i], u[4 + i], 0xdd);
		t[8 + i] = _mm512_shuffle_f32x4(u[8 + i], u[12 + i], 0x88);
		t[12 + i] = _mm512_shuffle_f32x4(u[8 + i], u[12 + i], 0xdd);
	}
	for (i = 0; i < 4; i++) {
		r[i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0x88);
		r[8 + i] = _mm512_shuffle_f32x4(t[i], t[8 + i], 0xdd);
		r[4 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0x88);
		r[12 + i] = _mm512_shuffle_f32x4(t[4 + i], t[12 + i], 0xdd);
	}
}

/* The sixteen-lane forms (AVX-512) of dl_fill8 and dl_block8. */
static inline __attribute__((always_inline)) void
dl_fill16(const struct dl_ctx *d, const struct dl_band *bd, int64_t ih,
    float *dst)
{
	const aoe_conv_geom *g = d->g;
	const int64_t I2 = g->in[2], RW = d->RW, pw = g->pb[2];
	const int64_t lo = min64(pw, RW), hi = min64(pw + I2, RW);
	const int64_t mid = max64(hi, lo);
	__m512 r[16];
	int64_t c;
	int l;

	if (ih < 0 || ih >= g->in[1]) {
		memset(dst, 0, sizeof(float) * RW * 16);
		return;
	}
	memset(dst, 0, sizeof(float) * lo * 16);
	for (c = lo; c < hi; c += 16) {
		int n = (int)min64(16, hi - c);
		__mmask16 mk = (__mmask16)((1u << n) - 1);
		for (l = 0; l < 16; l++)
			r[l] = _mm512_maskz_loadu_ps(mk, bd->xp[l] + ih * I2 +
			    c - pw);
		dl_tr16(r);
		if (n == 16)
			for (l = 0; l < 16; l++)
				_mm512_storeu_ps(dst + (c + l) * 16, r[l]);
		else
			for (l = 0; l < 16; l++)
				if (l < n)
					_mm512_storeu_ps(dst + (c + l) * 16,
					    r[l]);
	}
	memset(dst + mid * 16, 0, sizeof(float) * (RW - mid) * 16);
}

/* Eight accumulators a pass. */
static inline __attribute__((always_inline)) void
dl_block16(const struct dl_ctx *d, const struct dl_band *bd,
    const __m512 *wv, const int64_t *po, int64_t nt, int n, int64_t yo)
{
	const __m512 vb = _mm512_loadu_ps(bd->bv);
	const __mmask16 mk = (__mmask16)((1u << n) - 1);
	__m512 r[16];
	int64_t t;
	int l;

	for (l = 0; l < 16; l += 8) {
		const float *p0 = bd->buf + po[l], *p1 = bd->buf + po[l + 1];
		const float *p2 = bd->buf + po[l + 2], *p3 = bd->buf +
		    po[l + 3];
		const float *p4 = bd->buf + po[l + 4], *p5 = bd->buf +
		    po[l + 5];
		const float *p6 = bd->buf + po[l + 6], *p7 = bd->buf +
		    po[l + 7];
		__m512 a0 = vb, a1 = vb, a2 = vb, a3 = vb, a4 = vb, a5 = vb,
		    a6 = vb, a7 = vb;
#define DL_TAP16 do {							\
	int64_t o = bd->toff[t];					\
	a0 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p0 + o), a0);	\
	a1 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p1 + o), a1);	\
	a2 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p2 + o), a2);	\
	a3 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p3 + o), a3);	\
	a4 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p4 + o), a4);	\
	a5 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p5 + o), a5);	\
	a6 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p6 + o), a6);	\
	a7 = _mm512_fmadd_ps(wv[t], _mm512_loadu_ps(p7 + o), a7);	\
} while (0)
		if (nt == 9)
			for (t = 0; t < 9; t++)
				DL_TAP16;
		else if (nt == 25)
			for (t = 0; t < 25; t++)
				DL_TAP16;
		else
			for (t = 0; t < nt; t++)
				DL_TAP16;
#undef DL_TAP16
		r[l] = a0;
		r[l + 1] = a1;
		r[l + 2] = a2;
		r[l + 3] = a3;
		r[l + 4] = a4;
		r[l + 5] = a5;
		r[l + 6] = a6;
		r[l + 7] = a7;
	}
	dl_tr16(r);
	for (l = 0; l < bd->nch; l++) {
		__m512 v = r[l];
		if (d->epi) {
			if (bd->ap[l])
				v = _mm512_add_ps(v, _mm512_maskz_loadu_ps(mk,
				    bd->ap[l] + yo));
			v = aoe_epi_k16(d->e.kind, &d->e, v);
			if (bd->aff)
				v = _mm512_fmadd_ps(v, _mm512_set1_ps(bd->ps[l]),
				    _mm512_set1_ps(bd->pt[l]));
		}
		_mm512_mask_storeu_ps(bd->yp[l] + yo, mk, v);
	}
}

#define LOADW _mm512_loadu_ps
DL_BAND(dl_band16, 16, __m512, dl_fill16, dl_block16)
#undef LOADW
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

static void
dl_chunk(void *arg, int64_t c, int tid)
{
	const struct dl_ctx *d = arg;
	const aoe_conv_geom *g = d->g;
	int64_t it, i1 = aoe_chunk_lo(d->items, d->nch, c + 1);
	struct dl_band bd;
	float *y, *sb;
	int nch, l;

	(void)tid;
	for (it = aoe_chunk_lo(d->items, d->nch, c); it < i1; it++) {
		int64_t band = it % d->nb, gi = it / d->nb % d->groups;
		int64_t b = it / d->nb / d->groups, m0 = gi * d->vw;
		int64_t oh0 = band * d->OB, oh1 = min64(oh0 + d->OB, g->out[1]);
		float *buf = aoe_sgemm_tlbuf(2, d->bufsz);

		if (buf == NULL) {
			*d->fail = 1;
			return;
		}
		nch = (int)min64(d->vw, g->m - m0);
		dl_band_of(d, b, m0, nch, oh0, oh1, buf, &bd);
		/* With whole planes, the item's output is one range of y. */
		y = d->y + (b * g->m + m0) * g->outsz;
		sb = NULL;
		if (d->nt && d->nb == 1) {
			if ((sb = aoe_stage_buf(y, nch * g->outsz)) == NULL) {
				*d->fail = 1;
				return;
			}
			for (l = 0; l < d->vw; l++)
				bd.yp[l] = sb + min64(l, nch - 1) * g->outsz;
		}
		if (d->vw == 16)
			dl_band16(d, &bd);
		else
			dl_band8(d, &bd);
		if (sb != NULL)
			aoe_stage_put(y, sb, nch * g->outsz);
	}
}

/*
 * Measured (tests/unit-dwconv with DWCONV_BENCH=1 DWCONV_ACT=2, Clip
 * fused, 1 thread, CPU time, medians of 15 interleaved rounds, a
 * loaded Zen 5), us, dw_rows=4 at 16 lanes against the previous
 * default: AVX-512, stride 2: 576 @14 3x3 23.3 against 35.6, 672 @14
 * 5x5 43.1 against 67.8, 192 @28 3x3 27.4 against 31.2, 240 @28 3x3
 * 37.4 against 39.0, 144 @56 5x5 139.4 against 152.6, 144 @56 3x3 86.6
 * against 89.2; 96 @112 3x3 234.7 against 207.0 for the 8-channel
 * kernel (that one stays); stride 1 on 7x7 planes: 960 3x3 30.3
 * against 34.1 (dw_rows=3), 1152 3x3 35.9 against 41.2, 1152 5x5 61.6
 * against 75.0 (dw_rows=2), 960 5x5 51.5 against 62.1; on 14x14 and
 * larger at stride 1 it ties or loses (384 @14 3x3 34.3 against 32.2,
 * 240 @28 5x5 163.6 against 115.7).  AVX2 (8 lanes): stride 2 576 @14
 * 33.6 against 40.1, 672 @14 5x5 60.6 against 74.0, @28 even (34.0
 * against 34.6), @56 and @112 1.1x to 1.4x slower; stride 1 @7 5%
 * slower than dw_rows=2.
 */
int
aoe_dw_lanes(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nt, int nthreads)
{
	struct dl_ctx d;
	const int64_t OH = g->out[1], OW = g->out[2];
	const int64_t kh = (g->k[1] - 1) * g->d[1] + 1;
	int fail = 0;

	if (!aoe_dw_rows_ok(g))
		return aoe_err(AOE_EINTERNAL, "dw_rows=4 does not apply");
	memset(&d, 0, sizeof(d));
	d.vw = vw == 16 || (vw != 8 && aoe_dw_default_vec() == 16) ? 16 : 8;
	if (d.vw == 16 && !aoe_cpu_avx512())
		d.vw = 8;
	d.g = g;
	d.x = x;
	d.w = w;
	d.bias = bias;
	d.add = add;
	d.y = y;
	d.epi = (act != NULL && aoe_act_epi(act, &d.e)) || add != NULL;
	if (d.epi && act == NULL) {
		d.e.kind = AOE_EPI_CLAMP;
		d.e.lo = -3.4028235e38f;
		d.e.hi = 3.4028235e38f;
	}
	if (!d.epi)
		memset(&d.e, 0, sizeof(d.e));
	d.RW = (OW - 1) * g->s[2] + (g->k[2] - 1) * g->d[2] + 1;
	/*
	 * Flat when the whole plane's interleaved input takes 32 KB or
	 * less (in L1 while it is read), else through a ring of kh rows.
	 * Bands of rows only where the channel groups are too few for the
	 * threads.
	 */
	d.ring = ((OH - 1) * g->s[1] + kh) * d.RW * d.vw <= 8192 ? 0 : kh;
	d.OB = OH;
	d.groups = (g->m + d.vw - 1) / d.vw;
	if (nthreads < 2 || g->n * g->m * g->outsz * g->ksz <= 32768)
		nthreads = 1;
	while (d.OB > 1 && g->n * d.groups * ((OH + d.OB - 1) / d.OB) <
	    2 * nthreads)
		d.OB = (d.OB + 1) / 2;
	d.nb = (OH + d.OB - 1) / d.OB;
	d.bufsz = (size_t)((d.ring ? kh : (d.OB - 1) * g->s[1] + kh) *
	    d.RW * d.vw);
	d.items = g->n * d.groups * d.nb;
	d.nt = aoe_dw_stream(g, nt, nthreads);
	d.nch = aoe_nchunks(d.items, nthreads);
	d.fail = &fail;
	aoe_parallel(nthreads, d.nch, dl_chunk, &d);
	return fail ? -1 : 0;
}

/*
 * The phase kernel (dw_rows=5): 3x3 and 5x5 kernels at stride 2,2, unit
 * dilations, a left pad of 0 or half the kernel (the same-size padding
 * of MobileNet and EfficientNet), any other pads.  The input is read in
 * place, as by the register-blocked kernel, but a stride-2 row is split
 * into its two phases once for every tap that reads it: an output
 * vector's taps at input columns 2 ow + d, d = kw - pad, are the even
 * (d even) or odd (d odd) lanes of the pair of vectors that starts at
 * column 2 ow + 2 floor(d / 2), so one pair of loads and two permutes
 * (AVX-512; on AVX2 two shuffles, whose lanes come out in the order 0 1
 * 4 5 2 3 6 7, the same for every tap, put right once as the result is
 * stored) make two taps, where the register-blocked kernel loads a pair
 * for each.  A pass makes DP_R rows of V vectors (1, 2 or 4: the
 * fewest that hold a row, up to 4; on AVX-512 outputs 8 wide or less
 * from rows of 16 floats or less take one vector for two rows,
 * dq16_blk); a block of columns
 * whose loads all fall inside the image loads plainly, one at an edge
 * under masks made once a call, zero outside, so the pads cost nothing
 * and nothing outside the row is read.  Rows above and below the image
 * are skipped.  Zen 5 (AVX-512, 1 thread, warm, bench/convb, with a
 * Relu): mobilenet_v2's 96 @112/2 from 140 us (the 8-channel kernel)
 * to 86, 144 @56/2 from 74 to 57.  The epilogue is the register-blocked
 * kernel's: a plain Relu or Clip at each store, SiLU and HardSwish on
 * the accumulators, any other on the pass's rows while in L1.  Threads
 * split the planes.
 */
/* Rows a pass (4 rows of 2 vectors lost: 72 @56/2 5x5 38 to 45 us). */
#define DP_R 2
#define DP_MAXV 4
#define DP_MAXB 24	/* masks a column block: pairs (3) x V x halves */

int
aoe_dw_phase_ok(const aoe_conv_geom *g)
{
	return g->nsp == 2 && g->cg == 1 && g->k[1] == g->k[2] &&
	    (g->k[1] == 3 || g->k[1] == 5) && g->s[1] == 2 && g->s[2] == 2 &&
	    g->d[1] == 1 && g->d[2] == 1 &&
	    (g->pb[2] == 0 || g->pb[2] == g->k[2] / 2);
}

/* AVX2: eight floats a vector, masks as eight lanes of -1 or 0. */
static inline __attribute__((always_inline)) __m256
dp_mload8(const float *p, dr_m8 m)
{
	return _mm256_maskload_ps(p, _mm256_loadu_si256((const __m256i *)
	    (const void *)m.l));
}

/* The phase kernel's activation of an output vector, as it is stored. */
static inline __attribute__((always_inline)) __m256
dp_act8(const struct dr_args *a, __m256 o)
{
	if (a->act == 1)
		return aoe_v8_silu(o);
	if (a->act == 2)
		return dr_hswish8(o);
	if (a->clamp)
		return _mm256_min_ps(_mm256_set1_ps(a->hi),
		    _mm256_max_ps(_mm256_set1_ps(a->lo), o));
	return o;
}

/*
 * One pass of DP_R rows from oh0 and V vectors of 8 floats from ow0 on
 * AVX2: a pair of vectors for each shift jj (NJ of them), its phases'
 * lanes in shuffle order until the store.  PL is the left pad, ER says
 * a row may be outside the image (or past the output), EC that a load
 * may be.
 */
static inline __attribute__((always_inline)) void
dp8_blk(const int K, const int PL, const int V, const int ER, const int EC,
    const struct dr_args *a, int64_t oh0, int64_t ow0, const dr_m8 *mk)
{
	const int J0 = PL ? -1 : 0, NJ = K == 3 ? 2 : 3;
	__m256 acc[DP_R][DP_MAXV], t[5], wv[9];
	int64_t j, ih;
	int r, v, c, kw;

	for (r = 0; r < DP_R; r++)
		for (v = 0; v < V; v++)
			acc[r][v] = _mm256_set1_ps(a->bv);
	for (r = 0; K == 3 && r < 9; r++)
		wv[r] = _mm256_set1_ps(a->w[r]);
	_Pragma("GCC unroll 16")
	for (j = 0; j < 2 * (DP_R - 1) + K; j++) {
		const float *xr;
		ih = 2 * oh0 - a->pt + j;
		if (ER && (ih < 0 || ih >= a->H))
			continue;
		xr = a->x + ih * a->W + 2 * ow0;
		_Pragma("GCC unroll 4")
		for (v = 0; v < V; v++) {
			_Pragma("GCC unroll 3")
			for (c = 0; c < NJ; c++) {
				const float *p = xr + 2 * v * 8 +
				    2 * (J0 + c);
				const dr_m8 *m = mk + (v * NJ + c) * 2;
				__m256 u = EC ? dp_mload8(p, m[0]) :
				    _mm256_loadu_ps(p);
				__m256 z = EC ? dp_mload8(p + 8, m[1]) :
				    _mm256_loadu_ps(p + 8);
				kw = 2 * (J0 + c) + PL;
				if (kw >= 0 && kw < K)
					t[kw] = dw_even8_raw(u, z);
				if (kw + 1 >= 0 && kw + 1 < K)
					t[kw + 1] = dw_odd8_raw(u, z);
			}
			_Pragma("GCC unroll 2")
			for (r = 0; r < DP_R; r++) {
				const int kh = (int)j - 2 * r;
				if (kh < 0 || kh >= K)
					continue;
				_Pragma("GCC unroll 5")
				for (kw = 0; kw < K; kw++)
					acc[r][v] = _mm256_fmadd_ps(K == 3 ?
					    wv[kh * K + kw] :
					    _mm256_set1_ps(a->w[kh * K + kw]),
					    t[kw], acc[r][v]);
			}
		}
	}
	for (r = 0; r < DP_R; r++) {
		float *yr = a->y + (oh0 + r) * a->OW + ow0;
		if (ER && oh0 + r >= a->OH)
			break;
		for (v = 0; v < V; v++) {
			int64_t left = a->OW - ow0 - v * 8;
			__m256 o;
			if (left <= 0)
				break;
			o = dp_act8(a, dw_order8(acc[r][v]));
			if (left >= 8)
				_mm256_storeu_ps(yr + v * 8, o);
			else
				dr_pstore8(yr + v * 8, o, left);
		}
	}
}

/*
 * Whether a pass of R rows from oh0 reads a row outside the image or
 * makes one past the output.
 */
static inline int
dp_edge_rows(const struct dr_args *a, int K, int R, int64_t oh0)
{
	return 2 * oh0 - a->pt < 0 || 2 * (oh0 + R - 1) - a->pt + K > a->H ||
	    oh0 + R > a->OH;
}

/* A pass over every column block, for DP_R rows from oh0. */
#define DP_ROWS(NAME, BLK, MT, VW)					\
static inline __attribute__((always_inline)) void			\
NAME(const int K, const int PL, const int V, const struct dr_args *a,	\
    int64_t oh0)							\
{									\
	const MT *mk = a->mk;						\
	const int er = dp_edge_rows(a, K, DP_R, oh0);			\
	int64_t b;							\
									\
	for (b = 0; b < a->nb; b++) {					\
		const MT *m = mk + b * DP_MAXB;				\
		int64_t ow0 = b * V * (int64_t)VW;			\
		if (er && a->edge[b])					\
			BLK(K, PL, V, 1, 1, a, oh0, ow0, m);		\
		else if (er)						\
			BLK(K, PL, V, 1, 0, a, oh0, ow0, m);		\
		else if (a->edge[b])					\
			BLK(K, PL, V, 0, 1, a, oh0, ow0, m);		\
		else							\
			BLK(K, PL, V, 0, 0, a, oh0, ow0, m);		\
	}								\
}

/* The instances: K 3 and 5, left pad 0 and K / 2, V 1, 2 and 4. */
#define DP_FN(P, K, PL, V)						\
static void								\
P##_##K##_##PL##_##V(const struct dr_args *restrict a, int64_t oh0,	\
    int64_t oh1)							\
{									\
	for (; oh0 < oh1; oh0 += DP_R)					\
		P##_rows(K, PL, V, a, oh0);				\
}
#define DP_FN_K(P, K, PL) DP_FN(P, K, PL, 1) DP_FN(P, K, PL, 2)	\
	DP_FN(P, K, PL, 4)
#define DP_FN_ALL(P) DP_FN_K(P, 3, 0) DP_FN_K(P, 3, 1) DP_FN_K(P, 5, 0) \
	DP_FN_K(P, 5, 2)
#define DP_T_V(P, K, PL) { P##_##K##_##PL##_1, P##_##K##_##PL##_2,	\
	P##_##K##_##PL##_4 }
#define DP_TAB(P) {							\
	{ DP_T_V(P, 3, 0), DP_T_V(P, 3, 1) },				\
	{ DP_T_V(P, 5, 0), DP_T_V(P, 5, 2) } }

DP_ROWS(dp8_rows, dp8_blk, dr_m8, 8)
DP_FN_ALL(dp8)
static dr_fn *const dp8_tab[2][2][3] = DP_TAB(dp8);

/* AVX-512: sixteen floats a vector, two-source permutes. */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
dp_mload16(const float *p, uint16_t m)
{
	return _mm512_maskz_loadu_ps((__mmask16)m, p);
}

/* dp_act8 on 16 floats. */
static inline __attribute__((always_inline)) __m512
dp_act16(const struct dr_args *a, __m512 o)
{
	if (a->act == 1)
		return aoe_z16_silu(o);
	if (a->act == 2)
		return dr_hswish16(o);
	if (a->clamp)
		return _mm512_min_ps(_mm512_set1_ps(a->hi),
		    _mm512_max_ps(_mm512_set1_ps(a->lo), o));
	return o;
}

/*
 * With two-source permutes and valignd, a row's pairs are loaded once
 * each, from column 2 ow0 on (aligned where the row is): the taps of
 * vector v with d = 2 jj + odd are its phase shifted by jj lanes, the
 * lanes shifted in taken from the pair before (jj < 0) or after.  So a
 * row is V + 1 or V + 2 pairs whatever the kernel (AVX2 has no
 * cross-lane shift: it loads a pair for each jj).
 */
static inline __attribute__((always_inline)) __m512
dp_shift16(__m512 prev, __m512 cur, __m512 next, const int jj)
{
	/*
	 * Literal shifts: unoptimised builds take no computed immediate.
	 * Each case casts only what it reads: the three casts made before
	 * the switch kept every pair of a 5x5 pass live, and the spills
	 * took 72 @56/2 from 38 to 74 us (c6abc73; Zen 5, 1 thread).
	 */
	if (jj == -1)
		return _mm512_castsi512_ps(_mm512_alignr_epi32(
		    _mm512_castps_si512(cur), _mm512_castps_si512(prev), 15));
	if (jj == 1)
		return _mm512_castsi512_ps(_mm512_alignr_epi32(
		    _mm512_castps_si512(next), _mm512_castps_si512(cur), 1));
	if (jj == 2)
		return _mm512_castsi512_ps(_mm512_alignr_epi32(
		    _mm512_castps_si512(next), _mm512_castps_si512(cur), 2));
	return cur;
}

static inline __attribute__((always_inline)) void
dp16_blk(const int K, const int PL, const int V, const int ER,
    const int EC, const struct dr_args *a, int64_t oh0, int64_t ow0,
    const uint16_t *mk)
{
	const int PREV = PL > 0, NEXT = K - 1 - PL >= 2;
	const int nf = EC ? mk[DP_MAXB - 1] : 0;
	__m512 acc[DP_R][DP_MAXV], t[5], wv[9], E[DP_MAXV + 2];
	__m512 O[DP_MAXV + 2];
	int64_t j, ih;
	int r, v, i, kw;

	for (r = 0; r < DP_R; r++)
		for (v = 0; v < V; v++)
			acc[r][v] = _mm512_set1_ps(a->bv);
	for (r = 0; K == 3 && r < 9; r++)
		wv[r] = _mm512_set1_ps(a->w[r]);
	_Pragma("GCC unroll 16")
	for (j = 0; j < 2 * (DP_R - 1) + K; j++) {
		const float *xr;
		ih = 2 * oh0 - a->pt + j;
		if (ER && (ih < 0 || ih >= a->H))
			continue;
		xr = a->x + ih * a->W + 2 * ow0;
		/*
		 * Pair i - 1 at column 2 ow0 + 32 (i - 1), mask 2 i, loaded
		 * as the vectors come (three pairs live, not V + 2); at an
		 * edge, pairs 1 to nf are whole (the masks' loads were an
		 * eighth of the time on 96 @112/2).
		 */
#define DP16_PAIR(i) do {						\
	const float *p = xr + 32 * ((i) - 1);				\
	const int full_ = !EC || ((i) >= 1 && (i) <= nf);		\
	__m512 u = full_ ? _mm512_loadu_ps(p) : dp_mload16(p, mk[2 * (i)]); \
	__m512 z = full_ ? _mm512_loadu_ps(p + 16) :			\
	    dp_mload16(p + 16, mk[2 * (i) + 1]);			\
	E[i] = df_even16(u, z);						\
	O[i] = df_odd16(u, z);						\
} while (0)
		_Pragma("GCC unroll 2")
		for (i = 1 - PREV; i <= NEXT; i++)
			DP16_PAIR(i);
		_Pragma("GCC unroll 4")
		for (v = 0; v < V; v++) {
			DP16_PAIR(v + 1 + NEXT);
			_Pragma("GCC unroll 5")
			for (kw = 0; kw < K; kw++) {
				const int d = kw - PL;
				const int jj = d >= 0 ? d / 2 : -1;
				t[kw] = (d - 2 * jj) ? dp_shift16(O[v], O[v + 1],
				    O[v + 2], jj) : dp_shift16(E[v], E[v + 1],
				    E[v + 2], jj);
			}
			_Pragma("GCC unroll 2")
			for (r = 0; r < DP_R; r++) {
				const int kh = (int)j - 2 * r;
				if (kh < 0 || kh >= K)
					continue;
				_Pragma("GCC unroll 5")
				for (kw = 0; kw < K; kw++)
					acc[r][v] = _mm512_fmadd_ps(K == 3 ?
					    wv[kh * K + kw] :
					    _mm512_set1_ps(a->w[kh * K + kw]),
					    t[kw], acc[r][v]);
			}
		}
#undef DP16_PAIR
	}
	for (r = 0; r < DP_R; r++) {
		float *yr = a->y + (oh0 + r) * a->OW + ow0;
		if (ER && oh0 + r >= a->OH)
			break;
		for (v = 0; v < V; v++) {
			int64_t left = a->OW - ow0 - v * 16;
			__m512 o;
			if (left <= 0)
				break;
			o = dp_act16(a, acc[r][v]);
			if (left >= 16)
				_mm512_storeu_ps(yr + v * 16, o);
			else
				dr_pstore16(yr + v * 16, o, left);
		}
	}
}
DP_ROWS(dp16_rows, dp16_blk, uint16_t, 16)
DP_FN_ALL(dp16)
static dr_fn *const dp16_tab[2][2][3] = DP_TAB(dp16);

/*
 * Outputs 8 wide or less from rows of 16 floats or less (mobilenet_v2's
 * 576 @14/2, efficientnet_b1's 672 @15/2 5x5): a vector holds two
 * output rows, lanes 0 to 7 row oh and 8 to 15 row oh + 1, so that
 * passes of one vector are not half empty.  Tap (kh, kw) of both rows
 * is one permute of input rows 2 oh - pt + kh (the low lanes' source)
 * and two rows below (the high lanes'): lane l takes column 2 (l % 8) +
 * kw - PL, zero where that is outside the 16 loaded (columns past the
 * row's end load as zero).  The two rows go out as one compressed, masked store:
 * they are one span of the plane.
 */
static inline __attribute__((always_inline)) void
dq16_blk(const int K, const int PL, const int ER, const struct dr_args *a,
    int64_t oh0)
{
	const __mmask16 lm = (__mmask16)((1u << a->W) - 1);
	const int64_t ow = a->OW, rows = a->OH - oh0 < 2 ? a->OH - oh0 : 2;
	__m512 acc = _mm512_set1_ps(a->bv), row[7];
	__m512i idx[5];
	__mmask16 zm[5];
	int64_t ih;
	int j, kh, kw, l;

	for (kw = 0; kw < K; kw++) {
		int32_t ix[16];
		uint32_t z = 0;
		for (l = 0; l < 16; l++) {
			int c = 2 * (l % 8) + kw - PL;
			ix[l] = (c < 0 || c > 15 ? 0 : c) + (l < 8 ? 0 : 16);
			z |= (uint32_t)(c >= 0 && c <= 15) << l;
		}
		idx[kw] = _mm512_loadu_si512(ix);
		zm[kw] = (__mmask16)z;
	}
	_Pragma("GCC unroll 7")
	for (j = 0; j < K + 2; j++) {
		ih = 2 * oh0 - a->pt + j;
		row[j] = ER && (ih < 0 || ih >= a->H) ? _mm512_setzero_ps() :
		    _mm512_maskz_loadu_ps(lm, a->x + ih * a->W);
	}
	_Pragma("GCC unroll 5")
	for (kh = 0; kh < K; kh++)
		_Pragma("GCC unroll 5")
		for (kw = 0; kw < K; kw++)
			acc = _mm512_fmadd_ps(_mm512_set1_ps(a->w[kh * K +
			    kw]), _mm512_maskz_permutex2var_ps(zm[kw],
			    row[kh], idx[kw], row[kh + 2]), acc);
	_mm512_mask_storeu_ps(a->y + oh0 * ow, (__mmask16)((1u << (rows *
	    ow)) - 1), _mm512_maskz_compress_ps((__mmask16)(((1u << ow) -
	    1) | ((1u << ow) - 1) << 8), dp_act16(a, acc)));
}

#define DQ_FN(K, PL)							\
static void								\
dq16_##K##_##PL(const struct dr_args *restrict a, int64_t oh0,		\
    int64_t oh1)							\
{									\
	for (; oh0 < oh1; oh0 += 2)					\
		if (dp_edge_rows(a, K, 2, oh0))				\
			dq16_blk(K, PL, 1, a, oh0);			\
		else							\
			dq16_blk(K, PL, 0, a, oh0);			\
}
DQ_FN(3, 0) DQ_FN(3, 1) DQ_FN(5, 0) DQ_FN(5, 2)
static dr_fn *const dq16_tab[2][2] = { { dq16_3_0, dq16_3_1 },
	{ dq16_5_0, dq16_5_2 } };
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

int
aoe_dw_phase(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nt, int nthreads)
{
	const int64_t K = g->k[1], W = g->in[2];
	const int nj = K == 3 ? 2 : 3;
	struct dr_ctx d;
	int64_t planes = g->n * g->m, nb, b, i, l;
	int fail = 0, V;
	unsigned char *edge;
	void *heap;

	if (!aoe_dw_phase_ok(g))
		return aoe_err(AOE_EINTERNAL, "dw_rows=5 does not apply");
	vw = (vw == 0 || vw == 16) && aoe_cpu_avx512() ? 16 : 8;
	V = g->out[2] <= vw ? 1 : g->out[2] <= 2 * vw ? 2 : 4;
	memset(&d, 0, sizeof(d));
	d.g = g;
	d.x = x;
	d.w = w;
	d.bias = bias;
	d.add = add;
	d.y = y;
	dr_epi_forms(act, add, &d.e, &d.epi, &d.clamp, &d.act);
	nb = (g->out[2] + (int64_t)V * vw - 1) / ((int64_t)V * vw);
	heap = malloc((size_t)nb * (1 + DP_MAXB * (vw == 8 ? sizeof(dr_m8) :
	    sizeof(uint16_t))) + 64);
	if (heap == NULL)
		return -1;
	d.mk = (char *)heap + ((nb + 63) & ~(int64_t)31);
	edge = heap;
	/*
	 * Masks: lane l of half h of a pair.  AVX2: mask 2 (v nj + c) + h
	 * for pair c of vector v, its first column 2 ow0 + 2 v vw + 2 (c +
	 * J0) + h vw; AVX-512: mask 2 i + h for the pair at 2 ow0 + 32 (i -
	 * 1) + 16 h (see dp16_blk).
	 */
	for (b = 0; b < nb; b++) {
		edge[b] = 0;
		for (i = 0; i < (vw == 8 ? V * nj : V + 2) * 2; i++) {
			int64_t v = i / (nj * 2), cc = i / 2 % nj, h = i % 2;
			int64_t col = vw == 16 ? 2 * b * V * vw + 32 * (i / 2 -
			    1) + 16 * h : 2 * (b * V * vw + v * vw) +
			    2 * (cc - (g->pb[2] ? 1 : 0)) + h * vw;
			uint32_t bits = 0;
			for (l = 0; l < vw; l++) {
				int in = col + l >= 0 && col + l < W;
				bits |= (uint32_t)in << l;
				if (vw == 8)
					((dr_m8 *)d.mk)[b * DP_MAXB + i].l[l] =
					    in ? -1 : 0;
			}
			if (vw == 16)
				((uint16_t *)d.mk)[b * DP_MAXB + i] =
				    (uint16_t)bits;
			if (bits != (vw == 16 ? 0xffffu : 0xffu))
				edge[b] = 1;
		}
		/* AVX-512: the whole pairs from the second on, in the last. */
		for (i = 1; vw == 16 && i < V + 2; i++)
			if (((uint16_t *)d.mk)[b * DP_MAXB + 2 * i] != 0xffff ||
			    ((uint16_t *)d.mk)[b * DP_MAXB + 2 * i + 1] !=
			    0xffff)
				break;
		if (vw == 16)
			((uint16_t *)d.mk)[b * DP_MAXB + DP_MAXB - 1] =
			    (uint16_t)(i - 1);
	}
	d.nb = nb;
	d.R = DP_R;
	d.edge = edge;
	d.fn = (vw == 16 ? dp16_tab : dp8_tab)[K == 5][g->pb[2] != 0][V / 2];
	if (vw == 16 && dq_fits(g))
		d.fn = dq16_tab[K == 5][g->pb[2] != 0];
	if (nthreads < 2 || planes < 2 || planes * g->outsz * g->ksz <= 32768)
		nthreads = 1;
	d.items = planes;
	d.nt = aoe_dw_stream(g, nt, nthreads);
	d.fail = &fail;
	d.nch = aoe_nchunks(planes, nthreads);
	aoe_parallel(nthreads, d.nch, dr_chunk, &d);
	free(heap);
	return fail ? -1 : 0;
}
