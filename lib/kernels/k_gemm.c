/*
 * k_gemm.c - single-precision GEMM and the Gemm and MatMul operators.
 *
 * aoe_sgemm() follows Goto's scheme: B is packed into KC x NC panels of
 * NR-wide strips, A into MC x KC blocks of MR-tall strips, and an AVX2/FMA
 * or AVX-512 micro-kernel keeps an MR x NR tile of C in registers (edge
 * tiles use a kernel of their own size).  The AVX-512 kernels are
 * compiled for that instruction set alone and chosen at run time, when
 * the CPU has it and AOE_MAX_ISA does not cap libaoe to AVX2.  Threads
 * split C into a grid of independent row and column ranges, so that they
 * never wait for each other; a grid of one row or column is cut by the
 * threads' speeds, a micro-tile the unit, so a cut may fall inside a
 * strip.  A
 * k-major B whose panels meet only one block of A is read in place, and
 * products with one row or one column are matrix-vector loops.  The
 * knobs (all optional):
 *
 *	mr, nr	micro-kernel shape: AVX2 6x16 or 4x24; AVX-512 14x32,
 *		12x32, 8x48 or 6x64 (the default is 6x16 on AVX2, 14x32
 *		with AVX-512)
 *	mc	rows of A per packed block (144, 168 with AVX-512; rounded
 *		to mr)
 *	kc	depth of a packed block (384, 256 with AVX-512)
 *	nc	columns of B per packed panel (3072, rounded to nr)
 *	par	thread split: 0 auto, 1 rows (M), 2 columns (N)
 *	packb	-1 auto, 0 read B in place when it is k-major, 1 pack
 *
 * The operators add "prepack" (1: pack a constant B once, in prepare)
 * and, for MatMul, "batch_par" (-1 auto, 1 threads over the batch, 0
 * threads inside each product).
 *
 * aoe_sgemm_ex() adds what Conv needs: a bias added to each row of C, a
 * caller-supplied B packer (implicit im2col) and operands packed ahead.
 */
#include <immintrin.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* The largest AVX2 micro-kernel; the AVX-512 ones need no tile buffer. */
#define MR_MAX 6
#define NR_MAX 24

/* Blocking in force for one call. */
typedef struct blocking {
	int mr, nr;
	int wide;		/* an AVX-512 micro-kernel */
	int64_t mc, kc, nc;
	int packb;		/* 0: read B in place when it can; -1 auto */
	int packa;		/* 0: read A in place when transposed; -1 auto */
	int64_t apf;		/* A prefetch distance in floats; 0 none */
	int cpf;		/* C's lines for writing: 1, 0, -1 shared loops */
} blocking;

/* The micro-kernel shapes: AVX2 first, then AVX-512. */
static const struct ukshape {
	int mr, nr, wide;
} ukshapes[] = {
	{ 6, 16, 0 }, { 4, 24, 0 },
	{ 14, 32, 1 }, { 12, 32, 1 }, { 8, 48, 1 }, { 6, 64, 1 },
};
#define NSHAPES ((int)(sizeof(ukshapes) / sizeof(ukshapes[0])))

/* The index of shape mr x nr in ukshapes, or -1. */
static int
shape_index(int64_t mr, int64_t nr)
{
	int i;

	for (i = 0; i < NSHAPES; i++)
		if (ukshapes[i].mr == mr && ukshapes[i].nr == nr)
			return i;
	return -1;
}

/* The default blocking of the instruction set in use. */
#define DEF_MR (aoe_cpu_avx512() ? 14 : 6)
#define DEF_NR (aoe_cpu_avx512() ? 32 : 16)
#define DEF_MC (aoe_cpu_avx512() ? 168 : 144)
#define DEF_KC (aoe_cpu_avx512() ? 256 : 384)
#define DEF_NC 3072
/*
 * How far ahead in A (floats) a micro-kernel on a block's first column
 * strip prefetches into L2.  That strip is where A, weights packed once,
 * first comes from memory, and the hardware prefetcher stops at every
 * 4 KB page.  On Zen 5 with 512, resnet50's pointwise Convs ran 0.93x
 * at 2 threads and 0.95x at 1; the AVX2 kernels, whose A is a third as
 * wide, ran 1.01x there, so they do without.
 */
#define DEF_APF (aoe_cpu_avx512() ? 512 : 0)
/*
 * Knob cpf: 1, every line of a C tile is asked for, for writing, before
 * the micro-kernel that stores it (aoe_pfw_span); 0, only the micro-
 * kernel's own read prefetch of each row's first line; -1 (auto), 1 in
 * a loop the pool's threads share (aoe_pool_shared), else 0.  On an AMD
 * EPYC Zen 5 at 2 threads (per-node medians in the model), the GEMM-
 * based Convs of mobilenet_v2 and squeezenet1_1 ran 0.63-0.94x the
 * time, the whole models 0.81x and 0.93x by node sums, mobilenet_v2
 * 0.93x a run.  At 1 thread the lines are this core's already: there
 * squeezenet1_1's expand1x1 Convs (a depth of 16 to 64) ran 1.02-1.07x,
 * the model and regnet_x_400mf 1.025x a run, hence auto.
 */
#define DEF_CPF AOE_CPF_DEF

/*
 * The epilogue (see aoe_gemm_ex) over a tile of C just made final, where
 * the micro-kernels do not apply it (see epi_inreg): the AVX2 edge tiles,
 * epilogues with a per-row affine, the matrix-vector paths.
 */
static void
epi_tile(const aoe_gemm_ex *x, float *cp, int64_t nrows, int64_t ncols)
{
	const float *d = x->add ? x->add + (cp - x->c) : NULL;
	int64_t r, row = (cp - x->c) / x->ldc;
	aoe_epi e = x->e;

	if (e.pc)
		e.pc += (cp - x->c) % x->ldc;
	for (r = 0; r < nrows; r++)
		aoe_epi_row(&e, row + r, cp + r * x->ldc,
		    d ? d + r * x->ldc : NULL, ncols);
}

/*
 * Whether the micro-kernels apply x's epilogue as they store: a bias by
 * column, a residual and a clamp (Relu, Clip or none), then any of the
 * activations (a HardSwish, Sigmoid, SiLU or either GELU: kernel.h's
 * math), when there is no per-row affine; other epilogues run by
 * epi_tile.  (With a MatMul's fused bias by epi_tile, transformer_encoder
 * took 1.045x the time at 1 thread and 1.026x at 2, Zen 5, bench/ab.sh.
 * A HardSwish after a pointwise Conv with many output
 * channels took 1.3x to 2x the Conv's time, bench/pw -e; a Sigmoid or
 * SiLU with the fast math, 16>96@112, 1.45x the in-register form's, and
 * no faster on any shape: bench/results/act-20261204.txt.)
 */
static int
epi_inreg(const aoe_gemm_ex *x)
{
	return x->epi && x->e.ps == NULL && x->e.pt == NULL;
}

/*
 * The micro-kernels' view of x's epilogue: the clamp's bounds, the
 * activation's kind after it (AOE_EPI_CLAMP, 0: none), and the bias by
 * column at the tile's first column (NULL: none; epi_col sets it for
 * each strip of columns).
 */
typedef struct kepi {
	float lo, hi;
	int kind;
	const float *cb;
} kepi;

static void
epi_cl(const aoe_gemm_ex *x, kepi *cl)
{
	cl->lo = x->e.lo;
	cl->hi = x->e.hi;
	cl->kind = x->e.kind;
	cl->cb = NULL;
}

/* cl's bias by column for the tile of C at cp. */
static void
epi_col(const aoe_gemm_ex *x, kepi *cl, const float *cp)
{
	cl->cb = x->e.pc ? x->e.pc + (cp - x->c) % x->ldc : NULL;
}

/* Activation k (an AOE_EPI_ kind other than the clamp) on eight floats. */
static inline __attribute__((always_inline)) __m256
act8(int k, __m256 t)
{
	switch (k) {
	case AOE_EPI_HARDSWISH:
		/* x min(1, max(0, x/6 + 1/2)), as aoe_epi_f. */
		return _mm256_mul_ps(t, _mm256_min_ps(_mm256_set1_ps(1),
		    _mm256_max_ps(_mm256_setzero_ps(), _mm256_fmadd_ps(t,
		    _mm256_set1_ps(1.0f / 6), _mm256_set1_ps(.5f)))));
	case AOE_EPI_SIGMOID:
		return aoe_v8_sigmoid(t);
	case AOE_EPI_SILU:
		return aoe_v8_silu(t);
	case AOE_EPI_GELU:
		return aoe_v8_gelu(t);
	default:
		return aoe_v8_gelu_tanh(t);
	}
}

/*
 * The micro-kernels: C[0..MR)[0..8*NV) = alpha * A~ B~ + bias + beta C,
 * where A~ is kc steps of MR values (packed) and B~ kc steps of 8*NV
 * values, ldb apart.  When beta is 0, C is not read.  One body serves
 * every shape: the accumulators are named variables under constant
 * conditions, so that each instance keeps just its own in registers.
 */
#define FMA(c, a, b) c = _mm256_fmadd_ps(a, b, c)

