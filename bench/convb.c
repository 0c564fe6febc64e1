/*
 * convb - one Conv (+ bias, an optional residual Add, then a Relu, fused
 * by the graph's passes as in a ResNet) under several schedules,
 * interleaved, for choosing the defaults of the GEMM-based algorithms.
 *
 *   bench/convb [-t threads] [-r rounds] [-w] [-c] [-a] [-p | -P] [-g groups]
 *       SHAPE [SCHED...]
 *
 * SHAPE is Cin>Cout@H[/k][/s] (H the input's height and width, k the
 * square kernel, default 1, s the stride, default 1; the padding is k/2),
 * e.g. 512>2048@7 or 128>128@56/3/2.  Each SCHED is a comma-separated
 * list of knob=value set over the default schedule ("def" alone: the
 * default).  Every round runs each variant once (-r rounds, default 15);
 * each call is timed alone, and unless -w the caches are flushed first
 * (a 64 MB buffer is written, then the input read back), so that the
 * weights come from memory as in a model whose weights exceed the L3,
 * and the input from the cache as when the previous node wrote it.
 * -p has the input rewritten before each call by the pool's threads,
 * a block of its channels each, as a producing node leaves it (by
 * default the calling thread reads it back); -P likewise but a block of
 * each channel's positions each, as a pointwise Conv's GEMM split by
 * columns leaves it.  -a adds the residual
 * Add; -g sets the Conv's groups (-g 0: Cin, a
 * depthwise Conv, e.g. -g 0 '96>96@112/3/2').  Prints each variant's minimum and median
 * (microseconds), GFLOP/s at the minimum and the median over the
 * rounds of its time over the first variant's (x); -c times by the process's
 * CPU time (1 thread on a loaded machine).  The pool's workers spin
 * between calls (AOE_SPIN_US=100000 unless set).  convb-sim is convb on
 * simclock.c's simulated two-core clock (AOE_SIM=1, wall clock only).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"
#include "bench.h"

#define FLUSH_BYTES ((size_t)64 << 20)

/*
 * -p: the input rewritten by the pool's threads, a block of planes each;
 * -P: a block of every plane's positions each, as a pointwise Conv's
 * GEMM split by columns leaves it.
 */
struct prod {
	float *x;
	int64_t planes, plsz;
	int parts, cols;
};

static void
prod_chunk(void *ctx, int64_t c, int tid)
{
	const struct prod *p = ctx;
	int64_t i, n = p->planes, lo = c * n / p->parts;
	int64_t hi = (c + 1) * n / p->parts;

	(void)tid;
	if (p->cols) {
		int64_t q, j0 = c * p->plsz / p->parts;
		int64_t j1 = (c + 1) * p->plsz / p->parts;
		for (q = 0; q < n; q++)
			for (i = q * p->plsz + j0; i < q * p->plsz + j1; i++)
				p->x[i] = p->x[i] * 0.5f + 0.25f;
		return;
	}
	for (i = lo * p->plsz; i < hi * p->plsz; i++)
		p->x[i] = p->x[i] * 0.5f + 0.25f;
}
#define MAXV 12

static void
ints_attr(aoe_node *n, const char *name, int cnt, int64_t v)
{
	aoe_attr *a = aoe_node_add_attr(n, name, AOE_A_INTS);

	a->n = cnt;
	a->ints = aoe_xcalloc(cnt, sizeof(int64_t));
	for (int i = 0; i < cnt; i++)
		a->ints[i] = v;
}

