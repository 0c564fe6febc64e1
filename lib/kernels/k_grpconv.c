/*
 * k_grpconv.c - grouped 2-D convolution (Conv's algo 8, "grouped"), NCHW,
 * for groups whose output channel count is a multiple of 8 (regnet's
 * 16-channel groups, ResNeXt-style blocks, and one group: a dense Conv);
 * any input channels a group, kernel size, pads and dilations, strides 1
 * and 2 along the rows.
 *
 * A group's output channels are the vector lanes: a chunk of grp_nv
 * vectors of grp_vec floats (16 AVX-512, 8 AVX2) holds up to nv * vw of
 * them, lanes past the group's count zero.  A register tile is R output
 * rows (grp_oh, 1 or 2) by C output columns (grp_ow) of such chunks, so
 * R * C * nv accumulators; for every input channel and kernel tap of the
 * group it loads nv weight vectors and, per pixel, broadcasts one input
 * value (on AVX-512 the FMA's own broadcast operand) into nv FMAs.  The
 * weights are packed once, in prepare, as [group][chunk][tap][nv * vw].
 * The input rows a work item reads are first copied, zero-padded, into a
 * per-thread buffer, so that every tap is a plain load at an offset from
 * a table and the pads cost nothing in the loop.  A pass of R rows is
 * made into a small pixel-major tile, then turned into the NCHW output
 * rows by 8x8 transposes, and the fused epilogue (residual, activation,
 * per-channel affine; the bias is the accumulators' start) runs on those
 * rows while they are in L1.  Where a group is one AVX-512 vector of
 * output channels and the kernel rows three taps, the row form (gpr_blk)
 * broadcasts each input pixel once for a kernel row's three taps instead.
 *
 * Work items are (image, group, block of output rows), split between the
 * threads; a block holds grp_rows rows (0 auto: whole planes unless the
 * groups do not split evenly between the threads; about 16 rows in a
 * stem).
 *
 * Stems (one group of at most GP_STEM_CIN input channels: the 3-channel
 * first layers of resnet, squeezenet and the MobileNets) run the same
 * way, all their output channels being one group; a last block of fewer
 * than 8 channels is stored in part.  A Relu or Clip with nothing after
 * it is applied to the accumulators before the tile is stored.
 *
 * A max pool fused after a Conv of one group (aoe_grp_run_pool, for
 * lib/passes/fuse.c's fuse_pool) makes the Conv rows that a band of
 * pooled rows reads, from the input rows that the band copies, into a
 * pixel-major buffer of about 256 KB, pools them there with whole-vector
 * maxima (the channels are the lanes), and stores only the pooled rows:
 * resnet's and squeezenet's stems never write their 3.2 MB output.  A
 * work item is a block of pooled rows (one a thread); the Conv rows that
 * two blocks' windows share are made by both, those that two bands of
 * one block share once.
 *
 * Knobs (Conv's space, read with algo=8 only): grp_vec (0 auto: 16 where
 * AVX-512 is allowed, else 8), grp_nv (0 auto: 2 when the group's count
 * is a multiple of two vectors, else 1), grp_oh and grp_ow (the tile, 0
 * auto: the shape of least modelled cost, see gp_tile), grp_rows (with
 * a fused pool, pooled rows), and in a stem grp_lanes (0 auto and 1 the
 * channels along the lanes, 2 the pixels: st_run; with a fused pool the
 * channels always), and grp_form (0 auto: the row form where it applies,
 * else the tap form or the flat one by gp_tile's cost model; 1 the tap
 * form, 2 the row form, 3 the flat form: a pass's pixels in raster
 * order, tiles running across its rows, each pixel's input at an offset
 * of its own).
 */
#include <immintrin.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Pixels a tile at most (R * C), and columns. */
#define GP_MAXC 14
/* Input channels at most of a one-group Conv (a stem) the kernel takes. */
#define GP_STEM_CIN 4

int
aoe_grp_stem(const aoe_conv_geom *g)
{
	return g->group == 1 && g->cg <= GP_STEM_CIN;
}

int
aoe_grp_ok(const aoe_conv_geom *g)
{
	/*
	 * Groups of whole vectors of output channels (a group's last block
	 * of 8 would otherwise spill into the next group's channels, which
	 * another thread may be writing), one group among them (a dense
	 * Conv), or one group of few input channels (a stem: its last block
	 * of 8 is stored in part).
	 */
	int grouped = g->mg >= 8 && g->mg % 8 == 0;
	int stem = aoe_grp_stem(g) && g->mg >= 1;

	return g->nsp == 2 && (grouped || stem) &&
	    (g->s[2] == 1 || g->s[2] == 2) && g->cg >= 1 &&
	    g->cg * g->ksz <= 65536 && g->in[0] == 1 && g->out[0] == 1 &&
	    g->k[0] == 1 && g->insz * g->cg < ((int64_t)1 << 30);
}

/* The largest tile (R * C pixels) without spilling, per width and nv. */
static int
gp_pmax(int vw, int nv)
{
	if (vw == 16)
		return nv == 1 ? 14 : 12;
	return nv == 1 ? 12 : 6;
}

int
aoe_grp_vec(const aoe_sched *s)
{
	int64_t v = aoe_sched_get(s, "grp_vec", 0);

	if (v == 16 && aoe_cpu_avx512())
		return 16;
	if (v == 8)
		return 8;
	return aoe_cpu_avx512() ? 16 : 8;
}

/*
 * Whether the row form applies: AVX-512 vectors of 16 output channels,
 * one a group (nv 1), three taps a kernel row, no column dilation.
 */
static int
gpr_ok(const aoe_conv_geom *g, int vw, int nv)
{
	return vw == 16 && nv == 1 && g->k[2] == 3 && g->d[2] == 1;
}

/*
 * grp_form: 1 the tap form, 2 the row form where it applies (gpr_ok),
 * 3 the flat form; 0 auto: the row form where it applies, else the tap
 * form, which gp_tile may then turn flat.
 */
static int
gp_form(const aoe_conv_geom *g, const aoe_sched *s, int vw, int nv)
{
	int64_t v = aoe_sched_get(s, "grp_form", 0);

	if (v == 3)
		return 3;
	return v != 1 && gpr_ok(g, vw, nv) ? 2 : 1;
}

/*
 * grp_nv, 0 auto: 2 when a group's channels fill two vectors, except in
 * a stem that the row form can take with 1 (its few input channels make
 * a short loop, which the tap form's tile of two vectors does not fill:
 * 3>32 and 3>64 3x3/2 @224, bench/convb 1 thread, 0.92x the time).
 */
int
aoe_grp_nv(const aoe_conv_geom *g, const aoe_sched *s, int vw)
{
	int64_t v = aoe_sched_get(s, "grp_nv", 0);

	if (v == 1 || v == 2)
		return (int)v;
	if (aoe_grp_stem(g) && gp_form(g, s, vw, 1) == 2)
		return 1;
	return g->mg % (2 * vw) == 0 ? 2 : 1;
}

/*
 * A modelled cost of a tile of p pixels by nv vectors, per tap: the FMAs
 * on two pipes (at least 8 in flight to hide their latency), or the
 * loads (p broadcasts, nv weights), and the loop.
 */
static double
gp_cost(int p, int nv)
{
	double f = (p * nv < 8 ? 8 : p * nv) / 2.0, l = (p + nv) / 2.5;

	return (f > l ? f : l) + 0.5;
}

/*
 * The row form's modelled cost of a tile of r rows of c pixels at column
 * stride s, per tap (a third of a kernel row): the FMAs on two pipes, at
 * least 8 in flight, or the loads (three weights, each row's span of
 * input pixels), and the loop.
 */
static double
gpr_cost(int r, int c, int s)
{
	double f = 3 * (r * c < 8 ? 8 : r * c) / 2.0;
	double l = (3 + r * ((c - 1) * s + 3)) / 2.5;

	return ((f > l ? f : l) + 0.5) / 3;
}

/* A tile of r rows of c pixels, per tap, in form (gp_form). */
static double
tile_cost(int form, int r, int c, int nv, int sw)
{
	return form == 2 ? gpr_cost(r, c, sw) : gp_cost(r * c, nv);
}

/*
 * The flat form (grp_form=3) makes a pass of output rows at a time, as
 * many as fill GP_FLAT_PIX pixels (one at least), and cuts the pass's
 * pixels, in raster order across its rows, into tiles of at most the
 * tile's width, as even as can be: 7x7 planes (regnet_x_400mf's last
 * stage) go in tiles of 6 and 5 pixels, where the tap form's tiles of
 * a row (4 and 3, or 2 rows of 3 and their edges) hold 6 to 8 of the
 * FMAs' accumulators and the flat ones 10 to 12 (8-wide, two vectors).
 */
#define GP_FLAT_PIX 64
/*
 * Pixels a flat tile at most unless grp_ow says: each holds its offset
 * in a register through the loop, and past 8 they spill (AVX-512, 16
 * channels a group, 7x7: the row form's time 1.11x in tiles of 13 and
 * 12, the tap form's 1.03x; under AVX2, two vectors, 6 at most anyway).
 */
#define GP_FLAT_MAXC 8

/* The flat form's rows a pass. */
static int
gpf_rows(const aoe_conv_geom *g)
{
	return (int)max64(1, min64(g->out[1], GP_FLAT_PIX / g->out[2]));
}

/* The modelled cost of P pixels in flat tiles of at most c, per tap. */
static double
gpf_pass_cost(int64_t P, int c, int nv)
{
	int64_t n = ceildiv(P, c), q = P / n, r = P % n;

	return (double)r * gp_cost((int)q + 1, nv) +
	    (double)(n - r) * gp_cost((int)q, nv);
}

