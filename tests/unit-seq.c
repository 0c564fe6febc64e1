/*
 * unit-seq - TAP tests of sequences and optionals (lib/kernels/k_seq.c,
 * lib/ir/seq.c): the operators that the ONNX node tests do not cover,
 * chained through the executor, and bad input.
 *
 * usage: unit-seq [dir]
 *
 * With dir, also write there the models of bad input that
 * tests/seq-errors.t runs through aoe-run: seq-at-range.onnx,
 * seq-insert-dtype.onnx and opt-get-empty.onnx.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aoe.h"
#include "tap.h"

/* A tensor of g by name, of dtype and shape, as an input or a constant. */
static int
mk(aoe_graph *g, const char *name, int dtype, int ndim, const int64_t *dims,
    int input)
{
	int i = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[i];

	aoe_tensor_set(t, dtype, ndim, dims);
	if (input) {
		t->kind = AOE_T_INPUT;
		g->inputs = aoe_xrealloc(g->inputs, (size_t)(g->ninputs + 1) *
		    sizeof(int));
		g->inputs[g->ninputs++] = i;
	} else {
		t->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(t);
	}
	return i;
}

/* An int64 constant of n values (a scalar when n is 0: one value). */
static int
ints(aoe_graph *g, const char *name, int n, const int64_t *v)
{
	int64_t d = n;
	int i = mk(g, name, AOE_I64, n ? 1 : 0, &d, 0), k;

	for (k = 0; k < (n ? n : 1); k++)
		((int64_t *)g->tensors[i]->data)[k] = v[k];
	return i;
}

/* A float constant of shape [n] with values v. */
static int
floats(aoe_graph *g, const char *name, int n, const float *v)
{
	int64_t d = n;
	int i = mk(g, name, AOE_F32, 1, &d, 0);

	memcpy(g->tensors[i]->data, v, (size_t)n * sizeof(float));
	return i;
}

/*
 * A node: inputs and outputs by name ("" for an absent input), the
 * outputs made as needed; returns the node, valid until the next one.
 */
static aoe_node *
node(aoe_graph *g, const char *name, const char *op, const char *ins,
    const char *outs)
{
	int in[8], out[8], nin = 0, nout = 0, k;
	char buf[256], *p, *q;

	snprintf(buf, sizeof(buf), "%s", ins);
	for (p = buf; nin < 8 && (q = strsep(&p, ",")) != NULL && *buf; )
		in[nin++] = *q ? aoe_graph_tensor(g, q) : -1;
	snprintf(buf, sizeof(buf), "%s", outs);
	for (p = buf; nout < 8 && (q = strsep(&p, ",")) != NULL; )
		out[nout++] = aoe_graph_tensor(g, q);
	k = aoe_graph_add_node(g, name, op, nin, in, nout, out);
	return &g->nodes[k];
}

/* Node "none": an Optional of float32 with no value, as tensor "none". */
static void
empty_optional(aoe_graph *g)
{
	aoe_node *n = node(g, "none", "Optional", "", "none");
	aoe_attr *a = aoe_node_add_attr(n, "type", AOE_A_TYPE_PROTO);

	a->t = aoe_xcalloc(1, sizeof(*a->t));
	a->t->name = aoe_xstrdup("type");
	a->t->dtype = AOE_F32;
	a->t->ndim = -1;
}

static void
output(aoe_graph *g, const char *name)
{
	g->outputs = aoe_xrealloc(g->outputs, (size_t)(g->noutputs + 1) *
	    sizeof(int));
	g->outputs[g->noutputs++] = aoe_graph_tensor(g, name);
}

static aoe_tensor *
T(aoe_graph *g, const char *name)
{
	return g->tensors[aoe_graph_find(g, name)];
}

/* Prepare g; 0 or the error. */
static int
prepare(aoe_graph *g)
{
	aoe_run_opts o;

	aoe_run_opts_init(&o);
	o.nthreads = 1;
	o.use_bank = 0;
	return aoe_graph_prepare(g, &o);
}

