/*
 * unit-pool8c.c - pooling and resampling in the blocked layout NCHW8c
 * (lib/kernels/k_pool.c): each op runs once on a plain input and once on its
 * NCHW8c reorder, on awkward shapes (channel counts that fill no block,
 * 1-pixel and odd planes, asymmetric pads, ceil_mode, dilations, every
 * Resize mode), on 1 and 2 threads; the blocked result, reordered back,
 * must be the plain one and its padding lanes zero.  The nodes that
 * cannot run blocked are refused by aoe_pool_8c_ok() and by prepare.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"
#include "onenode.h"

static void
attr_s(tg *t, const char *name, const char *v)
{
	aoe_node_add_attr(t->n, name, AOE_A_STRING)->s = aoe_xstrdup(v);
}

/* A whole number in [lo, hi], from the seeded source. */
static int64_t
irand(int64_t lo, int64_t hi)
{
	int64_t v = lo + (int64_t)((frand() + 1) / 2 * (double)(hi - lo + 1));

	return v > hi ? hi : v;
}

/* Equal floats, NaN matching NaN; within tol of each other when tol > 0. */
static int
same(float a, float b, double tol)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (a == b)
		return 1;
	return tol > 0 && fabs((double)a - b) <= tol * (1 + fabs((double)b));
}

/*
 * The property, for the one-node graph t whose input 0 is 4-D: plain and
 * blocked runs agree (exactly, or within tol), the blocked output's
 * padding lanes are zero, on 1 thread and on 2 threads with the work cut
 * as finely as the "par" knob allows.
 */
static void
check_8c(tg *t, const char *what, double tol)
{
	aoe_graph *g = t->g;
	aoe_tensor *x = g->tensors[t->in[0]], *y = g->tensors[t->y];
	int64_t n, c, cb, sp, osp, nx, ny, i, bad = 0, pad = 0, b, s, q;
	float *xp = NULL, *ref = NULL, *z = NULL;
	int th, isok;

	x->layout = 0;
	if (tg_prepare(t) < 0) {
		ok(0, "%s: prepare plain", what);
		return;
	}
	isok = aoe_pool_8c_ok(g, t->n);
	n = x->dims[0];
	c = x->dims[1];
	cb = (c + 7) / 8;
	sp = x->dims[2] * x->dims[3];
	osp = y->dims[2] * y->dims[3];
	nx = aoe_tensor_numel(x);
	ny = aoe_tensor_numel(y);
	xp = aoe_xcalloc((size_t)nx + 1, sizeof(float));
	ref = aoe_xcalloc((size_t)ny + 1, sizeof(float));
	z = aoe_xcalloc((size_t)ny + 1, sizeof(float));
	memcpy(xp, x->data, (size_t)nx * sizeof(float));
	opts.nthreads = 1;
	if (aoe_graph_run(g, &opts) < 0) {
		ok(0, "%s: run plain", what);
		goto out;
	}
	memcpy(ref, y->data, (size_t)ny * sizeof(float));

	x->layout = AOE_LAYOUT_8C;
	if (aoe_graph_prepare(g, &opts) < 0 || y->layout != AOE_LAYOUT_8C) {
		ok(0, "%s: prepare NCHW8c (output layout %d)", what,
		    y->layout);
		goto out;
	}
	aoe_to_8c(xp, x->data, n, c, sp, 1);
	for (th = 1; th <= 2; th++) {
		opts.nthreads = th;
		if (th == 2)
			aoe_sched_set(&t->n->sched, "par", 1);
		/* Garbage first, so that every lane must be written. */
		memset(y->data, 0xff, aoe_tensor_nbytes(y));
		if (aoe_graph_run(g, &opts) < 0) {
			ok(0, "%s: run NCHW8c on %d threads", what, th);
			goto out;
		}
		for (b = 0; b < n * cb; b++)
			for (s = 0; s < osp; s++)
				for (q = c - (b % cb) * 8; q < 8; q++)
					pad += ((float *)y->data)[(b * osp +
					    s) * 8 + q] != 0.0f;
		aoe_from_8c(y->data, z, n, c, osp, 1);
		for (i = 0; i < ny; i++)
			if (!same(z[i], ref[i], tol)) {
				if (bad++ == 0)
					printf("# %s, %d threads: element "
					    "%lld is %.9g, plain %.9g\n", what,
					    th, (long long)i, z[i], ref[i]);
			}
	}
	ok(isok && bad == 0 && pad == 0, "%s: NCHW8c matches plain (%lld "
	    "wrong, %lld padding lanes not 0)", what, (long long)bad,
	    (long long)pad);
out:
	x->layout = 0;
	opts.nthreads = 2;
	free(xp);
	free(ref);
	free(z);
}

