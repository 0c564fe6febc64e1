/*
 * k_conv.c - Conv and ConvTranspose (1-D, 2-D and 3-D, NCHW).
 *
 * Conv picks an algorithm by the knob "algo" (0 or absent: the default
 * heuristic, which is 4 for one input channel per group and at most four
 * filters per group, 1 where it applies, else 2):
 *
 *	1  direct GEMM, for 1x1 kernels with unit strides and no padding:
 *	   Y[g] = W[g] X[g] on the NCHW planes as they are
 *	2  implicit im2col: the GEMM's B packer reads the input image
 *	   directly, so no column matrix is ever stored
 *	3  explicit im2col into the workspace, tiled to bound its size,
 *	   then GEMM
 *	4  direct depthwise loops (one input channel per group), eight
 *	   channels at a time in 2-D
 *	5  Winograd F(m x m, 3 x 3) (k_winograd.c), for 2-D 3x3 kernels
 *	   with unit strides and dilations; knobs "wino_m" (2 or 4),
 *	   "wino_tb" and "wino_kb" (blocking, 0 auto)
 *	6  explicit im2col as 3, the GEMM turned round: Y^T = col^T W^T,
 *	   its vectors along the output channels, then transposed into Y;
 *	   for few output positions (7x7 planes) that would fill 8-wide
 *	   vectors badly; a pointwise Conv's input is its column matrix,
 *	   read in place
 *	7  direct convolution in the blocked layout NCHW8c (k_conv8c.c),
 *	   2-D, for group 1, depthwise groups, or groups of multiples of 8
 *	   channels in and out; knobs "ur_w", "oc_blk", "ic_blk", "oh_blk"
 *	   and "x8c" (see there).  It is the only algorithm that reads or
 *	   writes NCHW8c tensors, so a Conv whose input or output tensor
 *	   has that layout (lib/passes/fuse.c decides, after aoe_conv_8c_ok())
 *	   runs it whatever the schedule says; with plain tensors it
 *	   reorders in its workspace as it needs, so that OPAT can tune it
 *	   per op, the reorders included
 *	8  direct grouped convolution (k_grpconv.c), 2-D, for groups of
 *	   a multiple of 8 output channels (one group among them: a dense
 *	   Conv), or one group of at most 4 input channels (a stem), and
 *	   column strides 1 and 2:
 *	   a group's output channels along the vector lanes, pixels
 *	   broadcast from a padded copy of the input; knobs "grp_vec",
 *	   "grp_nv", "grp_oh", "grp_ow" and "grp_rows" (see there)
 *
 * ConvTranspose is a GEMM (W^T X, column-tiled) followed by col2im.
 * Weights that are constants are packed for the GEMM once, in prepare
 * (knob "prepack", default 1).  Other knobs: "batch_par" (-1 auto, 1
 * threads over images and groups, 0 threads inside each GEMM), "tile"
 * (columns per im2col or col2im tile, 0 auto), "planes" (algo 2: pack
 * from a padded, stride-phase-split copy of the input; -1 auto) and the
 * GEMM's own (mr, nr, mc, kc, nc, par, packb).  A pointwise Conv's
 * default mr x nr is the micro-kernel shape whose tiles waste the fewest
 * lanes on its Cout x H*W output (pw_shape), not the GEMM's own default.
 */
#include <float.h>
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

enum { ALGO_AUTO, ALGO_1X1, ALGO_IMPLICIT, ALGO_IM2COL, ALGO_DEPTHWISE,
    ALGO_WINOGRAD, ALGO_IM2COL_T, ALGO_BLOCKED, ALGO_GROUPED };

/* Workspace bound for an im2col or col2im tile, in floats. */
#define TILE_FLOATS ((int64_t)1 << 21)

/* The geometry of a convolution (kernel.h). */
typedef aoe_conv_geom conv_geom;

/* Floor division for a possibly negative numerator (b > 0). */
static int64_t
floordiv(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

/*
 * Read an INTS attribute of length want into out, or fill out with def
 * when it is absent.
 */
static int
axis_ints(const aoe_node *n, const char *name, int want, int64_t def,
    int64_t *out, int *given)
{
	const int64_t *v;
	int cnt, i;

	v = aoe_attr_ints(n, name, &cnt);
	*given = v != NULL;
	for (i = 0; i < want; i++)
		out[i] = def;
	if (v == NULL)
		return 0;
	if (cnt != want)
		return aoe_err(AOE_EDATA, "%s '%s': attribute %s has %d "
		    "values, %d expected", n->op_type, n->name, name, cnt,
		    want);
	for (i = 0; i < want; i++)
		out[i] = v[i];
	return 0;
}

/*
 * Parse and check a Conv (transpose == 0) or ConvTranspose node into
 * geom, computing the output shape.
 */
static int
conv_geom_of(const aoe_graph *g, const aoe_node *n, int transpose,
    conv_geom *cg)
{
	int i;

	for (i = 0; i < 3 && i < n->nin; i++) {
		const aoe_tensor *t = aoe_in(g, n, i);
		if (t != NULL && t->dtype != AOE_F32)
			return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' of "
			    "type %s not supported (float32 only)",
			    n->op_type, n->name, t->name,
			    aoe_dtype_name(t->dtype));
	}
	if (!transpose && (aoe_attr_find(n, "_aoe_dw_mid") != NULL ||
	    aoe_attr_find(n, "_aoe_dw") != NULL)) {
		/*
		 * A pointwise Conv that computes the depthwise one before it
		 * (fuse_dw) reads that one's output, of shape _aoe_dw_mid.
		 */
		const aoe_tensor *x = aoe_in(g, n, 0);
		const int64_t *mid;
		aoe_tensor xm;
		int nm;
		/*
		 * Both or neither (a graph file may carry either alone): the
		 * shape alone would have the Conv read its input as a larger
		 * one.
		 */
		if (x == NULL || aoe_attr_find(n, "_aoe_dw") == NULL ||
		    (mid = aoe_attr_ints(n, "_aoe_dw_mid", &nm)) == NULL ||
		    nm != 4 || x->ndim != 4 || mid[0] != x->dims[0] ||
		    mid[1] != x->dims[1])
			return aoe_err(AOE_EDATA, "%s '%s': _aoe_dw and "
			    "_aoe_dw_mid do not describe a fused depthwise "
			    "Conv on its input", n->op_type, n->name);
		xm = *x;
		for (i = 0; i < 4; i++)
			xm.dims[i] = mid[i];
		return aoe_conv_geom_of(g, n, &xm, aoe_in(g, n, 1),
		    aoe_in(g, n, 2), 0, cg);
	}
	return aoe_conv_geom_of(g, n, aoe_in(g, n, 0), aoe_in(g, n, 1),
	    aoe_in(g, n, 2), transpose, cg);
}

/*
 * The depthwise Conv that pointwise Conv n computes first (fuse_dw; its
 * attribute _aoe_dw: n's own input count, the kernel, strides and pads
 * top, left, bottom, right), on n's input 0 with weights and bias its
 * inputs 4 and 5: its geometry in dg, by aoe_conv_geom_of on a node that
 * has those attributes under their ONNX names, checked against
 * _aoe_dw_mid.
 */
static int
dw_geom_of(const aoe_graph *g, const aoe_node *n, conv_geom *dg)
{
	const aoe_tensor *x = aoe_in(g, n, 0), *w = aoe_in(g, n, 4);
	const aoe_tensor *b = aoe_in(g, n, 5);
	const int64_t *a, *mid;
	aoe_attr at[4];
	aoe_node dw;
	int na, nm, rc;

	a = aoe_attr_ints(n, "_aoe_dw", &na);
	mid = aoe_attr_ints(n, "_aoe_dw_mid", &nm);
	if (a == NULL || na != 9 || mid == NULL || nm != 4 || x == NULL ||
	    x->ndim != 4 || x->dtype != AOE_F32 || (w != NULL &&
	    w->dtype != AOE_F32) || (b != NULL && b->dtype != AOE_F32))
		return aoe_err(AOE_EDATA, "%s '%s': the fused depthwise Conv "
		    "is malformed", n->op_type, n->name);
	memset(at, 0, sizeof(at));
	at[0].name = (char *)"group";
	at[0].type = AOE_A_INT;
	at[0].i = x->dims[1];
	at[1].name = (char *)"kernel_shape";
	at[2].name = (char *)"strides";
	at[3].name = (char *)"pads";
	at[1].type = at[2].type = at[3].type = AOE_A_INTS;
	at[1].n = at[2].n = 2;
	at[3].n = 4;
	at[1].ints = (int64_t *)a + 1;
	at[2].ints = (int64_t *)a + 3;
	at[3].ints = (int64_t *)a + 5;
	memset(&dw, 0, sizeof(dw));
	dw.name = n->name;
	dw.op_type = n->op_type;
	dw.nattr = 4;
	dw.attrs = at;
	if ((rc = aoe_conv_geom_of(g, &dw, x, w, b, 0, dg)) < 0)
		return rc;
	if (dg->cg != 1 || dg->mg != 1 || mid[0] != dg->n ||
	    mid[1] != dg->c || mid[2] != dg->out[1] || mid[3] != dg->out[2] ||
	    !aoe_dw_reg_ok(dg))
		return aoe_err(AOE_EDATA, "%s '%s': the fused depthwise Conv "
		    "does not match its output", n->op_type, n->name);
	return 0;
}

/* The activation of the depthwise Conv fused into n (_aoe_dw_act). */
static void
dw_act_of(const aoe_node *n, aoe_act *a)
{
	memset(a, 0, sizeof(*a));
	a->kind = (int)aoe_attr_int(n, "_aoe_dw_act", AOE_ACT_NONE);
	a->lo = aoe_attr_float(n, "_aoe_dw_lo", -FLT_MAX);
	a->hi = aoe_attr_float(n, "_aoe_dw_hi", FLT_MAX);
}

