/*
 * json.c - aoe-graph(5): read and write graphs as JSON with cJSON.
 *
 * Constant data is never written as JSON numbers: a constant that came
 * from a model file refers to it ("file" and "tensor"); one made by folding
 * is carried as base64 ("b64").
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "ir.h"

static const char b64chars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static char *
b64_encode(const uint8_t *p, size_t n)
{
	char *out = aoe_xmalloc((n + 2) / 3 * 4 + 1), *o = out;
	size_t i;

	for (i = 0; i + 2 < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (uint32_t)p[i + 1] << 8 |
		    p[i + 2];
		*o++ = b64chars[v >> 18 & 63];
		*o++ = b64chars[v >> 12 & 63];
		*o++ = b64chars[v >> 6 & 63];
		*o++ = b64chars[v & 63];
	}
	if (i < n) {
		uint32_t v = (uint32_t)p[i] << 16 |
		    (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0);
		*o++ = b64chars[v >> 18 & 63];
		*o++ = b64chars[v >> 12 & 63];
		*o++ = i + 1 < n ? b64chars[v >> 6 & 63] : '=';
		*o++ = '=';
	}
	*o = '\0';
	return out;
}

/* Decode exactly n bytes; -1 if the text is not base64 of that length. */
/*
 * Whether base64 text s can hold n bytes, by its length alone: checked
 * before the n bytes are allocated, so that a shape that claims gigabytes
 * beside a few bytes of data is refused, not allocated.
 */
static int
b64_fits(const char *s, size_t n)
{
	size_t len = strlen(s);

	return len % 4 == 0 && len / 4 * 3 >= n && len / 4 * 3 <= n + 2;
}

static int
b64_decode(const char *s, uint8_t *out, size_t n)
{
	size_t len = strlen(s), i, o = 0;
	uint32_t v = 0;
	int bits = 0;

	if (!b64_fits(s, n))
		return -1;
	for (i = 0; i < len; i++) {
		const char *c;
		if (s[i] == '=') {
			if (i < len - 2)
				return -1;
			break;
		}
		if ((c = strchr(b64chars, s[i])) == NULL || s[i] == '\0')
			return -1;
		v = v << 6 | (uint32_t)(c - b64chars);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (o < n)
				out[o] = (uint8_t)(v >> bits);
			o++;
		}
	}
	return o == n ? 0 : -1;
}

static cJSON *
shape_json(const aoe_tensor *t)
{
	cJSON *a = cJSON_CreateArray();
	int i;

	for (i = 0; i < t->ndim; i++)
		cJSON_AddItemToArray(a, cJSON_CreateNumber((double)t->dims[i]));
	return a;
}

/* The kinds of value of aoe-graph(5), by optional * 2 + (vkind == seq). */
static const char *const kinds[4] = { "tensor", "sequence", "optional",
    "optional sequence" };

/*
 * A tensor object: a sequence or an optional says its kind, and has no
 * shape when its elements' rank is not known (see aoe_tensor).
 */
static cJSON *
tensor_json(const aoe_tensor *t, int with_data)
{
	cJSON *o = cJSON_CreateObject(), *c;

	if (t->name)
		cJSON_AddStringToObject(o, "name", t->name);
	cJSON_AddStringToObject(o, "dtype", aoe_dtype_name(t->dtype));
	if (aoe_is_value(t) || !with_data)
		cJSON_AddStringToObject(o, "kind", kinds[2 * !!t->optional +
		    (t->vkind == AOE_V_SEQ)]);
	if (t->ndim >= 0 || !(aoe_is_value(t) || !with_data))
		cJSON_AddItemToObject(o, "shape", shape_json(t));
	if (!with_data || t->kind != AOE_T_CONST)
		return o;
	c = cJSON_AddObjectToObject(o, "const");
	if (t->src_file && t->src_name) {
		cJSON_AddStringToObject(c, "file", t->src_file);
		cJSON_AddStringToObject(c, "tensor", t->src_name);
	} else {
		char *b = b64_encode(t->data, aoe_tensor_nbytes(t));
		cJSON_AddStringToObject(c, "b64", b);
		free(b);
	}
	return o;
}

