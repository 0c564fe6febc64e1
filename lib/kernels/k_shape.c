/*
 * k_shape.c - data movement: Concat, Reshape, Flatten, Squeeze, Unsqueeze,
 * Transpose, Slice, Gather, GatherElements, Shape, Size, Cast, CastLike,
 * Identity, Pad, Expand, ConstantOfShape, Tile, Range, Split, Constant.
 *
 * The kernels move elements by their size, so most take any dtype libaoe
 * can hold.  Transpose, Slice, Expand and Tile are one strided copy: the
 * output is dense and each of its dimensions has a source stride (0 for a
 * broadcast, negative for a reversed slice).  The copy first drops unit
 * dimensions and merges dimensions the source walks contiguously, then
 * copies innermost runs with memcpy, or transposes tiles when the source's
 * contiguous dimension is not the output's, or gathers elements.
 *
 * Knobs: "par" (1: copies may use threads, 0: never; default 1), "grain"
 * (bytes a thread must get before a copy is split; default 64 KiB), and
 * for Transpose "tile" (the edge of the square tiles a transposition
 * walks, in elements, a multiple of 8; default 64).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef __AVX2__
#include <immintrin.h>
#endif

#include "aoe_kernels.h"
#include "half.h"
#include "kernel.h"

#define GRAIN_DEF	(64 * 1024)
#define TILE_DEF	64
#define VMAX		(2 * AOE_MAXDIM)

/*
 * Helpers.
 */

/* Threads for a copy of the given size under the node's knobs. */
static int
nthr(const aoe_kctx *k, int64_t bytes)
{
	int64_t grain, t;
	int max = k->nthreads > 0 ? k->nthreads : 1;

	if (max == 1 || aoe_sched_get(k->sched, "par", 1) == 0)
		return 1;
	grain = aoe_sched_get(k->sched, "grain", GRAIN_DEF);
	if (grain < 1024)
		grain = 1024;
	t = bytes / grain;
	if (t < 2)
		return 1;
	return t < max ? (int)t : max;
}

static void
move_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	aoe_sched_set(s, "par", 1);
	aoe_sched_set(s, "grain", GRAIN_DEF);
}

static void
transpose_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	move_sched(g, n, s);
	aoe_sched_set(s, "tile", TILE_DEF);
}

/* A dtype's name, including the ONNX types libaoe cannot hold. */
static const char *
dtname(int dt)
{
	switch (dt) {
	case AOE_STRING:
		return "string";
	case 14:
		return "complex64";
	case 15:
		return "complex128";
	}
	return aoe_dtype_name(dt);
}

static int
has_in(const aoe_node *n, int i)
{
	return i < n->nin && n->in[i] >= 0;
}

/* Input i, which must exist with a static shape and a dtype we hold. */
static int
get_in(aoe_graph *g, aoe_node *n, int i, aoe_tensor **tp)
{
	aoe_tensor *t = aoe_in(g, n, i);
	int d;

	*tp = NULL;
	if (t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is missing",
		    n->op_type, n->name, i);
	if (t->ndim < 0 || t->ndim > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' has no "
		    "static shape", n->op_type, n->name, t->name);
	for (d = 0; d < t->ndim; d++)
		if (t->dims[d] < 0)
			return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' has "
			    "a dynamic dimension (bind it with --input-shape)",
			    n->op_type, n->name, t->name);
	if (aoe_dtype_size(t->dtype) == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': dtype %s not supported",
		    n->op_type, n->name, dtname(t->dtype));
	*tp = t;
	return 0;
}

/* Dense strides of t, in elements. */
static void
strides(const aoe_tensor *t, int64_t *st)
{
	int64_t s = 1;
	int d;

	for (d = t->ndim - 1; d >= 0; d--) {
		st[d] = s;
		s *= t->dims[d];
	}
}

/* Read index j of an int32 or int64 tensor. */
static inline int64_t
idx_at(const void *p, int dt, int64_t j)
{
	return dt == AOE_I64 ? ((const int64_t *)p)[j] :
	    ((const int32_t *)p)[j];
}

struct memcpy_ctx {
	char *dst;
	const char *src;
	size_t n, nth;
};

/* Slice t of nth of a copy, cut at multiples of 64 bytes. */
static void
memcpy_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct memcpy_ctx *c = ctx;
	size_t t = (size_t)chunk, n = c->n, nth = c->nth;
	size_t a = t == 0 ? 0 : (n * t / nth) & ~(size_t)63;
	size_t b = t == nth - 1 ? n : (n * (t + 1) / nth) & ~(size_t)63;

	if (b > a)
		memcpy(c->dst + a, c->src + a, b - a);
}

/* Copy memory, split over nt threads. */
static void
par_memcpy(char *dst, const char *src, size_t n, int nt)
{
	struct memcpy_ctx c;

	if (n == 0 || dst == src)
		return;
	if (nt <= 1 || n < 8192) {
		memcpy(dst, src, n);
		return;
	}
	c.dst = dst;
	c.src = src;
	c.n = n;
	c.nth = (size_t)nt;
	aoe_parallel(nt, nt, memcpy_chunk, &c);
}

/* Copy n elements of size es, reading src with a stride of st elements. */
static inline void
gather_elems(char *dst, const char *src, int64_t n, int64_t st, size_t es)
{
	int64_t i;

	switch (es) {
	case 1: {
		uint8_t *d = (uint8_t *)dst;
		const uint8_t *s = (const uint8_t *)src;
		for (i = 0; i < n; i++)
			d[i] = s[i * st];
		break;
	}
	case 2: {
		uint16_t *d = (uint16_t *)dst;
		const uint16_t *s = (const uint16_t *)src;
		for (i = 0; i < n; i++)
			d[i] = s[i * st];
		break;
	}
	case 4: {
		uint32_t *d = (uint32_t *)dst;
		const uint32_t *s = (const uint32_t *)src;
		for (i = 0; i < n; i++)
			d[i] = s[i * st];
		break;
	}
	case 8: {
		uint64_t *d = (uint64_t *)dst;
		const uint64_t *s = (const uint64_t *)src;
		for (i = 0; i < n; i++)
			d[i] = s[i * st];
		break;
	}
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + i * es, src + i * st * (int64_t)es, es);
	}
}

/* Copy a contiguous run of bytes; short runs avoid a call to memcpy. */
static inline void
copy_run(char *dst, const char *src, int64_t n, size_t es)
{
	if (n * (int64_t)es >= 64)
		memcpy(dst, src, (size_t)n * es);
	else
		gather_elems(dst, src, n, 1, es);
}

/* Fill n elements of size es with the element at val. */
static void
fill(char *dst, const void *val, int64_t n, size_t es)
{
	int64_t i;

	switch (es) {
	case 1:
		memset(dst, *(const uint8_t *)val, (size_t)n);
		break;
	case 2: {
		uint16_t *d = (uint16_t *)dst, v;
		memcpy(&v, val, 2);
		for (i = 0; i < n; i++)
			d[i] = v;
		break;
	}
	case 4: {
		uint32_t *d = (uint32_t *)dst, v;
		memcpy(&v, val, 4);
		for (i = 0; i < n; i++)
			d[i] = v;
		break;
	}
	case 8: {
		uint64_t *d = (uint64_t *)dst, v;
		memcpy(&v, val, 8);
		for (i = 0; i < n; i++)
			d[i] = v;
		break;
	}
	default:
		for (i = 0; i < n; i++)
			memcpy(dst + i * es, val, es);
	}
}

struct fill_ctx {
	char *dst;
	const void *val;
	int64_t n, nth;
	size_t es;
};

static void
fill_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct fill_ctx *c = ctx;
	int64_t a = aoe_chunk_lo(c->n, c->nth, chunk);
	int64_t b = aoe_chunk_lo(c->n, c->nth, chunk + 1);

	fill(c->dst + a * (int64_t)c->es, c->val, b - a, c->es);
}

static void
par_fill(char *dst, const void *val, int64_t n, size_t es, int nt)
{
	struct fill_ctx c;

	if (n <= 0)
		return;
	if (nt <= 1) {
		fill(dst, val, n, es);
		return;
	}
	c.dst = dst;
	c.val = val;
	c.n = n;
	c.nth = nt;
	c.es = es;
	aoe_parallel(nt, nt, fill_chunk, &c);
}

struct rows_ctx {
	char *dst;
	const char *src;
	int64_t dpitch, spitch, nrows, rowbytes, nch;
};

static void
rows_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct rows_ctx *c = ctx;
	int64_t r = aoe_chunk_lo(c->nrows, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->nrows, c->nch, chunk + 1);

	for (; r < end; r++)
		memcpy(c->dst + r * c->dpitch, c->src + r * c->spitch,
		    (size_t)c->rowbytes);
}

/*
 * Copy nrows rows of rowbytes bytes between buffers with the given row
 * pitches (Concat and Split).
 */
static void
copy_rows(char *dst, int64_t dpitch, const char *src, int64_t spitch,
    int64_t nrows, int64_t rowbytes, int nt)
{
	struct rows_ctx c;
	int64_t r;

	if (nrows <= 0 || rowbytes <= 0)
		return;
	if (nrows == 1 || (dpitch == rowbytes && spitch == rowbytes)) {
		par_memcpy(dst, src, (size_t)(nrows * rowbytes), nt);
		return;
	}
	if (nrows < nt) {
		for (r = 0; r < nrows; r++)
			par_memcpy(dst + r * dpitch, src + r * spitch,
			    (size_t)rowbytes, nt);
		return;
	}
	c.dst = dst;
	c.src = src;
	c.dpitch = dpitch;
	c.spitch = spitch;
	c.nrows = nrows;
	c.rowbytes = rowbytes;
	c.nch = aoe_nchunks(nrows, nt);
	aoe_parallel(nt, c.nch, rows_chunk, &c);
}

/*
 * The strided copy.
 */

typedef struct {
	int nd;
	int64_t d[VMAX];	/* dimensions of the (dense) output */
	int64_t s[VMAX];	/* source strides, in elements */
} sview;

/* Drop unit dimensions and merge those the source walks contiguously. */
static void
sv_simplify(sview *v)
{
	int i, m = 0;

	for (i = 0; i < v->nd; i++) {
		if (v->d[i] == 1)
			continue;
		if (m > 0 && v->s[m - 1] == v->s[i] * v->d[i]) {
			v->d[m - 1] *= v->d[i];
			v->s[m - 1] = v->s[i];
			continue;
		}
		v->d[m] = v->d[i];
		v->s[m] = v->s[i];
		m++;
	}
	if (m == 0) {
		v->d[0] = 1;
		v->s[0] = 1;
		m = 1;
	}
	v->nd = m;
}

