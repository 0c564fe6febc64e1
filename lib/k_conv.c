/*
 * k_conv.c - Conv and ConvTranspose (1-D, 2-D and 3-D, NCHW).
 *
 * Conv picks an algorithm by the knob "algo" (0 or absent: the default
 * heuristic):
 *
 *	1  direct GEMM, for 1x1 kernels with unit strides and no padding:
 *	   Y[g] = W[g] X[g] on the NCHW planes as they are
 *	2  implicit im2col: the GEMM's B packer reads the input image
 *	   directly, so no column matrix is ever stored
 *	3  explicit im2col into the workspace, tiled to bound its size,
 *	   then GEMM
 *	4  direct depthwise loop (one input channel per group)
 *
 * ConvTranspose is a GEMM (W^T X, column-tiled) followed by col2im.
 * Weights that are constants are packed for the GEMM once, in prepare.
 * Other knobs: "batch_par" (-1 auto, 1 threads over images and groups,
 * 0 threads inside each GEMM), "tile" (columns per im2col or col2im
 * tile) and the GEMM's own (mr, nr, mc, kc, nc, par, packb).
 */
#include <immintrin.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"

/*
 * The extended GEMM of k_gemm.c (this declaration repeats the one there;
 * keep the two in step).
 */
typedef struct aoe_gemm_ex aoe_gemm_ex;
typedef void (*aoe_packb_fn)(const aoe_gemm_ex *x, int64_t p0, int64_t kc,
    int64_t j0, int64_t nc, int nr, float *dst);
struct aoe_gemm_ex {
	int transa, transb;
	int64_t m, n, k;
	float alpha, beta;
	const float *a;
	int64_t lda;
	const float *b;
	int64_t ldb;
	float *c;
	int64_t ldc;
	const float *bias;
	aoe_packb_fn packb;
	const void *ctx;
	const float *apack;
	const float *bpack;
};
int aoe_sgemm_ex(const aoe_gemm_ex *x, int nthreads, const aoe_sched *s);
size_t aoe_sgemm_packed_size(int which, int64_t rows, int64_t k,
    const aoe_sched *s);
void aoe_sgemm_pack(int which, int trans, int64_t rows, int64_t k,
    const float *src, int64_t ld, float *dst, const aoe_sched *s);
float *aoe_sgemm_tlbuf(int which, size_t nfloats);

enum { ALGO_AUTO, ALGO_1X1, ALGO_IMPLICIT, ALGO_IM2COL, ALGO_DEPTHWISE };

/* Workspace bound for an im2col or col2im tile, in floats. */
#define TILE_FLOATS ((int64_t)1 << 21)

/*
 * The geometry of a convolution, with the spatial dimensions always
 * three (leading ones filled with 1) so that one code path serves 1-D,
 * 2-D and 3-D.  For ConvTranspose "in" is X's spatial shape and "out"
 * Y's, as for Conv; the GEMM then maps the other way.
 */
typedef struct conv_geom {
	int nsp;			/* spatial rank, 1..3 */
	int64_t n, c, m, group, cg, mg;	/* images, channels in/out */
	int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
	int64_t insz, outsz, ksz;
} conv_geom;

static int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

/* Floor division for a possibly negative numerator (b > 0). */
static int64_t
floordiv(int64_t a, int64_t b)
{
	return a >= 0 ? a / b : -((-a + b - 1) / b);
}

static int64_t
ceildiv(int64_t a, int64_t b)
{
	return -floordiv(-a, b);
}

/*
 * Read a per-axis INTS attribute of length want into out (shifted to the
 * last positions of 3), or fill it with def.
 */
