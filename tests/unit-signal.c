/*
 * unit-signal - properties of the signal and random kernels
 * (lib/kernels/k_signal.c, k_random.c) beyond ONNX's node tests: the DFT
 * of many lengths against a direct sum, its inverse, the seeded random
 * operators' reproducibility and their distributions.
 *
 * usage: unit-signal		run the checks, print TAP
 *	  unit-signal -w dir	write models with bad nodes into dir for
 *				tests/bad-ops.t
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* A new tensor of g: a graph input, or a constant when data is set. */
static int
tensor(aoe_graph *g, const char *name, int dt, int ndim,
    const int64_t *dims, const void *data)
{
	int i = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[i];

	aoe_tensor_set(t, dt, ndim, dims);
	if (data != NULL) {
		if (aoe_tensor_alloc_const(t) < 0)
			exit(1);
		memcpy(t->data, data, aoe_tensor_nbytes(t));
	} else {
		t->kind = AOE_T_INPUT;
		g->inputs = aoe_xrealloc(g->inputs, (size_t)(g->ninputs + 1) *
		    sizeof(int));
		g->inputs[g->ninputs++] = i;
	}
	return i;
}

/* One node named "node" of op, with output "y" as the graph's output. */
static aoe_node *
node(aoe_graph *g, const char *op, int nin, const int *in)
{
	int y = aoe_graph_tensor(g, "y"), k;

	k = aoe_graph_add_node(g, "node", op, nin, in, 1, &y);
	g->outputs = aoe_xrealloc(g->outputs, (size_t)(g->noutputs + 1) *
	    sizeof(int));
	g->outputs[g->noutputs++] = y;
	return &g->nodes[k];
}

static aoe_graph *
graph(const char *name)
{
	aoe_graph *g = aoe_graph_new(name);

	g->opset = 17;
	return g;
}

/* Two threads, no bank. */
static const aoe_run_opts *
opts(void)
{
	static aoe_run_opts o;

	aoe_run_opts_init(&o);
	o.nthreads = 2;
	o.use_bank = 0;
	return &o;
}

static int
prepare(aoe_graph *g)
{
	return aoe_graph_prepare(g, opts());
}

static int
run(aoe_graph *g)
{
	return aoe_graph_run(g, opts());
}

static float *
out(aoe_graph *g)
{
	return g->tensors[g->outputs[0]]->data;
}

/*
 * The DFT of a complex signal of length n (a [1, n, 2] input) against a
 * direct sum in long double; then the inverse of the result.
 */
static void
check_dft(int64_t n)
{
	int64_t dims[3] = { 1, n, 2 }, j, k;
	float *x = malloc((size_t)n * 2 * sizeof(float)), *y;
	aoe_graph *g = graph("dft"), *h;
	double err = 0, ref = 0, back = 0;
	int in;

	for (j = 0; j < 2 * n; j++)
		x[j] = frand();
	in = tensor(g, "x", AOE_F32, 3, dims, x);
	node(g, "DFT", 1, &in);
	if (prepare(g) < 0 || run(g) < 0) {
		ok(0, "DFT of length %lld runs", (long long)n);
		goto out;
	}
	y = out(g);
	for (k = 0; k < n; k++) {
		long double re = 0, im = 0;

		for (j = 0; j < n; j++) {
			long double a = -2 * 3.14159265358979323846264L *
			    (long double)((j * k) % n) / (long double)n;
			re += x[2 * j] * cosl(a) - x[2 * j + 1] * sinl(a);
			im += x[2 * j] * sinl(a) + x[2 * j + 1] * cosl(a);
		}
		err = fmax(err, fabs((double)re - y[2 * k]));
		err = fmax(err, fabs((double)im - y[2 * k + 1]));
		ref = fmax(ref, fabs((double)re) + fabs((double)im));
	}
	ok(err <= 1e-5 * ref + 1e-6, "DFT of length %lld: largest error %.3g "
	    "of %.3g", (long long)n, err, ref);
	h = graph("idft");
	in = tensor(h, "x", AOE_F32, 3, dims, y);
	aoe_node_add_attr(node(h, "DFT", 1, &in), "inverse",
	    AOE_A_INT)->i = 1;
	if (prepare(h) < 0 || run(h) < 0)
		ok(0, "inverse DFT of length %lld runs", (long long)n);
	else {
		for (j = 0; j < 2 * n; j++)
			back = fmax(back, fabs(out(h)[j] - x[j]));
		ok(back < 1e-5 * sqrt((double)n), "inverse DFT of length %lld "
		    "gives the signal back (error %.3g)", (long long)n, back);
	}
	aoe_graph_free(h);
out:
	aoe_graph_free(g);
	free(x);
}

