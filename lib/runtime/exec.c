/*
 * exec.c - the executor: support check, order, shape inference, constant
 * folding, the memory plan, and running a prepared graph.  What a run
 * prepares on top of this (passes, bank schedules) is lib/engine's.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

#define ALIGN 64

static size_t
align_up(size_t n)
{
	return (n + ALIGN - 1) & ~(size_t)(ALIGN - 1);
}

void
aoe_run_opts_init(aoe_run_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->nthreads = aoe_nthreads(0);
	o->static_memory = aoe_env_true("GE_USE_STATIC_MEMORY");
	o->profile = aoe_env_true("PROFILING_MODE");
	o->use_bank = 1;
}

static int
node_supported(const aoe_node *n)
{
	return n->domain == NULL && aoe_rt_op_find(n->op_type) != NULL;
}

/* Append the op type of n to *list, unless it is there already. */
static void
list_add(char **list, size_t *len, const aoe_node *n)
{
	char item[256];
	const char *p;
	size_t il;

	snprintf(item, sizeof(item), "%s%s%s", n->domain ? n->domain : "",
	    n->domain ? "." : "", n->op_type);
	il = strlen(item);
	for (p = *list; p && (p = strstr(p, item)) != NULL; p += il)
		if ((p == *list || p[-1] == ' ') && (p[il] == ',' ||
		    p[il] == '\0'))
			return;
	*list = aoe_xrealloc(*list, *len + il + 3);
	*len += sprintf(*list + *len, "%s%s", *len ? ", " : "", item);
}

/* The unsupported op types of g and of its subgraphs, into *list. */
static void
unsupported(const aoe_graph *g, char **list, size_t *len)
{
	int i, j;

	for (i = 0; i < g->nnodes; i++) {
		const aoe_node *n = &g->nodes[i];
		if (!node_supported(n))
			list_add(list, len, n);
		for (j = 0; j < n->nattr; j++)
			if (n->attrs[j].type == AOE_A_GRAPH && n->attrs[j].g)
				unsupported(n->attrs[j].g, list, len);
	}
}

char *
aoe_graph_unsupported(const aoe_graph *g)
{
	char *list = NULL;
	size_t len = 0;

	unsupported(g, &list, &len);
	return list;
}

/*
 * Order the nodes so that each runs after the producers of its inputs
 * (Kahn's algorithm), and check that every input has a source.
 */
static int
topo_order(aoe_graph *g)
{
	int *indeg, *queue, *consumers_n, **consumers, head = 0, tail = 0;
	int i, j, rc = 0;

	for (i = 0; i < g->ntensors; i++)
		g->tensors[i]->producer = -1;
	for (i = 0; i < g->nnodes; i++)
		for (j = 0; j < g->nodes[i].nout; j++) {
			aoe_tensor *t = aoe_out(g, &g->nodes[i], j);
			if (t == NULL)
				continue;
			if (t->producer >= 0 ||
			    (t->kind != AOE_T_VALUE && !t->folded))
				return aoe_err(AOE_EDATA, "tensor '%s' is "
				    "written by more than one node or is also "
				    "an input or initializer", t->name);
			t->producer = i;
		}
	indeg = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	queue = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	consumers_n = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	consumers = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int *));
	for (i = 0; i < g->nnodes; i++) {
		aoe_node *n = &g->nodes[i];
		for (j = 0; j < n->nin; j++) {
			aoe_tensor *t = aoe_in(g, n, j);
			if (t == NULL || t->kind != AOE_T_VALUE)
				continue;
			if (t->producer < 0) {
				rc = aoe_err(AOE_EDATA, "input '%s' of node "
				    "'%s' is not produced by any node, input "
				    "or initializer", t->name, n->name);
				goto out;
			}
			indeg[i]++;
			consumers[t->producer] = aoe_xrealloc(
			    consumers[t->producer],
			    (size_t)(consumers_n[t->producer] + 1) *
			    sizeof(int));
			consumers[t->producer][consumers_n[t->producer]++] = i;
		}
	}
	for (i = 0; i < g->nnodes; i++)
		if (indeg[i] == 0)
			queue[tail++] = i;
	free(g->order);
	g->order = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(int));
	g->norder = 0;
	while (head < tail) {
		int v = queue[head++];
		g->order[g->norder++] = v;
		for (j = 0; j < consumers_n[v]; j++)
			if (--indeg[consumers[v][j]] == 0)
				queue[tail++] = consumers[v][j];
	}
	if (g->norder != g->nnodes)
		rc = aoe_err(AOE_EDATA, "the graph has a cycle");
	for (i = 0; i < g->noutputs; i++) {
		aoe_tensor *t = g->tensors[g->outputs[i]];
		if (t->kind == AOE_T_VALUE && t->producer < 0)
			rc = aoe_err(AOE_EDATA, "output '%s' is not produced "
			    "by any node", t->name);
	}
