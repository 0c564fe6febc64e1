/*
 * aoe.h - the one public header of libaoe.
 *
 * libaoe holds everything the aoe tools share: the graph IR, aoe-graph(5)
 * and ONNX input/output, shape inference and constant folding, the
 * executor with its memory planner, the kernels and their schedules, and
 * small utilities (errors, number parsing, the input loop).  Every public
 * name starts with aoe_ or AOE_.
 */
#ifndef AOE_H
#define AOE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define AOE_VERSION "0.1.0"

/*
 * The exit-status table shared by every aoe tool (see aoe(7)).
 */
enum {
	AOE_EXIT_OK = 0,	/* success */
	AOE_EXIT_FALSE = 1,	/* a negative answer: differ, not ready */
	AOE_EXIT_USAGE = 2,	/* bad command line */
	AOE_EXIT_DATA = 3,	/* malformed or invalid input data */
	AOE_EXIT_UNSUP = 4,	/* valid input that aoe does not support */
	AOE_EXIT_IO = 5,	/* a file or system call failed */
	AOE_EXIT_NOMEM = 6,	/* out of memory or over a size limit */
	AOE_EXIT_INTERNAL = 7	/* a bug in aoe */
};

/*
 * Error codes returned (negated) by library functions.  Each maps to the
 * exit status with the same meaning through aoe_exit_status().
 */
enum {
	AOE_OK = 0,
	AOE_EDATA = 3,
	AOE_EUNSUP = 4,
	AOE_EIO = 5,
	AOE_ENOMEM = 6,
	AOE_EINTERNAL = 7
};

