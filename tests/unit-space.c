/*
 * unit-space - TAP property tests of the kernels' search spaces: for
 * every family, legal schedules sampled with fixed seeds run on awkward
 * shapes (sizes 1, primes, sizes no block divides, large strides and
 * pads) and match a naive reference; illegal schedules are rejected by
 * validation and never run.
 */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"
#include "onenode.h"

static int
close_to(const float *y, const float *ref, int64_t n, double *worst)
{
	int64_t i;
	double e;

	*worst = 0;
	for (i = 0; i < n; i++) {
		e = fabs((double)y[i] - ref[i]) / (1e-3 + 1e-4 * fabs(ref[i]));
		if (!(e <= 1.0)) {
			*worst = fabs((double)y[i] - ref[i]);
			return 0;
		}
	}
	return 1;
}

static void
sched_str(const aoe_sched *s, char *buf, size_t len)
{
	size_t o = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < s->n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s=%lld",
		    i ? "," : "", s->k[i].name, (long long)s->k[i].v);
}

/*
 * The property: the default schedule, the empty schedule and nsamples
 * legal schedules (seeded) all compute ref; at 1 and 2 threads.
 */
static void
check_space(tg *t, const float *ref, int nsamples, uint64_t seed,
    const char *what)
{
	aoe_space sp;
	aoe_sched s;
	char buf[512], why[256];
	int i, bad = 0, runs = 0, th;
	double worst;
	int64_t ny = numel_y(t);
	const float *y = t->g->tensors[t->y]->data;

	if (aoe_space_for(t->g, t->n, &sp) < 0) {
		ok(0, "%s: space", what);
		return;
	}
	ok(aoe_space_validate(&sp, &sp.def, why, sizeof(why)) == 0,
	    "%s: the default schedule is legal (%llu points)", what,
	    (unsigned long long)aoe_space_size(&sp));
	for (i = -2; i < nsamples && !bad; i++) {
		if (i == -2)
			s = sp.def;
		else if (i == -1)
			memset(&s, 0, sizeof(s));
		else if (aoe_space_sample(&sp, &seed, &s) < 0) {
			bad = 1;
			snprintf(buf, sizeof(buf), "sampling failed");
			break;
		}
		if (aoe_space_apply(t->g, t->n, &s) < 0) {
			bad = 1;
			sched_str(&s, buf, sizeof(buf));
			break;
		}
		for (th = 1; th <= 2; th++) {
			opts.nthreads = th;
			memset(t->g->tensors[t->y]->data, 0xff,
			    (size_t)ny * sizeof(float));
			if (aoe_graph_run(t->g, &opts) < 0 ||
			    !close_to(y, ref, ny, &worst)) {
				bad = 1;
				sched_str(&s, buf, sizeof(buf));
				printf("# %s: threads %d, schedule %s: error "
				    "%g\n", what, th, buf, worst);
				break;
			}
			runs++;
		}
	}
	ok(!bad, "%s: %d legal schedules match the reference (%d runs)",
	    what, nsamples + 2, runs);
	opts.nthreads = 2;
}

/* Illegal schedules are refused by validate and by apply, never run. */
static void
check_illegal(tg *t, const char *what, const char *knob, int64_t v,
    const char *knob2, int64_t v2)
{
	aoe_space sp;
	aoe_sched s, before = t->n->sched;
	char why[256];

	if (aoe_space_for(t->g, t->n, &sp) < 0) {
		ok(0, "%s: space", what);
		return;
	}
	s = sp.def;
	aoe_sched_set(&s, knob, v);
	if (knob2)
		aoe_sched_set(&s, knob2, v2);
	ok(aoe_space_validate(&sp, &s, why, sizeof(why)) == -AOE_EDATA &&
	    aoe_space_apply(t->g, t->n, &s) == -AOE_EDATA &&
	    memcmp(&before, &t->n->sched, sizeof(before)) == 0,
	    "%s: %s=%lld%s%s rejected (%s)", what, knob, (long long)v,
	    knob2 ? " with " : "", knob2 ? knob2 : "", why);
}

/*
 * GEMM family.
 */

static void
ref_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
    const float *a, const float *b, float beta, const float *c, int cm,
    int cn, float *y)
{
	int64_t i, j, p;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double s = 0;
			for (p = 0; p < k; p++)
				s += (double)(ta ? a[p * m + i] : a[i * k + p]) *
				    (tb ? b[j * k + p] : b[p * n + j]);
			s *= alpha;
			if (c)
				s += beta * c[(cm > 1 ? i : 0) * cn +
				    (cn > 1 ? j : 0)];
			y[i * n + j] = (float)s;
		}
}

