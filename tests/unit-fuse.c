/*
 * unit-fuse.c - subgraph decisions (lib/passes/fuse.c): fused graphs compute
 * what unfused ones do, on random Conv/BN/activation/Gemm chains and on
 * the models given as arguments; subgraph bank entries apply only when
 * their signature matches.
 *
 * usage: unit-fuse example.onnx tmpdir [model:input:shape ...]
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "aoe.h"
#include "bank.h"

static int nt, nfail;

static void
ok(int cond, const char *what)
{
	printf("%sok %d - %s\n", cond ? "" : "not ", ++nt, what);
	if (!cond)
		nfail++;
}

static uint64_t rs;

static float
frand(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return (float)((double)((rs * 2685821657736338717ULL) >> 11) /
	    9007199254740992.0 * 2.0 - 1.0);
}

static int
irand(int n)
{
	return (int)((frand() + 1) / 2 * n) % n;
}

static int
cst(aoe_graph *g, const char *name, int ndim, const int64_t *dims, float lo,
    float hi)
{
	int i = aoe_graph_tensor(g, name);
	aoe_tensor *t = g->tensors[i];
	int64_t j;

	aoe_tensor_set(t, AOE_F32, ndim, dims);
	aoe_tensor_alloc_const(t);
	for (j = 0; j < aoe_tensor_numel(t); j++)
		((float *)t->data)[j] = lo + (hi - lo) * (frand() + 1) / 2;
	return i;
}

/*
 * A Mul or Add of x (channels m) by a constant, one value or one a
 * channel; returns the output tensor.
 */
static int
affine(aoe_graph *g, int x, int64_t m, const char *tag)
{
	int64_t cd[3] = { m, 1, 1 }, one[1] = { 1 };
	int in[2], out[1], mul = irand(2), o = irand(2);
	char name[96];

	snprintf(name, sizeof(name), "c%s", tag);
	in[o] = x;
	in[1 - o] = irand(2) ? cst(g, name, 3, cd, 0.5f, 1.5f) :
	    cst(g, name, 1, one, 0.5f, 1.5f);
	snprintf(name, sizeof(name), "o%s", tag);
	out[0] = aoe_graph_tensor(g, name);
	snprintf(name, sizeof(name), "n%s", tag);
	aoe_graph_add_node(g, name, mul ? "Mul" : "Add", 2, in, 1, out);
	return out[0];
}

/* HardSwish written out: x * Clip(x + 3, 0, 6) / 6; returns the output. */
static int
hardswish(aoe_graph *g, int x, const char *tag)
{
	int64_t none[1] = { 0 };
	int in[3], out[1], a, c, m, k;
	char name[96];
	const float v[4] = { 3, 0, 6, 6 };
	int ci[4];

	for (k = 0; k < 4; k++) {
		snprintf(name, sizeof(name), "hk%d%s", k, tag);
		ci[k] = cst(g, name, 0, none, v[k], v[k]);
	}
	in[0] = x;
	in[1] = ci[0];
	snprintf(name, sizeof(name), "ha%s", tag);
	out[0] = a = aoe_graph_tensor(g, name);
	aoe_graph_add_node(g, name, "Add", 2, in, 1, out);
	in[0] = a;
	in[1] = ci[1];
	in[2] = ci[2];
	snprintf(name, sizeof(name), "hc%s", tag);
	out[0] = c = aoe_graph_tensor(g, name);
	aoe_graph_add_node(g, name, "Clip", 3, in, 1, out);
	in[0] = c;
	in[1] = x;
	snprintf(name, sizeof(name), "hm%s", tag);
	out[0] = m = aoe_graph_tensor(g, name);
	aoe_graph_add_node(g, name, "Mul", 2, in, 1, out);
	in[0] = m;
	in[1] = ci[3];
	snprintf(name, sizeof(name), "hd%s", tag);
	out[0] = aoe_graph_tensor(g, name);
	aoe_graph_add_node(g, name, "Div", 2, in, 1, out);
	return out[0];
}

/*
 * HardSwish as torch.onnx writes it below opset 14: x * HardSigmoid(x)
 * with alpha 1/6 (beta 1/2 by default or given); returns the output.
 */
static int
hardswish_hs(aoe_graph *g, int x, const char *tag)
{
	int in[2], out[1], h, nd, o;
	char name[96];

	in[0] = x;
	snprintf(name, sizeof(name), "hh%s", tag);
	out[0] = h = aoe_graph_tensor(g, name);
	nd = aoe_graph_add_node(g, name, "HardSigmoid", 1, in, 1, out);
	aoe_node_add_attr(&g->nodes[nd], "alpha", AOE_A_FLOAT)->f =
	    1.0f / 6;
	if (irand(2))
		aoe_node_add_attr(&g->nodes[nd], "beta", AOE_A_FLOAT)->f =
		    0.5f;
	o = irand(2);
	in[o] = x;
	in[1 - o] = h;
	snprintf(name, sizeof(name), "hm%s", tag);
	out[0] = aoe_graph_tensor(g, name);
	aoe_graph_add_node(g, name, "Mul", 2, in, 1, out);
	return out[0];
}

/*
 * A random chain: Conv [BN] [Add] [act] [Conv [BN] [Add] [act]]
 * [Flatten Gemm [act] | MatMul Add [act]], each residual Add's other
 * operand a graph input.
 */
