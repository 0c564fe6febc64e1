/*
 * graph.c - the graph IR: tensors, nodes, attributes, schedules, dtypes.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "half.h"
#include "ir.h"

static const struct {
	int dtype;
	size_t size;
	const char *name;
} dtypes[] = {
	{ AOE_F32, 4, "float32" },
	{ AOE_U8, 1, "uint8" },
	{ AOE_I8, 1, "int8" },
	{ AOE_U16, 2, "uint16" },
	{ AOE_I16, 2, "int16" },
	{ AOE_I32, 4, "int32" },
	{ AOE_I64, 8, "int64" },
	{ AOE_BOOL, 1, "bool" },
	{ AOE_F16, 2, "float16" },
	{ AOE_F64, 8, "float64" },
	{ AOE_U32, 4, "uint32" },
	{ AOE_U64, 8, "uint64" },
	{ AOE_BF16, 2, "bfloat16" },
};

size_t
aoe_dtype_size(int dtype)
{
	size_t i;

	for (i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].dtype == dtype)
			return dtypes[i].size;
	return 0;
}

const char *
aoe_dtype_name(int dtype)
{
	size_t i;

	for (i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (dtypes[i].dtype == dtype)
			return dtypes[i].name;
	return "unknown";
}

int
aoe_dtype_from_name(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++)
		if (strcmp(dtypes[i].name, name) == 0)
			return dtypes[i].dtype;
	return AOE_UNDEFINED;
}

int64_t
aoe_tensor_numel(const aoe_tensor *t)
{
	int64_t n = 1;
	int i;

	if (t->ndim < 0)
		return -1;
	for (i = 0; i < t->ndim; i++) {
		if (t->dims[i] < 0)
			return -1;
		if (t->dims[i] != 0 && n > INT64_MAX / t->dims[i])
			return -2;
		n *= t->dims[i];
	}
	return n;
}

size_t
aoe_tensor_nbytes(const aoe_tensor *t)
{
	int64_t n = aoe_tensor_numel(t);
	size_t es = aoe_dtype_size(t->dtype);

	if (n > 0 && t->layout == AOE_LAYOUT_8C && t->ndim >= 2)
		n = n / t->dims[1] * ((t->dims[1] + 7) / 8 * 8);
	if (n < 0 || es == 0 || n > AOE_MAX_TENSOR_BYTES / (int64_t)es)
		return 0;
	return (size_t)n * es;
}

const char *
aoe_shape_str(const aoe_tensor *t, char *buf, size_t n)
{
	size_t off = 0;
	int i;

	buf[0] = '\0';
	if (t->ndim < 0) {
		snprintf(buf, n, "?");
		return buf;
	}
	if (t->ndim == 0) {
		snprintf(buf, n, "scalar");
		return buf;
	}
	for (i = 0; i < t->ndim && off < n; i++) {
		if (t->dims[i] >= 0)
			off += snprintf(buf + off, n - off, "%s%lld",
			    i ? "x" : "", (long long)t->dims[i]);
		else
			off += snprintf(buf + off, n - off, "%s%s",
			    i ? "x" : "",
			    t->dim_param[i] ? t->dim_param[i] : "?");
	}
	return buf;
}

/*
 * The random inputs of aoe-run and of every measurement.  Floats are
 * uniform in [-1, 1): the scale of normalized activations, where no
 * kernel overflows and the checks' tolerances mean something.  Bool and
 * uint8 (masks, quantized pixels) are 0 or 1.  Other integers are
 * zero: a graph's integer inputs are indices (Gather, GatherElements,
 * OneHot, token ids) and counts whose valid range the filler cannot
 * know, and 0 is in range on every axis, where a random index would
 * make the reference run fail for an axis shorter than its range.
 */
