/*
 * k_layout.c - the blocked layout NCHW8c (see kernel.h): reorders to and
 * from it, and AoeReorder, the node that a subgraph's layout decision
 * (lib/passes/fuse.c) puts where a blocked region meets plain tensors.
 *
 * AoeReorder has one input and one output of the same logical shape
 * [N, C, spatial...] and the attribute "to": 8 makes the output NCHW8c
 * from a plain input, 0 makes it plain from an NCHW8c input.
 */
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

typedef struct reorder {
	const float *x;
	float *y;
	int64_t c, cb, sp;
	int to;
} reorder;

/*
 * One block of eight channels of one image: plain planes p (C's planes of
 * that image, sp apart) to or from the block b (sp pixels of 8 lanes).
 * Lanes past the channel count are written as zero, or not read.
 */
static void
reorder_block(const reorder *r, const float *src, float *dst, int nc)
{
	int64_t s, sp = r->sp;
	int q, j;

	if (r->to) {
		for (s = 0; s + 8 <= sp; s += 8) {
			__m256 v[8];

			for (q = 0; q < 8; q++)
				v[q] = q < nc ? _mm256_loadu_ps(src + q * sp + s) :
				    _mm256_setzero_ps();
			aoe_tr8(v);
			for (j = 0; j < 8; j++)
				_mm256_storeu_ps(dst + (s + j) * 8, v[j]);
		}
		for (; s < sp; s++)
			for (q = 0; q < 8; q++)
				dst[s * 8 + q] = q < nc ? src[q * sp + s] : 0;
		return;
	}
	for (s = 0; s + 8 <= sp; s += 8) {
		__m256 v[8];

		for (j = 0; j < 8; j++)
			v[j] = _mm256_loadu_ps(src + (s + j) * 8);
		aoe_tr8(v);
		for (q = 0; q < nc; q++)
			_mm256_storeu_ps(dst + q * sp + s, v[q]);
	}
	for (; s < sp; s++)
		for (q = 0; q < nc; q++)
			dst[q * sp + s] = src[s * 8 + q];
}

/* Chunk t: image t / cb, channel block t % cb. */
static void
reorder_chunk(void *arg, int64_t t, int tid)
{
	const reorder *r = arg;
	int64_t i = t / r->cb, b = t % r->cb;
	const float *plain = (r->to ? r->x : (const float *)r->y) +
	    (i * r->c + b * 8) * r->sp;
	const float *blk = (r->to ? (const float *)r->y : r->x) +
	    t * r->sp * 8;
	int nc = (int)min64(8, r->c - b * 8);

	(void)tid;
	if (r->to)
		reorder_block(r, plain, (float *)blk, nc);
	else
		reorder_block(r, blk, (float *)plain, nc);
}

static void
reorder_run(const float *x, float *y, int64_t n, int64_t c, int64_t sp,
    int to, int nthreads)
{
	reorder r = { x, y, c, ceildiv(c, 8), sp, to };

	if (n * c * sp == 0)
		return;
	/* Below about 64 KiB a second thread costs more than it saves. */
	if (n * r.cb * sp * 8 < 16384)
		nthreads = 1;
	aoe_parallel(nthreads, n * r.cb, reorder_chunk, &r);
}

void
aoe_to_8c(const float *x, float *y, int64_t n, int64_t c, int64_t sp,
    int nthreads)
{
	reorder_run(x, y, n, c, sp, 1, nthreads);
}

void
aoe_from_8c(const float *x, float *y, int64_t n, int64_t c, int64_t sp,
    int nthreads)
{
	reorder_run(x, y, n, c, sp, 0, nthreads);
}

static int
reorder_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x = n->nin == 1 ? aoe_in(g, n, 0) : NULL;
	int64_t to = aoe_attr_int(n, "to", -1);
	int rc;

	if (x == NULL || n->nout != 1)
		return aoe_err(AOE_EDATA, "AoeReorder '%s': one input and one "
		    "output", n->name);
	if (to != 0 && to != AOE_LAYOUT_8C)
		return aoe_err(AOE_EDATA, "AoeReorder '%s': attribute 'to' "
		    "must be 0 or %d", n->name, AOE_LAYOUT_8C);
	if (x->dtype != AOE_F32 || x->ndim < 2)
		return aoe_err(AOE_EDATA, "AoeReorder '%s': input must be a "
		    "float tensor of rank 2 or more", n->name);
	if ((rc = aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims)) < 0)
		return rc;
	aoe_out(g, n, 0)->layout = (int)to;
	return 0;
}

static int
reorder_run_op(aoe_kctx *k)
{
	const aoe_tensor *x = aoe_in(k->g, k->n, 0);

	reorder_run(x->data, aoe_out(k->g, k->n, 0)->data, x->dims[0],
	    x->dims[1], prod(x->dims, 2, x->ndim),
	    aoe_attr_int(k->n, "to", 0) != 0, k->nthreads);
	return 0;
}

const aoe_op aoe_ops_layout[] = {
	{ "AoeReorder", reorder_infer, reorder_run_op, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
