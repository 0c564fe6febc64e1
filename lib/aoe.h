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
#include <sys/types.h>

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

/*
 * A number given to option --opt, in [min, max]; anything else prints a
 * message and exits with AOE_EXIT_USAGE.  For tools' option parsing.
 */
long long aoe_optnum(const char *opt, const char *s, long long min,
    long long max);
/*
 * An integer environment variable in [min, max]: 1 and *out set, 0 when it
 * is unset or empty, or -AOE_EDATA naming the variable.
 */
int aoe_envnum(const char *name, long long min, long long max, int *out);

/* Whether an environment variable is on: 1, true, on or yes. */
int aoe_env_true(const char *name);

/* Read a whole file ("-" is stdin) into memory; *len gets its size. */
int aoe_read_file(const char *path, uint8_t **data, size_t *len);

/*
 * An output file that is written whole or not at all: the data goes to a
 * temporary file beside the destination, renamed over it by
 * aoe_ofile_close().  NULL or "-" is stdout.  A destination that exists and
 * is not a regular file (/dev/null, a fifo, a terminal) is written in place,
 * since a rename would replace it.  On any failure the destination is left
 * as it was.
 */
typedef struct aoe_ofile {
	FILE *fp;
	char *path;	/* the destination; NULL for stdout */
	char *tmp;	/* the temporary file; NULL when written in place */
} aoe_ofile;

int aoe_ofile_open(aoe_ofile *o, const char *path);
int aoe_ofile_close(aoe_ofile *o);
void aoe_ofile_abort(aoe_ofile *o);

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
	/*
	 * How the data is laid out: 0 plain (row-major in dims), or
	 * AOE_LAYOUT_8C for NCHW8c, set by a subgraph's layout decision
	 * (see aoe_tensor_nbytes and kernel.h).
	 */
	int layout;
} aoe_tensor;

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
#define AOE_SCHED_MAX 24
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
/* Free what node n holds (not n itself), or only its attributes. */
void aoe_node_free(aoe_node *n);
void aoe_node_clear_attrs(aoe_node *n);
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
/* Append one --input-shape item to a spec (malloc'ed; NULL to start). */
void aoe_shape_spec_add(char **spec, const char *item);

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
/*
 * Whether op_type is one that libaoe makes itself when it rewrites a
 * graph (AoeReorder, AoeElemChain): model files may not hold them.
 */
int aoe_op_internal(const char *op_type);
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
extern const aoe_op aoe_ops_layout[];	/* k_layout.c: AoeReorder */

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
	int plan_only;		/* 1: plan memory, allocate none; cannot run */
} aoe_run_opts;

/* Defaults, with GE_USE_STATIC_MEMORY and PROFILING_MODE applied. */
void aoe_run_opts_init(aoe_run_opts *o);

/*
 * Check that every op is supported (listing all that are not), infer
 * shapes, fold constants, pick schedules (bank then default), plan memory
 * and prepare kernels.  After it the graph is ready to run; with
 * o->plan_only the memory is sized (arena_size, scratch_size) but not
 * allocated, and the graph is neither runnable nor handed to AOE_MODE.
 */
int aoe_graph_prepare(aoe_graph *g, const aoe_run_opts *o);
/* Names of ops in g that no kernel supports, as "A, B"; NULL if none. */
char *aoe_graph_unsupported(const aoe_graph *g);
/* Run the prepared graph once.  Inputs must have their data set. */
int aoe_graph_run(aoe_graph *g, const aoe_run_opts *o);
/*
 * Threads a node runs with: its own count (a subgraph decision) or the
 * session's, capped by its schedule's "nthreads" knob when that is set.
 */
int aoe_node_threads(const aoe_node *n, int session);
/* Print the per-node profile gathered while profiling. */
void aoe_profile_print(const aoe_graph *g, FILE *fp);

/*
 * The knowledge-bank hook aoe_graph_prepare() calls (lib/bank.c).  A
 * lookup that finds an entry for the node's canonical signature on this
 * soc_version fills s and returns 1, else 0; see aoe_bank_find() below.
 */
int aoe_bank_lookup(const aoe_graph *g, const aoe_node *n, aoe_sched *s);

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
/* This host's soc_version, e.g. "GenuineIntel_f6_m85_x86-64-v4". */
const char *aoe_soc_version(void);
/*
 * The custom bank directory: operators $TUNE_BANK_PATH/<soc> (graphs:
 * $TUNE_BANK_PATH), else under $HOME/Ascend/latest/data/aoe/custom/.
 * soc NULL means this host's.  -AOE_EIO if TUNE_BANK_PATH is not an
 * existing writable directory.
 */