static int
axis_ints(const aoe_node *n, const char *name, int nsp, int want,
    int64_t def, int64_t *out, int *given)
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
	(void)nsp;
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
	const aoe_tensor *x = aoe_in(g, n, 0), *w = aoe_in(g, n, 1);
	const aoe_tensor *b = aoe_in(g, n, 2);
	const char *ap;
	int64_t ks[3], st[3], dl[3], pads[6], op[3], os[AOE_MAXDIM];
	int nsp, i, j, given, pads_given, os_given, rc, cnt;
	const int64_t *osv;

	memset(cg, 0, sizeof(*cg));
	if (x == NULL || w == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': inputs X and W are "
		    "required", n->op_type, n->name);
	for (i = 0; i < 3 && i < n->nin; i++) {
		const aoe_tensor *t = aoe_in(g, n, i);
		if (t != NULL && t->dtype != AOE_F32)
			return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' of "
			    "type %s not supported (float32 only)",
			    n->op_type, n->name, t->name,
			    aoe_dtype_name(t->dtype));
	}
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

	if ((rc = axis_ints(n, "kernel_shape", nsp, nsp, 0, ks, &given)) < 0)
		return rc;
	for (i = 0; i < nsp; i++) {
		if (given && ks[i] != w->dims[2 + i])
			return aoe_err(AOE_EDATA, "%s '%s': kernel_shape "
			    "does not match W", n->op_type, n->name);
		ks[i] = w->dims[2 + i];
	}
	if ((rc = axis_ints(n, "strides", nsp, nsp, 1, st, &given)) < 0 ||
	    (rc = axis_ints(n, "dilations", nsp, nsp, 1, dl, &given)) < 0 ||
	    (rc = axis_ints(n, "pads", nsp, 2 * nsp, 0, pads,
	    &pads_given)) < 0 ||
	    (rc = axis_ints(n, "output_padding", nsp, nsp, 0, op,
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
			if (os_given || (same && !pads_given)) {
				o = os_given ? os[i] : in * st[i];
				if (!pads_given || same) {
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
typedef struct packb_ctx {
	const conv_geom *g;
	const float *x;		/* the group's first input channel */
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
		/* Out of memory: the GEMM's result is garbage, not a crash. */
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

	mem = (char *)aoe_sgemm_tlbuf(2, (size_t)(kc * 3 + ksz * 4 + 16));
	if (nr % 8 || nr > 24 || mem == NULL ||
	    g->c * g->insz > INT32_MAX / 2 ||
	    g->in[0] + g->out[0] * g->s[0] + g->k[0] * g->d[0] > INT32_MAX / 4 ||
	    g->in[1] + g->out[1] * g->s[1] + g->k[1] * g->d[1] > INT32_MAX / 4 ||
	    g->in[2] + g->out[2] * g->s[2] + g->k[2] * g->d[2] > INT32_MAX / 4) {
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

/* Prepared state: the algorithm and the weights packed per group. */
typedef struct conv_priv {
	int algo;
	float *wpack;		/* group g at wpack + g*wstride, or NULL */
	size_t wstride;
} conv_priv;

static void
conv_priv_free(void *p)
{
	conv_priv *q = p;

	if (q != NULL)
		free(q->wpack);
	free(q);
}

/* The default algorithm for a Conv. */
static int
conv_default_algo(const conv_geom *g)
{
	if (g->cg == 1 && g->mg <= 4)
		return ALGO_DEPTHWISE;
	if (g->ksz == 1 && g->s[0] == 1 && g->s[1] == 1 && g->s[2] == 1 &&
	    g->pb[0] == 0 && g->pb[1] == 0 && g->pb[2] == 0 &&
	    g->pe[0] == 0 && g->pe[1] == 0 && g->pe[2] == 0)
		return ALGO_1X1;
	return ALGO_IMPLICIT;
}

static int
conv_algo(const conv_geom *g, const aoe_sched *s)
{
	int algo = (int)aoe_sched_get(s, "algo", ALGO_AUTO);

	if (algo == ALGO_1X1 && conv_default_algo(g) != ALGO_1X1 &&
	    !(g->ksz == 1 && g->s[0] * g->s[1] * g->s[2] == 1 &&
	    g->pb[0] + g->pb[1] + g->pb[2] + g->pe[0] + g->pe[1] +
	    g->pe[2] == 0))
		algo = ALGO_AUTO;
	if (algo == ALGO_DEPTHWISE && g->cg != 1)
		algo = ALGO_AUTO;
	if (algo < ALGO_1X1 || algo > ALGO_DEPTHWISE)
		algo = conv_default_algo(g);
	return algo;
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

static int
conv_infer(aoe_graph *g, aoe_node *n)
{
	conv_geom cg;
	int64_t K;
	int rc;

	if (n->nin < 2 || n->nin > 3 || n->nout != 1)
		return aoe_err(AOE_EDATA, "%s '%s': expects 2 or 3 inputs and "
		    "1 output", n->op_type, n->name);
	if ((rc = conv_geom_of(g, n, 0, &cg)) < 0)
		return rc;
	/* Room for the largest im2col tile, should the schedule ask. */
	K = cg.cg * cg.ksz;
	n->scratch = (size_t)(K * max64(1, min64(cg.outsz,
	    max64(16, TILE_FLOATS / max64(K, 1))))) * sizeof(float);
	return conv_set_output(g, n, &cg);
}

static int
conv_prepare(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *w = aoe_in(g, n, 1);
	conv_geom cg;
	conv_priv *q;
	int64_t K, gi;
	int rc;

	if (n->priv_free)
		n->priv_free(n->priv);
	n->priv = NULL;
	n->priv_free = NULL;
	if ((rc = conv_geom_of(g, n, 0, &cg)) < 0)
		return rc;
	if ((q = calloc(1, sizeof(*q))) == NULL)
		return aoe_err(AOE_ENOMEM, "out of memory");
	q->algo = conv_algo(&cg, &n->sched);
	n->priv = q;
	n->priv_free = conv_priv_free;
	K = cg.cg * cg.ksz;
	if (q->algo == ALGO_DEPTHWISE || w->kind != AOE_T_CONST ||
	    w->data == NULL || cg.mg < 2 || K < 1 ||
	    aoe_sched_get(&n->sched, "prepack", 1) == 0)
		return 0;
	q->wstride = aoe_sgemm_packed_size(0, cg.mg, K, &n->sched);
	q->wstride = (q->wstride + 15) & ~(size_t)15;
	q->wpack = aligned_alloc(64, q->wstride * cg.group * sizeof(float));
	if (q->wpack == NULL)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	for (gi = 0; gi < cg.group; gi++)
		aoe_sgemm_pack(0, 0, cg.mg, K, (const float *)w->data +
		    gi * cg.mg * K, K, q->wpack + gi * q->wstride, &n->sched);
	return 0;
}

static void
conv_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	conv_geom cg;

	if (conv_geom_of(g, n, 0, &cg) < 0)
		return;
	aoe_sched_set(s, "algo", conv_default_algo(&cg));
	aoe_sched_set(s, "batch_par", -1);
	aoe_sched_set(s, "mr", 6);
	aoe_sched_set(s, "nr", 16);
	aoe_sched_set(s, "mc", 144);
	aoe_sched_set(s, "kc", 384);
	aoe_sched_set(s, "nc", 3072);
}

/*
 * Depthwise (one input channel per group): each output plane is a sum of
 * shifted, scaled input planes, computed a row at a time.
 */
static void
conv_depthwise(const conv_geom *g, const float *x, const float *w,
    const float *bias, float *y, int nthreads)
{
	int64_t planes = g->n * g->m, pl;
	int64_t O0 = g->out[0], O1 = g->out[1], O2 = g->out[2];
	int64_t I0 = g->in[0], I1 = g->in[1], I2 = g->in[2];
	int64_t K0 = g->k[0], K1 = g->k[1], K2 = g->k[2];
	int64_t sw = g->s[2];

#pragma omp parallel for num_threads(nthreads) if (nthreads > 1 && \
    planes > 1 && planes * g->outsz * g->ksz > 65536) schedule(static)
	for (pl = 0; pl < planes; pl++) {
		int64_t b = pl / g->m, m = pl % g->m, ci = m / g->mg;
		const float *xp = x + (b * g->c + ci) * g->insz;
		const float *wp = w + m * g->ksz;
		float *yp = y + pl * g->outsz, bv = bias ? bias[m] : 0;
		int64_t od, oh, ow, kd, kh, kw;

		for (od = 0; od < O0; od++)
			for (oh = 0; oh < O1; oh++) {
				float *restrict yr = yp + (od * O1 + oh) * O2;
				for (ow = 0; ow < O2; ow++)
					yr[ow] = bv;
				for (kd = 0; kd < K0; kd++) {
					int64_t id = od * g->s[0] - g->pb[0] +
					    kd * g->d[0];
					if (id < 0 || id >= I0)
						continue;
					for (kh = 0; kh < K1; kh++) {
						int64_t ih = oh * g->s[1] -
						    g->pb[1] + kh * g->d[1];
						if (ih < 0 || ih >= I1)
							continue;
						const float *restrict xr = xp +
						    (id * I1 + ih) * I2;
						const float *wr = wp +
						    (kd * K1 + kh) * K2;
						for (kw = 0; kw < K2; kw++) {
							int64_t off = kw *
							    g->d[2] - g->pb[2];
							int64_t lo = off >= 0 ?
							    0 : ceildiv(-off,
							    sw);
							int64_t hi = floordiv(
							    I2 - 1 - off, sw) +
							    1;
							float wv = wr[kw];
							lo = min64(lo, O2);
							hi = min64(hi, O2);
							if (sw == 1)
								for (ow = lo;
								    ow < hi;
								    ow++)
									yr[ow] +=
									    wv *
									    xr[ow +
									    off];
							else
								for (ow = lo;
								    ow < hi;
								    ow++)
									yr[ow] +=
									    wv *
									    xr[ow *
									    sw +
									    off];
						}
					}
				}
			}
	}
}

/* One image and group of a Conv, by a GEMM algorithm. */
static int
conv_job(const aoe_kctx *k, const conv_geom *cg, int algo, int64_t t,
    int nth)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *x = aoe_in(g, n, 0)->data, *w = aoe_in(g, n, 1)->data;
	const float *bias = bt ? bt->data : NULL;
	float *y = aoe_out(g, n, 0)->data;
	const conv_priv *q = n->priv;
	int64_t b = t / cg->group, gi = t % cg->group, j0, p, tile;
	int64_t K = cg->cg * cg->ksz;
	const float *xg = x + (b * cg->c + gi * cg->cg) * cg->insz;
	float *yg = y + (b * cg->m + gi * cg->mg) * cg->outsz;
	aoe_gemm_ex xe;
	packb_ctx ctx;

	memset(&xe, 0, sizeof(xe));
	xe.m = cg->mg;
	xe.k = K;
	xe.alpha = 1;
	xe.beta = 0;
	xe.a = w + gi * cg->mg * K;
	xe.lda = K;
	xe.apack = q && q->wpack ? q->wpack + gi * q->wstride : NULL;
	xe.bias = bias ? bias + gi * cg->mg : NULL;
	xe.ldc = cg->outsz;
	xe.n = cg->outsz;
	xe.c = yg;
	switch (algo) {
	case ALGO_1X1:
		xe.b = xg;
		xe.ldb = cg->insz;
		return aoe_sgemm_ex(&xe, nth, k->sched);
	case ALGO_IMPLICIT:
		ctx.g = cg;
		ctx.x = xg;
		xe.packb = conv_packb;
		xe.ctx = &ctx;
		return aoe_sgemm_ex(&xe, nth, k->sched);
	}
	/* Explicit im2col, a tile of columns at a time. */
	tile = im2col_tile(cg, K, k->sched);
	for (j0 = 0; j0 < cg->outsz; j0 += tile) {
		int64_t len = min64(tile, cg->outsz - j0);
		float *col = k->scratch;
		for (p = 0; p < K; p++) {
			int64_t c = p / cg->ksz, r = p % cg->ksz;
			im2col_row(cg, xg + c * cg->insz,
			    r / (cg->k[1] * cg->k[2]), r / cg->k[2] % cg->k[1],
			    r % cg->k[2], j0, len, col + p * len);
		}
		xe.n = len;
		xe.b = col;
		xe.ldb = len;
		xe.c = yg + j0;
		if (aoe_sgemm_ex(&xe, nth, k->sched) < 0)
			return -1;
	}
	return 0;
}

static int
conv_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *x = aoe_in(g, n, 0)->data, *w = aoe_in(g, n, 1)->data;
	const float *bias = bt ? bt->data : NULL;
	float *y = aoe_out(g, n, 0)->data;
	const conv_priv *q = n->priv;
	conv_geom cg;
	int64_t K, jobs, t;
	int rc, algo, outer, par, fail = 0;

	if ((rc = conv_geom_of(g, n, 0, &cg)) < 0)
		return rc;
	if (cg.n == 0 || cg.m == 0 || cg.outsz == 0)
		return 0;
	algo = q ? q->algo : conv_algo(&cg, k->sched);
	K = cg.cg * cg.ksz;
	if (K == 0) {
		/* No input channels: the bias alone. */
		for (t = 0; t < cg.n * cg.m; t++)
			for (int64_t j = 0; j < cg.outsz; j++)
				y[t * cg.outsz + j] = bias ? bias[t % cg.m] : 0;
		return 0;
	}
	if (algo == ALGO_DEPTHWISE) {
		conv_depthwise(&cg, x, w, bias, y, k->nthreads);
		return 0;
	}
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
	if (algo == ALGO_IM2COL || k->nthreads < 2)
		outer = 0;
	if (outer) {
#pragma omp parallel for num_threads(k->nthreads) schedule(static) \
    reduction(|:fail)
		for (t = 0; t < jobs; t++)
			if (conv_job(k, &cg, algo, t, 1) < 0)
				fail = 1;
	} else
		for (t = 0; t < jobs; t++)
			if (conv_job(k, &cg, algo, t, k->nthreads) < 0)
				fail = 1;
	return fail ? aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
	    n->op_type, n->name) : 0;
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

	if (n->priv_free)
		n->priv_free(n->priv);
	n->priv = NULL;
	n->priv_free = NULL;
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
	return 0;
}

static void
convt_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "par", 0);
	aoe_sched_set(s, "mr", 6);
	aoe_sched_set(s, "nr", 16);
	aoe_sched_set(s, "mc", 144);
	aoe_sched_set(s, "kc", 384);
	aoe_sched_set(s, "nc", 3072);
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

static int
convt_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *bt = aoe_in(g, n, 2);
	const float *x = aoe_in(g, n, 0)->data, *w = aoe_in(g, n, 1)->data;
	const float *bias = bt ? bt->data : NULL;
	float *y = aoe_out(g, n, 0)->data;
	const conv_priv *q = n->priv;
	conv_geom cg;
	int64_t rows, tile, b, gi, j0, t, cap;
	int rc;

	if ((rc = conv_geom_of(g, n, 1, &cg)) < 0)
		return rc;
	if (cg.n == 0 || cg.m == 0 || cg.outsz == 0)
		return 0;
	/* The output starts as the bias. */
#pragma omp parallel for num_threads(k->nthreads) if (k->nthreads > 1 && \
    cg.n * cg.m * cg.outsz > 65536) schedule(static)
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
	for (b = 0; b < cg.n; b++)
		for (gi = 0; gi < cg.group; gi++) {
			const float *xg = x + (b * cg.c + gi * cg.cg) *
			    cg.insz;
			float *yg = y + (b * cg.m + gi * cg.mg) * cg.outsz;
			for (j0 = 0; j0 < cg.insz; j0 += tile) {
				int64_t len = min64(tile, cg.insz - j0), mo;
				float *col = k->scratch;
				aoe_gemm_ex xe;

				memset(&xe, 0, sizeof(xe));
				xe.transa = 1;
				xe.m = rows;
				xe.n = len;
				xe.k = cg.cg;
				xe.alpha = 1;
				xe.beta = 0;
				xe.a = w + gi * cg.cg * rows;
				xe.lda = rows;
				xe.apack = q && q->wpack ? q->wpack +
				    gi * q->wstride : NULL;
				xe.b = xg + j0;
				xe.ldb = cg.insz;
				xe.c = col;
				xe.ldc = len;
				if (aoe_sgemm_ex(&xe, k->nthreads,
				    k->sched) < 0)
					return aoe_err(AOE_ENOMEM, "%s '%s': "
					    "out of memory", n->op_type,
					    n->name);
#pragma omp parallel for num_threads(k->nthreads) if (k->nthreads > 1 && \
    cg.mg > 1 && rows * len > 32768) schedule(static)
				for (mo = 0; mo < cg.mg; mo++)
					col2im_plane(&cg, col + mo * cg.ksz *
					    len, len, j0, yg + mo * cg.outsz);
			}
		}
	return 0;
}

const aoe_op aoe_ops_conv[] = {
	{ "Conv", conv_infer, conv_run, conv_prepare, conv_default_sched },
	{ "ConvTranspose", convt_infer, convt_run, convt_prepare,
	    convt_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};
