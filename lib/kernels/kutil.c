/*
 * kutil.c - the helpers that the kernel files share and that are too
 * large to be inline in kernel.h.
 */
#include <string.h>

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

int
aoe_attr_axis(const aoe_node *n, int64_t def, int r)
{
	int64_t axis = aoe_attr_int(n, "axis", def);
	int ax;

	if ((ax = aoe_axis(axis, r)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name, (long long)axis, r);
	return ax;
}

struct copy_ctx {
	char *dst;
	const char *src;
	int64_t n, nch;
};

static void
copy_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct copy_ctx *c = ctx;
	int64_t lo = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t hi = aoe_chunk_lo(c->n, c->nch, chunk + 1);

	memcpy(c->dst + lo, c->src + lo, (size_t)(hi - lo));
}

void
aoe_par_copy(const aoe_kctx *k, void *dst, const void *src, int64_t bytes,
    int64_t elems)
{
	struct copy_ctx c;
	int nt;

	if (dst == src || bytes == 0)
		return;
	nt = nthreads_for(elems, aoe_sched_get(k->sched, "par", AOE_PAR_DEF),
	    k->nthreads);
	c.dst = dst;
	c.src = src;
	c.n = bytes;
	c.nch = aoe_nchunks(bytes, nt);
	aoe_parallel(nt, c.nch, copy_chunk, &c);
}