int
main(int argc, char **argv)
{
	int nthreads = 1, rounds = 15, warm = 0, resid = 0, ch, i, r, nv;
	int prodw = 0;
	struct prod pd;
	int grp = 1;
	int c, m, h, k = 1, s = 1, oh, in[3], y, z, rr, ai[2];
	double t[MAXV][64], fl;
	aoe_sched sc[MAXV];
	const char *vname[MAXV];
	unsigned char *flush;
	aoe_run_opts o;
	aoe_graph *g;
	aoe_node *cn = NULL;
	float *x, *yp;

	/*
	 * The pool's workers spin through the flush, as between a model's
	 * nodes: past their 100 us they sleep, and a futex wake took 30 to
	 * 110 us on a PVM guest (Zen 5), which the 2-thread figures carried.
	 */
	setenv("AOE_SPIN_US", "100000", 0);
	int64_t xn, yn;

	while ((ch = getopt(argc, argv, "t:r:wcapPg:")) != -1)
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'w': warm = 1; break;
		case 'c': bench_clk = CLOCK_PROCESS_CPUTIME_ID; break;
		case 'a': resid = 1; break;
		case 'p': prodw = 1; break;
		case 'P': prodw = 2; break;
		case 'g': grp = atoi(optarg); break;
		default:
		usage:
			fprintf(stderr, "usage: convb [-t threads] [-r rounds] "
			    "[-w] [-c] [-a] [-p | -P] [-g groups] Cin>Cout@H[/k][/s] "
			    "[sched...]\n");
			return 2;
		}
	if (optind >= argc || rounds < 1 || rounds > 64)
		goto usage;
	if (sscanf(argv[optind], "%d>%d@%d/%d/%d", &c, &m, &h, &k, &s) < 3)
		goto usage;
	if (grp == 0)
		grp = c;
	if (grp < 1 || c % grp != 0 || m % grp != 0)
		goto usage;
	oh = (h + 2 * (k / 2) - k) / s + 1;
	fl = 2.0 * c / grp * m * k * k * oh * oh;

	g = aoe_graph_new("convb");
	g->opset = 17;
	g->inputs = aoe_xcalloc(2, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	in[0] = bench_input(g, "x", 0, 4, (int64_t[]){ 1, c, h, h }, -0.1,
	    0.1);
	in[1] = bench_input(g, "w", 1, 4, (int64_t[]){ m, c / grp, k, k }, -0.1,
	    0.1);
	in[2] = bench_input(g, "b", 1, 1, (int64_t[]){ m }, -0.1, 0.1);
	y = aoe_graph_tensor(g, "y");
	i = aoe_graph_add_node(g, "conv", "Conv", 3, in, 1, &y);
	ints_attr(&g->nodes[i], "kernel_shape", 2, k);
	ints_attr(&g->nodes[i], "strides", 2, s);
	ints_attr(&g->nodes[i], "pads", 4, k / 2);
	aoe_node_add_attr(&g->nodes[i], "group", AOE_A_INT)->i = grp;
	if (resid) {
		rr = bench_input(g, "res", 0, 4, (int64_t[]){ 1, m, oh, oh },
		    -0.1, 0.1);
		ai[0] = y;
		ai[1] = rr;
		y = aoe_graph_tensor(g, "sum");
		aoe_graph_add_node(g, "add", "Add", 2, ai, 1, &y);
	}
	z = aoe_graph_tensor(g, "z");
	aoe_graph_add_node(g, "relu", "Relu", 1, &y, 1, &z);
	g->outputs[g->noutputs++] = z;
	aoe_run_opts_init(&o);
	o.nthreads = nthreads;
	o.use_bank = 0;
	if (aoe_graph_prepare(g, &o) < 0) {
		fprintf(stderr, "convb: %s\n", aoe_errmsg());
		return 1;
	}
	for (i = 0; i < g->nnodes; i++)
		if (strcmp(g->nodes[i].op_type, "Conv") == 0)
			cn = &g->nodes[i];
	x = g->tensors[g->inputs[0]]->data;
	xn = aoe_tensor_numel(g->tensors[g->inputs[0]]);
	fill_range(x, xn, -1, 1);
	yp = g->tensors[g->outputs[0]]->data;
	yn = aoe_tensor_numel(g->tensors[g->outputs[0]]);
	if (resid)
		fill_range(g->tensors[g->inputs[1]]->data,
		    aoe_tensor_numel(g->tensors[g->inputs[1]]), -1, 1);

	if ((nv = bench_variants(argv + optind + 1, argc - optind - 1,
	    &cn->sched, sc, vname, MAXV)) < 0)
		goto usage;
	pd.x = x;
	pd.planes = c;
	pd.plsz = (int64_t)h * h;
	pd.parts = nthreads > 1 ? nthreads : 1;
	pd.cols = prodw == 2;
	flush = malloc(FLUSH_BYTES);
	memset(flush, 1, FLUSH_BYTES);
	for (r = 0; r < rounds; r++)
		for (i = 0; i < nv; i++) {
			volatile float sink = 0;

			if (aoe_space_apply(g, cn, &sc[i]) < 0) {
				fprintf(stderr, "convb: %s: %s\n", vname[i],
				    aoe_errmsg());
				return 1;
			}
			/* One run first: the pool's workers awake. */
			aoe_graph_run(g, &o);
			if (!warm) {
				for (size_t q = 0; q < FLUSH_BYTES; q += 64)
					flush[q]++;
				if (!prodw)
					for (int64_t q = 0; q < xn; q += 16)
						sink += x[q];
				for (int64_t q = 0; q < yn; q += 16)
					sink += yp[q];
			}
			if (prodw)
				aoe_parallel(nthreads, pd.parts, prod_chunk,
				    &pd);
			if ((t[i][r] = bench_run(g, &o)) < 0) {
				fprintf(stderr, "convb: %s\n", aoe_errmsg());
				return 1;
			}
		}
	printf("# convb %s, %d thread(s), %s, %s, %d rounds, ISA %s\n",
	    argv[optind], nthreads, warm ? "warm" : "cold weights",
	    bench_clk == CLOCK_MONOTONIC ? "wall clock" : "CPU time", rounds,
	    aoe_cpu_avx512() ? "avx512" : "avx2");
	bench_table(t, nv, rounds, vname, 36, fl, "GF/s");
	return 0;
}