/* Prepare and run g, its float inputs counting up from 0. */
static int
run(aoe_graph *g)
{
	aoe_run_opts o;
	int i, rc;
	int64_t k;

	if ((rc = prepare(g)) < 0)
		return rc;
	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		for (k = 0; t->dtype == AOE_F32 && k < aoe_tensor_numel(t);
		    k++)
			((float *)t->data)[k] = (float)k;
	}
	aoe_run_opts_init(&o);
	o.nthreads = 1;
	o.use_bank = 0;
	return aoe_graph_run(g, &o);
}

/* Whether t is float32 of shape (nd, dims) holding v. */
static int
is(const aoe_tensor *t, int nd, const int64_t *dims, const float *v)
{
	int64_t k;

	if (t->dtype != AOE_F32 || t->ndim != nd ||
	    memcmp(t->dims, dims, (size_t)nd * sizeof(*dims)) != 0)
		return 0;
	for (k = 0; k < aoe_tensor_numel(t); k++)
		if (((const float *)t->data)[k] != v[k])
			return 0;
	return 1;
}

/*
 * SplitToSequence of a 3x4 input 0..11 and back: lengths 1 and 3 along
 * axis 1, the last element, the length, the concatenation; rows without
 * keepdims, stacked again on axis 0 and on a new last axis.
 */
static void
test_split_concat(void)
{
	aoe_graph *g = aoe_graph_new("split");
	int64_t x[2] = { 3, 4 }, sp[2] = { 1, 3 }, m1 = -1, d33[2] = { 3, 3 };
	int64_t d43[2] = { 4, 3 }, d121[2] = { 12, 1 };
	float v[12], last[9], tr[12];
	aoe_node *n;
	int i, j;

	mk(g, "x", AOE_F32, 2, x, 1);
	ints(g, "split", 2, sp);
	ints(g, "m1", 0, &m1);
	n = node(g, "s", "SplitToSequence", "x,split", "seq");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 1;
	node(g, "len", "SequenceLength", "seq", "len");
	node(g, "at", "SequenceAt", "seq,m1", "last");
	n = node(g, "cat", "ConcatFromSequence", "seq", "cat");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 1;
	n = node(g, "rows", "SplitToSequence", "x", "rows");
	aoe_node_add_attr(n, "keepdims", AOE_A_INT)->i = 0;
	n = node(g, "stack", "ConcatFromSequence", "rows", "stack");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 0;
	aoe_node_add_attr(n, "new_axis", AOE_A_INT)->i = 1;
	n = node(g, "stackt", "ConcatFromSequence", "rows", "stackt");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = -1;
	aoe_node_add_attr(n, "new_axis", AOE_A_INT)->i = 1;
	n = node(g, "cols", "SplitToSequence", "x", "cols");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 1;
	n = node(g, "colcat", "ConcatFromSequence", "cols", "colcat");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 0;
	output(g, "len");
	output(g, "last");
	output(g, "cat");
	output(g, "stack");
	output(g, "stackt");
	output(g, "colcat");
	ok(run(g) == 0, "split and concat: runs (%s)", aoe_errmsg());
	for (i = 0; i < 12; i++)
		v[i] = (float)i;
	for (i = 0; i < 3; i++)
		for (j = 0; j < 3; j++)
			last[i * 3 + j] = (float)(i * 4 + j + 1);
	for (i = 0; i < 4; i++)
		for (j = 0; j < 3; j++)
			tr[i * 3 + j] = (float)(j * 4 + i);
	ok(*(int64_t *)T(g, "len")->data == 2, "SequenceLength of a split "
	    "in two");
	ok(T(g, "last")->dynamic && is(T(g, "last"), 2, d33, last),
	    "SequenceAt -1 of pieces of differing shape: sized at run time");
	ok(T(g, "cat")->dynamic && is(T(g, "cat"), 2, x, v),
	    "ConcatFromSequence undoes SplitToSequence");
	ok(!T(g, "stack")->dynamic && is(T(g, "stack"), 2, x, v),
	    "rows without keepdims, stacked on a new axis 0: static shape");
	ok(is(T(g, "stackt"), 2, d43, tr), "stacked on a new last axis: "
	    "the transpose");
	ok(!T(g, "colcat")->dynamic && is(T(g, "colcat"), 2, d121, tr),
	    "columns with keepdims, one under the other: static shape");
	aoe_graph_free(g);
}