int
aoe_conv_geom_of(const aoe_graph *g, const aoe_node *n, const aoe_tensor *x,
    const aoe_tensor *w, const aoe_tensor *b, int transpose,
    conv_geom *cg)
{
	const char *ap;
	int64_t ks[3], st[3], dl[3], pads[6], op[3], os[AOE_MAXDIM];
	int nsp, i, j, given, pads_given, os_given, rc, cnt;
	const int64_t *osv;

	memset(cg, 0, sizeof(*cg));
	if (x == NULL || w == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': inputs X and W are "
		    "required", n->op_type, n->name);
	if (x->ndim < 3 || x->ndim > 5)
		return aoe_err(AOE_EUNSUP, "%s '%s': %d-D input not "
		    "supported (1 to 3 spatial dimensions)", n->op_type,
		    n->name, x->ndim);
	if (w->ndim != x->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': W has rank %d, X rank %d",
		    n->op_type, n->name, w->ndim, x->ndim);
	nsp = x->ndim - 2;
	cg->nsp = nsp;
	cg->n = x->dims[0];
	cg->c = x->dims[1];
	cg->group = aoe_attr_int(n, "group", 1);
	if (cg->group < 1)
		return aoe_err(AOE_EDATA, "%s '%s': group %lld is invalid",
		    n->op_type, n->name, (long long)cg->group);
	if (cg->c % cg->group)
		return aoe_err(AOE_EDATA, "%s '%s': %lld channels do not "
		    "split into %lld groups", n->op_type, n->name,
		    (long long)cg->c, (long long)cg->group);
	cg->cg = cg->c / cg->group;
	if (!transpose) {
		cg->m = w->dims[0];
		if (w->dims[1] != cg->cg)
			return aoe_err(AOE_EDATA, "%s '%s': W has %lld input "
			    "channels, %lld expected", n->op_type, n->name,
			    (long long)w->dims[1], (long long)cg->cg);
		if (cg->m % cg->group)
			return aoe_err(AOE_EDATA, "%s '%s': %lld filters do "
			    "not split into %lld groups", n->op_type,
			    n->name, (long long)cg->m,
			    (long long)cg->group);
		cg->mg = cg->m / cg->group;
	} else {
		if (w->dims[0] != cg->c)
			return aoe_err(AOE_EDATA, "%s '%s': W has %lld input "
			    "channels, %lld expected", n->op_type, n->name,
			    (long long)w->dims[0], (long long)cg->c);
		cg->mg = w->dims[1];
		cg->m = cg->mg * cg->group;
	}
	if (b != NULL && (b->ndim != 1 || b->dims[0] != cg->m))
		return aoe_err(AOE_EDATA, "%s '%s': bias must have shape "
		    "(%lld)", n->op_type, n->name, (long long)cg->m);

	if ((rc = axis_ints(n, "kernel_shape", nsp, 0, ks, &given)) < 0)
		return rc;
	for (i = 0; i < nsp; i++) {
		if (given && ks[i] != w->dims[2 + i])
			return aoe_err(AOE_EDATA, "%s '%s': kernel_shape "
			    "does not match W", n->op_type, n->name);
		ks[i] = w->dims[2 + i];
	}
	if ((rc = axis_ints(n, "strides", nsp, 1, st, &given)) < 0 ||
	    (rc = axis_ints(n, "dilations", nsp, 1, dl, &given)) < 0 ||
	    (rc = axis_ints(n, "pads", 2 * nsp, 0, pads,
	    &pads_given)) < 0 ||
	    (rc = axis_ints(n, "output_padding", nsp, 0, op,
	    &given)) < 0)
		return rc;
	for (i = 0; i < nsp; i++) {
		if (st[i] < 1 || dl[i] < 1)
			return aoe_err(AOE_EDATA, "%s '%s': strides and "
			    "dilations must be positive", n->op_type,
			    n->name);
		if (pads[i] < 0 || pads[nsp + i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': negative pads",
			    n->op_type, n->name);
		if (op[i] < 0 || (transpose && op[i] >= max64(st[i], dl[i])))
			return aoe_err(AOE_EDATA, "%s '%s': output_padding "
			    "must be below the stride or dilation",
			    n->op_type, n->name);
		if (ks[i] < 1)
			return aoe_err(AOE_EDATA, "%s '%s': empty kernel",
			    n->op_type, n->name);
	}
	ap = aoe_attr_str(n, "auto_pad", "NOTSET");
	if (strcmp(ap, "NOTSET") != 0 && strcmp(ap, "VALID") != 0 &&
	    strcmp(ap, "SAME_UPPER") != 0 && strcmp(ap, "SAME_LOWER") != 0)
		return aoe_err(AOE_EDATA, "%s '%s': auto_pad '%s' is invalid",
		    n->op_type, n->name, ap);
	osv = transpose ? aoe_attr_ints(n, "output_shape", &cnt) : NULL;
	os_given = osv != NULL;
	if (os_given) {
		if (cnt != nsp && cnt != nsp + 2)
			return aoe_err(AOE_EDATA, "%s '%s': output_shape has "
			    "%d values, %d expected", n->op_type, n->name,
			    cnt, nsp);
		for (i = 0; i < nsp; i++)
			os[i] = osv[cnt - nsp + i];
	}

	for (i = 0; i < 3; i++) {
		cg->in[i] = cg->out[i] = cg->k[i] = cg->s[i] = cg->d[i] = 1;
		cg->pb[i] = cg->pe[i] = 0;
	}
	for (i = 0; i < nsp; i++) {
		int64_t in = x->dims[2 + i], ext = (ks[i] - 1) * dl[i] + 1;
		int64_t o, tot, pb, pe;
		j = 3 - nsp + i;
		cg->in[j] = in;
		cg->k[j] = ks[i];
		cg->s[j] = st[i];
		cg->d[j] = dl[i];
		pb = pads[i];
		pe = pads[nsp + i];
		if (!transpose) {
			if (strcmp(ap, "VALID") == 0)
				pb = pe = 0;
			if (strncmp(ap, "SAME", 4) == 0) {
				o = ceildiv(in, st[i]);
				tot = max64(0, (o - 1) * st[i] + ext - in);
				if (ap[5] == 'U') {
					pb = tot / 2;
					pe = tot - pb;
				} else {
					pe = tot / 2;
					pb = tot - pe;
				}
			}
			o = floordiv(in + pb + pe - ext, st[i]) + 1;
			if (o < 1 && in > 0)
				return aoe_err(AOE_EDATA, "%s '%s': kernel is "
				    "larger than the padded input",
				    n->op_type, n->name);
			o = max64(o, 0);
		} else {
			int same = strncmp(ap, "SAME", 4) == 0;
			if (strcmp(ap, "VALID") == 0)
				pb = pe = 0;
			/*
			 * Explicit pads win over auto_pad and output_shape
			 * (as in ONNX's reference); else output_shape, or
			 * SAME's in*stride, sets the pads.
			 */
			if (os_given || (same && !pads_given)) {
				o = os_given ? os[i] : in * st[i];
				if (!pads_given) {
					tot = st[i] * (in - 1) + op[i] + ext -
					    o;
					if (strcmp(ap, "SAME_UPPER") == 0) {
						pb = floordiv(tot, 2);
						pe = tot - pb;
					} else {
						pe = floordiv(tot, 2);
						pb = tot - pe;
					}
				}
			} else
				o = st[i] * (in - 1) + op[i] + ext - pb - pe;
			if (o < 0)
				return aoe_err(AOE_EDATA, "%s '%s': negative "
				    "output size", n->op_type, n->name);
		}
		cg->out[j] = o;
		cg->pb[j] = pb;
		cg->pe[j] = pe;
	}
	cg->insz = cg->in[0] * cg->in[1] * cg->in[2];
	cg->outsz = cg->out[0] * cg->out[1] * cg->out[2];
	cg->ksz = cg->k[0] * cg->k[1] * cg->k[2];
	return 0;
}

static int
conv_set_output(aoe_graph *g, aoe_node *n, const conv_geom *cg)
{
	int64_t dims[5];
	int i;

	dims[0] = cg->n;
	dims[1] = cg->m;
	for (i = 0; i < cg->nsp; i++)
		dims[2 + i] = cg->out[3 - cg->nsp + i];
	return aoe_set_output(g, n, 0, AOE_F32, cg->nsp + 2, dims);
}

/*
 * im2col: one row of the column matrix, for input channel plane x
 * (already offset to the channel), kernel offset (kd, kh, kw) and output
 * positions [j0, j0+len), into row[0..len).
 */
static void
im2col_row(const conv_geom *g, const float *x, int64_t kd, int64_t kh,
    int64_t kw, int64_t j0, int64_t len, float *row)
{
	int64_t O1 = g->out[1], O2 = g->out[2], I1 = g->in[1], I2 = g->in[2];
	int64_t od = j0 / (O1 * O2), oh = j0 / O2 % O1, ow = j0 % O2;
	int64_t sw = g->s[2], offw = kw * g->d[2] - g->pb[2], t;

	while (len > 0) {
		int64_t seg = min64(len, O2 - ow);
		int64_t id = od * g->s[0] - g->pb[0] + kd * g->d[0];
		int64_t ih = oh * g->s[1] - g->pb[1] + kh * g->d[1];

		if (id < 0 || id >= g->in[0] || ih < 0 || ih >= I1) {
			memset(row, 0, sizeof(float) * seg);
		} else {
			const float *src = x + (id * I1 + ih) * I2;
			int64_t iw0 = ow * sw + offw;
			/* Columns lo..hi read inside the row. */
			int64_t lo = iw0 >= 0 ? 0 : ceildiv(-iw0, sw);
			int64_t hi = floordiv(I2 - 1 - iw0, sw) + 1;
			lo = min64(lo, seg);
			hi = max64(min64(hi, seg), lo);
			memset(row, 0, sizeof(float) * lo);
			if (sw == 1)
				memcpy(row + lo, src + iw0 + lo,
				    sizeof(float) * (hi - lo));
			else
				for (t = lo; t < hi; t++)
					row[t] = src[iw0 + t * sw];
			memset(row + hi, 0, sizeof(float) * (seg - hi));
		}
		row += seg;
		len -= seg;
		ow = 0;
		if (++oh == O1) {
			oh = 0;
			od++;
		}
	}
}

/* What the implicit-im2col packer needs. */
typedef struct conv_planes conv_planes;
typedef struct packb_ctx {
	const conv_geom *g;
	const float *x;		/* the group's first input channel */
	const conv_planes *pl;	/* its padded copy (conv_packb_planes) */
	int64_t j0;		/* output position of the GEMM's column 0 */
	int *fail;		/* set when a buffer cannot be had */
} packb_ctx;

/*
 * The implicit-im2col B packer, the slow general way: a row of the
 * column matrix at a time through a buffer.  For shapes whose indices do
 * not fit the gathers' 32 bits.
 */
static void
conv_packb_rows(const aoe_gemm_ex *xg, int64_t p0, int64_t kc, int64_t j0,
    int64_t nc, int nr, float *dst)
{
	const packb_ctx *ctx = xg->ctx;
	const conv_geom *g = ctx->g;
	int64_t p, j, c, r, full = nc / nr * nr;
	float *row = aoe_sgemm_tlbuf(2, (size_t)nc), *d;

	if (row == NULL) {
		/* Out of memory: the caller reports it. */
		*ctx->fail = 1;
		memset(dst, 0, sizeof(float) * kc * ((nc + nr - 1) / nr * nr));
		return;
	}
	for (p = p0; p < p0 + kc; p++) {
		c = p / g->ksz;
		r = p % g->ksz;
		im2col_row(g, ctx->x + c * g->insz, r / (g->k[1] * g->k[2]),
		    r / g->k[2] % g->k[1], r % g->k[2], j0, nc, row);
		d = dst + (p - p0) * nr;
		for (j = 0; j < full; j += nr, d += kc * nr)
			memcpy(d, row + j, sizeof(float) * nr);
		if (full < nc) {
			memcpy(d, row + full, sizeof(float) * (nc - full));
			memset(d + nc - full, 0, sizeof(float) *
			    (nr - (nc - full)));
		}
	}
}

/* Lanes of v in [0, lim): a mask. */
static inline __m256i
in_range(__m256i v, int32_t lim)
{
	return _mm256_andnot_si256(_mm256_cmpgt_epi32(_mm256_setzero_si256(),
	    v), _mm256_cmpgt_epi32(_mm256_set1_epi32(lim), v));
}

/*
 * One strip of the implicit-im2col packer, NV vectors wide: see
 * conv_packb.
 */
static inline __attribute__((always_inline)) void
packb_strip(const int NV, const conv_geom *g, const float *x,
    int64_t j, int64_t cols, int64_t kc, const int64_t *off,
    const int32_t *rp, const int32_t *rd, const int32_t *rh,
    const int32_t *rw, uint8_t *fast, float *d)
{
	const int nr = 8 * NV;
	const int32_t I0 = (int32_t)g->in[0], I1 = (int32_t)g->in[1];
	const int32_t I2 = (int32_t)g->in[2];
	const int64_t O1 = g->out[1], O2 = g->out[2];
	int32_t db[24], hb[24], wb[24], sb[24];
	__m256i vdb[3], vhb[3], vwb[3], vsb[3];
	int64_t od, oh, ow, p, r;
	int l, contig;

	od = j / (O1 * O2);
	oh = j / O2 % O1;
	ow = j % O2;
	contig = cols == nr && g->s[2] == 1 && ow + nr <= O2;
	for (l = 0; l < nr; l++) {
		if (l < cols) {
			db[l] = (int32_t)(od * g->s[0] - g->pb[0]);
			hb[l] = (int32_t)(oh * g->s[1] - g->pb[1]);
			wb[l] = (int32_t)(ow * g->s[2] - g->pb[2]);
			sb[l] = (db[l] * I1 + hb[l]) * I2 + wb[l];
			if (++ow == O2) {
				ow = 0;
				if (++oh == O1) {
					oh = 0;
					od++;
				}
			}
		} else {
			/* Past the last column: never valid. */
			db[l] = -INT32_MAX / 2;
			hb[l] = wb[l] = sb[l] = 0;
		}
	}
	for (l = 0; l < NV; l++) {
		vdb[l] = _mm256_loadu_si256((const __m256i *)(db + 8 * l));
		vhb[l] = _mm256_loadu_si256((const __m256i *)(hb + 8 * l));
		vwb[l] = _mm256_loadu_si256((const __m256i *)(wb + 8 * l));
		vsb[l] = _mm256_loadu_si256((const __m256i *)(sb + 8 * l));
	}
	/* Kernel offsets whose run is contiguous and wholly inside. */
	for (r = 0; r < g->ksz; r++) {
		int32_t id = db[0] + rd[r], ih = hb[0] + rh[r];
		int32_t iw = wb[0] + rw[r];
		fast[r] = contig && id >= 0 && id < I0 && ih >= 0 &&
		    ih < I1 && iw >= 0 && iw + nr <= I2;
	}
	x += sb[0];
	for (p = 0; p < kc; p++, d += nr) {
		r = rp[p];
		if (fast[r]) {
			const float *s = x + off[p];
			for (l = 0; l < NV; l++)
				_mm256_store_ps(d + 8 * l,
				    _mm256_loadu_ps(s + 8 * l));
			continue;
		}
		for (l = 0; l < NV; l++) {
			__m256i m = _mm256_and_si256(
			    in_range(_mm256_add_epi32(vdb[l],
			    _mm256_set1_epi32(rd[r])), I0),
			    _mm256_and_si256(in_range(
			    _mm256_add_epi32(vhb[l],
			    _mm256_set1_epi32(rh[r])), I1),
			    in_range(_mm256_add_epi32(vwb[l],
			    _mm256_set1_epi32(rw[r])), I2)));
			__m256 v;
			if (contig)
				v = _mm256_maskload_ps(x + off[p] + 8 * l, m);
			else
				v = _mm256_mask_i32gather_ps(
				    _mm256_setzero_ps(), x - sb[0] + off[p],
				    vsb[l], _mm256_castsi256_ps(m), 4);
			_mm256_store_ps(d + 8 * l, v);
		}
	}
}

/* Whether the packer's 32-bit lane arithmetic holds for g. */
static int
fits_int32(const conv_geom *g)
{
	int i;

	if (g->c * g->insz > INT32_MAX / 2)
		return 0;
	for (i = 0; i < 3; i++)
		if (g->in[i] + g->out[i] * g->s[i] + g->k[i] * g->d[i] +
		    g->pb[i] > INT32_MAX / 4)
			return 0;
	return 1;
}

/*
 * The implicit-im2col B packer: rows p0.. of the column matrix (input
 * channel, then kernel offsets), columns j0.. (output positions), into
 * nr-wide strips as the GEMM wants them.  A strip at a time: each lane
 * knows the input position its output column starts from; a kernel
 * offset then either copies a contiguous, fully inside run of the input
 * with plain loads, or loads lane by lane under a mask (the padding).
 */
static void
conv_packb(const aoe_gemm_ex *xg, int64_t p0, int64_t kc, int64_t j0,
    int64_t nc, int nr, float *dst)
{
	const packb_ctx *ctx = xg->ctx;
	const conv_geom *g = ctx->g;
	const int64_t K1 = g->k[1], K2 = g->k[2], ksz = g->ksz;
	int64_t js, p, r, *off;
	int32_t *rp, *rd, *rh, *rw;
	uint8_t *fast;
	char *mem;

	j0 += ctx->j0;
	mem = (char *)aoe_sgemm_tlbuf(2, (size_t)(kc * 3 + ksz * 4 + 16));
	if (nr % 8 || nr > 24 || mem == NULL || !fits_int32(g)) {
		conv_packb_rows(xg, p0, kc, j0, nc, nr, dst);
		return;
	}
	/* Per row: the input offset of its channel and kernel position. */
	off = (int64_t *)mem;
	rp = (int32_t *)(off + kc);
	rd = rp + kc;
	rh = rd + ksz;
	rw = rh + ksz;
	fast = (uint8_t *)(rw + ksz);
	for (r = 0; r < ksz; r++) {
		rd[r] = (int32_t)(r / (K1 * K2) * g->d[0]);
		rh[r] = (int32_t)(r / K2 % K1 * g->d[1]);
		rw[r] = (int32_t)(r % K2 * g->d[2]);
	}
	for (p = 0; p < kc; p++) {
		int64_t c = (p0 + p) / ksz;
		r = (p0 + p) % ksz;
		rp[p] = (int32_t)r;
		off[p] = c * g->insz + ((int64_t)rd[r] * g->in[1] + rh[r]) *
		    g->in[2] + rw[r];
	}
	for (js = 0; js < nc; js += nr, dst += kc * nr) {
		int64_t cols = nc - js < nr ? nc - js : nr;
		if (nr == 16)
			packb_strip(2, g, ctx->x, j0 + js, cols, kc, off, rp,
			    rd, rh, rw, fast, dst);
		else if (nr == 24)
			packb_strip(3, g, ctx->x, j0 + js, cols, kc, off, rp,
			    rd, rh, rw, fast, dst);
		else
			packb_strip(1, g, ctx->x, j0 + js, cols, kc, off, rp,
			    rd, rh, rw, fast, dst);
	}
}

/*
 * The padded, phase-split copy of a group's input that the planes packer
 * reads (knob "planes").  Channel c's copy holds, for every padded depth
 * and row (padding rows included, as zeros), the s2 stride phases of the
 * padded row one after the other: phase q at q*wq holds padded columns
 * q, q+s2, q+2*s2, ...  Every kernel tap of an output row then reads a
 * contiguous run of one phase, inside the copy: no bounds to check, and
 * no gathers.  8 floats of slack (zero) lie before and after the copy.
 */
struct conv_planes {
	float *p;		/* channel 0, padded element 0 */
	int64_t dp, hp;		/* padded depth and rows */
	int64_t wq, rs;		/* phase width; row stride s2*wq */
	int64_t cs;		/* channel stride */
};

#define PLANES_SLACK 8

static void
planes_geom(const conv_geom *g, conv_planes *pl)
{
	int64_t wpad = g->in[2] + g->pb[2] + g->pe[2];

	pl->p = NULL;
	pl->dp = g->in[0] + g->pb[0] + g->pe[0];
	pl->hp = g->in[1] + g->pb[1] + g->pe[1];
	pl->wq = ceildiv(wpad, g->s[2]);
	pl->rs = pl->wq * g->s[2];
	pl->cs = pl->dp * pl->hp * pl->rs;
}

/* Floats of a group's planes, slack included. */
static int64_t
planes_floats(const conv_geom *g)
{
	conv_planes pl;

	planes_geom(g, &pl);
	return g->cg * pl.cs + 2 * PLANES_SLACK;
}

/* One padded input row src (NULL: a padding row) into its phases. */
static void
planes_row(const conv_geom *g, const conv_planes *pl, const float *src,
    float *row)
{
	const int64_t s = g->s[2], I2 = g->in[2], pb = g->pb[2], wq = pl->wq;
	int64_t q, t, e;

	if (src == NULL) {
		memset(row, 0, sizeof(float) * pl->rs);
		return;
	}
	if (s == 1) {
		int64_t lo = min64(pb, wq), hi = min64(pb + I2, wq);
		memset(row, 0, sizeof(float) * lo);
		memcpy(row + lo, src + (lo - pb), sizeof(float) * (hi - lo));
		memset(row + hi, 0, sizeof(float) * (wq - hi));
		return;
	}
	if (s == 2) {
		/*
		 * Eight of each phase from 16 inputs at a time, loaded under
		 * a mask that zeroes the padding (masked lanes never fault).
		 */
		const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
		for (t = 0; t < wq; t += 8) {
			__m256i i0 = _mm256_add_epi32(lane,
			    _mm256_set1_epi32((int32_t)(2 * t - pb)));
			__m256i i1 = _mm256_add_epi32(i0, _mm256_set1_epi32(8));
			const float *sp = src + (2 * t - pb);
			__m256 a = _mm256_maskload_ps(sp, in_range(i0,
			    (int32_t)I2));
			__m256 b = _mm256_maskload_ps(sp + 8, in_range(i1,
			    (int32_t)I2));
			__m256d ev = _mm256_permute4x64_pd(_mm256_castps_pd(
			    _mm256_shuffle_ps(a, b, 0x88)), 0xd8);
			__m256d od = _mm256_permute4x64_pd(_mm256_castps_pd(
			    _mm256_shuffle_ps(a, b, 0xdd)), 0xd8);
			if (t + 8 <= wq) {
				_mm256_storeu_ps(row + t, _mm256_castpd_ps(ev));
				_mm256_storeu_ps(row + wq + t,
				    _mm256_castpd_ps(od));
			} else {
				__m256i m = _mm256_cmpgt_epi32(
				    _mm256_set1_epi32((int32_t)(wq - t)), lane);
				_mm256_maskstore_ps(row + t, m,
				    _mm256_castpd_ps(ev));
				_mm256_maskstore_ps(row + wq + t, m,
				    _mm256_castpd_ps(od));
			}
		}
		return;
	}
	for (q = 0; q < s; q++)
		for (t = 0; t < wq; t++) {
			e = q + s * t - pb;
			row[q * wq + t] = e >= 0 && e < I2 ? src[e] : 0;
		}
}

struct planes_ctx {
	const conv_geom *g;
	const conv_planes *pl;
	const float *x;
	int64_t nch;
	int64_t h0, h1;		/* the padded rows to copy */
};

/* Channels of a chunk into their planes. */
static void
planes_chunk(void *arg, int64_t ch, int tid)
{
	const struct planes_ctx *c = arg;
	const conv_geom *g = c->g;
	const conv_planes *pl = c->pl;
	int64_t lo = aoe_chunk_lo(g->cg, c->nch, ch);
	int64_t hi = aoe_chunk_lo(g->cg, c->nch, ch + 1), ci, z, h, id, ih;

	for (ci = lo; ci < hi; ci++)
		for (z = 0; z < pl->dp; z++)
			for (h = c->h0; h < c->h1; h++) {
				id = z - g->pb[0];
				ih = h - g->pb[1];
				planes_row(g, pl, id >= 0 && id < g->in[0] &&
				    ih >= 0 && ih < g->in[1] ? c->x + ci *
				    g->insz + (id * g->in[1] + ih) * g->in[2] :
				    NULL, pl->p + ci * pl->cs + (z * pl->hp +
				    h) * pl->rs);
			}
}

/*
 * Fill pl (geometry and copy) for the group at x, in buf (planes_floats
 * of it), on nth threads.
 */
static void
planes_fill(const conv_geom *g, const float *x, float *buf, int nth,
    conv_planes *pl)
{
	struct planes_ctx c;
	int64_t n;

	planes_geom(g, pl);
	pl->p = buf + PLANES_SLACK;
	n = g->cg * pl->cs;
	memset(buf, 0, sizeof(float) * PLANES_SLACK);
	memset(pl->p + n, 0, sizeof(float) * PLANES_SLACK);
	c.g = g;
	c.pl = pl;
	c.x = x;
	c.h0 = 0;
	c.h1 = pl->hp;
	if (nth > 1 && n < 65536)
		nth = 1;
	c.nch = aoe_nchunks(g->cg, nth);
	aoe_parallel(nth, c.nch, planes_chunk, &c);
}

/*
 * Fill pl in buf with the padded rows that the output positions [j0, j1)
 * of a 2-D Conv read, on the calling thread: the rest of buf is not
 * written (and not read by those positions' packer).
 */
static void
planes_fill_cols(const conv_geom *g, const float *x, float *buf, int64_t j0,
    int64_t j1, conv_planes *pl)
{
	struct planes_ctx c;
	int64_t oy0 = j0 / g->out[2], oy1 = (j1 - 1) / g->out[2];

	planes_geom(g, pl);
	pl->p = buf + PLANES_SLACK;
	memset(buf, 0, sizeof(float) * PLANES_SLACK);
	memset(pl->p + g->cg * pl->cs, 0, sizeof(float) * PLANES_SLACK);
	c.g = g;
	c.pl = pl;
	c.x = x;
	c.nch = 1;
	c.h0 = oy0 * g->s[1];
	c.h1 = min64(pl->hp, oy1 * g->s[1] + (g->k[1] - 1) * g->d[1] + 1);
	planes_chunk(&c, 0, 0);
}

/*
 * One strip of the planes packer, NV vectors wide.  Each vector's lanes
 * fall into runs of consecutive plane offsets (one output row each, or
 * several where rows happen to abut); a vector of up to three runs is
 * plain loads blended together, else (many short rows, or the last
 * strip's dead lanes) one gather.
 */
static inline __attribute__((always_inline)) void
packb_strip_planes(const int NV, const conv_geom *g, const conv_planes *pl,
    int64_t j, int64_t cols, int64_t kc, const int64_t *off, float *d)
{
	const int nr = 8 * NV;
	const int64_t O1 = g->out[1], O2 = g->out[2];
	int32_t base[24];
	int64_t od, oh, ow, p;
	int l, v;

	od = j / (O1 * O2);
	oh = j / O2 % O1;
	ow = j % O2;
	for (l = 0; l < cols; l++) {
		base[l] = (int32_t)((od * g->s[0] * pl->hp + oh * g->s[1]) *
		    pl->rs + ow);
		if (++ow == O2) {
			ow = 0;
			if (++oh == O1) {
				oh = 0;
				od++;
			}
		}
	}
	for (; l < nr; l++)
		base[l] = 0;
	for (v = 0; v < NV; v++) {
		const int32_t *bv = base + 8 * v;
		const float *x = pl->p;
		float *dv = d + 8 * v;
		int live = (int)min64(8, max64(0, cols - 8 * v));
		int nrun = 1, st[8];

		st[0] = 0;
		for (l = 1; l < live; l++)
			if (bv[l] != bv[l - 1] + 1)
				st[nrun++] = l;
		if (live == 0) {
			for (p = 0; p < kc; p++)
				_mm256_store_ps(dv + p * nr,
				    _mm256_setzero_ps());
		} else if (live == 8 && nrun == 1) {
			const float *s0 = x + bv[0];
			for (p = 0; p < kc; p++)
				_mm256_store_ps(dv + p * nr,
				    _mm256_loadu_ps(s0 + off[p]));
		} else if (live == 8 && nrun == 2) {
			const float *s0 = x + bv[0];
			const float *s1 = x + bv[st[1]] - st[1];
			__m256 m1 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
			    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7),
			    _mm256_set1_epi32(st[1] - 1)));
			for (p = 0; p < kc; p++)
				_mm256_store_ps(dv + p * nr, _mm256_blendv_ps(
				    _mm256_loadu_ps(s0 + off[p]),
				    _mm256_loadu_ps(s1 + off[p]), m1));
		} else if (live == 8 && nrun == 3) {
			const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4,
			    5, 6, 7);
			const float *s0 = x + bv[0];
			const float *s1 = x + bv[st[1]] - st[1];
			const float *s2 = x + bv[st[2]] - st[2];
			__m256 m1 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
			    lane, _mm256_set1_epi32(st[1] - 1)));
			__m256 m2 = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
			    lane, _mm256_set1_epi32(st[2] - 1)));
			for (p = 0; p < kc; p++)
				_mm256_store_ps(dv + p * nr, _mm256_blendv_ps(
				    _mm256_blendv_ps(
				    _mm256_loadu_ps(s0 + off[p]),
				    _mm256_loadu_ps(s1 + off[p]), m1),
				    _mm256_loadu_ps(s2 + off[p]), m2));
		} else {
			__m256i idx = _mm256_loadu_si256((const __m256i *)bv);
			__m256 m = _mm256_castsi256_ps(_mm256_cmpgt_epi32(
			    _mm256_set1_epi32(live),
			    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7)));
			for (p = 0; p < kc; p++)
				_mm256_store_ps(dv + p * nr,
				    _mm256_mask_i32gather_ps(
				    _mm256_setzero_ps(), x + off[p], idx, m, 4));
		}
	}
}

