/*
 * k_winograd.c - Winograd F(m x m, 3 x 3) convolution, Conv's algo 5:
 * 2-D images, 3x3 kernels, unit strides and dilations, any pads and
 * groups, NCHW in and out.
 *
 * With alpha = m + 2, the output is cut into m x m tiles; tile t of
 * channel c reads an alpha x alpha patch d of the (zero-padded) input,
 * and
 *
 *	Y[k] = A^T ( sum over c of (G g[k][c] G^T) .* (B^T d[c] B) ) A
 *
 * so that, per transform element e (alpha^2 of them), the products over
 * the channels are one GEMM: M[e] (K x tiles) = U[e] (K x C) V[e] (C x
 * tiles).  m = 2 or 4 ("wino_m"); m = 4 does 4x fewer multiplications
 * than direct convolution, m = 2 2.25x fewer with smaller rounding
 * errors.
 *
 * The weights are transformed once (U, in prepare, when they are
 * constants) into panels of six output channels.  The tiles are taken a
 * block at a time ("wino_tb" tiles, 0 auto: the block's transformed
 * input V fits in L2); for a block, the input transform fills V, eight
 * tiles at a time in AVX2 registers, from a copy of the input rows split
 * by column phase (column u*m + q at [q][u], so that the patches of
 * eight neighbouring tiles are plain loads, blended where the eight run
 * into the next row of tiles).  Then, for a block of "wino_kb" output
 * channels (0 auto), a micro-kernel (6x16 in AVX2, 6x32 in AVX-512 where
 * aoe_cpu_avx512() allows) computes M for every e, and the output
 * transform adds the bias, applies a fused Relu or Clip and stores the
 * m x m outputs of eight tiles at once, adding a fused residual before
 * the clamp as it stores (any other fused epilogue runs on the rows just
 * stored), each channel's span of the block asked for, for writing,
 * while the one before is stored (knob cpf, as the GEMM's, by default
 * where threads share the loop; on an AMD EPYC Zen 5 at 2 threads,
 * squeezenet1_1's expand3x3 Convs ran 0.88-0.97x the time, per-node
 * medians in the model).  Threads
 * ("batch_par" of Conv) go over images, groups
 * and tile blocks (1), or inside each block over channels and output
 * channel blocks (0); -1 picks.
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* Floats of transformed input per tile block the auto size aims at. */
#define V_BUDGET ((int64_t)1 << 18)
/* Floats of GEMM results per output channel block, likewise. */
#define M_BUDGET ((int64_t)1 << 15)

/*
 * The 1-D transforms, on eight tiles at once.  Input: t = B^T d over
 * alpha values; output: o = A^T s over alpha values into m.
 */
static inline __attribute__((always_inline)) void
tin(const int M, const __m256 *d, __m256 *t)
{
	if (M == 2) {
		t[0] = _mm256_sub_ps(d[0], d[2]);
		t[1] = _mm256_add_ps(d[1], d[2]);
		t[2] = _mm256_sub_ps(d[2], d[1]);
		t[3] = _mm256_sub_ps(d[1], d[3]);
	} else {
		const __m256 four = _mm256_set1_ps(4), five = _mm256_set1_ps(5);
		const __m256 two = _mm256_set1_ps(2);
		__m256 a = _mm256_fnmadd_ps(four, d[2], d[4]);
		__m256 b = _mm256_fnmadd_ps(four, d[1], d[3]);
		__m256 c = _mm256_sub_ps(d[4], d[2]);
		__m256 e = _mm256_sub_ps(d[3], d[1]);

		t[0] = _mm256_fmadd_ps(four, d[0], _mm256_fnmadd_ps(five, d[2],
		    d[4]));
		t[1] = _mm256_add_ps(a, b);
		t[2] = _mm256_sub_ps(a, b);
		t[3] = _mm256_fmadd_ps(two, e, c);
		t[4] = _mm256_fnmadd_ps(two, e, c);
		t[5] = _mm256_fmadd_ps(four, d[1], _mm256_fnmadd_ps(five, d[3],
		    d[5]));
	}
}

static inline __attribute__((always_inline)) void
tout(const int M, const __m256 *s, __m256 *o)
{
	if (M == 2) {
		o[0] = _mm256_add_ps(_mm256_add_ps(s[0], s[1]), s[2]);
		o[1] = _mm256_sub_ps(_mm256_sub_ps(s[1], s[2]), s[3]);
	} else {
		__m256 a = _mm256_add_ps(s[1], s[2]);
		__m256 b = _mm256_sub_ps(s[1], s[2]);
		__m256 c = _mm256_add_ps(s[3], s[4]);
		__m256 d = _mm256_sub_ps(s[3], s[4]);

		o[0] = _mm256_add_ps(_mm256_add_ps(s[0], a), c);
		o[1] = _mm256_fmadd_ps(_mm256_set1_ps(2), d, b);
		o[2] = _mm256_fmadd_ps(_mm256_set1_ps(4), c, a);
		o[3] = _mm256_add_ps(_mm256_fmadd_ps(_mm256_set1_ps(8), d, b),
		    s[5]);
	}
}

/* The weight transform of one 3-vector, u = G g, in double. */
static void
tw1(int m, const double *g, double *u)
{
	if (m == 2) {
		u[0] = g[0];
		u[1] = (g[0] + g[1] + g[2]) / 2;
		u[2] = (g[0] - g[1] + g[2]) / 2;
		u[3] = g[2];
	} else {
		u[0] = g[0] / 4;
		u[1] = -(g[0] + g[1] + g[2]) / 6;
		u[2] = -(g[0] - g[1] + g[2]) / 6;
		u[3] = g[0] / 24 + g[1] / 12 + g[2] / 6;
		u[4] = g[0] / 24 - g[1] / 12 + g[2] / 6;
		u[5] = g[2];
	}
}

/* Output channels a panel holds (the micro-kernel's rows). */
#define MR 6

