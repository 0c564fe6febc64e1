/*
 * unit-act - TAP tests of the activations' vector math (kernel.h: the
 * aoe_v8_ functions, v_exp, and their AVX-512 aoe_z16_ forms) against
 * double precision: a dense sweep of [-100, 100] (step 1e-4), values of
 * every binade, and the extremes (+-inf, NaN, +-0, denormals, the
 * arguments where exp under- and overflows) hold the error bounds that
 * kernel.h states, and the sixteen-lane forms give the eight-lane
 * forms' bits (all but exp); the epilogue rows (aoe_epi_row, sixteen
 * lanes where AVX-512 may run) and the Sigmoid, Tanh, Erf and Exp
 * operators hold them too.  tests/unit-act-avx2.t runs it under
 * AOE_MAX_ISA=avx2, where the sixteen-lane checks skip and the rows and
 * operators run on eight.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"
#include "kernel.h"
#include "onenode.h"

enum { F_SIGMOID, F_SILU, F_TANH, F_ERF, F_GELU, F_GELU_TANH, F_EXP, NF };
static const char *const fname[NF] = { "sigmoid", "silu", "tanh", "erf",
    "gelu", "gelu_tanh", "exp" };
/* The bounds kernel.h states: relative, absolute. */
static const double relb[NF] = { 4e-7, 4e-7, 1e-6, 1e-6, 1e-6, 4e-7, 3e-7 };
static const double absb[NF] = { 0, 0, 0, 4e-7, 1.5e-6, 2e-7, 0 };

static double
ref(int f, double x)
{
	switch (f) {
	case F_SIGMOID:
		return 1 / (1 + exp(-x));
	case F_SILU:
		return x == -INFINITY ? 0 : x / (1 + exp(-x));
	case F_TANH:
		return tanh(x);
	case F_ERF:
		return erf(x);
	case F_GELU:
		return x == -INFINITY ? 0 : 0.5 * x * erfc(-x / sqrt(2));
	case F_GELU_TANH:
		if (x == -INFINITY)
			return 0;
		if (x == INFINITY)
			return x;
		return x / (1 + exp(-2 * sqrt(2 / M_PI) *
		    (x + 0.044715 * x * x * x)));
	}
	return exp(x);
}

/* f over n values of x into y, eight lanes at a time. */
static void
run8(int f, const float *x, float *y, int64_t n)
{
	int64_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		__m256 v = _mm256_loadu_ps(x + i);
		switch (f) {
		case F_SIGMOID: v = aoe_v8_sigmoid(v); break;
		case F_SILU: v = aoe_v8_silu(v); break;
		case F_TANH: v = aoe_v8_tanh(v); break;
		case F_ERF: v = aoe_v8_erf(v); break;
		case F_GELU: v = aoe_v8_gelu(v); break;
		case F_GELU_TANH: v = aoe_v8_gelu_tanh(v); break;
		default: v = v_exp(v); break;
		}
		_mm256_storeu_ps(y + i, v);
	}
}

/* The same sixteen at a time (AVX-512F; only where it may run). */
__attribute__((target("avx512f"))) static void
run16(int f, const float *x, float *y, int64_t n)
{
	int64_t i;

	for (i = 0; i + 16 <= n; i += 16) {
		__m512 v = _mm512_loadu_ps(x + i);
		switch (f) {
		case F_SIGMOID: v = aoe_z16_sigmoid(v); break;
		case F_SILU: v = aoe_z16_silu(v); break;
		case F_TANH: v = aoe_z16_tanh(v); break;
		case F_ERF: v = aoe_z16_erf(v); break;
		case F_GELU: v = aoe_z16_gelu(v); break;
		case F_GELU_TANH: v = aoe_z16_gelu_tanh(v); break;
		default: v = aoe_z16_exp(v); break;
		}
		_mm512_storeu_ps(y + i, v);
	}
}

