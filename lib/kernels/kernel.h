/*
 * kernel.h - the kernels layer's declarations for libaoe's own files:
 * the operator and kernel-context types, the helpers kernels share, the
 * GEMM, the families' tables and spaces, the epilogues.  Not installed;
 * the public interface is aoe.h.
 */
#ifndef AOE_KERNEL_H
#define AOE_KERNEL_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "aoe_kernels.h"
#include "ir.h"

/* Everything a kernel sees when it runs. */
typedef struct aoe_kctx {
	aoe_graph *g;
	aoe_node *n;
	int nthreads;
	const aoe_sched *sched;
	void *scratch;		/* n->scratch bytes, 64-byte aligned */
	/*
	 * The run's options (an aoe_run_opts of lib/runtime), for the
	 * operators the runtime implements itself (If, Loop, Scan), which
	 * run graphs; NULL when a node is folded at load time.
	 */
	const void *rt;
} aoe_kctx;

struct aoe_op {
	const char *op_type;
	/*
	 * Check the node's attributes and inputs and set its outputs' dtypes
	 * and shapes.  Inputs' shapes are known (and constants' data).  May
	 * set n->scratch.  Returns 0 or a negative error from aoe_err().
	 */
	int (*infer)(aoe_graph *g, aoe_node *n);
	/* (An If returns 1 when its condition is a constant: see ctl.c.) */
	/* Compute the outputs.  Returns 0 or a negative error. */
	int (*run)(aoe_kctx *k);
	/*
	 * Optional: called once after infer when the schedule is fixed, to
	 * pack weights into n->priv.  May be NULL.
	 */
	int (*prepare)(aoe_graph *g, aoe_node *n);
	/* Optional: fill the default schedule for this node. */
	void (*default_sched)(const aoe_graph *g, const aoe_node *n,
	    aoe_sched *s);
};
/*
 * Shared helpers for kernels.
 */

/*
 * Ask for the cache lines of the n floats at p for writing (PREFETCHW;
 * a no-op where the CPU lacks it).  At two threads an output's lines
 * are often held by the other core, which last wrote or read them (the
 * arena reuses memory between tensors, and the threads split each node
 * their own way); a store to such a line waits for it to be fetched and
 * invalidated there, and a read prefetch gets only a shared copy, which
 * the store must then upgrade.  Asked for before the work that computes
 * the values, the ownership arrives while it runs.
 */
static inline void
aoe_pfw_span(const float *p, int64_t n)
{
	int64_t q;

	if (n <= 0)
		return;
	for (q = 0; q < n; q += 16)
		__asm__ volatile("prefetchw %0" : : "m"(p[q]));
	__asm__ volatile("prefetchw %0" : : "m"(p[n - 1]));
}

/*
 * Whether a kernel asks for its output's lines by knob cpf's value v:
 * 1 always, 0 never, -1 (the default, AOE_CPF_DEF) in a loop the pool's
 * threads share, where the other core has likely held them.  Read by
 * the GEMM (k_gemm.c, with the figures), Winograd and Conv's algo 8.
 */
#define AOE_CPF_DEF (-1)
static inline int
aoe_cpf_on(int64_t v)
{
	return v > 0 || (v < 0 && aoe_pool_shared());
}

/* Numpy-style broadcast of two shapes; returns 0 or -AOE_EDATA. */
int aoe_broadcast_shape(int na, const int64_t *a, int nb, const int64_t *b,
    int *nout, int64_t *out);
/* Normalise a possibly negative axis for rank r; -1 if out of range. */
int aoe_axis(int64_t axis, int rank);
/* Set an output to the given shape and dtype (checking its size). */
int aoe_set_output(aoe_graph *g, aoe_node *n, int i, int dtype, int ndim,
    const int64_t *dims);
/*
 * In infer: output i's size depends on the data (NonZero, Unique, TopK
 * with a k known at run time), so it is a dynamic tensor (aoe_tensor):
 * its dtype and rank are set, and dims, where known, else -1 (dims
 * NULL: all unknown).  The kernel's run then gives it its shape and
 * bytes with aoe_tensor_resize().
 */
int aoe_set_output_dyn(aoe_graph *g, aoe_node *n, int i, int dtype,
    int ndim, const int64_t *dims);

/*
 * Single-precision GEMM used by Conv, Gemm and MatMul:
 * C[m][n] = alpha * sum_k A[m][k] * B[k][n] + beta * C[m][n], with row
 * strides lda, ldb, ldc and optional transposes, on nthreads threads with
 * the blocking in sched.  Returns 0.
 */
int aoe_sgemm(int transa, int transb, int64_t m, int64_t n, int64_t k,
    float alpha, const float *a, int64_t lda, const float *b, int64_t ldb,
    float beta, float *c, int64_t ldc, int nthreads, const aoe_sched *sched);
/*
 * A kernel family: its operators (ending with op_type NULL) and the
 * function that fills a node's search space (NULL: it has none).  The
 * families are listed in the op table, lib/kernels/registry.c.
 */
typedef struct aoe_family {
	const char *name;
	const aoe_op *ops;
	int (*space)(aoe_space *sp);
} aoe_family;
/* Add a knob with a list of values or a range (used by the families). */
int aoe_space_add(aoe_space *sp, const char *name, int nvals,
    const int64_t *vals, const char *doc);
int aoe_space_add_range(aoe_space *sp, const char *name, int64_t lo,
    int64_t hi, int64_t step, const char *doc);

/*
 * The extended GEMM of k_gemm.c, which Conv and ConvTranspose use: a bias
 * per row of C, a caller-supplied B packer (implicit im2col), and operands
 * packed ahead of time.
 */
/*
 * An epilogue: what lib/passes/fuse.c folds into a kernel after its result, run
 * on each row of it as it is finished: y = t + s * f(y + b + d), where b
 * is a bias per column (pc[col], a MatMul's; 0 when pc is NULL), d a
 * fused residual (optional), f a clamp to [lo, hi] (a Relu, a Clip, or
 * none with the whole float range), a HardSwish, a Sigmoid, a SiLU
 * (x sigmoid(x)), a GELU (erf form) or a GELU in its tanh form, and s and
 * t the row's scale and shift (ps[row], pt[row]; 1 and 0 when NULL).
 * aoe_epi_row takes pc at the row's first column.
 */
enum { AOE_EPI_CLAMP, AOE_EPI_HARDSWISH, AOE_EPI_SIGMOID, AOE_EPI_SILU,
    AOE_EPI_GELU, AOE_EPI_GELU_TANH };
typedef struct aoe_epi {
	int kind;
	float lo, hi;
	const float *ps, *pt;
	const float *pc;
} aoe_epi;

/* Integer helpers of the kernel files (ceildiv: b > 0, any a). */
static inline int64_t
min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

static inline int64_t
max64(int64_t a, int64_t b)
{
	return a > b ? a : b;
}

static inline int64_t
ceildiv(int64_t a, int64_t b)
{
	return a >= 0 ? (a + b - 1) / b : -(-a / b);
}

/* The product of d[lo..hi) (1 when the range is empty). */
static inline int64_t
prod(const int64_t *d, int lo, int hi)
{
	int64_t p = 1;
	int i;

	for (i = lo; i < hi; i++)
		p *= d[i];
	return p;
}

/*
 * Threads for n items of work when a thread should get at least grain of
 * them: n / grain, at most nthreads, and 1 below two grains or when grain
 * is 0 or less (a knob "par" of 0 forces one thread).
 */
static inline int
nthreads_for(int64_t n, int64_t grain, int nthreads)
{
	int64_t t;

	if (nthreads <= 1 || grain <= 0 || n < 2 * grain)
		return 1;
	t = n / grain;
	return t < nthreads ? (int)t : nthreads;
}

/*
 * Optional input i of n, or NULL when it is absent: past the node's
 * inputs, no tensor, or a tensor with an empty name (ONNX's way of
 * leaving out an optional input in the middle).
 */
static inline aoe_tensor *
opt_in(const aoe_graph *g, const aoe_node *n, int i)
{
	aoe_tensor *t = aoe_in(g, n, i);

	if (t != NULL && (t->name == NULL || t->name[0] == '\0'))
		return NULL;
	return t;
}

