/*
 * k_conv8c.c - direct 2-D convolution in the blocked layout NCHW8c
 * (kernel.h), Conv's algo 7 ("blocked"); lib/kernels/k_conv.c parses the node
 * and calls in here.
 *
 * Dense convolution (group 1, or groups whose input and output channel
 * counts are both multiples of 8): the weights are repacked once, in
 * prepare, into groups of oc_blk blocks of 8 output channels, each
 * [icb][kh][kw][ic 8][oc_blk * 8], zero for channels past C and M.  A
 * register tile holds ur_w output pixels of a row times oc_blk blocks in
 * ymm accumulators; for each input channel of a block and kernel tap it
 * loads oc_blk weight vectors, broadcasts one input value per pixel and
 * does ur_w * oc_blk FMAs, as oneDNN's jit_avx2_conv does.  The
 * reduction runs ic_blk input blocks at a time over a chunk's rows, so
 * that those weights stay in L1, and partial sums go through the output.
 * Pixels whose taps fall outside the input columns (the borders) run one
 * at a time over their valid taps only; rows clip their taps likewise,
 * so that every pad, stride and dilation costs nothing in the interior.
 *
 * Depthwise convolution (one input and one output channel a group): one
 * vector of 8 channels per pixel, ur_w pixels a tile, the epilogue in
 * registers.
 *
 * The input may be NCHW8c or plain NCHW: the dense kernel reads a plain
 * input in place (broadcasts do not care where a value lies) unless the
 * knob x8c asks for a reorder into the workspace first; depthwise always
 * reorders a plain input.  A plain output is computed blocked in the
 * workspace and turned back, a chunk's rows at a time while they are in
 * cache, with the epilogue.  The epilogue (bias, residual, activation,
 * per-channel scale and shift) runs on each finished tile or row, and
 * writes 0 in the lanes past M of a blocked output.
 *
 * Work is cut into chunks of (image, group of oc_blk output blocks, oh_blk
 * output rows), run on the pool.
 *
 * Knobs (0 is auto in each): ur_w (1-14 output pixels a tile), oc_blk
 * (1-4 output blocks a tile; ur_w * oc_blk <= 14), ic_blk (input blocks
 * per pass of the reduction), oh_blk (output rows a chunk) and x8c
 * (dense: 1 reorders a plain input to NCHW8c first, 0 reads it in place).
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

#define UR_MAX 14

int
aoe_c8_kind(int64_t c, int64_t m, int64_t group)
{
	if (c < 1 || m < 1 || group < 1 || c % group || m % group)
		return 0;
	if (group == 1)
		return AOE_C8_DENSE;
	if (c == group && m == group)
		return AOE_C8_DEPTHWISE;
	if ((c / group) % 8 == 0 && (m / group) % 8 == 0)
		return AOE_C8_DENSE;
	return 0;
}

/* Blocks of 8 output channels in each group, and input blocks. */
static int64_t
c8_nbg(const aoe_c8 *p)
{
	return p->group == 1 ? ceildiv(p->m, 8) : p->m / p->group / 8;
}

static int64_t
c8_icbg(const aoe_c8 *p)
{
	return p->group == 1 ? ceildiv(p->c, 8) : p->c / p->group / 8;
}

/* The output blocks a tile, from the knob or the default. */
int
aoe_c8_ocblk(const aoe_c8 *p, const aoe_sched *s)
{
	int64_t v = aoe_sched_get(s, "oc_blk", 0);

	if (aoe_c8_kind(p->c, p->m, p->group) != AOE_C8_DENSE)
		return 1;
	if (v < 1 || v > 4)
		v = 4;
	return (int)min64(v, c8_nbg(p));
}

static void c8_interior(const aoe_c8 *, int64_t *, int64_t *);

/* The pixels a tile: ur_w, or the default for oc_blk. */
static int
c8_ur(const aoe_c8 *p, const aoe_sched *s, int ocb)
{
	static const int def[] = { 12, 6, 4, 3 };
	int64_t v = aoe_sched_get(s, "ur_w", 0);

	if (aoe_c8_kind(p->c, p->m, p->group) == AOE_C8_DEPTHWISE) {
		int64_t l, r, n;

		if (v >= 1 && v <= 8)
			return (int)v;
		/*
		 * Auto: the interior of a row in tiles of at most 8, evenly
		 * (12 pixels as 2 x 6, not 8 + 4); 8 was 1.3x faster than 4
		 * on 56x56 3x3/1, Zen 3.
		 */
		c8_interior(p, &l, &r);
		n = r - l;
		return n < 1 ? 1 : (int)ceildiv(n, ceildiv(n, 8));
	}
	if (v < 1 || v * ocb > UR_MAX)
		v = def[ocb - 1];
	return (int)v;
}

size_t
aoe_c8_wsize(const aoe_c8 *p)
{
	if (aoe_c8_kind(p->c, p->m, p->group) == AOE_C8_DEPTHWISE)
		return (size_t)(ceildiv(p->c, 8) * p->kh * p->kw * 8);
	return (size_t)(p->group * c8_nbg(p) * c8_icbg(p) * p->kh * p->kw *
	    64);
}