out:
	for (i = 0; i < g->nnodes; i++)
		free(consumers[i]);
	free(consumers);
	free(consumers_n);
	free(indeg);
	free(queue);
	return rc;
}

int
aoe_graph_check_inputs(const aoe_graph *g)
{
	char buf[256];
	int i, d;

	for (i = 0; i < g->ninputs; i++) {
		const aoe_tensor *t = g->tensors[g->inputs[i]];
		if (aoe_dtype_size(t->dtype) == 0)
			return aoe_err(AOE_EUNSUP, "input '%s' has unsupported "
			    "type %s", t->name, aoe_dtype_name(t->dtype));
		/* A sequence's elements are sized when it is given. */
		if (t->vkind == AOE_V_SEQ)
			continue;
		for (d = 0; d < t->ndim; d++)
			if (t->dims[d] < 0)
				return aoe_err(AOE_EDATA, "input '%s' has a "
				    "dynamic shape %s: bind it with "
				    "--input-shape %s:d0,d1,... (%d dims)",
				    t->name, aoe_shape_str(t, buf,
				    sizeof(buf)), t->name, t->ndim);
		if (aoe_tensor_numel(t) == -2 ||
		    (aoe_tensor_numel(t) > 0 && aoe_tensor_nbytes(t) == 0))
			return aoe_err(AOE_ENOMEM, "input '%s' is too large "
			    "(%s)", t->name, aoe_shape_str(t, buf,
			    sizeof(buf)));
	}
	return 0;
}

/*
 * Whether a node can be computed at load time: its inputs are constants,
 * or it reads only its input's shape, which is static once bound.
 */
static int
foldable(const aoe_graph *g, const aoe_node *n)
{
	int j;

	/* Sequences and optionals exist only in a run. */
	for (j = 0; j < n->nin; j++)
		if (aoe_is_value(aoe_in(g, n, j)))
			return 0;
	for (j = 0; j < n->nout; j++)
		if (aoe_is_value(aoe_out(g, n, j)))
			return 0;
	if (n->dyn)
		return 0;
	if ((strcmp(n->op_type, "Shape") == 0 ||
	    strcmp(n->op_type, "Size") == 0) && !aoe_in(g, n, 0)->dynamic)
		return 1;
	/* Random values without a seed differ at each run. */
	if ((strncmp(n->op_type, "Random", 6) == 0 ||
	    strcmp(n->op_type, "Bernoulli") == 0 ||
	    strcmp(n->op_type, "Multinomial") == 0) &&
	    aoe_attr_find(n, "seed") == NULL)
		return 0;

	for (j = 0; j < n->nin; j++) {
		const aoe_tensor *t = aoe_in(g, n, j);
		if (t && t->kind != AOE_T_CONST)
			return 0;
	}
	return 1;
}

/* Run a node whose inputs are all constants now, making its outputs so. */
static int
fold(aoe_graph *g, aoe_node *n)
{
	aoe_kctx k;
	void *scratch = NULL;
	int j, rc;

	/* A dynamic output gets its bytes from the kernel, when it runs. */
	for (j = 0; j < n->nout; j++) {
		aoe_tensor *t = aoe_out(g, n, j);
		if (t && !t->dynamic && (rc = aoe_tensor_alloc_const(t)) < 0)
			return rc;
	}
	if (n->op->prepare && (rc = n->op->prepare(g, n)) < 0)
		return rc;
	if (n->scratch && posix_memalign(&scratch, ALIGN,
	    align_up(n->scratch)) != 0)
		return aoe_err(AOE_ENOMEM, "out of memory");
	memset(&k, 0, sizeof(k));
	k.g = g;
	k.n = n;
	k.nthreads = 1;
	k.sched = &n->sched;
	k.scratch = scratch;
	rc = n->op->run(&k);
	free(scratch);
	aoe_node_unprepare(n);
	if (rc < 0)
		return rc;
	for (j = 0; j < n->nout; j++) {
		aoe_tensor *t = aoe_out(g, n, j);
		if (t == NULL)
			continue;
		if (t->dynamic && (t->data == NULL || !t->owned))
			return aoe_err(AOE_EINTERNAL, "%s '%s': output '%s' "
			    "was not sized", n->op_type, n->name, t->name);
		t->dynamic = 0;
		t->kind = AOE_T_CONST;
		t->folded = 1;
	}
	n->dead = 1;
	return 0;
}