/*
 * How far ahead in U the micro-kernels prefetch (floats, 3 KB).  U is
 * read once a block of tiles, a strip of six floats per input channel,
 * and is too big for the caches in a model (four times the weights);
 * the hardware's prefetcher does not keep up with so thin a stream.
 * Knob wino_pf: 0 none, 1 into L1, 2 into L2, -1 (auto) into L1.  On
 * an AMD EPYC Zen 5 (bench/convb, cold weights, medians of 21, 1 and 2
 * threads; bench/results/wino-pf-20261205.txt) into L1 ran 256>256 @14
 * in 0.72 / 0.79 of the time without, 512>512 @14 0.66 / 0.71,
 * 128>128 @28 0.92 / 0.82, 64>64 @56 0.98 / 0.95, 16>64 @54 1.03 /
 * 1.05 (with 16 input channels U is small); into L2 within 0.05 of L1.
 */
#define U_PF 768

static inline __attribute__((always_inline)) void
u_prefetch(const int pf, const float *u)
{
	if (pf == 1)
		_mm_prefetch((const char *)(u + U_PF), _MM_HINT_T0);
	else if (pf == 2)
		_mm_prefetch((const char *)(u + U_PF), _MM_HINT_T1);
}

size_t
aoe_wino_wsize(int m, int64_t c, int64_t k, int64_t group)
{
	int64_t a = m + 2, cg = c / group, kp = ceildiv(k / group, MR);

	return (size_t)(group * a * a * kp * cg * MR);
}

/* The weight transform's arguments, for its chunks. */
typedef struct wtf {
	int m;
	int64_t cg, mg, kp, gs, nch, k;
	const float *w;
	float *u;
} wtf;

/* Output channels of chunk c of the weight transform. */
static void
weights_chunk(void *ctx, int64_t c, int tid)
{
	const wtf *x = ctx;
	const int64_t a = x->m + 2, cg = x->cg;
	int64_t t, t1 = aoe_chunk_lo(x->k, x->nch, c + 1);

	for (t = aoe_chunk_lo(x->k, x->nch, c); t < t1; t++) {
		int64_t gi = t / x->mg, kk = t % x->mg, ci, i, j, e;
		double g[9], h[3][8], out[8] = { 0 }, tmp[3];

		for (ci = 0; ci < cg; ci++) {
			for (i = 0; i < 9; i++)
				g[i] = x->w[(t * cg + ci) * 9 + i];
			/* Rows: h[r] = G g[r][.] over the kernel's columns. */
			for (i = 0; i < 3; i++)
				tw1(x->m, g + 3 * i, h[i]);
			for (j = 0; j < a; j++) {
				for (i = 0; i < 3; i++)
					tmp[i] = h[i][j];
				tw1(x->m, tmp, out);
				for (i = 0; i < a; i++) {
					e = i * a + j;
					x->u[gi * x->gs + ((e * x->kp + kk /
					    MR) * cg + ci) * MR + kk % MR] =
					    (float)out[i];
				}
			}
		}
	}
}

/*
 * U[g][e][kp][c][r] = (G w[g*mg + kp*6 + r][c] G^T)[e], zero for the
 * rows past the group's last output channel.
 */
void
aoe_wino_weights(int m, int64_t c, int64_t k, int64_t group, const float *w,
    float *u, int nthreads)
{
	wtf x;

	x.m = m;
	x.cg = c / group;
	x.mg = k / group;
	x.kp = ceildiv(x.mg, MR);
	x.gs = (m + 2) * (m + 2) * x.kp * x.cg * MR;
	x.k = k;
	x.nch = min64(k, k * x.cg > 4096 ? 4 * (int64_t)nthreads : 1);
	x.w = w;
	x.u = u;
	memset(u, 0, aoe_wino_wsize(m, c, k, group) * sizeof(float));
	aoe_parallel(nthreads, x.nch, weights_chunk, &x);
}

/* Everything a run needs. */
typedef struct wctx {
	const aoe_wino *p;
	int m, a, act, avx512;
	float lo, hi;
	aoe_epi e;			/* the epilogue, when epi is set */
	int epi;
	int radd;			/* the residual added in registers */
	int64_t cg, mg, kp;		/* channels per group; panels */
	int64_t th, tw, nt;		/* tile rows, columns, count */
	int64_t tb, nblk;		/* tiles per block, blocks per plane */
	int64_t kb, nkb;		/* output channels per block, blocks */
	int64_t ldv;			/* row stride of V and M (tiles) */
	int64_t ves, mes;		/* V's and M's strides between e */
	int64_t pw, prows;		/* phase rows' width, rows of P */
	const float *u;
	int64_t ugs;			/* U's group stride */
	int pf;				/* U's prefetch: 0, 1 to L1, 2 to L2 */
	int cpf;			/* knob cpf: the output asked for */
	/* Inside a job: the threads over its output channel blocks. */
	int64_t nsplit;
	_Atomic int fail;		/* a buffer could not be had */
} wctx;

static size_t
v_floats(const wctx *w)
{
	return (size_t)(w->a * w->a * w->ves);
}

static size_t
m_floats(const wctx *w)
{
	return (size_t)(w->a * w->a * w->mes);
}

static size_t
p_floats(const wctx *w)
{
	return (size_t)(w->prows * w->m * w->pw);
}

/*
 * Split 8*M floats from s by phase: d[q*pw + u] = s[u*M + q], u < 8.
 */
