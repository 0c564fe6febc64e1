/*
 * k_random.c - random numbers: RandomUniform, RandomNormal,
 * RandomUniformLike, RandomNormalLike, Bernoulli, Multinomial.
 *
 * Element i of an output is a function of the stream's key and i alone
 * (splitmix64 of key + i), so the values do not depend on the thread
 * count.  With the seed attribute the key comes from the seed, and every
 * run of the node gives the same values, in every process; without it
 * the key is drawn afresh at each run (time, address and a counter), and
 * lib/runtime does not fold such a node into a constant.  Normal values
 * come from the Box-Muller transform of two uniforms.  No knobs: the
 * family has no search space.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aoe_kernels.h"
#include "kernel.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

static inline uint64_t
mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [0, 1), 53 bits, for draw i of stream key. */
static inline double
unif(uint64_t key, uint64_t i)
{
	return (double)(mix64(key + (i + 1) * 0x9e3779b97f4a7c15ULL) >> 11) *
	    0x1p-53;
}

/* Standard normal for draw i of stream key (Box-Muller). */
static inline double
gauss(uint64_t key, uint64_t i)
{
	double u = unif(key, 2 * i), v = unif(key, 2 * i + 1);

	return sqrt(-2 * log(1 - u)) * cos(2 * M_PI * v);
}

