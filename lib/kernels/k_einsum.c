/*
 * k_einsum.c - Einsum (ONNX opset 12): float32, float64, int32 and int64.
 *
 * The equation is parsed into labels: letters, and an ellipsis that
 * stands for the same broadcast dimensions in every term (right-aligned,
 * as numpy).  The output is explicit (after "->") or implicit: the
 * ellipsis's dimensions, then the labels that occur once, in
 * alphabetical order.  A label repeated in one term takes that term's
 * diagonal; a label of size 1 against a larger one broadcasts.
 *
 * The operands are folded left to right, each pair as a batched matrix
 * product: the labels both share and still needed later (or in the
 * output) are the batch, those both share and no longer need are
 * contracted, the rest are the rows (left) and columns (right); labels
 * needed nowhere are summed out first.  Each operand is gathered into
 * [batch, rows, depth] or [batch, depth, columns] order (a strided copy
 * that also takes diagonals and sums), and the products of float32 run
 * in the project's tunable GEMM (aoe_sgemm with the node's schedule), so
 * that the contractions of transformer exports ("bhqd,bhkd->bhqk",
 * "bhqk,bhkd->bhqd") are as fast as a MatMul.  The result is gathered
 * into the output's order at the end.
 *
 * Knobs: the GEMM's (mr, nr, mc, kc, nc, par, packb), sized by the
 * largest product of the plan; none when there is no product.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

#define NLAB (52 + AOE_MAXDIM)	/* letters, then the ellipsis's dims */
#define MAXT 16			/* labels in a term */
#define MAXOPS 16		/* operands */

/* A strided view of an operand: its labels, sizes, strides (elements). */
typedef struct view {
	int nd;
	int lab[MAXT];
	int64_t dim[MAXT], st[MAXT];
	void *data;
	int owned;
} view;

typedef struct eplan {
	int nops;
	int nlab[MAXOPS], lab[MAXOPS][MAXT];	/* terms, as label ids */
	int nout, out[MAXT];
	int64_t size[NLAB];
	int ecount;				/* ellipsis dims */
	int64_t gm, gn, gk;			/* the largest product */
} eplan;

static int
label_of(char c)
{
	if (c >= 'a' && c <= 'z')
		return c - 'a';
	if (c >= 'A' && c <= 'Z')
		return 26 + c - 'A';
	return -1;
}

static int
perr(const aoe_node *n, const char *eq, const char *why)
{
	return aoe_err(AOE_EDATA, "%s '%s': equation '%s' does not parse: %s",
	    n->op_type, n->name, eq, why);
}

/*
 * One term from s up to a ',' or "->" or the end: labels into lab, the
 * ellipsis as -1.  Returns the characters read or -1 with why.
 */
static int
parse_term(const char *s, int *lab, int *nl, int *ell, const char **why)
{
	const char *p = s;

	*nl = 0;
	*ell = 0;
	for (; *p != '\0' && *p != ',' && !(p[0] == '-' && p[1] == '>'); p++) {
		if (*p == ' ')
			continue;
		if (*p == '.') {
			if (strncmp(p, "...", 3) != 0 || *ell) {
				*why = "a '.' that is not one ellipsis '...'";
				return -1;
			}
			*ell = 1;
			if (*nl >= MAXT) {
				*why = "too many labels in a term";
				return -1;
			}
			lab[(*nl)++] = -1;
			p += 2;
			continue;
		}
		if (label_of(*p) < 0) {
			*why = "a character that is not a letter";
			return -1;
		}
		if (*nl >= MAXT) {
			*why = "too many labels in a term";
			return -1;
		}
		lab[(*nl)++] = label_of(*p);
	}
	return (int)(p - s);
}

