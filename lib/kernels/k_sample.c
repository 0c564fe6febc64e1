/*
 * k_sample.c - sampling an image at computed coordinates: GridSample and
 * RoiAlign, on float32 or float64 NCHW tensors.
 *
 * GridSample follows PyTorch's grid_sample, which ONNX's operator copies:
 * modes bilinear, nearest (rounding half to even) and bicubic (A = -0.75),
 * padding zeros, border or reflection, align_corners; ONNX 20's names
 * linear and cubic are taken too.  RoiAlign is ONNX Runtime's: each bin
 * averages (or takes the largest weighted corner of) sampling_ratio^2
 * bilinear samples, or ceil(roi / output) of them a side when
 * sampling_ratio is 0; coordinate_transformation_mode half_pixel shifts
 * by half a pixel, output_half_pixel (the legacy behaviour) does not and
 * makes each roi at least one pixel.  Work is cut over the threads by
 * (image or roi, channel) planes.  No knobs: the family has no search
 * space.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/* The named string attribute's index in list[0..n), or -1. */
static int
str_attr(const aoe_node *n, const char *name, const char *def,
    const char *const *list, int cnt, const char **val)
{
	int i;

	*val = aoe_attr_str(n, name, def);
	for (i = 0; i < cnt; i++)
		if (strcmp(*val, list[i]) == 0)
			return i;
	return -1;
}

/*
 * GridSample.
 */
