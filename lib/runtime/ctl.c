/*
 * ctl.c - control flow: If, Loop, Scan and SequenceMap, the operators
 * whose attributes are graphs.  They live in the runtime, not among the
 * kernels, because they prepare and run graphs.
 *
 * Scopes.  A subgraph reads the values of the graphs around it by name.
 * aoe_bind_scopes() finds those names (each subgraph's "outer" tensors),
 * resolves them in the enclosing graph (creating them there, in turn, when
 * that graph is itself a subgraph that does not define them), and appends
 * them to the node's inputs as implicit inputs (aoe_node.nimplicit), so
 * that ordering, pruning, the fusion passes and the memory plan all see
 * the reads.  A name that no enclosing graph defines is an error naming
 * the node.  When the node's shapes are inferred, each outer tensor takes
 * its source's type and shape, and a constant source's data, so that a
 * subgraph folds what depends on constants only; at run time it points at
 * its source's data.
 *
 * If.  An If whose condition is a constant once shapes and constant
 * inputs are bound (infer returns 1) is replaced at prepare time by the
 * nodes of the branch it takes (aoe_if_inline), which join the parent
 * graph: folding, fusion, the operator bank and the memory plan treat
 * them as any other node.  Otherwise both branches are analysed when the
 * If is, prepared with the bank by lib/engine/prepare.c, and the run
 * executes one of them and copies its outputs.  An output whose branches
 * disagree on its shape is dynamic (sized at run time, see exec.c).
 *
 * Loop and Scan run their body once an iteration: the carried values go
 * from the body's outputs to its inputs, scan outputs are gathered and
 * concatenated (a Loop's scan outputs are dynamic: their length is the
 * iteration count).  A body prepared by the engine (the bank applied) is
 * run as it is while the shapes it was prepared for hold; when they
 * change (a carried value that grows, a node whose inputs are dynamic),
 * the runtime prepares it again by itself, with default schedules.
 *
 * Values cross between a graph and a subgraph through copy_value(), the
 * one place that knows what a value is (a tensor: type, shape, bytes);
 * another kind of value (a sequence) is added there.
 *
 * A Loop with neither a trip count nor a condition input is refused:
 * the ONNX specification ignores the body's condition output in that
 * case, so nothing could end it.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "runtime.h"

static const aoe_op ctl_ops[];

/*
 * The executor's steps that preparing and running a subgraph takes.
 * exec.c calls this file, so this file cannot call exec.c back (no cycle
 * between files: make check-layers); exec.c hands them over instead.
 */
static const aoe_ctl_steps *rt;

void
aoe_ctl_init(const aoe_ctl_steps *steps)
{
	rt = steps;
}

const aoe_op *
aoe_rt_op_find(const char *op_type)
{
	const aoe_op *o;

	for (o = ctl_ops; o->op_type != NULL; o++)
		if (strcmp(o->op_type, op_type) == 0)
			return o;
	return aoe_op_find(op_type);
}

/*
 * Scopes.
 */

/* Whether v is one of l[0..n). */
static int
in_list(const int *l, int n, int v)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i] == v)
			return 1;
	return 0;
}

static int
graph_is_outer(const aoe_graph *b, int ti)
{
	return in_list(b->outer, b->nouter, ti);
}

/* Add tensor ti of b to its outer tensors, unless it is one already. */
static void
add_outer(aoe_graph *b, int ti)
{
	if (graph_is_outer(b, ti))
		return;
	b->outer = aoe_xrealloc(b->outer, (size_t)(b->nouter + 1) *
	    sizeof(int));
	b->outer_src = aoe_xrealloc(b->outer_src, (size_t)(b->nouter + 1) *
	    sizeof(aoe_tensor *));
	b->outer[b->nouter] = ti;
	b->outer_src[b->nouter++] = NULL;
}

/*
 * Find the names b reads and does not define: neither its inputs, nor
 * its constants, nor a node's outputs.
 */
static void
find_outer(aoe_graph *b)
{
	char *made = aoe_xcalloc((size_t)b->ntensors + 1, 1);
	int i, j, ti;

	for (i = 0; i < b->nnodes; i++)
		for (j = 0; j < b->nodes[i].nout; j++)
			if (b->nodes[i].out[j] >= 0)
				made[b->nodes[i].out[j]] = 1;
	for (i = 0; i < b->nnodes + 1; i++) {
		const int *list = i < b->nnodes ? b->nodes[i].in : b->outputs;
		int cnt = i < b->nnodes ? b->nodes[i].nin : b->noutputs;
		for (j = 0; j < cnt; j++) {
			if ((ti = list[j]) < 0 || made[ti] ||
			    in_list(b->inputs, b->ninputs, ti))
				continue;
			if (b->tensors[ti]->kind == AOE_T_VALUE ||
			    graph_is_outer(b, ti))
				add_outer(b, ti);
		}
	}
	free(made);
}

/* Append tensor ti to n's implicit inputs, unless it is there already. */
static void
add_implicit(aoe_node *n, int ti)
{
	int j;

	for (j = n->nin - n->nimplicit; j < n->nin; j++)
		if (n->in[j] == ti)
			return;
	n->in = aoe_xrealloc(n->in, (size_t)(n->nin + 2) * sizeof(int));
	n->in[n->nin++] = ti;
	n->nimplicit++;
}

int
aoe_bind_scopes(aoe_graph *g)
{
	int i, j, k, rc, ti;

	for (i = 0; i < g->nnodes; i++) {
		aoe_node *n = &g->nodes[i];
		n->nin -= n->nimplicit;
		n->nimplicit = 0;
		for (j = 0; j < n->nattr; j++) {
			aoe_graph *b = n->attrs[j].g;
			if (n->attrs[j].type != AOE_A_GRAPH || b == NULL)
				continue;
			b->parent = g;
			if ((rc = aoe_bind_scopes(b)) < 0)
				return rc;
			find_outer(b);
			for (k = 0; k < b->nouter; k++) {
				const char *name = b->tensors[b->outer[k]]->name;
				if ((ti = aoe_graph_find(g, name)) < 0) {
					if (g->parent == NULL)
						return aoe_err(AOE_EDATA, "%s "
						    "'%s': subgraph '%s' reads "
						    "'%s', which no enclosing "
						    "graph defines", n->op_type,
						    n->name, n->attrs[j].name,
						    name);
					ti = aoe_graph_tensor(g, name);
				}
				b->outer_src[k] = g->tensors[ti];
				add_implicit(n, ti);
			}
		}
	}
	return 0;
}

