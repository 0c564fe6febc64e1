/*
 * unit-graph - TAP unit tests of libaoe's IR, formats, planner and
 * executor.  Run from the top of the tree (needs the bundled example).
 */
#include <errno.h>
#include <stdarg.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"


#define EXAMPLE "share/aoe/models/example.onnx"

static void
test_numbers(void)
{
	long long v = 0;

	ok(aoe_strtonum("42", 0, 100, &v) == 0 && v == 42, "strtonum 42");
	ok(aoe_strtonum("-1", 0, 100, &v) < 0 && errno == ERANGE,
	    "strtonum below range");
	ok(aoe_strtonum("101", 0, 100, &v) < 0 && errno == ERANGE,
	    "strtonum above range");
	ok(aoe_strtonum("99999999999999999999", 0, 100, &v) < 0 &&
	    errno == ERANGE, "strtonum overflow");
	ok(aoe_strtonum("4x", 0, 100, &v) < 0 && errno == EINVAL,
	    "strtonum trailing junk");
	ok(aoe_strtonum("", 0, 100, &v) < 0 && errno == EINVAL,
	    "strtonum empty");
}

static void
test_broadcast(void)
{
	int64_t a[4] = { 2, 1, 4, 1 }, b[2] = { 4, 3 }, c[1] = { 5 }, o[8];
	int n = 0;

	ok(aoe_broadcast_shape(4, a, 2, b, &n, o) == 0 && n == 4 &&
	    o[0] == 2 && o[1] == 1 && o[2] == 4 && o[3] == 3,
	    "broadcast 2x1x4x1 with 4x3 gives 2x1x4x3");
	b[0] = 3;
	b[1] = 1;
	ok(aoe_broadcast_shape(2, b, 1, c, &n, o) == 0 && n == 2 &&
	    o[0] == 3 && o[1] == 5, "broadcast 3x1 with 5 gives 3x5");
	b[1] = 2;
	ok(aoe_broadcast_shape(1, c, 2, b, &n, o) == -AOE_EDATA,
	    "broadcast 5 with 3x2 fails");
}

static void
test_sched(void)
{
	aoe_sched s;
	char name[32];
	int i, rc = 0;

	memset(&s, 0, sizeof(s));
	ok(aoe_sched_get(&s, "mc", 77) == 77, "absent knob gives default");
	aoe_sched_set(&s, "mc", 64);
	aoe_sched_set(&s, "mc", 96);
	ok(aoe_sched_get(&s, "mc", 77) == 96 && s.n == 1,
	    "setting a knob twice replaces it");
	for (i = 0; i < AOE_SCHED_MAX + 1 && rc == 0; i++) {
		snprintf(name, sizeof(name), "k%d", i);
		rc = aoe_sched_set(&s, name, i);
	}
	ok(rc == -AOE_EUNSUP, "a full schedule refuses another knob");
	ok(aoe_sched_set(&s, "a_knob_name_that_is_far_too_long", 1) ==
	    -AOE_EDATA, "an over-long knob name is refused");
}

static int
run_example(aoe_graph *g, int static_memory, float *out10)
{
	aoe_run_opts o;
	aoe_tensor *in;
	int64_t i, n;
	int rc;

	aoe_run_opts_init(&o);
	o.static_memory = static_memory;
	o.nthreads = 2;
	if ((rc = aoe_graph_prepare(g, &o)) < 0)
		return rc;
	in = g->tensors[g->inputs[0]];
	n = aoe_tensor_numel(in);
	for (i = 0; i < n; i++)
		((float *)in->data)[i] = (float)sin((double)i * 0.37);
	if ((rc = aoe_graph_run(g, &o)) < 0)
		return rc;
	memcpy(out10, g->tensors[g->outputs[0]]->data, 10 * sizeof(float));
	return 0;
}

/*
 * No two tensors with overlapping lifetimes may share arena bytes, but
 * for a node run in place: its input 0, read for the last time there,
 * and its output, in the same bytes.
 */
