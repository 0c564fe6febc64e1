/*
 * k_elem.c - element-wise kernels: unary float math, broadcasting binary
 * arithmetic, comparisons, logic and Where.
 *
 * Unary float ops (Relu, LeakyRelu, Sigmoid, HardSigmoid, HardSwish,
 * Tanh, Erf, Sqrt, Exp, Log, Neg, Abs, Reciprocal, Floor, Ceil, Round,
 * Elu, Selu, Celu, Softplus, Softsign, ThresholdedRelu, Shrink, Sign,
 * Sin, Cos, Tan, Asin, Acos, Atan, Sinh, Cosh, Asinh, Acosh, Atanh) run
 * on float32 (Sinh and Cosh vectorised with the polynomial exp, the
 * others with the C library); Neg, Abs, Relu and Sign also on the signed
 * integers.  Clip runs on every numeric type.  Add, Sub, Mul, Div, Mod,
 * Max, Min, Sum and Mean run on every numeric type (float32, float64,
 * int8..int64, uint8..uint64), as do the comparisons (whose output is
 * bool, one byte); BitShift the unsigned integers.  Pow takes a
 * float32, float64, int32 or int64 base with an exponent of any numeric
 * type.  And, Or, Xor and Not take bool; Where
 * any fixed-size type; IsNaN and IsInf float32 and float64.
 *
 * Broadcasting (numpy multidirectional) collapses the output shape into
 * runs: size-1 dimensions are dropped and neighbours that are contiguous in
 * every input are merged, so that same-shape, scalar, per-channel and
 * per-row cases all become one loop over an innermost run whose operands
 * are either contiguous or a repeated scalar.  Everything else walks the
 * remaining outer dimensions with an odometer.
 *
 * Knobs (the search space beside the code):
 *
 *   par   elements per thread: a node of n elements uses
 *         min(nthreads, n / par) threads, so small nodes stay on one
 *         thread.  Default 32768; searched over 4096..1048576 (powers of
 *         two).  0 forces one thread.
 *   vec   unary float ops: 1 the AVX2+FMA kernels (polynomial exp and
 *         log, rational tanh and erf, sigmoid by exp and a reciprocal:
 *         the epilogues' math of kernel.h, its accuracy stated there,
 *         within about 1e-6 relative; on sixteen lanes where AVX-512 may
 *         run; min/max/blend for the clamps), 0 plain C loops with the
 *         C library's functions.  Default 1; {0, 1}.
 *   tile  unary ops: elements handed to one call of the inner loop (the
 *         unit of the thread split).  Default 16384; searched over
 *         1024..65536 (powers of two).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#ifdef _OPENMP
#endif
#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#define HAVE_AVX2 1
#endif

#include "aoe_kernels.h"
#include "half.h"
#include "kernel.h"

#define DEF_PAR 32768
#define DEF_VEC 1
#define DEF_TILE 16384

/*
 * The elements stored: for an NCHW8c tensor (kernel.h) its padding lanes
 * count too, so that a same-shape op runs over the blocks as they are.
 */
static int64_t
stored(const aoe_tensor *t)
{
	if (t->layout != 0)
		return (int64_t)(aoe_tensor_nbytes(t) / aoe_dtype_size(t->dtype));
	return aoe_tensor_numel(t);
}

static void
elem_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "par", DEF_PAR);
	aoe_sched_set(s, "tile", DEF_TILE);
	if (strcmp(n->op_type, "Exp") == 0 || strcmp(n->op_type, "Log") == 0 ||
	    strcmp(n->op_type, "Tanh") == 0 ||
	    strcmp(n->op_type, "Sigmoid") == 0 ||
	    strcmp(n->op_type, "Erf") == 0 || strcmp(n->op_type, "Elu") == 0 ||
	    strcmp(n->op_type, "Selu") == 0 || strcmp(n->op_type, "Celu") == 0 ||
	    strcmp(n->op_type, "Softplus") == 0 ||
	    strcmp(n->op_type, "Sinh") == 0 || strcmp(n->op_type, "Cosh") == 0)
		aoe_sched_set(s, "vec", DEF_VEC);
}

static int
is_int_type(int dt)
{
	switch (dt) {
	case AOE_I8: case AOE_I16: case AOE_I32: case AOE_I64:
	case AOE_U8: case AOE_U16: case AOE_U32: case AOE_U64:
		return 1;
	}
	return 0;
}

static int
is_num_type(int dt)
{
	return dt == AOE_F32 || dt == AOE_F64 || is_int_type(dt);
}

/*
 * Vector math (AVX2 + FMA).  Each function is accurate to a few ulp over
 * the whole float range and propagates NaN.
 */
#ifdef HAVE_AVX2
#define V1(x) _mm256_set1_ps(x)


static inline __m256
v_log(__m256 x)
{
	__m256 e, m, mask, tmp, z, y, bad, zero, inf;
	__m256i xi, ei;

	bad = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_LT_OQ);
	bad = _mm256_or_ps(bad, _mm256_cmp_ps(x, x, _CMP_UNORD_Q));
	zero = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_EQ_OQ);
	inf = _mm256_cmp_ps(x, V1(INFINITY), _CMP_EQ_OQ);
	/* Denormals: scale up by 2^23 first. */
	mask = _mm256_cmp_ps(x, V1(FLT_MIN), _CMP_LT_OQ);
	x = _mm256_blendv_ps(x, _mm256_mul_ps(x, V1(8388608.0f)), mask);
	xi = _mm256_castps_si256(x);
	ei = _mm256_sub_epi32(_mm256_srli_epi32(xi, 23), _mm256_set1_epi32(126));
	e = _mm256_cvtepi32_ps(ei);
	e = _mm256_sub_ps(e, _mm256_and_ps(mask, V1(23.0f)));
	m = _mm256_castsi256_ps(_mm256_or_si256(_mm256_and_si256(xi,
	    _mm256_set1_epi32(0x007fffff)), _mm256_set1_epi32(0x3f000000)));
	/* m in [0.5, 1): fold to [sqrt(1/2), sqrt(2)). */
	mask = _mm256_cmp_ps(m, V1(0.707106781186547524f), _CMP_LT_OQ);
	tmp = _mm256_and_ps(m, mask);
	m = _mm256_sub_ps(m, V1(1.0f));
	e = _mm256_sub_ps(e, _mm256_and_ps(V1(1.0f), mask));
	m = _mm256_add_ps(m, tmp);
	z = _mm256_mul_ps(m, m);
	y = V1(7.0376836292E-2f);
	y = _mm256_fmadd_ps(y, m, V1(-1.1514610310E-1f));
	y = _mm256_fmadd_ps(y, m, V1(1.1676998740E-1f));
	y = _mm256_fmadd_ps(y, m, V1(-1.2420140846E-1f));
	y = _mm256_fmadd_ps(y, m, V1(1.4249322787E-1f));
	y = _mm256_fmadd_ps(y, m, V1(-1.6668057665E-1f));
	y = _mm256_fmadd_ps(y, m, V1(2.0000714765E-1f));
	y = _mm256_fmadd_ps(y, m, V1(-2.4999993993E-1f));
	y = _mm256_fmadd_ps(y, m, V1(3.3333331174E-1f));
	y = _mm256_mul_ps(_mm256_mul_ps(y, m), z);
	y = _mm256_fmadd_ps(e, V1(-2.12194440e-4f), y);
	y = _mm256_fnmadd_ps(z, V1(0.5f), y);
	y = _mm256_add_ps(m, y);
	y = _mm256_fmadd_ps(e, V1(0.693359375f), y);
	y = _mm256_blendv_ps(y, V1(NAN), bad);
	y = _mm256_blendv_ps(y, V1(-INFINITY), zero);
	y = _mm256_blendv_ps(y, V1(INFINITY), inf);
	return y;
}

/* Sigmoid, Tanh and Erf: the epilogues' math (kernel.h). */
#define v_sigmoid aoe_v8_sigmoid
#define v_tanh aoe_v8_tanh
#define v_erf aoe_v8_erf
#endif

/*
 * Unary float32 kernels.  Each computes o[0..n) from x[0..n) with the two
 * parameters a and b (alpha/beta, min/max) where the op has them.
 */
struct uprm {
	float a, b;
	int vec;
};

/* A unary kernel; o may be x (a node run in place, lib/runtime/exec.c). */
typedef void (*ufn)(float *o, const float *x, int64_t n,
    const struct uprm *p);

#ifdef HAVE_AVX2
/*
 * A vector loop over n elements: full vectors, then the tail through a
 * small buffer so that the tail gets exactly the body's arithmetic.
 */
#define VLOOP(VEXPR) do {						\
	const __m256 va = V1(p->a), vb = V1(p->b);			\
	float tb[8];							\
	int64_t i_;							\
	(void)va; (void)vb;						\
	for (i_ = 0; i_ + 8 <= n; i_ += 8) {				\
		__m256 v = _mm256_loadu_ps(x + i_);			\
		_mm256_storeu_ps(o + i_, (VEXPR));			\
	}								\
	if (i_ < n) {							\
		__m256 v;						\
		memset(tb, 0, sizeof(tb));				\
		memcpy(tb, x + i_, (size_t)(n - i_) * sizeof(float));	\
		v = _mm256_loadu_ps(tb);				\
		_mm256_storeu_ps(tb, (VEXPR));				\
		memcpy(o + i_, tb, (size_t)(n - i_) * sizeof(float));	\
	}								\
} while (0)
#endif

#define SLOOP(SEXPR) do {						\
	const float a_ = p->a, b_ = p->b;				\
	int64_t i_;							\
	(void)a_; (void)b_;						\
	for (i_ = 0; i_ < n; i_++) {					\
		float v = x[i_];					\
		o[i_] = (SEXPR);					\
	}								\
} while (0)

/*
 * Define a unary kernel from a vector expression (of v, va, vb) and a
 * scalar one (of v, a_, b_).  The scalar loop is also the fallback when
 * the vec knob is 0 or AVX2 is not built in.
 */
#ifdef HAVE_AVX2
#define DEF_UNARY(name, VEXPR, SEXPR)					\
static void								\
name(float *o, const float *x, int64_t n,		\
    const struct uprm *p)						\
{									\
	if (p->vec)							\
		VLOOP(VEXPR);						\
	else								\
		SLOOP(SEXPR);						\
}
#else
#define DEF_UNARY(name, VEXPR, SEXPR)					\
static void								\
name(float *o, const float *x, int64_t n,		\
    const struct uprm *p)						\
{									\
	SLOOP(SEXPR);							\
}
#endif

