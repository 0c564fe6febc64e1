/*
 * registry.c - the table of operators, gathered from each kernel family.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"

static const aoe_op *const families[] = {
	aoe_ops_gemm, aoe_ops_conv, aoe_ops_elem, aoe_ops_norm,
	aoe_ops_pool, aoe_ops_shape, aoe_ops_layout,
};

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
	for (f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (o = families[f]; o->op_type != NULL; o++)
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

int
aoe_op_internal(const char *op_type)
{
	return strcmp(op_type, "AoeReorder") == 0 ||
	    strcmp(op_type, "AoeElemChain") == 0;
}