/* Parse n's equation against its inputs' shapes into pl. */
static int
einsum_parse(const aoe_graph *g, const aoe_node *n, eplan *pl)
{
	const char *eq = aoe_attr_str(n, "equation", NULL), *why = NULL, *p;
	int raw[MAXOPS][MAXT], nraw[MAXOPS], ell[MAXOPS], count[NLAB];
	int i, j, l, r, e, oell, orow[MAXT], nor, seen[NLAB];
	const aoe_tensor *t;

	memset(pl, 0, sizeof(*pl));
	memset(count, 0, sizeof(count));
	if (eq == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': no equation attribute",
		    n->op_type, n->name);
	if (n->nin < 1 || n->nin > MAXOPS || n->nout != 1)
		return aoe_err(AOE_EDATA, "%s '%s': %d inputs and %d outputs, "
		    "expected 1 to %d and 1", n->op_type, n->name, n->nin,
		    n->nout, MAXOPS);
	p = eq;
	for (i = 0;; i++) {
		if (i >= n->nin)
			return perr(n, eq, "more terms than inputs");
		if ((r = parse_term(p, raw[i], &nraw[i], &ell[i], &why)) < 0)
			return perr(n, eq, why);
		p += r;
		if (*p != ',')
			break;
		p++;
	}
	if (i + 1 != n->nin)
		return perr(n, eq, "fewer terms than inputs");
	pl->nops = n->nin;
	/* The ellipsis's rank: the most dimensions any term leaves over. */
	for (i = 0; i < pl->nops; i++) {
		if ((t = aoe_in(g, n, i)) == NULL || t->ndim < 0)
			return aoe_err(AOE_EDATA, "%s '%s': input %d is "
			    "missing", n->op_type, n->name, i);
		e = t->ndim - (nraw[i] - ell[i]);
		if (e < 0 || (!ell[i] && e != 0)) {
			char buf[96];
			snprintf(buf, sizeof(buf), "term %d has %d labels for "
			    "an input of rank %d", i, nraw[i] - ell[i],
			    t->ndim);
			return perr(n, eq, buf);
		}
		if (e > pl->ecount)
			pl->ecount = e;
	}
	for (i = 0; i < pl->nops; i++) {
		t = aoe_in(g, n, i);
		e = t->ndim - (nraw[i] - ell[i]);
		for (j = 0, l = 0; j < nraw[i]; j++) {
			if (raw[i][j] >= 0) {
				pl->lab[i][l++] = raw[i][j];
				continue;
			}
			for (r = 0; r < e; r++)
				pl->lab[i][l++] = 52 + pl->ecount - e + r;
		}
		if (l > MAXT)
			return perr(n, eq, "too many dimensions in a term");
		pl->nlab[i] = l;
		for (j = 0; j < l; j++) {
			int64_t d = t->dims[j], *s = &pl->size[pl->lab[i][j]];
			/*
			 * Sizes of a label agree but for 1 (a broadcast); an
			 * empty one (0) is a size like another, not unset.
			 */
			int seen = count[pl->lab[i][j]]++ > 0;
			if (seen && *s != 1 && d != 1 && *s != d) {
				char buf[96];
				snprintf(buf, sizeof(buf), "label sizes %lld "
				    "and %lld differ", (long long)*s,
				    (long long)d);
				return aoe_err(AOE_EDATA, "%s '%s': equation "
				    "'%s': %s", n->op_type, n->name, eq, buf);
			}
			if (d != 1 || !seen)
				*s = d;
		}
	}
	/* The output. */
	if (p[0] == '-' && p[1] == '>') {
		p += 2;
		if ((r = parse_term(p, orow, &nor, &oell, &why)) < 0)
			return perr(n, eq, why);
		if (p[r] != '\0')
			return perr(n, eq, "a ',' or '->' after the output");
		memset(seen, 0, sizeof(seen));
		for (j = 0; j < nor; j++) {
			if (orow[j] < 0) {
				for (r = 0; r < pl->ecount; r++)
					pl->out[pl->nout++] = 52 + r;
				continue;
			}
			if (count[orow[j]] == 0)
				return perr(n, eq, "an output label that no "
				    "input has");
			if (seen[orow[j]]++)
				return perr(n, eq, "a label twice in the "
				    "output");
			if (pl->nout >= MAXT)
				return perr(n, eq, "too many output labels");
			pl->out[pl->nout++] = orow[j];
		}
	} else {
		if (*p != '\0')
			return perr(n, eq, "trailing characters");
		for (r = 0; r < pl->ecount; r++)
			pl->out[pl->nout++] = 52 + r;
		/* Uppercase sorts before lowercase, as in ASCII. */
		for (l = 26; l < 52; l++)
			if (count[l] == 1 && pl->nout < MAXT)
				pl->out[pl->nout++] = l;
		for (l = 0; l < 26; l++)
			if (count[l] == 1 && pl->nout < MAXT)
				pl->out[pl->nout++] = l;
	}
	if (pl->nout > AOE_MAXDIM)
		return perr(n, eq, "an output of more than 8 dimensions");
	return 0;
}