/* The flat form's modelled cost of a plane, per tap. */
static double
gpf_cost(const aoe_conv_geom *g, int c, int nv)
{
	const int64_t OH = g->out[1], OW = g->out[2];
	const int th = gpf_rows(g);

	return (double)(OH / th) * gpf_pass_cost(th * OW, c, nv) +
	    (OH % th ? gpf_pass_cost(OH % th * OW, c, nv) : 0);
}

/*
 * The tile: grp_oh x grp_ow, or the cheapest by tile_cost; in the flat
 * form, rows a pass and pixels a tile (grp_ow, or as many as fit).  The
 * tap form in auto (grp_form 0) turns flat, where flat is set, when
 * that is modelled 3 % cheaper.
 */
static void
gp_tile(const aoe_conv_geom *g, const aoe_sched *s, int vw, int nv,
    int flat, int *formp, int *th, int *tw)
{
	const int form = *formp;
	const int64_t OH = g->out[1], OW = g->out[2];
	int pmax = gp_pmax(vw, nv), r, c, br = 1, bc = 1, fmax;
	int64_t ko = aoe_sched_get(s, "grp_oh", 0);
	int64_t kw = aoe_sched_get(s, "grp_ow", 0);
	const int sw = (int)g->s[2];
	double best = -1;

	for (r = 1; r <= 2; r++)
		for (c = 1; c <= GP_MAXC && r * c <= pmax; c++) {
			int64_t fr = OH / r, fc = OW / c;
			int64_t lr = OH % r, lc = OW % c;
			double t;

			if ((ko && ko != r) || (kw && kw != c))
				continue;
			/* Whole tiles, then the edges' smaller ones. */
			t = fr * fc * tile_cost(form, r, c, nv, sw) +
			    (lc ? fr * tile_cost(form, r, (int)lc, nv, sw) :
			    0) + (lr ? fc * tile_cost(form, (int)lr, c, nv,
			    sw) : 0) + (lr && lc ? tile_cost(form, (int)lr,
			    (int)lc, nv, sw) : 0);
			if (best < 0 || t < best - 1e-9) {
				best = t;
				br = r;
				bc = c;
			}
		}
	*th = br;
	*tw = bc;
	fmax = pmax < GP_FLAT_MAXC ? pmax : GP_FLAT_MAXC;
	if (form == 3 || (form == 1 && flat && !ko && !kw &&
	    aoe_sched_get(s, "grp_form", 0) == 0 &&
	    gpf_cost(g, fmax, nv) < 0.97 * best)) {
		*formp = 3;
		*th = gpf_rows(g);
		*tw = kw && kw <= pmax ? (int)kw : fmax;
	}
}

size_t
aoe_grp_wsize(const aoe_conv_geom *g, int vw, int nv)
{
	int64_t L = (int64_t)vw * nv;

	return (size_t)(g->group * ceildiv(g->mg, L) * L * g->cg * g->ksz);
}

void
aoe_grp_pack(const aoe_conv_geom *g, int vw, int nv, const float *w,
    float *wp)
{
	const int64_t L = (int64_t)vw * nv, T = g->cg * g->ksz;
	const int64_t nc = ceildiv(g->mg, L);
	int64_t gi, j, t, l;

	for (gi = 0; gi < g->group; gi++)
		for (j = 0; j < nc; j++)
			for (t = 0; t < T; t++, wp += L)
				for (l = 0; l < L; l++) {
					int64_t oc = j * L + l;
					wp[l] = oc < g->mg ? w[(gi * g->mg +
					    oc) * T + t] : 0;
				}
}

/*
 * One tile: R rows of C pixels, NV vectors of VW lanes each, S the
 * column stride.  x0 is the padded input at the tile's first pixel, rs
 * the distance between its rows; tap i reads x0 + off[i] + the pixel's
 * offset and the weights wp + i * NV * VW.  The tile goes to t, row r
 * pixel c at t + r * trs + c * NV * VW.  In the flat form (FL, R 1)
 * pixel c reads x0 + po[c] + off[i] instead, wherever po puts it.
 */
#define GP_EACH(M, p, q) M(0, p, q) M(1, p, q) M(2, p, q) M(3, p, q)	\
	M(4, p, q) M(5, p, q) M(6, p, q) M(7, p, q) M(8, p, q) M(9, p, q) \
	M(10, p, q) M(11, p, q) M(12, p, q) M(13, p, q)
/* (Named accumulators, not an array: GCC kept an array's stores.) */
#define GP_DECL(u, VT, q) VT a##u = w0, b##u = w1;
#define GP_PDECL(u, p, q) const int64_t p##u = FL && (u) < C ? po[u] : 0;
#define GP_FMA(u, BCAST, FMADD)						\
	if ((u) < R * C) {						\
		const float *xp = FL ? x0 + o + p##u :			\
		    ((u) < C ? x0 : x1) + o + ((u) % C) * S;		\
		VT_ bb = BCAST(xp);					\
		a##u = FMADD(bb, w0, a##u);				\
		if (NV > 1)						\
			b##u = FMADD(bb, w1, b##u);			\
	}
#define GP_ST(u, STORE, VW)						\
	if ((u) < R * C) {						\
		float *tp = t + ((u) / C) * trs + ((u) % C) * NV * VW;	\
		STORE(tp, a##u);					\
		if (NV > 1)						\
			STORE(tp + VW, b##u);				\
	}
/* A clamp (Relu, Clip) on the accumulators; a NaN stays a NaN. */
#define GP_CL(u, MAX, MIN)						\
	if ((u) < R * C) {						\
		a##u = MIN(vhi, MAX(vlo, a##u));			\
		if (NV > 1)						\
			b##u = MIN(vhi, MAX(vlo, b##u));		\
	}
#define GP_BLK(NAME, VT, VW, LOAD, BCAST, FMADD, STORE, SET1, MAX, MIN) \
static inline __attribute__((always_inline)) void			\
NAME(const int NV, const int R, const int C, const int S, const int FL,	\
    int64_t nt, const int32_t *off, const float *x0, int64_t rs,	\
    const int64_t *po, const float *wp, const float *bv, float *t,	\
    int64_t trs, const float *cl)					\
{									\
	typedef VT VT_;							\
	VT w0 = LOAD(bv), w1 = NV > 1 ? LOAD(bv + VW) : w0;		\
	const float *x1 = x0 + rs;					\
	int64_t i;							\
	GP_EACH(GP_DECL, VT, 0)						\
	GP_EACH(GP_PDECL, p, 0)						\
									\
	for (i = 0; i < nt; i++, wp += NV * VW) {			\
		const int64_t o = off[i];				\
		w0 = LOAD(wp);						\
		if (NV > 1)						\
			w1 = LOAD(wp + VW);				\
		GP_EACH(GP_FMA, BCAST, FMADD)				\
	}								\
	if (cl != NULL) {						\
		const VT vlo = SET1(cl[0]), vhi = SET1(cl[1]);		\
		GP_EACH(GP_CL, MAX, MIN)				\
	}								\
	GP_EACH(GP_ST, STORE, VW)					\
}

typedef void gp_fn(int64_t, const int32_t *, const float *, int64_t,
    const float *, const float *, float *, int64_t, const float *);
/* The flat form's: x0, then the pixels' offsets po, no row strides. */
typedef void gpf_fn(int64_t, const int32_t *, const float *,
    const int64_t *, const float *, const float *, float *, const float *);

/* The instances: NV 1, 2; S 1, 2; R 1 with C 1-14, R 2 with C 1-7. */
#define GP_FN(P, NV, S, R, C)						\
static void								\
P##_##NV##_##S##_##R##_##C(int64_t nt, const int32_t *off,		\
    const float *x0, int64_t rs, const float *wp, const float *bv,	\
    float *t, int64_t trs, const float *cl)				\
{									\
	P##_blk(NV, R, C, S, 0, nt, off, x0, rs, NULL, wp, bv, t, trs, cl); \
}
#define GP_FN7(P, NV, S, R) GP_FN(P, NV, S, R, 1) GP_FN(P, NV, S, R, 2) \
	GP_FN(P, NV, S, R, 3) GP_FN(P, NV, S, R, 4) GP_FN(P, NV, S, R, 5) \
	GP_FN(P, NV, S, R, 6) GP_FN(P, NV, S, R, 7)
#define GP_FN14(P, NV, S) GP_FN7(P, NV, S, 1) GP_FN(P, NV, S, 1, 8)	\
	GP_FN(P, NV, S, 1, 9) GP_FN(P, NV, S, 1, 10)			\
	GP_FN(P, NV, S, 1, 11) GP_FN(P, NV, S, 1, 12)			\
	GP_FN(P, NV, S, 1, 13) GP_FN(P, NV, S, 1, 14) GP_FN7(P, NV, S, 2)
#define GP_FN_ALL(P) GP_FN14(P, 1, 1) GP_FN14(P, 1, 2) GP_FN14(P, 2, 1) \
	GP_FN14(P, 2, 2)
#define GP_T7(P, NV, S, R) P##_##NV##_##S##_##R##_1,			\
	P##_##NV##_##S##_##R##_2, P##_##NV##_##S##_##R##_3,		\
	P##_##NV##_##S##_##R##_4, P##_##NV##_##S##_##R##_5,		\
	P##_##NV##_##S##_##R##_6, P##_##NV##_##S##_##R##_7
#define GP_T14(P, NV, S) { { GP_T7(P, NV, S, 1),			\
	P##_##NV##_##S##_1_8, P##_##NV##_##S##_1_9,			\
	P##_##NV##_##S##_1_10, P##_##NV##_##S##_1_11,			\
	P##_##NV##_##S##_1_12, P##_##NV##_##S##_1_13,			\
	P##_##NV##_##S##_1_14 }, { GP_T7(P, NV, S, 2) } }
#define GP_TAB(P) { { GP_T14(P, 1, 1), GP_T14(P, 1, 2) },		\
	{ GP_T14(P, 2, 1), GP_T14(P, 2, 2) } }