#define ROW(r)								\
	if (MR > r) {							\
		av = _mm256_broadcast_ss(a + r);			\
		FMA(c##r##0, av, b0);					\
		if (NV > 1)						\
			FMA(c##r##1, av, b1);				\
		if (NV > 2)						\
			FMA(c##r##2, av, b2);				\
	}

/*
 * Write one accumulator vector v to c + o (column co of the tile): alpha
 * v + bias + beta c, then, when cl is set (the epilogue, see
 * aoe_gemm_ex), plus its bias by column and the residual d + o if any,
 * clamped to [lo, hi], and through the activation hs (a HardSwish,
 * Sigmoid, SiLU or GELU) when it is not 0, as aoe_epi_f computes it, so
 * that a NaN stays a NaN.  Where A1 (alpha 1, the bias already in v) is
 * set, v goes as it is.
 */
#define STORE(v, o, co, bi) do {					\
	__m256 t_ = A1 ? v : _mm256_fmadd_ps(va, v, bi);		\
	if (beta != 0)							\
		t_ = _mm256_fmadd_ps(vb, _mm256_loadu_ps(c + (o)), t_);	\
	if (cl) {							\
		if (cl->cb)						\
			t_ = _mm256_add_ps(t_,				\
			    _mm256_loadu_ps(cl->cb + (co)));		\
		if (d)							\
			t_ = _mm256_add_ps(t_, _mm256_loadu_ps(d + (o))); \
		t_ = _mm256_min_ps(vh, _mm256_max_ps(vl, t_));		\
		if (hs)							\
			t_ = act8(hs, t_);				\
	}								\
	_mm256_storeu_ps(c + (o), t_);					\
} while (0)

#define OUT(r)								\
	if (MR > r) {							\
		bi = A1 || !bias ? _mm256_setzero_ps() :		\
		    _mm256_broadcast_ss(bias + r);			\
		STORE(c##r##0, r * ldc, 0, bi);				\
		if (NV > 1)						\
			STORE(c##r##1, r * ldc + 8, 8, bi);		\
		if (NV > 2)						\
			STORE(c##r##2, r * ldc + 16, 16, bi);		\
	}

static inline __attribute__((always_inline)) void
ukr_gen(const int MR, const int NV, int64_t kc, const float *restrict a,
    const float *restrict b, int64_t ldb, float *restrict c, int64_t ldc,
    float alpha, float beta, const float *bias, const float *pf,
    const float *d, const kepi *cl, int64_t apf, int64_t as)
{
	/* A's step a k: a packed strip's rows, or A's stride read in place. */
	const int64_t astep = as > 0 ? as : MR;
	__m256 c00, c01, c02, c10, c11, c12, c20, c21, c22;
	__m256 c30, c31, c32, c40, c41, c42, c50, c51, c52;
	__m256 b0, b1 = _mm256_setzero_ps(), b2 = b1, av, va, vb, bi;
	__m256 vl = b1, vh = b1;
	int64_t p;
	int r, hs = 0;
	/*
	 * With alpha 1 the bias starts the sums, so that the store adds
	 * nothing: a FMA a vector less on the FMA pipes, which a shallow
	 * k (a pointwise Conv of 16 to 32 input channels) feels.
	 */
	const int a1 = alpha == 1 && bias != NULL;

	if (a1) {
		c00 = c01 = c02 = _mm256_broadcast_ss(bias);
		if (MR > 1)
			c10 = c11 = c12 = _mm256_broadcast_ss(bias + 1);
		if (MR > 2)
			c20 = c21 = c22 = _mm256_broadcast_ss(bias + 2);
		if (MR > 3)
			c30 = c31 = c32 = _mm256_broadcast_ss(bias + 3);
		if (MR > 4)
			c40 = c41 = c42 = _mm256_broadcast_ss(bias + 4);
		if (MR > 5)
			c50 = c51 = c52 = _mm256_broadcast_ss(bias + 5);
	} else {
		c00 = c01 = c02 = c10 = c11 = c12 = c20 = c21 = c22 =
		    _mm256_setzero_ps();
		c30 = c31 = c32 = c40 = c41 = c42 = c50 = c51 = c52 =
		    _mm256_setzero_ps();
	}
	for (r = 0; r < MR; r++)
		_mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
	/* The residual, as in zkr_gen. */
	if (d != NULL)
		for (r = 0; r < MR; r++)
			for (int v = 0; v < NV; v += 2)
				_mm_prefetch((const char *)(d + r * ldc +
				    8 * v), _MM_HINT_T0);
#pragma GCC unroll 4
	for (p = 0; p < kc; p++) {
		b0 = _mm256_loadu_ps(b);
		if (NV > 1)
			b1 = _mm256_loadu_ps(b + 8);
		if (NV > 2)
			b2 = _mm256_loadu_ps(b + 16);
		ROW(0) ROW(1) ROW(2) ROW(3) ROW(4) ROW(5)
		_mm_prefetch((const char *)pf, _MM_HINT_T0);
		if (NV > 2)
			_mm_prefetch((const char *)(pf + 16), _MM_HINT_T0);
		if (apf > 0)
			_mm_prefetch((const char *)(a + apf), _MM_HINT_T1);
		a += astep;
		b += ldb;
		pf += ldb;
	}
	va = _mm256_set1_ps(alpha);
	vb = _mm256_set1_ps(beta);
	if (cl) {
		vl = _mm256_set1_ps(cl->lo);
		vh = _mm256_set1_ps(cl->hi);
		hs = cl->kind;
	}
	if (a1) {
		const int A1 = 1;
		OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5)
	} else {
		const int A1 = 0;
		OUT(0) OUT(1) OUT(2) OUT(3) OUT(4) OUT(5)
	}
}

typedef void ukr_fn(int64_t, const float *, const float *, int64_t, float *,
    int64_t, float, float, const float *, const float *, const float *,
    const kepi *, int64_t, int64_t);

#define UKR(mr, nv)							\
static void								\
ukr_##mr##x##nv(int64_t kc, const float *a, const float *b, int64_t ldb,\
    float *c, int64_t ldc, float alpha, float beta, const float *bias,	\
    const float *pf, const float *d, const kepi *cl, int64_t apf,	\
    int64_t as)								\
{									\
	ukr_gen(mr, nv, kc, a, b, ldb, c, ldc, alpha, beta, bias, pf, d,	\
	    cl, apf, as);						\
}

UKR(1, 1) UKR(2, 1) UKR(3, 1) UKR(4, 1) UKR(5, 1) UKR(6, 1)
UKR(1, 2) UKR(2, 2) UKR(3, 2) UKR(4, 2) UKR(5, 2) UKR(6, 2)
UKR(1, 3) UKR(2, 3) UKR(3, 3) UKR(4, 3)

/*
 * The kernels by rows and vectors of 8 columns.  The A strips are packed
 * mr tall, so a kernel for fewer rows reads them with the full-height
 * stride: edge kernels are called with a repacked A (see macro_kernel).
 */
static ukr_fn *const ukr_tab[MR_MAX + 1][4] = {
	{ NULL, NULL, NULL, NULL },
	{ NULL, ukr_1x1, ukr_1x2, ukr_1x3 },
	{ NULL, ukr_2x1, ukr_2x2, ukr_2x3 },
	{ NULL, ukr_3x1, ukr_3x2, ukr_3x3 },
	{ NULL, ukr_4x1, ukr_4x2, ukr_4x3 },
	{ NULL, ukr_5x1, ukr_5x2, NULL },
	{ NULL, ukr_6x1, ukr_6x2, NULL },
};

/*
 * The AVX-512 micro-kernels, compiled for AVX-512F whatever the build's
 * -march, and called only when aoe_cpu_avx512() says so.  The same
 * scheme as above with vectors of 16 columns: C[0..MR)[0..16*NV) =
 * alpha * A~ B~ + bias + beta C, where vector v of B~'s k step p is at
 * b + p*ldb + v*vs (vs is 16 when B~'s strips are nr wide or B is read
 * in place, 16*kc when they are 16 wide).  The last vector stores only
 * the columns in mask, so that edge tiles need no buffer.
 */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif

#define ZFMA(c, a, b) c = _mm512_fmadd_ps(a, b, c)

#define ZROW(r)								\
	if (MR > r) {							\
		av = _mm512_set1_ps(a[r]);				\
		ZFMA(c##r##_0, av, b0);					\
		if (NV > 1)						\
			ZFMA(c##r##_1, av, b1);				\
		if (NV > 2)						\
			ZFMA(c##r##_2, av, b2);				\
		if (NV > 3)						\
			ZFMA(c##r##_3, av, b3);				\
	}

/* Activation k (an AOE_EPI_ kind other than the clamp) on sixteen. */
static inline __attribute__((always_inline)) __m512
act16(int k, __m512 t)
{
	switch (k) {
	case AOE_EPI_HARDSWISH:
		return _mm512_mul_ps(t, _mm512_min_ps(_mm512_set1_ps(1),
		    _mm512_max_ps(_mm512_setzero_ps(), _mm512_fmadd_ps(t,
		    _mm512_set1_ps(1.0f / 6), _mm512_set1_ps(.5f)))));
	case AOE_EPI_SIGMOID:
		return aoe_z16_sigmoid(t);
	case AOE_EPI_SILU:
		return aoe_z16_silu(t);
	case AOE_EPI_GELU:
		return aoe_z16_gelu(t);
	default:
		return aoe_z16_gelu_tanh(t);
	}
}

/*
 * Write vector v of a row to c + o (column co of the tile): alpha v +
 * bias + beta c, and the epilogue's bias by column, residual, clamp and
 * activation when cl is set (as STORE), under mask m.
 */
#define ZHSWISH(t) act16(hs, t)
#define ZSTORE(v, o, co, bi, m) do {					\
	__m512 t_ = _mm512_fmadd_ps(va, v, bi);				\
	if ((m) == 0xffff) {						\
		if (beta != 0)						\
			t_ = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + (o)), \
			    t_);					\
		if (cl) {						\
			if (cl->cb)					\
				t_ = _mm512_add_ps(t_,			\
				    _mm512_loadu_ps(cl->cb + (co)));	\
			if (d)						\
				t_ = _mm512_add_ps(t_,			\
				    _mm512_loadu_ps(d + (o)));		\
			t_ = _mm512_min_ps(vh, _mm512_max_ps(vl, t_));	\
			if (hs)						\
				t_ = ZHSWISH(t_);			\
		}							\
		_mm512_storeu_ps(c + (o), t_);				\
	} else {							\
		if (beta != 0)						\
			t_ = _mm512_fmadd_ps(vb,			\
			    _mm512_maskz_loadu_ps(m, c + (o)), t_);	\
		if (cl) {						\
			if (cl->cb)					\
				t_ = _mm512_add_ps(t_,			\
				    _mm512_maskz_loadu_ps(m, cl->cb + (co))); \
			if (d)						\
				t_ = _mm512_add_ps(t_,			\
				    _mm512_maskz_loadu_ps(m, d + (o)));	\
			t_ = _mm512_min_ps(vh, _mm512_max_ps(vl, t_));	\
			if (hs)						\
				t_ = ZHSWISH(t_);			\
		}							\
		_mm512_mask_storeu_ps(c + (o), m, t_);			\
	}								\
} while (0)

#define ZOUT(r)								\
	if (MR > r) {							\
		bi = bias ? _mm512_set1_ps(bias[r]) :			\
		    _mm512_setzero_ps();				\
		ZSTORE(c##r##_0, r * ldc, 0, bi,			\
		    NV == 1 ? mask : 0xffff);				\
		if (NV > 1)						\
			ZSTORE(c##r##_1, r * ldc + 16, 16, bi,		\
			    NV == 2 ? mask : 0xffff);			\
		if (NV > 2)						\
			ZSTORE(c##r##_2, r * ldc + 32, 32, bi,		\
			    NV == 3 ? mask : 0xffff);			\
		if (NV > 3)						\
			ZSTORE(c##r##_3, r * ldc + 48, 48, bi, mask);	\
	}

#define ZDECL(r) __m512 c##r##_0 = z, c##r##_1 = z, c##r##_2 = z, c##r##_3 = z

static inline __attribute__((always_inline)) void
zkr_gen(const int MR, const int NV, int64_t kc, const float *restrict a,
    const float *restrict b, int64_t ldb, int64_t vs, float *restrict c,
    int64_t ldc, float alpha, float beta, const float *bias,
    const float *pf, __mmask16 mask, const float *d, const kepi *cl,
    int64_t apf, int64_t as)
{
	const __m512 z = _mm512_setzero_ps();
	/* A's step a k: a packed strip's rows, or A's stride read in place. */
	const int64_t astep = as > 0 ? as : MR;
	__m512 b0, b1 = z, b2 = z, b3 = z, av, va, vb, bi, vl = z, vh = z;
	int hs = 0;
	ZDECL(0); ZDECL(1); ZDECL(2); ZDECL(3); ZDECL(4); ZDECL(5);
	ZDECL(6); ZDECL(7); ZDECL(8); ZDECL(9); ZDECL(10); ZDECL(11);
	ZDECL(12); ZDECL(13);
	int64_t p;
	int r;

	/*
	 * C's rows, when they are read (beta not 0).  Asked for when only
	 * written as well, the lines cost 2-4% of a pointwise Conv of depth
	 * 16 in cache (Zen 5, bench/convb 16>96 @28 and @56, warm).
	 */
	for (r = 0; beta != 0 && r < MR; r++)
		_mm_prefetch((const char *)(c + r * ldc), _MM_HINT_T0);
	/*
	 * The residual the epilogue adds: MR rows a plane apart, the
	 * tile's width each, from L3 or memory; asked for now, they come
	 * while the loop runs (64>256 @56 with its residual, warm, 1
	 * thread: 0.8x the time).
	 */
	if (d != NULL)
		for (r = 0; r < MR; r++)
			for (int v = 0; v < NV; v++)
				_mm_prefetch((const char *)(d + r * ldc +
				    16 * v), _MM_HINT_T0);
#pragma GCC unroll 4
	for (p = 0; p < kc; p++) {
		b0 = _mm512_loadu_ps(b);
		if (NV > 1)
			b1 = _mm512_loadu_ps(b + vs);
		if (NV > 2)
			b2 = _mm512_loadu_ps(b + 2 * vs);
		if (NV > 3)
			b3 = _mm512_loadu_ps(b + 3 * vs);
		ZROW(0) ZROW(1) ZROW(2) ZROW(3) ZROW(4) ZROW(5) ZROW(6)
		ZROW(7) ZROW(8) ZROW(9) ZROW(10) ZROW(11) ZROW(12) ZROW(13)
		_mm_prefetch((const char *)pf, _MM_HINT_T0);
		if (NV > 1)
			_mm_prefetch((const char *)(pf + vs), _MM_HINT_T0);
		if (NV > 2)
			_mm_prefetch((const char *)(pf + 2 * vs), _MM_HINT_T0);
		if (NV > 3)
			_mm_prefetch((const char *)(pf + 3 * vs), _MM_HINT_T0);
		if (apf > 0)
			_mm_prefetch((const char *)(a + apf), _MM_HINT_T1);
		a += astep;
		b += ldb;
		pf += ldb;
	}
	va = _mm512_set1_ps(alpha);
	vb = _mm512_set1_ps(beta);
	if (cl) {
		vl = _mm512_set1_ps(cl->lo);
		vh = _mm512_set1_ps(cl->hi);
		hs = cl->kind;
	}
	ZOUT(0) ZOUT(1) ZOUT(2) ZOUT(3) ZOUT(4) ZOUT(5) ZOUT(6)
	ZOUT(7) ZOUT(8) ZOUT(9) ZOUT(10) ZOUT(11) ZOUT(12) ZOUT(13)
}

typedef void zkr_fn(int64_t, const float *, const float *, int64_t, int64_t,
    float *, int64_t, float, float, const float *, const float *,
    __mmask16, const float *, const kepi *, int64_t, int64_t);

#define ZKR(mr, nv)							\
static void								\
zkr_##mr##x##nv(int64_t kc, const float *a, const float *b, int64_t ldb,\
    int64_t vs, float *c, int64_t ldc, float alpha, float beta,		\
    const float *bias, const float *pf, __mmask16 mask, const float *d,	\
    const kepi *cl, int64_t apf, int64_t as)				\
{									\
	zkr_gen(mr, nv, kc, a, b, ldb, vs, c, ldc, alpha, beta, bias, pf,\
	    mask, d, cl, apf, as);					\
}

ZKR(1, 1) ZKR(2, 1) ZKR(3, 1) ZKR(4, 1) ZKR(5, 1) ZKR(6, 1) ZKR(7, 1)
ZKR(8, 1) ZKR(9, 1) ZKR(10, 1) ZKR(11, 1) ZKR(12, 1) ZKR(13, 1) ZKR(14, 1)
ZKR(1, 2) ZKR(2, 2) ZKR(3, 2) ZKR(4, 2) ZKR(5, 2) ZKR(6, 2) ZKR(7, 2)
ZKR(8, 2) ZKR(9, 2) ZKR(10, 2) ZKR(11, 2) ZKR(12, 2) ZKR(13, 2) ZKR(14, 2)
ZKR(1, 3) ZKR(2, 3) ZKR(3, 3) ZKR(4, 3) ZKR(5, 3) ZKR(6, 3) ZKR(7, 3)
ZKR(8, 3)
ZKR(1, 4) ZKR(2, 4) ZKR(3, 4) ZKR(4, 4) ZKR(5, 4) ZKR(6, 4)

/* By rows and vectors of 16 columns (the shapes' edge tiles). */
#define ZMR_MAX 14
static zkr_fn *const zkr_tab[ZMR_MAX + 1][5] = {
	{ NULL, NULL, NULL, NULL, NULL },
	{ NULL, zkr_1x1, zkr_1x2, zkr_1x3, zkr_1x4 },
	{ NULL, zkr_2x1, zkr_2x2, zkr_2x3, zkr_2x4 },
	{ NULL, zkr_3x1, zkr_3x2, zkr_3x3, zkr_3x4 },
	{ NULL, zkr_4x1, zkr_4x2, zkr_4x3, zkr_4x4 },
	{ NULL, zkr_5x1, zkr_5x2, zkr_5x3, zkr_5x4 },
	{ NULL, zkr_6x1, zkr_6x2, zkr_6x3, zkr_6x4 },
	{ NULL, zkr_7x1, zkr_7x2, zkr_7x3, NULL },
	{ NULL, zkr_8x1, zkr_8x2, zkr_8x3, NULL },
	{ NULL, zkr_9x1, zkr_9x2, NULL, NULL },
	{ NULL, zkr_10x1, zkr_10x2, NULL, NULL },
	{ NULL, zkr_11x1, zkr_11x2, NULL, NULL },
	{ NULL, zkr_12x1, zkr_12x2, NULL, NULL },
	{ NULL, zkr_13x1, zkr_13x2, NULL, NULL },
	{ NULL, zkr_14x1, zkr_14x2, NULL, NULL },
};

/* A C tile's rows, asked for for writing (knob cpf). */
static inline void
pfw_tile(const float *c, int64_t ldc, int64_t rows, int64_t cols)
{
	int64_t r;

	for (r = 0; r < rows; r++)
		aoe_pfw_span(c + r * ldc, cols);
}

/*
 * The macro-kernel of the AVX-512 shapes, as macro_kernel below: B strip
 * jr starts at bpanel + jr*bstep, steps bld per k and has its vectors
 * bvs apart; a narrower last strip is at btail (tld, tvs) when set.
 * A is packed (as 0: row panel ir at apanel + ir*kc), or read in place
 * (as > 0: its rows at apanel + ir, its steps as apart).
 */
static void
macro_kernel512(const aoe_gemm_ex *x, const blocking *bk, int64_t mc,
    int64_t nc, int64_t kc, const float *apanel, int64_t as,
    const float *bpanel, int64_t bstep, int64_t bld, int64_t bvs,
    const float *btail, int64_t tld, int64_t tvs, float *c,
    const float *bias, float beta, int last)
{
	int64_t mr = bk->mr, nr = bk->nr, jr, ir;
	const float *bp, *pf;
	kepi cl;
	const int inreg = last && epi_inreg(x), pfw = aoe_cpf_on(bk->cpf);

	epi_cl(x, &cl);
	for (jr = 0; jr < nc; jr += nr) {
		int64_t ncols = nc - jr < nr ? nc - jr : nr, ld = bld, vs = bvs;
		int nv = (int)((ncols + 15) / 16);
		__mmask16 mask = (__mmask16)(ncols % 16 ?
		    (1u << (ncols % 16)) - 1 : 0xffff);

		epi_col(x, &cl, c + jr);
		if (ncols < nr && btail != NULL) {
			bp = btail;
			ld = tld;
			vs = tvs;
		} else
			bp = bpanel + jr * bstep;
		pf = jr + nr < nc && (jr + 2 * nr <= nc || btail == NULL) ?
		    bpanel + (jr + nr) * bstep : bp;
		for (ir = 0; ir < mc; ir += mr, pf = bp) {
			int64_t nrows = mc - ir < mr ? mc - ir : mr;
			float *cp = c + ir * x->ldc + jr;
			if (pfw)
				pfw_tile(cp, x->ldc, nrows, ncols);
			zkr_tab[nrows][nv](kc, apanel + (as > 0 ? ir : ir * kc),
			    bp, ld, vs, cp, x->ldc, x->alpha, beta, bias ?
			    bias + ir : NULL, pf, mask, inreg && x->add ?
			    x->add + (cp - x->c) : NULL, inreg ? &cl : NULL,
			    jr == 0 && as == 0 ? bk->apf : 0, as);
			if (last && !inreg)
				epi_tile(x, cp, nrows, ncols);
		}
	}
}

#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/* Transpose 8x8 in registers: on return v[q][r] = row[r][off+q]. */
static inline __attribute__((always_inline)) void
transpose8_regs(const float *const row[8], int64_t off, __m256 v[8])
{
	int r;

	for (r = 0; r < 8; r++)
		v[r] = _mm256_loadu_ps(row[r] + off);
	aoe_tr8(v);
}

/* Transpose 8x8: d[q*ld + r] = row[r][off+q]; d need not be aligned. */
static inline void
transpose8(const float *const row[8], int64_t off, float *d, int64_t ld)
{
	__m256 v[8];
	int q;

	transpose8_regs(row, off, v);
	for (q = 0; q < 8; q++)
		_mm256_storeu_ps(d + q * ld, v[q]);
}

/* Store the first h lanes of v at d. */
static inline __attribute__((always_inline)) void
store_lanes(float *d, __m256 v, int h)
{
	__m128 lo = _mm256_castps256_ps128(v);

	switch (h) {
	case 8:
		_mm256_storeu_ps(d, v);
		break;
	case 6:
		_mm_storeu_ps(d, lo);
		_mm_storel_pi((__m64 *)(d + 4), _mm256_extractf128_ps(v, 1));
		break;
	case 4:
		_mm_storeu_ps(d, lo);
		break;
	default: {
		float t[8];
		_mm256_storeu_ps(t, v);
		memcpy(d, t, sizeof(float) * h);
	}
	}
}

/*
 * Eight-step blocks of gh rows of a strip of A (gh at most 8, from rows
 * row[]) into dst, h floats a step: the first kc & ~7 steps.
 */
static inline __attribute__((always_inline)) void
pack_a_group(const float *const row[8], int64_t kc, float *dst, int h,
    int gh)
{
	__m256 v[8];
	int64_t p;
	int q;

	for (p = 0; p + 8 <= kc; p += 8) {
		transpose8_regs(row, p, v);
		for (q = 0; q < 8; q++)
			store_lanes(dst + (p + q) * h, v[q], gh);
	}
}

/*
 * Pack rows [i0, i0+mc) and depth [p0, p0+kc) of op(A) into strips of mr
 * rows: strip s starts at dst + s*kc*mr and holds A(i0+s*mr+r, p0+p) at
 * p*h + r, where h is mr, or the row count of a last, shorter strip (the
 * edge kernels read it so).
 */
static void
pack_a(const aoe_gemm_ex *x, int64_t i0, int64_t mc, int64_t p0,
    int64_t kc, int mr, float *dst)
{
	int64_t i, p, q;
	int r, h, g0, gh;

	for (i = 0; i < mc; i += mr, dst += kc * mr) {
		h = (int)min64(mr, mc - i);
		if (x->transa) {
			const float *s = x->a + p0 * x->lda + i0 + i;
#define PACK_AT(H)							\
			for (p = 0; p < kc; p++, s += x->lda)		\
				memcpy(dst + p * (H), s, (H) * 4)
			switch (h) {
			case 14: PACK_AT(14); break;
			case 12: PACK_AT(12); break;
			case 8: PACK_AT(8); break;
			case 6: PACK_AT(6); break;
			case 4: PACK_AT(4); break;
			default:
				for (p = 0; p < kc; p++, s += x->lda)
					for (r = 0; r < h; r++)
						dst[p * h + r] = s[r];
			}
#undef PACK_AT
			continue;
		}
		/* Eight steps of up to eight rows at a time: transposes. */
		for (g0 = 0; g0 < h; g0 += 8) {
			const float *row[8];
			gh = h - g0 < 8 ? h - g0 : 8;
			for (r = 0; r < 8; r++)
				row[r] = x->a + (i0 + i + g0 + (r < gh ? r :
				    gh - 1)) * x->lda + p0;
			if (gh == 8)
				pack_a_group(row, kc, dst + g0, h, 8);
			else if (gh == 6)
				pack_a_group(row, kc, dst + g0, h, 6);
			else if (gh == 4)
				pack_a_group(row, kc, dst + g0, h, 4);
			else
				pack_a_group(row, kc, dst + g0, h, gh);
		}
		p = kc & ~(int64_t)7;
		for (r = 0; r < h; r++) {
			const float *s = x->a + (i0 + i + r) * x->lda + p0;
			for (q = p; q < kc; q++)
				dst[q * h + r] = s[q];
		}
	}
}

/*
 * Pack depth [p0, p0+kc) and columns [j0, j0+nc) of op(B) into nr-wide
 * strips: dst[s*kc*nr + p*nr + j] = B(p0+p, j0+s*nr+j), zero beyond the
 * last column.
 */
static void
pack_b(const aoe_gemm_ex *x, int64_t p0, int64_t kc, int64_t j0,
    int64_t nc, int nr, float *dst)
{
	int64_t j, p;
	int c, cols;

	for (j = 0; j < nc; j += nr) {
		cols = (int)min64(nr, nc - j);
		if (!x->transb) {
			const float *s = x->b + p0 * x->ldb + j0 + j;
			if (cols == nr) {
				for (p = 0; p < kc; p++, s += x->ldb)
					for (c = 0; c < nr; c += 8)
						_mm256_store_ps(dst + p * nr +
						    c, _mm256_loadu_ps(s + c));
			} else {
				for (p = 0; p < kc; p++, s += x->ldb) {
					for (c = 0; c < cols; c++)
						dst[p * nr + c] = s[c];
					for (; c < nr; c++)
						dst[p * nr + c] = 0;
				}
			}
		} else {
			const float *s = x->b + (j0 + j) * x->ldb + p0;
			int c8 = cols & ~7;
			for (c = 0; c < c8; c += 8) {
				const float *row[8];
				for (int q = 0; q < 8; q++)
					row[q] = s + (c + q) * x->ldb;
				for (p = 0; p + 8 <= kc; p += 8)
					transpose8(row, p, dst + p * nr + c,
					    nr);
				for (; p < kc; p++)
					for (int q = 0; q < 8; q++)
						dst[p * nr + c + q] =
						    s[(c + q) * x->ldb + p];
			}
			for (; c < cols; c++)
				for (p = 0; p < kc; p++)
					dst[p * nr + c] = s[c * x->ldb + p];
			for (; c < nr; c++)
				for (p = 0; p < kc; p++)
					dst[p * nr + c] = 0;
		}
		dst += kc * nr;
	}
}

/*
 * Per-thread work buffers (0: packed A, 1: packed B, 2: free for callers
 * such as Conv's packer, 3: Conv's padded input, 4: an output staged for
 * aoe_stage_put), grown on demand and kept for later calls: an
 * mmap and its page faults per call would cost more than small GEMMs.
 * They are freed when their thread exits.
 */
#define NTLBUF 5
#define HUGE_BYTES ((size_t)2 << 20)
typedef struct tlbufs {
	float *p[NTLBUF];
	size_t cap[NTLBUF];
} tlbufs;

static pthread_key_t tl_key;
static pthread_once_t tl_once = PTHREAD_ONCE_INIT;
static int tl_key_ok;

static void
tlbufs_free(void *v)
{
	tlbufs *b = v;
	int i;

	for (i = 0; i < NTLBUF; i++)
		free(b->p[i]);
	free(b);
}

static void
tl_key_init(void)
{
	tl_key_ok = pthread_key_create(&tl_key, tlbufs_free) == 0;
}

float *
aoe_sgemm_tlbuf(int which, size_t nfloats)
{
	tlbufs *b;
	size_t bytes;

	pthread_once(&tl_once, tl_key_init);
	if (!tl_key_ok || which < 0 || which >= NTLBUF)
		return NULL;
	if ((b = pthread_getspecific(tl_key)) == NULL) {
		if ((b = calloc(1, sizeof(*b))) == NULL)
			return NULL;
		if (pthread_setspecific(tl_key, b) != 0) {
			free(b);
			return NULL;
		}
	}
	if (b->cap[which] >= nfloats)
		return b->p[which];
	free(b->p[which]);
	/*
	 * Large buffers go on transparent huge pages where the system
	 * allows: packed panels span megabytes, and TLB misses on them
	 * cost a tenth of the speed.
	 */
	bytes = (nfloats * sizeof(float) + 4095) & ~(size_t)4095;
	if (bytes >= HUGE_BYTES) {
		bytes = (bytes + HUGE_BYTES - 1) & ~(HUGE_BYTES - 1);
		b->p[which] = aligned_alloc(HUGE_BYTES, bytes);
		if (b->p[which] != NULL)
			(void)madvise(b->p[which], bytes, MADV_HUGEPAGE);
	} else
		b->p[which] = aligned_alloc(4096, bytes);
	b->cap[which] = b->p[which] ? bytes / sizeof(float) : 0;
	return b->p[which];
}

static float *
tlbuf(int which, size_t nfloats)
{
	return aoe_sgemm_tlbuf(which, nfloats);
}

float *
aoe_stage_buf(const float *dst, int64_t len)
{
	float *p = aoe_sgemm_tlbuf(4, (size_t)len + 16);

	return p ? p + ((uintptr_t)dst & 63) / sizeof(float) : NULL;
}

void
aoe_stage_put(float *dst, const float *src, int64_t len)
{
	int64_t i = 0, head = (int64_t)(-(uintptr_t)dst & 63) / 4;

	if (head > len)
		head = len;
	memcpy(dst, src, sizeof(float) * (size_t)head);
	for (i = head; i + 16 <= len; i += 16) {
		_mm256_stream_ps(dst + i, _mm256_load_ps(src + i));
		_mm256_stream_ps(dst + i + 8, _mm256_load_ps(src + i + 8));
	}
	memcpy(dst + i, src + i, sizeof(float) * (size_t)(len - i));
	_mm_sfence();
}

/* The depth of the k blocks: kc balanced so that no block is tiny. */
static int64_t
kc_balanced(int64_t k, int64_t kc)
{
	return ceildiv(k, ceildiv(k, kc));
}

/* Write an edge tile t (mr x nr, alpha applied) into c: c = t + beta c. */
static void
edge_store(const float *t, int nr, float *c, int64_t ldc, int64_t rows,
    int64_t cols, float beta)
{
	int64_t r, q;

	for (r = 0; r < rows; r++, c += ldc, t += nr)
		if (beta == 0)
			memcpy(c, t, sizeof(float) * cols);
		else
			for (q = 0; q < cols; q++)
				c[q] = t[q] + beta * c[q];
}

/*
 * The last strip of a B panel when it is one to four columns wide (a 7x7
 * output's 49 columns leave one past three strips of 16, or of 24; a
 * 14x14 one's 196 leave four): C's rows go in the vectors' lanes, an A
 * strip's rows (or eight rows of A read in place) to a vector, and each
 * of the strip's columns is a broadcast.  The edge kernels above would
 * spend a tile of mr rows by 8 columns on them, six chains of FMAs that
 * their latency bounds: under AOE_MAX_ISA=avx2 on a Zen 5 the one column
 * past 48 cost what a strip of 16 did (400>400 @7 by algo 1, bench/convb
 * warm, 1 thread: 151 us, 130 by col_edge; 96>576 @14, four columns past
 * 192, 183 and 179).
 *
 * ce_blk: P groups of rows, each at a[s] + p*astep for k step p (8
 * floats whole, or under mask m for the last group when MASKED: only a
 * block's last group can end a buffer), times NC columns at b + p*ldb.
 * The sums go to out[s*NC + j].
 */
#define CE_MAXN 4
#define CE_MAXP 8

/*
 * The accumulators are named variables under constant conditions, as in
 * ukr_gen: an array of them stayed in memory, stored at every k step.
 */
#define CE_F(s, j)							\
	if (NC > j)							\
		c##s##j = _mm256_fmadd_ps(av, b##j, c##s##j)
#define CE_ROW(s)							\
	if (P > s) {							\
		av = MASKED && s == P - 1 ?				\
		    _mm256_maskload_ps(a##s + o, m) :			\
		    _mm256_loadu_ps(a##s + o);				\
		CE_F(s, 0); CE_F(s, 1); CE_F(s, 2); CE_F(s, 3);		\
	}
#define CE_OUT(s)							\
	if (P > s) {							\
		out[s * NC] = c##s##0;					\
		if (NC > 1)						\
			out[s * NC + 1] = c##s##1;			\
		if (NC > 2)						\
			out[s * NC + 2] = c##s##2;			\
		if (NC > 3)						\
			out[s * NC + 3] = c##s##3;			\
	}
#define CE_DECL(s)							\
	const float *a##s = P > s ? a[s] : NULL;			\
	__m256 c##s##0 = z, c##s##1 = z, c##s##2 = z, c##s##3 = z

static inline __attribute__((always_inline)) void
ce_blk(const int NC, const int P, const int MASKED, int64_t kc,
    const float *const *a, int64_t astep, __m256i m, const float *b,
    int64_t ldb, __m256 *out)
{
	const __m256 z = _mm256_setzero_ps();
	__m256 b0 = z, b1 = z, b2 = z, b3 = z, av;
	int64_t p, o;
	CE_DECL(0); CE_DECL(1); CE_DECL(2); CE_DECL(3);
	CE_DECL(4); CE_DECL(5); CE_DECL(6); CE_DECL(7);

	for (p = 0, o = 0; p < kc; p++, o += astep, b += ldb) {
		b0 = _mm256_broadcast_ss(b);
		if (NC > 1)
			b1 = _mm256_broadcast_ss(b + 1);
		if (NC > 2)
			b2 = _mm256_broadcast_ss(b + 2);
		if (NC > 3)
			b3 = _mm256_broadcast_ss(b + 3);
		CE_ROW(0) CE_ROW(1) CE_ROW(2) CE_ROW(3)
		CE_ROW(4) CE_ROW(5) CE_ROW(6) CE_ROW(7)
	}
	CE_OUT(0) CE_OUT(1) CE_OUT(2) CE_OUT(3)
	CE_OUT(4) CE_OUT(5) CE_OUT(6) CE_OUT(7)
}

typedef void ce_fn(int64_t, const float *const *, int64_t, __m256i,
    const float *, int64_t, __m256 *);

#define CE(nc, pp)							\
static void								\
ce_##nc##_##pp(int64_t kc, const float *const *a, int64_t astep,	\
    __m256i m, const float *b, int64_t ldb, __m256 *out)		\
{									\
	ce_blk(nc, pp, 0, kc, a, astep, m, b, ldb, out);		\
}									\
static void								\
ce_##nc##_##pp##m(int64_t kc, const float *const *a, int64_t astep,	\
    __m256i m, const float *b, int64_t ldb, __m256 *out)		\
{									\
	ce_blk(nc, pp, 1, kc, a, astep, m, b, ldb, out);		\
}

/*
 * Groups a block, by column count: eight chains of FMAs or more, twelve
 * accumulators at most (the broadcasts and a load beside them in sixteen
 * registers).
 */
static const int ce_groups[CE_MAXN + 1] = { 0, 8, 6, 4, 2 };

CE(1, 1) CE(1, 2) CE(1, 3) CE(1, 4) CE(1, 5) CE(1, 6) CE(1, 7) CE(1, 8)
CE(2, 1) CE(2, 2) CE(2, 3) CE(2, 4) CE(2, 5) CE(2, 6)
CE(3, 1) CE(3, 2) CE(3, 3) CE(3, 4)
CE(4, 1) CE(4, 2)

/* By columns and groups, unmasked [0] and masked [1]. */
static ce_fn *const ce_tab[2][CE_MAXN + 1][CE_MAXP + 1] = {
	{ { NULL },
	  { NULL, ce_1_1, ce_1_2, ce_1_3, ce_1_4, ce_1_5, ce_1_6, ce_1_7,
	    ce_1_8 },
	  { NULL, ce_2_1, ce_2_2, ce_2_3, ce_2_4, ce_2_5, ce_2_6 },
	  { NULL, ce_3_1, ce_3_2, ce_3_3, ce_3_4 },
	  { NULL, ce_4_1, ce_4_2 } },
	{ { NULL },
	  { NULL, ce_1_1m, ce_1_2m, ce_1_3m, ce_1_4m, ce_1_5m, ce_1_6m,
	    ce_1_7m, ce_1_8m },
	  { NULL, ce_2_1m, ce_2_2m, ce_2_3m, ce_2_4m, ce_2_5m, ce_2_6m },
	  { NULL, ce_3_1m, ce_3_2m, ce_3_3m, ce_3_4m },
	  { NULL, ce_4_1m, ce_4_2m } },
};

/*
 * C[0..mc)[0..ncols) = alpha A~ B~ + bias + beta C for the narrow last
 * strip b (k step p at b + p*ldb), ncols at most CE_MAXN: A~ is packed
 * in strips of mr rows (as 0; the last strip as tall as the rows left,
 * pack_a) or read in place (as > 0: row r of k step p at a + p*as + r).
 */
static void
col_edge(int64_t mc, int64_t mr, int64_t kc, const float *a, int64_t as,
    const float *b, int64_t ldb, int ncols, float *c, int64_t ldc,
    float alpha, float beta, const float *bias)
{
	__m256 out[CE_MAXP * CE_MAXN];
	const float *ga[CE_MAXP];
	float v[8] __attribute__((aligned(32)));
	/*
	 * Rows a group and the floats from one group to the next: an A
	 * strip's, or eight read in place.
	 */
	const int64_t gh = as > 0 ? 8 : mr, gs = as > 0 ? 8 : mr * kc;
	const int64_t ng = (mc + gh - 1) / gh;
	int64_t g0, g, r, h, astep;
	int np, s, j;

	for (g0 = 0; g0 < ng; g0 += np) {
		np = (int)min64(ce_groups[ncols], ng - g0);
		/*
		 * A block's groups share one step: a packed A's last, short
		 * strip (its rows its step) is a block of its own.
		 */
		if (as == 0 && mc % mr != 0 && g0 + np == ng && np > 1)
			np--;
		h = min64(gh, mc - (g0 + np - 1) * gh);
		astep = as > 0 ? as : h;
		for (s = 0; s < np; s++)
			ga[s] = a + (g0 + s) * gs;
		/* The buffer's last group is read under a mask. */
		ce_tab[g0 + np == ng][ncols][np](kc, ga, astep,
		    aoe_lane_mask((int)h), b, ldb, out);
		for (s = 0; s < np; s++) {
			g = g0 + s;
			h = min64(gh, mc - g * gh);
			for (j = 0; j < ncols; j++) {
				_mm256_store_ps(v, out[s * ncols + j]);
				for (r = 0; r < h; r++) {
					float *cp = c + (g * gh + r) * ldc + j;
					float t = alpha * v[r] + (bias ?
					    bias[g * gh + r] : 0);
					*cp = beta != 0 ? t + beta * *cp : t;
				}
			}
		}
	}
}

/*
 * One or two rows of C past an A block's last whole strip (a 7x7 output
 * turned round, algo 6, has 49 rows: eight strips of 6 and one row), over
 * the panel's whole B strips together: the rows broadcast, up to twelve
 * vectors of B's strips a k step.  The 1- and 2-row edge kernels above
 * keep two or four FMA chains a tile, bound by their latency.  Under
 * AOE_MAX_ISA=avx2 on a Zen 5, 400>400 @7 by algo 6 (bench/convb warm):
 * 128.1 to 125.0 us at 1 thread, 74.1-74.8 to 69.7-69.8 at 2.
 *
 * re_blk: R rows of A at a + q*astep + r (k step q), S strips of NV
 * vectors at b + s*bstep + p*ldb + 8*v; the sums go to
 * out[(r*S + s)*NV + v].
 */
#define RE_MAXR 2

#define RE_VV(s, v)							\
	do {								\
		bv = _mm256_loadu_ps(b##s + o + 8 * v);			\
		c0##s##v = _mm256_fmadd_ps(a0, bv, c0##s##v);		\
		if (R > 1)						\
			c1##s##v = _mm256_fmadd_ps(a1, bv, c1##s##v);	\
	} while (0)
#define RE_S(s)								\
	if (S > s) {							\
		RE_VV(s, 0);						\
		RE_VV(s, 1);						\
		if (NV > 2)						\
			RE_VV(s, 2);					\
	}
#define RE_OUT1(r, s, v)						\
	out[((r) * S + (s)) * NV + (v)] = c##r##s##v
#define RE_OUT(s)							\
	if (S > s) {							\
		RE_OUT1(0, s, 0); RE_OUT1(0, s, 1);			\
		if (NV > 2)						\
			RE_OUT1(0, s, 2);				\
		if (R > 1) {						\
			RE_OUT1(1, s, 0); RE_OUT1(1, s, 1);		\
			if (NV > 2)					\
				RE_OUT1(1, s, 2);			\
		}							\
	}
#define RE_DECL(s)							\
	const float *b##s = S > s ? b + s * bstep : NULL;		\
	__m256 c0##s##0 = z, c0##s##1 = z, c0##s##2 = z;		\
	__m256 c1##s##0 = z, c1##s##1 = z, c1##s##2 = z

static inline __attribute__((always_inline)) void
re_blk(const int R, const int NV, const int S, int64_t kc, const float *a,
    int64_t astep, const float *b, int64_t bstep, int64_t ldb, __m256 *out)
{
	const __m256 z = _mm256_setzero_ps();
	__m256 a0, a1 = z, bv;
	int64_t p, o, q;
	RE_DECL(0); RE_DECL(1); RE_DECL(2); RE_DECL(3); RE_DECL(4);
	RE_DECL(5);

	for (p = 0, o = 0, q = 0; p < kc; p++, o += ldb, q += astep) {
		a0 = _mm256_broadcast_ss(a + q);
		if (R > 1)
			a1 = _mm256_broadcast_ss(a + q + 1);
		RE_S(0) RE_S(1) RE_S(2) RE_S(3) RE_S(4) RE_S(5)
	}
	RE_OUT(0) RE_OUT(1) RE_OUT(2) RE_OUT(3) RE_OUT(4) RE_OUT(5)
}

typedef void re_fn(int64_t, const float *, int64_t, const float *, int64_t,
    int64_t, __m256 *);

#define RE(r, nv, s)							\
static void								\
re_##r##_##nv##_##s(int64_t kc, const float *a, int64_t astep,		\
    const float *b, int64_t bstep, int64_t ldb, __m256 *out)		\
{									\
	re_blk(r, nv, s, kc, a, astep, b, bstep, ldb, out);		\
}

RE(1, 2, 1) RE(1, 2, 2) RE(1, 2, 3) RE(1, 2, 4) RE(1, 2, 5) RE(1, 2, 6)
RE(1, 3, 1) RE(1, 3, 2) RE(1, 3, 3) RE(1, 3, 4)
RE(2, 2, 1) RE(2, 2, 2) RE(2, 2, 3)
RE(2, 3, 1) RE(2, 3, 2)

/* By rows, vectors a strip (2: 16 columns, 3: 24) and strips. */
static re_fn *const re_tab[RE_MAXR + 1][4][7] = {
	[1][2] = { NULL, re_1_2_1, re_1_2_2, re_1_2_3, re_1_2_4, re_1_2_5,
	    re_1_2_6 },
	[1][3] = { NULL, re_1_3_1, re_1_3_2, re_1_3_3, re_1_3_4 },
	[2][2] = { NULL, re_2_2_1, re_2_2_2, re_2_2_3 },
	[2][3] = { NULL, re_2_3_1, re_2_3_2 },
};

/*
 * C[row0..row0+R)[0..ncols) = alpha A~ B~ + bias + beta C for R (1 or 2)
 * rows past the block's whole A strips and its first ncols columns,
 * whole B strips nr wide (column j's strip at b + j*bstep, as
 * macro_kernel has them; k step p at + p*ldb):
 * A~'s rows as pack_a leaves a last, short strip (as 0) or in place.
 */
static void
row_edge(int64_t row0, int R, int64_t nr, int64_t kc, const float *a,
    int64_t as, const float *b, int64_t bstep, int64_t ldb, int64_t ncols,
    float *c, int64_t ldc, float alpha, float beta, const float *bias)
{
	__m256 out[12];
	const int nv = (int)(nr / 8), smax = 12 / (R * nv);
	const float *ar = as > 0 ? a + row0 : a + row0 * kc;
	const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
	int64_t j, ns;
	int r, s, v;

	for (j = 0; j < ncols; j += ns * nr) {
		ns = min64(smax, (ncols - j) / nr);
		re_tab[R][nv][ns](kc, ar, as > 0 ? as : R, b + j * bstep,
		    nr * bstep, ldb, out);
		for (r = 0; r < R; r++) {
			const __m256 bi = _mm256_set1_ps(bias ? bias[row0 + r] :
			    0);
			for (s = 0; s < ns; s++)
				for (v = 0; v < nv; v++) {
					float *cp = c + (row0 + r) * ldc + j +
					    s * nr + 8 * v;
					__m256 t = _mm256_fmadd_ps(va,
					    out[(r * ns + s) * nv + v], bi);
					if (beta != 0)
						t = _mm256_fmadd_ps(vb,
						    _mm256_loadu_ps(cp), t);
					_mm256_storeu_ps(cp, t);
				}
		}
	}
}

/*
 * The whole tiles down one B strip, ns of them, by one call: tile i reads
 * A strip i (astr floats on) and writes C's rows i*MR on, as the kernel
 * of its shape called for each would (pfw: each tile's lines asked for
 * for writing first, as macro_kernel does).  A call's fixed costs (its
 * arguments, the C prefetches, the epilogue's set-up) are a large share
 * of a tile's time when k is shallow: AOE_MAX_ISA=avx2, Zen 5, 1 thread,
 * bench/convb warm, a call a tile against a run, us: 16>96 @112 437.6
 * to 410.2 (4x24: 410.6 to 371.4), 24>144 @56 208.6 to 200.4 (203.9 to
 * 192.0), 32>32 @56 63.0 to 60.1, 64>384 @14 85.9 to 83.8.
 */
#define UKR_RUN(mr, nv)							\
static void								\
ukr_run_##mr##x##nv(int64_t ns, int64_t kc, const float *a, int64_t astr,\
    const float *b, int64_t ldb, float *c, int64_t ldc, float alpha,	\
    float beta, const float *bias, const float *pf, const float *d,	\
    const kepi *cl, int64_t apf, int64_t as, int pfw)			\
{									\
	int64_t i;							\
									\
	for (i = 0; i < ns; i++, pf = b) {				\
		float *ct = c + i * mr * ldc;				\
		if (pfw)						\
			pfw_tile(ct, ldc, mr, nv * 8);			\
		ukr_gen(mr, nv, kc, a + i * astr, b, ldb, ct, ldc, alpha,	\
		    beta, bias ? bias + i * mr : NULL, pf, d ? d + i * mr *	\
		    ldc : NULL, cl, apf, as);				\
	}								\
}

UKR_RUN(6, 2) UKR_RUN(4, 3)

/*
 * The macro-kernel: C[0..mc)[0..nc) (+)= A~ B~ for one packed A block and
 * one B panel.  B strip jr starts at bpanel + jr*bstep and advances by
 * bld per k step; a strip narrower than nr is at btail (packed) when
 * btail is set.  Edge tiles use the kernel of their size.  A is packed
 * (as 0) or read in place (as > 0), as in macro_kernel512.
 */
static void
macro_kernel(const aoe_gemm_ex *x, const blocking *bk, int64_t mc,
    int64_t nc, int64_t kc, const float *apanel, int64_t as,
    const float *bpanel, int64_t bstep, int64_t bld, const float *btail,
    float *c, const float *bias, float beta, int last)
{
	float tile[MR_MAX * NR_MAX] __attribute__((aligned(64)));
	kepi cl;
	const int inreg = last && epi_inreg(x), pfw = aoe_cpf_on(bk->cpf);
	int64_t mr = bk->mr, nr = bk->nr, jr, ir;
	/*
	 * One or two rows past the whole A strips go by row_edge, over the
	 * whole B strips together, after the loop.
	 */
	const int64_t mre = mc > mr && mc % mr <= RE_MAXR ? mc % mr : 0;
	const int64_t nfull = nc / nr * nr;
	const float *bp, *pf;
	ukr_fn *f;

	epi_cl(x, &cl);
	for (jr = 0; jr < nc; jr += nr) {
		int64_t ncols = min64(nr, nc - jr), ld = bld;
		int64_t mend = jr < nfull ? mc - mre : mc;
		int nv = (int)ceildiv(ncols, 8);

		epi_col(x, &cl, c + jr);
		if (ncols < nr && btail != NULL) {
			bp = btail;
			ld = nr;
		} else
			bp = bpanel + jr * bstep;
		if (ncols <= CE_MAXN && ncols < nr) {
			col_edge(mc, mr, kc, apanel, as, bp, ld, (int)ncols,
			    c + jr, x->ldc, x->alpha, beta, bias);
			if (last)
				epi_tile(x, c + jr, mc, ncols);
			continue;
		}
		/*
		 * The first kernel on a strip also prefetches the next strip
		 * (the same rows when B is read in place), which is its first
		 * use from far away.
		 */
		pf = jr + nr < nc && (jr + 2 * nr <= nc || btail == NULL) ?
		    bpanel + (jr + nr) * bstep : bp;
		ir = 0;
		if (ncols == nr && mend >= mr && ((mr == 6 && nr == 16) ||
		    (mr == 4 && nr == 24))) {
			int64_t ns = mend / mr;
			float *cp = c + jr;

			(mr == 6 ? ukr_run_6x2 : ukr_run_4x3)(ns, kc, apanel,
			    as > 0 ? mr : mr * kc, bp, ld, cp, x->ldc,
			    x->alpha, beta, bias, pf, inreg && x->add ?
			    x->add + (cp - x->c) : NULL, inreg ? &cl : NULL,
			    jr == 0 && as == 0 ? bk->apf : 0, as, pfw);
			if (last && !inreg)
				epi_tile(x, cp, ns * mr, ncols);
			ir = ns * mr;
			pf = bp;
		}
		for (; ir < mend; ir += mr, pf = bp) {
			int64_t nrows = min64(mr, mc - ir);
			float *cp = c + ir * x->ldc + jr;
			const float *bi = bias ? bias + ir : NULL;
			const float *ap = apanel + (as > 0 ? ir : ir * kc);
			const int64_t apf = jr == 0 && as == 0 ? bk->apf : 0;

			f = ukr_tab[nrows][nv];
			if (pfw)
				pfw_tile(cp, x->ldc, nrows, ncols);
			if (ncols == nv * 8) {
				f(kc, ap, bp, ld, cp, x->ldc, x->alpha, beta,
				    bi, pf, inreg && x->add ? x->add + (cp -
				    x->c) : NULL, inreg ? &cl : NULL, apf, as);
				if (last && !inreg)
					epi_tile(x, cp, nrows, ncols);
				continue;
			}
			f(kc, ap, bp, ld, tile, NR_MAX, x->alpha, 0, bi, pf,
			    NULL, NULL, apf, as);
			edge_store(tile, NR_MAX, cp, x->ldc, nrows, ncols,
			    beta);
			if (last)
				epi_tile(x, cp, nrows, ncols);
		}
	}
	if (mre > 0 && nfull > 0) {
		row_edge(mc - mre, (int)mre, nr, kc, apanel, as, bpanel, bstep,
		    bld, nfull, c, x->ldc, x->alpha, beta, bias);
		if (last)
			epi_tile(x, c + (mc - mre) * x->ldc, mre, nfull);
	}
}

/*
 * Whether rows ld floats apart spread over a cache's sets: a stride of
 * many 64-byte lines with a power-of-two factor above maxg maps a strip's
 * rows to a few sets, which then thrash.  B is read in place only with
 * maxg 16 (the 1024-set L2), a transposed A with 4 (the 64-set L1).
 */
static int
stride_ok(int64_t ld, int64_t maxg)
{
	int64_t lines, g = 1;

	if ((ld * 4) % 64 != 0)
		return 1;
	lines = ld * 4 / 64;
	while (g <= maxg && lines % (2 * g) == 0)
		g *= 2;
	return g <= maxg;
}

/*
 * Whether A, transposed, is read in place (knob packa: -1 auto, 0 in
 * place, 1 packed).  Auto: at most 256 rows (its columns short, so that
 * a strip of rows and its depth stay within L1) and a stride that
 * spreads over L1's sets.
 */
static int
a_inplace(const aoe_gemm_ex *x, const blocking *bk)
{
	if (!x->transa || bk->packa == 1)
		return 0;
	if (bk->packa == 0)
		return 1;
	return x->m <= 256 && stride_ok(x->lda, 4);
}

/*
 * One thread's share: rows [i0, i1) and columns [j0, j1) of C, both
 * starting on strip boundaries.  Returns -1 when the packing buffers
 * cannot be had.
 */
static int
gemm_range(const aoe_gemm_ex *x, const blocking *bk, int64_t i0, int64_t i1,
    int64_t j0, int64_t j1)
{
	int64_t mr = bk->mr, nr = bk->nr;
	int64_t jc, pc, ic, nc, kc, mc, nb, mb, NC, KC, MC, mpad, npad;
	float *abuf = NULL, *bbuf = NULL;
	const float *ap, *bp, *btail;
	int inplace, pu, ain;

	if (i0 >= i1 || j0 >= j1)
		return 0;
	nb = ceildiv(j1 - j0, bk->nc);
	NC = ceildiv(ceildiv(j1 - j0, nb), nr) * nr;
	KC = kc_balanced(x->k, bk->kc);
	mb = ceildiv(i1 - i0, bk->mc);
	MC = ceildiv(ceildiv(i1 - i0, mb), mr) * mr;
	mpad = ceildiv(x->m, mr) * mr;
	npad = ceildiv(x->n, nr) * nr;
	/*
	 * B is read in place (no packing) when it is stored k-major and each
	 * of its panels meets only one block of A, so that packing would
	 * not be repaid.
	 */
	inplace = x->bpack == NULL && x->packb == NULL && !x->transb &&
	    (bk->packb == 0 || (bk->packb < 0 && mb == 1 &&
	    stride_ok(x->ldb, 16)));
	/*
	 * B is packed in nr-wide strips, but a caller's packer (Conv's
	 * implicit im2col) packs 16-wide ones for the AVX-512 shapes, which
	 * then read their vectors from side-by-side strips.
	 */
	pu = bk->wide && x->packb != NULL ? 16 : (int)nr;
	/*
	 * A transposed (its rows contiguous down each column) is read in
	 * place where it suits the kernels (a_inplace): packing it costs
	 * as much as using it when its columns are short, as Y^T's (output
	 * positions), and at more than one thread every thread packed it
	 * all.
	 */
	ain = x->apack == NULL && a_inplace(x, bk);
	if (x->apack == NULL && !ain &&
	    (abuf = tlbuf(0, (size_t)(MC * KC))) == NULL)
		return -1;
	if (x->bpack == NULL && (bbuf = tlbuf(1,
	    (size_t)((inplace ? nr : NC) * KC))) == NULL)
		return -1;
	for (jc = j0; jc < j1; jc += NC) {
		nc = min64(NC, j1 - jc);
		for (pc = 0; pc < x->k; pc += KC) {
			kc = min64(KC, x->k - pc);
			btail = NULL;
			if (x->bpack != NULL) {
				bp = x->bpack + pc * npad + jc * kc;
			} else if (inplace) {
				bp = x->b + pc * x->ldb + jc;
				if (nc % nr) {
					pack_b(x, pc, kc, jc + nc / nr * nr,
					    nc % nr, pu, bbuf);
					btail = bbuf;
				}
			} else {
				if (x->packb)
					x->packb(x, pc, kc, jc, nc, pu, bbuf);
				else
					pack_b(x, pc, kc, jc, nc, pu, bbuf);
				bp = bbuf;
			}
			for (ic = i0; ic < i1; ic += MC) {
				mc = min64(MC, i1 - ic);
				if (x->apack != NULL)
					ap = x->apack + pc * mpad + ic * kc;
				else if (ain)
					ap = x->a + pc * x->lda + ic;
				else {
					pack_a(x, ic, mc, pc, kc, (int)mr,
					    abuf);
					ap = abuf;
				}
				if (bk->wide)
					macro_kernel512(x, bk, mc, nc, kc, ap,
					    ain ? x->lda : 0,
					    bp, inplace ? 1 : kc,
					    inplace ? x->ldb : pu,
					    inplace || pu > 16 ? 16 : 16 * kc,
					    btail, pu, pu > 16 ? 16 : 16 * kc,
					    x->c + ic * x->ldc + jc,
					    pc == 0 && x->bias ? x->bias + ic :
					    NULL, pc == 0 ? x->beta : 1.0f,
					    x->epi && pc + kc == x->k);
				else
					macro_kernel(x, bk, mc, nc, kc, ap,
					    ain ? x->lda : 0, bp,
					    inplace ? 1 : kc,
					    inplace ? x->ldb : nr, btail,
					    x->c + ic * x->ldc + jc,
					    pc == 0 && x->bias ? x->bias + ic :
					    NULL, pc == 0 ? x->beta : 1.0f,
					    x->epi && pc + kc == x->k);
			}
		}
	}
	return 0;
}

struct gemv_ctx {
	int64_t ny, k, ld, incy, nch;
	const float *mat, *xv, *bias;
	float *y, alpha, beta;
};

/* Rows [lo, hi) of y by dot products with the rows of M. */
static void
gemv_dot_chunk(void *arg, int64_t c, int tid)
{
	const struct gemv_ctx *g = arg;
	int64_t i, lo = aoe_chunk_lo(g->ny, g->nch, c);
	int64_t hi = aoe_chunk_lo(g->ny, g->nch, c + 1), k = g->k;
	const float *xv = g->xv;

	for (i = lo; i < hi; i++) {
		const float *row = g->mat + i * g->ld;
		__m256 s0 = _mm256_setzero_ps(), s1 = s0;
		float s;
		int64_t q;

		for (q = 0; q + 16 <= k; q += 16) {
			s0 = _mm256_fmadd_ps(_mm256_loadu_ps(row + q),
			    _mm256_loadu_ps(xv + q), s0);
			s1 = _mm256_fmadd_ps(_mm256_loadu_ps(row + q + 8),
			    _mm256_loadu_ps(xv + q + 8), s1);
		}
		s0 = _mm256_add_ps(s0, s1);
		__m128 h = _mm_add_ps(_mm256_castps256_ps128(s0),
		    _mm256_extractf128_ps(s0, 1));
		h = _mm_add_ps(h, _mm_movehl_ps(h, h));
		h = _mm_add_ss(h, _mm_movehdup_ps(h));
		s = _mm_cvtss_f32(h);
		for (; q < k; q++)
			s += row[q] * xv[q];
		s *= g->alpha;
		if (g->bias)
			s += g->bias[i];
		if (g->beta != 0)
			s += g->beta * g->y[i * g->incy];
		g->y[i * g->incy] = s;
	}
}

/* One 2048-row piece of y, a column of M at a time (kept in cache). */
static void
gemv_col_chunk(void *arg, int64_t ch, int tid)
{
	const struct gemv_ctx *g = arg;
	float acc[2048];
	int64_t i, p, lo = ch * 2048, len = min64(2048, g->ny - lo);

	memset(acc, 0, sizeof(float) * len);
	for (p = 0; p < g->k; p++) {
		const float *col = g->mat + p * g->ld + lo;
		float xp = g->xv[p];
		for (i = 0; i < len; i++)
			acc[i] += xp * col[i];
	}
	for (i = 0; i < len; i++) {
		float s = g->alpha * acc[i];
		if (g->bias)
			s += g->bias[lo + i];
		if (g->beta != 0)
			s += g->beta * g->y[(lo + i) * g->incy];
		g->y[(lo + i) * g->incy] = s;
	}
}

/*
 * Matrix-vector products (m == 1 or n == 1), where packing would cost
 * as much as the arithmetic.  y[i*incy] = alpha * sum_p M(i,p) x[p] +
 * beta y + bias[i], for i < ny, where M(i,p) = mat[i*ld + p] when dot,
 * else mat[p*ld + i].
 */
static void
gemv(int dot, int64_t ny, int64_t k, const float *mat, int64_t ld,
    const float *xv, float *y, int64_t incy, float alpha, float beta,
    const float *bias, int nthreads)
{
	struct gemv_ctx g = { ny, k, ld, incy, 1, mat, xv, bias, y, alpha,
	    beta };

	if (nthreads < 2 || ny * k <= 65536)
		nthreads = 1;
	if (dot) {
		g.nch = aoe_nchunks(ny, nthreads);
		aoe_parallel(nthreads, g.nch, gemv_dot_chunk, &g);
	} else
		aoe_parallel(nthreads, ceildiv(ny, 2048), gemv_col_chunk, &g);
}

/* One tile of the thread grid of a GEMM. */
struct tile_ctx {
	const aoe_gemm_ex *x;
	const struct blocking *bk;
	int tm, tn;
	int64_t pm, pn;		/* micro-panels of rows and columns */
	int fail;
	/*
	 * A grid of one row or one column: the micro-tiles cut by the
	 * threads' speeds (aoe_pool_cut), else NULL.  The tiles are
	 * numbered down each column strip in turn (tm == 1) or along each
	 * row strip (tn == 1), so that a cut may fall inside a strip: 25
	 * column strips shared by two threads as 13 and 12 made one
	 * thread's part 4 % longer than half (a 400 > 400 pointwise Conv at
	 * 7x7, algo 6).
	 */
	const int64_t *cut;
};

/* Rows [i0, i1) and columns [j0, j1) of C, then the done callback. */
static void
tile_rect(struct tile_ctx *tc, int64_t i0, int64_t i1, int64_t j0,
    int64_t j1)
{
	i1 = min64(tc->x->m, i1);
	j1 = min64(tc->x->n, j1);
	if (i0 >= i1 || j0 >= j1)
		return;
	if (gemm_range(tc->x, tc->bk, i0, i1, j0, j1) < 0)
		__atomic_store_n(&tc->fail, 1, __ATOMIC_RELAXED);
	else if (tc->x->done)
		tc->x->done(tc->x, i0, i1, j0, j1);
}

/* Strips [s0, s1), tiles [t0, t1) of each: columns of C or rows. */
static void
strip_rect(struct tile_ctx *tc, int64_t s0, int64_t s1, int64_t t0,
    int64_t t1)
{
	const struct blocking *bk = tc->bk;

	if (tc->tm == 1)
		tile_rect(tc, t0 * bk->mr, t1 * bk->mr, s0 * bk->nr,
		    s1 * bk->nr);
	else
		tile_rect(tc, s0 * bk->mr, s1 * bk->mr, t0 * bk->nr,
		    t1 * bk->nr);
}

/*
 * Micro-tiles [u0, u1) in the order of tc->cut: the end of one strip,
 * whole strips, the start of another.
 */
static void
tile_units(struct tile_ctx *tc, int64_t u0, int64_t u1)
{
	int64_t across = tc->tm == 1 ? tc->pm : tc->pn;
	int64_t s0 = u0 / across, a = u0 % across;
	int64_t s1 = u1 / across, b = u1 % across;

	if (u0 >= u1)
		return;
	if (s0 == s1) {
		strip_rect(tc, s0, s0 + 1, a, b);
		return;
	}
	if (a > 0) {
		strip_rect(tc, s0, s0 + 1, a, across);
		s0++;
	}
	if (s0 < s1)
		strip_rect(tc, s0, s1, 0, across);
	if (b > 0)
		strip_rect(tc, s1, s1 + 1, 0, b);
}

static void
tile_chunk(void *arg, int64_t t, int tid)
{
	struct tile_ctx *tc = arg;
	const struct blocking *bk = tc->bk;
	int it = (int)(t / tc->tn), jt = (int)(t % tc->tn);

	if (tc->cut != NULL) {
		tile_units(tc, tc->cut[t], tc->cut[t + 1]);
		return;
	}
	tile_rect(tc, tc->pm * it / tc->tm * bk->mr,
	    tc->pm * (it + 1) / tc->tm * bk->mr,
	    tc->pn * jt / tc->tn * bk->nr,
	    tc->pn * (jt + 1) / tc->tn * bk->nr);
}

/* Choose the thread grid tm x tn for an m x n x k problem. */
static void
thread_grid(const blocking *bk, int64_t m, int64_t n, int64_t k,
    int nthreads, int par, int *tmp, int *tnp)
{
	int64_t pm = ceildiv(m, bk->mr), pn = ceildiv(n, bk->nr);
	double best = -1;
	int tm, tn;

	*tmp = 1;
	*tnp = nthreads;
	if (par == 1) {
		*tmp = nthreads;
		*tnp = 1;
		return;
	}
	if (par == 2)
		return;
	for (tm = 1; tm <= nthreads; tm++) {
		if (nthreads % tm)
			continue;
		tn = nthreads / tm;
		/* Cycles: tiles at mr*nr*k/16 FMAs, plus packing. */
		int64_t rows = ceildiv(pm, tm) * bk->mr;
		int64_t cols = ceildiv(pn, tn) * bk->nr;
		double cost = (double)ceildiv(pm, tm) * ceildiv(pn, tn) *
		    bk->mr * bk->nr * k / 16.0 +
		    (double)rows * k * ceildiv(cols, bk->nc) + (double)cols * k;
		if (best < 0 || cost < best) {
			best = cost;
			*tmp = tm;
			*tnp = tn;
		}
	}
}

/*
 * The blocking a schedule asks for, with defaults and sane bounds.  A
 * shape that does not exist, or needs AVX-512 where it cannot run (a
 * bank entry from elsewhere), falls back to the default.
 */
static void
get_blocking(const aoe_sched *s, blocking *bk)
{
	int i = shape_index(aoe_sched_get(s, "mr", DEF_MR),
	    aoe_sched_get(s, "nr", DEF_NR));

	if (i < 0 || (ukshapes[i].wide && !aoe_cpu_avx512()))
		i = shape_index(DEF_MR, DEF_NR);
	bk->mr = ukshapes[i].mr;
	bk->nr = ukshapes[i].nr;
	bk->wide = ukshapes[i].wide;
	bk->mc = aoe_sched_get(s, "mc", DEF_MC);
	bk->kc = aoe_sched_get(s, "kc", DEF_KC);
	bk->nc = aoe_sched_get(s, "nc", DEF_NC);
	bk->packb = (int)aoe_sched_get(s, "packb", -1);
	bk->packa = (int)aoe_sched_get(s, "packa", -1);
	bk->apf = min64(max64(aoe_sched_get(s, "apf", DEF_APF), 0), 1 << 16);
	bk->cpf = (int)aoe_sched_get(s, "cpf", DEF_CPF);
	bk->mc = max64(bk->mr, min64(bk->mc, 1 << 16) / bk->mr * bk->mr);
	bk->kc = max64(8, min64(bk->kc, 1 << 16));
	bk->nc = max64(bk->nr, min64(bk->nc, 1 << 20) / bk->nr * bk->nr);
}

/*
 * Whole-operand packing, for an operand that does not change between
 * runs (weights): which is 0 for A (rows = m, A(i,p) = src[i*ld+p], or
 * src[p*ld+i] when trans) and 1 for B (rows = n, B(p,j) = src[p*ld+j], or
 * src[j*ld+p] when trans).  The layout depends on mr or nr and kc, so the
 * GEMM must run with the same schedule.  aoe_sgemm_packed_size() gives the
 * size in floats.
 */
/*
 * The layout of an operand packed for schedule s: a GEMM run with another
 * schedule whose layout differs ignores the packed copy.
 */
int64_t
aoe_sgemm_pack_id(int which, const aoe_sched *s)
{
	blocking bk;

	get_blocking(s, &bk);
	return ((int64_t)(which ? bk.nr : bk.mr) << 32) | bk.kc;
}

size_t
aoe_sgemm_packed_size(int which, int64_t rows, int64_t k,
    const aoe_sched *s)
{
	blocking bk;
	int64_t w;

	get_blocking(s, &bk);
	w = which ? bk.nr : bk.mr;
	return (size_t)(ceildiv(rows, w) * w * max64(k, 1));
}

void
aoe_sgemm_pack(int which, int trans, int64_t rows, int64_t k,
    const float *src, int64_t ld, float *dst, const aoe_sched *s)
{
	aoe_gemm_ex x;
	blocking bk;
	int64_t KC, pc, kc, w, pad;

	if (rows <= 0 || k <= 0)
		return;
	get_blocking(s, &bk);
	memset(&x, 0, sizeof(x));
	KC = kc_balanced(k, bk.kc);
	w = which ? bk.nr : bk.mr;
	pad = ceildiv(rows, w) * w;
	for (pc = 0; pc < k; pc += KC) {
		kc = min64(KC, k - pc);
		if (which == 0) {
			x.transa = trans;
			x.a = src;
			x.lda = ld;
			pack_a(&x, 0, rows, pc, kc, (int)w, dst + pc * pad);
		} else {
			x.transb = trans;
			x.b = src;
			x.ldb = ld;
			pack_b(&x, pc, kc, 0, rows, (int)w, dst + pc * pad);
		}
	}
}

int
aoe_sgemm_ex(const aoe_gemm_ex *xin, int nthreads, const aoe_sched *s)
{
	aoe_gemm_ex xs = *xin, *x = &xs;
	blocking bk;
	int64_t m = x->m, n = x->n, k = x->k, i, j;
	int tm, tn, par, fail = 0;

	if (m <= 0 || n <= 0)
		return 0;
	if (nthreads < 1)
		nthreads = 1;
	if (k <= 0 || x->alpha == 0) {
		/* C = beta C + bias. */
		for (i = 0; i < m; i++) {
			float *c = x->c + i * x->ldc;
			float b = x->bias ? x->bias[i] : 0;
			for (j = 0; j < n; j++)
				c[j] = (x->beta == 0 ? 0 : x->beta * c[j]) + b;
		}
		if (x->epi)
			epi_tile(x, x->c, m, n);
		if (x->done)
			x->done(x, 0, m, 0, n);
		return 0;
	}
	if (x->packb == NULL && (m == 1 || n == 1)) {
		float *xv = malloc(sizeof(float) * (size_t)k);
		int64_t p;

		if (xv == NULL)
			return aoe_err(AOE_ENOMEM, "sgemm: out of memory");
		if (m == 1) {
			for (p = 0; p < k; p++)
				xv[p] = x->a[x->transa ? p * x->lda : p];
			gemv(x->transb, n, k, x->b, x->ldb, xv, x->c, 1,
			    x->alpha, x->beta, NULL, nthreads);
			/* With m == 1 the bias is one value for the row. */
			if (x->bias)
				for (j = 0; j < n; j++)
					x->c[j] += x->bias[0];
		} else {
			for (p = 0; p < k; p++)
				xv[p] = x->b[x->transb ? p : p * x->ldb];
			gemv(!x->transa, m, k, x->a, x->lda, xv, x->c, x->ldc,
			    x->alpha, x->beta, x->bias, nthreads);
		}
		free(xv);
		/* The matrix-vector paths run the epilogue as a pass. */
		if (x->epi)
			epi_tile(x, x->c, m, n);
		if (x->done)
			x->done(x, 0, m, 0, n);
		return 0;
	}

	get_blocking(s, &bk);
	par = (int)aoe_sched_get(s, "par", 0);
	if (x->apack && x->apack_id != aoe_sgemm_pack_id(0, s))
		x->apack = NULL;
	if (x->bpack && x->bpack_id != aoe_sgemm_pack_id(1, s))
		x->bpack = NULL;

	/* Below ~1 MFLOP a second thread costs more than it gives. */
	if ((double)m * n * k < 262144.0)
		nthreads = 1;
	if (nthreads == 1) {
		if (gemm_range(x, &bk, 0, m, 0, n) < 0)
			return aoe_err(AOE_ENOMEM, "sgemm: out of memory");
		if (x->done)
			x->done(x, 0, m, 0, n);
		return 0;
	}

	thread_grid(&bk, m, n, k, nthreads, par, &tm, &tn);
	{
		struct tile_ctx tc = { x, &bk, tm, tn, ceildiv(m, bk.mr),
		    ceildiv(n, bk.nr), 0, NULL };
		int64_t cut[AOE_CUT_MAX + 1];

		if (nthreads <= AOE_CUT_MAX && (tm == 1 || tn == 1)) {
			aoe_pool_cut(tile_chunk, nthreads, tc.pm * tc.pn,
			    cut);
			tc.cut = cut;
		}
		aoe_parallel(nthreads, (int64_t)tm * tn, tile_chunk, &tc);
		fail = tc.fail;
	}
	return fail ? aoe_err(AOE_ENOMEM, "sgemm: out of memory") : 0;
}

int
aoe_sgemm(int transa, int transb, int64_t m, int64_t n, int64_t k,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    float beta, float *c, int64_t ldc, int nthreads, const aoe_sched *sched)
{
	aoe_gemm_ex x;

	memset(&x, 0, sizeof(x));
	x.transa = transa;
	x.transb = transb;
	x.m = m;
	x.n = n;
	x.k = k;
	x.alpha = alpha;
	x.beta = beta;
	x.a = a;
	x.lda = lda;
	x.b = b;
	x.ldb = ldb;
	x.c = c;
	x.ldc = ldc;
	return aoe_sgemm_ex(&x, nthreads, sched);
}

/*
 * The operators.
 */

/* Prepared state: the constant B operand packed for the schedule. */
typedef struct gemm_priv {
	float *bpack;
	int64_t id;		/* its aoe_sgemm_pack_id() */
} gemm_priv;

static void
gemm_priv_free(void *p)
{
	gemm_priv *q = p;

	if (q != NULL)
		free(q->bpack);
	free(q);
}

static int
need_f32(const aoe_node *n, const aoe_tensor *t)
{
	if (t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': an input is missing",
		    n->op_type, n->name);
	if (t->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' of type %s "
		    "not supported (float32 only)", n->op_type, n->name,
		    t->name, aoe_dtype_name(t->dtype));
	return 0;
}

/*
 * Pack a constant B (k x n, transposed when trans) into n->priv, when the
 * GEMM will go through packing (more than one row) and the copy is not
 * huge.
 */
static int
prepack_b(aoe_graph *g, aoe_node *n, const aoe_tensor *b, int trans,
    int64_t m, int64_t k, int64_t nn)
{
	gemm_priv *q;
	size_t sz;

	aoe_node_unprepare(n);
	if (b->kind != AOE_T_CONST || b->data == NULL || m <= 1 || nn <= 1 ||
	    k <= 0 || aoe_sched_get(&n->sched, "prepack", 1) == 0)
		return 0;
	sz = aoe_sgemm_packed_size(1, nn, k, &n->sched);
	if (sz > ((size_t)1 << 28) / sizeof(float))
		return 0;
	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (q->bpack = aligned_alloc(64, (sz * sizeof(float) + 63) &
	    ~(size_t)63)) == NULL) {
		free(q);
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	}
	aoe_sgemm_pack(1, trans, nn, k, b->data, trans ? k : nn, q->bpack,
	    &n->sched);
	q->id = aoe_sgemm_pack_id(1, &n->sched);
	n->priv = q;
	n->priv_free = gemm_priv_free;
	return 0;
}

void
aoe_sgemm_default_sched(aoe_sched *s)
{
	aoe_sched_set(s, "mr", DEF_MR);
	aoe_sched_set(s, "nr", DEF_NR);
	aoe_sched_set(s, "mc", DEF_MC);
	aoe_sched_set(s, "kc", DEF_KC);
	aoe_sched_set(s, "nc", DEF_NC);
	aoe_sched_set(s, "apf", DEF_APF);
	aoe_sched_set(s, "cpf", DEF_CPF);
}

void
aoe_gemm_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sgemm_default_sched(s);
	aoe_sched_set(s, "par", 0);
	aoe_sched_set(s, "packb", -1);
	aoe_sched_set(s, "prepack", 1);
}

/* Gemm: Y = alpha op(A) op(B) + beta C, C broadcast to (M, N). */
static int
gemm_dims(const aoe_graph *g, const aoe_node *n, int64_t *m, int64_t *k,
    int64_t *nn)
{
	const aoe_tensor *a = aoe_in(g, n, 0), *b = aoe_in(g, n, 1);
	int ta = aoe_attr_int(n, "transA", 0) != 0;
	int tb = aoe_attr_int(n, "transB", 0) != 0;
	int64_t k2;

	if (a == NULL || b == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': inputs A and B are "
		    "required", n->op_type, n->name);
	if (a->ndim != 2 || b->ndim != 2)
		return aoe_err(AOE_EDATA, "%s '%s': A and B must be 2-D, not "
		    "%d-D and %d-D", n->op_type, n->name, a->ndim, b->ndim);
	*m = ta ? a->dims[1] : a->dims[0];
	*k = ta ? a->dims[0] : a->dims[1];
	k2 = tb ? b->dims[1] : b->dims[0];
	*nn = tb ? b->dims[0] : b->dims[1];
	if (*k != k2)
		return aoe_err(AOE_EDATA, "%s '%s': inner dimensions differ "
		    "(%lld and %lld)", n->op_type, n->name, (long long)*k,
		    (long long)k2);
	return 0;
}

static int
gemm_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *c = aoe_in(g, n, 2);
	int64_t m, k, nn, dims[2];
	int rc, i;

	if (n->nin < 2 || n->nin > 3 || n->nout != 1)
		return aoe_err(AOE_EDATA, "%s '%s': expects 2 or 3 inputs and "
		    "1 output", n->op_type, n->name);
	if ((rc = gemm_dims(g, n, &m, &k, &nn)) < 0)
		return rc;
	if ((rc = need_f32(n, aoe_in(g, n, 0))) < 0 ||
	    (rc = need_f32(n, aoe_in(g, n, 1))) < 0)
		return rc;
	dims[0] = m;
	dims[1] = nn;
	if (c != NULL) {
		if ((rc = need_f32(n, c)) < 0)
			return rc;
		if (c->ndim > 2)
			return aoe_err(AOE_EDATA, "%s '%s': C has rank %d, at "
			    "most 2 allowed", n->op_type, n->name, c->ndim);
		for (i = 0; i < c->ndim; i++) {
			int64_t d = c->dims[c->ndim - 1 - i];
			if (d != 1 && d != dims[1 - i])
				return aoe_err(AOE_EDATA, "%s '%s': C does "
				    "not broadcast to %lldx%lld",
				    n->op_type, n->name, (long long)m,
				    (long long)nn);
		}
	}
	return aoe_set_output(g, n, 0, AOE_F32, 2, dims);
}