/*
 * Before n's inference: a sequence or an optional goes only to an
 * operator that takes them (aoe_op_takes_values); every input has a
 * shape, unless it is a sequence (whose elements may differ) or its
 * shape is known only at run time.
 */
static int
check_values(const aoe_graph *g, const aoe_node *n)
{
	int j;

	for (j = 0; j < n->nin; j++) {
		aoe_tensor *t = aoe_in(g, n, j);
		if (t == NULL)
			continue;
		if (aoe_is_value(t) && !aoe_op_takes_values(n->op))
			return aoe_err(AOE_EDATA, "%s '%s': input '%s' is %s, "
			    "not a tensor", n->op_type, n->name, t->name,
			    t->optional ? "an optional" : "a sequence");
		if (t->ndim < 0 && t->vkind == AOE_V_TENSOR && !t->dynamic)
			return aoe_err(AOE_EINTERNAL, "%s '%s': input '%s' "
			    "has no shape", n->op_type, n->name, t->name);
	}
	return 0;
}

/*
 * Shapes known only at run time.  An operator whose output size depends
 * on the data (NonZero, Unique, TopK with a run-time k, a Loop's scan
 * outputs) marks that output dynamic when it infers
 * (aoe_set_output_dyn), and its kernel sizes it when it runs
 * (aoe_tensor_resize).  A node that reads a dynamic tensor is itself
 * dynamic (n->dyn): infer_all leaves its outputs dynamic and of unknown
 * shape, and each run infers its shapes, sizes its outputs, picks the
 * default schedule and prepares its kernel just before running it
 * (run_dyn).  Dynamic tensors live in heap buffers of their own, which
 * grow as needed and are kept from run to run; the memory plan leaves
 * them out and keeps placing every static tensor in the arena, so a
 * graph pays for run-time shapes only where they are.  A dynamic node
 * has no static signature, so no bank entry applies to it.
 */
static void
mark_dyn(aoe_graph *g, aoe_node *n)
{
	int j;

	n->dyn = 0;
	for (j = 0; j < n->nin; j++) {
		aoe_tensor *t = aoe_in(g, n, j);
		if (t && t->dynamic && t->kind != AOE_T_CONST)
			n->dyn = 1;
	}
	/*
	 * The operators of sequences read their inputs' shapes when they
	 * run, and give what they make its own shape (lib/kernels/k_seq.c).
	 */
	if (aoe_op_seq(n->op))
		n->dyn = 0;
	for (j = 0; j < n->nout && n->dyn; j++) {
		aoe_tensor *t = aoe_out(g, n, j);
		if (t)
			t->dynamic = 1;
	}
}

/* Infer, size and prepare dynamic node n for this run's shapes. */
static int
run_dyn(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *t;
	void *p;
	int j, rc;

	n->scratch = 0;
	if ((rc = n->op->infer(g, n)) < 0)
		return rc;
	for (j = 0; j < n->nout; j++) {
		if ((t = aoe_out(g, n, j)) == NULL)
			continue;
		t->dynamic = 1;
		if (aoe_tensor_numel(t) >= 0 && (rc = aoe_tensor_resize(t,
		    t->dtype, t->ndim, t->dims)) < 0)
			return rc;
	}
	if (n->scratch > g->scratch_size) {
		if (posix_memalign(&p, ALIGN, align_up(n->scratch)) != 0)
			return aoe_err(AOE_ENOMEM, "%s '%s': cannot allocate "
			    "%zu bytes of workspace", n->op_type, n->name,
			    n->scratch);
		free(g->scratch);
		g->scratch = p;
		g->scratch_size = align_up(n->scratch);
	}
	memset(&n->sched, 0, sizeof(n->sched));
	if (n->op->default_sched)
		n->op->default_sched(g, n, &n->sched);
	return aoe_node_prepare(g, n);
}