/* Simple ops: plain loops that the compiler vectorises by itself. */
#define DEF_SIMPLE(name, SEXPR)						\
static void								\
name(float *o, const float *x, int64_t n,		\
    const struct uprm *p)						\
{									\
	SLOOP(SEXPR);							\
}

static inline float
s_sigmoid(float v)
{
	return 1.0f / (1.0f + expf(-v));
}

/* Clamp to [0, 1] with plain compares (fminf/fmaxf do not vectorise). */
static inline float
s_sat(float v)
{
	v = v < 0.0f ? 0.0f : v;
	return v > 1.0f ? 1.0f : v;
}

#ifdef HAVE_AVX2
/*
 * max_ps/min_ps return their second operand when either is NaN, so the
 * input goes second to propagate NaN.
 */
#define VSAT(e) _mm256_min_ps(V1(1.0f), _mm256_max_ps(_mm256_setzero_ps(), (e)))
DEF_UNARY(u_relu, _mm256_max_ps(_mm256_setzero_ps(), v), v < 0.0f ? 0.0f : v)
DEF_UNARY(u_leakyrelu, _mm256_blendv_ps(v, _mm256_mul_ps(va, v),
    _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ)), v < 0.0f ? a_ * v : v)
DEF_UNARY(u_clip, _mm256_min_ps(vb, _mm256_max_ps(va, v)),
    (v = v < a_ ? a_ : v) > b_ ? b_ : v)
DEF_UNARY(u_hardsigmoid, VSAT(_mm256_fmadd_ps(va, v, vb)),
    s_sat(a_ * v + b_))
DEF_UNARY(u_hardswish, _mm256_mul_ps(v, VSAT(_mm256_fmadd_ps(v,
    V1(1.0f / 6.0f), V1(0.5f)))), v * s_sat(v * (1.0f / 6.0f) + 0.5f))
#else
DEF_SIMPLE(u_relu, v < 0.0f ? 0.0f : v)
DEF_SIMPLE(u_leakyrelu, v < 0.0f ? a_ * v : v)
DEF_SIMPLE(u_clip, (v = v < a_ ? a_ : v) > b_ ? b_ : v)
DEF_SIMPLE(u_hardsigmoid, s_sat(a_ * v + b_))
DEF_SIMPLE(u_hardswish, v * s_sat(v * (1.0f / 6.0f) + 0.5f))
#endif
DEF_SIMPLE(u_neg, -v)
DEF_SIMPLE(u_abs, fabsf(v))
DEF_SIMPLE(u_reciprocal, 1.0f / v)
DEF_SIMPLE(u_copy, v)
#ifdef HAVE_AVX2
/* As DEF_UNARY, on sixteen lanes where AVX-512 may run (aoe_vmath16). */
#define DEF_UNARY16(name, vm, VEXPR, SEXPR)				\
static void								\
name(float *o, const float *x, int64_t n,				\
    const struct uprm *p)						\
{									\
	if (p->vec && n >= 16 && aoe_cpu_avx512())			\
		aoe_vmath16(vm, o, x, n);				\
	else if (p->vec)						\
		VLOOP(VEXPR);						\
	else								\
		SLOOP(SEXPR);						\
}
DEF_UNARY16(u_sigmoid, AOE_VM_SIGMOID, v_sigmoid(v), s_sigmoid(v))
DEF_UNARY16(u_tanh, AOE_VM_TANH, v_tanh(v), tanhf(v))
DEF_UNARY16(u_erf, AOE_VM_ERF, v_erf(v), erff(v))
DEF_UNARY16(u_exp, AOE_VM_EXP, v_exp(v), expf(v))
DEF_UNARY(u_log, v_log(v), logf(v))
DEF_UNARY(u_sqrt, _mm256_sqrt_ps(v), sqrtf(v))
DEF_UNARY(u_floor, _mm256_round_ps(v, _MM_FROUND_TO_NEG_INF |
    _MM_FROUND_NO_EXC), floorf(v))
DEF_UNARY(u_ceil, _mm256_round_ps(v, _MM_FROUND_TO_POS_INF |
    _MM_FROUND_NO_EXC), ceilf(v))
#else
DEF_UNARY(u_sigmoid, 0, s_sigmoid(v))
DEF_UNARY(u_tanh, 0, tanhf(v))
DEF_UNARY(u_erf, 0, erff(v))
DEF_UNARY(u_exp, 0, expf(v))
DEF_UNARY(u_log, 0, logf(v))
DEF_UNARY(u_sqrt, 0, sqrtf(v))
DEF_UNARY(u_floor, 0, floorf(v))
DEF_UNARY(u_ceil, 0, ceilf(v))
#endif

/* The exponential family: Elu, Selu, Celu, Softplus. */
static inline float
s_softplus(float v)
{
	return (v > 0.0f ? v : 0.0f) + log1pf(expf(-fabsf(v)));
}

#ifdef HAVE_AVX2
static inline __m256
v_elu(__m256 v, __m256 a)
{
	__m256 e = _mm256_mul_ps(a, _mm256_sub_ps(v_exp(v), V1(1.0f)));

	return _mm256_blendv_ps(v, e, _mm256_cmp_ps(v, _mm256_setzero_ps(),
	    _CMP_LT_OQ));
}

static inline __m256
v_selu(__m256 v, __m256 a, __m256 g)
{
	__m256 e = _mm256_fmsub_ps(a, v_exp(v), a);

	return _mm256_mul_ps(g, _mm256_blendv_ps(v, e, _mm256_cmp_ps(v,
	    _mm256_setzero_ps(), _CMP_LE_OQ)));
}

static inline __m256
v_celu(__m256 v, __m256 a)
{
	__m256 e = _mm256_mul_ps(a, _mm256_sub_ps(v_exp(_mm256_div_ps(v, a)),
	    V1(1.0f)));

	return _mm256_add_ps(_mm256_max_ps(_mm256_setzero_ps(), v),
	    _mm256_min_ps(_mm256_setzero_ps(), e));
}

static inline __m256
v_softplus(__m256 v)
{
	__m256 ax = _mm256_andnot_ps(V1(-0.0f), v);
	__m256 l = v_log(_mm256_add_ps(V1(1.0f), v_exp(_mm256_sub_ps(
	    _mm256_setzero_ps(), ax))));

	return _mm256_add_ps(_mm256_max_ps(_mm256_setzero_ps(), v), l);
}

DEF_UNARY(u_elu, v_elu(v, va), v < 0.0f ? a_ * (expf(v) - 1.0f) : v)
DEF_UNARY(u_selu, v_selu(v, va, vb), v > 0.0f ? b_ * v :
    b_ * (a_ * expf(v) - a_))
DEF_UNARY(u_celu, v_celu(v, va), (v > 0.0f ? v : 0.0f) +
    fminf(0.0f, a_ * (expf(v / a_) - 1.0f)))
DEF_UNARY(u_softplus, v_softplus(v), s_softplus(v))
DEF_UNARY(u_softsign, _mm256_div_ps(v, _mm256_add_ps(V1(1.0f),
    _mm256_andnot_ps(V1(-0.0f), v))), v / (1.0f + fabsf(v)))
DEF_UNARY(u_round, _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT |
    _MM_FROUND_NO_EXC), nearbyintf(v))
#else
DEF_UNARY(u_elu, 0, v < 0.0f ? a_ * (expf(v) - 1.0f) : v)
DEF_UNARY(u_selu, 0, v > 0.0f ? b_ * v : b_ * (a_ * expf(v) - a_))
DEF_UNARY(u_celu, 0, (v > 0.0f ? v : 0.0f) +
    fminf(0.0f, a_ * (expf(v / a_) - 1.0f)))
DEF_UNARY(u_softplus, 0, s_softplus(v))
DEF_UNARY(u_softsign, 0, v / (1.0f + fabsf(v)))
DEF_UNARY(u_round, 0, nearbyintf(v))
#endif
DEF_SIMPLE(u_thresholdedrelu, v > a_ ? v : 0.0f)
DEF_SIMPLE(u_shrink, v < -a_ ? v + b_ : v > a_ ? v - b_ : 0.0f)
DEF_SIMPLE(u_sign, v > 0.0f ? 1.0f : v < 0.0f ? -1.0f : v)
DEF_SIMPLE(u_sin, sinf(v))
DEF_SIMPLE(u_cos, cosf(v))
DEF_SIMPLE(u_tan, tanf(v))
DEF_SIMPLE(u_asin, asinf(v))
DEF_SIMPLE(u_acos, acosf(v))
DEF_SIMPLE(u_atan, atanf(v))
DEF_SIMPLE(u_asinh, asinhf(v))
DEF_SIMPLE(u_acosh, acoshf(v))
DEF_SIMPLE(u_atanh, atanhf(v))
#ifdef HAVE_AVX2
/*
 * cosh |x| = (e^x + e^-x) / 2, and past 80 e^|x| / 2 computed so that it
 * overflows only where cosh does; sinh the same past 0.5 with its sign,
 * and its Taylor series to x^11 below 0.5.
 */
/* e^a / 2 as (e^(a/2))^2 / 2: finite up to where it is above FLT_MAX. */
static inline __m256
v_halfexp(__m256 a)
{
	__m256 h = v_exp(_mm256_mul_ps(V1(0.5f), a));

	return _mm256_mul_ps(_mm256_mul_ps(V1(0.5f), h), h);
}

static inline __m256
v_cosh(__m256 v)
{
	__m256 a = _mm256_andnot_ps(V1(-0.0f), v), e = v_exp(a);
	__m256 r = _mm256_mul_ps(V1(0.5f), _mm256_add_ps(e,
	    _mm256_div_ps(V1(1.0f), e)));
	__m256 big = _mm256_cmp_ps(a, V1(80.0f), _CMP_GT_OQ);

	if (_mm256_movemask_ps(big))
		r = _mm256_blendv_ps(r, v_halfexp(a), big);
	return r;
}