static const int64_t cs[] = { 1, 3, 8, 9, 17 };
static const int64_t hws[] = { 1, 2, 7, 13, 56 };
#define NELEM(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* A random 2-D MaxPool or AveragePool on a random awkward shape. */
static void
test_pool(int avg, int nth)
{
	int64_t c = cs[irand(0, NELEM(cs) - 1)], h = hws[irand(0, 4)];
	int64_t w = hws[irand(0, 4)], k[2], s[2], d[2], p[4];
	int64_t ceil_mode = irand(0, 1), cip = avg ? irand(0, 1) : 0;
	int i, tries;
	char what[256];
	tg t;

	/* Draw until every window fits the padded input. */
	for (tries = 0;; tries++) {
		for (i = 0; i < 2; i++) {
			k[i] = irand(1, 3);
			s[i] = irand(1, 3);
			d[i] = tries < 20 && irand(0, 3) == 0 ? 2 : 1;
			p[i] = irand(0, k[i] - 1);
			p[2 + i] = irand(0, k[i] - 1);
		}
		if (h + p[0] + p[2] >= (k[0] - 1) * d[0] + 1 &&
		    w + p[1] + p[3] >= (k[1] - 1) * d[1] + 1)
			break;
	}
	snprintf(what, sizeof(what), "%d: %s 2x%lldx%lldx%lld k%lldx%lld "
	    "s%lldx%lld d%lldx%lld pads %lld,%lld,%lld,%lld ceil %lld cip %lld",
	    nth, avg ? "AveragePool" : "MaxPool", (long long)c, (long long)h,
	    (long long)w, (long long)k[0], (long long)k[1], (long long)s[0],
	    (long long)s[1], (long long)d[0], (long long)d[1],
	    (long long)p[0], (long long)p[1], (long long)p[2], (long long)p[3],
	    (long long)ceil_mode, (long long)cip);
	tg_new(&t, "pool");
	tg_input(&t, 0, 4, (int64_t[]){ 2, c, h, w });
	tg_node(&t, avg ? "AveragePool" : "MaxPool");
	attr_is(&t, "kernel_shape", 2, k);
	attr_is(&t, "strides", 2, s);
	if (d[0] > 1 || d[1] > 1)
		attr_is(&t, "dilations", 2, d);
	attr_is(&t, "pads", 4, p);
	attr_i(&t, "ceil_mode", ceil_mode);
	if (avg)
		attr_i(&t, "count_include_pad", cip);
	check_8c(&t, what, avg ? 1e-6 : 0);
	aoe_graph_free(t.g);
}

/* Pools with auto_pad, and windows that reach past the input. */
static void
test_pool_auto(int avg, const char *auto_pad, int64_t c, int64_t h,
    int64_t w, int64_t k, int64_t s)
{
	char what[256];
	tg t;

	snprintf(what, sizeof(what), "%s %s 2x%lldx%lldx%lld k%lld s%lld",
	    avg ? "AveragePool" : "MaxPool", auto_pad, (long long)c,
	    (long long)h, (long long)w, (long long)k, (long long)s);
	tg_new(&t, "pool");
	tg_input(&t, 0, 4, (int64_t[]){ 2, c, h, w });
	tg_node(&t, avg ? "AveragePool" : "MaxPool");
	attr_is(&t, "kernel_shape", 2, (int64_t[]){ k, k });
	attr_is(&t, "strides", 2, (int64_t[]){ s, s });
	attr_s(&t, "auto_pad", auto_pad);
	check_8c(&t, what, avg ? 1e-6 : 0);
	aoe_graph_free(t.g);
}

static void
test_gpool(int avg, int64_t c, int64_t h, int64_t w)
{
	char what[256];
	tg t;

	snprintf(what, sizeof(what), "%s 2x%lldx%lldx%lld",
	    avg ? "GlobalAveragePool" : "GlobalMaxPool", (long long)c,
	    (long long)h, (long long)w);
	tg_new(&t, "gpool");
	tg_input(&t, 0, 4, (int64_t[]){ 2, c, h, w });
	tg_node(&t, avg ? "GlobalAveragePool" : "GlobalMaxPool");
	check_8c(&t, what, avg ? 1e-6 : 0);
	aoe_graph_free(t.g);
}

/*
 * Resize (opset 17) by scales sh x sw on the last two axes, or Upsample
 * (opset 9) when ctm is NULL; crop is tf_crop_and_resize's roi on the
 * last two axes (NULL: none).
 */