static aoe_graph *
random_graph(int *nfusable)
{
	aoe_graph *g = aoe_graph_new("r");
	int64_t c = 1 + irand(8), h = 3 + irand(9), m = 1 + irand(8);
	int64_t dims[4] = { 1 + irand(2), c, h, h }, wd[4], k;
	int x, y, w, b, in[5], out[1], i, nd, group, tail, resid;
	char name[64];
	aoe_attr *a;

	*nfusable = 0;
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 4, dims);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(1, sizeof(int));
	g->inputs[g->ninputs++] = x;
	for (i = 0; i < 2; i++) {
		if (i == 1 && irand(2))
			break;
		group = irand(3) == 0 ? (int)c : 1;
		if (group > 1)
			m = c;
		k = 1 + 2 * irand(2);
		wd[0] = m;
		wd[1] = c / group;
		wd[2] = wd[3] = k;
		snprintf(name, sizeof(name), "w%d", i);
		w = cst(g, name, 4, wd, -1, 1);
		snprintf(name, sizeof(name), "b%d", i);
		b = irand(2) ? cst(g, name, 1, wd, -1, 1) : -1;
		snprintf(name, sizeof(name), "y%d", i);
		y = aoe_graph_tensor(g, name);
		in[0] = x;
		in[1] = w;
		in[2] = b;
		out[0] = y;
		snprintf(name, sizeof(name), "conv%d", i);
		nd = aoe_graph_add_node(g, name, "Conv", b >= 0 ? 3 : 2, in, 1,
		    out);
		a = aoe_node_add_attr(&g->nodes[nd], "pads", AOE_A_INTS);
		a->n = 4;
		a->ints = aoe_xcalloc(4, sizeof(int64_t));
		a->ints[0] = a->ints[1] = a->ints[2] = a->ints[3] = k / 2;
		if (group > 1)
			aoe_node_add_attr(&g->nodes[nd], "group",
			    AOE_A_INT)->i = group;
		x = y;
		if (irand(2)) {
			int64_t md[1] = { m };
			snprintf(name, sizeof(name), "bn%d", i);
			in[0] = x;
			snprintf(name, sizeof(name), "s%d", i);
			in[1] = cst(g, name, 1, md, 0.5f, 1.5f);
			snprintf(name, sizeof(name), "bb%d", i);
			in[2] = cst(g, name, 1, md, -1, 1);
			snprintf(name, sizeof(name), "mean%d", i);
			in[3] = cst(g, name, 1, md, -1, 1);
			snprintf(name, sizeof(name), "var%d", i);
			in[4] = cst(g, name, 1, md, 0.1f, 2);
			snprintf(name, sizeof(name), "z%d", i);
			out[0] = y = aoe_graph_tensor(g, name);
			snprintf(name, sizeof(name), "bn%d", i);
			aoe_graph_add_node(g, name, "BatchNormalization", 5,
			    in, 1, out);
			(*nfusable)++;
			x = y;
		}
		if (irand(3) == 0) {
			/* A constant Mul or Add, folded into the weights. */
			snprintf(name, sizeof(name), "pre%d", i);
			x = affine(g, x, m, name);
			(*nfusable)++;
		}
		resid = irand(2);
		if (resid) {
			/* A residual from a graph input of the same shape. */
			int64_t rd[4] = { dims[0], m, h, h };
			int r, o = irand(2);
			snprintf(name, sizeof(name), "r%d", i);
			r = aoe_graph_tensor(g, name);
			aoe_tensor_set(g->tensors[r], AOE_F32, 4, rd);
			g->tensors[r]->kind = AOE_T_INPUT;
			g->inputs = aoe_xrealloc(g->inputs,
			    (size_t)(g->ninputs + 1) * sizeof(int));
			g->inputs[g->ninputs++] = r;
			in[o] = x;
			in[1 - o] = r;
			snprintf(name, sizeof(name), "sum%d", i);
			out[0] = y = aoe_graph_tensor(g, name);
			snprintf(name, sizeof(name), "add%d", i);
			aoe_graph_add_node(g, name, "Add", 2, in, 1, out);
			(*nfusable)++;
			x = y;
		}
		if (irand(4) == 0) {
			/*
			 * HardSwish written out: four nodes, or two
			 * (x * HardSigmoid(x)), all fused.
			 */
			snprintf(name, sizeof(name), "hs%d", i);
			if (irand(2)) {
				x = hardswish_hs(g, x, name);
				(*nfusable) += 2;
			} else {
				x = hardswish(g, x, name);
				(*nfusable) += 4;
			}
			if (irand(2)) {
				/* An affine after the activation. */
				snprintf(name, sizeof(name), "post%d", i);
				x = affine(g, x, m, name);
				(*nfusable)++;
			}
		} else if (irand(4)) {
			static const char *acts[] = { "Relu", "Clip",
			    "Sigmoid" };
			int ak = irand(3);
			int64_t one[1] = { 1 };
			in[0] = x;
			snprintf(name, sizeof(name), "a%d", i);
			out[0] = y = aoe_graph_tensor(g, name);
			if (ak == 1) {
				snprintf(name, sizeof(name), "lo%d", i);
				in[1] = cst(g, name, 0, one, -0.5f, 0);
				snprintf(name, sizeof(name), "hi%d", i);
				in[2] = cst(g, name, 0, one, 0.1f, 0.6f);
			}
			snprintf(name, sizeof(name), "act%d", i);
			aoe_graph_add_node(g, name, acts[ak], ak == 1 ? 3 : 1,
			    in, 1, out);
			(*nfusable)++;
			x = y;
		}
		if (irand(3) == 0) {
			/*
			 * A MaxPool: window 1 to 3, stride 1 or 2, pads below
			 * the window, ceil_mode or not; fused (fuse_pool)
			 * unless the Conv adds a residual.
			 */
			int64_t pk[2], ps[2], pp[4], oh;
			int ceil = irand(2), j;
			for (j = 0; j < 2; j++) {
				pk[j] = 1 + irand(3);
				ps[j] = 1 + irand(2);
				pp[j] = irand((int)pk[j]);
				pp[2 + j] = irand((int)pk[j]);
			}
			in[0] = x;
			snprintf(name, sizeof(name), "mp%d", i);
			out[0] = y = aoe_graph_tensor(g, name);
			nd = aoe_graph_add_node(g, name, "MaxPool", 1, in, 1,
			    out);
			a = aoe_node_add_attr(&g->nodes[nd], "kernel_shape",
			    AOE_A_INTS);
			a->n = 2;
			a->ints = aoe_xcalloc(2, sizeof(int64_t));
			a->ints[0] = a->ints[1] = pk[0];
			a = aoe_node_add_attr(&g->nodes[nd], "strides",
			    AOE_A_INTS);
			a->n = 2;
			a->ints = aoe_xcalloc(2, sizeof(int64_t));
			a->ints[0] = a->ints[1] = ps[0];
			a = aoe_node_add_attr(&g->nodes[nd], "pads",
			    AOE_A_INTS);
			a->n = 4;
			a->ints = aoe_xcalloc(4, sizeof(int64_t));
			a->ints[0] = a->ints[1] = pp[0];
			a->ints[2] = a->ints[3] = pp[2];
			aoe_node_add_attr(&g->nodes[nd], "ceil_mode",
			    AOE_A_INT)->i = ceil;
			/* The pooled height, as the ONNX spec has it. */
			oh = h + pp[0] + pp[2] - pk[0];
			oh = ceil ? (oh + ps[0] - 1) / ps[0] + 1 :
			    oh / ps[0] + 1;
			if (ceil && (oh - 1) * ps[0] >= h + pp[0])
				oh--;
			h = oh;
			if (!resid)
				(*nfusable)++;
			x = y;
		}
		c = m;
		m = 1 + irand(8);
	}
	tail = irand(4);
	if (tail >= 2) {
		int64_t gd[2] = { 3 + irand(5), c * h * h };
		in[0] = x;
		out[0] = y = aoe_graph_tensor(g, "flat");
		aoe_graph_add_node(g, "flatten", "Flatten", 1, in, 1, out);
		x = y;
		in[0] = x;
		in[1] = cst(g, "gw", 2, gd, -1, 1);
		gd[1] = gd[0];
		gd[0] = 1;
		in[2] = cst(g, "gb", 1, gd + 1, -1, 1);
		out[0] = y = aoe_graph_tensor(g, "gy");
		nd = aoe_graph_add_node(g, "gemm", "Gemm", 3, in, 1, out);
		aoe_node_add_attr(&g->nodes[nd], "transB", AOE_A_INT)->i = 1;
		x = y;
		if (irand(2)) {
			in[0] = x;
			out[0] = y = aoe_graph_tensor(g, "gr");
			aoe_graph_add_node(g, "grelu", "Relu", 1, in, 1, out);
			(*nfusable)++;
			x = y;
		}
	} else if (tail == 1) {
		/*
		 * A MatMul over the last axis (one B, or one for each
		 * channel), a bias per column of rank 1 to 4, either operand
		 * order, and an activation: all fused.
		 */
		int64_t n2 = 1 + irand(20), bd[4] = { 1, 1, 1, n2 };
		int64_t md[4] = { 1, c, h, n2 };
		int br = 1 + irand(4), bat = irand(3) == 0, o = irand(2);
		in[0] = x;
		in[1] = cst(g, "mw", bat ? 4 : 2, bat ? md : md + 2, -1, 1);
		out[0] = y = aoe_graph_tensor(g, "my");
		aoe_graph_add_node(g, "matmul", "MatMul", 2, in, 1, out);
		in[o] = y;
		in[1 - o] = cst(g, "mb", br, bd + 4 - br, -1, 1);
		out[0] = x = aoe_graph_tensor(g, "mby");
		aoe_graph_add_node(g, "mbias", "Add", 2, in, 1, out);
		(*nfusable)++;
		if (irand(3)) {
			in[0] = x;
			out[0] = x = aoe_graph_tensor(g, "mr");
			aoe_graph_add_node(g, "mact", irand(2) ? "Relu" :
			    "Sigmoid", 1, in, 1, out);
			(*nfusable)++;
		}
	}
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = x;
	return g;
}