/* A graph of one random op of shape [n] (Like: of an n-element input). */
static aoe_graph *
random_graph(const char *op, int64_t n, int seeded, float seed,
    const float *p)
{
	aoe_graph *g = graph(op);
	aoe_node *nd;
	int in;

	if (p != NULL) {
		in = tensor(g, "x", AOE_F32, 1, &n, p);
		nd = node(g, op, 1, &in);
	} else {
		nd = node(g, op, 0, NULL);
		aoe_attr *a = aoe_node_add_attr(nd, "shape", AOE_A_INTS);
		a->n = 1;
		a->ints = aoe_xcalloc(1, sizeof(int64_t));
		a->ints[0] = n;
	}
	if (seeded)
		aoe_node_add_attr(nd, "seed", AOE_A_FLOAT)->f = seed;
	if (prepare(g) < 0 || run(g) < 0) {
		aoe_graph_free(g);
		return NULL;
	}
	return g;
}

static int
same(aoe_graph *a, aoe_graph *b, int64_t n)
{
	return a && b && memcmp(out(a), out(b), (size_t)n * 4) == 0;
}

static void
check_random(void)
{
	const int64_t n = 100000;
	aoe_graph *a, *b, *c;
	float *p = malloc((size_t)n * sizeof(float));
	double s = 0, s2 = 0, lo = 1, hi = 0;
	int64_t i;

	a = random_graph("RandomUniform", n, 1, 3, NULL);
	b = random_graph("RandomUniform", n, 1, 3, NULL);
	c = random_graph("RandomUniform", n, 1, 4, NULL);
	ok(same(a, b, n), "RandomUniform: one seed, the same values");
	ok(a && c && !same(a, c, n), "RandomUniform: another seed, other "
	    "values");
	if (a != NULL) {
		for (i = 0; i < n; i++) {
			s += out(a)[i];
			lo = fmin(lo, out(a)[i]);
			hi = fmax(hi, out(a)[i]);
		}
		ok(lo >= 0 && hi < 1 && fabs(s / n - .5) < .01,
		    "RandomUniform: in [0, 1), mean %.4f", s / n);
	}
	aoe_graph_free(a);
	aoe_graph_free(b);
	aoe_graph_free(c);
	a = random_graph("RandomUniform", n, 0, 0, NULL);
	b = random_graph("RandomUniform", n, 0, 0, NULL);
	ok(a && b && !same(a, b, n), "RandomUniform: no seed, other values "
	    "in another graph");
	if (a != NULL && b != NULL) {
		memcpy(out(b), out(a), (size_t)n * 4);
		ok(run(a) == 0 && !same(a, b, n), "RandomUniform: no seed, "
		    "other values at the next run");
	}
	aoe_graph_free(a);
	aoe_graph_free(b);

	a = random_graph("RandomNormal", n, 1, 7, NULL);
	s = 0;
	if (a != NULL)
		for (i = 0; i < n; i++) {
			s += out(a)[i];
			s2 += (double)out(a)[i] * out(a)[i];
		}
	ok(a && fabs(s / n) < .02 && fabs(s2 / n - 1) < .03,
	    "RandomNormal: mean %.4f, variance %.4f", s / n, s2 / n);
	aoe_graph_free(a);

	for (i = 0; i < n; i++)
		p[i] = .3f;
	a = random_graph("Bernoulli", n, 1, 1, p);
	b = random_graph("Bernoulli", n, 1, 1, p);
	s = 0;
	lo = 1;
	if (a != NULL)
		for (i = 0; i < n; i++) {
			s += out(a)[i];
			if (out(a)[i] != 0 && out(a)[i] != 1)
				lo = 0;
		}
	ok(a && lo == 1 && fabs(s / n - .3) < .01, "Bernoulli: 0 or 1, "
	    "frequency %.4f for p 0.3", s / n);
	ok(same(a, b, n), "Bernoulli: one seed, the same values");
	aoe_graph_free(a);
	aoe_graph_free(b);
	free(p);
}

static void
check_multinomial(void)
{
	int64_t dims[2] = { 1, 3 }, i, cnt[3] = { 0, 0, 0 }, bad = 0;
	float logp[3] = { logf(.2f), logf(.5f), logf(.3f) };
	aoe_graph *g = graph("multinomial");
	aoe_node *nd;
	int in;
	const int64_t ns = 30000;

	in = tensor(g, "x", AOE_F32, 2, dims, logp);
	nd = node(g, "Multinomial", 1, &in);
	aoe_node_add_attr(nd, "sample_size", AOE_A_INT)->i = ns;
	aoe_node_add_attr(nd, "seed", AOE_A_FLOAT)->f = 5;
	if (prepare(g) < 0 || run(g) < 0) {
		ok(0, "Multinomial runs");
		aoe_graph_free(g);
		return;
	}
	for (i = 0; i < ns; i++) {
		int32_t v = ((int32_t *)out(g))[i];
		if (v < 0 || v > 2)
			bad++;
		else
			cnt[v]++;
	}
	ok(!bad && fabs((double)cnt[0] / ns - .2) < .015 &&
	    fabs((double)cnt[1] / ns - .5) < .015 &&
	    fabs((double)cnt[2] / ns - .3) < .015, "Multinomial: classes "
	    "%.3f %.3f %.3f for 0.2 0.5 0.3", (double)cnt[0] / ns,
	    (double)cnt[1] / ns, (double)cnt[2] / ns);
	aoe_graph_free(g);
}

