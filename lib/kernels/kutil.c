/*
 * kutil.c - the helpers that the kernel files share and that are too
 * large to be inline in kernel.h.
 */
#include "aoe_kernels.h"
#include "half.h"
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
aoe_num_dtype(int dt)
{
	switch (dt) {
	case AOE_F32: case AOE_F64: case AOE_F16: case AOE_BF16:
	case AOE_I8: case AOE_I16: case AOE_I32: case AOE_I64:
	case AOE_U8: case AOE_U16: case AOE_U32: case AOE_U64:
		return 1;
	}
	return 0;
}

double
aoe_get_f64(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case AOE_F32: return ((const float *)p)[i];
	case AOE_F64: return ((const double *)p)[i];
	case AOE_F16: return h2f(((const uint16_t *)p)[i]);
	case AOE_BF16: return bf2f(((const uint16_t *)p)[i]);
	case AOE_I8: return ((const int8_t *)p)[i];
	case AOE_I16: return ((const int16_t *)p)[i];
	case AOE_I32: return ((const int32_t *)p)[i];
	case AOE_I64: return (double)((const int64_t *)p)[i];
	case AOE_U8: case AOE_BOOL: return ((const uint8_t *)p)[i];
	case AOE_U16: return ((const uint16_t *)p)[i];
	case AOE_U32: return ((const uint32_t *)p)[i];
	case AOE_U64: return (double)((const uint64_t *)p)[i];
	}
	return 0;
}

void
aoe_put_f64(void *p, int dt, int64_t i, double v)
{
	int64_t w = v > -9.2233720368547758e18 && v < 9.2233720368547758e18 ?
	    (int64_t)v : INT64_MIN;

	switch (dt) {
	case AOE_F32: ((float *)p)[i] = (float)v; break;
	case AOE_F64: ((double *)p)[i] = v; break;
	case AOE_F16: ((uint16_t *)p)[i] = d2h(v); break;
	case AOE_BF16: ((uint16_t *)p)[i] = f2bf((float)v); break;
	case AOE_I8: ((int8_t *)p)[i] = (int8_t)w; break;
	case AOE_I16: ((int16_t *)p)[i] = (int16_t)w; break;
	case AOE_I32: ((int32_t *)p)[i] = (int32_t)w; break;
	case AOE_I64: ((int64_t *)p)[i] = w; break;
	case AOE_U8: ((uint8_t *)p)[i] = (uint8_t)w; break;
	case AOE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
	case AOE_U16: ((uint16_t *)p)[i] = (uint16_t)w; break;
	case AOE_U32: ((uint32_t *)p)[i] = (uint32_t)w; break;
	case AOE_U64: ((uint64_t *)p)[i] = v >= 9.2233720368547758e18 &&
	    v < 1.8446744073709552e19 ? (uint64_t)v : (uint64_t)w; break;
	}
}

int
aoe_const_scalar(const aoe_graph *g, const aoe_node *n, int i, double *v)
{
	const aoe_tensor *t = opt_in(g, n, i);

	if (t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
		    n->op_type, n->name, i);
	if (t->kind != AOE_T_CONST || t->data == NULL)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' must be a "
		    "constant (bind dynamic shapes with --input-shape)",
		    n->op_type, n->name, t->name);
	if (aoe_tensor_numel(t) != 1 || t->ndim > 1)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is not a "
		    "scalar", n->op_type, n->name, t->name);
	if (!aoe_num_dtype(t->dtype))
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is %s, not a "
		    "number", n->op_type, n->name, t->name,
		    aoe_dtype_name(t->dtype));
	*v = aoe_get_f64(t->data, t->dtype, 0);
	return 0;
}
