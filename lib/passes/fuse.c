/*
 * fuse.c - subgraphs and the decisions subgraph tuning makes about them.
 *
 * A prepared graph is cut into chains between branch points: a node joins
 * the chain of the producer of its only non-constant input when that
 * producer ends its chain, has one used output, and that output has no
 * other reader and is not a graph output.  A chain's canonical signature
 * is the sequence of its nodes' operator signatures (aoe-bank(5)) at the
 * session's thread count; its repo_key is aoe_op_key() of that.
 *
 * The decisions (knobs of an aoe_sched) for a chain are:
 *
 *	fuse_bn   1: fold a BatchNormalization into the Conv before it, and
 *		  constants: a Mul, Add, Sub or Div by a constant after a
 *		  Conv, a bias Add after a MatMul (into its epilogue)
 *	fuse_act  1: apply a Relu, Clip or Sigmoid after a Conv, Gemm or
 *		  MatMul in that kernel (the activation node goes away)
 *	fuse_add  1: add the other operand of a residual Add after a Conv
 *		  in the Conv's epilogue, before its fused activation
 *	fuse_elem 1: a run of element-wise float nodes, each reading the
 *		  value of the one before (with scalars or tensors of its
 *		  shape), becomes one AoeElemChain computed tile by tile
 *	fuse_pool 1: a 2-D MaxPool after a Conv (and the activation fused
 *		  into it) is computed by the Conv, which pools its output
 *		  rows as it makes them where its algorithm can (algo 8),
 *		  else pools its whole output from the workspace; the Conv
 *		  writes the pooled tensor, and the MaxPool node goes away
 *	fuse_dw   1: a 2-D pointwise Conv (1x1, stride 1, no pads, one
 *		  group) that reads a depthwise Conv (one channel a group,
 *		  3x3 or 5x5, strides 1 or 2, unit dilations; its activation
 *		  fused, no residual) computes it too, a band of rows at a
 *		  time that it reads while the band is in cache (k_dwpw.c):
 *		  the depthwise Conv's input, weights and bias become its
 *		  inputs 0, 4 and 5 (3 is a residual's place), its geometry
 *		  and activation the attributes _aoe_dw, _aoe_dw_mid (the
 *		  depthwise output's shape, the pointwise Conv's input in
 *		  its signature) and _aoe_dw_act; the depthwise node goes
 *		  away
 *	threads   n > 0: run the chain's nodes on n threads
 *	serial    bit k set: the chain's k-th node (counting from 0, before
 *		  fusion) runs on one thread, whatever threads says; so a
 *		  small op next to a large one need not pay for a split
 *	split     two bits a node, k-th node at bit 2k: how a Conv, Gemm
 *		  or MatMul splits its GEMM between threads (its schedule's
 *		  knob "par"): 0 as its schedule says, 1 rows, 2 columns;
 *		  applied where the op's search space holds that value
 *	layout    8: run the nodes that can on NCHW8c tensors, kept blocked
 *		  from one such node to the next (aoe_fuse_layout)
 *	inplace   1: an element-wise node or a shape-only copy writes over
 *		  its input 0 where that input dies (lib/runtime/exec.c's planner)
 *
 * A residual Add (two non-constant float operands of one shape) joins
 * the chain of the later of its operands' producers, so that a residual
 * block's last Conv, its Add and the Relu after it are one chain; so do
 * a Sub, Mul, Div, Max and Min of that kind (x * Sigmoid(x), or GELU's
 * x * (1 + Erf(x / c)) / 2, then fuse_elem into one node).
 *
 * aoe_graph_prepare() (lib/engine/prepare.c) calls aoe_fuse_hook(), which
 * applies to each chain the decisions its caller finds for the chain's
 * signature (a table of decisions, then the subgraph bank entry); a
 * chain without any gets the default decisions, every fusion and in-place
 * reuse (aoe_fuse_default).  The caller may force decisions everywhere
 * or the layout decision everywhere; this file reads no environment and
 * no bank.
 */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "passes.h"
#include "kernel.h"

#define MAX_CHAIN 16

/*
 * Partition.
 */

static int
is_live(const aoe_graph *g, int v)
{
	return v >= 0 && v < g->nnodes && !g->nodes[v].dead;
}

/*
 * Whether n is an element-wise op (an Add, or any of Sub, Mul, Div, Max
 * and Min when any is set) of two float tensors of one shape, neither of
 * them constant: a residual connection, or the like.
 */
static int
is_join(const aoe_graph *g, const aoe_node *n, int any)
{
	static const char *const ops[] = { "Add", "Sub", "Mul", "Div", "Max",
	    "Min" };
	const aoe_tensor *a, *b;
	int i, op = -1;

	for (i = 0; i < (any ? 6 : 1); i++)
		if (strcmp(n->op_type, ops[i]) == 0)
			op = i;
	if (op < 0 || n->domain || n->nin != 2 ||
	    n->nout != 1 || (a = aoe_in(g, n, 0)) == NULL ||
	    (b = aoe_in(g, n, 1)) == NULL || a == b ||
	    a->kind == AOE_T_CONST || b->kind == AOE_T_CONST ||
	    a->dtype != AOE_F32 || b->dtype != AOE_F32 || a->ndim != b->ndim)
		return 0;
	for (i = 0; i < a->ndim; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}

static int
is_residual_add(const aoe_graph *g, const aoe_node *n)
{
	return is_join(g, n, 0);
}

int
aoe_sgat_partition(const aoe_graph *g, int *part, int *nparts)
{
	int *ncons, *tail, *len, *pos, np = 0, i, j;
	char *isout;

	ncons = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	pos = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	isout = aoe_xcalloc((size_t)g->ntensors + 1, 1);
	tail = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	len = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	for (i = 0; i < g->nnodes; i++)
		part[i] = -1;
	for (i = 0; i < g->noutputs; i++)
		isout[g->outputs[i]] = 1;
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++)
			if (n->in[j] >= 0)
				ncons[n->in[j]]++;
	}
	for (i = 0; i < g->norder; i++)
		pos[g->order[i]] = i;
	for (i = 0; i < g->norder; i++) {
		int v = g->order[i], cnt = 0, tin = -1, p, used, join = -1;
		const aoe_node *n = &g->nodes[v];
		if (n->dead)
			continue;
		for (j = 0; j < n->nin; j++) {
			const aoe_tensor *t = aoe_in(g, n, j);
			if (t && t->kind != AOE_T_CONST) {
				cnt++;
				tin = n->in[j];
			}
		}
		/*
		 * A residual Add (or a Mul, Sub, Div, Max or Min of two
		 * tensors of one shape) joins the chain of the later of its
		 * two operands' producers: the other operand is ready before
		 * that chain ends, so the node may fold into it.
		 */
		if (cnt == 2 && is_join(g, n, 1)) {
			int p0 = g->tensors[n->in[0]]->producer;
			int p1 = g->tensors[n->in[1]]->producer;
			cnt = 1;
			tin = !is_live(g, p0) || (is_live(g, p1) &&
			    pos[p1] > pos[p0]) ? n->in[1] : n->in[0];
		}
		if (cnt == 1 && g->tensors[tin]->kind == AOE_T_VALUE &&
		    is_live(g, p = g->tensors[tin]->producer) &&
		    part[p] >= 0 && tail[part[p]] == p &&
		    len[part[p]] < MAX_CHAIN && ncons[tin] == 1 &&
		    !isout[tin]) {
			const aoe_node *pn = &g->nodes[p];
			for (used = 0, j = 0; j < pn->nout; j++)
				if (pn->out[j] >= 0 && (ncons[pn->out[j]] ||
				    isout[pn->out[j]]))
					used++;
			if (used == 1)
				join = part[p];
		}
		if (join < 0)
			join = np++;
		part[v] = join;
		tail[join] = v;
		len[join]++;
	}
	free(ncons);
	free(isout);
	free(tail);
	free(len);
	free(pos);
	*nparts = np;
	return 0;
}

int
aoe_sgat_members(const aoe_graph *g, const int *part, int id, int *nodes)
{
	int i, n = 0;

	for (i = 0; i < g->norder; i++)
		if (part[g->order[i]] == id)
			nodes[n++] = g->order[i];
	return n;
}

int
aoe_sgat_signature(const aoe_graph *g, const int *nodes, int n,
    int nthreads, char **sigp)
{
	char *sig, *one;
	size_t len, cap;
	int i, rc;

	cap = 256;
	sig = aoe_xmalloc(cap);
	len = (size_t)snprintf(sig, cap, "sgat1;threads=%d;nodes=%d", nthreads,
	    n);
	one = aoe_xmalloc(65536);
	for (i = 0; i < n; i++) {
		size_t l;
		if ((rc = aoe_op_signature(g, &g->nodes[nodes[i]], nthreads,
		    one, 65536)) < 0) {
			free(one);
			free(sig);
			return rc;
		}
		l = strlen(one);
		if (len + l + 8 > cap) {
			cap = (len + l + 8) * 2;
			sig = aoe_xrealloc(sig, cap);
		}
		len += (size_t)snprintf(sig + len, cap - len, " >> %s", one);
	}
	free(one);
	*sigp = sig;
	return 0;
}

/*
 * Decisions.
 */

static int
const_f32(const aoe_tensor *t, int64_t numel)
{
	return t && t->kind == AOE_T_CONST && t->dtype == AOE_F32 &&
	    t->data && (numel < 0 || aoe_tensor_numel(t) == numel);
}

static int
has_act(const aoe_node *n)
{
	return aoe_attr_find(n, "_aoe_act") != NULL;
}

/* Whether n has a fused residual or affine (in its epilogue). */
static int
has_epi(const aoe_node *n)
{
	return aoe_attr_find(n, "_aoe_add") != NULL ||
	    aoe_attr_find(n, "_aoe_post_s") != NULL;
}

