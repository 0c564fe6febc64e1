/*
 * k_act.c - the activations that lib/passes/fuse.c writes when it
 * canonicalises their written-out forms, as operators of their own for
 * where no Conv, Gemm or MatMul takes them into its epilogue: Swish
 * (x * sigmoid(x), ONNX's Swish with alpha 1, also called SiLU) and
 * Gelu (ONNX opset 20: approximate "none", the erf form, or "tanh").
 * Both run aoe_epi_row (kernel.h), the epilogue the fused forms run, so
 * that a fused and an unfused graph agree.
 */
#include <math.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* The fused-activation kind of Swish or Gelu node n, or -1 if none. */
int
aoe_act_kind_of(const aoe_node *n)
{
	const char *ap;

	if (n->domain)
		return -1;
	if (strcmp(n->op_type, "Swish") == 0)
		return aoe_attr_float(n, "alpha", 1) == 1 ? AOE_ACT_SILU : -1;
	if (strcmp(n->op_type, "Gelu") != 0)
		return -1;
	ap = aoe_attr_str(n, "approximate", "none");
	if (strcmp(ap, "none") == 0)
		return AOE_ACT_GELU;
	if (strcmp(ap, "tanh") == 0)
		return AOE_ACT_GELU_TANH;
	return -1;
}

static int
act_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 only)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (aoe_act_kind_of(n) < 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s not supported",
		    n->op_type, n->name, strcmp(n->op_type, "Swish") == 0 ?
		    "alpha other than 1" : "approximate other than none or "
		    "tanh");
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

static int
act_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	aoe_tensor *x = aoe_in(k->g, n, 0), *y = aoe_out(k->g, n, 0);
	int64_t numel = aoe_tensor_numel(x), cols = 4096;
	aoe_act a;

	memset(&a, 0, sizeof(a));
	a.kind = aoe_act_kind_of(n);
	a.lo = -INFINITY;
	a.hi = INFINITY;
	if (numel <= 0)
		return 0;
	if (y->data != x->data)
		memcpy(y->data, x->data, sizeof(float) * (size_t)numel);
	/* Rows of 4096 (the last whole rows, then the rest). */
	if (numel / cols > 0)
		aoe_act_apply(&a, y->data, NULL, numel / cols, cols, 1,
		    k->nthreads);
	if (numel % cols)
		aoe_act_apply(&a, (float *)y->data + numel / cols * cols,
		    NULL, 1, numel % cols, 1, 1);
	return 0;
}

const aoe_op aoe_ops_act[] = {
	{ "Swish", act_infer, act_run, NULL, NULL },
	{ "Gelu", act_infer, act_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
