/*
 * kutil.c - the helpers that the kernel files share and that are too
 * large to be inline in kernel.h.
 */
#include "aoe_kernels.h"
#include "kernel.h"

int
aoe_need_inputs(const aoe_graph *g, const aoe_node *n, int lo, int hi)
{
	int i;

	if (n->nin < lo || n->nin > hi)
		return aoe_err(AOE_EDATA, "%s '%s': %d inputs, expected %d..%d",
		    n->op_type, n->name, n->nin, lo, hi);
	for (i = 0; i < lo; i++)
		if (opt_in(g, n, i) == NULL)
			return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
			    n->op_type, n->name, i);
	if (n->nout < 1 || aoe_out(g, n, 0) == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': no output", n->op_type,
		    n->name);
	return 0;
}

int
aoe_space_par(aoe_space *sp)
{
	if (aoe_space_add_pow2(sp, "par", 1, 4096, 1048576, AOE_PAR_DEF, 1,
	    "elements per thread (0: one thread)") < 0)
		return -AOE_EINTERNAL;
	return 0;
}

void
aoe_par_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "par", AOE_PAR_DEF);
}