/* The planes packer: as conv_packb, from the copy in ctx->pl. */
static void
conv_packb_planes(const aoe_gemm_ex *xg, int64_t p0, int64_t kc,
    int64_t j0, int64_t nc, int nr, float *dst)
{
	const packb_ctx *ctx = xg->ctx;
	const conv_geom *g = ctx->g;
	const conv_planes *pl = ctx->pl;
	const int64_t K1 = g->k[1], K2 = g->k[2], ksz = g->ksz;
	int64_t js, p, r, c, *off;

	j0 += ctx->j0;
	off = (int64_t *)aoe_sgemm_tlbuf(2, (size_t)(kc * 2));
	if (nr % 8 || nr > 24 || off == NULL) {
		conv_packb_rows(xg, p0, kc, j0, nc, nr, dst);
		return;
	}
	/* Per row: the plane offset of its channel and kernel tap. */
	for (p = 0; p < kc; p++) {
		int64_t rz, rh, rw;
		c = (p0 + p) / ksz;
		r = (p0 + p) % ksz;
		rz = r / (K1 * K2) * g->d[0];
		rh = r / K2 % K1 * g->d[1];
		rw = r % K2 * g->d[2];
		off[p] = c * pl->cs + (rz * pl->hp + rh) * pl->rs +
		    rw % g->s[2] * pl->wq + rw / g->s[2];
	}
	for (js = 0; js < nc; js += nr, dst += kc * nr) {
		int64_t cols = nc - js < nr ? nc - js : nr;
		if (nr == 16)
			packb_strip_planes(2, g, pl, j0 + js, cols, kc, off,
			    dst);
		else if (nr == 24)
			packb_strip_planes(3, g, pl, j0 + js, cols, kc, off,
			    dst);
		else
			packb_strip_planes(1, g, pl, j0 + js, cols, kc, off,
			    dst);
	}
}

/*
 * Prepared state: the weights packed per group for the GEMM (the
 * algorithm itself is read from the schedule at each run).
 */
typedef struct conv_priv {
	float *wpack;		/* group g at wpack + g*wstride, or NULL */
	size_t wstride;
	int64_t id;		/* its aoe_sgemm_pack_id() */
	int trans;		/* packed as the GEMM's B (W^T), conv_trans */
	float *wino;		/* Winograd-transformed weights, or NULL */
	int wino_m;		/* their F(m,3) */
	float *w8;		/* weights packed for algo 7, or NULL */
	int w8_ocb;		/* their oc_blk */
	float *wg;		/* weights packed for algo 8, or NULL */
	int wg_vw, wg_nv;	/* their grp_vec and grp_nv */
	int dw_gemm;		/* algo 4: a dense Conv reads the output */
} conv_priv;

static void
conv_priv_free(void *p)
{
	conv_priv *q = p;

	if (q != NULL) {
		free(q->wpack);
		free(q->wino);
		free(q->w8);
		free(q->wg);
	}
	free(q);
}

/* Whether the Conv is pointwise: 1x1 kernel, unit strides, no padding. */
static int
is_pointwise(const conv_geom *g)
{
	int i;

	if (g->ksz != 1)
		return 0;
	for (i = 0; i < 3; i++)
		if (g->s[i] != 1 || g->pb[i] != 0 || g->pe[i] != 0)
			return 0;
	return 1;
}

/*
 * A 1x1 Conv with strides and no padding (resnets' downsampling): its
 * column matrix is its input subsampled, and no padded copy is needed.
 */
static int
is_pointwise_strided(const conv_geom *g)
{
	int i;

	if (g->ksz != 1 || is_pointwise(g))
		return 0;
	for (i = 0; i < 3; i++)
		if (g->pb[i] != 0 || g->pe[i] != 0)
			return 0;
	return 1;
}

/*
 * dst[x] = src[2x] for x < n: eight outputs from two vectors, a shuffle
 * keeping the even lanes of each half and a permute putting the halves
 * in order, against one scalar load and store an output.  A vector
 * reads one value past the last it keeps, so the vectors stop within the
 * row's w values and the scalar loop does the rest.
 */
static void
sub_row2(const float *src, float *dst, int64_t n, int64_t w)
{
	int64_t x = 0;

	for (; x + 8 <= n && 2 * x + 16 <= w; x += 8) {
		__m256 a = _mm256_loadu_ps(src + 2 * x);
		__m256 b = _mm256_loadu_ps(src + 2 * x + 8);
		__m256 t = _mm256_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0));

		_mm256_storeu_ps(dst + x, _mm256_castpd_ps(
		    _mm256_permute4x64_pd(_mm256_castps_pd(t),
		    _MM_SHUFFLE(3, 1, 2, 0))));
	}
	for (; x < n; x++)
		dst[x] = src[2 * x];
}

/* Channels [lo, hi) of the subsampled input of such a Conv. */
struct sub_ctx {
	const conv_geom *g;
	const float *x;
	float *buf;
	int64_t nch;
};

static void
sub_chunk(void *arg, int64_t ch, int tid)
{
	const struct sub_ctx *c = arg;
	const conv_geom *g = c->g;
	int64_t lo = aoe_chunk_lo(g->cg, c->nch, ch);
	int64_t hi = aoe_chunk_lo(g->cg, c->nch, ch + 1), ci, z, y, x;

	for (ci = lo; ci < hi; ci++)
		for (z = 0; z < g->out[0]; z++)
			for (y = 0; y < g->out[1]; y++) {
				const float *src = c->x + ci * g->insz +
				    (z * g->s[0] * g->in[1] + y * g->s[1]) *
				    g->in[2];
				float *dst = c->buf + ci * g->outsz +
				    (z * g->out[1] + y) * g->out[2];
				if (g->s[2] == 2)
					sub_row2(src, dst, g->out[2],
					    g->in[2]);
				else
					for (x = 0; x < g->out[2]; x++)
						dst[x] = src[x * g->s[2]];
			}
}

/*
 * Output positions [lo, hi) of every input channel of such a Conv,
 * subsampled into buf (cg rows of hi - lo).
 */
static void
sub_cols(const conv_geom *g, const float *x, float *buf, int64_t lo,
    int64_t hi)
{
	int64_t plane = g->out[1] * g->out[2], ci;

	for (ci = 0; ci < g->cg; ci++) {
		float *dst = buf + ci * (hi - lo);
		int64_t p = lo;

		while (p < hi) {
			int64_t z = p / plane, y = p % plane / g->out[2];
			int64_t x0 = p % g->out[2];
			int64_t n = min64(g->out[2] - x0, hi - p);
			const float *src = x + ci * g->insz +
			    (z * g->s[0] * g->in[1] + y * g->s[1]) *
			    g->in[2] + x0 * g->s[2];

			if (g->s[2] == 2)
				sub_row2(src, dst, n, g->in[2] - x0 * 2);
			else {
				int64_t i;
				for (i = 0; i < n; i++)
					dst[i] = src[i * g->s[2]];
			}
			dst += n;
			p += n;
		}
	}
}

/*
 * Part c of a GEMM cut by columns in 8-column units (cut, from
 * aoe_pool_cut): its columns [*lo, *hi) of xe's, and x the GEMM of them
 * alone (B's columns are the caller's to set).
 */
static void
gemm_part(const aoe_gemm_ex *xe, const int64_t *cut, int64_t c,
    aoe_gemm_ex *x, int64_t *lo, int64_t *hi)
{
	*lo = min64(xe->n, cut[c] * 8);
	*hi = min64(xe->n, cut[c + 1] * 8);
	*x = *xe;
	x->n = *hi - *lo;
	x->c = xe->c + *lo;
	x->add = xe->add ? xe->add + *lo : NULL;
}

/*
 * A GEMM's n columns cut into one part a thread (aoe_pool_cut, in
 * 8-column units, into cut), then fn run on them with ctx (whose cut is
 * cut): at most AOE_CUT_MAX parts.
 */
static void
run_parts(aoe_chunk_fn fn, void *ctx, int nth, int64_t n, int64_t *cut)
{
	int np = nth < AOE_CUT_MAX ? nth : AOE_CUT_MAX;

	aoe_pool_cut(fn, np, (n + 7) / 8, cut);
	aoe_parallel(np, np, fn, ctx);
}

static int conv_split_cols(const conv_geom *, const aoe_sched *, int);

/*
 * One thread's output positions of a strided 1x1 Conv at more than one
 * thread: it subsamples the input at those positions alone, into a
 * buffer of its own, and runs the GEMM on them, in one job: where the
 * channels were subsampled by both threads and the GEMM split after, a
 * barrier apart, each thread read half of its columns from the other's
 * cache, on another CCD of a Zen 5 (32>64 @56 /2 ran slower at 2 threads
 * than at 1).
 */
struct subsplit_ctx {
	const aoe_gemm_ex *xe;
	const conv_geom *g;
	const float *x;
	const aoe_sched *s;
	const int64_t *cut;	/* the parts, in 8-column units */
	int fail;
};

