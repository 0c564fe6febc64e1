/*
 * epi.c - the activations and the per-channel scale and shift that the
 * fusion passes fold into a Conv, Gemm or MatMul, and the residual and
 * bias inputs they add, as the kernels read them back (see kernel.h).
 */
#include <float.h>
#include <math.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

void
aoe_act_of(const aoe_node *n, aoe_act *a)
{
	const aoe_attr *s = aoe_attr_find(n, "_aoe_post_s");
	const aoe_attr *t = aoe_attr_find(n, "_aoe_post_t");

	a->kind = (int)aoe_attr_int(n, "_aoe_act", AOE_ACT_NONE);
	a->lo = aoe_attr_float(n, "_aoe_act_lo", -FLT_MAX);
	a->hi = aoe_attr_float(n, "_aoe_act_hi", FLT_MAX);
	a->ps = s ? s->floats : NULL;
	a->pt = t ? t->floats : NULL;
}

int
aoe_act_epi(const aoe_act *a, aoe_epi *e)
{
	e->kind = AOE_EPI_CLAMP;
	e->lo = -FLT_MAX;
	e->hi = FLT_MAX;
	e->ps = a->ps;
	e->pt = a->pt;
	e->pc = NULL;
	switch (a->kind) {
	case AOE_ACT_RELU:
		e->lo = 0;
		break;
	case AOE_ACT_CLIP:
		e->lo = a->lo;
		e->hi = a->hi;
		break;
	case AOE_ACT_SIGMOID:
		e->kind = AOE_EPI_SIGMOID;
		break;
	case AOE_ACT_HARDSWISH:
		e->kind = AOE_EPI_HARDSWISH;
		break;
	case AOE_ACT_SILU:
		e->kind = AOE_EPI_SILU;
		break;
	case AOE_ACT_GELU:
		e->kind = AOE_EPI_GELU;
		break;
	case AOE_ACT_GELU_TANH:
		e->kind = AOE_EPI_GELU_TANH;
		break;
	default:
		return a->ps != NULL || a->pt != NULL;
	}
	return 1;
}

/* Input i of n, which a fusion recorded as attribute attr, or NULL. */
static const float *
fused_input(const aoe_graph *g, const aoe_node *n, const char *attr, int i)
{
	const aoe_tensor *t;

	if (n->nin <= i || aoe_attr_find(n, attr) == NULL ||
	    (t = aoe_in(g, n, i)) == NULL)
		return NULL;
	return t->data;
}

const float *
aoe_fused_add(const aoe_graph *g, const aoe_node *n)
{
	return fused_input(g, n, "_aoe_add", 3);
}

const float *
aoe_fused_bias(const aoe_graph *g, const aoe_node *n)
{
	return fused_input(g, n, "_aoe_bias", 2);
}

/*
 * The rows of the epilogue (kernel.h), one loop for each kind: called
 * with kind constant, so that the activation's switch leaves the loop.
 */
static inline __attribute__((always_inline)) void
row8(const int kind, const aoe_epi *e, int64_t row, float *y,
    const float *d, int64_t len)
{
	const float s = e->ps ? e->ps[row] : 1, t = e->pt ? e->pt[row] : 0;
	const __m256 vs = _mm256_set1_ps(s), vt = _mm256_set1_ps(t);
	const int aff = e->ps || e->pt;
	float ty[8], tc[8], td[8];
	int64_t i = 0, r = 0;

	for (;; i += 8) {
		float *yp = y + i;
		const float *cp = e->pc ? e->pc + i : NULL, *dp = d ? d + i : NULL;
		__m256 v;
		if (i + 8 > len) {
			/*
			 * The last few through a copy: a masked load from a
			 * NULL d or pc (as a compiler would if-convert the
			 * scalar loop into) costs a microcode assist on AMD.
			 */
			if ((r = len - i) <= 0)
				break;
			memset(ty, 0, sizeof(ty));
			memcpy(ty, yp, sizeof(float) * r);
			if (cp) {
				memset(tc, 0, sizeof(tc));
				memcpy(tc, cp, sizeof(float) * r);
				cp = tc;
			}
			if (dp) {
				memset(td, 0, sizeof(td));
				memcpy(td, dp, sizeof(float) * r);
				dp = td;
			}
			yp = ty;
		}
		v = _mm256_loadu_ps(yp);
		if (cp)
			v = _mm256_add_ps(v, _mm256_loadu_ps(cp));
		if (dp)
			v = _mm256_add_ps(v, _mm256_loadu_ps(dp));
		v = aoe_epi_k8(kind, e, v);
		if (aff)
			v = _mm256_fmadd_ps(v, vs, vt);
		_mm256_storeu_ps(yp, v);
		if (yp == ty) {
			memcpy(y + i, ty, sizeof(float) * r);
			break;
		}
	}
}

void
aoe_epi_row8(const aoe_epi *e, int64_t row, float *y, const float *d,
    int64_t len)
{
	switch (e->kind) {
	case AOE_EPI_HARDSWISH:
		row8(AOE_EPI_HARDSWISH, e, row, y, d, len);
		break;
	case AOE_EPI_SIGMOID:
		row8(AOE_EPI_SIGMOID, e, row, y, d, len);
		break;
	case AOE_EPI_SILU:
		row8(AOE_EPI_SILU, e, row, y, d, len);
		break;
	case AOE_EPI_GELU:
		row8(AOE_EPI_GELU, e, row, y, d, len);
		break;
	case AOE_EPI_GELU_TANH:
		row8(AOE_EPI_GELU_TANH, e, row, y, d, len);
		break;
	default:
		row8(AOE_EPI_CLAMP, e, row, y, d, len);
		break;
	}
}

