/*
 * onenode.h - one-node graphs for the kernels' property tests
 * (tests/unit-space.c, tests/unit-gemm512.c): build a graph of one
 * operator with random constant or input tensors, prepare it and fill its
 * inputs.  Include after tap.h, whose frand() it draws from.
 */
#ifndef TESTS_ONENODE_H
#define TESTS_ONENODE_H

#include <string.h>

#include "aoe.h"

/*
 * A one-node graph under construction: inputs are graph inputs (random
 * data after prepare) or constants (random data now).
 */
typedef struct tg {
	aoe_graph *g;
	aoe_node *n;
	int in[4], nin, y;
} tg;

static void __attribute__((unused))
tg_new(tg *t, const char *op)
{
	memset(t, 0, sizeof(*t));
	t->g = aoe_graph_new(op);
	t->g->opset = 17;
	t->g->inputs = aoe_xcalloc(4, sizeof(int));
	t->g->outputs = aoe_xcalloc(1, sizeof(int));
}

static void __attribute__((unused))
tg_input(tg *t, int konst, int ndim, const int64_t *dims)
{
	char name[16];
	aoe_tensor *x;
	int i;
	int64_t j, n;

	snprintf(name, sizeof(name), "in%d", t->nin);
	i = aoe_graph_tensor(t->g, name);
	x = t->g->tensors[i];
	aoe_tensor_set(x, AOE_F32, ndim, dims);
	if (konst) {
		x->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(x);
		n = aoe_tensor_numel(x);
		for (j = 0; j < n; j++)
			((float *)x->data)[j] = frand();
	} else {
		x->kind = AOE_T_INPUT;
		t->g->inputs[t->g->ninputs++] = i;
	}
	t->in[t->nin++] = i;
}

static void __attribute__((unused))
tg_node(tg *t, const char *op)
{
	int k;

	t->y = aoe_graph_tensor(t->g, "y");
	k = aoe_graph_add_node(t->g, "node", op, t->nin, t->in, 1, &t->y);
	t->g->outputs[t->g->noutputs++] = t->y;
	t->n = &t->g->nodes[k];
}

static void __attribute__((unused))
attr_i(tg *t, const char *name, int64_t v)
{
	aoe_node_add_attr(t->n, name, AOE_A_INT)->i = v;
}

static void __attribute__((unused))
attr_f(tg *t, const char *name, float v)
{
	aoe_node_add_attr(t->n, name, AOE_A_FLOAT)->f = v;
}

static void __attribute__((unused))
attr_is(tg *t, const char *name, int n, const int64_t *v)
{
	aoe_attr *a = aoe_node_add_attr(t->n, name, AOE_A_INTS);

	a->n = n;
	a->ints = aoe_xcalloc((size_t)n, sizeof(int64_t));
	memcpy(a->ints, v, sizeof(int64_t) * n);
}

static float * __attribute__((unused))
data(tg *t, int i)
{
	return t->g->tensors[t->in[i]]->data;
}

static int64_t __attribute__((unused))
numel_y(tg *t)
{
	return aoe_tensor_numel(t->g->tensors[t->y]);
}

static aoe_run_opts opts;

/* Prepare and fill the graph inputs with random data. */
static int __attribute__((unused))
tg_prepare(tg *t)
{
	int i;
	int64_t j, n;

	if (aoe_graph_prepare(t->g, &opts) < 0)
		return -1;
	for (i = 0; i < t->nin; i++) {
		aoe_tensor *x = t->g->tensors[t->in[i]];
		if (x->kind != AOE_T_INPUT)
			continue;
		n = aoe_tensor_numel(x);
		for (j = 0; j < n; j++)
			((float *)x->data)[j] = frand();
	}
	return 0;
}

#endif