/* The flat form's: NV 1, 2; C 1-14 pixels. */
#define GPF_FN(P, NV, C)						\
static void								\
P##f_##NV##_##C(int64_t nt, const int32_t *off, const float *x0,	\
    const int64_t *po, const float *wp, const float *bv, float *t,	\
    const float *cl)							\
{									\
	P##_blk(NV, 1, C, 1, 1, nt, off, x0, 0, po, wp, bv, t, 0, cl);	\
}
#define GPF_FN14(P, NV) GPF_FN(P, NV, 1) GPF_FN(P, NV, 2)		\
	GPF_FN(P, NV, 3) GPF_FN(P, NV, 4) GPF_FN(P, NV, 5)		\
	GPF_FN(P, NV, 6) GPF_FN(P, NV, 7) GPF_FN(P, NV, 8)		\
	GPF_FN(P, NV, 9) GPF_FN(P, NV, 10) GPF_FN(P, NV, 11)		\
	GPF_FN(P, NV, 12) GPF_FN(P, NV, 13) GPF_FN(P, NV, 14)
#define GPF_T14(P, NV) { P##f_##NV##_1, P##f_##NV##_2, P##f_##NV##_3,	\
	P##f_##NV##_4, P##f_##NV##_5, P##f_##NV##_6, P##f_##NV##_7,	\
	P##f_##NV##_8, P##f_##NV##_9, P##f_##NV##_10, P##f_##NV##_11,	\
	P##f_##NV##_12, P##f_##NV##_13, P##f_##NV##_14 }

/* AVX2: 8 floats a vector. */
static inline __attribute__((always_inline)) __m256
gp_bcast8(const float *p)
{
	return _mm256_broadcast_ss(p);
}

GP_BLK(gp8_blk, __m256, 8, _mm256_loadu_ps, gp_bcast8, _mm256_fmadd_ps,
    _mm256_storeu_ps, _mm256_set1_ps, _mm256_max_ps, _mm256_min_ps)
GP_FN_ALL(gp8)
/* [nv - 1][s - 1][r - 1][c - 1] */
static gp_fn *const gp8_tab[2][2][2][GP_MAXC] = GP_TAB(gp8);
GPF_FN14(gp8, 1) GPF_FN14(gp8, 2)
/* [nv - 1][c - 1] */
static gpf_fn *const gp8f_tab[2][GP_MAXC] = { GPF_T14(gp8, 1),
    GPF_T14(gp8, 2) };

/* AVX-512: 16 floats a vector. */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) __m512
gp_bcast16(const float *p)
{
	return _mm512_set1_ps(*p);
}

GP_BLK(gp16_blk, __m512, 16, _mm512_loadu_ps, gp_bcast16, _mm512_fmadd_ps,
    _mm512_storeu_ps, _mm512_set1_ps, _mm512_max_ps, _mm512_min_ps)
GP_FN_ALL(gp16)
static gp_fn *const gp16_tab[2][2][2][GP_MAXC] = GP_TAB(gp16);
GPF_FN14(gp16, 1) GPF_FN14(gp16, 2)
static gpf_fn *const gp16f_tab[2][GP_MAXC] = { GPF_T14(gp16, 1),
    GPF_T14(gp16, 2) };

/*
 * The row form (grp_form=2): 16 output channels a group (one AVX-512
 * vector), three taps a kernel row, no column dilation.  For each input
 * channel and kernel row it loads the three taps' weight vectors once
 * and broadcasts each input pixel of the tile's span once, into the FMAs
 * of every output pixel that the pixel reaches (three at stride 1, one
 * or two at stride 2), where the tap form broadcasts a pixel for each
 * tap and output pixel.  A 14-pixel tile at stride 2 so loads 32 values
 * for 42 FMAs, against 45; at stride 1, 19.  (A loop alone in L1, Zen 5:
 * 188-192 GFLOP/s in the tap form, 237-245 in this one, 248-250 with no
 * broadcast loads at all.  regnet_x_400mf's grouped Convs, 16-channel
 * groups, bench/convb 1 thread warm: 0.76x to 0.89x the tap form's time;
 * in the model, per-node minima, 1 thread 0.84x at 112 and 56, 0.88x
 * at 28, 0.92x to 0.94x at 14; 2 threads 0.89x, 0.92x, about 1.)  nt
 * is the taps, off their offsets (the first of each row of three is
 * read), the rest as in GP_BLK with NV = 1.
 */
static inline __attribute__((always_inline)) void
gpr_blk(const int R, const int C, const int S, int64_t nt,
    const int32_t *off, const float *x0, int64_t rs, const float *wp,
    const float *bv, float *t, int64_t trs, const float *cl)
{
	__m512 a[14], w0, w1, w2, b;
	int64_t i;
	int u, q, r, k;

#pragma GCC unroll 14
	for (u = 0; u < R * C; u++)
		a[u] = _mm512_loadu_ps(bv);
	for (i = 0; i < nt; i += 3, wp += 48) {
		const int64_t o = off[i];
		w0 = _mm512_loadu_ps(wp);
		w1 = _mm512_loadu_ps(wp + 16);
		w2 = _mm512_loadu_ps(wp + 32);
#pragma GCC unroll 2
		for (r = 0; r < R; r++) {
			const float *xp = x0 + r * rs + o;
#pragma GCC unroll 32
			for (q = 0; q < (C - 1) * S + 3; q++) {
				b = _mm512_set1_ps(xp[q]);
				/* Output pixel c reads q with tap q - c * S. */
#pragma GCC unroll 3
				for (k = 0; k < 3; k++) {
					const int c = (q - k) / S;
					if (q - k < 0 || (q - k) % S || c >= C)
						continue;
					a[r * C + c] = _mm512_fmadd_ps(b, k == 0 ?
					    w0 : k == 1 ? w1 : w2, a[r * C + c]);
				}
			}
		}
	}
	if (cl != NULL) {
		const __m512 vlo = _mm512_set1_ps(cl[0]);
		const __m512 vhi = _mm512_set1_ps(cl[1]);
#pragma GCC unroll 14
		for (u = 0; u < R * C; u++)
			a[u] = _mm512_min_ps(vhi, _mm512_max_ps(vlo, a[u]));
	}
#pragma GCC unroll 14
	for (u = 0; u < R * C; u++)
		_mm512_storeu_ps(t + (u / C) * trs + (u % C) * 16, a[u]);
}

#define GPR_FN(S, R, C)							\
static void								\
gpr16_##S##_##R##_##C(int64_t nt, const int32_t *off, const float *x0,	\
    int64_t rs, const float *wp, const float *bv, float *t,		\
    int64_t trs, const float *cl)					\
{									\
	gpr_blk(R, C, S, nt, off, x0, rs, wp, bv, t, trs, cl);		\
}
#define GPR_FN7(S, R) GPR_FN(S, R, 1) GPR_FN(S, R, 2) GPR_FN(S, R, 3)	\
	GPR_FN(S, R, 4) GPR_FN(S, R, 5) GPR_FN(S, R, 6) GPR_FN(S, R, 7)
#define GPR_FN14(S) GPR_FN7(S, 1) GPR_FN(S, 1, 8) GPR_FN(S, 1, 9)	\
	GPR_FN(S, 1, 10) GPR_FN(S, 1, 11) GPR_FN(S, 1, 12)		\
	GPR_FN(S, 1, 13) GPR_FN(S, 1, 14) GPR_FN7(S, 2)
GPR_FN14(1)
GPR_FN14(2)
#define GPR_T7(S, R) gpr16_##S##_##R##_1, gpr16_##S##_##R##_2,		\
	gpr16_##S##_##R##_3, gpr16_##S##_##R##_4, gpr16_##S##_##R##_5,	\
	gpr16_##S##_##R##_6, gpr16_##S##_##R##_7
#define GPR_T14(S) { { GPR_T7(S, 1), gpr16_##S##_1_8, gpr16_##S##_1_9,	\
	gpr16_##S##_1_10, gpr16_##S##_1_11, gpr16_##S##_1_12,		\
	gpr16_##S##_1_13, gpr16_##S##_1_14 }, { GPR_T7(S, 2) } }
