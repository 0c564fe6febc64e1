/*
 * unit-gemm512 - TAP tests of the GEMM micro-kernel shapes, the AVX-512
 * ones above all: every shape the CPU can run, on awkward shapes (sizes
 * 1, primes, K deeper than kc, N no strip width divides, transposed
 * operands), through aoe_sgemm() and through the Gemm, MatMul and Conv
 * operators (C broadcast, alpha and beta, batches, prepacked operands,
 * Conv's own B packer), against a naive reference at 1 and 2 threads.
 * Where AVX-512 cannot run (the CPU lacks it, or AOE_MAX_ISA=avx2) its
 * tests are skipped, and the search spaces must neither offer nor accept
 * its shapes.
 */
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "aoe.h"
#include "kernel.h"
#include "tap.h"
#include "onenode.h"


static float *
rnd_buf(int64_t n)
{
	float *p = aoe_xcalloc((size_t)(n > 0 ? n : 1), sizeof(float));
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = frand();
	return p;
}

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

/* The micro-kernel shapes, and whether each needs AVX-512. */
static const struct shape {
	int mr, nr, wide;
} shapes[] = {
	{ 6, 16, 0 }, { 4, 24, 0 },
	{ 14, 32, 1 }, { 12, 32, 1 }, { 8, 48, 1 }, { 6, 64, 1 },
};
#define NSHAPES ((int)(sizeof(shapes) / sizeof(shapes[0])))

static int have512;

/*
 * Naive op(A) op(B) * alpha + beta C0 (C0 m x n, or NULL), in double.
 */
static void
ref_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, float alpha,
    const float *a, int64_t lda, const float *b, int64_t ldb, float beta,
    const float *c0, float *y)
{
	int64_t i, j, p;

	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			double s = 0;
			for (p = 0; p < k; p++)
				s += (double)(ta ? a[p * lda + i] :
				    a[i * lda + p]) * (tb ? b[j * ldb + p] :
				    b[p * ldb + j]);
			s *= alpha;
			if (c0)
				s += (double)beta * c0[i * n + j];
			y[i * n + j] = (float)s;
		}
}

/* Blocking variants tried with every shape: the edges of each knob. */
static const struct variant {
	int mcmul, kc, nc, par, packb, apf, packa, cpf;
} variants[] = {
	{ 1, 64, 192, 1, 1, 0, 0, 0 },
	{ 12, 256, 3072, 0, -1, 512, -1, 1 },
	{ 4, 128, 384, 2, 0, 1024, 1, -1 },
	{ 7, 1024, 768, 0, 1, 256, 0, 1 },
};
#define NVARIANTS ((int)(sizeof(variants) / sizeof(variants[0])))

static void
sched_of(const struct shape *sh, const struct variant *v, aoe_sched *s)
{
	memset(s, 0, sizeof(*s));
	aoe_sched_set(s, "mr", sh->mr);
	aoe_sched_set(s, "nr", sh->nr);
	aoe_sched_set(s, "mc", sh->mr * v->mcmul);
	aoe_sched_set(s, "kc", v->kc);
	aoe_sched_set(s, "nc", v->nc);
	aoe_sched_set(s, "par", v->par);
	aoe_sched_set(s, "packb", v->packb);
	aoe_sched_set(s, "apf", v->apf);
	aoe_sched_set(s, "packa", v->packa);
	aoe_sched_set(s, "cpf", v->cpf);
}

/*
 * aoe_sgemm() with every blocking variant, both transpositions, at 1
 * and 2 threads, for one shape: C = alpha op(A) op(B) + beta C, with
 * leading dimensions wider than the operands.
 */