static void
subsplit_chunk(void *arg, int64_t c, int tid)
{
	struct subsplit_ctx *cs = arg;
	int64_t lo, hi;
	aoe_gemm_ex x;
	float *buf;

	(void)tid;
	gemm_part(cs->xe, cs->cut, c, &x, &lo, &hi);
	if (lo >= hi)
		return;
	buf = aoe_sgemm_tlbuf(3, (size_t)(cs->g->cg * (hi - lo)));
	if (buf == NULL) {
		__atomic_store_n(&cs->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	sub_cols(cs->g, cs->x, buf, lo, hi);
	x.b = buf;
	x.ldb = hi - lo;
	if (aoe_sgemm_ex(&x, 1, cs->s) < 0)
		__atomic_store_n(&cs->fail, 1, __ATOMIC_RELAXED);
}

/* Whether Winograd applies: 2-D, 3x3, unit strides and dilations. */
static int
is_wino(const conv_geom *g)
{
	return g->nsp == 2 && g->k[1] == 3 && g->k[2] == 3 &&
	    g->s[1] == 1 && g->s[2] == 1 && g->d[1] == 1 && g->d[2] == 1;
}

/*
 * The default F(m,3) of Winograd: 4 where its 4x4 tiles cover the output
 * with little waste and the GEMMs are not too thin, else 2 (measured on
 * a Zen 5 at 1 thread: F(4,3) is up to 1.4x faster from 14x14 up, F(2,3)
 * up to 2x faster on 10x10 and 7x7 planes).  Waste: the 4x4 tiles must
 * cover at most 1.4 times the output positions.  A 13x13 plane takes 16
 * tiles covering 16x16 (1.51 times), and the weights, 36/16 of F(2,3)'s,
 * are used by 16 tiles only: squeezenet1_1's 3x3 64>256 @13 ran in 505
 * us at F(4,3) and 285 at F(2,3) with its weights out of cache as in the
 * model (230 and 243 with them in cache); 48>192 @13 246 and 188.  At
 * 14x14 (1.31 times) the two tie alone, at 27x27 F(4,3) stays 8% ahead
 * (AMD EPYC Zen 5, 1 thread, median of 11 minima).
 */
static int
wino_default_m(const conv_geom *g)
{
	int64_t tiles = ceildiv(g->out[1], 4) * ceildiv(g->out[2], 4);
	int64_t cover = tiles * 16;	/* output positions the tiles cover */

	/*
	 * Under AVX-512 the GEMMs are fast enough that in a model, where U
	 * comes from memory, U's size rules on planes of 16 F(4,3) tiles or
	 * fewer (up to 16x16): F(2,3)'s is 16/36 of F(4,3)'s and each of
	 * its values serves 49 tiles, not 16.  resnet50's five 256>256 @14
	 * (per-node minima, alternated, Zen 5) took 0.87-0.92x the time at
	 * 2 threads and 0.89-1.01x at 1; resnet18 whole 0.92-0.99x at 2.
	 * Under AOE_MAX_ISA=avx2 the same nodes took 1.13-1.36x: there F(4,3)
	 * stays.  At 28x28 (49 tiles) F(2,3) lost in both models (1.01-1.06x).
	 */
	if (aoe_cpu_avx512() && tiles <= 16)
		return 2;
	return g->out[1] >= 12 && g->out[2] >= 12 && (g->mg >= 32 ||
	    g->mg >= g->cg) && 10 * cover <= 14 * g->out[1] * g->out[2] ?
	    4 : 2;
}

/*
 * Whether Y^T = col^T W^T beats Y = W col (conv_job_trans): when the
 * output positions are few (under 128) and 8-wide vectors of them waste
 * more lanes than vectors of output channels, with 32 channels or more.
 */
static int
conv_trans_wins(const conv_geom *g)
{
	int64_t wn = (g->outsz + 7) / 8 * 8 * g->mg;
	int64_t wm = (g->mg + 7) / 8 * 8 * g->outsz;

	return g->outsz < 128 && g->mg >= 32 && wm < wn;
}

/* Whether algo 7 (k_conv8c.c) runs this Conv: 2-D, a group structure it has. */
static int
blocked_ok(const conv_geom *g)
{
	return g->nsp == 2 && aoe_c8_kind(g->c, g->m, g->group) != 0;
}

/* The default algorithm for a Conv. */
static int
conv_default_algo(const conv_geom *g)
{
	if (g->cg == 1 && g->mg <= 4)
		return ALGO_DEPTHWISE;
	/*
	 * A pointwise Conv with many weights and few output positions runs
	 * faster turned round (algo 6 reads its input in place), its
	 * weights streamed once as the GEMM's B: with cold weights, 1
	 * thread, Zen 5 (bench/convb), 512>2048 @7 1.36x, 2048>512 @7
	 * 1.5x, 960>160 @7 1.17x, 160>960 @7 1.05x, 256>512 @9 1.17x,
	 * 512>2048 @5 1.4x; under AOE_MAX_ISA=avx2 512>2048 @7 1.07x,
	 * 2048>512 1.18x, 960>160 1.16x, 160>960 1.02x.  With fewer weights
	 * it loses (128>512 @11 0.9x, 64>96 @7 0.9x), and at 14x14 it ties
	 * or loses (bench/results/r50-20261204.txt).
	 */
	if (is_pointwise(g) && g->cg * g->mg >= 131072 && g->outsz >= 16 &&
	    conv_trans_wins(g))
		return ALGO_IM2COL_T;
	if (is_pointwise(g))
		return ALGO_1X1;
	/*
	 * Grouped 3x3 layers of 16 channels a group (regnet_x_400mf's, alone,
	 * Relu fused; tests/unit-grpconv with GRPCONV_BENCH) ran 1.3x to 2.6x
	 * faster by the direct grouped kernel than by the implicit GEMM, a
	 * 16 x 144 product a group (AVX-512, Zen 5, 1 thread), and 1.3x to
	 * 1.8x under AVX2 on the same host.  Wide groups (past 64 channels)
	 * make GEMMs big enough for the GEMM's own blocking.
	 */
	if (g->group >= 2 && aoe_grp_ok(g) && g->cg >= 2 && g->cg <= 64 &&
	    g->mg <= 64) {
		/*
		 * Except, under AVX2, 3x3 at unit strides on planes from
		 * 28x28: there Winograd F(4,3), a quarter of the products,
		 * beats the tap form (bench/convb -p, Zen 5 held to AVX2, 1
		 * and 2 threads, 16 channels a group): 32>32 @56 g2 0.70x and
		 * 0.79x, 64>64 @56 g4 0.68x and 0.81x, 32>32 @112 g2 0.62x
		 * and 0.69x, 64>64 @28 g4 0.80x and 0.91x, 160>160 @28 g10
		 * 0.77x and 0.87x.  At 14x14 (160>160 g10) it won at 1 thread,
		 * 0.96x, and lost at 2, 1.07x; with AVX-512 the row form beats
		 * it everywhere (1.05x to 1.50x its time).
		 */
		if (!aoe_cpu_avx512() && is_wino(g) && g->out[1] >= 28 &&
		    g->out[2] >= 28)
			return ALGO_WINOGRAD;
		return ALGO_GROUPED;
	}
	/*
	 * Stems (one group, at most 4 input channels, kernels from 2x2) by
	 * the same kernel, all output channels along the lanes, against the
	 * implicit GEMM's K = 27 or 147 (bench/convb -c, 1 thread, Zen 5;
	 * bench/results/sq-20261205.txt): 3>64 3x3/2 @224 0.97x the time,
	 * 3>64 7x7/2 0.86x, 3>32 3x3/2 0.79x, 3>16 3x3/2 0.74x; under
	 * AOE_MAX_ISA=avx2 0.87x, 0.90x (0.93x against algo 7, the 7x7's
	 * AVX2 default before), 0.77x, 0.68x.
	 */
	if (aoe_grp_stem(g) && aoe_grp_ok(g) && g->ksz >= 4)
		return ALGO_GROUPED;
	/*
	 * Winograd beats the implicit GEMM 1.3x to 2x from 4 channels and
	 * 6x6 planes up (3x3, unit strides), timed alone.  In a model its
	 * weights, four times the direct ones (F(2,3): 16/9), come from
	 * memory.  Until U was prefetched (wino_pf) the implicit GEMM won
	 * on planes of fewer than 8 F(4,3) tiles (7x7); since, F(2,3) on
	 * resnet18's 512>512 @7 takes 0.82x the time at 1 and 2 threads in
	 * the model (per-node minima, Zen 5), resnet50's 0.80x
	 * (bench/results/wino-pf-20261205.txt).
	 */
	if (is_wino(g) && g->cg >= 4 && g->mg >= 8 && g->out[1] >= 6 &&
	    g->out[2] >= 6)
		return ALGO_WINOGRAD;
	/*
	 * The direct blocked convolution, its reorders included, on
	 * stride-2 layers (Zen 3, AVX2, against the previous default):
	 * resnet18's 3x3/2 64>128 @56 1.05x at 1 thread, 1.12x at 2;
	 * 256>512 @14 1.05-1.10x and 1.12x; 128>256 @28 even; the 7x7/2
	 * stem 1.06x and 1.05x.  With few channels (3x3/2 3>32 @640) it
	 * only ties, and 1x1/1 and depthwise layers run faster in NCHW than
	 * with the reorders.  The kernel is AVX2: where the GEMM runs
	 * AVX-512 micro-kernels, algo 2 is 1.5x to 1.9x faster on those
	 * layers (Zen 5).  Strided 1x1 layers were here too (1.06x and 1.02x
	 * on the Zen 3, against an older algo 2) until a Zen 5 held to AVX2
	 * timed algo 2, which reads the subsampled input in place, at
	 * 0.60-0.86x algo 7's time at 1 thread and 0.48-0.72x at 2 on all
	 * eight of resnet18's, resnet50's and regnet_x_400mf's (bench/convb,
	 * cold weights, medians): 64>128 @56/2 0.70x and 0.48x, 160>400
	 * @14/2 0.60x and 0.62x, 1024>2048 @14/2 0.73x and 0.72x (algo 6,
	 * which the rule below gives it, 0.77x); they take the rules below.
	 */
	if (!aoe_cpu_avx512() && blocked_ok(g) && g->group == 1 && g->nsp == 2 &&
	    g->k[1] == g->k[2] && g->s[1] == 2 && g->s[2] == 2 &&
	    g->d[1] == 1 && g->d[2] == 1 && (g->k[1] == 7 ||
	    (g->k[1] == 3 && g->c >= 64 && g->m >= 64)))
		return ALGO_BLOCKED;
	/*
	 * 1.13x on 3x3/2 256>512 @14 (7x7 out), 1 thread, AVX2.  Not a
	 * strided 1x1 with fewer than 256K weights: at 2 threads both
	 * threads pack all of Y^T's A (the subsampled input, the same for
	 * both), where algo 2 reads it in place (bench/convb, Zen 5,
	 * 160>400 @14/2 and 256>512 @14/2: 0.60-0.64x and 0.72x the time
	 * at 2 threads, 0.86x and 1.01x at 1; 1024>2048 @14/2 stays: 1.2x
	 * slower by algo 2 at 1 thread, a tie at 2).
	 */
	if (conv_trans_wins(g) && !(is_pointwise_strided(g) &&
	    g->cg * g->mg < 262144))
		return ALGO_IM2COL_T;
	/*
	 * Dense 3x3 Convs at stride 2 by the same kernel, the output
	 * channels along the lanes, against the implicit GEMM (bench/convb,
	 * cold, Zen 5, AVX-512): resnet50's 128>128 @56 0.80x the time at 1
	 * and 2 threads, 256>256 @28 0.79x and 0.83x, resnet18's 64>128 @56
	 * 0.85x; in resnet50 at 2 threads 0.72x and 0.60x (per-node
	 * medians).  Its 512>512 @14 (7x7 out) stays algo 6 (above): alone
	 * they tie, in the model algo 8 took 1.13x the time.
	 * Under AOE_MAX_ISA=avx2, against the previous defaults: 32>64 @112
	 * 0.79x and 0.83x, 24>48 @64 0.87x; from 64 channels in and out
	 * algo 7 (above) ties or wins.
	 */
	if (g->group == 1 && aoe_grp_ok(g) && g->k[1] == 3 && g->k[2] == 3 &&
	    g->s[1] == 2 && g->s[2] == 2 && g->d[1] == 1 && g->d[2] == 1)
		return ALGO_GROUPED;
	return ALGO_IMPLICIT;
}

/*
 * The default micro-kernel shape (the GEMM's mr x nr) of a pointwise
 * Conv, Y = W X with Cout rows and H*W columns: the shape of this ISA
 * whose tiles waste the fewest lanes on the rows (Cout rounded up to
 * mr) and the columns (each nr-wide strip, the last one rounded up to
 * whole vectors), kept at the preferred shape (the ISA's default, 14x32
 * or 6x16, but see pref below) unless another wastes at least 1.5 %
 * less.  Measured on a Zen 5 (AVX-512) at 1 thread,
 * bench/pw -c: mobilenet_v2's 16>96 @112 runs 1.15x faster at 12x32 than
 * at 14x32 (96 rows are 7 tiles of 14 with 2 rows idle in the last), 32>16
 * @112 1.13x at 8x48 (16 rows: 14 + 2), 24>144 @56 1.1x at 12x32; the
 * other shapes tie within 3 %.  On AVX2 (6x16, 4x24: Zen 2) the same
 * count picks 4x24 for 16 and 32 rows (6x16 leaves 2 of 18 and 4 of 36
 * idle), about 1.1x faster there under AOE_MAX_ISA=avx2.
 */
static void
pw_shape(const conv_geom *g, int64_t *mr, int64_t *nr)
{
	static const int sh512[][2] = { { 14, 32 }, { 12, 32 }, { 8, 48 },
	    { 6, 64 } };
	static const int sh2[][2] = { { 6, 16 }, { 4, 24 } };
	int w = aoe_cpu_avx512(), n = w ? 4 : 2, vl = w ? 16 : 8, i, best = 0;
	int pref;
	double sc[4];

	/* A matrix-vector product has one point: the ISA's default. */
	if (g->mg > 1 && g->outsz > 1) {
		for (i = 0; i < n; i++) {
			int64_t r = w ? sh512[i][0] : sh2[i][0];
			int64_t c = w ? sh512[i][1] : sh2[i][1];
			int64_t m = g->mg, cols = g->outsz;
			int64_t rows = ceildiv(m, r) * r;
			int64_t lanes = cols / c * c + ceildiv(cols % c, vl) *
			    vl;

			sc[i] = (double)m / rows * ((double)cols / lanes);
		}
		/*
		 * The preferred shape, which another must beat by 1.5 %:
		 * the ISA's default, but under AVX2 4x24 for a shallow
		 * product (32 input channels or fewer), as measured
		 * (AOE_MAX_ISA=avx2, Zen 5, bench/convb cold, 4x24 against
		 * 6x16 at 1 and 2 threads: 16>96 @112 0.89x and 0.88x the
		 * time, 16>96 @56 0.93x and 0.91x, 24>144 @56 0.96x and
		 * 0.94x, 32>192 @28 0.98x both; from 64 channels they tie).
		 */
		best = pref = !w && g->cg <= 32;
		for (i = 0; i < n; i++)
			if (sc[i] > sc[best] * (best == pref ? 1.015 : 1))
				best = i;
	}
	*mr = w ? sh512[best][0] : sh2[best][0];
	*nr = w ? sh512[best][1] : sh2[best][1];
}

/* The algorithm the schedule asks for, or the default if it cannot. */
static int
conv_algo(const conv_geom *g, const aoe_sched *s)
{
	int algo = (int)aoe_sched_get(s, "algo", ALGO_AUTO);

	if ((algo == ALGO_1X1 && !is_pointwise(g)) ||
	    (algo == ALGO_DEPTHWISE && g->cg != 1) ||
	    (algo == ALGO_WINOGRAD && !is_wino(g)) ||
	    (algo == ALGO_BLOCKED && !blocked_ok(g)) ||
	    (algo == ALGO_GROUPED && !aoe_grp_ok(g)) ||
	    algo < ALGO_1X1 || algo > ALGO_GROUPED)
		algo = conv_default_algo(g);
	return algo;
}

/*
 * The algorithm for node n: 7 whenever its input or output is NCHW8c
 * (which only algo 7 reads and writes), else the schedule's.
 */
static int
conv_algo_of(const aoe_graph *g, const aoe_node *n, const conv_geom *cg,
    const aoe_sched *s)
{
	const aoe_tensor *x = aoe_in(g, n, 0), *y = aoe_out(g, n, 0);

	if ((x && x->layout == AOE_LAYOUT_8C) ||
	    (y && y->layout == AOE_LAYOUT_8C))
		return ALGO_BLOCKED;
	/* With a depthwise Conv fused before it: its GEMM, in bands. */
	if (aoe_attr_find(n, "_aoe_dw") != NULL)
		return ALGO_1X1;
	return conv_algo(cg, s);
}

/* The blocked kernel's view of a Conv (data pointers left NULL). */
static void
c8_of(const aoe_graph *g, const aoe_node *n, const conv_geom *cg,
    aoe_c8 *p)
{
	const aoe_tensor *x = aoe_in(g, n, 0), *y = aoe_out(g, n, 0);

	memset(p, 0, sizeof(*p));
	p->n = cg->n;
	p->c = cg->c;
	p->m = cg->m;
	p->group = cg->group;
	p->h = cg->in[1];
	p->w = cg->in[2];
	p->oh = cg->out[1];
	p->ow = cg->out[2];
	p->kh = cg->k[1];
	p->kw = cg->k[2];
	p->sh = cg->s[1];
	p->sw = cg->s[2];
	p->dh = cg->d[1];
	p->dw = cg->d[2];
	p->pt = cg->pb[1];
	p->pl = cg->pb[2];
	p->xblk = x && x->layout == AOE_LAYOUT_8C;
	p->yblk = y && y->layout == AOE_LAYOUT_8C;
	p->node = n;
}

int
aoe_conv_8c_ok(const aoe_graph *g, const aoe_node *n)
{
	conv_geom cg;

	return strcmp(n->op_type, "Conv") == 0 &&
	    aoe_attr_find(n, "_aoe_pool") == NULL &&
	    aoe_attr_find(n, "_aoe_dw") == NULL &&
	    conv_geom_of(g, n, 0, &cg) == 0 && blocked_ok(&cg);
}

/* The schedule's F(m,3), or the default. */
static int
wino_m(const conv_geom *g, const aoe_sched *s)
{
	int m = (int)aoe_sched_get(s, "wino_m", 0);

	return m == 2 || m == 4 ? m : wino_default_m(g);
}

/*
 * Whether implicit im2col packs from the padded, phase-split copy of the
 * input (knob "planes": -1 auto, 0 no, 1 yes).  Auto copies when the copy
 * is no larger than the column matrix the packer makes of it, i.e. when
 * the kernel taps overlap: 3x3 stride 2 reads each input about 2.25
 * times, a 1x1 stride 2 a quarter of the input once.
 */
static int
conv_planes_on(const conv_geom *g, const aoe_sched *s)
{
	int64_t v = aoe_sched_get(s, "planes", -1);
	conv_planes pl;

	planes_geom(g, &pl);
	if (v == 0 || pl.cs < 1 || pl.cs > INT32_MAX / 4 ||
	    g->cg > (INT64_MAX / 8 - 64) / pl.cs)
		return 0;
	return v == 1 || g->cg * pl.cs <= g->cg * g->ksz * g->outsz;
}

/* Columns of an im2col tile. */
static int64_t
im2col_tile(const conv_geom *g, int64_t krows, const aoe_sched *s)
{
	int64_t t = aoe_sched_get(s, "tile", 0);
	int64_t cap = max64(16, TILE_FLOATS / max64(krows, 1));

	if (t <= 0)
		t = cap;
	return max64(1, min64(min64(t, cap), g->outsz));
}

/*
 * The max pool fused into n (its attribute _aoe_pool) for the Conv
 * geometry cg: 1 with p filled, 0 for none, -1 with an error set.
 */
static int
conv_pool_of(const aoe_node *n, const conv_geom *cg, aoe_pool2 *p)
{
	if (aoe_attr_find(n, "_aoe_pool") == NULL)
		return 0;
	if (cg->nsp != 2)
		return aoe_err(AOE_EDATA, "%s '%s': a fused pool needs a 2-D "
		    "Conv", n->op_type, n->name);
	return aoe_pool2_of(n, cg->out + 1, p);
}

/*
 * Bytes of the workspace that n's algorithms may use: the largest
 * im2col tile, algo 7's weights, reordered input and output, or algo
 * 8's weights packed at run time; a multiple of 64.
 */
static size_t
conv_algo_scratch(const aoe_graph *g, const aoe_node *n, const conv_geom *cg)
{
	int64_t K = cg->cg * cg->ksz;
	size_t sz;

	sz = (size_t)(K * max64(1, min64(cg->outsz, max64(16, TILE_FLOATS /
	    max64(K, 1))))) * sizeof(float);
	if (blocked_ok(cg)) {
		aoe_c8 p;

		c8_of(g, n, cg, &p);
		sz = max64(sz, aoe_c8_scratch(&p));
	}
	if (aoe_grp_ok(cg))
		sz = max64(sz, aoe_grp_wsize(cg, 16, 2) * sizeof(float));
	return (sz + 63) & ~(size_t)63;
}

static int
conv_infer(aoe_graph *g, aoe_node *n)
{
	conv_geom cg;
	aoe_pool2 pl;
	int rc, pooled, fdw;

	const aoe_tensor *r, *y;
	int i;

	/*
	 * A fourth input is a residual that lib/passes/fuse.c folded in,
	 * a fifth and sixth a fused depthwise Conv's weights and bias.
	 */
	fdw = aoe_attr_find(n, "_aoe_dw") != NULL;
	if (n->nin < 2 || n->nin > (fdw ? 6 : aoe_attr_find(n, "_aoe_add") ?
	    4 : 3) || (fdw && n->nin != 6) || n->nout != 1)
		return aoe_err(AOE_EDATA, "%s '%s': expects 2 or 3 inputs and "
		    "1 output", n->op_type, n->name);
	if ((rc = conv_geom_of(g, n, 0, &cg)) < 0)
		return rc;
	n->scratch = conv_algo_scratch(g, n, &cg);
	if (fdw) {
		conv_geom dg;
		if ((rc = dw_geom_of(g, n, &dg)) < 0)
			return rc;
		if (!is_pointwise(&cg) || cg.group != 1 || cg.nsp != 2 ||
		    aoe_attr_find(n, "_aoe_pool") != NULL)
			return aoe_err(AOE_EDATA, "%s '%s': a depthwise Conv "
			    "fused into one that is not pointwise", n->op_type,
			    n->name);
		/* The depthwise output, where it runs apart (k_dwpw.c). */
		n->scratch += (size_t)(dg.n * dg.c * dg.outsz) * sizeof(float);
	}
	if ((pooled = conv_pool_of(n, &cg, &pl)) < 0)
		return pooled;
	if (pooled) {
		/* The Conv's own output, for the pool apart, after that. */
		n->scratch += (size_t)(cg.n * cg.m * cg.outsz) * sizeof(float);
		if (n->nin > 3)
			return aoe_err(AOE_EDATA, "%s '%s': a fused pool after "
			    "a fused residual", n->op_type, n->name);
		return aoe_set_output(g, n, 0, AOE_F32, 4, (int64_t[]){ cg.n,
		    cg.m, pl.out[0], pl.out[1] });
	}
	/* (A fused depthwise Conv leaves input 3 empty without one.) */
	if ((rc = conv_set_output(g, n, &cg)) < 0 || n->nin < 4 ||
	    (fdw && n->in[3] < 0))
		return rc;
	r = aoe_in(g, n, 3);
	y = aoe_out(g, n, 0);
	if (r == NULL || r->dtype != AOE_F32 || r->ndim != y->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': the fused residual is not "
		    "the output's shape", n->op_type, n->name);
	for (i = 0; i < y->ndim; i++)
		if (r->dims[i] != y->dims[i])
			return aoe_err(AOE_EDATA, "%s '%s': the fused residual "
			    "is not the output's shape", n->op_type, n->name);
	return 0;
}

/*
 * Whether a live Conv of one group reads n's output: with its rows split
 * between the threads, each thread's GEMM packs all of it.
 */
static int
read_by_dense_conv(const aoe_graph *g, const aoe_node *n)
{
	int i;

	for (i = 0; i < g->nnodes; i++) {
		const aoe_node *r = &g->nodes[i];
		if (!r->dead && r->nin > 0 && r->in[0] == n->out[0] &&
		    strcmp(r->op_type, "Conv") == 0 &&
		    aoe_attr_int(r, "group", 1) == 1)
			return 1;
	}
	return 0;
}

static int
conv_prepare(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *w = aoe_in(g, n, 1);
	conv_geom cg;
	conv_priv *q;
	int64_t K, gi;
	int rc, algo;

	aoe_node_unprepare(n);
	if ((rc = conv_geom_of(g, n, 0, &cg)) < 0)
		return rc;
	K = cg.cg * cg.ksz;
	algo = conv_algo_of(g, n, &cg, &n->sched);
	if (algo == ALGO_BLOCKED) {
		/* The weights packed for the schedule's oc_blk. */
		aoe_c8 p;
		if (w->kind != AOE_T_CONST || w->data == NULL || K < 1 ||
		    !blocked_ok(&cg))
			return 0;
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return aoe_err(AOE_ENOMEM, "out of memory");
		n->priv = q;
		n->priv_free = conv_priv_free;
		c8_of(g, n, &cg, &p);
		q->w8_ocb = aoe_c8_ocblk(&p, &n->sched);
		q->w8 = aligned_alloc(64, (aoe_c8_wsize(&p) * sizeof(float) +
		    63) & ~(size_t)63);
		if (q->w8 == NULL)
			return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
			    n->op_type, n->name);
		aoe_c8_weights(&p, q->w8_ocb, w->data, q->w8);
		return 0;
	}
	if (algo == ALGO_GROUPED) {
		/* The weights packed for the schedule's grp_vec, grp_nv. */
		if (w->kind != AOE_T_CONST || w->data == NULL || K < 1 ||
		    aoe_sched_get(&n->sched, "prepack", 1) == 0)
			return 0;
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return aoe_err(AOE_ENOMEM, "out of memory");
		n->priv = q;
		n->priv_free = conv_priv_free;
		q->wg_vw = aoe_grp_vec(&n->sched);
		q->wg_nv = aoe_grp_nv(&cg, &n->sched, q->wg_vw);
		q->wg = aligned_alloc(64, (aoe_grp_wsize(&cg, q->wg_vw,
		    q->wg_nv) * sizeof(float) + 63) & ~(size_t)63);
		if (q->wg == NULL)
			return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
			    n->op_type, n->name);
		aoe_grp_pack(&cg, q->wg_vw, q->wg_nv, w->data, q->wg);
		return 0;
	}
	if (algo == ALGO_WINOGRAD) {
		/* The transformed weights, F(m,3) as the schedule says. */
		int m = wino_m(&cg, &n->sched);
		if (w->kind != AOE_T_CONST || w->data == NULL || K < 1 ||
		    cg.m < 1 || aoe_sched_get(&n->sched, "prepack", 1) == 0)
			return 0;
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return aoe_err(AOE_ENOMEM, "out of memory");
		n->priv = q;
		n->priv_free = conv_priv_free;
		q->wino = aligned_alloc(64, (aoe_wino_wsize(m, cg.c, cg.m,
		    cg.group) * sizeof(float) + 63) & ~(size_t)63);
		if (q->wino == NULL)
			return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
			    n->op_type, n->name);
		aoe_wino_weights(m, cg.c, cg.m, cg.group, w->data, q->wino,
		    1);
		q->wino_m = m;
		return 0;
	}
	if (algo == ALGO_DEPTHWISE) {
		/*
		 * dw_nt=-1 streams the output only where a Conv of one
		 * group reads it: both cores then hold its lines when the
		 * next run writes them (aoe_dw_stream, aoe_stage_put).
		 */
		if (aoe_sched_get(&n->sched, "dw_nt", -1) != -1 ||
		    !read_by_dense_conv(g, n))
			return 0;
		if ((q = calloc(1, sizeof(*q))) == NULL)
			return aoe_err(AOE_ENOMEM, "out of memory");
		n->priv = q;
		n->priv_free = conv_priv_free;
		q->dw_gemm = 1;
		return 0;
	}
	if (w->kind != AOE_T_CONST || w->data == NULL || cg.mg < 2 || K < 1 ||
	    aoe_sched_get(&n->sched, "prepack", 1) == 0)
		return 0;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return aoe_err(AOE_ENOMEM, "out of memory");
	n->priv = q;
	n->priv_free = conv_priv_free;
	/* A of Y = W col, or B of Y^T = col^T W^T. */
	q->trans = algo == ALGO_IM2COL_T;
	q->wstride = aoe_sgemm_packed_size(q->trans, cg.mg, K, &n->sched);
	q->wstride = (q->wstride + 15) & ~(size_t)15;
	q->wpack = aligned_alloc(64, q->wstride * cg.group * sizeof(float));
	if (q->wpack == NULL)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	for (gi = 0; gi < cg.group; gi++)
		aoe_sgemm_pack(q->trans, q->trans, cg.mg, K,
		    (const float *)w->data + gi * cg.mg * K, K,
		    q->wpack + gi * q->wstride, &n->sched);
	q->id = aoe_sgemm_pack_id(q->trans, &n->sched);
	return 0;
}

/*
 * The default depth of a pointwise Conv's packed blocks (the GEMM's kc)
 * under AVX-512: all its input channels up to 1024 (as the kc knob lists
 * them), where the GEMM's own default is 256.  In one pass over K the
 * output is read and written once, not once a block.  bench/convb -a,
 * cold weights, Zen 5, against kc=256: at 2 threads 512>128 @28 0.89x,
 * 1024>256 @14 0.93x, 2048>512 @7 0.97x, 512>2048 @7 0.98x, 960>160 @7
 * 0.93x, 576>96 @14 0.93x; at 1 thread 0.97x, 0.98x, 0.98x, 0.98x,
 * 1.02x, 0.96x.  Strided ones (resnet's downsampling, a GEMM on the
 * subsampled input): 512>1024 @28 /2 0.91x at 2 threads and 0.92x at 1,
 * 1024>2048 @14 /2 0.92x and 0.97x.  Under AOE_MAX_ISA=avx2 (L1 and L2
 * of a Zen 2 are smaller) that was mixed; there the blocks go the other
 * way, 192 deep rather than the GEMM's 384, for more than 256 input
 * channels (unit strides): a block of B read in place, kc rows of a
 * strip each on lines of their own, then stays in L1 beside A's.
 * bench/convb -p, Zen 5 held to AVX2, against kc=384, 1 and 2 threads:
 * 320>1280 @7 0.97x and 0.87x, 384>64 @14 0.94x and 0.89x, 480>80 @14
 * 0.96x and 0.98x, 512>2048 @7 0.95x and 0.95x, 512>128 @28 1.00x and
 * 0.96x, 672>112 @14 0.94x and 0.92x, 960>160 @7 0.95x and 0.94x,
 * 1152>192 @7 0.98x and 0.90x, 1024>256 @14 1.02x and 0.97x, 2048>512
 * @7 0.97x and 0.97x, 400>400 @7 0.99x and 0.98x; at 256 it lost
 * (256>1024 @14 1.01x and 1.03x), strided ones were mixed (0.99x to
 * 1.02x, but 1024>2048 @14/2 at 2 threads 0.95x).  Whole models, the
 * GEMM's default moved for every GEMM instead (bench/ab.sh -A): the
 * CNNs 0.98x-1.00x, the transformer encoder 1.02x and 1.01x, hence
 * pointwise Convs only.
 */