static inline __m256
v_sinh(__m256 v)
{
	__m256 sg = _mm256_and_ps(V1(-0.0f), v);
	__m256 a = _mm256_andnot_ps(V1(-0.0f), v), e = v_exp(a);
	__m256 r = _mm256_mul_ps(V1(0.5f), _mm256_sub_ps(e,
	    _mm256_div_ps(V1(1.0f), e)));
	__m256 x2 = _mm256_mul_ps(a, a), p;

	if (_mm256_movemask_ps(_mm256_cmp_ps(a, V1(80.0f), _CMP_GT_OQ)))
		r = _mm256_blendv_ps(r, v_halfexp(a), _mm256_cmp_ps(a,
		    V1(80.0f), _CMP_GT_OQ));
	p = _mm256_fmadd_ps(x2, V1(1.0f / 39916800), V1(1.0f / 362880));
	p = _mm256_fmadd_ps(p, x2, V1(1.0f / 5040));
	p = _mm256_fmadd_ps(p, x2, V1(1.0f / 120));
	p = _mm256_fmadd_ps(p, x2, V1(1.0f / 6));
	p = _mm256_fmadd_ps(_mm256_mul_ps(p, x2), a, a);
	r = _mm256_blendv_ps(r, p, _mm256_cmp_ps(a, V1(0.5f), _CMP_LT_OQ));
	return _mm256_or_ps(r, sg);
}

DEF_UNARY(u_sinh, v_sinh(v), sinhf(v))
DEF_UNARY(u_cosh, v_cosh(v), coshf(v))
#else
DEF_UNARY(u_sinh, 0, sinhf(v))
DEF_UNARY(u_cosh, 0, coshf(v))
#endif

static const struct {
	const char *op;
	ufn fn;
} unary_f32[] = {
	{ "Relu", u_relu }, { "LeakyRelu", u_leakyrelu }, { "Clip", u_clip },
	{ "Sigmoid", u_sigmoid }, { "HardSigmoid", u_hardsigmoid },
	{ "HardSwish", u_hardswish }, { "Tanh", u_tanh }, { "Erf", u_erf },
	{ "Sqrt", u_sqrt }, { "Exp", u_exp }, { "Log", u_log },
	{ "Neg", u_neg }, { "Abs", u_abs }, { "Reciprocal", u_reciprocal },
	{ "Floor", u_floor }, { "Ceil", u_ceil }, { "Identity", u_copy },
	{ "Elu", u_elu }, { "Selu", u_selu }, { "Celu", u_celu },
	{ "Softplus", u_softplus }, { "Softsign", u_softsign },
	{ "Round", u_round }, { "ThresholdedRelu", u_thresholdedrelu },
	{ "Shrink", u_shrink }, { "Sign", u_sign }, { "Sin", u_sin },
	{ "Cos", u_cos }, { "Tan", u_tan }, { "Asin", u_asin },
	{ "Acos", u_acos }, { "Atan", u_atan }, { "Sinh", u_sinh },
	{ "Cosh", u_cosh }, { "Asinh", u_asinh }, { "Acosh", u_acosh },
	{ "Atanh", u_atanh },
};

static ufn
unary_find(const char *op)
{
	size_t i;

	for (i = 0; i < sizeof(unary_f32) / sizeof(unary_f32[0]); i++)
		if (strcmp(unary_f32[i].op, op) == 0)
			return unary_f32[i].fn;
	return NULL;
}

/* The parameters of unary float op n, from its attributes. */
static void
unary_params(const aoe_node *n, struct uprm *p)
{
	p->vec = DEF_VEC;
	p->a = p->b = 0.0f;
	if (strcmp(n->op_type, "LeakyRelu") == 0)
		p->a = aoe_attr_float(n, "alpha", 0.01f);
	else if (strcmp(n->op_type, "HardSigmoid") == 0) {
		p->a = aoe_attr_float(n, "alpha", 0.2f);
		p->b = aoe_attr_float(n, "beta", 0.5f);
	} else if (strcmp(n->op_type, "Elu") == 0 ||
	    strcmp(n->op_type, "Celu") == 0 ||
	    strcmp(n->op_type, "ThresholdedRelu") == 0)
		p->a = aoe_attr_float(n, "alpha", 1.0f);
	else if (strcmp(n->op_type, "Selu") == 0) {
		p->a = aoe_attr_float(n, "alpha", 1.67326319217681884765625f);
		p->b = aoe_attr_float(n, "gamma", 1.05070102214813232421875f);
	} else if (strcmp(n->op_type, "Shrink") == 0) {
		p->a = aoe_attr_float(n, "lambd", 0.5f);
		p->b = aoe_attr_float(n, "bias", 0.0f);
	}
}

/* One tile of a unary kernel. */
struct utile_ctx {
	ufn fn;
	float *o;
	const float *x;
	int64_t n, tile;
	const struct uprm *p;
};

static void
utile_chunk(void *arg, int64_t t, int tid)
{
	const struct utile_ctx *c = arg;
	int64_t i0 = t * c->tile;
	int64_t m = c->n - i0 < c->tile ? c->n - i0 : c->tile;

	c->fn(c->o + i0, c->x + i0, m, c->p);
}

/* Run a float32 unary kernel over n elements, in parallel tiles. */
static void
unary_apply(ufn fn, float *o, const float *x, int64_t n,
    const struct uprm *p, const aoe_kctx *k)
{
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int64_t tile = aoe_sched_get(k->sched, "tile", DEF_TILE);
	int64_t ntiles;
	int nt = nthreads_for(n, grain, k->nthreads);

	if (tile < 64)
		tile = 64;
	if (nt == 1 && n <= tile) {
		fn(o, x, n, p);
		return;
	}
	ntiles = (n + tile - 1) / tile;
	{
		struct utile_ctx c = { fn, o, x, n, tile, p };

		aoe_parallel(nt, ntiles, utile_chunk, &c);
	}
}

/*
 * Integer Neg, Abs and Relu (opset 13/14 allow the signed integers).
 * Negation wraps, as two's complement does.
 */
#define INT_UNARY(T, UT)						\
static void								\
iun_##T(int op, void *o_, const void *x_, int64_t n)			\
{									\
	T *o = o_;							\
	const T *x = x_;						\
	int64_t i;							\
									\
	for (i = 0; i < n; i++) {					\
		T v = x[i];						\
		T neg = (T)(UT)(0u - (UT)v);				\
		o[i] = op == 0 ? neg : op == 1 ? (v < 0 ? neg : v) :	\
		    op == 2 ? (v < 0 ? 0 : v) : (T)((v > 0) - (v < 0));	\
	}								\
}
INT_UNARY(int8_t, uint32_t)
INT_UNARY(int16_t, uint32_t)
INT_UNARY(int32_t, uint32_t)
INT_UNARY(int64_t, uint64_t)

static int
unary_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc, dt, intok;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	dt = x->dtype;
	intok = strcmp(n->op_type, "Neg") == 0 ||
	    strcmp(n->op_type, "Abs") == 0 || strcmp(n->op_type, "Relu") == 0 ||
	    strcmp(n->op_type, "Sign") == 0;
	if (dt != AOE_F32 && !(dt == AOE_F16 && x->layout == 0 &&
	    unary_find(n->op_type) != NULL) && !(intok && (dt == AOE_I8 ||
	    dt == AOE_I16 || dt == AOE_I32 || dt == AOE_I64)))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32, float16%s only)", n->op_type, n->name,
		    aoe_dtype_name(dt), intok ? " and signed integers" : "");
	return aoe_set_output(g, n, 0, dt, x->ndim, x->dims);
}

static int
unary_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int64_t numel = stored(x);
	struct uprm p;
	ufn fn;
	int op;

	if (x->dtype == AOE_F16) {
		/* Through float32, converted at the edges (F16C). */
		float *t = malloc((size_t)max64(numel, 1) * sizeof(float));

		if ((fn = unary_find(n->op_type)) == NULL || t == NULL) {
			free(t);
			return aoe_err(fn ? AOE_ENOMEM : AOE_EINTERNAL,
			    "%s '%s': %s", n->op_type, n->name, fn ?
			    "out of memory" : "no kernel");
		}
		h2f_n(x->data, t, numel);
		unary_params(n, &p);
		p.vec = (int)aoe_sched_get(k->sched, "vec", DEF_VEC);
		unary_apply(fn, t, t, numel, &p, k);
		f2h_n(t, y->data, numel);
		free(t);
		return 0;
	}
	if (x->dtype != AOE_F32) {
		op = strcmp(n->op_type, "Neg") == 0 ? 0 :
		    strcmp(n->op_type, "Abs") == 0 ? 1 :
		    strcmp(n->op_type, "Relu") == 0 ? 2 : 3;
		switch (x->dtype) {
		case AOE_I8:
			iun_int8_t(op, y->data, x->data, numel);
			break;
		case AOE_I16:
			iun_int16_t(op, y->data, x->data, numel);
			break;
		case AOE_I32:
			iun_int32_t(op, y->data, x->data, numel);
			break;
		default:
			iun_int64_t(op, y->data, x->data, numel);
			break;
		}
		return 0;
	}
	fn = unary_find(n->op_type);
	if (fn == NULL)
		return aoe_err(AOE_EINTERNAL, "%s '%s': no kernel",
		    n->op_type, n->name);
	unary_params(n, &p);
	p.vec = (int)aoe_sched_get(k->sched, "vec", DEF_VEC);
	unary_apply(fn, y->data, x->data, numel, &p, k);
	return 0;
}

/*
 * Not: bool to bool.
 */
static int
not_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_BOOL)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(bool only)", n->op_type, n->name, aoe_dtype_name(x->dtype));
	return aoe_set_output(g, n, 0, AOE_BOOL, x->ndim, x->dims);
}

static int
not_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	const uint8_t *xs = x->data;
	uint8_t *ys = y->data;
	int64_t i, numel = aoe_tensor_numel(x);

	for (i = 0; i < numel; i++)
		ys[i] = !xs[i];
	return 0;
}

/*
 * IsNaN and IsInf (detect_negative, detect_positive): float to bool.
 */
static int
isx_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 and float64 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	return aoe_set_output(g, n, 0, AOE_BOOL, x->ndim, x->dims);
}

static int
isx_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int nan = strcmp(n->op_type, "IsNaN") == 0;
	int neg = aoe_attr_int(n, "detect_negative", 1) != 0;
	int pos = aoe_attr_int(n, "detect_positive", 1) != 0;
	int64_t i, numel = aoe_tensor_numel(x);
	uint8_t *ys = y->data;

	for (i = 0; i < numel; i++) {
		double v = x->dtype == AOE_F32 ? ((const float *)x->data)[i] :
		    ((const double *)x->data)[i];

		ys[i] = nan ? v != v : (isinf(v) && ((v > 0 && pos) ||
		    (v < 0 && neg)));
	}
	return 0;
}

/*
 * Clip.  Before opset 11 min and max are attributes; from 11 they are
 * optional scalar inputs (absent, or with an empty name), read when the
 * node runs.  Clip runs on float32 and on the integer types.
 */