void
aoe_c8_weights(const aoe_c8 *p, int ocblk, const float *w, float *wp)
{
	int64_t khw = p->kh * p->kw, nbg, icbg, cg, mg, g, ob, j, icb, t;
	int64_t nocb, base;
	int ic, oc, i;

	if (aoe_c8_kind(p->c, p->m, p->group) == AOE_C8_DEPTHWISE) {
		for (ob = 0; ob < ceildiv(p->c, 8); ob++)
			for (t = 0; t < khw; t++)
				for (oc = 0; oc < 8; oc++)
					wp[(ob * khw + t) * 8 + oc] =
					    ob * 8 + oc < p->c ?
					    w[(ob * 8 + oc) * khw + t] : 0;
		return;
	}
	nbg = c8_nbg(p);
	icbg = c8_icbg(p);
	cg = p->c / p->group;
	mg = p->m / p->group;
	/*
	 * Group g's output blocks go in groups of ocblk (the last one
	 * shorter), each [icb][kh][kw][ic][nocb * 8], in block order.
	 */
	for (g = 0; g < p->group; g++)
		for (j = 0; j < nbg; j += ocblk) {
			nocb = min64(ocblk, nbg - j);
			base = (g * nbg + j) * icbg * khw * 64;
			for (icb = 0; icb < icbg; icb++)
				for (t = 0; t < khw; t++)
					for (ic = 0; ic < 8; ic++)
						for (i = 0; i < nocb; i++)
							for (oc = 0; oc < 8;
							    oc++) {
	int64_t mo = (j + i) * 8 + oc, ci = icb * 8 + ic;
	float v = mo < mg && ci < cg ? w[((g * mg + mo) * cg + ci) * khw +
	    t] : 0;

	wp[base + (((icb * khw + t) * 8 + ic) * nocb + i) * 8 + oc] = v;
							}
		}
}

/*
 * The arguments of a dense register tile: x at the first valid tap of
 * its first pixel, w at the same tap of its weights, y at its outputs;
 * strides in floats.
 */
typedef struct c8_targs {
	const float *x, *w, *bias;
	float *y;
	int64_t xs, xls, xdw, xdh, xblk;	/* pixel, lane, tap, row, block */
	int64_t wkh, wicb, yocb;
	int nkh, nkw, nicb, nic_last, first, mleft;
	int nt;				/* tiles side by side */
} c8_targs;

/*
 * UR pixels by OCB output blocks; SW the stride of a blocked input (its
 * pixels 8 * SW floats apart, lanes adjacent), or 0 for any input with
 * the strides in a.
 */
static inline __attribute__((always_inline)) void
c8_tile(const int UR, const int OCB, const int SW, const c8_targs *a)
{
	const int64_t xs = SW ? 8 * SW : a->xs, xls = SW ? 1 : a->xls;
	const int64_t xdw = a->xdw, xdh = a->xdh, wkh = a->wkh;
	/*
	 * The order of an input channel's work that fits the 16 ymm
	 * registers: UR broadcasts first, then one weight vector at a time
	 * (UR * OCB + UR + 1 registers, as oneDNN's jit_avx2 kernel), or
	 * OCB weight vectors first, then one broadcast at a time.
	 */
	const int BFIRST = UR * OCB + UR + 1 <= 16;
	__m256 acc[4][UR_MAX];
	int i, j, icb, kh, kw, ic;

#pragma GCC unroll 4
	for (i = 0; i < OCB; i++) {
		if (a->first) {
			__m256 b = a->bias ? _mm256_maskload_ps(a->bias + 8 * i,
			    aoe_lane_mask((int)min64(8, a->mleft - 8 * i))) :
			    _mm256_setzero_ps();
#pragma GCC unroll 14
			for (j = 0; j < UR; j++)
				acc[i][j] = b;
		} else
#pragma GCC unroll 14
			for (j = 0; j < UR; j++)
				acc[i][j] = _mm256_loadu_ps(a->y + i * a->yocb +
				    j * 8);
	}
	for (icb = 0; icb < a->nicb; icb++) {
		const int nic = icb == a->nicb - 1 ? a->nic_last : 8;
		const float *xc = a->x + icb * a->xblk;
		const float *wc = a->w + icb * a->wicb;

		for (kh = 0; kh < a->nkh; kh++) {
			const float *xr = xc + kh * xdh, *wr = wc + kh * wkh;

			for (kw = 0; kw < a->nkw; kw++) {
				const float *xp = xr + kw * xdw;
				const float *wp = wr + kw * 64 * OCB;

				if (nic == 8 && SW && BFIRST) {
#pragma GCC unroll 8
					for (ic = 0; ic < 8; ic++) {
						__m256 bv[UR_MAX];
#pragma GCC unroll 14
						for (j = 0; j < UR; j++)
							bv[j] =
							    _mm256_broadcast_ss(
							    xp + j * xs + ic);
#pragma GCC unroll 4
						for (i = 0; i < OCB; i++) {
							__m256 wv =
							    _mm256_loadu_ps(wp +
							    (ic * OCB + i) * 8);
#pragma GCC unroll 14
							for (j = 0; j < UR;
							    j++)
								acc[i][j] =
								    _mm256_fmadd_ps(
								    bv[j], wv,
								    acc[i][j]);
						}
					}
					continue;
				}
				if (nic == 8 && SW) {
#pragma GCC unroll 8
					for (ic = 0; ic < 8; ic++) {
						__m256 wv[4];
#pragma GCC unroll 4
						for (i = 0; i < OCB; i++)
							wv[i] = _mm256_loadu_ps(
							    wp + (ic * OCB + i)
							    * 8);
#pragma GCC unroll 14
						for (j = 0; j < UR; j++) {
							__m256 b =
							    _mm256_broadcast_ss(
							    xp + j * xs + ic);
#pragma GCC unroll 4
							for (i = 0; i < OCB;
							    i++)
								acc[i][j] =
								    _mm256_fmadd_ps(
								    b, wv[i],
								    acc[i][j]);
						}
					}
					continue;
				}
				for (ic = 0; BFIRST && ic < nic; ic++) {
					const float *xq = xp + ic * xls;
					__m256 bv[UR_MAX];
#pragma GCC unroll 14
					for (j = 0; j < UR; j++)
						bv[j] = _mm256_broadcast_ss(xq +
						    j * xs);
#pragma GCC unroll 4
					for (i = 0; i < OCB; i++) {
						__m256 wv = _mm256_loadu_ps(wp +
						    (ic * OCB + i) * 8);
#pragma GCC unroll 14
						for (j = 0; j < UR; j++)
							acc[i][j] =
							    _mm256_fmadd_ps(
							    bv[j], wv,
							    acc[i][j]);
					}
				}
				for (ic = 0; !BFIRST && ic < nic; ic++) {
					const float *xq = xp + ic * xls;
					__m256 wv[4];
#pragma GCC unroll 4
					for (i = 0; i < OCB; i++)
						wv[i] = _mm256_loadu_ps(wp +
						    (ic * OCB + i) * 8);
#pragma GCC unroll 14
					for (j = 0; j < UR; j++) {
						__m256 b = _mm256_broadcast_ss(
						    xq + j * xs);
#pragma GCC unroll 4
						for (i = 0; i < OCB; i++)
							acc[i][j] =
							    _mm256_fmadd_ps(b,
							    wv[i], acc[i][j]);
					}
				}
			}
		}
	}
#pragma GCC unroll 4
	for (i = 0; i < OCB; i++)
#pragma GCC unroll 14
		for (j = 0; j < UR; j++)
			_mm256_storeu_ps(a->y + i * a->yocb + j * 8, acc[i][j]);
}