int aoe_bank_dir(int graphs, const char *soc, char *buf, size_t len);
/* The built-in banks: $AOE_BUILTIN_BANK or PREFIX/share/aoe/bank. */
const char *aoe_bank_builtin_dir(void);
/*
 * Look a node up at a thread count: custom bank, then built-in.  1 and
 * s filled on a hit (*from "custom" or "built-in"), else 0 (*from "miss"
 * or "collision").  The banks are read once per process.
 */
int aoe_bank_find(const aoe_graph *g, const aoe_node *n, int nthreads,
    aoe_sched *s, const char **from);
/* Use these bank files instead of the defaults (NULL, NULL: defaults). */
void aoe_bank_use(const char *custom_file, const char *builtin_file);
/* The thread count aoe_bank_lookup() assumes for nodes without one. */
void aoe_bank_set_threads(int n);
/* Entries indexed for lookup (loads the banks). */
size_t aoe_bank_loaded_entries(void);

enum { AOE_MERGE_FASTEST, AOE_MERGE_NEWEST, AOE_MERGE_OURS,
	AOE_MERGE_THEIRS };
typedef struct aoe_bank_opts {
	const char *bank;	/* --bank: directory or file; NULL: default */
	const char *soc;	/* --soc-version; NULL: this host's */
	int graphs;		/* --graphs: the subgraph bank */
	int policy;		/* --policy, AOE_MERGE_* */
	const char *output;	/* --output */
	int jsonl;		/* --jsonl */
	int dry_run;		/* --dry-run */
	int quiet;		/* --quiet */
	int64_t max_size;	/* --max-size: import limit per member */
	const char *op_type;	/* --op-type */
	double older_than_days;	/* --older-than; < 0 unset */
	const char *tool_version;	/* --tool-version */
	int no_gain;		/* --no-gain */
	int threads;		/* --threads (lookup) */
} aoe_bank_opts;
void aoe_bank_opts_init(aoe_bank_opts *o);
/*
 * The aoe-bank commands.  Each returns 0, 1 for a negative answer (diff:
 * the banks differ; show: a key is missing), or a negative error.
 */