/*
 * Whether got is f(x) to within the bounds; err[0] and err[1] keep the
 * largest relative error and the largest absolute one where |f(x)| <= 1.
 * An infinite or NaN reference must come out exactly; a result of the
 * reference below 1e-35 need only be within 1e-35; the GELUs below 0
 * are held to their absolute bounds (1 + erf cancels in float), the
 * others to their relative bounds.
 */
static float worst_x;

static int
check(int f, float x, float got, double err[2])
{
	double want = ref(f, x), a, r;

	if (isnan(want))
		return isnan(got);
	if (isinf((float)want))
		return got == (float)want;
	if (isnan(got) || isinf(got))
		return 0;
	a = fabs(got - want);
	if (fabs(want) <= 1 && a > err[1])
		err[1] = a;
	if (fabs(want) < 1e-35)
		return a <= 1e-35;
	if ((f == F_GELU || f == F_GELU_TANH) && x < 0)
		return a <= absb[f];
	r = a / fabs(want);
	if (r > err[0]) {
		err[0] = r;
		worst_x = x;
	}
	return r <= relb[f];
}

static const float special[] = {
	0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 1e-40f, -1e-40f,
	1e-45f, -1e-45f, FLT_MIN, -FLT_MIN, FLT_MAX, -FLT_MAX, 88.72283935546875f,
	88.7228394f, 88.73f, 89.0f, -87.33654f, -87.34f, -88.3f, -88.4f,
	-103.97f, -104.0f, -105.0f, 87.3f, 87.4f, 88.3f, 88.4f, 1e30f,
	-1e30f, 3.9f, 4.0f, 4.1f, 7.9f, 8.0f, 9.0f, -5.9f, -8.0f, -9.0f,
	1e-8f, -1e-8f, 0.5f, -0.5f,
};
#define NSPECIAL ((int)(sizeof(special) / sizeof(special[0])))

/* The inputs: the sweep, every binade, the extremes; padded to 16. */
static float *
inputs(int64_t *np)
{
	int64_t n = 2000001 + 2 * 254 * 8 + NSPECIAL, i, k = 0;
	float *x = malloc(sizeof(float) * (size_t)(n + 16));

	for (i = 0; i < 2000001; i++)
		x[k++] = (float)(-100 + i * 1e-4);
	for (i = -126; i < 128; i++) {
		int j;
		for (j = 0; j < 8; j++) {
			float v = ldexpf(1 + (frand() + 1) / 2, (int)i);
			x[k++] = v;
			x[k++] = -v;
		}
	}
	for (i = 0; i < NSPECIAL; i++)
		x[k++] = special[i];
	while (k % 16)
		x[k++] = 0;
	*np = k;
	return x;
}

/* One width's results y of f: the cases beyond the bounds. */
static int
bad_cases(int f, const float *x, const float *y, int64_t n, double err[2],
    const char *what)
{
	int64_t i;
	int bad = 0;

	err[0] = err[1] = 0;
	for (i = 0; i < n; i++)
		if (!check(f, x[i], y[i], err) && bad++ < 3)
			printf("# %s %s(%.9g) = %.9g, want %.9g\n", what,
			    fname[f], x[i], y[i], ref(f, x[i]));
	return bad;
}

/* The epilogue kind of f, or -1. */
static int
epi_of(int f)
{
	static const int m[NF] = { AOE_EPI_SIGMOID, AOE_EPI_SILU, -1, -1,
	    AOE_EPI_GELU, AOE_EPI_GELU_TANH, -1 };

	return m[f];
}

/* The operator of f, or NULL. */
static const char *
op_of(int f)
{
	static const char *const m[NF] = { "Sigmoid", NULL, "Tanh", "Erf",
	    NULL, NULL, "Exp" };

	return m[f];
}

