/*
 * fuse.h - fused activations, private to lib/fuse.c and the kernels that
 * honour them (k_conv.c, k_gemm.c); not part of the public header.
 *
 * A fusion rewrite (lib/fuse.c) records an activation folded into a Conv
 * or Gemm as the node's attributes _aoe_act (1 Relu, 2 Clip, 3 Sigmoid),
 * _aoe_act_lo and _aoe_act_hi; the kernel applies it to its output right
 * after computing it.  A residual Add folded into a Conv becomes the
 * Conv's input 3 and the attribute _aoe_add; the kernel adds it before
 * the activation.
 */
#ifndef AOE_FUSE_H
#define AOE_FUSE_H

#include <stdint.h>

#include "aoe.h"

enum { AOE_ACT_NONE, AOE_ACT_RELU, AOE_ACT_CLIP, AOE_ACT_SIGMOID };

typedef struct aoe_act {
	int kind;
	float lo, hi;
} aoe_act;

/* The activation fused into n (kind AOE_ACT_NONE if none). */
void aoe_fuse_act_of(const aoe_node *n, aoe_act *a);
/*
 * The clamp [*lo, *hi] that a fused Relu or Clip is; 0 (and the whole
 * float range) when a is neither.
 */
int aoe_fuse_clamp(const aoe_act *a, float *lo, float *hi);
/*
 * The residual fused into Conv n: its input 3 when n has the attribute
 * _aoe_add (the node's input count before the fusion), else NULL.
 */
const float *aoe_fuse_add_of(const aoe_graph *g, const aoe_node *n);
/*
 * y = a(y + add) over y[0..len) in place (add optional, laid out as y),
 * on up to nthreads threads.
 */
void aoe_fuse_act_apply(const aoe_act *a, float *y, const float *add,
    int64_t len, int nthreads);

#endif
