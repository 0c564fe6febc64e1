/*
 * unit-part - TAP tests that every way of splitting a Conv or a GEMM
 * between threads gives the plain reference's result: the GEMM's thread
 * grid (knob "par": auto, rows, columns), Conv's threads over images or
 * inside each GEMM ("batch_par"), one thread by choice ("nthreads"), and
 * each algorithm's own split (implicit im2col's column split, the
 * transposed GEMM's split of its way back, Winograd's tile blocks or
 * channel blocks), at 1, 2 and 3 threads, on shapes whose output channels
 * and output positions are not multiples of the split nor of the vector
 * width; then schedules sampled from each node's space at 3 threads.
 * Also MaxPool and AveragePool (lib/kernels/k_pool.c, split over planes,
 * the last few outputs of a row as a whole vector) against a reference
 * over random kernels, strides, dilations, pads and ceil mode, output
 * rows 1 to 30 wide, at 1, 2 and 3 threads.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "tap.h"
#include "kernel.h"
#include "onenode.h"

typedef struct ccase {
	int64_t n, c, m, h, w, k, s, p;
	int res;		/* a fused residual (input 3) */
} ccase;

static int64_t
outd(int64_t in, const ccase *q)
{
	return (in + 2 * q->p - q->k) / q->s + 1;
}

/* A Conv (+ Relu, + residual) node for case q, prepared, inputs filled. */
static int
conv_node(tg *t, const ccase *q)
{
	const int64_t xd[] = { q->n, q->c, q->h, q->w };
	const int64_t wd[] = { q->m, q->c, q->k, q->k }, bd[] = { q->m };
	const int64_t rd[] = { q->n, q->m, outd(q->h, q), outd(q->w, q) };
	const int64_t ks[] = { q->k, q->k }, st[] = { q->s, q->s };
	const int64_t pd[] = { q->p, q->p, q->p, q->p };

	tg_new(t, "part");
	tg_input(t, 0, 4, xd);
	tg_input(t, 1, 4, wd);
	tg_input(t, 1, 1, bd);
	if (q->res)
		tg_input(t, 0, 4, rd);
	tg_node(t, "Conv");
	attr_is(t, "kernel_shape", 2, ks);
	attr_is(t, "strides", 2, st);
	attr_is(t, "pads", 4, pd);
	if (q->res)
		attr_i(t, "_aoe_add", 3);
	attr_i(t, "_aoe_act", AOE_ACT_RELU);
	return tg_prepare(t);
}

/* The output against a double-precision reference: 1 if close. */
static int
conv_matches(tg *t, const ccase *q, const char *what)
{
	const float *x = data(t, 0), *w = data(t, 1), *b = data(t, 2);
	const float *r = q->res ? data(t, 3) : NULL;
	const float *y = t->g->tensors[t->y]->data;
	int64_t oh = outd(q->h, q), ow = outd(q->w, q), i, o, u, v, c, a, e;

	for (i = 0; i < q->n; i++)
		for (o = 0; o < q->m; o++)
			for (u = 0; u < oh; u++)
				for (v = 0; v < ow; v++) {
					int64_t at = ((i * q->m + o) * oh + u) *
					    ow + v;
					double s = b[o], want;
					for (c = 0; c < q->c; c++)
						for (a = 0; a < q->k; a++)
							for (e = 0; e < q->k;
							    e++) {
								int64_t yy = u *
								    q->s - q->p +
								    a, xx = v *
								    q->s - q->p +
								    e;
								if (yy < 0 || yy >=
								    q->h || xx <
								    0 || xx >=
								    q->w)
									continue;
								s += (double)w[
								    ((o * q->c +
								    c) * q->k +
								    a) * q->k +
								    e] * x[((i *
								    q->c + c) *
								    q->h + yy) *
								    q->w + xx];
							}
					if (r)
						s += r[at];
					want = s < 0 ? 0 : s;
					if (!(fabs(y[at] - want) <= 1e-4 * (q->c *
					    q->k * q->k + 4) * (1 + fabs(want)))) {
						printf("# %s: at n%lld c%lld "
						    "(%lld,%lld): %g, want %g\n",
						    what, (long long)i,
						    (long long)o, (long long)u,
						    (long long)v, y[at], want);
						return 0;
					}
				}
	return 1;
}