static void
test_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, int bconst,
    int cm, int cn, float alpha, float beta, int nsamples)
{
	tg t;
	int64_t da[2], db[2], dc[2] = { cm, cn };
	float *ref;
	char what[128];

	snprintf(what, sizeof(what), "Gemm %lldx%lldx%lld ta=%d tb=%d%s",
	    (long long)m, (long long)n, (long long)k, ta, tb,
	    bconst ? " const B" : "");
	tg_new(&t, "Gemm");
	da[0] = ta ? k : m;
	da[1] = ta ? m : k;
	db[0] = tb ? n : k;
	db[1] = tb ? k : n;
	tg_input(&t, 0, 2, da);
	tg_input(&t, bconst, 2, db);
	if (cm)
		tg_input(&t, 1, 2, dc);
	tg_node(&t, "Gemm");
	attr_i(&t, "transA", ta);
	attr_i(&t, "transB", tb);
	attr_f(&t, "alpha", alpha);
	attr_f(&t, "beta", beta);
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	ref = aoe_xcalloc((size_t)(m * n), sizeof(float));
	ref_gemm(ta, tb, m, n, k, alpha, data(&t, 0), data(&t, 1), beta,
	    cm ? data(&t, 2) : NULL, cm, cn, ref);
	check_space(&t, ref, nsamples, 1000 + m, what);
	if (m > 1 && n > 1) {
		check_illegal(&t, what, "mr", 6, "nr", 24);
		check_illegal(&t, what, "kc", 100, NULL, 0);
		check_illegal(&t, what, "unroll", 1, NULL, 0);
	}
	free(ref);
	aoe_graph_free(t.g);
}

static void
test_matmul(int nb, int64_t m, int64_t n, int64_t k, int bconst,
    int nsamples)
{
	tg t;
	int64_t da[3] = { nb, m, k }, db[3] = { nb, k, n }, b;
	float *ref;
	char what[128];

	snprintf(what, sizeof(what), "MatMul %dx%lldx%lldx%lld%s", nb,
	    (long long)m, (long long)n, (long long)k,
	    bconst ? " const B" : "");
	tg_new(&t, "MatMul");
	tg_input(&t, 0, 3, da);
	if (bconst)
		tg_input(&t, 1, 2, db + 1);
	else
		tg_input(&t, 0, 3, db);
	tg_node(&t, "MatMul");
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	ref = aoe_xcalloc((size_t)(nb * m * n), sizeof(float));
	for (b = 0; b < nb; b++)
		ref_gemm(0, 0, m, n, k, 1, data(&t, 0) + b * m * k,
		    data(&t, 1) + (bconst ? 0 : b * k * n), 0, NULL, 0, 0,
		    ref + b * m * n);
	check_space(&t, ref, nsamples, 2000 + n, what);
	free(ref);
	aoe_graph_free(t.g);
}

/*
 * Conv and ConvTranspose (2-D).
 */

typedef struct cspec {
	int64_t n, c, h, w, m, kh, kw, group;
	int64_t sh, sw, dh, dw, pt, pl, pb, pr;
} cspec;

static void
conv_ref(const cspec *p, const float *x, const float *w, const float *b,
    float *y, int64_t oh, int64_t ow)
{
	int64_t cg = p->c / p->group, mg = p->m / p->group;
	int64_t bi, m, i, j, c, u, v;

	for (bi = 0; bi < p->n; bi++)
		for (m = 0; m < p->m; m++)
			for (i = 0; i < oh; i++)
				for (j = 0; j < ow; j++) {
					double s = b ? b[m] : 0;
					int64_t g = m / mg;
					for (c = 0; c < cg; c++)
					for (u = 0; u < p->kh; u++)
					for (v = 0; v < p->kw; v++) {
						int64_t r = i * p->sh - p->pt +
						    u * p->dh;
						int64_t q = j * p->sw - p->pl +
						    v * p->dw;
						if (r < 0 || r >= p->h ||
						    q < 0 || q >= p->w)
							continue;
						s += (double)x[((bi * p->c +
						    g * cg + c) * p->h + r) *
						    p->w + q] * w[((m * cg + c) *
						    p->kh + u) * p->kw + v];
					}
					y[((bi * p->m + m) * oh + i) * ow + j] =
					    (float)s;
				}
}

static void
conv_attrs(tg *t, const cspec *p)
{
	attr_is(&t[0], "strides", 2, (int64_t[]){ p->sh, p->sw });
	attr_is(&t[0], "dilations", 2, (int64_t[]){ p->dh, p->dw });
	attr_is(&t[0], "pads", 4, (int64_t[]){ p->pt, p->pl, p->pb, p->pr });
	attr_i(&t[0], "group", p->group);
}