/* Can BN node b be folded into Conv node c? */
static int
bn_foldable(const aoe_graph *g, const aoe_node *c, const aoe_node *b)
{
	const aoe_tensor *w = aoe_in(g, c, 1), *y = aoe_out(g, c, 0);
	int64_t m;
	int j;

	if (strcmp(c->op_type, "Conv") != 0 || c->domain ||
	    strcmp(b->op_type, "BatchNormalization") != 0 || b->domain ||
	    has_act(c) || has_epi(c) || c->nout != 1 || b->nin < 5 ||
	    b->in[0] != c->out[0] || aoe_attr_int(b, "training_mode", 0) != 0)
		return 0;
	for (j = 1; j < b->nout; j++)
		if (b->out[j] >= 0)
			return 0;
	if (!const_f32(w, -1) || w->ndim < 3 || y == NULL ||
	    y->dtype != AOE_F32 || y->ndim < 2)
		return 0;
	m = w->dims[0];
	if (y->dims[1] != m || (c->nin > 2 && c->in[2] >= 0 &&
	    !const_f32(aoe_in(g, c, 2), m)))
		return 0;
	for (j = 1; j < 5; j++)
		if (!const_f32(aoe_in(g, b, j), m))
			return 0;
	return 1;
}

/*
 * A new tensor of like's dtype and shape, named base/aoe_<what><k> with
 * the first k that no tensor has; its index.
 */
static int
fresh_like(aoe_graph *g, const char *base, const char *what,
    const aoe_tensor *like)
{
	char name[512];
	int i, k;

	for (k = 0;; k++) {
		snprintf(name, sizeof(name), "%s/aoe_%s%s%d", base, what,
		    k ? "_" : "", k);
		if (aoe_graph_find(g, name) < 0)
			break;
	}
	i = aoe_graph_tensor(g, name);
	aoe_tensor_set(g->tensors[i], like->dtype, like->ndim, like->dims);
	return i;
}

int
aoe_fuse_const(aoe_graph *g, const char *base, const char *what,
    const aoe_tensor *like)
{
	int i = fresh_like(g, base, what, like);

	if (aoe_tensor_alloc_const(g->tensors[i]) < 0)
		return -1;
	return i;
}

/*
 * Fold y = a * conv + t (a and t one a channel) into Conv ci's weights
 * and bias.
 */
static int
affine_fold(aoe_graph *g, int ci, const float *a, const float *t)
{
	aoe_node *c = &g->nodes[ci];
	const aoe_tensor *w = aoe_in(g, c, 1), *cb = aoe_in(g, c, 2);
	int64_t m = w->dims[0], per = aoe_tensor_numel(w) / (m ? m : 1), i, j;
	int wi, bj;
	float *nw, *nb;
	aoe_tensor bl;

	if ((wi = aoe_fuse_const(g, c->name, "bnW", w)) < 0)
		return -1;
	memset(&bl, 0, sizeof(bl));
	bl.dtype = AOE_F32;
	bl.ndim = 1;
	bl.dims[0] = m;
	if ((bj = aoe_fuse_const(g, c->name, "bnB", &bl)) < 0)
		return -1;
	/* Re-read: the tensor array may have moved. */
	w = aoe_in(g, c, 1);
	cb = aoe_in(g, c, 2);
	nw = g->tensors[wi]->data;
	nb = g->tensors[bj]->data;
	for (i = 0; i < m; i++) {
		const float *src = (const float *)w->data + i * per;
		for (j = 0; j < per; j++)
			nw[i * per + j] = src[j] * a[i];
		nb[i] = (cb ? ((const float *)cb->data)[i] : 0) * a[i] + t[i];
	}
	if (c->nin < 3) {
		c->in = aoe_xrealloc(c->in, 3 * sizeof(int));
		c->nin = 3;
	}
	c->in[1] = wi;
	c->in[2] = bj;
	return 0;
}

static int
bn_fold(aoe_graph *g, int ci, int bi)
{
	aoe_node *c = &g->nodes[ci], *b = &g->nodes[bi];
	const float *sc = aoe_in(g, b, 1)->data, *bb = aoe_in(g, b, 2)->data;
	const float *mean = aoe_in(g, b, 3)->data, *var = aoe_in(g, b, 4)->data;
	float eps = aoe_attr_float(b, "epsilon", 1e-5f), *a, *t;
	int64_t m = aoe_in(g, c, 1)->dims[0], i;
	int rc;

	a = aoe_xcalloc((size_t)m + 1, sizeof(float));
	t = aoe_xcalloc((size_t)m + 1, sizeof(float));
	for (i = 0; i < m; i++) {
		a[i] = sc[i] / sqrtf(var[i] + eps);
		t[i] = bb[i] - mean[i] * a[i];
	}
	rc = affine_fold(g, ci, a, t);
	free(a);
	free(t);
	return rc;
}

/*
 * Whether n is a Mul, Add, Sub or Div of Conv p's output (the first
 * operand for Sub and Div) by a constant that is one value or one a
 * channel: then y = a * x + t with a and t (m values each, malloc'ed).
 */
static int
affine_of(const aoe_graph *g, const aoe_node *p, const aoe_node *n,
    float **ap, float **tp)
{
	const aoe_tensor *y = aoe_out(g, p, 0), *c;
	const float *v;
	int64_t m, i, numel;
	float *a, *t;
	int k, op, ci;

	if (strcmp(p->op_type, "Conv") != 0 || p->domain || n->domain ||
	    n->nin != 2 || n->nout != 1 || y == NULL || y->dtype != AOE_F32 ||
	    y->ndim < 3)
		return 0;
	if (strcmp(n->op_type, "Mul") == 0)
		op = 0;
	else if (strcmp(n->op_type, "Add") == 0)
		op = 1;
	else if (strcmp(n->op_type, "Sub") == 0)
		op = 2;
	else if (strcmp(n->op_type, "Div") == 0)
		op = 3;
	else
		return 0;
	if (n->in[0] == p->out[0])
		ci = 1;
	else if (n->in[1] == p->out[0] && op < 2)
		ci = 0;
	else
		return 0;
	c = aoe_in(g, n, ci);
	m = y->dims[1];
	if (!const_f32(c, -1) || c->ndim > y->ndim)
		return 0;
	/* One value, or the channel axis of y alone (right-aligned). */
	numel = aoe_tensor_numel(c);
	if (numel != 1) {
		for (k = 0; k < c->ndim; k++) {
			int64_t d = c->dims[c->ndim - 1 - k];
			if (d != (y->ndim - 1 - k == 1 ? m : 1))
				return 0;
		}
		if (c->ndim < y->ndim - 1 || numel != m)
			return 0;
	}
	v = c->data;
	a = aoe_xcalloc((size_t)m + 1, sizeof(float));
	t = aoe_xcalloc((size_t)m + 1, sizeof(float));
	for (i = 0; i < m; i++) {
		float cv = v[numel == 1 ? 0 : i];
		a[i] = op == 0 ? cv : op == 3 ? 1 / cv : 1;
		t[i] = op == 1 ? cv : op == 2 ? -cv : 0;
	}
	*ap = a;
	*tp = t;
	return 1;
}

/*
 * Compose y = a * x + t after Conv p's fused epilogue (its attributes
 * _aoe_post_s and _aoe_post_t).
 */
static void
post_fold(aoe_graph *g, aoe_node *p, const float *a, const float *t)
{
	int64_t m = aoe_out(g, p, 0)->dims[1], i;
	aoe_attr *s = (aoe_attr *)aoe_attr_find(p, "_aoe_post_s");
	aoe_attr *h = (aoe_attr *)aoe_attr_find(p, "_aoe_post_t");

	if (s == NULL) {
		s = aoe_node_add_attr(p, "_aoe_post_s", AOE_A_FLOATS);
		s->n = (int)m;
		s->floats = aoe_xcalloc((size_t)m + 1, sizeof(float));
		for (i = 0; i < m; i++)
			s->floats[i] = 1;
		/* Adding an attribute may move the others. */
		h = aoe_node_add_attr(p, "_aoe_post_t", AOE_A_FLOATS);
		h->n = (int)m;
		h->floats = aoe_xcalloc((size_t)m + 1, sizeof(float));
		s = (aoe_attr *)aoe_attr_find(p, "_aoe_post_s");
	}
	for (i = 0; i < m; i++) {
		s->floats[i] *= a[i];
		h->floats[i] = h->floats[i] * a[i] + t[i];
	}
}

/* The activation node a computes, or 0 if it is not one we fuse. */
static int
act_of_node(const aoe_graph *g, const aoe_node *n, aoe_act *a)
{
	const aoe_tensor *x = aoe_in(g, n, 0), *t;

	if (n->domain || x == NULL || x->dtype != AOE_F32 || n->nout != 1)
		return 0;
	a->lo = -FLT_MAX;
	a->hi = FLT_MAX;
	if (strcmp(n->op_type, "Relu") == 0)
		a->kind = AOE_ACT_RELU;
	else if (strcmp(n->op_type, "Sigmoid") == 0)
		a->kind = AOE_ACT_SIGMOID;
	else if (strcmp(n->op_type, "HardSwish") == 0)
		a->kind = AOE_ACT_HARDSWISH;
	else if (aoe_act_kind_of(n) >= 0)
		a->kind = aoe_act_kind_of(n);
	else if (strcmp(n->op_type, "Clip") == 0) {
		a->kind = AOE_ACT_CLIP;
		if (g->opset < 11) {
			a->lo = aoe_attr_float(n, "min", -FLT_MAX);
			a->hi = aoe_attr_float(n, "max", FLT_MAX);
		} else {
			if (n->nin > 1 && (t = aoe_in(g, n, 1)) != NULL) {
				if (!const_f32(t, 1))
					return 0;
				a->lo = *(const float *)t->data;
			}
			if (n->nin > 2 && (t = aoe_in(g, n, 2)) != NULL) {
				if (!const_f32(t, 1))
					return 0;
				a->hi = *(const float *)t->data;
			}
		}
		if (!(a->lo <= a->hi))
			return 0;
	} else
		return 0;
	return a->kind;
}

static int
act_target(const aoe_graph *g, const aoe_node *p, const aoe_node *n)
{
	const aoe_tensor *y = aoe_out(g, p, 0);

	return p->domain == NULL && (strcmp(p->op_type, "Conv") == 0 ||
	    strcmp(p->op_type, "Gemm") == 0 ||
	    strcmp(p->op_type, "MatMul") == 0) && p->nout == 1 && y &&
	    y->dtype == AOE_F32 && n->in[0] == p->out[0];
}

/*
 * The operand of residual Add n that Conv p does not make, if n can fold
 * into p (as p's input 3), else -1.
 */