/* Source offset of row r over the first nd dims of v; c gets its coords. */
static int64_t
sv_seek(const sview *v, int nd, int64_t r, int64_t *c)
{
	int64_t off = 0;
	int i;

	for (i = nd - 1; i >= 0; i--) {
		c[i] = r % v->d[i];
		r /= v->d[i];
		off += c[i] * v->s[i];
	}
	return off;
}

/* Step the coords c over the first nd dims of v; returns the new offset. */
static inline int64_t
sv_next(const sview *v, int nd, int64_t *c, int64_t off)
{
	int i;

	for (i = nd - 1; i >= 0; i--) {
		off += v->s[i];
		if (++c[i] < v->d[i])
			return off;
		off -= c[i] * v->s[i];
		c[i] = 0;
	}
	return off;
}

#ifdef __AVX2__
/* Transpose an 8x8 block of 32-bit elements. */
static inline void
tr8x8(const char *src, int64_t ls, char *dst, int64_t ld)
{
	const float *s = (const float *)src;
	float *d = (float *)dst;
	__m256 r[8];
	int i;

	for (i = 0; i < 8; i++)
		r[i] = _mm256_loadu_ps(s + i * ls);
	aoe_tr8(r);
	for (i = 0; i < 8; i++)
		_mm256_storeu_ps(d + i * ld, r[i]);
}
#endif

#define TILE_LOOP(T) do {						\
	const T *s_ = (const T *)src;					\
	T *d_ = (T *)dst;						\
	for (a = a0; a < a1; a++)					\
		for (b = b0; b < b1; b++)				\
			d_[a * ld + b] = s_[b * ls + a];		\
} while (0)

/*
 * dst[a][b] = src[b][a] for a in [a0, a1), b in [0, nb), where src rows
 * (b) are ls elements apart and dst rows (a) ld elements apart.
 */
static void
tile2d(char *dst, int64_t ld, const char *src, int64_t ls, int64_t a0,
    int64_t a1, int64_t nb, size_t es, int64_t tb)
{
	int64_t a, b, b0, b1;

	for (b0 = 0; b0 < nb; b0 = b1) {
		b1 = b0 + tb < nb ? b0 + tb : nb;
		switch (es) {
		case 1:
			TILE_LOOP(uint8_t);
			break;
		case 2:
			TILE_LOOP(uint16_t);
			break;
		case 4: {
#ifdef __AVX2__
			const uint32_t *s_ = (const uint32_t *)src;
			uint32_t *d_ = (uint32_t *)dst;
			int64_t ae = a0 + ((a1 - a0) & ~(int64_t)7);
			int64_t be = b0 + ((b1 - b0) & ~(int64_t)7);

			for (a = a0; a < ae; a += 8)
				for (b = b0; b < be; b += 8)
					tr8x8(src + (b * ls + a) * 4, ls,
					    dst + (a * ld + b) * 4, ld);
			/* The right edge, then the bottom rows. */
			for (a = a0; a < ae; a++)
				for (b = be; b < b1; b++)
					d_[a * ld + b] = s_[b * ls + a];
			for (a = ae; a < a1; a++)
				for (b = b0; b < b1; b++)
					d_[a * ld + b] = s_[b * ls + a];
#else
			TILE_LOOP(uint32_t);
#endif
			break;
		}
		case 8:
			TILE_LOOP(uint64_t);
			break;
		default:
			for (a = a0; a < a1; a++)
				for (b = b0; b < b1; b++)
					memcpy(dst + (a * ld + b) * es,
					    src + (b * ls + a) * es, es);
		}
	}
}

struct transpose_ctx {
	char *dst;
	const char *src;
	const sview *o;		/* the other dimensions, source strides */
	const int64_t *od;	/* and their destination strides */
	int64_t A, B, ls, ld, tile, ntA, n, nch;
	size_t es;
};

static void
transpose_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct transpose_ctx *x = ctx;
	const sview *o = x->o;
	int64_t task = aoe_chunk_lo(x->n, x->nch, chunk);
	int64_t end = aoe_chunk_lo(x->n, x->nch, chunk + 1);
	int64_t ntA = x->ntA, tile = x->tile, A = x->A;
	size_t es = x->es;

	for (; task < end; task++) {
		int64_t p = task / ntA, a0 = (task % ntA) * tile;
		int64_t a1 = a0 + tile < A ? a0 + tile : A;
		int64_t soff = 0, doff = 0, c;
		int q;

		for (q = o->nd - 1; q >= 0; q--) {
			c = p % o->d[q];
			p /= o->d[q];
			soff += c * o->s[q];
			doff += c * x->od[q];
		}
		tile2d(x->dst + doff * (int64_t)es, x->ld,
		    x->src + soff * (int64_t)es, x->ls, a0, a1, x->B, es, tile);
	}
}

/*
 * Transposing copy: dimension j of the view has source stride 1, the last
 * dimension L does not.  Every combination of the other dimensions is a 2-D
 * transposition between j and L, walked in tiles.
 */
static void
sv_transpose(const aoe_kctx *k, char *dst, const char *src, const sview *v,
    size_t es, int j, int nt)
{
	struct transpose_ctx x;
	sview o;
	int64_t ds[VMAX], od[VMAX], A, B, ls, ld, P, tile, ntA;
	int i, L = v->nd - 1;

	ds[L] = 1;
	for (i = L - 1; i >= 0; i--)
		ds[i] = ds[i + 1] * v->d[i + 1];
	o.nd = 0;
	for (i = 0; i < v->nd; i++)
		if (i != j && i != L) {
			o.d[o.nd] = v->d[i];
			o.s[o.nd] = v->s[i];
			od[o.nd] = ds[i];
			o.nd++;
		}
	A = v->d[j];
	B = v->d[L];
	ls = v->s[L];
	ld = ds[j];
	P = prod(o.d, 0, o.nd);
	tile = aoe_sched_get(k->sched, "tile", TILE_DEF);
	if (tile < 8)
		tile = 8;
	tile &= ~(int64_t)7;
	ntA = (A + tile - 1) / tile;
	x.dst = dst;
	x.src = src;
	x.o = &o;
	x.od = od;
	x.A = A;
	x.B = B;
	x.ls = ls;
	x.ld = ld;
	x.tile = tile;
	x.ntA = ntA;
	x.es = es;
	x.n = P * ntA;
	x.nch = aoe_nchunks(x.n, nt);
	aoe_parallel(nt, x.nch, transpose_chunk, &x);
}

struct svcopy_ctx {
	char *dst;
	const char *src;
	const sview *v;
	int64_t rows, w, nth;
	size_t es;
};

/* Slice t of nth of the rows of a strided copy. */
static void
svcopy_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct svcopy_ctx *x = ctx;
	const sview *v = x->v;
	int64_t r0 = aoe_chunk_lo(x->rows, x->nth, chunk);
	int64_t r1 = aoe_chunk_lo(x->rows, x->nth, chunk + 1), r, off;
	int64_t c[VMAX], w = x->w, st;
	int L = v->nd - 1;
	size_t es = x->es;

	if (r0 >= r1)
		return;
	st = v->s[L];
	off = sv_seek(v, L, r0, c);
	for (r = r0; r < r1; r++) {
		char *dp = x->dst + r * w * (int64_t)es;
		const char *sp = x->src + off * (int64_t)es;

		if (st == 1)
			copy_run(dp, sp, w, es);
		else
			gather_elems(dp, sp, w, st, es);
		off = sv_next(v, L, c, off);
	}
}

/* Copy the view v of src (whose origin is src) densely into dst. */
static void
sv_copy(const aoe_kctx *k, char *dst, const char *src, sview *v, size_t es)
{
	struct svcopy_ctx x;
	int64_t total = 1, rows, w;
	int i, L, nt;

	for (i = 0; i < v->nd; i++)
		total *= v->d[i];
	if (total == 0)
		return;
	sv_simplify(v);
	L = v->nd - 1;
	nt = nthr(k, total * (int64_t)es);
	if (v->nd == 1 && v->s[0] == 1) {
		par_memcpy(dst, src, (size_t)total * es, nt);
		return;
	}
	if (v->s[L] != 1 && v->s[L] != 0)
		for (i = 0; i < L; i++)
			if (v->s[i] == 1) {
				sv_transpose(k, dst, src, v, es, i, nt);
				return;
			}
	w = v->d[L];
	rows = total / w;
	if (rows < nt)
		nt = rows > 1 ? (int)rows : 1;
	x.dst = dst;
	x.src = src;
	x.v = v;
	x.rows = rows;
	x.w = w;
	x.es = es;
	x.nth = nt;
	aoe_parallel(nt, nt, svcopy_chunk, &x);
}

/* The plain copy of Identity, Reshape, Flatten, Squeeze and Unsqueeze. */
static int
copy_run_op(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	size_t nb = aoe_tensor_nbytes(y);

	if (nb && x->data != y->data)
		par_memcpy(y->data, x->data, nb, nthr(k, (int64_t)nb));
	return 0;
}

/*
 * Identity.
 */

static int
identity_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x = aoe_in(g, n, 0);
	int rc;

	/* A sequence, an optional or a run-time shape passes as it is. */
	if ((aoe_is_value(x) || (x && x->dynamic)) && aoe_out(g, n, 0)) {
		aoe_value_like(aoe_out(g, n, 0), x);
		return 0;
	}
	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, x->dims);
}

static int
identity_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0);

	if (aoe_is_value(x) || x->dynamic)
		return aoe_value_copy(aoe_out(k->g, k->n, 0), x);
	return copy_run_op(k);
}

/*
 * Reshape.
 */