typedef void (*c8_tile_fn)(const c8_targs *);

/*
 * A run of a->nt tiles side by side, from a local copy of the arguments
 * that no store can alias, so that they stay in registers.
 */
#define C8_T(U, O, S)							\
static void								\
c8_tile_##U##_##O##_##S(const c8_targs *a)				\
{									\
	c8_targs b = *a;						\
	const int64_t step = U * (S ? 8 * S : a->xs);			\
	int t;								\
									\
	for (t = 0; t < a->nt; t++) {					\
		c8_tile(U, O, S, &b);					\
		b.x += step;						\
		b.y += U * 8;						\
	}								\
}
#define C8_TS(U, O) C8_T(U, O, 0) C8_T(U, O, 1) C8_T(U, O, 2)
C8_TS(1, 1) C8_TS(2, 1) C8_TS(3, 1) C8_TS(4, 1) C8_TS(5, 1) C8_TS(6, 1)
C8_TS(7, 1) C8_TS(8, 1) C8_TS(9, 1) C8_TS(10, 1) C8_TS(11, 1)
C8_TS(12, 1) C8_TS(13, 1) C8_TS(14, 1)
C8_TS(1, 2) C8_TS(2, 2) C8_TS(3, 2) C8_TS(4, 2) C8_TS(5, 2) C8_TS(6, 2)
C8_TS(7, 2)
C8_TS(1, 3) C8_TS(2, 3) C8_TS(3, 3) C8_TS(4, 3)
C8_TS(1, 4) C8_TS(2, 4) C8_TS(3, 4)

#define C8_E(U, O) { c8_tile_##U##_##O##_0, c8_tile_##U##_##O##_1,	\
	c8_tile_##U##_##O##_2 }
/* The tiles by [oc blocks - 1][pixels - 1][stride kind]. */
static const c8_tile_fn c8_tiles[4][UR_MAX][3] = {
	{ C8_E(1, 1), C8_E(2, 1), C8_E(3, 1), C8_E(4, 1), C8_E(5, 1),
	    C8_E(6, 1), C8_E(7, 1), C8_E(8, 1), C8_E(9, 1), C8_E(10, 1),
	    C8_E(11, 1), C8_E(12, 1), C8_E(13, 1), C8_E(14, 1) },
	{ C8_E(1, 2), C8_E(2, 2), C8_E(3, 2), C8_E(4, 2), C8_E(5, 2),
	    C8_E(6, 2), C8_E(7, 2) },
	{ C8_E(1, 3), C8_E(2, 3), C8_E(3, 3), C8_E(4, 3) },
	{ C8_E(1, 4), C8_E(2, 4), C8_E(3, 4) },
};

/*
 * The depthwise tile: UR pixels of one block, taps clipped as in a,
 * bias first; the epilogue (when e) with the residual d (blocked, as y)
 * and the lane mask keep, then stored.  SW as for c8_tile.
 */
typedef struct c8_dargs {
	const float *x, *w, *d;
	float *y;
	int64_t xs, xdw, xdh, wkh;
	int nkh, nkw, act, nt;
	__m256 b, s, t, keep;
	const aoe_epi *e;
} c8_dargs;

