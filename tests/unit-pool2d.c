/*
 * unit-pool2d.c - 2-D float32 MaxPool and AveragePool in NCHW
 * (lib/kernels/k_pool.c) against a naive reference: random planes (odd,
 * 1-pixel, wider than a vector or two), kernels 1 to 4 (3x3/2 and 2x2/2
 * often, the cases vec=2 deinterleaves), strides 1 to 3, dilations,
 * asymmetric pads, ceil_mode, count_include_pad, batches of 1 to 3
 * images of 1 to 70 channels, under every "vec" (0 the N-D path, 1 the
 * separable kernel, 2 rows first) with random "tile" and "par", at 1 and
 * 2 threads; then squeezenet1_1's and resnet18's MaxPools at the
 * default, and schedules sampled from the op's space.  Run under
 * AOE_MAX_ISA=avx2 too (unit-pool2d-avx2.t).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"
#include "onenode.h"

/* A whole number in [lo, hi], from the seeded source. */
static int64_t
irand(int64_t lo, int64_t hi)
{
	int64_t v = lo + (int64_t)((frand() + 1) / 2 * (double)(hi - lo + 1));

	return v > hi ? hi : v;
}

struct pc {
	int avg, cip, ceil;
	int64_t n, c, h, w, k[2], s[2], d[2], p[4];
};

/* The pool of x into y (dims oh x ow a plane), naively, in doubles. */
static void
reference(const struct pc *q, const float *x, float *y, int64_t oh,
    int64_t ow)
{
	int64_t pl, i, j, a, b;

	for (pl = 0; pl < q->n * q->c; pl++)
		for (i = 0; i < oh; i++)
			for (j = 0; j < ow; j++) {
				double acc = q->avg ? 0 : -INFINITY;
				int64_t cnt = 0, ch = 0, cw = 0;
				for (a = 0; a < q->k[0]; a++) {
					int64_t ih = i * q->s[0] - q->p[0] +
					    a * q->d[0];
					ch += q->cip ? ih >= -q->p[0] &&
					    ih < q->h + q->p[2] : ih >= 0 &&
					    ih < q->h;
					for (b = 0; b < q->k[1]; b++) {
						int64_t iw = j * q->s[1] -
						    q->p[1] + b * q->d[1];
						double v;
						if (a == 0)
							cw += q->cip ? iw >=
							    -q->p[1] && iw <
							    q->w + q->p[3] :
							    iw >= 0 && iw < q->w;
						if (ih < 0 || ih >= q->h ||
						    iw < 0 || iw >= q->w)
							continue;
						v = x[(pl * q->h + ih) * q->w +
						    iw];
						cnt++;
						if (q->avg)
							acc += v;
						else if (v > acc)
							acc = v;
					}
				}
				if (q->avg)
					acc = cnt ? acc / (double)(ch * cw) : NAN;
				y[(pl * oh + i) * ow + j] = (float)acc;
			}
}

static int
same(float a, float b, int avg)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (!avg)
		return a == b;
	return fabs((double)a - b) <= 1e-5 * (1 + fabs((double)b));
}

static int
build(tg *t, const struct pc *q)
{
	tg_new(t, "pool");
	tg_input(t, 0, 4, (int64_t[]){ q->n, q->c, q->h, q->w });
	tg_node(t, q->avg ? "AveragePool" : "MaxPool");
	attr_is(t, "kernel_shape", 2, q->k);
	attr_is(t, "strides", 2, q->s);
	if (q->d[0] > 1 || q->d[1] > 1)
		attr_is(t, "dilations", 2, q->d);
	attr_is(t, "pads", 4, q->p);
	attr_i(t, "ceil_mode", q->ceil);
	if (q->avg)
		attr_i(t, "count_include_pad", q->cip);
	return tg_prepare(t);
}

/*
 * The node under schedule s (NULL: its default) at 1 and 2 threads
 * against the reference; the number of wrong elements, the first shown.
 */