static int
einsum_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x;
	eplan pl;
	int64_t dims[AOE_MAXDIM];
	int rc, i;

	if ((rc = einsum_parse(g, n, &pl)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	for (i = 0; i < n->nin; i++) {
		const aoe_tensor *t = aoe_in(g, n, i);
		if (t->dtype != x->dtype)
			return aoe_err(AOE_EDATA, "%s '%s': inputs of types %s "
			    "and %s", n->op_type, n->name,
			    aoe_dtype_name(x->dtype), aoe_dtype_name(t->dtype));
	}
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64 &&
	    x->dtype != AOE_I32 && x->dtype != AOE_I64)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32, float64, int32, int64)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	for (i = 0; i < pl.nout; i++)
		dims[i] = pl.size[pl.out[i]];
	return aoe_set_output(g, n, 0, x->dtype, pl.nout, dims);
}

/*
 * The typed kernels: a gather that sums (dst, in the order of labels
 * out with sizes odim, contiguous, gets the sum of every element of v
 * that maps to it; a label of v missing from out is summed), and a
 * plain batched product for the types the float GEMM does not take.
 */
#define GATHER(T, NAME)							\
static void								\
NAME(const view *v, int nout, const int *out, const int64_t *odim,	\
    T *dst)								\
{									\
	int64_t ost[MAXT], dst_st[MAXT], idx[MAXT], total = 1, o, i, s;	\
	const T *src = v->data;						\
	int j, q;							\
									\
	for (q = nout - 1, s = 1; q >= 0; q--) {			\
		ost[q] = s;						\
		s *= odim[q];						\
	}								\
	memset(dst, 0, sizeof(T) * (size_t)s);				\
	for (j = 0; j < v->nd; j++) {					\
		dst_st[j] = 0;						\
		for (q = 0; q < nout; q++)				\
			if (out[q] == v->lab[j])			\
				dst_st[j] = ost[q];			\
		total *= v->dim[j];					\
		idx[j] = 0;						\
	}								\
	for (i = 0, o = 0, s = 0; i < total; i++) {			\
		dst[o] += src[s];					\
		for (j = v->nd - 1; j >= 0; j--) {			\
			o += dst_st[j];					\
			s += v->st[j];					\
			if (++idx[j] < v->dim[j])			\
				break;					\
			o -= dst_st[j] * v->dim[j];			\
			s -= v->st[j] * v->dim[j];			\
			idx[j] = 0;					\
		}							\
	}								\
}
GATHER(float, gather_f32)
GATHER(double, gather_f64)
GATHER(int32_t, gather_i32)
GATHER(int64_t, gather_i64)

#define BMM(T, NAME)							\
static void								\
NAME(int64_t nb, int64_t m, int64_t n, int64_t k, const T *a,		\
    const T *b, T *c)							\
{									\
	int64_t t, i, j, p;						\
									\
	memset(c, 0, sizeof(T) * (size_t)(nb * m * n));			\
	for (t = 0; t < nb; t++)					\
		for (i = 0; i < m; i++)					\
			for (p = 0; p < k; p++) {			\
				T av = a[(t * m + i) * k + p];		\
				const T *br = b + (t * k + p) * n;	\
				T *cr = c + (t * m + i) * n;		\
				for (j = 0; j < n; j++)			\
					cr[j] += av * br[j];		\
			}						\
}
BMM(double, bmm_f64)
BMM(int32_t, bmm_i32)
BMM(int64_t, bmm_i64)