static int
add_foldable(const aoe_graph *g, const aoe_node *p, const aoe_node *n)
{
	int r;

	if (strcmp(p->op_type, "Conv") != 0 || p->domain || p->nout != 1 ||
	    (p->nin > 3 && !(aoe_attr_find(p, "_aoe_dw") && p->in[3] < 0)) ||
	    has_epi(p) || has_act(p) ||
	    aoe_out(g, p, 0) == NULL || !is_residual_add(g, n))
		return -1;
	if (n->in[0] == p->out[0])
		r = n->in[1];
	else if (n->in[1] == p->out[0])
		r = n->in[0];
	else
		return -1;
	/* The output's shape, which the Add's operands share. */
	return aoe_out(g, p, 0)->ndim == g->tensors[r]->ndim &&
	    aoe_out(g, p, 0)->dtype == AOE_F32 ? r : -1;
}

/*
 * The bias operand of Add n after MatMul p, if n can fold into p (as p's
 * input 2): a float constant with one value for each of the product's
 * columns, of shape [N] or [1, ..., 1, N] and no higher rank.  Else -1.
 */
static int
bias_foldable(const aoe_graph *g, const aoe_node *p, const aoe_node *n)
{
	const aoe_tensor *y = aoe_out(g, p, 0), *c;
	int ci, i;

	if (strcmp(p->op_type, "MatMul") != 0 || p->domain || n->domain ||
	    p->nin != 2 || p->nout != 1 || strcmp(n->op_type, "Add") != 0 ||
	    n->nin != 2 || n->nout != 1 || y == NULL ||
	    y->dtype != AOE_F32 || y->ndim < 1 || aoe_in(g, p, 1) == NULL ||
	    aoe_in(g, p, 1)->ndim < 2)	/* else y's last axis is not N */
		return -1;
	if (n->in[0] == p->out[0])
		ci = 1;
	else if (n->in[1] == p->out[0])
		ci = 0;
	else
		return -1;
	c = aoe_in(g, n, ci);
	if (!const_f32(c, y->dims[y->ndim - 1]) || c->ndim < 1 ||
	    c->ndim > y->ndim)
		return -1;
	for (i = 0; i < c->ndim - 1; i++)
		if (c->dims[i] != 1)
			return -1;
	return n->in[ci];
}

static void
bias_fold(aoe_node *p, int b)
{
	p->in = aoe_xrealloc(p->in, 3 * sizeof(int));
	p->in[2] = b;
	p->nin = 3;
	aoe_node_add_attr(p, "_aoe_bias", AOE_A_INT)->i = 2;
}

static void
add_fold(aoe_node *p, int r)
{
	int nin = p->nin, nd;
	const int64_t *dw = aoe_attr_ints(p, "_aoe_dw", &nd);

	/* A fused depthwise Conv kept input 3 free for this (fuse_dw). */
	if (dw != NULL && nd > 0) {
		p->in[3] = r;
		aoe_node_add_attr(p, "_aoe_add", AOE_A_INT)->i = (int)dw[0];
		return;
	}
	p->in = aoe_xrealloc(p->in, 4 * sizeof(int));
	if (nin < 3)
		p->in[2] = -1;
	p->in[3] = r;
	p->nin = 4;
	aoe_node_add_attr(p, "_aoe_add", AOE_A_INT)->i = nin;
}

/*
 * Whether o broadcasts to y as one block of y's dimensions (its other
 * dimensions 1): then element i of y reads element (i / *div) % *mod
 * of o.  A scalar, a bias along the last axis, a per-channel scale and a
 * per-row mean all do.
 */
static int
bcast_block(const aoe_tensor *o, const aoe_tensor *y, int64_t *div,
    int64_t *mod)
{
	int off = y->ndim - o->ndim, d, lo = -1, hi = -1;

	if (off < 0)
		return 0;
	for (d = 0; d < o->ndim; d++) {
		if (o->dims[d] == 1)
			continue;
		if (o->dims[d] != y->dims[d + off] || (hi >= 0 &&
		    hi != d + off - 1))
			return 0;
		if (lo < 0)
			lo = d + off;
		hi = d + off;
	}
	*div = *mod = 1;
	for (d = lo < 0 ? y->ndim : hi + 1; d < y->ndim; d++)
		*div *= y->dims[d];
	for (d = lo; d >= 0 && d <= hi; d++)
		*mod *= y->dims[d];
	return 1;
}

/*
 * Whether n can continue a run of element-wise nodes whose value is
 * tensor cur (-1: start one): the input index that holds the value, or
 * -1.  The other operand of a binary step is a constant scalar, or a
 * tensor that broadcasts to the output as one block (bcast_block).
 */
static int
elem_link(const aoe_graph *g, const aoe_node *n, int cur)
{
	const aoe_tensor *y = aoe_out(g, n, 0), *c, *o;
	int64_t dv, md;
	float pa, pb;
	int kind = aoe_elem_step(g, n, &pa, &pb), i;

	if (kind == 0 || y == NULL || y->kind != AOE_T_VALUE)
		return -1;
	for (i = 0; i < (kind == 2 ? 2 : 1); i++) {
		if ((c = aoe_in(g, n, i)) == NULL || c->kind == AOE_T_CONST ||
		    !aoe_same_shape(c, y) || (cur >= 0 && n->in[i] != cur))
			continue;
		if (kind == 1)
			return i;
		o = aoe_in(g, n, 1 - i);
		if (n->in[1 - i] == n->in[i] || o->dtype != AOE_F32)
			continue;
		if ((o->kind == AOE_T_CONST && aoe_tensor_numel(o) == 1) ||
		    bcast_block(o, y, &dv, &md))
			return i;
	}
	return -1;
}

/* Give n the attribute name, an array of cnt values v that it now owns. */
static void
attr_array(aoe_node *n, const char *name, aoe_atype type, int cnt, void *v)
{
	aoe_attr *a = aoe_node_add_attr(n, name, type);

	a->n = cnt;
	if (type == AOE_A_INTS)
		a->ints = v;
	else if (type == AOE_A_FLOATS)
		a->floats = v;
	else
		a->strings = v;
}

/*
 * Make the run of nr element-wise nodes one AoeElemChain node (the
 * first's slot); side[j] is the input of node j that holds the value.
 */
static void
elem_fuse(aoe_graph *g, const int *run, const int *side, int nr)
{
	aoe_node *f = &g->nodes[run[0]];
	int in[2 * MAX_CHAIN + 1], nin = 0, j, q;
	int64_t *arg = aoe_xcalloc((size_t)nr, sizeof(int64_t));
	int64_t *sd = aoe_xcalloc((size_t)nr, sizeof(int64_t));
	float *pa = aoe_xcalloc((size_t)nr, sizeof(float));
	float *pb = aoe_xcalloc((size_t)nr, sizeof(float));
	float *sc = aoe_xcalloc((size_t)nr, sizeof(float));
	int64_t *dv = aoe_xcalloc((size_t)nr, sizeof(int64_t));
	int64_t *md = aoe_xcalloc((size_t)nr, sizeof(int64_t));
	char **ops = aoe_xcalloc((size_t)nr, sizeof(char *));

	in[nin++] = f->in[side[0]];
	for (j = 0; j < nr; j++) {
		const aoe_node *v = &g->nodes[run[j]];
		int kind = aoe_elem_step(g, v, &pa[j], &pb[j]), o;
		ops[j] = aoe_xstrdup(v->op_type);
		sd[j] = side[j];
		arg[j] = -1;
		if (kind != 2)
			continue;
		o = v->in[1 - side[j]];
		if (g->tensors[o]->kind == AOE_T_CONST &&
		    aoe_tensor_numel(g->tensors[o]) == 1) {
			arg[j] = -2;
			sc[j] = *(const float *)g->tensors[o]->data;
			continue;
		}
		for (q = 0; q < nin && in[q] != o; q++)
			;
		if (q == nin)
			in[nin++] = o;
		arg[j] = q;
		bcast_block(g->tensors[o], aoe_out(g, v, 0), &dv[j], &md[j]);
	}
	f->out[0] = g->nodes[run[nr - 1]].out[0];
	free(f->op_type);
	f->op_type = aoe_xstrdup("AoeElemChain");
	free(f->in);
	f->in = aoe_xcalloc((size_t)nin, sizeof(int));
	memcpy(f->in, in, (size_t)nin * sizeof(int));
	f->nin = nin;
	aoe_node_clear_attrs(f);
	attr_array(f, "ops", AOE_A_STRINGS, nr, ops);
	attr_array(f, "arg", AOE_A_INTS, nr, arg);
	attr_array(f, "side", AOE_A_INTS, nr, sd);
	attr_array(f, "pa", AOE_A_FLOATS, nr, pa);
	attr_array(f, "pb", AOE_A_FLOATS, nr, pb);
	attr_array(f, "scal", AOE_A_FLOATS, nr, sc);
	attr_array(f, "div", AOE_A_INTS, nr, dv);
	attr_array(f, "mod", AOE_A_INTS, nr, md);
}

/* Whether decision split applies to n: a GEMM with a thread split. */
static int
split_capable(const aoe_node *n)
{
	return strcmp(n->op_type, "Conv") == 0 ||
	    strcmp(n->op_type, "Gemm") == 0 ||
	    strcmp(n->op_type, "MatMul") == 0;
}

/*
 * Whether MaxPool n can fold into Conv p (fuse_pool): n pools p's 2-D
 * float output alone (no Indices), with unit dilations, storage order 0,
 * explicit or VALID pads each below the window, and p adds no residual,
 * pools nothing yet and computes no depthwise Conv (fuse_dw).
 */