static inline __attribute__((always_inline)) void
deinterleave(const int M, const float *s, float *d, int64_t pw)
{
	if (M == 2) {
		__m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8);
		__m256 q0 = _mm256_shuffle_ps(v0, v1, 0x88);
		__m256 q1 = _mm256_shuffle_ps(v0, v1, 0xdd);

		_mm256_storeu_ps(d, _mm256_castpd_ps(_mm256_permute4x64_pd(
		    _mm256_castps_pd(q0), 0xd8)));
		_mm256_storeu_ps(d + pw, _mm256_castpd_ps(_mm256_permute4x64_pd(
		    _mm256_castps_pd(q1), 0xd8)));
	} else {
		__m256 v0 = _mm256_loadu_ps(s), v1 = _mm256_loadu_ps(s + 8);
		__m256 v2 = _mm256_loadu_ps(s + 16);
		__m256 v3 = _mm256_loadu_ps(s + 24);
		__m256 w0 = _mm256_permute2f128_ps(v0, v2, 0x20);
		__m256 w1 = _mm256_permute2f128_ps(v0, v2, 0x31);
		__m256 w2 = _mm256_permute2f128_ps(v1, v3, 0x20);
		__m256 w3 = _mm256_permute2f128_ps(v1, v3, 0x31);
		__m256 t0 = _mm256_unpacklo_ps(w0, w1);
		__m256 t1 = _mm256_unpacklo_ps(w2, w3);
		__m256 t2 = _mm256_unpackhi_ps(w0, w1);
		__m256 t3 = _mm256_unpackhi_ps(w2, w3);

		_mm256_storeu_ps(d, _mm256_shuffle_ps(t0, t1, 0x44));
		_mm256_storeu_ps(d + pw, _mm256_shuffle_ps(t0, t1, 0xee));
		_mm256_storeu_ps(d + 2 * pw, _mm256_shuffle_ps(t2, t3, 0x44));
		_mm256_storeu_ps(d + 3 * pw, _mm256_shuffle_ps(t2, t3, 0xee));
	}
}

/*
 * build_p (below) for a narrow plane, whose rows have too few columns
 * inside the padding for deinterleave's eight at a time (28x28 F(4,3):
 * 6 of 8; 14x14 F(2,3) likewise): each row is first copied, zero-padded,
 * into a line of pw * M floats, and the whole line deinterleaved.  The
 * per-column copy it replaces took 64 of the 113 us of 128>128 @28's
 * input transform (AMD EPYC Zen 5).
 */
#define LINE_FLOATS 512
static inline __attribute__((always_inline)) void
build_p_line(const int M, const float *x, int64_t h, int64_t wd,
    int64_t row0, int64_t R, int64_t pl, int64_t un, int64_t pw, float *P)
{
	const __m256i iota = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	float line[LINE_FLOATS + 8] __attribute__((aligned(32)));
	/* Columns [0, c1) of a row land at line[c + pl], below un * M. */
	const int64_t c1 = min64(wd, un * M - pl);
	int64_t r, i, u;

	for (r = 0; r < R; r++) {
		const int64_t ih = row0 + r;
		const float *src = x + ih * wd;
		float *d = P + r * M * pw;

		if (ih < 0 || ih >= h) {
			memset(d, 0, sizeof(float) * M * pw);
			continue;
		}
		for (i = 0; i < pw * M; i += 8)
			_mm256_store_ps(line + i, _mm256_setzero_ps());
		/* The last vector's lanes past c1 are loaded as zeros. */
		for (i = 0; i + 8 <= c1; i += 8)
			_mm256_storeu_ps(line + pl + i, _mm256_loadu_ps(src + i));
		if (i < c1)
			_mm256_storeu_ps(line + pl + i, _mm256_maskload_ps(src +
			    i, _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(c1 -
			    i)), iota)));
		for (u = 0; u < pw; u += 8) {
			const int64_t v = min64(u, pw - 8);
			deinterleave(M, line + v * M, d + v, pw);
		}
	}
}

/*
 * Copy rows [row0, row0 + R) of an input plane (zero outside it) into P
 * split by phase: P[r][q][u] = x[row0 + r][u*M + q - pl] for u < un,
 * zero for un <= u < pw.  Columns whose every phase is inside go eight
 * at a time (the last eight overlapping the previous ones).
 */
static inline __attribute__((always_inline)) void
build_p(const int M, const float *x, int64_t h, int64_t wd, int64_t row0,
    int64_t R, int64_t pl, int64_t un, int64_t pw, float *P)
{
	/* u in [ua, uz): u*M - pl >= 0 and u*M + M - 1 - pl < wd. */
	const int64_t ua = min64((pl + M - 1) / M, un);
	const int64_t uz = max64(ua, min64(wd - M + pl >= 0 ?
	    (wd - M + pl) / M + 1 : 0, un));
	int64_t r, q, u;

	if (pw * M <= LINE_FLOATS) {
		build_p_line(M, x, h, wd, row0, R, pl, un, pw, P);
		return;
	}
	for (r = 0; r < R; r++) {
		int64_t ih = row0 + r;
		const float *src = x + ih * wd - pl;
		float *d = P + r * M * pw;

		if (ih < 0 || ih >= h) {
			memset(d, 0, sizeof(float) * M * pw);
			continue;
		}
		for (q = 0; q < M; q++)
			for (u = 0; u < ua; u++) {
				int64_t c = u * M + q - pl;
				d[q * pw + u] = c >= 0 && c < wd ? src[u * M +
				    q] : 0;
			}
		if (uz - ua >= 8) {
			for (u = ua; u < uz; u += 8) {
				int64_t v = min64(u, uz - 8);
				deinterleave(M, src + v * M, d + v, pw);
			}
		} else
			u = ua;
		u = min64(u, uz);
		for (q = 0; q < M; q++) {
			for (int64_t v = u; v < un; v++) {
				int64_t c = v * M + q - pl;
				d[q * pw + v] = c >= 0 && c < wd ? src[v * M +
				    q] : 0;
			}
			for (int64_t v = un; v < pw; v++)
				d[q * pw + v] = 0;
		}
	}
}

/*
 * The input transform of channel ci of image b, group gi, tiles [t0, t0
 * + n): V[e][ci][t - t0].  Eight tiles at a time: the lanes of a tile
 * row are one load from P; a group that runs into the next rows blends
 * in a load from each (shifted so that its lanes line up).  Lanes past
 * the block compute garbage into the slack past n.
 */