static cJSON *
attr_json(const aoe_attr *a)
{
	cJSON *o = cJSON_CreateObject(), *arr;
	int i;

	switch (a->type) {
	case AOE_A_INT:
		cJSON_AddNumberToObject(o, "int", (double)a->i);
		break;
	case AOE_A_FLOAT:
		cJSON_AddNumberToObject(o, "float", a->f);
		break;
	case AOE_A_STRING:
		cJSON_AddStringToObject(o, "string", a->s ? a->s : "");
		break;
	case AOE_A_INTS:
		arr = cJSON_AddArrayToObject(o, "ints");
		for (i = 0; i < a->n; i++)
			cJSON_AddItemToArray(arr,
			    cJSON_CreateNumber((double)a->ints[i]));
		break;
	case AOE_A_FLOATS:
		arr = cJSON_AddArrayToObject(o, "floats");
		for (i = 0; i < a->n; i++)
			cJSON_AddItemToArray(arr,
			    cJSON_CreateNumber(a->floats[i]));
		break;
	case AOE_A_STRINGS:
		arr = cJSON_AddArrayToObject(o, "strings");
		for (i = 0; i < a->n; i++)
			cJSON_AddItemToArray(arr,
			    cJSON_CreateString(a->strings[i]));
		break;
	case AOE_A_TENSOR:
		cJSON_AddItemToObject(o, "tensor", tensor_json(a->t, 1));
		break;
	case AOE_A_TYPE_PROTO:
		cJSON_AddItemToObject(o, "type", tensor_json(a->t, 0));
		break;
	default:
		cJSON_AddNumberToObject(o, "unsupported", a->type);
		break;
	}
	return o;
}

static cJSON *graph_json(const aoe_graph *g, cJSON *o);

/*
 * Whether tensor ti of subgraph g is an enclosing graph's value, not
 * declared in g; unless it is one of g's inputs, as when a subgraph is
 * captured as a graph of its own (lib/engine/capture.c).
 */
static int
is_outer(const aoe_graph *g, int ti)
{
	int k;

	for (k = 0; k < g->ninputs; k++)
		if (g->inputs[k] == ti)
			return 0;
	for (k = 0; k < g->nouter; k++)
		if (g->outer[k] == ti)
			return 1;
	return 0;
}

/*
 * The members of graph g after the top level's header: its inputs,
 * outputs, declared tensors and nodes.  A subgraph (a node's graph
 * attribute, nested to any depth) has the same members; the values it
 * reads from the graphs around it are theirs and are not declared in it.
 * A node's implicit inputs (aoe_node.nimplicit) are not written: reading
 * the graph finds them again.
 */
