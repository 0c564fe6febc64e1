/*
 * kernels - how close the best point of each kernel's search space comes
 * to the best libraries on this machine.
 *
 * For GEMM and Conv shapes of resnet18, mobilenet_v2, PP-OCRv4 det and a
 * BERT-base encoder, at 1 and 2 threads, it times libaoe's default
 * schedule and the best schedule a random search of the space finds
 * within a time budget (AOE_BENCH_BUDGET seconds per shape and thread
 * count, default 4; the default schedule is always a candidate), and the
 * peers: OpenBLAS sgemm for GEMM, oneDNN convolution (direct, in its
 * preferred blocked layout, reorders not timed) for Conv.  It prints
 * GFLOP/s and the ratios against the peer, and the machine's AVX2/FMA
 * peak measured with a register-only FMA loop.  Conv GFLOP/s count the
 * direct convolution's FLOPs whatever the algorithm (Winograd does
 * fewer), so that every ratio is a ratio of times.  Arguments, if any,
 * select the rows whose model or shape contains one of them (e.g.
 * "resnet18" "3x3/1").  The peers are linked here only, never into
 * libaoe.
 *
 * AOE_BENCH_ALGO=n searches only Conv's algorithm n (the "best" columns
 * are then its best, even when slower than the default), and
 * AOE_BENCH_LAYOUT=8c gives each Conv an NCHW8c input and output, as
 * inside a blocked region (which runs algo 7 whatever the schedule), so
 * that no reorder is timed, as for oneDNN.
 *
 * AOE_BENCH_ISA picks the instruction set of both sides: avx2 (the
 * default) runs libaoe as on an AVX2-only machine (AOE_MAX_ISA=avx2) and
 * expects the peers capped likewise (OPENBLAS_CORETYPE=Haswell, which
 * OpenBLAS reads before main, and ONEDNN_MAX_CPU_ISA=AVX2, set here);
 * avx512 lets libaoe use its AVX-512 micro-kernels and the peers theirs
 * (run without OPENBLAS_CORETYPE), and adds the AVX-512 peak.
 */
#include <dnnl.h>
#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aoe.h"

void cblas_sgemm(int, int, int, int, int, int, float, const float *, int,
    const float *, int, float, float *, int);
void openblas_set_num_threads(int);
char *openblas_get_corename(void);
#define CblasRowMajor 101
#define CblasNoTrans 111

static double budget = 4;
static int only_algo;		/* AOE_BENCH_ALGO: search this Conv algo only */
static int blocked;		/* AOE_BENCH_LAYOUT=8c: Conv tensors NCHW8c */
static char **only;
static int nonly;

/* Whether the row of model and shape is selected by the arguments. */
static int
selected(const char *model, const char *shape)
{
	int i;

	if (nonly == 0)
		return 1;
	for (i = 0; i < nonly; i++)
		if (strstr(model, only[i]) != NULL ||
		    strstr(shape, only[i]) != NULL)
			return 1;
	return 0;
}

static double
now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Best seconds per call of fn over about `secs` seconds (at least 3). */
static double
timeit(int (*fn)(void *), void *arg, double secs)
{
	double best = 1e30, t0, t, start = now();
	int i;

	fn(arg);
	for (i = 0; i < 3 || now() - start < secs; i++) {
		t0 = now();
		if (fn(arg) < 0)
			return -1;
		t = now() - t0;
		if (t < best)
			best = t;
		if (i > 1000)
			break;
	}
	return best;
}

