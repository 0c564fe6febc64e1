/*
 * sig.c - the canonical signature of an operator case and its 64-bit
 * key.
 *
 * The signature and the key are part of the bank format (aoe-bank(5)):
 * changing either one invalidates every bank ever written, so both are
 * fixed forever.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
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
sb_shape(sbuf *b, int dtype, int ndim, const int64_t *dims)
{
	int d;

	sb_printf(b, "%s[", aoe_dtype_name(dtype));
	for (d = 0; d < ndim; d++)
		sb_printf(b, "%s%lld", d ? "," : "", (long long)dims[d]);
	sb_printf(b, "]");
}

static void
sb_tensor(sbuf *b, const aoe_tensor *t)
{
	sb_shape(b, t->dtype, t->ndim, t->dims);
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
	const int64_t *dw;
	int i, nput, nsig, nm, rc = 0;

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
	if ((dw = aoe_attr_ints(n, "_aoe_dw", &nm)) != NULL && nm > 0)
		nsig = (int)dw[0];
	else if (aoe_attr_find(n, "_aoe_add") != NULL)
		nsig = (int)aoe_attr_int(n, "_aoe_add", n->nin);
	else if (aoe_attr_find(n, "_aoe_bias") != NULL)
		nsig = (int)aoe_attr_int(n, "_aoe_bias", n->nin);
	if (nsig < 0 || nsig > n->nin)
		nsig = n->nin;
	for (i = 0; i < nsig; i++) {
		const aoe_tensor *t = n->in[i] >= 0 ? aoe_in(g, n, i) : NULL;
		const int64_t *mid;
		if (i)
			sb_printf(&b, "|");
		/*
		 * A pointwise Conv that computes the depthwise one before it
		 * (_aoe_dw_mid, that one's output) keeps the signature of
		 * that input: its op-bank entries apply.
		 */
		if (i == 0 && t != NULL && (mid = aoe_attr_ints(n,
		    "_aoe_dw_mid", &nm)) != NULL) {
			sb_shape(&b, t->dtype, nm, mid);
			continue;
		}
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
		const int64_t *pin;
		int np;
		if (i)
			sb_printf(&b, "|");
		/*
		 * A Conv with a max pool fused after it (_aoe_pool_in, its
		 * own output's shape) keeps the signature of that output.
		 */
		if (i == 0 && t != NULL && (pin = aoe_attr_ints(n,
		    "_aoe_pool_in", &np)) != NULL) {
			sb_shape(&b, t->dtype, np, pin);
			continue;
		}
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

/*
 * The other way: a one-node graph from a canonical signature, so that a
 * bank entry's search space can be rebuilt from what the entry stores.
 */

/* A parse cursor over a signature. */
typedef struct sp_cur {
	const char *p;
	char *why;
	size_t wl;
} sp_cur;

static int
sp_bad(sp_cur *c, const char *what)
{
	snprintf(c->why, c->wl, "signature: %s at '%.20s'", what, c->p);
	return -AOE_EDATA;
}

static int
sp_lit(sp_cur *c, const char *lit)
{
	size_t l = strlen(lit);

	if (strncmp(c->p, lit, l) != 0)
		return 0;
	c->p += l;
	return 1;
}

static int
sp_int(sp_cur *c, long long lo, long long hi, long long *v)
{
	char *end;

	if (!(isdigit((unsigned char)*c->p) || (*c->p == '-' &&
	    isdigit((unsigned char)c->p[1]))))
		return sp_bad(c, "a number expected");
	errno = 0;
	*v = strtoll(c->p, &end, 10);
	if (errno || *v < lo || *v > hi)
		return sp_bad(c, "a number out of range");
	c->p = end;
	return 0;
}

static int
sp_float(sp_cur *c, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(c->p, &end);
	if (end == c->p)
		return sp_bad(c, "a number expected");
	c->p = end;
	return 0;
}

/* dtype[d0,d1,...] into t. */
static int
sp_tensor(sp_cur *c, aoe_tensor *t)
{
	char name[32];
	int64_t dims[AOE_MAXDIM];
	long long d;
	size_t l = strcspn(c->p, "[");
	int dt, nd = 0;

	if (l == 0 || l >= sizeof(name) || c->p[l] != '[')
		return sp_bad(c, "a tensor type expected");
	memcpy(name, c->p, l);
	name[l] = '\0';
	if ((dt = aoe_dtype_from_name(name)) < 0)
		return sp_bad(c, "an unknown dtype");
	c->p += l + 1;
	while (*c->p != ']') {
		if (nd == AOE_MAXDIM)
			return sp_bad(c, "too many dimensions");
		if (nd > 0 && !sp_lit(c, ","))
			return sp_bad(c, "',' expected");
		if (sp_int(c, 0, INT64_MAX / 2, &d) < 0)
			return -AOE_EDATA;
		dims[nd++] = (int64_t)d;
	}
	c->p++;
	aoe_tensor_set(t, dt, nd, dims);
	if (aoe_tensor_numel(t) < 0)
		return sp_bad(c, "a tensor too large");
	return 0;
}

