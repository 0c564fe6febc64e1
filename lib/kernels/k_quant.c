/*
 * k_quant.c - quantized inference: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, and the integer products MatMulInteger,
 * QLinearMatMul, ConvInteger and QLinearConv on an int8 GEMM.
 *
 * Quantizing is y = saturate(round(x / scale) + zero_point), rounding
 * half to even; dequantizing y = (x - zero_point) * scale.  A scale and
 * a zero point are one value (per tensor) or one along an axis.
 *
 * The int8 GEMM computes C = (A - za)(B - zb) exactly in int32, with za
 * a zero point per row of A (the activations) and zb one per column of
 * B (the weights).  It has two forms, chosen at run time:
 *
 *	vnni 1	AVX-512 VNNI: A as unsigned bytes (an int8 A shifted by
 *		128), B as signed bytes (a uint8 B shifted by -128), four
 *		k steps a vpdpbusd; the zero points and shifts are taken
 *		out afterwards with A's row sums and B's column sums:
 *		sum (A'-za')(B'-zb') = sum A'B' - zb' rowsum(A')
 *		- za' (colsum(B') - K zb'), all exact in int32.
 *	vnni 0	AVX2: A - za and B - zb widened to int16 (at most 255 in
 *		magnitude), two k steps a vpmaddwd, whose pair sums cannot
 *		saturate; no corrections.
 *
 * B is packed into strips of nr columns (nv vectors: 16 columns each
 * with VNNI, 8 with AVX2) and k groups; a constant B once, in prepare.
 * Threads take blocks of mc rows of A (converted and padded once a
 * block) and ranges of B's strips; the micro-kernel keeps an mr x nr
 * tile of int32 sums in registers over kc values of k.  The result is
 * finished a row at a time: stored as int32, or requantized as
 * saturate(round(sum * scale_a * scale_b / scale_y) + zero_point_y) with
 * the product of the scales in float, as ONNX Runtime does.
 *
 * Convolutions convert each image to channels-last (in the GEMM's form
 * of A, padding with the zero point) and gather a row of A for each
 * output position with one copy of a group's channels for each kernel
 * offset; the weights are B, one packed matrix a group.
 *
 * The knobs (aoe_space_quant): vnni, mr, nv, mc, kc, par and prepack.
 */
#include <immintrin.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "aoe_kernels.h"
#include "kernel.h"

/*
 * Quantization parameters.
 */

/* Whether the AVX-512 VNNI form can run here (AOE_MAX_ISA=avx2: no). */
static int
vnni_ok(void)
{
	static int ok = -1;

	if (ok < 0) {
		__builtin_cpu_init();
		ok = aoe_cpu_avx512() && __builtin_cpu_supports("avx512bw") &&
		    __builtin_cpu_supports("avx512vnni");
	}
	return ok;
}

static int
is_q8(int dt)
{
	return dt == AOE_U8 || dt == AOE_I8;
}

/* The range of a quantized type. */
static void
q_range(int dt, int32_t *lo, int32_t *hi)
{
	switch (dt) {
	case AOE_I8:
		*lo = -128, *hi = 127;
		break;
	case AOE_U16:
		*lo = 0, *hi = 65535;
		break;
	case AOE_I16:
		*lo = -32768, *hi = 32767;
		break;
	default:
		*lo = 0, *hi = 255;
		break;
	}
}

/* Element i of an integer tensor's data, as int32 (int32 or narrower). */
static int32_t
int_at(const void *p, int dt, int64_t i)
{
	switch (dt) {
	case AOE_U8:
		return ((const uint8_t *)p)[i];
	case AOE_I8:
		return ((const int8_t *)p)[i];
	case AOE_U16:
		return ((const uint16_t *)p)[i];
	case AOE_I16:
		return ((const int16_t *)p)[i];
	case AOE_I32:
		return ((const int32_t *)p)[i];
	}
	return 0;
}

/*
 * Check scales s[0..cnt): each a positive finite number, else an error
 * naming the node (a zero scale divides by zero, a negative one flips
 * the order of the values, a NaN poisons every result).
 */
static int
scales_ok(const aoe_node *n, const char *what, const float *s, int64_t cnt)
{
	int64_t i;

	for (i = 0; i < cnt; i++)
		if (!(s[i] > 0) || !isfinite(s[i]))
			return aoe_err(AOE_EDATA, "%s '%s': %s %g is not a "
			    "positive finite number", n->op_type, n->name,
			    what, (double)s[i]);
	return 0;
}

/*
 * Check a scale (input si) and its zero point (input zi, optional) of
 * node n: float32, cnt values (1, or want when want > 1), the zero
 * point as many of type zdt (0: any of the quantized types).  A constant
 * scale is checked for values too.  *per gets 1 for one value an
 * element of the axis, else 0.
 */
static int
qparam_check(const aoe_graph *g, const aoe_node *n, int si, int zi,
    int64_t want, int zdt, const char *what, int *per)
{
	const aoe_tensor *s = opt_in(g, n, si), *z = opt_in(g, n, zi);
	int64_t cnt;

	if (s == NULL)
		return aoe_err(AOE_EDATA, "%s '%s': the %s is missing",
		    n->op_type, n->name, what);
	if (s->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': %s '%s' of type %s not "
		    "supported (float32 only)", n->op_type, n->name, what,
		    s->name, aoe_dtype_name(s->dtype));
	cnt = aoe_tensor_numel(s);
	if (s->ndim > 1 || cnt < 1 || (cnt > 1 && cnt != want))
		return aoe_err(AOE_EDATA, "%s '%s': %s '%s' has %lld values, "
		    "1 or %lld expected", n->op_type, n->name, what, s->name,
		    (long long)cnt, (long long)want);
	*per = cnt > 1;
	if (z != NULL) {
		if (aoe_tensor_numel(z) != cnt || z->ndim > 1)
			return aoe_err(AOE_EDATA, "%s '%s': zero point '%s' "
			    "has %lld values, its scale %lld", n->op_type,
			    n->name, z->name, (long long)aoe_tensor_numel(z),
			    (long long)cnt);
		if (zdt != 0 && z->dtype != zdt)
			return aoe_err(AOE_EDATA, "%s '%s': zero point '%s' "
			    "is %s, not %s as its data", n->op_type, n->name,
			    z->name, aoe_dtype_name(z->dtype),
			    aoe_dtype_name(zdt));
		if (zdt == 0 && !is_q8(z->dtype))
			return aoe_err(AOE_EUNSUP, "%s '%s': zero point '%s' "
			    "of type %s not supported (uint8 or int8)",
			    n->op_type, n->name, z->name,
			    aoe_dtype_name(z->dtype));
	}
	if (s->kind == AOE_T_CONST && s->data != NULL)
		return scales_ok(n, what, s->data, cnt);
	return 0;
}

/* A zero point's values as int32 (cnt of them; zeros when absent). */
static void
zp_load(const aoe_tensor *z, int32_t *dst, int64_t cnt)
{
	int64_t i, zn = z ? aoe_tensor_numel(z) : 0;

	for (i = 0; i < cnt; i++)
		dst[i] = zn ? int_at(z->data, z->dtype, zn == 1 ? 0 : i) : 0;
}

/*
 * QuantizeLinear and DequantizeLinear.
 */

/* The axis of a per-axis (De)QuantizeLinear of x, checked. */
static int
ql_axis(const aoe_graph *g, const aoe_node *n, const aoe_tensor *x,
    int *axis)
{
	int64_t a = aoe_attr_int(n, "axis", 1);

	if (aoe_attr_int(n, "block_size", 0) != 0)
		return aoe_err(AOE_EUNSUP, "%s '%s': blocked quantization "
		    "(block_size) not supported", n->op_type, n->name);
	/* The axis matters only to a scale of more than one value. */
	if (aoe_tensor_numel(aoe_in(g, n, 1)) == 1 && n->nin > 1) {
		*axis = 0;
		return 0;
	}
	*axis = x->ndim == 0 ? 0 : aoe_axis(a, x->ndim);
	if (*axis < 0)
		return aoe_err(AOE_EDATA, "%s '%s': axis %lld is out of range "
		    "for rank %d", n->op_type, n->name, (long long)a,
		    x->ndim);
	return 0;
}

static int
quantize_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x = aoe_in(g, n, 0), *z = opt_in(g, n, 2);
	int64_t odt = aoe_attr_int(n, "output_dtype", 0);
	int axis, per, dt, rc;

	if ((rc = aoe_need_inputs(g, n, 2, 3)) < 0)
		return rc;
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' of type %s not "
		    "supported (float32 only)", n->op_type, n->name, x->name,
		    aoe_dtype_name(x->dtype));
	if ((rc = ql_axis(g, n, x, &axis)) < 0)
		return rc;
	dt = z ? z->dtype : odt ? (int)odt : AOE_U8;
	if (dt != AOE_U8 && dt != AOE_I8 && dt != AOE_U16 && dt != AOE_I16)
		return aoe_err(AOE_EUNSUP, "%s '%s': output type %s not "
		    "supported (uint8, int8, uint16 or int16)", n->op_type,
		    n->name, aoe_dtype_name(dt));
	if (z && odt && odt != dt)
		return aoe_err(AOE_EDATA, "%s '%s': output_dtype %s differs "
		    "from the zero point's %s", n->op_type, n->name,
		    aoe_dtype_name((int)odt), aoe_dtype_name(dt));
	if ((rc = qparam_check(g, n, 1, 2, x->ndim ? x->dims[axis] : 1, dt,
	    "scale", &per)) < 0)
		return rc;
	return aoe_set_output(g, n, 0, dt, x->ndim, x->dims);
}