static int
plan_is_safe(const aoe_graph *g)
{
	int *first = calloc((size_t)g->ntensors, sizeof(int));
	int *last = calloc((size_t)g->ntensors, sizeof(int));
	int i, j, k, pos, safe = 1;

	for (i = 0; i < g->ntensors; i++)
		first[i] = last[i] = -2;
	for (i = 0; i < g->ninputs; i++) {
		first[g->inputs[i]] = -1;
		last[g->inputs[i]] = g->norder;
	}
	for (pos = 0; pos < g->norder; pos++) {
		const aoe_node *n = &g->nodes[g->order[pos]];
		for (k = 0; k < n->nout; k++)
			if (n->out[k] >= 0)
				first[n->out[k]] = last[n->out[k]] = pos;
		for (k = 0; k < n->nin; k++)
			if (n->in[k] >= 0 && first[n->in[k]] != -2)
				last[n->in[k]] = pos;
	}
	for (i = 0; i < g->noutputs; i++)
		last[g->outputs[i]] = g->norder;
	for (i = 0; i < g->ntensors; i++)
		for (j = i + 1; j < g->ntensors; j++) {
			const aoe_tensor *a = g->tensors[i], *b = g->tensors[j];
			int64_t ae, be;
			if (a->offset < 0 || b->offset < 0 ||
			    first[i] == -2 || first[j] == -2)
				continue;
			if (last[i] < first[j] || last[j] < first[i])
				continue;
			if (a->offset == b->offset && (last[i] == first[j] ||
			    last[j] == first[i])) {
				int p = last[i] == first[j] ? first[j] :
				    first[i];
				const aoe_node *n = &g->nodes[g->order[p]];
				int x = last[i] == first[j] ? i : j;
				if (n->nin > 0 && n->in[0] == x && n->nout == 1 &&
				    (n->out[0] == i || n->out[0] == j) &&
				    aoe_attr_find(n, "_aoe_inplace"))
					continue;
			}
			ae = a->offset + (int64_t)aoe_tensor_nbytes(a);
			be = b->offset + (int64_t)aoe_tensor_nbytes(b);
			if (a->offset < be && b->offset < ae)
				safe = 0;
		}
	free(first);
	free(last);
	return safe;
}

static void
test_executor(void)
{
	aoe_graph *g1 = NULL, *g2 = NULL, *g3 = NULL;
	float o1[10], o2[10], o3[10];
	FILE *fp;
	char path[] = "/tmp/aoe-unit-XXXXXX";
	int fd, same = 1, i;
	size_t reuse = 0, nonreuse = 0;

	ok(aoe_onnx_load(EXAMPLE, &g1) == 0, "load the bundled example");
	ok(aoe_onnx_load(EXAMPLE, &g2) == 0, "load it again");
	if (g1 == NULL || g2 == NULL)
		return;
	ok(run_example(g1, 0, o1) == 0, "run with buffer reuse");
	reuse = g1->arena_size;
	ok(plan_is_safe(g1), "no live tensors share arena bytes");
	ok(run_example(g2, 1, o2) == 0, "run with static memory");
	nonreuse = g2->arena_size;
	ok(reuse < nonreuse, "reuse shrinks the arena (%zu < %zu bytes)",
	    reuse, nonreuse);
	for (i = 0; i < 10; i++)
		same &= o1[i] == o2[i];
	ok(same, "reuse and static memory give identical outputs");

	/* Write it as aoe-graph(5), read it back, and run it. */
	fd = mkstemp(path);
	fp = fdopen(fd, "w");
	ok(fp && aoe_json_save(g1, fp) == 0, "save as aoe-graph");
	fclose(fp);
	ok(aoe_json_load(path, &g3) == 0, "load the aoe-graph back");
	if (g3) {
		ok(run_example(g3, 0, o3) == 0, "run the loaded aoe-graph");
		for (same = 1, i = 0; i < 10; i++)
			same &= o1[i] == o3[i];
		ok(same, "the aoe-graph round trip gives identical outputs");
	}
	unlink(path);
	aoe_graph_free(g1);
	aoe_graph_free(g2);
	aoe_graph_free(g3);
}

static void
test_structure(void)
{
	aoe_graph *g = aoe_graph_new("cycle");
	aoe_run_opts o;
	int a, b, x;
	int64_t d[1] = { 4 };

	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 1, d);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;
	a = aoe_graph_tensor(g, "a");
	b = aoe_graph_tensor(g, "b");
	aoe_graph_add_node(g, "n1", "Add", 2, (int[]){ x, b }, 1, &a);
	aoe_graph_add_node(g, "n2", "Relu", 1, &a, 1, &b);
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = b;
	aoe_run_opts_init(&o);
	ok(aoe_graph_prepare(g, &o) == -AOE_EDATA &&
	    strstr(aoe_errmsg(), "cycle") != NULL, "a cycle is refused");
	aoe_graph_free(g);

	g = aoe_graph_new("dangling");
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 1, d);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;
	a = aoe_graph_tensor(g, "a");
	b = aoe_graph_tensor(g, "ghost");
	aoe_graph_add_node(g, "n1", "Add", 2, (int[]){ x, b }, 1, &a);
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = a;
	ok(aoe_graph_prepare(g, &o) == -AOE_EDATA &&
	    strstr(aoe_errmsg(), "'ghost'") != NULL,
	    "an input nothing produces is refused by name");
	aoe_graph_free(g);
}

