/*
 * onnx.c - import ONNX models and tensors through protobuf-c.
 *
 * The C bindings are generated at build time from the system's onnx.proto,
 * so the schema is Debian's and never a copy of ours.
 */
#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"
#include "onnx.pb-c.h"

/*
 * Copy a TensorProto's dims, type and data into t.  External data is read
 * from the file named relative to dir.
 */
static int
tensor_from_proto(const Onnx__TensorProto *tp, aoe_tensor *t,
    const char *dir)
{
	int64_t numel = 1;
	size_t es, nb, i;
	uint8_t *dst;

	if (tp->n_dims > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "tensor '%s' has rank %zu, more "
		    "than %d", t->name, tp->n_dims, AOE_MAXDIM);
	for (i = 0; i < tp->n_dims; i++) {
		if (tp->dims[i] < 0)
			return aoe_err(AOE_EDATA, "tensor '%s' has negative "
			    "dimension %lld", t->name,
			    (long long)tp->dims[i]);
		if (tp->dims[i] != 0 && numel > INT64_MAX / tp->dims[i])
			return aoe_err(AOE_ENOMEM, "tensor '%s': shape "
			    "product overflows", t->name);
		numel *= tp->dims[i];
	}
	es = aoe_dtype_size(tp->data_type);
	if (es == 0)
		return aoe_err(AOE_EUNSUP, "tensor '%s' has unsupported data "
		    "type %d", t->name, tp->data_type);
	aoe_tensor_set(t, tp->data_type, (int)tp->n_dims, tp->dims);
	if (numel > AOE_MAX_TENSOR_BYTES / (int64_t)es)
		return aoe_err(AOE_ENOMEM, "tensor '%s' is too large",
		    t->name);
	nb = (size_t)numel * es;
	/*
	 * The buffer is allocated only once the data is known to fill it:
	 * a shape of billions of values beside a few bytes of data is an
	 * error, not an allocation of gigabytes.
	 */
#define ALLOC() do {							\
	if (aoe_tensor_alloc_const(t) < 0)				\
		return -AOE_ENOMEM;					\
	dst = t->data;							\
} while (0)

	if (tp->has_data_location &&
	    tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
		const char *loc = NULL;
		int64_t off = 0, len = -1;
		long size;
		char path[4096];
		FILE *fp;

		for (i = 0; i < tp->n_external_data; i++) {
			const Onnx__StringStringEntryProto *e =
			    tp->external_data[i];
			if (e->key == NULL || e->value == NULL)
				continue;
			if (strcmp(e->key, "location") == 0)
				loc = e->value;
			else if (strcmp(e->key, "offset") == 0)
				off = strtoll(e->value, NULL, 10);
			else if (strcmp(e->key, "length") == 0)
				len = strtoll(e->value, NULL, 10);
		}
		if (loc == NULL || strstr(loc, "..") || loc[0] == '/')
			return aoe_err(AOE_EDATA, "tensor '%s': bad external "
			    "data location", t->name);
		if (len >= 0 && (size_t)len != nb)
			return aoe_err(AOE_EDATA, "tensor '%s': external "
			    "data has %lld bytes, expected %zu", t->name,
			    (long long)len, nb);
		snprintf(path, sizeof(path), "%s/%s", dir, loc);
		if ((fp = fopen(path, "rb")) == NULL)
			return aoe_err(AOE_EIO, "cannot open '%s': %s", path,
			    strerror(errno));
		if (off < 0 || fseek(fp, 0, SEEK_END) != 0 ||
		    (size = ftell(fp)) < 0 || off > size ||
		    (uint64_t)(size - off) < nb) {
			fclose(fp);
			return aoe_err(AOE_EDATA, "tensor '%s': external "
			    "data in '%s' is truncated", t->name, path);
		}
		if (aoe_tensor_alloc_const(t) < 0) {
			fclose(fp);
			return -AOE_ENOMEM;
		}
		dst = t->data;
		if (fseek(fp, (long)off, SEEK_SET) != 0 ||
		    fread(dst, 1, nb, fp) != nb) {
			fclose(fp);
			return aoe_err(AOE_EDATA, "tensor '%s': external "
			    "data in '%s' is truncated", t->name, path);
		}
		fclose(fp);
		return 0;
	}
	if (tp->has_raw_data) {
		if (tp->raw_data.len != nb)
			return aoe_err(AOE_EDATA, "tensor '%s' has %zu bytes "
			    "of data, expected %zu", t->name,
			    tp->raw_data.len, nb);
		ALLOC();
		if (nb)
			memcpy(dst, tp->raw_data.data, nb);
		return 0;
	}