/* Run at 1, 2 and 3 threads; 1 if every run matches. */
static int
runs_match(tg *t, const ccase *q, const char *what)
{
	int th;

	for (th = 1; th <= 3; th++) {
		opts.nthreads = th;
		memset(t->g->tensors[t->y]->data, 0xff, sizeof(float) *
		    (size_t)numel_y(t));
		if (aoe_graph_run(t->g, &opts) < 0) {
			printf("# %s: run at %d threads failed\n", what, th);
			return 0;
		}
		if (!conv_matches(t, q, what)) {
			printf("# at %d threads\n", th);
			return 0;
		}
	}
	return 1;
}

/* The splits each algorithm can take, as knob settings. */
static const struct split {
	const char *name;
	const char *knob[2];
	int64_t val[2];
} splits[] = {
	{ "default", { NULL, NULL }, { 0, 0 } },
	{ "grid auto", { "par", NULL }, { 0, 0 } },
	{ "grid rows", { "par", NULL }, { 1, 0 } },
	{ "grid columns", { "par", NULL }, { 2, 0 } },
	{ "inside each GEMM", { "batch_par", NULL }, { 0, 0 } },
	{ "over images", { "batch_par", NULL }, { 1, 0 } },
	{ "over images, rows", { "batch_par", "par" }, { 1, 1 } },
	{ "inside, columns", { "batch_par", "par" }, { 0, 2 } },
	{ "one thread", { "nthreads", NULL }, { 1, 0 } },
};

static const char *const algos[] = { "", "1x1", "implicit", "im2col",
    "depthwise", "winograd", "im2col^T", "blocked" };

/*
 * Case q under algorithm algo and every split the space allows: each
 * legal one must match at 1, 2 and 3 threads; at least one must be legal.
 */
static void
conv_splits(const ccase *q, int algo)
{
	tg t;
	aoe_space sp;
	char what[200], why[200];
	size_t i;
	int legal = 0, good = 1;

	snprintf(what, sizeof(what), "%s %lldx%lld/%lld p%lld %lld>%lld "
	    "@%lldx%lld n%lld%s", algos[algo], (long long)q->k,
	    (long long)q->k, (long long)q->s, (long long)q->p,
	    (long long)q->c, (long long)q->m, (long long)q->h,
	    (long long)q->w, (long long)q->n, q->res ? " +residual" : "");
	if (conv_node(&t, q) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "%s: prepares", what);
		aoe_graph_free(t.g);
		return;
	}
	for (i = 0; i < sizeof(splits) / sizeof(splits[0]) && good; i++) {
		aoe_sched s = sp.def;
		int j;

		aoe_sched_set(&s, "algo", algo);
		for (j = 0; j < 2; j++)
			if (splits[i].knob[j])
				aoe_sched_set(&s, splits[i].knob[j],
				    splits[i].val[j]);
		if (aoe_space_validate(&sp, &s, why, sizeof(why)) < 0)
			continue;
		if (aoe_space_apply(t.g, t.n, &s) < 0) {
			printf("# %s, %s: apply failed\n", what,
			    splits[i].name);
			good = 0;
			break;
		}
		legal++;
		if (!runs_match(&t, q, what)) {
			printf("# split: %s\n", splits[i].name);
			good = 0;
		}
	}
	if (legal == 0)
		skip("no legal split", "%s", what);
	else
		ok(good, "%s: %d splits match at 1, 2, 3 threads", what,
		    legal);
	aoe_graph_free(t.g);
}

/* Schedules sampled from a case's space, each at 1, 2 and 3 threads. */
static void
conv_sampled(const ccase *q, uint64_t *seed)
{
	tg t;
	aoe_space sp;
	aoe_sched s;
	char what[160];
	int j, good = 1;

	snprintf(what, sizeof(what), "%lldx%lld/%lld %lld>%lld @%lldx%lld "
	    "n%lld, 6 sampled schedules", (long long)q->k, (long long)q->k,
	    (long long)q->s, (long long)q->c, (long long)q->m,
	    (long long)q->h, (long long)q->w, (long long)q->n);
	if (conv_node(&t, q) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "%s: prepares", what);
		aoe_graph_free(t.g);
		return;
	}
	for (j = 0; j < 6 && good; j++) {
		if (aoe_space_sample(&sp, seed, &s) < 0 ||
		    aoe_space_apply(t.g, t.n, &s) < 0) {
			good = 0;
			break;
		}
		if (!runs_match(&t, q, what)) {
			printf("# schedule algo=%lld par=%lld batch_par=%lld "
			    "nthreads=%lld\n",
			    (long long)aoe_sched_get(&s, "algo", -1),
			    (long long)aoe_sched_get(&s, "par", -1),
			    (long long)aoe_sched_get(&s, "batch_par", -1),
			    (long long)aoe_sched_get(&s, "nthreads", -1));
			good = 0;
		}
	}
	ok(good, "%s", what);
	aoe_graph_free(t.g);
}