static int
pool_foldable(const aoe_graph *g, const aoe_node *p, const aoe_node *n)
{
	const aoe_tensor *y = aoe_out(g, p, 0);
	const int64_t *ks, *ss, *ds, *ps;
	const char *ap;
	int nk, ns, nd, np, i;

	if (strcmp(n->op_type, "MaxPool") != 0 || n->domain || n->nout != 1 ||
	    p->domain || strcmp(p->op_type, "Conv") != 0 || p->nout != 1 ||
	    n->in[0] != p->out[0] || y == NULL || y->dtype != AOE_F32 ||
	    y->ndim != 4 || aoe_attr_find(p, "_aoe_add") != NULL ||
	    aoe_attr_find(p, "_aoe_pool") != NULL ||
	    aoe_attr_find(p, "_aoe_dw") != NULL)
		return 0;
	ks = aoe_attr_ints(n, "kernel_shape", &nk);
	ss = aoe_attr_ints(n, "strides", &ns);
	ds = aoe_attr_ints(n, "dilations", &nd);
	ps = aoe_attr_ints(n, "pads", &np);
	ap = aoe_attr_str(n, "auto_pad", "NOTSET");
	if (ks == NULL || nk != 2 || (ss && ns != 2) || (ds && nd != 2) ||
	    (ps && np != 4) || aoe_attr_int(n, "storage_order", 0) != 0 ||
	    (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0))
		return 0;
	for (i = 0; i < 2; i++)
		if (ks[i] < 1 || ks[i] > INT32_MAX || (ss && (ss[i] < 1 ||
		    ss[i] > INT32_MAX)) || (ds && ds[i] != 1) ||
		    y->dims[2 + i] < ks[i] ||
		    (ps && strcmp(ap, "NOTSET") == 0 && (ps[i] < 0 ||
		    ps[i] >= ks[i] || ps[2 + i] < 0 || ps[2 + i] >= ks[i])))
			return 0;
	return 1;
}

/*
 * Fold MaxPool n into Conv p: the attribute _aoe_pool (window, strides,
 * pads top, left, bottom, right, ceil_mode) and _aoe_pool_in, the Conv's
 * own output shape, which stays its signature's (aoe-bank(5)).
 */
static void
pool_fold(aoe_graph *g, aoe_node *p, const aoe_node *n)
{
	const aoe_tensor *y = aoe_out(g, p, 0);
	int nk, ns, np, i;
	const int64_t *ks = aoe_attr_ints(n, "kernel_shape", &nk);
	const int64_t *ss = aoe_attr_ints(n, "strides", &ns);
	const int64_t *ps = aoe_attr_ints(n, "pads", &np);
	int valid = strcmp(aoe_attr_str(n, "auto_pad", "NOTSET"), "VALID") ==
	    0;
	aoe_attr *a;

	/* (Each new attribute may move the node's others.) */
	a = aoe_node_add_attr(p, "_aoe_pool", AOE_A_INTS);
	a->n = 9;
	a->ints = aoe_xcalloc(9, sizeof(int64_t));
	for (i = 0; i < 2; i++) {
		a->ints[i] = ks[i];
		a->ints[2 + i] = ss ? ss[i] : 1;
		a->ints[4 + i] = ps && !valid ? ps[i] : 0;
		a->ints[6 + i] = ps && !valid ? ps[2 + i] : 0;
	}
	a->ints[8] = aoe_attr_int(n, "ceil_mode", 0) != 0;
	a = aoe_node_add_attr(p, "_aoe_pool_in", AOE_A_INTS);
	a->n = 4;
	a->ints = aoe_xcalloc(4, sizeof(int64_t));
	for (i = 0; i < 4; i++)
		a->ints[i] = y->dims[i];
}

/*
 * Whether depthwise Conv p folds into pointwise Conv n (fuse_dw): see
 * the top.  Neither pools, p adds no residual, n has nothing fused yet.
 */
static int
dw_foldable(const aoe_graph *g, const aoe_node *p, const aoe_node *n)
{
	const aoe_tensor *x, *y;
	aoe_conv_geom dg, pg;
	aoe_act a;

	if (p->domain || n->domain || strcmp(p->op_type, "Conv") != 0 ||
	    strcmp(n->op_type, "Conv") != 0 || p->nout != 1 || n->nout != 1 ||
	    n->nin < 2 || n->nin > 3 || p->nin < 2 || p->nin > 3 ||
	    n->in[0] != p->out[0] || aoe_attr_find(p, "_aoe_pool") ||
	    aoe_attr_find(p, "_aoe_add") || aoe_attr_find(n, "_aoe_pool") ||
	    aoe_attr_find(n, "_aoe_act") || aoe_attr_find(n, "_aoe_add") ||
	    aoe_attr_find(n, "_aoe_post_s") || aoe_attr_find(n, "_aoe_dw") ||
	    aoe_attr_find(p, "_aoe_dw"))
		return 0;
	x = aoe_in(g, p, 0);
	y = aoe_out(g, p, 0);
	if (x == NULL || y == NULL || x->dtype != AOE_F32 || x->ndim != 4 ||
	    y->dtype != AOE_F32 || y->ndim != 4 || !const_f32(aoe_in(g, p, 1),
	    -1) || !const_f32(aoe_in(g, n, 1), -1) ||
	    aoe_conv_geom_of(g, p, x, aoe_in(g, p, 1), aoe_in(g, p, 2), 0,
	    &dg) < 0 || aoe_conv_geom_of(g, n, y, aoe_in(g, n, 1),
	    aoe_in(g, n, 2), 0, &pg) < 0)
		return 0;
	aoe_act_of(p, &a);
	return dg.group == dg.c && dg.m == dg.c && aoe_dw_reg_ok(&dg) &&
	    dg.out[1] == y->dims[2] && dg.out[2] == y->dims[3] &&
	    a.ps == NULL && a.pt == NULL && pg.nsp == 2 && pg.group == 1 &&
	    pg.ksz == 1 && pg.s[1] == 1 && pg.s[2] == 1 && pg.pb[1] == 0 &&
	    pg.pb[2] == 0 && pg.pe[1] == 0 && pg.pe[2] == 0 &&
	    pg.outsz == dg.outsz;
}

/*
 * Fold depthwise Conv p into pointwise Conv n: n's inputs become X (p's
 * input), W, B or none, the residual's place, p's W and B or none; the
 * attributes _aoe_dw (n's input count before, then p's kernel, strides
 * and pads top, left, bottom, right), _aoe_dw_mid (p's output shape)
 * and p's activation as _aoe_dw_act, _aoe_dw_lo and _aoe_dw_hi.
 */
static void
dw_fold(aoe_graph *g, const aoe_node *p, aoe_node *n)
{
	const aoe_tensor *x = aoe_in(g, p, 0), *y = aoe_out(g, p, 0);
	int nin = n->nin, i;
	aoe_conv_geom dg;
	aoe_attr *at;
	aoe_act a;

	aoe_conv_geom_of(g, p, x, aoe_in(g, p, 1), aoe_in(g, p, 2), 0, &dg);
	aoe_act_of(p, &a);
	n->in = aoe_xrealloc(n->in, 6 * sizeof(int));
	if (nin < 3)
		n->in[2] = -1;
	n->in[0] = p->in[0];
	n->in[3] = -1;
	n->in[4] = p->in[1];
	n->in[5] = p->nin > 2 ? p->in[2] : -1;
	n->nin = 6;
	/* (Each new attribute may move the node's others.) */
	at = aoe_node_add_attr(n, "_aoe_dw", AOE_A_INTS);
	at->n = 9;
	at->ints = aoe_xcalloc(9, sizeof(int64_t));
	at->ints[0] = nin;
	for (i = 0; i < 2; i++) {
		at->ints[1 + i] = dg.k[1 + i];
		at->ints[3 + i] = dg.s[1 + i];
		at->ints[5 + i] = dg.pb[1 + i];
		at->ints[7 + i] = dg.pe[1 + i];
	}
	at = aoe_node_add_attr(n, "_aoe_dw_mid", AOE_A_INTS);
	at->n = 4;
	at->ints = aoe_xcalloc(4, sizeof(int64_t));
	for (i = 0; i < 4; i++)
		at->ints[i] = y->dims[i];
	if (a.kind != AOE_ACT_NONE) {
		aoe_node_add_attr(n, "_aoe_dw_act", AOE_A_INT)->i = a.kind;
		aoe_node_add_attr(n, "_aoe_dw_lo", AOE_A_FLOAT)->f = a.lo;
		aoe_node_add_attr(n, "_aoe_dw_hi", AOE_A_FLOAT)->f = a.hi;
	}
}

/*
 * Node v has folded into prev (the *_fold functions have moved its work
 * there): prev now writes v's output, and v goes.  A dry run leaves the
 * graph as it is, but prev's output still becomes v's for the checks
 * after (that Relu's output is what a MaxPool after a Conv and its Relu
 * reads), saved in saved[] to be put back.
 */
static void
folded(aoe_graph *g, int prev, int v, char *kill, int dry, int *saved,
    int *ns)
{
	kill[v] = 1;
	if (dry) {
		saved[2 * *ns] = prev;
		saved[2 * *ns + 1] = g->nodes[prev].out[0];
		(*ns)++;
	}
	g->nodes[prev].out[0] = g->nodes[v].out[0];
}

/*
 * The fusions into the producer before each node of the chain nodes[0..n)
 * that d allows (fuse_bn, fuse_act, fuse_add, fuse_pool, fuse_dw): mark
 * the nodes that go away in kill[] and count the rewrites; with dry set,
 * only count.
 */