/* The stream's key: from the seed attribute, else fresh. */
static uint64_t
stream_key(const aoe_node *n)
{
	static uint64_t counter;
	const aoe_attr *a = aoe_attr_find(n, "seed");
	struct timespec ts;
	uint32_t bits;
	uint64_t c;

	if (a != NULL) {
		float f = a->type == AOE_A_INT ? (float)a->i : a->f;

		memcpy(&bits, &f, 4);
		return mix64(0x5eedULL ^ ((uint64_t)bits << 16));
	}
	c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
	clock_gettime(CLOCK_REALTIME, &ts);
	return mix64((uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^
	    (uint64_t)(uintptr_t)n ^ (c << 48));
}

enum { R_UNIFORM, R_NORMAL, R_BERNOULLI, R_MULTINOMIAL };

static int
kind_of(const aoe_node *n)
{
	if (strncmp(n->op_type, "RandomUniform", 13) == 0)
		return R_UNIFORM;
	if (strncmp(n->op_type, "RandomNormal", 12) == 0)
		return R_NORMAL;
	if (strcmp(n->op_type, "Bernoulli") == 0)
		return R_BERNOULLI;
	return R_MULTINOMIAL;
}

static int
float_out(int dt)
{
	return dt == AOE_F32 || dt == AOE_F64 || dt == AOE_F16 ||
	    dt == AOE_BF16;
}

static int
random_infer(aoe_graph *g, aoe_node *n)
{
	const int kind = kind_of(n);
	const aoe_tensor *x = NULL;
	const int64_t *shape;
	int64_t dims[AOE_MAXDIM];
	int cnt = 0, dt, i, rc, like = strstr(n->op_type, "Like") != NULL;

	if (kind == R_BERNOULLI || kind == R_MULTINOMIAL || like) {
		if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
			return rc;
		x = aoe_in(g, n, 0);
	} else if (n->nin != 0 || n->nout < 1)
		return aoe_err(AOE_EDATA, "%s '%s': takes no inputs and one "
		    "output", n->op_type, n->name);
	switch (kind) {
	case R_BERNOULLI:
		if (x->dtype != AOE_F32 && x->dtype != AOE_F64 &&
		    x->dtype != AOE_F16)
			return aoe_err(AOE_EDATA, "%s '%s': probabilities "
			    "are %s, not a float type", n->op_type, n->name,
			    aoe_dtype_name(x->dtype));
		dt = (int)aoe_attr_int(n, "dtype", x->dtype);
		if (!aoe_num_dtype(dt) && dt != AOE_BOOL)
			return aoe_err(AOE_EUNSUP, "%s '%s': dtype %d not "
			    "supported", n->op_type, n->name, dt);
		return aoe_set_output(g, n, 0, dt, x->ndim, x->dims);
	case R_MULTINOMIAL:
		if (x->ndim != 2 || (x->dtype != AOE_F32 &&
		    x->dtype != AOE_F64))
			return aoe_err(AOE_EDATA, "%s '%s': input must be "
			    "[batch, classes] of float32 or float64",
			    n->op_type, n->name);
		if (x->dims[1] < 1)
			return aoe_err(AOE_EDATA, "%s '%s': no classes",
			    n->op_type, n->name);
		dt = (int)aoe_attr_int(n, "dtype", AOE_I32);
		if (dt != AOE_I32 && dt != AOE_I64)
			return aoe_err(AOE_EDATA, "%s '%s': dtype must be "
			    "int32 or int64", n->op_type, n->name);
		dims[0] = x->dims[0];
		dims[1] = aoe_attr_int(n, "sample_size", 1);
		if (dims[1] < 1 || dims[1] > ((int64_t)1 << 32))
			return aoe_err(AOE_EDATA, "%s '%s': sample_size %lld "
			    "is not positive", n->op_type, n->name,
			    (long long)dims[1]);
		return aoe_set_output(g, n, 0, dt, 2, dims);
	}
	dt = (int)aoe_attr_int(n, "dtype", like ? x->dtype : AOE_F32);
	if (!float_out(dt))
		return aoe_err(AOE_EUNSUP, "%s '%s': dtype %s not supported "
		    "(a float type)", n->op_type, n->name,
		    aoe_dtype_name(dt));
	if (like)
		return aoe_set_output(g, n, 0, dt, x->ndim, x->dims);
	if ((shape = aoe_attr_ints(n, "shape", &cnt)) == NULL &&
	    aoe_attr_find(n, "shape") == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': attribute 'shape' is "
		    "missing", n->op_type, n->name);
	if (cnt > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': rank %d, more than %d",
		    n->op_type, n->name, cnt, AOE_MAXDIM);
	for (i = 0; i < cnt; i++) {
		if (shape[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': shape has a "
			    "negative dimension", n->op_type, n->name);
		dims[i] = shape[i];
	}
	return aoe_set_output(g, n, 0, dt, cnt, dims);
}

struct rnd_ctx {
	int kind, dt, xdt;
	uint64_t key;
	double a, b;		/* low, high or mean, scale */
	const void *x;
	void *y;
	int64_t n, nchunks;
};

static void
rnd_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct rnd_ctx *c = ctx;
	int64_t lo = aoe_chunk_lo(c->n, c->nchunks, chunk);
	int64_t hi = aoe_chunk_lo(c->n, c->nchunks, chunk + 1), i;
	double v;

	for (i = lo; i < hi; i++) {
		switch (c->kind) {
		case R_UNIFORM:
			v = c->a + (c->b - c->a) * unif(c->key, (uint64_t)i);
			break;
		case R_NORMAL:
			v = c->a + c->b * gauss(c->key, (uint64_t)i);
			break;
		default:
			v = unif(c->key, (uint64_t)i) < aoe_get_f64(c->x,
			    c->xdt, i);
			break;
		}
		aoe_put_f64(c->y, c->dt, i, v);
	}
}

/*
 * Multinomial: each row's input is unnormalised log-probabilities; each
 * sample inverts the cumulative distribution at a uniform draw.
 */
static void
multinomial(const aoe_tensor *x, aoe_tensor *y, uint64_t key)
{
	int64_t b, j, s, nb = x->dims[0], nc = x->dims[1], ns = y->dims[1];
	double *cdf = aoe_xmalloc((size_t)nc * sizeof(double)), mx, u;

	for (b = 0; b < nb; b++) {
		mx = -INFINITY;
		for (j = 0; j < nc; j++)
			mx = fmax(mx, aoe_get_f64(x->data, x->dtype,
			    b * nc + j));
		for (j = 0; j < nc; j++) {
			double p = exp(aoe_get_f64(x->data, x->dtype,
			    b * nc + j) - mx);
			cdf[j] = (j ? cdf[j - 1] : 0) + (p == p ? p : 0);
		}
		for (s = 0; s < ns; s++) {
			int64_t lo = 0, hi = nc - 1;

			u = unif(key, (uint64_t)(b * ns + s)) * cdf[nc - 1];
			/* The first class whose cumulative sum passes u. */
			while (lo < hi) {
				int64_t mid = lo + (hi - lo) / 2;
				if (cdf[mid] > u)
					hi = mid;
				else
					lo = mid + 1;
			}
			aoe_put_f64(y->data, y->dtype, b * ns + s, (double)lo);
		}
	}
	free(cdf);
}

static int
random_run(aoe_kctx *k)
{
	const aoe_node *n = k->n;
	const aoe_tensor *x = opt_in(k->g, n, 0);
	aoe_tensor *y = aoe_out(k->g, n, 0);
	struct rnd_ctx c;
	int nt;

	memset(&c, 0, sizeof(c));
	c.kind = kind_of(n);
	c.key = stream_key(n);
	if (c.kind == R_MULTINOMIAL) {
		multinomial(x, y, c.key);
		return 0;
	}
	c.dt = y->dtype;
	c.y = y->data;
	c.n = aoe_tensor_numel(y);
	if (x != NULL) {
		c.x = x->data;
		c.xdt = x->dtype;
	}
	if (c.kind == R_UNIFORM) {
		c.a = aoe_attr_float(n, "low", 0);
		c.b = aoe_attr_float(n, "high", 1);
	} else {
		c.a = aoe_attr_float(n, "mean", 0);
		c.b = aoe_attr_float(n, "scale", 1);
	}
	nt = nthreads_for(c.n, 16384, k->nthreads);
	c.nchunks = aoe_nchunks(c.n, nt);
	if (c.n > 0)
		aoe_parallel(nt, c.nchunks, rnd_chunk, &c);
	return 0;
}

const aoe_op aoe_ops_random[] = {
	{ "RandomUniform", random_infer, random_run, NULL, NULL },
	{ "RandomNormal", random_infer, random_run, NULL, NULL },
	{ "RandomUniformLike", random_infer, random_run, NULL, NULL },
	{ "RandomNormalLike", random_infer, random_run, NULL, NULL },
	{ "Bernoulli", random_infer, random_run, NULL, NULL },
	{ "Multinomial", random_infer, random_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};