/* [s - 1][r - 1][c - 1] */
static gp_fn *const gpr16_tab[2][2][GP_MAXC] = { GPR_T14(1), GPR_T14(2) };
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/* The 8x8 block of floats at s (rows ld apart) transposed into v. */
static inline __attribute__((always_inline)) void
gp_tr8(const float *s, int64_t ld, __m256 v[8])
{
	__m256 a0, a1, a2, a3, a4, a5, a6, a7, b0, b1, b2, b3, b4, b5, b6, b7;

	a0 = _mm256_unpacklo_ps(_mm256_loadu_ps(s), _mm256_loadu_ps(s + ld));
	a1 = _mm256_unpackhi_ps(_mm256_loadu_ps(s), _mm256_loadu_ps(s + ld));
	a2 = _mm256_unpacklo_ps(_mm256_loadu_ps(s + 2 * ld),
	    _mm256_loadu_ps(s + 3 * ld));
	a3 = _mm256_unpackhi_ps(_mm256_loadu_ps(s + 2 * ld),
	    _mm256_loadu_ps(s + 3 * ld));
	a4 = _mm256_unpacklo_ps(_mm256_loadu_ps(s + 4 * ld),
	    _mm256_loadu_ps(s + 5 * ld));
	a5 = _mm256_unpackhi_ps(_mm256_loadu_ps(s + 4 * ld),
	    _mm256_loadu_ps(s + 5 * ld));
	a6 = _mm256_unpacklo_ps(_mm256_loadu_ps(s + 6 * ld),
	    _mm256_loadu_ps(s + 7 * ld));
	a7 = _mm256_unpackhi_ps(_mm256_loadu_ps(s + 6 * ld),
	    _mm256_loadu_ps(s + 7 * ld));
	b0 = _mm256_shuffle_ps(a0, a2, 0x44);
	b1 = _mm256_shuffle_ps(a0, a2, 0xee);
	b2 = _mm256_shuffle_ps(a1, a3, 0x44);
	b3 = _mm256_shuffle_ps(a1, a3, 0xee);
	b4 = _mm256_shuffle_ps(a4, a6, 0x44);
	b5 = _mm256_shuffle_ps(a4, a6, 0xee);
	b6 = _mm256_shuffle_ps(a5, a7, 0x44);
	b7 = _mm256_shuffle_ps(a5, a7, 0xee);
	v[0] = _mm256_permute2f128_ps(b0, b4, 0x20);
	v[1] = _mm256_permute2f128_ps(b1, b5, 0x20);
	v[2] = _mm256_permute2f128_ps(b2, b6, 0x20);
	v[3] = _mm256_permute2f128_ps(b3, b7, 0x20);
	v[4] = _mm256_permute2f128_ps(b0, b4, 0x31);
	v[5] = _mm256_permute2f128_ps(b1, b5, 0x31);
	v[6] = _mm256_permute2f128_ps(b2, b6, 0x31);
	v[7] = _mm256_permute2f128_ps(b3, b7, 0x31);
}

struct gp_ctx {
	const aoe_conv_geom *g;
	const float *x, *wp, *bias, *add;
	float *y;
	aoe_epi e;
	int epi, vw, nv, th, tw;
	int form;		/* grp_form: 1 taps, 2 rows (gpr_blk), 3 flat */
	float cl[2];		/* a clamp done in registers: lo, hi */
	int rcl;		/* ... when set (and then epi is 0) */
	gp_fn *const (*tab)[2][GP_MAXC];	/* [s - 1][r - 1][c - 1] */
	gpf_fn *const *ftab;	/* the flat form's: [c - 1] */
	int64_t rows, nrb, nc, ir, pw, items, nch;
	const aoe_pool2 *pool;	/* a fused max pool, or NULL */
	int64_t pband, band;	/* its rows a band: pooled, Conv */
	size_t bufsz;
	int *fail;
	int cpf;		/* knob cpf: output rows asked for */
};

/*
 * Floats of a thread's buffer: input rows, tap offsets, the row tile,
 * the flat form's pixel offsets.
 */
static size_t
gp_bufsize(const aoe_conv_geom *g, int64_t ir, int64_t pw, int L, int th)
{
	return (size_t)(g->cg * ir * pw + 64 + g->cg * g->ksz + 16 +
	    (th * g->out[2] + 8) * L + 2 * th * g->out[2] + 64);
}

/*
 * P pixels from the tile rt ([pixel][L]) into the first nl of L channel
 * planes (plsz floats apart) at yb.
 */
static void
gp_store(float *yb, int64_t plsz, int nl, const float *rt, int64_t P, int L)
{
	__m256 v[8];
	int64_t pb, l0;
	int i;

	for (l0 = 0; l0 < nl; l0 += 8) {
		/* Channels of this block of 8 (fewer in a stem's last). */
		const int nb = nl - l0 < 8 ? (int)(nl - l0) : 8;
		for (pb = 0; pb + 8 <= P; pb += 8) {
			gp_tr8(rt + pb * L + l0, L, v);
			if (nb == 8)
				for (i = 0; i < 8; i++)
					_mm256_storeu_ps(yb + (l0 + i) *
					    plsz + pb, v[i]);
			else
				for (i = 0; i < nb; i++)
					_mm256_storeu_ps(yb + (l0 + i) *
					    plsz + pb, v[i]);
		}
		if (pb < P) {
			/* The tile has slack rows: read past P, keep P. */
			float tmp[8][8];
			int64_t q;
			gp_tr8(rt + pb * L + l0, L, v);
			for (i = 0; i < 8; i++)
				_mm256_storeu_ps(tmp[i], v[i]);
			for (i = 0; i < nb; i++)
				for (q = 0; q < P - pb; q++)
					yb[(l0 + i) * plsz + pb + q] =
					    tmp[i][q];
		}
	}
}

/*
 * Pixels [p0, p0 + P) of the output planes (whole rows) from the tile
 * rt ([pixel][L]) into the channels of chunk j of group gi.
 */
static void
gp_flush(const struct gp_ctx *d, int64_t b, int64_t gi, int64_t j,
    const float *rt, int64_t p0, int64_t P, int L)
{
	const aoe_conv_geom *g = d->g;
	const int64_t c0 = gi * g->mg + j * L;

	gp_store(d->y + (b * g->m + c0) * g->outsz + p0, g->outsz,
	    (int)min64(L, g->mg - j * L), rt, P, L);
}

/*
 * Pixels [p0, p0 + P) of the first nl of the channel planes (plsz floats
 * apart) at yb, asked for for writing (knob cpf, as the GEMM's, by
 * default where threads share the loop: aoe_cpf_on): a row
 * of tiles at a time, before it is made, so that the lines come, from
 * the other core's cache as often as not, while it is.  At 2 threads on
 * an AMD EPYC Zen 5 (per-node medians in the model), regnet_x_400mf's
 * grouped 3x3 Convs ran 0.77-0.93x the time and its stem 0.79x, the
 * whole model 0.93x by node sums; mobilenet_v2's stem 0.82x.  Asked for
 * a chunk's whole span at once instead, the lines came too early or
 * stalled the start: even in regnet_x_400mf.
 */
static void
gp_pfw(float *yb, int64_t plsz, int nl, int64_t p0, int64_t P)
{
	int i;

	for (i = 0; i < nl; i++)
		aoe_pfw_span(yb + i * plsz + p0, P);
}

/* The epilogue on pixels [p0, p0 + P) of chunk j's channels. */
static void
gp_epi(const struct gp_ctx *d, int64_t b, int64_t gi, int64_t j,
    int64_t p0, int64_t P, int L)
{
	const aoe_conv_geom *g = d->g;
	const int64_t c0 = gi * g->mg + j * L;
	const int nl = (int)min64(L, g->mg - j * L);
	int i;

	for (i = 0; i < nl; i++) {
		int64_t o = (b * g->m + c0 + i) * g->outsz + p0;
		aoe_epi_row(&d->e, c0 + i, d->y + o, d->add ? d->add + o :
		    NULL, P);
	}
}

/*
 * Padded input row: dst[q] = src[q - pl] for q - pl in [0, w), else 0,
 * for q in [0, pw), eight floats a store (up to 7 written past pw).
 */
static inline void
gp_padrow(float *dst, const float *src, int64_t pl, int64_t w, int64_t pw)
{
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int64_t q;

	for (q = 0; q < pw; q += 8) {
		int64_t c = q - pl;
		__m256i ci = _mm256_add_epi32(iota, _mm256_set1_epi32((int)c));
		__m256i m = _mm256_andnot_si256(_mm256_cmpgt_epi32(
		    _mm256_setzero_si256(), ci), _mm256_cmpgt_epi32(
		    _mm256_set1_epi32((int)w), ci));

		if (c >= 0 && c + 8 <= w)
			_mm256_storeu_ps(dst + q, _mm256_loadu_ps(src + c));
		else
			_mm256_storeu_ps(dst + q, _mm256_maskload_ps(src + c,
			    m));
	}
}

/*
 * The padded input rows that output rows [oh0, oh1) of group gi of image
 * b read, into buf (cg planes of ir rows of pw floats), and the taps'
 * offsets into them, into off.
 */
static void
gp_inrows(const struct gp_ctx *d, int64_t b, int64_t gi, int64_t oh0,
    int64_t oh1, float *xin, int32_t *off)
{
	const aoe_conv_geom *g = d->g;
	const int64_t H = g->in[1], W = g->in[2];
	const int64_t KH = g->k[1], KW = g->k[2], sh = g->s[1];
	const int64_t dh = g->d[1], dwl = g->d[2], pw = d->pw, ir = d->ir;
	const int64_t ih0 = oh0 * sh - g->pb[1];
	const int64_t nir = (oh1 - oh0 - 1) * sh + (KH - 1) * dh + 1;
	const float *xg = d->x + (b * g->c + gi * g->cg) * g->insz;
	const int64_t lo = min64(g->pb[2], pw);
	const int64_t hi = max64(lo, min64(pw, W + g->pb[2]));
	int64_t ic, r, kh, kw, t;

	/*
	 * The padded input rows: padded column q is input column q - pl.
	 * (Rows in order, so that a row's spill past pw is overwritten.)
	 */
	for (ic = 0; ic < g->cg; ic++)
		for (r = 0; r < nir; r++) {
			float *dst = xin + (ic * ir + r) * pw;
			int64_t ih = ih0 + r, q;
			if (ih < 0 || ih >= H)
				for (q = 0; q < pw; q += 8)
					_mm256_storeu_ps(dst + q,
					    _mm256_setzero_ps());
			else if (pw - g->pb[2] > 0 && pw <= 64)
				gp_padrow(dst, xg + (ic * H + ih) * W,
				    g->pb[2], W, pw);
			else {
				memset(dst, 0, sizeof(float) * lo);
				memcpy(dst + lo, xg + (ic * H + ih) * W + lo -
				    g->pb[2], sizeof(float) * (hi - lo));
				memset(dst + hi, 0, sizeof(float) * (pw - hi));
			}
		}
	for (ic = 0, t = 0; ic < g->cg; ic++)
		for (kh = 0; kh < KH; kh++)
			for (kw = 0; kw < KW; kw++)
				off[t++] = (int32_t)((ic * ir + kh * dh) * pw +
				    kw * dwl);
}