void
aoe_tensor_fill_random(aoe_tensor *t, uint64_t seed)
{
	int64_t i, n = aoe_tensor_numel(t);
	uint64_t s = seed;

	if (t->data == NULL || n <= 0)
		return;
	switch (t->dtype) {
	case AOE_F32:
		/* 24 bits, which a float holds exactly: never 1. */
		for (i = 0; i < n; i++)
			((float *)t->data)[i] = (float)
			    (aoe_splitmix64(&s) >> 40) * 0x1p-23f - 1.0f;
		break;
	case AOE_F64:
		for (i = 0; i < n; i++)
			((double *)t->data)[i] = (double)
			    (aoe_splitmix64(&s) >> 11) * 0x1p-52 - 1.0;
		break;
	case AOE_BOOL:
	case AOE_U8:
		for (i = 0; i < n; i++)
			((uint8_t *)t->data)[i] =
			    (uint8_t)(aoe_splitmix64(&s) >> 63);
		break;
	default:
		memset(t->data, 0, aoe_tensor_nbytes(t));
		break;
	}
}

void
aoe_graph_fill_inputs(aoe_graph *g, uint64_t seed)
{
	int i;

	for (i = 0; i < g->ninputs; i++)
		aoe_tensor_fill_random(g->tensors[g->inputs[i]],
		    seed + 977 * (uint64_t)i);
}

int
aoe_load_file(const char *path, int (*load)(const void *, size_t,
    const char *, aoe_graph **), aoe_graph **gp)
{
	uint8_t *buf;
	size_t len;
	int rc;

	*gp = NULL;
	if ((rc = aoe_read_file(path, &buf, &len)) < 0)
		return rc;
	rc = load(buf, len, path, gp);
	free(buf);
	return rc;
}

aoe_graph *
aoe_graph_new(const char *name)
{
	aoe_graph *g = aoe_xcalloc(1, sizeof(*g));

	g->name = aoe_xstrdup(name ? name : "graph");
	g->opset = 13;
	return g;
}

/* A sequence's elements (lib/ir/seq.c), here for aoe_tensor_free. */
void
aoe_seq_clear(aoe_seq *s)
{
	int i;

	if (s == NULL)
		return;
	for (i = 0; i < s->n; i++)
		aoe_tensor_free(s->t[i]);
	s->n = 0;
}

void
aoe_seq_free(aoe_seq *s)
{
	if (s == NULL)
		return;
	aoe_seq_clear(s);
	free(s->t);
	free(s);
}

void
aoe_tensor_free(aoe_tensor *t)
{
	int i;

	if (t == NULL)
		return;
	free(t->name);
	for (i = 0; i < AOE_MAXDIM; i++)
		free(t->dim_param[i]);
	if (t->owned)
		free(t->data);
	aoe_seq_free(t->seq);
	free(t->src_file);
	free(t->src_name);
	free(t);
}

static void
attr_free(aoe_attr *a)
{
	int i;

	free(a->name);
	free(a->s);
	free(a->ints);
	free(a->floats);
	if (a->strings)
		for (i = 0; i < a->n; i++)
			free(a->strings[i]);
	free(a->strings);
	aoe_tensor_free(a->t);
	aoe_graph_free(a->g);
}

void
aoe_node_clear_attrs(aoe_node *n)
{
	int j;

	for (j = 0; j < n->nattr; j++)
		attr_free(&n->attrs[j]);
	free(n->attrs);
	n->attrs = NULL;
	n->nattr = 0;
}

void
aoe_node_free(aoe_node *n)
{
	free(n->name);
	free(n->op_type);
	free(n->domain);
	free(n->in);
	free(n->out);
	aoe_node_clear_attrs(n);
	aoe_node_unprepare(n);
}

void
aoe_node_unprepare(aoe_node *n)
{
	if (n->priv_free)
		n->priv_free(n->priv);
	n->priv = NULL;
	n->priv_free = NULL;
}

void
aoe_graph_free(aoe_graph *g)
{
	int i;

	if (g == NULL)
		return;
	for (i = 0; i < g->ntensors; i++)
		aoe_tensor_free(g->tensors[i]);
	free(g->tensors);
	for (i = 0; i < g->nnodes; i++)
		aoe_node_free(&g->nodes[i]);
	free(g->nodes);
	free(g->inputs);
	free(g->outputs);
	free(g->outer);
	free(g->outer_src);
	free(g->order);
	free(g->arena);
	free(g->scratch);
	free(g->name);
	free(g->source);
	free(g);
}

int
aoe_graph_find(const aoe_graph *g, const char *name)
{
	int i;

	for (i = 0; i < g->ntensors; i++)
		if (strcmp(g->tensors[i]->name, name) == 0)
			return i;
	return -1;
}

