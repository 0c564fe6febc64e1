/*
 * unit-concat.c - the memory plan's in-place Concat (lib/runtime/exec.c,
 * plan_concat): an input written once and read last by a Concat along an
 * axis with only ones before it is placed inside the Concat's output, so
 * its producer writes it there and the Concat copies nothing.  Each case
 * checks which inputs the plan placed so (by their data pointers after
 * prepare) and that the outputs are bit for bit those of a run with
 * static memory, where no tensor shares bytes.
 *
 * usage: unit-concat
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"

/* A graph input of shape dims. */
static int
input(aoe_graph *g, const char *name, int nd, const int64_t *dims)
{
	int t = aoe_graph_tensor(g, name);

	aoe_tensor_set(g->tensors[t], AOE_F32, nd, dims);
	g->tensors[t]->kind = AOE_T_INPUT;
	g->inputs = aoe_xrealloc(g->inputs, (size_t)(g->ninputs + 1) *
	    sizeof(int));
	g->inputs[g->ninputs++] = t;
	return t;
}

static void
output(aoe_graph *g, int t)
{
	g->outputs = aoe_xrealloc(g->outputs, (size_t)(g->noutputs + 1) *
	    sizeof(int));
	g->outputs[g->noutputs++] = t;
}

/* A one-input node op on x; returns its output. */
static int
unary(aoe_graph *g, const char *op, int x, const char *name)
{
	int out = aoe_graph_tensor(g, name);

	aoe_graph_add_node(g, name, op, 1, &x, 1, &out);
	return out;
}

/* Concat of n inputs along axis; returns its output. */
static int
concat(aoe_graph *g, const int *in, int n, int64_t axis, const char *name)
{
	int out = aoe_graph_tensor(g, name);
	int nd = aoe_graph_add_node(g, name, "Concat", n, in, 1, &out);

	aoe_node_add_attr(&g->nodes[nd], "axis", AOE_A_INT)->i = axis;
	return out;
}

/*
 * Prepare g (static memory or not), fill its inputs from a fixed seed,
 * run it; a copy of each output in out[] (freed by the caller).  0 or -1.
 */
static int
run(aoe_graph *g, int static_memory, float **out)
{
	aoe_run_opts o;
	int i;
	int64_t j;

	aoe_run_opts_init(&o);
	o.use_bank = 0;
	o.nthreads = 2;
	o.static_memory = static_memory;
	if (aoe_graph_prepare(g, &o) < 0)
		return -1;
	rstate = 88172645463325252ULL;
	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		for (j = 0; j < aoe_tensor_numel(t); j++)
			((float *)t->data)[j] = frand();
	}
	if (aoe_graph_run(g, &o) < 0)
		return -1;
	for (i = 0; i < g->noutputs; i++) {
		aoe_tensor *t = g->tensors[g->outputs[i]];
		out[i] = aoe_xmalloc(aoe_tensor_nbytes(t) + 1);
		memcpy(out[i], t->data, aoe_tensor_nbytes(t));
	}
	return 0;
}

/*
 * Whether input i of the Concat node named name lies in its output at
 * its slice.
 */
static int
in_place(aoe_graph *g, const char *name, int i)
{
	const aoe_node *n = NULL;
	const aoe_tensor *y, *x;
	int64_t inner = 4, off = 0;
	int k, ax;

	for (k = 0; k < g->nnodes; k++)
		if (strcmp(g->nodes[k].name, name) == 0)
			n = &g->nodes[k];
	if (n == NULL)
		return 0;
	y = g->tensors[n->out[0]];
	ax = (int)aoe_attr_int(n, "axis", 1);
	if (ax < 0)
		ax += y->ndim;
	for (k = ax + 1; k < y->ndim; k++)
		inner *= y->dims[k];
	for (k = 0; k < i; k++)
		off += g->tensors[n->in[k]]->dims[ax] * inner;
	x = g->tensors[n->in[i]];
	return (const char *)x->data == (const char *)y->data + off;
}

/*
 * Run g both ways; check the outputs are equal and that input k of
 * Concat "cat" is in place exactly where want[k] says.
 */