/*
 * Values.
 */

/*
 * Make dst hold src's value: its type and shape (when dst is dynamic, or
 * an input of a subgraph, whose shape follows the value's) and bytes.
 * The one place that knows what a value is: a sequence or an optional
 * is copied by aoe_value_copy (lib/ir/seq.c).
 */
static int
copy_value(aoe_tensor *dst, const aoe_tensor *src, const char *what)
{
	size_t nb = aoe_tensor_nbytes(src);
	char msg[1024];
	int rc;

	if (aoe_is_value(dst) || aoe_is_value(src)) {
		/* A dynamic tensor (a carried value kept) takes any kind. */
		if (dst->dynamic && !aoe_is_value(dst)) {
			dst->vkind = src->vkind;
			dst->optional = src->optional;
		}
		if ((rc = aoe_value_copy(dst, src)) < 0) {
			snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
			return aoe_err(-rc, "%s: %s", what, msg);
		}
		return 0;
	}
	if (dst->dynamic) {
		if ((rc = aoe_tensor_resize(dst, src->dtype, src->ndim,
		    src->dims)) < 0)
			return rc;
	} else if (dst->dtype != src->dtype || aoe_tensor_nbytes(dst) != nb)
		return aoe_err(AOE_EDATA, "%s: value '%s' has type %s and %zu "
		    "bytes, where '%s' has %s and %zu", what, src->name,
		    aoe_dtype_name(src->dtype), nb, dst->name,
		    aoe_dtype_name(dst->dtype), aoe_tensor_nbytes(dst));
	if (nb && dst->data != src->data)
		memmove(dst->data, src->data, nb);
	return 0;
}

/*
 * Give subgraph input (or outer tensor) t the type and shape of value v;
 * a change means the subgraph must be prepared again.
 */
static void
bind_shape(aoe_graph *b, aoe_tensor *t, int dtype, int ndim,
    const int64_t *dims)
{
	if (t->dtype != dtype || t->ndim != ndim || (ndim > 0 &&
	    memcmp(t->dims, dims, (size_t)ndim * sizeof(int64_t)) != 0)) {
		aoe_tensor_set(t, dtype, ndim, dims);
		b->prepared = 0;
	}
}

/*
 * At infer time: the outer tensors of b take their sources' types and
 * shapes, and a constant source's data (so that b folds on it).
 */
static void
bind_outer_infer(aoe_graph *b)
{
	int k;

	for (k = 0; k < b->nouter; k++) {
		aoe_tensor *t = b->tensors[b->outer[k]];
		const aoe_tensor *s = b->outer_src[k];
		bind_shape(b, t, s->dtype, s->ndim, s->dims);
		if (t->owned)
			free(t->data);
		t->owned = 0;
		t->dynamic = 0;
		t->vkind = s->vkind;
		t->optional = s->optional;
		t->seq_len = s->seq_len;
		if (s->kind == AOE_T_CONST) {
			t->kind = AOE_T_CONST;
			t->data = s->data;
		} else {
			t->kind = AOE_T_INPUT;
			t->data = NULL;
		}
	}
}

/* At run time: the outer tensors of b point at their sources' data. */
static void
bind_outer_run(aoe_graph *b)
{
	int k;

	for (k = 0; k < b->nouter; k++) {
		aoe_tensor *t = b->tensors[b->outer[k]];
		const aoe_tensor *s = b->outer_src[k];
		if (s->dynamic)
			bind_shape(b, t, s->dtype, s->ndim, s->dims);
		t->data = s->data;
		/* A sequence's elements are copied: t owns what it holds. */
		t->present = s->present;
		if (s->vkind == AOE_V_SEQ)
			(void)aoe_value_copy(t, s);
	}
}

/*
 * Prepare b by the runtime alone, with default schedules (the engine
 * prepares bodies with the bank; this is for a body whose shapes changed
 * at run time).
 */
static int
prepare_plain(aoe_graph *b, const aoe_run_opts *o)
{
	aoe_run_opts po = *o;
	int i, rc;

	if ((rc = rt->analyse(b)) < 0)
		return rc;
	for (i = 0; i < b->norder; i++) {
		aoe_node *n = &b->nodes[b->order[i]];
		if (n->dead || n->dyn)
			continue;
		memset(&n->sched, 0, sizeof(n->sched));
		if (n->op->default_sched)
			n->op->default_sched(b, n, &n->sched);
		if ((rc = rt->node_prepare(b, n)) < 0)
			return rc;
	}
	po.plan_only = 0;
	return rt->plan(b, &po);
}

/* The options of a run, or defaults for a node folded at load time. */
static const aoe_run_opts *
run_opts(const aoe_kctx *k, aoe_run_opts *def)
{
	if (k->rt)
		return k->rt;
	rt->opts_init(def);
	def->nthreads = 1;
	def->use_bank = 0;
	def->profile = 0;
	return def;
}

/* Run subgraph b of node n once, preparing it first when it must be. */
static int
run_body(aoe_node *n, aoe_graph *b, const aoe_run_opts *o)
{
	char msg[1024];
	int rc;

	bind_outer_run(b);
	if (!b->prepared && (rc = prepare_plain(b, o)) < 0)
		goto fail;
	bind_outer_run(b);
	if ((rc = rt->run(b, o)) < 0)
		goto fail;
	return 0;
fail:
	snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
	return aoe_err(-rc, "%s '%s', subgraph '%s': %s", n->op_type, n->name,
	    b->name, msg);
}

/* Analyse subgraph b of node n for the shapes just bound. */
static int
analyse_body(const aoe_node *n, aoe_graph *b)
{
	char msg[1024];
	int rc;

	if ((rc = rt->analyse(b)) < 0) {
		snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
		return aoe_err(-rc, "%s '%s', subgraph '%s': %s", n->op_type,
		    n->name, b->name, msg);
	}
	return 0;
}

/* The graph attribute name of n, or NULL with an error. */
static aoe_graph *
body_attr(const aoe_node *n, const char *name)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	if (a == NULL || a->type != AOE_A_GRAPH || a->g == NULL) {
		aoe_err(AOE_EDATA, "%s '%s': attribute '%s' is missing or not "
		    "a graph", n->op_type, n->name, name);
		return NULL;
	}
	return a->g;
}

/* The node's own inputs, not the implicit ones. */
static int
nformal(const aoe_node *n)
{
	return n->nin - n->nimplicit;
}