static int64_t
check(tg *t, const struct pc *q, const aoe_sched *s, const char *what)
{
	aoe_tensor *y = t->g->tensors[t->y];
	int64_t ny = numel_y(t), i, bad = 0;
	float *ref = aoe_xcalloc((size_t)ny + 1, sizeof(float));
	int th;

	reference(q, data(t, 0), ref, y->dims[2], y->dims[3]);
	if (s != NULL && aoe_space_apply(t->g, t->n, s) < 0) {
		printf("# %s: schedule refused\n", what);
		free(ref);
		return 1;
	}
	for (th = 1; th <= 2; th++) {
		opts.nthreads = th;
		memset(y->data, 0xff, aoe_tensor_nbytes(y));
		if (aoe_graph_run(t->g, &opts) < 0) {
			free(ref);
			return 1;
		}
		for (i = 0; i < ny; i++)
			if (!same(((float *)y->data)[i], ref[i], q->avg) &&
			    bad++ == 0)
				printf("# %s, %d threads, vec %lld tile %lld "
				    "par %lld: element %lld is %.9g, not "
				    "%.9g\n", what, th,
				    (long long)aoe_sched_get(&t->n->sched,
				    "vec", -1),
				    (long long)aoe_sched_get(&t->n->sched,
				    "tile", -1),
				    (long long)aoe_sched_get(&t->n->sched,
				    "par", -1), (long long)i,
				    ((float *)y->data)[i], ref[i]);
	}
	free(ref);
	return bad;
}

static void
describe(const struct pc *q, char *buf, size_t len)
{
	snprintf(buf, len, "%s %lldx%lldx%lldx%lld k%lldx%lld s%lldx%lld "
	    "d%lldx%lld pads %lld,%lld,%lld,%lld ceil %d cip %d",
	    q->avg ? "AveragePool" : "MaxPool", (long long)q->n,
	    (long long)q->c, (long long)q->h, (long long)q->w,
	    (long long)q->k[0], (long long)q->k[1], (long long)q->s[0],
	    (long long)q->s[1], (long long)q->d[0], (long long)q->d[1],
	    (long long)q->p[0], (long long)q->p[1], (long long)q->p[2],
	    (long long)q->p[3], q->ceil, q->cip);
}

/* A random pool whose windows fit the padded input. */
static void
random_pool(struct pc *q)
{
	static const int64_t hw[] = { 1, 2, 3, 7, 8, 13, 16, 17, 31, 33, 55,
	    56, 67, 111 };
	int i, common;

	do {
		memset(q, 0, sizeof(*q));
		q->avg = irand(0, 2) == 0;
		q->cip = q->avg ? (int)irand(0, 1) : 0;
		q->ceil = (int)irand(0, 1);
		q->n = irand(1, 3);
		q->c = irand(1, 70);
		q->h = hw[irand(0, 13)];
		q->w = irand(0, 2) ? q->h : hw[irand(0, 13)];
		common = irand(0, 2) != 0;
		for (i = 0; i < 2; i++) {
			q->k[i] = common ? (i ? q->k[0] : irand(2, 3)) :
			    irand(1, 4);
			q->s[i] = common ? 2 : irand(1, 3);
			q->d[i] = !common && irand(0, 5) == 0 ? 2 : 1;
			q->p[i] = irand(0, q->k[i] - 1);
			q->p[2 + i] = irand(0, q->k[i] - 1);
		}
	} while (q->h + q->p[0] + q->p[2] < (q->k[0] - 1) * q->d[0] + 1 ||
	    q->w + q->p[1] + q->p[3] < (q->k[1] - 1) * q->d[1] + 1 ||
	    q->n * q->c * q->h * q->w > 400000);
}