static int
reshape_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t shp[VMAX + 1], dims[AOE_MAXDIM], numel, p = 1;
	const int64_t *as;
	int rc, cnt, i, neg = -1, zero = 0;
	int allowzero = (int)aoe_attr_int(n, "allowzero", 0);

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if (has_in(n, 1)) {
		if ((cnt = aoe_const_ints(g, n, 1, shp, VMAX)) < 0)
			return cnt;
	} else if ((as = aoe_attr_ints(n, "shape", &cnt)) != NULL) {
		if (cnt > VMAX)
			cnt = VMAX;
		memcpy(shp, as, (size_t)cnt * sizeof(int64_t));
	} else
		return aoe_err(AOE_EDATA, "%s '%s': the shape input is "
		    "missing", n->op_type, n->name);
	if (cnt > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, cnt, AOE_MAXDIM);
	for (i = 0; i < cnt; i++) {
		if (shp[i] == 0 && !allowzero) {
			if (i >= x->ndim)
				return aoe_err(AOE_EDATA, "%s '%s': shape[%d] "
				    "is 0 but the input has rank %d",
				    n->op_type, n->name, i, x->ndim);
			dims[i] = x->dims[i];
		} else if (shp[i] == -1) {
			if (neg >= 0)
				return aoe_err(AOE_EDATA, "%s '%s': the shape "
				    "has more than one -1", n->op_type,
				    n->name);
			neg = i;
			dims[i] = 1;
		} else if (shp[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': shape[%d] is "
			    "%lld", n->op_type, n->name, i,
			    (long long)shp[i]);
		else
			dims[i] = shp[i];
		if (shp[i] == 0)
			zero = 1;
		if (dims[i] != 0 && p > INT64_MAX / dims[i])
			return aoe_err(AOE_EDATA, "%s '%s': the shape "
			    "overflows", n->op_type, n->name);
		p *= dims[i];
	}
	if (allowzero && zero && neg >= 0)
		return aoe_err(AOE_EDATA, "%s '%s': a shape with both 0 and "
		    "-1 is invalid when allowzero is set", n->op_type,
		    n->name);
	numel = aoe_tensor_numel(x);
	if (neg >= 0) {
		if (p == 0)
			return aoe_err(AOE_EDATA, "%s '%s': cannot infer the "
			    "-1 dimension next to a zero dimension",
			    n->op_type, n->name);
		if (numel % p != 0)
			return aoe_err(AOE_EDATA, "%s '%s': cannot reshape "
			    "%lld elements with a -1 dimension and the rest "
			    "%lld", n->op_type, n->name, (long long)numel,
			    (long long)p);
		dims[neg] = numel / p;
	} else if (p != numel)
		return aoe_err(AOE_EDATA, "%s '%s': cannot reshape %lld "
		    "elements into %lld", n->op_type, n->name,
		    (long long)numel, (long long)p);
	return aoe_set_output(g, n, 0, x->dtype, cnt, dims);
}

/*
 * Flatten.
 */

static int
flatten_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t axis = aoe_attr_int(n, "axis", 1), dims[2];
	int rc;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if (axis < 0)
		axis += x->ndim;
	if (axis < 0 || axis > x->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of "
		    "range for rank %d", n->op_type, n->name,
		    (long long)aoe_attr_int(n, "axis", 1), x->ndim);
	dims[0] = prod(x->dims, 0, (int)axis);
	dims[1] = prod(x->dims, (int)axis, x->ndim);
	return aoe_set_output(g, n, 0, x->dtype, 2, dims);
}

/*
 * Squeeze and Unsqueeze: axes from the input (opset 13) or the attribute.
 */

static int
get_axes(aoe_graph *g, aoe_node *n, int input, int64_t *axes, int max)
{
	const int64_t *a;
	int cnt;

	if (has_in(n, input))
		return aoe_const_ints(g, n, input, axes, max);
	if ((a = aoe_attr_ints(n, "axes", &cnt)) == NULL)
		return -1;
	if (cnt > max)
		return aoe_err(AOE_EDATA, "%s '%s': %d axes, at most %d "
		    "allowed", n->op_type, n->name, cnt, max);
	memcpy(axes, a, (size_t)cnt * sizeof(int64_t));
	return cnt;
}

static int
squeeze_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t axes[VMAX], dims[AOE_MAXDIM];
	int rc, cnt, i, a, nd = 0;
	char drop[AOE_MAXDIM] = { 0 };

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	cnt = get_axes(g, n, 1, axes, VMAX);
	if (cnt < -1)
		return cnt;
	if (cnt == -1) {
		for (i = 0; i < x->ndim; i++)
			drop[i] = x->dims[i] == 1;
	} else
		for (i = 0; i < cnt; i++) {
			if ((a = aoe_axis(axes[i], x->ndim)) < 0)
				return aoe_err(AOE_EDATA, "%s '%s': axis %lld "
				    "is out of range for rank %d", n->op_type,
				    n->name, (long long)axes[i], x->ndim);
			if (x->dims[a] != 1)
				return aoe_err(AOE_EDATA, "%s '%s': cannot "
				    "squeeze axis %d of size %lld", n->op_type,
				    n->name, a, (long long)x->dims[a]);
			drop[a] = 1;
		}
	for (i = 0; i < x->ndim; i++)
		if (!drop[i])
			dims[nd++] = x->dims[i];
	return aoe_set_output(g, n, 0, x->dtype, nd, dims);
}

static int
unsqueeze_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t axes[VMAX], dims[AOE_MAXDIM];
	int rc, cnt, i, a, r, j = 0;
	char add[VMAX] = { 0 };

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	cnt = get_axes(g, n, 1, axes, VMAX);
	if (cnt < -1)
		return cnt;
	if (cnt == -1)
		return aoe_err(AOE_EDATA, "%s '%s': axes are missing",
		    n->op_type, n->name);
	r = x->ndim + cnt;
	if (r > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, r, AOE_MAXDIM);
	for (i = 0; i < cnt; i++) {
		if ((a = aoe_axis(axes[i], r)) < 0)
			return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out "
			    "of range for rank %d", n->op_type, n->name,
			    (long long)axes[i], r);
		if (add[a])
			return aoe_err(AOE_EDATA, "%s '%s': axis %d is "
			    "repeated", n->op_type, n->name, a);
		add[a] = 1;
	}
	for (i = 0; i < r; i++)
		dims[i] = add[i] ? 1 : x->dims[j++];
	return aoe_set_output(g, n, 0, x->dtype, r, dims);
}

/*
 * Transpose.
 */

static int
get_perm(aoe_graph *g, aoe_node *n, int r, int *perm)
{
	const int64_t *p;
	int cnt, i;
	char seen[AOE_MAXDIM] = { 0 };

	if ((p = aoe_attr_ints(n, "perm", &cnt)) == NULL) {
		for (i = 0; i < r; i++)
			perm[i] = r - 1 - i;
		return 0;
	}
	if (cnt != r)
		return aoe_err(AOE_EDATA, "%s '%s': perm has %d values for "
		    "rank %d", n->op_type, n->name, cnt, r);
	for (i = 0; i < r; i++) {
		if (p[i] < 0 || p[i] >= r || seen[p[i]])
			return aoe_err(AOE_EDATA, "%s '%s': perm is not a "
			    "permutation of 0..%d", n->op_type, n->name,
			    r - 1);
		seen[p[i]] = 1;
		perm[i] = (int)p[i];
	}
	return 0;
}

static int
transpose_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t dims[AOE_MAXDIM];
	int perm[AOE_MAXDIM], rc, i;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if ((rc = get_perm(g, n, x->ndim, perm)) < 0)
		return rc;
	for (i = 0; i < x->ndim; i++)
		dims[i] = x->dims[perm[i]];
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, dims);
}

static int
transpose_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t st[AOE_MAXDIM];
	int perm[AOE_MAXDIM], rc, i;
	sview v;

	if ((rc = get_perm(k->g, k->n, x->ndim, perm)) < 0)
		return rc;
	strides(x, st);
	v.nd = x->ndim;
	for (i = 0; i < x->ndim; i++) {
		v.d[i] = y->dims[i];
		v.s[i] = st[perm[i]];
	}
	sv_copy(k, y->data, x->data, &v, aoe_dtype_size(x->dtype));
	return 0;
}

/*
 * Concat.
 */

static int
concat_axis(aoe_graph *g, aoe_node *n, int r)
{
	const aoe_attr *a = aoe_attr_find(n, "axis");
	int64_t axis;
	int ax;

	if (a == NULL && g->opset >= 4)
		return aoe_err(AOE_EDATA, "%s '%s': attribute 'axis' is "
		    "missing", n->op_type, n->name);
	axis = a ? a->i : 1;
	if ((ax = aoe_axis(axis, r)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name, (long long)axis, r);
	return ax;
}

static int
concat_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *t;
	int64_t dims[AOE_MAXDIM];
	int rc, i, d, ax;

	if (n->nin < 1)
		return aoe_err(AOE_EDATA, "%s '%s': no inputs", n->op_type,
		    n->name);
	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if ((ax = concat_axis(g, n, x->ndim)) < 0)
		return ax;
	memcpy(dims, x->dims, sizeof(dims));
	for (i = 1; i < n->nin; i++) {
		if ((rc = get_in(g, n, i, &t)) < 0)
			return rc;
		if (t->dtype != x->dtype)
			return aoe_err(AOE_EDATA, "%s '%s': input %d is %s, "
			    "input 0 is %s", n->op_type, n->name, i,
			    aoe_dtype_name(t->dtype),
			    aoe_dtype_name(x->dtype));
		if (t->ndim != x->ndim)
			return aoe_err(AOE_EDATA, "%s '%s': input %d has "
			    "rank %d, input 0 has rank %d", n->op_type,
			    n->name, i, t->ndim, x->ndim);
		for (d = 0; d < x->ndim; d++)
			if (d != ax && t->dims[d] != x->dims[d])
				return aoe_err(AOE_EDATA, "%s '%s': input %d "
				    "has dimension %d of %lld, input 0 of "
				    "%lld", n->op_type, n->name, i, d,
				    (long long)t->dims[d],
				    (long long)x->dims[d]);
		dims[ax] += t->dims[ax];
	}
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, dims);
}

static int
concat_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0), *x;
	size_t es = aoe_dtype_size(y->dtype);
	int64_t outer, inner, off = 0, rb;
	int i, ax;

	if (aoe_tensor_numel(y) == 0)
		return 0;
	if ((ax = concat_axis(k->g, k->n, y->ndim)) < 0)
		return ax;
	outer = prod(y->dims, 0, ax);
	inner = prod(y->dims, ax + 1, y->ndim) * (int64_t)es;
	for (i = 0; i < k->n->nin; i++) {
		x = aoe_in(k->g, k->n, i);
		rb = x->dims[ax] * inner;
		/* The memory plan put it in place (plan_concat). */
		if (outer == 1 && x->data == (char *)y->data + off) {
			off += rb;
			continue;
		}
		copy_rows((char *)y->data + off, y->dims[ax] * inner,
		    x->data, rb, outer, rb, nthr(k, outer * rb));
		off += rb;
	}
	return 0;
}

/*
 * Split.
 */