static aoe_tensor *
body_out(const aoe_graph *b, int i)
{
	return b->tensors[b->outputs[i]];
}

static aoe_tensor *
body_in(const aoe_graph *b, int i)
{
	return b->tensors[b->inputs[i]];
}

/*
 * Output i of n takes the shape of body output v: static when want is
 * NULL or v has want's shape (a carried value that keeps its shape),
 * else dynamic.
 */
static int
out_like(aoe_graph *g, aoe_node *n, int i, const aoe_tensor *v,
    const aoe_tensor *want)
{
	aoe_tensor *y = aoe_out(g, n, i);

	/* A sequence or an optional: its kind, and what shape is shared. */
	if (aoe_is_value(v) && y != NULL) {
		aoe_value_like(y, v);
		if (want != NULL && !aoe_same_shape(v, want))
			y->ndim = -1;
		if (y->vkind == AOE_V_TENSOR && y->ndim < 0)
			y->dynamic = 1;
		return 0;
	}
	if (!v->dynamic && (want == NULL || aoe_same_shape(v, want)))
		return aoe_set_output(g, n, i, v->dtype, v->ndim, v->dims);
	return aoe_set_output_dyn(g, n, i, v->dtype, v->ndim, NULL);
}

/* A scalar bool or integer tensor's value as a truth or a count. */
static int64_t
scalar_int(const aoe_tensor *t)
{
	switch (t->dtype) {
	case AOE_BOOL:
	case AOE_U8:
		return *(const uint8_t *)t->data;
	case AOE_I32:
		return *(const int32_t *)t->data;
	default:
		return *(const int64_t *)t->data;
	}
}

/*
 * If.
 */

static int
if_check_cond(const aoe_graph *g, const aoe_node *n)
{
	const aoe_tensor *c = nformal(n) == 1 ? aoe_in(g, n, 0) : NULL;

	if (c == NULL || c->dtype != AOE_BOOL || aoe_tensor_numel(c) != 1)
		return aoe_err(AOE_EDATA, "If '%s': the condition must be one "
		    "bool", n->name);
	return 0;
}

static int
if_infer(aoe_graph *g, aoe_node *n)
{
	aoe_graph *b[2];
	int i, j, rc;

	if ((rc = if_check_cond(g, n)) < 0)
		return rc;
	for (i = 0; i < 2; i++) {
		if ((b[i] = body_attr(n, i ? "else_branch" : "then_branch")) ==
		    NULL)
			return -AOE_EDATA;
		if (b[i]->noutputs != n->nout)
			return aoe_err(AOE_EDATA, "If '%s': branch '%s' has %d "
			    "outputs, the node %d", n->name, i ? "else_branch" :
			    "then_branch", b[i]->noutputs, n->nout);
		if (b[i]->ninputs != 0)
			return aoe_err(AOE_EDATA, "If '%s': branch '%s' has "
			    "inputs", n->name, i ? "else_branch" :
			    "then_branch");
	}
	if (aoe_in(g, n, 0)->kind == AOE_T_CONST)
		return 1;
	for (i = 0; i < 2; i++) {
		bind_outer_infer(b[i]);
		if ((rc = analyse_body(n, b[i])) < 0)
			return rc;
	}
	for (j = 0; j < n->nout; j++) {
		const aoe_tensor *x = body_out(b[0], j), *y = body_out(b[1], j);
		if (x->dtype != y->dtype)
			return aoe_err(AOE_EDATA, "If '%s': output %d is %s in "
			    "one branch and %s in the other", n->name, j,
			    aoe_dtype_name(x->dtype), aoe_dtype_name(y->dtype));
		if ((rc = out_like(g, n, j, x, y)) < 0)
			return rc;
	}
	return 0;
}

static int
if_run(aoe_kctx *k)
{
	aoe_run_opts def;
	const aoe_run_opts *o = run_opts(k, &def);
	aoe_node *n = k->n;
	aoe_graph *b;
	char what[256];
	int j, rc;

	b = body_attr(n, scalar_int(aoe_in(k->g, n, 0)) ? "then_branch" :
	    "else_branch");
	if (b == NULL)
		return -AOE_EDATA;
	if ((rc = run_body(n, b, o)) < 0)
		return rc;
	snprintf(what, sizeof(what), "If '%s'", n->name);
	for (j = 0; j < n->nout; j++) {
		aoe_tensor *t = aoe_out(k->g, n, j);
		if (t && (rc = copy_value(t, body_out(b, j), what)) < 0)
			return rc;
	}
	return 0;
}

/* A name for a tensor of an inlined branch that g does not have yet. */
static char *
fresh_name(const aoe_graph *g, const char *prefix, const char *name)
{
	size_t len = strlen(prefix) + strlen(name) + 32;
	char *s = aoe_xmalloc(len);
	int i;

	if (aoe_graph_find(g, name) < 0) {
		snprintf(s, len, "%s", name);
		return s;
	}
	snprintf(s, len, "%s/%s", prefix, name);
	for (i = 1; aoe_graph_find(g, s) >= 0; i++)
		snprintf(s, len, "%s/%s_%d", prefix, name, i);
	return s;
}

/*
 * Rename what the subgraphs of b's nodes (and theirs) read as from to to,
 * where they do not define it themselves.
 */
static void
rename_outer(aoe_graph *b, const char *from, const char *to)
{
	int i, j, ti;

	for (i = 0; i < b->nnodes; i++)
		for (j = 0; j < b->nodes[i].nattr; j++) {
			aoe_graph *s = b->nodes[i].attrs[j].g;
			if (b->nodes[i].attrs[j].type != AOE_A_GRAPH || !s)
				continue;
			if ((ti = aoe_graph_find(s, from)) >= 0 &&
			    graph_is_outer(s, ti)) {
				free(s->tensors[ti]->name);
				s->tensors[ti]->name = aoe_xstrdup(to);
			}
			rename_outer(s, from, to);
		}
}