static inline __attribute__((always_inline)) __m256
c8_epi(const aoe_epi *e, __m256 v, __m256 s, __m256 t)
{
	v = aoe_epi_f(e, v);
	if (e->ps || e->pt)
		v = _mm256_fmadd_ps(v, s, t);
	return v;
}

static inline __attribute__((always_inline)) void
c8_dtile(const int UR, const int SW, const c8_dargs *a)
{
	const int64_t xs = SW == 1 || SW == 2 ? 8 * SW : a->xs;
	__m256 acc[8], xv[10];
	int j, kh, kw;

#pragma GCC unroll 8
	for (j = 0; j < UR; j++)
		acc[j] = a->b;
	/*
	 * SW 3: unit stride and dilation, three taps a row, each input
	 * vector loaded once for the three taps that read it.
	 */
	for (kh = 0; SW == 3 && kh < a->nkh; kh++) {
		const float *xr = a->x + kh * a->xdh;
		const float *wr = a->w + kh * a->wkh;
		__m256 w0 = _mm256_loadu_ps(wr), w1 = _mm256_loadu_ps(wr + 8);
		__m256 w2 = _mm256_loadu_ps(wr + 16);

#pragma GCC unroll 10
		for (j = 0; j < UR + 2; j++)
			xv[j] = _mm256_loadu_ps(xr + j * 8);
#pragma GCC unroll 8
		for (j = 0; j < UR; j++) {
			acc[j] = _mm256_fmadd_ps(xv[j], w0, acc[j]);
			acc[j] = _mm256_fmadd_ps(xv[j + 1], w1, acc[j]);
			acc[j] = _mm256_fmadd_ps(xv[j + 2], w2, acc[j]);
		}
	}
	for (kh = 0; SW != 3 && kh < a->nkh; kh++) {
		const float *xr = a->x + kh * a->xdh;
		const float *wr = a->w + kh * a->wkh;

		for (kw = 0; kw < a->nkw; kw++) {
			const float *xp = xr + kw * a->xdw;
			__m256 wv = _mm256_loadu_ps(wr + kw * 8);
#pragma GCC unroll 8
			for (j = 0; j < UR; j++)
				acc[j] = _mm256_fmadd_ps(_mm256_loadu_ps(xp +
				    j * xs), wv, acc[j]);
		}
	}
#pragma GCC unroll 8
	for (j = 0; j < UR; j++) {
		__m256 v = acc[j];
		if (a->e != NULL) {
			if (a->d)
				v = _mm256_add_ps(v, _mm256_loadu_ps(a->d +
				    j * 8));
			if (a->act)
				v = c8_epi(a->e, v, a->s, a->t);
			v = _mm256_and_ps(v, a->keep);
		}
		_mm256_storeu_ps(a->y + j * 8, v);
	}
}

typedef void (*c8_dtile_fn)(const c8_dargs *);

#define C8_D(U, S)							\
static void								\
c8_dtile_##U##_##S(const c8_dargs *a)					\
{									\
	c8_dargs b = *a;						\
	const int64_t step = U * (S == 3 ? 8 : S ? 8 * S : a->xs);	\
	int t;								\
									\
	for (t = 0; t < a->nt; t++) {					\
		c8_dtile(U, S, &b);					\
		b.x += step;						\
		b.y += U * 8;						\
		if (b.d)						\
			b.d += U * 8;					\
	}								\
}
#define C8_DS(U) C8_D(U, 0) C8_D(U, 1) C8_D(U, 2) C8_D(U, 3)
C8_DS(1) C8_DS(2) C8_DS(3) C8_DS(4) C8_DS(5) C8_DS(6) C8_DS(7) C8_DS(8)
#define C8_DE(U) { c8_dtile_##U##_0, c8_dtile_##U##_1, c8_dtile_##U##_2, \
	c8_dtile_##U##_3 }
/* By [pixels - 1][stride kind: 0 any, 1, 2, 3 unit and 3 taps a row]. */
static const c8_dtile_fn c8_dtiles[8][4] = {
	C8_DE(1), C8_DE(2), C8_DE(3), C8_DE(4), C8_DE(5), C8_DE(6), C8_DE(7),
	C8_DE(8)
};

/* One run: the problem and how it is cut. */
typedef struct c8_run {
	const aoe_c8 *p;
	const float *x;		/* blocked (xblk) or plain input */
	const float *w;		/* packed weights */
	float *yo;		/* the blocked output: y, or the workspace */
	int xblk, dw;
	int ur, ocb, icstep, skind;
	int64_t rows, nrb, nbg, icbg, nogg, nog, cbx, cby;
	/*
	 * A pointwise Conv's plane as one row (c8_flat): columns a chunk,
	 * and chunks of columns; else the whole row, one.
	 */
	int64_t cols, ncb;
	int epi;
	aoe_epi e;
} c8_run;

/* Valid taps [k0, k0 + nk) of a kernel of kk taps at input i0. */
static void
c8_taps(int64_t i0, int64_t kk, int64_t d, int64_t lim, int *k0, int *nk)
{
	int64_t a = i0 < 0 ? ceildiv(-i0, d) : 0;
	int64_t b = lim - 1 - i0 < 0 ? 0 : min64(kk, (lim - 1 - i0) / d + 1);

	*k0 = (int)a;
	*nk = (int)max64(0, b - a);
}