/*
 * Implicit and explicit im2col (algo=2, 3 and 6) from the input in place
 * and from its padded phase planes, with every micro-kernel shape this
 * CPU runs (their strip widths 16 and 24, and the AVX-512 shapes' 16-wide
 * strips side by side), at 1 and 2 threads.
 */
static void
check_implicit(tg *t, const float *ref, const char *what)
{
	static const int64_t shapes[][2] = { { 6, 16 }, { 4, 24 },
	    { 14, 32 }, { 12, 32 }, { 8, 48 }, { 6, 64 } };
	aoe_space sp;
	aoe_sched s;
	char buf[512], why[256];
	int i, pl, th, algo, bad = 0, runs = 0;
	double worst = 0;
	int64_t ny = numel_y(t);
	const float *y = t->g->tensors[t->y]->data;

	if (aoe_space_for(t->g, t->n, &sp) < 0) {
		ok(0, "%s: space", what);
		return;
	}
	for (algo = 2; algo <= 6; algo += algo == 3 ? 3 : 1)
	for (pl = 0; pl <= 1 && !bad; pl++)
		for (i = 0; i < 6 && !bad; i++) {
			s = sp.def;
			aoe_sched_set(&s, "algo", algo);
			aoe_sched_set(&s, "batch_par", -1);
			aoe_sched_set(&s, "planes", pl);
			aoe_sched_set(&s, "mr", shapes[i][0]);
			aoe_sched_set(&s, "nr", shapes[i][1]);
			/* Shapes this CPU (or AOE_MAX_ISA) cannot run. */
			if (aoe_space_validate(&sp, &s, why, sizeof(why)) < 0)
				continue;
			if (aoe_space_apply(t->g, t->n, &s) < 0) {
				bad = 1;
				break;
			}
			for (th = 1; th <= 2; th++) {
				opts.nthreads = th;
				memset(t->g->tensors[t->y]->data, 0xff,
				    (size_t)ny * sizeof(float));
				if (aoe_graph_run(t->g, &opts) < 0 ||
				    !close_to(y, ref, ny, &worst)) {
					bad = 1;
					sched_str(&s, buf, sizeof(buf));
					printf("# %s: threads %d, schedule %s: "
					    "error %g\n", what, th, buf, worst);
					break;
				}
				runs++;
			}
		}
	ok(!bad && runs >= 24, "%s: algo=2, 3 and 6 with planes 0 and 1 "
	    "match the reference (%d runs)", what, runs);
	opts.nthreads = 2;
}

/* A legal value of the node's knob other than its first, or -1. */
static int64_t
second_value(tg *t, const char *knob)
{
	aoe_space sp;
	int i;

	if (aoe_space_for(t->g, t->n, &sp) < 0)
		return -1;
	for (i = 0; i < sp.nknobs; i++)
		if (strcmp(sp.knobs[i].name, knob) == 0 &&
		    aoe_knob_count(&sp.knobs[i]) > 1)
			return aoe_knob_value(&sp.knobs[i], 1);
	return -1;
}

static void
test_conv(const char *name, cspec p, int nsamples, int illegal)
{
	tg t;
	int64_t oh, ow;
	float *ref;
	char what[160];

	snprintf(what, sizeof(what), "Conv %s", name);
	oh = (p.h + p.pt + p.pb - p.dh * (p.kh - 1) - 1) / p.sh + 1;
	ow = (p.w + p.pl + p.pr - p.dw * (p.kw - 1) - 1) / p.sw + 1;
	tg_new(&t, "Conv");
	tg_input(&t, 0, 4, (int64_t[]){ p.n, p.c, p.h, p.w });
	tg_input(&t, 1, 4, (int64_t[]){ p.m, p.c / p.group, p.kh, p.kw });
	tg_input(&t, 1, 1, (int64_t[]){ p.m });
	tg_node(&t, "Conv");
	conv_attrs(&t, &p);
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	ref = aoe_xcalloc((size_t)numel_y(&t), sizeof(float));
	conv_ref(&p, data(&t, 0), data(&t, 1), data(&t, 2), ref, oh, ow);
	check_space(&t, ref, nsamples, 3000 + p.c * 7 + p.m, what);
	if (p.group < p.c)
		check_implicit(&t, ref, what);
	if (illegal) {
		if (p.kh * p.kw > 1)
			check_illegal(&t, what, "algo", 1, NULL, 0);
		check_illegal(&t, what, "algo", 2, "tile", 256);
		check_illegal(&t, what, "mr", 4, "nr", 16);
		check_illegal(&t, what, "algo", 8, NULL, 0);
		check_illegal(&t, what, "algo", 5, "planes", 1);
		if (p.c / p.group != 1)
			check_illegal(&t, what, "algo", 4, NULL, 0);
		/* Algo 6 reads a pointwise Conv's input in place. */
		if (p.kh * p.kw == 1 && p.sh == 1 && p.sw == 1 && p.pt + p.pl +
		    p.pb + p.pr == 0)
			check_illegal(&t, what, "algo", 6, "tile",
			    second_value(&t, "tile"));
	}
	free(ref);
	aoe_graph_free(t.g);
}