static int
clip_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *t;
	int rc, i;

	if ((rc = aoe_need_inputs(g, n, 1, 3)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64 &&
	    !is_int_type(x->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported",
		    n->op_type, n->name, aoe_dtype_name(x->dtype));
	if (g->opset < 11 && x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "before opset 11", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	for (i = 1; i < n->nin; i++) {
		if ((t = opt_in(g, n, i)) == NULL)
			continue;
		if (t->dtype != x->dtype)
			return aoe_err(AOE_EDATA, "%s '%s': %s is %s, the input "
			    "is %s", n->op_type, n->name, i == 1 ? "min" :
			    "max", aoe_dtype_name(t->dtype),
			    aoe_dtype_name(x->dtype));
		if (aoe_tensor_numel(t) != 1)
			return aoe_err(AOE_EDATA, "%s '%s': %s must be a scalar",
			    n->op_type, n->name, i == 1 ? "min" : "max");
	}
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

#define CLIP_INT(T, LO, HI)						\
static void								\
clip_##T(void *o_, const void *x_, int64_t n, const void *lo_,		\
    const void *hi_)							\
{									\
	T *o = o_;							\
	const T *x = x_;						\
	T lo = lo_ ? *(const T *)lo_ : (LO);				\
	T hi = hi_ ? *(const T *)hi_ : (HI);				\
	int64_t i;							\
									\
	for (i = 0; i < n; i++) {					\
		T v = x[i] < lo ? lo : x[i];				\
		o[i] = v > hi ? hi : v;					\
	}								\
}
CLIP_INT(int8_t, INT8_MIN, INT8_MAX)
CLIP_INT(int16_t, INT16_MIN, INT16_MAX)
CLIP_INT(int32_t, INT32_MIN, INT32_MAX)
CLIP_INT(int64_t, INT64_MIN, INT64_MAX)
CLIP_INT(uint8_t, 0, UINT8_MAX)
CLIP_INT(uint16_t, 0, UINT16_MAX)
CLIP_INT(uint32_t, 0, UINT32_MAX)
CLIP_INT(uint64_t, 0, UINT64_MAX)
CLIP_INT(double, -INFINITY, INFINITY)

/* A float Clip's bounds: attributes before opset 11, else inputs. */
static void
clip_bounds(const aoe_graph *g, const aoe_node *n, struct uprm *p)
{
	const aoe_tensor *tlo = opt_in(g, n, 1), *thi = opt_in(g, n, 2);

	p->vec = 1;
	if (g->opset < 11) {
		p->a = aoe_attr_float(n, "min", -FLT_MAX);
		p->b = aoe_attr_float(n, "max", FLT_MAX);
	} else {
		p->a = tlo ? *(const float *)tlo->data : -INFINITY;
		p->b = thi ? *(const float *)thi->data : INFINITY;
	}
}

static int
clip_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	aoe_tensor *tlo = opt_in(k->g, n, 1), *thi = opt_in(k->g, n, 2);
	const void *lo = tlo ? tlo->data : NULL, *hi = thi ? thi->data : NULL;
	int64_t numel = stored(x);
	struct uprm p;

	switch (x->dtype) {
	case AOE_F32:
		clip_bounds(k->g, n, &p);
		unary_apply(u_clip, y->data, x->data, numel, &p, k);
		break;
	case AOE_F64:
		clip_double(y->data, x->data, numel, lo, hi);
		break;
	case AOE_I8:
		clip_int8_t(y->data, x->data, numel, lo, hi);
		break;
	case AOE_I16:
		clip_int16_t(y->data, x->data, numel, lo, hi);
		break;
	case AOE_I32:
		clip_int32_t(y->data, x->data, numel, lo, hi);
		break;
	case AOE_I64:
		clip_int64_t(y->data, x->data, numel, lo, hi);
		break;
	case AOE_U8:
		clip_uint8_t(y->data, x->data, numel, lo, hi);
		break;
	case AOE_U16:
		clip_uint16_t(y->data, x->data, numel, lo, hi);
		break;
	case AOE_U32:
		clip_uint32_t(y->data, x->data, numel, lo, hi);
		break;
	default:
		clip_uint64_t(y->data, x->data, numel, lo, hi);
		break;
	}
	return 0;
}

/*
 * The broadcast plan: the output shape collapsed into runs, with each
 * input's element stride per dimension (0 where it is broadcast).
 */
#define MAXIN 3

struct bplan {
	int nd;			/* collapsed rank, >= 1 */
	int nin;
	int64_t dims[AOE_MAXDIM];
	int64_t st[MAXIN][AOE_MAXDIM];
	int64_t total;
};

static void
bplan_make(struct bplan *p, int nin, aoe_tensor *const *in, int ond,
    const int64_t *odims)
{
	int64_t st[MAXIN][AOE_MAXDIM], run;
	int i, j, d, nd;

	p->nin = nin;
	p->total = 1;
	for (d = 0; d < ond; d++)
		p->total *= odims[d];
	for (j = 0; j < nin; j++) {
		const aoe_tensor *t = in[j];
		int off = ond - t->ndim;

		run = 1;
		for (d = ond - 1; d >= 0; d--) {
			int64_t td = d >= off ? t->dims[d - off] : 1;

			st[j][d] = td == 1 ? 0 : run;
			run *= td;
		}
	}
	/* Drop size-1 dimensions, then merge contiguous neighbours. */
	nd = 0;
	for (d = 0; d < ond; d++) {
		if (odims[d] == 1)
			continue;
		if (nd > 0) {
			int ok = 1;

			for (j = 0; j < nin; j++)
				if (p->st[j][nd - 1] != st[j][d] * odims[d])
					ok = 0;
			if (ok) {
				p->dims[nd - 1] *= odims[d];
				for (j = 0; j < nin; j++)
					p->st[j][nd - 1] = st[j][d];
				continue;
			}
		}
		p->dims[nd] = odims[d];
		for (j = 0; j < nin; j++)
			p->st[j][nd] = st[j][d];
		nd++;
	}
	if (nd == 0) {
		p->dims[0] = 1;
		for (j = 0; j < nin; j++)
			p->st[j][0] = 1;
		nd = 1;
	}
	p->nd = nd;
	for (i = nin; i < MAXIN; i++)
		for (d = 0; d < nd; d++)
			p->st[i][d] = 0;
}

/*
 * An inner loop: n output elements from operands that advance by one
 * element (s* = 1) or stay put (s* = 0).
 */
typedef void (*bfn)(void *o, const void *a, const void *b, const void *c,
    int64_t n, int sa, int sb, int sc, const void *prm);

/* One of nparts equal parts of a broadcast loop. */
struct bpart_ctx {
	const struct bplan *p;
	bfn fn;
	void *o;
	size_t eo;
	const void *const *in;
	const size_t *es;
	const void *prm;
	int64_t nparts;
};

static void
bpart_chunk(void *arg, int64_t part, int tid)
{
	const struct bpart_ctx *c = arg;
	const struct bplan *p = c->p;
	const int64_t total = p->total, L = p->dims[p->nd - 1];
	const int64_t t = part, ntt = c->nparts;
	int d, j, nd = p->nd;
	int64_t e0, e1, row, jj, idx[AOE_MAXDIM], off[MAXIN];
	const char *ptr[MAXIN];
	int s[MAXIN];

	e0 = total / ntt * t + (t < total % ntt ? t : total % ntt);
	e1 = e0 + total / ntt + (t < total % ntt);
	row = e0 / L;
	jj = e0 % L;
	for (j = 0; j < MAXIN; j++) {
		off[j] = 0;
		s[j] = j < p->nin ? (p->st[j][nd - 1] != 0) : 0;
	}
	for (d = nd - 2; d >= 0; d--) {
		idx[d] = row % p->dims[d];
		row /= p->dims[d];
		for (j = 0; j < p->nin; j++)
			off[j] += idx[d] * p->st[j][d];
	}
	for (j = 0; j < p->nin; j++)
		off[j] += jj * p->st[j][nd - 1];
	while (e0 < e1) {
		int64_t cnt = L - jj < e1 - e0 ? L - jj : e1 - e0;

		for (j = 0; j < MAXIN; j++)
			ptr[j] = j < p->nin ?
			    (const char *)c->in[j] + off[j] * c->es[j] : NULL;
		c->fn((char *)c->o + e0 * c->eo, ptr[0], ptr[1], ptr[2], cnt,
		    s[0], s[1], s[2], c->prm);
		e0 += cnt;
		if (e0 >= e1)
			break;
		/* Next row: rewind the run, step the odometer. */
		for (j = 0; j < p->nin; j++)
			off[j] -= jj * p->st[j][nd - 1];
		jj = 0;
		for (d = nd - 2; d >= 0; d--) {
			for (j = 0; j < p->nin; j++)
				off[j] += p->st[j][d];
			if (++idx[d] < p->dims[d])
				break;
			for (j = 0; j < p->nin; j++)
				off[j] -= idx[d] * p->st[j][d];
			idx[d] = 0;
		}
	}
}

static void
bplan_run(const struct bplan *p, bfn fn, void *o, size_t eo,
    const void *const *in, const size_t *es, const void *prm,
    int nthreads, int64_t grain)
{
	int64_t total = p->total;
	int nt = nthreads_for(total, grain, nthreads);
	struct bpart_ctx c = { p, fn, o, eo, in, es, prm, 1 };

	if (total == 0)
		return;
	c.nparts = aoe_nchunks(total, nt);
	aoe_parallel(nt, c.nparts, bpart_chunk, &c);
}

/*
 * Binary kernels for every (op, type).  T is the element type, UT the
 * type arithmetic is done in (unsigned for the integers, so that overflow
 * wraps instead of being undefined), TO the output type.
 */
#define BIN_BODY(T, TO, EXPR) do {					\
	TO *po = o_;							\
	const T *pa = a_, *pb = b_;					\
	int64_t i;							\
	(void)c_; (void)sc; (void)prm;					\
	if (sa && sb) {							\
		for (i = 0; i < n; i++) {				\
			T x = pa[i], y = pb[i];				\
			po[i] = (EXPR);					\
		}							\
	} else if (sa) {						\
		T y = pb[0];						\
		for (i = 0; i < n; i++) {				\
			T x = pa[i];					\
			po[i] = (EXPR);					\
		}							\
	} else if (sb) {						\
		T x = pa[0];						\
		for (i = 0; i < n; i++) {				\
			T y = pb[i];					\
			po[i] = (EXPR);					\
		}							\
	} else {							\
		T x = pa[0], y = pb[0];					\
		TO r = (EXPR);						\
		for (i = 0; i < n; i++)					\
			po[i] = r;					\
	}								\
} while (0)

