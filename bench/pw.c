/*
 * pw - pointwise (1x1) convolution: libaoe against OpenBLAS sgemm on the
 * same product, over mobilenet_v2's 1x1 Conv shapes.
 *
 *   bench/pw [-t threads] [-r rounds] [-a] [-c] [-e op] [-m] [-k knob=v]
 *       [shape...]
 *
 * Each shape (Cin>Cout@HxW, stride 1, with a bias and a fused ReLU6 as in
 * the model) is a one-node libaoe graph.  The rows time libaoe's default
 * schedule, libaoe with each micro-kernel shape its space holds (-a; the
 * ISA's shapes: AVX2 6x16 and 4x24, AVX-512 14x32 12x32 8x48 6x64), and
 * OpenBLAS cblas_sgemm(Cout x HW x Cin) (no bias, no clamp, so it does a
 * little less), interleaved: every round times every variant once (the
 * mean of enough calls to last about 2 ms), and the figures are the
 * medians of the rounds (-m: the minima, steadier on a loaded machine), with the ratio OpenBLAS time / aoe time (>1:
 * aoe faster).  -e op puts another one-input activation after the
 * Conv instead of the ReLU6 (HardSwish, Relu, Sigmoid: libaoe fuses it).
 * -c times by the process's CPU time instead of the wall
 * clock: at 1 thread, on a loaded machine, that leaves out the time the
 * other jobs hold the core (their cache pollution stays).  -k knob=v sets one more knob in the -a variants (e.g.
 * par=1).  Arguments select shapes whose name contains them.  The
 * ISA is libaoe's own (AOE_MAX_ISA=avx2 caps it); OpenBLAS picks its
 * kernel from the CPU unless OPENBLAS_CORETYPE says.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"
#include "bench.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int,
    const float *, int, float, float *, int);
void openblas_set_num_threads(int);
char *openblas_get_corename(void);

static const struct { int c, m, h; } shapes[] = {
	{ 32, 16, 112 }, { 16, 96, 112 }, { 96, 24, 56 }, { 24, 144, 56 },
	{ 144, 24, 56 }, { 144, 32, 28 }, { 32, 192, 28 }, { 192, 32, 28 },
	{ 192, 64, 14 }, { 64, 384, 14 }, { 384, 64, 14 }, { 384, 96, 14 },
	{ 96, 576, 14 }, { 576, 96, 14 }, { 576, 160, 7 }, { 160, 960, 7 },
	{ 960, 160, 7 }, { 960, 320, 7 }, { 320, 1280, 7 },
};

static const char *act = "Clip";	/* -e: the activation after the Conv */

/* Values uniform in [-1, 1). */
static void
fill(float *p, int64_t n)
{
	fill_range(p, n, -1, 1);
}

static double
median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmpd);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

typedef struct conv1 {
	aoe_graph *g;
	aoe_node *n;
	aoe_run_opts o;
} conv1;