static int64_t rbatch = 2;

static void
test_resize(const char *mode, const char *ctm, const char *nm,
    int64_t c, int64_t h, int64_t w, float sh, float sw, const float *crop)
{
	char what[256];
	float *sc;
	tg t;

	snprintf(what, sizeof(what), "%s %s %s %s %lldx%lldx%lldx%lld by "
	    "%gx%g", ctm ? "Resize" : "Upsample", mode, ctm ? ctm : "",
	    nm ? nm : "", (long long)rbatch, (long long)c, (long long)h,
	    (long long)w, sh, sw);
	tg_new(&t, "resize");
	tg_input(&t, 0, 4, (int64_t[]){ rbatch, c, h, w });
	if (ctm == NULL) {
		t.g->opset = 9;
		tg_input(&t, 1, 1, (int64_t[]){ 4 });
		sc = data(&t, 1);
	} else {
		tg_input(&t, 1, 1, (int64_t[]){ crop ? 8 : 0 });
		if (crop) {
			float *roi = data(&t, 1);

			roi[0] = roi[1] = 0;
			roi[4] = roi[5] = 1;
			roi[2] = crop[0];
			roi[3] = crop[1];
			roi[6] = crop[2];
			roi[7] = crop[3];
		}
		tg_input(&t, 1, 1, (int64_t[]){ 4 });
		sc = data(&t, 2);
	}
	sc[0] = sc[1] = 1;
	sc[2] = sh;
	sc[3] = sw;
	tg_node(&t, ctm ? "Resize" : "Upsample");
	attr_s(&t, "mode", mode);
	if (ctm)
		attr_s(&t, "coordinate_transformation_mode", ctm);
	if (nm)
		attr_s(&t, "nearest_mode", nm);
	if (crop)
		attr_f(&t, "extrapolation_value", 0.5f);
	check_8c(&t, what, strcmp(mode, "nearest") == 0 ? 0 : 1e-6);
	aoe_graph_free(t.g);
}

/* Nodes that cannot run blocked: refused, and prepare fails on them. */
static void
test_refused(void)
{
	aoe_tensor *x;
	int idx[2], i;
	float *sc;
	tg t;

	tg_new(&t, "indices");
	tg_input(&t, 0, 4, (int64_t[]){ 1, 9, 7, 7 });
	idx[0] = aoe_graph_tensor(t.g, "y");
	idx[1] = aoe_graph_tensor(t.g, "ind");
	t.y = idx[0];
	i = aoe_graph_add_node(t.g, "node", "MaxPool", 1, t.in, 2, idx);
	t.n = &t.g->nodes[i];
	t.g->outputs[t.g->noutputs++] = idx[0];
	attr_is(&t, "kernel_shape", 2, (int64_t[]){ 2, 2 });
	ok(tg_prepare(&t) == 0 && !aoe_pool_8c_ok(t.g, t.n),
	    "MaxPool with Indices: refused");
	x = t.g->tensors[t.in[0]];
	x->layout = AOE_LAYOUT_8C;
	ok(aoe_graph_prepare(t.g, &opts) < 0, "MaxPool with Indices: an "
	    "NCHW8c input fails prepare");
	aoe_graph_free(t.g);

	tg_new(&t, "pool3d");
	tg_input(&t, 0, 5, (int64_t[]){ 1, 9, 4, 5, 6 });
	tg_node(&t, "AveragePool");
	attr_is(&t, "kernel_shape", 3, (int64_t[]){ 2, 2, 2 });
	ok(tg_prepare(&t) == 0 && !aoe_pool_8c_ok(t.g, t.n),
	    "3-D AveragePool: refused");
	aoe_graph_free(t.g);

	tg_new(&t, "pool1d");
	tg_input(&t, 0, 3, (int64_t[]){ 1, 9, 4 });
	tg_node(&t, "MaxPool");
	attr_is(&t, "kernel_shape", 1, (int64_t[]){ 2 });
	ok(tg_prepare(&t) == 0 && !aoe_pool_8c_ok(t.g, t.n),
	    "1-D MaxPool: refused");
	aoe_graph_free(t.g);

	tg_new(&t, "resizec");
	tg_input(&t, 0, 4, (int64_t[]){ 1, 9, 4, 4 });
	tg_input(&t, 1, 1, (int64_t[]){ 0 });
	tg_input(&t, 1, 1, (int64_t[]){ 4 });
	sc = data(&t, 2);
	sc[0] = sc[2] = sc[3] = 1;
	sc[1] = 2;
	tg_node(&t, "Resize");
	ok(tg_prepare(&t) == 0 && !aoe_pool_8c_ok(t.g, t.n),
	    "Resize of the channel axis: refused");
	aoe_graph_free(t.g);

	tg_new(&t, "gap");
	tg_input(&t, 0, 3, (int64_t[]){ 2, 9, 5 });
	tg_node(&t, "GlobalAveragePool");
	ok(tg_prepare(&t) == 0 && !aoe_pool_8c_ok(t.g, t.n),
	    "3-D GlobalAveragePool: refused");
	aoe_graph_free(t.g);

	tg_new(&t, "relu");
	tg_input(&t, 0, 4, (int64_t[]){ 1, 9, 4, 4 });
	tg_node(&t, "Relu");
	ok(tg_prepare(&t) == 0 && !aoe_pool_8c_ok(t.g, t.n),
	    "Relu: not an op of k_pool.c, refused");
	aoe_graph_free(t.g);
}