/*
 * A pass of the flat form: P pixels, in tiles of at most d->tw as even
 * as can be, into rt ([pixel][L]).
 */
static void
gpf_pass(const struct gp_ctx *d, int64_t T, const int32_t *off,
    const float *xr, const int64_t *po, int64_t P, const float *wp,
    const float *bv, float *rt)
{
	const int64_t L = (int64_t)d->vw * d->nv, n = ceildiv(P, d->tw);
	int64_t k, p0, p1;

	for (k = 0, p0 = 0; k < n; k++, p0 = p1) {
		p1 = P * (k + 1) / n;
		d->ftab[p1 - p0 - 1](T, off, xr, po + p0, wp, bv, rt + p0 * L,
		    d->rcl ? d->cl : NULL);
	}
}

/* One work item: output rows [oh0, oh1) of group gi of image b. */
static void
gp_item(const struct gp_ctx *d, int64_t b, int64_t gi, int64_t oh0,
    int64_t oh1, float *buf)
{
	const aoe_conv_geom *g = d->g;
	const int64_t OW = g->out[2], sh = g->s[1], sw = g->s[2];
	const int64_t pw = d->pw, ir = d->ir;
	const int64_t T = g->cg * g->ksz, L = (int64_t)d->vw * d->nv;
	float *xin = buf;
	int32_t *off = (int32_t *)(buf + g->cg * ir * pw + 64);
	float *rt = buf + g->cg * ir * pw + 64 + T + 16;
	/* The flat form's pixel offsets, 8-byte aligned after rt. */
	int64_t *po = (int64_t *)(((uintptr_t)(rt + (d->th * OW + 8) * L) +
	    7) & ~(uintptr_t)7);
	float bv[32] __attribute__((aligned(64)));
	int64_t t, j, oh, ow;

	gp_inrows(d, b, gi, oh0, oh1, xin, off);
	/* The tile's slack rows, read by the last 8x8 transposes, defined. */
	memset(rt, 0, sizeof(float) * (size_t)((d->th * OW + 8) * L));
	/* Pixel p of a pass reads its rows' padded input at po[p]. */
	for (t = 0; d->form == 3 && t < d->th * OW; t++)
		po[t] = t / OW * sh * pw + t % OW * sw;
	for (j = 0; j < d->nc; j++) {
		const float *wp = d->wp + (gi * d->nc + j) * T * L;
		for (t = 0; t < L; t++) {
			int64_t oc = j * L + t;
			bv[t] = d->bias && oc < g->mg ?
			    d->bias[gi * g->mg + oc] : 0;
		}
		int64_t e0 = oh0 * OW;
		for (oh = oh0; oh < oh1; oh += d->th) {
			const int R = (int)min64(d->th, oh1 - oh);
			const float *xr = xin + (oh - oh0) * sh * pw;
			if (aoe_cpf_on(d->cpf))
				gp_pfw(d->y + (b * g->m + gi * g->mg + j * L) *
				    g->outsz, g->outsz, (int)min64(L, g->mg -
				    j * L), oh * OW, R * OW);
			if (d->form == 3)
				gpf_pass(d, T, off, xr, po, R * OW, wp, bv, rt);
			else
				for (ow = 0; ow < OW; ow += d->tw) {
					const int C = (int)min64(d->tw,
					    OW - ow);
					d->tab[sw - 1][R - 1][C - 1](T, off,
					    xr + ow * sw, sh * pw, wp, bv,
					    rt + ow * L, OW * L, d->rcl ?
					    d->cl : NULL);
				}
			gp_flush(d, b, gi, j, rt, oh * OW, R * OW, (int)L);
			/* The epilogue on 256 pixels a channel or more. */
			if (d->epi && ((oh + R) * OW - e0 >= 256 ||
			    oh + R >= oh1)) {
				gp_epi(d, b, gi, j, e0, (oh + R) * OW - e0,
				    (int)L);
				e0 = (oh + R) * OW;
			}
		}
	}
}

/*
 * A work item of a Conv with a fused max pool (one group): pooled rows
 * [p0, p1) of image b, band by band of d->pband pooled rows.  A band
 * copies the input rows of the Conv rows it adds, then for each chunk of
 * channels makes those rows into the chunk's part of rt ([row][pixel][L],
 * d->band rows a chunk), keeping the rows that the band before made and
 * this one reads again; pools its windows, rows first into vr then
 * columns, into pt ([pixel][L]); and stores the pooled rows.  So each
 * Conv row is made once, and what a band touches (its input rows, rt,
 * pt) stays within L2 while the pooled output, a quarter of the Conv's,
 * builds up beside it.
 */
static void
gp_item_pool(const struct gp_ctx *d, int64_t b, int64_t p0, int64_t p1,
    float *buf)
{
	const aoe_conv_geom *g = d->g;
	const aoe_pool2 *P = d->pool;
	const int64_t OH = g->out[1], OW = g->out[2], sh = g->s[1];
	const int64_t sw = g->s[2], pw = d->pw, ir = d->ir;
	const int64_t POW = P->out[1], plsz = P->out[0] * P->out[1];
	const int64_t T = g->cg * g->ksz, L = (int64_t)d->vw * d->nv;
	const int64_t rl = OW * L;		/* floats a row of rt */
	float *xin = buf;
	int32_t *off = (int32_t *)(buf + g->cg * ir * pw + 64);
	float *rt = buf + g->cg * ir * pw + 64 + T + 16;
	float *vr = rt + d->nc * d->band * rl, *pt = vr + rl;
	float bv[32] __attribute__((aligned(64)));
	int64_t t, j, oh, ow, q0, q1, ra, rz, na, nz, p, q, c, l, r, add;
	int R, keep;

	/* The tile's slack pixels, read by the last 8x8 transposes. */
	memset(pt, 0, sizeof(float) * (size_t)((d->pband * POW + 8) * L));
	ra = rz = max64(0, p0 * P->s[0] - P->pb[0]);
	for (q0 = p0; q0 < p1; q0 = q1) {
		q1 = min64(p1, q0 + d->pband);
		na = max64(0, q0 * P->s[0] - P->pb[0]);
		nz = min64(OH, (q1 - 1) * P->s[0] - P->pb[0] + P->k[0]);
		keep = na >= ra && na < rz;
		add = keep ? rz : na;	/* the first row to make */
		if (add < nz)
			gp_inrows(d, b, 0, add, nz, xin, off);
		for (j = 0; j < d->nc; j++) {
			const float *wp = d->wp + j * T * L;
			const int nl = (int)min64(L, g->mg - j * L);
			float *rj = rt + j * d->band * rl;
			if (aoe_cpf_on(d->cpf))
				gp_pfw(d->y + (b * g->m + j * L) * plsz, plsz,
				    nl, q0 * POW, (q1 - q0) * POW);
			if (keep)
				memmove(rj, rj + (na - ra) * rl, sizeof(float) *
				    (size_t)((rz - na) * rl));
			for (t = 0; t < L; t++)
				bv[t] = d->bias && t < nl ? d->bias[j * L + t] :
				    0;
			for (oh = add; oh < nz; oh += R) {
				const float *xr = xin + (oh - add) * sh * pw;
				R = (int)min64(d->th, nz - oh);
				for (ow = 0; ow < OW; ow += d->tw) {
					const int C = (int)min64(d->tw, OW - ow);
					d->tab[sw - 1][R - 1][C - 1](T, off, xr +
					    ow * sw, sh * pw, wp, bv, rj + (oh -
					    na) * rl + ow * L, rl, d->rcl ?
					    d->cl : NULL);
				}
			}
			for (p = q0; p < q1; p++) {
				const int64_t r0 = max64(0, p * P->s[0] -
				    P->pb[0]);
				const int64_t r1 = min64(OH, p * P->s[0] -
				    P->pb[0] + P->k[0]);
				const float *src = rj + (r0 - na) * rl;
				for (c = 0; c < rl; c += 8) {
					__m256 m = _mm256_loadu_ps(src + c);
					for (r = 1; r < r1 - r0; r++)
						m = _mm256_max_ps(m,
						    _mm256_loadu_ps(src + r *
						    rl + c));
					_mm256_storeu_ps(vr + c, m);
				}
				for (q = 0; q < POW; q++) {
					const int64_t c0 = max64(0, q *
					    P->s[1] - P->pb[1]);
					const int64_t c1 = min64(OW, q *
					    P->s[1] - P->pb[1] + P->k[1]);
					float *o = pt + ((p - q0) * POW + q) * L;
					for (l = 0; l < L; l += 8) {
						__m256 m = _mm256_loadu_ps(vr +
						    c0 * L + l);
						for (c = c0 + 1; c < c1; c++)
							m = _mm256_max_ps(m,
							    _mm256_loadu_ps(vr +
							    c * L + l));
						_mm256_storeu_ps(o + l, m);
					}
				}
			}
			gp_store(d->y + (b * g->m + j * L) * plsz + q0 * POW,
			    plsz, nl, pt, (q1 - q0) * POW, (int)L);
		}
		ra = na;
		rz = nz;
	}
}