static cJSON *
graph_json(const aoe_graph *g, cJSON *root)
{
	cJSON *arr, *o, *io, *attrs;
	int i, j;

	arr = cJSON_AddArrayToObject(root, "inputs");
	for (i = 0; i < g->ninputs; i++)
		cJSON_AddItemToArray(arr,
		    cJSON_CreateString(g->tensors[g->inputs[i]]->name));
	arr = cJSON_AddArrayToObject(root, "outputs");
	for (i = 0; i < g->noutputs; i++)
		cJSON_AddItemToArray(arr,
		    cJSON_CreateString(g->tensors[g->outputs[i]]->name));
	arr = cJSON_AddArrayToObject(root, "tensors");
	for (i = 0; i < g->ntensors; i++) {
		const aoe_tensor *t = g->tensors[i];
		if (t->ndim < 0 || is_outer(g, i))
			continue;
		cJSON_AddItemToArray(arr, tensor_json(t, 1));
	}
	arr = cJSON_AddArrayToObject(root, "nodes");
	for (i = 0; i < g->nnodes; i++) {
		const aoe_node *n = &g->nodes[i];
		if (n->dead)
			continue;
		o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "name", n->name);
		cJSON_AddStringToObject(o, "op_type", n->op_type);
		if (n->domain)
			cJSON_AddStringToObject(o, "domain", n->domain);
		io = cJSON_AddArrayToObject(o, "inputs");
		for (j = 0; j < n->nin - n->nimplicit; j++)
			cJSON_AddItemToArray(io, cJSON_CreateString(
			    n->in[j] >= 0 ? g->tensors[n->in[j]]->name : ""));
		io = cJSON_AddArrayToObject(o, "outputs");
		for (j = 0; j < n->nout; j++)
			cJSON_AddItemToArray(io, cJSON_CreateString(
			    n->out[j] >= 0 ? g->tensors[n->out[j]]->name :
			    ""));
		attrs = cJSON_AddObjectToObject(o, "attrs");
		for (j = 0; j < n->nattr; j++) {
			const aoe_attr *a = &n->attrs[j];
			cJSON *ao;
			if (a->type == AOE_A_GRAPH && a->g != NULL) {
				cJSON *go = cJSON_CreateObject();
				cJSON_AddStringToObject(go, "name", a->g->name);
				ao = cJSON_CreateObject();
				cJSON_AddItemToObject(ao, "graph",
				    graph_json(a->g, go));
			} else
				ao = attr_json(a);
			cJSON_AddItemToObject(attrs, a->name, ao);
		}
		cJSON_AddItemToArray(arr, o);
	}
	return root;
}

int
aoe_json_save(const aoe_graph *g, FILE *fp)
{
	cJSON *root = cJSON_CreateObject();
	char *text;
	int rc = 0;

	cJSON_AddStringToObject(root, "format", "aoe-graph");
	cJSON_AddNumberToObject(root, "version", 1);
	cJSON_AddStringToObject(root, "name", g->name);
	cJSON_AddNumberToObject(root, "opset", g->opset);
	if (g->source)
		cJSON_AddStringToObject(root, "source", g->source);
	graph_json(g, root);
	text = cJSON_PrintUnformatted(root);
	cJSON_Delete(root);
	if (text == NULL)
		return aoe_err(AOE_ENOMEM, "out of memory");
	if (fputs(text, fp) == EOF || fputc('\n', fp) == EOF)
		rc = aoe_err(AOE_EIO, "write error");
	free(text);
	return rc;
}

/* A JSON number that is an exact integer in [min, max]. */
static int
json_int(const cJSON *v, int64_t min, int64_t max, int64_t *out)
{
	int64_t i;
	double d;

	if (!cJSON_IsNumber(v))
		return -1;
	d = v->valuedouble;
	/*
	 * 2^63 first: (double)INT64_MAX rounds up to it, and converting it
	 * (or more) to int64_t is undefined.
	 */
	if (d != d || d < (double)min || d >= 9223372036854775808.0)
		return -1;
	i = (int64_t)d;
	if (i > max || (double)i != d)
		return -1;
	*out = i;
	return 0;
}

/* Whether name is a knob name: [A-Za-z0-9_], 1 to AOE_KNOB_NAME - 1. */
static int
knob_name_ok(const char *name)
{
	size_t l = name ? strlen(name) : 0;

	return l > 0 && l < AOE_KNOB_NAME && strspn(name,
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	    "0123456789_") == l;
}

/*
 * The one schedule parser, for bank entries, tuning records, timings and
 * journals alike.  The range check is on doubles: -2^63 is exact, and
 * 2^63 is the first double above INT64_MAX.
 */