static int
apply_fusions(aoe_graph *g, const int *nodes, int n, const aoe_sched *d,
    char *kill, int dry, int *cnt)
{
	int fbn = aoe_sched_get(d, "fuse_bn", 0) != 0;
	int fact = aoe_sched_get(d, "fuse_act", 0) != 0;
	int fadd = aoe_sched_get(d, "fuse_add", 0) != 0;
	int fpool = aoe_sched_get(d, "fuse_pool", 0) != 0;
	int fdw = aoe_sched_get(d, "fuse_dw", 0) != 0;
	int *nbn = &cnt[AOE_FUSE_BN], *nact = &cnt[AOE_FUSE_ACT];
	int *nadd = &cnt[AOE_FUSE_ADD];
	int prev = -1, prev_act = 0, prev_epi = 0, k, r;
	float *fa, *ft;
	aoe_act a;
	int *saved = aoe_xcalloc(2 * (size_t)n + 2, sizeof(int));
	int ns = 0, rc = 0;

	*nbn = *nact = *nadd = cnt[AOE_FUSE_POOL] = cnt[AOE_FUSE_DW] = 0;
	for (k = 0; k < n; k++) {
		int v = nodes[k];
		aoe_node *nd = &g->nodes[v];
		/* Nothing fuses into a Conv after its pool. */
		if (prev >= 0 && fpool && pool_foldable(g, &g->nodes[prev],
		    nd)) {
			if (!dry)
				pool_fold(g, &g->nodes[prev], nd);
			folded(g, prev, v, kill, dry, saved, &ns);
			cnt[AOE_FUSE_POOL]++;
			prev = -1;
			continue;
		}
		/*
		 * A pointwise Conv after a depthwise one computes both;
		 * what fuses after it fuses into it.
		 */
		if (prev >= 0 && fdw && dw_foldable(g, &g->nodes[prev], nd)) {
			if (!dry)
				dw_fold(g, &g->nodes[prev], nd);
			kill[prev] = 1;
			cnt[AOE_FUSE_DW]++;
			prev = v;
			prev_act = prev_epi = 0;
			continue;
		}
		if (prev >= 0 && fbn && !prev_act && !prev_epi &&
		    bn_foldable(g, &g->nodes[prev], nd)) {
			if (!dry && bn_fold(g, prev, v) < 0) {
				rc = -1;
				break;
			}
			folded(g, prev, v, kill, dry, saved, &ns);
			(*nbn)++;
			continue;
		}
		/*
		 * A Mul, Add, Sub or Div by a constant (one value, or one
		 * a channel) after a Conv: folded into the weights when
		 * nothing is fused yet (fuse_bn), else composed after the
		 * epilogue (fuse_act).
		 */
		if (prev >= 0 && (fbn || fact) &&
		    affine_of(g, &g->nodes[prev], nd, &fa, &ft)) {
			aoe_node *p = &g->nodes[prev];
			int wfold = fbn && !prev_act && !prev_epi;
			if (!dry && wfold)
				rc = affine_fold(g, prev, fa, ft);
			else if (!dry && fact)
				post_fold(g, p, fa, ft);
			free(fa);
			free(ft);
			if (rc < 0)
				break;
			if (wfold || fact) {
				folded(g, prev, v, kill, dry, saved, &ns);
				if (wfold)
					(*nbn)++;
				else {
					(*nact)++;
					prev_act = 1;
				}
				continue;
			}
		}
		/*
		 * A bias Add after a MatMul: the MatMul adds it in its
		 * epilogue (fuse_bn, which folds constants).
		 */
		if (prev >= 0 && fbn && !prev_act && !prev_epi &&
		    (r = bias_foldable(g, &g->nodes[prev], nd)) >= 0) {
			if (!dry)
				bias_fold(&g->nodes[prev], r);
			folded(g, prev, v, kill, dry, saved, &ns);
			(*nbn)++;
			prev_epi = 1;
			continue;
		}
		/*
		 * A residual Add after a Conv: the Conv adds it in its
		 * epilogue (before an activation fused after it).
		 */
		if (prev >= 0 && fadd && !prev_act &&
		    (r = add_foldable(g, &g->nodes[prev], nd)) >= 0) {
			if (!dry)
				add_fold(&g->nodes[prev], r);
			folded(g, prev, v, kill, dry, saved, &ns);
			(*nadd)++;
			prev_epi = 1;
			continue;
		}
		if (prev >= 0 && fact && !prev_act &&
		    act_of_node(g, nd, &a) &&
		    act_target(g, &g->nodes[prev], nd)) {
			if (!dry) {
				aoe_node *p = &g->nodes[prev];
				aoe_node_add_attr(p, "_aoe_act",
				    AOE_A_INT)->i = a.kind;
				if (a.kind == AOE_ACT_CLIP) {
					aoe_node_add_attr(p, "_aoe_act_lo",
					    AOE_A_FLOAT)->f = a.lo;
					aoe_node_add_attr(p, "_aoe_act_hi",
					    AOE_A_FLOAT)->f = a.hi;
				}
			}
			folded(g, prev, v, kill, dry, saved, &ns);
			prev_act = 1;
			(*nact)++;
			continue;
		}
		prev = v;
		prev_act = has_act(nd);
		prev_epi = has_epi(nd);
	}
	/* A dry run leaves the outputs as they were. */
	while (ns-- > 0)
		g->nodes[saved[2 * ns]].out[0] = saved[2 * ns + 1];
	free(saved);
	return rc;
}

/*
 * Runs of element-wise float nodes of the chain, each reading the value
 * of the one before, become one AoeElemChain (fuse_elem); returns the
 * nodes merged away.
 */
static int
apply_elem(aoe_graph *g, const int *nodes, int n, char *kill, int dry)
{
	int run[MAX_CHAIN], side[MAX_CHAIN], nr = 0, cur = -1, sd, k, r;
	int nel = 0;

	for (k = 0; k <= n; k++) {
		int v = k < n ? nodes[k] : -1;
		if (v >= 0 && kill[v])
			continue;
		if (v >= 0 && nr > 0 && (sd = elem_link(g,
		    &g->nodes[v], cur)) >= 0) {
			run[nr] = v;
			side[nr++] = sd;
			cur = g->nodes[v].out[0];
			continue;
		}
		if (nr >= 2) {
			if (!dry)
				elem_fuse(g, run, side, nr);
			for (r = 1; r < nr; r++)
				kill[run[r]] = 1;
			nel += nr - 1;
		}
		nr = 0;
		if (v >= 0 && (sd = elem_link(g, &g->nodes[v], -1)) >=
		    0) {
			run[nr] = v;
			side[nr++] = sd;
			cur = g->nodes[v].out[0];
		}
	}
	return nel;
}

/*
 * The decisions that mark the chain's remaining nodes for the layers
 * that run them: threads, serial and split, inplace, layout.
 */
static void
apply_marks(aoe_graph *g, const int *nodes, int n, const aoe_sched *d,
    const char *kill)
{
	int th = (int)aoe_sched_get(d, "threads", 0);
	int lay = (int)aoe_sched_get(d, "layout", 0);
	int inpl = aoe_sched_get(d, "inplace", 0) != 0;
	uint64_t serial = (uint64_t)aoe_sched_get(d, "serial", 0);
	uint64_t split = (uint64_t)aoe_sched_get(d, "split", 0);
	int k;

	if (th > 0)
		for (k = 0; k < n; k++)
			if (!kill[nodes[k]])
				g->nodes[nodes[k]].nthreads = th;
	/* Per-op decisions, by position in the chain (see the top). */
	for (k = 0; k < n && k < AOE_SGAT_MAXPOS; k++) {
		aoe_node *nd = &g->nodes[nodes[k]];
		int sp = (int)(split >> 2 * k & 3);
		if (kill[nodes[k]])
			continue;
		if (serial >> k & 1)
			nd->nthreads = 1;
		if (sp != 0 && split_capable(nd))
			aoe_node_add_attr(nd, "_aoe_split", AOE_A_INT)->i =
			    sp;
	}
	/* The memory planner (lib/runtime/exec.c) honours this. */
	if (inpl)
		for (k = 0; k < n; k++)
			if (!kill[nodes[k]] && aoe_attr_find(&g->nodes[nodes[k]],
			    "_aoe_inplace") == NULL)
				aoe_node_add_attr(&g->nodes[nodes[k]],
				    "_aoe_inplace", AOE_A_INT)->i = 1;
	/* The layout pass (aoe_fuse_layout) acts on this after the fusions. */
	if (lay == AOE_LAYOUT_8C)
		for (k = 0; k < n; k++)
			if (!kill[nodes[k]] && aoe_attr_find(&g->nodes[nodes[k]],
			    "_aoe_layout") == NULL)
				aoe_node_add_attr(&g->nodes[nodes[k]],
				    "_aoe_layout", AOE_A_INT)->i = lay;
}

/*
 * Apply d to the chain nodes[0..n): mark nodes that go away in kill[]
 * and count the rewrites; with dry set, only count.
 */
static int
apply(aoe_graph *g, const int *nodes, int n, const aoe_sched *d, char *kill,
    int dry, int *cnt)
{
	cnt[AOE_FUSE_ELEM] = 0;
	if (apply_fusions(g, nodes, n, d, kill, dry, cnt) < 0)
		return -1;
	if (aoe_sched_get(d, "fuse_elem", 0) != 0)
		cnt[AOE_FUSE_ELEM] = apply_elem(g, nodes, n, kill, dry);
	if (!dry)
		apply_marks(g, nodes, n, d, kill);
	return 0;
}

const char *const aoe_fuse_knobs[AOE_FUSE_N] = { "fuse_bn", "fuse_act",
    "fuse_add", "fuse_elem", "fuse_pool", "fuse_dw" };

int
aoe_sgat_effect(aoe_graph *g, const int *nodes, int n, const aoe_sched *d,
    int *cnt)
{
	char *kill = aoe_xcalloc((size_t)g->nnodes + 1, 1);
	int rc = apply(g, nodes, n, d, kill, 1, cnt);

	free(kill);
	return rc;
}

int
aoe_sgat_per_op(aoe_graph *g, const int *nodes, int n, const aoe_sched *d,
    int *alive, int *splits)
{
	char *kill = aoe_xcalloc((size_t)g->nnodes + 1, 1);
	int cnt[AOE_FUSE_N], k, rc;

	rc = apply(g, nodes, n, d, kill, 1, cnt);
	for (k = 0; k < n; k++) {
		alive[k] = rc == 0 && !kill[nodes[k]] && k < AOE_SGAT_MAXPOS;
		splits[k] = alive[k] && split_capable(&g->nodes[nodes[k]]);
	}
	free(kill);
	return rc;
}

/*
 * Drop the nodes in kill[] and the dead ones: those the runtime pruned
 * (no graph output depends on them) and those it folded (their outputs
 * are constants for good).  A dead node may read a tensor that a fusion
 * has just made internal to a fused node, so it cannot stay.
 */
void
aoe_fuse_compact(aoe_graph *g, const char *kill)
{
	int i, j;

	for (i = j = 0; i < g->nnodes; i++) {
		if (kill[i] || g->nodes[i].dead) {
			aoe_node_free(&g->nodes[i]);
			continue;
		}
		if (i != j)
			g->nodes[j] = g->nodes[i];
		j++;
	}
	g->nnodes = j;
	g->norder = 0;
}

/*
 * Decisions by signature (aoe_dtable): a list, since a graph has tens of
 * chains, not thousands.
 */
struct aoe_dtable {
	int n, cap;
	struct tent {
		char *sig;
		aoe_sched d;
	} *t;
};