enum { GS_BILINEAR, GS_NEAREST, GS_BICUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

struct gs_args {
	int mode, pad, align, dt;
	int64_t n, c, h, w, oh, ow;
};

static int
gs_params(const aoe_graph *g, const aoe_node *n, struct gs_args *a)
{
	static const char *const modes[] = { "bilinear", "nearest", "bicubic",
	    "linear", "cubic" };
	static const char *const pads[] = { "zeros", "border", "reflection" };
	const aoe_tensor *x, *grid;
	const char *s;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 2, 2)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	grid = aoe_in(g, n, 1);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 or float64)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (grid->dtype != x->dtype)
		return aoe_err(AOE_EDATA, "%s '%s': grid is %s, the input %s",
		    n->op_type, n->name, aoe_dtype_name(grid->dtype),
		    aoe_dtype_name(x->dtype));
	if (x->ndim == 5)
		return aoe_err(AOE_EUNSUP, "%s '%s': volumetric (5-D) "
		    "sampling not supported", n->op_type, n->name);
	if (x->ndim != 4)
		return aoe_err(AOE_EDATA, "%s '%s': input has rank %d, "
		    "expected 4 (N, C, H, W)", n->op_type, n->name, x->ndim);
	if (grid->ndim != 4)
		return aoe_err(AOE_EDATA, "%s '%s': grid has rank %d, "
		    "expected 4 (N, H_out, W_out, 2)", n->op_type, n->name,
		    grid->ndim);
	if (grid->dims[3] != 2 || grid->dims[0] != x->dims[0])
		return aoe_err(AOE_EDATA, "%s '%s': grid must be [N, H_out, "
		    "W_out, 2] with the input's N", n->op_type, n->name);
	if ((a->mode = str_attr(n, "mode", "bilinear", modes, 5, &s)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': unknown mode '%s'",
		    n->op_type, n->name, s);
	if (a->mode == 3)
		a->mode = GS_BILINEAR;
	else if (a->mode == 4)
		a->mode = GS_BICUBIC;
	if ((a->pad = str_attr(n, "padding_mode", "zeros", pads, 3, &s)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': unknown padding_mode '%s'",
		    n->op_type, n->name, s);
	a->align = aoe_attr_int(n, "align_corners", 0) != 0;
	a->dt = x->dtype;
	a->n = x->dims[0];
	a->c = x->dims[1];
	a->h = x->dims[2];
	a->w = x->dims[3];
	a->oh = grid->dims[1];
	a->ow = grid->dims[2];
	return 0;
}

static int
gs_infer(aoe_graph *g, aoe_node *n)
{
	struct gs_args a;
	int64_t dims[4];
	int rc;

	if ((rc = gs_params(g, n, &a)) < 0)
		return rc;
	dims[0] = a.n;
	dims[1] = a.c;
	dims[2] = a.oh;
	dims[3] = a.ow;
	return aoe_set_output(g, n, 0, a.dt, 4, dims);
}

/* Reflect v into [lo2 / 2, hi2 / 2] (PyTorch's reflect_coordinates). */
static double
reflect(double v, double lo2, double hi2)
{
	double lo, span, extra, flips;

	if (lo2 == hi2)
		return 0;
	lo = lo2 / 2;
	span = (hi2 - lo2) / 2;
	v = fabs(v - lo);
	extra = fmod(v, span);
	flips = floor(v / span);
	return fmod(flips, 2) == 0 ? extra + lo : span - extra + lo;
}

static double
clampd(double v, double lo, double hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

/* A coordinate moved into the image by the padding mode (not zeros). */
static double
gs_pad(const struct gs_args *a, double v, int64_t size)
{
	if (a->pad == GS_BORDER)
		return clampd(v, 0, (double)(size - 1));
	if (a->pad == GS_REFLECTION) {
		v = a->align ? reflect(v, 0, 2 * (double)(size - 1)) :
		    reflect(v, -1, 2 * (double)size - 1);
		return clampd(v, 0, (double)(size - 1));
	}
	return v;
}

/* Pixel (y, x) of plane p, 0 outside. */
static inline double
px(const struct gs_args *a, const void *p, int64_t base, int64_t y,
    int64_t x)
{
	if (y < 0 || y >= a->h || x < 0 || x >= a->w)
		return 0;
	return ld_fd(p, a->dt, base + y * a->w + x);
}

/* Cubic convolution weights for t in [0, 1), A = -0.75. */
static void
cubic_w(double t, double *w)
{
	const double A = -0.75;
	double x;

	x = t + 1;
	w[0] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
	x = t;
	w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
	x = 1 - t;
	w[2] = ((A + 2) * x - (A + 3)) * x * x + 1;
	x = 2 - t;
	w[3] = ((A * x - 5 * A) * x + 8 * A) * x - 4 * A;
}

/* A bicubic tap: its integer coordinates padded, then 0 outside. */
static inline double
px_pad(const struct gs_args *a, const void *p, int64_t base, int64_t y,
    int64_t x)
{
	if (a->pad != GS_ZEROS) {
		y = (int64_t)gs_pad(a, (double)y, a->h);
		x = (int64_t)gs_pad(a, (double)x, a->w);
	}
	return px(a, p, base, y, x);
}

struct gs_ctx {
	const struct gs_args *a;
	const void *x, *grid;
	void *y;
	int64_t nitems, nchunks;
};

static double
gs_sample(const struct gs_args *a, const void *x, int64_t base, double ix,
    double iy)
{
	double v = 0, wx[4], wy[4], fx, fy;
	int64_t x0, y0, i, j;

	switch (a->mode) {
	case GS_NEAREST:
		ix = gs_pad(a, ix, a->w);
		iy = gs_pad(a, iy, a->h);
		return px(a, x, base, (int64_t)nearbyint(iy),
		    (int64_t)nearbyint(ix));
	case GS_BILINEAR:
		ix = gs_pad(a, ix, a->w);
		iy = gs_pad(a, iy, a->h);
		fx = floor(ix);
		fy = floor(iy);
		x0 = (int64_t)fx;
		y0 = (int64_t)fy;
		fx = ix - fx;
		fy = iy - fy;
		return px(a, x, base, y0, x0) * (1 - fx) * (1 - fy) +
		    px(a, x, base, y0, x0 + 1) * fx * (1 - fy) +
		    px(a, x, base, y0 + 1, x0) * (1 - fx) * fy +
		    px(a, x, base, y0 + 1, x0 + 1) * fx * fy;
	default:
		fx = floor(ix);
		fy = floor(iy);
		x0 = (int64_t)fx - 1;
		y0 = (int64_t)fy - 1;
		cubic_w(ix - fx, wx);
		cubic_w(iy - fy, wy);
		for (i = 0; i < 4; i++)
			for (j = 0; j < 4; j++)
				v += wy[i] * wx[j] * px_pad(a, x, base,
				    y0 + i, x0 + j);
		return v;
	}
}

static void
gs_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct gs_ctx *c = ctx;
	const struct gs_args *a = c->a;
	int64_t lo = aoe_chunk_lo(c->nitems, c->nchunks, chunk);
	int64_t hi = aoe_chunk_lo(c->nitems, c->nchunks, chunk + 1);
	int64_t it, i, np = a->oh * a->ow;

	for (it = lo; it < hi; it++) {
		int64_t b = it / a->c, base = it * a->h * a->w;
		int64_t gb = b * np * 2, yb = it * np;

		for (i = 0; i < np; i++) {
			double gx = ld_fd(c->grid, a->dt, gb + 2 * i);
			double gy = ld_fd(c->grid, a->dt, gb + 2 * i + 1);
			double ix, iy;

			if (a->align) {
				ix = (gx + 1) / 2 * (double)(a->w - 1);
				iy = (gy + 1) / 2 * (double)(a->h - 1);
			} else {
				ix = ((gx + 1) * (double)a->w - 1) / 2;
				iy = ((gy + 1) * (double)a->h - 1) / 2;
			}
			/* Far outside (or NaN): a zero, as in zeros mode. */
			if (!(fabs(ix) < 1e15 && fabs(iy) < 1e15)) {
				st_fd(c->y, a->dt, yb + i, 0);
				continue;
			}
			st_fd(c->y, a->dt, yb + i, gs_sample(a, c->x, base, ix,
			    iy));
		}
	}
}

static int
gs_run(aoe_kctx *k)
{
	struct gs_args a;
	struct gs_ctx c;
	int rc, nt;

	if ((rc = gs_params(k->g, k->n, &a)) < 0)
		return rc;
	c.a = &a;
	c.x = aoe_in(k->g, k->n, 0)->data;
	c.grid = aoe_in(k->g, k->n, 1)->data;
	c.y = aoe_out(k->g, k->n, 0)->data;
	c.nitems = a.n * a.c;
	nt = nthreads_for(c.nitems * a.oh * a.ow, 4096, k->nthreads);
	c.nchunks = aoe_nchunks(c.nitems, nt);
	if (c.nitems > 0 && a.oh * a.ow > 0)
		aoe_parallel(nt, c.nchunks, gs_chunk, &c);
	return 0;
}

/*
 * RoiAlign.
 */
struct ra_args {
	int max, half, dt;
	int64_t n, c, h, w, nroi, oh, ow, ratio;
	double scale;
};

static int
ra_params(const aoe_graph *g, const aoe_node *n, struct ra_args *a)
{
	static const char *const modes[] = { "avg", "max" };
	static const char *const ctms[] = { "output_half_pixel",
	    "half_pixel" };
	const aoe_tensor *x, *r, *bi;
	const char *s;
	int rc;

	if ((rc = aoe_need_inputs(g, n, 3, 3)) < 0)
		return rc;
	x = aoe_in(g, n, 0);
	r = aoe_in(g, n, 1);
	bi = aoe_in(g, n, 2);
	if (x->dtype != AOE_F32 && x->dtype != AOE_F64)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s input not supported "
		    "(float32 or float64)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype));
	if (x->ndim != 4)
		return aoe_err(AOE_EDATA, "%s '%s': input has rank %d, "
		    "expected 4 (N, C, H, W)", n->op_type, n->name, x->ndim);
	if (x->dims[2] < 1 || x->dims[3] < 1)
		return aoe_err(AOE_EDATA, "%s '%s': the input's planes are "
		    "empty", n->op_type, n->name);
	if (r->dtype != x->dtype || r->ndim != 2 || r->dims[1] != 4)
		return aoe_err(AOE_EDATA, "%s '%s': rois must be [num_rois, "
		    "4] of the input's type", n->op_type, n->name);
	if ((bi->dtype != AOE_I64 && bi->dtype != AOE_I32) ||
	    bi->ndim != 1 || bi->dims[0] != r->dims[0])
		return aoe_err(AOE_EDATA, "%s '%s': batch_indices must be "
		    "[num_rois] of int64", n->op_type, n->name);
	if ((a->max = str_attr(n, "mode", "avg", modes, 2, &s)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': unknown mode '%s'",
		    n->op_type, n->name, s);
	if ((a->half = str_attr(n, "coordinate_transformation_mode",
	    g->opset >= 16 ? "half_pixel" : "output_half_pixel", ctms, 2,
	    &s)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': unknown "
		    "coordinate_transformation_mode '%s'", n->op_type,
		    n->name, s);
	a->oh = aoe_attr_int(n, "output_height", 1);
	a->ow = aoe_attr_int(n, "output_width", 1);
	a->ratio = aoe_attr_int(n, "sampling_ratio", 0);
	a->scale = aoe_attr_float(n, "spatial_scale", 1);
	if (a->oh < 1 || a->ow < 1 || a->oh > (1 << 20) || a->ow > (1 << 20))
		return aoe_err(AOE_EDATA, "%s '%s': output_height and "
		    "output_width must be in [1, 2^20]", n->op_type, n->name);
	if (a->ratio < 0 || a->ratio > 1024)
		return aoe_err(AOE_EDATA, "%s '%s': sampling_ratio %lld is "
		    "not in [0, 1024]", n->op_type, n->name,
		    (long long)a->ratio);
	if (!isfinite(a->scale))
		return aoe_err(AOE_EDATA, "%s '%s': spatial_scale is not "
		    "finite", n->op_type, n->name);
	a->dt = x->dtype;
	a->n = x->dims[0];
	a->c = x->dims[1];
	a->h = x->dims[2];
	a->w = x->dims[3];
	a->nroi = r->dims[0];
	return 0;
}

/* Check every batch index of bi against the image count. */
static int
ra_check_batch(const aoe_node *n, const aoe_tensor *bi, int64_t nimg)
{
	int64_t i, v;

	for (i = 0; i < bi->dims[0]; i++) {
		v = bi->dtype == AOE_I64 ? ((const int64_t *)bi->data)[i] :
		    ((const int32_t *)bi->data)[i];
		if (v < 0 || v >= nimg)
			return aoe_err(AOE_EDATA, "%s '%s': batch index %lld "
			    "of roi %lld is out of range [0, %lld)",
			    n->op_type, n->name, (long long)v, (long long)i,
			    (long long)nimg);
	}
	return 0;
}

static int
ra_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *bi;
	struct ra_args a;
	int64_t dims[4];
	int rc;

	if ((rc = ra_params(g, n, &a)) < 0)
		return rc;
	bi = aoe_in(g, n, 2);
	if (bi->kind == AOE_T_CONST && bi->data != NULL &&
	    (rc = ra_check_batch(n, bi, a.n)) < 0)
		return rc;
	dims[0] = a.nroi;
	dims[1] = a.c;
	dims[2] = a.oh;
	dims[3] = a.ow;
	return aoe_set_output(g, n, 0, a.dt, 4, dims);
}

struct ra_ctx {
	const struct ra_args *a;
	const void *x, *rois, *bi;
	int bdt;
	void *y;
	int64_t nitems, nchunks;
};

/* Bilinear weights and positions of one sample; 0 weights outside. */
static void
ra_weights(const struct ra_args *a, double y, double x, int64_t *pos,
    double *w)
{
	int64_t yl, xl, yh, xh;
	double ly, lx;

	if (!(y >= -1 && y <= (double)a->h && x >= -1 &&
	    x <= (double)a->w)) {
		memset(pos, 0, 4 * sizeof(*pos));
		memset(w, 0, 4 * sizeof(*w));
		return;
	}
	y = y < 0 ? 0 : y;
	x = x < 0 ? 0 : x;
	yl = (int64_t)y;
	xl = (int64_t)x;
	if (yl >= a->h - 1) {
		yh = yl = a->h - 1;
		y = (double)yl;
	} else
		yh = yl + 1;
	if (xl >= a->w - 1) {
		xh = xl = a->w - 1;
		x = (double)xl;
	} else
		xh = xl + 1;
	ly = y - (double)yl;
	lx = x - (double)xl;
	pos[0] = yl * a->w + xl;
	pos[1] = yl * a->w + xh;
	pos[2] = yh * a->w + xl;
	pos[3] = yh * a->w + xh;
	w[0] = (1 - ly) * (1 - lx);
	w[1] = (1 - ly) * lx;
	w[2] = ly * (1 - lx);
	w[3] = ly * lx;
}

/*
 * Samples a side for a bin of size v: ceil(v), within [0, 1024] so that
 * an absurd (or NaN) roi costs no more than a large one.
 */
static int64_t
grid_n(double v)
{
	v = ceil(v);
	return v >= 1024 ? 1024 : v > 0 ? (int64_t)v : 0;
}

/* Channels an item of work covers: a roi's weights serve them all. */
#define RA_CG 16
/* Largest table of a roi's sample weights (entries), else computed. */
#define RA_TABLE (1 << 18)

/* A roi's geometry: its corner, bin size, and samples a bin side. */
struct ra_roi {
	double x1, y1, bh, bw;
	int64_t gh, gw, b;
};

static void
ra_roi_of(const struct ra_ctx *c, int64_t r, struct ra_roi *q)
{
	const struct ra_args *a = c->a;
	double off = a->half ? .5 : 0, rw, rh;

	q->b = c->bdt == AOE_I64 ? ((const int64_t *)c->bi)[r] :
	    ((const int32_t *)c->bi)[r];
	q->x1 = ld_fd(c->rois, a->dt, r * 4) * a->scale - off;
	q->y1 = ld_fd(c->rois, a->dt, r * 4 + 1) * a->scale - off;
	rw = ld_fd(c->rois, a->dt, r * 4 + 2) * a->scale - off - q->x1;
	rh = ld_fd(c->rois, a->dt, r * 4 + 3) * a->scale - off - q->y1;
	if (!a->half) {
		rw = rw > 1 ? rw : 1;
		rh = rh > 1 ? rh : 1;
	}
	q->bh = rh / (double)a->oh;
	q->bw = rw / (double)a->ow;
	q->gh = a->ratio > 0 ? a->ratio : grid_n(q->bh);
	q->gw = a->ratio > 0 ? a->ratio : grid_n(q->bw);
}

/* The weights of sample (iy, ix) of bin (ph, pw) of roi q. */
static void
ra_sample(const struct ra_args *a, const struct ra_roi *q, int64_t ph,
    int64_t pw, int64_t iy, int64_t ix, int64_t *pos, double *w)
{
	double yy = q->y1 + (double)ph * q->bh + ((double)iy + .5) * q->bh /
	    (double)q->gh;
	double xx = q->x1 + (double)pw * q->bw + ((double)ix + .5) * q->bw /
	    (double)q->gw;

	ra_weights(a, yy, xx, pos, w);
}

/*
 * An item is a roi and up to RA_CG of its channels: the roi's sample
 * weights are made once in a table (as ONNX Runtime does) when it is
 * not too large, and serve every channel.
 */
static void
ra_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct ra_ctx *c = ctx;
	const struct ra_args *a = c->a;
	int64_t lo = aoe_chunk_lo(c->nitems, c->nchunks, chunk);
	int64_t hi = aoe_chunk_lo(c->nitems, c->nchunks, chunk + 1);
	int64_t ncg = (a->c + RA_CG - 1) / RA_CG, it, ch, bin, s, q, ns, nb;
	int64_t *tpos = NULL, lpos[4], *pos;
	double *tw = NULL, lw[4], *w;
	struct ra_roi roi;

	nb = a->oh * a->ow;
	for (it = lo; it < hi; it++) {
		int64_t r = it / ncg, c0 = it % ncg * RA_CG;
		int64_t c1 = min64(a->c, c0 + RA_CG);

		ra_roi_of(c, r, &roi);
		ns = roi.gh * roi.gw;
		free(tpos);
		free(tw);
		tpos = NULL;
		tw = NULL;
		if (ns > 0 && nb * ns <= RA_TABLE) {
			tpos = aoe_xmalloc((size_t)(nb * ns * 4) *
			    sizeof(*tpos));
			tw = aoe_xmalloc((size_t)(nb * ns * 4) * sizeof(*tw));
			for (bin = 0; bin < nb; bin++)
				for (s = 0; s < ns; s++)
					ra_sample(a, &roi, bin / a->ow,
					    bin % a->ow, s / roi.gw, s % roi.gw,
					    tpos + (bin * ns + s) * 4,
					    tw + (bin * ns + s) * 4);
		}
		for (ch = c0; ch < c1; ch++) {
			int64_t base = (roi.b * a->c + ch) * a->h * a->w;
			int64_t yb = (r * a->c + ch) * nb;

			for (bin = 0; bin < nb; bin++) {
				double v = 0, m = 0, t;
				int any = 0;

				for (s = 0; s < ns; s++) {
					if (tpos != NULL) {
						pos = tpos + (bin * ns + s) * 4;
						w = tw + (bin * ns + s) * 4;
					} else {
						pos = lpos;
						w = lw;
						ra_sample(a, &roi, bin / a->ow,
						    bin % a->ow, s / roi.gw,
						    s % roi.gw, pos, w);
					}
					if (!a->max && a->dt == AOE_F32) {
						const float *xf = (const float *)
						    c->x + base;
						v += w[0] * xf[pos[0]] + w[1] *
						    xf[pos[1]] + w[2] *
						    xf[pos[2]] + w[3] *
						    xf[pos[3]];
						continue;
					}
					for (q = 0; q < 4; q++) {
						t = w[q] * ld_fd(c->x, a->dt,
						    base + pos[q]);
						v += t;
						if (!any || t > m)
							m = t;
						any = 1;
					}
				}
				st_fd(c->y, a->dt, yb + bin, a->max ? m :
				    v / (double)max64(ns, 1));
			}
		}
	}
	free(tpos);
	free(tw);
}

static int
ra_run(aoe_kctx *k)
{
	const aoe_tensor *bi = aoe_in(k->g, k->n, 2);
	struct ra_args a;
	struct ra_ctx c;
	int rc, nt;

	if ((rc = ra_params(k->g, k->n, &a)) < 0 ||
	    (rc = ra_check_batch(k->n, bi, a.n)) < 0)
		return rc;
	c.a = &a;
	c.x = aoe_in(k->g, k->n, 0)->data;
	c.rois = aoe_in(k->g, k->n, 1)->data;
	c.bi = bi->data;
	c.bdt = bi->dtype;
	c.y = aoe_out(k->g, k->n, 0)->data;
	c.nitems = a.nroi * ((a.c + RA_CG - 1) / RA_CG);
	nt = nthreads_for(a.nroi * a.c * a.oh * a.ow, 1024, k->nthreads);
	c.nchunks = aoe_nchunks(c.nitems, nt);
	if (c.nitems > 0)
		aoe_parallel(nt, c.nchunks, ra_chunk, &c);
	return 0;
}

const aoe_op aoe_ops_sample[] = {
	{ "GridSample", gs_infer, gs_run, NULL, NULL },
	{ "RoiAlign", ra_infer, ra_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