static void
test_convt(const char *name, cspec p, int nsamples)
{
	tg t;
	int64_t oh, ow, cg = p.c / p.group, mg = p.m / p.group;
	int64_t bi, g, ci, mo, i, j, u, v;
	const float *x, *w, *b;
	float *ref;
	char what[160];

	snprintf(what, sizeof(what), "ConvTranspose %s", name);
	oh = p.sh * (p.h - 1) + p.dh * (p.kh - 1) + 1 - p.pt - p.pb;
	ow = p.sw * (p.w - 1) + p.dw * (p.kw - 1) + 1 - p.pl - p.pr;
	tg_new(&t, "ConvTranspose");
	tg_input(&t, 0, 4, (int64_t[]){ p.n, p.c, p.h, p.w });
	tg_input(&t, 1, 4, (int64_t[]){ p.c, mg, p.kh, p.kw });
	tg_input(&t, 1, 1, (int64_t[]){ p.m });
	tg_node(&t, "ConvTranspose");
	conv_attrs(&t, &p);
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	x = data(&t, 0);
	w = data(&t, 1);
	b = data(&t, 2);
	ref = aoe_xcalloc((size_t)numel_y(&t), sizeof(float));
	for (bi = 0; bi < p.n; bi++)
		for (mo = 0; mo < p.m; mo++)
			for (i = 0; i < oh * ow; i++)
				ref[(bi * p.m + mo) * oh * ow + i] = b[mo];
	for (bi = 0; bi < p.n; bi++)
	for (g = 0; g < p.group; g++)
	for (ci = 0; ci < cg; ci++)
	for (mo = 0; mo < mg; mo++)
	for (i = 0; i < p.h; i++)
	for (j = 0; j < p.w; j++)
	for (u = 0; u < p.kh; u++)
	for (v = 0; v < p.kw; v++) {
		int64_t r = i * p.sh - p.pt + u * p.dh;
		int64_t q = j * p.sw - p.pl + v * p.dw;
		if (r < 0 || r >= oh || q < 0 || q >= ow)
			continue;
		ref[((bi * p.m + g * mg + mo) * oh + r) * ow + q] +=
		    x[((bi * p.c + g * cg + ci) * p.h + i) * p.w + j] *
		    w[(((g * cg + ci) * mg + mo) * p.kh + u) * p.kw + v];
	}
	check_space(&t, ref, nsamples, 4000 + p.c, what);
	check_illegal(&t, what, "algo", 2, NULL, 0);
	free(ref);
	aoe_graph_free(t.g);
}

/*
 * Pooling, element-wise, normalisation and data movement.
 */

static void
test_pool(int maxpool, int64_t c, int64_t h, int64_t w, int64_t k,
    int64_t s, int64_t pad, int nsamples)
{
	tg t;
	int64_t oh = (h + 2 * pad - k) / s + 1, ow = (w + 2 * pad - k) / s + 1;
	int64_t ch, i, j, u, v;
	const float *x;
	float *ref;
	char what[128];

	snprintf(what, sizeof(what), "%s %lldx%lldx%lld k%lld s%lld p%lld",
	    maxpool ? "MaxPool" : "AveragePool", (long long)c, (long long)h,
	    (long long)w, (long long)k, (long long)s, (long long)pad);
	tg_new(&t, "pool");
	tg_input(&t, 0, 4, (int64_t[]){ 1, c, h, w });
	tg_node(&t, maxpool ? "MaxPool" : "AveragePool");
	attr_is(&t, "kernel_shape", 2, (int64_t[]){ k, k });
	attr_is(&t, "strides", 2, (int64_t[]){ s, s });
	attr_is(&t, "pads", 4, (int64_t[]){ pad, pad, pad, pad });
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	x = data(&t, 0);
	ref = aoe_xcalloc((size_t)numel_y(&t), sizeof(float));
	for (ch = 0; ch < c; ch++)
		for (i = 0; i < oh; i++)
			for (j = 0; j < ow; j++) {
				double acc = maxpool ? -INFINITY : 0;
				int cnt = 0;
				for (u = 0; u < k; u++)
					for (v = 0; v < k; v++) {
						int64_t r = i * s - pad + u;
						int64_t q = j * s - pad + v;
						if (r < 0 || r >= h || q < 0 ||
						    q >= w)
							continue;
						double e = x[(ch * h + r) * w +
						    q];
						cnt++;
						if (maxpool)
							acc = e > acc ? e : acc;
						else
							acc += e;
					}
				ref[(ch * oh + i) * ow + j] = (float)(maxpool ?
				    acc : acc / cnt);
			}
	check_space(&t, ref, nsamples, 5000 + h, what);
	check_illegal(&t, what, "tile", 5, NULL, 0);
	free(ref);
	aoe_graph_free(t.g);
}