#define TYPED(field, count, ctype) do {					\
	if ((size_t)numel != (count))					\
		return aoe_err(AOE_EDATA, "tensor '%s' has %zu values, "	\
		    "expected %lld", t->name, (size_t)(count),		\
		    (long long)numel);					\
	ALLOC();							\
	for (i = 0; i < (size_t)numel; i++)				\
		((ctype *)dst)[i] = (ctype)tp->field[i];		\
} while (0)

	if (numel == 0) {
		ALLOC();
		return 0;
	}
	switch (tp->data_type) {
	case AOE_F32:
		TYPED(float_data, tp->n_float_data, float);
		break;
	case AOE_F64:
		TYPED(double_data, tp->n_double_data, double);
		break;
	case AOE_I64:
		TYPED(int64_data, tp->n_int64_data, int64_t);
		break;
	case AOE_I32:
		TYPED(int32_data, tp->n_int32_data, int32_t);
		break;
	case AOE_I16:
		TYPED(int32_data, tp->n_int32_data, int16_t);
		break;
	case AOE_U16:
	case AOE_F16:
	case AOE_BF16:
		TYPED(int32_data, tp->n_int32_data, uint16_t);
		break;
	case AOE_I8:
		TYPED(int32_data, tp->n_int32_data, int8_t);
		break;
	case AOE_U8:
	case AOE_BOOL:
		TYPED(int32_data, tp->n_int32_data, uint8_t);
		break;
	case AOE_U32:
		TYPED(uint64_data, tp->n_uint64_data, uint32_t);
		break;
	case AOE_U64:
		TYPED(uint64_data, tp->n_uint64_data, uint64_t);
		break;
	default:
		return aoe_err(AOE_EUNSUP, "tensor '%s' has unsupported "
		    "data type %d", t->name, tp->data_type);
	}
#undef TYPED
#undef ALLOC
	return 0;
}

static int type_from_proto(const Onnx__TypeProto *, aoe_tensor *, int);
static int graph_from_gp(const Onnx__GraphProto *gp, const char *dir,
    const char *src, aoe_graph *g, int sub);

static int
attr_from_proto(const Onnx__AttributeProto *ap, aoe_node *n,
    const char *dir, const char *src, int opset)
{
	aoe_attr *a;
	size_t i;
	int rc;

	if (ap->name == NULL)
		return aoe_err(AOE_EDATA, "node '%s' has an attribute with "
		    "no name", n->name);
	a = aoe_node_add_attr(n, ap->name, (aoe_atype)ap->type);
	switch (ap->type) {
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT:
		a->f = ap->f;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT:
		a->i = ap->i;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING:
		a->s = aoe_xcalloc(1, ap->s.len + 1);
		if (ap->s.len)
			memcpy(a->s, ap->s.data, ap->s.len);
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS:
		a->n = (int)ap->n_floats;
		a->floats = aoe_xcalloc(ap->n_floats + 1, sizeof(float));
		for (i = 0; i < ap->n_floats; i++)
			a->floats[i] = ap->floats[i];
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS:
		a->n = (int)ap->n_ints;
		a->ints = aoe_xcalloc(ap->n_ints + 1, sizeof(int64_t));
		for (i = 0; i < ap->n_ints; i++)
			a->ints[i] = ap->ints[i];
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS:
		a->n = (int)ap->n_strings;
		a->strings = aoe_xcalloc(ap->n_strings + 1, sizeof(char *));
		for (i = 0; i < ap->n_strings; i++) {
			a->strings[i] = aoe_xcalloc(1, ap->strings[i].len + 1);
			if (ap->strings[i].len)
				memcpy(a->strings[i], ap->strings[i].data,
				    ap->strings[i].len);
		}
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR:
		if (ap->t == NULL)
			return aoe_err(AOE_EDATA, "node '%s': attribute '%s' "
			    "has no tensor", n->name, ap->name);
		a->t = aoe_xcalloc(1, sizeof(*a->t));
		a->t->name = aoe_xstrdup(ap->t->name ? ap->t->name : ap->name);
		a->t->producer = a->t->last_use = -1;
		a->t->offset = -1;
		a->t->alias = -1;
		if ((rc = tensor_from_proto(ap->t, a->t, dir)) < 0)
			return rc;
		break;
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO:
		/* A type (Optional's): a detached tensor without data. */
		a->t = aoe_xcalloc(1, sizeof(*a->t));
		a->t->name = aoe_xstrdup(ap->name);
		a->t->producer = a->t->last_use = -1;
		a->t->offset = -1;
		a->t->alias = -1;
		a->t->seq_len = -1;
		if (ap->tp == NULL)
			return aoe_err(AOE_EDATA, "node '%s': attribute '%s' "
			    "has no type", n->name, ap->name);
		return type_from_proto(ap->tp, a->t, 0);
	case ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__GRAPH:
		/*
		 * A subgraph (If, Loop, Scan): its own graph, whose names
		 * that it does not define are the enclosing graphs' values
		 * (bound by lib/runtime/ctl.c).
		 */
		if (ap->g == NULL)
			return aoe_err(AOE_EDATA, "node '%s': attribute '%s' "
			    "has no graph", n->name, ap->name);
		a->g = aoe_graph_new(ap->g->name && *ap->g->name ?
		    ap->g->name : ap->name);
		a->g->opset = opset;
		if ((rc = graph_from_gp(ap->g, dir, src, a->g, 1)) < 0) {
			char msg[1024];
			snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
			return aoe_err(-rc, "node '%s', attribute '%s': %s",
			    n->name, ap->name, msg);
		}
		break;
	default:
		/*
		 * Sparse tensors and lists of graphs are kept as a typed,
		 * empty attribute: no supported operator reads them, and
		 * the operator that would is refused as unsupported.
		 */
		break;
	}
	return 0;
}

/*
 * Set a tensor's type and shape from a TypeProto: a tensor, a sequence of
 * tensors, or an optional of either (see aoe_tensor).
 */