int
aoe_if_inline(aoe_graph *g, int ni)
{
	aoe_node *n = &g->nodes[ni];
	aoe_graph *b;
	char *name, *prefix = aoe_xstrdup(n->name);
	int *map, *used, i, j, ti, nn, rc = 0;

	b = body_attr(n, scalar_int(aoe_in(g, n, 0)) ? "then_branch" :
	    "else_branch");
	if (b == NULL) {
		free(prefix);
		return -AOE_EDATA;
	}
	map = aoe_xcalloc((size_t)b->ntensors + 1, sizeof(int));
	used = aoe_xcalloc((size_t)b->ntensors + 1, sizeof(int));
	for (i = 0; i < b->ntensors; i++)
		map[i] = -1;
	/* Outer tensors are the parent's own. */
	for (i = 0; i < b->nouter; i++)
		map[b->outer[i]] = aoe_graph_find(g, b->outer_src[i]->name);
	/* A branch output made inside the branch becomes the If's output. */
	for (j = 0; j < b->noutputs; j++) {
		ti = b->outputs[j];
		if (map[ti] < 0 && !used[ti] && n->out[j] >= 0 &&
		    b->tensors[ti]->kind == AOE_T_VALUE) {
			map[ti] = n->out[j];
			used[ti] = 1;
		}
	}
	for (i = 0; i < b->ntensors; i++) {
		aoe_tensor *s = b->tensors[i], *t;
		if (map[i] >= 0)
			continue;
		name = fresh_name(g, prefix, s->name);
		if (strcmp(name, s->name) != 0)
			rename_outer(b, s->name, name);
		map[i] = aoe_graph_tensor(g, name);
		free(name);
		t = g->tensors[map[i]];
		n = &g->nodes[ni];
		if (s->kind == AOE_T_CONST) {
			/* The branch's constant moves to the parent. */
			aoe_tensor_set(t, s->dtype, s->ndim, s->dims);
			t->kind = AOE_T_CONST;
			t->data = s->data;
			t->owned = s->owned;
			t->cap = s->cap;
			s->owned = 0;
		}
	}
	nn = b->nnodes;
	for (i = 0; i < nn && rc == 0; i++) {
		aoe_node *s = &b->nodes[i], *d;
		int *in = aoe_xcalloc((size_t)s->nin + 1, sizeof(int));
		int *out = aoe_xcalloc((size_t)s->nout + 1, sizeof(int));
		size_t len = strlen(prefix) + strlen(s->name) + 2;
		char *nm = aoe_xmalloc(len);

		for (j = 0; j < s->nin - s->nimplicit; j++)
			in[j] = s->in[j] >= 0 ? map[s->in[j]] : -1;
		for (j = 0; j < s->nout; j++)
			out[j] = s->out[j] >= 0 ? map[s->out[j]] : -1;
		snprintf(nm, len, "%s/%s", prefix, s->name);
		j = aoe_graph_add_node(g, nm, s->op_type, s->nin - s->nimplicit,
		    in, s->nout, out);
		free(nm);
		free(in);
		free(out);
		d = &g->nodes[j];
		d->domain = s->domain ? aoe_xstrdup(s->domain) : NULL;
		/* The attributes, subgraphs included, move to the parent. */
		d->attrs = s->attrs;
		d->nattr = s->nattr;
		s->attrs = NULL;
		s->nattr = 0;
	}
	/* A branch output not made in the branch: an Identity copies it. */
	for (j = 0; j < b->noutputs; j++) {
		int src, dst = g->nodes[ni].out[j];
		ti = b->outputs[j];
		if (dst < 0 || map[ti] == dst)
			continue;
		src = map[ti];
		name = fresh_name(g, prefix, "Identity");
		aoe_graph_add_node(g, name, "Identity", 1, &src, 1, &dst);
		free(name);
	}
	/* The If goes. */
	aoe_node_free(&g->nodes[ni]);
	memmove(&g->nodes[ni], &g->nodes[ni + 1], (size_t)(g->nnodes - ni -
	    1) * sizeof(aoe_node));
	g->nnodes--;
	g->norder = 0;
	free(map);
	free(used);
	free(prefix);
	return rc;
}

/*
 * Loop.  Inputs: M (trip count, optional), cond (optional), the N
 * carried values.  Body: inputs (iteration, cond, N carried), outputs
 * (cond, N carried, K scan outputs).  Outputs: the N final carried
 * values, the K scan outputs stacked on a new axis 0.
 */

static int
loop_check(const aoe_graph *g, const aoe_node *n, aoe_graph **bp, int *np,
    int *kp)
{
	aoe_graph *b;
	const aoe_tensor *m, *c;
	int nc = nformal(n) - 2;

	if (nformal(n) < 2)
		return aoe_err(AOE_EDATA, "Loop '%s': needs the trip count "
		    "and condition inputs (either may be \"\")", n->name);
	m = aoe_in(g, n, 0);
	c = aoe_in(g, n, 1);
	if (m == NULL && c == NULL)
		return aoe_err(AOE_EDATA, "Loop '%s': neither a trip count "
		    "nor a condition input is given, so nothing would end the "
		    "loop", n->name);
	if ((m && (aoe_tensor_numel(m) != 1 || (m->dtype != AOE_I64 &&
	    m->dtype != AOE_I32))) || (c && (aoe_tensor_numel(c) != 1 ||
	    c->dtype != AOE_BOOL)))
		return aoe_err(AOE_EDATA, "Loop '%s': the trip count must be "
		    "one int64 and the condition one bool", n->name);
	if ((b = body_attr(n, "body")) == NULL)
		return -AOE_EDATA;
	if (b->ninputs != nc + 2)
		return aoe_err(AOE_EDATA, "Loop '%s': the body has %d inputs, "
		    "expected %d (iteration, condition and %d carried values)",
		    n->name, b->ninputs, nc + 2, nc);
	if (b->noutputs < nc + 1 || n->nout != b->noutputs - 1)
		return aoe_err(AOE_EDATA, "Loop '%s': the body has %d outputs "
		    "and the node %d, expected 1 + %d carried + scan outputs "
		    "and one fewer", n->name, b->noutputs, n->nout, nc);
	*bp = b;
	*np = nc;
	*kp = b->noutputs - 1 - nc;
	return 0;
}