int
aoe_graph_tensor(aoe_graph *g, const char *name)
{
	aoe_tensor *t;
	int i = aoe_graph_find(g, name);

	if (i >= 0)
		return i;
	if (g->ntensors == g->tcap) {
		g->tcap = g->tcap ? g->tcap * 2 : 64;
		g->tensors = aoe_xrealloc(g->tensors,
		    (size_t)g->tcap * sizeof(*g->tensors));
	}
	t = aoe_xcalloc(1, sizeof(*t));
	t->name = aoe_xstrdup(name);
	t->ndim = -1;
	t->producer = -1;
	t->last_use = -1;
	t->offset = -1;
	t->alias = -1;
	t->seq_len = -1;
	g->tensors[g->ntensors] = t;
	return g->ntensors++;
}

int
aoe_graph_add_node(aoe_graph *g, const char *name, const char *op_type,
    int nin, const int *in, int nout, const int *out)
{
	aoe_node *n;

	if (g->nnodes == g->ncap) {
		g->ncap = g->ncap ? g->ncap * 2 : 64;
		g->nodes = aoe_xrealloc(g->nodes,
		    (size_t)g->ncap * sizeof(*g->nodes));
	}
	n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof(*n));
	n->name = aoe_xstrdup(name);
	n->op_type = aoe_xstrdup(op_type);
	n->nin = nin;
	n->nout = nout;
	n->in = aoe_xcalloc((size_t)nin + 1, sizeof(int));
	n->out = aoe_xcalloc((size_t)nout + 1, sizeof(int));
	if (nin)
		memcpy(n->in, in, (size_t)nin * sizeof(int));
	if (nout)
		memcpy(n->out, out, (size_t)nout * sizeof(int));
	return g->nnodes++;
}

aoe_tensor *
aoe_in(const aoe_graph *g, const aoe_node *n, int i)
{
	if (i < 0 || i >= n->nin || n->in[i] < 0)
		return NULL;
	return g->tensors[n->in[i]];
}

aoe_tensor *
aoe_out(const aoe_graph *g, const aoe_node *n, int i)
{
	if (i < 0 || i >= n->nout || n->out[i] < 0)
		return NULL;
	return g->tensors[n->out[i]];
}

void
aoe_tensor_set(aoe_tensor *t, int dtype, int ndim, const int64_t *dims)
{
	int i;

	t->dtype = dtype;
	t->ndim = ndim;
	for (i = 0; i < ndim && i < AOE_MAXDIM; i++)
		t->dims[i] = dims[i];
}

double
aoe_tensor_elem(const aoe_tensor *t, int64_t i)
{
	switch (t->dtype) {
	case AOE_F32:
		return ((const float *)t->data)[i];
	case AOE_F64:
		return ((const double *)t->data)[i];
	case AOE_I64:
		return (double)((const int64_t *)t->data)[i];
	case AOE_I32:
		return ((const int32_t *)t->data)[i];
	case AOE_I16:
		return ((const int16_t *)t->data)[i];
	case AOE_I8:
		return ((const int8_t *)t->data)[i];
	case AOE_U8:
	case AOE_BOOL:
		return ((const uint8_t *)t->data)[i];
	case AOE_U16:
		return ((const uint16_t *)t->data)[i];
	case AOE_U32:
		return ((const uint32_t *)t->data)[i];
	case AOE_U64:
		return (double)((const uint64_t *)t->data)[i];
	case AOE_BF16:
		return bf2f(((const uint16_t *)t->data)[i]);
	default:
		return NAN;
	}
}

int
aoe_tensor_resize(aoe_tensor *t, int dtype, int ndim, const int64_t *dims)
{
	aoe_tensor tmp;
	size_t nb;
	void *p;

	memset(&tmp, 0, sizeof(tmp));
	aoe_tensor_set(&tmp, dtype, ndim, dims);
	nb = aoe_tensor_nbytes(&tmp);
	if (ndim < 0 || ndim > AOE_MAXDIM || aoe_tensor_numel(&tmp) < 0 ||
	    (aoe_tensor_numel(&tmp) > 0 && nb == 0))
		return aoe_err(AOE_ENOMEM, "tensor '%s' is too large or has "
		    "no shape", t->name);
	aoe_tensor_set(t, dtype, ndim, dims);
	t->layout = 0;
	if (t->owned && t->data && t->cap >= nb)
		return 0;
	if (posix_memalign(&p, 64, nb ? nb : 64) != 0)
		return aoe_err(AOE_ENOMEM, "tensor '%s': out of memory",
		    t->name);
	if (t->owned)
		free(t->data);
	t->data = p;
	t->owned = 1;
	t->cap = nb ? nb : 64;
	return 0;
}

