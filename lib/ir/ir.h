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
/* Free what node n holds (not n itself), or only its attributes. */
void aoe_node_free(aoe_node *n);
void aoe_node_clear_attrs(aoe_node *n);

#endif