/*
 * Infer shapes in order, folding nodes whose inputs are all constant.
 * Returns 1 with *inl set to an If node whose condition is now a
 * constant, for the caller to inline its branch and start again.
 */
static int
infer_all(aoe_graph *g, int *inl)
{
	char msg[1024];
	int i, j, rc;

	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		n->op = aoe_rt_op_find(n->op_type);
		n->dead = 0;
		n->scratch = 0;
		for (j = 0; j < n->nout; j++) {
			aoe_tensor *t = aoe_out(g, n, j);
			if (t && t->kind == AOE_T_VALUE)
				t->dynamic = 0;
		}
		if ((rc = check_values(g, n)) < 0)
			return rc;
		mark_dyn(g, n);
		if (n->dyn)
			continue;
		if ((rc = n->op->infer(g, n)) < 0) {
			/*
			 * In a subgraph, a shape that hangs on a value (a
			 * Slice by the iteration number) is found when the
			 * node runs: it becomes dynamic.  At the top, the
			 * value must be bound as a constant.
			 */
			if (g->parent == NULL || rc != -AOE_EUNSUP ||
			    strstr(aoe_errmsg(), "must be a constant") == NULL)
				return rc;
			n->dyn = 1;
			for (j = 0; j < n->nout; j++) {
				aoe_tensor *t = aoe_out(g, n, j);
				if (t) {
					t->dynamic = 1;
					t->ndim = -1;
				}
			}
			continue;
		}
		if (rc > 0) {
			*inl = g->order[i];
			return 1;
		}
		for (j = 0; j < n->nout; j++) {
			aoe_tensor *t = aoe_out(g, n, j);
			if (t && t->ndim < 0 && t->vkind == AOE_V_TENSOR &&
			    !t->dynamic)
				return aoe_err(AOE_EINTERNAL, "%s '%s': "
				    "output '%s' has no shape after inference",
				    n->op_type, n->name, t->name);
		}
		if (foldable(g, n)) {
			memset(&n->sched, 0, sizeof(n->sched));
			if (n->op->default_sched)
				n->op->default_sched(g, n, &n->sched);
			if ((rc = fold(g, n)) < 0) {
				snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
				return aoe_err(-rc, "folding %s '%s': %s",
				    n->op_type, n->name, msg);
			}
		}
	}
	return 0;
}

/* Mark nodes that no graph output depends on as dead. */
static void
prune(aoe_graph *g)
{
	char *need = aoe_xcalloc((size_t)g->ntensors + 1, 1);
	int i, j, k, live;

	for (i = 0; i < g->noutputs; i++)
		need[g->outputs[i]] = 1;
	for (i = g->norder - 1; i >= 0; i--) {
		aoe_node *n = &g->nodes[g->order[i]];
		if (n->dead)
			continue;
		for (live = 0, j = 0; j < n->nout; j++)
			if (n->out[j] >= 0 && need[n->out[j]])
				live = 1;
		if (!live) {
			n->dead = 1;
			continue;
		}
		for (k = 0; k < n->nin; k++)
			if (n->in[k] >= 0)
				need[n->in[k]] = 1;
	}
	free(need);
}

/*
 * Whether n may write its output over its input 0: an element-wise float
 * op whose input 0 has the output's shape, or a copy that only renames
 * the shape.
 */