int
aoe_sched_from_json(const cJSON *o, aoe_sched *s, char *why, size_t wl)
{
	char scratch[8];
	const cJSON *k;
	double d;
	int n = 0;

	if (why == NULL) {
		why = scratch;
		wl = sizeof(scratch);
	}
	memset(s, 0, sizeof(*s));
	if (!cJSON_IsObject(o)) {
		snprintf(why, wl, "\"schedule\" is %s", o ? "not an object" :
		    "missing");
		return -AOE_EDATA;
	}
	cJSON_ArrayForEach(k, o) {
		if (!knob_name_ok(k->string)) {
			snprintf(why, wl, "schedule knob name '%.40s' is "
			    "empty, too long or not of [A-Za-z0-9_]",
			    k->string ? k->string : "");
			goto bad;
		}
		d = cJSON_IsNumber(k) ? k->valuedouble : 0.5;
		if (d != floor(d) || d < -9223372036854775808.0 ||
		    d >= 9223372036854775808.0) {
			snprintf(why, wl, "schedule knob '%s' is not an "
			    "integer", k->string);
			goto bad;
		}
		/* Two defaults give one value only for a knob already set. */
		if (aoe_sched_get(s, k->string, 0) == aoe_sched_get(s,
		    k->string, 1)) {
			snprintf(why, wl, "schedule knob '%s' appears twice",
			    k->string);
			goto bad;
		}
		if (++n > AOE_SCHED_MAX) {
			snprintf(why, wl, "schedule has more than %d knobs",
			    AOE_SCHED_MAX);
			goto bad;
		}
		if (aoe_sched_set(s, k->string, (int64_t)d) < 0) {
			snprintf(why, wl, "schedule knob '%s' cannot be set",
			    k->string);
			goto bad;
		}
	}
	return 0;
bad:
	memset(s, 0, sizeof(*s));
	return -AOE_EDATA;
}

static int
tensor_from_json(const cJSON *o, aoe_tensor *t, const char *where)
{
	const cJSON *dt = cJSON_GetObjectItemCaseSensitive(o, "dtype");
	const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "shape");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(o, "const"), *d;
	const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "kind");
	int i = 0, rc;

	if (!cJSON_IsString(dt) ||
	    (t->dtype = aoe_dtype_from_name(dt->valuestring)) ==
	    AOE_UNDEFINED)
		return aoe_err(AOE_EDATA, "%s: tensor '%s' has no valid "
		    "\"dtype\"", where, t->name);
	t->seq_len = -1;
	if (k != NULL) {
		for (i = 0; i < 4; i++)
			if (cJSON_IsString(k) &&
			    strcmp(k->valuestring, kinds[i]) == 0)
				break;
		if (i == 4)
			return aoe_err(AOE_EDATA, "%s: tensor '%s' has a bad "
			    "\"kind\"", where, t->name);
		t->optional = i / 2;
		t->vkind = i % 2 ? AOE_V_SEQ : AOE_V_TENSOR;
		i = 0;
		if (c != NULL && aoe_is_value(t))
			return aoe_err(AOE_EDATA, "%s: constant '%s' is not a "
			    "tensor", where, t->name);
		if (sh == NULL) {
			t->ndim = -1;
			return 0;
		}
	}
	if (!cJSON_IsArray(sh))
		return aoe_err(AOE_EDATA, "%s: tensor '%s' has no \"shape\" "
		    "array", where, t->name);
	if (cJSON_GetArraySize(sh) > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s: tensor '%s' has rank %d, "
		    "more than %d", where, t->name, cJSON_GetArraySize(sh),
		    AOE_MAXDIM);
	cJSON_ArrayForEach(d, sh) {
		if (cJSON_IsString(d)) {
			t->dims[i] = -1;
			t->dim_param[i] = aoe_xstrdup(d->valuestring);
		} else if (json_int(d, -1, INT64_MAX, &t->dims[i]) < 0)
			return aoe_err(AOE_EDATA, "%s: tensor '%s' has a bad "
			    "dimension", where, t->name);
		i++;
	}
	t->ndim = i;
	if (c == NULL)
		return 0;
	t->kind = AOE_T_CONST;
	d = cJSON_GetObjectItemCaseSensitive(c, "b64");
	if (cJSON_IsString(d)) {
		if (aoe_tensor_numel(t) < 0)
			return aoe_err(AOE_EDATA, "%s: constant '%s' has an "
			    "unknown shape", where, t->name);
		if (b64_fits(d->valuestring, aoe_tensor_nbytes(t))) {
			if ((rc = aoe_tensor_alloc_const(t)) < 0)
				return rc;
			if (b64_decode(d->valuestring, t->data,
			    aoe_tensor_nbytes(t)) == 0)
				return 0;
		}
		return aoe_err(AOE_EDATA, "%s: constant '%s' has bad or "
		    "wrongly sized base64 data", where, t->name);
	}
	{
		const cJSON *f = cJSON_GetObjectItemCaseSensitive(c, "file");
		const cJSON *n = cJSON_GetObjectItemCaseSensitive(c, "tensor");
		if (!cJSON_IsString(f) || !cJSON_IsString(n))
			return aoe_err(AOE_EDATA, "%s: constant '%s' needs "
			    "\"b64\" or \"file\" and \"tensor\"", where,
			    t->name);
		/* A relative file is relative to the graph file's directory. */
		if (f->valuestring[0] != '/' && where[0] != '\0' &&
		    strcmp(where, "-") != 0 && strrchr(where, '/') != NULL) {
			size_t dl = (size_t)(strrchr(where, '/') - where);
			t->src_file = aoe_xmalloc(dl + strlen(f->valuestring) +
			    2);
			sprintf(t->src_file, "%.*s/%s", (int)dl, where,
			    f->valuestring);
		} else
			t->src_file = aoe_xstrdup(f->valuestring);
		t->src_name = aoe_xstrdup(n->valuestring);
		t->data = NULL;
	}
	return 0;
}