static int64_t
pw_kc(const conv_geom *g)
{
	static const int64_t kcs[] = { 256, 384, 512, 768, 1024 };
	const int last = (int)(sizeof(kcs) / sizeof(kcs[0])) - 1;
	int i;

	/* (A matrix-vector product's space has the GEMM's default only.) */
	if (!(is_pointwise(g) || is_pointwise_strided(g)) || g->mg < 2 ||
	    g->outsz < 2)
		return 0;
	if (!aoe_cpu_avx512())
		return is_pointwise(g) && g->cg > 256 ? 192 : 0;
	for (i = 0; i < last && kcs[i] < g->cg; i++)
		;
	return kcs[i];
}

static void
conv_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	conv_geom cg;
	int64_t kc;

	if (conv_geom_of(g, n, 0, &cg) < 0)
		return;
	aoe_sched_set(s, "algo", conv_default_algo(&cg));
	aoe_sched_set(s, "batch_par", -1);
	aoe_sgemm_default_sched(s);
	if (conv_default_algo(&cg) == ALGO_1X1) {
		int64_t mr, nr;

		pw_shape(&cg, &mr, &nr);
		aoe_sched_set(s, "mr", mr);
		aoe_sched_set(s, "nr", nr);
	}
	if ((kc = pw_kc(&cg)) > 0)
		aoe_sched_set(s, "kc", kc);
}

/*
 * NV vectors of 8 outputs of a depthwise row: bias plus each of the nt
 * taps (T when it is a constant, so that the loop unrolls with the
 * weights in registers; 0 when it is not) at tp[t] + off.
 */
static inline __attribute__((always_inline)) void
dw_block(const int NV, const int T, int nt, const float *const *tp,
    const __m256 *wv, int64_t off, __m256 vb, float *y)
{
	__m256 a0 = vb, a1 = vb, a2 = vb, a3 = vb;
	int t;

	if (T)
		nt = T;
	for (t = 0; t < nt; t++) {
		const float *sp = tp[t] + off;
		a0 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(sp), a0);
		if (NV > 1)
			a1 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(sp + 8),
			    a1);
		if (NV > 2)
			a2 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(sp + 16),
			    a2);
		if (NV > 3)
			a3 = _mm256_fmadd_ps(wv[t], _mm256_loadu_ps(sp + 24),
			    a3);
	}
	_mm256_storeu_ps(y, a0);
	if (NV > 1)
		_mm256_storeu_ps(y + 8, a1);
	if (NV > 2)
		_mm256_storeu_ps(y + 16, a2);
	if (NV > 3)
		_mm256_storeu_ps(y + 24, a3);
}

/*
 * One 2-D depthwise plane: the input plane is copied, zero-padded, into
 * buf (split into sw column phases, so that a strided tap is a
 * contiguous load), then each output row is a sum over the taps with no
 * bounds checks, four vectors at a time.  ksz <= 64.
 */
static void
dw_plane2d(const conv_geom *g, const float *x, const float *w, float bv,
    float *y, float *buf)
{
	const int64_t I1 = g->in[1], I2 = g->in[2], O1 = g->out[1];
	const int64_t O2 = g->out[2], K1 = g->k[1], K2 = g->k[2];
	const int64_t sh = g->s[1], sw = g->s[2], dh = g->d[1], dw = g->d[2];
	const int64_t RH = (O1 - 1) * sh + (K1 - 1) * dh + 1;
	const int64_t RW = (O2 - 1) * sw + (K2 - 1) * dw + 1;
	const int64_t PW = (RW + sw - 1) / sw + 32;
	__m256 wv[64], vb = _mm256_set1_ps(bv);
	int64_t r, q, c, oh, ow, t;
	const float *tp[64];
	float tmp[32];

	for (r = 0; r < RH; r++) {
		int64_t ih = r - g->pb[1];
		const float *src = x + ih * I2;
		int rowok = ih >= 0 && ih < I1;
		for (q = 0; q < sw; q++) {
			float *d = buf + (q * RH + r) * PW;
			if (!rowok) {
				memset(d, 0, sizeof(float) * PW);
				continue;
			}
			/*
			 * Phase q: column c holds input column c*sw+q-pb;
			 * columns lo..hi are inside the input.
			 */
			int64_t o = q - g->pb[2];
			int64_t lo = o >= 0 ? 0 : (-o + sw - 1) / sw;
			int64_t hi = I2 - 1 - o >= 0 ? (I2 - 1 - o) / sw + 1 :
			    0;
			const float *sq = src + o;
			lo = min64(lo, PW);
			hi = min64(max64(hi, lo), PW);
			if (sw == 1) {
				memset(d, 0, sizeof(float) * lo);
				memcpy(d + lo, sq + lo, sizeof(float) *
				    (hi - lo));
				memset(d + hi, 0, sizeof(float) * (PW - hi));
				continue;
			}
			memset(d, 0, sizeof(float) * lo);
			if (sw == 2)
				for (c = lo; c < hi; c++)
					d[c] = sq[2 * c];
			else
				for (c = lo; c < hi; c++)
					d[c] = sq[c * sw];
			memset(d + hi, 0, sizeof(float) * (PW - hi));
		}
	}
	for (t = 0; t < K1 * K2; t++) {
		int64_t kh = t / K2, kw = t % K2;
		wv[t] = _mm256_set1_ps(w[t]);
		tp[t] = buf + ((kw * dw % sw) * RH + kh * dh) * PW +
		    kw * dw / sw;
	}
	for (oh = 0; oh < O1; oh++, y += O2) {
		int64_t roff = oh * sh * PW;
		for (ow = 0; ow < O2; ow += 32) {
			int nv = (int)min64(4, (O2 - ow + 7) / 8);
			float *o = ow + 32 <= O2 ? y + ow : tmp;
			if (K1 * K2 == 9)
				switch (nv) {
				case 4: dw_block(4, 9, 9, tp, wv, roff + ow, vb, o);
					break;
				case 3: dw_block(3, 9, 9, tp, wv, roff + ow, vb, o);
					break;
				case 2: dw_block(2, 9, 9, tp, wv, roff + ow, vb, o);
					break;
				default: dw_block(1, 9, 9, tp, wv, roff + ow, vb,
				    o);
				}
			else
				switch (nv) {
				case 4: dw_block(4, 0, K1 * K2, tp, wv, roff + ow,
				    vb, o);
					break;
				case 3: dw_block(3, 0, K1 * K2, tp, wv, roff + ow,
				    vb, o);
					break;
				case 2: dw_block(2, 0, K1 * K2, tp, wv, roff + ow,
				    vb, o);
					break;
				default: dw_block(1, 0, K1 * K2, tp, wv,
				    roff + ow, vb, o);
				}
			if (o == tmp)
				memcpy(y + ow, tmp, sizeof(float) * (O2 - ow));
		}
	}
}

/* Add wv * x[ow*sw + off] to y[ow] for the ow whose input is inside. */
static void
dw_row_tap(float *restrict y, const float *restrict x, float wv,
    int64_t off, int64_t sw, int64_t o2, int64_t i2)
{
	int64_t lo = off >= 0 ? 0 : ceildiv(-off, sw);
	int64_t hi = floordiv(i2 - 1 - off, sw) + 1, ow;

	lo = min64(lo, o2);
	hi = min64(hi, o2);
	if (sw == 1)
		for (ow = lo; ow < hi; ow++)
			y[ow] += wv * x[ow + off];
	else
		for (ow = lo; ow < hi; ow++)
			y[ow] += wv * x[ow * sw + off];
}

/*
 * One depthwise plane, any rank: each output row is the bias plus, for
 * every kernel position, a shifted and scaled input row.
 */
static void
dw_plane(const conv_geom *g, const float *x, const float *w, float bv,
    float *y)
{
	const int64_t O1 = g->out[1], O2 = g->out[2];
	const int64_t I1 = g->in[1], I2 = g->in[2];
	const int64_t K1 = g->k[1], K2 = g->k[2];
	int64_t od, oh, ow, kd, kh, kw, id, ih;

	for (od = 0; od < g->out[0]; od++)
		for (oh = 0; oh < O1; oh++) {
			float *yr = y + (od * O1 + oh) * O2;
			for (ow = 0; ow < O2; ow++)
				yr[ow] = bv;
			for (kd = 0; kd < g->k[0]; kd++) {
				id = od * g->s[0] - g->pb[0] + kd * g->d[0];
				if (id < 0 || id >= g->in[0])
					continue;
				for (kh = 0; kh < K1; kh++) {
					ih = oh * g->s[1] - g->pb[1] +
					    kh * g->d[1];
					if (ih < 0 || ih >= I1)
						continue;
					for (kw = 0; kw < K2; kw++)
						dw_row_tap(yr, x + (id * I1 +
						    ih) * I2, w[(kd * K1 + kh) *
						    K2 + kw], kw * g->d[2] -
						    g->pb[2], g->s[2], O2, I2);
				}
			}
		}
}

/* Padded width, in pixels, of dw_group8's interleaved rows. */
static int64_t
dw8_width(const conv_geom *g)
{
	int64_t ow8 = (g->out[2] + 7) / 8 * 8;

	return (ow8 - 1) * g->s[2] + (g->k[2] - 1) * g->d[2] + 1;
}

/*
 * Eight output pixels, ps floats apart in the interleaved buffer from sp,
 * each of eight channels: r[i] = bias + sum over the taps of wv[t] times
 * the pixel at toff[t].  T is the tap count when it is a constant (the
 * loop then unrolls, weights in registers), else 0 and toff ends at -1.
 */
static inline __attribute__((always_inline)) void
dw8_pixels(const int T, const float *sp, int64_t ps, const __m256 *wv,
    const int64_t *toff, __m256 vb, __m256 r[8])
{
	__m256 a0 = vb, a1 = vb, a2 = vb, a3 = vb, a4 = vb, a5 = vb;
	__m256 a6 = vb, a7 = vb;
	int t;

	/*
	 * All eight pixels a tap, eight chains of FMAs: four at a time (two
	 * passes over the taps) left the FMAs waiting on each other.
	 */
#define DW8_TAP do {							\
	const float *q = sp + toff[t];					\
	const __m256 wt = wv[t];					\
	a0 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q), a0);		\
	a1 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + ps), a1);		\
	a2 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + 2 * ps), a2);	\
	a3 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + 3 * ps), a3);	\
	a4 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + 4 * ps), a4);	\
	a5 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + 5 * ps), a5);	\
	a6 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + 6 * ps), a6);	\
	a7 = _mm256_fmadd_ps(wt, _mm256_loadu_ps(q + 7 * ps), a7);	\
} while (0)

	if (T)
		for (t = 0; t < T; t++)
			DW8_TAP;
	else
		for (t = 0; toff[t] >= 0; t++)
			DW8_TAP;
#undef DW8_TAP
	r[0] = a0;
	r[1] = a1;
	r[2] = a2;
	r[3] = a3;
	r[4] = a4;
	r[5] = a5;
	r[6] = a6;
	r[7] = a7;
}

/*
 * Eight depthwise channels of a 2-D image at once, vectorised across the
 * channels: the eight input planes are interleaved (zero-padded) into
 * buf as rows of [pixel][8 channels], every tap is then one load and one
 * FMA for eight outputs, and the results are transposed back into the
 * eight output planes.  Channels m0..m0+nch (nch <= 8) of image b; reg,
 * when set, is a plain clamp or HardSwish applied before the transpose.
 */
static void
dw_group8(const conv_geom *g, const float *x, const float *w,
    const float *bias, const aoe_epi *reg, float *y, int64_t b, int64_t m0,
    int nch, float *buf)
{
	const int64_t I1 = g->in[1], I2 = g->in[2], O1 = g->out[1];
	const int64_t O2 = g->out[2], K2 = g->k[2], nt = g->k[1] * K2;
	const int64_t sh = g->s[1], sw = g->s[2], dh = g->d[1], dw = g->d[2];
	const int64_t RH = (O1 - 1) * sh + (g->k[1] - 1) * dh + 1;
	const int64_t RW = dw8_width(g), ph = g->pb[1], pw = g->pb[2];
	const float *xp[8];
	float *yp[8];
	__m256 wv[64], vb, r[8];
	float wt[8];
	int64_t rr, c, oh, ow, t, toff[65];
	int l;

	for (l = 0; l < 8; l++) {
		int64_t m = m0 + (l < nch ? l : nch - 1);
		xp[l] = x + (b * g->c + m / g->mg) * g->insz;
		yp[l] = y + (b * g->m + m) * g->outsz;
		wt[l] = bias ? bias[m] : 0;
	}
	vb = _mm256_loadu_ps(wt);
	for (t = 0; t < nt; t++) {
		for (l = 0; l < 8; l++)
			wt[l] = w[(m0 + (l < nch ? l : nch - 1)) * nt + t];
		wv[t] = _mm256_loadu_ps(wt);
		toff[t] = ((t / K2) * dh * RW + (t % K2) * dw) * 8;
	}
	toff[nt] = -1;
	/* Interleave: buf[r][c][l] = x_l[r - ph][c - pw], or 0. */
	for (rr = 0; rr < RH; rr++) {
		int64_t ih = rr - ph, lo = min64(pw, RW), hi;
		float *d = buf + rr * RW * 8;
		if (ih < 0 || ih >= I1) {
			memset(d, 0, sizeof(float) * RW * 8);
			continue;
		}
		hi = min64(pw + I2, RW);
		memset(d, 0, sizeof(float) * lo * 8);
		for (c = lo; c + 8 <= hi; c += 8) {
			for (l = 0; l < 8; l++)
				r[l] = _mm256_loadu_ps(xp[l] + ih * I2 + c - pw);
			aoe_tr8(r);
			for (l = 0; l < 8; l++)
				_mm256_storeu_ps(d + (c + l) * 8, r[l]);
		}
		if (c < hi) {
			/* The last few pixels, under a mask. */
			__m256i mk = aoe_lane_mask((int)(hi - c));
			for (l = 0; l < 8; l++)
				r[l] = _mm256_maskload_ps(xp[l] + ih * I2 + c -
				    pw, mk);
			aoe_tr8(r);
			for (l = 0; l < hi - c; l++)
				_mm256_storeu_ps(d + (c + l) * 8, r[l]);
		}
		memset(d + max64(hi, lo) * 8, 0, sizeof(float) *
		    (RW - max64(hi, lo)) * 8);
	}
	/* Eight output pixels (of eight channels) at a time. */
	for (oh = 0; oh < O1; oh++) {
		const float *row = buf + oh * sh * RW * 8;
		for (ow = 0; ow < O2; ow += 8) {
			const float *sp = row + ow * sw * 8;
			if (nt == 9)
				dw8_pixels(9, sp, sw * 8, wv, toff, vb, r);
			else
				dw8_pixels(0, sp, sw * 8, wv, toff, vb, r);
			if (reg != NULL && reg->kind == AOE_EPI_CLAMP)
				for (l = 0; l < 8; l++)
					r[l] = aoe_epi_k8(AOE_EPI_CLAMP, reg,
					    r[l]);
			else if (reg != NULL)
				for (l = 0; l < 8; l++)
					r[l] = aoe_epi_k8(AOE_EPI_HARDSWISH,
					    reg, r[l]);
			aoe_tr8(r);
			if (ow + 8 <= O2) {
				for (l = 0; l < nch; l++)
					_mm256_storeu_ps(yp[l] + oh * O2 + ow,
					    r[l]);
			} else {
				__m256i mk = aoe_lane_mask((int)(O2 - ow));
				for (l = 0; l < nch; l++)
					_mm256_maskstore_ps(yp[l] + oh * O2 +
					    ow, mk, r[l]);
			}
		}
	}
}

/* A piece of a depthwise Conv: groups of eight channels, or planes. */
struct dw_ctx {
	const conv_geom *g;
	const float *x, *w, *bias;
	float *y;
	int64_t groups, buf8, bufsz;
	int fast2d;
	int64_t items, nch;
	const aoe_epi *e;	/* on each plane as it is made, or NULL */
	const aoe_epi *reg;	/* e, a clamp or HardSwish, in registers */
	const float *add;	/* the residual, laid out as y, or NULL */
	int nt;			/* eight planes staged and streamed */
};

/* The epilogue on planes pl..pl+n of y (at yb), still in cache. */
static void
dw_epi(const struct dw_ctx *d, float *yb, int64_t pl, int n)
{
	const int64_t sz = d->g->outsz;
	int l;

	for (l = 0; d->e != NULL && l < n; l++)
		aoe_epi_row(d->e, (pl + l) % d->g->m, yb + (pl + l) * sz,
		    d->add ? d->add + (pl + l) * sz : NULL, sz);
}

static void
dw8_chunk(void *arg, int64_t c, int tid)
{
	const struct dw_ctx *d = arg;
	const conv_geom *g = d->g;
	int64_t t, t1 = aoe_chunk_lo(d->items, d->nch, c + 1);

	for (t = aoe_chunk_lo(d->items, d->nch, c); t < t1; t++) {
		int64_t b = t / d->groups, m0 = t % d->groups * 8;
		int64_t p0 = b * g->m + m0;
		float *buf = aoe_sgemm_tlbuf(2, (size_t)d->buf8);
		int nch = (int)min64(8, g->m - m0);
		float *y0 = d->y + p0 * g->outsz, *yb = d->y, *sb = NULL;
		/* Staged, plane p0 + l is at sb + l * outsz (dw_nt). */
		if (d->nt && (sb = aoe_stage_buf(y0, nch * g->outsz)) != NULL)
			yb = sb - p0 * g->outsz;
		if (buf != NULL)
			dw_group8(g, d->x, d->w, d->bias, d->reg, yb, b, m0,
			    nch, buf);
		else
			for (int l = 0; l < nch; l++)
				dw_plane(g, d->x + (b * g->c + (m0 + l) /
				    g->mg) * g->insz, d->w + (m0 + l) * g->ksz,
				    d->bias ? d->bias[m0 + l] : 0,
				    yb + (p0 + l) * g->outsz);
		if (buf == NULL || d->reg == NULL)
			dw_epi(d, yb, p0, nch);
		if (sb != NULL)
			aoe_stage_put(y0, sb, nch * g->outsz);
	}
}

static void
dwp_chunk(void *arg, int64_t c, int tid)
{
	const struct dw_ctx *d = arg;
	const conv_geom *g = d->g;
	int64_t pl, p1 = aoe_chunk_lo(d->items, d->nch, c + 1);

	for (pl = aoe_chunk_lo(d->items, d->nch, c); pl < p1; pl++) {
		int64_t b = pl / g->m, m = pl % g->m, ci = m / g->mg;
		const float *xp = d->x + (b * g->c + ci) * g->insz;
		const float *wp = d->w + m * g->ksz;
		float *yp = d->y + pl * g->outsz;
		float bv = d->bias ? d->bias[m] : 0;
		float *buf = d->fast2d ? aoe_sgemm_tlbuf(2,
		    (size_t)d->bufsz) : NULL;

		if (buf != NULL)
			dw_plane2d(g, xp, wp, bv, yp, buf);
		else
			dw_plane(g, xp, wp, bv, yp);
		dw_epi(d, d->y, pl, 1);
	}
}

