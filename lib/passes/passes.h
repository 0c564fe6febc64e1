/*
 * passes.h - graph rewrites, for libaoe's own files: the subgraph
 * chains that SGAT tunes, fusion (BN folding, activations, residual
 * adds, element-wise chains), the blocked layout and in-place decisions,
 * and tables of decisions by signature.  The passes have no public
 * interface: a program chooses their mode through aoe_run_opts.  Not
 * installed.
 */
#ifndef AOE_PASSES_H
#define AOE_PASSES_H

#include "aoe_runtime.h"
#include "runtime.h"


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
 * The fusion decisions, by index into aoe_fuse_knobs: BN and constant
 * folds, activations, residual Adds, element-wise chains, max pools,
 * depthwise Convs into the pointwise Conv after them.
 * aoe_sgat_effect() counts, for each, the rewrites that decisions d make
 * in the chain (cnt[AOE_FUSE_N]): folds, nodes merged away.
 */
enum { AOE_FUSE_BN, AOE_FUSE_ACT, AOE_FUSE_ADD, AOE_FUSE_ELEM,
    AOE_FUSE_POOL, AOE_FUSE_DW, AOE_FUSE_N };
extern const char *const aoe_fuse_knobs[AOE_FUSE_N];
int aoe_sgat_effect(aoe_graph *g, const int *nodes, int n,
    const aoe_sched *d, int *cnt);
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
/*
 * Decisions by signature: a table that a tuner fills with the decisions
 * it chose or is measuring, consulted before the subgraph bank (see
 * aoe_run_opts' decisions).
 */
aoe_dtable *aoe_dtable_new(void);
void aoe_dtable_free(aoe_dtable *t);
/* Set (or replace) the decisions for a chain signature. */
void aoe_dtable_set(aoe_dtable *t, const char *sig, const aoe_sched *d);
/* 1 and d filled when sig has decisions, else 0 (t may be NULL). */
int aoe_dtable_find(const aoe_dtable *t, const char *sig, aoe_sched *d);
int aoe_dtable_size(const aoe_dtable *t);

/* Every fusion and in-place reuse: a chain's decisions without others. */
void aoe_fuse_default(aoe_sched *d);
/*
 * How aoe_fuse_hook() decides each chain: force, when set, everywhere;
 * else what find says for the chain's signature at nthreads (find may
 * leave d at the defaults); else the defaults.  layout, when >= 0, is the
 * layout decision everywhere but under force.
 */
typedef struct aoe_fuse_ctx {
	const aoe_sched *force;
	int (*find)(void *arg, const char *sig, aoe_sched *d);
	void *arg;
	int nthreads;
	int layout;
} aoe_fuse_ctx;
/*
 * Apply the decisions to every chain of g.  Returns 1 when the graph
 * changed (it must be ordered and inferred again), 0, or an error.
 */
int aoe_fuse_hook(aoe_graph *g, const aoe_fuse_ctx *c);
/*
 * Rewrites that fusion builds on, before the hook (a HardSwish written
 * out becomes one node).  Returns 1 when the graph changed.
 */
int aoe_fuse_canon(aoe_graph *g);
/*
 * After aoe_fuse_canon (lib/passes/qdq.c): each DequantizeLinear ->
 * Conv or MatMul -> (Relu ->) QuantizeLinear becomes one QLinearConv or
 * QLinearMatMul.  Returns 1 when the graph changed.
 */
int aoe_fuse_qdq(aoe_graph *g);
/* Remove the nodes marked in kill; the caller orders the graph again. */
void aoe_fuse_compact(aoe_graph *g, const char *kill);
/*
 * A new constant of like's dtype and shape (zeroed), named
 * base/aoe_<what><k> with the first k no tensor has; its index, or -1.
 */
int aoe_fuse_const(aoe_graph *g, const char *base, const char *what,
    const aoe_tensor *like);
/*
 * After the hook: run the nodes that a layout=8 decision marked, where
 * they can, on NCHW8c tensors, with AoeReorder nodes at the edges.
 * Returns 1 when the graph changed.
 */
int aoe_fuse_layout(aoe_graph *g);

#endif