/* Constants' data is not in a signature: small ones are zeros. */
#define SP_CONST_BYTES (1 << 20)

/* in= or out= up to the next ';': the node's tensors. */
static int
sp_tensors(sp_cur *c, aoe_graph *g, int out, int **idx, int *n)
{
	char name[32];
	int cap = 0, i;

	*idx = NULL;
	*n = 0;
	while (*c->p != ';') {
		if (*n > 0 && !sp_lit(c, "|"))
			return sp_bad(c, "'|' expected");
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			*idx = aoe_xrealloc(*idx, sizeof(int) * (size_t)cap);
		}
		if (sp_lit(c, "-")) {
			(*idx)[(*n)++] = -1;
			continue;
		}
		snprintf(name, sizeof(name), "%s%d", out ? "y" : "x", *n);
		i = aoe_graph_tensor(g, name);
		if (sp_tensor(c, g->tensors[i]) < 0)
			return -AOE_EDATA;
		g->tensors[i]->kind = out ? AOE_T_VALUE : AOE_T_INPUT;
		if (!out && sp_lit(c, "c")) {
			g->tensors[i]->kind = AOE_T_CONST;
			if (aoe_tensor_nbytes(g->tensors[i]) <= SP_CONST_BYTES &&
			    aoe_tensor_alloc_const(g->tensors[i]) < 0)
				return sp_bad(c, "out of memory");
		}
		(*idx)[(*n)++] = i;
	}
	return 0;
}

/* LEN:text */
static int
sp_lenstr(sp_cur *c, char **s)
{
	long long l;

	if (sp_int(c, 0, 1 << 20, &l) < 0)
		return -AOE_EDATA;
	if (!sp_lit(c, ":") || strnlen(c->p, (size_t)l) < (size_t)l)
		return sp_bad(c, "a string too short");
	*s = aoe_xmalloc((size_t)l + 1);
	memcpy(*s, c->p, (size_t)l);
	(*s)[l] = '\0';
	c->p += l;
	return 0;
}

static int
sp_attr(sp_cur *c, aoe_node *n)
{
	char name[128];
	size_t l = strcspn(c->p, ":;");
	aoe_attr *a;
	long long v;
	double f;
	int i;

	if (l == 0 || l >= sizeof(name) || c->p[l] != ':')
		return sp_bad(c, "an attribute expected");
	memcpy(name, c->p, l);
	name[l] = '\0';
	c->p += l + 1;
	if (sp_lit(c, "f=")) {
		if (sp_float(c, &f) < 0)
			return -AOE_EDATA;
		aoe_node_add_attr(n, name, AOE_A_FLOAT)->f = (float)f;
	} else if (sp_lit(c, "i=")) {
		if (sp_int(c, INT64_MIN, INT64_MAX, &v) < 0)
			return -AOE_EDATA;
		aoe_node_add_attr(n, name, AOE_A_INT)->i = v;
	} else if (sp_lit(c, "s=")) {
		a = aoe_node_add_attr(n, name, AOE_A_STRING);
		if (sp_lenstr(c, &a->s) < 0)
			return -AOE_EDATA;
	} else if (sp_lit(c, "fs=[") || sp_lit(c, "is=[") ||
	    sp_lit(c, "ss=[")) {
		char kind = c->p[-4];
		a = aoe_node_add_attr(n, name, kind == 'f' ? AOE_A_FLOATS :
		    kind == 'i' ? AOE_A_INTS : AOE_A_STRINGS);
		for (i = 0; *c->p != ']'; i++) {
			if (*c->p == '\0' || (i > 0 && !sp_lit(c, ",")))
				return sp_bad(c, "',' expected");
			if (i >= 1 << 16)
				return sp_bad(c, "a list too long");
			if (kind == 'f') {
				a->floats = aoe_xrealloc(a->floats,
				    sizeof(float) * (size_t)(i + 1));
				if (sp_float(c, &f) < 0)
					return -AOE_EDATA;
				a->floats[i] = (float)f;
			} else if (kind == 'i') {
				a->ints = aoe_xrealloc(a->ints,
				    sizeof(int64_t) * (size_t)(i + 1));
				if (sp_int(c, INT64_MIN, INT64_MAX, &v) < 0)
					return -AOE_EDATA;
				a->ints[i] = v;
			} else {
				a->strings = aoe_xrealloc(a->strings,
				    sizeof(char *) * (size_t)(i + 1));
				a->strings[i] = NULL;
				a->n = i + 1;
				if (sp_lenstr(c, &a->strings[i]) < 0)
					return -AOE_EDATA;
			}
			a->n = i + 1;
		}
		c->p++;
	} else if (sp_lit(c, "t=none")) {
		aoe_node_add_attr(n, name, AOE_A_TENSOR);
	} else if (sp_lit(c, "t=")) {
		a = aoe_node_add_attr(n, name, AOE_A_TENSOR);
		a->t = aoe_xcalloc(1, sizeof(aoe_tensor));
		if (sp_tensor(c, a->t) < 0)
			return -AOE_EDATA;
		a->t->kind = AOE_T_CONST;
		if (aoe_tensor_nbytes(a->t) <= SP_CONST_BYTES &&
		    aoe_tensor_alloc_const(a->t) < 0)
			return sp_bad(c, "out of memory");
		if (!sp_lit(c, "#") || strspn(c->p, "0123456789abcdef") != 16)
			return sp_bad(c, "a tensor hash expected");
		c->p += 16;
	} else if (sp_lit(c, "g")) {
		aoe_node_add_attr(n, name, AOE_A_GRAPH);
	} else if (sp_lit(c, "u")) {
		aoe_node_add_attr(n, name, AOE_A_UNDEF);
	} else
		return sp_bad(c, "an attribute value expected");
	if (*c->p != '\0' && *c->p != ';')
		return sp_bad(c, "';' expected");
	return 0;
}