/*
 * aoe_sgemm at every grid (knob par) and 1, 2 and 3 threads, m and n not
 * multiples of the micro-kernel's rows or columns, against a reference.
 */
static void
gemm_grids(int64_t m, int64_t n, int64_t k)
{
	float *a = malloc(sizeof(float) * (size_t)(m * k));
	float *b = malloc(sizeof(float) * (size_t)(k * n));
	float *c = malloc(sizeof(float) * (size_t)(m * n));
	double *ref = malloc(sizeof(double) * (size_t)(m * n));
	int64_t i, j, p, par;
	int th, good = 1;

	for (i = 0; i < m * k; i++)
		a[i] = frand();
	for (i = 0; i < k * n; i++)
		b[i] = frand();
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double s = 0;
			for (p = 0; p < k; p++)
				s += (double)a[i * k + p] * b[p * n + j];
			ref[i * n + j] = s;
		}
	for (par = 0; par <= 2 && good; par++)
		for (th = 1; th <= 3 && good; th++) {
			aoe_sched s;

			memset(&s, 0, sizeof(s));
			aoe_sched_set(&s, "par", par);
			memset(c, 0xff, sizeof(float) * (size_t)(m * n));
			if (aoe_sgemm(0, 0, m, n, k, 1, a, k, b, n, 0, c, n,
			    th, &s) < 0) {
				good = 0;
				break;
			}
			for (i = 0; i < m * n && good; i++)
				if (!(fabs(c[i] - ref[i]) <= 1e-5 * (k + 4) *
				    (1 + fabs(ref[i])))) {
					printf("# par %lld, %d threads: at "
					    "(%lld,%lld) %g, want %g\n",
					    (long long)par, th,
					    (long long)(i / n),
					    (long long)(i % n), c[i], ref[i]);
					good = 0;
				}
		}
	ok(good, "sgemm %lldx%lldx%lld: every grid at 1, 2, 3 threads",
	    (long long)m, (long long)n, (long long)k);
	free(a);
	free(b);
	free(c);
	free(ref);
}

/* A 2-D MaxPool or AveragePool case. */
typedef struct pcase {
	int64_t n, c, h, w, k[2], s[2], d[2], pb[2], pe[2];
	int avg, ceil, cip;
} pcase;

static int64_t
pool_out(const pcase *q, int a)
{
	int64_t in = a ? q->w : q->h;
	int64_t span = in + q->pb[a] + q->pe[a] - ((q->k[a] - 1) * q->d[a] +
	    1);
	int64_t o = (q->ceil ? (span + q->s[a] - 1) / q->s[a] : span /
	    q->s[a]) + 1;

	/* ceil mode: the last window must start inside the input or left pad */
	if (q->ceil && (o - 1) * q->s[a] >= in + q->pb[a])
		o--;
	return o;
}