static int graph_from_json(const cJSON *root, aoe_graph *g,
    const char *where, int sub);

/*
 * A graph attribute: its graph, with the enclosing graph's opset.  An
 * error inside it says where it is: "node 'if0', attribute 'then_branch'"
 * for each level, outermost first.
 */
static int
subgraph_from_json(const cJSON *x, const aoe_graph *g, aoe_node *n,
    const char *name, const char *where)
{
	const cJSON *nm = cJSON_GetObjectItemCaseSensitive(x, "name");
	size_t wl = strlen(where);
	char msg[1024];
	const char *m;
	aoe_attr *a;
	int rc;

	if (!cJSON_IsObject(x))
		return aoe_err(AOE_EDATA, "%s: node '%s': attribute '%s': "
		    "\"graph\" must be an object", where, n->name, name);
	a = aoe_node_add_attr(n, name, AOE_A_GRAPH);
	a->g = aoe_graph_new(cJSON_IsString(nm) && *nm->valuestring ?
	    nm->valuestring : name);
	a->g->opset = g->opset;
	if ((rc = graph_from_json(x, a->g, where, 1)) < 0) {
		m = aoe_errmsg();
		if (strncmp(m, where, wl) == 0 && strncmp(m + wl, ": ", 2) == 0)
			m += wl + 2;
		snprintf(msg, sizeof(msg), "%s", m);
		return aoe_err(-rc, "%s: node '%s', attribute '%s': %s", where,
		    n->name, name, msg);
	}
	return 0;
}

