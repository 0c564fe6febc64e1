/*
 * k_sample.c - sampling at computed coordinates: GridSample, RoiAlign.
 */
#include "aoe_kernels.h"
#include "kernel.h"

const aoe_op aoe_ops_sample[] = {
	{ NULL, NULL, NULL, NULL, NULL }
};