static int
dequantize_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x = aoe_in(g, n, 0), *z;
	int axis, per, rc;

	if ((rc = aoe_need_inputs(g, n, 2, 3)) < 0)
		return rc;
	if (!is_q8(x->dtype) && x->dtype != AOE_I32 && x->dtype != AOE_U16 &&
	    x->dtype != AOE_I16)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' of type %s not "
		    "supported (uint8, int8, uint16, int16 or int32)",
		    n->op_type, n->name, x->name, aoe_dtype_name(x->dtype));
	if ((rc = ql_axis(g, n, x, &axis)) < 0 ||
	    (rc = qparam_check(g, n, 1, 2, x->ndim ? x->dims[axis] : 1,
	    x->dtype, "scale", &per)) < 0)
		return rc;
	z = opt_in(g, n, 2);
	if (x->dtype == AOE_I32 && z != NULL && z->kind == AOE_T_CONST &&
	    z->data != NULL) {
		int64_t i, cnt = aoe_tensor_numel(z);
		for (i = 0; i < cnt; i++)
			if (((const int32_t *)z->data)[i] != 0)
				return aoe_err(AOE_EDATA, "%s '%s': an int32 "
				    "input's zero point must be 0",
				    n->op_type, n->name);
	}
	return aoe_set_output(g, n, 0, AOE_F32, x->ndim, x->dims);
}

/* Quantize x[0..len) by s and z into y of type dt. */
static void
q_span(const float *x, void *y, int64_t len, float s, int32_t z, int dt)
{
	int32_t lo, hi;
	int64_t i = 0;

	q_range(dt, &lo, &hi);
	if (is_q8(dt)) {
		const __m256 vs = _mm256_set1_ps(s), vz = _mm256_set1_ps(z);
		const __m256 vl = _mm256_set1_ps(lo), vh = _mm256_set1_ps(hi);
		uint8_t *d = y;
		for (; i + 8 <= len; i += 8) {
			__m256 v = _mm256_div_ps(_mm256_loadu_ps(x + i), vs);
			__m256i q;
			__m128i w;
			v = _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT |
			    _MM_FROUND_NO_EXC);
			v = _mm256_min_ps(vh, _mm256_max_ps(vl,
			    _mm256_add_ps(v, vz)));
			q = _mm256_cvtps_epi32(v);
			w = _mm_packs_epi32(_mm256_castsi256_si128(q),
			    _mm256_extracti128_si256(q, 1));
			w = dt == AOE_U8 ? _mm_packus_epi16(w, w) :
			    _mm_packs_epi16(w, w);
			_mm_storel_epi64((__m128i *)(d + i), w);
		}
	}
	for (; i < len; i++) {
		float v = nearbyintf(x[i] / s) + (float)z;
		int32_t q;
		v = v < lo ? lo : v > hi ? hi : v;
		q = (int32_t)v;
		switch (dt) {
		case AOE_U8:
			((uint8_t *)y)[i] = (uint8_t)q;
			break;
		case AOE_I8:
			((int8_t *)y)[i] = (int8_t)q;
			break;
		case AOE_U16:
			((uint16_t *)y)[i] = (uint16_t)q;
			break;
		default:
			((int16_t *)y)[i] = (int16_t)q;
			break;
		}
	}
}

/* Dequantize x[0..len) of type dt by s and z into y. */
static void
dq_span(const void *x, int dt, float *y, int64_t len, float s, int32_t z)
{
	const __m256 vs = _mm256_set1_ps(s);
	const __m256i vz = _mm256_set1_epi32(z);
	int64_t i = 0;

	for (; i + 8 <= len && (is_q8(dt) || dt == AOE_I32); i += 8) {
		__m256i v;
		if (dt == AOE_I32)
			v = _mm256_loadu_si256((const __m256i *)((const
			    int32_t *)x + i));
		else {
			__m128i b = _mm_loadl_epi64((const __m128i *)((const
			    uint8_t *)x + i));
			v = dt == AOE_U8 ? _mm256_cvtepu8_epi32(b) :
			    _mm256_cvtepi8_epi32(b);
		}
		_mm256_storeu_ps(y + i, _mm256_mul_ps(_mm256_cvtepi32_ps(
		    _mm256_sub_epi32(v, vz)), vs));
	}
	for (; i < len; i++)
		y[i] = (float)(int_at(x, dt, i) - z) * s;
}

/* A (de)quantization split in runs of one scale, for the threads. */
struct ql_job {
	const aoe_tensor *x, *y, *z;
	const float *s;
	int64_t rows, len, inner, per, chunk;
	int quant, fail;
};

static void
ql_chunk(void *arg, int64_t c, int tid)
{
	struct ql_job *j = arg;
	size_t xs = aoe_dtype_size(j->x->dtype);
	size_t ys = aoe_dtype_size(j->y->dtype);
	int64_t e0 = c * j->chunk;
	int64_t e1 = min64(e0 + j->chunk, j->rows * j->inner);

	while (e0 < e1) {
		int64_t r = e0 / j->inner, off = e0 % j->inner;
		int64_t len = min64(j->inner - off, e1 - e0);
		int64_t a = j->per ? r % j->len : 0;
		float s = j->s[a];
		int32_t z = j->z ? int_at(j->z->data, j->z->dtype, a) : 0;
		const char *xp = (const char *)j->x->data + e0 * xs;
		char *yp = (char *)j->y->data + e0 * ys;

		if (j->quant)
			q_span((const float *)xp, yp, len, s, z, j->y->dtype);
		else
			dq_span(xp, j->x->dtype, (float *)yp, len, s, z);
		e0 += len;
	}
}

static int
ql_run(aoe_kctx *k, int quant)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *x = aoe_in(g, n, 0), *s = aoe_in(g, n, 1);
	struct ql_job j;
	int64_t total, cnt = aoe_tensor_numel(s);
	int axis, rc;

	if ((rc = ql_axis(g, n, x, &axis)) < 0 ||
	    (rc = scales_ok(n, "scale", s->data, cnt)) < 0)
		return rc;
	memset(&j, 0, sizeof(j));
	j.x = x;
	j.y = aoe_out(g, n, 0);
	j.z = opt_in(g, n, 2);
	j.s = s->data;
	j.quant = quant;
	j.per = cnt > 1;
	total = aoe_tensor_numel(x);
	if (j.per) {
		j.len = x->dims[axis];
		j.inner = prod(x->dims, axis + 1, x->ndim);
		j.rows = total / (j.inner ? j.inner : 1);
	} else {
		j.len = 1;
		j.rows = 1;
		j.inner = total;
	}
	if (total == 0)
		return 0;
	j.chunk = max64(1 << 14, ceildiv(total, 4 * (int64_t)k->nthreads));
	aoe_parallel(nthreads_for(total, 1 << 14, k->nthreads),
	    ceildiv(total, j.chunk), ql_chunk, &j);
	return 0;
}

static int
quantize_run(aoe_kctx *k)
{
	return ql_run(k, 1);
}

static int
dequantize_run(aoe_kctx *k)
{
	return ql_run(k, 0);
}

/*
 * DynamicQuantizeLinear: uint8 with the scale and zero point that map
 * [min(x, 0), max(x, 0)] onto [0, 255].
 */
static int
dynq_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x = aoe_in(g, n, 0);
	int rc;

	if ((rc = aoe_need_inputs(g, n, 1, 1)) < 0)
		return rc;
	if (n->nout != 3)
		return aoe_err(AOE_EDATA, "%s '%s': expects 3 outputs, not %d",
		    n->op_type, n->name, n->nout);
	if (x->dtype != AOE_F32)
		return aoe_err(AOE_EUNSUP, "%s '%s': input '%s' of type %s not "
		    "supported (float32 only)", n->op_type, n->name, x->name,
		    aoe_dtype_name(x->dtype));
	if ((rc = aoe_set_output(g, n, 0, AOE_U8, x->ndim, x->dims)) < 0 ||
	    (rc = aoe_set_output(g, n, 1, AOE_F32, 0, NULL)) < 0)
		return rc;
	return aoe_set_output(g, n, 2, AOE_U8, 0, NULL);
}

static int
dynq_run(aoe_kctx *k)
{
	const aoe_graph *g = k->g;
	const aoe_node *n = k->n;
	const aoe_tensor *x = aoe_in(g, n, 0);
	const float *xd = x->data;
	int64_t i = 0, cnt = aoe_tensor_numel(x);
	__m256 vmin = _mm256_setzero_ps(), vmax = _mm256_setzero_ps();
	float lo, hi, buf[8], s, zf;
	uint8_t z;

	for (; i + 8 <= cnt; i += 8) {
		__m256 v = _mm256_loadu_ps(xd + i);
		vmin = _mm256_min_ps(vmin, v);
		vmax = _mm256_max_ps(vmax, v);
	}
	_mm256_storeu_ps(buf, vmin);
	lo = 0;
	for (int j = 0; j < 8; j++)
		lo = buf[j] < lo ? buf[j] : lo;
	_mm256_storeu_ps(buf, vmax);
	hi = 0;
	for (int j = 0; j < 8; j++)
		hi = buf[j] > hi ? buf[j] : hi;
	for (; i < cnt; i++) {
		lo = xd[i] < lo ? xd[i] : lo;
		hi = xd[i] > hi ? xd[i] : hi;
	}
	if (isnan(lo) || isnan(hi) || !isfinite(hi - lo))
		return aoe_err(AOE_EDATA, "%s '%s': the input holds a NaN or "
		    "an infinity, so no scale fits it", n->op_type, n->name);
	s = (hi - lo) / 255;
	if (s > 0) {
		zf = nearbyintf(fminf(255, fmaxf(0, 0 - lo / s)));
		z = (uint8_t)zf;
		q_span(xd, aoe_out(g, n, 0)->data, cnt, s, z, AOE_U8);
	} else {
		/* All zeros: scale 0, zero point 0, and zeros. */
		z = 0;
		memset(aoe_out(g, n, 0)->data, 0, (size_t)cnt);
	}
	*(float *)aoe_out(g, n, 1)->data = s;
	*(uint8_t *)aoe_out(g, n, 2)->data = z;
	return 0;
}