/* Optional output i of n, or NULL when it is absent (as opt_in). */
static inline aoe_tensor *
opt_out(const aoe_graph *g, const aoe_node *n, int i)
{
	aoe_tensor *t = aoe_out(g, n, i);

	if (t != NULL && (t->name == NULL || t->name[0] == '\0'))
		return NULL;
	return t;
}

/* Element i of a float32 (dt AOE_F32) or else float64 array. */
static inline double
ld_fd(const void *p, int dt, int64_t i)
{
	return dt == AOE_F32 ? ((const float *)p)[i] :
	    ((const double *)p)[i];
}

static inline void
st_fd(void *p, int dt, int64_t i, double v)
{
	if (dt == AOE_F32)
		((float *)p)[i] = (float)v;
	else
		((double *)p)[i] = v;
}

/*
 * Check that n has lo to hi inputs, the first lo of them present (see
 * opt_in), and an output 0 (kutil.c): 0, or -AOE_EDATA with a message
 * naming the node.
 */
int aoe_need_inputs(const aoe_graph *g, const aoe_node *n, int lo, int hi);
/*
 * Element i of p, of dtype dt (a number type, float16 or bfloat16), as a
 * double, and v stored there (converted as Cast does, integers
 * truncated toward zero and saturated to int64 first); kutil.c.
 */
double aoe_get_f64(const void *p, int dt, int64_t i);
void aoe_put_f64(void *p, int dt, int64_t i, double v);
/* Whether aoe_get_f64 and aoe_put_f64 take dtype dt. */
int aoe_num_dtype(int dt);
/*
 * Input i of n as one number: a constant scalar (or one-element tensor)
 * of a number type; 0, or a negative error naming the node ("must be a
 * constant" when it is not one).
 */
int aoe_const_scalar(const aoe_graph *g, const aoe_node *n, int i,
    double *v);
/*
 * The node's "axis" attribute (def when absent) for rank r, made
 * non-negative (kutil.c): the axis, or -AOE_EDATA with a message naming
 * the node when it is out of range.
 */
int aoe_attr_axis(const aoe_node *n, int64_t def, int r);

typedef struct aoe_gemm_ex aoe_gemm_ex;
typedef void (*aoe_packb_fn)(const aoe_gemm_ex *x, int64_t p0, int64_t kc,
    int64_t j0, int64_t nc, int nr, float *dst);
struct aoe_gemm_ex {
	int transa, transb;
	int64_t m, n, k;
	float alpha, beta;
	const float *a;
	int64_t lda;
	const float *b;		/* unused when packb is set */
	int64_t ldb;
	float *c;
	int64_t ldc;
	const float *bias;	/* bias[i] added to row i of C, or NULL */
	aoe_packb_fn packb;	/* packs B(p0.., j0..) into nr-wide strips */
	const void *ctx;	/* for packb */
	const float *apack;	/* A packed by aoe_sgemm_pack, or NULL */
	const float *bpack;	/* B packed by aoe_sgemm_pack, or NULL */
	int64_t apack_id;	/* their aoe_sgemm_pack_id() */
	int64_t bpack_id;
	/*
	 * The epilogue e, when epi is set, on each tile of C once it is
	 * final (still in cache), with add (laid out as C, ldc apart, or
	 * NULL) its residual and C's rows its rows.
	 */
	int epi;
	aoe_epi e;
	const float *add;
	/*
	 * When set, called with each block of C, rows [i0, i1) by columns
	 * [j0, j1), once it is final, by the thread that made it (after
	 * the epilogue): a caller's pass over C, done in the same job and
	 * while C is in that thread's cache.  done_ctx is for it.
	 */
	void (*done)(const aoe_gemm_ex *x, int64_t i0, int64_t i1,
	    int64_t j0, int64_t j1);
	void *done_ctx;
};
int aoe_sgemm_ex(const aoe_gemm_ex *x, int nthreads, const aoe_sched *s);
size_t aoe_sgemm_packed_size(int which, int64_t rows, int64_t k,
    const aoe_sched *s);
void aoe_sgemm_pack(int which, int trans, int64_t rows, int64_t k,
    const float *src, int64_t ld, float *dst, const aoe_sched *s);
float *aoe_sgemm_tlbuf(int which, size_t nfloats);
/*
 * An output written through the caches of the core that makes it costs
 * several times more where another core holds its lines (read there
 * since they were last written: a GEMM's B that both threads pack).  A
 * kernel may instead make it in a per-thread buffer, aoe_stage_buf (len
 * floats at dst's offset in a cache line; NULL when out of memory), and
 * store it with aoe_stage_put, which writes dst's whole cache lines with
 * non-temporal stores: they invalidate the other copies without waiting
 * on them, and the reader then takes the lines from memory.
 */
float *aoe_stage_buf(const float *dst, int64_t len);
void aoe_stage_put(float *dst, const float *src, int64_t len);
int64_t aoe_sgemm_pack_id(int which, const aoe_sched *s);
/* The GEMM knobs' default (mr nr mc kc nc) for the instruction set. */
void aoe_sgemm_default_sched(aoe_sched *s);

/*
 * MatMul's shapes, as numpy.matmul (k_gemm.c): a 1-D A is a row, a 1-D
 * B a column (their unit dimension dropped from the result), leading
 * dimensions broadcast.  aoe_mm_shape_of fills s from n's operands a and
 * b and, when ndim is not NULL, the result's shape.
 */
typedef struct aoe_mm_shape {
	int64_t m, k, n;
	int nb;				/* batch rank */
	int64_t batch[AOE_MAXDIM];	/* broadcast batch dims */
	int64_t sa[AOE_MAXDIM];	/* A's batch strides, 0: broadcast */
	int64_t sb[AOE_MAXDIM];
	int64_t nbatch;
	int a_full, b_single;		/* A has every batch; B has one */
} aoe_mm_shape;
int aoe_mm_shape_of(const aoe_graph *g, const aoe_node *n,
    const aoe_tensor *a, const aoe_tensor *b, aoe_mm_shape *s, int *ndim,
    int64_t *dims);

/*
 * The geometry of a convolution (k_conv.c), with the spatial dimensions
 * always three (leading ones filled with 1) so that one code path serves
 * 1-D, 2-D and 3-D.  For ConvTranspose "in" is X's spatial shape and
 * "out" Y's, as for Conv; the GEMM then maps the other way.
 * aoe_conv_geom_of checks n's attributes and the shapes of x, w and the
 * bias b (may be NULL), not their types.
 */
typedef struct aoe_conv_geom {
	int nsp;			/* spatial rank, 1..3 */
	int64_t n, c, m, group, cg, mg;	/* images, channels in/out */
	int64_t in[3], out[3], k[3], s[3], d[3], pb[3], pe[3];
	int64_t insz, outsz, ksz;
} aoe_conv_geom;
int aoe_conv_geom_of(const aoe_graph *g, const aoe_node *n,
    const aoe_tensor *x, const aoe_tensor *w, const aoe_tensor *b,
    int transpose, aoe_conv_geom *cg);

/*
 * Depthwise 2-D convolution by rows (k_dwconv.c), Conv's algo 4 with
 * dw_rows=1: aoe_dw_rows_ok says whether it applies (one input channel
 * per group, 2-D, at most 64 taps); aoe_dw_rows computes y from x, the
 * weights w and the bias (may be NULL) and runs the epilogue of act (may
 * be NULL) and the residual add (may be NULL, laid out as y) on each row
 * as it is made, with vw-float vectors (8, or 16 where AVX-512 is
 * allowed); -1 when out of memory.  aoe_space_dw adds the knobs dw_rows
 * and dw_vec (live: their choices, else only the defaults) and dw_oh and
 * dw_ow (reg: aoe_dw_reg_ok, their choices and dw_rows=2; flat:
 * aoe_dw_flat_ok, dw_rows=3).
 */
struct aoe_act;
int aoe_dw_rows_ok(const aoe_conv_geom *g);
int aoe_dw_default_vec(void);
size_t aoe_dw_bufsize(const aoe_conv_geom *g);
int aoe_dw_rows(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nthreads);
/*
 * The register-blocked depthwise kernel (k_dwconv.c, dw_rows=2):
 * aoe_dw_reg_ok says whether it applies (2-D, one input channel per
 * group, 3x3 or 5x5, strides 1,1 or 2,2, unit dilations, pads below the
 * kernel); aoe_dw_reg_default fills in the width vw (8, 16), rows oh (1,
 * 2, 4) and vectors ow (1, 2) a pass that are not one of those;
 * aoe_dw_reg computes y as aoe_dw_rows does; -1 when out of memory.
 */
