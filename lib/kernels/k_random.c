/*
 * k_random.c - random numbers: Bernoulli, RandomUniform(Like), RandomNormal(Like).
 */
#include "aoe_kernels.h"
#include "kernel.h"

const aoe_op aoe_ops_random[] = {
	{ NULL, NULL, NULL, NULL, NULL }
};