/* Shape feeding Reshape folds, and a graph can be prepared twice. */
static void
test_reprepare(void)
{
	aoe_graph *g = aoe_graph_new("reprepare");
	aoe_run_opts o;
	int64_t d[2] = { 2, 3 };
	int x, s, y, i, rc, good = 1;
	float *out;

	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 2, d);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;
	s = aoe_graph_tensor(g, "s");
	y = aoe_graph_tensor(g, "y");
	aoe_graph_add_node(g, "shape", "Shape", 1, &x, 1, &s);
	aoe_graph_add_node(g, "neg", "Neg", 1, &x, 1, &y);
	g->outputs = aoe_xcalloc(2, sizeof(int));
	g->outputs[g->noutputs++] = y;
	g->outputs[g->noutputs++] = s;
	aoe_run_opts_init(&o);
	for (rc = 0, i = 0; i < 2 && rc == 0; i++)
		rc = aoe_graph_prepare(g, &o);
	ok(rc == 0, "a graph with a folded Shape can be prepared twice");
	if (rc == 0) {
		for (i = 0; i < 6; i++)
			((float *)g->tensors[x]->data)[i] = (float)i;
		ok(aoe_graph_run(g, &o) == 0, "and then run");
		out = g->tensors[y]->data;
		for (i = 0; i < 6; i++)
			good &= out[i] == -(float)i;
		good &= ((int64_t *)g->tensors[s]->data)[0] == 2 &&
		    ((int64_t *)g->tensors[s]->data)[1] == 3;
		ok(good, "with the right outputs");
		ok(g->tensors[s]->kind == AOE_T_CONST, "Shape was folded");
	}
	aoe_graph_free(g);
}

/* A constant int64 tensor of n values; a scalar when n is 0. */
static int
const_i64(aoe_graph *g, const char *name, int n, const int64_t *v)
{
	int64_t d = n;
	int t = aoe_graph_tensor(g, name);

	aoe_tensor_set(g->tensors[t], AOE_I64, n > 0, &d);
	g->tensors[t]->kind = AOE_T_CONST;
	aoe_tensor_alloc_const(g->tensors[t]);
	memcpy(g->tensors[t]->data, v, (size_t)(n ? n : 1) * sizeof(int64_t));
	return t;
}

/*
 * The shape-only subgraph an exporter writes for a dynamic batch,
 * Reshape(x, Concat(Unsqueeze(Gather(Shape(x), 0)), [-1])), folds to a
 * constant once --input-shape binds the batch: only the Reshape runs.
 */
static void
test_fold_shape_chain(void)
{
	aoe_graph *g = aoe_graph_new("foldchain");
	aoe_run_opts o;
	int64_t d[3] = { -1, 3, 4 }, zero = 0, minus1 = -1;
	int x, s, i0, b, ax, bu, m1, cs, y, n, i, rc, live = 0, good;
	float *out;

	g->opset = 13;
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 3, d);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;
	s = aoe_graph_tensor(g, "s");
	i0 = const_i64(g, "i0", 0, &zero);
	b = aoe_graph_tensor(g, "b");
	ax = const_i64(g, "ax", 1, &zero);
	bu = aoe_graph_tensor(g, "bu");
	m1 = const_i64(g, "m1", 1, &minus1);
	cs = aoe_graph_tensor(g, "cs");
	y = aoe_graph_tensor(g, "y");
	aoe_graph_add_node(g, "shape", "Shape", 1, &x, 1, &s);
	aoe_graph_add_node(g, "gather", "Gather", 2, (int[]){ s, i0 }, 1, &b);
	aoe_graph_add_node(g, "unsq", "Unsqueeze", 2, (int[]){ b, ax }, 1,
	    &bu);
	n = aoe_graph_add_node(g, "concat", "Concat", 2, (int[]){ bu, m1 }, 1,
	    &cs);
	aoe_node_add_attr(&g->nodes[n], "axis", AOE_A_INT)->i = 0;
	aoe_graph_add_node(g, "reshape", "Reshape", 2, (int[]){ x, cs }, 1, &y);
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = y;
	aoe_run_opts_init(&o);
	o.use_bank = 0;
	rc = aoe_bind_shapes(g, "x:2,3,4");
	ok(rc == 0, "binds the dynamic batch");
	rc = rc == 0 ? aoe_graph_prepare(g, &o) : rc;
	ok(rc == 0, "prepares the shape-only chain");
	if (rc != 0) {
		printf("# %s\n", aoe_errmsg());
		aoe_graph_free(g);
		return;
	}
	for (i = 0; i < g->norder; i++)
		live += !g->nodes[g->order[i]].dead;
	ok(live == 1 && strcmp(g->nodes[g->order[0]].op_type, "Reshape") == 0,
	    "Shape, Gather, Unsqueeze and Concat are folded, only Reshape runs");
	ok(g->tensors[cs]->kind == AOE_T_CONST &&
	    ((int64_t *)g->tensors[cs]->data)[0] == 2 &&
	    ((int64_t *)g->tensors[cs]->data)[1] == -1,
	    "the folded shape is the constant [2, -1]");
	good = g->tensors[y]->ndim == 2 && g->tensors[y]->dims[0] == 2 &&
	    g->tensors[y]->dims[1] == 12;
	if (good) {
		for (i = 0; i < 24; i++)
			((float *)g->tensors[x]->data)[i] = (float)i;
		good = aoe_graph_run(g, &o) == 0;
		out = g->tensors[y]->data;
		for (i = 0; good && i < 24; i++)
			good = out[i] == (float)i;
	}
	ok(good, "and the Reshape gives 2x12 with x's values");
	aoe_graph_free(g);
}