/* Peak: independent FMA chains in registers, on nthreads threads. */
static double
peak_gflops(int nthreads)
{
	double t0, t;
	long iters = 20000000;
	float sink = 0;

	t0 = now();
#pragma omp parallel num_threads(nthreads) reduction(+:sink)
	{
		__m256 b = _mm256_set1_ps(1.0000001f), c = _mm256_set1_ps(1e-7f);
		__m256 a0 = c, a1 = c, a2 = c, a3 = c, a4 = c, a5 = c, a6 = c;
		__m256 a7 = c, a8 = c, a9 = c, a10 = c, a11 = c;
		long i;

		for (i = 0; i < iters; i++) {
			a0 = _mm256_fmadd_ps(a0, b, c);
			a1 = _mm256_fmadd_ps(a1, b, c);
			a2 = _mm256_fmadd_ps(a2, b, c);
			a3 = _mm256_fmadd_ps(a3, b, c);
			a4 = _mm256_fmadd_ps(a4, b, c);
			a5 = _mm256_fmadd_ps(a5, b, c);
			a6 = _mm256_fmadd_ps(a6, b, c);
			a7 = _mm256_fmadd_ps(a7, b, c);
			a8 = _mm256_fmadd_ps(a8, b, c);
			a9 = _mm256_fmadd_ps(a9, b, c);
			a10 = _mm256_fmadd_ps(a10, b, c);
			a11 = _mm256_fmadd_ps(a11, b, c);
		}
		a0 = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1),
		    _mm256_add_ps(a2, a3)), _mm256_add_ps(_mm256_add_ps(a4,
		    a5), _mm256_add_ps(a6, a7)));
		a0 = _mm256_add_ps(a0, _mm256_add_ps(_mm256_add_ps(a8, a9),
		    _mm256_add_ps(a10, a11)));
		sink += _mm256_cvtss_f32(a0);
	}
	t = now() - t0;
	if (sink == 12345)
		puts("");
	return 2.0 * 8 * 12 * iters * nthreads / t / 1e9;
}

/* The same with 512-bit vectors (only called where AVX-512F runs). */
__attribute__((target("avx512f"))) static double
peak512_gflops(int nthreads)
{
	double t0, t;
	long iters = 20000000;
	float sink = 0;

	t0 = now();
#pragma omp parallel num_threads(nthreads) reduction(+:sink)
	{
		__m512 b = _mm512_set1_ps(1.0000001f);
		__m512 c = _mm512_set1_ps(1e-7f);
		__m512 a0 = c, a1 = c, a2 = c, a3 = c, a4 = c, a5 = c, a6 = c;
		__m512 a7 = c, a8 = c, a9 = c, a10 = c, a11 = c;
		long i;

		for (i = 0; i < iters; i++) {
			a0 = _mm512_fmadd_ps(a0, b, c);
			a1 = _mm512_fmadd_ps(a1, b, c);
			a2 = _mm512_fmadd_ps(a2, b, c);
			a3 = _mm512_fmadd_ps(a3, b, c);
			a4 = _mm512_fmadd_ps(a4, b, c);
			a5 = _mm512_fmadd_ps(a5, b, c);
			a6 = _mm512_fmadd_ps(a6, b, c);
			a7 = _mm512_fmadd_ps(a7, b, c);
			a8 = _mm512_fmadd_ps(a8, b, c);
			a9 = _mm512_fmadd_ps(a9, b, c);
			a10 = _mm512_fmadd_ps(a10, b, c);
			a11 = _mm512_fmadd_ps(a11, b, c);
		}
		a0 = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(a0, a1),
		    _mm512_add_ps(a2, a3)), _mm512_add_ps(_mm512_add_ps(a4,
		    a5), _mm512_add_ps(a6, a7)));
		a0 = _mm512_add_ps(a0, _mm512_add_ps(_mm512_add_ps(a8, a9),
		    _mm512_add_ps(a10, a11)));
		sink += _mm512_reduce_add_ps(a0);
	}
	t = now() - t0;
	if (sink == 12345)
		puts("");
	return 2.0 * 16 * 12 * iters * nthreads / t / 1e9;
}

static uint64_t rs = 12345;

static float
frand(void)
{
	rs ^= rs << 13;
	rs ^= rs >> 7;
	rs ^= rs << 17;
	return (float)((double)(rs >> 11) / 9007199254740992.0 * 2 - 1);
}

static void
fill(float *p, int64_t n)
{
	int64_t i;

	for (i = 0; i < n; i++)
		p[i] = frand();
}

/* A one-node libaoe graph. */
typedef struct bg {
	aoe_graph *g;
	aoe_node *n;
	aoe_run_opts o;
	int nin, in[3];
} bg;