int
aoe_sig_graph(const char *sig, aoe_graph **gp, int *nthreads, char *why,
    size_t wl)
{
	sp_cur c = { sig, why, wl };
	aoe_graph *g;
	aoe_node *n;
	char type[128], *colon;
	int *in = NULL, *out = NULL, nin = 0, nout = 0, k, rc = -AOE_EDATA;
	long long th;
	size_t l;

	*gp = NULL;
	if (wl > 0)
		why[0] = '\0';
	if (!sp_lit(&c, "op="))
		return sp_bad(&c, "'op=' expected");
	l = strcspn(c.p, ";");
	if (l == 0 || l >= sizeof(type))
		return sp_bad(&c, "an op type expected");
	memcpy(type, c.p, l);
	type[l] = '\0';
	c.p += l;
	g = aoe_graph_new("signature");
	g->opset = 17;
	if (!sp_lit(&c, ";threads=") || sp_int(&c, 0, 1 << 16, &th) < 0 ||
	    !sp_lit(&c, ";in=")) {
		if (why[0] == '\0' || strncmp(why, "signature", 9) != 0)
			sp_bad(&c, "';threads=N;in=' expected");
		goto out;
	}
	if (sp_tensors(&c, g, 0, &in, &nin) < 0)
		goto out;
	if (!sp_lit(&c, ";out=")) {
		sp_bad(&c, "';out=' expected");
		goto out;
	}
	if (sp_tensors(&c, g, 1, &out, &nout) < 0)
		goto out;
	if (!sp_lit(&c, ";attrs=")) {
		sp_bad(&c, "';attrs=' expected");
		goto out;
	}
	colon = strchr(type, ':');
	k = aoe_graph_add_node(g, "node", colon ? colon + 1 : type, nin, in,
	    nout, out);
	n = &g->nodes[k];
	if (colon) {
		*colon = '\0';
		n->domain = aoe_xstrdup(type);
	}
	n->nthreads = (int)th;
	for (k = 0; *c.p != '\0'; k++)
		if ((k > 0 && !sp_lit(&c, ";")) || sp_attr(&c, n) < 0) {
			if (strncmp(why, "signature", 9) != 0)
				sp_bad(&c, "';' expected");
			goto out;
		}
	for (k = 0; k < nin; k++)
		if (in[k] >= 0 && g->tensors[in[k]]->kind == AOE_T_INPUT) {
			g->inputs = aoe_xrealloc(g->inputs, sizeof(int) *
			    (size_t)(g->ninputs + 1));
			g->inputs[g->ninputs++] = in[k];
		}
	for (k = 0; k < nout; k++)
		if (out[k] >= 0) {
			g->outputs = aoe_xrealloc(g->outputs, sizeof(int) *
			    (size_t)(g->noutputs + 1));
			g->outputs[g->noutputs++] = out[k];
		}
	if (nthreads)
		*nthreads = (int)th;
	*gp = g;
	g = NULL;
	rc = 0;
out:
	free(in);
	free(out);
	aoe_graph_free(g);
	return rc;
}