int aoe_bank_commit(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_merge(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_diff(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_export(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_import(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_verify(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_prune(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_show(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_list(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_stats(const aoe_bank_opts *o, int argc, char **argv);
int aoe_bank_lookup_graphs(const aoe_bank_opts *o, int argc, char **argv);

/* @space: declarations of the kernel search spaces (lib/space.c). */

/*
 * A knob of a search space: its legal values are either the list vals[]
 * (nvals > 0, ascending) or lo, lo+step, ... up to hi (nvals == 0).  def
 * is the value the default heuristic picks for this node.
 */
#define AOE_KNOB_MAXVALS 32
typedef struct aoe_knob {
	char name[AOE_KNOB_NAME];
	int nvals;
	int64_t vals[AOE_KNOB_MAXVALS];
	int64_t lo, hi, step;
	int64_t def;
	const char *doc;	/* one line: what the knob does */
} aoe_knob;

/*
 * The search space of one node: its knobs, a check of the constraints
 * between them, and the default schedule.  The points are the cartesian
 * product of the knobs' values; those the constraints reject are illegal.
 */
typedef struct aoe_space aoe_space;
struct aoe_space {
	const aoe_graph *g;
	const aoe_node *n;
	char op_type[64];
	char family[16];	/* "gemm", "conv", "elem", ... */
	int nknobs;
	aoe_knob knobs[AOE_SCHED_MAX];
	/* Constraints between knobs: 0 if s is legal, else -1 with why. */
	int (*check)(const aoe_space *sp, const aoe_sched *s, char *why,
	    size_t len);
	const char *constraints;	/* the constraints, in words */
	aoe_sched def;		/* the default heuristic schedule */
	int64_t fact[8];	/* facts of the node the check needs */
};

/* The space of a prepared (or inferred) node; 0 or a negative error. */
int aoe_space_for(const aoe_graph *g, const aoe_node *n, aoe_space *sp);
/* Add a knob with a list of values or a range (used by the families). */
int aoe_space_add(aoe_space *sp, const char *name, int nvals,
    const int64_t *vals, const char *doc);
int aoe_space_add_range(aoe_space *sp, const char *name, int64_t lo,
    int64_t hi, int64_t step, const char *doc);
/* Number of values of a knob, the i-th, and the index of v (-1: none). */
int64_t aoe_knob_count(const aoe_knob *k);
int64_t aoe_knob_value(const aoe_knob *k, int64_t i);
int64_t aoe_knob_index(const aoe_knob *k, int64_t v);
/* Points in the space, legal or not (saturates at UINT64_MAX). */
uint64_t aoe_space_size(const aoe_space *sp);
/*
 * 0 if s is legal: every knob it sets is one of the space's, with a
 * legal value, and the constraints hold (absent knobs take the default).
 * Else -AOE_EDATA, with the reason in why (aoe_errmsg() is untouched).
 */
int aoe_space_validate(const aoe_space *sp, const aoe_sched *s, char *why,
    size_t len);
/*
 * The point of index idx (mixed radix over the knobs, the first knob
 * fastest): 1 if it is legal, 0 if not, -AOE_EDATA past the end.
 */
int aoe_space_point(const aoe_space *sp, uint64_t idx, aoe_sched *s);
/* A uniformly random legal point (seed is advanced); 0 or -AOE_EDATA. */
int aoe_space_sample(const aoe_space *sp, uint64_t *seed, aoe_sched *s);
/* from with one knob changed to another legal value; 0 or -AOE_EDATA. */
int aoe_space_mutate(const aoe_space *sp, uint64_t *seed,
    const aoe_sched *from, aoe_sched *to);
/* Print the space as one JSON object (see aoe-space(1)). */
int aoe_space_print_json(const aoe_space *sp, FILE *fp);
/* Validate s, make it the node's schedule and prepare the node again. */
int aoe_space_apply(aoe_graph *g, aoe_node *n, const aoe_sched *s);

/* @capture: declarations of capture and checks (lib/capture.c). */

/*
 * A 64-bit hash of the canonical (prepared, static) graph: its live nodes
 * with their names, op types, attributes and tensors (names, dtypes,
 * shapes), and a checksum of every constant's data; not the path the
 * model was loaded from.  Names are included on purpose: the hash
 * identifies one compile, so that identical compiles dedup to one file.
 */
int aoe_graph_hash(const aoe_graph *g, uint64_t *h);
/* Write g as aoe-graph(5) to path atomically (temp file, fsync, rename). */
int aoe_graph_write(const aoe_graph *g, const char *path);
/*
 * Called by aoe_graph_prepare() when AOE_MODE is set: writes the graph
 * to $AOE_CAPTURE_DIR, or tunes it inline with aoe-opat or aoe-sgat
 * (see aoe-capture(1)).  Refuses AOE_MODE=4.
 */
int aoe_capture_hook(aoe_graph *g);

/* The preconditions of a tuning run (lib/check.c, aoe-check(1)). */
enum { AOE_CHECK_OK = 0, AOE_CHECK_WARN, AOE_CHECK_FAIL };
#define AOE_CHECK_MAX 16
typedef struct aoe_check_opts {
	int job_type;		/* 1 subgraph, 2 operator tuning */
	int processes;		/* tuning processes on this host */
	int tuning_parallel;	/* TUNING_PARALLEL_NUM, 1-64 */
	int te_parallel;	/* TE_PARALLEL_COMPILER, 1-32 */
	int run_loop;		/* RUN_LOOP, 1-2048 */
	double min_disk_gb;	/* free space needed in $HOME */
	const char *graph;	/* a model to check, or NULL */
	const char *shape;	/* --input-shape bindings for it, or NULL */
	const char *lock_path;	/* the device lock, NULL for the default */
	char work_path[1024];	/* WORK_PATH */
	char ini[1024];		/* the aoe.ini read, or "" */
} aoe_check_opts;
typedef struct aoe_check_item {
	char check[16];
	int status;		/* AOE_CHECK_OK, _WARN or _FAIL */
	char measured[64];
	char limit[64];
	char note[512];
} aoe_check_item;
typedef struct aoe_check_result {
	int n, nwarn, nfail;
	aoe_check_item item[AOE_CHECK_MAX];
} aoe_check_result;
/*
 * Defaults, then aoe.ini ($AOE_INI or ./aoe.ini) and the environment
 * (TUNING_PARALLEL_NUM, TE_PARALLEL_COMPILER, AOE_MIN_DISK_GB); a value
 * out of range is -AOE_EDATA.
 */
int aoe_check_opts_init(aoe_check_opts *o);
/* Run every check; returns 0 (see r->nfail), or an error for bad input. */
int aoe_check_run(const aoe_check_opts *o, aoe_check_result *r);
/*
 * Run the checks as a tool does before tuning: each FAIL is printed on
 * stderr as "not ready: CHECK MEASURED (limit LIMIT): NOTE"; 0 ready, 1
 * not, or an error.
 */
int aoe_check_ready(const aoe_check_opts *o);
/* The device lock's path: $AOE_DEVICE_LOCK, else /tmp/aoe-device.lock. */
const char *aoe_device_lock_path(void);
/*
 * Take the device lock (flock) and write the owner ("user=U pid=P") in
 * it; returns the descriptor to keep open, or -AOE_EIO naming the
 * owner when another process holds it.
 */
int aoe_device_lock(const char *path);
/* Release a lock taken by aoe_device_lock(). */
void aoe_device_unlock(int fd);
/*
 * fork() for a measuring child: the child does not keep the device lock
 * open and is killed when its parent dies, so that a tuning run killed
 * with kill -9 leaves no child behind holding the device.
 */
pid_t aoe_fork_child(void);

/*
 * The shared input loop (as mblaze's): call fn for each operand, or for
 * "-" (stdin) when there are none.  Returns the worst status fn returned.
 */
int aoe_each_operand(int argc, char **argv, int (*fn)(const char *, void *),
    void *arg);

/* @sgat: declarations of subgraph tuning (lib/fuse.c, lib/sgat.c). */

/*
 * Subgraphs are chains between branch points of a prepared graph.  part
 * (g->nnodes ints) gets each live node's subgraph id (-1: none) and
 * *nparts their count; aoe_sgat_members() lists a subgraph's nodes in
 * order.  The canonical signature (malloc'ed) is the chain's operator
 * signatures at nthreads; its repo_key is aoe_op_key() of it.
 */
int aoe_sgat_partition(const aoe_graph *g, int *part, int *nparts);
int aoe_sgat_members(const aoe_graph *g, const int *part, int id,
    int *nodes);
int aoe_sgat_signature(const aoe_graph *g, const int *nodes, int n,
    int nthreads, char **sig);
/* The chain as a graph of its own (constants copied). */
int aoe_sgat_extract(const aoe_graph *g, const int *nodes, int n,
    aoe_graph **sub);
/*
 * How many BN folds, activation fusions, residual Add fusions and nodes
 * merged into element-wise chains decisions d make there.
 */
int aoe_sgat_effect(aoe_graph *g, const int *nodes, int n,
    const aoe_sched *d, int *nbn, int *nact, int *nadd, int *nel);
/*
 * The per-op decisions serial and split name a chain's nodes by position,
 * up to AOE_SGAT_MAXPOS of them.  aoe_sgat_per_op() tells which nodes
 * remain as nodes of their own under decisions d (alive[k]) and which of
 * those split a GEMM between threads (splits[k]).
 */
#define AOE_SGAT_MAXPOS 26
int aoe_sgat_per_op(aoe_graph *g, const int *nodes, int n,
    const aoe_sched *d, int *alive, int *splits);
/*
 * How many Convs of the chain could run blocked (decision layout=8), and
 * how many nodes could write over their input (decision inplace=1).
 */
int aoe_sgat_layout_nodes(const aoe_graph *g, const int *nodes, int n);
int aoe_sgat_inplace_nodes(const aoe_graph *g, const int *nodes, int n);
/* Whether n may write its output over its input 0 (shapes and op). */
int aoe_fuse_inplace_ok(const aoe_graph *g, const aoe_node *n);
/*
 * Decisions (the knobs lib/fuse.c lists at its top) applied by
 * aoe_graph_prepare(): from the subgraph bank, and the default decisions
 * (aoe_fuse_default: every fusion) for a chain without an entry
 * (AOE_FUSE_BANK, the default mode; AOE_FUSE=all or none in the
 * environment override it); none; the default decisions everywhere; or
 * d everywhere (AOE_FUSE_FORCE).  Returns 1 when the graph changed (it
 * must be ordered and inferred again).
 */
enum { AOE_FUSE_BANK, AOE_FUSE_OFF, AOE_FUSE_ALL, AOE_FUSE_FORCE };
void aoe_fuse_default(aoe_sched *d);
void aoe_fuse_set(int mode, const aoe_sched *d);
int aoe_fuse_hook(aoe_graph *g, const aoe_run_opts *o);
/*
 * Rewrites that fusion builds on, before the hook (a HardSwish written
 * out becomes one node); in the modes where fusion may happen.  Returns
 * 1 when the graph changed.
 */
int aoe_fuse_canon(aoe_graph *g);
/*
 * After the hook: run the nodes that a layout=8 decision marked, where
 * they can, on NCHW8c tensors, with AoeReorder nodes at the edges.
 * Returns 1 when the graph changed.
 */
int aoe_fuse_layout(aoe_graph *g);
/* Decisions by signature, consulted before the subgraph bank. */
void aoe_fuse_table_add(const char *sig, const aoe_sched *d);
void aoe_fuse_table_clear(void);
/* Read this subgraph bank file instead (NULL: the default; re-read). */
void aoe_fuse_bank_use(const char *file);
/* The subgraph bank's decisions for a signature: 1 and d, else 0. */
int aoe_fuse_bank_find(const char *sig, aoe_sched *d);

#endif