/* Conv(1x1) + bias + Clip(0, 6), fused by the graph's passes. */
static int
conv1_new(conv1 *b, int c, int m, int h, int nthreads)
{
	aoe_graph *g = aoe_graph_new("pw");
	int in[3], y, z, k, i;
	aoe_node *n;

	g->opset = 17;
	g->inputs = aoe_xcalloc(3, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	in[0] = bench_input(g, "x", 0, 4, (int64_t[]){ 1, c, h, h }, -1, 1);
	in[1] = bench_input(g, "w", 1, 4, (int64_t[]){ m, c, 1, 1 }, -1, 1);
	in[2] = bench_input(g, "b", 1, 1, (int64_t[]){ m }, -1, 1);
	y = aoe_graph_tensor(g, "y");
	z = aoe_graph_tensor(g, "z");
	k = aoe_graph_add_node(g, "conv", "Conv", 3, in, 1, &y);
	n = &g->nodes[k];
	{
		aoe_attr *a = aoe_node_add_attr(n, "kernel_shape",
		    AOE_A_INTS);
		a->n = 2;
		a->ints = aoe_xcalloc(2, sizeof(int64_t));
		a->ints[0] = a->ints[1] = 1;
	}
	if (strcmp(act, "Clip") == 0) {
		int cin[3] = { y, bench_input(g, "lo", 1, 0, NULL, -1, 1),
		    bench_input(g, "hi", 1, 0, NULL, -1, 1) };
		((float *)g->tensors[cin[1]]->data)[0] = 0;
		((float *)g->tensors[cin[2]]->data)[0] = 6;
		aoe_graph_add_node(g, "clip", "Clip", 3, cin, 1, &z);
	} else
		aoe_graph_add_node(g, "act", act, 1, &y, 1, &z);
	g->outputs[g->noutputs++] = z;
	aoe_run_opts_init(&b->o);
	b->o.nthreads = nthreads;
	b->o.use_bank = 0;
	b->g = g;
	if (aoe_graph_prepare(g, &b->o) < 0)
		return -1;
	b->n = NULL;
	for (i = 0; i < g->nnodes; i++)
		if (strcmp(g->nodes[i].op_type, "Conv") == 0)
			b->n = &g->nodes[i];
	fill(g->tensors[g->inputs[0]]->data,
	    aoe_tensor_numel(g->tensors[g->inputs[0]]));
	return b->n ? 0 : -1;
}

typedef struct variant {
	char name[32];
	int mr, nr;	/* 0: default schedule; -1: OpenBLAS */
	double t[64];
} variant;

int
main(int argc, char **argv)
{
	static const int sh2[][2] = { { 6, 16 }, { 4, 24 } };
	static const int sh5[][2] = { { 14, 32 }, { 12, 32 }, { 8, 48 },
	    { 6, 64 } };
	int nthreads = 1, rounds = 9, all = 0, usemin = 0, ch, s, i, r, nv;
	const char *knob = NULL;
	int64_t kval = 0;
	variant v[8];

	while ((ch = getopt(argc, argv, "t:r:ace:mk:")) != -1)
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'a': all = 1; break;
		case 'm': usemin = 1; break;
		case 'c': bench_clk = CLOCK_PROCESS_CPUTIME_ID; break;
		case 'e': act = optarg; break;
		case 'k':
			/* -k knob=value: the -a variants with it set too. */
			knob = optarg;
			if (strchr(optarg, '=') == NULL)
				goto usage;
			*strchr(optarg, '=') = '\0';
			kval = atoll(optarg + strlen(optarg) + 1);
			break;
		default:
		usage:
			fprintf(stderr, "usage: pw [-t threads] [-r rounds] "
			    "[-a] [-c] [-e op] [-m] [-k knob=v] [shape...]\n");
			return 2;
		}
	if (rounds < 1 || rounds > 64 || nthreads < 1) {
		fprintf(stderr, "pw: rounds 1 to 64, threads 1 up\n");
		return 2;
	}
	openblas_set_num_threads(nthreads);
	printf("# pw: 1x1 Conv+bias+%s (aoe) vs cblas_sgemm (OpenBLAS %s), "
	    "%d thread(s), %s of %d interleaved rounds, %s; ISA %s\n",
	    act, openblas_get_corename(), nthreads, usemin ? "min" : "median", rounds,
	    bench_clk == CLOCK_MONOTONIC ? "wall clock" : "process CPU time",
	    aoe_cpu_avx512() ? "avx512" : "avx2");
	printf("%-16s %8s", "shape", "gflop");
	nv = 0;
	strcpy(v[nv].name, "aoe");
	v[nv].mr = v[nv].nr = 0;
	nv++;
	strcpy(v[nv].name, "openblas");
	v[nv].mr = v[nv].nr = -1;
	nv++;
	if (all) {
		int w = aoe_cpu_avx512(), ns = w ? 4 : 2;
		for (i = 0; i < ns; i++) {
			v[nv].mr = w ? sh5[i][0] : sh2[i][0];
			v[nv].nr = w ? sh5[i][1] : sh2[i][1];
			snprintf(v[nv].name, sizeof(v[nv].name), "%dx%d",
			    v[nv].mr, v[nv].nr);
			nv++;
		}
	}
	for (i = 0; i < nv; i++)
		printf(" %9s_us %6s", v[i].name, "GF/s");
	printf("  blas/aoe\n");
	for (s = 0; s < (int)(sizeof(shapes) / sizeof(shapes[0])); s++) {
		int c = shapes[s].c, m = shapes[s].m, h = shapes[s].h, a;
		double fl = 2.0 * c * m * h * h, med[8];
		char name[32];
		conv1 b;
		aoe_sched def;
		float *A, *B, *C;

		snprintf(name, sizeof(name), "%d>%d@%d", c, m, h);
		if (argc > optind) {
			for (a = optind; a < argc; a++)
				if (strstr(name, argv[a]))
					break;
			if (a == argc)
				continue;
		}
		if (conv1_new(&b, c, m, h, nthreads) < 0) {
			fprintf(stderr, "pw: %s: %s\n", name, aoe_errmsg());
			return 1;
		}
		def = b.n->sched;
		A = malloc(sizeof(float) * m * c);
		B = malloc(sizeof(float) * c * h * h);
		C = malloc(sizeof(float) * m * h * h);
		fill(A, (int64_t)m * c);
		fill(B, (int64_t)c * h * h);
		for (r = 0; r < rounds; r++)
			for (i = 0; i < nv; i++) {
				int reps, q;
				double t0;

				if (v[i].mr > 0) {
					aoe_sched sc = def;
					aoe_sched_set(&sc, "mr", v[i].mr);
					aoe_sched_set(&sc, "nr", v[i].nr);
					if (knob != NULL)
						aoe_sched_set(&sc, knob, kval);
					aoe_space_apply(b.g, b.n, &sc);
				} else if (v[i].mr == 0)
					aoe_space_apply(b.g, b.n, &def);
				reps = (int)(2e-3 / (fl / 100e9)) + 1;
				for (q = 0; q < reps + 1; q++) {
					if (q == 1)
						t0 = now();
					if (v[i].mr < 0)
						cblas_sgemm(101, 111, 111, m,
						    h * h, c, 1, A, c, B,
						    h * h, 0, C, h * h);
					else if (aoe_graph_run(b.g, &b.o) < 0) {
						fprintf(stderr, "pw: %s\n",
						    aoe_errmsg());
						return 1;
					}
				}
				v[i].t[r] = (now() - t0) / reps;
			}
		printf("%-16s %8.4f", name, fl / 1e9);
		for (i = 0; i < nv; i++) {
			med[i] = median(v[i].t, rounds);
			if (usemin)
				med[i] = v[i].t[0];
			printf(" %12.1f %6.1f", med[i] * 1e6, fl / med[i] / 1e9);
		}
		printf("  %8.2f\n", med[1] / med[0]);
		fflush(stdout);
		free(A);
		free(B);
		free(C);
		aoe_graph_free(b.g);
	}
	return 0;
}