/* Gather v into a new contiguous buffer of labels out (NULL: no data). */
static void *
gather(int dtype, const view *v, int nout, const int *out,
    const int64_t *size, int dry)
{
	int64_t odim[MAXT], total = 1;
	void *dst;
	int q;

	for (q = 0; q < nout; q++) {
		odim[q] = size[out[q]];
		total *= odim[q];
	}
	if (dry)
		return NULL;
	if ((dst = malloc(aoe_dtype_size(dtype) * (size_t)max64(total, 1))) ==
	    NULL)
		return NULL;
	if (dtype == AOE_F32)
		gather_f32(v, nout, out, odim, dst);
	else if (dtype == AOE_F64)
		gather_f64(v, nout, out, odim, dst);
	else if (dtype == AOE_I32)
		gather_i32(v, nout, out, odim, dst);
	else
		gather_i64(v, nout, out, odim, dst);
	return dst;
}

/* The labels x, y, z (nx, ny, nz of them) one after the other. */
static int
cat3(int *d, const int *x, int nx, const int *y, int ny, const int *z,
    int nz)
{
	memcpy(d, x, sizeof(int) * nx);
	memcpy(d + nx, y, sizeof(int) * ny);
	memcpy(d + nx + ny, z, sizeof(int) * nz);
	return nx + ny + nz;
}

/* 1 when v holds exactly labels l (nl), contiguous in that order. */
static int
contig(const view *v, const int *l, int nl)
{
	int64_t s = 1;
	int j;

	if (v->nd != nl)
		return 0;
	for (j = nl - 1; j >= 0; j--) {
		if (v->lab[j] != l[j] || (v->dim[j] > 1 && v->st[j] != s))
			return 0;
		s *= v->dim[j];
	}
	return 1;
}

/*
 * Operand a or b for a product, as the labels x, y, z (its batch, then
 * rows and depth, or depth and columns) or, for float32, as x, z, y with
 * *trans set: the data in place when it is laid out so, else gathered
 * into *own.
 */
static const void *
operand(int dt, const view *v, const int64_t *size, const int *x, int nx,
    const int *y, int ny, const int *z, int nz, int *trans, void **own)
{
	int l[MAXT * 3], nl;

	*own = NULL;
	*trans = 0;
	nl = cat3(l, x, nx, y, ny, z, nz);
	if (contig(v, l, nl))
		return v->data;
	nl = cat3(l, x, nx, z, nz, y, ny);
	if (dt == AOE_F32 && contig(v, l, nl)) {
		*trans = 1;
		return v->data;
	}
	nl = cat3(l, x, nx, y, ny, z, nz);
	*own = gather(dt, v, nl, l, size, 0);
	return *own;
}

/*
 * The batched product of a and b into a new buffer *cp, [batch, rows,
 * columns]: batch labels bl, rows ml, depth kl, columns nl.
 */