static void
test_elem(int nsamples)
{
	tg t;
	int64_t i, j, l, n = 100003;
	const float *a, *b;
	float *ref;

	/* A broadcast chain: (3,1,7) + (5,1). */
	tg_new(&t, "add");
	tg_input(&t, 0, 3, (int64_t[]){ 3, 1, 7 });
	tg_input(&t, 0, 2, (int64_t[]){ 5, 1 });
	tg_node(&t, "Add");
	if (tg_prepare(&t) == 0) {
		a = data(&t, 0);
		b = data(&t, 1);
		ref = aoe_xcalloc(105, sizeof(float));
		for (i = 0; i < 3; i++)
			for (j = 0; j < 5; j++)
				for (l = 0; l < 7; l++)
					ref[(i * 5 + j) * 7 + l] = a[i * 7 + l] +
					    b[j];
		check_space(&t, ref, nsamples, 6001, "Add (3,1,7)+(5,1)");
		check_illegal(&t, "Add", "par", 3, NULL, 0);
		check_illegal(&t, "Add", "tile", 1024, NULL, 0);
		free(ref);
	} else
		ok(0, "Add: prepare");
	aoe_graph_free(t.g);

	tg_new(&t, "sigmoid");
	tg_input(&t, 0, 2, (int64_t[]){ 1, n });
	tg_node(&t, "Sigmoid");
	if (tg_prepare(&t) == 0) {
		a = data(&t, 0);
		ref = aoe_xcalloc((size_t)n, sizeof(float));
		for (i = 0; i < n; i++)
			ref[i] = (float)(1 / (1 + exp(-(double)a[i])));
		check_space(&t, ref, nsamples, 6002, "Sigmoid 100003");
		check_illegal(&t, "Sigmoid", "vec", 2, NULL, 0);
		free(ref);
	} else
		ok(0, "Sigmoid: prepare");
	aoe_graph_free(t.g);
}

static void
test_norm(int nsamples)
{
	tg t;
	int64_t o, i, q;
	const float *x;
	float *ref;

	/* Softmax over a middle axis: the tiled path. */
	tg_new(&t, "softmax");
	tg_input(&t, 0, 3, (int64_t[]){ 3, 7, 1031 });
	tg_node(&t, "Softmax");
	attr_i(&t, "axis", 1);
	if (tg_prepare(&t) == 0) {
		x = data(&t, 0);
		ref = aoe_xcalloc(3 * 7 * 1031, sizeof(float));
		for (o = 0; o < 3; o++)
			for (q = 0; q < 1031; q++) {
				double s = 0;
				for (i = 0; i < 7; i++)
					s += exp(x[(o * 7 + i) * 1031 + q]);
				for (i = 0; i < 7; i++)
					ref[(o * 7 + i) * 1031 + q] = (float)(
					    exp(x[(o * 7 + i) * 1031 + q]) / s);
			}
		check_space(&t, ref, nsamples, 7001, "Softmax axis 1 of "
		    "3x7x1031");
		check_illegal(&t, "Softmax", "tile", 2048, NULL, 0);
		free(ref);
	} else
		ok(0, "Softmax: prepare");
	aoe_graph_free(t.g);

	tg_new(&t, "reducemean");
	tg_input(&t, 0, 3, (int64_t[]){ 4, 33, 9 });
	tg_node(&t, "ReduceMean");
	attr_is(&t, "axes", 1, (int64_t[]){ 1 });
	if (tg_prepare(&t) == 0) {
		x = data(&t, 0);
		ref = aoe_xcalloc(4 * 9, sizeof(float));
		for (o = 0; o < 4; o++)
			for (q = 0; q < 9; q++) {
				double s = 0;
				for (i = 0; i < 33; i++)
					s += x[(o * 33 + i) * 9 + q];
				ref[o * 9 + q] = (float)(s / 33);
			}
		check_space(&t, ref, nsamples, 7002, "ReduceMean axis 1 of "
		    "4x33x9");
		free(ref);
	} else
		ok(0, "ReduceMean: prepare");
	aoe_graph_free(t.g);
}