/*
 * A depthwise Conv and a pointwise Conv that reads it (fuse_dw): 3x3 or
 * 5x5, stride 1 or 2, pads below the kernel on each side, channels no
 * multiple of 8 as often as not, an activation after each or not, a
 * bias or not, a residual Add after the pointwise Conv or not, a MaxPool
 * after all or not.  With big
 * set the planes make several bands (k_dwpw.c).
 */
static aoe_graph *
dwpw_graph(int big)
{
	static const char *const acts[] = { NULL, "Relu", "Clip", "HardSwish",
	    "Sigmoid" };
	aoe_graph *g = aoe_graph_new("dwpw");
	int64_t n = 1 + irand(2), c = big ? 40 + irand(40) : 1 + irand(24);
	int64_t h = big ? 48 + irand(30) : 3 + irand(12);
	int64_t w = big ? 40 + irand(30) : 3 + irand(20);
	int64_t k = irand(2) ? 3 : 5, s = 1 + irand(2), m = 1 + irand(40);
	int64_t pads[4], oh, ow, dims[4], one[1] = { 1 };
	int x, y, in[3], out[1], nd, i, ak;
	aoe_attr *a;

	if (h + 2 * (k - 1) < k || w < 1)
		h = k;
	for (i = 0; i < 4; i++)
		pads[i] = irand((int)k);
	if (h + pads[0] + pads[2] < k)
		pads[0] = k - 1;
	if (w + pads[1] + pads[3] < k)
		pads[1] = k - 1;
	oh = (h + pads[0] + pads[2] - k) / s + 1;
	ow = (w + pads[1] + pads[3] - k) / s + 1;
	dims[0] = n;
	dims[1] = c;
	dims[2] = h;
	dims[3] = w;
	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 4, dims);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(2, sizeof(int));
	g->inputs[g->ninputs++] = x;
	/* The depthwise Conv. */
	dims[0] = c;
	dims[1] = 1;
	dims[2] = dims[3] = k;
	in[0] = x;
	in[1] = cst(g, "dw.w", 4, dims, -1, 1);
	in[2] = cst(g, "dw.b", 1, &c, -1, 1);
	out[0] = y = aoe_graph_tensor(g, "dw.y");
	nd = aoe_graph_add_node(g, "dw", "Conv", irand(2) ? 3 : 2, in, 1, out);
	aoe_node_add_attr(&g->nodes[nd], "group", AOE_A_INT)->i = c;
	a = aoe_node_add_attr(&g->nodes[nd], "pads", AOE_A_INTS);
	a->n = 4;
	a->ints = aoe_xcalloc(4, sizeof(int64_t));
	memcpy(a->ints, pads, sizeof(pads));
	a = aoe_node_add_attr(&g->nodes[nd], "strides", AOE_A_INTS);
	a->n = 2;
	a->ints = aoe_xcalloc(2, sizeof(int64_t));
	a->ints[0] = a->ints[1] = s;
	x = y;
	for (i = 0; i < 2; i++) {
		/* An activation after the depthwise Conv, then (i 1) after all. */
		if ((ak = irand(i ? 3 : 5)) != 0) {
			in[0] = x;
			out[0] = y = aoe_graph_tensor(g, i ? "a1" : "a0");
			if (ak == 2) {
				in[1] = cst(g, i ? "lo1" : "lo0", 0, one, -0.5f,
				    0);
				in[2] = cst(g, i ? "hi1" : "hi0", 0, one, 0.1f,
				    0.6f);
			}
			aoe_graph_add_node(g, i ? "act1" : "act0", acts[ak],
			    ak == 2 ? 3 : 1, in, 1, out);
			x = y;
		}
		if (i == 1)
			break;
		/* The pointwise Conv, and a residual Add after it. */
		dims[0] = m;
		dims[1] = c;
		dims[2] = dims[3] = 1;
		in[0] = x;
		in[1] = cst(g, "pw.w", 4, dims, -1, 1);
		in[2] = cst(g, "pw.b", 1, &m, -1, 1);
		out[0] = x = aoe_graph_tensor(g, "pw.y");
		aoe_graph_add_node(g, "pw", "Conv", irand(2) ? 3 : 2, in, 1, out);
		if (irand(3) == 0) {
			int64_t rd[4] = { n, m, oh, ow };
			int r = aoe_graph_tensor(g, "r");
			aoe_tensor_set(g->tensors[r], AOE_F32, 4, rd);
			g->tensors[r]->kind = AOE_T_INPUT;
			g->inputs[g->ninputs++] = r;
			in[0] = x;
			in[1] = r;
			out[0] = x = aoe_graph_tensor(g, "sum");
			aoe_graph_add_node(g, "add", "Add", 2, in, 1, out);
		}
	}
	if (g->ninputs == 1 && oh >= 2 && ow >= 2 && irand(4) == 0) {
		/* A MaxPool, which the fused Conv leaves to itself. */
		in[0] = x;
		out[0] = x = aoe_graph_tensor(g, "mp");
		nd = aoe_graph_add_node(g, "mp", "MaxPool", 1, in, 1, out);
		a = aoe_node_add_attr(&g->nodes[nd], "kernel_shape",
		    AOE_A_INTS);
		a->n = 2;
		a->ints = aoe_xcalloc(2, sizeof(int64_t));
		a->ints[0] = a->ints[1] = 2;
		a = aoe_node_add_attr(&g->nodes[nd], "strides", AOE_A_INTS);
		a->n = 2;
		a->ints = aoe_xcalloc(2, sizeof(int64_t));
		a->ints[0] = a->ints[1] = 2;
	}
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = x;
	return g;
}