static inline __attribute__((always_inline)) void
input_tf(const int M, const wctx *w, int64_t b, int64_t gi, int64_t t0,
    int64_t n, int64_t ci, float *P, float *V)
{
	const aoe_wino *p = w->p;
	const int A = M + 2;
	const int64_t pw = w->pw, th0 = t0 / w->tw, th1 = (t0 + n - 1) / w->tw;
	const float *x = p->x + ((b * p->c) + gi * w->cg + ci) * p->h * p->w;
	const int64_t es = w->ves, rs = M * M * pw;
	const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
	int64_t t;

	build_p(M, x, p->h, p->w, th0 * M - p->pt, (th1 - th0) * M + A, p->pl,
	    w->tw + 1, pw, P);
	for (t = t0; t < t0 + n; t += 8) {
		const int64_t th = t / w->tw, tw0 = t % w->tw;
		const float *rp[9];
		__m256 mk[9], d[8], hh[8][8], tv[8];
		float *vt = V + ci * w->ldv + t - t0;
		int64_t k = w->tw - tw0;
		int r, s, i, j, ns = 1;

		rp[0] = P + (th - th0) * rs + tw0;
		while (k < 8 && th + ns <= th1) {
			rp[ns] = P + (th + ns - th0) * rs - k;
			mk[ns] = _mm256_castsi256_ps(_mm256_cmpgt_epi32(lane,
			    _mm256_set1_epi32((int)k - 1)));
			ns++;
			k += w->tw;
		}
		for (r = 0; r < A; r++) {
			for (s = 0; s < A; s++) {
				int64_t off = (r * M + s % M) * pw + s / M;
				d[s] = _mm256_loadu_ps(rp[0] + off);
				for (j = 1; j < ns; j++)
					d[s] = _mm256_blendv_ps(d[s],
					    _mm256_loadu_ps(rp[j] + off),
					    mk[j]);
			}
			tin(M, d, hh[r]);
		}
		for (s = 0; s < A; s++) {
			for (r = 0; r < A; r++)
				d[r] = hh[r][s];
			tin(M, d, tv);
			for (i = 0; i < A; i++)
				_mm256_storeu_ps(vt + (i * A + s) * es, tv[i]);
		}
	}
}

/*
 * The micro-kernel: m[r][j] = sum over c of u[c][r] v[c][j], six rows,
 * NV*8 columns.
 */
static inline __attribute__((always_inline)) void
ukr(const int NV, const int pf, int64_t C, const float *u, const float *v,
    int64_t ldv, float *m, int64_t ldm)
{
	__m256 c00 = _mm256_setzero_ps(), c01 = c00, c10 = c00, c11 = c00;
	__m256 c20 = c00, c21 = c00, c30 = c00, c31 = c00, c40 = c00;
	__m256 c41 = c00, c50 = c00, c51 = c00, b0, b1 = c00, a;
	int64_t c;

	for (c = 0; c < C; c++, u += MR, v += ldv) {
		b0 = _mm256_loadu_ps(v);
		u_prefetch(pf, u);
		if (NV > 1)
			b1 = _mm256_loadu_ps(v + 8);
#define UKR_ROW(r, x0, x1) do {						\
	a = _mm256_broadcast_ss(u + r);					\
	x0 = _mm256_fmadd_ps(a, b0, x0);				\
	if (NV > 1)							\
		x1 = _mm256_fmadd_ps(a, b1, x1);			\
} while (0)
		UKR_ROW(0, c00, c01);
		UKR_ROW(1, c10, c11);
		UKR_ROW(2, c20, c21);
		UKR_ROW(3, c30, c31);
		UKR_ROW(4, c40, c41);
		UKR_ROW(5, c50, c51);
#undef UKR_ROW
	}
	_mm256_storeu_ps(m, c00);
	_mm256_storeu_ps(m + ldm, c10);
	_mm256_storeu_ps(m + 2 * ldm, c20);
	_mm256_storeu_ps(m + 3 * ldm, c30);
	_mm256_storeu_ps(m + 4 * ldm, c40);
	_mm256_storeu_ps(m + 5 * ldm, c50);
	if (NV > 1) {
		_mm256_storeu_ps(m + 8, c01);
		_mm256_storeu_ps(m + ldm + 8, c11);
		_mm256_storeu_ps(m + 2 * ldm + 8, c21);
		_mm256_storeu_ps(m + 3 * ldm + 8, c31);
		_mm256_storeu_ps(m + 4 * ldm + 8, c41);
		_mm256_storeu_ps(m + 5 * ldm + 8, c51);
	}
}

/* The strips of a panel in AVX2: n columns, n16 of them in pairs. */
static inline __attribute__((always_inline)) void
strips(const int pf, int64_t C, const float *u, const float *v, int64_t ldv,
    float *m, int64_t n, int64_t n16)
{
	int64_t j;

	for (j = 0; j < n16; j += 16)
		ukr(2, pf, C, u, v + j, ldv, m + j, ldv);
	if (n - n16 > 8)
		ukr(2, pf, C, u, v + j, ldv, m + j, ldv);
	else if (n > n16)
		ukr(1, pf, C, u, v + j, ldv, m + j, ldv);
}

/*
 * The micro-kernel in AVX-512 (where aoe_cpu_avx512() allows): six rows,
 * NV*16 columns; and the strips of a panel, n columns rounded up to 16.
 */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) void
ukr512(const int NV, const int pf, int64_t C, const float *u, const float *v,
    int64_t ldv, float *m, int64_t ldm)
{
	__m512 c0[MR], c1[MR], b0, b1 = _mm512_setzero_ps(), a;
	int64_t c;
	int r;

	for (r = 0; r < MR; r++)
		c0[r] = c1[r] = _mm512_setzero_ps();
	for (c = 0; c < C; c++, u += MR, v += ldv) {
		b0 = _mm512_loadu_ps(v);
		u_prefetch(pf, u);
		if (NV > 1)
			b1 = _mm512_loadu_ps(v + 16);
		for (r = 0; r < MR; r++) {
			a = _mm512_set1_ps(u[r]);
			c0[r] = _mm512_fmadd_ps(a, b0, c0[r]);
			if (NV > 1)
				c1[r] = _mm512_fmadd_ps(a, b1, c1[r]);
		}
	}
	for (r = 0; r < MR; r++) {
		_mm512_storeu_ps(m + r * ldm, c0[r]);
		if (NV > 1)
			_mm512_storeu_ps(m + r * ldm + 16, c1[r]);
	}
}