static void
test_transpose(int nsamples)
{
	tg t;
	int64_t d[4] = { 2, 3, 37, 41 }, a, b, c, e;
	const float *x;
	float *ref;

	tg_new(&t, "transpose");
	tg_input(&t, 0, 4, d);
	tg_node(&t, "Transpose");
	attr_is(&t, "perm", 4, (int64_t[]){ 0, 2, 3, 1 });
	if (tg_prepare(&t) < 0) {
		ok(0, "Transpose: prepare");
		aoe_graph_free(t.g);
		return;
	}
	x = data(&t, 0);
	ref = aoe_xcalloc(2 * 3 * 37 * 41, sizeof(float));
	for (a = 0; a < 2; a++)
		for (b = 0; b < 3; b++)
			for (c = 0; c < 37; c++)
				for (e = 0; e < 41; e++)
					ref[((a * 37 + c) * 41 + e) * 3 + b] =
					    x[((a * 3 + b) * 37 + c) * 41 + e];
	check_space(&t, ref, nsamples, 8001, "Transpose 2x3x37x41 (0,2,3,1)");
	check_illegal(&t, "Transpose", "tile", 12, NULL, 0);
	free(ref);
	aoe_graph_free(t.g);
}

/* The space API itself: enumeration, sampling, mutation. */
static void
test_api(void)
{
	tg t;
	aoe_space sp;
	aoe_sched s, s2;
	uint64_t i, size, legal = 0, seed = 42, base = 0, mult = 1, low = 1;
	int agree = 1, differ = 1, j, inlow = 1;
	char why[128];

	tg_new(&t, "api");
	tg_input(&t, 0, 4, (int64_t[]){ 1, 8, 19, 23 });
	tg_input(&t, 1, 4, (int64_t[]){ 8, 8, 3, 3 });
	tg_node(&t, "Conv");
	attr_is(&t, "pads", 4, (int64_t[]){ 1, 1, 1, 1 });
	if (tg_prepare(&t) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "api: space");
		aoe_graph_free(t.g);
		return;
	}
	size = aoe_space_size(&sp);
	ok(size > 1000, "the Conv space has %llu points",
	    (unsigned long long)size);
	/*
	 * The first knobs vary fastest: 20000 consecutive points from the
	 * one where each later knob is at its default (where the first
	 * 20000 would leave them at their first values, mostly illegal).
	 */
	for (j = 0; j < sp.nknobs; j++) {
		uint64_t c = (uint64_t)aoe_knob_count(&sp.knobs[j]);
		if (inlow && low * c <= 20000)
			low *= c;
		else {
			inlow = 0;
			base += mult * (uint64_t)aoe_knob_index(&sp.knobs[j],
			    sp.knobs[j].def);
		}
		mult *= c;
	}
	for (i = 0; i < low && i < 20000; i++) {
		int r = aoe_space_point(&sp, base + i, &s);
		if (r < 0 || (r == 1) != (aoe_space_validate(&sp, &s, why,
		    sizeof(why)) == 0))
			agree = 0;
		legal += r == 1;
	}
	ok(agree && legal > 0 && legal < i, "enumeration marks %llu of %llu "
	    "points legal, as validate does", (unsigned long long)legal,
	    (unsigned long long)i);
	ok(aoe_space_point(&sp, size, &s) == -AOE_EDATA,
	    "an index past the end is refused");
	for (j = 0; j < 50; j++) {
		if (aoe_space_sample(&sp, &seed, &s) < 0 ||
		    aoe_space_mutate(&sp, &seed, &s, &s2) < 0 ||
		    aoe_space_validate(&sp, &s2, NULL, 0) < 0 ||
		    memcmp(&s, &s2, sizeof(s)) == 0)
			differ = 0;
	}
	ok(differ, "mutations of samples are legal and differ");
	seed = 7;
	aoe_space_sample(&sp, &seed, &s);
	seed = 7;
	aoe_space_sample(&sp, &seed, &s2);
	ok(memcmp(&s, &s2, sizeof(s)) == 0, "a seed gives the same sample");
	aoe_graph_free(t.g);
}