/*
 * The int8 GEMM.
 */

enum { QO_I32, QO_Q8 };

/* Micro-kernel shapes (mr, nv): AVX2 first, then VNNI. */
static const struct qshape {
	int mr, nv, vnni;
} qshapes[] = {
	{ 6, 2, 0 }, { 4, 3, 0 },
	{ 12, 2, 1 }, { 8, 3, 1 }, { 6, 4, 1 },
};
#define NQSHAPES (int)(sizeof(qshapes) / sizeof(qshapes[0]))

static int
qshape_ok(int64_t mr, int64_t nv, int vnni)
{
	int i;

	for (i = 0; i < NQSHAPES; i++)
		if (qshapes[i].mr == mr && qshapes[i].nv == nv &&
		    qshapes[i].vnni == vnni)
			return 1;
	return 0;
}

/* The columns of a vector and the k values of a group, by form. */
#define QCOLS(vnni) ((vnni) ? 16 : 8)
#define QGRP(vnni) ((vnni) ? 4 : 2)
#define QES(vnni) ((vnni) ? 1 : 2)

/* Blocking in force for one call. */
typedef struct qblock {
	int vnni, mr, nv, nr;
	int64_t mc, kcg;	/* rows a block, k groups a block */
	int par;
} qblock;

static void
qblock_of(const aoe_sched *s, qblock *b)
{
	int64_t kc;

	b->vnni = aoe_sched_get(s, "vnni", vnni_ok()) != 0 && vnni_ok();
	b->mr = (int)aoe_sched_get(s, "mr", b->vnni ? 12 : 6);
	b->nv = (int)aoe_sched_get(s, "nv", 2);
	if (!qshape_ok(b->mr, b->nv, b->vnni)) {
		b->mr = b->vnni ? 12 : 6;
		b->nv = 2;
	}
	b->nr = b->nv * QCOLS(b->vnni);
	b->mc = max64(b->mr, aoe_sched_get(s, "mc", 96));
	kc = aoe_sched_get(s, "kc", 4096);
	b->kcg = max64(1, kc / QGRP(b->vnni));
	b->par = (int)aoe_sched_get(s, "par", 0);
}

/*
 * B packed: strips of nr columns, each kp / QGRP groups of nr columns
 * of QGRP k values (bytes with VNNI, int16 without), zero-padded; and,
 * per column (np of them), the shifted zero point zb' and the column
 * term colsum(B') - K zb' of the VNNI form (zeros in the AVX2 form).
 */
typedef struct qpack {
	int vnni, nv, nr;
	int64_t k, n, kp, np, nstrips;
	void *data;
	int32_t *zb, *colt;
} qpack;

static void
qpack_free(qpack *p)
{
	if (p != NULL) {
		free(p->data);
		free(p->zb);
	}
}

/*
 * Pack B (k x n, element (kk, j) at b[kk * sk + j * sn], signed when
 * sgn) with zero points zb[j] (zb[0] for all when nzb is 1) for the
 * blocking bk.  0 or -AOE_ENOMEM.
 */
static int
qpack_b(qpack *p, const uint8_t *b, int sgn, int64_t sk, int64_t sn,
    int64_t k, int64_t n, const int32_t *zb, int64_t nzb, const qblock *bk)
{
	const int G = QGRP(bk->vnni);
	int64_t s, gi, j, t, ng;
	size_t bytes;

	memset(p, 0, sizeof(*p));
	p->vnni = bk->vnni;
	p->nv = bk->nv;
	p->nr = bk->nr;
	p->k = k;
	p->n = n;
	p->kp = ceildiv(max64(k, 1), G) * G;
	p->nstrips = ceildiv(n, p->nr);
	p->np = p->nstrips * p->nr;
	ng = p->kp / G;
	bytes = (size_t)(p->np * p->kp * QES(bk->vnni));
	p->data = aligned_alloc(64, (bytes + 63) & ~(size_t)63);
	p->zb = calloc((size_t)(2 * p->np), sizeof(int32_t));
	if (p->data == NULL || p->zb == NULL) {
		qpack_free(p);
		return -AOE_ENOMEM;
	}
	p->colt = p->zb + p->np;
	for (s = 0; s < p->nstrips; s++)
		for (gi = 0; gi < ng; gi++)
			for (j = 0; j < p->nr; j++) {
				int64_t col = s * p->nr + j;
				int32_t z = col < n ? zb[nzb == 1 ? 0 :
				    col] : 0;
				int64_t at = ((s * ng + gi) * p->nr + j) * G;
				for (t = 0; t < G; t++) {
					int64_t kk = gi * G + t;
					int32_t v = 0;
					if (kk < k && col < n) {
						const uint8_t *e = b + kk * sk +
						    col * sn;
						v = sgn ? *(const int8_t *)e :
						    *e;
					}
					if (bk->vnni) {
						/* B' = B, or B - 128. */
						if (kk < k && col < n && !sgn)
							v -= 128;
						((int8_t *)p->data)[at + t] =
						    (int8_t)v;
						p->colt[col] += v;
					} else
						((int16_t *)p->data)[at + t] =
						    (int16_t)(kk < k &&
						    col < n ? v - z : 0);
				}
			}
	if (bk->vnni)
		for (j = 0; j < n; j++) {
			p->zb[j] = zb[nzb == 1 ? 0 : j] - (sgn ? 0 : 128);
			p->colt[j] -= (int32_t)k * p->zb[j];
		}
	return 0;
}

/*
 * The micro-kernels: acc[r][0..nr) (+)= sum over kg groups of A's row r
 * (lda elements apart) times B's strip, nr = nv vectors.
 */
typedef void qukr_fn(int64_t, const void *, int64_t, const void *,
    int32_t *, int64_t, int);