static int
type_from_proto(const Onnx__TypeProto *tp, aoe_tensor *t, int depth)
{
	const Onnx__TypeProto__Tensor *tt;
	size_t i;

	/* A subgraph's value may leave its type to the node that runs it. */
	if (tp == NULL || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) {
		t->dtype = AOE_UNDEFINED;
		t->ndim = -1;
		return 0;
	}
	if (tp != NULL && tp->value_case ==
	    ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE && depth == 0 &&
	    tp->optional_type != NULL) {
		t->optional = 1;
		return type_from_proto(tp->optional_type->elem_type, t, 1);
	}
	if (tp != NULL && tp->value_case ==
	    ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE && depth < 2 &&
	    tp->sequence_type != NULL) {
		t->vkind = AOE_V_SEQ;
		t->seq_len = -1;
		return type_from_proto(tp->sequence_type->elem_type, t, 2);
	}
	if (tp == NULL || tp->value_case !=
	    ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
		return aoe_err(AOE_EUNSUP, "'%s' is not a tensor, a sequence of "
		    "tensors or an optional of them (maps and nested "
		    "sequences are not supported)", t->name);
	tt = tp->tensor_type;
	t->dtype = tt->has_elem_type ? tt->elem_type : AOE_UNDEFINED;
	if (tt->shape == NULL) {
		t->ndim = -1;
		return 0;
	}
	if (tt->shape->n_dim > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "'%s' has rank %zu, more than %d",
		    t->name, tt->shape->n_dim, AOE_MAXDIM);
	t->ndim = (int)tt->shape->n_dim;
	for (i = 0; i < tt->shape->n_dim; i++) {
		const Onnx__TensorShapeProto__Dimension *d =
		    tt->shape->dim[i];
		free(t->dim_param[i]);
		t->dim_param[i] = NULL;
		if (d->value_case ==
		    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
		    d->dim_value >= 0) {
			t->dims[i] = d->dim_value;
		} else {
			t->dims[i] = -1;
			if (d->value_case ==
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
			    d->dim_param && *d->dim_param)
				t->dim_param[i] = aoe_xstrdup(d->dim_param);
		}
	}
	return 0;
}

/* Set a tensor's type and shape from a ValueInfoProto. */
static int
valueinfo(const Onnx__ValueInfoProto *vi, aoe_tensor *t)
{
	t->vkind = AOE_V_TENSOR;
	t->optional = 0;
	return type_from_proto(vi->type, t, 0);
}

/*
 * Whether an output or a value_info declares a sequence or an optional:
 * its kind and, until inference gives the types, its dtype (SequenceMap
 * reads its body's); or the error for a type libaoe does not know.
 */
static int
declared_kind(const Onnx__ValueInfoProto *vi, aoe_tensor *t)
{
	aoe_tensor tmp;
	int rc, i;

	if (vi->type == NULL)
		return 0;
	memset(&tmp, 0, sizeof(tmp));
	tmp.name = t->name;
	rc = type_from_proto(vi->type, &tmp, 0);
	for (i = 0; i < AOE_MAXDIM; i++)
		free(tmp.dim_param[i]);
	if (rc < 0)
		return rc;
	if (t->kind != AOE_T_CONST) {
		t->vkind = tmp.vkind;
		t->optional = tmp.optional;
		if (t->dtype == AOE_UNDEFINED)
			t->dtype = tmp.dtype;
	}
	return 0;
}

/*
 * The graph gp into g; sub for a subgraph, whose inputs may have no
 * shape (the node that runs it gives them one) and whose initializers
 * the aoe-graph format cannot refer to (they are copied).
 */
static int
graph_from_gp(const Onnx__GraphProto *gp, const char *dir, const char *src,
    aoe_graph *g, int sub)
{
	size_t i, j;
	int rc = 0, ti;

	for (i = 0; i < gp->n_initializer; i++) {
		const Onnx__TensorProto *tp = gp->initializer[i];
		aoe_tensor *t;

		if (tp->name == NULL || *tp->name == '\0') {
			rc = aoe_err(AOE_EDATA, "initializer %zu has no name",
			    i);
			goto out;
		}
		ti = aoe_graph_tensor(g, tp->name);
		t = g->tensors[ti];
		if (t->kind == AOE_T_CONST) {
			rc = aoe_err(AOE_EDATA, "initializer '%s' is defined "
			    "twice", tp->name);
			goto out;
		}
		if ((rc = tensor_from_proto(tp, t, dir)) < 0)
			goto out;
		if (!sub) {
			if (src != NULL)
				t->src_file = aoe_xstrdup(src);
			t->src_name = aoe_xstrdup(tp->name);
		}
	}
	/* Inputs that are also initializers are constants, not inputs. */
	g->inputs = aoe_xcalloc(gp->n_input + 1, sizeof(int));
	for (i = 0; i < gp->n_input; i++) {
		const Onnx__ValueInfoProto *vi = gp->input[i];
		aoe_tensor *t;

		if (vi->name == NULL || *vi->name == '\0') {
			rc = aoe_err(AOE_EDATA, "graph input %zu has no name",
			    i);
			goto out;
		}
		ti = aoe_graph_tensor(g, vi->name);
		t = g->tensors[ti];
		if (t->kind == AOE_T_CONST)
			continue;
		if ((rc = valueinfo(vi, t)) < 0)
			goto out;
		if (t->ndim < 0 && t->vkind == AOE_V_TENSOR && !sub) {
			rc = aoe_err(AOE_EUNSUP, "input '%s' has no shape",
			    t->name);
			goto out;
		}
		t->kind = AOE_T_INPUT;
		g->inputs[g->ninputs++] = ti;
	}
	g->outputs = aoe_xcalloc(gp->n_output + 1, sizeof(int));
	for (i = 0; i < gp->n_output; i++) {
		if (gp->output[i]->name == NULL || !*gp->output[i]->name) {
			rc = aoe_err(AOE_EDATA, "graph output %zu has no name",
			    i);
			goto out;
		}
		g->outputs[g->noutputs++] = ti = aoe_graph_tensor(g,
		    gp->output[i]->name);
		if ((rc = declared_kind(gp->output[i], g->tensors[ti])) < 0)
			goto out;
		/*
		 * The declared type and shape (its dynamic dims named), which
		 * the session API shows; preparing the graph infers them.
		 */
		if (!sub && g->tensors[ti]->kind == AOE_T_VALUE &&
		    (rc = valueinfo(gp->output[i], g->tensors[ti])) < 0)
			goto out;
	}
	for (i = 0; i < gp->n_value_info; i++) {
		const Onnx__ValueInfoProto *vi = gp->value_info[i];
		if (vi->name == NULL || *vi->name == '\0')
			continue;
		ti = aoe_graph_tensor(g, vi->name);
		if ((rc = declared_kind(vi, g->tensors[ti])) < 0)
			goto out;
	}
	for (i = 0; i < gp->n_node; i++) {
		const Onnx__NodeProto *np = gp->node[i];
		int *in, *out, ni;
		char namebuf[64];
		const char *name = np->name;
		aoe_node *n;

		if (np->op_type == NULL || *np->op_type == '\0') {
			rc = aoe_err(AOE_EDATA, "node %zu has no op_type", i);
			goto out;
		}
		if (np->domain == NULL || *np->domain == '\0') {
			if (aoe_op_internal(np->op_type)) {
				rc = aoe_err(AOE_EDATA, "node %zu: op_type '%s' "
				    "is internal to libaoe", i, np->op_type);
				goto out;
			}
		}
		if (name == NULL || *name == '\0') {
			snprintf(namebuf, sizeof(namebuf), "%s_%zu",
			    np->op_type, i);
			name = namebuf;
		}
		in = aoe_xcalloc(np->n_input + 1, sizeof(int));
		out = aoe_xcalloc(np->n_output + 1, sizeof(int));
		for (j = 0; j < np->n_input; j++)
			in[j] = np->input[j] && *np->input[j] ?
			    aoe_graph_tensor(g, np->input[j]) : -1;
		for (j = 0; j < np->n_output; j++)
			out[j] = np->output[j] && *np->output[j] ?
			    aoe_graph_tensor(g, np->output[j]) : -1;
		ni = aoe_graph_add_node(g, name, np->op_type,
		    (int)np->n_input, in, (int)np->n_output, out);
		free(in);
		free(out);
		n = &g->nodes[ni];
		if (np->domain && *np->domain &&
		    strcmp(np->domain, "ai.onnx") != 0)
			n->domain = aoe_xstrdup(np->domain);
		for (j = 0; j < np->n_attribute; j++)
			if ((rc = attr_from_proto(np->attribute[j], n,
			    dir, src, g->opset)) < 0)
				goto out;
	}
out:
	return rc;
}

static int
graph_from_proto(const Onnx__ModelProto *mp, const char *path, aoe_graph *g)
{
	char *pathcopy = aoe_xstrdup(path ? path : "."), *abspath;
	size_t i;
	int rc;

	/*
	 * Constants refer to the model by its absolute path, so that an
	 * aoe-graph written anywhere still finds them; those of a model
	 * read from memory (path NULL) refer to nothing and are written
	 * whole.
	 */
	abspath = path ? realpath(path, NULL) : NULL;
	for (i = 0; i < mp->n_opset_import; i++) {
		const Onnx__OperatorSetIdProto *os = mp->opset_import[i];
		if ((os->domain == NULL || *os->domain == '\0' ||
		    strcmp(os->domain, "ai.onnx") == 0) && os->has_version)
			g->opset = (int)os->version;
	}
	rc = graph_from_gp(mp->graph, dirname(pathcopy),
	    abspath ? abspath : path, g, 0);
	free(abspath);
	free(pathcopy);
	return rc;
}

int
aoe_onnx_load(const char *path, aoe_graph **gp)
{
	return aoe_load_file(path, aoe_onnx_load_mem, gp);
}

int
aoe_onnx_load_mem(const void *buf, size_t len, const char *path,
    aoe_graph **gp)
{
	const char *what = path ? path : "(buffer)";
	Onnx__ModelProto *mp;
	aoe_graph *g;
	int rc;

	*gp = NULL;
	mp = onnx__model_proto__unpack(NULL, len, buf);
	if (mp == NULL)
		return aoe_err(AOE_EDATA, "'%s' is not a valid ONNX model "
		    "(protobuf parse failed)", what);
	if (mp->graph == NULL) {
		onnx__model_proto__free_unpacked(mp, NULL);
		return aoe_err(AOE_EDATA, "'%s' is not a valid ONNX model "
		    "(no graph)", what);
	}
	g = aoe_graph_new(mp->graph->name && *mp->graph->name ?
	    mp->graph->name : "main");
	if (path)
		g->source = aoe_xstrdup(path);
	rc = graph_from_proto(mp, path, g);
	onnx__model_proto__free_unpacked(mp, NULL);
	if (rc < 0) {
		char msg[1024];
		snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
		aoe_graph_free(g);
		return aoe_err(-rc, "%s: %s", what, msg);
	}
	*gp = g;
	return 0;
}

int
aoe_onnx_load_tensor(const char *path, aoe_tensor *t)
{
	uint8_t *buf;
	size_t len;
	Onnx__TensorProto *tp;
	char *pathcopy;
	int rc;

	if ((rc = aoe_read_file(path, &buf, &len)) < 0)
		return rc;
	tp = onnx__tensor_proto__unpack(NULL, len, buf);
	free(buf);
	if (tp == NULL)
		return aoe_err(AOE_EDATA, "'%s' is not a valid ONNX tensor",
		    path);
	if (t->name == NULL)
		t->name = aoe_xstrdup(tp->name ? tp->name : path);
	pathcopy = aoe_xstrdup(path);
	rc = tensor_from_proto(tp, t, dirname(pathcopy));
	free(pathcopy);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	return rc;
}

/*
 * SequenceProto and OptionalProto are in onnx-data.proto, which Debian
 * does not install, so they are read here from protobuf's wire format:
 * both have elem_type (field 2: 1 tensor, 3 sequence), a sequence its
 * tensor_values (3) and an optional its tensor_value (3) or
 * sequence_value (5).  Their TensorProtos go through protobuf-c.
 */
typedef struct pbuf {
	const uint8_t *p, *end;
} pbuf;

static int
pb_varint(pbuf *b, uint64_t *v)
{
	int shift;

	*v = 0;
	for (shift = 0; shift < 64 && b->p < b->end; shift += 7) {
		uint8_t c = *b->p++;
		*v |= (uint64_t)(c & 0x7f) << shift;
		if ((c & 0x80) == 0)
			return 0;
	}
	return -1;
}

/*
 * The next field of b: its number and, for a length-delimited one, its
 * bytes in *sub (else sub is empty and *v its value).  0, 1 at the end,
 * or -1 when the bytes are not protobuf.
 */
static int
pb_next(pbuf *b, int *field, uint64_t *v, pbuf *sub)
{
	uint64_t key;

	sub->p = sub->end = NULL;
	if (b->p >= b->end)
		return 1;
	if (pb_varint(b, &key) < 0 || key >> 3 == 0 || key >> 3 > INT32_MAX)
		return -1;
	*field = (int)(key >> 3);
	switch (key & 7) {
	case 0:
		return pb_varint(b, v);
	case 1:
	case 5:
		if ((size_t)(b->end - b->p) < ((key & 7) == 1 ? 8u : 4u))
			return -1;
		b->p += (key & 7) == 1 ? 8 : 4;
		return 0;
	case 2:
		if (pb_varint(b, v) < 0 || *v > (uint64_t)(b->end - b->p))
			return -1;
		sub->p = b->p;
		sub->end = b->p + *v;
		b->p += *v;
		return 0;
	default:
		return -1;
	}
}

/* A TensorProto's bytes as a new owned tensor in *e. */
static int
pb_tensor(const pbuf *b, const char *name, const char *dir, aoe_tensor **e)
{
	Onnx__TensorProto *tp;
	aoe_tensor *t;
	int rc;

	*e = NULL;
	tp = onnx__tensor_proto__unpack(NULL, (size_t)(b->end - b->p), b->p);
	if (tp == NULL)
		return aoe_err(AOE_EDATA, "'%s': an element is not a valid "
		    "ONNX tensor", name);
	t = aoe_xcalloc(1, sizeof(*t));
	t->name = aoe_xstrdup(name);
	t->producer = t->last_use = t->alias = -1;
	t->offset = -1;
	t->seq_len = -1;
	rc = tensor_from_proto(tp, t, dir);
	onnx__tensor_proto__free_unpacked(tp, NULL);
	if (rc < 0) {
		aoe_tensor_free(t);
		return rc;
	}
	*e = t;
	return 0;
}

/*
 * A SequenceProto's tensors into t's sequence, and t's dtype and shape
 * from them: the elements' dtype (t's when there are none) and each
 * dimension that all of them share (-1 one that varies, rank -1 when
 * the ranks differ).
 */
static int
pb_sequence(pbuf b, aoe_tensor *t, const char *dir)
{
	aoe_seq *s = aoe_seq_of(t);
	aoe_tensor *e;
	pbuf sub;
	uint64_t v;
	int field, r, rc, i;

	aoe_seq_clear(s);
	while ((r = pb_next(&b, &field, &v, &sub)) == 0) {
		if (field != 3)
			continue;
		if (sub.p == NULL)
			return aoe_err(AOE_EDATA, "'%s' is not a valid "
			    "sequence", t->name);
		if ((rc = pb_tensor(&sub, t->name, dir, &e)) < 0)
			return rc;
		if (s->n > 0 && e->dtype != t->dtype) {
			rc = aoe_err(AOE_EDATA, "sequence '%s' mixes %s and "
			    "%s elements", t->name, aoe_dtype_name(t->dtype),
			    aoe_dtype_name(e->dtype));
			aoe_tensor_free(e);
			return rc;
		}
		if (s->n == 0)
			aoe_tensor_set(t, e->dtype, e->ndim, e->dims);
		else if (t->ndim != e->ndim)
			t->ndim = -1;
		else
			for (i = 0; i < t->ndim; i++)
				if (t->dims[i] != e->dims[i])
					t->dims[i] = -1;
		if ((rc = aoe_seq_insert(s, s->n, e)) < 0)
			return rc;
	}
	if (r < 0)
		return aoe_err(AOE_EDATA, "'%s' is not a valid sequence",
		    t->name);
	t->seq_len = s->n;
	return 0;
}

/* An OptionalProto into t (of t's kind): present, and the value. */
static int
pb_optional(pbuf b, aoe_tensor *t, const char *dir)
{
	aoe_tensor *e;
	pbuf sub;
	uint64_t v;
	int field, r, rc;

	t->present = 0;
	while ((r = pb_next(&b, &field, &v, &sub)) == 0) {
		if ((field != 3 && field != 5) || sub.p == NULL)
			continue;
		if ((field == 5) != (t->vkind == AOE_V_SEQ))
			return aoe_err(AOE_EDATA, "optional '%s' holds a %s, "
			    "expected a %s", t->name, field == 5 ?
			    "sequence" : "tensor", t->vkind == AOE_V_SEQ ?
			    "sequence" : "tensor");
		if (field == 5) {
			if ((rc = pb_sequence(sub, t, dir)) < 0)
				return rc;
		} else {
			if ((rc = pb_tensor(&sub, t->name, dir, &e)) < 0)
				return rc;
			if (t->owned)
				free(t->data);
			aoe_tensor_set(t, e->dtype, e->ndim, e->dims);
			t->data = e->data;
			t->owned = 1;
			e->data = NULL;
			aoe_tensor_free(e);
		}
		t->present = 1;
	}
	if (r < 0)
		return aoe_err(AOE_EDATA, "'%s' is not a valid optional",
		    t->name);
	return 0;
}

int
aoe_onnx_load_value(const char *path, aoe_tensor *t)
{
	uint8_t *buf;
	size_t len;
	char *pathcopy;
	pbuf b;
	int rc;

	if (!aoe_is_value(t))
		return aoe_onnx_load_tensor(path, t);
	if ((rc = aoe_read_file(path, &buf, &len)) < 0)
		return rc;
	if (t->name == NULL)
		t->name = aoe_xstrdup(path);
	pathcopy = aoe_xstrdup(path);
	b.p = buf;
	b.end = buf + len;
	rc = t->optional ? pb_optional(b, t, dirname(pathcopy)) :
	    pb_sequence(b, t, dirname(pathcopy));
	free(pathcopy);
	free(buf);
	return rc;
}

/*
 * Fill the constants of an aoe-graph(5) graph that refer to a model file,
 * parsing each file once.
 */
int
aoe_onnx_fill(aoe_graph *g)
{
	int i, j, rc;

	for (i = 0; i < g->ntensors; i++) {
		aoe_tensor *t = g->tensors[i];
		const char *file = t->src_file;
		Onnx__ModelProto *mp;
		uint8_t *buf;
		size_t len, k;
		char *pathcopy;

		if (t->kind != AOE_T_CONST || t->data || file == NULL)
			continue;
		if ((rc = aoe_read_file(file, &buf, &len)) < 0)
			return rc;
		mp = onnx__model_proto__unpack(NULL, len, buf);
		free(buf);
		if (mp == NULL || mp->graph == NULL) {
			if (mp)
				onnx__model_proto__free_unpacked(mp, NULL);
			return aoe_err(AOE_EDATA, "'%s' is not a valid ONNX "
			    "model", file);
		}
		pathcopy = aoe_xstrdup(file);
		rc = 0;
		for (j = i; j < g->ntensors && rc == 0; j++) {
			aoe_tensor *u = g->tensors[j];
			aoe_tensor tmp;

			if (u->kind != AOE_T_CONST || u->data ||
			    u->src_file == NULL ||
			    strcmp(u->src_file, file) != 0)
				continue;
			for (k = 0; k < mp->graph->n_initializer; k++)
				if (mp->graph->initializer[k]->name &&
				    strcmp(mp->graph->initializer[k]->name,
				    u->src_name) == 0)
					break;
			if (k == mp->graph->n_initializer) {
				rc = aoe_err(AOE_EDATA, "'%s' has no "
				    "initializer '%s'", file, u->src_name);
				break;
			}
			memset(&tmp, 0, sizeof(tmp));
			tmp.name = u->name;
			if ((rc = tensor_from_proto(mp->graph->initializer[k],
			    &tmp, dirname(pathcopy))) < 0)
				break;
			if (tmp.dtype != u->dtype || tmp.ndim != u->ndim ||
			    memcmp(tmp.dims, u->dims,
			    (size_t)u->ndim * sizeof(int64_t)) != 0) {
				free(tmp.data);
				rc = aoe_err(AOE_EDATA, "constant '%s' does not "
				    "match initializer '%s' in '%s' (the model "
				    "changed?)", u->name, u->src_name, file);
				break;
			}
			u->data = tmp.data;
			u->owned = 1;
		}
		free(pathcopy);
		onnx__model_proto__free_unpacked(mp, NULL);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/*
 * Write g as an ONNX model (opset g->opset, every constant as an
 * initializer with raw data).  Used for the bundled example and for test
 * fixtures, so that the project makes its own models.
 */
/*
 * What a graph becomes for protobuf-c's packer: the messages point into
 * these arrays and into the graph itself, so nothing is copied.
 */
typedef struct onnx_out {
	Onnx__TensorProto *inits, **initp;
	int ninit;
	Onnx__ValueInfoProto *vis, **inp, **outp;
	Onnx__TypeProto *types;
	Onnx__TypeProto__Tensor *tts;
	Onnx__TensorShapeProto *shapes;
	Onnx__TensorShapeProto__Dimension *dims, **dimp;
	Onnx__NodeProto *nodes, **nodep;
	Onnx__AttributeProto *attrs, **attrp;
	Onnx__TypeProto *atypes;
	Onnx__TypeProto__Tensor *atts;
	int nnodes;
} onnx_out;

/* Every constant with data, as a raw-data initializer. */
static void
out_inits(onnx_out *w, const aoe_graph *g)
{
	int i;

	w->inits = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(*w->inits));
	w->initp = aoe_xcalloc((size_t)g->ntensors + 1, sizeof(*w->initp));
	for (i = 0; i < g->ntensors; i++) {
		const aoe_tensor *t = g->tensors[i];
		Onnx__TensorProto *tp = &w->inits[w->ninit];
		if (t->kind != AOE_T_CONST || t->data == NULL)
			continue;
		onnx__tensor_proto__init(tp);
		tp->name = t->name;
		tp->n_dims = (size_t)t->ndim;
		tp->dims = (int64_t *)t->dims;
		tp->has_data_type = 1;
		tp->data_type = t->dtype;
		tp->has_raw_data = 1;
		tp->raw_data.len = aoe_tensor_nbytes(t);
		tp->raw_data.data = t->data;
		w->initp[w->ninit++] = tp;
	}
}

/* The type and shape of tensor t (unknown dims by name) as vis[i]. */
static void
out_value_info(onnx_out *w, int i, const aoe_tensor *t, int *nd)
{
	int j;

	onnx__value_info_proto__init(&w->vis[i]);
	onnx__type_proto__init(&w->types[i]);
	onnx__type_proto__tensor__init(&w->tts[i]);
	onnx__tensor_shape_proto__init(&w->shapes[i]);
	w->vis[i].name = t->name;
	w->vis[i].type = &w->types[i];
	w->types[i].value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
	w->types[i].tensor_type = &w->tts[i];
	w->tts[i].has_elem_type = 1;
	w->tts[i].elem_type = t->dtype ? t->dtype : AOE_F32;
	if (t->ndim < 0)
		return;
	w->tts[i].shape = &w->shapes[i];
	w->shapes[i].n_dim = (size_t)t->ndim;
	w->shapes[i].dim = &w->dimp[*nd];
	for (j = 0; j < t->ndim; j++, (*nd)++) {
		Onnx__TensorShapeProto__Dimension *d = &w->dims[*nd];
		onnx__tensor_shape_proto__dimension__init(d);
		w->dimp[*nd] = d;
		if (t->dims[j] >= 0) {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
			d->dim_value = t->dims[j];
		} else {
			d->value_case =
			    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
			d->dim_param = t->dim_param[j] ? t->dim_param[j] :
			    "dim";
		}
	}
}

/* The graph's inputs, then its outputs. */
static void
out_io(onnx_out *w, const aoe_graph *g)
{
	size_t nio = (size_t)(g->ninputs + g->noutputs);
	int i, nd = 0;

	w->vis = aoe_xcalloc(nio + 1, sizeof(*w->vis));
	w->types = aoe_xcalloc(nio + 1, sizeof(*w->types));
	w->tts = aoe_xcalloc(nio + 1, sizeof(*w->tts));
	w->shapes = aoe_xcalloc(nio + 1, sizeof(*w->shapes));
	w->dims = aoe_xcalloc(nio * AOE_MAXDIM + 1, sizeof(*w->dims));
	w->dimp = aoe_xcalloc(nio * AOE_MAXDIM + 1, sizeof(*w->dimp));
	w->inp = aoe_xcalloc((size_t)g->ninputs + 1, sizeof(*w->inp));
	w->outp = aoe_xcalloc((size_t)g->noutputs + 1, sizeof(*w->outp));
	for (i = 0; i < g->ninputs + g->noutputs; i++) {
		out_value_info(w, i, g->tensors[i < g->ninputs ?
		    g->inputs[i] : g->outputs[i - g->ninputs]], &nd);
		if (i < g->ninputs)
			w->inp[i] = &w->vis[i];
		else
			w->outp[i - g->ninputs] = &w->vis[i];
	}
}

/*
 * Attribute a as ap, with tp and tt for a type (a tensor type without
 * shape: what Optional's needs); -AOE_EUNSUP for a type the writer does
 * not know.
 */
static int
out_attr(Onnx__AttributeProto *ap, const aoe_attr *a, Onnx__TypeProto *tp,
    Onnx__TypeProto__Tensor *tt)
{
	onnx__attribute_proto__init(ap);
	ap->name = a->name;
	ap->has_type = 1;
	ap->type = (Onnx__AttributeProto__AttributeType)a->type;
	switch (a->type) {
	case AOE_A_INT:
		ap->has_i = 1;
		ap->i = a->i;
		return 0;
	case AOE_A_FLOAT:
		ap->has_f = 1;
		ap->f = a->f;
		return 0;
	case AOE_A_STRING:
		ap->has_s = 1;
		ap->s.data = (uint8_t *)a->s;
		ap->s.len = strlen(a->s);
		return 0;
	case AOE_A_INTS:
		ap->n_ints = (size_t)a->n;
		ap->ints = a->ints;
		return 0;
	case AOE_A_FLOATS:
		ap->n_floats = (size_t)a->n;
		ap->floats = a->floats;
		return 0;
	case AOE_A_TYPE_PROTO:
		if (a->t == NULL || aoe_is_value(a->t))
			break;
		onnx__type_proto__init(tp);
		onnx__type_proto__tensor__init(tt);
		tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
		tp->tensor_type = tt;
		tt->has_elem_type = 1;
		tt->elem_type = a->t->dtype;
		ap->tp = tp;
		return 0;
	default:
		break;
	}
	return aoe_err(AOE_EUNSUP, "cannot write attribute '%s' of type %d",
	    a->name, a->type);
}

/* Every node with its inputs, outputs and attributes. */
static int
out_nodes(onnx_out *w, const aoe_graph *g)
{
	int i, j, nattr = 0, ai = 0, rc = 0, r;

	for (i = 0; i < g->nnodes; i++)
		nattr += g->nodes[i].nattr;
	w->nnodes = g->nnodes;
	w->nodes = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(*w->nodes));
	w->nodep = aoe_xcalloc((size_t)g->nnodes + 1, sizeof(*w->nodep));
	w->attrs = aoe_xcalloc((size_t)nattr + 1, sizeof(*w->attrs));
	w->attrp = aoe_xcalloc((size_t)nattr + 1, sizeof(*w->attrp));
	w->atypes = aoe_xcalloc((size_t)nattr + 1, sizeof(*w->atypes));
	w->atts = aoe_xcalloc((size_t)nattr + 1, sizeof(*w->atts));
	for (i = 0; i < g->nnodes; i++) {
		const aoe_node *n = &g->nodes[i];
		Onnx__NodeProto *np = &w->nodes[i];
		onnx__node_proto__init(np);
		np->name = n->name;
		np->op_type = n->op_type;
		np->n_input = (size_t)(n->nin - n->nimplicit);
		np->input = aoe_xcalloc((size_t)n->nin + 1, sizeof(char *));
		for (j = 0; j < n->nin - n->nimplicit; j++)
			np->input[j] = n->in[j] >= 0 ?
			    g->tensors[n->in[j]]->name : "";
		np->n_output = (size_t)n->nout;
		np->output = aoe_xcalloc((size_t)n->nout + 1, sizeof(char *));
		for (j = 0; j < n->nout; j++)
			np->output[j] = n->out[j] >= 0 ?
			    g->tensors[n->out[j]]->name : "";
		np->n_attribute = (size_t)n->nattr;
		np->attribute = &w->attrp[ai];
		for (j = 0; j < n->nattr; j++, ai++) {
			w->attrp[ai] = &w->attrs[ai];
			if ((r = out_attr(&w->attrs[ai], &n->attrs[j],
			    &w->atypes[ai], &w->atts[ai])) < 0 &&
			    rc == 0)
				rc = r;
		}
		w->nodep[i] = np;
	}
	return rc;
}

static void
out_free(onnx_out *w)
{
	int i;

	for (i = 0; i < w->nnodes; i++) {
		free(w->nodes[i].input);
		free(w->nodes[i].output);
	}
	free(w->nodes);
	free(w->nodep);
	free(w->attrs);
	free(w->attrp);
	free(w->atypes);
	free(w->atts);
	free(w->inits);
	free(w->initp);
	free(w->vis);
	free(w->types);
	free(w->tts);
	free(w->shapes);
	free(w->dims);
	free(w->dimp);
	free(w->inp);
	free(w->outp);
}

/* Pack the model and write it to path. */
static int
out_write(const Onnx__ModelProto *mp, const char *path)
{
	size_t len = onnx__model_proto__get_packed_size(mp);
	uint8_t *buf = aoe_xmalloc(len);
	FILE *fp;
	int rc = 0;

	onnx__model_proto__pack(mp, buf);
	if ((fp = fopen(path, "wb")) == NULL)
		rc = aoe_err(AOE_EIO, "cannot open '%s': %s", path,
		    strerror(errno));
	else {
		if (fwrite(buf, 1, len, fp) != len)
			rc = aoe_err(AOE_EIO, "cannot write '%s'", path);
		if (fclose(fp) != 0 && rc == 0)
			rc = aoe_err(AOE_EIO, "cannot write '%s'", path);
	}
	free(buf);
	return rc;
}

int
aoe_onnx_save(const aoe_graph *g, const char *path)
{
	Onnx__ModelProto mp = ONNX__MODEL_PROTO__INIT;
	Onnx__GraphProto gp = ONNX__GRAPH_PROTO__INIT;
	Onnx__OperatorSetIdProto os = ONNX__OPERATOR_SET_ID_PROTO__INIT;
	Onnx__OperatorSetIdProto *osp = &os;
	onnx_out w;
	int rc;

	memset(&w, 0, sizeof(w));
	out_inits(&w, g);
	out_io(&w, g);
	rc = out_nodes(&w, g);
	os.version = g->opset;
	os.has_version = 1;
	os.domain = "";
	mp.has_ir_version = 1;
	mp.ir_version = 8;
	mp.producer_name = "aoe";
	mp.producer_version = AOE_VERSION;
	mp.n_opset_import = 1;
	mp.opset_import = &osp;
	mp.graph = &gp;
	gp.name = g->name;
	gp.n_node = (size_t)g->nnodes;
	gp.node = w.nodep;
	gp.n_initializer = (size_t)w.ninit;
	gp.initializer = w.initp;
	gp.n_input = (size_t)g->ninputs;
	gp.input = w.inp;
	gp.n_output = (size_t)g->noutputs;
	gp.output = w.outp;
	if (rc == 0)
		rc = out_write(&mp, path);
	out_free(&w);
	return rc;
}
