/*
 * aoe_ir.h - the graph IR: tensors, attributes, schedules,
 * nodes and graphs; ONNX and aoe-graph(5) input and output; shape
 * binding; the canonical signature of an operator case and its key.
 */
#ifndef AOE_IR_H
#define AOE_IR_H

#include "aoe_base.h"

/*
 * Element types.  The values are ONNX's TensorProto.DataType codes so that
 * import needs no translation.
 */
typedef enum {
	AOE_UNDEFINED = 0,
	AOE_F32 = 1,
	AOE_U8 = 2,
	AOE_I8 = 3,
	AOE_U16 = 4,
	AOE_I16 = 5,
	AOE_I32 = 6,
	AOE_I64 = 7,
	AOE_STRING = 8,
	AOE_BOOL = 9,
	AOE_F16 = 10,
	AOE_F64 = 11,
	AOE_U32 = 12,
	AOE_U64 = 13,
	AOE_BF16 = 16
} aoe_dtype;

/* Size of one element in bytes, 0 for unsupported types. */
size_t aoe_dtype_size(int dtype);
/* Lower-case name ("float32", "int64"), or "unknown". */
const char *aoe_dtype_name(int dtype);
/* The dtype for a name, or AOE_UNDEFINED. */
int aoe_dtype_from_name(const char *name);

#define AOE_MAXDIM 8

/* Largest tensor libaoe accepts, in bytes (a guard against absurd shapes). */
#define AOE_MAX_TENSOR_BYTES ((int64_t)1 << 36)

/* How a tensor's contents are produced. */
typedef enum {
	AOE_T_VALUE = 0,	/* computed by a node */
	AOE_T_INPUT,		/* a graph input */
	AOE_T_CONST		/* an initializer or a folded constant */
} aoe_tkind;

struct aoe_tensor;

/*
 * The elements of a sequence value, made at run time: n tensors, each
 * with its own shape and owned data.
 */
typedef struct aoe_seq {
	int n, cap;
	struct aoe_tensor **t;
} aoe_seq;

/* What a value holds (aoe_tensor's vkind). */
enum { AOE_V_TENSOR = 0, AOE_V_SEQ = 1 };

/*
 * A tensor.  A dimension that is not known yet is -1, and dim_param[i]
 * then names it (ONNX's symbolic dimension) if the model did.
 *
 * The same struct carries ONNX's other values.  A sequence of tensors
 * (vkind AOE_V_SEQ) has its elements' dtype, their shape as far as it
 * is the same for all of them (-1 a dimension that varies, ndim -1 when
 * the rank does), seq_len their number when it is known before the run
 * (else -1), and no data: its elements are in seq, made at run time.
 * An optional (optional set) holds a tensor or a sequence only when
 * present is set, at run time.  A tensor whose shape is known only when
 * the graph runs (dynamic set, e.g. an element taken from a sequence)
 * has owned data that its producer sizes at each run (aoe_tensor_resize).
 */
typedef struct aoe_tensor {
	char *name;
	int dtype;
	int ndim;		/* -1 while the rank is unknown */
	int64_t dims[AOE_MAXDIM];
	char *dim_param[AOE_MAXDIM];
	aoe_tkind kind;
	void *data;		/* constant data (owned), or the arena slot */
	int owned;		/* data was malloc'ed for this tensor */
	int folded;		/* a node's output, computed at load time */
	/*
	 * Where a constant came from, so that aoe-graph(5) can refer to it
	 * instead of copying it: the source file and the tensor's name in
	 * it, or NULL for a constant made by folding.
	 */
	char *src_file;
	char *src_name;
	/* Planner bookkeeping. */
	int producer;		/* node index, or -1 */
	int last_use;		/* last node index reading it */
	int64_t offset;		/* arena offset, or -1 */
	int alias;		/* tensor whose buffer this one shares, or -1 */
	/*
	 * How the data is laid out: 0 plain (row-major in dims), or
	 * AOE_LAYOUT_8C for NCHW8c, set by a subgraph's layout decision
	 * (see aoe_tensor_nbytes and kernel.h).
	 */
	int layout;
	/*
	 * A tensor whose shape is known only at run time (the output of
	 * NonZero, Unique, a Loop's scan outputs, and whatever reads
	 * them): the memory plan leaves it out of the arena, and its data
	 * is a heap buffer of cap bytes that aoe_tensor_resize() grows when
	 * a run needs more (lib/runtime/exec.c).
	 */
	int dynamic;
	size_t cap;
	/* Values other than tensors (see above). */
	int vkind;
	int optional;
	int present;
	int seq_len;
	aoe_seq *seq;
} aoe_tensor;