#define DEF_BIN(name, T, TO, EXPR)					\
static void								\
name(void *o_, const void *a_, const void *b_, const void *c_,		\
    int64_t n, int sa, int sb, int sc, const void *prm)			\
{									\
	BIN_BODY(T, TO, EXPR);						\
}

/* Arithmetic by kind: F float, S signed, U unsigned integer. */
#define ADD_E(K, T, UT) ((T)((UT)x + (UT)y))
#define SUB_E(K, T, UT) ((T)((UT)x - (UT)y))
#define MUL_E(K, T, UT) ((T)((UT)x * (UT)y))
#define DIV_F(T, UT) (x / y)
#define DIV_S(T, UT) (y == 0 ? (T)0 : y == -1 ? (T)(0u - (UT)x) : (T)(x / y))
#define DIV_U(T, UT) (y == 0 ? (T)0 : (T)(x / y))
#define DIV_E(K, T, UT) DIV_##K(T, UT)
#define MAX_F (x != x ? x : y != y ? y : x < y ? y : x)
#define MAX_S (x < y ? y : x)
#define MAX_U (x < y ? y : x)
#define MIN_F (x != x ? x : y != y ? y : y < x ? y : x)
#define MIN_S (y < x ? y : x)
#define MIN_U (y < x ? y : x)
#define MAX_E(K, T, UT) MAX_##K
#define MIN_E(K, T, UT) MIN_##K

/* The numeric types: suffix, C type, arithmetic type, kind, code. */
#define FOR_TYPES(X, OP)						\
	X(OP, f32, float, float, F, AOE_F32)				\
	X(OP, f64, double, double, F, AOE_F64)				\
	X(OP, i8, int8_t, uint32_t, S, AOE_I8)				\
	X(OP, i16, int16_t, uint32_t, S, AOE_I16)			\
	X(OP, i32, int32_t, uint32_t, S, AOE_I32)			\
	X(OP, i64, int64_t, uint64_t, S, AOE_I64)			\
	X(OP, u8, uint8_t, uint32_t, U, AOE_U8)				\
	X(OP, u16, uint16_t, uint32_t, U, AOE_U16)			\
	X(OP, u32, uint32_t, uint32_t, U, AOE_U32)			\
	X(OP, u64, uint64_t, uint64_t, U, AOE_U64)

#define X_ARITH(OP, sfx, T, UT, K, code)				\
	DEF_BIN(b_##OP##_##sfx, T, T, OP##_E(K, T, UT))
#define X_CMP(OP, sfx, T, UT, K, code)					\
	DEF_BIN(b_##OP##_##sfx, T, uint8_t, OP##_E(K, T, UT))
#define X_ENTRY(OP, sfx, T, UT, K, code) [code] = b_##OP##_##sfx,

#define EQ_E(K, T, UT) (x == y)
#define LT_E(K, T, UT) (x < y)
#define GT_E(K, T, UT) (x > y)
#define LE_E(K, T, UT) (x <= y)
#define GE_E(K, T, UT) (x >= y)

FOR_TYPES(X_ARITH, ADD)
FOR_TYPES(X_ARITH, SUB)
FOR_TYPES(X_ARITH, MUL)
FOR_TYPES(X_ARITH, DIV)
FOR_TYPES(X_ARITH, MAX)
FOR_TYPES(X_ARITH, MIN)
FOR_TYPES(X_CMP, EQ)
FOR_TYPES(X_CMP, LT)
FOR_TYPES(X_CMP, GT)
FOR_TYPES(X_CMP, LE)
FOR_TYPES(X_CMP, GE)

/*
 * float16: each element converted to float32, computed there and, for
 * arithmetic, rounded back once (as numpy computes float16).
 */
#define DEF_BIN_H(name, TO, CONV, EXPR)					\
static void								\
name(void *o_, const void *a_, const void *b_, const void *c_,		\
    int64_t n, int sa, int sb, int sc, const void *prm)			\
{									\
	TO *po = o_;							\
	const uint16_t *pa = a_, *pb = b_;				\
	int64_t i;							\
	(void)c_; (void)sc; (void)prm;					\
	for (i = 0; i < n; i++) {					\
		float x = h2f(pa[sa ? i : 0]), y = h2f(pb[sb ? i : 0]);	\
		po[i] = CONV(EXPR);					\
	}								\
}
#define X_ARITH_H(OP) DEF_BIN_H(b_##OP##_f16, uint16_t, f2h,		\
	OP##_E(F, float, float))
#define X_CMP_H(OP) DEF_BIN_H(b_##OP##_f16, uint8_t, (uint8_t),	\
	OP##_E(F, float, float))
X_ARITH_H(ADD)
X_ARITH_H(SUB)
X_ARITH_H(MUL)
X_ARITH_H(DIV)
X_ARITH_H(MAX)
X_ARITH_H(MIN)
X_CMP_H(EQ)
X_CMP_H(LT)
X_CMP_H(GT)
X_CMP_H(LE)
X_CMP_H(GE)
#define H_ENTRY(OP) [AOE_F16] = b_##OP##_f16

#define NTYPES 14
static const bfn tab_add[NTYPES] = { FOR_TYPES(X_ENTRY, ADD) H_ENTRY(ADD) };
static const bfn tab_sub[NTYPES] = { FOR_TYPES(X_ENTRY, SUB) H_ENTRY(SUB) };
static const bfn tab_mul[NTYPES] = { FOR_TYPES(X_ENTRY, MUL) H_ENTRY(MUL) };
static const bfn tab_div[NTYPES] = { FOR_TYPES(X_ENTRY, DIV) H_ENTRY(DIV) };
static const bfn tab_max[NTYPES] = { FOR_TYPES(X_ENTRY, MAX) H_ENTRY(MAX) };
static const bfn tab_min[NTYPES] = { FOR_TYPES(X_ENTRY, MIN) H_ENTRY(MIN) };
static const bfn tab_eq[NTYPES] = { FOR_TYPES(X_ENTRY, EQ) H_ENTRY(EQ) };
static const bfn tab_lt[NTYPES] = { FOR_TYPES(X_ENTRY, LT) H_ENTRY(LT) };
static const bfn tab_gt[NTYPES] = { FOR_TYPES(X_ENTRY, GT) H_ENTRY(GT) };
static const bfn tab_le[NTYPES] = { FOR_TYPES(X_ENTRY, LE) H_ENTRY(LE) };
static const bfn tab_ge[NTYPES] = { FOR_TYPES(X_ENTRY, GE) H_ENTRY(GE) };

/*
 * Mod: fmod = 1 truncates (C's %, fmod); fmod = 0 takes the sign of the
 * divisor (Python's %), integers only.  A zero divisor gives 0.
 */
static inline int64_t
pymod(int64_t x, int64_t y, int fm)
{
	int64_t r;

	if (y == 0 || y == -1)
		return 0;
	r = x % y;
	if (!fm && r != 0 && ((r < 0) != (y < 0)))
		r += y;
	return r;
}

/*
 * A binary op whose expression may read an int parameter p_ (from prm):
 * Mod's fmod, BitShift's direction.
 */
#define DEF_BINP(name, T, EXPR)						\
static void								\
name(void *o_, const void *a_, const void *b_, const void *c_,		\
    int64_t n, int sa, int sb, int sc, const void *prm)			\
{									\
	T *po = o_;							\
	const T *pa = a_, *pb = b_;					\
	int p_ = *(const int *)prm;					\
	int64_t i;							\
									\
	(void)p_;							\
	for (i = 0; i < n; i++) {					\
		T x = pa[sa ? i : 0], y = pb[sb ? i : 0];		\
		po[i] = EXPR;						\
	}								\
}
#define MOD_F(T) ((T)fmod(x, y))
#define MOD_S(T) ((T)pymod(x, y, p_))
#define MOD_U(T) (y == 0 ? (T)0 : (T)(x % y))
#define X_MOD(OP, sfx, T, UT, K, code) DEF_BINP(b_MOD_##sfx, T, MOD_##K(T))
FOR_TYPES(X_MOD, MOD)
DEF_BIN_H(b_MOD_f16, uint16_t, f2h, fmodf(x, y))
static const bfn tab_mod[NTYPES] = { FOR_TYPES(X_ENTRY, MOD) H_ENTRY(MOD) };

/*
 * BitShift on the unsigned types: p_ is 1 for LEFT, 0 for RIGHT; a shift
 * by the width or more gives 0.
 */
#define SHIFT_E(T) (y >= 8 * sizeof(T) ? (T)0 : p_ ? (T)(x << y) :	\
    (T)(x >> y))
DEF_BINP(b_shift_u8, uint8_t, SHIFT_E(uint8_t))
DEF_BINP(b_shift_u16, uint16_t, SHIFT_E(uint16_t))
DEF_BINP(b_shift_u32, uint32_t, SHIFT_E(uint32_t))
DEF_BINP(b_shift_u64, uint64_t, SHIFT_E(uint64_t))
static const bfn tab_shift[NTYPES] = {
	[AOE_U8] = b_shift_u8, [AOE_U16] = b_shift_u16,
	[AOE_U32] = b_shift_u32, [AOE_U64] = b_shift_u64
};

/* Bool logic, and Equal on bool. */
DEF_BIN(b_and, uint8_t, uint8_t, (x != 0) & (y != 0))
DEF_BIN(b_or, uint8_t, uint8_t, (x != 0) | (y != 0))
DEF_BIN(b_xor, uint8_t, uint8_t, (x != 0) ^ (y != 0))
DEF_BIN(b_eqb, uint8_t, uint8_t, (x != 0) == (y != 0))

/* PRelu: x, then the slope. */
DEF_BIN(b_prelu, float, float, x < 0.0f ? x * y : x)

/*
 * Pow.  float32 ** float32 has its own loop; every other pairing converts
 * both operands to double.
 */
DEF_BIN(b_pow_f32, float, float, powf(x, y))

struct powprm {
	int ta, tb;
};

static inline double
ld_num(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case AOE_F32: return ((const float *)p)[i];
	case AOE_F64: return ((const double *)p)[i];
	case AOE_I8: return ((const int8_t *)p)[i];
	case AOE_I16: return ((const int16_t *)p)[i];
	case AOE_I32: return ((const int32_t *)p)[i];
	case AOE_I64: return (double)((const int64_t *)p)[i];
	case AOE_U8: return ((const uint8_t *)p)[i];
	case AOE_U16: return ((const uint16_t *)p)[i];
	case AOE_U32: return ((const uint32_t *)p)[i];
	case AOE_U64: return (double)((const uint64_t *)p)[i];
	}
	return 0.0;
}