int
aoe_node_inplace_ok(const aoe_graph *g, const aoe_node *n)
{
	static const char *const unary[] = { "Relu", "LeakyRelu", "Sigmoid",
	    "HardSigmoid", "HardSwish", "Tanh", "Erf", "Neg", "Abs", "Elu",
	    "Selu", "Celu", "Softplus", "Softsign", "Clip", "Sqrt", "Exp",
	    "Log", "Reciprocal", "Floor", "Ceil", "Round", "Sin", "Cos" };
	static const char *const binary[] = { "Add", "Sub", "Mul", "Div",
	    "Max", "Min" };
	static const char *const copies[] = { "Identity", "Reshape",
	    "Flatten", "Squeeze", "Unsqueeze" };
	const aoe_tensor *x = aoe_in(g, n, 0), *y = aoe_out(g, n, 0);

	if (n->domain || n->nout != 1 || x == NULL || y == NULL ||
	    x->dtype != y->dtype || x->layout != y->layout ||
	    aoe_tensor_nbytes(x) != aoe_tensor_nbytes(y) ||
	    aoe_tensor_nbytes(y) == 0)
		return 0;
	if (aoe_str_in(n->op_type, copies, sizeof(copies) / sizeof(copies[0])))
		return 1;
	if (x->dtype != AOE_F32 || !aoe_same_shape(x, y))
		return 0;
	return aoe_str_in(n->op_type, unary, sizeof(unary) / sizeof(unary[0])) ||
	    (n->nin == 2 && aoe_str_in(n->op_type, binary, sizeof(binary) /
	    sizeof(binary[0])));
}

/*
 * The memory plan of a graph: for each tensor, the first and last step
 * (position in the order) that it is live, the tensor whose bytes it
 * shares (root; itself unless it runs in place), and its size; the
 * tensors to place, largest first; the arena and workspace sizes.
 * first is -2 for a tensor no live step touches, -1 for an input.
 */
typedef struct plan {
	int *first, *last, *byte_order, *root;
	int64_t *sz, *delta;	/* delta: bytes into the root's */
	int nt;
	size_t arena, scratch;
} plan;

/* Compact the order to the live nodes and find every lifetime. */
static void
plan_lifetimes(aoe_graph *g, plan *p)
{
	int i, j, k, pos, end;

	for (i = 0; i < g->ntensors; i++) {
		p->root[i] = i;
		p->delta[i] = 0;
		p->first[i] = p->last[i] = -2;
		g->tensors[i]->offset = -1;
	}
	for (k = 0, i = 0; i < g->norder; i++)
		if (!g->nodes[g->order[i]].dead)
			g->order[k++] = g->order[i];
	g->norder = k;
	end = g->norder;
	for (i = 0; i < g->ninputs; i++) {
		p->first[g->inputs[i]] = -1;
		p->last[g->inputs[i]] = end;
	}
	for (pos = 0; pos < g->norder; pos++) {
		aoe_node *n = &g->nodes[g->order[pos]];
		for (j = 0; j < n->nout; j++)
			if (n->out[j] >= 0 &&
			    g->tensors[n->out[j]]->kind == AOE_T_VALUE) {
				p->first[n->out[j]] = pos;
				if (p->last[n->out[j]] < pos)
					p->last[n->out[j]] = pos;
			}
		for (j = 0; j < n->nin; j++)
			if (n->in[j] >= 0 && p->first[n->in[j]] != -2 &&
			    pos > p->last[n->in[j]])
				p->last[n->in[j]] = pos;
		if (n->scratch > p->scratch)
			p->scratch = n->scratch;
	}
	for (i = 0; i < g->noutputs; i++)
		if (p->first[g->outputs[i]] != -2)
			p->last[g->outputs[i]] = end;
}

/*
 * A node marked _aoe_inplace (a subgraph's decision inplace=1) writes
 * over its input 0 when every tensor in that input's slot is read for
 * the last time there: the output joins the slot (root), whose lifetime
 * grows to cover it.
 */
static void
plan_inplace(aoe_graph *g, plan *p)
{
	int pos, x, y, r;

	for (pos = 0; pos < g->norder; pos++) {
		aoe_node *n = &g->nodes[g->order[pos]];
		x = n->nin > 0 ? n->in[0] : -1;
		if (x < 0 || n->nout != 1 || (y = n->out[0]) < 0 ||
		    aoe_attr_find(n, "_aoe_inplace") == NULL ||
		    g->tensors[x]->kind != AOE_T_VALUE || p->first[x] < 0 ||
		    g->tensors[x]->dynamic || g->tensors[y]->dynamic ||
		    p->last[r = p->root[x]] != pos || p->first[y] != pos ||
		    g->tensors[y]->kind != AOE_T_VALUE ||
		    !aoe_node_inplace_ok(g, n))
			continue;
		p->root[y] = r;
		if (p->last[y] > p->last[r])
			p->last[r] = p->last[y];
	}
}