/*
 * Depthwise (one input channel per group).  2-D images with up to 64
 * taps go eight channels at a time (dw_group8), or a padded plane at a
 * time when eight planes would not fit the buffer; anything else row by
 * row.  The epilogue e (may be NULL) and the residual add (may be NULL)
 * run on each work item's planes as soon as they are made: as a pass of
 * its own over mobilenet_v2's 96 @112/2 output (1.2 MB) they read it
 * back from the L3.  A plain Relu or Clip comes as reg (e, else NULL)
 * too, and dw_group8 applies it in registers instead: 96 @112/2
 * 192 to 172 us, 144 @56/2 83 to 73, 144 @56 173 to 150 (Zen 5, 1
 * thread, warm, bench/convb, with its eight FMA chains a tap).  So does
 * a plain HardSwish: AOE_MAX_ISA=avx2, unit-dwconv's DWCONV_BENCH, us, 1
 * thread (CPU time) and 2 (wall clock): 144 @56 198.6 to 140.6 and
 * 135.7 to 86.6, 192 @28 83.2 to 56.8 and 52.6 to 34.9, 576 @14 73.0 to
 * 53.1 and 36.2 to 27.4, 32 @112 173.5 to 122.1 and 176.3 to 86.8.  A
 * SiLU stays a pass: in registers it ran 1.05x the time (144 @56 239.5
 * against 251.4, 192 @28 93.0 against 101.9).
 */
static void
conv_depthwise(const conv_geom *g, const float *x, const float *w,
    const float *bias, const aoe_epi *e, const aoe_epi *reg,
    const float *add, float *y, int nt, int nthreads)
{
	const int64_t O1 = g->out[1], O2 = g->out[2], sw = g->s[2];
	const int64_t RH = (O1 - 1) * g->s[1] + (g->k[1] - 1) * g->d[1] + 1;
	const int64_t RW = (O2 - 1) * sw + (g->k[2] - 1) * g->d[2] + 1;
	const int64_t bufsz = sw * RH * ((RW + sw - 1) / sw + 32);
	const int64_t buf8 = RH * dw8_width(g) * 8;
	const int two_d = g->out[0] == 1 && g->in[0] == 1 && g->k[0] == 1 &&
	    g->k[1] * g->k[2] <= 64;
	const int fast2d = two_d && bufsz < ((int64_t)1 << 26);
	const int64_t groups = (g->m + 7) / 8;
	int64_t planes = g->n * g->m;

	struct dw_ctx c = { g, x, w, bias, y, groups, buf8, bufsz, fast2d,
	    0, 1, e, reg, add, 0 };

	if (nthreads < 2 || planes * g->outsz * g->ksz <= 65536)
		nthreads = 1;
	if (two_d && buf8 < ((int64_t)1 << 23)) {
		c.nt = aoe_dw_stream(g, nt, nthreads);
		c.items = g->n * groups;
		c.nch = aoe_nchunks(c.items, nthreads);
		aoe_parallel(nthreads, c.nch, dw8_chunk, &c);
		return;
	}
	c.items = planes;
	c.nch = aoe_nchunks(c.items, nthreads);
	aoe_parallel(nthreads, c.nch, dwp_chunk, &c);
}

/*
 * Which kernel algo 4 runs: 2 the register-blocked one (k_dwconv.c,
 * dw_rows=2), 1 by rows through a ring (dw_rows=1), 0 the NCHW plane
 * and 8-channel kernels above (dw_rows=0), 3 the flat one (k_dwconv.c,
 * dw_rows=3), 4 channels in the lanes, 5 the phases of a stride-2 row,
 * each where it applies.  By default (dw_rows=-1, aoe_dw_auto) 2 or 3
 * at stride 1 where they apply, 4 or 5 (AVX-512) at stride 2, else 0.  (dw_rows=1 lost to the 8-channel kernel 1.5x to 10x on
 * mobilenet_v2's layers, most on small planes, where a row's fixed
 * costs outweigh its few FMAs.)
 */
static int
dw_mode_of(const conv_geom *g, const aoe_sched *s, int clamp, int light)
{
	int64_t v = aoe_sched_get(s, "dw_rows", -1);
	int m;

	if (v == 1)
		return aoe_dw_rows_ok(g) ? 1 : 0;
	if (v == 2)
		return aoe_dw_reg_ok(g) ? 2 : 0;
	if (v == 3)
		return aoe_dw_flat_ok(g) ? 3 : 0;
	if (v == 4)
		return aoe_dw_rows_ok(g) ? 4 : 0;
	if (v == 5)
		return aoe_dw_phase_ok(g) ? 5 : 0;
	if (v == 0)
		return 0;
	m = aoe_dw_auto(g, light);
	/*
	 * 3x3 at stride 1 on planes 8 wide or less goes to the channels-in-
	 * lanes kernel (4) under AVX-512 for its epilogue in registers;
	 * with a plain Relu or Clip (clamp), which dw_rows=2 now applies in
	 * registers too, eight rows a pass are faster (Zen 5, 1 thread, CPU
	 * time, unit-dwconv's DWCONV_BENCH, Clip: 960 @7 34.3 to 29.1 us,
	 * 1152 @7 40.7 to 36.3; with SiLU or HardSwish, 4 stays 1.2x ahead).
	 */
	if (m == 4 && clamp && g->s[1] == 1 && g->k[1] == 3 &&
	    aoe_dw_reg_ok(g))
		m = 2;
	return m;
}

static int
dw_vec_of(const aoe_sched *s)
{
	int64_t v = aoe_sched_get(s, "dw_vec", 0);

	return v == 8 || v == 16 ? (int)v : aoe_dw_default_vec();
}

/*
 * Algo 4: the depthwise kernel dw_mode_of() picks, its activation and
 * residual fused (the NCHW plane kernels apply them to each work item's
 * planes after making them).
 */
static int
conv_run_depthwise(const aoe_kctx *k, const conv_geom *cg, const float *x,
    const float *w, const float *bias, float *y)
{
	const aoe_node *n = k->n;
	const conv_priv *q = n->priv;
	const float *add = aoe_fused_add(k->g, n);
	int vec = (int)aoe_sched_get(k->sched, "dw_vec", 0), rc;
	int nt = (int)aoe_sched_get(k->sched, "dw_nt", -1);
	int bare, plain, epi;
	aoe_act act;
	aoe_epi e;

	if (nt == -1 && (q == NULL || !q->dw_gemm))
		nt = 0;

	aoe_act_of(n, &act);
	/* No residual and no affine after the activation. */
	bare = add == NULL && act.ps == NULL && act.pt == NULL;
	plain = bare && (act.kind == AOE_ACT_RELU ||
	    act.kind == AOE_ACT_CLIP);
	switch (dw_mode_of(cg, k->sched, plain, plain || (bare &&
	    act.kind == AOE_ACT_NONE))) {
	case 1:
		rc = aoe_dw_rows(cg, x, w, bias, &act, add, y, dw_vec_of(k->sched),
		    k->nthreads);
		break;
	case 2:
		rc = aoe_dw_reg(cg, x, w, bias, &act, add, y, vec,
		    (int)aoe_sched_get(k->sched, "dw_oh", 0),
		    (int)aoe_sched_get(k->sched, "dw_ow", 0), nt, k->nthreads);
		break;
	case 3:
		rc = aoe_dw_flat(cg, x, w, bias, &act, add, y, vec, k->nthreads);
		break;
	case 4:
		rc = aoe_dw_lanes(cg, x, w, bias, &act, add, y, vec, nt,
		    k->nthreads);
		break;
	case 5:
		rc = aoe_dw_phase(cg, x, w, bias, &act, add, y, vec, nt,
		    k->nthreads);
		break;
	default:
		/*
		 * The epilogue on each group of planes as it is made; a plain
		 * Relu, Clip or HardSwish (bare: no residual, no affine after
		 * it) in registers where eight planes are made at once.
		 */
		epi = aoe_act_epi(&act, &e) || add != NULL;
		conv_depthwise(cg, x, w, bias, epi ? &e : NULL, epi && bare &&
		    (e.kind == AOE_EPI_CLAMP || e.kind == AOE_EPI_HARDSWISH) ?
		    &e : NULL, add, y, nt, k->nthreads);
		return 0;
	}
	if (rc < 0)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory", n->op_type,
		    n->name);
	return 0;
}

/* Rows of an explicit im2col column tile. */
struct i2c_ctx {
	const conv_geom *cg;
	const float *xg;
	float *col;
	int64_t rows, j0, len, nch;
	const conv_planes *pl;	/* read these instead of xg, or NULL */
};

/*
 * Row p of the column matrix, positions [j0, j0+len), from the planes:
 * a contiguous run of a plane per output row.  Whole vectors are copied
 * (a run's overshoot is overwritten by the next), the row's last under a
 * mask.
 */
static void
im2col_row_planes(const conv_geom *g, const conv_planes *pl, int64_t p,
    int64_t j0, int64_t len, float *row)
{
	const int64_t O1 = g->out[1], O2 = g->out[2], K1 = g->k[1];
	const int64_t K2 = g->k[2];
	int64_t c = p / g->ksz, r = p % g->ksz, od, oh, ow, seg, t;
	int64_t rz = r / (K1 * K2) * g->d[0], rh = r / K2 % K1 * g->d[1];
	int64_t rw = r % K2 * g->d[2];
	const float *x = pl->p + c * pl->cs + (rz * pl->hp + rh) * pl->rs +
	    rw % g->s[2] * pl->wq + rw / g->s[2];

	od = j0 / (O1 * O2);
	oh = j0 / O2 % O1;
	ow = j0 % O2;
	while (len > 0) {
		const float *s = x + (od * g->s[0] * pl->hp + oh * g->s[1]) *
		    pl->rs + ow;
		seg = min64(len, O2 - ow);
		for (t = 0; t + 8 <= seg; t += 8)
			_mm256_storeu_ps(row + t, _mm256_loadu_ps(s + t));
		if (t < seg) {
			if (t + 8 <= len)
				_mm256_storeu_ps(row + t,
				    _mm256_loadu_ps(s + t));
			else
				_mm256_maskstore_ps(row + t,
				    _mm256_cmpgt_epi32(_mm256_set1_epi32(
				    (int32_t)(seg - t)), _mm256_setr_epi32(0,
				    1, 2, 3, 4, 5, 6, 7)), _mm256_loadu_ps(s + t));
		}
		row += seg;
		len -= seg;
		ow = 0;
		if (++oh == O1) {
			oh = 0;
			od++;
		}
	}
}

static void
i2c_chunk(void *arg, int64_t c, int tid)
{
	const struct i2c_ctx *ic = arg;
	const conv_geom *cg = ic->cg;
	int64_t p, p1 = aoe_chunk_lo(ic->rows, ic->nch, c + 1);

	for (p = aoe_chunk_lo(ic->rows, ic->nch, c); p < p1; p++) {
		int64_t ch = p / cg->ksz, r = p % cg->ksz;
		if (ic->pl != NULL) {
			im2col_row_planes(cg, ic->pl, p, ic->j0, ic->len,
			    ic->col + p * ic->len);
			continue;
		}
		im2col_row(cg, ic->xg + ch * cg->insz,
		    r / (cg->k[1] * cg->k[2]), r / cg->k[2] % cg->k[1],
		    r % cg->k[2], ic->j0, ic->len, ic->col + p * ic->len);
	}
}

/* Jobs (images and groups) of a Conv or ConvTranspose, one a thread. */
struct job_ctx {
	aoe_kctx *k;
	const conv_geom *cg;
	int algo;
	int64_t tile, colsz;	/* ConvTranspose */
	int fail;
	float *y;		/* Conv: where its output goes */
};

static int conv_job(const aoe_kctx *, const conv_geom *, int, int64_t, int,
    float *);

/*
 * Whether implicit im2col on nth threads splits the output positions
 * between them itself, a GEMM of its own each, at multiples of 8 columns
 * (the GEMM's own column split goes by whole nr-wide strips, and its row
 * split has every thread pack all of B).  The knob "par" (the GEMM's
 * thread split) says: 2 columns, 1 rows (the GEMM's), 0 auto, which
 * takes columns when each thread gets at least four 16-wide strips.
 */
static int
conv_split_cols(const conv_geom *g, const aoe_sched *s, int nth)
{
	int64_t par = aoe_sched_get(s, "par", 0);

	if (par == 1 || g->outsz < 8 * nth)
		return 0;
	return par == 2 || g->outsz >= 64 * nth;
}

/* One thread's columns of an implicit-im2col GEMM (conv_split_cols). */
struct colsplit_ctx {
	const aoe_gemm_ex *xe;
	const packb_ctx *pc;
	const aoe_sched *s;
	const int64_t *cut;	/* the parts, in 8-column units */
	int fail;
	int own_planes;		/* each thread copies its own rows */
};

static void
colsplit_chunk(void *arg, int64_t c, int tid)
{
	struct colsplit_ctx *cs = arg;
	int64_t lo, hi;
	aoe_gemm_ex x;
	packb_ctx p = *cs->pc;
	conv_planes pl;

	gemm_part(cs->xe, cs->cut, c, &x, &lo, &hi);
	if (lo >= hi)
		return;
	if (cs->own_planes) {
		/*
		 * The padded copy of the rows this thread's columns read,
		 * in a buffer of its own: copied by the threads that read
		 * them, no barrier and no rows from another core's cache.
		 */
		float *buf = aoe_sgemm_tlbuf(3, (size_t)planes_floats(p.g));
		/* A buffer that cannot be had: the in-place packer. */
		if (buf != NULL) {
			planes_fill_cols(p.g, p.x, buf, lo, hi, &pl);
			p.pl = &pl;
			x.packb = conv_packb_planes;
		}
	}
	p.j0 = lo;
	x.ctx = &p;
	if (aoe_sgemm_ex(&x, 1, cs->s) < 0)
		__atomic_store_n(&cs->fail, 1, __ATOMIC_RELAXED);
}

static void
conv_job_chunk(void *arg, int64_t t, int tid)
{
	struct job_ctx *j = arg;

	if (conv_job(j->k, j->cg, j->algo, t, 1, j->y) < 0)
		__atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED);
}

/*
 * The way back from Y^T (conv_job_trans): output channels [c0, c1) at
 * positions [p0, p1) of Y from ct (len x mg), plus the bias, then the
 * epilogue on each row piece (while it is still in cache).
 */
struct untr_ctx {
	const float *ct, *bias, *addg;
	const aoe_epi *e;	/* NULL: no epilogue */
	float *yg;
	int64_t mg, len, j0, outsz;
};

static void
untrans_block(const struct untr_ctx *u, int64_t c0, int64_t c1, int64_t p0,
    int64_t p1)
{
	int64_t i, j, j1, ib;

	for (ib = c0; ib < c1; ib += 8) {
		int64_t ie = min64(ib + 8, c1);
		/*
		 * 8 x 8 blocks of the transpose, in registers where the block
		 * is whole, the bias added on the way; the ragged ones scalar.
		 */
		for (j1 = p0; ie - ib == 8 && j1 + 8 <= p1; j1 += 8) {
			__m256 v[8];
			for (j = 0; j < 8; j++)
				v[j] = _mm256_loadu_ps(u->ct + (j1 + j) * u->mg +
				    ib);
			aoe_tr8(v);
			for (i = 0; i < 8; i++)
				_mm256_storeu_ps(u->yg + (ib + i) * u->outsz +
				    u->j0 + j1, _mm256_add_ps(v[i],
				    _mm256_set1_ps(u->bias ? u->bias[ib + i] :
				    0)));
		}
		for (; j1 < p1; j1 += 8)
			for (i = ib; i < ie; i++) {
				float b = u->bias ? u->bias[i] : 0;
				float *yr = u->yg + i * u->outsz + u->j0;
				for (j = j1; j < min64(j1 + 8, p1); j++)
					yr[j] = u->ct[j * u->mg + i] + b;
			}
		for (i = ib; u->e && i < ie; i++)
			aoe_epi_row(u->e, i, u->yg + i * u->outsz + u->j0 + p0,
			    u->addg ? u->addg + i * u->outsz + u->j0 + p0 :
			    NULL, p1 - p0);
	}
}

/*
 * The GEMM's hook: a tile of Y^T is final, positions [i0, i1) of
 * channels [j0, j1); it is turned back by the thread that made it, while
 * in its cache, and in the same parallel job.  (A pass of its own after
 * the GEMM, split by channels, cost a second job and read from the other
 * core's cache what the GEMM's split did not match: 400>400 @7, a tenth
 * of the Conv at 2 threads on a Zen 5.)
 */
static void
untrans_tile(const aoe_gemm_ex *x, int64_t i0, int64_t i1, int64_t j0,
    int64_t j1)
{
	untrans_block(x->done_ctx, j0, j1, i0, i1);
}

/*
 * Explicit im2col the other way round: Y^T = col^T W^T, a GEMM whose
 * vectors run along the output channels instead of the output positions
 * (which, few and not a multiple of 8, would waste lanes), into a buffer;
 * then Y (tile at j0, len positions) is its transpose, plus the bias and
 * the epilogue e (NULL: none) with the residual addg, on nth threads over
 * blocks of 8 output channels.  That pass was serial once: on ResNet-18's
 * 1x1 stride-2 downsample (256 to 512 channels, 7x7 out) it was 46 of
 * 133 us at one thread (AMD EPYC Zen 5, measured with each chunk of a
 * 2-thread split timed on one core).
 */
static int
conv_job_trans(const aoe_kctx *k, const conv_geom *cg, int64_t gi,
    const float *col, int64_t ldcol, int64_t j0, int64_t len, float *yg,
    const aoe_epi *e, const float *addg, int nth)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *w = aoe_in(g, n, 1)->data;
	const float *bias = bt ? (const float *)bt->data + gi * cg->mg : NULL;
	const conv_priv *q = n->priv;
	int64_t K = cg->cg * cg->ksz, mg = cg->mg;
	float *ct = aoe_sgemm_tlbuf(2, (size_t)(len * mg));
	aoe_gemm_ex xt;
	struct untr_ctx u;

	if (ct == NULL)
		return -1;
	memset(&xt, 0, sizeof(xt));
	xt.transa = 1;
	xt.transb = 1;
	xt.m = len;
	xt.n = mg;
	xt.k = K;
	xt.alpha = 1;
	xt.a = col;
	xt.lda = ldcol;
	xt.b = w + gi * mg * K;
	xt.ldb = K;
	xt.bpack = q && q->wpack && q->trans ? q->wpack + gi * q->wstride :
	    NULL;
	xt.bpack_id = q ? q->id : 0;
	xt.c = ct;
	xt.ldc = mg;
	u.ct = ct;
	u.bias = bias;
	u.addg = addg;
	u.e = e;
	u.yg = yg;
	u.mg = mg;
	u.len = len;
	u.j0 = j0;
	u.outsz = cg->outsz;
	xt.done = untrans_tile;
	xt.done_ctx = &u;
	return aoe_sgemm_ex(&xt, nth, k->sched) < 0 ? -1 : 0;
}

/*
 * The GEMM of image b and group gi of Conv k into y, but for B: its A
 * (the weights, packed when prepare packed them), bias, and epilogue (a
 * fused residual, activation and affine after it, run on each tile as
 * it is finished; rows are the group's output channels).
 */
static void
conv_gemm_of(const aoe_kctx *k, const conv_geom *cg, int64_t b, int64_t gi,
    float *y, aoe_gemm_ex *xe)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *w = aoe_in(g, n, 1)->data;
	const float *bias = bt ? bt->data : NULL, *addg;
	const conv_priv *q = n->priv;
	const int64_t K = cg->cg * cg->ksz;
	aoe_act act;

	memset(xe, 0, sizeof(*xe));
	xe->m = cg->mg;
	xe->k = K;
	xe->alpha = 1;
	xe->beta = 0;
	xe->a = w + gi * cg->mg * K;
	xe->lda = K;
	xe->apack = q && q->wpack && !q->trans ? q->wpack + gi * q->wstride :
	    NULL;
	xe->apack_id = q ? q->id : 0;
	xe->bias = bias ? bias + gi * cg->mg : NULL;
	xe->ldc = cg->outsz;
	xe->n = cg->outsz;
	xe->c = y + (b * cg->m + gi * cg->mg) * cg->outsz;
	aoe_act_of(n, &act);
	if ((addg = aoe_fused_add(g, n)) != NULL)
		addg += (b * cg->m + gi * cg->mg) * cg->outsz;
	xe->epi = aoe_act_epi(&act, &xe->e) || addg;
	xe->add = addg;
	if (xe->e.ps)
		xe->e.ps += gi * cg->mg;
	if (xe->e.pt)
		xe->e.pt += gi * cg->mg;
}