int aoe_dw_reg_ok(const aoe_conv_geom *g);
/*
 * The depthwise kernel dw_rows=-1 (auto) runs (0, 2, 3, 4 or 5); light
 * says the fused epilogue is none, or a plain Relu or Clip.
 */
int aoe_dw_auto(const aoe_conv_geom *g, int light);
void aoe_dw_reg_default(const aoe_conv_geom *g, int *vw, int *oh, int *ow);
int aoe_dw_reg(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int oh, int ow, int nt, int nthreads);
/*
 * Whether dw_rows=0 (eight planes an item), 2 and 4 (with whole planes
 * an item) stage their output and stream it to y (aoe_stage_put) on
 * nthreads threads: nt 0 no, 1 yes, -1 auto (the knob dw_nt; see
 * k_dwconv.c).
 */
int aoe_dw_stream(const aoe_conv_geom *g, int nt, int nthreads);
/*
 * The flat depthwise kernel (k_dwconv.c, dw_rows=3): aoe_dw_flat_ok
 * says whether it applies (2-D, one input channel per group, kernels up
 * to 7x7, strides 1,1 or 2,2, unit dilations); aoe_dw_flat computes y as
 * aoe_dw_rows does; -1 when out of memory.
 */
int aoe_dw_flat_ok(const aoe_conv_geom *g);
size_t aoe_dw_flat_bufsize(const aoe_conv_geom *g);
int aoe_dw_flat(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nthreads);
/*
 * The channels-in-lanes depthwise kernel (k_dwconv.c, dw_rows=4): where
 * aoe_dw_rows_ok says; vw 8 or 16 (0 the default width); y as
 * aoe_dw_rows computes it; -1 when out of memory.
 */
int aoe_dw_lanes(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nt, int nthreads);
/*
 * The phase depthwise kernel (k_dwconv.c, dw_rows=5): aoe_dw_phase_ok
 * says whether it applies (2-D, one input channel per group, 3x3 or
 * 5x5, strides 2,2, unit dilations, a left pad of 0 or half the
 * kernel); vw 8 or 16 (0 the default width); nt as aoe_dw_stream takes
 * it; y as aoe_dw_rows computes it; -1 when out of memory.
 */
int aoe_dw_phase_ok(const aoe_conv_geom *g);
int aoe_dw_phase(const aoe_conv_geom *g, const float *x, const float *w,
    const float *bias, const struct aoe_act *act, const float *add,
    float *y, int vw, int nt, int nthreads);
int aoe_space_dw(aoe_space *sp, int live, int reg, int flat, int phase);
/*
 * Depthwise rows for a consumer that reads them while they are in cache
 * (k_dwpw.c): the register-blocked kernel (dw_rows=2, its default pass
 * shape), a band of output rows of one plane at a time.  aoe_dw_band_init
 * sets b up for g (aoe_dw_reg_ok must hold) and the activation act (may
 * be NULL; a residual cannot be fused); -1 when out of memory.
 * aoe_dw_band_rows makes rows oh0..oh1 of output plane pl (image pl /
 * g->m, channel pl % g->m) from that plane's input x, weights w (its
 * ksz floats) and bias bv into dst, row oh0 first, OW floats a row; it
 * may write up to aoe_dw_band_slack(b) floats past the band's end.
 * Bands that end before the plane does should be whole passes (b->R
 * rows).  aoe_dw_band_free releases what init took.
 */
typedef struct aoe_dw_band {
	const aoe_conv_geom *g;
	int R;			/* output rows a pass */
	void *priv;
} aoe_dw_band;
int aoe_dw_band_init(aoe_dw_band *b, const aoe_conv_geom *g,
    const struct aoe_act *act);
void aoe_dw_band_rows(const aoe_dw_band *b, int64_t pl, const float *x,
    const float *w, float bv, float *dst, int64_t oh0, int64_t oh1);
int64_t aoe_dw_band_slack(const aoe_dw_band *b);
void aoe_dw_band_free(aoe_dw_band *b);
/*
 * A depthwise Conv (geometry dg, weights wd, bias bd or NULL, activation
 * dact or NULL) and the pointwise Conv that reads its output, in bands
 * (k_dwpw.c): pw is the pointwise GEMM of image 0 but for B and its
 * columns (m output channels, k = dg->c, its A, bias and epilogue, add
 * its residual or NULL, ldc = dg->outsz); its output goes to y.  mid,
 * dg->n * dg->c * dg->outsz floats or NULL, holds the depthwise output
 * where the bands are too few for the threads and the two run apart.
 * -1 when out of memory.
 */
int aoe_dwpw_run(const aoe_conv_geom *dg, const float *x, const float *wd,
    const float *bd, const struct aoe_act *dact, const aoe_gemm_ex *pw,
    float *y, float *mid, int nthreads, const aoe_sched *s);

/*
 * Grouped 2-D convolution (k_grpconv.c), Conv's algo 8: aoe_grp_ok says
 * whether it applies (2-D, output channels a group a multiple of 8, or a
 * stem; column stride 1 or 2); aoe_grp_stem whether a Conv is a stem (one
 * group of at most 4 input channels).  aoe_grp_vec and aoe_grp_nv give
 * the schedule's vector width (8, 16) and vectors a chunk (1, 2);
 * aoe_grp_pack packs the weights for them into aoe_grp_wsize floats.
 * aoe_grp_run computes y from x and the weights (wp packed for wvw and
 * wnv, or NULL: then packed into scratch, aoe_grp_wsize(g, 16, 2) floats
 * at most), the bias (may be NULL), and runs the epilogue of act (may be
 * NULL) and the residual add (may be NULL); -1 when out of memory.
 * aoe_space_grp adds the knobs grp_vec, grp_nv, grp_oh, grp_ow and
 * grp_rows (live: their choices, else only the defaults);
 * aoe_space_grp_check checks them against algo.
 */
int aoe_grp_ok(const aoe_conv_geom *g);
int aoe_grp_stem(const aoe_conv_geom *g);
int aoe_grp_vec(const aoe_sched *s);
int aoe_grp_nv(const aoe_conv_geom *g, const aoe_sched *s, int vw);
size_t aoe_grp_wsize(const aoe_conv_geom *g, int vw, int nv);
void aoe_grp_pack(const aoe_conv_geom *g, int vw, int nv, const float *w,
    float *wp);
int aoe_grp_run(const aoe_conv_geom *g, const float *x, const float *w,
    const float *wp, int wvw, int wnv, const float *bias,
    const struct aoe_act *act, const float *add, float *y, float *scratch,
    const aoe_sched *s, int nthreads);
int aoe_space_grp(aoe_space *sp, int live, const aoe_conv_geom *g);
int aoe_space_grp_check(const aoe_sched *s, int algo, char *why, size_t len);

/*
 * A 2-D max pool fused after a Conv (lib/passes/fuse.c's fuse_pool): the
 * window k, stride s and leading pads pb of each axis, and the pooled
 * height and width out.  Every window holds one of the Conv's outputs
 * at least (the pads are below the window).  aoe_pool2_of reads it from
 * the Conv's attribute _aoe_pool for a Conv output of in[0] x in[1] (1:
 * read, 0: no such attribute, -1: malformed, an error set);
 * aoe_maxpool2d pools planes of h x w from x into y (k_pool.c) for a
 * Conv that did not pool as it went; n names the node in errors.
 * aoe_grp_pool_ok says whether algo 8 pools as it goes (one group, and
 * no epilogue but a clamp: a Relu or Clip), aoe_grp_run_pool is
 * aoe_grp_run writing the pooled planes into y.
 */
typedef struct aoe_pool2 {
	int64_t k[2], s[2], pb[2], out[2];
} aoe_pool2;
int aoe_pool2_of(const aoe_node *n, const int64_t in[2], aoe_pool2 *p);
int aoe_maxpool2d(const aoe_pool2 *p, const float *x, int64_t planes,
    int64_t h, int64_t w, float *y, const aoe_node *n, int nthreads);
