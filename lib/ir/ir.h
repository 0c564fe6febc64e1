/*
 * ir.h - the IR's declarations for libaoe's own files: what rewrites
 * and kernels need beyond the public aoe_ir.h.  Not installed.
 */
#ifndef AOE_IR_INT_H
#define AOE_IR_INT_H

#include "aoe_ir.h"
#include "base.h"

/* Fill constants of g that refer to a model file (see aoe-graph(5)). */
int aoe_onnx_fill(aoe_graph *g);
/*
 * Whether op_type is one that libaoe makes itself when it rewrites a
 * graph (AoeReorder, AoeElemChain): model files may not hold them.
 */
int aoe_op_internal(const char *op_type);
/*
 * Read a tensor of integers (int64 or int32 constant) into out[0..max);
 * returns the count, or a negative error when it is not a constant.
 */
int aoe_const_ints(const aoe_graph *g, const aoe_node *n, int input,
    int64_t *out, int max);
/*
 * Whether n may read t's values while inferring shapes: t is a constant,
 * or n is a dynamic node (aoe_node.dyn) inferred at run time, when every
 * input has its data.  The test behind "must be a constant".
 */
int aoe_value_known(const aoe_node *n, const aoe_tensor *t);
/* Free what node n holds (not n itself), or only its attributes. */
void aoe_node_free(aoe_node *n);
void aoe_node_clear_attrs(aoe_node *n);
/*
 * Free the state a kernel prepared for n (priv, by its priv_free) and
 * clear both, so that n can be prepared again or run unprepared.
 */
void aoe_node_unprepare(aoe_node *n);
/*
 * A schedule from its JSON object ({"mr":4,"nr":16}): every member a knob
 * name of [A-Za-z0-9_] shorter than AOE_KNOB_NAME, appearing once, whose
 * value is an integer in the int64_t range; at most AOE_SCHED_MAX of them.
 * 0, or -AOE_EDATA with why (when not NULL) saying what is wrong and s
 * empty.  aoe_errmsg() is not touched: a bank lookup calls this too.
 */
struct cJSON;
int aoe_sched_from_json(const struct cJSON *o, aoe_sched *s, char *why,
    size_t wl);

/*
 * Load the model file at path with load, one of the loaders from memory
 * (aoe_onnx_load_mem, aoe_json_load_mem, aoe_model_load_mem).
 */
int aoe_load_file(const char *path, int (*load)(const void *, size_t,
    const char *, aoe_graph **), aoe_graph **gp);

/* Whether a and b have the same rank and dimensions. */
int aoe_same_shape(const aoe_tensor *a, const aoe_tensor *b);

#endif