static void
gp_chunk(void *arg, int64_t c, int tid)
{
	const struct gp_ctx *d = arg;
	const aoe_conv_geom *g = d->g;
	int64_t it, i1 = aoe_chunk_lo(d->items, d->nch, c + 1);
	float *buf = aoe_sgemm_tlbuf(2, d->bufsz);

	(void)tid;
	if (buf == NULL) {
		__atomic_store_n(d->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	for (it = aoe_chunk_lo(d->items, d->nch, c); it < i1; it++) {
		int64_t rb = it % d->nrb, bg = it / d->nrb;
		int64_t oh0 = rb * d->rows;
		/* With a pool, rows are pooled rows, and the group one. */
		if (d->pool)
			gp_item_pool(d, bg, oh0, min64(oh0 + d->rows,
			    d->pool->out[0]), buf);
		else
			gp_item(d, bg / g->group, bg % g->group, oh0,
			    min64(oh0 + d->rows, g->out[1]), buf);
	}
}

/*
 * Output rows a work item: the knob, or whole planes when the images and
 * groups split evenly between the threads (or are many), else each plane
 * in nthreads blocks; in both, no more rows than keep a thread's padded
 * input within 4 MB (a 16-channel group of 500x500 planes).
 */
static int64_t
gp_rows(const aoe_conv_geom *g, const aoe_sched *s, int th, int nth)
{
	const int64_t OH = g->out[1], jobs = g->n * g->group;
	const int64_t pw = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) *
	    g->d[2] + 1;
	int64_t v = aoe_sched_get(s, "grp_rows", 0), r, cap;

	if (v > 0)
		return min64(v, OH);
	/* Rows whose padded input stays within 4 MB a thread. */
	cap = ((int64_t)1 << 20) / max64(1, g->cg * pw);
	cap = max64(th, ((cap - (g->k[1] - 1) * g->d[1] - 1) / g->s[1] + 1) /
	    th * th);
	if (g->group == 1) {
		/*
		 * One group (a stem, or a dense Conv): blocks of about 16
		 * rows, as many a thread, so that the padded input a block
		 * reads stays near the core (the stem 3>64 3x3/2 @224, 1
		 * thread, AVX-512: 1.1x faster than whole planes; 4 and 8
		 * rows tie with 16).
		 */
		int64_t nb = ceildiv(OH, 16);
		if (nth > 1 && g->n * nb % nth != 0)
			nb += nth - g->n * nb % nth;
		r = ceildiv(ceildiv(OH, max64(1, nb)), th) * th;
		return min64(cap, min64(OH, r));
	}
	if (nth < 2 || jobs % nth == 0 || jobs >= 8 * nth || OH < 2 * th)
		return min64(OH, cap);
	r = ceildiv(OH, nth);
	return min64(cap, min64(OH, ceildiv(r, th) * th));
}

/*
 * Stems with the output pixels along the lanes (grp_lanes=2): a register
 * tile is SM output channels by NP vectors of consecutive output pixels
 * of one row; for every tap it loads NP input vectors and broadcasts SM
 * weights.  The input rows a work item reads are copied, zero-padded and
 * split by the column stride into its phases (padded column q at phase
 * q % sw, index q / sw), so that every tap's pixels are consecutive
 * floats.  The output rows are stored in place (NCHW), no transposes.
 * Weights are packed per run as [chunk of SM channels][tap][SM].
 */
#define ST_SM16 8	/* channels a tile, AVX-512 */
#define ST_SM8 4	/* AVX2 */
#define ST_NP 3		/* pixel vectors a tile at most */
/*
 * grp_lanes=0 in a stem: the channels along the lanes.  Pixels along the
 * lanes against them (bench/convb -c, 1 thread, Zen 5): AVX-512 3>64
 * 3x3/2 @224 1.08x the time, 3>64 7x7/2 0.96x, 3>32 3x3/2 0.91x, 3>16
 * 1.02x, a tie left to the tuner; under AOE_MAX_ISA=avx2 (4 channels by
 * 3 vectors, load-bound) 1.6x to 1.8x.
 */
#define ST_DEF_PIXELS 0

#define ST_BLK(NAME, VT, VW, SM, LOAD, BCAST, FMADD, SET1, MAX, MIN)	\
static inline __attribute__((always_inline)) void			\
NAME(const int NP, int64_t nt, const int32_t *off, const float *x0,	\
    const float *wp, const float *bv, float *y, int64_t cs, int nm,	\
    int np, const float *cl)						\
{									\
	VT acc[SM][ST_NP];						\
	int64_t i;							\
	int m, p;							\
									\
	for (m = 0; m < SM; m++)					\
		for (p = 0; p < NP; p++)				\
			acc[m][p] = SET1(bv[m]);			\
	for (i = 0; i < nt; i++, wp += SM) {				\
		const float *xp = x0 + off[i];				\
		VT xv[ST_NP];						\
		for (p = 0; p < NP; p++)				\
			xv[p] = LOAD(xp + p * VW);			\
		for (m = 0; m < SM; m++) {				\
			VT w = BCAST(wp + m);				\
			for (p = 0; p < NP; p++)			\
				acc[m][p] = FMADD(w, xv[p], acc[m][p]);	\
		}							\
	}								\
	if (cl != NULL)							\
		for (m = 0; m < SM; m++)				\
			for (p = 0; p < NP; p++)			\
				acc[m][p] = MIN(SET1(cl[1]), MAX(SET1(cl[0]), \
				    acc[m][p]));			\
	for (m = 0; m < nm; m++)					\
		for (p = 0; p < NP; p++)				\
			ST_STORE_##VW(y + m * cs + p * VW, acc[m][p],	\
			    np - p * VW);				\
}

/* Store v's first n lanes (all of them when n >= the width). */
static inline __attribute__((always_inline)) void
st_store8(float *y, __m256 v, int n)
{
	if (n >= 8)
		_mm256_storeu_ps(y, v);
	else
		_mm256_maskstore_ps(y, _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
		    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)), v);
}
#define ST_STORE_8(y, v, n) st_store8((y), (v), (int)(n))

typedef void st_fn(int64_t, const int32_t *, const float *, const float *,
    const float *, float *, int64_t, int, int, const float *);

ST_BLK(st8_blk, __m256, 8, ST_SM8, _mm256_loadu_ps, gp_bcast8,
    _mm256_fmadd_ps, _mm256_set1_ps, _mm256_max_ps, _mm256_min_ps)
#define ST_FN(P, NP)							\
static void								\
P##_##NP(int64_t nt, const int32_t *off, const float *x0,		\
    const float *wp, const float *bv, float *y, int64_t cs, int nm,	\
    int np, const float *cl)						\
{									\
	P##_blk(NP, nt, off, x0, wp, bv, y, cs, nm, np, cl);		\
}
ST_FN(st8, 1)
ST_FN(st8, 2)
ST_FN(st8, 3)
static st_fn *const st8_tab[ST_NP] = { st8_1, st8_2, st8_3 };

#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) void
st_store16(float *y, __m512 v, int n)
{
	if (n >= 16)
		_mm512_storeu_ps(y, v);
	else if (n > 0)
		_mm512_mask_storeu_ps(y, (__mmask16)((1u << n) - 1), v);
}
#define ST_STORE_16(y, v, n) st_store16((y), (v), (int)(n))

ST_BLK(st16_blk, __m512, 16, ST_SM16, _mm512_loadu_ps, gp_bcast16,
    _mm512_fmadd_ps, _mm512_set1_ps, _mm512_max_ps, _mm512_min_ps)
ST_FN(st16, 1)
ST_FN(st16, 2)
ST_FN(st16, 3)
static st_fn *const st16_tab[ST_NP] = { st16_1, st16_2, st16_3 };
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/* Whether grp_lanes asks for (or defaults to) the pixels along the lanes. */
static int
st_pixels(const aoe_conv_geom *g, const aoe_sched *s)
{
	int64_t v = aoe_sched_get(s, "grp_lanes", 0);

	if (!aoe_grp_stem(g))
		return 0;
	if (v == 1 || v == 2)
		return v == 2;
	return ST_DEF_PIXELS;
}

/* The weights as [chunk of sm channels][tap][sm], zero past mg. */
static void
st_pack(const aoe_conv_geom *g, int sm, const float *w, float *wp)
{
	const int64_t T = g->cg * g->ksz, nc = ceildiv(g->mg, sm);
	int64_t j, t, l;

	for (j = 0; j < nc; j++)
		for (t = 0; t < T; t++, wp += sm)
			for (l = 0; l < sm; l++) {
				int64_t oc = j * sm + l;
				wp[l] = oc < g->mg ? w[oc * T + t] : 0;
			}
}

struct st_ctx {
	const aoe_conv_geom *g;
	const float *x, *wp, *bias, *add;
	float *y;
	aoe_epi e;
	int epi, vw, sm, rcl;
	float cl[2];
	st_fn *const *tab;
	int64_t rows, nrb, items, nch, ph, ir;	/* ph: floats a phase row */
	size_t bufsz;
	int *fail;
	int cpf;		/* knob cpf: output rows asked for */
};