int aoe_grp_pool_ok(const aoe_conv_geom *g, const struct aoe_act *act,
    const float *add);
int aoe_grp_run_pool(const aoe_conv_geom *g, const aoe_pool2 *pool,
    const float *x, const float *w, const float *wp, int wvw, int wnv,
    const float *bias, const struct aoe_act *act, float *y, float *scratch,
    const aoe_sched *s, int nthreads);

/*
 * Winograd F(m x m, 3 x 3) convolution (k_winograd.c), Conv's algo 5:
 * 2-D NCHW, 3x3 kernel, unit strides and dilations, any pads and groups.
 * The weights are transformed by aoe_wino_weights into
 * aoe_wino_wsize() floats (u), or at each run when u is NULL.
 */
typedef struct aoe_wino {
	int64_t n, c, k, group;		/* images, channels in, out, groups */
	int64_t h, w, oh, ow;		/* input and output planes */
	int64_t pt, pl;			/* leading pads (top, left) */
	const float *x, *wt, *bias;	/* bias may be NULL */
	float *y;
	const float *add;		/* a fused residual, laid out as y */
	const aoe_node *node;		/* for its fused activation */
} aoe_wino;
size_t aoe_wino_wsize(int m, int64_t c, int64_t k, int64_t group);
void aoe_wino_weights(int m, int64_t c, int64_t k, int64_t group,
    const float *w, float *u, int nthreads);
int aoe_wino_run(const aoe_wino *p, int m, const float *u, int nthreads,
    const aoe_sched *s);
/*
 * Its knobs wino_m, wino_tb, wino_kb, in Conv's space (live 0: held at
 * their defaults, m the default F(m,3)).
 */
int aoe_space_wino(aoe_space *sp, int live, int m, int64_t k, int64_t oh,
    int64_t ow);

/*
 * Direct 2-D convolution in NCHW8c (k_conv8c.c), Conv's algo 7.  kind:
 * AOE_C8_DENSE for group 1 or groups of multiples of 8 channels in and
 * out, AOE_C8_DEPTHWISE for one channel in and out a group, 0 where it
 * cannot run.  The input (xblk) and the output and residual (yblk) are
 * each NCHW8c or plain.  The weights are packed by aoe_c8_weights for an
 * oc_blk (aoe_c8_ocblk of the schedule) into aoe_c8_wsize() floats, or
 * at each run in the workspace (aoe_c8_scratch() bytes) when wp is NULL
 * or packed for another oc_blk.
 */
enum { AOE_C8_DENSE = 1, AOE_C8_DEPTHWISE = 2 };
typedef struct aoe_c8 {
	int64_t n, c, m, group;		/* images, channels in, out, groups */
	int64_t h, w, oh, ow;		/* input and output planes */
	int64_t kh, kw, sh, sw, dh, dw;	/* kernel, strides, dilations */
	int64_t pt, pl;			/* leading pads (top, left) */
	int xblk, yblk;			/* input, output NCHW8c */
	const float *x, *bias, *add;	/* bias and add may be NULL */
	float *y;
	const aoe_node *node;		/* for its fused activation */
} aoe_c8;
int aoe_c8_kind(int64_t c, int64_t m, int64_t group);
int aoe_c8_ocblk(const aoe_c8 *p, const aoe_sched *s);
size_t aoe_c8_wsize(const aoe_c8 *p);
void aoe_c8_weights(const aoe_c8 *p, int ocblk, const float *w, float *wp);
size_t aoe_c8_scratch(const aoe_c8 *p);
int aoe_c8_run(const aoe_c8 *p, const float *w, const float *wp, int wp_ocb,
    void *scratch, int nthreads, const aoe_sched *s);
/*
 * Its knobs ur_w, oc_blk, ic_blk, oh_blk and x8c in Conv's space (kind
 * 0: held at their defaults), and their constraints for a schedule of
 * algo (0 or -1 with why).
 */
int aoe_space_c8(aoe_space *sp, const aoe_c8 *p, int kind);
int aoe_space_c8_check(const aoe_space *sp, const aoe_sched *s, int algo,
    int kind, char *why, size_t len);
/* Whether algo 7 can run Conv n (2-D, a kind above, float). */
int aoe_conv_8c_ok(const aoe_graph *g, const aoe_node *n);

/*
 * The families' operator tables and search spaces (each beside its
 * kernels), which the op table (registry.c) lists.  A space function
 * fills sp's knobs, check and constraints; sp->g, sp->n, sp->op,
 * sp->op_type and sp->def are set on entry.
 */
extern const aoe_op aoe_ops_gemm[];	/* k_gemm.c: Gemm, MatMul */
extern const aoe_op aoe_ops_conv[];	/* k_conv.c: Conv, ConvTranspose */
extern const aoe_op aoe_ops_elem[];	/* k_elem.c: unary, binary */
extern const aoe_op aoe_ops_norm[];	/* k_norm.c: BN, LN, Softmax, Reduce */
extern const aoe_op aoe_ops_pool[];	/* k_pool.c: pooling, Resize */
extern const aoe_op aoe_ops_shape[];	/* k_shape.c: data movement */
extern const aoe_op aoe_ops_layout[];	/* k_layout.c: AoeReorder */
extern const aoe_op aoe_ops_train[];	/* k_train.c: losses, Dropout */
extern const aoe_op aoe_ops_scatter[];	/* k_scatter.c: scatter, GatherND */
extern const aoe_op aoe_ops_rearr[];	/* k_rearr.c: DepthToSpace... */
extern const aoe_op aoe_ops_matrix[];	/* k_matrix.c: EyeLike, Det */
extern const aoe_op aoe_ops_signal[];	/* k_signal.c: DFT, STFT, windows */
extern const aoe_op aoe_ops_sample[];	/* k_sample.c: GridSample, RoiAlign */
extern const aoe_op aoe_ops_random[];	/* k_random.c: Bernoulli, Random* */
extern const aoe_op aoe_ops_quant[];	/* k_quant.c: int8 inference */
extern const aoe_op aoe_ops_seq[];	/* k_seq.c: sequences, optionals */
/*
 * Whether op reads sequences or optionals (see aoe_tensor): those of
 * k_seq.c, Identity and the control flow that passes values through
 * (k_seq.c).  The executor gives those values to no other operator.
 */
int aoe_op_takes_values(const aoe_op *op);
/* Whether op is one of k_seq.c's (they size what they make as they run). */
int aoe_op_seq(const aoe_op *op);
extern const aoe_op aoe_ops_act[];	/* k_act.c: Swish, Gelu */
extern const aoe_op aoe_ops_select[];	/* k_select.c: NonZero, TopK... */
int aoe_space_gemm(aoe_space *sp);
int aoe_space_conv(aoe_space *sp);
int aoe_space_elem(aoe_space *sp);
int aoe_space_norm(aoe_space *sp);
int aoe_space_pool(aoe_space *sp);
int aoe_space_shape(aoe_space *sp);
extern const aoe_op aoe_ops_rnn[];	/* k_rnn.c: LSTM, GRU, RNN */
extern const aoe_op aoe_ops_einsum[];	/* k_einsum.c: Einsum */
extern const aoe_op aoe_ops_tri[];	/* k_tri.c: Trilu, CumSum */
extern const aoe_op aoe_ops_text[];	/* k_text.c: TfIdfVectorizer */
int aoe_space_rnn(aoe_space *sp);
int aoe_space_einsum(aoe_space *sp);
/*
 * The space of the families whose only knob is "par", elements per
 * thread (kutil.c; default AOE_PAR_DEF, 0 one thread), and their
 * default schedule.
 */
#define AOE_PAR_DEF 32768
int aoe_space_par(aoe_space *sp);
void aoe_par_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s);
int aoe_space_quant(aoe_space *sp);
/*
 * Copy bytes from src to dst (nothing when they are one buffer) on the
 * threads the knob "par" gives elems elements (kutil.c).
 */
void aoe_par_copy(const aoe_kctx *k, void *dst, const void *src,
    int64_t bytes, int64_t elems);
/*
 * Add a knob whose values are 0 (when zero) and the powers of two from lo
 * to hi, or just its default when live is 0 (the kernel does not read
 * it for this node).  The default is def, and always legal.
 */
