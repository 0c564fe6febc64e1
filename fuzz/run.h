/*
 * run.h - load a model from memory, prepare it and run it once, within
 * small limits: the memory plan is made first without allocating, and a
 * graph that would need more than FZ_MAX_BYTES is not run.
 */
#ifndef AOE_FUZZ_RUN_H
#define AOE_FUZZ_RUN_H

#include "fuzz.h"

#define FZ_MAX_INPUT (64 * 1024)
#define FZ_MAX_BYTES (4 * 1024 * 1024)

static int
fz_planned_small(const aoe_graph *g)
{
	double b = (double)g->arena_size + (double)g->scratch_size;
	int i;

	for (i = 0; i < g->ntensors; i++) {
		if (g->tensors[i]->dynamic)
			return 0;	/* sized at run time: not bounded */
		b += (double)aoe_tensor_nbytes(g->tensors[i]);
	}
	return b <= FZ_MAX_BYTES;
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