int
aoe_tensor_alloc_const(aoe_tensor *t)
{
	size_t nb = aoe_tensor_nbytes(t);
	int64_t numel = aoe_tensor_numel(t);

	if (numel < 0 || (numel > 0 && nb == 0))
		return aoe_err(AOE_ENOMEM, "tensor '%s' is too large",
		    t->name);
	if (t->owned)
		free(t->data);
	t->data = calloc(1, nb ? nb : 1);
	if (t->data == NULL)
		return aoe_err(AOE_ENOMEM, "tensor '%s': out of memory",
		    t->name);
	t->owned = 1;
	t->cap = nb ? nb : 1;
	t->kind = AOE_T_CONST;
	return 0;
}

const aoe_attr *
aoe_attr_find(const aoe_node *n, const char *name)
{
	int i;

	for (i = 0; i < n->nattr; i++)
		if (strcmp(n->attrs[i].name, name) == 0)
			return &n->attrs[i];
	return NULL;
}

int64_t
aoe_attr_int(const aoe_node *n, const char *name, int64_t def)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	return a && a->type == AOE_A_INT ? a->i : def;
}

float
aoe_attr_float(const aoe_node *n, const char *name, float def)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	if (a && a->type == AOE_A_FLOAT)
		return a->f;
	if (a && a->type == AOE_A_INT)
		return (float)a->i;
	return def;
}

const char *
aoe_attr_str(const aoe_node *n, const char *name, const char *def)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	return a && a->type == AOE_A_STRING && a->s ? a->s : def;
}

const int64_t *
aoe_attr_ints(const aoe_node *n, const char *name, int *count)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	if (a == NULL || a->type != AOE_A_INTS) {
		*count = 0;
		return NULL;
	}
	*count = a->n;
	return a->ints;
}

const float *
aoe_attr_floats(const aoe_node *n, const char *name, int *count)
{
	const aoe_attr *a = aoe_attr_find(n, name);

	if (a == NULL || a->type != AOE_A_FLOATS) {
		*count = 0;
		return NULL;
	}
	*count = a->n;
	return a->floats;
}

aoe_attr *
aoe_node_add_attr(aoe_node *n, const char *name, aoe_atype type)
{
	aoe_attr *a;

	n->attrs = aoe_xrealloc(n->attrs,
	    (size_t)(n->nattr + 1) * sizeof(*n->attrs));
	a = &n->attrs[n->nattr++];
	memset(a, 0, sizeof(*a));
	a->name = aoe_xstrdup(name);
	a->type = type;
	return a;
}

int
aoe_value_known(const aoe_node *n, const aoe_tensor *t)
{
	return t->data != NULL && (t->kind == AOE_T_CONST || n->dyn);
}

int
aoe_const_ints(const aoe_graph *g, const aoe_node *n, int input,
    int64_t *out, int max)
{
	const aoe_tensor *t = aoe_in(g, n, input);
	int64_t numel, i;

	if (t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
		    n->op_type, n->name, input);
	if (!aoe_value_known(n, t))
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' must be a "
		    "constant (bind dynamic shapes with --input-shape)",
		    n->op_type, n->name, t->name);
	numel = aoe_tensor_numel(t);
	if (numel < 0 || numel > max)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' has %lld "
		    "values, at most %d allowed", n->op_type, n->name,
		    t->name, (long long)numel, max);
	for (i = 0; i < numel; i++) {
		if (t->dtype == AOE_I64)
			out[i] = ((const int64_t *)t->data)[i];
		else if (t->dtype == AOE_I32)
			out[i] = ((const int32_t *)t->data)[i];
		else
			return aoe_err(AOE_EDATA, "%s '%s': input '%s' must "
			    "be int64 or int32, not %s", n->op_type, n->name,
			    t->name, aoe_dtype_name(t->dtype));
	}
	return (int)numel;
}