/*
 * The same on sixteen floats a step, compiled for AVX-512F whatever the
 * build's -march; the last few under a mask.
 */
#pragma GCC push_options
#pragma GCC target("avx512f")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f"))), apply_to = function)
#endif
static inline __attribute__((always_inline)) void
row16(const int kind, const aoe_epi *e, int64_t row, float *y,
    const float *d, int64_t len)
{
	const float s = e->ps ? e->ps[row] : 1, t = e->pt ? e->pt[row] : 0;
	const __m512 vs = _mm512_set1_ps(s), vt = _mm512_set1_ps(t);
	const int aff = e->ps || e->pt;
	const float *pc = e->pc;
	int64_t i;
	__mmask16 m;
	__m512 v;

#define EPI16_BODY(LOAD, STORE) do {					\
		v = LOAD(y + i);					\
		if (pc)							\
			v = _mm512_add_ps(v, LOAD(pc + i));		\
		if (d)							\
			v = _mm512_add_ps(v, LOAD(d + i));		\
		v = aoe_epi_k16(kind, e, v);				\
		if (aff)						\
			v = _mm512_fmadd_ps(v, vs, vt);			\
		STORE;							\
	} while (0)
#define EPI16_MLOAD(p) _mm512_maskz_loadu_ps(m, (p))
	for (i = 0; i + 16 <= len; i += 16)
		EPI16_BODY(_mm512_loadu_ps, _mm512_storeu_ps(y + i, v));
	if (i < len) {
		m = (__mmask16)((1u << (len - i)) - 1);
		EPI16_BODY(EPI16_MLOAD, _mm512_mask_storeu_ps(y + i, m, v));
	}
#undef EPI16_BODY
#undef EPI16_MLOAD
}

void
aoe_epi_row16(const aoe_epi *e, int64_t row, float *y, const float *d,
    int64_t len)
{
	switch (e->kind) {
	case AOE_EPI_HARDSWISH:
		row16(AOE_EPI_HARDSWISH, e, row, y, d, len);
		break;
	case AOE_EPI_SIGMOID:
		row16(AOE_EPI_SIGMOID, e, row, y, d, len);
		break;
	case AOE_EPI_SILU:
		row16(AOE_EPI_SILU, e, row, y, d, len);
		break;
	case AOE_EPI_GELU:
		row16(AOE_EPI_GELU, e, row, y, d, len);
		break;
	case AOE_EPI_GELU_TANH:
		row16(AOE_EPI_GELU_TANH, e, row, y, d, len);
		break;
	default:
		row16(AOE_EPI_CLAMP, e, row, y, d, len);
		break;
	}
}

/* One function over sixteen floats (the element-wise operators'). */
static inline __attribute__((always_inline)) __m512
vm16(int f, __m512 v)
{
	switch (f) {
	case AOE_VM_SIGMOID:
		return aoe_z16_sigmoid(v);
	case AOE_VM_TANH:
		return aoe_z16_tanh(v);
	case AOE_VM_ERF:
		return aoe_z16_erf(v);
	default:
		return aoe_z16_exp(v);
	}
}

/* Each function its own loop, so that the switch is not in it. */
#define VM16_LOOP(F) do {						\
	for (i = 0; i + 16 <= n; i += 16)				\
		_mm512_storeu_ps(o + i, vm16(F, _mm512_loadu_ps(x + i))); \
	if (i < n) {							\
		__mmask16 m = (__mmask16)((1u << (n - i)) - 1);		\
		_mm512_mask_storeu_ps(o + i, m, vm16(F,			\
		    _mm512_maskz_loadu_ps(m, x + i)));			\
	}								\
} while (0)

void
aoe_vmath16(int f, float *o, const float *x, int64_t n)
{
	int64_t i;

	switch (f) {
	case AOE_VM_SIGMOID:
		VM16_LOOP(AOE_VM_SIGMOID);
		break;
	case AOE_VM_TANH:
		VM16_LOOP(AOE_VM_TANH);
		break;
	case AOE_VM_ERF:
		VM16_LOOP(AOE_VM_ERF);
		break;
	default:
		VM16_LOOP(AOE_VM_EXP);
		break;
	}
}
#undef VM16_LOOP
#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

struct act_ctx {
	aoe_epi e;
	float *y;
	const float *add;
	int64_t rows, cols, m, nch;
};

/* The epilogue over one piece of y's rows. */
static void
act_chunk(void *arg, int64_t c, int tid)
{
	const struct act_ctx *x = arg;
	int64_t r, r1 = aoe_chunk_lo(x->rows, x->nch, c + 1);

	(void)tid;
	for (r = aoe_chunk_lo(x->rows, x->nch, c); r < r1; r++)
		aoe_epi_row(&x->e, r % x->m, x->y + r * x->cols,
		    x->add ? x->add + r * x->cols : NULL, x->cols);
}

void
aoe_act_apply(const aoe_act *a, float *y, const float *add,
    int64_t rows, int64_t cols, int64_t m, int nthreads)
{
	struct act_ctx x;
	int64_t len = rows * cols;

	memset(&x, 0, sizeof(x));
	if ((!aoe_act_epi(a, &x.e) && add == NULL) || len <= 0 || m <= 0)
		return;
	x.y = y;
	x.add = add;
	x.rows = rows;
	x.cols = cols;
	x.m = m;
	x.nch = 1;
	/* Below these sizes a second thread costs more than it gives. */
	if (nthreads > 1 && rows > 1 && len > (a->kind == AOE_ACT_SIGMOID ||
	    a->kind >= AOE_ACT_SILU ? 16384 : 65536))
		x.nch = aoe_nchunks(rows, nthreads);
	else
		nthreads = 1;
	aoe_parallel(nthreads, x.nch, act_chunk, &x);
}