/* Bad nodes: each must fail to prepare with its node named. */
static aoe_graph *
bad_model(int which)
{
	static const float f[64];
	aoe_graph *g = graph("bad");
	int64_t d4[4] = { 1, 1, 4, 4 }, d3[3] = { 1, 4, 2 };
	int64_t d2[2] = { 2, 4 }, d1 = 2, zero = 0, step = 8;
	int64_t bidx[2] = { 0, 5 }, d0[1] = { 1 };
	int in[5];
	aoe_node *nd;

	switch (which) {
	case 0:		/* GridSample with a grid of rank 3 */
		in[0] = tensor(g, "x", AOE_F32, 4, d4, NULL);
		in[1] = tensor(g, "grid", AOE_F32, 3, d3, f);
		nd = node(g, "GridSample", 2, in);
		break;
	case 1:		/* DFT with a dft_length of 0 */
		in[0] = tensor(g, "x", AOE_F32, 3, d3, NULL);
		in[1] = tensor(g, "len", AOE_I64, 0, NULL, &zero);
		nd = node(g, "DFT", 2, in);
		break;
	case 2:		/* RoiAlign with batch index 5 of one image */
		in[0] = tensor(g, "x", AOE_F32, 4, d4, NULL);
		in[1] = tensor(g, "rois", AOE_F32, 2, d2, f);
		in[2] = tensor(g, "bi", AOE_I64, 1, &d1, bidx);
		nd = node(g, "RoiAlign", 3, in);
		break;
	case 3:		/* STFT whose frame is longer than the signal */
		in[0] = tensor(g, "x", AOE_F32, 3, d3, NULL);
		in[1] = tensor(g, "step", AOE_I64, 0, NULL, &step);
		in[2] = -1;
		in[3] = tensor(g, "flen", AOE_I64, 1, d0, &step);
		nd = node(g, "STFT", 4, in);
		break;
	default:	/* a GridSample mode that does not exist */
		in[0] = tensor(g, "x", AOE_F32, 4, d4, NULL);
		in[1] = tensor(g, "grid", AOE_F32, 4, (int64_t[]){ 1, 2, 2,
		    2 }, f);
		nd = node(g, "GridSample", 2, in);
		aoe_node_add_attr(nd, "mode", AOE_A_STRING)->s =
		    aoe_xstrdup("trilinear");
		break;
	}
	free(nd->name);
	nd->name = aoe_xstrdup("bad_node");
	return g;
}
#define NBAD 5

/* RoiAlign whose batch indices, a graph input, go out of range at run. */
static void
check_roi_run(void)
{
	static const float rois[4] = { 0, 0, 3, 3 };
	int64_t d4[4] = { 2, 1, 4, 4 }, d2[2] = { 1, 4 }, d1 = 1;
	aoe_graph *g = graph("roi");
	int in[3], rc;

	in[0] = tensor(g, "x", AOE_F32, 4, d4, NULL);
	in[1] = tensor(g, "rois", AOE_F32, 2, d2, rois);
	in[2] = tensor(g, "bi", AOE_I64, 1, &d1, NULL);
	free(node(g, "RoiAlign", 3, in)->name);
	g->nodes[0].name = aoe_xstrdup("roi_node");
	if (prepare(g) < 0) {
		ok(0, "RoiAlign with batch indices as input prepares");
		aoe_graph_free(g);
		return;
	}
	memset(g->tensors[in[0]]->data, 0, 32 * sizeof(float));
	*(int64_t *)g->tensors[in[2]]->data = 1;
	ok(run(g) == 0, "RoiAlign: batch index 1 of 2 images runs");
	*(int64_t *)g->tensors[in[2]]->data = 2;
	rc = run(g);
	ok(rc < 0 && strstr(aoe_errmsg(), "'roi_node'") &&
	    strstr(aoe_errmsg(), "out of range"), "RoiAlign: batch index 2 "
	    "of 2 images fails the run: %s", aoe_errmsg());
	aoe_graph_free(g);
}

int
main(int argc, char **argv)
{
	static const int64_t lens[] = { 1, 2, 3, 5, 8, 13, 64, 97, 100, 360,
	    1000, 1024 };
	char path[4096];
	size_t i;

	aoe_setprogname(argv[0]);
	if (argc == 3 && strcmp(argv[1], "-w") == 0) {
		for (i = 0; i < NBAD; i++) {
			aoe_graph *g = bad_model((int)i);
			snprintf(path, sizeof(path), "%s/bad%zu.onnx", argv[2],
			    i);
			if (aoe_onnx_save(g, path) < 0) {
				fprintf(stderr, "%s\n", aoe_errmsg());
				return 1;
			}
			aoe_graph_free(g);
		}
		return 0;
	}
	for (i = 0; i < sizeof(lens) / sizeof(lens[0]); i++)
		check_dft(lens[i]);
	check_random();
	check_multinomial();
	check_roi_run();
	for (i = 0; i < NBAD; i++) {
		aoe_graph *g = bad_model((int)i);
		int rc = prepare(g);

		ok(rc < 0 && strstr(aoe_errmsg(), "'bad_node'"),
		    "bad node %zu refused: %s", i, aoe_errmsg());
		aoe_graph_free(g);
	}
	return done_testing();
}
