/*
 * k_rearr.c - rearrangements: DepthToSpace, SpaceToDepth and
 * ReverseSequence.
 *
 * DepthToSpace and SpaceToDepth are one six-dimensional permutation of
 * an NCHW tensor: DepthToSpace views x as [N][b][b][C/b^2][H][W] (mode
 * DCR, the default) or [N][C/b^2][b][b][H][W] (CRD) and writes it as
 * [N][C/b^2][H][b][W][b]; SpaceToDepth views x as [N][C][H/b][b][W/b][b]
 * and writes [N][b][b][C][H/b][W/b].  The copy walks the output in
 * order, with the source's stride for each of its dimensions, the rows
 * of the output's (N, C, H) split over the threads.  Any dtype.
 *
 * ReverseSequence reverses the first sequence_lens[i] steps along
 * time_axis of batch entry i (batch_axis) and copies the rest.
 *
 * Knobs: "par" (elements per thread; 0 one thread).
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* A six-dimensional strided copy: output dims od, source strides ss. */
struct perm_ctx {
	const char *src;
	char *dst;
	size_t es;
	int64_t od[6], ss[6];
	int64_t rows, nch;	/* rows of od[0..3) */
};

static void
perm_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct perm_ctx *p = ctx;
	int64_t r = aoe_chunk_lo(p->rows, p->nch, chunk);
	int64_t end = aoe_chunk_lo(p->rows, p->nch, chunk + 1);
	int64_t a, b, c, i, j, k, base, rowlen = p->od[3] * p->od[4] * p->od[5];
	size_t es = p->es;

	for (; r < end; r++) {
		a = r / (p->od[1] * p->od[2]);
		b = r / p->od[2] % p->od[1];
		c = r % p->od[2];
		base = a * p->ss[0] + b * p->ss[1] + c * p->ss[2];
		char *d = p->dst + r * rowlen * (int64_t)es;
		for (i = 0; i < p->od[3]; i++)
			for (j = 0; j < p->od[4]; j++) {
				const char *s = p->src + (base + i * p->ss[3] +
				    j * p->ss[4]) * (int64_t)es;
				int64_t st = p->ss[5] * (int64_t)es;
				if (es == 4)
					for (k = 0; k < p->od[5]; k++)
						((uint32_t *)d)[k] = *(const
						    uint32_t *)(s + k * st);
				else
					for (k = 0; k < p->od[5]; k++)
						memcpy(d + k * (int64_t)es,
						    s + k * st, es);
				d += p->od[5] * (int64_t)es;
			}
	}
}

static int
blocksize(const aoe_node *n, int64_t *b)
{
	*b = aoe_attr_int(n, "blocksize", 0);
	if (*b < 1 || *b > 65536)
		return aoe_err(AOE_EDATA, "%s '%s': blocksize %lld is not in "
		    "[1, 65536]", n->op_type, n->name, (long long)*b);
	return 0;
}

/* 1 for DepthToSpace's CRD mode, 0 for DCR, or an error. */
static int
d2s_mode(const aoe_node *n)
{
	const char *m = aoe_attr_str(n, "mode", "DCR");

	if (strcmp(m, "DCR") == 0)
		return 0;
	if (strcmp(m, "CRD") == 0)
		return 1;
	return aoe_err(AOE_EDATA, "%s '%s': mode '%s' is not DCR or CRD",
	    n->op_type, n->name, m);
}

static int
s2d_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t b, dims[4];
	int rc, d2s = strcmp(n->op_type, "DepthToSpace") == 0;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0 ||
	    (rc = blocksize(n, &b)) < 0 || (d2s && (rc = d2s_mode(n)) < 0))
		return rc;
	x = aoe_in(g, n, 0);
	if (x->ndim != 4 || aoe_dtype_size(x->dtype) == 0)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' must be 4-D "
		    "[N, C, H, W] of a fixed-size dtype", n->op_type,
		    n->name, x->name);
	memcpy(dims, x->dims, sizeof(dims));
	if (d2s) {
		if (x->dims[1] % (b * b) != 0)
			return aoe_err(AOE_EDATA, "%s '%s': blocksize %lld "
			    "squared does not divide %lld channels",
			    n->op_type, n->name, (long long)b,
			    (long long)x->dims[1]);
		dims[1] /= b * b;
		dims[2] *= b;
		dims[3] *= b;
	} else {
		if (x->dims[2] % b != 0 || x->dims[3] % b != 0)
			return aoe_err(AOE_EDATA, "%s '%s': blocksize %lld "
			    "does not divide the %lldx%lld plane", n->op_type,
			    n->name, (long long)b, (long long)x->dims[2],
			    (long long)x->dims[3]);
		dims[1] *= b * b;
		dims[2] /= b;
		dims[3] /= b;
	}
	return aoe_set_output(g, n, 0, x->dtype, 4, dims);
}