int aoe_space_add_pow2(aoe_space *sp, const char *name, int zero,
    int64_t lo, int64_t hi, int64_t def, int live, const char *doc);
/* Set the default of the knob added last (when default_sched omits it). */
#define AOE_SPACE_DEF(sp, v) ((sp)->knobs[(sp)->nknobs - 1].def = (v))
/* The GEMM knobs (mr nr mc kc nc par packb apf) for an m x n x k product. */
int aoe_space_gemm_knobs(aoe_space *sp, int64_t m, int64_t n, int64_t k);
/*
 * The knob packa (a transposed A read in place or packed), after
 * aoe_space_gemm_knobs: one value (auto) unless live (the GEMM's A
 * transposed).
 */
int aoe_space_gemm_packa(aoe_space *sp, int live);
/* The GEMM knobs' constraints; 0 or -1 with why. */
int aoe_space_gemm_check(const aoe_space *sp, const aoe_sched *s,
    char *why, size_t len);
/*
 * Gemm's default schedule (the GEMM's, par 0, packb -1, prepack 1) and
 * its check: the GEMM's, and packb -1 when fact[0] says a constant B is
 * prepacked (prepack 1); for the ops whose products are Gemm's.
 */
void aoe_gemm_default_sched(const aoe_graph *g, const aoe_node *n,
    aoe_sched *s);
int aoe_gemm_check(const aoe_space *sp, const aoe_sched *s, char *why,
    size_t len);
/*
 * 1 with why when value v of knob is illegal only because the instruction
 * set it needs cannot run here (AVX-512 micro-kernel shapes), else 0.
 */
int aoe_space_isa_why(const char *knob, int64_t v, char *why, size_t len);

#ifdef __AVX2__
#include <immintrin.h>

/* Transpose 8x8 in registers: on return r[q] holds lane q of each r. */
static inline __attribute__((always_inline)) void
aoe_tr8(__m256 r[8])
{
	__m256 t0, t1, t2, t3, t4, t5, t6, t7, u0, u1, u2, u3, u4, u5, u6, u7;

	t0 = _mm256_unpacklo_ps(r[0], r[1]);
	t1 = _mm256_unpackhi_ps(r[0], r[1]);
	t2 = _mm256_unpacklo_ps(r[2], r[3]);
	t3 = _mm256_unpackhi_ps(r[2], r[3]);
	t4 = _mm256_unpacklo_ps(r[4], r[5]);
	t5 = _mm256_unpackhi_ps(r[4], r[5]);
	t6 = _mm256_unpacklo_ps(r[6], r[7]);
	t7 = _mm256_unpackhi_ps(r[6], r[7]);
	u0 = _mm256_shuffle_ps(t0, t2, 0x44);
	u1 = _mm256_shuffle_ps(t0, t2, 0xee);
	u2 = _mm256_shuffle_ps(t1, t3, 0x44);
	u3 = _mm256_shuffle_ps(t1, t3, 0xee);
	u4 = _mm256_shuffle_ps(t4, t6, 0x44);
	u5 = _mm256_shuffle_ps(t4, t6, 0xee);
	u6 = _mm256_shuffle_ps(t5, t7, 0x44);
	u7 = _mm256_shuffle_ps(t5, t7, 0xee);
	r[0] = _mm256_permute2f128_ps(u0, u4, 0x20);
	r[1] = _mm256_permute2f128_ps(u1, u5, 0x20);
	r[2] = _mm256_permute2f128_ps(u2, u6, 0x20);
	r[3] = _mm256_permute2f128_ps(u3, u7, 0x20);
	r[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
	r[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
	r[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
	r[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

/* A mask of the first n (0..8) lanes. */
static inline __m256i
aoe_lane_mask(int n)
{
	return _mm256_cmpgt_epi32(_mm256_set1_epi32(n),
	    _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
}

#endif

#if defined(__AVX2__) && defined(__FMA__)
/*
 * The activations' math, on eight floats (AVX2+FMA) and, compiled for
 * AVX-512F alone and called only where aoe_cpu_avx512() says so, on
 * sixteen (the aoe_z16_ forms below): the same operations in the same
 * order in both, so that the two ISAs give the same bits (all but exp,
 * which takes 2^n by scalef on sixteen lanes and to within an ulp).  Measured against double precision over a dense sweep of
 * [-100, 100] and the extremes (tests/unit-act.c, which holds the
 * bounds below):
 *
 *   sigmoid  1 / (1 + exp(-x))       relative 4e-7
 *   silu     x / (1 + exp(-x))       relative 4e-7
 *   tanh     x P(x^2) / Q(x^2)       relative 1e-6
 *   erf      x P(x^2) / Q(x^2)       relative 1e-6, absolute 4e-7
 *   gelu     x/2 (1 + erf(x/sqrt 2)) relative 1e-6 for x >= 0,
 *            absolute 1.5e-6 below (where 1 + erf cancels, as in any
 *            float GELU)
 *   gelu_tanh x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3)), the same as
 *            x/2 (1 + tanh(...)): relative 4e-7 for x >= 0, absolute
 *            2e-7 below
 *   exp      relative 3e-7; below FLT_MIN 0, above FLT_MAX infinity
 *
 * except that a result smaller than 1e-35 (sigmoid, silu far below 0)
 * is only within 1e-35 of it, and may be 0.  (exp: 2^n times a
 * degree-5 polynomial on [-ln2/2, ln2/2], 2^n by adding n to the
 * exponent field.)  NaN propagates through every one;
 * sigmoid(+-inf) is 1 and 0, silu and both GELUs give x at +inf and 0
 * at -inf, tanh and erf +-1.
 */
/* exp(r) = 1 + r + ... on |r| <= ln2/2 (minimax, relative 9.2e-8). */
#define AOE_EXP_C1 0.99999970f
#define AOE_EXP_C2 0.49999151f
#define AOE_EXP_C3 0.16667636f
#define AOE_EXP_C4 0.041897928f
#define AOE_EXP_C5 0.0082903132f
/*
 * The shifter: z + 1.5 * 2^23 rounds z to an integer n in the low bits,
 * + 127 makes them 2^n's exponent field.
 */
#define AOE_EXP_SHIFT 12583039.0f
#define AOE_LOG2E 1.44269504088896341f
#define AOE_LN2_HI 0.693147182464599609375f
#define AOE_LN2_LO -1.904654299957768e-09f
/* The arguments of exp(-z) for which 2^n stays a normal float. */
#define AOE_XSIG_LO -88.3f
#define AOE_XSIG_HI 87.3f
/* erf(x) = x P(x^2) / Q(x^2) on [-4, 4], 1 beyond (Eigen's). */
#define AOE_ERF_P6 -2.72614225801306e-10f
#define AOE_ERF_P5 2.77068142495902e-08f
#define AOE_ERF_P4 -2.10102402082508e-06f
#define AOE_ERF_P3 -5.69250639462346e-05f
#define AOE_ERF_P2 -7.34990630326855e-04f
#define AOE_ERF_P1 -2.95459980854025e-03f
#define AOE_ERF_P0 -1.60960333262415e-02f
#define AOE_ERF_Q4 -1.45660718464996e-05f
#define AOE_ERF_Q3 -2.13374055278905e-04f
#define AOE_ERF_Q2 -1.68282697438203e-03f
#define AOE_ERF_Q1 -7.37332916720468e-03f
#define AOE_ERF_Q0 -1.42647390514189e-02f
/* tanh(x) = x P(x^2) / Q(x^2) on [-7.9, 7.9], +-1 beyond (Eigen's). */
#define AOE_TANH_CLAMP 7.90531110763549805f
#define AOE_TANH_P6 -2.76076847742355e-16f
#define AOE_TANH_P5 2.00018790482477e-13f
#define AOE_TANH_P4 -8.60467152213735e-11f
#define AOE_TANH_P3 5.12229709037114e-08f
#define AOE_TANH_P2 1.48572235717979e-05f
#define AOE_TANH_P1 6.37261928875436e-04f
#define AOE_TANH_P0 4.89352455891786e-03f
#define AOE_TANH_Q3 1.19825839466702e-06f
#define AOE_TANH_Q2 1.18534705686654e-04f
#define AOE_TANH_Q1 2.26843463243900e-03f
#define AOE_TANH_Q0 4.89352518554385e-03f
/* GELU's tanh form: 2 sqrt(2/pi) and that times 0.044715. */
#define AOE_GT_K 1.5957691216057308f
#define AOE_GT_K3 0.071354816272923f
#define AOE_SQRT1_2 0.70710678118654752f

#define AOE_V8(c) _mm256_set1_ps(c)
#define AOE_AI static inline __attribute__((always_inline))

/*
 * n / d.  A divide: on Zen 5 it beats a reciprocal estimate and a Newton
 * step (rcp_ps or rcp14, two FMAs and a multiply) by 1.25x (eight
 * lanes) to 1.38x (sixteen) in SiLU, and is exact, so that the two ISAs
 * agree bit for bit.  (Where the divider is slow, the estimate form is
 * n (r + r (1 - d r)), r = rcp(d): an infinite n still gives infinity.)
 */
AOE_AI __m256
aoe_v8_div(__m256 n, __m256 d)
{
	return _mm256_div_ps(n, d);
}

/*
 * x / (1 + exp(-z)), z held to [AOE_XSIG_LO, AOE_XSIG_HI] (which moves
 * the result by less than FLT_MIN relative to x there).
 */
AOE_AI __m256
aoe_v8_xsig(__m256 x, __m256 z)
{
	__m256 t, nf, q, p, s;

	z = _mm256_min_ps(AOE_V8(AOE_XSIG_HI), _mm256_max_ps(
	    AOE_V8(AOE_XSIG_LO), z));
	t = _mm256_fmadd_ps(z, AOE_V8(-AOE_LOG2E), AOE_V8(AOE_EXP_SHIFT));
	nf = _mm256_sub_ps(t, AOE_V8(AOE_EXP_SHIFT));
	/* q = -r, where -z = n ln2 + r: exp(r) by odd terms negated. */
	q = _mm256_fmadd_ps(nf, AOE_V8(AOE_LN2_HI), z);
	q = _mm256_fmadd_ps(nf, AOE_V8(AOE_LN2_LO), q);
	p = _mm256_fmadd_ps(AOE_V8(-AOE_EXP_C5), q, AOE_V8(AOE_EXP_C4));
	p = _mm256_fmadd_ps(p, q, AOE_V8(-AOE_EXP_C3));
	p = _mm256_fmadd_ps(p, q, AOE_V8(AOE_EXP_C2));
	p = _mm256_fmadd_ps(p, q, AOE_V8(-AOE_EXP_C1));
	p = _mm256_fmadd_ps(p, q, AOE_V8(1));
	s = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_castps_si256(t),
	    23));
	return aoe_v8_div(x, _mm256_fmadd_ps(p, s, AOE_V8(1)));
}

AOE_AI __m256
aoe_v8_sigmoid(__m256 x)
{
	return aoe_v8_xsig(AOE_V8(1), x);
}

/* Below AOE_XSIG_LO SiLU is 0 to within FLT_MIN: held there (-inf too). */
AOE_AI __m256
aoe_v8_silu(__m256 x)
{
	x = _mm256_max_ps(AOE_V8(AOE_XSIG_LO), x);
	return aoe_v8_xsig(x, x);
}

AOE_AI __m256
aoe_v8_gelu_tanh(__m256 x)
{
	x = _mm256_max_ps(AOE_V8(AOE_XSIG_LO), x);
	return aoe_v8_xsig(x, _mm256_mul_ps(x, _mm256_fmadd_ps(
	    _mm256_mul_ps(x, x), AOE_V8(AOE_GT_K3), AOE_V8(AOE_GT_K))));
}

AOE_AI __m256
aoe_v8_erf(__m256 x)
{
	__m256 z, p, q;

	x = _mm256_min_ps(AOE_V8(4), _mm256_max_ps(AOE_V8(-4), x));
	z = _mm256_mul_ps(x, x);
	p = _mm256_fmadd_ps(AOE_V8(AOE_ERF_P6), z, AOE_V8(AOE_ERF_P5));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_ERF_P4));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_ERF_P3));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_ERF_P2));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_ERF_P1));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_ERF_P0));
	q = _mm256_fmadd_ps(AOE_V8(AOE_ERF_Q4), z, AOE_V8(AOE_ERF_Q3));
	q = _mm256_fmadd_ps(q, z, AOE_V8(AOE_ERF_Q2));
	q = _mm256_fmadd_ps(q, z, AOE_V8(AOE_ERF_Q1));
	q = _mm256_fmadd_ps(q, z, AOE_V8(AOE_ERF_Q0));
	/* x (P / Q): no product of x that could underflow; |erf| <= 1. */
	return _mm256_min_ps(AOE_V8(1), _mm256_max_ps(AOE_V8(-1), _mm256_mul_ps(x, aoe_v8_div(p, q))));
}