int64_t
aoe_sched_get(const aoe_sched *s, const char *name, int64_t def)
{
	int i;

	if (s == NULL)
		return def;
	/* The first letters first: the search calls this millions of times. */
	for (i = 0; i < s->n; i++)
		if (s->k[i].name[0] == name[0] &&
		    strcmp(s->k[i].name, name) == 0)
			return s->k[i].v;
	return def;
}

int
aoe_sched_set(aoe_sched *s, const char *name, int64_t v)
{
	int i;

	if (strlen(name) >= AOE_KNOB_NAME)
		return aoe_err(AOE_EDATA, "knob name '%s' is too long", name);
	for (i = 0; i < s->n; i++)
		if (s->k[i].name[0] == name[0] &&
		    strcmp(s->k[i].name, name) == 0) {
			s->k[i].v = v;
			return 0;
		}
	if (s->n == AOE_SCHED_MAX)
		return aoe_err(AOE_EUNSUP, "too many knobs in a schedule");
	strcpy(s->k[s->n].name, name);
	s->k[s->n].v = v;
	s->n++;
	return 0;
}

int
aoe_broadcast_shape(int na, const int64_t *a, int nb, const int64_t *b,
    int *nout, int64_t *out)
{
	int n = na > nb ? na : nb, i;

	if (n > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "rank %d exceeds %d", n,
		    AOE_MAXDIM);
	for (i = 0; i < n; i++) {
		int64_t da = i < n - na ? 1 : a[i - (n - na)];
		int64_t db = i < n - nb ? 1 : b[i - (n - nb)];

		if (da == db || db == 1)
			out[i] = da;
		else if (da == 1)
			out[i] = db;
		else
			return aoe_err(AOE_EDATA, "shapes cannot broadcast: "
			    "dimension %d is %lld and %lld", i,
			    (long long)da, (long long)db);
	}
	*nout = n;
	return 0;
}

int
aoe_axis(int64_t axis, int rank)
{
	if (axis < 0)
		axis += rank;
	if (axis < 0 || axis >= rank)
		return -1;
	return (int)axis;
}

int
aoe_set_output(aoe_graph *g, aoe_node *n, int i, int dtype, int ndim,
    const int64_t *dims)
{
	aoe_tensor *t = aoe_out(g, n, i);
	int64_t numel;
	int d;

	if (t == NULL)
		return 0;
	if (ndim < 0 || ndim > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, ndim, AOE_MAXDIM);
	for (d = 0; d < ndim; d++)
		if (dims[d] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': output '%s' has "
			    "negative dimension %lld", n->op_type, n->name,
			    t->name, (long long)dims[d]);
	aoe_tensor_set(t, dtype, ndim, dims);
	t->vkind = AOE_V_TENSOR;
	t->optional = t->dynamic = 0;
	numel = aoe_tensor_numel(t);
	if (numel == -2 || (numel > 0 && aoe_tensor_nbytes(t) == 0))
		return aoe_err(AOE_ENOMEM, "%s '%s': output '%s' is too large "
		    "(shape product overflows the %lld-byte limit)",
		    n->op_type, n->name, t->name,
		    (long long)AOE_MAX_TENSOR_BYTES);
	return 0;
}

int
aoe_set_output_dyn(aoe_graph *g, aoe_node *n, int i, int dtype, int ndim,
    const int64_t *dims)
{
	aoe_tensor *t = aoe_out(g, n, i);
	int d;

	if (t == NULL)
		return 0;
	if (ndim < -1 || ndim > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, ndim, AOE_MAXDIM);
	t->dtype = dtype;
	t->ndim = ndim;
	for (d = 0; d < ndim; d++)
		t->dims[d] = dims ? dims[d] : -1;
	t->dynamic = 1;
	return 0;
}

int
aoe_op_internal(const char *op_type)
{
	return strcmp(op_type, "AoeReorder") == 0 ||
	    strcmp(op_type, "AoeElemChain") == 0;
}

int
aoe_same_shape(const aoe_tensor *a, const aoe_tensor *b)
{
	int i;

	if (a->ndim != b->ndim)
		return 0;
	for (i = 0; i < a->ndim; i++)
		if (a->dims[i] != b->dims[i])
			return 0;
	return 1;
}
