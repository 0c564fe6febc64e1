/*
 * runtime.h - the runtime's steps of preparing a graph, for the layers
 * above it inside libaoe.  Not installed.
 */
#ifndef AOE_RUNTIME_INT_H
#define AOE_RUNTIME_INT_H

#include "aoe_runtime.h"
#include "kernel.h"

/*
 * The runtime's part of preparing a graph, which aoe_graph_prepare()
 * (lib/engine) composes with the passes and the bank:
 * aoe_graph_analyse() checks that every op is supported (listing all
 * that are not) and every input has a source, orders the nodes, infers
 * shapes, folds constants and prunes what no output needs;
 * aoe_graph_reinfer() does the last three again after a rewrite;
 * aoe_node_prepare() prepares a node's kernel for its schedule;
 * aoe_graph_plan() plans memory and allocates it (with o->plan_only,
 * only sizes it: arena_size, scratch_size), after which the graph runs.
 */
int aoe_graph_analyse(aoe_graph *g);
int aoe_graph_reinfer(aoe_graph *g);
int aoe_node_prepare(aoe_graph *g, aoe_node *n);
int aoe_graph_plan(aoe_graph *g, const aoe_run_opts *o);
/* Whether n may write its output over its input 0 (shapes and op). */
int aoe_node_inplace_ok(const aoe_graph *g, const aoe_node *n);
/*
 * Threads a node runs with: its own count (a subgraph decision) or the
 * session's, capped by its schedule's "nthreads" knob when that is set.
 */
int aoe_node_threads(const aoe_node *n, int session);

/*
 * Control flow (ctl.c).  aoe_rt_op_find() finds an operator: If, Loop
 * and Scan, which the runtime implements since they run graphs, else
 * the kernels' (aoe_op_find).  aoe_bind_scopes() binds what the
 * subgraphs of g's nodes read from the graphs around them (nouter,
 * outer, outer_src of each subgraph, nimplicit of the node), failing
 * with the node's name for a name that no enclosing graph defines.
 * aoe_if_inline() replaces If node ni, whose condition is a constant, by
 * the nodes of the branch it takes.
 */
const aoe_op *aoe_rt_op_find(const char *op_type);
/* The executor's steps that ctl.c uses, which exec.c gives it first. */
typedef struct aoe_ctl_steps {
	int (*analyse)(aoe_graph *g);
	int (*plan)(aoe_graph *g, const aoe_run_opts *o);
	int (*run)(aoe_graph *g, const aoe_run_opts *o);
	int (*node_prepare)(aoe_graph *g, aoe_node *n);
	void (*opts_init)(aoe_run_opts *o);
} aoe_ctl_steps;
void aoe_ctl_init(const aoe_ctl_steps *steps);
int aoe_bind_scopes(aoe_graph *g);
int aoe_if_inline(aoe_graph *g, int ni);

#endif