aoe_dtable *
aoe_dtable_new(void)
{
	return aoe_xcalloc(1, sizeof(aoe_dtable));
}

void
aoe_dtable_free(aoe_dtable *t)
{
	int i;

	if (t == NULL)
		return;
	for (i = 0; i < t->n; i++)
		free(t->t[i].sig);
	free(t->t);
	free(t);
}

void
aoe_dtable_set(aoe_dtable *t, const char *sig, const aoe_sched *d)
{
	int i;

	for (i = 0; i < t->n; i++)
		if (strcmp(t->t[i].sig, sig) == 0) {
			t->t[i].d = *d;
			return;
		}
	if (t->n == t->cap) {
		t->cap = t->cap ? t->cap * 2 : 16;
		t->t = aoe_xrealloc(t->t, (size_t)t->cap * sizeof(*t->t));
	}
	t->t[t->n].sig = aoe_xstrdup(sig);
	t->t[t->n].d = *d;
	t->n++;
}

int
aoe_dtable_find(const aoe_dtable *t, const char *sig, aoe_sched *d)
{
	int i;

	for (i = 0; t != NULL && i < t->n; i++)
		if (strcmp(t->t[i].sig, sig) == 0) {
			*d = t->t[i].d;
			return 1;
		}
	return 0;
}

int
aoe_dtable_size(const aoe_dtable *t)
{
	return t ? t->n : 0;
}

/* The one value of constant float tensor t, or NAN. */
static float
scalar_of(const aoe_tensor *t)
{
	return const_f32(t, 1) ? *(const float *)t->data : NAN;
}

/* The live node that makes tensor t, if its only reader is one node. */
static aoe_node *
sole_producer(aoe_graph *g, int t, const int *ncons, const char *isout,
    const char *op_type)
{
	int p;

	if (t < 0 || ncons[t] != 1 || isout[t] ||
	    g->tensors[t]->kind != AOE_T_VALUE)
		return NULL;
	p = g->tensors[t]->producer;
	if (!is_live(g, p) || strcmp(g->nodes[p].op_type, op_type) != 0 ||
	    g->nodes[p].domain || g->nodes[p].nout != 1)
		return NULL;
	return &g->nodes[p];
}

/*
 * Whether Clip node c clamps to [lo, hi] exactly, by attributes (opset
 * < 11) or constant inputs.
 */
static int
clip_is(const aoe_graph *g, const aoe_node *c, float lo, float hi)
{
	if (g->opset < 11)
		return aoe_attr_float(c, "min", NAN) == lo &&
		    aoe_attr_float(c, "max", NAN) == hi;
	return c->nin == 3 && scalar_of(aoe_in(g, c, 1)) == lo &&
	    scalar_of(aoe_in(g, c, 2)) == hi;
}

/* Whether tensor t is a float constant of one value within 1e-6 of v. */
static int
scalar_near(const aoe_tensor *t, float v)
{
	float c = scalar_of(t);

	return fabsf(c - v) <= 1e-6f * fabsf(v);
}

/* The operand of two-input node n that is not t, or -1. */
static int
other_in(const aoe_node *n, int t)
{
	if (n->nin != 2)
		return -1;
	return n->in[0] == t ? n->in[1] : n->in[1] == t ? n->in[0] : -1;
}

/* Node n becomes op op_type of the one input x. */
static void
become(aoe_node *n, const char *op_type, int x)
{
	free(n->op_type);
	n->op_type = aoe_xstrdup(op_type);
	n->in[0] = x;
	n->nin = 1;
}

/*
 * x * Sigmoid(x) (SiLU) becomes one Swish node (the Mul's), which
 * fuse_act can fold into the Conv, Gemm or MatMul that makes x.
 * Returns the nodes killed.
 */
static int
canon_silu(aoe_graph *g, const int *ncons, const char *isout, char *kill)
{
	int i, j, nk = 0;

	for (i = 0; i < g->norder; i++) {
		aoe_node *m = &g->nodes[g->order[i]], *sg = NULL;
		if (m->dead || kill[m - g->nodes] || m->domain ||
		    strcmp(m->op_type, "Mul") != 0 || m->nin != 2 ||
		    m->nout != 1)
			continue;
		for (j = 0; j < 2; j++)
			if ((sg = sole_producer(g, m->in[j], ncons, isout,
			    "Sigmoid")) != NULL && sg->nin == 1 &&
			    sg->in[0] == m->in[1 - j])
				break;
		if (j == 2 || g->tensors[m->in[1 - j]]->dtype != AOE_F32)
			continue;
		become(m, "Swish", m->in[1 - j]);
		kill[sg - g->nodes] = 1;
		nk++;
	}
	return nk;
}

/*
 * x * HardSigmoid(x) with alpha 1/6 and beta 1/2 (HardSwish as
 * torch.onnx writes it below opset 14, as in mobilenet_v3) becomes one
 * HardSwish node (the Mul's), which fuse_act can fold into the Conv
 * that makes x.  Returns the nodes killed.
 */
static int
canon_hswish(aoe_graph *g, const int *ncons, const char *isout, char *kill)
{
	int i, j, nk = 0;

	for (i = 0; i < g->norder; i++) {
		aoe_node *m = &g->nodes[g->order[i]], *hs = NULL;
		if (m->dead || kill[m - g->nodes] || m->domain ||
		    strcmp(m->op_type, "Mul") != 0 || m->nin != 2 ||
		    m->nout != 1)
			continue;
		for (j = 0; j < 2; j++)
			if ((hs = sole_producer(g, m->in[j], ncons, isout,
			    "HardSigmoid")) != NULL && hs->nin == 1 &&
			    hs->in[0] == m->in[1 - j] &&
			    fabsf(aoe_attr_float(hs, "alpha", 0.2f) -
			    1.0f / 6) <= 1e-6f &&
			    aoe_attr_float(hs, "beta", 0.5f) == 0.5f)
				break;
		if (j == 2 || g->tensors[m->in[1 - j]]->dtype != AOE_F32)
			continue;
		become(m, "HardSwish", m->in[1 - j]);
		kill[hs - g->nodes] = 1;
		nk++;
	}
	return nk;
}

/*
 * The cube of x as an exported model writes it, Pow(x, 3) or
 * Mul(Mul(x, x), x) in either order, made as tensor t for its one
 * reader: the nodes that make it go to kill[], their count is returned
 * (0 when t is not that).
 */
static int
cube_of(aoe_graph *g, int t, int x, const int *ncons, const char *isout,
    char *kill)
{
	aoe_node *p, *sq;
	int j;

	if ((p = sole_producer(g, t, ncons, isout, "Pow")) != NULL) {
		if (p->nin != 2 || p->in[0] != x ||
		    !scalar_near(aoe_in(g, p, 1), 3))
			return 0;
		kill[p - g->nodes] = 1;
		return 1;
	}
	if ((p = sole_producer(g, t, ncons, isout, "Mul")) == NULL ||
	    p->nin != 2)
		return 0;
	for (j = 0; j < 2; j++)
		if (p->in[1 - j] == x && (sq = sole_producer(g, p->in[j],
		    ncons, isout, "Mul")) != NULL && sq->nin == 2 &&
		    sq->in[0] == x && sq->in[1] == x) {
			kill[p - g->nodes] = kill[sq - g->nodes] = 1;
			return 2;
		}
	return 0;
}

/*
 * The inside of GELU's tanh form, Tanh(c * (x + 0.044715 * x^3)) with c
 * sqrt(2 / pi), each Mul's and Add's operands in either order, where e
 * is the Tanh: its nodes but e go to kill[], their count is returned (0
 * when it is not that).
 */
static int
gelu_tanh_inner(aoe_graph *g, const aoe_node *e, int x, const int *ncons,
    const char *isout, char *kill)
{
	aoe_node *q, *s, *k;
	int j, u = -1, nc = 0;

	if ((q = sole_producer(g, e->in[0], ncons, isout, "Mul")) == NULL ||
	    q->nin != 2)
		return 0;
	for (j = 0; j < 2; j++)
		if (scalar_near(aoe_in(g, q, 1 - j), 0.79788456f) &&
		    (s = sole_producer(g, q->in[j], ncons, isout, "Add")) !=
		    NULL && s->nin == 2 && (u = other_in(s, x)) >= 0)
			break;
	if (j == 2 || (k = sole_producer(g, u, ncons, isout, "Mul")) ==
	    NULL || k->nin != 2)
		return 0;
	for (j = 0; j < 2; j++)
		if (scalar_near(aoe_in(g, k, 1 - j), 0.044715f) &&
		    (nc = cube_of(g, k->in[j], x, ncons, isout, kill)) > 0)
			break;
	if (j == 2)
		return 0;
	kill[q - g->nodes] = kill[s - g->nodes] = kill[k - g->nodes] = 1;
	return 3 + nc;
}

/*
 * GELU written out, x * 0.5 * (1 + Erf(x / sqrt(2))) (the Div may be a
 * Mul by 1 / sqrt(2), the 0.5 may come first or last), becomes one Gelu
 * node (the last Mul's); so does its tanh form, x * 0.5 * (1 + Tanh(
 * sqrt(2 / pi) * (x + 0.044715 * x^3))), as a Gelu with approximate
 * "tanh".  Returns the nodes killed.
 */