static int
s2d_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t b = aoe_attr_int(k->n, "blocksize", 1), N = x->dims[0];
	int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3], total;
	struct perm_ctx p;
	int nt;

	p.src = x->data;
	p.dst = y->data;
	p.es = aoe_dtype_size(x->dtype);
	if (strcmp(k->n->op_type, "DepthToSpace") == 0) {
		int64_t c = C / (b * b);
		/* Output [N][c][H][b1][W][b2]. */
		int64_t od[6] = { N, c, H, b, W, b };
		int64_t sc, s1, s2;

		if (d2s_mode(k->n) == 1) {	/* x = [N][c][b1][b2][H][W] */
			sc = b * b * H * W;
			s1 = b * H * W;
			s2 = H * W;
		} else {			/* x = [N][b1][b2][c][H][W] */
			sc = H * W;
			s1 = b * c * H * W;
			s2 = c * H * W;
		}
		int64_t ss[6] = { C * H * W, sc, W, s1, 1, s2 };
		memcpy(p.od, od, sizeof(od));
		memcpy(p.ss, ss, sizeof(ss));
	} else {
		int64_t h = H / b, w = W / b;
		/* Output [N][b1][b2][C][h][w] from x = [N][C][h][b1][w][b2]. */
		int64_t od[6] = { N, b * b, C, h, w, 1 };
		int64_t ss[6] = { C * H * W, 0, H * W, b * W, b, 0 };
		int64_t r, i, j;

		/* The block (b1, b2) is one output dimension: walk it here. */
		memcpy(p.od, od, sizeof(od));
		p.od[1] = 1;
		memcpy(p.ss, ss, sizeof(ss));
		for (r = 0; r < N; r++)
			for (i = 0; i < b; i++)
				for (j = 0; j < b; j++) {
					struct perm_ctx q = p;
					q.src = (const char *)x->data +
					    (r * C * H * W + i * W + j) *
					    (int64_t)p.es;
					q.dst = (char *)y->data + ((r * b * b +
					    i * b + j) * C * h * w) *
					    (int64_t)p.es;
					q.od[0] = 1;
					q.rows = C;
					q.nch = 1;
					perm_chunk(&q, 0, 0);
				}
		return 0;
	}
	p.rows = p.od[0] * p.od[1] * p.od[2];
	total = aoe_tensor_numel(y);
	nt = nthreads_for(total, aoe_sched_get(k->sched, "par", AOE_PAR_DEF),
	    k->nthreads);
	p.nch = aoe_nchunks(p.rows, nt);
	if (total > 0)
		aoe_parallel(nt, p.nch, perm_chunk, &p);
	return 0;
}

/*
 * ReverseSequence.
 */

static int
rs_axes(const aoe_node *n, int *ba, int *ta)
{
	*ba = (int)aoe_attr_int(n, "batch_axis", 1);
	*ta = (int)aoe_attr_int(n, "time_axis", 0);
	if ((*ba != 0 && *ba != 1) || (*ta != 0 && *ta != 1) || *ba == *ta)
		return aoe_err(AOE_EDATA, "%s '%s': batch_axis and time_axis "
		    "must be 0 and 1 or 1 and 0", n->op_type, n->name);
	return 0;
}

static int
rs_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *l;
	int rc, ba, ta;

	if ((rc = aoe_need_inputs(g, n, 2, 2)) < 0 ||
	    (rc = rs_axes(n, &ba, &ta)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	l = aoe_in(g, n, 1);
	if (x->ndim < 2 || aoe_dtype_size(x->dtype) == 0)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' must have rank "
		    "2 or more and a fixed-size dtype", n->op_type, n->name,
		    x->name);
	if ((l->dtype != AOE_I64 && l->dtype != AOE_I32) || l->ndim != 1 ||
	    l->dims[0] != x->dims[ba])
		return aoe_err(AOE_EDATA, "%s '%s': sequence_lens must be "
		    "int32 or int64 of shape [%lld]", n->op_type, n->name,
		    (long long)x->dims[ba]);
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

static int
rs_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *l = aoe_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	int64_t inner = prod(x->dims, 2, x->ndim), T, B, bi, t, len, src;
	int64_t sb, st;
	size_t blk = (size_t)inner * aoe_dtype_size(x->dtype);
	int ba, ta, rc;

	if ((rc = rs_axes(k->n, &ba, &ta)) < 0)
		return rc;
	B = x->dims[ba];
	T = x->dims[ta];
	sb = ba == 0 ? x->dims[1] : 1;	/* in blocks of inner */
	st = ta == 0 ? x->dims[1] : 1;
	for (bi = 0; bi < B; bi++) {
		len = l->dtype == AOE_I64 ? ((const int64_t *)l->data)[bi] :
		    ((const int32_t *)l->data)[bi];
		if (len < 0 || len > T)
			return aoe_err(AOE_EDATA, "%s '%s': sequence length "
			    "%lld is out of range for %lld steps",
			    k->n->op_type, k->n->name, (long long)len,
			    (long long)T);
		for (t = 0; t < T; t++) {
			src = t < len ? len - 1 - t : t;
			memcpy((char *)y->data + (bi * sb + t * st) * blk,
			    (const char *)x->data + (bi * sb + src * st) * blk,
			    blk);
		}
	}
	return 0;
}

const aoe_op aoe_ops_rearr[] = {
	{ "DepthToSpace", s2d_infer, s2d_run, NULL, aoe_par_sched },
	{ "SpaceToDepth", s2d_infer, s2d_run, NULL, aoe_par_sched },
	{ "ReverseSequence", rs_infer, rs_run, NULL, aoe_par_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};
