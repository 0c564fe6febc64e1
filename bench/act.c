/*
 * act - the activations' throughput: the fused epilogue over a buffer
 * (aoe_act_apply, lib/kernels/epi.c, what a Conv, Gemm or MatMul runs on
 * its output and the Swish and Gelu operators run alone) and the
 * element-wise operators Sigmoid, Tanh, Erf and Exp and Softmax as
 * one-node graphs.
 *
 *   bench/act [-t threads] [-r rounds] [-s rows x cols] [-m] [name...]
 *
 * The buffer is rows x cols floats (default 96x14400, 5.5 MB, the size
 * of an EfficientNet-B1 activation; -s 96x256 for one that stays in
 * the L2 cache as a kernel's tile does), values uniform in [-8, 8].
 * Rounds are interleaved: each times every row once (the mean of enough
 * calls to last about 4 ms), and the figure is the median over the rounds
 * (-m: the minimum, steadier on a loaded machine), in microseconds a call
 * and in G elements a second.  The ISA is libaoe's own: AOE_MAX_ISA=avx2
 * caps it.  Arguments select rows whose name contains them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"
#include "bench.h"

/* Values uniform in [-8, 8). */
static void
fill(float *p, int64_t n)
{
	fill_range(p, n, -8, 8);
}

/* A row of the table: an epilogue kind, or a one-node graph. */
typedef struct row {
	const char *name;
	int act;		/* aoe_act kind, or -1: the graph */
	const char *op;		/* the graph's operator */
	aoe_graph *g;
	aoe_run_opts o;
	double t[64];
} row;

static int
graph_new(row *r, int64_t rows, int64_t cols, int nthreads)
{
	aoe_graph *g = aoe_graph_new(r->op);
	const int64_t d[] = { rows, cols };
	int x, y;

	g->opset = 17;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 2, d);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs[g->ninputs++] = x;
	y = aoe_graph_tensor(g, "y");
	aoe_graph_add_node(g, "n", r->op, 1, &x, 1, &y);
	g->outputs[g->noutputs++] = y;
	aoe_run_opts_init(&r->o);
	r->o.nthreads = nthreads;
	r->o.use_bank = 0;
	r->g = g;
	if (aoe_graph_prepare(g, &r->o) < 0)
		return -1;
	fill(g->tensors[x]->data, rows * cols);
	return 0;
}

int
main(int argc, char **argv)
{
	static row rw[] = {
		{ "relu", AOE_ACT_RELU, NULL, NULL, { 0 }, { 0 } },
		{ "hardswish", AOE_ACT_HARDSWISH, NULL, NULL, { 0 }, { 0 } },
		{ "sigmoid", AOE_ACT_SIGMOID, NULL, NULL, { 0 }, { 0 } },
		{ "silu", AOE_ACT_SILU, NULL, NULL, { 0 }, { 0 } },
		{ "gelu", AOE_ACT_GELU, NULL, NULL, { 0 }, { 0 } },
		{ "gelu_tanh", AOE_ACT_GELU_TANH, NULL, NULL, { 0 }, { 0 } },
		{ "op:Sigmoid", -1, "Sigmoid", NULL, { 0 }, { 0 } },
		{ "op:Tanh", -1, "Tanh", NULL, { 0 }, { 0 } },
		{ "op:Erf", -1, "Erf", NULL, { 0 }, { 0 } },
		{ "op:Exp", -1, "Exp", NULL, { 0 }, { 0 } },
		{ "op:Softmax", -1, "Softmax", NULL, { 0 }, { 0 } },
	};
	const int nrow = (int)(sizeof(rw) / sizeof(rw[0]));
	int nthreads = 1, rounds = 9, usemin = 0, ch, i, k, use[16];
	int64_t rows = 96, cols = 14400, n;
	float *buf, *src;

	while ((ch = getopt(argc, argv, "t:r:s:m")) != -1)
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 's':
			if (sscanf(optarg, "%ldx%ld", &rows, &cols) != 2)
				goto usage;
			break;
		case 'm': usemin = 1; break;
		default:
		usage:
			fprintf(stderr, "usage: act [-t threads] [-r rounds] "
			    "[-s rows x cols] [-m] [name...]\n");
			return 2;
		}
	if (rounds < 1 || rounds > 64 || nthreads < 1 || rows < 1 ||
	    cols < 1) {
		fprintf(stderr, "act: rounds 1..64, threads and sizes "
		    "positive\n");
		return 2;
	}
	n = rows * cols;
	buf = aligned_alloc(64, (size_t)n * sizeof(float) + 64);
	src = aligned_alloc(64, (size_t)n * sizeof(float) + 64);
	fill(src, n);
	for (i = 0; i < nrow; i++) {
		use[i] = optind == argc;
		for (k = optind; k < argc; k++)
			if (strstr(rw[i].name, argv[k]))
				use[i] = 1;
		if (use[i] && rw[i].act < 0 &&
		    graph_new(&rw[i], rows, cols, nthreads) < 0) {
			fprintf(stderr, "act: %s: %s\n", rw[i].op,
			    aoe_errmsg());
			return 1;
		}
	}
	printf("# %lldx%lld floats, %d thread(s), ISA %s, %d rounds (%s)\n",
	    (long long)rows, (long long)cols, nthreads,
	    aoe_cpu_avx512() ? "avx512" : "avx2", rounds,
	    usemin ? "minima" : "medians");
	for (k = 0; k < rounds; k++)
		for (i = 0; i < nrow; i++) {
			double t0, t1;
			int it = 0;
			aoe_act a;
			if (!use[i])
				continue;
			memset(&a, 0, sizeof(a));
			a.kind = rw[i].act;
			a.lo = 0;
			a.hi = 3.4e38f;
			/*
			 * An epilogue runs in place on fresh values each call
			 * (copied in untimed): SiLU of SiLU of ... would
			 * drift into denormals.
			 */
			t1 = 0;
			do {
				if (rw[i].act >= 0) {
					memcpy(buf, src, (size_t)n *
					    sizeof(float));
					t0 = now();
					aoe_act_apply(&a, buf, NULL, rows, cols,
					    1, nthreads);
				} else {
					t0 = now();
					aoe_graph_run(rw[i].g, &rw[i].o);
				}
				t1 += now() - t0;
				it++;
			} while (t1 < 4e-3 || it < 2);
			rw[i].t[k] = t1 / it;
		}
	for (i = 0; i < nrow; i++) {
		double m;
		if (!use[i])
			continue;
		qsort(rw[i].t, (size_t)rounds, sizeof(double), cmpd);
		m = usemin ? rw[i].t[0] : rounds % 2 ? rw[i].t[rounds / 2] :
		    (rw[i].t[rounds / 2 - 1] + rw[i].t[rounds / 2]) / 2;
		printf("%-12s %10.1f us %7.2f Gelem/s\n", rw[i].name, m * 1e6,
		    n / m * 1e-9);
	}
	return 0;
}