static int
add_in(bg *b, int konst, int ndim, const int64_t *dims)
{
	char name[8];
	aoe_tensor *t;
	int i;

	snprintf(name, sizeof(name), "in%d", b->nin);
	i = aoe_graph_tensor(b->g, name);
	t = b->g->tensors[i];
	aoe_tensor_set(t, AOE_F32, ndim, dims);
	if (konst) {
		t->kind = AOE_T_CONST;
		aoe_tensor_alloc_const(t);
		fill(t->data, aoe_tensor_numel(t));
	} else {
		t->kind = AOE_T_INPUT;
		b->g->inputs[b->g->ninputs++] = i;
	}
	b->in[b->nin++] = i;
	return i;
}

static void
attr_is(aoe_node *n, const char *name, int c, const int64_t *v)
{
	aoe_attr *a = aoe_node_add_attr(n, name, AOE_A_INTS);

	a->n = c;
	a->ints = aoe_xcalloc((size_t)c, sizeof(int64_t));
	memcpy(a->ints, v, sizeof(int64_t) * c);
}

static int
bg_run(void *arg)
{
	bg *b = arg;

	return aoe_graph_run(b->g, &b->o);
}

static void
bg_finish(bg *b, const char *op, int nthreads)
{
	int y = aoe_graph_tensor(b->g, "y"), k, i;

	k = aoe_graph_add_node(b->g, "node", op, b->nin, b->in, 1, &y);
	b->g->outputs[b->g->noutputs++] = y;
	b->n = &b->g->nodes[k];
	(void)i;
	aoe_run_opts_init(&b->o);
	b->o.nthreads = nthreads;
	b->o.use_bank = 0;
}

static int
bg_prepare(bg *b)
{
	int i;

	if (aoe_graph_prepare(b->g, &b->o) < 0)
		return -1;
	for (i = 0; i < b->g->ninputs; i++) {
		aoe_tensor *t = b->g->tensors[b->g->inputs[i]];
		fill(t->data, aoe_tensor_numel(t));
	}
	return 0;
}

/*
 * Default and best-found seconds for the prepared node; prints the best
 * schedule to buf.
 */
static void
search(bg *b, double *tdef, double *tbest, char *buf, size_t len,
    int *tried)
{
	aoe_space sp;
	aoe_sched s, best;
	uint64_t seed = 1;
	double t, start;
	size_t o = 0;
	int i;

	*tdef = *tbest = -1;
	*tried = 0;
	if (aoe_space_for(b->g, b->n, &sp) < 0)
		return;
	aoe_space_apply(b->g, b->n, &sp.def);
	*tdef = timeit(bg_run, b, 0.2);
	best = sp.def;
	*tbest = *tdef;
	if (only_algo) {
		/* The algorithm with its other knobs at their defaults. */
		s = sp.def;
		aoe_sched_set(&s, "algo", only_algo);
		if (aoe_space_apply(b->g, b->n, &s) < 0)
			return;
		best = s;
		*tbest = timeit(bg_run, b, 0.2);
	}
	start = now();
	while (now() - start < budget) {
		if (aoe_space_sample(&sp, &seed, &s) < 0)
			break;
		if (only_algo && aoe_sched_get(&s, "algo", 0) != only_algo)
			continue;
		if (aoe_space_apply(b->g, b->n, &s) < 0)
			break;
		t = timeit(bg_run, b, 0.0);
		(*tried)++;
		if (t > 0 && t < *tbest * 1.02) {
			/* Re-time a promising point properly. */
			t = timeit(bg_run, b, 0.1);
			if (t > 0 && t < *tbest) {
				*tbest = t;
				best = s;
			}
		}
	}
	/* The default, re-timed beside the best for a fair ratio. */
	aoe_space_apply(b->g, b->n, &sp.def);
	*tdef = timeit(bg_run, b, 0.3);
	aoe_space_apply(b->g, b->n, &best);
	t = timeit(bg_run, b, 0.3);
	*tbest = t < *tdef || only_algo ? t : *tdef;
	if (t >= *tdef && !only_algo)
		best = sp.def;
	buf[0] = '\0';
	for (i = 0; i < best.n && o < len; i++)
		o += (size_t)snprintf(buf + o, len - o, "%s%s=%lld",
		    i ? "," : "", best.k[i].name, (long long)best.k[i].v);
}