static inline int64_t
ld_int(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case AOE_I8: return ((const int8_t *)p)[i];
	case AOE_I16: return ((const int16_t *)p)[i];
	case AOE_I32: return ((const int32_t *)p)[i];
	case AOE_I64: return ((const int64_t *)p)[i];
	case AOE_U8: return ((const uint8_t *)p)[i];
	case AOE_U16: return ((const uint16_t *)p)[i];
	case AOE_U32: return ((const uint32_t *)p)[i];
	case AOE_U64: return (int64_t)((const uint64_t *)p)[i];
	}
	return (int64_t)ld_num(p, dt, i);
}

/* Integer power by squaring, wrapping on overflow as numpy does. */
static int64_t
ipow(int64_t b, int64_t e)
{
	uint64_t r = 1, x = (uint64_t)b;

	if (e < 0)
		return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
	while (e > 0) {
		if (e & 1)
			r *= x;
		x *= x;
		e >>= 1;
	}
	return (int64_t)r;
}

/* A double to int64 without undefined behaviour out of range. */
static int64_t
d2i(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

static void
b_pow_any(void *o_, const void *a_, const void *b_, const void *c_,
    int64_t n, int sa, int sb, int sc, const void *prm_)
{
	const struct powprm *prm = prm_;
	int64_t i;

	for (i = 0; i < n; i++) {
		int64_t ia = sa ? i : 0, ib = sb ? i : 0;

		if (prm->ta == AOE_F32 || prm->ta == AOE_F64) {
			double r = pow(ld_num(a_, prm->ta, ia),
			    ld_num(b_, prm->tb, ib));

			if (prm->ta == AOE_F32)
				((float *)o_)[i] = (float)r;
			else
				((double *)o_)[i] = r;
		} else {
			int64_t r;

			if (is_int_type(prm->tb))
				r = ipow(ld_int(a_, prm->ta, ia),
				    ld_int(b_, prm->tb, ib));
			else
				r = d2i(pow(ld_num(a_, prm->ta, ia),
				    ld_num(b_, prm->tb, ib)));
			if (prm->ta == AOE_I32)
				((int32_t *)o_)[i] = (int32_t)r;
			else
				((int64_t *)o_)[i] = r;
		}
	}
}

/* Where: condition, x, y (selected by element size). */
#define DEF_WHERE(name, T)						\
static void								\
name(void *o_, const void *c_, const void *a_, const void *b_,		\
    int64_t n, int sc, int sa, int sb, const void *prm)			\
{									\
	T *restrict po = o_;						\
	const uint8_t *pc = c_;						\
	const T *pa = a_, *pb = b_;					\
	int64_t i;							\
									\
	(void)prm;							\
	for (i = 0; i < n; i++)						\
		po[i] = pc[sc ? i : 0] ? pa[sa ? i : 0] : pb[sb ? i : 0]; \
}
DEF_WHERE(w_1, uint8_t)
DEF_WHERE(w_2, uint16_t)
DEF_WHERE(w_4, uint32_t)
DEF_WHERE(w_8, uint64_t)

/* Broadcast copy: used to seed the variadic ops. */
#define DEF_BCOPY(name, T)						\
static void								\
name(void *o_, const void *a_, const void *b_, const void *c_,		\
    int64_t n, int sa, int sb, int sc, const void *prm)			\
{									\
	T *restrict po = o_;						\
	const T *pa = a_;						\
	int64_t i;							\
									\
	for (i = 0; i < n; i++)						\
		po[i] = pa[sa ? i : 0];					\
}
DEF_BCOPY(c_1, uint8_t)
DEF_BCOPY(c_2, uint16_t)
DEF_BCOPY(c_4, uint32_t)
DEF_BCOPY(c_8, uint64_t)

/* Scale by 1/n for Mean: float types and integer division otherwise. */
static void
scale_mean(void *o, int dt, int64_t numel, int cnt)
{
	int64_t i;

	for (i = 0; i < numel; i++) {
		switch (dt) {
		case AOE_F32: ((float *)o)[i] /= (float)cnt; break;
		case AOE_F64: ((double *)o)[i] /= cnt; break;
		case AOE_F16: ((uint16_t *)o)[i] = f2h(h2f(((uint16_t *)o)[i]) /
		    (float)cnt); break;
		case AOE_I8: ((int8_t *)o)[i] /= cnt; break;
		case AOE_I16: ((int16_t *)o)[i] /= cnt; break;
		case AOE_I32: ((int32_t *)o)[i] /= cnt; break;
		case AOE_I64: ((int64_t *)o)[i] /= cnt; break;
		case AOE_U8: ((uint8_t *)o)[i] /= cnt; break;
		case AOE_U16: ((uint16_t *)o)[i] /= cnt; break;
		case AOE_U32: ((uint32_t *)o)[i] /= cnt; break;
		case AOE_U64: ((uint64_t *)o)[i] /= cnt; break;
		}
	}
}

/*
 * Binary and variadic ops.
 */
enum { K_ARITH, K_CMP, K_LOGIC, K_POW, K_PRELU, K_WHERE, K_VAR, K_MOD,
    K_SHIFT };

static const struct bop {
	const char *op;
	int kind;
	const bfn *tab;
	bfn fn;
} bops[] = {
	{ "Add", K_ARITH, tab_add, NULL },
	{ "Sub", K_ARITH, tab_sub, NULL },
	{ "Mul", K_ARITH, tab_mul, NULL },
	{ "Div", K_ARITH, tab_div, NULL },
	{ "Mod", K_MOD, tab_mod, NULL },
	{ "BitShift", K_SHIFT, tab_shift, NULL },
	{ "Equal", K_CMP, tab_eq, NULL },
	{ "Less", K_CMP, tab_lt, NULL },
	{ "Greater", K_CMP, tab_gt, NULL },
	{ "LessOrEqual", K_CMP, tab_le, NULL },
	{ "GreaterOrEqual", K_CMP, tab_ge, NULL },
	{ "And", K_LOGIC, NULL, b_and },
	{ "Or", K_LOGIC, NULL, b_or },
	{ "Xor", K_LOGIC, NULL, b_xor },
	{ "Pow", K_POW, NULL, NULL },
	{ "PRelu", K_PRELU, NULL, b_prelu },
	{ "Where", K_WHERE, NULL, NULL },
	{ "Max", K_VAR, tab_max, NULL },
	{ "Min", K_VAR, tab_min, NULL },
	{ "Sum", K_VAR, tab_add, NULL },
	{ "Mean", K_VAR, tab_add, NULL },
};

static const struct bop *
bop_find(const char *op)
{
	size_t i;

	for (i = 0; i < sizeof(bops) / sizeof(bops[0]); i++)
		if (strcmp(bops[i].op, op) == 0)
			return &bops[i];
	return NULL;
}

/* BitShift's direction: 1 LEFT, 0 RIGHT, or an error. */
static int
bshift_left(const aoe_node *n)
{
	const char *d = aoe_attr_str(n, "direction", "");

	if (strcmp(d, "LEFT") == 0)
		return 1;
	if (strcmp(d, "RIGHT") == 0)
		return 0;
	return aoe_err(AOE_EDATA, "%s '%s': direction '%s' is not LEFT or "
	    "RIGHT", n->op_type, n->name, d);
}

static int
bin_infer(aoe_graph *g, aoe_node *n)
{
	const struct bop *b = bop_find(n->op_type);
	aoe_tensor *in[16];
	int64_t dims[AOE_MAXDIM], tmp[AOE_MAXDIM];
	int nd, rc, i, nin, dt, odt;

	if (b == NULL)
		return aoe_err(AOE_EINTERNAL, "%s '%s': no kernel", n->op_type,
		    n->name);
	if (b->kind == K_WHERE)
		rc = aoe_need_inputs(g, n, 3, 3);
	else if (b->kind == K_VAR)
		rc = aoe_need_inputs(g, n, 1, 16);
	else
		rc = aoe_need_inputs(g, n, 2, 2);
	if (rc < 0)
		return rc;
	nin = n->nin;
	for (i = 0; i < nin; i++)
		in[i] = aoe_in(g, n, i);
	/* Types. */
	dt = in[0]->dtype;
	odt = dt;
	switch (b->kind) {
	case K_SHIFT:
		if (bshift_left(n) < 0)
			return -AOE_EDATA;
		if (dt != AOE_U8 && dt != AOE_U16 && dt != AOE_U32 &&
		    dt != AOE_U64)
			return aoe_err(AOE_EDATA, "%s '%s': %s inputs (unsigned "
			    "integers only)", n->op_type, n->name,
			    aoe_dtype_name(dt));
		/* FALLTHROUGH */
	case K_MOD:
		if ((dt == AOE_F32 || dt == AOE_F64 || dt == AOE_F16) &&
		    aoe_attr_int(n, "fmod", 0) != 1)
			return aoe_err(AOE_EDATA, "%s '%s': fmod must be 1 for "
			    "%s inputs", n->op_type, n->name,
			    aoe_dtype_name(dt));
		/* FALLTHROUGH */
	case K_ARITH:
	case K_VAR:
	case K_CMP:
		if (!is_num_type(dt) && dt != AOE_F16 &&
		    !(strcmp(b->op, "Equal") == 0 && dt == AOE_BOOL))
			return aoe_err(AOE_EUNSUP, "%s '%s': %s inputs not "
			    "supported", n->op_type, n->name,
			    aoe_dtype_name(dt));
		for (i = 1; i < nin; i++)
			if (in[i]->dtype != dt)
				return aoe_err(AOE_EDATA, "%s '%s': input types "
				    "differ (%s, %s)", n->op_type, n->name,
				    aoe_dtype_name(dt),
				    aoe_dtype_name(in[i]->dtype));
		if (b->kind == K_CMP)
			odt = AOE_BOOL;
		break;
	case K_LOGIC:
		if (dt != AOE_BOOL || in[1]->dtype != AOE_BOOL)
			return aoe_err(AOE_EUNSUP, "%s '%s': %s inputs not "
			    "supported (bool only)", n->op_type, n->name,
			    aoe_dtype_name(in[1]->dtype == AOE_BOOL ? dt :
			    in[1]->dtype));
		break;
	case K_POW:
		if (dt != AOE_F32 && dt != AOE_F64 && dt != AOE_I32 &&
		    dt != AOE_I64)
			return aoe_err(AOE_EUNSUP, "%s '%s': %s base not "
			    "supported", n->op_type, n->name,
			    aoe_dtype_name(dt));
		if (!is_num_type(in[1]->dtype))
			return aoe_err(AOE_EUNSUP, "%s '%s': %s exponent not "
			    "supported", n->op_type, n->name,
			    aoe_dtype_name(in[1]->dtype));
		break;
	case K_PRELU:
		if (dt != AOE_F32 || in[1]->dtype != AOE_F32)
			return aoe_err(AOE_EUNSUP, "%s '%s': %s input not "
			    "supported (float32 only)", n->op_type, n->name,
			    aoe_dtype_name(dt != AOE_F32 ? dt :
			    in[1]->dtype));
		break;
	case K_WHERE:
		if (dt != AOE_BOOL)
			return aoe_err(AOE_EDATA, "%s '%s': condition is %s, "
			    "not bool", n->op_type, n->name,
			    aoe_dtype_name(dt));
		odt = in[1]->dtype;
		if (in[2]->dtype != odt)
			return aoe_err(AOE_EDATA, "%s '%s': x is %s, y is %s",
			    n->op_type, n->name, aoe_dtype_name(odt),
			    aoe_dtype_name(in[2]->dtype));
		if (aoe_dtype_size(odt) == 0 || odt == AOE_STRING)
			return aoe_err(AOE_EUNSUP, "%s '%s': %s values not "
			    "supported", n->op_type, n->name,
			    aoe_dtype_name(odt));
		break;
	}
	/* Shapes. */
	nd = in[0]->ndim;
	memcpy(dims, in[0]->dims, sizeof(dims));
	for (i = 1; i < nin; i++) {
		memcpy(tmp, dims, sizeof(tmp));
		if ((rc = aoe_broadcast_shape(nd, tmp, in[i]->ndim,
		    in[i]->dims, &nd, dims)) < 0)
			return aoe_err(-rc, "%s '%s': %s", n->op_type, n->name,
			    aoe_errmsg());
	}
	if (b->kind == K_PRELU) {
		/* The slope broadcasts to x, never the other way. */
		if (nd != in[0]->ndim ||
		    memcmp(dims, in[0]->dims, nd * sizeof(int64_t)) != 0)
			return aoe_err(AOE_EDATA, "%s '%s': slope does not "
			    "broadcast to the input", n->op_type, n->name);
	}
	return aoe_set_output(g, n, 0, odt, nd, dims);
}

/* A scalar float exponent, if the Pow's exponent is one element. */
static int
pow_scalar(const aoe_tensor *e, float *v)
{
	if (aoe_tensor_numel(e) != 1 || e->data == NULL)
		return 0;
	*v = (float)ld_num(e->data, e->dtype, 0);
	return 1;
}

static void
pow_scalar_run(float *o, const float *x, int64_t n, float e)
{
	int64_t i;

	if (e == 2.0f)
		for (i = 0; i < n; i++)
			o[i] = x[i] * x[i];
	else if (e == 3.0f)
		for (i = 0; i < n; i++)
			o[i] = x[i] * x[i] * x[i];
	else if (e == 1.0f)
		for (i = 0; i < n; i++)
			o[i] = x[i];
	else if (e == 0.5f)
		for (i = 0; i < n; i++)
			o[i] = sqrtf(x[i]);
	else if (e == -1.0f)
		for (i = 0; i < n; i++)
			o[i] = 1.0f / x[i];
	else if (e == 0.0f)
		for (i = 0; i < n; i++)
			o[i] = 1.0f;
	else
		for (i = 0; i < n; i++)
			o[i] = powf(x[i], e);
}

/*
 * The plan for output y; operands of a blocked y are blocked and of its
 * shape (lib/passes/fuse.c sees to that), so one flat run covers the blocks.
 */
static void
plan_for(struct bplan *p, int nin, aoe_tensor *const *in,
    const aoe_tensor *y)
{
	aoe_tensor flat[MAXIN], *fp[MAXIN];
	int64_t len = stored(y);
	int i;

	if (y->layout == 0) {
		bplan_make(p, nin, in, y->ndim, y->dims);
		return;
	}
	for (i = 0; i < nin; i++) {
		flat[i] = *in[i];
		flat[i].ndim = 1;
		flat[i].dims[0] = len;
		fp[i] = &flat[i];
	}
	bplan_make(p, nin, fp, 1, &len);
}

static int
bin_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	const struct bop *b = bop_find(n->op_type);
	aoe_tensor *in[MAXIN], *y = aoe_out(k->g, n, 0);
	const void *ptr[MAXIN];
	size_t es[MAXIN];
	struct bplan p;
	struct powprm pp;
	int64_t grain = aoe_sched_get(k->sched, "par", DEF_PAR);
	int i, dt, nin, fm;
	bfn fn;
	float e;

	dt = aoe_in(k->g, n, 0)->dtype;
	if (b->kind == K_VAR) {
		size_t sz = aoe_dtype_size(dt);
		bfn cp = sz == 1 ? c_1 : sz == 2 ? c_2 : sz == 4 ? c_4 : c_8;

		in[0] = aoe_in(k->g, n, 0);
		ptr[0] = in[0]->data;
		es[0] = sz;
		plan_for(&p, 1, in, y);
		bplan_run(&p, cp, y->data, sz, ptr, es, NULL, k->nthreads,
		    grain);
		for (i = 1; i < n->nin; i++) {
			in[0] = y;
			in[1] = aoe_in(k->g, n, i);
			ptr[0] = y->data;
			ptr[1] = in[1]->data;
			es[0] = es[1] = sz;
			plan_for(&p, 2, in, y);
			/* In place: each element reads its own slot first. */
			bplan_run(&p, b->tab[dt], y->data, sz, ptr, es, NULL,
			    k->nthreads, grain);
		}
		if (strcmp(b->op, "Mean") == 0 && n->nin > 1)
			scale_mean(y->data, dt, aoe_tensor_numel(y), n->nin);
		return 0;
	}
	nin = b->kind == K_WHERE ? 3 : 2;
	for (i = 0; i < nin; i++) {
		in[i] = aoe_in(k->g, n, i);
		ptr[i] = in[i]->data;
		es[i] = aoe_dtype_size(in[i]->dtype);
	}
	switch (b->kind) {
	case K_ARITH:
	case K_CMP:
		fn = dt == AOE_BOOL ? b_eqb : b->tab[dt];
		break;
	case K_MOD:
	case K_SHIFT:
		fm = b->kind == K_SHIFT ? bshift_left(n) :
		    aoe_attr_int(n, "fmod", 0) != 0;
		plan_for(&p, nin, in, y);
		bplan_run(&p, b->tab[dt], y->data, es[0], ptr, es, &fm,
		    k->nthreads, grain);
		return 0;
	case K_POW:
		if (dt == AOE_F32 && pow_scalar(in[1], &e) &&
		    aoe_tensor_numel(y) == aoe_tensor_numel(in[0])) {
			pow_scalar_run(y->data, in[0]->data,
			    aoe_tensor_numel(y), e);
			return 0;
		}
		if (dt == AOE_F32 && in[1]->dtype == AOE_F32)
			fn = b_pow_f32;
		else {
			pp.ta = dt;
			pp.tb = in[1]->dtype;
			plan_for(&p, nin, in, y);
			bplan_run(&p, b_pow_any, y->data, es[0], ptr, es, &pp,
			    k->nthreads, grain);
			return 0;
		}
		break;
	case K_WHERE:
		switch (es[1]) {
		case 1: fn = w_1; break;
		case 2: fn = w_2; break;
		case 4: fn = w_4; break;
		default: fn = w_8; break;
		}
		break;
	default:
		fn = b->fn;
		break;
	}
	plan_for(&p, nin, in, y);
	bplan_run(&p, fn, y->data, aoe_dtype_size(y->dtype), ptr, es, NULL,
	    k->nthreads, grain);
	return 0;
}