static int
attr_from_json(const cJSON *v, const aoe_graph *g, aoe_node *n,
    const char *where)
{
	const cJSON *x = v->child, *e;
	aoe_attr *a;
	int i = 0, rc;

	if (!cJSON_IsObject(v) || x == NULL || x->next != NULL)
		return aoe_err(AOE_EDATA, "%s: node '%s': attribute '%s' "
		    "must be an object with one typed member", where,
		    n->name, v->string);
	if (strcmp(x->string, "int") == 0) {
		a = aoe_node_add_attr(n, v->string, AOE_A_INT);
		if (json_int(x, INT64_MIN, INT64_MAX, &a->i) < 0)
			goto bad;
	} else if (strcmp(x->string, "float") == 0) {
		a = aoe_node_add_attr(n, v->string, AOE_A_FLOAT);
		if (!cJSON_IsNumber(x))
			goto bad;
		a->f = (float)x->valuedouble;
	} else if (strcmp(x->string, "string") == 0) {
		a = aoe_node_add_attr(n, v->string, AOE_A_STRING);
		if (!cJSON_IsString(x))
			goto bad;
		a->s = aoe_xstrdup(x->valuestring);
	} else if (strcmp(x->string, "ints") == 0 ||
	    strcmp(x->string, "floats") == 0 ||
	    strcmp(x->string, "strings") == 0) {
		int isint = x->string[0] == 'i', isf = x->string[0] == 'f';
		if (!cJSON_IsArray(x))
			goto bad;
		a = aoe_node_add_attr(n, v->string, isint ? AOE_A_INTS :
		    isf ? AOE_A_FLOATS : AOE_A_STRINGS);
		a->n = cJSON_GetArraySize(x);
		if (isint)
			a->ints = aoe_xcalloc((size_t)a->n + 1, 8);
		else if (isf)
			a->floats = aoe_xcalloc((size_t)a->n + 1, 4);
		else
			a->strings = aoe_xcalloc((size_t)a->n + 1,
			    sizeof(char *));
		cJSON_ArrayForEach(e, x) {
			if (isint) {
				if (json_int(e, INT64_MIN, INT64_MAX,
				    &a->ints[i]) < 0)
					goto bad;
			} else if (isf) {
				if (!cJSON_IsNumber(e))
					goto bad;
				a->floats[i] = (float)e->valuedouble;
			} else {
				if (!cJSON_IsString(e))
					goto bad;
				a->strings[i] = aoe_xstrdup(e->valuestring);
			}
			i++;
		}
	} else if (strcmp(x->string, "graph") == 0) {
		return subgraph_from_json(x, g, n, v->string, where);
	} else if (strcmp(x->string, "type") == 0) {
		a = aoe_node_add_attr(n, v->string, AOE_A_TYPE_PROTO);
		a->t = aoe_xcalloc(1, sizeof(*a->t));
		a->t->name = aoe_xstrdup(v->string);
		a->t->producer = a->t->last_use = a->t->alias = -1;
		a->t->offset = -1;
		if (cJSON_GetObjectItemCaseSensitive(x, "const") != NULL)
			return aoe_err(AOE_EDATA, "%s: node '%s': type '%s' "
			    "has data", where, n->name, v->string);
		if ((rc = tensor_from_json(x, a->t, where)) < 0)
			return rc;
	} else if (strcmp(x->string, "tensor") == 0) {
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(x, "name");
		a = aoe_node_add_attr(n, v->string, AOE_A_TENSOR);
		a->t = aoe_xcalloc(1, sizeof(*a->t));
		a->t->name = aoe_xstrdup(cJSON_IsString(nm) ?
		    nm->valuestring : v->string);
		a->t->producer = a->t->last_use = a->t->alias = -1;
		a->t->offset = -1;
		if ((rc = tensor_from_json(x, a->t, where)) < 0)
			return rc;
		if (a->t->data == NULL)
			return aoe_err(AOE_EDATA, "%s: node '%s': attribute "
			    "'%s' must carry its data", where, n->name,
			    v->string);
	} else {
		return aoe_err(AOE_EDATA, "%s: node '%s': attribute '%s' has "
		    "unknown type \"%s\"", where, n->name, v->string,
		    x->string);
	}
	return 0;
bad:
	return aoe_err(AOE_EDATA, "%s: node '%s': attribute '%s' has a bad "
	    "value", where, n->name, v->string);
}