/*
 * Shapes known at run time: Relu (static, in the arena) -> NonZero (a
 * dynamic output, sized by its kernel) -> Transpose (a dynamic node,
 * inferred and sized at each run), run twice with a different count of
 * non-zero elements, so that the buffers are resized.
 */
static void
test_dynamic(void)
{
	aoe_graph *g = aoe_graph_new("dyn");
	aoe_run_opts o;
	int64_t d[2] = { 2, 3 };
	int x, r, nz, y, rc, i, good;
	float *xv;
	int64_t *yv;

	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 2, d);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;
	r = aoe_graph_tensor(g, "r");
	nz = aoe_graph_tensor(g, "nz");
	y = aoe_graph_tensor(g, "y");
	aoe_graph_add_node(g, "relu", "Relu", 1, &x, 1, &r);
	aoe_graph_add_node(g, "nonzero", "NonZero", 1, &r, 1, &nz);
	aoe_graph_add_node(g, "transpose", "Transpose", 1, &nz, 1, &y);
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = y;
	aoe_run_opts_init(&o);
	o.use_bank = 0;
	o.nthreads = 1;
	rc = aoe_graph_prepare(g, &o);
	ok(rc == 0, "prepares a graph with a data-dependent shape");
	if (rc != 0) {
		printf("# %s\n", aoe_errmsg());
		aoe_graph_free(g);
		return;
	}
	ok(g->tensors[r]->offset >= 0 && !g->tensors[r]->dynamic &&
	    g->tensors[nz]->dynamic && g->tensors[nz]->offset < 0 &&
	    g->tensors[y]->dynamic && g->tensors[y]->offset < 0,
	    "the static tensor is in the arena, the dynamic ones are not");
	ok(g->nodes[2].dyn && !g->nodes[1].dyn,
	    "the node reading a dynamic tensor is dynamic");
	xv = g->tensors[x]->data;
	for (i = 0; i < 6; i++)
		xv[i] = i == 1 || i == 5 ? 1 : -1;
	rc = aoe_graph_run(g, &o);
	yv = g->tensors[y]->data;
	good = rc == 0 && g->tensors[y]->ndim == 2 &&
	    g->tensors[y]->dims[0] == 2 && g->tensors[y]->dims[1] == 2 &&
	    yv[0] == 0 && yv[1] == 1 && yv[2] == 1 && yv[3] == 2;
	ok(good, "two non-zeros: the output is [[0 1] [1 2]]");
	for (i = 0; i < 6; i++)
		xv[i] = 1;
	rc = aoe_graph_run(g, &o);
	yv = g->tensors[y]->data;
	good = rc == 0 && g->tensors[y]->dims[0] == 6 &&
	    g->tensors[y]->dims[1] == 2;
	for (i = 0; good && i < 6; i++)
		good = yv[2 * i] == i / 3 && yv[2 * i + 1] == i % 3;
	ok(good, "six non-zeros on the next run: 6x2, every index");
	aoe_graph_free(g);
}

int
main(void)
{
	test_numbers();
	test_broadcast();
	test_sched();
	test_executor();
	test_structure();
	test_reprepare();
	test_fold_shape_chain();
	test_dynamic();
	return done_testing();
}