static int
gemm_prepare(aoe_graph *g, aoe_node *n)
{
	int64_t m, k, nn;
	int rc;

	if ((rc = gemm_dims(g, n, &m, &k, &nn)) < 0)
		return rc;
	return prepack_b(g, n, aoe_in(g, n, 1),
	    aoe_attr_int(n, "transB", 0) != 0, m, k, nn);
}

static int
gemm_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *a = aoe_in(g, n, 0), *b = aoe_in(g, n, 1);
	const aoe_tensor *c = aoe_in(g, n, 2);
	const gemm_priv *q = n->priv;
	float *y = aoe_out(g, n, 0)->data;
	float alpha = aoe_attr_float(n, "alpha", 1.0f);
	float beta = aoe_attr_float(n, "beta", 1.0f);
	aoe_gemm_ex x;
	aoe_act act;
	int64_t m, kk, nn, i, j;
	int rc;

	if ((rc = gemm_dims(g, n, &m, &kk, &nn)) < 0)
		return rc;
	if (c == NULL || aoe_tensor_numel(c) == 0)
		beta = 0;
	if (beta != 0) {
		/* Broadcast C into Y; the GEMM then scales it by beta. */
		const float *cd = c->data;
		int64_t cr = c->ndim == 2 ? c->dims[0] : 1;
		int64_t cc = c->ndim >= 1 ? c->dims[c->ndim - 1] : 1;
		for (i = 0; i < m; i++) {
			const float *row = cd + (cr == 1 ? 0 : i) * cc;
			float *yr = y + i * nn;
			if (cc == 1)
				for (j = 0; j < nn; j++)
					yr[j] = row[0];
			else
				memcpy(yr, row, sizeof(float) * nn);
		}
	}
	memset(&x, 0, sizeof(x));
	x.transa = aoe_attr_int(n, "transA", 0) != 0;
	x.transb = aoe_attr_int(n, "transB", 0) != 0;
	x.m = m;
	x.n = nn;
	x.k = kk;
	x.alpha = alpha;
	x.beta = beta;
	x.a = a->data;
	x.lda = a->dims[1];
	x.b = b->data;
	x.ldb = b->dims[1];
	x.c = y;
	x.ldc = nn;
	x.bpack = q ? q->bpack : NULL;
	x.bpack_id = q ? q->id : 0;
	/* An activation fused by subgraph tuning (lib/passes/fuse.c). */
	aoe_act_of(n, &act);
	x.epi = aoe_act_epi(&act, &x.e);
	return aoe_sgemm_ex(&x, k->nthreads, k->sched);
}