int
main(void)
{
	static const char *const ctms[] = { "half_pixel", "align_corners",
	    "asymmetric", "pytorch_half_pixel" };
	static const char *const nms[] = { "round_prefer_floor",
	    "round_prefer_ceil", "floor", "ceil" };
	static const float sc[][2] = { { 2, 2 }, { 0.5f, 0.5f },
	    { 1.5f, 0.75f }, { 1, 2 }, { 2, 1 }, { 3, 1.7f } };
	static const float crop[] = { 0.1f, -0.2f, 0.8f, 1.3f };
	int i, j;

	for (i = 0; i < 40; i++) {
		test_pool(0, i);
		test_pool(1, i);
	}
	/* The usual ones: resnet's stem pool, 2x2 s2 on odd planes. */
	test_pool_auto(0, "SAME_UPPER", 17, 56, 56, 3, 2);
	test_pool_auto(0, "SAME_LOWER", 9, 13, 7, 2, 2);
	test_pool_auto(1, "SAME_UPPER", 3, 13, 13, 3, 3);
	test_pool_auto(1, "VALID", 8, 7, 13, 2, 2);
	test_pool_auto(0, "VALID", 1, 1, 1, 1, 1);
	for (i = 0; i < NELEM(cs); i++) {
		test_gpool(i % 2, cs[i], hws[i], hws[(i + 2) % 5]);
		test_gpool(1 - i % 2, cs[i], hws[(i + 4) % 5], hws[i]);
	}
	test_gpool(1, 9, 56, 56);
	test_gpool(0, 17, 17, 1);
	for (i = 0; i < NELEM(sc); i++) {
		int64_t c = cs[i % NELEM(cs)], h = hws[i % 5];
		int64_t w = hws[(i + 3) % 5];

		test_resize("nearest", ctms[i % 4], nms[i % 4], c, h, w,
		    sc[i][0], sc[i][1], NULL);
		for (j = 0; j < 4; j++)
			test_resize("linear", ctms[j], NULL, c, w, h,
			    sc[i][0], sc[i][1], NULL);
		test_resize("cubic", ctms[i % 4], NULL, c, h, h, sc[i][0],
		    sc[i][1], NULL);
	}
	/* 2x with planes wide enough for the plain path's fused interior. */
	test_resize("linear", "half_pixel", NULL, 9, 13, 56, 2, 2, NULL);
	test_resize("linear", "pytorch_half_pixel", NULL, 3, 56, 1, 2, 1,
	    NULL);
	test_resize("cubic", "half_pixel", NULL, 17, 13, 13, 2, 2, NULL);
	test_resize("nearest", "asymmetric", "floor", 17, 56, 56, 2, 2,
	    NULL);
	test_resize("nearest", NULL, NULL, 9, 7, 13, 2, 2, NULL);
	test_resize("linear", NULL, NULL, 3, 13, 7, 2, 3, NULL);
	test_resize("linear", "tf_crop_and_resize", NULL, 9, 7, 13, 1.5f,
	    0.75f, crop);
	test_resize("nearest", "tf_crop_and_resize", "round_prefer_ceil", 3,
	    13, 7, 2, 1, crop);
	/* One image: pytorch_half_pixel then "resizes" the batch axis. */
	rbatch = 1;
	test_resize("linear", "pytorch_half_pixel", NULL, 9, 13, 7, 2, 2,
	    NULL);
	test_resize("cubic", "pytorch_half_pixel", NULL, 1, 7, 13, 0.5f, 2,
	    NULL);
	test_resize("nearest", "pytorch_half_pixel", "floor", 3, 7, 13, 2, 2,
	    NULL);
	rbatch = 2;
	test_refused();
	return done_testing();
}
