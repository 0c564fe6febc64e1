/*
 * seq.c - the run-time values of sequences and optionals: a sequence's
 * elements, detached copies of tensors, and the copy of a value from one
 * tensor to another (see aoe_ir.h).
 */
#include <stdlib.h>
#include <string.h>

#include "ir.h"

aoe_tensor *
aoe_tensor_dup(const aoe_tensor *t)
{
	aoe_tensor *c = aoe_xcalloc(1, sizeof(*c));
	size_t nb = aoe_tensor_nbytes(t);

	c->name = t->name ? aoe_xstrdup(t->name) : NULL;
	aoe_tensor_set(c, t->dtype, t->ndim, t->dims);
	c->kind = AOE_T_CONST;
	c->producer = c->last_use = c->alias = -1;
	c->offset = -1;
	c->seq_len = -1;
	c->data = aoe_xmalloc(nb ? nb : 1);
	c->owned = 1;
	if (nb)
		memcpy(c->data, t->data, nb);
	return c;
}

aoe_seq *
aoe_seq_of(aoe_tensor *t)
{
	if (t->seq == NULL)
		t->seq = aoe_xcalloc(1, sizeof(*t->seq));
	return t->seq;
}

int
aoe_seq_insert(aoe_seq *s, int pos, aoe_tensor *e)
{
	if (pos < 0 || pos > s->n) {
		aoe_tensor_free(e);
		return aoe_err(AOE_EINTERNAL, "sequence position %d out of "
		    "0..%d", pos, s->n);
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 8;
		s->t = aoe_xrealloc(s->t, (size_t)s->cap * sizeof(*s->t));
	}
	memmove(s->t + pos + 1, s->t + pos, (size_t)(s->n - pos) *
	    sizeof(*s->t));
	s->t[pos] = e;
	s->n++;
	return 0;
}

void
aoe_seq_erase(aoe_seq *s, int pos)
{
	if (pos < 0 || pos >= s->n)
		return;
	aoe_tensor_free(s->t[pos]);
	memmove(s->t + pos, s->t + pos + 1, (size_t)(s->n - pos - 1) *
	    sizeof(*s->t));
	s->n--;
}

int
aoe_value_copy(aoe_tensor *dst, const aoe_tensor *src)
{
	size_t nb;
	int i, rc;

	if (dst->vkind != src->vkind)
		return aoe_err(AOE_EDATA, "'%s' is a %s, '%s' a %s", dst->name,
		    dst->vkind == AOE_V_SEQ ? "sequence" : "tensor", src->name,
		    src->vkind == AOE_V_SEQ ? "sequence" : "tensor");
	dst->present = src->optional ? src->present : 1;
	if (dst->optional && !dst->present) {
		aoe_seq_clear(dst->seq);
		return 0;
	}
	if (src->vkind == AOE_V_SEQ) {
		aoe_seq *d = aoe_seq_of(dst);

		if (d == src->seq)
			return 0;
		aoe_seq_clear(d);
		for (i = 0; src->seq && i < src->seq->n; i++)
			if ((rc = aoe_seq_insert(d, d->n,
			    aoe_tensor_dup(src->seq->t[i]))) < 0)
				return rc;
		return 0;
	}
	if (dst->dynamic && (rc = aoe_tensor_resize(dst, src->dtype,
	    src->ndim, src->dims)) < 0)
		return rc;
	if (dst->dtype != src->dtype || !aoe_same_shape(dst, src)) {
		char a[128], b[128];
		return aoe_err(AOE_EDATA, "'%s' is %s %s at run time, '%s' "
		    "%s %s", src->name, aoe_dtype_name(src->dtype),
		    aoe_shape_str(src, a, sizeof(a)), dst->name,
		    aoe_dtype_name(dst->dtype), aoe_shape_str(dst, b,
		    sizeof(b)));
	}
	nb = aoe_tensor_nbytes(src);
	if (nb && dst->data != src->data)
		memcpy(dst->data, src->data, nb);
	return 0;
}

void
aoe_value_like(aoe_tensor *t, const aoe_tensor *src)
{
	aoe_tensor_set(t, src->dtype, src->ndim, src->dims);
	t->vkind = src->vkind;
	t->optional = src->optional;
	t->seq_len = src->seq_len;
	t->dynamic = src->dynamic;
}