/* Below -8 GELU is 0 to within 1e-14: held there (-inf too). */
AOE_AI __m256
aoe_v8_gelu(__m256 x)
{
	__m256 h;

	x = _mm256_max_ps(AOE_V8(-8), x);
	h = _mm256_mul_ps(AOE_V8(.5f), x);
	return _mm256_fmadd_ps(h, aoe_v8_erf(_mm256_mul_ps(x,
	    AOE_V8(AOE_SQRT1_2))), h);
}

AOE_AI __m256
aoe_v8_tanh(__m256 x)
{
	__m256 z, p, q;

	x = _mm256_min_ps(AOE_V8(AOE_TANH_CLAMP), _mm256_max_ps(
	    AOE_V8(-AOE_TANH_CLAMP), x));
	z = _mm256_mul_ps(x, x);
	p = _mm256_fmadd_ps(AOE_V8(AOE_TANH_P6), z, AOE_V8(AOE_TANH_P5));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_TANH_P4));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_TANH_P3));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_TANH_P2));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_TANH_P1));
	p = _mm256_fmadd_ps(p, z, AOE_V8(AOE_TANH_P0));
	q = _mm256_fmadd_ps(AOE_V8(AOE_TANH_Q3), z, AOE_V8(AOE_TANH_Q2));
	q = _mm256_fmadd_ps(q, z, AOE_V8(AOE_TANH_Q1));
	q = _mm256_fmadd_ps(q, z, AOE_V8(AOE_TANH_Q0));
	return _mm256_mul_ps(x, aoe_v8_div(p, q));
}

/*
 * exp of eight floats: 2^n p(r) with n in [-126, 127], and otherwise
 * (|x| > 87.3 in some lane: rare) 2^n as two factors, so that results
 * below FLT_MIN flush to 0 and above FLT_MAX become infinity.
 */
static inline __m256
v_exp(__m256 x)
{
	__m256 t, nf, r, p, xc;
	__m256i e, e2;

	xc = _mm256_min_ps(AOE_V8(88.72283935546875f), _mm256_max_ps(
	    AOE_V8(-87.33654f), x));
	t = _mm256_fmadd_ps(xc, AOE_V8(AOE_LOG2E), AOE_V8(AOE_EXP_SHIFT));
	nf = _mm256_sub_ps(t, AOE_V8(AOE_EXP_SHIFT));
	r = _mm256_fnmadd_ps(nf, AOE_V8(AOE_LN2_HI), xc);
	r = _mm256_fnmadd_ps(nf, AOE_V8(AOE_LN2_LO), r);
	p = _mm256_fmadd_ps(AOE_V8(AOE_EXP_C5), r, AOE_V8(AOE_EXP_C4));
	p = _mm256_fmadd_ps(p, r, AOE_V8(AOE_EXP_C3));
	p = _mm256_fmadd_ps(p, r, AOE_V8(AOE_EXP_C2));
	p = _mm256_fmadd_ps(p, r, AOE_V8(AOE_EXP_C1));
	p = _mm256_fmadd_ps(p, r, AOE_V8(1));
	if (!_mm256_movemask_ps(_mm256_cmp_ps(_mm256_andnot_ps(
	    AOE_V8(-0.0f), x), AOE_V8(87.3f), _CMP_GT_OQ)))
		return _mm256_mul_ps(p, _mm256_castsi256_ps(_mm256_slli_epi32(
		    _mm256_castps_si256(t), 23)));
	/* 2^n as 2^(n/2) 2^(n - n/2), both normal for n in [-126, 128]. */
	e = _mm256_sub_epi32(_mm256_castps_si256(t), _mm256_castps_si256(
	    AOE_V8(AOE_EXP_SHIFT)));
	e2 = _mm256_srai_epi32(e, 1);
	e = _mm256_sub_epi32(e, e2);
	e = _mm256_slli_epi32(_mm256_add_epi32(e, _mm256_set1_epi32(127)), 23);
	e2 = _mm256_slli_epi32(_mm256_add_epi32(e2, _mm256_set1_epi32(127)),
	    23);
	p = _mm256_mul_ps(_mm256_mul_ps(p, _mm256_castsi256_ps(e)),
	    _mm256_castsi256_ps(e2));
	p = _mm256_blendv_ps(p, AOE_V8(INFINITY), _mm256_cmp_ps(x,
	    AOE_V8(88.72283935546875f), _CMP_GT_OQ));
	return _mm256_andnot_ps(_mm256_cmp_ps(x, AOE_V8(-87.33654f),
	    _CMP_LT_OQ), p);
}