/* Whether t is a sequence or an optional rather than a plain tensor. */
static inline int
aoe_is_value(const aoe_tensor *t)
{
	return t != NULL && (t->vkind != AOE_V_TENSOR || t->optional);
}

#define AOE_LAYOUT_8C 8

/* Number of elements; -1 if a dimension is unknown, -2 on overflow. */
int64_t aoe_tensor_numel(const aoe_tensor *t);
/*
 * Size of the data in bytes (0 if unknown); for a blocked tensor, with
 * its channels rounded up to the block.
 */
size_t aoe_tensor_nbytes(const aoe_tensor *t);
/* Format the shape as "1x3x224x224" (with "?" or names for unknowns). */
const char *aoe_shape_str(const aoe_tensor *t, char *buf, size_t n);
/*
 * Fill t's data (its elements, not a blocked tensor's padding) with
 * pseudo-random values from seed: float32 and float64 uniform in
 * [-1, 1), bool and uint8 0 or 1, every other type zeros.  Nothing
 * without data or elements.
 */
void aoe_tensor_fill_random(aoe_tensor *t, uint64_t seed);

typedef enum {
	AOE_A_UNDEF = 0,
	AOE_A_FLOAT = 1,
	AOE_A_INT = 2,
	AOE_A_STRING = 3,
	AOE_A_TENSOR = 4,
	AOE_A_GRAPH = 5,
	AOE_A_FLOATS = 6,
	AOE_A_INTS = 7,
	AOE_A_STRINGS = 8,
	AOE_A_TYPE_PROTO = 13	/* a type: t without data (Optional's) */
} aoe_atype;		/* ONNX AttributeProto.AttributeType codes */

typedef struct aoe_attr {
	char *name;
	aoe_atype type;
	int64_t i;
	float f;
	char *s;
	int n;			/* length of ints, floats or strings */
	int64_t *ints;
	float *floats;
	char **strings;
	aoe_tensor *t;		/* AOE_A_TENSOR: an owned, detached tensor;
				   AOE_A_TYPE_PROTO: the type, no data */
	struct aoe_graph *g;	/* AOE_A_GRAPH: an owned subgraph */
} aoe_attr;

/*
 * A schedule: the named knobs a kernel reads.  A knob that is absent takes
 * the kernel's default.  Knob names are short identifiers.
 */
#define AOE_SCHED_MAX 40
#define AOE_KNOB_NAME 24
typedef struct aoe_sched {
	int n;
	struct {
		char name[AOE_KNOB_NAME];
		int64_t v;
	} k[AOE_SCHED_MAX];
} aoe_sched;

/* The knob's value, or def when the schedule does not set it. */
int64_t aoe_sched_get(const aoe_sched *s, const char *name, int64_t def);
/* Set a knob (replacing its value); -AOE_EUNSUP when full. */
int aoe_sched_set(aoe_sched *s, const char *name, int64_t v);

struct aoe_op;

typedef struct aoe_node {
	char *name;
	char *op_type;
	char *domain;
	int nin, nout;
	int *in;		/* tensor indices; -1 for an absent optional */
	/*
	 * The last nimplicit of in[] are not the operator's inputs but the
	 * tensors of this graph that its subgraphs (If, Loop, Scan) read by
	 * name, so that ordering, the passes and the memory plan see the
	 * reads (lib/runtime/ctl.c).
	 */
	int nimplicit;
	int *out;
	int nattr;
	aoe_attr *attrs;
	const struct aoe_op *op;	/* bound by aoe_graph_prepare() */
	aoe_sched sched;	/* the schedule in force */
	int sched_from_bank;	/* 1 when sched came from a bank entry */
	int nthreads;		/* threads for this node (0: session's) */
	void *priv;		/* kernel's prepared state */
	void (*priv_free)(void *);
	size_t scratch;		/* workspace bytes the kernel asked for */
	int dead;		/* folded away or unused */
	int dyn;		/* an input's shape is known only at run time:
				   shapes are inferred, and the kernel
				   prepared, at every run (exec.c) */
	double prof_us;		/* PROFILING_MODE: total time and runs, */
	int prof_runs;
	int prof_threads;	/* and the threads of the last run */
} aoe_node;