int
main(void)
{
	static const int64_t tiles[] = { 0, 4, 8, 16, 32, 64 };
	/* squeezenet1_1's MaxPools (ceil_mode) and resnet18's (pads 1). */
	static const int64_t models[][4] = { { 64, 111, 0, 1 },
	    { 128, 55, 0, 1 }, { 256, 27, 0, 1 }, { 64, 112, 1, 0 } };
	int i, v, nbad = 0, ncase = 0;
	int64_t bad;
	char what[256];
	aoe_sched s;
	unsigned f;
	tg t;

	for (i = 0; i < 150; i++) {
		struct pc q;
		random_pool(&q);
		describe(&q, what, sizeof(what));
		if (build(&t, &q) < 0) {
			ok(0, "%s: prepare", what);
			continue;
		}
		for (v = 0; v <= 2; v++) {
			memset(&s, 0, sizeof(s));
			aoe_sched_set(&s, "par", irand(0, 3) ? 4096 : 0);
			aoe_sched_set(&s, "vec", v);
			aoe_sched_set(&s, "tile", tiles[irand(0, 5)]);
			/* The finest split "par" allows: 2 threads. */
			if (aoe_sched_get(&s, "par", 0) && irand(0, 1))
				aoe_sched_set(&s, "par", 4096);
			ncase++;
			if ((bad = check(&t, &q, &s, what)) != 0) {
				nbad++;
				printf("# %s, vec %d: %lld wrong\n", what, v,
				    (long long)bad);
			}
		}
		aoe_graph_free(t.g);
	}
	ok(nbad == 0, "%d random 2-D pools under vec 0, 1 and 2, random tile "
	    "and par, at 1 and 2 threads, match the reference", ncase);
	for (f = 0; f < sizeof(models) / sizeof(models[0]); f++) {
		struct pc q;
		memset(&q, 0, sizeof(q));
		q.n = 1;
		q.c = models[f][0];
		q.h = q.w = models[f][1];
		q.k[0] = q.k[1] = 3;
		q.s[0] = q.s[1] = 2;
		q.d[0] = q.d[1] = 1;
		q.p[0] = q.p[1] = q.p[2] = q.p[3] = models[f][2];
		q.ceil = (int)models[f][3];
		for (v = 0; v < 2; v++) {
			q.avg = v;
			describe(&q, what, sizeof(what));
			if (build(&t, &q) < 0) {
				ok(0, "%s: prepare", what);
				continue;
			}
			ok(aoe_sched_get(&t.n->sched, "vec", -1) ==
			    (q.p[0] ? 1 : 2) && check(&t, &q, NULL, what) == 0,
			    "%s: the default (vec=%d) matches", what,
			    q.p[0] ? 1 : 2);
			aoe_graph_free(t.g);
		}
	}
	/* Schedules sampled from the space. */
	{
		struct pc q = { 0, 0, 1, 2, 5, 19, 23, { 3, 3 }, { 2, 2 },
		    { 1, 1 }, { 1, 0, 1, 1 } };
		aoe_space sp;
		uint64_t seed = 11;
		int runs = 0, vecs[3] = { 0, 0, 0 };

		bad = 0;
		for (v = 0; v < 2; v++) {
			q.avg = v;
			describe(&q, what, sizeof(what));
			if (build(&t, &q) < 0 || aoe_space_for(t.g, t.n,
			    &sp) < 0) {
				bad++;
				continue;
			}
			for (i = 0; i < 12; i++) {
				if (aoe_space_sample(&sp, &seed, &s) < 0)
					continue;
				vecs[aoe_sched_get(&s, "vec", 0) % 3]++;
				bad += check(&t, &q, &s, what) != 0;
				runs++;
			}
			aoe_graph_free(t.g);
		}
		ok(bad == 0 && vecs[2] > 0 && runs >= 20, "%d schedules "
		    "sampled from MaxPool's and AveragePool's spaces (%d with "
		    "vec=2) match at 1 and 2 threads", runs, vecs[2]);
	}
	return done_testing();
}