/* The interior columns [*l, *r): every tap inside the input. */
static void
c8_interior(const aoe_c8 *p, int64_t *l, int64_t *r)
{
	int64_t num = p->w - 1 + p->pl - (p->kw - 1) * p->dw;

	*l = min64(p->ow, ceildiv(p->pl, p->sw));
	*r = num < 0 ? 0 : min64(p->ow, num / p->sw + 1);
	if (*r < *l)
		*r = *l;
}

/*
 * The lane mask of output block ob (its channels below M), and its
 * scale and shift vectors.
 */
static void
c8_block_vecs(const c8_run *r, int64_t ob, __m256 *keep, __m256 *s,
    __m256 *t)
{
	int nv = (int)min64(8, r->p->m - ob * 8);
	__m256i mk = aoe_lane_mask(nv);

	*keep = _mm256_castsi256_ps(mk);
	*s = r->e.ps ? _mm256_maskload_ps(r->e.ps + ob * 8, mk) :
	    _mm256_set1_ps(1);
	*t = r->e.pt ? _mm256_maskload_ps(r->e.pt + ob * 8, mk) :
	    _mm256_setzero_ps();
}

/*
 * The chunk's finished pixels [j0, j1) of output blocks [ob0, ob0 +
 * nocb) of image in (whole rows, or columns of a flat row): the epilogue
 * on a blocked output, or back to plain with the epilogue on each
 * channel's span.
 */
static void
c8_post(const c8_run *r, int64_t in, int64_t ob0, int nocb, int64_t j0,
    int64_t j1)
{
	const aoe_c8 *p = r->p;
	int64_t ob, q, sp = p->oh * p->ow, ow = j1 - j0;

	for (ob = ob0; ob < ob0 + nocb; ob++) {
		float *blk = r->yo + (in * r->cby + ob) * sp * 8;
		int nc = (int)min64(8, p->m - ob * 8);

		if (p->yblk) {
			const float *d = p->add ? p->add + (in * r->cby + ob) *
			    sp * 8 : NULL;
			__m256 keep, s, t;
			int64_t j;

			if (!r->epi && d == NULL && nc == 8)
				continue;
			c8_block_vecs(r, ob, &keep, &s, &t);
			for (j = j0; j < j1; j++) {
				__m256 v = _mm256_loadu_ps(blk + j * 8);
				if (d)
					v = _mm256_add_ps(v,
					    _mm256_loadu_ps(d + j * 8));
				if (r->epi || d)
					v = c8_epi(&r->e, v, s, t);
				_mm256_storeu_ps(blk + j * 8,
				    _mm256_and_ps(v, keep));
			}
			continue;
		}
		{
			const float *src = blk + j0 * 8;
			float *dst = p->y + (in * p->m + ob * 8) * sp + j0;
			int64_t s = 0;
			int qq;

			for (; s + 8 <= ow; s += 8) {
				__m256 v[8];
				for (qq = 0; qq < 8; qq++)
					v[qq] = _mm256_loadu_ps(src +
					    (s + qq) * 8);
				aoe_tr8(v);
				for (qq = 0; qq < nc; qq++)
					_mm256_storeu_ps(dst + qq * sp + s,
					    v[qq]);
			}
			for (; s < ow; s++)
				for (qq = 0; qq < nc; qq++)
					dst[qq * sp + s] = src[s * 8 + qq];
			if (!r->epi && p->add == NULL)
				continue;
			for (q = 0; q < nc; q++)
				aoe_epi_row(&r->e, ob * 8 + q, dst + q * sp,
				    p->add ? p->add + (dst - p->y) + q * sp :
				    NULL, ow);
		}
	}
}

/*
 * Columns [c0, c1) of output row oh of a dense chunk: their tiles over
 * input blocks [icb0, icb0 + nicb) of the group (from image and group
 * base xg).
 */
