/*
 * registry.c - the op table: the kernel families, each with its
 * operators and its search space, gathered in one place.  Only this file
 * names the families; everything else finds an operator, or a node's
 * search space, through it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

static const aoe_family families[] = {
	{ "gemm", aoe_ops_gemm, aoe_space_gemm },
	{ "conv", aoe_ops_conv, aoe_space_conv },
	{ "elem", aoe_ops_elem, aoe_space_elem },
	{ "norm", aoe_ops_norm, aoe_space_norm },
	{ "pool", aoe_ops_pool, aoe_space_pool },
	{ "shape", aoe_ops_shape, aoe_space_shape },
	{ "layout", aoe_ops_layout, NULL },
	{ "rnn", aoe_ops_rnn, aoe_space_rnn },
	{ "einsum", aoe_ops_einsum, aoe_space_einsum },
	{ "tri", aoe_ops_tri, NULL },
	{ "text", aoe_ops_text, NULL },
	{ "train", aoe_ops_train, aoe_space_par },
	{ "scatter", aoe_ops_scatter, aoe_space_par },
	{ "rearr", aoe_ops_rearr, aoe_space_par },
	{ "matrix", aoe_ops_matrix, NULL },
	{ "signal", aoe_ops_signal, NULL },
	{ "sample", aoe_ops_sample, NULL },
	{ "random", aoe_ops_random, NULL },
	{ "quant", aoe_ops_quant, aoe_space_quant },
	{ "seq", aoe_ops_seq, NULL },
	{ "select", aoe_ops_select, NULL },
	{ "act", aoe_ops_act, NULL },
};
#define NFAMILIES (sizeof(families) / sizeof(families[0]))

#define MAXOPS 256
static const aoe_op *all[MAXOPS + 1];
static int nall = -1;

const aoe_op *const *
aoe_op_list(void)
{
	size_t f;
	const aoe_op *o;

	if (nall >= 0)
		return all;
	nall = 0;
	for (f = 0; f < NFAMILIES; f++)
		for (o = families[f].ops; o->op_type != NULL; o++)
			if (nall < MAXOPS)
				all[nall++] = o;
			else {
				/* A build error, not a user's: say so loudly. */
				fprintf(stderr, "libaoe: more than %d operators; "
				    "raise MAXOPS in registry.c\n", MAXOPS);
				abort();
			}
	all[nall] = NULL;
	return all;
}

const aoe_op *
aoe_op_find(const char *op_type)
{
	const aoe_op *const *o;

	for (o = aoe_op_list(); *o != NULL; o++)
		if (strcmp((*o)->op_type, op_type) == 0)
			return *o;
	return NULL;
}

static const aoe_family *
family_of(const aoe_op *op)
{
	const aoe_op *o;
	size_t f;

	for (f = 0; f < NFAMILIES; f++)
		for (o = families[f].ops; o->op_type != NULL; o++)
			if (o == op)
				return &families[f];
	return NULL;
}

int
aoe_space_for(const aoe_graph *g, const aoe_node *n, aoe_space *sp)
{
	const aoe_op *op = n->op ? n->op : aoe_op_find(n->op_type);
	const aoe_family *f;
	char why[256];
	int rc, i;

	memset(sp, 0, sizeof(*sp));
	if (op == NULL || (f = family_of(op)) == NULL ||
	    f->space == NULL)
		return aoe_err(AOE_EUNSUP, "%s '%s': no kernel, so no search "
		    "space", n->op_type, n->name);
	sp->g = g;
	sp->n = n;
	sp->op = op;
	snprintf(sp->op_type, sizeof(sp->op_type), "%s", n->op_type);
	snprintf(sp->family, sizeof(sp->family), "%s", f->name);
	sp->constraints = "none";
	if (op->default_sched)
		op->default_sched(g, n, &sp->def);
	if ((rc = f->space(sp)) < 0)
		return rc;
	/*
	 * Every op may also run on one thread instead of all of the run's:
	 * small ops often win, since a parallel region costs microseconds
	 * and far more when another process holds the other core.
	 */
	if (sp->nknobs > 0) {
		static const int64_t tv[2] = { 0, 1 };
		if ((rc = aoe_space_add(sp, "nthreads", 2, tv, "threads for "
		    "this op: 0 all of the run's, 1 one")) < 0)
			return rc;
	}
	/* Knobs take the default's value; the default must be legal. */
	for (i = 0; i < sp->nknobs; i++)
		sp->knobs[i].def = aoe_sched_get(&sp->def, sp->knobs[i].name,
		    sp->knobs[i].def);
	if (aoe_space_validate(sp, &sp->def, why, sizeof(why)) < 0)
		return aoe_err(AOE_EINTERNAL, "%s '%s': the default schedule "
		    "is not in the search space: %s", n->op_type, n->name,
		    why);
	return 0;
}


int
aoe_space_apply(aoe_graph *g, aoe_node *n, const aoe_sched *s)
{
	aoe_space sp;
	char why[256];
	int rc;

	if ((rc = aoe_space_for(g, n, &sp)) < 0)
		return rc;
	if (aoe_space_validate(&sp, s, why, sizeof(why)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': illegal schedule: %s",
		    n->op_type, n->name, why);
	n->sched = *s;
	n->sched_from_bank = 0;
	aoe_node_unprepare(n);
	if (n->op && n->op->prepare)
		return n->op->prepare(g, n);
	return 0;
}

int
aoe_space_check_sig(const char *sig, const aoe_sched *s, char *why,
    size_t len)
{
	aoe_graph *g;
	aoe_node *n;
	aoe_space sp;
	char w[512];
	int rc;

	if (aoe_sig_graph(sig, &g, NULL, w, sizeof(w)) < 0) {
		snprintf(why, len, "%s", w);
		return -AOE_EDATA;
	}
	n = &g->nodes[0];
	if ((n->op = aoe_op_find(n->op_type)) == NULL) {
		snprintf(why, len, "libaoe has no operator %s", n->op_type);
		aoe_graph_free(g);
		return -AOE_EDATA;
	}
	if (aoe_space_for(g, n, &sp) < 0) {
		/* An operator without a space takes no knobs. */
		if (family_of(n->op) != NULL &&
		    family_of(n->op)->space != NULL) {
			snprintf(why, len, "no search space for this "
			    "signature: %s", aoe_errmsg());
			aoe_graph_free(g);
			return -AOE_EDATA;
		}
		memset(&sp, 0, sizeof(sp));
		snprintf(sp.op_type, sizeof(sp.op_type), "%s", n->op_type);
	}
	rc = aoe_space_validate(&sp, s, why, len);
	aoe_graph_free(g);
	return rc;
}
