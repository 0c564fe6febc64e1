/*
 * fuse.h - fused activations, private to lib/fuse.c and the kernels that
 * honour them (k_conv.c, k_gemm.c); not part of the public header.
 *
 * A fusion rewrite (lib/fuse.c) records an activation folded into a Conv
 * or Gemm as the node's attributes _aoe_act (1 Relu, 2 Clip, 3 Sigmoid,
 * 4 HardSwish), _aoe_act_lo and _aoe_act_hi, and a per-channel Mul or Add
 * by a constant after it as _aoe_post_s and _aoe_post_t (floats, one a
 * channel); the kernel applies them to its output right after computing
 * it.  A residual Add folded into a Conv becomes the
 * Conv's input 3 and the attribute _aoe_add; the kernel adds it before
 * the activation.
 */
#ifndef AOE_FUSE_H
#define AOE_FUSE_H

#include <stdint.h>

#include "aoe.h"
#include "kernel.h"

enum { AOE_ACT_NONE, AOE_ACT_RELU, AOE_ACT_CLIP, AOE_ACT_SIGMOID,
    AOE_ACT_HARDSWISH };

typedef struct aoe_act {
	int kind;
	float lo, hi;
	const float *ps, *pt;	/* per-channel scale and shift after it */
} aoe_act;

/* The activation fused into n (kind AOE_ACT_NONE if none). */
void aoe_fuse_act_of(const aoe_node *n, aoe_act *a);
/*
 * The epilogue that a is (see aoe_epi in kernel.h): 1, or 0 when a does
 * nothing.
 */
int aoe_fuse_epi(const aoe_act *a, aoe_epi *e);
/*
 * The residual fused into Conv n: its input 3 when n has the attribute
 * _aoe_add (the node's input count before the fusion), else NULL.
 */
const float *aoe_fuse_add_of(const aoe_graph *g, const aoe_node *n);
/*
 * The bias per column fused into MatMul n: its input 2 when n has the
 * attribute _aoe_bias, else NULL.
 */
const float *aoe_fuse_bias_of(const aoe_graph *g, const aoe_node *n);
/*
 * The epilogue of a and the residual add (optional, laid out as y) over
 * y in place, as rows of cols values whose channel is the row modulo m,
 * on up to nthreads threads.
 */
void aoe_fuse_act_apply(const aoe_act *a, float *y, const float *add,
    int64_t rows, int64_t cols, int64_t m, int nthreads);

#endif