/*
 * The sampler is uniform over the legal points (issue 19 item 7): a
 * chi-square of many draws against equal counts, on hand-made spaces
 * whose constraint holds knobs at their defaults unless another knob has
 * one value (as Conv's algorithms do).  Chi-square critical values at
 * p = 0.001.
 */
static int
held_check(const aoe_space *sp, const aoe_sched *s, char *why, size_t len)
{
	int i;

	/* Knobs 1.. at 0 unless k0 is 3; with hold2, k2.. at 0 always. */
	for (i = 1; i < sp->nknobs; i++) {
		int64_t v = aoe_sched_get(s, sp->knobs[i].name, 0);
		if (v != 0 && (aoe_sched_get(s, "k0", 0) != 3 ||
		    (sp->fact[0] && i >= 2))) {
			snprintf(why, len, "%s held", sp->knobs[i].name);
			return -1;
		}
	}
	return 0;
}

static void
chi_square(int nknobs, int nvals, int hold2, int draws, double crit,
    const char *what)
{
	static int64_t vals[8] = { 0, 1, 2, 3, 4, 5, 6, 7 };
	aoe_space sp;
	aoe_sched s;
	uint64_t seed = 12345, size, idx, c;
	int64_t *count, nlegal = 0, ndef = 0;
	double chi = 0, e;
	int i, j, bad = 0;

	memset(&sp, 0, sizeof(sp));
	snprintf(sp.op_type, sizeof(sp.op_type), "Test");
	for (i = 0; i < nknobs; i++) {
		aoe_knob *k = &sp.knobs[sp.nknobs++];
		snprintf(k->name, sizeof(k->name), "k%d", i);
		k->nvals = nvals;
		memcpy(k->vals, vals, sizeof(int64_t) * nvals);
	}
	sp.check = held_check;
	sp.fact[0] = hold2;
	size = aoe_space_size(&sp);
	count = calloc(size, sizeof(int64_t));
	for (i = 0; i < draws; i++) {
		if (aoe_space_sample(&sp, &seed, &s) < 0 ||
		    aoe_space_validate(&sp, &s, NULL, 0) < 0) {
			bad++;
			continue;
		}
		/* The index of s (first knob fastest, as aoe_space_point). */
		for (idx = 0, c = 1, j = 0; j < nknobs; j++) {
			const aoe_knob *k = &sp.knobs[j];
			idx += (uint64_t)aoe_knob_index(k,
			    aoe_sched_get(&s, k->name, 0)) * c;
			c *= (uint64_t)k->nvals;
		}
		count[idx]++;
	}
	for (idx = 0; idx < size; idx++)
		if (aoe_space_point(&sp, idx, &s) == 1)
			nlegal++;
		else if (count[idx])
			bad++;
	e = (double)draws / (double)nlegal;
	for (idx = 0; idx < size; idx++)
		if (aoe_space_point(&sp, idx, &s) == 1)
			chi += (count[idx] - e) * (count[idx] - e) / e;
	ndef = count[0];
	ok(!bad && chi < crit, "sample is uniform over the legal points "
	    "(%s): %lld legal of %llu, %d draws, chi-square %.1f < %.1f, "
	    "the default %lld times (expected %.0f)", what, (long long)nlegal,
	    (unsigned long long)size, draws, chi, crit, (long long)ndef, e);
	free(count);
}