/* The sizes of the outputs along the axis; returns the axis. */
static int
split_sizes(aoe_graph *g, aoe_node *n, const aoe_tensor *x, int64_t *sz)
{
	const aoe_attr *num = aoe_attr_find(n, "num_outputs");
	const int64_t *as;
	int64_t axis = aoe_attr_int(n, "axis", 0), dim, sum = 0, c;
	int ax, cnt, i;

	if ((ax = aoe_axis(axis, x->ndim)) < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name, (long long)axis,
		    x->ndim);
	dim = x->dims[ax];
	if (n->nout < 1)
		return aoe_err(AOE_EDATA, "%s '%s': no outputs", n->op_type,
		    n->name);
	if (has_in(n, 1)) {
		if ((cnt = aoe_const_ints(g, n, 1, sz, n->nout)) < 0)
			return cnt;
	} else if ((as = aoe_attr_ints(n, "split", &cnt)) != NULL) {
		if (cnt == n->nout)
			memcpy(sz, as, (size_t)cnt * sizeof(int64_t));
	} else if (num != NULL) {
		if (num->i != n->nout)
			return aoe_err(AOE_EDATA, "%s '%s': num_outputs is "
			    "%lld but the node has %d outputs", n->op_type,
			    n->name, (long long)num->i, n->nout);
		c = (dim + n->nout - 1) / n->nout;
		for (i = 0; i < n->nout; i++) {
			sz[i] = dim - i * c < c ? dim - i * c : c;
			if (sz[i] < 0)
				return aoe_err(AOE_EDATA, "%s '%s': cannot "
				    "split %lld into %d parts", n->op_type,
				    n->name, (long long)dim, n->nout);
		}
		return ax;
	} else {
		if (dim % n->nout != 0)
			return aoe_err(AOE_EDATA, "%s '%s': cannot split "
			    "dimension %lld into %d equal parts", n->op_type,
			    n->name, (long long)dim, n->nout);
		for (i = 0; i < n->nout; i++)
			sz[i] = dim / n->nout;
		return ax;
	}
	if (cnt != n->nout)
		return aoe_err(AOE_EDATA, "%s '%s': split has %d values for "
		    "%d outputs", n->op_type, n->name, cnt, n->nout);
	for (i = 0; i < cnt; i++) {
		if (sz[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': split[%d] is "
			    "negative", n->op_type, n->name, i);
		sum += sz[i];
	}
	if (sum != dim)
		return aoe_err(AOE_EDATA, "%s '%s': split sums to %lld, the "
		    "dimension is %lld", n->op_type, n->name, (long long)sum,
		    (long long)dim);
	return ax;
}

static int
split_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t *sz, dims[AOE_MAXDIM];
	int rc, ax, i;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	sz = aoe_xcalloc((size_t)n->nout + 1, sizeof(int64_t));
	if ((ax = split_sizes(g, n, x, sz)) < 0) {
		free(sz);
		return ax;
	}
	memcpy(dims, x->dims, sizeof(dims));
	for (i = 0; i < n->nout; i++) {
		dims[ax] = sz[i];
		if ((rc = aoe_set_output(g, n, i, x->dtype, x->ndim,
		    dims)) < 0)
			break;
	}
	free(sz);
	return rc;
}

static int
split_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y;
	size_t es = aoe_dtype_size(x->dtype);
	int64_t *sz, outer, inner, off = 0, rb;
	int ax, i;

	sz = aoe_xcalloc((size_t)k->n->nout + 1, sizeof(int64_t));
	if ((ax = split_sizes(k->g, k->n, x, sz)) < 0) {
		free(sz);
		return ax;
	}
	outer = prod(x->dims, 0, ax);
	inner = prod(x->dims, ax + 1, x->ndim) * (int64_t)es;
	for (i = 0; i < k->n->nout; i++) {
		rb = sz[i] * inner;
		if ((y = aoe_out(k->g, k->n, i)) != NULL)
			copy_rows(y->data, rb, (const char *)x->data + off,
			    x->dims[ax] * inner, outer, rb,
			    nthr(k, outer * rb));
		off += rb;
	}
	free(sz);
	return 0;
}

/*
 * Slice.
 */

static int
slice_params(aoe_graph *g, aoe_node *n, const aoe_tensor *x, int64_t *start,
    int64_t *step, int64_t *cnt)
{
	int64_t st[VMAX], en[VMAX], ax[VMAX], sp[VMAX];
	int ns, ne, na, nsp, i, a, r = x->ndim;
	char seen[AOE_MAXDIM] = { 0 };

	for (i = 0; i < r; i++) {
		start[i] = 0;
		step[i] = 1;
		cnt[i] = x->dims[i];
	}
	if (n->nin >= 3) {
		if ((ns = aoe_const_ints(g, n, 1, st, VMAX)) < 0)
			return ns;
		if ((ne = aoe_const_ints(g, n, 2, en, VMAX)) < 0)
			return ne;
		na = nsp = ns;
		if (has_in(n, 3) && (na = aoe_const_ints(g, n, 3, ax,
		    VMAX)) < 0)
			return na;
		if (has_in(n, 4) && (nsp = aoe_const_ints(g, n, 4, sp,
		    VMAX)) < 0)
			return nsp;
		if (!has_in(n, 3))
			for (i = 0; i < ns; i++)
				ax[i] = i;
		if (!has_in(n, 4))
			for (i = 0; i < ns; i++)
				sp[i] = 1;
	} else {
		const int64_t *p;

		if ((p = aoe_attr_ints(n, "starts", &ns)) == NULL ||
		    ns > VMAX)
			return aoe_err(AOE_EDATA, "%s '%s': starts are "
			    "missing", n->op_type, n->name);
		memcpy(st, p, (size_t)ns * sizeof(int64_t));
		if ((p = aoe_attr_ints(n, "ends", &ne)) == NULL || ne > VMAX)
			return aoe_err(AOE_EDATA, "%s '%s': ends are "
			    "missing", n->op_type, n->name);
		memcpy(en, p, (size_t)ne * sizeof(int64_t));
		if ((p = aoe_attr_ints(n, "axes", &na)) != NULL) {
			if (na > VMAX)
				na = VMAX;
			memcpy(ax, p, (size_t)na * sizeof(int64_t));
		} else
			for (na = 0; na < ns && na < VMAX; na++)
				ax[na] = na;
		for (nsp = 0; nsp < ns; nsp++)
			sp[nsp] = 1;
	}
	if (ne != ns || na != ns || nsp != ns)
		return aoe_err(AOE_EDATA, "%s '%s': starts, ends, axes and "
		    "steps differ in length (%d, %d, %d, %d)", n->op_type,
		    n->name, ns, ne, na, nsp);
	for (i = 0; i < ns; i++) {
		int64_t s = st[i], e = en[i], k = sp[i], dim, span;
		uint64_t ak;

		if ((a = aoe_axis(ax[i], r)) < 0)
			return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out "
			    "of range for rank %d", n->op_type, n->name,
			    (long long)ax[i], r);
		if (seen[a])
			return aoe_err(AOE_EDATA, "%s '%s': axis %d is "
			    "repeated", n->op_type, n->name, a);
		seen[a] = 1;
		if (k == 0)
			return aoe_err(AOE_EDATA, "%s '%s': step of axis %d "
			    "is 0", n->op_type, n->name, a);
		dim = x->dims[a];
		if (s < 0)
			s += dim;
		if (e < 0)
			e += dim;
		if (k > 0) {
			s = s < 0 ? 0 : s > dim ? dim : s;
			e = e < 0 ? 0 : e > dim ? dim : e;
			span = e - s;
			ak = (uint64_t)k;
		} else {
			s = s < 0 ? 0 : s > dim - 1 ? dim - 1 : s;
			e = e < -1 ? -1 : e > dim - 1 ? dim - 1 : e;
			span = s - e;
			ak = (uint64_t)(-(k + 1)) + 1;
		}
		if (dim == 0 || span <= 0) {
			cnt[a] = 0;
			s = 0;
		} else
			cnt[a] = (int64_t)(((uint64_t)span - 1) / ak) + 1;
		start[a] = s;
		step[a] = k;
	}
	return 0;
}

static int
slice_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t start[AOE_MAXDIM], step[AOE_MAXDIM], cnt[AOE_MAXDIM];
	int rc;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if ((rc = slice_params(g, n, x, start, step, cnt)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, cnt);
}

static int
slice_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t start[AOE_MAXDIM], step[AOE_MAXDIM], cnt[AOE_MAXDIM];
	int64_t st[AOE_MAXDIM], base = 0;
	size_t es = aoe_dtype_size(x->dtype);
	int rc, i;
	sview v;

	if (aoe_tensor_numel(y) == 0)
		return 0;
	if ((rc = slice_params(k->g, k->n, x, start, step, cnt)) < 0)
		return rc;
	strides(x, st);
	v.nd = x->ndim;
	for (i = 0; i < x->ndim; i++) {
		v.d[i] = cnt[i];
		/* A step past the end leaves one element (and no overflow). */
		v.s[i] = cnt[i] > 1 ? step[i] * st[i] : 0;
		base += start[i] * st[i];
	}
	sv_copy(k, y->data, (const char *)x->data + base * (int64_t)es, &v,
	    es);
	return 0;
}

/*
 * Expand and Tile.
 */

static int
expand_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t shp[VMAX], dims[AOE_MAXDIM];
	int rc, cnt, nd;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if ((cnt = aoe_const_ints(g, n, 1, shp, VMAX)) < 0)
		return cnt;
	if (cnt > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, cnt, AOE_MAXDIM);
	if ((rc = aoe_broadcast_shape(x->ndim, x->dims, cnt, shp, &nd,
	    dims)) < 0) {
		char msg[256];

		snprintf(msg, sizeof(msg), "%s", aoe_errmsg());
		return aoe_err(-rc, "%s '%s': %s", n->op_type, n->name, msg);
	}
	return aoe_set_output(g, n, 0, x->dtype, nd, dims);
}

static int
expand_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t st[AOE_MAXDIM];
	int i, j, lead = y->ndim - x->ndim;
	sview v;

	strides(x, st);
	v.nd = y->ndim;
	for (i = 0; i < y->ndim; i++) {
		j = i - lead;
		v.d[i] = y->dims[i];
		v.s[i] = j < 0 || x->dims[j] == 1 ? 0 : st[j];
	}
	sv_copy(k, y->data, x->data, &v, aoe_dtype_size(x->dtype));
	return 0;
}

static int
tile_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t rep[VMAX], dims[AOE_MAXDIM];
	int rc, cnt, i;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if ((cnt = aoe_const_ints(g, n, 1, rep, VMAX)) < 0)
		return cnt;
	if (cnt != x->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': %d repeats for rank %d",
		    n->op_type, n->name, cnt, x->ndim);
	for (i = 0; i < cnt; i++) {
		if (rep[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': repeats[%d] is "
			    "negative", n->op_type, n->name, i);
		if (rep[i] && x->dims[i] > AOE_MAX_TENSOR_BYTES / rep[i])
			return aoe_err(AOE_ENOMEM, "%s '%s': the output is "
			    "too large", n->op_type, n->name);
		dims[i] = x->dims[i] * rep[i];
	}
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, dims);
}