/*
 * A Concat whose inputs are each a contiguous slice of its output (every
 * dimension before the axis is 1, as on a batch of one along the
 * channels) need not copy: each input that is written once, read last
 * by the Concat, and is neither a graph input nor output is placed
 * inside the output at its slice (root the output, delta its byte
 * offset), so that its producer writes it there, and the output's
 * lifetime starts with the first such producer.  concat_run then finds
 * the input in place and skips it.  Only plain (not blocked) float32
 * tensors, and only slices that start at a multiple of ALIGN bytes, so
 * that every tensor keeps the alignment a placement of its own gives.
 */
static void
plan_concat(aoe_graph *g, plan *p)
{
	int pos, i, j, k, ax, y, x;

	for (pos = 0; pos < g->norder; pos++) {
		aoe_node *n = &g->nodes[g->order[pos]];
		const aoe_tensor *ty;
		int64_t off = 0, inner;

		if (n->domain || strcmp(n->op_type, "Concat") != 0 ||
		    n->nout != 1 || (y = n->out[0]) < 0)
			continue;
		ty = g->tensors[y];
		if (ty->kind != AOE_T_VALUE || ty->dynamic ||
		    ty->vkind == AOE_V_SEQ || ty->layout != 0 ||
		    ty->dtype != AOE_F32 || p->root[y] != y ||
		    p->first[y] != pos || (ax = aoe_axis(aoe_attr_int(n,
		    "axis", 1), ty->ndim)) < 0)
			continue;
		for (k = 0; k < ax; k++)
			if (ty->dims[k] != 1)
				break;
		if (k < ax)
			continue;
		for (inner = sizeof(float), k = ax + 1; k < ty->ndim; k++)
			inner *= ty->dims[k];
		for (i = 0; i < n->nin; off += g->tensors[x]->dims[ax] * inner,
		    i++) {
			const aoe_tensor *tx;
			int r;

			if ((x = n->in[i]) < 0)
				break;
			tx = g->tensors[x];
			for (j = 0; j < i; j++)
				if (n->in[j] == x)
					break;
			if (j < i || tx->kind != AOE_T_VALUE || tx->dynamic ||
			    tx->vkind == AOE_V_SEQ || tx->layout != 0 ||
			    tx->dtype != AOE_F32 || p->first[x] < 0 ||
			    p->last[x] != pos || off % ALIGN != 0)
				continue;
			/* Nothing may share x's bytes already. */
			for (r = 0; r < g->ntensors; r++)
				if (p->root[r] == x && r != x)
					break;
			if (r < g->ntensors || p->root[x] != x)
				continue;
			p->root[x] = y;
			p->delta[x] = off;
			if (p->first[x] < p->first[y])
				p->first[y] = p->first[x];
		}
	}
}

/*
 * Offsets in one arena, largest tensor first: each at the first place
 * free of every placed tensor whose lifetime overlaps its own; or one
 * after another (static memory).
 */
static void
plan_place(aoe_graph *g, plan *p, int static_memory)
{
	int i, j;

	for (i = 0; i < g->ntensors; i++) {
		/*
		 * A sequence's elements and a tensor sized at run time have
		 * their own bytes, not the arena's.
		 */
		if (p->first[i] == -2 || g->tensors[i]->kind == AOE_T_CONST ||
		    g->tensors[i]->dynamic || p->root[i] != i ||
		    g->tensors[i]->vkind == AOE_V_SEQ)
			continue;
		p->sz[i] = (int64_t)align_up(aoe_tensor_nbytes(g->tensors[i]));
		if (p->sz[i] == 0)
			p->sz[i] = ALIGN;
		p->byte_order[p->nt++] = i;
	}
	/* Largest first (insertion sort keeps this dependency-free). */
	for (i = 1; i < p->nt; i++) {
		int v = p->byte_order[i];
		for (j = i - 1; j >= 0 && p->sz[p->byte_order[j]] < p->sz[v];
		    j--)
			p->byte_order[j + 1] = p->byte_order[j];
		p->byte_order[j + 1] = v;
	}
	for (i = 0; i < p->nt; i++) {
		int t = p->byte_order[i];
		int64_t off = 0;
		int moved = 1;

		if (static_memory) {
			g->tensors[t]->offset = (int64_t)p->arena;
			p->arena += (size_t)p->sz[t];
			continue;
		}
		/* Bump past every placed, overlapping neighbour until free. */
		while (moved) {
			moved = 0;
			for (j = 0; j < i; j++) {
				int u = p->byte_order[j];
				int64_t uo = g->tensors[u]->offset;
				if (p->last[u] < p->first[t] ||
				    p->last[t] < p->first[u])
					continue;
				if (off < uo + p->sz[u] && uo < off + p->sz[t]) {
					off = uo + p->sz[u];
					moved = 1;
				}
			}
		}
		g->tensors[t]->offset = off;
		if ((size_t)(off + p->sz[t]) > p->arena)
			p->arena = (size_t)(off + p->sz[t]);
	}
}