/* Set the calling thread's error message and return -code. */
int aoe_err(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* The last message set by aoe_err() in this thread. */
const char *aoe_errmsg(void);
/* Map a negative library return value to an exit status. */
int aoe_exit_status(int rc);

/* Program name for messages, set by aoe_setprogname(argv[0]). */
void aoe_setprogname(const char *argv0);
const char *aoe_progname(void);
/* Print "prog: message" (and ": strerror(errno)" for warn) to stderr. */
void aoe_warnx(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void aoe_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Allocation that aborts the program on failure (for small metadata). */
void *aoe_xmalloc(size_t n);
void *aoe_xcalloc(size_t n, size_t sz);
void *aoe_xrealloc(void *p, size_t n);
char *aoe_xstrdup(const char *s);

/*
 * Parse a decimal integer in [min, max]; the whole string must be a
 * number.  Returns 0, or -1 with errno set (EINVAL, ERANGE).
 */
int aoe_strtonum(const char *s, long long min, long long max,
    long long *out);

/* Read a whole file ("-" is stdin) into memory; *len gets its size. */
int aoe_read_file(const char *path, uint8_t **data, size_t *len);

/* Monotonic clock in microseconds. */
double aoe_now_us(void);

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
	AOE_U64 = 13
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

/*
 * A tensor.  A dimension that is not known yet is -1, and dim_param[i]
 * then names it (ONNX's symbolic dimension) if the model did.
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
} aoe_tensor;

/* Number of elements; -1 if a dimension is unknown, -2 on overflow. */
int64_t aoe_tensor_numel(const aoe_tensor *t);
/* Size of the data in bytes (0 if unknown). */
size_t aoe_tensor_nbytes(const aoe_tensor *t);
/* Format the shape as "1x3x224x224" (with "?" or names for unknowns). */
const char *aoe_shape_str(const aoe_tensor *t, char *buf, size_t n);

typedef enum {
	AOE_A_UNDEF = 0,
	AOE_A_FLOAT = 1,
	AOE_A_INT = 2,
	AOE_A_STRING = 3,
	AOE_A_TENSOR = 4,
	AOE_A_GRAPH = 5,
	AOE_A_FLOATS = 6,
	AOE_A_INTS = 7,
	AOE_A_STRINGS = 8
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
	aoe_tensor *t;		/* AOE_A_TENSOR: an owned, detached tensor */
} aoe_attr;

/*
 * A schedule: the named knobs a kernel reads.  A knob that is absent takes
 * the kernel's default.  Knob names are short identifiers.
 */
#define AOE_SCHED_MAX 16
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
	double prof_us;		/* PROFILING_MODE: total time and runs */
	int prof_runs;
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
aoe_tensor *aoe_in(const aoe_graph *g, const aoe_node *n, int i);
aoe_tensor *aoe_out(const aoe_graph *g, const aoe_node *n, int i);
/* Set a tensor's dtype and shape. */
void aoe_tensor_set(aoe_tensor *t, int dtype, int ndim, const int64_t *dims);
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
 * Read a tensor of integers (int64 or int32 constant) into out[0..max);
 * returns the count, or a negative error when it is not a constant.
 */
int aoe_const_ints(const aoe_graph *g, const aoe_node *n, int input,
    int64_t *out, int max);

/*
 * Import and export.
 */

/* Load an ONNX model file. */
int aoe_onnx_load(const char *path, aoe_graph **gp);
/* Parse an ONNX TensorProto (a .pb file of the ONNX tests) into t. */
int aoe_onnx_load_tensor(const char *path, aoe_tensor *t);
/* Write g as an ONNX model (constants as raw-data initializers). */
int aoe_onnx_save(const aoe_graph *g, const char *path);
/* Fill constants of g that refer to a model file (see aoe-graph(5)). */
int aoe_onnx_fill(aoe_graph *g);
/* Load an aoe-graph(5) file ("-" for stdin). */
int aoe_json_load(const char *path, aoe_graph **gp);
/* Write g as aoe-graph(5). */
int aoe_json_save(const aoe_graph *g, FILE *fp);
/* Load either format, deciding by content. */
int aoe_model_load(const char *path, aoe_graph **gp);

/*
 * Bind a dynamic input's dimensions.  spec is "name:d0,d1,..." and may
 * hold several bindings separated by ';' (as ATC's --input_shape).
 */
int aoe_bind_shapes(aoe_graph *g, const char *spec);

/*
 * Operators and kernels.
 */

/* Everything a kernel sees when it runs. */
typedef struct aoe_kctx {
	aoe_graph *g;
	aoe_node *n;
	int nthreads;
	const aoe_sched *sched;
	void *scratch;		/* n->scratch bytes, 64-byte aligned */
} aoe_kctx;

typedef struct aoe_op {
	const char *op_type;
	/*
	 * Check the node's attributes and inputs and set its outputs' dtypes
	 * and shapes.  Inputs' shapes are known (and constants' data).  May
	 * set n->scratch.  Returns 0 or a negative error from aoe_err().
	 */
	int (*infer)(aoe_graph *g, aoe_node *n);
	/* Compute the outputs.  Returns 0 or a negative error. */
	int (*run)(aoe_kctx *k);
	/*
	 * Optional: called once after infer when the schedule is fixed, to
	 * pack weights into n->priv.  May be NULL.
	 */
	int (*prepare)(aoe_graph *g, aoe_node *n);
	/* Optional: fill the default schedule for this node. */
	void (*default_sched)(const aoe_graph *g, const aoe_node *n,
	    aoe_sched *s);
} aoe_op;

/* The registry: the operator for a type, or NULL. */
const aoe_op *aoe_op_find(const char *op_type);
/* All registered operators (NULL-terminated). */
const aoe_op *const *aoe_op_list(void);

/*
 * Families register their operators through these tables, one per kernel
 * file; see lib/registry.c.
 */
extern const aoe_op aoe_ops_gemm[];	/* k_gemm.c: Gemm, MatMul */
extern const aoe_op aoe_ops_conv[];	/* k_conv.c: Conv, ConvTranspose */
extern const aoe_op aoe_ops_elem[];	/* k_elem.c: unary, binary */
extern const aoe_op aoe_ops_norm[];	/* k_norm.c: BN, LN, Softmax, Reduce */
extern const aoe_op aoe_ops_pool[];	/* k_pool.c: pooling, Resize */
extern const aoe_op aoe_ops_shape[];	/* k_shape.c: data movement */

/*
 * Shared helpers for kernels.
 */

/* Numpy-style broadcast of two shapes; returns 0 or -AOE_EDATA. */
int aoe_broadcast_shape(int na, const int64_t *a, int nb, const int64_t *b,
    int *nout, int64_t *out);
/* Normalise a possibly negative axis for rank r; -1 if out of range. */
int aoe_axis(int64_t axis, int rank);
/* Set an output to the given shape and dtype (checking its size). */
int aoe_set_output(aoe_graph *g, aoe_node *n, int i, int dtype, int ndim,
    const int64_t *dims);

/*
 * Single-precision GEMM used by Conv, Gemm and MatMul:
 * C[m][n] = alpha * sum_k A[m][k] * B[k][n] + beta * C[m][n], with row
 * strides lda, ldb, ldc and optional transposes, on nthreads threads with
 * the blocking in sched.  Returns 0.
 */
int aoe_sgemm(int transa, int transb, int64_t m, int64_t n, int64_t k,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    float beta, float *c, int64_t ldc, int nthreads, const aoe_sched *sched);

/*
 * The executor.
 */

typedef struct aoe_run_opts {
	int nthreads;		/* 0: the number of online CPUs */
	int static_memory;	/* 1: no buffer reuse (GE_USE_STATIC_MEMORY) */
	int profile;		/* 1: per-node times (PROFILING_MODE) */
	int use_bank;		/* 0: ignore knowledge banks (--no-bank) */
} aoe_run_opts;

/* Defaults, with GE_USE_STATIC_MEMORY and PROFILING_MODE applied. */
void aoe_run_opts_init(aoe_run_opts *o);

/*
 * Check that every op is supported (listing all that are not), infer
 * shapes, fold constants, pick schedules (bank then default), plan memory
 * and prepare kernels.  After it the graph is ready to run.
 */
int aoe_graph_prepare(aoe_graph *g, const aoe_run_opts *o);
/* Names of ops in g that no kernel supports, as "A, B"; NULL if none. */
char *aoe_graph_unsupported(const aoe_graph *g);
/* Run the prepared graph once.  Inputs must have their data set. */
int aoe_graph_run(aoe_graph *g, const aoe_run_opts *o);
/* Print the per-node profile gathered while profiling. */
void aoe_profile_print(const aoe_graph *g, FILE *fp);

/*
 * The knowledge-bank hook.  A lookup that finds an entry for the node's
 * canonical signature on this soc_version fills s and returns 1, else 0.
 * The bank itself arrives with aoe-bank; until then no entry is found.
 */
int aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, aoe_sched *s);

/* @bank: declarations of the knowledge bank (lib/bank.c) go here. */

/* @space: declarations of the kernel search spaces (lib/space.c). */

/* @capture: declarations of capture and checks (lib/capture.c). */

/*
 * The shared input loop (as mblaze's): call fn for each operand, or for
 * "-" (stdin) when there are none.  Returns the worst status fn returned.
 */
int aoe_each_operand(int argc, char **argv, int (*fn)(const char *, void *),
    void *arg);

#endif