/*
 * MatMul, as numpy.matmul: a 1-D A is a row, a 1-D B a column (their unit
 * dimension dropped from the result), leading dimensions broadcast.
 */
typedef aoe_mm_shape mm_shape;

int
aoe_mm_shape_of(const aoe_graph *g, const aoe_node *n, const aoe_tensor *a,
    const aoe_tensor *b, mm_shape *s, int *ndim, int64_t *dims)
{
	int64_t k2, ba[AOE_MAXDIM], bb[AOE_MAXDIM], st;
	int na, nbb, i, rc;

	if (a == NULL || b == NULL || a->ndim < 1 || b->ndim < 1)
		return aoe_err(AOE_EDATA, "%s '%s': inputs must have rank 1 "
		    "or more", n->op_type, n->name);
	if (a->ndim == 1) {
		s->m = 1;
		s->k = a->dims[0];
		na = 0;
	} else {
		s->m = a->dims[a->ndim - 2];
		s->k = a->dims[a->ndim - 1];
		na = a->ndim - 2;
	}
	if (b->ndim == 1) {
		k2 = b->dims[0];
		s->n = 1;
		nbb = 0;
	} else {
		k2 = b->dims[b->ndim - 2];
		s->n = b->dims[b->ndim - 1];
		nbb = b->ndim - 2;
	}
	if (s->k != k2)
		return aoe_err(AOE_EDATA, "%s '%s': inner dimensions differ "
		    "(%lld and %lld)", n->op_type, n->name, (long long)s->k,
		    (long long)k2);
	memcpy(ba, a->dims, sizeof(int64_t) * na);
	memcpy(bb, b->dims, sizeof(int64_t) * nbb);
	if ((rc = aoe_broadcast_shape(na, ba, nbb, bb, &s->nb,
	    s->batch)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': batch dimensions do not "
		    "broadcast", n->op_type, n->name);
	/* Strides of each operand over the broadcast batch. */
	s->nbatch = 1;
	for (i = 0; i < s->nb; i++)
		s->nbatch *= s->batch[i];
	st = s->m * s->k;
	for (i = s->nb - 1; i >= 0; i--) {
		int j = i - (s->nb - na);
		s->sa[i] = j >= 0 && ba[j] != 1 ? st : 0;
		if (j >= 0)
			st *= ba[j];
	}
	st = s->k * s->n;
	for (i = s->nb - 1; i >= 0; i--) {
		int j = i - (s->nb - nbb);
		s->sb[i] = j >= 0 && bb[j] != 1 ? st : 0;
		if (j >= 0)
			st *= bb[j];
	}
	s->a_full = 1;
	s->b_single = 1;
	for (i = 0; i < s->nb; i++) {
		if (s->batch[i] != 1 && s->sa[i] == 0)
			s->a_full = 0;
		if (s->sb[i] != 0)
			s->b_single = 0;
	}
	if (ndim != NULL) {
		*ndim = s->nb;
		memcpy(dims, s->batch, sizeof(int64_t) * s->nb);
		if (a->ndim > 1)
			dims[(*ndim)++] = s->m;
		if (b->ndim > 1)
			dims[(*ndim)++] = s->n;
	}
	return 0;
}

static int
matmul_infer(aoe_graph *g, aoe_node *n)
{
	mm_shape s;
	int64_t dims[AOE_MAXDIM + 2];
	int ndim, rc;

	/* A third input is a bias lib/passes/fuse.c folded in (_aoe_bias). */
	if (n->nin != 2 + (aoe_fused_bias(g, n) != NULL) || n->nout != 1)
		return aoe_err(AOE_EDATA, "%s '%s': expects 2 inputs and 1 "
		    "output", n->op_type, n->name);
	if ((rc = need_f32(n, aoe_in(g, n, 0))) < 0 ||
	    (rc = need_f32(n, aoe_in(g, n, 1))) < 0)
		return rc;
	if ((rc = aoe_mm_shape_of(g, n, aoe_in(g, n, 0), aoe_in(g, n, 1), &s,
	    &ndim, dims)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, AOE_F32, ndim, dims);
}

static int
matmul_prepare(aoe_graph *g, aoe_node *n)
{
	mm_shape s;
	int rc;

	if ((rc = aoe_mm_shape_of(g, n, aoe_in(g, n, 0), aoe_in(g, n, 1), &s,
	    NULL, NULL)) < 0)
		return rc;
	/* Only the folded form (one B for every batch) uses a packed B. */
	if (!s.b_single || !s.a_full)
		return prepack_b(g, n, aoe_in(g, n, 1), 0, 0, s.k, s.n);
	return prepack_b(g, n, aoe_in(g, n, 1), 0, s.nbatch * s.m, s.k, s.n);
}

/* One batch entry t of a MatMul. */
static int
mm_one(const aoe_gemm_ex *x, const mm_shape *s, const float *a,
    const float *b, float *y, int64_t t, int nthreads, const aoe_sched *sc)
{
	aoe_gemm_ex xt = *x;
	int64_t oa = 0, ob = 0, rem = t;
	int i;

	for (i = s->nb - 1; i >= 0; i--) {
		int64_t idx = rem % s->batch[i];
		rem /= s->batch[i];
		oa += idx * s->sa[i];
		ob += idx * s->sb[i];
	}
	xt.a = a + oa;
	xt.b = b + ob;
	xt.c = y + t * s->m * s->n;
	return aoe_sgemm_ex(&xt, nthreads, sc);
}

/* One of many small GEMMs of a batched MatMul, on one thread. */
struct mm_ctx {
	const aoe_gemm_ex *x;
	const mm_shape *s;
	const float *a, *b;
	float *y;
	const aoe_sched *sched;
	int fail;
};

static void
mm_chunk(void *arg, int64_t t, int tid)
{
	struct mm_ctx *c = arg;

	if (mm_one(c->x, c->s, c->a, c->b, c->y, t, 1, c->sched) < 0)
		__atomic_store_n(&c->fail, 1, __ATOMIC_RELAXED);
}

static int
matmul_run(aoe_kctx *kc)
{
	const aoe_graph *g = kc->g;
	const aoe_node *n = kc->n;
	const gemm_priv *q = n->priv;
	const float *a = aoe_in(g, n, 0)->data, *b = aoe_in(g, n, 1)->data;
	float *y = aoe_out(g, n, 0)->data;
	aoe_gemm_ex x;
	aoe_act act;
	mm_shape s;
	int64_t t;
	int rc, fail = 0, inner;

	if ((rc = aoe_mm_shape_of(g, n, aoe_in(g, n, 0), aoe_in(g, n, 1), &s,
	    NULL, NULL)) < 0)
		return rc;
	if (s.nbatch == 0 || s.m == 0 || s.n == 0)
		return 0;
	memset(&x, 0, sizeof(x));
	/* A bias and an activation fused by subgraph tuning (lib/passes/fuse.c). */
	aoe_act_of(n, &act);
	x.epi = aoe_act_epi(&act, &x.e);
	if ((x.e.pc = aoe_fused_bias(g, n)) != NULL)
		x.epi = 1;
	x.m = s.m;
	x.n = s.n;
	x.k = s.k;
	x.alpha = 1;
	x.beta = 0;
	x.lda = s.k;
	x.ldb = s.n;
	x.ldc = s.n;
	if (s.b_single && s.a_full) {
		/* One GEMM: the batches of A are rows of one matrix. */
		x.m = s.nbatch * s.m;
		x.a = a;
		x.b = b;
		x.c = y;
		x.bpack = q ? q->bpack : NULL;
		x.bpack_id = q ? q->id : 0;
		return aoe_sgemm_ex(&x, kc->nthreads, kc->sched);
	}
	/*
	 * Many GEMMs: small ones run one a thread, large ones each on every
	 * thread.  (No parallel region wraps the latter: a nested team would
	 * get fresh threads, and fresh buffers, on every call.)
	 */
	inner = kc->nthreads < 2 || s.nbatch < kc->nthreads ||
	    (double)s.m * s.n * s.k > 4e6;
	if (aoe_sched_get(kc->sched, "batch_par", -1) >= 0)
		inner = aoe_sched_get(kc->sched, "batch_par", -1) == 0;
	if (inner) {
		for (t = 0; t < s.nbatch; t++)
			if (mm_one(&x, &s, a, b, y, t, kc->nthreads,
			    kc->sched) < 0)
				fail = 1;
	} else {
		struct mm_ctx mc = { &x, &s, a, b, y, kc->sched, 0 };

		aoe_parallel(kc->nthreads, s.nbatch, mm_chunk, &mc);
		fail = mc.fail;
	}
	return fail ? aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
	    n->op_type, n->name) : 0;
}

const aoe_op aoe_ops_gemm[] = {
	{ "Gemm", gemm_infer, gemm_run, gemm_prepare,
	    aoe_gemm_default_sched },
	{ "MatMul", matmul_infer, matmul_run, matmul_prepare,
	    aoe_gemm_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};

/*
 * The search space (see aoe_space_for() in space.c).  Blocking values
 * beyond the first that covers the whole extent act alike, so they are
 * left out; the default is always in.
 */
static int
knob_upto(aoe_space *sp, const char *name, const int64_t *vals, int nv,
    int64_t extent, int64_t def, const char *doc)
{
	int64_t v[AOE_KNOB_MAXVALS];
	int i, c = 0;

	for (i = 0; i < nv; i++) {
		v[c++] = vals[i];
		if (vals[i] >= extent)
			break;
	}
	v[c++] = def;
	if (aoe_space_add(sp, name, c, v, doc) < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, def);
	return 0;
}

/* The shapes that may run here, as "6x16, 4x24, ...". */
static const char *
shapes_str(void)
{
	static char buf[128];
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < NSHAPES; i++)
		if (!ukshapes[i].wide || aoe_cpu_avx512())
			o += (size_t)snprintf(buf + o, sizeof(buf) - o,
			    "%s%dx%d", o ? ", " : "", ukshapes[i].mr,
			    ukshapes[i].nr);
	return buf;
}

/* Why AVX-512 cannot run here. */
static const char *
no512_why(void)
{
	const char *e = getenv("AOE_MAX_ISA");

	/* A bank of another soc_version checked against its ISA. */
	if (aoe_cpu_isa_forced() == 0)
		return "the bank's soc_version has no AVX-512 (x86-64-v3 or "
		    "lower)";
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f") && e != NULL &&
	    strcasecmp(e, "avx2") == 0)
		return "AOE_MAX_ISA=avx2 caps libaoe to AVX2";
	return "this CPU has no AVX-512";
}

