/*
 * unit-half - float16 element-wise kernels and bfloat16 casts against a
 * reference computed in float32 and rounded by the compiler's _Float16:
 * exact for arithmetic, Min, Max, Mod, Relu, Neg, Abs and Sqrt, within
 * one float16 ulp for Exp, Tanh and Sigmoid (whose float32 kernels are
 * within a few float32 ulp); Cast float32 to bfloat16 rounds to nearest
 * even and back is exact.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

#define N 4099		/* not a multiple of a vector */

static uint16_t
bits(_Float16 h)
{
	uint16_t b;

	memcpy(&b, &h, 2);
	return b;
}

static _Float16
half(uint16_t b)
{
	_Float16 h;

	memcpy(&h, &b, 2);
	return h;
}

/* The distance in float16 steps between two finite values' bits. */
static int
ulps(uint16_t a, uint16_t b)
{
	int x = a & 0x8000 ? -(a & 0x7fff) : a, y = b & 0x8000 ?
	    -(b & 0x7fff) : b;

	return abs(x - y);
}

/* A graph of op on nin inputs of dtype dt, shape [N], prepared. */
static aoe_graph *
graph(const char *op, int nin, int dt, int odt, int to)
{
	aoe_graph *g = aoe_graph_new(op);
	aoe_run_opts o;
	int64_t n = N;
	int in[2], y, i, k;

	g->opset = 17;
	g->inputs = aoe_xcalloc(2, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	for (i = 0; i < nin; i++) {
		char name[16];
		snprintf(name, sizeof(name), "x%d", i);
		in[i] = aoe_graph_tensor(g, name);
		aoe_tensor_set(g->tensors[in[i]], dt, 1, &n);
		g->tensors[in[i]]->kind = AOE_T_INPUT;
		g->inputs[g->ninputs++] = in[i];
	}
	y = aoe_graph_tensor(g, "y");
	k = aoe_graph_add_node(g, "node", op, nin, in, 1, &y);
	if (to)
		aoe_node_add_attr(&g->nodes[k], "to", AOE_A_INT)->i = to;
	if (strcmp(op, "Mod") == 0)
		aoe_node_add_attr(&g->nodes[k], "fmod", AOE_A_INT)->i = 1;
	g->outputs[g->noutputs++] = y;
	aoe_run_opts_init(&o);
	o.nthreads = 2;
	o.use_bank = 0;
	if (aoe_graph_prepare(g, &o) < 0 || g->tensors[y]->dtype != odt) {
		aoe_graph_free(g);
		return NULL;
	}
	return g;
}

static void *
in_data(aoe_graph *g, int i)
{
	return g->tensors[g->inputs[i]]->data;
}

static int
run(aoe_graph *g)
{
	aoe_run_opts o;

	aoe_run_opts_init(&o);
	o.nthreads = 2;
	o.use_bank = 0;
	return aoe_graph_run(g, &o);
}

static float
ref1(const char *op, float x)
{
	if (strcmp(op, "Relu") == 0)
		return x > 0 ? x : 0;
	if (strcmp(op, "Neg") == 0)
		return -x;
	if (strcmp(op, "Abs") == 0)
		return fabsf(x);
	if (strcmp(op, "Sqrt") == 0)
		return sqrtf(x);
	if (strcmp(op, "Exp") == 0)
		return expf(x);
	if (strcmp(op, "Tanh") == 0)
		return tanhf(x);
	return 1 / (1 + expf(-x));
}

static float
ref2(const char *op, float x, float y)
{
	switch (op[0] == 'M' ? op[1] : op[0]) {
	case 'A': return x + y;
	case 'S': return x - y;
	case 'u': return x * y;
	case 'D': return x / y;
	case 'a': return x > y ? x : y;
	case 'i': return x < y ? x : y;
	default: return fmodf(x, y);
	}
}

static void
check_unary(const char *op, int tol)
{
	aoe_graph *g = graph(op, 1, AOE_F16, AOE_F16, 0);
	uint16_t *x, *y;
	int i, worst = 0;

	if (g == NULL) {
		ok(0, "%s float16 prepares", op);
		return;
	}
	x = in_data(g, 0);
	for (i = 0; i < N; i++)
		x[i] = bits((_Float16)(strcmp(op, "Sqrt") == 0 ?
		    fabsf(frand()) * 100 : frand() * 8));
	if (run(g) < 0) {
		ok(0, "%s float16 runs", op);
		aoe_graph_free(g);
		return;
	}
	y = g->tensors[g->outputs[0]]->data;
	for (i = 0; i < N; i++) {
		int d = ulps(y[i], bits((_Float16)ref1(op, (float)half(x[i]))));
		worst = d > worst ? d : worst;
	}
	ok(worst <= tol, "%s float16: within %d ulp of float32 rounded once "
	    "(worst %d)", op, tol, worst);
	aoe_graph_free(g);
}

static void
check_binary(const char *op)
{
	aoe_graph *g = graph(op, 2, AOE_F16, AOE_F16, 0);
	uint16_t *a, *b, *y;
	int i, bad = 0;

	if (g == NULL) {
		ok(0, "%s float16 prepares", op);
		return;
	}
	a = in_data(g, 0);
	b = in_data(g, 1);
	for (i = 0; i < N; i++) {
		a[i] = bits((_Float16)(frand() * 100));
		b[i] = bits((_Float16)(frand() * 10 + 0.001f));
	}
	if (run(g) < 0) {
		ok(0, "%s float16 runs", op);
		aoe_graph_free(g);
		return;
	}
	y = g->tensors[g->outputs[0]]->data;
	for (i = 0; i < N; i++)
		if (y[i] != bits((_Float16)ref2(op, (float)half(a[i]),
		    (float)half(b[i]))))
			bad++;
	ok(bad == 0, "%s float16: exact (%d of %d differ)", op, bad, N);
	aoe_graph_free(g);
}

static void
check_bf16(void)
{
	aoe_graph *g = graph("Cast", 1, AOE_F32, AOE_BF16, AOE_BF16), *h;
	float *x;
	uint16_t *y;
	int i, bad = 0, back = 0;

	if (g == NULL || (h = graph("Cast", 1, AOE_BF16, AOE_F32,
	    AOE_F32)) == NULL) {
		ok(0, "Cast to and from bfloat16 prepares");
		aoe_graph_free(g);
		return;
	}
	x = in_data(g, 0);
	for (i = 0; i < N; i++)
		x[i] = frand() * 1000;
	x[0] = 1.00390625f;	/* a tie: stays 1 */
	x[1] = 1.01171875f;	/* a tie: rounds up to even */
	x[2] = NAN;
	if (run(g) < 0) {
		ok(0, "Cast to bfloat16 runs");
		goto out;
	}
	y = g->tensors[g->outputs[0]]->data;
	for (i = 3; i < N; i++) {
		uint32_t u;
		memcpy(&u, &x[i], 4);
		u += 0x7fff + ((u >> 16) & 1);
		if (y[i] != (uint16_t)(u >> 16))
			bad++;
	}
	ok(bad == 0 && y[0] == 0x3f80 && y[1] == 0x3f82 &&
	    (y[2] & 0x7fff) > 0x7f80, "Cast float32 to bfloat16 rounds to "
	    "nearest even, keeps NaN (%d differ)", bad);
	memcpy(in_data(h, 0), y, N * 2);
	if (run(h) < 0) {
		ok(0, "Cast from bfloat16 runs");
		goto out;
	}
	for (i = 3; i < N; i++) {
		uint32_t u = (uint32_t)y[i] << 16;
		float f;
		memcpy(&f, &u, 4);
		if (((float *)h->tensors[h->outputs[0]]->data)[i] != f)
			back++;
	}
	ok(back == 0, "Cast bfloat16 to float32 is exact (%d differ)", back);
	aoe_graph_free(h);
out:
	aoe_graph_free(g);
}

int
main(int argc, char **argv)
{
	static const char *const exact1[] = { "Relu", "Neg", "Abs", "Sqrt" };
	static const char *const approx1[] = { "Exp", "Tanh", "Sigmoid" };
	static const char *const bin[] = { "Add", "Sub", "Mul", "Div", "Max",
	    "Min", "Mod" };
	size_t i;

	aoe_setprogname(argv[0]);
	for (i = 0; i < sizeof(exact1) / sizeof(exact1[0]); i++)
		check_unary(exact1[i], 0);
	for (i = 0; i < sizeof(approx1) / sizeof(approx1[0]); i++)
		check_unary(approx1[i], 1);
	for (i = 0; i < sizeof(bin) / sizeof(bin[0]); i++)
		check_binary(bin[i]);
	check_bf16();
	return done_testing();
}