/*
 * AoeElemChain: a run of element-wise float nodes that lib/passes/fuse.c made
 * one (decision fuse_elem), computed a tile at a time in a buffer that
 * stays in L1: input 0 is the value the chain starts from, and each
 * step applies a unary op to it, or a binary one with a scalar or
 * another input of the same shape.  Attributes, one entry a step:
 * "ops" (the op types), "pa" and "pb" (a unary op's parameters, as
 * aoe_elem_step gives them), "arg" (-1 unary, -2 the scalar "scal", or
 * the input index), "side" (1 when the value is the right operand), and
 * for an input, "div" and "mod": element i of the chain reads element
 * (i / div) % mod of it (a broadcast as one block of dimensions).
 */
#define CHAIN_TILE 1024

struct cstep {
	ufn fn;			/* unary, or NULL */
	bfn bf;			/* binary */
	struct uprm p;
	int arg, side;
	float scal;
	int64_t div, mod;
};

struct chain {
	int ns;
	struct cstep st[];
};

int
aoe_elem_step(const aoe_graph *g, const aoe_node *n, float *pa, float *pb)
{
	static const char *const bin[] = { "Add", "Sub", "Mul", "Div", "Max",
	    "Min" };
	const aoe_tensor *x = opt_in(g, n, 0), *y = aoe_out(g, n, 0);
	struct uprm p;
	size_t i;

	if (n->domain || n->nout != 1 || x == NULL || y == NULL ||
	    x->dtype != AOE_F32 || y->dtype != AOE_F32)
		return 0;
	if (strcmp(n->op_type, "Clip") == 0) {
		for (i = 1; i < (size_t)n->nin && i < 3; i++)
			if (opt_in(g, n, (int)i) && (opt_in(g, n,
			    (int)i)->kind != AOE_T_CONST || aoe_tensor_numel(
			    opt_in(g, n, (int)i)) != 1))
				return 0;
		clip_bounds(g, n, &p);
		*pa = p.a;
		*pb = p.b;
		return 1;
	}
	if (n->nin == 1 && unary_find(n->op_type) != NULL &&
	    strcmp(n->op_type, "Identity") != 0) {
		unary_params(n, &p);
		*pa = p.a;
		*pb = p.b;
		return 1;
	}
	for (i = 0; i < sizeof(bin) / sizeof(bin[0]); i++)
		if (n->nin == 2 && strcmp(n->op_type, bin[i]) == 0 &&
		    opt_in(g, n, 1)->dtype == AOE_F32)
			return 2;
	return 0;
}