static inline __attribute__((always_inline)) void
yq_gen(const int MR, const int NV, int64_t kg, const int16_t *a,
    int64_t lda, const int16_t *b, int32_t *acc, int64_t ldc, int first)
{
	__m256i c[6][3], bv[3], av;
	int32_t w;
	int64_t gi;
	int r, v;

#pragma GCC unroll 8
	for (r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			c[r][v] = first ? _mm256_setzero_si256() :
			    _mm256_loadu_si256((const __m256i *)(acc +
			    r * ldc + v * 8));
	for (gi = 0; gi < kg; gi++) {
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			bv[v] = _mm256_load_si256((const __m256i *)(b +
			    (gi * NV + v) * 16));
#pragma GCC unroll 8
		for (r = 0; r < MR; r++) {
			memcpy(&w, a + r * lda + 2 * gi, sizeof(w));
			av = _mm256_set1_epi32(w);
#pragma GCC unroll 4
			for (v = 0; v < NV; v++)
				c[r][v] = _mm256_add_epi32(c[r][v],
				    _mm256_madd_epi16(av, bv[v]));
		}
	}
#pragma GCC unroll 8
	for (r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			_mm256_storeu_si256((__m256i *)(acc + r * ldc + v * 8),
			    c[r][v]);
}

#define YQ(mr, nv)							\
static void								\
yq_##mr##x##nv(int64_t kg, const void *a, int64_t lda, const void *b,	\
    int32_t *acc, int64_t ldc, int first)				\
{									\
	yq_gen(mr, nv, kg, a, lda, b, acc, ldc, first);			\
}
YQ(1, 2) YQ(2, 2) YQ(3, 2) YQ(4, 2) YQ(5, 2) YQ(6, 2)
YQ(1, 3) YQ(2, 3) YQ(3, 3) YQ(4, 3)

static qukr_fn *const yq_tab[7][4] = {
	{ NULL },
	{ NULL, NULL, yq_1x2, yq_1x3 },
	{ NULL, NULL, yq_2x2, yq_2x3 },
	{ NULL, NULL, yq_3x2, yq_3x3 },
	{ NULL, NULL, yq_4x2, yq_4x3 },
	{ NULL, NULL, yq_5x2, NULL },
	{ NULL, NULL, yq_6x2, NULL },
};

/*
 * The VNNI micro-kernels, compiled for AVX-512 VNNI whatever the
 * build's -march, and called only when vnni_ok() says so.
 */
#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512vnni")
#ifdef __clang__	/* clang ignores GCC target pragmas */
#pragma clang attribute push(__attribute__((target("avx512f,avx512bw,avx512vnni"))), apply_to = function)
#endif

static inline __attribute__((always_inline)) void
zq_gen(const int MR, const int NV, int64_t kg, const uint8_t *a,
    int64_t lda, const int8_t *b, int32_t *acc, int64_t ldc, int first)
{
	__m512i c[12][4], bv[4], av;
	int32_t w;
	int64_t gi;
	int r, v;

#pragma GCC unroll 12
	for (r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			c[r][v] = first ? _mm512_setzero_si512() :
			    _mm512_loadu_si512(acc + r * ldc + v * 16);
	for (gi = 0; gi < kg; gi++) {
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			bv[v] = _mm512_load_si512(b + (gi * NV + v) * 64);
#pragma GCC unroll 12
		for (r = 0; r < MR; r++) {
			memcpy(&w, a + r * lda + 4 * gi, sizeof(w));
			av = _mm512_set1_epi32(w);
#pragma GCC unroll 4
			for (v = 0; v < NV; v++)
				c[r][v] = _mm512_dpbusd_epi32(c[r][v], av,
				    bv[v]);
		}
	}
#pragma GCC unroll 12
	for (r = 0; r < MR; r++)
#pragma GCC unroll 4
		for (v = 0; v < NV; v++)
			_mm512_storeu_si512(acc + r * ldc + v * 16, c[r][v]);
}

#define ZQ(mr, nv)							\
static void								\
zq_##mr##x##nv(int64_t kg, const void *a, int64_t lda, const void *b,	\
    int32_t *acc, int64_t ldc, int first)				\
{									\
	zq_gen(mr, nv, kg, a, lda, b, acc, ldc, first);			\
}
ZQ(1, 2) ZQ(2, 2) ZQ(3, 2) ZQ(4, 2) ZQ(5, 2) ZQ(6, 2)
ZQ(7, 2) ZQ(8, 2) ZQ(9, 2) ZQ(10, 2) ZQ(11, 2) ZQ(12, 2)
ZQ(1, 3) ZQ(2, 3) ZQ(3, 3) ZQ(4, 3) ZQ(5, 3) ZQ(6, 3) ZQ(7, 3) ZQ(8, 3)
ZQ(1, 4) ZQ(2, 4) ZQ(3, 4) ZQ(4, 4) ZQ(5, 4) ZQ(6, 4)

#ifdef __clang__
#pragma clang attribute pop
#endif
#pragma GCC pop_options

static qukr_fn *const zq_tab[13][5] = {
	{ NULL },
	{ NULL, NULL, zq_1x2, zq_1x3, zq_1x4 },
	{ NULL, NULL, zq_2x2, zq_2x3, zq_2x4 },
	{ NULL, NULL, zq_3x2, zq_3x3, zq_3x4 },
	{ NULL, NULL, zq_4x2, zq_4x3, zq_4x4 },
	{ NULL, NULL, zq_5x2, zq_5x3, zq_5x4 },
	{ NULL, NULL, zq_6x2, zq_6x3, zq_6x4 },
	{ NULL, NULL, zq_7x2, zq_7x3, NULL },
	{ NULL, NULL, zq_8x2, zq_8x3, NULL },
	{ NULL, NULL, zq_9x2, NULL, NULL },
	{ NULL, NULL, zq_10x2, NULL, NULL },
	{ NULL, NULL, zq_11x2, NULL, NULL },
	{ NULL, NULL, zq_12x2, NULL, NULL },
};

/*
 * Where A comes from: a matrix (a != NULL; row i at a + i * lda, za
 * its zero point, za[i % nza]) or a convolution's gather (conv).
 */
typedef struct qconv_src qconv_src;

/* One call of the GEMM. */
typedef struct qgemm {
	int64_t m, n, k;
	const uint8_t *a;
	int64_t lda;
	int asgn;
	const int32_t *za;
	int64_t nza;
	const qconv_src *conv;
	const qpack *bp;
	int out;		/* QO_I32 or QO_Q8 */
	int odt;		/* QO_Q8: AOE_U8 or AOE_I8 */
	void *c;		/* element (i, j) at c[i * ldc + j * cs] */
	int64_t ldc, cs;
	const int32_t *bias;	/* np values, or NULL */
	const float *mult;	/* QO_Q8: np values */
	int32_t zy;
	int relu;		/* QO_Q8: clamp below at zy */
} qgemm;

/* Fill the rows of A's block (see qconv_gather); defined below. */
static void qconv_gather(const qgemm *q, int64_t i0, int64_t rows,
    int64_t kp, void *dst, int32_t *rs);

/*
 * Convert rows i0.. of a matrix A into the GEMM's form: VNNI bytes
 * A' (with row sums rs and shifted zero points zap), or int16 A - za.
 */
static void
qpack_a(const qgemm *q, int vnni, int64_t i0, int64_t rows, int64_t kp,
    void *dst, int32_t *rs, int32_t *zap)
{
	int64_t i, kk;

	for (i = 0; i < rows; i++) {
		int32_t za = q->za ? q->za[(i0 + i) % q->nza] : 0;
		zap[i] = za + (q->asgn ? 128 : 0);
	}
	if (q->conv != NULL) {
		qconv_gather(q, i0, rows, kp, dst, rs);
		return;
	}
	for (i = 0; i < rows; i++) {
		const uint8_t *src = q->a + (i0 + i) * q->lda;
		int32_t za = q->za ? q->za[(i0 + i) % q->nza] : 0;
		if (vnni) {
			uint8_t *d = (uint8_t *)dst + i * kp;
			uint8_t x = q->asgn ? 0x80 : 0;
			int32_t sum = 0;
			for (kk = 0; kk < q->k; kk++) {
				d[kk] = src[kk] ^ x;
				sum += d[kk];
			}
			memset(d + q->k, 0, (size_t)(kp - q->k));
			rs[i] = sum;
		} else {
			int16_t *d = (int16_t *)dst + i * kp;
			if (q->asgn)
				for (kk = 0; kk < q->k; kk++)
					d[kk] = (int16_t)((int8_t)src[kk] - za);
			else
				for (kk = 0; kk < q->k; kk++)
					d[kk] = (int16_t)(src[kk] - za);
			memset(d + q->k, 0, sizeof(int16_t) * (kp - q->k));
			rs[i] = 0;
		}
	}
}

/*
 * Finish row i of a tile: acc[0..cols) of columns j0.. into C, or into
 * tmp (cols values) when it is not NULL, with A's row sum rs and zero
 * point zap (the VNNI corrections), the bias, and the requantization.
 */
static void
qfinish_row(const qgemm *q, const int32_t *acc, int64_t i, int64_t j0,
    int64_t cols, int32_t rs, int32_t zap, void *tmp)
{
	const qpack *p = q->bp;
	int32_t v[64];
	uint8_t b8[64];
	int32_t lo, hi;
	int64_t j;

	for (j = 0; j < cols; j += 8) {
		__m256i x = _mm256_loadu_si256((const __m256i *)(acc + j));
		if (p->vnni) {
			__m256i zb = _mm256_loadu_si256((const __m256i *)(
			    p->zb + j0 + j));
			__m256i ct = _mm256_loadu_si256((const __m256i *)(
			    p->colt + j0 + j));
			x = _mm256_sub_epi32(x, _mm256_mullo_epi32(zb,
			    _mm256_set1_epi32(rs)));
			x = _mm256_sub_epi32(x, _mm256_mullo_epi32(ct,
			    _mm256_set1_epi32(zap)));
		}
		if (q->bias)
			x = _mm256_add_epi32(x, _mm256_loadu_si256((const
			    __m256i *)(q->bias + j0 + j)));
		_mm256_storeu_si256((__m256i *)(v + j), x);
	}
	if (q->out == QO_I32) {
		int32_t *c = (int32_t *)q->c + i * q->ldc;
		if (tmp != NULL)
			memcpy(tmp, v, sizeof(int32_t) * cols);
		else if (q->cs == 1)
			memcpy(c + j0, v, sizeof(int32_t) * cols);
		else
			for (j = 0; j < cols; j++)
				c[(j0 + j) * q->cs] = v[j];
		return;
	}
	q_range(q->odt, &lo, &hi);
	if (q->relu)
		lo = q->zy > lo ? q->zy : lo;
	for (j = 0; j < cols; j += 8) {
		__m256 f = _mm256_mul_ps(_mm256_cvtepi32_ps(_mm256_loadu_si256(
		    (const __m256i *)(v + j))), _mm256_loadu_ps(q->mult +
		    j0 + j));
		__m256i r;
		__m128i w;
		f = _mm256_round_ps(f, _MM_FROUND_TO_NEAREST_INT |
		    _MM_FROUND_NO_EXC);
		f = _mm256_add_ps(f, _mm256_set1_ps((float)q->zy));
		f = _mm256_min_ps(_mm256_set1_ps((float)hi),
		    _mm256_max_ps(_mm256_set1_ps((float)lo), f));
		r = _mm256_cvtps_epi32(f);
		w = _mm_packs_epi32(_mm256_castsi256_si128(r),
		    _mm256_extracti128_si256(r, 1));
		w = q->odt == AOE_U8 ? _mm_packus_epi16(w, w) :
		    _mm_packs_epi16(w, w);
		_mm_storel_epi64((__m128i *)(b8 + j), w);
	}
	{
		uint8_t *c = (uint8_t *)q->c + i * q->ldc;
		if (tmp != NULL)
			memcpy(tmp, b8, (size_t)cols);
		else if (q->cs == 1)
			memcpy(c + j0, b8, (size_t)cols);
		else
			for (j = 0; j < cols; j++)
				c[(j0 + j) * q->cs] = b8[j];
	}
}

struct qg_job {
	const qgemm *q;
	qblock bk;
	int64_t nrb, ncp, spp; /* row blocks, column parts, strips a part */
	int fail;
};

static void
qg_task(void *arg, int64_t t, int tid)
{
	struct qg_job *jb = arg;
	const qgemm *q = jb->q;
	const qpack *p = q->bp;
	const qblock *bk = &jb->bk;
	const int G = QGRP(p->vnni), es = QES(p->vnni);
	int64_t rb = t / jb->ncp, cp = t % jb->ncp;
	int64_t i0 = rb * bk->mc, rows = min64(bk->mc, q->m - i0);
	int64_t s0 = cp * jb->spp, s1 = min64(s0 + jb->spp, p->nstrips);
	int64_t ng = p->kp / G, s, kb, i, j;
	size_t abytes = (size_t)(rows * p->kp * es + 64);
	char *buf, *tb;
	int32_t *rs, *zap, *acc;

	if (rows <= 0 || s0 >= s1)
		return;
	buf = (char *)aoe_sgemm_tlbuf(0, (abytes + 2 * rows * 4 +
	    (size_t)(2 * rows * p->nr * 4)) / 4 + 32);
	if (buf == NULL) {
		__atomic_store_n(&jb->fail, 1, __ATOMIC_RELAXED);
		return;
	}
	rs = (int32_t *)(buf + abytes);
	zap = rs + rows;
	acc = zap + rows;
	tb = (char *)(acc + rows * p->nr);
	qpack_a(q, p->vnni, i0, rows, p->kp, buf, rs, zap);
	for (s = s0; s < s1; s++) {
		const char *bs = (const char *)p->data + s * ng * p->nr *
		    G * es;
		int64_t cols = min64(p->nr, q->n - s * p->nr);
		for (kb = 0; kb < ng; kb += bk->kcg) {
			int64_t kn = min64(bk->kcg, ng - kb);
			for (i = 0; i < rows; i += bk->mr) {
				int mr = (int)min64(bk->mr, rows - i);
				qukr_fn *f = p->vnni ? zq_tab[mr][p->nv] :
				    yq_tab[mr][p->nv];
				f(kn, buf + (i * p->kp + kb * G) * es, p->kp,
				    bs + kb * p->nr * G * es, acc + i * p->nr,
				    p->nr, kb == 0);
			}
		}
		if (q->cs == 1) {
			for (i = 0; i < rows; i++)
				qfinish_row(q, acc + i * p->nr, i0 + i,
				    s * p->nr, cols, rs[i], zap[i], NULL);
			continue;
		}
		/*
		 * A transposed C (a convolution's NCHW output): the tile
		 * finished into tb, then written a column at a time, each a
		 * run of rows contiguous in C.
		 */
		for (i = 0; i < rows; i++)
			qfinish_row(q, acc + i * p->nr, i0 + i, s * p->nr,
			    cols, rs[i], zap[i], tb + i * p->nr * 4);
		for (j = 0; j < cols; j++) {
			int64_t at = (s * p->nr + j) * q->cs + i0 * q->ldc;
			const int64_t ld = q->ldc, tl = p->nr * 4;
			if (q->out == QO_I32) {
				int32_t *restrict d = (int32_t *)q->c + at;
				const int32_t *restrict t = (const int32_t *)
				    tb + j;
				for (i = 0; i < rows; i++)
					d[i * ld] = t[i * p->nr];
			} else {
				uint8_t *restrict d = (uint8_t *)q->c + at;
				const char *restrict t = tb + j;
				for (i = 0; i < rows; i++)
					d[i * ld] = (uint8_t)t[i * tl];
			}
		}
	}
}

/* Run the GEMM q on up to nthreads threads with blocking sched. */
static int
qgemm_run(const qgemm *q, int nthreads, const aoe_sched *sched)
{
	struct qg_job jb;
	int64_t work, nt;

	if (q->m == 0 || q->n == 0)
		return 0;
	memset(&jb, 0, sizeof(jb));
	jb.q = q;
	qblock_of(sched, &jb.bk);
	/* The packed B's form wins over the schedule's. */
	jb.bk.vnni = q->bp->vnni;
	jb.bk.nv = q->bp->nv;
	jb.bk.nr = q->bp->nr;
	if (!qshape_ok(jb.bk.mr, jb.bk.nv, jb.bk.vnni))
		jb.bk.mr = jb.bk.vnni ? (jb.bk.nv == 2 ? 12 : jb.bk.nv == 3 ?
		    8 : 6) : (jb.bk.nv == 2 ? 6 : 4);
	jb.bk.kcg = max64(1, jb.bk.kcg);
	work = q->m * q->n * max64(q->k, 1);
	nt = work < (1 << 16) ? 1 : nthreads;
	jb.nrb = ceildiv(q->m, jb.bk.mc);
	if (jb.bk.par == 1 || nt <= 1)
		jb.ncp = 1;
	else if (jb.bk.par == 2)
		jb.ncp = min64(q->bp->nstrips, nt);
	else
		jb.ncp = min64(q->bp->nstrips, ceildiv(2 * nt, jb.nrb));
	jb.spp = ceildiv(q->bp->nstrips, jb.ncp);
	jb.ncp = ceildiv(q->bp->nstrips, jb.spp);
	aoe_parallel((int)nt, jb.nrb * jb.ncp, qg_task, &jb);
	return jb.fail ? -AOE_ENOMEM : 0;
}

/*
 * The operators' shared state: B packed in prepare (a constant B and
 * zero point), one pack a group.
 */
typedef struct qpriv {
	int ng;
	qpack *p;
	int64_t id;		/* the blocking it was packed for */
} qpriv;

static void
qpriv_free(void *v)
{
	qpriv *q = v;
	int i;

	if (q == NULL)
		return;
	for (i = 0; q->p && i < q->ng; i++)
		qpack_free(&q->p[i]);
	free(q->p);
	free(q);
}

static int64_t
qpack_id(const qblock *bk)
{
	return bk->vnni * 16 + bk->nv;
}

/* The column arrays of a GEMM (np values): bias and multipliers. */
static int
qcols(const aoe_node *n, int64_t np, int32_t **bias, float **mult)
{
	*bias = calloc((size_t)np, sizeof(int32_t));
	*mult = calloc((size_t)np, sizeof(float));
	if (*bias == NULL || *mult == NULL) {
		free(*bias);
		free(*mult);
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	}
	return 0;
}

/*
 * The requantizing multipliers of columns j: sa * sb[j] / sy in float,
 * after checking every scale.
 */
static int
qmult(const aoe_graph *g, const aoe_node *n, int ia, int ib, int iy,
    int64_t cols, float *mult)
{
	const aoe_tensor *sa = aoe_in(g, n, ia), *sb = aoe_in(g, n, ib);
	const aoe_tensor *sy = aoe_in(g, n, iy);
	int64_t nb = aoe_tensor_numel(sb), j;
	int rc;

	if ((rc = scales_ok(n, "scale", sa->data, 1)) < 0 ||
	    (rc = scales_ok(n, "scale", sb->data, nb)) < 0 ||
	    (rc = scales_ok(n, "scale", sy->data, 1)) < 0)
		return rc;
	for (j = 0; j < cols; j++)
		mult[j] = *(const float *)sa->data * ((const float *)
		    sb->data)[nb == 1 ? 0 : j] / *(const float *)sy->data;
	return 0;
}

/*
 * MatMulInteger (inputs A, B, a_zero_point, b_zero_point; int32 out)
 * and QLinearMatMul (a, a_scale, a_zero_point, b, b_scale,
 * b_zero_point, y_scale, y_zero_point).
 */
static int
is_qlinear(const aoe_node *n)
{
	return strncmp(n->op_type, "QLinear", 7) == 0;
}

/* The inputs of A, B and their zero points. */
static void
mm_inputs(const aoe_node *n, int *ia, int *ib, int *iza, int *izb)
{
	if (is_qlinear(n)) {
		*ia = 0, *iza = 2, *ib = 3, *izb = 5;
	} else {
		*ia = 0, *ib = 1, *iza = 2, *izb = 3;
	}
}

static int
qmm_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *a, *b, *za, *zb, *zy;
	int64_t dims[AOE_MAXDIM + 2];
	aoe_mm_shape s;
	int ia, ib, iza, izb, ndim, per, rc, ql = is_qlinear(n);

	mm_inputs(n, &ia, &ib, &iza, &izb);
	if ((rc = aoe_need_inputs(g, n, ql ? 8 : 2, ql ? 8 : 4)) < 0)
		return rc;
	a = aoe_in(g, n, ia);
	b = aoe_in(g, n, ib);
	za = opt_in(g, n, iza);
	zb = opt_in(g, n, izb);
	if (!is_q8(a->dtype) || !is_q8(b->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': inputs of types %s and %s "
		    "not supported (uint8 or int8)", n->op_type, n->name,
		    aoe_dtype_name(a->dtype), aoe_dtype_name(b->dtype));
	if ((rc = aoe_mm_shape_of(g, n, a, b, &s, &ndim, dims)) < 0)
		return rc;
	if (za != NULL && (za->dtype != a->dtype || (aoe_tensor_numel(za) !=
	    1 && (ql || aoe_tensor_numel(za) != s.m))))
		return aoe_err(AOE_EDATA, "%s '%s': A's zero point '%s' must "
		    "be %s, one value%s", n->op_type, n->name, za->name,
		    aoe_dtype_name(a->dtype), ql ? "" : " or one a row");
	if (zb != NULL && (zb->dtype != b->dtype || (aoe_tensor_numel(zb) !=
	    1 && aoe_tensor_numel(zb) != s.n)))
		return aoe_err(AOE_EDATA, "%s '%s': B's zero point '%s' must "
		    "be %s, one value or one a column", n->op_type, n->name,
		    zb->name, aoe_dtype_name(b->dtype));
	if (!ql)
		return aoe_set_output(g, n, 0, AOE_I32, ndim, dims);
	if ((rc = qparam_check(g, n, 1, 2, 1, a->dtype, "a_scale",
	    &per)) < 0 || (rc = qparam_check(g, n, 4, 5, s.n, b->dtype,
	    "b_scale", &per)) < 0 || (rc = qparam_check(g, n, 6, 7, 1, 0,
	    "y_scale", &per)) < 0)
		return rc;
	zy = opt_in(g, n, 7);
	return aoe_set_output(g, n, 0, zy ? zy->dtype : AOE_U8, ndim, dims);
}

/* Pack B of n (the batch at offset ob) for blocking bk. */
static int
qmm_pack(const aoe_graph *g, const aoe_node *n, const aoe_mm_shape *s,
    int64_t ob, const qblock *bk, qpack *p)
{
	int ia, ib, iza, izb;
	const aoe_tensor *b, *zb;
	int32_t *z;
	int rc;

	mm_inputs(n, &ia, &ib, &iza, &izb);
	b = aoe_in(g, n, ib);
	zb = opt_in(g, n, izb);
	if ((z = calloc((size_t)s->n + 1, sizeof(int32_t))) == NULL)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	zp_load(zb, z, s->n);
	rc = qpack_b(p, (const uint8_t *)b->data + ob, b->dtype == AOE_I8,
	    s->n, 1, s->k, s->n, z, s->n, bk);
	free(z);
	return rc < 0 ? aoe_err(rc, "%s '%s': out of memory", n->op_type,
	    n->name) : 0;
}

/* Whether B and its zero point are constants, for one pack in prepare. */
static int
qmm_const_b(const aoe_graph *g, const aoe_node *n, const aoe_mm_shape *s)
{
	int ia, ib, iza, izb;
	const aoe_tensor *b, *zb;

	mm_inputs(n, &ia, &ib, &iza, &izb);
	b = aoe_in(g, n, ib);
	zb = opt_in(g, n, izb);
	return s->b_single && b->kind == AOE_T_CONST && b->data != NULL &&
	    (zb == NULL || (zb->kind == AOE_T_CONST && zb->data != NULL));
}

/* Set n->priv to np packs made by pack (or nothing), for a prepack. */
static int
qpriv_new(aoe_node *n, int np, qpriv **out)
{
	qpriv *q = NULL;

	if ((q = calloc(1, sizeof(*q))) == NULL ||
	    (q->p = calloc((size_t)np, sizeof(qpack))) == NULL) {
		free(q);
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	}
	q->ng = np;
	n->priv = q;
	n->priv_free = qpriv_free;
	*out = q;
	return 0;
}

static int
qmm_prepare(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *a, *b;
	aoe_mm_shape s;
	qblock bk;
	qpriv *q = NULL;
	int ia, ib, iza, izb, rc;

	aoe_node_unprepare(n);
	mm_inputs(n, &ia, &ib, &iza, &izb);
	a = aoe_in(g, n, ia);
	b = aoe_in(g, n, ib);
	if ((rc = aoe_mm_shape_of(g, n, a, b, &s, NULL, NULL)) < 0)
		return rc;
	if (!qmm_const_b(g, n, &s) || aoe_sched_get(&n->sched, "prepack",
	    1) == 0)
		return 0;
	qblock_of(&n->sched, &bk);
	if ((rc = qpriv_new(n, 1, &q)) < 0)
		return rc;
	q->id = qpack_id(&bk);
	return qmm_pack(g, n, &s, 0, &bk, &q->p[0]);
}

static int
qmm_run(aoe_kctx *kc)
{
	const aoe_graph *g = kc->g;
	const aoe_node *n = kc->n;
	const qpriv *pv = n->priv;
	const aoe_tensor *a, *b, *za, *zy;
	int ia, ib, iza, izb, rc = 0, ql = is_qlinear(n);
	int32_t *zav = NULL, *bias = NULL;
	float *mult = NULL;
	aoe_mm_shape s;
	qblock bk;
	qpack own;
	qgemm q;
	int64_t t, np, nza;

	mm_inputs(n, &ia, &ib, &iza, &izb);
	a = aoe_in(g, n, ia);
	b = aoe_in(g, n, ib);
	za = opt_in(g, n, iza);
	if ((rc = aoe_mm_shape_of(g, n, a, b, &s, NULL, NULL)) < 0)
		return rc;
	if (s.nbatch == 0 || s.m == 0 || s.n == 0)
		return 0;
	qblock_of(kc->sched, &bk);
	np = ceildiv(s.n, bk.nr) * bk.nr + 64;
	nza = za ? aoe_tensor_numel(za) : 1;
	if ((zav = calloc((size_t)nza, sizeof(int32_t))) == NULL)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	zp_load(za, zav, nza);
	memset(&q, 0, sizeof(q));
	q.m = s.m;
	q.n = s.n;
	q.k = s.k;
	q.lda = s.k;
	q.asgn = a->dtype == AOE_I8;
	q.za = zav;
	q.nza = nza;
	q.ldc = s.n;
	q.cs = 1;
	q.out = ql ? QO_Q8 : QO_I32;
	if (ql) {
		zy = opt_in(g, n, 7);
		q.odt = zy ? zy->dtype : AOE_U8;
		q.zy = zy ? int_at(zy->data, zy->dtype, 0) : 0;
		q.relu = aoe_attr_int(n, "_aoe_relu", 0) != 0;
		if ((rc = qcols(n, np, &bias, &mult)) < 0 ||
		    (rc = qmult(g, n, 1, 4, 6, s.n, mult)) < 0)
			goto out;
		free(bias);
		bias = NULL;
		q.mult = mult;
	}
	if (pv != NULL && pv->id == qpack_id(&bk) && s.a_full) {
		/* One GEMM: the batches of A are rows of one matrix. */
		q.m = s.nbatch * s.m;
		q.a = a->data;
		q.c = aoe_out(g, n, 0)->data;
		q.bp = &pv->p[0];
		rc = qgemm_run(&q, kc->nthreads, kc->sched);
		goto out;
	}
	for (t = 0; t < s.nbatch && rc == 0; t++) {
		int64_t oa = 0, ob = 0, rem = t;
		int i;
		for (i = s.nb - 1; i >= 0; i--) {
			int64_t idx = rem % s.batch[i];
			rem /= s.batch[i];
			oa += idx * s.sa[i];
			ob += idx * s.sb[i];
		}
		if ((rc = qmm_pack(g, n, &s, ob, &bk, &own)) < 0)
			break;
		q.a = (const uint8_t *)a->data + oa;
		q.c = (char *)aoe_out(g, n, 0)->data + t * s.m * s.n *
		    (ql ? 1 : 4);
		q.bp = &own;
		rc = qgemm_run(&q, kc->nthreads, kc->sched);
		qpack_free(&own);
	}
out:
	free(zav);
	free(bias);
	free(mult);
	if (rc == -AOE_ENOMEM)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	return rc;
}

/*
 * ConvInteger (x, w, x_zero_point, w_zero_point; int32 out) and
 * QLinearConv (x, x_scale, x_zero_point, w, w_scale, w_zero_point,
 * y_scale, y_zero_point, B).
 */
struct qconv_src {
	const aoe_conv_geom *cg;
	const void *xc;		/* one image, channels last, GEMM form */
	int64_t gi;		/* the group */
	int vnni;
	uint8_t pad;		/* VNNI: A' of the zero point */
};

static void
cv_inputs(const aoe_node *n, int *ix, int *iw, int *izx, int *izw)
{
	if (is_qlinear(n)) {
		*ix = 0, *izx = 2, *iw = 3, *izw = 5;
	} else {
		*ix = 0, *iw = 1, *izx = 2, *izw = 3;
	}
}

static int
qconv_geom(const aoe_graph *g, const aoe_node *n, aoe_conv_geom *cg)
{
	int ix, iw, izx, izw;

	cv_inputs(n, &ix, &iw, &izx, &izw);
	return aoe_conv_geom_of(g, n, aoe_in(g, n, ix), aoe_in(g, n, iw), NULL,
	    0, cg);
}

static int
qconv_infer(aoe_graph *g, aoe_node *n)
{
	const aoe_tensor *x, *w, *zx, *zw, *zy, *bias;
	aoe_conv_geom cg;
	int64_t dims[5];
	int ix, iw, izx, izw, per, rc, i, ql = is_qlinear(n);

	cv_inputs(n, &ix, &iw, &izx, &izw);
	if ((rc = aoe_need_inputs(g, n, ql ? 8 : 2, ql ? 9 : 4)) < 0)
		return rc;
	x = aoe_in(g, n, ix);
	w = aoe_in(g, n, iw);
	if (!is_q8(x->dtype) || !is_q8(w->dtype))
		return aoe_err(AOE_EUNSUP, "%s '%s': inputs of types %s and %s "
		    "not supported (uint8 or int8)", n->op_type, n->name,
		    aoe_dtype_name(x->dtype), aoe_dtype_name(w->dtype));
	if ((rc = qconv_geom(g, n, &cg)) < 0)
		return rc;
	zx = opt_in(g, n, izx);
	zw = opt_in(g, n, izw);
	if (zx != NULL && (zx->dtype != x->dtype || aoe_tensor_numel(zx) != 1))
		return aoe_err(AOE_EDATA, "%s '%s': x's zero point '%s' must "
		    "be one %s value", n->op_type, n->name, zx->name,
		    aoe_dtype_name(x->dtype));
	if (zw != NULL && (zw->dtype != w->dtype || (aoe_tensor_numel(zw) !=
	    1 && aoe_tensor_numel(zw) != cg.m)))
		return aoe_err(AOE_EDATA, "%s '%s': w's zero point '%s' must "
		    "be %s, one value or one an output channel", n->op_type,
		    n->name, zw->name, aoe_dtype_name(w->dtype));
	dims[0] = cg.n;
	dims[1] = cg.m;
	for (i = 0; i < cg.nsp; i++)
		dims[2 + i] = cg.out[3 - cg.nsp + i];
	if (!ql)
		return aoe_set_output(g, n, 0, AOE_I32, cg.nsp + 2, dims);
	if ((rc = qparam_check(g, n, 1, 2, 1, x->dtype, "x_scale",
	    &per)) < 0 || (rc = qparam_check(g, n, 4, 5, cg.m, w->dtype,
	    "w_scale", &per)) < 0 || (rc = qparam_check(g, n, 6, 7, 1, 0,
	    "y_scale", &per)) < 0)
		return rc;
	bias = opt_in(g, n, 8);
	if (bias != NULL && (bias->dtype != AOE_I32 || bias->ndim != 1 ||
	    bias->dims[0] != cg.m))
		return aoe_err(AOE_EDATA, "%s '%s': bias '%s' must be int32 "
		    "of shape (%lld)", n->op_type, n->name, bias->name,
		    (long long)cg.m);
	zy = opt_in(g, n, 7);
	return aoe_set_output(g, n, 0, zy ? zy->dtype : AOE_U8, cg.nsp + 2,
	    dims);
}

/*
 * Pack group gi's weights as B: k = (kernel offset, channel), the
 * order of qconv_gather's rows, n = the group's filters.
 */
static int
qconv_pack(const aoe_graph *g, const aoe_node *n, const aoe_conv_geom *cg,
    int64_t gi, const qblock *bk, qpack *p)
{
	int ix, iw, izx, izw, rc;
	const aoe_tensor *w, *zw;
	int64_t K = cg->cg * cg->ksz, oc, c, o;
	uint8_t *wt;
	int32_t *z;

	cv_inputs(n, &ix, &iw, &izx, &izw);
	w = aoe_in(g, n, iw);
	zw = opt_in(g, n, izw);
	wt = malloc((size_t)(cg->mg * K) + 1);
	z = calloc((size_t)cg->m + 1, sizeof(int32_t));
	if (wt == NULL || z == NULL) {
		free(wt);
		free(z);
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	}
	for (oc = 0; oc < cg->mg; oc++)
		for (c = 0; c < cg->cg; c++)
			for (o = 0; o < cg->ksz; o++)
				wt[oc * K + o * cg->cg + c] = ((const uint8_t *)
				    w->data)[((gi * cg->mg + oc) * cg->cg + c) *
				    cg->ksz + o];
	zp_load(zw, z, cg->m);
	rc = qpack_b(p, wt, w->dtype == AOE_I8, 1, K, K, cg->mg,
	    z + gi * cg->mg, cg->mg, bk);
	free(wt);
	free(z);
	return rc < 0 ? aoe_err(rc, "%s '%s': out of memory", n->op_type,
	    n->name) : 0;
}

static int
qconv_prepare(aoe_graph *g, aoe_node *n)
{
	int ix, iw, izx, izw, rc;
	const aoe_tensor *w, *zw;
	aoe_conv_geom cg;
	qblock bk;
	qpriv *q = NULL;
	int64_t gi;

	aoe_node_unprepare(n);
	cv_inputs(n, &ix, &iw, &izx, &izw);
	w = aoe_in(g, n, iw);
	zw = opt_in(g, n, izw);
	if ((rc = qconv_geom(g, n, &cg)) < 0)
		return rc;
	if (w->kind != AOE_T_CONST || w->data == NULL || (zw != NULL &&
	    (zw->kind != AOE_T_CONST || zw->data == NULL)) ||
	    aoe_sched_get(&n->sched, "prepack", 1) == 0)
		return 0;
	qblock_of(&n->sched, &bk);
	if ((rc = qpriv_new(n, (int)cg.group, &q)) < 0)
		return rc;
	q->id = qpack_id(&bk);
	for (gi = 0; gi < cg.group; gi++)
		if ((rc = qconv_pack(g, n, &cg, gi, &bk, &q->p[gi])) < 0)
			return rc;
	return 0;
}

/*
 * Image x (c x in, of type sgn) channels last in the GEMM's form: VNNI
 * bytes A' (x ^ 0x80 when signed), or int16 x - za.
 */
static void
qconv_nhwc(const aoe_conv_geom *cg, const uint8_t *x, int sgn, int32_t za,
    int vnni, void *dst)
{
	int64_t c, p, p0, P = cg->insz, C = cg->c;

	for (p0 = 0; p0 < P; p0 += 64)
		for (c = 0; c < C; c++) {
			const uint8_t *src = x + c * P;
			int64_t pe = min64(p0 + 64, P);
			if (vnni) {
				uint8_t *d = dst, f = sgn ? 0x80 : 0;
				for (p = p0; p < pe; p++)
					d[p * C + c] = src[p] ^ f;
			} else {
				int16_t *d = dst;
				for (p = p0; p < pe; p++)
					d[p * C + c] = (int16_t)((sgn ?
					    (int32_t)(int8_t)src[p] :
					    (int32_t)src[p]) - za);
			}
		}
}

/* Copy n bytes, 32 at a time while it can: a group's channels. */
static inline void
copy_run(char *d, const char *s, size_t n)
{
	size_t i = 0;

	for (; i + 32 <= n; i += 32)
		_mm256_storeu_si256((__m256i *)(d + i), _mm256_loadu_si256(
		    (const __m256i *)(s + i)));
	for (; i < n; i++)
		d[i] = s[i];
}

/* Rows i0.. of A for a convolution: one a position, k as qconv_pack. */
static void
qconv_gather(const qgemm *q, int64_t i0, int64_t rows, int64_t kp,
    void *dst, int32_t *rs)
{
	const qconv_src *src = q->conv;
	const aoe_conv_geom *cg = src->cg;
	const int es = QES(src->vnni);
	const int64_t C = cg->c, cgc = cg->cg;
	int64_t i, o0, o1, o2, k0, k1, k2;

	for (i = 0; i < rows; i++) {
		int64_t p = i0 + i, pos[3], kk = 0;
		char *d = (char *)dst + i * kp * es;
		pos[2] = p % cg->out[2];
		pos[1] = p / cg->out[2] % cg->out[1];
		pos[0] = p / (cg->out[2] * cg->out[1]);
		for (k0 = 0; k0 < cg->k[0]; k0++) {
			o0 = pos[0] * cg->s[0] - cg->pb[0] + k0 * cg->d[0];
			for (k1 = 0; k1 < cg->k[1]; k1++) {
				o1 = pos[1] * cg->s[1] - cg->pb[1] +
				    k1 * cg->d[1];
				for (k2 = 0; k2 < cg->k[2]; k2++) {
					o2 = pos[2] * cg->s[2] - cg->pb[2] +
					    k2 * cg->d[2];
					char *e = d + kk * es;
					if (o0 < 0 || o0 >= cg->in[0] ||
					    o1 < 0 || o1 >= cg->in[1] ||
					    o2 < 0 || o2 >= cg->in[2])
						memset(e, src->vnni ? src->pad :
						    0, (size_t)(cgc * es));
					else
						copy_run(e, (const char *)
						    src->xc + (((o0 *
						    cg->in[1] + o1) *
						    cg->in[2] + o2) * C +
						    src->gi * cgc) * es,
						    (size_t)(cgc * es));
					kk += cgc;
				}
			}
		}
		memset(d + kk * es, 0, (size_t)((kp - kk) * es));
		rs[i] = 0;
		if (src->vnni) {
			/* Row sums of bytes, eight at a time. */
			const uint8_t *u = (const uint8_t *)d;
			__m256i acc = _mm256_setzero_si256();
			int64_t j = 0;
			int64_t sum = 0;
			for (; j + 32 <= kp; j += 32)
				acc = _mm256_add_epi64(acc, _mm256_sad_epu8(
				    _mm256_loadu_si256((const __m256i *)(u +
				    j)), _mm256_setzero_si256()));
			for (; j < kp; j++)
				sum += u[j];
			sum += _mm256_extract_epi64(acc, 0) +
			    _mm256_extract_epi64(acc, 1) +
			    _mm256_extract_epi64(acc, 2) +
			    _mm256_extract_epi64(acc, 3);
			rs[i] = (int32_t)sum;
		}
	}
}

static int
qconv_run(aoe_kctx *kc)
{
	const aoe_graph *g = kc->g;
	const aoe_node *n = kc->n;
	const qpriv *pv = n->priv;
	const aoe_tensor *x, *zx, *zy, *bt;
	int ix, iw, izx, izw, rc = 0, ql = is_qlinear(n), sgn;
	int32_t za = 0, *bias = NULL;
	float *mult = NULL;
	aoe_conv_geom cg;
	qconv_src src;
	qblock bk;
	qpack own;
	qgemm q;
	void *xc;
	int64_t np, im, gi, j;
	size_t es, osz;

	cv_inputs(n, &ix, &iw, &izx, &izw);
	x = aoe_in(g, n, ix);
	zx = opt_in(g, n, izx);
	if ((rc = qconv_geom(g, n, &cg)) < 0)
		return rc;
	if (cg.n == 0 || cg.m == 0 || cg.outsz == 0)
		return 0;
	qblock_of(kc->sched, &bk);
	if (pv != NULL && pv->id != qpack_id(&bk))
		pv = NULL;
	if (pv != NULL) {
		bk.vnni = pv->p[0].vnni;
		bk.nv = pv->p[0].nv;
		bk.nr = pv->p[0].nr;
	}
	es = QES(bk.vnni);
	sgn = x->dtype == AOE_I8;
	if (zx != NULL)
		za = int_at(zx->data, zx->dtype, 0);
	np = ceildiv(cg.m, bk.nr) * bk.nr + 64;
	if ((rc = qcols(n, np, &bias, &mult)) < 0)
		return rc;
	memset(&q, 0, sizeof(q));
	q.out = QO_I32;
	osz = 4;
	if (ql) {
		zy = opt_in(g, n, 7);
		bt = opt_in(g, n, 8);
		q.out = QO_Q8;
		q.odt = zy ? zy->dtype : AOE_U8;
		q.zy = zy ? int_at(zy->data, zy->dtype, 0) : 0;
		q.relu = aoe_attr_int(n, "_aoe_relu", 0) != 0;
		osz = 1;
		if ((rc = qmult(g, n, 1, 4, 6, cg.m, mult)) < 0)
			goto out;
		for (j = 0; bt != NULL && j < cg.m; j++)
			bias[j] = ((const int32_t *)bt->data)[j];
	}
	xc = aoe_sgemm_tlbuf(3, (size_t)(cg.insz * cg.c) * es / 4 + 16);
	if (xc == NULL) {
		rc = -AOE_ENOMEM;
		goto out;
	}
	memset(&src, 0, sizeof(src));
	src.cg = &cg;
	src.xc = xc;
	src.vnni = bk.vnni;
	src.pad = (uint8_t)(za ^ (sgn ? 0x80 : 0));
	q.m = cg.outsz;
	q.n = cg.mg;
	q.k = cg.cg * cg.ksz;
	q.asgn = sgn;
	q.za = &za;
	q.nza = 1;
	q.conv = &src;
	q.ldc = 1;
	q.cs = cg.outsz;
	for (im = 0; im < cg.n && rc == 0; im++) {
		qconv_nhwc(&cg, (const uint8_t *)x->data + im * cg.c *
		    cg.insz, sgn, za, bk.vnni, xc);
		for (gi = 0; gi < cg.group && rc == 0; gi++) {
			src.gi = gi;
			if (pv != NULL)
				q.bp = &pv->p[gi];
			else {
				if ((rc = qconv_pack(g, n, &cg, gi, &bk,
				    &own)) < 0)
					break;
				q.bp = &own;
			}
			q.c = (char *)aoe_out(g, n, 0)->data + (im * cg.m +
			    gi * cg.mg) * cg.outsz * osz;
			q.bias = ql ? bias + gi * cg.mg : NULL;
			q.mult = mult + gi * cg.mg;
			rc = qgemm_run(&q, kc->nthreads, kc->sched);
			if (pv == NULL)
				qpack_free(&own);
		}
	}
out:
	free(bias);
	free(mult);
	if (rc == -AOE_ENOMEM)
		return aoe_err(AOE_ENOMEM, "%s '%s': out of memory",
		    n->op_type, n->name);
	return rc;
}

static void
qgemm_default_sched(const aoe_graph *g, const aoe_node *n, aoe_sched *s)
{
	int v = vnni_ok();

	aoe_sched_set(s, "vnni", v);
	aoe_sched_set(s, "mr", v ? 12 : 6);
	aoe_sched_set(s, "nv", 2);
	aoe_sched_set(s, "mc", 96);
	aoe_sched_set(s, "kc", 4096);
	aoe_sched_set(s, "par", 0);
	aoe_sched_set(s, "prepack", 1);
}

const aoe_op aoe_ops_quant[] = {
	{ "QuantizeLinear", quantize_infer, quantize_run, NULL, NULL },
	{ "DequantizeLinear", dequantize_infer, dequantize_run, NULL, NULL },
	{ "DynamicQuantizeLinear", dynq_infer, dynq_run, NULL, NULL },
	{ "MatMulInteger", qmm_infer, qmm_run, qmm_prepare,
	    qgemm_default_sched },
	{ "QLinearMatMul", qmm_infer, qmm_run, qmm_prepare,
	    qgemm_default_sched },
	{ "ConvInteger", qconv_infer, qconv_run, qconv_prepare,
	    qgemm_default_sched },
	{ "QLinearConv", qconv_infer, qconv_run, qconv_prepare,
	    qgemm_default_sched },
	{ NULL, NULL, NULL, NULL, NULL }
};

/*
 * The search space of the integer products (the quantizers have no
 * knobs).
 */
static int
qspace_check(const aoe_space *sp, const aoe_sched *s, char *why, size_t len)
{
	int64_t v = aoe_sched_get(s, "vnni", 0);
	int64_t mr = aoe_sched_get(s, "mr", 6), nv = aoe_sched_get(s, "nv", 2);

	if (v && !vnni_ok()) {
		snprintf(why, len, "vnni=1 needs AVX-512 VNNI, which cannot "
		    "run here");
		return -1;
	}
	if (!qshape_ok(mr, nv, v != 0)) {
		snprintf(why, len, "micro-kernel %lldx%lld does not exist in "
		    "the %s form (AVX2: 6x2, 4x3; VNNI: 12x2, 8x3, 6x4)",
		    (long long)mr, (long long)nv, v ? "VNNI" : "AVX2");
		return -1;
	}
	return 0;
}

int
aoe_space_quant(aoe_space *sp)
{
	static const int64_t vn[] = { 0, 1 }, mrs[] = { 4, 6, 8, 12 };
	static const int64_t nvs[] = { 2, 3, 4 }, pars[] = { 0, 1, 2 };
	static const int64_t mcs[] = { 24, 48, 96, 192, 384 };
	static const int64_t kcs[] = { 256, 512, 1024, 4096 };
	static const int64_t onoff[] = { 0, 1 };
	const aoe_node *n = sp->n;
	int v = vnni_ok(), cb = 0;

	if (sp->op == NULL || sp->op->prepare == NULL)
		return 0;
	if (aoe_space_add(sp, "vnni", v ? 2 : 1, vn, "1: the AVX-512 VNNI "
	    "form (u8 x s8, 4 k a step), 0: the AVX2 form (int16 pairs)") < 0 ||
	    aoe_space_add(sp, "mr", 4, mrs, "micro-kernel rows (with nv: "
	    "AVX2 6x2, 4x3; VNNI 12x2, 8x3, 6x4)") < 0 ||
	    aoe_space_add(sp, "nv", 3, nvs, "micro-kernel width in vectors "
	    "(8 columns AVX2, 16 VNNI)") < 0 ||
	    aoe_space_add(sp, "mc", 5, mcs, "rows of A a block (converted "
	    "once, kept in L2)") < 0 ||
	    aoe_space_add(sp, "kc", 4, kcs, "k values a pass of the "
	    "micro-kernel (L1)") < 0 ||
	    aoe_space_add(sp, "par", 3, pars, "thread split: 0 auto, 1 row "
	    "blocks, 2 rows and columns") < 0)
		return -AOE_EINTERNAL;
	if (strstr(n->op_type, "Conv") != NULL) {
		int ix, iw, izx, izw;
		const aoe_tensor *w;
		cv_inputs(n, &ix, &iw, &izx, &izw);
		w = aoe_in(sp->g, n, iw);
		cb = w != NULL && w->kind == AOE_T_CONST;
	} else {
		aoe_mm_shape s;
		int ia, ib, iza, izb;
		mm_inputs(n, &ia, &ib, &iza, &izb);
		cb = aoe_mm_shape_of(sp->g, n, aoe_in(sp->g, n, ia),
		    aoe_in(sp->g, n, ib), &s, NULL, NULL) == 0 &&
		    qmm_const_b(sp->g, n, &s);
	}
	if (aoe_space_add(sp, "prepack", cb ? 2 : 1, cb ? onoff : onoff + 1,
	    "pack a constant B once, in prepare") < 0)
		return -AOE_EINTERNAL;
	sp->check = qspace_check;
	sp->constraints = v ? "(mr,nv) in {(6,2),(4,3)} with vnni=0, "
	    "{(12,2),(8,3),(6,4)} with vnni=1" : "(mr,nv) in {(6,2),(4,3)}; "
	    "vnni=0 (no AVX-512 VNNI here)";
	return 0;
}