/*
 * GEMM.
 */

typedef struct blas_arg {
	int m, n, k;
	float *a, *b, *c;
} blas_arg;

static int
blas_run(void *arg)
{
	blas_arg *x = arg;

	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, x->m, x->n,
	    x->k, 1, x->a, x->k, x->b, x->n, 0, x->c, x->n);
	return 0;
}

static void
bench_gemm(const char *model, int m, int n, int k, int nthreads)
{
	bg b;
	blas_arg x;
	double tdef, tbest, tpeer, fl = 2.0 * m * n * k / 1e9;
	char buf[512];
	int tried;

	if (!selected(model, "gemm"))
		return;
	memset(&b, 0, sizeof(b));
	b.g = aoe_graph_new("gemm");
	b.g->opset = 17;
	b.g->inputs = aoe_xcalloc(3, sizeof(int));
	b.g->outputs = aoe_xcalloc(1, sizeof(int));
	add_in(&b, 0, 2, (int64_t[]){ m, k });
	add_in(&b, 1, 2, (int64_t[]){ k, n });
	bg_finish(&b, "MatMul", nthreads);
	if (bg_prepare(&b) < 0) {
		printf("%s: %s\n", model, aoe_errmsg());
		return;
	}
	search(&b, &tdef, &tbest, buf, sizeof(buf), &tried);
	x.m = m;
	x.n = n;
	x.k = k;
	x.a = malloc(sizeof(float) * m * k);
	x.b = malloc(sizeof(float) * k * n);
	x.c = malloc(sizeof(float) * m * n);
	fill(x.a, (int64_t)m * k);
	fill(x.b, (int64_t)k * n);
	openblas_set_num_threads(nthreads);
	tpeer = timeit(blas_run, &x, 0.3);
	printf("%-14s gemm %4dx%4dx%4d       %d  %7.1f %7.1f %7.1f  "
	    "%5.2f %5.2f  %4d  %s\n", model, m, n, k, nthreads, fl / tdef,
	    fl / tbest, fl / tpeer, tpeer / tdef, tpeer / tbest, tried, buf);
	fflush(stdout);
	free(x.a);
	free(x.b);
	free(x.c);
	aoe_graph_free(b.g);
}

/*
 * Conv.
 */

typedef struct cshape {
	const char *model;
	int64_t c, h, w, m, k, s, p, g;
} cshape;

typedef struct dnnl_arg {
	dnnl_primitive_t prim;
	dnnl_stream_t st;
	dnnl_exec_arg_t args[4];
	int nthreads;
} dnnl_arg;

static int
dnnl_run(void *arg)
{
	dnnl_arg *d = arg;

	omp_set_num_threads(d->nthreads);
	if (dnnl_primitive_execute(d->prim, d->st, 4, d->args) !=
	    dnnl_success)
		return -1;
	dnnl_stream_wait(d->st);
	return 0;
}

static dnnl_engine_t eng;
static dnnl_stream_t stream;