#define STRIPS512(pf)							\
static void								\
strips512_##pf(int64_t C, const float *u, const float *v, int64_t ldv,	\
    float *m, int64_t n)						\
{									\
	int64_t j, n16 = (n + 15) / 16 * 16;				\
									\
	for (j = 0; j + 32 <= n16; j += 32)				\
		ukr512(2, pf, C, u, v + j, ldv, m + j, ldv);		\
	if (j < n16)							\
		ukr512(1, pf, C, u, v + j, ldv, m + j, ldv);		\
}
STRIPS512(0)
STRIPS512(1)
STRIPS512(2)

static void
strips512(int pf, int64_t C, const float *u, const float *v, int64_t ldv,
    float *m, int64_t n)
{
	if (pf == 1)
		strips512_1(C, u, v, ldv, m, n);
	else if (pf == 2)
		strips512_2(C, u, v, ldv, m, n);
	else
		strips512_0(C, u, v, ldv, m, n);
}
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

/* A residual r added to v, then the clamp to [lo, hi]. */
static inline __attribute__((always_inline)) __m256
add_clamp(__m256 v, __m256 r, __m256 lo, __m256 hi)
{
	return _mm256_min_ps(_mm256_max_ps(_mm256_add_ps(v, r), lo), hi);
}

/*
 * Store the M x 8 outputs o[j] (lane l: tile tw0 + l, column j) of one
 * output row: cols floats from y, each with r's (when r is set) added
 * and then clamped to [lo, hi].
 */
static inline __attribute__((always_inline)) void
store_row(const int M, const __m256 *o, float *y, int64_t cols,
    const float *r, __m256 lo, __m256 hi)
{
	__m256 v[4], a, b, c, d, e0, e1, e2, e3;
	int i;

	if (M == 2) {
		a = _mm256_unpacklo_ps(o[0], o[1]);
		b = _mm256_unpackhi_ps(o[0], o[1]);
		v[0] = _mm256_permute2f128_ps(a, b, 0x20);
		v[1] = _mm256_permute2f128_ps(a, b, 0x31);
	} else {
		a = _mm256_unpacklo_ps(o[0], o[1]);
		b = _mm256_unpackhi_ps(o[0], o[1]);
		c = _mm256_unpacklo_ps(o[2], o[3]);
		d = _mm256_unpackhi_ps(o[2], o[3]);
		e0 = _mm256_shuffle_ps(a, c, 0x44);
		e1 = _mm256_shuffle_ps(a, c, 0xee);
		e2 = _mm256_shuffle_ps(b, d, 0x44);
		e3 = _mm256_shuffle_ps(b, d, 0xee);
		v[0] = _mm256_permute2f128_ps(e0, e1, 0x20);
		v[1] = _mm256_permute2f128_ps(e2, e3, 0x20);
		v[2] = _mm256_permute2f128_ps(e0, e1, 0x31);
		v[3] = _mm256_permute2f128_ps(e2, e3, 0x31);
	}
	for (i = 0; i < M && 8 * i + 8 <= cols; i++) {
		if (r != NULL)
			v[i] = add_clamp(v[i], _mm256_loadu_ps(r + 8 * i), lo,
			    hi);
		_mm256_storeu_ps(y + 8 * i, v[i]);
	}
	if (i < M && 8 * i < cols) {
		__m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cols -
		    8 * i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		if (r != NULL)
			v[i] = add_clamp(v[i], _mm256_maskload_ps(r + 8 * i, m),
			    lo, hi);
		_mm256_maskstore_ps(y + 8 * i, m, v[i]);
	}
}

/*
 * cols (at most 32) floats from s to d, with r added and clamped as in
 * store_row, in registers: a call of memcpy for each row of a group of
 * tiles that straddles rows of tiles cost more than the copy (on 54x54
 * planes, 14 tiles a row, most groups do).
 */