/* One image and group of a Conv, by a GEMM algorithm, into y. */
static int
conv_job(const aoe_kctx *k, const conv_geom *cg, int algo, int64_t t,
    int nth, float *y)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const float *x = aoe_in(g, n, 0)->data, *addg;
	int64_t b = t / cg->group, gi = t % cg->group, j0, tile;
	int64_t K = cg->cg * cg->ksz;
	const float *xg = x + (b * cg->c + gi * cg->cg) * cg->insz;
	float *yg = y + (b * cg->m + gi * cg->mg) * cg->outsz;
	aoe_gemm_ex xe;
	packb_ctx ctx;
	conv_planes pl;
	conv_planes *plp = NULL;
	int fail = 0, trans, split, own;

	conv_gemm_of(k, cg, b, gi, y, &xe);
	addg = xe.add;
	switch (algo) {
	case ALGO_1X1:
		xe.b = xg;
		xe.ldb = cg->insz;
		if (aoe_sgemm_ex(&xe, nth, k->sched) < 0)
			return -1;
		return 0;
	case ALGO_IMPLICIT:
		/*
		 * A strided 1x1 Conv, planes at auto: the input subsampled
		 * (a quarter of it at stride 2), then the plain GEMM on it
		 * as on a pointwise Conv, against the packer gathering the
		 * strided columns itself: AMD EPYC Zen 5, bench/convb, cold,
		 * 64>128 @56 /2 0.65x the time at 1 thread, 256>512 @56 /2
		 * 0.9x at 1 and 2 threads, 512>1024 @28 /2 and 1024>2048
		 * @14 /2 even (bench/results/wino-pf-20261205.txt).  The
		 * threads share the subsampling from 8192 values: one thread
		 * doing it all left the other to read all of it from the
		 * first's cache on another CCD (in the model at 2 threads,
		 * resnet18's 64>128 @56 /2 and 128>256 @28 /2 0.85x the time
		 * of a single-thread pass below 65536 values, regnet's
		 * 32>64 @56 /2 and 64>160 @28 /2 0.85x).
		 */
		if (is_pointwise_strided(cg) &&
		    aoe_sched_get(k->sched, "planes", -1) == -1) {
			float *buf;
			/*
			 * At more than one thread, when the outputs are at
			 * least as many as the output channels (so that the
			 * GEMM would split its columns too, each thread
			 * reading all of the weights), each thread
			 * subsamples and multiplies its own positions:
			 * regnet_x_400mf at 2 threads, in the model, 32>32
			 * @112 /2, 32>64 @56 /2 and 64>160 @28 /2 0.84-0.86x
			 * the time (AMD EPYC Zen 5); resnet50's 256>512
			 * @56 /2 0.98x.
			 */
			if (nth > 1 && cg->mg <= cg->outsz &&
			    conv_split_cols(cg, k->sched, nth)) {
				int64_t cut[AOE_CUT_MAX + 1];
				struct subsplit_ctx cs = { &xe, cg, xg,
				    k->sched, cut, 0 };

				run_parts(subsplit_chunk, &cs, nth, xe.n, cut);
				return cs.fail ? -1 : 0;
			}
			buf = aoe_sgemm_tlbuf(3, (size_t)(cg->cg * cg->outsz));
			if (buf != NULL) {
				struct sub_ctx sc = { cg, xg, buf,
				    aoe_nchunks(cg->cg, cg->cg * cg->outsz >=
				    8192 ? nth : 1) };
				aoe_parallel(nth, sc.nch, sub_chunk, &sc);
				xe.b = buf;
				xe.ldb = cg->outsz;
				return aoe_sgemm_ex(&xe, nth, k->sched) < 0 ?
				    -1 : 0;
			}
		}
		ctx.g = cg;
		ctx.x = xg;
		ctx.pl = NULL;
		ctx.j0 = 0;
		ctx.fail = &fail;
		xe.packb = conv_packb;
		xe.ctx = &ctx;
		split = nth > 1 && conv_split_cols(cg, k->sched, nth);
		own = split && cg->nsp == 2 && conv_planes_on(cg, k->sched);
		if (!own && conv_planes_on(cg, k->sched)) {
			/* A buffer that cannot be had: the in-place packer. */
			float *buf = aoe_sgemm_tlbuf(3,
			    (size_t)planes_floats(cg));
			if (buf != NULL) {
				planes_fill(cg, xg, buf, nth, &pl);
				ctx.pl = &pl;
				xe.packb = conv_packb_planes;
			}
		}
		if (split) {
			int64_t cut[AOE_CUT_MAX + 1];
			struct colsplit_ctx cs = { &xe, &ctx, k->sched, cut,
			    0, own };

			run_parts(colsplit_chunk, &cs, nth, xe.n, cut);
			return cs.fail || fail ? -1 : 0;
		}
		if (aoe_sgemm_ex(&xe, nth, k->sched) < 0 || fail)
			return -1;
		return 0;
	}
	/* Explicit im2col, a tile of columns at a time. */
	trans = algo == ALGO_IM2COL_T;
	/*
	 * A pointwise Conv's column matrix is its input as it is: the
	 * GEMM turned round reads it in place.
	 */
	if (trans && is_pointwise(cg))
		return conv_job_trans(k, cg, gi, xg, cg->insz, 0, cg->outsz,
		    yg, xe.epi ? &xe.e : NULL, addg, nth);
	tile = im2col_tile(cg, K, k->sched);
	if (conv_planes_on(cg, k->sched)) {
		/* A buffer that cannot be had: im2col from the input. */
		float *buf = aoe_sgemm_tlbuf(3, (size_t)planes_floats(cg));
		if (buf != NULL) {
			planes_fill(cg, xg, buf, nth, &pl);
			plp = &pl;
		}
	}
	for (j0 = 0; j0 < cg->outsz; j0 += tile) {
		int64_t len = min64(tile, cg->outsz - j0);
		float *col = k->scratch;
		struct i2c_ctx ic = { cg, xg, col, K, j0, len, 1, plp };
		int nt = nth > 1 && K * len > 65536 ? nth : 1;

		ic.nch = aoe_nchunks(K, nt);
		aoe_parallel(nt, ic.nch, i2c_chunk, &ic);
		if (trans) {
			if (conv_job_trans(k, cg, gi, col, len, j0, len, yg,
			    xe.epi ? &xe.e : NULL, addg, nth) < 0)
				return -1;
			continue;
		}
		xe.n = len;
		xe.b = col;
		xe.ldb = len;
		xe.c = yg + j0;
		xe.add = addg ? addg + j0 : NULL;
		if (aoe_sgemm_ex(&xe, nth, k->sched) < 0)
			return -1;
	}
	return 0;
}

/* The Conv of k by algo into y (its own output, or the pool's input). */
static int
conv_compute(aoe_kctx *k, const conv_geom *cgp, int algo, float *y)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *x = aoe_in(g, n, 0)->data, *w = aoe_in(g, n, 1)->data;
	const float *bias = bt ? bt->data : NULL;
	const conv_geom cg = *cgp;
	aoe_act act;
	int64_t K, jobs, t;
	int outer, par, fail = 0;

	K = cg.cg * cg.ksz;
	if (algo == ALGO_BLOCKED) {
		const conv_priv *q = n->priv;
		aoe_c8 p;

		c8_of(g, n, &cg, &p);
		p.x = x;
		p.bias = bias;
		p.add = aoe_fused_add(g, n);
		p.y = y;
		return aoe_c8_run(&p, w, q ? q->w8 : NULL, q ? q->w8_ocb : 0,
		    k->scratch, k->nthreads, k->sched);
	}
	if (K == 0) {
		/* No input channels: the bias alone. */
		for (t = 0; t < cg.n * cg.m; t++)
			for (int64_t j = 0; j < cg.outsz; j++)
				y[t * cg.outsz + j] = bias ? bias[t % cg.m] : 0;
		aoe_act_of(n, &act);
		aoe_act_apply(&act, y, aoe_fused_add(g, n),
		    cg.n * cg.m, cg.outsz, cg.m, k->nthreads);
		return 0;
	}
	if (algo == ALGO_WINOGRAD) {
		const conv_priv *q = n->priv;
		int m = wino_m(&cg, k->sched);
		aoe_wino p;

		p.n = cg.n;
		p.c = cg.c;
		p.k = cg.m;
		p.group = cg.group;
		p.h = cg.in[1];
		p.w = cg.in[2];
		p.oh = cg.out[1];
		p.ow = cg.out[2];
		p.pt = cg.pb[1];
		p.pl = cg.pb[2];
		p.x = x;
		p.wt = w;
		p.bias = bias;
		p.y = y;
		p.add = aoe_fused_add(g, n);
		p.node = n;
		return aoe_wino_run(&p, m, q && q->wino && q->wino_m == m ?
		    q->wino : NULL, k->nthreads, k->sched);
	}
	if (algo == ALGO_GROUPED) {
		const conv_priv *q = n->priv;

		aoe_act_of(n, &act);
		if (aoe_grp_run(&cg, x, w, q ? q->wg : NULL, q ? q->wg_vw : 0,
		    q ? q->wg_nv : 0, bias, &act, aoe_fused_add(g, n), y,
		    k->scratch, k->sched, k->nthreads) < 0)
			return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
			    n->op_type, n->name);
		return 0;
	}
	if (algo == ALGO_DEPTHWISE)
		return conv_run_depthwise(k, &cg, x, w, bias, y);
	/*
	 * Threads go over images and groups when there are enough of them
	 * (each GEMM then runs on one thread), else inside each GEMM.  (No
	 * parallel region wraps the latter: a nested team would get fresh
	 * threads, and fresh buffers, on every call.)
	 */
	jobs = cg.n * cg.group;
	par = (int)aoe_sched_get(k->sched, "batch_par", -1);
	if (par >= 0)
		outer = par == 1;
	else
		outer = jobs >= k->nthreads && (jobs % k->nthreads == 0 ||
		    jobs >= 4 * k->nthreads ||
		    (double)cg.mg * K * cg.outsz < 4e6);
	if (algo == ALGO_IM2COL || algo == ALGO_IM2COL_T || k->nthreads < 2)
		outer = 0;
	if (outer) {
		struct job_ctx j = { k, &cg, algo, 0, 0, 0, y };

		aoe_parallel(k->nthreads, jobs, conv_job_chunk, &j);
		fail = j.fail;
	} else
		for (t = 0; t < jobs; t++)
			if (conv_job(k, &cg, algo, t, k->nthreads, y) < 0)
				fail = 1;
	return fail ? aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
	    n->op_type, n->name) : 0;
}

/*
 * A pointwise Conv with the depthwise Conv before it fused (fuse_dw), in
 * bands by k_dwpw.c; its workspace holds, past what its GEMM may use, the
 * depthwise output for the case where the two run apart.
 */
static int
conv_run_dwpw(aoe_kctx *k, const conv_geom *cg, float *y)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bd = aoe_in(g, n, 5);
	conv_geom dg;
	aoe_gemm_ex xe;
	aoe_act da;
	float *mid;
	int rc;

	if ((rc = dw_geom_of(g, n, &dg)) < 0)
		return rc;
	conv_gemm_of(k, cg, 0, 0, y, &xe);
	dw_act_of(n, &da);
	mid = (float *)((char *)k->scratch + conv_algo_scratch(g, n, cg));
	if (aoe_dwpw_run(&dg, aoe_in(g, n, 0)->data, aoe_in(g, n, 4)->data,
	    bd ? bd->data : NULL, &da, &xe, y, mid, k->nthreads,
	    k->sched) < 0)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	return 0;
}

static int
conv_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	float *y = aoe_out(g, n, 0)->data;
	conv_geom cg;
	aoe_pool2 pl;
	aoe_act act;
	int rc, algo, pooled;

	if ((rc = conv_geom_of(g, n, 0, &cg)) < 0)
		return rc;
	if (cg.n == 0 || cg.m == 0 || cg.outsz == 0)
		return 0;
	if (aoe_attr_find(n, "_aoe_dw") != NULL)
		return conv_run_dwpw(k, &cg, y);
	algo = conv_algo_of(g, n, &cg, k->sched);
	if ((pooled = conv_pool_of(n, &cg, &pl)) < 0)
		return pooled;
	if (!pooled)
		return conv_compute(k, &cg, algo, y);
	aoe_act_of(n, &act);
	if (algo == ALGO_GROUPED && aoe_grp_pool_ok(&cg, &act,
	    aoe_fused_add(g, n))) {
		const conv_priv *q = n->priv;
		return aoe_grp_run_pool(&cg, &pl, aoe_in(g, n, 0)->data,
		    aoe_in(g, n, 1)->data, q ? q->wg : NULL, q ? q->wg_vw : 0,
		    q ? q->wg_nv : 0, bt ? bt->data : NULL, &act, y,
		    k->scratch, k->sched, k->nthreads);
	}
	/*
	 * Any other way: the Conv's output into the workspace, past what
	 * its algorithm uses there, then the pool.
	 */
	{
		float *yc = (float *)((char *)k->scratch +
		    conv_algo_scratch(g, n, &cg));
		if ((rc = conv_compute(k, &cg, algo, yc)) < 0)
			return rc;
		return aoe_maxpool2d(&pl, yc, cg.n * cg.m, cg.out[1],
		    cg.out[2], y, n, k->nthreads);
	}
}

/*
 * ConvTranspose.  Per image and group, the columns C (mg*ksz x insz) =
 * W[g]^T X[g]; col2im then adds each column entry into the output
 * position it maps to.  Columns are made a tile of input positions at a
 * time in the workspace.
 */
static int
convt_infer(aoe_graph *g, aoe_node *n)
{
	conv_geom cg;
	int64_t rows;
	int rc;

	if (n->nin < 2 || n->nin > 3 || n->nout != 1)
		return aoe_err(AOE_EDATA, "%s '%s': expects 2 or 3 inputs and "
		    "1 output", n->op_type, n->name);
	if ((rc = conv_geom_of(g, n, 1, &cg)) < 0)
		return rc;
	rows = cg.mg * cg.ksz;
	n->scratch = (size_t)(rows * max64(1, min64(cg.insz,
	    max64(16, TILE_FLOATS / max64(rows, 1))))) * sizeof(float);
	return conv_set_output(g, n, &cg);
}

static int
convt_prepare(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *w = aoe_in(g, n, 1);
	conv_geom cg;
	conv_priv *q;
	int64_t rows, gi;
	int rc;

	aoe_node_unprepare(n);
	if ((rc = conv_geom_of(g, n, 1, &cg)) < 0)
		return rc;
	rows = cg.mg * cg.ksz;
	if (w->kind != AOE_T_CONST || w->data == NULL || rows < 2 ||
	    cg.cg < 1 || aoe_sched_get(&n->sched, "prepack", 1) == 0)
		return 0;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return aoe_err(AOE_ENOMEM, "out of memory");
	n->priv = q;
	n->priv_free = conv_priv_free;
	q->wstride = aoe_sgemm_packed_size(0, rows, cg.cg, &n->sched);
	q->wstride = (q->wstride + 15) & ~(size_t)15;
	q->wpack = aligned_alloc(64, q->wstride * cg.group * sizeof(float));
	if (q->wpack == NULL)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	/* A = W[g]^T: W[g] is cg x rows, row-major. */
	for (gi = 0; gi < cg.group; gi++)
		aoe_sgemm_pack(0, 1, rows, cg.cg, (const float *)w->data +
		    gi * cg.cg * rows, rows, q->wpack + gi * q->wstride,
		    &n->sched);
	q->id = aoe_sgemm_pack_id(0, &n->sched);
	return 0;
}

static void
convt_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "batch_par", -1);
	aoe_sgemm_default_sched(s);
}

/*
 * col2im for one output channel: add the rows of col (ksz rows of len
 * input positions from j0, row stride len) into the output plane y.
 */
static void
col2im_plane(const conv_geom *g, const float *col, int64_t len, int64_t j0,
    float *y)
{
	int64_t I1 = g->in[1], I2 = g->in[2];
	int64_t O0 = g->out[0], O1 = g->out[1], O2 = g->out[2];
	int64_t sw = g->s[2], r;

	for (r = 0; r < g->ksz; r++, col += len) {
		int64_t kd = r / (g->k[1] * g->k[2]), kh = r / g->k[2] %
		    g->k[1], kw = r % g->k[2];
		int64_t offw = kw * g->d[2] - g->pb[2];
		int64_t id = j0 / (I1 * I2), ih = j0 / I2 % I1, iw = j0 % I2;
		int64_t rem = len;
		const float *cp = col;

		while (rem > 0) {
			int64_t seg = min64(rem, I2 - iw);
			int64_t od = id * g->s[0] - g->pb[0] + kd * g->d[0];
			int64_t oh = ih * g->s[1] - g->pb[1] + kh * g->d[1];
			if (od >= 0 && od < O0 && oh >= 0 && oh < O1) {
				float *restrict yr = y + (od * O1 + oh) * O2;
				int64_t ow0 = iw * sw + offw, t;
				int64_t lo = ow0 >= 0 ? 0 : ceildiv(-ow0, sw);
				int64_t hi = floordiv(O2 - 1 - ow0, sw) + 1;
				lo = min64(lo, seg);
				hi = max64(min64(hi, seg), lo);
				if (sw == 1)
					for (t = lo; t < hi; t++)
						yr[ow0 + t] += cp[t];
				else
					for (t = lo; t < hi; t++)
						yr[ow0 + t * sw] += cp[t];
			}
			cp += seg;
			rem -= seg;
			iw = 0;
			if (++ih == I1) {
				ih = 0;
				id++;
			}
		}
	}
}

/*
 * One image and group of a ConvTranspose, tile columns at a time through
 * col (rows x tile floats), on nth threads.
 */
/* One output channel of a col2im. */
struct c2i_ctx {
	const conv_geom *cg;
	const float *col;
	float *yg;
	int64_t len, j0;
};

static void
c2i_chunk(void *arg, int64_t mo, int tid)
{
	const struct c2i_ctx *c = arg;

	col2im_plane(c->cg, c->col + mo * c->cg->ksz * c->len, c->len, c->j0,
	    c->yg + mo * c->cg->outsz);
}

static int
convt_job(const aoe_kctx *k, const conv_geom *cg, int64_t t, int64_t tile,
    float *col, int nth)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const float *x = aoe_in(g, n, 0)->data, *w = aoe_in(g, n, 1)->data;
	float *y = aoe_out(g, n, 0)->data;
	const conv_priv *q = n->priv;
	int64_t b = t / cg->group, gi = t % cg->group, j0;
	int64_t rows = cg->mg * cg->ksz;
	const float *xg = x + (b * cg->c + gi * cg->cg) * cg->insz;
	float *yg = y + (b * cg->m + gi * cg->mg) * cg->outsz;
	aoe_gemm_ex xe;

	memset(&xe, 0, sizeof(xe));
	xe.transa = 1;
	xe.m = rows;
	xe.k = cg->cg;
	xe.alpha = 1;
	xe.beta = 0;
	xe.a = w + gi * cg->cg * rows;
	xe.lda = rows;
	xe.apack = q && q->wpack ? q->wpack + gi * q->wstride : NULL;
	xe.apack_id = q ? q->id : 0;
	xe.ldb = cg->insz;
	xe.c = col;
	for (j0 = 0; j0 < cg->insz; j0 += tile) {
		int64_t len = min64(tile, cg->insz - j0);

		xe.n = len;
		xe.b = xg + j0;
		xe.ldc = len;
		if (aoe_sgemm_ex(&xe, nth, k->sched) < 0)
			return -1;
		{
			struct c2i_ctx cc = { cg, col, yg, len, j0 };

			aoe_parallel(nth > 1 && rows * len > 32768 ? nth : 1,
			    cg->mg, c2i_chunk, &cc);
		}
	}
	return 0;
}

static void
convt_job_chunk(void *arg, int64_t t, int tid)
{
	struct job_ctx *j = arg;
	float *col = aoe_sgemm_tlbuf(2, (size_t)j->colsz);

	if (col == NULL || convt_job(j->k, j->cg, t, j->tile, col, 1) < 0)
		__atomic_store_n(&j->fail, 1, __ATOMIC_RELAXED);
}