static int
names(const cJSON *arr, aoe_graph *g, int **out, int *count, int create,
    const char *what, const char *where)
{
	const cJSON *e;
	int i = 0, idx;

	if (!cJSON_IsArray(arr))
		return aoe_err(AOE_EDATA, "%s: \"%s\" must be an array",
		    where, what);
	*out = aoe_xcalloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(int));
	cJSON_ArrayForEach(e, arr) {
		if (!cJSON_IsString(e))
			return aoe_err(AOE_EDATA, "%s: \"%s\" must hold "
			    "strings", where, what);
		if (*e->valuestring == '\0')
			idx = -1;
		else if (create)
			idx = aoe_graph_tensor(g, e->valuestring);
		else if ((idx = aoe_graph_find(g, e->valuestring)) < 0)
			return aoe_err(AOE_EDATA, "%s: \"%s\" names '%s', "
			    "which is not a declared tensor", where, what,
			    e->valuestring);
		(*out)[i++] = idx;
	}
	*count = i;
	return 0;
}

/*
 * The graph root into g: the whole file, or (sub) a graph attribute's
 * object, which has no header, and whose inputs and outputs need not be
 * declared tensors (a Loop body's may take their shapes from the node).
 */
static int
graph_from_json(const cJSON *root, aoe_graph *g, const char *where, int sub)
{
	const cJSON *v, *e;
	int i, rc;

	v = cJSON_GetObjectItemCaseSensitive(root, "format");
	if (!sub && (!cJSON_IsString(v) ||
	    strcmp(v->valuestring, "aoe-graph") != 0))
		return aoe_err(AOE_EDATA, "%s: not an aoe-graph file (no "
		    "\"format\": \"aoe-graph\")", where);
	v = cJSON_GetObjectItemCaseSensitive(root, "name");
	if (!sub && cJSON_IsString(v)) {
		free(g->name);
		g->name = aoe_xstrdup(v->valuestring);
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "opset");
	if (v && !sub) {
		int64_t op;
		if (json_int(v, 1, 1000, &op) < 0)
			return aoe_err(AOE_EDATA, "%s: bad \"opset\"", where);
		g->opset = (int)op;
	}
	v = cJSON_GetObjectItemCaseSensitive(root, "source");
	if (!sub && cJSON_IsString(v))
		g->source = aoe_xstrdup(v->valuestring);
	v = cJSON_GetObjectItemCaseSensitive(root, "tensors");
	if (!cJSON_IsArray(v))
		return aoe_err(AOE_EDATA, "%s: \"tensors\" must be an array",
		    where);
	cJSON_ArrayForEach(e, v) {
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
		aoe_tensor *t;
		int idx;

		if (!cJSON_IsString(nm) || *nm->valuestring == '\0')
			return aoe_err(AOE_EDATA, "%s: a tensor has no "
			    "\"name\"", where);
		if (aoe_graph_find(g, nm->valuestring) >= 0)
			return aoe_err(AOE_EDATA, "%s: tensor '%s' is "
			    "declared twice", where, nm->valuestring);
		/* Index first: adding a tensor may move g->tensors. */
		idx = aoe_graph_tensor(g, nm->valuestring);
		t = g->tensors[idx];
		if ((rc = tensor_from_json(e, t, where)) < 0)
			return rc;
	}
	if ((rc = names(cJSON_GetObjectItemCaseSensitive(root, "inputs"), g,
	    &g->inputs, &g->ninputs, sub, "inputs", where)) < 0)
		return rc;
	for (i = 0; i < g->ninputs; i++) {
		if (g->inputs[i] < 0)
			return aoe_err(AOE_EDATA, "%s: empty input name",
			    where);
		g->tensors[g->inputs[i]]->kind = AOE_T_INPUT;
	}
	if ((rc = names(cJSON_GetObjectItemCaseSensitive(root, "outputs"), g,
	    &g->outputs, &g->noutputs, sub, "outputs", where)) < 0)
		return rc;
	for (i = 0; i < g->noutputs; i++)
		if (g->outputs[i] < 0)
			return aoe_err(AOE_EDATA, "%s: empty output name",
			    where);
	v = cJSON_GetObjectItemCaseSensitive(root, "nodes");
	if (!cJSON_IsArray(v))
		return aoe_err(AOE_EDATA, "%s: \"nodes\" must be an array",
		    where);
	cJSON_ArrayForEach(e, v) {
		const cJSON *nm = cJSON_GetObjectItemCaseSensitive(e, "name");
		const cJSON *ot = cJSON_GetObjectItemCaseSensitive(e,
		    "op_type");
		const cJSON *dm = cJSON_GetObjectItemCaseSensitive(e,
		    "domain");
		const cJSON *at = cJSON_GetObjectItemCaseSensitive(e, "attrs");
		int *in = NULL, *out = NULL, nin = 0, nout = 0, ni;

		if (!cJSON_IsString(nm) || !cJSON_IsString(ot) ||
		    *ot->valuestring == '\0')
			return aoe_err(AOE_EDATA, "%s: a node needs \"name\" "
			    "and \"op_type\" strings", where);
		if (aoe_op_internal(ot->valuestring))
			return aoe_err(AOE_EDATA, "%s: node '%s': op_type '%s' "
			    "is internal to libaoe", where, nm->valuestring,
			    ot->valuestring);
		/* Tensors not declared are values whose shapes are inferred. */
		if ((rc = names(cJSON_GetObjectItemCaseSensitive(e, "inputs"),
		    g, &in, &nin, 1, "inputs", where)) < 0 ||
		    (rc = names(cJSON_GetObjectItemCaseSensitive(e,
		    "outputs"), g, &out, &nout, 1, "outputs", where)) < 0) {
			free(in);
			free(out);
			return rc;
		}
		ni = aoe_graph_add_node(g, nm->valuestring, ot->valuestring,
		    nin, in, nout, out);
		free(in);
		free(out);
		if (cJSON_IsString(dm) && *dm->valuestring)
			g->nodes[ni].domain = aoe_xstrdup(dm->valuestring);
		if (at != NULL && !cJSON_IsObject(at))
			return aoe_err(AOE_EDATA, "%s: node '%s': \"attrs\" "
			    "must be an object", where, nm->valuestring);
		if (at)
			for (const cJSON *a = at->child; a; a = a->next)
				if ((rc = attr_from_json(a, g, &g->nodes[ni],
				    where)) < 0)
					return rc;
	}
	return aoe_onnx_fill(g);
}