static void
pool_case(const pcase *q, const char *what)
{
	const int64_t xd[] = { q->n, q->c, q->h, q->w };
	const int64_t pads[] = { q->pb[0], q->pb[1], q->pe[0], q->pe[1] };
	int64_t oh = pool_out(q, 0), ow = pool_out(q, 1), i, u, v, a, b;
	const float *x, *y;
	tg t;
	int th, good = 1;

	tg_new(&t, "pool");
	tg_input(&t, 0, 4, xd);
	tg_node(&t, q->avg ? "AveragePool" : "MaxPool");
	attr_is(&t, "kernel_shape", 2, q->k);
	attr_is(&t, "strides", 2, q->s);
	attr_is(&t, "pads", 4, pads);
	if (!q->avg)
		attr_is(&t, "dilations", 2, q->d);
	attr_i(&t, "ceil_mode", q->ceil);
	if (q->avg)
		attr_i(&t, "count_include_pad", q->cip);
	if (tg_prepare(&t) < 0 || numel_y(&t) != q->n * q->c * oh * ow) {
		ok(0, "%s: prepares, %lldx%lld out", what, (long long)oh,
		    (long long)ow);
		aoe_graph_free(t.g);
		return;
	}
	x = data(&t, 0);
	y = t.g->tensors[t.y]->data;
	for (th = 1; th <= 3 && good; th++) {
		opts.nthreads = th;
		memset(t.g->tensors[t.y]->data, 0xff, sizeof(float) *
		    (size_t)numel_y(&t));
		if (aoe_graph_run(t.g, &opts) < 0) {
			good = 0;
			break;
		}
		for (i = 0; i < q->n * q->c && good; i++)
			for (u = 0; u < oh && good; u++)
				for (v = 0; v < ow && good; v++) {
					double m = -INFINITY, s = 0, want;
					int64_t cnt = 0, cntp = 0;
					for (a = 0; a < q->k[0]; a++)
						for (b = 0; b < q->k[1]; b++) {
							int64_t yy = u * q->s[0] -
							    q->pb[0] + a * q->d[0];
							int64_t xx = v * q->s[1] -
							    q->pb[1] + b * q->d[1];
							if (yy < q->h + q->pe[0] &&
							    xx < q->w + q->pe[1])
								cntp++;
							if (yy < 0 || yy >= q->h ||
							    xx < 0 || xx >= q->w)
								continue;
							float e = x[(i * q->h +
							    yy) * q->w + xx];
							if (e > m)
								m = e;
							s += e;
							cnt++;
						}
					want = q->avg ? s / (q->cip ? cntp : cnt) :
					    m;
					if (!(fabs(y[(i * oh + u) * ow + v] - want) <=
					    1e-5 * (1 + fabs(want)))) {
						printf("# %s, %d threads: at plane "
						    "%lld (%lld,%lld): %g, want "
						    "%g\n", what, th, (long long)i,
						    (long long)u, (long long)v,
						    y[(i * oh + u) * ow + v], want);
						good = 0;
					}
				}
	}
	ok(good, "%s: %lldx%lld out at 1, 2, 3 threads", what, (long long)oh,
	    (long long)ow);
	aoe_graph_free(t.g);
}

static int64_t
irand(int64_t lo, int64_t hi)
{
	int64_t v = lo + (int64_t)((frand() + 1) / 2 * (double)(hi - lo + 1));

	return v > hi ? hi : v;
}

/* Random pools, and squeezenet1_1's 3x3/2 ceil-mode ones. */
static void
pool_cases(void)
{
	static const int64_t sq[][2] = { { 64, 111 }, { 128, 55 },
	    { 256, 27 } };
	char what[400];
	int r;

	for (r = 0; r < 3; r++) {
		pcase q = { 1, sq[r][0], sq[r][1], sq[r][1], { 3, 3 },
		    { 2, 2 }, { 1, 1 }, { 0, 0 }, { 0, 0 }, 0, 1, 0 };
		snprintf(what, sizeof(what), "MaxPool 3x3/2 ceil %lld @%lld",
		    (long long)q.c, (long long)q.h);
		pool_case(&q, what);
	}
	for (r = 0; r < 24; r++) {
		pcase q;
		int a;

		memset(&q, 0, sizeof(q));
		q.n = irand(1, 2);
		q.c = irand(1, 9);
		q.h = irand(1, 40);
		q.w = irand(1, 64);
		q.avg = r % 3 == 2;
		q.ceil = r % 2;
		q.cip = r % 4 == 2;
		for (a = 0; a < 2; a++) {
			int64_t in = a ? q.w : q.h;
			q.k[a] = irand(1, in < 5 ? in : 5);
			q.s[a] = irand(1, 3);
			q.d[a] = q.avg ? 1 : irand(1, 2);
			if ((q.k[a] - 1) * q.d[a] + 1 > in)
				q.d[a] = 1;
			q.pb[a] = irand(0, q.k[a] / 2);
			q.pe[a] = irand(0, q.k[a] / 2);
		}
		snprintf(what, sizeof(what), "%s %lldx%lld/%lld,%lld d%lld,%lld "
		    "p%lld,%lld,%lld,%lld%s%s %lldx%lld n%lld c%lld",
		    q.avg ? "AveragePool" : "MaxPool", (long long)q.k[0],
		    (long long)q.k[1], (long long)q.s[0], (long long)q.s[1],
		    (long long)q.d[0], (long long)q.d[1], (long long)q.pb[0],
		    (long long)q.pb[1], (long long)q.pe[0], (long long)q.pe[1],
		    q.ceil ? " ceil" : "", q.cip ? " cip" : "",
		    (long long)q.h, (long long)q.w, (long long)q.n,
		    (long long)q.c);
		pool_case(&q, what);
	}
}