/* How many AoeReorder nodes the prepared graph g runs. */
static int
reorders(const aoe_graph *g)
{
	int i, n = 0;

	for (i = 0; i < g->norder; i++)
		n += !g->nodes[g->order[i]].dead &&
		    strcmp(g->nodes[g->order[i]].op_type, "AoeReorder") == 0;
	return n;
}

/* How many nodes of the prepared graph g write over their input 0. */
static int
shared(const aoe_graph *g)
{
	int i, n = 0;

	for (i = 0; i < g->norder; i++) {
		const aoe_node *nd = &g->nodes[g->order[i]];
		const aoe_tensor *x = aoe_in(g, nd, 0), *y = aoe_out(g, nd, 0);
		n += !nd->dead && x && y && x->data == y->data;
	}
	return n;
}

/*
 * A random run of element-wise nodes on x: unary ops, and binary ones
 * with a scalar, a tensor of x's shape, x itself, or one that broadcasts
 * (per channel, per image and channel, along the last axis), either
 * side.  Returns the number of nodes.
 */
static aoe_graph *
random_elem_graph(int *nnodes)
{
	static const char *const un[] = { "Relu", "Sigmoid", "Tanh", "Abs",
	    "Neg", "Erf", "HardSigmoid", "Clip", "LeakyRelu" };
	static const char *const bin[] = { "Add", "Sub", "Mul", "Max", "Min",
	    "Div" };
	aoe_graph *g = aoe_graph_new("e");
	int64_t dims[4] = { 1 + irand(2), 1 + irand(9), 1 + irand(6),
	    1 + irand(12) }, bd[4];
	int x, cur, k, steps = 2 + irand(5), in[3], out[1], nin;
	char name[64];

	x = aoe_graph_tensor(g, "x");
	aoe_tensor_set(g->tensors[x], AOE_F32, 4, dims);
	g->tensors[x]->kind = AOE_T_INPUT;
	g->inputs = aoe_xcalloc(8, sizeof(int));
	g->inputs[g->ninputs++] = x;
	cur = x;
	for (k = 0; k < steps; k++) {
		const char *op;
		snprintf(name, sizeof(name), "v%d", k);
		out[0] = aoe_graph_tensor(g, name);
		if (irand(2)) {
			op = un[irand(9)];
			in[0] = cur;
			nin = 1;
			if (strcmp(op, "Clip") == 0) {
				int64_t one[1] = { 1 };
				snprintf(name, sizeof(name), "lo%d", k);
				in[1] = cst(g, name, 0, one, -0.8f, -0.1f);
				snprintf(name, sizeof(name), "hi%d", k);
				in[2] = cst(g, name, 0, one, 0.1f, 0.8f);
				nin = 3;
			}
		} else {
			int kind = irand(5), o, side = irand(2);
			op = bin[irand(6)];
			snprintf(name, sizeof(name), "b%d", k);
			memcpy(bd, dims, sizeof(bd));
			if (kind == 1)
				bd[0] = bd[2] = bd[3] = 1;
			else if (kind == 2)
				bd[2] = bd[3] = 1;
			else if (kind == 3)
				bd[0] = bd[1] = bd[2] = 1;
			if (kind == 0)
				o = cst(g, name, 0, bd, 0.5f, 1.5f);
			else if (kind == 4 && strcmp(op, "Div") != 0)
				o = x;
			else if (strcmp(op, "Div") == 0)
				o = cst(g, name, 4, bd, 0.5f, 1.5f);
			else {
				o = aoe_graph_tensor(g, name);
				aoe_tensor_set(g->tensors[o], AOE_F32,
				    kind == 3 ? 1 : 4, kind == 3 ? bd + 3 :
				    bd);
				g->tensors[o]->kind = AOE_T_INPUT;
				g->inputs[g->ninputs++] = o;
			}
			if (strcmp(op, "Div") == 0)
				side = 0;
			in[side] = cur;
			in[1 - side] = o;
			nin = 2;
		}
		snprintf(name, sizeof(name), "n%d", k);
		aoe_graph_add_node(g, name, op, nin, in, 1, out);
		cur = out[0];
	}
	g->outputs = aoe_xcalloc(1, sizeof(int));
	g->outputs[g->noutputs++] = cur;
	*nnodes = steps;
	return g;
}

static void
fill(aoe_graph *g, uint64_t seed)
{
	int i;
	int64_t j;

	rs = seed | 1;
	for (i = 0; i < g->ninputs; i++) {
		aoe_tensor *t = g->tensors[g->inputs[i]];
		if (t->dtype == AOE_F32)
			for (j = 0; j < aoe_tensor_numel(t); j++)
				((float *)t->data)[j] = frand() * 2;
	}
}

/* Relative L2 error of g's outputs against ref (saved before). */
static double
relerr(aoe_graph *g, float **ref)
{
	double num = 0, den = 0;
	int i;
	int64_t j;

	for (i = 0; i < g->noutputs; i++) {
		aoe_tensor *t = g->tensors[g->outputs[i]];
		for (j = 0; j < aoe_tensor_numel(t); j++) {
			double d = ((float *)t->data)[j] - ref[i][j];
			num += d * d;
			den += (double)ref[i][j] * ref[i][j];
		}
	}
	return den > 0 ? sqrt(num / den) : sqrt(num);
}

static float **
save(aoe_graph *g)
{
	float **ref = aoe_xcalloc((size_t)g->noutputs + 1, sizeof(*ref));
	int i;

	for (i = 0; i < g->noutputs; i++) {
		aoe_tensor *t = g->tensors[g->outputs[i]];
		ref[i] = aoe_xmalloc(aoe_tensor_nbytes(t) + 1);
		memcpy(ref[i], t->data, aoe_tensor_nbytes(t));
	}
	return ref;
}