static void
check(aoe_graph *(*build)(void), const int *want, int nwant,
    const char *what)
{
	aoe_graph *g = build(), *r = build();
	float *a[8] = { 0 }, *b[8] = { 0 };
	int i, same = 1, placed = 1;

	if (run(r, 1, b) < 0 || run(g, 0, a) < 0) {
		ok(0, "%s: runs", what);
		goto out;
	}
	for (i = 0; i < g->noutputs; i++)
		same &= memcmp(a[i], b[i], aoe_tensor_nbytes(
		    g->tensors[g->outputs[i]])) == 0;
	for (i = 0; i < nwant; i++)
		if (in_place(g, "cat", i) != want[i]) {
			printf("# input %d: in place %d, want %d\n", i,
			    in_place(g, "cat", i), want[i]);
			placed = 0;
		}
	/* Static memory places nothing inside another tensor. */
	for (i = 0; i < nwant; i++)
		placed &= !in_place(r, "cat", i);
	ok(placed, "%s: the inputs in place are the ones expected", what);
	ok(same, "%s: outputs equal a run with static memory", what);
out:
	for (i = 0; i < 8; i++) {
		free(a[i]);
		free(b[i]);
	}
	aoe_graph_free(g);
	aoe_graph_free(r);
}

static const int64_t d16[4] = { 1, 16, 4, 4 };	/* 1 KB */

/* Two producers into a Concat on the channels, then a Relu. */
static aoe_graph *
g_basic(void)
{
	aoe_graph *g = aoe_graph_new("basic");
	int x = input(g, "x", 4, d16), in[2];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = unary(g, "Neg", x, "p1");
	output(g, unary(g, "Sigmoid", concat(g, in, 2, 1, "cat"), "s"));
	return g;
}

/*
 * Input 0 is read again after the Concat (by a node that reads the
 * Concat's output too, so that it must run later): it is placed in that
 * node's output instead, not in the first Concat's.
 */
static aoe_graph *
g_later(void)
{
	aoe_graph *g = aoe_graph_new("later");
	int x = input(g, "x", 4, d16), in[2], in2[2];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = unary(g, "Neg", x, "p1");
	in2[0] = concat(g, in, 2, 1, "cat");
	in2[1] = in[0];
	output(g, concat(g, in2, 2, 1, "late"));
	return g;
}

/* Input 1 is a graph output, input 2 a graph input. */
static aoe_graph *
g_outputs(void)
{
	aoe_graph *g = aoe_graph_new("outputs");
	int x = input(g, "x", 4, d16), in[3];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = unary(g, "Neg", x, "p1");
	in[2] = x;
	output(g, concat(g, in, 3, -3, "cat"));
	output(g, in[1]);
	return g;
}

/* One tensor twice: only its first slice can hold it. */
static aoe_graph *
g_twice(void)
{
	aoe_graph *g = aoe_graph_new("twice");
	int x = input(g, "x", 4, d16), in[3];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = in[0];
	in[2] = unary(g, "Neg", x, "p1");
	output(g, concat(g, in, 3, 1, "cat"));
	return g;
}

/* An axis with a dimension above 1 before it: slices are not contiguous. */
static aoe_graph *
g_strided(void)
{
	aoe_graph *g = aoe_graph_new("strided");
	int x = input(g, "x", 4, d16), in[2];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = unary(g, "Neg", x, "p1");
	output(g, concat(g, in, 2, 2, "cat"));
	return g;
}

/* Slices of 20 bytes: the second would start unaligned. */
static aoe_graph *
g_unaligned(void)
{
	static const int64_t d5[4] = { 1, 1, 1, 5 };
	aoe_graph *g = aoe_graph_new("unaligned");
	int x = input(g, "x", 4, d5), in[2];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = unary(g, "Neg", x, "p1");
	output(g, concat(g, in, 2, 3, "cat"));
	return g;
}

/*
 * A Concat into a Concat: the inner one's output already holds its
 * inputs, so it is not placed again; the outer one's other input is.
 */
static aoe_graph *
g_nested(void)
{
	aoe_graph *g = aoe_graph_new("nested");
	int x = input(g, "x", 4, d16), in[2], in2[2];

	in[0] = unary(g, "Relu", x, "p0");
	in[1] = unary(g, "Neg", x, "p1");
	in2[0] = concat(g, in, 2, 1, "inner");
	in2[1] = unary(g, "Sigmoid", x, "p2");
	output(g, concat(g, in2, 2, 1, "cat"));
	return g;
}

int
main(void)
{
	static const int basic[] = { 1, 1 }, later[] = { 0, 1 };
	static const int outs[] = { 1, 0, 0 }, twice[] = { 1, 0, 1 };
	static const int none[] = { 0, 0 }, unal[] = { 1, 0 };
	static const int nested[] = { 0, 1 };

	check(g_basic, basic, 2, "two producers");
	check(g_later, later, 2, "an input read after the Concat");
	check(g_outputs, outs, 3, "a graph output and a graph input, axis -3");
	check(g_twice, twice, 3, "one tensor twice");
	check(g_strided, none, 2, "axis 2 of a 16-channel tensor");
	check(g_unaligned, unal, 2, "a slice that would be unaligned");
	check(g_nested, nested, 2, "a Concat into a Concat");
	return done_testing();
}