/*
 * SequenceConstruct, SequenceErase, SequenceInsert and SequenceEmpty,
 * read back by ConcatFromSequence.
 */
static void
test_construct(void)
{
	aoe_graph *g = aoe_graph_new("construct");
	const float p[2] = { 1, 2 }, q[2] = { 3, 4 }, r[2] = { 5, 6 };
	const float w[2] = { 7, 8 }, cat[6] = { 7, 8, 1, 2, 5, 6 };
	const float st[4] = { 5, 6, 1, 2 };
	int64_t m2 = -2, zero = 0, d6 = 6, d22[2] = { 2, 2 };
	aoe_node *n;

	floats(g, "p", 2, p);
	floats(g, "q", 2, q);
	floats(g, "r", 2, r);
	floats(g, "w", 2, w);
	ints(g, "m2", 0, &m2);
	ints(g, "zero", 0, &zero);
	node(g, "make", "SequenceConstruct", "p,q,r", "s");
	node(g, "erase", "SequenceErase", "s,m2", "s2");
	node(g, "ins", "SequenceInsert", "s2,w,zero", "s3");
	node(g, "len", "SequenceLength", "s3", "len");
	n = node(g, "cat", "ConcatFromSequence", "s3", "cat");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 0;
	node(g, "empty", "SequenceEmpty", "", "e0");
	node(g, "ins1", "SequenceInsert", "e0,p", "e1");
	node(g, "ins2", "SequenceInsert", "e1,r,zero", "e2");
	n = node(g, "stack", "ConcatFromSequence", "e2", "stack");
	aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 0;
	aoe_node_add_attr(n, "new_axis", AOE_A_INT)->i = 1;
	output(g, "len");
	output(g, "cat");
	output(g, "stack");
	ok(run(g) == 0, "construct, erase, insert: runs (%s)", aoe_errmsg());
	ok(*(int64_t *)T(g, "len")->data == 3, "three after construct 3, "
	    "erase 1, insert 1");
	ok(!T(g, "cat")->dynamic && is(T(g, "cat"), 1, &d6, cat),
	    "erase at -2 and insert at 0, in order: static shape");
	ok(is(T(g, "stack"), 2, d22, st), "SequenceEmpty then two inserts, "
	    "stacked");
	ok(T(g, "s3")->seq_len == 3 && T(g, "s3")->ndim == 1,
	    "the length and element shape are known when prepared");
	aoe_graph_free(g);
}

/* Write *gp as aoe-graph(5) and read it back in its place. */
static void
json_again(aoe_graph **gp)
{
	char path[] = "/tmp/unit-seq.XXXXXX";
	FILE *fp;
	int fd = mkstemp(path);

	if (fd < 0 || (fp = fdopen(fd, "w")) == NULL) {
		aoe_graph_free(*gp);
		*gp = NULL;
		return;
	}
	aoe_json_save(*gp, fp);
	fclose(fp);
	aoe_graph_free(*gp);
	if (aoe_json_load(path, gp) < 0)
		*gp = NULL;
	unlink(path);
}