static inline __attribute__((always_inline)) void
copy_row(float *d, const float *s, int64_t cols, const float *r, __m256 lo,
    __m256 hi)
{
	int64_t i;
	__m256 v;

	for (i = 0; i + 8 <= cols; i += 8) {
		v = _mm256_loadu_ps(s + i);
		if (r != NULL)
			v = add_clamp(v, _mm256_loadu_ps(r + i), lo, hi);
		_mm256_storeu_ps(d + i, v);
	}
	if (i < cols) {
		__m256i m = _mm256_cmpgt_epi32(_mm256_set1_epi32((int)(cols -
		    i)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
		v = _mm256_maskload_ps(s + i, m);
		if (r != NULL)
			v = add_clamp(v, _mm256_maskload_ps(r + i, m), lo, hi);
		_mm256_maskstore_ps(d + i, m, v);
	}
}

/*
 * The output transform of tiles [t, t + lanes) (lanes <= 8) of one
 * output channel, from ms (transform element e at ms + e*es): bias bv,
 * the fused Relu or Clip, and the stores into the plane y, row by row of
 * tiles.
 */
static inline __attribute__((always_inline)) void
out_group(const int M, const wctx *w, const float *ms, int64_t es, float bv,
    int64_t t, int64_t lanes, float *y, const float *d, int64_t ko)
{
	const aoe_wino *p = w->p;
	const int A = M + 2;
	const int64_t th = t / w->tw, tw0 = t % w->tw;
	const __m256 vb = _mm256_set1_ps(bv), lo = _mm256_set1_ps(w->lo);
	const __m256 hi = _mm256_set1_ps(w->hi);
	__m256 s[8], g[8][4], o[4][4], c[8], oc[4];
	int64_t cols, r, l0, l1, j, tw, off;
	int i, jj;

	for (i = 0; i < A; i++) {
		for (jj = 0; jj < A; jj++)
			s[jj] = _mm256_loadu_ps(ms + (i * A + jj) * es);
		tout(M, s, g[i]);
	}
	for (jj = 0; jj < M; jj++) {
		for (i = 0; i < A; i++)
			c[i] = g[i][jj];
		tout(M, c, oc);
		for (i = 0; i < M; i++) {
			o[i][jj] = _mm256_add_ps(oc[i], vb);
			/*
			 * With an epilogue, the clamp is in it; with the
			 * residual in registers, after the residual.
			 */
			if (w->act && !w->epi && !w->radd)
				o[i][jj] = _mm256_min_ps(_mm256_max_ps(o[i][jj],
				    lo), hi);
		}
	}
	if (tw0 + lanes <= w->tw) {
		/* One row of tiles. */
		cols = min64(lanes * M, p->ow - tw0 * M);
		for (r = 0; r < M && th * M + r < p->oh; r++) {
			off = (th * M + r) * p->ow + tw0 * M;
			store_row(M, o[r], y + off, cols, w->radd ? d + off :
			    NULL, lo, hi);
			if (w->epi)
				aoe_epi_row(&w->e, ko, y + off,
				    d ? d + off : NULL, cols);
		}
		return;
	}
	/* Lanes [l0, l1) go to the row of tiles th + j. */
	for (r = 0; r < M; r++) {
		float tmp[32];
		store_row(M, o[r], tmp, 8 * M, NULL, lo, hi);
		for (j = 0, l0 = 0; l0 < lanes; j++, l0 = l1) {
			tw = j ? 0 : tw0;
			l1 = min64(lanes, l0 + w->tw - tw);
			cols = min64((l1 - l0) * M, p->ow - tw * M);
			if ((th + j) * M + r >= p->oh)
				continue;
			off = ((th + j) * M + r) * p->ow + tw * M;
			copy_row(y + off, tmp + l0 * M, cols, w->radd ? d +
			    off : NULL, lo, hi);
			if (w->epi)
				aoe_epi_row(&w->e, ko, y + off,
				    d ? d + off : NULL, cols);
		}
	}
}

/*
 * Output channels [k0, k1) of image b, group gi, tiles [t0, t0 + n):
 * M by the micro-kernel from U and V, then the output transform into Y.
 */
static inline __attribute__((always_inline)) void
kblock(const int M, const wctx *w, int64_t b, int64_t gi, int64_t t0,
    int64_t n, int64_t k0, int64_t k1, const float *V, float *Mb)
{
	const aoe_wino *p = w->p;
	const int A = M + 2;
	const int64_t ldv = w->ldv, C = w->cg, kp0 = k0 / MR;
	const int64_t kp1 = ceildiv(k1, MR);
	const int64_t n16 = n / 16 * 16;
	const float *ug = w->u + gi * w->ugs;
	int64_t e, kp, k, t;

	for (e = 0; e < A * A; e++) {
		const float *ve = V + e * w->ves;
		for (kp = kp0; kp < kp1; kp++) {
			const float *up = ug + (e * w->kp + kp) * C * MR;
			float *mp = Mb + e * w->mes + (kp - kp0) * MR * ldv;
			if (w->avx512) {
				strips512(w->pf, C, up, ve, ldv, mp, n);
				continue;
			}
			if (w->pf == 1)
				strips(1, C, up, ve, ldv, mp, n, n16);
			else if (w->pf == 2)
				strips(2, C, up, ve, ldv, mp, n, n16);
			else
				strips(0, C, up, ve, ldv, mp, n, n16);
		}
	}
	/*
	 * The block's span of each output plane, [lo, hi): with knob cpf,
	 * the next channel's is asked for, for writing, while this one's
	 * is transformed and stored (the first before the loop).
	 */
	const int64_t pl = p->oh * p->ow, tl = t0 + n - 1;
	const int64_t lo = t0 / w->tw * M * p->ow + t0 % w->tw * M;
	const int64_t hi = min64(p->oh - 1, tl / w->tw * M + M - 1) *
	    p->ow + min64(p->ow, (tl % w->tw + 1) * M);
	float *yb = p->y + (b * p->k + gi * w->mg) * pl;
	const int pfw = aoe_cpf_on(w->cpf);

	if (pfw)
		aoe_pfw_span(yb + k0 * pl + lo, hi - lo);
	for (k = k0; k < k1; k++) {
		const int64_t ko = gi * w->mg + k;
		const float bv = p->bias ? p->bias[ko] : 0;
		int64_t yo = (b * p->k + ko) * p->oh * p->ow;
		const float *d = p->add ? p->add + yo : NULL;

		if (pfw && k + 1 < k1)
			aoe_pfw_span(yb + (k + 1) * pl + lo, hi - lo);

		for (t = t0; t < t0 + n; t += 8)
			out_group(M, w, Mb + (k - k0) * ldv + t - t0, w->mes,
			    bv, t, min64(8, t0 + n - t), p->y + yo, d, ko);
	}
}

/* A block of tiles: job -> image, group, first tile and count. */
static void
job_of(const wctx *w, int64_t job, int64_t *b, int64_t *gi, int64_t *t0,
    int64_t *n)
{
	int64_t blk = job % w->nblk, bg = job / w->nblk;

	*b = bg / w->p->group;
	*gi = bg % w->p->group;
	*t0 = blk * w->tb;
	*n = min64(w->tb, w->nt - *t0);
}

static void
do_input(const wctx *w, int64_t job, int64_t ci, float *P, float *V)
{
	int64_t b, gi, t0, n;

	job_of(w, job, &b, &gi, &t0, &n);
	if (w->m == 2)
		input_tf(2, w, b, gi, t0, n, ci, P, V);
	else
		input_tf(4, w, b, gi, t0, n, ci, P, V);
}

static void
do_kblock(const wctx *w, int64_t job, int64_t kbi, const float *V, float *Mb)
{
	int64_t b, gi, t0, n, k0 = kbi * w->kb, k1 = min64(k0 + w->kb, w->mg);

	job_of(w, job, &b, &gi, &t0, &n);
	if (w->m == 2)
		kblock(2, w, b, gi, t0, n, k0, k1, V, Mb);
	else
		kblock(4, w, b, gi, t0, n, k0, k1, V, Mb);
}

/*
 * Chunk c: part c % nsplit of job c / nsplit's output channel blocks, in
 * the thread's own buffers.  Threads go over the jobs (nsplit 1) or
 * inside them, each transforming the job's input into a V of its own.  Threads that shared one V (the input transform split by
 * channels, a barrier, then the output channel blocks) ran 1.15-1.3x
 * slower at 2 threads on an AMD EPYC Zen 5 (bench/convb, cold and warm:
 * 256>256 @14 0.77-0.88x, 512>512 @7 0.85x, 128>128 @14 0.74-0.8x,
 * 48>192 @13 0.85-0.9x): the V one thread wrote, the other read from
 * its cache, and the barrier waited for the slower.
 */
static void
job_chunk(void *ctx, int64_t c, int tid)
{
	wctx *w = ctx;
	float *V = aoe_sgemm_tlbuf(0, v_floats(w));
	float *Mb = aoe_sgemm_tlbuf(1, m_floats(w));
	float *P = aoe_sgemm_tlbuf(2, p_floats(w));
	int64_t i, job = c / w->nsplit, part = c % w->nsplit;
	int64_t k0 = aoe_chunk_lo(w->nkb, w->nsplit, part);
	int64_t k1 = aoe_chunk_lo(w->nkb, w->nsplit, part + 1);

	if (V == NULL || Mb == NULL || P == NULL) {
		w->fail = 1;
		return;
	}
	if (k0 >= k1)
		return;
	for (i = 0; i < w->cg; i++)
		do_input(w, job, i, P, V);
	for (i = k0; i < k1; i++)
		do_kblock(w, job, i, V, Mb);
}

/*
 * The stride between the transform elements e of V or M, at least n
 * floats: an odd multiple of 16, so that the 36 (16) e of one tile,
 * which the transforms store or load together, fall in distinct sets of
 * a 4 KB-period L1.  With n itself, a multiple of 4096 bytes whenever the
 * channels are a multiple of 32 (128 x 72 floats), they all fell in one:
 * the input transform of 128>128 @28 took 197 us against 100 padded, and
 * the whole Conv 1.15x the time at 1 thread (AMD EPYC Zen 5, warm, in
 * one process, AVX-512 and AVX2 alike).
 */
static int64_t
e_stride(int64_t n)
{
	n = ceildiv(n, 16) * 16;
	return n % 32 ? n : n + 16;
}

/*
 * Fill w's sizes from the geometry and the schedule, for nthreads;
 * returns whether threads go over the jobs (1) or inside them (0).
 */
static int
plan(wctx *w, const aoe_wino *p, int m, int nthreads, const aoe_sched *s)
{
	int64_t tb = aoe_sched_get(s, "wino_tb", 0);
	int64_t kb = aoe_sched_get(s, "wino_kb", 0), jobs;
	int par = (int)aoe_sched_get(s, "batch_par", -1), outer;
	int pf = (int)aoe_sched_get(s, "wino_pf", -1);

	w->m = m;
	w->a = m + 2;
	w->pf = pf >= 0 && pf <= 2 ? pf : 1;
	/* The GEMM's knob: see DEF_CPF in k_gemm.c. */
	w->cpf = (int)aoe_sched_get(s, "cpf", AOE_CPF_DEF);
	w->cg = p->c / p->group;
	w->mg = p->k / p->group;
	w->kp = ceildiv(w->mg, MR);
	w->th = ceildiv(p->oh, m);
	w->tw = ceildiv(p->ow, m);
	w->nt = w->th * w->tw;
	if (tb <= 0) {
		/* Balanced blocks whose V fits the budget. */
		int64_t cap = max64(32, V_BUDGET / (w->a * w->a * w->cg) / 8 *
		    8);
		int64_t nb = ceildiv(w->nt, cap);
		jobs = p->n * p->group * nb;
		/*
		 * Threads over the blocks read U once each; threads inside
		 * one block split its output channels (and so U).  A plane
		 * that fits one block is split into blocks for the threads
		 * only where they keep about 32 tiles (nt over 32 blocks at
		 * least), and then by default for F(4,3) only: on two real
		 * cores of an AMD EPYC Zen 5 (idle, weights cold, bench/convb)
		 * the split ran 16>64 @54 in 0.85 of the time, 128>128 @28
		 * in 0.78, 32>128 @27 even, while F(2,3) on 13x13 planes
		 * lost (64>256 1.14, 48>192 1.07).  An earlier choice of
		 * no split for both, judged on a simulated two-core clock,
		 * did not hold on the real one.  batch_par=1 asks for the
		 * split, 0 forbids it.
		 *
		 * Later, with the worker kept awake (AOE_SPIN_US; bench/convb
		 * had let it sleep between calls), the same host at 2 threads:
		 * F(2,3) too where the output channels are at most twice the
		 * input channels (256>256 @14 0.91x the time alone, warm;
		 * resnet50's five in the model 0.95-1.0x, per-node minima).
		 * Alone and warm, F(4,3) with four times as many output
		 * channels as input ran faster unsplit (32>128 @27 0.7x), but
		 * in squeezenet1_1 it ran 1.03-1.4x slower: each thread then
		 * transforms all of the input, half of it written by the
		 * other core.
		 */
		if (nthreads > 1 && (par == 1 || (par < 0 && (m == 4 ||
		    w->mg <= 2 * w->cg))) &&
		    jobs % nthreads != 0 &&
		    ceildiv(nb, nthreads) * nthreads <= ceildiv(w->nt, 32))
			nb = ceildiv(nb, nthreads) * nthreads;
		tb = ceildiv(ceildiv(w->nt, nb), 8) * 8;
	}
	w->tb = min64(tb, w->nt);
	w->nblk = ceildiv(w->nt, w->tb);
	w->ldv = ceildiv(w->tb, 16) * 16 + 8;
	jobs = p->n * p->group * w->nblk;
	if (par >= 0)
		outer = par == 1;
	else
		outer = jobs >= nthreads && (jobs % nthreads == 0 ||
		    jobs >= 4 * nthreads);
	if (nthreads < 2)
		outer = 0;
	if (kb <= 0) {
		kb = max64(MR, M_BUDGET / (w->a * w->a * w->ldv) / MR * MR);
		/*
		 * Inside a block, two blocks for every thread, so that one
		 * slow to start (its core busy) leaves its share to others.
		 */
		if (!outer && nthreads > 1)
			kb = min64(kb, max64(MR, ceildiv(ceildiv(w->mg,
			    2 * nthreads), MR) * MR));
	}
	w->kb = min64(ceildiv(kb, MR) * MR, w->kp * MR);
	w->nkb = ceildiv(w->mg, w->kb);
	w->ves = e_stride(w->cg * w->ldv);
	w->mes = e_stride(ceildiv(w->kb, MR) * MR * w->ldv);
	w->pw = w->tw + 8;
	w->prows = (ceildiv(w->tb, w->tw) + 1) * m + w->a;
	return outer;
}

int
aoe_wino_run(const aoe_wino *p, int m, const float *u, int nthreads,
    const aoe_sched *s)
{
	wctx w;
	aoe_act act;
	float *uown = NULL;
	int64_t jobs;
	int outer, fail;

	if (m != 2 && m != 4)
		return aoe_err(AOE_EINTERNAL, "winograd: F(%d,3) does not "
		    "exist", m);
	if (p->n == 0 || p->k == 0 || p->oh == 0 || p->ow == 0)
		return 0;
	memset(&w, 0, sizeof(w));
	w.p = p;
	w.avx512 = aoe_cpu_avx512();
	outer = plan(&w, p, m, nthreads, s);
	aoe_act_of(p->node, &act);
	/*
	 * A plain Relu or Clip is applied in registers, with the bounds of
	 * the epilogue that would apply it; anything more (another
	 * activation, an affine after it) by the epilogue on the rows just
	 * stored.
	 */
	w.act = act.kind == AOE_ACT_RELU || act.kind == AOE_ACT_CLIP;
	w.epi = aoe_act_epi(&act, &w.e) && !w.act;
	w.lo = w.e.lo;
	w.hi = w.e.hi;
	if (p->add || act.ps || act.pt)
		w.epi = 1;
	/*
	 * A residual with at most a Relu or Clip after it (a ResNet's) is
	 * added in registers as the rows are stored, then clamped: the
	 * epilogue pass over each stored row took a fifth of 128>128 @28's
	 * time with its residual (AMD EPYC Zen 5, 1 thread, warm).
	 */
	w.radd = p->add != NULL && w.e.kind == AOE_EPI_CLAMP &&
	    act.ps == NULL && act.pt == NULL;
	if (w.radd)
		w.epi = 0;
	if (u == NULL) {
		/* Weights not transformed ahead: do it now. */
		uown = aligned_alloc(64, (aoe_wino_wsize(m, p->c, p->k,
		    p->group) * sizeof(float) + 63) & ~(size_t)63);
		if (uown == NULL)
			return aoe_err(AOE_ENOMEM, "winograd: out of memory");
		aoe_wino_weights(m, p->c, p->k, p->group, p->wt, uown,
		    nthreads);
		u = uown;
	}
	w.u = u;
	w.ugs = w.a * w.a * w.kp * w.cg * MR;
	jobs = p->n * p->group * w.nblk;
	w.nsplit = outer ? 1 : max64(1, min64(nthreads, w.nkb));
	aoe_parallel(nthreads, jobs * w.nsplit, job_chunk, &w);
	fail = w.fail;
	free(uown);
	if (fail)
		return aoe_err(AOE_ENOMEM, "winograd: out of memory");
	return 0;
}

/*
 * The knobs of the search space (Conv's, see aoe_space_conv()): live is
 * 0 when the node cannot take Winograd, and the knobs then hold their
 * defaults; m is the default F(m,3).
 */
int
aoe_space_wino(aoe_space *sp, int live, int m, int64_t k, int64_t oh,
    int64_t ow)
{
	static const int64_t ms[] = { 2, 4 }, pfv[] = { -1, 0, 1, 2 };
	int64_t tv[8], kv[8], nt = ceildiv(oh, 2) * ceildiv(ow, 2), v;
	int ntv = 0, nkv = 0;

	tv[ntv++] = 0;
	kv[nkv++] = 0;
	if (live) {
		for (v = 8; v <= 256 && ntv < 8; v *= 2) {
			tv[ntv++] = v;
			if (v >= nt)
				break;
		}
		for (v = 6; v <= 192 && nkv < 8; v *= 2) {
			kv[nkv++] = v;
			if (v >= k)
				break;
		}
	}
	if (aoe_space_add(sp, "wino_m", live ? 2 : 1, live ? ms : &ms[m == 4],
	    "winograd F(m x m, 3 x 3), algo=5") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, m);
	if (aoe_space_add(sp, "wino_tb", ntv, tv, "winograd tiles per block, "
	    "algo=5 (0: auto, fits L2)") < 0 ||
	    aoe_space_add(sp, "wino_kb", nkv, kv, "winograd output channels "
	    "per block, algo=5 (0: auto)") < 0 ||
	    aoe_space_add(sp, "wino_pf", live ? 4 : 1, pfv, "winograd "
	    "prefetch of the weights, algo=5 (-1 auto, 0 none, 1 L1, "
	    "2 L2)") < 0)
		return -AOE_EINTERNAL;
	return 0;
}