static void
test_sgemm(const struct shape *sh, int64_t m, int64_t n, int64_t k)
{
	int64_t lda, ldb, ldc = n + 3, i;
	float *a, *b, *c0, *c, *ref, *cm;
	aoe_sched s;
	double worst = 0;
	int ta, tb, v, th, bad = 0, runs = 0;
	char what[128];

	snprintf(what, sizeof(what), "sgemm %lldx%lldx%lld, %dx%d",
	    (long long)m, (long long)n, (long long)k, sh->mr, sh->nr);
	if (sh->wide && !have512) {
		skip("no AVX-512", "%s", what);
		return;
	}
	a = rnd_buf((m + 5) * (k + 5));
	b = rnd_buf((k + 5) * (n + 5));
	c0 = rnd_buf(m * n);
	ref = aoe_xcalloc((size_t)(m * n), sizeof(float));
	c = aoe_xcalloc((size_t)(m * ldc), sizeof(float));
	cm = aoe_xcalloc((size_t)(m * n), sizeof(float));
	for (ta = 0; ta < 2 && !bad; ta++)
	for (tb = 0; tb < 2 && !bad; tb++) {
		float alpha = ta ? 0.5f : 1.0f, beta = tb ? 2.0f : 0.0f;
		lda = (ta ? m : k) + 5;
		ldb = (tb ? k : n) + 5;
		ref_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c0,
		    ref);
		for (v = 0; v < NVARIANTS && !bad; v++) {
			sched_of(sh, &variants[v], &s);
			for (th = 1; th <= 2 && !bad; th++) {
				for (i = 0; i < m; i++)
					memcpy(c + i * ldc, c0 + i * n,
					    sizeof(float) * n);
				if (aoe_sgemm(ta, tb, m, n, k, alpha, a, lda,
				    b, ldb, beta, c, ldc, th, &s) < 0)
					bad = 1;
				for (i = 0; i < m; i++)
					memcpy(cm + i * n, c + i * ldc,
					    sizeof(float) * n);
				if (bad || !close_to(cm, ref, m * n, &worst)) {
					printf("# ta=%d tb=%d variant %d "
					    "threads %d: error %g\n", ta, tb,
					    v, th, worst);
					bad = 1;
				}
				runs++;
			}
		}
	}
	ok(!bad, "%s matches the reference (%d runs)", what, runs);
	free(a);
	free(b);
	free(c0);
	free(c);
	free(cm);
	free(ref);
}

/*
 * aoe_sgemm_ex with a fused epilogue that has a bias by column (a MatMul's
 * fused bias, which the micro-kernels add as they store): every kind,
 * with and without a residual, each blocking variant, at 1 and 2
 * threads, against the product made without it and then aoe_epi_row on
 * each row.
 */
static void
test_epi_col(const struct shape *sh, int64_t m, int64_t n, int64_t k)
{
	float *a = rnd_buf(m * k), *b = rnd_buf(k * n), *pc = rnd_buf(n);
	float *d = rnd_buf(m * n), *c = aoe_xcalloc((size_t)(m * n),
	    sizeof(float));
	float *ref = aoe_xcalloc((size_t)(m * n), sizeof(float));
	double worst = 0;
	int kind, res, v, th, bad = 0, runs = 0;
	int64_t i;
	aoe_sched s;
	char what[128];

	snprintf(what, sizeof(what), "sgemm %lldx%lldx%lld, %dx%d, epilogues "
	    "with a bias by column", (long long)m, (long long)n,
	    (long long)k, sh->mr, sh->nr);
	if (sh->wide && !have512) {
		skip("no AVX-512", "%s", what);
		goto out;
	}
	for (kind = AOE_EPI_CLAMP; kind <= AOE_EPI_GELU_TANH && !bad; kind++)
		for (res = 0; res < 2 && !bad; res++)
			for (v = 0; v < NVARIANTS && !bad; v++)
				for (th = 1; th <= 2 && !bad; th++) {
					aoe_gemm_ex x;
					memset(&x, 0, sizeof(x));
					sched_of(sh, &variants[v], &s);
					x.m = m;
					x.n = n;
					x.k = k;
					x.alpha = 1;
					x.a = a;
					x.lda = k;
					x.b = b;
					x.ldb = n;
					x.c = ref;
					x.ldc = n;
					if (aoe_sgemm_ex(&x, th, &s) < 0)
						bad = 1;
					x.e.kind = kind;
					x.e.lo = kind ? -FLT_MAX : -0.5f;
					x.e.hi = kind ? FLT_MAX : 0.75f;
					x.e.pc = pc;
					for (i = 0; i < m; i++)
						aoe_epi_row(&x.e, i, ref + i * n,
						    res ? d + i * n : NULL, n);
					x.c = c;
					x.epi = 1;
					x.add = res ? d : NULL;
					if (aoe_sgemm_ex(&x, th, &s) < 0 ||
					    !close_to(c, ref, m * n, &worst)) {
						printf("# kind %d residual %d "
						    "variant %d threads %d: error "
						    "%g\n", kind, res, v, th,
						    worst);
						bad = 1;
					}
					runs++;
				}
	ok(!bad, "%s match the product then the epilogue (%d runs)", what,
	    runs);
out:
	free(a);
	free(b);
	free(pc);
	free(d);
	free(c);
	free(ref);
}