static double
dnnl_conv_time(const cshape *c, int nthreads)
{
	dnnl_memory_desc_t src, wei, bia, dst;
	dnnl_convolution_desc_t cd;
	dnnl_primitive_desc_t pd;
	dnnl_memory_t mem[4];
	dnnl_arg d;
	int64_t oh = (c->h + 2 * c->p - c->k) / c->s + 1;
	int64_t ow = (c->w + 2 * c->p - c->k) / c->s + 1;
	dnnl_dims_t sd = { 1, c->c, c->h, c->w }, dd = { 1, c->m, oh, ow };
	dnnl_dims_t wd = { c->g, c->m / c->g, c->c / c->g, c->k, c->k };
	dnnl_dims_t w4 = { c->m, c->c, c->k, c->k };
	dnnl_dims_t bd = { c->m }, st = { c->s, c->s }, dl = { 0, 0 };
	dnnl_dims_t pl = { c->p, c->p };
	const dnnl_query_t q[4] = { dnnl_query_src_md, dnnl_query_weights_md,
	    dnnl_query_weights_md, dnnl_query_dst_md };
	const int argk[4] = { DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, DNNL_ARG_BIAS,
	    DNNL_ARG_DST };
	double t;
	int i;

	/*
	 * oneDNN sizes its work split for the thread count in force when the
	 * primitive is made, and then runs that many threads whatever is
	 * set later: set it first.
	 */
	omp_set_num_threads(nthreads);
	dnnl_memory_desc_init_by_tag(&src, 4, sd, dnnl_f32,
	    dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&dst, 4, dd, dnnl_f32,
	    dnnl_format_tag_any);
	if (c->g > 1)
		dnnl_memory_desc_init_by_tag(&wei, 5, wd, dnnl_f32,
		    dnnl_format_tag_any);
	else
		dnnl_memory_desc_init_by_tag(&wei, 4, w4, dnnl_f32,
		    dnnl_format_tag_any);
	dnnl_memory_desc_init_by_tag(&bia, 1, bd, dnnl_f32, dnnl_x);
	if (dnnl_dilated_convolution_forward_desc_init(&cd,
	    dnnl_forward_inference, dnnl_convolution_direct, &src, &wei, &bia,
	    &dst, st, dl, pl, pl) != dnnl_success ||
	    dnnl_primitive_desc_create(&pd, &cd, NULL, eng, NULL) !=
	    dnnl_success)
		return -1;
	for (i = 0; i < 4; i++) {
		const dnnl_memory_desc_t *md = i == 2 ? &bia :
		    dnnl_primitive_desc_query_md(pd, q[i], 0);
		dnnl_memory_create(&mem[i], md, eng, DNNL_MEMORY_ALLOCATE);
		void *h = NULL;
		dnnl_memory_get_data_handle(mem[i], &h);
		fill(h, (int64_t)(dnnl_memory_desc_get_size(md) /
		    sizeof(float)));
		d.args[i].arg = argk[i];
		d.args[i].memory = mem[i];
	}
	dnnl_primitive_create(&d.prim, pd);
	d.st = stream;
	d.nthreads = nthreads;
	t = timeit(dnnl_run, &d, 0.3);
	dnnl_primitive_destroy(d.prim);
	for (i = 0; i < 4; i++)
		dnnl_memory_destroy(mem[i]);
	dnnl_primitive_desc_destroy(pd);
	return t;
}

static void
bench_conv(const cshape *c, int nthreads)
{
	bg b;
	double tdef, tbest, tpeer, fl;
	int64_t oh = (c->h + 2 * c->p - c->k) / c->s + 1;
	int64_t ow = (c->w + 2 * c->p - c->k) / c->s + 1;
	char buf[512], what[64];
	int tried;

	fl = 2.0 * c->m * oh * ow * (c->c / c->g) * c->k * c->k / 1e9;
	snprintf(what, sizeof(what), "%s%lldx%lld/%lld %lld>%lld @%lld",
	    c->g > 1 ? "dw" : "", (long long)c->k, (long long)c->k,
	    (long long)c->s, (long long)c->c, (long long)c->m,
	    (long long)c->h);
	if (!selected(c->model, what))
		return;
	memset(&b, 0, sizeof(b));
	b.g = aoe_graph_new("conv");
	b.g->opset = 17;
	b.g->inputs = aoe_xcalloc(3, sizeof(int));
	b.g->outputs = aoe_xcalloc(1, sizeof(int));
	add_in(&b, 0, 4, (int64_t[]){ 1, c->c, c->h, c->w });
	add_in(&b, 1, 4, (int64_t[]){ c->m, c->c / c->g, c->k, c->k });
	add_in(&b, 1, 1, (int64_t[]){ c->m });
	bg_finish(&b, "Conv", nthreads);
	attr_is(b.n, "kernel_shape", 2, (int64_t[]){ c->k, c->k });
	attr_is(b.n, "strides", 2, (int64_t[]){ c->s, c->s });
	attr_is(b.n, "pads", 4, (int64_t[]){ c->p, c->p, c->p, c->p });
	aoe_node_add_attr(b.n, "group", AOE_A_INT)->i = c->g;
	if (blocked) {
		b.g->tensors[b.in[0]]->layout = AOE_LAYOUT_8C;
		b.g->tensors[aoe_graph_find(b.g, "y")]->layout = AOE_LAYOUT_8C;
	}
	if (bg_prepare(&b) < 0) {
		printf("%s: %s\n", c->model, aoe_errmsg());
		return;
	}
	search(&b, &tdef, &tbest, buf, sizeof(buf), &tried);
	tpeer = dnnl_conv_time(c, nthreads);
	printf("%-14s conv %-20s %d  %7.1f %7.1f %7.1f  %5.2f %5.2f  %4d  "
	    "%s\n", c->model, what, nthreads, fl / tdef, fl / tbest,
	    tpeer > 0 ? fl / tpeer : 0, tpeer / tdef, tpeer / tbest, tried,
	    buf);
	fflush(stdout);
	aoe_graph_free(b.g);
}