static void
c8_dense_row(const c8_run *r, const float *xg, const float *wog,
    float *yrow, const float *bias, int nocb, int64_t oh, int64_t c0,
    int64_t c1, int64_t icb0, int nicb, int mleft)
{
	const aoe_c8 *p = r->p;
	const int64_t ps = r->xblk ? 8 : 1;	/* pixel stride */
	const int64_t rs = p->w * ps;		/* row stride */
	const int64_t khw = p->kh * p->kw, wtap = 64 * nocb;
	int64_t ih0 = oh * p->sh - p->pt, l, rr, ow;
	c8_targs a;
	int kh0, nkh, ur = r->ur;

	c8_taps(ih0, p->kh, p->dh, p->h, &kh0, &nkh);
	memset(&a, 0, sizeof(a));
	a.xs = p->sw * ps;
	a.xls = r->xblk ? 1 : p->h * p->w;
	a.xdw = p->dw * ps;
	a.xdh = p->dh * rs;
	a.xblk = r->xblk ? p->h * p->w * 8 : 8 * p->h * p->w;
	a.wkh = p->kw * wtap;
	a.wicb = khw * wtap;
	a.yocb = p->oh * p->ow * 8;
	a.nkh = nkh;
	a.nicb = nicb;
	a.nic_last = icb0 + nicb == r->icbg && p->group == 1 ?
	    (int)(p->c - (r->icbg - 1) * 8) : 8;
	a.first = icb0 == 0;
	a.bias = bias;
	a.mleft = mleft;
	c8_interior(p, &l, &rr);
	rr = min64(rr, c1);
	for (ow = c0; ow < c1;) {
		int64_t iw0 = ow * p->sw - p->pl;
		int kw0, nkw, u, sk;

		a.nt = 1;
		if (ow >= l && ow < rr) {
			kw0 = 0;
			nkw = (int)p->kw;
			u = (int)min64(ur, rr - ow);
			sk = r->skind;
			if (u == ur)
				a.nt = (int)((rr - ow) / ur);
		} else {
			c8_taps(iw0, p->kw, p->dw, p->w, &kw0, &nkw);
			u = 1;
			sk = 0;
		}
		a.nkw = nkw;
		a.y = yrow + ow * 8;
		a.w = wog + (icb0 * khw + kh0 * p->kw + kw0) * wtap;
		a.x = nkh > 0 && nkw > 0 ? xg + icb0 * a.xblk +
		    (ih0 + kh0 * p->dh) * rs + (iw0 + kw0 * p->dw) * ps : xg;
		if (nkw == 0)
			a.nkh = 0;
		c8_tiles[nocb - 1][u - 1][sk](&a);
		a.nkh = nkh;
		ow += u * a.nt;
	}
}

static void
c8_dense_chunk(void *arg, int64_t t, int tid)
{
	const c8_run *r = arg;
	const aoe_c8 *p = r->p;
	int64_t rb = t % r->nrb, og = t / r->nrb % r->nog, in = t / r->nrb /
	    r->nog;
	int64_t g = og / r->nogg, j = og % r->nogg * r->ocb;
	int64_t ob0 = g * r->nbg + j, oh0 = rb * r->rows, oh1, oh, icb0;
	int64_t c0 = 0, c1 = p->ow;
	int nocb = (int)min64(r->ocb, r->nbg - j);
	const float *xg, *wog = r->w + ob0 * r->icbg * p->kh * p->kw * 64;
	const float *bias = p->bias ? p->bias + ob0 * 8 : NULL;

	(void)tid;
	oh1 = min64(p->oh, oh0 + r->rows);
	if (r->ncb > 1) {
		/* A flat row: rb counts its chunks of columns. */
		oh0 = 0;
		oh1 = 1;
		c0 = rb * r->cols;
		c1 = min64(p->ow, c0 + r->cols);
	}
	if (oh0 >= oh1 || c0 >= c1)
		return;
	if (r->xblk)
		xg = r->x + ((in * r->cbx) + g * r->icbg) * p->h * p->w * 8;
	else
		xg = r->x + (in * p->c + g * (p->c / p->group)) * p->h * p->w;
	for (icb0 = 0; icb0 < r->icbg; icb0 += r->icstep) {
		int nicb = (int)min64(r->icstep, r->icbg - icb0);
		for (oh = oh0; oh < oh1; oh++)
			c8_dense_row(r, xg, wog, r->yo + ((in * r->cby + ob0) *
			    p->oh + oh) * p->ow * 8, bias, nocb, oh, c0, c1,
			    icb0, nicb, (int)(p->m - ob0 * 8));
	}
	c8_post(r, in, ob0, nocb, oh0 * p->ow + c0, (oh1 - 1) * p->ow + c1);
}

static void
c8_dw_chunk(void *arg, int64_t t, int tid)
{
	const c8_run *r = arg;
	const aoe_c8 *p = r->p;
	int64_t rb = t % r->nrb, ob = t / r->nrb % r->cby, in = t / r->nrb /
	    r->cby;
	int64_t oh0 = rb * r->rows, oh1 = min64(p->oh, oh0 + r->rows), oh;
	int64_t sp = p->oh * p->ow, l, rr;
	const float *xb = r->x + (in * r->cbx + ob) * p->h * p->w * 8;
	const float *wb = r->w + ob * p->kh * p->kw * 8;
	int nv = (int)min64(8, p->m - ob * 8);
	__m256i mk = aoe_lane_mask(nv);
	c8_dargs a;

	(void)tid;
	if (oh0 >= oh1)
		return;
	memset(&a, 0, sizeof(a));
	a.b = p->bias ? _mm256_maskload_ps(p->bias + ob * 8, mk) :
	    _mm256_setzero_ps();
	c8_block_vecs(r, ob, &a.keep, &a.s, &a.t);
	/* A plain output gets its epilogue on the way back. */
	a.e = p->yblk && (r->epi || p->add || nv < 8) ? &r->e : NULL;
	a.act = r->epi || p->add;
	a.xs = 8 * p->sw;
	a.xdw = 8 * p->dw;
	a.xdh = 8 * p->dh * p->w;
	a.wkh = 8 * p->kw;
	c8_interior(p, &l, &rr);
	for (oh = oh0; oh < oh1; oh++) {
		int64_t ih0 = oh * p->sh - p->pt, ow;
		int kh0, nkh;
		float *yrow = r->yo + ((in * r->cby + ob) * sp + oh * p->ow) *
		    8;

		c8_taps(ih0, p->kh, p->dh, p->h, &kh0, &nkh);
		for (ow = 0; ow < p->ow;) {
			int64_t iw0 = ow * p->sw - p->pl;
			int kw0, nkw, u, sk;

			a.nt = 1;
			if (ow >= l && ow < rr) {
				kw0 = 0;
				nkw = (int)p->kw;
				u = (int)min64(r->ur, rr - ow);
				sk = r->skind == 1 && p->kw == 3 &&
				    p->dw == 1 ? 3 : r->skind;
				if (u == r->ur)
					a.nt = (int)((rr - ow) / u);
			} else {
				c8_taps(iw0, p->kw, p->dw, p->w, &kw0, &nkw);
				u = 1;
				sk = 0;
			}
			a.nkw = nkw;
			a.nkh = nkw > 0 ? nkh : 0;
			a.y = yrow + ow * 8;
			a.d = a.e && p->add ? p->add + (a.y - r->yo) : NULL;
			/* The weights of the first valid tap, KW apart. */
			a.w = wb + (kh0 * p->kw + kw0) * 8;
			a.x = a.nkh > 0 ? xb + ((ih0 + kh0 * p->dh) * p->w +
			    iw0 + kw0 * p->dw) * 8 : xb;
			c8_dtiles[u - 1][sk](&a);
			ow += u * a.nt;
		}
	}
	if (!p->yblk)
		c8_post(r, in, ob, 1, oh0 * p->ow, oh1 * p->ow);
}