static void
unsave(aoe_graph *g, float **ref)
{
	int i;

	for (i = 0; i < g->noutputs; i++)
		free(ref[i]);
	free(ref);
}

/*
 * Load the model at spec with its inputs bound to shape (or none), at
 * most 4096 nodes; -1, and a failed check, if it cannot be.
 */
static int
load(const char *spec, const char *shape, aoe_graph **g)
{
	if (aoe_model_load(spec, g) < 0 || (*g)->nnodes > 4096) {
		printf("not ok %d - load %s\n", ++nt, spec);
		nfail++;
		return -1;
	}
	if (shape)
		aoe_bind_shapes(*g, shape);
	return 0;
}

/* Load the model at path again, unfused. */
static void
reload(aoe_graph **g, const char *path, const aoe_run_opts *o)
{
	aoe_run_opts off;

	aoe_graph_free(*g);
	if (aoe_model_load(path, g) < 0) {
		fprintf(stderr, "unit-fuse: %s: %s\n", path, aoe_errmsg());
		exit(1);
	}
	off = *o;
	off.fuse_mode = AOE_FUSE_OFF;
	aoe_graph_prepare(*g, &off);
}

/*
 * Run g without decisions and with (mode, d); 1 if the outputs agree.
 * *removed gets how many nodes the decisions removed.
 */
static int
same(aoe_graph *g, const aoe_run_opts *o, int mode, const aoe_sched *d,
    int *removed, double *err)
{
	aoe_run_opts oo;
	float **ref;
	int before, rc;
	uint64_t seed = rs;

	oo = *o;
	oo.fuse_mode = AOE_FUSE_OFF;
	if (aoe_graph_prepare(g, &oo) < 0)
		return 0;
	before = g->norder;
	fill(g, seed);
	if (aoe_graph_run(g, o) < 0)
		return 0;
	ref = save(g);
	oo.fuse_mode = mode;
	if (d)
		oo.fuse_force = *d;
	rc = aoe_graph_prepare(g, &oo);
	if (rc < 0) {
		unsave(g, ref);
		return 0;
	}
	*removed = before - g->norder;
	fill(g, seed);
	rc = aoe_graph_run(g, o);
	*err = relerr(g, ref);
	unsave(g, ref);
	rs = seed + 12345;
	return rc == 0 && *err < 1e-4;
}