/* Whether the space offers value v of knob name. */
static int
has(const aoe_space *sp, const char *name, int64_t v)
{
	const aoe_knob *k = aoe_space_knob(sp, name);

	return k != NULL && aoe_knob_index(k, v) >= 0;
}

/*
 * Run the node under schedules of every shape (with the smallest mc
 * that suits it, the smallest kc and the default, prepack off and on
 * where the space has it, and the extra knob, when named, at each of its
 * values) at 1 and 2 threads: each must be legal and match ref.
 */
/* A knob check_shapes sets first when named (algo=6, say). */
static const char *base_knob;
static int64_t base_val;

static void
check_shapes(tg *t, const float *ref, const char *what, const char *extra,
    int nextra, const int64_t *extras)
{
	const aoe_tensor *y = t->g->tensors[t->y];
	const aoe_knob *k;
	int64_t ny = aoe_tensor_numel(y), kcs[2], mc;
	aoe_space sp;
	aoe_sched s;
	char why[256];
	double worst;
	int i, j, kci, pp, e, th, bad, runs;

	if (aoe_space_for(t->g, t->n, &sp) < 0 ||
	    (k = aoe_space_knob(&sp, "kc")) == NULL) {
		ok(0, "%s: space", what);
		return;
	}
	kcs[0] = aoe_knob_value(k, 0);
	kcs[1] = k->def;
	for (i = 0; i < NSHAPES; i++) {
		if (shapes[i].wide && !have512) {
			skip("no AVX-512", "%s, %dx%d", what, shapes[i].mr,
			    shapes[i].nr);
			continue;
		}
		if (!has(&sp, "mr", shapes[i].mr) ||
		    !has(&sp, "nr", shapes[i].nr)) {
			skip("a matrix-vector product has one schedule",
			    "%s, %dx%d", what, shapes[i].mr, shapes[i].nr);
			continue;
		}
		k = aoe_space_knob(&sp, "mc");
		mc = k->def;
		for (j = k->nvals - 1; j >= 0; j--)
			if (k->vals[j] % shapes[i].mr == 0)
				mc = k->vals[j];
		bad = runs = 0;
		for (kci = 0; kci < 2 && !bad; kci++)
		for (pp = 0; pp < 2 && !bad; pp++)
		for (e = 0; e < (extra ? nextra : 1) && !bad; e++) {
			s = sp.def;
			if (base_knob != NULL)
				aoe_sched_set(&s, base_knob, base_val);
			aoe_sched_set(&s, "mr", shapes[i].mr);
			aoe_sched_set(&s, "nr", shapes[i].nr);
			aoe_sched_set(&s, "mc", mc);
			aoe_sched_set(&s, "kc", kcs[kci]);
			if (has(&sp, "prepack", pp))
				aoe_sched_set(&s, "prepack", pp);
			if (extra && has(&sp, extra, extras[e]))
				aoe_sched_set(&s, extra, extras[e]);
			if (aoe_space_validate(&sp, &s, why, sizeof(why)) < 0 ||
			    aoe_space_apply(t->g, t->n, &s) < 0) {
				printf("# %dx%d kc %lld prepack %d: illegal: "
				    "%s\n", shapes[i].mr, shapes[i].nr,
				    (long long)kcs[kci], pp, why);
				bad = 1;
				break;
			}
			for (th = 1; th <= 2; th++) {
				opts.nthreads = th;
				memset(y->data, 0xff, (size_t)ny *
				    sizeof(float));
				if (aoe_graph_run(t->g, &opts) < 0 ||
				    !close_to(y->data, ref, ny, &worst)) {
					printf("# %dx%d kc %lld prepack %d "
					    "%s %lld threads %d: error %g\n",
					    shapes[i].mr, shapes[i].nr,
					    (long long)kcs[kci], pp,
					    extra ? extra : "",
					    extra ? (long long)extras[e] : 0,
					    th, worst);
					bad = 1;
					break;
				}
				runs++;
			}
		}
		ok(!bad, "%s, %dx%d: matches the reference (%d runs)", what,
		    shapes[i].mr, shapes[i].nr, runs);
	}
	opts.nthreads = 2;
}