int
main(int argc, char **argv)
{
	static const struct { const char *model; int m, n, k; } gemms[] = {
		{ "bert-base", 128, 768, 768 },
		{ "bert-base", 128, 3072, 768 },
		{ "bert-base", 128, 768, 3072 },
		{ "square", 256, 256, 256 },
		{ "square", 512, 512, 512 },
		{ "square", 1024, 1024, 1024 },
		{ "resnet18.fc", 1, 1000, 512 },
	};
	static const cshape convs[] = {
		{ "resnet18", 3, 224, 224, 64, 7, 2, 3, 1 },
		{ "resnet18", 64, 56, 56, 64, 3, 1, 1, 1 },
		{ "resnet18", 64, 56, 56, 128, 3, 2, 1, 1 },
		{ "resnet18", 128, 28, 28, 128, 3, 1, 1, 1 },
		{ "resnet18", 128, 28, 28, 256, 3, 2, 1, 1 },
		{ "resnet18", 256, 14, 14, 256, 3, 1, 1, 1 },
		{ "resnet18", 256, 14, 14, 512, 3, 2, 1, 1 },
		{ "resnet18", 512, 7, 7, 512, 3, 1, 1, 1 },
		{ "resnet18", 64, 56, 56, 128, 1, 2, 0, 1 },
		{ "mobilenet_v2", 32, 112, 112, 16, 1, 1, 0, 1 },
		{ "mobilenet_v2", 24, 56, 56, 144, 1, 1, 0, 1 },
		{ "mobilenet_v2", 144, 56, 56, 144, 3, 1, 1, 144 },
		{ "mobilenet_v2", 96, 112, 112, 96, 3, 2, 1, 96 },
		{ "mobilenet_v2", 144, 56, 56, 144, 3, 2, 1, 144 },
		{ "mobilenet_v2", 576, 14, 14, 576, 3, 1, 1, 576 },
		{ "mobilenet_v2", 576, 14, 14, 576, 3, 2, 1, 576 },
		{ "mobilenet_v2", 160, 7, 7, 960, 1, 1, 0, 1 },
		{ "mobilenet_v3_large", 72, 56, 56, 72, 5, 2, 2, 72 },
		{ "ppocrv4-det", 3, 640, 640, 32, 3, 2, 1, 1 },
		{ "ppocrv4-det", 64, 160, 160, 64, 3, 1, 1, 64 },
		{ "ppocrv4-det", 64, 160, 160, 128, 1, 1, 0, 1 },
		{ "ppocrv4-det", 256, 40, 40, 64, 3, 1, 1, 1 },
	};
	const char *e = getenv("AOE_BENCH_BUDGET");
	const char *isa = getenv("AOE_BENCH_ISA");
	size_t i;
	int t, wide;

	only = argv + 1;
	nonly = argc - 1;
	if (e != NULL)
		budget = atof(e);
	if ((e = getenv("AOE_BENCH_ALGO")) != NULL)
		only_algo = atoi(e);
	if ((e = getenv("AOE_BENCH_LAYOUT")) != NULL)
		blocked = strcmp(e, "8c") == 0;
	if (isa == NULL || isa[0] == '\0')
		isa = "avx2";
	if (strcmp(isa, "avx2") != 0 && strcmp(isa, "avx512") != 0) {
		fprintf(stderr, "kernels: AOE_BENCH_ISA must be avx2 or "
		    "avx512, not '%s'\n", isa);
		return 1;
	}
	wide = strcmp(isa, "avx512") == 0;
	__builtin_cpu_init();
	if (wide && !__builtin_cpu_supports("avx512f")) {
		fprintf(stderr, "kernels: AOE_BENCH_ISA=avx512 on a CPU "
		    "without AVX-512F\n");
		return 1;
	}
	if (wide) {
		/* Every side at its best: no caps. */
		unsetenv("AOE_MAX_ISA");
		unsetenv("ONEDNN_MAX_CPU_ISA");
		unsetenv("DNNL_MAX_CPU_ISA");
		if (getenv("OPENBLAS_CORETYPE") != NULL)
			fprintf(stderr, "kernels: OPENBLAS_CORETYPE=%s caps "
			    "OpenBLAS; unset it for AOE_BENCH_ISA=avx512\n",
			    getenv("OPENBLAS_CORETYPE"));
	} else {
		/* Everyone at AVX2 at most (see kernels-run). */
		setenv("AOE_MAX_ISA", "avx2", 1);
		setenv("ONEDNN_MAX_CPU_ISA", "AVX2", 0);
		setenv("DNNL_MAX_CPU_ISA", "AVX2", 0);
	}
	if (dnnl_engine_create(&eng, dnnl_cpu, 0) != dnnl_success ||
	    dnnl_stream_create(&stream, eng, dnnl_stream_default_flags) !=
	    dnnl_success) {
		fprintf(stderr, "kernels: cannot create a oneDNN engine\n");
		return 1;
	}
	printf("# ISA %s (AOE_BENCH_ISA)\n", isa);
	printf("# peak (AVX2 FMA, register-only): 1 thread %.1f GFLOP/s, "
	    "2 threads %.1f GFLOP/s\n", peak_gflops(1), peak_gflops(2));
	if (wide)
		printf("# peak (AVX-512 FMA, register-only): 1 thread %.1f "
		    "GFLOP/s, 2 threads %.1f GFLOP/s\n", peak512_gflops(1),
		    peak512_gflops(2));
	printf("# search: random legal points for %.1f s per row; ratios "
	    "are peer time / aoe time (>1: aoe faster)\n", budget);
	printf("# peers: OpenBLAS cblas_sgemm (core %s, OPENBLAS_CORETYPE=%s); "
	    "oneDNN direct conv in its blocked layout (ISA %#x, max %s)\n",
	    openblas_get_corename(), getenv("OPENBLAS_CORETYPE") ?
	    getenv("OPENBLAS_CORETYPE") : "auto",
	    (unsigned)dnnl_get_effective_cpu_isa(),
	    getenv("ONEDNN_MAX_CPU_ISA") ? getenv("ONEDNN_MAX_CPU_ISA") :
	    "none");
	printf("%-14s %-4s %-20s %s  %7s %7s %7s  %5s %5s  %4s  %s\n", "model",
	    "op", "shape", "t", "default", "best", "peer", "d/p", "b/p",
	    "pts", "best schedule");
	for (t = 1; t <= 2; t++) {
		for (i = 0; i < sizeof(gemms) / sizeof(gemms[0]); i++)
			bench_gemm(gemms[i].model, gemms[i].m, gemms[i].n,
			    gemms[i].k, t);
		for (i = 0; i < sizeof(convs) / sizeof(convs[0]); i++)
			bench_conv(&convs[i], t);
	}
	return 0;
}