/* Optional of a tensor, of a sequence, and empty. */
static void
test_optional(void)
{
	aoe_graph *g = aoe_graph_new("optional");
	const float p[2] = { 1, 2 };
	int64_t d2 = 2;

	floats(g, "p", 2, p);
	node(g, "opt", "Optional", "p", "o");
	node(g, "has", "OptionalHasElement", "o", "has");
	node(g, "get", "OptionalGetElement", "o", "got");
	node(g, "make", "SequenceConstruct", "p,p", "s");
	node(g, "opts", "Optional", "s", "os");
	node(g, "gets", "OptionalGetElement", "os", "gs");
	node(g, "len", "SequenceLength", "gs", "len");
	empty_optional(g);
	node(g, "hasnone", "OptionalHasElement", "none", "hasnone");
	node(g, "hasabsent", "OptionalHasElement", "", "hasabsent");
	output(g, "has");
	output(g, "got");
	output(g, "len");
	output(g, "hasnone");
	output(g, "hasabsent");
	ok(run(g) == 0, "optionals: runs (%s)", aoe_errmsg());
	ok(*(uint8_t *)T(g, "has")->data == 1 && is(T(g, "got"), 1, &d2, p),
	    "Optional of a tensor holds it");
	ok(*(int64_t *)T(g, "len")->data == 2, "Optional of a sequence "
	    "holds it");
	ok(*(uint8_t *)T(g, "hasnone")->data == 0 &&
	    *(uint8_t *)T(g, "hasabsent")->data == 0,
	    "an empty optional and an absent input have no element");
	json_again(&g);
	ok(g != NULL && run(g) == 0 && *(uint8_t *)T(g, "has")->data == 1 &&
	    *(int64_t *)T(g, "len")->data == 2 &&
	    *(uint8_t *)T(g, "hasnone")->data == 0 &&
	    T(g, "os")->optional && T(g, "os")->vkind == AOE_V_SEQ,
	    "the same through aoe-graph(5): kinds and Optional's type kept");
	aoe_graph_free(g);
}

/*
 * SequenceMap with a body Add(a, b): over a sequence and a tensor, and
 * over two sequences of different lengths (bad input).
 */
static void
test_seqmap(void)
{
	const float p[2] = { 1, 2 }, q[2] = { 3, 4 }, r[2] = { 10, 20 };
	const float pr[2] = { 11, 22 }, qr[2] = { 13, 24 };
	int64_t d2 = 2;
	aoe_graph *g, *b;
	aoe_tensor *y;
	aoe_node *n;
	int bad, rc;

	for (bad = 0; bad < 2; bad++) {
		g = aoe_graph_new("map");
		floats(g, "p", 2, p);
		floats(g, "q", 2, q);
		floats(g, "r", 2, r);
		node(g, "make", "SequenceConstruct", "p,q", "x0");
		node(g, "make1", "SequenceConstruct", "p", "x1");
		b = aoe_graph_new("body");
		mk(b, "a", AOE_F32, -1, NULL, 1);
		mk(b, "b", AOE_F32, -1, NULL, 1);
		node(b, "add", "Add", "a,b", "o");
		output(b, "o");
		n = node(g, "map", "SequenceMap", bad ? "x0,x1" : "x0,r", "y");
		aoe_node_add_attr(n, "body", AOE_A_GRAPH)->g = b;
		output(g, "y");
		rc = run(g);
		y = T(g, "y");
		if (bad)
			ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "SequenceMap "
			    "'map': sequence 'x1' has 1 elements, 'x0' 2") !=
			    NULL, "SequenceMap over sequences of two lengths: "
			    "%s", aoe_errmsg());
		else
			ok(rc == 0 && y->vkind == AOE_V_SEQ && y->seq &&
			    y->seq->n == 2 && is(y->seq->t[0], 1, &d2, pr) &&
			    is(y->seq->t[1], 1, &d2, qr), "SequenceMap adds a "
			    "tensor to each element (%s)", aoe_errmsg());
		aoe_graph_free(g);
	}
}

/*
 * The bad-input models: SequenceAt past the end, SequenceInsert of an
 * int64 tensor into a float sequence, OptionalGetElement of an empty
 * optional; each with a float input x of 2x3 and an output y.
 */