int
main(int argc, char **argv)
{
	aoe_run_opts o;
	aoe_graph *g;
	aoe_sched all;
	char msg[256], path[4096], *sig;
	int i, k, bad = 0, wrongcount = 0, removed, nf, part[4096], np;
	int nodes[4096], n;
	double err;
	FILE *fp;

	if (argc < 3) {
		fprintf(stderr, "usage: unit-fuse example.onnx tmpdir "
		    "[model:shape ...]\n");
		return 2;
	}
	aoe_run_opts_init(&o);
	o.nthreads = 2;
	o.use_bank = 0;
	memset(&all, 0, sizeof(all));
	aoe_fuse_default(&all);

	/* Property: random chains, fused and not, agree (fixed seeds). */
	for (i = 0; i < 200; i++) {
		rs = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
		g = random_graph(&nf);
		if (!same(g, &o, AOE_FUSE_FORCE, &all, &removed, &err)) {
			if (!bad)
				fprintf(stderr, "# random graph %d: error %g: "
				    "%s\n", i, err, aoe_errmsg());
			bad++;
		}
		if (removed != nf)
			wrongcount++;
		aoe_graph_free(g);
	}
	ok(bad == 0, "200 random Conv/BN/Add/act/MaxPool/Gemm/MatMul chains: "
	    "fused == unfused");
	ok(wrongcount == 0, "every BN, residual or bias Add and activation "
	    "after a Conv, Gemm or MatMul is fused away, and every MaxPool "
	    "after a Conv without a residual");

	/*
	 * The same chains in the blocked layout (decision layout=8) and
	 * with outputs written over inputs (inplace=1), fused and not: the
	 * reorders, the blocked kernels and the shared buffers change
	 * nothing.
	 */
	for (k = 0; k < 4; k++) {
		static const char *const what[] = { "fused and blocked "
		    "(NCHW8c)", "unfused and blocked (NCHW8c)", "unfused and "
		    "in place", "unfused, blocked and in place" };
		aoe_sched dk;
		int hit = 0;
		memset(&dk, 0, sizeof(dk));
		if (k == 0)
			aoe_fuse_default(&dk);
		aoe_sched_set(&dk, "inplace", k >= 2);
		aoe_sched_set(&dk, "layout", k != 2 ? AOE_LAYOUT_8C : 0);
		for (bad = 0, i = 0; i < 200; i++) {
			rs = 0x9e3779b97f4a7c15ULL * (uint64_t)(i + 1);
			g = random_graph(&nf);
			if (!same(g, &o, AOE_FUSE_FORCE, &dk, &removed,
			    &err)) {
				if (!bad)
					fprintf(stderr, "# random graph %d, "
					    "%s: error %g: %s\n", i, what[k],
					    err, aoe_errmsg());
				bad++;
			}
			hit += k == 2 ? shared(g) > 0 : reorders(g) > 0;
			aoe_graph_free(g);
		}
		snprintf(msg, sizeof(msg), "200 random chains, %s: same "
		    "outputs (%d of them %s)", what[k], hit, k == 2 ?
		    "shared a buffer" : "had blocked nodes");
		ok(bad == 0 && hit > 0, msg);
	}

	/*
	 * Runs of element-wise nodes: one AoeElemChain computes what they
	 * do, in the plain layout and the blocked one.
	 */
	for (k = 0; k < 2; k++) {
		aoe_sched de;
		int one = 0;
		memset(&de, 0, sizeof(de));
		aoe_sched_set(&de, "fuse_elem", 1);
		aoe_sched_set(&de, "layout", k ? AOE_LAYOUT_8C : 0);
		for (bad = 0, i = 0; i < 300; i++) {
			rs = 0x2545f4914f6cdd1dULL * (uint64_t)(i + 1);
			g = random_elem_graph(&nf);
			if (!same(g, &o, AOE_FUSE_FORCE, &de, &removed,
			    &err)) {
				if (!bad)
					fprintf(stderr, "# element-wise graph "
					    "%d: error %g: %s\n", i, err,
					    aoe_errmsg());
				bad++;
			}
			one += g->norder - reorders(g) == 1;
			aoe_graph_free(g);
		}
		snprintf(msg, sizeof(msg), "300 random element-wise runs%s: "
		    "AoeElemChain == unfused (%d became one node)", k ?
		    ", blocked" : "", one);
		ok(bad == 0 && one > 100, msg);
	}

	/*
	 * A value inside a run that dead nodes also read (the Shape and
	 * Gather of a torch export whose result nothing uses, folded; a
	 * Relu whose output nothing reads, pruned): the run still fuses,
	 * and the dead readers go with it.
	 */
	{
		int64_t one[1] = { 1 };
		int in[2], out[1], fused = 0;
		for (bad = 0, i = 0; i < 100; i++) {
			aoe_sched de;
			memset(&de, 0, sizeof(de));
			aoe_sched_set(&de, "fuse_elem", 1);
			rs = 0x5851f42d4c957f2dULL * (uint64_t)(i + 1);
			do {
				g = random_elem_graph(&nf);
				if (nf < 3)
					aoe_graph_free(g);
			} while (nf < 3);
			in[0] = aoe_graph_tensor(g, "v0");
			out[0] = aoe_graph_tensor(g, "dead.shape");
			aoe_graph_add_node(g, "dead.shape", "Shape", 1, in, 1,
			    out);
			in[0] = out[0];
			in[1] = aoe_graph_tensor(g, "dead.idx");
			aoe_tensor_set(g->tensors[in[1]], AOE_I64, 0, one);
			aoe_tensor_alloc_const(g->tensors[in[1]]);
			((int64_t *)g->tensors[in[1]]->data)[0] = 1;
			out[0] = aoe_graph_tensor(g, "dead.dim");
			aoe_graph_add_node(g, "dead.gather", "Gather", 2, in,
			    1, out);
			in[0] = aoe_graph_tensor(g, "v1");
			out[0] = aoe_graph_tensor(g, "dead.relu");
			aoe_graph_add_node(g, "dead.relu", "Relu", 1, in, 1,
			    out);
			if (!same(g, &o, AOE_FUSE_FORCE, &de, &removed,
			    &err)) {
				if (!bad)
					fprintf(stderr, "# element-wise graph "
					    "%d with dead readers: error %g: "
					    "%s\n", i, err, aoe_errmsg());
				bad++;
			}
			fused += removed > 0;
			aoe_graph_free(g);
		}
		snprintf(msg, sizeof(msg), "100 element-wise runs whose "
		    "values dead nodes read: fused == unfused (%d fused)",
		    fused);
		ok(bad == 0 && fused > 50, msg);
	}

	/*
	 * Per-op decisions: random nodes on one thread, random GEMM splits
	 * by rows or columns.  Outputs stay; the nodes named run so.
	 */
	{
		int one = 0, split = 0, j;
		for (bad = 0, i = 0; i < 200; i++) {
			aoe_sched dp = all;
			uint64_t sm = 0, pm = 0;
			rs = 0x7f4a7c159e3779b9ULL * (uint64_t)(i + 1);
			for (j = 0; j < AOE_SGAT_MAXPOS; j++) {
				sm |= (uint64_t)(irand(3) == 0) << j;
				pm |= (uint64_t)irand(3) << 2 * j;
			}
			aoe_sched_set(&dp, "serial", (int64_t)sm);
			aoe_sched_set(&dp, "split", (int64_t)pm);
			g = random_graph(&nf);
			if (!same(g, &o, AOE_FUSE_FORCE, &dp, &removed,
			    &err)) {
				if (!bad)
					fprintf(stderr, "# random graph %d, "
					    "per-op: error %g: %s\n", i, err,
					    aoe_errmsg());
				bad++;
			}
			for (j = 0; j < g->norder; j++) {
				const aoe_node *nd = &g->nodes[g->order[j]];
				int64_t v = aoe_attr_int(nd, "_aoe_split", 0);
				one += nd->nthreads == 1;
				split += v != 0 &&
				    aoe_sched_get(&nd->sched, "par", 0) == v;
			}
			aoe_graph_free(g);
		}
		snprintf(msg, sizeof(msg), "200 random chains with per-op "
		    "threads and splits: same outputs (%d nodes on one "
		    "thread, %d GEMMs split as decided)", one, split);
		ok(bad == 0 && one > 100 && split > 50, msg);
	}

	/* The example model, with fusions and with one thread per op. */
	if (aoe_model_load(argv[1], &g) < 0) {
		printf("not ok %d - load %s: %s\n", ++nt, argv[1],
		    aoe_errmsg());
		return 1;
	}
	ok(same(g, &o, AOE_FUSE_ALL, NULL, &removed, &err) && removed == 6,
	    "example: 1 BN fold, 4 activations and the stem's MaxPool fused, "
	    "same outputs");
	aoe_sched_set(&all, "threads", 1);
	ok(same(g, &o, AOE_FUSE_FORCE, &all, &removed, &err) &&
	    g->nodes[g->order[0]].nthreads == 1, "example: threads knob");
	aoe_graph_free(g);

	/*
	 * The stem's Conv with its MaxPool fused keeps the signature (and
	 * so the operator bank entries) of the Conv alone.
	 */
	{
		char s0[4096] = "", s1[4096] = "";
		int j, pooled = 0;
		aoe_model_load(argv[1], &g);
		o.fuse_mode = AOE_FUSE_OFF;
		aoe_graph_prepare(g, &o);
		for (j = 0; j < g->nnodes; j++)
			if (strcmp(g->nodes[j].name, "stem.conv") == 0)
				aoe_op_signature(g, &g->nodes[j], 2, s0,
				    sizeof(s0));
		o.fuse_mode = AOE_FUSE_ALL;
		aoe_graph_prepare(g, &o);
		for (j = 0; j < g->nnodes; j++)
			if (strcmp(g->nodes[j].name, "stem.conv") == 0) {
				pooled = aoe_attr_find(&g->nodes[j],
				    "_aoe_pool") != NULL;
				aoe_op_signature(g, &g->nodes[j], 2, s1,
				    sizeof(s1));
			}
		o.fuse_mode = AOE_FUSE_BANK;
		ok(pooled && s0[0] && strcmp(s0, s1) == 0, "example: the stem "
		    "with its MaxPool fused keeps the Conv's signature");
		aoe_graph_free(g);
	}

	/*
	 * fuse_dw: the pointwise Conv that computes the depthwise one
	 * before it computes what the two do, at 1 and 2 threads, on
	 * planes of one band and of several, and keeps its own signature
	 * (its operator bank entries apply).
	 */
	{
		aoe_sched dd;
		int folded = 0, sigok = 0, j;
		memset(&dd, 0, sizeof(dd));
		aoe_fuse_default(&dd);
		aoe_sched_set(&dd, "fuse_dw", 1);
		for (bad = 0, i = 0; i < 80; i++) {
			char s0[4096] = "", s1[4096] = "";
			rs = 0x7c15d3a9e3779b97ULL * (uint64_t)(i + 1);
			g = dwpw_graph(i % 4 == 3);
			o.nthreads = 1 + i % 2;
			o.fuse_mode = AOE_FUSE_OFF;
			aoe_graph_prepare(g, &o);
			for (j = 0; j < g->nnodes; j++)
				if (strcmp(g->nodes[j].name, "pw") == 0)
					aoe_op_signature(g, &g->nodes[j], 2,
					    s0, sizeof(s0));
			if (!same(g, &o, AOE_FUSE_FORCE, &dd, &removed,
			    &err)) {
				if (!bad)
					fprintf(stderr, "# dw+pw graph %d: "
					    "error %g: %s\n", i, err,
					    aoe_errmsg());
				bad++;
			}
			for (j = 0; j < g->nnodes; j++)
				if (strcmp(g->nodes[j].name, "pw") == 0 &&
				    aoe_attr_find(&g->nodes[j], "_aoe_dw")) {
					folded++;
					aoe_op_signature(g, &g->nodes[j], 2,
					    s1, sizeof(s1));
					sigok += s0[0] && strcmp(s0, s1) == 0;
				}
			aoe_graph_free(g);
		}
		o.nthreads = 2;
		o.fuse_mode = AOE_FUSE_BANK;
		snprintf(msg, sizeof(msg), "80 random depthwise and pointwise "
		    "Conv pairs, fuse_dw: same outputs at 1 and 2 threads (%d "
		    "fused, %d keeping the pointwise signature)", folded,
		    sigok);
		ok(bad == 0 && folded == 80 && sigok == 80, msg);
		aoe_fuse_default(&dd);
		ok(aoe_sched_get(&dd, "fuse_dw", 1) == 0, "fuse_dw is off by "
		    "default");
	}

	/*
	 * A graph file may carry the attributes fuse_dw writes: a Conv
	 * with either alone, or with a depthwise geometry its input and
	 * weights do not match, is refused with a message, not run on
	 * shapes it does not have.
	 */
	{
		int rej = 0;
		for (k = 0; k < 4; k++) {
			aoe_node *pw = NULL;
			aoe_attr *at;
			int j;
			rs = 0x6a09e667f3bcc909ULL * (uint64_t)(k + 1);
			do {
				g = dwpw_graph(0);
				o.fuse_mode = AOE_FUSE_FORCE;
				memset(&o.fuse_force, 0, sizeof(o.fuse_force));
				aoe_fuse_default(&o.fuse_force);
				aoe_sched_set(&o.fuse_force, "fuse_dw", 1);
				if (aoe_graph_prepare(g, &o) == 0)
					break;
				aoe_graph_free(g);
			} while (1);
			for (j = 0; j < g->nnodes; j++)
				if (strcmp(g->nodes[j].name, "pw") == 0)
					pw = &g->nodes[j];
			if (pw == NULL || aoe_attr_find(pw, "_aoe_dw") == NULL) {
				aoe_graph_free(g);
				continue;
			}
			at = (aoe_attr *)aoe_attr_find(pw, k == 0 || k == 3 ?
			    "_aoe_dw" : "_aoe_dw_mid");
			if (k == 0) {
				/*
				 * A plain Conv with the shape alone, twice
				 * as tall as its input: it would read past
				 * the input.
				 */
				free(at->name);
				at->name = aoe_xstrdup("_aoe_gone");
				pw->nin = 3;
				((aoe_attr *)aoe_attr_find(pw,
				    "_aoe_dw_mid"))->ints[2] *= 2;
			} else if (k == 1) {
				/* The geometry without the shape. */
				free(at->name);
				at->name = aoe_xstrdup("_aoe_gone");
			} else if (k == 2)
				/* A plane twice as tall as the input makes. */
				at->ints[2] *= 2;
			else
				/* A 7x7 kernel on weights of 3x3 or 5x5. */
				at->ints[1] = at->ints[2] = 7;
			o.fuse_mode = AOE_FUSE_OFF;
			rej += aoe_graph_reinfer(g) < 0 &&
			    strstr(aoe_errmsg(), "'pw'") != NULL;
			aoe_graph_free(g);
		}
		o.fuse_mode = AOE_FUSE_BANK;
		memset(&o.fuse_force, 0, sizeof(o.fuse_force));
		ok(rej == 4, "a fused depthwise Conv's attributes, either "
		    "alone or not matching the Conv's input: refused");
	}

	/*
	 * A fusion's count in a dry run (aoe_sgat_effect, which aoe-sgat's
	 * space and baseline are made of) sees the folds before it, as the
	 * fusion itself does: the example's chain folds one BN, four
	 * activations and the stem's MaxPool (above), though the Relu
	 * after the stem reads the BN's output and the MaxPool the Relu's.
	 */
	{
		int cnt[AOE_FUSE_N], rc;
		aoe_model_load(argv[1], &g);
		o.fuse_mode = AOE_FUSE_OFF;
		aoe_graph_prepare(g, &o);
		o.fuse_mode = AOE_FUSE_BANK;
		aoe_sgat_partition(g, part, &np);
		n = aoe_sgat_members(g, part, part[g->order[0]], nodes);
		memset(cnt, 0, sizeof(cnt));
		rc = aoe_sgat_effect(g, nodes, n, &all, cnt);
		snprintf(msg, sizeof(msg), "example: a dry run counts what "
		    "the fusion does (BN %d, activations %d, MaxPool %d)",
		    cnt[AOE_FUSE_BN], cnt[AOE_FUSE_ACT], cnt[AOE_FUSE_POOL]);
		ok(rc == 0 && cnt[AOE_FUSE_BN] == 1 && cnt[AOE_FUSE_ACT] == 4 &&
		    cnt[AOE_FUSE_POOL] == 1, msg);
		aoe_graph_free(g);
	}

	/* The subgraph bank: a matching entry applies, a stale one not. */
	aoe_model_load(argv[1], &g);
	o.fuse_mode = AOE_FUSE_OFF;
	aoe_graph_prepare(g, &o);
	o.fuse_mode = AOE_FUSE_BANK;
	aoe_sgat_partition(g, part, &np);
	n = aoe_sgat_members(g, part, 0, nodes);
	ok(np == 1 && n == g->norder, "example: one chain");
	aoe_sgat_signature(g, nodes, n, o.nthreads, &sig);
	ok(strstr(sig, "stem") == NULL && strstr(sig, "op=Conv") != NULL,
	    "signature has structure, not names");
	snprintf(path, sizeof(path), "%s/graphs.jsonl", argv[2]);
	fp = fopen(path, "w");
	/* A stale entry: the signature changed, the key is the old one. */
	{
		char *stale = aoe_xstrdup(sig), *p = strstr(stale, "float32[");
		if (p)
			p[8] = p[8] == '1' ? '2' : '1';
		fprintf(fp, "{\"key\":\"%llu\",\"subgraph\":\"x\","
		    "\"signature\":\"%s\",\"schedule\":{\"fuse_bn\":0,"
		    "\"fuse_act\":0},\"soc_version\":\"%s\","
		    "\"kernels\":%d}\n", (unsigned long long)aoe_op_key(stale),
		    stale, aoe_soc_version(), AOE_KERNELS_GEN);
		/* Same key as the real one, another signature. */
		fprintf(fp, "{\"key\":\"%llu\",\"subgraph\":\"x\","
		    "\"signature\":\"%s\",\"schedule\":{\"fuse_bn\":0,"
		    "\"fuse_act\":0},\"soc_version\":\"%s\","
		    "\"kernels\":%d}\n", (unsigned long long)aoe_op_key(sig),
		    stale, aoe_soc_version(), AOE_KERNELS_GEN);
		free(stale);
	}
	fclose(fp);
	aoe_bank_graph_use(path);
	o.use_bank = 1;
	/* Ignored entries leave the default decisions, every fusion. */
	ok(same(g, &o, AOE_FUSE_BANK, NULL, &removed, &err) && removed == 6,
	    "stale subgraph bank entries are ignored");
	reload(&g, argv[1], &o);
	fp = fopen(path, "w");
	fprintf(fp, "{\"key\":\"%llu\",\"subgraph\":\"x\",\"signature\":"
	    "\"%s\",\"schedule\":{\"fuse_bn\":1,\"fuse_act\":0},"
	    "\"soc_version\":\"other_soc\"}\n", (unsigned long long)
	    aoe_op_key(sig), sig);
	fclose(fp);
	aoe_bank_graph_use(path);
	ok(same(g, &o, AOE_FUSE_BANK, NULL, &removed, &err) && removed == 6,
	    "an entry of another soc_version is ignored");
	/* Of another kernel generation (or none: generation 1). */
	for (int gen = 0; gen < 2; gen++) {
		reload(&g, argv[1], &o);
		fp = fopen(path, "w");
		fprintf(fp, "{\"key\":\"%llu\",\"subgraph\":\"x\","
		    "\"signature\":\"%s\",\"schedule\":{\"fuse_bn\":1,"
		    "\"fuse_act\":0},\"soc_version\":\"%s\"%s}\n",
		    (unsigned long long)aoe_op_key(sig), sig,
		    aoe_soc_version(), gen ? ",\"kernels\":1000000" : "");
		fclose(fp);
		aoe_bank_graph_use(path);
		ok(same(g, &o, AOE_FUSE_BANK, NULL, &removed, &err) &&
		    removed == 6, gen ? "an entry of kernel generation "
		    "1000000 is ignored" : "an entry of no kernel generation "
		    "(1) is ignored");
	}
	reload(&g, argv[1], &o);
	fp = fopen(path, "w");
	fprintf(fp, "{\"key\":\"%llu\",\"subgraph\":\"x\",\"signature\":"
	    "\"%s\",\"schedule\":{\"fuse_bn\":1,\"fuse_act\":0},"
	    "\"soc_version\":\"%s\",\"kernels\":%d}\n",
	    (unsigned long long)aoe_op_key(sig), sig, aoe_soc_version(),
	    AOE_KERNELS_GEN);
	fclose(fp);
	aoe_bank_graph_use(path);
	ok(same(g, &o, AOE_FUSE_BANK, NULL, &removed, &err) && removed == 1,
	    "a matching entry applies its decisions (BN folded only)");
	aoe_bank_graph_use(NULL);
	o.use_bank = 0;
	free(sig);
	aoe_graph_free(g);

	/* Real models: the whole model, and random chains of it alone. */
	for (k = 3; k < argc; k++) {
		char *spec = aoe_xstrdup(argv[k]), *shape = strchr(spec, '@');
		int bad2 = 0;
		if (shape)
			*shape++ = '\0';
		if (access(spec, R_OK) != 0) {
			printf("ok %d # skip %s not present\n", ++nt, spec);
			printf("ok %d # skip %s not present\n", ++nt, spec);
			free(spec);
			continue;
		}
		if (load(spec, shape, &g) < 0) {
			free(spec);
			continue;
		}
		snprintf(msg, sizeof(msg), "%s: fused model == unfused",
		    strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec);
		rs = 77;
		ok(same(g, &o, AOE_FUSE_ALL, NULL, &removed, &err), msg);
		printf("# relative L2 error %.3g, %d nodes fused away\n", err,
		    removed);
		aoe_graph_free(g);
		if (load(spec, shape, &g) < 0) {
			free(spec);
			continue;
		}
		{
			aoe_sched lay = all;
			aoe_sched_set(&lay, "threads", 0);
			aoe_sched_set(&lay, "layout", AOE_LAYOUT_8C);
			snprintf(msg, sizeof(msg), "%s: fused and blocked "
			    "(NCHW8c) == unfused", strrchr(spec, '/') ?
			    strrchr(spec, '/') + 1 : spec);
			rs = 77;
			ok(same(g, &o, AOE_FUSE_FORCE, &lay, &removed, &err),
			    msg);
			printf("# relative L2 error %.3g, %d reorders\n", err,
			    reorders(g));
		}
		/* Chains of the model as it was captured (unfused). */
		aoe_graph_free(g);
		if (load(spec, shape, &g) < 0) {
			free(spec);
			continue;
		}
		o.fuse_mode = AOE_FUSE_OFF;
		aoe_graph_prepare(g, &o);
		o.fuse_mode = AOE_FUSE_BANK;
		aoe_sgat_partition(g, part, &np);
		for (i = 0; i < 16; i++) {
			aoe_graph *s;
			aoe_sched lay = all;
			int id = (int)(((uint64_t)(i / 2 + 1) * 2654435761u) %
			    (uint64_t)np);
			n = aoe_sgat_members(g, part, id, nodes);
			if (aoe_sgat_extract(g, nodes, n, &s) < 0) {
				bad2++;
				continue;
			}
			aoe_sched_set(&lay, "threads", 0);
			aoe_sched_set(&lay, "layout", AOE_LAYOUT_8C);
			if (!(i % 2 ? same(s, &o, AOE_FUSE_FORCE, &lay,
			    &removed, &err) : same(s, &o, AOE_FUSE_ALL, NULL,
			    &removed, &err)))
				bad2++;
			aoe_graph_free(s);
		}
		snprintf(msg, sizeof(msg), "%s: 8 chains alone, fused and "
		    "fused-and-blocked == "
		    "unfused", strrchr(spec, '/') ? strrchr(spec, '/') + 1 :
		    spec);
		ok(bad2 == 0, msg);
		aoe_graph_free(g);
		free(spec);
	}
	printf("1..%d\n", nt);
	return nfail ? 1 : 0;
}