/* The kernels' older names. */
static inline __m256
epi_erf(__m256 x)
{
	return aoe_v8_erf(x);
}

static inline __m256
epi_tanh(__m256 x)
{
	return aoe_v8_tanh(x);
}

/*
 * The activation of epilogue e on eight floats (no bias, residual or
 * affine): the one definition the kernels share.  aoe_epi_k8 takes the
 * kind apart, so that a loop with it constant holds no switch.
 */
AOE_AI __m256
aoe_epi_k8(int kind, const aoe_epi *e, __m256 v)
{
	switch (kind) {
	case AOE_EPI_HARDSWISH:
		return _mm256_mul_ps(v, _mm256_min_ps(AOE_V8(1), _mm256_max_ps(
		    _mm256_setzero_ps(), _mm256_fmadd_ps(v,
		    AOE_V8(1.0f / 6), AOE_V8(.5f)))));
	case AOE_EPI_SIGMOID:
		return aoe_v8_sigmoid(v);
	case AOE_EPI_SILU:
		return aoe_v8_silu(v);
	case AOE_EPI_GELU:
		return aoe_v8_gelu(v);
	case AOE_EPI_GELU_TANH:
		return aoe_v8_gelu_tanh(v);
	default:
		/* In this operand order a NaN stays a NaN. */
		return _mm256_min_ps(_mm256_set1_ps(e->hi), _mm256_max_ps(
		    _mm256_set1_ps(e->lo), v));
	}
}

AOE_AI __m256
aoe_epi_f(const aoe_epi *e, __m256 v)
{
	return aoe_epi_k8(e->kind, e, v);
}

/*
 * The same on sixteen floats, for the AVX-512 kernels: the functions
 * above with __m512.
 */
#define AOE_Z16 static inline __attribute__((always_inline, \
	target("avx512f")))
#define AOE_Z(c) _mm512_set1_ps(c)

AOE_Z16 __m512
aoe_z16_div(__m512 n, __m512 d)
{
	return _mm512_div_ps(n, d);
}

AOE_Z16 __m512
aoe_z16_xsig(__m512 x, __m512 z)
{
	__m512 t, nf, q, p, s;

	z = _mm512_min_ps(AOE_Z(AOE_XSIG_HI), _mm512_max_ps(
	    AOE_Z(AOE_XSIG_LO), z));
	t = _mm512_fmadd_ps(z, AOE_Z(-AOE_LOG2E), AOE_Z(AOE_EXP_SHIFT));
	nf = _mm512_sub_ps(t, AOE_Z(AOE_EXP_SHIFT));
	q = _mm512_fmadd_ps(nf, AOE_Z(AOE_LN2_HI), z);
	q = _mm512_fmadd_ps(nf, AOE_Z(AOE_LN2_LO), q);
	p = _mm512_fmadd_ps(AOE_Z(-AOE_EXP_C5), q, AOE_Z(AOE_EXP_C4));
	p = _mm512_fmadd_ps(p, q, AOE_Z(-AOE_EXP_C3));
	p = _mm512_fmadd_ps(p, q, AOE_Z(AOE_EXP_C2));
	p = _mm512_fmadd_ps(p, q, AOE_Z(-AOE_EXP_C1));
	p = _mm512_fmadd_ps(p, q, AOE_Z(1));
	s = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_castps_si512(t),
	    23));
	return aoe_z16_div(x, _mm512_fmadd_ps(p, s, AOE_Z(1)));
}

AOE_Z16 __m512
aoe_z16_sigmoid(__m512 x)
{
	return aoe_z16_xsig(AOE_Z(1), x);
}

AOE_Z16 __m512
aoe_z16_silu(__m512 x)
{
	x = _mm512_max_ps(AOE_Z(AOE_XSIG_LO), x);
	return aoe_z16_xsig(x, x);
}

AOE_Z16 __m512
aoe_z16_gelu_tanh(__m512 x)
{
	x = _mm512_max_ps(AOE_Z(AOE_XSIG_LO), x);
	return aoe_z16_xsig(x, _mm512_mul_ps(x, _mm512_fmadd_ps(
	    _mm512_mul_ps(x, x), AOE_Z(AOE_GT_K3), AOE_Z(AOE_GT_K))));
}

AOE_Z16 __m512
aoe_z16_erf(__m512 x)
{
	__m512 z, p, q;

	x = _mm512_min_ps(AOE_Z(4), _mm512_max_ps(AOE_Z(-4), x));
	z = _mm512_mul_ps(x, x);
	p = _mm512_fmadd_ps(AOE_Z(AOE_ERF_P6), z, AOE_Z(AOE_ERF_P5));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_ERF_P4));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_ERF_P3));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_ERF_P2));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_ERF_P1));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_ERF_P0));
	q = _mm512_fmadd_ps(AOE_Z(AOE_ERF_Q4), z, AOE_Z(AOE_ERF_Q3));
	q = _mm512_fmadd_ps(q, z, AOE_Z(AOE_ERF_Q2));
	q = _mm512_fmadd_ps(q, z, AOE_Z(AOE_ERF_Q1));
	q = _mm512_fmadd_ps(q, z, AOE_Z(AOE_ERF_Q0));
	/* x (P / Q): no product of x that could underflow; |erf| <= 1. */
	return _mm512_min_ps(AOE_Z(1), _mm512_max_ps(AOE_Z(-1), _mm512_mul_ps(x, aoe_z16_div(p, q))));
}

AOE_Z16 __m512
aoe_z16_gelu(__m512 x)
{
	__m512 h;

	x = _mm512_max_ps(AOE_Z(-8), x);
	h = _mm512_mul_ps(AOE_Z(.5f), x);
	return _mm512_fmadd_ps(h, aoe_z16_erf(_mm512_mul_ps(x,
	    AOE_Z(AOE_SQRT1_2))), h);
}

AOE_Z16 __m512
aoe_z16_tanh(__m512 x)
{
	__m512 z, p, q;

	x = _mm512_min_ps(AOE_Z(AOE_TANH_CLAMP), _mm512_max_ps(
	    AOE_Z(-AOE_TANH_CLAMP), x));
	z = _mm512_mul_ps(x, x);
	p = _mm512_fmadd_ps(AOE_Z(AOE_TANH_P6), z, AOE_Z(AOE_TANH_P5));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_TANH_P4));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_TANH_P3));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_TANH_P2));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_TANH_P1));
	p = _mm512_fmadd_ps(p, z, AOE_Z(AOE_TANH_P0));
	q = _mm512_fmadd_ps(AOE_Z(AOE_TANH_Q3), z, AOE_Z(AOE_TANH_Q2));
	q = _mm512_fmadd_ps(q, z, AOE_Z(AOE_TANH_Q1));
	q = _mm512_fmadd_ps(q, z, AOE_Z(AOE_TANH_Q0));
	return _mm512_mul_ps(x, aoe_z16_div(p, q));
}

/*
 * exp of sixteen floats: 2^n p(r) by scalef, which gives the overflow to
 * infinity and the results below FLT_MIN (as denormals) itself.
 */
