/*
 * fuse.h - fused activations, private to lib/fuse.c and the kernels that
 * honour them (k_conv.c, k_gemm.c); not part of the public header.
 *
 * A fusion rewrite (lib/fuse.c) records an activation folded into a Conv
 * or Gemm as the node's attributes _aoe_act (1 Relu, 2 Clip, 3 Sigmoid),
 * _aoe_act_lo and _aoe_act_hi; the kernel applies it to its output right
 * after computing it.
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
/* Apply a to y[0..len) in place on up to nthreads threads. */
void aoe_fuse_act_apply(const aoe_act *a, float *y, int64_t len,
    int nthreads);

#endif