typedef struct aoe_graph {
	char *name;
	int opset;
	char *source;		/* the file the graph was loaded from */
	int ntensors, tcap;
	aoe_tensor **tensors;
	int nnodes, ncap;
	aoe_node *nodes;
	int ninputs, *inputs;	/* tensor indices */
	int noutputs, *outputs;
	/*
	 * A subgraph (an If branch, a Loop or Scan body) reads values of the
	 * graphs around it by name: tensor outer[i] here is bound to
	 * outer_src[i] of the enclosing graph, whose shape and data it takes
	 * (lib/runtime/ctl.c binds them when the enclosing graph is
	 * analysed).
	 */
	int nouter, *outer;
	aoe_tensor **outer_src;
	struct aoe_graph *parent;	/* the graph whose node holds it */
	/* Executor state, made by aoe_graph_prepare(). */
	int *order;		/* live nodes in execution order */
	int norder;
	void *arena;
	size_t arena_size;
	void *scratch;
	size_t scratch_size;
	int prepared;
} aoe_graph;

aoe_graph *aoe_graph_new(const char *name);
void aoe_graph_free(aoe_graph *g);
/* Index of the tensor with this name, or -1. */
int aoe_graph_find(const aoe_graph *g, const char *name);
/* Index of the tensor with this name, adding an empty one if missing. */
int aoe_graph_tensor(aoe_graph *g, const char *name);
/* Append a node; returns its index.  Strings are copied. */
int aoe_graph_add_node(aoe_graph *g, const char *name, const char *op_type,
    int nin, const int *in, int nout, const int *out);
/*
 * Fill every input of g with aoe_tensor_fill_random, input i from seed
 * + 977 i: the inputs of aoe-run's --seed and of the measuring children.
 */
void aoe_graph_fill_inputs(aoe_graph *g, uint64_t seed);
aoe_tensor *aoe_in(const aoe_graph *g, const aoe_node *n, int i);
aoe_tensor *aoe_out(const aoe_graph *g, const aoe_node *n, int i);
/* Set a tensor's dtype and shape. */
void aoe_tensor_set(aoe_tensor *t, int dtype, int ndim, const int64_t *dims);
/* Element i of t's data as a double (NaN for float16 and strings). */
double aoe_tensor_elem(const aoe_tensor *t, int64_t i);
/*
 * Sequences and optionals (lib/ir/seq.c).  aoe_tensor_dup makes an
 * owned, detached copy of a tensor's type, shape and data (its name
 * too, when it has one).  aoe_seq_of gives t's elements, making them
 * empty first if need be; aoe_seq_clear drops every element;
 * aoe_seq_insert puts e (which it then owns) at pos (0..n) and
 * aoe_seq_erase removes the element at pos (0..n-1).  aoe_value_copy
 * copies src's run-time value to dst of the same kind: a sequence's
 * elements, an optional's presence, a tensor's data (dst's shape must
 * hold it, or dst is dynamic and is resized).  All return 0 or a
 * negative error.
 */
aoe_tensor *aoe_tensor_dup(const aoe_tensor *t);
aoe_seq *aoe_seq_of(aoe_tensor *t);
void aoe_seq_clear(aoe_seq *s);
void aoe_seq_free(aoe_seq *s);
int aoe_seq_insert(aoe_seq *s, int pos, aoe_tensor *e);
void aoe_seq_erase(aoe_seq *s, int pos);
int aoe_value_copy(aoe_tensor *dst, const aoe_tensor *src);
/*
 * The value kind of src (vkind, optional, seq_len) with its dtype and
 * shape as t's type: what Identity and the like infer.
 */