static int
product(const aoe_node *n, int dt, const view *a, const view *b,
    const int64_t *size, const int *bl, int nb, const int *ml, int nm,
    const int *kl, int nk, const int *nl, int nn, void **cp, int nthreads,
    const aoe_sched *sched)
{
	int64_t B = 1, M = 1, N = 1, K = 1, t;
	const void *pa, *pb;
	void *oa, *ob, *c;
	int q, ta, tb, rc = 0;
	size_t es = aoe_dtype_size(dt);

	for (q = 0; q < nb; q++)
		B *= size[bl[q]];
	for (q = 0; q < nm; q++)
		M *= size[ml[q]];
	for (q = 0; q < nn; q++)
		N *= size[nl[q]];
	for (q = 0; q < nk; q++)
		K *= size[kl[q]];
	pa = operand(dt, a, size, bl, nb, ml, nm, kl, nk, &ta, &oa);
	pb = operand(dt, b, size, bl, nb, kl, nk, nl, nn, &tb, &ob);
	c = malloc(es * (size_t)max64(B * M * N, 1));
	if (pa == NULL || pb == NULL || c == NULL) {
		free(oa);
		free(ob);
		free(c);
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	}
	if (dt == AOE_F32) {
		for (t = 0; t < B && rc == 0; t++)
			rc = aoe_sgemm(ta, tb, M, N, K, 1,
			    (const float *)pa + t * M * K, ta ? M : K,
			    (const float *)pb + t * K * N, tb ? K : N, 0,
			    (float *)c + t * M * N, N, nthreads, sched);
	} else if (dt == AOE_F64)
		bmm_f64(B, M, N, K, pa, pb, c);
	else if (dt == AOE_I32)
		bmm_i32(B, M, N, K, pa, pb, c);
	else
		bmm_i64(B, M, N, K, pa, pb, c);
	free(oa);
	free(ob);
	if (rc < 0) {
		free(c);
		return rc;
	}
	*cp = c;
	return 0;
}

static int
has(const int *l, int n, int x)
{
	int i;

	for (i = 0; i < n; i++)
		if (l[i] == x)
			return 1;
	return 0;
}

/*
 * The view of operand i: repeated labels folded into one with the sum
 * of their strides (its diagonal), and labels of size 1 where the label
 * is larger (a broadcast) dropped.
 */
static void
view_of(const eplan *pl, int i, const aoe_tensor *t, view *v)
{
	int64_t st[MAXT], s = 1;
	int j, q, nd = pl->nlab[i];

	for (j = nd - 1; j >= 0; j--) {
		st[j] = s;
		s *= t->dims[j];
	}
	memset(v, 0, sizeof(*v));
	v->data = t->data;
	for (j = 0; j < nd; j++) {
		int l = pl->lab[i][j];
		if (t->dims[j] == 1 && pl->size[l] != 1)
			continue;
		for (q = 0; q < v->nd && v->lab[q] != l; q++)
			;
		if (q == v->nd) {
			v->lab[v->nd] = l;
			v->dim[v->nd] = t->dims[j];
			v->st[v->nd++] = 0;
		}
		v->st[q] += st[j];
	}
}

/*
 * Run (or, dry, only plan and size the products of) the equation.  The
 * result goes to y.
 */
