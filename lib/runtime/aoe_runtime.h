/*
 * aoe_runtime.h - the executor: support check, execution order, shape
 * inference and constant folding, kernel preparation, the memory plan,
 * and running a prepared graph.
 */
#ifndef AOE_RUNTIME_H
#define AOE_RUNTIME_H

#include "aoe_kernels.h"

/*
 * Decisions by signature for the subgraphs of a graph (lib/passes); the
 * runtime only carries a pointer to them for the layers above.
 */
typedef struct aoe_dtable aoe_dtable;

/*
 * How subgraph decisions are made when a graph is prepared
 * (lib/engine/prepare.c): from the table and the subgraph bank, with the
 * defaults for a chain without an entry (AOE_FUSE_BANK, the default;
 * AOE_FUSE=all or none in the environment override it); none; the
 * default decisions everywhere; or fuse_force everywhere.
 */
enum { AOE_FUSE_BANK, AOE_FUSE_OFF, AOE_FUSE_ALL, AOE_FUSE_FORCE };

typedef struct aoe_run_opts {
	int nthreads;		/* 0: the number of online CPUs */
	int static_memory;	/* 1: no buffer reuse (GE_USE_STATIC_MEMORY) */
	int profile;		/* 1: per-node times (PROFILING_MODE) */
	int use_bank;		/* 0: ignore knowledge banks (--no-bank) */
	int plan_only;		/* 1: plan memory, allocate none; cannot run */
	/* What the layers above the runtime read when they prepare: */
	int fuse_mode;		/* AOE_FUSE_* */
	aoe_sched fuse_force;	/* the decisions of AOE_FUSE_FORCE */
	aoe_dtable *decisions;	/* by signature, before the bank; or NULL */
} aoe_run_opts;

/* Defaults, with GE_USE_STATIC_MEMORY and PROFILING_MODE applied. */
void aoe_run_opts_init(aoe_run_opts *o);

/*
 * Every input of g has a supported type and a static shape, not too
 * large: else an error naming it (and how to bind a dynamic one).
 */
int aoe_graph_check_inputs(const aoe_graph *g);
/* Names of ops in g that no kernel supports, as "A, B"; NULL if none. */
char *aoe_graph_unsupported(const aoe_graph *g);
/* Run the prepared graph once.  Inputs must have their data set. */
int aoe_graph_run(aoe_graph *g, const aoe_run_opts *o);
/* Print the per-node profile gathered while profiling. */
void aoe_profile_print(const aoe_graph *g, FILE *fp);

#endif
