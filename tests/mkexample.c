/*
 * mkexample - write the bundled example model and test fixtures with
 * libaoe's own ONNX writer, from deterministic weights.
 *
 * usage: mkexample [-d | -u | -b | -w] file.onnx
 *	(none)	the example CNN: 1x3x64x64 image, 10 class probabilities
 *	-d	the same CNN with a dynamic batch dimension "N"
 *	-u	a model with operators libaoe does not support
 *	-b	the same CNN with dynamic batch, height and width
 *	-w	a text-line model as PP-OCR's rec: a 1x3x32xW image (W
 *		dynamic), its stem and strided block, 1x32x8x(W/4) features
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"

static uint64_t state = 0x2545F4914F6CDD1DULL;

/* Uniform in [-1, 1), from xorshift64*. */
static float
urand(void)
{
	state ^= state >> 12;
	state ^= state << 25;
	state ^= state >> 27;
	return (float)((double)((state * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0 * 2.0 - 1.0);
}

static int
weight(aoe_graph *g, const char *name, int ndim, const int64_t *dims,
    float scale, float offset)
{
	int ti = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[ti];
	int64_t i, n;

	aoe_tensor_set(t, AOE_F32, ndim, dims);
	if (aoe_tensor_alloc_const(t) < 0)
		exit(1);
	n = aoe_tensor_numel(t);
	for (i = 0; i < n; i++)
		((float *)t->data)[i] = offset + scale * urand();
	return ti;
}

static void
ints(aoe_graph *g, int node, const char *name, int n, const int64_t *v)
{
	aoe_attr *a = aoe_node_add_attr(&g->nodes[node], name, AOE_A_INTS);

	a->n = n;
	a->ints = aoe_xcalloc((size_t)n, sizeof(int64_t));
	memcpy(a->ints, v, (size_t)n * sizeof(int64_t));
}

static int
conv(aoe_graph *g, const char *name, int x, int cin, int cout, int k,
    int stride, int group)
{
	char wn[64], bn[64];
	int64_t wd[4] = { cout, cin / group, k, k }, bd[1] = { cout };
	int64_t pads[4] = { k / 2, k / 2, k / 2, k / 2 }, st[2] = { stride,
	    stride }, ks[2] = { k, k };
	int in[3], out, ni;

	snprintf(wn, sizeof(wn), "%s.weight", name);
	snprintf(bn, sizeof(bn), "%s.bias", name);
	in[0] = x;
	in[1] = weight(g, wn, 4, wd, sqrtf(6.0f / (float)(cin / group * k *
	    k)), 0);
	in[2] = weight(g, bn, 1, bd, 0.1f, 0);
	out = aoe_graph_tensor(g, name);
	ni = aoe_graph_add_node(g, name, "Conv", 3, in, 1, &out);
	ints(g, ni, "kernel_shape", 2, ks);
	ints(g, ni, "pads", 4, pads);
	ints(g, ni, "strides", 2, st);
	aoe_node_add_attr(&g->nodes[ni], "group", AOE_A_INT)->i = group;
	return out;
}

static int
unary(aoe_graph *g, const char *op, const char *name, int x)
{
	int out = aoe_graph_tensor(g, name);

	aoe_graph_add_node(g, name, op, 1, &x, 1, &out);
	return out;
}

static int
batchnorm(aoe_graph *g, const char *name, int x, int c)
{
	char n[64];
	int64_t d[1] = { c };
	int in[5], out = aoe_graph_tensor(g, name);

	in[0] = x;
	snprintf(n, sizeof(n), "%s.scale", name);
	in[1] = weight(g, n, 1, d, 0.2f, 1.0f);
	snprintf(n, sizeof(n), "%s.shift", name);
	in[2] = weight(g, n, 1, d, 0.1f, 0);
	snprintf(n, sizeof(n), "%s.mean", name);
	in[3] = weight(g, n, 1, d, 0.1f, 0);
	snprintf(n, sizeof(n), "%s.var", name);
	in[4] = weight(g, n, 1, d, 0.2f, 1.0f);
	aoe_graph_add_node(g, name, "BatchNormalization", 5, in, 1, &out);
	return out;
}

/* The -w model ends at tensor y, its one output. */
static int
save_rec(aoe_graph *g, int y, const char *path)
{
	aoe_tensor *t = g->tensors[y];

	t->dtype = AOE_F32;
	t->ndim = 4;
	t->dims[0] = 1;
	t->dims[1] = 32;
	t->dims[2] = 8;
	t->dims[3] = -1;
	t->dim_param[3] = aoe_xstrdup("W4");
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = y;
	if (aoe_onnx_save(g, path) < 0) {
		aoe_warnx("%s", aoe_errmsg());
		aoe_graph_free(g);
		return AOE_EXIT_IO;
	}
	aoe_graph_free(g);
	return 0;
}

int
main(int argc, char **argv)
{
	aoe_graph *g = aoe_graph_new("aoe_example_cnn");
	int64_t in_dims[4] = { 1, 3, 64, 64 }, fcw[2] = { 10, 64 },
	    fcb[1] = { 10 }, k2[2] = { 2, 2 };
	int x, y, mode = 0, in[3], ni;
	aoe_tensor *t;

	aoe_setprogname(argv[0]);
	if (argc == 3 && argv[1][0] == '-')
		mode = argv[1][1];
	else if (argc != 2) {
		fprintf(stderr, "usage: mkexample [-d | -u | -b | -w] "
		    "file.onnx\n");
		return AOE_EXIT_USAGE;
	}
	g->opset = 13;
	x = aoe_graph_tensor(g, "image");
	t = g->tensors[x];
	aoe_tensor_set(t, AOE_F32, 4, in_dims);
	t->kind = AOE_T_INPUT;
	if (mode == 'd' || mode == 'b') {
		t->dims[0] = -1;
		t->dim_param[0] = aoe_xstrdup("N");
	}
	if (mode == 'b') {
		t->dims[2] = t->dims[3] = -1;
		t->dim_param[2] = aoe_xstrdup("H");
		t->dim_param[3] = aoe_xstrdup("W");
	}
	if (mode == 'w') {
		t->dims[2] = 32;
		t->dims[3] = -1;
		t->dim_param[3] = aoe_xstrdup("W");
	}
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;

	/* Stem, a strided block, a depthwise-separable block, a head. */
	y = unary(g, "Relu", "stem.relu", conv(g, "stem.conv", x, 3, 16, 3,
	    1, 1));
	ni = aoe_graph_add_node(g, "stem.pool", "MaxPool", 1, &y, 1,
	    (int[]){ aoe_graph_tensor(g, "stem.pool") });
	ints(g, ni, "kernel_shape", 2, k2);
	ints(g, ni, "strides", 2, k2);
	y = g->nodes[ni].out[0];
	y = conv(g, "b1.conv", y, 16, 32, 3, 2, 1);
	y = unary(g, "Relu", "b1.relu", batchnorm(g, "b1.bn", y, 32));
	if (mode == 'w')
		return save_rec(g, y, argv[argc - 1]);
	y = unary(g, "Sigmoid", "b2.dw.act", conv(g, "b2.dw", y, 32, 32, 3,
	    1, 32));
	y = unary(g, "Relu", "b2.pw.act", conv(g, "b2.pw", y, 32, 64, 1, 1,
	    1));
	y = unary(g, "GlobalAveragePool", "head.gap", y);
	y = unary(g, "Flatten", "head.flatten", y);
	in[0] = y;
	in[1] = weight(g, "head.fc.weight", 2, fcw, 0.3f, 0);
	in[2] = weight(g, "head.fc.bias", 1, fcb, 0.1f, 0);
	y = aoe_graph_tensor(g, "head.fc");
	ni = aoe_graph_add_node(g, "head.fc", "Gemm", 3, in, 1, &y);
	aoe_node_add_attr(&g->nodes[ni], "transB", AOE_A_INT)->i = 1;
	if (mode == 'u') {
		y = unary(g, "NoSuchOperator", "head.nosuch", y);
		y = unary(g, "StringNormalizer", "head.norm", y);
	}
	y = unary(g, "Softmax", "probabilities", y);
	t = g->tensors[y];
	t->dtype = AOE_F32;
	t->ndim = 2;
	t->dims[0] = mode == 'd' || mode == 'b' ? -1 : 1;
	t->dims[1] = 10;
	if (t->dims[0] < 0)
		t->dim_param[0] = aoe_xstrdup("N");
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = y;
	if (aoe_onnx_save(g, argv[argc - 1]) < 0) {
		aoe_warnx("%s", aoe_errmsg());
		aoe_graph_free(g);
		return AOE_EXIT_IO;
	}
	aoe_graph_free(g);
	return 0;
}