static int
tile_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t st[AOE_MAXDIM];
	int i;
	sview v;

	if (aoe_tensor_numel(y) == 0)
		return 0;
	strides(x, st);
	v.nd = 2 * x->ndim;
	for (i = 0; i < x->ndim; i++) {
		v.d[2 * i] = y->dims[i] / x->dims[i];
		v.s[2 * i] = 0;
		v.d[2 * i + 1] = x->dims[i];
		v.s[2 * i + 1] = st[i];
	}
	sv_copy(k, y->data, x->data, &v, aoe_dtype_size(x->dtype));
	return 0;
}

/*
 * Gather and GatherElements.
 */

/* Check that every index is in [-dim, dim). */
static int
check_indices(const aoe_node *n, const aoe_tensor *ix, int64_t dim)
{
	int64_t i, v, cnt = aoe_tensor_numel(ix);

	for (i = 0; i < cnt; i++) {
		v = idx_at(ix->data, ix->dtype, i);
		if (v < -dim || v >= dim)
			return aoe_err(AOE_EDATA, "%s '%s': index %lld is out "
			    "of range for a dimension of %lld", n->op_type,
			    n->name, (long long)v, (long long)dim);
	}
	return 0;
}

static int
get_indices(aoe_graph *g, aoe_node *n, aoe_tensor **ip)
{
	int rc;

	if ((rc = get_in(g, n, 1, ip)) < 0)
		return rc;
	if ((*ip)->dtype != AOE_I64 && (*ip)->dtype != AOE_I32)
		return aoe_err(AOE_EDATA, "%s '%s': indices must be int64 or "
		    "int32, not %s", n->op_type, n->name,
		    aoe_dtype_name((*ip)->dtype));
	return 0;
}

static int
gather_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *ix;
	int64_t dims[VMAX];
	int rc, ax, i, nd = 0;

	if ((rc = get_in(g, n, 0, &x)) < 0 ||
	    (rc = get_indices(g, n, &ix)) < 0)
		return rc;
	if ((ax = aoe_attr_axis(n, 0, x->ndim)) < 0)
		return ax;
	if (x->ndim - 1 + ix->ndim > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, x->ndim - 1 + ix->ndim,
		    AOE_MAXDIM);
	if (ix->kind == AOE_T_CONST && ix->data &&
	    (rc = check_indices(n, ix, x->dims[ax])) < 0)
		return rc;
	for (i = 0; i < ax; i++)
		dims[nd++] = x->dims[i];
	for (i = 0; i < ix->ndim; i++)
		dims[nd++] = ix->dims[i];
	for (i = ax + 1; i < x->ndim; i++)
		dims[nd++] = x->dims[i];
	return aoe_set_output(g, n, 0, x->dtype, nd, dims);
}

struct gather_ctx {
	const char *xd;
	char *yd;
	const void *id;
	int idt;
	size_t es;
	int64_t A, ni, inner, blk, n, nch;
};

/* Items o * ni + j: index j of the indices in outer slice o. */
static void
gather_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct gather_ctx *c = ctx;
	int64_t t = aoe_chunk_lo(c->n, c->nch, chunk);
	int64_t end = aoe_chunk_lo(c->n, c->nch, chunk + 1);
	int64_t ni = c->ni, A = c->A, blk = c->blk;

	for (; t < end; t++) {
		int64_t o = t / ni, j = t % ni;
		int64_t v = idx_at(c->id, c->idt, j);
		const char *s;
		char *d = c->yd + t * blk;

		if (v < 0)
			v += A;
		s = c->xd + (o * A + v) * blk;
		if (c->inner == 1)
			gather_elems(d, s, 1, 1, c->es);
		else
			copy_run(d, s, c->inner, c->es);
	}
}

static int
gather_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *ix = aoe_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	size_t es = aoe_dtype_size(x->dtype);
	int64_t outer, inner, A, ni, blk;
	struct gather_ctx c;
	int ax, rc, nt;

	if (aoe_tensor_numel(y) == 0)
		return 0;
	if ((ax = aoe_attr_axis(k->n, 0, x->ndim)) < 0)
		return ax;
	A = x->dims[ax];
	if ((rc = check_indices(k->n, ix, A)) < 0)
		return rc;
	outer = prod(x->dims, 0, ax);
	inner = prod(x->dims, ax + 1, x->ndim);
	ni = aoe_tensor_numel(ix);
	blk = inner * (int64_t)es;
	nt = nthr(k, outer * ni * blk);
	c.xd = x->data;
	c.yd = y->data;
	c.id = ix->data;
	c.idt = ix->dtype;
	c.es = es;
	c.A = A;
	c.ni = ni;
	c.inner = inner;
	c.blk = blk;
	c.n = outer * ni;
	c.nch = aoe_nchunks(c.n, nt);
	aoe_parallel(nt, c.nch, gather_chunk, &c);
	return 0;
}

static int
gather_elements_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *ix;
	int rc, ax, d;

	if ((rc = get_in(g, n, 0, &x)) < 0 ||
	    (rc = get_indices(g, n, &ix)) < 0)
		return rc;
	if ((ax = aoe_attr_axis(n, 0, x->ndim)) < 0)
		return ax;
	if (ix->ndim != x->ndim)
		return aoe_err(AOE_EDATA, "%s '%s': indices have rank %d, "
		    "data rank %d", n->op_type, n->name, ix->ndim, x->ndim);
	for (d = 0; d < x->ndim; d++)
		if (d != ax && ix->dims[d] > x->dims[d])
			return aoe_err(AOE_EDATA, "%s '%s': indices "
			    "dimension %d of %lld exceeds the data's %lld",
			    n->op_type, n->name, d, (long long)ix->dims[d],
			    (long long)x->dims[d]);
	if (ix->kind == AOE_T_CONST && ix->data &&
	    (rc = check_indices(n, ix, x->dims[ax])) < 0)
		return rc;
	return aoe_set_output(g, n, 0, x->dtype, ix->ndim, ix->dims);
}

struct gather_el_ctx {
	const aoe_tensor *x, *ix;
	char *yd;
	const sview *v;
	const int64_t *xs;
	int ax;
	size_t es;
	int64_t A, rows, w, nth;
};

/* Slice t of nth of the rows of a GatherElements. */
static void
gather_el_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct gather_el_ctx *g = ctx;
	const sview *v = g->v;
	int64_t r0 = aoe_chunk_lo(g->rows, g->nth, chunk);
	int64_t r1 = aoe_chunk_lo(g->rows, g->nth, chunk + 1), r, off;
	int64_t c[VMAX], i, e, q, w = g->w, A = g->A, sa = g->xs[g->ax];
	const char *xd = g->x->data;
	char *yd = g->yd;
	size_t es = g->es;
	int L = v->nd - 1, idt = g->ix->dtype;

	if (r0 >= r1)
		return;
	off = sv_seek(v, L, r0, c);
	for (r = r0; r < r1; r++) {
		for (i = 0; i < w; i++) {
			e = r * w + i;
			q = idx_at(g->ix->data, idt, e);
			if (q < 0)
				q += A;
			q = off + q * sa + i * v->s[L];
			memcpy(yd + e * (int64_t)es, xd + q * (int64_t)es, es);
		}
		off = sv_next(v, L, c, off);
	}
}

static int
gather_elements_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *ix = aoe_in(k->g, k->n, 1);
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	size_t es = aoe_dtype_size(x->dtype);
	int64_t xs[AOE_MAXDIM], total, rows, w, A;
	int ax, rc, nt, L = ix->ndim - 1;
	struct gather_el_ctx g;
	sview v;

	if ((total = aoe_tensor_numel(y)) == 0)
		return 0;
	if ((ax = aoe_attr_axis(k->n, 0, x->ndim)) < 0)
		return ax;
	A = x->dims[ax];
	if ((rc = check_indices(k->n, ix, A)) < 0)
		return rc;
	strides(x, xs);
	/* The view walks the data at the indices' coords, axis left out. */
	v.nd = ix->ndim;
	memcpy(v.d, ix->dims, (size_t)ix->ndim * sizeof(int64_t));
	memcpy(v.s, xs, (size_t)ix->ndim * sizeof(int64_t));
	v.s[ax] = 0;
	w = ix->dims[L];
	rows = total / w;
	nt = nthr(k, total * (int64_t)es);
	g.x = x;
	g.ix = ix;
	g.yd = y->data;
	g.v = &v;
	g.xs = xs;
	g.ax = ax;
	g.es = es;
	g.A = A;
	g.rows = rows;
	g.w = w;
	g.nth = nt;
	aoe_parallel(nt, nt, gather_el_chunk, &g);
	return 0;
}

/*
 * Shape and Size.
 */

static void
shape_range(const aoe_node *n, int r, int64_t *s, int64_t *e)
{
	*s = aoe_attr_int(n, "start", 0);
	*e = aoe_attr_int(n, "end", r);
	if (*s < 0)
		*s += r;
	if (*e < 0)
		*e += r;
	*s = *s < 0 ? 0 : *s > r ? r : *s;
	*e = *e < 0 ? 0 : *e > r ? r : *e;
	if (*e < *s)
		*e = *s;
}

static int
shape_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x = aoe_in(g, n, 0);
	int64_t s, e, d;
	int rc;

	if (x == NULL || x->ndim < 0)
		return aoe_err(AOE_EDATA, "%s '%s': the input has no shape",
		    n->op_type, n->name);
	for (d = 0; d < x->ndim; d++)
		if (x->dims[d] < 0)
			return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' has "
			    "a dynamic dimension (bind it with --input-shape)",
			    n->op_type, n->name, x->name);
	if (aoe_out(g, n, 0) == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': no output", n->op_type,
		    n->name);
	shape_range(n, x->ndim, &s, &e);
	d = e - s;
	if ((rc = aoe_set_output(g, n, 0, AOE_I64, 1, &d)) < 0)
		return rc;
	/* exec.c folds Shape and Size at load time: the shape is static. */
	return 0;
}

static int
shape_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t s, e;

	shape_range(k->n, x->ndim, &s, &e);
	if (e > s)
		memcpy(y->data, x->dims + s, (size_t)(e - s) *
		    sizeof(int64_t));
	return 0;
}

static int
size_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	int64_t numel;
	int rc;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if (aoe_out(g, n, 0) == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': no output", n->op_type,
		    n->name);
	if ((rc = aoe_set_output(g, n, 0, AOE_I64, 0, NULL)) < 0)
		return rc;
	numel = aoe_tensor_numel(x);
	return numel < 0 ? aoe_err(AOE_EDATA, "%s '%s': the input has no "
	    "static size", n->op_type, n->name) : 0;
}