static int
einsum_eval(const aoe_graph *g, const aoe_node *n, eplan *pl, int dry,
    void *y, int nthreads, const aoe_sched *sched)
{
	const int dt = aoe_in(g, n, 0)->dtype;
	view acc, b;
	int keep[NLAB], i, j, l, rc = 0;
	void *c = NULL;

	view_of(pl, 0, aoe_in(g, n, 0), &acc);
	for (i = 1; i < pl->nops; i++) {
		int bl[MAXT], ml[MAXT], nl[MAXT], kl[MAXT];
		int nb = 0, nm = 0, nn = 0, nk = 0, q;
		int64_t B = 1, M = 1, N = 1, K = 1, t;

		view_of(pl, i, aoe_in(g, n, i), &b);
		/* What the operands after this pair and the output need. */
		memset(keep, 0, sizeof(keep));
		for (j = 0; j < pl->nout; j++)
			keep[pl->out[j]] = 1;
		for (j = i + 1; j < pl->nops; j++)
			for (l = 0; l < pl->nlab[j]; l++)
				keep[pl->lab[j][l]] = 1;
		for (j = 0; j < acc.nd; j++) {
			l = acc.lab[j];
			if (has(b.lab, b.nd, l)) {
				if (keep[l])
					bl[nb++] = l;
				else
					kl[nk++] = l;
			} else if (keep[l])
				ml[nm++] = l;
		}
		for (j = 0; j < b.nd; j++)
			if (!has(acc.lab, acc.nd, b.lab[j]) && keep[b.lab[j]])
				nl[nn++] = b.lab[j];
		for (q = 0; q < nb; q++)
			B *= pl->size[bl[q]];
		for (q = 0; q < nm; q++)
			M *= pl->size[ml[q]];
		for (q = 0; q < nn; q++)
			N *= pl->size[nl[q]];
		for (q = 0; q < nk; q++)
			K *= pl->size[kl[q]];
		if (M * N * K > pl->gm * pl->gn * pl->gk) {
			pl->gm = M;
			pl->gn = N;
			pl->gk = K;
		}
		if (!dry && (rc = product(n, dt, &acc, &b, pl->size, bl, nb, ml,
		    nm, kl, nk, nl, nn, &c, nthreads, sched)) < 0)
			goto out;
		/* The product is the new accumulated operand. */
		if (acc.owned)
			free(acc.data);
		memset(&acc, 0, sizeof(acc));
		acc.data = c;
		acc.owned = 1;
		c = NULL;
		memcpy(acc.lab, bl, sizeof(int) * nb);
		memcpy(acc.lab + nb, ml, sizeof(int) * nm);
		memcpy(acc.lab + nb + nm, nl, sizeof(int) * nn);
		acc.nd = nb + nm + nn;
		for (j = acc.nd - 1, t = 1; j >= 0; j--) {
			acc.dim[j] = pl->size[acc.lab[j]];
			acc.st[j] = t;
			t *= acc.dim[j];
		}
	}
	if (!dry) {
		int64_t odim[MAXT];
		for (j = 0; j < pl->nout; j++)
			odim[j] = pl->size[pl->out[j]];
		if (dt == AOE_F32)
			gather_f32(&acc, pl->nout, pl->out, odim, y);
		else if (dt == AOE_F64)
			gather_f64(&acc, pl->nout, pl->out, odim, y);
		else if (dt == AOE_I32)
			gather_i32(&acc, pl->nout, pl->out, odim, y);
		else
			gather_i64(&acc, pl->nout, pl->out, odim, y);
	}
out:
	if (acc.owned)
		free(acc.data);
	free(c);
	return rc;
}

static int
einsum_run(aoe_kctx *k)
{
	eplan pl;
	int rc;

	if ((rc = einsum_parse(k->g, k->n, &pl)) < 0)
		return rc;
	return einsum_eval(k->g, k->n, &pl, 0, aoe_out(k->g, k->n, 0)->data,
	    k->nthreads, k->sched);
}

static void
einsum_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	const aoe_tensor *x = aoe_in(g, n, 0);

	/* The knobs only where the space has them (aoe_space_einsum). */
	if (n->nin < 2 || x == NULL || x->dtype != AOE_F32)
		return;
	aoe_sgemm_default_sched(s);
	aoe_sched_set(s, "par", 0);
	aoe_sched_set(s, "packb", -1);
}

int
aoe_space_einsum(aoe_space *sp)
{
	eplan pl;
	int rc;

	if ((rc = einsum_parse(sp->g, sp->n, &pl)) < 0 ||
	    (rc = einsum_eval(sp->g, sp->n, &pl, 1, NULL, 1, NULL)) < 0)
		return rc;
	/* Only float32 products go through the tunable GEMM. */
	if (pl.nops < 2 || aoe_in(sp->g, sp->n, 0)->dtype != AOE_F32)
		return 0;
	if ((rc = aoe_space_gemm_knobs(sp, pl.gm, pl.gn, pl.gk)) < 0)
		return rc;
	sp->check = aoe_space_gemm_check;
	sp->constraints = "as Gemm's: (mr,nr) a micro-kernel of this CPU; "
	    "mc % mr == 0; nc % nr == 0";
	return 0;
}

const aoe_op aoe_ops_einsum[] = {
	{ "Einsum", einsum_infer, einsum_run, NULL, einsum_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};