static int
loop_infer(aoe_graph *g, aoe_node *n)
{
	static const int64_t none[1] = { 0 };
	aoe_graph *b;
	int i, nc, ns, rc;

	if ((rc = loop_check(g, n, &b, &nc, &ns)) < 0)
		return rc;
	bind_shape(b, body_in(b, 0), AOE_I64, 0, none);
	bind_shape(b, body_in(b, 1), AOE_BOOL, 0, none);
	for (i = 0; i < nc; i++) {
		const aoe_tensor *v = aoe_in(g, n, 2 + i);
		if (v == NULL)
			return aoe_err(AOE_EDATA, "Loop '%s': carried value %d "
			    "has no initial value", n->name, i);
		bind_shape(b, body_in(b, 2 + i), v->dtype, v->ndim, v->dims);
	}
	bind_outer_infer(b);
	if ((rc = analyse_body(n, b)) < 0)
		return rc;
	for (i = 0; i < nc; i++)
		if ((rc = out_like(g, n, i, body_out(b, 1 + i),
		    aoe_in(g, n, 2 + i))) < 0)
			return rc;
	for (i = 0; i < ns; i++) {
		const aoe_tensor *v = body_out(b, 1 + nc + i);
		int64_t dims[AOE_MAXDIM];
		if (v->ndim + 1 > AOE_MAXDIM)
			return aoe_err(AOE_EUNSUP, "Loop '%s': scan output %d "
			    "has rank %d, more than %d", n->name, i, v->ndim + 1,
			    AOE_MAXDIM);
		dims[0] = -1;
		if (v->ndim >= 0)
			memcpy(dims + 1, v->dims, (size_t)v->ndim *
			    sizeof(int64_t));
		if ((rc = aoe_set_output_dyn(g, n, nc + i, v->dtype,
		    v->ndim < 0 ? -1 : v->ndim + 1, v->dynamic ? NULL :
		    dims)) < 0)
			return rc;
	}
	return 0;
}

/* A growing buffer of equal slices (a scan output being gathered). */
typedef struct slices {
	char *p;
	size_t len, cap;
	aoe_tensor shape;	/* of one slice */
	int64_t count;
} slices;

static int
slices_add(slices *s, const aoe_tensor *v, const char *what)
{
	size_t nb = aoe_tensor_nbytes(v);

	if (s->count == 0)
		aoe_tensor_set(&s->shape, v->dtype, v->ndim, v->dims);
	else if (!aoe_same_shape(&s->shape, v) || s->shape.dtype != v->dtype)
		return aoe_err(AOE_EDATA, "%s: scan output '%s' changes shape "
		    "between iterations", what, v->name);
	if (s->len + nb > s->cap) {
		s->cap = (s->len + nb) * 2;
		s->p = aoe_xrealloc(s->p, s->cap);
	}
	if (nb)
		memcpy(s->p + s->len, v->data, nb);
	s->len += nb;
	s->count++;
	return 0;
}

/*
 * Copy body outputs from[0..cnt) to body inputs to[0..cnt) through a
 * staging copy, since an output may be an input.  When a value changes
 * its shape, b must be prepared again and nothing is copied: the caller
 * takes the values from the outputs, which stay as they are until then.
 */
static int
carry(aoe_graph *b, int from, int to, int cnt, const char *what)
{
	aoe_tensor **tmp;
	int i, rc = 0;

	for (i = 0; i < cnt; i++) {
		const aoe_tensor *v = body_out(b, from + i);
		bind_shape(b, body_in(b, to + i), v->dtype, v->ndim, v->dims);
	}
	if (!b->prepared)
		return 0;
	tmp = aoe_xcalloc((size_t)cnt + 1, sizeof(*tmp));
	for (i = 0; i < cnt && rc == 0; i++) {
		tmp[i] = aoe_xcalloc(1, sizeof(aoe_tensor));
		tmp[i]->name = aoe_xstrdup(body_out(b, from + i)->name);
		tmp[i]->dynamic = 1;
		rc = copy_value(tmp[i], body_out(b, from + i), what);
	}
	for (i = 0; i < cnt && rc == 0; i++)
		rc = copy_value(body_in(b, to + i), tmp[i], what);
	for (i = 0; i < cnt; i++)
		aoe_tensor_free(tmp[i]);
	free(tmp);
	return rc;
}

static int
loop_run(aoe_kctx *k)
{
	aoe_run_opts def;
	const aoe_run_opts *o = run_opts(k, &def);
	aoe_graph *g = k->g, *b;
	aoe_node *n = k->n;
	const aoe_tensor *m, *c;
	slices *sl;
	char what[256];
	int64_t trips, it;
	int nc, ns, i, rc, cond;

	if ((rc = loop_check(g, n, &b, &nc, &ns)) < 0)
		return rc;
	snprintf(what, sizeof(what), "Loop '%s'", n->name);
	m = aoe_in(g, n, 0);
	c = aoe_in(g, n, 1);
	trips = m ? scalar_int(m) : INT64_MAX;
	cond = c ? scalar_int(c) != 0 : 1;
	sl = aoe_xcalloc((size_t)ns + 1, sizeof(*sl));
	rc = 0;
	/* The body's inputs hold the carried values between iterations. */
	for (i = 0; i < nc && rc == 0; i++)
		bind_shape(b, body_in(b, 2 + i), aoe_in(g, n, 2 + i)->dtype,
		    aoe_in(g, n, 2 + i)->ndim, aoe_in(g, n, 2 + i)->dims);
	bind_outer_run(b);
	if (!b->prepared && (rc = prepare_plain(b, o)) < 0)
		goto out;
	for (i = 0; i < nc && rc == 0; i++)
		rc = copy_value(body_in(b, 2 + i), aoe_in(g, n, 2 + i), what);
	for (it = 0; rc == 0 && it < trips && cond; it++) {
		if (!b->prepared) {
			/* A carried value changed its shape: keep it. */
			aoe_tensor **keep = aoe_xcalloc((size_t)nc + 1,
			    sizeof(*keep));
			for (i = 0; i < nc && rc == 0; i++) {
				keep[i] = aoe_xcalloc(1, sizeof(aoe_tensor));
				keep[i]->name = aoe_xstrdup("carried");
				keep[i]->dynamic = 1;
				rc = copy_value(keep[i], body_out(b, 1 + i),
				    what);
			}
			if (rc == 0)
				rc = prepare_plain(b, o);
			for (i = 0; i < nc && rc == 0; i++)
				rc = copy_value(body_in(b, 2 + i), keep[i],
				    what);
			for (i = 0; i < nc; i++)
				aoe_tensor_free(keep[i]);
			free(keep);
			if (rc < 0)
				break;
		}
		*(int64_t *)body_in(b, 0)->data = it;
		*(uint8_t *)body_in(b, 1)->data = (uint8_t)cond;
		if ((rc = run_body(n, b, o)) < 0)
			break;
		if (c)
			cond = scalar_int(body_out(b, 0)) != 0;
		for (i = 0; i < ns && rc == 0; i++)
			rc = slices_add(&sl[i], body_out(b, 1 + nc + i), what);
		if (rc == 0)
			rc = carry(b, 1, 2, nc, what);
	}
	/* The last values: in the outputs if a shape just changed. */
	for (i = 0; i < nc && rc == 0; i++) {
		aoe_tensor *t = aoe_out(g, n, i);
		if (t)
			rc = copy_value(t, b->prepared ? body_in(b, 2 + i) :
			    body_out(b, 1 + i), what);
	}
	for (i = 0; i < ns && rc == 0; i++) {
		aoe_tensor *t = aoe_out(g, n, nc + i);
		const aoe_tensor *v = sl[i].count ? &sl[i].shape :
		    body_out(b, 1 + nc + i);
		int64_t dims[AOE_MAXDIM];
		if (t == NULL)
			continue;
		dims[0] = sl[i].count;
		memcpy(dims + 1, v->dims, (size_t)v->ndim * sizeof(int64_t));
		if ((rc = aoe_tensor_resize(t, v->dtype, v->ndim + 1,
		    dims)) == 0 && sl[i].len)
			memcpy(t->data, sl[i].p, sl[i].len);
	}
out:
	for (i = 0; i < ns; i++)
		free(sl[i].p);
	free(sl);
	return rc;
}