/* Allocate the arena and the workspace and point the tensors into it. */
static int
plan_bind(aoe_graph *g, const plan *p)
{
	int i;

	if (p->arena && posix_memalign(&g->arena, ALIGN, p->arena) != 0) {
		g->arena = NULL;
		return aoe_err(AOE_ENOMEM, "cannot allocate %zu bytes for "
		    "tensors", p->arena);
	}
	if (p->scratch && posix_memalign(&g->scratch, ALIGN,
	    align_up(p->scratch)) != 0) {
		g->scratch = NULL;
		return aoe_err(AOE_ENOMEM, "cannot allocate %zu bytes of "
		    "workspace", p->scratch);
	}
	if (p->arena)
		memset(g->arena, 0, p->arena);
	for (i = 0; i < p->nt; i++) {
		aoe_tensor *t = g->tensors[p->byte_order[i]];
		/* A buffer of its own from a run when it was dynamic. */
		if (t->owned)
			free(t->data);
		t->data = (char *)g->arena + t->offset;
		t->owned = 0;
		t->cap = 0;
	}
	for (i = 0; i < g->ntensors; i++)
		if (p->root[i] != i) {
			aoe_tensor *t = g->tensors[i];
			if (t->owned)
				free(t->data);
			t->cap = 0;
			t->offset = g->tensors[p->root[i]]->offset +
			    p->delta[i];
			t->data = (char *)g->arena + t->offset;
			t->owned = 0;
		}
	return 0;
}

/*
 * Give every non-constant tensor an offset in one arena.  Two tensors may
 * share bytes only when their lifetimes (from the step that writes one to
 * the last step that reads it) do not overlap, unless static memory is
 * asked for.  Placement is first fit, largest first.
 */
static int
plan_memory(aoe_graph *g, int static_memory, int plan_only)
{
	size_t nt = (size_t)g->ntensors + 1;
	plan p;
	int i, rc = 0;

	memset(&p, 0, sizeof(p));
	p.first = aoe_xcalloc(nt, sizeof(int));
	p.last = aoe_xcalloc(nt, sizeof(int));
	p.sz = aoe_xcalloc(nt, sizeof(int64_t));
	p.byte_order = aoe_xcalloc(nt, sizeof(int));
	p.root = aoe_xcalloc(nt, sizeof(int));
	p.delta = aoe_xcalloc(nt, sizeof(int64_t));
	plan_lifetimes(g, &p);
	if (!static_memory) {
		plan_inplace(g, &p);
		plan_concat(g, &p);
	}
	plan_place(g, &p, static_memory);
	free(g->arena);
	free(g->scratch);
	g->arena = g->scratch = NULL;
	g->arena_size = p.arena;
	g->scratch_size = p.scratch;
	if (plan_only) {
		/* Sizes only (aoe-check): no tensor gets bytes. */
		for (i = 0; i < g->ntensors; i++)
			if (p.first[i] != -2 && g->tensors[i]->kind !=
			    AOE_T_CONST && !g->tensors[i]->owned &&
			    !g->tensors[i]->dynamic)
				g->tensors[i]->data = NULL;
	} else
		rc = plan_bind(g, &p);
	free(p.root);
	free(p.delta);
	free(p.first);
	free(p.last);
	free(p.sz);
	free(p.byte_order);
	return rc;
}

int
aoe_graph_analyse(aoe_graph *g)
{
	char *unsup;
	int rc;

	g->prepared = 0;
	if ((unsup = aoe_graph_unsupported(g)) != NULL) {
		rc = aoe_err(AOE_EUNSUP, "unsupported operators: %s", unsup);
		free(unsup);
		return rc;
	}
	if ((rc = aoe_graph_check_inputs(g)) < 0)
		return rc;
	return aoe_graph_reinfer(g);
}