/* Gemm with C of shape cm x cn broadcast, alpha, beta, transposes. */
static void
test_gemm(int ta, int tb, int64_t m, int64_t n, int64_t k, int bconst,
    int cm, int cn, float alpha, float beta)
{
	/* The A prefetch (apf) at off, short and long distances. */
	static const int64_t apfs[] = { 0, 256, 1024 };
	tg t;
	int64_t da[2], db[2], dc[2] = { cm, cn }, i, j;
	float *ref, *c0 = NULL;
	char what[128];

	snprintf(what, sizeof(what), "Gemm %lldx%lldx%lld ta=%d tb=%d C %dx%d"
	    "%s", (long long)m, (long long)n, (long long)k, ta, tb, cm, cn,
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
	if (cm) {
		c0 = aoe_xcalloc((size_t)(m * n), sizeof(float));
		for (i = 0; i < m; i++)
			for (j = 0; j < n; j++)
				c0[i * n + j] = data(&t, 2)[(cm > 1 ? i : 0) *
				    cn + (cn > 1 ? j : 0)];
	}
	ref = aoe_xcalloc((size_t)(m * n), sizeof(float));
	ref_gemm(ta, tb, m, n, k, alpha, data(&t, 0), ta ? m : k,
	    data(&t, 1), tb ? k : n, beta, c0, ref);
	check_shapes(&t, ref, what, "apf", 3, apfs);
	/* C's tiles asked for for writing: auto (-1), never, always. */
	{
		static const int64_t cpfs[] = { -1, 0, 1 };
		char w1[160];

		snprintf(w1, sizeof(w1), "%s cpf", what);
		check_shapes(&t, ref, w1, "cpf", 3, cpfs);
	}
	/* A transposed: read in place (auto, 0) and packed (1). */
	if (ta) {
		static const int64_t packas[] = { -1, 0, 1 };
		char w2[160];

		snprintf(w2, sizeof(w2), "%s packa", what);
		check_shapes(&t, ref, w2, "packa", 3, packas);
	}
	free(c0);
	free(ref);
	aoe_graph_free(t.g);
}

/*
 * Batched MatMul: A nb2 x nb x m x k, B nb x k x n (or k x n, constant,
 * when bconst), both batch_par ways.
 */
static void
test_matmul(int64_t nb2, int64_t nb, int64_t m, int64_t n, int64_t k,
    int bconst)
{
	static const int64_t bpar[] = { 0, 1 };
	tg t;
	int64_t b, nbt = nb2 * nb;
	float *ref;
	char what[128];

	snprintf(what, sizeof(what), "MatMul %lldx%lldx%lldx%lldx%lld%s",
	    (long long)nb2, (long long)nb, (long long)m, (long long)n,
	    (long long)k, bconst ? " const B" : "");
	tg_new(&t, "MatMul");
	tg_input(&t, 0, 4, (int64_t[]){ nb2, nb, m, k });
	if (bconst)
		tg_input(&t, 1, 2, (int64_t[]){ k, n });
	else
		tg_input(&t, 0, 3, (int64_t[]){ nb, k, n });
	tg_node(&t, "MatMul");
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	ref = aoe_xcalloc((size_t)(nbt * m * n), sizeof(float));
	for (b = 0; b < nbt; b++)
		ref_gemm(0, 0, m, n, k, 1, data(&t, 0) + b * m * k, k,
		    data(&t, 1) + (bconst ? 0 : b % nb * k * n), n, 0, NULL,
		    ref + b * m * n);
	check_shapes(&t, ref, what, bconst ? NULL : "batch_par", 2, bpar);
	free(ref);
	aoe_graph_free(t.g);
}

/* Conv 2-D (square kernel kk, stride 1, pad p) by each GEMM algorithm. */
static void
test_conv(int64_t c, int64_t h, int64_t w, int64_t m, int64_t kk, int64_t p)
{
	static const int64_t algos1[] = { 1, 2, 3, 6 }, algos[] = { 2, 3, 6 };
	/* Y^T's A (the columns, transposed) in place (auto, 0), packed. */
	static const int64_t packas[] = { -1, 0, 1 };
	tg t;
	int64_t oh = h + 2 * p - kk + 1, ow = w + 2 * p - kk + 1;
	int64_t mo, i, j, ci, u, v;
	const float *x, *wt, *bs;
	float *ref;
	char what[128];

	snprintf(what, sizeof(what), "Conv %lldx%lld p%lld %lldx%lldx%lld -> "
	    "%lld", (long long)kk, (long long)kk, (long long)p, (long long)c,
	    (long long)h, (long long)w, (long long)m);
	tg_new(&t, "Conv");
	tg_input(&t, 0, 4, (int64_t[]){ 1, c, h, w });
	tg_input(&t, 1, 4, (int64_t[]){ m, c, kk, kk });
	tg_input(&t, 1, 1, (int64_t[]){ m });
	tg_node(&t, "Conv");
	attr_is(&t, "pads", 4, (int64_t[]){ p, p, p, p });
	if (tg_prepare(&t) < 0) {
		ok(0, "%s: prepare", what);
		aoe_graph_free(t.g);
		return;
	}
	x = data(&t, 0);
	wt = data(&t, 1);
	bs = data(&t, 2);
	ref = aoe_xcalloc((size_t)(m * oh * ow), sizeof(float));
	for (mo = 0; mo < m; mo++)
		for (i = 0; i < oh; i++)
			for (j = 0; j < ow; j++) {
				double s = bs[mo];
				for (ci = 0; ci < c; ci++)
				for (u = 0; u < kk; u++)
				for (v = 0; v < kk; v++) {
					int64_t r = i - p + u, q = j - p + v;
					if (r < 0 || r >= h || q < 0 || q >= w)
						continue;
					s += (double)x[(ci * h + r) * w + q] *
					    wt[((mo * c + ci) * kk + u) * kk +
					    v];
				}
				ref[(mo * oh + i) * ow + j] = (float)s;
			}
	if (kk == 1 && p == 0)
		check_shapes(&t, ref, what, "algo", 4, algos1);
	else
		check_shapes(&t, ref, what, "algo", 3, algos);
	base_knob = "algo";
	base_val = 6;
	{
		char w2[160];

		snprintf(w2, sizeof(w2), "%s algo=6 packa", what);
		check_shapes(&t, ref, w2, "packa", 3, packas);
	}
	base_knob = NULL;
	/* packa is algo 6's alone: refused with another algo. */
	{
		aoe_space sp;
		aoe_sched q;
		char why[256];

		if (aoe_space_for(t.g, t.n, &sp) == 0) {
			memset(&q, 0, sizeof(q));
			aoe_sched_set(&q, "algo", 3);
			aoe_sched_set(&q, "packa", 1);
			ok(aoe_space_validate(&sp, &q, why, sizeof(why)) < 0,
			    "%s: packa=1 refused with algo=3", what);
			aoe_sched_set(&q, "algo", 6);
			ok(aoe_space_validate(&sp, &q, why, sizeof(why)) == 0,
			    "%s: packa=1 taken with algo=6", what);
		} else
			ok(0, "%s: space", what);
	}
	free(ref);
	aoe_graph_free(t.g);
}

/*
 * Where AVX-512 cannot run, the spaces hold only AVX2 shapes and refuse
 * the others with a reason; where it can, they offer it by default.
 */
static void
test_space(void)
{
	tg t;
	aoe_space sp;
	aoe_sched s;
	char why[256];
	int i, j, offered = 0, refused = 1;
	int64_t mr, nr;

	tg_new(&t, "Gemm");
	tg_input(&t, 0, 2, (int64_t[]){ 97, 389 });
	tg_input(&t, 1, 2, (int64_t[]){ 389, 131 });
	tg_node(&t, "Gemm");
	if (tg_prepare(&t) < 0 || aoe_space_for(t.g, t.n, &sp) < 0) {
		ok(0, "space: Gemm");
		aoe_graph_free(t.g);
		return;
	}
	for (i = 0; i < sp.nknobs; i++)
		for (j = 0; j < sp.knobs[i].nvals; j++)
			if ((strcmp(sp.knobs[i].name, "mr") == 0 &&
			    sp.knobs[i].vals[j] == 14) ||
			    (strcmp(sp.knobs[i].name, "nr") == 0 &&
			    sp.knobs[i].vals[j] == 32))
				offered++;
	mr = aoe_sched_get(&sp.def, "mr", 0);
	nr = aoe_sched_get(&sp.def, "nr", 0);
	if (have512) {
		ok(offered == 2, "the Gemm space offers 14x32");
		ok(mr == 14 && nr == 32, "the default micro-kernel is 14x32 "
		    "(%lldx%lld)", (long long)mr, (long long)nr);
	} else {
		ok(offered == 0, "the Gemm space offers no AVX-512 shape");
		ok(mr == 6 && nr == 16, "the default micro-kernel is 6x16 "
		    "(%lldx%lld)", (long long)mr, (long long)nr);
		for (i = 0; i < NSHAPES; i++) {
			if (!shapes[i].wide)
				continue;
			s = sp.def;
			aoe_sched_set(&s, "mr", shapes[i].mr);
			aoe_sched_set(&s, "nr", shapes[i].nr);
			if (aoe_space_validate(&sp, &s, why, sizeof(why)) !=
			    -AOE_EDATA || strstr(why, "AVX-512") == NULL ||
			    aoe_space_apply(t.g, t.n, &s) != -AOE_EDATA)
				refused = 0;
			printf("# %dx%d: %s\n", shapes[i].mr, shapes[i].nr,
			    why);
		}
		ok(refused, "validation refuses the AVX-512 shapes, saying "
		    "why");
	}
	aoe_graph_free(t.g);
}

/*
 * A schedule with an AVX-512 shape where it cannot run (a bank entry
 * from another machine) still computes, with the default shape.
 */
static void
test_fallback(void)
{
	int64_t m = 37, n = 53, k = 41;
	float *a = rnd_buf(m * k), *b = rnd_buf(k * n);
	float *c = rnd_buf(m * n), *ref = rnd_buf(m * n);
	aoe_sched s;
	double worst;

	if (have512) {
		skip("AVX-512 runs here", "an AVX-512 schedule runs without "
		    "AVX-512");
		goto out;
	}
	memset(&s, 0, sizeof(s));
	aoe_sched_set(&s, "mr", 14);
	aoe_sched_set(&s, "nr", 32);
	ref_gemm(0, 0, m, n, k, 1, a, k, b, n, 0, NULL, ref);
	ok(aoe_sgemm(0, 0, m, n, k, 1, a, k, b, n, 0, c, n, 2, &s) == 0 &&
	    close_to(c, ref, m * n, &worst), "an AVX-512 schedule runs "
	    "without AVX-512 (on the default shape)");
out:
	free(a);
	free(b);
	free(c);
	free(ref);
}

int
main(void)
{
	static const int64_t sizes[][3] = {
		{ 1, 1, 1 }, { 1, 701, 389 }, { 389, 1, 701 },
		{ 389, 701, 1 }, { 61, 1031, 389 }, { 1031, 37, 701 },
		{ 97, 131, 1031 }, { 14, 32, 7 }, { 29, 65, 300 },
		/* Last strips 1 to 4 wide for both AVX2 widths (col_edge). */
		{ 97, 49, 1031 }, { 61, 196, 389 }, { 389, 50, 97 },
		{ 29, 27, 300 },
	};
	const char *cap = getenv("AOE_MAX_ISA");
	int i, j;

	__builtin_cpu_init();
	have512 = __builtin_cpu_supports("avx512f") &&
	    !(cap != NULL && strcasecmp(cap, "avx2") == 0);
	printf("# AVX-512 %s\n", have512 ? "runs here" : cap != NULL &&
	    strcasecmp(cap, "avx2") == 0 ? "capped by AOE_MAX_ISA=avx2" :
	    "not on this CPU");
	aoe_run_opts_init(&opts);
	opts.nthreads = 2;
	opts.use_bank = 0;

	test_space();
	test_fallback();
	for (i = 0; i < NSHAPES; i++)
		for (j = 0; j < (int)(sizeof(sizes) / sizeof(sizes[0])); j++)
			test_sgemm(&shapes[i], sizes[j][0], sizes[j][1],
			    sizes[j][2]);
	for (i = 0; i < NSHAPES; i++) {
		test_epi_col(&shapes[i], 61, 196, 389);
		test_epi_col(&shapes[i], 29, 27, 300);
		test_epi_col(&shapes[i], 97, 49, 64);
	}
	test_gemm(0, 0, 61, 389, 701, 1, 1, 389, 0.5f, 2);
	test_gemm(1, 1, 97, 131, 389, 0, 97, 1, 1, 1);
	test_gemm(0, 1, 389, 67, 97, 1, 1, 1, 2, 0.5f);
	test_gemm(1, 0, 1, 701, 13, 1, 1, 701, 1, 1);
	test_gemm(0, 0, 33, 70, 1031, 1, 33, 70, 1, -1);
	test_matmul(2, 3, 17, 67, 29, 0);
	test_matmul(1, 3, 41, 131, 389, 1);
	test_matmul(2, 1, 1, 67, 13, 1);
	test_conv(19, 13, 11, 37, 3, 1);
	test_conv(70, 9, 23, 29, 1, 0);
	test_conv(64, 15, 15, 71, 3, 1);
	test_conv(64, 7, 7, 67, 1, 0);
	return done_testing();
}