int
main(void)
{
	aoe_run_opts_init(&opts);
	opts.nthreads = 2;
	opts.use_bank = 0;

	test_api();
	/* 19 legal of 64: rejection (df 18). */
	chi_square(3, 4, 0, 19000, 42.3, "3 knobs of 4 values");
	/* 7 legal of 4^10: the walk (df 6). */
	chi_square(10, 4, 1, 7000, 22.5, "10 knobs of 4 values, 7 legal");
	/* 7 legal of 4^7 = 16384: enumeration (df 6). */
	chi_square(7, 4, 1, 1400, 22.5, "7 knobs of 4 values, 7 legal, "
	    "enumerated");
	test_gemm(0, 0, 1, 1, 1, 1, 0, 0, 1, 0, 4);
	test_gemm(1, 0, 7, 13, 5, 0, 0, 0, 1, 0, 12);
	test_gemm(0, 1, 97, 131, 389, 1, 1, 131, 1, 1, 16);
	test_gemm(0, 0, 200, 53, 701, 1, 200, 53, 0.5f, 2, 16);
	test_gemm(1, 1, 61, 389, 37, 0, 1, 1, 1, 1, 12);
	test_matmul(3, 17, 31, 29, 0, 12);
	test_matmul(2, 41, 67, 401, 1, 12);
	test_matmul(1, 1, 67, 13, 1, 4);
	test_conv("3x3 p1 2x5x7x11 -> 13", (cspec){ 2, 5, 7, 11, 13, 3, 3, 1,
	    1, 1, 1, 1, 1, 1, 1, 1 }, 16, 1);
	test_conv("1x1 17x5x3 -> 7", (cspec){ 1, 17, 5, 3, 7, 1, 1, 1,
	    1, 1, 1, 1, 0, 0, 0, 0 }, 16, 1);
	test_conv("depthwise 3x3 s2 11x9x9", (cspec){ 1, 11, 9, 9, 11, 3, 3,
	    11, 2, 2, 1, 1, 1, 1, 1, 1 }, 12, 1);
	test_conv("grouped 3x2 s3 d2 odd pads", (cspec){ 1, 6, 13, 11, 10, 3,
	    2, 2, 3, 3, 2, 2, 2, 0, 1, 3 }, 16, 1);
	test_conv("5x5 s4 p4 3x13x13 -> 5", (cspec){ 1, 3, 13, 13, 5, 5, 5, 1,
	    4, 4, 1, 1, 4, 4, 4, 4 }, 12, 1);
	test_conv("all ones", (cspec){ 1, 1, 1, 1, 1, 1, 1, 1,
	    1, 1, 1, 1, 0, 0, 0, 0 }, 8, 0);
	test_conv("3x3 64x15x15 -> 37 (K > kc)", (cspec){ 1, 64, 15, 15, 37,
	    3, 3, 1, 1, 1, 1, 1, 1, 1, 1, 1 }, 16, 1);
	test_conv("1x1 s2 3x32x17x17 -> 19", (cspec){ 3, 32, 17, 17, 19, 1, 1,
	    1, 2, 2, 1, 1, 0, 0, 0, 0 }, 12, 1);
	/* Strided and dilated shapes whose strips cross output rows. */
	test_conv("3x3 s2 p1 5x29x29 -> 11", (cspec){ 2, 5, 29, 29, 11, 3, 3,
	    1, 2, 2, 1, 1, 1, 1, 1, 1 }, 8, 1);
	test_conv("3x3 s2 p1 64x13x13 -> 19 (K > kc)", (cspec){ 1, 64, 13,
	    13, 19, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1 }, 8, 0);
	test_conv("3x3 s2 4x13x7 -> 9 (4-wide rows)", (cspec){ 1, 4, 13, 7,
	    9, 3, 3, 1, 2, 2, 1, 1, 1, 1, 1, 1 }, 8, 0);
	test_conv("3x3 s2 p1 g2 6x14x14 -> 4 (7-wide rows)", (cspec){ 2, 6,
	    14, 14, 4, 3, 3, 2, 2, 2, 1, 1, 1, 1, 1, 1 }, 8, 0);
	test_conv("3x3 s3 d2 3x13x13 -> 6", (cspec){ 1, 3, 13, 13, 6, 3, 3, 1,
	    3, 3, 2, 2, 2, 1, 0, 3 }, 8, 0);
	test_conv("3x1 s2 w1 6x17x1 -> 7", (cspec){ 1, 6, 17, 1, 7, 3, 1, 1,
	    2, 1, 1, 1, 1, 0, 1, 0 }, 8, 0);
	test_conv("3x3 s2x1 pads > kernel 3x7x1 -> 5", (cspec){ 1, 3, 7, 1,
	    5, 3, 3, 1, 2, 1, 1, 1, 4, 5, 4, 6 }, 8, 0);
	test_conv("2x3 s1x4 d1x3 2x11x31 -> 3", (cspec){ 1, 2, 11, 31, 3, 2,
	    3, 1, 1, 4, 1, 3, 0, 2, 1, 2 }, 8, 0);
	test_conv("3x3 s1 p1 5x13x13 -> 7", (cspec){ 1, 5, 13, 13, 7, 3, 3, 1,
	    1, 1, 1, 1, 1, 1, 1, 1 }, 8, 0);
	test_convt("3x3 s2 p1 g2 6x5x7 -> 4", (cspec){ 2, 6, 5, 7, 4, 3, 3, 2,
	    2, 2, 1, 1, 1, 1, 1, 1 }, 12);
	test_pool(1, 3, 13, 17, 3, 2, 1, 8);
	test_pool(0, 2, 9, 7, 2, 2, 1, 8);
	test_pool(1, 1, 1, 1, 1, 1, 0, 4);
	test_elem(8);
	test_norm(8);
	test_transpose(8);
	return done_testing();
}