/* One work item: output rows [oh0, oh1) of image b. */
static void
st_item(const struct st_ctx *d, int64_t b, int64_t oh0, int64_t oh1,
    float *buf)
{
	const aoe_conv_geom *g = d->g;
	const int64_t H = g->in[1], W = g->in[2], OW = g->out[2];
	const int64_t KH = g->k[1], KW = g->k[2], sh = g->s[1], sw = g->s[2];
	const int64_t dh = g->d[1], dwl = g->d[2], ph = d->ph;
	const int64_t T = g->cg * g->ksz, rl = sw * ph;	/* a padded row */
	const int64_t ih0 = oh0 * sh - g->pb[1];
	const int64_t nir = (oh1 - oh0 - 1) * sh + (KH - 1) * dh + 1;
	const int64_t nc = ceildiv(g->mg, d->sm), nvec = ceildiv(OW, d->vw);
	const float *xb = d->x + b * g->c * g->insz;
	int32_t *off = (int32_t *)(buf + g->cg * d->ir * rl + 64);
	float bv[16];
	int64_t ic, r, q, kh, kw, t, j, oh, v;
	int NP;

	/* The padded rows, split into sw phases of ph floats. */
	for (ic = 0; ic < g->cg; ic++)
		for (r = 0; r < nir; r++) {
			int64_t ih = ih0 + r;
			float *dst = buf + (ic * d->ir + r) * rl;
			const float *src = xb + (ic * H + ih) * W;
			memset(dst, 0, sizeof(float) * (size_t)rl);
			if (ih < 0 || ih >= H)
				continue;
			if (sw == 1) {
				memcpy(dst + g->pb[2], src, sizeof(float) *
				    (size_t)min64(W, ph - g->pb[2]));
				continue;
			}
			/* Stride 2: even padded columns, then odd ones. */
			q = 0;
			if (g->pb[2] & 1) {
				dst[ph + (g->pb[2] >> 1)] = src[0];
				q = 1;
			}
			{
				float *ev = dst + ((q + g->pb[2]) >> 1);
				float *od = ev + ph;
				for (; q + 1 < W; q += 2, ev++, od++) {
					*ev = src[q];
					*od = src[q + 1];
				}
				if (q < W)
					*ev = src[q];
			}
		}
	for (ic = 0, t = 0; ic < g->cg; ic++)
		for (kh = 0; kh < KH; kh++)
			for (kw = 0; kw < KW; kw++) {
				int64_t c = kw * dwl;
				off[t++] = (int32_t)((ic * d->ir + kh * dh) * rl +
				    c % sw * ph + c / sw);
			}
	for (oh = oh0; oh < oh1; oh++) {
		const float *xr = buf + (oh - oh0) * sh * rl;
		for (j = 0; j < nc; j++) {
			const int nm = (int)min64(d->sm, g->mg - j * d->sm);
			float *yo = d->y + (b * g->m + j * d->sm) * g->outsz +
			    oh * OW;
			if (aoe_cpf_on(d->cpf))
				gp_pfw(yo, g->outsz, nm, 0, OW);
			for (t = 0; t < d->sm; t++)
				bv[t] = d->bias && t < nm ?
				    d->bias[j * d->sm + t] : 0;
			for (v = 0; v < nvec; v += NP) {
				/*
				 * Tiles of 3 vectors, the last ones of 2 so
				 * that none has 1 (latency-bound) unless the
				 * row has one vector.
				 */
				const int64_t rem = nvec - v;
				NP = rem >= 5 || rem == 3 ? 3 : rem == 1 ? 1 : 2;
				d->tab[NP - 1](T, off, xr + v * d->vw,
				    d->wp + j * T * d->sm, bv, yo + v * d->vw,
				    g->outsz, nm, (int)(OW - v * d->vw),
				    d->rcl ? d->cl : NULL);
			}
			if (d->epi)
				for (t = 0; t < nm; t++) {
					int64_t o = (b * g->m + j * d->sm + t) *
					    g->outsz + oh * OW;
					aoe_epi_row(&d->e, j * d->sm + t,
					    d->y + o, d->add ? d->add + o :
					    NULL, OW);
				}
		}
	}
}

