/*
 * run.h - load a model from memory, prepare it and run it once, within
 * small limits: the memory plan is made first without allocating, and a
 * graph that would need more than FZ_MAX_BYTES, or about FZ_MAX_WORK
 * multiply-adds or compares, is not run.
 */
#ifndef AOE_FUZZ_RUN_H
#define AOE_FUZZ_RUN_H

#include "fuzz.h"

#define FZ_MAX_INPUT (64 * 1024)
#define FZ_MAX_BYTES (4 * 1024 * 1024)
/*
 * A few hundred milliseconds under ASan: a 18x52 int8 MaxPool over 100
 * images (190 M compares, 4 MB) took 70 s, and libFuzzer's -timeout
 * ends the whole run on it.
 */
#define FZ_MAX_WORK 3e7

/*
 * A rough count of node n's work: its outputs' elements times its window
 * (kernel_shape), times a Conv's input channels per group or a MatMul's
 * or Gemm's inner dimension over 8, since those run on vector kernels
 * eight lanes wide where the rest may be scalar.
 */
static double
fz_work(const aoe_graph *g, const aoe_node *n)
{
	const aoe_attr *ks = aoe_attr_find(n, "kernel_shape");
	const aoe_tensor *a;
	double w = 0;
	int i;

	for (i = 0; i < n->nout; i++)
		if (n->out[i] >= 0 && aoe_tensor_numel(g->tensors[n->out[i]]) >
		    0)
			w += (double)aoe_tensor_numel(g->tensors[n->out[i]]);
	for (i = 0; ks && i < ks->n; i++)
		w *= ks->ints[i] > 1 ? (double)ks->ints[i] : 1;
	if ((strcmp(n->op_type, "Conv") == 0 ||
	    strcmp(n->op_type, "ConvTranspose") == 0) && n->nin > 1 &&
	    (a = aoe_in(g, n, 1)) != NULL && a->ndim >= 2)
		w *= (double)(a->dims[1] > 1 ? a->dims[1] : 1) / 8;
	if ((strcmp(n->op_type, "MatMul") == 0 ||
	    strcmp(n->op_type, "Gemm") == 0) && n->nin > 0 &&
	    (a = aoe_in(g, n, 0)) != NULL && a->ndim >= 1)
		w *= (double)(a->dims[a->ndim - 1] > 1 ? a->dims[a->ndim - 1] :
		    1) / 8;
	return w;
}

static int
fz_planned_small(const aoe_graph *g)
{
	double b = (double)g->arena_size + (double)g->scratch_size, w = 0;
	int i;

	for (i = 0; i < g->ntensors; i++) {
		if (g->tensors[i]->dynamic)
			return 0;	/* sized at run time: not bounded */
		b += (double)aoe_tensor_nbytes(g->tensors[i]);
	}
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		if (!n->dead)
			w += fz_work(g, n);
	}
	return b <= FZ_MAX_BYTES && w <= FZ_MAX_WORK;
}

/* 0: loaded, prepared and run (or refused with an error); never crash. */
static void
fz_model(const uint8_t *d, size_t n, const char *name)
{
	static aoe_run_opts o0;
	static int o0_set;
	aoe_graph *g = NULL;
	aoe_run_opts o;
	int i, small;

	if (n > FZ_MAX_INPUT)
		return;
	if (!o0_set) {		/* once: it asks sysconf for the CPUs */
		aoe_run_opts_init(&o0);
		o0_set = 1;
	}
	o = o0;
	o.nthreads = 1;
	o.use_bank = 0;
	o.profile = 0;
	o.plan_only = 1;
	if (aoe_model_load_mem(d, n, name, &g) < 0)
		return;
	if (aoe_graph_check_inputs(g) < 0 || aoe_graph_prepare(g, &o) < 0) {
		aoe_graph_free(g);
		return;
	}
	small = fz_planned_small(g);
	aoe_graph_free(g);
	if (!small)
		return;
	g = NULL;
	if (aoe_model_load_mem(d, n, name, &g) < 0)
		abort();	/* it loaded a moment ago */
	o.plan_only = 0;
	if (aoe_graph_check_inputs(g) == 0 && aoe_graph_prepare(g, &o) == 0) {
		for (i = 0; i < g->ninputs; i++) {
			aoe_tensor *t = g->tensors[g->inputs[i]];
			size_t nb = aoe_tensor_nbytes(t);
			if (t->data == NULL) {
				t->data = aoe_xcalloc(1, nb ? nb : 1);
				t->owned = 1;
			}
		}
		aoe_graph_fill_inputs(g, 1);
		(void)aoe_graph_run(g, &o);
	}
	aoe_graph_free(g);
}

#endif