static int
canon_gelu(aoe_graph *g, const int *ncons, const char *isout, char *kill)
{
	int i, j, nk = 0;

	for (i = 0; i < g->norder; i++) {
		aoe_node *d = &g->nodes[g->order[i]], *m = NULL, *a = NULL;
		aoe_node *e, *q, *h = NULL;
		aoe_attr *ap;
		int x = -1, t, one, nin;
		if (d->dead || kill[d - g->nodes] || d->domain ||
		    strcmp(d->op_type, "Mul") != 0 || d->nin != 2 ||
		    d->nout != 1)
			continue;
		/* Form 1: Mul(Mul(x, Add(Erf(..), 1)), 0.5). */
		for (j = 0; j < 2; j++)
			if (scalar_near(aoe_in(g, d, 1 - j), 0.5f) &&
			    (m = sole_producer(g, d->in[j], ncons, isout,
			    "Mul")) != NULL)
				break;
		if (j < 2 && m->nin == 2) {
			for (t = 0; t < 2; t++)
				if ((a = sole_producer(g, m->in[t], ncons,
				    isout, "Add")) != NULL)
					break;
			if (a != NULL)
				x = m->in[1 - t];
		} else {
			/* Form 2: Mul(Mul(x, 0.5), Add(Erf(..), 1)). */
			for (j = 0; j < 2; j++)
				if ((a = sole_producer(g, d->in[j], ncons,
				    isout, "Add")) != NULL &&
				    (h = sole_producer(g, d->in[1 - j], ncons,
				    isout, "Mul")) != NULL && h->nin == 2)
					break;
			if (j == 2)
				continue;
			if (scalar_near(aoe_in(g, h, 1), 0.5f))
				x = h->in[0];
			else if (scalar_near(aoe_in(g, h, 0), 0.5f))
				x = h->in[1];
			m = h;
		}
		if (a == NULL || x < 0 || a->nin != 2 ||
		    g->tensors[x]->dtype != AOE_F32)
			continue;
		one = scalar_near(aoe_in(g, a, 1), 1) ? 0 :
		    scalar_near(aoe_in(g, a, 0), 1) ? 1 : -1;
		if (one >= 0 && (e = sole_producer(g, a->in[one], ncons, isout,
		    "Tanh")) != NULL && e->nin == 1 &&
		    (nin = gelu_tanh_inner(g, e, x, ncons, isout, kill)) > 0) {
			become(d, "Gelu", x);
			ap = aoe_node_add_attr(d, "approximate", AOE_A_STRING);
			ap->s = aoe_xstrdup("tanh");
			kill[m - g->nodes] = kill[a - g->nodes] = 1;
			kill[e - g->nodes] = 1;
			nk += 3 + nin;
			continue;
		}
		if (one < 0 || (e = sole_producer(g, a->in[one], ncons, isout,
		    "Erf")) == NULL || e->nin != 1)
			continue;
		if ((q = sole_producer(g, e->in[0], ncons, isout, "Div")) !=
		    NULL) {
			if (q->nin != 2 || q->in[0] != x ||
			    !scalar_near(aoe_in(g, q, 1), 1.41421356f))
				continue;
		} else if ((q = sole_producer(g, e->in[0], ncons, isout,
		    "Mul")) != NULL) {
			if (other_in(q, x) < 0 || !scalar_near(g->tensors[
			    other_in(q, x)], 0.70710678f))
				continue;
		} else
			continue;
		become(d, "Gelu", x);
		kill[m - g->nodes] = kill[a - g->nodes] = 1;
		kill[e - g->nodes] = kill[q - g->nodes] = 1;
		nk += 4;
	}
	return nk;
}

int
aoe_fuse_canon(aoe_graph *g)
{
	int *ncons, i, j, nk = 0;
	char *isout, *kill;

	ncons = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	isout = aoe_xcalloc((size_t)g->ntensors + 1, 1);
	kill = aoe_xcalloc((size_t)g->nnodes + 1, 1);
	for (i = 0; i < g->noutputs; i++)
		isout[g->outputs[i]] = 1;
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		for (j = 0; j < n->nin && !n->dead; j++)
			if (n->in[j] >= 0)
				ncons[n->in[j]]++;
	}
	/*
	 * HardSwish written out, x * Clip(x + 3, 0, 6) / 6, becomes one
	 * HardSwish node (the Div's), which fuse_act can then fold.
	 */
	for (i = 0; i < g->norder; i++) {
		aoe_node *d = &g->nodes[g->order[i]], *m, *c, *a;
		const aoe_tensor *x;
		int xi;
		if (d->dead || d->domain || strcmp(d->op_type, "Div") != 0 ||
		    d->nin != 2 || scalar_of(aoe_in(g, d, 1)) != 6 ||
		    (m = sole_producer(g, d->in[0], ncons, isout, "Mul")) ==
		    NULL || m->nin != 2)
			continue;
		for (j = 0; j < 2; j++)
			if ((c = sole_producer(g, m->in[j], ncons, isout,
			    "Clip")) != NULL)
				break;
		if (c == NULL || !clip_is(g, c, 0, 6) ||
		    (a = sole_producer(g, c->in[0], ncons, isout, "Add")) ==
		    NULL || a->nin != 2)
			continue;
		xi = m->in[1 - j];
		if (!((a->in[0] == xi && scalar_of(aoe_in(g, a, 1)) == 3) ||
		    (a->in[1] == xi && scalar_of(aoe_in(g, a, 0)) == 3)) ||
		    (x = g->tensors[xi])->dtype != AOE_F32)
			continue;
		free(d->op_type);
		d->op_type = aoe_xstrdup("HardSwish");
		d->in[0] = xi;
		d->nin = 1;
		kill[a - g->nodes] = kill[c - g->nodes] = kill[m - g->nodes] = 1;
		nk += 3;
	}
	nk += canon_silu(g, ncons, isout, kill);
	nk += canon_hswish(g, ncons, isout, kill);
	nk += canon_gelu(g, ncons, isout, kill);
	if (nk > 0)
		aoe_fuse_compact(g, kill);
	free(ncons);
	free(isout);
	free(kill);
	return nk > 0;
}

void
aoe_fuse_default(aoe_sched *d)
{
	int i;

	memset(d, 0, sizeof(*d));
	for (i = 0; i < AOE_FUSE_N; i++)
		aoe_sched_set(d, aoe_fuse_knobs[i], 1);
	/*
	 * Not fuse_dw: the pointwise GEMM (mobilenet_v2's, 16 to 96 output
	 * channels) does 24 or more FMAs for each float of the depthwise
	 * output it reads, so reading it from L3 with the prefetchers
	 * costs no more than from L2, and the bands' calls cost more
	 * (AMD EPYC Zen 5, 1 thread, per-node minima over 40 runs, both
	 * nodes unfused against fused, us: 144 @56 213 against 214 with
	 * the whole plane a band, 234-238 with bands in L2; 96 @112/2 235
	 * against 300-400, where the 8-channel kernel makes the stride-2
	 * taps faster than the register-blocked one that bands use).  At 2
	 * threads the bands split the depthwise input by rows where its
	 * producer wrote it by channels, half of it in the other core's
	 * cache: 1.5x to 3x the time.  A choice for aoe-sgat.
	 */
	aoe_sched_set(d, "fuse_dw", 0);
	aoe_sched_set(d, "inplace", 1);
}

int
aoe_fuse_hook(aoe_graph *g, const aoe_fuse_ctx *c)
{
	int np, id, n, rc = 0, cnt[AOE_FUSE_N], i;
	int *part, *nodes, any = 0;
	char *kill, *sig;
	aoe_sched d;

	part = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	nodes = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	kill = aoe_xcalloc((size_t)g->nnodes + 1, 1);
	aoe_sgat_partition(g, part, &np);
	for (id = 0; id < np; id++) {
		n = aoe_sgat_members(g, part, id, nodes);
		aoe_fuse_default(&d);
		if (c->force)
			d = *c->force;
		else if (c->find && aoe_sgat_signature(g, nodes, n,
		    c->nthreads, &sig) == 0) {
			c->find(c->arg, sig, &d);
			free(sig);
		}
		if (c->layout >= 0 && !c->force)
			aoe_sched_set(&d, "layout", c->layout);
		if ((rc = apply(g, nodes, n, &d, kill, 0, cnt)) < 0)
			break;
		for (i = 0; i < AOE_FUSE_N; i++)
			any += cnt[i];
	}
	if (rc == 0 && any > 0) {
		aoe_fuse_compact(g, kill);
		rc = 1;
	}
	free(part);
	free(nodes);
	free(kill);
	return rc;
}

/*
 * Layouts.  A chain whose decisions say layout=8 has its nodes marked
 * (_aoe_layout); once the fusions are done, aoe_fuse_layout() runs each
 * marked node that can work in NCHW8c on blocked tensors: a Conv the
 * blocked kernel takes, a pooling or Resize that k_pool.c runs blocked,
 * an element-wise float op whose operands all have the output's shape.
 * A tensor stays blocked from one such node to the next, across chains;
 * an AoeReorder converts it where it meets a node, or a graph output,
 * that wants it plain, and one converts a plain tensor that a blocked
 * node reads.
 */

/* Whether input j of n carries the data that a blocked n reads blocked. */
static int
layout_data_in(const aoe_graph *g, const aoe_node *n, int j)
{
	const aoe_tensor *t = aoe_in(g, n, j);

	if (t == NULL || t->kind == AOE_T_CONST)
		return 0;
	return strcmp(n->op_type, "Conv") != 0 || j == 0 || j == 3;
}

static int
layout_capable(const aoe_graph *g, const aoe_node *n)
{
	static const char *const unary[] = { "Relu", "LeakyRelu", "Sigmoid",
	    "HardSigmoid", "HardSwish", "Tanh", "Erf", "Neg", "Abs", "Elu",
	    "Selu", "Celu", "Softplus", "Softsign", "Clip" };
	static const char *const binary[] = { "Add", "Sub", "Mul", "Max",
	    "Min" };
	static const char *const pools[] = { "MaxPool", "AveragePool",
	    "GlobalAveragePool", "GlobalMaxPool", "Resize", "Upsample" };
	const aoe_tensor *y = aoe_out(g, n, 0), *x;
	int j, nd = 0;

	if (n->domain || n->nout != 1 || y == NULL || y->dtype != AOE_F32 ||
	    y->ndim != 4)
		return 0;
	if (strcmp(n->op_type, "Conv") == 0) {
		for (j = 1; j < 3; j++)
			if ((x = aoe_in(g, n, j)) && x->kind != AOE_T_CONST)
				return 0;
		return aoe_conv_8c_ok(g, n);
	}
	if (aoe_str_in(n->op_type, pools, sizeof(pools) / sizeof(pools[0])))
		return aoe_pool_8c_ok(g, n);
	/* A fused element-wise chain: every operand of the output's shape. */
	if (strcmp(n->op_type, "AoeElemChain") == 0) {
		for (j = 0; j < n->nin; j++)
			if ((x = aoe_in(g, n, j)) == NULL ||
			    x->kind == AOE_T_CONST || !aoe_same_shape(x, y))
				return 0;
		return 1;
	}
	if (!aoe_str_in(n->op_type, unary, sizeof(unary) / sizeof(unary[0])) &&
	    !(n->nin == 2 && aoe_str_in(n->op_type, binary,
	    sizeof(binary) / sizeof(binary[0]))))
		return 0;
	for (j = 0; j < n->nin; j++) {
		if ((x = aoe_in(g, n, j)) == NULL || x->kind == AOE_T_CONST)
			continue;
		if (x->dtype != AOE_F32 || !aoe_same_shape(x, y))
			return 0;
		nd++;
	}
	/* Clip's bounds are constants; a binary op has two operands. */
	return nd == (aoe_str_in(n->op_type, binary, sizeof(binary) /
	    sizeof(binary[0])) ? 2 : 1) && (strcmp(n->op_type, "Clip") != 0 ||
	    nd == 1);
}