/*
 * Scan.  Opset 9 on: inputs N initial states and M scan inputs, each
 * scanned along its scan_input_axes, in its scan_input_directions;
 * outputs N final states and K scan outputs stacked along their
 * scan_output_axes, in their scan_output_directions.  Opset 8: a first
 * input sequence_lens (optional), a batch axis 0 on every input and
 * output, the scan axis 1, attribute directions for the inputs.
 */
typedef struct scan {
	aoe_graph *b;
	int ns, nm, nk;		/* states, scan inputs, scan outputs */
	int first;		/* input index of the first state */
	int batched;		/* opset 8: a batch axis 0 */
	int64_t batch, len;	/* batch size (1 unbatched), sequence length */
	int64_t in_axis[AOE_MAXDIM * 4], out_axis[AOE_MAXDIM * 4];
	int in_rev[AOE_MAXDIM * 4], out_rev[AOE_MAXDIM * 4];
} scan;

/* Read an ints attribute of at most cnt values into v (else def). */
static int
scan_ints(const aoe_node *n, const char *name, int cnt, int64_t *v,
    int64_t def)
{
	const int64_t *a;
	int i, na;

	for (i = 0; i < cnt; i++)
		v[i] = def;
	if ((a = aoe_attr_ints(n, name, &na)) == NULL)
		return 0;
	if (na != cnt)
		return aoe_err(AOE_EDATA, "Scan '%s': attribute '%s' has %d "
		    "values, expected %d", n->name, name, na, cnt);
	for (i = 0; i < cnt; i++)
		v[i] = a[i];
	return 0;
}

static int
scan_setup(const aoe_graph *g, const aoe_node *n, scan *s)
{
	int64_t v[AOE_MAXDIM * 4];
	int i, rc, nf = nformal(n), nin;

	memset(s, 0, sizeof(*s));
	if ((s->b = body_attr(n, "body")) == NULL)
		return -AOE_EDATA;
	s->batched = g->opset < 9;
	s->first = s->batched ? 1 : 0;
	s->nm = (int)aoe_attr_int(n, "num_scan_inputs", -1);
	nin = nf - s->first;
	if (s->nm < 1 || s->nm > nin)
		return aoe_err(AOE_EDATA, "Scan '%s': num_scan_inputs must be "
		    "1 to %d", n->name, nin);
	s->ns = nin - s->nm;
	s->nk = n->nout - s->ns;
	if (s->ns + s->nm > AOE_MAXDIM * 4 || s->nk > AOE_MAXDIM * 4)
		return aoe_err(AOE_EUNSUP, "Scan '%s': too many inputs or "
		    "outputs", n->name);
	if (s->b->ninputs != s->ns + s->nm || s->nk < 0 ||
	    s->b->noutputs != s->ns + s->nk)
		return aoe_err(AOE_EDATA, "Scan '%s': the body has %d inputs "
		    "and %d outputs, expected %d and %d", n->name,
		    s->b->ninputs, s->b->noutputs, s->ns + s->nm, n->nout);
	if ((rc = scan_ints(n, s->batched ? "directions" :
	    "scan_input_directions", s->nm, v, 0)) < 0)
		return rc;
	for (i = 0; i < s->nm; i++)
		s->in_rev[i] = v[i] != 0;
	if ((rc = scan_ints(n, "scan_output_directions", s->nk, v, 0)) < 0)
		return rc;
	for (i = 0; i < s->nk; i++)
		s->out_rev[i] = v[i] != 0;
	if ((rc = scan_ints(n, "scan_input_axes", s->nm, s->in_axis, 0)) < 0 ||
	    (rc = scan_ints(n, "scan_output_axes", s->nk, s->out_axis, 0)) < 0)
		return rc;
	s->batch = 1;
	for (i = 0; i < s->nm; i++) {
		const aoe_tensor *x = aoe_in(g, n, s->first + s->ns + i);
		int ax;
		if (x == NULL)
			return aoe_err(AOE_EDATA, "Scan '%s': scan input %d is "
			    "missing", n->name, i);
		if (s->batched)
			ax = x->ndim >= 2 ? 1 : -1;
		else
			ax = aoe_axis(s->in_axis[i], x->ndim);
		if (ax < 0)
			return aoe_err(AOE_EDATA, "Scan '%s': scan input %d has "
			    "no axis %lld", n->name, i,
			    (long long)s->in_axis[i]);
		s->in_axis[i] = ax;
		if (i == 0) {
			s->len = x->dims[ax];
			s->batch = s->batched ? x->dims[0] : 1;
		} else if (x->dims[ax] != s->len || (s->batched &&
		    x->dims[0] != s->batch))
			return aoe_err(AOE_EDATA, "Scan '%s': scan inputs have "
			    "different lengths", n->name);
	}
	for (i = 0; i < s->ns; i++) {
		const aoe_tensor *x = aoe_in(g, n, s->first + i);
		if (x == NULL || (s->batched && (x->ndim < 1 ||
		    x->dims[0] != s->batch)))
			return aoe_err(AOE_EDATA, "Scan '%s': state %d is missing "
			    "or has no batch axis", n->name, i);
	}
	return 0;
}

/* The shape of x without axis ax (and without the batch axis). */
static void
drop_axis(const aoe_tensor *x, int ax, int batched, int *nd, int64_t *dims)
{
	int d;

	*nd = 0;
	for (d = batched ? 1 : 0; d < x->ndim; d++)
		if (d != ax)
			dims[(*nd)++] = x->dims[d];
}