static int
size_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);

	*(int64_t *)y->data = aoe_tensor_numel(x);
	return 0;
}

/*
 * Cast.  Float to integer truncates toward zero; a value out of the
 * int64 range (or NaN) becomes INT64_MIN before narrowing, as x86 does.
 * float16 conversions round to nearest even and keep denormals, infinities
 * and NaNs.
 */

static inline int64_t
f2i(double x)
{
	return x > -9.2233720368547758e18 && x < 9.2233720368547758e18 ?
	    (int64_t)x : INT64_MIN;
}

static inline uint64_t
f2u(double x)
{
	return x >= 9.2233720368547758e18 && x < 1.8446744073709552e19 ?
	    (uint64_t)x : (uint64_t)f2i(x);
}

#define TO_F32(v)	((float)(v))
#define TO_F64(v)	((double)(v))
#define TO_INT(T, v)	((T)_Generic((v), float: f2i(v), double: f2i(v), \
			    default: (v)))
#define TO_I8(v)	TO_INT(int8_t, v)
#define TO_I16(v)	TO_INT(int16_t, v)
#define TO_I32(v)	TO_INT(int32_t, v)
#define TO_I64(v)	TO_INT(int64_t, v)
#define TO_U8(v)	TO_INT(uint8_t, v)
#define TO_U16(v)	TO_INT(uint16_t, v)
#define TO_U32(v)	TO_INT(uint32_t, v)
#define TO_U64(v)	((uint64_t)_Generic((v), float: f2u(v), \
			    double: f2u(v), default: (v)))
#define TO_BOOL(v)	((uint8_t)((v) != 0))

#define CAST_LOOP(ST, LOAD, DT, CONV) do {				\
	const ST *s = (const ST *)src;					\
	DT *d = (DT *)dst;						\
	for (i = 0; i < n; i++) {					\
		ST v = LOAD;						\
		d[i] = CONV(v);						\
	}								\
} while (0)

#define CAST_FROM(DT, CONV)						\
	switch (st) {							\
	case AOE_F32: CAST_LOOP(float, s[i], DT, CONV); return 0;	\
	case AOE_F64: CAST_LOOP(double, s[i], DT, CONV); return 0;	\
	case AOE_I8: CAST_LOOP(int8_t, s[i], DT, CONV); return 0;	\
	case AOE_I16: CAST_LOOP(int16_t, s[i], DT, CONV); return 0;	\
	case AOE_I32: CAST_LOOP(int32_t, s[i], DT, CONV); return 0;	\
	case AOE_I64: CAST_LOOP(int64_t, s[i], DT, CONV); return 0;	\
	case AOE_U8: CAST_LOOP(uint8_t, s[i], DT, CONV); return 0;	\
	case AOE_U16: CAST_LOOP(uint16_t, s[i], DT, CONV); return 0;	\
	case AOE_U32: CAST_LOOP(uint32_t, s[i], DT, CONV); return 0;	\
	case AOE_U64: CAST_LOOP(uint64_t, s[i], DT, CONV); return 0;	\
	case AOE_BOOL: CAST_LOOP(uint8_t, (uint8_t)(s[i] != 0), DT, CONV); \
		return 0;						\
	}								\
	return -1

/* Convert between two dtypes other than float16. */
static int
cast_plain(const void *src, int st, void *dst, int dt, int64_t n)
{
	int64_t i;

	switch (dt) {
	case AOE_F32:
		CAST_FROM(float, TO_F32);
	case AOE_F64:
		CAST_FROM(double, TO_F64);
	case AOE_I8:
		CAST_FROM(int8_t, TO_I8);
	case AOE_I16:
		CAST_FROM(int16_t, TO_I16);
	case AOE_I32:
		CAST_FROM(int32_t, TO_I32);
	case AOE_I64:
		CAST_FROM(int64_t, TO_I64);
	case AOE_U8:
		CAST_FROM(uint8_t, TO_U8);
	case AOE_U16:
		CAST_FROM(uint16_t, TO_U16);
	case AOE_U32:
		CAST_FROM(uint32_t, TO_U32);
	case AOE_U64:
		CAST_FROM(uint64_t, TO_U64);
	case AOE_BOOL:
		CAST_FROM(uint8_t, TO_BOOL);
	}
	return -1;
}

/*
 * float16 or bfloat16 (st) to float32, and float32 to either (dt); other
 * types reach the two through float32.
 */
static void
half_to_f32(const void *src, int st, float *d, int64_t n)
{
	if (st == AOE_F16)
		h2f_n(src, d, n);
	else
		bf2f_n(src, d, n);
}

static void
f32_to_half(const float *s, void *dst, int dt, int64_t n)
{
	if (dt == AOE_F16)
		f2h_n(s, dst, n);
	else
		f2bf_n(s, dst, n);
}

static int
is_half(int dt)
{
	return dt == AOE_F16 || dt == AOE_BF16;
}

/* Convert n elements from dtype st to dtype dt. */
static int
cast_elems(const void *src, int st, void *dst, int dt, int64_t n)
{
	float tmp[256];
	int64_t i, m;
	size_t ses = aoe_dtype_size(st), des = aoe_dtype_size(dt);

	if (st == dt) {
		if (n > 0)
			memcpy(dst, src, (size_t)n * ses);
		return 0;
	}
	if (is_half(st)) {
		if (dt == AOE_F32) {
			half_to_f32(src, st, dst, n);
			return 0;
		}
		for (i = 0; i < n; i += m) {
			m = n - i < 256 ? n - i : 256;
			half_to_f32((const uint16_t *)src + i, st, tmp, m);
			if (is_half(dt))
				f32_to_half(tmp, (uint16_t *)dst + i, dt, m);
			else if (cast_plain(tmp, AOE_F32, (char *)dst + i *
			    (int64_t)des, dt, m) < 0)
				return -1;
		}
		return 0;
	}
	if (is_half(dt)) {
		if (st == AOE_F32) {
			f32_to_half(src, dst, dt, n);
			return 0;
		}
		if (st == AOE_F64 && dt == AOE_F16) {
			for (i = 0; i < n; i++)
				((uint16_t *)dst)[i] =
				    d2h(((const double *)src)[i]);
			return 0;
		}
		for (i = 0; i < n; i += m) {
			m = n - i < 256 ? n - i : 256;
			if (cast_plain((const char *)src + i * (int64_t)ses,
			    st, tmp, AOE_F32, m) < 0)
				return -1;
			f32_to_half(tmp, (uint16_t *)dst + i, dt, m);
		}
		return 0;
	}
	return cast_plain(src, st, dst, dt, n);
}

static int
cast_ok(int dt)
{
	return aoe_dtype_size(dt) != 0;
}

static int
cast_check(aoe_graph *g, aoe_node *n, aoe_tensor **xp, int to)
{
	int rc;

	if ((rc = get_in(g, n, 0, xp)) < 0)
		return rc;
	if (!cast_ok(to))
		return aoe_err(AOE_EUNSUP, "%s '%s': cast to %s not "
		    "supported", n->op_type, n->name, dtname(to));
	return aoe_set_output(g, n, 0, to, (*xp)->ndim, (*xp)->dims);
}

static int
cast_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x;
	const aoe_attr *a = aoe_attr_find(n, "to");

	if (a == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': attribute 'to' is "
		    "missing", n->op_type, n->name);
	if (a->type == AOE_A_STRING)
		return aoe_err(AOE_EUNSUP, "%s '%s': 'to' as a type name "
		    "(opset 1) not supported", n->op_type, n->name);
	return cast_check(g, n, &x, (int)a->i);
}

static int
castlike_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *like;
	int rc;

	if ((rc = get_in(g, n, 1, &like)) < 0)
		return rc;
	return cast_check(g, n, &x, like->dtype);
}

struct cast_ctx {
	const aoe_tensor *x, *y;
	size_t ses, des;
	int64_t n, nth;
	int bad;		/* set, atomically, when a cast fails */
};

/* Slice t of nth of a Cast, cut at multiples of 64 elements. */
static void
cast_chunk(void *ctx, int64_t chunk, int tid)
{
	struct cast_ctx *c = ctx;
	int64_t t = chunk, n = c->n, nth = c->nth;
	int64_t a = aoe_chunk_lo(n, nth, t) & ~(int64_t)63;
	int64_t b = t == nth - 1 ? n : aoe_chunk_lo(n, nth, t + 1) &
	    ~(int64_t)63;

	if (b > a && cast_elems((const char *)c->x->data + a *
	    (int64_t)c->ses, c->x->dtype, (char *)c->y->data + a *
	    (int64_t)c->des, c->y->dtype, b - a) < 0)
		__atomic_store_n(&c->bad, 1, __ATOMIC_RELAXED);
}

static int
cast_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	int64_t n = aoe_tensor_numel(y);
	size_t ses = aoe_dtype_size(x->dtype), des = aoe_dtype_size(y->dtype);
	int nt = nthr(k, n * (int64_t)(ses > des ? ses : des));
	struct cast_ctx c;

	if (n == 0)
		return 0;
	if (x->dtype == y->dtype)
		return copy_run_op(k);
	c.x = x;
	c.y = y;
	c.ses = ses;
	c.des = des;
	c.n = n;
	c.nth = nt;
	c.bad = 0;
	aoe_parallel(nt, nt, cast_chunk, &c);
	if (__atomic_load_n(&c.bad, __ATOMIC_RELAXED))
		return aoe_err(AOE_EUNSUP, "%s '%s': cast from %s to %s not "
		    "supported", k->n->op_type, k->n->name,
		    aoe_dtype_name(x->dtype), aoe_dtype_name(y->dtype));
	return 0;
}

/*
 * Pad.
 */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE };

static int
pad_params(aoe_graph *g, aoe_node *n, const aoe_tensor *x, int64_t *pb,
    int64_t *pe, int *mode)
{
	const char *m = aoe_attr_str(n, "mode", "constant");
	int64_t p[2 * VMAX], ax[VMAX];
	const int64_t *ap;
	int np, na, i, a, r = x->ndim;

	if (strcmp(m, "constant") == 0)
		*mode = PAD_CONSTANT;
	else if (strcmp(m, "reflect") == 0)
		*mode = PAD_REFLECT;
	else if (strcmp(m, "edge") == 0)
		*mode = PAD_EDGE;
	else if (strcmp(m, "wrap") == 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': mode 'wrap' (opset 19) "
		    "not supported", n->op_type, n->name);
	else
		return aoe_err(AOE_EDATA, "%s '%s': unknown mode '%s'",
		    n->op_type, n->name, m);
	if (has_in(n, 1)) {
		if ((np = aoe_const_ints(g, n, 1, p, 2 * VMAX)) < 0)
			return np;
		na = r;
		if (has_in(n, 3) && (na = aoe_const_ints(g, n, 3, ax,
		    VMAX)) < 0)
			return na;
		if (!has_in(n, 3))
			for (i = 0; i < r; i++)
				ax[i] = i;
	} else {
		if ((ap = aoe_attr_ints(n, "pads", &np)) == NULL &&
		    (ap = aoe_attr_ints(n, "paddings", &np)) == NULL)
			return aoe_err(AOE_EDATA, "%s '%s': pads are missing",
			    n->op_type, n->name);
		if (np > 2 * VMAX)
			np = 2 * VMAX;
		memcpy(p, ap, (size_t)np * sizeof(int64_t));
		na = r;
		for (i = 0; i < r; i++)
			ax[i] = i;
	}
	if (np != 2 * na)
		return aoe_err(AOE_EDATA, "%s '%s': %d pads for %d axes",
		    n->op_type, n->name, np, na);
	for (i = 0; i < r; i++)
		pb[i] = pe[i] = 0;
	for (i = 0; i < na; i++) {
		if ((a = aoe_axis(ax[i], r)) < 0)
			return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out "
			    "of range for rank %d", n->op_type, n->name,
			    (long long)ax[i], r);
		pb[a] = p[i];
		pe[a] = p[i + na];
	}
	for (i = 0; i < r; i++) {
		if (x->dims[i] + pb[i] + pe[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': pads make axis %d "
			    "negative", n->op_type, n->name, i);
		if (*mode != PAD_CONSTANT && x->dims[i] == 0 &&
		    (pb[i] > 0 || pe[i] > 0))
			return aoe_err(AOE_EDATA, "%s '%s': cannot pad empty "
			    "axis %d in %s mode", n->op_type, n->name, i, m);
	}
	return 0;
}

static int
pad_infer(aoe_graph *g, aoe_node *n)
{
	aoe_tensor *x, *cv;
	int64_t pb[AOE_MAXDIM], pe[AOE_MAXDIM], dims[AOE_MAXDIM];
	int rc, mode, i;

	if ((rc = get_in(g, n, 0, &x)) < 0)
		return rc;
	if ((rc = pad_params(g, n, x, pb, pe, &mode)) < 0)
		return rc;
	if (has_in(n, 2)) {
		if ((rc = get_in(g, n, 2, &cv)) < 0)
			return rc;
		if (cv->dtype != x->dtype)
			return aoe_err(AOE_EDATA, "%s '%s': constant_value is "
			    "%s, data is %s", n->op_type, n->name,
			    aoe_dtype_name(cv->dtype),
			    aoe_dtype_name(x->dtype));
	}
	for (i = 0; i < x->ndim; i++)
		dims[i] = x->dims[i] + pb[i] + pe[i];
	return aoe_set_output(g, n, 0, x->dtype, x->ndim, dims);
}

/* Map an index outside [0, n) into it for reflect or edge padding. */
static inline int64_t
pad_map(int64_t i, int64_t n, int mode)
{
	int64_t p;

	if (i >= 0 && i < n)
		return i;
	if (mode == PAD_EDGE || n == 1)
		return i < 0 ? 0 : n - 1;
	p = 2 * (n - 1);
	i %= p;
	if (i < 0)
		i += p;
	return i < n ? i : p - i;
}

struct pad_ctx {
	const aoe_tensor *x;
	char *yd;
	const sview *v;
	const int64_t *pb, *xs;
	const void *val;
	int mode;
	size_t es;
	int64_t rows, W, iw, p0, m0, m1, nth;
};

/* Slice t of nth of the output rows of a Pad. */
static void
pad_chunk(void *ctx, int64_t chunk, int tid)
{
	const struct pad_ctx *p = ctx;
	const aoe_tensor *x = p->x;
	const sview *v = p->v;
	const int64_t *pb = p->pb, *xs = p->xs;
	const void *val = p->val;
	int64_t r0 = aoe_chunk_lo(p->rows, p->nth, chunk);
	int64_t r1 = aoe_chunk_lo(p->rows, p->nth, chunk + 1), row;
	int64_t c[VMAX], off, i, q, xx, W = p->W, iw = p->iw, p0 = p->p0;
	int64_t m0 = p->m0, m1 = p->m1;
	const char *xd = x->data;
	char *yd = p->yd;
	size_t es = p->es;
	int d, in, mode = p->mode, L = v->nd;

	if (r0 < r1)
		sv_seek(v, L, r0, c);
	for (row = r0; row < r1; row++) {
		char *dp = yd + row * W * (int64_t)es;
		const char *sp;

		in = 1;
		off = 0;
		for (d = 0; d < L; d++) {
			i = c[d] - pb[d];
			if (i < 0 || i >= x->dims[d]) {
				if (mode == PAD_CONSTANT) {
					in = 0;
					break;
				}
				i = pad_map(i, x->dims[d], mode);
			}
			off += i * xs[d];
		}
		if (!in)
			fill(dp, val, W, es);
		else {
			sp = xd + off * (int64_t)es;
			if (mode == PAD_CONSTANT) {
				fill(dp, val, m0, es);
				fill(dp + m1 * (int64_t)es, val, W - m1, es);
			} else {
				for (xx = 0; xx < m0; xx++) {
					q = pad_map(xx - p0, iw, mode);
					memcpy(dp + xx * (int64_t)es,
					    sp + q * (int64_t)es, es);
				}
				for (xx = m1; xx < W; xx++) {
					q = pad_map(xx - p0, iw, mode);
					memcpy(dp + xx * (int64_t)es,
					    sp + q * (int64_t)es, es);
				}
			}
			if (m1 > m0)
				copy_run(dp + m0 * (int64_t)es,
				    sp + (m0 - p0) * (int64_t)es, m1 - m0, es);
		}
		for (d = L - 1; d >= 0; d--) {
			if (++c[d] < v->d[d])
				break;
			c[d] = 0;
		}
	}
}

static int
pad_run(aoe_kctx *k)
{
	aoe_tensor *x = aoe_in(k->g, k->n, 0), *y = aoe_out(k->g, k->n, 0);
	aoe_tensor *cv = aoe_in(k->g, k->n, 2);
	int64_t pb[AOE_MAXDIM], pe[AOE_MAXDIM], xs[AOE_MAXDIM];
	int64_t total, rows, W, iw, p0, m0, m1;
	size_t es = aoe_dtype_size(x->dtype);
	uint64_t val[2] = { 0, 0 };
	int rc, mode, nt, r = x->ndim, L = r - 1;
	struct pad_ctx pc;
	sview v;

	if ((rc = pad_params(k->g, k->n, x, pb, pe, &mode)) < 0)
		return rc;
	if ((total = aoe_tensor_numel(y)) == 0)
		return 0;
	if (mode == PAD_CONSTANT) {
		if (cv != NULL && aoe_tensor_numel(cv) > 0 && cv->data)
			memcpy(val, cv->data, es);
		else if (cv == NULL) {
			float f = aoe_attr_float(k->n, "value", 0);

			cast_elems(&f, AOE_F32, val, x->dtype, 1);
		}
	}
	if (r == 0) {
		memcpy(y->data, x->data, es);
		return 0;
	}
	strides(x, xs);
	/* v holds the output's row dims and the input's strides. */
	v.nd = L;
	memcpy(v.d, y->dims, (size_t)L * sizeof(int64_t));
	memcpy(v.s, xs, (size_t)L * sizeof(int64_t));
	W = y->dims[L];
	iw = x->dims[L];
	p0 = pb[L];
	rows = total / W;
	m0 = p0 < 0 ? 0 : p0 > W ? W : p0;
	m1 = p0 + iw < W ? p0 + iw : W;
	if (m1 < m0)
		m1 = m0;
	nt = nthr(k, total * (int64_t)es);
	if (rows < nt)
		nt = rows > 1 ? (int)rows : 1;
	pc.x = x;
	pc.yd = y->data;
	pc.v = &v;
	pc.pb = pb;
	pc.xs = xs;
	pc.val = val;
	pc.mode = mode;
	pc.es = es;
	pc.rows = rows;
	pc.W = W;
	pc.iw = iw;
	pc.p0 = p0;
	pc.m0 = m0;
	pc.m1 = m1;
	pc.nth = nt;
	aoe_parallel(nt, nt, pad_chunk, &pc);
	return 0;
}

/*
 * ConstantOfShape and Constant.
 */

static int
cos_value(aoe_graph *g, aoe_node *n, int *dt, const void **val)
{
	static const float zero;
	const aoe_attr *a = aoe_attr_find(n, "value");

	if (a == NULL) {
		*dt = AOE_F32;
		*val = &zero;
		return 0;
	}
	if (a->type != AOE_A_TENSOR || a->t == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': attribute 'value' is not "
		    "a tensor", n->op_type, n->name);
	if (!cast_ok(a->t->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': value of dtype %s not "
		    "supported", n->op_type, n->name, dtname(a->t->dtype));
	if (aoe_tensor_numel(a->t) != 1 || a->t->data == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': value must hold one "
		    "element", n->op_type, n->name);
	*dt = a->t->dtype;
	*val = a->t->data;
	return 0;
}

static int
cos_infer(aoe_graph *g, aoe_node *n)
{
	int64_t dims[VMAX];
	const void *val = NULL;
	int rc, cnt, dt = AOE_F32, i;

	if ((rc = cos_value(g, n, &dt, &val)) < 0)
		return rc;
	if ((cnt = aoe_const_ints(g, n, 0, dims, VMAX)) < 0)
		return cnt;
	if (cnt > AOE_MAXDIM)
		return aoe_err(AOE_EUNSUP, "%s '%s': output rank %d exceeds "
		    "%d", n->op_type, n->name, cnt, AOE_MAXDIM);
	for (i = 0; i < cnt; i++)
		if (dims[i] < 0)
			return aoe_err(AOE_EDATA, "%s '%s': shape[%d] is "
			    "negative", n->op_type, n->name, i);
	return aoe_set_output(g, n, 0, dt, cnt, dims);
}

static int
cos_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	const void *val = NULL;
	int64_t n = aoe_tensor_numel(y);
	size_t es = aoe_dtype_size(y->dtype);
	int rc, dt;

	if ((rc = cos_value(k->g, k->n, &dt, &val)) < 0)
		return rc;
	par_fill(y->data, val, n, es, nthr(k, n * (int64_t)es));
	return 0;
}