static int
convt_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *bias = bt ? bt->data : NULL;
	float *y = aoe_out(g, n, 0)->data;
	conv_geom cg;
	int64_t rows, tile, t, cap, jobs;
	int rc, par, outer, fail = 0;

	if ((rc = conv_geom_of(g, n, 1, &cg)) < 0)
		return rc;
	if (cg.n == 0 || cg.m == 0 || cg.outsz == 0)
		return 0;
	/* The output starts as the bias (serially: it is a plain fill). */
	for (t = 0; t < cg.n * cg.m; t++) {
		float bv = bias ? bias[t % cg.m] : 0;
		for (int64_t j = 0; j < cg.outsz; j++)
			y[t * cg.outsz + j] = bv;
	}
	rows = cg.mg * cg.ksz;
	if (cg.cg == 0 || cg.insz == 0 || rows == 0)
		return 0;
	cap = max64(16, TILE_FLOATS / rows);
	tile = aoe_sched_get(k->sched, "tile", 0);
	if (tile <= 0)
		tile = cap;
	tile = max64(1, min64(min64(tile, cap), cg.insz));
	/*
	 * As for Conv: threads over images and groups (each with its own
	 * column buffer) when there are enough, else inside each job.
	 */
	jobs = cg.n * cg.group;
	par = (int)aoe_sched_get(k->sched, "batch_par", -1);
	if (par >= 0)
		outer = par == 1;
	else
		outer = jobs >= k->nthreads && (jobs % k->nthreads == 0 ||
		    jobs >= 4 * k->nthreads ||
		    (double)rows * cg.cg * cg.insz < 4e6);
	if (k->nthreads < 2)
		outer = 0;
	if (!outer) {
		for (t = 0; t < jobs; t++)
			if (convt_job(k, &cg, t, tile, k->scratch,
			    k->nthreads) < 0)
				fail = 1;
	} else {
		struct job_ctx j = { k, &cg, 0, tile, rows * tile, 0, NULL };

		aoe_parallel(k->nthreads, jobs, convt_job_chunk, &j);
		fail = j.fail;
	}
	return fail ? aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
	    n->op_type, n->name) : 0;
}

const aoe_op aoe_ops_conv[] = {
	{ "Conv", conv_infer, conv_run, conv_prepare, conv_default_sched },
	{ "ConvTranspose", convt_infer, convt_run, convt_prepare,
	    convt_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};

/*
 * The search space (see aoe_space_for() in space.c): the algorithm, the
 * parallel split, the im2col or col2im tile, weight prepacking and the
 * GEMM's blocking.  fact[0] is 1 for the depthwise algorithm's node
 * (whose other knobs are then unused and held at their defaults).
 */
/*
 * Whether s holds each of the n knobs named in unread (those of the
 * space) at its default, since the algorithm named algo reads none.
 */
static int
keeps_defaults(const aoe_space *sp, const aoe_sched *s,
    const char *const *unread, size_t n, const char *algo, char *why,
    size_t len)
{
	size_t j;
	int i;

	for (i = 0; i < sp->nknobs; i++)
		for (j = 0; j < n; j++)
			if (strcmp(sp->knobs[i].name, unread[j]) == 0 &&
			    aoe_sched_get(s, unread[j], sp->knobs[i].def) !=
			    sp->knobs[i].def) {
				snprintf(why, len, "%s reads no '%s': it must "
				    "keep its default", algo, unread[j]);
				return -1;
			}
	return 0;
}

static int
conv_check(const aoe_space *sp, const aoe_sched *s, char *why, size_t len)
{
	int64_t algo = aoe_sched_get(s, "algo", ALGO_AUTO);
	int i;

	if (sp->fact[1] == 0 && algo != ALGO_WINOGRAD &&
	    (aoe_sched_get(s, "wino_m", 0) != sp->fact[3] ||
	    aoe_sched_get(s, "wino_tb", 0) != 0 ||
	    aoe_sched_get(s, "wino_kb", 0) != 0 ||
	    aoe_sched_get(s, "wino_pf", -1) != -1)) {
		snprintf(why, len, "wino_m, wino_tb, wino_kb and wino_pf apply "
		    "to algo=5 (winograd) only");
		return -1;
	}
	if (algo != ALGO_AUTO && algo != ALGO_IM2COL_T &&
	    aoe_sched_get(s, "packa", -1) != -1) {
		snprintf(why, len, "packa applies to algo=6 (Y^T, A the "
		    "transposed columns) only");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_space_c8_check(sp, s, (int)algo,
	    (int)sp->fact[4], why, len) < 0)
		return -1;
	if (sp->fact[1] == 0 && aoe_space_grp_check(s, (int)algo, why,
	    len) < 0)
		return -1;
	if (algo == ALGO_GROUPED) {
		static const char *const unread[] = { "mr", "nr", "mc", "kc",
		    "nc", "par", "packb", "apf", "tile", "planes",
		    "batch_par" };
		if (!sp->fact[6]) {
			snprintf(why, len, "algo=8 (grouped) needs a 2-D Conv "
			    "whose output channels a group are a multiple of "
			    "8, or of one group of at most 4 input channels; "
			    "column stride 1 or 2");
			return -1;
		}
		return keeps_defaults(sp, s, unread, sizeof(unread) /
		    sizeof(unread[0]), "algo=8 (grouped)", why, len);
	}
	if (algo == ALGO_BLOCKED) {
		static const char *const unread[] = { "mr", "nr", "mc", "kc",
		    "nc", "par", "packb", "apf", "cpf", "tile", "planes",
		    "batch_par", "prepack" };
		return keeps_defaults(sp, s, unread, sizeof(unread) /
		    sizeof(unread[0]), "algo=7 (blocked)", why, len);
	}
	if (algo == ALGO_WINOGRAD) {
		static const char *const unread[] = { "mr", "nr", "mc", "kc",
		    "nc", "par", "packb", "apf", "tile", "planes" };
		if (!sp->fact[2]) {
			snprintf(why, len, "algo=5 (winograd) needs a 2-D 3x3 "
			    "kernel with unit strides and dilations");
			return -1;
		}
		return keeps_defaults(sp, s, unread, sizeof(unread) /
		    sizeof(unread[0]), "algo=5 (winograd)", why, len);
	}
	if (sp->fact[1] == 0 && algo != ALGO_DEPTHWISE &&
	    (algo != ALGO_AUTO || !sp->fact[0]) &&
	    (aoe_sched_get(s, "dw_rows", -1) != -1 ||
	    aoe_sched_get(s, "dw_vec", 0) != 0 ||
	    aoe_sched_get(s, "dw_oh", 0) != 0 ||
	    aoe_sched_get(s, "dw_ow", 0) != 0 ||
	    aoe_sched_get(s, "dw_nt", -1) != -1)) {
		snprintf(why, len, "dw_rows, dw_vec, dw_oh, dw_ow and dw_nt "
		    "apply to algo=4 (depthwise) only");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_sched_get(s, "dw_rows", -1) != 1 &&
	    aoe_sched_get(s, "dw_rows", -1) != 2 &&
	    aoe_sched_get(s, "dw_rows", -1) != 3 &&
	    aoe_sched_get(s, "dw_rows", -1) != 4 &&
	    aoe_sched_get(s, "dw_rows", -1) != 5 &&
	    aoe_sched_get(s, "dw_vec", 0) != 0) {
		snprintf(why, len, "dw_vec applies to dw_rows=1 to 5 only");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_sched_get(s, "dw_rows", -1) != 2 &&
	    (aoe_sched_get(s, "dw_oh", 0) != 0 ||
	    aoe_sched_get(s, "dw_ow", 0) != 0)) {
		snprintf(why, len, "dw_oh and dw_ow apply to dw_rows=2 only");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_sched_get(s, "dw_nt", -1) != -1 &&
	    (aoe_sched_get(s, "dw_rows", -1) == 1 ||
	    aoe_sched_get(s, "dw_rows", -1) == 3)) {
		snprintf(why, len, "dw_nt applies to dw_rows=-1, 0, 2, 4 and "
		    "5 only");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_sched_get(s, "dw_rows", -1) == 2 &&
	    !(sp->fact[5] & 1)) {
		snprintf(why, len, "dw_rows=2 needs a 3x3 or 5x5 depthwise "
		    "kernel, strides 1,1 or 2,2, unit dilations, pads below "
		    "the kernel");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_sched_get(s, "dw_rows", -1) == 3 &&
	    !(sp->fact[5] & 2)) {
		snprintf(why, len, "dw_rows=3 needs a depthwise kernel up to "
		    "7x7, strides 1,1 or 2,2, unit dilations");
		return -1;
	}
	if (sp->fact[1] == 0 && aoe_sched_get(s, "dw_rows", -1) == 5 &&
	    !(sp->fact[5] & 4)) {
		snprintf(why, len, "dw_rows=5 needs a 3x3 or 5x5 depthwise "
		    "kernel, strides 2,2, unit dilations, a left pad of 0 or "
		    "half the kernel");
		return -1;
	}
	if (algo == ALGO_DEPTHWISE) {
		for (i = 0; i < sp->nknobs; i++)
			if (strcmp(sp->knobs[i].name, "algo") != 0 &&
			    strcmp(sp->knobs[i].name, "dw_rows") != 0 &&
			    strcmp(sp->knobs[i].name, "dw_vec") != 0 &&
			    strcmp(sp->knobs[i].name, "dw_oh") != 0 &&
			    strcmp(sp->knobs[i].name, "dw_ow") != 0 &&
			    strcmp(sp->knobs[i].name, "dw_nt") != 0 &&
			    aoe_sched_get(s, sp->knobs[i].name,
			    sp->knobs[i].def) != sp->knobs[i].def) {
				snprintf(why, len, "algo=4 (depthwise) reads "
				    "no '%s': it must keep its default",
				    sp->knobs[i].name);
				return -1;
			}
		return 0;
	}
	if (aoe_space_gemm_check(sp, s, why, len) < 0)
		return -1;
	if (sp->fact[1] == 0 && algo != ALGO_IM2COL &&
	    algo != ALGO_IM2COL_T && aoe_sched_get(s, "tile", 0) != 0) {
		snprintf(why, len, "tile applies to algo=3 and 6 (explicit "
		    "im2col) only");
		return -1;
	}
	/* Algo 6 reads a pointwise Conv's input in place: no tiles. */
	if (sp->fact[1] == 0 && sp->fact[7] && algo == ALGO_IM2COL_T &&
	    aoe_sched_get(s, "tile", 0) != 0) {
		snprintf(why, len, "algo=6 reads a pointwise Conv's input in "
		    "place: tile must be 0");
		return -1;
	}
	if (sp->fact[1] == 0 && (algo == ALGO_IM2COL ||
	    algo == ALGO_IM2COL_T) &&
	    aoe_sched_get(s, "batch_par", -1) != -1) {
		snprintf(why, len, "algo=3 and 6 run images one at a time: "
		    "batch_par must be -1");
		return -1;
	}
	if (sp->fact[1] == 0 && algo != ALGO_IMPLICIT &&
	    algo != ALGO_IM2COL && algo != ALGO_IM2COL_T &&
	    aoe_sched_get(s, "planes", -1) != -1) {
		snprintf(why, len, "planes applies to algo=2, 3 and 6 (im2col) "
		    "only");
		return -1;
	}
	if (sp->fact[1] == 0 && algo == ALGO_IMPLICIT &&
	    aoe_sched_get(s, "packb", -1) != -1) {
		snprintf(why, len, "algo=2 packs B itself: packb must be -1");
		return -1;
	}
	return 0;
}

int
aoe_space_conv(aoe_space *sp)
{
	static const int64_t onoff[] = { 0, 1 }, bpar[] = { -1, 0, 1 };
	static const int64_t planes[] = { -1, 0, 1 };
	static const int64_t tiles[] = { 256, 1024, 4096, 16384, 65536 };
	const aoe_node *n = sp->n;
	const aoe_tensor *w = aoe_in(sp->g, n, 1);
	int64_t algos[8], tv[8], m, nn, kk, ext, kc;
	int convt = strcmp(n->op_type, "ConvTranspose") == 0;
	int na = 0, nt = 0, rc, cw, i;
	conv_geom cg;

	if ((rc = conv_geom_of(sp->g, n, convt, &cg)) < 0)
		return rc;
	if (convt) {
		m = cg.mg * cg.ksz;
		nn = cg.insz;
		kk = cg.cg;
	} else {
		m = cg.mg;
		nn = cg.outsz;
		kk = cg.cg * cg.ksz;
		if (is_pointwise(&cg))
			algos[na++] = ALGO_1X1;
		algos[na++] = ALGO_IMPLICIT;
		algos[na++] = ALGO_IM2COL;
		algos[na++] = ALGO_IM2COL_T;
		if (cg.cg == 1)
			algos[na++] = ALGO_DEPTHWISE;
		if (is_wino(&cg))
			algos[na++] = ALGO_WINOGRAD;
		if (blocked_ok(&cg))
			algos[na++] = ALGO_BLOCKED;
		if (aoe_grp_ok(&cg))
			algos[na++] = ALGO_GROUPED;
		if (aoe_space_add(sp, "algo", na, algos, "1 direct GEMM (1x1), "
		    "2 implicit im2col, 3 explicit im2col, 4 depthwise, "
		    "5 winograd, 6 explicit im2col, Y^T = col^T W^T, "
		    "7 direct in NCHW8c (blocked), 8 direct grouped") < 0)
			return -AOE_EINTERNAL;
		sp->fact[0] = conv_default_algo(&cg) == ALGO_DEPTHWISE;
	}
	if (aoe_space_add(sp, "batch_par", 3, bpar, "-1 auto, 1 threads "
	    "over images and groups, 0 threads inside each GEMM") < 0)
		return -AOE_EINTERNAL;
	if ((rc = aoe_space_gemm_knobs(sp, m, nn, kk)) < 0 ||
	    (rc = aoe_space_gemm_packa(sp, !convt && nn > 1 && m > 1)) < 0)
		return rc;
	if (!convt && conv_default_algo(&cg) == ALGO_1X1 && nn > 1 &&
	    m > 1) {
		/* A pointwise Conv's own default shape (pw_shape). */
		aoe_knob *kmr = aoe_space_knob(sp, "mr");
		aoe_knob *knr = aoe_space_knob(sp, "nr");
		int64_t mr, nr;

		pw_shape(&cg, &mr, &nr);
		if (kmr != NULL)
			kmr->def = mr;
		if (knr != NULL)
			knr->def = nr;
	}
	if (!convt && (kc = pw_kc(&cg)) > 0) {
		aoe_knob *kkc = aoe_space_knob(sp, "kc");

		if (kkc != NULL)
			kkc->def = kc;
	}
	cw = w != NULL && w->kind == AOE_T_CONST && (convt ? m : cg.mg) >= 2;
	if (aoe_space_add(sp, "prepack", cw ? 2 : 1, cw ? onoff : onoff + 1,
	    "pack constant weights once, in prepare") < 0)
		return -AOE_EINTERNAL;
	AOE_SPACE_DEF(sp, 1);
	ext = convt ? cg.insz : cg.outsz;
	tv[nt++] = 0;
	for (i = 0; i < 5; i++) {
		tv[nt++] = tiles[i];
		if (tiles[i] >= ext)
			break;
	}
	if (aoe_space_add(sp, "tile", nt, tv, convt ? "input positions per "
	    "col2im tile (0: largest that fits)" : "output positions per "
	    "im2col tile, algo=3 (0: largest that fits)") < 0)
		return -AOE_EINTERNAL;
	if (!convt) {
		if (aoe_space_add(sp, "planes", 3, planes, "algo=2 packs from "
		    "a padded copy of the input split into stride phases: "
		    "-1 auto, 0 no (reads it in place), 1 yes") < 0)
			return -AOE_EINTERNAL;
		AOE_SPACE_DEF(sp, -1);
		sp->fact[2] = is_wino(&cg);
		sp->fact[3] = wino_default_m(&cg);
		if ((rc = aoe_space_wino(sp, (int)sp->fact[2],
		    (int)sp->fact[3], cg.mg, cg.out[1], cg.out[2])) < 0)
			return rc;
		/*
		 * Bit 0: dw_rows=2 applies, bit 1: dw_rows=3 does, bit 2:
		 * dw_rows=5 does.
		 */
		sp->fact[5] = (cg.cg == 1 && aoe_dw_reg_ok(&cg)) |
		    (cg.cg == 1 && aoe_dw_flat_ok(&cg)) << 1 |
		    (cg.cg == 1 && aoe_dw_phase_ok(&cg)) << 2;
		if ((rc = aoe_space_dw(sp, cg.cg == 1 &&
		    aoe_dw_rows_ok(&cg), (int)(sp->fact[5] & 1),
		    (int)(sp->fact[5] >> 1 & 1),
		    (int)(sp->fact[5] >> 2 & 1))) < 0)
			return rc;
		if (blocked_ok(&cg)) {
			aoe_c8 p;
			c8_of(sp->g, n, &cg, &p);
			sp->fact[4] = aoe_c8_kind(cg.c, cg.m, cg.group);
			if ((rc = aoe_space_c8(sp, &p, (int)sp->fact[4])) < 0)
				return rc;
		} else if ((rc = aoe_space_c8(sp, NULL, 0)) < 0)
			return rc;
		sp->fact[6] = aoe_grp_ok(&cg);
		sp->fact[7] = is_pointwise(&cg);
		if ((rc = aoe_space_grp(sp, (int)sp->fact[6], &cg)) < 0)
			return rc;
	}
	sp->fact[1] = convt;
	sp->check = conv_check;
	sp->constraints = convt ? "(mr,nr) a micro-kernel shape of this CPU "
	    "(see mr); mc % mr == 0; nc % nr == 0" : "(mr,nr) a micro-kernel "
	    "shape of this CPU (see mr); mc % mr == 0; nc % nr == 0; "
	    "algo=4 holds every other knob at its default but dw_rows, "
	    "dw_vec, dw_oh, dw_ow and dw_nt, which apply to algo=4 only; "
	    "dw_vec 0 unless dw_rows=1 to 5; dw_oh and dw_ow 0 unless "
	    "dw_rows=2; dw_nt -1 unless dw_rows=-1, 0, 2, 4 or 5; "
	    "dw_rows=2 only for 3x3 and 5x5 depthwise kernels with strides "
	    "1,1 or 2,2, unit dilations and pads below the kernel; "
	    "dw_rows=3 only for depthwise kernels up to 7x7 with strides "
	    "1,1 or 2,2 and unit dilations; "
	    "dw_rows=5 only for 3x3 and 5x5 depthwise kernels with strides "
	    "2,2, unit dilations and a left pad of 0 or half the kernel; "
	    "tile != 0 only with algo=3 or 6; batch_par == -1 with algo=3 "
	    "or 6; "
	    "packb == -1 with algo=2; planes == -1 unless algo=2; "
	    "algo=5 only for 2-D 3x3 kernels "
	    "with unit strides and dilations, holding mr nr mc kc nc par "
	    "packb apf tile planes at their defaults; wino_m, wino_tb, wino_kb, "
	    "wino_pf "
	    "at their defaults unless algo=5; "
	    "algo=7 only for 2-D Convs with group 1, depthwise groups or "
	    "groups of multiples of 8 channels in and out, holding mr nr mc "
	    "kc nc par packb apf cpf tile planes batch_par prepack at their "
	    "defaults; ur_w oc_blk ic_blk oh_blk x8c at 0 unless algo=7; "
	    "ur_w * oc_blk <= 14 (oc_blk 0 counting as 4); "
	    "algo=8 only for 2-D Convs with output channels a group a "
	    "multiple of 8, or of one group of at most 4 input channels, "
	    "and column strides 1 or 2, "
	    "holding mr nr mc kc nc par packb apf tile planes batch_par at "
	    "their defaults; grp_vec grp_nv grp_oh grp_ow grp_rows "
	    "grp_lanes grp_form at 0 unless algo=8; grp_oh * grp_ow within the "
	    "tile's registers (see grp_ow)";
	return 0;
}