static int
scan_infer(aoe_graph *g, aoe_node *n)
{
	int64_t dims[AOE_MAXDIM];
	scan s;
	int i, nd, rc, ax;

	if ((rc = scan_setup(g, n, &s)) < 0)
		return rc;
	for (i = 0; i < s.ns; i++) {
		const aoe_tensor *x = aoe_in(g, n, s.first + i);
		drop_axis(x, -1, s.batched, &nd, dims);
		bind_shape(s.b, body_in(s.b, i), x->dtype, nd, dims);
	}
	for (i = 0; i < s.nm; i++) {
		const aoe_tensor *x = aoe_in(g, n, s.first + s.ns + i);
		drop_axis(x, (int)s.in_axis[i], s.batched, &nd, dims);
		bind_shape(s.b, body_in(s.b, s.ns + i), x->dtype, nd, dims);
	}
	bind_outer_infer(s.b);
	if ((rc = analyse_body(n, s.b)) < 0)
		return rc;
	for (i = 0; i < s.ns + s.nk; i++) {
		const aoe_tensor *v = body_out(s.b, i);
		int64_t od[AOE_MAXDIM];
		int on = 0, d;
		if (v->dynamic || v->ndim + 1 + s.batched > AOE_MAXDIM)
			return aoe_err(AOE_EUNSUP, "Scan '%s': body output %d "
			    "has no static shape of rank below %d", n->name, i,
			    AOE_MAXDIM);
		if (s.batched)
			od[on++] = s.batch;
		if (i < s.ns) {
			const aoe_tensor *x = aoe_in(g, n, s.first + i);
			for (d = 0; d < v->ndim; d++)
				od[on++] = v->dims[d];
			if (on != x->ndim || memcmp(od, x->dims, (size_t)on *
			    sizeof(int64_t)) != 0)
				return aoe_err(AOE_EDATA, "Scan '%s': state %d "
				    "changes shape in the body", n->name, i);
		} else {
			ax = s.batched ? 0 : aoe_axis(s.out_axis[i - s.ns],
			    v->ndim + 1);
			if (ax < 0)
				return aoe_err(AOE_EDATA, "Scan '%s': scan output "
				    "%d has no axis %lld", n->name, i - s.ns,
				    (long long)s.out_axis[i - s.ns]);
			s.out_axis[i - s.ns] = ax;
			for (d = 0; d <= v->ndim; d++)
				od[on++] = d == ax ? s.len :
				    v->dims[d < ax ? d : d - 1];
		}
		if ((rc = aoe_set_output(g, n, i, v->dtype, on, od)) < 0)
			return rc;
	}
	return 0;
}

/*
 * Copy between a tensor of shape [batch?] [pre] [len] [post] and one
 * slice at position pos of its len axis (batch element bi): to_slice
 * reads the full tensor, else writes it.
 */
static void
slice_copy(char *full, char *part, const aoe_tensor *ft, int ax, int batched,
    int64_t bi, int64_t pos, int to_slice)
{
	size_t es = aoe_dtype_size(ft->dtype);
	int64_t pre = 1, post = 1, len = ft->dims[ax], o;
	int d;

	for (d = batched ? 1 : 0; d < ax; d++)
		pre *= ft->dims[d];
	for (d = ax + 1; d < ft->ndim; d++)
		post *= ft->dims[d];
	full += (size_t)(bi * pre * len * post) * es;
	for (o = 0; o < pre; o++) {
		char *f = full + (size_t)((o * len + pos) * post) * es;
		char *p = part + (size_t)(o * post) * es;
		if (to_slice)
			memcpy(p, f, (size_t)post * es);
		else
			memcpy(f, p, (size_t)post * es);
	}
}

static int
scan_run(aoe_kctx *k)
{
	aoe_run_opts def;
	const aoe_run_opts *o = run_opts(k, &def);
	aoe_graph *g = k->g;
	aoe_node *n = k->n;
	char what[256];
	const aoe_tensor *lens;
	scan s;
	int64_t bi, t, steps;
	int i, rc;

	if ((rc = scan_setup(g, n, &s)) < 0)
		return rc;
	snprintf(what, sizeof(what), "Scan '%s'", n->name);
	for (i = 0; i < n->nout; i++) {
		const aoe_tensor *v = body_out(s.b, i);
		if (i >= s.ns)
			s.out_axis[i - s.ns] = s.batched ? 1 :
			    aoe_axis(s.out_axis[i - s.ns], v->ndim + 1);
	}
	lens = s.batched && nformal(n) > 0 ? aoe_in(g, n, 0) : NULL;
	bind_outer_run(s.b);
	if (!s.b->prepared && (rc = prepare_plain(s.b, o)) < 0)
		return rc;
	/* Past a batch element's sequence length, scan outputs are 0. */
	for (i = s.ns; i < n->nout && lens; i++) {
		aoe_tensor *y = aoe_out(g, n, i);
		if (y)
			memset(y->data, 0, aoe_tensor_nbytes(y));
	}
	for (bi = 0; bi < s.batch; bi++) {
		steps = s.len;
		if (lens) {
			steps = ((const int32_t *)lens->data)[bi];
			if (steps < 0 || steps > s.len)
				return aoe_err(AOE_EDATA, "%s: sequence length "
				    "%lld is out of range 0..%lld", what,
				    (long long)steps, (long long)s.len);
		}
		for (i = 0; i < s.ns; i++) {
			const aoe_tensor *x = aoe_in(g, n, s.first + i);
			size_t nb = aoe_tensor_nbytes(body_in(s.b, i));
			memcpy(body_in(s.b, i)->data, (const char *)x->data +
			    (size_t)bi * nb, nb);
		}
		for (t = 0; t < steps; t++) {
			for (i = 0; i < s.nm; i++) {
				const aoe_tensor *x = aoe_in(g, n,
				    s.first + s.ns + i);
				int64_t pos = s.in_rev[i] ? steps - 1 - t : t;
				slice_copy(x->data, body_in(s.b, s.ns + i)->data,
				    x, s.batched ? 1 : (int)s.in_axis[i],
				    s.batched, bi, pos, 1);
			}
			if ((rc = run_body(n, s.b, o)) < 0)
				return rc;
			for (i = s.ns; i < n->nout; i++) {
				aoe_tensor *y = aoe_out(g, n, i);
				int64_t pos = s.out_rev[i - s.ns] ?
				    steps - 1 - t : t;
				if (y)
					slice_copy(y->data, body_out(s.b,
					    i)->data, y, (int)s.out_axis[i -
					    s.ns], s.batched, bi, pos, 0);
			}
			if ((rc = carry(s.b, 0, 0, s.ns, what)) < 0)
				return rc;
		}
		for (i = 0; i < s.ns; i++) {
			aoe_tensor *y = aoe_out(g, n, i);
			size_t nb = aoe_tensor_nbytes(body_in(s.b, i));
			if (y)
				memcpy((char *)y->data + (size_t)bi * nb,
				    body_in(s.b, i)->data, nb);
		}
	}
	return 0;
}