/* f as an operator over x (n values): its output, or NULL. */
static float *
run_op(const char *op, const float *x, int64_t n)
{
	tg t;
	const int64_t d[] = { n };
	float *y = NULL;

	tg_new(&t, op);
	tg_input(&t, 0, 1, d);
	tg_node(&t, op);
	if (tg_prepare(&t) == 0) {
		memcpy(t.g->tensors[t.in[0]]->data, x, sizeof(float) *
		    (size_t)n);
		opts.nthreads = 2;
		if (aoe_graph_run(t.g, &opts) == 0) {
			y = malloc(sizeof(float) * (size_t)n);
			memcpy(y, t.g->tensors[t.y]->data, sizeof(float) *
			    (size_t)n);
		}
	}
	aoe_graph_free(t.g);
	return y;
}

int
main(void)
{
	int64_t n, i;
	float *x = inputs(&n), *y = malloc(sizeof(float) * (size_t)n);
	float *y8 = malloc(sizeof(float) * (size_t)n);
	int wide = aoe_cpu_avx512(), f, bad;
	double err[2];

	for (f = 0; f < NF; f++) {
		run8(f, x, y, n);
		bad = bad_cases(f, x, y, n, err, "8 lanes");
		ok(bad == 0, "%s, 8 lanes: %lld values (sweep of [-100, 100], "
		    "every binade, the extremes) within relative %.1e or "
		    "absolute %.1e (max %.2e at %.7g, %.2e)", fname[f],
		    (long long)n, relb[f], absb[f], err[0], worst_x, err[1]);
		if (!wide) {
			skip("no AVX-512 here (or AOE_MAX_ISA=avx2)", "%s, 16 "
			    "lanes", fname[f]);
			if (f != F_EXP)
				skip("no AVX-512 here (or AOE_MAX_ISA=avx2)",
				    "%s: 16 lanes give the bits 8 lanes do",
				    fname[f]);
			continue;
		}
		run8(f, x, y8, n);
		run16(f, x, y, n);
		bad = bad_cases(f, x, y, n, err, "16 lanes");
		if (f != F_EXP) {
			int64_t diff = 0;
			for (i = 0; i < n; i++)
				diff += memcmp(&y[i], &y8[i], sizeof(float)) != 0;
			ok(diff == 0, "%s: 16 lanes give the bits 8 lanes do "
			    "(%lld of %lld differ)", fname[f], (long long)diff,
			    (long long)n);
		}
		ok(bad == 0, "%s, 16 lanes: %lld values within relative %.1e "
		    "or absolute %.1e (max %.2e at %.7g, %.2e)", fname[f],
		    (long long)n, relb[f], absb[f], err[0], worst_x, err[1]);
	}
	/* The epilogue rows, in pieces of odd lengths (both tails). */
	for (f = 0; f < NF; f++) {
		aoe_epi e;
		int64_t len;
		if (epi_of(f) < 0)
			continue;
		memset(&e, 0, sizeof(e));
		e.kind = epi_of(f);
		memcpy(y, x, sizeof(float) * (size_t)n);
		for (i = 0, len = 1; i < n; i += len, len = len % 97 + 1)
			aoe_epi_row(&e, 0, y + i, NULL, min64(len, n - i));
		bad = bad_cases(f, x, y, n, err, "aoe_epi_row");
		ok(bad == 0, "aoe_epi_row %s (%s): rows of 1 to 97 within the bounds "
		    "(max %.2e, %.2e)", fname[f], wide ? "16 lanes" :
		    "8 lanes", err[0], err[1]);
	}
	for (f = 0; f < NF; f++) {
		float *yo;
		if (op_of(f) == NULL)
			continue;
		yo = run_op(op_of(f), x, n);
		bad = yo ? bad_cases(f, x, yo, n, err, op_of(f)) : 1;
		ok(bad == 0,
		    "%s operator (2 threads) within the bounds (max %.2e, "
		    "%.2e)", op_of(f), err[0], err[1]);
		free(yo);
	}
	free(x);
	free(y);
	free(y8);
	(void)data;
	(void)numel_y;
	(void)attr_f;
	(void)attr_i;
	(void)attr_is;
	return done_testing();
}