/* The workspace's pieces, in floats, each rounded up to 16. */
static size_t
c8_round(size_t n)
{
	return (n + 15) & ~(size_t)15;
}

static size_t
c8_xfloats(const aoe_c8 *p)
{
	return c8_round((size_t)(p->n * ceildiv(p->c, 8) * p->h * p->w * 8));
}

static size_t
c8_yfloats(const aoe_c8 *p)
{
	return c8_round((size_t)(p->n * ceildiv(p->m, 8) * p->oh * p->ow * 8));
}

size_t
aoe_c8_scratch(const aoe_c8 *p)
{
	return (c8_round(aoe_c8_wsize(p)) + c8_xfloats(p) + c8_yfloats(p)) *
	    sizeof(float);
}

/*
 * Whether p is a pointwise Conv (1x1, unit strides, no pads) whose plane
 * the dense kernel takes as one row of H*W pixels: its register tiles
 * then run on across the rows, where a row's last tile would be short
 * (7x7 planes: 7 pixels in tiles of 3, 3 and 1 with oc_blk 4), and the
 * chunks are the row's columns.  bench/convb, Zen 5 under AVX2, 1
 * thread, warm, algo 7 (its reorders included) over the GEMM's time:
 * 400>400 @7 1.53x to 1.05x, 160>160 @14 1.34x to 1.02x.
 */
static int
c8_flat(const aoe_c8 *p)
{
	return p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 &&
	    p->pt == 0 && p->pl == 0 && p->oh == p->h && p->ow == p->w &&
	    p->oh > 1;
}

int
aoe_c8_run(const aoe_c8 *p, const float *w, const float *wp, int wp_ocb,
    void *scratch, int nthreads, const aoe_sched *s)
{
	int kind = aoe_c8_kind(p->c, p->m, p->group);
	float *ws = scratch;
	aoe_act act;
	aoe_c8 fl;
	c8_run r;
	int64_t units, nrb, v, khw = p->kh * p->kw, w0 = p->ow;
	int flat = 0;

	if (kind == 0)
		return aoe_err(AOE_EUNSUP, "Conv: %lld channels in, %lld out "
		    "in %lld groups have no blocked kernel", (long long)p->c,
		    (long long)p->m, (long long)p->group);
	if (p->n == 0 || p->oh == 0 || p->ow == 0)
		return 0;
	if (kind == AOE_C8_DENSE && c8_flat(p)) {
		fl = *p;
		fl.w = fl.ow = p->h * p->w;
		fl.h = fl.oh = 1;
		p = &fl;
		flat = 1;
	}
	memset(&r, 0, sizeof(r));
	r.p = p;
	r.dw = kind == AOE_C8_DEPTHWISE;
	r.ocb = aoe_c8_ocblk(p, s);
	r.ur = c8_ur(p, s, r.ocb);
	r.cbx = ceildiv(p->c, 8);
	r.cby = ceildiv(p->m, 8);
	r.nbg = r.dw ? 1 : c8_nbg(p);
	r.icbg = r.dw ? 1 : c8_icbg(p);
	aoe_act_of(p->node, &act);
	r.epi = aoe_act_epi(&act, &r.e);
	/* The weights, packed for this oc_blk. */
	if (wp == NULL || (!r.dw && wp_ocb != r.ocb)) {
		aoe_c8_weights(p, r.ocb, w, ws);
		wp = ws;
	}
	ws += c8_round(aoe_c8_wsize(p));
	r.w = wp;
	/* The input, reordered when it is plain and the kernel wants it. */
	r.x = p->x;
	r.xblk = p->xblk;
	if (!p->xblk && (r.dw || aoe_sched_get(s, "x8c", 0) == 1)) {
		aoe_to_8c(p->x, ws, p->n, p->c, p->h * p->w, nthreads);
		r.x = ws;
		r.xblk = 1;
	}
	ws += c8_xfloats(p);
	r.yo = p->yblk ? p->y : ws;
	r.skind = r.xblk && p->sw <= 2 ? (int)p->sw : 0;
	if (r.dw) {
		r.nogg = 1;
		r.nog = r.cby;
	} else {
		r.nogg = ceildiv(r.nbg, r.ocb);
		r.nog = p->group * r.nogg;
	}
	/*
	 * Input blocks a pass: auto keeps a pass's weights within 40 KiB
	 * (4 blocks for 3x3 and oc_blk 4: 1.02x to 1.05x over 1 block on
	 * resnet18's strided 3x3 layers, Zen 3, 1 thread).
	 */
	v = aoe_sched_get(s, "ic_blk", 0);
	if (v < 1)
		v = max64(1, 10240 / (r.ocb * khw * 64));
	r.icstep = (int)min64(v, r.icbg);
	units = p->n * r.nog;
	v = aoe_sched_get(s, "oh_blk", 0);
	r.cols = p->ow;
	r.ncb = 1;
	if (flat) {
		/*
		 * Columns a chunk: oh_blk rows' worth of the plane, or auto
		 * about four chunks a thread, in whole tiles.
		 */
		if (v >= 1)
			r.cols = v * w0;
		else {
			nrb = nthreads > 1 ? min64(ceildiv(p->ow, r.ur),
			    ceildiv(4 * nthreads, units)) : 1;
			r.cols = ceildiv(ceildiv(p->ow, nrb), r.ur) * r.ur;
		}
		r.ncb = ceildiv(p->ow, r.cols);
		r.rows = 1;
		r.nrb = r.ncb;
	} else {
		/* Rows a chunk: auto gives each thread about four chunks. */
		if (v < 1) {
			nrb = nthreads > 1 ? min64(p->oh, ceildiv(4 *
			    nthreads, units)) : 1;
			v = ceildiv(p->oh, nrb);
		}
		r.rows = min64(v, p->oh);
		r.nrb = ceildiv(p->oh, r.rows);
	}
	aoe_parallel(nthreads, units * r.nrb, r.dw ? c8_dw_chunk :
	    c8_dense_chunk, &r);
	return 0;
}

