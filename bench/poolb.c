/*
 * poolb - one 2-D MaxPool (or AveragePool) under several schedules,
 * interleaved, for choosing k_pool.c's defaults.
 *
 *   bench/poolb [-t threads] [-r rounds] [-c] [-a] SHAPE [SCHED...]
 *
 * SHAPE is C@H/k/s[/p][c]: C planes of H x H, a k x k window at stride
 * s, pads p on every side (default 0), "c" for ceil_mode; e.g.
 * 64@111/3/2c (squeezenet1_1's first MaxPool) or 64@112/3/2/1
 * (resnet18's).  -a makes it an AveragePool.  Each SCHED is a
 * comma-separated knob=value list over the default ("def": the default).
 * Every round runs each variant twice and times the second (its input
 * in the cache, as after the node that wrote it in a model); prints each
 * variant's minimum and median (microseconds), GB/s moved at the minimum
 * and the median of its time over the first variant's, round by round
 * (x); -c times by the process's CPU time (1 thread on a loaded host).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"
#include "bench.h"

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
	int nthreads = 1, rounds = 15, avg = 0, ch, i, r, nv, c, h, k, s;
	int p = 0, in, y, nc = 0;
	double t[MAXV][64], bytes;
	aoe_sched sc[MAXV];
	const char *vname[MAXV];
	char tail[8] = "";
	aoe_run_opts o;
	aoe_graph *g;
	aoe_node *pn;

	while ((ch = getopt(argc, argv, "t:r:ca")) != -1)
		switch (ch) {
		case 't': nthreads = atoi(optarg); break;
		case 'r': rounds = atoi(optarg); break;
		case 'c': bench_clk = CLOCK_PROCESS_CPUTIME_ID; break;
		case 'a': avg = 1; break;
		default:
		usage:
			fprintf(stderr, "usage: poolb [-t threads] [-r rounds] "
			    "[-c] [-a] C@H/k/s[/p][c] [sched...]\n");
			return 2;
		}
	if (optind >= argc || rounds < 1 || rounds > 64)
		goto usage;
	if (sscanf(argv[optind], "%d@%d/%d/%d%7s", &c, &h, &k, &s, tail) < 4)
		goto usage;
	if (tail[0] == '/') {
		if (sscanf(tail + 1, "%d", &p) != 1)
			goto usage;
	}
	nc = strchr(tail, 'c') != NULL;

	g = aoe_graph_new("poolb");
	g->opset = 17;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->outputs = aoe_xcalloc(1, sizeof(int));
	in = bench_input(g, "x", 0, 4, (int64_t[]){ 1, c, h, h }, -1, 1);
	y = aoe_graph_tensor(g, "y");
	i = aoe_graph_add_node(g, "pool", avg ? "AveragePool" : "MaxPool", 1,
	    &in, 1, &y);
	pn = &g->nodes[i];
	ints_attr(pn, "kernel_shape", 2, k);
	ints_attr(pn, "strides", 2, s);
	ints_attr(pn, "pads", 4, p);
	aoe_node_add_attr(pn, "ceil_mode", AOE_A_INT)->i = nc;
	g->outputs[g->noutputs++] = y;
	aoe_run_opts_init(&o);
	o.nthreads = nthreads;
	o.use_bank = 0;
	if (aoe_graph_prepare(g, &o) < 0) {
		fprintf(stderr, "poolb: %s\n", aoe_errmsg());
		return 1;
	}
	fill_range(g->tensors[in]->data, aoe_tensor_numel(g->tensors[in]),
	    -1, 1);
	bytes = 4.0 * (aoe_tensor_numel(g->tensors[in]) +
	    aoe_tensor_numel(g->tensors[y]));

	if ((nv = bench_variants(argv + optind + 1, argc - optind - 1,
	    &pn->sched, sc, vname, MAXV)) < 0)
		goto usage;
	for (r = 0; r < rounds; r++)
		for (i = 0; i < nv; i++) {

			if (aoe_space_apply(g, pn, &sc[i]) < 0) {
				fprintf(stderr, "poolb: %s: %s\n", vname[i],
				    aoe_errmsg());
				return 1;
			}
			aoe_graph_run(g, &o);
			if ((t[i][r] = bench_run(g, &o)) < 0) {
				fprintf(stderr, "poolb: %s\n", aoe_errmsg());
				return 1;
			}
		}
	printf("# poolb %s%s, %d thread(s), warm input, %s, %d rounds, ISA "
	    "%s\n", avg ? "AveragePool " : "MaxPool ", argv[optind], nthreads,
	    bench_clk == CLOCK_MONOTONIC ? "wall clock" : "CPU time", rounds,
	    aoe_cpu_avx512() ? "avx512" : "avx2");
	bench_table(t, nv, rounds, vname, 28, bytes, "GB/s");
	return 0;
}