int
aoe_graph_reinfer(aoe_graph *g)
{
	static const aoe_ctl_steps steps = { aoe_graph_analyse,
	    aoe_graph_plan, aoe_graph_run, aoe_node_prepare,
	    aoe_run_opts_init };
	int rc, inl;

	aoe_ctl_init(&steps);
	g->prepared = 0;
	for (;;) {
		if ((rc = aoe_bind_scopes(g)) < 0 || (rc = topo_order(g)) < 0 ||
		    (rc = infer_all(g, &inl)) < 0)
			return rc;
		if (rc == 0)
			break;
		if ((rc = aoe_if_inline(g, inl)) < 0)
			return rc;
	}
	prune(g);
	return 0;
}

int
aoe_node_prepare(aoe_graph *g, aoe_node *n)
{
	/* A graph may be prepared again, e.g. with new schedules. */
	aoe_node_unprepare(n);
	if (n->op->prepare)
		return n->op->prepare(g, n);
	return 0;
}

int
aoe_graph_plan(aoe_graph *g, const aoe_run_opts *o)
{
	int rc;

	if ((rc = plan_memory(g, o->static_memory, o->plan_only)) < 0)
		return rc;
	g->prepared = !o->plan_only;
	return 0;
}

int
aoe_graph_run(aoe_graph *g, const aoe_run_opts *o)
{
	static int prof_min = -1;
	aoe_kctx k;
	int i, rc, nthreads = o->nthreads;
	double t0 = 0;

	if (!g->prepared)
		return aoe_err(AOE_EINTERNAL, "graph is not prepared");
	nthreads = aoe_nthreads(nthreads);
	for (i = 0; i < g->norder; i++) {
		aoe_node *n = &g->nodes[g->order[i]];
		k.g = g;
		k.n = n;
		k.nthreads = aoe_node_threads(n, nthreads);
		k.sched = &n->sched;
		k.rt = o;
		if (o->profile)
			t0 = aoe_now_us();
		if (n->dyn && (rc = run_dyn(g, n)) < 0)
			return rc;
		k.scratch = g->scratch;
		if ((rc = n->op->run(&k)) < 0)
			return rc;
		if (o->profile) {
			double d = aoe_now_us() - t0;
			/*
			 * AOE_PROF_MIN keeps each node's fastest run instead
			 * of the mean: on a loaded machine the minimum is
			 * the figure that preemptions spoil least.
			 */
			if (prof_min < 0)
				prof_min = aoe_env_true("AOE_PROF_MIN");
			if (prof_min && n->prof_runs > 0) {
				if (d < n->prof_us)
					n->prof_us = d;
			} else {
				n->prof_us += d;
				n->prof_runs++;
			}
			n->prof_threads = k.nthreads;
		}
	}
	return 0;
}

int
aoe_node_threads(const aoe_node *n, int session)
{
	int t = n->nthreads > 0 ? n->nthreads : session;
	int64_t knob = aoe_sched_get(&n->sched, "nthreads", 0);

	if (knob > 0 && knob < t)
		t = (int)knob;
	return t > 0 ? t : 1;
}

void
aoe_profile_print(const aoe_graph *g, FILE *fp)
{
	char buf[128];
	double total = 0;
	int i;

	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		if (n->prof_runs)
			total += n->prof_us / n->prof_runs;
	}
	fprintf(fp, "%-40s %-20s %-20s %10s %6s %7s\n", "node", "op_type",
	    "output", "time_us", "share", "threads");
	for (i = 0; i < g->norder; i++) {
		const aoe_node *n = &g->nodes[g->order[i]];
		const aoe_tensor *t = aoe_out(g, n, 0);
		double us = n->prof_runs ? n->prof_us / n->prof_runs : 0;
		fprintf(fp, "%-40s %-20s %-20s %10.1f %5.1f%% %7d\n", n->name,
		    n->op_type, t ? aoe_shape_str(t, buf, sizeof(buf)) : "-",
		    us, total > 0 ? 100 * us / total : 0, n->prof_threads);
	}
	fprintf(fp, "%-40s %-20s %-20s %10.1f %5.1f%%\n", "total", "", "",
	    total, 100.0);
}
