/*
 * bind.c - bind dynamic input dimensions from an ATC-style shape spec.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ir.h"

/* Bind one "name:d0,d1,..." item. */
static int
bind_one(aoe_graph *g, char *item)
{
	char *colon = strrchr(item, ':'), *tok, *save = NULL;
	int64_t dims[AOE_MAXDIM];
	long long v;
	aoe_tensor *t;
	int i, n = 0, idx;

	if (colon == NULL || colon == item)
		return aoe_err(AOE_EDATA, "bad input shape '%s': expected "
		    "name:d0,d1,...", item);
	*colon = '\0';
	for (i = 0; i < g->ninputs; i++)
		if (strcmp(g->tensors[g->inputs[i]]->name, item) == 0)
			break;
	if (i == g->ninputs)
		return aoe_err(AOE_EDATA, "input shape names '%s', which is "
		    "not an input of the model", item);
	idx = g->inputs[i];
	t = g->tensors[idx];
	for (tok = strtok_r(colon + 1, ",", &save); tok;
	    tok = strtok_r(NULL, ",", &save)) {
		if (n == AOE_MAXDIM)
			return aoe_err(AOE_EUNSUP, "input '%s': more than %d "
			    "dimensions", item, AOE_MAXDIM);
		if (aoe_strtonum(tok, 0, INT32_MAX, &v) < 0)
			return aoe_err(AOE_EDATA, "input '%s': dimension "
			    "'%s' is %s", item, tok, errno == ERANGE ?
			    "out of range" : "not a number");
		dims[n++] = v;
	}
	if (t->ndim >= 0 && n != t->ndim)
		return aoe_err(AOE_EDATA, "input '%s' has %d dimensions, the "
		    "shape gives %d", item, t->ndim, n);
	for (i = 0; t->ndim >= 0 && i < n; i++)
		if (t->dims[i] >= 0 && t->dims[i] != dims[i])
			return aoe_err(AOE_EDATA, "input '%s': dimension %d "
			    "is fixed at %lld, the shape gives %lld", item, i,
			    (long long)t->dims[i], (long long)dims[i]);
	t->ndim = n;
	for (i = 0; i < n; i++)
		t->dims[i] = dims[i];
	if (aoe_tensor_numel(t) == -2 ||
	    (aoe_tensor_numel(t) > 0 && aoe_tensor_nbytes(t) == 0))
		return aoe_err(AOE_ENOMEM, "input '%s': shape is too large",
		    item);
	return 0;
}

int
aoe_bind_shapes(aoe_graph *g, const char *spec)
{
	char *copy = aoe_xstrdup(spec), *item, *save = NULL;
	int rc = 0;

	for (item = strtok_r(copy, ";", &save); item && rc == 0;
	    item = strtok_r(NULL, ";", &save))
		rc = bind_one(g, item);
	free(copy);
	return rc;
}

void
aoe_shape_spec_add(char **spec, const char *item)
{
	size_t l;

	if (*spec == NULL) {
		*spec = aoe_xstrdup(item);
		return;
	}
	l = strlen(*spec) + strlen(item) + 2;
	*spec = aoe_xrealloc(*spec, l);
	strcat(*spec, ";");
	strcat(*spec, item);
}
