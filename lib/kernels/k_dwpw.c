/*
 * k_dwpw.c - a depthwise Conv and the pointwise Conv that reads it, in
 * one pass (lib/passes/fuse.c's decision fuse_dw): the depthwise output
 * is made a band of rows at a time, every channel of it, into a buffer
 * of the thread's that stays in its L2, and the pointwise GEMM (Y = W D
 * over the band's columns) reads it there at once, its epilogue (bias,
 * activation, residual) on each tile as usual.  Unfused, the depthwise
 * output (mobilenet_v2's 144 x 56 x 56 is 1.8 MB) goes out to L3 or
 * memory and comes back; at two threads split by channels against the
 * GEMM's split by columns, half of it from the other core's cache.
 * Here each thread makes and reads its own bands.
 *
 * The band: whole passes of the depthwise kernel (aoe_dw_band, the
 * register-blocked kernel of k_dwconv.c), as many rows as keep the band
 * near BAND_FLOATS floats, fewer where that leaves the threads too few
 * bands to share.  Where even one pass a band leaves a thread idle (a
 * 7x7 plane at two threads), the two run apart, the depthwise output in
 * the node's workspace, each on every thread.
 *
 * The search space stays the pointwise Conv's (the GEMM's knobs); the
 * depthwise part runs its kernel's default pass shape.
 */
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/*
 * A band's floats, about: 192 KB, with the GEMM's packed weights and
 * its output tile inside a Zen 2's 512 KB L2 and well inside a Zen 5's
 * 1 MB.
 */
#define BAND_FLOATS (48 * 1024)

struct dwpw_ctx {
	const aoe_conv_geom *dg;
	const aoe_dw_band *band;
	const float *x, *wd, *bd;
	const aoe_gemm_ex *pw;
	const aoe_sched *s;
	int64_t rows, nbands, ldb;
	int fail;
};

static void
dwpw_chunk(void *arg, int64_t t, int tid)
{
	struct dwpw_ctx *c = arg;
	const aoe_conv_geom *g = c->dg;
	const int64_t OW = g->out[2], OHW = g->outsz;
	int64_t b = t / c->nbands, oh0 = t % c->nbands * c->rows;
	int64_t oh1 = min64(oh0 + c->rows, g->out[1]), ch;
	float *buf;
	aoe_gemm_ex xe;

	(void)tid;
	buf = aoe_sgemm_tlbuf(4, (size_t)(g->c * c->ldb +
	    aoe_dw_band_slack(c->band)));
	if (buf == NULL) {
		__atomic_store_n(&c->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	for (ch = 0; ch < g->c; ch++)
		aoe_dw_band_rows(c->band, b * g->m + ch, c->x + (b * g->c +
		    ch) * g->insz, c->wd + ch * g->ksz, c->bd ? c->bd[ch] : 0,
		    buf + ch * c->ldb, oh0, oh1);
	xe = *c->pw;
	xe.n = (oh1 - oh0) * OW;
	xe.b = buf;
	xe.ldb = c->ldb;
	xe.c = c->pw->c + b * xe.m * OHW + oh0 * OW;
	xe.add = c->pw->add ? c->pw->add + b * xe.m * OHW + oh0 * OW : NULL;
	if (aoe_sgemm_ex(&xe, 1, c->s) < 0)
		__atomic_store_n(&c->fail, 1, __ATOMIC_RELAXED);
}

int
aoe_dwpw_run(const aoe_conv_geom *dg, const float *x, const float *wd,
    const float *bd, const struct aoe_act *dact, const aoe_gemm_ex *pw,
    float *y, float *mid, int nthreads, const aoe_sched *s)
{
	const int64_t OH = dg->out[1], OW = dg->out[2], OHW = dg->outsz;
	struct dwpw_ctx c;
	aoe_dw_band band;
	aoe_gemm_ex t = *pw;
	int64_t per, b;
	int rc = 0;

	if (aoe_dw_band_init(&band, dg, dact) < 0)
		return -1;
	memset(&c, 0, sizeof(c));
	c.dg = dg;
	c.band = &band;
	c.x = x;
	c.wd = wd;
	c.bd = bd;
	t.c = y;
	c.pw = &t;
	c.s = s;
	/* Passes a band: as many as fit BAND_FLOATS, at least one. */
	per = max64(1, BAND_FLOATS / max64(1, dg->c * OW * band.R));
	for (;;) {
		c.rows = min64(OH, per * band.R);
		c.nbands = (OH + c.rows - 1) / c.rows;
		/* Fewer rows a band until each thread has two or more. */
		if (per == 1 || nthreads < 2 || dg->n * c.nbands >=
		    2 * nthreads)
			break;
		per--;
	}
	if (nthreads > 1 && dg->n * c.nbands < nthreads && mid != NULL) {
		/* Too few bands to share: the two apart, on every thread. */
		aoe_gemm_ex xe = *pw;
		aoe_dw_band_free(&band);
		if (aoe_dw_reg(dg, x, wd, bd, dact, NULL, mid, 0, 0, 0, 0,
		    nthreads) < 0)
			return -1;
		for (b = 0; b < dg->n && rc == 0; b++) {
			xe.b = mid + b * dg->c * OHW;
			xe.ldb = OHW;
			xe.c = y + b * pw->m * OHW;
			xe.add = pw->add ? pw->add + b * pw->m * OHW : NULL;
			rc = aoe_sgemm_ex(&xe, nthreads, s);
		}
		return rc < 0 ? -1 : 0;
	}
	c.ldb = c.rows * OW;
	aoe_parallel(nthreads, dg->n * c.nbands, dwpw_chunk, &c);
	aoe_dw_band_free(&band);
	return c.fail ? -1 : 0;
}