static void
st_chunk(void *arg, int64_t c, int tid)
{
	const struct st_ctx *d = arg;
	int64_t it, i1 = aoe_chunk_lo(d->items, d->nch, c + 1);
	float *buf = aoe_sgemm_tlbuf(2, d->bufsz);

	(void)tid;
	if (buf == NULL) {
		__atomic_store_n(d->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	for (it = aoe_chunk_lo(d->items, d->nch, c); it < i1; it++) {
		int64_t oh0 = it % d->nrb * d->rows;
		st_item(d, it / d->nrb, oh0, min64(oh0 + d->rows,
		    d->g->out[1]), buf);
	}
}

/*
 * Whether an epilogue is a clamp alone (a Relu or Clip, no affine, no
 * per-channel part), which the kernels apply to their accumulators.
 */
static int
clamp_only(const aoe_epi *e)
{
	return e->kind == AOE_EPI_CLAMP && e->ps == NULL && e->pt == NULL &&
	    e->pc == NULL;
}

/* A stem, pixels along the lanes (wp: scratch for the packed weights). */
static int
st_run(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const aoe_act *act, const float *add, float *y,
    float *scratch, const aoe_sched *s, int nthreads)
{
	struct st_ctx d;
	int fail = 0;
	int64_t v;

	memset(&d, 0, sizeof(d));
	d.g = g;
	d.x = x;
	d.bias = bias;
	d.add = add;
	d.y = y;
	d.vw = aoe_grp_vec(s);
	d.cpf = (int)aoe_sched_get(s, "cpf", AOE_CPF_DEF);
	d.sm = d.vw == 16 ? ST_SM16 : ST_SM8;
	d.tab = d.vw == 16 ? st16_tab : st8_tab;
	st_pack(g, d.sm, w, scratch);
	d.wp = scratch;
	d.epi = act != NULL && aoe_act_epi(act, &d.e);
	if (d.epi && add == NULL && clamp_only(&d.e)) {
		d.rcl = 1;
		d.cl[0] = d.e.lo;
		d.cl[1] = d.e.hi;
		d.epi = 0;
	}
	if (!d.epi && add != NULL) {
		d.epi = 1;
		d.e.kind = AOE_EPI_CLAMP;
		d.e.lo = -3.4028235e38f;
		d.e.hi = 3.4028235e38f;
		d.e.ps = d.e.pt = d.e.pc = NULL;
	}
	if ((double)g->n * g->m * g->outsz * g->cg * g->ksz < 65536)
		nthreads = 1;
	d.rows = gp_rows(g, s, 1, nthreads);
	d.nrb = ceildiv(g->out[1], d.rows);
	d.ir = (d.rows - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
	/*
	 * A phase row: the vectors a row's last tile reads past the output
	 * width, plus the widest tap's shift.
	 */
	v = ceildiv(g->out[2], d.vw) * d.vw;
	d.ph = v + ((g->k[2] - 1) * g->d[2]) / g->s[2] + 16;
	d.ph = max64(d.ph, ceildiv(g->in[2] + g->pb[2], g->s[2]));
	d.bufsz = (size_t)(g->cg * d.ir * g->s[2] * d.ph + 64 + g->cg *
	    g->ksz + 16);
	d.items = g->n * d.nrb;
	d.nch = aoe_nchunks(d.items, nthreads);
	d.fail = &fail;
	aoe_parallel(nthreads, d.nch, st_chunk, &d);
	return fail ? -1 : 0;
}

/*
 * The fields of d that both entries share: the tile, the packed weights
 * (packed into scratch now if wp is not for this vector shape), and the
 * epilogue, a clamp in registers where that is all of it.
 */
static void
gp_setup(struct gp_ctx *d, const aoe_conv_geom *g, const float *x,
    const float *w, const float *wp, int wvw, int wnv, const float *bias,
    const aoe_act *act, const float *add, float *y, float *scratch,
    const aoe_sched *s, int pooled)
{
	memset(d, 0, sizeof(*d));
	d->g = g;
	d->x = x;
	d->bias = bias;
	d->add = add;
	d->y = y;
	d->vw = aoe_grp_vec(s);
	d->cpf = (int)aoe_sched_get(s, "cpf", AOE_CPF_DEF);
	d->nv = aoe_grp_nv(g, s, d->vw);
	d->form = gp_form(g, s, d->vw, d->nv);
	/* A fused pool's bands make rows in tiles of the tap form. */
	if (pooled && d->form == 3)
		d->form = 1;
	gp_tile(g, s, d->vw, d->nv, !pooled, &d->form, &d->th, &d->tw);
	if (wp == NULL || wvw != d->vw || wnv != d->nv) {
		/* Weights not packed ahead (or for another shape): now. */
		aoe_grp_pack(g, d->vw, d->nv, w, scratch);
		wp = scratch;
	}
	d->wp = wp;
	d->tab = d->form == 2 ? gpr16_tab : d->vw == 16 ?
	    gp16_tab[d->nv - 1] : gp8_tab[d->nv - 1];
	d->ftab = d->vw == 16 ? gp16f_tab[d->nv - 1] : gp8f_tab[d->nv - 1];
	d->epi = act != NULL && aoe_act_epi(act, &d->e);
	if (d->epi && add == NULL && clamp_only(&d->e)) {
		/*
		 * A Relu or Clip alone is done on the accumulators, and the
		 * output not read again: the 3x3/2 stem 3>64 @224, Relu,
		 * 1.1x faster at 1 thread (AVX-512, Zen 5).
		 */
		d->rcl = 1;
		d->cl[0] = d->e.lo;
		d->cl[1] = d->e.hi;
		d->epi = 0;
	}
	if (!d->epi && add != NULL) {
		d->epi = 1;
		d->e.kind = AOE_EPI_CLAMP;
		d->e.lo = -3.4028235e38f;
		d->e.hi = 3.4028235e38f;
		d->e.ps = d->e.pt = d->e.pc = NULL;
	}
	d->nc = ceildiv(g->mg, (int64_t)d->vw * d->nv);
}

int
aoe_grp_run(const aoe_conv_geom *g, const float *x, const float *w,
    const float *wp, int wvw, int wnv, const float *bias,
    const aoe_act *act, const float *add, float *y, float *scratch,
    const aoe_sched *s, int nthreads)
{
	struct gp_ctx d;
	int fail = 0;

	if (st_pixels(g, s))
		return st_run(g, x, w, bias, act, add, y, scratch, s,
		    nthreads);
	gp_setup(&d, g, x, w, wp, wvw, wnv, bias, act, add, y, scratch, s, 0);
	if ((double)g->n * g->m * g->outsz * g->cg * g->ksz < 65536)
		nthreads = 1;
	d.rows = gp_rows(g, s, d.th, nthreads);
	d.nrb = ceildiv(g->out[1], d.rows);
	d.ir = (d.rows - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
	d.pw = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) * g->d[2] + 1;
	d.bufsz = gp_bufsize(g, d.ir, d.pw, d.vw * d.nv, d.th);
	d.items = g->n * g->group * d.nrb;
	d.nch = aoe_nchunks(d.items, nthreads);
	d.fail = &fail;
	aoe_parallel(nthreads, d.nch, gp_chunk, &d);
	return fail ? -1 : 0;
}

/* Whether algo 8 pools as it goes: one group, no epilogue but a clamp. */
int
aoe_grp_pool_ok(const aoe_conv_geom *g, const aoe_act *act,
    const float *add)
{
	aoe_epi e;

	if (!aoe_grp_ok(g) || g->group != 1 || add != NULL)
		return 0;
	if (act == NULL || !aoe_act_epi(act, &e))
		return 1;
	return clamp_only(&e);
}

/*
 * Pooled rows a work item: the knob grp_rows (counting pooled rows
 * here), else each image in one block a thread (a block boundary makes
 * the Conv rows that both blocks' windows read twice).
 */
static int64_t
gp_prows(const aoe_conv_geom *g, const aoe_pool2 *P, const aoe_sched *s,
    int nth)
{
	const int64_t POH = P->out[0];
	int64_t v = aoe_sched_get(s, "grp_rows", 0);

	if (v > 0)
		return min64(v, POH);
	return ceildiv(POH, nth > 1 && g->n % nth != 0 ? nth : 1);
}

/*
 * Floats of Conv rows that a band keeps, all chunks of channels: about
 * 256 KB (one window a chunk at least).
 */
#define GP_BAND_FLOATS 65536

int
aoe_grp_run_pool(const aoe_conv_geom *g, const aoe_pool2 *pool,
    const float *x, const float *w, const float *wp, int wvw, int wnv,
    const float *bias, const aoe_act *act, float *y, float *scratch,
    const aoe_sched *s, int nthreads)
{
	struct gp_ctx d;
	int64_t L, rl;
	int fail = 0;

	if (!aoe_grp_pool_ok(g, act, NULL))
		return aoe_err(AOE_EINTERNAL, "grouped conv: cannot pool "
		    "as it goes");
	gp_setup(&d, g, x, w, wp, wvw, wnv, bias, act, NULL, y, scratch, s,
	    1);
	d.pool = pool;
	if ((double)g->n * g->m * g->outsz * g->cg * g->ksz < 65536)
		nthreads = 1;
	d.pw = (g->out[2] - 1) * g->s[2] + (g->k[2] - 1) * g->d[2] + 1;
	d.rows = gp_prows(g, pool, s, nthreads);
	d.nrb = ceildiv(pool->out[0], d.rows);
	L = (int64_t)d.vw * d.nv;
	rl = g->out[2] * L;
	d.pband = max64(1, (GP_BAND_FLOATS / (d.nc * rl) - pool->k[0]) /
	    pool->s[0] + 1);
	d.band = (d.pband - 1) * pool->s[0] + pool->k[0];
	/* A band's new rows at most: all of them, in an item's first. */
	d.ir = (d.band - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
	d.bufsz = (size_t)(g->cg * d.ir * d.pw + 64 + g->cg * g->ksz + 16 +
	    (d.nc * d.band + 1) * rl + (d.pband * pool->out[1] + 8) * L + 64);
	d.items = g->n * d.nrb;
	d.nch = aoe_nchunks(d.items, nthreads);
	d.fail = &fail;
	aoe_parallel(nthreads, d.nch, gp_chunk, &d);
	return fail ? aoe_err(AOE_ENOMEM, "grouped conv: out of memory") :
	    0;
}

int
aoe_space_grp(aoe_space *sp, int live, const aoe_conv_geom *g)
{
	static const int64_t vec[] = { 0, 8, 16 }, nv[] = { 0, 1, 2 };
	static const int64_t oh[] = { 0, 1, 2 };
	static const int64_t rows[] = { 0, 1, 2, 4, 8, 16 };
	static const int64_t lanes[] = { 0, 1, 2 };
	static const int64_t form[] = { 0, 1, 3, 2 };
	int64_t ow[GP_MAXC + 1];
	int i, nvec = aoe_cpu_avx512() ? 3 : 2, now = 1, nrows = 1;

	ow[0] = 0;
	if (live) {
		for (i = 1; i <= GP_MAXC && i <= g->out[2]; i++)
			ow[now++] = i;
		while (nrows < 6 && rows[nrows] < g->out[1])
			nrows++;
	}
	if (aoe_space_add(sp, "grp_vec", live ? nvec : 1, vec, "algo=8 "
	    "(grouped): vector width, the output channels of a group "
	    "along its lanes: 0 auto (16 where AVX-512 is allowed), 8, 16 "
	    "(k_grpconv.c)") < 0 ||
	    aoe_space_add(sp, "grp_nv", live ? 3 : 1, nv, "algo=8: "
	    "vectors of output channels a tile, 0 auto (2 when a group's "
	    "channels fill two, else 1), 1, 2") < 0 ||
	    aoe_space_add(sp, "grp_oh", live ? 3 : 1, oh, "algo=8: output "
	    "rows a tile, 0 auto, 1, 2") < 0 ||
	    aoe_space_add(sp, "grp_ow", now, ow, "algo=8: output columns a "
	    "tile, 0 auto; grp_oh * grp_ow at most 14 (16-wide, one vector), "
	    "12 (16-wide, two; 8-wide, one) or 6 (8-wide, two)") < 0 ||
	    aoe_space_add(sp, "grp_rows", nrows, rows, "algo=8: output rows "
	    "a work item, 0 auto (whole planes unless the groups do not "
	    "split evenly between the threads)") < 0 ||
	    aoe_space_add(sp, "grp_lanes", live && aoe_grp_stem(g) ? 3 : 1,
	    lanes, "algo=8, one group (a stem): what the vector lanes hold, "
	    "0 auto (the channels), 1 output channels (as in groups), 2 "
	    "output pixels of a row, stored in place") < 0 ||
	    aoe_space_add(sp, "grp_form", !live ? 1 : aoe_cpu_avx512() &&
	    g->k[2] == 3 && g->d[2] == 1 ? 4 : 3, form, "algo=8: the "
	    "inner loop, 0 auto (2 where it applies, else 1 or 3 by a cost "
	    "model), 1 a broadcast a tap and pixel, tiles of grp_oh rows by "
	    "grp_ow pixels, 3 as 1 in flat tiles of up to grp_ow pixels "
	    "running across the rows of a pass, 2 a broadcast a pixel for a "
	    "kernel row's three taps (AVX-512, grp_nv 1, 3 taps a row, no "
	    "column dilation)") < 0)
		return -AOE_EINTERNAL;
	return 0;
}

int
aoe_space_grp_check(const aoe_sched *s, int algo, char *why, size_t len)
{
	int64_t vw = aoe_sched_get(s, "grp_vec", 0);
	int64_t nv = aoe_sched_get(s, "grp_nv", 0);
	int64_t r = aoe_sched_get(s, "grp_oh", 0);
	int64_t c = aoe_sched_get(s, "grp_ow", 0);

	if (algo != 8) {
		if (vw || nv || r || c || aoe_sched_get(s, "grp_rows", 0) ||
		    aoe_sched_get(s, "grp_lanes", 0) || aoe_sched_get(s,
		    "grp_form", 0)) {
			snprintf(why, len, "grp_vec, grp_nv, grp_oh, grp_ow, "
			    "grp_rows, grp_lanes and grp_form apply to algo=8 "
			    "(grouped) only");
			return -1;
		}
		return 0;
	}
	if (vw == 0)
		vw = aoe_cpu_avx512() ? 16 : 8;
	/*
	 * The row form with two vectors or 8-wide ones would run the tap
	 * form: the same point twice in the tuner's space.
	 */
	if (aoe_sched_get(s, "grp_form", 0) == 2 && (nv == 2 || vw != 16)) {
		snprintf(why, len, "grp_form=2 (rows) runs with grp_nv 1 or "
		    "0 and 16-wide vectors only");
		return -1;
	}
	/* Flat tiles are one row of pixels; a stem's pixel lanes, none. */
	if (aoe_sched_get(s, "grp_form", 0) == 3 && (r || aoe_sched_get(s,
	    "grp_lanes", 0) == 2)) {
		snprintf(why, len, "grp_form=3 (flat) runs with grp_oh 0 and "
		    "grp_lanes 0 or 1 only");
		return -1;
	}
	if (r && c && r * c > gp_pmax((int)vw, nv == 2 ? 2 : 1)) {
		snprintf(why, len, "grp_oh * grp_ow is at most %d with "
		    "grp_vec=%d and grp_nv=%d", gp_pmax((int)vw, nv == 2 ?
		    2 : 1), (int)vw, nv == 2 ? 2 : 1);
		return -1;
	}
	return 0;
}