void aoe_value_like(aoe_tensor *t, const aoe_tensor *src);
/*
 * Make a dynamic tensor (see aoe_tensor) hold dims, growing its heap
 * buffer when needed; 0, or a negative error naming the tensor.
 */
int aoe_tensor_resize(aoe_tensor *t, int dtype, int ndim,
    const int64_t *dims);
/* Give a tensor owned, zeroed constant data of its current shape. */
int aoe_tensor_alloc_const(aoe_tensor *t);
void aoe_tensor_free(aoe_tensor *t);

/* Attribute lookup on a node. */
const aoe_attr *aoe_attr_find(const aoe_node *n, const char *name);
int64_t aoe_attr_int(const aoe_node *n, const char *name, int64_t def);
float aoe_attr_float(const aoe_node *n, const char *name, float def);
const char *aoe_attr_str(const aoe_node *n, const char *name,
    const char *def);
/* The ints of an INTS attribute (*count set), or NULL if absent. */
const int64_t *aoe_attr_ints(const aoe_node *n, const char *name,
    int *count);
const float *aoe_attr_floats(const aoe_node *n, const char *name,
    int *count);
/* Add an attribute (used by importers and rewrites); returns it. */
aoe_attr *aoe_node_add_attr(aoe_node *n, const char *name, aoe_atype type);


/*
 * Import and export.
 */

/* Load an ONNX model file. */
int aoe_onnx_load(const char *path, aoe_graph **gp);
/* Parse an ONNX TensorProto (a .pb file of the ONNX tests) into t. */
int aoe_onnx_load_tensor(const char *path, aoe_tensor *t);
/*
 * Parse a .pb file of the ONNX tests into t by t's kind: a TensorProto
 * for a tensor, a SequenceProto for a sequence (its elements into
 * t->seq, t's dtype and shape from them), an OptionalProto for an
 * optional (present set when it holds a value).
 */
int aoe_onnx_load_value(const char *path, aoe_tensor *t);
/* Write g as an ONNX model (constants as raw-data initializers). */
int aoe_onnx_save(const aoe_graph *g, const char *path);
/* Load an aoe-graph(5) file ("-" for stdin). */
int aoe_json_load(const char *path, aoe_graph **gp);
/* Write g as aoe-graph(5). */
int aoe_json_save(const aoe_graph *g, FILE *fp);
/* Load either format, deciding by content. */
int aoe_model_load(const char *path, aoe_graph **gp);
/*
 * The same from a model in memory: path names it in messages and is the
 * place its external data and referred constants are relative to; NULL
 * for a model that is nowhere on disk.
 */
int aoe_onnx_load_mem(const void *buf, size_t len, const char *path,
    aoe_graph **gp);
int aoe_json_load_mem(const void *buf, size_t len, const char *path,
    aoe_graph **gp);
int aoe_model_load_mem(const void *buf, size_t len, const char *path,
    aoe_graph **gp);

/*
 * Bind a dynamic input's dimensions.  spec is "name:d0,d1,..." and may
 * hold several bindings separated by ';' (as ATC's --input_shape).
 */
int aoe_bind_shapes(aoe_graph *g, const char *spec);
/* Append one --input-shape item to a spec (malloc'ed; NULL to start). */
void aoe_shape_spec_add(char **spec, const char *item);



/*
 * The canonical signature of an operator case at a thread count (see
 * aoe-bank(5)): op type, input and output dtypes and static shapes, which
 * inputs are constants, all attributes sorted by name; no names.  Returns
 * 0, or a negative error (no static shape, buf too small).
 */
int aoe_op_signature(const aoe_graph *g, const aoe_node *n, int nthreads,
    char *buf, size_t len);
/* The key of a signature: FNV-1a 64, fixed forever. */
uint64_t aoe_op_key(const char *sig);
/*
 * The other way: a graph of one node (named "node") with the signature's
 * op type, dtypes, shapes, constant inputs (small ones zero-filled) and
 * attributes (tensor attributes zero-filled), and its thread count as the
 * node's.  0 and *gp, or -AOE_EDATA with why ("signature: ...").
 */
int aoe_sig_graph(const char *sig, aoe_graph **gp, int *nthreads,
    char *why, size_t wl);

#endif