/*
 * SequenceMap: the body once per element of the input sequences (input
 * 0, and every other input that is a sequence; a tensor input goes whole
 * to each iteration), each body output appended to an output sequence.
 * When the elements' shapes are known when the graph is prepared, the
 * body is analysed then and prepared with the bank; else the node is
 * dynamic and the body is prepared at run time for the shapes it meets.
 */

/* The body of SequenceMap n, checked against the node's inputs. */
static int
seqmap_check(const aoe_graph *g, const aoe_node *n, aoe_graph **bp)
{
	aoe_graph *b;
	const aoe_tensor *x;
	int j, nf = nformal(n);

	if ((b = body_attr(n, "body")) == NULL)
		return -AOE_EDATA;
	if (nf < 1 || n->nout < 1 || b->ninputs != nf ||
	    b->noutputs != n->nout)
		return aoe_err(AOE_EDATA, "SequenceMap '%s': %d inputs and %d "
		    "outputs, its body %d and %d", n->name, nf, n->nout,
		    b->ninputs, b->noutputs);
	for (j = 0; j < nf; j++) {
		if ((x = aoe_in(g, n, j)) == NULL || x->optional)
			return aoe_err(AOE_EDATA, "SequenceMap '%s': input %d "
			    "is %s", n->name, j, x ? "an optional" : "missing");
		if (j == 0 && x->vkind != AOE_V_SEQ)
			return aoe_err(AOE_EDATA, "SequenceMap '%s': input '%s' "
			    "is not a sequence", n->name, x->name);
	}
	*bp = b;
	return 0;
}

static int
seqmap_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x0 = aoe_in(g, n, 0), *x, *v;
	aoe_graph *b;
	aoe_tensor *y;
	int j, d, rc, known = 1;

	if ((rc = seqmap_check(g, n, &b)) < 0)
		return rc;
	for (j = 0; j < nformal(n); j++) {
		x = aoe_in(g, n, j);
		bind_shape(b, body_in(b, j), x->dtype, x->ndim, x->dims);
		for (d = 0; d < x->ndim; d++)
			known &= x->dims[d] >= 0;
		known &= x->ndim >= 0 && !x->dynamic;
	}
	if (known) {
		bind_outer_infer(b);
		if ((rc = analyse_body(n, b)) < 0)
			return rc;
	}
	/* Unknown shapes: the runtime infers the node at every run. */
	n->dyn = !known;
	for (j = 0; j < n->nout; j++) {
		if ((y = aoe_out(g, n, j)) == NULL)
			continue;
		v = body_out(b, j);
		if (aoe_dtype_size(v->dtype) == 0 || aoe_is_value(v))
			return aoe_err(AOE_EUNSUP, "SequenceMap '%s': body "
			    "output '%s' is not a tensor of a known type",
			    n->name, v->name);
		aoe_tensor_set(y, v->dtype, known && !v->dynamic ? v->ndim : -1,
		    v->dims);
		y->vkind = AOE_V_SEQ;
		y->optional = y->dynamic = 0;
		y->seq_len = x0->seq_len;
	}
	return 0;
}

/* Element i of x, a sequence, or x itself. */
static const aoe_tensor *
seqmap_arg(const aoe_tensor *x, int i)
{
	return x->vkind == AOE_V_SEQ ? x->seq->t[i] : x;
}

static int
seqmap_run(aoe_kctx *k)
{
	aoe_run_opts def;
	const aoe_run_opts *o = run_opts(k, &def);
	aoe_graph *g = k->g, *b;
	aoe_node *n = k->n;
	const aoe_tensor *x;
	aoe_tensor *y;
	char what[256], msg[1024];
	int i, j, len, nf = nformal(n), rc;

	if ((rc = seqmap_check(g, n, &b)) < 0)
		return rc;
	snprintf(what, sizeof(what), "SequenceMap '%s'", n->name);
	x = aoe_in(g, n, 0);
	len = x->seq ? x->seq->n : 0;
	for (j = 1; j < nf; j++) {
		x = aoe_in(g, n, j);
		if (x->vkind == AOE_V_SEQ && (x->seq ? x->seq->n : 0) != len)
			return aoe_err(AOE_EDATA, "%s: sequence '%s' has %d "
			    "elements, '%s' %d", what, x->name, x->seq ?
			    x->seq->n : 0, aoe_in(g, n, 0)->name, len);
	}
	for (j = 0; j < n->nout; j++)
		if ((y = aoe_out(g, n, j)) != NULL)
			aoe_seq_clear(aoe_seq_of(y));
	for (i = 0; i < len; i++) {
		for (j = 0; j < nf; j++) {
			x = seqmap_arg(aoe_in(g, n, j), i);
			bind_shape(b, body_in(b, j), x->dtype, x->ndim,
			    x->dims);
		}
		bind_outer_run(b);
		if (!b->prepared && (rc = prepare_plain(b, o)) < 0) {
			snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
			return aoe_err(-rc, "%s, subgraph '%s': %s", what,
			    b->name, msg);
		}
		for (j = 0; j < nf; j++)
			if ((rc = copy_value(body_in(b, j),
			    seqmap_arg(aoe_in(g, n, j), i), what)) < 0)
				return rc;
		if ((rc = run_body(n, b, o)) < 0)
			return rc;
		for (j = 0; j < n->nout; j++)
			if ((y = aoe_out(g, n, j)) != NULL && (rc =
			    aoe_seq_insert(aoe_seq_of(y), aoe_seq_of(y)->n,
			    aoe_tensor_dup(body_out(b, j)))) < 0)
				return rc;
	}
	return 0;
}

static const aoe_op ctl_ops[] = {
	{ "If", if_infer, if_run, NULL, NULL },
	{ "Loop", loop_infer, loop_run, NULL, NULL },
	{ "Scan", scan_infer, scan_run, NULL, NULL },
	{ "SequenceMap", seqmap_infer, seqmap_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
