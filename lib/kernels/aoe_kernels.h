/*
 * aoe_kernels.h - the operators: the op table that each kernel family
 * registers in (lib/kernels/registry.c), the helpers kernels share, the
 * GEMM, and the search spaces of the kernels' schedules.
 */
#ifndef AOE_KERNELS_H
#define AOE_KERNELS_H

#include "aoe_ir.h"

/* An operator: its kernel (see lib/kernels/kernel.h). */
typedef struct aoe_op aoe_op;

/*
 * Operators and kernels.
 */


/*
 * The generation of the kernels and of their default schedules.  A bank
 * entry records the one it was measured under ("kernels", aoe-bank(5))
 * and applies only under the same: a schedule that beat the defaults of
 * its day may lose to today's, or fix a knob (a kc, a tile) that a kernel
 * now uses otherwise.  Bump it with any change to a kernel or a default
 * that would make such an entry mislead; entries without the member are
 * generation 1.  2: the GEMM's A prefetch (apf) and pointwise Convs'
 * kc of all input channels.  3: the grouped Conv's row form (grp_form)
 * and a stem's grp_nv, strided 1x1 Convs off algo 6, Winograd F(2,3)'s
 * tile-block split at 2 threads.  4: the output's lines asked for, for
 * writing, in loops threads share (knob cpf), which made the GEMMs,
 * Winograd and algo 8 up to a fifth faster at 2 threads and so moved
 * which algorithm wins where.
 */
#define AOE_KERNELS_GEN 4

/* The registry: the operator for a type, or NULL. */
const aoe_op *aoe_op_find(const char *op_type);
/* All registered operators (NULL-terminated). */
const aoe_op *const *aoe_op_list(void);





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
	const struct aoe_op *op;	/* the node's operator */
	/*
	 * Optional: 1 and why filled when value v of knob is illegal for a
	 * reason worth naming (an instruction set this CPU lacks), else 0.
	 */
	int (*value_why)(const char *knob, int64_t v, char *why, size_t len);
	int64_t fact[8];	/* facts of the node the check needs */
};


/* The space of a prepared (or inferred) node; 0 or a negative error. */
int aoe_space_for(const aoe_graph *g, const aoe_node *n, aoe_space *sp);
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
/* The knob of sp named name, or NULL. */
aoe_knob *aoe_space_knob(const aoe_space *sp, const char *name);
/* from with one knob changed to another legal value; 0 or -AOE_EDATA. */
int aoe_space_mutate(const aoe_space *sp, uint64_t *seed,
    const aoe_sched *from, aoe_sched *to);
/*
 * Print the space as one JSON object (see aoe-space(1)); its "node" is
 * name, or the node's own name when name is NULL.
 */
int aoe_space_print_json(const aoe_space *sp, const char *name, FILE *fp);
/*
 * Whether s lies in the search space of the operator case a canonical
 * signature describes (aoe-bank(5)), on this CPU: its space is rebuilt
 * from the signature's op type, dtypes, shapes and attributes.  0, or
 * -AOE_EDATA with why naming the bad knob (or the bad signature).
 */
int aoe_space_check_sig(const char *sig, const aoe_sched *s, char *why,
    size_t len);
/* Validate s, make it the node's schedule and prepare the node again. */
int aoe_space_apply(aoe_graph *g, aoe_node *n, const aoe_sched *s);

#endif