/* The Constant's attribute, its dtype and shape and where its data is. */
static int
const_value(aoe_node *n, int *dt, int *nd, int64_t *dims, const void **data)
{
	const aoe_attr *a;
	int i, found = 0;
	static const char *unsup[] = { "sparse_value", "value_string",
	    "value_strings" };

	for (i = 0; i < 3; i++)
		if (aoe_attr_find(n, unsup[i]))
			return aoe_err(AOE_EUNSUP, "%s '%s': attribute '%s' "
			    "not supported", n->op_type, n->name, unsup[i]);
	for (i = 0; i < n->nattr; i++) {
		a = &n->attrs[i];
		if (strcmp(a->name, "value") == 0 && a->type == AOE_A_TENSOR &&
		    a->t) {
			if (!cast_ok(a->t->dtype))
				return aoe_err(AOE_EUNSUP, "%s '%s': a value "
				    "of dtype %s not supported", n->op_type,
				    n->name, dtname(a->t->dtype));
			if (a->t->ndim < 0 || a->t->ndim > AOE_MAXDIM ||
			    aoe_tensor_numel(a->t) < 0 ||
			    (aoe_tensor_numel(a->t) > 0 && !a->t->data))
				return aoe_err(AOE_EDATA, "%s '%s': the value "
				    "tensor has no data", n->op_type, n->name);
			*dt = a->t->dtype;
			*nd = a->t->ndim;
			memcpy(dims, a->t->dims, (size_t)*nd *
			    sizeof(int64_t));
			*data = a->t->data;
		} else if (strcmp(a->name, "value_float") == 0) {
			*dt = AOE_F32;
			*nd = 0;
			*data = &a->f;
		} else if (strcmp(a->name, "value_floats") == 0) {
			*dt = AOE_F32;
			*nd = 1;
			dims[0] = a->n;
			*data = a->floats;
		} else if (strcmp(a->name, "value_int") == 0) {
			*dt = AOE_I64;
			*nd = 0;
			*data = &a->i;
		} else if (strcmp(a->name, "value_ints") == 0) {
			*dt = AOE_I64;
			*nd = 1;
			dims[0] = a->n;
			*data = a->ints;
		} else
			continue;
		found++;
	}
	if (found != 1)
		return aoe_err(AOE_EDATA, "%s '%s': exactly one value "
		    "attribute is needed, found %d", n->op_type, n->name,
		    found);
	return 0;
}

static int
constant_infer(aoe_graph *g, aoe_node *n)
{
	int64_t dims[AOE_MAXDIM];
	const void *data;
	int rc, dt, nd;

	if ((rc = const_value(n, &dt, &nd, dims, &data)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, dt, nd, dims);
}

static int
constant_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	int64_t dims[AOE_MAXDIM];
	const void *data;
	size_t nb = aoe_tensor_nbytes(y);
	int rc, dt, nd;

	if ((rc = const_value(k->n, &dt, &nd, dims, &data)) < 0)
		return rc;
	if (nb && data)
		memcpy(y->data, data, nb);
	return 0;
}

/*
 * Range.
 */

/* A scalar input as double and int64; it must be a constant. */
static int
range_scalar(aoe_graph *g, aoe_node *n, int i, int dt, double *f,
    int64_t *v)
{
	aoe_tensor *t;
	int rc;

	if ((rc = get_in(g, n, i, &t)) < 0)
		return rc;
	if (t->dtype != dt)
		return aoe_err(AOE_EDATA, "%s '%s': input %d is %s, input 0 "
		    "is %s", n->op_type, n->name, i, aoe_dtype_name(t->dtype),
		    aoe_dtype_name(dt));
	if (aoe_tensor_numel(t) != 1)
		return aoe_err(AOE_EDATA, "%s '%s': input '%s' is not a "
		    "scalar", n->op_type, n->name, t->name);
	if (t->data == NULL)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' must be a "
		    "constant (bind dynamic shapes with --input-shape)",
		    n->op_type, n->name, t->name);
	switch (dt) {
	case AOE_F32:
		*f = *(const float *)t->data;
		break;
	case AOE_F64:
		*f = *(const double *)t->data;
		break;
	case AOE_I16:
		*v = *(const int16_t *)t->data;
		break;
	case AOE_I32:
		*v = *(const int32_t *)t->data;
		break;
	case AOE_I64:
		*v = *(const int64_t *)t->data;
		break;
	}
	return 0;
}

static int
range_params(aoe_graph *g, aoe_node *n, int need_const, double *fs,
    double *fd, int64_t *is, int64_t *id, int64_t *cnt)
{
	aoe_tensor *t;
	double fl = 0;
	int64_t il = 0;
	int rc, dt;

	if ((rc = get_in(g, n, 0, &t)) < 0)
		return rc;
	dt = t->dtype;
	if (dt != AOE_F32 && dt != AOE_F64 && dt != AOE_I16 &&
	    dt != AOE_I32 && dt != AOE_I64)
		return aoe_err(AOE_EUNSUP, "%s '%s': dtype %s not supported",
		    n->op_type, n->name, dtname(dt));
	if (need_const)
		for (rc = 0; rc < 3; rc++) {
			t = aoe_in(g, n, rc);
			if (t && !aoe_value_known(n, t))
				return aoe_err(AOE_EUNSUP, "%s '%s': input "
				    "'%s' must be a constant (bind dynamic "
				    "shapes with --input-shape)", n->op_type,
				    n->name, t->name);
		}
	if ((rc = range_scalar(g, n, 0, dt, fs, is)) < 0 ||
	    (rc = range_scalar(g, n, 1, dt, &fl, &il)) < 0 ||
	    (rc = range_scalar(g, n, 2, dt, fd, id)) < 0)
		return rc;
	if (dt == AOE_F32 || dt == AOE_F64) {
		double c;

		if (*fd == 0)
			return aoe_err(AOE_EDATA, "%s '%s': delta is 0",
			    n->op_type, n->name);
		if (dt == AOE_F32)
			c = ceilf(((float)fl - (float)*fs) / (float)*fd);
		else
			c = ceil((fl - *fs) / *fd);
		if (!(c < 4e18))
			return aoe_err(AOE_EDATA, "%s '%s': the range is not "
			    "finite", n->op_type, n->name);
		*cnt = c > 0 ? (int64_t)c : 0;
	} else {
		if (*id == 0)
			return aoe_err(AOE_EDATA, "%s '%s': delta is 0",
			    n->op_type, n->name);
		if (*id > 0)
			*cnt = il > *is ? (il - *is - 1) / *id + 1 : 0;
		else
			*cnt = il < *is ? (*is - il - 1) / -*id + 1 : 0;
	}
	return dt;
}

static int
range_infer(aoe_graph *g, aoe_node *n)
{
	double fs = 0, fd = 0;
	int64_t is = 0, id = 0, cnt = 0;
	int dt;

	if ((dt = range_params(g, n, 1, &fs, &fd, &is, &id, &cnt)) < 0)
		return dt;
	return aoe_set_output(g, n, 0, dt, 1, &cnt);
}

static int
range_run(aoe_kctx *k)
{
	aoe_tensor *y = aoe_out(k->g, k->n, 0);
	double fs = 0, fd = 0;
	int64_t is = 0, id = 0, cnt = 0, i;
	int dt;

	if ((dt = range_params(k->g, k->n, 0, &fs, &fd, &is, &id, &cnt)) < 0)
		return dt;
	if (cnt > y->dims[0])
		cnt = y->dims[0];
	/* Floats accumulate as the spec's loop does; ints are exact. */
	switch (dt) {
	case AOE_F32: {
		float *d = y->data, v = (float)fs;
		for (i = 0; i < cnt; i++, v += (float)fd)
			d[i] = v;
		break;
	}
	case AOE_F64: {
		double *d = y->data, v = fs;
		for (i = 0; i < cnt; i++, v += fd)
			d[i] = v;
		break;
	}
	case AOE_I16:
		for (i = 0; i < cnt; i++)
			((int16_t *)y->data)[i] = (int16_t)(is + i * id);
		break;
	case AOE_I32:
		for (i = 0; i < cnt; i++)
			((int32_t *)y->data)[i] = (int32_t)(is + i * id);
		break;
	case AOE_I64:
		for (i = 0; i < cnt; i++)
			((int64_t *)y->data)[i] = is + i * id;
		break;
	}
	return 0;
}

const aoe_op aoe_ops_shape[] = {
	{ "Identity", identity_infer, identity_run, NULL, NULL },
	{ "Reshape", reshape_infer, copy_run_op, NULL, NULL },
	{ "Flatten", flatten_infer, copy_run_op, NULL, NULL },
	{ "Squeeze", squeeze_infer, copy_run_op, NULL, NULL },
	{ "Unsqueeze", unsqueeze_infer, copy_run_op, NULL, NULL },
	{ "Transpose", transpose_infer, transpose_run, NULL,
	    transpose_sched },
	{ "Concat", concat_infer, concat_run, NULL, move_sched },
	{ "Split", split_infer, split_run, NULL, move_sched },
	{ "Slice", slice_infer, slice_run, NULL, move_sched },
	{ "Expand", expand_infer, expand_run, NULL, move_sched },
	{ "Tile", tile_infer, tile_run, NULL, move_sched },
	{ "Gather", gather_infer, gather_run, NULL, move_sched },
	{ "GatherElements", gather_elements_infer, gather_elements_run, NULL,
	    move_sched },
	{ "Pad", pad_infer, pad_run, NULL, move_sched },
	{ "Cast", cast_infer, cast_run, NULL, move_sched },
	{ "CastLike", castlike_infer, cast_run, NULL, move_sched },
	{ "Shape", shape_infer, shape_run, NULL, NULL },
	{ "Size", size_infer, size_run, NULL, NULL },
	{ "ConstantOfShape", cos_infer, cos_run, NULL, NULL },
	{ "Constant", constant_infer, constant_run, NULL, NULL },
	{ "Range", range_infer, range_run, NULL, NULL },
	{ NULL, NULL, NULL, NULL, NULL }
};

/* The search space (see aoe_space_for() in space.c and the top). */
int
aoe_space_shape(aoe_space *sp)
{
	if (aoe_space_add_pow2(sp, "par", 1, 1, 1, 1, 1,
	    "1 copies may use threads, 0 never") < 0 ||
	    aoe_space_add_pow2(sp, "grain", 0, 4096, 1048576, GRAIN_DEF, 1,
	    "bytes a thread must get before a copy is split") < 0)
		return -AOE_EINTERNAL;
	if (aoe_sched_get(&sp->def, "tile", -1) != -1 &&
	    aoe_space_add_pow2(sp, "tile", 0, 8, 256, TILE_DEF, 1,
	    "edge of the square tiles a transposition walks") < 0)
		return -AOE_EINTERNAL;
	return 0;
}