int
aoe_space_isa_why(const char *knob, int64_t v, char *why, size_t len)
{
	int i, rows = strcmp(knob, "mr") == 0, wide = 0;

	if (aoe_cpu_avx512() || (!rows && strcmp(knob, "nr") != 0))
		return 0;
	for (i = 0; i < NSHAPES; i++)
		if ((rows ? ukshapes[i].mr : ukshapes[i].nr) == v) {
			if (!ukshapes[i].wide)
				return 0;
			wide = 1;
		}
	if (!wide)
		return 0;
	snprintf(why, len, "%s=%lld is for AVX-512 micro-kernels, which "
	    "cannot run (%s)", knob, (long long)v, no512_why());
	return 1;
}

int
aoe_space_gemm_knobs(aoe_space *sp, int64_t m, int64_t n, int64_t k)
{
	static const int64_t mrs2[] = { 6, 4 }, nrs2[] = { 16, 24 };
	static const int64_t mrs5[] = { 14, 4, 6, 8, 12 };
	static const int64_t nrs5[] = { 32, 16, 24, 48, 64 };
	static const int64_t mcs2[] = { 48, 72, 96, 144, 192, 288, 384, 576 };
	/* With 14 rows: multiples of 14 too. */
	static const int64_t mcs5[] = { 48, 56, 72, 96, 112, 144, 168, 192,
	    224, 288, 336, 384, 448, 576 };
	static const int64_t kcs[] = { 64, 128, 192, 256, 384, 512, 768,
	    1024 };
	static const int64_t ncs[] = { 192, 384, 768, 1536, 3072, 6144 };
	static const int64_t pars[] = { 0, 1, 2 }, packbs[] = { -1, 0, 1 };
	/* Each list starts at its ISA's default, as packbs does. */
	static const int64_t apf5[] = { 512, 0, 256, 1024 };
	static const int64_t apf2[] = { 0, 256, 512, 1024 };
	static const int64_t cpfs[] = { -1, 0, 1 };
	int one = m <= 1 || n <= 1, w = aoe_cpu_avx512();
	int nsh = w ? 5 : 2;
	const char *doc = w ? "micro-kernel rows (with nr: AVX2 6x16 or 4x24, "
	    "AVX-512 14x32, 12x32, 8x48 or 6x64)" : "micro-kernel rows (with "
	    "nr: 6x16 or 4x24)";

	sp->value_why = aoe_space_isa_why;

	/* A matrix-vector product reads no knob: one point. */
	if (aoe_space_add(sp, "mr", one ? 1 : nsh, w ? mrs5 : mrs2, doc) < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, DEF_MR);
	if (aoe_space_add(sp, "nr", one ? 1 : nsh, w ? nrs5 : nrs2,
	    "micro-kernel columns") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, DEF_NR);
	if (knob_upto(sp, "mc", w ? mcs5 : mcs2, one ? 0 : w ? 14 : 8, m,
	    DEF_MC, "rows of A per packed block (L2)") < 0 ||
	    knob_upto(sp, "kc", kcs, one ? 0 : 8, k, DEF_KC,
	    "depth of a packed block (L1/L2)") < 0 ||
	    knob_upto(sp, "nc", ncs, one ? 0 : 6, n, DEF_NC,
	    "columns of B per packed panel (L3)") < 0)
		return -AOE_EINTERNAL;
	if (aoe_space_add(sp, "par", one ? 1 : 3, pars,
	    "thread split: 0 auto grid, 1 rows, 2 columns") < 0 ||
	    aoe_space_add(sp, "packb", one ? 1 : 3, packbs,
	    "B packing: -1 auto, 0 read in place when k-major, 1 pack") < 0 ||
	    aoe_space_add(sp, "apf", one ? 1 : 4, w ? apf5 : apf2,
	    "A prefetch distance (floats) on a block's first strip; 0 none")
	    < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, DEF_APF);
	if (aoe_space_add(sp, "cpf", one ? 1 : 3, cpfs, "C prefetch: 1 a "
	    "tile's lines for writing before its micro-kernel, 0 each row's "
	    "first line for reading, -1 auto (1 in loops that threads "
	    "share)") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, DEF_CPF);
	return 0;
}