/*
 * Memory reuse.  A node that a decision inplace=1 marked may write its
 * output over its input 0 when that input dies there and the op allows
 * it (aoe_node_inplace_ok(), which lib/runtime/exec.c's planner checks).
 */
int
aoe_sgat_inplace_nodes(const aoe_graph *g, const int *nodes, int n)
{
	int k, cnt = 0;

	for (k = 0; k < n; k++)
		cnt += aoe_node_inplace_ok(g, &g->nodes[nodes[k]]);
	return cnt;
}

int
aoe_sgat_layout_nodes(const aoe_graph *g, const int *nodes, int n)
{
	int k, cnt = 0;

	for (k = 0; k < n; k++)
		cnt += strcmp(g->nodes[nodes[k]].op_type, "Conv") == 0 &&
		    layout_capable(g, &g->nodes[nodes[k]]);
	return cnt;
}

/* A new tensor like tensor t, blocked, named after it. */
static int
blocked_twin(aoe_graph *g, int t)
{
	const aoe_tensor *like = g->tensors[t];
	int i = fresh_like(g, like->name, "8c", like);

	g->tensors[i]->layout = AOE_LAYOUT_8C;
	return i;
}

static void
add_reorder(aoe_graph *g, const char *base, int from, int to, int layout)
{
	char name[512];
	int v;

	snprintf(name, sizeof(name), "%s/aoe_reorder", base);
	v = aoe_graph_add_node(g, name, "AoeReorder", 1, &from, 1, &to);
	aoe_node_add_attr(&g->nodes[v], "to", AOE_A_INT)->i = layout;
}

int
aoe_fuse_layout(aoe_graph *g)
{
	int nn = g->nnodes, nt = g->ntensors, i, j, u, v, t, tb, any = 0;
	char *inm = aoe_xcalloc((size_t)nn + 1, 1);
	char *isout = aoe_xcalloc((size_t)nt + 1, 1);
	int *twin = aoe_xcalloc((size_t)nt + 1, sizeof(int));

	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[v = g->order[i]];
		if (!n->dead && aoe_attr_int(n, "_aoe_layout", 0) ==
		    AOE_LAYOUT_8C && layout_capable(g, n))
			inm[v] = 1;
	}
	for (i = 0; i < g->noutputs; i++)
		isout[g->outputs[i]] = 1;
	/*
	 * Outputs: blocked, with a reorder to the plain tensor when
	 * something else reads it (nodes are added from here on, so they
	 * are named by index, never held by pointer).
	 */
	for (v = 0; v < nn; v++) {
		int plain;
		if (!inm[v] || g->tensors[t = g->nodes[v].out[0]]->layout ==
		    AOE_LAYOUT_8C)
			continue;
		plain = t < nt && isout[t];
		for (u = 0; u < nn && !plain; u++)
			for (j = 0; j < g->nodes[u].nin && !g->nodes[u].dead;
			    j++)
				if (g->nodes[u].in[j] == t &&
				    (!inm[u] || !layout_data_in(g,
				    &g->nodes[u], j)))
					plain = 1;
		any = 1;
		if (!plain) {
			g->tensors[t]->layout = AOE_LAYOUT_8C;
			continue;
		}
		tb = blocked_twin(g, t);
		g->nodes[v].out[0] = tb;
		for (u = 0; u < nn; u++)
			for (j = 0; inm[u] && j < g->nodes[u].nin; j++)
				if (g->nodes[u].in[j] == t)
					g->nodes[u].in[j] = tb;
		add_reorder(g, g->nodes[v].name, tb, t, 0);
	}
	/* Inputs: a plain tensor a blocked node reads gets a blocked twin. */
	for (i = 0; i < nt; i++)
		twin[i] = -1;
	for (v = 0; v < nn; v++)
		for (j = 0; inm[v] && j < g->nodes[v].nin; j++) {
			if (!layout_data_in(g, &g->nodes[v], j) ||
			    (t = g->nodes[v].in[j]) >= nt ||
			    g->tensors[t]->layout == AOE_LAYOUT_8C)
				continue;
			if (twin[t] < 0) {
				twin[t] = blocked_twin(g, t);
				add_reorder(g, g->tensors[t]->name, t, twin[t],
				    AOE_LAYOUT_8C);
			}
			g->nodes[v].in[j] = twin[t];
			any = 1;
		}
	free(inm);
	free(isout);
	free(twin);
	return any;
}

/*
 * A chain as a graph of its own: external non-constant inputs become
 * graph inputs, outputs read outside the chain (or the graph's) become
 * graph outputs, constants are copied.
 */
static int
copy_attr(aoe_attr *dst, const aoe_attr *a)
{
	int i;

	dst->i = a->i;
	dst->f = a->f;
	dst->n = a->n;
	if (a->s)
		dst->s = aoe_xstrdup(a->s);
	if (a->ints) {
		dst->ints = aoe_xcalloc((size_t)a->n + 1, sizeof(int64_t));
		memcpy(dst->ints, a->ints, (size_t)a->n * sizeof(int64_t));
	}
	if (a->floats) {
		dst->floats = aoe_xcalloc((size_t)a->n + 1, sizeof(float));
		memcpy(dst->floats, a->floats, (size_t)a->n * sizeof(float));
	}
	if (a->strings) {
		dst->strings = aoe_xcalloc((size_t)a->n + 1, sizeof(char *));
		for (i = 0; i < a->n; i++)
			dst->strings[i] = aoe_xstrdup(a->strings[i]);
	}
	if (a->t)
		return aoe_err(AOE_EUNSUP, "attribute '%s': tensor attributes "
		    "are not copied", a->name);
	return 0;
}

static int
map_tensor(aoe_graph *s, const aoe_tensor *t, int *map, int ti)
{
	aoe_tensor *c;
	int i;

	if (map[ti] >= 0)
		return map[ti];
	i = aoe_graph_tensor(s, t->name);
	c = s->tensors[i];
	aoe_tensor_set(c, t->dtype, t->ndim, t->dims);
	if (t->kind == AOE_T_CONST) {
		if (aoe_tensor_alloc_const(c) < 0)
			return -1;
		if (t->data)
			memcpy(c->data, t->data, aoe_tensor_nbytes(t));
	}
	map[ti] = i;
	return i;
}

int
aoe_sgat_extract(const aoe_graph *g, const int *nodes, int n,
    aoe_graph **subp)
{
	aoe_graph *s;
	int *map, *in, *out, *ncons, i, j, k, rc = 0;
	char *mine;

	s = aoe_graph_new(g->name);
	s->opset = g->opset;
	map = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	ncons = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(int));
	mine = aoe_xcalloc((size_t)g->nnodes + 1, 1);
	for (i = 0; i < g->ntensors; i++)
		map[i] = -1;
	for (k = 0; k < n; k++)
		mine[nodes[k]] = 1;
	for (i = 0; i < g->norder; i++) {
		const aoe_node *nd = &g->nodes[g->order[i]];
		if (nd->dead || mine[g->order[i]])
			continue;
		for (j = 0; j < nd->nin; j++)
			if (nd->in[j] >= 0)
				ncons[nd->in[j]]++;
	}
	for (i = 0; i < g->noutputs; i++)
		ncons[g->outputs[i]]++;
	for (k = 0; k < n && rc == 0; k++) {
		const aoe_node *nd = &g->nodes[nodes[k]];
		aoe_node *c;
		int ni;
		in = aoe_xcalloc((size_t)nd->nin + 1, sizeof(int));
		out = aoe_xcalloc((size_t)nd->nout + 1, sizeof(int));
		for (j = 0; j < nd->nin; j++) {
			const aoe_tensor *t = aoe_in(g, nd, j);
			in[j] = -1;
			if (t == NULL)
				continue;
			if (map[nd->in[j]] < 0 && t->kind != AOE_T_CONST) {
				in[j] = map_tensor(s, t, map, nd->in[j]);
				s->tensors[in[j]]->kind = AOE_T_INPUT;
				s->inputs = aoe_xrealloc(s->inputs,
				    (size_t)(s->ninputs + 1) * sizeof(int));
				s->inputs[s->ninputs++] = in[j];
			} else
				in[j] = map_tensor(s, t, map, nd->in[j]);
			if (in[j] < 0)
				rc = aoe_err(AOE_ENOMEM, "out of memory");
		}
		for (j = 0; j < nd->nout; j++) {
			const aoe_tensor *t = aoe_out(g, nd, j);
			out[j] = t ? map_tensor(s, t, map, nd->out[j]) : -1;
			if (t && ncons[nd->out[j]]) {
				s->outputs = aoe_xrealloc(s->outputs,
				    (size_t)(s->noutputs + 1) * sizeof(int));
				s->outputs[s->noutputs++] = out[j];
			}
		}
		ni = aoe_graph_add_node(s, nd->name, nd->op_type, nd->nin, in,
		    nd->nout, out);
		c = &s->nodes[ni];
		if (nd->domain)
			c->domain = aoe_xstrdup(nd->domain);
		for (j = 0; j < nd->nattr && rc == 0; j++)
			rc = copy_attr(aoe_node_add_attr(c, nd->attrs[j].name,
			    nd->attrs[j].type), &nd->attrs[j]);
		free(in);
		free(out);
	}
	if (rc == 0 && s->noutputs == 0)
		rc = aoe_err(AOE_EDATA, "subgraph has no outputs");
	free(map);
	free(ncons);
	free(mine);
	if (rc < 0) {
		aoe_graph_free(s);
		return rc;
	}
	*subp = s;
	return 0;
}