/*
 * The knobs (see the header comment), live for a node that algo 7 can
 * run: kind and the node's channel blocks and output rows decide their
 * values.
 */
int
aoe_space_c8(aoe_space *sp, const aoe_c8 *p, int kind)
{
	static const int64_t urd[] = { 0, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14 };
	static const int64_t urdw[] = { 0, 2, 3, 4, 6, 8 };
	static const int64_t ocbs[] = { 0, 1, 2, 3, 4 }, onoff[] = { 0, 1 };
	int dense = kind == AOE_C8_DENSE, nur, nocb;
	int64_t icbg = dense ? c8_icbg(p) : 1;

	nur = dense ? (int)(sizeof(urd) / sizeof(urd[0])) : kind ?
	    (int)(sizeof(urdw) / sizeof(urdw[0])) : 1;
	nocb = dense ? (int)min64(5, 1 + c8_nbg(p)) : 1;
	if (aoe_space_add(sp, "ur_w", nur, dense ? urd : urdw, "algo=7: "
	    "output pixels a register tile (0 auto)") < 0 ||
	    aoe_space_add(sp, "oc_blk", nocb, ocbs, "algo=7: blocks of 8 "
	    "output channels a register tile (0 auto)") < 0 ||
	    aoe_space_add_pow2(sp, "ic_blk", 1, 1, max64(1, icbg), 0, dense,
	    "algo=7: blocks of 8 input channels a pass of the reduction "
	    "(0 auto)") < 0 ||
	    aoe_space_add_pow2(sp, "oh_blk", 1, 1, max64(1, kind ? p->oh : 1),
	    0, kind != 0, "algo=7: output rows a parallel chunk (0 auto)") < 0 ||
	    aoe_space_add(sp, "x8c", dense ? 2 : 1, onoff, "algo=7: reorder "
	    "a plain input to NCHW8c first (1) or read it in place (0)") < 0)
		return -AOE_EINTERNAL;
	return 0;
}

int
aoe_space_c8_check(const aoe_space *sp, const aoe_sched *s, int algo,
    int kind, char *why, size_t len)
{
	static const char *const own[] = { "ur_w", "oc_blk", "ic_blk",
	    "oh_blk", "x8c" };
	int64_t ur = aoe_sched_get(s, "ur_w", 0);
	int64_t ocb = aoe_sched_get(s, "oc_blk", 0);
	size_t i;

	if (algo != 7) {
		for (i = 0; i < sizeof(own) / sizeof(own[0]); i++)
			if (aoe_sched_get(s, own[i], 0) != 0) {
				snprintf(why, len, "%s applies to algo=7 "
				    "(blocked) only", own[i]);
				return -1;
			}
		return 0;
	}
	if (kind == 0) {
		snprintf(why, len, "algo=7 (blocked) needs a 2-D Conv with "
		    "group 1, depthwise groups, or groups of multiples of 8 "
		    "channels");
		return -1;
	}
	if (kind == AOE_C8_DENSE && ur * (ocb ? ocb : 4) > UR_MAX) {
		snprintf(why, len, "algo=7: ur_w * oc_blk (0 counting as 4) "
		    "must be at most %d", UR_MAX);
		return -1;
	}
	(void)sp;
	return 0;
}
