/*
 * sig.c - the canonical signature of an operator case and its 64-bit
 * key.
 *
 * The signature and the key are part of the bank format (aoe-bank(5)):
 * changing either one invalidates every bank ever written, so both are
 * fixed forever.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ir.h"

/* FNV-1a 64: the key of a signature. */
uint64_t
aoe_op_key(const char *sig)
{
	return aoe_fnv1a(AOE_FNV_INIT, sig, strlen(sig));
}

/* A growing string. */
typedef struct sbuf {
	char *s;
	size_t n, cap;
} sbuf;

static void
sb_printf(sbuf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	for (;;) {
		va_start(ap, fmt);
		r = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (r >= 0 && (size_t)r < b->cap - b->n) {
			b->n += (size_t)r;
			return;
		}
		b->cap = b->cap * 2 + (size_t)(r > 0 ? r : 0) + 64;
		b->s = aoe_xrealloc(b->s, b->cap);
	}
}

static void
sb_tensor(sbuf *b, const aoe_tensor *t)
{
	int d;

	sb_printf(b, "%s[", aoe_dtype_name(t->dtype));
	for (d = 0; d < t->ndim; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)t->dims[d]);
	sb_printf(b, "]");
}

static int
cmp_attr(const void *a, const void *b)
{
	const aoe_attr *x = *(const aoe_attr *const *)a;
	const aoe_attr *y = *(const aoe_attr *const *)b;

	return strcmp(x->name, y->name);
}

static void
sb_attr(sbuf *b, const aoe_attr *a)
{
	int i;

	sb_printf(b, "%s:", a->name);
	switch (a->type) {
	case AOE_A_FLOAT:
		sb_printf(b, "f=%.9g", (double)a->f);
		break;
	case AOE_A_INT:
		sb_printf(b, "i=%lld", (long long)a->i);
		break;
	case AOE_A_STRING:
		sb_printf(b, "s=%zu:%s", strlen(a->s ? a->s : ""),
		    a->s ? a->s : "");
		break;
	case AOE_A_FLOATS:
		sb_printf(b, "fs=[");
		for (i = 0; i < a->n; i++)
			sb_printf(b, "%s%.9g", i ? "," : "",
			    (double)a->floats[i]);
		sb_printf(b, "]");
		break;
	case AOE_A_INTS:
		sb_printf(b, "is=[");
		for (i = 0; i < a->n; i++)
			sb_printf(b, "%s%lld", i ? "," : "",
			    (long long)a->ints[i]);
		sb_printf(b, "]");
		break;
	case AOE_A_STRINGS:
		sb_printf(b, "ss=[");
		for (i = 0; i < a->n; i++)
			sb_printf(b, "%s%zu:%s", i ? "," : "",
			    strlen(a->strings[i]), a->strings[i]);
		sb_printf(b, "]");
		break;
	case AOE_A_TENSOR:
		if (a->t) {
			sb_printf(b, "t=");
			sb_tensor(b, a->t);
			sb_printf(b, "#%016llx", (unsigned long long)
			    (a->t->data ? aoe_fnv1a(AOE_FNV_INIT, a->t->data,
			    aoe_tensor_nbytes(a->t)) : 0));
		} else
			sb_printf(b, "t=none");
		break;
	case AOE_A_GRAPH:
		sb_printf(b, "g");
		break;
	default:
		sb_printf(b, "u");
		break;
	}
}

/*
 * The canonical signature (aoe-bank(5)):
 *
 *   op=TYPE;threads=N;in=T|T|-;out=T;attrs=a:k=v;b:k=v
 *
 * where T is dtype[d0,d1,...] with a "c" after a constant input and "-"
 * for an absent optional one, and the attributes are sorted by name
 * (less those libaoe adds itself, named "_aoe_...", and a residual fused
 * into a Conv).  Names of nodes and tensors are not part of it.
 */
int
aoe_op_signature(const aoe_graph *g, const aoe_node *n, int nthreads,
    char *buf, size_t len)
{
	sbuf b = { NULL, 0, 0 };
	const aoe_attr **at;
	int i, nput, nsig, rc = 0;

	b.cap = 256;
	b.s = aoe_xmalloc(b.cap);
	b.s[0] = '\0';
	if (n->domain && n->domain[0] && strcmp(n->domain, "ai.onnx") != 0)
		sb_printf(&b, "op=%s:%s", n->domain, n->op_type);
	else
		sb_printf(&b, "op=%s", n->op_type);
	sb_printf(&b, ";threads=%d;in=", nthreads);
	/*
	 * A residual fused into a Conv (its input 3, attribute _aoe_add:
	 * the input count before) or a bias into a MatMul (input 2,
	 * _aoe_bias likewise) is not part of the op's signature.
	 */
	nsig = n->nin;
	if (aoe_attr_find(n, "_aoe_add") != NULL)
		nsig = (int)aoe_attr_int(n, "_aoe_add", n->nin);
	else if (aoe_attr_find(n, "_aoe_bias") != NULL)
		nsig = (int)aoe_attr_int(n, "_aoe_bias", n->nin);
	if (nsig < 0 || nsig > n->nin)
		nsig = n->nin;
	for (i = 0; i < nsig; i++) {
		const aoe_tensor *t = n->in[i] >= 0 ? aoe_in(g, n, i) : NULL;
		if (i)
			sb_printf(&b, "|");
		if (t == NULL) {
			sb_printf(&b, "-");
			continue;
		}
		if (t->ndim < 0)
			rc = aoe_err(AOE_EDATA, "node '%s': input %d has no "
			    "static shape", n->name, i);
		sb_tensor(&b, t);
		if (t->kind == AOE_T_CONST)
			sb_printf(&b, "c");
	}
	sb_printf(&b, ";out=");
	for (i = 0; i < n->nout; i++) {
		const aoe_tensor *t = n->out[i] >= 0 ? aoe_out(g, n, i) : NULL;
		if (i)
			sb_printf(&b, "|");
		if (t == NULL)
			sb_printf(&b, "-");
		else
			sb_tensor(&b, t);
	}
	sb_printf(&b, ";attrs=");
	at = aoe_xcalloc((size_t)n->nattr + 1, sizeof(*at));
	for (i = 0; i < n->nattr; i++)
		at[i] = &n->attrs[i];
	qsort(at, (size_t)n->nattr, sizeof(*at), cmp_attr);
	for (nput = 0, i = 0; i < n->nattr; i++) {
		/*
		 * Attributes libaoe adds itself (a fused activation, "_aoe_")
		 * change no schedule: a fused op keeps its op-bank entries.
		 */
		if (strncmp(at[i]->name, "_aoe_", 5) == 0)
			continue;
		if (nput++)
			sb_printf(&b, ";");
		sb_attr(&b, at[i]);
	}
	free(at);
	if (rc == 0 && b.n >= len)
		rc = aoe_err(AOE_ENOMEM, "node '%s': signature of %zu bytes "
		    "is longer than %zu", n->name, b.n, len);
	if (rc == 0)
		memcpy(buf, b.s, b.n + 1);
	free(b.s);
	return rc;
}