int
aoe_space_gemm_packa(aoe_space *sp, int live)
{
	static const int64_t packas[] = { -1, 0, 1 };

	if (aoe_space_add(sp, "packa", live ? 3 : 1, packas, "A "
	    "transposed: -1 auto (read in place up to 256 rows, with a "
	    "stride spread over L1's sets), 0 read in place, 1 packed") < 0)
		return -AOE_EINTERNAL;
	return 0;
}

int
aoe_space_gemm_check(const aoe_space *sp, const aoe_sched *s, char *why,
    size_t len)
{
	int64_t mr = aoe_sched_get(s, "mr", DEF_MR);
	int64_t nr = aoe_sched_get(s, "nr", DEF_NR);
	int i = shape_index(mr, nr);

	if (i < 0) {
		snprintf(why, len, "micro-kernel %lldx%lld does not exist "
		    "(%s)", (long long)mr, (long long)nr, shapes_str());
		return -1;
	}
	if (ukshapes[i].wide && !aoe_cpu_avx512()) {
		snprintf(why, len, "the AVX-512 micro-kernel %lldx%lld cannot "
		    "run (%s)", (long long)mr, (long long)nr, no512_why());
		return -1;
	}
	if (aoe_sched_get(s, "mc", DEF_MC) % mr != 0 ||
	    aoe_sched_get(s, "nc", DEF_NC) % nr != 0) {
		snprintf(why, len, "mc must be a multiple of mr and nc of nr");
		return -1;
	}
	return 0;
}

