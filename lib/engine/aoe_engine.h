/*
 * aoe_engine.h - graph preparation as a run does it: the passes with
 * the subgraph decisions, the operator bank's schedules, the runtime's
 * plan, and the AOE_MODE capture hook.
 */
#ifndef AOE_ENGINE_H
#define AOE_ENGINE_H

#include "aoe_bank.h"

/*
 * Prepare g to run as o says: check that every op is supported (listing
 * all that are not), infer shapes, fold constants, apply the subgraph
 * decisions (fusion, layout, threads), pick schedules (bank then
 * default), prepare kernels and plan memory.  After it the graph is
 * ready to run; with o->plan_only the memory is sized (arena_size,
 * scratch_size) but not allocated, and the graph is neither runnable nor
 * handed to AOE_MODE.
 */
int aoe_graph_prepare(aoe_graph *g, const aoe_run_opts *o);

/*
 * Call fn for each live node of g, in execution order, and of the
 * subgraphs of its live nodes (If branches, Loop and Scan bodies) that
 * are prepared, nested to any depth, each node after the subgraphs of
 * the node before it.  The graph passed is the one holding the node;
 * path names the node from g: its own name in g, and in a subgraph
 * "<node>/<attribute>/<name>", e.g. "if0/then_branch/conv0" or
 * "loop0/body/if1/else_branch/mm" (see aoe-opat(1)).  A non-zero return
 * of fn stops the walk and is returned.
 */
typedef int (*aoe_node_fn)(aoe_graph *g, aoe_node *n, const char *path,
    void *arg);
int aoe_graph_each_node(aoe_graph *g, aoe_node_fn fn, void *arg);
/*
 * The node of g (or of one of its prepared subgraphs) that path names,
 * as aoe_graph_each_node() names them: 1 with *gp and *np set, else 0.
 */
int aoe_graph_find_path(aoe_graph *g, const char *path, aoe_graph **gp,
    aoe_node **np);

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


#endif