int
aoe_json_load(const char *path, aoe_graph **gp)
{
	return aoe_load_file(path, aoe_json_load_mem, gp);
}

int
aoe_json_load_mem(const void *buf, size_t len, const char *path,
    aoe_graph **gp)
{
	const char *what = path ? path : "(buffer)";
	cJSON *root;
	aoe_graph *g;
	int rc;

	*gp = NULL;
	root = cJSON_ParseWithLength((const char *)buf, len);
	if (root == NULL)
		return aoe_err(AOE_EDATA, "%s: malformed JSON", what);
	g = aoe_graph_new("main");
	rc = graph_from_json(root, g, what, 0);
	cJSON_Delete(root);
	if (rc < 0) {
		aoe_graph_free(g);
		return rc;
	}
	*gp = g;
	return 0;
}

/* Whether a model in memory is an aoe-graph file: a JSON object. */
static int
is_json(const uint8_t *buf, size_t len)
{
	size_t i = 0;

	while (i < len && (buf[i] == ' ' || buf[i] == '\n' ||
	    buf[i] == '\t' || buf[i] == '\r'))
		i++;
	return i < len && buf[i] == '{';
}

int
aoe_model_load(const char *path, aoe_graph **gp)
{
	/* Peek: aoe-graph files are JSON objects; ONNX is binary. */
	if (strcmp(path, "-") == 0) {
		/* Stdin can be read only once: JSON is the stream format. */
		return aoe_json_load(path, gp);
	}
	return aoe_load_file(path, aoe_model_load_mem, gp);
}

int
aoe_model_load_mem(const void *buf, size_t len, const char *path,
    aoe_graph **gp)
{
	return is_json(buf, len) ? aoe_json_load_mem(buf, len, path, gp) :
	    aoe_onnx_load_mem(buf, len, path, gp);
}