/* fact[0]: B is packed once in prepare, so packb cannot matter. */
int
aoe_gemm_check(const aoe_space *sp, const aoe_sched *s, char *why, size_t len)
{
	if (aoe_space_gemm_check(sp, s, why, len) < 0)
		return -1;
	if (sp->fact[0] && aoe_sched_get(s, "prepack", 1) == 1 &&
	    aoe_sched_get(s, "packb", -1) != -1) {
		snprintf(why, len, "packb must be -1 when a constant B is "
		    "prepacked");
		return -1;
	}
	return 0;
}

int
aoe_space_gemm(aoe_space *sp)
{
	static const int64_t onoff[] = { 0, 1 }, bpar[] = { -1, 0, 1 };
	const aoe_graph *g = sp->g;
	const aoe_node *n = sp->n;
	const aoe_tensor *b = aoe_in(g, n, 1);
	int64_t m, k, nn;
	mm_shape ms;
	int rc, cb, batched = 0;

	if (strcmp(n->op_type, "Gemm") == 0) {
		if ((rc = gemm_dims(g, n, &m, &k, &nn)) < 0)
			return rc;
	} else {
		if ((rc = aoe_mm_shape_of(g, n, aoe_in(g, n, 0),
		    aoe_in(g, n, 1), &ms, NULL, NULL)) < 0)
			return rc;
		m = ms.m;
		k = ms.k;
		nn = ms.n;
		if (ms.b_single && ms.a_full)
			m *= ms.nbatch;
		else
			batched = ms.nbatch > 1;
	}
	if ((rc = aoe_space_gemm_knobs(sp, m, nn, k)) < 0 ||
	    (rc = aoe_space_gemm_packa(sp, m > 1 && nn > 1 &&
	    strcmp(n->op_type, "Gemm") == 0 && aoe_attr_int(n, "transA",
	    0) != 0)) < 0)
		return rc;
	cb = b != NULL && b->kind == AOE_T_CONST && m > 1 && nn > 1 &&
	    !batched;
	if (aoe_space_add(sp, "prepack", cb ? 2 : 1, cb ? onoff : onoff + 1,
	    "pack a constant B once, in prepare") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 1);
	if (batched && aoe_space_add(sp, "batch_par", 3, bpar,
	    "-1 auto, 1 threads over the batch, 0 inside each product") < 0)
		return -AOE_EINTERNAL;
	sp->fact[0] = cb;
	sp->check = aoe_gemm_check;
	sp->constraints = aoe_cpu_avx512() ? "(mr,nr) in {(6,16),(4,24),"
	    "(14,32),(12,32),(8,48),(6,64)}; mc % mr == 0; nc % nr == 0; "
	    "packb == -1 when a constant B is prepacked" : "(mr,nr) in "
	    "{(6,16),(4,24)}; mc % mr == 0; nc % nr == 0; packb == -1 when "
	    "a constant B is prepacked";
	return 0;
}