static aoe_graph *
bad_model(int which)
{
	aoe_graph *g = aoe_graph_new("bad");
	int64_t x[2] = { 2, 3 }, five = 5, three[3] = { 1, 2, 3 };
	aoe_node *n;

	g->opset = 17;
	mk(g, "x", AOE_F32, 2, x, 1);
	if (which == 0) {
		ints(g, "five", 0, &five);
		node(g, "split", "SplitToSequence", "x", "seq");
		node(g, "at", "SequenceAt", "seq,five", "y");
	} else if (which == 1) {
		ints(g, "three", 3, three);
		node(g, "split", "SplitToSequence", "x", "seq");
		node(g, "insert", "SequenceInsert", "seq,three", "seq2");
		n = node(g, "cat", "ConcatFromSequence", "seq2", "y");
		aoe_node_add_attr(n, "axis", AOE_A_INT)->i = 0;
	} else {
		empty_optional(g);
		node(g, "get", "OptionalGetElement", "none", "v");
		node(g, "add", "Add", "x,v", "y");
	}
	output(g, "y");
	return g;
}

/* Bad input: the error names the node and says why, nothing crashes. */
static void
test_errors(const char *dir)
{
	static const char *const file[3] = { "seq-at-range.onnx",
	    "seq-insert-dtype.onnx", "opt-get-empty.onnx" };
	aoe_graph *g;
	char path[4096];
	int i, rc;

	g = bad_model(0);
	rc = run(g);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "SequenceAt 'at': "
	    "position 5 is out of range for a sequence of 2") != NULL,
	    "SequenceAt past the end: %s", aoe_errmsg());
	aoe_graph_free(g);
	g = bad_model(1);
	rc = prepare(g);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "SequenceInsert "
	    "'insert': tensor 'three' is int64, the sequence's elements "
	    "float32") != NULL, "SequenceInsert of another dtype: %s",
	    aoe_errmsg());
	aoe_graph_free(g);
	g = bad_model(2);
	rc = run(g);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "OptionalGetElement "
	    "'get': optional 'none' is empty") != NULL,
	    "OptionalGetElement of an empty optional: %s", aoe_errmsg());
	aoe_graph_free(g);

	g = aoe_graph_new("bad");
	{
		int64_t x[2] = { 2, 3 }, sp = 1;
		mk(g, "x", AOE_F32, 2, x, 1);
		ints(g, "split", 1, &sp);
		node(g, "split", "SplitToSequence", "x,split", "seq");
		output(g, "seq");
	}
	rc = prepare(g);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "SplitToSequence "
	    "'split': split lengths add up to 1, the axis is 2") != NULL,
	    "split lengths that do not cover the axis: %s", aoe_errmsg());
	aoe_graph_free(g);

	g = aoe_graph_new("bad");
	{
		int64_t x[2] = { 2, 3 };
		mk(g, "x", AOE_F32, 2, x, 1);
		node(g, "split", "SplitToSequence", "x", "seq");
		node(g, "add", "Add", "seq,x", "y");
		output(g, "y");
	}
	rc = prepare(g);
	ok(rc == -AOE_EDATA && strstr(aoe_errmsg(), "Add 'add': input 'seq' "
	    "is a sequence, not a tensor") != NULL,
	    "a sequence where a tensor belongs: %s", aoe_errmsg());
	aoe_graph_free(g);

	for (i = 0; dir && i < 3; i++) {
		g = bad_model(i);
		snprintf(path, sizeof(path), "%s/%s", dir, file[i]);
		ok(aoe_onnx_save(g, path) == 0, "write %s (%s)", file[i],
		    aoe_errmsg());
		aoe_graph_free(g);
	}
}

int
main(int argc, char **argv)
{
	test_split_concat();
	test_construct();
	test_optional();
	test_seqmap();
	test_errors(argc > 1 ? argv[1] : NULL);
	return done_testing();
}