static char *const *
attr_strings(const aoe_node *n, const char *name, int *cnt)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	if (a == NULL || a->type != AOE_A_STRINGS)
		return NULL;
	*cnt = a->n;
	return a->strings;
}

/* Attribute name of n when it has cnt values, else NULL. */
static const int64_t *
ints_n(const aoe_node *n, const char *name, int cnt)
{
	int m;
	const int64_t *v = aoe_attr_ints(n, name, &m);

	return v && m == cnt ? v : NULL;
}

static const float *
floats_n(const aoe_node *n, const char *name, int cnt)
{
	int m;
	const float *v = aoe_attr_floats(n, name, &m);

	return v && m == cnt ? v : NULL;
}

static void
chain_free(void *p)
{
	free(p);
}

static int
chain_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x = opt_in(g, n, 0), *t;
	const int64_t *arg, *dv, *md;
	int cnt, i;

	if (x == NULL || x->dtype != AOE_F32 || n->nout != 1 ||
	    attr_strings(n, "ops", &cnt) == NULL || cnt < 1 ||
	    (arg = ints_n(n, "arg", cnt)) == NULL)
		return aoe_err(AOE_EDATA, "AoeElemChain '%s': needs a float "
		    "input and the attributes ops and arg, one a step",
		    n->name);
	dv = ints_n(n, "div", cnt);
	md = ints_n(n, "mod", cnt);
	for (i = 0; i < cnt; i++) {
		if (arg[i] < 0)
			continue;
		if (arg[i] >= n->nin || (t = opt_in(g, n, (int)arg[i])) ==
		    NULL || t->dtype != AOE_F32 ||
		    (dv ? dv[i] : 1) * (md ? md[i] : aoe_tensor_numel(x)) >
		    aoe_tensor_numel(x) || (md ? md[i] :
		    aoe_tensor_numel(x)) != aoe_tensor_numel(t))
			return aoe_err(AOE_EDATA, "AoeElemChain '%s': step %d "
			    "reads no float input that broadcasts to the "
			    "chain's shape", n->name, i);
	}
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

static int
chain_prepare(aoe_graph *g, aoe_node *n)
{
	const int64_t *arg, *side, *dv, *md;
	const float *pa, *pb, *scal;
	char *const *ops;
	struct chain *c;
	int cnt = 0, i;

	(void)g;
	ops = attr_strings(n, "ops", &cnt);
	arg = ints_n(n, "arg", cnt);
	side = ints_n(n, "side", cnt);
	pa = floats_n(n, "pa", cnt);
	pb = floats_n(n, "pb", cnt);
	scal = floats_n(n, "scal", cnt);
	dv = ints_n(n, "div", cnt);
	md = ints_n(n, "mod", cnt);
	c = aoe_xcalloc(1, sizeof(*c) + (size_t)cnt * sizeof(c->st[0]));
	c->ns = cnt;
	for (i = 0; i < cnt; i++) {
		struct cstep *s = &c->st[i];
		const struct bop *b;
		s->arg = (int)arg[i];
		s->side = side ? (int)side[i] : 0;
		s->scal = scal ? scal[i] : 0;
		s->div = dv && dv[i] > 0 ? dv[i] : 1;
		s->mod = md && md[i] > 0 ? md[i] : INT64_MAX;
		s->p.vec = DEF_VEC;
		s->p.a = pa ? pa[i] : 0;
		s->p.b = pb ? pb[i] : 0;
		if (s->arg == -1)
			s->fn = strcmp(ops[i], "Clip") == 0 ? u_clip :
			    unary_find(ops[i]);
		else if ((b = bop_find(ops[i])) != NULL && (b->kind == K_ARITH ||
		    b->kind == K_VAR))
			s->bf = b->tab[AOE_F32];
		if (s->fn == NULL && s->bf == NULL) {
			free(c);
			return aoe_err(AOE_EDATA, "AoeElemChain '%s': step %d "
			    "(%s) is not an element-wise float op", n->name,
			    i, ops[i]);
		}
	}
	n->priv = c;
	n->priv_free = chain_free;
	return 0;
}

struct chain_ctx {
	const struct chain *c;
	const aoe_graph *g;
	const aoe_node *n;
	float *y;
	int64_t len, numel, ntiles, nch;
};

static void
chain_chunk(void *arg, int64_t ch, int tid)
{
	const struct chain_ctx *x = arg;
	float buf[CHAIN_TILE] __attribute__((aligned(64)));
	float tmp[CHAIN_TILE] __attribute__((aligned(64)));
	const float *x0 = opt_in(x->g, x->n, 0)->data;
	int64_t t, t1 = aoe_chunk_lo(x->ntiles, x->nch, ch + 1);
	int s;

	(void)tid;
	for (t = aoe_chunk_lo(x->ntiles, x->nch, ch); t < t1; t++) {
		int64_t i0 = t * CHAIN_TILE;
		int64_t m = min64(CHAIN_TILE, x->len - i0);

		memcpy(buf, x0 + i0, (size_t)m * sizeof(float));
		for (s = 0; s < x->c->ns; s++) {
			const struct cstep *st = &x->c->st[s];
			const float *o;
			int so;
			if (st->fn) {
				st->fn(buf, buf, m, &st->p);
				continue;
			}
			so = st->arg >= 0;
			if (st->arg < 0)
				o = &st->scal;
			else if (st->div == 1 && st->mod >= x->numel)
				o = (const float *)opt_in(x->g, x->n,
				    st->arg)->data + i0;
			else {
				/*
				 * Runs: of div copies of one value, or
				 * (div 1) of consecutive values up to the
				 * period's end.
				 */
				const float *src = opt_in(x->g, x->n,
				    st->arg)->data;
				int64_t r = i0 % st->div;
				int64_t q = i0 / st->div % st->mod, i = 0, l, j;

				while (i < m) {
					if (st->div == 1) {
						l = min64(st->mod - q, m - i);
						memcpy(tmp + i, src + q,
						    (size_t)l * sizeof(float));
						q = (q + l) % st->mod;
					} else {
						l = min64(st->div - r, m - i);
						for (j = 0; j < l; j++)
							tmp[i + j] = src[q];
						if ((r += l) == st->div) {
							r = 0;
							if (++q == st->mod)
								q = 0;
						}
					}
					i += l;
				}
				o = tmp;
			}
			/* In place: each element reads its own slot first. */
			if (st->side)
				st->bf(buf, o, buf, NULL, m, so, 1, 0, NULL);
			else
				st->bf(buf, buf, o, NULL, m, 1, so, 0, NULL);
		}
		memcpy(x->y + i0, buf, (size_t)m * sizeof(float));
	}
}

static int
chain_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	struct chain_ctx x;
	int nt;

	if (k->n->priv == NULL)
		return aoe_err(AOE_EINTERNAL, "AoeElemChain '%s': not "
		    "prepared", k->n->name);
	x.c = k->n->priv;
	x.g = k->g;
	x.n = k->n;
	x.y = y->data;
	x.len = stored(y);
	x.numel = aoe_tensor_numel(y);
	x.ntiles = ceildiv(x.len, CHAIN_TILE);
	nt = nthreads_for(x.len, aoe_sched_get(k->sched, "par", DEF_PAR),
	    k->nthreads);
	x.nch = aoe_nchunks(x.ntiles, nt);
	if (x.len > 0)
		aoe_parallel(nt, x.nch, chain_chunk, &x);
	return 0;
}

const aoe_op aoe_ops_elem[] = {
	{ "Relu", unary_infer, unary_run, NULL, elem_default_sched },
	{ "AoeElemChain", chain_infer, chain_run, chain_prepare,
	    elem_default_sched },
	{ "LeakyRelu", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Sigmoid", unary_infer, unary_run, NULL, elem_default_sched },
	{ "HardSigmoid", unary_infer, unary_run, NULL, elem_default_sched },
	{ "HardSwish", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Tanh", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Erf", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Sqrt", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Exp", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Log", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Neg", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Abs", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Reciprocal", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Floor", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Ceil", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Elu", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Selu", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Celu", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Softplus", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Softsign", unary_infer, unary_run, NULL, elem_default_sched },
	{ "ThresholdedRelu", unary_infer, unary_run, NULL,
	    elem_default_sched },
	{ "Shrink", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Round", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Sign", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Sin", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Cos", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Tan", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Asin", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Acos", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Atan", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Sinh", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Cosh", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Asinh", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Acosh", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Atanh", unary_infer, unary_run, NULL, elem_default_sched },
	{ "Clip", clip_infer, clip_run, NULL, elem_default_sched },
	{ "Not", not_infer, not_run, NULL, NULL },
	{ "IsNaN", isx_infer, isx_run, NULL, NULL },
	{ "IsInf", isx_infer, isx_run, NULL, NULL },
	{ "Add", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Sub", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Mul", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Div", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Mod", bin_infer, bin_run, NULL, elem_default_sched },
	{ "BitShift", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Pow", bin_infer, bin_run, NULL, elem_default_sched },
	{ "PRelu", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Max", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Min", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Sum", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Mean", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Equal", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Less", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Greater", bin_infer, bin_run, NULL, elem_default_sched },
	{ "LessOrEqual", bin_infer, bin_run, NULL, elem_default_sched },
	{ "GreaterOrEqual", bin_infer, bin_run, NULL, elem_default_sched },
	{ "And", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Or", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Xor", bin_infer, bin_run, NULL, elem_default_sched },
	{ "Where", bin_infer, bin_run, NULL, elem_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};

/* The search space (see aoe_space_for() in space.c and the top). */
int
aoe_space_elem(aoe_space *sp)
{
	const aoe_op *op = sp->op;
	int unary = op != NULL && op->run != bin_run;

	if (aoe_space_add_pow2(sp, "par", 1, 4096, 1048576, DEF_PAR, 1,
	    "elements per thread (0: one thread)") < 0 ||
	    aoe_space_add_pow2(sp, "tile", 0, 1024, 65536, DEF_TILE, unary,
	    "elements per call of the inner loop (unary ops)") < 0)
		return -AOE_EINTERNAL;
	if (aoe_sched_get(&sp->def, "vec", -1) != -1 &&
	    aoe_space_add_pow2(sp, "vec", 1, 1, 1, DEF_VEC, 1,
	    "1 AVX2 polynomial kernels, 0 C library loops") < 0)
		return -AOE_EINTERNAL;
	return 0;
}