AOE_Z16 __m512
aoe_z16_exp(__m512 x)
{
	__m512 nf, r, p;

	x = _mm512_min_ps(AOE_Z(89), _mm512_max_ps(AOE_Z(-104), x));
	nf = _mm512_roundscale_ps(_mm512_mul_ps(x, AOE_Z(AOE_LOG2E)),
	    _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
	r = _mm512_fnmadd_ps(nf, AOE_Z(AOE_LN2_HI), x);
	r = _mm512_fnmadd_ps(nf, AOE_Z(AOE_LN2_LO), r);
	p = _mm512_fmadd_ps(AOE_Z(AOE_EXP_C5), r, AOE_Z(AOE_EXP_C4));
	p = _mm512_fmadd_ps(p, r, AOE_Z(AOE_EXP_C3));
	p = _mm512_fmadd_ps(p, r, AOE_Z(AOE_EXP_C2));
	p = _mm512_fmadd_ps(p, r, AOE_Z(AOE_EXP_C1));
	p = _mm512_fmadd_ps(p, r, AOE_Z(1));
	return _mm512_scalef_ps(p, nf);
}

/* aoe_epi_k8 and aoe_epi_f on sixteen floats. */
AOE_Z16 __m512
aoe_epi_k16(int kind, const aoe_epi *e, __m512 v)
{
	switch (kind) {
	case AOE_EPI_HARDSWISH:
		return _mm512_mul_ps(v, _mm512_min_ps(AOE_Z(1), _mm512_max_ps(
		    _mm512_setzero_ps(), _mm512_fmadd_ps(v,
		    AOE_Z(1.0f / 6), AOE_Z(.5f)))));
	case AOE_EPI_SIGMOID:
		return aoe_z16_sigmoid(v);
	case AOE_EPI_SILU:
		return aoe_z16_silu(v);
	case AOE_EPI_GELU:
		return aoe_z16_gelu(v);
	case AOE_EPI_GELU_TANH:
		return aoe_z16_gelu_tanh(v);
	default:
		return _mm512_min_ps(_mm512_set1_ps(e->hi), _mm512_max_ps(
		    _mm512_set1_ps(e->lo), v));
	}
}

AOE_Z16 __m512
aoe_epi_f16(const aoe_epi *e, __m512 v)
{
	return aoe_epi_k16(e->kind, e, v);
}

/*
 * The epilogue e over row row of a result, y[0..len) (see aoe_epi), on
 * eight floats a step (aoe_epi_row8) and on sixteen (aoe_epi_row16,
 * compiled for AVX-512F; only where aoe_cpu_avx512() says so); epi.c.
 */
void aoe_epi_row8(const aoe_epi *e, int64_t row, float *y, const float *d,
    int64_t len);
void aoe_epi_row16(const aoe_epi *e, int64_t row, float *y, const float *d,
    int64_t len);

/*
 * o[0..n) = f(x[0..n)) on sixteen floats a step, for f one of these
 * (epi.c, compiled for AVX-512F; only where aoe_cpu_avx512() says so).
 */
enum { AOE_VM_SIGMOID, AOE_VM_TANH, AOE_VM_ERF, AOE_VM_EXP };
void aoe_vmath16(int f, float *o, const float *x, int64_t n);

/*
 * The epilogue e over row row of a result, y[0..len) (see aoe_epi):
 * sixteen floats at a time where AVX-512 may run, else eight.
 */
static inline void
aoe_epi_row(const aoe_epi *e, int64_t row, float *y, const float *d,
    int64_t len)
{
	if (len >= 16 && aoe_cpu_avx512())
		aoe_epi_row16(e, row, y, d, len);
	else
		aoe_epi_row8(e, row, y, d, len);
}

#endif

/*
 * The blocked layout NCHW8c (lib/kernels/k_layout.c): a tensor of logical shape
 * [N, C, spatial...] stored as [N][ceil(C/8)][spatial][8], channel c of
 * image i at ((i * cb + c / 8) * sp + s) * 8 + c % 8, where cb is
 * ceil(C/8) and sp the product of the spatial dimensions.  The lanes past
 * C in the last block are zero when a reorder writes them; kernels that
 * write a blocked tensor keep them finite, and kernels that read one
 * give them no weight.  Such a tensor has its layout set to
 * AOE_LAYOUT_8C; Conv (k_conv8c.c) and the ops that do not mind the
 * layout read and write it, and AoeReorder nodes convert at the edges.
 */
#define AOE_CB 8
void aoe_to_8c(const float *x, float *y, int64_t n, int64_t c, int64_t sp,
    int nthreads);
void aoe_from_8c(const float *x, float *y, int64_t n, int64_t c,
    int64_t sp, int nthreads);
/*
 * 1 when node n (MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool,
 * Resize, Upsample) can run on an NCHW8c input (k_pool.c): float32,
 * 4-D with no empty axis, no MaxPool Indices, and for Resize a mapping
 * that leaves the batch and channel axes alone.  Its output is then
 * NCHW8c too.
 */
int aoe_pool_8c_ok(const aoe_graph *g, const aoe_node *n);

/*
 * Whether node n can be a step of an AoeElemChain (k_elem.c): 1 a unary
 * float op, with its parameters in *pa and *pb (Clip's bounds, or
 * alpha and beta and the like); 2 a float Add, Sub, Mul, Div, Max or
 * Min; 0 neither.
 */
int aoe_elem_step(const aoe_graph *g, const aoe_node *n, float *pa,
    float *pb);

/*
 * Chunks for a loop of n items on nt threads: a few per thread, so that a
 * thread that starts late holds up only a small piece; one on one thread.
 */
static inline int64_t
aoe_nchunks(int64_t n, int nt)
{
	int64_t k = nt > 1 ? 4 * (int64_t)nt : 1;

	return k < n ? k : n;
}

/* The first item of chunk c when n items are cut into k chunks. */
static inline int64_t
aoe_chunk_lo(int64_t n, int64_t k, int64_t c)
{
	return (int64_t)((__int128)n * c / k);
}

/*
 * Fused activations (lib/kernels/epi.c).  A fusion pass (lib/passes/fuse.c)
 * records an activation folded into a Conv, Gemm or MatMul as the node's
 * attributes _aoe_act (1 Relu, 2 Clip, 3 Sigmoid, 4 HardSwish, 5 SiLU
 * (Swish), 6 Gelu, 7 Gelu in its tanh form),
 * _aoe_act_lo and _aoe_act_hi, and a per-channel Mul or Add by a
 * constant after it as _aoe_post_s and _aoe_post_t (floats, one a
 * channel); the kernel applies them to its output right after computing
 * it.  A residual Add folded into a Conv becomes the Conv's input 3 and
 * the attribute _aoe_add; the kernel adds it before the activation.
 */
enum { AOE_ACT_NONE, AOE_ACT_RELU, AOE_ACT_CLIP, AOE_ACT_SIGMOID,
    AOE_ACT_HARDSWISH, AOE_ACT_SILU, AOE_ACT_GELU, AOE_ACT_GELU_TANH };

typedef struct aoe_act {
	int kind;
	float lo, hi;
	const float *ps, *pt;	/* per-channel scale and shift after it */
} aoe_act;

/*
 * The fused-activation kind (AOE_ACT_SILU, AOE_ACT_GELU or
 * AOE_ACT_GELU_TANH) that Swish or Gelu node n computes, or -1.
 */
int aoe_act_kind_of(const aoe_node *n);
/* The activation fused into n (kind AOE_ACT_NONE if none). */
void aoe_act_of(const aoe_node *n, aoe_act *a);
/*
 * The epilogue that a is (see aoe_epi in kernel.h): 1, or 0 when a does
 * nothing.
 */
int aoe_act_epi(const aoe_act *a, aoe_epi *e);
/*
 * The residual fused into Conv n: its input 3 when n has the attribute
 * _aoe_add (the node's input count before the fusion), else NULL.
 */
const float *aoe_fused_add(const aoe_graph *g, const aoe_node *n);
/*
 * The bias per column fused into MatMul n: its input 2 when n has the
 * attribute _aoe_bias, else NULL.
 */
const float *aoe_fused_bias(const aoe_graph *g, const aoe_node *n);
/*
 * The epilogue of a and the residual add (optional, laid out as y) over
 * y in place, as rows of cols values whose channel is the row modulo m,
 * on up to nthreads threads.
 */
void aoe_act_apply(const aoe_act *a, float *y, const float *add,
    int64_t rows, int64_t cols, int64_t m, int nthreads);

#endif