int
main(void)
{
	/*
	 * Output channels 13, 37, 70 and output planes 7x9, 11x13, 25x27
	 * and the like: no multiple of 2, 3, 8 or 16, so that every split
	 * leaves a ragged piece.
	 */
	static const ccase pw[] = {
		{ 1, 40, 70, 7, 9, 1, 1, 0, 0 },
		{ 1, 19, 37, 25, 27, 1, 1, 0, 1 },
		{ 2, 24, 13, 11, 13, 1, 1, 0, 0 },
		{ 1, 300, 37, 13, 13, 1, 1, 0, 0 },
	};
	static const ccase gen[] = {
		{ 1, 5, 37, 25, 27, 3, 1, 1, 0 },
		{ 1, 3, 70, 45, 47, 3, 2, 0, 0 },
		{ 2, 12, 13, 13, 11, 3, 1, 1, 1 },
		{ 1, 33, 70, 9, 7, 3, 1, 1, 1 },
		{ 1, 7, 37, 21, 23, 5, 2, 2, 0 },
	};
	/*
	 * The transposed GEMM's way back goes on 2 and 3 threads from
	 * 2 x 8192 and 3 x 8192 values: 403 channels x 63 positions.
	 */
	static const ccase ds[] = {
		{ 1, 40, 70, 14, 13, 1, 2, 0, 1 },
		{ 2, 33, 37, 9, 11, 1, 2, 0, 0 },
		{ 1, 40, 403, 14, 18, 1, 2, 0, 1 },
		{ 1, 64, 403, 7, 9, 3, 1, 1, 1 },
	};
	/*
	 * Pointwise Convs by the GEMM turned round (algo 6 reading the
	 * input in place): ragged blocks of 8 channels and of 8 positions
	 * in the vector transpose back, its threads from 2 x 8192 values.
	 */
	static const ccase pwt[] = {
		{ 1, 40, 403, 7, 9, 1, 1, 0, 1 },
		{ 2, 17, 64, 7, 7, 1, 1, 0, 1 },
		{ 1, 130, 96, 5, 3, 1, 1, 0, 0 },
	};
	uint64_t seed = 11;
	size_t i;

	for (i = 0; i < sizeof(pw) / sizeof(pw[0]); i++) {
		conv_splits(&pw[i], 1);
		conv_splits(&pw[i], 6);
	}
	for (i = 0; i < sizeof(pwt) / sizeof(pwt[0]); i++) {
		conv_splits(&pwt[i], 1);
		conv_splits(&pwt[i], 6);
	}
	for (i = 0; i < sizeof(gen) / sizeof(gen[0]); i++) {
		conv_splits(&gen[i], 2);
		conv_splits(&gen[i], 3);
		conv_splits(&gen[i], 6);
		if (gen[i].k == 3 && gen[i].s == 1)
			conv_splits(&gen[i], 5);
	}
	for (i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) {
		conv_splits(&ds[i], 6);
		conv_splits(&ds[i], 3);
	}
	for (i = 0; i < sizeof(gen) / sizeof(gen[0]); i++)
		conv_sampled(&gen[i], &seed);
	for (i = 0; i < sizeof(ds) / sizeof(ds[0]); i++)
		conv_sampled(&ds[i], &seed);
	gemm_grids(37, 70, 33);
	gemm_grids(13, 301, 129);
	gemm_grids(301, 13, 64);
	gemm_grids(100, 100, 300);
	pool_cases();
	return done_testing();
}
